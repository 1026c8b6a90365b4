/*
 * fuzzutil.c -- checks the fuzz targets share: finite JSON, a loaded model's invariants, the
 * hardware database.
 */
#include "config.h"
#include "tests/fuzz/fuzz.h"

#include "hardware/hw.h"
#include "models/model.h"

#include <cJSON.h>
#include <math.h>
#include <string.h>

void
fuzz_check_json_finite(const cJSON *doc)
{
	const cJSON *x;
	if (cJSON_IsNumber(doc))
		FUZZ_CHECK(isfinite(doc->valuedouble));
	cJSON_ArrayForEach(x, doc)
		fuzz_check_json_finite(x);
}

void
fuzz_check_model(const model *m)
{
	double p = model_params(m);
	FUZZ_CHECK(isfinite(p) && p > 0);
	if (model_get_kind(m) == MODEL_CNN) {
		const model_layer *l;
		size_t n = model_layers(m, &l);
		FUZZ_CHECK(n >= 1);
		for (size_t i = 0; i < n; i++) {
			FUZZ_CHECK(l[i].params >= 0);
			FUZZ_CHECK(isfinite(l[i].fwd_flops) && l[i].fwd_flops >= 0);
			FUZZ_CHECK(l[i].out_c >= 1 && l[i].out_h >= 1 && l[i].out_w >= 1);
		}
		FUZZ_CHECK(isfinite(model_cnn_flops_per_sample(m)));
	} else {
		const model_tf *t = model_transformer(m);
		FUZZ_CHECK(t != NULL);
		FUZZ_CHECK(t->layers >= 1 && t->hidden >= 1 && t->heads >= 1 && t->head_dim >= 1 && t->vocab >= 1);
		FUZZ_CHECK(t->kv_heads >= 1 && t->heads % t->kv_heads == 0);
		FUZZ_CHECK(t->seq >= 1);
		if (t->experts > 0)
			FUZZ_CHECK(t->top_k >= 1 && t->top_k <= t->experts && t->expert_ffn >= 1 && t->moe_every >= 1);
		double act = model_params_active(m);
		FUZZ_CHECK(isfinite(act) && act > 0 && act <= p * (1 + 1e-12));
		double f = model_flops_fwd_per_token(m, t->seq);
		FUZZ_CHECK(isfinite(f) && f > 0);
		FUZZ_CHECK(isfinite(model_kv_bytes_per_token(m, 2.0)) && model_kv_bytes_per_token(m, 2.0) > 0);
		FUZZ_CHECK(isfinite(model_flops_palm_per_token(m, t->seq)));
		FUZZ_CHECK(isfinite(model_flops_narayanan_eq3(m, 1, t->seq)));
		for (int64_t l = 0; l < t->layers && l < 4; l++)
			FUZZ_CHECK(isfinite(model_layer_params(m, l)) && model_layer_params(m, l) > 0);
	}
	cJSON *doc = model_to_json(m);
	FUZZ_CHECK(doc != NULL);
	fuzz_check_json_finite(doc);
	cJSON_Delete(doc);
}

hw_db *
fuzz_db(void)
{
	static hw_db *db;
	if (db == NULL) {
		char err[512];
		if (hw_open(":memory:", 0, &db, err, sizeof err) != 0) {
			fprintf(stderr, "fuzz: cannot open the hardware database: %s\n", err);
			abort();
		}
	}
	return db;
}

char *
fuzz_text(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	FUZZ_CHECK(text != NULL);
	memcpy(text, data, size);
	text[size] = '\0';
	return text;
}
