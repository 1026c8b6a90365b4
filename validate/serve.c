/*
 * serve.c -- serving rows to runs: static batches, closed-loop concurrency and Poisson-rate runs
 * of a model on a GPU with a TP degree under the engine the row names (vLLM, SGLang,
 * TensorRT-LLM: their profiles), their throughput and latencies against what was measured; the
 * fit of each engine's few parameters over all of its rows on every GPU; and the
 * cross-validation that leaves one source family out of that fit and predicts it.
 */
#include "config.h"
#include "calibrate/cal.h"
#include "common/csv.h"
#include "sim/sim.h"
#include "validate/val_int.h"

#include <cJSON.h>
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- serving rows --------------------------------------------------------------------------- */

/* Requests simulated for an MLPerf run.  A run lasts at least ten minutes (loadgen/mlperf.conf
 * min_duration 600000 ms): an Offline run issues the dataset as often as that takes, a Server run
 * ten minutes of arrivals.  Fewer keep the cross-validation's hundreds of runs per fit within
 * minutes: an Offline batch of four full batches per replica (the drain at its end then a small
 * part of it), a Server run of two minutes of arrivals; at least 1024 (a P99 over 10 samples of
 * the tail), at most 8192. */
#define SERVE_MLPERF_MIN_REQUESTS 1024
#define SERVE_MLPERF_MAX_REQUESTS 8192
#define SERVE_MLPERF_RUN_S 600.0

static int64_t
mlperf_requests(double n)
{
	return n < SERVE_MLPERF_MIN_REQUESTS ? SERVE_MLPERF_MIN_REQUESTS
	       : n > SERVE_MLPERF_MAX_REQUESTS ? SERVE_MLPERF_MAX_REQUESTS : (int64_t)ceil(n);
}

/* An MLPerf Offline run's requests: four full batches per replica. */
static int64_t
offline_requests(const sim_serve_cfg *c)
{
	return mlperf_requests(4.0 * (c->max_num_seqs > 0 ? c->max_num_seqs : c->engine.max_num_seqs) * c->replicas);
}

/* Whether deployment a serves a row's workload better than b: under arrivals, the one that keeps
 * up, then the shorter mean end-to-end latency; a batch or a closed loop, the higher output
 * throughput. */
static bool
serve_better(const sim_serve_cfg *c, const sim_serve_metrics *a, const sim_serve_metrics *b)
{
	bool open = c->arrival != SIM_ARR_BATCH && c->arrival != SIM_ARR_CLOSED;
	if (open && a->saturated != b->saturated)
		return !a->saturated;
	if (open && !a->saturated)
		return a->e2e.mean < b->e2e.mean;
	return a->output_tokens_per_s > b->output_tokens_per_s;
}

/* ---- the engine settings a row states ---------------------------------------------------- *
 * MLPerf submissions and blog posts state their engines' batch limits in the notes or the engine
 * column, per scenario: "batch_size 896 (Server) / 806 (Offline)", "max_num_tokens 3584
 * (Offline/Server), 768 (Interactive)", "max_num_seqs 1792/650/600" (unlabelled: Offline,
 * Server, Interactive, the order the notes use), "num_scheduler_steps 7 (Offline)/9 (Server)",
 * "--max-num-seqs 1024".  A row runs with what it states, not the profile's defaults. */

/* The scenario a label names: 0 Offline, 1 Server, 2 Interactive; -1 none. */
static int
scenario_index(const char *s, size_t n)
{
	static const char *const names[] = {"offline", "server", "interactive"};
	for (int k = 0; k < 3; k++)
		if (n >= strlen(names[k]) && strncasecmp(s, names[k], strlen(names[k])) == 0)
			return k;
	return -1;
}

double
val_stated_setting(const char *text, const char *const *keys, int scen)
{
	for (size_t k = 0; keys[k] != NULL; k++) {
		size_t kl = strlen(keys[k]);
		for (const char *p = strstr(text, keys[k]); p != NULL; p = strstr(p + 1, keys[k])) {
			/* a whole key: "batch_size" is not the end of "max_batch_size" */
			if (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_' || (p[-1] == '-' && (p - text < 2 || p[-2] != '-'))))
				continue;
			const char *q = p + kl;
			if (isalnum((unsigned char)*q) || *q == '_')
				continue;
			while (*q == ' ' || *q == '=' || *q == ':')
				q++;
			double by[3] = {0, 0, 0}, single = 0;
			int groups = 0;
			bool labelled = false;
			while (isdigit((unsigned char)*q)) {
				double v[3];
				int nv = 0;
				while (isdigit((unsigned char)*q) && nv < 3) {
					v[nv++] = strtod(q, (char **)&q);
					if (*q == '/' && isdigit((unsigned char)q[1]))
						q++;
					else
						break;
				}
				const char *r = q;
				while (*r == ' ')
					r++;
				int lab[3], nl = 0;
				if (*r == '(') {
					r++;
					while (nl < 3) {
						size_t n = strcspn(r, "/)");
						int x = scenario_index(r, n);
						if (x < 0)
							break;
						lab[nl++] = x;
						r += n;
						if (*r != '/')
							break;
						r++;
					}
					if (nl > 0 && *r == ')')
						q = r + 1;
					else
						nl = 0;
				}
				if (nl > 0) {
					labelled = true;
					for (int i = 0; i < nl; i++)
						by[lab[i]] = nv == nl ? v[i] : v[0];
				} else if (nv == 1 && groups == 0) {
					single = v[0];
				} else {
					for (int i = 0; i < nv; i++)
						by[i] = v[i];
					labelled = true;
				}
				groups++;
				/* the next group: "/ 806 (Offline)", ", 768 (Interactive)", "/9 (Server)" */
				r = q;
				while (*r == ' ')
					r++;
				if ((*r == '/' || *r == ',') && nl > 0) {
					r++;
					while (*r == ' ')
						r++;
					if (isdigit((unsigned char)*r)) {
						q = r;
						continue;
					}
				}
				break;
			}
			if (!labelled && single > 0)
				return single;
			if (labelled && scen >= 0 && by[scen] > 0)
				return by[scen];
		}
	}
	return 0.0;
}

/* The engine settings a row may state, their keys as the notes and engine columns write them
 * and the values they may take: a value outside them is a mistake in the row, which is then
 * skipped with the reason (it used to run on the engine's default, unsaid). */
enum { SET_SEQS, SET_TOKENS, SET_STEPS, SET_MEMORY, NSETTINGS };
static const char *const seq_keys[] = {"max_num_seqs", "max-num-seqs", "max_batch_size", "batch_size", NULL};
static const char *const tok_keys[] = {"max_num_tokens", "max_num_batched_tokens", "max-num-batched-tokens", NULL};
static const char *const step_keys[] = {"num_scheduler_steps", "num-scheduler-steps", NULL};
/* vLLM's share of the GPU's memory its weights, activations and KV cache may take (Krai's
 * MLPerf v5.1 runs: "gpu_memory_utilization 0.95") */
static const char *const mem_keys[] = {"gpu_memory_utilization", "gpu-memory-utilization", NULL};
static const struct {
	const char *const *keys;
	double lo, hi; /* lo excluded for the memory share, included for the counts */
	bool whole;
} settings[NSETTINGS] = {
	[SET_SEQS] = {seq_keys, 1, 1 << 20, true},
	[SET_TOKENS] = {tok_keys, 1, 1 << 22, true},
	[SET_STEPS] = {step_keys, 1, 256, true},
	[SET_MEMORY] = {mem_keys, 0.1, 1.0, false},
};

/* The first engine setting the notes or the engine column state out of its range, as the
 * reason a row is skipped, into why; nothing when every stated one is in range. */
static void
settings_in_range(const char *notes, const char *ecell, const char *scen, char *why, size_t n)
{
	int si = scenario_index(scen, strlen(scen));
	for (int w = 0; w < 2; w++)
		for (int k = 0; k < NSETTINGS; k++) {
			double v = val_stated_setting(w ? ecell : notes, settings[k].keys, si);
			bool ok = settings[k].whole ? v >= settings[k].lo && v <= settings[k].hi && v == floor(v)
						    : v > settings[k].lo && v <= settings[k].hi;
			if (v > 0 && !ok) {
				if (settings[k].whole)
					snprintf(why, n, "the stated %s %.15g is not a whole number from %.15g to %.15g",
						 settings[k].keys[0], v, settings[k].lo, settings[k].hi);
				else
					snprintf(why, n, "the stated %s %.15g is not above %.15g and at most %.15g",
						 settings[k].keys[0], v, settings[k].lo, settings[k].hi);
				return;
			}
		}
}

/* The whole number at p ("64", "64 (tuned)", "64,"), or 0 when p holds none or a number that is
 * not whole ("1e308", "1.5": strtoll read them as 1); saturates at INT64_MAX, not overflowing. */
static int64_t
count_at(const char *p)
{
	char *end;
	long long v = strtoll(p, &end, 10);
	if (end == p || *end == '.' || *end == 'e' || *end == 'E' || *end == 'x' || *end == 'X')
		return 0;
	return (int64_t)v;
}

/* The units a serving row's metric is written in: throughputs per second, latencies in
 * milliseconds, a benchmark's duration in seconds (the published files' units). */
static const char *
serve_units(bool tput, bool reqs, bool dur)
{
	return tput ? "tokens/s|tok/s" : reqs ? "requests/s|req/s|samples/s" : dur ? "s" : "ms";
}

/* The catalog model of a row's model name: a catalog name ('paraplan model list'), or as the
 * published results spell it. */
static const char *
serve_model_of(const char *name)
{
	for (size_t i = 0; i < model_catalog_count(); i++)
		if (!strcmp(name, model_catalog_name(i)))
			return model_catalog_name(i);
	if (val_has(name, "Llama-2-70B"))
		return "llama-2-70b";
	if (val_has(name, "405B"))
		return "llama-3-405b"; /* Llama 3.1 405B: the Llama 3 405B dimensions */
	if (val_has(name, "70B"))
		return "llama-3-70b"; /* Llama 3 and 3.1 70B share their dimensions */
	if (val_has(name, "LLaMA-7B") || val_has(name, "Llama-2-7B"))
		return "llama-2-7b"; /* LLaMA 1 7B: the Llama 2 7B dimensions */
	if (val_has(name, "8B") && !val_has(name, "8x"))
		return "llama-3-8b";
	if (val_has(name, "Mixtral-8x7B"))
		return "mixtral-8x7b";
	if (val_has(name, "gpt-oss-20b"))
		return "gpt-oss-20b";
	if (val_has(name, "DeepSeek-R1"))
		return "deepseek-r1";
	return NULL;
}

/* The system of a row's GPU: its 8-GPU server (one GPU for the GH200 superchip). */
static const char *
serve_system_of(const char *gpu)
{
	if (val_has(gpu, "GH200"))
		return "gh200";
	if (val_has(gpu, "GB200"))
		return "gb200-nvl72";
	if (val_has(gpu, "B200"))
		return "dgx-b200";
	if (val_has(gpu, "H200"))
		return "hgx-h200";
	if (val_has(gpu, "H100"))
		return "dgx-h100";
	if (val_has(gpu, "MI325X"))
		return "mi325x-8";
	if (val_has(gpu, "MI300X"))
		return "mi300x-8";
	if (val_has(gpu, "A100"))
		return "dgx-a100";
	if (val_has(gpu, "L40S"))
		return "pcie-l40sx8";
	return NULL;
}

/* The minor version of "NAME 0.N" or "NAME v0.N" in s, or -1. */
static long
version_minor(const char *s, const char *name)
{
	for (const char *v = strstr(s, name); v != NULL; v = strstr(v + 1, name)) {
		const char *p = v + strlen(name);
		if (*p++ != ' ')
			continue;
		p += *p == 'v';
		if (p[0] == '0' && p[1] == '.' && isdigit((unsigned char)p[2]))
			return strtol(p + 2, NULL, 10);
	}
	return -1;
}

/* The engine profile of a row's engine column (its source's for TensorRT-LLM's version):
 * TensorRT-LLM (before 0.8, without the XQA kernel: trtllm-v0), SGLang, vLLM (V0 below 0.7:
 * the V1 engine became the default in 0.8; no version: V1 unless dated 2023 or 2024), else
 * none. */
static const char *
serve_engine_of(const char *e, const char *src)
{
	if (val_has(e, "TensorRT")) {
		long minor = version_minor(e, "TensorRT-LLM");
		if (minor < 0)
			minor = version_minor(src, "TensorRT-LLM");
		return minor >= 0 && minor < 8 ? "trtllm-v0" : "trtllm";
	}
	if (val_has(e, "SGLang"))
		return "sglang";
	if (val_has(e, "vLLM")) {
		long minor = version_minor(e, "vLLM");
		if (minor >= 0)
			return minor < 8 ? "vllm-v0" : "vllm";
		/* no version, but a date before V1 (January 2025) */
		return val_has(e, "2023") || val_has(e, "2024") ? "vllm-v0" : "vllm";
	}
	return NULL;
}

/* The named dataset (sim/dataset.c) of a length column, or NULL: the MLPerf datasets as the
 * rows name them, ShareGPT as vLLM's benchmark filters it. */
static const sim_dataset *
serve_dataset_of(const char *s)
{
	if (val_has(s, "ShareGPT"))
		return sim_dataset_find("sharegpt");
	if (!val_has(s, "MLPerf"))
		return NULL;
	if (val_has(s, "llama2-70b"))
		return sim_dataset_find("mlperf-llama2-70b");
	if (val_has(s, "llama3.1-405b"))
		return sim_dataset_find("mlperf-llama3.1-405b");
	if (val_has(s, "llama3.1-8b"))
		return sim_dataset_find("mlperf-llama3.1-8b");
	if (val_has(s, "mixtral-8x7b"))
		return sim_dataset_find("mlperf-mixtral-8x7b");
	if (val_has(s, "deepseek-r1"))
		return sim_dataset_find("mlperf-deepseek-r1");
	return NULL;
}

/* A length column: a number ("500", "~20k"), or a dataset's stated mean; 0 when not stated. */
static double
serve_len_of(const char *s, bool output)
{
	const sim_dataset *d = serve_dataset_of(s);
	if (d != NULL)
		return output ? d->output.mean : d->prompt.mean;
	const char *p = s;
	while (*p == '~' || *p == ' ')
		p++;
	char *end;
	double v = strtod(p, &end);
	if (end == p || !(v > 0))
		return 0.0;
	if (*end == 'k' || *end == 'K')
		v *= 1000.0;
	return v;
}

/* A length column's stated spread, "~20k (+-15%)": 0.15, each length drawn uniformly within 15%
 * of the stated one (vllm bench serve's random dataset, --random-range-ratio); 0 when none is
 * stated or it is not from 0 to 100%. */
static double
serve_len_spread(const char *s)
{
	const char *p = strstr(s, "+-");
	if (p == NULL)
		p = strstr(s, "\u00b1"); /* the sign as UTF-8 */
	if (p == NULL)
		return 0.0;
	p += 2; /* "+-" and the sign's UTF-8 are two bytes each */
	char *end;
	double v = strtod(p, &end);
	if (end == p || *end != '%' || !(v > 0) || !(v < 100))
		return 0.0;
	return v / 100.0;
}

/* A fixed length made uniform within a stated share of it (nothing for 0) */
static void
spread_len(sim_dist *d, double share)
{
	if (!(share > 0) || d->kind != SIM_DIST_FIXED)
		return;
	d->kind = SIM_DIST_UNIFORM;
	d->a = fmax(1.0, floor(d->mean * (1.0 - share)));
	d->b = ceil(d->mean * (1.0 + share));
	d->mean = (d->a + d->b) / 2.0;
}

/* An MLPerf run's measured mean output length: its "output tokens/s" over its "requests/s" (the
 * log's tokens and samples per second, rows of the same source); 0 when the file lacks either. */
static double
serve_run_output_len(const pp_csv *t, int srccol, int metcol, int valcol, const char *src)
{
	double tok = 0, req = 0;
	for (size_t r = 1; r < t->nrows; r++) {
		if (strcmp(pp_csv_get(t, r, srccol), src) != 0)
			continue;
		const char *metric = pp_csv_get(t, r, metcol);
		double v;
		if (pp_parse_double(pp_csv_get(t, r, valcol), &v) != 0 || !(v > 0))
			continue;
		if (!strcmp(metric, "output tokens/s"))
			tok = v;
		else if (!strcmp(metric, "requests/s"))
			req = v;
	}
	return tok > 0 && req > 0 ? tok / req : 0.0;
}

/* The length of an MLPerf result path up to its scenario directory ("...results/SYSTEM/
 * BENCHMARK/"), which the runs of every scenario of one submission share; 0 when src names no
 * scenario directory. */
static size_t
submission_len(const char *src)
{
	static const char *const scen[] = {"/Offline/", "/Server/", "/Interactive/", "/SingleStream/"};
	if (strstr(src, "/results/") == NULL)
		return 0;
	for (size_t i = 0; i < sizeof scen / sizeof scen[0]; i++) {
		const char *at = strstr(src, scen[i]);
		if (at != NULL)
			return (size_t)(at - src) + 1;
	}
	return 0;
}

/* The precision an MLPerf row that states none ran at: the one the rows of its other scenarios
 * state (the same submission's result directory, model, GPU count and engine), where they state
 * exactly one; else "".  A submitter quantizes a model once for every scenario of a benchmark
 * (NVIDIA's GB200 Llama 2 70B Interactive run, whose row is blank, beside its FP4 Offline and
 * Server runs). */
static const char *
submission_precision(const pp_csv *t, const int *col, int ecol, size_t row)
{
	const char *src = pp_csv_get(t, row, col[0]);
	size_t n = submission_len(src);
	if (n == 0)
		return "";
	const char *found = "";
	for (size_t r = 1; r < t->nrows; r++) {
		const char *p = pp_csv_get(t, r, col[5]), *s = pp_csv_get(t, r, col[0]);
		if (r == row || p[0] == '\0' || submission_len(s) != n || strncmp(s, src, n) != 0 ||
		    strcmp(pp_csv_get(t, r, col[1]), pp_csv_get(t, row, col[1])) != 0 ||
		    strcmp(pp_csv_get(t, r, col[3]), pp_csv_get(t, row, col[3])) != 0 ||
		    (ecol >= 0 && strcmp(pp_csv_get(t, r, ecol), pp_csv_get(t, row, ecol)) != 0))
			continue;
		if (found[0] != '\0' && strcmp(found, p) != 0)
			return ""; /* two precisions: no telling which */
		found = p;
	}
	return found;
}

/* The value of a row's metric in a run's metrics (ms for latencies).  server_qps: an MLPerf
 * Server run's rate (0: none). */
static double
row_value(const char *metric, const sim_serve_metrics *mt, double server_qps)
{
	bool median = val_has(metric, "median"), p99 = val_has(metric, "p99");
	bool tput = val_has(metric, "output tokens/s"), reqs = !strcmp(metric, "requests/s");
	double pred;
	if (tput)
		pred = mt->output_tokens_per_s;
	else if (reqs)
		pred = mt->requests_per_s;
	else if (val_has(metric, "benchmark duration"))
		pred = mt->makespan_s;
	else if (val_has(metric, "end-to-end"))
		pred = mt->e2e.mean * 1e3;
	else if (val_has(metric, "TTFT"))
		pred = (median ? mt->ttft.p50 : p99 ? mt->ttft.p99 : mt->ttft.mean) * 1e3;
	else if (val_has(metric, "ITL"))
		pred = (median ? mt->itl.p50 : p99 ? mt->itl.p99 : mt->itl.mean) * 1e3;
	else
		pred = (median ? mt->tpot.p50 : p99 ? mt->tpot.p99 : mt->tpot.mean) * 1e3;
	if ((tput || reqs) && server_qps > 0 && !mt->saturated && mt->requests_per_s > 0) {
		/* A Server run that keeps up completes what arrives: over its ten minutes and the
		 * drain after them (the requests in flight, about one end-to-end latency), the log's
		 * samples per second are the rate x 600 / (600 + E2E); the shorter simulation's
		 * completed-over-makespan would weigh its own drain five times as much. */
		double req = server_qps * SERVE_MLPERF_RUN_S / (SERVE_MLPERF_RUN_S + mt->e2e.mean);
		pred = reqs ? req : req * mt->output_tokens_per_s / mt->requests_per_s;
	}
	return pred;
}

/* The options of one report: which rows, under which engine. */
typedef struct serve_opts {
	const char *engine;         /* every row under this engine (NULL: the row's own) */
	const char *only_engine;    /* only the rows of this engine */
	const char *family;         /* with `exclude`: the rows of every other family; else only this one */
	bool exclude;
	bool simulate;
	const double *speeds;       /* two: each row's value on engines that many times as fast too */
	bool capacity_only;         /* only the rows of runs without an arrival rate (the engine fit's) */
} serve_opts;

/* The rows of one file the options select into rows and skipped. */
static int
serving_file(hw_db *db, const val_src *src_in, const serve_opts *o, cJSON *rows, cJSON *skipped, char *err, size_t errlen)
{
	const char *origin = src_in->origin;
	pp_csv t;
	int rc = pp_csv_parse(src_in->text, src_in->len, origin, &t, err, errlen);
	if (rc != 0)
		return rc;
	if ((rc = pp_csv_header(&t, origin, err, errlen)) != 0) {
		pp_csv_free(&t);
		return rc;
	}
	static const char *const sc[] = {"source", "model", "gpu", "num_gpus", "tp", "precision", "scenario", "input_len",
					 "output_len", "measured_metric", "measured_value", "unit", NULL};
	int col[12];
	for (int i = 0; sc[i]; i++)
		if ((col[i] = pp_csv_column(&t, sc[i])) < 0) {
			pp_csv_free(&t);
			return pp_err(err, errlen, PP_EINPUT, "%s: missing column \"%s\"", origin, sc[i]);
		}
	int ecol = pp_csv_column(&t, "engine"), rcol = pp_csv_column(&t, "concurrency_or_rate");
	int pcol = pp_csv_column(&t, "pp"); /* optional: pipeline stages a replica */
	int ncol = pp_csv_column(&t, "notes");
	/* a file of one's own runs may name the system they ran on ('paraplan hw list'); else the
	 * GPU's usual server */
	int scol = pp_csv_column(&t, "system");
	char known_sys[64] = ""; /* the last system cell found in the database */
	sim_serve_cfg last_c, last_sel;
	sim_serve_metrics last_mt, last_band[2];
	char last_cat[64] = "", last_sys[64] = "";
	bool have_last = false, last_unstated = false, last_mxfp4 = false, last_tp_stated = false;
	memset(&last_c, 0, sizeof last_c);
	memset(&last_sel, 0, sizeof last_sel);
	memset(&last_mt, 0, sizeof last_mt);
	memset(last_band, 0, sizeof last_band);
	for (size_t r = 1; r < t.nrows; r++) {
		const char *src = pp_csv_get(&t, r, col[0]), *mname = pp_csv_get(&t, r, col[1]);
		const char *gpu = pp_csv_get(&t, r, col[2]), *metric = pp_csv_get(&t, r, col[9]);
		const char *scen = pp_csv_get(&t, r, col[6]), *prec = pp_csv_get(&t, r, col[5]);
		const char *prec_from = ""; /* the precision of the submission's other runs, for a blank */
		if (prec[0] == '\0' && (prec_from = submission_precision(&t, col, ecol, r))[0] != '\0')
			prec = prec_from;
		const char *ecell = ecol >= 0 ? pp_csv_get(&t, r, ecol) : "";
		const char *rate_s = rcol >= 0 ? pp_csv_get(&t, r, rcol) : "";
		const char *scell = pp_csv_get(&t, r, scol);
		if (scell[0] != '\0' && strcmp(scell, known_sys) != 0) { /* every row, selected or not */
			hw_system sys;
			if ((rc = hw_system_get(db, scell, &sys, err, errlen)) != 0) {
				char msg[512];
				pp_strlcpy(msg, err, sizeof msg);
				size_t line = t.lines[r];
				pp_csv_free(&t);
				return rc == PP_ENOTFOUND ? pp_err(err, errlen, PP_EINPUT, "%s, line %zu, column \"system\": %s",
								   origin, line, msg)
							  : rc;
			}
			pp_strlcpy(known_sys, scell, sizeof known_sys);
		}
		char fam[64], why[160] = "";
		val_family_key(src, fam, sizeof fam);
		if (o->family != NULL && (strcmp(fam, o->family) == 0) == o->exclude)
			continue;
		const char *engine = o->engine != NULL ? o->engine : serve_engine_of(ecell, src);
		if (o->only_engine != NULL && (engine == NULL || strcmp(engine, o->only_engine) != 0))
			continue;
		double measured = 0, in = serve_len_of(pp_csv_get(&t, r, col[7]), false),
		       outl = serve_len_of(pp_csv_get(&t, r, col[8]), true);
		/* An MLPerf run: its dataset's lengths as distributions, its output mean the run's own
		 * measured tokens per sample (the model and its quantization set how long answers are;
		 * closed submissions stay within 90-110% of the reference's). */
		const sim_dataset *ds = serve_dataset_of(pp_csv_get(&t, r, col[7]));
		bool mlperf = val_has(src, "MLPerf") && ds != NULL;
		double run_out = mlperf ? serve_run_output_len(&t, col[0], col[9], col[10], src) : 0.0;
		if (run_out > 0)
			outl = run_out;
		int64_t gpus = 0, tp = 0;
		const char *cat = serve_model_of(mname);
		const char *system = scell[0] != '\0' ? scell : serve_system_of(gpu);
		pp_parse_i64(pp_csv_get(&t, r, col[3]), &gpus);
		bool tp_stated = pp_parse_i64(pp_csv_get(&t, r, col[4]), &tp) == 0;
		int64_t pp = 1;
		const char *pcell = pcol >= 0 ? pp_csv_get(&t, r, pcol) : "";
		bool pp_bad = pcell[0] != '\0' && (pp_parse_i64(pcell, &pp) != 0 || pp < 1 || pp > 1024);
		if (pp_bad)
			pp = 1;
		if (!tp_stated)
			tp = gpus / pp;
		bool tput = val_has(metric, "output tokens/s"), e2e = val_has(metric, "end-to-end");
		bool reqs = !strcmp(metric, "requests/s"), dur = val_has(metric, "benchmark duration");
		bool ttft = val_has(metric, "TTFT"), tpot = val_has(metric, "TPOT") || val_has(metric, "ITL");
		const char *unit = pp_csv_get(&t, r, col[11]);
		const char *absurd = NULL;
		if (pp_parse_double(pp_csv_get(&t, r, col[10]), &measured) != 0 || (absurd = val_measured_absurd(measured)) != NULL)
			snprintf(why, sizeof why, "%s", absurd != NULL ? absurd : "the measured value is not a positive number");
		else if (pp_parse_i64(pp_csv_get(&t, r, col[3]), &gpus) != 0 || gpus < 1 || gpus > 1 << 20)
			snprintf(why, sizeof why, "the GPU count \"%.24s\" is not a whole number from 1 to 1048576",
				 pp_csv_get(&t, r, col[3]));
		else if (tp_stated && tp >= 1 && tp <= 1024 && !pp_bad && pp <= gpus && gpus % (tp * pp) != 0)
			snprintf(why, sizeof why, "the %" PRId64 " GPUs are not a whole number of TP %" PRId64 " x PP %" PRId64 " replicas",
				 gpus, tp, pp);
		else if (!tput && !e2e && !ttft && !tpot && !reqs && !dur)
			snprintf(why, sizeof why,
				 "the metric \"%.60s\" is not output tokens/s, requests/s, TTFT, TPOT, latency or duration", metric);
		else if (!val_unit_in(unit, serve_units(tput, reqs, dur)))
			snprintf(why, sizeof why, "the unit \"%.24s\" is not one of the metric's (%s)", unit,
				 serve_units(tput, reqs, dur));
		else if (engine == NULL)
			snprintf(why, sizeof why, "the engine \"%.60s\" has no profile", ecell);
		else if (cat == NULL)
			snprintf(why, sizeof why, "model \"%.60s\" is not in the catalog", mname);
		else if (system == NULL)
			snprintf(why, sizeof why, "the GPU is not in the hardware database");
		else if (!(in > 0) || !(outl > 0))
			snprintf(why, sizeof why, "the dataset's mean prompt or output length is not stated in the sources");
		else if (pp_bad || (pp > 1 && pp > gpus))
			snprintf(why, sizeof why, "the PP degree is not a number from 1 to the GPUs");
		else if (tp < 1)
			snprintf(why, sizeof why, "the TP degree is not stated");
		else if (tp > 1024 || in > 10000000 || outl > 10000000)
			snprintf(why, sizeof why, "the TP degree or lengths are out of range");
		if (why[0] == '\0')
			settings_in_range(ncol >= 0 ? pp_csv_get(&t, r, ncol) : "", ecell, scen, why, sizeof why);
		sim_serve_cfg c;
		sim_serve_cfg_init(&c);
		c.pp = (int)pp; /* part of the key of the run before (below) */
		int64_t conc = 0;
		double qps = 0;
		const char *bp = strstr(scen, "batch ");
		const char *cp = strstr(scen, "concurrency ");
		if (cp == NULL)
			cp = strstr(rate_s, "concurrency ");
		const char *qp = strstr(rate_s, " QPS");
		/* MLPerf Server and Interactive: Poisson at the rate the log reports ("target_qps 8.6
		 * (scheduled 8.62 samples/s)": the scheduled rate, else the target) */
		const char *tq = strstr(rate_s, "target_qps ");
		const char *sq = strstr(rate_s, "scheduled ");
		if (qp == NULL && tq != NULL)
			qp = sq != NULL ? sq + 10 : tq + 11;
		if (why[0] == '\0') {
			/* strtoll, not atoll: a long run of digits saturates instead of overflowing */
			if (bp != NULL)
				conc = count_at(bp + 6);
			else if (cp != NULL)
				conc = count_at(cp + 12);
			else if (qp != NULL)
				qps = strtod(tq != NULL ? qp : rate_s, NULL);
			else if (mlperf && val_has(scen, "offline"))
				conc = 1; /* sized below, once the engine's batch limit is known */
			else if (val_has(scen, "offline"))
				conc = 1000; /* vLLM's benchmark_throughput.py: 1000 prompts at once */
			if (qp != NULL && !(qps > 0 && qps <= 100000))
				snprintf(why, sizeof why, "the rate \"%.40s\" is not from 0 to 100000 requests/s", rate_s);
			else if (qp == NULL && (conc < 1 || conc > 100000))
				snprintf(why, sizeof why,
					 "the scenario \"%.60s\" is not a batch, a concurrency from 1 to 100000 or a rate", scen);
		}
		if (why[0]) {
			cJSON *x = cJSON_CreateObject();
			cJSON_AddStringToObject(x, "data", origin);
			cJSON_AddNumberToObject(x, "line", (double)t.lines[r]);
			cJSON_AddStringToObject(x, "source", src);
			cJSON_AddStringToObject(x, "model", mname);
			cJSON_AddStringToObject(x, "metric", metric);
			cJSON_AddStringToObject(x, "reason", why);
			cJSON_AddItemToArray(skipped, x);
			continue;
		}
		hw_profile *prof;
		if ((rc = hw_profile_find(db, HW_SCOPE_ENGINE, engine, &prof, err, errlen)) != 0) {
			pp_csv_free(&t);
			return rc;
		}
		sim_engine_from_profile(&c.engine, prof);
		hw_profile_free(prof);
		c.tp = (int)tp;
		c.replicas = gpus > tp ? (int)(gpus / tp) : 1;
		c.prompt.kind = c.output.kind = SIM_DIST_FIXED;
		c.prompt.mean = in;
		c.output.mean = outl;
		spread_len(&c.prompt, serve_len_spread(pp_csv_get(&t, r, col[7])));
		spread_len(&c.output, serve_len_spread(pp_csv_get(&t, r, col[8])));
		if (mlperf) {
			/* the dataset's shapes; the output's scaled to the run's mean */
			char e3[256];
			if (sim_dataset_dist(ds, false, &c.prompt, e3, sizeof e3) != 0)
				c.prompt.kind = SIM_DIST_FIXED;
			if (sim_dataset_dist(ds, true, &c.output, e3, sizeof e3) == 0 && c.output.kind == SIM_DIST_GAMMA) {
				c.output.b = outl / c.output.a;
				c.output.mean = outl;
			} else {
				c.output.kind = SIM_DIST_FIXED;
				c.output.mean = round(outl);
				c.output.max = 0;
			}
		}
		/* weights in no stated format run as the model is published (gpt-oss in MXFP4); MXFP4
		 * stated runs as the engines run it on the row's GPU (fp4 on Blackwell, else 4-bit
		 * weight-only), once the GPU is known */
		bool weights_unstated = prec[0] == '\0' || val_has(prec, "weights not stated");
		bool weights_mxfp4 = val_has(prec, "mxfp4");
		if (val_has(prec, "fp8") && !val_has(prec, "weights not stated") && !val_has(prec, "BF16 weights"))
			c.weights = HW_FP8;
		/* "FP4 (selected linear/MLP layers) + FP8": a run has one weight format, and the MLP's
		 * is the larger part (Llama 2 70B: 705 M of each layer's 856 M linear weights) */
		bool fp4_mlp = val_has(prec, "FP4 (selected");
		if ((val_has(prec, "FP4 weights") && !weights_mxfp4) || fp4_mlp)
			c.weights = HW_FP4;
		if (val_has(prec, "int4") || val_has(prec, "AWQ") || val_has(prec, "GPTQ"))
			c.weights = HW_INT4;
		/* MoE layouts as the notes state them ("MoE EP8, enable_attention_dp True") */
		const char *notes = ncol >= 0 ? pp_csv_get(&t, r, ncol) : "";
		const char *epn = strstr(notes, "MoE EP");
		if (epn != NULL) {
			long ep = strtol(epn + 6, NULL, 10);
			if (ep >= 2 && ep <= 1024)
				c.ep = (int)ep;
		}
		if (val_has(notes, "enable_attention_dp True") || val_has(notes, "enable-dp-attention"))
			c.attention_dp = true;
		if (val_has(prec, "KV cache FP8") || val_has(prec, "kv-cache-dtype fp8") || !strcmp(prec, "fp8"))
			c.kv_dtype = HW_FP8;
		/* the engine settings the row states, for its scenario (their ranges were checked above) */
		{
			int si = scenario_index(scen, strlen(scen));
			double v;
			for (int w = 0; w < 2; w++) {
				const char *text = w ? ecell : notes;
				if ((v = val_stated_setting(text, settings[SET_SEQS].keys, si)) > 0 && c.max_num_seqs == 0)
					c.max_num_seqs = (int)v;
				if ((v = val_stated_setting(text, settings[SET_TOKENS].keys, si)) > 0 && c.max_batched_tokens == 0)
					c.max_batched_tokens = (int64_t)v;
				if ((v = val_stated_setting(text, settings[SET_STEPS].keys, si)) > 0)
					c.engine.sched_steps = (int)v;
				if ((v = val_stated_setting(text, settings[SET_MEMORY].keys, si)) > 0)
					c.gpu_memory_utilization = v;
				if (val_has(text, "chunked_prefill False") || val_has(text, "chunked prefill off") ||
				    val_has(text, "chunked-prefill=False"))
					c.engine.prefill = HW_EN_PREFILL_SEPARATE;
				else if (val_has(text, "chunked context") || val_has(text, "enable_chunked_context") ||
					 val_has(text, "chunked_prefill True") || val_has(text, "chunked prefill on"))
					c.engine.prefill = HW_EN_PREFILL_CHUNKED;
			}
		}
		if (bp != NULL) {
			/* a static batch: all of it at once, one iteration loop over the whole batch */
			c.arrival = SIM_ARR_BATCH;
			c.requests = conc;
			c.max_num_seqs = (int)conc;
		} else if (qp != NULL) {
			c.arrival = SIM_ARR_POISSON;
			c.rate = qps;
			c.requests = mlperf ? mlperf_requests(qps * 120.0) : 1000; /* vLLM's benchmark_serving: 1000 prompts */
		} else if (cp != NULL) {
			c.arrival = SIM_ARR_CLOSED;
			c.arrival_param = (double)conc;
			c.requests = conc * 8;
			/* "concurrency 8 (150 requests)": the run's stated count */
			const char *par = strchr(cp, '(');
			if (par != NULL && strstr(par, "requests") != NULL) {
				long long nr = strtoll(par + 1, NULL, 10);
				if (nr >= conc && nr <= 1000000)
					c.requests = nr;
			}
		} else if (mlperf) {
			c.arrival = SIM_ARR_BATCH;
			c.requests = offline_requests(&c);
			conc = c.requests;
		} else {
			c.arrival = SIM_ARR_BATCH;
			c.requests = conc;
		}
		if (o->capacity_only && c.arrival == SIM_ARR_POISSON)
			continue;
		/* an engine that does not chunk prompts has a token budget that holds the longest
		 * (TensorRT-LLM's max_num_tokens, vLLM V0's max_model_len); one that chunks keeps its own */
		int64_t longest = sim_serve_longest_prompt(&c); /* a row's lengths are bounded */
		if (c.max_batched_tokens > 0) {
			/* a stated budget below a prompt holds only where prompts are chunked */
			if (c.max_batched_tokens < longest && c.engine.prefill != HW_EN_PREFILL_CHUNKED)
				c.max_batched_tokens = longest;
		} else if (c.engine.max_batched_tokens < longest && c.engine.prefill != HW_EN_PREFILL_CHUNKED) {
			c.max_batched_tokens = longest;
		}
		/* The rows of one run (an MLPerf log's tokens/s, samples/s and four latencies) share a
		 * configuration: the run is simulated once.  Configurations are built from a zeroed
		 * sim_serve_cfg, so bytes compare; the key is the configuration before a TP is chosen. */
		sim_serve_metrics mtv, bandv[2];
		const sim_serve_metrics *mt = &mtv;
		memset(&mtv, 0, sizeof mtv);
		memset(bandv, 0, sizeof bandv);
		const double *band = o->simulate ? o->speeds : NULL;
		bool offline_sized = mlperf && bp == NULL && cp == NULL && qp == NULL;
		if (o->simulate && have_last && !memcmp(&c, &last_c, sizeof c) && weights_unstated == last_unstated &&
		    weights_mxfp4 == last_mxfp4 && tp_stated == last_tp_stated && !strcmp(cat, last_cat) &&
		    !strcmp(system, last_sys)) {
			mtv = last_mt;
			bandv[0] = last_band[0], bandv[1] = last_band[1];
			c = last_sel;
			goto chosen;
		}
		model *m;
		hw_cost *cost;
		if ((rc = model_load(cat, &m, err, errlen)) != 0)
			goto fail;
		if ((rc = hw_cost_new(db, system, &cost, err, errlen)) != 0) {
			model_free(m);
			goto fail;
		}
		/* The TP degrees to run: the stated one; where the row states none (MLPerf results that
		 * do not say how the GPUs were split), each power of two that divides the GPUs, and the
		 * deployment that serves the row's workload best stands for the run, as a submitter
		 * tunes it (the training rows that name no layout run the framework's fastest). */
		int64_t cand[12];
		int ncand = 0;
		if (tp_stated || gpus <= pp)
			cand[ncand++] = tp;
		else
			for (int64_t v = 1; v * pp <= gpus && ncand < 12; v *= 2)
				if (gpus % (v * pp) == 0)
					cand[ncand++] = v;
		sim_serve_cfg best = c;
		bool have = false;
		char e2[512] = "";
		for (int k = 0; k < ncand && rc == 0; k++) {
			sim_serve_cfg cc = c;
			if (weights_mxfp4)
				cc.weights = sim_serve_weights_as(MODEL_WEIGHTS_MXFP4, &hw_cost_system(cost)->gpu);
			else if (weights_unstated)
				cc.weights = sim_serve_released_weights(m, &hw_cost_system(cost)->gpu);
			cc.tp = (int)cand[k];
			cc.replicas = gpus > cand[k] * pp ? (int)(gpus / (cand[k] * pp)) : 1;
			if (offline_sized)
				cc.requests = offline_requests(&cc);
			if (!o->simulate) {
				rc = sim_serve_check(m, hw_cost_system(cost), &cc, NULL, NULL, e2, sizeof e2);
			} else {
				sim_serve_metrics x;
				rc = offline_sized ? sim_serve_offline(m, cost, &cc, SERVE_MLPERF_RUN_S,
								       SIM_SERVE_OFFLINE_MAX_PER_REPLICA, &x, &cc.requests, e2,
								       sizeof e2)
						   : sim_serve_metrics_of(m, cost, &cc, &x, e2, sizeof e2);
				if (rc == 0 && (!have || serve_better(&cc, &x, &mtv)))
					mtv = x, best = cc, have = true;
			}
			if (rc == PP_EUSAGE) {
				rc = 0; /* does not fit or divide: the next degree, else the row is skipped */
			} else if (rc == 0 && !o->simulate) {
				best = cc, have = true;
				break;
			}
		}
		for (int k = 0; k < 2 && band != NULL && have && rc == 0; k++)
			rc = sim_serve_speed(m, cost, &best, &mtv, band[k], &bandv[k], e2, sizeof e2);
		hw_cost_free(cost);
		model_free(m);
		if (rc != 0) {
			pp_err(err, errlen, rc, "%s", e2);
			goto fail;
		}
		if (!have) {
			cJSON *x = cJSON_CreateObject();
			cJSON_AddStringToObject(x, "data", origin);
			cJSON_AddNumberToObject(x, "line", (double)t.lines[r]);
			cJSON_AddStringToObject(x, "source", src);
			cJSON_AddStringToObject(x, "model", mname);
			cJSON_AddStringToObject(x, "metric", metric);
			cJSON_AddStringToObject(x, "reason", e2);
			cJSON_AddItemToArray(skipped, x);
			continue;
		}
		if (!o->simulate)
			continue;
		last_c = c;
		last_unstated = weights_unstated;
		last_mxfp4 = weights_mxfp4;
		last_tp_stated = tp_stated;
		c = best;
		last_sel = c;
		last_mt = mtv;
		last_band[0] = bandv[0], last_band[1] = bandv[1];
		pp_strlcpy(last_cat, cat, sizeof last_cat);
		pp_strlcpy(last_sys, system, sizeof last_sys);
		have_last = true;
	chosen:
		tp = c.tp;
		if (offline_sized)
			conc = c.requests;
		double pred = row_value(metric, mt, mlperf ? qps : 0.0);
		cJSON *x = cJSON_CreateObject();
		char key[96];
		val_source_key(src, key, sizeof key);
		cJSON_AddStringToObject(x, "data", origin);
		cJSON_AddNumberToObject(x, "line", (double)t.lines[r]);
		cJSON_AddStringToObject(x, "source", key);
		cJSON_AddStringToObject(x, "family", fam);
		cJSON_AddStringToObject(x, "engine", engine);
		cJSON_AddStringToObject(x, "kind", tput || reqs || dur ? "throughput" : ttft ? "ttft" : e2e ? "latency" : "tpot");
		cJSON_AddStringToObject(x, "model", mname);
		cJSON_AddStringToObject(x, "system", system);
		cJSON_AddStringToObject(x, "metric", metric);
		cJSON_AddStringToObject(x, "unit", pp_csv_get(&t, r, col[11]));
		cJSON_AddNumberToObject(x, "measured", measured);
		cJSON_AddNumberToObject(x, "predicted", pred);
		cJSON_AddNumberToObject(x, "error", (pred - measured) / measured);
		cJSON_AddNumberToObject(x, "speed_error", val_speed_error(pred, measured, !tput && !reqs));
		cJSON_AddBoolToObject(x, "at_rate", c.arrival == SIM_ARR_POISSON);
		if (band != NULL) {
			double v[2] = {row_value(metric, &bandv[0], mlperf ? qps : 0.0),
				       row_value(metric, &bandv[1], mlperf ? qps : 0.0)};
			if (v[0] > v[1]) {
				double t0 = v[0];
				v[0] = v[1], v[1] = t0;
			}
			cJSON_AddItemToObject(x, "predicted_band", cJSON_CreateDoubleArray(v, 2));
		}
		cJSON *cf = cJSON_AddObjectToObject(x, "config");
		cJSON_AddNumberToObject(cf, "gpus", (double)gpus);
		cJSON_AddNumberToObject(cf, "tp", (double)tp);
		cJSON_AddNumberToObject(cf, "pp", (double)c.pp);
		cJSON_AddNumberToObject(cf, "dp", (double)c.replicas);
		cJSON_AddNumberToObject(cf, "vpp", 1);
		cJSON_AddNumberToObject(cf, "micro_batch", (double)conc);
		char tp_why[96];
		snprintf(tp_why, sizeof tp_why, "TP not stated: TP %d x %d, the best of TP 1 to %lld for the run", c.tp,
			 c.replicas, (long long)gpus);
		const char *why_row = fp4_mlp ? "FP4 for the MLP's linear layers and FP8 for the rest, run as FP4 throughout"
				      : !tp_stated && gpus > 1 ? tp_why
				      : mlperf && !val_has(mname, "Llama-2") && ds == sim_dataset_find("mlperf-llama2-70b")
					      ? "prompt lengths counted in Llama 2 tokens (the dataset's); output: the run's tokens per sample"
				      : mlperf && run_out > 0 ? "output mean: the run's tokens per sample"
							      : "";
		char as[512];
		if (prec_from[0] != '\0')
			snprintf(as, sizeof as, "precision not stated: %.200s, as the submission's other scenarios state%s%s",
				 prec_from, why_row[0] ? "; " : "", why_row);
		else
			pp_strlcpy(as, why_row, sizeof as);
		cJSON_AddStringToObject(x, "assumptions", as);
		cJSON_AddItemToArray(rows, x);
	}
	pp_csv_free(&t);
	return 0;
fail:
	pp_csv_free(&t);
	return rc;
}

/* "a + b": the files' names, for a document's "data" and a fit's source. */
static void
origins(const val_src *srcs, size_t n, char *buf, size_t len)
{
	pp_str s = {0};
	for (size_t i = 0; i < n; i++)
		pp_str_addf(&s, "%s%s", i ? " + " : "", srcs[i].origin);
	pp_strlcpy(buf, s.buf ? s.buf : "", len);
	pp_str_free(&s);
}

/* The serving report over the rows of the files the options select. */
static int
serving_report(hw_db *db, const val_src *srcs, size_t n, const serve_opts *o, cJSON **out, char *err, size_t errlen)
{
	*out = NULL;
	char data[1024];
	origins(srcs, n, data, sizeof data);
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "kind", "validate");
	cJSON_AddStringToObject(doc, "set", "serving");
	cJSON_AddStringToObject(doc, "data", data);
	cJSON *rows = cJSON_AddArrayToObject(doc, "rows");
	cJSON *skipped = cJSON_AddArrayToObject(doc, "skipped");
	for (size_t i = 0; i < n; i++) {
		int rc = serving_file(db, &srcs[i], o, rows, skipped, err, errlen);
		if (rc != 0) {
			cJSON_Delete(doc);
			return rc;
		}
	}
	val_summarize(doc, rows, skipped);
	val_group(cJSON_AddArrayToObject(doc, "engines"), rows, "engine");
	val_group(cJSON_AddArrayToObject(doc, "kinds"), rows, "kind");
	*out = doc;
	return 0;
}

int
val_serving(hw_db *db, const val_src *srcs, size_t n, const char *engine, cJSON **out, char *err, size_t errlen)
{
	serve_opts o = {engine, NULL, NULL, false, true, NULL, false};
	return serving_report(db, srcs, n, &o, out, err, errlen);
}

int
val_serving_rows(hw_db *db, const val_src *srcs, size_t n, cJSON **out, char *err, size_t errlen)
{
	serve_opts o = {NULL, NULL, NULL, false, false, NULL, false};
	return serving_report(db, srcs, n, &o, out, err, errlen);
}

/* ---- the engine fit ------------------------------------------------------------------------- *
 * Per engine, over all of its rows on every GPU: the host's fixed time per iteration and the
 * fraction of the GPUs' measured GEMM rates its kernels reach.  Nothing is fitted per GPU.  Each
 * evaluation stores the values in the database inside a savepoint that the caller rolls back:
 * the database is left as it was. */

static const struct { const char *key; double lo, hi; } serve_params[] = {
	{"sched_us", 0.0, 5000.0},
	{"serve_gemm_scale", 0.5, 1.3},
};
#define NSERVE (sizeof serve_params / sizeof serve_params[0])
enum { SERVE_P_SCHED, SERVE_P_GEMM }; /* their places in serve_params */

typedef struct servectx {
	hw_db *db;
	const val_src *srcs;
	size_t n;
	const char *origin;
	serve_opts o;
	int rc;
	char err[512];
} servectx;

static int
set_engine(hw_db *db, const char *engine, const double *x, const char *method, const char *origin, char *err,
	   size_t errlen)
{
	for (size_t k = 0; k < NSERVE; k++) {
		int rc = hw_param_set(db, "engine", engine, serve_params[k].key, x[k], "fitted", method, origin, 0, err, errlen);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* The fit's loss over a report's rows: the mean square of log(predicted / measured) through a
 * pseudo-Huber of width 10% (quadratic within about 10%, then growing as its square root), as
 * the training fit weighs its rows: a run the model cannot express (one it simulates as
 * saturated, 100 times too slow) pulls on its engine's parameters no harder than a few rows it
 * fits, where the MAPE it replaced let a handful of such rows set them. */
#define SERVE_FIT_DELTA 0.1

static double
serve_loss(const cJSON *doc)
{
	double sum = 0;
	int n = 0;
	const cJSON *x;
	cJSON_ArrayForEach(x, cJSON_GetObjectItem(doc, "rows"))
	{
		double m = cJSON_GetNumberValue(cJSON_GetObjectItem(x, "measured"));
		double p = cJSON_GetNumberValue(cJSON_GetObjectItem(x, "predicted"));
		double q = m > 0 && p > 0 ? log(p / m) / SERVE_FIT_DELTA : 1e3;
		sum += 2.0 * (sqrt(1.0 + q * q) - 1.0) * SERVE_FIT_DELTA * SERVE_FIT_DELTA;
		n++;
	}
	return n ? sum / n : 0.0;
}

/* The priors that hold an engine's parameters where the rows do not place them, each a
 * pseudo-row: straying by its sigma on the logarithm costs as much as one row SERVE_FIT_DELTA
 * off, as the training fit holds a framework near its root.  The GEMM rate is held near 1, the
 * rates the GPUs' kernels were measured at (sigma 15%): without it, a fold of a few rows of one
 * regime (closed loops at small batches) traded the GEMM rate against the host time along a
 * valley its rows could not tell apart, and landed far from where every row puts it (0.80 of the
 * measured rate against 1.09, leaving out MLPerf v5.1).  The host time is held, loosely (a factor
 * of e), near the parameter registry's 500 us: without it, an engine whose rows are all large
 * batches (TensorRT-LLM's MLPerf runs), where the host hides behind the GPU, wandered from 363
 * to 4,445 us over three refits that changed its MAPE by 0.1 point. */
#define SERVE_SCALE_SIGMA 0.15
#define SERVE_SCHED_SIGMA 1.0
#define SERVE_SCHED_CENTER_US 500.0

static double
prior_row(double q)
{
	return 2.0 * (sqrt(1.0 + q * q) - 1.0) * SERVE_FIT_DELTA * SERVE_FIT_DELTA;
}

static double
serve_fit_loss(const cJSON *doc, const double *x)
{
	int n = cJSON_GetArraySize(cJSON_GetObjectItem(doc, "rows"));
	/* a host time of 0 is 1 us from the prior's view: the logarithm stays finite */
	double prior = prior_row(log(x[SERVE_P_GEMM]) / SERVE_SCALE_SIGMA) +
		       prior_row(log(fmax(x[SERVE_P_SCHED], 1.0) / SERVE_SCHED_CENTER_US) / SERVE_SCHED_SIGMA);
	return (serve_loss(doc) * n + prior) / (n + 2);
}

static double
serve_objective(const double *x, void *arg)
{
	servectx *c = arg;
	if (c->rc != 0)
		return 1e9;
	if ((c->rc = set_engine(c->db, c->o.only_engine, x, "fit in progress", c->origin, c->err, sizeof c->err)) != 0)
		return 1e9;
	cJSON *doc;
	if ((c->rc = serving_report(c->db, c->srcs, c->n, &c->o, &doc, c->err, sizeof c->err)) != 0)
		return 1e9;
	double m = serve_fit_loss(doc, x);
	cJSON_Delete(doc);
	return m;
}

/* Opens a savepoint holding the write lock from its first statement: a fit reads (profiles,
 * systems) before it writes, and a read transaction that later needs to write fails at once
 * when another process holds the lock, where a write first waits for it (SQLite's busy
 * timeout). */
static int
begin_write(hw_db *db, const char *savepoint, char *err, size_t errlen)
{
	int rc = hw_exec_simple(db, savepoint, err, errlen);
	if (rc == 0 && (rc = hw_exec_simple(db, "UPDATE meta SET value = value WHERE key = 'defaults_hash'", err, errlen)) != 0) {
		char rb[64];
		snprintf(rb, sizeof rb, "ROLLBACK TO %s", savepoint + strlen("SAVEPOINT "));
		hw_exec_simple(db, rb, NULL, 0);
		snprintf(rb, sizeof rb, "RELEASE %s", savepoint + strlen("SAVEPOINT "));
		hw_exec_simple(db, rb, NULL, 0);
	}
	return rc;
}

static const char *const fit_engines[] = {"vllm", "vllm-v0", "sglang", "trtllm", NULL, false};

/* Fits each engine (or `only`) over its rows the options select, leaving the fitted values set
 * in the database (the caller's savepoint); one object per engine fitted into `fits`. */
static int
fit_engines_on(hw_db *db, const val_src *srcs, size_t n, const serve_opts *base, const char *only, int max_evals,
	       cJSON *fits, char *err, size_t errlen)
{
	char origin[1024];
	origins(srcs, n, origin, sizeof origin);
	for (int e = 0; fit_engines[e]; e++) {
		if (only != NULL && strcmp(only, fit_engines[e]) != 0)
			continue;
		serve_opts o = *base;
		o.only_engine = fit_engines[e];
		o.engine = NULL;
		o.capacity_only = true;
		cJSON *doc;
		int rc = serving_report(db, srcs, n, &o, &doc, err, errlen);
		if (rc != 0)
			return rc;
		const cJSON *ov = cJSON_GetObjectItem(doc, "overall");
		int rows = cJSON_GetObjectItem(ov, "rows")->valueint;
		double before = cJSON_GetObjectItem(ov, "mape")->valuedouble;
		if (rows == 0) {
			cJSON_Delete(doc);
			continue;
		}
		hw_profile *prof;
		if ((rc = hw_profile_find(db, HW_SCOPE_ENGINE, fit_engines[e], &prof, err, errlen)) != 0) {
			cJSON_Delete(doc);
			return rc;
		}
		cal_param p[NSERVE];
		double was[NSERVE]; /* the values the loss before was measured at */
		for (size_t k = 0; k < NSERVE; k++) {
			hw_pkey key;
			p[k].name = serve_params[k].key;
			p[k].lo = serve_params[k].lo;
			p[k].hi = serve_params[k].hi;
			p[k].start = 0.5 * (p[k].lo + p[k].hi);
			if (hw_pdef_find(HW_SCOPE_ENGINE, p[k].name, &key) == 0)
				p[k].start = hw_profile_get(prof, key);
			was[k] = p[k].start;
			/* the search starts inside its bounds */
			if (p[k].start <= p[k].lo)
				p[k].start = p[k].lo + 0.01 * (p[k].hi - p[k].lo);
			if (p[k].start >= p[k].hi)
				p[k].start = p[k].hi - 0.01 * (p[k].hi - p[k].lo);
		}
		hw_profile_free(prof);
		double loss_before = serve_fit_loss(doc, was);
		cJSON_Delete(doc);
		servectx c = {db, srcs, n, origin, o, 0, ""};
		double best[NSERVE], after;
		int evals = 0;
		rc = cal_minimize(p, NSERVE, serve_objective, &c, max_evals, best, &after, &evals, err, errlen);
		if (rc == 0 && c.rc != 0)
			rc = pp_err(err, errlen, c.rc, "%s", c.err);
		if (rc != 0)
			return rc;
		if (after > loss_before) {
			/* no better than before: the values it had (a start moved inside the bounds
			 * is not where the loss before was measured) */
			for (size_t k = 0; k < NSERVE; k++)
				best[k] = was[k];
		}
		/* the MAPE at the values kept, for the record */
		if ((rc = set_engine(db, fit_engines[e], best, "fit in progress", origin, err, errlen)) != 0 ||
		    (rc = serving_report(db, srcs, n, &o, &doc, err, errlen)) != 0)
			return rc;
		after = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "overall"), "mape")->valuedouble;
		cJSON_Delete(doc);
		char method[200];
		snprintf(method, sizeof method,
			 "paraplan validate --set serving --fit: Nelder-Mead on log error (pseudo-Huber 10%%, priors) over %d "
			 "rows of %s, MAPE %.1f%% -> %.1f%%",
			 rows, fit_engines[e], 100.0 * before, 100.0 * after);
		if ((rc = set_engine(db, fit_engines[e], best, method, origin, err, errlen)) != 0)
			return rc;
		cJSON *f = cJSON_CreateObject();
		cJSON_AddStringToObject(f, "engine", fit_engines[e]);
		cJSON_AddNumberToObject(f, "rows", rows);
		cJSON_AddNumberToObject(f, "mape_before", before);
		cJSON_AddNumberToObject(f, "mape_after", after);
		cJSON_AddNumberToObject(f, "evaluations", evals);
		cJSON_AddStringToObject(f, "method", method);
		cJSON *pa = cJSON_AddObjectToObject(f, "parameters");
		for (size_t k = 0; k < NSERVE; k++)
			cJSON_AddNumberToObject(pa, p[k].name, best[k]);
		cJSON_AddItemToArray(fits, f);
	}
	return 0;
}

int
val_serving_fit(hw_db *db, const val_src *srcs, size_t n, const char *engine, int max_evals, cJSON **out, char *err,
		size_t errlen)
{
	char origin[1024];
	origins(srcs, n, origin, sizeof origin);
	*out = NULL;
	if (hw_readonly(db))
		return pp_err(err, errlen, PP_EIO, "%s: database is read-only: fitting writes parameters", hw_path(db));
	int rc;
	if ((rc = begin_write(db, "SAVEPOINT paraplan_fit", err, errlen)) != 0)
		return rc;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "kind", "validate-serving-fit");
	cJSON_AddStringToObject(o, "scope", "engine");
	cJSON_AddStringToObject(o, "data", origin);
	serve_opts base = {NULL, NULL, NULL, false, true, NULL, false};
	rc = fit_engines_on(db, srcs, n, &base, engine, max_evals, cJSON_AddArrayToObject(o, "fits"), err, errlen);
	hw_exec_simple(db, "ROLLBACK TO paraplan_fit", NULL, 0);
	hw_exec_simple(db, "RELEASE paraplan_fit", NULL, 0);
	if (rc == 0 && cJSON_GetArraySize(cJSON_GetObjectItem(o, "fits")) == 0)
		rc = pp_err(err, errlen, PP_EUSAGE, "no serving row of %s was predicted: nothing to fit",
			    engine ? engine : "any engine");
	if (rc != 0) {
		cJSON_Delete(o);
		return rc;
	}
	*out = o;
	return 0;
}

/* ---- intervals ----------------------------------------------------------------------------- */

/* A prediction's 80% interval comes from how far the cross-validation's predictions of its
 * engine's rows of the same kind were from the measured ones (val_intervals): throughput, time
 * to first token, and the per-token latencies (TPOT, inter-token, end to end).  Serving has
 * fewer rows than training: an engine with fewer than INTERVAL_ROWS of a kind takes its
 * parent's, or none (sim_serve_interval). */
#define INTERVAL_ROWS 10

static const char *const iv_kinds[3] = {"throughput", "ttft", "tpot"}; /* by sim_iv_kind */

/* The interval kind of a report row (its "kind"), -1 for none. */
static int
iv_kind_of(const char *kind)
{
	if (!strcmp(kind, "latency"))
		return SIM_IV_TPOT;
	for (int k = 0; k < 3; k++)
		if (!strcmp(kind, iv_kinds[k]))
			return k;
	return -1;
}

/* The rows' errors as the intervals see them (val_err), each with the kind it counts in and its
 * engine's profile, loaded once into profs (np of them; the caller frees them). */
typedef struct row_errs {
	val_err *e;
	int *kind;
	hw_profile **profs;
	size_t n, np;
} row_errs;

static void
row_errs_free(row_errs *r)
{
	for (size_t k = 0; k < r->np; k++)
		hw_profile_free(r->profs[k]);
	free(r->e), free(r->kind), free(r->profs);
	memset(r, 0, sizeof *r);
}

static int
row_errs_load(hw_db *db, const cJSON *rows, row_errs *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	size_t n = (size_t)cJSON_GetArraySize(rows);
	r->e = calloc(n ? n : 1, sizeof *r->e);
	r->profs = calloc(n ? n : 1, sizeof *r->profs);
	r->kind = calloc(n ? n : 1, sizeof *r->kind);
	if (r->e == NULL || r->profs == NULL || r->kind == NULL) {
		row_errs_free(r);
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	}
	const cJSON *x;
	cJSON_ArrayForEach(x, rows)
	{
		const char *en = cJSON_GetStringValue(cJSON_GetObjectItem(x, "engine"));
		const char *metric = cJSON_GetStringValue(cJSON_GetObjectItem(x, "metric"));
		double m = cJSON_GetNumberValue(cJSON_GetObjectItem(x, "measured"));
		double p = cJSON_GetNumberValue(cJSON_GetObjectItem(x, "predicted"));
		size_t k = 0;
		while (k < r->np && strcmp(hw_profile_name(r->profs[k]), en))
			k++;
		if (k == r->np) {
			int rc = hw_profile_load(db, HW_SCOPE_ENGINE, en, 0, &r->profs[k], err, errlen);
			if (rc != 0) {
				row_errs_free(r);
				return rc;
			}
			r->np++;
		}
		/* log(measured / predicted) of a time; of a rate (tokens/s, requests/s), its negative */
		bool rate = val_has(metric, "tokens/s") || !strcmp(metric, "requests/s");
		double q = m > 0 && p > 0 ? log(m / p) : NAN;
		int kind = iv_kind_of(cJSON_GetStringValue(cJSON_GetObjectItem(x, "kind")));
		val_err *y = &r->e[r->n];
		*y = (val_err){.q = rate ? -q : q, .family = cJSON_GetStringValue(cJSON_GetObjectItem(x, "family")),
			       .p = r->profs[k]};
		/* the throughput of a run at an arrival rate is the rate, not the engine's speed */
		y->out_of_percentiles = kind == SIM_IV_TPUT && cJSON_IsTrue(cJSON_GetObjectItem(x, "at_rate"));
		const cJSON *b = cJSON_GetObjectItem(x, "predicted_band");
		double lo = cJSON_GetNumberValue(cJSON_GetArrayItem(b, 0)), hi = cJSON_GetNumberValue(cJSON_GetArrayItem(b, 1));
		if (p > 0 && lo > 0 && hi >= lo) {
			/* m within [lo, hi]: log(m / p) within [log(lo / p), log(hi / p)] */
			y->banded = true;
			y->blo = rate ? -log(hi / p) : log(lo / p);
			y->bhi = rate ? -log(lo / p) : log(hi / p);
		}
		r->kind[r->n++] = kind;
	}
	return 0;
}

/* The errors of the rows of interval kind k (the others NAN), into a copy the caller frees. */
static val_err *
errs_of_kind(const row_errs *r, int k)
{
	val_err *ek = calloc(r->n ? r->n : 1, sizeof *ek);
	for (size_t j = 0; ek != NULL && j < r->n; j++)
		ek[j] = r->e[j], ek[j].q = r->kind[j] == k ? r->e[j].q : NAN;
	return ek;
}

static int
intervals_json(hw_db *db, const cJSON *rows, const char *const *fam, size_t nf, cJSON **out, char *err,
	       size_t errlen)
{
	*out = NULL;
	row_errs r;
	int rc = row_errs_load(db, rows, &r, err, errlen);
	if (rc != 0)
		return rc;
	cJSON *o = cJSON_CreateObject();
	size_t inside = 0, total = 0;
	for (int k = 0; k < 3 && rc == 0; k++) {
		val_err *ek = errs_of_kind(&r, k);
		cJSON *y = ek ? val_intervals(ek, r.n, (const hw_profile *const *)r.profs, r.np, fam, nf, INTERVAL_ROWS, "engine")
			      : NULL;
		free(ek);
		if (y == NULL || o == NULL) {
			rc = pp_err(err, errlen, PP_ENOMEM, "out of memory");
			break;
		}
		inside += (size_t)(cJSON_GetNumberValue(cJSON_GetObjectItem(y, "coverage")) *
				   cJSON_GetNumberValue(cJSON_GetObjectItem(y, "rows")) + 0.5);
		total += (size_t)cJSON_GetNumberValue(cJSON_GetObjectItem(y, "rows"));
		cJSON_AddItemToObject(o, iv_kinds[k], y);
	}
	/* the capacity band: every engine's batch and closed-loop throughput errors together */
	double p10, p90;
	val_err *et = rc == 0 ? errs_of_kind(&r, SIM_IV_TPUT) : NULL;
	if (rc == 0 && et == NULL)
		rc = pp_err(err, errlen, PP_ENOMEM, "out of memory");
	if (rc == 0 && r.np > 0 && val_percentiles(et, r.n, r.profs[0], 0, NULL, INTERVAL_ROWS, &p10, &p90)) {
		size_t m = 0;
		for (size_t i = 0; i < r.n; i++)
			m += isfinite(et[i].q) && !et[i].out_of_percentiles;
		cJSON *cb = cJSON_AddObjectToObject(o, "capacity_band");
		cJSON_AddStringToObject(cb, "engine", hw_profile_ancestor(r.profs[0], 0));
		cJSON_AddNumberToObject(cb, "rows", (double)m);
		cJSON_AddNumberToObject(cb, "p10", p10);
		cJSON_AddNumberToObject(cb, "p90", p90);
	}
	free(et);
	row_errs_free(&r);
	if (rc != 0) {
		cJSON_Delete(o);
		return rc;
	}
	cJSON_AddNumberToObject(o, "rows", (double)total);
	cJSON_AddNumberToObject(o, "coverage", total ? (double)inside / (double)total : 0.0);
	*out = o;
	return 0;
}

/* The capacity bands of the cross-validation's rows: for each family, the speeds at the ends of
 * the capacity band over the other families' rows (the throughput errors of every engine's
 * batch and closed-loop runs, their own folds' predictions: one MLPerf round's bias of an
 * engine has not predicted the next round's, so the band is every engine's), and the family's
 * rows predicted again, under the values its fold fitted, on engines that fast
 * (sim_serve_speed): the fold's "capacity_speeds", "predicted_band" in each row.  A latency at an arrival rate moves with the
 * engine's capacity much more than in proportion near saturation, which the percentiles of
 * other runs' latencies cannot say. */
static int
capacity_bands(hw_db *db, const val_src *srcs, size_t n, cJSON *rows, cJSON *folds, char *err, size_t errlen)
{
	row_errs r;
	int rc = row_errs_load(db, rows, &r, err, errlen);
	if (rc != 0)
		return rc;
	val_err *et = errs_of_kind(&r, SIM_IV_TPUT);
	if (et == NULL)
		rc = pp_err(err, errlen, PP_ENOMEM, "out of memory");
	cJSON *fold;
	cJSON_ArrayForEach(fold, folds)
	{
		if (rc != 0)
			break;
		const char *fam = cJSON_GetStringValue(cJSON_GetObjectItem(fold, "family"));
		double p10, p90;
		/* q of a rate is log(predicted / measured): the engine is e^-q as fast */
		if (r.np == 0 || !val_percentiles(et, r.n, r.profs[0], 0, fam, INTERVAL_ROWS, &p10, &p90))
			continue;
		double speeds[2] = {exp(-p90), exp(-p10)};
		cJSON_AddItemToObject(fold, "capacity_speeds", cJSON_CreateDoubleArray(speeds, 2));
		if ((rc = begin_write(db, "SAVEPOINT paraplan_band", err, errlen)) != 0)
			break;
		rc = hw_exec_simple(db, "DELETE FROM param WHERE scope = 'engine' AND origin = 'fitted'", err, errlen);
		const cJSON *fit;
		cJSON_ArrayForEach(fit, cJSON_GetObjectItem(fold, "fits"))
		{
			double x[NSERVE];
			for (size_t k = 0; k < NSERVE; k++)
				x[k] = cJSON_GetNumberValue(
					cJSON_GetObjectItem(cJSON_GetObjectItem(fit, "parameters"), serve_params[k].key));
			if (rc == 0)
				rc = set_engine(db, cJSON_GetStringValue(cJSON_GetObjectItem(fit, "engine")), x,
						"cross-validation fold", "", err, errlen);
		}
		cJSON *pd = NULL;
		serve_opts test = {NULL, NULL, fam, false, true, speeds, false};
		if (rc == 0)
			rc = serving_report(db, srcs, n, &test, &pd, err, errlen);
		hw_exec_simple(db, "ROLLBACK TO paraplan_band", NULL, 0);
		hw_exec_simple(db, "RELEASE paraplan_band", NULL, 0);
		const cJSON *y, *prow = rc == 0 ? cJSON_GetObjectItem(pd, "rows") : NULL;
		cJSON_ArrayForEach(y, prow)
		{
			const cJSON *b = cJSON_GetObjectItem(y, "predicted_band");
			const char *data = cJSON_GetStringValue(cJSON_GetObjectItem(y, "data"));
			double line = cJSON_GetNumberValue(cJSON_GetObjectItem(y, "line"));
			cJSON *x;
			cJSON_ArrayForEach(x, rows)
			{
				if (b != NULL && !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(x, "data")), data) &&
				    cJSON_GetNumberValue(cJSON_GetObjectItem(x, "line")) == line)
					cJSON_AddItemToObject(x, "predicted_band", cJSON_Duplicate(b, true));
			}
		}
		cJSON_Delete(pd);
	}
	free(et);
	row_errs_free(&r);
	return rc;
}

/* ---- cross-validation ----------------------------------------------------------------------- *
 * For each source family in turn: fit every engine over the rows of the other families, from
 * the profiles' defaults (the shipped fits saw every row), predict the family's rows with those
 * values, and put its rows into one report.  An engine with no rows outside the family keeps
 * its profile's defaults. */
int
val_serving_cross_validate(hw_db *db, const val_src *srcs, size_t n, int max_evals, cJSON **out, char *err,
			   size_t errlen)
{
	char origin[1024];
	origins(srcs, n, origin, sizeof origin);
	*out = NULL;
	if (hw_readonly(db))
		return pp_err(err, errlen, PP_EIO, "%s: database is read-only: fitting writes parameters", hw_path(db));
	cJSON *all;
	serve_opts ao = {NULL, NULL, NULL, false, false, NULL, false};
	int rc = serving_report(db, srcs, n, &ao, &all, err, errlen);
	if (rc != 0)
		return rc;
	/* the families of the rows, in order of appearance */
	char fams[64][64];
	int nf = 0;
	for (size_t i = 0; i < n; i++) {
		pp_csv t;
		if ((rc = pp_csv_parse(srcs[i].text, srcs[i].len, srcs[i].origin, &t, err, errlen)) != 0) {
			cJSON_Delete(all);
			return rc;
		}
		int scol = pp_csv_column(&t, "source");
		for (size_t r = 1; r < t.nrows && scol >= 0; r++) {
			char f[64];
			val_family_key(pp_csv_get(&t, r, scol), f, sizeof f);
			bool seen = false;
			for (int k = 0; k < nf; k++)
				seen = seen || !strcmp(fams[k], f);
			if (!seen && nf < 64)
				pp_strlcpy(fams[nf++], f, sizeof fams[0]);
		}
		pp_csv_free(&t);
	}
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "kind", "validate-cross");
	cJSON_AddStringToObject(doc, "set", "serving");
	cJSON_AddStringToObject(doc, "data", origin);
	cJSON *rows = cJSON_AddArrayToObject(doc, "rows");
	cJSON *folds = cJSON_AddArrayToObject(doc, "folds");
	for (int f = 0; f < nf && rc == 0; f++) {
		if ((rc = begin_write(db, "SAVEPOINT paraplan_xval", err, errlen)) != 0)
			break;
		/* each fold starts from the profiles' defaults: the shipped (or saved) engine fits were
		 * made on every row, the family left out included */
		if ((rc = hw_exec_simple(db, "DELETE FROM param WHERE scope = 'engine' AND origin = 'fitted'", err, errlen)) !=
		    0) {
			hw_exec_simple(db, "ROLLBACK TO paraplan_xval", NULL, 0);
			hw_exec_simple(db, "RELEASE paraplan_xval", NULL, 0);
			break;
		}
		serve_opts train = {NULL, NULL, fams[f], true, true, NULL, false};
		cJSON *fold = cJSON_CreateObject();
		cJSON_AddStringToObject(fold, "family", fams[f]);
		cJSON_AddItemToArray(folds, fold);
		rc = fit_engines_on(db, srcs, n, &train, NULL, max_evals, cJSON_AddArrayToObject(fold, "fits"), err, errlen);
		cJSON *pd = NULL;
		if (rc == 0) {
			serve_opts test = {NULL, NULL, fams[f], false, true, NULL, false};
			rc = serving_report(db, srcs, n, &test, &pd, err, errlen);
		}
		hw_exec_simple(db, "ROLLBACK TO paraplan_xval", NULL, 0);
		hw_exec_simple(db, "RELEASE paraplan_xval", NULL, 0);
		if (rc == 0) {
			cJSON *x;
			cJSON_ArrayForEach(x, cJSON_GetObjectItem(pd, "rows"))
			{
				cJSON_AddItemToArray(rows, cJSON_Duplicate(x, true));
			}
		}
		cJSON_Delete(pd);
	}
	if (rc != 0) {
		cJSON_Delete(doc);
		cJSON_Delete(all);
		return rc;
	}
	cJSON *sk = cJSON_Duplicate(cJSON_GetObjectItem(all, "skipped"), true);
	cJSON_AddItemToObject(doc, "skipped", sk);
	cJSON_Delete(all);
	val_summarize(doc, rows, sk);
	val_group(cJSON_AddArrayToObject(doc, "engines"), rows, "engine");
	val_group(cJSON_AddArrayToObject(doc, "kinds"), rows, "kind");
	if ((rc = capacity_bands(db, srcs, n, rows, folds, err, errlen)) != 0) {
		cJSON_Delete(doc);
		return rc;
	}
	const char *fp[64];
	for (int f = 0; f < nf; f++)
		fp[f] = fams[f];
	cJSON *iv = NULL;
	if ((rc = intervals_json(db, rows, fp, (size_t)nf, &iv, err, errlen)) != 0) {
		cJSON_Delete(doc);
		return rc;
	}
	cJSON_AddItemToObject(doc, "intervals", iv);
	*out = doc;
	return 0;
}
