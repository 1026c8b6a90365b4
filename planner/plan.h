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
bool plan_train_interrupted(const plan_train_result *r);
void plan_train_result_free(plan_train_result *r);

/* Capacity planning: for each system, the smallest number of whole nodes whose best layout
 * trains `tokens` tokens within `days`, its cost rented at each of the system's prices and
 * bought (purchase amortized over `life_years`, plus power at `usd_per_kwh` times `pue`). */
typedef struct plan_capacity_opts {
	double tokens, days;
	int64_t global_batch, seq;
	double life_years, usd_per_kwh, pue;
	const hw_profile *fw;     /* the framework (not owned); NULL: none */
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
