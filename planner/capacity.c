/*
 * capacity.c -- capacity planning: the smallest cluster of each system that trains a number of
 * tokens within a number of days, and what it costs to rent or to buy.
 *
 * For each system the node count doubles until the best layout (plan_train at that size)
 * meets the deadline, then a bisection over whole nodes finds the smallest count that does.
 * The deadline is met with failures counted (goodput.c): the training days over the goodput of
 * that many GPUs, which falls as the cluster grows (more interruptions, each losing work and a
 * restart); the count that would do without failures is searched too and reported beside it.
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
	plan_failure_opts_init(&o->failures);
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

/* One node count evaluated: its best layout and, with failures, its goodput. */
typedef struct node_eval {
	int nodes;
	best_at b;
	plan_goodput_result g;
} node_eval;

/* Whether a count trains the tokens in the days: with failures, the training days over the
 * goodput. */
static bool
meets(const plan_capacity_opts *o, const node_eval *e, bool failures)
{
	if (!e->b.ok)
		return false;
	double d = days_for(o, e->b.step_s);
	if (failures)
		d = e->g.goodput > 0.0 ? d / e->g.goodput : INFINITY;
	return d <= o->days;
}

static const node_eval *
evaluate(const model *m, hw_db *db, const char *system, int nodes, int gpn, const plan_capacity_opts *o,
	 node_eval *cache, int *ncache, double *ckpt, size_t *done, size_t total, char *err, size_t errlen, int *rcp)
{
	for (int i = 0; i < *ncache; i++)
		if (cache[i].nodes == nodes)
			return &cache[i];
	node_eval *e = &cache[*ncache < 64 ? *ncache : 63];
	memset(e, 0, sizeof *e);
	e->nodes = nodes;
	if ((*rcp = best_layout(m, db, system, nodes * gpn, o, &e->b, err, errlen)) != 0)
		return NULL;
	(*done)++;
	if (o->progress)
		o->progress(o->progress_arg, *done, total);
	if (e->b.ok && !o->failures.off) {
		if (*ckpt < 0.0)
			*ckpt = plan_checkpoint_bytes(m, &e->b.cfg);
		if ((*rcp = plan_goodput(&o->failures, (double)nodes * gpn, *ckpt, &e->g, err, errlen)) != 0)
			return NULL;
	}
	if (*ncache < 64)
		(*ncache)++;
	return e;
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
	/* every count evaluated once, for both searches (a plan_train each) */
	node_eval cache[64];
	int ncache = 0;
	double ckpt = -1.0;
	int hi = 0, hi0 = 0;
	best_at hi_b = {0};
	plan_goodput_result hi_g = {0};
	for (int pass = 0; pass < 2; pass++) {
		bool failures = pass == 0 && !o->failures.off;
		if (pass == 1 && o->failures.off)
			break;
		int lo = 0, found = 0;
		for (int nodes = 1; nodes * gpn <= o->max_gpus; nodes *= 2) {
			const node_eval *e = evaluate(m, db, system, nodes, gpn, o, cache, &ncache, &ckpt, done, total, err, errlen, rcp);
			if (e == NULL) {
				cJSON_Delete(x);
				return NULL;
			}
			if (meets(o, e, failures)) {
				found = nodes;
				break;
			}
			lo = nodes;
			if (o->stop && *o->stop)
				break;
		}
		/* bisection over whole nodes between the last count that missed and the first that met */
		while (found > 0 && found - lo > 1 && !(o->stop && *o->stop)) {
			int mid = lo + (found - lo) / 2;
			const node_eval *e = evaluate(m, db, system, mid, gpn, o, cache, &ncache, &ckpt, done, total, err, errlen, rcp);
			if (e == NULL) {
				cJSON_Delete(x);
				return NULL;
			}
			if (meets(o, e, failures))
				found = mid;
			else
				lo = mid;
		}
		if (pass == 0) {
			hi = found;
			if (found > 0) {
				const node_eval *e = evaluate(m, db, system, found, gpn, o, cache, &ncache, &ckpt, done, total, err,
							      errlen, rcp);
				hi_b = e->b;
				hi_g = e->g;
			}
		} else {
			hi0 = found;
		}
	}
	if (hi == 0) {
		cJSON_AddBoolToObject(x, "feasible", false);
		char why[200];
		snprintf(why, sizeof why, "no layout on up to %d GPUs trains %.3g tokens in %.3g days%s", o->max_gpus, o->tokens,
			 o->days, o->failures.off ? "" : " with failures counted");
		cJSON_AddStringToObject(x, "reason", why);
		return x;
	}
	int gpus = hi * gpn;
	double days = days_for(o, hi_b.step_s) / (o->failures.off ? 1.0 : hi_g.goodput);
	double hours = days * 24.0; /* wall-clock: what is rented and powered */
	cJSON_AddBoolToObject(x, "feasible", true);
	cJSON_AddNumberToObject(x, "gpus", gpus);
	cJSON_AddNumberToObject(x, "nodes", hi);
	cJSON_AddNumberToObject(x, "days", days);
	if (!o->failures.off) {
		cJSON *f = cJSON_AddObjectToObject(x, "failures");
		cJSON_AddNumberToObject(f, "training_days", days_for(o, hi_b.step_s));
		cJSON_AddNumberToObject(f, "goodput", hi_g.goodput);
		cJSON_AddNumberToObject(f, "effective_days", days);
		cJSON_AddNumberToObject(f, "failures_per_gpu_hour", o->failures.failures_per_gpu_hour);
		cJSON_AddNumberToObject(f, "mtbf_hours", isinf(hi_g.mtbf_s) ? -1.0 : hi_g.mtbf_s / 3600.0);
		cJSON_AddNumberToObject(f, "interruptions", isinf(hi_g.mtbf_s) ? 0.0 : days * 86400.0 / hi_g.mtbf_s);
		cJSON_AddNumberToObject(f, "checkpoint_bytes", hi_g.checkpoint_bytes);
		cJSON_AddNumberToObject(f, "storage_gbps", hi_g.storage_bps / 1e9);
		cJSON_AddNumberToObject(f, "checkpoint_write_s", hi_g.write_s);
		cJSON_AddNumberToObject(f, "restart_s", hi_g.restart_s);
		cJSON_AddNumberToObject(f, "checkpoint_interval_s", hi_g.interval_s);
		cJSON_AddNumberToObject(f, "young_interval_s", isinf(hi_g.young_s) ? -1.0 : hi_g.young_s);
		cJSON_AddNumberToObject(f, "gpus_without_failures", hi0 * gpn);
		cJSON_AddStringToObject(f, "source",
					"interruptions: Llama 3 (arXiv 2407.21783) 419 in 54 days on 16,384 H100 unless set; "
					"interval and goodput: Daly 2006");
	}
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
