/*
 * params.c -- the registry of cost-model parameters: every parameter the cost model, a
 * framework profile or a serving-engine profile reads is declared here once, with its scope,
 * default, physical bounds, unit and meaning.  The database's param table holds values for
 * (scope, subject, key); the loaders (hardware/cost.c, hardware/profile.c) read the keys of
 * this table and nothing else, hw_param_set refuses a key that is not here or a value outside
 * its bounds, and 'hw show' and the fits describe parameters from it.
 *
 * A default is what applies to a GPU, system or profile that has no row for the key (a
 * user-added GPU, say); the shipped ones carry their own rows in hardware/data/ with sources.
 * NAN marks a default derived from the subject's other figures (cost.c says how).
 */
#include "config.h"
#include "hardware/hw_int.h"

#include <math.h>
#include <string.h>

/* Bounds hold every physical value: an efficiency above 1 only where a measured rate can pass
 * the datasheet figure it is a fraction of (NVLS all-reduce reduces inside the switch). */
static const hw_pdef defs[HW_NPKEYS] = {
	/* ---- per GPU: what its kernels achieve ---- */
	[HW_P_GEMM_EFF_FP64] = {"gemm_eff_fp64", HW_SCOPE_GPU, 0.70, 0.01, 1.0, "fraction", "gemm_eff",
				"achieved fraction of the FP64 dense peak on large GEMMs"},
	[HW_P_GEMM_EFF_FP32] = {"gemm_eff_fp32", HW_SCOPE_GPU, 0.70, 0.01, 1.0, "fraction", "gemm_eff",
				"achieved fraction of the FP32 dense peak on large GEMMs"},
	[HW_P_GEMM_EFF_TF32] = {"gemm_eff_tf32", HW_SCOPE_GPU, 0.70, 0.01, 1.0, "fraction", "gemm_eff",
				"achieved fraction of the TF32 dense peak on large GEMMs"},
	[HW_P_GEMM_EFF_FP16] = {"gemm_eff_fp16", HW_SCOPE_GPU, 0.70, 0.01, 1.0, "fraction", "gemm_eff",
				"achieved fraction of the FP16 dense peak on large GEMMs"},
	[HW_P_GEMM_EFF_BF16] = {"gemm_eff_bf16", HW_SCOPE_GPU, 0.70, 0.01, 1.0, "fraction", "gemm_eff",
				"achieved fraction of the BF16 dense peak on large GEMMs"},
	[HW_P_GEMM_EFF_FP8] = {"gemm_eff_fp8", HW_SCOPE_GPU, 0.70, 0.01, 1.0, "fraction", "gemm_eff",
			       "achieved fraction of the FP8 dense peak on large GEMMs"},
	[HW_P_GEMM_EFF_INT8] = {"gemm_eff_int8", HW_SCOPE_GPU, 0.70, 0.01, 1.0, "fraction", "gemm_eff",
				"achieved fraction of the INT8 dense peak on large GEMMs"},
	[HW_P_GEMM_EFF_INT4] = {"gemm_eff_int4", HW_SCOPE_GPU, 0.70, 0.01, 1.0, "fraction", "gemm_eff",
				"achieved fraction of the INT4 dense peak on large GEMMs"},
	[HW_P_GEMM_K_RAMP] = {"gemm_k_ramp", HW_SCOPE_GPU, 128.0, 0.0, 65536.0, "k steps", NULL,
			      "a GEMM tile's prologue and epilogue, as extra steps of k (q_k = k / (k + k_ramp))"},
	[HW_P_KERNEL_LAUNCH_US] = {"kernel_launch_us", HW_SCOPE_GPU, 3.0, 0.0, 1000.0, "us", NULL,
				   "fixed time of one kernel on the device (launch, ramp, tail)"},
	[HW_P_HOST_OP_US] = {"host_op_us", HW_SCOPE_GPU, 0.0, 0.0, 10000.0, "us", NULL,
			     "the training framework's host time to issue one kernel (a floor on a kernel's time)"},
	[HW_P_HBM_EFF] = {"hbm_eff", HW_SCOPE_GPU, 0.80, 0.01, 1.0, "fraction", NULL,
			  "achieved fraction of the HBM peak by streaming kernels"},
	[HW_P_ATTN_EFF_FWD] = {"attn_eff_fwd", HW_SCOPE_GPU, 0.50, 0.01, 1.0, "fraction", NULL,
			       "fused (flash) attention forward: achieved fraction of the dense peak"},
	[HW_P_ATTN_EFF_BWD] = {"attn_eff_bwd", HW_SCOPE_GPU, 0.40, 0.01, 1.0, "fraction", NULL,
			       "fused (flash) attention backward: achieved fraction of the dense peak"},
	[HW_P_CONV_EFF] = {"conv_eff", HW_SCOPE_GPU, 0.60, 0.01, 1.0, "fraction", NULL,
			   "implicit-GEMM convolution rate over the GEMM rate of the same shape"},
	[HW_P_OVERLAP_SLOWDOWN] = {"overlap_slowdown", HW_SCOPE_GPU, 0.0, 0.0, 4.0, "fraction", NULL,
				   "compute slowdown while a collective or transfer runs on the same GPU"},
	/* ---- per system: its links ---- */
	[HW_P_COLL_EFF_INTRA] = {"coll_eff_intra", HW_SCOPE_SYSTEM, 0.75, 0.01, 4.0, "fraction", NULL,
				 "ring collective bus bandwidth over the per-GPU scale-up bandwidth, large messages"},
	[HW_P_COLL_EFF_INTRA_AR] = {"coll_eff_intra_all_reduce", HW_SCOPE_SYSTEM, 0.75, 0.01, 4.0, "fraction",
				    "coll_eff_intra",
				    "all-reduce bus bandwidth over the scale-up bandwidth with NCCL's default algorithm"},
	[HW_P_COLL_EFF_INTER] = {"coll_eff_inter", HW_SCOPE_SYSTEM, 0.90, 0.01, 4.0, "fraction", NULL,
				 "collective bus bandwidth per NIC over the NIC's peak, across nodes"},
	[HW_P_P2P_EFF_INTRA] = {"p2p_eff_intra", HW_SCOPE_SYSTEM, 0.75, 0.01, 4.0, "fraction", NULL,
				"send/recv bandwidth inside a node over the scale-up bandwidth"},
	[HW_P_COLL_ALPHA_US] = {"coll_alpha_us", HW_SCOPE_SYSTEM, 10.0, 0.0, 100000.0, "us", NULL,
				"fixed launch-and-synchronize cost of one collective"},
	[HW_P_COLL_HOP_INTRA_US] = {"coll_hop_intra_us", HW_SCOPE_SYSTEM, NAN, 0.0, 100000.0, "us", NULL,
				    "latency of one algorithm step inside a node"},
	[HW_P_COLL_HOP_INTER_US] = {"coll_hop_inter_us", HW_SCOPE_SYSTEM, NAN, 0.0, 100000.0, "us", NULL,
				    "latency of one algorithm step across nodes"},
	[HW_P_ITER_OVERHEAD_S] = {"iter_overhead_s", HW_SCOPE_SYSTEM, 0.001, 0.0, 10.0, "s", NULL,
				  "a serving engine's fixed CPU and launch time per iteration"},
	[HW_P_SERVE_ALLREDUCE_US] = {"serve_allreduce_us", HW_SCOPE_SYSTEM, NAN, 0.0, 100000.0, "us", NULL,
				     "a serving engine's one-shot all-reduce latency for small messages (none: NCCL's)"},
	[HW_P_FABRIC_LEAF_NODES] = {"fabric_leaf_nodes", HW_SCOPE_SYSTEM, 16.0, 1.0, 1e7, "nodes", NULL,
				    "nodes under one leaf switch (groups beyond it see the oversubscription)"},
};

static const char *const scope_names[HW_NSCOPES] = {"gpu", "system", "framework", "engine"};

const char *
hw_scope_name(hw_pscope s)
{
	return s >= 0 && s < HW_NSCOPES ? scope_names[s] : "?";
}

int
hw_scope_parse(const char *s, hw_pscope *out)
{
	for (int i = 0; i < HW_NSCOPES; i++)
		if (!strcmp(s, scope_names[i])) {
			*out = (hw_pscope)i;
			return 0;
		}
	return PP_EUSAGE;
}

const hw_pdef *
hw_pdef_get(hw_pkey k)
{
	return k >= 0 && k < HW_NPKEYS ? &defs[k] : NULL;
}

int
hw_pdef_find(hw_pscope scope, const char *key, hw_pkey *out)
{
	for (int i = 0; i < HW_NPKEYS; i++)
		if (defs[i].scope == scope && !strcmp(defs[i].key, key)) {
			*out = (hw_pkey)i;
			return 0;
		}
	return PP_ENOTFOUND;
}

int
hw_pdef_check(const char *scope, const char *key, double value, char *err, size_t errlen)
{
	hw_pscope s;
	hw_pkey k;
	if (hw_scope_parse(scope, &s) != 0)
		return pp_err(err, errlen, PP_EUSAGE, "parameter scope \"%s\" is not one of gpu, system, framework, engine",
			      scope);
	if (hw_pdef_find(s, key, &k) != 0)
		return pp_err(err, errlen, PP_EUSAGE, "\"%s\" is not a %s parameter (paraplan hw params lists them)", key,
			      scope);
	const hw_pdef *d = &defs[k];
	if (!isfinite(value) || value < d->lo || value > d->hi)
		return pp_err(err, errlen, PP_ERANGE, "%s parameter %s = %g is outside its bounds %g..%g (%s)", scope, key,
			      value, d->lo, d->hi, d->unit);
	return 0;
}
