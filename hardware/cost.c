/*
 * cost.c -- the cost model: one op to a duration, with the provenance of the number.
 *
 * Precedence, for every kind of op: measured tables of this GPU or system first (interpolated),
 * then parameters fitted to measurements, then datasheet figures times default efficiencies.
 *
 * GEMM.  A roofline: t = launch + max(FLOPs / (peak * eff * q_wave * q_k), bytes / (HBM * eff_hbm)).
 *   eff is the GPU's achieved fraction of the dense peak on large GEMMs of that dtype;
 *   q_wave is wave quantization: a GEMM of C output tiles runs ceil(C / SMs) waves, and the last
 *   wave leaves SMs idle (NVIDIA, "Matrix Multiplication Background", tile and wave
 *   quantization), taking the best of the usual tiles; GEMMs with too few tiles to fill the
 *   GPU split k across SMs (split-K);
 *   q_k = k / (k + k_ramp) charges each tile's prologue and epilogue as k_ramp extra steps of k,
 *   which is why skinny-k GEMMs fall short of the peak.
 *   Measured GEMM rows correct the model by the ratio measured/model at the nearest measured
 *   shape (in log space), so measurements are honoured and the physics generalizes them.
 * Memory-bound kernels: t = launch + bytes / (HBM * eff_hbm).
 * Attention (fused, flash-style): a roofline with the kernel's own achieved fraction of peak.
 * Collectives.  t = latency + wire_bytes / busbw, where wire_bytes = size x nccl-tests' bus
 *   factor.  busbw comes from measured nccl-tests rows of this system (log-log interpolation
 *   over size of the nearest configuration: same span, closest rank count; a different number
 *   of ranks per node scales with the NICs those ranks use), else from link figures: inside a
 *   scale-up domain the per-GPU NVLink bandwidth times an efficiency, across nodes the NICs
 *   behind the group's GPUs on each node (per_node x NIC bandwidth per GPU), capped by NVLink,
 *   divided by the fabric's oversubscription for groups that cross the leaf level.
 *   Latency is a fixed launch-and-sync cost alpha plus a per-step cost for each step of the
 *   algorithm: a ring all-gather or reduce-scatter of n ranks takes n - 1 steps, a ring
 *   all-reduce 2(n - 1) (NCCL's tree across k nodes, 2(g - 1) intra-node steps and 2 log2 k
 *   inter-node ones, when that is shorter); a step costs the intra-node hop inside one node and
 *   the inter-node hop once the ring leaves it.  Without fitted hops, they follow from the
 *   system's small-message all-reduce times (hardware.md 2.4): hop_intra = (t_intra - alpha) /
 *   2(g - 1) for the g GPUs of a node, hop_inter = (t_inter - t_intra) / 2 for two nodes.
 *   This is what makes all-gathers over hundreds of ranks latency bound at moderate sizes.
 */
#include "config.h"
#include "hardware/hw_int.h"

#include <cJSON.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_interp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Defaults for a GPU or system that has no parameter rows at all (a user-added one).  The
 * shipped GPUs and systems carry their own rows in hardware/data/params.sql with sources. */
#define GENERIC_GEMM_EFF 0.70
#define GENERIC_K_RAMP 128.0
#define GENERIC_LAUNCH_US 3.0
#define GENERIC_HOST_OP_US 0.0
#define GENERIC_HBM_EFF 0.80
#define GENERIC_ATTN_FWD 0.50
#define GENERIC_ATTN_BWD 0.40
#define GENERIC_CONV_EFF 0.60
#define GENERIC_COLL_INTRA 0.75
#define GENERIC_COLL_INTER 0.90
#define GENERIC_P2P_INTRA 0.75
#define GENERIC_ITER_OVERHEAD_S 0.001
#define GENERIC_ALPHA_US 10.0
#define GENERIC_OVERLAP_SLOWDOWN 0.0
#define GENERIC_LEAF_NODES 16.0

typedef struct pval {
	double v;
	hw_prov prov;
	char origin[12];
	char method[160];
} pval;

/* One measured busbw curve: an op on a (ranks, nodes) configuration. */
typedef struct curve {
	hw_coll op;
	int ranks, nodes;
	size_t n;
	double *lsize, *lbw; /* log bytes, log busbw (bytes/s) */
	gsl_interp *interp;
} curve;

typedef struct gemm_pt {
	hw_dtype t;
	double m, n, k, time_s;
} gemm_pt;

struct hw_cost {
	hw_system sys;
	/* per GPU */
	pval gemm_eff[HW_NDTYPES];
	pval k_ramp, launch_us, host_op_us, hbm_eff, attn_fwd, attn_bwd, conv_eff;
	/* per system */
	pval coll_intra, coll_intra_ar, coll_inter, p2p_intra, alpha_us, hop_intra_us, hop_inter_us, iter_overhead_s,
		leaf_nodes, overlap_slowdown, serve_ar_us;
	bool have_serve_ar;
	curve *curves;
	size_t ncurves;
	gemm_pt *gemms;
	size_t ngemms;
	bool hbm_measured;
};

static hw_prov
prov_of_origin(const char *origin)
{
	if (!strcmp(origin, "measured"))
		return HW_PROV_MEASURED;
	if (!strcmp(origin, "fitted"))
		return HW_PROV_FITTED;
	return HW_PROV_DATASHEET; /* default and user figures rest on datasheets or judgement */
}

/* Reads a parameter (or its fallback key); without a row, `def` applies, described by
 * def_method (NULL: the generic default). */
static void
load_param(hw_db *db, const char *scope, const char *subject, const char *key, const char *fallback_key, double def,
	   const char *def_method, pval *out)
{
	hw_param p;
	if (hw_param_get(db, scope, subject, key, &p) == 0 ||
	    (fallback_key != NULL && hw_param_get(db, scope, subject, fallback_key, &p) == 0)) {
		out->v = p.value;
		out->prov = prov_of_origin(p.origin);
		pp_strlcpy(out->origin, p.origin, sizeof out->origin);
		pp_strlcpy(out->method, p.method, sizeof out->method);
		return;
	}
	out->v = def;
	out->prov = HW_PROV_DATASHEET;
	pp_strlcpy(out->origin, def_method ? "datasheet" : "generic", sizeof out->origin);
	pp_strlcpy(out->method, def_method ? def_method : "generic default for hardware without parameters (hardware/cost.c)",
		   sizeof out->method);
}

void
hw_cost_free(hw_cost *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->ncurves; i++) {
		gsl_interp_free(c->curves[i].interp);
		free(c->curves[i].lsize);
		free(c->curves[i].lbw);
	}
	free(c->curves);
	free(c->gemms);
	free(c);
}

const hw_system *
hw_cost_system(const hw_cost *c)
{
	return &c->sys;
}

int
hw_cost_use_gpus_per_node(hw_cost *c, int n, char *err, size_t errlen)
{
	hw_system *s = &c->sys;
	if (n < 1 || n > s->gpus_per_node)
		return pp_err(err, errlen, PP_EUSAGE, "--gpus-per-node must be from 1 to the %d GPUs of a %s node, got %d",
			      s->gpus_per_node, s->name, n);
	if (n == s->gpus_per_node)
		return 0;
	double f = (double)n / (double)s->gpus_per_node;
	/* a node-wide NVLink domain shrinks with the node; a multi-node one (NVL72) does not */
	if (s->scaleup_domain <= s->gpus_per_node)
		s->scaleup_domain = n;
	/* each GPU keeps its share of the NICs (rail-optimized nodes): the same bandwidth per GPU */
	if (s->nics_per_node > 0) {
		double per_gpu_gbit = (double)s->nics_per_node * s->nic_gbit / (double)s->gpus_per_node;
		s->nics_per_node = (int)ceil((double)s->nics_per_node * f);
		s->nic_gbit = per_gpu_gbit * (double)n / (double)s->nics_per_node;
	}
	s->node_power_kw *= f;
	s->gpus_per_node = n;
	return 0;
}

/* Measured collective rows of this system, out-of-place, averaged per size, one curve per
 * (op, ranks, nodes). */
static int
load_curves(hw_db *db, hw_cost *c, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->sql,
			       "SELECT m.op, m.ranks, m.nodes, m.bytes, avg(m.busbw_gbps) FROM coll_meas m"
			       " JOIN cal_run r ON r.id = m.run_id"
			       " WHERE r.system = ? AND r.status = 'complete' AND m.in_place = 0 AND m.busbw_gbps > 0"
			       " GROUP BY m.op, m.ranks, m.nodes, m.bytes ORDER BY m.op, m.ranks, m.nodes, m.bytes",
			       -1, &st, NULL) != SQLITE_OK)
		return hw_sqlerr(db, err, errlen, "reading collective measurements");
	sqlite3_bind_text(st, 1, c->sys.name, -1, SQLITE_TRANSIENT);
	size_t cap = 0, pcap = 0;
	curve *cur = NULL;
	while (sqlite3_step(st) == SQLITE_ROW) {
		hw_coll op;
		if (hw_coll_parse(hw_col_text(st, 0), &op) != 0)
			continue;
		int ranks = sqlite3_column_int(st, 1), nodes = sqlite3_column_int(st, 2);
		double bytes = sqlite3_column_double(st, 3), bw = sqlite3_column_double(st, 4) * 1e9;
		if (cur == NULL || cur->op != op || cur->ranks != ranks || cur->nodes != nodes) {
			if (PP_GROW(c->curves, cap, c->ncurves + 1) != 0)
				goto oom;
			cur = &c->curves[c->ncurves++];
			memset(cur, 0, sizeof *cur);
			cur->op = op;
			cur->ranks = ranks;
			cur->nodes = nodes;
			pcap = 0;
		}
		/* Both arrays grow in step from the same capacity. */
		size_t need = cur->n + 1, c1 = pcap, c2 = pcap;
		if (PP_GROW(cur->lsize, c1, need) != 0 || PP_GROW(cur->lbw, c2, need) != 0)
			goto oom;
		pcap = c1;
		cur->lsize[cur->n] = log(bytes);
		cur->lbw[cur->n] = log(bw);
		cur->n++;
	}
	sqlite3_finalize(st);
	/* A curve needs two points to interpolate; single points stay usable as constants. */
	for (size_t i = 0; i < c->ncurves; i++) {
		curve *cv = &c->curves[i];
		if (cv->n >= 2) {
			cv->interp = gsl_interp_alloc(gsl_interp_linear, cv->n);
			if (cv->interp == NULL || gsl_interp_init(cv->interp, cv->lsize, cv->lbw, cv->n) != GSL_SUCCESS)
				return pp_err(err, errlen, PP_ENOMEM, "cannot build the interpolation of measured collectives");
		}
	}
	return 0;
oom:
	sqlite3_finalize(st);
	return pp_err(err, errlen, PP_ENOMEM, "out of memory");
}

static int
load_gemms(hw_db *db, hw_cost *c, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->sql,
			       "SELECT g.dtype, g.m, g.n, g.k, avg(g.time_s) FROM gemm_meas g JOIN cal_run r ON r.id = g.run_id"
			       " LEFT JOIN system s ON s.name = r.system"
			       " WHERE r.status = 'complete' AND (s.gpu = ?1 OR r.gpu_name = ?1)"
			       " GROUP BY g.dtype, g.m, g.n, g.k ORDER BY g.dtype, g.m, g.n, g.k",
			       -1, &st, NULL) != SQLITE_OK)
		return hw_sqlerr(db, err, errlen, "reading GEMM measurements");
	sqlite3_bind_text(st, 1, c->sys.gpu.name, -1, SQLITE_TRANSIENT);
	size_t cap = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		hw_dtype t;
		if (hw_dtype_parse(hw_col_text(st, 0), &t) != 0)
			continue;
		if (PP_GROW(c->gemms, cap, c->ngemms + 1) != 0) {
			sqlite3_finalize(st);
			return pp_err(err, errlen, PP_ENOMEM, "out of memory");
		}
		gemm_pt *g = &c->gemms[c->ngemms++];
		g->t = t;
		g->m = sqlite3_column_double(st, 1);
		g->n = sqlite3_column_double(st, 2);
		g->k = sqlite3_column_double(st, 3);
		g->time_s = sqlite3_column_double(st, 4);
	}
	sqlite3_finalize(st);
	return 0;
}

/* Achieved HBM fraction from measured bandwidth rows: the best large-size copy or read-write
 * rate over the peak. */
static void
load_membw(hw_db *db, hw_cost *c)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->sql,
			       "SELECT max(b.gbps) FROM membw_meas b JOIN cal_run r ON r.id = b.run_id"
			       " LEFT JOIN system s ON s.name = r.system"
			       " WHERE r.status = 'complete' AND (s.gpu = ?1 OR r.gpu_name = ?1) AND b.bytes >= 268435456",
			       -1, &st, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_text(st, 1, c->sys.gpu.name, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
		double gbps = sqlite3_column_double(st, 0);
		if (gbps > 0 && c->sys.gpu.hbm_gbps > 0) {
			c->hbm_eff.v = fmin(1.0, gbps / c->sys.gpu.hbm_gbps);
			c->hbm_eff.prov = HW_PROV_MEASURED;
			pp_strlcpy(c->hbm_eff.origin, "measured", sizeof c->hbm_eff.origin);
			pp_strlcpy(c->hbm_eff.method, "best measured copy/read-write bandwidth >= 256 MiB over the peak",
				   sizeof c->hbm_eff.method);
			c->hbm_measured = true;
		}
	}
	sqlite3_finalize(st);
}

int
hw_cost_new(hw_db *db, const char *system, hw_cost **out, char *err, size_t errlen)
{
	*out = NULL;
	hw_cost *c = calloc(1, sizeof *c);
	if (c == NULL)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	int rc = hw_system_get(db, system, &c->sys, err, errlen);
	if (rc != 0) {
		free(c);
		return rc;
	}
	const char *g = c->sys.gpu.name;
	for (int t = 0; t < HW_NDTYPES; t++) {
		char key[32];
		snprintf(key, sizeof key, "gemm_eff_%s", hw_dtype_name((hw_dtype)t));
		load_param(db, "gpu", g, key, "gemm_eff", GENERIC_GEMM_EFF, NULL, &c->gemm_eff[t]);
	}
	load_param(db, "gpu", g, "gemm_k_ramp", NULL, GENERIC_K_RAMP, NULL, &c->k_ramp);
	load_param(db, "gpu", g, "kernel_launch_us", NULL, GENERIC_LAUNCH_US, NULL, &c->launch_us);
	load_param(db, "gpu", g, "host_op_us", NULL, GENERIC_HOST_OP_US, NULL, &c->host_op_us);
	load_param(db, "gpu", g, "hbm_eff", NULL, GENERIC_HBM_EFF, NULL, &c->hbm_eff);
	load_param(db, "gpu", g, "attn_eff_fwd", NULL, GENERIC_ATTN_FWD, NULL, &c->attn_fwd);
	load_param(db, "gpu", g, "attn_eff_bwd", NULL, GENERIC_ATTN_BWD, NULL, &c->attn_bwd);
	load_param(db, "gpu", g, "conv_eff", NULL, GENERIC_CONV_EFF, NULL, &c->conv_eff);
	const char *s = c->sys.name;
	load_param(db, "system", s, "coll_eff_intra", NULL, GENERIC_COLL_INTRA, NULL, &c->coll_intra);
	load_param(db, "system", s, "coll_eff_intra_all_reduce", "coll_eff_intra", GENERIC_COLL_INTRA, NULL, &c->coll_intra_ar);
	load_param(db, "system", s, "coll_eff_inter", NULL, GENERIC_COLL_INTER, NULL, &c->coll_inter);
	load_param(db, "system", s, "p2p_eff_intra", NULL, GENERIC_P2P_INTRA, NULL, &c->p2p_intra);
	load_param(db, "system", s, "coll_alpha_us", NULL, GENERIC_ALPHA_US, NULL, &c->alpha_us);
	{
		double gpn = c->sys.gpus_per_node > 1 ? (double)c->sys.gpus_per_node : 2.0;
		double hi = (c->sys.scaleup_latency_us - c->alpha_us.v) / (2.0 * (gpn - 1.0));
		double he = (c->sys.scaleout_latency_us - c->sys.scaleup_latency_us) / 2.0;
		load_param(db, "system", s, "coll_hop_intra_us", NULL, hi > 0.1 ? hi : 0.1,
			   "(the system's scaleup_latency_us - alpha) / 2(gpus per node - 1)", &c->hop_intra_us);
		load_param(db, "system", s, "coll_hop_inter_us", NULL, he > 0.5 ? he : 0.5,
			   "(the system's scaleout_latency_us - scaleup_latency_us) / 2", &c->hop_inter_us);
	}
	load_param(db, "system", s, "iter_overhead_s", NULL, GENERIC_ITER_OVERHEAD_S, NULL, &c->iter_overhead_s);
	{
		hw_param sp;
		c->have_serve_ar = hw_param_get(db, "system", s, "serve_allreduce_us", &sp) == 0;
		load_param(db, "system", s, "serve_allreduce_us", NULL, 0.0, "none: small all-reduces follow the NCCL model",
			   &c->serve_ar_us);
	}
	load_param(db, "system", s, "fabric_leaf_nodes", NULL, GENERIC_LEAF_NODES, NULL, &c->leaf_nodes);
	load_param(db, "gpu", g, "overlap_slowdown", NULL, GENERIC_OVERLAP_SLOWDOWN, NULL, &c->overlap_slowdown);
	if ((rc = load_curves(db, c, err, errlen)) != 0 || (rc = load_gemms(db, c, err, errlen)) != 0) {
		hw_cost_free(c);
		return rc;
	}
	load_membw(db, c);
	*out = c;
	return 0;
}

/* ---- compute ------------------------------------------------------------------------------- */

static double
peak_flops(const hw_cost *c, hw_dtype t)
{
	double p = c->sys.gpu.peak_tflops[t];
	/* Weight-only int4 and unsupported dtypes run on the 16-bit tensor path. */
	if (!(p > 0))
		p = c->sys.gpu.peak_tflops[HW_BF16] > 0 ? c->sys.gpu.peak_tflops[HW_BF16] : c->sys.gpu.peak_tflops[HW_FP16];
	if (!(p > 0))
		p = c->sys.gpu.peak_tflops[HW_FP32];
	return p * 1e12;
}

static hw_dtype
eff_dtype(const hw_cost *c, hw_dtype t)
{
	if (c->sys.gpu.peak_tflops[t] > 0)
		return t;
	return c->sys.gpu.peak_tflops[HW_BF16] > 0 ? HW_BF16 : HW_FP16;
}

static double
hbm_bw(const hw_cost *c)
{
	return c->sys.gpu.hbm_gbps * 1e9 * c->hbm_eff.v;
}

/* Fraction of the peak a GEMM's shape allows: for each of the usual tiles, the output tiles
 * (split along k when there are too few tiles to fill the GPU: split-K, as cuBLAS and cuDNN do
 * for weight gradients with a long reduction) run in waves of one unit per SM; the last wave
 * leaves SMs idle, padding wastes part of the edge tiles, and each unit pays k_ramp steps of
 * prologue and epilogue on its k / splits steps.  The best tile wins, as the library's
 * heuristics pick. */
double
hw_gemm_shape_eff(const hw_gpu *gpu, double k_ramp, double m, double n, double k)
{
	/* 16 x 128: the narrow tiles of decode's skinny GEMMs (a few tokens against the weights) */
	static const double tiles[][2] = {{128, 128}, {128, 256}, {256, 128}, {64, 128}, {128, 64}, {64, 64}, {16, 128}};
	double sms = gpu->sms > 0 ? (double)gpu->sms : 100.0;
	double best = 0.0;
	for (size_t i = 0; i < sizeof tiles / sizeof tiles[0]; i++) {
		double tm = tiles[i][0], tn = tiles[i][1];
		double ntiles = ceil(m / tm) * ceil(n / tn);
		double splits = 1.0;
		if (ntiles < sms) {
			splits = floor(sms / ntiles);
			if (splits > floor(k / 512.0))
				splits = floor(k / 512.0);
			if (splits < 1.0)
				splits = 1.0;
		}
		double waves = ceil(ntiles * splits / sms);
		double useful = (m * n * splits) / (waves * sms * tm * tn);
		double kk = k / splits;
		double e = useful * kk / (kk + k_ramp);
		/* Small tiles run at a lower per-SM rate than the large ones eff is quoted for. */
		if (tm * tn < 128 * 128)
			e *= tm * tn < 64 * 128 ? 0.6 : 0.8;
		if (e > best)
			best = e;
	}
	return best > 1.0 ? 1.0 : best;
}

static double
shape_efficiency(const hw_cost *c, double m, double n, double k)
{
	return hw_gemm_shape_eff(&c->sys.gpu, c->k_ramp.v, m, n, k);
}

/* The roofline of a GEMM computing at dtype t whose k x n operand (the weights) is stored in
 * wbytes bytes per element (weight-only quantization: int4 0.5, int8 1) and whose activations
 * are t's width (16-bit for the weight-only formats). */
static double
gemm_model_w(const hw_cost *c, hw_dtype t, double wbytes, double m, double n, double k, double batch)
{
	double flops = 2.0 * m * n * k * batch;
	hw_dtype et = eff_dtype(c, t);
	/* Batched GEMMs fill the waves with their batch. */
	double q = shape_efficiency(c, m, n * batch, k);
	double compute = flops / (peak_flops(c, t) * c->gemm_eff[et].v * q);
	double abytes = hw_dtype_bytes(t);
	double bytes = (m * k + m * n) * batch * abytes + k * n * batch * wbytes;
	double mem = bytes / hbm_bw(c);
	return c->launch_us.v * 1e-6 + (compute > mem ? compute : mem);
}

static double
gemm_model(const hw_cost *c, hw_dtype t, double m, double n, double k, double batch)
{
	/* Weight-only int4 computes in 16-bit with 4-bit weights. */
	if (t == HW_INT4)
		return gemm_model_w(c, HW_BF16, 0.5, m, n, k, batch);
	return gemm_model_w(c, t, hw_dtype_bytes(t), m, n, k, batch);
}

double
hw_cost_gemm_w(const hw_cost *c, hw_dtype t, double wbytes, double m, double n, double k, double batch, hw_prov *prov)
{
	if (prov)
		*prov = c->gemm_eff[eff_dtype(c, t)].prov;
	if (!(m > 0) || !(n > 0) || !(k > 0) || !(batch > 0))
		return 0.0;
	if (wbytes == hw_dtype_bytes(t))
		return hw_cost_gemm(c, t, m, n, k, batch, prov); /* measured shapes apply */
	return gemm_model_w(c, t, wbytes, m, n, k, batch);
}

double
hw_cost_gemm(const hw_cost *c, hw_dtype t, double m, double n, double k, double batch, hw_prov *prov)
{
	if (!(m > 0) || !(n > 0) || !(k > 0) || !(batch > 0)) {
		if (prov)
			*prov = HW_PROV_DATASHEET;
		return 0.0;
	}
	double model = gemm_model(c, t, m, n, k, batch);
	/* The nearest measured shape of this dtype, within a factor of 2 in every dimension. */
	const gemm_pt *best = NULL;
	double bestd = 3.0 * log(2.0) * log(2.0);
	for (size_t i = 0; i < c->ngemms; i++) {
		const gemm_pt *g = &c->gemms[i];
		if (g->t != t)
			continue;
		double dm = log(g->m / m), dn = log(g->n / (n * batch)), dk = log(g->k / k);
		if (fabs(dm) > log(2.0) + 1e-9 || fabs(dn) > log(2.0) + 1e-9 || fabs(dk) > log(2.0) + 1e-9)
			continue;
		double d = dm * dm + dn * dn + dk * dk;
		if (d <= bestd) {
			bestd = d;
			best = g;
		}
	}
	if (best != NULL) {
		double at = gemm_model(c, t, best->m, best->n, best->k, 1.0);
		if (prov)
			*prov = HW_PROV_MEASURED;
		return model * (best->time_s / at);
	}
	if (prov)
		*prov = c->gemm_eff[eff_dtype(c, t)].prov;
	return model;
}

double
hw_cost_conv(const hw_cost *c, hw_dtype t, double m, double n, double k, hw_prov *prov)
{
	hw_prov p;
	double g = hw_cost_gemm(c, t, m, n, k, 1.0, &p);
	double launch = c->launch_us.v * 1e-6;
	if (prov)
		*prov = p == HW_PROV_MEASURED ? c->conv_eff.prov : p;
	/* cuDNN's implicit GEMM reaches a fraction of the GEMM rate on the same shape. */
	return launch + (g - launch) / c->conv_eff.v;
}

double
hw_cost_mem(const hw_cost *c, double bytes, hw_prov *prov)
{
	if (prov)
		*prov = c->hbm_eff.prov;
	if (!(bytes > 0))
		return 0.0;
	return c->launch_us.v * 1e-6 + bytes / hbm_bw(c);
}

double
hw_cost_attn(const hw_cost *c, hw_dtype t, double flops, double bytes, bool bwd, hw_prov *prov)
{
	const pval *e = bwd ? &c->attn_bwd : &c->attn_fwd;
	if (prov)
		*prov = e->prov;
	if (!(flops > 0))
		return 0.0;
	double compute = flops / (peak_flops(c, t) * e->v);
	double mem = bytes / hbm_bw(c);
	return c->launch_us.v * 1e-6 + (compute > mem ? compute : mem);
}

/* ---- communication ------------------------------------------------------------------------- */

double
hw_cost_scaleup_bw(const hw_cost *c)
{
	return c->sys.scaleup_gbps * 1e9;
}

double
hw_cost_nic_bw(const hw_cost *c)
{
	if (c->sys.gpus_per_node <= 0)
		return 0.0;
	return (double)c->sys.nics_per_node * c->sys.nic_gbit / 8.0 * 1e9 / (double)c->sys.gpus_per_node;
}

/* Modelled bus bandwidth (bytes/s) of a group with `per_node` ranks on each of `nodes` nodes. */
static double
model_busbw(const hw_cost *c, hw_coll op, int nodes, int per_node, hw_prov *prov)
{
	double up = hw_cost_scaleup_bw(c);
	if (nodes <= 1) {
		const pval *e = op == HW_ALL_REDUCE ? &c->coll_intra_ar : op == HW_SEND_RECV ? &c->p2p_intra : &c->coll_intra;
		*prov = e->prov;
		return up * e->v;
	}
	double nic = hw_cost_nic_bw(c) * (double)per_node;
	double bw = nic * c->coll_inter.v;
	double upcap = up * c->coll_intra.v;
	if (bw > upcap)
		bw = upcap;
	if ((double)nodes > c->leaf_nodes.v && c->sys.oversubscription > 1.0)
		bw /= c->sys.oversubscription;
	*prov = c->coll_inter.prov;
	return bw;
}

/* Looks for a measured curve to use for (op, nodes, per_node): same op (all-gather and
 * reduce-scatter may borrow all-reduce's busbw), same span, nearest rank count. */
static const curve *
find_curve(const hw_cost *c, hw_coll op, int ranks, int nodes)
{
	const curve *best = NULL;
	double bestd = INFINITY;
	for (int pass = 0; pass < 2 && best == NULL; pass++) {
		hw_coll want = op;
		if (pass == 1) {
			if (op != HW_ALL_GATHER && op != HW_REDUCE_SCATTER)
				break;
			want = HW_ALL_REDUCE;
		}
		for (size_t i = 0; i < c->ncurves; i++) {
			const curve *cv = &c->curves[i];
			if (cv->op != want || (cv->nodes > 1) != (nodes > 1))
				continue;
			double d = fabs(log((double)cv->ranks / (double)ranks)) + 0.01 * fabs((double)(cv->nodes - nodes));
			if (d < bestd) {
				bestd = d;
				best = cv;
			}
		}
	}
	return best;
}

static double
curve_eval(const curve *cv, double bytes)
{
	double x = log(bytes);
	if (cv->n == 1)
		return exp(cv->lbw[0]);
	if (x <= cv->lsize[0])
		return exp(cv->lbw[0] + (x - cv->lsize[0])); /* below the table: latency bound, busbw ~ size */
	if (x >= cv->lsize[cv->n - 1])
		return exp(cv->lbw[cv->n - 1]);
	return exp(gsl_interp_eval(cv->interp, cv->lsize, cv->lbw, x, NULL));
}

/* Launch plus per-step latency of a collective's algorithm (see the top of the file). */
static double
coll_latency_us(const hw_cost *c, hw_coll op, int n, int per_node, int nodes)
{
	double a = c->alpha_us.v, hi = c->hop_intra_us.v, he = c->hop_inter_us.v;
	double step = nodes > 1 ? he : hi;
	double g = (double)(per_node < n ? per_node : n);
	switch (op) {
	case HW_ALL_REDUCE: {
		double ring = a + 2.0 * (double)(n - 1) * step;
		if (nodes <= 1)
			return ring;
		double tree = a + 2.0 * (g - 1.0) * hi + 2.0 * ceil(log2((double)nodes)) * he;
		return tree < ring ? tree : ring;
	}
	case HW_ALL_GATHER:
	case HW_REDUCE_SCATTER:
	case HW_BROADCAST:
	case HW_REDUCE:
		return a + (double)(n - 1) * step;
	case HW_ALL_TO_ALL:
		return a + 2.0 * step; /* every peer at once */
	case HW_SEND_RECV:
	default:
		return a + step;
	}
}

void
hw_cost_coll(const hw_cost *c, hw_coll op, int ranks, int per_node, double bytes, hw_flow *out)
{
	memset(out, 0, sizeof *out);
	if (ranks <= 1 && op != HW_SEND_RECV) {
		out->bw = 1.0;
		out->prov = HW_PROV_DATASHEET;
		return;
	}
	if (per_node <= 0 || per_node > ranks)
		per_node = ranks;
	int nodes = (ranks + per_node - 1) / per_node;
	if (op == HW_SEND_RECV)
		nodes = per_node >= 2 ? 1 : 2; /* per_node 2: both ends in one node; 1: across nodes */
	int n = op == HW_SEND_RECV ? 2 : ranks;
	out->inter = nodes > 1;
	double factor = hw_coll_busbw_factor(op, n);
	if (op == HW_ALL_TO_ALL && nodes > 1) {
		/* What leaves the node is the bottleneck: (n - per_node)/n of each rank's buffer. */
		factor = (double)(n - per_node) / (double)n;
	}
	out->wire_bytes = bytes * factor;
	double lat = coll_latency_us(c, op, n, per_node, nodes);
	const curve *cv = op == HW_ALL_TO_ALL ? NULL : find_curve(c, op, n, nodes);
	hw_prov mprov;
	double mbw = model_busbw(c, op, nodes, per_node, &mprov);
	if (cv != NULL) {
		double bw = curve_eval(cv, bytes);
		if (nodes > 1) {
			/* Scale for a different number of the group's GPUs (hence NICs) per node. */
			int mper = cv->ranks / (cv->nodes > 0 ? cv->nodes : 1);
			hw_prov dummy;
			double ref = model_busbw(c, cv->op, cv->nodes, mper > 0 ? mper : 1, &dummy);
			if (ref > 0)
				bw *= mbw / ref;
		}
		/* Measured busbw already includes the latency at that size. */
		out->latency_s = 0.0;
		out->bw = bw;
		out->prov = HW_PROV_MEASURED;
		return;
	}
	out->latency_s = lat * 1e-6;
	out->bw = mbw;
	out->prov = mprov;
	const pval *hop = nodes > 1 ? &c->hop_inter_us : &c->hop_intra_us;
	if (hop->prov > out->prov)
		out->prov = hop->prov;
}

double
hw_cost_coll_time(const hw_cost *c, hw_coll op, int ranks, int per_node, double bytes, hw_prov *prov)
{
	hw_flow f;
	hw_cost_coll(c, op, ranks, per_node, bytes, &f);
	if (prov)
		*prov = f.prov;
	if (f.wire_bytes <= 0)
		return f.latency_s;
	return f.latency_s + f.wire_bytes / f.bw;
}

double
hw_cost_host_op(const hw_cost *c)
{
	return c->host_op_us.v * 1e-6;
}

double
hw_cost_iter_overhead(const hw_cost *c)
{
	return c->iter_overhead_s.v;
}

/* Serving engines (vLLM, TensorRT-LLM) all-reduce small messages inside the NVLink domain
 * with their own one-shot kernels, much faster than NCCL's ring for a few kilobytes: when the
 * system has a fitted serve_allreduce_us, a small intra-domain all-reduce costs that latency
 * plus its bytes at the bus bandwidth; otherwise the NCCL model applies. */
double
hw_cost_serve_allreduce(const hw_cost *c, int ranks, int per_node, double bytes, hw_prov *prov)
{
	if (ranks <= 1)
		return 0.0;
	if (c->have_serve_ar && per_node >= ranks && bytes <= 8.0 * 1048576.0) {
		hw_flow f;
		hw_cost_coll(c, HW_ALL_REDUCE, ranks, per_node, bytes, &f);
		if (prov)
			*prov = c->serve_ar_us.prov;
		return c->serve_ar_us.v * 1e-6 + f.wire_bytes / f.bw;
	}
	return hw_cost_coll_time(c, HW_ALL_REDUCE, ranks, per_node, bytes, prov);
}

double
hw_cost_overlap_slowdown(const hw_cost *c)
{
	return c->overlap_slowdown.v;
}

/* ---- description --------------------------------------------------------------------------- */

static void
describe(cJSON *arr, const char *key, const pval *p)
{
	cJSON *x = cJSON_CreateObject();
	cJSON_AddStringToObject(x, "key", key);
	cJSON_AddNumberToObject(x, "value", p->v);
	cJSON_AddStringToObject(x, "provenance", hw_prov_name(p->prov));
	cJSON_AddStringToObject(x, "origin", p->origin);
	cJSON_AddStringToObject(x, "method", p->method);
	cJSON_AddItemToArray(arr, x);
}

cJSON *
hw_cost_describe(const hw_cost *c)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(o, "parameters");
	for (int t = 0; t < HW_NDTYPES; t++) {
		if (!(c->sys.gpu.peak_tflops[t] > 0))
			continue;
		char key[32];
		snprintf(key, sizeof key, "gemm_eff_%s", hw_dtype_name((hw_dtype)t));
		describe(arr, key, &c->gemm_eff[t]);
	}
	describe(arr, "gemm_k_ramp", &c->k_ramp);
	describe(arr, "kernel_launch_us", &c->launch_us);
	describe(arr, "host_op_us", &c->host_op_us);
	describe(arr, "hbm_eff", &c->hbm_eff);
	describe(arr, "attn_eff_fwd", &c->attn_fwd);
	describe(arr, "attn_eff_bwd", &c->attn_bwd);
	describe(arr, "conv_eff", &c->conv_eff);
	describe(arr, "coll_eff_intra", &c->coll_intra);
	describe(arr, "coll_eff_intra_all_reduce", &c->coll_intra_ar);
	describe(arr, "coll_eff_inter", &c->coll_inter);
	describe(arr, "p2p_eff_intra", &c->p2p_intra);
	describe(arr, "coll_alpha_us", &c->alpha_us);
	describe(arr, "coll_hop_intra_us", &c->hop_intra_us);
	describe(arr, "coll_hop_inter_us", &c->hop_inter_us);
	describe(arr, "overlap_slowdown", &c->overlap_slowdown);
	if (c->have_serve_ar)
		describe(arr, "serve_allreduce_us", &c->serve_ar_us);
	describe(arr, "iter_overhead_s", &c->iter_overhead_s);
	describe(arr, "fabric_leaf_nodes", &c->leaf_nodes);
	cJSON *m = cJSON_AddArrayToObject(o, "measured_collectives");
	for (size_t i = 0; i < c->ncurves; i++) {
		const curve *cv = &c->curves[i];
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "op", hw_coll_name(cv->op));
		cJSON_AddNumberToObject(x, "ranks", cv->ranks);
		cJSON_AddNumberToObject(x, "nodes", cv->nodes);
		cJSON_AddNumberToObject(x, "sizes", (double)cv->n);
		cJSON_AddNumberToObject(x, "max_busbw_gbps", exp(cv->lbw[cv->n - 1]) / 1e9);
		cJSON_AddItemToArray(m, x);
	}
	cJSON_AddNumberToObject(o, "measured_gemm_shapes", (double)c->ngemms);
	cJSON_AddBoolToObject(o, "measured_hbm", c->hbm_measured);
	const char *rule;
	if (c->ncurves > 0 || c->ngemms > 0)
		rule = "measured tables where they cover the op, fitted or datasheet parameters elsewhere";
	else
		rule = "no measurements for this system: parameters and datasheet figures only";
	cJSON_AddStringToObject(o, "applies", rule);
	return o;
}
