/*
 * cnn.c -- CNN models as layer lists.
 *
 * The JSON lists layers by geometry ("conv" with out channels, kernel, stride, padding; "fc";
 * pools; and ResNet "bottleneck"/"basic" stages that expand to their convolutions).  This file
 * expands them into primitive layers and derives each one's parameters, FLOPs and activation
 * sizes, so that a layer list can never disagree with its own arithmetic.
 *
 * ResNet stages follow torchvision's ResNet v1.5: the stride sits on the 3x3 convolution of a
 * bottleneck, and the first block of a stage has a 1x1 projection shortcut (with BN) when the
 * stride or the channel count changes (He et al. 2016, arXiv 1512.03385, Table 1).
 */
#include "config.h"
#include "models/model_int.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bounds of a layer list: the geometry of every activation (channels, height, width) and the
 * primitive layers a document may expand to.  ResNet-152 has about 500 primitive layers; the
 * bounds keep every product below (channels x kernel^2 x channels, height x width) in 64 bits
 * and a hostile "blocks": 1048576 from building a list of gigabytes. */
#define CNN_DIM_MAX ((int64_t)1 << 20)
#define CNN_LAYERS_MAX 100000

typedef struct cnn_builder {
	model *m;
	size_t cap;
	bool too_many; /* push refused: more than CNN_LAYERS_MAX layers */
	int64_t c, h, w; /* current activation geometry */
	const char *origin;
	char *err;
	size_t errlen;
} cnn_builder;

static const char *const layer_kind_names[] = {"conv", "fc", "bn", "relu", "maxpool", "avgpool", "add", "dropout"};

const char *
model_layer_kind_name(model_layer_kind k)
{
	return (unsigned)k < sizeof layer_kind_names / sizeof layer_kind_names[0] ? layer_kind_names[k] : "?";
}

static model_layer *
push(cnn_builder *b, model_layer_kind kind, const char *name)
{
	if (b->m->nlayers >= CNN_LAYERS_MAX) {
		b->too_many = true;
		return NULL;
	}
	if (PP_GROW(b->m->layers, b->cap, b->m->nlayers + 1) != 0)
		return NULL;
	model_layer *l = &b->m->layers[b->m->nlayers++];
	memset(l, 0, sizeof *l);
	l->kind = kind;
	pp_strlcpy(l->name, name, sizeof l->name);
	l->in_c = b->c;
	l->in_h = b->h;
	l->in_w = b->w;
	l->in_elems = (double)b->c * (double)b->h * (double)b->w;
	l->kernel = 1;
	l->stride = 1;
	return l;
}

static void
finish(cnn_builder *b, model_layer *l)
{
	l->out_elems = (double)l->out_c * (double)l->out_h * (double)l->out_w;
	b->c = l->out_c;
	b->h = l->out_h;
	b->w = l->out_w;
}

static int
oom(cnn_builder *b)
{
	if (b->too_many)
		return pp_err(b->err, b->errlen, PP_EINPUT, "%s: the layers expand to more than %d primitive layers",
			      b->origin, CNN_LAYERS_MAX);
	return pp_err(b->err, b->errlen, PP_ENOMEM, "out of memory");
}

/* An output geometry within the bounds, else an error naming the layer. */
static int
check_geometry(cnn_builder *b, const char *name, int64_t c, int64_t h, int64_t w)
{
	if (c > CNN_DIM_MAX || h > CNN_DIM_MAX || w > CNN_DIM_MAX)
		return pp_err(b->err, b->errlen, PP_EINPUT,
			      "%s: layer \"%s\": output %lldx%lldx%lld exceeds %lld in some dimension", b->origin, name,
			      (long long)c, (long long)h, (long long)w, (long long)CNN_DIM_MAX);
	return 0;
}

/* a * b * c * d in 64 bits, else an error naming the layer. */
static int
checked_params(cnn_builder *b, const char *name, int64_t a, int64_t x, int64_t y, int64_t z, int64_t *out)
{
	int64_t p;
	if (!pp_mul64(a, x, &p) || !pp_mul64(p, y, &p) || !pp_mul64(p, z, &p))
		return pp_err(b->err, b->errlen, PP_EINPUT, "%s: layer \"%s\": its parameter count overflows 64 bits",
			      b->origin, name);
	*out = p;
	return 0;
}

/* An element-wise layer keeps the geometry. */
static int
add_elementwise(cnn_builder *b, model_layer_kind kind, const char *name)
{
	model_layer *l = push(b, kind, name);
	if (l == NULL)
		return oom(b);
	l->out_c = b->c;
	l->out_h = b->h;
	l->out_w = b->w;
	if (kind == MODEL_LAYER_BN)
		l->params = 2 * b->c; /* scale and shift */
	finish(b, l);
	return 0;
}

static int
add_conv(cnn_builder *b, const char *name, int64_t out, int64_t k, int64_t stride, int64_t pad, bool bias)
{
	int64_t oh = (b->h + 2 * pad - k) / stride + 1;
	int64_t ow = (b->w + 2 * pad - k) / stride + 1;
	if (b->h + 2 * pad < k || b->w + 2 * pad < k || oh < 1 || ow < 1)
		return pp_err(b->err, b->errlen, PP_EINPUT, "%s: layer \"%s\": kernel %lld does not fit the %lldx%lld input",
			      b->origin, name, (long long)k, (long long)b->h, (long long)b->w);
	int64_t params = 0;
	int rc;
	if ((rc = check_geometry(b, name, out, oh, ow)) != 0 || (rc = checked_params(b, name, b->c, out, k, k, &params)) != 0)
		return rc;
	model_layer *l = push(b, MODEL_LAYER_CONV, name);
	if (l == NULL)
		return oom(b);
	l->out_c = out;
	l->kernel = k;
	l->stride = stride;
	l->out_h = oh;
	l->out_w = ow;
	l->params = params + (bias ? out : 0);
	l->fwd_flops = 2.0 * (double)(k * k) * (double)b->c * (double)out * (double)(oh * ow);
	finish(b, l);
	return 0;
}

static int
add_pool(cnn_builder *b, model_layer_kind kind, const char *name, int64_t k, int64_t stride, int64_t pad)
{
	model_layer *l = push(b, kind, name);
	if (l == NULL)
		return oom(b);
	if (k == 0) { /* global pooling */
		k = b->h;
		stride = 1;
		pad = 0;
		l->out_h = l->out_w = 1;
	} else {
		if (b->h + 2 * pad < k || b->w + 2 * pad < k)
			return pp_err(b->err, b->errlen, PP_EINPUT, "%s: layer \"%s\": pool %lld does not fit the %lldx%lld input",
				      b->origin, name, (long long)k, (long long)b->h, (long long)b->w);
		l->out_h = (b->h + 2 * pad - k) / stride + 1;
		l->out_w = (b->w + 2 * pad - k) / stride + 1;
		int rc = check_geometry(b, name, b->c, l->out_h, l->out_w);
		if (rc != 0)
			return rc;
	}
	l->kernel = k;
	l->stride = stride;
	l->out_c = b->c;
	finish(b, l);
	return 0;
}

static int
add_fc(cnn_builder *b, const char *name, int64_t out, bool bias)
{
	/* An FC layer flattens whatever comes in. */
	int64_t in = 0, params = 0;
	int rc = checked_params(b, name, b->c, b->h, b->w, 1, &in);
	if (rc == 0)
		rc = checked_params(b, name, in, out, 1, 1, &params);
	if (rc != 0)
		return rc;
	model_layer *l = push(b, MODEL_LAYER_FC, name);
	if (l == NULL)
		return oom(b);
	l->in_c = in;
	l->in_h = l->in_w = 1;
	l->out_c = out;
	l->out_h = l->out_w = 1;
	l->params = params + (bias ? out : 0);
	l->fwd_flops = 2.0 * (double)in * (double)out;
	finish(b, l);
	return 0;
}

/* One residual block.  width is the bottleneck width (ignored for basic blocks). */
static int
add_block(cnn_builder *b, const char *stage, int idx, bool bottleneck, int64_t width, int64_t out, int64_t stride)
{
	char nm[96];
	int rc;
	int64_t in_c = b->c, in_h = b->h, in_w = b->w;
	bool project = stride != 1 || in_c != out;
	if (bottleneck) {
		snprintf(nm, sizeof nm, "%s.%d.conv1", stage, idx);
		if ((rc = add_conv(b, nm, width, 1, 1, 0, false)) != 0)
			return rc;
		snprintf(nm, sizeof nm, "%s.%d.bn1", stage, idx);
		if ((rc = add_elementwise(b, MODEL_LAYER_BN, nm)) != 0)
			return rc;
		snprintf(nm, sizeof nm, "%s.%d.relu1", stage, idx);
		if ((rc = add_elementwise(b, MODEL_LAYER_RELU, nm)) != 0)
			return rc;
		snprintf(nm, sizeof nm, "%s.%d.conv2", stage, idx);
		if ((rc = add_conv(b, nm, width, 3, stride, 1, false)) != 0)
			return rc;
		snprintf(nm, sizeof nm, "%s.%d.bn2", stage, idx);
		if ((rc = add_elementwise(b, MODEL_LAYER_BN, nm)) != 0)
			return rc;
		snprintf(nm, sizeof nm, "%s.%d.relu2", stage, idx);
		if ((rc = add_elementwise(b, MODEL_LAYER_RELU, nm)) != 0)
			return rc;
		snprintf(nm, sizeof nm, "%s.%d.conv3", stage, idx);
		if ((rc = add_conv(b, nm, out, 1, 1, 0, false)) != 0)
			return rc;
		snprintf(nm, sizeof nm, "%s.%d.bn3", stage, idx);
		if ((rc = add_elementwise(b, MODEL_LAYER_BN, nm)) != 0)
			return rc;
	} else {
		snprintf(nm, sizeof nm, "%s.%d.conv1", stage, idx);
		if ((rc = add_conv(b, nm, out, 3, stride, 1, false)) != 0)
			return rc;
		snprintf(nm, sizeof nm, "%s.%d.bn1", stage, idx);
		if ((rc = add_elementwise(b, MODEL_LAYER_BN, nm)) != 0)
			return rc;
		snprintf(nm, sizeof nm, "%s.%d.relu1", stage, idx);
		if ((rc = add_elementwise(b, MODEL_LAYER_RELU, nm)) != 0)
			return rc;
		snprintf(nm, sizeof nm, "%s.%d.conv2", stage, idx);
		if ((rc = add_conv(b, nm, out, 3, 1, 1, false)) != 0)
			return rc;
		snprintf(nm, sizeof nm, "%s.%d.bn2", stage, idx);
		if ((rc = add_elementwise(b, MODEL_LAYER_BN, nm)) != 0)
			return rc;
	}
	if (project) {
		/* The shortcut runs on the block's input. */
		int64_t oc = b->c, oh = b->h, ow = b->w;
		b->c = in_c;
		b->h = in_h;
		b->w = in_w;
		snprintf(nm, sizeof nm, "%s.%d.downsample", stage, idx);
		if ((rc = add_conv(b, nm, out, 1, stride, 0, false)) != 0)
			return rc;
		snprintf(nm, sizeof nm, "%s.%d.downsample_bn", stage, idx);
		if ((rc = add_elementwise(b, MODEL_LAYER_BN, nm)) != 0)
			return rc;
		if (b->c != oc || b->h != oh || b->w != ow)
			return pp_err(b->err, b->errlen, PP_EINPUT, "%s: stage \"%s\": shortcut and main path shapes differ",
				      b->origin, stage);
	}
	snprintf(nm, sizeof nm, "%s.%d.add", stage, idx);
	if ((rc = add_elementwise(b, MODEL_LAYER_ADD, nm)) != 0)
		return rc;
	snprintf(nm, sizeof nm, "%s.%d.relu", stage, idx);
	return add_elementwise(b, MODEL_LAYER_RELU, nm);
}

static int
layer_int(cnn_builder *b, const cJSON *o, int i, const char *key, bool required, int64_t def, int64_t min,
	  int64_t *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (v == NULL) {
		if (required)
			return pp_err(b->err, b->errlen, PP_EINPUT, "%s: layers[%d]: missing field \"%s\" (an integer)", b->origin,
				      i, key);
		*out = def;
		return 0;
	}
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble != floor(v->valuedouble) ||
	    v->valuedouble < (double)min || v->valuedouble > (double)(1 << 20))
		return pp_err(b->err, b->errlen, PP_EINPUT, "%s: layers[%d]: \"%s\" must be an integer between %lld and %d",
			      b->origin, i, key, (long long)min, 1 << 20);
	*out = (int64_t)v->valuedouble;
	return 0;
}

static int
layer_bool(cnn_builder *b, const cJSON *o, int i, const char *key, bool def, bool *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (v == NULL || cJSON_IsNull(v)) {
		*out = def;
		return 0;
	}
	if (!cJSON_IsBool(v))
		return pp_err(b->err, b->errlen, PP_EINPUT, "%s: layers[%d]: \"%s\" must be true or false", b->origin, i, key);
	*out = cJSON_IsTrue(v);
	return 0;
}

int
model_cnn_parse(model *m, const cJSON *root, const char *origin, char *err, size_t errlen)
{
	cnn_builder b = {.m = m, .origin = origin, .err = err, .errlen = errlen};
	const cJSON *in = cJSON_GetObjectItemCaseSensitive(root, "input");
	if (!cJSON_IsObject(in))
		return pp_err(err, errlen, PP_EINPUT,
			      "%s: a CNN needs \"input\": {\"channels\": C, \"height\": H, \"width\": W}", origin);
	int rc;
	if ((rc = layer_int(&b, in, 0, "channels", true, 0, 1, &b.c)) != 0 ||
	    (rc = layer_int(&b, in, 0, "height", true, 0, 1, &b.h)) != 0 ||
	    (rc = layer_int(&b, in, 0, "width", true, 0, 1, &b.w)) != 0)
		return pp_err(err, errlen, PP_EINPUT, "%s: \"input\" needs positive integer channels, height and width",
			      origin);
	m->in_c = b.c;
	m->in_h = b.h;
	m->in_w = b.w;
	const cJSON *layers = cJSON_GetObjectItemCaseSensitive(root, "layers");
	if (!cJSON_IsArray(layers) || cJSON_GetArraySize(layers) == 0)
		return pp_err(err, errlen, PP_EINPUT, "%s: \"layers\" must be a non-empty array", origin);
	int i = 0;
	int stage = 0;
	const cJSON *o;
	cJSON_ArrayForEach(o, layers)
	{
		if (!cJSON_IsObject(o))
			return pp_err(err, errlen, PP_EINPUT, "%s: layers[%d] must be an object", origin, i);
		const cJSON *ty = cJSON_GetObjectItemCaseSensitive(o, "type");
		const cJSON *nmj = cJSON_GetObjectItemCaseSensitive(o, "name");
		if (!cJSON_IsString(ty))
			return pp_err(err, errlen, PP_EINPUT, "%s: layers[%d]: missing \"type\" (conv, fc, bn, relu, maxpool, "
				      "avgpool, dropout, bottleneck, basic)", origin, i);
		const char *t = ty->valuestring;
		char nm[40];
		if (cJSON_IsString(nmj))
			pp_printable(nmj->valuestring, nm, sizeof nm);
		else
			snprintf(nm, sizeof nm, "%s%d", t, i);
		int64_t out, k, s, pad, blocks, width;
		bool bias, bn, relu;
		if (!strcmp(t, "conv")) {
			if ((rc = layer_int(&b, o, i, "out", true, 0, 1, &out)) != 0 ||
			    (rc = layer_int(&b, o, i, "kernel", true, 0, 1, &k)) != 0 ||
			    (rc = layer_int(&b, o, i, "stride", false, 1, 1, &s)) != 0 ||
			    (rc = layer_int(&b, o, i, "pad", false, k / 2, 0, &pad)) != 0 ||
			    (rc = layer_bool(&b, o, i, "bias", false, &bias)) != 0 ||
			    (rc = layer_bool(&b, o, i, "bn", false, &bn)) != 0 ||
			    (rc = layer_bool(&b, o, i, "relu", false, &relu)) != 0)
				return rc;
			if ((rc = add_conv(&b, nm, out, k, s, pad, bias)) != 0)
				return rc;
			char sub[64];
			if (bn) {
				snprintf(sub, sizeof sub, "%s.bn", nm);
				if ((rc = add_elementwise(&b, MODEL_LAYER_BN, sub)) != 0)
					return rc;
			}
			if (relu) {
				snprintf(sub, sizeof sub, "%s.relu", nm);
				if ((rc = add_elementwise(&b, MODEL_LAYER_RELU, sub)) != 0)
					return rc;
			}
		} else if (!strcmp(t, "fc")) {
			if ((rc = layer_int(&b, o, i, "out", true, 0, 1, &out)) != 0 ||
			    (rc = layer_bool(&b, o, i, "bias", true, &bias)) != 0 ||
			    (rc = layer_bool(&b, o, i, "relu", false, &relu)) != 0)
				return rc;
			if ((rc = add_fc(&b, nm, out, bias)) != 0)
				return rc;
			if (relu) {
				char sub[64];
				snprintf(sub, sizeof sub, "%s.relu", nm);
				if ((rc = add_elementwise(&b, MODEL_LAYER_RELU, sub)) != 0)
					return rc;
			}
		} else if (!strcmp(t, "bn") || !strcmp(t, "relu") || !strcmp(t, "dropout")) {
			model_layer_kind kk = !strcmp(t, "bn") ? MODEL_LAYER_BN : !strcmp(t, "relu") ? MODEL_LAYER_RELU
												    : MODEL_LAYER_DROPOUT;
			if ((rc = add_elementwise(&b, kk, nm)) != 0)
				return rc;
		} else if (!strcmp(t, "maxpool") || !strcmp(t, "avgpool")) {
			if ((rc = layer_int(&b, o, i, "kernel", false, 0, 1, &k)) != 0 ||
			    (rc = layer_int(&b, o, i, "stride", false, k ? k : 1, 1, &s)) != 0 ||
			    (rc = layer_int(&b, o, i, "pad", false, 0, 0, &pad)) != 0)
				return rc;
			if ((rc = add_pool(&b, t[0] == 'm' ? MODEL_LAYER_MAXPOOL : MODEL_LAYER_AVGPOOL, nm, k, s, pad)) != 0)
				return rc;
		} else if (!strcmp(t, "bottleneck") || !strcmp(t, "basic")) {
			bool bott = t[1] == 'o';
			if ((rc = layer_int(&b, o, i, "blocks", true, 0, 1, &blocks)) != 0 ||
			    (rc = layer_int(&b, o, i, "out", true, 0, 1, &out)) != 0 ||
			    (rc = layer_int(&b, o, i, "width", bott, out, 1, &width)) != 0 ||
			    (rc = layer_int(&b, o, i, "stride", false, 1, 1, &s)) != 0)
				return rc;
			char st[32];
			if (cJSON_IsString(nmj))
				pp_printable(nmj->valuestring, st, sizeof st);
			else
				snprintf(st, sizeof st, "layer%d", ++stage);
			for (int64_t j = 0; j < blocks; j++)
				if ((rc = add_block(&b, st, (int)j, bott, width, out, j == 0 ? s : 1)) != 0)
					return rc;
		} else {
			return pp_err(err, errlen, PP_EINPUT, "%s: layers[%d]: unknown type \"%s\" (expected conv, fc, bn, relu, "
				      "maxpool, avgpool, dropout, bottleneck, basic)", origin, i, t);
		}
		i++;
	}
	/* Pools, activations and dropout alone have nothing to train (found by fuzzing: a model of
	 * 0 parameters, which the simulator would train in microseconds). */
	double params = 0.0;
	for (size_t k = 0; k < m->nlayers; k++)
		params += (double)m->layers[k].params;
	if (!(params > 0))
		return pp_err(err, errlen, PP_EINPUT, "%s: the layers have no trainable parameters (add a conv or fc layer)",
			      origin);
	return 0;
}
