/*
 * sim.h -- simulating one training step (and, in serve.c, a serving workload) of a model on a
 * system, against the cost model.
 *
 * The training simulator turns (model, parallel configuration, system) into the op graph of
 * one step -- per simulated rank: the GEMMs, attention, memory-bound kernels and optimizer of
 * its layers, the TP, CP and EP collectives of each layer, the pipeline sends and receives of
 * each micro-batch, the DP / ZeRO gradient and parameter collectives in buckets -- in the order
 * the pipeline schedule dictates, and runs it on the discrete-event engine.  By default one
 * representative rank per pipeline stage is simulated (the TP, CP and DP peers of a rank do the
 * same work at the same time); the full mode simulates every rank, for checking the symmetric
 * mode and for stragglers.
 *
 * A configuration is checked first (sim_train_check): degrees that do not divide the GPUs,
 * heads, layers, experts or batch are usage errors naming the constraint.  A configuration
 * that does not fit in memory still simulates, and its result says so with the breakdown.
 *
 * Results are owned by the caller (sim_train_result_free).  Nothing here prints or exits.
 */
#ifndef SIM_H
#define SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hardware/hw.h"
#include "models/model.h"
#include "sim/serve.h"

struct cJSON;

/* The simulator's documents and the version of their format (docs/json.md): 'simulate train',
 * 'simulate serve' and 'simulate infer --json', their Chrome/Perfetto traces.  A change of their keys or of a key's meaning is a new version. */
#define SIM_TRAIN_SCHEMA "paraplan.train/1"
#define SIM_SERVE_SCHEMA "paraplan.serve/1"
#define SIM_INFER_SCHEMA "paraplan.infer/1"
#define SIM_TRACE_SCHEMA "paraplan.trace/1"

typedef enum sim_schedule { SIM_GPIPE, SIM_1F1B, SIM_INTERLEAVED, SIM_ZB_H1, SIM_NSCHEDULES } sim_schedule;
/* Activation recomputation: none; selective (Korthikanti 2022: the attention core); full (every
 * layer's forward); op (torchtitan's per-op selective checkpointing: the outputs of matmuls and
 * attention kept but every second matmul's, the element-wise kernels run again). */
typedef enum sim_recompute { SIM_RECOMPUTE_NONE, SIM_RECOMPUTE_SELECTIVE, SIM_RECOMPUTE_FULL, SIM_RECOMPUTE_OP } sim_recompute;
/* Attention kernels: FlashAttention-2-class fused kernels, unfused batched products and
 * softmax kernels, or the architecture's fastest fused kernels (FA3/cuDNN on Hopper). */
typedef enum sim_attention { SIM_ATTN_FLASH, SIM_ATTN_UNFUSED, SIM_ATTN_FLASH3 } sim_attention;
const char *sim_attention_name(sim_attention a);           /* "flash2", "unfused", "flash3" */
int sim_attention_parse(const char *s, sim_attention *out); /* also "flash" for flash2 */

const char *sim_schedule_name(sim_schedule s);
int sim_schedule_parse(const char *s, sim_schedule *out);
const char *sim_recompute_name(sim_recompute r);
int sim_recompute_parse(const char *s, sim_recompute *out);

typedef struct sim_train_cfg {
	int gpus;              /* total GPUs */
	int tp, pp, dp, cp, ep;/* dp 0: gpus / (tp pp cp); etp x ep divides tp x cp x dp */
	int etp;               /* expert tensor parallelism (MoE parallel folding, Liu et al. 2025):
	                        * the MoE layers' own TP degree; their ranks etp x ep x edp are the
	                        * dense layers' tp x cp x dp of a stage.  0: Megatron-Core's default
	                        * (tp) where ep divides dp x cp, else the largest divisor of tp that
	                        * fits (sim_train_etp) */
	int vpp;               /* virtual stages per pipeline rank (interleaved), 1 otherwise */
	int zero;              /* 0 none, 1 optimizer states, 2 + gradients, 3 + parameters */
	int dp_shard;          /* hybrid sharding (HSDP, MiCS, Megatron's distributed-optimizer
	                        * instances): ZeRO shards over groups of dp_shard data-parallel ranks
	                        * (times cp), and the dp / dp_shard groups hold replicas, whose
	                        * gradient shards are all-reduced across them; 0: over all dp ranks
	                        * (sim_dp_shard) */
	bool offload_optimizer;/* ZeRO-Offload: optimizer states and step on the CPU */
	bool fsdp;             /* ZeRO-3 as PyTorch FSDP FULL_SHARD does it (per-block gathers) */
	sim_schedule schedule;
	int64_t micro_batch;   /* sequences per micro-batch (samples for a CNN) */
	int64_t global_batch;  /* sequences per step */
	int64_t seq;           /* 0: the model's default */
	sim_recompute recompute;
	bool sequence_parallel;
	bool tp_wgrad_overlap; /* with TP: a block's backward collective runs beside its first linear's weight
	                        * gradient (HW_P_FW_TP_WGRAD_OVERLAP) */
	bool tp_comm_overlap;  /* with sequence parallelism: TP all-gathers and reduce-scatters run
	                        * beside the GEMMs of the block (Megatron's --tp-comm-overlap) */
	hw_dtype dtype;        /* bf16, fp16 or fp8 (fp8 GEMMs, bf16 elsewhere); fp32 for CNNs */
	int fp8_recipe;        /* HW_FP8_*: how fp8 GEMMs get their scales (the casts around them) */
	int zero3_gather;      /* HW_Z3_*: the collectives ZeRO-3 gathers a layer's parameters in */
	bool zero3_regather;   /* full recompute under ZeRO-3: the recompute and the backward each gather */
	bool zero3_prefetch;   /* ZeRO-3 gathers a layer's parameters one layer ahead (off: once the layer
	                        * before it is done) */
	bool dp_one_stream;    /* ZeRO-2/3's reduce-scatters queue on the DP stream with its all-gathers */
	bool ep_deepep;        /* MoE tokens cross nodes once per node holding one of their experts
	                        * (DeepEP), not once per expert (HW_P_FW_EP_DISPATCH) */
	sim_attention attention;
	bool overlap_grad_reduce;   /* DP gradient reduction overlapped with the backward pass */
	bool overlap_param_gather;  /* ZeRO-1/2 parameter all-gather hidden in the next forward */
	int grad_reduce_bytes;      /* bytes per gradient element reduced; 0: as grad_reduce says */
	int grad_reduce;            /* HW_GR_*: the framework's gradient reduction precision (sim_grad_bytes) */
	double bucket_bytes;        /* gradient bucket size, bytes (0: 25 MB for CNNs, 40M params otherwise) */
	bool pp_scatter_gather;     /* Megatron's scatter/gather of pipeline sends over the TP ranks */
	double moe_imbalance;       /* tokens on the busiest expert over the mean, >= 1 */
	double moe_capacity;        /* capacity factor (0: no token dropping) */
	int first_stage_layers, last_stage_layers; /* 0: automatic */
	bool full;                  /* simulate every rank */
	double straggler;           /* full mode: slowdown factor of one GPU (1: none) */
	int straggler_rank;
	bool trace;                 /* keep op times for sim_train_trace */
	bool record_ops;            /* keep the op graph with each op's kernels for sim_train_rank_ops
	                             * (replay); off, the simulation does no recording at all */
	bool no_fold;               /* simulate every micro-batch of the symmetric mode, never its
	                             * steady state folded (the same result; for tests) */
	bool no_stamp;              /* build every job of the graph op by op, none stamped from a
	                             * journal of one like it (the same graph; for tests) */
	bool attn_proxy;            /* price each fused attention kernel as the GEMMs a replay launches
	                             * in its place (sim_attn_proxy): what 'paraplan replay' runs */
	uint64_t seed;
	const hw_profile *fw;       /* the training framework (not owned); NULL: the defaults above */
	/* fine-tuning (docs/finetune-goodput.md; 0 / false: pre-training as above) */
	int lora_rank;              /* LoRA adapters of this rank on a frozen base */
	unsigned lora_modules;      /* SIM_LORA_* bits of the adapted projections; 0: all of them */
	bool base_nf4;              /* the frozen base's linear layers stored in NF4 (QLoRA) */
	int64_t sample_len;         /* packed sequences: mean length of the samples packed into one
	                             * sequence, attention masked per sample (0: one sample a sequence) */
} sim_train_cfg;

/* LoRA (Hu et al. 2021, arXiv 2106.09685): each adapted projection W (k inputs, n outputs) of
 * the frozen base gains A (r x k) and B (n x r) and computes xW + s x A^T B^T; only A and B
 * train.  The projections by their Hugging Face names: q, k, v and o of the attention, gate, up
 * and down of the MLP (and of each expert; a model without a gate has up and down only). */
enum {
	SIM_LORA_Q = 1u << 0, SIM_LORA_K = 1u << 1, SIM_LORA_V = 1u << 2, SIM_LORA_O = 1u << 3,
	SIM_LORA_GATE = 1u << 4, SIM_LORA_UP = 1u << 5, SIM_LORA_DOWN = 1u << 6,
	SIM_LORA_ATTN = 0x0f, SIM_LORA_MLP = 0x70, SIM_LORA_ALL = 0x7f
};
/* "q,v,o,gate,up,down", "all" (or "all-linear"), "attn", "mlp"; PP_EUSAGE naming the bad one. */
int sim_lora_modules_parse(const char *s, unsigned *out, char *err, size_t errlen);
/* "q,k,v,o,gate,up,down" of a mask (0: all) into buf. */
const char *sim_lora_modules_name(unsigned mask, char *buf, size_t n);
/* Bytes per NF4 weight: 4 bits, one 8-bit scale per block of 64 and one fp32 scale per 256
 * blocks (QLoRA's double quantization, Dettmers et al. 2023 section 3): 0.5 + 1/64 + 4/16384. */
#define SIM_NF4_BYTES (0.5 + 1.0 / 64.0 + 4.0 / 16384.0)

/* The parameters a fine-tuning trains and holds, over the whole model (no parallelism):
 * adapters (or, without LoRA, every parameter), the frozen base, and of it the linear-layer
 * weights NF4 stores.  FLOPs per token the method needs: forward, input gradients, and the
 * weight gradients of what trains (3x forward without LoRA), with attention over sample_len
 * tokens when sequences are packed. */
typedef struct sim_ft_totals {
	double trainable, frozen, quantized;
	double flops_per_token;
} sim_ft_totals;
void sim_ft_totals_get(const model *m, const sim_train_cfg *c, sim_ft_totals *out);

/* Defaults: 1F1B, no recomputation, bf16, flash attention, overlapped bf16->fp32 gradient
 * reduction as Megatron-LM does, scatter/gather on, 1 GPU, no framework profile. */
void sim_train_cfg_init(sim_train_cfg *c);
/* Runs the configuration as framework fw does (its attention kernels, what it overlaps) and
 * keeps fw for the parameters of its kernels; fw must outlive the configuration's use. */
void sim_train_cfg_framework(sim_train_cfg *c, const hw_profile *fw);
/* Bytes per gradient element that data parallelism reduces (--grad-reduce, else the framework's
 * grad_reduce). */
int sim_grad_bytes(const sim_train_cfg *c);
/* Data-parallel ranks a ZeRO shard group spans (dp_shard, or dp when 0) and the replicas of it
 * (dp / that) of a checked configuration. */
int sim_dp_shard(const sim_train_cfg *c);
int sim_dp_replicas(const sim_train_cfg *c);

/* Completes and validates a configuration for a model on a system (derives dp, checks every
 * divisibility rule).  Returns PP_EUSAGE with a message naming the failed constraint. */
int sim_train_check(const model *m, const hw_system *sys, sim_train_cfg *c, char *err, size_t errlen);
/* The MoE layers' tensor-parallel degree of a configuration: its etp, or the default for 0. */
int sim_train_etp(const sim_train_cfg *c);
/* The bytes a MoE layer's token exchange puts on the wire (across nodes, or inside one node
 * between ranks), over what an all-to-all that sends a copy per expert puts there: 1 but with
 * DeepEP (c->ep_deepep), which sends a token once per other rank of its node, or per other node,
 * holding one of its top_k experts (of `experts` spread evenly over c->ep ranks, per_node of them
 * to a node). */
double sim_ep_dispatch_scale(const sim_train_cfg *c, int64_t experts, int64_t top_k, int per_node);

/* Memory per GPU of one pipeline stage, bytes. */
typedef struct sim_mem {
	double weights, grads, optimizer, activations, comm_buffers, workspace, reserve;
	double total, capacity;
	double inflight;   /* micro-batches (or micro-batch chunks) whose activations are held */
	bool fits;
} sim_mem;
int sim_train_memory(const model *m, const hw_system *sys, const sim_train_cfg *c, int stage, sim_mem *out);

/* A closed-form estimate of the step time (no events; contention ignored), for ranking many
 * configurations quickly.  Transformers only.  Validates the configuration like sim_train. */
int sim_train_estimate(const model *m, const hw_cost *cost, const sim_train_cfg *c, double *step_s, char *err,
		       size_t errlen);

/* Forward and backward of one transformer layer for one micro-batch on one rank, its
 * recomputation and TP collectives run back to back (what Korthikanti 2022 Table 4 measures).
 * The configuration must have passed sim_train_check. */
double sim_layer_time(const model *m, const hw_cost *cost, const sim_train_cfg *c, int64_t layer);

/* Layers of each pipeline stage (uneven splits as Megatron-LM's first/last-stage options), and
 * of virtual chunk ch of a stage (the interleaved schedule; ch 0 otherwise) with the model index
 * of the chunk's first layer in *first. */
int sim_stage_layers(const model *m, const sim_train_cfg *c, int stage);
int sim_chunk_layers(const model *m, const sim_train_cfg *c, int stage, int ch, int64_t *first);

typedef struct sim_train_result sim_train_result;

typedef struct sim_metrics {
	double step_time_s;
	double step_lo_s, step_hi_s; /* the 80% interval of the step time (sim_interval); NAN: none */
	double tokens_per_s, tokens_per_s_per_gpu;
	double samples_per_s;
	double model_flops;    /* per step, all GPUs: 6N-style (3x forward), no recomputation */
	double hardware_flops; /* per step, all GPUs: what the GPUs executed, recomputation included */
	double executed_flops; /* per step, all GPUs: the FLOPs of the simulated compute ops, as the
	                        * layer costs count them (causal attention: its half); what a replay
	                        * of the op graph executes */
	double model_tflops_per_gpu, hardware_tflops_per_gpu;
	double mfu, hfu;       /* against the dtype's dense peak */
	double bubble_fraction;/* pipeline idle time / step time, mean over stages */
	double exposed_comm_s; /* time only communication ran, mean over stages */
	double compute_s;      /* compute-busy time of the slowest stage */
	double optimizer_s;
	double prov_share[HW_NPROV]; /* share of busy time resting on measured / fitted / datasheet (each op
				      * counted under the provenance that priced most of its time) */
	bool fits;
	int stages;
	int64_t events, ops;
	size_t engine_bytes;
} sim_metrics;

int sim_train(const model *m, const hw_cost *cost, const sim_train_cfg *c, sim_train_result **out, char *err,
	      size_t errlen);
/* The 80% interval of a predicted step time t: how far predictions of the framework's runs have
 * been from the measured ones under cross-validation (the 10th and 90th percentile of
 * log(measured / predicted), err_p10 and err_p90 of its profile): t e^p10 to t e^p90.  NAN and
 * NAN without a profile or percentiles. */
void sim_interval(const hw_profile *fw, double t, double *lo, double *hi);
const sim_metrics *sim_train_metrics(const sim_train_result *r);
/* How many jobs of the graph r was simulated on (a folded step's small steps) were stamped from
 * a journal instead of built op by op (sim/train.c, "stamping"): for tests. */
int64_t sim_train_jobs_stamped(const sim_train_result *r);
const sim_mem *sim_train_stage_memory(const sim_train_result *r, int stage);
/* A configuration as JSON (the "config" of 'simulate train --json' and of plan documents);
 * seq is the sequence length in effect (the model's when c->seq is 0). */
struct cJSON *sim_train_cfg_json(const sim_train_cfg *c, int64_t seq);
/* The result as a JSON document (the keys of 'paraplan simulate train --json'). */
struct cJSON *sim_train_json(const sim_train_result *r);
/* Writes a Chrome/Perfetto trace (cfg.trace must have been set): one track per rank and stream. */
int sim_train_trace(const sim_train_result *r, const char *path, char *err, size_t errlen);
void sim_train_result_free(sim_train_result *r);

/* ---- the op list of one rank: what a replay executes (oplist.c) ---------------------------- *
 *
 * With cfg.record_ops the builder notes, for every op it adds to the engine, what a real
 * executor needs: the kernels of a compute op (as layer.c priced them: GEMM shapes and dtype and
 * the weight each multiplies, attention shapes, bytes of memory-bound kernels), the collective
 * of a communication op (group, size, bytes), the peer of a pipeline transfer.  A rank's op
 * list is then read out of the same engine graph the simulation ran: per stream, the ops in the
 * stream's program order, and per op the ops of the rank's other streams it waits for.  Replay
 * and simulation therefore cannot disagree on what runs, in which order, on which stream.
 *
 * Ranks are numbered as Megatron-LM numbers them and as sim_place assumes: TP varies fastest,
 * then CP, then DP, then PP.  In the symmetric mode the list of a rank is its stage
 * representative's, with the rank's own groups and peers. */

/* The weight a GEMM multiplies (forward and data gradient) or whose gradient it computes. */
typedef enum sim_weight {
	SIM_W_NONE, SIM_W_QKV, SIM_W_Q_DOWN, SIM_W_Q_UP, SIM_W_KV_DOWN, SIM_W_KV_UP, SIM_W_PROJ, SIM_W_FC1,
	SIM_W_FC2, SIM_W_ROUTER, SIM_W_EXPERT_FC1, SIM_W_EXPERT_FC2, SIM_W_SHARED_FC1, SIM_W_SHARED_FC2,
	SIM_W_MLM, SIM_W_HEAD, SIM_W_CONV, SIM_W_CNN_FC, SIM_W_SSM_IN, SIM_W_SSM_OUT, SIM_W_LORA_A,
	SIM_W_LORA_B, SIM_NWEIGHTS
} sim_weight;
const char *sim_weight_name(sim_weight w);

/* Which product of a linear layer a GEMM is; attention's batched products (no weights) are
 * SIM_PASS_BMM. */
typedef enum sim_pass { SIM_PASS_FWD, SIM_PASS_DGRAD, SIM_PASS_WGRAD, SIM_PASS_BMM } sim_pass;

/* A kernel of the op graph: what the cost model priced (its shape, dtype and implementation;
 * hw_kernel_flops and hw_kernel_bytes give its work) and, for a GEMM, the weight of which
 * model layer it multiplies or computes the gradient of. */
typedef struct sim_kernel {
	hw_kernel hk;
	sim_weight weight;
	sim_pass pass;
	int64_t layer;       /* the model layer of the weight (-1: none, the embedding or the head) */
} sim_kernel;

typedef enum sim_group {
	SIM_G_TP, SIM_G_CP, SIM_G_EP, SIM_G_DP, SIM_G_EDP, SIM_G_PP, SIM_G_EMB, SIM_G_ETP, SIM_G_DPR, SIM_NGROUPS
} sim_group;
/* "tp", "cp", "ep", "dp" (the gradient group: dp x cp ranks; with hybrid sharding its shard
 * group, dp_shard x cp), "edp" (expert data parallel: tp x cp x dp / (etp x ep), divided by the
 * replicas under hybrid sharding), "pp", "emb" (first and last stage, for tied embeddings), "etp"
 * (expert tensor parallel), "dpr" (hybrid sharding's replicas: the ranks holding the same
 * shard, dp / dp_shard of them, dense and expert alike).  The MoE groups fold over a stage's tp x cp x dp ranks in
 * Megatron-Core's order, etp fastest, then ep, then edp: an EP group spans TP ranks when etp is
 * below tp. */
const char *sim_group_name(sim_group g);

/* A rank's streams, as the simulator gives every GPU. */
enum {
	SIM_S_COMPUTE, SIM_S_TP, SIM_S_CP, SIM_S_EP, SIM_S_DP, SIM_S_DP_RS, SIM_S_PP_SEND_FWD, SIM_S_PP_RECV_FWD,
	SIM_S_PP_SEND_BWD, SIM_S_PP_RECV_BWD, SIM_NSTREAMS
};
const char *sim_stream_name(int s);

typedef struct sim_coords {
	int tp, cp, dp, pp; /* the rank's index in each dimension */
	int inst;           /* dp x cp + cp: its instance among the stage's data-parallel replicas */
} sim_coords;
/* Coordinates of a global rank of a checked configuration. */
void sim_rank_coords(const sim_train_cfg *c, int rank, sim_coords *out);
/* The global ranks of rank's group of kind g, in group-rank order, into out (cap entries);
 * returns the group's size.  Every group kind partitions the ranks. */
int sim_group_members(const sim_train_cfg *c, sim_group g, int rank, int *out, int cap);
/* The size of a group kind under a checked configuration. */
int sim_group_size(const sim_train_cfg *c, sim_group g);

typedef enum sim_opkind { SIM_OP_COMPUTE, SIM_OP_COLL, SIM_OP_SEND, SIM_OP_RECV, SIM_OP_MARK } sim_opkind;
const char *sim_opkind_name(sim_opkind k);

typedef struct sim_rop {
	sim_opkind kind;
	int stream;          /* SIM_S_* */
	int32_t seq;         /* position in the stream's program order */
	uint32_t tag;        /* the simulator's label (sim_op_label) */
	int64_t layer, mb;   /* the model layer (-1: none) and micro-batch of the op */
	size_t k0, nk;       /* compute: its kernels, kernels[k0 .. k0 + nk) */
	double flops;        /* compute: the FLOPs the simulator counted for the op */
	/* collectives: nccl-tests' size semantics (an all-gather's bytes are the gathered buffer) */
	hw_coll coll;
	sim_group group;
	int group_size, per_node, elem_bytes;
	double bytes;
	/* send/recv of a pipeline stage: the peer's global rank and stage; tp_gather: the TP ranks
	 * all-gather their slices after receiving (Megatron's scatter/gather) */
	int peer, peer_stage;
	bool tp_gather;
	size_t d0, nd;       /* deps[d0 .. d0 + nd): earlier ops of other streams it waits for */
	int64_t start_ps, end_ps; /* simulated */
} sim_rop;

typedef struct sim_rank_ops {
	int rank, ranks;     /* this global rank, and how many there are */
	sim_coords co;
	sim_rop *ops;        /* in launch order: every op after the ops it waits for and after its
	                      * stream predecessor; ties by simulated start time */
	size_t nops;
	sim_kernel *kernels;
	size_t nkernels;
	size_t *deps;        /* indexes into ops, each smaller than the waiting op's */
	size_t ndeps;
	int64_t step_ps;     /* the simulated step (all ranks) */
} sim_rank_ops;

/* The op list of global rank `rank` of a result simulated with cfg.record_ops (PP_EUSAGE
 * otherwise, or for a rank out of range).  *out is freed with sim_rank_ops_free. */
int sim_train_rank_ops(const sim_train_result *r, int rank, sim_rank_ops **out, char *err, size_t errlen);
void sim_rank_ops_free(sim_rank_ops *o);
/* The GEMMs that stand for a fused attention kernel where none runs: 'paraplan replay' has no
 * FlashAttention (cuBLAS does not provide it) and launches these in its place, and a simulation
 * with cfg.attn_proxy prices them.  Per chunk of queries (chunks of at most SIM_ATTN_PROXY_CHUNK
 * bytes of scores, written in the GEMMs' output dtype): S = Q K^T and O = P V forward; the
 * recomputed S, dV += P^T dO, dP = dO V^T, dQ = dS K and dK += dS^T Q backward.  The scores
 * computed are density x sk keys per query (a causal square: half).  emit gets each GEMM as
 * batch x [m x k] x [k x n] in the kernel's dtype. */
#define SIM_ATTN_PROXY_CHUNK ((double)(256 << 20))
typedef void (*sim_gemm_fn)(void *arg, int64_t m, int64_t n, int64_t k, int64_t batch);
void sim_attn_proxy(const hw_kernel *k, sim_gemm_fn emit, void *arg);
/* A kernel dimension as launched: the nearest whole number, at least 1. */
int64_t sim_whole(double x);
/* The configuration a result was simulated with (checked and completed). */
const sim_train_cfg *sim_train_config(const sim_train_result *r);
/* A rank's op list as JSON: its coordinates and groups, per stream its ops in program order
 * with their kernels and events, and the launch order. */
struct cJSON *sim_rank_ops_json(const sim_rank_ops *o, const sim_train_cfg *c);
/* An op's label ("fwd attn L3 mb0", "tp L3 mb0", "pp send fwd c0 mb2"). */
const char *sim_op_label(uint32_t tag, char *buf, size_t n);

/* ---- batch inference of a CNN (infer.c) ---------------------------------------------------- */

/* A replica runs `batch` images in micro-batches through pp pipeline stages (contiguous layer
 * ranges balanced by forward time), each on its own GPU of one node; `replicas` copies run
 * side by side. */
typedef struct sim_infer_cfg {
	int pp, replicas;
	int64_t batch, micro_batch; /* micro_batch 0: the batch (pp 1) or batch / (4 pp) */
	hw_dtype dtype;             /* fp16 by default */
} sim_infer_cfg;
void sim_infer_cfg_init(sim_infer_cfg *c);

typedef struct sim_infer_stage {
	int64_t first_layer, last_layer; /* indices into model_layers; last < first: empty */
	double time_per_micro_s, send_per_micro_s, send_bytes_per_micro, flops_per_micro;
	double weights_bytes, activation_bytes, recv_bytes, reserve_bytes, peak_bytes, capacity_bytes;
	hw_prov prov;
	bool fits;
} sim_infer_stage;

typedef struct sim_infer_metrics {
	double batch_latency_s;       /* the whole batch through the pipeline */
	double first_micro_latency_s; /* one micro-batch through every stage */
	double images_per_s, images_per_s_per_gpu, tflops_per_gpu;
	double bubble_fraction;       /* stage idle time over stages x batch latency */
	int64_t micro_batches;
	int gpus;
	bool fits;
} sim_infer_metrics;

typedef struct sim_infer_result sim_infer_result;
int sim_infer(const model *m, const hw_cost *cost, const sim_infer_cfg *c, sim_infer_result **out, char *err,
	      size_t errlen);
const sim_infer_metrics *sim_infer_get_metrics(const sim_infer_result *r);
const sim_infer_stage *sim_infer_get_stage(const sim_infer_result *r, int stage);
struct cJSON *sim_infer_json(const sim_infer_result *r, const model *m);
int sim_infer_trace(const sim_infer_result *r, const char *path, char *err, size_t errlen);
void sim_infer_result_free(sim_infer_result *r);

#endif
