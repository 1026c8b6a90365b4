/*
 * fuzz_db_open.c -- hardware/db.c, opening a hardware database made elsewhere ('--db FILE',
 * PARAPLAN_DB): the schema version and the integrity checks that come before anything is read
 * or written.
 *
 * The input edits a fresh database made once per process: its first 4 bytes are the schema
 * version (PRAGMA user_version, big-endian at offset 60 of the file's header, as SQLite keeps
 * it: negative ones once indexed before the migrations array), the next 4 an offset into the
 * file, and the rest is written over the file from there (damaged pages).  The file is then
 * opened read-only and read-write; what opens must have a known schema version and answer a
 * listing, an export and a small write; what does not must say why, naming the file.
 */
#include "config.h"
#include "tests/fuzz/fuzz.h"

#include "common/pp.h"
#include "hardware/hw.h"

#include <cJSON.h>
#include <sqlite3.h>
#include <string.h>
#include <unistd.h>

static char *tmpl;
static size_t tmpl_len;
static char path[512], journal[600];

static void
make_template(void)
{
	snprintf(path, sizeof path, "%s/paraplan-fuzz-db-%ld.db", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
		 (long)getpid());
	snprintf(journal, sizeof journal, "%s-journal", path);
	unlink(path);
	hw_db *db;
	char err[512];
	FUZZ_CHECK(hw_open(path, 0, &db, err, sizeof err) == 0);
	hw_close(db);
	FUZZ_CHECK(pp_read_file(path, (size_t)1 << 26, &tmpl, &tmpl_len, err, sizeof err) == 0);
	FUZZ_CHECK(tmpl_len > 100);
}

static int
stored_version(void)
{
	sqlite3 *s;
	int v = -1;
	if (sqlite3_open_v2(path, &s, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(s, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
			v = sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
	}
	sqlite3_close(s);
	return v;
}

int
fuzz_db_open(const uint8_t *data, size_t size)
{
	if (tmpl == NULL)
		make_template();
	char *img = malloc(tmpl_len);
	FUZZ_CHECK(img != NULL);
	memcpy(img, tmpl, tmpl_len);
	if (size >= 4)
		memcpy(img + 60, data, 4);
	if (size > 8) {
		size_t off = ((size_t)data[4] << 24 | (size_t)data[5] << 16 | (size_t)data[6] << 8 | data[7]) % tmpl_len;
		size_t n = size - 8 < tmpl_len - off ? size - 8 : tmpl_len - off;
		memcpy(img + off, data + 8, n);
	}
	FILE *f = fopen(path, "wb");
	FUZZ_CHECK(f != NULL);
	FUZZ_CHECK(fwrite(img, 1, tmpl_len, f) == tmpl_len);
	FUZZ_CHECK(fclose(f) == 0);
	free(img);
	unlink(journal);

	for (int ro = 1; ro >= 0; ro--) {
		hw_db *db = NULL;
		char err[1024] = "";
		if (hw_open(path, ro ? HW_OPEN_READONLY : 0, &db, err, sizeof err) != 0) {
			FUZZ_CHECK(db == NULL && strstr(err, path) != NULL);
			continue;
		}
		int v = stored_version();
		FUZZ_CHECK(v >= 0 && v <= HW_SCHEMA_VERSION);
		cJSON *doc = NULL;
		if (hw_list(db, &doc, err, sizeof err) == 0)
			cJSON_Delete(doc);
		else
			FUZZ_CHECK(err[0] != '\0');
		char *sql = NULL;
		if (hw_export(db, &sql, err, sizeof err) != 0)
			FUZZ_CHECK(err[0] != '\0');
		free(sql);
		if (!ro && hw_param_set(db, "gpu", "h100-sxm", "fuzz", 1.0, "user", "fuzz", "fuzz", 0, err, sizeof err) != 0)
			FUZZ_CHECK(err[0] != '\0');
		hw_close(db);
	}
	unlink(path);
	unlink(journal);
	return 0;
}
