/*
 * kernels.c -- the one kernel builder (see kernels_int.h): the kernels of a transformer layer,
 * its embedding and its head, for training, serving and the replay alike.
 *
 * Shapes (T tokens through the linear layers of one rank, t = tp, h hidden, a heads, g kv heads,
 * d head dim, f MLP width; a linear layer of input T x K and weight K x N):
 *   forward GEMM (M=T, N, K); backward: input gradient (M=T, N=K, K=N) and weight gradient
 *   (M=K, N=N, K=T) -- the same FLOPs each, so training is 3x the forward.
 *   attention: QKV (T, (a + 2g) d / t, h) [MLA: the q and kv low-rank projections], scores and
 *   context over the sk keys (flash: one fused kernel; unfused: batched GEMMs b a/t x [sq x d] x
 *   [d x sk] and the softmax/dropout kernels over b a/t sq sk elements), output projection
 *   (T, h, a d / t);
 *   MLP: up (T, f / t, h) (SwiGLU: 2f / t), activation, down (T, h, f / t); MoE: router
 *   (T, E, h), each local expert that receives tokens multiplies its share of the T x top_k
 *   routed tokens (times the load imbalance), shared experts as a dense MLP.
 *   Memory-bound kernels move bytes: norms read and write the T x h activations (T / t of them
 *   with sequence parallelism), activations read and write T x f / t, residual adds read two
 *   and write one, dropout adds a 1-byte mask.  Backward kernels move about half again more.
 * Experts that receive tokens: with E experts, ep ranks of T tokens each routing top_k, a rank's
 * E / ep local experts get ep T top_k assignments of the group spread over E, so the expected
 * number of them hit is E/ep (1 - (1 - 1/E)^(ep T top_k)) -- all of them in a training step,
 * a few in a small decode batch.
 */
#include "config.h"
#include "sim/kernels_int.h"

#include <math.h>
#include <string.h>

typedef struct bctx {
	const sim_kspec *s;
	const model_tf *t;
	sim_kemit emit;
	void *arg;
	int block;
	sim_weight w; /* the weight of the linear layers emitted next */
	int64_t layer;
	int *mm;      /* a layer's: its forward matmuls so far (per-op recomputation), or NULL */
} bctx;

static void
put(const bctx *x, int slot, const hw_kernel *k, sim_weight w, sim_pass pass)
{
	sim_kernel sk = {.hk = *k, .weight = w, .pass = pass, .layer = -1};
	x->emit(x->arg, x->block, slot, &sk);
	/* per-op selective recomputation (torchtitan's policy): before the backward, the forward's
	 * element-wise kernels and every second matmul run again; the other matmuls' and the
	 * attention's outputs were kept */
	if (x->s->opsac && x->mm != NULL && slot <= SLOT_F2 && pass == SIM_PASS_FWD &&
	    (k->kind == HW_K_MEM || (k->kind == HW_K_GEMM && w != SIM_W_NONE && ++*x->mm % 2 == 0)))
		x->emit(x->arg, x->block, SLOT_RC, &sk);
}

static void
mem(const bctx *x, int slot, double bytes)
{
	if (!(bytes > 0))
		return;
	hw_kernel k = {.kind = HW_K_MEM, .bytes = bytes};
	put(x, slot, &k, SIM_W_NONE, SIM_PASS_FWD);
}

static void
gemm(const bctx *x, int slot, hw_dtype dt, double wbytes, sim_weight w, sim_pass pass, double M, double N, double K,
     double batch)
{
	hw_kernel k = {.kind = HW_K_GEMM, .dtype = dt, .m = M, .n = N, .k = K, .batch = batch, .wbytes = wbytes};
	put(x, slot, &k, w, pass);
}

/* The GEMM dtype of the linear layer being emitted: FP8 recipes keep the LM head and the router
 * in 16 bits (Transformer Engine's and torchao's filters; docs/profiles.md). */
static hw_dtype
linear_dtype(const bctx *x)
{
	const sim_kspec *s = x->s;
	if (s->expert_fp4 && (x->w == SIM_W_EXPERT_FC1 || x->w == SIM_W_EXPERT_FC2))
		return HW_FP4;
	if (s->dt == HW_FP8 && (x->w == SIM_W_HEAD || x->w == SIM_W_ROUTER || x->w == SIM_W_MLM))
		return s->adt;
	return s->dt;
}

/* The casts an FP8 GEMM's 16-bit operands need, bytes moved for n elements of one operand:
 * delayed scaling casts with the previous steps' amax in one pass that also writes the
 * transposed copy the weight gradient reads (read e, write 1 + 1); current (tensorwise) and
 * row-wise scaling first read the operand for its amax, then cast (read 2e, write 1), and cast
 * again transposed for the weight gradient; MXFP8 writes data and per-32 scales in both
 * orientations (read e twice, write 2 x (1 + 1/32)). */
static double
fp8_cast_bytes(int recipe, double e, double n, bool wgrad)
{
	switch (recipe) {
	case HW_FP8_TENSORWISE:
	case HW_FP8_ROWWISE:
		return wgrad ? n * (e + 1.0) : n * (2.0 * e + 1.0);
	case HW_FP8_MXFP8:
		return wgrad ? 0.0 : n * (2.0 * e + 2.0 * (1.0 + 1.0 / 32.0));
	case HW_FP8_DELAYED:
	default:
		return wgrad ? 0.0 : n * (e + 2.0);
	}
}

static void mem(const bctx *x, int slot, double bytes);

/* The LoRA adapters on the linear layer being emitted (weight x->w, n outputs and k inputs on
 * this rank): the projections of the layer that lora_mask selects, each (n_i, k_i); a fused
 * QKV splits into q, k and v, a gated MLP's first layer into gate and up (finetune.c counts
 * the same projections).  The head, the MLM transform and the router carry none. */
static int
adapted_parts(const bctx *x, double N, double K, double *pn, double *pk)
{
	const sim_kspec *s = x->s;
	const model_tf *t = x->t;
	unsigned m = s->lora_mask ? s->lora_mask : SIM_LORA_ALL;
	int n = 0;
	switch (x->w) {
	case SIM_W_QKV: {
		double tp = (double)s->tp, at = (double)t->heads / tp;
		double gt = t->kv_heads >= s->tp ? (double)t->kv_heads / tp : 1.0, d = N / (at + 2.0 * gt);
		const double outs[3] = {at * d, gt * d, gt * d};
		const unsigned bits[3] = {SIM_LORA_Q, SIM_LORA_K, SIM_LORA_V};
		for (int i = 0; i < 3; i++)
			if (m & bits[i])
				pn[n] = outs[i], pk[n++] = K;
		return n;
	}
	case SIM_W_Q_DOWN: case SIM_W_Q_UP:
		if (m & SIM_LORA_Q)
			pn[n] = N, pk[n++] = K;
		return n;
	case SIM_W_KV_DOWN: case SIM_W_KV_UP:
		if (m & (SIM_LORA_K | SIM_LORA_V))
			pn[n] = N, pk[n++] = K;
		return n;
	case SIM_W_PROJ:
		if (m & SIM_LORA_O)
			pn[n] = N, pk[n++] = K;
		return n;
	case SIM_W_FC1: case SIM_W_EXPERT_FC1: case SIM_W_SHARED_FC1:
		if (t->mlp == MODEL_MLP_SWIGLU) {
			if (m & SIM_LORA_GATE)
				pn[n] = N / 2.0, pk[n++] = K;
			if (m & SIM_LORA_UP)
				pn[n] = N / 2.0, pk[n++] = K;
		} else if (m & SIM_LORA_UP) {
			pn[n] = N, pk[n++] = K;
		}
		return n;
	case SIM_W_FC2: case SIM_W_EXPERT_FC2: case SIM_W_SHARED_FC2:
		if (m & SIM_LORA_DOWN)
			pn[n] = N, pk[n++] = K;
		return n;
	default:
		return 0;
	}
}

/* A frozen NF4 base weight is dequantized to 16 bits before each GEMM that reads it, as
 * bitsandbytes' MatMul4Bit (dequantize_4bit, then a 16-bit matmul, forward and again for the
 * input gradient) and torchao's NF4 linear do in training; its fused 4-bit GEMV serves single
 * tokens only.  The head and the router stay 16-bit. */
static bool
quantized(const bctx *x)
{
	return x->s->qbytes > 0 && x->w != SIM_W_HEAD && x->w != SIM_W_MLM && x->w != SIM_W_ROUTER;
}

/* The adapters' kernels beside a linear layer of M tokens: forward x A (M, r, k) and (xA) B
 * (M, n, r) and the add of their output into the layer's (read two, write one); backward the
 * weight gradient of B (r, n, M), the gradient through B (M, r, n), the weight gradient of A
 * (k, r, M), the input gradient through A (M, k, r) and its add into the layer's input
 * gradient.  6 M r (k + n) FLOPs in all, as Hu et al. count them. */
static void
adapters(const bctx *x, int f, int b, int w, double M, double N, double K, double batch, bool bwd)
{
	const sim_kspec *s = x->s;
	double pn[3], pk[3], r = (double)s->lora_rank, e = s->e;
	if (s->lora_rank <= 0)
		return;
	int np = adapted_parts(x, N, K, pn, pk);
	for (int i = 0; i < np; i++) {
		if (!bwd) {
			gemm(x, f, s->adt, 0.0, SIM_W_LORA_A, SIM_PASS_FWD, M, r, pk[i], batch);
			gemm(x, f, s->adt, 0.0, SIM_W_LORA_B, SIM_PASS_FWD, M, pn[i], r, batch);
			mem(x, f, 3.0 * M * pn[i] * batch * e);
			continue;
		}
		gemm(x, w, s->adt, 0.0, SIM_W_LORA_B, SIM_PASS_WGRAD, r, pn[i], M, batch);
		gemm(x, b, s->adt, 0.0, SIM_W_LORA_B, SIM_PASS_DGRAD, M, r, pn[i], batch);
		gemm(x, w, s->adt, 0.0, SIM_W_LORA_A, SIM_PASS_WGRAD, pk[i], r, M, batch);
		gemm(x, b, s->adt, 0.0, SIM_W_LORA_A, SIM_PASS_DGRAD, M, pk[i], r, batch);
		mem(x, b, 3.0 * M * pk[i] * batch * e);
	}
}

/* A linear layer: forward into f, and with the backward the input gradient into b and the
 * weight gradient into b too, or into SLOT_W when a zero-bubble schedule runs it apart (the
 * head's never: it ends the last stage's backward).  An FP8 layer's casts run beside it.  A
 * frozen base computes the input gradient only; its adapters and an NF4 base's
 * dequantization run beside it. */
static void
linear(const bctx *x, int f, int b, double M, double N, double K, double batch)
{
	const sim_kspec *s = x->s;
	bool first = x->w == SIM_W_QKV || x->w == SIM_W_Q_DOWN || x->w == SIM_W_Q_UP || x->w == SIM_W_KV_DOWN ||
		     x->w == SIM_W_KV_UP || x->w == SIM_W_FC1 || x->w == SIM_W_SSM_IN;
	int w = (s->zb && x->w != SIM_W_HEAD && x->w != SIM_W_MLM) || (s->wbeside && first) ? SLOT_W : b;
	hw_dtype dt = linear_dtype(x);
	bool fp8 = dt == HW_FP8 || dt == HW_FP4; /* an fp4 GEMM's activations are quantized the same way */
	bool nf4 = quantized(x);
	double deq = K * N * batch * (s->qbytes + s->e); /* read the packed weights and scales, write 16 bits */
	if (fp8)
		mem(x, f, fp8_cast_bytes(s->fp8_recipe, s->e, M * K * batch, false));
	if (nf4)
		mem(x, f, deq);
	gemm(x, f, dt, s->wbytes, x->w, SIM_PASS_FWD, M, N, K, batch);
	adapters(x, f, b, w, M, N, K, batch, false);
	if (!s->backward)
		return;
	if (fp8)
		mem(x, b, fp8_cast_bytes(s->fp8_recipe, s->e, M * N * batch, false));
	if (nf4)
		mem(x, b, deq);
	gemm(x, b, dt, s->wbytes, x->w, SIM_PASS_DGRAD, M, K, N, batch);
	adapters(x, f, b, w, M, N, K, batch, true);
	if (s->frozen)
		return;
	if (fp8 && fp8_cast_bytes(s->fp8_recipe, s->e, 1.0, true) > 0)
		mem(x, w, fp8_cast_bytes(s->fp8_recipe, s->e, (M * K + M * N) * batch, true));
	gemm(x, w, dt, s->wbytes, x->w, SIM_PASS_WGRAD, K, N, M, batch);
}

/* Forward and backward memory traffic of a memory-bound step. */
static void
mem2(const bctx *x, int f, int b, double fwd, double bwd)
{
	mem(x, f, fwd);
	if (x->s->backward)
		mem(x, b, bwd);
}

/* A batched matrix product with no weights (attention scores and context): its backward has
 * two products of the same size, both input gradients. */
static void
bmm(const bctx *x, int f, int b, double M, double N, double K, double batch)
{
	const sim_kspec *s = x->s;
	gemm(x, f, s->adt, 0.0, SIM_W_NONE, SIM_PASS_BMM, M, N, K, batch);
	if (!s->backward)
		return;
	gemm(x, b, s->adt, 0.0, SIM_W_NONE, SIM_PASS_BMM, M, K, N, batch);
	gemm(x, b, s->adt, 0.0, SIM_W_NONE, SIM_PASS_BMM, K, N, M, batch);
}

static double
ffn_mult(const model_tf *t)
{
	return t->mlp == MODEL_MLP_SWIGLU ? 2.0 : 1.0;
}

/* Forward and backward memory traffic of the MLP activation over n elements. */
static void
activation(const bctx *x, int f, int b, double n)
{
	double e = x->s->e;
	if (x->t->mlp == MODEL_MLP_SWIGLU)
		mem2(x, f, b, 3.0 * n * e, 5.0 * n * e); /* read gate and up, write the product; read three, write two */
	else
		mem2(x, f, b, 2.0 * n * e, 3.0 * n * e);
}

/* One dense MLP of width `width` (already divided by tp) over T tokens; w1 and w2 name its two
 * weights. */
static void
dense_mlp(bctx *x, int f, int b, double T, double width, sim_weight w1, sim_weight w2)
{
	double h = (double)x->t->hidden;
	x->w = w1;
	linear(x, f, b, T, ffn_mult(x->t) * width, h, 1.0);
	activation(x, f, b, T * width);
	x->w = w2;
	linear(x, f, b, T, h, width, 1.0);
}

/* The attention dims of one rank: query heads, key/value heads (replicated when tp exceeds
 * them), head dims (MLA: the decompressed heads). */
static void
attn_dims(const sim_kspec *s, const model_tf *t, double *at, double *gt, double *dqk, double *dv)
{
	double tp = (double)s->tp;
	bool mla = t->kv_lora_rank > 0;
	*at = (double)t->heads / tp;
	*gt = t->kv_heads >= s->tp ? (double)t->kv_heads / tp : 1.0;
	*dqk = mla ? (double)(t->qk_nope_dim + t->qk_rope_dim) : (double)t->head_dim;
	*dv = mla ? (double)t->v_head_dim : (double)t->head_dim;
}

void
sim_kernels_attn(const sim_kspec *s, double b, double sq, double sk, double density, bool decode, sim_kemit emit,
		 void *arg)
{
	const model_tf *t = model_transformer(s->m);
	bctx x = {.s = s, .t = t, .emit = emit, .arg = arg, .block = SIM_KB_ATTN, .layer = -1};
	double at, gt, dqk, dv;
	attn_dims(s, t, &at, &gt, &dqk, &dv);
	bool latent = decode && t->kv_lora_rank > 0;
	if (latent) {
		/* MLA decode: every head scores against the shared latent (kv_lora_rank + rope) and
		 * reads its context out of the latent (kv_lora_rank) */
		gt = 1.0;
		dqk = (double)(t->kv_lora_rank + t->qk_rope_dim);
		dv = (double)t->kv_lora_rank;
	} else if (decode && s->kv_per_head) {
		/* a kernel that gives each query head its own pass over the cache reads a KV head
		 * once per query head that shares it */
		gt = at;
	}
	if (s->flash) {
		hw_kernel k = {.kind = HW_K_ATTN, .dtype = s->adt, .impl = s->attn, .b = b, .heads = at, .kv_heads = gt,
			       .sq = sq, .sk = sk, .dqk = dqk, .dv = dv, .density = density, .kvbytes = s->kvbytes,
			       .kv_latent = latent};
		put(&x, SLOT_F1, &k, SIM_W_NONE, SIM_PASS_FWD);
		if (s->backward) {
			k.bwd = true;
			put(&x, SLOT_B1, &k, SIM_W_NONE, SIM_PASS_FWD);
		}
		return;
	}
	double batch = b * at, elems = b * at * sq * sk, e = s->e;
	bmm(&x, SLOT_F1, SLOT_B1, sq, sk, dqk, batch);
	mem2(&x, SLOT_F1, SLOT_B1, 2.0 * elems * e, 3.0 * elems * e); /* scale, mask, softmax */
	if (s->dropout)
		mem2(&x, SLOT_F1, SLOT_B1, elems * (2.0 * e + 1.0), elems * (2.0 * e + 1.0));
	bmm(&x, SLOT_F1, SLOT_B1, sq, dv, sk, batch);
}

/* A Mamba-2 mixer (Megatron-Core's MambaMixer; Dao and Gu 2024, arXiv 2405.21060) over T
 * tokens, b sequences of sq, on one of tp ranks, in the attention block's slots: the norm; in_proj
 * (T, (2 d_inner + 2 G N + H) / tp, h): z, x, B, C and dt, split over the heads and groups; the
 * causal depthwise convolution of x, B and C (a memory-bound pass, SiLU fused); the chunked SSD
 * scan (section 6 of the paper) as the batched products it runs in chunks of Q tokens -- per
 * group C B^T (Q x Q x N), per head the masked scores times x (Q x P x Q), the chunk states
 * B^T x (N x P x Q) and the states read out by C (Q x P x N) -- plus its memory traffic (x, B,
 * C, dt in, y out, the fp32 chunk states written and read; the small recurrence between chunks
 * is left out); the gated RMSNorm y silu(z); out_proj (T, h, d_inner / tp); dropout, residual. */
static void
mamba(bctx *x, double T, double b, double sq)
{
	const sim_kspec *s = x->s;
	const model_tf *t = x->t;
	double tp = (double)s->tp, Tn = s->sp ? T / tp : T, h = (double)t->hidden, e = s->e;
	double H = (double)t->ssm_heads / tp, P = (double)t->ssm_head_dim, G = (double)t->ssm_groups / tp;
	double N = (double)t->ssm_state, Q = (double)t->ssm_chunk, di = H * P;
	double drop = s->dropout ? 1.0 : 0.0;
	double chunks = b * ceil(sq / Q);
	x->block = SIM_KB_ATTN;
	/* pre: norm, in_proj, convolution */
	mem2(x, SLOT_F0, SLOT_B2, 2.0 * Tn * h * e, 3.0 * Tn * h * e);
	x->w = SIM_W_SSM_IN;
	linear(x, SLOT_F0, SLOT_B2, T, 2.0 * di + 2.0 * G * N + H, h, 1.0);
	double xbc = di + 2.0 * G * N;
	mem2(x, SLOT_F0, SLOT_B2, 2.0 * T * xbc * e, 3.0 * T * xbc * e);
	/* core: the chunked scan */
	bmm(x, SLOT_F1, SLOT_B1, Q, Q, N, chunks * G);
	bmm(x, SLOT_F1, SLOT_B1, Q, P, Q, chunks * H);
	bmm(x, SLOT_F1, SLOT_B1, N, P, Q, chunks * H);
	bmm(x, SLOT_F1, SLOT_B1, Q, P, N, chunks * H);
	double io = T * (xbc + H + di) * e, states = 2.0 * chunks * H * P * N * 4.0;
	mem2(x, SLOT_F1, SLOT_B1, io + states, 2.0 * (io + states));
	/* post: gated norm, out_proj, dropout, residual */
	mem2(x, SLOT_F2, SLOT_B0, 3.0 * T * di * e, 5.0 * T * di * e);
	x->w = SIM_W_SSM_OUT;
	linear(x, SLOT_F2, SLOT_B0, T, h, di, 1.0);
	mem2(x, SLOT_F2, SLOT_B0, Tn * h * (3.0 * e + drop), Tn * h * (2.0 * e + drop));
}

void
sim_kernels_layer(const sim_kspec *s, int64_t layer, double T, double b, double sq, double sk, double density,
		  sim_kemit emit, void *arg)
{
	const model *m = s->m;
	const model_tf *t = model_transformer(m);
	int mm = 0;
	bctx x = {.s = s, .t = t, .emit = emit, .arg = arg, .block = SIM_KB_ATTN, .layer = layer, .mm = &mm};
	double tp = (double)s->tp;
	double Tn = s->sp ? T / tp : T;
	double h = (double)t->hidden, e = s->e;
	double at, gt, dqk, dv;
	attn_dims(s, t, &at, &gt, &dqk, &dv);
	bool mla = t->kv_lora_rank > 0;
	double drop = s->dropout ? 1.0 : 0.0;

	/* a hybrid model's layer holds one block: a Mamba-2 mixer, attention or an MLP */
	model_block blk = model_layer_block(m, layer);
	if (blk == MODEL_BLOCK_MAMBA) {
		mamba(&x, T, b, sq);
		return;
	}
	if (blk == MODEL_BLOCK_MLP)
		goto mlp;

	/* ---- attention ---- */
	/* pre: norm, QKV projections, rotary */
	mem2(&x, SLOT_F0, SLOT_B2, 2.0 * Tn * h * e, 3.0 * Tn * h * e);
	if (mla) {
		double q = (double)t->q_lora_rank, kv = (double)t->kv_lora_rank, rope = (double)t->qk_rope_dim;
		if (q > 0) {
			x.w = SIM_W_Q_DOWN;
			linear(&x, SLOT_F0, SLOT_B2, T, q, h, 1.0);
			mem2(&x, SLOT_F0, SLOT_B2, 2.0 * T * q * e, 3.0 * T * q * e);
			x.w = SIM_W_Q_UP;
			linear(&x, SLOT_F0, SLOT_B2, T, at * dqk, q, 1.0);
		} else {
			x.w = SIM_W_Q_UP;
			linear(&x, SLOT_F0, SLOT_B2, T, at * dqk, h, 1.0);
		}
		x.w = SIM_W_KV_DOWN;
		linear(&x, SLOT_F0, SLOT_B2, T, kv + rope, h, 1.0);
		mem2(&x, SLOT_F0, SLOT_B2, 2.0 * T * kv * e, 3.0 * T * kv * e);
		x.w = SIM_W_KV_UP;
		linear(&x, SLOT_F0, SLOT_B2, T, at * ((double)t->qk_nope_dim + dv), kv, 1.0);
		mem2(&x, SLOT_F0, SLOT_B2, 2.0 * T * (at + 1.0) * rope * e, 2.0 * T * (at + 1.0) * rope * e);
	} else {
		x.w = SIM_W_QKV;
		linear(&x, SLOT_F0, SLOT_B2, T, (at + 2.0 * gt) * dqk, h, 1.0);
		if (t->pos == MODEL_POS_ROPE)
			mem2(&x, SLOT_F0, SLOT_B2, 2.0 * T * (at + gt) * dqk * e, 2.0 * T * (at + gt) * dqk * e);
	}
	/* core: scores and context */
	if (b > 0)
		sim_kernels_attn(s, b, sq, sk, density, false, emit, arg);
	/* post: output projection, dropout, residual */
	x.w = SIM_W_PROJ;
	linear(&x, SLOT_F2, SLOT_B0, T, h, at * dv, 1.0);
	mem2(&x, SLOT_F2, SLOT_B0, Tn * h * (3.0 * e + drop), Tn * h * (2.0 * e + drop));
	if (blk == MODEL_BLOCK_ATTN)
		return;

	/* ---- MLP ---- */
mlp:
	x.block = SIM_KB_MLP;
	mem2(&x, SLOT_F0, SLOT_B2, 2.0 * Tn * h * e, 3.0 * Tn * h * e);
	if (model_layer_is_moe(m, layer)) {
		double E = (double)t->experts, k = (double)t->top_k;
		double etp = s->etp > 0 ? (double)s->etp : tp, fe = (double)t->expert_ffn / etp;
		/* routed tokens an expert rank multiplies: each TP rank routes T / tp tokens (its
		 * sequence shard with SP; without it the TP ranks split the tokens they all hold), its
		 * EP group's ranks exchange them, and the etp ranks that share experts gather theirs:
		 * T / tp x etp x top_k (T top_k with etp = tp, as before parallel folding) */
		double R = T / tp * etp * k;
		/* pre: router (over the tokens the rank holds: with sequence and expert parallelism its
		 * own shard, the all-to-all dispatcher's; else the gathered sequence), top-k, permutation
		 * of the routed tokens */
		double Tq = s->sp && s->ep > 1 ? T / tp : T;
		x.w = SIM_W_ROUTER;
		linear(&x, SLOT_F0, SLOT_B2, Tq, E, h, 1.0);
		mem2(&x, SLOT_F0, SLOT_B2, 2.0 * Tq * E * 4.0 + 2.0 * R * h * e, 2.0 * Tq * E * 4.0 + 2.0 * R * h * e);
		/* core: the grouped GEMMs of the local experts that receive tokens (the group's ep x etp
		 * ranks route ep etp T / tp top_k assignments over E experts) */
		double local = E / (double)s->ep;
		double hit = local * (1.0 - pow(1.0 - 1.0 / E, (double)s->ep * R));
		if (hit < 1.0)
			hit = 1.0;
		double tokens = R * s->moe_imb / hit;
		x.w = SIM_W_EXPERT_FC1;
		linear(&x, SLOT_F1, SLOT_B1, tokens, ffn_mult(t) * fe, h, hit);
		activation(&x, SLOT_F1, SLOT_B1, tokens * fe * hit);
		x.w = SIM_W_EXPERT_FC2;
		linear(&x, SLOT_F1, SLOT_B1, tokens, h, fe, hit);
		/* post: un-permute and combine, shared experts (a dense MLP over the dense layers' TP
		 * ranks), residual */
		mem2(&x, SLOT_F2, SLOT_B0, 2.0 * R * h * e, 2.0 * R * h * e);
		if (t->shared_experts > 0)
			dense_mlp(&x, SLOT_F2, SLOT_B0, T, (double)t->shared_experts * (double)t->expert_ffn / tp,
				  SIM_W_SHARED_FC1, SIM_W_SHARED_FC2);
	} else {
		dense_mlp(&x, SLOT_F1, SLOT_B1, T, (double)t->ffn / tp, SIM_W_FC1, SIM_W_FC2);
	}
	mem2(&x, SLOT_F2, SLOT_B0, Tn * h * (3.0 * e + drop), Tn * h * (2.0 * e + drop));
}

void
sim_kernels_embed(const sim_kspec *s, double T, sim_kemit emit, void *arg)
{
	const model_tf *t = model_transformer(s->m);
	bctx x = {.s = s, .t = t, .emit = emit, .arg = arg, .block = SIM_KB_ATTN, .layer = -1};
	double h = (double)t->hidden;
	/* a frozen embedding accumulates no gradient: its backward is nothing */
	mem2(&x, SLOT_F0, SLOT_B0, 3.0 * T * h * s->e, s->frozen ? 0.0 : 3.0 * T * h * s->e);
}

void
sim_kernels_head(const sim_kspec *s, double T, sim_kemit emit, void *arg)
{
	const model_tf *t = model_transformer(s->m);
	bctx x = {.s = s, .t = t, .emit = emit, .arg = arg, .block = SIM_KB_ATTN, .layer = -1};
	double h = (double)t->hidden, V = (double)t->vocab / (double)s->tp, e = s->e;
	mem2(&x, SLOT_F0, SLOT_B0, 2.0 * T * h * e, 3.0 * T * h * e);
	if (!s->backward) {
		/* serving: the 16-bit head over the sequences' last tokens, fp32 logits and sampling */
		gemm(&x, SLOT_F0, HW_BF16, 0.0, SIM_W_HEAD, SIM_PASS_FWD, T, V, h, 1.0);
		mem(&x, SLOT_F0, T * V * 4.0 * 2.0);
		return;
	}
	if (t->mlm_head) {
		x.w = SIM_W_MLM;
		linear(&x, SLOT_F0, SLOT_B0, T, h, h, 1.0);
		mem2(&x, SLOT_F0, SLOT_B0, 4.0 * T * h * e, 5.0 * T * h * e);
	}
	x.w = SIM_W_HEAD;
	linear(&x, SLOT_F0, SLOT_B0, T, V, h, 1.0);
	/* cross-entropy over fp32 logits: softmax forward, gradient backward */
	mem2(&x, SLOT_F0, SLOT_B0, 3.0 * T * V * 4.0, 2.0 * T * V * 4.0 + T * V * e);
}

int64_t
sim_whole(double x)
{
	double r = floor(x + 0.5);
	return r < 1.0 ? 1 : (int64_t)r;
}

void
sim_attn_proxy(const hw_kernel *k, sim_gemm_fn emit, void *arg)
{
	int64_t batch = sim_whole(k->b * k->heads), sq = sim_whole(k->sq), sk = sim_whole(k->sk * k->density);
	int64_t dqk = sim_whole(k->dqk), dv = sim_whole(k->dv);
	/* fp8 GEMMs write bf16 (as calibration measures them) */
	double out = k->dtype == HW_FP8 ? 2.0 : hw_dtype_bytes(k->dtype);
	double scores = (double)batch * (double)sq * (double)sk * out;
	int64_t chunks = (int64_t)ceil(scores / SIM_ATTN_PROXY_CHUNK);
	if (chunks < 1)
		chunks = 1;
	if (chunks > sq)
		chunks = sq;
	int64_t cq = (sq + chunks - 1) / chunks;
	for (int64_t q0 = 0; q0 < sq; q0 += cq) {
		int64_t c = sq - q0 < cq ? sq - q0 : cq;
		emit(arg, c, sk, dqk, batch); /* S = Q K^T (recomputed in the backward) */
		if (!k->bwd) {
			emit(arg, c, dv, sk, batch); /* O = P V */
		} else {
			emit(arg, sk, dv, c, batch);  /* dV += P^T dO */
			emit(arg, c, sk, dv, batch);  /* dP = dO V^T */
			emit(arg, c, dqk, sk, batch); /* dQ = dS K */
			emit(arg, sk, dqk, c, batch); /* dK += dS^T Q */
		}
	}
}
