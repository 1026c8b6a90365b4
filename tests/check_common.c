/*
 * check_common.c -- the shared helpers: number parsing with suffixes, growable strings,
 * atomic file writes, CSV read and written.
 */
#include "config.h"
#include "common/csv.h"
#include "common/pp.h"
#include "tests/testutil.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>

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

/* Reads a whole small file into buf (NUL-terminated); returns its length or -1. */
static long
slurp(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return -1;
	size_t got = fread(buf, 1, n - 1, f);
	fclose(f);
	buf[got] = '\0';
	return (long)got;
}

/* Counts the entries of dir whose name starts with prefix (a temporary file left behind). */
static int
count_prefixed(const char *dir, const char *prefix)
{
	char cmd[1200];
	snprintf(cmd, sizeof cmd, "ls -A '%s' | grep -c '^%s' > '%s/.count'", dir, prefix, dir);
	if (system(cmd) < 0)
		return -1;
	char path[1100], buf[32];
	snprintf(path, sizeof path, "%s/.count", dir);
	long n = slurp(path, buf, sizeof buf);
	unlink(path);
	return n < 0 ? -1 : atoi(buf);
}

/* Issue 16: every output goes through one rule.  A symlink, a FIFO, a socket, a directory and a
 * device are refused, and stay what they were; a file we may not write is refused; a new path
 * and a writable regular file are written (the latter keeping its mode). */
START_TEST(output_rule)
{
	const char *dir = test_tmpdir("output");
	ck_assert_ptr_nonnull(dir);
	char p[1100], q[1100], err[512], buf[64];
	struct stat st;

	/* a symlink to a regular file: neither the link nor its target changes */
	snprintf(q, sizeof q, "%s/target", dir);
	ck_assert_int_eq(pp_write_file_atomic(q, "target\n", 7, err, sizeof err), 0);
	snprintf(p, sizeof p, "%s/link", dir);
	ck_assert_int_eq(symlink("target", p), 0);
	ck_assert_int_eq(pp_output_check("--out", p, err, sizeof err), PP_EUSAGE);
	ck_assert_msg(strstr(err, "--out") && strstr(err, "link is a symbolic link"), "%s", err);
	ck_assert_int_eq(pp_write_file_atomic(p, "x", 1, err, sizeof err), PP_EUSAGE);
	ck_assert(lstat(p, &st) == 0 && S_ISLNK(st.st_mode));
	ck_assert_int_eq(slurp(q, buf, sizeof buf), 7);
	ck_assert_str_eq(buf, "target\n");
	/* a dangling symlink would otherwise be replaced by a file */
	snprintf(p, sizeof p, "%s/dangling", dir);
	ck_assert_int_eq(symlink("nowhere", p), 0);
	ck_assert_int_eq(pp_write_file_atomic(p, "x", 1, err, sizeof err), PP_EUSAGE);
	ck_assert(lstat(p, &st) == 0 && S_ISLNK(st.st_mode));

	/* a FIFO */
	snprintf(p, sizeof p, "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(p, 0644), 0);
	ck_assert_int_eq(pp_write_file_atomic(p, "x", 1, err, sizeof err), PP_EUSAGE);
	ck_assert_msg(strstr(err, "is a FIFO") != NULL, "%s", err);
	ck_assert(lstat(p, &st) == 0 && S_ISFIFO(st.st_mode));

	/* a socket */
	snprintf(p, sizeof p, "%s/sock", dir);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (s >= 0 && strlen(p) < sizeof sa.sun_path) {
		strcpy(sa.sun_path, p);
		ck_assert_int_eq(bind(s, (struct sockaddr *)&sa, sizeof sa), 0);
		ck_assert_int_eq(pp_write_file_atomic(p, "x", 1, err, sizeof err), PP_EUSAGE);
		ck_assert_msg(strstr(err, "is a socket") != NULL, "%s", err);
		ck_assert(lstat(p, &st) == 0 && S_ISSOCK(st.st_mode));
	}
	if (s >= 0)
		close(s);

	/* a directory */
	ck_assert_int_eq(pp_write_file_atomic(dir, "x", 1, err, sizeof err), PP_EUSAGE);
	ck_assert_msg(strstr(err, "is a directory") != NULL, "%s", err);

	/* a device: a null device of our own (mknod needs root; /dev itself is never touched) */
	snprintf(p, sizeof p, "%s/null", dir);
	if (mknod(p, S_IFCHR | 0666, makedev(1, 3)) == 0) {
		ck_assert_int_eq(pp_write_file_atomic(p, "x", 1, err, sizeof err), PP_EUSAGE);
		ck_assert_msg(strstr(err, "is a character device") != NULL, "%s", err);
		ck_assert(lstat(p, &st) == 0 && S_ISCHR(st.st_mode));
	}

	/* a read-only file: refused unless we may write it anyway (root may) */
	snprintf(p, sizeof p, "%s/ro", dir);
	ck_assert_int_eq(pp_write_file_atomic(p, "old\n", 4, err, sizeof err), 0);
	ck_assert_int_eq(chmod(p, 0444), 0);
	if (geteuid() != 0) {
		ck_assert_int_eq(pp_write_file_atomic(p, "new\n", 4, err, sizeof err), PP_EUSAGE);
		ck_assert_msg(strstr(err, "may not be written") != NULL, "%s", err);
		ck_assert_int_eq(slurp(p, buf, sizeof buf), 4);
		ck_assert_str_eq(buf, "old\n");
	}

	/* a writable regular file is replaced and keeps its mode */
	snprintf(p, sizeof p, "%s/mine", dir);
	ck_assert_int_eq(pp_write_file_atomic(p, "one\n", 4, err, sizeof err), 0);
	ck_assert_int_eq(chmod(p, 0640), 0);
	ck_assert_int_eq(pp_write_file_atomic(p, "two!\n", 5, err, sizeof err), 0);
	ck_assert_int_eq(slurp(p, buf, sizeof buf), 5);
	ck_assert(stat(p, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0640);
	/* no temporary file is left behind by any refusal */
	ck_assert_int_eq(count_prefixed(dir, "[a-z]*\\.tmp"), 0);
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
	tcase_add_test(tc, output_rule);
	tcase_add_test(tc, csv_round_trip);
	suite_add_tcase(s, tc);
	return test_run(s);
}
