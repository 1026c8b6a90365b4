-- Software profiles: the training frameworks (and, in the engine scope, the serving engines)
-- whose behaviour the simulator models apart from the hardware.  A profile says what the software
-- runs (attention kernels, what it overlaps); its numeric parameters (host time per kernel,
-- slowdown of compute beside collectives) are fitted once over all of that framework's published
-- rows on every GPU (fitted.sql), never per GPU.  `base` names a profile whose parameters a
-- variant inherits: every PyTorch framework inherits pytorch's, and pytorch and maxtext
-- generic's, so that a framework without fitted values of its own (or left out of a
-- cross-validation fold) runs with what its relatives' rows say.  Facts with their sources:
-- docs/profiles.md.
INSERT INTO profile(kind, name, base, version, description, source) VALUES
('framework', 'generic', NULL, 'any training framework',
  'a framework without a profile of its own: what every framework''s rows say together; the base of pytorch and maxtext',
  'the fit over every training row (docs/profiles.md)'),
('framework', 'pytorch', 'generic', 'PyTorch DDP / FSDP (eager)',
  'plain PyTorch DistributedDataParallel or FSDP: eager kernels, bucketed gradient all-reduce overlapped with the backward pass; the base of the PyTorch frameworks',
  'PyTorch DDP and FSDP documentation (docs/profiles.md)'),
('framework', 'megatron', 'pytorch', 'Megatron-Core 0.8-0.12 (NeMo 24.05-25.04, Megatron-Bridge)',
  'Megatron-Core as NeMo and Megatron-Bridge run it: TE fused (cuDNN) attention, distributed optimizer, DP gradient reduce-scatter and parameter all-gather overlapped',
  'NVIDIA/dgxc-benchmarking recipes v24.11.1, v25.04, v25.05.04; NeMo scripts/performance (docs/profiles.md)'),
('framework', 'megatron-2021', 'megatron', 'Megatron-LM 2019-2022 (Shoeybi 2019, Narayanan 2021, Korthikanti 2022)',
  'Megatron-LM before FlashAttention and overlapped gradient reduction: unfused attention (batched GEMMs and a fused softmax kernel), DP all-reduce after the backward pass',
  'Narayanan et al. 2021 section 5; Korthikanti et al. 2022 section 5 (docs/profiles.md)'),
('framework', 'llm-foundry', 'pytorch', 'llm-foundry 0.3-0.8 (Composer, PyTorch FSDP)',
  'MosaicML llm-foundry on Composer: PyTorch FSDP (FULL_SHARD), FlashAttention-2-class (Triton) attention, eager PyTorch',
  'mosaicml/llm-foundry scripts/train/benchmarking (docs/profiles.md)'),
('framework', 'torchtitan', 'pytorch', 'torchtitan 0.0.2-0.2 (PyTorch FSDP2, torch.compile)',
  'torchtitan: FSDP2, per-op selective activation checkpointing, SDPA attention (FlashAttention-2 on Hopper, cuDNN on Blackwell)',
  'pytorch/torchtitan torchtitan/models/attention.py; pytorch/ao float8 and mx_formats READMEs (docs/profiles.md)'),
('framework', 'deepspeed', 'pytorch', 'DeepSpeed 0.14-0.17 with Hugging Face Transformers',
  'DeepSpeed ZeRO with Hugging Face models: eager PyTorch, overlap_comm, FlashAttention through HF attn_implementation',
  'stas00/ml-engineering insights/when-to-upgrade-gpus (docs/profiles.md)'),
('framework', 'maxtext', 'generic', 'MaxText / Paxml (JAX, XLA)',
  'JAX MaxText and Paxml: FSDP with XLA asynchronous collectives and the latency-hiding scheduler, TE/cuDNN fused attention',
  'NVIDIA/dgxc-benchmarking maxtext and paxml configure.sh; AI-Hypercomputer/maxtext a3 configs (docs/profiles.md)'),
('framework', 'nemo-automodel', 'pytorch', 'NeMo Automodel (PyTorch FSDP2, DeepEP, Transformer Engine)',
  'NeMo Automodel: FSDP2 with DeepEP token dispatch and TE (cuDNN) attention, full activation checkpointing',
  'NVIDIA-NeMo/Automodel docs/performance-summary.mdx and examples/benchmark configs (docs/profiles.md)');

INSERT INTO param(scope, subject, key, value, origin, method, source) VALUES
('framework', 'megatron', 'sequence_parallel', 1, 'default', 'sequence_parallel = (tp > 1) in the NeMo performance recipes and dgxc yamls', 'NeMo scripts/performance/utils.py set_primary_perf_configs; dgxc llama3.1_70b.yaml'),
('framework', 'megatron', 'tp_comm_overlap', 1, 'default', 'ub_tp_comm_overlap / tp_comm_overlap=True in the dgxc recipes with TP > 1 (DeepSeek-V3 excepted)', 'dgxc-benchmarking llama3.1, nemotron, gpt3, grok1 configs (docs/profiles.md)'),
('framework', 'megatron', 'tp_wgrad_overlap', 1, 'default', 'on: the input gradient''s all-reduce (reduce-scatter with SP) launched before the weight gradient, awaited after it', 'megatron/core/tensor_parallel/layers.py LinearWithGradAccumulationAndAsyncCommunication'),
('framework', 'megatron', 'fp8_recipe', 0, 'default', 'Transformer Engine delayed scaling (hybrid E4M3/E5M2, amax history 1024)', 'NeMo recipes precision/mixed_precision.py; dgxc configure.sh'),
('framework', 'megatron-2021', 'sequence_parallel', 0, 'default', 'sequence parallelism came with Korthikanti 2022; the rows that use it say so', 'Korthikanti et al. 2022'),
('framework', 'megatron-2021', 'tp_wgrad_overlap', 0, 'default', 'off: synchronous TP all-reduces in Shoeybi 2019 and Narayanan 2021; Korthikanti 2022''s rows say theirs overlapped (validate)', 'Narayanan et al. 2021 section 3.3; Korthikanti et al. 2022 Table 4'),
('framework', 'megatron-2021', 'tp_comm_overlap', 0, 'default', 'synchronous TP all-reduces', 'Narayanan et al. 2021 section 3.3'),
('framework', 'torchtitan', 'fp8_recipe', 1, 'default', 'torchao float8 tensorwise (dynamic) scaling, the torchtitan default; rows name rowwise or MXFP8', 'pytorch/ao torchao/float8/README.md'),
('framework', 'megatron', 'attention', 2, 'default', 'flash3: TE fused attention, cuDNN backend preferred on Hopper and later', 'dgxc-benchmarking llama3.1/configure.sh NVTE_FUSED_ATTN=1; TE backend selection'),
('framework', 'megatron', 'overlap_grad_reduce', 1, 'default', 'overlap_grad_reduce=True in every dgxc recipe', 'NeMo recipes (llama31_405b.py), dgxc yaml overlap_grad_sync'),
('framework', 'megatron', 'dist_optimizer', 1, 'default', 'on: use_distributed_optimizer=True in the NeMo 2.0 recipes (ZeRO-1: each DP rank keeps and steps its shard of the optimizer states)', 'NeMo nemo/collections/llm/recipes/optim/adam.py (distributed_fused_adam_with_cosine_annealing), the NeMo 2.0 recipes'' optimizer'),
('framework', 'megatron-2021', 'dist_optimizer', 0, 'default', 'off: Megatron-LM of 2019-2022 kept the whole optimizer on every DP rank (the distributed optimizer came later)', 'Narayanan et al. 2021 section 4; Megatron-LM --use-distributed-optimizer (2022)'),
('framework', 'megatron', 'grad_reduce', 0, 'default', 'dtype: bf16 runs reduce in fp32 (Megatron-LM forces it, NeMo defaults to it); FP8 runs in bf16 (NeMo''s FP8 performance recipes)', 'Megatron-LM arguments.py; NeMo MegatronMixedPrecision (grad_reduce_in_fp32), scripts/performance/llm (FP8: grad_reduce_in_fp32 = False)'),
('framework', 'torchtitan', 'grad_reduce', 1, 'default', 'fp32: training.mixed_precision_reduce = "float32", FSDP2''s reduce dtype', 'pytorch/torchtitan torchtitan/config/job_config.py'),
('framework', 'megatron', 'overlap_param_gather', 1, 'default', 'overlap_param_gather=True in every dgxc recipe', 'NeMo recipes, dgxc yaml overlap_param_sync'),
('framework', 'megatron-2021', 'attention', 0, 'default', 'unfused: two batched GEMMs and a fused scale-mask-softmax kernel', 'Korthikanti et al. 2022 section 4 (selective recomputation exists because of the score matrix)'),
('framework', 'megatron-2021', 'overlap_grad_reduce', 0, 'default', 'the DP all-reduce ran after the backward pass (overlap came to Megatron-LM in 2023)', 'Narayanan et al. 2021 section 4'),
('framework', 'llm-foundry', 'attention', 1, 'default', 'flash2: Triton FlashAttention (MPT attn_impl) in the benchmark scripts', 'llm-foundry submit_benchmarks.py attn_impl'),
('framework', 'llm-foundry', 'overlap_grad_reduce', 1, 'default', 'FSDP reduce-scatters gradients during the backward pass', 'PyTorch FSDP'),
('framework', 'torchtitan', 'attention', 1, 'default', 'flash2: PyTorch SDPA chooses its FlashAttention-2 backend on Hopper', 'torchtitan/models/attention.py'),
('framework', 'deepspeed', 'zero3_regather', 1, 'default', 'on: a checkpointed layer''s recompute fires its forward hooks (fetch, then release) and its backward hooks fetch again', 'deepspeed/runtime/zero/parameter_offload.py (pre_sub_module_forward_function, post_sub_module_forward_function, pre_sub_module_backward_function); deepspeedai/DeepSpeed issue 4784'),
('framework', 'deepspeed', 'zero3_gather', 1, 'default', 'module: a submodule''s parameters in one coalesced all-gather (all_gather_coalesced, from 0.5; the 2021 releases gathered each parameter apart)', 'deepspeed/runtime/zero/partitioned_param_coordinator.py, partition_parameters.py'),
('framework', 'deepspeed', 'attention', 2, 'default', 'flash3: HF attn_implementation flash_attention_3 on H200 (FA4 on B200)', 'stas00/ml-engineering when-to-upgrade-gpus benchmark.py'),
('framework', 'pytorch', 'attention', 1, 'default', 'flash2: PyTorch SDPA', 'PyTorch scaled_dot_product_attention backends'),
('framework', 'pytorch', 'dp_one_stream', 1, 'default', 'on: a process group''s collectives run on one NCCL stream per device, whichever stream issued them, so ZeRO-3''s gathers and reduce-scatters queue in issue order', 'torch/distributed/fsdp/api.py BackwardPrefetch ("any collectives, even if issued in different streams, contend for the same per-device NCCL stream"); ProcessGroupNCCL'),
('framework', 'maxtext', 'attention', 2, 'default', 'flash3: attention=cudnn_flash_te', 'dgxc-benchmarking maxtext/configure.sh'),
('framework', 'nemo-automodel', 'attention', 2, 'default', 'flash3: TE DotProductAttention (cuDNN)', 'Automodel benchmark configs attn: te'),
('framework', 'nemo-automodel', 'ep_dispatch', 1, 'default', 'deepep: DeepEP token dispatch and combine (a token crosses once per node holding its experts)', 'Automodel docs/performance-summary.mdx kernel opts TE + DeepEP; DeepSeek-V3 technical report 3.2.2');

-- Serving engines (kind 'engine'): what each runs and how it schedules (docs/engines.md has the
-- facts with their sources).  The behaviour rows below are the engines' own defaults at the
-- versions named; a deployment that sets them otherwise says so (simulate serve's flags, the
-- validation rows' stated settings).  Their kernel scales and host times are fitted once per
-- engine over all of its published rows on every GPU (fitted-engines.sql), never per GPU;
-- `generic` holds what every engine's rows say together, the values an engine without rows of
-- its own (or left out of a cross-validation fold) runs with.
INSERT INTO profile(kind, name, base, version, description, source) VALUES
('engine', 'generic', NULL, 'any serving engine',
  'an engine without a profile of its own: continuous batching with chunked prefill, CUDA graphs for small batches; what every engine''s rows say together',
  'the fit over every serving row (docs/engines.md)'),
('engine', 'vllm', 'generic', 'vLLM 0.8-0.10 (V1 engine)',
  'vLLM V1: chunked prefill always, piecewise CUDA graphs for iterations up to 512 tokens, FlashAttention-3 on Hopper, custom all-reduce, dynamic fp8 activation scales (quantization=fp8)',
  'vllm-project/vllm vllm/engine/arg_utils.py (get_batch_defaults, PR #17885), vllm/config.py (cudagraph capture sizes); vLLM blog 2025-01-27 (V1 alpha)'),
('engine', 'vllm-v0', 'vllm', 'vLLM 0.2-0.6 and ROCm forks on the V0 engine',
  'vLLM V0: prefill-only iterations while prompts wait (chunked prefill off by default below 32K context), CUDA graphs for decode batches up to 256, per-sequence Python scheduling; multi-step scheduling where a deployment sets it',
  'vllm-project/vllm v0.6.x vllm/engine/arg_utils.py, vllm/worker/model_runner.py (_BATCH_SIZES_TO_CAPTURE); vLLM blog 2024-09-05 (perf update: scheduling 29% of time)'),
('engine', 'sglang', 'generic', 'SGLang 0.4.x',
  'SGLang: the overlap (zero-overhead) scheduler, prefill batches apart from decode batches, chunked prefill at 8192 tokens, CUDA graphs for decode batches up to 160, FlashAttention-3 or FlashInfer',
  'sgl-project/sglang python/sglang/srt/server_args.py (chunked_prefill_size, cuda_graph_max_bs); LMSYS blog 2024-12-04 (SGLang v0.4 zero-overhead scheduler)'),
('engine', 'trtllm', 'generic', 'TensorRT-LLM 0.10-1.0',
  'TensorRT-LLM: in-flight batching of whole prompts with decode tokens (chunked context when enabled), C++ runtime, FP8 context FMHA and XQA decode kernels, static fp8 scales from ModelOpt calibration, overlap scheduler',
  'NVIDIA/TensorRT-LLM docs (batch manager, overlap scheduler), mlcommons/inference_results_v4.1 and v5.1 closed/NVIDIA/configs'),
('engine', 'trtllm-v0', 'trtllm', 'TensorRT-LLM 0.5-0.7 (before the XQA kernel)',
  'TensorRT-LLM before 0.8: decode attention by the masked multi-head attention kernel, one pass over the KV cache per query head (XQA, which reads a grouped KV head once, came with 0.8), no FP8 context FMHA; otherwise as trtllm',
  'NVIDIA/TensorRT-LLM docs/source/blogs/XQA-kernel.md (2024-01-30: Llama-70B on one H200, 128/2048, 1,227 out tok/s/GPU without XQA, 2,941 with; in the v0.8 releases), docs/source/release-notes.md (0.9.0: experimental FP8 FMHA)');

INSERT INTO param(scope, subject, key, value, origin, method, source) VALUES
-- generic
('engine', 'generic', 'max_num_seqs', 256, 'default', 'vLLM''s default batch limit, the smallest of the engines''', 'vllm/engine/arg_utils.py'),
('engine', 'generic', 'max_num_batched_tokens', 8192, 'default', 'a budget of 8192 tokens an iteration (vLLM V1 API server on large GPUs, SGLang chunked_prefill_size, TensorRT-LLM max_num_tokens)', 'docs/engines.md'),
('engine', 'generic', 'prefill', 0, 'default', 'chunked: decode first, prefill chunks fill the budget', 'docs/engines.md'),
('engine', 'generic', 'cuda_graph_max', 256, 'default', 'decode iterations up to 256 tokens from captured graphs', 'docs/engines.md'),
('engine', 'generic', 'cuda_graph_mixed', 0, 'default', 'only decode-only iterations from graphs', 'docs/engines.md'),
-- vLLM V1
('engine', 'vllm', 'max_num_seqs', 1024, 'default', 'V1 default for the API server on GPUs of 70 GiB or more other than A100 (256 on smaller ones and A100)', 'vllm/engine/arg_utils.py get_batch_defaults (PR #17885), vLLM 0.9+'),
('engine', 'vllm', 'max_num_batched_tokens', 8192, 'default', 'V1 API-server default on GPUs of 70 GiB or more other than A100 (2048 on smaller ones; 16384 for the offline LLM class)', 'vllm/engine/arg_utils.py get_batch_defaults (PR #17885)'),
('engine', 'vllm', 'prefill', 0, 'default', 'chunked prefill is always on in V1', 'vLLM blog 2025-01-27 (V1 alpha)'),
('engine', 'vllm', 'cuda_graph_max', 512, 'default', 'capture sizes [1, 2, 4] + range(8, 513, 8) tokens', 'vllm/config.py CompilationConfig (cudagraph_capture_sizes), vLLM 0.9'),
('engine', 'vllm', 'cuda_graph_step', 8, 'default', 'capture sizes step by 8 tokens above 8', 'vllm/config.py'),
('engine', 'vllm', 'cuda_graph_mixed', 1, 'default', 'piecewise graphs: every iteration up to the largest capture size, prefill tokens included (attention runs between the pieces)', 'vLLM blog 2025-01-27 (V1: piecewise CUDA graphs)'),
('engine', 'vllm', 'prefill_attention', 2, 'default', 'flash3: vllm-flash-attn FlashAttention-3 on Hopper (FlashAttention-2 class elsewhere)', 'vllm/attention/backends; research memo C1 (Krai v5.1 READMEs)'),
('engine', 'vllm', 'fp8_scaling', 1, 'default', 'quantization=fp8 computes per-tensor activation scales at run time', 'vllm/model_executor/layers/quantization/fp8.py'),
('engine', 'vllm', 'allreduce_us', 8, 'default', 'judgement: custom one-shot all-reduce over NVLink takes a few microseconds for decode-sized messages', 'vllm/distributed/device_communicators/custom_all_reduce.py'),
('engine', 'vllm', 'overlap_schedule', 0, 'default', 'async scheduling came after 0.10', 'vLLM release notes 0.11'),
-- vLLM V0
('engine', 'vllm-v0', 'max_num_seqs', 256, 'default', 'V0 default', 'vllm v0.6 vllm/engine/arg_utils.py'),
('engine', 'vllm-v0', 'max_num_batched_tokens', 4096, 'default', 'without chunked prefill the budget is the model''s context (max(max_model_len, 2048)); 4096 for the Llama 2 rows', 'vllm v0.6 vllm/config.py SchedulerConfig'),
('engine', 'vllm-v0', 'prefill', 2, 'default', 'separate: prefill iterations first, decode when no prompt can be admitted', 'vllm v0.6 vllm/core/scheduler.py (_schedule_default)'),
('engine', 'vllm-v0', 'cuda_graph_max', 256, 'default', 'decode batches up to 256 captured (_BATCH_SIZES_TO_CAPTURE)', 'vllm v0.6 vllm/worker/model_runner.py'),
('engine', 'vllm-v0', 'cuda_graph_mixed', 0, 'default', 'prefill iterations run eagerly', 'vllm v0.6 vllm/worker/model_runner.py'),
-- SGLang
('engine', 'sglang', 'max_num_seqs', 1024, 'default', 'max_running_requests follows the KV pool; a deployment states its own', 'sglang server_args.py'),
('engine', 'sglang', 'max_num_batched_tokens', 8192, 'default', 'chunked_prefill_size 8192 on large GPUs', 'sglang server_args.py'),
('engine', 'sglang', 'prefill', 2, 'default', 'separate: prefill batches run apart from decode batches (mixed chunks off by default)', 'sglang scheduler.py (enable_mixed_chunk default off)'),
('engine', 'sglang', 'cuda_graph_max', 160, 'default', 'cuda_graph_max_bs 160 in the 0.4.x line; larger decode batches run without graphs', 'sglang server_args.py (research memo C1)'),
('engine', 'sglang', 'cuda_graph_mixed', 0, 'default', 'graphs for decode batches only', 'sglang cuda_graph_runner.py'),
('engine', 'sglang', 'overlap_schedule', 1, 'default', 'the zero-overhead overlap scheduler is on by default from 0.4', 'LMSYS blog 2024-12-04'),
('engine', 'sglang', 'prefill_attention', 2, 'default', 'flash3: attention_backend fa3 on Hopper (FlashInfer otherwise)', 'Krai v5.1 READMEs (attention_backend=fa3)'),
('engine', 'sglang', 'fp8_scaling', 1, 'default', 'quantization=fp8 computes activation scales at run time', 'sglang quantization/fp8.py'),
('engine', 'sglang', 'kv_reserve', 0.098, 'default', 'admission keeps room for new_token_ratio of each request''s max_new_tokens; the ratio decays from 0.7 to its floor 0.7 x 0.14 in 600 steps', 'sglang global_config.py (default_init_new_token_ratio, default_min_new_token_ratio_factor)'),
('engine', 'sglang', 'allreduce_us', 8, 'default', 'judgement: custom one-shot all-reduce (vLLM''s kernel) over NVLink', 'sglang distributed/device_communicators'),
-- TensorRT-LLM
('engine', 'trtllm', 'max_num_seqs', 2048, 'default', 'max_batch_size 2048 (BuildConfig and the PyTorch backend)', 'TensorRT-LLM tensorrt_llm/builder.py BuildConfig'),
('engine', 'trtllm', 'max_num_batched_tokens', 8192, 'default', 'max_num_tokens 8192', 'TensorRT-LLM tensorrt_llm/builder.py BuildConfig'),
('engine', 'trtllm', 'prefill', 1, 'default', 'mixed: whole prompts batched with the generation tokens; chunked context only when enabled', 'TensorRT-LLM docs: in-flight batching, chunked context'),
('engine', 'trtllm', 'cuda_graph_max', 0, 'default', 'the C++ runtime launches each engine''s kernels (use_graphs False in the MLPerf configs)', 'mlcommons/inference_results_v4.1 closed/NVIDIA/configs/llama2-70b'),
('engine', 'trtllm', 'launch_us', 1, 'default', 'judgement: a C++ runtime enqueues a kernel in about a microsecond (cudaLaunchKernel 1-3 us, hardware.md)', 'research memo A7'),
('engine', 'trtllm', 'overlap_schedule', 1, 'default', 'the host schedules step n+1 while the GPU runs step n', 'TensorRT-LLM docs: overlap scheduler'),
('engine', 'trtllm', 'prefill_attention', 2, 'default', 'flash3: TensorRT-LLM context FMHA and XQA generation kernels', 'TensorRT-LLM docs: attention'),
('engine', 'trtllm', 'fp8_attention', 1, 'default', 'use_fp8_context_fmha with an fp8 KV cache', 'mlcommons/inference_results_v5.1 closed/NVIDIA/configs (use_fp8_context_fmha)'),
('engine', 'trtllm', 'fp8_scaling', 0, 'default', 'static per-tensor scales from ModelOpt calibration, the cast fused into the kernel before', 'NVIDIA MLPerf documentation/calibration.md'),
('engine', 'trtllm', 'allreduce_us', 6, 'default', 'judgement: TensorRT-LLM''s one-shot all-reduce plugin over NVLink takes a few microseconds', 'TensorRT-LLM docs: custom all-reduce'),
('engine', 'trtllm', 'decode_gqa', 1, 'default', 'on: the XQA generation kernel reads each grouped KV head once for its query heads', 'NVIDIA/TensorRT-LLM docs/source/blogs/XQA-kernel.md, docs/source/advanced/gpt-attention.md (XQA optimization)'),
-- TensorRT-LLM before 0.8
('engine', 'trtllm-v0', 'decode_gqa', 0, 'default', 'off: 0.5-0.7 decoded with masked multi-head attention, one pass over the cache per query head; XQA came with 0.8', 'NVIDIA/TensorRT-LLM docs/source/blogs/XQA-kernel.md'),
('engine', 'trtllm-v0', 'fp8_attention', 0, 'default', 'off: FP8 context FMHA came (experimental) with 0.9.0', 'NVIDIA/TensorRT-LLM docs/source/release-notes.md (0.9.0)');
