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

/* Published parameter counts, within 0.5%. */
static const struct {
	const char *name;
	double total, active;
	const char *source;
} published[] = {
	{"llama-3-8b", 8.03e9, 0, "Meta Llama 3 model card: 8.03B"},
	{"gpt3-175b", 174.6e9, 0, "Narayanan et al. 2021 Table 2: 174.6B"},
};

START_TEST(published_parameter_counts)
{
	for (size_t i = 0; i < sizeof published / sizeof published[0]; i++) {
		model *m = load(published[i].name);
		double p = model_params(m);
		ck_assert_msg(fabs(p - published[i].total) <= 0.005 * published[i].total, "%s: %.4g params, published %.4g (%s)",
			      published[i].name, p, published[i].total, published[i].source);
		if (published[i].active > 0) {
			double a = model_params_active(m);
			ck_assert_msg(fabs(a - published[i].active) <= 0.005 * published[i].active,
				      "%s: %.4g active params, published %.4g", published[i].name, a, published[i].active);
		}
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
	char bin[4] = {'{', '\0', 'x', '}'};
	model *m = NULL;
	ck_assert_int_ne(model_parse(bin, sizeof bin, "bin.json", &m, err, sizeof err), 0);
	ck_assert(strstr(err, "binary") != NULL);
	ck_assert_int_eq(model_load("no-such-model", &m, err, sizeof err), PP_ENOTFOUND);
	ck_assert_int_eq(model_load("/nonexistent/config.json", &m, err, sizeof err), PP_ENOTFOUND);
}
END_TEST

/* A Hugging Face config of Llama-3-8B gives the same model as the catalog entry. */
START_TEST(huggingface_llama)
{
	model *hf = load(test_data("hf/llama-3-8b-config.json"));
	model *cat = load("llama-3-8b");
	ck_assert_rel(model_params(hf), model_params(cat), 1e-12);
	const model_tf *t = model_transformer(hf);
	ck_assert_int_eq(t->kv_heads, 8);
	ck_assert_int_eq(t->mlp, MODEL_MLP_SWIGLU);
	ck_assert(!t->tied_embeddings);
	model_free(hf);
	model_free(cat);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("models");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, published_parameter_counts);
	tcase_add_test(tc, gpt3_hand_count);
	tcase_add_test(tc, flops_match_papers);
	tcase_add_test(tc, kv_cache_bytes);
	tcase_add_test(tc, malformed_models);
	tcase_add_test(tc, huggingface_llama);
	suite_add_tcase(s, tc);
	return test_run(s);
}
