/*
 * db.c -- opening the hardware database: where it lives, the schema and its forward
 * migrations, and materializing the compiled-in default data.
 *
 * Each migration takes the schema from version i-1 to i and runs in one transaction with the
 * PRAGMA user_version bump, so a failed migration leaves the file at its old version.  The
 * default data is loaded in one transaction too; its rows are marked origin 'default' and a
 * hash of the compiled-in SQL is kept in meta(defaults_hash), so a newer binary replaces its
 * defaults without touching rows that calibration, import or the user wrote.
 */
#include "config.h"
#include "hardware/hw_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct embedded_file { const char *name; const char *text; };
extern const struct embedded_file hw_default_files[];

/* ---- schema -------------------------------------------------------------------------------- */

/* Version 1: the datasheet side (GPUs, systems, prices, per-figure sources). */
static const char schema_v1[] =
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);\n"
	"CREATE TABLE gpu(\n"
	"  name TEXT PRIMARY KEY,\n"
	"  vendor TEXT NOT NULL, arch TEXT NOT NULL,\n"
	"  memory_bytes INTEGER NOT NULL CHECK(memory_bytes > 0),\n"
	"  hbm_gbps REAL NOT NULL CHECK(hbm_gbps > 0),\n"
	"  l2_bytes INTEGER, sms INTEGER, boost_mhz REAL, tdp_w REAL,\n"
	"  fp64_tflops REAL, fp32_tflops REAL, tf32_tflops REAL, fp16_tflops REAL,\n"
	"  bf16_tflops REAL, fp8_tflops REAL, int8_tops REAL, int4_tops REAL,\n"
	"  tensor_units INTEGER,          -- tensor cores (matrix cores on AMD), for the peak cross-check\n"
	"  fp16_flops_per_clock_unit REAL, -- dense FP16 FLOPs per clock per tensor unit\n"
	"  origin TEXT NOT NULL DEFAULT 'user' CHECK(origin IN ('default','user','measured')),\n"
	"  source TEXT NOT NULL);\n"
	"CREATE TABLE system(\n"
	"  name TEXT PRIMARY KEY,\n"
	"  description TEXT NOT NULL DEFAULT '',\n"
	"  gpu TEXT NOT NULL REFERENCES gpu(name) DEFERRABLE INITIALLY DEFERRED,\n"
	"  gpus_per_node INTEGER NOT NULL CHECK(gpus_per_node > 0),\n"
	"  scaleup TEXT NOT NULL CHECK(scaleup IN ('nvswitch','nvlink','pcie','xgmi')),\n"
	"  scaleup_gbps REAL NOT NULL CHECK(scaleup_gbps > 0), -- per GPU, one direction, GB/s\n"
	"  scaleup_domain INTEGER NOT NULL CHECK(scaleup_domain > 0),\n"
	"  nics_per_node INTEGER NOT NULL CHECK(nics_per_node >= 0),\n"
	"  nic_gbit REAL NOT NULL CHECK(nic_gbit >= 0),          -- per NIC, Gb/s\n"
	"  scaleout TEXT NOT NULL DEFAULT 'none',\n"
	"  scaleup_latency_us REAL NOT NULL CHECK(scaleup_latency_us >= 0),\n"
	"  scaleout_latency_us REAL NOT NULL CHECK(scaleout_latency_us >= 0),\n"
	"  oversubscription REAL NOT NULL DEFAULT 1 CHECK(oversubscription >= 1),\n"
	"  node_power_kw REAL,\n"
	"  origin TEXT NOT NULL DEFAULT 'user' CHECK(origin IN ('default','user','measured')),\n"
	"  source TEXT NOT NULL);\n"
	"CREATE TABLE price(\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  subject TEXT NOT NULL,                  -- a system or a GPU name\n"
	"  subject_kind TEXT NOT NULL CHECK(subject_kind IN ('system','gpu')),\n"
	"  provider TEXT NOT NULL,\n"
	"  kind TEXT NOT NULL CHECK(kind IN ('on-demand','reserved-1y','reserved-3y','spot','capacity-block','purchase')),\n"
	"  usd REAL NOT NULL CHECK(usd > 0),\n"
	"  unit TEXT NOT NULL CHECK(unit IN ('gpu-hour','node-hour','gpu','node')),\n"
	"  date TEXT NOT NULL,\n"
	"  source TEXT NOT NULL,\n"
	"  confidence TEXT NOT NULL DEFAULT 'medium' CHECK(confidence IN ('high','medium','low')),\n"
	"  origin TEXT NOT NULL DEFAULT 'user' CHECK(origin IN ('default','user','measured')));\n"
	"CREATE TABLE figure_source(\n"
	"  tbl TEXT NOT NULL CHECK(tbl IN ('gpu','system')), name TEXT NOT NULL, field TEXT NOT NULL,\n"
	"  source TEXT NOT NULL,\n"
	"  confidence TEXT NOT NULL DEFAULT 'medium' CHECK(confidence IN ('high','medium','low')),\n"
	"  origin TEXT NOT NULL DEFAULT 'user' CHECK(origin IN ('default','user','measured')),\n"
	"  PRIMARY KEY(tbl, name, field));\n";

/* Version 2: the measurement side (calibration runs and their rows, fitted parameters,
 * validation runs of replayed plans). */
static const char schema_v2[] =
	"CREATE TABLE cal_run(\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  system TEXT NOT NULL,\n"
	"  kind TEXT NOT NULL CHECK(kind IN ('calibrate','import')),\n"
	"  host TEXT, driver TEXT, cuda TEXT, nccl TEXT, gpu_name TEXT,\n"
	"  nodes INTEGER CHECK(nodes IS NULL OR nodes > 0),\n"
	"  gpus_per_node INTEGER CHECK(gpus_per_node IS NULL OR gpus_per_node > 0),\n"
	"  started TEXT NOT NULL, ended TEXT,\n"
	"  status TEXT NOT NULL CHECK(status IN ('complete','incomplete')),\n"
	"  note TEXT);\n"
	"CREATE TABLE gemm_meas(\n"
	"  run_id INTEGER NOT NULL REFERENCES cal_run(id) ON DELETE CASCADE,\n"
	"  device INTEGER NOT NULL DEFAULT 0,\n"
	"  dtype TEXT NOT NULL, m INTEGER NOT NULL CHECK(m > 0), n INTEGER NOT NULL CHECK(n > 0),\n"
	"  k INTEGER NOT NULL CHECK(k > 0), time_s REAL NOT NULL CHECK(time_s > 0), tflops REAL NOT NULL);\n"
	"CREATE TABLE membw_meas(\n"
	"  run_id INTEGER NOT NULL REFERENCES cal_run(id) ON DELETE CASCADE,\n"
	"  device INTEGER NOT NULL DEFAULT 0,\n"
	"  kind TEXT NOT NULL CHECK(kind IN ('copy','readwrite','triad')),\n"
	"  bytes INTEGER NOT NULL CHECK(bytes > 0), time_s REAL NOT NULL CHECK(time_s > 0), gbps REAL NOT NULL);\n"
	"CREATE TABLE coll_meas(\n"
	"  run_id INTEGER NOT NULL REFERENCES cal_run(id) ON DELETE CASCADE,\n"
	"  op TEXT NOT NULL CHECK(op IN ('all_reduce','all_gather','reduce_scatter','all_to_all','broadcast','reduce','send_recv')),\n"
	"  ranks INTEGER NOT NULL CHECK(ranks > 0), nodes INTEGER NOT NULL CHECK(nodes > 0),\n"
	"  bytes INTEGER NOT NULL CHECK(bytes > 0), time_s REAL NOT NULL CHECK(time_s > 0),\n"
	"  algbw_gbps REAL NOT NULL, busbw_gbps REAL NOT NULL,\n"
	"  in_place INTEGER NOT NULL DEFAULT 0, dtype TEXT, algorithm TEXT, origin TEXT);\n"
	"CREATE INDEX coll_meas_key ON coll_meas(op, ranks, nodes, bytes);\n"
	"CREATE TABLE param(\n"
	"  scope TEXT NOT NULL CHECK(scope IN ('gpu','system')),\n"
	"  subject TEXT NOT NULL, key TEXT NOT NULL, value REAL NOT NULL,\n"
	"  origin TEXT NOT NULL CHECK(origin IN ('default','fitted','measured','user')),\n"
	"  method TEXT NOT NULL, source TEXT NOT NULL DEFAULT '',\n"
	"  run_id INTEGER REFERENCES cal_run(id) ON DELETE CASCADE,\n"
	"  shipped INTEGER NOT NULL DEFAULT 0, -- 1: part of the compiled-in defaults\n"
	"  created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),\n"
	"  PRIMARY KEY(scope, subject, key, origin, shipped));\n"
	"CREATE TABLE validation_run(\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),\n"
	"  system TEXT NOT NULL, plan_json TEXT NOT NULL,\n"
	"  predicted_s REAL NOT NULL, measured_s REAL NOT NULL, steps INTEGER NOT NULL, note TEXT);\n";

/* Version 3: what a replay measured -- the run's circumstances (model, ranks, warm-up, host,
 * GPU, driver, CUDA and NCCL versions, prediction error) and each timed step. */
static const char schema_v3[] =
	"ALTER TABLE validation_run ADD COLUMN model TEXT;\n"
	"ALTER TABLE validation_run ADD COLUMN gpus INTEGER;\n"
	"ALTER TABLE validation_run ADD COLUMN nodes INTEGER;\n"
	"ALTER TABLE validation_run ADD COLUMN warmup INTEGER;\n"
	"ALTER TABLE validation_run ADD COLUMN host TEXT;\n"
	"ALTER TABLE validation_run ADD COLUMN gpu_name TEXT;\n"
	"ALTER TABLE validation_run ADD COLUMN driver TEXT;\n"
	"ALTER TABLE validation_run ADD COLUMN cuda TEXT;\n"
	"ALTER TABLE validation_run ADD COLUMN nccl TEXT;\n"
	"ALTER TABLE validation_run ADD COLUMN error REAL; -- predicted / measured - 1\n"
	"CREATE TABLE validation_step(\n"
	"  run_id INTEGER NOT NULL REFERENCES validation_run(id) ON DELETE CASCADE,\n"
	"  step INTEGER NOT NULL CHECK(step >= 0),\n"
	"  time_s REAL NOT NULL CHECK(time_s > 0),\n"
	"  PRIMARY KEY(run_id, step));\n";

/* Version 4: software profiles -- a training framework or a serving engine as a named object
 * (its version, what it is, its source; `base` names a profile whose parameters it inherits),
 * with its parameters in param under the scopes 'framework' and 'engine'.  SQLite cannot widen
 * a CHECK constraint in place, so param is rebuilt with the new scopes and its rows copied. */
static const char schema_v4[] =
	"CREATE TABLE profile(\n"
	"  kind TEXT NOT NULL CHECK(kind IN ('framework','engine')),\n"
	"  name TEXT NOT NULL,\n"
	"  base TEXT,                               -- inherits this profile's parameters\n"
	"  version TEXT NOT NULL DEFAULT '',\n"
	"  description TEXT NOT NULL DEFAULT '',\n"
	"  source TEXT NOT NULL DEFAULT '',\n"
	"  origin TEXT NOT NULL DEFAULT 'user' CHECK(origin IN ('default','user')),\n"
	"  PRIMARY KEY(kind, name));\n"
	"CREATE TABLE param_v4(\n"
	"  scope TEXT NOT NULL CHECK(scope IN ('gpu','system','framework','engine')),\n"
	"  subject TEXT NOT NULL, key TEXT NOT NULL, value REAL NOT NULL,\n"
	"  origin TEXT NOT NULL CHECK(origin IN ('default','fitted','measured','user')),\n"
	"  method TEXT NOT NULL, source TEXT NOT NULL DEFAULT '',\n"
	"  run_id INTEGER REFERENCES cal_run(id) ON DELETE CASCADE,\n"
	"  shipped INTEGER NOT NULL DEFAULT 0, -- 1: part of the compiled-in defaults\n"
	"  created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),\n"
	"  PRIMARY KEY(scope, subject, key, origin, shipped));\n"
	"INSERT INTO param_v4(scope, subject, key, value, origin, method, source, run_id, shipped, created)\n"
	"  SELECT scope, subject, key, value, origin, method, source, run_id, shipped, created FROM param;\n"
	"DROP TABLE param;\n"
	"ALTER TABLE param_v4 RENAME TO param;\n";

static const char *const migrations[HW_SCHEMA_VERSION] = {schema_v1, schema_v2, schema_v3, schema_v4};

/* ---- helpers ------------------------------------------------------------------------------- */

int
hw_damaged(hw_db *db, char *err, size_t errlen, const char *why)
{
	return pp_err(err, errlen, PP_EDB,
		      "%s: the hardware database file is damaged (%s); nothing was written to it: restore it from a copy, "
		      "or move it away to start from the defaults",
		      db->path, why);
}

int
hw_check_pages(hw_db *db, const char *table, char *err, size_t errlen)
{
	/* quick_check: every b-tree page well formed and every record well sized, in time linear in
	 * the size of what it checks (integrity_check also cross-checks indexes, far slower) */
	char sql[128];
	if (table == NULL)
		snprintf(sql, sizeof sql, "PRAGMA quick_check(1)");
	else
		snprintf(sql, sizeof sql, "PRAGMA quick_check(\"%s\")", table);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL) != SQLITE_OK)
		return hw_sqlerr(db, err, errlen, "checking the file");
	int s = sqlite3_step(st);
	char first[256] = "";
	if (s == SQLITE_ROW && sqlite3_column_text(st, 0) != NULL) {
		/* "*** in database main ***\nPage 27: btreeInitPage() returns error code 11": one line */
		const char *t = (const char *)sqlite3_column_text(st, 0);
		if (!strncmp(t, "*** ", 4) && strchr(t, '\n') != NULL)
			t = strchr(t, '\n') + 1;
		pp_strlcpy(first, t, sizeof first);
		for (char *c = first; *c; c++)
			if (*c == '\n')
				*c = ' ';
	}
	int code = sqlite3_errcode(db->sql);
	sqlite3_finalize(st);
	if (s == SQLITE_ROW && !strcmp(first, "ok"))
		return 0;
	if (s == SQLITE_ROW)
		return hw_damaged(db, err, errlen, first);
	if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB)
		return hw_damaged(db, err, errlen, sqlite3_errstr(code));
	return hw_sqlerr(db, err, errlen, "checking the file");
}

int
hw_finish(hw_db *db, sqlite3_stmt *st, int last, char *err, size_t errlen, const char *what)
{
	sqlite3_finalize(st); /* sets the connection's error to the failed step's */
	return last == SQLITE_DONE ? 0 : hw_sqlerr(db, err, errlen, what);
}

int
hw_check_before_write(hw_db *db, const char *const *tables, char *err, size_t errlen)
{
	if (db->checked)
		return 0;
	for (size_t i = 0; tables[i] != NULL; i++) {
		int rc = hw_check_pages(db, tables[i], err, errlen);
		if (rc != 0)
			return rc;
	}
	return 0;
}

int
hw_sqlerr(hw_db *db, char *err, size_t errlen, const char *what)
{
	int code = sqlite3_errcode(db->sql);
	const char *msg = sqlite3_errmsg(db->sql);
	int rc = PP_EDB;
	if (code == SQLITE_READONLY || code == SQLITE_CANTOPEN || code == SQLITE_IOERR || code == SQLITE_FULL)
		rc = PP_EIO;
	if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
		return pp_err(err, errlen, PP_EIO, "%s: %s: database is locked by another process (try again)", db->path,
			      what);
	if (code == SQLITE_FULL)
		return pp_err(err, errlen, rc, "%s: %s: disk is full, nothing was written", db->path, what);
	if (code == SQLITE_READONLY)
		return pp_err(err, errlen, rc, "%s: %s: database is read-only", db->path, what);
	if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB)
		return hw_damaged(db, err, errlen, msg);
	/* SQLite's "disk I/O error" alone does not say that the file grew past a size limit or
	 * that permission was denied: add what the operating system said. */
	int sys = sqlite3_system_errno(db->sql);
	if ((code == SQLITE_IOERR || code == SQLITE_CANTOPEN) && sys != 0)
		return pp_err(err, errlen, rc, "%s: %s: %s (%s)", db->path, what, msg, strerror(sys));
	return pp_err(err, errlen, rc, "%s: %s: %s", db->path, what, msg);
}

int
hw_exec(hw_db *db, const char *sql, char *err, size_t errlen, const char *what)
{
	char *msg = NULL;
	if (sqlite3_exec(db->sql, sql, NULL, NULL, &msg) != SQLITE_OK) {
		int code = sqlite3_errcode(db->sql);
		int rc;
		if (code == SQLITE_BUSY || code == SQLITE_LOCKED || code == SQLITE_FULL || code == SQLITE_READONLY ||
		    code == SQLITE_IOERR || code == SQLITE_CANTOPEN || code == SQLITE_CORRUPT || code == SQLITE_NOTADB)
			rc = hw_sqlerr(db, err, errlen, what);
		else
			rc = pp_err(err, errlen, PP_EDB, "%s: %s: %s", db->path, what, msg ? msg : "error");
		sqlite3_free(msg);
		return rc;
	}
	return 0;
}

int
hw_exec_simple(hw_db *db, const char *sql, char *err, size_t errlen)
{
	return hw_exec(db, sql, err, errlen, "running a statement");
}

static int
user_version(hw_db *db, int *out, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->sql, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return hw_sqlerr(db, err, errlen, "reading the schema version");
	int rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(st);
		return hw_sqlerr(db, err, errlen, "reading the schema version");
	}
	*out = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return 0;
}

/* FNV-1a over the default SQL: a change of any default figure changes the hash. */
static uint64_t
defaults_hash(void)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; hw_default_files[i].name != NULL; i++) {
		for (const char *p = hw_default_files[i].name; *p; p++)
			h = (h ^ (unsigned char)*p) * 1099511628211ull;
		for (const char *p = hw_default_files[i].text; *p; p++)
			h = (h ^ (unsigned char)*p) * 1099511628211ull;
	}
	return h;
}

const char *
hw_defaults_sql(void)
{
	static char *all;
	static bool done;
	if (!done) {
		pp_str s = {0};
		for (size_t i = 0; hw_default_files[i].name != NULL; i++) {
			pp_str_addf(&s, "-- hardware/data/%s.sql\n", hw_default_files[i].name);
			pp_str_add(&s, hw_default_files[i].text);
		}
		all = pp_str_detach(&s);
		done = true;
	}
	return all ? all : "";
}

/* ---- migration and defaults ---------------------------------------------------------------- */

static int
migrate(hw_db *db, int from, char *err, size_t errlen)
{
	if (from < 0) /* prepare refuses it; never index before the array */
		return pp_err(err, errlen, PP_EDB, "%s: schema version %d is not one paraplan writes", db->path, from);
	for (int v = from; v < HW_SCHEMA_VERSION; v++) {
		char what[64];
		snprintf(what, sizeof what, "migrating the schema to version %d", v + 1);
		int rc = hw_exec(db, "BEGIN IMMEDIATE", err, errlen, what);
		if (rc != 0)
			return rc;
		char bump[64];
		snprintf(bump, sizeof bump, "PRAGMA user_version = %d", v + 1);
		if ((rc = hw_exec(db, migrations[v], err, errlen, what)) != 0 ||
		    (rc = hw_exec(db, bump, err, errlen, what)) != 0 ||
		    (rc = hw_exec(db, "COMMIT", err, errlen, what)) != 0) {
			sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
			return rc;
		}
	}
	return 0;
}

static const char *const default_tables[] = {"gpu", "system", "price", "figure_source", "profile"};
enum { NDEFAULT_TABLES = sizeof default_tables / sizeof default_tables[0] };

/* Replaces the default rows with the compiled-in ones, in one transaction. */
static int
load_defaults(hw_db *db, const char *hash, char *err, size_t errlen)
{
	const char *what = "loading the default hardware data";
	static const char *const touched[] = {"meta", "gpu", "system", "price", "figure_source", "profile", "param", NULL};
	int rc = hw_check_before_write(db, touched, err, errlen);
	if (rc != 0)
		return rc;
	rc = hw_exec(db, "BEGIN IMMEDIATE", err, errlen, what);
	if (rc != 0)
		return rc;
	char sql[256];
	sqlite3_int64 maxrow[NDEFAULT_TABLES];
	for (size_t t = 0; t < NDEFAULT_TABLES; t++) {
		snprintf(sql, sizeof sql, "DELETE FROM %s WHERE origin = 'default'", default_tables[t]);
		if ((rc = hw_exec(db, sql, err, errlen, what)) != 0)
			goto fail;
	}
	if ((rc = hw_exec(db, "DELETE FROM param WHERE shipped = 1", err, errlen, what)) != 0)
		goto fail;
	for (size_t t = 0; t < NDEFAULT_TABLES; t++) {
		sqlite3_stmt *st;
		snprintf(sql, sizeof sql, "SELECT coalesce(max(rowid), 0) FROM %s", default_tables[t]);
		if (sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL) != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW) {
			sqlite3_finalize(st);
			rc = hw_sqlerr(db, err, errlen, what);
			goto fail;
		}
		maxrow[t] = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	/* The default files' parameter rows land in a temporary table of that name first (SQLite
	 * resolves an unqualified name to the temp schema), so that they cannot collide with the
	 * user's rows of the same key and origin before they are marked as shipped. */
	if ((rc = hw_exec(db,
			  "CREATE TEMP TABLE param(scope TEXT, subject TEXT, key TEXT, value REAL, origin TEXT, method TEXT,"
			  " source TEXT)",
			  err, errlen, what)) != 0)
		goto fail;
	for (size_t i = 0; hw_default_files[i].name != NULL; i++) {
		char w[96];
		snprintf(w, sizeof w, "loading hardware/data/%s.sql", hw_default_files[i].name);
		if ((rc = hw_exec(db, hw_default_files[i].text, err, errlen, w)) != 0)
			goto fail;
	}
	/* Rows the default files inserted are the defaults.  Parameters keep the origin their file
	 * gives them (default or fitted) and are marked as shipped. */
	if ((rc = hw_exec(db,
			  "INSERT INTO main.param(scope, subject, key, value, origin, method, source, shipped)"
			  " SELECT scope, subject, key, value, origin, method, source, 1 FROM temp.param;"
			  " DROP TABLE temp.param",
			  err, errlen, what)) != 0)
		goto fail;
	for (size_t t = 0; t < NDEFAULT_TABLES; t++) {
		snprintf(sql, sizeof sql, "UPDATE %s SET origin = 'default' WHERE rowid > %lld", default_tables[t],
			 (long long)maxrow[t]);
		if ((rc = hw_exec(db, sql, err, errlen, what)) != 0)
			goto fail;
	}
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->sql, "INSERT OR REPLACE INTO meta(key, value) VALUES('defaults_hash', ?)", -1, &st,
			       NULL) != SQLITE_OK) {
		rc = hw_sqlerr(db, err, errlen, what);
		goto fail;
	}
	sqlite3_bind_text(st, 1, hash, -1, SQLITE_TRANSIENT);
	int s = sqlite3_step(st);
	sqlite3_finalize(st);
	if (s != SQLITE_DONE) {
		rc = hw_sqlerr(db, err, errlen, what);
		goto fail;
	}
	if ((rc = hw_exec(db, "COMMIT", err, errlen, what)) != 0)
		goto fail;
	return 0;
fail:
	sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

static int
stored_hash(hw_db *db, char *out, size_t n)
{
	sqlite3_stmt *st;
	out[0] = '\0';
	if (sqlite3_prepare_v2(db->sql, "SELECT value FROM meta WHERE key = 'defaults_hash'", -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) != NULL)
		pp_strlcpy(out, (const char *)sqlite3_column_text(st, 0), n);
	sqlite3_finalize(st);
	return 0;
}

/* Brings an open connection to the current schema and defaults.  A read-only connection only
 * checks that nothing needs doing. */
static int
prepare(hw_db *db, bool readonly, char *err, size_t errlen)
{
	int v = 0;
	int rc = user_version(db, &v, err, errlen);
	if (rc != 0)
		return rc;
	/* Any version but a known one is refused before anything else is read or written: the
	 * version indexes the migrations (a negative one read before the array: leftover strings
	 * ran as SQL, -100000 crashed). */
	if (v < 0)
		return pp_err(err, errlen, PP_EDB,
			      "%s: schema version %d is not one paraplan writes (0 to %d): not a paraplan hardware database, "
			      "or a damaged one; it was left untouched",
			      db->path, v, HW_SCHEMA_VERSION);
	if (v > HW_SCHEMA_VERSION)
		return pp_err(err, errlen, PP_EDB,
			      "%s: schema version %d was written by a newer paraplan (this one knows up to %d): "
			      "upgrade paraplan or use another --db", db->path, v, HW_SCHEMA_VERSION);
	char want[32], have[32];
	snprintf(want, sizeof want, "%016llx", (unsigned long long)defaults_hash());
	if (readonly) {
		if (v < HW_SCHEMA_VERSION)
			return pp_err(err, errlen, PP_EDB,
				      "%s: schema version %d needs migrating to %d, but the database is read-only", db->path, v,
				      HW_SCHEMA_VERSION);
		stored_hash(db, have, sizeof have);
		if (strcmp(have, want) != 0)
			db->stale_defaults = true;
		return 0;
	}
	if (v < HW_SCHEMA_VERSION && (rc = migrate(db, v, err, errlen)) != 0)
		return rc;
	stored_hash(db, have, sizeof have);
	if (strcmp(have, want) != 0 && (rc = load_defaults(db, want, err, errlen)) != 0)
		return rc;
	return 0;
}

/* ---- opening ------------------------------------------------------------------------------- */

static hw_db *
db_alloc(const char *path)
{
	hw_db *db = calloc(1, sizeof *db);
	if (db == NULL)
		return NULL;
	db->path = strdup(path);
	if (db->path == NULL) {
		free(db);
		return NULL;
	}
	return db;
}

void
hw_close(hw_db *db)
{
	if (db == NULL)
		return;
	if (db->sql)
		sqlite3_close(db->sql);
	free(db->path);
	free(db);
}

static int
open_conn(hw_db *db, int flags, char *err, size_t errlen)
{
	if (sqlite3_open_v2(db->path, &db->sql, flags, NULL) != SQLITE_OK) {
		int rc;
		if (db->sql != NULL) {
			rc = pp_err(err, errlen, PP_EIO, "%s: cannot open the hardware database: %s", db->path,
				    sqlite3_errmsg(db->sql));
			sqlite3_close(db->sql);
			db->sql = NULL;
		} else {
			rc = pp_err(err, errlen, PP_ENOMEM, "out of memory");
		}
		return rc;
	}
	sqlite3_busy_timeout(db->sql, 5000);
	sqlite3_extended_result_codes(db->sql, 0);
	/* The first real read tells a database from any other file. */
	char *msg = NULL;
	if (sqlite3_exec(db->sql, "SELECT count(*) FROM sqlite_master", NULL, NULL, &msg) != SQLITE_OK) {
		int code = sqlite3_errcode(db->sql);
		int rc;
		if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT)
			rc = pp_err(err, errlen, PP_EDB,
				    "%s: not a paraplan hardware database (the file is corrupt or not SQLite); "
				    "it was left untouched", db->path);
		else
			rc = hw_sqlerr(db, err, errlen, "opening");
		sqlite3_free(msg);
		sqlite3_close(db->sql);
		db->sql = NULL;
		return rc;
	}
	/* temporary tables and indexes in memory: they are small, and a full disk or a file
	 * size limit must not fail a command that writes nothing */
	sqlite3_exec(db->sql, "PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY", NULL, NULL, NULL);
	/* Damage is found, not used as if whole: every page read (by a query or on the way to a
	 * write) has its cells' sizes checked, and a file small enough to check in a blink (every
	 * database paraplan itself makes: defaults 0.2 MB, a big calibration some MB) is checked
	 * whole on open.  A larger one is checked table by table before each write (run.c). */
	sqlite3_exec(db->sql, "PRAGMA cell_size_check = ON", NULL, NULL, NULL);
	struct stat st;
	if (flags & SQLITE_OPEN_MEMORY) {
		db->checked = true; /* made here and now: nothing from outside */
	} else if (stat(db->path, &st) == 0 && st.st_size <= HW_CHECK_WHOLE_BYTES) {
		int rc = hw_check_pages(db, NULL, err, errlen);
		if (rc != 0) {
			sqlite3_close(db->sql);
			db->sql = NULL;
			return rc;
		}
		db->checked = true;
	}
	return 0;
}

static int
open_memory(hw_db **out, char *err, size_t errlen)
{
	hw_db *db = db_alloc(":memory:");
	if (db == NULL)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	int rc = open_conn(db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_MEMORY, err, errlen);
#ifdef HAVE_SQLITE3_DESERIALIZE
	/* the defaults' image, made by the same code at build time: prepare then finds the schema
	 * version and the defaults' hash current and runs nothing */
	if (rc == 0 && hw_db_image_len > 0) {
		unsigned char *buf = sqlite3_malloc64(hw_db_image_len);
		if (buf == NULL) {
			rc = pp_err(err, errlen, PP_ENOMEM, "out of memory");
		} else {
			memcpy(buf, hw_db_image, hw_db_image_len);
			/* SQLite frees buf when the connection closes, or now if it fails */
			if (sqlite3_deserialize(db->sql, "main", buf, (sqlite3_int64)hw_db_image_len,
						(sqlite3_int64)hw_db_image_len,
						SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE) != SQLITE_OK)
				rc = hw_sqlerr(db, err, errlen, "loading the defaults' image");
		}
	}
#endif
	if (rc == 0)
		rc = prepare(db, false, err, errlen);
	if (rc != 0) {
		hw_close(db);
		return rc;
	}
	*out = db;
	return 0;
}

/* Where the database lives when no path is given. */
static int
default_path(char *buf, size_t n, bool *from_env)
{
	const char *env = getenv("PARAPLAN_DB");
	*from_env = false;
	if (env != NULL && env[0] != '\0') {
		*from_env = true;
		return pp_strlcpy(buf, env, n) ? 0 : -1;
	}
	const char *xdg = getenv("XDG_DATA_HOME");
	if (xdg != NULL && xdg[0] == '/')
		return snprintf(buf, n, "%s/paraplan/hardware.db", xdg) < (int)n ? 0 : -1;
	const char *home = getenv("HOME");
	if (home == NULL || home[0] == '\0')
		return -1;
	return snprintf(buf, n, "%s/.local/share/paraplan/hardware.db", home) < (int)n ? 0 : -1;
}

int
hw_open(const char *path, unsigned flags, hw_db **out, char *err, size_t errlen)
{
	*out = NULL;
	char buf[4096];
	bool implicit = false, from_env = false;
	if (path == NULL) {
		if (default_path(buf, sizeof buf, &from_env) != 0) {
			int rc = open_memory(out, err, errlen);
			if (rc == 0)
				(*out)->notice = "no home directory for the hardware database: "
						 "using an in-memory copy of the defaults";
			return rc;
		}
		path = buf;
		implicit = !from_env;
	}
	if (strcmp(path, ":memory:") == 0)
		return open_memory(out, err, errlen);
	/* SQLite takes "" for a private temporary database: nothing the user asked for would last */
	if (path[0] == '\0')
		return pp_err(err, errlen, PP_EUSAGE, "the hardware database path is empty (--db or PARAPLAN_DB)");

	bool readonly = (flags & HW_OPEN_READONLY) != 0;
	struct stat st;
	bool exists = stat(path, &st) == 0;
	if (exists && S_ISDIR(st.st_mode))
		return pp_err(err, errlen, PP_EUSAGE, "%s: is a directory, expected a database file", path);
	/* A device, FIFO or socket is no database: SQLite would read /dev/null as an empty one,
	 * migrate it and leave /dev/null-journal behind. */
	if (exists && !S_ISREG(st.st_mode))
		return pp_err(err, errlen, PP_EUSAGE, "%s: is %s, expected a database file", path,
			      S_ISCHR(st.st_mode)    ? "a character device"
			      : S_ISBLK(st.st_mode)  ? "a block device"
			      : S_ISFIFO(st.st_mode) ? "a FIFO"
			      : S_ISSOCK(st.st_mode) ? "a socket"
						     : "not a regular file");
	if (!exists && readonly)
		return pp_err(err, errlen, PP_ENOTFOUND, "%s: no such database", path);
	if (exists && !readonly && access(path, W_OK) != 0)
		readonly = true; /* a read-only file is still readable; writes will say why they fail */

	if (!exists) {
		/* Create the directory for the default location; an explicit path's directory must exist. */
		char dir[4096];
		pp_strlcpy(dir, path, sizeof dir);
		char *slash = strrchr(dir, '/');
		if (slash != NULL && slash != dir) {
			*slash = '\0';
			if (implicit) {
				if (pp_mkdirs(dir, NULL, 0) != 0)
					goto fallback;
			} else if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
				return pp_err(err, errlen, PP_EIO, "%s: directory %s does not exist", path, dir);
			}
		}
	}
	hw_db *db = db_alloc(path);
	if (db == NULL)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	int oflags = readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
	int rc = open_conn(db, oflags, err, errlen);
	if (rc == 0)
		rc = prepare(db, readonly, err, errlen);
	if (rc != 0) {
		bool created_empty = !exists;
		hw_close(db);
		if (created_empty)
			unlink(path); /* a half-created file would be worse than none */
		if (implicit && !exists)
			goto fallback;
		return rc;
	}
	db->readonly = readonly;
	if (readonly && db->stale_defaults)
		db->notice = "the hardware database is read-only and holds older default data; "
			     "open a writable copy to refresh it";
	*out = db;
	return 0;

fallback:
	rc = open_memory(out, err, errlen);
	if (rc == 0)
		(*out)->notice = "cannot create the hardware database in the default location: "
				 "using an in-memory copy of the defaults (set PARAPLAN_DB or pass --db)";
	return rc;
}

const char *hw_path(const hw_db *db) { return db->path; }
const char *hw_notice(const hw_db *db) { return db->notice; }
bool hw_readonly(const hw_db *db) { return db->readonly; }
