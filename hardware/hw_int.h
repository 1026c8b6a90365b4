/*
 * hw_int.h -- private to hardware/: the database handle and SQL helpers.
 */
#ifndef HW_INT_H
#define HW_INT_H

#include "common/pp.h"
#include "hardware/hw.h"

#include <sqlite3.h>

struct hw_db {
	sqlite3 *sql;
	char *path;
	const char *notice;  /* static text, or NULL */
	bool readonly;
	bool stale_defaults; /* read-only file whose defaults are older than this build's */
};

/* Formats the connection's last error as "<path>: <what>: <message>"; returns a PP_E code. */
int hw_sqlerr(hw_db *db, char *err, size_t errlen, const char *what);
/* Runs SQL without results; on failure formats the error as hw_sqlerr does. */
int hw_exec(hw_db *db, const char *sql, char *err, size_t errlen, const char *what);

/* Column helpers: NULL-safe text, and the GPU row reader shared by queries and the cost model. */
const char *hw_col_text(sqlite3_stmt *st, int col);
int hw_gpu_read(hw_db *db, const char *name, hw_gpu *out, char *err, size_t errlen);

/* A parameter's value as loaded, with where it came from. */
typedef struct hw_pval {
	double v;
	hw_prov prov;
	char origin[12];
	char method[160];
} hw_pval;

/* Reads every parameter row of (scope, subject) in one query and sets p[k] for the registered
 * keys k of that scope: the user's rows before the shipped ones, measured before fitted before
 * user before default (hw_param_get's order); a key without a row takes its fallback key's row,
 * else the registry's default.  have[k] says whether a row set it (keys whose default is derived,
 * NAN, are left to the caller when not).  Rows outside a key's bounds are not used. */
enum { HW_LOAD_NO_FITS = 1 << 0 }; /* flags: ignore rows of origin 'fitted' */
int hw_load_scope(hw_db *db, hw_pscope scope, const char *subject, unsigned flags, hw_pval *p, bool *have, char *err,
		  size_t errlen);

#endif
