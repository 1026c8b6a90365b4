/*
 * train.c -- training rows to runs, their predictions and errors, the fits of the framework
 * profiles and leave-one-family-out cross-validation.
 *
 * A row becomes a run by documented rules, never by its measured value:
 *   - the framework that ran it, from its source: Megatron-LM's 2019-2022 papers and README
 *     ran megatron-2021 (unfused attention, no overlapped gradient reduction); NVIDIA's
 *     dgxc-benchmarking and NeMo tables megatron (their MaxText and Paxml recipes maxtext);
 *     llm-foundry llm-foundry; NeMo Automodel nemo-automodel; torchao's torchtitan runs
 *     torchtitan; stas00's DeepSpeed runs, and rows whose ZeRO column names DeepSpeed
 *     (Narayanan 2021's ZeRO-3 baseline), deepspeed; MaxText maxtext (docs/profiles.md);
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
#include <gsl/gsl_statistics_double.h>
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
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
				   "measured_value", "unit", "notes", "framework", "system", NULL};
enum { C_SOURCE, C_TABLE, C_MODEL, C_LAYERS, C_HIDDEN, C_HEADS, C_KV, C_FFN, C_VOCAB, C_SEQ, C_GPU, C_GPUS,
       C_PREC, C_TP, C_PP, C_DP, C_CP, C_EP, C_VPP, C_ZERO, C_MB, C_GB, C_RECOMP, C_METRIC, C_VALUE, C_UNIT,
       C_NOTES, C_FRAMEWORK, C_SYSTEM, C_NCOLS };
/* The columns a file of one's own runs may leave out: an absent column reads as empty cells
 * (unstated, as in the published files).  The published files have no "framework" and no
 * "system" column; a user's runs name there the framework that ran them (a profile,
 * docs/profiles.md) and the system they ran on ('paraplan hw list'; else the GPU's usual one). */
static bool
col_optional(int c)
{
	switch (c) {
	case C_TABLE: case C_LAYERS: case C_HIDDEN: case C_HEADS: case C_KV: case C_FFN: case C_VOCAB: case C_SEQ:
	case C_DP: case C_CP: case C_EP: case C_VPP: case C_ZERO: case C_NOTES: case C_FRAMEWORK: case C_SYSTEM:
		return true;
	default:
		return false;
	}
}

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
	bool slay;           /* TP, PP and recomputation were searched ("the most performant") */
	bool nofit;          /* predicted and scored, but left out of the fits (power-limited GPUs) */
	bool szero;          /* ZeRO-1 from the framework's distributed optimizer (no stage stated) */
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
	void (*progress)(void *arg, const char *line);
	void *progress_arg;
};

void
val_set_progress(val_set *s, void (*fn)(void *arg, const char *line), void *arg)
{
	s->progress = fn;
	s->progress_arg = arg;
}

static void
say(const val_set *s, const char *fmt, ...)
{
	if (s->progress == NULL)
		return;
	char line[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	s->progress(s->progress_arg, line);
}

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

/* The units a metric's measured value may be written in, as the published files write them,
 * separated by '|' (an empty unit is one not stated: the metric's). */
static const char *
unit_of(enum metric m)
{
	switch (m) {
	case M_TFLOPS_EQ3: case M_TFLOPS_SRC: return "TFLOP/s/GPU|TFLOP/s|TFLOPS";
	case M_MFU_EQ7: case M_WEAK_EFF: return "%";
	case M_ITER_S: return "s|ms";
	case M_ITER_MS: case M_LAYER_MS: return "ms";
	case M_TOKENS_GPU: return "tokens/s/GPU|tokens/s|tok/s/GPU|tok/s";
	case M_SPEEDUP: return "x";
	default: return "";
	}
}

/* Whether a row's unit is one its metric is written in (an iteration time in seconds reads
 * "s" only: "ms" made it M_ITER_MS). */
static bool
unit_ok(const vrow *w)
{
	const char *u = get(w, C_UNIT);
	return w->mt == M_ITER_S ? u[0] == '\0' || !strcmp(u, "s") : val_unit_in(u, unit_of(w->mt));
}

/* The system a row ran on: its system column; else a cloud machine its notes name (its network
 * is not a DGX's: GCP's A3 High moves 100 GB/s a node where a DGX H100 moves 400); else from
 * its GPU column, the first entry whose GPU name the column contains (more specific names
 * first). */
static const char *
system_of(const vrow *w)
{
	if (get(w, C_SYSTEM)[0] != '\0')
		return get(w, C_SYSTEM);
	static const struct { const char *name, *system; } cloud[] = {
		{"A3 Mega", "gcp-a3-mega"}, {"a3-megagpu-8g", "gcp-a3-mega"},
		{"A3 Ultra", "gcp-a3-ultra"}, {"a3-ultragpu-8g", "gcp-a3-ultra"},
		{"GCP A3", "gcp-a3-high"}, {"A3 High", "gcp-a3-high"}, {"a3-highgpu-8g", "gcp-a3-high"},
		{"p4d.24xlarge", "aws-p4d"}, {"p4de.24xlarge", "aws-p4de"}, {"p5.48xlarge", "aws-p5"},
		{"p5e.48xlarge", "aws-p5e"}, {"p5en.48xlarge", "aws-p5en"},
	};
	for (size_t i = 0; i < sizeof cloud / sizeof cloud[0]; i++)
		if (val_has(get(w, C_NOTES), cloud[i].name))
			return cloud[i].system;
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

/* The framework that ran a row: its framework column, else from its source (docs/profiles.md);
 * NULL when neither says. */
static const char *
framework_of(const vrow *w)
{
	if (get(w, C_FRAMEWORK)[0] != '\0')
		return get(w, C_FRAMEWORK);
	const char *s = get(w, C_SOURCE);
	if (val_has(get(w, C_ZERO), "DeepSpeed")) /* Narayanan 2021's ZeRO-3 baseline */
		return "deepspeed";
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

/* What some recipes ran that neither their rows nor their framework's defaults say, read in
 * the recipes at the commit a row cites (docs/profiles.md has each source): Transformer Engine's
 * FlashAttention-2 backend instead of cuDNN's (NVTE_FUSED_ATTN=0), no TP communication overlap,
 * the virtual stages a launch script set, the dimensions a run really had.  A rule applies to
 * every row of its recipe, never to one row. */
static const struct recipe {
	const char *source, *model; /* parts of the row's source and model columns */
	int attention;              /* a sim_attention, or -1 */
	int tp_overlap;             /* 0 or 1, or -1 */
	int vpp;                    /* > 0: the virtual stages the launch script set */
	int kv_heads, vocab;        /* > 0: the dimensions the run had */
	int recompute;              /* a sim_recompute the recipe ran, or -1 */
	int ep;                     /* > 0: the expert-parallel degree the recipe ran */
	int fp8_recipe;             /* an FP8 row's HW_FP8_* scaling, or -1: the framework's */
	const char *why;
} recipes[] = {
	{"35a9aecc", "GPT3-175B", SIM_ATTN_FLASH, -1, 0, 0, 0, -1, 0, -1, "recipe: TE FlashAttention-2 backend (NVTE_FUSED_ATTN=0)"},
	{"35a9aecc", "Nemotron4-340B", SIM_ATTN_FLASH, -1, 0, 0, 0, -1, 0, -1, "recipe: TE FlashAttention-2 backend (NVTE_FUSED_ATTN=0)"},
	{"35a9aecc", "Grok-1", SIM_ATTN_FLASH, -1, 0, 0, 0, -1, 0, -1, "recipe: TE FlashAttention-2 backend (NVTE_FUSED_ATTN=0)"},
	{"741c8860", "Grok-1", SIM_ATTN_FLASH, -1, 0, 0, 0, -1, 0, -1, "recipe: TE FlashAttention-2 backend (NVTE_FUSED_ATTN=0)"},
	{"35a9aecc", "Llama3.1-405B", -1, -1, 0, 16, 51200, -1, 0, -1, "run: 16 KV groups and a GPT-2 vocabulary (dgxc 405B yaml)"},
	{"dgxc-benchmarking", "DeepSeek-V3", -1, 0, 0, 0, 0, -1, 0, -1, "recipe: no TP communication overlap"},
	{"dgxc-benchmarking", "Llama4-Maverick", -1, -1, 1, 0, 0, -1, 0, -1, "launch script: VP=1"},
	{"Automodel", "GPT-OSS 120B", SIM_ATTN_FLASH, -1, 0, 0, 0, SIM_RECOMPUTE_NONE, 16, -1,
	 "recipe: FlexAttention (FlashAttention-2 class), no activation checkpointing, EP 16"},
	{"Automodel", "GPT-OSS 20B", SIM_ATTN_FLASH, -1, 0, 0, 0, SIM_RECOMPUTE_FULL, 8, -1,
	 "recipe: FlexAttention (FlashAttention-2 class), activation checkpointing, EP 8"},
	{"Automodel", "Nemotron V3", SIM_ATTN_FLASH, -1, 0, 0, 0, SIM_RECOMPUTE_FULL, 0, -1,
	 "recipe: PyTorch SDPA, activation checkpointing"},
	{"dgxc-benchmarking", "Nemotron-H", -1, -1, 0, 0, 0, -1, 0, HW_FP8_TENSORWISE,
	 "recipe: FP8 current scaling (bf16_with_fp8_mixed_current_scaling in NeMo's nemotronh_56b.py)"},
	{"Automodel", "", -1, -1, 0, 0, 0, SIM_RECOMPUTE_FULL, 0, -1, "recipe: activation checkpointing"},
};

static const struct recipe *
recipe_of(const vrow *w)
{
	for (size_t i = 0; i < sizeof recipes / sizeof recipes[0]; i++)
		if (val_has(get(w, C_SOURCE), recipes[i].source) && val_has(get(w, C_MODEL), recipes[i].model))
			return &recipes[i];
	return NULL;
}

/* The catalog model a row names, by its catalog name or as the published tables spell it (its
 * dimensions are the catalog's; its layer count and sequence the row's, which proxy runs
 * reduce), or NULL: the row's columns then describe it. */
static const char *
catalog_of(const vrow *w)
{
	static const struct { const char *name, *catalog; } map[] = {
		{"Llama3.1-405B", "llama-3-405b"}, {"Llama3.1-70B", "llama-3-70b"}, {"Llama3.1-8B", "llama-3-8b"},
		{"Llama3-70B", "llama-3-70b"}, {"Llama3-8B", "llama-3-8b"}, {"Llama2-70B", "llama-2-70b"},
		{"Llama2-7B", "llama-2-7b"}, {"GPT3-175B", "gpt3-175b"}, {"DeepSeek-V3", "deepseek-v3"},
		{"Grok-1", "grok-1"}, {"Nemotron4-15B", "nemotron-4-15b"}, {"Nemotron4-340B", "nemotron-4-340b"},
		{"Llama4-Maverick", "llama-4-maverick"}, {"Qwen3-30B-A3B", "qwen3-30b-a3b"}, {"GPT-OSS 120B", "gpt-oss-120b"},
		{"GPT-OSS 20B", "gpt-oss-20b"}, {"Kimi K2", "kimi-k2"}, {"Nemotron-H-56B", "nemotron-h-56b"},
		{"Nemotron V3 Nano 30B", "nemotron-3-nano-30b-a3b"}, {"Nemotron-3-Nano-30B-A3B", "nemotron-3-nano-30b-a3b"},
	};
	const char *name = get(w, C_MODEL);
	for (size_t i = 0; i < model_catalog_count(); i++) /* a catalog name, as 'paraplan model list' gives it */
		if (!strcmp(name, model_catalog_name(i)))
			return model_catalog_name(i);
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
		const struct recipe *rr = recipe_of(w);
		if (rr != NULL && rr->kv_heads > 0)
			cJSON_ReplaceItemInObject(o, "kv_heads", cJSON_CreateNumber(rr->kv_heads));
		if (rr != NULL && rr->vocab > 0)
			cJSON_ReplaceItemInObject(o, "vocab", cJSON_CreateNumber(rr->vocab));
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

/* key where it starts a word of text ("TP=" not inside "ETP=", "PP=" not inside "VPP="), or NULL */
static const char *
word_at(const char *text, const char *key)
{
	for (const char *p = strstr(text, key); p != NULL; p = strstr(p + 1, key))
		if (p == text || !isalnum((unsigned char)p[-1]))
			return p;
	return NULL;
}

/* "TP=8, PP=12" in the notes. */
static void
notes_split(const vrow *w, int *tp, int *pp)
{
	const char *n = get(w, C_NOTES);
	const char *a = word_at(n, "TP=");
	const char *b = word_at(n, "PP=");
	if (a && b) {
		/* strtol, not atoi: a long run of digits must not overflow (atoi's overflow is undefined) */
		long x = strtol(a + 3, NULL, 10), y = strtol(b + 3, NULL, 10);
		*tp = x > 0 && x <= DEGREE_MAX ? (int)x : 0;
		*pp = y > 0 && y <= DEGREE_MAX ? (int)y : 0;
	}
}

/* The number after the first of keys in the notes ("data-parallel replicas 16", "dcn_DP 16",
 * "dcn_data_parallelism=16"); 0 when none is there or it is out of range. */
static int
notes_number(const char *notes, const char *const *keys)
{
	for (; *keys != NULL; keys++) {
		const char *p = word_at(notes, *keys);
		if (p != NULL) {
			long x = strtol(p + strlen(*keys), NULL, 10);
			return x > 0 && x <= GPUS_MAX ? (int)x : 0;
		}
	}
	return 0;
}

/* Hybrid sharding a row's notes state: its data-parallel replicas (MaxText's DCN data
 * parallelism, each replica an FSDP group) or the FSDP shard size; sets dp_shard where it
 * divides the row's data parallelism, else leaves ZeRO over every data-parallel rank. */
static void
notes_hybrid(vrow *w)
{
	static const char *const repl[] = {"data-parallel replicas ", "dcn_DP ", "dcn_data_parallelism=", NULL};
	static const char *const shard[] = {"FSDP shard size ", NULL};
	sim_train_cfg *c = &w->cfg;
	if (c->zero < 1 && !c->fsdp)
		return;
	int64_t mp = (int64_t)c->tp * c->pp * c->cp;
	int64_t dp = c->dp > 0 ? c->dp : c->gpus / mp;
	const char *notes = get(w, C_NOTES);
	int r = notes_number(notes, repl), sh = notes_number(notes, shard);
	int64_t want = r > 0 ? (dp % r == 0 ? dp / r : 0) : sh > 0 && sh % (c->tp * c->cp) == 0 ? sh / (c->tp * c->cp) : 0;
	if (want > 0 && want < dp && dp % want == 0)
		c->dp_shard = (int)want;
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
	/* a row that states no ZeRO stage ran the framework's optimizer: Megatron-Core as NeMo runs
	 * it shards the optimizer states over data parallelism (the distributed optimizer) */
	w->szero = zero[0] == '\0' && fw != NULL && hw_profile_get(fw, HW_P_FW_DIST_OPTIMIZER) != 0.0;
	if (w->szero)
		c->zero = 1;
	else if (val_has(zero, "none") || zero[0] == '\0')
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
	/* Narayanan 2021's ZeRO-3 baseline ran DeepSpeed as released in early 2021, whose ZeRO-3
	 * gathered each parameter with its own dist.all_gather (partition_parameters.py
	 * _allgather_param; the coalesced fetch came later), and whose gathers stood on the
	 * compute's critical path (DeepSpeed issue 1174, 0.3.16: the forward bounded by parameter
	 * gathering, eight times ZeRO-2's; PR 1170: the prefetch overlapped the compute only in
	 * part) (docs/profiles.md) */
	if (c->zero >= 3 && val_has(zero, "DeepSpeed") && val_has(get(w, C_SOURCE), "Narayanan")) {
		c->zero3_gather = HW_Z3_TENSOR;
		c->zero3_prefetch = false;
		pp_strlcpy(w->note, "DeepSpeed ZeRO-3 of early 2021: one all-gather per parameter tensor, no prefetch",
			   sizeof w->note);
	}
	/* Korthikanti 2022's Megatron-LM launched the input gradient's all-reduce before the weight
	 * gradient and waited after it (its Table 4: "baseline backward overlaps all-reduce with
	 * weight-grad GEMM"); the 2019-2021 releases megatron-2021 describes did not */
	if (val_has(get(w, C_SOURCE), "Korthikanti"))
		c->tp_wgrad_overlap = true;
	/* the precision as the files write it (bf16, amp_bf16, fp8, mxfp8, fp32, "mixed fp16",
	 * "mixed 16-bit"); one not stated is mixed 16-bit, the era's default; any other is refused,
	 * not run as fp16 */
	const char *prec = get(w, C_PREC);
	if (prec[0] != '\0' && !val_has(prec, "fp8") && !val_has(prec, "bf16") && !val_has(prec, "fp32") &&
	    !val_has(prec, "fp16") && !val_has(prec, "16-bit"))
		return "the precision is not one the simulator runs (fp32, fp16, bf16, fp8, mxfp8)";
	c->dtype = val_has(prec, "fp8") ? HW_FP8 : val_has(prec, "bf16") ? HW_BF16 : val_has(prec, "fp32") ? HW_FP32 : HW_FP16;
	const char *rc = get(w, C_RECOMP);
	if (val_has(rc, "microbatch-level"))
		return "micro-batch-level recomputation is not modelled";
	if (!strncmp(rc, "none", 4))
		c->recompute = SIM_RECOMPUTE_NONE;
	else if (val_has(rc, "per-op"))
		c->recompute = SIM_RECOMPUTE_OP; /* torchtitan's per-operator policy */
	else if (val_has(rc, "selective") || val_has(rc, "remat_policy"))
		c->recompute = SIM_RECOMPUTE_SELECTIVE;
	else if (val_has(rc, "full") || val_has(rc, "checkpointing on") || (rc[0] == '\0' && megatron_era(w) &&
										   !strcmp(hw_profile_name(fw), "megatron-2021")))
		c->recompute = SIM_RECOMPUTE_FULL; /* Megatron-LM 2019-2020: --checkpoint-activations */
	else if (rc[0] == '\0')
		c->recompute = SIM_RECOMPUTE_NONE;
	else
		return "the recompute is not one the simulator runs (none, full, selective, per-op)";
	/* sequence parallelism as the framework runs it, unless the row says */
	if (val_has(rc, "sequence parallel"))
		c->sequence_parallel = !val_has(rc, "no sequence parallel");
	/* an FP8 row may name its recipe (torchao's tables do); DeepSpeed's may offload */
	const char *notes = get(w, C_NOTES);
	/* the MoE layers' tensor parallelism where a recipe set it apart from TP ("ETP=1",
	 * Megatron-Core's --expert-tensor-parallel-size); else the default (sim_train_etp) */
	const char *etp = strstr(notes, "ETP=");
	if (etp != NULL && c->ep > 1) {
		long x = strtol(etp + 4, NULL, 10);
		c->etp = x > 0 && x <= DEGREE_MAX ? (int)x : 0;
	}
	c->offload_optimizer = val_has(notes, "CPU AdamW offload") || val_has(notes, "optimizer offload");
	/* GPUs run below their rated power at a limit the row does not give: the database's kernel
	 * rates do not describe them, so their error is reported but must not move a framework's
	 * parameters (torchao's B200 tables) */
	w->nofit = val_has(notes, "power-limited");
	if (val_has(prec, "mxfp8"))
		c->fp8_recipe = HW_FP8_MXFP8;
	else if (c->dtype == HW_FP8 && val_has(notes, "rowwise"))
		c->fp8_recipe = HW_FP8_ROWWISE;
	else if (c->dtype == HW_FP8 && val_has(notes, "tensorwise"))
		c->fp8_recipe = HW_FP8_TENSORWISE;
	c->global_batch = geti(w, C_GB);
	c->micro_batch = geti(w, C_MB);
	c->seq = 0;
	w->smb = c->micro_batch <= 0;
	if (c->micro_batch <= 0)
		c->micro_batch = 1;
	int64_t vpp = geti(w, C_VPP);
	const struct recipe *rr = recipe_of(w);
	if (rr != NULL) {
		if (rr->attention >= 0)
			c->attention = (sim_attention)rr->attention;
		if (rr->tp_overlap >= 0)
			c->tp_comm_overlap = rr->tp_overlap != 0;
		if (rr->vpp > 0)
			vpp = rr->vpp;
		if (rr->recompute >= 0 && rc[0] == '\0')
			c->recompute = (sim_recompute)rr->recompute;
		if (rr->ep > 0 && geti(w, C_EP) <= 0)
			c->ep = rr->ep;
		if (rr->fp8_recipe >= 0 && c->dtype == HW_FP8 && c->fp8_recipe == 0)
			c->fp8_recipe = rr->fp8_recipe;
		pp_strlcpy(w->note, rr->why, sizeof w->note);
	}
	/* a row that says it ran its source's most performant layout and states none runs the
	 * fastest the simulator finds (TP inside a node, PP, recomputation) */
	w->slay = val_has(notes, "most performant") && geti(w, C_TP) <= 0 && geti(w, C_PP) <= 0 && geti(w, C_CP) <= 1;
	if (!w->slay) /* the search's layouts have data parallelism of their own */
		notes_hybrid(w);
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
	static const int64_t mbs[] = {1, 2, 4, 8, 16};
	static const int degs[] = {1, 2, 4, 8};
	int nmb = w->smb ? 5 : 1, nlay = w->slay ? 4 : 1;
	int gpn = hw_cost_system(cost)->gpus_per_node;
	bool found = false;
	char e2[512] = "";
	for (int ti = 0; ti < nlay; ti++)
		for (int pi = 0; pi < nlay; pi++)
			for (int ri = 0; ri < (w->slay ? 3 : 1); ri++)
				for (int i = 0; i < nmb; i++) {
					sim_train_cfg x = w->cfg;
					if (w->slay) {
						x.tp = degs[ti], x.pp = degs[pi], x.dp = 0;
						x.recompute = (sim_recompute)ri;
						if (x.tp > gpn || t->heads % x.tp != 0 || t->layers % x.pp != 0 ||
						    x.gpus % (x.tp * x.pp) != 0)
							continue;
						x.sequence_parallel = x.tp > 1 && w->cfg.sequence_parallel;
					}
					if (w->smb)
						x.micro_batch = mbs[i];
					int64_t dp = x.dp > 0 ? x.dp : x.gpus / ((int64_t)x.tp * x.pp * x.cp);
					if (dp <= 0 || x.global_batch % (x.micro_batch * dp) != 0)
						continue;
					int64_t per_stage = t->layers / x.pp;
					bool svpp = w->svpp || (w->slay && x.pp > 1);
					for (int64_t vpp = 1; vpp <= (svpp ? per_stage : 1); vpp++) {
						sim_train_cfg y = x;
						if (svpp) {
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
	switch (w->conv) {
	case FL_CAUSAL:
		return model_flops_train_causal_per_token(w->m, seq);
	case FL_MAXTEXT:
		return model_flops_train_causal_per_token(w->m, seq) + 6.0 * model_embedding_params(w->m);
	case FL_FULL:
	default:
		return model_flops_train_per_token(w->m, seq);
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
	/* the 1-GPU baseline of the scaling rows with their profile as it is now, before the rows
	 * run in parallel */
	s->have_base = false;
	for (size_t i = 0; i < n && !s->have_base; i++) {
		vrow *w = &s->rows[idx[i]];
		if (!w->why[0] && (w->mt == M_WEAK_EFF || w->mt == M_SPEEDUP)) {
			char e2[512];
			int rc = shoeybi_baseline(s, w, e2, sizeof e2);
			if (rc == PP_EUSAGE)
				pp_strlcpy(w->why, e2, sizeof w->why);
			else if (rc != 0)
				return pp_err(err, errlen, rc, "%s", e2);
		}
	}
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

/* The framework and the system a row's own columns name must be in the database, on every row
 * of the file whether or not the row is selected or can run: the error says where. */
static int
check_names(val_set *s, const vrow *w, char *err, size_t errlen)
{
	static const int cs[] = {C_FRAMEWORK, C_SYSTEM};
	for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
		const char *name = get(w, cs[i]);
		if (name[0] == '\0')
			continue;
		int rc = cs[i] == C_FRAMEWORK ? prof_index(s, name, err, errlen) : sys_index(s, name, err, errlen);
		if (rc >= 0)
			continue;
		if (rc != PP_EUSAGE && rc != PP_ENOTFOUND)
			return rc;
		char msg[512];
		pp_strlcpy(msg, err, sizeof msg);
		return pp_err(err, errlen, PP_EINPUT, "%s, line %zu, column \"%s\": %s", w->src->origin,
			      w->src->t.lines[w->r], cols[cs[i]], msg);
	}
	return 0;
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
	const char *absurd = "the measured value is not a positive number";
	if (pp_parse_double(get(w, C_VALUE), &w->measured) != 0 || (absurd = val_measured_absurd(w->measured)) != NULL) {
		pp_strlcpy(w->why, absurd, sizeof w->why);
		return 0;
	}
	if (w->mt == M_MFU_EQ7 && w->measured > 100) {
		pp_strlcpy(w->why, "the measured MFU is above 100%", sizeof w->why);
		return 0;
	}
	if (!unit_ok(w)) {
		snprintf(w->why, sizeof w->why, "the unit \"%.40s\" is not one of the metric's (%s)", get(w, C_UNIT), unit_of(w->mt));
		return 0;
	}
	/* a count the row states is a whole number from 1: a cell that is not one is a mistake, not
	 * an unstated value (it used to run as if empty: a global batch of "128x" as dp x mb) */
	static const int counts[] = {C_LAYERS, C_HIDDEN, C_HEADS, C_KV, C_FFN, C_VOCAB, C_SEQ, C_GPUS,
				     C_TP, C_PP, C_DP, C_CP, C_EP, C_VPP, C_MB, C_GB};
	for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
		const char *cell = get(w, counts[i]);
		int64_t x;
		if (cell[0] != '\0' && (pp_parse_i64(cell, &x) != 0 || x < 1)) {
			snprintf(w->why, sizeof w->why, "the %s \"%.24s\" is not a whole number from 1", cols[counts[i]], cell);
			return 0;
		}
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
		if ((rc = pp_csv_header(&v->t, srcs[i].origin, err, errlen)) != 0)
			goto fail;
		v->origin = srcs[i].origin;
		for (int c = 0; cols[c] != NULL; c++)
			if ((v->col[c] = pp_csv_column(&v->t, cols[c])) < 0 && !col_optional(c)) {
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
			if ((rc = check_names(s, w, err, errlen)) != 0)
				goto fail;
			if (!in_filter(w, filter))
				continue;
			s->n++;
			if ((rc = prepare_row(s, w, simulate, err, errlen)) != 0)
				goto fail;
		}
	if (simulate) {
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
		if (c->dp_shard > 0)
			cJSON_AddNumberToObject(cf, "dp_shard", c->dp_shard);
		cJSON_AddStringToObject(cf, "dtype", hw_dtype_name(c->dtype));
		pp_str as = {0};
		if (w->smb)
			pp_str_add(&as, "micro-batch not stated: fastest that fits");
		if (w->svpp)
			pp_str_addf(&as, "%svirtual stages not stated: fastest that fits", as.len ? "; " : "");
		if (w->slay)
			pp_str_addf(&as, "%s\"most performant\" layout: the fastest TP, PP and recomputation that fit",
				    as.len ? "; " : "");
		if (w->szero && c->dp > 1)
			pp_str_addf(&as, "%sZeRO not stated: the framework's distributed optimizer (ZeRO-1)", as.len ? "; " : "");
		if (w->note[0])
			pp_str_addf(&as, "%s%s", as.len ? "; " : "", w->note);
		if (w->nofit)
			pp_str_addf(&as, "%spower-limited GPUs, the limit not stated: scored, not fitted", as.len ? "; " : "");
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
 * a third), and the prior that holds a framework near the root it is based on: straying by
 * `sigma` (on the logarithm, or the value where `log` is false) costs as much as one row
 * FIT_DELTA off. */
static const struct fitkey {
	hw_pkey key;
	double lo, hi;
	bool log;
	double sigma;
} fitkeys[] = {
	{HW_P_FW_GEMM_SCALE, 0.4, 1.1, true, 0.15},
	{HW_P_FW_ATTN_SCALE, 0.3, 1.1, true, 0.3},
	{HW_P_FW_HOST_OP_US, 0.5, 60.0, true, 1.0},
	{HW_P_FW_COMM_SLOWDOWN, 0.0, 0.33, false, 0.1},
};
#define NFITKEYS (sizeof fitkeys / sizeof fitkeys[0])

/* A row's residual: the logarithm of predicted over measured through a pseudo-Huber loss of
 * width FIT_DELTA (quadratic within about 10%, growing as its square root beyond), so that a row
 * the model cannot express -- a technique it leaves out, a misprint -- pulls on its framework's
 * parameters no harder than a few rows it fits. */
#define FIT_DELTA 0.1

static double
robust(double e)
{
	double q = e / FIT_DELTA;
	return copysign(FIT_DELTA * sqrt(2.0 * (sqrt(1.0 + q * q) - 1.0)), e);
}

/* The fit's coordinates: cal_param_u of each key's range (calibrate/minimize.c). */
static cal_param
key_param(size_t k)
{
	return (cal_param){hw_pdef_get(fitkeys[k].key)->key, fitkeys[k].lo, fitkeys[k].hi, 0.0};
}

static double
key_u(size_t k, double v)
{
	cal_param p = key_param(k);
	return cal_param_u(&p, v);
}

static double
key_value(size_t k, double u)
{
	cal_param p = key_param(k);
	return cal_param_value(&p, u);
}

/* Every row's log prediction as a linear function of its own profile's fitted parameters (in
 * the fit's coordinates) about a point: made by simulating the rows at the point and with each
 * key moved by LIN_STEP (linearize).  The fits run on it; the simulator checks each step. */
#define LIN_STEP 0.1
typedef struct linear {
	double *l0; /* per row: log prediction at the point (NAN: not predicted) */
	double *u0; /* per row x NFITKEYS: the point */
	double *d;  /* per row x NFITKEYS: d log prediction / du */
} linear;

/* A fitted group: its values and how it got them. */
typedef struct gfit {
	const char *group;
	int level;
	double v[NFITKEYS];
	size_t rows;
	double mape_before, mape_after, rms;
	int passes;
} gfit;

enum { MAXGROUPS = 32 };

/* Fits are made per group of profiles: a root and every profile under it (level 0), or the
 * profiles under one child of a root (level 1: megatron and megatron-2021; torchtitan and
 * nemo-automodel).  The root's fit serves the profiles whose own group has no rows to fit. */
static bool
in_group(const hw_profile *p, const char *group, int level)
{
	return !strcmp(hw_profile_ancestor(p, level), group);
}

/* Sets a key on every profile of the group. */
static void
set_key(val_set *s, const char *group, int level, hw_pkey k, double v)
{
	for (size_t i = 0; i < s->nprof; i++)
		if (in_group(s->prof[i].p, group, level))
			hw_profile_set(s->prof[i].p, k, v, NULL, 0);
}

static void
set_group(val_set *s, const char *group, int level, const double *v)
{
	for (size_t k = 0; k < NFITKEYS; k++)
		set_key(s, group, level, fitkeys[k].key, v[k]);
}

static const hw_profile *
group_profile(const val_set *s, const char *group, int level)
{
	for (size_t i = 0; i < s->nprof; i++)
		if (in_group(s->prof[i].p, group, level))
			return s->prof[i].p;
	return NULL;
}

static void
group_values(const val_set *s, const char *group, int level, double *v)
{
	const hw_profile *p = group_profile(s, group, level);
	for (size_t k = 0; k < NFITKEYS; k++)
		v[k] = hw_profile_get(p, fitkeys[k].key);
}

static double
key_coord(size_t k, double v)
{
	return fitkeys[k].log ? log(v) : v;
}

/* One group's fit: its rows, where it starts, what holds it. */
typedef struct fitctx {
	const val_set *s;
	const size_t *idx;    /* the group's rows */
	size_t nidx;
	const double *prior;  /* the root's fitted values (level 1), or NULL */
	const linear *lin;
	double u0[NFITKEYS];  /* the group's point of the linearization */
} fitctx;

/* The group's residuals at x: its rows' (predicted from the linearization; rows not predicted
 * give 0) and the prior's. */
static int
fit_resid(const double *x, double *r, void *arg)
{
	const fitctx *f = arg;
	double du[NFITKEYS];
	for (size_t k = 0; k < NFITKEYS; k++)
		du[k] = key_u(k, x[k]) - f->u0[k];
	for (size_t i = 0; i < f->nidx; i++) {
		size_t j = f->idx[i];
		double lp = f->lin->l0[j];
		for (size_t k = 0; k < NFITKEYS; k++)
			lp += f->lin->d[j * NFITKEYS + k] * du[k];
		r[i] = isfinite(lp) ? robust(lp - log(f->s->rows[j].measured)) : 0.0;
	}
	for (size_t k = 0; f->prior != NULL && k < NFITKEYS; k++)
		r[f->nidx + k] = FIT_DELTA * (key_coord(k, x[k]) - key_coord(k, f->prior[k])) / fitkeys[k].sigma;
	return 0;
}

/* The group's rows that `use` marks (NULL: all), less those left out of fits. */
static size_t
group_rows(const val_set *s, const char *group, int level, const bool *use, size_t *out)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n; i++) {
		const vrow *w = &s->rows[i];
		if (!w->why[0] && !w->nofit && (use == NULL || use[i]) && in_group(s->prof[w->fw].p, group, level))
			out[n++] = i;
	}
	return n;
}

/* The group's cost (sum of squared residuals) and MAPE at the linearization's point. */
static double
group_cost(const fitctx *f, const double *v, double *mape)
{
	size_t m = f->nidx + (f->prior ? NFITKEYS : 0);
	double *r = malloc((m ? m : 1) * sizeof *r), c = 0.0, ape = 0.0;
	size_t k = 0;
	if (r == NULL)
		return INFINITY;
	fitctx at = *f;
	for (size_t q = 0; q < NFITKEYS; q++)
		at.u0[q] = key_u(q, v[q]);
	fit_resid(v, r, &at);
	for (size_t i = 0; i < m; i++)
		c += r[i] * r[i];
	for (size_t i = 0; i < f->nidx; i++) {
		const vrow *w = &f->s->rows[f->idx[i]];
		double lp = f->lin->l0[f->idx[i]];
		if (isfinite(lp)) {
			ape += fabs(exp(lp) - w->measured) / w->measured;
			k++;
		}
	}
	free(r);
	if (mape)
		*mape = k ? ape / (double)k : 0.0;
	return c;
}

/* The group's best values on the linearization, from v (its point), at most `reach` away in
 * each coordinate.  0 with best[] set, or an error. */
static int
fit_on_linear(fitctx *f, const double *v, double reach, double *best, char *err, size_t errlen)
{
	cal_param p[NFITKEYS];
	for (size_t k = 0; k < NFITKEYS; k++) {
		p[k] = key_param(k);
		double u = key_u(k, v[k]);
		f->u0[k] = u;
		/* the box of the step: the range, cut to the reach of the linearization */
		double lo = key_value(k, u - reach), hi = key_value(k, u + reach);
		p[k].lo = lo > p[k].lo ? lo : p[k].lo;
		p[k].hi = hi < p[k].hi ? hi : p[k].hi;
		p[k].start = v[k];
	}
	size_t m = f->nidx + (f->prior ? NFITKEYS : 0);
	double cost;
	return cal_least_squares(p, NFITKEYS, m, fit_resid, f, 200, best, &cost, NULL, err, errlen);
}

/* The rows of idx[0 .. n) simulated at every profile's current values, then with each fitted
 * key moved by LIN_STEP in its coordinate on every profile at once (a row sees only its own
 * profile): each row's log prediction and its slopes. */
static int
linearize(val_set *s, const size_t *idx, size_t n, linear *lin, char *err, size_t errlen)
{
	int rc = predict_rows(s, idx, n, false, err, errlen);
	if (rc != 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		size_t j = idx[i];
		const vrow *w = &s->rows[j];
		lin->l0[j] = !w->why[0] && w->predicted > 0 ? log(w->predicted) : NAN;
		for (size_t k = 0; k < NFITKEYS; k++)
			lin->u0[j * NFITKEYS + k] = key_u(k, hw_profile_get(s->prof[w->fw].p, fitkeys[k].key));
	}
	double *keep = malloc((s->nprof ? s->nprof : 1) * sizeof *keep);
	if (keep == NULL)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	for (size_t k = 0; k < NFITKEYS && rc == 0; k++) {
		for (size_t q = 0; q < s->nprof; q++) {
			keep[q] = hw_profile_get(s->prof[q].p, fitkeys[k].key);
			hw_profile_set(s->prof[q].p, fitkeys[k].key, key_value(k, key_u(k, keep[q]) + LIN_STEP), NULL, 0);
		}
		rc = predict_rows(s, idx, n, false, err, errlen);
		for (size_t i = 0; i < n && rc == 0; i++) {
			size_t j = idx[i];
			const vrow *w = &s->rows[j];
			double l1 = !w->why[0] && w->predicted > 0 ? log(w->predicted) : NAN;
			/* the slope over the step actually taken (a value clamped at its range moves less) */
			double du = key_u(k, hw_profile_get(s->prof[w->fw].p, fitkeys[k].key)) - lin->u0[j * NFITKEYS + k];
			lin->d[j * NFITKEYS + k] = isfinite(l1) && isfinite(lin->l0[j]) && du > 0 ? (l1 - lin->l0[j]) / du : 0.0;
		}
		for (size_t q = 0; q < s->nprof; q++)
			hw_profile_set(s->prof[q].p, fitkeys[k].key, keep[q], NULL, 0);
	}
	free(keep);
	return rc;
}

/* The groups of one level of the profile tree (level 0: the root; level L: the profiles L
 * bases below it, each with the profiles based on it) that can be fitted over the rows `use`
 * marks: those with rows, held near the values their profiles hold now (the fit of the level
 * above) and with at least two rows a parameter, counting the prior's. */
typedef struct level {
	size_t n;
	const char *group[MAXGROUPS];
	bool held[MAXGROUPS];
	double prior[MAXGROUPS][NFITKEYS];
	size_t *idx[MAXGROUPS];
	size_t nidx[MAXGROUPS];
} level;

static void
level_free(level *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->idx[i]);
	l->n = 0;
}

static int
level_groups(val_set *s, int lv, const bool *use, level *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < s->n; i++) {
		const vrow *w = &s->rows[i];
		if (w->why[0] || w->nofit || (use != NULL && !use[i]))
			continue;
		const hw_profile *p = s->prof[w->fw].p;
		const char *g = hw_profile_ancestor(p, lv);
		/* a profile above this level is its own group there: fitted already */
		if (lv > 0 && !strcmp(g, hw_profile_ancestor(p, lv - 1)))
			continue;
		bool seen = false;
		for (size_t j = 0; j < out->n && !seen; j++)
			seen = !strcmp(out->group[j], g);
		if (seen || out->n == MAXGROUPS)
			continue;
		size_t *idx = malloc(s->n * sizeof *idx);
		if (idx == NULL) {
			level_free(out);
			return pp_err(err, errlen, PP_ENOMEM, "out of memory");
		}
		size_t n = group_rows(s, g, lv, use, idx);
		/* the same rows as the group above: its fit already */
		if (lv > 0 && n == group_rows(s, hw_profile_ancestor(p, lv - 1), lv - 1, use, idx)) {
			free(idx);
			continue;
		}
		n = group_rows(s, g, lv, use, idx);
		size_t j = out->n;
		out->held[j] = lv > 0;
		group_values(s, g, lv, out->prior[j]);
		for (size_t k = 0; k < NFITKEYS; k++)
			out->prior[j][k] = fmin(fmax(out->prior[j][k], fitkeys[k].lo), fitkeys[k].hi);
		if (n + (out->held[j] ? NFITKEYS : 0) < 2 * NFITKEYS) {
			free(idx);
			continue;
		}
		out->group[j] = g;
		out->idx[j] = idx;
		out->nidx[j] = n;
		out->n++;
	}
	return 0;
}

/* One level's groups fitted by successive linearization: the rows are simulated at the
 * groups' values and with each key moved (linearize), each group fitted on that within a
 * reach of 1 in each coordinate, and the step kept if the simulated rows agree it lowered the
 * group's cost, else halved (four times at most).  A group ends when its next step is under
 * 0.01, its last one gained under 0.1%, or after max_rounds.  Ends with the profiles at the
 * best values found and *lin (sized for every row) at them. */
static int
fit_level(val_set *s, int lv, const bool *use, int max_rounds, linear *lin, gfit *out, size_t *nout, char *err,
	  size_t errlen)
{
	level L;
	int rc = level_groups(s, lv, use, &L, err, errlen);
	*nout = 0;
	if (rc != 0 || L.n == 0)
		return rc;
	size_t *idx = malloc((s->n ? s->n : 1) * sizeof *idx);
	if (idx == NULL) {
		level_free(&L);
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	}
	double cur[MAXGROUPS][NFITKEYS], best[MAXGROUPS][NFITKEYS], bestc[MAXGROUPS];
	bool done[MAXGROUPS];
	int halved[MAXGROUPS];
	for (size_t g = 0; g < L.n; g++) {
		/* The root level starts from each key's registry default, not from the values the
		 * database holds: the fit is then a function of the rows and the model alone (the fit
		 * shipped before does not steer the next one along a flat direction), and each level
		 * below starts from the fit above it, which set_group left on its profiles. */
		if (lv == 0)
			for (size_t k = 0; k < NFITKEYS; k++)
				cur[g][k] = hw_pdef_get(fitkeys[k].key)->def;
		else
			group_values(s, L.group[g], lv, cur[g]);
		/* from inside the ranges: at an edge the transformed coordinate cannot move */
		for (size_t k = 0; k < NFITKEYS; k++) {
			double span = fitkeys[k].hi - fitkeys[k].lo;
			cur[g][k] = fmin(fmax(cur[g][k], fitkeys[k].lo + 0.05 * span), fitkeys[k].hi - 0.05 * span);
		}
		set_group(s, L.group[g], lv, cur[g]);
		bestc[g] = INFINITY;
		done[g] = false;
		halved[g] = 0;
		out[g] = (gfit){.group = L.group[g], .level = lv, .rows = L.nidx[g]};
	}
	for (int round = 0; round < max_rounds && rc == 0; round++) {
		/* the rows of the groups still moving */
		size_t n = 0;
		for (size_t g = 0; g < L.n; g++)
			for (size_t i = 0; i < L.nidx[g] && !done[g]; i++)
				idx[n++] = L.idx[g][i];
		if (n == 0)
			break;
		say(s, "fit, level %d: round %d, %zu rows", lv, round + 1, n);
		if ((rc = linearize(s, idx, n, lin, err, errlen)) != 0)
			break;
		for (size_t g = 0; g < L.n && rc == 0; g++) {
			if (done[g])
				continue;
			fitctx f = {.s = s, .idx = L.idx[g], .nidx = L.nidx[g], .prior = L.held[g] ? L.prior[g] : NULL, .lin = lin};
			double mape, c = group_cost(&f, cur[g], &mape);
			if (round == 0)
				out[g].mape_before = mape;
			out[g].passes = (round + 1) * (int)(NFITKEYS + 1);
			if (c > bestc[g]) {
				/* the simulator disagrees with the step: halve it, four times at most */
				if (++halved[g] > 4) {
					done[g] = true;
					continue;
				}
				for (size_t k = 0; k < NFITKEYS; k++)
					cur[g][k] = key_value(k, 0.5 * (key_u(k, cur[g][k]) + key_u(k, best[g][k])));
				set_group(s, L.group[g], lv, cur[g]);
				continue;
			}
			double gain = bestc[g] - c;
			bestc[g] = c;
			memcpy(best[g], cur[g], sizeof best[g]);
			halved[g] = 0;
			out[g].mape_after = mape;
			out[g].rms = sqrt(c / (double)(f.nidx + (f.prior ? NFITKEYS : 0)));
			/* the last round only checks; a step that gained under 0.1% ends the group */
			if (round == max_rounds - 1 || gain < 1e-3 * c) {
				done[g] = true;
				continue;
			}
			double next[NFITKEYS], step = 0.0;
			if ((rc = fit_on_linear(&f, cur[g], 1.0, next, err, errlen)) != 0)
				break;
			for (size_t k = 0; k < NFITKEYS; k++)
				step = fmax(step, fabs(key_u(k, next[k]) - key_u(k, cur[g][k])));
			if (step <= 0.01) {
				done[g] = true;
				continue;
			}
			memcpy(cur[g], next, sizeof next);
			set_group(s, L.group[g], lv, cur[g]);
		}
	}
	/* the best values, and the rows of a group that ended elsewhere linearized at them */
	size_t n = 0;
	for (size_t g = 0; g < L.n && rc == 0; g++) {
		bool elsewhere = false;
		for (size_t k = 0; k < NFITKEYS; k++)
			elsewhere |= cur[g][k] != best[g][k];
		memcpy(out[g].v, best[g], sizeof best[g]);
		set_group(s, L.group[g], lv, best[g]);
		for (size_t i = 0; i < L.nidx[g] && elsewhere; i++)
			idx[n++] = L.idx[g][i];
	}
	if (rc == 0 && n > 0)
		rc = linearize(s, idx, n, lin, err, errlen);
	*nout = rc == 0 ? L.n : 0;
	free(idx);
	level_free(&L);
	return rc;
}

/* One level's groups fitted once on a given linearization (the cross-validation's folds):
 * sets each group's values on its profiles. */
static int
fit_level_on(val_set *s, int lv, const bool *use, const linear *lin, gfit *out, size_t *nout, char *err,
	     size_t errlen)
{
	level L;
	int rc = level_groups(s, lv, use, &L, err, errlen);
	*nout = 0;
	if (rc != 0)
		return rc;
	for (size_t g = 0; g < L.n && rc == 0; g++) {
		fitctx f = {.s = s, .idx = L.idx[g], .nidx = L.nidx[g], .prior = L.held[g] ? L.prior[g] : NULL, .lin = lin};
		/* from the point the rows were linearized at (the fit on every row) */
		double from[NFITKEYS];
		for (size_t k = 0; k < NFITKEYS; k++)
			from[k] = key_value(k, lin->u0[L.idx[g][0] * NFITKEYS + k]);
		out[g] = (gfit){.group = L.group[g], .level = lv, .rows = L.nidx[g]};
		if ((rc = fit_on_linear(&f, from, 1e9, out[g].v, err, errlen)) == 0) {
			set_group(s, L.group[g], lv, out[g].v);
			out[g].rms = sqrt(group_cost(&f, from, NULL) / (double)(f.nidx + (f.prior ? NFITKEYS : 0)));
		}
	}
	*nout = rc == 0 ? L.n : 0;
	level_free(&L);
	return rc;
}

static void
linear_free(linear *l)
{
	free(l->l0);
	free(l->u0);
	free(l->d);
}

static int
linear_alloc(linear *l, size_t n)
{
	l->l0 = calloc(n ? n : 1, sizeof *l->l0);
	l->u0 = calloc((n ? n : 1) * NFITKEYS, sizeof *l->u0);
	l->d = calloc((n ? n : 1) * NFITKEYS, sizeof *l->d);
	return l->l0 && l->u0 && l->d ? 0 : PP_ENOMEM;
}

/* The levels of the profile tree in turn, each group held near the fit of the level above,
 * over the rows `use` marks: by simulation (lin[level] gets each level's linearization at its
 * fit) or, with `on`, on the given linearizations.  g[MAXFITS] gets the fitted groups, *ng
 * their count. */
enum { MAXLEVELS = 6, MAXFITS = MAXLEVELS * MAXGROUPS };

static int
fit_all(val_set *s, const bool *use, int max_rounds, linear *lin, bool on, gfit *g, size_t *ng, char *err,
	size_t errlen)
{
	*ng = 0;
	for (int lv = 0; lv < MAXLEVELS; lv++) {
		size_t n = 0;
		int rc = on ? fit_level_on(s, lv, use, &lin[lv], g + *ng, &n, err, errlen)
			    : fit_level(s, lv, use, max_rounds, &lin[lv], g + *ng, &n, err, errlen);
		if (rc != 0)
			return rc;
		*ng += n;
	}
	return 0;
}

static void
linears_free(linear *l)
{
	for (int i = 0; i < MAXLEVELS; i++)
		linear_free(&l[i]);
}

static int
linears_alloc(linear *l, size_t n)
{
	int rc = 0;
	for (int i = 0; i < MAXLEVELS; i++)
		rc |= linear_alloc(&l[i], n);
	return rc;
}

static cJSON *
fits_json(const gfit *g, size_t n, bool simulated)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "framework", g[i].group);
		cJSON_AddNumberToObject(o, "level", g[i].level);
		cJSON_AddNumberToObject(o, "rows", (double)g[i].rows);
		if (simulated) {
			cJSON_AddNumberToObject(o, "mape_before", g[i].mape_before);
			cJSON_AddNumberToObject(o, "mape_after", g[i].mape_after);
			cJSON_AddNumberToObject(o, "passes", g[i].passes);
		}
		cJSON_AddNumberToObject(o, "rms_log_error", g[i].rms);
		cJSON *pa = cJSON_AddObjectToObject(o, "parameters");
		for (size_t k = 0; k < NFITKEYS; k++)
			cJSON_AddNumberToObject(pa, hw_pdef_get(fitkeys[k].key)->key, g[i].v[k]);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

/* Every row predicted with the profiles as they are. */
static int
predict_all(val_set *s, char *err, size_t errlen)
{
	size_t *idx = malloc((s->n ? s->n : 1) * sizeof *idx), n = 0;
	if (idx == NULL)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	for (size_t i = 0; i < s->n; i++)
		if (!s->rows[i].why[0])
			idx[n++] = i;
	int rc = predict_rows(s, idx, n, false, err, errlen);
	free(idx);
	return rc;
}

static int
rounds_of(int max_evals)
{
	int r = max_evals / (int)(NFITKEYS + 1);
	return r > 1 ? r : 2;
}

int
val_train_fit(val_set *s, int max_evals, cJSON **out, char *err, size_t errlen)
{
	*out = NULL;
	linear lin[MAXLEVELS] = {{0}};
	gfit g[MAXFITS];
	size_t ng = 0;
	int rc = linears_alloc(lin, s->n) != 0 ? pp_err(err, errlen, PP_ENOMEM, "out of memory")
						 : fit_all(s, NULL, rounds_of(max_evals), lin, false, g, &ng, err, errlen);
	if (rc == 0)
		rc = predict_all(s, err, errlen);
	linears_free(lin);
	if (rc != 0)
		return rc;
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "kind", "validate-fit");
	cJSON *data = cJSON_AddArrayToObject(doc, "data");
	for (size_t i = 0; i < s->nsrcs; i++)
		cJSON_AddItemToArray(data, cJSON_CreateString(s->srcs[i].origin));
	cJSON_AddItemToObject(doc, "fits", fits_json(g, ng, true));
	*out = doc;
	return 0;
}

/* ---- intervals ----------------------------------------------------------------------------- */

/* A prediction's 80% interval comes from how far the cross-validation's predictions of its
 * framework's rows were from the measured ones: the 10th and 90th percentiles of
 * log(measured / predicted step time) over the rows of the profile and those based on it, or
 * of its parent's when it has fewer than INTERVAL_ROWS (sim_interval applies them). */
#define INTERVAL_ROWS 20

/* A row's log error as step time: log(measured / predicted) of a time, the inverse of a rate. */
static double
time_log_error(const vrow *w)
{
	bool time_like = w->mt == M_ITER_S || w->mt == M_ITER_MS || w->mt == M_LAYER_MS;
	if (!(w->predicted > 0) || !(w->measured > 0))
		return NAN;
	double q = log(w->measured / w->predicted);
	return time_like ? q : -q;
}

/* The intervals of every profile the rows use, from the rows' cross-validated predictions
 * (val_intervals). */
static cJSON *
intervals_json(const val_set *s, const char *const *fam, size_t nf, char *err, size_t errlen)
{
	val_err *e = malloc((s->n ? s->n : 1) * sizeof *e);
	const hw_profile **profs = malloc((s->nprof ? s->nprof : 1) * sizeof *profs);
	cJSON *o = NULL;
	if (e != NULL && profs != NULL) {
		for (size_t i = 0; i < s->n; i++)
			e[i] = (val_err){.q = s->rows[i].why[0] ? NAN : time_log_error(&s->rows[i]),
					 .family = s->rows[i].family, .p = s->prof[s->rows[i].fw].p};
		for (size_t k = 0; k < s->nprof; k++)
			profs[k] = s->prof[k].p;
		o = val_intervals(e, s->n, profs, s->nprof, fam, nf, INTERVAL_ROWS, "framework");
	}
	free(e), free(profs);
	if (o == NULL)
		pp_err(err, errlen, PP_ENOMEM, "out of memory");
	return o;
}

int
val_train_cross_validate(val_set *s, int max_evals, bool exact, cJSON **out, char *err, size_t errlen)
{
	*out = NULL;
	size_t cap = s->n ? s->n : 1;
	const char **fam = malloc(cap * sizeof *fam);
	bool *use = malloc(cap * sizeof *use);
	double *oof = malloc(cap * sizeof *oof);
	size_t *idx = malloc(cap * sizeof *idx);
	linear lin[MAXLEVELS] = {{0}}, tmp[MAXLEVELS] = {{0}};
	gfit gin[MAXFITS], g[MAXFITS];
	size_t nf = 0, ngin = 0, ng = 0;
	cJSON *folds = cJSON_CreateArray();
	int rc = 0;
	if (fam == NULL || use == NULL || oof == NULL || idx == NULL || folds == NULL || linears_alloc(lin, s->n) != 0 ||
	    (exact && linears_alloc(tmp, s->n) != 0)) {
		rc = pp_err(err, errlen, PP_ENOMEM, "out of memory");
		goto out;
	}
	/* the families, in order of first appearance */
	for (size_t i = 0; i < s->n; i++) {
		if (s->rows[i].why[0])
			continue;
		bool seen = false;
		for (size_t j = 0; j < nf && !seen; j++)
			seen = !strcmp(fam[j], s->rows[i].family);
		if (!seen)
			fam[nf++] = s->rows[i].family;
	}
	/* the fit on every row: each fold starts from it, and fits on its linearizations */
	if ((rc = fit_all(s, NULL, rounds_of(max_evals), lin, false, gin, &ngin, err, errlen)) != 0)
		goto out;
	for (size_t f = 0; f < nf && rc == 0; f++) {
		for (size_t i = 0; i < s->n; i++)
			use[i] = strcmp(s->rows[i].family, fam[f]) != 0;
		/* from the fit on every row (the linearized folds fit about it; an exact fold's root
		 * starts from the defaults, as every fit's does); a group left without rows (the
		 * family was all of them) keeps the fold's values of the level above, which that
		 * level's fit set on it */
		for (size_t i = 0; i < ngin; i++)
			if (gin[i].level == 0)
				set_group(s, gin[i].group, 0, gin[i].v);
		rc = exact ? fit_all(s, use, rounds_of(max_evals), tmp, false, g, &ng, err, errlen)
			   : fit_all(s, use, 0, lin, true, g, &ng, err, errlen);
		if (rc != 0)
			break;
		cJSON *fold = cJSON_CreateObject();
		cJSON_AddStringToObject(fold, "left_out", fam[f]);
		cJSON_AddItemToObject(fold, "fits", fits_json(g, ng, exact));
		cJSON_AddItemToArray(folds, fold);
		size_t k = 0;
		for (size_t i = 0; i < s->n; i++)
			if (!use[i] && !s->rows[i].why[0])
				idx[k++] = i;
		say(s, "fold %zu of %zu: %s, %zu rows", f + 1, nf, fam[f], k);
		rc = predict_rows(s, idx, k, false, err, errlen);
		for (size_t i = 0; i < k; i++)
			oof[idx[i]] = s->rows[idx[i]].predicted;
	}
	if (rc != 0)
		goto out;
	for (size_t i = 0; i < s->n; i++)
		if (!s->rows[i].why[0])
			s->rows[i].predicted = oof[i];
	cJSON *doc = val_train_report(s);
	cJSON_ReplaceItemInObject(doc, "kind", cJSON_CreateString("validate-cross"));
	cJSON_AddStringToObject(doc, "folds_fitted", exact ? "by simulation" : "on the rows linearized at the fit on every row");
	cJSON_AddItemToObject(doc, "fit", fits_json(gin, ngin, true));
	cJSON_AddItemToObject(doc, "folds", folds), folds = NULL;
	cJSON *iv = intervals_json(s, fam, nf, err, errlen);
	if (iv == NULL) {
		cJSON_Delete(doc);
		rc = PP_ENOMEM;
		goto out;
	}
	cJSON_AddItemToObject(doc, "intervals", iv);
	*out = doc;
out:
	cJSON_Delete(folds);
	linears_free(lin);
	linears_free(tmp);
	free(fam);
	free(use);
	free(oof);
	free(idx);
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
			 "fitted by 'paraplan validate --fit': least squares on log error (pseudo-Huber 10%%) over %.0f "
			 "rows, MAPE %.1f%% -> %.1f%%",
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
