/*
 * check_models.c -- model descriptions: parameter counts of known models against their
 * published counts, FLOP formulas against the papers' closed forms, Hugging Face configs,
 * and malformed inputs that must fail with a message naming the field.
 */
#include "config.h"
#include "common/pp.h"
#include "models/model.h"
#include "tests/testutil.h"

#include <cJSON.h>

static char err[1024];

static model *
load(const char *spec)
{
	model *m = NULL;
	int rc = model_load(spec, &m, err, sizeof err);
	ck_assert_msg(rc == 0, "loading %s: %s", spec, err);
	return m;
}

/* Published parameter counts.  A count published to a stated precision (Narayanan et al.
 * 2021 Table 1 gives billions to one decimal) is checked to half a unit of that precision:
 * "place" is the unit (0.1e9 for "1.7B").  Otherwise the count must be within 0.5%.  For
 * the small GPTs of Table 1 the half unit is the wider test (1.652B prints as "1.7B", 2.8%
 * away); the paper's own formula, P = 12lh^2 (1 + 13/12h + (V + s)/12lh), is ours less the
 * final layer norm (see narayanan_formula below).  Exact published counts are asserted
 * exactly in the tests that follow. */
static const struct {
	const char *name;
	double total, active, place;
	const char *source;
} published[] = {
	{"llama-3-8b", 8.03e9, 0, 0, "Meta Llama 3 model card: 8.03B"},
	{"llama-3-70b", 70.6e9, 0, 0, "Meta-Llama-3-70B on Hugging Face: 70.6B"},
	{"llama-3-405b", 405.9e9, 0, 0, "Llama 3.1 405B on Hugging Face: 406B; 405.85B by hand"},
	{"llama-2-7b", 6.74e9, 0, 0, "Llama-2-7b-hf on Hugging Face: 6.74B"},
	{"llama-2-13b", 13.0e9, 0, 0, "Llama-2-13b-hf on Hugging Face: 13.0B"},
	{"llama-2-70b", 68.98e9, 0, 0, "Llama-2-70b-hf on Hugging Face: 68.98B"},
	{"mistral-7b", 7.24e9, 0, 0, "Mistral-7B-v0.1 on Hugging Face: 7.24B"},
	{"mixtral-8x7b", 46.7e9, 12.9e9, 0, "Mistral AI, Mixtral of experts: 46.7B total, 12.9B per token"},
	{"qwen2-7b", 7.62e9, 0, 0, "Qwen2-7B on Hugging Face: 7.62B"},
	{"gpt-neox-20b", 20.55e9, 0, 0, "Black et al. 2022 (arXiv 2204.06745): 20.55B"},
	{"gpt2-xl", 1.56e9, 0, 0, "gpt2-xl on Hugging Face: 1.56B"},
	{"deepseek-v3", 671e9, 0, 0, "DeepSeek-V3 report: 671B (the 685B checkpoint adds the 14B MTP module)"},
	{"deepseek-r1", 671e9, 0, 1e9, "DeepSeek-R1 model card on Hugging Face: 671B total (the 685B checkpoint adds the MTP module)"},
	{"gpt3-175b", 174.6e9, 0, 0, "Narayanan et al. 2021 Table 2: 174.6B"},
	{"gpt-1.7b", 1.7e9, 0, 0.1e9, "Narayanan et al. 2021 Table 1: 1.7B"},
	{"gpt-3.6b", 3.6e9, 0, 0.1e9, "Narayanan et al. 2021 Table 1: 3.6B"},
	{"gpt-7.5b", 7.5e9, 0, 0.1e9, "Narayanan et al. 2021 Table 1: 7.5B"},
	{"gpt-18.4b", 18.4e9, 0, 0.1e9, "Narayanan et al. 2021 Table 1: 18.4B"},
	{"gpt-39.1b", 39.1e9, 0, 0.1e9, "Narayanan et al. 2021 Table 1: 39.1B"},
	{"gpt-76.1b", 76.1e9, 0, 0.1e9, "Narayanan et al. 2021 Table 1: 76.1B"},
	{"gpt-145.6b", 145.6e9, 0, 0.1e9, "Narayanan et al. 2021 Table 1: 145.6B"},
	{"gpt-310.1b", 310.1e9, 0, 0.1e9, "Narayanan et al. 2021 Table 1: 310.1B"},
	{"gpt-530b", 529.6e9, 0, 0.1e9, "Narayanan et al. 2021 Table 1: 529.6B"},
	{"gpt-1t", 1008.0e9, 0, 0.1e9, "Narayanan et al. 2021 Table 1: 1008.0B"},
	{"gpt-22b", 22e9, 0, 1e9, "Korthikanti et al. 2022 Table 3: 22B"},
	{"megatron-gpt2-1.2b", 1.2e9, 0, 0.1e9, "Shoeybi et al. 2019 Table 1: 1.2B"},
	{"megatron-gpt2-2.5b", 2.5e9, 0, 0.1e9, "Shoeybi et al. 2019 Table 1: 2.5B"},
	{"megatron-gpt2-4.2b", 4.2e9, 0, 0.1e9, "Shoeybi et al. 2019 Table 1: 4.2B"},
	{"megatron-gpt2-8.3b", 8.3e9, 0, 0.1e9, "Shoeybi et al. 2019 Table 1: 8.3B"},
	{"megatron-gpt2-1.16b", 1.16e9, 0, 0.01e9, "Megatron-LM README 2020: 1.16B"},
	{"megatron-gpt2-2.03b", 2.03e9, 0, 0.01e9, "Megatron-LM README 2020: 2.03B"},
	{"megatron-gpt2-4.24b", 4.24e9, 0, 0.01e9, "Megatron-LM README 2020: 4.24B"},
	{"megatron-gpt2-8.67b", 8.67e9, 0, 0.01e9, "Megatron-LM README 2020: 8.67B"},
	{"mpt-70b", 64.862e9, 0, 0, "llm-foundry benchmarking README, MPT-70b at seq 2048: 64.862B"},
	{"resnet-50", 25.6e6, 0, 0, "He et al. 2016: 25.6M (torchvision 25,557,032)"},
	{"resnet-101", 44.5e6, 0, 0, "torchvision resnet101: 44.5M"},
	{"resnet-152", 60.2e6, 0, 0, "torchvision resnet152: 60.2M"},
	{"vgg-16", 138.4e6, 0, 0, "torchvision vgg16: 138.4M"},
};

static double
published_tol(double total, double place)
{
	return place > 0 ? place / 2.0 : 0.005 * total;
}

START_TEST(published_parameter_counts)
{
	for (size_t i = 0; i < sizeof published / sizeof published[0]; i++) {
		model *m = load(published[i].name);
		double p = model_params(m);
		double tol = published_tol(published[i].total, published[i].place);
		ck_assert_msg(fabs(p - published[i].total) <= tol, "%s: %.6g params, published %.6g (%s)",
			      published[i].name, p, published[i].total, published[i].source);
		if (published[i].active > 0) {
			double a = model_params_active(m);
			ck_assert_msg(fabs(a - published[i].active) <= 0.005 * published[i].active,
				      "%s: %.6g active params, published %.6g", published[i].name, a, published[i].active);
		}
		model_free(m);
	}
}
END_TEST

/* Every catalog entry loads, is named after its file, and cites a source. */
START_TEST(catalog_entries_load)
{
	ck_assert_uint_ge(model_catalog_count(), 40);
	for (size_t i = 0; i < model_catalog_count(); i++) {
		model *m = load(model_catalog_name(i));
		ck_assert_str_eq(model_name(m), model_catalog_name(i));
		ck_assert_msg(strlen(model_source(m)) > 10, "%s has no source", model_name(m));
		ck_assert_msg(model_params(m) > 0, "%s has no parameters", model_name(m));
		model_free(m);
	}
}
END_TEST

/* Narayanan et al. 2021 count parameters as P = 12lh^2 (1 + 13/12h + (V + s)/12lh): per layer
 * 12h^2 + 13h, plus token and position embeddings.  We count the final layer norm (2h) too. */
START_TEST(narayanan_formula)
{
	static const char *const names[] = {"gpt-1.7b", "gpt-3.6b", "gpt-7.5b", "gpt-18.4b", "gpt-39.1b",
					    "gpt-76.1b", "gpt-145.6b", "gpt-310.1b", "gpt-530b", "gpt-1t",
					    "gpt-22b", "gpt3-175b"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		model *m = load(names[i]);
		const model_tf *t = model_transformer(m);
		double l = (double)t->layers, h = (double)t->hidden, V = (double)t->vocab, s = (double)t->seq;
		double P = 12.0 * l * h * h * (1.0 + 13.0 / (12.0 * h) + (V + s) / (12.0 * l * h));
		ck_assert_rel(model_params(m), P + 2.0 * h, 1e-12);
		model_free(m);
	}
}
END_TEST

/* The llm-foundry benchmark table gives each MPT's parameter count at every sequence length it
 * ran: the count grows by seq x d_model because those MPTs learn a position embedding of
 * max_seq_len (scripts/train/benchmarking/README.md, as in the validation CSV).  Giving
 * "max_positions" reproduces each row within 0.5%. */
static model *
with_max_positions(const char *name, int64_t positions)
{
	const char *text = NULL;
	for (size_t i = 0; i < model_catalog_count(); i++)
		if (strcmp(model_catalog_name(i), name) == 0)
			text = model_catalog_text(i);
	ck_assert_ptr_nonnull(text);
	cJSON *doc = cJSON_Parse(text);
	ck_assert_ptr_nonnull(doc);
	cJSON_AddNumberToObject(doc, "max_positions", (double)positions);
	char *out = cJSON_PrintUnformatted(doc);
	model *m = NULL;
	int rc = model_parse(out, strlen(out), name, &m, err, sizeof err);
	ck_assert_msg(rc == 0, "%s: %s", name, err);
	cJSON_free(out);
	cJSON_Delete(doc);
	return m;
}

START_TEST(mpt_benchmark_counts)
{
	static const struct {
		const char *name;
		int64_t seq;
		double params_b;
	} rows[] = {
		{"mpt-125m", 512, 0.124},   {"mpt-125m", 2048, 0.125},  {"mpt-125m", 65536, 0.174},
		{"mpt-350m", 2048, 0.356},  {"mpt-350m", 65536, 0.421}, {"mpt-760m", 2048, 0.76},
		{"mpt-760m", 65536, 0.858}, {"mpt-1b", 2048, 1.316},    {"mpt-1b", 65536, 1.446},
		{"mpt-3b", 2048, 2.652},    {"mpt-3b", 65536, 2.814},   {"mpt-7b", 512, 6.653},
		{"mpt-7b", 2048, 6.659},    {"mpt-7b", 65536, 6.919},   {"mpt-13b", 2048, 12.854},
		{"mpt-13b", 32768, 13.011}, {"mpt-30b", 2048, 29.975},  {"mpt-30b", 8192, 30.019},
		{"mpt-70b", 2048, 64.862},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		model *m = with_max_positions(rows[i].name, rows[i].seq);
		double p = model_params(m), want = rows[i].params_b * 1e9;
		ck_assert_msg(fabs(p - want) <= 0.005 * want, "%s at seq %lld: %.6g params, published %.6g", rows[i].name,
			      (long long)rows[i].seq, p, want);
		model_free(m);
	}
}
END_TEST

/* Hand count for GPT-3 175B (h = 12288, L = 96, V = 51200, s = 2048, learned positions):
 * per layer 12h^2 + 13h = 1,812,099,072; embeddings V h + s h = 654,311,424; final LN 2h. */
START_TEST(gpt3_hand_count)
{
	model *m = load("gpt3-175b");
	ck_assert_rel(model_layer_params(m, 0), 1812099072.0, 1e-15);
	ck_assert_rel(model_embedding_params(m), 654311424.0, 1e-15);
	ck_assert_rel(model_params(m), 96.0 * 1812099072.0 + 654311424.0 + 24576.0, 1e-15);
	model_free(m);
}
END_TEST

/* GPT-2 XL: Hugging Face counts 1,557,611,200 for GPT2LMHeadModel (the LM head is tied).
 * h = 1600, L = 48: per layer 12h^2 + 13h = 30,740,800; embeddings (50257 + 1024) h =
 * 82,049,600; final norm 2h = 3,200. */
START_TEST(gpt2_xl_exact)
{
	model *m = load("gpt2-xl");
	ck_assert_rel(model_layer_params(m, 0), 30740800.0, 0.0);
	ck_assert_rel(model_embedding_params(m), 82049600.0, 0.0);
	ck_assert_rel(model_params(m), 1557611200.0, 0.0);
	model_free(m);
}
END_TEST

/* BERT-large.  Hugging Face's BertModel with pooler is 335,141,888 parameters: embeddings
 * (30522 + 512 + 2) h + norm 2h = 31,782,912; 24 layers of 12h^2 + 13h = 302,309,376; pooler
 * h^2 + h = 1,049,600.  We count the pre-training model (BertForPreTraining), which adds the
 * MLM transform h^2 + h, its norm 2h, the MLM output bias V (the output weight is the tied
 * embedding) and the next-sentence classifier 2h + 2: 336,226,108. */
START_TEST(bert_large_exact)
{
	model *m = load("bert-large");
	const model_tf *t = model_transformer(m);
	double h = 1024.0;
	ck_assert(!t->causal);
	ck_assert_rel(model_embedding_params(m), 31782912.0, 0.0);
	double bert_model = model_embedding_params(m) + 24.0 * model_layer_params(m, 0) + (h * h + h);
	ck_assert_rel(bert_model, 335141888.0, 0.0);
	ck_assert_rel(model_params(m), 335141888.0 + (h * h + h) + 2.0 * h + 30522.0 + (2.0 * h + 2.0), 0.0);
	ck_assert_rel(model_params(m), 336226108.0, 0.0);
	model_free(m);
}
END_TEST

/* Llama 3.1 405B by hand: h = 16384, 128 query and 8 KV heads of 128, ffn 53248, V = 128256.
 * Attention 2h^2 + 2h(8 x 128) = 570,425,344; SwiGLU 3 h ffn = 2,617,245,696; two RMS norms
 * 2h; 126 layers; untied embedding and head 2Vh; final norm h. */
START_TEST(llama3_405b_hand_count)
{
	model *m = load("llama-3-405b");
	double h = 16384.0, layer = 570425344.0 + 2617245696.0 + 2.0 * h;
	ck_assert_rel(model_layer_params(m, 0), layer, 0.0);
	ck_assert_rel(model_params(m), 126.0 * layer + 2.0 * 128256.0 * h + h, 0.0);
	ck_assert_rel(model_params(m), 405853388800.0, 0.0);
	model_free(m);
}
END_TEST

/* DeepSeek-V3 (arXiv 2412.19437): 671B total, 37B activated per token.  The Hugging Face
 * checkpoint holds 685B: the extra 14B are the multi-token-prediction module, which we do
 * not model.  DeepSeek's 37B leaves out the input embedding (a lookup, 0.93B): every other
 * parameter a token touches comes to 36.6B, which rounds to 37B, while with the embedding it
 * is 37.55B.  Mixtral's 12.9B, on the other hand, counts the embedding; model_params_active
 * always does, so this test subtracts it.
 * MLA attention by hand: q down 7168 x 1536, q up 1536 x 128 x 192, kv down 7168 x (512 +
 * 64), kv up 512 x 128 x (128 + 128), output 128 x 128 x 7168, plus the input norm and the
 * two latent norms (7168 + 1536 + 512).  A MoE layer: 257 experts (256 routed, 1 shared) of
 * 3 x 7168 x 2048, router 7168 x 256, norm 7168. */
START_TEST(deepseek_v3_counts)
{
	model *m = load("deepseek-v3");
	double attn = 7168.0 * 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 + 512.0 * 128 * 256 + 128.0 * 128 * 7168;
	ck_assert_rel(model_attn_params(m), attn + 7168 + 1536 + 512, 0.0);
	ck_assert(!model_layer_is_moe(m, 2));
	ck_assert(model_layer_is_moe(m, 3));
	ck_assert_rel(model_mlp_params(m, 3), 257.0 * 3 * 7168 * 2048 + 7168.0 * 256 + 7168, 0.0);
	ck_assert_rel(model_mlp_params(m, 0), 3.0 * 7168 * 18432 + 7168, 0.0);
	double total = model_params(m);
	ck_assert_msg(fabs(total - 671e9) <= 0.005 * 671e9, "total %.6g", total);
	double input_embedding = 129280.0 * 7168.0;
	double active = model_params_active(m) - input_embedding;
	ck_assert_msg(fabs(active - 37e9) <= 0.5e9, "active without the embedding %.6g, published 37B", active);
	/* KV cache: one latent of 512 + the shared RoPE key of 64 per layer. */
	ck_assert_rel(model_kv_bytes_per_token(m, 2.0), 576.0 * 61 * 2, 0.0);
	model_free(m);
}
END_TEST

/* Nemotron-H-56B (arXiv 2504.03624 Table 1; Megatron-Bridge's NemotronHModel56BProvider): 54
 * Mamba-2 layers, 10 attention layers and 54 squared-ReLU MLPs, h 8192.  A Mamba-2 mixer of 256
 * heads of 64 (d_inner 16384), 8 groups of state 256: in_proj 8192 x (2 x 16384 + 2 x 8 x 256 +
 * 256), out_proj 16384 x 8192, the width-4 convolution over x, B and C with its bias
 * (16384 + 4096) x 5, A, D and the dt bias (3 x 256), the gated norm (16384) and the input norm
 * (8192).  Attention: 8192 x (64 + 2 x 8 + 64) x 128 + norm; MLP 2 x 8192 x 32768 + norm; the
 * untied embedding and head 131072 x 8192 each, the final norm.  About 56B, as published.
 * FLOPs: per token 2 x the matmul weights, the attention core 4 s a d in 10 layers, the SSD
 * scan 2 Q N G + H (2 Q P + 4 N P) in 54 (chunks Q = 128). */
START_TEST(nemotron_h_counts)
{
	model *m = load("nemotron-h-56b");
	ck_assert_str_eq(model_hybrid_pattern(m), "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-"
						  "M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-");
	ck_assert_int_eq(model_layer_block(m, 0), MODEL_BLOCK_MAMBA);
	ck_assert_int_eq(model_layer_block(m, 1), MODEL_BLOCK_MLP);
	ck_assert_int_eq(model_layer_block(m, 7), MODEL_BLOCK_ATTN);
	ck_assert(!model_layers_alike(m, 0, 1) && model_layers_alike(m, 0, 2));
	double mamba_mm = 8192.0 * (2 * 16384 + 2 * 8 * 256 + 256) + 16384.0 * 8192;
	double mamba = mamba_mm + (16384.0 + 4096) * 5 + 3 * 256 + 16384 + 8192;
	double attn_mm = 8192.0 * (64 + 2 * 8 + 64) * 128, attn = attn_mm + 8192;
	double mlp_mm = 2.0 * 8192 * 32768, mlp = mlp_mm + 8192;
	ck_assert_rel(model_mamba_params(m), mamba, 0.0);
	ck_assert_rel(model_layer_params(m, 0), mamba, 0.0);
	ck_assert_rel(model_layer_params(m, 7), attn, 0.0);
	ck_assert_rel(model_layer_params(m, 1), mlp, 0.0);
	double total = 54 * mamba + 10 * attn + 54 * mlp + 2 * 131072.0 * 8192 + 8192;
	ck_assert_rel(model_params(m), total, 1e-15);
	ck_assert_msg(fabs(total - 56e9) <= 0.01 * 56e9, "total %.6g, published 56B", total);
	double scan = 2.0 * 128 * 256 * 8 + 256.0 * (2 * 128 * 64 + 4 * 256 * 64);
	double fwd = 2.0 * (54 * mamba_mm + 10 * attn_mm + 54 * mlp_mm + 131072.0 * 8192) + 10 * 4.0 * 8192 * 64 * 128 +
		     54 * scan;
	ck_assert_rel(model_flops_fwd_per_token(m, 8192), fwd, 1e-12);
	/* the KV cache of the 10 attention layers alone */
	ck_assert_rel(model_kv_bytes_per_token(m, 2.0), 2.0 * 8 * 128 * 10 * 2, 0.0);
	model_free(m);
}
END_TEST

static void expect_error(const char *doc, const char *needle);

/* A hybrid pattern must be as long as the model and use only its four letters. */
/* Nemotron 3 Nano 30B-A3B (its config.json; Megatron-Bridge's Nemotron3NanoProvider): 23
 * Mamba-2, 23 MoE and 6 attention layers, h 2688.  A Mamba-2 mixer of 64 heads of 64 (d_inner
 * 4096), 8 groups of state 128: in_proj 2688 x (2 x 4096 + 2 x 8 x 128 + 64), out_proj 4096 x
 * 2688, the width-4 convolution and its bias (4096 + 2048) x 5, A, D and dt (3 x 64), the gated
 * norm (4096) and the input norm.  Attention: 2688 x (32 + 2 x 2 + 32) x 128 + norm.  A MoE
 * layer: 128 experts of two 2688 x 1856 matrices (squared ReLU), the shared expert of 3712 (two
 * expert widths), the router 2688 x 128, the norm.  Untied embedding and head, 131072 x 2688
 * each, and the final norm: 31,577,937,344, where OpenRouter lists 31.6B and the model card
 * "30B"; active with 6 of the 128 experts, 3.58B ("3.5B" on the card). */
START_TEST(nemotron_3_nano_counts)
{
	model *m = load("nemotron-3-nano-30b-a3b");
	const double h = 2688, di = 64.0 * 64, gn = 8.0 * 128;
	double mamba = h * (2 * di + 2 * gn + 64) + di * h + (di + 2 * gn) * 5 + 3 * 64 + di + h;
	double attn = h * (32 + 2 * 2 + 32) * 128 + h;
	double expert = 2 * h * 1856, moe = 128 * expert + 2 * expert + h * 128 + h;
	ck_assert_int_eq(model_layer_block(m, 0), MODEL_BLOCK_MAMBA);
	ck_assert_int_eq(model_layer_block(m, 5), MODEL_BLOCK_ATTN);
	ck_assert_rel(model_layer_params(m, 0), mamba, 0.0);
	ck_assert_rel(model_layer_params(m, 5), attn, 0.0);
	ck_assert_rel(model_layer_params(m, 1), moe, 0.0);
	double total = 23 * mamba + 6 * attn + 23 * moe + 2 * 131072.0 * h + h;
	ck_assert_rel(model_params(m), total, 0.0);
	ck_assert_rel(total, 31577937344.0, 0.0);
	double active = total - 23 * (128 - 6) * expert;
	ck_assert_rel(model_params_active(m), active, 1e-12);
	ck_assert_msg(fabs(active - 3.5e9) < 0.1e9, "active %.6g, published 3.5B", active);
	model_free(m);
}
END_TEST

/* A Nemotron 3 config that cannot be expressed is refused with the reason: LatentMoE's experts
 * run in a narrower space (Nemotron 3 Super's moe_latent_size); a pattern whose length is not
 * the layer count, or with a layer kind we lack, names the field; Mamba-2 groups of 0 or that do
 * not split the heads, and a zero chunk (a config's optional keys may be 0), are refused. */
START_TEST(huggingface_nemotron_h_refusals)
{
	static const char base[] = "{\"model_type\":\"nemotron_h\",\"hidden_size\":64,\"num_hidden_layers\":3,"
				   "\"num_attention_heads\":4,\"vocab_size\":128,\"max_position_embeddings\":256,"
				   "\"mamba_num_heads\":4,\"mamba_head_dim\":16,\"ssm_state_size\":16,\"intermediate_size\":128,";
	static const struct {
		const char *tail, *want;
	} cases[] = {
		{"\"hybrid_override_pattern\":\"M*-\"}", NULL},
		{"\"hybrid_override_pattern\":\"M*\"}", "\"hybrid_override_pattern\" has 2 layers, the model 3"},
		{"\"hybrid_override_pattern\":\"M*X\"}", "got 'X' at 3"},
		{"\"n_groups\":1}", "missing field \"hybrid_override_pattern\""},
		{"\"hybrid_override_pattern\":\"M*E\"}", "missing field \"n_routed_experts\""},
		{"\"hybrid_override_pattern\":\"M*E\",\"n_routed_experts\":8,\"num_experts_per_tok\":2,"
		 "\"moe_intermediate_size\":32,\"moe_latent_size\":16}", "LatentMoE"},
		{"\"hybrid_override_pattern\":\"M*E\",\"n_routed_experts\":8,\"num_experts_per_tok\":2,"
		 "\"moe_intermediate_size\":32,\"moe_shared_expert_intermediate_size\":48}", "whole number of experts' width"},
		{"\"hybrid_override_pattern\":\"M*-\",\"n_groups\":0}", "must be positive"},
		{"\"hybrid_override_pattern\":\"M*-\",\"chunk_size\":0}", "must be positive"},
		{"\"hybrid_override_pattern\":\"M*-\",\"n_groups\":3}", "the Mamba-2 groups (3) must divide its heads (4)"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char doc[1024];
		snprintf(doc, sizeof doc, "%s%s", base, cases[i].tail);
		model *m = NULL;
		err[0] = '\0';
		int rc = model_parse(doc, strlen(doc), "nh.json", &m, err, sizeof err);
		if (cases[i].want == NULL) {
			ck_assert_msg(rc == 0, "case %zu: %s", i, err);
			ck_assert_str_eq(model_hybrid_pattern(m), "M*-");
			model_free(m);
		} else {
			ck_assert_msg(rc == PP_EINPUT && strstr(err, cases[i].want) != NULL, "case %zu: rc %d, \"%s\"", i, rc, err);
		}
	}
}
END_TEST

START_TEST(hybrid_pattern_checked)
{
	static const char head[] = "{\"name\":\"h\",\"layers\":3,\"hidden\":64,\"heads\":4,\"ffn\":256,\"vocab\":100,"
				   "\"seq\":16,\"hybrid\":{\"ssm_heads\":4,\"ssm_head_dim\":32,\"ssm_state\":16,";
	char doc[512];
	snprintf(doc, sizeof doc, "%s\"pattern\":\"M-\"}}", head);
	expect_error(doc, "\"hybrid.pattern\" has 2 layers, the model 3");
	snprintf(doc, sizeof doc, "%s\"pattern\":\"M-A\"}}", head);
	expect_error(doc, "got 'A' at 3");
	snprintf(doc, sizeof doc, "%s\"pattern\":\"M-E\"}}", head);
	expect_error(doc, "has MoE layers (E) but no experts are given");
	snprintf(doc, sizeof doc, "%s\"pattern\":\"M*-\"}}", head);
	model *m;
	ck_assert_msg(model_parse(doc, strlen(doc), "test", &m, err, sizeof err) == 0, "%s", err);
	ck_assert_int_eq(model_layer_block(m, 1), MODEL_BLOCK_ATTN);
	model_free(m);
}
END_TEST

/* CNNs: torchvision's parameter counts, exactly, and the PyTorch MNIST example's. */
START_TEST(cnn_exact_counts)
{
	static const struct {
		const char *name;
		double params;
	} cases[] = {
		{"resnet-50", 25557032.0}, {"resnet-101", 44549160.0}, {"resnet-152", 60192808.0},
		{"vgg-16", 138357544.0},   {"mnist-cnn", 1199882.0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		model *m = load(cases[i].name);
		ck_assert_int_eq(model_get_kind(m), MODEL_CNN);
		ck_assert_msg(model_params(m) == cases[i].params, "%s: %.0f params, expected %.0f", cases[i].name,
			      model_params(m), cases[i].params);
		model_free(m);
	}
}
END_TEST

/* ResNet-50 at 224x224: torchvision reports 4.09 GMACs, i.e. 8.18 GFLOPs forward, within 2%.
 * The last stage leaves 2048 x 7 x 7 and the classifier takes the pooled 2048. */
START_TEST(resnet50_flops_and_shapes)
{
	model *m = load("resnet-50");
	ck_assert_rel(model_cnn_flops_per_sample(m), 2.0 * 4.09e9, 0.02);
	ck_assert_rel(model_flops_train_per_token(m, 1), 3.0 * model_cnn_flops_per_sample(m), 1e-15);
	const model_layer *l;
	size_t n = model_layers(m, &l);
	ck_assert_uint_gt(n, 100);
	const model_layer *fc = &l[n - 1];
	ck_assert_int_eq(fc->kind, MODEL_LAYER_FC);
	ck_assert_int_eq(fc->in_c, 2048);
	ck_assert_int_eq(fc->out_c, 1000);
	ck_assert_int_eq(fc->params, 2048 * 1000 + 1000);
	const model_layer *pool = &l[n - 2];
	ck_assert_int_eq(pool->kind, MODEL_LAYER_AVGPOOL);
	ck_assert_int_eq(pool->in_c, 2048);
	ck_assert_int_eq(pool->in_h, 7);
	ck_assert_int_eq(pool->in_w, 7);
	model_free(m);
}
END_TEST

/* The MNIST net: 28 -> 26 -> 24 under two unpadded 3x3 convolutions, 12 after the pool, so
 * the first FC layer sees 64 x 12 x 12 = 9216 inputs. */
START_TEST(mnist_cnn_shapes)
{
	model *m = load("mnist-cnn");
	int64_t c, h, w;
	model_cnn_input(m, &c, &h, &w);
	ck_assert_int_eq(c, 1);
	ck_assert_int_eq(h, 28);
	const model_layer *l;
	size_t n = model_layers(m, &l);
	const model_layer *fc1 = NULL;
	for (size_t i = 0; i < n; i++)
		if (strcmp(l[i].name, "fc1") == 0)
			fc1 = &l[i];
	ck_assert_ptr_nonnull(fc1);
	ck_assert_int_eq(fc1->in_c, 9216);
	ck_assert_int_eq(fc1->params, 9216 * 128 + 128);
	/* conv1 26x26x32 with 3x3x1 kernels, conv2 24x24x64 with 3x3x32, fc1, fc2 */
	double flops = 2.0 * (26 * 26 * 32 * 9 + 24 * 24 * 64 * 9 * 32 + 9216 * 128 + 128 * 10);
	ck_assert_rel(model_cnn_flops_per_sample(m), flops, 0.0);
	model_free(m);
}
END_TEST

/* Our per-token FLOP count, integrated over a batch, equals Korthikanti Eq. 7 exactly, and
 * Narayanan Eq. 3 once the recomputed forward of the transformer layers is added. */
START_TEST(flops_match_papers)
{
	model *m = load("gpt3-175b");
	const model_tf *t = model_transformer(m);
	double B = 1536, s = (double)t->seq;
	double ours = model_flops_train_per_token(m, t->seq) * B * s;
	ck_assert_rel(ours, model_flops_korthikanti_eq7(m, B, t->seq), 1e-12);
	/* full recomputation adds one forward of the layers (not of the LM head) */
	double h = (double)t->hidden, L = (double)t->layers, V = (double)t->vocab;
	double layers_fwd = B * s * L * (24.0 * h * h + 4.0 * s * h);
	ck_assert_rel(ours + layers_fwd, model_flops_narayanan_eq3(m, B, t->seq), 1e-12);
	/* Eq. 8 adds the attention core's recompute: 72 B L s h^2 (s/6h) */
	ck_assert_rel(model_flops_korthikanti_eq8(m, B, t->seq) - model_flops_korthikanti_eq7(m, B, t->seq),
		      72.0 * B * L * s * h * h * (s / (6.0 * h)), 1e-12);
	/* PaLM's 6N + 12LHQT with N the matmul weights is the same count. */
	ck_assert_rel(model_flops_palm_per_token(m, t->seq), model_flops_train_per_token(m, t->seq), 1e-12);
	(void)V;
	model_free(m);
}
END_TEST

START_TEST(kv_cache_bytes)
{
	model *m = load("llama-3-8b");
	/* 2 (K and V) x 8 kv heads x 128 x 32 layers x 2 bytes = 131072 B per token */
	ck_assert_rel(model_kv_bytes_per_token(m, 2.0), 131072.0, 1e-15);
	ck_assert_rel(model_weight_bytes(m, 2.0), 2.0 * model_params(m), 1e-15);
	model_free(m);
}
END_TEST

static void
expect_error(const char *doc, const char *needle)
{
	model *m = NULL;
	int rc = model_parse(doc, strlen(doc), "bad.json", &m, err, sizeof err);
	ck_assert_msg(rc != 0, "accepted: %s", doc);
	ck_assert_ptr_null(m);
	ck_assert_msg(strstr(err, needle) != NULL, "message \"%s\" lacks \"%s\"", err, needle);
	ck_assert_msg(strncmp(err, "bad.json", 8) == 0, "message \"%s\" does not name the file", err);
}

START_TEST(malformed_models)
{
	expect_error("", "empty");
	expect_error("{\"name\": \"x\", \"layers\": 2", "not valid JSON");
	expect_error("[1,2]", "object");
	expect_error("{\"layers\": 2}", "\"name\"");
	expect_error("{\"name\":\"x\",\"hidden\":64,\"heads\":4,\"ffn\":256,\"vocab\":100,\"seq\":16}", "\"layers\"");
	expect_error("{\"name\":\"x\",\"layers\":0,\"hidden\":64,\"heads\":4,\"ffn\":256,\"vocab\":100,\"seq\":16}",
		     "\"layers\" must be a positive integer");
	expect_error("{\"name\":\"x\",\"layers\":2,\"hidden\":-4,\"heads\":4,\"ffn\":256,\"vocab\":100,\"seq\":16}",
		     "\"hidden\" must be a positive integer");
	expect_error("{\"name\":\"x\",\"layers\":2,\"hidden\":64,\"heads\":\"4\",\"ffn\":256,\"vocab\":100,\"seq\":16}",
		     "\"heads\" must be an integer");
	expect_error("{\"name\":\"x\",\"layers\":2,\"hidden\":64,\"heads\":5,\"ffn\":256,\"vocab\":100,\"seq\":16}",
		     "must divide \"hidden\"");
	expect_error("{\"name\":\"x\",\"layers\":2,\"hidden\":64,\"heads\":4,\"kv_heads\":3,\"ffn\":256,\"vocab\":100,\"seq\":16}",
		     "\"kv_heads\"");
	expect_error("{\"name\":\"x\",\"layers\":2.5,\"hidden\":64,\"heads\":4,\"ffn\":256,\"vocab\":100,\"seq\":16}",
		     "\"layers\" must be an integer");
	expect_error("{\"name\":\"x\",\"layers\":9223372036854775807,\"hidden\":64,\"heads\":4,\"ffn\":256,\"vocab\":100,\"seq\":16}",
		     "\"layers\" must be between");
	expect_error("{\"name\":\"x\",\"layers\":2,\"hidden\":64,\"heads\":4,\"ffn\":256,\"vocab\":100,\"seq\":16,\"mlp\":\"tanh\"}",
		     "\"mlp\" must be one of");
	expect_error("{\"name\":\"x\",\"layers\":2,\"hidden\":64,\"heads\":4,\"vocab\":100,\"seq\":16,"
		     "\"moe\":{\"experts\":8,\"top_k\":9,\"expert_ffn\":64}}",
		     "\"moe.top_k\"");
	expect_error("{\"model_type\":\"t5\",\"d_model\":512}", "not supported");
	expect_error("{\"model_type\":\"llama\",\"hidden_size\":4096}", "\"num_hidden_layers\"");
	expect_error("{\"name\":\"c\",\"kind\":\"cnn\",\"input\":{\"channels\":1,\"height\":4,\"width\":4},"
		     "\"layers\":[{\"type\":\"conv\",\"out\":8,\"kernel\":7,\"pad\":0}]}",
		     "does not fit");
	expect_error("{\"name\":\"x\",\"layers\":4,\"hidden\":64,\"heads\":4,\"vocab\":100,\"seq\":16,"
		     "\"moe\":{\"experts\":8,\"top_k\":2,\"expert_ffn\":64,\"every\":2}}",
		     "\"moe.every\"");
	expect_error("{\"name\":\"c\",\"kind\":\"cnn\",\"input\":{\"channels\":1,\"height\":4,\"width\":4},"
		     "\"layers\":[{\"type\":\"conv\",\"out\":8,\"kernel\":3,\"bias\":\"yes\"}]}",
		     "layers[0]: \"bias\" must be true or false");
	expect_error("{\"name\":\"x\",\"layers\":2,\"hidden\":64,\"heads\":4,\"ffn\":256,\"vocab\":100,\"seq\":16,\"window\":128}",
		     "\"window\" must be an object");
	expect_error("{\"name\":\"x\",\"layers\":2,\"hidden\":64,\"heads\":4,\"ffn\":256,\"vocab\":100,\"seq\":16,"
		     "\"window\":{\"tokens\":0}}",
		     "\"window.tokens\"");
	expect_error("{\"name\":\"x\",\"layers\":2,\"hidden\":64,\"heads\":4,\"ffn\":256,\"vocab\":100,\"seq\":16,"
		     "\"window\":{\"tokens\":8,\"global_every\":-1}}",
		     "\"window.global_every\"");
	expect_error("{\"name\":\"x\",\"layers\":2,\"hidden\":64,\"heads\":4,\"ffn\":256,\"vocab\":100,\"seq\":16,"
		     "\"causal\":false,\"window\":{\"tokens\":8}}",
		     "causal models only");
	char bin[4] = {'{', '\0', 'x', '}'};
	model *m = NULL;
	ck_assert_int_ne(model_parse(bin, sizeof bin, "bin.json", &m, err, sizeof err), 0);
	ck_assert(strstr(err, "binary") != NULL);
	ck_assert_int_eq(model_load("no-such-model", &m, err, sizeof err), PP_ENOTFOUND);
	ck_assert_int_eq(model_load("/nonexistent/config.json", &m, err, sizeof err), PP_ENOTFOUND);
}
END_TEST

/* A Hugging Face config gives the same model as the catalog entry made from it: the same
 * dimensions, parameters (total and active) and FLOPs per token. */
START_TEST(huggingface_matches_catalog)
{
	static const struct {
		const char *fixture, *catalog;
	} cases[] = {
		{"hf/llama-3-8b-config.json", "llama-3-8b"},
		{"hf/llama-3-70b-config.json", "llama-3-70b"},
		{"hf/mistral-7b-config.json", "mistral-7b"},
		{"hf/mixtral-8x7b-config.json", "mixtral-8x7b"},
		{"hf/qwen2-7b-config.json", "qwen2-7b"},
		{"hf/deepseek-v3-config.json", "deepseek-v3"},
		{"hf/gpt2-xl-config.json", "gpt2-xl"},
		{"hf/gpt-neox-20b-config.json", "gpt-neox-20b"},
		{"hf/bert-large-uncased-config.json", "bert-large"},
		{"hf/qwen3-30b-a3b-config.json", "qwen3-30b-a3b"},
		{"hf/qwen3-235b-a22b-config.json", "qwen3-235b-a22b"},
		{"hf/gpt-oss-20b-config.json", "gpt-oss-20b"},
		{"hf/gpt-oss-120b-config.json", "gpt-oss-120b"},
		{"hf/llama-4-scout-config.json", "llama-4-scout"},
		{"hf/llama-4-maverick-config.json", "llama-4-maverick"},
		{"hf/kimi-k2-config.json", "kimi-k2"},
		{"hf/nemotron-3-nano-30b-a3b-config.json", "nemotron-3-nano-30b-a3b"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		model *hf = load(test_data(cases[i].fixture));
		model *cat = load(cases[i].catalog);
		const model_tf *a = model_transformer(hf), *b = model_transformer(cat);
		ck_assert_ptr_nonnull(a);
		ck_assert_msg(a->layers == b->layers && a->hidden == b->hidden && a->heads == b->heads &&
				      a->kv_heads == b->kv_heads && a->head_dim == b->head_dim && a->vocab == b->vocab &&
				      a->experts == b->experts && a->top_k == b->top_k && a->expert_ffn == b->expert_ffn &&
				      a->shared_experts == b->shared_experts && a->dense_layers == b->dense_layers &&
				      a->kv_lora_rank == b->kv_lora_rank && a->q_lora_rank == b->q_lora_rank,
			      "%s: dimensions differ from %s", cases[i].fixture, cases[i].catalog);
		ck_assert_msg(a->mlp == b->mlp && a->norm == b->norm && a->pos == b->pos && a->causal == b->causal &&
				      a->bias == b->bias && a->qkv_bias == b->qkv_bias &&
				      a->tied_embeddings == b->tied_embeddings && a->mlm_head == b->mlm_head &&
				      a->weights == b->weights && a->window == b->window && a->window_global == b->window_global,
			      "%s: structure differs from %s", cases[i].fixture, cases[i].catalog);
		ck_assert_msg(model_params(hf) == model_params(cat), "%s: %.0f params, %s has %.0f", cases[i].fixture,
			      model_params(hf), cases[i].catalog, model_params(cat));
		ck_assert_rel(model_params_active(hf), model_params_active(cat), 0.0);
		ck_assert_rel(model_flops_fwd_per_token(hf, 2048), model_flops_fwd_per_token(cat, 2048), 1e-15);
		model_free(hf);
		model_free(cat);
	}
}
END_TEST

/* Llama-3-8B's config in detail. */
START_TEST(huggingface_llama)
{
	model *hf = load(test_data("hf/llama-3-8b-config.json"));
	const model_tf *t = model_transformer(hf);
	ck_assert_int_eq(t->kv_heads, 8);
	ck_assert_int_eq(t->mlp, MODEL_MLP_SWIGLU);
	ck_assert(!t->tied_embeddings);
	model_free(hf);
}
END_TEST

/* The Mixtral and DeepSeek spellings of MoE, and DeepSeek's MLA, land in the right fields. */
START_TEST(huggingface_moe_fields)
{
	model *m = load(test_data("hf/mixtral-8x7b-config.json"));
	const model_tf *t = model_transformer(m);
	ck_assert_int_eq(t->experts, 8);
	ck_assert_int_eq(t->top_k, 2);
	ck_assert_int_eq(t->expert_ffn, 14336);
	ck_assert_int_eq(t->dense_layers, 0);
	ck_assert_int_eq(t->seq, 8192); /* max_position_embeddings 32768, capped for training */
	model_free(m);
	m = load(test_data("hf/deepseek-v3-config.json"));
	t = model_transformer(m);
	ck_assert_int_eq(t->experts, 256);
	ck_assert_int_eq(t->top_k, 8);
	ck_assert_int_eq(t->expert_ffn, 2048);
	ck_assert_int_eq(t->shared_experts, 1);
	ck_assert_int_eq(t->dense_layers, 3);
	ck_assert_int_eq(t->ffn, 18432);
	ck_assert_int_eq(t->q_lora_rank, 1536);
	ck_assert_int_eq(t->kv_lora_rank, 512);
	ck_assert_int_eq(t->head_dim, 192);
	model_free(m);
	m = load(test_data("hf/bert-large-uncased-config.json"));
	t = model_transformer(m);
	ck_assert(!t->causal && t->mlm_head && t->bias);
	ck_assert_int_eq(t->type_vocab, 2);
	ck_assert_int_eq(t->max_pos, 512);
	model_free(m);
}
END_TEST


/* Hugging Face configs of the 2024-2025 decoders (tests/data/hf/SOURCES.md names each file's
 * origin) against their publishers' figures.  Each publisher counts in its own way, and the row
 * says which: "nonemb" is the count without the token embedding (Gemma's reports give it and
 * the embedding apart), "active_no_emb" an active count that leaves the token embedding out
 * (gpt-oss, Kimi K2: the lookup is no compute), "place" as in published[] above, else 0.5%.
 * Where ours is known to differ the row says why: Gemma 2's post-attention and post-MLP norms
 * (2h a layer, 301,056 of 9.24B) and gpt-oss's expert biases (40M of 116.8B) are not counted;
 * Llama 4's published totals include the vision encoder, which is not modelled, and are round
 * (checked as at most 2% below and 0.5% above).  Qwen's cards cut rather than round (3.353B active is "3.3B", 7.616B is
 * "7.61B"): "cut" rows accept up to a whole place above the figure. */
static const struct {
	const char *fixture;
	double total, active, nonemb, place;
	bool active_no_emb, total_has_vision, cut;
	const char *source;
} hf_published[] = {
	{"gemma-2-9b", 9241705984.0, 0, 8324201984.0, 0, false, false, false, "Gemma 2 report (arXiv 2408.00118) Table 2"},
	{"gemma-2-27b", 27227128320.0, 0, 26047480320.0, 0, false, false, false, "Gemma 2 report (arXiv 2408.00118) Table 2"},
	{"gemma-3-1b-pt", 0, 0, 698e6, 0, false, false, false, "Gemma 3 report (arXiv 2503.19786) Table 1: 698M non-embedding"},
	{"gemma-3-27b-it", 0, 0, 25600e6, 0, false, false, false, "Gemma 3 report (arXiv 2503.19786) Table 1: 25,600M non-embedding"},
	{"phi-3-mini-4k-instruct", 3.8e9, 0, 0, 0.1e9, false, false, false, "Phi-3 report (arXiv 2404.14219): 3.8B"},
	{"phi-4", 14.7e9, 0, 0, 0.1e9, false, false, false, "microsoft/phi-4 on Hugging Face: 14.7B"},
	{"qwen2.5-7b", 7.61e9, 0, 0, 0, false, false, true, "Qwen2.5-7B model card: 7.61B"},
	{"qwen2.5-72b", 72.7e9, 0, 0, 0.1e9, false, false, false, "Qwen2.5-72B model card: 72.7B"},
	{"qwen3-8b", 8.2e9, 0, 0, 0.1e9, false, false, false, "Qwen3-8B model card: 8.2B"},
	{"qwen3-30b-a3b", 30.5e9, 3.3e9, 0, 0.1e9, false, false, true, "Qwen3-30B-A3B model card: 30.5B, 3.3B activated"},
	{"qwen3-235b-a22b", 235e9, 22e9, 0, 1e9, false, false, false, "Qwen3-235B-A22B model card: 235B, 22B activated"},
	{"gpt-oss-20b", 20.91e9, 3.61e9, 0, 0.01e9, true, false, false, "gpt-oss model card (arXiv 2508.10925) Table 1: 20.91B, 3.61B active"},
	{"gpt-oss-120b", 116.83e9, 5.13e9, 0, 0, true, false, false, "gpt-oss model card (arXiv 2508.10925) Table 1: 116.83B, 5.13B active"},
	{"deepseek-v2", 236e9, 21e9, 0, 1e9, false, false, false, "DeepSeek-V2 report (arXiv 2405.04434): 236B, 21B activated"},
	{"llama-4-scout", 109e9, 17e9, 0, 1e9, false, true, false, "Meta, The Llama 4 herd (2025-04-05): 109B total, 17B active"},
	{"llama-4-maverick", 400e9, 17e9, 0, 1e9, false, true, false, "Meta, The Llama 4 herd (2025-04-05): 400B total, 17B active"},
	{"kimi-k2", 1e12, 32e9, 0, 0.1e12, true, false, false, "moonshotai/Kimi-K2-Instruct model card: 1T total, 32B activated"},
};

START_TEST(huggingface_published_counts)
{
	char path[256];
	for (size_t i = 0; i < sizeof hf_published / sizeof hf_published[0]; i++) {
		snprintf(path, sizeof path, "hf/%s-config.json", hf_published[i].fixture);
		model *m = load(test_data(path));
		const char *name = hf_published[i].fixture, *src = hf_published[i].source;
		double place = hf_published[i].place;
		if (hf_published[i].total > 0) {
			double p = model_params(m), want = hf_published[i].total;
			if (hf_published[i].total_has_vision)
				ck_assert_msg(p <= 1.005 * want && p >= 0.98 * want,
					      "%s: %.6g params, published %.6g with the vision encoder (%s)", name, p, want, src);
			else if (hf_published[i].cut)
				ck_assert_msg(p >= want && p < want + (place > 0 ? place : 0.01e9), "%s: %.6g params, published %.6g (%s)",
					      name, p, want, src);
			else
				ck_assert_msg(fabs(p - want) <= published_tol(want, place), "%s: %.6g params, published %.6g (%s)",
					      name, p, want, src);
		}
		if (hf_published[i].active > 0) {
			double a = model_params_active(m), want = hf_published[i].active;
			if (hf_published[i].active_no_emb)
				a -= model_embedding_params(m);
			bool ok = hf_published[i].cut ? a >= want && a < want + place
						      : fabs(a - want) <= published_tol(want, place);
			ck_assert_msg(ok, "%s: %.6g active params, published %.6g (%s)", name, a, want, src);
		}
		if (hf_published[i].nonemb > 0) {
			double n = model_params(m) - model_embedding_params(m), want = hf_published[i].nonemb;
			ck_assert_msg(fabs(n - want) <= published_tol(want, 0), "%s: %.6g non-embedding params, published %.6g (%s)",
				      name, n, want, src);
		}
		model_free(m);
	}
}
END_TEST

/* The architectures' own spellings land in the right fields, and what is not modelled is named. */
static model *
load_hf(const char *name)
{
	char path[256];
	snprintf(path, sizeof path, "hf/%s-config.json", name);
	return load(test_data(path));
}

static void
assert_warns(const model *m, const char *what)
{
	ck_assert_msg(strstr(model_warnings(m), what) != NULL, "%s: no warning \"%s\" in \"%s\"", model_name(m), what,
		      model_warnings(m));
}

START_TEST(huggingface_architectures)
{
	model *m = load_hf("gemma-2-9b");
	const model_tf *t = model_transformer(m);
	ck_assert(t->tied_embeddings); /* Gemma's default */
	ck_assert_int_eq(t->head_dim, 256);
	ck_assert_int_eq(t->kv_heads, 8);
	assert_warns(m, "sliding-window attention (4096 tokens, 21 of 42 layers)");
	/* Gemma 2: the even layers slide (transformers' Gemma2 is_sliding = not layer_idx % 2) */
	ck_assert_int_eq(t->window, 4096);
	ck_assert_int_eq(t->window_global, 2);
	ck_assert_int_eq(model_layer_window(m, 0), 4096);
	ck_assert_int_eq(model_layer_window(m, 1), 0);
	assert_warns(m, "soft-capping");
	assert_warns(m, "gelu_pytorch_tanh");
	model_free(m);

	m = load_hf("gemma-3-27b-it"); /* multimodal: its text_config, with the class's defaults */
	t = model_transformer(m);
	ck_assert_int_eq(t->layers, 62);
	ck_assert_int_eq(t->vocab, 262208);
	assert_warns(m, "vision encoder");
	assert_warns(m, "52 of 62 layers");
	ck_assert_int_eq(t->window_global, 6); /* Gemma 3: five local layers, then a global one */
	ck_assert_int_eq(model_layer_window(m, 4), 1024);
	ck_assert_int_eq(model_layer_window(m, 5), 0);
	model_free(m);

	m = load_hf("qwen3-30b-a3b");
	t = model_transformer(m);
	ck_assert_int_eq(t->experts, 128);
	ck_assert_int_eq(t->top_k, 8);
	ck_assert_int_eq(t->expert_ffn, 768);
	ck_assert_int_eq(t->shared_experts, 0);
	ck_assert_int_eq(t->dense_layers, 0);
	ck_assert(!t->qkv_bias);
	ck_assert_str_eq(model_warnings(m), "");
	model_free(m);

	m = load_hf("gpt-oss-120b");
	t = model_transformer(m);
	ck_assert_int_eq(t->experts, 128);
	ck_assert_int_eq(t->top_k, 4); /* experts_per_token */
	ck_assert_int_eq(t->expert_ffn, 2880);
	ck_assert_int_eq(t->head_dim, 64);
	ck_assert(t->qkv_bias && !t->tied_embeddings);
	assert_warns(m, "128 tokens, 18 of 36 layers"); /* layer_types: sliding, full, sliding, ... */
	ck_assert_int_eq(model_layer_window(m, 0), 128);
	ck_assert_int_eq(model_layer_window(m, 35), 0);
	ck_assert_int_eq(t->weights, MODEL_WEIGHTS_MXFP4); /* quantization_config: mxfp4 */
	model_free(m);

	m = load_hf("llama-4-maverick"); /* MoE every other layer, a shared expert, 16384-wide dense layers */
	t = model_transformer(m);
	ck_assert_int_eq(t->experts, 128);
	ck_assert_int_eq(t->top_k, 1);
	ck_assert_int_eq(t->shared_experts, 1);
	ck_assert_int_eq(t->expert_ffn, 8192);
	ck_assert_int_eq(t->ffn, 16384);
	ck_assert_int_eq(t->moe_every, 2);
	ck_assert_int_eq(t->dense_layers, 1);
	ck_assert(!model_layer_is_moe(m, 0) && model_layer_is_moe(m, 1) && !model_layer_is_moe(m, 2));
	assert_warns(m, "chunked local attention");
	model_free(m);
	m = load_hf("llama-4-scout");
	t = model_transformer(m);
	ck_assert_int_eq(t->experts, 16);
	ck_assert_int_eq(t->moe_every, 1);
	ck_assert_int_eq(t->dense_layers, 0);
	ck_assert(model_layer_is_moe(m, 0));
	model_free(m);

	m = load_hf("kimi-k2");
	t = model_transformer(m);
	ck_assert_int_eq(t->experts, 384);
	ck_assert_int_eq(t->kv_lora_rank, 512);
	ck_assert_int_eq(t->dense_layers, 1);
	model_free(m);

	m = load_hf("phi-3-mini-4k-instruct");
	t = model_transformer(m);
	ck_assert_int_eq(t->kv_heads, 32);
	assert_warns(m, "32 of 32 layers");
	ck_assert_int_eq(t->window_global, 0); /* every layer */
	ck_assert_int_eq(model_layer_window(m, 31), t->window);
	model_free(m);

	/* layer_types in no repeating pattern: read as full attention, and said so */
	static const char odd[] = "{\"model_type\":\"llama\",\"hidden_size\":64,\"num_hidden_layers\":4,"
				  "\"num_attention_heads\":4,\"intermediate_size\":128,\"vocab_size\":100,"
				  "\"max_position_embeddings\":256,\"sliding_window\":64,\"layer_types\":[\"sliding_attention\","
				  "\"full_attention\",\"full_attention\",\"sliding_attention\"]}";
	char e2[512];
	ck_assert_int_eq(model_parse(odd, sizeof odd - 1, "odd.json", &m, e2, sizeof e2), 0);
	ck_assert_int_eq(model_transformer(m)->window, 0);
	assert_warns(m, "in no repeating pattern is modelled as full attention");
	model_free(m);

	/* Catalog files and the older configs carry no warnings. */
	m = load("llama-3-8b");
	ck_assert_str_eq(model_warnings(m), "");
	model_free(m);
}
END_TEST

/* Refused: what the transformer cannot express, with the reason; read with a warning: a
 * decoder of a type it does not know, from the standard keys. */
START_TEST(huggingface_refusals)
{
	expect_error("{\"model_type\":\"jamba\",\"hidden_size\":4096}", "hybrid of attention and Mamba");
	expect_error("{\"model_type\":\"qwen3_next\",\"hidden_size\":2048}", "Gated DeltaNet");
	expect_error("{\"model_type\":\"mystery\",\"hidden_size\":64,\"num_hidden_layers\":2,\"num_attention_heads\":4,"
		     "\"intermediate_size\":256,\"vocab_size\":100,\"max_position_embeddings\":16,"
		     "\"layer_types\":[\"full_attention\",\"linear_attention\"]}",
		     "linear-attention");
	expect_error("{\"model_type\":\"qwen3_moe\",\"hidden_size\":64,\"num_hidden_layers\":4,\"num_attention_heads\":4,"
		     "\"intermediate_size\":256,\"vocab_size\":100,\"max_position_embeddings\":16,\"num_experts\":8,"
		     "\"num_experts_per_tok\":2,\"moe_intermediate_size\":32,\"mlp_only_layers\":[1,3]}",
		     "\"mlp_only_layers\" must be the leading layers");
	expect_error("{\"model_type\":\"llama\",\"hidden_size\":64,\"num_hidden_layers\":2,\"num_attention_heads\":4,"
		     "\"intermediate_size\":256,\"vocab_size\":100,\"max_position_embeddings\":16,\"hidden_act\":\"tanh\"}",
		     "\"hidden_act\" \"tanh\" is not supported");
	/* a sliding window that is not a whole number of tokens from 0 (0 or null: none) */
#define SW(v) "{\"model_type\":\"mistral\",\"hidden_size\":64,\"num_hidden_layers\":2,\"num_attention_heads\":4," \
	      "\"intermediate_size\":256,\"vocab_size\":100,\"max_position_embeddings\":16,\"sliding_window\":" v "}"
	expect_error(SW("-1"), "\"sliding_window\" must be between 0 and 1073741824, got -1");
	expect_error(SW("\"4096\""), "\"sliding_window\" must be an integer, got a string");
	expect_error(SW("40.5"), "\"sliding_window\" must be an integer, got 40.5");
#undef SW
	static const char mystery[] = "{\"model_type\":\"mystery\",\"hidden_size\":64,\"num_hidden_layers\":2,"
				      "\"num_attention_heads\":4,\"intermediate_size\":256,\"vocab_size\":100,"
				      "\"max_position_embeddings\":16,\"mlp_only_layers\":[0]}";
	model *m = NULL;
	ck_assert_int_eq(model_parse(mystery, strlen(mystery), "mystery.json", &m, err, sizeof err), 0);
	ck_assert(strstr(model_warnings(m), "model_type \"mystery\" is not one paraplan knows") != NULL);
	ck_assert_int_eq(model_transformer(m)->ffn, 256);
	model_free(m);
	/* a config's strings reach the warnings in their printable form (pp.h): no control bytes */
	static const char esc[] = "{\"model_type\":\"my\\u001b[2Jstery\",\"hidden_size\":64,\"num_hidden_layers\":2,"
				  "\"num_attention_heads\":4,\"intermediate_size\":256,\"vocab_size\":100,"
				  "\"max_position_embeddings\":16}";
	ck_assert_int_eq(model_parse(esc, strlen(esc), "esc.json", &m, err, sizeof err), 0);
	ck_assert(strchr(model_warnings(m), '\x1b') == NULL && strstr(model_warnings(m), "my\\x1b[2Jstery") != NULL);
	model_free(m);
	/* mlp_only_layers [0, 1] of a MoE: two leading dense layers */
	static const char lead[] = "{\"model_type\":\"qwen3_moe\",\"hidden_size\":64,\"num_hidden_layers\":4,"
				   "\"num_attention_heads\":4,\"intermediate_size\":256,\"vocab_size\":100,"
				   "\"max_position_embeddings\":16,\"num_experts\":8,\"num_experts_per_tok\":2,"
				   "\"moe_intermediate_size\":32,\"mlp_only_layers\":[0,1]}";
	ck_assert_int_eq(model_parse(lead, strlen(lead), "lead.json", &m, err, sizeof err), 0);
	ck_assert_int_eq(model_transformer(m)->dense_layers, 2);
	ck_assert(!model_layer_is_moe(m, 1) && model_layer_is_moe(m, 2));
	model_free(m);
}
END_TEST

/* Issue 16, item 8: a Hugging Face config is held to what our own format refuses, and its text
 * to the rules of every JSON reader.  Each fixture with one key changed (or text added): */
static int
load_edited_model(const char *fixture, const char *key, const char *json_value, const char *extra, model **mp, char *e,
		  size_t n)
{
	char *text;
	size_t len;
	ck_assert_int_eq(pp_read_file(test_data(fixture), 1 << 20, &text, &len, e, n), 0);
	cJSON *d = cJSON_Parse(text);
	free(text);
	ck_assert_ptr_nonnull(d);
	if (key != NULL) {
		cJSON_DeleteItemFromObject(d, key);
		cJSON_AddItemToObject(d, key, cJSON_Parse(json_value));
	}
	char *out = cJSON_Print(d);
	cJSON_Delete(d);
	pp_str s = {0};
	pp_str_add(&s, out);
	if (extra != NULL) {
		if (!strncmp(extra, "BOM", 3)) { /* a byte order mark first */
			pp_str b = {0};
			pp_str_add(&b, "\xef\xbb\xbf");
			pp_str_add(&b, s.buf);
			pp_str_free(&s);
			s = b;
		} else if (!strncmp(extra, "DUP:", 4)) { /* the last member given twice */
			char *close = strrchr(s.buf, '}');
			*close = '\0';
			pp_str t = {0};
			pp_str_addf(&t, "%s, %s}", s.buf, extra + 4);
			pp_str_free(&s);
			s = t;
		} else {
			pp_str_add(&s, extra);
		}
	}
	free(out);
	model *m = NULL;
	int rc = model_parse(s.buf, s.len, "config.json", &m, e, n);
	if (mp != NULL)
		*mp = m;
	else
		model_free(m);
	pp_str_free(&s);
	return rc;
}

static int
load_edited(const char *fixture, const char *key, const char *json_value, const char *extra, char *e, size_t n)
{
	return load_edited_model(fixture, key, json_value, extra, NULL, e, n);
}

/* The format a model's weights are published in: a Hugging Face config's quantization_config
 * (DeepSeek-V3's block FP8, gpt-oss's MXFP4, 4-bit AWQ), our "weights" key; what it does not
 * know is 16-bit with a warning, and a bad "weights" is refused naming the key. */
START_TEST(released_weights)
{
	model *m = load(test_data("hf/deepseek-v3-config.json"));
	ck_assert_int_eq(model_transformer(m)->weights, MODEL_WEIGHTS_FP8);
	model_free(m);
	m = load(test_data("hf/gpt-oss-20b-config.json"));
	ck_assert_int_eq(model_transformer(m)->weights, MODEL_WEIGHTS_MXFP4);
	model_free(m);
	m = load(test_data("hf/llama-3-8b-config.json"));
	ck_assert_int_eq(model_transformer(m)->weights, MODEL_WEIGHTS_16BIT);
	model_free(m);
	m = load("gpt-oss-120b");
	ck_assert_str_eq(model_weights_name(model_transformer(m)->weights), "mxfp4");
	model_free(m);
	char e[512];
	ck_assert_int_eq(load_edited_model("hf/llama-3-8b-config.json", "quantization_config",
					   "{\"quant_method\": \"awq\", \"bits\": 4, \"group_size\": 128}", NULL, &m, e, sizeof e),
			 0);
	ck_assert_int_eq(model_transformer(m)->weights, MODEL_WEIGHTS_INT4);
	ck_assert_str_eq(model_warnings(m), "");
	model_free(m);
	/* 8-bit GPTQ and bitsandbytes: not modelled, said so */
	ck_assert_int_eq(load_edited_model("hf/llama-3-8b-config.json", "quantization_config",
					   "{\"quant_method\": \"gptq\", \"bits\": 8}", NULL, &m, e, sizeof e),
			 0);
	ck_assert_int_eq(model_transformer(m)->weights, MODEL_WEIGHTS_16BIT);
	assert_warns(m, "quantized (gptq): served as 16-bit weights");
	model_free(m);
	ck_assert_int_eq(load_edited_model("hf/llama-3-8b-config.json", "quantization_config",
					   "{\"quant_method\": \"bitsandbytes\"}", NULL, &m, e, sizeof e),
			 0);
	assert_warns(m, "quantized (bitsandbytes)");
	model_free(m);
	static const char bad[] = "{\"name\": \"x\", \"kind\": \"transformer\", \"layers\": 2, \"hidden\": 64, "
				  "\"heads\": 4, \"vocab\": 100, \"seq\": 128, \"weights\": \"fp16\"}";
	ck_assert_int_eq(model_parse(bad, sizeof bad - 1, "x.json", &m, e, sizeof e), PP_EINPUT);
	ck_assert_msg(strstr(e, "x.json: \"weights\" must be one of bf16, fp8, mxfp4, int4, got \"fp16\"") != NULL, "%s", e);
}
END_TEST

START_TEST(huggingface_strict)
{
	static const struct {
		const char *fixture, *key, *value, *extra, *want;
	} c[] = {
		{"hf/mixtral-8x7b-config.json", "num_local_experts", "0", NULL, "\"num_local_experts\" must be a positive integer, got 0"},
		{"hf/llama-3-8b-config.json", "num_key_value_heads", "0", NULL, "\"num_key_value_heads\" must be a positive integer, got 0"},
		{"hf/deepseek-v3-config.json", "kv_lora_rank", "0", NULL, "\"kv_lora_rank\" must be a positive integer, got 0"},
		{"hf/deepseek-v3-config.json", "moe_layer_freq", "0", NULL, "\"moe_layer_freq\" must be a positive integer, got 0"},
		{"hf/deepseek-v3-config.json", "num_experts", "64", NULL,
		 "\"n_routed_experts\" (256) and \"num_experts\" (64) give different expert counts"},
		/* 1000 of width 14336 (Mixtral's experts): truncated to no shared expert at all */
		{"hf/mixtral-8x7b-config.json", "shared_expert_intermediate_size", "1000", NULL,
		 "\"shared_expert_intermediate_size\" (1000) must be a whole number of experts' width (14336)"},
		{"hf/llama-3-8b-config.json", NULL, NULL, "\n{\"more\": 1}", "config.json:26:1: text after the JSON document"},
		{"hf/llama-3-8b-config.json", NULL, NULL, "DUP:\"vocab_size\": 1", "\"vocab_size\" is given twice in the object at the top level"},
	};
	char e[512];
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		ck_assert_msg(load_edited(c[i].fixture, c[i].key, c[i].value, c[i].extra, e, sizeof e) == PP_EINPUT, "case %zu loaded",
			      i);
		ck_assert_msg(strstr(e, c[i].want) != NULL, "case %zu: %s", i, e);
	}
	/* what stays fine: a byte order mark, the expert count under two names that agree, and a
	 * shared width of two experts */
	ck_assert_msg(load_edited("hf/llama-3-8b-config.json", NULL, NULL, "BOM", e, sizeof e) == 0, "%s", e);
	ck_assert_msg(load_edited("hf/deepseek-v3-config.json", "num_experts", "256", NULL, e, sizeof e) == 0, "%s", e);
	ck_assert_msg(load_edited("hf/mixtral-8x7b-config.json", "shared_expert_intermediate_size", "28672", NULL, e,
				  sizeof e) == 0, "%s", e);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("models");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, published_parameter_counts);
	tcase_add_test(tc, catalog_entries_load);
	tcase_add_test(tc, narayanan_formula);
	tcase_add_test(tc, mpt_benchmark_counts);
	tcase_add_test(tc, gpt3_hand_count);
	tcase_add_test(tc, gpt2_xl_exact);
	tcase_add_test(tc, bert_large_exact);
	tcase_add_test(tc, llama3_405b_hand_count);
	tcase_add_test(tc, deepseek_v3_counts);
	tcase_add_test(tc, released_weights);
	tcase_add_test(tc, nemotron_h_counts);
	tcase_add_test(tc, nemotron_3_nano_counts);
	tcase_add_test(tc, huggingface_nemotron_h_refusals);
	tcase_add_test(tc, hybrid_pattern_checked);
	tcase_add_test(tc, cnn_exact_counts);
	tcase_add_test(tc, resnet50_flops_and_shapes);
	tcase_add_test(tc, mnist_cnn_shapes);
	tcase_add_test(tc, flops_match_papers);
	tcase_add_test(tc, kv_cache_bytes);
	tcase_add_test(tc, malformed_models);
	tcase_add_test(tc, huggingface_matches_catalog);
	tcase_add_test(tc, huggingface_llama);
	tcase_add_test(tc, huggingface_moe_fields);
	tcase_add_test(tc, huggingface_published_counts);
	tcase_add_test(tc, huggingface_architectures);
	tcase_add_test(tc, huggingface_refusals);
	tcase_add_test(tc, huggingface_strict);
	suite_add_tcase(s, tc);
	return test_run(s);
}
