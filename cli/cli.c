/*
 * cli.c -- helpers shared by the command files: errors and exit status, the database, JSON
 * and table output, human number formatting.
 */
#include "config.h"
#include "cli/cli.h"

#include <cJSON.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void
cli_error(const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fputs("error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int
cli_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fputs("error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(see 'paraplan %s --help')\n", cmd);
	return 2;
}

int
cli_dispatch(const char *cmd, const char *usage, const cli_sub *subs, int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	char names[256] = "";
	size_t n = 0;
	for (const cli_sub *s = subs; s->name != NULL; s++, n++)
		if (!strcmp(argv[1], s->name))
			return s->run(argc - 1, argv + 1);
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(names);
		snprintf(names + len, sizeof names - len, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ", subs[i].name);
	}
	return cli_usage(cmd, "unknown workload \"%s\" (expected %s)", argv[1], names);
}

static char again_name[64];

int
cli_getopt(int argc, char **argv, const struct option *opts, unsigned char *seen)
{
	int c = getopt_long(argc, argv, ":h", opts, NULL);
	if (c < 0 || c == '?' || c == ':' || c >= CLI_OPT_MAX)
		return c;
	if (!seen[c]) {
		seen[c] = 1;
		return c;
	}
	snprintf(again_name, sizeof again_name, "-%c", c);
	for (const struct option *o = opts; o->name != NULL; o++)
		if (o->val == c && o->flag == NULL) {
			snprintf(again_name, sizeof again_name, "--%s", o->name);
			break;
		}
	return CLI_OPT_AGAIN;
}

int
cli_bad_option(const char *cmd, int c, char **argv)
{
	if (c == CLI_OPT_AGAIN)
		return cli_usage(cmd, "option \"%s\" is given more than once", again_name);
	const char *arg = argv[optind - 1];
	if (c == ':')
		return cli_usage(cmd, "option \"%s\" needs a value", arg);
	return cli_usage(cmd, "unknown option \"%s\"", arg);
}

int
cli_status(int rc)
{
	if (rc == 0)
		return 0;
	return rc == PP_EUSAGE ? 2 : 1;
}

int
cli_fail(int rc, const char *msg)
{
	cli_error("%s", msg && msg[0] ? msg : "failed");
	return cli_status(rc);
}

int
cli_open_db(const char *path, unsigned flags, hw_db **out)
{
	char err[512];
	int rc = hw_open(path, flags, out, err, sizeof err);
	if (rc != 0)
		return cli_fail(rc, err);
	if (hw_notice(*out) != NULL)
		fprintf(stderr, "notice: %s\n", hw_notice(*out));
	return 0;
}

const char *
cli_str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : "";
}

double
cli_num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(v) ? v->valuedouble : 0.0;
}

void
cli_print_json(const cJSON *doc)
{
	char *s = cJSON_Print(doc);
	if (s == NULL) {
		cli_error("out of memory while printing JSON");
		return;
	}
	fputs(s, stdout);
	fputc('\n', stdout);
	free(s);
}

int
cli_int(const char *cmd, const char *flag, const char *val, long long min, long long max, long long *out)
{
	int64_t v;
	int rc = pp_parse_i64(val, &v);
	if (rc != 0 || v < min || v > max)
		return cli_usage(cmd, "%s must be an integer from %lld to %lld, got \"%s\"", flag, min, max, val ? val : "");
	*out = v;
	return 0;
}

int
cli_double(const char *cmd, const char *flag, const char *val, double min, double max, double *out)
{
	double v;
	int rc = pp_parse_count(val, &v);
	if (rc != 0 || !(v >= min) || !(v <= max))
		return cli_usage(cmd, "%s must be a number from %g to %g, got \"%s\"", flag, min, max, val ? val : "");
	*out = v;
	return 0;
}

/* ---- tables -------------------------------------------------------------------------------- */

struct cli_table {
	int ncols;
	char **cells; /* row-major, row 0 = headers */
	size_t nrows, cap;
	char align[32];
	int fill; /* next column for cli_table_addf */
};

cli_table *
cli_table_new(int ncols, const char *const *headers, const char *align)
{
	cli_table *t = calloc(1, sizeof *t);
	if (t == NULL || ncols <= 0 || ncols > 31) {
		free(t);
		return NULL;
	}
	t->ncols = ncols;
	for (int i = 0; i < ncols; i++)
		t->align[i] = (align && (int)strlen(align) > i) ? align[i] : 'l';
	if (PP_GROW(t->cells, t->cap, (size_t)ncols) != 0) {
		free(t);
		return NULL;
	}
	for (int i = 0; i < ncols; i++)
		t->cells[i] = strdup(headers[i]);
	t->nrows = 1;
	return t;
}

static char **
new_row(cli_table *t)
{
	size_t need = (t->nrows + 1) * (size_t)t->ncols;
	if (PP_GROW(t->cells, t->cap, need) != 0)
		return NULL;
	char **row = &t->cells[t->nrows * (size_t)t->ncols];
	for (int i = 0; i < t->ncols; i++)
		row[i] = NULL;
	t->nrows++;
	return row;
}

void
cli_table_add(cli_table *t, ...)
{
	if (t == NULL)
		return;
	char **row = new_row(t);
	if (row == NULL)
		return;
	va_list ap;
	va_start(ap, t);
	for (int i = 0; i < t->ncols; i++) {
		const char *s = va_arg(ap, const char *);
		row[i] = strdup(s ? s : "");
	}
	va_end(ap);
	t->fill = t->ncols;
}

void
cli_table_addf(cli_table *t, int col, const char *fmt, ...)
{
	if (t == NULL || col < 0 || col >= t->ncols)
		return;
	if (col == 0 || t->fill >= t->ncols) {
		if (new_row(t) == NULL)
			return;
	}
	char **row = &t->cells[(t->nrows - 1) * (size_t)t->ncols];
	va_list ap;
	va_start(ap, fmt);
	pp_str s = {0};
	pp_str_vaddf(&s, fmt, ap);
	va_end(ap);
	free(row[col]);
	row[col] = pp_str_detach(&s);
	t->fill = col + 1;
}

/* Display width of UTF-8 text: count code points, not bytes. */
static size_t
width(const char *s)
{
	size_t w = 0;
	for (; s && *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			w++;
	return w;
}

void
cli_table_print(const cli_table *t, FILE *f)
{
	if (t == NULL)
		return;
	size_t w[32] = {0};
	for (size_t r = 0; r < t->nrows; r++)
		for (int c = 0; c < t->ncols; c++) {
			size_t l = width(t->cells[r * (size_t)t->ncols + (size_t)c]);
			if (l > w[c])
				w[c] = l;
		}
	for (size_t r = 0; r < t->nrows; r++) {
		for (int c = 0; c < t->ncols; c++) {
			const char *s = t->cells[r * (size_t)t->ncols + (size_t)c];
			if (s == NULL)
				s = "";
			size_t pad = w[c] - width(s);
			bool last = c == t->ncols - 1;
			if (t->align[c] == 'r')
				fprintf(f, "%*s%s", (int)pad, "", s);
			else
				fprintf(f, "%s%*s", s, last ? 0 : (int)pad, "");
			if (!last)
				fputs("  ", f);
		}
		fputc('\n', f);
	}
}

void
cli_table_free(cli_table *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->nrows * (size_t)t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t);
}

/* ---- formatting ---------------------------------------------------------------------------- */

const char *
cli_bytes(double b, char *buf, size_t n)
{
	static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	int i = 0;
	double v = b;
	while (fabs(v) >= 1024.0 && i < 5) {
		v /= 1024.0;
		i++;
	}
	if (i == 0)
		snprintf(buf, n, "%.0f B", v);
	else
		snprintf(buf, n, "%.*f %s", fabs(v) < 10 ? 2 : fabs(v) < 100 ? 1 : 0, v, u[i]);
	return buf;
}

const char *
cli_si(double v, const char *unit, char *buf, size_t n)
{
	static const char *const p[] = {"", "K", "M", "G", "T", "P", "E"};
	int i = 0;
	double x = v;
	while (fabs(x) >= 1000.0 && i < 6) {
		x /= 1000.0;
		i++;
	}
	const char *sep = p[i][0] || unit[0] ? " " : "";
	snprintf(buf, n, "%.*f%s%s%s", fabs(x) < 10 ? 2 : fabs(x) < 100 ? 1 : 0, x, sep, p[i], unit);
	return buf;
}

const char *
cli_seconds(double s, char *buf, size_t n)
{
	if (!isfinite(s))
		snprintf(buf, n, "inf");
	else if (s >= 86400.0 * 2)
		snprintf(buf, n, "%.1f days", s / 86400.0);
	else if (s >= 3600.0 * 2)
		snprintf(buf, n, "%.1f h", s / 3600.0);
	else if (s >= 1.0)
		snprintf(buf, n, "%.3f s", s);
	else if (s >= 1e-3)
		snprintf(buf, n, "%.3f ms", s * 1e3);
	else
		snprintf(buf, n, "%.1f us", s * 1e6);
	return buf;
}

const char *
cli_count(double v, char *buf, size_t n)
{
	if (fabs(v) >= 1e12)
		snprintf(buf, n, "%.2fT", v / 1e12);
	else if (fabs(v) >= 1e9)
		snprintf(buf, n, "%.2fB", v / 1e9);
	else if (fabs(v) >= 1e6)
		snprintf(buf, n, "%.2fM", v / 1e6);
	else if (fabs(v) >= 1e3)
		snprintf(buf, n, "%.1fK", v / 1e3);
	else
		snprintf(buf, n, "%.0f", v);
	return buf;
}
