/*
 * params.c -- the registry of cost-model parameters: every parameter the cost model, a
 * framework profile or a serving-engine profile reads is declared here once, with its scope,
 * default, physical bounds, unit and meaning.  The database's param table holds values for
 * (scope, subject, key); the loaders (hardware/cost.c, hardware/profile.c) read the keys of
 * this table and nothing else, hw_param_set refuses a key that is not here or a value outside
 * its bounds, and 'hw show' and the fits describe parameters from it.
 *
 * A default is what applies to a GPU, system or profile that has no row for the key (a
 * user-added GPU, say); the shipped ones carry their own rows in hardware/data/ with sources.
 * NAN marks a default derived from the subject's other figures (cost.c says how).
 */
#include "config.h"
#include "hardware/hw_int.h"

#include <math.h>
#include <string.h>

/* Bounds hold every physical value: an efficiency above 1 only where a measured rate can pass
 * the datasheet figure it is a fraction of (NVLS all-reduce reduces inside the switch). */
static const char *const onoff[] = {"off", "on", NULL};
static const char *const attn_kinds[] = {"unfused", "flash2", "flash3", NULL};
static const char *const fp8_recipes[] = {"delayed", "tensorwise", "rowwise", "mxfp8", NULL};
static const char *const prefill_modes[] = {"chunked", "mixed", "separate", NULL};
static const char *const fp8_scalings[] = {"static", "dynamic", "token", NULL};
static const char *const ep_dispatches[] = {"alltoall", "deepep", NULL};
static const char *const z3_gathers[] = {"layer", "module", "tensor", NULL};
static const char *const grad_reduces[] = {"dtype", "fp32", "bf16", NULL};

static const hw_pdef defs[HW_NPKEYS] = {
	/* ---- per GPU: what its kernels achieve ---- */
	[HW_P_GEMM_EFF_FP64] = {"gemm_eff_fp64", HW_SCOPE_GPU, 0.70, 0.01, 1.0, "fraction", "gemm_eff",
				"achieved fraction of the FP64 dense peak on large GEMMs", NULL},
	[HW_P_GEMM_EFF_FP32] = {"gemm_eff_fp32", HW_SCOPE_GPU, 0.70, 0.01, 1.0, "fraction", "gemm_eff",
				"achieved fraction of the FP32 dense peak on large GEMMs", NULL},
	[HW_P_GEMM_EFF_TF32] = {"gemm_eff_tf32", HW_SCOPE_GPU, 0.70, 0.01, 1.0, "fraction", "gemm_eff",
				"achieved fraction of the TF32 dense peak on large GEMMs", NULL},
	[HW_P_GEMM_EFF_FP16] = {"gemm_eff_fp16", HW_SCOPE_GPU, 0.70, 0.01, 1.0, "fraction", "gemm_eff",
				"achieved fraction of the FP16 dense peak on large GEMMs", NULL},
	[HW_P_GEMM_EFF_BF16] = {"gemm_eff_bf16", HW_SCOPE_GPU, 0.70, 0.01, 1.0, "fraction", "gemm_eff",
				"achieved fraction of the BF16 dense peak on large GEMMs", NULL},
	[HW_P_GEMM_EFF_FP8] = {"gemm_eff_fp8", HW_SCOPE_GPU, 0.70, 0.01, 1.0, "fraction", "gemm_eff",
			       "achieved fraction of the FP8 dense peak on large GEMMs", NULL},
	[HW_P_GEMM_EFF_INT8] = {"gemm_eff_int8", HW_SCOPE_GPU, 0.70, 0.01, 1.0, "fraction", "gemm_eff",
				"achieved fraction of the INT8 dense peak on large GEMMs", NULL},
	[HW_P_GEMM_EFF_INT4] = {"gemm_eff_int4", HW_SCOPE_GPU, 0.70, 0.01, 1.0, "fraction", "gemm_eff",
				"achieved fraction of the INT4 dense peak on large GEMMs", NULL},
	[HW_P_GEMM_EFF_FP4] = {"gemm_eff_fp4", HW_SCOPE_GPU, 0.70, 0.01, 1.0, "fraction", "gemm_eff",
			       "achieved fraction of the FP4 (NVFP4/MXFP4) dense peak on large GEMMs", NULL},
	[HW_P_GEMM_K_RAMP] = {"gemm_k_ramp", HW_SCOPE_GPU, 128.0, 0.0, 65536.0, "k steps", NULL,
			      "a GEMM tile's prologue and epilogue, as extra steps of k (q_k = k / (k + k_ramp))", NULL},
	[HW_P_KERNEL_LAUNCH_US] = {"kernel_launch_us", HW_SCOPE_GPU, 3.0, 0.0, 1000.0, "us", NULL,
				   "fixed time of one kernel on the device (launch, ramp, tail)", NULL},
	[HW_P_HBM_EFF] = {"hbm_eff", HW_SCOPE_GPU, 0.80, 0.01, 1.0, "fraction", NULL,
			  "achieved fraction of the HBM peak by streaming kernels", NULL},
	[HW_P_ATTN_FLASH2_FWD] = {"attn_flash2_fwd", HW_SCOPE_GPU, 0.50, 0.01, 1.0, "fraction", "attn_eff_fwd",
				  "FlashAttention-2-class fused attention forward: achieved fraction of the dense peak at long "
				  "sequences", NULL},
	[HW_P_ATTN_FLASH2_BWD] = {"attn_flash2_bwd", HW_SCOPE_GPU, 0.40, 0.01, 1.0, "fraction", "attn_eff_bwd",
				  "FlashAttention-2-class fused attention backward, the same", NULL},
	[HW_P_ATTN_FLASH3_FWD] = {"attn_flash3_fwd", HW_SCOPE_GPU, NAN, 0.01, 1.0, "fraction", NULL,
				  "the architecture's fastest fused attention (FA3/cuDNN on Hopper, cuDNN/FA4 on Blackwell) forward "
				  "(none: the FlashAttention-2 class's)", NULL},
	[HW_P_ATTN_FLASH3_BWD] = {"attn_flash3_bwd", HW_SCOPE_GPU, NAN, 0.01, 1.0, "fraction", NULL,
				  "the same, backward", NULL},
	[HW_P_ATTN_RAMP_FWD] = {"attn_seq_ramp_fwd", HW_SCOPE_GPU, 1024.0, 0.0, 1e6, "keys", NULL,
				"fused attention forward reaches its rate x sk / (sk + ramp) on sk keys per sequence "
				"(tile prologues, the causal diagonal)", NULL},
	[HW_P_ATTN_RAMP_BWD] = {"attn_seq_ramp_bwd", HW_SCOPE_GPU, 1024.0, 0.0, 1e6, "keys", NULL, "the same, backward", NULL},
	[HW_P_ATTN_SEQ_MAX] = {"attn_seq_max", HW_SCOPE_GPU, 8192.0, 128.0, 1e9, "keys", NULL,
			       "the longest key length the attention rates were measured at: beyond it the rate holds "
			       "(kernels.csv's FA3 rows reach 8192)", NULL},
	[HW_P_CONV_EFF] = {"conv_eff", HW_SCOPE_GPU, 0.60, 0.01, 1.0, "fraction", NULL,
			   "implicit-GEMM convolution rate over the GEMM rate of the same shape", NULL},
	[HW_P_FP4_TFLOPS] = {"fp4_tflops", HW_SCOPE_GPU, NAN, 1.0, 1e6, "TFLOP/s", NULL,
			     "dense FP4 (NVFP4/MXFP4) tensor peak (none: no FP4 tensor cores; 4-bit weights are then "
			     "weight-only)", NULL},
	[HW_P_GEMM_EFF_WQ] = {"gemm_eff_wq", HW_SCOPE_GPU, 0.80, 0.05, 1.0, "fraction", NULL,
			      "a weight-only quantized GEMM (int4/int8 weights, 16-bit activations: Marlin, AWQ, GPTQ "
			      "kernels) computing at large batch: its rate over the 16-bit GEMM's (the dequantization "
			      "in its inner loop)", NULL},
	[HW_P_ATTN_FP8_SCALE] = {"attn_fp8_scale", HW_SCOPE_GPU, 0.80, 0.05, 1.0, "fraction", NULL,
				 "fused attention computing in fp8: its achieved fraction of the fp8 peak over the 16-bit "
				 "kernel's of the 16-bit peak (FlashAttention-3: about 1.2 PFLOP/s fp8 against 740 "
				 "TFLOP/s bf16 on an H100, 0.8 of the doubled peak)", NULL},
	/* ---- per system: its links ---- */
	[HW_P_COLL_EFF_INTRA] = {"coll_eff_intra", HW_SCOPE_SYSTEM, 0.75, 0.01, 4.0, "fraction", NULL,
				 "ring collective bus bandwidth over the per-GPU scale-up bandwidth, large messages", NULL},
	[HW_P_COLL_EFF_INTRA_AR] = {"coll_eff_intra_all_reduce", HW_SCOPE_SYSTEM, 0.75, 0.01, 4.0, "fraction",
				    "coll_eff_intra",
				    "all-reduce bus bandwidth over the scale-up bandwidth with NCCL's default algorithm", NULL},
	[HW_P_COLL_EFF_INTER] = {"coll_eff_inter", HW_SCOPE_SYSTEM, 0.90, 0.01, 4.0, "fraction", NULL,
				 "collective bus bandwidth per NIC over the NIC's peak, across nodes", NULL},
	[HW_P_P2P_EFF_INTRA] = {"p2p_eff_intra", HW_SCOPE_SYSTEM, 0.75, 0.01, 4.0, "fraction", NULL,
				"send/recv bandwidth inside a node over the scale-up bandwidth", NULL},
	[HW_P_COLL_ALPHA_US] = {"coll_alpha_us", HW_SCOPE_SYSTEM, 10.0, 0.0, 100000.0, "us", NULL,
				"fixed launch-and-synchronize cost of one collective", NULL},
	[HW_P_COLL_HOP_INTRA_US] = {"coll_hop_intra_us", HW_SCOPE_SYSTEM, NAN, 0.0, 100000.0, "us", NULL,
				    "latency of one algorithm step inside a node", NULL},
	[HW_P_COLL_HOP_INTER_US] = {"coll_hop_inter_us", HW_SCOPE_SYSTEM, NAN, 0.0, 100000.0, "us", NULL,
				    "latency of one algorithm step across nodes", NULL},
	[HW_P_FABRIC_LEAF_NODES] = {"fabric_leaf_nodes", HW_SCOPE_SYSTEM, 16.0, 1.0, 1e7, "nodes", NULL,
				    "nodes under one leaf switch (groups beyond it see the oversubscription)", NULL},
	[HW_P_PCIE_GBPS] = {"pcie_gbps", HW_SCOPE_SYSTEM, 25.0, 0.1, 10000.0, "GB/s", NULL,
			    "host-device copy bandwidth per GPU, one direction (optimizer offload)", NULL},
	[HW_P_HOST_OPTIM_GBPS] = {"host_optim_gbps", HW_SCOPE_SYSTEM, 25.0, 0.1, 10000.0, "GB/s", NULL,
				  "host memory bandwidth a CPU optimizer step streams its states at, per GPU's share "
				  "of the host", NULL},
	/* ---- per training framework: what it runs and overlaps ---- */
	[HW_P_FW_ATTENTION] = {"attention", HW_SCOPE_FRAMEWORK, HW_FW_ATTN_FLASH2, 0.0, 2.0, "choice", NULL,
			       "attention kernels: unfused, flash2 (FlashAttention-2 class), flash3 (the architecture's "
			       "fastest: FlashAttention-3/cuDNN)",
			       attn_kinds},
	[HW_P_FW_OVERLAP_GRAD_REDUCE] = {"overlap_grad_reduce", HW_SCOPE_FRAMEWORK, 1.0, 0.0, 1.0, "choice", NULL,
					 "data-parallel gradient reduction overlapped with the backward pass", onoff},
	[HW_P_FW_OVERLAP_PARAM_GATHER] = {"overlap_param_gather", HW_SCOPE_FRAMEWORK, 1.0, 0.0, 1.0, "choice", NULL,
					  "ZeRO-1/2 parameter all-gather hidden in the next forward", onoff},
	[HW_P_FW_SEQUENCE_PARALLEL] = {"sequence_parallel", HW_SCOPE_FRAMEWORK, 0.0, 0.0, 1.0, "choice", NULL,
				       "sequence parallelism with TP > 1 by default (norms and dropout split over the TP ranks)",
				       onoff},
	[HW_P_FW_TP_COMM_OVERLAP] = {"tp_comm_overlap", HW_SCOPE_FRAMEWORK, 0.0, 0.0, 1.0, "choice", NULL,
				     "tensor-parallel collectives overlapped with the GEMMs beside them (Megatron's "
				     "--tp-comm-overlap, async TP)",
				     onoff},
	[HW_P_FW_TP_WGRAD_OVERLAP] = {"tp_wgrad_overlap", HW_SCOPE_FRAMEWORK, 0.0, 0.0, 1.0, "choice", NULL,
				      "with TP, the all-reduce (or reduce-scatter) of a block's input gradient runs beside "
				      "the weight gradient of its first linear layer (Megatron's asynchronous dgrad "
				      "all-reduce)",
				      onoff},
	[HW_P_FW_FP8_RECIPE] = {"fp8_recipe", HW_SCOPE_FRAMEWORK, HW_FP8_DELAYED, 0.0, 3.0, "choice", NULL,
				"how FP8 GEMMs get their scales: delayed, tensorwise (current), rowwise or mxfp8", fp8_recipes},
	[HW_P_FW_EP_DISPATCH] = {"ep_dispatch", HW_SCOPE_FRAMEWORK, HW_EP_ALLTOALL, 0.0, 1.0, "choice", NULL,
				 "how MoE tokens reach their experts' ranks: alltoall (a copy per expert) or deepep (across "
				 "nodes once per node, then NVLink)", ep_dispatches},
	[HW_P_FW_ZERO3_GATHER] = {"zero3_gather", HW_SCOPE_FRAMEWORK, HW_Z3_LAYER, 0.0, 2.0, "choice", NULL,
				  "how ZeRO-3 gathers a layer's parameters: layer (one collective), module (one per linear "
				  "module and norm) or tensor (one per parameter tensor); each pays the ring's latency",
				  z3_gathers},
	[HW_P_FW_ZERO3_REGATHER] = {"zero3_regather", HW_SCOPE_FRAMEWORK, 0.0, 0.0, 1.0, "choice", NULL,
				    "ZeRO-3 with full recomputation: the recompute gathers a layer's parameters and releases "
				    "them, and its backward gathers them again (off: one gather serves both)",
				    onoff},
	[HW_P_FW_ZERO3_PREFETCH] = {"zero3_prefetch", HW_SCOPE_FRAMEWORK, 1.0, 0.0, 1.0, "choice", NULL,
				    "ZeRO-3 gathers a layer's parameters one layer ahead, beside the compute of the layer "
				    "before it (off: once the layer before it is done, on the compute's critical path)",
				    onoff},
	[HW_P_FW_DP_ONE_STREAM] = {"dp_one_stream", HW_SCOPE_FRAMEWORK, 0.0, 0.0, 1.0, "choice", NULL,
				   "ZeRO-2/3: the gradient reduce-scatters run on the data-parallel group's one communication "
				   "stream with its parameter all-gathers, in the order they are issued (PyTorch's NCCL "
				   "process group), not beside them",
				   onoff},
	[HW_P_FW_DIST_OPTIMIZER] = {"dist_optimizer", HW_SCOPE_FRAMEWORK, 0.0, 0.0, 1.0, "choice", NULL,
				    "where on, a validation row that states no ZeRO stage ran with its optimizer states sharded "
				    "over data parallelism (ZeRO-1: Megatron's distributed optimizer)",
				    onoff},
	[HW_P_FW_GRAD_REDUCE] = {"grad_reduce", HW_SCOPE_FRAMEWORK, HW_GR_DTYPE, 0.0, 2.0, "choice", NULL,
				 "the precision data parallelism reduces gradients in: dtype (fp32 for bf16 under DDP or "
				 "ZeRO-1, else the 16-bit training dtype), fp32 or bf16",
				 grad_reduces},
	[HW_P_FW_GEMM_SCALE] = {"gemm_scale", HW_SCOPE_FRAMEWORK, 1.0, 0.3, 1.2, "fraction", NULL,
				"the framework's GEMMs (its kernel choices, epilogues, clocks under its load) as a fraction of the "
				"GPU's measured rate", NULL},
	[HW_P_FW_ATTN_SCALE] = {"attn_scale", HW_SCOPE_FRAMEWORK, 1.0, 0.3, 1.2, "fraction", NULL,
				"the framework's attention kernels as a fraction of the GPU's measured rate for their generation", NULL},
	[HW_P_FW_HOST_OP_US] = {"host_op_us", HW_SCOPE_FRAMEWORK, 0.0, 0.0, 10000.0, "us", NULL,
				"the framework's host time to issue one kernel (a floor on a kernel's time)", NULL},
	[HW_P_FW_COMM_SLOWDOWN] = {"comm_slowdown", HW_SCOPE_FRAMEWORK, 0.0, 0.0, 4.0, "fraction", NULL,
				   "compute slowdown while its collectives run beside it (their kernels take SMs and HBM)", NULL},
	[HW_P_FW_ERR_P10] = {"err_p10", HW_SCOPE_FRAMEWORK, NAN, -3.0, 3.0, "log ratio", NULL,
			     "10th percentile of log(measured / predicted step time) over the cross-validation's rows "
			     "of this framework: the low end of a prediction's 80% interval (none: no interval)", NULL},
	[HW_P_FW_ERR_P90] = {"err_p90", HW_SCOPE_FRAMEWORK, NAN, -3.0, 3.0, "log ratio", NULL,
			     "90th percentile of the same: the high end", NULL},
	/* ---- per serving engine: how it schedules, launches and what its kernels reach ---- */
	[HW_P_EN_MAX_NUM_SEQS] = {"max_num_seqs", HW_SCOPE_ENGINE, 256.0, 1.0, 1048576.0, "sequences", NULL,
				  "sequences in a batch by default (vLLM max_num_seqs, TensorRT-LLM max_batch_size, SGLang "
				  "max_running_requests)", NULL},
	[HW_P_EN_MAX_BATCHED_TOKENS] = {"max_num_batched_tokens", HW_SCOPE_ENGINE, 8192.0, 1.0, 4194304.0, "tokens", NULL,
					"tokens an iteration computes by default (vLLM max_num_batched_tokens, TensorRT-LLM "
					"max_num_tokens, SGLang chunked_prefill_size)", NULL},
	[HW_P_EN_PREFILL] = {"prefill", HW_SCOPE_ENGINE, HW_EN_PREFILL_CHUNKED, 0.0, 2.0, "choice", NULL,
			     "how prompts enter the batch: chunked (decode first, prefill chunks fill the budget), mixed "
			     "(decode first, then whole prompts that fit), separate (prefill-only iterations while prompts "
			     "wait)",
			     prefill_modes},
	[HW_P_EN_GRAPH_MAX] = {"cuda_graph_max", HW_SCOPE_ENGINE, 512.0, 0.0, 1048576.0, "tokens", NULL,
			       "largest iteration (tokens) replayed from a captured CUDA graph; larger ones, and all when "
			       "0, launch every kernel from the host", NULL},
	[HW_P_EN_GRAPH_STEP] = {"cuda_graph_step", HW_SCOPE_ENGINE, 8.0, 1.0, 65536.0, "tokens", NULL,
				"captured sizes are 1, 2, 4 and the multiples of this up to cuda_graph_max: an iteration "
				"runs padded to the next one", NULL},
	[HW_P_EN_GRAPH_MIXED] = {"cuda_graph_mixed", HW_SCOPE_ENGINE, 1.0, 0.0, 1.0, "choice", NULL,
				 "iterations with prefill tokens run from graphs too (vLLM V1's piecewise graphs); off: "
				 "only decode-only iterations",
				 onoff},
	[HW_P_EN_LAUNCH_US] = {"launch_us", HW_SCOPE_ENGINE, 4.0, 0.0, 1000.0, "us", NULL,
			       "host time to launch one kernel outside a graph (PyTorch eager, compiled code, a C++ runtime): "
			       "an iteration takes at least its kernels times this", NULL},
	[HW_P_EN_SCHED_US] = {"sched_us", HW_SCOPE_ENGINE, 500.0, 0.0, 100000.0, "us", NULL,
			      "the scheduler's host time per iteration, fixed part (scheduling, input preparation, "
			      "sampling, output processing)", NULL},
	[HW_P_EN_SCHED_SEQ_US] = {"sched_seq_us", HW_SCOPE_ENGINE, 5.0, 0.0, 10000.0, "us", NULL,
				  "the scheduler's host time per running sequence per iteration", NULL},
	[HW_P_EN_OVERLAP] = {"overlap_schedule", HW_SCOPE_ENGINE, 0.0, 0.0, 1.0, "choice", NULL,
			     "the host prepares the next iteration while the GPU runs this one (SGLang's and TensorRT-LLM's "
			     "overlap schedulers, vLLM's async scheduling): an iteration takes the longer of the two, "
			     "not their sum",
			     onoff},
	[HW_P_EN_SCHED_STEPS] = {"scheduler_steps", HW_SCOPE_ENGINE, 1.0, 1.0, 256.0, "steps", NULL,
				 "decode steps scheduled at once (vLLM V0's multi-step scheduling): the host's per-iteration "
				 "work is paid once per this many decode-only iterations", NULL},
	[HW_P_EN_ATTENTION] = {"prefill_attention", HW_SCOPE_ENGINE, HW_FW_ATTN_FLASH3, 1.0, 2.0, "choice", NULL,
			       "prefill attention kernels: flash2 (FlashAttention-2 class, CK on AMD), flash3 (the "
			       "architecture's fastest: FlashAttention-3, TensorRT-LLM's context FMHA, FlashInfer)",
			       attn_kinds},
	[HW_P_EN_FP8_ATTENTION] = {"fp8_attention", HW_SCOPE_ENGINE, 0.0, 0.0, 1.0, "choice", NULL,
				   "with an fp8 KV cache, attention computes in fp8 (TensorRT-LLM's FP8 context FMHA, "
				   "FlashAttention-3 fp8)",
				   onoff},
	[HW_P_EN_FP8_SCALING] = {"fp8_scaling", HW_SCOPE_ENGINE, HW_EN_FP8_DYNAMIC, 0.0, 2.0, "choice", NULL,
				 "how fp8 GEMMs get their activation scales: static (calibrated, the cast fused into the "
				 "kernel before), dynamic (per tensor: an amax pass, then the cast), token (per token, one "
				 "pass)",
				 fp8_scalings},
	[HW_P_EN_ALLREDUCE_US] = {"allreduce_us", HW_SCOPE_ENGINE, 0.0, 0.0, 10000.0, "us", NULL,
				  "latency of the engine's one-shot all-reduce for small TP messages inside the NVLink "
				  "domain (0: NCCL's)", NULL},
	[HW_P_EN_KV_RESERVE] = {"kv_reserve", HW_SCOPE_ENGINE, 0.0, 0.0, 1.0, "fraction", NULL,
				"a request is admitted only while the KV cache keeps room for this fraction of every "
				"running and admitted request's remaining output up to its max_tokens (1: TensorRT-LLM's "
				"GUARANTEED_NO_EVICT; 0: vLLM, which preempts when the cache runs out)", NULL},
	[HW_P_EN_DECODE_GQA] = {"decode_gqa", HW_SCOPE_ENGINE, 1.0, 0.0, 1.0, "choice", NULL,
				"the decode attention kernel reads each KV head once for the query heads that share it "
				"(on: XQA, FlashInfer, FlashAttention); off: once per query head, as TensorRT-LLM's masked "
				"multi-head attention did before its XQA kernel (0.8)",
				onoff},
	[HW_P_EN_GEMM_SCALE] = {"serve_gemm_scale", HW_SCOPE_ENGINE, 1.0, 0.3, 1.3, "fraction", NULL,
				"the engine's GEMMs (its kernel choices and epilogues) as a fraction of the GPU's measured rate", NULL},
	[HW_P_EN_ATTN_SCALE] = {"serve_attn_scale", HW_SCOPE_ENGINE, 1.0, 0.2, 1.5, "fraction", NULL,
				"the engine's prefill attention as a fraction of the GPU's measured rate for its generation", NULL},
	[HW_P_EN_DECODE_SCALE] = {"decode_attn_scale", HW_SCOPE_ENGINE, 1.0, 0.2, 1.3, "fraction", NULL,
				  "the engine's paged decode attention (reading the KV cache) as a fraction of the GPU's "
				  "streaming bandwidth", NULL},
	/* the 80% intervals of its predictions, as the framework's err_p10/err_p90, per kind of metric
	 * (wider bounds: a serving run the model saturates is off by a factor of hundreds) */
	[HW_P_EN_TPUT_P10] = {"tput_err_p10", HW_SCOPE_ENGINE, NAN, -6.0, 6.0, "log ratio", NULL,
			      "10th percentile of log(predicted / measured output tokens/s) over the cross-validation's "
			      "throughput rows of this engine: the low end of a prediction's 80% interval, as the "
			      "inverse (none: no interval)", NULL},
	[HW_P_EN_TPUT_P90] = {"tput_err_p90", HW_SCOPE_ENGINE, NAN, -6.0, 6.0, "log ratio", NULL,
			      "90th percentile of the same: the high end", NULL},
	[HW_P_EN_TTFT_P10] = {"ttft_err_p10", HW_SCOPE_ENGINE, NAN, -6.0, 6.0, "log ratio", NULL,
			      "10th percentile of log(measured / predicted time to first token) over the "
			      "cross-validation's rows of this engine (none: no interval)", NULL},
	[HW_P_EN_TTFT_P90] = {"ttft_err_p90", HW_SCOPE_ENGINE, NAN, -6.0, 6.0, "log ratio", NULL,
			      "90th percentile of the same", NULL},
	[HW_P_EN_TPOT_P10] = {"tpot_err_p10", HW_SCOPE_ENGINE, NAN, -6.0, 6.0, "log ratio", NULL,
			      "10th percentile of log(measured / predicted time per output token, inter-token or "
			      "end-to-end latency) over the cross-validation's rows of this engine (none: no interval)",
			      NULL},
	[HW_P_EN_TPOT_P90] = {"tpot_err_p90", HW_SCOPE_ENGINE, NAN, -6.0, 6.0, "log ratio", NULL,
			      "90th percentile of the same", NULL},
	/* the capacity band: how far any engine's capacity on a benchmark not fitted has been from
	 * the model; a run at an arrival rate is simulated again at its ends (sim_serve_speed) */
	[HW_P_EN_CAP_P10] = {"cap_err_p10", HW_SCOPE_ENGINE, NAN, -6.0, 6.0, "log ratio", NULL,
			     "10th percentile of log(predicted / measured output tokens/s) over the cross-validation's "
			     "capacity rows (a batch or a closed loop) of every engine: the engine e^-cap_err_p90 to "
			     "e^-cap_err_p10 times as fast as modelled is the band a run at an arrival rate is "
			     "simulated again at for its latencies' intervals (none: no band)", NULL},
	[HW_P_EN_CAP_P90] = {"cap_err_p90", HW_SCOPE_ENGINE, NAN, -6.0, 6.0, "log ratio", NULL,
			     "90th percentile of the same", NULL},
};

static const char *const scope_names[HW_NSCOPES] = {"gpu", "system", "framework", "engine"};

const char *
hw_scope_name(hw_pscope s)
{
	return s >= 0 && s < HW_NSCOPES ? scope_names[s] : "?";
}

int
hw_scope_parse(const char *s, hw_pscope *out)
{
	for (int i = 0; i < HW_NSCOPES; i++)
		if (!strcmp(s, scope_names[i])) {
			*out = (hw_pscope)i;
			return 0;
		}
	return PP_EUSAGE;
}

const hw_pdef *
hw_pdef_get(hw_pkey k)
{
	return k >= 0 && k < HW_NPKEYS ? &defs[k] : NULL;
}

int
hw_pdef_find(hw_pscope scope, const char *key, hw_pkey *out)
{
	for (int i = 0; i < HW_NPKEYS; i++)
		if (defs[i].scope == scope && !strcmp(defs[i].key, key)) {
			*out = (hw_pkey)i;
			return 0;
		}
	return PP_ENOTFOUND;
}

/* A value the key can hold: finite, inside its bounds, and one of its values for a choice. */
static bool
pdef_holds(const hw_pdef *d, double v)
{
	return isfinite(v) && v >= d->lo && v <= d->hi && (d->names == NULL || v == floor(v));
}

int
hw_pdef_check(const char *scope, const char *key, double value, char *err, size_t errlen)
{
	hw_pscope s;
	hw_pkey k;
	if (hw_scope_parse(scope, &s) != 0)
		return pp_err(err, errlen, PP_EUSAGE, "parameter scope \"%s\" is not one of gpu, system, framework, engine",
			      scope);
	if (hw_pdef_find(s, key, &k) != 0)
		return pp_err(err, errlen, PP_EUSAGE, "\"%s\" is not a %s parameter (paraplan hw params lists them)", key,
			      scope);
	const hw_pdef *d = &defs[k];
	if (!isfinite(value) || value < d->lo || value > d->hi)
		return pp_err(err, errlen, PP_ERANGE, "%s parameter %s = %g is outside its bounds %g..%g (%s)", scope, key,
			      value, d->lo, d->hi, d->unit);
	if (!pdef_holds(d, value))
		return pp_err(err, errlen, PP_ERANGE, "%s parameter %s is a choice: %g is not one of its values", scope, key,
			      value);
	return 0;
}

int
hw_pdef_choice(const hw_pdef *d, const char *name, double *out)
{
	for (int i = 0; d->names != NULL && d->names[i] != NULL; i++)
		if (!strcmp(d->names[i], name)) {
			*out = (double)i;
			return 0;
		}
	return PP_EUSAGE;
}

const char *
hw_pdef_choice_name(const hw_pdef *d, double v)
{
	int n = 0;
	while (d->names != NULL && d->names[n] != NULL)
		n++;
	return v >= 0 && v < n && v == floor(v) ? d->names[(int)v] : "?";
}

static hw_prov
prov_of_origin(const char *origin)
{
	if (!strcmp(origin, "measured"))
		return HW_PROV_MEASURED;
	if (!strcmp(origin, "fitted"))
		return HW_PROV_FITTED;
	return HW_PROV_DATASHEET; /* default and user figures rest on datasheets or judgement */
}

/* Reads every parameter row of (scope, subject) in one query and sets the registered keys of
 * that scope: the user's rows before the shipped ones, measured before fitted before user before
 * default (hw_param_get's order); a key without a row takes its fallback key's row, else the
 * registry's default.  Keys whose default is derived (NAN) are left to the caller when no row
 * names them (*have false). */
int
hw_load_scope(hw_db *db, hw_pscope scope, const char *subject, unsigned flags, hw_pval *p, bool *have, char *err,
	      size_t errlen)
{
	enum { MAXROWS = 256 };
	struct { char key[48]; double v; char origin[12]; char method[160]; } rows[MAXROWS];
	size_t n = 0;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->sql,
			       "SELECT key, value, origin, method FROM param WHERE scope = ? AND subject = ?"
			       " ORDER BY shipped, CASE origin WHEN 'measured' THEN 0 WHEN 'fitted' THEN 1 WHEN 'user' THEN 2"
			       " ELSE 3 END",
			       -1, &st, NULL) != SQLITE_OK)
		return hw_sqlerr(db, err, errlen, "reading cost-model parameters");
	sqlite3_bind_text(st, 1, hw_scope_name(scope), -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, subject, -1, SQLITE_TRANSIENT);
	while (sqlite3_step(st) == SQLITE_ROW && n < MAXROWS) {
		const char *key = hw_col_text(st, 0);
		if ((flags & HW_LOAD_NO_FITS) && !strcmp(hw_col_text(st, 2), "fitted"))
			continue;
		bool seen = false;
		for (size_t i = 0; i < n && !seen; i++)
			seen = !strcmp(rows[i].key, key);
		if (seen || strlen(key) >= sizeof rows[0].key)
			continue; /* a lower-precedence row of a key already read, or no key of ours */
		pp_strlcpy(rows[n].key, key, sizeof rows[n].key);
		rows[n].v = sqlite3_column_double(st, 1);
		pp_strlcpy(rows[n].origin, hw_col_text(st, 2), sizeof rows[n].origin);
		pp_strlcpy(rows[n].method, hw_col_text(st, 3), sizeof rows[n].method);
		n++;
	}
	sqlite3_finalize(st);
	for (int k = 0; k < HW_NPKEYS; k++) {
		const hw_pdef *d = hw_pdef_get((hw_pkey)k);
		if (d->scope != scope)
			continue;
		size_t hit = n;
		for (size_t i = 0; i < n && hit == n; i++)
			if (!strcmp(rows[i].key, d->key))
				hit = i;
		for (size_t i = 0; i < n && hit == n && d->fallback; i++)
			if (!strcmp(rows[i].key, d->fallback))
				hit = i;
		/* A row from a database made elsewhere may hold anything: only a value the key can hold
		 * is used (inside its bounds; a whole number for a choice). */
		if (hit < n && pdef_holds(d, rows[hit].v)) {
			p[k].v = rows[hit].v;
			p[k].prov = prov_of_origin(rows[hit].origin);
			pp_strlcpy(p[k].origin, rows[hit].origin, sizeof p[k].origin);
			pp_strlcpy(p[k].method, rows[hit].method, sizeof p[k].method);
			have[k] = true;
			continue;
		}
		p[k].v = d->def;
		p[k].prov = HW_PROV_DATASHEET;
		pp_strlcpy(p[k].origin, "generic", sizeof p[k].origin);
		pp_strlcpy(p[k].method, "generic default for hardware without parameters (hardware/params.c)",
			   sizeof p[k].method);
		have[k] = false;
	}
	return 0;
}

