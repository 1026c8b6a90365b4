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
('framework', 'megatron', 'fp8_recipe', 0, 'default', 'Transformer Engine delayed scaling (hybrid E4M3/E5M2, amax history 1024)', 'NeMo recipes precision/mixed_precision.py; dgxc configure.sh'),
('framework', 'megatron-2021', 'sequence_parallel', 0, 'default', 'sequence parallelism came with Korthikanti 2022; the rows that use it say so', 'Korthikanti et al. 2022'),
('framework', 'megatron-2021', 'tp_comm_overlap', 0, 'default', 'synchronous TP all-reduces', 'Narayanan et al. 2021 section 3.3'),
('framework', 'torchtitan', 'fp8_recipe', 1, 'default', 'torchao float8 tensorwise (dynamic) scaling, the torchtitan default; rows name rowwise or MXFP8', 'pytorch/ao torchao/float8/README.md'),
('framework', 'megatron', 'attention', 2, 'default', 'flash3: TE fused attention, cuDNN backend preferred on Hopper and later', 'dgxc-benchmarking llama3.1/configure.sh NVTE_FUSED_ATTN=1; TE backend selection'),
('framework', 'megatron', 'overlap_grad_reduce', 1, 'default', 'overlap_grad_reduce=True in every dgxc recipe', 'NeMo recipes (llama31_405b.py), dgxc yaml overlap_grad_sync'),
('framework', 'megatron', 'overlap_param_gather', 1, 'default', 'overlap_param_gather=True in every dgxc recipe', 'NeMo recipes, dgxc yaml overlap_param_sync'),
('framework', 'megatron-2021', 'attention', 0, 'default', 'unfused: two batched GEMMs and a fused scale-mask-softmax kernel', 'Korthikanti et al. 2022 section 4 (selective recomputation exists because of the score matrix)'),
('framework', 'megatron-2021', 'overlap_grad_reduce', 0, 'default', 'the DP all-reduce ran after the backward pass (overlap came to Megatron-LM in 2023)', 'Narayanan et al. 2021 section 4'),
('framework', 'llm-foundry', 'attention', 1, 'default', 'flash2: Triton FlashAttention (MPT attn_impl) in the benchmark scripts', 'llm-foundry submit_benchmarks.py attn_impl'),
('framework', 'llm-foundry', 'overlap_grad_reduce', 1, 'default', 'FSDP reduce-scatters gradients during the backward pass', 'PyTorch FSDP'),
('framework', 'torchtitan', 'attention', 1, 'default', 'flash2: PyTorch SDPA chooses its FlashAttention-2 backend on Hopper', 'torchtitan/models/attention.py'),
('framework', 'deepspeed', 'attention', 2, 'default', 'flash3: HF attn_implementation flash_attention_3 on H200 (FA4 on B200)', 'stas00/ml-engineering when-to-upgrade-gpus benchmark.py'),
('framework', 'pytorch', 'attention', 1, 'default', 'flash2: PyTorch SDPA', 'PyTorch scaled_dot_product_attention backends'),
('framework', 'maxtext', 'attention', 2, 'default', 'flash3: attention=cudnn_flash_te', 'dgxc-benchmarking maxtext/configure.sh'),
('framework', 'nemo-automodel', 'attention', 2, 'default', 'flash3: TE DotProductAttention (cuDNN)', 'Automodel benchmark configs attn: te');
