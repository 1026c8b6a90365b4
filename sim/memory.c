/*
 * memory.c -- memory per GPU of a pipeline stage.
 *
 * Model states (Rajbhandari et al. 2020, ZeRO, section 3): 16-bit weights (2 bytes per
 * parameter), gradients (4 bytes when reduced in fp32 as Megatron-LM does with bf16, else 2)
 * and Adam states in mixed precision (fp32 master weights, momentum, variance: 12 bytes).
 * ZeRO-1 shards the optimizer states over the data-parallel ranks, ZeRO-2 also the gradients,
 * ZeRO-3 (and FSDP) also the weights, which are gathered one layer at a time with the next one
 * prefetched.  Expert parameters shard over the expert-data-parallel group instead.
 *
 * Activations per layer and micro-batch generalize Korthikanti et al. 2022 (arXiv 2205.05198)
 * section 4: every tensor a layer keeps for its backward pass, at its real shape (GQA, SwiGLU,
 * MoE, MLA).  For a GPT layer without parallelism this is exactly sbh(34 + 5as/h); with tensor
 * parallelism sbh(10 + 24/t + 5as/(ht)); with sequence parallelism sbh/t (34 + 5as/h); selective
 * recomputation and flash attention drop the 5as/h score terms; full recomputation keeps only
 * the layer's input (2sbh, or 2sbh/t with sequence parallelism) plus one layer's working set
 * during its backward.  A stage holds the layers of the micro-batches its schedule has in flight:
 * GPipe all m, 1F1B min(p - s, m), the interleaved schedule its warm-up count plus one
 * micro-batch chunks (for the first stage p(1 + (p-1)/(pv)) chunks' worth, Korthikanti's
 * factor).
 *
 * Beyond the model: NCCL buffers, the CUDA context and cuBLAS workspace, and a fragmentation
 * reserve of the caching allocator: 10% of what is allocated and freed within a step (the
 * activations, and ZeRO-3's gathered parameters), the memory that churns.
 *
 * Fine-tuning with LoRA (finetune.c): the frozen base keeps its weights (NF4 for QLoRA's linear
 * layers) and nothing else; the adapters have weights, gradients and optimizer states as
 * above, and each token keeps r values of x A per adapted projection for the backward pass.
 * The other activations are counted as for training: every adapted projection needs its input
 * for A's gradient, and the norms and the activation function need theirs for the input
 * gradient (a frozen projection with no adapter could drop its input; counting it keeps the
 * figure an upper bound).  An NF4 base dequantizes one weight at a time into a 16-bit buffer.
 */
#include "config.h"
#include "sim/train_int.h"

#include <math.h>
#include <string.h>

#define CUDA_CONTEXT_BYTES (512.0 * 1048576.0)
#define WORKSPACE_BYTES (128.0 * 1048576.0)
#define NCCL_BYTES (512.0 * 1048576.0)
#define FRAGMENTATION 0.10

/* Bytes one layer keeps for its backward pass, per micro-batch, on one rank. */
static double
layer_activations(const model *m, const sim_train_cfg *c, int64_t layer, bool *has_scores)
{
	const model_tf *t = model_transformer(m);
	double e = sim_act_bytes(c), tp = (double)c->tp;
	double b = (double)c->micro_batch, s = (double)sim_seq(m, c), sl = s / (double)c->cp;
	double T = b * sl;
	bool sp = c->sequence_parallel && c->tp > 1;
	double Tn = sp ? T / tp : T;
	double h = (double)t->hidden;
	double at = (double)t->heads / tp;
	double gt = t->kv_heads >= c->tp ? (double)t->kv_heads / tp : 1.0;
	bool mla = t->kv_lora_rank > 0;
	double dqk = mla ? (double)(t->qk_nope_dim + t->qk_rope_dim) : (double)t->head_dim;
	double dv = mla ? (double)t->v_head_dim : (double)t->head_dim;
	double mask = t->bias ? 1.0 : 0.0; /* dropout masks, 1 byte per element */

	/* attention: norm input, QKV input, Q K V, context, output dropout mask */
	double a = e * Tn * h + e * Tn * h + e * T * (at * dqk + gt * dqk + gt * dv) + e * T * at * dv + mask * Tn * h;
	if (mla)
		a += e * T * (double)(t->q_lora_rank + t->kv_lora_rank); /* latent projections */
	bool scores = c->attention == SIM_ATTN_UNFUSED && c->recompute == SIM_RECOMPUTE_NONE;
	if (scores) /* softmax output, dropout mask and dropout output (Korthikanti's 5as^2b) */
		a += b * at * sl * s * (e + (t->bias ? 1.0 + e : 0.0));
	else if (c->attention != SIM_ATTN_UNFUSED)
		a += 4.0 * b * at * sl; /* softmax statistics */
	if (has_scores)
		*has_scores = scores;
	if (c->lora_rank > 0) { /* x A of each adapted projection, and of each routed token's experts */
		sim_ft_layer ft;
		sim_ft_layer_get(m, c, layer, &ft);
		a += e * T * ft.act_rows;
		if (model_layer_is_moe(m, layer)) {
			double imb = c->moe_imbalance;
			if (c->moe_capacity > 0 && imb > c->moe_capacity)
				imb = c->moe_capacity;
			a += e * T * (double)t->top_k * imb * ft.expert_act_rows;
		}
	}
	/* a hybrid model's layer holds one block (models/model.h) */
	model_block blk = model_layer_block(m, layer);
	if (blk == MODEL_BLOCK_MLP)
		a = 0.0;
	if (blk == MODEL_BLOCK_MAMBA) {
		/* Mamba-2 mixer: norm input, in_proj input, in_proj output (z, x, B, C, dt), the
		 * convolution's output, the scan's output y and the gated norm's output (out_proj's
		 * input), the fp32 chunk states, the dropout mask */
		double H = (double)t->ssm_heads / tp, di = H * (double)t->ssm_head_dim;
		double gn = (double)t->ssm_groups / tp * (double)t->ssm_state, Q = (double)t->ssm_chunk;
		return 2.0 * e * Tn * h + e * T * (2.0 * di + 2.0 * gn + H) + e * T * (di + 2.0 * gn) + 2.0 * e * T * di +
		       4.0 * b * ceil(sl / Q) * H * (double)t->ssm_head_dim * (double)t->ssm_state + mask * Tn * h;
	}
	if (blk == MODEL_BLOCK_ATTN)
		return a;

	/* MLP: norm input, up input, activation input(s), down input, dropout mask */
	double mult = t->mlp == MODEL_MLP_SWIGLU ? 2.0 : 1.0;
	double mlp = e * Tn * h + e * Tn * h + mask * Tn * h;
	if (model_layer_is_moe(m, layer)) {
		/* an expert rank keeps its routed tokens at its expert slices' width: T / tp x etp x
		 * top_k tokens, expert_ffn / etp wide (sim/kernels.c; T top_k and / tp when etp = tp) */
		double etp = (double)sim_train_etp(c);
		double k = (double)t->top_k, fe = (double)t->expert_ffn / etp;
		double imb = c->moe_imbalance;
		if (c->moe_capacity > 0 && imb > c->moe_capacity)
			imb = c->moe_capacity;
		double tok = T / tp * etp * k * imb;
		mlp += 4.0 * T * (double)t->experts + e * tok * h + e * tok * fe * (mult + 1.0);
		if (t->shared_experts > 0) {
			double fs = (double)t->shared_experts * (double)t->expert_ffn / tp;
			mlp += e * T * fs * (mult + 1.0);
		}
	} else {
		double f = (double)t->ffn / tp;
		mlp += e * T * f * (mult + 1.0);
	}
	return a + mlp;
}

/* Micro-batches (or micro-batch chunks) whose activations stage s holds at its peak. */
static double
inflight(const sim_train_cfg *c, int s, int64_t micro)
{
	int p = c->pp;
	if (p <= 1)
		return 1.0;
	switch (c->schedule) {
	case SIM_GPIPE:
		return (double)micro;
	case SIM_INTERLEAVED: {
		int64_t total = micro * c->vpp;
		int64_t warm = (int64_t)(p - s - 1) * 2 + (int64_t)(c->vpp - 1) * p;
		int64_t n = warm + 1 < total ? warm + 1 : total;
		return (double)n;
	}
	case SIM_1F1B:
	case SIM_ZB_H1:
	default:
		return (double)((p - s) < micro ? (p - s) : micro);
	}
}

static int
cnn_memory(const model *m, const hw_system *sys, const sim_train_cfg *c, sim_mem *out)
{
	const model_layer *ly;
	size_t n = model_layers(m, &ly);
	double P = model_params(m);
	double e = sim_act_bytes(c);
	bool mixed = e < 4.0;
	/* fp32 weights (plus 16-bit copies under mixed precision), fp32 gradients, SGD momentum */
	out->weights = P * (mixed ? 6.0 : 4.0);
	out->grads = P * 4.0;
	out->optimizer = P * 4.0 / (c->zero >= 1 ? (double)c->dp : 1.0);
	double act = 0.0;
	for (size_t i = 0; i < n; i++)
		act += ly[i].in_elems * e; /* each layer keeps its input for the backward pass */
	out->activations = act * (double)c->micro_batch;
	out->inflight = 1.0;
	out->comm_buffers = c->gpus > 1 ? NCCL_BYTES : 0.0;
	out->workspace = CUDA_CONTEXT_BYTES + WORKSPACE_BYTES;
	out->reserve = FRAGMENTATION * out->activations;
	(void)sys;
	return 0;
}

int
sim_train_memory(const model *m, const hw_system *sys, const sim_train_cfg *c, int stage, sim_mem *out)
{
	memset(out, 0, sizeof *out);
	out->capacity = sys->gpu.memory_bytes;
	const model_tf *t = model_transformer(m);
	int rc = 0;
	if (t == NULL) {
		rc = cnn_memory(m, sys, c, out);
	} else {
		int64_t micro = c->global_batch / ((int64_t)c->dp * c->micro_batch);
		int nl = sim_stage_layers(m, c, stage);
		double P = 0.0, Pex = 0.0, act = 0.0, biggest = 0.0, biggest_act = 0.0;
		/* the stage's layers chunk by chunk; a layer of the same kind (MoE or dense) as the one
		 * before has its parameters and activations (the planner asks this of every layout) */
		int chunks = c->schedule == SIM_INTERLEAVED && c->vpp > 1 ? c->vpp : 1, k = 0;
		int64_t prev = -1;
		double lp = 0.0, ex = 0.0, la = 0.0;
		/* fine-tuning: adapters, and the base's quantized linear weights, of the stage */
		sim_ft_layer ft = {0};
		double Ad = 0.0, Adex = 0.0, Q = 0.0, Qex = 0.0, largest = 0.0, biggest_bytes = 0.0, lb = 0.0;
		for (int ch = 0; ch < chunks && k < nl; ch++) {
			int64_t first;
			int n = sim_chunk_layers(m, c, stage, ch, &first);
			for (int64_t l = first; l < first + n && k < nl; l++, k++) {
				if (prev < 0 || !model_layers_alike(m, l, prev)) {
					ex = 0.0;
					lp = sim_layer_params(m, c, l, &ex);
					la = layer_activations(m, c, l, NULL);
					if (c->lora_rank > 0) {
						sim_ft_layer_get(m, c, l, &ft);
						double q = c->base_nf4 ? SIM_NF4_BYTES : sim_act_bytes(c);
						double lin = ft.attn_linear + ft.mlp_linear + ft.expert_linear;
						lb = (lp - lin) * sim_act_bytes(c) + lin * q +
						     (ft.attn_adapters + ft.mlp_adapters + ft.expert_adapters) * sim_act_bytes(c);
					}
				}
				prev = l;
				P += lp - ex;
				Pex += ex;
				Ad += ft.attn_adapters + ft.mlp_adapters;
				Adex += ft.expert_adapters;
				Q += ft.attn_linear + ft.mlp_linear;
				Qex += ft.expert_linear;
				if (ft.largest > largest)
					largest = ft.largest;
				if (lb > biggest_bytes)
					biggest_bytes = lb;
				if (lp > biggest)
					biggest = lp;
				act += la;
				if (la > biggest_act)
					biggest_act = la;
			}
		}
		double e = sim_act_bytes(c);
		double b = (double)c->micro_batch, s = (double)sim_seq(m, c) / (double)c->cp;
		bool sp = c->sequence_parallel && c->tp > 1;
		double h = (double)t->hidden;
		if (stage == 0)
			P += sim_embed_params(m, c);
		if (stage == c->pp - 1) {
			P += sim_head_params(m, c);
			if (t->tied_embeddings && c->pp > 1)
				P += (double)t->vocab * h / (double)c->tp; /* the head's copy of the embedding */
		}
		double gathered = 0.0;
		placement pl;
		sim_place(sys, c, &pl);
		double placement_dp = (double)pl.grad; /* the ranks ZeRO shards over */
		double edp = (double)pl.edp;
		double wbytes = e; /* 16-bit weights (fp32 when training in fp32) */
		double gbytes = (double)sim_grad_bytes(c);
		double obytes = e >= 4.0 ? 8.0 : 12.0;
		out->weights = P * wbytes + Pex * wbytes;
		out->grads = P * gbytes + Pex * gbytes;
		out->optimizer = P * obytes + Pex * obytes;
		if (c->zero >= 1)
			out->optimizer = P * obytes / placement_dp + Pex * obytes / edp;
		if (c->offload_optimizer)
			out->optimizer = 0.0; /* in host memory */
		if (c->zero >= 2)
			out->grads = P * gbytes / placement_dp + Pex * gbytes / edp;
		if (c->zero >= 3) {
			out->weights = P * wbytes / placement_dp + Pex * wbytes / edp;
			/* the layer being computed and the one prefetched, gathered */
			gathered = 2.0 * biggest * wbytes;
			out->weights += gathered;
		}
		if (c->lora_rank > 0) {
			/* the frozen base: weights only (its linear layers in NF4 for QLoRA), sharded by
			 * ZeRO-3 like any weight; the adapters train: weights, gradients, optimizer states */
			double qb = c->base_nf4 ? SIM_NF4_BYTES : wbytes;
			double base = (P - Q) * wbytes + Q * qb, based = (Pex - Qex) * wbytes + Qex * qb;
			double zdp = c->zero >= 3 ? placement_dp : 1.0, zedp = c->zero >= 3 ? edp : 1.0;
			out->weights = base / zdp + based / zedp + Ad * wbytes / zdp + Adex * wbytes / zedp;
			if (c->zero >= 3) {
				gathered = 2.0 * biggest_bytes;
				out->weights += gathered;
			}
			out->grads = c->zero >= 2 ? Ad * gbytes / placement_dp + Adex * gbytes / edp : (Ad + Adex) * gbytes;
			out->optimizer = c->zero >= 1 ? Ad * obytes / placement_dp + Adex * obytes / edp : (Ad + Adex) * obytes;
			if (c->offload_optimizer)
				out->optimizer = 0.0;
		}
		/* activations */
		double fl = inflight(c, stage, micro);
		double per_mb_layers;
		if (c->schedule == SIM_INTERLEAVED && c->vpp > 1)
			per_mb_layers = act / (double)c->vpp; /* one chunk's layers (their mean when chunks are uneven) */
		else
			per_mb_layers = act;
		if (c->recompute == SIM_RECOMPUTE_FULL) {
			double input = e * b * s * h / (sp ? (double)c->tp : 1.0);
			double nstore = (c->schedule == SIM_INTERLEAVED && c->vpp > 1) ? (double)nl / c->vpp : (double)nl;
			out->activations = fl * nstore * input + biggest_act;
		} else {
			out->activations = fl * per_mb_layers;
		}
		if (stage == 0)
			out->activations += fl * e * b * s * h / (sp ? (double)c->tp : 1.0); /* embedding output */
		if (stage == c->pp - 1)
			out->activations += 2.0 * 4.0 * b * s * (double)t->vocab / (double)c->tp; /* fp32 logits and grads */
		out->inflight = fl;
		out->comm_buffers = c->gpus > 1 ? NCCL_BYTES : 0.0;
		out->workspace = CUDA_CONTEXT_BYTES + WORKSPACE_BYTES;
		if (c->base_nf4)
			out->workspace += largest * wbytes; /* the dequantized weight of the GEMM at hand */
		out->reserve = FRAGMENTATION * (out->activations + gathered);
	}
	out->total = out->weights + out->grads + out->optimizer + out->activations + out->comm_buffers + out->workspace +
		     out->reserve;
	out->fits = out->total <= out->capacity;
	return rc;
}
