/*
 * capacity.c -- capacity planning: the smallest cluster of each system that trains a number of
 * tokens within a number of days, and what it costs to rent or to buy.
 *
 * For each system the node count doubles until the best layout (plan_train at that size)
 * meets the deadline, then a bisection over whole nodes finds the smallest count that does.
 * Rent: GPU-hours times each of the system's rental prices.  Buy: the purchase price amortized
 * linearly over its life for the days the training takes, plus energy: node power x PUE x
 * price per kWh x hours (planner/cost.c holds the arithmetic).
 */
#include "config.h"
#include "planner/plan_int.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
plan_capacity_opts_init(plan_capacity_opts *o)
{
	memset(o, 0, sizeof *o);
	o->life_years = PLAN_LIFE_YEARS;
	o->usd_per_kwh = PLAN_USD_PER_KWH;
	o->pue = PLAN_PUE;
	o->max_gpus = 65536;
}

typedef struct best_at {
	bool ok;
	double step_s;
	sim_train_cfg cfg;
	sim_metrics metrics;
} best_at;

static int
best_layout(const model *m, hw_db *db, const char *system, int gpus, const plan_capacity_opts *o, best_at *out,
	    char *err, size_t errlen)
{
	plan_train_opts po;
	plan_train_opts_init(&po);
	if (o->search != NULL)
		po = *o->search; /* pins, dtypes, headroom, framework */
	po.gpus = &gpus;
	po.ngpus = 1;
	po.global_batch = o->global_batch;
	po.seq = o->seq;
	po.fw = o->fw;
	po.top = 1;
	po.simulate = 4;
	po.jobs = o->jobs;
	po.stop = o->stop;
	po.price = 1.0; /* the price does not change the layout; avoids a lookup per count */
	po.progress = NULL;
	plan_train_result *r;
	memset(out, 0, sizeof *out);
	int rc = plan_train(m, db, system, &po, &r, err, errlen);
	if (rc != 0)
		return rc;
	const plan_count_result *pc = &r->counts[0];
	if (pc->nbest > 0) {
		out->ok = true;
		out->step_s = pc->cands[0].step_s;
		out->cfg = pc->cands[0].cfg;
		out->metrics = pc->cands[0].metrics;
	}
	plan_train_result_free(r);
	return 0;
}

static double
days_for(const plan_capacity_opts *o, double step_s)
{
	double tokens_per_step = (double)o->global_batch * (double)o->seq;
	return o->tokens / tokens_per_step * step_s / 86400.0;
}

static cJSON *
plan_system(const model *m, hw_db *db, const char *system, const plan_capacity_opts *o, size_t *done, size_t total,
	    char *err, size_t errlen, int *rcp)
{
	hw_system sys;
	*rcp = hw_system_get(db, system, &sys, err, errlen);
	if (*rcp != 0)
		return NULL;
	int gpn = sys.gpus_per_node > 0 ? sys.gpus_per_node : 1;
	cJSON *x = cJSON_CreateObject();
	cJSON_AddStringToObject(x, "system", system);
	cJSON_AddStringToObject(x, "gpu", sys.gpu.name);
	/* doubling */
	best_at lo_b = {0}, hi_b = {0};
	int lo = 0, hi = 0;
	for (int nodes = 1; nodes * gpn <= o->max_gpus; nodes *= 2) {
		best_at b;
		if ((*rcp = best_layout(m, db, system, nodes * gpn, o, &b, err, errlen)) != 0) {
			cJSON_Delete(x);
			return NULL;
		}
		(*done)++;
		if (o->progress)
			o->progress(o->progress_arg, *done, total);
		if (b.ok && days_for(o, b.step_s) <= o->days) {
			hi = nodes;
			hi_b = b;
			break;
		}
		lo = nodes;
		lo_b = b;
		if (o->stop && *o->stop)
			break;
	}
	(void)lo_b;
	if (hi == 0) {
		cJSON_AddBoolToObject(x, "feasible", false);
		char why[160];
		snprintf(why, sizeof why, "no layout on up to %d GPUs trains %.3g tokens in %.3g days", o->max_gpus, o->tokens,
			 o->days);
		cJSON_AddStringToObject(x, "reason", why);
		return x;
	}
	/* bisection over whole nodes between the last count that missed and the first that met */
	while (hi - lo > 1 && !(o->stop && *o->stop)) {
		int mid = lo + (hi - lo) / 2;
		best_at b;
		if ((*rcp = best_layout(m, db, system, mid * gpn, o, &b, err, errlen)) != 0) {
			cJSON_Delete(x);
			return NULL;
		}
		(*done)++;
		if (b.ok && days_for(o, b.step_s) <= o->days) {
			hi = mid;
			hi_b = b;
		} else {
			lo = mid;
		}
	}
	int gpus = hi * gpn;
	double days = days_for(o, hi_b.step_s);
	double hours = days * 24.0;
	cJSON_AddBoolToObject(x, "feasible", true);
	cJSON_AddNumberToObject(x, "gpus", gpus);
	cJSON_AddNumberToObject(x, "nodes", hi);
	cJSON_AddNumberToObject(x, "days", days);
	cJSON_AddNumberToObject(x, "gpu_hours", hours * gpus);
	cJSON_AddNumberToObject(x, "step_time_s", hi_b.step_s);
	cJSON_AddNumberToObject(x, "tokens_per_s", hi_b.metrics.tokens_per_s);
	cJSON_AddNumberToObject(x, "mfu", hi_b.metrics.mfu);
	cJSON_AddItemToObject(x, "config", sim_train_cfg_json(&hi_b.cfg, hi_b.cfg.seq));
	/* rent at every rental price of the system; buy at its purchase price */
	hw_price *pr;
	size_t np;
	cJSON *rent = cJSON_AddArrayToObject(x, "rent");
	if (hw_prices(db, system, &pr, &np, NULL, 0) == 0) {
		const hw_price *buy = NULL;
		for (size_t i = 0; i < np; i++) {
			if (pr[i].usd_per_gpu_hour > 0) {
				cJSON *r = cJSON_CreateObject();
				cJSON_AddStringToObject(r, "provider", pr[i].provider);
				cJSON_AddStringToObject(r, "kind", pr[i].kind);
				cJSON_AddStringToObject(r, "date", pr[i].date);
				cJSON_AddNumberToObject(r, "usd_per_gpu_hour", pr[i].usd_per_gpu_hour);
				double usd = plan_rent_usd(pr[i].usd_per_gpu_hour, gpus, hours);
				cJSON_AddNumberToObject(r, "total_usd", usd);
				cJSON_AddNumberToObject(r, "usd_per_million_tokens", plan_usd_per_mtok(usd, o->tokens));
				cJSON_AddStringToObject(r, "source", pr[i].source);
				cJSON_AddItemToArray(rent, r);
			} else if (pr[i].usd_per_gpu > 0 && buy == NULL) {
				buy = &pr[i]; /* newest purchase price */
			}
		}
		cJSON *b = cJSON_AddObjectToObject(x, "buy");
		if (buy != NULL) {
			double capex = buy->usd_per_gpu * gpus;
			double kw = sys.node_power_kw > 0 ? sys.node_power_kw : 0.0;
			plan_own own = {buy->usd_per_gpu, o->life_years, kw, gpn, o->pue, o->usd_per_kwh};
			double amortized, energy;
			plan_own_usd(&own, gpus, hours, &amortized, &energy);
			cJSON_AddNumberToObject(b, "usd_per_gpu", buy->usd_per_gpu);
			cJSON_AddStringToObject(b, "price_date", buy->date);
			cJSON_AddStringToObject(b, "price_source", buy->source);
			cJSON_AddNumberToObject(b, "purchase_usd", capex);
			cJSON_AddNumberToObject(b, "life_years", o->life_years);
			cJSON_AddNumberToObject(b, "amortized_usd", amortized);
			cJSON_AddNumberToObject(b, "node_power_kw", kw);
			cJSON_AddNumberToObject(b, "pue", o->pue);
			cJSON_AddNumberToObject(b, "usd_per_kwh", o->usd_per_kwh);
			cJSON_AddNumberToObject(b, "energy_usd", energy);
			cJSON_AddNumberToObject(b, "total_usd", amortized + energy);
			cJSON_AddNumberToObject(b, "usd_per_million_tokens", plan_usd_per_mtok(amortized + energy, o->tokens));
			if (!(kw > 0))
				cJSON_AddStringToObject(b, "note", "no node power figure for this system: energy not counted");
		} else {
			cJSON_AddStringToObject(b, "note", "no purchase price for this system or its GPU in the database");
		}
		free(pr);
	}
	return x;
}

int
plan_capacity(const model *m, hw_db *db, const char *const *systems, size_t nsystems, const plan_capacity_opts *o,
	      cJSON **out, char *err, size_t errlen)
{
	*out = NULL;
	if (!(o->tokens > 0) || !(o->days > 0))
		return pp_err(err, errlen, PP_EUSAGE, "--tokens and --days must be positive");
	if (o->global_batch <= 0 || o->seq <= 0)
		return pp_err(err, errlen, PP_EUSAGE, "capacity planning needs --global-batch (and the model's sequence length)");
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "kind", "plan-capacity");
	cJSON_AddStringToObject(doc, "model", model_name(m));
	cJSON_AddNumberToObject(doc, "tokens", o->tokens);
	cJSON_AddNumberToObject(doc, "days", o->days);
	cJSON_AddNumberToObject(doc, "global_batch", (double)o->global_batch);
	cJSON_AddNumberToObject(doc, "seq", (double)o->seq);
	cJSON *arr = cJSON_AddArrayToObject(doc, "systems");
	size_t done = 0, total = nsystems * 12;
	for (size_t i = 0; i < nsystems; i++) {
		int rc = 0;
		cJSON *x = plan_system(m, db, systems[i], o, &done, total, err, errlen, &rc);
		if (x == NULL) {
			cJSON_Delete(doc);
			return rc == PP_ENOTFOUND ? PP_EUSAGE : rc;
		}
		cJSON_AddItemToArray(arr, x);
		if (o->stop && *o->stop) {
			cJSON_AddBoolToObject(doc, "interrupted", true);
			break;
		}
	}
	*out = doc;
	return 0;
}
