/*
 * fuzz_nccl_tests.c -- calibrate/nccltests.c, the importer of nccl-tests logs made elsewhere
 * ('paraplan import nccl-tests').  Seeds: the real logs of tests/data/nccl-tests-samples.txt.
 * What the parser accepts has blocks with positive rank and node counts and rows whose sizes,
 * times and bandwidths are positive and finite, as the database's CHECK constraints want them.
 */
#include "config.h"
#include "tests/fuzz/fuzz.h"

#include "calibrate/cal.h"

#include <cJSON.h>
#include <math.h>
#include <string.h>

int
fuzz_nccl_tests(const uint8_t *data, size_t size)
{
	/* cal_nccl_parse reads a NUL-terminated text, as cal_nccl_read hands it */
	char *text = fuzz_text(data, size);
	cal_nccl *log = cal_nccl_new();
	FUZZ_CHECK(log != NULL);
	cal_nccl_opts o = {.op = -1, .node_size = 8};
	char err[512] = "";
	if (cal_nccl_parse(log, "nccl-tests.log", text, &o, err, sizeof err) != 0) {
		FUZZ_CHECK(err[0] != '\0');
		FUZZ_CHECK(cal_nccl_nblocks(log) == 0);
	} else {
		for (size_t i = 0; i < cal_nccl_nblocks(log); i++) {
			cal_nccl_block b;
			cal_nccl_block_get(log, i, &b);
			FUZZ_CHECK(b.ranks >= 1 && b.nodes >= 1 && b.nodes <= b.ranks && b.line >= 1);
			for (size_t j = 0; j < b.nrows; j++) {
				hw_coll_row r;
				int line = 0;
				cal_nccl_row(log, i, j, &r, &line);
				FUZZ_CHECK(line >= b.line);
				FUZZ_CHECK(r.bytes > 0 && r.ranks == b.ranks && r.nodes == b.nodes);
				FUZZ_CHECK(isfinite(r.time_s) && r.time_s > 0);
				FUZZ_CHECK(isfinite(r.algbw_gbps) && r.algbw_gbps >= 0);
				FUZZ_CHECK(isfinite(r.busbw_gbps) && r.busbw_gbps >= 0);
			}
		}
		cJSON *sum = cal_nccl_summary(log);
		FUZZ_CHECK(sum != NULL);
		fuzz_check_json_finite(sum);
		cJSON_Delete(sum);
	}
	cal_nccl_free(log);
	free(text);
	return 0;
}
