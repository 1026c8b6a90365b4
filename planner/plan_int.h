/*
 * plan_int.h -- private to planner/: candidates and results.
 */
#ifndef PLAN_INT_H
#define PLAN_INT_H

#include "common/pp.h"
#include "planner/plan.h"

enum { CAND_NEW, CAND_INVALID, CAND_OOM, CAND_ESTIMATED, CAND_SIMULATED };

typedef struct plan_cand {
	sim_train_cfg cfg;
	int state;
	double est_s;        /* closed-form estimate */
	double step_s;       /* simulated */
	double usd_per_mtok;
	sim_mem mem;         /* worst stage */
	sim_metrics metrics; /* when simulated */
	char why[160];       /* why it lost to the winner; for an invalid one, the rule it broke or why its
	                      * simulation failed (CAND_INVALID after it) */
	double uncertainty;  /* relative, of its step time (plan_uncertainty) */
	bool tie;            /* within the winner's uncertainty of the winner */
	const plan_framework *framework; /* the asked one, else the first that runs it (NULL: none) */
	uint32_t key_rank;   /* its plan_key's place in the sorted keys (ties are equal keys) */
} plan_cand;

typedef struct plan_count_result {
	int gpus;
	plan_cand *cands; /* after ranking: the simulated ones first, best first */
	size_t ncands, nbest;
	size_t enumerated, invalid, oom, estimated, simulated;
	double min_oom_bytes, capacity; /* the smallest footprint that did not fit */
	char invalid_reason[160];       /* the first invalid layout's broken rule */
	char sim_failed[160];           /* no layout left and simulations failed: the first one's reason */
} plan_count_result;

struct plan_train_result {
	char model[64], system[48];
	hw_system sys;
	int64_t global_batch, seq;
	double price;
	char price_source[160];
	hw_price *prices; /* every price of the system (hw_prices), newest first */
	size_t nprices;
	double life_years, usd_per_kwh, pue;
	plan_objective objective;
	double memory_headroom;
	const plan_framework *framework;
	plan_count_result *counts;
	size_t ncounts;
	bool interrupted;
};

void plan_key(const sim_train_cfg *c, char *buf, size_t n);
int plan_enumerate(const model *m, const hw_system *sys, int gpus, const plan_train_opts *o, int64_t seq,
		   plan_cand **out, size_t *nout);

#endif
