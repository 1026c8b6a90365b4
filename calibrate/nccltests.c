/*
 * nccltests.c -- importing nccl-tests output (github.com/NVIDIA/nccl-tests) into the hardware
 * database as one 'import' calibration run.
 *
 * What real logs look like, and what this parser therefore accepts:
 *   - two table layouts: the old one (size count type redop time algbw busbw error, twice) and
 *     the one of nccl-tests 2.13 and later (a 'root' column, '#wrong' instead of 'error'); the
 *     layout is read from each table's own column header, and rows are split on whitespace,
 *     never cut at column offsets (widths change with the numbers);
 *   - launcher prefixes on every line: srun -l ("0: ", " 12: ") and Open MPI --tag-output
 *     ("[1,0]<stdout>:");
 *   - 'N/A' in any field (sendrecv's in-place #wrong, tests run with -c 0): a half of a row with
 *     N/A time or bandwidth is skipped, not guessed;
 *   - footers ("# Out of bounds values", "# Avg bus bandwidth"), NCCL INFO and launcher lines
 *     between rows, elisions ("..."), several runs and tables per file.
 * The collective comes from the "# Collective test starting: all_reduce_perf" banner, else any
 * line naming a test binary (the command line), else --op, else the file name.  The rank count
 * comes from the "# Using devices" list (one Rank line per GPU, hosts give the node count), else
 * --ranks, else the "# nThread N nGpus G" banner (ranks of one process, right for single-process
 * runs).  Every row is checked: algbw must equal size / time and busbw must equal algbw times
 * nccl-tests' bus factor (doc/PERFORMANCE.md) within the rounding of the printed digits; a row
 * that does not is an error naming file:line, because a wrong rank count (or a mangled log)
 * would otherwise be stored silently.
 *
 * Stored values: time as printed; algbw = size / time and busbw = algbw x factor recomputed
 * from it (they agree with the printed columns, and keep the precision that two printed
 * decimals lose for small messages, where 0.00 GB/s would erase the latency information).
 */
#include "config.h"
#include "calibrate/cal.h"
#include "common/json.h"
#include "common/pp.h"

#include <cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest log we read: nccl-tests output with NCCL_DEBUG=INFO from a big job can be long. */
#define MAX_LOG_BYTES ((size_t)1 << 30)
#define MAX_TOKENS 64
#define MAX_RANKS (1 << 22)

typedef struct nrow {
	hw_coll_row r;
	int line;
} nrow;

typedef struct nblock {
	char *file, *op_from, *ranks_from, *dtype, *gpu_name, *nccl, *host;
	int line;
	hw_coll op;
	int ranks, nodes;
	bool new_format;
	nrow *rows;
	size_t nrows, cap;
	size_t skipped;
} nblock;

struct cal_nccl {
	nblock *blocks;
	size_t n, cap;
};

/* nccl-tests binaries and the collective each measures; -1: a test paraplan does not model. */
static const struct {
	const char *name;
	int op;
} tests[] = {
	{"all_reduce_perf", HW_ALL_REDUCE}, {"all_gather_perf", HW_ALL_GATHER},
	{"reduce_scatter_perf", HW_REDUCE_SCATTER}, {"alltoall_perf", HW_ALL_TO_ALL},
	{"broadcast_perf", HW_BROADCAST}, {"reduce_perf", HW_REDUCE}, {"sendrecv_perf", HW_SEND_RECV},
	{"gather_perf", -1}, {"scatter_perf", -1}, {"hypercube_perf", -1},
};

cal_nccl *
cal_nccl_new(void)
{
	return calloc(1, sizeof(cal_nccl));
}

static void
block_free(nblock *b)
{
	free(b->file);
	free(b->op_from);
	free(b->ranks_from);
	free(b->dtype);
	free(b->gpu_name);
	free(b->nccl);
	free(b->host);
	free(b->rows);
}

void
cal_nccl_free(cal_nccl *log)
{
	if (log == NULL)
		return;
	for (size_t i = 0; i < log->n; i++)
		block_free(&log->blocks[i]);
	free(log->blocks);
	free(log);
}

size_t
cal_nccl_nblocks(const cal_nccl *log)
{
	return log->n;
}

void
cal_nccl_block_get(const cal_nccl *log, size_t i, cal_nccl_block *out)
{
	const nblock *b = &log->blocks[i];
	out->file = b->file;
	out->line = b->line;
	out->op = b->op;
	out->ranks = b->ranks;
	out->nodes = b->nodes;
	out->op_from = b->op_from;
	out->ranks_from = b->ranks_from;
	out->dtype = b->dtype ? b->dtype : "";
	out->gpu_name = b->gpu_name ? b->gpu_name : "";
	out->nccl = b->nccl ? b->nccl : "";
	out->new_format = b->new_format;
	out->nrows = b->nrows;
	out->skipped = b->skipped;
}

void
cal_nccl_row(const cal_nccl *log, size_t i, size_t j, hw_coll_row *out, int *line)
{
	const nrow *r = &log->blocks[i].rows[j];
	*out = r->r;
	if (line)
		*line = r->line;
}

/* ---- the parser ---------------------------------------------------------------------------- */

/* Column positions of one table, from its header. */
typedef struct layout {
	int ncols;
	int size, type, redop, time[2], algbw[2], busbw[2], wrong[2]; /* -1: absent */
	bool new_format;
} layout;

typedef struct pstate {
	const char *name;
	const cal_nccl_opts *opts;
	cal_nccl *log;
	char *err;
	size_t errlen;
	int lineno;
	/* the collective named in the text: op >= 0, -1 none, -2 a test we do not model, -3 several */
	int op, op_line;
	char op_test[32];
	bool op_banner;
	/* the current run's banner and device list */
	int nthread_ngpus, banner_line;
	int dev_line, ndev;
	bool *seen_rank;
	size_t seen_cap;
	int dup_rank;
	char **hosts;
	size_t nhosts, hosts_cap;
	size_t *host_slot, nslots; /* open addressing over hosts: index + 1, 0 empty */
	char gpu_name[96], nccl[32];
	/* the open table, if any */
	nblock *cur;
	layout lay;
} pstate;

static void
reset_devices(pstate *p)
{
	p->dev_line = 0;
	p->ndev = 0;
	p->dup_rank = -1;
	if (p->seen_rank)
		memset(p->seen_rank, 0, p->seen_cap * sizeof *p->seen_rank);
	for (size_t i = 0; i < p->nhosts; i++)
		free(p->hosts[i]);
	p->nhosts = 0;
	if (p->host_slot)
		memset(p->host_slot, 0, p->nslots * sizeof *p->host_slot);
}

static uint64_t
host_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* Adds host h to the run's set of hosts unless it is there.  A hash set, not a search of the
 * list: a device list of 400,000 ranks on 50,000 hosts took a minute searched linearly. */
static int
add_host(pstate *p, const char *h)
{
	if (2 * (p->nhosts + 1) > p->nslots) {
		size_t n = p->nslots ? 2 * p->nslots : 64;
		size_t *slot = calloc(n, sizeof *slot);
		if (slot == NULL)
			return PP_ENOMEM;
		for (size_t i = 0; i < p->nhosts; i++) {
			size_t k = (size_t)(host_hash(p->hosts[i]) & (n - 1));
			while (slot[k] != 0)
				k = (k + 1) & (n - 1);
			slot[k] = i + 1;
		}
		free(p->host_slot);
		p->host_slot = slot;
		p->nslots = n;
	}
	size_t k = (size_t)(host_hash(h) & (p->nslots - 1));
	for (; p->host_slot[k] != 0; k = (k + 1) & (p->nslots - 1))
		if (!strcmp(p->hosts[p->host_slot[k] - 1], h))
			return 0;
	if (PP_GROW(p->hosts, p->hosts_cap, p->nhosts + 1) != 0 || (p->hosts[p->nhosts] = strdup(h)) == NULL)
		return PP_ENOMEM;
	p->host_slot[k] = ++p->nhosts;
	return 0;
}

static int
perr(pstate *p, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int
perr(pstate *p, int line, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (line > 0)
		return pp_err(p->err, p->errlen, PP_EINPUT, "%s:%d: %s", p->name, line, msg);
	return pp_err(p->err, p->errlen, PP_EINPUT, "%s: %s", p->name, msg);
}

/* Splits s (modified in place) on blanks; returns the token count (at most MAX_TOKENS). */
static int
tokenize(char *s, char **tok)
{
	int n = 0;
	while (*s && n < MAX_TOKENS) {
		while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\v' || *s == '\f')
			s++;
		if (!*s)
			break;
		tok[n++] = s;
		while (*s && *s != ' ' && *s != '\t' && *s != '\r' && *s != '\v' && *s != '\f')
			s++;
		if (*s)
			*s++ = '\0';
	}
	return n;
}

/* One launcher prefix, see strip_prefix. */
static char *
strip_one_prefix(char *s)
{
	char *p = s;
	while (*p == ' ')
		p++;
	if (isdigit((unsigned char)*p)) {
		char *q = p;
		while (isdigit((unsigned char)*q))
			q++;
		if (*q == ':' && (q[1] == ' ' || q[1] == '\t' || q[1] == '\0'))
			return q + 1;
		return s;
	}
	if (*p == '[') {
		char *q = p + 1;
		while (isdigit((unsigned char)*q) || *q == ',')
			q++;
		if (*q == ']' && q[1] == '<') {
			char *e = strchr(q, '>');
			if (e != NULL && e[1] == ':' && (!strncmp(q + 2, "stdout", 6) || !strncmp(q + 2, "stderr", 6)))
				return e + 2;
		}
		/* torchrun --tee / --role: "[rank0]:", "[default3]:" */
		q = p + 1;
		while (isalpha((unsigned char)*q))
			q++;
		if (q > p + 1 && isdigit((unsigned char)*q)) {
			while (isdigit((unsigned char)*q))
				q++;
			if (q[0] == ']' && q[1] == ':')
				return q + 2;
		}
	}
	/* a cluster manager's tag of the process, "(head, rank=0, pid=4242) " or "(pid=4242, ip=10.0.0.1) ":
	 * parenthesized, naming a pid or a rank, followed by a blank */
	if (*p == '(') {
		char *e = strchr(p, ')');
		if (e != NULL && (e[1] == ' ' || e[1] == '\t') && (size_t)(e - p) < 160) {
			char c = *e;
			*e = '\0';
			bool tag = strstr(p, "pid=") != NULL || strstr(p, "rank=") != NULL;
			*e = c;
			if (tag)
				return e + 1;
		}
	}
	return s;
}

/* Strips a launcher's line prefixes, as many as were stacked (a cluster manager's process tag
 * before Open MPI's): srun -l ("0: ", "  12: "), Open MPI --tag-output ("[1,0]<stdout>:",
 * "[1,3]<stderr>:"), torchrun ("[rank0]:") and "(head, rank=0, pid=4242)". */
static char *
strip_prefix(char *s)
{
	for (int i = 0; i < 4; i++) {
		char *t = strip_one_prefix(s);
		if (t == s)
			break;
		s = t;
	}
	return s;
}

static bool
is_word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Looks for nccl-tests binary names in s, as whole words.  Returns the index into tests[] of
 * the one named, -1 for none, -3 for several different ones. */
static int
find_test(const char *s)
{
	int found = -1;
	for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
		size_t len = strlen(tests[i].name);
		for (const char *q = strstr(s, tests[i].name); q != NULL; q = strstr(q + 1, tests[i].name)) {
			if ((q > s && is_word_char(q[-1])) || is_word_char(q[len]))
				continue;
			if (found >= 0 && found != (int)i)
				return -3;
			found = (int)i;
		}
	}
	return found;
}

static bool
is_uint(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* A printed number and half a unit of its last printed digit (the rounding it may carry).
 * Returns false for anything but a plain decimal (or exponent) number. */
static bool
parse_num(const char *s, double *v, double *half)
{
	char *end;
	*v = strtod(s, &end);
	if (end == s || *end != '\0' || !isfinite(*v))
		return false;
	int dec = 0, ex = 0;
	const char *dot = strchr(s, '.');
	const char *e = strpbrk(s, "eE");
	if (dot != NULL) {
		for (const char *q = dot + 1; isdigit((unsigned char)*q); q++)
			dec++;
	}
	if (e != NULL)
		ex = atoi(e + 1);
	*half = 0.5 * pow(10.0, (double)(ex - dec));
	return true;
}

static bool
is_na(const char *s)
{
	return !strcmp(s, "N/A") || !strcmp(s, "n/a") || !strcmp(s, "NA");
}

/* A column header: "#  size  count  type  redop  [root]  time  algbw  busbw  error|#wrong ..." */
static bool
parse_header(char **tok, int nt, layout *out)
{
	int off;
	if (nt >= 2 && !strcmp(tok[0], "#"))
		off = 1;
	else if (nt >= 1 && !strcmp(tok[0], "#size"))
		off = 0;
	else
		return false;
	memset(out, -1, sizeof *out);
	out->new_format = false;
	out->ncols = nt - off;
	int grp = 0;
	for (int i = off; i < nt; i++) {
		const char *t = i == 0 ? "size" : tok[i];
		int c = i - off;
		if (!strcmp(t, "size"))
			out->size = c;
		else if (!strcmp(t, "type"))
			out->type = c;
		else if (!strcmp(t, "redop"))
			out->redop = c;
		else if (!strcmp(t, "root") || !strcmp(t, "#wrong"))
			out->new_format = true;
		if (!strcmp(t, "time")) {
			if (grp >= 2)
				return false;
			out->time[grp++] = c;
		} else if (grp > 0 && !strcmp(t, "algbw"))
			out->algbw[grp - 1] = c;
		else if (grp > 0 && !strcmp(t, "busbw"))
			out->busbw[grp - 1] = c;
		else if (grp > 0 && (!strcmp(t, "#wrong") || !strcmp(t, "error") || !strcmp(t, "wrong")))
			out->wrong[grp - 1] = c;
	}
	if (out->size != 0 || grp == 0 || out->algbw[0] < 0 || out->busbw[0] < 0)
		return false;
	if (grp == 2 && (out->algbw[1] < 0 || out->busbw[1] < 0))
		return false;
	return true;
}

static char *
dupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *
dupf(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return strdup(buf);
}

static const char *
base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* Opens a table at the current line: settles its op, ranks and nodes. */
static int
open_block(pstate *p, const layout *lay)
{
	const cal_nccl_opts *o = p->opts;
	int line = p->lineno;
	int op = -1;
	char *op_from = NULL;
	if (p->op == -2)
		return perr(p, line, "%s (named at line %d) is not a collective paraplan models (all_reduce_perf, all_gather_perf, "
			    "reduce_scatter_perf, alltoall_perf, broadcast_perf, reduce_perf, sendrecv_perf)",
			    p->op_test, p->op_line);
	if (p->op == -3 && o->op < 0)
		return perr(p, line, "line %d names several nccl-tests binaries: give --op", p->op_line);
	if (p->op >= 0) {
		if (o->op >= 0 && o->op != p->op)
			return perr(p, line, "--op %s, but line %d says this is %s", hw_coll_name((hw_coll)o->op), p->op_line,
				    p->op_test);
		op = p->op;
		op_from = dupf("%s at line %d", p->op_banner ? "test banner" : "test name", p->op_line);
	} else if (o->op >= 0) {
		op = o->op;
		op_from = strdup("--op");
	} else {
		int t = find_test(base_name(p->name));
		if (t >= 0 && tests[t].op >= 0) {
			op = tests[t].op;
			op_from = strdup("file name");
		} else if (t >= 0) {
			return perr(p, line, "%s (the file name) is not a collective paraplan models", tests[t].name);
		}
	}
	if (op < 0)
		return perr(p, line,
			    "cannot tell which collective this table measures (no '# Collective test starting' line and no "
			    "*_perf name in the file or its name): give --op");

	int ranks = 0, nodes = 0;
	char *ranks_from = NULL;
	if (p->ndev > 0) {
		if (p->dup_rank >= 0) {
			free(op_from);
			return perr(p, p->dev_line,
				    "rank %d is listed twice in the device list: each process ran its own test (nccl-tests built "
				    "without MPI under mpirun?), so the table does not measure one group",
				    p->dup_rank);
		}
		ranks = p->ndev;
		nodes = (int)p->nhosts;
		if (o->ranks > 0 && o->ranks != ranks) {
			free(op_from);
			return perr(p, line, "--ranks %d, but the device list at line %d has %d ranks", o->ranks, p->dev_line,
				    ranks);
		}
		if (o->nodes > 0 && o->nodes != nodes) {
			free(op_from);
			return perr(p, line, "--nodes %d, but the device list at line %d has %d hosts", o->nodes, p->dev_line,
				    nodes);
		}
		ranks_from = dupf("device list at line %d", p->dev_line);
	} else if (o->ranks > 0) {
		ranks = o->ranks;
		ranks_from = strdup(o->nodes > 0 && o->gpus_per_node > 0 && o->nodes * o->gpus_per_node == ranks
					    ? "--nodes x --gpus-per-node"
					    : "--ranks");
	} else if (p->nthread_ngpus > 0) {
		ranks = p->nthread_ngpus;
		ranks_from = dupf("nThread x nGpus at line %d", p->banner_line);
	} else {
		free(op_from);
		return perr(p, line,
			    "cannot tell how many ranks ran this test (no '# Using devices' list): give --ranks, or --nodes "
			    "and --gpus-per-node");
	}
	if (nodes <= 0) {
		int per = o->gpus_per_node > 0 ? o->gpus_per_node : o->node_size;
		if (o->nodes > 0)
			nodes = o->nodes;
		else if (per > 0)
			nodes = (ranks + per - 1) / per;
		else
			nodes = 1;
	}
	if (nodes > ranks) {
		free(op_from);
		free(ranks_from);
		return perr(p, line, "%d nodes for %d ranks: check --nodes", nodes, ranks);
	}

	cal_nccl *log = p->log;
	if (PP_GROW(log->blocks, log->cap, log->n + 1) != 0) {
		free(op_from);
		free(ranks_from);
		return pp_err(p->err, p->errlen, PP_ENOMEM, "out of memory");
	}
	nblock *b = &log->blocks[log->n++];
	memset(b, 0, sizeof *b);
	b->file = strdup(p->name);
	b->line = line;
	b->op = (hw_coll)op;
	b->ranks = ranks;
	b->nodes = nodes;
	b->op_from = op_from;
	b->ranks_from = ranks_from;
	b->new_format = lay->new_format;
	b->gpu_name = strdup(p->gpu_name);
	b->nccl = strdup(p->nccl);
	b->host = p->nhosts > 0 ? strdup(p->hosts[0]) : NULL;
	if (b->file == NULL || b->op_from == NULL || b->ranks_from == NULL || b->gpu_name == NULL || b->nccl == NULL)
		return pp_err(p->err, p->errlen, PP_ENOMEM, "out of memory");
	p->cur = b;
	p->lay = *lay;
	return 0;
}

static int
close_block(pstate *p)
{
	nblock *b = p->cur;
	p->cur = NULL;
	if (b != NULL && b->nrows == 0 && b->skipped == 0)
		return perr(p, b->line, "result table without rows (was the test interrupted?)");
	return 0;
}

/* Checks and stores one half (out-of-place g = 0, in-place g = 1) of a data row. */
static int
add_half(pstate *p, char **tok, int g, int64_t size)
{
	nblock *b = p->cur;
	const layout *L = &p->lay;
	const char *where = g == 0 ? "out-of-place" : "in-place";
	const char *ts = tok[L->time[g]], *as = tok[L->algbw[g]], *bs = tok[L->busbw[g]];
	if (L->wrong[g] >= 0 && L->new_format) {
		const char *w = tok[L->wrong[g]];
		if (!is_na(w)) {
			if (!is_uint(w))
				return perr(p, p->lineno, "%s #wrong \"%s\" is not a count", where, w);
			if (strtoll(w, NULL, 10) > 0)
				return perr(p, p->lineno,
					    "nccl-tests counted %s wrong values in the %s result: the measurement is not "
					    "trustworthy",
					    w, where);
		}
	}
	if (is_na(ts) || is_na(as) || is_na(bs) || size == 0) {
		b->skipped++;
		return 0;
	}
	double t, ht, a, ha, bw, hb;
	if (!parse_num(ts, &t, &ht))
		return perr(p, p->lineno, "%s time \"%s\" is not a number", where, ts);
	if (!parse_num(as, &a, &ha))
		return perr(p, p->lineno, "%s algbw \"%s\" is not a number", where, as);
	if (!parse_num(bs, &bw, &hb))
		return perr(p, p->lineno, "%s busbw \"%s\" is not a number", where, bs);
	if (!(t > 0))
		return perr(p, p->lineno, "%s time %s us must be positive", where, ts);
	/* algbw = size / time (GB/s = 1e9 B/s, time in us); the printed time is rounded too. */
	double S = (double)size;
	double lo = S / ((t + ht) * 1e3), hi = t - ht > 0 ? S / ((t - ht) * 1e3) : INFINITY;
	double eps = 1e-9 * fmax(1.0, a);
	if (a < lo - ha - eps || a > hi + ha + eps)
		return perr(p, p->lineno, "%s algbw %s GB/s does not match size %lld B / time %s us = %.4g GB/s", where, as,
			    (long long)size, ts, S / (t * 1e3));
	double f = hw_coll_busbw_factor(b->op, b->ranks);
	double alo = fmax(lo, a - ha), ahi = fmin(hi, a + ha);
	eps = 1e-9 * fmax(1.0, bw);
	if (bw < f * alo - hb - eps || bw > f * ahi + hb + eps)
		return perr(p, p->lineno,
			    "%s busbw %s GB/s does not match algbw %s GB/s x %.4g (nccl-tests' factor for %s on %d ranks) = "
			    "%.4g GB/s: is the rank count right (%s)?",
			    where, bs, as, f, hw_coll_name(b->op), b->ranks, a * f, b->ranks_from);
	if (PP_GROW(b->rows, b->cap, b->nrows + 1) != 0)
		return pp_err(p->err, p->errlen, PP_ENOMEM, "out of memory");
	nrow *r = &b->rows[b->nrows++];
	memset(r, 0, sizeof *r);
	r->line = p->lineno;
	r->r.op = b->op;
	r->r.ranks = b->ranks;
	r->r.nodes = b->nodes;
	r->r.bytes = size;
	r->r.time_s = t * 1e-6;
	r->r.algbw_gbps = S / (t * 1e3);
	r->r.busbw_gbps = r->r.algbw_gbps * f;
	r->r.in_place = g == 1;
	r->r.dtype = b->dtype;
	return 0;
}

static int
data_row(pstate *p, char **tok, int nt)
{
	const layout *L = &p->lay;
	/* Old nccl-tests printed an empty redop column for the operations that reduce nothing
	 * (alltoall, all_gather, broadcast, sendrecv): one field short, read as an empty redop. */
	char *full[MAX_TOKENS + 1];
	hw_coll op = p->cur->op;
	if (nt == L->ncols - 1 && L->redop >= 0 && L->redop < nt && op != HW_ALL_REDUCE && op != HW_REDUCE_SCATTER &&
	    op != HW_REDUCE) {
		static char empty[] = "";
		for (int i = 0, j = 0; i <= nt; i++)
			full[i] = i == L->redop ? empty : tok[j++];
		tok = full;
		nt++;
	}
	if (nt != L->ncols)
		return perr(p, p->lineno, "expected %d fields as the header at line %d declares, got %d", L->ncols,
			    p->cur->line, nt);
	int64_t size;
	if (pp_parse_i64(tok[L->size], &size) != 0 || size < 0)
		return perr(p, p->lineno, "size \"%s\" is not a byte count", tok[L->size]);
	nblock *b = p->cur;
	if (b->dtype == NULL && L->type >= 0 && (b->dtype = strdup(tok[L->type])) == NULL)
		return pp_err(p->err, p->errlen, PP_ENOMEM, "out of memory");
	for (int g = 0; g < 2; g++) {
		if (L->time[g] < 0)
			continue;
		int rc = add_half(p, tok, g, size);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* "#  Rank  0 Group  0 Pid   6899 on ztan-mig-235z device  0 [0000:04:00] NVIDIA H100 80GB HBM3"
 * (older versions have no Group).  `raw` is the untokenized line, for the GPU name. */
static int
device_line(pstate *p, char **tok, int nt, const char *raw)
{
	int64_t rank;
	if (nt < 3 || pp_parse_i64(tok[2], &rank) != 0 || rank < 0 || rank >= MAX_RANKS)
		return 0;
	if ((size_t)rank >= p->seen_cap) {
		size_t old = p->seen_cap;
		if (PP_GROW(p->seen_rank, p->seen_cap, (size_t)rank + 1) != 0)
			return pp_err(p->err, p->errlen, PP_ENOMEM, "out of memory");
		memset(p->seen_rank + old, 0, (p->seen_cap - old) * sizeof *p->seen_rank);
	}
	if (p->seen_rank[rank] && p->dup_rank < 0)
		p->dup_rank = (int)rank;
	p->seen_rank[rank] = true;
	p->ndev++;
	for (int i = 3; i + 1 < nt; i++) {
		if (strcmp(tok[i], "on") != 0)
			continue;
		if (add_host(p, tok[i + 1]) != 0)
			return pp_err(p->err, p->errlen, PP_ENOMEM, "out of memory");
		break;
	}
	const char *br = strchr(raw, ']');
	if (br != NULL && p->gpu_name[0] == '\0') {
		while (*++br == ' ')
			;
		pp_strlcpy(p->gpu_name, br, sizeof p->gpu_name);
		size_t l = strlen(p->gpu_name);
		while (l > 0 && isspace((unsigned char)p->gpu_name[l - 1]))
			p->gpu_name[--l] = '\0';
	}
	return 0;
}

/* NCCL's version, from "nccl-library=22807" in the nccl-tests banner or "NCCL version 2.18.5+cuda12.2". */
static void
version_line(pstate *p, const char *s)
{
	const char *q = strstr(s, "nccl-library=");
	if (q != NULL) {
		long code = strtol(q + 13, NULL, 10);
		if (code >= 20900)
			snprintf(p->nccl, sizeof p->nccl, "%ld.%ld.%ld", code / 10000, code / 100 % 100, code % 100);
		else if (code > 0)
			snprintf(p->nccl, sizeof p->nccl, "%ld.%ld.%ld", code / 1000, code / 100 % 10, code % 100);
		return;
	}
	q = strstr(s, "NCCL version ");
	if (q != NULL) {
		q += 13;
		size_t n = strcspn(q, " \t\r\n+");
		if (n > 0 && n < sizeof p->nccl) {
			memcpy(p->nccl, q, n);
			p->nccl[n] = '\0';
		}
	}
}

static int
parse_line(pstate *p, char *line)
{
	char *s = strip_prefix(line);
	/* Keep an untouched copy for the GPU name (tokenize writes NULs). */
	char raw[512];
	pp_strlcpy(raw, s, sizeof raw);
	char *tok[MAX_TOKENS];
	int nt = tokenize(s, tok);
	if (nt == 0)
		return 0;

	/* Inside a table: a row starts with two integers (size, count). */
	if (p->cur != NULL && is_uint(tok[0]) && nt >= 2 && is_uint(tok[1]))
		return data_row(p, tok, nt);

	layout lay;
	if (parse_header(tok, nt, &lay)) {
		int rc = close_block(p);
		return rc != 0 ? rc : open_block(p, &lay);
	}
	if (tok[0][0] == '#') {
		if (strstr(raw, "Avg bus bandwidth") != NULL || strstr(raw, "Out of bounds values") != NULL)
			return close_block(p);
		if (strstr(raw, "nccl-tests version") != NULL) {
			reset_devices(p);
			p->nthread_ngpus = 0;
			p->gpu_name[0] = '\0';
			p->nccl[0] = '\0';
			version_line(p, raw);
			return close_block(p);
		}
		if (nt >= 5 && !strcmp(tok[1], "nThread") && !strcmp(tok[3], "nGpus")) {
			int64_t a, b;
			reset_devices(p);
			p->gpu_name[0] = '\0';
			if (pp_parse_i64(tok[2], &a) == 0 && pp_parse_i64(tok[4], &b) == 0 && a > 0 && b > 0 && a * b < MAX_RANKS) {
				p->nthread_ngpus = (int)(a * b);
				p->banner_line = p->lineno;
			}
			return close_block(p);
		}
		if (nt >= 3 && !strcmp(tok[1], "Using") && !strcmp(tok[2], "devices")) {
			reset_devices(p);
			p->gpu_name[0] = '\0';
			p->dev_line = p->lineno;
			return close_block(p);
		}
		if (nt >= 4 && !strcmp(tok[1], "Rank") && p->dev_line > 0 && p->cur == NULL)
			return device_line(p, tok, nt, raw);
	}
	if (strstr(raw, "NCCL version ") != NULL)
		version_line(p, raw);
	/* A line naming a test binary: the banner, a command line, a loader message. */
	if (strstr(raw, "_perf") != NULL) {
		int t = find_test(raw);
		if (t != -1) {
			bool banner = strstr(raw, "Collective test starting") != NULL;
			if (t == -3) {
				p->op = -3;
			} else {
				p->op = tests[t].op >= 0 ? tests[t].op : -2;
				pp_strlcpy(p->op_test, tests[t].name, sizeof p->op_test);
			}
			p->op_line = p->lineno;
			p->op_banner = banner;
		}
	}
	/* Anything else (NCCL INFO lines, elisions, launcher noise) is not ours to judge. */
	return 0;
}

int
cal_nccl_parse(cal_nccl *log, const char *name, const char *text, const cal_nccl_opts *opts, char *err, size_t errlen)
{
	static const cal_nccl_opts none = {.op = -1};
	pstate p;
	memset(&p, 0, sizeof p);
	p.name = name;
	p.opts = opts ? opts : &none;
	p.log = log;
	p.err = err;
	p.errlen = errlen;
	p.op = -1;
	p.dup_rank = -1;
	size_t first = log->n;
	int rc = 0;
	char *buf = NULL;
	size_t cap = 0;
	const char *s = text + pp_skip_bom(text, strnlen(text, 3)); /* as every text reader does */
	while (*s) {
		size_t n = strcspn(s, "\n");
		if (PP_GROW(buf, cap, n + 1) != 0) {
			rc = pp_err(err, errlen, PP_ENOMEM, "out of memory");
			break;
		}
		memcpy(buf, s, n);
		buf[n] = '\0';
		p.lineno++;
		if ((rc = parse_line(&p, buf)) != 0)
			break;
		s += n;
		if (*s == '\n')
			s++;
	}
	if (rc == 0)
		rc = close_block(&p);
	if (rc == 0 && log->n == first)
		rc = pp_err(err, errlen, PP_EINPUT,
			    "%s: no nccl-tests result table found (a '#  size  count  type  redop ...' header followed by rows)",
			    name);
	free(buf);
	reset_devices(&p);
	free(p.hosts);
	free(p.host_slot);
	free(p.seen_rank);
	if (rc != 0) {
		while (log->n > first)
			block_free(&log->blocks[--log->n]);
	}
	return rc;
}

int
cal_nccl_read(cal_nccl *log, const char *path, const cal_nccl_opts *opts, char *err, size_t errlen)
{
	char *text;
	size_t len;
	int rc = pp_read_text(path, MAX_LOG_BYTES, &text, &len, err, errlen);
	if (rc != 0)
		return rc;
	if (memchr(text, '\0', len) != NULL) {
		free(text);
		return pp_err(err, errlen, PP_EINPUT, "%s: binary file, expected nccl-tests text output", path);
	}
	rc = cal_nccl_parse(log, path, text, opts, err, errlen);
	free(text);
	return rc;
}

/* ---- storing ------------------------------------------------------------------------------- */

/* A row is a measurement of this system only within what its hardware can do
 * (hw_coll_row_check): 1e300 us, printed consistently as 0.00 GB/s, once reached the database
 * and made serving predict a TTFT of 1e46 ms.  Checked before anything is written, so the
 * message can name the line. */
static int
row_in_bounds(const nblock *b, const nrow *x, const hw_system *sys, char *err, size_t errlen)
{
	char why[600];
	int rc = hw_coll_row_check(sys, &x->r, why, sizeof why);
	return rc == 0 ? 0 : pp_err(err, errlen, rc, "%s:%d: %s", b->file, x->line, why);
}

int
cal_nccl_store(const cal_nccl *log, hw_db *db, const char *system, const char *note, int64_t *run_id, char *err,
	       size_t errlen)
{
	*run_id = 0;
	if (log->n == 0)
		return pp_err(err, errlen, PP_EINPUT, "nothing to import: no nccl-tests result tables");
	size_t rows = 0, skipped = 0;
	for (size_t i = 0; i < log->n; i++) {
		rows += log->blocks[i].nrows;
		skipped += log->blocks[i].skipped;
	}
	if (rows == 0)
		return pp_err(err, errlen, PP_EINPUT,
			      "%s: nothing to import: all %zu half-rows were skipped (size 0 or N/A), no measurement is left",
			      log->blocks[0].file, skipped);
	hw_system sys;
	int rc = hw_system_get(db, system, &sys, err, errlen);
	if (rc != 0)
		return rc;
	for (size_t i = 0; i < log->n; i++)
		for (size_t j = 0; j < log->blocks[i].nrows; j++)
			if ((rc = row_in_bounds(&log->blocks[i], &log->blocks[i].rows[j], &sys, err, errlen)) != 0)
				return rc;
	hw_run_info info = {.system = system, .kind = "import"};
	int nodes = 0, per = -1;
	pp_str files = {0};
	for (size_t i = 0; i < log->n; i++) {
		const nblock *b = &log->blocks[i];
		if (info.host == NULL && b->host)
			info.host = b->host;
		if (info.gpu_name == NULL && b->gpu_name && b->gpu_name[0])
			info.gpu_name = b->gpu_name;
		if (info.nccl == NULL && b->nccl && b->nccl[0])
			info.nccl = b->nccl;
		if (b->nodes > nodes)
			nodes = b->nodes;
		int bp = b->ranks % b->nodes == 0 ? b->ranks / b->nodes : 0;
		per = per == -1 ? bp : per == bp ? per : 0;
		bool seen = false;
		for (size_t j = 0; j < i; j++)
			seen = seen || !strcmp(log->blocks[j].file, b->file);
		if (!seen)
			pp_str_addf(&files, "%s%s", files.len ? ", " : "nccl-tests: ", base_name(b->file));
	}
	info.nodes = nodes;
	info.gpus_per_node = per > 0 ? per : 0;
	if (files.oom) {
		pp_str_free(&files);
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	}
	info.note = note ? note : files.buf;
	hw_run *run;
	rc = hw_run_begin(db, &info, &run, err, errlen);
	pp_str_free(&files);
	if (rc != 0)
		return rc;
	for (size_t i = 0; i < log->n && rc == 0; i++) {
		const nblock *b = &log->blocks[i];
		for (size_t j = 0; j < b->nrows && rc == 0; j++) {
			char origin[300];
			snprintf(origin, sizeof origin, "nccl-tests %s:%d", base_name(b->file), b->rows[j].line);
			hw_coll_row r = b->rows[j].r;
			r.origin = origin;
			char e[512];
			if ((rc = hw_run_add_coll(run, &r, e, sizeof e)) != 0)
				pp_err(err, errlen, rc, "%s:%d: %s", b->file, b->rows[j].line, e);
		}
	}
	if (rc != 0) {
		hw_run_abort(run);
		return rc;
	}
	int64_t id = hw_run_id(run);
	if ((rc = hw_run_commit(run, true, err, errlen)) != 0)
		return rc;
	*run_id = id;
	return 0;
}

/* ---- summary ------------------------------------------------------------------------------- */

cJSON *
cal_nccl_summary(const cal_nccl *log)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *blocks = cJSON_AddArrayToObject(o, "blocks");
	cJSON *groups = cJSON_AddArrayToObject(o, "groups");
	for (size_t i = 0; i < log->n; i++) {
		const nblock *b = &log->blocks[i];
		double peak = 0, minb = INFINITY, maxb = 0;
		for (size_t j = 0; j < b->nrows; j++) {
			const hw_coll_row *r = &b->rows[j].r;
			if (!r->in_place && r->busbw_gbps > peak)
				peak = r->busbw_gbps;
			minb = fmin(minb, (double)r->bytes);
			maxb = fmax(maxb, (double)r->bytes);
		}
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "file", b->file);
		cJSON_AddNumberToObject(x, "line", b->line);
		cJSON_AddStringToObject(x, "op", hw_coll_name(b->op));
		cJSON_AddStringToObject(x, "op_from", b->op_from);
		cJSON_AddNumberToObject(x, "ranks", b->ranks);
		cJSON_AddNumberToObject(x, "nodes", b->nodes);
		cJSON_AddStringToObject(x, "ranks_from", b->ranks_from);
		cJSON_AddStringToObject(x, "format", b->new_format ? "new (root, #wrong)" : "old (error)");
		cJSON_AddStringToObject(x, "dtype", b->dtype ? b->dtype : "");
		cJSON_AddNumberToObject(x, "rows", (double)b->nrows);
		cJSON_AddNumberToObject(x, "skipped", (double)b->skipped);
		cJSON_AddNumberToObject(x, "min_bytes", b->nrows ? minb : 0);
		cJSON_AddNumberToObject(x, "max_bytes", maxb);
		cJSON_AddNumberToObject(x, "peak_busbw_gbps", peak);
		cJSON_AddItemToArray(blocks, x);

		/* Merge into the (op, ranks, nodes) group. */
		cJSON *g = NULL, *it;
		cJSON_ArrayForEach(it, groups)
		{
			if (!strcmp(cJSON_GetObjectItem(it, "op")->valuestring, hw_coll_name(b->op)) &&
			    cJSON_GetObjectItem(it, "ranks")->valueint == b->ranks &&
			    cJSON_GetObjectItem(it, "nodes")->valueint == b->nodes) {
				g = it;
				break;
			}
		}
		if (g == NULL) {
			g = cJSON_CreateObject();
			cJSON_AddStringToObject(g, "op", hw_coll_name(b->op));
			cJSON_AddNumberToObject(g, "ranks", b->ranks);
			cJSON_AddNumberToObject(g, "nodes", b->nodes);
			cJSON_AddNumberToObject(g, "rows", 0);
			cJSON_AddNumberToObject(g, "in_place_rows", 0);
			cJSON_AddNumberToObject(g, "min_bytes", b->nrows ? minb : 0);
			cJSON_AddNumberToObject(g, "max_bytes", 0);
			cJSON_AddNumberToObject(g, "peak_busbw_gbps", 0);
			cJSON_AddItemToArray(groups, g);
		}
		size_t inpl = 0;
		for (size_t j = 0; j < b->nrows; j++)
			inpl += b->rows[j].r.in_place;
		cJSON *f;
		f = cJSON_GetObjectItem(g, "rows");
		cJSON_SetNumberValue(f, f->valuedouble + (double)b->nrows);
		f = cJSON_GetObjectItem(g, "in_place_rows");
		cJSON_SetNumberValue(f, f->valuedouble + (double)inpl);
		f = cJSON_GetObjectItem(g, "min_bytes");
		if (b->nrows && minb < f->valuedouble)
			cJSON_SetNumberValue(f, minb);
		f = cJSON_GetObjectItem(g, "max_bytes");
		if (maxb > f->valuedouble)
			cJSON_SetNumberValue(f, maxb);
		f = cJSON_GetObjectItem(g, "peak_busbw_gbps");
		if (peak > f->valuedouble)
			cJSON_SetNumberValue(f, peak);
	}
	return o;
}
