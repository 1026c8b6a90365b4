/*
 * bundle.c -- moving a system's measurements between hardware databases: 'hw export' writes the
 * user's rows (GPUs and systems they defined, prices, figure sources, profiles, fitted and
 * measured parameters, calibration and import runs with every measurement, replayed validation
 * runs) as one JSON document, paraplan.hw-export/1; 'hw import' adds it to another database.
 *
 * The SQL dump it replaces could not be merged: it carried row ids, so a run of the exporting
 * database collided with (or silently attached its measurements to) another run of the
 * importing one, and names that existed on both sides failed UNIQUE half-way.  Here a run and its
 * rows travel together and get new ids on import; GPUs, systems, profiles, figure sources and
 * parameters are matched by their natural keys: identical rows are skipped, different ones
 * refuse the import.  A run already in the database (same system, kind, start and host) also
 * refuses it.  Everything happens in one transaction: the import lands whole or not at all.
 *
 * A table travels as an array of rows, each an object of its columns (read from the database, so
 * the format follows the schema) with a NULL column left out; a file from a newer database (a
 * column this one lacks) is refused.
 */
#include "config.h"
#include "hardware/hw_int.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- export --------------------------------------------------------------------------------- */

/* Rows of tbl WHERE `where` (with ?1 and ?2 bound to a and b when not NULL), without the columns
 * named in `drop`, as an array of objects; *ids gets each row's rowid when ids is not NULL (the run
 * ids a caller needs for the rows that hang from them). */
static cJSON *
table_json(hw_db *db, const char *tbl, const char *where, const char *a, const char *b, const char *drop,
	   int64_t **ids, size_t *nids, char *err, size_t errlen, int *rc)
{
	char sql[512];
	snprintf(sql, sizeof sql, "SELECT rowid, * FROM %s WHERE %s ORDER BY rowid", tbl, where);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL) != SQLITE_OK) {
		*rc = hw_sqlerr(db, err, errlen, "exporting");
		return NULL;
	}
	if (a != NULL)
		sqlite3_bind_text(st, 1, a, -1, SQLITE_TRANSIENT);
	if (b != NULL)
		sqlite3_bind_text(st, 2, b, -1, SQLITE_TRANSIENT);
	cJSON *t = cJSON_CreateArray();
	int n = sqlite3_column_count(st);
	bool keep[128] = {false};
	for (int i = 1; i < n && i < 128; i++) {
		char pat[80];
		snprintf(pat, sizeof pat, ",%s,", sqlite3_column_name(st, i));
		keep[i] = drop == NULL || strstr(drop, pat) == NULL;
	}
	size_t cap = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		cJSON *row = cJSON_CreateObject();
		for (int i = 1; i < n && i < 128; i++) {
			if (!keep[i])
				continue;
			const char *c = sqlite3_column_name(st, i);
			switch (sqlite3_column_type(st, i)) {
			case SQLITE_INTEGER:
				cJSON_AddNumberToObject(row, c, (double)sqlite3_column_int64(st, i));
				break;
			case SQLITE_FLOAT:
				cJSON_AddNumberToObject(row, c, sqlite3_column_double(st, i));
				break;
			case SQLITE_NULL:
				break; /* absent: NULL */
			default:
				cJSON_AddStringToObject(row, c, hw_col_text(st, i));
			}
		}
		cJSON_AddItemToArray(t, row);
		if (ids != NULL) {
			if (PP_GROW(*ids, cap, *nids + 1) != 0) {
				sqlite3_finalize(st);
				cJSON_Delete(t);
				*rc = pp_err(err, errlen, PP_ENOMEM, "out of memory");
				return NULL;
			}
			(*ids)[(*nids)++] = sqlite3_column_int64(st, 0);
		}
	}
	sqlite3_finalize(st);
	*rc = 0;
	return t;
}

/* Adds tbl's rows under key of parent; returns the rc. */
static int
add_table(hw_db *db, cJSON *parent, const char *tbl, const char *where, const char *a, const char *b, const char *drop,
	  char *err, size_t errlen)
{
	int rc;
	cJSON *t = table_json(db, tbl, where, a, b, drop, NULL, NULL, err, errlen, &rc);
	if (t != NULL)
		cJSON_AddItemToObject(parent, tbl, t);
	return rc;
}

static bool
has_table(hw_db *db, const char *tbl)
{
	sqlite3_stmt *st;
	bool yes = false;
	if (sqlite3_prepare_v2(db->sql, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1", -1, &st, NULL) ==
	    SQLITE_OK) {
		sqlite3_bind_text(st, 1, tbl, -1, SQLITE_STATIC);
		yes = sqlite3_step(st) == SQLITE_ROW;
		sqlite3_finalize(st);
	}
	return yes;
}

int
hw_bundle_export(hw_db *db, const char *system, cJSON **out, char *err, size_t errlen)
{
	*out = NULL;
	char gpu[64] = "";
	if (system != NULL) {
		hw_system sys;
		int rc = hw_system_get(db, system, &sys, err, errlen);
		if (rc != 0)
			return rc;
		pp_strlcpy(gpu, sys.gpu.name, sizeof gpu);
	}
	const char *S = system, *G = system ? gpu : NULL;
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "schema", HW_EXPORT_SCHEMA);
	cJSON_AddNumberToObject(doc, "database_schema", HW_SCHEMA_VERSION);
	if (system != NULL)
		cJSON_AddStringToObject(doc, "system", system); /* absent: every system */
	cJSON *tables = cJSON_AddObjectToObject(doc, "tables");
	int rc;
	/* what the user defined (the compiled-in rows are in every database already) */
	if ((rc = add_table(db, tables, "gpu", S ? "origin <> 'default' AND name = ?2" : "origin <> 'default'", NULL, G, NULL,
			    err, errlen)) != 0 ||
	    (rc = add_table(db, tables, "system", S ? "origin <> 'default' AND name = ?1" : "origin <> 'default'", S, NULL,
			    NULL, err, errlen)) != 0 ||
	    (rc = add_table(db, tables, "figure_source",
			    S ? "origin <> 'default' AND ((tbl = 'system' AND name = ?1) OR (tbl = 'gpu' AND name = ?2))"
			      : "origin <> 'default'",
			    S, G, NULL, err, errlen)) != 0 ||
	    (rc = add_table(db, tables, "price",
			    S ? "origin <> 'default' AND ((subject_kind = 'system' AND subject = ?1) OR "
				"(subject_kind = 'gpu' AND subject = ?2))"
			      : "origin <> 'default'",
			    S, G, ",id,", err, errlen)) != 0)
		goto fail;
	if (has_table(db, "profile") &&
	    (rc = add_table(db, tables, "profile", "origin <> 'default'", NULL, NULL, NULL, err, errlen)) != 0)
		goto fail;
	/* parameters of no run; a run's parameters travel with it */
	if ((rc = add_table(db, tables, "param",
			    S ? "shipped = 0 AND run_id IS NULL AND ((scope = 'system' AND subject = ?1) OR "
				"(scope = 'gpu' AND subject = ?2) OR scope NOT IN ('system', 'gpu'))"
			      : "shipped = 0 AND run_id IS NULL",
			    S, G, ",run_id,", err, errlen)) != 0)
		goto fail;
	/* the runs, each with its rows */
	cJSON *runs = cJSON_AddArrayToObject(doc, "runs");
	int64_t *ids = NULL;
	size_t nids = 0;
	cJSON *rt = table_json(db, "cal_run", S ? "system = ?1" : "1", S, NULL, ",id,", &ids, &nids, err, errlen, &rc);
	if (rt == NULL)
		goto fail;
	for (size_t i = 0; i < nids && rc == 0; i++) {
		char id[32];
		snprintf(id, sizeof id, "%lld", (long long)ids[i]);
		cJSON *run = cJSON_CreateObject();
		cJSON_AddItemToArray(runs, run);
		cJSON_AddItemToObject(run, "cal_run", cJSON_Duplicate(cJSON_GetArrayItem(rt, (int)i), true));
		static const char *const rowtbl[] = {"gemm_meas", "membw_meas", "coll_meas", "param"};
		for (size_t k = 0; k < 4 && rc == 0; k++)
			rc = add_table(db, run, rowtbl[k], "run_id = CAST(?1 AS INTEGER)", id, NULL, ",run_id,", err, errlen);
	}
	free(ids);
	cJSON_Delete(rt);
	if (rc != 0)
		goto fail;
	/* the replayed plans, each with its timed steps */
	cJSON *vals = cJSON_AddArrayToObject(doc, "validations");
	ids = NULL, nids = 0;
	cJSON *vt = table_json(db, "validation_run", S ? "system = ?1" : "1", S, NULL, ",id,", &ids, &nids, err, errlen, &rc);
	if (vt == NULL)
		goto fail;
	for (size_t i = 0; i < nids && rc == 0; i++) {
		char id[32];
		snprintf(id, sizeof id, "%lld", (long long)ids[i]);
		cJSON *v = cJSON_CreateObject();
		cJSON_AddItemToArray(vals, v);
		cJSON_AddItemToObject(v, "validation_run", cJSON_Duplicate(cJSON_GetArrayItem(vt, (int)i), true));
		if (has_table(db, "validation_step"))
			rc = add_table(db, v, "validation_step", "run_id = CAST(?1 AS INTEGER)", id, NULL, ",run_id,", err, errlen);
	}
	free(ids);
	cJSON_Delete(vt);
	if (rc != 0)
		goto fail;
	*out = doc;
	return 0;
fail:
	cJSON_Delete(doc);
	return rc;
}

/* ---- import --------------------------------------------------------------------------------- */

typedef struct imp {
	hw_db *db;
	const char *origin; /* the file, for messages */
	char *err;
	size_t errlen;
	int rows, runs, validations, skipped;
} imp;

static int
bad(imp *x, const char *fmt, const char *a, const char *b)
{
	char what[400];
	snprintf(what, sizeof what, fmt, a, b);
	return pp_err(x->err, x->errlen, PP_EINPUT, "%s: %s: nothing was imported", x->origin, what);
}

/* The columns of tbl in this database, as ",a,b,c,". */
static int
columns_here(imp *x, const char *tbl, pp_str *out)
{
	char sql[128];
	snprintf(sql, sizeof sql, "PRAGMA table_info(%s)", tbl);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(x->db->sql, sql, -1, &st, NULL) != SQLITE_OK)
		return hw_sqlerr(x->db, x->err, x->errlen, "importing");
	pp_str_add(out, ",");
	while (sqlite3_step(st) == SQLITE_ROW)
		pp_str_addf(out, "%s,", hw_col_text(st, 1));
	sqlite3_finalize(st);
	return 0;
}

/* Checks a table: an array of objects whose members are columns this database has (never its
 * row ids) holding finite numbers or strings. */
static int
check_table(imp *x, const char *tbl, const cJSON *t)
{
	if (!cJSON_IsArray(t))
		return bad(x, "\"%s\" must be an array of rows%s", tbl, "");
	pp_str here = {0};
	int rc = columns_here(x, tbl, &here);
	if (rc != 0) {
		pp_str_free(&here);
		return rc;
	}
	if (here.len <= 1) {
		pp_str_free(&here);
		return bad(x, "this database has no table \"%s\" (the file comes from a newer paraplan)%s", tbl, "");
	}
	const cJSON *row;
	cJSON_ArrayForEach(row, t)
	{
		if (!cJSON_IsObject(row) || cJSON_GetArraySize(row) == 0 || cJSON_GetArraySize(row) > 64) {
			pp_str_free(&here);
			return bad(x, "a row of \"%s\" is not an object of its columns%s", tbl, "");
		}
		const cJSON *v;
		cJSON_ArrayForEach(v, row)
		{
			char pat[80];
			const char *c = v->string;
			if (strlen(c) > 60 || strspn(c, "abcdefghijklmnopqrstuvwxyz_0123456789") != strlen(c) || !strcmp(c, "id") ||
			    !strcmp(c, "run_id") || (snprintf(pat, sizeof pat, ",%s,", c), strstr(here.buf, pat) == NULL)) {
				rc = bad(x, "table \"%s\" has no column \"%s\" here (the file comes from a newer paraplan, or was edited)",
					 tbl, c);
				pp_str_free(&here);
				return rc;
			}
			if (!(cJSON_IsNumber(v) && isfinite(v->valuedouble)) && !cJSON_IsString(v)) {
				pp_str_free(&here);
				return bad(x, "column \"%s\" of a row of \"%s\" is not a finite number or a string", c, tbl);
			}
		}
	}
	pp_str_free(&here);
	return 0;
}

static void
bind_value(sqlite3_stmt *st, int i, const cJSON *v)
{
	if (v == NULL || cJSON_IsNull(v))
		sqlite3_bind_null(st, i);
	else if (cJSON_IsString(v))
		sqlite3_bind_text(st, i, v->valuestring, -1, SQLITE_TRANSIENT);
	else if (v->valuedouble == floor(v->valuedouble) && fabs(v->valuedouble) < 9007199254740992.0)
		sqlite3_bind_int64(st, i, (sqlite3_int64)v->valuedouble);
	else
		sqlite3_bind_double(st, i, v->valuedouble);
}

static const char *
row_text(const cJSON *row, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, name);
	return cJSON_IsString(v) ? v->valuestring : "";
}

/* The natural key of a table's rows: the columns that name a row in any database. */
static const char *
natural_key(const char *tbl)
{
	if (!strcmp(tbl, "gpu") || !strcmp(tbl, "system"))
		return "name";
	if (!strcmp(tbl, "figure_source"))
		return "tbl,name,field";
	if (!strcmp(tbl, "profile"))
		return "kind,name";
	if (!strcmp(tbl, "param"))
		return "scope,subject,key,origin,shipped";
	return NULL; /* price, measurements: no key; identical rows are duplicates */
}

/* Prepares sql, binding each of the row's values in order (from ?1), then extra (when not 0). */
static sqlite3_stmt *
prepare_row(imp *x, const char *sql, const cJSON *row, const char *only, int64_t extra, int *rc)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(x->db->sql, sql, -1, &st, NULL) != SQLITE_OK) {
		*rc = hw_sqlerr(x->db, x->err, x->errlen, "importing");
		return NULL;
	}
	int k = 1;
	const cJSON *v;
	cJSON_ArrayForEach(v, row)
	{
		char pat[80];
		snprintf(pat, sizeof pat, ",%s,", v->string);
		if (only == NULL || strstr(only, pat) != NULL)
			bind_value(st, k++, v);
	}
	if (extra != 0)
		sqlite3_bind_int64(st, k, extra);
	*rc = 0;
	return st;
}

/* Inserts the rows of one table.  A row with a natural key that is here already is skipped when
 * its values are the same and refuses the import when not; a row without one is skipped when an
 * identical row is here -- unless it hangs from a new run (run_id not 0): then it cannot be here,
 * and two equal measurements of one run are two measurements. */
static int
import_table(imp *x, const char *tbl, const cJSON *t, int64_t run_id)
{
	int rc = check_table(x, tbl, t);
	if (rc != 0)
		return rc;
	const char *key = natural_key(tbl);
	char keys[80];
	snprintf(keys, sizeof keys, ",%s,", key ? key : "");
	bool lookup = key != NULL || run_id == 0;
	const cJSON *row;
	cJSON_ArrayForEach(row, t)
	{
		pp_str ins = {0}, vals = {0}, match = {0}, same = {0};
		int i = 0, km = 0;
		const cJSON *v;
		cJSON_ArrayForEach(v, row)
		{
			char pat[80];
			snprintf(pat, sizeof pat, ",%s,", v->string);
			pp_str_addf(&ins, "%s%s", i ? ", " : "", v->string);
			pp_str_addf(&vals, "%s?%d", i ? ", " : "", i + 1);
			pp_str_addf(&same, " AND %s IS ?%d", v->string, i + 2);
			if (key == NULL || strstr(keys, pat) != NULL) {
				km++;
				pp_str_addf(&match, "%s%s IS ?%d", km > 1 ? " AND " : "", v->string, km);
			}
			i++;
		}
		if (run_id != 0) {
			pp_str_addf(&ins, ", run_id");
			pp_str_addf(&vals, ", ?%d", i + 1);
		}
		pp_str sql = {0};
		int64_t found = 0;
		if (lookup && match.len > 0) {
			pp_str_addf(&sql, "SELECT rowid FROM %s WHERE %s", tbl, match.buf);
			sqlite3_stmt *st = sql.oom ? NULL : prepare_row(x, sql.buf, row, key ? keys : NULL, 0, &rc);
			if (st != NULL && sqlite3_step(st) == SQLITE_ROW)
				found = sqlite3_column_int64(st, 0);
			sqlite3_finalize(st);
			pp_str_free(&sql);
		}
		if (rc == 0 && found != 0 && key != NULL) {
			/* here under the same key: the same row, or a conflict */
			pp_str_addf(&sql, "SELECT 1 FROM %s WHERE rowid = ?1%s", tbl, same.buf ? same.buf : "");
			sqlite3_stmt *st = sql.oom ? NULL : prepare_row(x, sql.buf, row, NULL, 0, &rc);
			if (st != NULL) {
				/* rowid is ?1, the values ?2...: rebind in that order */
				sqlite3_clear_bindings(st);
				sqlite3_bind_int64(st, 1, found);
				int k = 2;
				cJSON_ArrayForEach(v, row) bind_value(st, k++, v);
				bool identical = sqlite3_step(st) == SQLITE_ROW;
				sqlite3_finalize(st);
				if (!identical) {
					char what[200];
					if (!strcmp(tbl, "param"))
						snprintf(what, sizeof what, "the %s parameter %s of %s", row_text(row, "origin"),
							 row_text(row, "key"), row_text(row, "subject"));
					else
						snprintf(what, sizeof what, "%s \"%s\"", tbl, row_text(row, "name"));
					rc = bad(x, "%s is in this database with other values%s (remove one of them first)", what, "");
				}
			}
			pp_str_free(&sql);
		}
		if (rc == 0 && found != 0) {
			x->skipped++;
		} else if (rc == 0) {
			pp_str_addf(&sql, "INSERT INTO %s(%s) VALUES(%s)", tbl, ins.buf, vals.buf);
			sqlite3_stmt *st = sql.oom ? NULL : prepare_row(x, sql.buf, row, NULL, run_id, &rc);
			if (st != NULL && sqlite3_step(st) != SQLITE_DONE) {
				char what[96];
				snprintf(what, sizeof what, "importing a row of %s", tbl);
				rc = hw_sqlerr(x->db, x->err, x->errlen, what);
			} else if (st != NULL) {
				x->rows++;
			}
			sqlite3_finalize(st);
			pp_str_free(&sql);
		}
		bool oom = ins.oom || vals.oom || match.oom || same.oom;
		pp_str_free(&ins);
		pp_str_free(&vals);
		pp_str_free(&match);
		pp_str_free(&same);
		if (rc == 0 && oom)
			rc = pp_err(x->err, x->errlen, PP_ENOMEM, "out of memory");
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* A run or validation (one row): refused when the same one is here; its new id in *id. */
static int
import_parent(imp *x, const char *tbl, const cJSON *row, const char *ident, int64_t *id)
{
	if (!cJSON_IsObject(row))
		return bad(x, "a %s must be an object of its columns%s", tbl, "");
	const char *what = !strcmp(tbl, "cal_run") ? "calibration run" : "validation run";
	const char *system = row_text(row, "system");
	hw_system sys;
	char e[256];
	if (hw_system_get(x->db, system, &sys, e, sizeof e) != 0)
		return bad(x, "a %s is of system \"%s\", which neither this database nor the file defines", what, system);
	/* the same one here already, by its identifying columns */
	pp_str q = {0};
	pp_str_addf(&q, "SELECT id FROM %s WHERE 1", tbl);
	char cols[160];
	pp_strlcpy(cols, ident, sizeof cols);
	const cJSON *vals[8];
	int nv = 0;
	for (char *tok = strtok(cols, ","); tok && nv < 8; tok = strtok(NULL, ",")) {
		vals[nv] = cJSON_GetObjectItemCaseSensitive(row, tok);
		pp_str_addf(&q, " AND %s IS ?%d", tok, nv + 1);
		nv++;
	}
	sqlite3_stmt *st;
	if (q.oom || sqlite3_prepare_v2(x->db->sql, q.buf, -1, &st, NULL) != SQLITE_OK) {
		pp_str_free(&q);
		return hw_sqlerr(x->db, x->err, x->errlen, "importing");
	}
	pp_str_free(&q);
	for (int i = 0; i < nv; i++)
		bind_value(st, i + 1, vals[i]);
	if (sqlite3_step(st) == SQLITE_ROW) {
		char here[240];
		snprintf(here, sizeof here, "%s of %s started %s is already in this database as %s %lld", what, system,
			 row_text(row, !strcmp(tbl, "cal_run") ? "started" : "created"), !strcmp(tbl, "cal_run") ? "run" : "validation",
			 (long long)sqlite3_column_int64(st, 0));
		sqlite3_finalize(st);
		return bad(x, "the %s%s", here, "");
	}
	sqlite3_finalize(st);
	cJSON *one = cJSON_CreateArray();
	cJSON_AddItemReferenceToArray(one, (cJSON *)row);
	int rc = import_table(x, tbl, one, 0);
	cJSON_Delete(one);
	if (rc != 0)
		return rc;
	*id = sqlite3_last_insert_rowid(x->db->sql);
	return 0;
}

int
hw_bundle_import(hw_db *db, const cJSON *doc, const char *origin, bool dry_run, cJSON **summary, char *err,
		 size_t errlen)
{
	*summary = NULL;
	imp x = {.db = db, .origin = origin, .err = err, .errlen = errlen};
	const cJSON *schema = cJSON_GetObjectItemCaseSensitive(doc, "schema");
	if (!cJSON_IsObject(doc) || !cJSON_IsString(schema))
		return pp_err(err, errlen, PP_EINPUT, "%s: not a 'paraplan hw export' document (no \"schema\")", origin);
	if (strcmp(schema->valuestring, HW_EXPORT_SCHEMA) != 0)
		return pp_err(err, errlen, PP_EINPUT, "%s: a %s document; 'hw import' reads %s (the output of 'hw export')", origin,
			      schema->valuestring, HW_EXPORT_SCHEMA);
	const cJSON *dbs = cJSON_GetObjectItemCaseSensitive(doc, "database_schema");
	if (!cJSON_IsNumber(dbs) || dbs->valuedouble > HW_SCHEMA_VERSION)
		return pp_err(err, errlen, PP_EINPUT,
			      "%s: written from a database of schema %g; this paraplan knows up to %d: upgrade it to import",
			      origin, cJSON_IsNumber(dbs) ? dbs->valuedouble : -1.0, HW_SCHEMA_VERSION);
	if (hw_readonly(db))
		return pp_err(err, errlen, PP_EUSAGE, "%s: the database is open read-only", origin);
	const cJSON *tables = cJSON_GetObjectItemCaseSensitive(doc, "tables");
	const cJSON *runs = cJSON_GetObjectItemCaseSensitive(doc, "runs");
	const cJSON *vals = cJSON_GetObjectItemCaseSensitive(doc, "validations");
	if (!cJSON_IsObject(tables) || !cJSON_IsArray(runs) || !cJSON_IsArray(vals))
		return pp_err(err, errlen, PP_EINPUT, "%s: \"tables\", \"runs\" and \"validations\" are required", origin);
	int rc = hw_exec(db, "BEGIN IMMEDIATE", err, errlen, "importing");
	if (rc != 0)
		return rc;
	/* definitions first (GPUs before the systems that name them), then what hangs from them */
	static const char *const order[] = {"gpu", "system", "figure_source", "price", "profile", "param"};
	const cJSON *t;
	cJSON_ArrayForEach(t, tables)
	{
		bool known = false;
		for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
			known |= !strcmp(t->string, order[i]);
		if (!known) {
			rc = bad(&x, "\"tables\" holds \"%s\", which 'hw export' does not write%s", t->string, "");
			goto fail;
		}
	}
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		t = cJSON_GetObjectItemCaseSensitive(tables, order[i]);
		if (t != NULL && (rc = import_table(&x, order[i], t, 0)) != 0)
			goto fail;
	}
	const cJSON *r;
	cJSON_ArrayForEach(r, runs)
	{
		int64_t id;
		const cJSON *one = cJSON_GetObjectItemCaseSensitive(r, "cal_run");
		if (one == NULL) {
			rc = bad(&x, "a run has no \"cal_run\"%s%s", "", "");
			goto fail;
		}
		if ((rc = import_parent(&x, "cal_run", one, "system,kind,started,host", &id)) != 0)
			goto fail;
		static const char *const rowtbl[] = {"gemm_meas", "membw_meas", "coll_meas", "param"};
		for (size_t k = 0; k < 4; k++) {
			const cJSON *rt = cJSON_GetObjectItemCaseSensitive(r, rowtbl[k]);
			if (rt != NULL && (rc = import_table(&x, rowtbl[k], rt, id)) != 0)
				goto fail;
		}
		x.runs++;
	}
	cJSON_ArrayForEach(r, vals)
	{
		int64_t id;
		const cJSON *one = cJSON_GetObjectItemCaseSensitive(r, "validation_run");
		if (one == NULL) {
			rc = bad(&x, "a validation has no \"validation_run\"%s%s", "", "");
			goto fail;
		}
		if ((rc = import_parent(&x, "validation_run", one, "system,created,measured_s,predicted_s", &id)) != 0)
			goto fail;
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(r, "validation_step");
		if (st != NULL && (rc = import_table(&x, "validation_step", st, id)) != 0)
			goto fail;
		x.validations++;
	}
	/* a system naming a GPU that is neither here nor in the file */
	sqlite3_stmt *chk;
	if (sqlite3_prepare_v2(db->sql, "SELECT s.name, s.gpu FROM system s LEFT JOIN gpu g ON g.name = s.gpu WHERE g.name IS NULL",
			       -1, &chk, NULL) == SQLITE_OK) {
		if (sqlite3_step(chk) == SQLITE_ROW) {
			char a[64], b[64];
			pp_strlcpy(a, hw_col_text(chk, 0), sizeof a);
			pp_strlcpy(b, hw_col_text(chk, 1), sizeof b);
			sqlite3_finalize(chk);
			rc = bad(&x, "system \"%s\" names GPU \"%s\", which neither this database nor the file defines", a, b);
			goto fail;
		}
		sqlite3_finalize(chk);
	}
	if (dry_run) {
		sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
	} else if ((rc = hw_exec(db, "COMMIT", err, errlen, "importing")) != 0) {
		goto fail;
	}
	cJSON *s = cJSON_CreateObject();
	cJSON_AddStringToObject(s, "schema", "paraplan.hw-import/1");
	cJSON_AddStringToObject(s, "file", origin);
	cJSON_AddBoolToObject(s, "dry_run", dry_run);
	cJSON_AddNumberToObject(s, "runs", x.runs);
	cJSON_AddNumberToObject(s, "validations", x.validations);
	cJSON_AddNumberToObject(s, "rows", x.rows);
	cJSON_AddNumberToObject(s, "identical_rows_skipped", x.skipped);
	*summary = s;
	return 0;
fail:
	sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}
