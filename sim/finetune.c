/*
 * finetune.c -- what fine-tuning changes in a training step: which projections carry LoRA
 * adapters, how many parameters they add and train, which base weights NF4 stores, and the
 * FLOPs per token the method needs (docs/finetune-goodput.md).
 *
 * LoRA (Hu et al. 2021, arXiv 2106.09685) freezes the base and adds to a projection W of k
 * inputs and n outputs two matrices, A (r x k) and B (n x r): r (k + n) parameters, the only
 * ones with gradients and optimizer states.  QLoRA (Dettmers et al. 2023, arXiv 2305.14314)
 * stores the frozen base's linear layers in NF4 (SIM_NF4_BYTES a weight); the embedding, the
 * LM head, the norms and an MoE router stay in 16 bits, as bitsandbytes (which skips the
 * output layer) and torchtune (whose output projection is a plain linear layer) leave them.
 *
 * The projections of a layer on one rank are those kernels.c multiplies, at the same shapes:
 * q, k, v (k inputs h; outputs a d / t, and g d / t or d when t exceeds the KV heads), o (a d / t
 * to h); gate and up (h to f / t), down (f / t to h); an MoE layer's E / ep local experts each
 * with their gate, up and down at the expert width, its shared experts as one MLP of their
 * summed width; MLA's q projections (down and up) count as q, its kv projections as k and v.
 * Under tensor parallelism an adapter follows its base layer: a column-parallel layer's A sees
 * the whole input (every TP rank holds it) and its B the rank's outputs; a row-parallel layer's
 * A the rank's inputs and its B every output.  The T x r all-reduce a row-parallel adapter
 * needs is left out (r is a few tens; the layer's own all-reduce moves T x h).
 */
#include "config.h"
#include "sim/train_int.h"

#include <stdio.h>
#include <string.h>

static const struct {
	const char *name;
	unsigned bits;
} module_names[] = {
	{"q", SIM_LORA_Q},      {"k", SIM_LORA_K},       {"v", SIM_LORA_V},       {"o", SIM_LORA_O},
	{"gate", SIM_LORA_GATE}, {"up", SIM_LORA_UP},     {"down", SIM_LORA_DOWN}, {"all", SIM_LORA_ALL},
	{"all-linear", SIM_LORA_ALL}, {"attn", SIM_LORA_ATTN}, {"mlp", SIM_LORA_MLP},
};

int
sim_lora_modules_parse(const char *s, unsigned *out, char *err, size_t errlen)
{
	unsigned mask = 0;
	const char *p = s;
	if (s == NULL || *s == '\0')
		return pp_err(err, errlen, PP_EUSAGE, "--lora-modules needs a list such as q,k,v,o,gate,up,down");
	while (*p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		bool found = false;
		for (size_t i = 0; i < sizeof module_names / sizeof module_names[0]; i++)
			if (strlen(module_names[i].name) == n && !strncmp(p, module_names[i].name, n)) {
				mask |= module_names[i].bits;
				found = true;
				break;
			}
		if (!found)
			return pp_err(err, errlen, PP_EUSAGE,
				      "--lora-modules: \"%.*s\" is not a projection: use q, k, v, o, gate, up, down, attn, mlp or all",
				      (int)(n > 40 ? 40 : n), p);
		p += n;
		if (*p == ',')
			p++;
	}
	*out = mask;
	return 0;
}

const char *
sim_lora_modules_name(unsigned mask, char *buf, size_t n)
{
	if (mask == 0)
		mask = SIM_LORA_ALL;
	size_t used = 0;
	if (n > 0)
		buf[0] = '\0';
	for (size_t i = 0; i < 7; i++)
		if (mask & module_names[i].bits) {
			int w = snprintf(buf + used, used < n ? n - used : 0, "%s%s", used ? "," : "", module_names[i].name);
			if (w > 0)
				used += (size_t)w;
		}
	return buf;
}

/* One projection of a layer on one rank: the adapter bits that select it (any of them), its
 * inputs and outputs, how many of it the rank holds, and whether it belongs to a routed expert. */
typedef struct proj {
	unsigned bits;
	double k, n, count;
	bool expert, attn;
} proj;

static int
layer_projs(const model *m, int tp_, int ep_, int64_t layer, proj *out)
{
	const model_tf *t = model_transformer(m);
	double tp = (double)tp_, h = (double)t->hidden;
	double at = (double)t->heads / tp;
	double gt = t->kv_heads >= tp_ ? (double)t->kv_heads / tp : 1.0;
	int n = 0;
#define P(B, K, N, C, X, A) (out[n++] = (proj){(B), (K), (N), (C), (X), (A)})
	if (t->kv_lora_rank > 0) {
		double q = (double)t->q_lora_rank, kv = (double)t->kv_lora_rank, rope = (double)t->qk_rope_dim;
		double dqk = (double)(t->qk_nope_dim + t->qk_rope_dim), dv = (double)t->v_head_dim;
		if (q > 0) {
			P(SIM_LORA_Q, h, q, 1, false, true);
			P(SIM_LORA_Q, q, at * dqk, 1, false, true);
		} else {
			P(SIM_LORA_Q, h, at * dqk, 1, false, true);
		}
		P(SIM_LORA_K | SIM_LORA_V, h, kv + rope, 1, false, true);
		P(SIM_LORA_K | SIM_LORA_V, kv, at * ((double)t->qk_nope_dim + dv), 1, false, true);
		P(SIM_LORA_O, at * dv, h, 1, false, true);
	} else {
		double d = (double)t->head_dim;
		P(SIM_LORA_Q, h, at * d, 1, false, true);
		P(SIM_LORA_K, h, gt * d, 1, false, true);
		P(SIM_LORA_V, h, gt * d, 1, false, true);
		P(SIM_LORA_O, at * d, h, 1, false, true);
	}
	bool gated = t->mlp == MODEL_MLP_SWIGLU;
	double width, count = 1;
	bool expert = false;
	if (model_layer_is_moe(m, layer)) {
		width = (double)t->expert_ffn / tp;
		count = (double)t->experts / (double)ep_;
		expert = true;
		if (t->shared_experts > 0) {
			double sw = (double)t->shared_experts * width;
			if (gated)
				P(SIM_LORA_GATE, h, sw, 1, false, false);
			P(SIM_LORA_UP, h, sw, 1, false, false);
			P(SIM_LORA_DOWN, sw, h, 1, false, false);
		}
	} else {
		width = (double)t->ffn / tp;
	}
	if (gated)
		P(SIM_LORA_GATE, h, width, count, expert, false);
	P(SIM_LORA_UP, h, width, count, expert, false);
	P(SIM_LORA_DOWN, width, h, count, expert, false);
#undef P
	return n;
}

void
sim_ft_layer_get(const model *m, const sim_train_cfg *c, int64_t layer, sim_ft_layer *out)
{
	memset(out, 0, sizeof *out);
	proj p[16];
	int n = layer_projs(m, c->tp, c->ep, layer, p);
	double r = (double)c->lora_rank;
	unsigned mask = c->lora_modules ? c->lora_modules : SIM_LORA_ALL;
	for (int i = 0; i < n; i++) {
		double w = p[i].k * p[i].n * p[i].count;
		bool adapted = r > 0 && (mask & p[i].bits) != 0;
		double a = adapted ? r * (p[i].k + p[i].n) * p[i].count : 0.0;
		if (p[i].expert) {
			out->expert_linear += w;
			out->expert_adapters += a;
			if (adapted)
				out->expert_act_rows += r;
		} else if (p[i].attn) {
			out->attn_linear += w;
			out->attn_adapters += a;
			if (adapted)
				out->act_rows += r;
		} else {
			out->mlp_linear += w;
			out->mlp_adapters += a;
			if (adapted)
				out->act_rows += r;
		}
		if (p[i].k * p[i].n > out->largest)
			out->largest = p[i].k * p[i].n;
	}
}

void
sim_ft_totals_get(const model *m, const sim_train_cfg *c, sim_ft_totals *out)
{
	memset(out, 0, sizeof *out);
	const model_tf *t = model_transformer(m);
	double all = model_params(m);
	if (t == NULL) {
		out->trainable = all;
		out->flops_per_token = 3.0 * model_cnn_flops_per_sample(m);
		return;
	}
	sim_train_cfg one = *c;
	one.tp = one.ep = 1;
	double adapters = 0.0, active = 0.0, linear = 0.0;
	for (int64_t l = 0; l < t->layers; l++) {
		sim_ft_layer f;
		sim_ft_layer_get(m, &one, l, &f);
		adapters += f.attn_adapters + f.mlp_adapters + f.expert_adapters;
		/* a token passes top_k of the E experts' adapters */
		active += f.attn_adapters + f.mlp_adapters +
			  (t->experts > 0 ? f.expert_adapters * (double)t->top_k / (double)t->experts : 0.0);
		linear += f.attn_linear + f.mlp_linear + f.expert_linear;
	}
	int64_t L = c->sample_len > 0 ? c->sample_len : sim_seq(m, c);
	double fwd = model_flops_fwd_per_token(m, L);
	if (c->lora_rank > 0) {
		out->trainable = adapters;
		out->frozen = all;
		out->quantized = c->base_nf4 ? linear : 0.0;
		/* forward, input gradients (3 forwards less the base's weight gradients, 2 FLOPs a
		 * matmul weight a token multiplies: the forward at zero length), and the adapters'
		 * forward and both gradients, 6 FLOPs a parameter a token passes */
		out->flops_per_token = 3.0 * fwd - model_flops_fwd_per_token(m, 0) + 6.0 * active;
	} else {
		out->trainable = all;
		out->flops_per_token = 3.0 * fwd;
	}
}

/* The block's trainable parameters (what its gradients reduce and its optimizer steps) and
 * the bytes of its weights as stored (what ZeRO-3 gathers): all of them in the training dtype,
 * or with LoRA the adapters, and the base in the training dtype or its linear layers in NF4. */
void
sim_ft_block_params(const model *m, const sim_train_cfg *c, int64_t layer, block_cost *attn, block_cost *mlp)
{
	double e = sim_act_bytes(c);
	if (c->lora_rank <= 0) {
		attn->train_params = attn->params;
		mlp->train_params = mlp->params;
		mlp->train_expert_params = mlp->expert_params;
		attn->wbytes = attn->params * e;
		mlp->wbytes = mlp->params * e;
		mlp->wexpert_bytes = mlp->expert_params * e;
		return;
	}
	sim_ft_layer f;
	sim_ft_layer_get(m, c, layer, &f);
	attn->train_params = f.attn_adapters;
	mlp->train_params = f.mlp_adapters;
	mlp->train_expert_params = f.expert_adapters;
	double q = c->base_nf4 ? SIM_NF4_BYTES : e;
	attn->wbytes = (attn->params - f.attn_linear) * e + f.attn_linear * q + f.attn_adapters * e;
	mlp->wbytes = (mlp->params - f.mlp_linear) * e + f.mlp_linear * q + f.mlp_adapters * e;
	mlp->wexpert_bytes = (mlp->expert_params - f.expert_linear) * e + f.expert_linear * q + f.expert_adapters * e;
}

int
sim_ft_check(const model *m, sim_train_cfg *c, char *err, size_t errlen)
{
	const model_tf *t = model_transformer(m);
	bool ft = c->lora_rank != 0 || c->lora_modules != 0 || c->base_nf4 || c->sample_len != 0;
	if (!ft)
		return 0;
	if (t == NULL)
		return pp_err(err, errlen, PP_EUSAGE, "%s is a CNN: LoRA, NF4 bases and packed sequences apply to transformers",
			      model_name(m));
	/* the adapters are counted on attention and MLP projections (layer_projs); a hybrid
	 * model's Mamba mixers and single-block layers are not modelled yet */
	for (int64_t l = 0; l < t->layers; l++)
		if (model_layer_block(m, l) != MODEL_BLOCK_FULL)
			return pp_err(err, errlen, PP_EUSAGE,
				      "%s is a hybrid model (layer %lld is not attention + MLP): LoRA, NF4 bases and packed "
				      "sequences are modelled for attention + MLP layers only",
				      model_name(m), (long long)l);
	if (c->lora_rank < 0 || c->lora_rank > 65536)
		return pp_err(err, errlen, PP_EUSAGE, "--lora-rank must be from 1 to 65536, got %d", c->lora_rank);
	if (c->lora_rank == 0 && (c->lora_modules != 0 || c->base_nf4))
		return pp_err(err, errlen, PP_EUSAGE, "--lora-modules and --base-dtype nf4 need --lora-rank (the adapters' rank)");
	if ((c->lora_modules & ~(unsigned)SIM_LORA_ALL) != 0)
		return pp_err(err, errlen, PP_EUSAGE, "--lora-modules: unknown projection bits 0x%x", c->lora_modules);
	if (c->lora_rank > 0 && c->dtype == HW_FP8)
		return pp_err(err, errlen, PP_EUSAGE,
			      "LoRA with --dtype fp8 is not modelled: the adapters and the base run in bf16 or fp16");
	if (c->base_nf4 && c->dtype != HW_BF16 && c->dtype != HW_FP16)
		return pp_err(err, errlen, PP_EUSAGE, "--base-dtype nf4 computes in bf16 or fp16 (--dtype), got %s",
			      hw_dtype_name(c->dtype));
	if (c->lora_rank > 0) {
		sim_ft_totals tot;
		sim_ft_totals_get(m, c, &tot);
		char names[64];
		if (!(tot.trainable > 0))
			return pp_err(err, errlen, PP_EUSAGE, "--lora-modules %s adapts no projection of %s (it has no gate: use up, down)",
				      sim_lora_modules_name(c->lora_modules, names, sizeof names), model_name(m));
	}
	int64_t seq = sim_seq(m, c);
	if (c->sample_len < 0 || c->sample_len > seq)
		return pp_err(err, errlen, PP_EUSAGE, "--sample-len must be from 1 to the sequence length (%lld), got %lld",
			      (long long)seq, (long long)c->sample_len);
	if (c->sample_len > 0 && c->sample_len < seq && c->attention == SIM_ATTN_UNFUSED)
		return pp_err(err, errlen, PP_EUSAGE,
			      "packed sequences (--sample-len) need fused attention that masks each sample (FlashAttention's "
			      "variable-length kernels); --attention unfused computes the whole sequence");
	return 0;
}
