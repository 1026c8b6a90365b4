/*
 * infer.c -- batch inference of a CNN, on one GPU or split into pipeline stages.
 *
 * A replica runs a batch of images through the network in micro-batches.  Batch norm and ReLU
 * are folded into the convolution before them, as inference engines (TensorRT, torch.compile)
 * do, so they cost nothing of their own; residual adds and pools read and write memory.  With
 * pp > 1 the layer list is cut into pp contiguous stages whose largest forward time is as small
 * as it can be (a bisection on that time with a greedy cut, exact for contiguous partitions),
 * only between residual blocks, so that one tensor crosses each cut; each stage
 * sends its last activation of every micro-batch to the next over the node's GPU-to-GPU path
 * (NVLink or PCIe, the cost model's send/recv), on its own stream, so transfers overlap the
 * next micro-batch's compute.  The discrete-event engine runs the micro-batches through the
 * stages (GPipe's forward half: no backward, no bubble at the end beyond the fill and drain).
 *
 * Memory per stage: its weights, and the live activations at the stage's worst layer for one
 * micro-batch (the layer's input and output; inside a residual block also the block's input,
 * held for the shortcut until the add; batch norm and ReLU run in place), plus the receive
 * buffers of two micro-batches (double buffering) and a fixed reserve for the CUDA context
 * and the convolution workspace.  A stage that exceeds its GPU's memory does not fit.
 */
#include "config.h"
#include "sim/engine.h"
#include "sim/train_int.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INFER_RESERVE_BYTES (0.75 * 1073741824.0) /* CUDA context, cuDNN handles and workspace */

struct sim_infer_result {
	sim_infer_cfg cfg;
	char model[64], system[48], gpu[48];
	sim_infer_metrics m;
	sim_infer_stage *stages;
	/* for the trace */
	sim_engine *e;
	int32_t *ops;
	size_t nops;
};

void
sim_infer_cfg_init(sim_infer_cfg *c)
{
	memset(c, 0, sizeof *c);
	c->pp = 1;
	c->replicas = 1;
	c->batch = 256;
	c->dtype = HW_FP16;
}

static bool
ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

/* Live activation elements per sample at each layer (see the top of the file), and where a
 * stage may begin (not inside a residual block).  In a block (torchvision's layout: conv1 ..
 * bn3, then the optional downsample and its bn, then an in-place add) the block's input is
 * held for the shortcut; once a downsample has run, its output is held instead, and while it
 * runs the branch's output waits for the add. */
static void
live_elems(const model_layer *ly, size_t n, double *live, bool *cut)
{
	bool in_block = false;
	double skip = 0.0, branch = 0.0;
	for (size_t i = 0; i < n; i++) {
		const model_layer *l = &ly[i];
		bool inplace = l->kind == MODEL_LAYER_BN || l->kind == MODEL_LAYER_RELU || l->kind == MODEL_LAYER_DROPOUT;
		double own = inplace ? l->in_elems : l->in_elems + l->out_elems;
		cut[i] = !in_block;
		if (ends_with(l->name, ".conv1")) {
			in_block = true;
			skip = l->in_elems;
			live[i] = own;
		} else if (in_block && ends_with(l->name, ".downsample")) {
			live[i] = own + branch;
			skip = l->out_elems;
		} else if (in_block && ends_with(l->name, ".downsample_bn")) {
			live[i] = own + branch;
		} else if (in_block && l->kind == MODEL_LAYER_ADD) {
			live[i] = l->in_elems + skip; /* out += identity, in place */
			in_block = false;
		} else {
			live[i] = own + (in_block ? skip : 0.0);
			if (in_block)
				branch = l->out_elems;
		}
	}
}

/* Cuts t[0..n) into at most `parts` contiguous pieces with the smallest largest sum; first[s]
 * is the index where piece s begins (pieces after the last used one are empty: first = n). */
static void
partition(const double *t, size_t n, int parts, size_t *first)
{
	double lo = 0.0, hi = 0.0;
	for (size_t i = 0; i < n; i++) {
		hi += t[i];
		if (t[i] > lo)
			lo = t[i];
	}
	for (int it = 0; it < 100 && hi - lo > 1e-12 * hi; it++) {
		double mid = 0.5 * (lo + hi), acc = 0.0;
		int used = 1;
		for (size_t i = 0; i < n; i++) {
			if (acc + t[i] > mid) {
				used++;
				acc = 0.0;
			}
			acc += t[i];
		}
		if (used <= parts)
			hi = mid;
		else
			lo = mid;
	}
	/* the cut at the bound found */
	double acc = 0.0;
	int s = 0;
	first[0] = 0;
	for (size_t i = 0; i < n; i++) {
		if (acc + t[i] > hi * (1.0 + 1e-12) && s + 1 < parts) {
			first[++s] = i;
			acc = 0.0;
		}
		acc += t[i];
	}
	for (int k = s + 1; k < parts; k++)
		first[k] = n;
}

enum { TAG_INFER_FWD = 1, TAG_INFER_SEND = 2 };

int
sim_infer(const model *m, const hw_cost *cost, const sim_infer_cfg *cin, sim_infer_result **out, char *err,
	  size_t errlen)
{
	*out = NULL;
	sim_infer_cfg cfg = *cin;
	sim_infer_cfg *c = &cfg;
	const hw_system *sys = hw_cost_system(cost);
	const model_layer *ly;
	size_t n = model_layers(m, &ly);
	if (model_transformer(m) != NULL || n == 0)
		return pp_err(err, errlen, PP_EUSAGE,
			      "%s is a language model: 'simulate infer' runs CNNs; use 'simulate serve' for LLM inference",
			      model_name(m));
	if (c->pp < 1 || c->pp > sys->gpus_per_node || (size_t)c->pp > n)
		return pp_err(err, errlen, PP_EUSAGE, "--pp must be from 1 to the GPUs of one %s node (%d), got %d", sys->name,
			      sys->gpus_per_node, c->pp);
	if (c->replicas < 1 || c->replicas > 1000000)
		return pp_err(err, errlen, PP_EUSAGE, "--replicas must be from 1 to 1000000, got %d", c->replicas);
	if (c->batch < 1 || c->batch > 100000000)
		return pp_err(err, errlen, PP_EUSAGE, "--batch must be from 1 to 100000000 images, got %lld", (long long)c->batch);
	if (c->micro_batch == 0)
		c->micro_batch = c->pp == 1 ? c->batch : (c->batch + 4 * c->pp - 1) / (4 * c->pp);
	if (c->micro_batch < 1 || c->micro_batch > c->batch || c->batch % c->micro_batch != 0)
		return pp_err(err, errlen, PP_EUSAGE, "--micro-batch (%lld) must divide --batch (%lld)",
			      (long long)c->micro_batch, (long long)c->batch);
	if (c->dtype != HW_FP32 && c->dtype != HW_TF32 && c->dtype != HW_FP16 && c->dtype != HW_BF16 && c->dtype != HW_INT8)
		return pp_err(err, errlen, PP_EUSAGE, "--dtype must be fp32, tf32, fp16, bf16 or int8 for CNN inference");
	if (!(sys->gpu.peak_tflops[c->dtype] > 0))
		return pp_err(err, errlen, PP_EUSAGE, "%s has no %s tensor rate: choose another --dtype", sys->gpu.name,
			      hw_dtype_name(c->dtype));
	double e = hw_dtype_bytes(c->dtype);
	double mb = (double)c->micro_batch;
	int64_t nmicro = c->batch / c->micro_batch;
	if (nmicro > 1000000)
		return pp_err(err, errlen, PP_EUSAGE, "%lld micro-batches are too many: raise --micro-batch", (long long)nmicro);

	sim_infer_result *r = calloc(1, sizeof *r);
	double *t = malloc(n * sizeof *t), *live = malloc(n * sizeof *live);
	size_t *first = malloc(((size_t)c->pp + 1) * sizeof *first);
	hw_prov *prov = malloc(n * sizeof *prov);
	bool *cut = malloc(n * sizeof *cut);
	double *at = malloc(n * sizeof *at);
	size_t *atom_first = malloc(n * sizeof *atom_first);
	int rc = 0;
	if (r == NULL || t == NULL || live == NULL || first == NULL || prov == NULL || cut == NULL || at == NULL ||
	    atom_first == NULL ||
	    (r->stages = calloc((size_t)c->pp, sizeof *r->stages)) == NULL) {
		rc = pp_err(err, errlen, PP_ENOMEM, "out of memory");
		goto fail;
	}
	r->cfg = *c;
	pp_strlcpy(r->model, model_name(m), sizeof r->model);
	pp_strlcpy(r->system, sys->name, sizeof r->system);
	pp_strlcpy(r->gpu, sys->gpu.name, sizeof r->gpu);
	for (size_t i = 0; i < n; i++) {
		seg f, b;
		bool folded = ly[i].kind == MODEL_LAYER_BN || ly[i].kind == MODEL_LAYER_RELU;
		sim_cnn_layer_cost(cost, c->dtype, e, &ly[i], mb, &f, &b);
		t[i] = folded ? 0.0 : f.t;
		prov[i] = seg_prov(&f);
	}
	live_elems(ly, n, live, cut);
	/* partition the blocks (runs of layers between allowed cuts), then map back to layers */
	size_t na = 0;
	for (size_t i = 0; i < n; i++) {
		if (cut[i] || i == 0) {
			atom_first[na] = i;
			at[na++] = 0.0;
		}
		at[na - 1] += t[i];
	}
	int parts = (size_t)c->pp < na ? c->pp : (int)na;
	partition(at, na, parts, first);
	for (int s = 0; s < parts; s++)
		first[s] = first[s] < na ? atom_first[first[s]] : n;
	for (int s = parts; s <= c->pp; s++)
		first[s] = n;

	/* the stages */
	sim_infer_metrics *mt = &r->m;
	mt->fits = true;
	for (int s = 0; s < c->pp; s++) {
		sim_infer_stage *st = &r->stages[s];
		st->first_layer = (int64_t)first[s];
		st->last_layer = (int64_t)first[s + 1] - 1;
		double peak_live = 0.0;
		seg prov_time = {0}; /* the stage's time by provenance */
		for (size_t i = first[s]; i < first[s + 1]; i++) {
			st->time_per_micro_s += t[i];
			st->flops_per_micro += ly[i].fwd_flops * mb;
			st->weights_bytes += (double)ly[i].params * e;
			if (live[i] > peak_live)
				peak_live = live[i];
			seg_add(&prov_time, t[i], 0.0, prov[i]);
		}
		st->prov = seg_prov(&prov_time);
		st->activation_bytes = peak_live * mb * e;
		if (s > 0 && first[s] < n)
			st->recv_bytes = 2.0 * ly[first[s]].in_elems * mb * e;
		if (s + 1 < c->pp && first[s + 1] > first[s]) {
			double bytes = ly[first[s + 1] - 1].out_elems * mb * e;
			/* both ends in one node: per_node 2 */
			st->send_per_micro_s = hw_cost_coll_time(cost, HW_SEND_RECV, 2, 2, bytes, NULL);
			st->send_bytes_per_micro = bytes;
		}
		st->reserve_bytes = INFER_RESERVE_BYTES;
		st->peak_bytes = st->weights_bytes + st->activation_bytes + st->recv_bytes + st->reserve_bytes;
		st->capacity_bytes = sys->gpu.memory_bytes;
		st->fits = st->peak_bytes <= st->capacity_bytes;
		mt->fits &= st->fits;
	}

	/* the pipeline on the engine: per stage a compute stream and a send stream */
	sim_engine *en = sim_engine_new(c->pp, true);
	r->e = en;
	r->nops = (size_t)nmicro * (size_t)c->pp * 2;
	r->ops = malloc(r->nops * sizeof *r->ops);
	int *cs = malloc((size_t)c->pp * sizeof *cs), *ss = malloc((size_t)c->pp * sizeof *ss);
	if (en == NULL || r->ops == NULL || cs == NULL || ss == NULL) {
		free(cs), free(ss);
		rc = pp_err(err, errlen, PP_ENOMEM, "out of memory");
		goto fail;
	}
	bool ok = true;
	for (int s = 0; s < c->pp; s++) {
		cs[s] = sim_stream_new(en, s, SIM_STREAM_COMPUTE);
		ss[s] = sim_stream_new(en, s, SIM_STREAM_COMM);
		ok &= cs[s] >= 0 && ss[s] >= 0;
	}
	size_t k = 0;
	for (int64_t j = 0; j < nmicro && ok; j++) {
		int32_t prev = -1;
		for (int s = 0; s < c->pp; s++) {
			const sim_infer_stage *st = &r->stages[s];
			int32_t f = sim_op_compute(en, cs[s], sim_ps(st->time_per_micro_s), (uint32_t)(TAG_INFER_FWD | (s << 2)),
						   st->prov);
			int32_t x = s + 1 < c->pp ? sim_op_compute(en, ss[s], sim_ps(st->send_per_micro_s),
								   (uint32_t)(TAG_INFER_SEND | (s << 2)), HW_PROV_DATASHEET)
						  : sim_op_mark(en, ss[s], (uint32_t)(TAG_INFER_SEND | (s << 2)));
			ok &= f >= 0 && x >= 0;
			if (!ok)
				break;
			if (prev >= 0)
				ok &= sim_dep(en, prev, f) == 0;
			ok &= sim_dep(en, f, x) == 0;
			prev = x;
			r->ops[k++] = f;
			r->ops[k++] = x;
		}
	}
	free(cs), free(ss);
	if (!ok) {
		rc = pp_err(err, errlen, PP_ENOMEM, "out of memory");
		goto fail;
	}
	if ((rc = sim_run(en, err, errlen)) != 0)
		goto fail;

	double makespan = (double)sim_engine_now(en) / 1e12;
	mt->batch_latency_s = makespan;
	mt->first_micro_latency_s = (double)sim_op_end(en, r->ops[2 * (size_t)c->pp - 2]) / 1e12;
	mt->images_per_s = makespan > 0 ? (double)c->batch * (double)c->replicas / makespan : 0.0;
	mt->gpus = c->pp * c->replicas;
	mt->images_per_s_per_gpu = mt->images_per_s / (double)mt->gpus;
	double busy = 0.0, flops = 0.0;
	for (int s = 0; s < c->pp; s++) {
		sim_rank_stats rs;
		sim_engine_rank_stats(en, s, &rs);
		busy += (double)rs.busy_ps / 1e12;
		flops += r->stages[s].flops_per_micro * (double)nmicro;
	}
	mt->bubble_fraction = makespan > 0 ? 1.0 - busy / ((double)c->pp * makespan) : 0.0;
	mt->tflops_per_gpu = makespan > 0 ? flops / makespan / (double)c->pp / 1e12 : 0.0;
	mt->micro_batches = nmicro;
	free(t), free(live), free(first), free(prov), free(cut), free(at), free(atom_first);
	*out = r;
	return 0;
fail:
	free(t), free(live), free(first), free(prov), free(cut), free(at), free(atom_first);
	sim_infer_result_free(r);
	return rc;
}

const sim_infer_metrics *
sim_infer_get_metrics(const sim_infer_result *r)
{
	return &r->m;
}

const sim_infer_stage *
sim_infer_get_stage(const sim_infer_result *r, int s)
{
	return s >= 0 && s < r->cfg.pp ? &r->stages[s] : NULL;
}

void
sim_infer_result_free(sim_infer_result *r)
{
	if (r == NULL)
		return;
	sim_engine_free(r->e);
	free(r->ops);
	free(r->stages);
	free(r);
}

cJSON *
sim_infer_json(const sim_infer_result *r, const model *m)
{
	const sim_infer_metrics *mt = &r->m;
	const model_layer *ly;
	model_layers(m, &ly);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "kind", "infer");
	cJSON_AddStringToObject(o, "model", r->model);
	cJSON_AddStringToObject(o, "system", r->system);
	cJSON *cf = cJSON_AddObjectToObject(o, "config");
	cJSON_AddNumberToObject(cf, "pp", r->cfg.pp);
	cJSON_AddNumberToObject(cf, "replicas", r->cfg.replicas);
	cJSON_AddNumberToObject(cf, "gpus", mt->gpus);
	cJSON_AddNumberToObject(cf, "batch", (double)r->cfg.batch);
	cJSON_AddNumberToObject(cf, "micro_batch", (double)r->cfg.micro_batch);
	cJSON_AddStringToObject(cf, "dtype", hw_dtype_name(r->cfg.dtype));
	cJSON_AddNumberToObject(o, "batch_latency_s", mt->batch_latency_s);
	cJSON_AddNumberToObject(o, "first_micro_batch_latency_s", mt->first_micro_latency_s);
	cJSON_AddNumberToObject(o, "images_per_s", mt->images_per_s);
	cJSON_AddNumberToObject(o, "images_per_s_per_gpu", mt->images_per_s_per_gpu);
	cJSON_AddNumberToObject(o, "tflops_per_gpu", mt->tflops_per_gpu);
	cJSON_AddNumberToObject(o, "bubble_fraction", mt->bubble_fraction);
	cJSON_AddNumberToObject(o, "micro_batches", (double)mt->micro_batches);
	cJSON_AddBoolToObject(o, "fits", mt->fits);
	cJSON *arr = cJSON_AddArrayToObject(o, "stages");
	for (int s = 0; s < r->cfg.pp; s++) {
		const sim_infer_stage *st = &r->stages[s];
		cJSON *x = cJSON_CreateObject();
		cJSON_AddNumberToObject(x, "stage", s);
		bool empty = st->last_layer < st->first_layer;
		cJSON_AddStringToObject(x, "first_layer", empty ? "" : ly[st->first_layer].name);
		cJSON_AddStringToObject(x, "last_layer", empty ? "" : ly[st->last_layer].name);
		cJSON_AddNumberToObject(x, "layers", (double)(st->last_layer - st->first_layer + 1));
		cJSON_AddNumberToObject(x, "time_per_micro_batch_s", st->time_per_micro_s);
		cJSON_AddNumberToObject(x, "send_per_micro_batch_s", st->send_per_micro_s);
		cJSON_AddNumberToObject(x, "send_bytes_per_micro_batch", st->send_bytes_per_micro);
		cJSON_AddStringToObject(x, "provenance", hw_prov_name(st->prov));
		cJSON *mem = cJSON_AddObjectToObject(x, "memory");
		cJSON_AddNumberToObject(mem, "weights_bytes", st->weights_bytes);
		cJSON_AddNumberToObject(mem, "activation_bytes", st->activation_bytes);
		cJSON_AddNumberToObject(mem, "receive_buffer_bytes", st->recv_bytes);
		cJSON_AddNumberToObject(mem, "reserve_bytes", st->reserve_bytes);
		cJSON_AddNumberToObject(mem, "peak_bytes", st->peak_bytes);
		cJSON_AddNumberToObject(mem, "capacity_bytes", st->capacity_bytes);
		cJSON_AddBoolToObject(mem, "fits", st->fits);
		cJSON_AddItemToArray(arr, x);
	}
	return o;
}

int
sim_infer_trace(const sim_infer_result *r, const char *path, char *err, size_t errlen)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "schema", SIM_TRACE_SCHEMA);
	cJSON *ev = cJSON_AddArrayToObject(doc, "traceEvents");
	for (int s = 0; s < r->cfg.pp; s++) {
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "name", "process_name");
		cJSON_AddStringToObject(x, "ph", "M");
		cJSON_AddNumberToObject(x, "pid", s);
		cJSON *a = cJSON_AddObjectToObject(x, "args");
		char name[32];
		snprintf(name, sizeof name, "stage %d", s);
		cJSON_AddStringToObject(a, "name", name);
		cJSON_AddItemToArray(ev, x);
	}
	for (size_t i = 0; i < r->nops; i++) {
		int32_t op = r->ops[i];
		uint32_t tag = sim_op_tag(r->e, op);
		int64_t t0 = sim_op_start(r->e, op), t1 = sim_op_end(r->e, op);
		if (t1 <= t0)
			continue;
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "name", (tag & 3) == TAG_INFER_FWD ? "forward" : "send");
		cJSON_AddStringToObject(x, "ph", "X");
		cJSON_AddNumberToObject(x, "pid", (double)(tag >> 2));
		cJSON_AddNumberToObject(x, "tid", (tag & 3) == TAG_INFER_FWD ? 0 : 1);
		cJSON_AddNumberToObject(x, "ts", (double)t0 / 1e6);
		cJSON_AddNumberToObject(x, "dur", (double)(t1 - t0) / 1e6);
		cJSON_AddItemToArray(ev, x);
	}
	char *text = cJSON_PrintUnformatted(doc);
	cJSON_Delete(doc);
	if (text == NULL)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	int rc = pp_write_file_atomic(path, text, strlen(text), err, errlen);
	free(text);
	return rc;
}
