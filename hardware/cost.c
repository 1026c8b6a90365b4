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
 *   divided by the fabric's oversubscription for groups that cross the leaf level (an
 *   all-to-all's off-node share goes through each rank's own NIC: one NIC per rank).
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
	hw_pval p[HW_NPKEYS]; /* the GPU's and the system's parameters (registry order) */
	curve *curves;
	size_t ncurves;
	gemm_pt *gemms;
	size_t ngemms;
	bool hbm_measured;
};

/* A default derived from the subject's own figures, for a key without a row. */
static void
derived(hw_pval *p, double v, const char *method)
{
	p->v = v;
	p->prov = HW_PROV_DATASHEET;
	pp_strlcpy(p->origin, "datasheet", sizeof p->origin);
	pp_strlcpy(p->method, method, sizeof p->method);
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
		/* a database made elsewhere (or before the check) may hold rows no link can measure:
		 * they are left out, as the store refuses them (hw_coll_row_check) */
		double f = hw_coll_busbw_factor(op, ranks);
		hw_coll_row chk = {.op = op, .ranks = ranks, .nodes = nodes, .bytes = (int64_t)bytes, .busbw_gbps = bw * 1e-9,
				   .algbw_gbps = f > 0 ? bw * 1e-9 / f : 0, .time_s = f > 0 && bw > 0 ? bytes * f / bw : 0};
		if (ranks < 1 || nodes < 1 || !(bytes >= 1) || !(bytes <= 1e18) || hw_coll_row_check(&c->sys, &chk, NULL, 0) != 0)
			continue;
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
			c->p[HW_P_HBM_EFF].v = fmin(1.0, gbps / c->sys.gpu.hbm_gbps);
			c->p[HW_P_HBM_EFF].prov = HW_PROV_MEASURED;
			pp_strlcpy(c->p[HW_P_HBM_EFF].origin, "measured", sizeof c->p[HW_P_HBM_EFF].origin);
			pp_strlcpy(c->p[HW_P_HBM_EFF].method, "best measured copy/read-write bandwidth >= 256 MiB over the peak",
				   sizeof c->p[HW_P_HBM_EFF].method);
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
	bool have[HW_NPKEYS];
	if ((rc = hw_load_scope(db, HW_SCOPE_GPU, c->sys.gpu.name, 0, c->p, have, err, errlen)) != 0 ||
	    (rc = hw_load_scope(db, HW_SCOPE_SYSTEM, c->sys.name, 0, c->p, have, err, errlen)) != 0) {
		free(c);
		return rc;
	}
	if (!have[HW_P_COLL_HOP_INTRA_US]) {
		double gpn = c->sys.gpus_per_node > 1 ? (double)c->sys.gpus_per_node : 2.0;
		double hi = (c->sys.scaleup_latency_us - c->p[HW_P_COLL_ALPHA_US].v) / (2.0 * (gpn - 1.0));
		derived(&c->p[HW_P_COLL_HOP_INTRA_US], hi > 0.1 ? hi : 0.1,
			"(the system's scaleup_latency_us - alpha) / 2(gpus per node - 1)");
	}
	if (!have[HW_P_COLL_HOP_INTER_US]) {
		double he = (c->sys.scaleout_latency_us - c->sys.scaleup_latency_us) / 2.0;
		derived(&c->p[HW_P_COLL_HOP_INTER_US], he > 0.5 ? he : 0.5,
			"(the system's scaleout_latency_us - scaleup_latency_us) / 2");
	}
	/* a GPU without a faster attention generation runs the FlashAttention-2 class's */
	for (int d = 0; d < 2; d++) {
		hw_pkey f3 = d ? HW_P_ATTN_FLASH3_BWD : HW_P_ATTN_FLASH3_FWD, f2 = d ? HW_P_ATTN_FLASH2_BWD : HW_P_ATTN_FLASH2_FWD;
		if (!have[f3]) {
			c->p[f3] = c->p[f2];
			pp_strlcpy(c->p[f3].method, "none faster on this GPU: the FlashAttention-2 class's rate",
				   sizeof c->p[f3].method);
		}
	}
	/* the FP4 tensor peak is a parameter (no column of the gpu table): without one, 4-bit weights
	 * run weight-only on the 16-bit path */
	c->sys.gpu.peak_tflops[HW_FP4] = have[HW_P_FP4_TFLOPS] ? c->p[HW_P_FP4_TFLOPS].v : 0.0;
	if (!have[HW_P_FP4_TFLOPS])
		derived(&c->p[HW_P_FP4_TFLOPS], 0.0, "none: no FP4 tensor cores");
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
	return c->sys.gpu.hbm_gbps * 1e9 * c->p[HW_P_HBM_EFF].v;
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
	return hw_gemm_shape_eff(&c->sys.gpu, c->p[HW_P_GEMM_K_RAMP].v, m, n, k);
}

/* The roofline of a GEMM computing at dtype t whose k x n operand (the weights) is stored in
 * wbytes bytes per element and whose activations are t's width.  A weight-only quantized GEMM
 * (int8 or int4 weights stored narrower than the 16-bit t it computes in: Marlin, AWQ, GPTQ
 * kernels) reads its packed weights and dequantizes them in its inner loop: its compute runs at
 * gemm_eff_wq of the 16-bit rate, which is why it wins at small batches (half or a quarter of
 * the weight bytes) and loses to an fp8 GEMM at large ones (the fp8 tensor rate is twice the
 * 16-bit one): Frantar et al. 2024 (Marlin) measure near 4x over fp16 up to batch 16-32, falling
 * towards parity beyond 128. */
static double
gemm_model_w(const hw_cost *c, hw_dtype t, double wbytes, double m, double n, double k, double batch)
{
	double flops = 2.0 * m * n * k * batch;
	hw_dtype et = eff_dtype(c, t);
	/* Batched GEMMs fill the waves with their batch. */
	double q = shape_efficiency(c, m, n * batch, k);
	double rate = peak_flops(c, t) * c->p[HW_P_GEMM_EFF_FP64 + et].v * q;
	double abytes = hw_dtype_bytes(t);
	if (wbytes < abytes && t != HW_FP8 && t != HW_FP4)
		rate *= c->p[HW_P_GEMM_EFF_WQ].v;
	double compute = flops / rate;
	double bytes = (m * k + m * n) * batch * abytes + k * n * batch * wbytes;
	double mem = bytes / hbm_bw(c);
	return c->p[HW_P_KERNEL_LAUNCH_US].v * 1e-6 + (compute > mem ? compute : mem);
}

static double
gemm_model(const hw_cost *c, hw_dtype t, double m, double n, double k, double batch)
{
	/* 4-bit weights where the GPU has no 4-bit tensor path run weight-only: 16-bit compute,
	 * half a byte per weight.  An FP4 GEMM on a GPU with FP4 tensor cores (W4A4) reads 4-bit
	 * activations and weights with their block scales (one FP8 scale per 16: 1/16 byte). */
	if (t == HW_INT4 || (t == HW_FP4 && !(c->sys.gpu.peak_tflops[HW_FP4] > 0)))
		return gemm_model_w(c, HW_BF16, 0.5, m, n, k, batch);
	if (t == HW_FP4)
		return gemm_model_w(c, t, 0.5 + 1.0 / 16.0, m, n, k, batch);
	return gemm_model_w(c, t, hw_dtype_bytes(t), m, n, k, batch);
}

static double cost_gemm(const hw_cost *c, hw_dtype t, double m, double n, double k, double batch, hw_prov *prov);

/* A GEMM whose weights are stored at wbytes per element while it computes at dtype t
 * (weight-only quantization): no measured correction, the measured tables are of plain GEMMs. */
static double
cost_gemm_w(const hw_cost *c, hw_dtype t, double wbytes, double m, double n, double k, double batch, hw_prov *prov)
{
	if (prov)
		*prov = c->p[HW_P_GEMM_EFF_FP64 + eff_dtype(c, t)].prov;
	if (!(m > 0) || !(n > 0) || !(k > 0) || !(batch > 0))
		return 0.0;
	if (wbytes == hw_dtype_bytes(t) || t == HW_FP4 || t == HW_INT4)
		return cost_gemm(c, t, m, n, k, batch, prov); /* measured shapes apply */
	return gemm_model_w(c, t, wbytes, m, n, k, batch);
}

/* A GEMM (batch x [m x k] x [k x n]) in the given dtype: the model, corrected by the nearest
 * measured shape. */
static double
cost_gemm(const hw_cost *c, hw_dtype t, double m, double n, double k, double batch, hw_prov *prov)
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
		*prov = c->p[HW_P_GEMM_EFF_FP64 + eff_dtype(c, t)].prov;
	return model;
}

/* A convolution lowered to an implicit GEMM. */
static double
cost_conv(const hw_cost *c, hw_dtype t, double m, double n, double k, hw_prov *prov)
{
	hw_prov p;
	double g = cost_gemm(c, t, m, n, k, 1.0, &p);
	double launch = c->p[HW_P_KERNEL_LAUNCH_US].v * 1e-6;
	if (prov)
		*prov = p == HW_PROV_MEASURED ? c->p[HW_P_CONV_EFF].prov : p;
	/* cuDNN's implicit GEMM reaches a fraction of the GEMM rate on the same shape. */
	return launch + (g - launch) / c->p[HW_P_CONV_EFF].v;
}

/* A memory-bound kernel that reads and writes `bytes` in total. */
static double
cost_mem(const hw_cost *c, double bytes, hw_prov *prov)
{
	if (prov)
		*prov = c->p[HW_P_HBM_EFF].prov;
	if (!(bytes > 0))
		return 0.0;
	return c->p[HW_P_KERNEL_LAUNCH_US].v * 1e-6 + bytes / hbm_bw(c);
}

/* A fused attention kernel: a roofline with the kernel's own achieved fraction of the peak (its
 * implementation's, forward or backward), reached as sq / (sq + ramp) of it on sq queries per
 * sequence: short sequences spend more of their time in tile prologues and on the causal
 * diagonal (FlashAttention-3 on an H100 reaches 364 TFLOP/s forward at 1K tokens and 685 at
 * 8K; kernels.csv). */
static double
cost_attn(const hw_cost *c, const hw_kernel *k, hw_prov *prov)
{
	hw_pkey key = k->impl == HW_ATTN_FLASH3 ? (k->bwd ? HW_P_ATTN_FLASH3_BWD : HW_P_ATTN_FLASH3_FWD)
						: (k->bwd ? HW_P_ATTN_FLASH2_BWD : HW_P_ATTN_FLASH2_FWD);
	const hw_pval *e = &c->p[key];
	if (prov)
		*prov = e->prov;
	double flops = hw_kernel_flops(k);
	if (!(flops > 0))
		return 0.0;
	/* A tile's loop runs over the keys: a short loop spends more of its time in the prologue
	 * and epilogue (the ramp is fitted on square kernels, so key length and length agree). */
	double ramp = c->p[k->bwd ? HW_P_ATTN_RAMP_BWD : HW_P_ATTN_RAMP_FWD].v;
	double sk = fmin(k->sk, c->p[HW_P_ATTN_SEQ_MAX].v); /* measured that far, not extrapolated */
	double q = sk / (sk + ramp);
	/* Narrow heads do less matrix work per tile load: head dim 64 runs at about 0.8 of 128's
	 * rate (FlashAttention-2 on an A100, FA4 on a B200: docs/profiles.md), (d / 128)^0.3. */
	if (k->dqk < 128.0 && k->dqk > 0)
		q *= pow(k->dqk / 128.0, 0.3);
	/* The kernel runs one tile of 128 queries per (sequence, head) and SM at a time: the last
	 * wave of tiles leaves SMs idle. */
	double sms = c->sys.gpu.sms > 0 ? (double)c->sys.gpu.sms : 100.0;
	double tiles = k->b * k->heads * ceil(k->sq / 128.0);
	if (tiles >= 1.0)
		q *= tiles / (ceil(tiles / sms) * sms);
	/* fp8 attention (an fp8 KV cache read by fp8 kernels) reaches attn_fp8_scale of its doubled
	 * peak; where the GPU has no fp8 tensor cores it computes in 16 bits */
	double peak = peak_flops(c, k->dtype);
	if (k->dtype == HW_FP8 && c->sys.gpu.peak_tflops[HW_FP8] > 0)
		peak *= c->p[HW_P_ATTN_FP8_SCALE].v;
	double compute = flops / (peak * e->v * q);
	double mem = hw_kernel_bytes(k) / hbm_bw(c);
	return c->p[HW_P_KERNEL_LAUNCH_US].v * 1e-6 + (compute > mem ? compute : mem);
}

const char *
hw_kkind_name(hw_kkind k)
{
	static const char *const n[HW_NKKINDS] = {"gemm", "attention", "memory", "conv"};
	return (unsigned)k < HW_NKKINDS ? n[k] : "?";
}

double
hw_kernel_flops(const hw_kernel *k)
{
	switch (k->kind) {
	case HW_K_GEMM:
		return 2.0 * k->m * k->n * k->k * k->batch;
	case HW_K_CONV:
		return 2.0 * k->m * k->n * k->k;
	case HW_K_ATTN: {
		double f = 2.0 * k->b * k->heads * k->sq * k->sk * (k->dqk + k->dv) * k->density;
		return k->bwd ? 2.5 * f : f;
	}
	default:
		return 0.0;
	}
}

double
hw_kernel_bytes(const hw_kernel *k)
{
	switch (k->kind) {
	case HW_K_GEMM: {
		double a = hw_dtype_bytes(k->dtype), w = k->wbytes > 0 ? k->wbytes : a;
		return ((k->m * k->k + k->m * k->n) * a + k->k * k->n * w) * k->batch;
	}
	case HW_K_ATTN: {
		/* Q and O, and K and V once each (the backward reads and writes about twice that) */
		double e = hw_dtype_bytes(k->dtype), kv = k->kvbytes > 0 ? k->kvbytes : e;
		double kvdim = k->kv_latent ? k->dqk : k->dqk + k->dv;
		double io = k->b * k->sq * k->heads * (k->dqk + k->dv) * e + k->b * k->sk * k->kv_heads * kvdim * kv;
		return k->bwd ? 2.0 * io : io;
	}
	case HW_K_MEM:
		return k->bytes;
	default:
		return 0.0;
	}
}

double
hw_cost_kernel(const hw_cost *c, const hw_kernel *k, hw_prov *prov)
{
	switch (k->kind) {
	case HW_K_GEMM:
		if (k->wbytes > 0)
			return cost_gemm_w(c, k->dtype, k->wbytes, k->m, k->n, k->k, k->batch, prov);
		return cost_gemm(c, k->dtype, k->m, k->n, k->k, k->batch, prov);
	case HW_K_CONV:
		return cost_conv(c, k->dtype, k->m, k->n, k->k, prov);
	case HW_K_ATTN:
		return cost_attn(c, k, prov);
	case HW_K_MEM:
		return cost_mem(c, k->bytes, prov);
	default:
		if (prov)
			*prov = HW_PROV_DATASHEET;
		return 0.0;
	}
}

/* ---- communication ------------------------------------------------------------------------- */

double
hw_cost_param(const hw_cost *c, hw_pkey k)
{
	const hw_pdef *d = hw_pdef_get(k);
	return d != NULL && (d->scope == HW_SCOPE_GPU || d->scope == HW_SCOPE_SYSTEM) ? c->p[k].v : 0.0;
}

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
		const hw_pval *e = op == HW_ALL_REDUCE ? &c->p[HW_P_COLL_EFF_INTRA_AR] : op == HW_SEND_RECV ? &c->p[HW_P_P2P_EFF_INTRA] : &c->p[HW_P_COLL_EFF_INTRA];
		*prov = e->prov;
		return up * e->v;
	}
	double nic = hw_cost_nic_bw(c) * (double)per_node;
	double bw = nic * c->p[HW_P_COLL_EFF_INTER].v;
	double upcap = up * c->p[HW_P_COLL_EFF_INTRA].v;
	if (bw > upcap)
		bw = upcap;
	if ((double)nodes > c->p[HW_P_FABRIC_LEAF_NODES].v && c->sys.oversubscription > 1.0)
		bw /= c->sys.oversubscription;
	*prov = c->p[HW_P_COLL_EFF_INTER].prov;
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
	double a = c->p[HW_P_COLL_ALPHA_US].v, hi = c->p[HW_P_COLL_HOP_INTRA_US].v, he = c->p[HW_P_COLL_HOP_INTER_US].v;
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
		/* What leaves the node is the bottleneck: (n - per_node)/n of each rank's buffer (at
		 * one NIC's bandwidth, below). */
		factor = (double)(n - per_node) / (double)n;
	}
	out->wire_bytes = bytes * factor;
	double lat = coll_latency_us(c, op, n, per_node, nodes);
	const curve *cv = op == HW_ALL_TO_ALL ? NULL : find_curve(c, op, n, nodes);
	hw_prov mprov;
	/* An all-to-all across nodes sends (n - per_node)/n of each rank's buffer off its node
	 * through that rank's own NIC: every member's NIC is busy with its own bytes at once, so
	 * one rank's share is one NIC's bandwidth, not the per_node NICs a ring all-reduce spreads
	 * its one stream of bytes over (nccl-tests' inter-node alltoall busbw is about one NIC's). */
	double mbw = model_busbw(c, op, nodes, op == HW_ALL_TO_ALL && nodes > 1 ? 1 : per_node, &mprov);
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
	const hw_pval *hop = nodes > 1 ? &c->p[HW_P_COLL_HOP_INTER_US] : &c->p[HW_P_COLL_HOP_INTRA_US];
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

/* Serving engines (vLLM, TensorRT-LLM, SGLang) all-reduce small messages inside the NVLink
 * domain with their own one-shot kernels, much faster than NCCL's ring for a few kilobytes: with
 * the engine's oneshot_us, a small intra-domain all-reduce (up to 8 MiB, vLLM's custom
 * all-reduce limit) costs that latency plus its bytes at the bus bandwidth; otherwise the NCCL
 * model applies. */
double
hw_cost_serve_allreduce(const hw_cost *c, double oneshot_us, int ranks, int per_node, double bytes, hw_prov *prov)
{
	if (ranks <= 1)
		return 0.0;
	if (oneshot_us > 0 && per_node >= ranks && bytes <= 8.0 * 1048576.0) {
		hw_flow f;
		hw_cost_coll(c, HW_ALL_REDUCE, ranks, per_node, bytes, &f);
		if (prov)
			*prov = HW_PROV_FITTED;
		return oneshot_us * 1e-6 + f.wire_bytes / f.bw;
	}
	return hw_cost_coll_time(c, HW_ALL_REDUCE, ranks, per_node, bytes, prov);
}

/* ---- description --------------------------------------------------------------------------- */

static void
describe(cJSON *arr, const char *key, const hw_pval *p)
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
	for (int k = 0; k < HW_NPKEYS; k++) {
		const hw_pdef *d = hw_pdef_get((hw_pkey)k);
		if (d->scope != HW_SCOPE_GPU && d->scope != HW_SCOPE_SYSTEM)
			continue;
		/* a GEMM efficiency only for the dtypes the GPU has; the one-shot all-reduce only
		 * where the system has one */
		if (k >= HW_P_GEMM_EFF_FP64 && k <= HW_P_GEMM_EFF_FP4 && !(c->sys.gpu.peak_tflops[k - HW_P_GEMM_EFF_FP64] > 0))
			continue;
		if (k == HW_P_FP4_TFLOPS && !(c->sys.gpu.peak_tflops[HW_FP4] > 0))
			continue;
		describe(arr, d->key, &c->p[k]);
	}
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
