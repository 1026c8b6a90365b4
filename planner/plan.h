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
 * of time and cost, and the winner's configuration.  This document is what 'report' and
 * 'replay' read. */
struct cJSON *plan_train_json(const plan_train_result *r);
/* The winner (the best configuration of the first GPU count), or NULL when none fits. */
const sim_train_cfg *plan_train_winner(const plan_train_result *r);
bool plan_train_interrupted(const plan_train_result *r);
void plan_train_result_free(plan_train_result *r);

/* Capacity planning: for each system, the smallest number of whole nodes whose best layout
 * trains `tokens` tokens within `days`, its cost rented at each of the system's prices and
 * bought (purchase amortized over `life_years`, plus power at `usd_per_kwh` times `pue`). */
typedef struct plan_capacity_opts {
	double tokens, days;
	int64_t global_batch, seq;
	double life_years, usd_per_kwh, pue;
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
	int failures;
	bool disaggregate;         /* also try prefill/decode disaggregation 1:1 and 1:2 */
	double duration_s;         /* simulated time per evaluation */
	int top;
	int jobs;
	uint64_t seed;
	volatile sig_atomic_t *stop;
	void (*progress)(void *arg, size_t done, size_t total);
	void *progress_arg;
} plan_serve_opts;

void plan_serve_opts_init(plan_serve_opts *o);
int plan_serve(const model *m, hw_db *db, const plan_serve_opts *o, struct cJSON **out, char *err, size_t errlen);

/* Launch configurations for a configuration: Megatron-LM arguments, a DeepSpeed JSON config,
 * a torchrun command, a SLURM batch script.  *out is malloc'd text. */
typedef enum plan_export { PLAN_EXPORT_MEGATRON, PLAN_EXPORT_DEEPSPEED, PLAN_EXPORT_TORCHRUN, PLAN_EXPORT_SLURM } plan_export;
int plan_export_parse(const char *s, plan_export *out);
int plan_export_config(const model *m, const hw_system *sys, const sim_train_cfg *c, plan_export kind, char **out,
		       char *err, size_t errlen);

#endif
