/*
 * common.c -- what the training and serving validations share: source names, families and the
 * error summaries.
 */
#include "config.h"
#include "validate/val_int.h"

#include "hardware/hw.h"

#include <cJSON.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

struct embedded_file { const char *name; const char *text; };
extern const struct embedded_file val_data_files[];

const char *
val_data(const char *name)
{
	for (size_t i = 0; val_data_files[i].name != NULL; i++)
		if (!strcmp(val_data_files[i].name, name))
			return val_data_files[i].text;
	return NULL;
}

bool
val_has(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (const char *p = hay; *p; p++)
		if (strncasecmp(p, needle, n) == 0)
			return true;
	return false;
}

bool
val_unit_in(const char *unit, const char *list)
{
	size_t n = strlen(unit);
	if (n == 0)
		return true;
	for (const char *p = list; p != NULL; p = strchr(p, '|'), p = p != NULL ? p + 1 : NULL)
		if (!strncmp(p, unit, n) && (p[n] == '|' || p[n] == '\0'))
			return true;
	return false;
}

const char *
val_measured_absurd(double v)
{
	if (!isfinite(v) || !(v > 0))
		return "the measured value is not a positive number";
	if (v < 1e-6 || v > 1e9)
		return "the measured value is outside 1e-6 to 1e9 in its unit: not a number a run reports";
	return NULL;
}

void
val_source_key(const char *src, char *out, size_t n)
{
	size_t i = 0;
	while (src[i] && src[i] != ',' && src[i] != '(' && i + 1 < n)
		i++;
	while (i > 0 && src[i - 1] == ' ')
		i--;
	snprintf(out, n, "%.*s", (int)i, src);
}

/* The first whitespace-delimited token of s, when it looks like owner/name. */
static bool
repo_token(const char *s, char *out, size_t n)
{
	size_t i = 0;
	while (s[i] && s[i] != ' ' && s[i] != ',' && s[i] != ':')
		i++;
	const char *slash = memchr(s, '/', i);
	if (slash == NULL || slash == s || slash + 1 >= s + i || i + 1 > n)
		return false;
	snprintf(out, n, "%.*s", (int)i, s);
	return true;
}

void
val_family_key(const char *src, char *out, size_t n)
{
	if (!strncmp(src, "github ", 7) && repo_token(src + 7, out, n))
		return;
	const char *ml = strstr(src, "MLPerf Inference v");
	if (ml == src) {
		size_t i = strlen("MLPerf Inference v");
		while (ml[i] && ml[i] != ' ' && ml[i] != ':')
			i++;
		snprintf(out, n, "%.*s", (int)i, ml);
		return;
	}
	if (repo_token(src, out, n))
		return;
	size_t i = 0;
	while (src[i] && src[i] != ',' && i + 1 < n)
		i++;
	snprintf(out, n, "%.*s", (int)i, src);
}

/* One summary line per distinct value of `key` among the rows: MAPE of the row errors, and the
 * mean of their speed errors (positive: predicted faster than measured). */
void
val_group(cJSON *arr, const cJSON *rows, const char *key)
{
	const cJSON *x;
	cJSON_ArrayForEach(x, rows)
	{
		const char *name = cJSON_GetObjectItem(x, key)->valuestring;
		double e = cJSON_GetObjectItem(x, "error")->valuedouble;
		double v = cJSON_GetObjectItem(x, "speed_error")->valuedouble;
		cJSON *sv = NULL, *it;
		cJSON_ArrayForEach(it, arr)
		{
			if (!strcmp(cJSON_GetObjectItem(it, key)->valuestring, name))
				sv = it;
		}
		if (sv == NULL) {
			sv = cJSON_CreateObject();
			cJSON_AddStringToObject(sv, key, name);
			cJSON_AddNumberToObject(sv, "rows", 0);
			cJSON_AddNumberToObject(sv, "mape", 0);
			cJSON_AddNumberToObject(sv, "mean_signed_error", 0);
			cJSON_AddItemToArray(arr, sv);
		}
		double k = cJSON_GetObjectItem(sv, "rows")->valuedouble;
		double mp = cJSON_GetObjectItem(sv, "mape")->valuedouble;
		double ms = cJSON_GetObjectItem(sv, "mean_signed_error")->valuedouble;
		cJSON_SetNumberValue(cJSON_GetObjectItem(sv, "mape"), (mp * k + fabs(e)) / (k + 1));
		cJSON_SetNumberValue(cJSON_GetObjectItem(sv, "mean_signed_error"), (ms * k + v) / (k + 1));
		cJSON_SetNumberValue(cJSON_GetObjectItem(sv, "rows"), k + 1);
	}
}

void
val_summarize(cJSON *doc, const cJSON *rows, const cJSON *skipped)
{
	val_group(cJSON_AddArrayToObject(doc, "sources"), rows, "source");
	val_group(cJSON_AddArrayToObject(doc, "families"), rows, "family");
	double tot = 0.0, sgn = 0.0;
	int n = 0;
	const cJSON *x;
	cJSON_ArrayForEach(x, rows)
	{
		tot += fabs(cJSON_GetObjectItem(x, "error")->valuedouble);
		sgn += cJSON_GetObjectItem(x, "speed_error")->valuedouble;
		n++;
	}
	int nskip = cJSON_GetArraySize(skipped);
	cJSON *ov = cJSON_AddObjectToObject(doc, "overall");
	cJSON_AddNumberToObject(ov, "rows", n);
	cJSON_AddNumberToObject(ov, "skipped", nskip);
	cJSON_AddNumberToObject(ov, "predicted_share", n + nskip > 0 ? (double)n / (double)(n + nskip) : 0.0);
	cJSON_AddNumberToObject(ov, "mape", n > 0 ? tot / n : 0.0);
	cJSON_AddNumberToObject(ov, "mean_signed_error", n > 0 ? sgn / n : 0.0);
}

double
val_speed_error(double predicted, double measured, bool time_like)
{
	double e = (predicted - measured) / measured;
	return time_like ? -e : e;
}

/* ---- the 80% intervals of predictions ------------------------------------------------------ */

/* Deep enough for every profile chain (generic > pytorch > megatron > megatron-2021 is 4). */
enum { IV_MAXLEVELS = 6 };

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The number of distinct levels of p's chain. */
static int
chain_depth(const struct hw_profile *p)
{
	int depth = 1;
	while (depth < IV_MAXLEVELS && strcmp(hw_profile_ancestor(p, depth), hw_profile_ancestor(p, depth - 1)))
		depth++;
	return depth;
}

/* The finite errors of the rows in group `name` at `level` (and not of family `skip`) into buf,
 * sorted; their count. */
static size_t
group_errors(const val_err *e, size_t n, const char *name, int level, const char *skip, double *buf)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (isfinite(e[i].q) && !e[i].out_of_percentiles && (skip == NULL || strcmp(e[i].family, skip)) &&
		    !strcmp(hw_profile_ancestor(e[i].p, level), name))
			buf[k++] = e[i].q;
	qsort(buf, k, sizeof *buf, cmp_double);
	return k;
}

/* The percentiles for a prediction under p from the deepest level of its chain whose group has
 * min_rows errors (not of family skip).  false: too few even at the root. */
static bool
percentiles(const val_err *e, size_t n, const struct hw_profile *p, int level, const char *skip, size_t min_rows,
	    double *buf, double *p10, double *p90)
{
	for (int lv = chain_depth(p) - 1 < level ? chain_depth(p) - 1 : level; lv >= 0; lv--) {
		size_t k = group_errors(e, n, hw_profile_ancestor(p, lv), lv, skip, buf);
		if (k < min_rows || k == 0)
			continue;
		*p10 = gsl_stats_quantile_from_sorted_data(buf, 1, k, 0.10);
		*p90 = gsl_stats_quantile_from_sorted_data(buf, 1, k, 0.90);
		return true;
	}
	return false;
}

bool
val_percentiles(const val_err *e, size_t n, const struct hw_profile *p, int level, const char *skip, size_t min_rows,
		double *p10, double *p90)
{
	double *buf = malloc((n ? n : 1) * sizeof *buf);
	bool ok = buf != NULL && percentiles(e, n, p, level, skip, min_rows, buf, p10, p90);
	free(buf);
	return ok;
}

cJSON *
val_intervals(const val_err *e, size_t n, const struct hw_profile *const *profs, size_t nprof, const char *const *fam,
	      size_t nf, size_t min_rows, const char *who)
{
	double *buf = malloc((n ? n : 1) * sizeof *buf);
	cJSON *o = cJSON_CreateObject();
	char key[32];
	snprintf(key, sizeof key, "%ss", who);
	cJSON *byp = cJSON_AddArrayToObject(o, key);
	if (buf == NULL || byp == NULL) {
		free(buf);
		cJSON_Delete(o);
		return NULL;
	}
	/* every profile in the chains with min_rows rows in its own group; the others inherit their
	 * parent's values, as sim_interval reads them */
	for (size_t k = 0; k < nprof; k++)
		for (int lv = 0; lv < chain_depth(profs[k]); lv++) {
			const char *name = hw_profile_ancestor(profs[k], lv);
			bool seen = false;
			const cJSON *x;
			cJSON_ArrayForEach(x, byp) seen |= !strcmp(cJSON_GetObjectItem(x, who)->valuestring, name);
			size_t m = seen ? 0 : group_errors(e, n, name, lv, NULL, buf);
			if (seen || m < min_rows || m == 0)
				continue;
			cJSON *y = cJSON_CreateObject();
			cJSON_AddStringToObject(y, who, name);
			cJSON_AddNumberToObject(y, "rows", (double)m);
			cJSON_AddNumberToObject(y, "p10", gsl_stats_quantile_from_sorted_data(buf, 1, m, 0.10));
			cJSON_AddNumberToObject(y, "p90", gsl_stats_quantile_from_sorted_data(buf, 1, m, 0.90));
			cJSON_AddItemToArray(byp, y);
		}
	size_t inside = 0, total = 0;
	cJSON *byf = cJSON_AddArrayToObject(o, "families");
	for (size_t f = 0; f < nf; f++) {
		size_t in = 0, m = 0;
		for (size_t i = 0; i < n; i++) {
			double p10, p90;
			if (strcmp(e[i].family, fam[f]) || !isfinite(e[i].q) ||
			    !percentiles(e, n, e[i].p, IV_MAXLEVELS, fam[f], min_rows, buf, &p10, &p90))
				continue;
			if (e[i].banded)
				p10 = fmin(p10, e[i].blo), p90 = fmax(p90, e[i].bhi);
			m++;
			in += e[i].q >= p10 && e[i].q <= p90;
		}
		cJSON *y = cJSON_CreateObject();
		cJSON_AddStringToObject(y, "family", fam[f]);
		cJSON_AddNumberToObject(y, "rows", (double)m);
		cJSON_AddNumberToObject(y, "coverage", m ? (double)in / (double)m : 0.0);
		cJSON_AddItemToArray(byf, y);
		inside += in, total += m;
	}
	cJSON_AddNumberToObject(o, "rows", (double)total);
	cJSON_AddNumberToObject(o, "coverage", total ? (double)inside / (double)total : 0.0);
	free(buf);
	return o;
}
