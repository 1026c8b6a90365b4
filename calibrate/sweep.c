/*
 * sweep.c -- what 'paraplan calibrate' measures: GEMM shapes, collective sizes and group
 * sizes, HBM buffer sizes, and nccl-tests' buffer layout for a size.  Pure functions, so the
 * sweep is tested (and documented in docs/calibration.md) on machines without a GPU.
 */
#include "config.h"
#include "calibrate/cal.h"
#include "calibrate/cal_int.h"
#include "common/pp.h"

#include <stdlib.h>
#include <string.h>

/* Hidden sizes of common models (GPT-2 XL / 1B-class 2048, Llama 7-8B 4096, Llama 13B 5120,
 * Llama 70B 8192, GPT-3 175B 12288, Llama 405B 16384), the tensor-parallel degrees of one
 * node, and tokens per micro-batch (micro-batch x sequence length). */
static const int64_t hidden[] = {2048, 4096, 5120, 8192, 12288, 16384};
static const int64_t tp[] = {1, 2, 4, 8};
static const int64_t tokens[] = {2048, 8192, 16384};
static const int64_t grid[] = {128, 512, 2048, 8192};

static int
cmp_shape(const void *a, const void *b)
{
	const cal_gemm_shape *x = a, *y = b;
	if (x->m != y->m)
		return x->m < y->m ? -1 : 1;
	if (x->n != y->n)
		return x->n < y->n ? -1 : 1;
	if (x->k != y->k)
		return x->k < y->k ? -1 : 1;
	return 0;
}

static int
add(cal_gemm_shape **v, size_t *n, size_t *cap, int64_t m, int64_t nn, int64_t k, unsigned kind)
{
	if (PP_GROW(*v, *cap, *n + 1) != 0)
		return PP_ENOMEM;
	(*v)[(*n)++] = (cal_gemm_shape){m, nn, k, kind};
	return 0;
}

/* A linear layer of N output and K input features at every token count: forward Y = X W^T,
 * dgrad dX = dY W, wgrad dW = dY^T X. */
static int
linear(cal_gemm_shape **v, size_t *n, size_t *cap, int64_t N, int64_t K, unsigned kind)
{
	int rc = 0;
	for (size_t c = 0; c < sizeof tokens / sizeof tokens[0] && rc == 0; c++) {
		int64_t T = tokens[c];
		rc = add(v, n, cap, T, N, K, kind);
		if (rc == 0)
			rc = add(v, n, cap, T, K, N, kind);
		if (rc == 0)
			rc = add(v, n, cap, N, K, T, kind);
	}
	return rc;
}

/* A dimension as the sweep launches it: a multiple of 16 (FP8 cuBLASLt needs them), at least 16. */
static int64_t
pad16(int64_t x)
{
	return x < 16 ? 16 : (x + 15) / 16 * 16;
}

/* A model's linear layers at TP t, sharded as Megatron shards them. */
static int
model_linears(cal_gemm_shape **v, size_t *n, size_t *cap, const model_tf *m, int64_t t)
{
	int64_t h = m->hidden, gate = m->mlp == MODEL_MLP_SWIGLU ? 2 : 1;
	int rc = 0;
	if (m->kv_lora_rank == 0 && m->heads > 0 && m->head_dim > 0) {
		int64_t q = m->heads * m->head_dim, kv = m->kv_heads > 0 ? m->kv_heads : m->heads;
		rc = linear(v, n, cap, pad16((q + 2 * kv * m->head_dim) / t), pad16(h), CAL_SHAPE_MODEL);
		if (rc == 0)
			rc = linear(v, n, cap, pad16(h), pad16(q / t), CAL_SHAPE_MODEL);
	}
	const int64_t widths[2] = {m->ffn, m->experts > 0 ? m->expert_ffn : 0};
	for (int i = 0; i < 2 && rc == 0; i++) {
		if (widths[i] <= 0)
			continue;
		rc = linear(v, n, cap, pad16(gate * widths[i] / t), pad16(h), CAL_SHAPE_MODEL);
		if (rc == 0)
			rc = linear(v, n, cap, pad16(h), pad16(widths[i] / t), CAL_SHAPE_MODEL);
	}
	return rc;
}

int
cal_gemm_shapes(const model_tf *const *models, size_t nmodels, cal_gemm_shape **out, size_t *nout, char *err,
		size_t errlen)
{
	cal_gemm_shape *v = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	for (size_t a = 0; a < sizeof hidden / sizeof hidden[0] && rc == 0; a++) {
		for (size_t b = 0; b < sizeof tp / sizeof tp[0] && rc == 0; b++) {
			int64_t h = hidden[a], t = tp[b];
			/* Megatron's column- and row-parallel linears: (output features, input features). */
			const int64_t lin[4][2] = {{3 * h / t, h}, {h, h / t}, {4 * h / t, h}, {h, 4 * h / t}};
			for (int l = 0; l < 4 && rc == 0; l++)
				rc = linear(&v, &n, &cap, lin[l][0], lin[l][1], CAL_SHAPE_TRANSFORMER);
		}
	}
	for (size_t i = 0; i < nmodels && rc == 0; i++)
		for (size_t b = 0; b < sizeof tp / sizeof tp[0] && rc == 0; b++)
			rc = model_linears(&v, &n, &cap, models[i], tp[b]);
	size_t ng = sizeof grid / sizeof grid[0];
	for (size_t i = 0; i < ng && rc == 0; i++)
		for (size_t j = 0; j < ng && rc == 0; j++)
			for (size_t k = 0; k < ng && rc == 0; k++)
				rc = add(&v, &n, &cap, grid[i], grid[j], grid[k], CAL_SHAPE_GRID);
	if (rc == 0)
		rc = add(&v, &n, &cap, 64, 64, 64, CAL_SHAPE_GRID);
	if (rc != 0) {
		free(v);
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	}
	qsort(v, n, sizeof *v, cmp_shape);
	size_t w = 0;
	for (size_t i = 0; i < n; i++) {
		if (w > 0 && cmp_shape(&v[w - 1], &v[i]) == 0)
			v[w - 1].kinds |= v[i].kinds;
		else
			v[w++] = v[i];
	}
	*out = v;
	*nout = w;
	return 0;
}

#define MAX_COLL_BYTES ((int64_t)4 << 30)

size_t
cal_coll_sizes(int64_t max_bytes, int64_t *out, size_t cap)
{
	if (max_bytes <= 0 || max_bytes > MAX_COLL_BYTES)
		max_bytes = MAX_COLL_BYTES;
	size_t n = 0;
	for (int64_t s = 1024; s <= max_bytes && n < cap; s *= 2)
		out[n++] = s;
	return n;
}

size_t
cal_group_sizes(int gpus, int *out, size_t cap)
{
	size_t n = 0;
	for (int g = 2; g < gpus && n < cap; g *= 2)
		out[n++] = g;
	if (gpus >= 2 && n < cap)
		out[n++] = gpus;
	return n;
}

size_t
cal_membw_sizes(double l2_bytes, int64_t max_bytes, int64_t *out, size_t cap)
{
	double lo = 4.0 * l2_bytes;
	if (lo < 64.0 * 1048576.0)
		lo = 64.0 * 1048576.0;
	int64_t s = 1;
	while ((double)s < lo)
		s *= 2;
	size_t n = 0;
	for (; s <= max_bytes && n < cap; s *= 2)
		out[n++] = s;
	return n;
}

/* nccl-tests' *GetCollByteCount: all-gather's size is the gathered buffer (count per rank x
 * ranks), reduce-scatter's the full input, all-to-all's the whole per-rank buffer (a chunk per
 * peer); the counts round down so every rank gets whole elements. */
int
cal_coll_layout_get(hw_coll op, int64_t size, int ranks, int elsize, cal_coll_layout *out)
{
	memset(out, 0, sizeof *out);
	if (size <= 0 || ranks <= 0 || elsize <= 0)
		return PP_ERANGE;
	int64_t count = size / elsize, n = ranks;
	switch (op) {
	case HW_ALL_GATHER:
		out->chunk = count / n;
		out->send_count = out->chunk;
		out->recv_count = out->chunk * n;
		out->bytes = out->recv_count * elsize;
		break;
	case HW_REDUCE_SCATTER:
		out->chunk = count / n;
		out->send_count = out->chunk * n;
		out->recv_count = out->chunk;
		out->bytes = out->send_count * elsize;
		break;
	case HW_ALL_TO_ALL:
		out->chunk = count / n;
		out->send_count = out->recv_count = out->chunk * n;
		out->bytes = out->send_count * elsize;
		break;
	default: /* all-reduce, broadcast, reduce, send/recv: one buffer of count elements */
		out->chunk = count;
		out->send_count = out->recv_count = count;
		out->bytes = count * elsize;
		break;
	}
	return out->chunk > 0 ? 0 : PP_ERANGE;
}

/* ---- random non-zero buffer contents ------------------------------------------------------- */

static uint64_t
xorshift(uint64_t *s)
{
	uint64_t v = *s;
	v ^= v << 13;
	v ^= v >> 7;
	v ^= v << 17;
	return *s = v;
}

void
cal_random_fill(void *buf, size_t bytes, int elsz, bool bf16, uint64_t seed)
{
	unsigned char *h = buf;
	uint64_t s = seed ? seed : 0x9E3779B97F4A7C15ull;
	for (size_t i = 0; i < bytes / (size_t)elsz; i++) {
		uint64_t r = xorshift(&s);
		uint32_t sign = (uint32_t)(r & 1), e1 = (uint32_t)((r >> 1) & 1);
		if (elsz == 4) { /* exponent 126 or 127, 23 random mantissa bits */
			uint32_t v = sign << 31 | (126u + e1) << 23 | ((uint32_t)(r >> 8) & 0x7FFFFF);
			memcpy(h + 4 * i, &v, 4);
		} else if (elsz == 2 && !bf16) { /* fp16: exponent 14 or 15 */
			uint16_t v = (uint16_t)(sign << 15 | (14u + e1) << 10 | ((uint32_t)(r >> 8) & 0x3FF));
			memcpy(h + 2 * i, &v, 2);
		} else if (elsz == 2) { /* bf16: exponent 126 or 127 */
			uint16_t v = (uint16_t)(sign << 15 | (126u + e1) << 7 | ((uint32_t)(r >> 8) & 0x7F));
			memcpy(h + 2 * i, &v, 2);
		} else { /* fp8 e4m3: exponent 6 or 7 (bias 7), never the NaN pattern */
			h[i] = (unsigned char)(sign << 7 | (6u + e1) << 3 | ((uint32_t)(r >> 8) & 0x7));
		}
	}
}
