/*
 * fuzz_model.c -- models/: paraplan's own model JSON (transformers, mixtures of experts, MLA,
 * CNN layer lists).  Seeds: the catalog.  What the loader accepts must satisfy model.h's
 * invariants and give finite, positive parameter and FLOP counts.
 */
#include "config.h"
#include "tests/fuzz/fuzz.h"

#include "models/model.h"

int
fuzz_model(const uint8_t *data, size_t size)
{
	model *m = NULL;
	char err[512] = "";
	if (model_parse((const char *)data, size, "fuzz.json", &m, err, sizeof err) != 0) {
		FUZZ_CHECK(m == NULL && err[0] != '\0');
		return 0;
	}
	fuzz_check_model(m);
	model_free(m);
	return 0;
}
