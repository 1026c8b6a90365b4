/*
 * fuzz_trace.c -- sim/serve.c's request traces (CSV with a header, or JSONL): an accepted trace
 * has at least one request, arrivals from 0 to 1e9 s that do not decrease, and
 * prompt and output lengths from 1 to 10^7 tokens.
 */
#include "config.h"
#include "tests/fuzz/fuzz.h"

#include "sim/sim.h"

#include <math.h>

int
fuzz_trace(const uint8_t *data, size_t size)
{
	sim_request *req = NULL;
	size_t n = 0;
	char err[512] = "";
	if (sim_trace_parse((const char *)data, size, "trace", &req, &n, err, sizeof err) != 0) {
		FUZZ_CHECK(req == NULL && n == 0 && err[0] != '\0');
		return 0;
	}
	FUZZ_CHECK(n >= 1);
	for (size_t i = 0; i < n; i++) {
		FUZZ_CHECK(isfinite(req[i].arrival_s) && req[i].arrival_s >= 0 && req[i].arrival_s <= 1e9);
		FUZZ_CHECK(i == 0 || req[i].arrival_s >= req[i - 1].arrival_s);
		FUZZ_CHECK(req[i].prompt >= 1 && req[i].prompt <= 10000000);
		FUZZ_CHECK(req[i].output >= 1 && req[i].output <= 10000000);
	}
	free(req);
	return 0;
}
