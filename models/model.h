/*
 * model.h -- model descriptions and the quantities derived from them.
 *
 * A model is a transformer (decoder or encoder, dense or mixture-of-experts, with GQA or
 * DeepSeek-style MLA attention) or a CNN given as a list of layers.  It comes from the
 * built-in catalog (models/catalog/ (JSON), compiled into the binary), from a file in our own
 * JSON format (docs/model-format.md), or from a Hugging Face config.json.
 *
 * Invariants of a loaded model (the loader rejects anything else, naming the field):
 *   - every dimension is a positive integer that fits comfortably in 64 bits;
 *   - heads * head_dim is the attention width, kv_heads divides heads;
 *   - a MoE model has 0 < top_k <= experts and expert_ffn > 0;
 *   - a CNN has at least one layer, and every layer's parameters, FLOPs and activations are
 *     derived from its geometry (never taken on trust from the file).
 * A model is immutable once loaded, so one model may be shared by many threads.
 */
#ifndef MODEL_H
#define MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct model model;
struct cJSON;

typedef enum model_kind { MODEL_TRANSFORMER, MODEL_CNN } model_kind;
typedef enum model_mlp { MODEL_MLP_GELU, MODEL_MLP_SWIGLU, MODEL_MLP_RELU } model_mlp;
typedef enum model_norm { MODEL_NORM_LAYERNORM, MODEL_NORM_RMSNORM } model_norm;
typedef enum model_pos { MODEL_POS_LEARNED, MODEL_POS_ROPE, MODEL_POS_ALIBI, MODEL_POS_NONE } model_pos;
/* The format its weights are published in: 16-bit, FP8 (DeepSeek-V3's 128x128 blocks), MXFP4
 * experts (gpt-oss), or 4-bit integer groups (AWQ, GPTQ).  Serving runs a model in it unless told
 * otherwise (sim_serve_released_weights); training ignores it. */
typedef enum model_weights { MODEL_WEIGHTS_16BIT, MODEL_WEIGHTS_FP8, MODEL_WEIGHTS_MXFP4, MODEL_WEIGHTS_INT4 } model_weights;

/* Transformer dimensions.  Optional features are 0 when absent. */
typedef struct model_tf {
	int64_t layers;     /* transformer blocks */
	int64_t hidden;     /* h, the residual width */
	int64_t heads;      /* query heads */
	int64_t kv_heads;   /* key/value heads (== heads without GQA) */
	int64_t head_dim;   /* per-head width (usually hidden / heads) */
	int64_t ffn;        /* MLP intermediate width of a dense layer */
	int64_t vocab;      /* vocabulary size */
	int64_t seq;        /* default training sequence length */
	int64_t max_pos;    /* positions of a learned position embedding (0 without one) */
	int64_t type_vocab; /* BERT token-type embeddings (0 without) */
	model_mlp mlp;
	model_norm norm;
	model_pos pos;
	model_weights weights; /* as published ("weights"; a Hugging Face config's quantization_config) */
	bool causal;          /* decoder (causal mask) or encoder */
	bool bias;            /* linear layers carry biases (GPT-2, BERT) */
	bool qkv_bias;        /* only the QKV projection carries a bias (Qwen2) */
	bool tied_embeddings; /* the LM head shares the input embedding */
	bool mlm_head;        /* BERT pre-training heads: MLM (dense + norm + bias), pooler, NSP */
	/* Mixture of experts: experts == 0 means dense. */
	int64_t experts;        /* routed experts per MoE layer */
	int64_t top_k;          /* experts each token is routed to */
	int64_t expert_ffn;     /* intermediate width of one expert */
	int64_t shared_experts; /* always-active experts (DeepSeek), each of width expert_ffn */
	int64_t dense_layers;   /* leading layers that stay dense (DeepSeek first_k_dense_replace) */
	int64_t moe_every;      /* every n-th layer after dense_layers is MoE (1: all) */
	/* Multi-head latent attention (DeepSeek-V2/V3): kv_lora_rank == 0 means ordinary attention. */
	int64_t q_lora_rank, kv_lora_rank, qk_nope_dim, qk_rope_dim, v_head_dim;
	/* What a training framework needs to build the same model (0: not given; the frameworks'
	 * defaults then apply): the RoPE base, and the norms' epsilon. */
	double rope_theta, norm_eps;
	/* Hybrid models (Nemotron-H; ssm_heads == 0 means none): each layer is one block, a
	 * Mamba-2 mixer, an attention mixer, an MLP or a MoE (model_layer_block, from the hybrid
	 * pattern); the Mamba-2 mixer is ssm_heads x ssm_head_dim wide (d_inner), its B and C
	 * projections come in ssm_groups groups of ssm_state, its causal convolution is ssm_conv
	 * wide and its scan runs in chunks of ssm_chunk tokens (Dao and Gu 2024, arXiv 2405.21060). */
	int64_t ssm_heads, ssm_head_dim, ssm_groups, ssm_state, ssm_conv, ssm_chunk;
	/* Sliding-window attention (window == 0: none): a query attends to itself and the
	 * window - 1 tokens before it, on every layer or, with window_global > 0, on all but every
	 * window_global-th layer (layers window_global - 1, 2 window_global - 1, ... attend to the
	 * whole context: gpt-oss and Gemma 2 every other layer, Gemma 3 one in six). */
	int64_t window, window_global;
} model_tf;

/* What a layer holds: a transformer layer (attention and an MLP or MoE: every layer of a model
 * without a hybrid pattern), or one block of a hybrid model. */
typedef enum model_block {
	MODEL_BLOCK_FULL,  /* attention + MLP (or MoE) */
	MODEL_BLOCK_MAMBA, /* a Mamba-2 mixer ("M" in Nemotron-H's hybrid_override_pattern) */
	MODEL_BLOCK_ATTN,  /* an attention mixer alone ("*") */
	MODEL_BLOCK_MLP    /* an MLP alone ("-"), or a MoE alone ("E": model_layer_is_moe) */
} model_block;

typedef enum model_layer_kind {
	MODEL_LAYER_CONV, MODEL_LAYER_FC, MODEL_LAYER_BN, MODEL_LAYER_RELU, MODEL_LAYER_MAXPOOL,
	MODEL_LAYER_AVGPOOL, MODEL_LAYER_ADD, MODEL_LAYER_DROPOUT
} model_layer_kind;

/* One primitive CNN layer, per sample.  Convolutions and FC layers are GEMMs: M = batch *
 * out_h * out_w, N = out_c, K = in_c * kernel^2 (FC: out_h = out_w = kernel = 1). */
typedef struct model_layer {
	char name[64];
	model_layer_kind kind;
	int64_t in_c, out_c, kernel, stride, in_h, in_w, out_h, out_w;
	int64_t params;      /* trainable parameters */
	double fwd_flops;    /* forward FLOPs per sample: 2 per multiply-add of a convolution or FC
	                      * layer; 0 for element-wise layers, as published CNN FLOP counts do */
	double in_elems;     /* input activation elements per sample */
	double out_elems;    /* output activation elements per sample */
} model_layer;

/* Loading.  `spec` is a catalog name, a path to one of our model JSON files, or a path to a
 * Hugging Face config.json.  Errors name the file and field. */
int model_load(const char *spec, model **out, char *err, size_t errlen);
/* Parses a document already in memory; `origin` names it in messages (a path or "catalog"). */
int model_parse(const char *text, size_t len, const char *origin, model **out, char *err, size_t errlen);
void model_free(model *m);

/* The built-in catalog. */
size_t model_catalog_count(void);
const char *model_catalog_name(size_t i);
const char *model_catalog_text(size_t i);

/* Accessors. */
const char *model_name(const model *m);
const char *model_family(const model *m);
const char *model_source(const model *m);
/* What the loader read but cannot model, one line each without a trailing newline ("" when
 * nothing): a Hugging Face config's sliding-window or chunked attention taken as full attention,
 * a vision encoder left out, and the like.  The model is usable; these say how it differs. */
const char *model_warnings(const model *m);
model_kind model_get_kind(const model *m);
const model_tf *model_transformer(const model *m); /* NULL for a CNN */
size_t model_layers(const model *m, const model_layer **layers); /* CNN layers; 0 for a transformer */
/* CNN input geometry per sample (channels, height, width), and its classes. */
void model_cnn_input(const model *m, int64_t *c, int64_t *h, int64_t *w);

/* Transformer layer structure. */
bool model_layer_is_moe(const model *m, int64_t layer);
model_block model_layer_block(const model *m, int64_t layer);
/* Layers of the same structure (block, MoE or not, attention window): they cost the same. */
bool model_layers_alike(const model *m, int64_t a, int64_t b);
/* The attention window of a layer in tokens, 0 where it attends to the whole context. */
int64_t model_layer_window(const model *m, int64_t layer);
/* The (query, key) pairs causal attention scores for queries at positions from..to-1 (from
 * tokens already before them) with a window of w tokens (0: none): each query at position p
 * sees min(p + 1, w) keys. */
double model_causal_pairs(double from, double to, double w);
/* The hybrid pattern, one character a layer ("M", "*", "-", "E"), or NULL for a transformer. */
const char *model_hybrid_pattern(const model *m);
double model_mamba_params(const model *m);       /* one Mamba-2 mixer incl. its norm (0: none) */
double model_attn_params(const model *m);        /* one layer's attention block incl. its norm */
double model_mlp_params(const model *m, int64_t layer); /* one layer's MLP or MoE block incl. norm */
double model_layer_params(const model *m, int64_t layer); /* the blocks a layer holds */
double model_embedding_params(const model *m);   /* token (+position, +type) embeddings */
double model_head_params(const model *m);        /* final norm + LM head (0 when tied), or BERT heads */

/* Derived quantities. */
double model_params(const model *m);         /* total trainable parameters */
double model_params_active(const model *m);  /* parameters used per token (MoE: top_k experts) */
double model_params_nonembedding(const model *m);
/* Forward FLOPs per token at sequence length seq, counting every GEMM (2 FLOPs per MAC) and
 * the attention score and context products over the full (non-causal-halved) s x s matrix,
 * as Narayanan Eq. 3 and Korthikanti Eq. 7 count them (a sliding-window layer's over its
 * band, min(s, window) keys a query).  Training = 3x forward. */
double model_flops_fwd_per_token(const model *m, int64_t seq);
double model_flops_train_per_token(const model *m, int64_t seq);
/* The same counting causal attention's scores alone: half the full matrix, and a sliding-window
 * layer's exact (query, key) pairs (model_causal_pairs). */
double model_flops_train_causal_per_token(const model *m, int64_t seq);
/* Closed forms from the papers, for GPT-style dense models (per iteration of batch B):
 * Narayanan 2021 Eq. 3 (includes the recomputed forward), Korthikanti 2022 Eq. 7 (model FLOPs)
 * and Eq. 8 (hardware FLOPs with selective recomputation). */
double model_flops_narayanan_eq3(const model *m, double batch, int64_t seq);
double model_flops_korthikanti_eq7(const model *m, double batch, int64_t seq);
double model_flops_korthikanti_eq8(const model *m, double batch, int64_t seq);
/* PaLM-style model FLOPs per token: 6 N + 12 L H Q T (N non-embedding active parameters; a
 * sliding-window layer's T at most its window). */
double model_flops_palm_per_token(const model *m, int64_t seq);
/* Bytes of weights at the given bytes per parameter (2 for bf16, 0.5 for int4). */
double model_weight_bytes(const model *m, double bytes_per_param);
/* KV-cache bytes per token over all layers at the given bytes per element. */
double model_kv_bytes_per_token(const model *m, double bytes_per_elem);
/* CNN forward FLOPs per sample. */
double model_cnn_flops_per_sample(const model *m);

/* A JSON description: dims and derived quantities (the caller frees it with cJSON_Delete). */
struct cJSON *model_to_json(const model *m);

const char *model_mlp_name(model_mlp k);
const char *model_weights_name(model_weights w); /* "bf16", "fp8", "mxfp4", "int4" */
const char *model_layer_kind_name(model_layer_kind k);

#endif /* MODEL_H */
