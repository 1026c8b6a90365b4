/*
 * derive.c -- quantities derived from a model description: parameter counts (total, active,
 * per block), FLOPs per token and per iteration under the published conventions, weight and
 * KV-cache bytes, and the JSON description that 'paraplan model show' prints.
 *
 * Conventions (see ../shared/validation/README.md):
 *   - a GEMM of M x K by K x N costs 2MNK FLOPs;
 *   - attention scores (Q K^T) and context (P V) are counted over the full s x s matrix even
 *     for causal models, as Narayanan 2021 Eq. 3, Korthikanti 2022 Eq. 7 and PaLM's 12LHQT do
 *     (a sliding-window layer's over its band, min(s, window) keys a query);
 *   - training FLOPs are 3x forward (one forward, two backward GEMMs per forward GEMM);
 *   - element-wise work (norms, activations, softmax) is not counted in FLOPs.
 */
#include "config.h"
#include "models/model_int.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static double
norm_params(const model_tf *t)
{
	return t->norm == MODEL_NORM_RMSNORM ? (double)t->hidden : 2.0 * (double)t->hidden;
}

/* Weights of the attention projections (no biases, no norm): what a token multiplies by. */
static double
attn_matmul_params(const model_tf *t)
{
	double h = (double)t->hidden;
	double nh = (double)t->heads;
	if (t->kv_lora_rank > 0) {
		double qk = (double)(t->qk_nope_dim + t->qk_rope_dim);
		double q = t->q_lora_rank > 0 ? h * (double)t->q_lora_rank + (double)t->q_lora_rank * nh * qk : h * nh * qk;
		double kv_a = h * (double)(t->kv_lora_rank + t->qk_rope_dim);
		double kv_b = (double)t->kv_lora_rank * nh * (double)(t->qk_nope_dim + t->v_head_dim);
		double o = nh * (double)t->v_head_dim * h;
		return q + kv_a + kv_b + o;
	}
	double d = (double)t->head_dim;
	double kv = (double)t->kv_heads;
	return h * nh * d + 2.0 * h * kv * d + nh * d * h;
}

double
model_attn_params(const model *m)
{
	const model_tf *t = &m->tf;
	double p = attn_matmul_params(t) + norm_params(t);
	if (t->kv_lora_rank > 0) {
		/* the two latent norms */
		p += (double)t->kv_lora_rank + (t->q_lora_rank > 0 ? (double)t->q_lora_rank : 0.0);
	} else if (t->bias) {
		p += (double)(t->heads * t->head_dim + 2 * t->kv_heads * t->head_dim + t->hidden);
	} else if (t->qkv_bias) {
		p += (double)(t->heads * t->head_dim + 2 * t->kv_heads * t->head_dim);
	}
	return p;
}

/* One MLP of intermediate width f. */
static double
mlp_weights(const model_tf *t, int64_t f)
{
	double h = (double)t->hidden;
	return (t->mlp == MODEL_MLP_SWIGLU ? 3.0 : 2.0) * h * (double)f;
}

bool
model_layer_is_moe(const model *m, int64_t layer)
{
	const model_tf *t = &m->tf;
	if (m->kind != MODEL_TRANSFORMER || t->experts == 0)
		return false;
	if (m->pattern != NULL)
		return layer >= 0 && layer < t->layers && m->pattern[layer] == 'E';
	if (layer < t->dense_layers)
		return false;
	return (layer - t->dense_layers) % t->moe_every == 0;
}

model_block
model_layer_block(const model *m, int64_t layer)
{
	if (m->pattern == NULL || layer < 0 || layer >= m->tf.layers)
		return MODEL_BLOCK_FULL;
	switch (m->pattern[layer]) {
	case 'M': return MODEL_BLOCK_MAMBA;
	case '*': return MODEL_BLOCK_ATTN;
	default: return MODEL_BLOCK_MLP;
	}
}

bool
model_layers_alike(const model *m, int64_t a, int64_t b)
{
	return model_layer_is_moe(m, a) == model_layer_is_moe(m, b) && model_layer_block(m, a) == model_layer_block(m, b) &&
	       model_layer_window(m, a) == model_layer_window(m, b);
}

int64_t
model_layer_window(const model *m, int64_t layer)
{
	const model_tf *t = &m->tf;
	if (m->kind != MODEL_TRANSFORMER || t->window <= 0)
		return 0;
	return t->window_global > 0 && (layer + 1) % t->window_global == 0 ? 0 : t->window;
}

/* The pairs of queries 0..n-1: n (n + 1) / 2 up to the window, then w more a query. */
static double
pairs_upto(double n, double w)
{
	if (n <= 0)
		return 0.0;
	if (w <= 0 || n <= w)
		return n * (n + 1.0) / 2.0;
	return w * (w + 1.0) / 2.0 + (n - w) * w;
}

double
model_causal_pairs(double from, double to, double w)
{
	return pairs_upto(to, w) - pairs_upto(from, w);
}

const char *
model_hybrid_pattern(const model *m)
{
	return m->pattern;
}

/* Does the layer hold an attention mixer, an MLP (or MoE)? */
static bool
has_attn(const model *m, int64_t layer)
{
	model_block k = model_layer_block(m, layer);
	return k == MODEL_BLOCK_FULL || k == MODEL_BLOCK_ATTN;
}

static bool
has_mlp(const model *m, int64_t layer)
{
	model_block k = model_layer_block(m, layer);
	return k == MODEL_BLOCK_FULL || k == MODEL_BLOCK_MLP;
}

/* Weights of a Mamba-2 mixer's projections (Megatron-Core's MambaMixer): in_proj from h to z
 * and x (d_inner each), B and C (groups x state each) and dt (one a head); out_proj from
 * d_inner back to h. */
static double
mamba_matmul_params(const model_tf *t)
{
	double h = (double)t->hidden, di = (double)(t->ssm_heads * t->ssm_head_dim);
	double gn = (double)(t->ssm_groups * t->ssm_state);
	return h * (2.0 * di + 2.0 * gn + (double)t->ssm_heads) + di * h;
}

double
model_mamba_params(const model *m)
{
	const model_tf *t = &m->tf;
	if (t->ssm_heads == 0)
		return 0.0;
	double di = (double)(t->ssm_heads * t->ssm_head_dim), gn = (double)(t->ssm_groups * t->ssm_state);
	/* + the depthwise convolution over x, B and C (weights and bias), A, D and the dt bias per
	 * head, the gated norm over d_inner, the block's input norm */
	return mamba_matmul_params(t) + (di + 2.0 * gn) * (double)(t->ssm_conv + 1) + 3.0 * (double)t->ssm_heads + di +
	       norm_params(t);
}

/* The chunked SSD scan's FLOPs per token (Dao and Gu 2024, section 6): with chunks of Q tokens,
 * each group scores C against B inside a chunk (2 Q N), each head applies them to x (2 Q P),
 * folds its chunk into a state (2 N P) and reads the states out (2 N P). */
static double
ssm_scan_flops_per_token(const model_tf *t)
{
	double Q = (double)t->ssm_chunk, N = (double)t->ssm_state, P = (double)t->ssm_head_dim;
	return 2.0 * Q * N * (double)t->ssm_groups + (double)t->ssm_heads * (2.0 * Q * P + 4.0 * N * P);
}

/* Matmul weights a token multiplies by in one layer's MLP block (active: routed top_k). */
static double
mlp_matmul_params(const model *m, int64_t layer, bool active)
{
	const model_tf *t = &m->tf;
	if (!model_layer_is_moe(m, layer))
		return mlp_weights(t, t->ffn);
	double routed = (double)(active ? t->top_k : t->experts);
	return (routed + (double)t->shared_experts) * mlp_weights(t, t->expert_ffn) +
	       (double)t->hidden * (double)t->experts; /* router */
}

double
model_mlp_params(const model *m, int64_t layer)
{
	const model_tf *t = &m->tf;
	double p = mlp_matmul_params(m, layer, false) + norm_params(t);
	if (t->bias && !model_layer_is_moe(m, layer))
		p += (double)(t->ffn + t->hidden);
	return p;
}

double
model_layer_params(const model *m, int64_t layer)
{
	if (model_layer_block(m, layer) == MODEL_BLOCK_MAMBA)
		return model_mamba_params(m);
	return (has_attn(m, layer) ? model_attn_params(m) : 0.0) + (has_mlp(m, layer) ? model_mlp_params(m, layer) : 0.0);
}

double
model_embedding_params(const model *m)
{
	const model_tf *t = &m->tf;
	if (m->kind != MODEL_TRANSFORMER)
		return 0.0;
	double h = (double)t->hidden;
	double p = (double)t->vocab * h;
	if (t->pos == MODEL_POS_LEARNED)
		p += (double)t->max_pos * h;
	p += (double)t->type_vocab * h;
	if (t->mlm_head)
		p += norm_params(t); /* BERT normalizes the embeddings */
	return p;
}

double
model_head_params(const model *m)
{
	const model_tf *t = &m->tf;
	if (m->kind != MODEL_TRANSFORMER)
		return 0.0;
	double h = (double)t->hidden;
	double p = 0.0;
	if (t->mlm_head) {
		/* BERT's pre-training heads (BertForPreTraining): pooler (h x h + h), MLM transform
		 * (h x h + h, norm), MLM output bias (the output weight is the tied embedding) and
		 * the next-sentence classifier (2h + 2).  BERT has no final norm of its own. */
		p += 2.0 * (h * h + h) + norm_params(t) + (double)t->vocab + (2.0 * h + 2.0);
	} else {
		p += norm_params(t); /* final norm */
	}
	if (!t->tied_embeddings)
		p += (double)t->vocab * h;
	return p;
}

double
model_params(const model *m)
{
	if (m->kind == MODEL_CNN) {
		double p = 0.0;
		for (size_t i = 0; i < m->nlayers; i++)
			p += (double)m->layers[i].params;
		return p;
	}
	double p = model_embedding_params(m) + model_head_params(m);
	for (int64_t l = 0; l < m->tf.layers; l++)
		p += model_layer_params(m, l);
	return p;
}

double
model_params_active(const model *m)
{
	if (m->kind == MODEL_CNN || m->tf.experts == 0)
		return model_params(m);
	const model_tf *t = &m->tf;
	double inactive = 0.0;
	for (int64_t l = 0; l < t->layers; l++)
		if (model_layer_is_moe(m, l))
			inactive += (double)(t->experts - t->top_k) * mlp_weights(t, t->expert_ffn);
	return model_params(m) - inactive;
}

double
model_params_nonembedding(const model *m)
{
	return model_params(m) - model_embedding_params(m);
}

/* Matmul weights per token over the whole model, LM head included (it is a GEMM whether or not
 * it shares the embedding's storage). */
static double
matmul_params_per_token(const model *m)
{
	const model_tf *t = &m->tf;
	double p = (double)t->vocab * (double)t->hidden;
	/* BERT's MLM transform runs on every token; the pooler and the next-sentence classifier
	 * run once per sequence, so they are left out of the per-token count. */
	if (t->mlm_head)
		p += (double)t->hidden * (double)t->hidden;
	for (int64_t l = 0; l < t->layers; l++)
		if (model_layer_block(m, l) == MODEL_BLOCK_MAMBA)
			p += mamba_matmul_params(t);
		else
			p += (has_attn(m, l) ? attn_matmul_params(t) : 0.0) + (has_mlp(m, l) ? mlp_matmul_params(m, l, true) : 0.0);
	return p;
}

/* Layers with an attention mixer, and with a Mamba-2 mixer. */
static double
attn_layers(const model *m)
{
	double n = 0.0;
	for (int64_t l = 0; l < m->tf.layers; l++)
		n += has_attn(m, l);
	return n;
}

static double
mamba_layers(const model *m)
{
	double n = 0.0;
	for (int64_t l = 0; l < m->tf.layers; l++)
		n += model_layer_block(m, l) == MODEL_BLOCK_MAMBA;
	return n;
}

/* Attention score + context FLOPs per token per layer, each query scoring s keys. */
static double
attn_core_flops_per_token(const model_tf *t, double s)
{
	double nh = (double)t->heads;
	if (t->kv_lora_rank > 0)
		return 2.0 * s * nh * (double)(t->qk_nope_dim + t->qk_rope_dim) + 2.0 * s * nh * (double)t->v_head_dim;
	return 4.0 * s * nh * (double)t->head_dim;
}

/* Attention core FLOPs per token over all layers at sequence length seq: over the full matrix
 * (each query scores seq keys; a sliding-window layer's band, min(seq, window)), or causally
 * (half the full matrix; a sliding-window layer's exact pairs over the sequence). */
static double
attn_core_flops(const model *m, int64_t seq, bool causal)
{
	double s = (double)seq, full = 0.0, win = 0.0;
	for (int64_t l = 0; l < m->tf.layers; l++) {
		if (!has_attn(m, l))
			continue;
		int64_t w = model_layer_window(m, l);
		if (w <= 0)
			full += 1.0;
		else if (seq > 0)
			win += causal ? model_causal_pairs(0.0, s, (double)w) / s : fmin(s, (double)w);
	}
	return attn_core_flops_per_token(&m->tf, (causal ? 0.5 : 1.0) * s) * full + attn_core_flops_per_token(&m->tf, 1.0) * win;
}

static double
flops_fwd(const model *m, int64_t seq, bool causal)
{
	if (m->kind == MODEL_CNN)
		return model_cnn_flops_per_sample(m);
	return 2.0 * matmul_params_per_token(m) + attn_core_flops(m, seq, causal) +
	       mamba_layers(m) * (m->tf.ssm_heads > 0 ? ssm_scan_flops_per_token(&m->tf) : 0.0);
}

double
model_flops_fwd_per_token(const model *m, int64_t seq)
{
	return flops_fwd(m, seq, false);
}

double
model_flops_train_causal_per_token(const model *m, int64_t seq)
{
	return 3.0 * flops_fwd(m, seq, true);
}

double
model_flops_train_per_token(const model *m, int64_t seq)
{
	return 3.0 * model_flops_fwd_per_token(m, seq);
}

/* Narayanan et al. 2021 (arXiv 2104.04473) Eq. 3: F = 96 B s l h^2 (1 + s/6h + V/16lh). */
double
model_flops_narayanan_eq3(const model *m, double batch, int64_t seq)
{
	const model_tf *t = &m->tf;
	double s = (double)seq, l = (double)t->layers, h = (double)t->hidden, v = (double)t->vocab;
	return 96.0 * batch * s * l * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * l * h));
}

/* Korthikanti et al. 2022 (arXiv 2205.05198) Eq. 7: 72 B L s h^2 (1 + s/6h + v/12hL). */
double
model_flops_korthikanti_eq7(const model *m, double batch, int64_t seq)
{
	const model_tf *t = &m->tf;
	double s = (double)seq, l = (double)t->layers, h = (double)t->hidden, v = (double)t->vocab;
	return 72.0 * batch * l * s * h * h * (1.0 + s / (6.0 * h) + v / (12.0 * h * l));
}

/* Korthikanti et al. 2022 Eq. 8 (hardware FLOPs, selective recomputation): s/3h instead of s/6h. */
double
model_flops_korthikanti_eq8(const model *m, double batch, int64_t seq)
{
	const model_tf *t = &m->tf;
	double s = (double)seq, l = (double)t->layers, h = (double)t->hidden, v = (double)t->vocab;
	return 72.0 * batch * l * s * h * h * (1.0 + s / (3.0 * h) + v / (12.0 * h * l));
}

/* PaLM (Chowdhery et al. 2022, Appendix B): 6N + 12 L H Q T, N the weights a token multiplies
 * by (as llm-foundry counts them: the input embedding is a lookup, the LM head a GEMM). */
double
model_flops_palm_per_token(const model *m, int64_t seq)
{
	const model_tf *t = &m->tf;
	double keys = 0.0; /* per token, each attention layer's: seq, a sliding window's min(seq, window) */
	for (int64_t l = 0; l < t->layers; l++) {
		int64_t w = model_layer_window(m, l);
		keys += has_attn(m, l) ? (w > 0 && w < seq ? (double)w : (double)seq) : 0.0;
	}
	return 6.0 * matmul_params_per_token(m) + 12.0 * (double)t->heads * (double)t->head_dim * keys;
}

double
model_weight_bytes(const model *m, double bytes_per_param)
{
	return model_params(m) * bytes_per_param;
}

double
model_kv_bytes_per_token(const model *m, double bytes_per_elem)
{
	if (m->kind != MODEL_TRANSFORMER)
		return 0.0;
	const model_tf *t = &m->tf;
	double per_layer = t->kv_lora_rank > 0 ? (double)(t->kv_lora_rank + t->qk_rope_dim)
					       : 2.0 * (double)t->kv_heads * (double)t->head_dim;
	return per_layer * attn_layers(m) * bytes_per_elem;
}

double
model_cnn_flops_per_sample(const model *m)
{
	double f = 0.0;
	for (size_t i = 0; i < m->nlayers; i++)
		f += m->layers[i].fwd_flops;
	return f;
}

/* ------------------------------------------------------------------------------------------ */

static void
add_int(cJSON *o, const char *k, int64_t v)
{
	cJSON_AddNumberToObject(o, k, (double)v);
}

/* "warnings": what the loader read but could not model, one string each (an empty list when
 * nothing). */
static void
add_warnings(cJSON *o, const char *w)
{
	cJSON *a = cJSON_AddArrayToObject(o, "warnings");
	while (a != NULL && *w != '\0') {
		const char *nl = strchr(w, '\n');
		size_t n = nl != NULL ? (size_t)(nl - w) : strlen(w);
		char line[sizeof ((model *)0)->warnings];
		snprintf(line, sizeof line, "%.*s", (int)n, w);
		cJSON_AddItemToArray(a, cJSON_CreateString(line));
		w += n + (nl != NULL);
	}
}

cJSON *
model_to_json(const model *m)
{
	cJSON *o = cJSON_CreateObject();
	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "name", m->name);
	cJSON_AddStringToObject(o, "family", m->family);
	cJSON_AddStringToObject(o, "kind", m->kind == MODEL_CNN ? "cnn" : "transformer");
	cJSON_AddStringToObject(o, "source", m->source);
	cJSON_AddNumberToObject(o, "params", model_params(m));
	if (m->kind == MODEL_CNN) {
		cJSON *in = cJSON_AddObjectToObject(o, "input");
		add_int(in, "channels", m->in_c);
		add_int(in, "height", m->in_h);
		add_int(in, "width", m->in_w);
		cJSON_AddNumberToObject(o, "fwd_flops_per_sample", model_cnn_flops_per_sample(m));
		cJSON_AddNumberToObject(o, "train_flops_per_sample", 3.0 * model_cnn_flops_per_sample(m));
		cJSON *arr = cJSON_AddArrayToObject(o, "layers");
		for (size_t i = 0; i < m->nlayers; i++) {
			const model_layer *l = &m->layers[i];
			cJSON *x = cJSON_CreateObject();
			cJSON_AddStringToObject(x, "name", l->name);
			cJSON_AddStringToObject(x, "type", model_layer_kind_name(l->kind));
			char shape[64];
			snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)l->out_c, (long long)l->out_h,
				 (long long)l->out_w);
			cJSON_AddStringToObject(x, "output", shape);
			add_int(x, "params", l->params);
			cJSON_AddNumberToObject(x, "fwd_flops", l->fwd_flops);
			cJSON_AddItemToArray(arr, x);
		}
		add_warnings(o, m->warnings);
		return o;
	}
	const model_tf *t = &m->tf;
	cJSON_AddNumberToObject(o, "params_active", model_params_active(m));
	cJSON_AddNumberToObject(o, "params_embedding", model_embedding_params(m));
	add_int(o, "layers", t->layers);
	add_int(o, "hidden", t->hidden);
	add_int(o, "heads", t->heads);
	add_int(o, "kv_heads", t->kv_heads);
	add_int(o, "head_dim", t->head_dim);
	if (t->ffn)
		add_int(o, "ffn", t->ffn);
	add_int(o, "vocab", t->vocab);
	add_int(o, "seq", t->seq);
	cJSON_AddStringToObject(o, "mlp", model_mlp_name(t->mlp));
	cJSON_AddStringToObject(o, "norm", t->norm == MODEL_NORM_RMSNORM ? "rmsnorm" : "layernorm");
	static const char *const pos[] = {"learned", "rope", "alibi", "none"};
	cJSON_AddStringToObject(o, "position", pos[t->pos]);
	cJSON_AddStringToObject(o, "weights", model_weights_name(t->weights));
	cJSON_AddBoolToObject(o, "causal", t->causal);
	cJSON_AddBoolToObject(o, "tied_embeddings", t->tied_embeddings);
	if (t->window > 0) {
		cJSON *w = cJSON_AddObjectToObject(o, "window");
		add_int(w, "tokens", t->window);
		add_int(w, "global_every", t->window_global);
	}
	if (t->experts) {
		cJSON *moe = cJSON_AddObjectToObject(o, "moe");
		add_int(moe, "experts", t->experts);
		add_int(moe, "top_k", t->top_k);
		add_int(moe, "expert_ffn", t->expert_ffn);
		add_int(moe, "shared_experts", t->shared_experts);
		add_int(moe, "dense_layers", t->dense_layers);
		add_int(moe, "every", t->moe_every);
	}
	if (t->kv_lora_rank) {
		cJSON *mla = cJSON_AddObjectToObject(o, "mla");
		add_int(mla, "q_lora_rank", t->q_lora_rank);
		add_int(mla, "kv_lora_rank", t->kv_lora_rank);
		add_int(mla, "qk_nope_dim", t->qk_nope_dim);
		add_int(mla, "qk_rope_dim", t->qk_rope_dim);
		add_int(mla, "v_head_dim", t->v_head_dim);
	}
	if (m->pattern != NULL) {
		cJSON *hy = cJSON_AddObjectToObject(o, "hybrid");
		cJSON_AddStringToObject(hy, "pattern", m->pattern);
		add_int(hy, "ssm_heads", t->ssm_heads);
		add_int(hy, "ssm_head_dim", t->ssm_head_dim);
		add_int(hy, "ssm_groups", t->ssm_groups);
		add_int(hy, "ssm_state", t->ssm_state);
		add_int(hy, "ssm_conv", t->ssm_conv);
		add_int(hy, "ssm_chunk", t->ssm_chunk);
	}
	cJSON_AddNumberToObject(o, "fwd_flops_per_token", model_flops_fwd_per_token(m, t->seq));
	cJSON_AddNumberToObject(o, "train_flops_per_token", model_flops_train_per_token(m, t->seq));
	cJSON_AddNumberToObject(o, "weight_bytes_bf16", model_weight_bytes(m, 2.0));
	cJSON_AddNumberToObject(o, "kv_cache_bytes_per_token_bf16", model_kv_bytes_per_token(m, 2.0));
	add_warnings(o, m->warnings);
	return o;
}
