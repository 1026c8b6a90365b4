/*
 * run.c -- calibration runs: one write transaction per run, so a run lands whole or not at
 * all; listing and comparing runs; validation runs of replayed plans.
 */
#include "config.h"
#include "hardware/hw_int.h"
#include "common/json.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const coll_names[HW_NCOLL] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all",
						  "broadcast", "reduce", "send_recv"};

const char *
hw_coll_name(hw_coll op)
{
	return (unsigned)op < HW_NCOLL ? coll_names[op] : "?";
}

int
hw_coll_parse(const char *s, hw_coll *out)
{
	for (int i = 0; i < HW_NCOLL; i++)
		if (strcmp(s, coll_names[i]) == 0) {
			*out = (hw_coll)i;
			return 0;
		}
	/* nccl-tests spells all-to-all "alltoall" and send/recv "sendrecv". */
	if (!strcmp(s, "alltoall")) {
		*out = HW_ALL_TO_ALL;
		return 0;
	}
	if (!strcmp(s, "sendrecv")) {
		*out = HW_SEND_RECV;
		return 0;
	}
	return PP_EUSAGE;
}

/* nccl-tests doc/PERFORMANCE.md: busbw = algbw x factor. */
int
hw_coll_row_check(const hw_system *sys, const hw_coll_row *r, char *err, size_t errlen)
{
	double nic = sys->gpus_per_node > 0 ? (double)sys->nics_per_node * sys->nic_gbit / 8.0 / sys->gpus_per_node : 0.0;
	double link = sys->scaleup_gbps + nic;
	if (!(link > 0))
		return 0; /* a system without link figures: nothing to hold the row to */
	double hi = 2.2 * link, floor = 1e-3 * link;
	const char *where = r->in_place ? "in-place" : "out-of-place";
	if (!(r->busbw_gbps <= hi) || !(r->algbw_gbps <= hi))
		return pp_err(err, errlen, PP_EINPUT,
			      "%s %s of %lld B at %.4g GB/s bus bandwidth (%.4g GB/s algorithm) is more than %s's GPUs can "
			      "move (%.0f GB/s each way per GPU over NVLink and its share of the NICs, twice that for "
			      "in-network reductions): a mangled log, or not %s",
			      where, hw_coll_name(r->op), (long long)r->bytes, r->busbw_gbps, r->algbw_gbps, sys->name, link,
			      sys->name);
	double slowest_s = 1.0 + (double)r->bytes / (floor * 1e9);
	if (!(r->time_s <= slowest_s))
		return pp_err(err, errlen, PP_EINPUT,
			      "%s %s of %lld B in %.6g us is slower than %s's links could be (a thousandth of %.0f GB/s after "
			      "a second of latency: at most %.6g us): not a measurement to keep",
			      where, hw_coll_name(r->op), (long long)r->bytes, r->time_s * 1e6, sys->name, link,
			      slowest_s * 1e6);
	return 0;
}

double
hw_coll_busbw_factor(hw_coll op, int ranks)
{
	double n = ranks > 0 ? (double)ranks : 1.0;
	switch (op) {
	case HW_ALL_REDUCE:
		return 2.0 * (n - 1.0) / n;
	case HW_ALL_GATHER:
	case HW_REDUCE_SCATTER:
	case HW_ALL_TO_ALL:
		return (n - 1.0) / n;
	case HW_BROADCAST:
	case HW_REDUCE:
	case HW_SEND_RECV:
	default:
		return 1.0;
	}
}

struct hw_run {
	hw_db *db;
	hw_system sys; /* every row is held to what its hardware can do */
	int64_t id;
	sqlite3_stmt *coll, *gemm, *membw;
	long rows;
};

static void
run_free(hw_run *r)
{
	sqlite3_finalize(r->coll);
	sqlite3_finalize(r->gemm);
	sqlite3_finalize(r->membw);
	free(r);
}

int
hw_run_begin(hw_db *db, const hw_run_info *info, hw_run **out, char *err, size_t errlen)
{
	*out = NULL;
	if (db->readonly)
		return pp_err(err, errlen, PP_EIO, "%s: database is read-only: nothing was written", db->path);
	hw_system sys;
	int rc = hw_system_get(db, info->system, &sys, err, errlen);
	if (rc != 0)
		return rc;
	static const char *const touched[] = {"cal_run", "coll_meas", "gemm_meas", "membw_meas", NULL};
	if ((rc = hw_check_before_write(db, touched, err, errlen)) != 0)
		return rc;
	if ((rc = hw_exec(db, "BEGIN IMMEDIATE", err, errlen, "starting a calibration run")) != 0)
		return rc;
	hw_run *r = calloc(1, sizeof *r);
	if (r == NULL) {
		sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	}
	r->db = db;
	r->sys = sys;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->sql,
			       "INSERT INTO cal_run(system, kind, host, driver, cuda, nccl, gpu_name, nodes, gpus_per_node,"
			       " started, status, note) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?,"
			       " strftime('%Y-%m-%dT%H:%M:%SZ','now'), 'incomplete', ?)",
			       -1, &st, NULL) != SQLITE_OK)
		goto sqlfail;
	sqlite3_bind_text(st, 1, info->system, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, info->kind ? info->kind : "import", -1, SQLITE_TRANSIENT);
	const char *texts[] = {info->host, info->driver, info->cuda, info->nccl, info->gpu_name};
	for (int i = 0; i < 5; i++)
		if (texts[i])
			sqlite3_bind_text(st, 3 + i, texts[i], -1, SQLITE_TRANSIENT);
	if (info->nodes > 0)
		sqlite3_bind_int(st, 8, info->nodes);
	if (info->gpus_per_node > 0)
		sqlite3_bind_int(st, 9, info->gpus_per_node);
	if (info->note)
		sqlite3_bind_text(st, 10, info->note, -1, SQLITE_TRANSIENT);
	int s = sqlite3_step(st);
	sqlite3_finalize(st);
	if (s != SQLITE_DONE)
		goto sqlfail;
	r->id = sqlite3_last_insert_rowid(db->sql);
	if (sqlite3_prepare_v2(db->sql,
			       "INSERT INTO coll_meas(run_id, op, ranks, nodes, bytes, time_s, algbw_gbps, busbw_gbps, in_place,"
			       " dtype, algorithm, origin) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			       -1, &r->coll, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db->sql,
			       "INSERT INTO gemm_meas(run_id, device, dtype, m, n, k, time_s, tflops) VALUES(?, ?, ?, ?, ?, ?, ?, ?)",
			       -1, &r->gemm, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db->sql,
			       "INSERT INTO membw_meas(run_id, device, kind, bytes, time_s, gbps) VALUES(?, ?, ?, ?, ?, ?)", -1,
			       &r->membw, NULL) != SQLITE_OK)
		goto sqlfail;
	*out = r;
	return 0;
sqlfail:
	rc = hw_sqlerr(db, err, errlen, "starting a calibration run");
	sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
	run_free(r);
	return rc;
}

int64_t
hw_run_id(const hw_run *run)
{
	return run->id;
}

static int
step_insert(hw_run *r, sqlite3_stmt *st, char *err, size_t errlen, const char *what)
{
	int s = sqlite3_step(st);
	sqlite3_reset(st);
	if (s != SQLITE_DONE)
		return hw_sqlerr(r->db, err, errlen, what);
	r->rows++;
	return 0;
}

int
hw_run_add_coll(hw_run *r, const hw_coll_row *row, char *err, size_t errlen)
{
	if (!(row->time_s > 0) || !isfinite(row->time_s) || row->bytes <= 0 || row->ranks <= 0 || row->nodes <= 0 ||
	    !isfinite(row->algbw_gbps) || !isfinite(row->busbw_gbps))
		return pp_err(err, errlen, PP_ERANGE, "collective row of %lld bytes: sizes, ranks and time must be positive",
			      (long long)row->bytes);
	int rc = hw_coll_row_check(&r->sys, row, err, errlen);
	if (rc != 0)
		return rc;
	sqlite3_stmt *st = r->coll;
	sqlite3_bind_int64(st, 1, r->id);
	sqlite3_bind_text(st, 2, hw_coll_name(row->op), -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 3, row->ranks);
	sqlite3_bind_int(st, 4, row->nodes);
	sqlite3_bind_int64(st, 5, row->bytes);
	sqlite3_bind_double(st, 6, row->time_s);
	sqlite3_bind_double(st, 7, row->algbw_gbps);
	sqlite3_bind_double(st, 8, row->busbw_gbps);
	sqlite3_bind_int(st, 9, row->in_place ? 1 : 0);
	if (row->dtype)
		sqlite3_bind_text(st, 10, row->dtype, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 10);
	if (row->algorithm)
		sqlite3_bind_text(st, 11, row->algorithm, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 11);
	if (row->origin)
		sqlite3_bind_text(st, 12, row->origin, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 12);
	return step_insert(r, st, err, errlen, "storing a collective measurement");
}

int
hw_run_add_gemm(hw_run *r, int device, hw_dtype dtype, int64_t m, int64_t n, int64_t k, double time_s, char *err,
		size_t errlen)
{
	if (m <= 0 || n <= 0 || k <= 0 || !(time_s > 0) || !isfinite(time_s))
		return pp_err(err, errlen, PP_ERANGE, "GEMM row %lldx%lldx%lld: sizes and time must be positive", (long long)m,
			      (long long)n, (long long)k);
	sqlite3_stmt *st = r->gemm;
	sqlite3_bind_int64(st, 1, r->id);
	sqlite3_bind_int(st, 2, device);
	sqlite3_bind_text(st, 3, hw_dtype_name(dtype), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, m);
	sqlite3_bind_int64(st, 5, n);
	sqlite3_bind_int64(st, 6, k);
	sqlite3_bind_double(st, 7, time_s);
	sqlite3_bind_double(st, 8, 2.0 * (double)m * (double)n * (double)k / time_s / 1e12);
	return step_insert(r, st, err, errlen, "storing a GEMM measurement");
}

int
hw_run_add_membw(hw_run *r, int device, const char *kind, int64_t bytes, double time_s, char *err, size_t errlen)
{
	if (bytes <= 0 || !(time_s > 0) || !isfinite(time_s))
		return pp_err(err, errlen, PP_ERANGE, "bandwidth row of %lld bytes: size and time must be positive",
			      (long long)bytes);
	sqlite3_stmt *st = r->membw;
	sqlite3_bind_int64(st, 1, r->id);
	sqlite3_bind_int(st, 2, device);
	sqlite3_bind_text(st, 3, kind, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 4, bytes);
	sqlite3_bind_double(st, 5, time_s);
	sqlite3_bind_double(st, 6, (double)bytes / time_s / 1e9);
	return step_insert(r, st, err, errlen, "storing a bandwidth measurement");
}

int
hw_run_commit(hw_run *r, bool complete, char *err, size_t errlen)
{
	hw_db *db = r->db;
	sqlite3_stmt *st;
	int rc = 0;
	if (sqlite3_prepare_v2(db->sql,
			       "UPDATE cal_run SET status = ?, ended = strftime('%Y-%m-%dT%H:%M:%SZ','now') WHERE id = ?", -1,
			       &st, NULL) != SQLITE_OK) {
		rc = hw_sqlerr(db, err, errlen, "finishing a calibration run");
	} else {
		sqlite3_bind_text(st, 1, complete ? "complete" : "incomplete", -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, r->id);
		if (sqlite3_step(st) != SQLITE_DONE)
			rc = hw_sqlerr(db, err, errlen, "finishing a calibration run");
		sqlite3_finalize(st);
	}
	run_free(r);
	if (rc == 0)
		rc = hw_exec(db, "COMMIT", err, errlen, "committing a calibration run");
	if (rc != 0)
		sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

void
hw_run_abort(hw_run *r)
{
	if (r == NULL)
		return;
	hw_db *db = r->db;
	run_free(r);
	sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
}

int
hw_runs(hw_db *db, cJSON **out, char *err, size_t errlen)
{
	*out = NULL;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->sql,
			       "SELECT r.id, r.system, r.kind, coalesce(r.host,''), r.started, coalesce(r.ended,''), r.status,"
			       " coalesce(r.driver,''), coalesce(r.cuda,''), coalesce(r.nccl,''), coalesce(r.nodes,0),"
			       " coalesce(r.gpus_per_node,0), coalesce(r.note,''),"
			       " (SELECT count(*) FROM coll_meas c WHERE c.run_id = r.id),"
			       " (SELECT count(*) FROM gemm_meas g WHERE g.run_id = r.id),"
			       " (SELECT count(*) FROM membw_meas b WHERE b.run_id = r.id)"
			       " FROM cal_run r ORDER BY r.id DESC",
			       -1, &st, NULL) != SQLITE_OK)
		return hw_sqlerr(db, err, errlen, "listing calibration runs");
	cJSON *arr = cJSON_CreateArray();
	int last;
	while ((last = sqlite3_step(st)) == SQLITE_ROW) {
		cJSON *x = cJSON_CreateObject();
		cJSON_AddNumberToObject(x, "id", (double)sqlite3_column_int64(st, 0));
		static const char *const keys[] = {"system", "kind", "host", "started", "ended", "status", "driver", "cuda", "nccl"};
		for (int i = 0; i < 9; i++)
			cJSON_AddStringToObject(x, keys[i], hw_col_text(st, 1 + i));
		cJSON_AddNumberToObject(x, "nodes", sqlite3_column_int(st, 10));
		cJSON_AddNumberToObject(x, "gpus_per_node", sqlite3_column_int(st, 11));
		cJSON_AddStringToObject(x, "note", hw_col_text(st, 12));
		cJSON_AddNumberToObject(x, "collective_rows", sqlite3_column_int(st, 13));
		cJSON_AddNumberToObject(x, "gemm_rows", sqlite3_column_int(st, 14));
		cJSON_AddNumberToObject(x, "bandwidth_rows", sqlite3_column_int(st, 15));
		cJSON_AddItemToArray(arr, x);
	}
	int rc = hw_finish(db, st, last, err, errlen, "listing calibration runs");
	if (rc != 0) {
		cJSON_Delete(arr);
		return rc;
	}
	*out = arr;
	return 0;
}

static bool
run_exists(hw_db *db, int64_t id)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->sql, "SELECT 1 FROM cal_run WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_int64(st, 1, id);
	bool ok = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return ok;
}

/* Pairs the measurements two runs share (same collective, ranks, nodes and size, out-of-place;
 * same GEMM shape and dtype; same bandwidth kind and size) and reports the change of each. */
int
hw_run_diff(hw_db *db, int64_t a, int64_t b, cJSON **out, char *err, size_t errlen)
{
	*out = NULL;
	if (!run_exists(db, a))
		return pp_err(err, errlen, PP_ENOTFOUND, "no calibration run %lld (see 'paraplan hw calibrations')", (long long)a);
	if (!run_exists(db, b))
		return pp_err(err, errlen, PP_ENOTFOUND, "no calibration run %lld (see 'paraplan hw calibrations')", (long long)b);
	static const struct { const char *kind, *sql; } q[] = {
		{"collective",
		 "SELECT x.op || ' ranks=' || x.ranks || ' nodes=' || x.nodes || ' bytes=' || x.bytes, x.busbw_gbps, y.busbw_gbps"
		 " FROM coll_meas x JOIN coll_meas y ON x.op = y.op AND x.ranks = y.ranks AND x.nodes = y.nodes"
		 " AND x.bytes = y.bytes AND x.in_place = y.in_place"
		 " WHERE x.run_id = ?1 AND y.run_id = ?2 AND x.in_place = 0 ORDER BY x.op, x.ranks, x.nodes, x.bytes"},
		{"gemm",
		 "SELECT x.dtype || ' ' || x.m || 'x' || x.n || 'x' || x.k, avg(x.tflops), avg(y.tflops)"
		 " FROM gemm_meas x JOIN gemm_meas y ON x.dtype = y.dtype AND x.m = y.m AND x.n = y.n AND x.k = y.k"
		 " WHERE x.run_id = ?1 AND y.run_id = ?2 GROUP BY x.dtype, x.m, x.n, x.k ORDER BY x.dtype, x.m, x.n, x.k"},
		{"bandwidth",
		 "SELECT x.kind || ' bytes=' || x.bytes, avg(x.gbps), avg(y.gbps)"
		 " FROM membw_meas x JOIN membw_meas y ON x.kind = y.kind AND x.bytes = y.bytes"
		 " WHERE x.run_id = ?1 AND y.run_id = ?2 GROUP BY x.kind, x.bytes ORDER BY x.kind, x.bytes"},
	};
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "run_a", (double)a);
	cJSON_AddNumberToObject(o, "run_b", (double)b);
	cJSON *rows = cJSON_AddArrayToObject(o, "rows");
	for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(db->sql, q[i].sql, -1, &st, NULL) != SQLITE_OK) {
			cJSON_Delete(o);
			return hw_sqlerr(db, err, errlen, "comparing runs");
		}
		sqlite3_bind_int64(st, 1, a);
		sqlite3_bind_int64(st, 2, b);
		while (sqlite3_step(st) == SQLITE_ROW) {
			double va = sqlite3_column_double(st, 1), vb = sqlite3_column_double(st, 2);
			cJSON *x = cJSON_CreateObject();
			cJSON_AddStringToObject(x, "kind", q[i].kind);
			cJSON_AddStringToObject(x, "what", hw_col_text(st, 0));
			cJSON_AddNumberToObject(x, "a", va);
			cJSON_AddNumberToObject(x, "b", vb);
			cJSON_AddNumberToObject(x, "change", va > 0 ? vb / va - 1.0 : 0.0);
			cJSON_AddItemToArray(rows, x);
		}
		sqlite3_finalize(st);
	}
	*out = o;
	return 0;
}

int
hw_validation_add(hw_db *db, const char *system, const char *plan_json, double predicted_s, double measured_s,
		  int steps, const char *note, char *err, size_t errlen)
{
	if (db->readonly)
		return pp_err(err, errlen, PP_EIO, "%s: database is read-only: nothing was written", db->path);
	static const char *const touched[] = {"validation_run", NULL};
	int crc = hw_check_before_write(db, touched, err, errlen);
	if (crc != 0)
		return crc;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->sql,
			       "INSERT INTO validation_run(system, plan_json, predicted_s, measured_s, steps, note)"
			       " VALUES(?, ?, ?, ?, ?, ?)",
			       -1, &st, NULL) != SQLITE_OK)
		return hw_sqlerr(db, err, errlen, "storing a validation run");
	sqlite3_bind_text(st, 1, system, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, plan_json, -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(st, 3, predicted_s);
	sqlite3_bind_double(st, 4, measured_s);
	sqlite3_bind_int(st, 5, steps);
	if (note)
		sqlite3_bind_text(st, 6, note, -1, SQLITE_TRANSIENT);
	int s = sqlite3_step(st);
	sqlite3_finalize(st);
	return s == SQLITE_DONE ? 0 : hw_sqlerr(db, err, errlen, "storing a validation run");
}

/* ---- measurements for fitting -------------------------------------------------------------- */

void
hw_meas_free(hw_meas *m)
{
	if (m == NULL)
		return;
	free(m->coll);
	free(m->coll_run);
	free(m->gemm);
	free(m->membw);
	memset(m, 0, sizeof *m);
}

int
hw_meas_get(hw_db *db, const char *system, int64_t run_id, hw_meas *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	hw_system sys;
	int rc = hw_system_get(db, system, &sys, err, errlen);
	if (rc != 0)
		return rc;
	if (run_id > 0) {
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(db->sql,
				       "SELECT 1 FROM cal_run r LEFT JOIN system s ON s.name = r.system"
				       " WHERE r.id = ?1 AND r.status = 'complete' AND (r.system = ?2 OR s.gpu = ?3 OR r.gpu_name = ?3)",
				       -1, &st, NULL) != SQLITE_OK)
			return hw_sqlerr(db, err, errlen, "reading calibration runs");
		sqlite3_bind_int64(st, 1, run_id);
		sqlite3_bind_text(st, 2, system, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 3, sys.gpu.name, -1, SQLITE_TRANSIENT);
		bool ok = sqlite3_step(st) == SQLITE_ROW;
		sqlite3_finalize(st);
		if (!ok)
			return pp_err(err, errlen, PP_ENOTFOUND,
				      "no complete calibration run %lld of system %s or its GPU %s (see 'paraplan hw calibrations')",
				      (long long)run_id, system, sys.gpu.name);
	}
	static const char q_coll[] =
		"SELECT m.op, m.ranks, m.nodes, m.bytes, m.time_s, m.algbw_gbps, m.busbw_gbps, m.in_place, m.run_id"
		" FROM coll_meas m JOIN cal_run r ON r.id = m.run_id"
		" WHERE r.system = ?1 AND r.status = 'complete' AND (?3 = 0 OR r.id = ?3)"
		" ORDER BY m.op, m.ranks, m.nodes, m.bytes, m.run_id";
	static const char q_gemm[] =
		"SELECT g.dtype, g.m, g.n, g.k, g.time_s, g.run_id FROM gemm_meas g JOIN cal_run r ON r.id = g.run_id"
		" LEFT JOIN system s ON s.name = r.system"
		" WHERE r.status = 'complete' AND (s.gpu = ?2 OR r.gpu_name = ?2) AND (?3 = 0 OR r.id = ?3)"
		" ORDER BY g.dtype, g.m, g.n, g.k, g.run_id";
	static const char q_membw[] =
		"SELECT b.kind, b.bytes, b.time_s, b.run_id FROM membw_meas b JOIN cal_run r ON r.id = b.run_id"
		" LEFT JOIN system s ON s.name = r.system"
		" WHERE r.status = 'complete' AND (s.gpu = ?2 OR r.gpu_name = ?2) AND (?3 = 0 OR r.id = ?3)"
		" ORDER BY b.kind, b.bytes, b.run_id";
	const char *qs[3] = {q_coll, q_gemm, q_membw};
	size_t cap[3] = {0, 0, 0}, rcap = 0;
	for (int q = 0; q < 3; q++) {
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(db->sql, qs[q], -1, &st, NULL) != SQLITE_OK) {
			hw_meas_free(out);
			return hw_sqlerr(db, err, errlen, "reading measurements");
		}
		sqlite3_bind_text(st, 1, system, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, sys.gpu.name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 3, run_id > 0 ? run_id : 0);
		int s;
		while ((s = sqlite3_step(st)) == SQLITE_ROW) {
			int grow;
			if (q == 0) {
				hw_coll op;
				if (hw_coll_parse(hw_col_text(st, 0), &op) != 0)
					continue;
				size_t c2 = rcap;
				grow = PP_GROW(out->coll, cap[0], out->ncoll + 1) | PP_GROW(out->coll_run, c2, out->ncoll + 1);
				rcap = c2;
				if (grow != 0)
					break;
				hw_coll_row *r = &out->coll[out->ncoll];
				memset(r, 0, sizeof *r);
				r->op = op;
				r->ranks = sqlite3_column_int(st, 1);
				r->nodes = sqlite3_column_int(st, 2);
				r->bytes = sqlite3_column_int64(st, 3);
				r->time_s = sqlite3_column_double(st, 4);
				r->algbw_gbps = sqlite3_column_double(st, 5);
				r->busbw_gbps = sqlite3_column_double(st, 6);
				r->in_place = sqlite3_column_int(st, 7) != 0;
				out->coll_run[out->ncoll++] = sqlite3_column_int64(st, 8);
			} else if (q == 1) {
				hw_dtype t;
				if (hw_dtype_parse(hw_col_text(st, 0), &t) != 0)
					continue;
				if ((grow = PP_GROW(out->gemm, cap[1], out->ngemm + 1)) != 0)
					break;
				hw_gemm_row *g = &out->gemm[out->ngemm++];
				g->dtype = t;
				g->m = sqlite3_column_int64(st, 1);
				g->n = sqlite3_column_int64(st, 2);
				g->k = sqlite3_column_int64(st, 3);
				g->time_s = sqlite3_column_double(st, 4);
				g->run_id = sqlite3_column_int64(st, 5);
			} else {
				if ((grow = PP_GROW(out->membw, cap[2], out->nmembw + 1)) != 0)
					break;
				hw_membw_row *b = &out->membw[out->nmembw++];
				pp_strlcpy(b->kind, hw_col_text(st, 0), sizeof b->kind);
				b->bytes = sqlite3_column_int64(st, 1);
				b->time_s = sqlite3_column_double(st, 2);
				b->run_id = sqlite3_column_int64(st, 3);
			}
		}
		sqlite3_finalize(st);
		if (s == SQLITE_ROW) {
			hw_meas_free(out);
			return pp_err(err, errlen, PP_ENOMEM, "out of memory");
		}
		if (s != SQLITE_DONE) {
			hw_meas_free(out);
			return hw_sqlerr(db, err, errlen, "reading measurements");
		}
	}
	return 0;
}

/* ---- validation runs of replayed plans ----------------------------------------------------- */

int
hw_validation_store(hw_db *db, const hw_validation *v, int64_t *id, char *err, size_t errlen)
{
	if (id)
		*id = 0;
	if (db->readonly)
		return pp_err(err, errlen, PP_EIO, "%s: database is read-only: nothing was written", db->path);
	if (v->steps < 1 || v->step_s == NULL)
		return pp_err(err, errlen, PP_ERANGE, "a validation run needs at least one timed step");
	if (!(v->predicted_s > 0) || !isfinite(v->predicted_s) || !(v->measured_s > 0) || !isfinite(v->measured_s))
		return pp_err(err, errlen, PP_ERANGE, "validation run: predicted (%g s) and measured (%g s) step times must be "
			      "positive", v->predicted_s, v->measured_s);
	for (int i = 0; i < v->steps; i++)
		if (!(v->step_s[i] > 0) || !isfinite(v->step_s[i]))
			return pp_err(err, errlen, PP_ERANGE, "validation run: step %d took %g s: step times must be positive", i,
				      v->step_s[i]);
	hw_system sys;
	int rc = hw_system_get(db, v->system, &sys, err, errlen);
	if (rc != 0)
		return rc;
	static const char *const touched[] = {"validation_run", "validation_step", NULL};
	if ((rc = hw_check_before_write(db, touched, err, errlen)) != 0)
		return rc;
	if ((rc = hw_exec(db, "BEGIN IMMEDIATE", err, errlen, "storing a validation run")) != 0)
		return rc;
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db->sql,
			       "INSERT INTO validation_run(system, plan_json, predicted_s, measured_s, steps, note, model, gpus,"
			       " nodes, warmup, host, gpu_name, driver, cuda, nccl, error)"
			       " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			       -1, &st, NULL) != SQLITE_OK)
		goto sqlfail;
	sqlite3_bind_text(st, 1, v->system, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, v->plan_json ? v->plan_json : "{}", -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(st, 3, v->predicted_s);
	sqlite3_bind_double(st, 4, v->measured_s);
	sqlite3_bind_int(st, 5, v->steps);
	const char *texts[] = {v->note, v->model};
	for (int i = 0; i < 2; i++)
		if (texts[i])
			sqlite3_bind_text(st, 6 + i, texts[i], -1, SQLITE_TRANSIENT);
	if (v->gpus > 0)
		sqlite3_bind_int(st, 8, v->gpus);
	if (v->nodes > 0)
		sqlite3_bind_int(st, 9, v->nodes);
	sqlite3_bind_int(st, 10, v->warmup);
	const char *more[] = {v->host, v->gpu_name, v->driver, v->cuda, v->nccl};
	for (int i = 0; i < 5; i++)
		if (more[i])
			sqlite3_bind_text(st, 11 + i, more[i], -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(st, 16, v->predicted_s / v->measured_s - 1.0);
	if (sqlite3_step(st) != SQLITE_DONE)
		goto sqlfail;
	sqlite3_finalize(st);
	st = NULL;
	int64_t rid = sqlite3_last_insert_rowid(db->sql);
	if (sqlite3_prepare_v2(db->sql, "INSERT INTO validation_step(run_id, step, time_s) VALUES(?, ?, ?)", -1, &st,
			       NULL) != SQLITE_OK)
		goto sqlfail;
	for (int i = 0; i < v->steps; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, rid);
		sqlite3_bind_int(st, 2, i);
		sqlite3_bind_double(st, 3, v->step_s[i]);
		if (sqlite3_step(st) != SQLITE_DONE)
			goto sqlfail;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (sqlite3_exec(db->sql, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		goto sqlfail;
	if (id)
		*id = rid;
	return 0;
sqlfail:
	rc = hw_sqlerr(db, err, errlen, "storing a validation run");
	sqlite3_finalize(st);
	sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

int
hw_validations(hw_db *db, cJSON **out, char *err, size_t errlen)
{
	*out = NULL;
	sqlite3_stmt *st, *ss;
	if (sqlite3_prepare_v2(db->sql,
			       "SELECT id, created, system, coalesce(model,''), predicted_s, measured_s, steps,"
			       " coalesce(warmup,0), coalesce(gpus,0), coalesce(nodes,0), coalesce(host,''),"
			       " coalesce(gpu_name,''), coalesce(driver,''), coalesce(cuda,''), coalesce(nccl,''),"
			       " coalesce(note,''), plan_json FROM validation_run ORDER BY id DESC",
			       -1, &st, NULL) != SQLITE_OK)
		return hw_sqlerr(db, err, errlen, "listing validation runs");
	if (sqlite3_prepare_v2(db->sql, "SELECT time_s FROM validation_step WHERE run_id = ? ORDER BY step", -1, &ss,
			       NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return hw_sqlerr(db, err, errlen, "listing validation runs");
	}
	cJSON *arr = cJSON_CreateArray();
	int last;
	while ((last = sqlite3_step(st)) == SQLITE_ROW) {
		cJSON *x = cJSON_CreateObject();
		int64_t id = sqlite3_column_int64(st, 0);
		double pred = sqlite3_column_double(st, 4), meas = sqlite3_column_double(st, 5);
		cJSON_AddNumberToObject(x, "id", (double)id);
		cJSON_AddStringToObject(x, "created", hw_col_text(st, 1));
		cJSON_AddStringToObject(x, "system", hw_col_text(st, 2));
		cJSON_AddStringToObject(x, "model", hw_col_text(st, 3));
		cJSON_AddNumberToObject(x, "predicted_s", pred);
		cJSON_AddNumberToObject(x, "measured_s", meas);
		cJSON_AddNumberToObject(x, "error", meas > 0 ? pred / meas - 1.0 : 0.0);
		cJSON_AddNumberToObject(x, "steps", sqlite3_column_int(st, 6));
		cJSON_AddNumberToObject(x, "warmup", sqlite3_column_int(st, 7));
		cJSON_AddNumberToObject(x, "gpus", sqlite3_column_int(st, 8));
		cJSON_AddNumberToObject(x, "nodes", sqlite3_column_int(st, 9));
		static const char *const keys[] = {"host", "gpu_name", "driver", "cuda", "nccl", "note"};
		for (int i = 0; i < 6; i++)
			cJSON_AddStringToObject(x, keys[i], hw_col_text(st, 10 + i));
		/* the stored plan, read as strictly as any JSON from outside (a database may be) */
		const char *ptext = hw_col_text(st, 16);
		cJSON *plan = NULL;
		if (pp_json_parse(ptext, strlen(ptext), "plan", 0, &plan, NULL, 0) != 0)
			plan = cJSON_CreateObject();
		cJSON_AddItemToObject(x, "plan", plan);
		cJSON *steps = cJSON_AddArrayToObject(x, "step_s");
		sqlite3_reset(ss);
		sqlite3_bind_int64(ss, 1, id);
		while (sqlite3_step(ss) == SQLITE_ROW)
			cJSON_AddItemToArray(steps, cJSON_CreateNumber(sqlite3_column_double(ss, 0)));
		cJSON_AddItemToArray(arr, x);
	}
	sqlite3_finalize(ss);
	int rc = hw_finish(db, st, last, err, errlen, "listing validation runs");
	if (rc != 0) {
		cJSON_Delete(arr);
		return rc;
	}
	*out = arr;
	return 0;
}
