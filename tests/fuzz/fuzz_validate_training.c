/*
 * fuzz_validate_training.c -- sim/validate.c reading a training validation CSV (the columns of
 * sim/data/published-training.csv): every row is turned into a model and a configuration and
 * checked against its system, nothing is simulated.  The report that comes back is finite.
 */
#include "config.h"
#include "tests/fuzz/fuzz.h"

#include "sim/train_int.h"

#include <cJSON.h>

int
fuzz_validate_training(const uint8_t *data, size_t size)
{
	cJSON *doc = NULL;
	char err[1024] = "";
	if (sim_validate_training_rows(fuzz_db(), (const char *)data, size, "fuzz.csv", NULL, &doc, err, sizeof err) != 0) {
		FUZZ_CHECK(doc == NULL && err[0] != '\0');
		return 0;
	}
	FUZZ_CHECK(doc != NULL);
	fuzz_check_json_finite(doc);
	cJSON_Delete(doc);
	return 0;
}
