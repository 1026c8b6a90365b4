/*
 * layer.c -- a transformer layer's training costs on one rank: the kernels the builder
 * (kernels.c) gives for one micro-batch, priced by the cost model and grouped into the
 * segments of the op graph (pre, core and post of the attention and MLP blocks, forward and
 * backward), with the framework's host time per kernel as a floor.  Recording for the replay
 * lists each segment's kernels as they were priced.
 */
#include "config.h"
#include "sim/kernels_int.h"
#include "sim/train_int.h"

#include <math.h>
#include <string.h>

typedef struct ctx {
	const hw_cost *cost;
	double host;     /* seconds: the framework host's time to issue one kernel */
	double gemm_scale, attn_scale; /* the framework's kernels over the GPU's measured rates */
	bool gemm_fitted, attn_fitted; /* ... fitted to published runs: the time rests on the fit */
	bool attn_proxy; /* attention priced as the GEMMs a replay runs in its place */
	seg *segs[SIM_KB_N][SLOT_N];
	int32_t lists[SIM_KB_N][SLOT_N]; /* recording: each segment's kernel list, -1 none */
	sim_rec *rec;
} ctx;

typedef struct proxy_sum {
	const hw_cost *cost;
	hw_dtype t;
	double s;
	hw_prov p;
} proxy_sum;

static void
proxy_add(void *arg, int64_t m, int64_t n, int64_t k, int64_t batch)
{
	proxy_sum *a = arg;
	hw_kernel g = {.kind = HW_K_GEMM, .dtype = a->t, .m = (double)m, .n = (double)n, .k = (double)k,
		       .batch = (double)batch};
	a->s += hw_cost_kernel(a->cost, &g, &a->p);
}

/* Prices a kernel into its segment.  The framework issues kernels from the host one at a time
 * (PyTorch eager): a stream of kernels shorter than the issue time runs at the host's pace.
 * The time is priced before it is added: in seg_add(s, hw_cost_kernel(..., &p), fl, p) the
 * order in which C evaluates the arguments is unspecified, and p could be read before the call
 * has set it. */
static void
price(void *arg, int block, int slot, const sim_kernel *k)
{
	ctx *x = arg;
	seg *s = x->segs[block][slot];
	if (s == NULL)
		return;
	hw_prov p = HW_PROV_DATASHEET;
	double t;
	if (x->attn_proxy && k->hk.kind == HW_K_ATTN) {
		proxy_sum a = {.cost = x->cost, .t = k->hk.dtype, .p = HW_PROV_DATASHEET};
		sim_attn_proxy(&k->hk, proxy_add, &a);
		t = a.s, p = a.p;
	} else {
		t = hw_cost_kernel(x->cost, &k->hk, &p);
	}
	if (k->hk.kind == HW_K_GEMM) {
		t /= x->gemm_scale;
		if (x->gemm_fitted && p == HW_PROV_DATASHEET)
			p = HW_PROV_FITTED;
	} else if (k->hk.kind == HW_K_ATTN) {
		t /= x->attn_scale;
		if (x->attn_fitted && p == HW_PROV_DATASHEET)
			p = HW_PROV_FITTED;
	}
	if (t > 0.0 && t < x->host)
		t = x->host;
	seg_add(s, t, hw_kernel_flops(&k->hk), p);
	/* a layer's lists serve every layer of its kind: oplist.c names the layer when it reads
	 * an op's kernels out (the builder's kernels carry layer -1) */
	if (x->rec && x->lists[block][slot] >= 0)
		sim_rec_kernel(x->rec, x->lists[block][slot], k);
}

/* The builder's view of a training configuration. */
static void
train_spec(const model *m, const sim_train_cfg *c, sim_kspec *s)
{
	const model_tf *t = model_transformer(m);
	memset(s, 0, sizeof *s);
	s->m = m;
	s->tp = c->tp, s->cp = c->cp, s->ep = c->ep, s->etp = sim_train_etp(c);
	s->sp = c->sequence_parallel && c->tp > 1;
	s->dt = c->dtype;
	s->fp8_recipe = c->fp8_recipe;
	s->adt = c->dtype == HW_FP8 ? HW_BF16 : c->dtype; /* FP8 training runs attention in 16 bits */
	s->e = sim_act_bytes(c);
	s->backward = true;
	s->opsac = c->recompute == SIM_RECOMPUTE_OP;
	s->zb = c->schedule == SIM_ZB_H1;
	s->wbeside = sim_w_beside(c);
	s->flash = c->attention != SIM_ATTN_UNFUSED;
	s->attn = c->attention == SIM_ATTN_FLASH3 ? HW_ATTN_FLASH3 : HW_ATTN_FLASH2;
	/* Attention and hidden dropout for models with linear biases (GPT-2/3, BERT, Megatron GPT),
	 * which train with dropout; bias-free models (Llama, Mistral, Mixtral, DeepSeek) without. */
	s->dropout = t->bias;
	s->moe_imb = c->moe_imbalance;
	if (c->moe_capacity > 0 && s->moe_imb > c->moe_capacity)
		s->moe_imb = c->moe_capacity;
	s->frozen = sim_ft_frozen(c);
	s->lora_rank = c->lora_rank;
	s->lora_mask = c->lora_modules;
	s->qbytes = c->base_nf4 ? SIM_NF4_BYTES : 0.0;
}

static void
ctx_init(ctx *x, const hw_cost *cost, const sim_train_cfg *c, sim_rec *rec)
{
	memset(x, 0, sizeof *x);
	x->cost = cost;
	x->host = c->fw ? hw_profile_get(c->fw, HW_P_FW_HOST_OP_US) * 1e-6 : 0.0;
	x->gemm_scale = c->fw ? hw_profile_get(c->fw, HW_P_FW_GEMM_SCALE) : 1.0;
	x->attn_scale = c->fw ? hw_profile_get(c->fw, HW_P_FW_ATTN_SCALE) : 1.0;
	x->gemm_fitted = c->fw && hw_profile_prov(c->fw, HW_P_FW_GEMM_SCALE) == HW_PROV_FITTED;
	x->attn_fitted = c->fw && hw_profile_prov(c->fw, HW_P_FW_ATTN_SCALE) == HW_PROV_FITTED;
	x->attn_proxy = c->attn_proxy;
	x->rec = rec;
	for (int b = 0; b < SIM_KB_N; b++)
		for (int i = 0; i < SLOT_N; i++)
			x->lists[b][i] = -1;
}

/* DeepEP sends a token once to each rank that holds one of its experts (Buffer.get_dispatch_layout's
 * is_token_in_rank, one row per token and rank), and across nodes once per other node that holds
 * one (DeepSeek-V3 technical report, section 3.2.2: over InfiniBand to the same in-node index,
 * then NVLink).  With uniform routing, top_k of E experts without replacement over u units
 * (the EP group's ranks inside one node, else its nodes), m = E / u experts to a unit, a given
 * other unit holds none of them with probability C(E - m, k) / C(E, k): the expected units a
 * token is sent to beside its own are (u - 1)(1 - that).  An all-to-all instead sends the k
 * copies, of which (n - per_node) / n leave the node, or inside one node (n - 1) / n the rank
 * (what hardware/cost.c prices). */
double
sim_ep_dispatch_scale(const sim_train_cfg *c, int64_t experts, int64_t top_k, int per_node)
{
	int n = c->ep;
	if (!c->ep_deepep || n <= 1 || per_node <= 0 || experts < top_k || top_k < 1)
		return 1.0;
	double units = per_node >= n ? (double)n : ceil((double)n / (double)per_node);
	double m = (double)experts / units, none = 1.0;
	for (int64_t i = 0; i < top_k && none > 0.0; i++)
		none *= fmax(0.0, ((double)experts - m - (double)i) / ((double)experts - (double)i));
	double crossed = (units - 1.0) * (1.0 - none);
	double copies = (double)top_k * (per_node >= n ? (double)(n - 1) : (double)(n - per_node)) / (double)n;
	return crossed / copies;
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
	/* a hybrid model's layer holds one block: its mixer's or its MLP's parameters alone */
	model_block blk = model_layer_block(m, layer);
	double attn = blk == MODEL_BLOCK_MAMBA ? model_mamba_params(m) / tp
		      : blk == MODEL_BLOCK_MLP ? 0.0 : model_attn_params(m) / tp;
	double mlp = blk == MODEL_BLOCK_FULL || blk == MODEL_BLOCK_MLP ? model_mlp_params(m, layer) : 0.0;
	double ex = 0.0;
	if (model_layer_is_moe(m, layer)) {
		/* a rank holds the 1 / etp slices of its E / ep experts */
		double all = (double)t->experts * mult * (double)t->hidden * (double)t->expert_ffn;
		ex = all / (double)c->ep / (double)sim_train_etp(c);
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

/* A block's segments, and with a recorder its SLOT_N new kernel lists (klist + SLOT_*). */
static void
map_block(ctx *x, int blk, block_cost *bc)
{
	seg *segs[SLOT_N] = {&bc->fwd[0], &bc->fwd[1], &bc->fwd[2], &bc->bwd[0], &bc->bwd[1], &bc->bwd[2], &bc->w,
			     &bc->recompute};
	for (int i = 0; i < SLOT_N; i++)
		x->segs[blk][i] = segs[i];
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
	for (int i = 0; i < SLOT_N; i++)
		x->lists[blk][i] = bc->klist + i;
}

void
sim_layer_cost_rec(const model *m, const hw_cost *cost, const sim_train_cfg *c, int64_t layer, layer_cost *out,
		   sim_rec *rec)
{
	const model_tf *t = model_transformer(m);
	const hw_system *sys = hw_cost_system(cost);
	sim_kspec ks;
	train_spec(m, c, &ks);
	ctx x;
	ctx_init(&x, cost, c, rec);
	block_cost *A = &out->attn, *B = &out->mlp;
	block_init(A);
	block_init(B);
	map_block(&x, SIM_KB_ATTN, A);
	map_block(&x, SIM_KB_MLP, B);
	int64_t seq = sim_seq(m, c);
	double b = (double)c->micro_batch, s = (double)seq, sl = s / (double)c->cp;
	/* causal attention computes half the scores (context parallelism balances the halves
	 * over the ranks); packed samples of L tokens attend within their sample only, L / s of
	 * the scores (the s / L samples of a sequence, L^2 (/ 2) each) */
	double density = t->causal ? 0.5 : 1.0, span = s;
	if (c->sample_len > 0 && c->sample_len < seq) {
		density *= (double)c->sample_len / s;
		span = (double)c->sample_len;
	}
	/* a sliding window: the kernel skips the blocks outside it (FlashAttention's window_size),
	 * its share of the causal pairs of each span */
	int64_t w = model_layer_window(m, layer);
	if (w > 0 && t->causal && (double)w < span)
		density *= model_causal_pairs(0.0, span, (double)w) / model_causal_pairs(0.0, span, 0.0);
	sim_kernels_layer(&ks, layer, b * sl, b, sl, s, density, price, &x);
	if (!ks.flash && c->recompute == SIM_RECOMPUTE_SELECTIVE) {
		/* Korthikanti 2022: recompute the attention core (scores, softmax, dropout, context) */
		A->recompute = A->fwd[1];
		if (rec && A->klist >= 0)
			sim_rec_append(rec, A->klist + SLOT_RC, A->klist + SLOT_F1);
	}
	placement pl;
	sim_place(sys, c, &pl);
	double e = ks.e;
	bool mla = t->kv_lora_rank > 0;
	double gt = t->kv_heads >= c->tp ? (double)t->kv_heads / (double)c->tp : 1.0;
	double dqk = mla ? (double)(t->qk_nope_dim + t->qk_rope_dim) : (double)t->head_dim;
	double dv = mla ? (double)t->v_head_dim : (double)t->head_dim;
	/* a hybrid model's layer without an attention mixer or without an MLP: no TP collectives
	 * around the block it lacks (its segments stay empty) */
	model_block blk = model_layer_block(m, layer);
	A->no_tp = blk == MODEL_BLOCK_MLP;
	B->no_tp = blk == MODEL_BLOCK_MAMBA || blk == MODEL_BLOCK_ATTN;
	if (c->cp > 1 && !A->no_tp) {
		/* Ring attention: each step passes a K/V chunk (and in backward also dK/dV) around the
		 * cp ranks, beside the attention kernels. */
		A->split = true;
		A->side_bytes = (double)(c->cp - 1) * 2.0 * b * sl * gt * ((dqk + dv) / 2.0) * e;
		A->side_op = HW_SEND_RECV;
		A->side_ranks = 2;
		A->side_per_node = pl.cp_per_node >= 2 ? 2 : 1;
	}
	if (model_layer_is_moe(m, layer) && c->ep > 1) {
		/* Megatron-Core's all-to-all dispatcher: each TP rank sends its own T / tp tokens'
		 * top_k copies to their experts' ranks and gets the outputs back (the bytes each
		 * member sends); the etp ranks sharing experts all-gather what they received, and
		 * reduce-scatter the partial outputs before the combine.  (Without expert parallelism
		 * the block is the all-gather dispatcher's: the TP collectives around it gather the
		 * sequence, every rank runs its expert slices over all of it.) */
		int etp = sim_train_etp(c);
		double routed = b * sl / (double)c->tp * (double)t->top_k * (double)t->hidden * e;
		B->split = true;
		B->side_bytes = routed * sim_ep_dispatch_scale(c, t->experts, t->top_k, pl.ep_per_node);
		B->side_op = HW_ALL_TO_ALL;
		B->side_ranks = c->ep;
		B->side_per_node = pl.ep_per_node;
		if (etp > 1) {
			B->etp_bytes = routed * (double)etp;
			B->etp_ranks = etp;
			B->etp_per_node = pl.etp_per_node;
		}
		/* with sequence parallelism the block starts and ends on the rank's own sequence shard:
		 * no TP gather before it or reduce-scatter after, but for a shared expert's */
		B->no_tp = c->sequence_parallel && c->tp > 1 && t->shared_experts == 0;
	}
	double expert = 0.0;
	double total = sim_layer_params(m, c, layer, &expert);
	A->params = blk == MODEL_BLOCK_MAMBA ? model_mamba_params(m) / (double)c->tp
		    : blk == MODEL_BLOCK_MLP ? 0.0 : model_attn_params(m) / (double)c->tp;
	B->params = total - A->params - expert;
	B->expert_params = expert;
	sim_ft_block_params(m, c, layer, A, B);
}

/* The embedding's or head's two segments, and with a recorder their two new kernel lists. */
static void
map_pair(ctx *x, seg *fwd, seg *bwd, int32_t *lists)
{
	memset(fwd, 0, sizeof *fwd);
	memset(bwd, 0, sizeof *bwd);
	x->segs[SIM_KB_ATTN][SLOT_F0] = fwd;
	x->segs[SIM_KB_ATTN][SLOT_B0] = bwd;
	if (x->rec == NULL)
		return;
	lists[0] = sim_rec_list(x->rec);
	lists[1] = sim_rec_list(x->rec);
	x->lists[SIM_KB_ATTN][SLOT_F0] = lists[0];
	x->lists[SIM_KB_ATTN][SLOT_B0] = lists[1];
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
	sim_kspec ks;
	train_spec(m, c, &ks);
	ctx x;
	ctx_init(&x, cost, c, rec);
	map_pair(&x, fwd, bwd, lists);
	sim_kernels_embed(&ks, (double)c->micro_batch * (double)sim_seq(m, c) / (double)c->cp, price, &x);
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
	sim_kspec ks;
	train_spec(m, c, &ks);
	ctx x;
	ctx_init(&x, cost, c, rec);
	map_pair(&x, fwd, bwd, lists);
	sim_kernels_head(&ks, (double)c->micro_batch * (double)sim_seq(m, c) / (double)c->cp, price, &x);
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

bool
sim_w_beside(const sim_train_cfg *c)
{
	return c->schedule != SIM_ZB_H1 && c->tp > 1 && c->tp_wgrad_overlap &&
	       !(c->tp_comm_overlap && c->sequence_parallel);
}

double
sim_block_bwd_tp(const sim_train_cfg *c, const block_cost *bc, double tp)
{
	if (bc->no_tp)
		return 0.0;
	return sim_w_beside(c) ? fmax(0.0, tp - bc->w.t) : tp;
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
	double ntp = (lc.attn.no_tp ? 0.0 : 1.0) + (lc.mlp.no_tp ? 0.0 : 1.0);
	double fwd = block_time(&lc.attn, false) + block_time(&lc.mlp, false) + ntp * tp;
	double bwd = block_time(&lc.attn, true) + block_time(&lc.mlp, true) + sim_block_bwd_tp(c, &lc.attn, tp) +
		     sim_block_bwd_tp(c, &lc.mlp, tp);
	if (c->recompute == SIM_RECOMPUTE_FULL)
		bwd += fwd;
	return fwd + bwd;
}
