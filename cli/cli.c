/*
 * cli.c -- helpers shared by the command files: errors and exit status, the database, JSON
 * and table output, human number formatting.
 */
#include "config.h"
#include "cli/cli.h"
#include "common/json.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- the output filter ---------------------------------------------------------------------- */

FILE *cli_tty;

typedef struct filter {
	int fd;
	char pend[4]; /* the start of a UTF-8 sequence that the last write cut short */
	size_t npend;
} filter;

static filter out_filter = {1, {0}, 0}, err_filter = {2, {0}, 0};

static int
write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int
filter_put(filter *f, const char *buf, size_t n, bool final)
{
	const char *text = buf;
	char *joined = NULL;
	if (f->npend > 0) {
		joined = malloc(f->npend + n);
		if (joined == NULL)
			return -1;
		memcpy(joined, f->pend, f->npend);
		memcpy(joined + f->npend, buf, n);
		text = joined;
		n += f->npend;
		f->npend = 0;
	}
	pp_str s = {0};
	size_t used = pp_str_add_printable_n(&s, text, n, PP_PRINT_LINES, final);
	/* at most 3 bytes are held back: the longest incomplete UTF-8 sequence */
	memcpy(f->pend, text + used, n - used);
	f->npend = n - used;
	free(joined);
	int rc = s.oom ? -1 : write_all(f->fd, s.buf ? s.buf : "", s.len);
	pp_str_free(&s);
	return rc;
}

static ssize_t
filter_write(void *cookie, const char *buf, size_t n)
{
	return filter_put(cookie, buf, n, false) == 0 ? (ssize_t)n : -1;
}

void
cli_output_start(void)
{
	cookie_io_functions_t io = {.write = filter_write};
	cli_tty = stderr;
	FILE *o = fopencookie(&out_filter, "w", io);
	FILE *e = fopencookie(&err_filter, "w", io);
	if (o == NULL || e == NULL) {
		if (o != NULL)
			fclose(o);
		if (e != NULL)
			fclose(e);
		return; /* out of memory at start-up: print unfiltered rather than not at all */
	}
	setvbuf(o, NULL, isatty(1) ? _IOLBF : _IOFBF, BUFSIZ);
	setvbuf(e, NULL, _IONBF, 0);
	stdout = o;
	stderr = e;
}

/* The unfiltered stderr, for the progress line's own control characters only. */
static FILE *
tty(void)
{
	return cli_tty != NULL ? cli_tty : stderr;
}

int
cli_output_finish(void)
{
	int rc = fflush(stdout) != 0 || ferror(stdout) ? -1 : 0;
	/* a text that ends inside a UTF-8 sequence: its last bytes, escaped */
	if (rc == 0 && out_filter.npend > 0)
		rc = filter_put(&out_filter, "", 0, true);
	if (err_filter.npend > 0)
		filter_put(&err_filter, "", 0, true);
	return rc;
}

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

int
cli_opt_dtype(const cli_opt *o, const char *val, char *err, size_t errlen)
{
	if (hw_dtype_parse(val, o->target) != 0)
		return pp_err(err, errlen, PP_EUSAGE, "--%s must be a dtype (fp32, tf32, fp16, bf16, fp8, int8, int4), got \"%s\"",
			      o->name, val);
	return 0;
}

int
cli_opt_schedule(const cli_opt *o, const char *val, char *err, size_t errlen)
{
	if (sim_schedule_parse(val, o->target) != 0)
		return pp_err(err, errlen, PP_EUSAGE, "--%s must be gpipe, 1f1b, interleaved or zb-h1, got \"%s\"", o->name, val);
	return 0;
}

int
cli_opt_recompute(const cli_opt *o, const char *val, char *err, size_t errlen)
{
	if (sim_recompute_parse(val, o->target) != 0)
		return pp_err(err, errlen, PP_EUSAGE, "--%s must be none, selective, full or op, got \"%s\"", o->name, val);
	return 0;
}

int
cli_opt_dist(const cli_opt *o, const char *val, char *err, size_t errlen)
{
	char e[256];
	/* a dataset's name means its prompt lengths under --prompt-len, its outputs under --output-len */
	if (sim_dist_parse_len(val, strstr(o->name, "output") != NULL, o->target, e, sizeof e) != 0)
		return pp_err(err, errlen, PP_EUSAGE, "--%s: %s", o->name, e);
	return 0;
}

/* --lora-modules q,v,o,...: the adapted projections */
int
cli_opt_lora_modules(const cli_opt *o, const char *val, char *err, size_t errlen)
{
	return sim_lora_modules_parse(val, o->target, err, errlen);
}

/* --base-dtype bf16|fp16|nf4: how the frozen base is stored (nf4: QLoRA) */
int
cli_opt_base_dtype(const cli_opt *o, const char *val, char *err, size_t errlen)
{
	if (!strcmp(val, "nf4"))
		*(bool *)o->target = true;
	else if (!strcmp(val, "bf16") || !strcmp(val, "fp16"))
		*(bool *)o->target = false;
	else
		return pp_err(err, errlen, PP_EUSAGE, "--base-dtype must be bf16, fp16 (the training dtype) or nf4, got \"%s\"", val);
	return 0;
}

/* ---- progress and Ctrl-C ------------------------------------------------------------------- */

double
cli_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Callbacks come from the planners' worker threads: one at a time. */
static pthread_mutex_t progress_lock = PTHREAD_MUTEX_INITIALIZER;

void
cli_progress_init(cli_progress *p, const char *what)
{
	p->tty = isatty(2) != 0;
	p->t0 = p->last = cli_now_s();
	p->what = what;
	p->lines = 0;
	/* seconds between lines when stderr is not a terminal; PARAPLAN_PROGRESS_INTERVAL changes it
	 * (the tests use 0: a line at every callback) */
	p->interval_s = 5.0;
	const char *e = getenv("PARAPLAN_PROGRESS_INTERVAL");
	double v;
	if (e != NULL && pp_parse_double(e, &v) == 0 && v >= 0 && v <= 3600)
		p->interval_s = v;
}

void
cli_progress_cb(void *arg, size_t done, size_t total)
{
	cli_progress *p = arg;
	pthread_mutex_lock(&progress_lock);
	double now = cli_now_s(), el = now - p->t0;
	if (p->tty) {
		/* the bar's own carriage return goes to the unfiltered stderr (tty()) */
		if (total == 0)
			fprintf(tty(), "\r%zu evaluated (%.1f s)  ", done, el);
		else
			fprintf(tty(), "\r[%-30.*s] %3.0f%% (%zu/%zu)  ", (int)(30 * (done < total ? done : total) / total),
				"==============================", 100.0 * (double)done / (double)total, done, total);
	} else if (now - p->last >= p->interval_s) {
		/* a log, a pipe into tee, CI: a whole line now and then, never a carriage return */
		p->last = now;
		p->lines++;
		if (total > 0 && done > 0 && done < total)
			fprintf(stderr, "progress: %zu of %zu %s (%.0f%%), %.0f s, about %.0f s left\n", done, total, p->what,
				100.0 * (double)done / (double)total, el, el * (double)(total - done) / (double)done);
		else
			fprintf(stderr, "progress: %zu %s, %.0f s\n", done, p->what, el);
	}
	pthread_mutex_unlock(&progress_lock);
}

void
cli_progress_end(cli_progress *p)
{
	if (p->tty)
		fputs("\r\033[K", tty());
	else if (p->lines > 0)
		fprintf(stderr, "progress: done in %.0f s\n", cli_now_s() - p->t0);
}

static volatile sig_atomic_t stop_flag;

static void
on_sigint(int sig)
{
	(void)sig;
	stop_flag = 1;
	signal(SIGINT, SIG_DFL); /* a second Ctrl-C ends the program */
}

volatile sig_atomic_t *
cli_sigint_catch(void)
{
	stop_flag = 0;
	signal(SIGINT, on_sigint);
	return &stop_flag;
}

void
cli_sigint_release(void)
{
	signal(SIGINT, SIG_DFL);
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
cli_load_model(const char *spec, model **out, char *err, size_t errlen)
{
	int rc = model_load(spec, out, err, errlen);
	if (rc != 0)
		return rc;
	const char *w = model_warnings(*out);
	while (*w != '\0') {
		size_t n = strcspn(w, "\n");
		fprintf(stderr, "warning: %s: %.*s\n", model_name(*out), (int)n, w);
		w += n + (w[n] == '\n');
	}
	return 0;
}

int
cli_opt_out(const cli_opt *o, const char *val, char *err, size_t errlen)
{
	char flag[64];
	snprintf(flag, sizeof flag, "--%s", o->name);
	int rc = pp_output_check(flag, val, err, errlen);
	if (rc != 0)
		return PP_EUSAGE; /* the message names the flag and the path; exit status 2 */
	*(const char **)o->target = val;
	return 0;
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
cli_print_json(cJSON *doc, const char *schema)
{
	if (cJSON_IsObject(doc) && !cJSON_HasObjectItem(doc, "schema")) {
		/* first, so that a reader (or a person with head -c) sees it before anything else:
		 * cJSON appends to objects, but an object's members are its child list */
		cJSON *s = cJSON_CreateString(schema);
		char *key = strdup("schema");
		if (s != NULL && key != NULL) {
			s->string = key;
			if (!cJSON_InsertItemInArray(doc, 0, s)) {
				cJSON_Delete(s);
				s = NULL;
			}
		} else {
			free(key);
			cJSON_Delete(s);
			s = NULL;
		}
		if (s == NULL) {
			cli_error("out of memory while printing JSON");
			return;
		}
	}
	/* Names from files and databases are printed as their printable form (pp.h): JSON must be
	 * UTF-8, and whoever prints a value would otherwise run its escape sequences. */
	cJSON *copy = NULL;
	if (doc != NULL && !pp_json_is_printable(doc)) {
		copy = cJSON_Duplicate(doc, true);
		if (copy == NULL || pp_json_make_printable(copy) != 0) {
			cJSON_Delete(copy);
			cli_error("out of memory while printing JSON");
			return;
		}
		doc = copy;
	}
	char *s = cJSON_Print(doc);
	cJSON_Delete(copy);
	if (s == NULL) {
		cli_error("out of memory while printing JSON");
		return;
	}
	fputs(s, stdout);
	fputc('\n', stdout);
	free(s);
}

cJSON *
cli_wrap(const char *key, cJSON *arr)
{
	cJSON *o = cJSON_CreateObject();
	if (o == NULL || !cJSON_AddItemToObject(o, key, arr)) {
		cJSON_Delete(o);
		cJSON_Delete(arr);
		return NULL;
	}
	return o;
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

int
cli_spec_check(const char *cmd, const cli_opt *opts, int spec)
{
	if (spec != SIM_SPEC_OFF && (!cli_given(opts, "spec-tokens") || !cli_given(opts, "spec-accept")))
		return cli_usage(cmd, "--spec needs --spec-tokens K and --spec-accept A (the acceptance rate depends on the "
				      "draft and the traffic: no default)");
	if (spec == SIM_SPEC_OFF && (cli_given(opts, "spec-tokens") || cli_given(opts, "spec-accept")))
		return cli_usage(cmd, "--spec-tokens and --spec-accept apply to --spec ngram|eagle");
	return 0;
}
