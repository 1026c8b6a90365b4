/*
 * serve.c -- serving rows to runs: static batches and closed-loop concurrency runs of a model on
 * a GPU with a TP degree, their throughput and latencies against what was measured, and the
 * fit of a system's serving parameters (iteration overhead, small all-reduce latency) to them.
 */
#include "config.h"
#include "calibrate/cal.h"
#include "common/csv.h"
#include "sim/sim.h"
#include "validate/val_int.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- serving ------------------------------------------------------------------------------- */

/* Rows of validate/data/published-serving.csv: a model, GPU and TP degree, an engine scenario
 * ("batch N": N requests at once, as a static batch; "concurrency N": a closed loop of N
 * outstanding requests), input and output lengths, and the measured metric (output tokens/s,
 * mean end-to-end latency, TTFT, TPOT).  A row without a TP degree runs one replica over all
 * its GPUs. */
static const char *
serve_model_of(const char *name)
{
	if (val_has(name, "Llama-2-70B"))
		return "llama-2-70b";
	if (val_has(name, "70B"))
		return "llama-3-70b"; /* Llama 3 and 3.1 70B share their dimensions */
	if (val_has(name, "8B"))
		return "llama-3-8b";
	return NULL;
}

static bool
listed(const char *const *names, const char *name)
{
	if (names == NULL)
		return true;
	for (int i = 0; names[i]; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

/* The serving report over the rows run on `systems` (NULL: all rows). */
static int
serving_report(hw_db *db, const char *text, size_t len, const char *origin, const char *const *systems, bool simulate,
	       cJSON **out, char *err, size_t errlen)
{
	*out = NULL;
	pp_csv t;
	int rc = pp_csv_parse(text, len, origin, &t, err, errlen);
	if (rc != 0)
		return rc;
	static const char *const sc[] = {"source", "model", "gpu", "num_gpus", "tp", "precision", "scenario", "input_len",
					 "output_len", "measured_metric", "measured_value", "unit", NULL};
	int col[12];
	for (int i = 0; sc[i]; i++)
		if ((col[i] = pp_csv_column(&t, sc[i])) < 0) {
			pp_csv_free(&t);
			return pp_err(err, errlen, PP_EINPUT, "%s: missing column \"%s\"", origin, sc[i]);
		}
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "kind", "validate");
	cJSON_AddStringToObject(doc, "set", "serving");
	cJSON_AddStringToObject(doc, "data", origin);
	cJSON *rows = cJSON_AddArrayToObject(doc, "rows");
	cJSON *skipped = cJSON_AddArrayToObject(doc, "skipped");
	for (size_t r = 1; r < t.nrows; r++) {
		const char *src = pp_csv_get(&t, r, col[0]), *mname = pp_csv_get(&t, r, col[1]);
		const char *gpu = pp_csv_get(&t, r, col[2]), *metric = pp_csv_get(&t, r, col[9]);
		const char *scen = pp_csv_get(&t, r, col[6]), *prec = pp_csv_get(&t, r, col[5]);
		char why[160] = "";
		double measured = 0;
		int64_t gpus = 0, tp = 0, in = 0, outl = 0;
		const char *cat = serve_model_of(mname);
		const char *system = val_has(gpu, "H200") ? "hgx-h200" : val_has(gpu, "H100") ? "dgx-h100" : NULL;
		pp_parse_i64(pp_csv_get(&t, r, col[3]), &gpus);
		if (pp_parse_i64(pp_csv_get(&t, r, col[4]), &tp) != 0)
			tp = gpus;
		pp_parse_i64(pp_csv_get(&t, r, col[7]), &in);
		pp_parse_i64(pp_csv_get(&t, r, col[8]), &outl);
		if (pp_parse_double(pp_csv_get(&t, r, col[10]), &measured) != 0 || !(measured > 0))
			snprintf(why, sizeof why, "the measured value is not a positive number");
		else if (cat == NULL)
			snprintf(why, sizeof why, "model \"%s\" is not in the catalog", mname);
		else if (system == NULL)
			snprintf(why, sizeof why, "the GPU is not in the hardware database");
		else if (tp < 1 || in < 1 || outl < 1)
			snprintf(why, sizeof why, "the TP degree or lengths are not stated");
		else if (tp > 1024 || in > 10000000 || outl > 10000000)
			snprintf(why, sizeof why, "the TP degree or lengths are out of range");
		if (system != NULL && !listed(systems, system))
			continue;
		sim_serve_cfg c;
		sim_serve_cfg_init(&c);
		int64_t conc = 0;
		const char *bp = strstr(scen, "batch ");
		const char *cp = strstr(scen, "concurrency ");
		if (why[0] == '\0') {
			/* strtoll, not atoll: a long run of digits saturates instead of overflowing */
			if (bp != NULL)
				conc = strtoll(bp + 6, NULL, 10);
			else if (cp != NULL)
				conc = strtoll(cp + 12, NULL, 10);
			if (conc < 1 || conc > 100000)
				snprintf(why, sizeof why, "the scenario \"%.60s\" is not a batch or a concurrency from 1 to 100000",
					 scen);
		}
		if (why[0]) {
			cJSON *x = cJSON_CreateObject();
			cJSON_AddNumberToObject(x, "line", (double)t.lines[r]);
			cJSON_AddStringToObject(x, "source", src);
			cJSON_AddStringToObject(x, "model", mname);
			cJSON_AddStringToObject(x, "metric", metric);
			cJSON_AddStringToObject(x, "reason", why);
			cJSON_AddItemToArray(skipped, x);
			continue;
		}
		c.tp = (int)tp;
		c.prompt.kind = c.output.kind = SIM_DIST_FIXED;
		c.prompt.mean = (double)in;
		c.output.mean = (double)outl;
		if (val_has(prec, "fp8")) {
			c.weights = HW_FP8;
			c.kv_dtype = HW_FP8;
		}
		if (bp != NULL) {
			/* a static batch: all of it at once, one iteration loop over the whole batch */
			c.arrival = SIM_ARR_BATCH;
			c.requests = conc;
			c.max_num_seqs = (int)conc;
		} else {
			c.arrival = SIM_ARR_CLOSED;
			c.arrival_param = (double)conc;
			c.requests = conc * 8;
		}
		if (c.max_batched_tokens < in)
			c.max_batched_tokens = in;
		model *m;
		hw_cost *cost;
		sim_serve_result *res = NULL;
		if ((rc = model_load(cat, &m, err, errlen)) != 0)
			goto fail;
		if ((rc = hw_cost_new(db, system, &cost, err, errlen)) != 0) {
			model_free(m);
			goto fail;
		}
		char e2[512];
		if (simulate)
			rc = sim_serve(m, cost, &c, &res, e2, sizeof e2);
		else
			rc = sim_serve_check(m, hw_cost_system(cost), &c, NULL, NULL, e2, sizeof e2);
		hw_cost_free(cost);
		model_free(m);
		if (rc == PP_EUSAGE) {
			cJSON *x = cJSON_CreateObject();
			cJSON_AddNumberToObject(x, "line", (double)t.lines[r]);
			cJSON_AddStringToObject(x, "source", src);
			cJSON_AddStringToObject(x, "model", mname);
			cJSON_AddStringToObject(x, "metric", metric);
			cJSON_AddStringToObject(x, "reason", e2);
			cJSON_AddItemToArray(skipped, x);
			rc = 0;
			continue;
		}
		if (rc != 0) {
			pp_err(err, errlen, rc, "%s", e2);
			goto fail;
		}
		if (!simulate)
			continue;
		const sim_serve_metrics *mt = sim_serve_get_metrics(res);
		double pred;
		if (val_has(metric, "output tokens/s"))
			pred = mt->output_tokens_per_s;
		else if (val_has(metric, "end-to-end"))
			pred = mt->e2e.mean * 1e3;
		else if (!strcmp(metric, "TTFT"))
			pred = mt->ttft.mean * 1e3;
		else if (!strcmp(metric, "TPOT"))
			pred = mt->tpot.mean * 1e3;
		else
			pred = -1;
		sim_serve_result_free(res);
		if (pred < 0)
			continue;
		cJSON *x = cJSON_CreateObject();
		char key[96];
		val_source_key(src, key, sizeof key);
		cJSON_AddNumberToObject(x, "line", (double)t.lines[r]);
		cJSON_AddStringToObject(x, "source", key);
		char fam[64];
		val_family_key(src, fam, sizeof fam);
		cJSON_AddStringToObject(x, "family", fam);
		cJSON_AddStringToObject(x, "model", mname);
		cJSON_AddStringToObject(x, "system", system);
		cJSON_AddStringToObject(x, "metric", metric);
		cJSON_AddStringToObject(x, "unit", pp_csv_get(&t, r, col[11]));
		cJSON_AddNumberToObject(x, "measured", measured);
		cJSON_AddNumberToObject(x, "predicted", pred);
		cJSON_AddNumberToObject(x, "error", (pred - measured) / measured);
		cJSON_AddNumberToObject(x, "speed_error", val_speed_error(pred, measured, !val_has(metric, "tokens/s")));
		cJSON *cf = cJSON_AddObjectToObject(x, "config");
		cJSON_AddNumberToObject(cf, "gpus", (double)gpus);
		cJSON_AddNumberToObject(cf, "tp", (double)tp);
		cJSON_AddNumberToObject(cf, "pp", 1);
		cJSON_AddNumberToObject(cf, "dp", 1);
		cJSON_AddNumberToObject(cf, "vpp", 1);
		cJSON_AddNumberToObject(cf, "micro_batch", (double)conc);
		cJSON_AddStringToObject(x, "assumptions", pp_csv_get(&t, r, col[4])[0] ? "" : "TP not stated: one replica over all GPUs");
		cJSON_AddItemToArray(rows, x);
	}
	val_summarize(doc, rows, skipped);
	pp_csv_free(&t);
	*out = doc;
	return 0;
fail:
	pp_csv_free(&t);
	cJSON_Delete(doc);
	return rc;
}


int
val_serving(hw_db *db, const char *text, size_t len, const char *origin, cJSON **out, char *err, size_t errlen)
{
	return serving_report(db, text, len, origin, NULL, true, out, err, errlen);
}

int
val_serving_rows(hw_db *db, const char *text, size_t len, const char *origin, cJSON **out, char *err, size_t errlen)
{
	return serving_report(db, text, len, origin, NULL, false, out, err, errlen);
}

/* ---- the serving fit ------------------------------------------------------------------------ *
 * Per system, what a decode step costs beyond its kernels: the engine's iteration overhead and
 * the latency of its small tensor-parallel all-reduce.  Each evaluation stores the values in the
 * database inside a savepoint that is rolled back at the end: the database is left as it was. */

static const struct { const char *key; double lo, hi; } serve_params[] = {
	{"iter_overhead_s", 1e-4, 1e-2},
	{"serve_allreduce_us", 2.0, 80.0},
};
#define NSERVE (sizeof serve_params / sizeof serve_params[0])

typedef struct servectx {
	hw_db *db;
	const char *text, *origin;
	size_t len;
	const char *const *systems;
	int rc;
	char err[512];
} servectx;

static double
serve_objective(const double *x, void *arg)
{
	servectx *c = arg;
	if (c->rc != 0)
		return 1e9;
	for (int g = 0; c->systems[g]; g++)
		for (size_t k = 0; k < NSERVE; k++)
			if ((c->rc = hw_param_set(c->db, "system", c->systems[g], serve_params[k].key, x[k], "fitted",
						  "fit in progress", c->origin, 0, c->err, sizeof c->err)) != 0)
				return 1e9;
	cJSON *doc;
	if ((c->rc = serving_report(c->db, c->text, c->len, c->origin, c->systems, true, &doc, c->err, sizeof c->err)) != 0)
		return 1e9;
	double m = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "overall"), "mape")->valuedouble;
	cJSON_Delete(doc);
	return m;
}

int
val_serving_fit(hw_db *db, const char *text, size_t len, const char *origin, const char *const *systems, int max_evals,
		cJSON **out, char *err, size_t errlen)
{
	*out = NULL;
	if (hw_readonly(db))
		return pp_err(err, errlen, PP_EIO, "%s: database is read-only: fitting writes parameters", hw_path(db));
	cJSON *doc;
	int rc = serving_report(db, text, len, origin, systems, true, &doc, err, errlen);
	if (rc != 0)
		return rc;
	const cJSON *ov = cJSON_GetObjectItem(doc, "overall");
	int rows = cJSON_GetObjectItem(ov, "rows")->valueint;
	double before = cJSON_GetObjectItem(ov, "mape")->valuedouble;
	cJSON_Delete(doc);
	if (rows == 0)
		return pp_err(err, errlen, PP_EUSAGE, "no serving rows run on %s", systems[0]);
	/* start from the values in use on the first system */
	hw_cost *cost;
	if ((rc = hw_cost_new(db, systems[0], &cost, err, errlen)) != 0)
		return rc;
	cJSON *d = hw_cost_describe(cost);
	cal_param p[NSERVE];
	for (size_t k = 0; k < NSERVE; k++) {
		p[k].name = serve_params[k].key;
		p[k].lo = serve_params[k].lo;
		p[k].hi = serve_params[k].hi;
		p[k].start = 0.5 * (p[k].lo + p[k].hi);
		const cJSON *it;
		cJSON_ArrayForEach(it, cJSON_GetObjectItem(d, "parameters"))
		{
			if (!strcmp(cJSON_GetObjectItem(it, "key")->valuestring, p[k].name))
				p[k].start = cJSON_GetObjectItem(it, "value")->valuedouble;
		}
		if (p[k].start < p[k].lo)
			p[k].start = p[k].lo;
		if (p[k].start > p[k].hi)
			p[k].start = p[k].hi;
	}
	cJSON_Delete(d);
	hw_cost_free(cost);
	if ((rc = hw_exec_simple(db, "SAVEPOINT paraplan_fit", err, errlen)) != 0)
		return rc;
	servectx c = {db, text, origin, len, systems, 0, ""};
	double best[NSERVE], after;
	int evals = 0;
	rc = cal_minimize(p, NSERVE, serve_objective, &c, max_evals, best, &after, &evals, err, errlen);
	hw_exec_simple(db, "ROLLBACK TO paraplan_fit", NULL, 0);
	hw_exec_simple(db, "RELEASE paraplan_fit", NULL, 0);
	if (rc == 0 && c.rc != 0)
		rc = pp_err(err, errlen, c.rc, "%s", c.err);
	if (rc != 0)
		return rc;
	if (after > before)
		after = before;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "scope", "system");
	cJSON *gl = cJSON_AddArrayToObject(o, "systems");
	for (int g = 0; systems[g]; g++)
		cJSON_AddItemToArray(gl, cJSON_CreateString(systems[g]));
	cJSON_AddStringToObject(o, "data", origin);
	cJSON_AddNumberToObject(o, "rows", rows);
	cJSON_AddNumberToObject(o, "mape_before", before);
	cJSON_AddNumberToObject(o, "mape_after", after);
	cJSON_AddNumberToObject(o, "evaluations", evals);
	char method[200];
	snprintf(method, sizeof method,
		 "fitted by 'paraplan validate --fit': Nelder-Mead on MAPE over %d rows of %s (%.1f%% -> %.1f%%)", rows,
		 origin, 100.0 * before, 100.0 * after);
	cJSON_AddStringToObject(o, "method", method);
	cJSON *pa = cJSON_AddObjectToObject(o, "parameters");
	for (size_t k = 0; k < NSERVE; k++)
		cJSON_AddNumberToObject(pa, p[k].name, best[k]);
	*out = o;
	return 0;
}
