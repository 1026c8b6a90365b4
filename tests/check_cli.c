/*
 * check_cli.c -- the command line's option tables (cli/opt.c): options match only in full, an
 * option given twice is refused, values by '=' or by the next argument, lists and ranges,
 * operands anywhere, and the help printed from the table.
 */
#include "config.h"
#include "cli/cli.h"
#include "tests/testutil.h"

static const cli_cmd cmd = {"test", "test [OPTIONS]\n", NULL, NULL};

/* Runs cli_parse over a command line given as one string (split at blanks), with stdout and
 * stderr silenced; returns its result. */
static int
parse(const cli_opt *opts, const char *line, char **ops, int maxops, int *nops)
{
	static char buf[512];
	char *argv[32];
	int argc = 0;
	pp_strlcpy(buf, line, sizeof buf);
	argv[argc++] = "test";
	for (char *t = strtok(buf, " "); t && argc < 31; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	fflush(stderr);
	fflush(stdout);
	FILE *saved = stderr, *saved_out = stdout;
	stderr = fopen("/dev/null", "w");
	stdout = fopen("/dev/null", "w");
	int rc = cli_parse(&cmd, opts, argc, argv, ops, maxops, nops);
	fclose(stderr);
	fclose(stdout);
	stderr = saved;
	stdout = saved_out;
	return rc;
}

START_TEST(full_names_only)
{
	int tp = 0;
	bool across = false;
	const cli_opt opts[] = {
		OPT_INT("tp", "T", &tp, 1, 64, "tensor parallel"),
		OPT_SWITCH("tp-across-nodes", &across, "let TP span nodes"),
		OPT_END,
	};
	ck_assert_int_eq(parse(opts, "--tp 4", NULL, 0, NULL), CLI_RUN);
	ck_assert_int_eq(tp, 4);
	ck_assert(!across);
	/* a prefix is not an option, even when only one option starts with it */
	ck_assert_int_eq(parse(opts, "--tp-across", NULL, 0, NULL), 2);
	ck_assert_int_eq(parse(opts, "--tp-across-nodes", NULL, 0, NULL), CLI_RUN);
	ck_assert(across);
	ck_assert(cli_given(opts, "tp-across-nodes"));
	ck_assert(!cli_given(opts, "tp"));
}
END_TEST

START_TEST(values_and_errors)
{
	int tp = 0;
	bool json = false;
	const char *db = NULL;
	double rate = 0;
	const cli_opt opts[] = {
		OPT_INT("tp", "T", &tp, 1, 64, "tensor parallel"),
		OPT_JSON(&json),
		OPT_DB(&db),
		OPT_NUM("rate", "QPS", &rate, 1e-6, 1e7, "requests per second"),
		OPT_END,
	};
	ck_assert_int_eq(parse(opts, "--tp=8 --db x.db --rate 2.5K", NULL, 0, NULL), CLI_RUN);
	ck_assert_int_eq(tp, 8);
	ck_assert_str_eq(db, "x.db");
	ck_assert_rel(rate, 2500.0, 1e-12);
	ck_assert_int_eq(parse(opts, "--tp 8 --tp 4", NULL, 0, NULL), 2);     /* twice */
	ck_assert_int_eq(parse(opts, "--tp", NULL, 0, NULL), 2);              /* no value */
	ck_assert_int_eq(parse(opts, "--db --json", NULL, 0, NULL), 2);       /* the next option is no value */
	ck_assert_int_eq(parse(opts, "--db=--json", NULL, 0, NULL), CLI_RUN); /* unless given with '=' */
	ck_assert_str_eq(db, "--json");
	ck_assert_int_eq(parse(opts, "--json=yes", NULL, 0, NULL), 2);        /* a switch takes none */
	ck_assert_int_eq(parse(opts, "--tp 65", NULL, 0, NULL), 2);           /* out of bounds */
	ck_assert_int_eq(parse(opts, "--tp 4x", NULL, 0, NULL), 2);
	ck_assert_int_eq(parse(opts, "-x", NULL, 0, NULL), 2);
	ck_assert_int_eq(parse(opts, "stray", NULL, 0, NULL), 2);             /* no operands taken */
	ck_assert_int_eq(parse(opts, "--help", NULL, 0, NULL), 0);            /* help printed: exit 0 */
}
END_TEST

START_TEST(operands_anywhere)
{
	bool json = false;
	const cli_opt opts[] = {OPT_JSON(&json), OPT_END};
	char *ops[3];
	int n;
	ck_assert_int_eq(parse(opts, "show --json dgx-h100", ops, 3, &n), CLI_RUN);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(ops[0], "show");
	ck_assert_str_eq(ops[1], "dgx-h100");
	ck_assert(json);
	ck_assert_int_eq(parse(opts, "a -- --json", ops, 3, &n), CLI_RUN);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(ops[1], "--json");
	ck_assert_int_eq(parse(opts, "a b c d", ops, 3, &n), 2); /* more than it takes */
}
END_TEST

START_TEST(lists)
{
	cli_ints g = {0};
	cli_strs s = {0}, from = {0};
	const cli_opt opts[] = {
		OPT_INTS("gpus", "N", &g, 1, 1 << 24, "GPU counts"),
		OPT_LIST("systems", "S,...", &s, "systems"),
		OPT_STRS("from", "FILE", &from, "inputs"),
		OPT_END,
	};
	ck_assert_int_eq(parse(opts, "--gpus 8..64", NULL, 0, NULL), CLI_RUN);
	ck_assert_int_eq(g.n, 4); /* 8, 16, 32, 64 */
	ck_assert_int_eq(g.v[0], 8);
	ck_assert_int_eq(g.v[3], 64);
	ck_assert_int_eq(parse(opts, "--gpus 8..48", NULL, 0, NULL), CLI_RUN);
	ck_assert_int_eq(g.n, 3); /* 8, 16, 32: the doubling stops below the bound */
	ck_assert_int_eq(parse(opts, "--gpus 3,5,7 --systems a,b --from x --from y", NULL, 0, NULL), CLI_RUN);
	ck_assert_int_eq(g.n, 3);
	ck_assert_int_eq(g.v[2], 7);
	ck_assert_int_eq(s.n, 2);
	ck_assert_str_eq(s.v[1], "b");
	ck_assert_int_eq(from.n, 2);
	ck_assert_str_eq(from.v[1], "y");
	ck_assert_int_eq(parse(opts, "--gpus 8,8", NULL, 0, NULL), 2);
	ck_assert_int_eq(parse(opts, "--gpus 8,", NULL, 0, NULL), 2);
	ck_assert_int_eq(parse(opts, "--gpus 64..8", NULL, 0, NULL), 2);
	ck_assert_int_eq(parse(opts, "--gpus 0", NULL, 0, NULL), 2);
	ck_assert_int_eq(parse(opts, "--systems a,,b", NULL, 0, NULL), 2);
	ck_assert_int_eq(parse(opts, "--systems a,a", NULL, 0, NULL), 2);
}
END_TEST

START_TEST(groups_and_help)
{
	const char *db = NULL, *mspec = NULL;
	bool json = false;
	const cli_opt common[] = {OPT_DB(&db), OPT_JSON(&json), OPT_END};
	const cli_opt opts[] = {OPT_MODEL(&mspec), OPT_GROUP(common), OPT_END};
	ck_assert_int_eq(parse(opts, "--model m --db d --json", NULL, 0, NULL), CLI_RUN);
	ck_assert_str_eq(mspec, "m");
	ck_assert_str_eq(db, "d");
	ck_assert(json);
	/* the help lists every option of the table, the group's too, with its help line */
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	cli_help(&cmd, opts, f);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(text, "usage: paraplan test [OPTIONS]"));
	ck_assert_ptr_nonnull(strstr(text, "  --model M"));
	ck_assert_ptr_nonnull(strstr(text, "  --db FILE"));
	ck_assert_ptr_nonnull(strstr(text, "  --json "));
	ck_assert_ptr_nonnull(strstr(text, "print one JSON document"));
	free(text);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("cli");
	TCase *tc = tcase_create("options");
	tcase_add_test(tc, full_names_only);
	tcase_add_test(tc, values_and_errors);
	tcase_add_test(tc, operands_anywhere);
	tcase_add_test(tc, lists);
	tcase_add_test(tc, groups_and_help);
	suite_add_tcase(s, tc);
	return test_run(s);
}
