/*
 * check_common.c -- the shared helpers: number parsing with suffixes, growable strings,
 * atomic file writes, CSV read and written.
 */
#include "config.h"
#include "common/csv.h"
#include "common/pp.h"
#include "tests/testutil.h"

#include <sys/stat.h>

START_TEST(parse_numbers)
{
	int64_t i;
	double d;
	ck_assert_int_eq(pp_parse_i64(" 42 ", &i), 0);
	ck_assert_int_eq(i, 42);
	ck_assert_int_eq(pp_parse_i64("-7", &i), 0);
	ck_assert_int_eq(i, -7);
	ck_assert_int_ne(pp_parse_i64("4x", &i), 0);
	ck_assert_int_ne(pp_parse_i64("", &i), 0);
	ck_assert_int_eq(pp_parse_i64("99999999999999999999", &i), PP_ERANGE);
	ck_assert_int_eq(pp_parse_double("1e3", &d), 0);
	ck_assert_rel(d, 1000.0, 1e-12);
	ck_assert_int_ne(pp_parse_double("nan", &d), 0);
	ck_assert_int_ne(pp_parse_double("inf", &d), 0);
	ck_assert_int_eq(pp_parse_count("15T", &d), 0);
	ck_assert_rel(d, 15e12, 1e-12);
	ck_assert_int_eq(pp_parse_count("4Gi", &d), 0);
	ck_assert_rel(d, 4.0 * 1073741824.0, 1e-12);
	ck_assert_int_eq(pp_parse_count("2.5M", &d), 0);
	ck_assert_rel(d, 2.5e6, 1e-12);
	ck_assert_int_ne(pp_parse_count("3Q", &d), 0);
	ck_assert_int_ne(pp_parse_count("1e400", &d), 0);
}
END_TEST

START_TEST(strings_and_overflow)
{
	pp_str s = {0};
	pp_str_add(&s, "a");
	pp_str_addf(&s, "%d-%s", 12, "b");
	ck_assert_str_eq(s.buf, "a12-b");
	char *d = pp_str_detach(&s);
	ck_assert_str_eq(d, "a12-b");
	free(d);
	ck_assert_ptr_null(s.buf);
	int64_t r;
	ck_assert(pp_mul64((int64_t)1 << 40, 1 << 20, &r));
	ck_assert(!pp_mul64((int64_t)1 << 40, (int64_t)1 << 30, &r));
	ck_assert(!pp_add64(INT64_MAX, 1, &r));
	char small[4];
	ck_assert(!pp_strlcpy(small, "abcdef", sizeof small));
	ck_assert_str_eq(small, "abc");
}
END_TEST

START_TEST(atomic_write)
{
	const char *dir = test_tmpdir("common");
	ck_assert_ptr_nonnull(dir);
	char path[1100], err[256];
	snprintf(path, sizeof path, "%s/out.txt", dir);
	ck_assert_int_eq(pp_write_file_atomic(path, "hello\n", 6, err, sizeof err), 0);
	char *text;
	size_t len;
	ck_assert_int_eq(pp_read_file(path, 1024, &text, &len, err, sizeof err), 0);
	ck_assert_uint_eq(len, 6);
	ck_assert_str_eq(text, "hello\n");
	free(text);
	/* A file over the size limit is refused, not truncated. */
	ck_assert_int_eq(pp_read_file(path, 3, &text, &len, err, sizeof err), PP_EINPUT);
	/* Writing into a missing directory fails and leaves nothing behind. */
	snprintf(path, sizeof path, "%s/missing/out.txt", dir);
	ck_assert_int_eq(pp_write_file_atomic(path, "x", 1, err, sizeof err), PP_EIO);
	ck_assert(strstr(err, "missing/out.txt") != NULL);
	ck_assert_int_eq(pp_read_file(dir, 1024, &text, &len, err, sizeof err), PP_EINPUT);
	test_rmdir(dir);
}
END_TEST

/* What the writer writes, the reader reads back field for field; only fields that need
 * quotes get them (RFC 4180 section 2). */
START_TEST(csv_round_trip)
{
	const char *rows[3][4] = {
		{"system", "note", "usd", "empty"},
		{"dgx-h100", "says \"hi\", twice", "4.76", ""},
		{" lead", "two\nlines\r\nhere", "-0.5", "plain"},
	};
	pp_str s = {0};
	for (int r = 0; r < 3; r++)
		pp_csv_row(&s, rows[r], 4);
	ck_assert(!s.oom);
	const char *want = "system,note,usd,empty\r\ndgx-h100,\"says \"\"hi\"\", twice\",4.76,\r\n\" lead\",";
	ck_assert_msg(strncmp(s.buf, want, strlen(want)) == 0, "wrote %s", s.buf);
	char err[256];
	pp_csv t;
	ck_assert_int_eq(pp_csv_parse(s.buf, s.len, "mem", &t, err, sizeof err), 0);
	ck_assert_uint_eq(t.nrows, 3);
	for (int r = 0; r < 3; r++) {
		ck_assert_uint_eq(t.nfields[r], 4);
		for (int f = 0; f < 4; f++)
			ck_assert_str_eq(pp_csv_get(&t, (size_t)r, f), rows[r][f]);
	}
	ck_assert_int_eq(pp_csv_column(&t, "usd"), 2);
	pp_csv_free(&t);
	pp_str_free(&s);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("common");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, parse_numbers);
	tcase_add_test(tc, strings_and_overflow);
	tcase_add_test(tc, atomic_write);
	tcase_add_test(tc, csv_round_trip);
	suite_add_tcase(s, tc);
	return test_run(s);
}
