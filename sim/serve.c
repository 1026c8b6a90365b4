/*
 * serve.c -- the serving simulator (see serve.h for the model).
 *
 * Time here is double seconds, not the op-graph engine's picoseconds: a serving run is one
 * loop over three kinds of events (an arrival, the end of a replica's iteration, a KV cache
 * handed from a prefill to a decode replica), kept in a binary heap ordered by (time,
 * sequence number).  The iteration cost is cached by token count, so a ten-minute run at a
 * hundred requests per second costs well under a second.
 */
#include "config.h"
#include "common/csv.h"
#include "common/json.h"
#include "common/pp.h"
#include "sim/kernels_int.h"
#include "sim/sim.h"

#include <cJSON.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Limits that keep one run within memory and minutes: a request costs about 150 bytes while the
 * run lasts, and the iteration-cost caches hold one entry per token of the budget.  Ten million
 * requests is hours of traffic at a thousand requests per second. */
#define SERVE_MAX_REQUESTS 10000000
#define SERVE_MAX_TOKENS ((int64_t)1 << 22)

/* ---- distributions and arrivals ------------------------------------------------------------ */

static int
kv_number(const char *spec, const char *key, double *out)
{
	const char *p = strstr(spec, key);
	size_t kl = strlen(key);
	while (p != NULL && !((p == spec || p[-1] == ':' || p[-1] == ',') && p[kl] == '='))
		p = strstr(p + 1, key);
	if (p == NULL)
		return 0;
	char *end;
	double v = strtod(p + kl + 1, &end);
	if (end == p + kl + 1 || (*end != '\0' && *end != ',') || !isfinite(v))
		return -1;
	*out = v;
	return 1;
}

/* Whether every item of spec after its colon is key=value with one of the comma-separated
 * keys, each at most once: an item misspelt ("mx=2000") would otherwise be ignored and one
 * given twice read at its first. */
static int
kv_check(const char *spec, const char *keys, char *err, size_t errlen)
{
	const char *p = strchr(spec, ':');
	if (p == NULL || p[1] == '\0')
		return 0; /* no items: the caller says which it needs */
	char list[96];
	snprintf(list, sizeof list, ",%s,", keys);
	for (p++;; p++) {
		size_t n = strcspn(p, ","), kl = strcspn(p, "=,");
		char key[36]; /* ",KEY," then ",KEY=" */
		if (kl > 0 && kl < 32)
			snprintf(key, sizeof key, ",%.*s,", (int)kl, p);
		if (p[kl] != '=' || kl == 0 || kl >= 32 || strstr(list, key) == NULL)
			return pp_err(err, errlen, PP_EUSAGE, "\"%s\": \"%.*s\" is not KEY=VALUE with KEY one of %s", spec,
				      (int)n, p, keys);
		key[kl + 1] = '=';
		if (strstr(p + n, key) != NULL)
			return pp_err(err, errlen, PP_EUSAGE, "\"%s\": %.*s is given twice", spec, (int)kl, p);
		p += n;
		if (*p == '\0')
			return 0;
	}
}

int
sim_dist_parse(const char *s, sim_dist *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	double v;
	if (pp_parse_double(s, &v) == 0) {
		if (!(v >= 1) || v > 1e7 || v != floor(v))
			return pp_err(err, errlen, PP_EUSAGE, "a fixed length must be an integer from 1 to 10000000, got \"%s\"", s);
		out->kind = SIM_DIST_FIXED;
		out->mean = v;
		return 0;
	}
	const char *colon = strchr(s, ':');
	size_t nl = colon ? (size_t)(colon - s) : strlen(s);
	double mean = 0, a = 0, b = 0, mx = 0;
	int rc;
	if ((rc = kv_number(s, "max", &mx)) < 0 || (rc == 1 && !(mx >= 1)))
		return pp_err(err, errlen, PP_EUSAGE, "\"%s\": max must be a number of at least 1", s);
	out->max = mx;
	if (nl == 7 && !strncmp(s, "uniform", 7)) {
		if ((rc = kv_check(s, "min,max", err, errlen)) != 0)
			return rc;
		if (kv_number(s, "min", &a) != 1 || kv_number(s, "max", &b) != 1 || !(a >= 1) || !(b >= a))
			return pp_err(err, errlen, PP_EUSAGE, "\"%s\": expected uniform:min=A,max=B with 1 <= A <= B", s);
		out->kind = SIM_DIST_UNIFORM;
		out->a = a;
		out->b = b;
		out->mean = (a + b) / 2;
		out->max = 0;
		return 0;
	}
	if (nl == 9 && !strncmp(s, "lognormal", 9)) {
		double sigma;
		if ((rc = kv_check(s, "mean,sigma,max", err, errlen)) != 0)
			return rc;
		if (kv_number(s, "mean", &mean) != 1 || kv_number(s, "sigma", &sigma) != 1 || !(mean >= 1) || !(sigma > 0) ||
		    sigma > 5)
			return pp_err(err, errlen, PP_EUSAGE,
				      "\"%s\": expected lognormal:mean=M,sigma=S with M >= 1 and 0 < S <= 5", s);
		out->kind = SIM_DIST_LOGNORMAL;
		out->mean = mean;
		out->b = sigma;
		out->a = log(mean) - sigma * sigma / 2.0; /* so that the distribution's mean is M */
		return 0;
	}
	if (nl == 11 && !strncmp(s, "exponential", 11)) {
		if ((rc = kv_check(s, "mean,max", err, errlen)) != 0)
			return rc;
		if (kv_number(s, "mean", &mean) != 1 || !(mean >= 1))
			return pp_err(err, errlen, PP_EUSAGE, "\"%s\": expected exponential:mean=M with M >= 1", s);
		out->kind = SIM_DIST_EXPONENTIAL;
		out->mean = mean;
		return 0;
	}
	if (nl == 5 && !strncmp(s, "gamma", 5)) {
		double cv;
		if ((rc = kv_check(s, "mean,cv,max", err, errlen)) != 0)
			return rc;
		if (kv_number(s, "mean", &mean) != 1 || kv_number(s, "cv", &cv) != 1 || !(mean >= 1) || !(cv > 0) || cv > 20)
			return pp_err(err, errlen, PP_EUSAGE, "\"%s\": expected gamma:mean=M,cv=C with M >= 1 and 0 < C <= 20", s);
		out->kind = SIM_DIST_GAMMA;
		out->mean = mean;
		out->a = 1.0 / (cv * cv);  /* shape */
		out->b = mean / out->a;    /* scale */
		return 0;
	}
	return pp_err(err, errlen, PP_EUSAGE,
		      "\"%s\": expected a length (512) or uniform:min=,max= | lognormal:mean=,sigma= | exponential:mean= | "
		      "gamma:mean=,cv=", s);
}

static int64_t
draw(const sim_dist *d, gsl_rng *r)
{
	double v;
	switch (d->kind) {
	case SIM_DIST_UNIFORM:
		v = floor(d->a + gsl_rng_uniform(r) * (d->b - d->a + 1.0));
		break;
	case SIM_DIST_LOGNORMAL:
		v = round(gsl_ran_lognormal(r, d->a, d->b));
		break;
	case SIM_DIST_EXPONENTIAL:
		v = round(gsl_ran_exponential(r, d->mean));
		break;
	case SIM_DIST_GAMMA:
		v = round(gsl_ran_gamma(r, d->a, d->b));
		break;
	case SIM_DIST_FIXED:
	default:
		v = d->mean;
	}
	if (v < 1)
		v = 1;
	if (d->max > 0 && v > d->max)
		v = d->max;
	if (v > 1e7)
		v = 1e7;
	return (int64_t)v;
}

int
sim_arrival_parse(const char *s, sim_arrival_kind *kind, double *param, char *err, size_t errlen)
{
	*param = 0;
	if (!strcmp(s, "poisson")) {
		*kind = SIM_ARR_POISSON;
		return 0;
	}
	if (!strcmp(s, "batch")) {
		*kind = SIM_ARR_BATCH;
		return 0;
	}
	double v;
	if (!strncmp(s, "gamma:", 6)) {
		if (kv_check(s, "cv", err, errlen) != 0 || kv_number(s, "cv", &v) != 1 || !(v > 0) || v > 20)
			return pp_err(err, errlen, PP_EUSAGE, "--arrival gamma needs cv=C with 0 < C <= 20, got \"%s\"", s);
		*kind = SIM_ARR_GAMMA;
		*param = v;
		return 0;
	}
	if (!strncmp(s, "closed:", 7)) {
		if (pp_parse_double(s + 7, &v) != 0 || !(v >= 1) || v > 1e6 || v != floor(v))
			return pp_err(err, errlen, PP_EUSAGE, "--arrival closed:N needs a concurrency N from 1 to 1000000, got \"%s\"", s);
		*kind = SIM_ARR_CLOSED;
		*param = v;
		return 0;
	}
	return pp_err(err, errlen, PP_EUSAGE, "--arrival must be poisson, gamma:cv=C, batch or closed:N, got \"%s\"", s);
}

/* ---- traces -------------------------------------------------------------------------------- */

static int
add_req(sim_request **arr, size_t *n, size_t *cap, double at, double p, double o, const char *path, size_t line,
	char *err, size_t errlen)
{
	/* at most 1e9 s (31 years), as every time paraplan reads: an arrival at 1e300 s was run */
	if (!(at >= 0) || at > 1e9 || !(p >= 1) || !(o >= 1) || p > 1e7 || o > 1e7 || p != floor(p) || o != floor(o))
		return pp_err(err, errlen, PP_EINPUT,
			      "%s:%zu: arrival must be from 0 to 1e9 s and prompt/output tokens integers from 1 to 10000000",
			      path, line);
	if (*n > 0 && at < (*arr)[*n - 1].arrival_s)
		return pp_err(err, errlen, PP_EINPUT, "%s:%zu: arrival times must not decrease", path, line);
	if (PP_GROW(*arr, *cap, *n + 1) != 0)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	(*arr)[*n].arrival_s = at;
	(*arr)[*n].prompt = (int64_t)p;
	(*arr)[*n].output = (int64_t)o;
	(*n)++;
	return 0;
}

/* One JSONL line (NUL-terminated, no newline) into a request. */
static int
jsonl_req(const char *l, sim_request **arr, size_t *n, size_t *cap, const char *origin, size_t line, char *err,
	  size_t errlen)
{
	/* strict (common/json.h): "{...} junk" is an error, not a request followed by ignored text,
	 * and a key given twice is an error, not whichever copy a lookup finds */
	cJSON *o = NULL;
	int prc = pp_json_parse_at(l, strlen(l), origin, line > INT32_MAX ? INT32_MAX : (int)line, 0, &o, err, errlen);
	if (prc != 0)
		return prc;
	const cJSON *a = o ? cJSON_GetObjectItem(o, "arrival_s") : NULL;
	if (o && !a)
		a = cJSON_GetObjectItem(o, "arrival");
	const cJSON *pt = o ? cJSON_GetObjectItem(o, "prompt_tokens") : NULL;
	const cJSON *ot = o ? cJSON_GetObjectItem(o, "output_tokens") : NULL;
	int rc;
	if (!cJSON_IsObject(o) || !cJSON_IsNumber(a) || !cJSON_IsNumber(pt) || !cJSON_IsNumber(ot))
		rc = pp_err(err, errlen, PP_EINPUT,
			    "%s:%zu: expected a JSON object with numbers arrival_s, prompt_tokens, output_tokens", origin, line);
	else
		rc = add_req(arr, n, cap, a->valuedouble, pt->valuedouble, ot->valuedouble, origin, line, err, errlen);
	cJSON_Delete(o);
	return rc;
}

int
sim_trace_parse(const char *text, size_t len, const char *origin, sim_request **out, size_t *nout, char *err,
		size_t errlen)
{
	*out = NULL;
	*nout = 0;
	if (memchr(text, '\0', len) != NULL)
		return pp_err(err, errlen, PP_EINPUT, "%s: binary data, expected a CSV or JSONL request trace", origin);
	sim_request *arr = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	size_t i = 0;
	while (i < len && (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t'))
		i++;
	if (i < len && text[i] == '{') {
		/* JSONL: one object per line; blank lines count for the line numbers in messages */
		char *buf = malloc(len + 1);
		if (buf == NULL)
			return pp_err(err, errlen, PP_ENOMEM, "out of memory");
		memcpy(buf, text, len);
		buf[len] = '\0';
		size_t line = 0;
		for (char *l = buf; rc == 0 && l != NULL && l < buf + len;) {
			char *nl = strchr(l, '\n');
			if (nl != NULL)
				*nl = '\0';
			line++;
			while (*l == ' ' || *l == '\t' || *l == '\r')
				l++;
			if (*l != '\0')
				rc = jsonl_req(l, &arr, &n, &cap, origin, line, err, errlen);
			l = nl ? nl + 1 : NULL;
		}
		free(buf);
	} else {
		pp_csv t;
		if ((rc = pp_csv_parse(text, len, origin, &t, err, errlen)) != 0)
			return rc;
		if ((rc = pp_csv_header(&t, origin, err, errlen)) != 0) {
			pp_csv_free(&t);
			return rc;
		}
		int ca = pp_csv_column(&t, "arrival_s");
		if (ca < 0)
			ca = pp_csv_column(&t, "arrival");
		int cpt = pp_csv_column(&t, "prompt_tokens"), cot = pp_csv_column(&t, "output_tokens");
		if (ca < 0 || cpt < 0 || cot < 0) {
			pp_csv_free(&t);
			return pp_err(err, errlen, PP_EINPUT, "%s: the header must name arrival_s, prompt_tokens and output_tokens",
				      origin);
		}
		for (size_t r = 1; r < t.nrows; r++) {
			double a, pt, ot;
			if (t.nfields[r] > t.nfields[0]) {
				rc = pp_err(err, errlen, PP_EINPUT, "%s:%zu: %zu fields where the header names %zu", origin,
					    t.lines[r], t.nfields[r], t.nfields[0]);
				break;
			}
			if (pp_parse_double(pp_csv_get(&t, r, ca), &a) != 0 || pp_parse_double(pp_csv_get(&t, r, cpt), &pt) != 0 ||
			    pp_parse_double(pp_csv_get(&t, r, cot), &ot) != 0) {
				rc = pp_err(err, errlen, PP_EINPUT, "%s:%zu: expected numbers in arrival_s, prompt_tokens, output_tokens",
					    origin, t.lines[r]);
				break;
			}
			if ((rc = add_req(&arr, &n, &cap, a, pt, ot, origin, t.lines[r], err, errlen)) != 0)
				break;
		}
		pp_csv_free(&t);
	}
	if (rc == 0 && n == 0)
		rc = pp_err(err, errlen, PP_EINPUT, "%s: no requests in the trace", origin);
	if (rc != 0) {
		free(arr);
		return rc;
	}
	*out = arr;
	*nout = n;
	return 0;
}

int
sim_trace_load(const char *path, sim_request **out, size_t *nout, char *err, size_t errlen)
{
	*out = NULL;
	*nout = 0;
	char *text;
	size_t len;
	int rc = pp_read_text(path, (size_t)256 << 20, &text, &len, err, errlen);
	if (rc != 0)
		return rc;
	rc = sim_trace_parse(text, len, path, out, nout, err, errlen);
	free(text);
	return rc;
}

/* ---- configuration and memory -------------------------------------------------------------- */

/* The engine's parameters as the simulator uses them, from a registry default or a profile. */
static double
en_get(const hw_profile *p, hw_pkey k)
{
	return p != NULL ? hw_profile_get(p, k) : hw_pdef_get(k)->def;
}

static void
engine_fill(sim_engine *e, const hw_profile *p)
{
	memset(e, 0, sizeof *e);
	pp_strlcpy(e->name, p != NULL ? hw_profile_name(p) : "default", sizeof e->name);
	e->max_num_seqs = (int)en_get(p, HW_P_EN_MAX_NUM_SEQS);
	e->max_batched_tokens = (int64_t)en_get(p, HW_P_EN_MAX_BATCHED_TOKENS);
	e->prefill = (int)en_get(p, HW_P_EN_PREFILL);
	e->graph_max = (int64_t)en_get(p, HW_P_EN_GRAPH_MAX);
	e->graph_step = (int64_t)en_get(p, HW_P_EN_GRAPH_STEP);
	e->graph_mixed = en_get(p, HW_P_EN_GRAPH_MIXED) != 0;
	e->launch_s = en_get(p, HW_P_EN_LAUNCH_US) * 1e-6;
	e->sched_s = en_get(p, HW_P_EN_SCHED_US) * 1e-6;
	e->sched_seq_s = en_get(p, HW_P_EN_SCHED_SEQ_US) * 1e-6;
	e->overlap = en_get(p, HW_P_EN_OVERLAP) != 0;
	e->sched_steps = (int)en_get(p, HW_P_EN_SCHED_STEPS);
	e->attention = (int)en_get(p, HW_P_EN_ATTENTION);
	e->fp8_attention = en_get(p, HW_P_EN_FP8_ATTENTION) != 0;
	e->fp8_scaling = (int)en_get(p, HW_P_EN_FP8_SCALING);
	e->allreduce_us = en_get(p, HW_P_EN_ALLREDUCE_US);
	e->kv_reserve = en_get(p, HW_P_EN_KV_RESERVE);
	e->decode_gqa = en_get(p, HW_P_EN_DECODE_GQA) != 0;
	e->gemm_scale = en_get(p, HW_P_EN_GEMM_SCALE);
	e->attn_scale = en_get(p, HW_P_EN_ATTN_SCALE);
	e->decode_scale = en_get(p, HW_P_EN_DECODE_SCALE);
	static const hw_pkey ivk[3][2] = {{HW_P_EN_TPUT_P10, HW_P_EN_TPUT_P90},
					  {HW_P_EN_TTFT_P10, HW_P_EN_TTFT_P90},
					  {HW_P_EN_TPOT_P10, HW_P_EN_TPOT_P90}};
	for (int k = 0; k < 3; k++)
		for (int j = 0; j < 2; j++)
			e->iv[k][j] = en_get(p, ivk[k][j]);
	e->cap[0] = en_get(p, HW_P_EN_CAP_P10);
	e->cap[1] = en_get(p, HW_P_EN_CAP_P90);
}

void
sim_serve_interval(const sim_engine *e, sim_iv_kind k, double v, double *lo, double *hi)
{
	double p10 = e->iv[k][0], p90 = e->iv[k][1];
	bool ok = isfinite(p10) && isfinite(p90) && p10 <= p90 && v > 0;
	*lo = !ok ? NAN : k == SIM_IV_TPUT ? v * exp(-p90) : v * exp(p10);
	*hi = !ok ? NAN : k == SIM_IV_TPUT ? v * exp(-p10) : v * exp(p90);
}

bool
sim_engine_speeds(const sim_engine *e, double f[2])
{
	double p10 = e->cap[0], p90 = e->cap[1];
	if (!(isfinite(p10) && isfinite(p90) && p10 <= p90))
		return false;
	f[0] = exp(-p90), f[1] = exp(-p10);
	return true;
}

void
sim_serve_interval_banded(const sim_engine *e, sim_iv_kind k, double v, const double b[2], double *lo, double *hi)
{
	sim_serve_interval(e, k, v, lo, hi);
	if (b != NULL && b[0] > 0 && b[1] > 0 && isfinite(*lo))
		*lo = fmin(*lo, fmin(b[0], b[1])), *hi = fmax(*hi, fmax(b[0], b[1]));
}

const char *const sim_spec_names[] = {"off", "ngram", "eagle", NULL};

double
sim_spec_expected_tokens(int k, double a)
{
	if (a >= 1.0)
		return (double)k + 1.0;
	return (1.0 - pow(a, (double)k + 1.0)) / (1.0 - a);
}

void
sim_engine_default(sim_engine *e)
{
	engine_fill(e, NULL);
}

void
sim_engine_from_profile(sim_engine *e, const hw_profile *p)
{
	engine_fill(e, p);
}

/* The batch limits in force: the configuration's, else the engine's defaults. */
static int
eff_seqs(const sim_serve_cfg *c)
{
	return c->max_num_seqs > 0 ? c->max_num_seqs : c->engine.max_num_seqs;
}

const char *const sim_chunked_names[] = {"engine", "on", "off", NULL};

int
sim_serve_prefill(const sim_serve_cfg *c)
{
	int mode = c->engine.prefill;
	if (c->chunked == SIM_CHUNKED_ON)
		return HW_EN_PREFILL_CHUNKED;
	if (c->chunked == SIM_CHUNKED_OFF && mode == HW_EN_PREFILL_CHUNKED)
		return HW_EN_PREFILL_MIXED;
	return mode;
}

int64_t
sim_serve_longest_prompt(const sim_serve_cfg *c)
{
	if (c->arrival == SIM_ARR_TRACE) {
		int64_t n = 0;
		for (size_t i = 0; i < c->ntrace; i++)
			if (c->trace[i].prompt > n)
				n = c->trace[i].prompt;
		return n;
	}
	const sim_dist *d = &c->prompt;
	double v = d->kind == SIM_DIST_FIXED ? d->mean : d->kind == SIM_DIST_UNIFORM ? d->b : 0.0;
	if (d->max > 0 && (v == 0.0 || d->max < v))
		v = d->max;
	if (v > 1e7) /* as draw() caps a length */
		v = 1e7;
	return v >= 1 ? (int64_t)v : 0;
}

int64_t
sim_serve_budget(const sim_serve_cfg *c)
{
	if (c->max_batched_tokens > 0)
		return c->max_batched_tokens;
	int64_t t = c->engine.max_batched_tokens;
	if (sim_serve_prefill(c) == HW_EN_PREFILL_MIXED) {
		int64_t longest = sim_serve_longest_prompt(c);
		if (longest > t)
			t = longest;
	}
	return t;
}

void
sim_serve_cfg_init(sim_serve_cfg *c)
{
	memset(c, 0, sizeof *c);
	sim_engine_default(&c->engine);
	c->tp = c->pp = c->replicas = 1;
	c->rate = 1.0;
	c->arrival = SIM_ARR_POISSON;
	c->prompt.kind = SIM_DIST_FIXED;
	c->prompt.mean = 512;
	c->output.kind = SIM_DIST_FIXED;
	c->output.mean = 128;
	c->duration_s = 60.0;
	c->max_num_seqs = 0;             /* the engine's default */
	c->max_batched_tokens = 0;
	c->block_size = 16;              /* vLLM's default */
	c->gpu_memory_utilization = 0.9; /* vLLM's default */
	c->weights = HW_BF16;
	c->kv_dtype = HW_BF16;
	c->router = SIM_ROUTE_LEAST_OUTSTANDING;
	c->seed = 1;
}

hw_dtype
sim_serve_released_weights(const model *m, const hw_gpu *g)
{
	const model_tf *t = model_transformer(m);
	return sim_serve_weights_as(t != NULL ? t->weights : MODEL_WEIGHTS_16BIT, g);
}

hw_dtype
sim_serve_weights_as(model_weights w, const hw_gpu *g)
{
	switch (w) {
	case MODEL_WEIGHTS_FP8:
		return g->peak_tflops[HW_FP8] > 0 ? HW_FP8 : HW_INT8;
	case MODEL_WEIGHTS_MXFP4:
		return g->peak_tflops[HW_FP4] > 0 ? HW_FP4 : HW_INT4;
	case MODEL_WEIGHTS_INT4:
		return HW_INT4;
	default:
		return HW_BF16;
	}
}

static double
weight_bytes(hw_dtype t)
{
	switch (t) {
	case HW_FP8:
	case HW_INT8:
		return 1.0;
	case HW_INT4:
		return 0.5;
	case HW_FP4:
		return 0.5 + 1.0 / 16.0; /* NVFP4: E2M1 values and an FP8 scale per 16 */
	default:
		return 2.0;
	}
}

/* ---- MoE serving: expert parallelism and attention data-parallelism ------------------------ *
 *
 * A replica's tp GPUs run attention either tensor-parallel (one batch, heads split) or, with
 * attention_dp, data-parallel: D = tp ranks each with the whole attention weights, its own
 * sequences and its own KV cache, and the dense layers the same way.  The routed experts are
 * split over ep of them (E / ep experts each, shared by tp / ep ranks by TP); every MoE layer
 * sends each rank's tokens to their top_k experts' ranks (the all-to-all dispatch) and brings
 * the expert outputs back (the combine).  The busiest expert rank sets the pace. */

/* Attention's data-parallel ranks in a replica, and attention's TP degree. */
static int
att_dp(const sim_serve_cfg *c)
{
	return c->attention_dp ? c->tp : 1;
}

static int
att_tp(const sim_serve_cfg *c)
{
	return c->attention_dp ? 1 : c->tp;
}

/* A replica's batch limits: the configuration's are per attention rank. */
static int64_t
rep_seqs(const sim_serve_cfg *c)
{
	return (int64_t)c->max_num_seqs * att_dp(c);
}

static int64_t
rep_tokens(const sim_serve_cfg *c)
{
	return c->max_batched_tokens * att_dp(c);
}

/* The parameters of the routed experts of all MoE layers: E experts of (2 or 3) h f each
 * (SwiGLU: gate, up, down). */
static double
routed_expert_params(const model *m)
{
	const model_tf *t = model_transformer(m);
	if (t->experts <= 0)
		return 0.0;
	double nmoe = 0.0;
	for (int64_t l = 0; l < t->layers; l++)
		nmoe += model_layer_is_moe(m, l) ? 1.0 : 0.0;
	double mats = t->mlp == MODEL_MLP_SWIGLU ? 3.0 : 2.0;
	return nmoe * (double)t->experts * mats * (double)t->hidden * (double)t->expert_ffn;
}

double
sim_moe_imbalance_floor(double tokens, int64_t top_k, int ep)
{
	/* N = tokens x top_k assignments, each to one of ep expert ranks with probability 1/ep
	 * under uniform routing: a rank's load is about normal with mean mu = N / ep and standard
	 * deviation sqrt(N (1/ep)(1 - 1/ep)), so the expected busiest of ep is mu + sigma z_ep
	 * with z_ep the expected largest of ep standard normals (Blom 1958:
	 * Phi^-1((n - 0.375) / (n + 0.25)), 1.433 for 8 against the exact 1.424).  Over the mean:
	 * 1 + z_ep sqrt((1 - 1/ep) / mu), at most ep (everything on one rank). */
	if (ep <= 1 || !(tokens > 0) || top_k < 1)
		return 1.0;
	double n = (double)ep, mu = tokens * (double)top_k / n;
	double z = gsl_cdf_ugaussian_Pinv((n - 0.375) / (n + 0.25));
	double f = 1.0 + z * sqrt((1.0 - 1.0 / n) / mu);
	return f < n ? f : n;
}

double
sim_moe_a2a_bytes(double tokens, int64_t top_k, int64_t hidden, double elem_bytes)
{
	/* each of a rank's tokens goes to top_k experts: top_k copies of its hidden state */
	return tokens * (double)top_k * (double)hidden * elem_bytes;
}

/* KV bytes one GPU holds per token: its layers, its KV heads (replicated when attention's tp
 * exceeds them; MLA's latent is not split by heads). */
static double
kv_per_token_gpu(const model *m, const sim_serve_cfg *c)
{
	const model_tf *t = model_transformer(m);
	double layers = ceil((double)t->layers / (double)c->pp);
	double kvb = hw_dtype_bytes(c->kv_dtype);
	if (t->kv_lora_rank > 0)
		return (double)(t->kv_lora_rank + t->qk_rope_dim) * layers * kvb;
	int ta = att_tp(c);
	double heads = t->kv_heads >= ta ? (double)t->kv_heads / (double)ta : 1.0;
	return 2.0 * heads * (double)t->head_dim * layers * kvb;
}

int
sim_serve_memory(const model *m, const hw_system *sys, const sim_serve_cfg *c, sim_serve_mem *out, char *err,
		 size_t errlen)
{
	memset(out, 0, sizeof *out);
	const model_tf *t = model_transformer(m);
	if (t == NULL)
		return pp_err(err, errlen, PP_EUSAGE, "%s is not a language model: serving simulates transformers", model_name(m));
	out->capacity = sys->gpu.memory_bytes;
	/* weights: split over pp; the routed experts over the replica's tp GPUs (by EP and the
	 * experts' TP), the rest over attention's tp (whole on every GPU with attention_dp);
	 * embeddings stay 16-bit.  fp4 (NVFP4) is the routed experts' format, the other linear
	 * layers of a MoE model stay fp8 (NVIDIA's DeepSeek-R1-FP4 quantizes only the MoE's). */
	double emb = model_embedding_params(m) + model_head_params(m);
	double routed = routed_expert_params(m);
	double rest = model_params(m) - emb - routed;
	double wrest = c->weights == HW_FP4 && routed > 0 ? 1.0 : weight_bytes(c->weights);
	out->weights = ((rest * wrest + emb * 2.0) / (double)att_tp(c) + routed * weight_bytes(c->weights) / (double)c->tp) /
		       (double)c->pp;
	/* activations of the largest iteration: its tokens' hidden states and MLP intermediates,
	 * and the logits of up to max_num_seqs sequences in fp32 (all per attention rank) */
	double T = (double)sim_serve_budget(c), h = (double)t->hidden;
	double f = (double)(t->experts > 0 ? t->expert_ffn * t->top_k : t->ffn) / (double)att_tp(c);
	out->activations = T * (4.0 * h + 3.0 * f) * 2.0 + (double)eff_seqs(c) * (double)t->vocab / att_tp(c) * 4.0;
	out->reserve = 1.0 * 1073741824.0; /* CUDA context, NCCL and cuBLAS workspaces, CUDA graphs */
	out->kv_bytes = out->capacity * c->gpu_memory_utilization - out->weights - out->activations - out->reserve;
	double per_tok = kv_per_token_gpu(m, c);
	if (out->kv_bytes < 0)
		out->kv_bytes = 0;
	out->kv_tokens = (int64_t)(out->kv_bytes / per_tok);
	out->kv_blocks = out->kv_tokens / c->block_size;
	out->kv_tokens = out->kv_blocks * c->block_size;
	out->fits = out->kv_blocks > 0;
	return 0;
}

/* ---- iteration cost ------------------------------------------------------------------------ *
 *
 * The kernels come from the one builder (kernels.c) in its forward-only form: an iteration's
 * linear layers over its T tokens (the same for every iteration of T tokens: cached), the
 * attention of each prefill chunk and of the decoding sequences together (by the KV bytes they
 * read), the LM head over the sequences that emit a token.  What the engine adds on top (graph
 * padding, launches, host scheduling) is iter_time's. */

typedef struct icost {
	const model *m;
	const model_tf *t;
	const hw_cost *cost;
	const sim_serve_cfg *c;
	sim_kspec ks;
	int tp_per_node;
	double *lin;   /* [T]: GEMMs, element-wise work and TP all-reduces of all layers, -1 unknown */
	double *head;  /* [n]: the LM head over n sequences */
	size_t nlin, nhead;
	int64_t dense_layer, moe_layer; /* a layer of each kind (-1: none) */
	double ndense, nmoe;            /* how many of each */
	double kernels_fixed;           /* kernels an iteration launches besides its attention cores */
	double kcount;                  /* kernels counted by sum_kernel */
} icost;

/* The builder's emit: sums the kernels' times. */
static void
sum_kernel(void *arg, int block, int slot, const sim_kernel *k)
{
	(void)block;
	(void)slot;
	double *acc = ((void **)arg)[1];
	icost *ic = ((void **)arg)[0];
	ic->kcount += 1.0;
	*acc += hw_cost_kernel(ic->cost, &k->hk, NULL);
}

static void
icost_init(icost *ic, const model *m, const hw_cost *cost, const sim_serve_cfg *c)
{
	ic->m = m;
	ic->t = model_transformer(m);
	ic->cost = cost;
	ic->c = c;
	sim_kspec *s = &ic->ks;
	memset(s, 0, sizeof *s);
	s->m = m;
	/* attention and the dense layers at attention's tp; the experts over ep ranks, shared by
	 * tp / ep (ep 1: split by tp, as before expert parallelism) */
	s->tp = att_tp(c), s->cp = 1, s->ep = c->ep > 1 ? c->ep : 1;
	s->etp = c->ep > 1 ? c->tp / c->ep : 0;
	if (c->attention_dp && s->etp == 0)
		s->etp = c->tp;
	/* FP8 weights run FP8 GEMMs; weight-only int8/int4 compute in 16 bits with narrow weights;
	 * fp4: the routed experts in fp4, a MoE model's other layers in fp8, a dense model's in fp4 */
	s->expert_fp4 = c->weights == HW_FP4;
	bool has_experts = ic->t->experts > 0;
	s->dt = c->weights == HW_FP8 || (c->weights == HW_FP4 && has_experts) ? HW_FP8
		: c->weights == HW_FP4					      ? HW_FP4
										      : HW_BF16;
	s->wbytes = c->weights == HW_FP4 && has_experts ? 1.0 : weight_bytes(c->weights);
	/* FP8 activations get their scales as the engine computes them: calibrated static scales
	 * cost one cast pass (fused into the kernel before in TensorRT-LLM; counted, an upper
	 * bound), dynamic per-tensor scales an amax pass and a cast, per-token scales the same
	 * bytes (the builder's delayed, tensorwise and rowwise recipes, forward only) */
	s->fp8_recipe = c->engine.fp8_scaling == HW_EN_FP8_STATIC	 ? HW_FP8_DELAYED
			: c->engine.fp8_scaling == HW_EN_FP8_TOKEN ? HW_FP8_ROWWISE
								     : HW_FP8_TENSORWISE;
	/* with an fp8 KV cache, engines with fp8 attention kernels compute attention in fp8 */
	s->adt = c->kv_dtype == HW_FP8 && c->engine.fp8_attention ? HW_FP8 : HW_BF16;
	s->kvbytes = hw_dtype_bytes(c->kv_dtype);
	s->kv_per_head = !c->engine.decode_gqa;
	s->e = 2.0;
	s->flash = true;
	/* the engine's prefill kernels: FlashAttention-2 class or the architecture's fastest */
	s->attn = c->engine.attention == HW_FW_ATTN_FLASH2 ? HW_ATTN_FLASH2 : HW_ATTN_FLASH3;
	s->moe_imb = 1.0;
	ic->dense_layer = ic->moe_layer = -1;
	for (int64_t l = 0; l < ic->t->layers; l++) {
		bool moe = model_layer_is_moe(m, l);
		if (moe) {
			ic->nmoe += 1.0;
			if (ic->moe_layer < 0)
				ic->moe_layer = l;
		} else {
			ic->ndense += 1.0;
			if (ic->dense_layer < 0)
				ic->dense_layer = l;
		}
	}
}

static double layer_linear(icost *ic, int64_t layer, double T);

/* Kernels an eager iteration launches besides its attention cores: every layer's (counted by
 * building them once), two all-reduces per layer under TP, and the LM head's. */
static void
icost_count(icost *ic)
{
	ic->kcount = 0.0;
	double per = 0.0;
	if (ic->ndense > 0) {
		layer_linear(ic, ic->dense_layer, 1.0);
		per += ic->ndense * ic->kcount;
		ic->kcount = 0.0;
	}
	if (ic->nmoe > 0) {
		layer_linear(ic, ic->moe_layer, 1.0);
		per += ic->nmoe * ic->kcount;
		ic->kcount = 0.0;
	}
	if (att_tp(ic->c) > 1)
		per += 2.0 * (double)ic->t->layers;
	if (ic->c->ep > 1)
		per += 2.0 * ic->nmoe;
	double acc = 0.0;
	void *arg[2] = {ic, &acc};
	sim_kernels_head(&ic->ks, 1.0, sum_kernel, arg);
	per += ic->kcount;
	ic->kernels_fixed = per;
}

/* Seconds of the kernels of one layer over T tokens, without the attention core. */
static double
layer_linear(icost *ic, int64_t layer, double T)
{
	double acc = 0.0;
	void *arg[2] = {ic, &acc};
	sim_kernels_layer(&ic->ks, layer, T, 0.0, 0.0, 0.0, 0.0, sum_kernel, arg);
	return acc;
}

static double
linear_time(icost *ic, int64_t T)
{
	if ((size_t)T < ic->nlin && ic->lin[T] >= 0)
		return ic->lin[T];
	const model_tf *t = ic->t;
	const sim_serve_cfg *c = ic->c;
	double x = (double)T, h = (double)t->hidden;
	double total = 0.0;
	if (ic->ndense > 0)
		total += ic->ndense * layer_linear(ic, ic->dense_layer, x);
	if (ic->nmoe > 0) {
		/* T tokens on each of the att_dp attention ranks: the busiest expert rank's share of
		 * all of them */
		ic->ks.moe_imb = c->moe_imbalance > 0 ? c->moe_imbalance
						      : sim_moe_imbalance_floor(x * att_dp(c), t->top_k, ic->ks.ep);
		total += ic->nmoe * layer_linear(ic, ic->moe_layer, x);
	}
	/* the engine's kernel choices reach gemm_scale of the GPU's measured rates */
	total /= c->engine.gemm_scale;
	/* two TP all-reduces of the hidden states per layer, the engine's own for small ones */
	int ta = att_tp(c);
	if (ta > 1)
		total += 2.0 * (double)t->layers *
			 hw_cost_serve_allreduce(ic->cost, c->engine.allreduce_us, ta, ic->tp_per_node, x * h * 2.0, NULL);
	/* expert parallelism: per MoE layer the dispatch of each rank's tokens (its own with
	 * attention_dp, else its 1/tp share of the batch) to their top_k experts, on each of the
	 * tp / ep ranks that share an expert, and the combine back; the dispatch in the experts'
	 * fp8 or fp4 activations, the combine in bf16 (DeepSeek-V3 report, section 3.3.2; DeepEP),
	 * over the replica's tp GPUs (NVLink within a node, the NICs across) */
	if (c->ep > 1 && ic->nmoe > 0) {
		double mine = c->attention_dp ? x : x / (double)c->tp;
		double copies = mine * (double)(c->tp / c->ep);
		double de = ic->ks.expert_fp4 ? weight_bytes(HW_FP4) : ic->ks.dt == HW_FP8 ? 1.0 : 2.0;
		double a2a = hw_cost_coll_time(ic->cost, HW_ALL_TO_ALL, c->tp, ic->tp_per_node,
					       sim_moe_a2a_bytes(copies, t->top_k, t->hidden, de), NULL) +
			     hw_cost_coll_time(ic->cost, HW_ALL_TO_ALL, c->tp, ic->tp_per_node,
					       sim_moe_a2a_bytes(copies, t->top_k, t->hidden, 2.0), NULL);
		total += ic->nmoe * a2a;
	}
	/* pipeline: each stage hands the hidden states to the next */
	if (c->pp > 1)
		total += (double)(c->pp - 1) * hw_cost_coll_time(ic->cost, HW_SEND_RECV, 2, 1, x * h * 2.0, NULL);
	if ((size_t)T < ic->nlin)
		ic->lin[T] = total;
	return total;
}

static double
head_time(icost *ic, int64_t n)
{
	if (n <= 0)
		return 0.0;
	if ((size_t)n < ic->nhead && ic->head[n] >= 0)
		return ic->head[n];
	double acc = 0.0;
	void *arg[2] = {ic, &acc};
	sim_kernels_head(&ic->ks, (double)n, sum_kernel, arg);
	if ((size_t)n < ic->nhead)
		ic->head[n] = acc;
	return acc;
}

/* Attention of one prefill chunk of `chunk` tokens after `done` cached ones, all layers: the
 * chunk's queries see the cached keys and, causally, each other. */
static double
prefill_attention(icost *ic, int64_t done, int64_t chunk)
{
	double acc = 0.0, sk = (double)(done + chunk);
	void *arg[2] = {ic, &acc};
	sim_kernels_attn(&ic->ks, 1.0, (double)chunk, sk, ((double)done + (double)chunk / 2.0) / sk, false, sum_kernel, arg);
	return acc * (double)ic->t->layers / ic->c->engine.attn_scale;
}

/* Attention of the decoding sequences, all layers: n new queries against `ctx` cached tokens in
 * all (by the bytes they read, in one batched kernel). */
static double
decode_attention(icost *ic, int64_t n, double ctx)
{
	if (n <= 0)
		return 0.0;
	double acc = 0.0;
	void *arg[2] = {ic, &acc};
	sim_kernels_attn(&ic->ks, (double)n, 1.0, ctx / (double)n, 1.0, true, sum_kernel, arg);
	return acc * (double)ic->t->layers / ic->c->engine.decode_scale;
}

/* ---- the replicas -------------------------------------------------------------------------- */

enum { R_UNIFIED, R_PREFILL, R_DECODE };
enum { EV_ARRIVE, EV_ITER, EV_KV };

typedef struct seqst {
	int64_t req;
	int64_t target;    /* tokens to have in cache before decoding: prompt (+ generated after preemption) */
	int64_t done;      /* of target, prefilled */
	int64_t generated; /* output tokens emitted */
	int64_t blocks;
	int64_t resv;      /* blocks admission reserved for it that it has not taken yet */
	int64_t sched;     /* tokens scheduled this iteration */
	int64_t proposed;  /* speculative tokens it verifies this iteration */
	bool decode;       /* scheduled as a decode token */
	/* the request's prompt and output lengths, copied here: the scheduling loops read them for
	 * every running sequence at every iteration, and the request records are scattered */
	int64_t prompt, output;
} seqst;

typedef struct replica {
	int kind;
	int64_t *wait;     /* FIFO of request ids (ring) */
	size_t wcap, whead, wlen;
	seqst *run;
	size_t nrun, rcap;
	int64_t free_blocks, blocks;
	int64_t reserved;  /* of the free blocks, those reserved for running sequences (resv) */
	bool busy;
	double iter_start;
	int64_t outstanding;
	double kv_time_weighted, kv_peak;
	double last_change;
} replica;

typedef struct reqst {
	double arrival, first, last, finish;
	int64_t prompt, output, generated;
	int replica, decode_replica;
	bool done;
	bool recompute; /* preempted: its cache must be computed again */
} reqst;

typedef struct event {
	double t;
	uint64_t seq;
	int type;
	int64_t a; /* request or replica */
	int b;     /* replica for EV_KV */
} event;

typedef struct iterrec {
	double start, dur;
	int replica;
	int32_t decode, prefill_tokens;
} iterrec;

struct sim_serve_result {
	sim_serve_cfg cfg;
	sim_serve_metrics m;
	bool banded;             /* band holds the run on engines as fast as the capacity interval's ends */
	sim_serve_metrics band[2];
	char model[64], system[48];
	iterrec *iters;
	size_t niters, itcap;
};

typedef struct itl_hist itl_hist;

typedef struct run {
	const model *m;
	const sim_serve_cfg *c;
	icost ic;
	replica *rep;
	int nrep;
	reqst *req;
	int64_t nreq;
	event *heap;
	size_t nheap, hcap;
	uint64_t seq;
	double now;
	int64_t next_arrival; /* requests not yet arrived (closed loop) */
	int rr;
	/* ITL: per iteration duration weighted by its decode tokens */
	double *itl_d, *itl_w;
	size_t nitl, itlcap;
	itl_hist *itlh; /* past the exact samples: the histogram, or NULL */
	int64_t preempt;
	int64_t iterations;
	/* requests in the system (arrived, not finished), integrated over time */
	int64_t in_system;
	double in_system_area, in_system_since;
	sim_serve_result *res;
	bool oom;
	size_t max_backlog;
	gsl_rng *rs;            /* speculative acceptance (NULL: no speculation) */
	int64_t spec_steps, spec_emitted; /* decode steps that speculated, and the tokens they emitted */
} run;

/* ---- inter-token latency in bounded memory ------------------------------------------------ *
 *
 * Each decode iteration is an ITL sample: its duration, weighted by the tokens it produced.
 * Kept one by one, they grew with the run's output tokens (16 to 32 bytes an iteration: a run
 * of many millions of tokens at low concurrency was killed for memory at 22 GB).  The first
 * itl_exact samples are kept exactly (every test-sized run, identical results); past them all
 * go into a histogram of 8192 buckets per doubling of the duration (each bucket 0.0085% wide,
 * 2^-40 to 2^24 s, 8 MB), which keeps per bucket the weight and its longest duration.  A
 * weighted percentile is then the longest duration of the first bucket whose cumulative weight
 * reaches it: an ITL of the run, at most 0.0085% above the exact one.  The mean stays exact. */

#define ITL_EXACT_DEFAULT ((size_t)1 << 20)
#define ITL_PER_OCTAVE 8192
#define ITL_LO_EXP (-40)
#define ITL_HI_EXP 24
#define ITL_BUCKETS ((size_t)(ITL_HI_EXP - ITL_LO_EXP) * ITL_PER_OCTAVE)

struct itl_hist {
	double *w, *dmax; /* per bucket: weight, longest duration */
	double tot, sum;  /* every sample's weight and weight x duration */
};

static size_t
itl_bucket(double d)
{
	if (!(d > 0))
		return 0;
	double x = (log2(d) - ITL_LO_EXP) * ITL_PER_OCTAVE;
	if (!(x >= 0))
		return 0;
	if (x >= (double)ITL_BUCKETS)
		return ITL_BUCKETS - 1;
	return (size_t)x;
}

static void
itl_hist_add(itl_hist *h, double d, double w)
{
	size_t b = itl_bucket(d);
	h->w[b] += w;
	if (d > h->dmax[b])
		h->dmax[b] = d;
	h->tot += w;
	h->sum += w * d;
}

static void
itl_hist_free(itl_hist *h)
{
	if (h != NULL) {
		free(h->w);
		free(h->dmax);
		free(h);
	}
}

/* Adds one ITL sample; false when out of memory. */
static bool
itl_add(run *r, double d, double w)
{
	size_t exact = r->c->itl_exact > 0 ? r->c->itl_exact : ITL_EXACT_DEFAULT;
	if (r->itlh == NULL && r->nitl >= exact) {
		itl_hist *h = calloc(1, sizeof *h);
		if (h == NULL || (h->w = calloc(ITL_BUCKETS, sizeof *h->w)) == NULL ||
		    (h->dmax = calloc(ITL_BUCKETS, sizeof *h->dmax)) == NULL) {
			itl_hist_free(h);
			return false;
		}
		for (size_t i = 0; i < r->nitl; i++)
			itl_hist_add(h, r->itl_d[i], r->itl_w[i]);
		free(r->itl_d);
		free(r->itl_w);
		r->itl_d = r->itl_w = NULL;
		r->nitl = r->itlcap = 0;
		r->itlh = h;
	}
	if (r->itlh != NULL) {
		itl_hist_add(r->itlh, d, w);
		return true;
	}
	size_t c1 = r->itlcap, c2 = r->itlcap;
	if (PP_GROW(r->itl_d, c1, r->nitl + 1) != 0 || PP_GROW(r->itl_w, c2, r->nitl + 1) != 0)
		return false;
	r->itlcap = c1;
	r->itl_d[r->nitl] = d;
	r->itl_w[r->nitl] = w;
	r->nitl++;
	return true;
}

/* The ITL's mean and percentiles, as sim_percentiles_weighted gives them on the exact samples. */
static int
itl_percentiles(const run *r, sim_pct *out)
{
	const itl_hist *h = r->itlh;
	if (h == NULL)
		return sim_percentiles_weighted(r->itl_d, r->itl_w, r->nitl, out);
	sim_pct p = {0, 0, 0, 0};
	p.mean = h->tot > 0 ? h->sum / h->tot : 0;
	const double qs[3] = {0.5, 0.9, 0.99};
	double *outs[3] = {&p.p50, &p.p90, &p.p99};
	double acc = 0;
	size_t b = 0;
	for (int q = 0; q < 3; q++) {
		double goal = qs[q] * h->tot;
		for (; b < ITL_BUCKETS; b++) {
			if (h->w[b] > 0 && acc + h->w[b] >= goal) {
				*outs[q] = h->dmax[b];
				break;
			}
			acc += h->w[b];
		}
	}
	*out = p;
	return 0;
}

static void
push_ev(run *r, double t, int type, int64_t a, int b)
{
	if (PP_GROW(r->heap, r->hcap, r->nheap + 1) != 0) {
		r->oom = true;
		return;
	}
	event ev = {t, r->seq++, type, a, b};
	size_t i = r->nheap++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (r->heap[p].t < ev.t || (r->heap[p].t == ev.t && r->heap[p].seq < ev.seq))
			break;
		r->heap[i] = r->heap[p];
		i = p;
	}
	r->heap[i] = ev;
}

static event
pop_ev(run *r)
{
	event top = r->heap[0], last = r->heap[--r->nheap];
	size_t i = 0, n = r->nheap;
	for (;;) {
		size_t l = 2 * i + 1, rr = l + 1, m = i;
		const event *best = &last;
		if (l < n && (r->heap[l].t < best->t || (r->heap[l].t == best->t && r->heap[l].seq < best->seq))) {
			m = l;
			best = &r->heap[l];
		}
		if (rr < n && (r->heap[rr].t < best->t || (r->heap[rr].t == best->t && r->heap[rr].seq < best->seq)))
			m = rr;
		if (m == i)
			break;
		r->heap[i] = r->heap[m];
		i = m;
	}
	if (n > 0)
		r->heap[i] = last;
	return top;
}

static void
wait_push(run *r, replica *p, int64_t req, bool front)
{
	if (p->wlen + 1 > p->wcap) {
		size_t ncap = p->wcap ? p->wcap * 2 : 64;
		int64_t *nw = malloc(ncap * sizeof *nw);
		if (nw == NULL) {
			r->oom = true;
			return;
		}
		for (size_t i = 0; i < p->wlen; i++)
			nw[i] = p->wait[(p->whead + i) % p->wcap];
		free(p->wait);
		p->wait = nw;
		p->wcap = ncap;
		p->whead = 0;
	}
	if (front) {
		p->whead = (p->whead + p->wcap - 1) % p->wcap;
		p->wait[p->whead] = req;
	} else {
		p->wait[(p->whead + p->wlen) % p->wcap] = req;
	}
	p->wlen++;
}

static void
kv_account(replica *p, double now)
{
	double used = (double)(p->blocks - p->free_blocks) / (double)(p->blocks > 0 ? p->blocks : 1);
	p->kv_time_weighted += used * (now - p->last_change);
	p->last_change = now;
	if (used > p->kv_peak)
		p->kv_peak = used;
}

static int64_t
blocks_for(const run *r, int64_t tokens)
{
	return (tokens + r->c->block_size - 1) / r->c->block_size;
}

/* Frees a running sequence's blocks and removes it from the batch. */
static void
drop_seq(replica *p, size_t i)
{
	p->free_blocks += p->run[i].blocks;
	p->reserved -= p->run[i].resv;
	p->run[i] = p->run[--p->nrun];
}

/* Gives sequence s n more blocks, out of its reservation first. */
static void
take_blocks(replica *p, seqst *s, int64_t n)
{
	int64_t k = n <= 0 ? 0 : n < s->resv ? n : s->resv;
	p->free_blocks -= n;
	p->reserved -= k;
	s->blocks += n;
	s->resv -= k;
}

/* Admission: the blocks request q must have reserved beyond the `need` it takes now (the rest
 * of its context, and the engine's kv_reserve of its output still to come up to its max_tokens:
 * the output distribution's cap, else its own length); -1 when the free blocks that no running
 * sequence has reserved cannot hold both. */
static int64_t
admit_reserve(const run *r, const replica *p, const reqst *q, int64_t need)
{
	double f = r->c->engine.kv_reserve;
	int64_t resv = 0;
	if (f > 0) {
		int64_t maxout = r->c->output.max > (double)q->output ? (int64_t)r->c->output.max : q->output;
		int64_t left = maxout > q->generated ? maxout - q->generated : 0;
		int64_t total = blocks_for(r, q->prompt + q->generated + (int64_t)ceil(f * (double)left));
		resv = total > need ? total - need : 0;
	}
	return need + resv <= p->free_blocks - p->reserved ? resv : -1;
}

/* The token count an iteration of T tokens runs at: a graph-captured one is padded to the
 * next captured size (1, 2, 4, then multiples of graph_step up to graph_max: vLLM's
 * cudagraph_capture_sizes, SGLang's cuda_graph_bs); 0 when no graph covers it. */
int64_t
sim_engine_graph_tokens(const sim_engine *e, int64_t T, bool prefill)
{
	if (e->graph_max <= 0 || T > e->graph_max || T < 1 || (prefill && !e->graph_mixed))
		return 0;
	if (T <= 2)
		return T;
	if (T <= 4)
		return 4;
	int64_t step = e->graph_step > 0 ? e->graph_step : 1;
	int64_t padded = (T + step - 1) / step * step;
	return padded < e->graph_max ? padded : e->graph_max;
}

/* Seconds of one iteration: T tokens of which ndec decode tokens, nchunks prefill chunks with
 * `att` seconds of attention, nout sequences sampling, nseqs running.  The GPU's time is its
 * kernels at the graph-padded size, or, launched eagerly, at least the host's launches; the
 * host's scheduling time (fixed plus per sequence, once per sched_steps decode-only iterations)
 * adds to it, or overlaps it where the engine prepares the next iteration during this one.
 * `draft`: the GPU seconds of a draft head's proposals, before the verification. */
static double
iter_time(run *r, int64_t T, int64_t ndec, double dec_ctx, int64_t nchunks, double att, int64_t nout, size_t nseqs,
	  double draft)
{
	const sim_engine *e = &r->c->engine;
	icost *ic = &r->ic;
	/* with attention_dp the replica's work is spread evenly over its D attention ranks (the
	 * engines balance their batches), each running its share in step with the others */
	int64_t D = att_dp(r->c);
	if (D > 1) {
		int64_t nd = (ndec + D - 1) / D;
		dec_ctx = ndec > 0 ? dec_ctx * (double)nd / (double)ndec : 0.0;
		ndec = nd;
		T = (T + D - 1) / D;
		nout = (nout + D - 1) / D;
		att /= (double)D;
		draft /= (double)D;
		nchunks = (nchunks + D - 1) / D;
	}
	int64_t G = sim_engine_graph_tokens(e, T, nchunks > 0);
	double gpu = linear_time(ic, G > 0 ? G : T) + head_time(ic, nout) + att + decode_attention(ic, ndec, dec_ctx) + draft;
	if (G == 0 && e->launch_s > 0) {
		double kernels = ic->kernels_fixed + (double)ic->t->layers * (double)(nchunks + (ndec > 0));
		if (kernels * e->launch_s > gpu)
			gpu = kernels * e->launch_s;
	}
	double host = e->sched_s + e->sched_seq_s * (double)nseqs;
	if (nchunks == 0 && e->sched_steps > 1)
		host /= (double)e->sched_steps;
	return e->overlap ? (gpu > host ? gpu : host) : gpu + host;
}

/* Starts an iteration on replica `k` if it has work: decode tokens first, then prefill chunks
 * within the token budget; KV blocks are allocated for what is scheduled, preempting the most
 * recently admitted sequence when a decode step finds none free.  How prompts enter follows
 * the engine: chunked (any part of a prompt fills the budget), mixed (only whole prompts join
 * the decode tokens), separate (an iteration prefills only while a prompt can be admitted). */
static void
start_iteration(run *r, int k)
{
	replica *p = &r->rep[k];
	const sim_serve_cfg *c = r->c;
	if (p->busy || (p->nrun == 0 && p->wlen == 0))
		return;
	kv_account(p, r->now);
	int64_t budget = rep_tokens(c), seqs = rep_seqs(c);
	int64_t ndec = 0, npre_tokens = 0, nout = 0, dec_tokens = 0;
	int64_t drafting[SIM_SPEC_MAX_TOKENS + 1] = {0}; /* [j]: sequences proposing a j-th token */
	double att = 0, dec_ctx = 0;
	/* decode replicas admit handed-over sequences whose cache arrived (they need blocks);
	 * they decode in this very iteration */
	while (p->kind == R_DECODE && p->wlen > 0 && p->nrun < (size_t)seqs) {
		int64_t id = p->wait[p->whead];
		reqst *q = &r->req[id];
		/* a sequence preempted here prefills its context again, chunk by chunk */
		int64_t need = q->recompute ? 0 : blocks_for(r, q->prompt + q->generated);
		int64_t resv = admit_reserve(r, p, q, need);
		if (resv < 0)
			break;
		p->whead = (p->whead + 1) % p->wcap;
		p->wlen--;
		if (PP_GROW(p->run, p->rcap, p->nrun + 1) != 0) {
			r->oom = true;
			return;
		}
		seqst *s = &p->run[p->nrun++];
		memset(s, 0, sizeof *s);
		s->req = id;
		s->target = q->recompute ? q->prompt + q->generated : q->prompt;
		s->done = q->recompute ? 0 : q->prompt;
		s->generated = q->generated;
		s->prompt = q->prompt;
		s->output = q->output;
		q->recompute = false;
		take_blocks(p, s, need);
		s->resv = resv;
		p->reserved += resv;
	}
	for (size_t i = 0; i < p->nrun; i++)
		p->run[i].sched = 0, p->run[i].proposed = 0;
	int mode = c->engine.prefill;
	bool prefill_only = false;
	if (mode == HW_EN_PREFILL_SEPARATE && p->kind == R_UNIFIED) {
		for (size_t i = 0; i < p->nrun && !prefill_only; i++)
			prefill_only = p->run[i].done < p->run[i].target;
		if (!prefill_only && p->wlen > 0 && p->nrun < (size_t)seqs) {
			const reqst *q = &r->req[p->wait[p->whead]];
			int64_t target = q->prompt + q->generated;
			prefill_only = admit_reserve(r, p, q, blocks_for(r, target < budget ? target : budget)) >= 0;
		}
	}
	int64_t nchunks = 0;
schedule:
	/* decode: every sequence whose cache is complete emits one token */
	for (size_t i = 0; i < p->nrun && budget > 0 && !prefill_only;) {
		seqst *s = &p->run[i];
		if (s->done < s->target || p->kind == R_PREFILL) {
			i++;
			continue;
		}
		int64_t myreq = s->req;
		/* speculation: k proposals, none past the request's last token nor the budget */
		int64_t kp = 0;
		if (c->spec != SIM_SPEC_OFF) {
			kp = s->output - s->generated - 1;
			if (kp > c->spec_tokens)
				kp = c->spec_tokens;
			if (kp > budget - 1)
				kp = budget - 1;
			if (kp < 0)
				kp = 0;
		}
		/* the cache after this step: the prompt, every token generated so far and the
		 * proposals verified (the rejected ones' slots are written over later) */
		int64_t ctx = s->prompt + s->generated;
		int64_t need = blocks_for(r, ctx + kp) - s->blocks;
		while (need > p->free_blocks && p->nrun > 0) {
			/* preempt the newest sequence (the last admitted); it prefills again later */
			size_t victim = p->nrun - 1;
			seqst v = p->run[victim];
			reqst *q = &r->req[v.req];
			drop_seq(p, victim);
			r->preempt++;
			q->generated = v.generated;
			q->recompute = true;
			wait_push(r, p, v.req, true);
			if (victim == i)
				break;
		}
		if (i >= p->nrun || p->run[i].req != myreq)
			continue; /* this very sequence was preempted */
		if (need > p->free_blocks)
			break;
		take_blocks(p, s, need);
		s->sched = 1 + kp;
		s->proposed = kp;
		s->decode = true;
		budget -= 1 + kp;
		ndec++;
		nout += 1 + kp; /* the verification samples at every proposal and after the last */
		dec_tokens += 1 + kp;
		dec_ctx += (double)ctx;
		for (int64_t j = 1; j <= kp; j++)
			drafting[j]++;
		i++;
	}
	/* prefill chunks of running sequences, then admissions */
	for (size_t i = 0; i < p->nrun && budget > 0; i++) {
		seqst *s = &p->run[i];
		if (s->done >= s->target || s->sched)
			continue;
		int64_t chunk = s->target - s->done < budget ? s->target - s->done : budget;
		int64_t need = blocks_for(r, s->done + chunk) - s->blocks;
		if (need > p->free_blocks) {
			chunk = (p->free_blocks + s->blocks) * c->block_size - s->done;
			if (chunk <= 0)
				continue;
			need = blocks_for(r, s->done + chunk) - s->blocks;
		}
		take_blocks(p, s, need);
		s->sched = chunk;
		s->decode = false;
		budget -= chunk;
		npre_tokens += chunk;
		nchunks++;
		att += prefill_attention(&r->ic, s->done, chunk);
		if (s->done + chunk >= s->target)
			nout++;
	}
	while (budget > 0 && p->wlen > 0 && p->nrun < (size_t)seqs && p->kind != R_DECODE) {
		int64_t id = p->wait[p->whead];
		reqst *q = &r->req[id];
		int64_t target = q->prompt + q->generated;
		/* prefix caching: the prompt's first whole blocks found in the cache are not computed
		 * (at least its last token is: it samples the first output token) */
		int64_t cached = 0;
		if (c->prefix_hit > 0 && q->generated == 0) {
			cached = (int64_t)(c->prefix_hit * (double)q->prompt) / c->block_size * c->block_size;
			if (cached > q->prompt - 1)
				cached = q->prompt - 1;
		}
		int64_t left = target - cached;
		int64_t chunk = left < budget ? left : budget;
		/* mixed: whole prompts only; one longer than what is left waits for the next iteration
		 * unless nothing else is scheduled (the engine's budget is at least its longest prompt) */
		if (mode == HW_EN_PREFILL_MIXED && chunk < left) {
			if (ndec + npre_tokens > 0)
				break;
			chunk = left;
		}
		int64_t need = blocks_for(r, cached + chunk);
		int64_t resv = admit_reserve(r, p, q, need);
		if (resv < 0)
			break;
		p->whead = (p->whead + 1) % p->wcap;
		p->wlen--;
		if (PP_GROW(p->run, p->rcap, p->nrun + 1) != 0) {
			r->oom = true;
			return;
		}
		seqst *s = &p->run[p->nrun++];
		memset(s, 0, sizeof *s);
		s->req = id;
		s->target = target;
		s->done = cached;
		s->generated = q->generated;
		s->prompt = q->prompt;
		s->output = q->output;
		take_blocks(p, s, need);
		s->resv = resv;
		p->reserved += resv;
		s->sched = chunk;
		budget -= chunk;
		npre_tokens += chunk;
		nchunks++;
		att += prefill_attention(&r->ic, cached, chunk);
		if (cached + chunk >= target)
			nout++;
	}
	int64_t T = dec_tokens + npre_tokens;
	if (T == 0 && prefill_only) {
		/* no prompt could get its blocks after all: decode instead, as the engine does when
		 * its prefill scheduling admits nothing */
		prefill_only = false;
		goto schedule;
	}
	if (T == 0) {
		/* nothing schedulable (no KV room for the next waiting request): idle until a change */
		return;
	}
	/* an EAGLE-style head proposes token by token: one decoder layer and the LM head over the
	 * sequences still proposing, per step */
	double draft = 0;
	if (c->spec == SIM_SPEC_EAGLE)
		for (int j = 1; j <= SIM_SPEC_MAX_TOKENS && drafting[j] > 0; j++)
			draft += linear_time(&r->ic, drafting[j]) / (double)r->ic.t->layers + head_time(&r->ic, drafting[j]);
	double dur = iter_time(r, T, ndec, dec_ctx, nchunks, att, nout, p->nrun, draft);
	p->busy = true;
	p->iter_start = r->now;
	r->iterations++;
	push_ev(r, r->now + dur, EV_ITER, k, 0);
	if (r->c->keep_iterations && PP_GROW(r->res->iters, r->res->itcap, r->res->niters + 1) == 0) {
		iterrec *it = &r->res->iters[r->res->niters++];
		it->start = r->now;
		it->dur = dur;
		it->replica = k;
		it->decode = (int32_t)ndec;
		it->prefill_tokens = (int32_t)npre_tokens;
	}
}

static int route(run *r, bool prefill);
static void arrive(run *r, int64_t id);

/* Integrates the number of requests in the system up to now, then changes it by `delta`. */
static void
in_system_add(run *r, int delta)
{
	r->in_system_area += (double)r->in_system * (r->now - r->in_system_since);
	r->in_system_since = r->now;
	r->in_system += delta;
}

static void
finish_request(run *r, int64_t id)
{
	reqst *q = &r->req[id];
	in_system_add(r, -1);
	q->finish = r->now;
	q->done = true;
	replica *p = &r->rep[q->decode_replica >= 0 ? q->decode_replica : q->replica];
	p->outstanding--;
	if (r->c->arrival == SIM_ARR_CLOSED && r->next_arrival < r->nreq) {
		int64_t nid = r->next_arrival++;
		r->req[nid].arrival = r->now;
		push_ev(r, r->now, EV_ARRIVE, nid, 0);
	}
}

static void
end_iteration(run *r, int k)
{
	replica *p = &r->rep[k];
	const sim_serve_cfg *c = r->c;
	double dur = r->now - p->iter_start;
	kv_account(p, r->now);
	p->busy = false;
	int64_t ndec = 0;
	for (size_t i = 0; i < p->nrun;) {
		seqst *s = &p->run[i];
		reqst *q = &r->req[s->req];
		bool emits = false;
		int64_t extra = 0; /* accepted proposals, emitted with the verified token */
		if (s->decode && s->sched) {
			emits = true;
			ndec++;
			if (s->proposed > 0) {
				while (extra < s->proposed && gsl_rng_uniform(r->rs) < c->spec_accept)
					extra++;
				r->spec_steps++;
				r->spec_emitted += 1 + extra;
			}
		} else if (s->sched > 0) {
			s->done += s->sched;
			if (s->done >= s->target)
				emits = true; /* the last prefill chunk samples the first token */
		}
		s->sched = 0;
		s->proposed = 0;
		s->decode = false;
		if (emits) {
			s->generated += 1 + extra;
			q->generated = s->generated;
			if (s->generated == 1 && q->first == 0.0)
				q->first = r->now;
			q->last = r->now;
			if (s->generated >= s->output) {
				int64_t req = s->req;
				drop_seq(p, i); /* moves another sequence into slot i */
				finish_request(r, req);
				continue;
			}
			if (p->kind == R_PREFILL) {
				/* hand the cache to a decode replica over the fabric */
				int64_t req = s->req;
				double bytes = (double)(s->target) * kv_per_token_gpu(r->m, c);
				double tt = hw_cost_coll_time(r->ic.cost, HW_SEND_RECV, 2, 1, bytes, NULL);
				int dk = route(r, false);
				q->decode_replica = dk;
				r->rep[dk].outstanding++;
				p->outstanding--;
				drop_seq(p, i);
				push_ev(r, r->now + tt, EV_KV, req, dk);
				continue;
			}
		}
		i++;
	}
	if (ndec > 0 && !itl_add(r, dur, (double)ndec))
		r->oom = true;
}

static int
route(run *r, bool prefill)
{
	int lo, hi;
	const sim_serve_cfg *c = r->c;
	if (c->prefill_replicas > 0) {
		lo = prefill ? 0 : c->prefill_replicas;
		hi = prefill ? c->prefill_replicas : c->prefill_replicas + c->decode_replicas;
	} else {
		lo = 0;
		hi = r->nrep;
	}
	if (c->router == SIM_ROUTE_ROUND_ROBIN) {
		int k = lo + r->rr % (hi - lo);
		r->rr++;
		return k;
	}
	int best = lo;
	for (int k = lo + 1; k < hi; k++)
		if (r->rep[k].outstanding < r->rep[best].outstanding)
			best = k;
	return best;
}

static void
arrive(run *r, int64_t id)
{
	in_system_add(r, +1);
	int k = route(r, true);
	r->req[id].replica = k;
	r->req[id].decode_replica = -1;
	r->rep[k].outstanding++;
	wait_push(r, &r->rep[k], id, false);
	start_iteration(r, k);
}

/* ---- metrics ------------------------------------------------------------------------------- */

/* Sorting the samples: a ten-minute run at 100 requests per second has a million ITL samples
 * and 60,000 of each other metric, and GSL's heapsorts (gsl_sort, gsl_sort_index) were a
 * quarter of 'plan serve'.  A double that is neither NaN nor -0 maps to a 64-bit key that sorts
 * as the value does (the sign bit flipped, or every bit when negative), and an LSD radix sort of
 * the keys gives the same sorted values as any other sort: equal keys are equal values.  Inputs
 * with a NaN or a -0 (which GSL orders arbitrarily against +0), and short ones, keep GSL. */
enum { RADIX_MIN = 64 };

static inline uint64_t
dkey(double x)
{
	uint64_t u;
	memcpy(&u, &x, sizeof u);
	return (u >> 63) ? ~u : u | (UINT64_C(1) << 63);
}

static inline double
kdouble(uint64_t k)
{
	uint64_t u = (k >> 63) ? k & ~(UINT64_C(1) << 63) : ~k;
	double x;
	memcpy(&x, &u, sizeof x);
	return x;
}

/* Whether every value of v maps to a key (no NaN, no -0). */
static bool
radix_ok(const double *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (isnan(v[i]) || (v[i] == 0 && signbit(v[i])))
			return false;
	return true;
}

/* Sorts n keys ascending, carrying w along when it is not NULL (stable; 8 bits a pass, a pass
 * skipped where every key has the same digit).  tk and tw hold n entries of scratch; the sorted
 * keys and weights end in k and w. */
static void
radix_sort(uint64_t *k, double *w, uint64_t *tk, double *tw, size_t n)
{
	static const int D = 8;
	size_t (*cnt)[256] = calloc((size_t)D, sizeof *cnt);
	uint64_t *k0 = k;
	double *w0 = w;
	if (cnt == NULL) {
		/* no room for the counts: an insertion sort is slow but exact and needs none */
		for (size_t i = 1; i < n; i++)
			for (size_t j = i; j > 0 && k[j - 1] > k[j]; j--) {
				uint64_t t = k[j];
				k[j] = k[j - 1];
				k[j - 1] = t;
				if (w != NULL) {
					double x = w[j];
					w[j] = w[j - 1];
					w[j - 1] = x;
				}
			}
		return;
	}
	for (size_t i = 0; i < n; i++)
		for (int d = 0; d < D; d++)
			cnt[d][(k[i] >> (8 * d)) & 255]++;
	for (int d = 0; d < D; d++) {
		size_t *c = cnt[d];
		if (c[(k[0] >> (8 * d)) & 255] == n)
			continue;
		size_t sum = 0;
		for (int b = 0; b < 256; b++) {
			size_t t = c[b];
			c[b] = sum;
			sum += t;
		}
		for (size_t i = 0; i < n; i++) {
			size_t at = c[(k[i] >> (8 * d)) & 255]++;
			tk[at] = k[i];
			if (w != NULL)
				tw[at] = w[i];
		}
		uint64_t *xk = k;
		k = tk;
		tk = xk;
		double *xw = w;
		w = tw;
		tw = xw;
	}
	if (k != k0) {
		memcpy(k0, k, n * sizeof *k);
		if (w0 != NULL)
			memcpy(w0, w, n * sizeof *w);
	}
	free(cnt);
}

/* Sorts v ascending: the radix sort where it applies, else GSL's. */
static void
sort_samples(double *v, size_t n)
{
	uint64_t *k = n >= RADIX_MIN && radix_ok(v, n) ? malloc(2 * n * sizeof *k) : NULL;
	if (k == NULL) {
		gsl_sort(v, 1, n);
		return;
	}
	for (size_t i = 0; i < n; i++)
		k[i] = dkey(v[i]);
	radix_sort(k, NULL, k + n, NULL, n);
	for (size_t i = 0; i < n; i++)
		v[i] = kdouble(k[i]);
	free(k);
}

sim_pct
sim_percentiles(double *v, size_t n)
{
	sim_pct p = {0, 0, 0, 0};
	if (n == 0)
		return p;
	sort_samples(v, n);
	p.mean = gsl_stats_mean(v, 1, n);
	p.p50 = gsl_stats_quantile_from_sorted_data(v, 1, n, 0.50);
	p.p90 = gsl_stats_quantile_from_sorted_data(v, 1, n, 0.90);
	p.p99 = gsl_stats_quantile_from_sorted_data(v, 1, n, 0.99);
	return p;
}

/* The weighted quantiles over samples sorted by duration: the radix sort when every weight is a
 * whole number and their total is below 2^52, so that every running sum is exact and the same
 * whatever order equal durations come in (the answer is then the one GSL's order gives); else
 * GSL's index sort.  0, or PP_ENOMEM. */
static int
weighted_quantiles(const double *d, const double *w, size_t n, double tot, double *const outs[3])
{
	const double qs[3] = {0.5, 0.9, 0.99};
	bool whole = n >= RADIX_MIN && tot < 4503599627370496.0 && radix_ok(d, n);
	for (size_t i = 0; i < n && whole; i++)
		whole = w[i] >= 0 && w[i] == floor(w[i]);
	uint64_t *k = whole ? malloc(2 * n * sizeof *k) : NULL;
	double *sw = k != NULL ? malloc(2 * n * sizeof *sw) : NULL;
	if (sw != NULL) {
		for (size_t i = 0; i < n; i++) {
			k[i] = dkey(d[i]);
			sw[i] = w[i];
		}
		radix_sort(k, sw, k + n, sw + n, n);
		for (int q = 0; q < 3; q++) {
			double acc = 0, goal = qs[q] * tot;
			for (size_t i = 0; i < n; i++) {
				acc += sw[i];
				if (acc >= goal) {
					*outs[q] = kdouble(k[i]);
					break;
				}
			}
		}
		free(k);
		free(sw);
		return 0;
	}
	free(k);
	size_t *idx = malloc(n * sizeof *idx);
	if (idx == NULL)
		return PP_ENOMEM;
	gsl_sort_index(idx, d, 1, n);
	for (int q = 0; q < 3; q++) {
		double acc = 0, goal = qs[q] * tot;
		for (size_t i = 0; i < n; i++) {
			acc += w[idx[i]];
			if (acc >= goal) {
				*outs[q] = d[idx[i]];
				break;
			}
		}
	}
	free(idx);
	return 0;
}

int
sim_percentiles_weighted(const double *d, const double *w, size_t n, sim_pct *out)
{
	sim_pct p = {0, 0, 0, 0};
	*out = p;
	if (n == 0)
		return 0;
	double tot = 0, sum = 0;
	for (size_t i = 0; i < n; i++) {
		tot += w[i];
		sum += w[i] * d[i];
	}
	p.mean = tot > 0 ? sum / tot : 0;
	double *outs[3] = {&p.p50, &p.p90, &p.p99};
	int rc = weighted_quantiles(d, w, n, tot, outs);
	if (rc != 0)
		return rc;
	*out = p;
	return 0;
}

static void
compute_metrics(run *r)
{
	const sim_serve_cfg *c = r->c;
	sim_serve_metrics *m = &r->res->m;
	int64_t n = r->nreq;
	double *ttft = malloc((size_t)n * sizeof *ttft), *tpot = malloc((size_t)n * sizeof *tpot);
	double *e2e = malloc((size_t)n * sizeof *e2e);
	if (ttft == NULL || tpot == NULL || e2e == NULL) {
		free(ttft), free(tpot), free(e2e);
		r->oom = true;
		return;
	}
	size_t nt = 0, np = 0;
	double first_arr = INFINITY, last_fin = 0, out_tok = 0, all_tok = 0;
	int64_t good = 0, done = 0;
	for (int64_t i = 0; i < n; i++) {
		reqst *q = &r->req[i];
		if (!q->done)
			continue;
		done++;
		double tf = q->first - q->arrival, te = q->finish - q->arrival;
		double tp = q->output > 1 ? (q->finish - q->first) / (double)(q->output - 1) : 0.0;
		ttft[nt] = tf;
		e2e[nt++] = te;
		if (q->output > 1)
			tpot[np++] = tp;
		if (q->arrival < first_arr)
			first_arr = q->arrival;
		if (q->finish > last_fin)
			last_fin = q->finish;
		out_tok += (double)q->output;
		all_tok += (double)(q->prompt + q->output);
		bool ok = (c->slo_ttft_s <= 0 || tf <= c->slo_ttft_s) && (c->slo_tpot_s <= 0 || tp <= c->slo_tpot_s) &&
			  (c->slo_e2e_s <= 0 || te <= c->slo_e2e_s);
		good += ok;
	}
	m->completed = done;
	m->offered = n;
	m->preemptions = r->preempt;
	m->ttft = sim_percentiles(ttft, nt);
	m->e2e = sim_percentiles(e2e, nt);
	m->tpot = sim_percentiles(tpot, np);
	if (itl_percentiles(r, &m->itl) != 0)
		r->oom = true;
	double span = last_fin - (isfinite(first_arr) ? first_arr : 0.0);
	m->makespan_s = last_fin;
	m->sim_time_s = r->now;
	if (span > 0) {
		m->requests_per_s = (double)done / span;
		m->output_tokens_per_s = out_tok / span;
		m->total_tokens_per_s = all_tok / span;
		m->goodput_requests_per_s = (double)good / span;
	}
	m->slo_attainment = done > 0 ? (double)good / (double)done : 0.0;
	m->gpus = c->replicas * c->tp * c->pp;
	m->output_tokens_per_s_per_gpu = m->output_tokens_per_s / (double)m->gpus;
	double kvw = 0, kvp = 0;
	for (int k = 0; k < r->nrep; k++) {
		kv_account(&r->rep[k], r->now);
		kvw += r->now > 0 ? r->rep[k].kv_time_weighted / r->now : 0;
		if (r->rep[k].kv_peak > kvp)
			kvp = r->rep[k].kv_peak;
	}
	m->kv_utilization_mean = kvw / r->nrep;
	m->kv_utilization_peak = kvp;
	if (c->price > 0 && m->output_tokens_per_s > 0) {
		double usd_per_s = c->price * (double)m->gpus / 3600.0;
		m->usd_per_million_output_tokens = usd_per_s / m->output_tokens_per_s * 1e6;
		m->usd_per_million_tokens = usd_per_s / m->total_tokens_per_s * 1e6;
	}
	free(ttft), free(tpot), free(e2e);
}

/* ---- the run ------------------------------------------------------------------------------- */

static void
make_requests(run *r)
{
	const sim_serve_cfg *c = r->c;
	gsl_rng *ra = gsl_rng_alloc(gsl_rng_mt19937), *rp = gsl_rng_alloc(gsl_rng_mt19937),
		*ro = gsl_rng_alloc(gsl_rng_mt19937);
	/* one stream per purpose, seeded apart so changing one distribution leaves the others */
	gsl_rng_set(ra, c->seed * 3 + 1);
	gsl_rng_set(rp, c->seed * 3 + 2);
	gsl_rng_set(ro, c->seed * 3 + 3);
	double t = 0.0;
	for (int64_t i = 0; i < r->nreq; i++) {
		reqst *q = &r->req[i];
		memset(q, 0, sizeof *q);
		q->decode_replica = -1;
		if (c->arrival == SIM_ARR_TRACE) {
			q->arrival = c->trace[i].arrival_s;
			q->prompt = c->trace[i].prompt;
			q->output = c->trace[i].output;
			continue;
		}
		switch (c->arrival) {
		case SIM_ARR_POISSON:
			t += gsl_ran_exponential(ra, 1.0 / c->rate);
			break;
		case SIM_ARR_GAMMA: {
			double shape = 1.0 / (c->arrival_param * c->arrival_param);
			t += gsl_ran_gamma(ra, shape, 1.0 / (c->rate * shape));
			break;
		}
		default:
			t = 0.0;
		}
		q->arrival = t;
		q->prompt = draw(&c->prompt, rp);
		q->output = draw(&c->output, ro);
	}
	gsl_rng_free(ra);
	gsl_rng_free(rp);
	gsl_rng_free(ro);
}

void
sim_serve_result_free(sim_serve_result *r)
{
	if (r == NULL)
		return;
	free(r->iters);
	free(r);
}

const sim_serve_metrics *
sim_serve_get_metrics(const sim_serve_result *r)
{
	return &r->m;
}

int
sim_serve_check(const model *m, const hw_system *sys, sim_serve_cfg *c, int64_t *nreq_out, sim_serve_mem *mem_out,
		char *err, size_t errlen)
{
	const model_tf *t = model_transformer(m);
	if (t == NULL)
		return pp_err(err, errlen, PP_EUSAGE, "%s is not a language model: serving simulates transformers", model_name(m));
	if (model_hybrid_pattern(m) != NULL) /* its layers are priced as one representative each */
		return pp_err(err, errlen, PP_EUSAGE, "%s is a hybrid Mamba/attention model: serving it is not modelled yet",
			      model_name(m));
	/* The bounds are the command line's: callers that build configurations themselves (the
	 * validation rows, the planner) get the same limits. */
	if (c->tp < 1 || c->pp < 1 || c->tp > 1024 || c->pp > 1024 || c->replicas < 1 || c->replicas > 100000)
		return pp_err(err, errlen, PP_EUSAGE,
			      "--tp and --pp must be from 1 to 1024 and --replicas from 1 to 100000, got %d, %d and %d", c->tp,
			      c->pp, c->replicas);
	if (!c->attention_dp && t->heads % c->tp != 0)
		return pp_err(err, errlen, PP_EUSAGE, "attention heads (%lld) must be divisible by tp (%d)", (long long)t->heads,
			      c->tp);
	if (c->ep < 0 || c->ep > 1024)
		return pp_err(err, errlen, PP_EUSAGE, "--ep must be from 1 to 1024, got %d", c->ep);
	if (c->ep > 1 && t->experts <= 0)
		return pp_err(err, errlen, PP_EUSAGE, "--ep %d: %s has no experts (expert parallelism is for MoE models)", c->ep,
			      model_name(m));
	if (c->ep > 1 && (c->tp % c->ep != 0 || t->experts % c->ep != 0))
		return pp_err(err, errlen, PP_EUSAGE,
			      "--ep %d must divide the replica's GPUs per stage (--tp %d) and the experts (%lld)", c->ep, c->tp,
			      (long long)t->experts);
	if (c->attention_dp && (t->experts <= 0 || c->ep < 2))
		return pp_err(err, errlen, PP_EUSAGE,
			      "--attention-dp needs a MoE model and --ep of at least 2 (its MoE layers gather every rank's "
			      "tokens by the all-to-all)");
	if (c->attention_dp && (c->prefill_replicas > 0 || c->decode_replicas > 0))
		return pp_err(err, errlen, PP_EUSAGE, "--attention-dp with --disaggregate is not modelled yet");
	if (c->moe_imbalance != 0 && !(c->moe_imbalance >= 1.0 && c->moe_imbalance <= 64.0))
		return pp_err(err, errlen, PP_EUSAGE, "--moe-imbalance must be from 1 to 64, got %g", c->moe_imbalance);
	if (c->pp > t->layers)
		return pp_err(err, errlen, PP_EUSAGE, "pp (%d) exceeds the layers (%lld)", c->pp, (long long)t->layers);
	if ((unsigned)c->chunked > SIM_CHUNKED_OFF)
		return pp_err(err, errlen, PP_EUSAGE, "chunked prefill must be the engine's, on or off");
	int64_t longest = sim_serve_longest_prompt(c);
	if (c->max_batched_tokens > 0 && longest > c->max_batched_tokens && sim_serve_prefill(c) == HW_EN_PREFILL_MIXED)
		return pp_err(err, errlen, PP_EUSAGE,
			      "prompts of up to %lld tokens exceed the token budget of an iteration (--max-batched-tokens %lld), "
			      "and %s runs whole prompts beside the decodes: raise --max-batched-tokens to at least %lld, or "
			      "add --chunked-prefill on",
			      (long long)longest, (long long)c->max_batched_tokens, c->engine.name, (long long)longest);
	if (c->max_batched_tokens == 0 && sim_serve_budget(c) > SERVE_MAX_TOKENS)
		return pp_err(err, errlen, PP_EUSAGE,
			      "prompts of up to %lld tokens exceed the largest iteration modelled (%lld tokens), and %s runs "
			      "whole prompts beside the decodes: add --chunked-prefill on, or shorten --prompt-len",
			      (long long)longest, (long long)SERVE_MAX_TOKENS, c->engine.name);
	c->max_num_seqs = eff_seqs(c);
	c->max_batched_tokens = sim_serve_budget(c);
	/* the mode in force, resolved once: the iterations read the engine's */
	c->engine.prefill = sim_serve_prefill(c);
	c->chunked = SIM_CHUNKED_ENGINE;
	const sim_engine *e = &c->engine;
	if (!(e->gemm_scale > 0) || !(e->attn_scale > 0) || !(e->decode_scale > 0) || e->sched_steps < 1 ||
	    !(e->sched_s >= 0) || !(e->sched_seq_s >= 0) || !(e->launch_s >= 0) || e->graph_max < 0)
		return pp_err(err, errlen, PP_EUSAGE, "engine \"%s\": its kernel scales must be positive and its host times "
			      "and graph sizes not negative", e->name);
	if (c->max_num_seqs < 1 || c->max_batched_tokens < 1 || c->block_size < 1 || c->max_num_seqs > (1 << 20) ||
	    c->max_batched_tokens > SERVE_MAX_TOKENS || c->block_size > 4096)
		return pp_err(err, errlen, PP_EUSAGE,
			      "--max-num-seqs must be from 1 to %d and --max-batched-tokens from 1 to %lld, got %d and %lld",
			      1 << 20, (long long)SERVE_MAX_TOKENS, c->max_num_seqs, (long long)c->max_batched_tokens);
	if (!(c->gpu_memory_utilization > 0 && c->gpu_memory_utilization <= 1))
		return pp_err(err, errlen, PP_EUSAGE, "GPU memory utilization must be in (0, 1]");
	if (c->arrival != SIM_ARR_BATCH && c->arrival != SIM_ARR_CLOSED && c->arrival != SIM_ARR_TRACE &&
	    (!(c->rate > 0) || c->rate > 1e7))
		return pp_err(err, errlen, PP_EUSAGE, "--rate must be a positive number of requests per second, got %g", c->rate);
	if (c->prefill_replicas > 0 || c->decode_replicas > 0) {
		if (c->prefill_replicas < 1 || c->decode_replicas < 1)
			return pp_err(err, errlen, PP_EUSAGE, "--disaggregate P:D needs at least one replica of each");
		c->replicas = c->prefill_replicas + c->decode_replicas;
	}
	if (c->weights != HW_BF16 && c->weights != HW_FP16 && c->weights != HW_FP8 && c->weights != HW_INT8 &&
	    c->weights != HW_INT4 && c->weights != HW_FP4)
		return pp_err(err, errlen, PP_EUSAGE, "--weights must be bf16, fp8, fp4, int8 or int4");
	if ((c->weights == HW_FP8 || c->weights == HW_FP4) && !(sys->gpu.peak_tflops[HW_FP8] > 0))
		return pp_err(err, errlen, PP_EUSAGE, "--weights %s: %s has no fp8 tensor cores: use int8 or int4 weights",
			      hw_dtype_name(c->weights), sys->gpu.name);
	if (c->weights == HW_FP4 && !(sys->gpu.peak_tflops[HW_FP4] > 0))
		return pp_err(err, errlen, PP_EUSAGE, "--weights fp4: %s has no fp4 tensor cores (NVFP4 needs Blackwell): use "
			      "fp8 or int4 weights", sys->gpu.name);
	if (c->kv_dtype != HW_BF16 && c->kv_dtype != HW_FP16 && c->kv_dtype != HW_FP8)
		return pp_err(err, errlen, PP_EUSAGE, "--kv-dtype must be bf16 or fp8");
	if (!(c->prefix_hit >= 0.0 && c->prefix_hit < 1.0))
		return pp_err(err, errlen, PP_EUSAGE, "--prefix-hit must be from 0 to below 1, got %g", c->prefix_hit);
	if (c->spec != SIM_SPEC_OFF &&
	    (c->spec_tokens < 1 || c->spec_tokens > SIM_SPEC_MAX_TOKENS || !(c->spec_accept >= 0.0 && c->spec_accept <= 1.0)))
		return pp_err(err, errlen, PP_EUSAGE,
			      "speculative decoding needs --spec-tokens from 1 to %d and --spec-accept from 0 to 1",
			      SIM_SPEC_MAX_TOKENS);
	/* Counted in double first: rate x duration of absurd flags must not overflow the cast. */
	double nreq_d = (double)c->requests;
	if (c->arrival == SIM_ARR_TRACE)
		nreq_d = (double)c->ntrace;
	else if (c->requests <= 0)
		nreq_d = ceil(c->rate * c->duration_s);
	if (!(nreq_d >= 1) || nreq_d > SERVE_MAX_REQUESTS)
		return pp_err(err, errlen, PP_EUSAGE, "the run must have from 1 to %d requests, got %.0f", SERVE_MAX_REQUESTS,
			      nreq_d);
	int64_t nreq = (int64_t)nreq_d;
	sim_serve_mem memv, *mem = mem_out ? mem_out : &memv;
	int rc = sim_serve_memory(m, sys, c, mem, err, errlen);
	if (rc != 0)
		return rc;
	if (!mem->fits)
		return pp_err(err, errlen, PP_EUSAGE,
			      "%s does not fit on %d GPU(s) of %s with %s weights: %.1f GiB of weights and %.1f GiB of "
			      "activations per GPU leave no KV cache in %.1f GiB; raise --tp or --pp or quantize",
			      model_name(m), c->tp * c->pp, sys->name, hw_dtype_name(c->weights), mem->weights / 1073741824.0,
			      mem->activations / 1073741824.0, mem->capacity * c->gpu_memory_utilization / 1073741824.0);
	if (nreq_out)
		*nreq_out = nreq;
	return 0;
}

int
sim_serve(const model *m, const hw_cost *cost, const sim_serve_cfg *cin, sim_serve_result **out, char *err,
	  size_t errlen)
{
	*out = NULL;
	sim_serve_cfg cfgv = *cin;
	sim_serve_cfg *c = &cfgv;
	const hw_system *sys = hw_cost_system(cost);
	int64_t nreq;
	sim_serve_mem mem;
	int rc = sim_serve_check(m, sys, c, &nreq, &mem, err, errlen);
	if (rc != 0)
		return rc;
	/* a request longer than one replica's whole cache can never run */
	int64_t maxlen = 0;
	run r;
	memset(&r, 0, sizeof r);
	r.m = m;
	r.c = c;
	r.nreq = nreq;
	/* A replica of pp stages keeps a batch in each stage, as the engines run pipeline
	 * parallelism: each stage works on a different one, and a batch's iteration passes every
	 * stage.  It runs as pp replicas of the full iteration, each with a pp-th of its KV cache
	 * (disaggregated prefill and decode replicas keep one batch a replica). */
	int ways = c->prefill_replicas == 0 ? c->pp : 1;
	r.nrep = c->replicas * ways;
	r.req = calloc((size_t)nreq, sizeof *r.req);
	r.rep = calloc((size_t)r.nrep, sizeof *r.rep);
	r.res = calloc(1, sizeof *r.res);
	r.ic.nlin = (size_t)c->max_batched_tokens + 1; /* an attention rank's tokens at most */
	r.ic.nhead = (size_t)c->max_num_seqs + (size_t)c->max_batched_tokens + 1;
	r.ic.lin = malloc(r.ic.nlin * sizeof *r.ic.lin);
	r.ic.head = malloc(r.ic.nhead * sizeof *r.ic.head);
	if (r.req == NULL || r.rep == NULL || r.res == NULL || r.ic.lin == NULL || r.ic.head == NULL) {
		rc = pp_err(err, errlen, PP_ENOMEM, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < r.ic.nlin; i++)
		r.ic.lin[i] = -1;
	for (size_t i = 0; i < r.ic.nhead; i++)
		r.ic.head[i] = -1;
	icost_init(&r.ic, m, cost, c);
	if (c->spec != SIM_SPEC_OFF) {
		/* its own stream: a run without speculation draws exactly as before */
		if ((r.rs = gsl_rng_alloc(gsl_rng_mt19937)) == NULL) {
			rc = pp_err(err, errlen, PP_ENOMEM, "out of memory");
			goto done;
		}
		gsl_rng_set(r.rs, (unsigned long)(c->seed * 3 + 3) ^ 0x5eedUL << 20);
	}
	int dom = sys->scaleup_domain > 0 ? sys->scaleup_domain : sys->gpus_per_node;
	r.ic.tp_per_node = c->tp < dom ? c->tp : dom;
	icost_count(&r.ic);
	make_requests(&r);
	for (int64_t i = 0; i < nreq; i++)
		if (r.req[i].prompt + r.req[i].output > maxlen)
			maxlen = r.req[i].prompt + r.req[i].output;
	int64_t way_blocks = mem.kv_blocks / ways;
	if (maxlen > way_blocks * c->block_size) {
		rc = pp_err(err, errlen, PP_EUSAGE,
			    "a request of %lld tokens exceeds one replica's KV cache (%lld tokens%s): use more GPUs per replica",
			    (long long)maxlen, (long long)(way_blocks * c->block_size),
			    ways > 1 ? ", a share of one of its pipeline's batches" : "");
		goto done;
	}
	for (int k = 0; k < r.nrep; k++) {
		replica *p = &r.rep[k];
		p->kind = c->prefill_replicas > 0 ? (k < c->prefill_replicas ? R_PREFILL : R_DECODE) : R_UNIFIED;
		p->blocks = p->free_blocks = way_blocks * att_dp(c); /* each attention rank's own cache */
	}
	r.res->cfg = *c;
	pp_strlcpy(r.res->model, model_name(m), sizeof r.res->model);
	pp_strlcpy(r.res->system, sys->name, sizeof r.res->system);
	if (c->arrival == SIM_ARR_CLOSED) {
		int64_t conc = (int64_t)c->arrival_param;
		if (conc > nreq)
			conc = nreq;
		for (int64_t i = 0; i < conc; i++)
			push_ev(&r, 0.0, EV_ARRIVE, i, 0);
		r.next_arrival = conc;
	} else {
		for (int64_t i = 0; i < nreq; i++)
			push_ev(&r, r.req[i].arrival, EV_ARRIVE, i, 0);
		r.next_arrival = nreq;
	}
	size_t backlog_at_last = 0;
	int64_t arrived = 0;
	while (r.nheap > 0 && !r.oom) {
		event ev = pop_ev(&r);
		r.now = ev.t;
		if (ev.type == EV_ARRIVE) {
			arrive(&r, ev.a);
			arrived++;
			if (arrived == nreq && c->arrival != SIM_ARR_CLOSED) {
				for (int k = 0; k < r.nrep; k++)
					backlog_at_last += r.rep[k].wlen;
			}
		} else if (ev.type == EV_ITER) {
			end_iteration(&r, (int)ev.a);
			start_iteration(&r, (int)ev.a);
		} else {
			/* a handed-over cache arrives at its decode replica */
			wait_push(&r, &r.rep[ev.b], ev.a, false);
			start_iteration(&r, ev.b);
		}
	}
	if (r.oom) {
		rc = pp_err(err, errlen, PP_ENOMEM, "out of memory while simulating");
		goto done;
	}
	for (int64_t i = 0; i < nreq; i++)
		if (!r.req[i].done) {
			rc = pp_err(err, errlen, PP_EINPUT, "serving stalled with request %lld unfinished", (long long)i);
			goto done;
		}
	compute_metrics(&r);
	if (r.oom) {
		rc = pp_err(err, errlen, PP_ENOMEM, "out of memory while computing the metrics");
		goto done;
	}
	sim_serve_metrics *mt = &r.res->m;
	mt->mem = mem;
	mt->iterations = r.iterations;
	mt->spec_tokens_per_step = r.spec_steps > 0 ? (double)r.spec_emitted / (double)r.spec_steps : 0.0;
	mt->concurrency_mean = mt->makespan_s > 0 ? r.in_system_area / mt->makespan_s : 0.0;
	/* Saturation: the queue at the last arrival held more than 5% of the requests (at least 10):
	 * arrivals outran the service and latency grows with the run. */
	mt->saturated = c->arrival != SIM_ARR_BATCH && c->arrival != SIM_ARR_CLOSED &&
			(double)backlog_at_last > fmax(10.0, 0.05 * (double)nreq);
	*out = r.res;
	r.res = NULL;
done:
	for (int k = 0; r.rep && k < r.nrep; k++) {
		free(r.rep[k].wait);
		free(r.rep[k].run);
	}
	free(r.rep);
	free(r.req);
	free(r.heap);
	free(r.itl_d);
	free(r.itl_w);
	itl_hist_free(r.itlh);
	free(r.ic.lin);
	free(r.ic.head);
	if (r.rs)
		gsl_rng_free(r.rs);
	sim_serve_result_free(r.res);
	return rc;
}

/* ---- the run on a faster or slower engine ------------------------------------------------- */

int
sim_serve_metrics_of(const model *m, const hw_cost *cost, const sim_serve_cfg *c, sim_serve_metrics *out, char *err,
		     size_t errlen)
{
	sim_serve_result *r;
	int rc = sim_serve(m, cost, c, &r, err, errlen);
	if (rc != 0)
		return rc;
	*out = *sim_serve_get_metrics(r);
	sim_serve_result_free(r);
	return 0;
}

static void
scale_pct(sim_pct *p, double k)
{
	p->mean *= k, p->p50 *= k, p->p90 *= k, p->p99 *= k;
}

int
sim_serve_speed(const model *m, const hw_cost *cost, const sim_serve_cfg *c, const sim_serve_metrics *base,
		double f, sim_serve_metrics *out, char *err, size_t errlen)
{
	if (!(f > 0) || !isfinite(f))
		return pp_err(err, errlen, PP_EUSAGE, "an engine's speed factor must be a positive number, got %g", f);
	*out = *base;
	bool open = c->arrival == SIM_ARR_POISSON || c->arrival == SIM_ARR_GAMMA || c->arrival == SIM_ARR_TRACE;
	if (open || c->slo_ttft_s > 0 || c->slo_tpot_s > 0 || c->slo_e2e_s > 0) {
		sim_serve_cfg s = *c;
		sim_request *tr = NULL;
		s.rate = c->rate / f;
		s.requests = base->offered;
		s.keep_iterations = false;
		s.slo_ttft_s *= f, s.slo_tpot_s *= f, s.slo_e2e_s *= f;
		if (c->arrival == SIM_ARR_TRACE) {
			if ((tr = malloc((c->ntrace ? c->ntrace : 1) * sizeof *tr)) == NULL)
				return pp_err(err, errlen, PP_ENOMEM, "out of memory");
			for (size_t i = 0; i < c->ntrace; i++)
				tr[i] = c->trace[i], tr[i].arrival_s *= f;
			s.trace = tr;
		}
		char e2[256];
		int rc = sim_serve_metrics_of(m, cost, &s, out, e2, sizeof e2);
		free(tr);
		if (rc != 0)
			return pp_err(err, errlen, rc, "the run on an engine %.3g times as fast (the capacity band, the engine's "
				      "cap_err_p10 and cap_err_p90): %s", f, e2);
	}
	double k = 1.0 / f;
	scale_pct(&out->ttft, k), scale_pct(&out->tpot, k), scale_pct(&out->itl, k), scale_pct(&out->e2e, k);
	out->sim_time_s *= k, out->makespan_s *= k;
	out->requests_per_s *= f, out->output_tokens_per_s *= f, out->total_tokens_per_s *= f;
	out->output_tokens_per_s_per_gpu *= f, out->goodput_requests_per_s *= f;
	out->usd_per_million_output_tokens *= k, out->usd_per_million_tokens *= k;
	return 0;
}

int
sim_serve_offline(const model *m, const hw_cost *cost, const sim_serve_cfg *c, double min_s, int64_t max_per_replica,
		  sim_serve_metrics *out, int64_t *requests, char *err, size_t errlen)
{
	if (c->arrival != SIM_ARR_BATCH || c->replicas < 1 || c->requests < 1 || !(min_s >= 0) || max_per_replica < 1)
		return pp_err(err, errlen, PP_EUSAGE, "an Offline run is a batch of at least one request");
	/* Every request arrives at once and the router deals them out in turn, so each replica
	 * runs its share alone: one replica is simulated, and the deployment's rates are its own
	 * times the replicas (prefill and decode replicas hand sequences over: they run together). */
	bool split = c->prefill_replicas == 0 && c->decode_replicas == 0;
	int64_t nrep = split ? c->replicas : 1;
	sim_serve_cfg one = *c;
	one.replicas = (int)(split ? 1 : c->replicas);
	one.requests = (c->requests + nrep - 1) / nrep;
	if (one.requests > max_per_replica)
		one.requests = max_per_replica;
	for (int pass = 0;; pass++) {
		int rc = sim_serve_metrics_of(m, cost, &one, out, err, errlen);
		if (rc != 0)
			return rc;
		/* the query holds at least min_s of requests at the rate the first run reaches */
		double want = ceil(out->requests_per_s * min_s);
		if (pass > 0 || !(want > (double)one.requests) || one.requests >= max_per_replica)
			break;
		one.requests = want < (double)max_per_replica ? (int64_t)want : max_per_replica;
	}
	double k = (double)nrep;
	out->requests_per_s *= k, out->output_tokens_per_s *= k, out->total_tokens_per_s *= k;
	out->goodput_requests_per_s *= k, out->concurrency_mean *= k;
	out->preemptions *= nrep, out->completed *= nrep, out->offered *= nrep, out->iterations *= nrep;
	out->gpus *= (int)nrep;
	*requests = one.requests * nrep;
	return 0;
}

int
sim_serve_add_band(const model *m, const hw_cost *cost, sim_serve_result *r, char *err, size_t errlen)
{
	double f[2];
	r->banded = false;
	if (!sim_engine_speeds(&r->cfg.engine, f))
		return 0;
	for (int k = 0; k < 2; k++) {
		int rc = sim_serve_speed(m, cost, &r->cfg, &r->m, f[k], &r->band[k], err, errlen);
		if (rc != 0)
			return rc;
	}
	r->banded = true;
	return 0;
}

/* ---- output -------------------------------------------------------------------------------- */

/* The 80% interval of a prediction, when the engine has one: v, and b its values on the band's
 * engines (NULL: no band). */
static void
add_interval(cJSON *o, const char *k, const sim_serve_result *r, sim_iv_kind kind, double v, const double *b)
{
	double iv[2];
	sim_serve_interval_banded(&r->cfg.engine, kind, v, r->banded ? b : NULL, &iv[0], &iv[1]);
	if (isfinite(iv[0]) && isfinite(iv[1]))
		cJSON_AddItemToObject(o, k, cJSON_CreateDoubleArray(iv, 2));
}

static void
add_pct(cJSON *o, const char *k, const sim_pct *p)
{
	cJSON *x = cJSON_AddObjectToObject(o, k);
	cJSON_AddNumberToObject(x, "mean", p->mean);
	cJSON_AddNumberToObject(x, "p50", p->p50);
	cJSON_AddNumberToObject(x, "p90", p->p90);
	cJSON_AddNumberToObject(x, "p99", p->p99);
}

cJSON *
sim_serve_json(const sim_serve_result *r)
{
	const sim_serve_cfg *c = &r->cfg;
	const sim_serve_metrics *m = &r->m;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "kind", "serve");
	cJSON_AddStringToObject(o, "model", r->model);
	cJSON_AddStringToObject(o, "system", r->system);
	cJSON *cf = cJSON_AddObjectToObject(o, "config");
	cJSON_AddStringToObject(cf, "engine", c->engine.name);
	cJSON_AddNumberToObject(cf, "tp", c->tp);
	cJSON_AddNumberToObject(cf, "pp", c->pp);
	cJSON_AddNumberToObject(cf, "replicas", c->replicas);
	cJSON_AddNumberToObject(cf, "prefill_replicas", c->prefill_replicas);
	cJSON_AddNumberToObject(cf, "decode_replicas", c->decode_replicas);
	cJSON_AddNumberToObject(cf, "gpus", m->gpus);
	cJSON_AddNumberToObject(cf, "rate", c->rate);
	cJSON_AddNumberToObject(cf, "max_num_seqs", c->max_num_seqs);
	cJSON_AddNumberToObject(cf, "max_batched_tokens", (double)c->max_batched_tokens);
	cJSON_AddStringToObject(cf, "prefill", hw_pdef_choice_name(hw_pdef_get(HW_P_EN_PREFILL), c->engine.prefill));
	cJSON_AddStringToObject(cf, "weights", hw_dtype_name(c->weights));
	cJSON_AddStringToObject(cf, "kv_dtype", hw_dtype_name(c->kv_dtype));
	cJSON_AddNumberToObject(cf, "ep", c->ep > 1 ? c->ep : 1);
	cJSON_AddBoolToObject(cf, "attention_dp", c->attention_dp);
	cJSON_AddNumberToObject(cf, "moe_imbalance", c->moe_imbalance);
	{
		/* as digits: a double prints 2^53 with 15 significant digits, which does not reproduce it */
		char seed[24];
		snprintf(seed, sizeof seed, "%" PRIu64, (uint64_t)c->seed);
		cJSON_AddRawToObject(cf, "seed", seed);
	}
	if (c->prefix_hit > 0)
		cJSON_AddNumberToObject(cf, "prefix_hit", c->prefix_hit);
	if (c->spec != SIM_SPEC_OFF) {
		cJSON *sp = cJSON_AddObjectToObject(cf, "speculative");
		cJSON_AddStringToObject(sp, "method", sim_spec_names[c->spec]);
		cJSON_AddNumberToObject(sp, "tokens", c->spec_tokens);
		cJSON_AddNumberToObject(sp, "accept", c->spec_accept);
		cJSON_AddNumberToObject(sp, "expected_tokens_per_step", sim_spec_expected_tokens(c->spec_tokens, c->spec_accept));
	}
	cJSON_AddNumberToObject(cf, "requests", (double)m->offered);
	add_pct(o, "ttft_s", &m->ttft);
	add_pct(o, "tpot_s", &m->tpot);
	add_pct(o, "itl_s", &m->itl);
	add_pct(o, "e2e_s", &m->e2e);
	const sim_serve_metrics *b = r->band;
	add_interval(o, "ttft_mean_interval_s", r, SIM_IV_TTFT, m->ttft.mean, (double[2]){b[0].ttft.mean, b[1].ttft.mean});
	add_interval(o, "tpot_mean_interval_s", r, SIM_IV_TPOT, m->tpot.mean, (double[2]){b[0].tpot.mean, b[1].tpot.mean});
	cJSON_AddNumberToObject(o, "requests_per_s", m->requests_per_s);
	cJSON_AddNumberToObject(o, "output_tokens_per_s", m->output_tokens_per_s);
	/* the throughput's interval where the throughput is the engine's speed: all requests at once, a
	 * closed loop, or arrivals it could not keep up with; or where the band's runs say how far it
	 * could be from the rate offered */
	if (r->banded || c->arrival == SIM_ARR_BATCH || c->arrival == SIM_ARR_CLOSED || m->saturated)
		add_interval(o, "output_tokens_per_s_interval", r, SIM_IV_TPUT, m->output_tokens_per_s,
			     (double[2]){b[0].output_tokens_per_s, b[1].output_tokens_per_s});
	cJSON_AddNumberToObject(o, "total_tokens_per_s", m->total_tokens_per_s);
	cJSON_AddNumberToObject(o, "output_tokens_per_s_per_gpu", m->output_tokens_per_s_per_gpu);
	cJSON *slo = cJSON_AddObjectToObject(o, "slo");
	cJSON_AddNumberToObject(slo, "ttft_s", c->slo_ttft_s);
	cJSON_AddNumberToObject(slo, "tpot_s", c->slo_tpot_s);
	cJSON_AddNumberToObject(slo, "e2e_s", c->slo_e2e_s);
	cJSON_AddNumberToObject(o, "goodput_requests_per_s", m->goodput_requests_per_s);
	cJSON_AddNumberToObject(o, "slo_attainment", m->slo_attainment);
	cJSON_AddNumberToObject(o, "kv_utilization_mean", m->kv_utilization_mean);
	cJSON_AddNumberToObject(o, "kv_utilization_peak", m->kv_utilization_peak);
	cJSON_AddNumberToObject(o, "concurrency_mean", m->concurrency_mean);
	cJSON_AddNumberToObject(o, "preemptions", (double)m->preemptions);
	if (c->spec != SIM_SPEC_OFF)
		cJSON_AddNumberToObject(o, "spec_tokens_per_step", m->spec_tokens_per_step);
	cJSON_AddBoolToObject(o, "saturated", m->saturated);
	if (c->price > 0) {
		cJSON_AddNumberToObject(o, "price_usd_per_gpu_hour", c->price);
		cJSON_AddNumberToObject(o, "usd_per_million_output_tokens", m->usd_per_million_output_tokens);
		cJSON_AddNumberToObject(o, "usd_per_million_tokens", m->usd_per_million_tokens);
	}
	cJSON *mem = cJSON_AddObjectToObject(o, "memory_per_gpu");
	cJSON_AddNumberToObject(mem, "weights_bytes", m->mem.weights);
	cJSON_AddNumberToObject(mem, "activations_bytes", m->mem.activations);
	cJSON_AddNumberToObject(mem, "reserve_bytes", m->mem.reserve);
	cJSON_AddNumberToObject(mem, "kv_cache_bytes", m->mem.kv_bytes);
	cJSON_AddNumberToObject(mem, "kv_cache_tokens", (double)m->mem.kv_tokens);
	cJSON_AddNumberToObject(mem, "capacity_bytes", m->mem.capacity);
	cJSON *sim = cJSON_AddObjectToObject(o, "simulation");
	cJSON_AddNumberToObject(sim, "completed", (double)m->completed);
	cJSON_AddNumberToObject(sim, "iterations", (double)m->iterations);
	cJSON_AddNumberToObject(sim, "simulated_s", m->sim_time_s);
	return o;
}

int
sim_serve_trace(const sim_serve_result *r, const char *path, char *err, size_t errlen)
{
	if (!r->cfg.keep_iterations)
		return pp_err(err, errlen, PP_EUSAGE, "no iterations were recorded");
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "schema", SIM_TRACE_SCHEMA);
	cJSON *ev = cJSON_AddArrayToObject(root, "traceEvents");
	for (int k = 0; k < r->cfg.replicas; k++) {
		cJSON *p = cJSON_CreateObject();
		cJSON_AddStringToObject(p, "name", "process_name");
		cJSON_AddStringToObject(p, "ph", "M");
		cJSON_AddNumberToObject(p, "pid", k);
		cJSON *a = cJSON_AddObjectToObject(p, "args");
		char nm[48];
		snprintf(nm, sizeof nm, "replica %d", k);
		cJSON_AddStringToObject(a, "name", nm);
		cJSON_AddItemToArray(ev, p);
	}
	for (size_t i = 0; i < r->niters; i++) {
		const iterrec *it = &r->iters[i];
		cJSON *x = cJSON_CreateObject();
		char nm[64];
		snprintf(nm, sizeof nm, "iteration: %d decode, %d prefill tokens", it->decode, it->prefill_tokens);
		cJSON_AddStringToObject(x, "name", nm);
		cJSON_AddStringToObject(x, "ph", "X");
		cJSON_AddNumberToObject(x, "ts", it->start * 1e6);
		cJSON_AddNumberToObject(x, "dur", it->dur * 1e6);
		cJSON_AddNumberToObject(x, "pid", it->replica);
		cJSON_AddNumberToObject(x, "tid", 0);
		cJSON_AddItemToArray(ev, x);
	}
	char *text = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (text == NULL)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	int rc = pp_write_file_atomic(path, text, strlen(text), err, errlen);
	free(text);
	return rc;
}
