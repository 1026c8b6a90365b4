/*
 * config.c -- training configurations: defaults, names, the validity rules (each failure a
 * usage error naming the constraint), the split of layers among pipeline stages, and where the
 * parallel groups land on the system.
 */
#include "config.h"
#include "sim/train_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const schedule_names[SIM_NSCHEDULES] = {"gpipe", "1f1b", "interleaved", "zb-h1"};
static const char *const recompute_names[] = {"none", "selective", "full", "op"};

const char *
sim_schedule_name(sim_schedule s)
{
	return (unsigned)s < SIM_NSCHEDULES ? schedule_names[s] : "?";
}

int
sim_schedule_parse(const char *s, sim_schedule *out)
{
	for (int i = 0; i < SIM_NSCHEDULES; i++)
		if (!strcmp(s, schedule_names[i])) {
			*out = (sim_schedule)i;
			return 0;
		}
	if (!strcmp(s, "zb") || !strcmp(s, "zero-bubble")) {
		*out = SIM_ZB_H1;
		return 0;
	}
	return PP_EUSAGE;
}

const char *
sim_recompute_name(sim_recompute r)
{
	return (unsigned)r < 4 ? recompute_names[r] : "?";
}

int
sim_recompute_parse(const char *s, sim_recompute *out)
{
	for (int i = 0; i < 4; i++)
		if (!strcmp(s, recompute_names[i])) {
			*out = (sim_recompute)i;
			return 0;
		}
	return PP_EUSAGE;
}

void
sim_train_cfg_init(sim_train_cfg *c)
{
	memset(c, 0, sizeof *c);
	c->gpus = 1;
	c->tp = c->pp = c->cp = c->ep = c->vpp = 1;
	c->schedule = SIM_1F1B;
	c->micro_batch = 1;
	c->global_batch = 1;
	c->recompute = SIM_RECOMPUTE_NONE;
	c->dtype = HW_BF16;
	c->attention = SIM_ATTN_FLASH;
	c->overlap_grad_reduce = true;
	c->overlap_param_gather = true;
	c->zero3_prefetch = true;
	c->pp_scatter_gather = true;
	c->moe_imbalance = 1.0;
	c->straggler = 1.0;
	c->straggler_rank = -1;
}

const char *
sim_attention_name(sim_attention a)
{
	return a == SIM_ATTN_UNFUSED ? "unfused" : a == SIM_ATTN_FLASH3 ? "flash3" : "flash2";
}

int
sim_attention_parse(const char *s, sim_attention *out)
{
	if (!strcmp(s, "flash") || !strcmp(s, "flash2"))
		*out = SIM_ATTN_FLASH;
	else if (!strcmp(s, "flash3"))
		*out = SIM_ATTN_FLASH3;
	else if (!strcmp(s, "unfused"))
		*out = SIM_ATTN_UNFUSED;
	else
		return PP_EUSAGE;
	return 0;
}

void
sim_train_cfg_framework(sim_train_cfg *c, const hw_profile *fw)
{
	c->fw = fw;
	if (fw == NULL)
		return;
	double a = hw_profile_get(fw, HW_P_FW_ATTENTION);
	c->attention = a == HW_FW_ATTN_UNFUSED ? SIM_ATTN_UNFUSED : a == HW_FW_ATTN_FLASH3 ? SIM_ATTN_FLASH3 : SIM_ATTN_FLASH;
	c->overlap_grad_reduce = hw_profile_get(fw, HW_P_FW_OVERLAP_GRAD_REDUCE) != 0.0;
	c->overlap_param_gather = hw_profile_get(fw, HW_P_FW_OVERLAP_PARAM_GATHER) != 0.0;
	c->sequence_parallel = hw_profile_get(fw, HW_P_FW_SEQUENCE_PARALLEL) != 0.0;
	c->tp_comm_overlap = hw_profile_get(fw, HW_P_FW_TP_COMM_OVERLAP) != 0.0;
	c->tp_wgrad_overlap = hw_profile_get(fw, HW_P_FW_TP_WGRAD_OVERLAP) != 0.0;
	c->fp8_recipe = (int)hw_profile_get(fw, HW_P_FW_FP8_RECIPE);
	c->ep_deepep = hw_profile_get(fw, HW_P_FW_EP_DISPATCH) == HW_EP_DEEPEP;
	c->zero3_gather = (int)hw_profile_get(fw, HW_P_FW_ZERO3_GATHER);
	c->zero3_regather = hw_profile_get(fw, HW_P_FW_ZERO3_REGATHER) != 0.0;
	c->zero3_prefetch = hw_profile_get(fw, HW_P_FW_ZERO3_PREFETCH) != 0.0;
	c->dp_one_stream = hw_profile_get(fw, HW_P_FW_DP_ONE_STREAM) != 0.0;
	c->grad_reduce = (int)hw_profile_get(fw, HW_P_FW_GRAD_REDUCE);
}

/* Each block's parameters in one collective, or its two linear modules and norm apart, or each
 * of their tensors apart (a linear's weight and bias, a LayerNorm's scale and shift). */
void
sim_zero3_gathers(const model *m, const sim_train_cfg *c, int *attn, int *mlp)
{
	const model_tf *t = model_transformer(m);
	*attn = *mlp = 1;
	if (c->zero3_gather == HW_Z3_LAYER || t == NULL)
		return;
	bool tensors = c->zero3_gather == HW_Z3_TENSOR;
	int norm = tensors && t->norm == MODEL_NORM_LAYERNORM ? 2 : 1, lin = tensors && t->bias ? 2 : 1;
	*attn = 2 * lin + (tensors && !t->bias && t->qkv_bias ? 1 : 0) + norm;
	*mlp = 2 * lin + norm;
}

void
sim_interval(const hw_profile *fw, double t, double *lo, double *hi)
{
	double p10 = fw ? hw_profile_get(fw, HW_P_FW_ERR_P10) : NAN, p90 = fw ? hw_profile_get(fw, HW_P_FW_ERR_P90) : NAN;
	bool ok = isfinite(p10) && isfinite(p90) && p10 <= p90 && t > 0;
	*lo = ok ? t * exp(p10) : NAN;
	*hi = ok ? t * exp(p90) : NAN;
}

int64_t
sim_seq(const model *m, const sim_train_cfg *c)
{
	if (c->seq > 0)
		return c->seq;
	const model_tf *t = model_transformer(m);
	return t ? t->seq : 1;
}

int
sim_grad_bytes(const sim_train_cfg *c)
{
	if (c->grad_reduce_bytes > 0)
		return c->grad_reduce_bytes;
	if (c->dtype == HW_FP32 || c->dtype == HW_TF32 || c->grad_reduce == HW_GR_FP32)
		return 4;
	if (c->grad_reduce == HW_GR_BF16)
		return 2;
	/* Megatron-LM accumulates and reduces bf16 gradients in fp32; DeepSpeed and FSDP reduce in
	 * the parameters' dtype. */
	if (c->dtype == HW_BF16 && c->zero <= 1 && !c->fsdp)
		return 4;
	return 2;
}

int
sim_dp_shard(const sim_train_cfg *c)
{
	return c->dp_shard > 0 && c->dp_shard < c->dp ? c->dp_shard : c->dp;
}

int
sim_dp_replicas(const sim_train_cfg *c)
{
	int s = sim_dp_shard(c);
	return s > 0 ? c->dp / s : 1; /* dp 0: not derived yet, no replicas */
}

double
sim_act_bytes(const sim_train_cfg *c)
{
	/* fp8 training keeps activations between kernels in bf16 */
	if (c->dtype == HW_FP32 || c->dtype == HW_TF32)
		return 4.0;
	return 2.0;
}

/* Layers of part `idx` when L layers are split into n parts: even when they divide; otherwise
 * the ends give up layers first (they also hold the embedding and the head): one from the
 * last, then the first, then the second-to-last, ... */
static int64_t
split_part(int64_t L, int64_t n, int64_t idx)
{
	int64_t base = (L + n - 1) / n;
	int64_t deficit = base * n - L; /* below n: the two ends' shares never meet */
	return base - (idx >= n - (deficit + 1) / 2) - (idx < deficit / 2);
}

static bool
interleaved(const sim_train_cfg *c)
{
	return c->schedule == SIM_INTERLEAVED && c->vpp > 1 && c->pp > 1;
}

/* Layers of virtual chunk `ch` of stage `stage`, and the model index of its first layer.  The
 * interleaved schedule splits the layers into pp x vpp virtual stages in model order (chunk ch
 * of stage s is virtual stage ch x pp + s), by the same rule as stages; other schedules have
 * one chunk per stage. */
int
sim_chunk_layers(const model *m, const sim_train_cfg *c, int stage, int ch, int64_t *first)
{
	if (!interleaved(c)) {
		int64_t start = 0;
		for (int j = 0; j < stage; j++)
			start += sim_stage_layers(m, c, j);
		*first = start;
		return ch == 0 ? sim_stage_layers(m, c, stage) : 0;
	}
	const model_tf *t = model_transformer(m);
	int64_t L = t ? t->layers : 0, n = (int64_t)c->pp * c->vpp, vs = (int64_t)ch * c->pp + stage;
	int64_t start = 0;
	if (L % n == 0)
		start = vs * (L / n);
	else
		for (int64_t j = 0; j < vs; j++)
			start += split_part(L, n, j);
	*first = start;
	return (int)split_part(L, n, vs);
}

/* Layers of stage `stage` (all virtual chunks together).  Even when layers divide; otherwise the
 * first and last stages give up layers first (they also hold the embedding and the head), as
 * Llama-3-405B's 126 layers on 16 stages run 7 on the ends and 8 elsewhere. */
int
sim_stage_layers(const model *m, const sim_train_cfg *c, int stage)
{
	const model_tf *t = model_transformer(m);
	int64_t L = t ? t->layers : 0;
	int p = c->pp;
	if (p <= 1)
		return (int)L;
	if (interleaved(c)) {
		int64_t n = (int64_t)p * c->vpp, sum = 0;
		for (int ch = 0; ch < c->vpp; ch++)
			sum += split_part(L, n, (int64_t)ch * p + stage);
		return (int)sum;
	}
	if (c->first_stage_layers > 0 || c->last_stage_layers > 0) {
		int64_t first = c->first_stage_layers, last = c->last_stage_layers;
		int64_t mid = p - (first > 0) - (last > 0);
		int64_t rest = L - first - last;
		int64_t per = mid > 0 ? rest / mid : 0;
		int64_t extra = mid > 0 ? rest % mid : 0;
		if (stage == 0 && first > 0)
			return (int)first;
		if (stage == p - 1 && last > 0)
			return (int)last;
		int idx = stage - (first > 0);
		return (int)(per + (idx < extra ? 1 : 0));
	}
	return (int)split_part(L, p, stage);
}

/* MoE parallel folding (Liu et al. 2025, arXiv 2504.14960; Megatron-Core's
 * --expert-tensor-parallel-size): the MoE layers lay etp x ep x edp over the tp x cp x dp ranks
 * of a stage.  Megatron-Core's default etp is tp; where ep x tp does not fit (TP 2 and EP 64 on a
 * stage of 64 ranks, DeepSeek-V3's dgxc recipe) the largest divisor of tp that does, as those
 * recipes set it by hand.  The default is worked out here, not stored in the configuration, so
 * that a configuration reads back as it was written. */
int
sim_train_etp(const sim_train_cfg *c)
{
	if (c->etp > 0)
		return c->etp;
	int64_t stage = (int64_t)c->tp * c->cp * (c->dp > 0 ? c->dp : 1);
	int ep = c->ep > 0 ? c->ep : 1;
	for (int e = c->tp; e > 1; e--)
		if (c->tp % e == 0 && stage % ((int64_t)e * ep) == 0)
			return e;
	return 1;
}

static int
usage(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int
usage(char *err, size_t errlen, const char *fmt, ...)
{
	if (err != NULL && errlen > 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return PP_EUSAGE;
}

int
sim_train_check(const model *m, const hw_system *sys, sim_train_cfg *c, char *err, size_t errlen)
{
	const model_tf *t = model_transformer(m);
	if (c->gpus < 1 || c->gpus > (1 << 24))
		return usage(err, errlen, "--gpus must be from 1 to %d, got %d", 1 << 24, c->gpus);
	if (c->tp < 1 || c->pp < 1 || c->cp < 1 || c->ep < 1 || c->vpp < 1 || c->dp < 0)
		return usage(err, errlen, "parallel degrees must be positive integers");
	if (c->micro_batch < 1 || c->global_batch < 1)
		return usage(err, errlen, "--micro-batch and --global-batch must be positive");
	if (c->zero < 0 || c->zero > 3)
		return usage(err, errlen, "--zero must be 0, 1, 2 or 3, got %d", c->zero);
	if (c->fsdp) { /* PyTorch FSDP gathers a wrapped block's flat parameters in one collective */
		c->zero = 3;
		c->zero3_gather = HW_Z3_LAYER;
	}
	if (c->zero3_gather < HW_Z3_LAYER || c->zero3_gather > HW_Z3_TENSOR)
		return usage(err, errlen, "--zero3-gather must be layer, module or tensor");
	if (!(c->moe_imbalance >= 1.0) || c->moe_imbalance > 64)
		return usage(err, errlen, "--moe-imbalance must be from 1 to 64, got %g", c->moe_imbalance);
	if (c->moe_capacity < 0)
		return usage(err, errlen, "--moe-capacity must be 0 (no dropping) or positive");
	if (c->dtype != HW_BF16 && c->dtype != HW_FP16 && c->dtype != HW_FP8 && c->dtype != HW_FP32 &&
	    c->dtype != HW_TF32)
		return usage(err, errlen, "--dtype must be bf16, fp16, fp8, tf32 or fp32 for training");
	if (!(sys->gpu.peak_tflops[c->dtype] > 0))
		return usage(err, errlen, "%s has no %s tensor rate: choose another --dtype", sys->gpu.name,
			     hw_dtype_name(c->dtype));

	int rc = sim_ft_check(m, c, err, errlen);
	if (rc != 0)
		return rc;

	int64_t mp = (int64_t)c->tp * c->pp * c->cp;
	if (c->dp == 0) {
		if (c->gpus % mp != 0)
			return usage(err, errlen, "--gpus (%d) must be a multiple of tp x pp x cp (%d x %d x %d = %lld)", c->gpus,
				     c->tp, c->pp, c->cp, (long long)mp);
		c->dp = (int)(c->gpus / mp);
	} else if (mp * c->dp != c->gpus) {
		return usage(err, errlen, "tp x pp x dp x cp (%d x %d x %d x %d) must equal --gpus (%d)", c->tp, c->pp, c->dp,
			     c->cp, c->gpus);
	}
	if (c->global_batch % ((int64_t)c->dp * c->micro_batch) != 0)
		return usage(err, errlen,
			     "--global-batch (%lld) must be a multiple of dp x micro-batch (%d x %lld = %lld)",
			     (long long)c->global_batch, c->dp, (long long)c->micro_batch,
			     (long long)(c->dp * c->micro_batch));
	int64_t micro = c->global_batch / ((int64_t)c->dp * c->micro_batch);
	if (c->dp_shard < 0 || c->dp_shard > c->dp || (c->dp_shard > 0 && c->dp % c->dp_shard != 0))
		return usage(err, errlen, "--dp-shard (%d) must divide dp (%d)", c->dp_shard, c->dp);
	if (c->dp_shard == c->dp)
		c->dp_shard = 0; /* sharded over every data-parallel rank: the plain form */
	if (c->dp_shard > 0 && c->zero < 1)
		return usage(err, errlen, "--dp-shard shards ZeRO's states: it needs --zero 1, 2 or 3 (or --fsdp)");

	if (t == NULL) {
		/* CNNs: data parallelism only. */
		if (c->tp > 1 || c->pp > 1 || c->cp > 1 || c->ep > 1 || c->vpp > 1)
			return usage(err, errlen, "%s is a CNN: only data parallelism is modelled (tp = pp = cp = ep = 1)",
				     model_name(m));
		if (c->zero > 1)
			return usage(err, errlen, "%s is a CNN: ZeRO-2/3 are not modelled for CNNs", model_name(m));
		if (c->dp_shard > 0)
			return usage(err, errlen, "%s is a CNN: hybrid sharding (--dp-shard) is not modelled for CNNs",
				     model_name(m));
		return 0;
	}
	if (t->heads % c->tp != 0)
		return usage(err, errlen, "attention heads (%lld) must be divisible by tp (%d)", (long long)t->heads, c->tp);
	if (t->kv_heads % c->tp != 0 && c->tp % t->kv_heads != 0)
		return usage(err, errlen, "kv heads (%lld) and tp (%d) must divide one another", (long long)t->kv_heads,
			     c->tp);
	if (t->ffn > 0 && t->ffn % c->tp != 0)
		return usage(err, errlen, "MLP width (%lld) must be divisible by tp (%d)", (long long)t->ffn, c->tp);
	if (t->ssm_heads > 0) {
		/* Megatron-Core's MambaMixer splits its heads and its B/C groups over the TP ranks */
		if (t->ssm_heads % c->tp != 0 || t->ssm_groups % c->tp != 0)
			return usage(err, errlen, "Mamba heads (%lld) and groups (%lld) must be divisible by tp (%d)",
				     (long long)t->ssm_heads, (long long)t->ssm_groups, c->tp);
		if (c->cp > 1)
			return usage(err, errlen, "context parallelism of Mamba layers is not modelled (%s has them): use --cp 1",
				     model_name(m));
	}
	int64_t seq = sim_seq(m, c);
	if (seq < 1 || seq > (1 << 24))
		return usage(err, errlen, "--seq must be from 1 to %d", 1 << 24);
	if (c->cp > 1 && seq % (2 * c->cp) != 0)
		return usage(err, errlen, "--seq (%lld) must be divisible by 2 x cp (%d) for load-balanced context parallelism",
			     (long long)seq, 2 * c->cp);
	if (c->ep > 1) {
		if (t->experts == 0)
			return usage(err, errlen, "--ep needs a mixture-of-experts model; %s is dense", model_name(m));
		if (t->experts % c->ep != 0)
			return usage(err, errlen, "experts (%lld) must be divisible by ep (%d)", (long long)t->experts, c->ep);
	}
	if (c->etp < 0)
		return usage(err, errlen, "--etp must be a positive integer (or 0 for the default), got %d", c->etp);
	if (c->etp > 1 && c->etp != c->tp && t->experts == 0)
		return usage(err, errlen, "--etp needs a mixture-of-experts model; %s is dense", model_name(m));
	int64_t stage_ranks = (int64_t)c->tp * c->cp * c->dp;
	int etp = sim_train_etp(c);
	if (t->experts > 0 && c->ep == 1 && etp != c->tp)
		return usage(err, errlen,
			     "--etp (%d) other than tp (%d) needs expert parallelism (--ep > 1): without it every TP rank runs "
			     "its expert slices over the whole sequence", etp, c->tp);
	if (t->experts > 0 && stage_ranks % ((int64_t)etp * c->ep) != 0)
		return usage(err, errlen,
			     "etp x ep (%d x %d) must divide tp x cp x dp (%d x %d x %d): the MoE layers fold their expert-tensor, "
			     "expert and expert-data parallel ranks over the dense layers' ranks of a stage",
			     etp, c->ep, c->tp, c->cp, c->dp);
	if (t->experts > 0 && c->dp_shard > 0 && ((int64_t)c->tp * c->cp * c->dp_shard) % ((int64_t)etp * c->ep) != 0)
		return usage(err, errlen,
			     "etp x ep (%d x %d) must divide tp x cp x dp-shard (%d x %d x %d): hybrid sharding replicates "
			     "whole expert-data-parallel shard groups",
			     etp, c->ep, c->tp, c->cp, c->dp_shard);
	if (t->experts > 0 && t->expert_ffn % etp != 0)
		return usage(err, errlen, "expert width (%lld) must be divisible by etp (%d)", (long long)t->expert_ffn, etp);
	if (c->pp == 1) {
		if (c->vpp > 1)
			return usage(err, errlen, "--vpp needs pipeline parallelism (pp > 1)");
		if (c->schedule == SIM_INTERLEAVED)
			c->schedule = SIM_1F1B;
	}
	if (c->vpp > 1 && c->schedule != SIM_INTERLEAVED) {
		if (c->schedule != SIM_1F1B)
			return usage(err, errlen, "--vpp > 1 needs the interleaved schedule");
		c->schedule = SIM_INTERLEAVED;
	}
	if (c->schedule == SIM_INTERLEAVED) {
		if (c->vpp < 2)
			return usage(err, errlen, "the interleaved schedule needs --vpp of 2 or more");
		if (t->layers < (int64_t)c->pp * c->vpp - 2)
			return usage(err, errlen,
				     "layers (%lld) must be at least pp x vpp - 2 (%d x %d - 2) for the interleaved "
				     "schedule: only the first and last virtual stages may hold no layer (the embedding, "
				     "the head)",
				     (long long)t->layers, c->pp, c->vpp);
		if (micro % c->pp != 0)
			return usage(err, errlen,
				     "micro-batches per step (%lld) must be a multiple of pp (%d) for the interleaved schedule",
				     (long long)micro, c->pp);
		if (c->first_stage_layers || c->last_stage_layers)
			return usage(err, errlen, "first/last stage layer counts apply to non-interleaved schedules");
	}
	if (t->layers < c->pp)
		return usage(err, errlen, "pp (%d) exceeds the number of layers (%lld)", c->pp, (long long)t->layers);
	if (c->first_stage_layers < 0 || c->last_stage_layers < 0)
		return usage(err, errlen, "first/last stage layer counts must not be negative");
	if (c->first_stage_layers || c->last_stage_layers) {
		int64_t mid = c->pp - (c->first_stage_layers > 0) - (c->last_stage_layers > 0);
		int64_t rest = t->layers - c->first_stage_layers - c->last_stage_layers;
		if (c->pp < 2 || rest < mid || (mid == 0 && rest != 0))
			return usage(err, errlen, "first/last stage layers (%d, %d) leave %lld layers for %lld middle stages",
				     c->first_stage_layers, c->last_stage_layers, (long long)rest, (long long)mid);
	}
	if (c->full && (int64_t)c->gpus > 65536)
		return usage(err, errlen, "full mode simulates every rank: at most 65536 GPUs (got %d)", c->gpus);
	if (c->straggler_rank >= c->gpus)
		return usage(err, errlen, "--straggler RANK:FACTOR: the rank (%d) must be below --gpus (%d)", c->straggler_rank,
			     c->gpus);
	if (!(c->straggler >= 1.0))
		return usage(err, errlen, "--straggler RANK:FACTOR: the factor must be at least 1");
	return 0;
}

/* Megatron-LM's rank order: tp varies fastest, then cp, then dp, then pp.  A group whose
 * consecutive members are `stride` ranks apart has min(size, domain / stride) members in one
 * scale-up domain (at least one). */
static int
per_domain(int size, int64_t stride, int domain)
{
	int64_t k = stride >= domain ? 1 : domain / stride;
	if (k < 1)
		k = 1;
	return (int)(k < size ? k : size);
}

void
sim_place(const hw_system *sys, const sim_train_cfg *c, placement *out)
{
	int dom = sys->scaleup_domain > 0 ? sys->scaleup_domain : sys->gpus_per_node;
	if (dom < 1)
		dom = 1;
	out->domain = dom;
	out->tp_per_node = c->tp < dom ? c->tp : dom;
	out->cp_per_node = per_domain(c->cp, c->tp, dom);
	out->dp_per_node = per_domain(c->dp, (int64_t)c->tp * c->cp, dom);
	/* the MoE groups fold over a stage's ranks etp fastest, then ep, then edp (sim.h) */
	int etp = sim_train_etp(c), ep = c->ep > 0 ? c->ep : 1;
	out->etp_per_node = etp < dom ? etp : dom;
	out->ep_per_node = per_domain(ep, etp, dom);
	/* hybrid sharding: the replicas are the outer dp / dp_shard of the data-parallel ranks, so a
	 * shard group is the first dp_shard x cp of them and a replica group strides over the rest;
	 * the expert shard group is the expert-data-parallel group of one replica */
	int shard = sim_dp_shard(c), repl = sim_dp_replicas(c);
	out->edp = (int)((int64_t)c->tp * c->cp * c->dp / ((int64_t)etp * ep) / repl);
	if (out->edp < 1)
		out->edp = 1;
	out->edp_per_node = per_domain(out->edp, (int64_t)etp * ep, dom);
	out->grad = shard * c->cp;
	out->grad_per_node = per_domain(out->grad, c->tp, dom);
	out->repl = repl;
	out->repl_per_node = per_domain(repl, (int64_t)c->tp * c->cp * shard, dom);
	int64_t pstride = (int64_t)c->tp * c->cp * c->dp;
	out->pp_intra = pstride < dom && (dom % pstride == 0) && c->pp > 1;
}
