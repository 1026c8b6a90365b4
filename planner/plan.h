/*
 * plan.h -- searching training configurations, capacity planning, launch configurations.
 *
 * plan_train enumerates every valid layout of a model on a system and GPU count (TP within the
 * scale-up domain unless asked otherwise, PP, CP for long sequences, EP for MoE, virtual
 * stages, ZeRO stage, micro-batch, recomputation, sequence parallelism, schedule, dtype when
 * asked), prunes by the divisibility rules and then by the memory model, ranks the survivors
 * with the simulator's closed-form estimate, simulates the best in full on all cores, and
 * ranks those by the objective.  Ties break on the configuration's key, so the same inputs give
 * the same ranking.  A GPU list gives a scaling curve; capacity planning inverts the question.
 *
 * Results are owned by the caller (plan_train_result_free).  The model and hardware database
 * must outlive a call; nothing here prints or exits (progress goes through a callback).
 */
#ifndef PLAN_H
#define PLAN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hardware/hw.h"
#include "models/model.h"
#include "sim/sim.h"

struct cJSON;

typedef enum plan_objective { PLAN_TIME, PLAN_COST } plan_objective;

/* The planner's documents and the version of their format (docs/json.md).  A change of their
 * keys or of a key's meaning is a new version; 'report' reads each version it lists.
 * plan-serve/2: a unit (a replica, or a prefill:decode group) and its capacity_per_unit, where
 * /1 had capacity_per_replica. */
#define PLAN_TRAIN_SCHEMA "paraplan.plan-train/1"
#define PLAN_CAPACITY_SCHEMA "paraplan.plan-capacity/1"
#define PLAN_SERVE_SCHEMA "paraplan.plan-serve/2"

/* ---- cost arithmetic (planner/cost.c): one implementation for the planner and the reports -- */

#define PLAN_HOURS_PER_YEAR 8760.0                      /* 365 days */
#define PLAN_HOURS_PER_MONTH (PLAN_HOURS_PER_YEAR / 12) /* 730 */
/* Ownership defaults, hardware.md 5.3: "$300k over 4 years"; EIA 2023 industrial price in
 * Virginia, 8.92 cents per kWh; a typical PUE of 1.1-1.5. */
#define PLAN_LIFE_YEARS 4.0
#define PLAN_USD_PER_KWH 0.09
#define PLAN_PUE 1.3

/* The terms of owning a cluster. */
typedef struct plan_own {
	double usd_per_gpu;   /* purchase price per GPU (a node's price divided by its GPUs) */
	double life_years;    /* linear amortization */
	double node_power_kw; /* maximum power of one node; 0: energy not counted */
	int gpus_per_node;
	double pue;           /* facility power over IT power */
	double usd_per_kwh;
} plan_own;

/* Renting: usd_per_gpu_hour x gpus x hours. */
double plan_rent_usd(double usd_per_gpu_hour, double gpus, double hours);
/* Dollars per million tokens: usd / (tokens / 1e6); 0 when tokens is not positive. */
double plan_usd_per_mtok(double usd, double tokens);
/* Owning `gpus` GPUs for `hours`: the purchase amortized over its life for those hours
 * (usd_per_gpu x gpus x hours / (life_years x 8760)) plus energy (node_power_kw x gpus /
 * gpus_per_node x pue x usd_per_kwh x hours).  Returns the sum; the parts go to the OUT
 * pointers when they are not NULL. */
double plan_own_usd(const plan_own *o, double gpus, double hours, double *amortized_usd, /* OUT */
		    double *energy_usd /* OUT */);

/* ---- frameworks (planner/framework.c): what each training framework can run ----------------
 *
 * A ranked layout is only useful if the framework that will train the model can run it.  Each
 * entry says, for one framework at a stated version, which pipeline schedules, ZeRO stages and
 * parallel dimensions it expresses; plan_train with a framework ranks only what it runs, and an
 * exporter refuses what its framework cannot express.  Names: megatron, nemo, torchtitan,
 * deepspeed, llm-foundry, pytorch, maxtext.  (The lead connects these to the framework profiles
 * of the hardware database, which say how fast a framework runs; this table says what it runs.) */
typedef struct plan_framework {
	const char *name;       /* "megatron" */
	const char *title;      /* "Megatron-LM (Megatron-Core 0.15)" */
	unsigned schedules;     /* bit 1 << sim_schedule of each schedule it runs with pp > 1 */
	unsigned zero;          /* bit 1 << stage of each ZeRO stage it runs (0: plain data parallel) */
	bool zero23_with_pp;    /* ZeRO-2/3 together with pipeline parallelism */
	bool fsdp;              /* its ZeRO-3 gathers per block, as PyTorch FSDP (sim_train_cfg.fsdp) */
	unsigned hybrid;        /* bit 1 << stage of each ZeRO stage it shards over replicated groups
	                         * (hybrid sharding, sim_train_cfg.dp_shard) */
	bool tp, tp_without_sp; /* tensor parallelism; and without sequence parallelism */
	bool pp, uneven_pp;     /* pipeline parallelism; stages of different layer counts */
	bool cp, ep;            /* ring-attention context parallelism; expert parallelism */
	bool fp8, fp16;
	bool selective_recompute;
	bool op_recompute;  /* per-operator selective checkpointing (torchtitan's selective_ac_option "op") */
	const char *source;     /* where the capabilities were read */
} plan_framework;

/* The framework named, or NULL. */
const plan_framework *plan_framework_find(const char *name);
/* The frameworks, in the order a layout's framework is chosen when none is asked for. */
const plan_framework *plan_framework_at(size_t i);
size_t plan_framework_count(void);
/* "megatron, nemo, ..." */
const char *plan_framework_names(void);
/* Whether f runs configuration c (checked: dp derived); when not and why is not NULL, what it
 * lacks ("the zb-h1 schedule"). */
bool plan_framework_runs(const plan_framework *f, const model *m, const sim_train_cfg *c, char *why, size_t n);

/* A search dimension the user pinned: the values to try (n 0: the planner's own range). */
#define PLAN_PIN_MAX 16
typedef struct plan_pin {
	int n;
	int v[PLAN_PIN_MAX];
} plan_pin;

/* Memory kept free on every GPU by default: the memory model counts one set of NCCL buffers,
 * the CUDA context, cuBLAS workspace and 10% of the churning activations for fragmentation,
 * but a real job also holds a communicator's buffers per process group (TP, PP, DP, CP, EP and
 * their NVLS/IB variants), the caching allocator's fragmentation grows over a long run, and
 * PyTorch reports an out-of-memory before the last byte.  A plan at 79.6 of 79.6 GiB is not one
 * anyone launches; 10% of an 80 GB GPU is 8 GB. */
#define PLAN_MEMORY_HEADROOM 0.10

/* The uncertainty of a step-time prediction, relative: half the width of its 80% interval (the
 * framework's cross-validated errors, sim_interval), or without one by what it rests on: the
 * training MAPE of 'paraplan validate' over its 261 published rows with the shipped fits (9.1%)
 * and with datasheet figures only (33.6%).  A measured figure removes the rate's error but not
 * the model's, so it counts as fitted.  A runner-up whose interval overlaps the winner's (or
 * within the winner's uncertainty of it) is a tie: the model cannot tell them apart. */
#define PLAN_UNCERTAINTY_FITTED 0.091
#define PLAN_UNCERTAINTY_DATASHEET 0.336
double plan_uncertainty(const sim_metrics *m);

typedef struct plan_train_opts {
	const int *gpus;          /* GPU counts to plan for (one, or a list/range) */
	size_t ngpus;
	int64_t global_batch;     /* sequences per step */
	int64_t seq;              /* 0: the model's */
	plan_objective objective;
	double price;             /* USD per GPU-hour; 0: the database's default for the system */
	int top;                  /* configurations to return per GPU count */
	int simulate;             /* best estimates simulated in full per GPU count (>= top) */
	int jobs;                 /* threads; 0: all cores */
	bool tp_across;           /* allow TP beyond the scale-up domain */
	int gpus_per_node;        /* use this many GPUs of each node (0: all; hw_cost_use_gpus_per_node) */
	hw_dtype dtypes[4];       /* dtypes to try; ndtypes 0: bf16 */
	int ndtypes;
	const hw_profile *fw;     /* the framework every layout runs as (not owned); NULL: none */
	/* pinned dimensions: only these values are tried (a pinned TP may cross the scale-up
	 * domain, a pinned CP needs no long sequence, a pinned PP need not divide the layers) */
	plan_pin tp, pp, vpp, cp, ep, zero, micro_batch;
	plan_pin dp_shard;        /* hybrid sharding's shard groups (data-parallel ranks); n 0: ZeRO over
	                           * every data-parallel rank and, for ZeRO-2/3 spanning several
	                           * scale-up domains, sharded within one domain */
	unsigned schedules;       /* bit 1 << sim_schedule of each schedule to try; 0: the default set */
	unsigned recomputes;      /* bit 1 << sim_recompute of each to try; 0: none and full */
	double memory_headroom;   /* fraction of GPU memory kept free (PLAN_MEMORY_HEADROOM) */
	const plan_framework *framework; /* what the framework runs (NULL: anything); fw says how fast */
	/* fine-tuning, as sim_train_cfg holds it: every layout searched trains LoRA adapters of this
	 * rank (0: every parameter) on these projections, over an NF4 base, with packed samples */
	int lora_rank;
	unsigned lora_modules;
	bool base_nf4;
	int64_t sample_len;
	double life_years, usd_per_kwh, pue; /* ownership terms printed in the JSON for reports */
	volatile sig_atomic_t *stop; /* set asynchronously to stop early (Ctrl-C) */
	void (*progress)(void *arg, size_t done, size_t total);
	void *progress_arg;
} plan_train_opts;

void plan_train_opts_init(plan_train_opts *o);

typedef struct plan_train_result plan_train_result;

int plan_train(const model *m, hw_db *db, const char *system, const plan_train_opts *o, plan_train_result **out,
	       char *err, size_t errlen);
/* The ranked result as JSON: per GPU count the candidates (every metric of 'simulate train',
 * cost, why the runners-up lost), the counts enumerated, pruned and simulated, the Pareto front
 * of time and cost, the winner's configuration, every price the database holds for the system
 * and the ownership terms (life, PUE, price per kWh, node power).  This document is what
 * 'report' and 'replay' read. */
struct cJSON *plan_train_json(const plan_train_result *r);
/* The winner (the best configuration of the first GPU count), or NULL when none fits. */
const sim_train_cfg *plan_train_winner(const plan_train_result *r);
/* The GPU counts searched, and the winner of the i-th with its step (NULL when none fits). */
size_t plan_train_ncounts(const plan_train_result *r);
int plan_train_gpus_at(const plan_train_result *r, size_t i);
const sim_train_cfg *plan_train_winner_at(const plan_train_result *r, size_t i, double *step_s /* OUT, may be NULL */);
bool plan_train_interrupted(const plan_train_result *r);
void plan_train_result_free(plan_train_result *r);

/* ---- goodput (planner/goodput.c): training time with failures and checkpoints -------------- */

/* Llama 3's 419 unexpected interruptions in 54 days on 16,384 H100 GPUs (arXiv 2407.21783,
 * section 3.3.4): 419 / (54 x 24 x 16,384) per GPU-hour, 1.97e-5. */
#define PLAN_FAILURES_PER_GPU_HOUR (419.0 / (54.0 * 24.0 * 16384.0))
/* Llama 3's storage (Tectonic) sustained 2 TB/s for 16,384 GPUs (arXiv 2407.21783, section
 * 3.3.1): 122 MB/s per GPU. */
#define PLAN_STORAGE_BPS_PER_GPU (2e12 / 16384.0)
/* Detection, rescheduling, process and NCCL start-up and warm-up before the checkpoint is read:
 * an assumption (10 minutes), not a published figure; --restart-min sets it. */
#define PLAN_RESTART_S 600.0

typedef struct plan_failure_opts {
	bool off;                     /* capacity planning assumes no failure (the old answer) */
	double failures_per_gpu_hour; /* interruptions per GPU-hour (0: none) */
	double storage_bps_per_gpu;   /* checkpoint write and read bandwidth per GPU, B/s */
	double storage_bps;           /* > 0: the aggregate instead, B/s, whatever the GPUs */
	double restart_s;             /* fixed restart time, before reading the checkpoint */
	double interval_s;            /* checkpoint interval; 0: Daly's optimum */
} plan_failure_opts;
void plan_failure_opts_init(plan_failure_opts *o);

typedef struct plan_goodput_result {
	double mtbf_s;           /* mean time between interruptions of the job (inf: none) */
	double failures_per_day; /* of the job */
	double checkpoint_bytes, storage_bps;
	double write_s;          /* delta: one checkpoint's write */
	double restart_s;        /* R: restart plus reading the checkpoint */
	double interval_s;       /* tau: training between checkpoints (Daly's optimum unless set) */
	double young_s;          /* Young's first-order optimum sqrt(2 delta M), for comparison */
	double goodput;          /* training time over wall time, 0..1 */
} plan_goodput_result;

/* Bytes of one checkpoint: the trainable parameters (a LoRA run's adapters) in the training
 * dtype and their Adam state, 14 bytes a parameter in bf16 (12 in fp32). */
double plan_checkpoint_bytes(const model *m, const sim_train_cfg *c);
/* Daly 2006's higher-order optimum interval for checkpoint time delta and MTBF M. */
double plan_daly_interval(double delta_s, double mtbf_s);
/* Daly 2006's complete model: tau / (M e^{R/M} (e^{(tau + delta)/M} - 1)); M inf: tau / (tau + delta). */
double plan_daly_goodput(double tau_s, double delta_s, double restart_s, double mtbf_s);
/* The goodput of a job on `gpus` GPUs whose checkpoints hold checkpoint_bytes; PP_EUSAGE
 * naming the option on a bad setting. */
int plan_goodput(const plan_failure_opts *o, double gpus, double checkpoint_bytes, plan_goodput_result *out, char *err,
		 size_t errlen);

/* Capacity planning: for each system, the smallest number of whole nodes whose best layout
 * trains `tokens` tokens within `days`, its cost rented at each of the system's prices and
 * bought (purchase amortized over `life_years`, plus power at `usd_per_kwh` times `pue`). */
typedef struct plan_capacity_opts {
	const plan_train_opts *search; /* pins, dtypes, headroom, framework of each layout search (NULL: defaults) */
	double tokens, days;
	int64_t global_batch, seq;
	double life_years, usd_per_kwh, pue;
	const hw_profile *fw;     /* the framework (not owned); NULL: none */
	plan_failure_opts failures; /* interruptions and checkpoints counted (unless .off) */
	int max_gpus;
	int jobs;
	volatile sig_atomic_t *stop;
	void (*progress)(void *arg, size_t done, size_t total);
	void *progress_arg;
} plan_capacity_opts;

void plan_capacity_opts_init(plan_capacity_opts *o);
int plan_capacity(const model *m, hw_db *db, const char *const *systems, size_t nsystems, const plan_capacity_opts *o,
		  struct cJSON **out, char *err, size_t errlen);

/* Serving: the cheapest deployment of a model that serves `rate` requests/s within the SLO.
 * For every system, TP and PP degree, weight format, batch limit and (with `disaggregate`)
 * prefill/decode split it finds by bisection the highest rate one unit sustains under the SLO (P99 TTFT and TPOT, and end-to-end when set;
 * not saturated), sizes the replicas for the requested rate plus `failures` spares (N+K), checks
 * the sized deployment with a simulation of all its replicas at the requested rate, and ranks
 * by dollars per hour. */
typedef struct plan_serve_opts {
	double rate;
	double slo_ttft_s, slo_tpot_s, slo_e2e_s;
	const char *const *systems;
	size_t nsystems;
	hw_dtype weights[4];
	int nweights;
	sim_dist prompt, output;
	sim_engine engine;         /* the serving engine every candidate runs (default: the registry's) */
	int failures;              /* spare replicas (N+K); with availability > 0, the least that reaches it */
	double availability;       /* > 0: the share of time at least N replicas must be up (plan_spares) */
	double failures_per_gpu_hour; /* replica failures, per GPU-hour of the replica */
	double repair_hours;       /* mean time to bring a failed replica back */
	bool disaggregate;         /* also try prefill/decode disaggregation 1:1 and 1:2 */
	double duration_s;         /* simulated time per evaluation */
	int top;
	int jobs;
	uint64_t seed;
	volatile sig_atomic_t *stop;
	void (*progress)(void *arg, size_t done, size_t total);
	void *progress_arg;
	double prefix_hit;         /* share of each prompt found in the prefix cache (0: off) */
	sim_spec_method spec;      /* speculative decoding, its proposals per step and acceptance */
	int spec_tokens;
	double spec_accept;
	sim_chunked chunked;       /* chunked prefill: the engine's way, on or off */
} plan_serve_opts;

void plan_serve_opts_init(plan_serve_opts *o);

/* A repaired replica of `gpus` GPUs failing at `per_gpu_hour` and back after `repair_h` hours is
 * down a share u = x / (1 + x) of the time, x = per_gpu_hour x gpus x repair_h (an alternating
 * renewal process).  With N needed and K spare, independent, the deployment serves when at most
 * K are down: P = sum_{i <= K} C(N+K, i) u^i (1 - u)^(N+K-i) (GSL's binomial CDF).  The least K
 * with P >= availability, at most max_k (then -1); *achieved gets P at that K. */
int plan_spares(int n, int gpus, double per_gpu_hour, double repair_h, double availability, int max_k,
		double *achieved);
/* The default repair time: an assumption (the replica rescheduled and its weights loaded on a
 * healthy node within the hour), not a published figure; --repair-hours sets it. */
#define PLAN_REPAIR_HOURS 1.0
int plan_serve(const model *m, hw_db *db, const plan_serve_opts *o, struct cJSON **out, char *err, size_t errlen);

/* MLPerf Inference scenarios for one deployment (planner/serve.c).  Offline: every request at
 * once, the throughput reached.  Server and Interactive: Poisson arrivals; a rate passes when
 * the run is not saturated and its P99 TTFT and P99 TPOT are within the limits (MLPerf's:
 * Interactive's are the tighter); the answer is the highest rate that passes. */
typedef enum plan_scenario { PLAN_SCEN_OFFLINE, PLAN_SCEN_SERVER, PLAN_SCEN_INTERACTIVE } plan_scenario;
int plan_scenario_parse(const char *s, plan_scenario *out);
const char *plan_scenario_name(plan_scenario s);

/* The highest rate in [0, hi] that `pass` accepts, by bisection, assuming that passing is
 * monotone in the rate (a rate below a passing one passes): hi itself is tried first, then the
 * bracket [lo, hi] (lo passing, hi failing) is halved until hi - lo <= tol x hi, so that the
 * answer lo is within a fraction tol below the true threshold.  *steps (may be NULL) counts the
 * evaluations.  pass returns 0 and sets *ok, or an error code that stops the search. */
typedef int (*plan_rate_pass)(void *arg, double rate, bool *ok, char *err, size_t errlen);
int plan_rate_search(plan_rate_pass pass, void *arg, double hi, double tol, double *rate, int *steps, char *err,
		     size_t errlen);

typedef struct plan_scenario_opts {
	plan_scenario scenario;
	sim_serve_cfg cfg;          /* the deployment: tp, pp, replicas, engine, weights, lengths, seed */
	double ttft_p99_s, tpot_p99_s; /* the limits (Server, Interactive) */
	int64_t offline_requests;   /* the Offline run's first query; the run issues at least duration_s of
	                             * requests at its rate (sim_serve_offline) */
	double duration_s;          /* simulated arrivals per evaluation: at least 1000 requests, at most 8192 */
	double tolerance;           /* the search's relative tolerance (default 0.01) */
} plan_scenario_opts;
void plan_scenario_opts_init(plan_scenario_opts *o);
/* Runs the scenario on the deployment; *out is a "paraplan.plan-scenario/1" document. */
int plan_serve_scenario(const model *m, const hw_cost *cost, const plan_scenario_opts *o, struct cJSON **out,
			char *err, size_t errlen);
/* The times the search's upper bound (1.2 x the Offline throughput) is doubled while the rate
 * there still passes: 2^6 x 1.2 = 77 times the Offline throughput at most. */
#define PLAN_SCENARIO_DOUBLINGS 6
#define PLAN_SCENARIO_SCHEMA "paraplan.plan-scenario/1"

/* Launch configurations (planner/export.c): the ranked configuration as a Megatron-LM run script,
 * a NeMo 2.0 / Megatron-Bridge script, a torchtitan TOML, a DeepSpeed JSON with its launcher, a
 * per-node torchrun script or a SLURM batch script -- exactly that configuration, or PP_EUSAGE
 * saying what the target cannot express.  Placeholders (data, tokenizer, schedule, addresses)
 * are listed in the output's header and stop the run when left unset.  *out is malloc'd text. */
typedef enum plan_export {
	PLAN_EXPORT_MEGATRON, PLAN_EXPORT_NEMO, PLAN_EXPORT_TORCHTITAN, PLAN_EXPORT_DEEPSPEED, PLAN_EXPORT_TORCHRUN,
	PLAN_EXPORT_SLURM, PLAN_EXPORT_NKINDS
} plan_export;
typedef struct plan_export_opts {
	plan_export kind;
	const plan_framework *framework; /* what torchrun and slurm launch (NULL: megatron) */
	int gpus_per_node;               /* GPUs used per node (0: the system's) */
	double step_s;                   /* the predicted step, for the header (0: not said) */
} plan_export_opts;
void plan_export_opts_init(plan_export_opts *o);
int plan_export_parse(const char *s, plan_export *out);
const char *plan_export_name(plan_export k);
int plan_export_config(const model *m, const hw_system *sys, const sim_train_cfg *c, const plan_export_opts *o,
		       char **out, char *err, size_t errlen);

/* A serving deployment (one element of a plan-serve document's "deployments") as the command
 * that starts one replica in a serving engine, with its TP and PP, weight quantization, KV-cache
 * dtype and batch limits; PP_EUSAGE when the engine cannot express it (vLLM and TensorRT-LLM:
 * a disaggregated deployment).  model_ref names the model in the comment. */
typedef enum plan_engine { PLAN_ENGINE_VLLM, PLAN_ENGINE_SGLANG, PLAN_ENGINE_TRTLLM } plan_engine;
int plan_engine_parse(const char *s, plan_engine *out);
int plan_export_serve(const struct cJSON *deployment, const char *model_ref, plan_engine engine, char **out, char *err,
		      size_t errlen);

#endif
