/*
 * opt.c -- reading a command line against a command's option table, and printing the table as
 * the command's help (see opt.h).
 *
 * Not getopt_long: it accepts any unambiguous prefix of a long option, so that "--tp" silently
 * meant "--tp-across-nodes" in a command that had no "--tp"; it also permutes argv in place and
 * keeps global state (optind) that every handler had to reset.  The rules here are few: an
 * option is "--name", "--name=value" or "--name value", matched in full; "-h" and "--help"
 * print the help; "--" ends the options; anything else is an operand.
 */
#include "config.h"
#include "cli/cli.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Options of a table with its groups spliced in, in table order. */
#define FLAT_MAX 256

static int
flatten(const cli_opt *t, const cli_opt **out, int n)
{
	for (; t != NULL && (t->name != NULL || t->group != NULL); t++) {
		if (t->group != NULL)
			n = flatten(t->group, out, n);
		else if (n < FLAT_MAX)
			out[n++] = t;
	}
	return n;
}

/* Which options the last cli_parse saw, for cli_given. */
static const cli_opt *last_table;
static unsigned char last_seen[FLAT_MAX];

bool
cli_given(const cli_opt *opts, const char *name)
{
	if (opts != last_table)
		return false;
	const cli_opt *flat[FLAT_MAX];
	int n = flatten(opts, flat, 0);
	for (int i = 0; i < n; i++)
		if (!strcmp(flat[i]->name, name))
			return last_seen[i] != 0;
	return false;
}

/* ---- parse functions ------------------------------------------------------------------------ */

int
cli_opt_str(const cli_opt *o, const char *val, char *err, size_t errlen)
{
	if (val[0] == '\0')
		return pp_err(err, errlen, PP_EUSAGE, "--%s needs a value, got an empty one", o->name);
	*(const char **)o->target = val;
	return 0;
}

int
cli_opt_set(const cli_opt *o, const char *val, char *err, size_t errlen)
{
	(void)val, (void)err, (void)errlen;
	*(bool *)o->target = true;
	return 0;
}

int
cli_opt_clear(const cli_opt *o, const char *val, char *err, size_t errlen)
{
	(void)val, (void)err, (void)errlen;
	*(bool *)o->target = false;
	return 0;
}

static int
read_i64(const cli_opt *o, const char *val, int64_t *v, char *err, size_t errlen)
{
	/* the bounds compared as integers: as doubles, 2^53 + 1 passed a bound of 2^53 (and a bound
	 * of INT64_MAX, which no double holds, printed as 2^63) */
	int64_t lo = o->lo <= -9223372036854775808.0 ? INT64_MIN : (int64_t)o->lo;
	int64_t hi = o->hi >= 9223372036854775807.0 ? INT64_MAX : (int64_t)o->hi;
	if (pp_parse_i64(val, v) != 0 || *v < lo || *v > hi)
		return pp_err(err, errlen, PP_EUSAGE, "--%s must be an integer from %" PRId64 " to %" PRId64 ", got \"%s\"",
			      o->name, lo, hi, val);
	return 0;
}

int
cli_opt_int(const cli_opt *o, const char *val, char *err, size_t errlen)
{
	int64_t v;
	int rc = read_i64(o, val, &v, err, errlen);
	if (rc == 0)
		*(int *)o->target = (int)v;
	return rc;
}

int
cli_opt_i64(const cli_opt *o, const char *val, char *err, size_t errlen)
{
	return read_i64(o, val, (int64_t *)o->target, err, errlen);
}

int
cli_opt_num(const cli_opt *o, const char *val, char *err, size_t errlen)
{
	double v;
	if (pp_parse_count(val, &v) != 0 || !(v >= o->lo) || !(v <= o->hi))
		return pp_err(err, errlen, PP_EUSAGE, "--%s must be a number from %g to %g, got \"%s\"", o->name, o->lo, o->hi,
			      val);
	*(double *)o->target = v;
	return 0;
}

int
cli_opt_ms(const cli_opt *o, const char *val, char *err, size_t errlen)
{
	int rc = cli_opt_num(o, val, err, errlen);
	if (rc == 0)
		*(double *)o->target /= 1e3;
	return rc;
}

/* "a, b or c" from a NULL-terminated list. */
static void
names_of(const char *const *names, char *buf, size_t n)
{
	size_t k = 0;
	while (names[k] != NULL)
		k++;
	buf[0] = '\0';
	for (size_t i = 0; i < k; i++) {
		size_t len = strlen(buf);
		snprintf(buf + len, n - len, "%s%s", i == 0 ? "" : i + 1 == k ? " or " : ", ", names[i]);
	}
}

int
cli_opt_choice(const cli_opt *o, const char *val, char *err, size_t errlen)
{
	const char *const *names = o->extra;
	for (int i = 0; names[i] != NULL; i++)
		if (!strcmp(val, names[i])) {
			*(int *)o->target = i;
			return 0;
		}
	char list[256];
	names_of(names, list, sizeof list);
	return pp_err(err, errlen, PP_EUSAGE, "--%s must be %s, got \"%s\"", o->name, list, val);
}

int
cli_opt_ints(const cli_opt *o, const char *val, char *err, size_t errlen)
{
	cli_ints *l = o->target;
	l->n = 0;
	const char *dots = strstr(val, "..");
	if (dots != NULL) {
		char a[32];
		size_t la = (size_t)(dots - val);
		int64_t lo, hi;
		if (la == 0 || la >= sizeof a)
			goto bad;
		memcpy(a, val, la);
		a[la] = '\0';
		if (pp_parse_i64(a, &lo) != 0 || pp_parse_i64(dots + 2, &hi) != 0 || lo < 1 || hi < lo || (double)lo < o->lo ||
		    (double)hi > o->hi)
			goto bad;
		for (int64_t g = lo; g <= hi; g *= 2)
			l->v[l->n++] = (int)g; /* 64 doublings pass any bound this table allows */
		return 0;
	}
	for (const char *p = val;;) {
		size_t len = strcspn(p, ",");
		char tok[32];
		int64_t x;
		if (len == 0 || len >= sizeof tok || l->n >= CLI_INTS_MAX)
			goto bad;
		memcpy(tok, p, len);
		tok[len] = '\0';
		if (pp_parse_i64(tok, &x) != 0 || (double)x < o->lo || (double)x > o->hi)
			goto bad;
		for (int i = 0; i < l->n; i++)
			if (l->v[i] == x)
				return pp_err(err, errlen, PP_EUSAGE, "--%s lists %lld twice", o->name, (long long)x);
		l->v[l->n++] = (int)x;
		if (p[len] == '\0')
			return 0;
		p += len + 1;
	}
bad:
	l->n = 0;
	return pp_err(err, errlen, PP_EUSAGE, "--%s must be N, A,B,... or A..B (doubling) with values from %.0f to %.0f, got \"%s\"",
		      o->name, o->lo, o->hi, val);
}

int
cli_opt_strs(const cli_opt *o, const char *val, char *err, size_t errlen)
{
	cli_strs *l = o->target;
	if (l->n >= CLI_STRS_MAX)
		return pp_err(err, errlen, PP_EUSAGE, "--%s is given more than %d times", o->name, CLI_STRS_MAX);
	if (val[0] == '\0')
		return pp_err(err, errlen, PP_EUSAGE, "--%s needs a value, got an empty one", o->name);
	l->v[l->n++] = val;
	return 0;
}

int
cli_opt_list(const cli_opt *o, const char *val, char *err, size_t errlen)
{
	cli_strs *l = o->target;
	l->n = 0;
	if (!pp_strlcpy(l->buf, val, sizeof l->buf))
		return pp_err(err, errlen, PP_EUSAGE, "--%s is too long", o->name);
	for (char *p = l->buf;;) {
		size_t len = strcspn(p, ",");
		if (len == 0 || l->n >= CLI_STRS_MAX) {
			l->n = 0;
			return pp_err(err, errlen, PP_EUSAGE, "--%s must be a comma list of at most %d names, got \"%s\"", o->name,
				      CLI_STRS_MAX, val);
		}
		for (int i = 0; i < l->n; i++)
			if (strlen(l->v[i]) == len && !strncmp(l->v[i], p, len)) {
				l->n = 0;
				return pp_err(err, errlen, PP_EUSAGE, "--%s lists \"%.*s\" twice", o->name, (int)len, p);
			}
		l->v[l->n++] = p;
		bool last = p[len] == '\0';
		p[len] = '\0';
		if (last)
			return 0;
		p += len + 1;
	}
}

/* ---- the command line ----------------------------------------------------------------------- */

/* An option that starts with what the user typed: a hint for the error (never a match). */
static const char *
hint(const cli_opt *const *flat, int n, const char *name, size_t len)
{
	const char *found = NULL;
	for (int i = 0; i < n; i++)
		if (!strncmp(flat[i]->name, name, len)) {
			if (found != NULL)
				return NULL;
			found = flat[i]->name;
		}
	return found;
}

int
cli_parse(const cli_cmd *cmd, const cli_opt *opts, int argc, char **argv, char **operands, int max_operands,
	  int *noperands)
{
	const cli_opt *flat[FLAT_MAX];
	int n = flatten(opts, flat, 0);
	unsigned char seen[FLAT_MAX] = {0};
	int nops = 0;
	bool ended = false;
	char err[512];
	last_table = NULL;
	if (noperands != NULL)
		*noperands = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (ended || a[0] != '-' || a[1] == '\0') {
			if (operands == NULL || nops >= max_operands)
				return cli_usage(cmd->name, "unexpected argument \"%s\"", a);
			operands[nops++] = argv[i];
			continue;
		}
		if (!strcmp(a, "--")) {
			ended = true;
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			cli_help(cmd, opts, stdout);
			return 0;
		}
		if (a[1] != '-')
			return cli_usage(cmd->name, "unknown option \"%s\"", a);
		const char *name = a + 2, *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);
		int k = -1;
		for (int j = 0; j < n && k < 0; j++)
			if (strlen(flat[j]->name) == len && !strncmp(flat[j]->name, name, len))
				k = j;
		if (k < 0) {
			const char *h = hint(flat, n, name, len);
			if (h != NULL)
				return cli_usage(cmd->name, "unknown option \"--%.*s\" (options match only in full: did you mean --%s?)",
						 (int)len, name, h);
			return cli_usage(cmd->name, "unknown option \"--%.*s\"", (int)len, name);
		}
		const cli_opt *o = flat[k];
		if (seen[k] && !(o->flags & CLI_REPEAT))
			return cli_usage(cmd->name, "option \"--%s\" is given more than once", o->name);
		seen[k] = 1;
		const char *val = NULL;
		if (o->arg == NULL) {
			if (eq != NULL)
				return cli_usage(cmd->name, "option \"--%s\" takes no value, got \"%s\"", o->name, eq + 1);
		} else if (eq != NULL) {
			val = eq + 1;
		} else if (i + 1 < argc && !(argv[i + 1][0] == '-' && argv[i + 1][1] == '-' && argv[i + 1][2] != '\0')) {
			val = argv[++i];
		} else {
			return cli_usage(cmd->name, "option \"--%s\" needs a value (%s)", o->name, o->arg);
		}
		err[0] = '\0';
		if (o->parse(o, val, err, sizeof err) != 0)
			return cli_usage(cmd->name, "%s", err[0] ? err : "bad value");
	}
	if (noperands != NULL)
		*noperands = nops;
	last_table = opts;
	memcpy(last_seen, seen, sizeof last_seen);
	return CLI_RUN;
}

/* Writes text wrapped at `width` columns, continuation lines indented by `indent`; the first
 * line starts at column `col`. */
static void
wrap(FILE *f, const char *text, int col, int indent, int width)
{
	const char *p = text;
	while (*p) {
		size_t w = strcspn(p, " ");
		if (col > indent && col + 1 + (int)w > width) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', f);
			col++;
		}
		fwrite(p, 1, w, f);
		col += (int)w;
		p += w;
		while (*p == ' ')
			p++;
	}
	fputc('\n', f);
}

void
cli_help(const cli_cmd *cmd, const cli_opt *opts, FILE *f)
{
	const cli_opt *flat[FLAT_MAX];
	int n = flatten(opts, flat, 0);
	const char *p = cmd->synopsis;
	for (bool first = true; p && *p; first = false) {
		size_t len = strcspn(p, "\n");
		fprintf(f, "%s paraplan %.*s\n", first ? "usage:" : "      ", (int)len, p);
		p += len + (p[len] == '\n');
	}
	if (cmd->about != NULL)
		fprintf(f, "\n%s", cmd->about);
	fprintf(f, "\nOptions:\n");
	for (int i = 0; i < n; i++) {
		char head[64];
		snprintf(head, sizeof head, "  --%s%s%s", flat[i]->name, flat[i]->arg ? " " : "", flat[i]->arg ? flat[i]->arg : "");
		int col = (int)strlen(head);
		fputs(head, f);
		if (col >= 26) {
			fprintf(f, "\n%26s", "");
			col = 26;
		} else {
			fprintf(f, "%*s", 26 - col, "");
			col = 26;
		}
		wrap(f, flat[i]->help ? flat[i]->help : "", col, 26, 100);
	}
	fprintf(f, "  --help                  this help\n");
	if (cmd->examples != NULL)
		fprintf(f, "\nExample%s:\n%s", strchr(cmd->examples, '\n') != strrchr(cmd->examples, '\n') ? "s" : "",
			cmd->examples);
}
