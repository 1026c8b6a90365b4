/*
 * fuzz_validate_serving.c -- validate/serve.c reading a serving validation CSV (the columns of
 * validate/data/published-serving.csv): every row's deployment is built and checked
 * (sim_serve_check), nothing is simulated.  The report that comes back is finite.
 */
#include "config.h"
#include "tests/fuzz/fuzz.h"

#include "validate/val.h"

#include <cJSON.h>

int
fuzz_validate_serving(const uint8_t *data, size_t size)
{
	cJSON *doc = NULL;
	char err[1024] = "";
	val_src src = {(const char *)data, size, "fuzz.csv"};
	if (val_serving_rows(fuzz_db(), &src, 1, &doc, err, sizeof err) != 0) {
		FUZZ_CHECK(doc == NULL && err[0] != '\0');
		return 0;
	}
	FUZZ_CHECK(doc != NULL);
	fuzz_check_json_finite(doc);
	cJSON_Delete(doc);
	return 0;
}
