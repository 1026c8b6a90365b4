/*
 * fit.c -- the cost model's parameters fitted to a system's measurements (GSL).
 *
 * Collectives.  Each measured curve (op, ranks, nodes; out-of-place rows) gives the two numbers
 * of the alpha-beta model the cost model uses, t = latency + wire_bytes / busbw, wire_bytes =
 * size x the bus factor (hardware/cost.c: nccl-tests' factor, and for all-to-all across nodes
 * the part that leaves the node, (n - per_node) / n).  Each is fitted by weighted least squares
 * (relative residuals, weights 1/t^2) over the sizes where it shows -- busbw over the
 * bandwidth-bound tail, latency over the latency-bound head -- because NCCL's curves bend away
 * from any straight line in between (protocol and algorithm switches, a pipeline not yet full),
 * and a fit over all sizes, robust or not, is then wrong at both ends: on the A3 Mega sample it
 * gives 274 GB/s for a curve that reaches 339.  These are the semantics of the shipped defaults
 * (large-message busbw, small-message latency), which fits of the published logs in tests/data
 * reproduce.  From the curves:
 *   coll_eff_intra_all_reduce = busbw of the largest one-node all-reduce / scaleup_gbps;
 *   coll_eff_intra            = mean busbw of the largest one-node all-gather and reduce-scatter
 *                               (else all-to-all, broadcast, reduce) / scaleup_gbps;
 *   p2p_eff_intra             = one-node send/recv busbw / scaleup_gbps;
 *   coll_eff_inter            = median over multi-node curves (all-gather, reduce-scatter,
 *                               broadcast, reduce; else all-reduce; else all-to-all) of busbw /
 *                               (ranks per node x NIC bandwidth per GPU), times the fabric's
 *                               oversubscription for groups beyond a leaf, as cost.c divides;
 *                               an all-reduce faster than that ring bound (tree, NVLS on few
 *                               nodes) counts per NIC as busbw x (k-1)/(n-1), the hierarchical
 *                               conversion hardware/data/params.sql uses for the defaults;
 *   coll_alpha_us, coll_hop_intra_us: the one-node latencies regressed on the algorithm's step
 *                               count as cost.c counts steps (ring all-reduce 2(n-1), all-gather,
 *                               reduce-scatter, broadcast, reduce n-1, all-to-all 2, send/recv 1):
 *                               latency = alpha + steps x hop; with a single step count, alpha
 *                               stays and hop = median((latency - alpha) / steps);
 *   coll_hop_inter_us         = median over multi-node curves of the hop that makes cost.c's
 *                               latency (ring, or for all-reduce the shorter of ring and tree)
 *                               equal the fitted latency, with alpha and hop_intra as fitted or
 *                               as they stand.
 * GEMMs.  The cost model's GEMM time is launch + max(FLOPs / (peak x eff x q(shape, k_ramp)),
 * bytes / HBM).  For a fixed k_ramp that is linear in (launch, 1/eff per dtype) once each row is
 * known to be compute- or memory-bound, so k_ramp is searched (a log grid, then Brent) with a
 * weighted linear least squares inside (variable projection).  k_ramp and kernel_launch_us are
 * stored only when the data determine them: an interior k_ramp, k spanning 8x, rows where the
 * launch is a fifth of the time, a physical launch and efficiency.  Otherwise only
 * gemm_eff_<dtype> is stored, as the best efficiency of the large compute-bound shapes under the
 * k_ramp and launch that stand.
 * Memory.  hbm_eff = the best kind's asymptotic bandwidth (least squares t = a + bytes / bw over
 * buffers of at least 4 x L2) over the datasheet peak.
 *
 * Every parameter is written with origin 'fitted', a method naming the rows and run it came
 * from, and that run's id (deleting the run deletes its fits); all in one transaction.
 */
#include "config.h"
#include "calibrate/cal.h"
#include "calibrate/cal_int.h"
#include "common/pp.h"

#include <cJSON.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_min.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- alpha-beta ---------------------------------------------------------------------------- */

static int
cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Solves the weighted least squares t = a + b w with weights u_i / t_i^2 (relative residuals);
 * w is scaled by its maximum for conditioning.  Returns false when it cannot. */
static bool
wls_ab(const double *w, const double *t, const double *u, size_t n, double *a, double *b)
{
	size_t used = 0;
	double wmax = 0;
	for (size_t i = 0; i < n; i++) {
		used += u[i] > 0;
		wmax = fmax(wmax, w[i]);
	}
	if (used < 2)
		return false;
	gsl_matrix *X = gsl_matrix_alloc(n, 2), *cov = gsl_matrix_alloc(2, 2);
	gsl_vector *y = gsl_vector_alloc(n), *W = gsl_vector_alloc(n), *c = gsl_vector_alloc(2);
	gsl_multifit_linear_workspace *lw = gsl_multifit_linear_alloc(n, 2);
	bool ok = false;
	if (X && cov && y && W && c && lw) {
		for (size_t i = 0; i < n; i++) {
			gsl_matrix_set(X, i, 0, 1.0);
			gsl_matrix_set(X, i, 1, w[i] / wmax);
			gsl_vector_set(y, i, t[i]);
			gsl_vector_set(W, i, u[i] / (t[i] * t[i]));
		}
		double chisq;
		if (gsl_multifit_wlinear(X, W, y, c, cov, &chisq, lw) == GSL_SUCCESS) {
			*a = gsl_vector_get(c, 0);
			*b = gsl_vector_get(c, 1) / wmax;
			ok = isfinite(*a) && isfinite(*b);
		}
	}
	gsl_multifit_linear_free(lw);
	gsl_vector_free(c);
	gsl_vector_free(W);
	gsl_vector_free(y);
	gsl_matrix_free(cov);
	gsl_matrix_free(X);
	return ok;
}

/* The two regimes of a curve, each fitted where it holds.  NCCL's curves follow t = a + w / B
 * at their ends only: between them it changes protocol (LL, LL128, Simple) and algorithm, and
 * the pipeline is not yet full, so no two-parameter line follows the middle; a fit over all
 * sizes (plain or bisquare-robust, whose residual scale the middle inflates) settles on a
 * compromise that is wrong at both ends.  So:
 *   tail: the rows whose busbw (w / t) is at least 80% of the curve's best, and at least the
 *         two largest sizes: t = a' + b w by weighted least squares; B = 1 / b, the marginal
 *         (asymptotic) bus bandwidth (the best measured busbw when the largest size is
 *         bandwidth-bound but the tail too noisy to give a slope within 0.67..1.5 times it);
 *   head: the rows within 1.5 x the fastest time: latency = their weighted mean of t - w / B.
 * The latency is determined when the head spans two sizes where the transfer is under half the
 * time, the bandwidth when the tail spans two sizes where it is over half. */
int
cal_fit_alpha_beta(const double *w, const double *t, size_t n, cal_ab_fit *out)
{
	memset(out, 0, sizeof *out);
	if (n < 3)
		return PP_EINPUT;
	double *u = malloc(2 * n * sizeof *u);
	if (u == NULL)
		return PP_ENOMEM;
	double *ws = u + n;
	double peak = 0, tmin = INFINITY;
	for (size_t i = 0; i < n; i++) {
		if (!(w[i] > 0) || !(t[i] > 0) || !isfinite(w[i]) || !isfinite(t[i])) {
			free(u);
			return PP_EINPUT;
		}
		ws[i] = w[i];
		peak = fmax(peak, w[i] / t[i]);
		tmin = fmin(tmin, t[i]);
	}
	qsort(ws, n, sizeof *ws, cmp_dbl);
	size_t distinct = 1;
	for (size_t i = 1; i < n; i++)
		distinct += ws[i] != ws[i - 1];
	if (distinct < 3) {
		free(u);
		return PP_EINPUT;
	}
	/* The second largest distinct size: the tail always holds the two largest. */
	double w2 = ws[n - 1];
	for (size_t i = n - 1; i-- > 0;)
		if (ws[i] != ws[n - 1]) {
			w2 = ws[i];
			break;
		}
	for (size_t i = 0; i < n; i++)
		u[i] = w[i] / t[i] >= 0.8 * peak || w[i] >= w2;
	gsl_error_handler_t *old = gsl_set_error_handler_off();
	double a2, b, B = peak;
	bool slope = wls_ab(w, t, u, n, &a2, &b) && b > 0;
	gsl_set_error_handler(old);
	size_t ilast = 0;
	for (size_t i = 0; i < n; i++)
		if (w[i] > w[ilast] || (w[i] == w[ilast] && t[i] < t[ilast]))
			ilast = i;
	if (slope && 1.0 / b >= peak / 1.5 && 1.0 / b <= 1.5 * peak)
		B = 1.0 / b;
	else if (t[ilast] >= 2.0 * tmin)
		B = peak; /* bandwidth-bound, but the tail's slope is noise */
	else if (slope)
		B = 1.0 / b; /* not bandwidth-bound yet: the slope is a guess, flagged below */
	double bw_w[2] = {-1, -1}, lat_w[2] = {-1, -1};
	for (size_t i = 0; i < n; i++) {
		if (!u[i])
			continue;
		if (w[i] / B / t[i] >= 0.5 && w[i] != bw_w[0] && w[i] != bw_w[1]) {
			bw_w[1] = bw_w[0];
			bw_w[0] = w[i];
		}
	}
	double sw = 0, swa = 0;
	for (size_t i = 0; i < n; i++) {
		if (t[i] > 1.5 * tmin)
			continue;
		double wt = 1.0 / (t[i] * t[i]);
		sw += wt;
		swa += wt * (t[i] - w[i] / B);
		if (w[i] / B / t[i] < 0.5 && w[i] != lat_w[0] && w[i] != lat_w[1]) {
			lat_w[1] = lat_w[0];
			lat_w[0] = w[i];
		}
	}
	double a = swa / sw;
	out->latency_s = a;
	out->busbw = B;
	out->n = n;
	for (size_t i = 0; i < n; i++) /* the middle, used by neither end */
		out->downweighted += !u[i] && t[i] > 1.5 * tmin;
	double ss = 0;
	for (size_t i = 0; i < n; i++) {
		double r = (t[i] - a - w[i] / B) / t[i];
		ss += r * r;
	}
	out->rms_rel = sqrt(ss / (double)n);
	out->latency_determined = a > 0 && lat_w[1] > 0;
	out->busbw_determined = bw_w[1] > 0;
	free(u);
	return 0;
}

/* ---- the fit's state ----------------------------------------------------------------------- */

#define MAX_PENDING 32

typedef struct pending {
	const char *scope;
	char key[40];
	double value, previous;
	char method[200];
} pending;

typedef struct grp {
	hw_coll op;
	int ranks, nodes;
	size_t rows;
	int64_t run; /* newest run among its rows */
	double peak_gbps;
	cal_ab_fit f;
	bool ok;
} grp;

typedef struct fitctx {
	hw_db *db;
	hw_system sys;
	cJSON *current; /* hw_cost_describe's parameters */
	cJSON *report, *params, *skipped;
	pending pend[MAX_PENDING];
	size_t npend;
	int64_t newest;
	grp *g;
	size_t ng;
} fitctx;

static double
cur(const fitctx *x, const char *key)
{
	const cJSON *p;
	cJSON_ArrayForEach(p, cJSON_GetObjectItem(x->current, "parameters"))
	{
		if (!strcmp(cJSON_GetObjectItem(p, "key")->valuestring, key))
			return cJSON_GetObjectItem(p, "value")->valuedouble;
	}
	return NAN;
}

static void
skip(fitctx *x, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
skip(fitctx *x, const char *key, const char *fmt, ...)
{
	char buf[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "key", key);
	cJSON_AddStringToObject(o, "reason", buf);
	cJSON_AddItemToArray(x->skipped, o);
}

static void
propose(fitctx *x, const char *scope, const char *key, double value, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void
propose(fitctx *x, const char *scope, const char *key, double value, const char *fmt, ...)
{
	if (x->npend >= MAX_PENDING || !isfinite(value))
		return;
	pending *p = &x->pend[x->npend++];
	p->scope = scope;
	pp_strlcpy(p->key, key, sizeof p->key);
	p->value = value;
	p->previous = cur(x, key);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->method, sizeof p->method, fmt, ap);
	va_end(ap);
}

static void
note_run(fitctx *x, int64_t run)
{
	if (run > x->newest)
		x->newest = run;
}

/* ---- collectives --------------------------------------------------------------------------- */

/* The bytes each rank moves over its bottleneck per byte of nccl-tests' size, as hw_cost_coll
 * counts them. */
static double
wire_factor(hw_coll op, int ranks, int nodes)
{
	if (op == HW_ALL_TO_ALL && nodes > 1) {
		int per = ranks / nodes;
		return (double)(ranks - per) / (double)ranks;
	}
	return hw_coll_busbw_factor(op, op == HW_SEND_RECV ? 2 : ranks);
}

/* Steps of the algorithm as hardware/cost.c's coll_latency_us counts them (ring). */
static double
ring_steps(hw_coll op, int n)
{
	switch (op) {
	case HW_ALL_REDUCE:
		return 2.0 * (n - 1);
	case HW_ALL_GATHER:
	case HW_REDUCE_SCATTER:
	case HW_BROADCAST:
	case HW_REDUCE:
		return (double)(n - 1);
	case HW_ALL_TO_ALL:
		return 2.0;
	case HW_SEND_RECV:
	default:
		return 1.0;
	}
}

static int
fit_groups(fitctx *x, const hw_meas *m, char *err, size_t errlen)
{
	size_t cap = 0;
	for (size_t i = 0; i < m->ncoll;) {
		const hw_coll_row *r0 = &m->coll[i];
		size_t j = i;
		while (j < m->ncoll && m->coll[j].op == r0->op && m->coll[j].ranks == r0->ranks && m->coll[j].nodes == r0->nodes)
			j++;
		if (PP_GROW(x->g, cap, x->ng + 1) != 0)
			return pp_err(err, errlen, PP_ENOMEM, "out of memory");
		grp *g = &x->g[x->ng++];
		memset(g, 0, sizeof *g);
		g->op = r0->op;
		g->ranks = r0->ranks;
		g->nodes = r0->nodes;
		double *w = malloc((j - i) * sizeof *w), *t = malloc((j - i) * sizeof *t);
		if (w == NULL || t == NULL) {
			free(w);
			free(t);
			return pp_err(err, errlen, PP_ENOMEM, "out of memory");
		}
		double f = wire_factor(g->op, g->ranks, g->nodes);
		for (size_t k = i; k < j; k++) {
			if (m->coll[k].in_place)
				continue;
			w[g->rows] = (double)m->coll[k].bytes * f;
			t[g->rows] = m->coll[k].time_s;
			g->rows++;
			if (m->coll_run[k] > g->run)
				g->run = m->coll_run[k];
			g->peak_gbps = fmax(g->peak_gbps, m->coll[k].busbw_gbps);
		}
		g->ok = g->rows > 0 && (g->ranks >= 2 || g->op == HW_SEND_RECV) &&
			cal_fit_alpha_beta(w, t, g->rows, &g->f) == 0;
		free(w);
		free(t);
		i = j;
	}
	return 0;
}

static const grp *
largest(const fitctx *x, hw_coll op, bool intra)
{
	const grp *best = NULL;
	for (size_t i = 0; i < x->ng; i++) {
		const grp *g = &x->g[i];
		if (g->op != op || !g->ok || !g->f.busbw_determined || (g->nodes == 1) != intra)
			continue;
		if (best == NULL || g->ranks > best->ranks || (g->ranks == best->ranks && g->rows > best->rows))
			best = g;
	}
	return best;
}

static void
describe_group(const grp *g, char *buf, size_t n)
{
	snprintf(buf, n, "%zu %s rows, %d ranks on %d node%s, run %lld", g->rows, hw_coll_name(g->op), g->ranks, g->nodes,
		 g->nodes == 1 ? "" : "s", (long long)g->run);
}

static void
fit_intra(fitctx *x, double *alpha_us, double *hop_us)
{
	double up = x->sys.scaleup_gbps * 1e9;
	char d[160];
	const grp *ar = largest(x, HW_ALL_REDUCE, true);
	if (ar != NULL) {
		note_run(x, ar->run);
		describe_group(ar, d, sizeof d);
		propose(x, "system", "coll_eff_intra_all_reduce", ar->f.busbw / up,
			"busbw %.1f GB/s (weighted least squares over the bandwidth-bound sizes of %s) / scale-up %.0f GB/s", ar->f.busbw / 1e9, d,
			x->sys.scaleup_gbps);
	} else {
		skip(x, "coll_eff_intra_all_reduce", "no one-node all_reduce curve reaching its bandwidth-bound sizes");
	}

	static const hw_coll ring_ops[] = {HW_ALL_GATHER, HW_REDUCE_SCATTER};
	static const hw_coll other_ops[] = {HW_ALL_TO_ALL, HW_BROADCAST, HW_REDUCE};
	const hw_coll *ops = ring_ops;
	size_t nops = 2;
	double sum = 0;
	int used = 0;
	pp_str names = {0};
	for (int pass = 0; pass < 2 && used == 0; pass++) {
		if (pass == 1) {
			ops = other_ops;
			nops = 3;
		}
		for (size_t i = 0; i < nops; i++) {
			const grp *g = largest(x, ops[i], true);
			if (g == NULL)
				continue;
			note_run(x, g->run);
			sum += g->f.busbw;
			used++;
			pp_str_addf(&names, "%s%s %d ranks %.1f GB/s", used > 1 ? ", " : "", hw_coll_name(g->op), g->ranks,
				    g->f.busbw / 1e9);
		}
	}
	if (used > 0)
		propose(x, "system", "coll_eff_intra", sum / used / up, "fitted busbw (%s) / scale-up %.0f GB/s",
			names.buf ? names.buf : "", x->sys.scaleup_gbps);
	else
		skip(x, "coll_eff_intra", "no one-node all_gather, reduce_scatter, alltoall, broadcast or reduce curve");
	pp_str_free(&names);

	const grp *sr = largest(x, HW_SEND_RECV, true);
	if (sr != NULL) {
		note_run(x, sr->run);
		describe_group(sr, d, sizeof d);
		propose(x, "system", "p2p_eff_intra", sr->f.busbw / up, "busbw %.1f GB/s (weighted least squares over the bandwidth-bound sizes of %s) / scale-up %.0f GB/s",
			sr->f.busbw / 1e9, d, x->sys.scaleup_gbps);
	} else {
		skip(x, "p2p_eff_intra", "no one-node sendrecv curve");
	}

	/* Latency against the algorithm's steps. */
	double xs[64], ys[64];
	size_t n = 0;
	int64_t run = 0;
	for (size_t i = 0; i < x->ng && n < 64; i++) {
		const grp *g = &x->g[i];
		if (!g->ok || g->nodes != 1 || !g->f.latency_determined)
			continue;
		xs[n] = ring_steps(g->op, g->op == HW_SEND_RECV ? 2 : g->ranks);
		ys[n] = g->f.latency_s * 1e6;
		n++;
		if (g->run > run)
			run = g->run;
	}
	*alpha_us = cur(x, "coll_alpha_us");
	*hop_us = cur(x, "coll_hop_intra_us");
	if (n == 0) {
		skip(x, "coll_alpha_us", "no one-node curve whose small sizes determine a latency");
		skip(x, "coll_hop_intra_us", "no one-node curve whose small sizes determine a latency");
		return;
	}
	note_run(x, run);
	bool distinct = false;
	for (size_t i = 1; i < n; i++)
		distinct = distinct || xs[i] != xs[0];
	if (distinct) {
		double c0, c1, c00, c01, c11, ss;
		if (gsl_fit_linear(xs, 1, ys, 1, n, &c0, &c1, &c00, &c01, &c11, &ss) == GSL_SUCCESS && c0 >= 0 && c1 > 0) {
			*alpha_us = c0;
			*hop_us = c1;
			propose(x, "system", "coll_alpha_us", c0,
				"least squares latency = alpha + steps x hop over %zu one-node curves (runs up to %lld)", n,
				(long long)run);
			propose(x, "system", "coll_hop_intra_us", c1,
				"least squares latency = alpha + steps x hop over %zu one-node curves (runs up to %lld)", n,
				(long long)run);
			return;
		}
	}
	/* One step count (or an unphysical regression): alpha stays, the hop takes the rest. */
	double h[64];
	size_t nh = 0;
	for (size_t i = 0; i < n; i++)
		if (ys[i] > *alpha_us)
			h[nh++] = (ys[i] - *alpha_us) / xs[i];
	skip(x, "coll_alpha_us", "%s",
	     distinct ? "the latency regression on steps is not physical (negative alpha or hop); alpha kept"
		      : "one-node curves of a single step count cannot separate alpha from the hop; alpha kept");
	if (nh == 0) {
		skip(x, "coll_hop_intra_us", "fitted latencies are below alpha (%.2f us)", *alpha_us);
		return;
	}
	*hop_us = cal_median(h, nh);
	propose(x, "system", "coll_hop_intra_us", *hop_us,
		"median (latency - alpha %.2f us) / steps over %zu one-node curves (runs up to %lld)", *alpha_us, nh,
		(long long)run);
}

static void
fit_inter(fitctx *x, double alpha_us, double hop_intra_us)
{
	double nic_gpu = x->sys.gpus_per_node > 0
				 ? (double)x->sys.nics_per_node * x->sys.nic_gbit / 8.0 * 1e9 / (double)x->sys.gpus_per_node
				 : 0.0;
	double leaf = cur(x, "fabric_leaf_nodes");
	double eff[64], hop[64];
	size_t ne = 0, nh = 0, hier = 0;
	int64_t run = 0;
	/* Efficiency: ring-like ops first, else all-reduce (whose tree and NVLS can beat the
	 * NICs' share on few nodes), else all-to-all. */
	static const int pref[HW_NCOLL] = {[HW_ALL_GATHER] = 0, [HW_REDUCE_SCATTER] = 0, [HW_BROADCAST] = 0, [HW_REDUCE] = 0,
					   [HW_ALL_REDUCE] = 1, [HW_ALL_TO_ALL] = 2, [HW_SEND_RECV] = 3};
	int best = 3;
	for (size_t i = 0; i < x->ng; i++)
		if (x->g[i].ok && x->g[i].f.busbw_determined && x->g[i].nodes > 1 && pref[x->g[i].op] < best)
			best = pref[x->g[i].op];
	const char *from = best == 0 ? "all_gather/reduce_scatter/broadcast/reduce" : best == 1 ? "all_reduce" : "alltoall";
	for (size_t i = 0; i < x->ng && ne < 64; i++) {
		const grp *g = &x->g[i];
		if (!g->ok || g->nodes <= 1)
			continue;
		double per_node = (double)g->ranks / (double)g->nodes;
		if (pref[g->op] == best && best < 3 && nic_gpu > 0 && g->f.busbw_determined) {
			double base = per_node * nic_gpu;
			if ((double)g->nodes > leaf && x->sys.oversubscription > 1.0)
				base /= x->sys.oversubscription;
			double e = g->f.busbw / base;
			/* An all-reduce faster than the ring over the NICs allows (NCCL's tree, NVLS) is
			 * converted as the shipped defaults are (hardware/data/params.sql): hierarchically,
			 * each GPU's NIC carries busbw x (k - 1) / (n - 1) for k nodes and n ranks. */
			if (g->op == HW_ALL_REDUCE && e > 1.0) {
				e = g->f.busbw * (double)(g->nodes - 1) / (double)(g->ranks - 1) / nic_gpu;
				hier++;
			}
			eff[ne++] = e;
			if (g->run > run)
				run = g->run;
		}
		/* The inter-node hop that reproduces the fitted latency under cost.c's step count. */
		double lat = g->f.latency_s * 1e6 - alpha_us;
		int n = g->op == HW_SEND_RECV ? 2 : g->ranks;
		double he;
		if (g->op == HW_ALL_REDUCE) {
			double ring = lat / (2.0 * (n - 1));
			double tree = (lat - 2.0 * (per_node - 1.0) * hop_intra_us) / (2.0 * ceil(log2((double)g->nodes)));
			he = fmax(ring, tree);
		} else {
			he = lat / ring_steps(g->op, n);
		}
		if (he > 0 && nh < 64 && g->f.latency_determined) {
			hop[nh++] = he;
			if (g->run > run)
				run = g->run;
		}
	}
	if (nic_gpu <= 0)
		skip(x, "coll_eff_inter", "the system has no NICs");
	else if (ne == 0)
		skip(x, "coll_eff_inter", "no multi-node curve reaching its bandwidth-bound sizes");
	else {
		note_run(x, run);
		double e = cal_median(eff, ne);
		propose(x, "system", "coll_eff_inter", e,
			"median fitted busbw / (ranks per node x %.1f GB/s NIC per GPU) over %zu multi-node %s curves%s (runs up to %lld)",
			nic_gpu / 1e9, ne, from, hier ? ", tree/NVLS all-reduce per NIC as busbw (k-1)/(n-1)" : "", (long long)run);
	}
	if (nh == 0)
		skip(x, "coll_hop_inter_us", "no multi-node curve whose small sizes determine a latency above alpha");
	else {
		note_run(x, run);
		propose(x, "system", "coll_hop_inter_us", cal_median(hop, nh),
			"median hop making cost.c's step latency equal the fitted latency over %zu multi-node curves (alpha "
			"%.2f us, intra hop %.2f us)",
			nh, alpha_us, hop_intra_us);
	}
}

/* ---- GEMM ---------------------------------------------------------------------------------- */

typedef struct gpt {
	hw_dtype t;
	double m, n, k, time, flops, peak, mem;
	int col; /* index of the dtype's efficiency column */
} gpt;

typedef struct gfit {
	const gpt *p;
	size_t n;
	int nd;
	const hw_gpu *gpu;
	/* results of the last evaluation */
	double launch, u[HW_NDTYPES]; /* u = 1 / eff */
	bool have_u[HW_NDTYPES];
	size_t ncompute;
	double chisq;
} gfit;

/* Weighted least squares for a fixed k_ramp, alternating with the compute/memory-bound
 * classification of each row: compute-bound rows give t = launch + x / eff (x = FLOPs / (peak x
 * shape efficiency)), memory-bound ones t - bytes / HBM = launch.  Returns the sum of squared
 * relative residuals (INFINITY when the system cannot be solved). */
static double
gemm_sse(gfit *G, double kr)
{
	size_t n = G->n;
	double *xq = malloc(n * sizeof *xq);
	bool *comp = malloc(n * sizeof *comp);
	double sse = INFINITY;
	if (!xq || !comp)
		goto done;
	for (size_t i = 0; i < n; i++) {
		const gpt *r = &G->p[i];
		xq[i] = r->flops / (r->peak * hw_gemm_shape_eff(G->gpu, kr, r->m, r->n, r->k));
		comp[i] = xq[i] / 0.7 >= r->mem; /* first guess: eff 0.7 */
	}
	for (int iter = 0; iter < 10; iter++) {
		/* One column per dtype that has compute-bound rows (others would be singular). */
		int col[HW_NDTYPES], p = 1;
		for (int d = 0; d < G->nd; d++)
			col[d] = -1;
		for (size_t i = 0; i < n; i++)
			if (comp[i] && col[G->p[i].col] < 0)
				col[G->p[i].col] = p++;
		gsl_matrix *X = gsl_matrix_calloc(n, (size_t)p), *cov = gsl_matrix_alloc((size_t)p, (size_t)p);
		gsl_vector *y = gsl_vector_alloc(n), *w = gsl_vector_alloc(n), *c = gsl_vector_alloc((size_t)p);
		gsl_multifit_linear_workspace *lw = gsl_multifit_linear_alloc(n, (size_t)p);
		double chisq = INFINITY;
		int s = GSL_ENOMEM;
		if (X && cov && y && w && c && lw) {
			for (size_t i = 0; i < n; i++) {
				const gpt *r = &G->p[i];
				gsl_matrix_set(X, i, 0, 1.0);
				gsl_vector_set(w, i, 1.0 / (r->time * r->time));
				if (comp[i]) {
					gsl_matrix_set(X, i, (size_t)col[r->col], xq[i]);
					gsl_vector_set(y, i, r->time);
				} else {
					gsl_vector_set(y, i, r->time - r->mem);
				}
			}
			s = gsl_multifit_wlinear(X, w, y, c, cov, &chisq, lw);
			if (s == GSL_SUCCESS) {
				G->launch = gsl_vector_get(c, 0);
				for (int d = 0; d < G->nd; d++) {
					G->have_u[d] = col[d] > 0 && gsl_vector_get(c, (size_t)col[d]) > 0;
					if (col[d] > 0)
						G->u[d] = gsl_vector_get(c, (size_t)col[d]);
				}
			}
		}
		gsl_multifit_linear_free(lw);
		gsl_vector_free(c);
		gsl_vector_free(w);
		gsl_vector_free(y);
		gsl_matrix_free(cov);
		gsl_matrix_free(X);
		if (s != GSL_SUCCESS)
			goto done;
		bool changed = false;
		G->ncompute = 0;
		for (size_t i = 0; i < n; i++) {
			const gpt *r = &G->p[i];
			bool cb = !G->have_u[r->col] || xq[i] * G->u[r->col] >= r->mem;
			changed = changed || cb != comp[i];
			comp[i] = cb;
			G->ncompute += cb;
		}
		sse = chisq;
		if (!changed)
			break;
	}
done:
	G->chisq = sse;
	free(comp);
	free(xq);
	return sse;
}

static double
gemm_sse_log(double lkr, void *ctx)
{
	return gemm_sse(ctx, exp(lkr));
}

static void
fit_gemm(fitctx *x, const hw_meas *m, double hbm_eff)
{
	const hw_gpu *gpu = &x->sys.gpu;
	const char *G = gpu->name;
	if (m->ngemm == 0) {
		skip(x, "gemm_eff", "no GEMM rows for %s", G);
		return;
	}
	gpt *p = calloc(m->ngemm, sizeof *p);
	if (p == NULL)
		return;
	int col_of[HW_NDTYPES], nd = 0;
	hw_dtype dt_of[HW_NDTYPES];
	for (int d = 0; d < HW_NDTYPES; d++)
		col_of[d] = -1;
	size_t n = 0;
	double hbm = gpu->hbm_gbps * 1e9 * hbm_eff;
	double kmin = INFINITY, kmax = 0;
	int64_t run = 0;
	for (size_t i = 0; i < m->ngemm; i++) {
		const hw_gemm_row *g = &m->gemm[i];
		double peak = gpu->peak_tflops[g->dtype] * 1e12;
		if (!(peak > 0))
			continue;
		if (col_of[g->dtype] < 0) {
			dt_of[nd] = g->dtype;
			col_of[g->dtype] = nd++;
		}
		gpt *r = &p[n++];
		r->t = g->dtype;
		r->m = (double)g->m;
		r->n = (double)g->n;
		r->k = (double)g->k;
		r->time = g->time_s;
		r->flops = 2.0 * r->m * r->n * r->k;
		r->peak = peak;
		r->mem = (r->m * r->k + r->k * r->n + r->m * r->n) * hw_dtype_bytes(g->dtype) / hbm;
		r->col = col_of[g->dtype];
		kmin = fmin(kmin, r->k);
		kmax = fmax(kmax, r->k);
		if (g->run_id > run)
			run = g->run_id;
	}
	cJSON *rep = cJSON_AddObjectToObject(x->report, "gemm");
	cJSON_AddNumberToObject(rep, "rows", (double)n);
	if (n == 0) {
		skip(x, "gemm_eff", "GEMM rows only in dtypes without a datasheet peak for %s", G);
		free(p);
		return;
	}
	note_run(x, run);

	/* k_ramp: a log grid from 1 to 4096, then Brent around the best point. */
	gfit F = {.p = p, .n = n, .nd = nd, .gpu = gpu};
	enum { NGRID = 49 };
	double lo = log(1.0), hi = log(4096.0), f[NGRID];
	int bi = 0;
	for (int i = 0; i < NGRID; i++) {
		f[i] = gemm_sse(&F, exp(lo + (hi - lo) * i / (NGRID - 1)));
		if (f[i] < f[bi])
			bi = i;
	}
	double lkr = lo + (hi - lo) * bi / (NGRID - 1);
	bool interior = bi > 0 && bi < NGRID - 1 && f[bi] < f[bi - 1] && f[bi] < f[bi + 1];
	if (interior) {
		gsl_error_handler_t *old = gsl_set_error_handler_off();
		gsl_min_fminimizer *mz = gsl_min_fminimizer_alloc(gsl_min_fminimizer_brent);
		gsl_function fn = {gemm_sse_log, &F};
		double a = lo + (hi - lo) * (bi - 1) / (NGRID - 1), b = lo + (hi - lo) * (bi + 1) / (NGRID - 1);
		if (mz != NULL && gsl_min_fminimizer_set_with_values(mz, &fn, lkr, f[bi], a, f[bi - 1], b, f[bi + 1]) == GSL_SUCCESS) {
			for (int it = 0; it < 100; it++) {
				if (gsl_min_fminimizer_iterate(mz) != GSL_SUCCESS)
					break;
				a = gsl_min_fminimizer_x_lower(mz);
				b = gsl_min_fminimizer_x_upper(mz);
				if (gsl_min_test_interval(a, b, 1e-7, 0.0) == GSL_SUCCESS)
					break;
			}
			lkr = gsl_min_fminimizer_x_minimum(mz);
		}
		gsl_min_fminimizer_free(mz);
		gsl_set_error_handler(old);
	}
	double kr = exp(lkr);
	gemm_sse(&F, kr);
	double rms = sqrt(F.chisq / (double)n);
	/* Rows where the launch is at least a fifth of the time: they pin the launch. */
	size_t nlaunch = 0;
	for (size_t i = 0; i < n; i++)
		nlaunch += F.launch > 0 && F.launch / p[i].time >= 0.2;
	bool effs_ok = true;
	for (int d = 0; d < nd; d++)
		effs_ok = effs_ok && F.have_u[d] && 1.0 / F.u[d] > 0.02 && 1.0 / F.u[d] <= 1.05;
	cJSON_AddNumberToObject(rep, "compute_bound_rows", (double)F.ncompute);
	cJSON_AddNumberToObject(rep, "k_ramp", kr);
	cJSON_AddNumberToObject(rep, "launch_us", F.launch * 1e6);
	cJSON_AddNumberToObject(rep, "rms_rel_err", rms);
	const char *why = NULL;
	if (F.ncompute < 10)
		why = "fewer than 10 compute-bound GEMM rows";
	else if (kmax < 8 * kmin)
		why = "k spans less than a factor of 8";
	else if (!interior)
		why = "the fit does not settle on a k_ramp inside 1..4096";
	else if (!(F.launch >= 0.1e-6 && F.launch <= 50e-6))
		why = "the fitted launch time is outside 0.1..50 us";
	else if (nlaunch < 3)
		why = "fewer than 3 rows where the launch is a fifth of the time";
	else if (!effs_ok)
		why = "a fitted efficiency is outside 0.02..1.05";
	else if (rms > 0.25)
		why = "the shape model misses the rows by more than 25% rms";
	if (why == NULL) {
		cJSON_AddBoolToObject(rep, "joint_fit", true);
		propose(x, "gpu", "gemm_k_ramp", kr,
			"least squares of the GEMM shape model over %zu rows (runs up to %lld): rms %.1f%%", n, (long long)run,
			100.0 * rms);
		propose(x, "gpu", "kernel_launch_us", F.launch * 1e6,
			"least squares of the GEMM shape model over %zu rows (runs up to %lld): rms %.1f%%", n, (long long)run,
			100.0 * rms);
		for (int d = 0; d < nd; d++) {
			char key[32];
			size_t cnt = 0;
			for (size_t i = 0; i < n; i++)
				cnt += p[i].col == d;
			snprintf(key, sizeof key, "gemm_eff_%s", hw_dtype_name(dt_of[d]));
			propose(x, "gpu", key, 1.0 / F.u[d],
				"least squares of the GEMM shape model (k_ramp %.0f, launch %.2f us) over %zu %s rows of %zu", kr,
				F.launch * 1e6, cnt, hw_dtype_name(dt_of[d]), n);
		}
		free(p);
		return;
	}
	cJSON_AddBoolToObject(rep, "joint_fit", false);
	cJSON_AddStringToObject(rep, "why_not_joint", why);
	skip(x, "gemm_k_ramp", "%s", why);
	skip(x, "kernel_launch_us", "%s", why);
	/* The best efficiency of the large compute-bound shapes under the standing k_ramp and launch. */
	double kr0 = cur(x, "gemm_k_ramp"), l0 = cur(x, "kernel_launch_us") * 1e-6;
	for (int d = 0; d < nd; d++) {
		double best = 0;
		size_t cnt = 0;
		for (size_t i = 0; i < n; i++) {
			const gpt *r = &p[i];
			if (r->col != d || r->time < 20.0 * l0)
				continue;
			double e = r->flops / (r->peak * hw_gemm_shape_eff(gpu, kr0, r->m, r->n, r->k) * (r->time - l0));
			if (r->mem > 0.5 * (r->time - l0))
				continue; /* memory-bound: says nothing of the tensor rate */
			cnt++;
			best = fmax(best, e);
		}
		char key[32];
		snprintf(key, sizeof key, "gemm_eff_%s", hw_dtype_name(dt_of[d]));
		if (cnt == 0)
			skip(x, key, "no large compute-bound %s GEMM rows", hw_dtype_name(dt_of[d]));
		else
			propose(x, "gpu", key, best,
				"best of %zu large compute-bound %s GEMMs over peak x shape model (k_ramp %.0f, launch %.2f us as they "
				"stand), runs up to %lld",
				cnt, hw_dtype_name(dt_of[d]), kr0, l0 * 1e6, (long long)run);
	}
	free(p);
}

/* ---- memory bandwidth ---------------------------------------------------------------------- */

static double
fit_membw(fitctx *x, const hw_meas *m)
{
	const hw_gpu *gpu = &x->sys.gpu;
	double hbm_eff = cur(x, "hbm_eff");
	double min_bytes = fmax(4.0 * gpu->l2_bytes, 64.0 * 1048576.0);
	cJSON *arr = cJSON_AddArrayToObject(x->report, "bandwidth");
	double best = 0;
	char best_kind[16] = "";
	size_t best_n = 0;
	int64_t run = 0;
	for (size_t i = 0; i < m->nmembw;) {
		size_t j = i;
		while (j < m->nmembw && !strcmp(m->membw[j].kind, m->membw[i].kind))
			j++;
		double X[256], T[256], W[256];
		size_t n = 0;
		double maxbw = 0;
		int64_t krun = 0;
		for (size_t k = i; k < j && n < 256; k++) {
			if ((double)m->membw[k].bytes < min_bytes)
				continue;
			X[n] = (double)m->membw[k].bytes;
			T[n] = m->membw[k].time_s;
			W[n] = 1.0 / (T[n] * T[n]);
			maxbw = fmax(maxbw, X[n] / T[n]);
			if (m->membw[k].run_id > krun)
				krun = m->membw[k].run_id;
			n++;
		}
		double bw = maxbw, lat = 0;
		bool distinct = false;
		for (size_t k = 1; k < n; k++)
			distinct = distinct || X[k] != X[0];
		if (distinct) {
			double c0, c1, c00, c01, c11, chisq;
			if (gsl_fit_wlinear(X, 1, W, 1, T, 1, n, &c0, &c1, &c00, &c01, &c11, &chisq) == GSL_SUCCESS && c1 > 0) {
				bw = 1.0 / c1;
				lat = c0;
			}
		}
		if (n > 0) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "kind", m->membw[i].kind);
			cJSON_AddNumberToObject(o, "rows", (double)n);
			cJSON_AddNumberToObject(o, "gbps", bw / 1e9);
			cJSON_AddNumberToObject(o, "latency_us", lat * 1e6);
			cJSON_AddItemToArray(arr, o);
			if (bw > best) {
				best = bw;
				best_n = n;
				run = krun;
				pp_strlcpy(best_kind, m->membw[i].kind, sizeof best_kind);
			}
		}
		i = j;
	}
	if (best <= 0) {
		skip(x, "hbm_eff", "no bandwidth rows of at least %.0f MiB for %s", min_bytes / 1048576.0, gpu->name);
		return hbm_eff;
	}
	note_run(x, run);
	double e = best / (gpu->hbm_gbps * 1e9);
	propose(x, "gpu", "hbm_eff", fmin(e, 1.0), "%s bandwidth %.0f GB/s (least squares t = a + bytes/bw over %zu sizes >= %.0f MiB, run %lld) / peak %.0f GB/s%s",
		best_kind, best / 1e9, best_n, min_bytes / 1048576.0, (long long)run, gpu->hbm_gbps,
		e > 1.0 ? " (above the peak: capped at 1)" : "");
	return fmin(e, 1.0);
}

/* ---- the whole fit ------------------------------------------------------------------------- */

static cJSON *
groups_json(const fitctx *x)
{
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; i < x->ng; i++) {
		const grp *g = &x->g[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "op", hw_coll_name(g->op));
		cJSON_AddNumberToObject(o, "ranks", g->ranks);
		cJSON_AddNumberToObject(o, "nodes", g->nodes);
		cJSON_AddNumberToObject(o, "rows", (double)g->rows);
		cJSON_AddNumberToObject(o, "run", (double)g->run);
		cJSON_AddBoolToObject(o, "fitted", g->ok);
		if (g->ok) {
			cJSON_AddNumberToObject(o, "latency_us", g->f.latency_s * 1e6);
			cJSON_AddNumberToObject(o, "busbw_gbps", g->f.busbw / 1e9);
			cJSON_AddNumberToObject(o, "rms_rel_err", g->f.rms_rel);
			cJSON_AddNumberToObject(o, "set_aside", (double)g->f.downweighted);
			cJSON_AddBoolToObject(o, "latency_determined", g->f.latency_determined);
			cJSON_AddBoolToObject(o, "busbw_determined", g->f.busbw_determined);
		}
		cJSON_AddNumberToObject(o, "peak_busbw_gbps", g->peak_gbps);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

static int
store(fitctx *x, char *err, size_t errlen)
{
	if (hw_readonly(x->db))
		return pp_err(err, errlen, PP_EIO, "%s: database is read-only: nothing was written", hw_path(x->db));
	int rc = hw_exec_simple(x->db, "BEGIN IMMEDIATE", err, errlen);
	if (rc != 0)
		return rc;
	char source[96];
	snprintf(source, sizeof source, "paraplan calibrate --fit (newest run used: %lld)", (long long)x->newest);
	for (size_t i = 0; i < x->npend && rc == 0; i++) {
		const pending *p = &x->pend[i];
		const char *subject = !strcmp(p->scope, "gpu") ? x->sys.gpu.name : x->sys.name;
		rc = hw_param_set(x->db, p->scope, subject, p->key, p->value, "fitted", p->method, source, x->newest, err, errlen);
	}
	if (rc != 0) {
		hw_exec_simple(x->db, "ROLLBACK", NULL, 0);
		return rc;
	}
	return hw_exec_simple(x->db, "COMMIT", err, errlen);
}

int
cal_fit(hw_db *db, const char *system, int64_t run_id, cJSON **report, char *err, size_t errlen)
{
	if (report)
		*report = NULL;
	fitctx x;
	memset(&x, 0, sizeof x);
	x.db = db;
	int rc = hw_system_get(db, system, &x.sys, err, errlen);
	if (rc != 0)
		return rc;
	hw_meas m;
	if ((rc = hw_meas_get(db, system, run_id, &m, err, errlen)) != 0)
		return rc;
	hw_cost *c;
	if ((rc = hw_cost_new(db, system, &c, err, errlen)) != 0) {
		hw_meas_free(&m);
		return rc;
	}
	x.current = hw_cost_describe(c);
	hw_cost_free(c);
	x.report = cJSON_CreateObject();
	cJSON_AddStringToObject(x.report, "system", system);
	cJSON_AddStringToObject(x.report, "gpu", x.sys.gpu.name);
	if (run_id > 0)
		cJSON_AddNumberToObject(x.report, "run", (double)run_id);
	cJSON_AddNumberToObject(x.report, "collective_rows", (double)m.ncoll);
	cJSON_AddNumberToObject(x.report, "gemm_rows", (double)m.ngemm);
	cJSON_AddNumberToObject(x.report, "bandwidth_rows", (double)m.nmembw);
	x.skipped = cJSON_CreateArray();

	if ((rc = fit_groups(&x, &m, err, errlen)) == 0) {
		double alpha, hop;
		fit_intra(&x, &alpha, &hop);
		fit_inter(&x, alpha, hop);
		double hbm_eff = fit_membw(&x, &m);
		fit_gemm(&x, &m, hbm_eff);
		cJSON_AddItemToObject(x.report, "collectives", groups_json(&x));
		x.params = cJSON_AddArrayToObject(x.report, "parameters");
		for (size_t i = 0; i < x.npend; i++) {
			const pending *p = &x.pend[i];
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "scope", p->scope);
			cJSON_AddStringToObject(o, "subject", !strcmp(p->scope, "gpu") ? x.sys.gpu.name : x.sys.name);
			cJSON_AddStringToObject(o, "key", p->key);
			cJSON_AddNumberToObject(o, "value", p->value);
			if (isfinite(p->previous))
				cJSON_AddNumberToObject(o, "previous", p->previous);
			cJSON_AddStringToObject(o, "method", p->method);
			cJSON_AddItemToArray(x.params, o);
		}
		cJSON_AddItemToObject(x.report, "skipped", x.skipped);
		x.skipped = NULL;
		cJSON_AddNumberToObject(x.report, "run_id", (double)x.newest);
		if (x.npend == 0) {
			if (m.ncoll + m.ngemm + m.nmembw == 0)
				rc = pp_err(err, errlen, PP_EINPUT, "%s: no measurements to fit%s (import nccl-tests logs or run 'paraplan calibrate')",
					    system, run_id > 0 ? " in that run" : "");
			else
				rc = pp_err(err, errlen, PP_EINPUT, "%s: the measurements determine no parameter (see the reasons with --json)",
					    system);
		} else {
			rc = store(&x, err, errlen);
		}
	}
	cJSON_Delete(x.skipped);
	cJSON_Delete(x.current);
	free(x.g);
	hw_meas_free(&m);
	if (rc == 0 && report)
		*report = x.report;
	else if (rc != 0 && report && x.npend == 0 && rc == PP_EINPUT)
		*report = x.report; /* the reasons */
	else
		cJSON_Delete(x.report);
	return rc;
}
