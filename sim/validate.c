/*
 * validate.c -- predictions against published training measurements.
 *
 * Each row of a validation CSV (the columns of sim/data/published-training.csv) is turned into
 * a model, a system and a configuration, simulated, and the prediction converted to the row's
 * own metric and FLOP accounting before the error is taken:
 *   achieved TFLOP/s per GPU   Narayanan 2021 Eq. 3 FLOPs (96Bslh^2(1 + s/6h + V/16lh), which
 *                              counts the recomputed forward) / (step time x GPUs)
 *   MFU                        Korthikanti 2022 Eq. 7 FLOPs / (step time x GPUs x dense peak)
 *   iteration time             the step time
 *   tokens/s per GPU           global batch x seq / step time / GPUs
 *   one layer's fwd+bwd time   sim_layer_time
 *   scaling efficiency, speedup  ratios against the row's stated 1-GPU baseline, simulated too
 * What a row does not state is settled by documented rules, never by the measured value:
 *   - the software of the source: Megatron-LM (2019-2022) computed attention with unfused
 *     softmax kernels and reduced data-parallel gradients after the backward pass (the
 *     overlapped reduction came to Megatron-LM in 2023); llm-foundry uses flash attention;
 *   - an unstated micro-batch size or number of virtual stages is the one the simulator finds
 *     fastest among those that fit in memory, as the authors tuned their published runs;
 *   - Megatron-LM's 2019-2020 runs checkpointed every layer (--checkpoint-activations);
 *   - a row whose tp x pp is given only in its notes ("TP=8, PP=12") takes it from there.
 * Rows that cannot be expressed (no GPU count, a GPU not in the database, an aggregate over
 * unstated runs, a technique the simulator does not model) are reported as skipped with the
 * reason.
 */
#include "config.h"
#include "common/csv.h"
#include "sim/train_int.h"

#include <cJSON.h>
#include <ctype.h>
#include <gsl/gsl_multimin.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct embedded_file { const char *name; const char *text; };
extern const struct embedded_file sim_validation_files[];

const char *
sim_validation_data(const char *name)
{
	for (size_t i = 0; sim_validation_files[i].name != NULL; i++)
		if (!strcmp(sim_validation_files[i].name, name))
			return sim_validation_files[i].text;
	return NULL;
}

enum metric {
	M_NONE, M_TFLOPS_EQ3, M_MFU_EQ7, M_ITER_S, M_ITER_MS, M_TOKENS_GPU, M_LAYER_MS, M_WEAK_EFF, M_SPEEDUP
};

typedef struct vrow {
	const pp_csv *t;
	size_t r;
	int col[32];
} vrow;

static const char *const cols[] = {"source", "table", "model", "layers", "hidden", "heads", "kv_heads", "ffn",
				   "vocab", "seq", "gpu", "num_gpus", "precision", "tp", "pp", "dp", "cp", "ep",
				   "vpp", "zero", "micro_batch", "global_batch", "recompute", "measured_metric",
				   "measured_value", "unit", "notes", "inter_node", NULL};
enum { C_SOURCE, C_TABLE, C_MODEL, C_LAYERS, C_HIDDEN, C_HEADS, C_KV, C_FFN, C_VOCAB, C_SEQ, C_GPU, C_GPUS,
       C_PREC, C_TP, C_PP, C_DP, C_CP, C_EP, C_VPP, C_ZERO, C_MB, C_GB, C_RECOMP, C_METRIC, C_VALUE, C_UNIT,
       C_NOTES, C_INTER };

static const char *
get(const vrow *v, int c)
{
	return pp_csv_get(v->t, v->r, v->col[c]);
}

static bool
has(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (const char *p = hay; *p; p++)
		if (strncasecmp(p, needle, n) == 0)
			return true;
	return false;
}

static int64_t
geti(const vrow *v, int c)
{
	int64_t x;
	return pp_parse_i64(get(v, c), &x) == 0 ? x : 0;
}

static enum metric
metric_of(const vrow *v)
{
	const char *m = get(v, C_METRIC), *u = get(v, C_UNIT);
	if (has(m, "achieved TFLOP/s per GPU") || has(m, "sustained TFLOP/s per GPU"))
		return M_TFLOPS_EQ3;
	if (!strcmp(m, "MFU"))
		return M_MFU_EQ7;
	if (!strcmp(m, "iteration time"))
		return !strcmp(u, "ms") ? M_ITER_MS : M_ITER_S;
	if (!strcmp(m, "tokens/s per GPU"))
		return M_TOKENS_GPU;
	if (has(m, "time of ONE transformer layer"))
		return M_LAYER_MS;
	if (has(m, "weak-scaling efficiency vs 1-GPU") || !strcmp(m, "model-parallel scaling efficiency"))
		return M_WEAK_EFF;
	if (has(m, "speedup vs 1 GPU"))
		return M_SPEEDUP;
	return M_NONE;
}

/* The system a row ran on, from its GPU column: the first entry whose GPU name the column
 * contains (more specific names first). */
static const char *
system_of(const vrow *v)
{
	static const struct { const char *gpu, *system; } map[] = {
		{"P100", NULL}, {"Pascal", NULL},
		{"V100", "dgx-2h"},
		{"A100 40GB", "dgx-a100-40gb"}, {"A100-SXM4-40GB", "dgx-a100-40gb"}, {"A100", "dgx-a100"},
		{"H100 NVL", NULL}, {"H100 PCIe", NULL}, {"H100", "dgx-h100"},
		{"H200", "hgx-h200"},
		{"GB200", "gb200-nvl72"}, {"B200", "dgx-b200"},
		{"MI300X", "mi300x-8"},
	};
	const char *g = get(v, C_GPU);
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (has(g, map[i].gpu))
			return map[i].system;
	return NULL;
}

static bool
megatron_era(const vrow *v)
{
	return !has(get(v, C_SOURCE), "llm-foundry");
}

/* The row's model as one of our model documents. */
static int
row_model(const vrow *v, model **out, char *err, size_t errlen)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", get(v, C_MODEL));
	cJSON_AddStringToObject(o, "source", get(v, C_SOURCE));
	static const int nums[] = {C_LAYERS, C_HIDDEN, C_HEADS, C_KV, C_FFN, C_VOCAB, C_SEQ};
	static const char *const keys[] = {"layers", "hidden", "heads", "kv_heads", "ffn", "vocab", "seq"};
	for (size_t i = 0; i < 7; i++) {
		int64_t x = geti(v, nums[i]);
		if (x > 0)
			cJSON_AddNumberToObject(o, keys[i], (double)x);
	}
	int64_t seq = geti(v, C_SEQ);
	cJSON_AddNumberToObject(o, "max_positions", (double)(seq > 0 ? seq : 2048));
	cJSON_AddStringToObject(o, "mlp", "gelu");
	cJSON_AddStringToObject(o, "norm", "layernorm");
	cJSON_AddStringToObject(o, "position", "learned");
	cJSON_AddBoolToObject(o, "tied_embeddings", true);
	/* Megatron's GPT models have biases and dropout; llm-foundry's MPT configs neither. */
	cJSON_AddBoolToObject(o, "bias", megatron_era(v));
	char *text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (text == NULL)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	char origin[160];
	snprintf(origin, sizeof origin, "validation row %zu", v->t->lines[v->r]);
	int rc = model_parse(text, strlen(text), origin, out, err, errlen);
	free(text);
	return rc;
}

/* Bounds of the numbers a row may state, those of the command line: beyond them a row is
 * skipped with the reason, before any product of them can overflow. */
#define GPUS_MAX (1 << 24)
#define DEGREE_MAX (1 << 16)
#define BATCH_MAX ((int64_t)1 << 40)
#define MICRO_MAX ((int64_t)1 << 24)

static bool
out_of_range(const vrow *v, int c, int64_t max)
{
	int64_t x = geti(v, c);
	return x < 0 || x > max;
}

/* "TP=8, PP=12" in the notes. */
static void
notes_split(const vrow *v, int *tp, int *pp)
{
	const char *n = get(v, C_NOTES);
	const char *a = strstr(n, "TP=");
	const char *b = strstr(n, "PP=");
	if (a && b) {
		/* strtol, not atoi: a long run of digits must not overflow (atoi's overflow is undefined) */
		long x = strtol(a + 3, NULL, 10), y = strtol(b + 3, NULL, 10);
		*tp = x > 0 && x <= DEGREE_MAX ? (int)x : 0;
		*pp = y > 0 && y <= DEGREE_MAX ? (int)y : 0;
	}
}

/* Builds the configuration; *search_mb / *search_vpp say which unstated settings to search. */
static const char *
row_config(const vrow *v, const model *m, sim_train_cfg *c, bool *search_mb, bool *search_vpp)
{
	sim_train_cfg_init(c);
	if (out_of_range(v, C_GPUS, GPUS_MAX))
		return "the GPU count is out of range (1 to 16777216)";
	if (out_of_range(v, C_TP, DEGREE_MAX) || out_of_range(v, C_PP, DEGREE_MAX) || out_of_range(v, C_DP, GPUS_MAX) ||
	    out_of_range(v, C_CP, DEGREE_MAX) || out_of_range(v, C_EP, DEGREE_MAX) || out_of_range(v, C_VPP, DEGREE_MAX))
		return "a parallel degree is out of range";
	if (out_of_range(v, C_GB, BATCH_MAX) || out_of_range(v, C_MB, MICRO_MAX))
		return "the batch size is out of range";
	c->gpus = (int)geti(v, C_GPUS);
	if (c->gpus <= 0)
		return "the GPU count is not stated";
	c->tp = (int)geti(v, C_TP);
	c->pp = (int)geti(v, C_PP);
	if (c->tp <= 0 && c->pp <= 0)
		notes_split(v, &c->tp, &c->pp);
	if (c->tp <= 0)
		c->tp = 1;
	if (c->pp <= 0)
		c->pp = 1;
	c->dp = (int)geti(v, C_DP);
	c->cp = geti(v, C_CP) > 0 ? (int)geti(v, C_CP) : 1;
	c->ep = geti(v, C_EP) > 0 ? (int)geti(v, C_EP) : 1;
	const char *zero = get(v, C_ZERO);
	if (has(zero, "FSDP"))
		c->fsdp = true;
	else if (has(zero, "ZeRO-3"))
		c->zero = 3;
	else if (has(zero, "ZeRO-2"))
		c->zero = 2;
	else if (has(zero, "ZeRO-1"))
		c->zero = 1;
	else if (zero[0] != '\0')
		return "the ZeRO configuration is not one the simulator models";
	const char *prec = get(v, C_PREC);
	c->dtype = has(prec, "bf16") ? HW_BF16 : has(prec, "fp32") ? HW_FP32 : HW_FP16;
	const char *rc = get(v, C_RECOMP);
	if (has(rc, "microbatch-level"))
		return "micro-batch-level recomputation is not modelled";
	if (has(rc, "selective"))
		c->recompute = SIM_RECOMPUTE_SELECTIVE;
	else if (has(rc, "full") || (rc[0] == '\0' && megatron_era(v)))
		c->recompute = SIM_RECOMPUTE_FULL; /* --checkpoint-activations */
	else
		c->recompute = SIM_RECOMPUTE_NONE;
	c->sequence_parallel = has(rc, "sequence parallel") && !has(rc, "no sequence parallel");
	if (megatron_era(v)) {
		c->attention = SIM_ATTN_UNFUSED;
		c->overlap_grad_reduce = false;
	}
	c->global_batch = geti(v, C_GB);
	c->micro_batch = geti(v, C_MB);
	c->seq = 0;
	*search_mb = c->micro_batch <= 0;
	if (c->micro_batch <= 0)
		c->micro_batch = 1;
	int64_t vpp = geti(v, C_VPP);
	*search_vpp = vpp <= 0 && c->pp > 1;
	c->vpp = vpp > 0 ? (int)vpp : 1;
	if (c->vpp > 1)
		c->schedule = SIM_INTERLEAVED;
	if (c->global_batch <= 0) {
		/* weak-scaling rows state the per-replica batch as the micro-batch */
		if (geti(v, C_MB) <= 0)
			return "the batch size is not stated";
		int64_t dp = c->dp > 0 ? c->dp : c->gpus / ((int64_t)c->tp * c->pp);
		c->global_batch = c->micro_batch * (dp > 0 ? dp : 1);
	}
	(void)m;
	return NULL;
}

typedef struct outcome {
	double step;      /* seconds */
	sim_train_cfg cfg;/* as run (checked) */
	bool fits;
} outcome;

static int
run_one(const model *m, const hw_cost *cost, const sim_train_cfg *c, outcome *o, char *err, size_t errlen)
{
	sim_train_result *r;
	int rc = sim_train(m, cost, c, &r, err, errlen);
	if (rc != 0)
		return rc;
	o->step = sim_train_metrics(r)->step_time_s;
	o->fits = sim_train_metrics(r)->fits;
	o->cfg = *c;
	o->cfg.dp = r->cfg.dp;
	o->cfg.schedule = r->cfg.schedule;
	sim_train_result_free(r);
	return 0;
}

/* Runs the row's configuration, searching the unstated micro-batch and virtual stages: the
 * fastest configuration that fits (or the fastest of all when none fits). */
static int
run_row(const vrow *v, const model *m, const hw_cost *cost, sim_train_cfg *c, bool search_mb, bool search_vpp,
	outcome *best, char *err, size_t errlen)
{
	const model_tf *t = model_transformer(m);
	bool interleaved_note = has(get(v, C_NOTES), "interleaved");
	int64_t mbs[] = {1, 2, 4, 8, 16};
	int nmb = search_mb ? 5 : 1;
	bool found = false;
	int rc = 0;
	char e2[512] = "";
	for (int i = 0; i < nmb; i++) {
		sim_train_cfg x = *c;
		if (search_mb)
			x.micro_batch = mbs[i];
		int64_t dp = x.dp > 0 ? x.dp : x.gpus / ((int64_t)x.tp * x.pp * x.cp);
		if (dp <= 0 || x.global_batch % (x.micro_batch * dp) != 0)
			continue;
		int64_t per_stage = t->layers / x.pp;
		for (int64_t vpp = 1; vpp <= (search_vpp ? per_stage : 1); vpp++) {
			sim_train_cfg y = x;
			if (search_vpp) {
				if (per_stage * x.pp != t->layers || per_stage % vpp != 0)
					continue;
				if (vpp == 1 && interleaved_note && per_stage > 1)
					continue;
				y.vpp = (int)vpp;
				y.schedule = vpp > 1 ? SIM_INTERLEAVED : SIM_1F1B;
			}
			outcome o;
			rc = run_one(m, cost, &y, &o, e2, sizeof e2);
			if (rc == PP_EUSAGE)
				continue; /* not a valid combination */
			if (rc != 0)
				return pp_err(err, errlen, rc, "%s", e2);
			bool better = !found || (o.fits && !best->fits) || (o.fits == best->fits && o.step < best->step);
			if (better) {
				*best = o;
				found = true;
			}
		}
	}
	if (!found)
		return pp_err(err, errlen, PP_EUSAGE, "%s", e2[0] ? e2 : "no valid configuration");
	return 0;
}

static double
peak_of(const hw_cost *cost, hw_dtype t)
{
	return hw_cost_system(cost)->gpu.peak_tflops[t] * 1e12;
}

/* The 1-GPU baseline of Shoeybi et al. 2019: the 1.2B model (40 layers, h 1536, 16 heads,
 * seq 1024) with batch 8 on one DGX-2H V100, fully recomputed. */
static int
shoeybi_baseline(hw_db *db, const char *system, double *tflops, double *step, char *err, size_t errlen)
{
	static const char doc[] = "{\"name\":\"gpt2-1.2b-baseline\",\"layers\":40,\"hidden\":1536,\"heads\":16,"
				  "\"ffn\":6144,\"vocab\":51200,\"seq\":1024,\"bias\":true,\"tied_embeddings\":true}";
	model *m;
	int rc = model_parse(doc, strlen(doc), "Shoeybi 2019 baseline", &m, err, errlen);
	if (rc != 0)
		return rc;
	hw_cost *cost;
	if ((rc = hw_cost_new(db, system, &cost, err, errlen)) != 0) {
		model_free(m);
		return rc;
	}
	sim_train_cfg c;
	sim_train_cfg_init(&c);
	c.micro_batch = c.global_batch = 8;
	c.dtype = HW_FP16;
	c.recompute = SIM_RECOMPUTE_FULL;
	c.attention = SIM_ATTN_UNFUSED;
	c.overlap_grad_reduce = false;
	outcome o;
	rc = run_one(m, cost, &c, &o, err, errlen);
	if (rc == 0) {
		*step = o.step;
		*tflops = model_flops_narayanan_eq3(m, 8, 1024) / o.step / 1e12;
	}
	hw_cost_free(cost);
	model_free(m);
	return rc;
}

static void
add_skip(cJSON *arr, const vrow *v, const char *why)
{
	cJSON *x = cJSON_CreateObject();
	cJSON_AddNumberToObject(x, "line", (double)v->t->lines[v->r]);
	cJSON_AddStringToObject(x, "source", get(v, C_SOURCE));
	cJSON_AddStringToObject(x, "table", get(v, C_TABLE));
	cJSON_AddStringToObject(x, "model", get(v, C_MODEL));
	cJSON_AddStringToObject(x, "metric", get(v, C_METRIC));
	cJSON_AddStringToObject(x, "reason", why);
	cJSON_AddItemToArray(arr, x);
}

/* Short name of a source: the first author (or repository) and year. */
static void
source_key(const char *src, char *out, size_t n)
{
	size_t i = 0;
	while (src[i] && src[i] != ',' && src[i] != '(' && i + 1 < n)
		i++;
	while (i > 0 && src[i - 1] == ' ')
		i--;
	snprintf(out, n, "%.*s", (int)i, src);
}

static bool
in_set(const vrow *v, const char *set)
{
	if (set == NULL || !strcmp(set, "training") || !strcmp(set, "all"))
		return true;
	if (!strcmp(set, "a100") || !strcmp(set, "h100") || !strcmp(set, "v100"))
		return has(get(v, C_GPU), set);
	if (!strcmp(set, "mosaicml"))
		return has(get(v, C_SOURCE), "llm-foundry");
	if (!strcmp(set, "megatron-readme"))
		return has(get(v, C_SOURCE), "Megatron-LM README");
	return has(get(v, C_SOURCE), set) || has(get(v, C_TABLE), set);
}

/* A row made ready to simulate: its model, system and configuration fixed (the search over
 * unstated settings done once), or the reason it is skipped. */
typedef struct prow {
	size_t r;            /* CSV row */
	enum metric mt;
	double measured, predicted;
	model *m;
	const char *system;
	sim_train_cfg cfg;
	bool smb, svpp;
	char why[256];       /* non-empty: skipped */
} prow;

typedef struct prepared {
	pp_csv t;
	vrow v;
	prow *rows;
	size_t n;
	bool have_base;
	double base_tflops, base_step;
} prepared;

static void
prepared_free(prepared *p)
{
	for (size_t i = 0; i < p->n; i++)
		model_free(p->rows[i].m);
	free(p->rows);
	pp_csv_free(&p->t);
	memset(p, 0, sizeof *p);
}

/* Predicts one prepared row with the parameters now in the database. */
static int
predict(hw_db *db, prepared *p, prow *w, bool search, char *err, size_t errlen)
{
	char e2[512] = "";
	hw_cost *cost;
	int rc = hw_cost_new(db, w->system, &cost, err, errlen);
	if (rc != 0)
		return rc;
	const model_tf *tf = model_transformer(w->m);
	int64_t seq = tf->seq;
	outcome o;
	memset(&o, 0, sizeof o);
	if (w->mt == M_LAYER_MS) {
		sim_train_cfg x = w->cfg;
		rc = sim_train_check(w->m, hw_cost_system(cost), &x, e2, sizeof e2);
		if (rc == 0) {
			w->cfg = x;
			w->predicted = sim_layer_time(w->m, cost, &x, 0) * 1e3;
		}
		goto done;
	}
	if (search) {
		rc = run_row(&p->v, w->m, cost, &w->cfg, w->smb, w->svpp, &o, e2, sizeof e2);
		if (rc == 0)
			w->cfg = o.cfg;
	} else {
		rc = run_one(w->m, cost, &w->cfg, &o, e2, sizeof e2);
	}
	if (rc != 0)
		goto done;
	const sim_train_cfg *c = &w->cfg;
	double tokens = (double)c->global_batch * (double)seq;
	switch (w->mt) {
	case M_TFLOPS_EQ3:
		w->predicted = model_flops_narayanan_eq3(w->m, (double)c->global_batch, seq) / o.step / (double)c->gpus / 1e12;
		break;
	case M_MFU_EQ7:
		w->predicted = 100.0 * model_flops_korthikanti_eq7(w->m, (double)c->global_batch, seq) / o.step /
			       (double)c->gpus / peak_of(cost, c->dtype);
		break;
	case M_ITER_S:
		w->predicted = o.step;
		break;
	case M_ITER_MS:
		w->predicted = o.step * 1e3;
		break;
	case M_TOKENS_GPU:
		w->predicted = tokens / o.step / (double)c->gpus;
		break;
	case M_WEAK_EFF:
	case M_SPEEDUP:
		if (!p->have_base) {
			if ((rc = shoeybi_baseline(db, w->system, &p->base_tflops, &p->base_step, e2, sizeof e2)) != 0)
				goto done;
			p->have_base = true;
		}
		if (w->mt == M_WEAK_EFF)
			w->predicted = 100.0 *
				       (model_flops_narayanan_eq3(w->m, (double)c->global_batch, seq) / o.step / (double)c->gpus / 1e12) /
				       p->base_tflops;
		else
			w->predicted = p->base_step / o.step;
		break;
	default:
		break;
	}
done:
	hw_cost_free(cost);
	if (rc == PP_EUSAGE) {
		pp_strlcpy(w->why, e2[0] ? e2 : "no valid configuration", sizeof w->why);
		return 0;
	}
	if (rc != 0)
		return pp_err(err, errlen, rc, "%s", e2);
	return 0;
}

/* Parses the CSV and prepares every row of the set, searching unstated settings once. */
/* Without `simulate`, each row's configuration is only checked (sim_train_check against its
 * system): the reading half of the validation, cheap enough to fuzz. */
static int
check_row(hw_db *db, prow *w)
{
	hw_system sys;
	char e2[512] = "";
	int rc = hw_system_get(db, w->system, &sys, e2, sizeof e2);
	if (rc == 0) {
		sim_train_cfg x = w->cfg;
		rc = sim_train_check(w->m, &sys, &x, e2, sizeof e2);
		if (rc == 0)
			w->cfg = x;
	}
	if (rc != 0)
		pp_strlcpy(w->why, e2[0] ? e2 : "no valid configuration", sizeof w->why);
	return rc == PP_EUSAGE || rc == 0 ? 0 : rc;
}

static int
prepare(hw_db *db, const char *text, size_t len, const char *origin, const char *set, bool simulate, prepared *p,
	char *err, size_t errlen)
{
	memset(p, 0, sizeof *p);
	int rc = pp_csv_parse(text, len, origin, &p->t, err, errlen);
	if (rc != 0)
		return rc;
	p->v.t = &p->t;
	for (int i = 0; cols[i] != NULL; i++) {
		p->v.col[i] = pp_csv_column(&p->t, cols[i]);
		if (p->v.col[i] < 0 && i != C_INTER) {
			rc = pp_err(err, errlen, PP_EINPUT, "%s: missing column \"%s\"", origin, cols[i]);
			goto fail;
		}
	}
	p->rows = calloc(p->t.nrows ? p->t.nrows : 1, sizeof *p->rows);
	if (p->rows == NULL) {
		rc = pp_err(err, errlen, PP_ENOMEM, "out of memory");
		goto fail;
	}
	for (size_t r = 1; r < p->t.nrows; r++) {
		vrow *v = &p->v;
		v->r = r;
		if (!in_set(v, set))
			continue;
		prow *w = &p->rows[p->n++];
		w->r = r;
		w->mt = metric_of(v);
		if (w->mt == M_NONE) {
			pp_strlcpy(w->why, "the metric is not a step time or throughput the simulator predicts", sizeof w->why);
			continue;
		}
		if (pp_parse_double(get(v, C_VALUE), &w->measured) != 0 || !(w->measured > 0)) {
			pp_strlcpy(w->why, "the measured value is not a positive number", sizeof w->why);
			continue;
		}
		w->system = system_of(v);
		if (w->system == NULL) {
			pp_strlcpy(w->why, "the GPU is not in the hardware database", sizeof w->why);
			continue;
		}
		char e2[512];
		if (row_model(v, &w->m, e2, sizeof e2) != 0) {
			pp_strlcpy(w->why, e2, sizeof w->why);
			continue;
		}
		const char *why = row_config(v, w->m, &w->cfg, &w->smb, &w->svpp);
		if (why != NULL) {
			pp_strlcpy(w->why, why, sizeof w->why);
			continue;
		}
		if (!simulate) {
			if ((rc = check_row(db, w)) != 0) {
				pp_err(err, errlen, rc, "%s: %s", origin, w->why);
				goto fail;
			}
			continue;
		}
		if ((rc = predict(db, p, w, true, err, errlen)) != 0)
			goto fail;
	}
	return 0;
fail:
	prepared_free(p);
	return rc;
}

/* MAPE over the rows that were predicted (and, when gpu is not NULL, run on that GPU). */
static double
mape(hw_db *db, const prepared *p, const char *const *gpus, int *n)
{
	double tot = 0.0;
	*n = 0;
	for (size_t i = 0; i < p->n; i++) {
		const prow *w = &p->rows[i];
		if (w->why[0])
			continue;
		if (gpus != NULL) {
			hw_system sys;
			bool match = false;
			if (hw_system_get(db, w->system, &sys, NULL, 0) == 0)
				for (int g = 0; gpus[g]; g++)
					match |= !strcmp(sys.gpu.name, gpus[g]);
			if (!match)
				continue;
		}
		tot += fabs(w->predicted - w->measured) / w->measured;
		(*n)++;
	}
	return *n > 0 ? tot / *n : 0.0;
}

/* The MAPE per source and overall of a report's rows (each with "source" and "error"). */
static void
summarize(cJSON *doc, const cJSON *rows, const cJSON *skipped)
{
	cJSON *by = cJSON_AddArrayToObject(doc, "sources");
	double tot = 0.0;
	int n = 0;
	const cJSON *x;
	cJSON_ArrayForEach(x, rows)
	{
		double e = fabs(cJSON_GetObjectItem(x, "error")->valuedouble);
		tot += e;
		n++;
		const char *src = cJSON_GetObjectItem(x, "source")->valuestring;
		cJSON *sv = NULL, *it;
		cJSON_ArrayForEach(it, by)
		{
			if (!strcmp(cJSON_GetObjectItem(it, "source")->valuestring, src))
				sv = it;
		}
		if (sv == NULL) {
			sv = cJSON_CreateObject();
			cJSON_AddStringToObject(sv, "source", src);
			cJSON_AddNumberToObject(sv, "rows", 0);
			cJSON_AddNumberToObject(sv, "mape", 0);
			cJSON_AddItemToArray(by, sv);
		}
		double k = cJSON_GetObjectItem(sv, "rows")->valuedouble;
		double mp = cJSON_GetObjectItem(sv, "mape")->valuedouble;
		cJSON_SetNumberValue(cJSON_GetObjectItem(sv, "mape"), (mp * k + e) / (k + 1));
		cJSON_SetNumberValue(cJSON_GetObjectItem(sv, "rows"), k + 1);
	}
	cJSON *ov = cJSON_AddObjectToObject(doc, "overall");
	cJSON_AddNumberToObject(ov, "rows", n);
	cJSON_AddNumberToObject(ov, "skipped", cJSON_GetArraySize(skipped));
	cJSON_AddNumberToObject(ov, "mape", n > 0 ? tot / n : 0.0);
}

static cJSON *
report(const prepared *p, const char *set, const char *origin)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "kind", "validate");
	cJSON_AddStringToObject(doc, "set", set ? set : "training");
	cJSON_AddStringToObject(doc, "data", origin);
	cJSON *rows = cJSON_AddArrayToObject(doc, "rows");
	cJSON *skipped = cJSON_AddArrayToObject(doc, "skipped");
	vrow v = p->v;
	for (size_t i = 0; i < p->n; i++) {
		const prow *w = &p->rows[i];
		v.r = w->r;
		if (w->why[0]) {
			add_skip(skipped, &v, w->why);
			continue;
		}
		cJSON *x = cJSON_CreateObject();
		cJSON_AddNumberToObject(x, "line", (double)p->t.lines[w->r]);
		char key[96];
		source_key(get(&v, C_SOURCE), key, sizeof key);
		cJSON_AddStringToObject(x, "source", key);
		cJSON_AddStringToObject(x, "table", get(&v, C_TABLE));
		cJSON_AddStringToObject(x, "model", get(&v, C_MODEL));
		cJSON_AddStringToObject(x, "system", w->system);
		cJSON_AddStringToObject(x, "metric", get(&v, C_METRIC));
		cJSON_AddStringToObject(x, "unit", get(&v, C_UNIT));
		cJSON_AddNumberToObject(x, "measured", w->measured);
		cJSON_AddNumberToObject(x, "predicted", w->predicted);
		cJSON_AddNumberToObject(x, "error", (w->predicted - w->measured) / w->measured);
		const sim_train_cfg *c = &w->cfg;
		cJSON *cf = cJSON_AddObjectToObject(x, "config");
		cJSON_AddNumberToObject(cf, "gpus", c->gpus);
		cJSON_AddNumberToObject(cf, "tp", c->tp);
		cJSON_AddNumberToObject(cf, "pp", c->pp);
		cJSON_AddNumberToObject(cf, "dp", c->dp);
		cJSON_AddNumberToObject(cf, "vpp", c->vpp);
		cJSON_AddNumberToObject(cf, "micro_batch", (double)c->micro_batch);
		cJSON_AddNumberToObject(cf, "global_batch", (double)c->global_batch);
		cJSON_AddStringToObject(cf, "recompute", sim_recompute_name(c->recompute));
		cJSON_AddBoolToObject(cf, "sequence_parallel", c->sequence_parallel);
		cJSON_AddNumberToObject(cf, "zero", c->zero);
		cJSON_AddStringToObject(cf, "dtype", hw_dtype_name(c->dtype));
		pp_str as = {0};
		if (w->smb)
			pp_str_add(&as, "micro-batch not stated: fastest that fits");
		if (w->svpp)
			pp_str_addf(&as, "%svirtual stages not stated: fastest that fits", as.len ? "; " : "");
		cJSON_AddStringToObject(x, "assumptions", as.buf ? as.buf : "");
		pp_str_free(&as);
		cJSON_AddItemToArray(rows, x);
	}
	summarize(doc, rows, skipped);
	return doc;
}

int
sim_validate_training_rows(hw_db *db, const char *text, size_t len, const char *origin, const char *set, cJSON **out,
			   char *err, size_t errlen)
{
	*out = NULL;
	prepared p;
	int rc = prepare(db, text, len, origin, set, false, &p, err, errlen);
	if (rc != 0)
		return rc;
	*out = report(&p, set, origin);
	prepared_free(&p);
	return 0;
}

int
sim_validate_training(hw_db *db, const char *text, size_t len, const char *origin, const char *set, cJSON **out,
		      char *err, size_t errlen)
{
	*out = NULL;
	prepared p;
	int rc = prepare(db, text, len, origin, set, true, &p, err, errlen);
	if (rc != 0)
		return rc;
	*out = report(&p, set, origin);
	prepared_free(&p);
	return 0;
}

/* ---- fitting ------------------------------------------------------------------------------- */

/* A fitted parameter, with the transform that keeps it in its physical range. */
typedef struct fparam {
	const char *key;
	double lo, hi; /* the value is lo + (hi - lo) / (1 + exp(-x)) */
} fparam;

/* Per GPU, against the training rows.  The rows time forward and backward together, so the
 * two flash-attention efficiencies cannot be told apart: the backward's is tied to the
 * forward's (ATTN_BWD_RATIO, the ratio of the generic defaults). */
static const fparam train_params[] = {
	{"gemm_eff_fp16", 0.30, 0.95},
	{"host_op_us", 0.5, 60.0},
	{"attn_eff_fwd", 0.15, 0.90},
	{"overlap_slowdown", 0.0, 0.3}, /* NCCL kernels share the SMs and HBM: a tenth to a quarter */
};
#define ATTN_BWD_RATIO 0.8

/* Per system, against the serving rows: what a decode step costs beyond its kernels. */
static const fparam serve_params[] = {
	{"iter_overhead_s", 1e-4, 1e-2},
	{"serve_allreduce_us", 2.0, 80.0},
};

#define MAXFIT 8

typedef struct fitspec {
	const char *scope; /* "gpu" or "system" */
	const char *const *names;
	const fparam *fp;
	size_t n;
	const char *data; /* the data set named in each stored parameter */
} fitspec;

static double
to_value(const fparam *f, double x)
{
	return f->lo + (f->hi - f->lo) / (1.0 + exp(-x));
}

static double
to_x(const fparam *f, double v)
{
	double u = (v - f->lo) / (f->hi - f->lo);
	if (u < 1e-6)
		u = 1e-6;
	if (u > 1 - 1e-6)
		u = 1 - 1e-6;
	return log(u / (1.0 - u));
}

/* Stores one value of a fitted parameter and those tied to it: gemm_eff_fp16 also sets bf16
 * (the same tensor cores), attn_eff_fwd also sets attn_eff_bwd. */
static int
store_param(hw_db *db, const char *scope, const char *name, const char *key, double v, const char *method,
	    const char *data, char *err, size_t errlen)
{
	int rc = hw_param_set(db, scope, name, key, v, "fitted", method, data, 0, err, errlen);
	if (rc == 0 && !strcmp(key, "gemm_eff_fp16"))
		rc = hw_param_set(db, scope, name, "gemm_eff_bf16", v, "fitted", method, data, 0, err, errlen);
	if (rc == 0 && !strcmp(key, "attn_eff_fwd"))
		rc = hw_param_set(db, scope, name, "attn_eff_bwd", ATTN_BWD_RATIO * v, "fitted", method, data, 0, err,
				  errlen);
	return rc;
}

typedef struct fitctx {
	hw_db *db;
	const fitspec *fs;
	double (*mape)(struct fitctx *fc); /* the error of the rows with the parameters in the db */
	void *arg;
	int evals;
	int rc;
	char err[512];
} fitctx;

static double
objective(const gsl_vector *x, void *arg)
{
	fitctx *fc = arg;
	if (fc->rc != 0)
		return 1e9;
	for (int g = 0; fc->fs->names[g]; g++)
		for (size_t k = 0; k < fc->fs->n; k++) {
			double v = to_value(&fc->fs->fp[k], gsl_vector_get(x, k));
			fc->rc = store_param(fc->db, fc->fs->scope, fc->fs->names[g], fc->fs->fp[k].key, v, "fit in progress",
					     fc->fs->data, fc->err, sizeof fc->err);
			if (fc->rc != 0)
				return 1e9;
		}
	fc->evals++;
	double e = fc->mape(fc);
	return fc->rc != 0 ? 1e9 : e;
}

/* Nelder-Mead (GSL) from the parameters in use (start[]), inside a savepoint rolled back at
 * the end: the database is left as it was; the caller stores the result if asked. */
static int
fit_run(fitctx *fc, const double *start_in, int max_evals, double before, int rows, cJSON **out, char *err,
	size_t errlen)
{
	const fitspec *fs = fc->fs;
	double start[MAXFIT];
	for (size_t k = 0; k < fs->n; k++) {
		/* a start on the edge of the range cannot move in the transformed space */
		double span = fs->fp[k].hi - fs->fp[k].lo;
		start[k] = start_in[k];
		if (start[k] < fs->fp[k].lo + 0.05 * span)
			start[k] = fs->fp[k].lo + 0.05 * span;
		if (start[k] > fs->fp[k].hi - 0.05 * span)
			start[k] = fs->fp[k].hi - 0.05 * span;
	}
	int rc = hw_exec_simple(fc->db, "SAVEPOINT paraplan_fit", err, errlen);
	if (rc != 0)
		return rc;
	gsl_multimin_function fn = {objective, fs->n, fc};
	gsl_vector *x = gsl_vector_alloc(fs->n), *step = gsl_vector_alloc(fs->n);
	for (size_t k = 0; k < fs->n; k++) {
		gsl_vector_set(x, k, to_x(&fs->fp[k], start[k]));
		gsl_vector_set(step, k, 0.5);
	}
	gsl_multimin_fminimizer *mz = gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2, fs->n);
	gsl_multimin_fminimizer_set(mz, &fn, x, step);
	/* At least one iteration: setting the simplex up evaluates its n + 1 vertices but leaves the
	 * minimizer's best value unset, which --max-evals 2 printed as a NaN MAPE (found by the
	 * scan of every JSON number the tests print). */
	for (int iter = 0; (iter == 0 || fc->evals < max_evals) && fc->rc == 0; iter++) {
		if (gsl_multimin_fminimizer_iterate(mz) != GSL_SUCCESS)
			break;
		if (gsl_multimin_test_size(gsl_multimin_fminimizer_size(mz), 1e-3) == GSL_SUCCESS)
			break;
	}
	double best[MAXFIT];
	for (size_t k = 0; k < fs->n; k++)
		best[k] = to_value(&fs->fp[k], gsl_vector_get(mz->x, k));
	double after = gsl_multimin_fminimizer_minimum(mz);
	if (!(after <= before)) {
		/* The search never got below where it started (the simplex starts off the start when
		 * that sits on a range's edge, and a short --max-evals may not come back): keep the
		 * starting parameters rather than save worse ones. */
		for (size_t k = 0; k < fs->n; k++)
			best[k] = start_in[k];
		after = before;
	}
	gsl_multimin_fminimizer_free(mz);
	gsl_vector_free(x);
	gsl_vector_free(step);
	hw_exec_simple(fc->db, "ROLLBACK TO paraplan_fit", NULL, 0);
	hw_exec_simple(fc->db, "RELEASE paraplan_fit", NULL, 0);
	if (fc->rc != 0)
		return pp_err(err, errlen, fc->rc, "%s", fc->err);
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "scope", fs->scope);
	cJSON *gl = cJSON_AddArrayToObject(doc, !strcmp(fs->scope, "gpu") ? "gpus" : "systems");
	for (int g = 0; fs->names[g]; g++)
		cJSON_AddItemToArray(gl, cJSON_CreateString(fs->names[g]));
	cJSON_AddStringToObject(doc, "data", fs->data);
	cJSON_AddNumberToObject(doc, "rows", rows);
	cJSON_AddNumberToObject(doc, "mape_before", before);
	cJSON_AddNumberToObject(doc, "mape_after", after);
	cJSON_AddNumberToObject(doc, "evaluations", fc->evals);
	char method[200];
	snprintf(method, sizeof method,
		 "fitted by 'paraplan validate --fit': Nelder-Mead on MAPE over %d rows of %s (%.1f%% -> %.1f%%)", rows,
		 fs->data, 100.0 * before, 100.0 * after);
	cJSON_AddStringToObject(doc, "method", method);
	cJSON *pa = cJSON_AddObjectToObject(doc, "parameters");
	for (size_t k = 0; k < fs->n; k++)
		cJSON_AddNumberToObject(pa, fs->fp[k].key, best[k]);
	*out = doc;
	return 0;
}

/* The values in use of a fit's parameters, as the cost model of `system` reports them. */
static int
fit_start(hw_db *db, const char *system, const fitspec *fs, double *start, char *err, size_t errlen)
{
	hw_cost *cost;
	int rc = hw_cost_new(db, system, &cost, err, errlen);
	if (rc != 0)
		return rc;
	cJSON *d = hw_cost_describe(cost);
	for (size_t k = 0; k < fs->n; k++) {
		const cJSON *it;
		start[k] = 0.5 * (fs->fp[k].lo + fs->fp[k].hi);
		cJSON_ArrayForEach(it, cJSON_GetObjectItem(d, "parameters"))
		{
			if (!strcmp(cJSON_GetObjectItem(it, "key")->valuestring, fs->fp[k].key))
				start[k] = cJSON_GetObjectItem(it, "value")->valuedouble;
		}
	}
	cJSON_Delete(d);
	hw_cost_free(cost);
	return 0;
}

static double
train_mape(fitctx *fc)
{
	prepared *p = fc->arg;
	for (size_t i = 0; i < p->n; i++) {
		prow *w = &p->rows[i];
		if (w->why[0])
			continue;
		hw_system sys;
		bool match = false;
		if (hw_system_get(fc->db, w->system, &sys, NULL, 0) == 0)
			for (int g = 0; fc->fs->names[g]; g++)
				match |= !strcmp(sys.gpu.name, fc->fs->names[g]);
		if (!match)
			continue;
		if ((fc->rc = predict(fc->db, p, w, false, fc->err, sizeof fc->err)) != 0)
			return 1e9;
	}
	int n;
	return mape(fc->db, p, fc->fs->names, &n);
}

int
sim_validate_fit(hw_db *db, const char *text, size_t len, const char *origin, const char *const *gpus, int max_evals,
		 cJSON **out, char *err, size_t errlen)
{
	*out = NULL;
	if (hw_readonly(db))
		return pp_err(err, errlen, PP_EIO, "%s: database is read-only: fitting writes parameters", hw_path(db));
	prepared p;
	int rc = prepare(db, text, len, origin, NULL, true, &p, err, errlen);
	if (rc != 0)
		return rc;
	int n0;
	double before = mape(db, &p, gpus, &n0);
	fitspec fs = {"gpu", gpus, train_params, sizeof train_params / sizeof train_params[0], origin};
	double start[MAXFIT];
	size_t i;
	hw_system sys;
	for (i = 0; i < p.n; i++)
		if (!p.rows[i].why[0] && hw_system_get(db, p.rows[i].system, &sys, NULL, 0) == 0 &&
		    !strcmp(sys.gpu.name, gpus[0]))
			break;
	if (n0 == 0 || i == p.n)
		rc = pp_err(err, errlen, PP_EUSAGE, "no validation rows run on %s", gpus[0]);
	else if ((rc = fit_start(db, p.rows[i].system, &fs, start, err, errlen)) == 0) {
		fitctx fc = {.db = db, .fs = &fs, .mape = train_mape, .arg = &p};
		rc = fit_run(&fc, start, max_evals, before, n0, out, err, errlen);
	}
	prepared_free(&p);
	return rc;
}

int
sim_validate_fit_save(hw_db *db, const cJSON *fit, char *err, size_t errlen)
{
	const char *scope = cJSON_GetObjectItem(fit, "scope")->valuestring;
	const char *method = cJSON_GetObjectItem(fit, "method")->valuestring;
	const char *data = cJSON_GetObjectItem(fit, "data")->valuestring;
	const cJSON *g, *v;
	cJSON_ArrayForEach(g, cJSON_GetObjectItem(fit, !strcmp(scope, "gpu") ? "gpus" : "systems"))
	{
		cJSON_ArrayForEach(v, cJSON_GetObjectItem(fit, "parameters"))
		{
			int rc = store_param(db, scope, g->valuestring, v->string, v->valuedouble, method, data, err, errlen);
			if (rc != 0)
				return rc;
		}
	}
	return 0;
}

/* ---- serving ------------------------------------------------------------------------------- */

/* Rows of sim/data/published-serving.csv: a model, GPU and TP degree, an engine scenario
 * ("batch N": N requests at once, as a static batch; "concurrency N": a closed loop of N
 * outstanding requests), input and output lengths, and the measured metric (output tokens/s,
 * mean end-to-end latency, TTFT, TPOT).  A row without a TP degree runs one replica over all
 * its GPUs. */
static const char *
serve_model_of(const char *name)
{
	if (has(name, "Llama-2-70B"))
		return "llama-2-70b";
	if (has(name, "70B"))
		return "llama-3-70b"; /* Llama 3 and 3.1 70B share their dimensions */
	if (has(name, "8B"))
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
		const char *system = has(gpu, "H200") ? "hgx-h200" : has(gpu, "H100") ? "dgx-h100" : NULL;
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
		if (has(prec, "fp8")) {
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
		if (has(metric, "output tokens/s"))
			pred = mt->output_tokens_per_s;
		else if (has(metric, "end-to-end"))
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
		source_key(src, key, sizeof key);
		cJSON_AddNumberToObject(x, "line", (double)t.lines[r]);
		cJSON_AddStringToObject(x, "source", key);
		cJSON_AddStringToObject(x, "model", mname);
		cJSON_AddStringToObject(x, "system", system);
		cJSON_AddStringToObject(x, "metric", metric);
		cJSON_AddStringToObject(x, "unit", pp_csv_get(&t, r, col[11]));
		cJSON_AddNumberToObject(x, "measured", measured);
		cJSON_AddNumberToObject(x, "predicted", pred);
		cJSON_AddNumberToObject(x, "error", (pred - measured) / measured);
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
	summarize(doc, rows, skipped);
	pp_csv_free(&t);
	*out = doc;
	return 0;
fail:
	pp_csv_free(&t);
	cJSON_Delete(doc);
	return rc;
}

int
sim_validate_serving(hw_db *db, const char *text, size_t len, const char *origin, cJSON **out, char *err, size_t errlen)
{
	return serving_report(db, text, len, origin, NULL, true, out, err, errlen);
}

int
sim_validate_serving_rows(hw_db *db, const char *text, size_t len, const char *origin, cJSON **out, char *err,
			  size_t errlen)
{
	return serving_report(db, text, len, origin, NULL, false, out, err, errlen);
}

typedef struct servearg {
	const char *text, *origin;
	size_t len;
} servearg;

static double
serve_mape(fitctx *fc)
{
	const servearg *a = fc->arg;
	cJSON *doc;
	if ((fc->rc = serving_report(fc->db, a->text, a->len, a->origin, fc->fs->names, true, &doc, fc->err, sizeof fc->err)) != 0)
		return 1e9;
	double m = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "overall"), "mape")->valuedouble;
	cJSON_Delete(doc);
	return m;
}

int
sim_validate_serving_fit(hw_db *db, const char *text, size_t len, const char *origin, const char *const *systems,
			 int max_evals, cJSON **out, char *err, size_t errlen)
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
	fitspec fs = {"system", systems, serve_params, sizeof serve_params / sizeof serve_params[0], origin};
	double start[MAXFIT];
	if ((rc = fit_start(db, systems[0], &fs, start, err, errlen)) != 0)
		return rc;
	servearg a = {text, origin, len};
	fitctx fc = {.db = db, .fs = &fs, .mape = serve_mape, .arg = &a};
	return fit_run(&fc, start, max_evals, before, rows, out, err, errlen);
}
