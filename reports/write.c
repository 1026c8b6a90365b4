/*
 * write.c -- building a report from its documents, and writing it so that the output
 * directory holds the whole report or nothing new.
 *
 * Everything is written into a fresh directory beside the target (DIR.tmp-XXXXXX, same file
 * system, so the final rename is atomic): charts and their data, the HTML, the Markdown, the
 * CSV files and manifest.txt last.  Then the target is swapped in.  A target that exists is
 * replaced only when it is empty or holds an earlier report and nothing else (its manifest.txt
 * and the files it lists), never a directory of the user's other files.  On any failure the
 * temporary directory is removed.
 */
#include "config.h"
#include "reports/rep_int.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void
rep_opts_init(rep_opts *o)
{
	memset(o, 0, sizeof *o);
	o->currency = "USD";
	o->per_usd = 1.0;
	o->tokens = 1e12;
	o->formats = REP_ALL;
}

int
rep_parse_currency(const char *s, rep_opts *o, char *err, size_t errlen)
{
	const char *colon = strchr(s, ':');
	size_t n = colon ? (size_t)(colon - s) : strlen(s);
	if (n != 3)
		return pp_err(err, errlen, PP_EUSAGE, "--currency must be USD or CODE:RATE (three letters, then units per US "
						      "dollar, e.g. EUR:0.92), got \"%s\"", s);
	for (size_t i = 0; i < 3; i++)
		if (!(s[i] >= 'A' && s[i] <= 'Z'))
			return pp_err(err, errlen, PP_EUSAGE, "--currency: \"%.3s\" is not a three-letter code in capitals", s);
	double rate = 1.0;
	if (colon != NULL) {
		if (pp_parse_double(colon + 1, &rate) != 0 || !(rate > 0) || rate > 1e9)
			return pp_err(err, errlen, PP_EUSAGE, "--currency: the rate must be a positive number of %.3s per US "
							      "dollar, got \"%s\"", s, colon + 1);
	} else if (strncmp(s, "USD", 3) != 0) {
		return pp_err(err, errlen, PP_EUSAGE,
			      "--currency %.3s needs its rate, e.g. %.3s:0.92 (units per US dollar): the hardware database "
			      "holds prices in US dollars and no exchange rates", s, s);
	}
	if (!strncmp(s, "USD", 3) && rate != 1.0)
		return pp_err(err, errlen, PP_EUSAGE, "--currency USD has the rate 1, got \"%s\"", s);
	o->currency = s;
	o->per_usd = rate;
	return 0;
}

int
rep_parse_format(const char *s, unsigned *out)
{
	static const struct {
		const char *name;
		unsigned f;
	} f[] = {{"html", REP_HTML}, {"md", REP_MD}, {"csv", REP_CSV}, {"all", REP_ALL}};
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
		if (!strcmp(s, f[i].name)) {
			*out = f[i].f;
			return 0;
		}
	return PP_EUSAGE;
}

int
rep_build(const char *const *paths, size_t n, const rep_opts *o, rep_report **out, char *err, size_t errlen)
{
	*out = NULL;
	if (n == 0)
		return pp_err(err, errlen, PP_EUSAGE, "no documents: give at least one --from FILE");
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++)
			if (!strcmp(paths[i], paths[j]))
				return pp_err(err, errlen, PP_EUSAGE, "--from %s is given twice", paths[i]);
	rep_report *r = calloc(1, sizeof *r);
	if (r == NULL || (r->docs = calloc(n, sizeof *r->docs)) == NULL) {
		free(r);
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	}
	r->o = *o;
	pp_strlcpy(r->currency, o->currency ? o->currency : "USD", 4);
	if (!(r->o.per_usd > 0))
		r->o.per_usd = 1.0;
	for (size_t i = 0; i < n; i++) {
		rep_doc *d = &r->docs[i];
		r->ndocs = i + 1;
		d->no = (int)i + 1;
		d->trace_of = d->trace_doc = -1;
		d->path = strdup(paths[i]);
		if (d->path == NULL) {
			rep_free(r);
			return pp_err(err, errlen, PP_ENOMEM, "out of memory");
		}
		int rc = rep_doc_load(d, err, errlen);
		if (rc != 0) {
			rep_free(r);
			return rc;
		}
	}
	rep_build_all(r);
	if (r->rc != 0) {
		int rc = pp_err(err, errlen, r->rc, "%s", r->err);
		rep_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

/* ---- the directory ------------------------------------------------------------------------- */

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) != 0 && errno != ENOENT ? -1 : 0;
}

static void
rm_tree(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int
put(const char *dir, const char *rel, const pp_str *s, pp_str *manifest, char *err, size_t errlen)
{
	char path[4300];
	if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, rel) >= sizeof path)
		return pp_err(err, errlen, PP_EUSAGE, "%s/%s: path too long", dir, rel);
	if (s->oom)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	int rc = pp_write_file_atomic(path, s->buf ? s->buf : "", s->len, err, errlen);
	if (rc == 0 && manifest != NULL)
		pp_str_addf(manifest, "%s\t%zu\n", rel, s->len);
	return rc;
}

static int
file_size(const char *dir, const char *rel, pp_str *manifest)
{
	char path[4300];
	struct stat st;
	snprintf(path, sizeof path, "%s/%s", dir, rel);
	if (stat(path, &st) != 0)
		return -1;
	pp_str_addf(manifest, "%s\t%lld\n", rel, (long long)st.st_size);
	return 0;
}

/* manifest.txt's first line: what tells an earlier report from a directory of the user's */
static const char manifest_head[] = "# paraplan report: the files of this report and their sizes in bytes\n";

/* Writes every file of the report into tmp. */
static int
fill(rep_report *r, const char *tmp, char *err, size_t errlen)
{
	char gbuf[4096];
	const char *gnuplot = rep_gnuplot(&r->o, gbuf, sizeof gbuf);
	if (gnuplot == NULL && r->ncharts > 0) {
		const char *env = r->o.gnuplot ? r->o.gnuplot : getenv("PARAPLAN_GNUPLOT");
		if (env != NULL && !env[0])
			rep_notice(r, "charts are off (PARAPLAN_GNUPLOT is empty): the report has tables only (the charts' data "
				      "and scripts are in charts/)");
		else if (env != NULL)
			rep_notice(r, "gnuplot \"%s\" was not found: the report has tables only (the charts' data and scripts "
				      "are in charts/)", env);
		else
			rep_notice(r, "gnuplot was not found: the report has tables only (the charts' data and scripts are in "
				      "charts/; install gnuplot and run the report again to draw them)");
	}
	int rc = rep_draw(r, tmp, gnuplot, err, errlen);
	if (rc != 0)
		return rc;
	pp_str manifest = {0};
	pp_str_add(&manifest, manifest_head);
	for (size_t i = 0; i < r->ncharts; i++) {
		static const char *const ext[] = {"dat", "gp", "svg", "png"};
		for (int e = 0; e < (r->charts[i].drawn ? 4 : 2); e++) {
			char rel[96];
			snprintf(rel, sizeof rel, "charts/%s.%s", r->charts[i].name, ext[e]);
			if (file_size(tmp, rel, &manifest) != 0) {
				pp_str_free(&manifest);
				return pp_err(err, errlen, PP_EIO, "%s/%s: missing after drawing", tmp, rel);
			}
		}
	}
	if (r->o.formats & REP_CSV) {
		char dir[4200];
		snprintf(dir, sizeof dir, "%s/tables", tmp);
		if ((rc = pp_mkdirs(dir, err, errlen)) != 0) {
			pp_str_free(&manifest);
			return rc;
		}
		for (size_t t = 0; t < r->ntables && rc == 0; t++) {
			pp_str s = {0};
			char rel[96];
			rep_render_csv(r, t, &s);
			snprintf(rel, sizeof rel, "tables/%s.csv", r->tables[t].id);
			rc = put(tmp, rel, &s, &manifest, err, errlen);
			pp_str_free(&s);
		}
	}
	if (rc == 0 && (r->o.formats & REP_HTML)) {
		pp_str s = {0};
		rep_render_html(r, &s);
		rc = put(tmp, "report.html", &s, &manifest, err, errlen);
		pp_str_free(&s);
	}
	if (rc == 0 && (r->o.formats & REP_MD)) {
		pp_str s = {0};
		rep_render_md(r, &s);
		rc = put(tmp, "report.md", &s, &manifest, err, errlen);
		pp_str_free(&s);
	}
	if (rc == 0)
		rc = put(tmp, "manifest.txt", &manifest, NULL, err, errlen);
	pp_str_free(&manifest);
	return rc;
}

static bool
empty_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (d == NULL)
		return false;
	struct dirent *e;
	bool empty = true;
	while (empty && (e = readdir(d)) != NULL)
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	closedir(d);
	return empty;
}

/* Whether rel ("report.md", "charts/d1.svg") is a file the manifest lists: man is the
 * manifest's text, its header line and then a line "REL<TAB>SIZE" a file. */
static bool
listed(const char *man, const char *rel)
{
	size_t n = strlen(rel);
	for (const char *p = strstr(man, "\n"); p != NULL; p = strstr(p + 1, "\n"))
		if (!strncmp(p + 1, rel, n) && p[1 + n] == '\t')
			return true;
	return false;
}

/* The first entry of an earlier report's directory (sub: "" for its top, or "charts" or
 * "tables") that the report did not write, into bad: anything but its manifest, the files the
 * manifest lists and the two folders it writes them in.  1 when there is one, 0 when none, a
 * negative code when the directory cannot be read. */
static int
stray(const char *dir, const char *sub, const char *man, char *bad, size_t badlen, char *err, size_t errlen)
{
	char path[4300];
	snprintf(path, sizeof path, "%s%s%s", dir, sub[0] ? "/" : "", sub);
	DIR *d = opendir(path);
	if (d == NULL)
		return pp_err(err, errlen, PP_EIO, "%s: %s", path, strerror(errno));
	int found = 0;
	struct dirent *e;
	while (found == 0 && (e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char rel[600], full[4600];
		struct stat st;
		snprintf(rel, sizeof rel, "%s%s%.500s", sub, sub[0] ? "/" : "", e->d_name);
		bool top = sub[0] == '\0';
		if ((size_t)snprintf(full, sizeof full, "%s/%s", path, e->d_name) >= sizeof full || lstat(full, &st) != 0)
			found = 1;
		else if (top && S_ISDIR(st.st_mode) && (!strcmp(e->d_name, "charts") || !strcmp(e->d_name, "tables")))
			found = stray(dir, e->d_name, man, bad, badlen, err, errlen);
		else
			found = !(S_ISREG(st.st_mode) && ((top && !strcmp(e->d_name, "manifest.txt")) || listed(man, rel)));
		if (found == 1 && bad[0] == '\0')
			pp_strlcpy(bad, rel, badlen);
	}
	closedir(d);
	return found;
}

/* 0: dir is absent; 1: it holds an earlier report and nothing else; 2: it is empty; a negative
 * code: it must not be replaced.  An earlier report is a manifest.txt that paraplan wrote
 * (its first line says so) and only the files it lists: a directory holding anything more is
 * the user's, whatever else it holds. */
static int
replaceable(const char *dir, char *err, size_t errlen)
{
	struct stat st;
	if (lstat(dir, &st) != 0)
		return errno == ENOENT ? 0 : pp_err(err, errlen, PP_EIO, "%s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return pp_err(err, errlen, PP_EUSAGE, "--out %s exists and is not a directory", dir);
	if (empty_dir(dir))
		return 2;
	char path[4300], e2[256], *man = NULL;
	size_t len = 0;
	snprintf(path, sizeof path, "%s/manifest.txt", dir);
	if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || pp_read_text(path, 1 << 20, &man, &len, e2, sizeof e2) != 0 ||
	    strncmp(man, manifest_head, sizeof manifest_head - 1) != 0) {
		free(man);
		return pp_err(err, errlen, PP_EUSAGE,
			      "--out %s exists and is not an earlier report (no manifest.txt of one): choose another directory "
			      "or remove it",
			      dir);
	}
	char bad[600] = "";
	int rc = stray(dir, "", man, bad, sizeof bad, err, errlen);
	free(man);
	if (rc < 0)
		return rc;
	if (rc > 0)
		return pp_err(err, errlen, PP_EUSAGE,
			      "--out %s holds %s, which its manifest.txt does not list: it is not only an earlier report, and "
			      "is left as it is; choose another directory or remove it",
			      dir, bad);
	return 1;
}

int
rep_write(rep_report *r, const char *dir, char **notes, char *err, size_t errlen)
{
	if (notes != NULL)
		*notes = NULL;
	char target[4096];
	if (!pp_strlcpy(target, dir, sizeof target - 32) || target[0] == '\0')
		return pp_err(err, errlen, PP_EUSAGE, "--out: a directory name is required");
	size_t n = strlen(target);
	while (n > 1 && target[n - 1] == '/')
		target[--n] = '\0';
	int state = replaceable(target, err, errlen);
	if (state < 0)
		return state;
	/* the parent must exist: make it, as 'mkdir -p' would */
	char parent[4096];
	pp_strlcpy(parent, target, sizeof parent);
	char *slash = strrchr(parent, '/');
	if (slash != NULL && slash != parent) {
		*slash = '\0';
		int rc = pp_mkdirs(parent, err, errlen);
		if (rc != 0)
			return rc;
	}
	char tmp[4096];
	if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp-XXXXXX", target) >= sizeof tmp)
		return pp_err(err, errlen, PP_EUSAGE, "%.64s...: the output directory's path is too long", target);
	if (mkdtemp(tmp) == NULL)
		return pp_err(err, errlen, PP_EIO, "%s: cannot make a directory beside it: %s", target, strerror(errno));
	chmod(tmp, 0755); /* mkdtemp makes it private; a report is for reading */
	int rc = fill(r, tmp, err, errlen);
	if (rc != 0) {
		rm_tree(tmp);
		return rc;
	}
	if (state == 1) {
		char old[4200];
		snprintf(old, sizeof old, "%s.old-%ld", target, (long)getpid());
		rm_tree(old);
		if (rename(target, old) != 0) {
			rc = pp_err(err, errlen, PP_EIO, "%s: cannot move the earlier report aside: %s", target, strerror(errno));
			rm_tree(tmp);
			return rc;
		}
		if (rename(tmp, target) != 0) {
			rc = pp_err(err, errlen, PP_EIO, "%s: %s", target, strerror(errno));
			(void)rename(old, target); /* put the earlier report back */
			rm_tree(tmp);
			return rc;
		}
		rm_tree(old);
	} else if ((state == 2 && rmdir(target) != 0) || rename(tmp, target) != 0) {
		rc = pp_err(err, errlen, PP_EIO, "%s: %s", target, strerror(errno));
		rm_tree(tmp);
		return rc;
	}
	if (notes != NULL && r->notices.len > 0) {
		*notes = strdup(r->notices.buf);
		if (*notes == NULL)
			return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	}
	return 0;
}
