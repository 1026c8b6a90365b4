/*
 * query.c -- reading the hardware database: GPUs, systems, prices, parameters, the 'hw list'
 * and 'hw show' documents, and 'hw export' (SQL that recreates the user's rows).
 *
 * Every statement that carries a user-supplied value binds it as a parameter; no SQL text is
 * ever built from user input.
 */
#include "config.h"
#include "hardware/hw_int.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const dtype_names[HW_NDTYPES] = {"fp64", "fp32", "tf32", "fp16", "bf16",
							 "fp8",  "int8", "int4", "fp4"};
static const double dtype_bytes[HW_NDTYPES] = {8, 4, 4, 2, 2, 1, 1, 0.5, 0.5};

const char *
hw_dtype_name(hw_dtype t)
{
	return (unsigned)t < HW_NDTYPES ? dtype_names[t] : "?";
}

double
hw_dtype_bytes(hw_dtype t)
{
	return (unsigned)t < HW_NDTYPES ? dtype_bytes[t] : 0.0;
}

int
hw_dtype_parse(const char *s, hw_dtype *out)
{
	for (int i = 0; i < HW_NDTYPES; i++)
		if (strcmp(s, dtype_names[i]) == 0) {
			*out = (hw_dtype)i;
			return 0;
		}
	return PP_EUSAGE;
}

static const char *const prov_names[HW_NPROV] = {"measured", "fitted", "datasheet"};

const char *
hw_prov_name(hw_prov p)
{
	return (unsigned)p < HW_NPROV ? prov_names[p] : "?";
}

const char *
hw_col_text(sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);
	return t ? (const char *)t : "";
}

/* ---- GPUs and systems ---------------------------------------------------------------------- */

/* A database may come from outside (--db, PARAPLAN_DB) with its CHECK constraints dropped: every
 * figure read is held to what hardware can be, well beyond any GPU or system made (a GPU of 1 PB
 * of memory, 1 PB/s, 1 EFLOP/s; a node of 65,536 GPUs), so that a figure of 1e300 or a negative
 * bandwidth is refused with its name instead of turning into predictions. */
static int
figure_ok(hw_db *db, const char *what, const char *name, const char *field, double v, double lo, double hi, bool lo_open,
	  char *err, size_t errlen)
{
	if ((lo_open ? v > lo : v >= lo) && v <= hi)
		return 0;
	char shown[64];
	return pp_err(err, errlen, PP_EDB, "%s: %s \"%s\": \"%s\" is %.6g, outside %s%g to %g: not a figure hardware has", db->path,
		      what, pp_printable(name, shown, sizeof shown), field, v, lo_open ? "above " : "", lo, hi);
}

static int
gpu_plausible(hw_db *db, const hw_gpu *g, char *err, size_t errlen)
{
	int rc;
	if ((rc = figure_ok(db, "GPU", g->name, "memory_bytes", g->memory_bytes, 0, 1e15, true, err, errlen)) != 0 ||
	    (rc = figure_ok(db, "GPU", g->name, "hbm_gbps", g->hbm_gbps, 0, 1e6, true, err, errlen)) != 0 ||
	    (rc = figure_ok(db, "GPU", g->name, "l2_bytes", g->l2_bytes, 0, 1e12, false, err, errlen)) != 0)
		return rc;
	for (int i = 0; i < HW_NDTYPES; i++)
		if ((rc = figure_ok(db, "GPU", g->name, "peak TFLOP/s", g->peak_tflops[i], 0, 1e6, false, err, errlen)) != 0)
			return rc;
	return 0;
}

int
hw_gpu_read(hw_db *db, const char *name, hw_gpu *out, char *err, size_t errlen)
{
	static const char sql[] =
		"SELECT name, vendor, arch, memory_bytes, hbm_gbps, coalesce(l2_bytes, 0), coalesce(sms, 0),"
		" coalesce(boost_mhz, 0), coalesce(tdp_w, 0), coalesce(fp64_tflops, 0), coalesce(fp32_tflops, 0),"
		" coalesce(tf32_tflops, 0), coalesce(fp16_tflops, 0), coalesce(bf16_tflops, 0), coalesce(fp8_tflops, 0),"
		" coalesce(int8_tops, 0), coalesce(int4_tops, 0) FROM gpu WHERE name = ?";
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL) != SQLITE_OK)
		return hw_sqlerr(db, err, errlen, "reading a GPU");
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	int s = sqlite3_step(st);
	if (s != SQLITE_ROW) {
		sqlite3_finalize(st);
		if (s == SQLITE_DONE)
			return pp_err(err, errlen, PP_ENOTFOUND, "unknown GPU \"%s\" (see 'paraplan hw list')", name);
		return hw_sqlerr(db, err, errlen, "reading a GPU");
	}
	memset(out, 0, sizeof *out);
	pp_strlcpy(out->name, hw_col_text(st, 0), sizeof out->name);
	pp_strlcpy(out->vendor, hw_col_text(st, 1), sizeof out->vendor);
	pp_strlcpy(out->arch, hw_col_text(st, 2), sizeof out->arch);
	out->memory_bytes = sqlite3_column_double(st, 3);
	out->hbm_gbps = sqlite3_column_double(st, 4);
	out->l2_bytes = sqlite3_column_double(st, 5);
	out->sms = sqlite3_column_int(st, 6);
	out->boost_mhz = sqlite3_column_double(st, 7);
	out->tdp_w = sqlite3_column_double(st, 8);
	/* the table's columns fp64 .. int4; the fp4 peak is a GPU parameter (hw.h) */
	for (int i = 0; i <= HW_INT4; i++)
		out->peak_tflops[i] = sqlite3_column_double(st, 9 + i);
	sqlite3_finalize(st);
	return gpu_plausible(db, out, err, errlen);
}

int
hw_gpu_get(hw_db *db, const char *name, hw_gpu *out, char *err, size_t errlen)
{
	return hw_gpu_read(db, name, out, err, errlen);
}

int
hw_system_get(hw_db *db, const char *name, hw_system *out, char *err, size_t errlen)
{
	static const char sql[] =
		"SELECT name, description, gpu, gpus_per_node, scaleup, scaleup_gbps, scaleup_domain, nics_per_node,"
		" nic_gbit, scaleout, scaleup_latency_us, scaleout_latency_us, oversubscription, coalesce(node_power_kw, 0)"
		" FROM system WHERE name = ?";
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL) != SQLITE_OK)
		return hw_sqlerr(db, err, errlen, "reading a system");
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	int s = sqlite3_step(st);
	if (s != SQLITE_ROW) {
		sqlite3_finalize(st);
		if (s == SQLITE_DONE)
			return pp_err(err, errlen, PP_ENOTFOUND, "unknown system \"%s\" (see 'paraplan hw list')", name);
		return hw_sqlerr(db, err, errlen, "reading a system");
	}
	memset(out, 0, sizeof *out);
	pp_strlcpy(out->name, hw_col_text(st, 0), sizeof out->name);
	pp_strlcpy(out->description, hw_col_text(st, 1), sizeof out->description);
	char gpu[48];
	pp_strlcpy(gpu, hw_col_text(st, 2), sizeof gpu);
	out->gpus_per_node = sqlite3_column_int(st, 3);
	pp_strlcpy(out->scaleup, hw_col_text(st, 4), sizeof out->scaleup);
	out->scaleup_gbps = sqlite3_column_double(st, 5);
	out->scaleup_domain = sqlite3_column_int(st, 6);
	out->nics_per_node = sqlite3_column_int(st, 7);
	out->nic_gbit = sqlite3_column_double(st, 8);
	pp_strlcpy(out->scaleout, hw_col_text(st, 9), sizeof out->scaleout);
	out->scaleup_latency_us = sqlite3_column_double(st, 10);
	out->scaleout_latency_us = sqlite3_column_double(st, 11);
	out->oversubscription = sqlite3_column_double(st, 12);
	out->node_power_kw = sqlite3_column_double(st, 13);
	sqlite3_finalize(st);
	int rc;
	const char *n = out->name;
	if ((rc = figure_ok(db, "system", n, "gpus_per_node", out->gpus_per_node, 1, 65536, false, err, errlen)) != 0 ||
	    (rc = figure_ok(db, "system", n, "scaleup_gbps", out->scaleup_gbps, 0, 1e5, false, err, errlen)) != 0 ||
	    (rc = figure_ok(db, "system", n, "scaleup_domain", out->scaleup_domain, 1, 1e6, false, err, errlen)) != 0 ||
	    (rc = figure_ok(db, "system", n, "nics_per_node", out->nics_per_node, 0, 65536, false, err, errlen)) != 0 ||
	    (rc = figure_ok(db, "system", n, "nic_gbit", out->nic_gbit, 0, 1e6, false, err, errlen)) != 0 ||
	    (rc = figure_ok(db, "system", n, "scaleup_latency_us", out->scaleup_latency_us, 0, 1e6, false, err, errlen)) != 0 ||
	    (rc = figure_ok(db, "system", n, "scaleout_latency_us", out->scaleout_latency_us, 0, 1e6, false, err, errlen)) != 0 ||
	    (rc = figure_ok(db, "system", n, "oversubscription", out->oversubscription, 0, 1e3, false, err, errlen)) != 0 ||
	    (rc = figure_ok(db, "system", n, "node_power_kw", out->node_power_kw, 0, 1e4, false, err, errlen)) != 0)
		return rc;
	if ((rc = hw_gpu_read(db, gpu, &out->gpu, err, errlen)) != 0)
		return rc;
	return gpu_plausible(db, &out->gpu, err, errlen);
}

int
hw_system_names(hw_db *db, char ***names, size_t *n, char *err, size_t errlen)
{
	*names = NULL;
	*n = 0;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->sql, "SELECT name FROM system ORDER BY name", -1, &st, NULL) != SQLITE_OK)
		return hw_sqlerr(db, err, errlen, "listing systems");
	/* One block: the pointer array followed by the strings. */
	size_t count = 0, bytes = 0;
	int last;
	while ((last = sqlite3_step(st)) == SQLITE_ROW) {
		count++;
		bytes += strlen(hw_col_text(st, 0)) + 1;
	}
	if (last != SQLITE_DONE)
		return hw_finish(db, st, last, err, errlen, "listing systems");
	sqlite3_reset(st);
	char **arr = malloc((count + 1) * sizeof *arr + bytes);
	if (arr == NULL) {
		sqlite3_finalize(st);
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	}
	char *p = (char *)(arr + count + 1);
	size_t i = 0;
	while (i < count && sqlite3_step(st) == SQLITE_ROW) {
		const char *t = hw_col_text(st, 0);
		size_t l = strlen(t) + 1;
		memcpy(p, t, l);
		arr[i++] = p;
		p += l;
	}
	arr[i] = NULL;
	sqlite3_finalize(st);
	*names = arr;
	*n = i;
	return 0;
}

/* ---- hw list ------------------------------------------------------------------------------- */

int
hw_list(hw_db *db, cJSON **out, char *err, size_t errlen)
{
	*out = NULL;
	cJSON *root = cJSON_CreateObject();
	cJSON *gpus = cJSON_AddArrayToObject(root, "gpus");
	cJSON *systems = cJSON_AddArrayToObject(root, "systems");
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->sql,
			       "SELECT name, vendor, arch, memory_bytes, hbm_gbps, coalesce(bf16_tflops, fp16_tflops, 0),"
			       " coalesce(fp8_tflops, 0), origin FROM gpu ORDER BY vendor, name",
			       -1, &st, NULL) != SQLITE_OK) {
		cJSON_Delete(root);
		return hw_sqlerr(db, err, errlen, "listing GPUs");
	}
	int last, rc;
	while ((last = sqlite3_step(st)) == SQLITE_ROW) {
		cJSON *g = cJSON_CreateObject();
		cJSON_AddStringToObject(g, "name", hw_col_text(st, 0));
		cJSON_AddStringToObject(g, "vendor", hw_col_text(st, 1));
		cJSON_AddStringToObject(g, "arch", hw_col_text(st, 2));
		cJSON_AddNumberToObject(g, "memory_bytes", sqlite3_column_double(st, 3));
		cJSON_AddNumberToObject(g, "hbm_gbps", sqlite3_column_double(st, 4));
		cJSON_AddNumberToObject(g, "bf16_tflops", sqlite3_column_double(st, 5));
		cJSON_AddNumberToObject(g, "fp8_tflops", sqlite3_column_double(st, 6));
		cJSON_AddStringToObject(g, "origin", hw_col_text(st, 7));
		cJSON_AddItemToArray(gpus, g);
	}
	if ((rc = hw_finish(db, st, last, err, errlen, "listing GPUs")) != 0) {
		cJSON_Delete(root);
		return rc;
	}
	if (sqlite3_prepare_v2(db->sql,
			       "SELECT name, gpu, gpus_per_node, scaleup, scaleup_gbps, scaleup_domain, nics_per_node, nic_gbit,"
			       " scaleout, description, origin FROM system ORDER BY name",
			       -1, &st, NULL) != SQLITE_OK) {
		cJSON_Delete(root);
		return hw_sqlerr(db, err, errlen, "listing systems");
	}
	while ((last = sqlite3_step(st)) == SQLITE_ROW) {
		cJSON *s = cJSON_CreateObject();
		cJSON_AddStringToObject(s, "name", hw_col_text(st, 0));
		cJSON_AddStringToObject(s, "gpu", hw_col_text(st, 1));
		cJSON_AddNumberToObject(s, "gpus_per_node", sqlite3_column_int(st, 2));
		cJSON_AddStringToObject(s, "scaleup", hw_col_text(st, 3));
		cJSON_AddNumberToObject(s, "scaleup_gbps", sqlite3_column_double(st, 4));
		cJSON_AddNumberToObject(s, "scaleup_domain", sqlite3_column_int(st, 5));
		cJSON_AddNumberToObject(s, "nics_per_node", sqlite3_column_int(st, 6));
		cJSON_AddNumberToObject(s, "nic_gbit", sqlite3_column_double(st, 7));
		cJSON_AddStringToObject(s, "scaleout", hw_col_text(st, 8));
		cJSON_AddStringToObject(s, "description", hw_col_text(st, 9));
		cJSON_AddStringToObject(s, "origin", hw_col_text(st, 10));
		cJSON_AddItemToArray(systems, s);
	}
	if ((rc = hw_finish(db, st, last, err, errlen, "listing systems")) != 0) {
		cJSON_Delete(root);
		return rc;
	}
	*out = root;
	return 0;
}

/* ---- hw show ------------------------------------------------------------------------------- */

/* Figures of a row with their units; the source is the row's unless figure_source names one. */
typedef struct figure { const char *col, *unit; } figure;

static const figure gpu_figures[] = {
	{"vendor", ""}, {"arch", ""}, {"memory_bytes", "B"}, {"hbm_gbps", "GB/s"}, {"l2_bytes", "B"},
	{"sms", ""}, {"boost_mhz", "MHz"}, {"tdp_w", "W"}, {"fp64_tflops", "TFLOP/s"}, {"fp32_tflops", "TFLOP/s"},
	{"tf32_tflops", "TFLOP/s"}, {"fp16_tflops", "TFLOP/s"}, {"bf16_tflops", "TFLOP/s"}, {"fp8_tflops", "TFLOP/s"},
	{"int8_tops", "TOP/s"}, {"int4_tops", "TOP/s"}, {"tensor_units", ""}, {"fp16_flops_per_clock_unit", "FLOP/clk"},
};
static const figure system_figures[] = {
	{"description", ""}, {"gpu", ""}, {"gpus_per_node", ""}, {"scaleup", ""}, {"scaleup_gbps", "GB/s"},
	{"scaleup_domain", "GPUs"}, {"nics_per_node", ""}, {"nic_gbit", "Gb/s"}, {"scaleout", ""},
	{"scaleup_latency_us", "us"}, {"scaleout_latency_us", "us"}, {"oversubscription", "x"}, {"node_power_kw", "kW"},
};

static int
add_figures(hw_db *db, const char *tbl, const char *name, const figure *figs, size_t nfigs, cJSON *arr, char *err,
	    size_t errlen)
{
	pp_str sql = {0};
	pp_str_add(&sql, "SELECT origin, source");
	for (size_t i = 0; i < nfigs; i++)
		pp_str_addf(&sql, ", %s", figs[i].col);
	pp_str_addf(&sql, " FROM %s WHERE name = ?", tbl); /* tbl and columns are constants above */
	sqlite3_stmt *st, *fs;
	int rc = sqlite3_prepare_v2(db->sql, sql.buf, -1, &st, NULL);
	pp_str_free(&sql);
	if (rc != SQLITE_OK)
		return hw_sqlerr(db, err, errlen, "reading figures");
	if (sqlite3_prepare_v2(db->sql, "SELECT source, confidence FROM figure_source WHERE tbl = ? AND name = ? AND field = ?",
			       -1, &fs, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return hw_sqlerr(db, err, errlen, "reading figure sources");
	}
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW) {
		const char *origin = hw_col_text(st, 0);
		const char *kind = !strcmp(origin, "measured") ? "measured" : "datasheet";
		for (size_t i = 0; i < nfigs; i++) {
			int col = 2 + (int)i;
			if (sqlite3_column_type(st, col) == SQLITE_NULL)
				continue;
			cJSON *f = cJSON_CreateObject();
			cJSON_AddStringToObject(f, "field", figs[i].col);
			if (sqlite3_column_type(st, col) == SQLITE_TEXT)
				cJSON_AddStringToObject(f, "value", hw_col_text(st, col));
			else
				cJSON_AddNumberToObject(f, "value", sqlite3_column_double(st, col));
			cJSON_AddStringToObject(f, "unit", figs[i].unit);
			cJSON_AddStringToObject(f, "origin", kind);
			sqlite3_reset(fs);
			sqlite3_bind_text(fs, 1, tbl, -1, SQLITE_STATIC);
			sqlite3_bind_text(fs, 2, name, -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(fs, 3, figs[i].col, -1, SQLITE_STATIC);
			if (sqlite3_step(fs) == SQLITE_ROW) {
				cJSON_AddStringToObject(f, "source", hw_col_text(fs, 0));
				cJSON_AddStringToObject(f, "confidence", hw_col_text(fs, 1));
			} else {
				cJSON_AddStringToObject(f, "source", hw_col_text(st, 1));
				cJSON_AddStringToObject(f, "confidence", "high");
			}
			cJSON_AddItemToArray(arr, f);
		}
	}
	sqlite3_finalize(fs);
	sqlite3_finalize(st);
	return 0;
}

static void
add_prices(hw_db *db, const char *system, cJSON *o)
{
	hw_price *p;
	size_t n;
	if (hw_prices(db, system, &p, &n, NULL, 0) != 0)
		return;
	cJSON *arr = cJSON_AddArrayToObject(o, "prices");
	for (size_t i = 0; i < n; i++) {
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "provider", p[i].provider);
		cJSON_AddStringToObject(x, "kind", p[i].kind);
		cJSON_AddNumberToObject(x, "usd", p[i].usd);
		cJSON_AddStringToObject(x, "unit", p[i].unit);
		if (p[i].usd_per_gpu_hour > 0)
			cJSON_AddNumberToObject(x, "usd_per_gpu_hour", p[i].usd_per_gpu_hour);
		if (p[i].usd_per_gpu > 0)
			cJSON_AddNumberToObject(x, "usd_per_gpu", p[i].usd_per_gpu);
		cJSON_AddStringToObject(x, "date", p[i].date);
		cJSON_AddStringToObject(x, "source", p[i].source);
		cJSON_AddItemToArray(arr, x);
	}
	free(p);
}

static void
add_params(hw_db *db, const char *scope, const char *subject, cJSON *arr)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->sql,
			       "SELECT key, value, origin, method, source FROM param WHERE scope = ? AND subject = ?"
			       " ORDER BY key, CASE origin WHEN 'measured' THEN 0 WHEN 'fitted' THEN 1 WHEN 'user' THEN 2 ELSE 3 END, shipped",
			       -1, &st, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_text(st, 1, scope, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, subject, -1, SQLITE_TRANSIENT);
	char last[64] = "";
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *key = hw_col_text(st, 0);
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "scope", scope);
		cJSON_AddStringToObject(x, "key", key);
		cJSON_AddNumberToObject(x, "value", sqlite3_column_double(st, 1));
		cJSON_AddStringToObject(x, "origin", hw_col_text(st, 2));
		cJSON_AddBoolToObject(x, "in_use", strcmp(last, key) != 0);
		cJSON_AddStringToObject(x, "method", hw_col_text(st, 3));
		cJSON_AddStringToObject(x, "source", hw_col_text(st, 4));
		cJSON_AddItemToArray(arr, x);
		pp_strlcpy(last, key, sizeof last);
	}
	sqlite3_finalize(st);
}

int
hw_show(hw_db *db, const char *name, cJSON **out, char *err, size_t errlen)
{
	*out = NULL;
	hw_system sys;
	hw_gpu gpu;
	cJSON *o = cJSON_CreateObject();
	int rc;
	if (hw_system_get(db, name, &sys, NULL, 0) == 0) {
		cJSON_AddStringToObject(o, "kind", "system");
		cJSON_AddStringToObject(o, "name", sys.name);
		cJSON *figs = cJSON_AddArrayToObject(o, "figures");
		if ((rc = add_figures(db, "system", name, system_figures, sizeof system_figures / sizeof *system_figures, figs,
				      err, errlen)) != 0)
			goto fail;
		cJSON *g = cJSON_AddObjectToObject(o, "gpu");
		cJSON_AddStringToObject(g, "name", sys.gpu.name);
		cJSON *gf = cJSON_AddArrayToObject(g, "figures");
		if ((rc = add_figures(db, "gpu", sys.gpu.name, gpu_figures, sizeof gpu_figures / sizeof *gpu_figures, gf, err,
				      errlen)) != 0)
			goto fail;
		add_prices(db, name, o);
		cJSON *params = cJSON_AddArrayToObject(o, "parameters");
		add_params(db, "system", name, params);
		add_params(db, "gpu", sys.gpu.name, params);
		hw_cost *c;
		if (hw_cost_new(db, name, &c, NULL, 0) == 0) {
			cJSON_AddItemToObject(o, "cost_model", hw_cost_describe(c));
			hw_cost_free(c);
		}
	} else if (hw_gpu_get(db, name, &gpu, NULL, 0) == 0) {
		cJSON_AddStringToObject(o, "kind", "gpu");
		cJSON_AddStringToObject(o, "name", gpu.name);
		cJSON *figs = cJSON_AddArrayToObject(o, "figures");
		if ((rc = add_figures(db, "gpu", name, gpu_figures, sizeof gpu_figures / sizeof *gpu_figures, figs, err,
				      errlen)) != 0)
			goto fail;
		cJSON *params = cJSON_AddArrayToObject(o, "parameters");
		add_params(db, "gpu", name, params);
		/* Systems built on it. */
		sqlite3_stmt *st;
		cJSON *arr = cJSON_AddArrayToObject(o, "systems");
		if (sqlite3_prepare_v2(db->sql, "SELECT name FROM system WHERE gpu = ? ORDER BY name", -1, &st, NULL) ==
		    SQLITE_OK) {
			sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
			while (sqlite3_step(st) == SQLITE_ROW)
				cJSON_AddItemToArray(arr, cJSON_CreateString(hw_col_text(st, 0)));
			sqlite3_finalize(st);
		}
	} else {
		rc = pp_err(err, errlen, PP_ENOTFOUND, "unknown GPU or system \"%s\" (see 'paraplan hw list')", name);
		goto fail;
	}
	*out = o;
	return 0;
fail:
	cJSON_Delete(o);
	return rc;
}

/* ---- hw export ----------------------------------------------------------------------------- */

/* Appends INSERT statements for the rows of tbl matching `where` (a constant), quoting every
 * value with SQLite's own quote(). */
static int
dump_table(hw_db *db, const char *tbl, const char *where, pp_str *out, char *err, size_t errlen)
{
	char sql[256];
	snprintf(sql, sizeof sql, "PRAGMA table_info(%s)", tbl);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL) != SQLITE_OK)
		return hw_sqlerr(db, err, errlen, "exporting");
	pp_str cols = {0}, sel = {0};
	int last;
	while ((last = sqlite3_step(st)) == SQLITE_ROW) {
		const char *c = hw_col_text(st, 1);
		pp_str_addf(&cols, "%s%s", cols.len ? ", " : "", c);
		pp_str_addf(&sel, "%squote(%s)", sel.len ? " || ', ' || " : "", c);
	}
	int rc = hw_finish(db, st, last, err, errlen, "exporting");
	if (rc != 0) {
		pp_str_free(&cols);
		pp_str_free(&sel);
		return rc;
	}
	pp_str q = {0};
	pp_str_addf(&q, "SELECT %s FROM %s WHERE %s ORDER BY rowid", sel.buf, tbl, where);
	if (sqlite3_prepare_v2(db->sql, q.buf, -1, &st, NULL) != SQLITE_OK) {
		rc = hw_sqlerr(db, err, errlen, "exporting");
	} else {
		while ((last = sqlite3_step(st)) == SQLITE_ROW)
			pp_str_addf(out, "INSERT INTO %s(%s) VALUES(%s);\n", tbl, cols.buf, hw_col_text(st, 0));
		rc = hw_finish(db, st, last, err, errlen, "exporting");
	}
	pp_str_free(&q);
	pp_str_free(&cols);
	pp_str_free(&sel);
	return rc;
}

int
hw_export(hw_db *db, char **sql, char *err, size_t errlen)
{
	static const struct { const char *tbl, *where; } parts[] = {
		{"gpu", "origin <> 'default'"},
		{"system", "origin <> 'default'"},
		{"figure_source", "origin <> 'default'"},
		{"price", "origin <> 'default'"},
		{"cal_run", "1"},
		{"gemm_meas", "1"},
		{"membw_meas", "1"},
		{"coll_meas", "1"},
		{"param", "shipped = 0"},
		{"validation_run", "1"},
		{"validation_step", "1"},
	};
	pp_str out = {0};
	pp_str_addf(&out, "-- paraplan hardware database export: user data of %s (schema %d)\n", db->path,
		    HW_SCHEMA_VERSION);
	pp_str_add(&out, "BEGIN;\n");
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
		int rc = dump_table(db, parts[i].tbl, parts[i].where, &out, err, errlen);
		if (rc != 0) {
			pp_str_free(&out);
			return rc;
		}
	}
	pp_str_add(&out, "COMMIT;\n");
	if (out.oom) {
		pp_str_free(&out);
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	}
	*sql = pp_str_detach(&out);
	return 0;
}

/* ---- prices -------------------------------------------------------------------------------- */

int
hw_prices(hw_db *db, const char *system, hw_price **out, size_t *n, char *err, size_t errlen)
{
	*out = NULL;
	*n = 0;
	hw_system sys;
	int rc = hw_system_get(db, system, &sys, err, errlen);
	if (rc != 0)
		return rc;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->sql,
			       "SELECT provider, kind, usd, unit, date, source, subject_kind FROM price"
			       " WHERE (subject_kind = 'system' AND subject = ?1) OR (subject_kind = 'gpu' AND subject = ?2)"
			       " ORDER BY date DESC, subject_kind DESC, provider, kind",
			       -1, &st, NULL) != SQLITE_OK)
		return hw_sqlerr(db, err, errlen, "reading prices");
	sqlite3_bind_text(st, 1, system, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, sys.gpu.name, -1, SQLITE_TRANSIENT);
	hw_price *arr = NULL;
	size_t cap = 0, cnt = 0;
	int last;
	while ((last = sqlite3_step(st)) == SQLITE_ROW) {
		if (PP_GROW(arr, cap, cnt + 1) != 0) {
			free(arr);
			sqlite3_finalize(st);
			return pp_err(err, errlen, PP_ENOMEM, "out of memory");
		}
		hw_price *p = &arr[cnt++];
		memset(p, 0, sizeof *p);
		pp_strlcpy(p->provider, hw_col_text(st, 0), sizeof p->provider);
		pp_strlcpy(p->kind, hw_col_text(st, 1), sizeof p->kind);
		p->usd = sqlite3_column_double(st, 2);
		pp_strlcpy(p->unit, hw_col_text(st, 3), sizeof p->unit);
		pp_strlcpy(p->date, hw_col_text(st, 4), sizeof p->date);
		pp_strlcpy(p->source, hw_col_text(st, 5), sizeof p->source);
		pp_strlcpy(p->subject_kind, hw_col_text(st, 6), sizeof p->subject_kind);
		double per_node = sys.gpus_per_node > 0 ? (double)sys.gpus_per_node : 1.0;
		if (!strcmp(p->unit, "gpu-hour"))
			p->usd_per_gpu_hour = p->usd;
		else if (!strcmp(p->unit, "node-hour"))
			p->usd_per_gpu_hour = p->usd / per_node;
		else if (!strcmp(p->unit, "gpu"))
			p->usd_per_gpu = p->usd;
		else if (!strcmp(p->unit, "node"))
			p->usd_per_gpu = p->usd / per_node;
	}
	if ((rc = hw_finish(db, st, last, err, errlen, "reading prices")) != 0) {
		free(arr);
		return rc;
	}
	*out = arr;
	*n = cnt;
	return 0;
}

static int
cmp_price(const void *a, const void *b)
{
	double x = ((const hw_price *)a)->usd_per_gpu_hour, y = ((const hw_price *)b)->usd_per_gpu_hour;
	if (x != y)
		return x < y ? -1 : 1;
	return strcmp(((const hw_price *)a)->provider, ((const hw_price *)b)->provider);
}

int
hw_default_price(hw_db *db, const char *system, hw_price *out, char *err, size_t errlen)
{
	hw_price *p;
	size_t n;
	int rc = hw_prices(db, system, &p, &n, err, errlen);
	if (rc != 0)
		return rc;
	/* The system's own newest on-demand price when it has one (a cloud instance type);
	 * otherwise the median of the on-demand prices of its GPU, since a DGX-class system is
	 * rented from many providers at very different prices. */
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(p[i].kind, "on-demand") != 0 || p[i].usd_per_gpu_hour <= 0)
			continue;
		if (!strcmp(p[i].subject_kind, "system")) {
			*out = p[i];
			free(p);
			return 0;
		}
		p[k++] = p[i];
	}
	if (k == 0) {
		free(p);
		return pp_err(err, errlen, PP_ENOTFOUND,
			      "no on-demand price for system \"%s\" in the database: pass --price USD_PER_GPU_HOUR", system);
	}
	const char *first = p[0].date, *last = p[0].date;
	for (size_t i = 1; i < k; i++) {
		if (strcmp(p[i].date, first) < 0)
			first = p[i].date;
		if (strcmp(p[i].date, last) > 0)
			last = p[i].date;
	}
	char span[sizeof out->date];
	snprintf(span, sizeof span, "%.7s/%.7s", first, last); /* the offers' months, ISO 8601 interval */
	qsort(p, k, sizeof *p, cmp_price);
	*out = p[k / 2];
	if (k > 1) {
		snprintf(out->provider, sizeof out->provider, "median of %zu offers", k);
		pp_strlcpy(out->date, span, sizeof out->date);
	}
	free(p);
	return 0;
}

/* ---- parameters ---------------------------------------------------------------------------- */

int
hw_param_get(hw_db *db, const char *scope, const char *subject, const char *key, hw_param *out)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->sql,
			       "SELECT value, origin, method, source FROM param WHERE scope = ? AND subject = ? AND key = ?"
			       " ORDER BY shipped, CASE origin WHEN 'measured' THEN 0 WHEN 'fitted' THEN 1 WHEN 'user' THEN 2 ELSE 3 END"
			       " LIMIT 1",
			       -1, &st, NULL) != SQLITE_OK)
		return PP_EDB;
	sqlite3_bind_text(st, 1, scope, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, subject, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, key, -1, SQLITE_TRANSIENT);
	int rc = PP_ENOTFOUND;
	if (sqlite3_step(st) == SQLITE_ROW) {
		out->value = sqlite3_column_double(st, 0);
		pp_strlcpy(out->origin, hw_col_text(st, 1), sizeof out->origin);
		pp_strlcpy(out->method, hw_col_text(st, 2), sizeof out->method);
		pp_strlcpy(out->source, hw_col_text(st, 3), sizeof out->source);
		rc = 0;
	}
	sqlite3_finalize(st);
	return rc;
}

int
hw_param_set(hw_db *db, const char *scope, const char *subject, const char *key, double value, const char *origin,
	     const char *method, const char *source, int64_t run_id, char *err, size_t errlen)
{
	if (db->readonly)
		return pp_err(err, errlen, PP_EIO, "%s: database is read-only", db->path);
	int rc = hw_pdef_check(scope, key, value, err, errlen);
	if (rc != 0)
		return rc;
	static const char *const touched[] = {"param", NULL};
	if ((rc = hw_check_before_write(db, touched, err, errlen)) != 0)
		return rc;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->sql,
			       "INSERT OR REPLACE INTO param(scope, subject, key, value, origin, method, source, run_id)"
			       " VALUES(?, ?, ?, ?, ?, ?, ?, ?)",
			       -1, &st, NULL) != SQLITE_OK)
		return hw_sqlerr(db, err, errlen, "storing a parameter");
	sqlite3_bind_text(st, 1, scope, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, subject, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, key, -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(st, 4, value);
	sqlite3_bind_text(st, 5, origin, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 6, method ? method : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 7, source ? source : "", -1, SQLITE_TRANSIENT);
	if (run_id > 0)
		sqlite3_bind_int64(st, 8, run_id);
	else
		sqlite3_bind_null(st, 8);
	int s = sqlite3_step(st);
	sqlite3_finalize(st);
	if (s != SQLITE_DONE)
		return hw_sqlerr(db, err, errlen, "storing a parameter");
	return 0;
}

