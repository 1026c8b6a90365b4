/*
 * common.c -- what the training and serving validations share: source names, families and the
 * error summaries.
 */
#include "config.h"
#include "validate/val_int.h"

#include <cJSON.h>
#include <math.h>
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
