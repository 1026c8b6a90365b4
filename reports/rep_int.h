/*
 * rep_int.h -- private to reports/: the documents read, the report's blocks (headings, text
 * with numbers, tables, charts), and the helpers the builders share.
 *
 * Errors while building are sticky: the first one is kept in the report (rc, err) and later
 * calls become no-ops that return zeros, so a builder reads straight through and the caller
 * checks once at the end.  Nothing is written before the whole report is built.
 */
#ifndef REP_INT_H
#define REP_INT_H

#include "common/pp.h"
#include "reports/rep.h"

#include <stdarg.h>

struct cJSON;

typedef enum rep_kind { K_PLAN_TRAIN, K_CAPACITY, K_PLAN_SERVE, K_TRAIN, K_SERVE, K_VALIDATE, K_TRACE, K_NKINDS } rep_kind;

/* ---- traces -------------------------------------------------------------------------------- */

/* Categories of a training trace's ops, as drawn in the timeline. */
enum {
	G_FWD, G_BWD, G_WGRAD, G_RECOMP, G_OPT, G_OTHER, /* on a rank's compute row */
	G_TP, G_PP, G_DP,                                 /* on its communication row */
	G_NCATS
};
extern const char *const rep_gantt_cat[G_NCATS];

#define REP_GANTT_RANKS 16 /* ranks drawn at most (full-mode traces have one per GPU) */

typedef struct rep_bar {
	int row; /* 2 x shown rank + 0 (compute) or 1 (communication) */
	int cat;
	double t0, t1; /* seconds */
} rep_bar;

typedef struct rep_trace {
	int nranks, shown;
	int *pids;                /* the ranks' process ids, ascending */
	double end_s;             /* end of the last op: the step time */
	size_t events;            /* complete ("X") events read */
	rep_bar *bars;            /* merged: neighbours closer than a pixel become one bar */
	size_t nbars;
	double *busy_s;           /* per rank shown: time its compute stream worked (ops on one
				   * stream never overlap, so their durations add up) */
} rep_trace;

/* ---- documents ----------------------------------------------------------------------------- */

typedef struct rep_doc {
	char *path;
	const char *name; /* base name, for people */
	int no;           /* place among the inputs, from 1 */
	rep_kind kind;
	int version;        /* of its format: N of "schema": "paraplan.<kind>/N" (1 without one) */
	struct cJSON *json; /* NULL for traces */
	rep_trace *trace;
	int trace_of;       /* a trace: the simulation (doc index) it belongs to, or -1 */
	int trace_doc;      /* a simulation: its trace (doc index), or -1 */
} rep_doc;

extern const char *const rep_kind_label[K_NKINDS];

/* ---- cells, tables, charts, blocks --------------------------------------------------------- */

typedef enum rep_fmt {
	F_TEXT,
	F_INT,   /* 1,234 */
	F_NUM,   /* 4 significant digits, never fewer integer digits */
	F_NUM3,  /* 3 significant digits */
	F_COUNT, /* 15T, 2.5B, 120M, 45,000 */
	F_PCT,   /* a fraction shown as 69.0% */
	F_MONEY, /* US dollars, shown in the report's currency */
	F_SEC,   /* seconds shown in s, ms or us */
	F_GIB,   /* bytes shown in GiB */
} rep_fmt;

typedef struct rep_cell {
	rep_fmt fmt;
	char *text;  /* F_TEXT (also a number's "-" when it is absent) */
	double v;    /* the value in the document's unit: USD, s, bytes, fractions */
	int doc;     /* the document read (its no), 0 for a derived number */
	char *ptr;   /* its JSON pointer, or for a derived number its formula */
} rep_cell;

typedef struct rep_table {
	char id[48];
	char *title;
	char *note;   /* printed under the table: what the numbers assume */
	int ncols;
	char **head;  /* for people */
	char **key;   /* CSV header */
	bool kv;      /* quantity | value | basis: the CSV adds the value's unit */
	rep_cell *cells; /* row-major */
	size_t nrows, cap;
} rep_table;

typedef struct rep_chart {
	char name[48]; /* file stem in charts/ */
	char *title;
	char *caption;
	pp_str dat;    /* one block per series: "# series: NAME", rows, two blank lines */
	pp_str gp;     /* plot commands; the terminal and output are set around them */
	int nseries;
	char series[16][48]; /* the first 16 series' names, for the plot's key */
	int width, height; /* pixels of the PNG; the SVG is drawn at 80% */
	bool drawn;
	char *svg;     /* the drawn SVG, for embedding */
	size_t svglen;
} rep_chart;

typedef enum rep_btype { B_H2, B_H3, B_P, B_LI, B_NOTE, B_TABLE, B_CHART } rep_btype;

typedef struct rep_block {
	rep_btype type;
	char anchor[48];    /* headings */
	rep_cell *runs;     /* rich text: text and numbers */
	size_t nruns, cap;
	size_t index;       /* B_TABLE, B_CHART */
} rep_block;

struct rep_report {
	rep_opts o;
	char currency[8];
	char *title;
	const char *model;
	rep_doc *docs;
	size_t ndocs;
	rep_block *blocks;
	size_t nblocks, bcap;
	rep_table *tables;
	size_t ntables, tcap;
	rep_chart *charts;
	size_t ncharts, ccap;
	pp_str notices; /* one per line */
	int rc;
	char err[1024];
};

/* errors (sticky) */
void rep_fail(rep_report *r, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
bool rep_ok(const rep_report *r);

/* documents (doc.c) */
int rep_doc_load(rep_doc *d, char *err, size_t errlen);
void rep_doc_free(rep_doc *d);
/* JSON access by pointer ("/counts/0/gpus"); a missing or mistyped field fails the report with
 * the file and the pointer. */
const struct cJSON *rep_at(const rep_doc *d, const char *ptr);
bool rep_has(const rep_doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The 80% interval at `at`/`key` ("/deployments/2", "ttft_p99_interval_s"): true with its ends
 * when the document has one; a low end past the high end fails the report. */
bool rep_interval(rep_report *r, const rep_doc *d, const char *at, const char *key, double *lo, double *hi);
double rep_num(rep_report *r, const rep_doc *d, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
const char *rep_str(rep_report *r, const rep_doc *d, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
bool rep_bool(rep_report *r, const rep_doc *d, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int rep_len(rep_report *r, const rep_doc *d, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

char *rep_dupf(const char *fmt, ...) __attribute__((format(printf, 1, 2))); /* malloc'd */

/* cells */
rep_cell rep_text(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
rep_cell rep_src(rep_report *r, const rep_doc *d, rep_fmt f, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
rep_cell rep_calc(double v, rep_fmt f, const char *formula);
rep_cell rep_none(void); /* an absent number: "-" */
void rep_cell_free(rep_cell *c);
/* The cell for people: its text, the factor from its value to the number shown. */
void rep_cell_show(const rep_report *r, const rep_cell *c, pp_str *out, double *scale);
/* The cell in a CSV: text, or the value (money in the report's currency) with 17 digits. */
void rep_cell_csv(const rep_report *r, const rep_cell *c, pp_str *out);
const char *rep_fmt_unit(const rep_report *r, rep_fmt f);

/* tables */
size_t rep_table_new(rep_report *r, const char *id, const char *title, int ncols, const char *const *head,
		     const char *const *key);
size_t rep_kv_new(rep_report *r, const char *id, const char *title);
void rep_row(rep_report *r, size_t t, const rep_cell *cells); /* ncols cells, owned by the table */
void rep_kv(rep_report *r, size_t t, const char *quantity, rep_cell value, const char *basis, ...)
	__attribute__((format(printf, 5, 6)));
void rep_table_note(rep_report *r, size_t t, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* blocks */
void rep_heading(rep_report *r, rep_btype level, const char *anchor, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
rep_block *rep_para(rep_report *r, rep_btype type); /* B_P, B_LI or B_NOTE */
void rep_say(rep_block *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rep_put(rep_block *b, rep_cell c);
void rep_show_table(rep_report *r, size_t t);
void rep_notice(rep_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* charts (chart.c) */
rep_chart *rep_chart_new(rep_report *r, const char *name, const char *title, const char *caption);
void rep_series(rep_chart *c, const char *name); /* starts a series */
/* Appends one data line of n numbers; rep_chart_row(c, x, y, ...) gives them as a list. */
void rep_chart_vals(rep_chart *c, const double *v, size_t n);
#define rep_chart_row(c, ...) \
	rep_chart_vals((c), (const double[]){__VA_ARGS__}, sizeof((const double[]){__VA_ARGS__}) / sizeof(double))
void rep_show_chart(rep_report *r, const rep_chart *c);
/* Draws every chart in dir/charts with gnuplot (NULL: writes their data and scripts only). */
int rep_draw(rep_report *r, const char *dir, const char *gnuplot, char *err, size_t errlen);
/* Text from documents reaches gnuplot only through these two, never as script text: gnuplot
 * runs `...` inside double-quoted strings (command substitution), expands @macros outside
 * strings, ends a comment at a newline and continues it after a trailing backslash.
 * rep_gp_quote writes a double-quoted string in which every byte but letters, digits, the
 * blank and .,:;-_+=/()[]%!?<>* is an octal escape (\140 for a backquote, \042 for a quote,
 * UTF-8 byte by byte), so no quoting rule can see the text; control characters and invalid
 * UTF-8 are first shown as escapes (pp_str_add_printable).  rep_gp_comment writes the rest of
 * a comment line: printable, with no backslash or backquote.  A script is checked before it is
 * written (rep_gp_check). */
void rep_gp_quote(pp_str *s, const char *text); /* a gnuplot string literal */
void rep_gp_comment(pp_str *s, const char *text);
/* rep_gp_check (rep.h) holds every script to these rules before it is written: no backquote
 * anywhere, comments of printable text, strings of safe bytes and escapes only, and outside
 * strings and comments only the characters of our own commands (no @, no $ but a column). */
/* One plot element per series from..to-1 of index k: "'' index k using USING with WITH lt LT
 * title NAME", LT the series' number plus lt0; `first` starts the plot command with the file. */
void rep_gp_each(rep_chart *c, int from, int to, const char *using, const char *with, int lt0, bool first);

/* builders (build.c, train.c, serve.c) */
void rep_build_all(rep_report *r);
const char *rep_ck(const rep_report *r, const char *pattern); /* "%s_per_gpu_hour" -> "usd_per_gpu_hour" */
void rep_id(char *buf, size_t n, const rep_doc *d, const char *name); /* "d2-cost" */
const char *rep_yes_no(bool b);
/* A layout in words from the configuration object at the pointer cfg. */
void rep_layout(rep_report *r, const rep_doc *d, const char *cfg, pp_str *s);

/* Cost per million tokens of a training document's cheapest and dearest rental and of owning
 * (own < 0: no purchase price). */
typedef struct rep_costs {
	bool any;
	double rent_lo, rent_hi, own;
} rep_costs;

rep_costs rep_train_costs(rep_report *r, const rep_doc *d, const char *perf, double tokens, bool show);
void rep_sec_plan_train(rep_report *r, rep_doc *d, double tokens);
void rep_sec_sim_train(rep_report *r, rep_doc *d, double tokens);
void rep_sec_timeline(rep_report *r, const rep_doc *trace, const rep_doc *sim); /* sim may be NULL */
void rep_sec_capacity(rep_report *r, rep_doc *d);
void rep_sec_plan_serve(rep_report *r, rep_doc *d);
void rep_sec_sim_serve(rep_report *r, rep_doc *d);
void rep_sec_sweeps(rep_report *r);

/* renderers (render.c) */
void rep_render_html(const rep_report *r, pp_str *out);
void rep_render_md(const rep_report *r, pp_str *out);
void rep_render_csv(const rep_report *r, size_t t, pp_str *out);

#endif
