/*
 * check_cal.c -- calibrate/: the nccl-tests importer against real logs (tests/data/
 * nccl-tests-samples.txt, each block with its source), the alpha-beta, GEMM and bandwidth fits
 * against synthetic rows made from known parameters, the sweeps of 'paraplan calibrate', and
 * the run transaction and no-GPU behaviour that need no device.
 */
#include "config.h"
#include "calibrate/cal.h"
#include "common/pp.h"
#include "hardware/hw.h"
#include "tests/testutil.h"

#include <cJSON.h>

static char err[2048];

/* ---- the sample file ----------------------------------------------------------------------- */

#define NSAMPLES 6
static char *samples[NSAMPLES + 1];
static int nsamples;

/* Blocks between '## BEGIN' and '## END' lines, verbatim; '##' lines are the file's annotations. */
static void
load_samples(void)
{
	if (nsamples > 0)
		return;
	char *text;
	size_t len;
	ck_assert_msg(pp_read_file(test_data("nccl-tests-samples.txt"), 1 << 22, &text, &len, err, sizeof err) == 0, "%s",
		      err);
	pp_str cur = {0};
	bool in = false;
	for (char *s = text; *s;) {
		size_t n = strcspn(s, "\n");
		if (!strncmp(s, "## BEGIN", 8)) {
			in = true;
		} else if (!strncmp(s, "## END", 6)) {
			ck_assert(in && nsamples < NSAMPLES + 1);
			samples[nsamples++] = pp_str_detach(&cur);
			in = false;
		} else if (in) {
			pp_str_addn(&cur, s, n);
			pp_str_add(&cur, "\n");
		}
		s += n;
		if (*s)
			s++;
	}
	pp_str_free(&cur);
	free(text);
	ck_assert_int_eq(nsamples, NSAMPLES);
}

static cal_nccl_opts
opts_op(int op, int ranks)
{
	cal_nccl_opts o = {.op = op, .ranks = ranks, .node_size = 8};
	return o;
}

static cal_nccl *
parse_ok(const char *name, const char *text, cal_nccl_opts o)
{
	cal_nccl *log = cal_nccl_new();
	ck_assert_ptr_nonnull(log);
	int rc = cal_nccl_parse(log, name, text, &o, err, sizeof err);
	ck_assert_msg(rc == 0, "%s: %s", name, err);
	return log;
}

static void
parse_fails(const char *name, const char *text, cal_nccl_opts o, const char *want)
{
	cal_nccl *log = cal_nccl_new();
	err[0] = '\0';
	int rc = cal_nccl_parse(log, name, text, &o, err, sizeof err);
	ck_assert_msg(rc == PP_EINPUT, "%s: expected an input error containing \"%s\", got %d (%s)", name, want, rc, err);
	ck_assert_msg(strstr(err, want) != NULL, "error \"%s\" lacks \"%s\"", err, want);
	ck_assert_uint_eq(cal_nccl_nblocks(log), 0);
	cal_nccl_free(log);
}

/* Expected row: nccl-tests' size and time and the busbw it printed (checked by hand against the
 * factor: 2(n-1)/n = 1.9375 for 32 ranks, 1.875 for 16, 1 for sendrecv). */
static void
check_row(const cal_nccl *log, size_t b, size_t j, int64_t bytes, double time_us, double busbw_printed, bool in_place)
{
	hw_coll_row r;
	int line;
	cal_nccl_row(log, b, j, &r, &line);
	ck_assert_int_eq(r.bytes, bytes);
	ck_assert_rel(r.time_s, time_us * 1e-6, 1e-12);
	ck_assert_int_eq(r.in_place, in_place);
	/* Stored busbw = size/time x factor: the printed value within its rounding (and the time's). */
	ck_assert_msg(fabs(r.busbw_gbps - busbw_printed) <= 0.005 + busbw_printed * 0.5 / time_us + 1e-9,
		      "busbw %.4f vs printed %.2f", r.busbw_gbps, busbw_printed);
	ck_assert_rel(r.busbw_gbps, r.algbw_gbps * hw_coll_busbw_factor(r.op, r.ranks), 1e-12);
	ck_assert_int_gt(line, 0);
}

START_TEST(sample_old_format_dgx_a100)
{
	load_samples();
	/* Block 1: 4 DGX A100 nodes, 32 ranks, no device list: the ranks come from the command line. */
	cal_nccl *log = parse_ok("block1", samples[0], opts_op(HW_ALL_REDUCE, 32));
	ck_assert_uint_eq(cal_nccl_nblocks(log), 1);
	cal_nccl_block b;
	cal_nccl_block_get(log, 0, &b);
	ck_assert_int_eq(b.op, HW_ALL_REDUCE);
	ck_assert_str_eq(b.op_from, "--op");
	ck_assert_int_eq(b.ranks, 32);
	ck_assert_int_eq(b.nodes, 4); /* 32 ranks / the system's 8 GPUs per node */
	ck_assert(!b.new_format);
	ck_assert_str_eq(b.dtype, "float");
	ck_assert_uint_eq(b.nrows, 26); /* 13 sizes, out-of-place and in-place */
	ck_assert_uint_eq(b.skipped, 0);
	check_row(log, 0, 0, 1048576, 135.3, 15.02, false);
	check_row(log, 0, 1, 1048576, 132.7, 15.31, true);
	check_row(log, 0, 24, 4294967296LL, 43557, 191.05, false);
	check_row(log, 0, 25, 4294967296LL, 43440, 191.56, true);
	/* 7.75 GB/s x 31/16 = 15.02: the factor of 32 ranks, by hand. */
	hw_coll_row r;
	cal_nccl_row(log, 0, 0, &r, NULL);
	ck_assert_rel(r.busbw_gbps / r.algbw_gbps, 31.0 / 16.0, 1e-12);
	cal_nccl_free(log);
	/* The same table read as 16 ranks fails the busbw check on its first row (line 5). */
	parse_fails("block1", samples[0], opts_op(HW_ALL_REDUCE, 16), "block1:5: out-of-place busbw 15.02 GB/s does not match");
	/* And without --op nothing says what it measured. */
	parse_fails("block1", samples[0], opts_op(-1, 32), "give --op");
}
END_TEST

START_TEST(sample_srun_prefix_p4de)
{
	load_samples();
	cal_nccl *log = parse_ok("block2", samples[1], opts_op(HW_ALL_REDUCE, 16));
	cal_nccl_block b;
	cal_nccl_block_get(log, 0, &b);
	ck_assert(b.new_format);
	ck_assert_int_eq(b.nodes, 2);
	ck_assert_uint_eq(b.nrows, 58); /* 8 B .. 2 GiB: 29 sizes */
	check_row(log, 0, 0, 8, 164.3, 0.00, false);
	check_row(log, 0, 57, 2147483648LL, 51406, 78.33, true);
	/* Small messages keep their latency: busbw recomputed from the time, not the printed 0.00. */
	hw_coll_row r;
	cal_nccl_row(log, 0, 0, &r, NULL);
	ck_assert_rel(r.busbw_gbps, 8.0 / 164.3e3 * 1.875, 1e-9);
	cal_nccl_free(log);
	/* No device list and no --ranks: the rank count is unknown. */
	parse_fails("block2", samples[1], opts_op(HW_ALL_REDUCE, 0), "give --ranks");
}
END_TEST

START_TEST(sample_srun_prefix_p5)
{
	load_samples();
	cal_nccl *log = parse_ok("block3", samples[2], opts_op(HW_ALL_REDUCE, 16));
	cal_nccl_block b;
	cal_nccl_block_get(log, 0, &b);
	ck_assert_uint_eq(b.nrows, 64); /* 8 B .. 16 GiB: 32 sizes */
	check_row(log, 0, 0, 8, 69.12, 0.00, false);
	check_row(log, 0, 62, 17179869184LL, 66132, 487.09, false);
	check_row(log, 0, 63, 17179869184LL, 66109, 487.26, true);
	cal_nccl_free(log);
}
END_TEST

START_TEST(sample_openmpi_prefix_elision_footer)
{
	load_samples();
	cal_nccl *log = parse_ok("block4", samples[3], opts_op(HW_ALL_REDUCE, 16));
	cal_nccl_block b;
	cal_nccl_block_get(log, 0, &b);
	/* The size-0 row is not a measurement (two halves skipped); '...' is not a row. */
	ck_assert_uint_eq(b.nrows, 12);
	ck_assert_uint_eq(b.skipped, 2);
	check_row(log, 0, 0, 67108864, 996.0, 126.33, false);
	check_row(log, 0, 10, 2147483648LL, 9197.5, 437.79, false);
	cal_nccl_free(log);
}
END_TEST

START_TEST(sample_device_list_a3mega)
{
	load_samples();
	/* Block 5 has the run banner and device list: 16 ranks on two hosts, no --ranks needed. */
	cal_nccl *log = parse_ok("block5", samples[4], opts_op(HW_ALL_REDUCE, 0));
	cal_nccl_block b;
	cal_nccl_block_get(log, 0, &b);
	ck_assert_int_eq(b.ranks, 16);
	ck_assert_int_eq(b.nodes, 2);
	ck_assert(strstr(b.ranks_from, "device list") != NULL);
	ck_assert_str_eq(b.gpu_name, "NVIDIA H100 80GB HBM3");
	ck_assert_uint_eq(b.nrows, 62); /* 8 B .. 8 GiB: 31 sizes */
	check_row(log, 0, 0, 8, 135.8, 0.00, false);
	check_row(log, 0, 60, 8589934592LL, 47535, 338.82, false);
	check_row(log, 0, 61, 8589934592LL, 47743, 337.35, true);
	cal_nccl_free(log);
	/* --ranks that disagrees with the device list is refused. */
	parse_fails("block5", samples[4], opts_op(HW_ALL_REDUCE, 8), "--ranks 8, but the device list at line 3 has 16");
	cal_nccl_opts o = opts_op(HW_ALL_REDUCE, 0);
	o.nodes = 4;
	parse_fails("block5", samples[4], o, "--nodes 4, but the device list at line 3 has 2 hosts");
}
END_TEST

START_TEST(sample_sendrecv_na)
{
	load_samples();
	/* The op comes from the command line in the text; in-place #wrong is N/A. */
	cal_nccl *log = parse_ok("block6", samples[5], opts_op(-1, 8));
	cal_nccl_block b;
	cal_nccl_block_get(log, 0, &b);
	ck_assert_int_eq(b.op, HW_SEND_RECV);
	ck_assert_str_eq(b.op_from, "test name at line 1");
	ck_assert_int_eq(b.nodes, 1);
	ck_assert_uint_eq(b.nrows, 8);
	check_row(log, 0, 0, 134217728, 1211.2, 110.81, false);
	check_row(log, 0, 7, 1073741824, 5490.5, 195.56, true);
	hw_coll_row r;
	cal_nccl_row(log, 0, 7, &r, NULL);
	ck_assert_rel(r.busbw_gbps, r.algbw_gbps, 1e-12); /* factor 1 */
	cal_nccl_free(log);
	/* --op that contradicts the text is an error, not an override. */
	parse_fails("block6", samples[5], opts_op(HW_ALL_REDUCE, 8), "--op all_reduce, but line 1 says this is sendrecv_perf");
}
END_TEST

/* Text of block 6 without its command line, to test inference from the file name. */
static const char *
block6_table(void)
{
	const char *s = strchr(samples[5], '\n');
	return s + 1;
}

START_TEST(op_from_file_name)
{
	load_samples();
	cal_nccl *log = parse_ok("logs/run1/sendrecv_perf.log", block6_table(), opts_op(-1, 8));
	cal_nccl_block b;
	cal_nccl_block_get(log, 0, &b);
	ck_assert_int_eq(b.op, HW_SEND_RECV);
	ck_assert_str_eq(b.op_from, "file name");
	cal_nccl_free(log);
	/* The same rows named all_reduce_perf fail the busbw check: all-reduce's factor is 1.75. */
	parse_fails("all_reduce_perf.txt", block6_table(), opts_op(-1, 8), "busbw 110.81 GB/s does not match");
	/* reduce_perf inside all_reduce_perf is not a second name. */
	parse_fails("x/my_all_reduce_perf_run.log", block6_table(), opts_op(-1, 8), "give --op");
	parse_fails("gather_perf.log", block6_table(), opts_op(-1, 8), "is not a collective paraplan models");
}
END_TEST

START_TEST(several_runs_in_one_file)
{
	load_samples();
	/* A log with two runs: block 5 after its banner, then an 8-GPU single-process sendrecv run
	 * whose banner gives nThread 1 x nGpus 8, with NCCL INFO noise between rows. */
	pp_str t = {0};
	pp_str_add(&t, "# nccl-tests version 2.13.8 nccl-headers=21805 nccl-library=21805\n");
	pp_str_add(&t, "# Collective test starting: all_reduce_perf\n");
	pp_str_add(&t, samples[4]);
	pp_str_add(&t, "+ srun -N1 ./build/sendrecv_perf -b 128M -e 1G -f 2 -g 8\n");
	pp_str_add(&t, "# nThread 1 nGpus 8 minBytes 134217728 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20\n");
	const char *tab = block6_table();
	const char *row3 = strstr(tab, "   536870912");
	pp_str_addn(&t, tab, (size_t)(row3 - tab));
	pp_str_add(&t, "node-1:4242:4260 [3] NCCL INFO Channel 02/0 : 3[3] -> 4[4] via P2P/IPC/read\n");
	pp_str_add(&t, "...\n");
	pp_str_add(&t, row3);
	cal_nccl *log = parse_ok("combined.log", t.buf, opts_op(-1, 0));
	ck_assert_uint_eq(cal_nccl_nblocks(log), 2);
	cal_nccl_block a, b;
	cal_nccl_block_get(log, 0, &a);
	cal_nccl_block_get(log, 1, &b);
	ck_assert_int_eq(a.op, HW_ALL_REDUCE);
	ck_assert_str_eq(a.op_from, "test banner at line 2");
	ck_assert_int_eq(a.ranks, 16);
	ck_assert_str_eq(a.nccl, "2.18.5");
	ck_assert_uint_eq(a.nrows, 62);
	ck_assert_int_eq(b.op, HW_SEND_RECV);
	ck_assert_int_eq(b.ranks, 8);
	ck_assert(strstr(b.ranks_from, "nThread x nGpus") != NULL);
	ck_assert_uint_eq(b.nrows, 8);
	cal_nccl_free(log);
	pp_str_free(&t);
}
END_TEST

START_TEST(malformed_rows)
{
	load_samples();
	char *t = strdup(samples[0]);
	/* A truncated row (line 6 of block 1). */
	char *row = strstr(t, "     2097152");
	char *eol = strchr(row, '\n');
	memmove(row + 40, eol, strlen(eol) + 1);
	parse_fails("trunc.log", t, opts_op(HW_ALL_REDUCE, 32), "trunc.log:6: expected 12 fields as the header at line 3 declares");
	free(t);
	/* A time that does not give the printed algbw. */
	t = strdup(samples[0]);
	row = strstr(t, "161.5   12.98");
	memcpy(row, "171.5", 5);
	parse_fails("algbw.log", t, opts_op(HW_ALL_REDUCE, 32), "algbw.log:6: out-of-place algbw 12.98 GB/s does not match");
	free(t);
	/* A text field where a number belongs. */
	t = strdup(samples[0]);
	row = strstr(t, "161.5   12.98");
	memcpy(row, "fast!", 5);
	parse_fails("nan.log", t, opts_op(HW_ALL_REDUCE, 32), "nan.log:6: out-of-place time \"fast!\" is not a number");
	free(t);
	/* nccl-tests counted wrong results. */
	t = strdup(samples[5]);
	row = strstr(t, "192.75      0");
	row[12] = '3';
	parse_fails("wrong.log", t, opts_op(-1, 8), "wrong.log:8: nccl-tests counted 3 wrong values in the out-of-place result");
	free(t);
	/* A header and no rows: an interrupted test. */
	parse_fails("empty.log", "# Collective test starting: all_reduce_perf\n"
				 "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
				 "srun: error: task 3: Killed\n",
		    opts_op(-1, 8), "empty.log:2: result table without rows");
	parse_fails("none.log", "hello\nworld\n", opts_op(-1, 8), "none.log: no nccl-tests result table found");
	/* Two processes claiming rank 0: nccl-tests without MPI under mpirun. */
	parse_fails("dup.log",
		    "# Collective test starting: all_reduce_perf\n# Using devices\n"
		    "#  Rank  0 Group  0 Pid 1 on a device  0 [0000:1b:00] NVIDIA H100 80GB HBM3\n"
		    "#  Rank  0 Group  0 Pid 2 on b device  0 [0000:1b:00] NVIDIA H100 80GB HBM3\n"
		    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
		    "     1048576        262144     float     sum      -1    100.0   10.49    0.00      0    100.0   10.49    0.00      0\n",
		    opts_op(-1, 0), "dup.log:2: rank 0 is listed twice");
}
END_TEST

static long
count_rows(hw_db *db, const char *key)
{
	cJSON *runs;
	ck_assert_int_eq(hw_runs(db, &runs, err, sizeof err), 0);
	long n = 0;
	cJSON *r;
	cJSON_ArrayForEach(r, runs) n += (long)cJSON_GetObjectItem(r, key)->valuedouble;
	cJSON_Delete(runs);
	return n;
}

START_TEST(store_one_import_run)
{
	load_samples();
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	cal_nccl *log = cal_nccl_new();
	cal_nccl_opts o = opts_op(HW_ALL_REDUCE, 0);
	ck_assert_int_eq(cal_nccl_parse(log, "a3mega.log", samples[4], &o, err, sizeof err), 0);
	o = opts_op(-1, 8);
	ck_assert_int_eq(cal_nccl_parse(log, "sendrecv.log", samples[5], &o, err, sizeof err), 0);
	/* An unknown system: nothing written. */
	int64_t id;
	ck_assert_int_eq(cal_nccl_store(log, db, "no-such-system", NULL, &id, err, sizeof err), PP_ENOTFOUND);
	ck_assert(strstr(err, "no-such-system") != NULL);
	ck_assert_int_eq(count_rows(db, "collective_rows"), 0);
	ck_assert_int_eq(cal_nccl_store(log, db, "gcp-a3-mega", NULL, &id, err, sizeof err), 0);
	ck_assert_int_gt(id, 0);
	cJSON *runs;
	ck_assert_int_eq(hw_runs(db, &runs, err, sizeof err), 0);
	ck_assert_int_eq(cJSON_GetArraySize(runs), 1);
	cJSON *r = cJSON_GetArrayItem(runs, 0);
	ck_assert_str_eq(cJSON_GetObjectItem(r, "kind")->valuestring, "import");
	ck_assert_str_eq(cJSON_GetObjectItem(r, "status")->valuestring, "complete");
	ck_assert_str_eq(cJSON_GetObjectItem(r, "host")->valuestring, "ztan-mig-235z");
	ck_assert_str_eq(cJSON_GetObjectItem(r, "note")->valuestring, "nccl-tests: a3mega.log, sendrecv.log");
	ck_assert_int_eq(cJSON_GetObjectItem(r, "collective_rows")->valueint, 62 + 8);
	cJSON_Delete(runs);
	/* The measured curve now drives the cost model: 1 GiB all-reduce on 16 ranks, 2 nodes. */
	hw_cost *c;
	ck_assert_int_eq(hw_cost_new(db, "gcp-a3-mega", &c, err, sizeof err), 0);
	hw_prov p;
	double t = hw_cost_coll_time(c, HW_ALL_REDUCE, 16, 8, 1073741824.0, &p);
	ck_assert_int_eq(p, HW_PROV_MEASURED);
	ck_assert_rel(t, 6759.0e-6, 1e-9); /* the out-of-place time nccl-tests printed */
	hw_cost_free(c);
	/* The summary: two groups, the peak out-of-place busbw of each. */
	cJSON *sum = cal_nccl_summary(log);
	cJSON *g = cJSON_GetArrayItem(cJSON_GetObjectItem(sum, "groups"), 0);
	ck_assert_rel(cJSON_GetObjectItem(g, "peak_busbw_gbps")->valuedouble, 338.82, 0.0005);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(sum, "groups")), 2);
	cJSON_Delete(sum);
	cal_nccl_free(log);
	hw_close(db);
}
END_TEST

START_TEST(store_read_only_writes_nothing)
{
	load_samples();
	const char *dir = test_tmpdir("calro");
	char file[1200];
	snprintf(file, sizeof file, "%s/ro.db", dir);
	hw_db *db;
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), 0);
	hw_close(db);
	ck_assert_int_eq(hw_open(file, HW_OPEN_READONLY, &db, err, sizeof err), 0);
	cal_nccl *log = parse_ok("block5", samples[4], opts_op(HW_ALL_REDUCE, 0));
	int64_t id;
	ck_assert_int_eq(cal_nccl_store(log, db, "gcp-a3-mega", NULL, &id, err, sizeof err), PP_EIO);
	ck_assert(strstr(err, "read-only") != NULL);
	ck_assert_int_eq(id, 0);
	hw_close(db);
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), 0);
	ck_assert_int_eq(count_rows(db, "collective_rows"), 0);
	hw_close(db);
	cal_nccl_free(log);
	test_rmdir(dir);
}
END_TEST

static Suite *
cal_suite(void)
{
	Suite *s = suite_create("calibrate");
	TCase *tc = tcase_create("nccl-tests");
	tcase_add_test(tc, sample_old_format_dgx_a100);
	tcase_add_test(tc, sample_srun_prefix_p4de);
	tcase_add_test(tc, sample_srun_prefix_p5);
	tcase_add_test(tc, sample_openmpi_prefix_elision_footer);
	tcase_add_test(tc, sample_device_list_a3mega);
	tcase_add_test(tc, sample_sendrecv_na);
	tcase_add_test(tc, op_from_file_name);
	tcase_add_test(tc, several_runs_in_one_file);
	tcase_add_test(tc, malformed_rows);
	tcase_add_test(tc, store_one_import_run);
	tcase_add_test(tc, store_read_only_writes_nothing);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return test_run(cal_suite());
}
