/*
 * result.c -- a plan as JSON: the document 'plan train --json' prints and 'report' and 'replay'
 * read back.  The configuration object uses the same keys as 'simulate train --json'.
 */
#include "config.h"
#include "planner/plan_int.h"

#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static cJSON *
cand_json(const plan_cand *x, int rank, const plan_train_result *r)
{
	cJSON *o = cJSON_CreateObject();
	char key[128];
	plan_key(&x->cfg, key, sizeof key);
	cJSON_AddNumberToObject(o, "rank", rank);
	cJSON_AddStringToObject(o, "key", key);
	cJSON_AddItemToObject(o, "config", sim_train_cfg_json(&x->cfg, x->cfg.seq));
	const sim_metrics *m = &x->metrics;
	cJSON_AddNumberToObject(o, "step_time_s", m->step_time_s);
	cJSON_AddNumberToObject(o, "tokens_per_s", m->tokens_per_s);
	cJSON_AddNumberToObject(o, "tokens_per_s_per_gpu", m->tokens_per_s_per_gpu);
	cJSON_AddNumberToObject(o, "model_tflops_per_gpu", m->model_tflops_per_gpu);
	cJSON_AddNumberToObject(o, "hardware_tflops_per_gpu", m->hardware_tflops_per_gpu);
	cJSON_AddNumberToObject(o, "mfu", m->mfu);
	cJSON_AddNumberToObject(o, "hfu", m->hfu);
	cJSON_AddNumberToObject(o, "bubble_fraction", m->bubble_fraction);
	cJSON_AddNumberToObject(o, "exposed_comm_s", m->exposed_comm_s);
	cJSON_AddNumberToObject(o, "peak_bytes", x->mem.total);
	cJSON_AddNumberToObject(o, "capacity_bytes", x->mem.capacity);
	cJSON_AddNumberToObject(o, "memory_headroom_bytes", x->mem.capacity - x->mem.total);
	cJSON_AddNumberToObject(o, "memory_limit_bytes", x->mem.capacity * (1.0 - r->memory_headroom));
	cJSON *prov = cJSON_AddObjectToObject(o, "provenance");
	for (int k = 0; k < HW_NPROV; k++)
		cJSON_AddNumberToObject(prov, hw_prov_name((hw_prov)k), m->prov_share[k]);
	cJSON_AddNumberToObject(o, "estimate_s", x->est_s);
	if (r->price > 0)
		cJSON_AddNumberToObject(o, "usd_per_million_tokens", x->usd_per_mtok);
	cJSON_AddStringToObject(o, "why_not_first", x->why);
	cJSON_AddNumberToObject(o, "uncertainty", x->uncertainty);
	if (isfinite(m->step_lo_s) && isfinite(m->step_hi_s)) {
		double v[2] = {m->step_lo_s, m->step_hi_s};
		cJSON_AddItemToObject(o, "step_time_interval_s", cJSON_CreateDoubleArray(v, 2));
	}
	cJSON_AddBoolToObject(o, "tie", x->tie);
	cJSON_AddStringToObject(o, "framework", x->framework ? x->framework->name : "");
	return o;
}

cJSON *
plan_train_json(const plan_train_result *r)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "kind", "plan-train");
	cJSON_AddStringToObject(o, "model", r->model);
	cJSON_AddStringToObject(o, "system", r->system);
	cJSON_AddStringToObject(o, "gpu", r->sys.gpu.name);
	cJSON_AddNumberToObject(o, "gpus_per_node", r->sys.gpus_per_node);
	cJSON_AddNumberToObject(o, "global_batch", (double)r->global_batch);
	cJSON_AddNumberToObject(o, "seq", (double)r->seq);
	cJSON_AddNumberToObject(o, "tokens_per_step", (double)r->global_batch * (double)r->seq);
	cJSON_AddStringToObject(o, "objective", r->objective == PLAN_COST ? "cost" : "time");
	if (r->price > 0) {
		cJSON_AddNumberToObject(o, "price_usd_per_gpu_hour", r->price);
		cJSON_AddStringToObject(o, "price_source", r->price_source);
	}
	cJSON_AddNumberToObject(o, "memory_headroom", r->memory_headroom);
	if (r->framework != NULL)
		cJSON_AddStringToObject(o, "framework", r->framework->name);
	cJSON_AddBoolToObject(o, "interrupted", r->interrupted);
	cJSON *counts = cJSON_AddArrayToObject(o, "counts");
	cJSON *pareto = cJSON_CreateArray();
	for (size_t i = 0; i < r->ncounts; i++) {
		const plan_count_result *pc = &r->counts[i];
		cJSON *x = cJSON_CreateObject();
		cJSON_AddNumberToObject(x, "gpus", pc->gpus);
		cJSON_AddNumberToObject(x, "enumerated", (double)pc->enumerated);
		cJSON_AddNumberToObject(x, "invalid", (double)pc->invalid);
		cJSON_AddNumberToObject(x, "out_of_memory", (double)pc->oom);
		cJSON_AddNumberToObject(x, "estimated", (double)pc->estimated);
		cJSON_AddNumberToObject(x, "simulated", (double)pc->simulated);
		if (pc->nbest == 0 && pc->sim_failed[0] != '\0')
			cJSON_AddStringToObject(x, "simulation_failed", pc->sim_failed);
		if (pc->nbest == 0 && pc->oom > 0) {
			cJSON_AddNumberToObject(x, "smallest_footprint_bytes", pc->min_oom_bytes);
			cJSON_AddNumberToObject(x, "capacity_bytes", pc->capacity);
			cJSON_AddNumberToObject(x, "memory_limit_bytes", pc->capacity * (1.0 - r->memory_headroom));
		} else if (pc->nbest == 0 && pc->invalid_reason[0] != '\0') {
			cJSON_AddStringToObject(x, "invalid_reason", pc->invalid_reason);
		}
		cJSON *arr = cJSON_AddArrayToObject(x, "candidates");
		for (size_t k = 0; k < pc->nbest; k++)
			cJSON_AddItemToArray(arr, cand_json(&pc->cands[k], (int)k + 1, r));
		cJSON_AddItemToArray(counts, x);
	}
	/* Pareto front of time and cost over every simulated candidate of every GPU count: a
	 * point stays when no other is both faster and cheaper. */
	if (r->price > 0) {
		for (size_t i = 0; i < r->ncounts; i++) {
			const plan_count_result *pc = &r->counts[i];
			for (size_t k = 0; k < pc->nbest; k++) {
				const plan_cand *a = &pc->cands[k];
				bool dominated = false;
				for (size_t j = 0; j < r->ncounts && !dominated; j++)
					for (size_t l = 0; l < r->counts[j].nbest && !dominated; l++) {
						const plan_cand *b = &r->counts[j].cands[l];
						if (b == a)
							continue;
						bool le = b->step_s <= a->step_s && b->usd_per_mtok <= a->usd_per_mtok;
						bool lt = b->step_s < a->step_s || b->usd_per_mtok < a->usd_per_mtok;
						dominated = le && lt;
					}
				if (dominated)
					continue;
				cJSON *p = cJSON_CreateObject();
				char key[128];
				plan_key(&a->cfg, key, sizeof key);
				cJSON_AddNumberToObject(p, "gpus", pc->gpus);
				cJSON_AddStringToObject(p, "key", key);
				cJSON_AddNumberToObject(p, "step_time_s", a->step_s);
				cJSON_AddNumberToObject(p, "tokens_per_s", a->metrics.tokens_per_s);
				cJSON_AddNumberToObject(p, "usd_per_million_tokens", a->usd_per_mtok);
				cJSON_AddItemToArray(pareto, p);
			}
		}
	}
	cJSON_AddItemToObject(o, "pareto", pareto);
	if (r->ncounts > 1) {
		/* scaling: throughput of each count's best, efficiency against the smallest count */
		cJSON *sc = cJSON_AddArrayToObject(o, "scaling");
		double base = 0.0;
		int base_gpus = 0;
		for (size_t i = 0; i < r->ncounts; i++) {
			const plan_count_result *pc = &r->counts[i];
			if (pc->nbest == 0)
				continue;
			double tps = pc->cands[0].metrics.tokens_per_s;
			if (base_gpus == 0) {
				base = tps / (double)pc->gpus;
				base_gpus = pc->gpus;
			}
			cJSON *p = cJSON_CreateObject();
			cJSON_AddNumberToObject(p, "gpus", pc->gpus);
			cJSON_AddNumberToObject(p, "tokens_per_s", tps);
			cJSON_AddNumberToObject(p, "tokens_per_s_per_gpu", tps / (double)pc->gpus);
			cJSON_AddNumberToObject(p, "efficiency", base > 0 ? tps / (double)pc->gpus / base : 0.0);
			cJSON_AddNumberToObject(p, "step_time_s", pc->cands[0].step_s);
			if (r->price > 0)
				cJSON_AddNumberToObject(p, "usd_per_million_tokens", pc->cands[0].usd_per_mtok);
			cJSON_AddItemToArray(sc, p);
		}
	}
	const sim_train_cfg *w = plan_train_winner(r);
	if (w != NULL) {
		cJSON *win = cJSON_AddObjectToObject(o, "winner");
		cJSON_AddItemToObject(win, "config", sim_train_cfg_json(w, w->seq));
		cJSON_AddNumberToObject(win, "step_time_s", r->counts[0].cands[0].step_s);
	}
	/* The inputs of a cost table under every price (reports compute it with planner/cost.c):
	 * rentals per GPU-hour, purchases per GPU, and the terms of owning. */
	cJSON *prices = cJSON_AddArrayToObject(o, "prices");
	for (size_t i = 0; i < r->nprices; i++) {
		const hw_price *p = &r->prices[i];
		if (!(p->usd_per_gpu_hour > 0) && !(p->usd_per_gpu > 0))
			continue;
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "provider", p->provider);
		cJSON_AddStringToObject(x, "kind", p->kind);
		cJSON_AddStringToObject(x, "date", p->date);
		if (p->usd_per_gpu_hour > 0)
			cJSON_AddNumberToObject(x, "usd_per_gpu_hour", p->usd_per_gpu_hour);
		else
			cJSON_AddNumberToObject(x, "usd_per_gpu", p->usd_per_gpu);
		cJSON_AddStringToObject(x, "source", p->source);
		cJSON_AddItemToArray(prices, x);
	}
	cJSON *own = cJSON_AddObjectToObject(o, "ownership");
	cJSON_AddNumberToObject(own, "life_years", r->life_years);
	cJSON_AddNumberToObject(own, "pue", r->pue);
	cJSON_AddNumberToObject(own, "usd_per_kwh", r->usd_per_kwh);
	cJSON_AddNumberToObject(own, "node_power_kw", r->sys.node_power_kw > 0 ? r->sys.node_power_kw : 0.0);
	return o;
}
