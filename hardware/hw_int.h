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
	bool checked;        /* the whole file passed quick_check when it was opened */
};

/* The in-memory database of the compiled-in defaults as SQLite serializes it, made at build time
 * by hardware/mkimage (db_image.c); hw_db_image_len 0: none (mkimage's own image_none.c, or a
 * SQLite without deserialize), and open_memory runs the SQL. */
extern const size_t hw_db_image_len;
extern const unsigned char hw_db_image[];

/* Formats the connection's last error as "<path>: <what>: <message>"; returns a PP_E code. */
int hw_sqlerr(hw_db *db, char *err, size_t errlen, const char *what);
/* "PATH: the hardware database file is damaged (WHY) ...": PP_EDB. */
int hw_damaged(hw_db *db, char *err, size_t errlen, const char *why);
/* PRAGMA quick_check of the whole file (table NULL) or of one table and its indexes: 0, or
 * hw_damaged's message.  A file of at most HW_CHECK_WHOLE_BYTES is checked whole when opened
 * (db->checked); hw_check_before_write checks a larger one's tables before a write. */
#define HW_CHECK_WHOLE_BYTES ((long long)64 << 20)
int hw_check_pages(hw_db *db, const char *table, char *err, size_t errlen);
/* Before a write transaction: nothing when the whole file was checked on open, else a
 * quick_check of each table the write touches (a NULL-terminated list). */
int hw_check_before_write(hw_db *db, const char *const *tables, char *err, size_t errlen);
/* Finalizes a statement whose rows were read with `while ((last = sqlite3_step(st)) ==
 * SQLITE_ROW)`: 0 when the rows ended (last is SQLITE_DONE), else hw_sqlerr's message for what
 * stopped them (a damaged page read half-way must not look like the end of a table). */
int hw_finish(hw_db *db, sqlite3_stmt *st, int last, char *err, size_t errlen, const char *what);
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
