/*
 * fuzz_validate_training.c -- validate/train.c reading a training validation CSV (the columns of
 * validate/data/published-training.csv): every row is turned into a model and a configuration and
 * checked against its system, nothing is simulated.  The report that comes back is finite.
 */
#include "config.h"
#include "tests/fuzz/fuzz.h"

#include "validate/val.h"

#include <cJSON.h>

int
fuzz_validate_training(const uint8_t *data, size_t size)
{
	char err[1024] = "";
	val_src src = {(const char *)data, size, "fuzz.csv"};
	val_set *s = NULL;
	if (val_train_load(fuzz_db(), &src, 1, NULL, false, &s, err, sizeof err) != 0) {
		FUZZ_CHECK(s == NULL && err[0] != '\0');
		return 0;
	}
	FUZZ_CHECK(s != NULL);
	cJSON *doc = val_train_report(s);
	FUZZ_CHECK(doc != NULL);
	fuzz_check_json_finite(doc);
	cJSON_Delete(doc);
	val_set_free(s);
	return 0;
}
