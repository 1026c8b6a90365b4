/*
 * table.c -- the report's pieces: cells that remember where their number came from, how a
 * number is shown (one stable format per kind of quantity, so a test can read it back), tables,
 * headings and paragraphs.
 *
 * A number is kept in the unit of the document it came from (dollars, seconds, bytes,
 * fractions) and converted only when shown: money into the report's currency, seconds into
 * s/ms/us, bytes into GiB, fractions into percent.  The CSV keeps the document's unit (money in
 * the report's currency) with every digit.
 */
#include "config.h"
#include "reports/rep_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
rep_fail(rep_report *r, int code, const char *fmt, ...)
{
	if (r->rc != 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->err, sizeof r->err, fmt, ap);
	va_end(ap);
	r->rc = code;
}

bool
rep_ok(const rep_report *r)
{
	return r->rc == 0;
}

static char *
vdup(const char *fmt, va_list ap)
{
	pp_str s = {0};
	pp_str_vaddf(&s, fmt, ap);
	return pp_str_detach(&s);
}

/* ---- cells --------------------------------------------------------------------------------- */

rep_cell
rep_text(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rep_cell c = {.fmt = F_TEXT, .text = vdup(fmt, ap)};
	va_end(ap);
	return c;
}

rep_cell
rep_src(rep_report *r, const rep_doc *d, rep_fmt f, const char *fmt, ...)
{
	char ptr[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ptr, sizeof ptr, fmt, ap);
	va_end(ap);
	double v = rep_num(r, d, "%s", ptr);
	rep_cell c = {.fmt = f, .v = v, .doc = d->no, .ptr = strdup(ptr)};
	return c;
}

rep_cell
rep_calc(double v, rep_fmt f, const char *formula)
{
	rep_cell c = {.fmt = f, .v = v, .doc = 0, .ptr = strdup(formula)};
	return c;
}

rep_cell
rep_none(void)
{
	return rep_text("-");
}

void
rep_cell_free(rep_cell *c)
{
	free(c->text);
	free(c->ptr);
	c->text = c->ptr = NULL;
}

/* "1234567.891" -> "1,234,567.891" */
static void
grouped(pp_str *out, const char *num)
{
	const char *p = num;
	if (*p == '-')
		pp_str_addn(out, p++, 1);
	size_t ndig = strspn(p, "0123456789");
	for (size_t i = 0; i < ndig; i++) {
		if (i > 0 && (ndig - i) % 3 == 0)
			pp_str_add(out, ",");
		pp_str_addn(out, p + i, 1);
	}
	pp_str_add(out, p + ndig);
}

/* `digits` significant digits, at least `min_dec` decimals, never fewer integer digits. */
static void
sig(pp_str *out, double x, int digits, int min_dec)
{
	int dec = min_dec;
	if (x != 0) {
		int e = (int)floor(log10(fabs(x)));
		if (digits - 1 - e > dec)
			dec = digits - 1 - e;
	}
	if (dec > 12)
		dec = 12;
	char buf[64];
	snprintf(buf, sizeof buf, "%.*f", dec, x);
	/* rounding may carry into one more digit (0.9999 -> "1.000"): one decimal fewer then */
	if (x != 0 && dec > min_dec && dec > 0) {
		double shown = fabs(strtod(buf, NULL));
		int e = (int)floor(log10(fabs(x)));
		if (shown >= pow(10.0, e + 1))
			snprintf(buf, sizeof buf, "%.*f", --dec, x);
	}
	if (!strncmp(buf, "-0", 2) && strspn(buf + 1, "0.") == strlen(buf + 1))
		memmove(buf, buf + 1, strlen(buf)); /* no "-0.00" */
	grouped(out, buf);
}

/* M, B, T suffixes above a million, grouped digits below */
static void
suffixed(pp_str *out, double x)
{
	double a = fabs(x);
	if (a >= 1e12) {
		sig(out, x / 1e12, 3, 0);
		pp_str_add(out, "T");
	} else if (a >= 1e9) {
		sig(out, x / 1e9, 3, 0);
		pp_str_add(out, "B");
	} else if (a >= 1e6) {
		sig(out, x / 1e6, 3, 0);
		pp_str_add(out, "M");
	} else {
		char buf[64];
		snprintf(buf, sizeof buf, "%.0f", x);
		grouped(out, buf);
	}
}

void
rep_cell_show(const rep_report *r, const rep_cell *c, pp_str *out, double *scale)
{
	double v = c->v, k = 1.0;
	char buf[64];
	switch (c->fmt) {
	case F_TEXT:
		pp_str_add(out, c->text ? c->text : "");
		break;
	case F_INT:
		snprintf(buf, sizeof buf, "%.0f", v);
		grouped(out, buf);
		break;
	case F_NUM:
		sig(out, v, 4, 0);
		break;
	case F_NUM3:
		sig(out, v, 3, 0);
		break;
	case F_COUNT:
		suffixed(out, v);
		break;
	case F_PCT:
		k = 100.0;
		snprintf(buf, sizeof buf, "%.1f%%", v * k);
		pp_str_add(out, !strcmp(buf, "-0.0%") ? "0.0%" : buf);
		break;
	case F_MONEY: {
		k = r->o.per_usd;
		double x = v * k;
		if (x < 0) {
			pp_str_add(out, "-");
			x = -x;
		}
		if (!strcmp(r->currency, "USD"))
			pp_str_add(out, "$");
		else
			pp_str_addf(out, "%s ", r->currency);
		if (x >= 1e6)
			suffixed(out, x);
		else if (x >= 1000)
			sig(out, x, 1, 0); /* whole units */
		else
			sig(out, x, 3, 2);
		break;
	}
	case F_SEC:
		if (v == 0 || fabs(v) >= 1) {
			sig(out, v, 3, 0);
			pp_str_add(out, " s");
		} else if (fabs(v) >= 1e-3) {
			k = 1e3;
			sig(out, v * k, 3, 0);
			pp_str_add(out, " ms");
		} else {
			k = 1e6;
			sig(out, v * k, 3, 0);
			pp_str_add(out, " \xc2\xb5s");
		}
		break;
	case F_GIB:
		k = 1.0 / 1073741824.0;
		snprintf(buf, sizeof buf, "%.1f GiB", v * k);
		pp_str_add(out, buf);
		break;
	}
	if (scale != NULL)
		*scale = k;
}

/* The shortest of %.15g, %.16g, %.17g that reads back as the same double. */
static void
exact(pp_str *out, double v)
{
	char buf[40];
	for (int p = 15; p <= 17; p++) {
		snprintf(buf, sizeof buf, "%.*g", p, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	pp_str_add(out, buf);
}

void
rep_cell_csv(const rep_report *r, const rep_cell *c, pp_str *out)
{
	if (c->fmt == F_TEXT)
		pp_str_add(out, c->text ? c->text : "");
	else
		exact(out, c->fmt == F_MONEY ? c->v * r->o.per_usd : c->v);
}

const char *
rep_fmt_unit(const rep_report *r, rep_fmt f)
{
	switch (f) {
	case F_MONEY: return r->currency;
	case F_SEC: return "s";
	case F_PCT: return "fraction";
	case F_GIB: return "bytes";
	default: return "";
	}
}

/* ---- tables -------------------------------------------------------------------------------- */

size_t
rep_table_new(rep_report *r, const char *id, const char *title, int ncols, const char *const *head,
	      const char *const *key)
{
	if (PP_GROW(r->tables, r->tcap, r->ntables + 1) != 0) {
		rep_fail(r, PP_ENOMEM, "out of memory");
		return 0;
	}
	rep_table *t = &r->tables[r->ntables];
	memset(t, 0, sizeof *t);
	pp_strlcpy(t->id, id, sizeof t->id);
	t->title = strdup(title);
	t->ncols = ncols;
	t->head = calloc((size_t)ncols, sizeof *t->head);
	t->key = calloc((size_t)ncols, sizeof *t->key);
	if (t->title == NULL || t->head == NULL || t->key == NULL) {
		rep_fail(r, PP_ENOMEM, "out of memory");
		return 0;
	}
	for (int i = 0; i < ncols; i++) {
		t->head[i] = strdup(head[i]);
		t->key[i] = strdup(key[i]);
	}
	return r->ntables++;
}

size_t
rep_kv_new(rep_report *r, const char *id, const char *title)
{
	static const char *const head[] = {"Quantity", "Value", "Basis"};
	static const char *const key[] = {"quantity", "value", "basis"};
	size_t t = rep_table_new(r, id, title, 3, head, key);
	if (rep_ok(r))
		r->tables[t].kv = true;
	return t;
}

void
rep_row(rep_report *r, size_t ti, const rep_cell *cells)
{
	rep_table *t = &r->tables[ti];
	size_t nc = (size_t)t->ncols;
	if (!rep_ok(r) || PP_GROW(t->cells, t->cap, (t->nrows + 1) * nc) != 0) {
		rep_fail(r, PP_ENOMEM, "out of memory");
		for (size_t i = 0; i < nc; i++) {
			rep_cell c = cells[i];
			rep_cell_free(&c);
		}
		return;
	}
	memcpy(&t->cells[t->nrows * nc], cells, nc * sizeof *cells);
	t->nrows++;
}

void
rep_kv(rep_report *r, size_t t, const char *quantity, rep_cell value, const char *basis, ...)
{
	va_list ap;
	va_start(ap, basis);
	rep_cell row[3] = {rep_text("%s", quantity), value, {.fmt = F_TEXT, .text = vdup(basis, ap)}};
	va_end(ap);
	rep_row(r, t, row);
}

void
rep_table_note(rep_report *r, size_t ti, const char *fmt, ...)
{
	if (!rep_ok(r))
		return;
	rep_table *t = &r->tables[ti];
	va_list ap;
	va_start(ap, fmt);
	free(t->note);
	t->note = vdup(fmt, ap);
	va_end(ap);
}

/* ---- blocks -------------------------------------------------------------------------------- */

static rep_block *
block(rep_report *r, rep_btype type)
{
	if (PP_GROW(r->blocks, r->bcap, r->nblocks + 1) != 0) {
		rep_fail(r, PP_ENOMEM, "out of memory");
		return NULL;
	}
	rep_block *b = &r->blocks[r->nblocks++];
	memset(b, 0, sizeof *b);
	b->type = type;
	return b;
}

rep_block *
rep_para(rep_report *r, rep_btype type)
{
	return block(r, type);
}

void
rep_put(rep_block *b, rep_cell c)
{
	if (b == NULL || PP_GROW(b->runs, b->cap, b->nruns + 1) != 0) {
		rep_cell_free(&c);
		return;
	}
	b->runs[b->nruns++] = c;
}

void
rep_say(rep_block *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rep_cell c = {.fmt = F_TEXT, .text = vdup(fmt, ap)};
	va_end(ap);
	rep_put(b, c);
}

void
rep_heading(rep_report *r, rep_btype level, const char *anchor, const char *fmt, ...)
{
	rep_block *b = block(r, level);
	if (b == NULL)
		return;
	pp_strlcpy(b->anchor, anchor, sizeof b->anchor);
	va_list ap;
	va_start(ap, fmt);
	rep_cell c = {.fmt = F_TEXT, .text = vdup(fmt, ap)};
	va_end(ap);
	rep_put(b, c);
}

void
rep_show_table(rep_report *r, size_t t)
{
	if (!rep_ok(r))
		return;
	rep_block *b = block(r, B_TABLE);
	if (b != NULL)
		b->index = t;
}

void
rep_notice(rep_report *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pp_str_vaddf(&r->notices, fmt, ap);
	va_end(ap);
	pp_str_add(&r->notices, "\n");
}

/* ---- reading a built report ---------------------------------------------------------------- */

size_t
rep_ntables(const rep_report *r)
{
	return r->ntables;
}

int
rep_table_find(const rep_report *r, const char *id)
{
	for (size_t i = 0; i < r->ntables; i++)
		if (!strcmp(r->tables[i].id, id))
			return (int)i;
	return -1;
}

const char *
rep_table_id(const rep_report *r, size_t t)
{
	return r->tables[t].id;
}

size_t
rep_table_rows(const rep_report *r, size_t t)
{
	return r->tables[t].nrows;
}

size_t
rep_table_cols(const rep_report *r, size_t t)
{
	return (size_t)r->tables[t].ncols + (r->tables[t].kv ? 1 : 0);
}

const char *
rep_table_key(const rep_report *r, size_t t, size_t col)
{
	const rep_table *x = &r->tables[t];
	if (x->kv && col == 2)
		return "unit";
	if (x->kv && col == 3)
		return x->key[2];
	return x->key[col];
}

bool
rep_table_cell(const rep_report *r, size_t t, size_t row, size_t col, const char **text, double *value)
{
	const rep_table *x = &r->tables[t];
	const rep_cell *c;
	if (x->kv && col == 2) {
		*text = rep_fmt_unit(r, x->cells[row * 3 + 1].fmt);
		return true;
	}
	if (x->kv && col == 3)
		col = 2;
	c = &x->cells[row * (size_t)x->ncols + col];
	if (c->fmt == F_TEXT) {
		*text = c->text ? c->text : "";
		return true;
	}
	*value = c->fmt == F_MONEY ? c->v * r->o.per_usd : c->v;
	return false;
}

size_t
rep_ncharts(const rep_report *r)
{
	return r->ncharts;
}

const char *
rep_chart_name(const rep_report *r, size_t c)
{
	return r->charts[c].name;
}

int
rep_chart_series(const rep_report *r, size_t c)
{
	return r->charts[c].nseries;
}

void
rep_free(rep_report *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->ndocs; i++)
		rep_doc_free(&r->docs[i]);
	free(r->docs);
	for (size_t i = 0; i < r->nblocks; i++) {
		for (size_t k = 0; k < r->blocks[i].nruns; k++)
			rep_cell_free(&r->blocks[i].runs[k]);
		free(r->blocks[i].runs);
	}
	free(r->blocks);
	for (size_t i = 0; i < r->ntables; i++) {
		rep_table *t = &r->tables[i];
		for (size_t k = 0; k < t->nrows * (size_t)t->ncols; k++)
			rep_cell_free(&t->cells[k]);
		for (int k = 0; k < t->ncols; k++) {
			free(t->head ? t->head[k] : NULL);
			free(t->key ? t->key[k] : NULL);
		}
		free(t->head);
		free(t->key);
		free(t->cells);
		free(t->title);
		free(t->note);
	}
	free(r->tables);
	for (size_t i = 0; i < r->ncharts; i++) {
		rep_chart *c = &r->charts[i];
		free(c->title);
		free(c->caption);
		pp_str_free(&c->dat);
		pp_str_free(&c->gp);
		free(c->svg);
	}
	free(r->charts);
	pp_str_free(&r->notices);
	free(r->title);
	free(r);
}

char *
rep_dupf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *p = vdup(fmt, ap);
	va_end(ap);
	return p;
}
