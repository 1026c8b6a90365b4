/*
 * csv.h -- reading and writing CSV (RFC 4180: comma-separated, fields optionally in double
 * quotes, a doubled quote inside quotes is a quote, quoted fields may span lines).
 *
 * A table owns one buffer; field pointers point into it and live until pp_csv_free.  The
 * writer quotes exactly the fields that need it, so what it writes the reader reads back
 * field for field.
 */
#ifndef PP_CSV_H
#define PP_CSV_H

#include <stddef.h>

#include "common/pp.h"

typedef struct pp_csv {
	char *buf;     /* the decoded fields, NUL-separated */
	char ***rows;  /* rows[r][f] */
	size_t *nfields;
	size_t nrows;
	size_t *lines; /* line number (1-based) where each row starts */
} pp_csv;

/* Parses text of len bytes.  `origin` names the input in messages ("file.csv:12: ...").
 * Blank lines and a UTF-8 byte order mark at the start are skipped.  Returns 0 or PP_EINPUT (an unterminated quote, binary data). */
int pp_csv_parse(const char *text, size_t len, const char *origin, pp_csv *out, char *err, size_t errlen);
void pp_csv_free(pp_csv *t);
/* Checks row 0 as a header: a name given twice (the first copy would win, unsaid) is
 * PP_EINPUT naming it; empty names are not compared.  0 when every name is unique. */
int pp_csv_header(const pp_csv *t, const char *origin, char *err, size_t errlen);
/* Index of the header field named `name` in row 0, or -1. */
int pp_csv_column(const pp_csv *t, const char *name);
/* Field f of row r, or "" when the row is shorter. */
const char *pp_csv_get(const pp_csv *t, size_t r, int f);

/* Appends one field to s, in double quotes (inner quotes doubled) when it holds a comma, a
 * quote, a CR or an LF, or begins or ends with a blank. */
void pp_csv_field(pp_str *s, const char *field);
/* Appends a row of n fields ending in CRLF, as RFC 4180 writes it. */
void pp_csv_row(pp_str *s, const char *const *fields, size_t n);

#endif
