/*
 * train.c -- training rows to runs, their predictions and errors, the fits of the framework
 * profiles and leave-one-family-out cross-validation.
 *
 * A row becomes a run by documented rules, never by its measured value:
 *   - the framework that ran it, from its source: Megatron-LM's 2019-2022 papers and README
 *     ran megatron-2021 (unfused attention, no overlapped gradient reduction); NVIDIA's
 *     dgxc-benchmarking and NeMo tables megatron (their MaxText and Paxml recipes maxtext);
 *     llm-foundry llm-foundry; NeMo Automodel nemo-automodel; torchao's torchtitan runs
 *     torchtitan; stas00's DeepSpeed runs deepspeed; MaxText maxtext (docs/profiles.md);
 *   - the model: a catalog model when the row names one (its layer count and sequence from the
 *     row, which proxies reduce), else the row's dimensions with the architecture of its era:
 *     GPT (GELU, LayerNorm, learned positions, tied embeddings; biases and dropout in
 *     Megatron's runs, none in llm-foundry's MPT);
 *   - the configuration: the row's degrees, with dp = GPUs / (tp pp cp) when not stated; an
 *     unstated micro-batch or number of virtual stages is the one the simulator finds fastest
 *     among those that fit (as the authors tuned their published runs); Megatron-LM's 2019-2020
 *     runs checkpointed every layer; tp x pp given only in the notes ("TP=8, PP=12") is used;
 *   - the metric: the step time, tokens/s per GPU, or TFLOP/s and MFU in the source's own FLOP
 *     accounting: Narayanan 2021 Eq. 3 (with the recomputed forward), Korthikanti 2022 Eq. 7,
 *     NeMo's and dgxc's model FLOPs (attention counted over the full matrix), Automodel's and
 *     stas00's (causal attention, half), MaxText's (the embedding counted too, causal
 *     attention); weak-scaling efficiency and speedup against Shoeybi 2019's 1-GPU baseline.
 * Rows that cannot be expressed (no GPU count, a GPU not in the database, a model not in the
 * catalog and not given in the columns, a technique the simulator does not model) are kept with
 * the reason.
 */
#include "config.h"
#include "calibrate/cal.h"
#include "common/csv.h"
#include "sim/sim.h"
#include "validate/val_int.h"

#include <cJSON.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum metric {
	M_NONE, M_TFLOPS_EQ3, M_MFU_EQ7, M_ITER_S, M_ITER_MS, M_TOKENS_GPU, M_TFLOPS_SRC, M_LAYER_MS, M_WEAK_EFF,
	M_SPEEDUP
};

/* How a source counts model FLOPs per token in a "per-GPU TFLOP/s" row. */
enum flops_conv {
	FL_FULL,    /* 6N (with the LM head) and attention over the full s x s matrix (NeMo, dgxc) */
	FL_CAUSAL,  /* the same with causal attention counted half (Automodel, stas00) */
	FL_MAXTEXT, /* causal, and the input embedding counted as a matmul (MaxText) */
};

static const char *const cols[] = {"source", "table", "model", "layers", "hidden", "heads", "kv_heads", "ffn",
				   "vocab", "seq", "gpu", "num_gpus", "precision", "tp", "pp", "dp", "cp", "ep",
				   "vpp", "zero", "micro_batch", "global_batch", "recompute", "measured_metric",
				   "measured_value", "unit", "notes", NULL};
enum { C_SOURCE, C_TABLE, C_MODEL, C_LAYERS, C_HIDDEN, C_HEADS, C_KV, C_FFN, C_VOCAB, C_SEQ, C_GPU, C_GPUS,
       C_PREC, C_TP, C_PP, C_DP, C_CP, C_EP, C_VPP, C_ZERO, C_MB, C_GB, C_RECOMP, C_METRIC, C_VALUE, C_UNIT,
       C_NOTES, C_NCOLS };

/* One CSV's table and its column indexes. */
typedef struct vsrc {
	pp_csv t;
	int col[C_NCOLS];
	const char *origin;
} vsrc;

typedef struct vrow {
	const vsrc *src;
	size_t r;            /* row in src->t */
	char source[96], family[64];
	enum metric mt;
	enum flops_conv conv;
	double measured, predicted;
	model *m;
	int sys;             /* index into the set's systems */
	int fw;              /* index into the set's profiles */
	sim_train_cfg cfg;
	bool smb, svpp;      /* micro-batch, virtual stages were searched */
	char why[256];       /* non-empty: skipped */
	char note[160];      /* the rules applied that the row does not state */
} vrow;

typedef struct vsys {
	const char *name;
	hw_cost *cost;
} vsys;

typedef struct vprof {
	char name[48];
	hw_profile *p;
} vprof;

struct val_set {
	hw_db *db;
	vsrc *srcs;
	size_t nsrcs;
	vrow *rows;
	size_t n;
	vsys *sys;
	size_t nsys;
	vprof *prof;
	size_t nprof;
	bool have_base;
	double base_tflops, base_step;
};

/* ---- reading a row ------------------------------------------------------------------------- */

static const char *
get(const vrow *w, int c)
{
	return pp_csv_get(&w->src->t, w->r, w->src->col[c]);
}

static int64_t
geti(const vrow *w, int c)
{
	int64_t x;
	return pp_parse_i64(get(w, c), &x) == 0 ? x : 0;
}

static enum metric
metric_of(const vrow *w)
{
	const char *m = get(w, C_METRIC), *u = get(w, C_UNIT);
	if (val_has(m, "achieved TFLOP/s per GPU") || val_has(m, "sustained TFLOP/s per GPU"))
		return M_TFLOPS_EQ3;
	if (!strcmp(m, "MFU"))
		return M_MFU_EQ7;
	if (!strcmp(m, "iteration time"))
		return !strcmp(u, "ms") ? M_ITER_MS : M_ITER_S;
	if (!strcmp(m, "tokens/s per GPU"))
		return M_TOKENS_GPU;
	if (!strcmp(m, "per-GPU TFLOP/s"))
		return M_TFLOPS_SRC;
	if (val_has(m, "time of ONE transformer layer"))
		return M_LAYER_MS;
	if (val_has(m, "weak-scaling efficiency vs 1-GPU") || !strcmp(m, "model-parallel scaling efficiency"))
		return M_WEAK_EFF;
	if (val_has(m, "speedup vs 1 GPU"))
		return M_SPEEDUP;
	return M_NONE;
}

/* The system a row ran on, from its GPU column: the first entry whose GPU name the column
 * contains (more specific names first). */
static const char *
system_of(const vrow *w)
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
	const char *g = get(w, C_GPU);
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (val_has(g, map[i].gpu))
			return map[i].system;
	return NULL;
}

/* The framework that ran a row, from its source (docs/profiles.md), or NULL. */
static const char *
framework_of(const vrow *w)
{
	const char *s = get(w, C_SOURCE);
	if (val_has(s, "llm-foundry"))
		return "llm-foundry";
	if (val_has(s, "Narayanan") || val_has(s, "Korthikanti") || val_has(s, "Shoeybi") || val_has(s, "Megatron-LM README"))
		return "megatron-2021";
	if (val_has(s, "dgxc-benchmarking"))
		return val_has(s, "maxtext/") || val_has(s, "paxml/") ? "maxtext" : "megatron";
	if (val_has(s, "NVIDIA/NeMo "))
		return "megatron";
	if (val_has(s, "Automodel"))
		return "nemo-automodel";
	if (val_has(s, "pytorch/ao"))
		return "torchtitan";
	if (val_has(s, "stas00/ml-engineering") || val_has(s, "Rajbhandari"))
		return "deepspeed";
	if (val_has(s, "maxtext"))
		return "maxtext";
	if (val_has(s, "Goyal") || val_has(s, "horovod"))
		return "pytorch";
	return NULL;
}

/* The catalog model a row names (its dimensions are the catalog's; its layer count and
 * sequence the row's, which proxy runs reduce), or NULL: the row's columns then describe it. */
static const char *
catalog_of(const vrow *w)
{
	static const struct { const char *name, *catalog; } map[] = {
		{"Llama3.1-405B", "llama-3-405b"}, {"Llama3.1-70B", "llama-3-70b"}, {"Llama3.1-8B", "llama-3-8b"},
		{"Llama3-70B", "llama-3-70b"}, {"Llama3-8B", "llama-3-8b"}, {"Llama2-70B", "llama-2-70b"},
		{"Llama2-7B", "llama-2-7b"}, {"GPT3-175B", "gpt3-175b"}, {"DeepSeek-V3", "deepseek-v3"},
		{"Grok-1", "grok-1"}, {"Nemotron4-15B", "nemotron-4-15b"}, {"Nemotron4-340B", "nemotron-4-340b"},
		{"Llama4-Maverick", "llama-4-maverick"}, {"Qwen3-30B-A3B", "qwen3-30b-a3b"}, {"GPT-OSS 120B", "gpt-oss-120b"},
		{"GPT-OSS 20B", "gpt-oss-20b"}, {"Kimi K2", "kimi-k2"},
	};
	const char *name = get(w, C_MODEL);
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (val_has(name, map[i].name))
			return map[i].catalog;
	return NULL;
}

static const char *
catalog_text(const char *name)
{
	for (size_t i = 0; i < model_catalog_count(); i++)
		if (!strcmp(model_catalog_name(i), name))
			return model_catalog_text(i);
	return NULL;
}

/* Megatron's GPT models and the old papers' runs have linear biases and dropout. */
static bool
megatron_era(const vrow *w)
{
	return !val_has(get(w, C_SOURCE), "llm-foundry");
}

static int
row_model(vrow *w, model **out, char *why, size_t whylen)
{
	*out = NULL;
	char e2[512];
	cJSON *o = NULL;
	const char *cat = catalog_of(w);
	if (cat != NULL) {
		const char *text = catalog_text(cat);
		if (text == NULL) {
			snprintf(why, whylen, "model \"%s\" is not in the catalog (%s)", get(w, C_MODEL), cat);
			return PP_EUSAGE;
		}
		o = cJSON_Parse(text);
		if (o == NULL)
			return PP_ENOMEM;
		/* the run's depth and sequence (proxies run fewer layers) */
		static const int over[] = {C_LAYERS, C_SEQ};
		static const char *const keys[] = {"layers", "seq"};
		for (size_t i = 0; i < 2; i++) {
			int64_t x = geti(w, over[i]);
			if (x > 0)
				cJSON_ReplaceItemInObject(o, keys[i], cJSON_CreateNumber((double)x));
		}
	} else {
		if (geti(w, C_LAYERS) <= 0 || geti(w, C_HIDDEN) <= 0) {
			snprintf(why, whylen, "model \"%s\" is not in the catalog and its dimensions are not stated",
				 get(w, C_MODEL));
			return PP_EUSAGE;
		}
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", get(w, C_MODEL));
		cJSON_AddStringToObject(o, "source", get(w, C_SOURCE));
		static const int nums[] = {C_LAYERS, C_HIDDEN, C_HEADS, C_KV, C_FFN, C_VOCAB, C_SEQ};
		static const char *const keys[] = {"layers", "hidden", "heads", "kv_heads", "ffn", "vocab", "seq"};
		for (size_t i = 0; i < 7; i++) {
			int64_t x = geti(w, nums[i]);
			if (x > 0)
				cJSON_AddNumberToObject(o, keys[i], (double)x);
		}
		/* a GPT whose head count is not stated: heads of 128 (GPT-3's) and an MLP of 4h */
		int64_t h = geti(w, C_HIDDEN);
		if (geti(w, C_HEADS) <= 0 && h % 128 == 0) {
			cJSON_AddNumberToObject(o, "heads", (double)(h / 128));
			pp_strlcpy(w->note, "heads not stated: hidden / 128", sizeof w->note);
		}
		if (geti(w, C_FFN) <= 0)
			cJSON_AddNumberToObject(o, "ffn", 4.0 * (double)h);
		if (geti(w, C_VOCAB) <= 0)
			cJSON_AddNumberToObject(o, "vocab", 51200);
		int64_t seq = geti(w, C_SEQ);
		cJSON_AddNumberToObject(o, "max_positions", (double)(seq > 0 ? seq : 2048));
		cJSON_AddStringToObject(o, "mlp", "gelu");
		cJSON_AddStringToObject(o, "norm", "layernorm");
		cJSON_AddStringToObject(o, "position", "learned");
		cJSON_AddBoolToObject(o, "tied_embeddings", true);
		cJSON_AddBoolToObject(o, "bias", megatron_era(w));
	}
	char *text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (text == NULL)
		return PP_ENOMEM;
	char origin[160];
	snprintf(origin, sizeof origin, "%s line %zu", w->src->origin, w->src->t.lines[w->r]);
	int rc = model_parse(text, strlen(text), origin, out, e2, sizeof e2);
	free(text);
	if (rc == PP_ENOMEM)
		return rc;
	if (rc != 0) {
		pp_strlcpy(why, e2, whylen);
		return PP_EUSAGE;
	}
	return 0;
}

/* Bounds of the numbers a row may state, those of the command line: beyond them a row is
 * skipped with the reason, before any product of them can overflow. */
#define GPUS_MAX (1 << 24)
#define DEGREE_MAX (1 << 16)
#define BATCH_MAX ((int64_t)1 << 40)
#define MICRO_MAX ((int64_t)1 << 24)

static bool
out_of_range(const vrow *w, int c, int64_t max)
{
	int64_t x = geti(w, c);
	return x < 0 || x > max;
}

/* "TP=8, PP=12" in the notes. */
static void
notes_split(const vrow *w, int *tp, int *pp)
{
	const char *n = get(w, C_NOTES);
	const char *a = strstr(n, "TP=");
	const char *b = strstr(n, "PP=");
	if (a && b) {
		/* strtol, not atoi: a long run of digits must not overflow (atoi's overflow is undefined) */
		long x = strtol(a + 3, NULL, 10), y = strtol(b + 3, NULL, 10);
		*tp = x > 0 && x <= DEGREE_MAX ? (int)x : 0;
		*pp = y > 0 && y <= DEGREE_MAX ? (int)y : 0;
	}
}

/* Builds the configuration (the framework's way first); the reason when it cannot. */
static const char *
row_config(vrow *w, const hw_profile *fw)
{
	sim_train_cfg *c = &w->cfg;
	sim_train_cfg_init(c);
	sim_train_cfg_framework(c, fw);
	if (out_of_range(w, C_GPUS, GPUS_MAX))
		return "the GPU count is out of range (1 to 16777216)";
	if (out_of_range(w, C_TP, DEGREE_MAX) || out_of_range(w, C_PP, DEGREE_MAX) || out_of_range(w, C_DP, GPUS_MAX) ||
	    out_of_range(w, C_CP, DEGREE_MAX) || out_of_range(w, C_EP, DEGREE_MAX) || out_of_range(w, C_VPP, DEGREE_MAX))
		return "a parallel degree is out of range";
	if (out_of_range(w, C_GB, BATCH_MAX) || out_of_range(w, C_MB, MICRO_MAX))
		return "the batch size is out of range";
	c->gpus = (int)geti(w, C_GPUS);
	if (c->gpus <= 0)
		return "the GPU count is not stated";
	c->tp = (int)geti(w, C_TP);
	c->pp = (int)geti(w, C_PP);
	if (c->tp <= 0 && c->pp <= 0)
		notes_split(w, &c->tp, &c->pp);
	if (c->tp <= 0)
		c->tp = 1;
	if (c->pp <= 0)
		c->pp = 1;
	c->dp = (int)geti(w, C_DP);
	c->cp = geti(w, C_CP) > 0 ? (int)geti(w, C_CP) : 1;
	c->ep = geti(w, C_EP) > 0 ? (int)geti(w, C_EP) : 1;
	/* the data-parallel size is the GPUs' over the model-parallel degrees (sources that fold EP
	 * into their DP column say dp = GPUs / (tp pp cp ep)) */
	int64_t mp = (int64_t)c->tp * c->pp * c->cp;
	if (c->dp > 0 && (int64_t)c->dp * mp != c->gpus)
		c->dp = 0;
	const char *zero = get(w, C_ZERO);
	if (val_has(zero, "none") || zero[0] == '\0')
		c->zero = 0;
	else if (val_has(zero, "FSDP"))
		c->fsdp = true;
	else if (val_has(zero, "ZeRO-3") || !strcmp(zero, "3"))
		c->zero = 3;
	else if (val_has(zero, "ZeRO-2") || !strcmp(zero, "2"))
		c->zero = 2;
	else if (val_has(zero, "ZeRO-1") || !strcmp(zero, "1"))
		c->zero = 1;
	else
		return "the ZeRO configuration is not one the simulator models";
	const char *prec = get(w, C_PREC);
	c->dtype = val_has(prec, "fp8") ? HW_FP8 : val_has(prec, "bf16") ? HW_BF16 : val_has(prec, "fp32") ? HW_FP32 : HW_FP16;
	const char *rc = get(w, C_RECOMP);
	if (val_has(rc, "microbatch-level"))
		return "micro-batch-level recomputation is not modelled";
	if (!strncmp(rc, "none", 4))
		c->recompute = SIM_RECOMPUTE_NONE;
	else if (val_has(rc, "selective") || val_has(rc, "remat_policy"))
		c->recompute = SIM_RECOMPUTE_SELECTIVE;
	else if (val_has(rc, "full") || val_has(rc, "checkpointing on") || (rc[0] == '\0' && megatron_era(w) &&
										   !strcmp(hw_profile_name(fw), "megatron-2021")))
		c->recompute = SIM_RECOMPUTE_FULL; /* Megatron-LM 2019-2020: --checkpoint-activations */
	else
		c->recompute = SIM_RECOMPUTE_NONE;
	c->sequence_parallel = val_has(rc, "sequence parallel") && !val_has(rc, "no sequence parallel");
	c->global_batch = geti(w, C_GB);
	c->micro_batch = geti(w, C_MB);
	c->seq = 0;
	w->smb = c->micro_batch <= 0;
	if (c->micro_batch <= 0)
		c->micro_batch = 1;
	int64_t vpp = geti(w, C_VPP);
	w->svpp = vpp <= 0 && c->pp > 1;
	c->vpp = vpp > 0 ? (int)vpp : 1;
	if (c->vpp > 1)
		c->schedule = SIM_INTERLEAVED;
	if (c->global_batch <= 0) {
		/* weak-scaling rows state the per-replica batch as the micro-batch */
		if (geti(w, C_MB) <= 0)
			return "the batch size is not stated";
		int64_t dp = c->dp > 0 ? c->dp : c->gpus / mp;
		c->global_batch = c->micro_batch * (dp > 0 ? dp : 1);
	}
	return NULL;
}

/* ---- the set's shared objects -------------------------------------------------------------- */

static int
sys_index(val_set *s, const char *name, char *err, size_t errlen)
{
	for (size_t i = 0; i < s->nsys; i++)
		if (!strcmp(s->sys[i].name, name))
			return (int)i;
	size_t cap = s->nsys;
	if (PP_GROW(s->sys, cap, s->nsys + 1) != 0)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	vsys *v = &s->sys[s->nsys];
	v->name = name;
	int rc = hw_cost_new(s->db, name, &v->cost, err, errlen);
	if (rc != 0)
		return rc;
	return (int)s->nsys++;
}

static int
prof_index(val_set *s, const char *name, char *err, size_t errlen)
{
	for (size_t i = 0; i < s->nprof; i++)
		if (!strcmp(s->prof[i].name, name))
			return (int)i;
	size_t cap = s->nprof;
	if (PP_GROW(s->prof, cap, s->nprof + 1) != 0)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	vprof *v = &s->prof[s->nprof];
	pp_strlcpy(v->name, name, sizeof v->name);
	int rc = hw_profile_find(s->db, HW_SCOPE_FRAMEWORK, name, &v->p, err, errlen);
	if (rc != 0)
		return rc;
	return (int)s->nprof++;
}

/* ---- predicting ---------------------------------------------------------------------------- */

typedef struct outcome {
	double step;       /* seconds */
	sim_train_cfg cfg; /* as run (checked) */
	bool fits;
} outcome;

static int
run_one(const model *m, const hw_cost *cost, const sim_train_cfg *c, outcome *o, char *err, size_t errlen)
{
	sim_train_result *r;
	int rc = sim_train(m, cost, c, &r, err, errlen);
	if (rc != 0)
		return rc;
	const sim_metrics *mt = sim_train_metrics(r);
	o->step = mt->step_time_s;
	o->fits = mt->fits;
	o->cfg = *sim_train_config(r);
	sim_train_result_free(r);
	return 0;
}

/* The row's configuration with the unstated micro-batch and virtual stages searched: the
 * fastest that fits (or the fastest of all when none fits). */
static int
search_row(const vrow *w, const hw_cost *cost, outcome *best, char *err, size_t errlen)
{
	const model_tf *t = model_transformer(w->m);
	bool interleaved_note = val_has(get(w, C_NOTES), "interleaved");
	int64_t mbs[] = {1, 2, 4, 8, 16};
	int nmb = w->smb ? 5 : 1;
	bool found = false;
	char e2[512] = "";
	for (int i = 0; i < nmb; i++) {
		sim_train_cfg x = w->cfg;
		if (w->smb)
			x.micro_batch = mbs[i];
		int64_t dp = x.dp > 0 ? x.dp : x.gpus / ((int64_t)x.tp * x.pp * x.cp);
		if (dp <= 0 || x.global_batch % (x.micro_batch * dp) != 0)
			continue;
		int64_t per_stage = t->layers / x.pp;
		for (int64_t vpp = 1; vpp <= (w->svpp ? per_stage : 1); vpp++) {
			sim_train_cfg y = x;
			if (w->svpp) {
				if (per_stage * x.pp != t->layers || per_stage % vpp != 0)
					continue;
				if (vpp == 1 && interleaved_note && per_stage > 1)
					continue;
				y.vpp = (int)vpp;
				y.schedule = vpp > 1 ? SIM_INTERLEAVED : SIM_1F1B;
			}
			outcome o;
			int rc = run_one(w->m, cost, &y, &o, e2, sizeof e2);
			if (rc == PP_EUSAGE)
				continue; /* not a valid combination */
			if (rc != 0)
				return pp_err(err, errlen, rc, "%s", e2);
			if (!found || (o.fits && !best->fits) || (o.fits == best->fits && o.step < best->step)) {
				*best = o;
				found = true;
			}
		}
	}
	if (!found)
		return pp_err(err, errlen, PP_EUSAGE, "%s", e2[0] ? e2 : "no valid configuration");
	return 0;
}

/* The 1-GPU baseline of Shoeybi et al. 2019: the 1.2B model (40 layers, h 1536, 16 heads,
 * seq 1024) with batch 8 on one DGX-2H V100, fully recomputed, as megatron-2021 runs it. */
static int
shoeybi_baseline(val_set *s, const vrow *w, char *err, size_t errlen)
{
	static const char doc[] = "{\"name\":\"gpt2-1.2b-baseline\",\"layers\":40,\"hidden\":1536,\"heads\":16,"
				  "\"ffn\":6144,\"vocab\":51200,\"seq\":1024,\"bias\":true,\"tied_embeddings\":true}";
	model *m;
	int rc = model_parse(doc, strlen(doc), "Shoeybi 2019 baseline", &m, err, errlen);
	if (rc != 0)
		return rc;
	sim_train_cfg c;
	sim_train_cfg_init(&c);
	sim_train_cfg_framework(&c, s->prof[w->fw].p);
	c.micro_batch = c.global_batch = 8;
	c.dtype = HW_FP16;
	c.recompute = SIM_RECOMPUTE_FULL;
	outcome o;
	rc = run_one(m, s->sys[w->sys].cost, &c, &o, err, errlen);
	if (rc == 0) {
		s->base_step = o.step;
		s->base_tflops = model_flops_narayanan_eq3(m, 8, 1024) / o.step / 1e12;
		s->have_base = true;
	}
	model_free(m);
	return rc;
}

/* Model FLOPs of one token in the source's own accounting (a "per-GPU TFLOP/s" row). */
static double
source_flops_per_token(const vrow *w, int64_t seq)
{
	double full = model_flops_train_per_token(w->m, seq), mm = model_flops_train_per_token(w->m, 0);
	switch (w->conv) {
	case FL_CAUSAL:
		return mm + 0.5 * (full - mm);
	case FL_MAXTEXT:
		return mm + 6.0 * model_embedding_params(w->m) + 0.5 * (full - mm);
	case FL_FULL:
	default:
		return full;
	}
}

/* Predicts one row with the profiles as they are now; search: settle the unstated settings
 * first (the configuration is then kept).  A configuration the simulator refuses makes the row
 * skipped with the reason. */
static int
predict(val_set *s, vrow *w, bool search, char *err, size_t errlen)
{
	char e2[512] = "";
	const hw_cost *cost = s->sys[w->sys].cost;
	const model_tf *tf = model_transformer(w->m);
	int64_t seq = tf->seq;
	outcome o;
	memset(&o, 0, sizeof o);
	int rc;
	w->cfg.fw = s->prof[w->fw].p;
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
		rc = search_row(w, cost, &o, e2, sizeof e2);
		if (rc == 0)
			w->cfg = o.cfg;
	} else {
		rc = run_one(w->m, cost, &w->cfg, &o, e2, sizeof e2);
	}
	if (rc != 0)
		goto done;
	const sim_train_cfg *c = &w->cfg;
	double tokens = (double)c->global_batch * (double)seq, gpus = (double)c->gpus;
	switch (w->mt) {
	case M_TFLOPS_EQ3:
		w->predicted = model_flops_narayanan_eq3(w->m, (double)c->global_batch, seq) / o.step / gpus / 1e12;
		break;
	case M_MFU_EQ7:
		w->predicted = 100.0 * model_flops_korthikanti_eq7(w->m, (double)c->global_batch, seq) / o.step / gpus /
			       (hw_cost_system(cost)->gpu.peak_tflops[c->dtype] * 1e12);
		break;
	case M_ITER_S:
		w->predicted = o.step;
		break;
	case M_ITER_MS:
		w->predicted = o.step * 1e3;
		break;
	case M_TOKENS_GPU:
		w->predicted = tokens / o.step / gpus;
		break;
	case M_TFLOPS_SRC:
		w->predicted = source_flops_per_token(w, seq) * tokens / o.step / gpus / 1e12;
		break;
	case M_WEAK_EFF:
	case M_SPEEDUP:
		if (!s->have_base) { /* computed before the rows run in parallel (val_train_load) */
			rc = pp_err(e2, sizeof e2, PP_EUSAGE, "the 1-GPU baseline could not be simulated");
			goto done;
		}
		if (w->mt == M_WEAK_EFF)
			w->predicted = 100.0 * (model_flops_narayanan_eq3(w->m, (double)c->global_batch, seq) / o.step / gpus / 1e12) /
				       s->base_tflops;
		else
			w->predicted = s->base_step / o.step;
		break;
	default:
		break;
	}
done:
	if (rc == PP_EUSAGE) {
		pp_strlcpy(w->why, e2[0] ? e2 : "no valid configuration", sizeof w->why);
		return 0;
	}
	if (rc != 0)
		return pp_err(err, errlen, rc, "%s", e2);
	return 0;
}

/* Predicts the rows idx[0 .. n) on two threads (rows are independent: their models, the cost
 * models and the profiles are only read). */
typedef struct pjob {
	val_set *s;
	const size_t *idx;
	size_t n;
	bool search;
	size_t next;
	pthread_mutex_t mu;
	int rc;
	char err[512];
} pjob;

static void *
pworker(void *arg)
{
	pjob *j = arg;
	for (;;) {
		pthread_mutex_lock(&j->mu);
		size_t i = j->next++;
		bool stop = j->rc != 0;
		pthread_mutex_unlock(&j->mu);
		if (i >= j->n || stop)
			return NULL;
		char e2[512];
		int rc = predict(j->s, &j->s->rows[j->idx[i]], j->search, e2, sizeof e2);
		if (rc != 0) {
			pthread_mutex_lock(&j->mu);
			if (j->rc == 0) {
				j->rc = rc;
				pp_strlcpy(j->err, e2, sizeof j->err);
			}
			pthread_mutex_unlock(&j->mu);
		}
	}
}

static int
predict_rows(val_set *s, const size_t *idx, size_t n, bool search, char *err, size_t errlen)
{
	pjob j = {.s = s, .idx = idx, .n = n, .search = search};
	pthread_mutex_init(&j.mu, NULL);
	enum { NTHREADS = 2 };
	pthread_t th[NTHREADS];
	int started = 0;
	for (int i = 0; i < NTHREADS && n > 1; i++)
		if (pthread_create(&th[started], NULL, pworker, &j) == 0)
			started++;
	pworker(&j);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&j.mu);
	if (j.rc != 0)
		return pp_err(err, errlen, j.rc, "%s", j.err);
	return 0;
}

/* ---- loading ------------------------------------------------------------------------------- */

static bool
in_filter(const vrow *w, const char *f)
{
	if (f == NULL || !strcmp(f, "training") || !strcmp(f, "all"))
		return true;
	static const char *const gpus[] = {"a100", "h100", "h200", "b200", "gb200", "v100", "mi300x"};
	for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++)
		if (!strcmp(f, gpus[i]))
			return val_has(get(w, C_GPU), f) && !(!strcmp(f, "b200") && val_has(get(w, C_GPU), "gb200"));
	if (!strcmp(f, "mosaicml"))
		return val_has(get(w, C_SOURCE), "llm-foundry");
	if (!strcmp(f, "megatron-readme"))
		return val_has(get(w, C_SOURCE), "Megatron-LM README");
	const char *fw = framework_of(w);
	if (fw != NULL && !strcmp(fw, f))
		return true;
	return val_has(get(w, C_SOURCE), f) || val_has(get(w, C_TABLE), f);
}

void
val_set_free(val_set *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n; i++)
		model_free(s->rows[i].m);
	for (size_t i = 0; i < s->nsys; i++)
		hw_cost_free(s->sys[i].cost);
	for (size_t i = 0; i < s->nprof; i++)
		hw_profile_free(s->prof[i].p);
	for (size_t i = 0; i < s->nsrcs; i++)
		pp_csv_free(&s->srcs[i].t);
	free(s->rows);
	free(s->sys);
	free(s->prof);
	free(s->srcs);
	free(s);
}

/* Prepares one row: its run, or the reason it cannot be expressed. */
static int
prepare_row(val_set *s, vrow *w, bool simulate, char *err, size_t errlen)
{
	const char *src = get(w, C_SOURCE);
	val_source_key(src, w->source, sizeof w->source);
	val_family_key(src, w->family, sizeof w->family);
	w->mt = metric_of(w);
	w->conv = val_has(src, "Automodel") || val_has(src, "stas00") || val_has(get(w, C_NOTES), "causal")
			  ? FL_CAUSAL
			  : val_has(src, "AI-Hypercomputer/maxtext") ? FL_MAXTEXT : FL_FULL;
	w->sys = w->fw = -1;
	if (w->mt == M_NONE) {
		pp_strlcpy(w->why, "the metric is not a step time or throughput the simulator predicts", sizeof w->why);
		return 0;
	}
	if (pp_parse_double(get(w, C_VALUE), &w->measured) != 0 || !(w->measured > 0) || !isfinite(w->measured)) {
		pp_strlcpy(w->why, "the measured value is not a positive number", sizeof w->why);
		return 0;
	}
	const char *system = system_of(w);
	if (system == NULL) {
		pp_strlcpy(w->why, "the GPU is not in the hardware database", sizeof w->why);
		return 0;
	}
	const char *fw = framework_of(w);
	if (fw == NULL) {
		pp_strlcpy(w->why, "the framework that ran it is not known", sizeof w->why);
		return 0;
	}
	int rc = row_model(w, &w->m, w->why, sizeof w->why);
	if (rc == PP_EUSAGE)
		return 0;
	if (rc != 0)
		return pp_err(err, errlen, rc, "out of memory");
	if (model_transformer(w->m) == NULL) {
		pp_strlcpy(w->why, "not a transformer", sizeof w->why);
		return 0;
	}
	int si = sys_index(s, system, err, errlen);
	if (si < 0)
		return si;
	int pi = prof_index(s, fw, err, errlen);
	if (pi < 0)
		return pi;
	w->sys = si;
	w->fw = pi;
	const char *why = row_config(w, s->prof[pi].p);
	if (why != NULL) {
		pp_strlcpy(w->why, why, sizeof w->why);
		return 0;
	}
	if (!simulate) {
		sim_train_cfg x = w->cfg;
		char e2[512] = "";
		rc = sim_train_check(w->m, hw_cost_system(s->sys[si].cost), &x, e2, sizeof e2);
		if (rc == PP_EUSAGE)
			pp_strlcpy(w->why, e2, sizeof w->why);
		else if (rc != 0)
			return pp_err(err, errlen, rc, "%s", e2);
		else
			w->cfg = x;
	}
	return 0;
}

int
val_train_load(hw_db *db, const val_src *srcs, size_t nsrcs, const char *filter, bool simulate, val_set **out,
	       char *err, size_t errlen)
{
	*out = NULL;
	val_set *s = calloc(1, sizeof *s);
	if (s == NULL || (s->srcs = calloc(nsrcs ? nsrcs : 1, sizeof *s->srcs)) == NULL) {
		free(s);
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	}
	s->db = db;
	int rc = 0;
	size_t total = 0;
	for (size_t i = 0; i < nsrcs; i++) {
		vsrc *v = &s->srcs[s->nsrcs];
		if ((rc = pp_csv_parse(srcs[i].text, srcs[i].len, srcs[i].origin, &v->t, err, errlen)) != 0)
			goto fail;
		s->nsrcs++;
		v->origin = srcs[i].origin;
		for (int c = 0; cols[c] != NULL; c++)
			if ((v->col[c] = pp_csv_column(&v->t, cols[c])) < 0) {
				rc = pp_err(err, errlen, PP_EINPUT, "%s: missing column \"%s\"", srcs[i].origin, cols[c]);
				goto fail;
			}
		total += v->t.nrows;
	}
	if ((s->rows = calloc(total ? total : 1, sizeof *s->rows)) == NULL) {
		rc = pp_err(err, errlen, PP_ENOMEM, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < s->nsrcs; i++)
		for (size_t r = 1; r < s->srcs[i].t.nrows; r++) {
			vrow *w = &s->rows[s->n];
			memset(w, 0, sizeof *w);
			w->src = &s->srcs[i];
			w->r = r;
			if (!in_filter(w, filter))
				continue;
			s->n++;
			if ((rc = prepare_row(s, w, simulate, err, errlen)) != 0)
				goto fail;
		}
	if (simulate) {
		/* the 1-GPU baseline of the scaling rows, once, before the rows run in parallel */
		for (size_t i = 0; i < s->n && !s->have_base; i++) {
			vrow *w = &s->rows[i];
			if (!w->why[0] && (w->mt == M_WEAK_EFF || w->mt == M_SPEEDUP)) {
				char e2[512];
				rc = shoeybi_baseline(s, w, e2, sizeof e2);
				if (rc == PP_EUSAGE)
					pp_strlcpy(w->why, e2, sizeof w->why);
				else if (rc != 0)
					goto fail;
			}
		}
		size_t *idx = malloc((s->n ? s->n : 1) * sizeof *idx), k = 0;
		if (idx == NULL) {
			rc = pp_err(err, errlen, PP_ENOMEM, "out of memory");
			goto fail;
		}
		for (size_t i = 0; i < s->n; i++)
			if (!s->rows[i].why[0])
				idx[k++] = i;
		rc = predict_rows(s, idx, k, true, err, errlen);
		free(idx);
		if (rc != 0)
			goto fail;
	}
	*out = s;
	return 0;
fail:
	val_set_free(s);
	return rc;
}

/* ---- the report ---------------------------------------------------------------------------- */

static void
add_skip(cJSON *arr, const vrow *w)
{
	cJSON *x = cJSON_CreateObject();
	cJSON_AddStringToObject(x, "data", w->src->origin);
	cJSON_AddNumberToObject(x, "line", (double)w->src->t.lines[w->r]);
	cJSON_AddStringToObject(x, "source", get(w, C_SOURCE));
	cJSON_AddStringToObject(x, "family", w->family);
	cJSON_AddStringToObject(x, "table", get(w, C_TABLE));
	cJSON_AddStringToObject(x, "model", get(w, C_MODEL));
	cJSON_AddStringToObject(x, "metric", get(w, C_METRIC));
	cJSON_AddStringToObject(x, "reason", w->why);
	cJSON_AddItemToArray(arr, x);
}

cJSON *
val_train_report(const val_set *s)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "kind", "validate");
	cJSON_AddStringToObject(doc, "set", "training");
	cJSON *data = cJSON_AddArrayToObject(doc, "data");
	for (size_t i = 0; i < s->nsrcs; i++)
		cJSON_AddItemToArray(data, cJSON_CreateString(s->srcs[i].origin));
	cJSON *rows = cJSON_AddArrayToObject(doc, "rows");
	cJSON *skipped = cJSON_AddArrayToObject(doc, "skipped");
	for (size_t i = 0; i < s->n; i++) {
		const vrow *w = &s->rows[i];
		if (w->why[0]) {
			add_skip(skipped, w);
			continue;
		}
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "data", w->src->origin);
		cJSON_AddNumberToObject(x, "line", (double)w->src->t.lines[w->r]);
		cJSON_AddStringToObject(x, "source", w->source);
		cJSON_AddStringToObject(x, "family", w->family);
		cJSON_AddStringToObject(x, "table", get(w, C_TABLE));
		cJSON_AddStringToObject(x, "model", get(w, C_MODEL));
		cJSON_AddStringToObject(x, "system", s->sys[w->sys].name);
		cJSON_AddStringToObject(x, "framework", hw_profile_name(s->prof[w->fw].p));
		cJSON_AddStringToObject(x, "metric", get(w, C_METRIC));
		cJSON_AddStringToObject(x, "unit", get(w, C_UNIT));
		cJSON_AddNumberToObject(x, "measured", w->measured);
		cJSON_AddNumberToObject(x, "predicted", w->predicted);
		cJSON_AddNumberToObject(x, "error", (w->predicted - w->measured) / w->measured);
		bool time_like = w->mt == M_ITER_S || w->mt == M_ITER_MS || w->mt == M_LAYER_MS;
		cJSON_AddNumberToObject(x, "speed_error", val_speed_error(w->predicted, w->measured, time_like));
		const sim_train_cfg *c = &w->cfg;
		cJSON *cf = cJSON_AddObjectToObject(x, "config");
		cJSON_AddNumberToObject(cf, "gpus", c->gpus);
		cJSON_AddNumberToObject(cf, "tp", c->tp);
		cJSON_AddNumberToObject(cf, "pp", c->pp);
		cJSON_AddNumberToObject(cf, "dp", c->dp);
		cJSON_AddNumberToObject(cf, "cp", c->cp);
		cJSON_AddNumberToObject(cf, "ep", c->ep);
		cJSON_AddNumberToObject(cf, "vpp", c->vpp);
		cJSON_AddNumberToObject(cf, "micro_batch", (double)c->micro_batch);
		cJSON_AddNumberToObject(cf, "global_batch", (double)c->global_batch);
		cJSON_AddStringToObject(cf, "recompute", sim_recompute_name(c->recompute));
		cJSON_AddBoolToObject(cf, "sequence_parallel", c->sequence_parallel);
		cJSON_AddNumberToObject(cf, "zero", c->zero);
		cJSON_AddBoolToObject(cf, "fsdp", c->fsdp);
		cJSON_AddStringToObject(cf, "dtype", hw_dtype_name(c->dtype));
		pp_str as = {0};
		if (w->smb)
			pp_str_add(&as, "micro-batch not stated: fastest that fits");
		if (w->svpp)
			pp_str_addf(&as, "%svirtual stages not stated: fastest that fits", as.len ? "; " : "");
		if (w->note[0])
			pp_str_addf(&as, "%s%s", as.len ? "; " : "", w->note);
		cJSON_AddStringToObject(x, "assumptions", as.buf ? as.buf : "");
		pp_str_free(&as);
		cJSON_AddItemToArray(rows, x);
	}
	val_summarize(doc, rows, skipped);
	return doc;
}

/* ---- fitting ------------------------------------------------------------------------------- */

/* The framework parameters fitted to the rows, with the ranges a fit may search (physical:
 * a host issues a kernel in 0.5 to 60 us; collectives slow the compute beside them by at most
 * a third). */
static const struct fitkey {
	hw_pkey key;
	double lo, hi;
} fitkeys[] = {
	{HW_P_FW_HOST_OP_US, 0.5, 60.0},
	{HW_P_FW_COMM_SLOWDOWN, 0.0, 0.33},
};
#define NFITKEYS (sizeof fitkeys / sizeof fitkeys[0])

typedef struct fitctx {
	val_set *s;
	const char *root;      /* the profile root being fitted */
	const bool *use;       /* rows the fit sees (NULL: all) */
	size_t *idx;           /* scratch: the rows of this root the fit sees */
	size_t nidx;
	int rc;
	char err[512];
} fitctx;

static bool
of_root(const val_set *s, const vrow *w, const char *root)
{
	return !w->why[0] && !strcmp(hw_profile_root(s->prof[w->fw].p), root);
}

/* Sets a fitted key on every profile of the root. */
static void
set_key(val_set *s, const char *root, hw_pkey k, double v)
{
	for (size_t i = 0; i < s->nprof; i++)
		if (!strcmp(hw_profile_root(s->prof[i].p), root))
			hw_profile_set(s->prof[i].p, k, v, NULL, 0);
}

static double
mape_of(const val_set *s, const size_t *idx, size_t n)
{
	double tot = 0.0;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const vrow *w = &s->rows[idx[i]];
		if (w->why[0])
			continue;
		tot += fabs(w->predicted - w->measured) / w->measured;
		k++;
	}
	return k ? tot / (double)k : 0.0;
}

static double
fit_objective(const double *x, void *arg)
{
	fitctx *f = arg;
	if (f->rc != 0)
		return 1e9;
	for (size_t k = 0; k < NFITKEYS; k++)
		set_key(f->s, f->root, fitkeys[k].key, x[k]);
	if ((f->rc = predict_rows(f->s, f->idx, f->nidx, false, f->err, sizeof f->err)) != 0)
		return 1e9;
	return mape_of(f->s, f->idx, f->nidx);
}

/* The distinct profile roots of the rows, in order of first use. */
static size_t
roots(const val_set *s, const char **out, size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n; i++) {
		const vrow *w = &s->rows[i];
		if (w->why[0])
			continue;
		const char *r = hw_profile_root(s->prof[w->fw].p);
		bool seen = false;
		for (size_t j = 0; j < n && !seen; j++)
			seen = !strcmp(out[j], r);
		if (!seen && n < cap)
			out[n++] = r;
	}
	return n;
}

/* Fits one root's parameters over the rows `use` marks (NULL: all of its rows); predicts them
 * with the result.  *fit gets what was fitted (NULL: not asked). */
static int
fit_root(val_set *s, const char *root, const bool *use, int max_evals, cJSON **fit, char *err, size_t errlen)
{
	fitctx f = {.s = s, .root = root, .use = use};
	f.idx = malloc((s->n ? s->n : 1) * sizeof *f.idx);
	if (f.idx == NULL)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	for (size_t i = 0; i < s->n; i++)
		if (of_root(s, &s->rows[i], root) && (use == NULL || use[i]))
			f.idx[f.nidx++] = i;
	if (f.nidx == 0) {
		free(f.idx);
		if (fit)
			*fit = NULL;
		return 0;
	}
	const hw_profile *any = NULL;
	for (size_t i = 0; i < s->nprof && any == NULL; i++)
		if (!strcmp(hw_profile_root(s->prof[i].p), root))
			any = s->prof[i].p;
	cal_param p[NFITKEYS];
	for (size_t k = 0; k < NFITKEYS; k++) {
		p[k].name = hw_pdef_get(fitkeys[k].key)->key;
		p[k].lo = fitkeys[k].lo;
		p[k].hi = fitkeys[k].hi;
		double v = hw_profile_get(any, fitkeys[k].key);
		p[k].start = v < p[k].lo ? p[k].lo : v > p[k].hi ? p[k].hi : v;
	}
	double before;
	if ((f.rc = predict_rows(s, f.idx, f.nidx, false, f.err, sizeof f.err)) != 0) {
		free(f.idx);
		return pp_err(err, errlen, f.rc, "%s", f.err);
	}
	before = mape_of(s, f.idx, f.nidx);
	double best[NFITKEYS], after;
	int evals = 0;
	int rc = cal_minimize(p, NFITKEYS, fit_objective, &f, max_evals, best, &after, &evals, err, errlen);
	if (rc == 0 && f.rc != 0)
		rc = pp_err(err, errlen, f.rc, "%s", f.err);
	if (rc == 0) {
		for (size_t k = 0; k < NFITKEYS; k++)
			set_key(s, root, fitkeys[k].key, best[k]);
		rc = predict_rows(s, f.idx, f.nidx, false, err, errlen);
	}
	if (rc == 0 && fit != NULL) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "framework", root);
		cJSON_AddNumberToObject(o, "rows", (double)f.nidx);
		cJSON_AddNumberToObject(o, "mape_before", before);
		cJSON_AddNumberToObject(o, "mape_after", after);
		cJSON_AddNumberToObject(o, "evaluations", evals);
		cJSON *pa = cJSON_AddObjectToObject(o, "parameters");
		for (size_t k = 0; k < NFITKEYS; k++)
			cJSON_AddNumberToObject(pa, p[k].name, best[k]);
		*fit = o;
	}
	free(f.idx);
	return rc;
}

int
val_train_fit(val_set *s, int max_evals, cJSON **out, char *err, size_t errlen)
{
	*out = NULL;
	const char *rs[32];
	size_t nr = roots(s, rs, 32);
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "kind", "validate-fit");
	cJSON *data = cJSON_AddArrayToObject(doc, "data");
	for (size_t i = 0; i < s->nsrcs; i++)
		cJSON_AddItemToArray(data, cJSON_CreateString(s->srcs[i].origin));
	cJSON *fits = cJSON_AddArrayToObject(doc, "fits");
	for (size_t i = 0; i < nr; i++) {
		cJSON *f = NULL;
		int rc = fit_root(s, rs[i], NULL, max_evals, &f, err, errlen);
		if (rc != 0) {
			cJSON_Delete(doc);
			return rc;
		}
		if (f != NULL)
			cJSON_AddItemToArray(fits, f);
	}
	*out = doc;
	return 0;
}

/* The profiles of the set reloaded without their fitted parameters. */
static int
reset_profiles(val_set *s, char *err, size_t errlen)
{
	for (size_t i = 0; i < s->nprof; i++) {
		hw_profile *p;
		int rc = hw_profile_load(s->db, HW_SCOPE_FRAMEWORK, s->prof[i].name, HW_PROFILE_DEFAULTS, &p, err, errlen);
		if (rc != 0)
			return rc;
		hw_profile_free(s->prof[i].p);
		s->prof[i].p = p;
	}
	return 0;
}

int
val_train_cross_validate(val_set *s, int max_evals, cJSON **out, char *err, size_t errlen)
{
	*out = NULL;
	/* the families, in order of first appearance */
	const char **fam = malloc((s->n ? s->n : 1) * sizeof *fam);
	bool *use = malloc((s->n ? s->n : 1) * sizeof *use);
	double *oof = malloc((s->n ? s->n : 1) * sizeof *oof);
	size_t nf = 0;
	int rc = 0;
	if (fam == NULL || use == NULL || oof == NULL) {
		rc = pp_err(err, errlen, PP_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < s->n; i++) {
		if (s->rows[i].why[0])
			continue;
		bool seen = false;
		for (size_t j = 0; j < nf && !seen; j++)
			seen = !strcmp(fam[j], s->rows[i].family);
		if (!seen)
			fam[nf++] = s->rows[i].family;
	}
	cJSON *folds = cJSON_CreateArray();
	const char *rs[32];
	size_t nr = roots(s, rs, 32);
	for (size_t f = 0; f < nf; f++) {
		if ((rc = reset_profiles(s, err, errlen)) != 0)
			break;
		for (size_t i = 0; i < s->n; i++)
			use[i] = strcmp(s->rows[i].family, fam[f]) != 0;
		cJSON *fold = cJSON_CreateObject();
		cJSON_AddStringToObject(fold, "left_out", fam[f]);
		cJSON *fits = cJSON_AddArrayToObject(fold, "fits");
		for (size_t r = 0; r < nr && rc == 0; r++) {
			cJSON *fit = NULL;
			rc = fit_root(s, rs[r], use, max_evals, &fit, err, errlen);
			if (fit != NULL)
				cJSON_AddItemToArray(fits, fit);
		}
		cJSON_AddItemToArray(folds, fold);
		if (rc != 0)
			break;
		/* the family's rows with the parameters fitted without them */
		size_t *idx = malloc((s->n ? s->n : 1) * sizeof *idx), k = 0;
		if (idx == NULL) {
			rc = pp_err(err, errlen, PP_ENOMEM, "out of memory");
			break;
		}
		for (size_t i = 0; i < s->n; i++)
			if (!use[i] && !s->rows[i].why[0])
				idx[k++] = i;
		rc = predict_rows(s, idx, k, false, err, errlen);
		for (size_t i = 0; i < k; i++)
			oof[idx[i]] = s->rows[idx[i]].predicted;
		free(idx);
		if (rc != 0)
			break;
	}
	if (rc != 0) {
		cJSON_Delete(folds);
		goto out;
	}
	for (size_t i = 0; i < s->n; i++)
		if (!s->rows[i].why[0])
			s->rows[i].predicted = oof[i];
	cJSON *doc = val_train_report(s);
	cJSON_ReplaceItemInObject(doc, "kind", cJSON_CreateString("validate-cross"));
	cJSON_AddItemToObject(doc, "folds", folds);
	*out = doc;
out:
	free(fam);
	free(use);
	free(oof);
	return rc;
}

int
val_fit_save(hw_db *db, const cJSON *fit, char *err, size_t errlen)
{
	const cJSON *f;
	cJSON_ArrayForEach(f, cJSON_GetObjectItem(fit, "fits"))
	{
		const char *fw = cJSON_GetObjectItem(f, "framework")->valuestring;
		char method[200];
		snprintf(method, sizeof method,
			 "fitted by 'paraplan validate --fit': Nelder-Mead on MAPE over %.0f rows (%.1f%% -> %.1f%%)",
			 cJSON_GetObjectItem(f, "rows")->valuedouble, 100.0 * cJSON_GetObjectItem(f, "mape_before")->valuedouble,
			 100.0 * cJSON_GetObjectItem(f, "mape_after")->valuedouble);
		const cJSON *v;
		cJSON_ArrayForEach(v, cJSON_GetObjectItem(f, "parameters"))
		{
			int rc = hw_param_set(db, "framework", fw, v->string, v->valuedouble, "fitted", method,
					      "paraplan validate --fit", 0, err, errlen);
			if (rc != 0)
				return rc;
		}
	}
	return 0;
}
