/*
 * chart.c -- charts through gnuplot: each chart is a data file (one block per series, headed
 * "# series: NAME") and a script beside it in charts/, drawn to SVG (embedded in the HTML page)
 * and PNG (beside the Markdown).  The scripts stay with the report, so anyone can redraw a
 * chart with their own taste ('gnuplot NAME.gp' in charts/).
 *
 * gnuplot runs with -d (no ~/.gnuplot) and LC_ALL=C.UTF-8 (a decimal point, whatever the locale),
 * in the charts directory, one process per chart, so one bad chart costs only itself.  Its
 * SVG and PNG output carry no date: the same data give the same bytes.
 */
#include "config.h"
#include "reports/rep_int.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHART_W 1000
#define CHART_H 560

rep_chart *
rep_chart_new(rep_report *r, const char *name, const char *title, const char *caption)
{
	if (!rep_ok(r))
		return NULL;
	if (PP_GROW(r->charts, r->ccap, r->ncharts + 1) != 0) {
		rep_fail(r, PP_ENOMEM, "out of memory");
		return NULL;
	}
	rep_chart *c = &r->charts[r->ncharts++];
	memset(c, 0, sizeof *c);
	/* the name is a file stem in the scripts' own quotes: letters, digits and '-' only */
	pp_strlcpy(c->name, name, sizeof c->name);
	for (char *q = c->name; *q; q++)
		if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') || *q == '-'))
			*q = '-';
	c->title = strdup(title);
	c->caption = strdup(caption);
	c->width = CHART_W;
	c->height = CHART_H;
	pp_str_add(&c->dat, "# ");
	rep_gp_comment(&c->dat, title);
	pp_str_addf(&c->dat, "\n# data of charts/%s.gp (paraplan report)\n", c->name);
	return c;
}

void
rep_series(rep_chart *c, const char *name)
{
	if (c == NULL)
		return;
	if (c->nseries > 0)
		pp_str_add(&c->dat, "\n\n"); /* two blank lines: gnuplot's next index */
	pp_str_add(&c->dat, "# series: ");
	rep_gp_comment(&c->dat, name);
	pp_str_add(&c->dat, "\n");
	if (c->nseries < 16)
		pp_strlcpy(c->series[c->nseries], name, sizeof c->series[0]);
	c->nseries++;
}

/* Each value in the shortest of %.15g, %.16g and %.17g that reads back as the same double, so the
 * data are exact and no longer than they need be; NaN (gnuplot's undefined point, left out of the
 * plot) for anything not finite, which printf would spell "nan" or "inf". */
void
rep_chart_vals(rep_chart *c, const double *v, size_t n)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		char num[40] = "NaN";
		if (isfinite(v[i]))
			for (int prec = 15; prec <= 17; prec++) {
				snprintf(num, sizeof num, "%.*g", prec, v[i]);
				if (strtod(num, NULL) == v[i])
					break;
			}
		pp_str_add(&c->dat, i ? " " : "");
		pp_str_add(&c->dat, num);
	}
	pp_str_add(&c->dat, "\n");
}

void
rep_show_chart(rep_report *r, const rep_chart *c)
{
	if (!rep_ok(r) || c == NULL)
		return;
	rep_block *b = rep_para(r, B_CHART);
	if (b != NULL) {
		b->type = B_CHART;
		b->index = (size_t)(c - r->charts);
	}
}

static bool
gp_safe(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c != '\0' && strchr(" .,:;-_+=/()[]%!?<>*", c) != NULL);
}

void
rep_gp_quote(pp_str *s, const char *text)
{
	pp_str shown = {0};
	pp_str_add_printable(&shown, text ? text : "");
	pp_str_add(s, "\"");
	for (size_t i = 0; i < shown.len; i++) {
		unsigned char c = (unsigned char)shown.buf[i];
		if (gp_safe(c))
			pp_str_addn(s, (const char *)&c, 1);
		else
			pp_str_addf(s, "\\%03o", c);
	}
	pp_str_add(s, "\"");
	if (shown.oom)
		s->oom = true;
	pp_str_free(&shown);
}

void
rep_gp_comment(pp_str *s, const char *text)
{
	pp_str shown = {0};
	pp_str_add_printable(&shown, text ? text : "");
	for (size_t i = 0; i < shown.len; i++) {
		char c = shown.buf[i];
		pp_str_addn(s, c == '\\' ? "/" : c == '`' ? "'" : &c, 1);
	}
	if (shown.oom)
		s->oom = true;
	pp_str_free(&shown);
}

int
rep_gp_check(const char *script, size_t len, int *line)
{
	*line = 1;
	const char *p = script, *end = script + len;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (eol == NULL)
			eol = end;
		const char *q = p;
		while (q < eol && *q == ' ')
			q++;
		if (q < eol && *q == '#') {
			/* a comment: printable text that neither runs nor continues */
			for (const char *c = q; c < eol; c++)
				if ((unsigned char)*c < 0x20 || *c == 0x7f || *c == '`' || *c == '\\')
					return -1;
		} else {
			for (; q < eol; q++) {
				unsigned char c = (unsigned char)*q;
				if (c == '"') {
					/* safe bytes, octal escapes and our colours ("#1f77b4") */
					for (q++; q < eol && *q != '"'; q++) {
						if (*q == '\\') {
							if (eol - q < 4 || q[1] < '0' || q[1] > '3' || q[2] < '0' || q[2] > '7' ||
							    q[3] < '0' || q[3] > '7')
								return -1;
							q += 3;
						} else if (!gp_safe((unsigned char)*q) && *q != '#') {
							return -1;
						}
					}
					if (q >= eol)
						return -1;
				} else if (c == '\'') {
					/* our literals only: file names and fixed titles */
					for (q++; q < eol && *q != '\''; q++)
						if (!gp_safe((unsigned char)*q))
							return -1;
					if (q >= eol)
						return -1;
				} else if (c == '\\') {
					if (q + 1 != eol) /* a line continuation, nothing else */
						return -1;
				} else if (c == '$') {
					if (q + 1 >= eol || q[1] < '1' || q[1] > '9') /* a column ($2), never a datablock */
						return -1;
				} else if (!gp_safe(c)) {
					return -1; /* a backquote, @, a comment after a command, a control character */
				}
			}
		}
		if (eol < end)
			(*line)++;
		p = eol + 1;
	}
	return 0;
}

void
rep_gp_each(rep_chart *c, int from, int to, const char *using, const char *with, int lt0, bool first)
{
	if (c == NULL)
		return;
	for (int k = from; k < to && k < 16; k++) {
		if (k == from && first)
			pp_str_addf(&c->gp, "plot '%s.dat'", c->name);
		else
			pp_str_add(&c->gp, ", \\\n     ''");
		pp_str_addf(&c->gp, " index %d using %s with %s lt %d title ", k, using, with, lt0 + k);
		rep_gp_quote(&c->gp, c->series[k]);
	}
}

/* ---- finding gnuplot ----------------------------------------------------------------------- */

static bool
executable(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

static const char *
on_path(const char *prog, char *buf, size_t n)
{
	if (strchr(prog, '/') != NULL)
		return executable(prog) && pp_strlcpy(buf, prog, n) ? buf : NULL;
	const char *path = getenv("PATH");
	if (path == NULL)
		path = "/usr/bin:/bin";
	while (*path) {
		size_t len = strcspn(path, ":");
		if (len > 0 && (size_t)snprintf(buf, n, "%.*s/%s", (int)len, path, prog) < n && executable(buf))
			return buf;
		path += len;
		if (*path == ':')
			path++;
	}
	return NULL;
}

const char *
rep_gnuplot(const rep_opts *o, char *buf, size_t n)
{
	const char *want = o->gnuplot;
	if (want == NULL)
		want = getenv("PARAPLAN_GNUPLOT");
	if (want != NULL)
		return want[0] ? on_path(want, buf, n) : NULL;
	if (GNUPLOT_PATH[0] && executable(GNUPLOT_PATH) && pp_strlcpy(buf, GNUPLOT_PATH, n))
		return buf;
	return on_path("gnuplot", buf, n);
}

/* ---- drawing ------------------------------------------------------------------------------- */

static void
script(const rep_chart *c, pp_str *s)
{
	pp_str_add(s, "# ");
	rep_gp_comment(s, c->title);
	pp_str_addf(s, "\n# Drawn by 'paraplan report' from %s.dat; run 'gnuplot %s.gp' here to redraw.\n", c->name,
		    c->name);
	pp_str_add(s, "set encoding utf8\n");
	pp_str_addf(s, "set terminal svg size %d,%d noenhanced font \"sans,13\" background rgb \"white\"\n", c->width, c->height);
	pp_str_addf(s, "set output '%s.svg'\n", c->name);
	pp_str_add(s, "set border lw 1 lc rgb \"#555555\"\nset grid lc rgb \"#dddddd\"\n");
	pp_str_add(s, "set linetype 1 lc rgb \"#1f77b4\" lw 2 pt 7\nset linetype 2 lc rgb \"#ff7f0e\" lw 2 pt 5\n"
		      "set linetype 3 lc rgb \"#2ca02c\" lw 2 pt 9\nset linetype 4 lc rgb \"#d62728\" lw 2 pt 11\n"
		      "set linetype 5 lc rgb \"#9467bd\" lw 2 pt 13\nset linetype 6 lc rgb \"#8c564b\" lw 2 pt 7\n"
		      "set linetype 7 lc rgb \"#e377c2\" lw 2 pt 5\nset linetype 8 lc rgb \"#7f7f7f\" lw 2 pt 9\n"
		      "set linetype 9 lc rgb \"#bcbd22\" lw 2 pt 11\n");
	pp_str_add(s, "set title ");
	rep_gp_quote(s, c->title);
	pp_str_add(s, "\n");
	pp_str_addn(s, c->gp.buf ? c->gp.buf : "", c->gp.len);
	pp_str_addf(s, "set terminal pngcairo size %d,%d noenhanced font \"sans,11\" background rgb \"white\"\n", c->width, c->height);
	pp_str_addf(s, "set output '%s.png'\nreplot\nunset output\n", c->name);
}

char *
rep_chart_script(const rep_report *r, size_t i)
{
	if (i >= r->ncharts)
		return NULL;
	pp_str s = {0};
	script(&r->charts[i], &s);
	return pp_str_detach(&s);
}

char *
rep_chart_data(const rep_report *r, size_t i)
{
	if (i >= r->ncharts)
		return NULL;
	const pp_str *d = &r->charts[i].dat;
	pp_str s = {0};
	pp_str_addn(&s, d->buf ? d->buf : "", d->len);
	return pp_str_detach(&s);
}

static int
write_in(const char *dir, const char *name, const char *ext, const pp_str *text, char *err, size_t errlen)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext);
	return pp_write_file_atomic(path, text->buf ? text->buf : "", text->len, err, errlen);
}

/* Runs gnuplot on one script in dir; *why gets its first line of complaint. */
static bool
run_gnuplot(const char *gnuplot, const char *dir, const char *gp, char *why, size_t whylen)
{
	int fd[2];
	why[0] = '\0';
	if (pipe(fd) != 0) {
		snprintf(why, whylen, "pipe: %s", strerror(errno));
		return false;
	}
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(why, whylen, "fork: %s", strerror(errno));
		close(fd[0]);
		close(fd[1]);
		return false;
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0)
			dup2(devnull, 0);
		dup2(fd[1], 1);
		dup2(fd[1], 2);
		close(fd[0]);
		close(fd[1]);
		if (chdir(dir) != 0)
			_exit(126);
		setenv("LC_ALL", "C.UTF-8", 1); /* a decimal point, and UTF-8 text */
		unsetenv("DISPLAY");
		execl(gnuplot, gnuplot, "-d", gp, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	char buf[4096];
	size_t got = 0;
	for (;;) {
		ssize_t k = read(fd[0], buf + got, sizeof buf - 1 - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		if (got + (size_t)k < sizeof buf - 1)
			got += (size_t)k;
	}
	buf[got] = '\0';
	close(fd[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	/* gnuplot stops at its first error, so its last line says why (warnings come before) */
	const char *line = buf, *keep = buf;
	while (*line) {
		size_t len = strcspn(line, "\n");
		if (len > 0)
			keep = line;
		line += len + (line[len] == '\n');
	}
	snprintf(why, whylen, "%.*s", (int)strcspn(keep, "\n"), keep);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return true;
	if (why[0] == '\0')
		snprintf(why, whylen, "exit status %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return false;
}

static bool
non_empty(const char *dir, const char *name, const char *ext)
{
	char path[4200];
	struct stat st;
	snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext);
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

static void
remove_in(const char *dir, const char *name, const char *ext)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext);
	unlink(path);
}

int
rep_draw(rep_report *r, const char *dir, const char *gnuplot, char *err, size_t errlen)
{
	if (r->ncharts == 0)
		return 0;
	char cdir[4000];
	snprintf(cdir, sizeof cdir, "%s/charts", dir);
	int rc = pp_mkdirs(cdir, err, errlen);
	if (rc != 0)
		return rc;
	size_t failed = 0;
	for (size_t i = 0; i < r->ncharts; i++) {
		rep_chart *c = &r->charts[i];
		pp_str gp = {0};
		script(c, &gp);
		if (gp.oom || c->dat.oom) {
			pp_str_free(&gp);
			return pp_err(err, errlen, PP_ENOMEM, "out of memory");
		}
		/* the last line of defence: a script that breaks the quoting rules is never run */
		int bad;
		if (rep_gp_check(gp.buf, gp.len, &bad) != 0) {
			pp_str_free(&gp);
			return pp_err(err, errlen, PP_EINPUT, "charts/%s.gp:%d: the chart's script would not be safe to run",
				      c->name, bad);
		}
		rc = write_in(cdir, c->name, "dat", &c->dat, err, errlen);
		if (rc == 0)
			rc = write_in(cdir, c->name, "gp", &gp, err, errlen);
		pp_str_free(&gp);
		if (rc != 0)
			return rc;
		if (gnuplot == NULL)
			continue;
		char why[256], file[64];
		snprintf(file, sizeof file, "%s.gp", c->name);
		bool ok = run_gnuplot(gnuplot, cdir, file, why, sizeof why);
		if (ok && non_empty(cdir, c->name, "svg") && non_empty(cdir, c->name, "png")) {
			char path[4200];
			snprintf(path, sizeof path, "%s/%s.svg", cdir, c->name);
			rc = pp_read_file(path, (size_t)64 << 20, &c->svg, &c->svglen, err, errlen);
			if (rc != 0)
				return rc;
			c->drawn = true;
		} else {
			remove_in(cdir, c->name, "svg");
			remove_in(cdir, c->name, "png");
			if (failed++ == 0)
				rep_notice(r, "gnuplot (%s) could not draw charts/%s.gp: %s; that chart is left out, its data "
					   "and script are in charts/",
					   gnuplot, c->name, why[0] ? why : "no output");
		}
	}
	if (failed > 1)
		rep_notice(r, "gnuplot could not draw %zu of %zu charts", failed, r->ncharts);
	return 0;
}
