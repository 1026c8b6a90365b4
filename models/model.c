/*
 * model.c -- loading model descriptions (our JSON format, Hugging Face config.json, the
 * compiled-in catalog) and validating them.  Derived quantities live in derive.c, the CNN
 * layer expansion in cnn.c.
 */
#include "config.h"
#include "models/model_int.h"
#include "common/json.h"

#include <cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Generated from models/catalog/ (JSON) by tools/embed.sh. */
struct embedded_file { const char *name; const char *text; };
extern const struct embedded_file model_catalog_files[];

/* Dimensions above this are rejected: they would overflow the products the simulator forms
 * (hidden^2 * layers * tokens) long before they describe a real model. */
#define DIM_MAX ((int64_t)1 << 24)
#define LAYERS_MAX ((int64_t)1 << 16)
#define FILE_MAX ((size_t)16 << 20)

size_t
model_catalog_count(void)
{
	size_t n = 0;
	while (model_catalog_files[n].name != NULL)
		n++;
	return n;
}

const char *
model_catalog_name(size_t i)
{
	return i < model_catalog_count() ? model_catalog_files[i].name : NULL;
}

const char *
model_catalog_text(size_t i)
{
	return i < model_catalog_count() ? model_catalog_files[i].text : NULL;
}

void
model_free(model *m)
{
	if (m == NULL)
		return;
	free(m->layers);
	free(m->pattern);
	free(m);
}

/* ------------------------------------------------------------------------------------------ */
/* Field readers.  Each names the origin and field in its message. */

typedef struct reader {
	const char *origin;
	const char *prefix; /* "" or "moe." for nested objects */
	char *err;
	size_t errlen;
} reader;

static int
get_int(const reader *r, const cJSON *obj, const char *key, bool required, int64_t def, int64_t min,
	int64_t max, int64_t *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (v == NULL || cJSON_IsNull(v)) {
		if (required)
			return pp_err(r->err, r->errlen, PP_EINPUT, "%s: missing field \"%s%s\" (a positive integer)",
				      r->origin, r->prefix, key);
		*out = def;
		return 0;
	}
	if (!cJSON_IsNumber(v))
		return pp_err(r->err, r->errlen, PP_EINPUT, "%s: \"%s%s\" must be an integer, got %s", r->origin,
			      r->prefix, key, cJSON_IsString(v) ? "a string" : cJSON_IsBool(v) ? "a boolean" : "a non-number");
	double d = v->valuedouble;
	if (!isfinite(d) || d != floor(d))
		return pp_err(r->err, r->errlen, PP_EINPUT, "%s: \"%s%s\" must be an integer, got %g", r->origin,
			      r->prefix, key, d);
	if (d < (double)min || d > (double)max) {
		if (min == 1 && d < 1)
			return pp_err(r->err, r->errlen, PP_EINPUT, "%s: \"%s%s\" must be a positive integer, got %.0f",
				      r->origin, r->prefix, key, d);
		return pp_err(r->err, r->errlen, PP_EINPUT, "%s: \"%s%s\" must be between %lld and %lld, got %.0f",
			      r->origin, r->prefix, key, (long long)min, (long long)max, d);
	}
	*out = (int64_t)d;
	return 0;
}

/* An optional positive real within [min, max] (absent or null: 0). */
static int
get_real(const reader *r, const cJSON *obj, const char *key, double min, double max, double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	*out = 0.0;
	if (v == NULL || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < min || v->valuedouble > max)
		return pp_err(r->err, r->errlen, PP_EINPUT, "%s: \"%s%s\" must be a number from %g to %g", r->origin, r->prefix,
			      key, min, max);
	*out = v->valuedouble;
	return 0;
}

static int
get_bool(const reader *r, const cJSON *obj, const char *key, bool def, bool *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (v == NULL || cJSON_IsNull(v)) {
		*out = def;
		return 0;
	}
	if (!cJSON_IsBool(v))
		return pp_err(r->err, r->errlen, PP_EINPUT, "%s: \"%s%s\" must be true or false", r->origin, r->prefix, key);
	*out = cJSON_IsTrue(v);
	return 0;
}

/* Reads an optional string; *out is NULL when absent. */
static int
get_str(const reader *r, const cJSON *obj, const char *key, const char **out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	*out = NULL;
	if (v == NULL || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v))
		return pp_err(r->err, r->errlen, PP_EINPUT, "%s: \"%s%s\" must be a string", r->origin, r->prefix, key);
	if (!pp_is_printable(v->valuestring, 0)) {
		char shown[64];
		return pp_err(r->err, r->errlen, PP_EINPUT,
			      "%s: \"%s%s\" must be printable UTF-8 text (no control characters), got \"%s\"", r->origin,
			      r->prefix, key, pp_printable(v->valuestring, shown, sizeof shown));
	}
	*out = v->valuestring;
	return 0;
}

/* Matches an optional string field against a list of names; *out keeps its default when the
 * field is absent. */
static int
get_enum(const reader *r, const cJSON *obj, const char *key, const char *const *names, int n, int *out)
{
	const char *s;
	int rc = get_str(r, obj, key, &s);
	if (rc != 0 || s == NULL)
		return rc;
	for (int i = 0; i < n; i++)
		if (names[i] != NULL && strcmp(s, names[i]) == 0) {
			*out = i;
			return 0;
		}
	pp_str list = {0};
	for (int i = 0; i < n; i++)
		if (names[i] != NULL)
			pp_str_addf(&list, "%s%s", list.len ? ", " : "", names[i]);
	rc = pp_err(r->err, r->errlen, PP_EINPUT, "%s: \"%s%s\" must be one of %s, got \"%s\"", r->origin, r->prefix,
		    key, list.buf ? list.buf : "", s);
	pp_str_free(&list);
	return rc;
}

static const char *const mlp_names[] = {"gelu", "swiglu", "relu"};
static const char *const norm_names[] = {"layernorm", "rmsnorm"};
static const char *const pos_names[] = {"learned", "rope", "alibi", "none"};
static const char *const weights_names[] = {"bf16", "fp8", "mxfp4", "int4"};

const char *
model_mlp_name(model_mlp k)
{
	return (unsigned)k < 3 ? mlp_names[k] : "?";
}

const char *
model_weights_name(model_weights w)
{
	return (unsigned)w < 4 ? weights_names[w] : "?";
}

/* ------------------------------------------------------------------------------------------ */
/* Consistency checks shared by every loader. */

static int
check_transformer(model *m, const char *origin, char *err, size_t errlen)
{
	model_tf *t = &m->tf;
	if (t->hidden % t->heads != 0 && t->head_dim == 0)
		return pp_err(err, errlen, PP_EINPUT,
			      "%s: \"heads\" (%lld) must divide \"hidden\" (%lld), or give \"head_dim\" explicitly", origin,
			      (long long)t->heads, (long long)t->hidden);
	if (t->head_dim == 0)
		t->head_dim = t->hidden / t->heads;
	if (t->kv_heads == 0)
		t->kv_heads = t->heads;
	if (t->kv_heads > t->heads || t->heads % t->kv_heads != 0)
		return pp_err(err, errlen, PP_EINPUT, "%s: \"kv_heads\" (%lld) must divide \"heads\" (%lld)", origin,
			      (long long)t->kv_heads, (long long)t->heads);
	if (t->experts > 0) {
		if (t->top_k < 1 || t->top_k > t->experts)
			return pp_err(err, errlen, PP_EINPUT, "%s: \"moe.top_k\" must be between 1 and \"moe.experts\" (%lld), got %lld",
				      origin, (long long)t->experts, (long long)t->top_k);
		if (t->expert_ffn < 1)
			return pp_err(err, errlen, PP_EINPUT, "%s: \"moe.expert_ffn\" must be a positive integer", origin);
		if (t->dense_layers >= t->layers)
			return pp_err(err, errlen, PP_EINPUT, "%s: \"moe.dense_layers\" (%lld) must be below \"layers\" (%lld)", origin,
				      (long long)t->dense_layers, (long long)t->layers);
		if (t->moe_every < 1)
			t->moe_every = 1;
	} else if (t->ffn < 1) {
		return pp_err(err, errlen, PP_EINPUT, "%s: missing field \"ffn\" (a positive integer)", origin);
	}
	if (t->dense_layers > 0 && t->ffn < 1)
		return pp_err(err, errlen, PP_EINPUT, "%s: \"ffn\" is needed for the %lld dense layers", origin,
			      (long long)t->dense_layers);
	/* With "moe.every" > 1 the layers between MoE layers are dense too. */
	if (t->experts > 0 && t->moe_every > 1 && t->ffn < 1)
		return pp_err(err, errlen, PP_EINPUT, "%s: \"ffn\" is needed for the dense layers between MoE layers "
			      "(\"moe.every\" is %lld)", origin, (long long)t->moe_every);
	if (t->kv_lora_rank > 0 && (t->qk_rope_dim < 1 || t->qk_nope_dim < 1 || t->v_head_dim < 1))
		return pp_err(err, errlen, PP_EINPUT,
			      "%s: MLA attention needs positive \"mla.qk_nope_dim\", \"mla.qk_rope_dim\" and \"mla.v_head_dim\"", origin);
	if (t->pos == MODEL_POS_LEARNED && t->max_pos == 0)
		t->max_pos = t->seq;
	if (t->seq < 1)
		return pp_err(err, errlen, PP_EINPUT, "%s: \"seq\" must be a positive integer", origin);
	return 0;
}

/* A hybrid model's pattern (Nemotron-H's hybrid_override_pattern): one character a layer, "M" a
 * Mamba-2 mixer, "*" attention, "-" an MLP, "E" a MoE; as long as "layers".  key names the field
 * in messages. */
static int
set_pattern(model *m, const char *pat, const char *key, const char *origin, char *err, size_t errlen)
{
	size_t n = strlen(pat);
	if ((int64_t)n != m->tf.layers)
		return pp_err(err, errlen, PP_EINPUT, "%s: \"%s\" has %zu layers, the model %lld", origin, key, n,
			      (long long)m->tf.layers);
	size_t bad = strspn(pat, "M*-E");
	if (bad < n && isgraph((unsigned char)pat[bad]))
		return pp_err(err, errlen, PP_EINPUT,
			      "%s: \"%s\" may hold only M (Mamba-2), * (attention), - (MLP) and E (MoE), got '%c' at %zu", origin,
			      key, pat[bad], bad + 1);
	if (bad < n) /* a control or non-ASCII byte: as a number, not raw on the terminal */
		return pp_err(err, errlen, PP_EINPUT,
			      "%s: \"%s\" may hold only M (Mamba-2), * (attention), - (MLP) and E (MoE), got byte 0x%02x at %zu",
			      origin, key, (unsigned char)pat[bad], bad + 1);
	if (strchr(pat, 'E') != NULL && m->tf.experts == 0)
		return pp_err(err, errlen, PP_EINPUT, "%s: \"%s\" has MoE layers (E) but no experts are given", origin, key);
	/* the Mamba-2 mixer's dimensions, from either format: positive, bounded, and groups that
	 * split the heads (a zero chunk or group count divided by zero; a config's optional keys may
	 * be 0 where ours may not) */
	const model_tf *t = &m->tf;
	if (t->ssm_heads < 1 || t->ssm_head_dim < 1 || t->ssm_state < 1 || t->ssm_groups < 1 || t->ssm_conv < 1 ||
	    t->ssm_chunk < 1 || t->ssm_heads > DIM_MAX / t->ssm_head_dim || t->ssm_state > DIM_MAX || t->ssm_conv > 1024 ||
	    t->ssm_chunk > 65536)
		return pp_err(err, errlen, PP_EINPUT,
			      "%s: the Mamba-2 heads, head width, state, groups, convolution width and chunk must be positive, "
			      "heads x head width at most %lld, the convolution at most 1024 and the chunk at most 65536",
			      origin, (long long)DIM_MAX);
	if (t->ssm_heads % t->ssm_groups != 0)
		return pp_err(err, errlen, PP_EINPUT, "%s: the Mamba-2 groups (%lld) must divide its heads (%lld)", origin,
			      (long long)t->ssm_groups, (long long)t->ssm_heads);
	free(m->pattern);
	m->pattern = strdup(pat);
	if (m->pattern == NULL)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Our own JSON format (docs/model-format.md). */

static int
parse_ours(const cJSON *root, const char *origin, model *m, char *err, size_t errlen)
{
	reader r = {origin, "", err, errlen};
	const char *s;
	int rc;
	model_tf *t = &m->tf;

	if ((rc = get_str(&r, root, "family", &s)) != 0)
		return rc;
	pp_printable(s ? s : "", m->family, sizeof m->family);
	if ((rc = get_str(&r, root, "source", &s)) != 0)
		return rc;
	pp_printable(s ? s : "", m->source, sizeof m->source);

	int kind = MODEL_TRANSFORMER;
	static const char *const kinds[] = {"transformer", "cnn"};
	if ((rc = get_enum(&r, root, "kind", kinds, 2, &kind)) != 0)
		return rc;
	m->kind = (model_kind)kind;
	if (m->kind == MODEL_CNN)
		return model_cnn_parse(m, root, origin, err, errlen);

	if ((rc = get_int(&r, root, "layers", true, 0, 1, LAYERS_MAX, &t->layers)) != 0 ||
	    (rc = get_int(&r, root, "hidden", true, 0, 1, DIM_MAX, &t->hidden)) != 0 ||
	    (rc = get_int(&r, root, "heads", true, 0, 1, DIM_MAX, &t->heads)) != 0 ||
	    (rc = get_int(&r, root, "kv_heads", false, 0, 1, DIM_MAX, &t->kv_heads)) != 0 ||
	    (rc = get_int(&r, root, "head_dim", false, 0, 1, DIM_MAX, &t->head_dim)) != 0 ||
	    (rc = get_int(&r, root, "ffn", false, 0, 1, DIM_MAX * 8, &t->ffn)) != 0 ||
	    (rc = get_int(&r, root, "vocab", true, 0, 1, DIM_MAX * 4, &t->vocab)) != 0 ||
	    (rc = get_int(&r, root, "seq", true, 0, 1, DIM_MAX * 4, &t->seq)) != 0 ||
	    (rc = get_int(&r, root, "max_positions", false, 0, 1, DIM_MAX * 4, &t->max_pos)) != 0 ||
	    (rc = get_int(&r, root, "type_vocab", false, 0, 1, DIM_MAX, &t->type_vocab)) != 0)
		return rc;
	int e = MODEL_MLP_GELU;
	if ((rc = get_enum(&r, root, "mlp", mlp_names, 3, &e)) != 0)
		return rc;
	t->mlp = (model_mlp)e;
	e = MODEL_NORM_LAYERNORM;
	if ((rc = get_enum(&r, root, "norm", norm_names, 2, &e)) != 0)
		return rc;
	t->norm = (model_norm)e;
	e = MODEL_POS_LEARNED;
	if ((rc = get_enum(&r, root, "position", pos_names, 4, &e)) != 0)
		return rc;
	t->pos = (model_pos)e;
	e = MODEL_WEIGHTS_16BIT;
	if ((rc = get_enum(&r, root, "weights", weights_names, 4, &e)) != 0)
		return rc;
	t->weights = (model_weights)e;
	if ((rc = get_real(&r, root, "rope_theta", 1.0, 1e12, &t->rope_theta)) != 0 ||
	    (rc = get_real(&r, root, "norm_eps", 1e-12, 0.1, &t->norm_eps)) != 0)
		return rc;
	if ((rc = get_bool(&r, root, "causal", true, &t->causal)) != 0 ||
	    (rc = get_bool(&r, root, "bias", false, &t->bias)) != 0 ||
	    (rc = get_bool(&r, root, "qkv_bias", false, &t->qkv_bias)) != 0 ||
	    (rc = get_bool(&r, root, "tied_embeddings", false, &t->tied_embeddings)) != 0 ||
	    (rc = get_bool(&r, root, "mlm_head", false, &t->mlm_head)) != 0)
		return rc;

	const cJSON *moe = cJSON_GetObjectItemCaseSensitive(root, "moe");
	if (moe != NULL && !cJSON_IsNull(moe)) {
		if (!cJSON_IsObject(moe))
			return pp_err(err, errlen, PP_EINPUT, "%s: \"moe\" must be an object", origin);
		reader rm = {origin, "moe.", err, errlen};
		if ((rc = get_int(&rm, moe, "experts", true, 0, 1, 1 << 16, &t->experts)) != 0 ||
		    (rc = get_int(&rm, moe, "top_k", true, 0, 1, 1 << 16, &t->top_k)) != 0 ||
		    (rc = get_int(&rm, moe, "expert_ffn", true, 0, 1, DIM_MAX * 8, &t->expert_ffn)) != 0 ||
		    (rc = get_int(&rm, moe, "shared_experts", false, 0, 0, 1 << 10, &t->shared_experts)) != 0 ||
		    (rc = get_int(&rm, moe, "dense_layers", false, 0, 0, LAYERS_MAX, &t->dense_layers)) != 0 ||
		    (rc = get_int(&rm, moe, "every", false, 1, 1, LAYERS_MAX, &t->moe_every)) != 0)
			return rc;
	}
	const cJSON *mla = cJSON_GetObjectItemCaseSensitive(root, "mla");
	if (mla != NULL && !cJSON_IsNull(mla)) {
		if (!cJSON_IsObject(mla))
			return pp_err(err, errlen, PP_EINPUT, "%s: \"mla\" must be an object", origin);
		reader rl = {origin, "mla.", err, errlen};
		if ((rc = get_int(&rl, mla, "q_lora_rank", false, 0, 0, DIM_MAX, &t->q_lora_rank)) != 0 ||
		    (rc = get_int(&rl, mla, "kv_lora_rank", true, 0, 1, DIM_MAX, &t->kv_lora_rank)) != 0 ||
		    (rc = get_int(&rl, mla, "qk_nope_dim", true, 0, 1, DIM_MAX, &t->qk_nope_dim)) != 0 ||
		    (rc = get_int(&rl, mla, "qk_rope_dim", true, 0, 1, DIM_MAX, &t->qk_rope_dim)) != 0 ||
		    (rc = get_int(&rl, mla, "v_head_dim", true, 0, 1, DIM_MAX, &t->v_head_dim)) != 0)
			return rc;
	}
	const cJSON *win = cJSON_GetObjectItemCaseSensitive(root, "window");
	if (win != NULL && !cJSON_IsNull(win)) {
		if (!cJSON_IsObject(win))
			return pp_err(err, errlen, PP_EINPUT, "%s: \"window\" must be an object", origin);
		reader rw = {origin, "window.", err, errlen};
		if ((rc = get_int(&rw, win, "tokens", true, 0, 1, 1LL << 30, &t->window)) != 0 ||
		    (rc = get_int(&rw, win, "global_every", false, 0, 0, LAYERS_MAX, &t->window_global)) != 0)
			return rc;
		if (!t->causal)
			return pp_err(err, errlen, PP_EINPUT,
				      "%s: \"window\": sliding-window attention is modelled for causal models only", origin);
	}
	const cJSON *hy = cJSON_GetObjectItemCaseSensitive(root, "hybrid");
	if (hy != NULL && !cJSON_IsNull(hy)) {
		if (!cJSON_IsObject(hy))
			return pp_err(err, errlen, PP_EINPUT, "%s: \"hybrid\" must be an object", origin);
		reader rh = {origin, "hybrid.", err, errlen};
		const char *pat;
		if ((rc = get_str(&rh, hy, "pattern", &pat)) != 0)
			return rc;
		if (pat == NULL)
			return pp_err(err, errlen, PP_EINPUT, "%s: missing field \"hybrid.pattern\" (one of M * - E a layer)",
				      origin);
		if ((rc = get_int(&rh, hy, "ssm_heads", true, 0, 1, DIM_MAX, &t->ssm_heads)) != 0 ||
		    (rc = get_int(&rh, hy, "ssm_head_dim", true, 0, 1, DIM_MAX, &t->ssm_head_dim)) != 0 ||
		    (rc = get_int(&rh, hy, "ssm_groups", false, 1, 1, DIM_MAX, &t->ssm_groups)) != 0 ||
		    (rc = get_int(&rh, hy, "ssm_state", true, 0, 1, DIM_MAX, &t->ssm_state)) != 0 ||
		    (rc = get_int(&rh, hy, "ssm_conv", false, 4, 1, 1 << 10, &t->ssm_conv)) != 0 ||
		    (rc = get_int(&rh, hy, "ssm_chunk", false, 128, 1, 1 << 16, &t->ssm_chunk)) != 0)
			return rc;
		if ((rc = set_pattern(m, pat, "hybrid.pattern", origin, err, errlen)) != 0)
			return rc;
	}
	return check_transformer(m, origin, err, errlen);
}

/* ------------------------------------------------------------------------------------------ */
/* Hugging Face config.json.  Field names differ by architecture; "model_type" selects them. */

static const cJSON *
hf_get(const cJSON *root, const char *a, const char *b)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, a);
	if ((v == NULL || cJSON_IsNull(v)) && b != NULL)
		v = cJSON_GetObjectItemCaseSensitive(root, b);
	return (v == NULL || cJSON_IsNull(v)) ? NULL : v;
}

static int
hf_int(const reader *r, const cJSON *root, const char *a, const char *b, bool required, int64_t def, int64_t *out)
{
	const cJSON *v = hf_get(root, a, b);
	if (v == NULL) {
		if (required)
			return pp_err(r->err, r->errlen, PP_EINPUT, "%s: missing field \"%s\" (a positive integer)", r->origin, a);
		*out = def;
		return 0;
	}
	const char *key = cJSON_GetObjectItemCaseSensitive(root, a) == v ? a : b;
	return get_int(r, root, key, true, 0, 0, DIM_MAX * 8, out);
}

static void
warn(model *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void
warn(model *m, const char *fmt, ...)
{
	size_t n = strlen(m->warnings);
	if (n > 0 && n + 1 < sizeof m->warnings)
		m->warnings[n++] = '\n', m->warnings[n] = '\0';
	char line[sizeof m->warnings];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	/* a config's strings (model_type, quant_method, ...) reach terminals, JSON and reports:
	 * their printable form (pp.h), which also keeps a warning on one line */
	pp_printable(line, m->warnings + n, sizeof m->warnings - n);
}

static bool
one_of(const char *s, const char *const *list)
{
	for (int i = 0; list[i] != NULL; i++)
		if (!strcmp(s, list[i]))
			return true;
	return false;
}

/* The layers of a config's "layer_types" list of that type (-1: no list). */
static int64_t
count_layer_type(const cJSON *root, const char *type)
{
	const cJSON *lt = hf_get(root, "layer_types", NULL), *x;
	if (!cJSON_IsArray(lt))
		return -1;
	int64_t n = 0;
	cJSON_ArrayForEach(x, lt) n += cJSON_IsString(x) && !strcmp(x->valuestring, type);
	return n;
}

/* The full-attention layers of a layer_types array of n entries ("sliding_attention" or
 * "full_attention"), as model_tf's window_global: 0 when every layer slides, p when layers
 * p - 1, 2p - 1, ... are the full ones, -2 when none slides; -1 for any other arrangement. */
static int64_t
layer_types_period(const cJSON *lt, int64_t n)
{
	if (cJSON_GetArraySize(lt) != n)
		return -1;
	int64_t nfull = 0, first = -1, l = 0;
	const cJSON *x;
	cJSON_ArrayForEach(x, lt) {
		if (!cJSON_IsString(x))
			return -1;
		bool full = !strcmp(x->valuestring, "full_attention");
		if (!full && strcmp(x->valuestring, "sliding_attention") != 0)
			return -1;
		if (full && first < 0)
			first = l;
		nfull += full;
		l++;
	}
	if (nfull == 0)
		return 0;
	if (nfull == n)
		return -2;
	int64_t p = first + 1;
	l = 0;
	cJSON_ArrayForEach(x, lt) {
		if ((p > 1 && (l + 1) % p == 0) != !strcmp(x->valuestring, "full_attention"))
			return -1;
		l++;
	}
	return p > 1 ? p : -1;
}

/* The dimensions every decoder's config.json names the same way: hidden_size,
 * num_hidden_layers, num_attention_heads, num_key_value_heads, head_dim, intermediate_size,
 * vocab_size and max_position_embeddings (the default seq); the last two required unless a
 * default is given (def_vocab, def_pos > 0). */
static int
hf_dims(const reader *r, const cJSON *root, int64_t def_vocab, int64_t def_pos, model_tf *t)
{
	int rc;
	if ((rc = hf_int(r, root, "hidden_size", NULL, true, 0, &t->hidden)) != 0 ||
	    (rc = hf_int(r, root, "num_hidden_layers", NULL, true, 0, &t->layers)) != 0 ||
	    (rc = hf_int(r, root, "num_attention_heads", NULL, true, 0, &t->heads)) != 0 ||
	    (rc = hf_int(r, root, "num_key_value_heads", NULL, false, 0, &t->kv_heads)) != 0 ||
	    (rc = hf_int(r, root, "head_dim", NULL, false, 0, &t->head_dim)) != 0 ||
	    (rc = hf_int(r, root, "intermediate_size", NULL, false, 0, &t->ffn)) != 0 ||
	    (rc = hf_int(r, root, "vocab_size", NULL, def_vocab == 0, def_vocab, &t->vocab)) != 0)
		return rc;
	return hf_int(r, root, "max_position_embeddings", NULL, def_pos == 0, def_pos, &t->seq);
}

/* A decoder-only transformer from a Hugging Face config's standard keys: hidden_size,
 * num_hidden_layers, num_attention_heads, num_key_value_heads, head_dim, intermediate_size (and
 * the MoE and MLA keys), vocab_size, max_position_embeddings, tie_word_embeddings.  Where an
 * architecture names a key differently or leaves it to its config class's default, the type
 * says so below.  What it cannot model (sliding-window and chunked attention, soft-capping, a
 * vision encoder, multi-token prediction) becomes a warning; what it cannot express (recurrent
 * or state-space layers, encoder-decoders) is refused. */
static int
hf_decoder(const reader *r, const cJSON *root, const char *mt, model *m)
{
	model_tf *t = &m->tf;
	const char *origin = r->origin;
	char *err = r->err;
	size_t errlen = r->errlen;
	int rc;
	static const struct {
		const char *type, *what;
	} refused[] = {
		{"t5", "an encoder-decoder"},
		{"mt5", "an encoder-decoder"},
		{"bart", "an encoder-decoder"},
		{"whisper", "an encoder-decoder"},
		{"mamba", "a state-space model (Mamba layers, no attention)"},
		{"mamba2", "a state-space model (Mamba layers, no attention)"},
		{"jamba", "a hybrid of attention and Mamba layers"},
		{"falcon_h1", "a hybrid of attention and Mamba layers"},
		{"falcon_mamba", "a state-space model (Mamba layers, no attention)"},
		{"zamba2", "a hybrid of attention and Mamba layers"},
		{"rwkv", "a recurrent model (RWKV layers, no attention)"},
		{"recurrent_gemma", "a hybrid of attention and recurrent layers"},
		{"qwen3_next", "a hybrid of attention and linear-attention (Gated DeltaNet) layers"},
	};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
		if (!strcmp(mt, refused[i].type))
			return pp_err(err, errlen, PP_EINPUT,
				      "%s: model_type \"%s\" is not supported: %s, which paraplan's transformer cannot express", origin, mt,
				      refused[i].what);
	if (count_layer_type(root, "linear_attention") > 0 || count_layer_type(root, "mamba") > 0)
		return pp_err(err, errlen, PP_EINPUT,
			      "%s: \"layer_types\" names linear-attention or Mamba layers, which paraplan's transformer cannot "
			      "express",
			      origin);
	static const char *const known[] = {"llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe",
					    "deepseek_v2", "deepseek_v3", "kimi_k2", "gemma", "gemma2", "gemma3_text",
					    "phi3", "gpt_oss", "llama4_text", "olmo2", "granite", NULL};
	bool gemma = !strncmp(mt, "gemma", 5);
	if (!one_of(mt, known))
		warn(m, "model_type \"%s\" is not one paraplan knows: read as a decoder from the standard keys", mt);
	/* Keys a config may leave to its class's defaults (transformers' Gemma3TextConfig) */
	int64_t def_vocab = !strcmp(mt, "gemma3_text") ? 262208 : 0;
	int64_t def_pos = !strcmp(mt, "gemma3_text") ? 131072 : 0;
	if ((rc = hf_dims(r, root, def_vocab, def_pos, t)) != 0)
		return rc;
	if (def_vocab > 0 && hf_get(root, "vocab_size", NULL) == NULL)
		warn(m, "\"vocab_size\" not given: %s's default, %lld", mt, (long long)def_vocab);
	t->mlp = MODEL_MLP_SWIGLU;
	t->norm = MODEL_NORM_RMSNORM;
	t->pos = MODEL_POS_ROPE;
	t->qkv_bias = !strncmp(mt, "qwen2", 5);
	bool ab = false;
	if ((rc = get_bool(r, root, "attention_bias", false, &ab)) != 0)
		return rc;
	if (ab) {
		t->qkv_bias = true;
		warn(m, "the attention's output projection has a bias too (\"attention_bias\"): only the Q, K and V biases are "
			"counted");
	}
	/* Gemma ties its LM head to the embedding by default; the others' config classes do not */
	if ((rc = get_bool(r, root, "tie_word_embeddings", gemma, &t->tied_embeddings)) != 0)
		return rc;
	/* The MLP: a gate and an up projection times an activation, then down (SwiGLU's three
	 * matrices); Gemma's GeGLU is the same shape. */
	const cJSON *act = hf_get(root, "hidden_activation", "hidden_act");
	if (act != NULL && cJSON_IsString(act) && strcmp(act->valuestring, "silu") != 0 &&
	    strcmp(act->valuestring, "swiglu") != 0) {
		if (strncmp(act->valuestring, "gelu", 4) != 0 && strcmp(act->valuestring, "relu") != 0)
			return pp_err(err, errlen, PP_EINPUT, "%s: \"hidden_act\" \"%s\" is not supported for %s (expected silu or a "
				      "gelu)", origin, act->valuestring, mt);
		warn(m, "the gated MLP's activation is %s: counted as SwiGLU (the same three matrices and FLOPs)",
		     act->valuestring);
	}
	/* Mixture of experts: the expert count under every spelling, top-k, an expert's width */
	int64_t experts = 0;
	if ((rc = hf_int(r, root, "num_local_experts", "n_routed_experts", false, 0, &experts)) != 0)
		return rc;
	if (experts == 0 && (rc = hf_int(r, root, "num_experts", NULL, false, 0, &experts)) != 0)
		return rc;
	if (experts > 0) {
		t->experts = experts;
		bool llama4 = !strcmp(mt, "llama4_text");
		if ((rc = hf_int(r, root, "num_experts_per_tok", "experts_per_token", true, 0, &t->top_k)) != 0 ||
		    (rc = hf_int(r, root, "moe_intermediate_size", NULL, false, t->ffn, &t->expert_ffn)) != 0 ||
		    (rc = hf_int(r, root, "n_shared_experts", NULL, false, 0, &t->shared_experts)) != 0 ||
		    (rc = hf_int(r, root, "first_k_dense_replace", NULL, false, 0, &t->dense_layers)) != 0 ||
		    (rc = hf_int(r, root, "moe_layer_freq", "decoder_sparse_step", false, 1, &t->moe_every)) != 0)
			return rc;
		int64_t shared_inter = 0;
		if ((rc = hf_int(r, root, "shared_expert_intermediate_size", NULL, false, 0, &shared_inter)) != 0)
			return rc;
		if (shared_inter > 0 && t->shared_experts == 0 && t->expert_ffn > 0) {
			/* Qwen-MoE gives one shared expert of its own width; express it in expert widths. */
			t->shared_experts = shared_inter / t->expert_ffn;
		}
		if (llama4) {
			/* Llama 4: intermediate_size is an expert's width and intermediate_size_mlp a dense
			 * layer's; every MoE layer adds one shared expert of an expert's width; a layer is
			 * MoE when (index + 1) is a multiple of interleave_moe_layer_step */
			int64_t step = 1, dense = 0;
			if ((rc = hf_int(r, root, "interleave_moe_layer_step", NULL, false, 1, &step)) != 0 ||
			    (rc = hf_int(r, root, "intermediate_size_mlp", NULL, step > 1, 0, &dense)) != 0)
				return rc;
			t->shared_experts = 1;
			t->moe_every = step;
			t->dense_layers = step - 1;
			t->ffn = dense > 0 ? dense : t->expert_ffn;
		}
		/* Qwen3-MoE's dense layers: expressible when they lead */
		const cJSON *mlp_only = hf_get(root, "mlp_only_layers", NULL), *x;
		if (cJSON_IsArray(mlp_only) && cJSON_GetArraySize(mlp_only) > 0) {
			int64_t k = 0;
			cJSON_ArrayForEach(x, mlp_only)
			{
				if (!cJSON_IsNumber(x) || x->valuedouble != (double)k)
					return pp_err(err, errlen, PP_EINPUT,
						      "%s: \"mlp_only_layers\" must be the leading layers 0, 1, ... for paraplan to express "
						      "them", origin);
				k++;
			}
			t->dense_layers = k;
		}
		if (t->dense_layers == 0 && !llama4)
			t->ffn = t->ffn ? t->ffn : t->expert_ffn;
	}
	if (t->ffn == 0 && t->experts == 0)
		return pp_err(err, errlen, PP_EINPUT, "%s: missing field \"intermediate_size\" (a positive integer)", origin);
	/* DeepSeek multi-head latent attention. */
	int64_t kv_lora = 0;
	if ((rc = hf_int(r, root, "kv_lora_rank", NULL, false, 0, &kv_lora)) != 0)
		return rc;
	if (kv_lora > 0) {
		t->kv_lora_rank = kv_lora;
		if ((rc = hf_int(r, root, "q_lora_rank", NULL, false, 0, &t->q_lora_rank)) != 0 ||
		    (rc = hf_int(r, root, "qk_nope_head_dim", NULL, true, 0, &t->qk_nope_dim)) != 0 ||
		    (rc = hf_int(r, root, "qk_rope_head_dim", NULL, true, 0, &t->qk_rope_dim)) != 0 ||
		    (rc = hf_int(r, root, "v_head_dim", NULL, true, 0, &t->v_head_dim)) != 0)
			return rc;
		if (t->head_dim == 0)
			t->head_dim = t->qk_nope_dim + t->qk_rope_dim;
	}
	/* Sliding-window attention: every layer, or all but every n-th (layer_types, or the
	 * patterns of the types that alternate: Gemma 2 every other layer, Gemma 3 five local to
	 * one global, sliding_window_pattern) */
	int64_t window = 0; /* absent, null or 0: none */
	if ((rc = get_int(r, root, "sliding_window", false, 0, 0, 1LL << 30, &window)) != 0)
		return rc;
	bool use_sw = true;
	if ((rc = get_bool(r, root, "use_sliding_window", true, &use_sw)) != 0)
		return rc;
	if (window > 0 && use_sw) {
		int64_t every = 0;
		const cJSON *lt = hf_get(root, "layer_types", NULL);
		if (cJSON_IsArray(lt)) {
			every = layer_types_period(lt, t->layers);
		} else {
			every = !strcmp(mt, "gemma2") ? 2 : !strcmp(mt, "gemma3_text") ? 6 : 1;
			if ((rc = hf_int(r, root, "sliding_window_pattern", NULL, false, every, &every)) != 0)
				return rc;
			every = every > 1 ? every : 0;
		}
		if (every >= 0) {
			t->window = window;
			t->window_global = every;
			warn(m, "sliding-window attention (%lld tokens, %lld of %lld layers): training prices it over the "
				"window; serving still prices it, and counts the KV cache, over the whole context",
			     (long long)window, (long long)(every > 0 ? t->layers - t->layers / every : t->layers),
			     (long long)t->layers);
		} else if (every == -1) { /* -2: layer_types names no sliding layer */
			warn(m, "sliding-window attention (%lld tokens) on layers in no repeating pattern is modelled as full "
				"attention: attention FLOPs, activations and the KV cache are counted over the whole sequence",
			     (long long)window);
		}
	}
	const cJSON *chunk = hf_get(root, "attention_chunk_size", NULL);
	if (cJSON_IsNumber(chunk) && chunk->valuedouble >= 1)
		warn(m, "chunked local attention (%.0f-token chunks on the RoPE layers) is modelled as full attention",
		     chunk->valuedouble);
	if (hf_get(root, "attn_logit_softcapping", NULL) != NULL || hf_get(root, "final_logit_softcapping", NULL) != NULL)
		warn(m, "logit soft-capping is not modelled (element-wise, no GEMM)");
	const cJSON *mtp = hf_get(root, "num_nextn_predict_layers", NULL);
	if (cJSON_IsNumber(mtp) && mtp->valuedouble >= 1)
		warn(m, "the %.0f multi-token-prediction layer(s) are not modelled", mtp->valuedouble);
	const cJSON *q = hf_get(root, "quantization_config", NULL);
	if (cJSON_IsObject(q)) {
		/* the published format serving runs by default: FP8 (DeepSeek-V3), MXFP4
		 * (gpt-oss), 4-bit AWQ or GPTQ groups */
		const cJSON *qm = cJSON_GetObjectItemCaseSensitive(q, "quant_method");
		const cJSON *bits = cJSON_GetObjectItemCaseSensitive(q, "bits");
		const char *method = cJSON_IsString(qm) ? qm->valuestring : "";
		if (!strcmp(method, "fp8"))
			t->weights = MODEL_WEIGHTS_FP8;
		else if (!strcmp(method, "mxfp4"))
			t->weights = MODEL_WEIGHTS_MXFP4;
		else if ((!strcmp(method, "awq") || !strcmp(method, "gptq")) && cJSON_IsNumber(bits) && bits->valuedouble == 4)
			t->weights = MODEL_WEIGHTS_INT4;
		else
			warn(m, "the checkpoint is quantized (%.40s): served as 16-bit weights unless --weights says otherwise",
			     method[0] ? method : "quantization_config");
	}
	return 0;
}

/* Nemotron-H and Nemotron 3 (model_type nemotron_h, transformers' NemotronHConfig): a hybrid
 * of Mamba-2 mixers, attention and MLP or MoE layers in the order hybrid_override_pattern gives,
 * one character a layer (M, *, -, E: our "hybrid.pattern").  Its MLPs and experts are two
 * matrices around a squared ReLU (mlp_hidden_act relu2); its attention has no position
 * embedding; its shared expert is one matrix pair of moe_shared_expert_intermediate_size,
 * counted in expert widths.  LatentMoE (experts in a narrower latent space, Nemotron 3 Super's
 * moe_latent_size) cannot be expressed and is refused. */
static int
hf_nemotron_h(const reader *r, const cJSON *root, model *m)
{
	model_tf *t = &m->tf;
	int rc;
	if ((rc = hf_dims(r, root, 0, 0, t)) != 0 ||
	    (rc = hf_int(r, root, "mamba_num_heads", NULL, true, 0, &t->ssm_heads)) != 0 ||
	    (rc = hf_int(r, root, "mamba_head_dim", NULL, true, 0, &t->ssm_head_dim)) != 0 ||
	    (rc = hf_int(r, root, "ssm_state_size", NULL, true, 0, &t->ssm_state)) != 0 ||
	    (rc = hf_int(r, root, "n_groups", NULL, false, 1, &t->ssm_groups)) != 0 ||
	    (rc = hf_int(r, root, "conv_kernel", NULL, false, 4, &t->ssm_conv)) != 0 ||
	    (rc = hf_int(r, root, "chunk_size", NULL, false, 128, &t->ssm_chunk)) != 0)
		return rc;
	const cJSON *lat = hf_get(root, "moe_latent_size", NULL);
	if (lat != NULL && !cJSON_IsNull(lat) && !(cJSON_IsNumber(lat) && lat->valuedouble == 0))
		return pp_err(r->err, r->errlen, PP_EINPUT,
			      "%s: \"moe_latent_size\" is given: experts in a latent space (LatentMoE) cannot be expressed",
			      r->origin);
	const cJSON *pat = hf_get(root, "hybrid_override_pattern", NULL);
	if (!cJSON_IsString(pat))
		return pp_err(r->err, r->errlen, PP_EINPUT,
			      "%s: missing field \"hybrid_override_pattern\" (a string, one of M * - E a layer)", r->origin);
	if (strchr(pat->valuestring, 'E') != NULL) {
		int64_t shared = 0;
		if ((rc = hf_int(r, root, "n_routed_experts", NULL, true, 0, &t->experts)) != 0 ||
		    (rc = hf_int(r, root, "num_experts_per_tok", NULL, true, 0, &t->top_k)) != 0 ||
		    (rc = hf_int(r, root, "moe_intermediate_size", NULL, true, 0, &t->expert_ffn)) != 0 ||
		    (rc = hf_int(r, root, "moe_shared_expert_intermediate_size", NULL, false, 0, &shared)) != 0)
			return rc;
		if (shared % t->expert_ffn != 0)
			return pp_err(r->err, r->errlen, PP_EINPUT,
				      "%s: \"moe_shared_expert_intermediate_size\" (%lld) must be a whole number of experts' width "
				      "(%lld): paraplan counts shared experts in expert widths",
				      r->origin, (long long)shared, (long long)t->expert_ffn);
		t->shared_experts = shared / t->expert_ffn;
	}
	if (strchr(pat->valuestring, '-') != NULL && t->ffn < 1)
		return pp_err(r->err, r->errlen, PP_EINPUT, "%s: missing field \"intermediate_size\" (the MLP layers' width)",
			      r->origin);
	if (t->ffn < 1)
		t->ffn = t->expert_ffn;
	const cJSON *act = hf_get(root, "mlp_hidden_act", NULL);
	if (cJSON_IsString(act) && strcmp(act->valuestring, "relu2") != 0)
		warn(m, "the MLPs' activation is %s: counted as the squared ReLU's two matrices", act->valuestring);
	t->mlp = MODEL_MLP_RELU;
	t->norm = MODEL_NORM_RMSNORM;
	t->pos = MODEL_POS_NONE;
	if ((rc = get_bool(r, root, "tie_word_embeddings", false, &t->tied_embeddings)) != 0)
		return rc;
	const cJSON *mtp = hf_get(root, "num_nextn_predict_layers", "mtp_num_layers");
	if (cJSON_IsNumber(mtp) && mtp->valuedouble >= 1)
		warn(m, "the %.0f multi-token-prediction layer(s) are not modelled", mtp->valuedouble);
	return set_pattern(m, pat->valuestring, "hybrid_override_pattern", r->origin, r->err, r->errlen);
}

/* The keys of a Hugging Face config are held to what our own format allows, before they are
 * read, in one pass of its own (the readers per model type need not repeat it):
 *   - a size, count or rank, when given, is a positive integer: num_key_value_heads 0,
 *     num_local_experts 0, kv_lora_rank 0 or moe_layer_freq 0 once loaded as another model (or
 *     divided by zero) where our format refuses them;
 *   - the expert count, given under several spellings, is one number;
 *   - a shared-expert width is a whole number of expert widths (integer division truncated a
 *     narrower one to no shared expert at all). */
static int
hf_strict(const cJSON *root, const char *origin, char *err, size_t errlen)
{
	static const char *const positive[] = {
		"hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim",
		"intermediate_size", "vocab_size", "max_position_embeddings", "n_embd", "n_layer", "n_head", "n_inner",
		"n_positions", "n_ctx", "num_local_experts", "n_routed_experts", "num_experts", "num_experts_per_tok",
		"moe_intermediate_size", "moe_layer_freq", "decoder_sparse_step", "shared_expert_intermediate_size",
		"kv_lora_rank", "q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", NULL,
	};
	for (size_t i = 0; positive[i] != NULL; i++) {
		const cJSON *v = hf_get(root, positive[i], NULL);
		if (v != NULL && cJSON_IsNumber(v) && !(v->valuedouble >= 1))
			return pp_err(err, errlen, PP_EINPUT, "%s: \"%s\" must be a positive integer, got %.17g", origin,
				      positive[i], v->valuedouble);
	}
	static const char *const experts[] = {"num_local_experts", "n_routed_experts", "num_experts"};
	const char *first = NULL;
	double n = 0;
	for (size_t i = 0; i < 3; i++) {
		const cJSON *v = hf_get(root, experts[i], NULL);
		if (v == NULL || !cJSON_IsNumber(v))
			continue;
		if (first != NULL && v->valuedouble != n)
			return pp_err(err, errlen, PP_EINPUT, "%s: \"%s\" (%.17g) and \"%s\" (%.17g) give different expert counts",
				      origin, first, n, experts[i], v->valuedouble);
		first = experts[i];
		n = v->valuedouble;
	}
	const cJSON *sh = hf_get(root, "shared_expert_intermediate_size", NULL);
	const cJSON *ex = hf_get(root, "moe_intermediate_size", "intermediate_size"); /* an expert's width, as read */
	if (first != NULL && cJSON_IsNumber(sh) && cJSON_IsNumber(ex) && hf_get(root, "n_shared_experts", NULL) == NULL &&
	    fmod(sh->valuedouble, ex->valuedouble) != 0)
		return pp_err(err, errlen, PP_EINPUT,
			      "%s: \"shared_expert_intermediate_size\" (%.17g) must be a whole number of experts' width "
			      "(%.17g): paraplan counts shared experts in expert widths",
			      origin, sh->valuedouble, ex->valuedouble);
	return 0;
}

static int
parse_hf(const cJSON *root, const char *origin, const char *model_type, model *m, char *err, size_t errlen)
{
	reader r = {origin, "", err, errlen};
	model_tf *t = &m->tf;
	int rc;
	const char *mt = model_type;

	m->kind = MODEL_TRANSFORMER;
	/* A multimodal config (Llama 4, Gemma 3, ...) holds its language model in "text_config":
	 * that is the model trained and served here; the vision encoder is left out, and said so. */
	const cJSON *tc = cJSON_GetObjectItemCaseSensitive(root, "text_config");
	char text_type[64];
	if (cJSON_IsObject(tc)) {
		const cJSON *tmt = cJSON_GetObjectItemCaseSensitive(tc, "model_type");
		if (cJSON_IsString(tmt))
			pp_strlcpy(text_type, tmt->valuestring, sizeof text_type);
		else
			snprintf(text_type, sizeof text_type, "%s_text", mt);
		warn(m, "a %s config: its language model (text_config, %s) is modelled, not its vision encoder", mt, text_type);
		root = tc;
		mt = text_type;
	}
	pp_printable(mt, m->family, sizeof m->family);
	char src[sizeof m->source];
	snprintf(src, sizeof src, "Hugging Face config.json (%s)", origin);
	pp_printable(src, m->source, sizeof m->source);
	t->causal = true;
	t->moe_every = 1;
	if ((rc = hf_strict(root, origin, err, errlen)) != 0)
		return rc;

	if (!strcmp(mt, "gpt2")) {
		int64_t inner = 0;
		if ((rc = hf_int(&r, root, "n_embd", NULL, true, 0, &t->hidden)) != 0 ||
		    (rc = hf_int(&r, root, "n_layer", NULL, true, 0, &t->layers)) != 0 ||
		    (rc = hf_int(&r, root, "n_head", NULL, true, 0, &t->heads)) != 0 ||
		    (rc = hf_int(&r, root, "vocab_size", NULL, true, 0, &t->vocab)) != 0 ||
		    (rc = hf_int(&r, root, "n_positions", "n_ctx", true, 0, &t->max_pos)) != 0 ||
		    (rc = hf_int(&r, root, "n_inner", NULL, false, 0, &inner)) != 0)
			return rc;
		t->ffn = inner > 0 ? inner : 4 * t->hidden;
		t->mlp = MODEL_MLP_GELU;
		t->norm = MODEL_NORM_LAYERNORM;
		t->pos = MODEL_POS_LEARNED;
		t->bias = true;
		t->tied_embeddings = true;
		t->seq = t->max_pos;
	} else if (!strcmp(mt, "bert") || !strcmp(mt, "roberta")) {
		if ((rc = hf_int(&r, root, "hidden_size", NULL, true, 0, &t->hidden)) != 0 ||
		    (rc = hf_int(&r, root, "num_hidden_layers", NULL, true, 0, &t->layers)) != 0 ||
		    (rc = hf_int(&r, root, "num_attention_heads", NULL, true, 0, &t->heads)) != 0 ||
		    (rc = hf_int(&r, root, "intermediate_size", NULL, true, 0, &t->ffn)) != 0 ||
		    (rc = hf_int(&r, root, "vocab_size", NULL, true, 0, &t->vocab)) != 0 ||
		    (rc = hf_int(&r, root, "max_position_embeddings", NULL, true, 0, &t->max_pos)) != 0 ||
		    (rc = hf_int(&r, root, "type_vocab_size", NULL, false, 2, &t->type_vocab)) != 0)
			return rc;
		t->mlp = MODEL_MLP_GELU;
		t->norm = MODEL_NORM_LAYERNORM;
		t->pos = MODEL_POS_LEARNED;
		t->bias = true;
		t->causal = false;
		t->tied_embeddings = true;
		t->mlm_head = true;
		t->seq = t->max_pos;
	} else if (!strcmp(mt, "gpt_neox")) {
		if ((rc = hf_int(&r, root, "hidden_size", NULL, true, 0, &t->hidden)) != 0 ||
		    (rc = hf_int(&r, root, "num_hidden_layers", NULL, true, 0, &t->layers)) != 0 ||
		    (rc = hf_int(&r, root, "num_attention_heads", NULL, true, 0, &t->heads)) != 0 ||
		    (rc = hf_int(&r, root, "intermediate_size", NULL, true, 0, &t->ffn)) != 0 ||
		    (rc = hf_int(&r, root, "vocab_size", NULL, true, 0, &t->vocab)) != 0 ||
		    (rc = hf_int(&r, root, "max_position_embeddings", NULL, true, 0, &t->seq)) != 0)
			return rc;
		t->mlp = MODEL_MLP_GELU;
		t->norm = MODEL_NORM_LAYERNORM;
		t->pos = MODEL_POS_ROPE;
		t->bias = true;
		if ((rc = get_bool(&r, root, "tie_word_embeddings", false, &t->tied_embeddings)) != 0)
			return rc;
	} else if (!strcmp(mt, "nemotron_h")) {
		if ((rc = hf_nemotron_h(&r, root, m)) != 0)
			return rc;
	} else {
		if ((rc = hf_decoder(&r, root, mt, m)) != 0)
			return rc;
	}
	/* What a framework needs to rebuild the same model: the RoPE base and the norm's epsilon
	 * (spelled by architecture), and the context for Megatron's --max-position-embeddings. */
	if ((rc = get_real(&r, root, "rope_theta", 1.0, 1e12, &t->rope_theta)) != 0 ||
	    (t->rope_theta == 0 && (rc = get_real(&r, root, "rotary_emb_base", 1.0, 1e12, &t->rope_theta)) != 0))
		return rc;
	static const char *const eps_keys[] = {"rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon", "norm_epsilon"};
	for (size_t i = 0; i < 4 && t->norm_eps == 0; i++)
		if ((rc = get_real(&r, root, eps_keys[i], 1e-12, 0.1, &t->norm_eps)) != 0)
			return rc;
	if (t->pos != MODEL_POS_LEARNED && t->max_pos == 0)
		t->max_pos = t->seq;
	/* Zero values that slipped through hf_int (which allows 0 for optional fields). */
	if (t->hidden < 1 || t->layers < 1 || t->heads < 1 || t->vocab < 1)
		return pp_err(err, errlen, PP_EINPUT, "%s: hidden size, layers, heads and vocab must be positive", origin);
	if (t->layers > LAYERS_MAX || t->hidden > DIM_MAX || t->heads > DIM_MAX)
		return pp_err(err, errlen, PP_EINPUT, "%s: dimensions are out of range (layers <= %lld, hidden <= %lld)", origin,
			      (long long)LAYERS_MAX, (long long)DIM_MAX);
	/* Long-context configs give max_position_embeddings of 128K and more; train at 8192 by
	 * default (the --seq flag overrides it) rather than at a length nobody trains with. */
	if (t->pos != MODEL_POS_LEARNED && t->seq > 8192)
		t->seq = 8192;
	return check_transformer(m, origin, err, errlen);
}

/* ------------------------------------------------------------------------------------------ */

int
model_parse(const char *text, size_t len, const char *origin, model **out, char *err, size_t errlen)
{
	*out = NULL;
	cJSON *root;
	int rc = pp_json_parse(text, len, origin, 0, &root, err, errlen);
	if (rc != 0)
		return rc;
	model *m = calloc(1, sizeof *m);
	if (m == NULL) {
		cJSON_Delete(root);
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	}
	if (!cJSON_IsObject(root)) {
		rc = pp_err(err, errlen, PP_EINPUT, "%s: expected a JSON object at the top level", origin);
		goto done;
	}
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
	const cJSON *mt = cJSON_GetObjectItemCaseSensitive(root, "model_type");
	if (name != NULL && !cJSON_IsString(name)) {
		rc = pp_err(err, errlen, PP_EINPUT, "%s: \"name\" must be a string", origin);
		goto done;
	}
	if (mt != NULL && cJSON_IsString(mt) && (name == NULL || cJSON_GetObjectItemCaseSensitive(root, "layers") == NULL)) {
		/* A Hugging Face config: name it after _name_or_path or the file. */
		const cJSON *np = cJSON_GetObjectItemCaseSensitive(root, "_name_or_path");
		const char *nm = (np && cJSON_IsString(np) && np->valuestring[0]) ? np->valuestring : origin;
		const char *slash = strrchr(nm, '/');
		if (slash && slash[1] && strcmp(slash + 1, "config.json") != 0)
			nm = slash + 1;
		/* a name made from a path or a config's field: its printable form (pp.h) */
		pp_printable(nm, m->name, sizeof m->name);
		rc = parse_hf(root, origin, mt->valuestring, m, err, errlen);
	} else if (name == NULL) {
		rc = pp_err(err, errlen, PP_EINPUT,
			    "%s: missing field \"name\" (a paraplan model) or \"model_type\" (a Hugging Face config.json)", origin);
	} else if (name->valuestring[0] == '\0' || strlen(name->valuestring) >= sizeof m->name) {
		rc = pp_err(err, errlen, PP_EINPUT, "%s: \"name\" must be 1 to %zu characters", origin, sizeof m->name - 1);
	} else if (!pp_is_printable(name->valuestring, 0)) {
		char shown[96];
		rc = pp_err(err, errlen, PP_EINPUT,
			    "%s: \"name\" must be printable UTF-8 text (no control characters), got \"%s\"", origin,
			    pp_printable(name->valuestring, shown, sizeof shown));
	} else {
		pp_strlcpy(m->name, name->valuestring, sizeof m->name);
		rc = parse_ours(root, origin, m, err, errlen);
	}
done:
	cJSON_Delete(root);
	if (rc != 0) {
		model_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

int
model_load(const char *spec, model **out, char *err, size_t errlen)
{
	*out = NULL;
	if (spec == NULL || spec[0] == '\0')
		return pp_err(err, errlen, PP_EUSAGE, "no model given: pass a catalog name (see 'paraplan model list') or a path");
	/* A catalog name has no slash and no .json suffix; anything else is a path. */
	if (strchr(spec, '/') == NULL && !pp_ends_with(spec, ".json")) {
		for (size_t i = 0; model_catalog_files[i].name != NULL; i++)
			if (strcmp(model_catalog_files[i].name, spec) == 0) {
				char origin[96];
				snprintf(origin, sizeof origin, "models/catalog/%s.json", spec);
				const char *txt = model_catalog_files[i].text;
				return model_parse(txt, strlen(txt), origin, out, err, errlen);
			}
		return pp_err(err, errlen, PP_ENOTFOUND,
			      "unknown model \"%s\": not in the catalog (see 'paraplan model list') and not a path", spec);
	}
	char *text;
	size_t len;
	int rc = pp_read_text(spec, FILE_MAX, &text, &len, err, errlen);
	if (rc != 0)
		return rc;
	rc = model_parse(text, len, spec, out, err, errlen);
	free(text);
	return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* Accessors */

const char *model_name(const model *m) { return m->name; }
const char *model_family(const model *m) { return m->family; }
const char *model_source(const model *m) { return m->source; }
const char *model_warnings(const model *m) { return m->warnings; }
model_kind model_get_kind(const model *m) { return m->kind; }

const model_tf *
model_transformer(const model *m)
{
	return m->kind == MODEL_TRANSFORMER ? &m->tf : NULL;
}

size_t
model_layers(const model *m, const model_layer **layers)
{
	if (layers)
		*layers = m->layers;
	return m->kind == MODEL_CNN ? m->nlayers : 0;
}

void
model_cnn_input(const model *m, int64_t *c, int64_t *h, int64_t *w)
{
	*c = m->in_c;
	*h = m->in_h;
	*w = m->in_w;
}
