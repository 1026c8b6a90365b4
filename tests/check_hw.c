/*
 * check_hw.c -- the hardware database: schema creation and migration, the defaults, datasheet
 * cross-checks, prices, read-only, corrupt and newer-schema files, calibration runs that land
 * whole or not at all, and prepared statements against hostile names.
 */
#include "config.h"
#include "common/pp.h"
#include "hardware/hw.h"
#include "tests/testutil.h"

#include <math.h>
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

/* Every row of table t in a and b, as text, in rowid order: equal or not (but for the time a
 * row was written, "created"). */
static bool
same_table(sqlite3 *a, sqlite3 *b, const char *t)
{
	char q[256];
	snprintf(q, sizeof q, "SELECT * FROM \"%s\" ORDER BY rowid", t);
	sqlite3_stmt *sa, *sb;
	ck_assert_int_eq(sqlite3_prepare_v2(a, q, -1, &sa, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(b, q, -1, &sb, NULL), SQLITE_OK);
	bool same = sqlite3_column_count(sa) == sqlite3_column_count(sb);
	int ra = SQLITE_DONE, rb = SQLITE_DONE;
	while (same && (ra = sqlite3_step(sa)) == (rb = sqlite3_step(sb)) && ra == SQLITE_ROW)
		for (int i = 0; i < sqlite3_column_count(sa) && same; i++) {
			if (strcmp(sqlite3_column_name(sa, i), "created") == 0)
				continue;
			const unsigned char *x = sqlite3_column_text(sa, i), *y = sqlite3_column_text(sb, i);
			same = (x == NULL) == (y == NULL) && (x == NULL || strcmp((const char *)x, (const char *)y) == 0);
		}
	same = same && ra == SQLITE_DONE && rb == SQLITE_DONE;
	sqlite3_finalize(sa);
	sqlite3_finalize(sb);
	return same;
}

extern const size_t hw_db_image_len;
extern const unsigned char hw_db_image[];

/* The image an in-memory database starts from (hardware/mkimage.c, made at build time) holds what
 * the schema's migrations and the defaults' SQL make in a new file, table by table, and opening
 * it runs neither. */
START_TEST(memory_image_is_the_sql)
{
#ifdef HAVE_SQLITE3_DESERIALIZE
	ck_assert_uint_gt(hw_db_image_len, 4096);
	const char *dir = test_tmpdir("hwimage");
	char file[1200];
	snprintf(file, sizeof file, "%s/hw.db", dir);
	hw_db *db;
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), 0);
	hw_close(db);
	sqlite3 *f, *m;
	ck_assert_int_eq(sqlite3_open(file, &f), SQLITE_OK);
	ck_assert_int_eq(sqlite3_open(":memory:", &m), SQLITE_OK);
	unsigned char *buf = sqlite3_malloc64(hw_db_image_len);
	ck_assert_ptr_nonnull(buf);
	memcpy(buf, hw_db_image, hw_db_image_len);
	ck_assert_int_eq(sqlite3_deserialize(m, "main", buf, (sqlite3_int64)hw_db_image_len, (sqlite3_int64)hw_db_image_len,
					     SQLITE_DESERIALIZE_FREEONCLOSE),
			 SQLITE_OK);
	ck_assert_msg(same_table(f, m, "sqlite_master"), "the schemas differ");
	sqlite3_stmt *st;
	ck_assert_int_eq(sqlite3_prepare_v2(f, "SELECT name FROM sqlite_master WHERE type = 'table'", -1, &st, NULL),
			 SQLITE_OK);
	int tables = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);
		ck_assert_msg(same_table(f, m, t), "table %s differs between the image and the SQL", t);
		tables++;
	}
	sqlite3_finalize(st);
	ck_assert_int_ge(tables, 8);
	sqlite3_close(f);
	sqlite3_close(m);
	test_rmdir(dir);
	/* opened from the image, the database is current: the same figures as from the SQL */
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	hw_system s;
	ck_assert_int_eq(hw_system_get(db, "dgx-h100", &s, err, sizeof err), 0);
	ck_assert_rel(s.gpu.peak_tflops[HW_BF16], 989.4, 1e-6);
	hw_close(db);
#endif
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

/* Issue 16, item 3: a schema version that is not a known one (negative ones indexed before the
 * migrations array: leftover strings ran as SQL, -100000 and INT_MIN crashed) is refused before
 * anything is read or written, whichever way the file is opened. */
START_TEST(hostile_user_version)
{
	const char *dir = test_tmpdir("hwver");
	static const long long versions[] = {-1, -2, -3, -4, -100000, -2147483647LL - 1, HW_SCHEMA_VERSION + 1, 2147483647};
	for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
		char file[1200], sql[64];
		snprintf(file, sizeof file, "%s/v%zu.db", dir, i);
		hw_db *db;
		ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), 0);
		hw_close(db);
		snprintf(sql, sizeof sql, "PRAGMA user_version = %lld", versions[i]);
		sql_exec(file, sql);
		size_t len0, len1;
		char *before = slurp(file, &len0);
		for (int ro = 0; ro < 2; ro++) {
			ck_assert_int_eq(hw_open(file, ro ? HW_OPEN_READONLY : 0, &db, err, sizeof err), PP_EDB);
			char want[64];
			snprintf(want, sizeof want, "schema version %lld ", versions[i]);
			ck_assert_msg(strstr(err, want) != NULL && strstr(err, file) != NULL, "%s", err);
		}
		char *after = slurp(file, &len1);
		ck_assert(len0 == len1 && memcmp(before, after, len0) == 0);
		free(before);
		free(after);
		char journal[1300];
		snprintf(journal, sizeof journal, "%s-journal", file);
		ck_assert_int_ne(access(journal, F_OK), 0);
	}
	test_rmdir(dir);
}
END_TEST

/* Garbage over a database's pages (the header intact) is found on open, said plainly with the
 * path, and nothing is written; a file too large to check whole on open is checked table by
 * table before a write. */
START_TEST(damaged_pages_found)
{
	const char *dir = test_tmpdir("hwdmg");
	char file[1200];
	snprintf(file, sizeof file, "%s/d.db", dir);
	hw_db *db;
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), 0);
	hw_close(db);
	size_t len;
	char *img = slurp(file, &len);
	ck_assert_uint_gt(len, 64 * 1024);
	/* 8 KiB of garbage in the middle, as in the issue: hw list used to print half its tables */
	for (size_t i = 0; i < 8192; i++)
		img[len / 2 + i] = (char)(i * 151 + 3);
	ck_assert_int_eq(pp_write_file_atomic(file, img, len, err, sizeof err), 0);
	for (int ro = 0; ro < 2; ro++) {
		ck_assert_int_eq(hw_open(file, ro ? HW_OPEN_READONLY : 0, &db, err, sizeof err), PP_EDB);
		ck_assert_msg(strstr(err, file) && strstr(err, "the hardware database file is damaged"), "%s", err);
	}
	size_t len1;
	char *after = slurp(file, &len1);
	ck_assert(len1 == len && memcmp(after, img, len) == 0);
	free(after);
	free(img);

	/* A file over the whole-file limit: a 70 MB table pads it; the calibration tables' first
	 * page is then overwritten.  Opening works (reads of untouched tables are fine); a run's
	 * write is refused with the damage named, and the file is unchanged. */
	snprintf(file, sizeof file, "%s/big.db", dir);
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), 0);
	hw_close(db);
	sql_exec(file, "CREATE TABLE pad(x); INSERT INTO pad VALUES(zeroblob(70 * 1024 * 1024));");
	long page = sql_count(NULL, file, "SELECT rootpage FROM sqlite_master WHERE name = 'coll_meas'");
	long psize = sql_count(NULL, file, "PRAGMA page_size");
	ck_assert_int_gt(page, 1);
	FILE *f = fopen(file, "r+b");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, (page - 1) * psize, SEEK_SET), 0);
	for (long i = 0; i < psize; i++)
		fputc((int)((i * 97 + 11) & 0xff), f);
	ck_assert_int_eq(fclose(f), 0);
	struct stat st0, st1;
	ck_assert_int_eq(stat(file, &st0), 0);
	ck_assert_int_gt(st0.st_size, (long long)64 << 20); /* HW_CHECK_WHOLE_BYTES, hw_int.h */
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), 0);
	hw_run_info info = {.system = "dgx-a100", .kind = "import"};
	hw_run *run;
	ck_assert_int_eq(hw_run_begin(db, &info, &run, err, sizeof err), PP_EDB);
	ck_assert_msg(strstr(err, file) && strstr(err, "damaged"), "%s", err);
	hw_close(db);
	ck_assert_int_eq(stat(file, &st1), 0);
	ck_assert(st0.st_size == st1.st_size && st0.st_mtime == st1.st_mtime);
	test_rmdir(dir);
}
END_TEST

/* A database path that names a device, FIFO or socket is refused: /dev/null used to be read as
 * an empty database and left /dev/null-journal. */
START_TEST(database_not_a_file)
{
	const char *dir = test_tmpdir("hwdev");
	char file[1200], journal[1300];
	snprintf(file, sizeof file, "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(file, 0644), 0);
	hw_db *db;
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), PP_EUSAGE);
	ck_assert_msg(strstr(err, "is a FIFO, expected a database file") != NULL, "%s", err);
	snprintf(journal, sizeof journal, "%s-journal", file);
	ck_assert_int_ne(access(journal, F_OK), 0);
	ck_assert_int_eq(hw_open("/dev/null", 0, &db, err, sizeof err), PP_EUSAGE);
	ck_assert_msg(strstr(err, "/dev/null: is a character device") != NULL, "%s", err);
	ck_assert_int_ne(access("/dev/null-journal", F_OK), 0);
	test_rmdir(dir);
}
END_TEST

/* Every collective row stored, whoever measured it, is held to the system's links
 * (hw_coll_row_check): dgx-h100 moves 450 + 8 x 400 / 8 / 8 = 500 GB/s per GPU each way. */
START_TEST(coll_rows_within_links)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	hw_system sys;
	ck_assert_int_eq(hw_system_get(db, "dgx-h100", &sys, err, sizeof err), 0);
	hw_coll_row r = {.op = HW_ALL_REDUCE, .ranks = 8, .nodes = 1, .bytes = 1 << 30};
	r.algbw_gbps = 600.0;
	r.busbw_gbps = 1050.0; /* under 2.2 x 500 */
	r.time_s = (double)r.bytes / 600e9;
	ck_assert_int_eq(hw_coll_row_check(&sys, &r, err, sizeof err), 0);
	r.busbw_gbps = 1101.0;
	ck_assert_int_eq(hw_coll_row_check(&sys, &r, err, sizeof err), PP_EINPUT);
	ck_assert_msg(strstr(err, "(500 GB/s each way per GPU") != NULL, "%s", err);
	/* a thousandth of 500 GB/s after a second: 1 GiB may take 1 + 2.147 s, not 3.2 s */
	r.busbw_gbps = 0.5;
	r.algbw_gbps = 0.3;
	r.time_s = 3.1;
	ck_assert_int_eq(hw_coll_row_check(&sys, &r, err, sizeof err), 0);
	r.time_s = 3.2;
	ck_assert_int_eq(hw_coll_row_check(&sys, &r, err, sizeof err), PP_EINPUT);
	ck_assert_msg(strstr(err, "slower than dgx-h100's links") != NULL, "%s", err);
	/* the store refuses it too (calibration writes through it) */
	hw_run_info info = {.system = "dgx-h100", .kind = "import"};
	hw_run *run;
	ck_assert_int_eq(hw_run_begin(db, &info, &run, err, sizeof err), 0);
	ck_assert_int_eq(hw_run_add_coll(run, &r, err, sizeof err), PP_EINPUT);
	hw_run_abort(run);
	hw_close(db);
}
END_TEST

/* A database from outside holds figures no hardware has: a GPU's 1e300 GB/s is refused with its
 * name when the system is read; a collective row of 1e300 us (stored before the import checked
 * rows, or by another program) is left out of the cost model, whose prediction stays the one
 * without it. */
START_TEST(implausible_figures_from_a_database)
{
	const char *dir = test_tmpdir("hwfig");
	char file[1200];
	snprintf(file, sizeof file, "%s/f.db", dir);
	hw_db *db;
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), 0);
	hw_cost *c;
	ck_assert_int_eq(hw_cost_new(db, "dgx-h100", &c, err, sizeof err), 0);
	hw_prov p;
	double t0 = hw_cost_coll_time(c, HW_ALL_REDUCE, 8, 8, 1073741824.0, &p);
	hw_cost_free(c);
	hw_close(db);
	sql_exec(file, "INSERT INTO cal_run(id, system, kind, started, status) VALUES(77, 'dgx-h100', 'import', 'now', "
		       "'complete');"
		       "INSERT INTO coll_meas(run_id, op, ranks, nodes, bytes, time_s, algbw_gbps, busbw_gbps) "
		       "VALUES(77, 'all_reduce', 8, 1, 1073741824, 1e294, 1.07e-294, 1.9e-294),"
		       "      (77, 'all_reduce', 8, 1, 2147483648, 1e294, 2.1e-294, 3.8e-294);");
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), 0);
	ck_assert_int_eq(hw_cost_new(db, "dgx-h100", &c, err, sizeof err), 0);
	double t1 = hw_cost_coll_time(c, HW_ALL_REDUCE, 8, 8, 1073741824.0, &p);
	ck_assert_rel(t1, t0, 1e-12);
	ck_assert(t1 < 1.0);
	hw_cost_free(c);
	hw_close(db);
	sql_exec(file, "UPDATE gpu SET hbm_gbps = 1e300 WHERE name = 'h100-sxm'");
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), 0);
	hw_system sys;
	ck_assert_int_eq(hw_system_get(db, "dgx-h100", &sys, err, sizeof err), PP_EDB);
	ck_assert_msg(strstr(err, "GPU \"h100-sxm\": \"hbm_gbps\" is 1e+300") != NULL, "%s", err);
	ck_assert_int_ne(hw_cost_new(db, "dgx-h100", &c, err, sizeof err), 0);
	hw_close(db);
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
	ck_assert_int_eq(hw_param_set(db, "gpu", evil, "hbm_eff", 0.5, "user", evil, evil, 0, err, sizeof err), 0);
	ck_assert_int_eq(hw_param_get(db, "gpu", evil, "hbm_eff", &p), 0);
	ck_assert_str_eq(p.method, evil);
	/* a key nobody registered, and a value outside its key's bounds, are refused by name */
	ck_assert_int_eq(hw_param_set(db, "gpu", "h100-sxm", evil, 1.0, "user", "m", "s", 0, err, sizeof err), PP_EUSAGE);
	ck_assert(strstr(err, "is not a gpu parameter") != NULL);
	ck_assert_int_eq(hw_param_set(db, "gpu", "h100-sxm", "hbm_eff", 1.5, "user", "m", "s", 0, err, sizeof err),
			 PP_ERANGE);
	ck_assert(strstr(err, "hbm_eff") != NULL && strstr(err, "0.01..1") != NULL);
	ck_assert_int_eq(hw_param_set(db, "gpu", "h100-sxm", "hbm_eff", NAN, "user", "m", "s", 0, err, sizeof err),
			 PP_ERANGE);
	ck_assert_int_eq(hw_param_set(db, "rack", "h100-sxm", "hbm_eff", 0.5, "user", "m", "s", 0, err, sizeof err),
			 PP_EUSAGE);
	hw_gpu g;
	ck_assert_int_eq(hw_gpu_get(db, "h100-sxm", &g, err, sizeof err), 0);
	hw_close(db);
}
END_TEST

/* Two processes writing runs into one file at once: each run takes the write lock for its
 * transaction and the other waits (busy timeout), so every run lands whole, none torn. */
START_TEST(concurrent_runs_both_land)
{
	const char *dir = test_tmpdir("hwconc");
	char file[1200];
	snprintf(file, sizeof file, "%s/conc.db", dir);
	hw_db *db;
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), 0);
	hw_close(db);
	pid_t kids[2];
	for (int k = 0; k < 2; k++) {
		kids[k] = fork();
		ck_assert_int_ge(kids[k], 0);
		if (kids[k] == 0) {
			hw_db *cdb;
			char cerr[512];
			if (hw_open(file, 0, &cdb, cerr, sizeof cerr) != 0)
				_exit(3);
			hw_run_info info = {.system = "dgx-a100", .kind = "import", .host = k ? "writer-b" : "writer-a",
					    .nodes = 2, .gpus_per_node = 8};
			for (int run = 0; run < 5; run++) {
				hw_run *r;
				if (hw_run_begin(cdb, &info, &r, cerr, sizeof cerr) != 0) {
					fprintf(stderr, "writer %d: %s\n", k, cerr);
					_exit(4);
				}
				for (int i = 0; i < 200; i++) {
					hw_coll_row cr = row((int64_t)1024 * (i + 1), 1.0 + k);
					if (hw_run_add_coll(r, &cr, cerr, sizeof cerr) != 0)
						_exit(5);
				}
				if (hw_run_commit(r, true, cerr, sizeof cerr) != 0) {
					fprintf(stderr, "writer %d: %s\n", k, cerr);
					_exit(6);
				}
			}
			hw_close(cdb);
			_exit(0);
		}
	}
	for (int k = 0; k < 2; k++) {
		int status;
		waitpid(kids[k], &status, 0);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer %d failed (status %d)", k, status);
	}
	ck_assert_int_eq(sql_count(NULL, file, "SELECT count(*) FROM cal_run WHERE status = 'complete'"), 10);
	ck_assert_int_eq(sql_count(NULL, file, "SELECT count(*) FROM coll_meas"), 2000);
	/* every run holds its 200 rows, all of its own writer's bandwidth */
	ck_assert_int_eq(sql_count(NULL, file,
				   "SELECT count(*) FROM (SELECT run_id FROM coll_meas GROUP BY run_id"
				   " HAVING count(*) = 200 AND min(busbw_gbps) = max(busbw_gbps))"),
			 10);
	ck_assert_int_eq(sql_count(NULL, file,
				   "SELECT count(*) FROM coll_meas m JOIN cal_run r ON r.id = m.run_id"
				   " WHERE (r.host = 'writer-a') != (m.busbw_gbps = 1.0)"),
			 0);
	test_rmdir(dir);
}
END_TEST

/* A full disk in the middle of a run (SQLite's page limit stands in for it): a clear error,
 * nothing of the run stays, the rows written before are intact, the file opens again. */
START_TEST(full_disk_rolls_back)
{
	const char *dir = test_tmpdir("hwfull");
	char file[1200];
	snprintf(file, sizeof file, "%s/full.db", dir);
	hw_db *db;
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), 0);
	hw_run_info info = {.system = "dgx-a100", .kind = "import", .host = "test", .nodes = 2, .gpus_per_node = 8};
	hw_run *run;
	ck_assert_int_eq(hw_run_begin(db, &info, &run, err, sizeof err), 0);
	for (int i = 0; i < 10; i++) {
		hw_coll_row r = row((int64_t)1 << (10 + i), 5.0);
		ck_assert_int_eq(hw_run_add_coll(run, &r, err, sizeof err), 0);
	}
	ck_assert_int_eq(hw_run_commit(run, true, err, sizeof err), 0);
	struct stat st;
	ck_assert_int_eq(stat(file, &st), 0);
	char pragma[64];
	snprintf(pragma, sizeof pragma, "PRAGMA max_page_count = %lld", (long long)(st.st_size / 4096));
	ck_assert_int_eq(hw_exec_simple(db, pragma, err, sizeof err), 0);
	ck_assert_int_eq(hw_run_begin(db, &info, &run, err, sizeof err), 0);
	int rc = 0;
	for (int i = 0; i < 20000 && rc == 0; i++) {
		hw_coll_row r = row((int64_t)1 << 20, 7.0);
		r.algorithm = "a long algorithm name that fills pages quickly .................................";
		rc = hw_run_add_coll(run, &r, err, sizeof err);
	}
	ck_assert_int_eq(rc, PP_EIO);
	ck_assert_msg(strstr(err, "disk is full, nothing was written") != NULL && strstr(err, file) != NULL, "%s", err);
	hw_run_abort(run);
	hw_close(db);
	ck_assert_int_eq(sql_count(NULL, file, "SELECT count(*) FROM cal_run"), 1);
	ck_assert_int_eq(sql_count(NULL, file, "SELECT count(*) FROM coll_meas"), 10);
	sqlite3 *chk;
	sqlite3_stmt *ic;
	ck_assert_int_eq(sqlite3_open_v2(file, &chk, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(chk, "PRAGMA integrity_check", -1, &ic, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(ic), SQLITE_ROW);
	ck_assert_str_eq((const char *)sqlite3_column_text(ic, 0), "ok");
	sqlite3_finalize(ic);
	sqlite3_close(chk);
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), 0);
	ck_assert_int_eq(hw_run_begin(db, &info, &run, err, sizeof err), 0);
	hw_coll_row r = row(1 << 20, 7.0);
	ck_assert_int_eq(hw_run_add_coll(run, &r, err, sizeof err), 0);
	ck_assert_int_eq(hw_run_commit(run, true, err, sizeof err), 0);
	hw_close(db);
	ck_assert_int_eq(sql_count(NULL, file, "SELECT count(*) FROM coll_meas"), 11);
	test_rmdir(dir);
}
END_TEST

/* Hostile text in every field of a run is stored as text and exported as quoted SQL that
 * recreates it, never run as SQL. */
START_TEST(hostile_run_fields)
{
	const char *dir = test_tmpdir("hwevil");
	char file[1200];
	snprintf(file, sizeof file, "%s/evil.db", dir);
	hw_db *db;
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), 0);
	const char *evil = "x'); DROP TABLE gpu; --";
	long gpus = sql_count(NULL, file, "SELECT count(*) FROM gpu");
	hw_run_info info = {.system = "dgx-a100", .kind = "import", .host = evil, .driver = evil, .cuda = evil,
			    .nccl = evil, .gpu_name = evil, .note = evil, .nodes = 1, .gpus_per_node = 8};
	hw_run *run;
	ck_assert_int_eq(hw_run_begin(db, &info, &run, err, sizeof err), 0);
	hw_coll_row r = row(1 << 20, 5.0);
	r.dtype = r.algorithm = r.origin = evil;
	ck_assert_int_eq(hw_run_add_coll(run, &r, err, sizeof err), 0);
	/* a kind outside the schema's list is refused by its CHECK, and the run goes on */
	ck_assert_int_eq(hw_run_add_membw(run, 0, evil, 1 << 30, 1e-3, err, sizeof err), PP_EDB);
	ck_assert_int_eq(hw_run_add_membw(run, 0, "copy", 1 << 30, 1e-3, err, sizeof err), 0);
	ck_assert_int_eq(hw_run_commit(run, true, err, sizeof err), 0);
	ck_assert_int_eq(hw_validation_add(db, evil, evil, 1.0, 1.0, 1, evil, err, sizeof err), 0);
	info.system = evil;
	ck_assert_int_eq(hw_run_begin(db, &info, &run, err, sizeof err), PP_ENOTFOUND);
	char *sql;
	ck_assert_int_eq(hw_export(db, &sql, err, sizeof err), 0);
	hw_close(db);
	ck_assert_int_eq(sql_count(NULL, file, "SELECT count(*) FROM gpu"), gpus);
	ck_assert_int_eq(sql_count(NULL, file, "SELECT count(*) FROM cal_run WHERE note = 'x''); DROP TABLE gpu; --'"), 1);
	/* the export replays into a fresh database and recreates the hostile text verbatim */
	char file2[1200];
	snprintf(file2, sizeof file2, "%s/replay.db", dir);
	ck_assert_int_eq(hw_open(file2, 0, &db, err, sizeof err), 0);
	hw_close(db);
	sql_exec(file2, sql);
	free(sql);
	ck_assert_int_eq(sql_count(NULL, file2, "SELECT count(*) FROM gpu"), gpus);
	ck_assert_int_eq(sql_count(NULL, file2, "SELECT count(*) FROM cal_run WHERE host = 'x''); DROP TABLE gpu; --'"), 1);
	ck_assert_int_eq(sql_count(NULL, file2, "SELECT count(*) FROM validation_run WHERE note = 'x''); DROP TABLE gpu; --'"),
			 1);
	test_rmdir(dir);
}
END_TEST

/* The compiled-in defaults written to a scratch file and opened with plain SQLite, so the
 * tests can read every row.  *dir is the scratch directory to remove afterwards. */
static sqlite3 *
open_defaults(const char *name, const char **dir)
{
	*dir = test_tmpdir(name);
	ck_assert_ptr_nonnull(*dir);
	static char file[1200];
	snprintf(file, sizeof file, "%s/hw.db", *dir);
	hw_db *db;
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), 0);
	hw_close(db);
	sqlite3 *s;
	ck_assert_int_eq(sqlite3_open_v2(file, &s, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	return s;
}

static long
count_of(sqlite3 *s, const char *sql)
{
	sqlite3_stmt *st;
	ck_assert_msg(sqlite3_prepare_v2(s, sql, -1, &st, NULL) == SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(s));
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	long n = (long)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

/* Every shipped GPU has a 16-bit peak, memory, bandwidth and a source. */
START_TEST(default_gpus_complete)
{
	const char *dir;
	sqlite3 *s = open_defaults("hwgpus", &dir);
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	sqlite3_stmt *st;
	ck_assert_int_eq(sqlite3_prepare_v2(s, "SELECT name, source FROM gpu WHERE origin = 'default' ORDER BY name", -1,
					    &st, NULL),
			 SQLITE_OK);
	int n = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		const char *source = (const char *)sqlite3_column_text(st, 1);
		ck_assert_msg(source != NULL && strlen(source) > 10, "%s: no source", name);
		hw_gpu g;
		ck_assert_msg(hw_gpu_get(db, name, &g, err, sizeof err) == 0, "%s: %s", name, err);
		ck_assert_msg(g.peak_tflops[HW_FP16] > 0 || g.peak_tflops[HW_BF16] > 0, "%s: no fp16/bf16 peak", name);
		ck_assert_msg(g.memory_bytes > 0 && g.hbm_gbps > 0, "%s: no memory or bandwidth", name);
		/* Dense peaks: FP8 runs at twice the 16-bit rate, so a sparse FP8 figure would show
		 * as four times (L40S prints 362 dense BF16 and 733 dense FP8, hence the margin). */
		if (g.peak_tflops[HW_FP8] > 0)
			ck_assert_msg(g.peak_tflops[HW_FP8] <= 2.1 * g.peak_tflops[HW_BF16], "%s: fp8 peak", name);
		n++;
	}
	sqlite3_finalize(st);
	ck_assert_int_ge(n, 17);
	/* Every GPU says how its memory size was obtained (driver-reported or label). */
	ck_assert_int_eq(count_of(s, "SELECT count(*) FROM gpu g WHERE NOT EXISTS (SELECT 1 FROM figure_source f"
				     " WHERE f.tbl = 'gpu' AND f.name = g.name AND f.field = 'memory_bytes')"),
			 0);
	hw_close(db);
	sqlite3_close(s);
	test_rmdir(dir);
}
END_TEST

/* Every shipped system names a shipped GPU and builds a cost model. */
START_TEST(default_systems_complete)
{
	const char *dir;
	sqlite3 *s = open_defaults("hwsys", &dir);
	ck_assert_int_eq(count_of(s, "SELECT count(*) FROM system s LEFT JOIN gpu g ON g.name = s.gpu WHERE g.name IS NULL"),
			 0);
	ck_assert_int_eq(count_of(s, "SELECT count(*) FROM system WHERE source = '' OR description = ''"), 0);
	sqlite3_close(s);
	test_rmdir(dir);
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	char **names;
	size_t n;
	ck_assert_int_eq(hw_system_names(db, &names, &n, err, sizeof err), 0);
	ck_assert_uint_ge(n, 20);
	for (size_t i = 0; i < n; i++) {
		hw_system sys;
		ck_assert_msg(hw_system_get(db, names[i], &sys, err, sizeof err) == 0, "%s: %s", names[i], err);
		ck_assert_msg(sys.scaleup_gbps > 0 && sys.scaleup_domain >= sys.gpus_per_node, "%s: scale-up", names[i]);
		hw_cost *c;
		ck_assert_msg(hw_cost_new(db, names[i], &c, err, sizeof err) == 0, "%s: %s", names[i], err);
		hw_prov p;
		/* over a node's GPUs, or two nodes of a one-GPU node (the GH200 superchip) */
		int ranks = sys.gpus_per_node > 1 ? sys.gpus_per_node : 2;
		ck_assert_msg(hw_cost_coll_time(c, HW_ALL_REDUCE, ranks, sys.gpus_per_node, 1e9, &p) > 0,
			      "%s: all-reduce time", names[i]);
		hw_cost_free(c);
	}
	free(names);
	hw_system sys;
	ck_assert_int_eq(hw_system_get(db, "gb200-nvl72", &sys, err, sizeof err), 0);
	ck_assert_int_eq(sys.scaleup_domain, 72);
	ck_assert_int_eq(sys.gpus_per_node, 4);
	hw_close(db);
}
END_TEST

static bool
is_date(const char *d)
{
	size_t len = strlen(d);
	if (len != 7 && len != 10)
		return false;
	for (size_t i = 0; i < len; i++) {
		bool dash = i == 4 || i == 7;
		if (dash ? d[i] != '-' : (d[i] < '0' || d[i] > '9'))
			return false;
	}
	return true;
}

/* The planner's default price exists for the main systems; every price row is dated and names
 * a shipped GPU or system. */
START_TEST(default_prices)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	static const char *const systems[] = {"dgx-a100", "dgx-h100", "hgx-h200", "dgx-b200", "aws-p5", "aws-p4d"};
	for (size_t i = 0; i < sizeof systems / sizeof systems[0]; i++) {
		hw_price p;
		ck_assert_msg(hw_default_price(db, systems[i], &p, err, sizeof err) == 0, "%s: %s", systems[i], err);
		ck_assert_msg(p.usd_per_gpu_hour > 0.5 && p.usd_per_gpu_hour < 50, "%s: %g per GPU-hour", systems[i],
			      p.usd_per_gpu_hour);
		ck_assert_str_eq(p.kind, "on-demand");
	}
	/* A system's own instance price wins over the GPU's market. */
	hw_price p;
	ck_assert_int_eq(hw_default_price(db, "aws-p4d", &p, err, sizeof err), 0);
	ck_assert_str_eq(p.subject_kind, "system");
	ck_assert_rel(p.usd_per_gpu_hour, 32.77 / 8, 1e-9);
	/* Purchase prices where hardware.md has one. */
	static const char *const bought[] = {"dgx-a100", "dgx-a100-40gb", "dgx-h100"};
	for (size_t i = 0; i < sizeof bought / sizeof bought[0]; i++) {
		hw_price *all;
		size_t n;
		ck_assert_int_eq(hw_prices(db, bought[i], &all, &n, err, sizeof err), 0);
		bool found = false;
		for (size_t k = 0; k < n; k++)
			found = found || (!strcmp(all[k].kind, "purchase") && all[k].usd_per_gpu > 1000);
		free(all);
		ck_assert_msg(found, "%s: no purchase price", bought[i]);
	}
	hw_close(db);

	const char *dir;
	sqlite3 *s = open_defaults("hwprice", &dir);
	ck_assert_int_eq(count_of(s, "SELECT count(*) FROM price WHERE (subject_kind = 'gpu' AND subject NOT IN"
				     " (SELECT name FROM gpu)) OR (subject_kind = 'system' AND subject NOT IN (SELECT name FROM system))"),
			 0);
	ck_assert_int_eq(count_of(s, "SELECT count(*) FROM price WHERE length(source) < 10 OR length(source) > 255"
				     " OR length(provider) > 47"),
			 0);
	sqlite3_stmt *st;
	ck_assert_int_eq(sqlite3_prepare_v2(s, "SELECT subject, date FROM price", -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW)
		ck_assert_msg(is_date((const char *)sqlite3_column_text(st, 1)), "%s: bad date %s",
			      sqlite3_column_text(st, 0), sqlite3_column_text(st, 1));
	sqlite3_finalize(st);
	sqlite3_close(s);
	test_rmdir(dir);
}
END_TEST

/* Per-figure sources point at real, non-NULL figures; shipped parameters name shipped subjects
 * and keys the cost model reads, and their descriptions fit the structures that carry them. */
START_TEST(default_sources_and_params)
{
	const char *dir;
	sqlite3 *s = open_defaults("hwsrc", &dir);
	sqlite3_stmt *st;
	ck_assert_int_eq(sqlite3_prepare_v2(s, "SELECT tbl, name, field FROM figure_source", -1, &st, NULL), SQLITE_OK);
	int nfs = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *tbl = (const char *)sqlite3_column_text(st, 0);
		const char *name = (const char *)sqlite3_column_text(st, 1);
		const char *field = (const char *)sqlite3_column_text(st, 2);
		/* The field must be a column of its table (checked before it goes into SQL text). */
		char sql[256];
		snprintf(sql, sizeof sql, "SELECT count(*) FROM pragma_table_info('%s') WHERE name = '%s'", tbl, field);
		ck_assert_msg(strchr(field, '\'') == NULL && count_of(s, sql) == 1, "%s %s: no column %s", tbl, name, field);
		snprintf(sql, sizeof sql, "SELECT count(*) FROM %s WHERE name = '%s' AND %s IS NOT NULL", tbl, name, field);
		ck_assert_msg(count_of(s, sql) == 1, "%s %s: %s has a source but no value", tbl, name, field);
		nfs++;
	}
	sqlite3_finalize(st);
	ck_assert_int_ge(nfs, 100);
	/* shipped fits say how they were made: a fit over published rows, or its transfer */
	ck_assert_int_ge(count_of(s, "SELECT count(*) FROM param WHERE shipped = 1 AND origin = 'fitted'"), 10);
	ck_assert_int_eq(count_of(s, "SELECT count(*) FROM param WHERE shipped = 1 AND origin NOT IN ('default', 'fitted')"), 0);
	ck_assert_int_eq(count_of(s, "SELECT count(*) FROM param WHERE origin = 'fitted' AND NOT (method LIKE 'paraplan validate%'"
				     " OR method LIKE 'transferred from%') OR (origin = 'fitted' AND source NOT LIKE 'validate/data/published-%' AND source NOT LIKE 'paraplan validate%')"),
			 0);
	ck_assert_int_eq(count_of(s, "SELECT count(*) FROM param WHERE (scope = 'gpu' AND subject NOT IN (SELECT name FROM gpu))"
				     " OR (scope = 'system' AND subject NOT IN (SELECT name FROM system))"
				     " OR (scope IN ('framework', 'engine') AND subject NOT IN"
				     " (SELECT name FROM profile WHERE kind = scope))"),
			 0);
	ck_assert_int_eq(count_of(s, "SELECT count(*) FROM param WHERE length(method) < 10 OR length(method) >= 160"
				     " OR source = '' OR length(source) >= 200"),
			 0);
	/* every shipped parameter is a registered key of its scope, inside its bounds */
	ck_assert_int_eq(sqlite3_prepare_v2(s, "SELECT scope, subject, key, value FROM param", -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *scope = (const char *)sqlite3_column_text(st, 0);
		const char *subject = (const char *)sqlite3_column_text(st, 1);
		const char *key = (const char *)sqlite3_column_text(st, 2);
		double v = sqlite3_column_double(st, 3);
		char e2[256];
		ck_assert_msg(hw_pdef_check(scope, key, v, e2, sizeof e2) == 0, "%s %s: %s", scope, subject, e2);
		/* Efficiencies are fractions; only NVLS all-reduce busbw may pass the link rate. */
		if (strstr(key, "eff") != NULL)
			ck_assert_msg(v <= (strcmp(key, "coll_eff_intra_all_reduce") ? 1.0 : 1.2), "%s %s = %g", subject,
				      key, v);
	}
	sqlite3_finalize(st);
	sqlite3_close(s);
	test_rmdir(dir);
}
END_TEST

/* Profiles are found by name; a variant inherits its base's parameters and overrides its own;
 * an unknown name lists the known ones; a base chain that loops is refused; fits change a
 * profile in memory only. */
START_TEST(profiles_by_name)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	hw_profile *m, *v;
	ck_assert_int_eq(hw_profile_find(db, HW_SCOPE_FRAMEWORK, "megatron", &m, err, sizeof err), 0);
	ck_assert_int_eq(hw_profile_find(db, HW_SCOPE_FRAMEWORK, "megatron-2021", &v, err, sizeof err), 0);
	ck_assert_str_eq(hw_profile_name(v), "megatron-2021");
	ck_assert_double_eq(hw_profile_get(m, HW_P_FW_ATTENTION), HW_FW_ATTN_FLASH3);
	ck_assert_double_eq(hw_profile_get(v, HW_P_FW_ATTENTION), HW_FW_ATTN_UNFUSED);       /* its own */
	ck_assert_double_eq(hw_profile_get(v, HW_P_FW_OVERLAP_GRAD_REDUCE), 0.0);            /* its own */
	ck_assert_double_eq(hw_profile_get(v, HW_P_FW_OVERLAP_PARAM_GATHER), 1.0);           /* megatron's */
	ck_assert_double_eq(hw_profile_get(v, HW_P_GEMM_EFF_BF16), 0.0); /* not a framework key */
	/* in memory only: a second find reads the database again */
	ck_assert_int_eq(hw_profile_set(v, HW_P_FW_HOST_OP_US, 7.5, err, sizeof err), 0);
	ck_assert_double_eq(hw_profile_get(v, HW_P_FW_HOST_OP_US), 7.5);
	ck_assert_int_eq(hw_profile_set(v, HW_P_FW_HOST_OP_US, -1, err, sizeof err), PP_ERANGE);
	ck_assert_int_eq(hw_profile_set(v, HW_P_FW_ATTENTION, 1.5, err, sizeof err), PP_ERANGE);
	hw_profile *again;
	ck_assert_int_eq(hw_profile_find(db, HW_SCOPE_FRAMEWORK, "megatron-2021", &again, err, sizeof err), 0);
	ck_assert_double_eq(hw_profile_get(again, HW_P_FW_HOST_OP_US), hw_profile_get(m, HW_P_FW_HOST_OP_US));
	hw_profile_free(again);
	hw_profile_free(v);
	hw_profile_free(m);
	/* a database made elsewhere may hold a choice that is none of its values: 1.5 and 7 are not
	 * used (the registry's default, as for any value outside a key's bounds), 2 is */
	const double held[][2] = {{1.5, HW_Z3_LAYER}, {7, HW_Z3_LAYER}, {2, HW_Z3_TENSOR}};
	for (size_t i = 0; i < sizeof held / sizeof held[0]; i++) {
		char sql[160];
		snprintf(sql, sizeof sql, "UPDATE param SET value = %g WHERE subject = 'deepspeed' AND key = 'zero3_gather'",
			 held[i][0]);
		ck_assert_int_eq(hw_exec_simple(db, sql, err, sizeof err), 0);
		hw_profile *d;
		ck_assert_int_eq(hw_profile_find(db, HW_SCOPE_FRAMEWORK, "deepspeed", &d, err, sizeof err), 0);
		ck_assert_double_eq(hw_profile_get(d, HW_P_FW_ZERO3_GATHER), held[i][1]);
		hw_profile_free(d);
	}
	ck_assert_int_eq(hw_profile_find(db, HW_SCOPE_FRAMEWORK, "nosuch", &m, err, sizeof err), PP_EUSAGE);
	ck_assert(strstr(err, "nosuch") != NULL && strstr(err, "torchtitan") != NULL);
	ck_assert_int_eq(hw_profile_find(db, HW_SCOPE_GPU, "megatron", &m, err, sizeof err), PP_EUSAGE);
	ck_assert_int_eq(hw_exec_simple(db,
					"INSERT INTO profile(kind, name, base) VALUES('framework', 'a', 'b'), ('framework', 'b', 'a'),"
					" ('framework', 'c', 'gone')",
					err, sizeof err),
			 0);
	ck_assert_int_eq(hw_profile_find(db, HW_SCOPE_FRAMEWORK, "a", &m, err, sizeof err), PP_EINPUT);
	ck_assert(strstr(err, "loop") != NULL);
	ck_assert_int_eq(hw_profile_find(db, HW_SCOPE_FRAMEWORK, "c", &m, err, sizeof err), PP_EINPUT);
	ck_assert(strstr(err, "gone") != NULL);
	char **names;
	size_t n;
	ck_assert_int_eq(hw_profile_names(db, HW_SCOPE_FRAMEWORK, &names, &n, err, sizeof err), 0);
	ck_assert_int_ge(n, 6);
	ck_assert_str_eq(names[0], "a");
	ck_assert_ptr_null(names[n]);
	free(names);
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

/* Two nodes of 4 of a DGX A100's GPUs: each GPU keeps its 200 Gb/s NIC, the NVLink domain is
 * the 4 GPUs; a GB200 NVL72 tray keeps its 72-GPU domain. */
START_TEST(part_of_each_node)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	hw_cost *c;
	ck_assert_int_eq(hw_cost_new(db, "dgx-a100", &c, err, sizeof err), 0);
	double nic = hw_cost_nic_bw(c);
	ck_assert_rel(nic, 25e9, 1e-12);
	ck_assert_int_eq(hw_cost_use_gpus_per_node(c, 4, err, sizeof err), 0);
	ck_assert_rel(hw_cost_nic_bw(c), nic, 1e-12);
	ck_assert_int_eq(hw_cost_system(c)->gpus_per_node, 4);
	ck_assert_int_eq(hw_cost_system(c)->scaleup_domain, 4);
	ck_assert_int_eq(hw_cost_use_gpus_per_node(c, 9, err, sizeof err), PP_EUSAGE);
	ck_assert_ptr_nonnull(strstr(err, "--gpus-per-node"));
	ck_assert_int_eq(hw_cost_use_gpus_per_node(c, 0, err, sizeof err), PP_EUSAGE);
	hw_cost_free(c);
	ck_assert_int_eq(hw_cost_new(db, "gb200-nvl72", &c, err, sizeof err), 0);
	nic = hw_cost_nic_bw(c);
	ck_assert_int_eq(hw_cost_use_gpus_per_node(c, 2, err, sizeof err), 0);
	ck_assert_int_eq(hw_cost_system(c)->scaleup_domain, 72);
	ck_assert_rel(hw_cost_nic_bw(c), nic, 1e-12);
	hw_cost_free(c);
	hw_close(db);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("hw");
	TCase *tc = tcase_create("db");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, defaults_load_in_memory);
	tcase_add_test(tc, memory_image_is_the_sql);
	tcase_add_test(tc, peaks_match_clock_times_units);
	tcase_add_test(tc, create_file_and_reopen);
	tcase_add_test(tc, migrate_from_v1);
	tcase_add_test(tc, newer_schema_refused);
	tcase_add_test(tc, corrupt_file_untouched);
	tcase_add_test(tc, hostile_user_version);
	tcase_add_test(tc, damaged_pages_found);
	tcase_add_test(tc, database_not_a_file);
	tcase_add_test(tc, coll_rows_within_links);
	tcase_add_test(tc, implausible_figures_from_a_database);
	tcase_add_test(tc, readonly_database);
	tcase_add_test(tc, runs_land_whole_or_not_at_all);
	tcase_add_test(tc, hostile_names);
	tcase_add_test(tc, concurrent_runs_both_land);
	tcase_add_test(tc, full_disk_rolls_back);
	tcase_add_test(tc, hostile_run_fields);
	tcase_add_test(tc, busbw_factors);
	tcase_add_test(tc, part_of_each_node);
	tcase_add_test(tc, default_gpus_complete);
	tcase_add_test(tc, default_systems_complete);
	tcase_add_test(tc, default_prices);
	tcase_add_test(tc, default_sources_and_params);
	tcase_add_test(tc, profiles_by_name);
	suite_add_tcase(s, tc);
	return test_run(s);
}
