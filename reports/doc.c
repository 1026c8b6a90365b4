/*
 * doc.c -- the documents a report reads: which kind each is, access to their fields by JSON
 * pointer with errors that name the file and the field, and training traces reduced to the
 * bars of a pipeline timeline.
 *
 * A document says what it is and the version of its format in "schema": "paraplan.<kind>/N"
 * (docs/json.md).  Documents written before there was one say what they are in "kind"
 * (plan-train, plan-capacity, plan-serve, train, serve, validate), and a Chrome trace by its
 * "traceEvents" array; they read as version 1.  A version newer than the ones listed is refused
 * (written by a newer paraplan), as is a document of a kind a report does not read.  Traces of
 * serving runs (one process per replica) are refused: the timeline is of one training step.
 */
#include "config.h"
#include "reports/rep_int.h"
#include "common/json.h"

#include <cJSON.h>
#include <ctype.h>
#include <math.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DOC_BYTES ((size_t)1 << 30) /* a full-mode trace of a large run is big */

const char *const rep_kind_label[K_NKINDS] = {
	"plan train", "capacity plan", "plan serve", "simulate train", "simulate serve", "validation", "training trace",
};

const char *const rep_gantt_cat[G_NCATS] = {
	"forward", "backward", "weight gradients", "recomputation", "optimizer", "other compute",
	"TP/CP/EP communication", "pipeline send/receive", "data-parallel / ZeRO communication",
};

/* The kinds a report reads and the versions of each it knows.  plan-serve/2 calls its unit (a
 * replica, or a prefill:decode group) a unit: capacity_per_unit and units, where /1 had
 * capacity_per_replica. */
static const struct {
	const char *kind;
	rep_kind k;
	int max_version;
} kinds[] = {
	{"plan-train", K_PLAN_TRAIN, 1}, {"plan-capacity", K_CAPACITY, 1}, {"plan-serve", K_PLAN_SERVE, 2},
	{"train", K_TRAIN, 1},           {"serve", K_SERVE, 1},            {"validate", K_VALIDATE, 1},
	{"trace", K_TRACE, 1},
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

/* The commands whose documents a report does not read, for a message that says what a file is. */
static const struct {
	const char *kind, *command;
} others[] = {
	{"infer", "simulate infer --json"},       {"model", "model show --json"},
	{"model-list", "model list --json"},       {"hw-list", "hw list --json"},
	{"hw-show", "hw show --json"},             {"hw-calibrations", "hw calibrations --json"},
	{"hw-diff", "hw diff --json"},             {"hw-validations", "hw validations --json"},
	{"hw-export", "hw export"},                {"import-nccl-tests", "import nccl-tests --json"},
	{"calibrate", "calibrate --json"},         {"calibrate-fit", "calibrate --fit --json"},
	{"replay", "replay --json"},               {"replay-dry-run", "replay --dry-run --json"},
	{"validate-fit", "validate --fit"},       {"validate-cross", "validate --cross-validate --json"},
	{"validate-serving-fit", "validate --set serving --fit"}, {"hw-import", "hw import --json"},
};

/* "paraplan.<kind>/<N>": the kind into buf and N; false when it is not of that form. */
static bool
parse_schema(const char *s, char *kind, size_t n, int *version)
{
	if (strncmp(s, "paraplan.", 9) != 0)
		return false;
	const char *k = s + 9, *slash = strchr(k, '/');
	if (slash == NULL || slash == k || (size_t)(slash - k) >= n)
		return false;
	int64_t v;
	if (pp_parse_i64(slash + 1, &v) != 0 || v < 1 || v > 1000 || !isdigit((unsigned char)slash[1]))
		return false;
	memcpy(kind, k, (size_t)(slash - k));
	kind[slash - k] = '\0';
	*version = (int)v;
	return true;
}

static const char readable[] =
	"a report reads plan-train, plan-capacity, plan-serve (/1 and /2), train, serve, validate and trace documents "
	"(the --json output of 'plan train', 'plan serve', 'simulate train', 'simulate serve' and 'validate', and "
	"'simulate train --trace' files)";

/* ---- JSON pointers ------------------------------------------------------------------------- */

/* Resolves an RFC 6901 pointer ("/counts/0/gpus"; ~1 is '/', ~0 is '~'). */
static const cJSON *
resolve(const cJSON *root, const char *ptr)
{
	const cJSON *x = root;
	const char *p = ptr;
	while (x != NULL && *p == '/') {
		p++;
		char tok[128];
		size_t n = 0;
		while (*p && *p != '/' && n + 1 < sizeof tok) {
			if (p[0] == '~' && (p[1] == '0' || p[1] == '1')) {
				tok[n++] = p[1] == '0' ? '~' : '/';
				p += 2;
			} else {
				tok[n++] = *p++;
			}
		}
		tok[n] = '\0';
		if (cJSON_IsArray(x)) {
			char *end;
			long i = strtol(tok, &end, 10);
			if (*end != '\0' || end == tok || i < 0)
				return NULL;
			x = cJSON_GetArrayItem(x, (int)i);
		} else if (cJSON_IsObject(x)) {
			x = cJSON_GetObjectItemCaseSensitive(x, tok);
		} else {
			return NULL;
		}
	}
	return *p == '\0' ? x : NULL;
}

const cJSON *
rep_at(const rep_doc *d, const char *ptr)
{
	return d->json ? resolve(d->json, ptr) : NULL;
}

static void
vptr(char *buf, size_t n, const char *fmt, va_list ap)
{
	vsnprintf(buf, n, fmt, ap);
}

bool
rep_has(const rep_doc *d, const char *fmt, ...)
{
	char ptr[256];
	va_list ap;
	va_start(ap, fmt);
	vptr(ptr, sizeof ptr, fmt, ap);
	va_end(ap);
	const cJSON *x = rep_at(d, ptr);
	return x != NULL && !cJSON_IsNull(x);
}

static const cJSON *
need(rep_report *r, const rep_doc *d, const char *ptr, const char *what, cJSON_bool (*is)(const cJSON *))
{
	if (!rep_ok(r))
		return NULL;
	const cJSON *x = rep_at(d, ptr);
	if (x == NULL)
		rep_fail(r, PP_EINPUT, "%s: \"%s\" is missing (a %s document needs it)", d->path, ptr, rep_kind_label[d->kind]);
	else if (!is(x))
		rep_fail(r, PP_EINPUT, "%s: \"%s\" must be %s", d->path, ptr, what);
	else
		return x;
	return NULL;
}

/* ---- what a number may be ------------------------------------------------------------------ */

/* A document's number is checked against what its field can be, by the field's name (the last
 * member of the pointer that is not an array index or a statistic: "/ttft_s/p99" is a time):
 * a report of a step of -1 s, a negative throughput or an MFU of 180% is refused, not drawn.
 * Times are at most 1e9 s (31 years), counts whole numbers below 2^53. */
typedef struct domain {
	const char *name; /* exact name, or "*suffix" or "prefix*" */
	double lo, hi;
	bool lo_open;     /* lo itself excluded */
	bool whole;       /* a whole number */
	const char *says; /* for the message */
} domain;

static const domain domains[] = {
	{"step_time_s", 0, 1e9, true, false, "a positive time of at most 1e9 s"},
	{"measured_s", 0, 1e9, true, false, "a positive time of at most 1e9 s"},
	{"predicted_s", 0, 1e9, true, false, "a positive time of at most 1e9 s"},
	{"tokens_per_s", 0, 1e18, true, false, "a positive rate"},
	{"tokens_per_s_per_gpu", 0, 1e18, true, false, "a positive rate"},
	{"samples_per_s", 0, 1e18, true, false, "a positive rate"},
	{"rate", 0, 1e12, true, false, "a positive rate"},
	{"mfu", 0, 1, false, false, "a fraction from 0 to 1"},
	{"hfu", 0, 1, false, false, "a fraction from 0 to 1"},
	{"slo_attainment", 0, 1, false, false, "a fraction from 0 to 1"},
	{"*_fraction", 0, 1, false, false, "a fraction from 0 to 1"},
	{"kv_utilization*", 0, 1, false, false, "a fraction from 0 to 1"},
	{"*_per_s", 0, 1e18, false, false, "a rate, not negative"},
	{"*_per_s_per_gpu", 0, 1e18, false, false, "a rate, not negative"},
	{"*_s", 0, 1e9, false, false, "a time from 0 to 1e9 s"},
	{"gpus", 1, 9007199254740992.0, false, true, "a whole number, at least 1"},
	{"tp", 1, 1 << 24, false, true, "a whole number, at least 1"},
	{"pp", 1, 1 << 24, false, true, "a whole number, at least 1"},
	{"dp", 1, 1 << 24, false, true, "a whole number, at least 1"},
	{"cp", 1, 1 << 24, false, true, "a whole number, at least 1"},
	{"ep", 1, 1 << 24, false, true, "a whole number, at least 1"},
	{"vpp", 1, 1 << 24, false, true, "a whole number, at least 1"},
	{"replicas", 1, 1 << 24, false, true, "a whole number, at least 1"},
	{"gpus_per_node", 1, 1 << 24, false, true, "a whole number, at least 1"},
	{"ranks", 1, 9007199254740992.0, false, true, "a whole number, at least 1"},
	{"micro_batch", 1, 9007199254740992.0, false, true, "a whole number, at least 1"},
	{"global_batch", 1, 9007199254740992.0, false, true, "a whole number, at least 1"},
	{"seq", 1, 9007199254740992.0, false, true, "a whole number, at least 1"},
	{"zero", 0, 3, false, true, "0, 1, 2 or 3"},
	{"spares", 0, 1 << 24, false, true, "a whole number, not negative"},
	{"failures_tolerated", 0, 1 << 24, false, true, "a whole number, not negative"},
	{"rank", 0, 9007199254740992.0, false, true, "a whole number, not negative"},
	{"enumerated", 0, 9007199254740992.0, false, true, "a whole number, not negative"},
	{"invalid", 0, 9007199254740992.0, false, true, "a whole number, not negative"},
	{"out_of_memory", 0, 9007199254740992.0, false, true, "a whole number, not negative"},
	{"estimated", 0, 9007199254740992.0, false, true, "a whole number, not negative"},
	{"simulated", 0, 9007199254740992.0, false, true, "a whole number, not negative"},
	{"rows", 0, 9007199254740992.0, false, true, "a whole number, not negative"},
	{"skipped", 0, 9007199254740992.0, false, true, "a whole number, not negative"},
	{"*_bytes", 0, 1e30, false, false, "a size, not negative"},
	{"*usd*", 0, 1e30, false, false, "an amount, not negative"},
	{"tokens", 0, 1e30, false, false, "a count, not negative"},
	{"tokens_per_step", 0, 1e30, true, false, "a positive count"},
	{"life_years", 0, 1000, true, false, "a positive number of years"},
	{"pue", 1, 100, false, false, "a power usage effectiveness from 1"},
	{"node_power_kw", 0, 1e6, false, false, "a power, not negative"},
	{"capacity_per_replica", 0, 1e12, false, false, "a rate, not negative"},
};

static bool
name_matches(const char *pattern, const char *name)
{
	size_t pl = strlen(pattern), nl = strlen(name);
	if (pattern[0] == '*' && pattern[pl - 1] == '*') {
		char mid[64];
		snprintf(mid, sizeof mid, "%.*s", (int)(pl - 2), pattern + 1);
		return strstr(name, mid) != NULL;
	}
	if (pattern[0] == '*')
		return nl >= pl - 1 && !strcmp(name + nl - (pl - 1), pattern + 1);
	if (pattern[pl - 1] == '*')
		return !strncmp(name, pattern, pl - 1);
	return !strcmp(pattern, name);
}

/* The field's name of a pointer: its last member that is neither an index nor a statistic. */
static void
field_name(const char *ptr, char *out, size_t n)
{
	out[0] = '\0';
	const char *end = ptr + strlen(ptr);
	while (end > ptr) {
		const char *slash = end - 1;
		while (slash > ptr && *slash != '/')
			slash--;
		const char *tok = *slash == '/' ? slash + 1 : slash;
		size_t len = (size_t)(end - tok);
		bool index = len > 0 && strspn(tok, "0123456789") >= len;
		bool stat = (len == 4 && !strncmp(tok, "mean", 4)) || (len == 3 && tok[0] == 'p' && strspn(tok + 1, "0123456789") == 2);
		if (len > 0 && !index && !stat) {
			snprintf(out, n, "%.*s", (int)len, tok);
			return;
		}
		end = slash;
	}
}

static void
check_domain(rep_report *r, const rep_doc *d, const char *ptr, double v)
{
	char name[64];
	field_name(ptr, name, sizeof name);
	for (size_t i = 0; i < sizeof domains / sizeof domains[0]; i++) {
		const domain *m = &domains[i];
		if (!name_matches(m->name, name))
			continue;
		bool ok = (m->lo_open ? v > m->lo : v >= m->lo) && v <= m->hi && (!m->whole || v == floor(v));
		if (!ok)
			rep_fail(r, PP_EINPUT, "%s: \"%s\" must be %s, got %.6g", d->path, ptr, m->says, v);
		return;
	}
}

double
rep_num(rep_report *r, const rep_doc *d, const char *fmt, ...)
{
	char ptr[256];
	va_list ap;
	va_start(ap, fmt);
	vptr(ptr, sizeof ptr, fmt, ap);
	va_end(ap);
	const cJSON *x = need(r, d, ptr, "a number", cJSON_IsNumber);
	if (x == NULL)
		return 0.0;
	if (!isfinite(x->valuedouble)) {
		rep_fail(r, PP_EINPUT, "%s: \"%s\" must be a finite number", d->path, ptr);
		return 0.0;
	}
	check_domain(r, d, ptr, x->valuedouble);
	return rep_ok(r) ? x->valuedouble : 0.0;
}

bool
rep_interval(rep_report *r, const rep_doc *d, const char *at, const char *key, double *lo, double *hi)
{
	if (!rep_has(d, "%s/%s", at, key))
		return false;
	*lo = rep_num(r, d, "%s/%s/0", at, key);
	*hi = rep_num(r, d, "%s/%s/1", at, key);
	if (rep_ok(r) && *lo > *hi)
		rep_fail(r, PP_EINPUT, "%s: \"%s/%s\" runs from %g down to %g: its low end must not pass its high end", d->path,
			 at, key, *lo, *hi);
	return rep_ok(r);
}

const char *
rep_str(rep_report *r, const rep_doc *d, const char *fmt, ...)
{
	char ptr[256];
	va_list ap;
	va_start(ap, fmt);
	vptr(ptr, sizeof ptr, fmt, ap);
	va_end(ap);
	const cJSON *x = need(r, d, ptr, "a string", cJSON_IsString);
	return x ? x->valuestring : "";
}

bool
rep_bool(rep_report *r, const rep_doc *d, const char *fmt, ...)
{
	char ptr[256];
	va_list ap;
	va_start(ap, fmt);
	vptr(ptr, sizeof ptr, fmt, ap);
	va_end(ap);
	const cJSON *x = need(r, d, ptr, "true or false", cJSON_IsBool);
	return x ? cJSON_IsTrue(x) : false;
}

int
rep_len(rep_report *r, const rep_doc *d, const char *fmt, ...)
{
	char ptr[256];
	va_list ap;
	va_start(ap, fmt);
	vptr(ptr, sizeof ptr, fmt, ap);
	va_end(ap);
	const cJSON *x = need(r, d, ptr, "an array", cJSON_IsArray);
	return x ? cJSON_GetArraySize(x) : 0;
}

/* ---- traces -------------------------------------------------------------------------------- */

static int
category(const char *name)
{
	static const struct {
		const char *prefix;
		int cat;
	} map[] = {
		{"fwd ", G_FWD},        {"embed fwd", G_FWD},         {"head fwd", G_FWD},       {"cnn fwd", G_FWD},
		{"bwd ", G_BWD},        {"embed bwd", G_BWD},         {"head bwd", G_BWD},       {"cnn bwd", G_BWD},
		{"wgrad", G_WGRAD},     {"recompute", G_RECOMP},      {"optimizer", G_OPT},      {"step", G_OPT},
		{"tp ", G_TP},          {"cp ", G_TP},                {"ep ", G_TP},             {"pp ", G_PP},
		{"dp ", G_DP},          {"zero ", G_DP},              {"embedding sync", G_DP},  {"param gather", G_DP},
	};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (!strncmp(name, map[i].prefix, strlen(map[i].prefix)))
			return map[i].cat;
	return G_OTHER;
}

static int
cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static int
cmp_bar(const void *a, const void *b)
{
	const rep_bar *x = a, *y = b;
	if (x->row != y->row)
		return x->row - y->row;
	if (x->cat != y->cat)
		return x->cat - y->cat;
	if (x->t0 != y->t0)
		return x->t0 < y->t0 ? -1 : 1;
	if (x->t1 != y->t1)
		return x->t1 < y->t1 ? -1 : 1;
	return 0;
}

static int
trace_fail(char *err, size_t errlen, const rep_doc *d, int i, const char *field, const char *what)
{
	return pp_err(err, errlen, PP_EINPUT, "%s: \"/traceEvents/%d/%s\" must be %s", d->path, i, field, what);
}

static int
trace_load(rep_doc *d, const cJSON *root, char *err, size_t errlen)
{
	const cJSON *ev = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
	if (!cJSON_IsArray(ev))
		return pp_err(err, errlen, PP_EINPUT, "%s: \"/traceEvents\" must be an array", d->path);
	rep_trace *t = calloc(1, sizeof *t);
	if (t == NULL)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	d->trace = t;
	int *pids = NULL;
	size_t npids = 0, pcap = 0, bcap = 0;
	int i = -1;
	const cJSON *e;
	/* first pass: the ranks, and a check of every event */
	cJSON_ArrayForEach(e, ev)
	{
		i++;
		if (!cJSON_IsObject(e))
			return pp_err(err, errlen, PP_EINPUT, "%s: \"/traceEvents/%d\" must be an object", d->path, i);
		const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
		if (!cJSON_IsString(ph))
			return trace_fail(err, errlen, d, i, "ph", "a string");
		const cJSON *pid = cJSON_GetObjectItemCaseSensitive(e, "pid");
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
		if (!strcmp(ph->valuestring, "M")) {
			const cJSON *a = cJSON_GetObjectItemCaseSensitive(e, "args");
			const cJSON *an = cJSON_GetObjectItemCaseSensitive(a, "name");
			if (cJSON_IsString(name) && !strcmp(name->valuestring, "process_name") && cJSON_IsString(an) &&
			    !strncmp(an->valuestring, "replica", 7))
				return pp_err(err, errlen, PP_EINPUT,
					      "%s: a serving trace (\"%s\"): the report draws the timeline of a training step "
					      "('simulate train --trace')",
					      d->path, an->valuestring);
			continue;
		}
		if (strcmp(ph->valuestring, "X") != 0)
			continue;
		const cJSON *ts = cJSON_GetObjectItemCaseSensitive(e, "ts");
		const cJSON *dur = cJSON_GetObjectItemCaseSensitive(e, "dur");
		if (!cJSON_IsString(name))
			return trace_fail(err, errlen, d, i, "name", "a string");
		/* at most 1e15 us (31 years), as every time of a document: a step is not longer */
		if (!cJSON_IsNumber(ts) || !(ts->valuedouble >= 0) || !(ts->valuedouble <= 1e15))
			return trace_fail(err, errlen, d, i, "ts", "a number of microseconds from 0 to 1e15");
		if (!cJSON_IsNumber(dur) || !(dur->valuedouble >= 0) || !(dur->valuedouble <= 1e15))
			return trace_fail(err, errlen, d, i, "dur", "a number of microseconds from 0 to 1e15");
		if (!cJSON_IsNumber(pid) || pid->valuedouble < 0 || pid->valuedouble > 1e7 ||
		    pid->valuedouble != floor(pid->valuedouble))
			return trace_fail(err, errlen, d, i, "pid", "a rank number");
		t->events++;
		double end = (ts->valuedouble + dur->valuedouble) * 1e-6;
		if (end > t->end_s)
			t->end_s = end;
		int p = (int)pid->valuedouble;
		bool seen = false;
		for (size_t k = npids; k-- > 0 && !seen;)
			seen = pids[k] == p;
		if (!seen) {
			if (PP_GROW(pids, pcap, npids + 1) != 0)
				return pp_err(err, errlen, PP_ENOMEM, "out of memory");
			pids[npids++] = p;
			t->pids = pids; /* owned by the trace from now on: an error below must not leak it */
		}
	}
	t->pids = pids;
	if (t->events == 0)
		return pp_err(err, errlen, PP_EINPUT, "%s: the trace holds no complete (\"ph\": \"X\") events", d->path);
	qsort(pids, npids, sizeof *pids, cmp_int);
	t->nranks = (int)npids;
	t->shown = t->nranks < REP_GANTT_RANKS ? t->nranks : REP_GANTT_RANKS;
	t->busy_s = calloc((size_t)t->shown, sizeof *t->busy_s);
	if (t->busy_s == NULL)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	/* second pass: bars of the ranks shown */
	cJSON_ArrayForEach(e, ev)
	{
		const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
		if (strcmp(ph->valuestring, "X") != 0)
			continue;
		int p = (int)cJSON_GetObjectItemCaseSensitive(e, "pid")->valuedouble;
		int rank = -1;
		for (int k = 0; k < t->shown && rank < 0; k++)
			if (pids[k] == p)
				rank = k;
		if (rank < 0)
			continue;
		double ts = cJSON_GetObjectItemCaseSensitive(e, "ts")->valuedouble * 1e-6;
		double dur = cJSON_GetObjectItemCaseSensitive(e, "dur")->valuedouble * 1e-6;
		if (!(dur > 0))
			continue;
		int cat = category(cJSON_GetObjectItemCaseSensitive(e, "name")->valuestring);
		if (cat < G_TP)
			t->busy_s[rank] += dur;
		if (PP_GROW(t->bars, bcap, t->nbars + 1) != 0)
			return pp_err(err, errlen, PP_ENOMEM, "out of memory");
		t->bars[t->nbars++] = (rep_bar){2 * rank + (cat >= G_TP), cat, ts, ts + dur};
	}
	/* Merge neighbours of one row and category closer than 1/2000 of the step: the chart is
	 * about 1000 pixels wide, and thousands of per-layer ops would make an unreadable file. */
	if (t->nbars > 1) /* no bars at all (every event of zero duration): bars is NULL */
		qsort(t->bars, t->nbars, sizeof *t->bars, cmp_bar);
	double eps = t->end_s / 2000.0;
	size_t k = 0;
	for (size_t j = 0; j < t->nbars; j++) {
		rep_bar *b = &t->bars[j];
		if (k > 0 && t->bars[k - 1].row == b->row && t->bars[k - 1].cat == b->cat && b->t0 <= t->bars[k - 1].t1 + eps) {
			if (b->t1 > t->bars[k - 1].t1)
				t->bars[k - 1].t1 = b->t1;
			continue;
		}
		t->bars[k++] = *b;
	}
	t->nbars = k;
	return 0;
}

/* ---- loading ------------------------------------------------------------------------------- */

/* Standard input ("--from -"), at most max bytes, NUL-terminated. */
static int
read_stdin(size_t max, char **out, size_t *len, char *err, size_t errlen)
{
	pp_str s = {0};
	char buf[65536];
	ssize_t n;
	while ((n = read(0, buf, sizeof buf)) != 0) {
		if (n < 0) {
			pp_str_free(&s);
			return pp_err(err, errlen, PP_EIO, "standard input: cannot read");
		}
		if (s.len + (size_t)n > max) {
			pp_str_free(&s);
			return pp_err(err, errlen, PP_EINPUT, "standard input: more than %zu bytes", max);
		}
		pp_str_addn(&s, buf, (size_t)n);
	}
	if (s.oom) {
		pp_str_free(&s);
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	}
	*len = s.len;
	*out = pp_str_detach(&s);
	return 0;
}

int
rep_doc_load(rep_doc *d, char *err, size_t errlen)
{
	char *text;
	size_t len;
	bool in = !strcmp(d->path, "-");
	int rc = in ? read_stdin(MAX_DOC_BYTES, &text, &len, err, errlen) : pp_read_text(d->path, MAX_DOC_BYTES, &text, &len, err, errlen);
	if (rc != 0)
		return rc == PP_EIO ? PP_EINPUT : rc;
	if (in) {
		free(d->path);
		d->path = strdup("(standard input)");
		if (d->path == NULL) {
			free(text);
			return pp_err(err, errlen, PP_ENOMEM, "out of memory");
		}
	}
	const char *slash = strrchr(d->path, '/');
	d->name = slash ? slash + 1 : d->path;
	/* Strict (common/json.h), and every string made printable here, once: names from a
	 * document reach tables, Markdown, HTML, CSV and gnuplot (which quotes them on its own). */
	cJSON *root = NULL;
	rc = pp_json_parse(text, len, d->path, PP_JSON_PRINTABLE, &root, err, errlen);
	free(text);
	if (rc != 0)
		return rc;
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return pp_err(err, errlen, PP_EINPUT, "%s: expected a JSON object at the top", d->path);
	}
	char kind[64] = "";
	int version = 1;
	const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(root, "kind");
	if (schema != NULL) {
		if (!cJSON_IsString(schema) || !parse_schema(schema->valuestring, kind, sizeof kind, &version)) {
			cJSON_Delete(root);
			return pp_err(err, errlen, PP_EINPUT, "%s: \"/schema\" must be \"paraplan.<kind>/<version>\"", d->path);
		}
	} else if (k != NULL) {
		if (!cJSON_IsString(k)) {
			cJSON_Delete(root);
			return pp_err(err, errlen, PP_EINPUT, "%s: \"/kind\" must be a string", d->path);
		}
		pp_strlcpy(kind, k->valuestring, sizeof kind);
	} else if (cJSON_GetObjectItemCaseSensitive(root, "traceEvents") != NULL) {
		pp_strlcpy(kind, "trace", sizeof kind);
	} else {
		cJSON_Delete(root);
		return pp_err(err, errlen, PP_EINPUT,
			      "%s: no \"schema\" field: not a paraplan result (%s)", d->path, readable);
	}
	for (size_t i = 0; i < NKINDS; i++) {
		if (strcmp(kind, kinds[i].kind) != 0)
			continue;
		if (version > kinds[i].max_version) {
			cJSON_Delete(root);
			return pp_err(err, errlen, PP_EINPUT,
				      "%s: a paraplan.%s/%d document, written by a newer paraplan: this one reads versions 1 to %d",
				      d->path, kind, version, kinds[i].max_version);
		}
		d->kind = kinds[i].k;
		d->version = version;
		if (d->kind == K_TRACE) {
			rc = trace_load(d, root, err, errlen);
			cJSON_Delete(root);
			return rc;
		}
		d->json = root;
		return 0;
	}
	for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
		if (!strcmp(kind, others[i].kind)) {
			rc = pp_err(err, errlen, PP_EINPUT, "%s: a paraplan.%s/%d document ('paraplan %s'): %s", d->path, kind,
				    version, others[i].command, readable);
			cJSON_Delete(root);
			return rc;
		}
	rc = pp_err(err, errlen, PP_EINPUT, "%s: \"%s\" is not a kind of paraplan document: %s", d->path, kind, readable);
	cJSON_Delete(root);
	return rc;
}

void
rep_doc_free(rep_doc *d)
{
	cJSON_Delete(d->json);
	if (d->trace != NULL) {
		free(d->trace->pids);
		free(d->trace->bars);
		free(d->trace->busy_s);
		free(d->trace);
	}
	free(d->path);
	memset(d, 0, sizeof *d);
}
