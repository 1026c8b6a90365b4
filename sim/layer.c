/*
 * layer.c -- the kernels of one transformer layer for one micro-batch on one rank, priced by
 * the cost model, grouped into the segments the op graph runs.
 *
 * Shapes (T tokens per rank = micro-batch x seq / cp, t = tp, h hidden, a heads, g kv heads,
 * d head dim, f MLP width; a linear layer of input T x K and weight K x N):
 *   forward GEMM (M=T, N, K); backward: input gradient (M=T, N=K, K=N) and weight gradient
 *   (M=K, N=N, K=T) -- the same FLOPs each, so training is 3x the forward.
 *   attention: QKV (T, (a + 2g) d / t, h) [MLA: the q and kv low-rank projections], scores and
 *   context over the full key length s (flash: one fused kernel, causal half; unfused: batched
 *   GEMMs b a/t x [s/cp x d] x [d x s] and the softmax/dropout kernels over b a/t s/cp s
 *   elements), output projection (T, h, a d / t);
 *   MLP: up (T, f / t, h) (SwiGLU: 2f / t), activation, down (T, h, f / t); MoE: router
 *   (T, E, h), each of the E/ep local experts multiplies its share of T x top_k tokens (times
 *   the load imbalance), shared experts as a dense MLP.
 *   Memory-bound kernels move bytes: norms read and write the T x h activations (T / t of them
 *   with sequence parallelism), activations read and write T x f / t, residual adds read two
 *   and write one, dropout adds a 1-byte mask.  Backward kernels move about half again more.
 * Attention and hidden dropout are modelled for models with linear biases (GPT-2/3, BERT,
 * Megatron GPT), which train with dropout; bias-free models (Llama, Mistral, Mixtral, DeepSeek)
 * train without it.
 */
#include "config.h"
#include "sim/train_int.h"

#include <math.h>
#include <string.h>

typedef struct ctx {
	const hw_cost *cost;
	hw_dtype dt;     /* GEMM dtype */
	hw_dtype adt;    /* attention kernel dtype */
	double e;        /* bytes per activation element */
	bool zb;         /* split weight gradients out (zero-bubble) */
	double host;     /* seconds: the host's time to issue one kernel (hw_cost_host_op) */
	/* Recording (replay): each priced kernel also goes to the kernel list of the segment it is
	 * added to; segs[i] is a segment, lists[i] its list.  rec NULL: nothing is recorded. */
	sim_rec *rec;
	sim_weight w;    /* the weight of the linear layers priced next */
	int nsegs;
	const seg *segs[2 * SLOT_N];
	int32_t lists[2 * SLOT_N];
} ctx;

/* Adds one kernel to a segment.  The framework issues kernels from the host one at a time
 * (PyTorch eager): a stream of kernels shorter than the issue time runs at the host's pace. */
static void
add(const ctx *x, seg *s, double t, double flops, hw_prov p)
{
	if (t > 0.0 && t < x->host)
		t = x->host;
	seg_add(s, t, flops, p);
}

static void
record(const ctx *x, const seg *s, const sim_kernel *k)
{
	for (int i = 0; i < x->nsegs; i++)
		if (x->segs[i] == s) {
			sim_rec_kernel(x->rec, x->lists[i], k);
			return;
		}
}

static void
mem(const ctx *x, seg *s, double bytes)
{
	hw_prov p = HW_PROV_DATASHEET;
	double t = hw_cost_mem(x->cost, bytes, &p);
	add(x, s, t, 0.0, p);
	if (x->rec) {
		sim_kernel k = {.kind = SIM_K_MEM, .layer = -1, .bytes = bytes};
		record(x, s, &k);
	}
}

/* One GEMM into segment s.  The time is priced before it is added: in add(s, hw_cost_gemm(...,
 * &p), fl, p) the order in which C evaluates the arguments is unspecified, and p could be read
 * before the call has set it. */
static void
gemm(const ctx *x, hw_dtype dt, seg *s, sim_weight w, sim_pass pass, double M, double N, double K, double batch)
{
	hw_prov p = HW_PROV_DATASHEET;
	double fl = 2.0 * M * N * K * batch;
	double t = hw_cost_gemm(x->cost, dt, M, N, K, batch, &p);
	add(x, s, t, fl, p);
	if (x->rec) {
		sim_kernel k = {.kind = SIM_K_GEMM, .dtype = dt, .weight = w, .pass = pass, .layer = -1,
				.m = M, .n = N, .k = K, .batch = batch, .flops = fl};
		record(x, s, &k);
	}
}

/* A linear layer: forward into f, input gradient into b, weight gradient into w (or b). */
static void
linear(const ctx *x, seg *f, seg *b, seg *w, double M, double N, double K, double batch)
{
	gemm(x, x->dt, f, x->w, SIM_PASS_FWD, M, N, K, batch);
	gemm(x, x->dt, b, x->w, SIM_PASS_DGRAD, M, K, N, batch);
	gemm(x, x->dt, x->zb ? w : b, x->w, SIM_PASS_WGRAD, K, N, M, batch);
}

/* A batched matrix product with no weights (attention scores and context): its backward has
 * two products of the same size, both input gradients. */
static void
bmm(const ctx *x, seg *f, seg *b, double M, double N, double K, double batch)
{
	gemm(x, x->adt, f, SIM_W_NONE, SIM_PASS_BMM, M, N, K, batch);
	gemm(x, x->adt, b, SIM_W_NONE, SIM_PASS_BMM, M, K, N, batch);
	gemm(x, x->adt, b, SIM_W_NONE, SIM_PASS_BMM, K, N, M, batch);
}

/* Recording: segment s's kernels go to list l. */
static void
map_seg(ctx *x, const seg *s, int32_t l)
{
	if (x->nsegs < 2 * SLOT_N) {
		x->segs[x->nsegs] = s;
		x->lists[x->nsegs++] = l;
	}
}

/* Recording: a block's SLOT_N lists, made and mapped. */
static void
map_block(ctx *x, block_cost *bc)
{
	bc->klist = -1;
	if (x->rec == NULL)
		return;
	for (int i = 0; i < SLOT_N; i++) {
		int32_t l = sim_rec_list(x->rec);
		if (i == 0)
			bc->klist = l;
		if (l < 0)
			return;
	}
	const seg *segs[SLOT_N] = {&bc->fwd[0], &bc->fwd[1], &bc->fwd[2], &bc->bwd[0], &bc->bwd[1], &bc->bwd[2], &bc->w,
				   &bc->recompute};
	for (int i = 0; i < SLOT_N; i++)
		map_seg(x, segs[i], bc->klist + i);
}

static double
ffn_mult(const model_tf *t)
{
	return t->mlp == MODEL_MLP_SWIGLU ? 2.0 : 1.0;
}

/* Forward and backward memory traffic of the MLP activation over n elements. */
static void
activation(const ctx *x, const model_tf *t, seg *f, seg *b, double n)
{
	if (t->mlp == MODEL_MLP_SWIGLU) {
		mem(x, f, 3.0 * n * x->e); /* read gate and up, write product */
		mem(x, b, 5.0 * n * x->e); /* read gate, up, grad; write two grads */
	} else {
		mem(x, f, 2.0 * n * x->e);
		mem(x, b, 3.0 * n * x->e);
	}
}

/* One dense MLP of width `width` (already divided by tp) over T tokens into (f, b, w); w1 and
 * w2 name its two weights for the recording. */
static void
dense_mlp(const ctx *x, const model_tf *t, seg *f, seg *b, seg *w, double T, double width, sim_weight w1,
	  sim_weight w2)
{
	double h = (double)t->hidden;
	ctx y = *x;
	y.w = w1;
	linear(&y, f, b, w, T, ffn_mult(t) * width, h, 1.0);
	activation(x, t, f, b, T * width);
	y.w = w2;
	linear(&y, f, b, w, T, h, width, 1.0);
}

static void
block_init(block_cost *bc)
{
	memset(bc, 0, sizeof *bc);
	bc->klist = -1;
}

double
sim_layer_params(const model *m, const sim_train_cfg *c, int64_t layer, double *expert)
{
	const model_tf *t = model_transformer(m);
	double tp = (double)c->tp;
	double mult = t->mlp == MODEL_MLP_SWIGLU ? 3.0 : 2.0;
	double attn = model_attn_params(m) / tp;
	double mlp = model_mlp_params(m, layer);
	double ex = 0.0;
	if (model_layer_is_moe(m, layer)) {
		double all = (double)t->experts * mult * (double)t->hidden * (double)t->expert_ffn;
		ex = all / (double)c->ep / tp;
		mlp = (mlp - all) / tp; /* shared experts, router, norm */
	} else {
		mlp /= tp;
	}
	if (expert)
		*expert = ex;
	return attn + mlp + ex;
}

void
sim_layer_cost(const model *m, const hw_cost *cost, const sim_train_cfg *c, int64_t layer, layer_cost *out)
{
	sim_layer_cost_rec(m, cost, c, layer, out, NULL);
}

void
sim_layer_cost_rec(const model *m, const hw_cost *cost, const sim_train_cfg *c, int64_t layer, layer_cost *out,
		   sim_rec *rec)
{
	const model_tf *t = model_transformer(m);
	const hw_system *sys = hw_cost_system(cost);
	ctx x = {.cost = cost, .dt = c->dtype, .adt = c->dtype == HW_FP8 ? HW_BF16 : c->dtype, .e = sim_act_bytes(c),
		 .zb = c->schedule == SIM_ZB_H1, .host = hw_cost_host_op(cost), .rec = rec};
	int64_t seq = sim_seq(m, c);
	double tp = (double)c->tp, b = (double)c->micro_batch;
	double s = (double)seq, sl = s / (double)c->cp;
	double T = b * sl;
	bool sp = c->sequence_parallel && c->tp > 1;
	double Tn = sp ? T / tp : T;
	double h = (double)t->hidden;
	double at = (double)t->heads / tp;
	double gt = t->kv_heads >= c->tp ? (double)t->kv_heads / tp : 1.0;
	bool mla = t->kv_lora_rank > 0;
	double dqk = mla ? (double)(t->qk_nope_dim + t->qk_rope_dim) : (double)t->head_dim;
	double dv = mla ? (double)t->v_head_dim : (double)t->head_dim;
	bool dropout = t->bias;
	double e = x.e;
	placement pl;
	sim_place(sys, c, &pl);

	/* ---- attention ---- */
	block_cost *A = &out->attn;
	block_init(A);
	map_block(&x, A);
	seg *f = A->fwd, *bw = A->bwd;
	/* pre: norm, QKV projections, rotary */
	mem(&x, &f[0], 2.0 * Tn * h * e);
	mem(&x, &bw[2], 3.0 * Tn * h * e);
	if (mla) {
		double q = (double)t->q_lora_rank, kv = (double)t->kv_lora_rank, rope = (double)t->qk_rope_dim;
		if (q > 0) {
			x.w = SIM_W_Q_DOWN;
			linear(&x, &f[0], &bw[2], &A->w, T, q, h, 1.0);
			mem(&x, &f[0], 2.0 * T * q * e);
			mem(&x, &bw[2], 3.0 * T * q * e);
			x.w = SIM_W_Q_UP;
			linear(&x, &f[0], &bw[2], &A->w, T, at * dqk, q, 1.0);
		} else {
			x.w = SIM_W_Q_UP;
			linear(&x, &f[0], &bw[2], &A->w, T, at * dqk, h, 1.0);
		}
		x.w = SIM_W_KV_DOWN;
		linear(&x, &f[0], &bw[2], &A->w, T, kv + rope, h, 1.0);
		mem(&x, &f[0], 2.0 * T * kv * e);
		mem(&x, &bw[2], 3.0 * T * kv * e);
		x.w = SIM_W_KV_UP;
		linear(&x, &f[0], &bw[2], &A->w, T, at * ((double)t->qk_nope_dim + dv), kv, 1.0);
		mem(&x, &f[0], 2.0 * T * (at + 1.0) * rope * e);
		mem(&x, &bw[2], 2.0 * T * (at + 1.0) * rope * e);
	} else {
		x.w = SIM_W_QKV;
		linear(&x, &f[0], &bw[2], &A->w, T, (at + 2.0 * gt) * dqk, h, 1.0);
		if (t->pos == MODEL_POS_ROPE) {
			mem(&x, &f[0], 2.0 * T * (at + gt) * dqk * e);
			mem(&x, &bw[2], 2.0 * T * (at + gt) * dqk * e);
		}
	}
	/* core: scores and context over all s keys for the s/cp local queries */
	double causal = t->causal ? 0.5 : 1.0;
	if (c->attention == SIM_ATTN_FLASH) {
		double fl = 2.0 * b * at * sl * s * (dqk + dv) * causal;
		double io = T * (at * dqk + at * dv) * e + b * s * gt * (dqk + dv) * e;
		hw_prov p = HW_PROV_DATASHEET;
		double ta = hw_cost_attn(cost, x.adt, fl, io, false, &p);
		add(&x, &f[1], ta, fl, p);
		/* backward: recomputes the scores, then dV, dP, dQ, dK: 2.5x the forward products */
		ta = hw_cost_attn(cost, x.adt, 2.5 * fl, 2.0 * io, true, &p);
		add(&x, &bw[1], ta, 2.5 * fl, p);
		if (rec) {
			sim_kernel k = {.kind = SIM_K_ATTN, .dtype = x.adt, .layer = -1, .b = b, .heads = at, .kv_heads = gt,
					.sq = sl, .sk = s, .dqk = dqk, .dv = dv, .causal = t->causal, .flops = fl, .bytes = io};
			record(&x, &f[1], &k);
			k.bwd = true;
			k.flops = 2.5 * fl;
			k.bytes = 2.0 * io;
			record(&x, &bw[1], &k);
		}
	} else {
		double batch = b * at, elems = b * at * sl * s;
		seg rf = {0};
		bmm(&x, &f[1], &bw[1], sl, s, dqk, batch);
		mem(&x, &f[1], 2.0 * elems * e);     /* scale, mask, softmax */
		mem(&x, &bw[1], 3.0 * elems * e);
		if (dropout) {
			mem(&x, &f[1], elems * (2.0 * e + 1.0));
			mem(&x, &bw[1], elems * (2.0 * e + 1.0));
		}
		bmm(&x, &f[1], &bw[1], sl, dv, s, batch);
		if (c->recompute == SIM_RECOMPUTE_SELECTIVE) {
			/* Korthikanti 2022: recompute the attention core (scores, softmax, dropout, context) */
			rf = f[1];
			if (rec && A->klist >= 0)
				sim_rec_append(rec, A->klist + SLOT_RC, A->klist + SLOT_F1);
		}
		A->recompute = rf;
	}
	/* post: output projection, dropout, residual */
	x.w = SIM_W_PROJ;
	linear(&x, &f[2], &bw[0], &A->w, T, h, at * dv, 1.0);
	mem(&x, &f[2], Tn * h * (3.0 * e + (dropout ? 1.0 : 0.0)));
	mem(&x, &bw[0], Tn * h * (2.0 * e + (dropout ? 1.0 : 0.0)));
	if (c->cp > 1) {
		/* Ring attention: each step passes a K/V chunk (and in backward also dK/dV) around the
		 * cp ranks, beside the attention kernels. */
		A->split = true;
		A->side_bytes = (double)(c->cp - 1) * 2.0 * b * sl * gt * ((dqk + dv) / 2.0) * e;
		A->side_op = HW_SEND_RECV;
		A->side_ranks = 2;
		A->side_per_node = pl.cp_per_node >= 2 ? 2 : 1;
	}

	/* ---- MLP ---- */
	block_cost *B = &out->mlp;
	block_init(B);
	map_block(&x, B);
	f = B->fwd;
	bw = B->bwd;
	mem(&x, &f[0], 2.0 * Tn * h * e);
	mem(&x, &bw[2], 3.0 * Tn * h * e);
	if (model_layer_is_moe(m, layer)) {
		double E = (double)t->experts, k = (double)t->top_k, fe = (double)t->expert_ffn / tp;
		double imb = c->moe_imbalance;
		if (c->moe_capacity > 0 && imb > c->moe_capacity)
			imb = c->moe_capacity;
		/* pre: router, top-k, permutation */
		x.w = SIM_W_ROUTER;
		linear(&x, &f[0], &bw[2], &B->w, T, E, h, 1.0);
		mem(&x, &f[0], 2.0 * T * E * 4.0 + 2.0 * T * k * h * e);
		mem(&x, &bw[2], 2.0 * T * E * 4.0 + 2.0 * T * k * h * e);
		/* core: the local experts' grouped GEMMs */
		double local = E / (double)c->ep;
		double tokens = T * k * imb / local;
		x.w = SIM_W_EXPERT_FC1;
		linear(&x, &f[1], &bw[1], &B->w, tokens, ffn_mult(t) * fe, h, local);
		activation(&x, t, &f[1], &bw[1], tokens * fe * local);
		x.w = SIM_W_EXPERT_FC2;
		linear(&x, &f[1], &bw[1], &B->w, tokens, h, fe, local);
		/* post: un-permute and combine, shared experts, residual */
		mem(&x, &f[2], 2.0 * T * k * h * e);
		mem(&x, &bw[0], 2.0 * T * k * h * e);
		if (t->shared_experts > 0)
			dense_mlp(&x, t, &f[2], &bw[0], &B->w, T, (double)t->shared_experts * fe, SIM_W_SHARED_FC1,
				  SIM_W_SHARED_FC2);
		if (c->ep > 1) {
			B->split = true;
			B->side_bytes = T * k * h * e;
			B->side_op = HW_ALL_TO_ALL;
			B->side_ranks = c->ep;
			B->side_per_node = pl.ep_per_node;
		}
	} else {
		dense_mlp(&x, t, &f[1], &bw[1], &B->w, T, (double)t->ffn / tp, SIM_W_FC1, SIM_W_FC2);
	}
	mem(&x, &f[2], Tn * h * (3.0 * e + (dropout ? 1.0 : 0.0)));
	mem(&x, &bw[0], Tn * h * (2.0 * e + (dropout ? 1.0 : 0.0)));

	double expert = 0.0;
	double total = sim_layer_params(m, c, layer, &expert);
	A->params = model_attn_params(m) / tp;
	B->params = total - A->params - expert;
	B->expert_params = expert;
}

/* Recording: the forward and backward segments of the embedding or head get two new lists. */
static void
map_pair(ctx *x, const seg *fwd, const seg *bwd, int32_t *lists)
{
	if (x->rec == NULL)
		return;
	lists[0] = sim_rec_list(x->rec);
	lists[1] = sim_rec_list(x->rec);
	map_seg(x, fwd, lists[0]);
	map_seg(x, bwd, lists[1]);
}

/* Embedding lookup (and position/type embeddings): a gather forward, a scatter-add backward. */
void
sim_embed_cost(const model *m, const hw_cost *cost, const sim_train_cfg *c, seg *fwd, seg *bwd)
{
	sim_embed_cost_rec(m, cost, c, fwd, bwd, NULL, NULL);
}

void
sim_embed_cost_rec(const model *m, const hw_cost *cost, const sim_train_cfg *c, seg *fwd, seg *bwd, sim_rec *rec,
		   int32_t *lists)
{
	const model_tf *t = model_transformer(m);
	ctx x = {.cost = cost, .dt = c->dtype, .adt = c->dtype, .e = sim_act_bytes(c), .host = hw_cost_host_op(cost), .rec = rec};
	map_pair(&x, fwd, bwd, lists);
	memset(fwd, 0, sizeof *fwd);
	memset(bwd, 0, sizeof *bwd);
	double T = (double)c->micro_batch * (double)sim_seq(m, c) / (double)c->cp;
	double h = (double)t->hidden;
	mem(&x, fwd, 3.0 * T * h * x.e);
	mem(&x, bwd, 3.0 * T * h * x.e);
}

/* Final norm, LM head (vocabulary split over tp) and the loss; BERT adds the MLM transform. */
void
sim_head_cost(const model *m, const hw_cost *cost, const sim_train_cfg *c, seg *fwd, seg *bwd)
{
	sim_head_cost_rec(m, cost, c, fwd, bwd, NULL, NULL);
}

void
sim_head_cost_rec(const model *m, const hw_cost *cost, const sim_train_cfg *c, seg *fwd, seg *bwd, sim_rec *rec,
		  int32_t *lists)
{
	const model_tf *t = model_transformer(m);
	ctx x = {.cost = cost, .dt = c->dtype, .adt = c->dtype, .e = sim_act_bytes(c), .host = hw_cost_host_op(cost), .rec = rec};
	map_pair(&x, fwd, bwd, lists);
	memset(fwd, 0, sizeof *fwd);
	memset(bwd, 0, sizeof *bwd);
	double T = (double)c->micro_batch * (double)sim_seq(m, c) / (double)c->cp;
	double h = (double)t->hidden, V = (double)t->vocab / (double)c->tp;
	mem(&x, fwd, 2.0 * T * h * x.e);
	mem(&x, bwd, 3.0 * T * h * x.e);
	if (t->mlm_head) {
		x.w = SIM_W_MLM;
		linear(&x, fwd, bwd, bwd, T, h, h, 1.0);
		mem(&x, fwd, 4.0 * T * h * x.e);
		mem(&x, bwd, 5.0 * T * h * x.e);
	}
	x.w = SIM_W_HEAD;
	linear(&x, fwd, bwd, bwd, T, V, h, 1.0);
	/* cross-entropy over fp32 logits: softmax forward, gradient backward */
	mem(&x, fwd, 3.0 * T * V * 4.0);
	mem(&x, bwd, 2.0 * T * V * 4.0 + T * V * x.e);
}

double
sim_embed_params(const model *m, const sim_train_cfg *c)
{
	return model_embedding_params(m) / (double)c->tp;
}

double
sim_head_params(const model *m, const sim_train_cfg *c)
{
	return model_head_params(m) / (double)c->tp;
}

static double
block_time(const block_cost *bc, bool bwd)
{
	const seg *s = bwd ? bc->bwd : bc->fwd;
	double t = s[0].t + s[1].t + s[2].t;
	if (bwd)
		t += bc->w.t + bc->recompute.t;
	return t;
}

double
sim_layer_time(const model *m, const hw_cost *cost, const sim_train_cfg *c, int64_t layer)
{
	layer_cost lc;
	sim_layer_cost(m, cost, c, layer, &lc);
	placement pl;
	sim_place(hw_cost_system(cost), c, &pl);
	double T = (double)c->micro_batch * (double)sim_seq(m, c) / (double)c->cp;
	double msg = T * (double)model_transformer(m)->hidden * sim_act_bytes(c);
	bool sp = c->sequence_parallel && c->tp > 1;
	double tp = 0.0;
	if (c->tp > 1) {
		if (sp)
			tp = hw_cost_coll_time(cost, HW_ALL_GATHER, c->tp, pl.tp_per_node, msg, NULL) +
			     hw_cost_coll_time(cost, HW_REDUCE_SCATTER, c->tp, pl.tp_per_node, msg, NULL);
		else
			tp = hw_cost_coll_time(cost, HW_ALL_REDUCE, c->tp, pl.tp_per_node, msg, NULL);
	}
	double fwd = block_time(&lc.attn, false) + block_time(&lc.mlp, false) + 2.0 * tp;
	double bwd = block_time(&lc.attn, true) + block_time(&lc.mlp, true) + 2.0 * tp;
	if (c->recompute == SIM_RECOMPUTE_FULL)
		bwd += fwd;
	return fwd + bwd;
}
