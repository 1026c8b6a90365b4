/*
 * check_hw.c -- the hardware database: schema creation and migration, the defaults, datasheet
 * cross-checks, prices, read-only, corrupt and newer-schema files, calibration runs that land
 * whole or not at all, and prepared statements against hostile names.
 */
#include "config.h"
#include "common/pp.h"
#include "hardware/hw.h"
#include "tests/testutil.h"

#include <cJSON.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>

static char err[1024];

static void
sql_exec(const char *path, const char *sql)
{
	sqlite3 *db;
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	char *msg = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
	ck_assert_msg(rc == SQLITE_OK, "sql failed: %s", msg ? msg : "?");
	sqlite3_close(db);
}

static long
sql_count(hw_db *db, const char *path, const char *sql)
{
	(void)db;
	sqlite3 *s;
	ck_assert_int_eq(sqlite3_open_v2(path, &s, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_stmt *st;
	ck_assert_int_eq(sqlite3_prepare_v2(s, sql, -1, &st, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	long n = (long)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(s);
	return n;
}

static char *
slurp(const char *path, size_t *len)
{
	char *t;
	ck_assert_int_eq(pp_read_file(path, 1 << 26, &t, len, err, sizeof err), 0);
	return t;
}

START_TEST(defaults_load_in_memory)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	hw_system s;
	ck_assert_int_eq(hw_system_get(db, "dgx-h100", &s, err, sizeof err), 0);
	ck_assert_str_eq(s.gpu.name, "h100-sxm");
	ck_assert_int_eq(s.gpus_per_node, 8);
	ck_assert_rel(s.gpu.peak_tflops[HW_BF16], 989.4, 1e-6);
	ck_assert_int_eq(hw_system_get(db, "no-such-system", &s, err, sizeof err), PP_ENOTFOUND);
	ck_assert(strstr(err, "no-such-system") != NULL);
	cJSON *doc;
	ck_assert_int_eq(hw_list(db, &doc, err, sizeof err), 0);
	ck_assert_int_ge(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "gpus")), 2);
	cJSON_Delete(doc);
	/* Every figure of 'hw show' names a source. */
	ck_assert_int_eq(hw_show(db, "dgx-h100", &doc, err, sizeof err), 0);
	const cJSON *f;
	int n = 0;
	cJSON_ArrayForEach(f, cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "gpu"), "figures"))
	{
		ck_assert(strlen(cJSON_GetObjectItem(f, "source")->valuestring) > 10);
		n++;
	}
	ck_assert_int_ge(n, 10);
	cJSON_Delete(doc);
	hw_close(db);
}
END_TEST

/* peak = clock x tensor units x dense FP16 FLOPs per clock per unit, where the reference gives
 * all three (hardware.md 1.1: "How peaks are derived"). */
START_TEST(peaks_match_clock_times_units)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	const char *path = hw_path(db);
	ck_assert_str_eq(path, ":memory:");
	hw_close(db);
	const char *dir = test_tmpdir("hwpeak");
	char file[1200];
	snprintf(file, sizeof file, "%s/hw.db", dir);
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), 0);
	hw_close(db);
	sqlite3 *s;
	ck_assert_int_eq(sqlite3_open(file, &s), SQLITE_OK);
	sqlite3_stmt *st;
	ck_assert_int_eq(sqlite3_prepare_v2(s,
					    "SELECT name, boost_mhz, tensor_units, fp16_flops_per_clock_unit, fp16_tflops FROM gpu"
					    " WHERE tensor_units IS NOT NULL AND fp16_flops_per_clock_unit IS NOT NULL",
					    -1, &st, NULL),
			 SQLITE_OK);
	int checked = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		double derived = sqlite3_column_double(st, 1) * 1e6 * sqlite3_column_double(st, 2) *
				 sqlite3_column_double(st, 3) / 1e12;
		double peak = sqlite3_column_double(st, 4);
		ck_assert_msg(fabs(derived - peak) <= 0.01 * peak, "%s: clock x units gives %.1f, datasheet %.1f",
			      sqlite3_column_text(st, 0), derived, peak);
		checked++;
	}
	sqlite3_finalize(st);
	sqlite3_close(s);
	ck_assert_int_ge(checked, 2);
	test_rmdir(dir);
}
END_TEST

START_TEST(create_file_and_reopen)
{
	const char *dir = test_tmpdir("hwfile");
	char file[1200];
	snprintf(file, sizeof file, "%s/sub/hw.db", dir);
	hw_db *db;
	/* An explicit path in a missing directory is an error that names it. */
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), PP_EIO);
	ck_assert(strstr(err, "does not exist") != NULL);
	snprintf(file, sizeof file, "%s/hw.db", dir);
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), 0);
	ck_assert_ptr_null(hw_notice(db));
	hw_close(db);
	ck_assert_int_eq(sql_count(NULL, file, "PRAGMA user_version"), HW_SCHEMA_VERSION);
	long gpus = sql_count(NULL, file, "SELECT count(*) FROM gpu WHERE origin = 'default'");
	ck_assert_int_ge(gpus, 2);
	/* Reopening does not duplicate the defaults. */
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), 0);
	hw_close(db);
	ck_assert_int_eq(sql_count(NULL, file, "SELECT count(*) FROM gpu WHERE origin = 'default'"), gpus);
	/* Stale defaults are replaced, user rows kept. */
	sql_exec(file, "UPDATE meta SET value = 'old' WHERE key = 'defaults_hash';"
		       "UPDATE gpu SET hbm_gbps = 1 WHERE name = 'h100-sxm';"
		       "INSERT INTO gpu(name, vendor, arch, memory_bytes, hbm_gbps, source) VALUES('my-gpu','x','y',1,1,'me');");
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), 0);
	hw_gpu g;
	ck_assert_int_eq(hw_gpu_get(db, "h100-sxm", &g, err, sizeof err), 0);
	ck_assert_rel(g.hbm_gbps, 3350, 1e-9);
	ck_assert_int_eq(hw_gpu_get(db, "my-gpu", &g, err, sizeof err), 0);
	hw_close(db);
	test_rmdir(dir);
}
END_TEST

/* A version-1 database (the datasheet tables only) with a user's GPU migrates to the current
 * schema, keeping the user's row and gaining the defaults. */
START_TEST(migrate_from_v1)
{
	const char *dir = test_tmpdir("hwmig");
	char file[1200];
	snprintf(file, sizeof file, "%s/v1.db", dir);
	size_t len;
	char *sql = slurp(test_data("hw-schema-v1.sql"), &len);
	sql_exec(file, sql);
	free(sql);
	ck_assert_int_eq(sql_count(NULL, file, "PRAGMA user_version"), 1);
	hw_db *db;
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), 0);
	hw_gpu g;
	ck_assert_int_eq(hw_gpu_get(db, "lab-gpu", &g, err, sizeof err), 0);
	ck_assert_rel(g.hbm_gbps, 1234, 1e-12);
	hw_system s;
	ck_assert_int_eq(hw_system_get(db, "dgx-a100", &s, err, sizeof err), 0);
	hw_close(db);
	ck_assert_int_eq(sql_count(NULL, file, "PRAGMA user_version"), HW_SCHEMA_VERSION);
	ck_assert_int_eq(sql_count(NULL, file, "SELECT count(*) FROM cal_run"), 0);
	test_rmdir(dir);
}
END_TEST

START_TEST(newer_schema_refused)
{
	const char *dir = test_tmpdir("hwnew");
	char file[1200];
	snprintf(file, sizeof file, "%s/new.db", dir);
	sql_exec(file, "CREATE TABLE future(x); PRAGMA user_version = 99;");
	hw_db *db;
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), PP_EDB);
	ck_assert(strstr(err, "newer paraplan") != NULL);
	ck_assert_int_eq(sql_count(NULL, file, "PRAGMA user_version"), 99);
	test_rmdir(dir);
}
END_TEST

START_TEST(corrupt_file_untouched)
{
	const char *dir = test_tmpdir("hwbad");
	char file[1200];
	snprintf(file, sizeof file, "%s/bad.db", dir);
	char junk[8192];
	for (size_t i = 0; i < sizeof junk; i++)
		junk[i] = (char)(i * 131 + 7);
	ck_assert_int_eq(pp_write_file_atomic(file, junk, sizeof junk, err, sizeof err), 0);
	hw_db *db;
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), PP_EDB);
	ck_assert(strstr(err, "not a paraplan hardware database") != NULL);
	size_t len;
	char *after = slurp(file, &len);
	ck_assert_uint_eq(len, sizeof junk);
	ck_assert(memcmp(after, junk, sizeof junk) == 0);
	free(after);
	/* A real database whose pages were damaged: the first page stays valid, the rest is junk. */
	snprintf(file, sizeof file, "%s/torn.db", dir);
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), 0);
	hw_close(db);
	char *good = slurp(file, &len);
	ck_assert_uint_gt(len, 8192);
	memset(good + 4096, 0x5a, len - 4096);
	ck_assert_int_eq(pp_write_file_atomic(file, good, len, err, sizeof err), 0);
	int rc = hw_open(file, 0, &db, err, sizeof err);
	ck_assert_int_ne(rc, 0);
	ck_assert(strstr(err, file) != NULL);
	char *after2 = slurp(file, &len);
	ck_assert(memcmp(after2, good, len) == 0);
	free(after2);
	free(good);
	test_rmdir(dir);
}
END_TEST

START_TEST(readonly_database)
{
	const char *dir = test_tmpdir("hwro");
	char file[1200];
	snprintf(file, sizeof file, "%s/ro.db", dir);
	hw_db *db;
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), 0);
	hw_close(db);
	size_t len0;
	char *before = slurp(file, &len0);
	/* Root ignores file modes, so the read-only flag stands in for a read-only file here. */
	ck_assert_int_eq(hw_open(file, HW_OPEN_READONLY, &db, err, sizeof err), 0);
	ck_assert(hw_readonly(db));
	hw_system s;
	ck_assert_int_eq(hw_system_get(db, "dgx-a100", &s, err, sizeof err), 0);
	hw_run_info info = {.system = "dgx-a100", .kind = "import"};
	hw_run *run;
	ck_assert_int_eq(hw_run_begin(db, &info, &run, err, sizeof err), PP_EIO);
	ck_assert(strstr(err, "read-only") != NULL);
	ck_assert_int_ne(hw_param_set(db, "gpu", "h100-sxm", "x", 1, "user", "m", "s", 0, err, sizeof err), 0);
	hw_close(db);
	if (geteuid() != 0) {
		chmod(file, 0444);
		ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), 0);
		ck_assert(hw_readonly(db));
		hw_close(db);
		chmod(file, 0644);
	}
	size_t len1;
	char *after = slurp(file, &len1);
	ck_assert_uint_eq(len0, len1);
	ck_assert(memcmp(before, after, len0) == 0);
	free(before);
	free(after);
	/* Read-only and missing is an error, not a creation. */
	snprintf(file, sizeof file, "%s/none.db", dir);
	ck_assert_int_eq(hw_open(file, HW_OPEN_READONLY, &db, err, sizeof err), PP_ENOTFOUND);
	test_rmdir(dir);
}
END_TEST

static hw_coll_row
row(int64_t bytes, double busbw)
{
	hw_coll_row r = {.op = HW_ALL_REDUCE, .ranks = 16, .nodes = 2, .bytes = bytes};
	double f = hw_coll_busbw_factor(HW_ALL_REDUCE, 16);
	r.algbw_gbps = busbw / f;
	r.busbw_gbps = busbw;
	r.time_s = (double)bytes / (r.algbw_gbps * 1e9);
	r.origin = "test";
	return r;
}

START_TEST(runs_land_whole_or_not_at_all)
{
	const char *dir = test_tmpdir("hwrun");
	char file[1200];
	snprintf(file, sizeof file, "%s/run.db", dir);
	hw_db *db;
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), 0);
	hw_run_info info = {.system = "dgx-a100", .kind = "import", .host = "test", .nodes = 2, .gpus_per_node = 8};
	hw_run *run;
	/* Aborted: nothing stays. */
	ck_assert_int_eq(hw_run_begin(db, &info, &run, err, sizeof err), 0);
	hw_coll_row r = row(1 << 20, 10.0);
	ck_assert_int_eq(hw_run_add_coll(run, &r, err, sizeof err), 0);
	hw_run_abort(run);
	ck_assert_int_eq(sql_count(db, file, "SELECT count(*) FROM cal_run"), 0);
	ck_assert_int_eq(sql_count(db, file, "SELECT count(*) FROM coll_meas"), 0);
	/* A bad row is refused without spoiling the run. */
	ck_assert_int_eq(hw_run_begin(db, &info, &run, err, sizeof err), 0);
	hw_coll_row bad = row(1 << 20, 10.0);
	bad.time_s = -1;
	ck_assert_int_eq(hw_run_add_coll(run, &bad, err, sizeof err), PP_ERANGE);
	for (int i = 20; i <= 30; i++) {
		r = row((int64_t)1 << i, 10.0 * (i - 19));
		ck_assert_int_eq(hw_run_add_coll(run, &r, err, sizeof err), 0);
	}
	ck_assert_int_eq(hw_run_commit(run, true, err, sizeof err), 0);
	ck_assert_int_eq(sql_count(db, file, "SELECT count(*) FROM coll_meas"), 11);
	ck_assert_int_eq(sql_count(db, file, "SELECT count(*) FROM cal_run WHERE status = 'complete'"), 1);
	/* A process that dies in the middle of a run leaves nothing of it. */
	hw_close(db);
	pid_t pid = fork();
	if (pid == 0) {
		hw_db *cdb;
		hw_run *crun;
		if (hw_open(file, 0, &cdb, NULL, 0) != 0 || hw_run_begin(cdb, &info, &crun, NULL, 0) != 0)
			_exit(3);
		for (int i = 0; i < 100; i++) {
			hw_coll_row cr = row(1 << 20, 5.0);
			hw_run_add_coll(crun, &cr, NULL, 0);
		}
		_exit(0); /* no commit, no rollback: as if killed */
	}
	int status;
	waitpid(pid, &status, 0);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), 0);
	ck_assert_int_eq(sql_count(db, file, "SELECT count(*) FROM coll_meas"), 11);
	ck_assert_int_eq(sql_count(db, file, "SELECT count(*) FROM cal_run"), 1);
	/* The measured curve now drives the cost model for that span. */
	hw_cost *c;
	ck_assert_int_eq(hw_cost_new(db, "dgx-a100", &c, err, sizeof err), 0);
	hw_prov p;
	double t = hw_cost_coll_time(c, HW_ALL_REDUCE, 16, 8, (double)(1 << 25), &p);
	ck_assert_int_eq(p, HW_PROV_MEASURED);
	/* 32 MiB is the 6th point: busbw 60 GB/s. */
	ck_assert_rel(t, (double)(1 << 25) * hw_coll_busbw_factor(HW_ALL_REDUCE, 16) / 60e9, 1e-6);
	hw_cost_free(c);
	/* Export carries the run and its rows, and nothing of the defaults. */
	char *sql;
	ck_assert_int_eq(hw_export(db, &sql, err, sizeof err), 0);
	ck_assert(strstr(sql, "INSERT INTO cal_run") != NULL);
	ck_assert(strstr(sql, "INSERT INTO gpu") == NULL);
	free(sql);
	hw_close(db);
	test_rmdir(dir);
}
END_TEST

/* User-supplied names travel as bound parameters: a hostile name is just an unknown name. */
START_TEST(hostile_names)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	const char *evil = "x'); DROP TABLE gpu; --";
	hw_system s;
	ck_assert_int_eq(hw_system_get(db, evil, &s, err, sizeof err), PP_ENOTFOUND);
	cJSON *doc;
	ck_assert_int_eq(hw_show(db, evil, &doc, err, sizeof err), PP_ENOTFOUND);
	hw_param p;
	ck_assert_int_eq(hw_param_get(db, "gpu", evil, evil, &p), PP_ENOTFOUND);
	ck_assert_int_eq(hw_param_set(db, "gpu", evil, "k", 1.0, "user", evil, evil, 0, err, sizeof err), 0);
	ck_assert_int_eq(hw_param_get(db, "gpu", evil, "k", &p), 0);
	ck_assert_str_eq(p.method, evil);
	hw_gpu g;
	ck_assert_int_eq(hw_gpu_get(db, "h100-sxm", &g, err, sizeof err), 0);
	hw_close(db);
}
END_TEST

START_TEST(busbw_factors)
{
	/* nccl-tests doc/PERFORMANCE.md */
	ck_assert_rel(hw_coll_busbw_factor(HW_ALL_REDUCE, 8), 1.75, 1e-12);
	ck_assert_rel(hw_coll_busbw_factor(HW_ALL_GATHER, 8), 0.875, 1e-12);
	ck_assert_rel(hw_coll_busbw_factor(HW_REDUCE_SCATTER, 4), 0.75, 1e-12);
	ck_assert_rel(hw_coll_busbw_factor(HW_ALL_TO_ALL, 2), 0.5, 1e-12);
	ck_assert_rel(hw_coll_busbw_factor(HW_BROADCAST, 8), 1.0, 1e-12);
	ck_assert_rel(hw_coll_busbw_factor(HW_SEND_RECV, 2), 1.0, 1e-12);
	hw_coll op;
	ck_assert_int_eq(hw_coll_parse("alltoall", &op), 0);
	ck_assert_int_eq(op, HW_ALL_TO_ALL);
	ck_assert_int_ne(hw_coll_parse("allreduce!", &op), 0);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("hw");
	TCase *tc = tcase_create("db");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, defaults_load_in_memory);
	tcase_add_test(tc, peaks_match_clock_times_units);
	tcase_add_test(tc, create_file_and_reopen);
	tcase_add_test(tc, migrate_from_v1);
	tcase_add_test(tc, newer_schema_refused);
	tcase_add_test(tc, corrupt_file_untouched);
	tcase_add_test(tc, readonly_database);
	tcase_add_test(tc, runs_land_whole_or_not_at_all);
	tcase_add_test(tc, hostile_names);
	tcase_add_test(tc, busbw_factors);
	suite_add_tcase(s, tc);
	return test_run(s);
}
