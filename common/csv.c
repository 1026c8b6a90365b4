/*
 * csv.c -- a small RFC 4180 reader (see csv.h).  Two passes over the text: the first decodes
 * every field into one buffer, the second builds the row and field pointers.
 */
#include "config.h"
#include "common/csv.h"
#include "common/json.h"
#include "common/pp.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void
pp_csv_free(pp_csv *t)
{
	if (t == NULL)
		return;
	for (size_t r = 0; r < t->nrows; r++)
		free(t->rows[r]);
	free(t->rows);
	free(t->nfields);
	free(t->lines);
	free(t->buf);
	memset(t, 0, sizeof *t);
}

int
pp_csv_parse(const char *text, size_t len, const char *origin, pp_csv *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	if (memchr(text, '\0', len) != NULL)
		return pp_err(err, errlen, PP_EINPUT, "%s: binary data, expected CSV text", origin);
	/* Decoded text is never longer than the input: fields end with NUL, rows with a second NUL
	 * marker kept in a separate list of field counts. */
	char *buf = malloc(len + 2);
	size_t *counts = NULL, *lines = NULL, ccap = 0, lcap = 0, nrows = 0;
	if (buf == NULL)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	/* a UTF-8 byte order mark (spreadsheets write one) is skipped, as the JSON reader does */
	size_t o = 0, i = pp_skip_bom(text, len), line = 1;
	while (i < len) {
		/* skip blank lines */
		if (text[i] == '\n' || text[i] == '\r') {
			if (text[i] == '\n')
				line++;
			i++;
			continue;
		}
		size_t nf = 0, row_line = line;
		for (;;) {
			/* one field */
			if (i < len && text[i] == '"') {
				size_t qline = line;
				i++;
				for (;;) {
					if (i >= len) {
						free(buf), free(counts), free(lines);
						return pp_err(err, errlen, PP_EINPUT, "%s:%zu: unterminated quoted field", origin, qline);
					}
					if (text[i] == '"') {
						if (i + 1 < len && text[i + 1] == '"') {
							buf[o++] = '"';
							i += 2;
							continue;
						}
						i++;
						break;
					}
					if (text[i] == '\n')
						line++;
					buf[o++] = text[i++];
				}
				/* anything between the closing quote and the separator is kept verbatim */
				while (i < len && text[i] != ',' && text[i] != '\n' && text[i] != '\r')
					buf[o++] = text[i++];
			} else {
				while (i < len && text[i] != ',' && text[i] != '\n' && text[i] != '\r')
					buf[o++] = text[i++];
			}
			buf[o++] = '\0';
			nf++;
			if (i < len && text[i] == ',') {
				i++;
				continue;
			}
			break;
		}
		if (PP_GROW(counts, ccap, nrows + 1) != 0 || PP_GROW(lines, lcap, nrows + 1) != 0) {
			free(buf), free(counts), free(lines);
			return pp_err(err, errlen, PP_ENOMEM, "out of memory");
		}
		counts[nrows] = nf;
		lines[nrows] = row_line;
		nrows++;
		if (i < len && text[i] == '\r')
			i++;
		if (i < len && text[i] == '\n') {
			i++;
			line++;
		}
	}
	char ***rows = calloc(nrows ? nrows : 1, sizeof *rows);
	if (rows == NULL) {
		free(buf), free(counts), free(lines);
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	}
	char *p = buf;
	for (size_t r = 0; r < nrows; r++) {
		rows[r] = malloc(counts[r] * sizeof **rows);
		if (rows[r] == NULL) {
			out->rows = rows;
			out->nrows = r;
			out->buf = buf;
			out->nfields = counts;
			out->lines = lines;
			pp_csv_free(out);
			return pp_err(err, errlen, PP_ENOMEM, "out of memory");
		}
		for (size_t f = 0; f < counts[r]; f++) {
			rows[r][f] = p;
			p += strlen(p) + 1;
		}
	}
	out->buf = buf;
	out->rows = rows;
	out->nfields = counts;
	out->lines = lines;
	out->nrows = nrows;
	return 0;
}

int
pp_csv_header(const pp_csv *t, const char *origin, char *err, size_t errlen)
{
	if (t->nrows == 0)
		return 0;
	for (size_t f = 0; f < t->nfields[0]; f++)
		for (size_t g = f + 1; g < t->nfields[0] && t->rows[0][f][0] != '\0'; g++)
			if (strcmp(t->rows[0][f], t->rows[0][g]) == 0) {
				char name[64];
				pp_printable(t->rows[0][f], name, sizeof name);
				return pp_err(err, errlen, PP_EINPUT, "%s:%zu: column \"%s\" is given twice (fields %zu and %zu)",
					      origin, t->lines[0], name, f + 1, g + 1);
			}
	return 0;
}

int
pp_csv_column(const pp_csv *t, const char *name)
{
	if (t->nrows == 0)
		return -1;
	for (size_t f = 0; f < t->nfields[0]; f++)
		if (strcmp(t->rows[0][f], name) == 0)
			return (int)f;
	return -1;
}

const char *
pp_csv_get(const pp_csv *t, size_t r, int f)
{
	if (r >= t->nrows || f < 0 || (size_t)f >= t->nfields[r])
		return "";
	return t->rows[r][f];
}

void
pp_csv_field(pp_str *s, const char *field)
{
	size_t n = strlen(field);
	bool quote = strpbrk(field, ",\"\r\n") != NULL || (n > 0 && (field[0] == ' ' || field[n - 1] == ' '));
	if (!quote) {
		pp_str_add(s, field);
		return;
	}
	pp_str_add(s, "\"");
	for (const char *p = field; *p; p++) {
		if (*p == '"')
			pp_str_add(s, "\"");
		pp_str_addn(s, p, 1);
	}
	pp_str_add(s, "\"");
}

void
pp_csv_row(pp_str *s, const char *const *fields, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			pp_str_add(s, ",");
		pp_csv_field(s, fields[i] ? fields[i] : "");
	}
	pp_str_add(s, "\r\n");
}
