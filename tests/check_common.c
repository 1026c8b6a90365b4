/*
 * check_common.c -- the shared helpers: number parsing with suffixes, growable strings,
 * atomic file writes, CSV read and written.
 */
#include "config.h"
#include "common/csv.h"
#include "common/json.h"
#include "common/pp.h"
#include "tests/testutil.h"

#include <cJSON.h>
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
	/* decimal only: strtod's hexadecimal is refused */
	ck_assert_int_ne(pp_parse_double("0x10", &d), 0);
	ck_assert_int_ne(pp_parse_double(" -0X1p4", &d), 0);
	ck_assert_int_ne(pp_parse_count("0x10", &d), 0);
	ck_assert_int_eq(pp_parse_double("0.5", &d), 0);
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
	/* A FIFO is refused at once (opening it to read would wait for a writer), and so is a
	 * device. */
	snprintf(path, sizeof path, "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(pp_read_file(path, 1024, &text, &len, err, sizeof err), PP_EINPUT);
	ck_assert_msg(strstr(err, "is a FIFO, expected a regular file") != NULL, "%s", err);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(pp_read_text("/dev/null", 1024, &text, &len, err, sizeof err), PP_EINPUT);
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

/* The printable form of hand-made texts (issue 16): control characters, DEL and bytes that are
 * not UTF-8 become \xHH, C1 controls and bidirectional overrides \uHHHH; UTF-8 text stays. */
START_TEST(printable_text)
{
	static const struct {
		const char *in, *want;
	} c[] = {
		{"llama-3-8b", "llama-3-8b"},
		{"a\x1b[31mb", "a\\x1b[31mb"},           /* ESC: the start of a terminal sequence */
		{"two\nlines\ttab", "two\\x0alines\\x09tab"},
		{"del\x7f", "del\\x7f"},
		{"caf\xc3\xa9 \xe6\x97\xa5", "caf\xc3\xa9 \xe6\x97\xa5"}, /* é and a CJK character stay */
		{"\xc2\x9b" "31m", "\\u009b31m"},          /* C1 CSI as UTF-8 */
		{"x\xe2\x80\xaey", "x\\u202ey"},            /* right-to-left override */
		{"bad\xff", "bad\\xff"},                    /* not UTF-8 at all */
		{"\xc0\xaf", "\\xc0\\xaf"},                 /* an overlong '/' */
		{"\xed\xa0\x80", "\\xed\\xa0\\x80"},        /* a UTF-16 surrogate */
		{"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"}, /* above U+10FFFF */
		{"cut\xe2\x80", "cut\\xe2\\x80"},           /* a sequence cut short at the end */
		{"back\\slash `q` \"", "back\\slash `q` \""}, /* printable stays as it is */
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		pp_str s = {0};
		pp_str_add_printable(&s, c[i].in);
		ck_assert_msg(!strcmp(s.buf ? s.buf : "", c[i].want), "case %zu: \"%s\", expected \"%s\"", i, s.buf, c[i].want);
		ck_assert(pp_is_printable(c[i].in, 0) == !strcmp(c[i].in, c[i].want));
		ck_assert(pp_is_printable(s.buf ? s.buf : "", 0));
		pp_str_free(&s);
	}
	/* a stream of lines keeps newline and tab, and holds back a sequence a write cut short */
	pp_str s = {0};
	ck_assert_uint_eq(pp_str_add_printable_n(&s, "ok\n\t\xc3", 5, PP_PRINT_LINES, false), 4);
	ck_assert_str_eq(s.buf, "ok\n\t");
	ck_assert_uint_eq(pp_str_add_printable_n(&s, "\xc3\xa9\x1b", 3, PP_PRINT_LINES, false), 3);
	ck_assert_str_eq(s.buf, "ok\n\t\xc3\xa9\\x1b");
	pp_str_free(&s);
	/* the bounded copy cuts at a character boundary */
	char buf[6];
	ck_assert_str_eq(pp_printable("ab\xc3\xa9\xc3\xa9", buf, sizeof buf), "ab\xc3\xa9");
	ck_assert_str_eq(pp_printable("\x01", buf, sizeof buf), "\\x01");
}
END_TEST

/* One strict JSON reader (issue 16): trailing text and duplicate keys are refused with where
 * they are; a byte order mark is skipped; NUL bytes are refused. */
START_TEST(strict_json)
{
	char err[512];
	cJSON *d;
	ck_assert_int_eq(pp_json_parse("{\"a\": 1}", 8, "f.json", 0, &d, err, sizeof err), 0);
	ck_assert_int_eq(cJSON_GetObjectItem(d, "a")->valueint, 1);
	cJSON_Delete(d);
	/* a byte order mark, then the same document */
	ck_assert_int_eq(pp_json_parse("\xef\xbb\xbf{\"a\": 1}\n", 12, "f.json", 0, &d, err, sizeof err), 0);
	cJSON_Delete(d);
	/* text after the document: line 2, column 3 */
	ck_assert_int_eq(pp_json_parse("{\"a\": 1}\n  x", 12, "f.json", 0, &d, err, sizeof err), PP_EINPUT);
	ck_assert_ptr_null(d);
	ck_assert_msg(strstr(err, "f.json:2:3: text after the JSON document near 'x'") != NULL, "%s", err);
	ck_assert_int_eq(pp_json_parse("{} {}", 5, "f.json", 0, &d, err, sizeof err), PP_EINPUT);
	ck_assert_msg(strstr(err, "f.json:1:4: text after the JSON document") != NULL, "%s", err);
	/* a key twice, at the top and deeper (named with the object's JSON pointer) */
	const char *dup1 = "{\"layers\": 2, \"hidden\": 8, \"layers\": 3}";
	ck_assert_int_eq(pp_json_parse(dup1, strlen(dup1), "m.json", 0, &d, err, sizeof err), PP_EINPUT);
	ck_assert_msg(strstr(err, "m.json: \"layers\" is given twice in the object at the top level") != NULL, "%s", err);
	const char *dup2 = "{\"a\": [1, {\"moe\": {\"k\": 1, \"k\": 2}}]}";
	ck_assert_int_eq(pp_json_parse(dup2, strlen(dup2), "m.json", 0, &d, err, sizeof err), PP_EINPUT);
	ck_assert_msg(strstr(err, "\"k\" is given twice in the object at /a/1/moe") != NULL, "%s", err);
	/* an object of many keys (the sorted path): k0..k39 and k17 again */
	pp_str big = {0};
	pp_str_add(&big, "{");
	for (int i = 0; i < 40; i++)
		pp_str_addf(&big, "\"k%d\": %d, ", i, i);
	pp_str_add(&big, "\"k17\": 0}");
	ck_assert_int_eq(pp_json_parse(big.buf, big.len, "b.json", 0, &d, err, sizeof err), PP_EINPUT);
	ck_assert_msg(strstr(err, "\"k17\" is given twice") != NULL, "%s", err);
	pp_str_free(&big);
	/* a NUL byte, an empty text, a cut document */
	ck_assert_int_eq(pp_json_parse("{\n \"a\"\0: 1}", 11, "n.json", 0, &d, err, sizeof err), PP_EINPUT);
	ck_assert_msg(strstr(err, "n.json:2:5: binary data") != NULL, "%s", err);
	ck_assert_int_eq(pp_json_parse("\xef\xbb\xbf", 3, "e.json", 0, &d, err, sizeof err), PP_EINPUT);
	ck_assert_msg(strstr(err, "e.json: empty file") != NULL, "%s", err);
	ck_assert_int_eq(pp_json_parse("{\"a\": ", 6, "c.json", 0, &d, err, sizeof err), PP_EINPUT);
	ck_assert_msg(strstr(err, "c.json:1:7: not valid JSON (unexpected end of file)") != NULL, "%s", err);
	/* a line of a JSONL file reports the file's line */
	ck_assert_int_eq(pp_json_parse_at("{} x", 4, "t.jsonl", 42, 0, &d, err, sizeof err), PP_EINPUT);
	ck_assert_msg(strstr(err, "t.jsonl:42:4: text after") != NULL, "%s", err);
	/* printable strings on request */
	const char *esc = "{\"n\\u001b\": \"a\\u001b[31m\"}";
	ck_assert_int_eq(pp_json_parse(esc, strlen(esc), "p.json", PP_JSON_PRINTABLE, &d, err, sizeof err), 0);
	ck_assert_str_eq(d->child->string, "n\\x1b");
	ck_assert_str_eq(d->child->valuestring, "a\\x1b[31m");
	ck_assert(pp_json_is_printable(d));
	cJSON_Delete(d);
}
END_TEST

/* The CSV reader skips a byte order mark as the JSON reader does. */
START_TEST(csv_bom)
{
	char err[256];
	pp_csv t;
	const char *text = "\xef\xbb\xbf" "arrival_s,prompt_tokens\r\n0,5\r\n";
	ck_assert_int_eq(pp_csv_parse(text, strlen(text), "t.csv", &t, err, sizeof err), 0);
	ck_assert_int_eq(pp_csv_column(&t, "arrival_s"), 0);
	ck_assert_str_eq(pp_csv_get(&t, 1, 1), "5");
	pp_csv_free(&t);
}
END_TEST

/* A header that names a column twice is refused, naming it (the first copy would be read and
 * the second ignored); empty names, as trailing commas leave them, are not compared. */
START_TEST(csv_header_twice)
{
	char err[256];
	pp_csv t;
	const char *dup = "a,b,,c,b\n1,2,,3,4\n", *ok = "a,b,,c,,\n1,2,,3,,\n";
	ck_assert_int_eq(pp_csv_parse(dup, strlen(dup), "d.csv", &t, err, sizeof err), 0);
	ck_assert_int_eq(pp_csv_header(&t, "d.csv", err, sizeof err), PP_EINPUT);
	ck_assert_str_eq(err, "d.csv:1: column \"b\" is given twice (fields 2 and 5)");
	pp_csv_free(&t);
	ck_assert_int_eq(pp_csv_parse(ok, strlen(ok), "o.csv", &t, err, sizeof err), 0);
	ck_assert_int_eq(pp_csv_header(&t, "o.csv", err, sizeof err), 0);
	pp_csv_free(&t);
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
	tcase_add_test(tc, printable_text);
	tcase_add_test(tc, strict_json);
	tcase_add_test(tc, csv_bom);
	tcase_add_test(tc, csv_header_twice);
	tcase_add_test(tc, csv_round_trip);
	suite_add_tcase(s, tc);
	return test_run(s);
}
