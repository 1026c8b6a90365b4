/*
 * json.h -- the one strict way paraplan reads a JSON document, under every JSON input: model
 * files and Hugging Face configs, the documents of 'report' and 'replay', the lines of a JSONL
 * request trace, the plans stored in the hardware database.
 *
 * cJSON alone accepts text after the document ("{...} junk", "{} {}"), keeps both members of
 * an object that names a key twice (and readers then see the first, or the last, depending on
 * how they look), and skips a UTF-8 byte order mark.  Here:
 *   - a UTF-8 byte order mark at the start is skipped, as every text reader does (the CSV
 *     readers and the nccl-tests importer too: pp_skip_bom);
 *   - an empty text, a NUL byte, a syntax error, nesting deeper than 1000 levels, and text
 *     after the document other than blanks are refused with origin:line:col;
 *   - a key given twice in one object is refused, naming the key and the object's place
 *     (a JSON pointer);
 *   - with PP_JSON_PRINTABLE every key and string value is replaced by its printable form
 *     (pp.h), for readers whose strings reach terminals, reports and charts.
 */
#ifndef PP_JSON_H
#define PP_JSON_H

#include <stddef.h>

#include "common/pp.h"

struct cJSON;

enum { PP_JSON_PRINTABLE = 1 };

/* Parses len bytes of text (no NUL needed at the end).  `origin` names it in messages (a path,
 * "path:12" for one line of a file).  Returns 0 and the document in *out (cJSON_Delete it), or
 * PP_EINPUT (PP_ENOMEM) with *out NULL. */
int pp_json_parse(const char *text, size_t len, const char *origin, unsigned flags, struct cJSON **out, char *err,
		  size_t errlen);
/* The same for a text that starts at line first_line of its file (a JSONL line): messages say
 * origin:LINE:COL with LINE counted in the file. */
int pp_json_parse_at(const char *text, size_t len, const char *origin, int first_line, unsigned flags,
		     struct cJSON **out, char *err, size_t errlen);

/* Replaces every key and string value of the tree by its printable form.  Returns 0 or
 * PP_ENOMEM (the tree is then partly converted, still valid). */
int pp_json_make_printable(struct cJSON *doc);
/* Whether every key and string value is printable already. */
bool pp_json_is_printable(const struct cJSON *doc);

/* The length of a UTF-8 byte order mark at the start of text (3 or 0). */
size_t pp_skip_bom(const char *text, size_t len);

#endif
