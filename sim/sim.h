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

typedef enum sim_schedule { SIM_GPIPE, SIM_1F1B, SIM_INTERLEAVED, SIM_ZB_H1, SIM_NSCHEDULES } sim_schedule;
typedef enum sim_recompute { SIM_RECOMPUTE_NONE, SIM_RECOMPUTE_SELECTIVE, SIM_RECOMPUTE_FULL } sim_recompute;
typedef enum sim_attention { SIM_ATTN_FLASH, SIM_ATTN_UNFUSED } sim_attention;

const char *sim_schedule_name(sim_schedule s);
int sim_schedule_parse(const char *s, sim_schedule *out);
const char *sim_recompute_name(sim_recompute r);
int sim_recompute_parse(const char *s, sim_recompute *out);

typedef struct sim_train_cfg {
	int gpus;              /* total GPUs */
	int tp, pp, dp, cp, ep;/* dp 0: gpus / (tp pp cp); ep divides dp*cp (experts live in DP ranks) */
	int vpp;               /* virtual stages per pipeline rank (interleaved), 1 otherwise */
	int zero;              /* 0 none, 1 optimizer states, 2 + gradients, 3 + parameters */
	bool fsdp;             /* ZeRO-3 as PyTorch FSDP FULL_SHARD does it (per-block gathers) */
	sim_schedule schedule;
	int64_t micro_batch;   /* sequences per micro-batch (samples for a CNN) */
	int64_t global_batch;  /* sequences per step */
	int64_t seq;           /* 0: the model's default */
	sim_recompute recompute;
	bool sequence_parallel;
	hw_dtype dtype;        /* bf16, fp16 or fp8 (fp8 GEMMs, bf16 elsewhere); fp32 for CNNs */
	sim_attention attention;
	bool overlap_grad_reduce;   /* DP gradient reduction overlapped with the backward pass */
	bool overlap_param_gather;  /* ZeRO-1/2 parameter all-gather hidden in the next forward */
	int grad_reduce_bytes;      /* bytes per gradient element reduced; 0: 4 (fp32) with bf16 and
	                             * ZeRO <= 1 as Megatron-LM does, else the training dtype's */
	double bucket_bytes;        /* gradient bucket size, bytes (0: 25 MB for CNNs, 40M params otherwise) */
	bool pp_scatter_gather;     /* Megatron's scatter/gather of pipeline sends over the TP ranks */
	double moe_imbalance;       /* tokens on the busiest expert over the mean, >= 1 */
	double moe_capacity;        /* capacity factor (0: no token dropping) */
	int first_stage_layers, last_stage_layers; /* 0: automatic */
	bool full;                  /* simulate every rank */
	double straggler;           /* full mode: slowdown factor of one GPU (1: none) */
	int straggler_rank;
	bool trace;                 /* keep op times for sim_train_trace */
	uint64_t seed;
} sim_train_cfg;

/* Defaults: 1F1B, no recomputation, bf16, flash attention, overlapped bf16->fp32 gradient
 * reduction as Megatron-LM does, scatter/gather on, 1 GPU. */
void sim_train_cfg_init(sim_train_cfg *c);

/* Completes and validates a configuration for a model on a system (derives dp, checks every
 * divisibility rule).  Returns PP_EUSAGE with a message naming the failed constraint. */
int sim_train_check(const model *m, const hw_system *sys, sim_train_cfg *c, char *err, size_t errlen);

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

/* Layers of each pipeline stage (uneven splits as Megatron-LM's first/last-stage options). */
int sim_stage_layers(const model *m, const sim_train_cfg *c, int stage);

typedef struct sim_train_result sim_train_result;

typedef struct sim_metrics {
	double step_time_s;
	double tokens_per_s, tokens_per_s_per_gpu;
	double samples_per_s;
	double model_flops;    /* per step, all GPUs: 6N-style (3x forward), no recomputation */
	double hardware_flops; /* per step, all GPUs: what the GPUs executed, recomputation included */
	double model_tflops_per_gpu, hardware_tflops_per_gpu;
	double mfu, hfu;       /* against the dtype's dense peak */
	double bubble_fraction;/* pipeline idle time / step time, mean over stages */
	double exposed_comm_s; /* time only communication ran, mean over stages */
	double compute_s;      /* compute-busy time of the slowest stage */
	double optimizer_s;
	double prov_share[HW_NPROV]; /* share of busy time resting on measured / fitted / datasheet */
	bool fits;
	int stages;
	int64_t events, ops;
	size_t engine_bytes;
} sim_metrics;

int sim_train(const model *m, const hw_cost *cost, const sim_train_cfg *c, sim_train_result **out, char *err,
	      size_t errlen);
const sim_metrics *sim_train_metrics(const sim_train_result *r);
const sim_mem *sim_train_stage_memory(const sim_train_result *r, int stage);
/* A configuration as JSON (the "config" of 'simulate train --json' and of plan documents);
 * seq is the sequence length in effect (the model's when c->seq is 0). */
struct cJSON *sim_train_cfg_json(const sim_train_cfg *c, int64_t seq);
/* The result as a JSON document (the keys of 'paraplan simulate train --json'). */
struct cJSON *sim_train_json(const sim_train_result *r);
/* Writes a Chrome/Perfetto trace (cfg.trace must have been set): one track per rank and stream. */
int sim_train_trace(const sim_train_result *r, const char *path, char *err, size_t errlen);
void sim_train_result_free(sim_train_result *r);

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

/* ---- validation against published measurements -------------------------------------------- */

/* The compiled-in validation data ("published-training", "published-serving"), or NULL. */
const char *sim_validation_data(const char *name);
/* Predicts every row of a training validation CSV (the columns of
 * sim/data/published-training.csv) that it can express, in the row's own metric and FLOP
 * accounting; reports per-row errors, MAPE per source and overall, and the rows skipped with
 * the reason.  `set` filters rows by source (a name such as "narayanan", "korthikanti",
 * "mosaicml"; NULL or "training" for all). */
int sim_validate_training(hw_db *db, const char *text, size_t len, const char *origin, const char *set,
			  struct cJSON **out, char *err, size_t errlen);

/* Serving rows (the columns of sim/data/published-serving.csv): static batches and closed-loop
 * concurrency runs, their throughput and latencies; the same report as the training set. */
int sim_validate_serving(hw_db *db, const char *text, size_t len, const char *origin, struct cJSON **out, char *err,
			 size_t errlen);

/* Fits the cost-model parameters of the GPUs named in `gpus` (a NULL-terminated list of GPUs
 * of the same silicon) to the rows of a validation CSV that ran on them: Nelder-Mead (GSL) on
 * the MAPE over gemm_eff_fp16 (= bf16), host_op_us, attn_eff_fwd (the backward tied to it) and
 * overlap_slowdown, at most max_evals evaluations.  The database is left as it was; *out says
 * what was fitted, MAPE before and after and how.  sim_validate_fit_save stores it. */
int sim_validate_fit(hw_db *db, const char *text, size_t len, const char *origin, const char *const *gpus,
		     int max_evals, struct cJSON **out, char *err, size_t errlen);
/* The same for the serving rows: fits iter_overhead_s and serve_allreduce_us of the systems
 * named in `systems` (the per-step costs a serving engine adds to its kernels). */
int sim_validate_serving_fit(hw_db *db, const char *text, size_t len, const char *origin, const char *const *systems,
			     int max_evals, struct cJSON **out, char *err, size_t errlen);
int sim_validate_fit_save(hw_db *db, const struct cJSON *fit, char *err, size_t errlen);

#endif
