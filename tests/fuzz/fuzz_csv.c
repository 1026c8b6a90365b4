/*
 * fuzz_csv.c -- common/csv.c, the RFC 4180 reader under the validation data and the request
 * traces: whatever it accepts has at least one field per row, rows in line order, fields that
 * lie inside the decoded buffer and never more decoded text than input.
 */
#include "config.h"
#include "tests/fuzz/fuzz.h"

#include "common/csv.h"

#include <string.h>

int
fuzz_csv(const uint8_t *data, size_t size)
{
	pp_csv t;
	char err[256] = "";
	if (pp_csv_parse((const char *)data, size, "fuzz.csv", &t, err, sizeof err) != 0) {
		FUZZ_CHECK(err[0] != '\0');
		return 0;
	}
	size_t newlines = 0;
	for (size_t i = 0; i < size; i++)
		newlines += data[i] == '\n';
	size_t prev = 1, decoded = 0;
	for (size_t r = 0; r < t.nrows; r++) {
		FUZZ_CHECK(t.nfields[r] >= 1);
		FUZZ_CHECK(t.lines[r] >= prev && t.lines[r] <= newlines + 1);
		prev = t.lines[r];
		for (size_t f = 0; f < t.nfields[r]; f++) {
			const char *v = pp_csv_get(&t, r, (int)f);
			FUZZ_CHECK(v >= t.buf && v <= t.buf + size + 1);
			decoded += strlen(v) + 1;
		}
		FUZZ_CHECK(pp_csv_get(&t, r, (int)t.nfields[r])[0] == '\0');
		FUZZ_CHECK(pp_csv_get(&t, r, -1)[0] == '\0');
	}
	FUZZ_CHECK(decoded <= size + 1);
	if (t.nrows > 0) {
		int c = pp_csv_column(&t, t.rows[0][t.nfields[0] - 1]);
		FUZZ_CHECK(c >= 0 && (size_t)c < t.nfields[0]);
	}
	FUZZ_CHECK(pp_csv_get(&t, t.nrows, 0)[0] == '\0');
	pp_csv_free(&t);
	return 0;
}
