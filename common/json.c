/*
 * json.c -- strict JSON reading (json.h): byte order mark, NUL bytes, trailing text and
 * duplicate keys, with messages that say where.
 */
#include "config.h"
#include "common/json.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

size_t
pp_skip_bom(const char *text, size_t len)
{
	return len >= 3 && (unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB &&
			       (unsigned char)text[2] == 0xBF
		       ? 3
		       : 0;
}

/* line:col (1-based) of byte `at` of text. */
static void
where(const char *text, size_t at, int first_line, int *line, int *col)
{
	*line = first_line;
	*col = 1;
	for (size_t i = 0; i < at; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

static int
syntax_error(const char *text, size_t len, size_t at, const char *origin, int first_line, const char *what, char *err,
	     size_t errlen)
{
	int line, col;
	size_t rest = at;
	while (rest < len && (text[rest] == ' ' || text[rest] == '\t' || text[rest] == '\n' || text[rest] == '\r'))
		rest++;
	if (rest >= len)
		at = len; /* nothing but blanks left: the document was cut short */
	where(text, at, first_line, &line, &col);
	if (at >= len)
		return pp_err(err, errlen, PP_EINPUT, "%s:%d:%d: %s (unexpected end of file)", origin, line, col, what);
	/* Quote at most 12 bytes of the rest of that line, printable: the text need not end in a
	 * NUL (a plain %.12s read past the end of a buffer, found by fuzzing). */
	char raw[13], shown[64];
	size_t n = 0;
	while (n < 12 && at + n < len && text[at + n] != '\n' && text[at + n] != '\r')
		n++;
	memcpy(raw, text + at, n);
	raw[n] = '\0';
	return pp_err(err, errlen, PP_EINPUT, "%s:%d:%d: %s near '%s'", origin, line, col, what,
		      pp_printable(raw, shown, sizeof shown));
}

static int
cmp_keys(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The first key that an object holds twice, or NULL (also NULL when out of memory: *oom). */
static const char *
duplicate_key(const cJSON *obj, bool *oom)
{
	size_t n = 0;
	for (const cJSON *c = obj->child; c != NULL; c = c->next)
		n++;
	if (n < 2)
		return NULL;
	if (n <= 16) {
		for (const cJSON *a = obj->child; a != NULL; a = a->next)
			for (const cJSON *b = a->next; b != NULL; b = b->next)
				if (a->string && b->string && !strcmp(a->string, b->string))
					return a->string;
		return NULL;
	}
	/* sorted, so that an object of many members costs n log n, not n^2 */
	const char **keys = malloc(n * sizeof *keys);
	if (keys == NULL) {
		*oom = true;
		return NULL;
	}
	size_t k = 0;
	for (const cJSON *c = obj->child; c != NULL; c = c->next)
		keys[k++] = c->string ? c->string : "";
	qsort(keys, n, sizeof *keys, cmp_keys);
	const char *dup = NULL;
	for (size_t i = 1; i < n && dup == NULL; i++)
		if (!strcmp(keys[i - 1], keys[i]))
			dup = keys[i];
	free(keys);
	return dup;
}

/* Walks the tree; on a duplicate key, fills path (a JSON pointer of the object) and returns
 * the key. */
static const char *
find_duplicate(const cJSON *x, pp_str *path, bool *oom)
{
	if (cJSON_IsObject(x)) {
		const char *d = duplicate_key(x, oom);
		if (d != NULL || *oom)
			return d;
	}
	size_t i = 0;
	for (const cJSON *c = x->child; c != NULL; c = c->next, i++) {
		size_t mark = path->len;
		if (cJSON_IsObject(x))
			pp_str_addf(path, "/%s", c->string ? c->string : "");
		else
			pp_str_addf(path, "/%zu", i);
		const char *d = find_duplicate(c, path, oom);
		if (d != NULL || *oom)
			return d;
		path->len = mark;
		if (path->buf != NULL)
			path->buf[mark] = '\0';
	}
	return NULL;
}

int
pp_json_parse(const char *text, size_t len, const char *origin, unsigned flags, cJSON **out, char *err, size_t errlen)
{
	return pp_json_parse_at(text, len, origin, 1, flags, out, err, errlen);
}

int
pp_json_parse_at(const char *text, size_t len, const char *origin, int first_line, unsigned flags, cJSON **out,
		 char *err, size_t errlen)
{
	*out = NULL;
	size_t bom = pp_skip_bom(text, len);
	if (len - bom == 0)
		return pp_err(err, errlen, PP_EINPUT, "%s: empty file, expected a JSON document", origin);
	const char *nul = memchr(text, '\0', len);
	if (nul != NULL) {
		int line, col;
		where(text, (size_t)(nul - text), first_line, &line, &col);
		return pp_err(err, errlen, PP_EINPUT, "%s:%d:%d: binary data (a NUL byte), expected a JSON document", origin,
			      line, col);
	}
	const char *end = NULL;
	cJSON *doc = cJSON_ParseWithLengthOpts(text + bom, len - bom, &end, 0);
	if (doc == NULL) {
		size_t at = end != NULL && end >= text && end <= text + len ? (size_t)(end - text) : len;
		return syntax_error(text, len, at, origin, first_line, "not valid JSON", err, errlen);
	}
	size_t at = end != NULL && end >= text && end <= text + len ? (size_t)(end - text) : len;
	while (at < len && (text[at] == ' ' || text[at] == '\t' || text[at] == '\n' || text[at] == '\r'))
		at++;
	if (at < len) {
		cJSON_Delete(doc);
		return syntax_error(text, len, at, origin, first_line, "text after the JSON document", err, errlen);
	}
	pp_str path = {0};
	bool oom = false;
	const char *dup = find_duplicate(doc, &path, &oom);
	if (dup != NULL || oom || path.oom) {
		char key[64], at_path[160];
		int rc = dup == NULL ? pp_err(err, errlen, PP_ENOMEM, "%s: out of memory", origin)
				     : pp_err(err, errlen, PP_EINPUT, "%s: \"%s\" is given twice in the object at %s", origin,
					      pp_printable(dup, key, sizeof key),
					      path.len ? pp_printable(path.buf, at_path, sizeof at_path) : "the top level");
		pp_str_free(&path);
		cJSON_Delete(doc);
		return rc;
	}
	pp_str_free(&path);
	if ((flags & PP_JSON_PRINTABLE) && pp_json_make_printable(doc) != 0) {
		cJSON_Delete(doc);
		return pp_err(err, errlen, PP_ENOMEM, "%s: out of memory", origin);
	}
	*out = doc;
	return 0;
}

bool
pp_json_is_printable(const cJSON *x)
{
	for (; x != NULL; x = x->next) {
		if ((x->string != NULL && !pp_is_printable(x->string, 0)) ||
		    (cJSON_IsString(x) && x->valuestring != NULL && !pp_is_printable(x->valuestring, 0)) ||
		    !pp_json_is_printable(x->child))
			return false;
	}
	return true;
}

static char *
printable_dup(const char *text)
{
	pp_str s = {0};
	pp_str_add_printable(&s, text);
	char *d = s.oom ? NULL : cJSON_malloc(s.len + 1);
	if (d != NULL)
		memcpy(d, s.buf ? s.buf : "", s.len + 1);
	pp_str_free(&s);
	return d;
}

int
pp_json_make_printable(cJSON *x)
{
	for (; x != NULL; x = x->next) {
		if (x->string != NULL && !pp_is_printable(x->string, 0)) {
			char *k = printable_dup(x->string);
			if (k == NULL)
				return PP_ENOMEM;
			if (!(x->type & cJSON_StringIsConst))
				cJSON_free(x->string);
			x->type &= ~cJSON_StringIsConst;
			x->string = k;
		}
		if (cJSON_IsString(x) && x->valuestring != NULL && !pp_is_printable(x->valuestring, 0)) {
			char *v = printable_dup(x->valuestring);
			if (v == NULL)
				return PP_ENOMEM;
			if (!(x->type & cJSON_IsReference))
				cJSON_free(x->valuestring);
			x->type &= ~cJSON_IsReference;
			x->valuestring = v;
		}
		int rc = pp_json_make_printable(x->child);
		if (rc != 0)
			return rc;
	}
	return 0;
}
