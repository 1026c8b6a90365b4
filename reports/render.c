/*
 * render.c -- the report as HTML (one self-contained page: styles inline, charts embedded as
 * SVG data, readable offline and in print), as Markdown (charts beside it as PNG files) and as
 * CSV (one file per table).
 *
 * The HTML is also well-formed XML (every element closed, every attribute quoted, no named
 * entities), so a strict parser can check it.  Each number carries its provenance in data
 * attributes: data-v (the value in the document's unit, every digit), data-k (the factor from
 * that unit to the number shown) and data-src ("N:/json/pointer" of input N) or data-calc (the
 * formula of a derived number).  A test reads them back against the documents.
 */
#include "config.h"
#include "common/csv.h"
#include "reports/rep_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
esc(pp_str *o, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': pp_str_add(o, "&amp;"); break;
		case '<': pp_str_add(o, "&lt;"); break;
		case '>': pp_str_add(o, "&gt;"); break;
		case '"': pp_str_add(o, "&quot;"); break;
		case '\'': pp_str_add(o, "&#39;"); break;
		default:
			if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
				break; /* control characters are not allowed in XML */
			pp_str_addn(o, s, 1);
		}
	}
}

static void
base64(pp_str *o, const unsigned char *p, size_t n)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char q[4];
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
		q[0] = tab[v >> 18 & 63];
		q[1] = tab[v >> 12 & 63];
		q[2] = i + 1 < n ? tab[v >> 6 & 63] : '=';
		q[3] = i + 2 < n ? tab[v & 63] : '=';
		pp_str_addn(o, q, 4);
	}
}

/* %.17g, shortest that reads back */
static void
exact(pp_str *o, double v)
{
	char buf[40];
	for (int p = 15; p <= 17; p++) {
		snprintf(buf, sizeof buf, "%.*g", p, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	pp_str_add(o, buf);
}

static void
html_cell(const rep_report *r, const rep_cell *c, const char *tag, pp_str *o)
{
	pp_str text = {0};
	double k = 1.0;
	rep_cell_show(r, c, &text, &k);
	if (c->fmt == F_TEXT) {
		/* short text stays on one line; long text (sources, reasons) wraps */
		if (!strcmp(tag, "td") && !strcmp(text.buf ? text.buf : "", "-"))
			pp_str_addf(o, "<%s class=\"na\">", tag); /* an absent number, aligned as one */
		else if (!strcmp(tag, "td") && text.len > 0 && text.len <= 24)
			pp_str_addf(o, "<%s class=\"s\">", tag);
		else
			pp_str_addf(o, "<%s>", tag);
	} else {
		pp_str_addf(o, "<%s class=\"n\" data-v=\"", tag);
		exact(o, c->v);
		pp_str_add(o, "\" data-k=\"");
		exact(o, k);
		if (c->doc > 0) {
			pp_str_addf(o, "\" data-src=\"%d:", c->doc);
			esc(o, c->ptr ? c->ptr : "");
		} else {
			pp_str_add(o, "\" data-calc=\"");
			esc(o, c->ptr ? c->ptr : "");
		}
		pp_str_add(o, "\">");
	}
	esc(o, text.buf ? text.buf : "");
	pp_str_addf(o, "</%s>", tag);
	pp_str_free(&text);
}

static void
html_runs(const rep_report *r, const rep_block *b, pp_str *o)
{
	for (size_t i = 0; i < b->nruns; i++) {
		if (b->runs[i].fmt == F_TEXT)
			esc(o, b->runs[i].text ? b->runs[i].text : "");
		else
			html_cell(r, &b->runs[i], "span", o);
	}
}

static const char css[] =
	":root{--ink:#1d232b;--mute:#5b6673;--line:#d9dee4;--bg:#f6f8fa;--acc:#1f5fa8}\n"
	"*{box-sizing:border-box}\n"
	"body{font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;color:var(--ink);margin:0;line-height:1.45;"
	"font-size:15px}\n"
	"header{background:#12324f;color:#fff;padding:28px 40px 20px}\n"
	"header h1{margin:0 0 6px;font-size:26px;font-weight:600}\n"
	"header p{margin:0;color:#c9d6e3;font-size:14px}\n"
	"main{max-width:1180px;margin:0 auto;padding:8px 40px 40px}\n"
	"nav.toc{max-width:1180px;margin:0 auto;padding:14px 40px 0;font-size:14px}\n"
	"nav.toc ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:6px 18px}\n"
	"nav.toc a{color:var(--acc);text-decoration:none}\n"
	"h2{font-size:21px;margin:34px 0 10px;padding-bottom:6px;border-bottom:2px solid var(--line)}\n"
	"h3{font-size:17px;margin:26px 0 8px}\n"
	"p{margin:8px 0}\n"
	"ul.summary li{margin:4px 0}\n"
	".notice{max-width:1180px;margin:14px auto 0;padding:0 40px}\n"
	".notice p{background:#fff6db;border-left:4px solid #e0a800;padding:8px 12px;margin:6px 0}\n"
	"p.note{color:var(--mute);background:var(--bg);padding:8px 12px;border-radius:4px}\n"
	".tw{overflow-x:auto;margin:12px 0 4px}\n"
	"table{border-collapse:collapse;font-size:13px;min-width:40%}\n"
	"caption{text-align:left;font-weight:600;padding:0 0 6px;font-size:14px}\n"
	"th,td{border-bottom:1px solid var(--line);padding:5px 10px;text-align:left;vertical-align:top}\n"
	"thead th{background:var(--bg);border-bottom:2px solid var(--line);white-space:nowrap}\n"
	"td.n{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}\n"
	"td.s{white-space:nowrap}\n"
	"td.na{text-align:right;color:var(--mute)}\n"
	"table.wide{font-size:12px}\n"
	"table.wide th,table.wide td{padding:4px 6px}\n"
	"table.wide thead th{white-space:normal;vertical-align:bottom}\n"
	"tbody tr:nth-child(even){background:#fbfcfd}\n"
	"p.tnote{color:var(--mute);font-size:12.5px;margin:2px 0 14px}\n"
	"p.tnote a{color:var(--acc)}\n"
	"span.n{font-weight:600;white-space:nowrap}\n"
	"figure{margin:16px 0 20px;break-inside:avoid}\n"
	"figure img{max-width:100%;height:auto;border:1px solid var(--line);border-radius:4px}\n"
	"figcaption{color:var(--mute);font-size:13px;margin-top:4px}\n"
	"footer{color:var(--mute);font-size:12px;max-width:1180px;margin:0 auto;padding:0 40px 30px}\n"
	"@media print{\n"
	" @page{size:A4;margin:14mm}\n"
	" body{font-size:10.5pt}\n"
	" header{background:none;color:#000;padding:0 0 8px;border-bottom:2px solid #000}\n"
	" header p{color:#333}\n"
	" nav.toc{display:none}\n"
	" main,.notice,footer{padding:0;max-width:none}\n"
	" .tw{overflow:visible}\n"
	" table{font-size:8pt;break-inside:auto}\n"
	" table.wide{font-size:6.5pt}\n"
	" tr,figure,caption{break-inside:avoid}\n"
	" thead{display:table-header-group}\n"
	" h2,h3{break-after:avoid}\n"
	" a{color:#000;text-decoration:none}\n"
	"}\n";

static void
html_table(const rep_report *r, const rep_table *t, pp_str *o)
{
	pp_str_add(o, t->ncols > 11 ? "<div class=\"tw\"><table class=\"wide\" id=\"t-" : "<div class=\"tw\"><table id=\"t-");
	esc(o, t->id);
	pp_str_add(o, "\"><caption>");
	esc(o, t->title);
	pp_str_add(o, "</caption>\n<thead><tr>");
	for (int c = 0; c < t->ncols; c++) {
		pp_str_add(o, "<th>");
		esc(o, t->head[c]);
		pp_str_add(o, "</th>");
	}
	pp_str_add(o, "</tr></thead>\n<tbody>\n");
	for (size_t row = 0; row < t->nrows; row++) {
		pp_str_add(o, "<tr>");
		for (int c = 0; c < t->ncols; c++)
			html_cell(r, &t->cells[row * (size_t)t->ncols + (size_t)c], "td", o);
		pp_str_add(o, "</tr>\n");
	}
	pp_str_add(o, "</tbody></table></div>\n");
	if (t->note != NULL || (r->o.formats & REP_CSV)) {
		pp_str_add(o, "<p class=\"tnote\">");
		if (t->note != NULL)
			esc(o, t->note);
		if (r->o.formats & REP_CSV) {
			pp_str_add(o, t->note ? " " : "");
			pp_str_add(o, "Data: <a href=\"tables/");
			esc(o, t->id);
			pp_str_add(o, ".csv\">tables/");
			esc(o, t->id);
			pp_str_add(o, ".csv</a>");
		}
		pp_str_add(o, "</p>\n");
	}
}

static void
html_chart(const rep_report *r, const rep_chart *c, pp_str *o)
{
	(void)r;
	if (!c->drawn) {
		pp_str_add(o, "<p class=\"note\">Chart not drawn: ");
		esc(o, c->title);
		pp_str_add(o, ". Its data and gnuplot script are in charts/");
		esc(o, c->name);
		pp_str_add(o, ".dat and .gp.</p>\n");
		return;
	}
	pp_str_add(o, "<figure id=\"chart-");
	esc(o, c->name);
	pp_str_addf(o, "\"><img width=\"%d\" height=\"%d\" alt=\"", c->width, c->height);
	esc(o, c->title);
	pp_str_add(o, "\" src=\"data:image/svg+xml;base64,");
	base64(o, (const unsigned char *)c->svg, c->svglen);
	pp_str_add(o, "\"/>\n<figcaption>");
	esc(o, c->caption);
	pp_str_add(o, "</figcaption></figure>\n");
}

void
rep_render_html(const rep_report *r, pp_str *o)
{
	pp_str_add(o, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
		      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
		      "<meta name=\"generator\" content=\"paraplan " PACKAGE_VERSION "\"/>\n<title>");
	esc(o, r->title);
	pp_str_add(o, "</title>\n<style>\n");
	pp_str_add(o, css);
	pp_str_add(o, "</style>\n</head>\n<body>\n<header><h1>");
	esc(o, r->title);
	pp_str_add(o, "</h1><p>");
	esc(o, r->model);
	pp_str_addf(o, " &#183; %zu document%s &#183; money in %s &#183; paraplan " PACKAGE_VERSION "</p></header>\n",
		    r->ndocs, r->ndocs == 1 ? "" : "s", r->currency);
	if (r->notices.len > 0) {
		pp_str_add(o, "<div class=\"notice\">\n");
		const char *p = r->notices.buf;
		while (*p) {
			size_t n = strcspn(p, "\n");
			pp_str_add(o, "<p>Notice: ");
			pp_str s = {0};
			pp_str_addn(&s, p, n);
			esc(o, s.buf ? s.buf : "");
			pp_str_free(&s);
			pp_str_add(o, "</p>\n");
			p += n + (p[n] == '\n');
		}
		pp_str_add(o, "</div>\n");
	}
	pp_str_add(o, "<nav class=\"toc\"><ul>");
	for (size_t i = 0; i < r->nblocks; i++)
		if (r->blocks[i].type == B_H2) {
			pp_str_add(o, "<li><a href=\"#");
			esc(o, r->blocks[i].anchor);
			pp_str_add(o, "\">");
			html_runs(r, &r->blocks[i], o);
			pp_str_add(o, "</a></li>");
		}
	pp_str_add(o, "</ul></nav>\n<main>\n");
	bool in_section = false, in_list = false;
	for (size_t i = 0; i < r->nblocks; i++) {
		const rep_block *b = &r->blocks[i];
		if (in_list && b->type != B_LI) {
			pp_str_add(o, "</ul>\n");
			in_list = false;
		}
		switch (b->type) {
		case B_H2:
			if (in_section)
				pp_str_add(o, "</section>\n");
			pp_str_add(o, "<section id=\"");
			esc(o, b->anchor);
			pp_str_add(o, "\">\n<h2>");
			html_runs(r, b, o);
			pp_str_add(o, "</h2>\n");
			in_section = true;
			break;
		case B_H3:
			pp_str_add(o, "<h3 id=\"");
			esc(o, b->anchor);
			pp_str_add(o, "\">");
			html_runs(r, b, o);
			pp_str_add(o, "</h3>\n");
			break;
		case B_P:
		case B_NOTE:
			pp_str_add(o, b->type == B_NOTE ? "<p class=\"note\">" : "<p>");
			html_runs(r, b, o);
			pp_str_add(o, "</p>\n");
			break;
		case B_LI:
			if (!in_list) {
				pp_str_add(o, "<ul class=\"summary\">\n");
				in_list = true;
			}
			pp_str_add(o, "<li>");
			html_runs(r, b, o);
			pp_str_add(o, "</li>\n");
			break;
		case B_TABLE:
			html_table(r, &r->tables[b->index], o);
			break;
		case B_CHART:
			html_chart(r, &r->charts[b->index], o);
			break;
		}
	}
	if (in_list)
		pp_str_add(o, "</ul>\n");
	if (in_section)
		pp_str_add(o, "</section>\n");
	pp_str_add(o, "</main>\n<footer>Made by 'paraplan report' from the documents listed under Inputs. Every number is "
		      "a prediction of the simulator and cost model, not a measurement.</footer>\n</body>\n</html>\n");
}

/* ---- Markdown ------------------------------------------------------------------------------ */

static void
md_text(pp_str *o, const char *s, bool in_table)
{
	for (; *s; s++) {
		if (*s == '\n' || *s == '\r')
			pp_str_add(o, " ");
		else if (in_table && *s == '|')
			pp_str_add(o, "\\|");
		else if (*s == '*' || *s == '_' || *s == '`' || *s == '[' || *s == ']' || *s == '<' || *s == '\\')
			pp_str_addf(o, "\\%c", *s);
		else
			pp_str_addn(o, s, 1);
	}
}

static void
md_cell(const rep_report *r, const rep_cell *c, bool in_table, pp_str *o)
{
	pp_str text = {0};
	rep_cell_show(r, c, &text, NULL);
	md_text(o, text.buf ? text.buf : "", in_table);
	pp_str_free(&text);
}

static void
md_runs(const rep_report *r, const rep_block *b, pp_str *o)
{
	for (size_t i = 0; i < b->nruns; i++) {
		bool num = b->runs[i].fmt != F_TEXT;
		if (num)
			pp_str_add(o, "**");
		md_cell(r, &b->runs[i], false, o);
		if (num)
			pp_str_add(o, "**");
	}
}

void
rep_render_md(const rep_report *r, pp_str *o)
{
	pp_str_add(o, "# ");
	md_text(o, r->title, false);
	pp_str_add(o, "\n\n_");
	md_text(o, r->model, false);
	pp_str_addf(o, " · %zu document%s · money in %s · paraplan " PACKAGE_VERSION "_\n\n", r->ndocs,
		    r->ndocs == 1 ? "" : "s", r->currency);
	if (r->notices.len > 0) {
		const char *p = r->notices.buf;
		while (*p) {
			size_t n = strcspn(p, "\n");
			pp_str s = {0};
			pp_str_addn(&s, p, n);
			pp_str_add(o, "> **Notice:** ");
			md_text(o, s.buf ? s.buf : "", false);
			pp_str_add(o, "\n>\n");
			pp_str_free(&s);
			p += n + (p[n] == '\n');
		}
		o->len -= 2; /* the last ">\n" */
		o->buf[o->len] = '\0';
		pp_str_add(o, "\n");
	}
	bool in_list = false;
	for (size_t i = 0; i < r->nblocks; i++) {
		const rep_block *b = &r->blocks[i];
		if (in_list && b->type != B_LI) {
			pp_str_add(o, "\n");
			in_list = false;
		}
		switch (b->type) {
		case B_H2:
		case B_H3:
			pp_str_add(o, b->type == B_H2 ? "## " : "### ");
			md_runs(r, b, o);
			pp_str_add(o, "\n\n");
			break;
		case B_P:
			md_runs(r, b, o);
			pp_str_add(o, "\n\n");
			break;
		case B_NOTE:
			pp_str_add(o, "> ");
			md_runs(r, b, o);
			pp_str_add(o, "\n\n");
			break;
		case B_LI:
			pp_str_add(o, "- ");
			md_runs(r, b, o);
			pp_str_add(o, "\n");
			in_list = true;
			break;
		case B_TABLE: {
			const rep_table *t = &r->tables[b->index];
			pp_str_add(o, "**");
			md_text(o, t->title, false);
			pp_str_add(o, "**\n\n|");
			for (int c = 0; c < t->ncols; c++) {
				pp_str_add(o, " ");
				md_text(o, t->head[c], true);
				pp_str_add(o, " |");
			}
			pp_str_add(o, "\n|");
			for (int c = 0; c < t->ncols; c++) {
				bool num = t->nrows > 0 && t->cells[(size_t)c].fmt != F_TEXT;
				pp_str_add(o, num ? " ---: |" : " --- |");
			}
			pp_str_add(o, "\n");
			for (size_t row = 0; row < t->nrows; row++) {
				pp_str_add(o, "|");
				for (int c = 0; c < t->ncols; c++) {
					pp_str_add(o, " ");
					md_cell(r, &t->cells[row * (size_t)t->ncols + (size_t)c], true, o);
					pp_str_add(o, " |");
				}
				pp_str_add(o, "\n");
			}
			pp_str_add(o, "\n");
			if (t->note != NULL) {
				pp_str_add(o, "_");
				md_text(o, t->note, false);
				pp_str_add(o, "_");
			}
			if (r->o.formats & REP_CSV)
				pp_str_addf(o, "%s[CSV](tables/%s.csv)", t->note ? " " : "", t->id);
			if (t->note != NULL || (r->o.formats & REP_CSV))
				pp_str_add(o, "\n\n");
			break;
		}
		case B_CHART: {
			const rep_chart *c = &r->charts[b->index];
			if (c->drawn) {
				pp_str_add(o, "![");
				md_text(o, c->title, false);
				pp_str_addf(o, "](charts/%s.png)\n\n_", c->name);
				md_text(o, c->caption, false);
				pp_str_addf(o, "_ (vector: [charts/%s.svg](charts/%s.svg))\n\n", c->name, c->name);
			} else {
				pp_str_add(o, "> Chart not drawn: ");
				md_text(o, c->title, false);
				pp_str_addf(o, ". Data and gnuplot script: charts/%s.dat, charts/%s.gp\n\n", c->name, c->name);
			}
			break;
		}
		}
	}
	if (in_list)
		pp_str_add(o, "\n");
}

/* ---- CSV ----------------------------------------------------------------------------------- */

void
rep_render_csv(const rep_report *r, size_t ti, pp_str *o)
{
	size_t nc = rep_table_cols(r, ti);
	const char **f = calloc(nc, sizeof *f);
	pp_str *cells = calloc(nc, sizeof *cells);
	if (f == NULL || cells == NULL) {
		free(f);
		free(cells);
		o->oom = true;
		return;
	}
	for (size_t c = 0; c < nc; c++)
		f[c] = rep_table_key(r, ti, c);
	pp_csv_row(o, f, nc);
	const rep_table *t = &r->tables[ti];
	for (size_t row = 0; row < t->nrows; row++) {
		for (size_t c = 0; c < nc; c++) {
			memset(&cells[c], 0, sizeof cells[c]);
			const char *text;
			double v;
			if (rep_table_cell(r, ti, row, c, &text, &v)) {
				pp_str_add(&cells[c], text);
			} else {
				rep_cell tmp = {.fmt = F_NUM, .v = v};
				rep_cell_csv(r, &tmp, &cells[c]);
			}
			f[c] = cells[c].buf ? cells[c].buf : "";
		}
		pp_csv_row(o, f, nc);
		for (size_t c = 0; c < nc; c++)
			pp_str_free(&cells[c]);
	}
	free(f);
	free(cells);
}
