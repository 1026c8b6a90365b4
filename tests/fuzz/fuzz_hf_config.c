/*
 * fuzz_hf_config.c -- models/: Hugging Face config.json (llama, mistral, mixtral, qwen2, gpt2,
 * gpt_neox, bert, deepseek).  The same entry point as paraplan's own JSON (model_parse tells
 * them apart by "model_type"); seeded with real configs so the mutations stay on the Hugging
 * Face field names.
 */
#include "config.h"
#include "tests/fuzz/fuzz.h"

#include "models/model.h"

#include <string.h>

int
fuzz_hf_config(const uint8_t *data, size_t size)
{
	model *m = NULL;
	char err[512] = "";
	if (model_parse((const char *)data, size, "config.json", &m, err, sizeof err) != 0) {
		FUZZ_CHECK(m == NULL && err[0] != '\0');
		/* every message names the file it is about */
		FUZZ_CHECK(strstr(err, "config.json") != NULL || strstr(err, "out of memory") != NULL);
		return 0;
	}
	fuzz_check_model(m);
	model_free(m);
	return 0;
}
