/*
 * check_cal.c -- calibrate/: the nccl-tests importer against real logs (tests/data/
 * nccl-tests-samples.txt, each block with its source), the alpha-beta, GEMM and bandwidth fits
 * against synthetic rows made from known parameters, the sweeps of 'paraplan calibrate', and
 * the run transaction and no-GPU behaviour that need no device.
 */
#include "config.h"
#include "calibrate/cal.h"
#include "calibrate/cal_int.h"
#include "common/pp.h"
#include "hardware/hw.h"
#include "tests/testutil.h"

#include <cJSON.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <signal.h>
#include <sys/stat.h>

static char err[2048];

/* ---- the sample file ----------------------------------------------------------------------- */

#define NSAMPLES 7
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

/* Block 7: an old-format alltoall table whose redop column is empty: each row is one field
 * short of its header.  64 ranks: algbw 268435456 B / 520935 us = 0.5153 GB/s (printed 0.52),
 * busbw x 63/64 = 0.5072 (printed 0.51).  A reduction with its redop missing stays an error. */
START_TEST(sample_alltoall_empty_redop)
{
	load_samples();
	cal_nccl *log = parse_ok("block7", samples[6], opts_op(HW_ALL_TO_ALL, 64));
	cal_nccl_block b;
	cal_nccl_block_get(log, 0, &b);
	ck_assert_int_eq(b.op, HW_ALL_TO_ALL);
	ck_assert_uint_eq(b.nrows, 4);
	check_row(log, 0, 0, 268435456, 520935, 0.51, false);
	check_row(log, 0, 3, 536870912, 1041299, 0.51, true);
	hw_coll_row r;
	cal_nccl_row(log, 0, 0, &r, NULL);
	ck_assert_rel(r.busbw_gbps, 268435456.0 / 520935e3 * 63.0 / 64.0, 1e-12);
	cal_nccl_free(log);
	parse_fails("block7", samples[6], opts_op(HW_ALL_REDUCE, 64), "expected 12 fields as the header at line 3 declares, got 11");
}
END_TEST

/* A cluster manager's process tag before Open MPI's --tag-output prefix on every line of block
 * 5 (as Ray's job logs carry "(head, rank=0, pid=...)"): the same 62 rows and device list. */
START_TEST(stacked_launcher_prefixes)
{
	load_samples();
	pp_str t = {0};
	for (const char *s = samples[4]; *s;) {
		size_t n = strcspn(s, "\n");
		pp_str_add(&t, "(head, rank=0, pid=4242) [1,0]<stdout>:");
		pp_str_addn(&t, s, n);
		pp_str_add(&t, "\n");
		s += n + (s[n] == '\n');
	}
	cal_nccl *log = parse_ok("block5-tagged", t.buf, opts_op(HW_ALL_REDUCE, 0));
	cal_nccl_block b;
	cal_nccl_block_get(log, 0, &b);
	ck_assert_int_eq(b.ranks, 16);
	ck_assert_int_eq(b.nodes, 2);
	ck_assert_str_eq(b.gpu_name, "NVIDIA H100 80GB HBM3");
	ck_assert_uint_eq(b.nrows, 62);
	check_row(log, 0, 60, 8589934592LL, 47535, 338.82, false);
	cal_nccl_free(log);
	/* torchrun's "[rank0]:" and srun's "0: " stacked the other way round */
	pp_str u = {0};
	for (const char *s = samples[4]; *s;) {
		size_t n = strcspn(s, "\n");
		pp_str_add(&u, "0: [rank0]:");
		pp_str_addn(&u, s, n);
		pp_str_add(&u, "\n");
		s += n + (s[n] == '\n');
	}
	log = parse_ok("block5-torchrun", u.buf, opts_op(HW_ALL_REDUCE, 0));
	cal_nccl_block_get(log, 0, &b);
	ck_assert_uint_eq(b.nrows, 62);
	cal_nccl_free(log);
	pp_str_free(&t);
	pp_str_free(&u);
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

/* Issue 16, item 6: rows outside what the system's hardware can do are refused at the store,
 * naming the line.  dgx-h100: NVLink 450 GB/s per GPU each way, 8 NICs of 400 Gb/s for 8 GPUs
 * (50 GB/s each): 500 GB/s per GPU; at most 2.2 x 500 = 1100 GB/s of bus bandwidth (in-network
 * reductions count twice); at least a thousandth of 500 GB/s after a second. */
static char *
one_row_log(double busbw, long long size)
{
	/* all_reduce on 8 ranks: busbw = algbw x 2 x 7/8; algbw = size / time */
	double algbw = busbw / 1.75, t_us = (double)size / (algbw * 1e3);
	pp_str s = {0};
	pp_str_add(&s, "# Collective test starting: all_reduce_perf\n"
		       "# nThread 1 nGpus 8 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20\n"
		       "#\n#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n");
	pp_str_addf(&s, "  %10lld  %12lld     float     sum      -1  %.6g  %.6g  %.6g      0  %.6g  %.6g  %.6g      0\n", size,
		    size / 4, t_us, algbw, busbw, t_us, algbw, busbw);
	return pp_str_detach(&s);
}

START_TEST(rows_within_the_system)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	static const struct {
		double busbw;
		long long size;
		bool ok;
		const char *why;
	} c[] = {
		{1000.0, 1073741824, true, NULL},             /* under 1100: NVLS-like, kept */
		{1200.0, 1073741824, false, "more than dgx-h100's GPUs can move (500 GB/s each way"},
		{1e12, 1073741824, false, "more than"},
		{0.6, 1073741824, true, NULL},                /* 0.6 GB/s: slow, but above 0.5 GB/s */
		{0.4, 1073741824, false, "slower than dgx-h100's links could be"}, /* 1 GiB takes 4.7 s > 3.1 s */
		{1e-294, 8, false, "slower than"},            /* the 1e300 us */
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		char *text = one_row_log(c[i].busbw, c[i].size);
		cal_nccl *log = cal_nccl_new();
		cal_nccl_opts o = opts_op(-1, 0);
		ck_assert_msg(cal_nccl_parse(log, "row.log", text, &o, err, sizeof err) == 0, "case %zu: %s", i, err);
		int64_t id;
		int rc = cal_nccl_store(log, db, "dgx-h100", NULL, &id, err, sizeof err);
		if (c[i].ok) {
			ck_assert_msg(rc == 0, "case %zu: %s", i, err);
		} else {
			ck_assert_msg(rc == PP_EINPUT, "case %zu stored", i);
			ck_assert_msg(strstr(err, "row.log:5:") && strstr(err, c[i].why), "case %zu: %s", i, err);
		}
		cal_nccl_free(log);
		free(text);
	}
	ck_assert_int_eq(count_rows(db, "collective_rows"), 4); /* two cases, both halves of each */
	/* a log of zero-size rows only: nothing to store, and it says so */
	const char *zeros = "# Collective test starting: all_reduce_perf\n# nThread 1 nGpus 8\n"
			    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
			    "           0             0     float     sum      -1     0.10    0.00    0.00      0     0.09    0.00    0.00      0\n";
	cal_nccl *log = cal_nccl_new();
	cal_nccl_opts o = opts_op(-1, 0);
	ck_assert_int_eq(cal_nccl_parse(log, "zeros.log", zeros, &o, err, sizeof err), 0);
	int64_t id;
	ck_assert_int_eq(cal_nccl_store(log, db, "dgx-h100", NULL, &id, err, sizeof err), PP_EINPUT);
	ck_assert_msg(strstr(err, "zeros.log: nothing to import: all 2 half-rows were skipped") != NULL, "%s", err);
	cal_nccl_free(log);
	cJSON *runs;
	ck_assert_int_eq(hw_runs(db, &runs, err, sizeof err), 0);
	ck_assert_int_eq(cJSON_GetArraySize(runs), 2); /* the two accepted cases, no empty run */
	cJSON_Delete(runs);
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


/* ---- alpha-beta fits ----------------------------------------------------------------------- */

/* A curve from a known alpha-beta: 1 KiB .. 4 GiB. */
static size_t
ab_curve(double lat_s, double bw, double *w, double *t)
{
	size_t n = 0;
	for (double s = 1024; s <= 4294967296.0; s *= 2, n++) {
		w[n] = s * 1.75;
		t[n] = lat_s + w[n] / bw;
	}
	return n;
}

START_TEST(alpha_beta_exact)
{
	double w[40], t[40];
	size_t n = ab_curve(23.8e-6, 362e9, w, t);
	cal_ab_fit f;
	ck_assert_int_eq(cal_fit_alpha_beta(w, t, n, &f), 0);
	ck_assert_rel(f.latency_s, 23.8e-6, 1e-9);
	ck_assert_rel(f.busbw, 362e9, 1e-9);
	ck_assert(f.latency_determined && f.busbw_determined);
	ck_assert(f.rms_rel < 1e-9);
	/* Two sizes determine nothing. */
	ck_assert_int_eq(cal_fit_alpha_beta(w, t, 2, &f), PP_EINPUT);
	double tw[3] = {1, 1, 2}, tt[3] = {1e-5, 1e-5, 2e-5};
	ck_assert_int_eq(cal_fit_alpha_beta(tw, tt, 3, &f), PP_EINPUT);
}
END_TEST

START_TEST(alpha_beta_noise_and_protocol_bumps)
{
	double w[40], t[40];
	size_t n = ab_curve(30e-6, 300e9, w, t);
	/* Mid-size rows 80% slower (a protocol switch): left out of both ends, so the fit is exact. */
	double tb[40];
	memcpy(tb, t, sizeof tb);
	for (size_t i = 10; i < 13; i++)
		tb[i] *= 1.8;
	cal_ab_fit f;
	ck_assert_int_eq(cal_fit_alpha_beta(w, tb, n, &f), 0);
	ck_assert_rel(f.latency_s, 30e-6, 1e-9);
	ck_assert_rel(f.busbw, 300e9, 1e-9);
	ck_assert_uint_ge(f.downweighted, 3); /* the bumps, and sizes where neither term dominates */
	/* 2% multiplicative noise (seeded): both within 2%. */
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 42);
	for (size_t i = 0; i < n; i++)
		tb[i] = t[i] * exp(gsl_ran_gaussian(r, 0.02));
	gsl_rng_free(r);
	ck_assert_int_eq(cal_fit_alpha_beta(w, tb, n, &f), 0);
	ck_assert_rel(f.latency_s, 30e-6, 0.02);
	ck_assert_rel(f.busbw, 300e9, 0.02);
	/* Only large sizes: the bandwidth is there, the latency is not. */
	ck_assert_int_eq(cal_fit_alpha_beta(w + 17, t + 17, n - 17, &f), 0);
	ck_assert(f.busbw_determined && !f.latency_determined);
	ck_assert_rel(f.busbw, 300e9, 1e-9);
	/* Only small sizes: the other way round. */
	ck_assert_int_eq(cal_fit_alpha_beta(w, t, 6, &f), 0);
	ck_assert(!f.busbw_determined && f.latency_determined);
	ck_assert_rel(f.latency_s, 30e-6, 1e-3);
}
END_TEST

START_TEST(alpha_beta_real_curve)
{
	load_samples();
	/* Block 5 (A3 Mega, 16 ranks): 123 us at small sizes, 339 GB/s at 8 GiB. */
	cal_nccl *log = parse_ok("block5", samples[4], opts_op(HW_ALL_REDUCE, 0));
	double w[64], t[64];
	size_t n = 0;
	cal_nccl_block b;
	cal_nccl_block_get(log, 0, &b);
	for (size_t j = 0; j < b.nrows; j++) {
		hw_coll_row r;
		cal_nccl_row(log, 0, j, &r, NULL);
		if (r.in_place)
			continue;
		w[n] = (double)r.bytes * 1.875;
		t[n++] = r.time_s;
	}
	cal_ab_fit f;
	ck_assert_int_eq(cal_fit_alpha_beta(w, t, n, &f), 0);
	ck_assert_msg(f.latency_s > 120e-6 && f.latency_s < 140e-6, "latency %g", f.latency_s);
	ck_assert_msg(f.busbw > 335e9 && f.busbw < 350e9, "busbw %g", f.busbw);
	ck_assert(f.downweighted >= 5 && f.downweighted < n); /* mid sizes follow neither end */
	cal_nccl_free(log);
}
END_TEST

/* ---- the system fit ------------------------------------------------------------------------ */

/* Known parameters of the synthetic system, and the cost model's formulas (hardware/cost.c's
 * header) written out here independently. */
#define K_ALPHA 7.0
#define K_HOP_INTRA 1.2
#define K_HOP_INTER 3.5
#define K_EFF_AR 0.80
#define K_EFF_INTRA 0.72
#define K_P2P 0.70
#define K_EFF_INTER 0.75

static double
k_steps(hw_coll op, int n)
{
	return op == HW_ALL_REDUCE ? 2.0 * (n - 1) : op == HW_ALL_TO_ALL ? 2.0 : op == HW_SEND_RECV ? 1.0 : (double)(n - 1);
}

static void
add_curve(hw_run *run, const hw_system *sys, hw_coll op, int ranks, int nodes)
{
	int per = ranks / nodes;
	double lat, bw;
	if (nodes == 1) {
		lat = K_ALPHA + k_steps(op, ranks) * K_HOP_INTRA;
		double e = op == HW_ALL_REDUCE ? K_EFF_AR : op == HW_SEND_RECV ? K_P2P : K_EFF_INTRA;
		bw = sys->scaleup_gbps * 1e9 * e;
	} else {
		double ring = K_ALPHA + k_steps(op, ranks) * K_HOP_INTER;
		lat = ring;
		if (op == HW_ALL_REDUCE) {
			double tree = K_ALPHA + 2.0 * (per - 1) * K_HOP_INTRA + 2.0 * ceil(log2((double)nodes)) * K_HOP_INTER;
			lat = fmin(ring, tree);
		}
		double nic_gpu = sys->nics_per_node * sys->nic_gbit / 8.0 * 1e9 / sys->gpus_per_node;
		bw = per * nic_gpu * K_EFF_INTER;
		ck_assert(bw < sys->scaleup_gbps * 1e9 * K_EFF_INTRA); /* below cost.c's NVLink cap */
	}
	double f = op == HW_SEND_RECV ? 1.0 : hw_coll_busbw_factor(op, ranks);
	for (double s = 1024; s <= 4294967296.0; s *= 2) {
		hw_coll_row r = {.op = op, .ranks = ranks, .nodes = nodes, .bytes = (int64_t)s, .origin = "synthetic"};
		r.time_s = lat * 1e-6 + s * f / bw;
		r.algbw_gbps = s / r.time_s / 1e9;
		r.busbw_gbps = r.algbw_gbps * f;
		ck_assert_int_eq(hw_run_add_coll(run, &r, err, sizeof err), 0);
	}
}

static double
param(hw_db *db, const char *scope, const char *subject, const char *key, const char *origin)
{
	hw_param p;
	ck_assert_msg(hw_param_get(db, scope, subject, key, &p) == 0, "no parameter %s", key);
	ck_assert_msg(!strcmp(p.origin, origin), "%s has origin %s, expected %s", key, p.origin, origin);
	return p.value;
}

START_TEST(fit_collectives_recovers_known_parameters)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	hw_system sys;
	ck_assert_int_eq(hw_system_get(db, "dgx-h100", &sys, err, sizeof err), 0);
	hw_run_info info = {.system = "dgx-h100", .kind = "calibrate", .host = "synthetic", .nodes = 4, .gpus_per_node = 8};
	hw_run *run;
	ck_assert_int_eq(hw_run_begin(db, &info, &run, err, sizeof err), 0);
	static const hw_coll intra_ops[] = {HW_ALL_REDUCE, HW_ALL_GATHER, HW_REDUCE_SCATTER, HW_ALL_TO_ALL, HW_BROADCAST, HW_SEND_RECV};
	for (size_t i = 0; i < sizeof intra_ops / sizeof intra_ops[0]; i++)
		for (int g = 2; g <= 8; g *= 2)
			add_curve(run, &sys, intra_ops[i], g, 1);
	add_curve(run, &sys, HW_ALL_GATHER, 16, 2);
	add_curve(run, &sys, HW_REDUCE_SCATTER, 32, 4);
	add_curve(run, &sys, HW_ALL_REDUCE, 16, 2);
	int64_t id = hw_run_id(run);
	ck_assert_int_eq(hw_run_commit(run, true, err, sizeof err), 0);

	cJSON *rep;
	ck_assert_msg(cal_fit(db, "dgx-h100", 0, &rep, err, sizeof err) == 0, "%s", err);
	ck_assert_rel(param(db, "system", "dgx-h100", "coll_eff_intra_all_reduce", "fitted"), K_EFF_AR, 0.01);
	ck_assert_rel(param(db, "system", "dgx-h100", "coll_eff_intra", "fitted"), K_EFF_INTRA, 0.01);
	ck_assert_rel(param(db, "system", "dgx-h100", "p2p_eff_intra", "fitted"), K_P2P, 0.01);
	ck_assert_rel(param(db, "system", "dgx-h100", "coll_eff_inter", "fitted"), K_EFF_INTER, 0.01);
	ck_assert_rel(param(db, "system", "dgx-h100", "coll_alpha_us", "fitted"), K_ALPHA, 0.01);
	ck_assert_rel(param(db, "system", "dgx-h100", "coll_hop_intra_us", "fitted"), K_HOP_INTRA, 0.01);
	ck_assert_rel(param(db, "system", "dgx-h100", "coll_hop_inter_us", "fitted"), K_HOP_INTER, 0.01);
	ck_assert_int_eq(cJSON_GetObjectItem(rep, "run_id")->valueint, id);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(rep, "collectives")), 6 * 3 + 3);
	cJSON_Delete(rep);
	/* The cost model now predicts an unmeasured configuration -- all-to-all is never read from
	 * curves -- from the fitted parameters: 8 GPUs, 64 MiB. */
	hw_cost *c;
	ck_assert_int_eq(hw_cost_new(db, "dgx-h100", &c, err, sizeof err), 0);
	hw_prov p;
	double s = 67108864.0;
	double want = (K_ALPHA + 2.0 * K_HOP_INTRA) * 1e-6 + s * 7.0 / 8.0 / (sys.scaleup_gbps * 1e9 * K_EFF_INTRA);
	ck_assert_rel(hw_cost_coll_time(c, HW_ALL_TO_ALL, 8, 8, s, &p), want, 0.01);
	ck_assert_int_eq(p, HW_PROV_FITTED);
	hw_cost_free(c);
	/* Fitting one run, and a run that does not exist. */
	ck_assert_int_eq(cal_fit(db, "dgx-h100", id, NULL, err, sizeof err), 0);
	ck_assert_int_eq(cal_fit(db, "dgx-h100", id + 1, NULL, err, sizeof err), PP_ENOTFOUND);
	ck_assert(strstr(err, "no complete calibration run") != NULL);
	ck_assert_int_eq(cal_fit(db, "no-such-system", 0, NULL, err, sizeof err), PP_ENOTFOUND);
	/* A system without measurements: nothing to fit, nothing written. */
	ck_assert_int_eq(cal_fit(db, "dgx-a100", 0, &rep, err, sizeof err), PP_EINPUT);
	ck_assert(strstr(err, "no measurements to fit") != NULL);
	cJSON_Delete(rep);
	hw_param pa;
	ck_assert_int_eq(hw_param_get(db, "system", "dgx-a100", "coll_eff_intra", &pa), 0);
	ck_assert_str_eq(pa.origin, "default");
	hw_close(db);
}
END_TEST

/* Published logs fitted the way the shipped defaults were derived by hand from the same logs
 * (hardware/data/params.sql: busbw per NIC, x (k-1)/(n-1) for 2-node tree/NVLS all-reduce). */
START_TEST(fit_published_logs_reproduces_defaults)
{
	load_samples();
	static const struct {
		int sample, ranks;
		const char *system;
	} cases[] = {{0, 32, "dgx-a100"}, {1, 16, "aws-p4de"}, {2, 16, "aws-p5"}, {4, 0, "gcp-a3-mega"}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		hw_db *db;
		ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
		double def = param(db, "system", cases[i].system, "coll_eff_inter", "default");
		cal_nccl *log = parse_ok(cases[i].system, samples[cases[i].sample], opts_op(HW_ALL_REDUCE, cases[i].ranks));
		int64_t id;
		ck_assert_int_eq(cal_nccl_store(log, db, cases[i].system, NULL, &id, err, sizeof err), 0);
		cal_nccl_free(log);
		cJSON *rep;
		ck_assert_msg(cal_fit(db, cases[i].system, id, &rep, err, sizeof err) == 0, "%s", err);
		double fit = param(db, "system", cases[i].system, "coll_eff_inter", "fitted");
		ck_assert_msg(fabs(fit - def) <= 0.03 * def, "%s: fitted coll_eff_inter %.3f, shipped default %.3f",
			      cases[i].system, fit, def);
		/* Nothing one-node was measured: those stay as they were, with a reason. */
		hw_param p;
		ck_assert(hw_param_get(db, "system", cases[i].system, "coll_alpha_us", &p) == PP_ENOTFOUND ||
			  strcmp(p.origin, "fitted") != 0);
		ck_assert_int_gt(cJSON_GetArraySize(cJSON_GetObjectItem(rep, "skipped")), 3);
		cJSON_Delete(rep);
		hw_close(db);
	}
}
END_TEST

/* GEMM rows from the cost model's own shape model with known efficiency, k ramp and launch. */
static gsl_rng *gemm_noise; /* NULL: exact rows */

static void
add_gemms(hw_run *run, const hw_gpu *gpu, hw_dtype t, double eff, double kr, double launch_s, double hbm,
	  bool large_only)
{
	cal_gemm_shape *sh;
	size_t n;
	ck_assert_int_eq(cal_gemm_shapes(NULL, 0, &sh, &n, err, sizeof err), 0);
	for (size_t i = 0; i < n; i++) {
		double m = (double)sh[i].m, nn = (double)sh[i].n, k = (double)sh[i].k;
		if (large_only && (k != 8192 || m < 2048 || nn < 2048))
			continue;
		double compute = 2 * m * nn * k / (gpu->peak_tflops[t] * 1e12 * eff * hw_gemm_shape_eff(gpu, kr, m, nn, k));
		double mem = (m * k + k * nn + m * nn) * hw_dtype_bytes(t) / hbm;
		double time = launch_s + fmax(compute, mem);
		if (gemm_noise != NULL)
			time *= exp(gsl_ran_gaussian(gemm_noise, 0.03));
		ck_assert_int_eq(hw_run_add_gemm(run, 0, t, sh[i].m, sh[i].n, sh[i].k, time, err, sizeof err), 0);
	}
	free(sh);
}

START_TEST(fit_gemm_and_membw_recover_known_parameters)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	hw_system sys;
	ck_assert_int_eq(hw_system_get(db, "dgx-h100", &sys, err, sizeof err), 0);
	const hw_gpu *gpu = &sys.gpu;
	hw_run_info info = {.system = "dgx-h100", .kind = "calibrate", .gpu_name = "NVIDIA H100 80GB HBM3"};
	hw_run *run;
	ck_assert_int_eq(hw_run_begin(db, &info, &run, err, sizeof err), 0);
	const double hbm = gpu->hbm_gbps * 1e9 * 0.90, kr = 96, launch = 4.5e-6;
	for (double b = 268435456.0; b <= 8589934592.0; b *= 2) {
		ck_assert_int_eq(hw_run_add_membw(run, 0, "copy", (int64_t)b, 2e-6 + b / hbm, err, sizeof err), 0);
		ck_assert_int_eq(hw_run_add_membw(run, 0, "readwrite", (int64_t)b, 2e-6 + b / (0.97 * hbm), err, sizeof err), 0);
	}
	add_gemms(run, gpu, HW_BF16, 0.78, kr, launch, hbm, false);
	add_gemms(run, gpu, HW_FP16, 0.74, kr, launch, hbm, false);
	add_gemms(run, gpu, HW_FP8, 0.62, kr, launch, hbm, false);
	ck_assert_int_eq(hw_run_commit(run, true, err, sizeof err), 0);
	cJSON *rep;
	ck_assert_msg(cal_fit(db, "dgx-h100", 0, &rep, err, sizeof err) == 0, "%s", err);
	ck_assert_msg(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(rep, "gemm"), "joint_fit")), "%s",
		      cJSON_PrintUnformatted(cJSON_GetObjectItem(rep, "gemm")));
	cJSON_Delete(rep);
	ck_assert_rel(param(db, "gpu", "h100-sxm", "hbm_eff", "fitted"), 0.90, 0.01);
	ck_assert_rel(param(db, "gpu", "h100-sxm", "gemm_k_ramp", "fitted"), kr, 0.01);
	ck_assert_rel(param(db, "gpu", "h100-sxm", "kernel_launch_us", "fitted"), 4.5, 0.01);
	ck_assert_rel(param(db, "gpu", "h100-sxm", "gemm_eff_bf16", "fitted"), 0.78, 0.01);
	ck_assert_rel(param(db, "gpu", "h100-sxm", "gemm_eff_fp16", "fitted"), 0.74, 0.01);
	ck_assert_rel(param(db, "gpu", "h100-sxm", "gemm_eff_fp8", "fitted"), 0.62, 0.01);
	hw_close(db);
}
END_TEST


START_TEST(fit_gemm_with_noise)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	hw_system sys;
	ck_assert_int_eq(hw_system_get(db, "dgx-h100", &sys, err, sizeof err), 0);
	const double hbm = sys.gpu.hbm_gbps * 1e9 * param(db, "gpu", "h100-sxm", "hbm_eff", "default");
	hw_run_info info = {.system = "dgx-h100", .kind = "calibrate"};
	hw_run *run;
	ck_assert_int_eq(hw_run_begin(db, &info, &run, err, sizeof err), 0);
	gemm_noise = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(gemm_noise, 7);
	add_gemms(run, &sys.gpu, HW_BF16, 0.78, 96, 4.5e-6, hbm, false);
	add_gemms(run, &sys.gpu, HW_FP8, 0.62, 96, 4.5e-6, hbm, false);
	gsl_rng_free(gemm_noise);
	gemm_noise = NULL;
	ck_assert_int_eq(hw_run_commit(run, true, err, sizeof err), 0);
	cJSON *rep;
	ck_assert_msg(cal_fit(db, "dgx-h100", 0, &rep, err, sizeof err) == 0, "%s", err);
	cJSON *g = cJSON_GetObjectItem(rep, "gemm");
	ck_assert_msg(cJSON_IsTrue(cJSON_GetObjectItem(g, "joint_fit")), "%s", cJSON_PrintUnformatted(g));
	/* 3% noise per row over ~700 shapes per dtype: the parameters within a few percent. */
	ck_assert_rel(param(db, "gpu", "h100-sxm", "gemm_eff_bf16", "fitted"), 0.78, 0.02);
	ck_assert_rel(param(db, "gpu", "h100-sxm", "gemm_eff_fp8", "fitted"), 0.62, 0.02);
	ck_assert_rel(param(db, "gpu", "h100-sxm", "gemm_k_ramp", "fitted"), 96, 0.10);
	ck_assert_rel(param(db, "gpu", "h100-sxm", "kernel_launch_us", "fitted"), 4.5, 0.05);
	cJSON_Delete(rep);
	hw_close(db);
}
END_TEST

START_TEST(fit_gemm_without_k_spread_keeps_k_ramp)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	hw_system sys;
	ck_assert_int_eq(hw_system_get(db, "dgx-h100", &sys, err, sizeof err), 0);
	double kr = param(db, "gpu", "h100-sxm", "gemm_k_ramp", "default");
	double launch = param(db, "gpu", "h100-sxm", "kernel_launch_us", "default") * 1e-6;
	double hbm = sys.gpu.hbm_gbps * 1e9 * param(db, "gpu", "h100-sxm", "hbm_eff", "default");
	hw_run_info info = {.system = "dgx-h100", .kind = "calibrate"};
	hw_run *run;
	ck_assert_int_eq(hw_run_begin(db, &info, &run, err, sizeof err), 0);
	add_gemms(run, &sys.gpu, HW_BF16, 0.81, kr, launch, hbm, true);
	ck_assert_int_eq(hw_run_commit(run, true, err, sizeof err), 0);
	cJSON *rep;
	ck_assert_msg(cal_fit(db, "dgx-h100", 0, &rep, err, sizeof err) == 0, "%s", err);
	/* Large shapes of one k: the efficiency is measured, k_ramp and the launch are not. */
	ck_assert_rel(param(db, "gpu", "h100-sxm", "gemm_eff_bf16", "fitted"), 0.81, 1e-6);
	ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(rep, "gemm"), "why_not_joint")->valuestring,
			 "k spans less than a factor of 8");
	hw_param p;
	ck_assert_int_eq(hw_param_get(db, "gpu", "h100-sxm", "gemm_k_ramp", &p), 0);
	ck_assert_str_eq(p.origin, "default");
	cJSON_Delete(rep);
	hw_close(db);
}
END_TEST

START_TEST(fit_read_only_writes_nothing)
{
	const char *dir = test_tmpdir("calfitro");
	char file[1200];
	snprintf(file, sizeof file, "%s/ro.db", dir);
	hw_db *db;
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), 0);
	hw_system sys;
	ck_assert_int_eq(hw_system_get(db, "dgx-h100", &sys, err, sizeof err), 0);
	hw_run_info info = {.system = "dgx-h100", .kind = "calibrate"};
	hw_run *run;
	ck_assert_int_eq(hw_run_begin(db, &info, &run, err, sizeof err), 0);
	add_curve(run, &sys, HW_ALL_REDUCE, 8, 1);
	ck_assert_int_eq(hw_run_commit(run, true, err, sizeof err), 0);
	hw_close(db);
	ck_assert_int_eq(hw_open(file, HW_OPEN_READONLY, &db, err, sizeof err), 0);
	ck_assert_int_eq(cal_fit(db, "dgx-h100", 0, NULL, err, sizeof err), PP_EIO);
	ck_assert(strstr(err, "read-only") != NULL);
	hw_close(db);
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), 0);
	hw_param p;
	ck_assert_int_eq(hw_param_get(db, "system", "dgx-h100", "coll_eff_intra_all_reduce", &p), 0);
	ck_assert_str_eq(p.origin, "default");
	hw_close(db);
	test_rmdir(dir);
}
END_TEST

/* ---- the sweeps of 'paraplan calibrate' ---------------------------------------------------- */

START_TEST(gemm_shapes_are_the_documented_ones)
{
	cal_gemm_shape *sh;
	size_t n;
	ck_assert_int_eq(cal_gemm_shapes(NULL, 0, &sh, &n, err, sizeof err), 0);
	/* The rules of docs/calibration.md, written out again: every listed shape is in the sweep. */
	static const long hidden[] = {2048, 4096, 5120, 8192, 12288, 16384}, tp[] = {1, 2, 4, 8}, tokens[] = {2048, 8192, 16384},
			  grid[] = {128, 512, 2048, 8192};
	size_t want = 0;
	long (*all)[3] = malloc(6 * 4 * 3 * 12 * sizeof *all + 70 * sizeof *all);
	for (int a = 0; a < 6; a++)
		for (int b = 0; b < 4; b++)
			for (int c = 0; c < 3; c++) {
				long h = hidden[a], t = tp[b], T = tokens[c];
				long lin[4][2] = {{3 * h / t, h}, {h, h / t}, {4 * h / t, h}, {h, 4 * h / t}};
				for (int l = 0; l < 4; l++) {
					long N = lin[l][0], K = lin[l][1];
					long s3[3][3] = {{T, N, K}, {T, K, N}, {N, K, T}};
					for (int q = 0; q < 3; q++)
						memcpy(all[want++], s3[q], sizeof s3[q]);
				}
			}
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			for (int k = 0; k < 4; k++) {
				long g[3] = {grid[i], grid[j], grid[k]};
				memcpy(all[want++], g, sizeof g);
			}
	long tiny[3] = {64, 64, 64};
	memcpy(all[want++], tiny, sizeof tiny);
	size_t distinct = 0;
	for (size_t i = 0; i < want; i++) {
		bool dup = false;
		for (size_t j = 0; j < i && !dup; j++)
			dup = !memcmp(all[i], all[j], sizeof all[i]);
		distinct += !dup;
		bool found = false;
		for (size_t j = 0; j < n && !found; j++)
			found = sh[j].m == all[i][0] && sh[j].n == all[i][1] && sh[j].k == all[i][2];
		ck_assert_msg(found, "shape %ldx%ldx%ld missing", all[i][0], all[i][1], all[i][2]);
	}
	ck_assert_uint_eq(n, distinct); /* and nothing else */
	free(all);
	/* Sorted, unique, dimensions multiples of 16 (FP8 cuBLASLt needs them), kinds marked. */
	for (size_t i = 0; i < n; i++) {
		ck_assert(sh[i].m % 16 == 0 && sh[i].n % 16 == 0 && sh[i].k % 16 == 0);
		ck_assert(sh[i].kinds != 0);
		if (i > 0)
			ck_assert(sh[i - 1].m < sh[i].m || (sh[i - 1].m == sh[i].m && (sh[i - 1].n < sh[i].n ||
											  (sh[i - 1].n == sh[i].n && sh[i - 1].k < sh[i].k))));
	}
	/* Llama-3-8B's MLP up-projection at TP 1, 8192 tokens: 8192 x 16384 x 4096. */
	bool llama = false;
	for (size_t i = 0; i < n; i++)
		llama = llama || (sh[i].m == 8192 && sh[i].n == 16384 && sh[i].k == 4096 && (sh[i].kinds & CAL_SHAPE_TRANSFORMER));
	ck_assert(llama);
	free(sh);
}
END_TEST

static bool
has_shape(const cal_gemm_shape *sh, size_t n, int64_t m, int64_t nn, int64_t k, unsigned kind)
{
	for (size_t i = 0; i < n; i++)
		if (sh[i].m == m && sh[i].n == nn && sh[i].k == k && (sh[i].kinds & kind))
			return true;
	return false;
}

/* --model adds a model's own linear layers.  Llama 2 13B (h 5120, 40 heads of 128, MLP 13,824
 * gated): at TP 1 the QKV is 15,360 x 5,120 and the MLP up 27,648 x 5,120; at TP 8 the MLP down
 * takes 1,728 inputs, and none of these is in the generic sweep (its MLPs are 4h wide).  GPT-2
 * XL (h 1600, 25 heads of 64) at TP 8: QKV 600 outputs, launched as 608 (a multiple of 16).
 * Mixtral's routed experts (14,336 wide, gated) at TP 2: 14,336 x 4,096. */
START_TEST(gemm_shapes_of_named_models)
{
	model *m[3];
	const char *names[3] = {"llama-2-13b", "gpt2-xl", "mixtral-8x7b"};
	const model_tf *t[3];
	for (int i = 0; i < 3; i++) {
		ck_assert_msg(model_load(names[i], &m[i], err, sizeof err) == 0, "%s", err);
		t[i] = model_transformer(m[i]);
	}
	cal_gemm_shape *base, *sh;
	size_t nb, n;
	ck_assert_int_eq(cal_gemm_shapes(NULL, 0, &base, &nb, err, sizeof err), 0);
	ck_assert_int_eq(cal_gemm_shapes(t, 3, &sh, &n, err, sizeof err), 0);
	ck_assert_uint_gt(n, nb);
	for (size_t i = 0; i < nb; i++) /* the generic sweep stays */
		ck_assert(has_shape(sh, n, base[i].m, base[i].n, base[i].k, base[i].kinds));
	for (int64_t T = 2048; T <= 16384; T *= 4 /* 2048, 8192 */) {
		ck_assert(has_shape(sh, n, T, 15360, 5120, CAL_SHAPE_MODEL));  /* QKV forward */
		ck_assert(has_shape(sh, n, T, 27648, 5120, CAL_SHAPE_MODEL));  /* MLP up */
		ck_assert(has_shape(sh, n, T, 13824, 5120, CAL_SHAPE_MODEL));  /* MLP down's dgrad at TP 1 */
		ck_assert(has_shape(sh, n, T, 5120, 1728, CAL_SHAPE_MODEL));   /* MLP down at TP 8 */
		ck_assert(has_shape(sh, n, 5120, 1728, T, CAL_SHAPE_MODEL));   /* its wgrad */
		ck_assert(!has_shape(base, nb, T, 27648, 5120, ~0u));
		ck_assert(has_shape(sh, n, T, 608, 1600, CAL_SHAPE_MODEL));    /* GPT-2 XL QKV at TP 8 */
		ck_assert(has_shape(sh, n, T, 14336, 4096, CAL_SHAPE_MODEL));  /* a Mixtral expert's up at TP 2 */
	}
	ck_assert(has_shape(sh, n, 16384, 27648, 5120, CAL_SHAPE_MODEL));
	for (size_t i = 0; i < n; i++) {
		ck_assert(sh[i].m % 16 == 0 && sh[i].n % 16 == 0 && sh[i].k % 16 == 0);
		if (i > 0)
			ck_assert(sh[i - 1].m < sh[i].m || (sh[i - 1].m == sh[i].m && (sh[i - 1].n < sh[i].n ||
											  (sh[i - 1].n == sh[i].n && sh[i - 1].k < sh[i].k))));
	}
	free(base);
	free(sh);
	for (int i = 0; i < 3; i++)
		model_free(m[i]);
}
END_TEST

START_TEST(collective_and_membw_sizes)
{
	int64_t s[64];
	ck_assert_uint_eq(cal_coll_sizes(0, s, 64), 23); /* 1 KiB .. 4 GiB */
	ck_assert_int_eq(s[0], 1024);
	ck_assert_int_eq(s[22], (int64_t)4 << 30);
	ck_assert_uint_eq(cal_coll_sizes((int64_t)1 << 30, s, 64), 21);
	ck_assert_uint_eq(cal_coll_sizes((int64_t)1 << 30, s, 5), 5);
	int g[8];
	ck_assert_uint_eq(cal_group_sizes(8, g, 8), 3);
	ck_assert(g[0] == 2 && g[1] == 4 && g[2] == 8);
	ck_assert_uint_eq(cal_group_sizes(6, g, 8), 3);
	ck_assert(g[2] == 6);
	ck_assert_uint_eq(cal_group_sizes(1, g, 8), 0);
	ck_assert_uint_eq(cal_group_sizes(2, g, 8), 1);
	/* H100: 50 MiB of L2, so buffers from 256 MiB (the first power of two >= 200 MiB) to 4 GiB. */
	ck_assert_uint_eq(cal_membw_sizes(52428800.0, (int64_t)4 << 30, s, 64), 5);
	ck_assert_int_eq(s[0], 268435456);
	ck_assert_uint_eq(cal_membw_sizes(4194304.0, (int64_t)1 << 30, s, 64), 5); /* T4: 64 MiB floor */
	ck_assert_int_eq(s[0], 67108864);
}
END_TEST

START_TEST(nccl_tests_layout_and_busbw)
{
	cal_coll_layout L;
	/* all_gather of 1 MiB on 3 ranks of floats: 87381 per rank, 1048572 bytes, as nccl-tests. */
	ck_assert_int_eq(cal_coll_layout_get(HW_ALL_GATHER, 1048576, 3, 4, &L), 0);
	ck_assert_int_eq(L.send_count, 87381);
	ck_assert_int_eq(L.recv_count, 87381 * 3);
	ck_assert_int_eq(L.bytes, 1048572);
	ck_assert_int_eq(cal_coll_layout_get(HW_REDUCE_SCATTER, 1048576, 8, 4, &L), 0);
	ck_assert(L.send_count == 262144 && L.recv_count == 32768 && L.bytes == 1048576);
	ck_assert_int_eq(cal_coll_layout_get(HW_ALL_TO_ALL, 1024, 8, 4, &L), 0);
	ck_assert(L.chunk == 32 && L.send_count == 256 && L.bytes == 1024);
	ck_assert_int_eq(cal_coll_layout_get(HW_ALL_REDUCE, 4096, 8, 4, &L), 0);
	ck_assert(L.send_count == 1024 && L.recv_count == 1024 && L.bytes == 4096);
	ck_assert_int_eq(cal_coll_layout_get(HW_ALL_TO_ALL, 16, 8, 4, &L), PP_ERANGE);
	/* nccl-tests doc/PERFORMANCE.md: 2(n-1)/n, (n-1)/n, 1. */
	ck_assert_rel(hw_coll_busbw_factor(HW_ALL_REDUCE, 8), 1.75, 1e-12);
	ck_assert_rel(hw_coll_busbw_factor(HW_ALL_GATHER, 8), 0.875, 1e-12);
	ck_assert_rel(hw_coll_busbw_factor(HW_REDUCE_SCATTER, 16), 0.9375, 1e-12);
	ck_assert_rel(hw_coll_busbw_factor(HW_ALL_TO_ALL, 4), 0.75, 1e-12);
	ck_assert_rel(hw_coll_busbw_factor(HW_BROADCAST, 8), 1.0, 1e-12);
	ck_assert_rel(hw_coll_busbw_factor(HW_SEND_RECV, 8), 1.0, 1e-12);
}
END_TEST

/* ---- the run transaction and Ctrl-C -------------------------------------------------------- */

START_TEST(interrupted_run_leaves_nothing)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	hw_run_info info = {.system = "dgx-h100", .kind = "calibrate", .host = "test"};
	cal_sig_install();
	cal_rec rec;
	ck_assert_int_eq(cal_rec_begin(db, &info, &rec, err, sizeof err), 0);
	ck_assert_int_eq(cal_rec_check(&rec, err, sizeof err), 0);
	ck_assert_int_eq(cal_rec_gemm(&rec, 0, HW_BF16, 4096, 4096, 4096, 2e-4, err, sizeof err), 0);
	ck_assert_int_eq(cal_rec_membw(&rec, 0, "copy", 1 << 30, 4e-4, err, sizeof err), 0);
	/* Ctrl-C: the handler only sets the flag; the next check stops the run. */
	raise(SIGINT);
	ck_assert(cal_sig_caught());
	ck_assert_int_eq(cal_rec_check(&rec, err, sizeof err), PP_EINTR);
	int64_t id;
	ck_assert_int_eq(cal_rec_end(&rec, 0, &id, err, sizeof err), PP_EINTR);
	ck_assert(strstr(err, "nothing was written") != NULL);
	ck_assert_int_eq(id, 0);
	ck_assert_int_eq(count_rows(db, "gemm_rows") + count_rows(db, "bandwidth_rows"), 0);
	cJSON *runs;
	ck_assert_int_eq(hw_runs(db, &runs, err, sizeof err), 0);
	ck_assert_int_eq(cJSON_GetArraySize(runs), 0);
	cJSON_Delete(runs);
	/* An error in the middle: rolled back too. */
	cal_sig_clear();
	ck_assert_int_eq(cal_rec_begin(db, &info, &rec, err, sizeof err), 0);
	ck_assert_int_eq(cal_rec_gemm(&rec, 0, HW_BF16, 4096, 4096, 4096, 2e-4, err, sizeof err), 0);
	ck_assert_int_eq(cal_rec_gemm(&rec, 0, HW_BF16, 4096, 4096, 4096, -1, err, sizeof err), PP_ERANGE);
	ck_assert_int_eq(cal_rec_end(&rec, PP_ERANGE, &id, err, sizeof err), PP_ERANGE);
	ck_assert_int_eq(count_rows(db, "gemm_rows"), 0);
	/* A run that finishes is committed whole. */
	ck_assert_int_eq(cal_rec_begin(db, &info, &rec, err, sizeof err), 0);
	ck_assert_int_eq(cal_rec_gemm(&rec, 0, HW_BF16, 4096, 4096, 4096, 2e-4, err, sizeof err), 0);
	ck_assert_int_eq(cal_rec_end(&rec, 0, &id, err, sizeof err), 0);
	ck_assert_int_gt(id, 0);
	ck_assert_int_eq(count_rows(db, "gemm_rows"), 1);
	/* A process that writes nothing (an MPI rank other than 0) records nothing and succeeds. */
	ck_assert_int_eq(cal_rec_begin(NULL, &info, &rec, err, sizeof err), 0);
	ck_assert_int_eq(cal_rec_gemm(&rec, 0, HW_BF16, 1, 1, 1, 1, err, sizeof err), 0);
	ck_assert_int_eq(cal_rec_end(&rec, 0, &id, err, sizeof err), 0);
	cal_sig_restore();
	hw_close(db);
}
END_TEST

START_TEST(no_gpu_says_so_and_opens_nothing)
{
	/* Hide every device (a machine with GPUs behaves like one without). */
	setenv("CUDA_VISIBLE_DEVICES", "", 1);
	/* The GPU programs are a module (paraplan-gpu.so) the build leaves beside paraplan, not
	 * beside this test program: name it, so that the module itself answers below. */
	const char *bd = getenv("top_builddir");
	char mod[1024];
	snprintf(mod, sizeof mod, "%s/paraplan-gpu.so", bd ? bd : ".");
	setenv("PARAPLAN_GPU_MODULE", mod, 0);
	int ndev = -1;
	err[0] = '\0';
	ck_assert_int_eq(cal_gpu_probe(&ndev, err, sizeof err), PP_ENODEV);
	ck_assert_int_eq(ndev, 0);
	if (cal_gpu_built())
		ck_assert_msg(!strncmp(err, "no GPU found: ", 14), "%s", err);
	else
		ck_assert_msg(strstr(err, "built without CUDA and NCCL") != NULL, "%s", err);
	const char *dir = test_tmpdir("calnogpu");
	char file[1200];
	snprintf(file, sizeof file, "%s/never.db", dir);
	cal_gpu_opts o = {.db_path = file, .system = "dgx-h100"};
	cJSON *rep = NULL;
	bool root = false;
	ck_assert_int_eq(cal_gpu_run(&o, &rep, &root, err, sizeof err), PP_ENODEV);
	ck_assert(root);
	ck_assert_ptr_null(rep);
	struct stat st;
	ck_assert_msg(stat(file, &st) != 0, "the database was created without a GPU");
	test_rmdir(dir);
}
END_TEST

/* ---- the minimizers of the profile fits ----------------------------------------------------- */

/* y = a exp(-b t) at t = 0 .. 9, a = 2, b = 0.5: the residuals vanish at the truth */
static int
decay_resid(const double *x, double *r, void *arg)
{
	(void)arg;
	for (int i = 0; i < 10; i++)
		r[i] = x[0] * exp(-x[1] * i) - 2.0 * exp(-0.5 * i);
	return 0;
}

static int
stop_resid(const double *x, double *r, void *arg)
{
	int *calls = arg;
	(void)x;
	for (int i = 0; i < 3; i++)
		r[i] = 1.0;
	return ++*calls > 2 ? PP_EIO : 0;
}

START_TEST(least_squares_recovers_and_respects_bounds)
{
	cal_param p[2] = {{"a", 0.1, 10.0, 1.0}, {"b", 0.01, 2.0, 0.1}};
	double best[2], cost;
	int evals = 0;
	ck_assert_int_eq(cal_least_squares(p, 2, 10, decay_resid, NULL, 100, best, &cost, &evals, err, sizeof err), 0);
	ck_assert_rel(best[0], 2.0, 1e-3);
	ck_assert_rel(best[1], 0.5, 1e-3);
	ck_assert(cost < 1e-8 && evals > 3);
	/* b's box ends at 0.3: the best point sits at its edge, never outside */
	p[1].hi = 0.3;
	ck_assert_int_eq(cal_least_squares(p, 2, 10, decay_resid, NULL, 100, best, &cost, NULL, err, sizeof err), 0);
	ck_assert(best[1] <= 0.3 && best[1] > 0.29);
	/* the parameters' coordinates go there and back */
	for (double v = 0.02; v < 0.3; v += 0.05)
		ck_assert_rel(cal_param_value(&p[1], cal_param_u(&p[1], v)), v, 1e-9);
	/* usage errors and a residual function that stops the fit */
	ck_assert_int_eq(cal_least_squares(p, 2, 1, decay_resid, NULL, 10, best, &cost, NULL, err, sizeof err), PP_EUSAGE);
	p[0].hi = p[0].lo;
	ck_assert_int_eq(cal_least_squares(p, 2, 10, decay_resid, NULL, 10, best, &cost, NULL, err, sizeof err), PP_EUSAGE);
	ck_assert_msg(strstr(err, "a: empty range") != NULL, "%s", err);
	int calls = 0;
	cal_param q = {"q", 0.0, 1.0, 0.5};
	ck_assert_int_eq(cal_least_squares(&q, 1, 3, stop_resid, &calls, 10, best, &cost, NULL, err, sizeof err), PP_EIO);
}
END_TEST

static double
bowl(const double *x, void *arg)
{
	(void)arg;
	return (x[0] - 0.3) * (x[0] - 0.3) + 4.0 * (x[1] - 0.7) * (x[1] - 0.7);
}

START_TEST(nelder_mead_finds_the_bowl)
{
	cal_param p[2] = {{"x", 0.0, 1.0, 0.9}, {"y", 0.0, 1.0, 0.1}};
	double best[2], f;
	int evals;
	ck_assert_int_eq(cal_minimize(p, 2, bowl, NULL, 400, best, &f, &evals, err, sizeof err), 0);
	ck_assert(fabs(best[0] - 0.3) < 0.01 && fabs(best[1] - 0.7) < 0.01 && evals <= 410);
	/* never worse than the start: one evaluation allowed */
	ck_assert_int_eq(cal_minimize(p, 2, bowl, NULL, 1, best, &f, NULL, err, sizeof err), 0);
	ck_assert(f <= bowl((double[]){0.9, 0.1}, NULL));
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
	tcase_add_test(tc, sample_alltoall_empty_redop);
	tcase_add_test(tc, stacked_launcher_prefixes);
	tcase_add_test(tc, sample_sendrecv_na);
	tcase_add_test(tc, op_from_file_name);
	tcase_add_test(tc, several_runs_in_one_file);
	tcase_add_test(tc, malformed_rows);
	tcase_add_test(tc, store_one_import_run);
	tcase_add_test(tc, rows_within_the_system);
	tcase_add_test(tc, store_read_only_writes_nothing);
	suite_add_tcase(s, tc);
	tc = tcase_create("fit");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, alpha_beta_exact);
	tcase_add_test(tc, alpha_beta_noise_and_protocol_bumps);
	tcase_add_test(tc, alpha_beta_real_curve);
	tcase_add_test(tc, fit_collectives_recovers_known_parameters);
	tcase_add_test(tc, fit_published_logs_reproduces_defaults);
	tcase_add_test(tc, fit_gemm_and_membw_recover_known_parameters);
	tcase_add_test(tc, fit_gemm_with_noise);
	tcase_add_test(tc, fit_gemm_without_k_spread_keeps_k_ramp);
	tcase_add_test(tc, fit_read_only_writes_nothing);
	tcase_add_test(tc, least_squares_recovers_and_respects_bounds);
	tcase_add_test(tc, nelder_mead_finds_the_bowl);
	suite_add_tcase(s, tc);
	tc = tcase_create("calibrate");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, gemm_shapes_are_the_documented_ones);
	tcase_add_test(tc, gemm_shapes_of_named_models);
	tcase_add_test(tc, collective_and_membw_sizes);
	tcase_add_test(tc, nccl_tests_layout_and_busbw);
	tcase_add_test(tc, interrupted_run_leaves_nothing);
	tcase_add_test(tc, no_gpu_says_so_and_opens_nothing);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return test_run(cal_suite());
}
