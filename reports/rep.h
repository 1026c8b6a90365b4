/*
 * rep.h -- reports for people who decide: cost per token, time to train, capacity, serving
 * cost, hardware comparison, scaling and confidence, as HTML, Markdown and CSV with charts
 * drawn by gnuplot.
 *
 * A report reads the JSON documents that 'plan', 'simulate' and 'validate' print with --json
 * (and Chrome traces of 'simulate train --trace'); it never simulates.  The only arithmetic it
 * does is on numbers those documents carry: time to train a number of tokens at a document's
 * throughput, and cost under each price a plan lists (planner/cost.c, the planner's own
 * arithmetic).  Every number it shows keeps a link to where it came from: the document and
 * JSON pointer of a number read, or the formula of a number derived.
 *
 * rep_build reads and checks the documents and builds the report in memory (tables, charts'
 * data and scripts, text); rep_write renders it into a directory that appears complete or not
 * at all.  A rep_report is owned by the caller (rep_free).  Nothing here prints or exits.
 */
#ifndef REP_H
#define REP_H

#include <stdbool.h>
#include <stddef.h>

enum {
	REP_HTML = 1 << 0, /* report.html: one self-contained page, charts embedded */
	REP_MD = 1 << 1,   /* report.md with the charts beside it in charts/ */
	REP_CSV = 1 << 2,  /* tables/<id>.csv: every table */
	REP_ALL = REP_HTML | REP_MD | REP_CSV,
};

typedef struct rep_opts {
	const char *title;    /* NULL: "<model>: training and serving report" */
	const char *currency; /* ISO 4217 code the money is shown in; "USD" */
	double per_usd;       /* units of `currency` per US dollar; 1 for USD */
	double tokens;        /* tokens for "time to train" of layouts and simulations; 1e12 */
	unsigned formats;     /* REP_* bits; REP_ALL */
	const char *gnuplot;  /* the gnuplot program; NULL: $PARAPLAN_GNUPLOT, else the one found
			       * at configure time, else "gnuplot" on PATH; "" draws no charts */
} rep_opts;

void rep_opts_init(rep_opts *o);
/* The gnuplot program the options lead to, in buf; NULL when there is none. */
const char *rep_gnuplot(const rep_opts *o, char *buf, size_t n);
/* Parses --currency: "USD", or "CODE:RATE" with RATE units of CODE per US dollar (another
 * currency needs its rate: the database holds dollars and no exchange rates). */
int rep_parse_currency(const char *s, rep_opts *o, char *err, size_t errlen);
/* Parses --format: html, md, csv or all. */
int rep_parse_format(const char *s, unsigned *out);

typedef struct rep_report rep_report;

/* Reads the documents (paths of JSON results or training traces), checks them (a malformed
 * document, a missing or mistyped field, documents about different models, a trace that
 * belongs to none of the simulations given: PP_EINPUT, naming the file and the field) and
 * builds the report.  A path given twice is PP_EUSAGE. */
int rep_build(const char *const *paths, size_t n, const rep_opts *o, rep_report **out, char *err, size_t errlen);
void rep_free(rep_report *r);

/* Renders the report into dir: report.html, report.md, tables/, charts/ and manifest.txt
 * (the list of files).  Everything is written into a fresh directory beside dir and renamed
 * into place at the end, so dir holds either the whole report or what it held before.  An
 * existing dir is replaced only when it is empty or an earlier report (it has manifest.txt).
 * Charts are drawn by running gnuplot on the scripts in charts/; without gnuplot the report
 * has tables only and says so.  *notes (may be NULL) receives the notices the report shows,
 * one per line, malloc'd. */
int rep_write(rep_report *r, const char *dir, char **notes, char *err, size_t errlen);

/* ---- reading a built report (tests, other front ends) -------------------------------------- */

size_t rep_ntables(const rep_report *r);
/* The table with this id, or -1.  A document's tables are "d<N>-<name>" (N: its place among
 * the inputs, from 1: "d2-cost"); tables across documents have a bare name ("comparison"). */
int rep_table_find(const rep_report *r, const char *id);
const char *rep_table_id(const rep_report *r, size_t t);
size_t rep_table_rows(const rep_report *r, size_t t);
size_t rep_table_cols(const rep_report *r, size_t t);
const char *rep_table_key(const rep_report *r, size_t t, size_t col); /* the CSV header */
/* A cell: its text for text cells (returns true), or its value in the CSV's unit (false). */
bool rep_table_cell(const rep_report *r, size_t t, size_t row, size_t col, const char **text, double *value);

size_t rep_ncharts(const rep_report *r);
const char *rep_chart_name(const rep_report *r, size_t c);
int rep_chart_series(const rep_report *r, size_t c);
/* The gnuplot script and the data file of chart c as rep_write writes them (malloc'd; NULL when
 * out of memory), and the check every script passes before it is written or run (0: safe; else
 * -1 and the line at fault: a backquote, a macro, a string with a byte not escaped). */
char *rep_chart_script(const rep_report *r, size_t c);
char *rep_chart_data(const rep_report *r, size_t c);
int rep_gp_check(const char *script, size_t len, int *line);

#endif
