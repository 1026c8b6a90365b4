/*
 * result.c -- a training simulation's result as JSON, and its Chrome/Perfetto trace.
 */
#include "config.h"
#include "sim/train_int.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cJSON *
sim_train_cfg_json(const sim_train_cfg *c, int64_t seq)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "gpus", c->gpus);
	cJSON_AddNumberToObject(o, "tp", c->tp);
	cJSON_AddNumberToObject(o, "pp", c->pp);
	cJSON_AddNumberToObject(o, "dp", c->dp);
	cJSON_AddNumberToObject(o, "cp", c->cp);
	cJSON_AddNumberToObject(o, "ep", c->ep);
	cJSON_AddNumberToObject(o, "etp", sim_train_etp(c));
	cJSON_AddNumberToObject(o, "vpp", c->vpp);
	cJSON_AddNumberToObject(o, "zero", c->zero);
	if (c->dp_shard > 0) { /* hybrid sharding: the shard group's data-parallel ranks, and its replicas */
		cJSON_AddNumberToObject(o, "dp_shard", c->dp_shard);
		cJSON_AddNumberToObject(o, "dp_replicas", sim_dp_replicas(c));
	}
	cJSON_AddBoolToObject(o, "fsdp", c->fsdp);
	if (c->offload_optimizer)
		cJSON_AddBoolToObject(o, "offload_optimizer", true);
	if (c->tp_comm_overlap)
		cJSON_AddBoolToObject(o, "tp_comm_overlap", true);
	if (c->tp_wgrad_overlap && c->tp > 1)
		cJSON_AddBoolToObject(o, "tp_wgrad_overlap", true);
	if (c->ep_deepep && c->ep > 1)
		cJSON_AddStringToObject(o, "ep_dispatch", "deepep");
	cJSON_AddStringToObject(o, "schedule", sim_schedule_name(c->schedule));
	cJSON_AddNumberToObject(o, "micro_batch", (double)c->micro_batch);
	cJSON_AddNumberToObject(o, "global_batch", (double)c->global_batch);
	cJSON_AddNumberToObject(o, "micro_batches", (double)(c->global_batch / ((int64_t)c->dp * c->micro_batch)));
	cJSON_AddNumberToObject(o, "seq", (double)seq);
	cJSON_AddStringToObject(o, "recompute", sim_recompute_name(c->recompute));
	cJSON_AddBoolToObject(o, "sequence_parallel", c->sequence_parallel);
	cJSON_AddStringToObject(o, "dtype", hw_dtype_name(c->dtype));
	if (c->dtype == HW_FP8)
		cJSON_AddStringToObject(o, "fp8_recipe", hw_pdef_choice_name(hw_pdef_get(HW_P_FW_FP8_RECIPE), c->fp8_recipe));
	if (c->zero >= 3) {
		cJSON_AddStringToObject(o, "zero3_gather", hw_pdef_choice_name(hw_pdef_get(HW_P_FW_ZERO3_GATHER), c->zero3_gather));
		cJSON_AddBoolToObject(o, "zero3_regather", c->zero3_regather);
		cJSON_AddBoolToObject(o, "zero3_prefetch", c->zero3_prefetch);
	}
	if (c->zero >= 2)
		cJSON_AddBoolToObject(o, "dp_one_stream", c->dp_one_stream);
	if (c->fw != NULL)
		cJSON_AddStringToObject(o, "framework", hw_profile_name(c->fw));
	cJSON_AddStringToObject(o, "attention", sim_attention_name(c->attention));
	cJSON_AddBoolToObject(o, "overlap_grad_reduce", c->overlap_grad_reduce);
	cJSON_AddNumberToObject(o, "grad_reduce_bytes", sim_grad_bytes(c));
	/* the rest of the configuration, so that the document alone reproduces the step (replay) */
	cJSON_AddBoolToObject(o, "overlap_param_gather", c->overlap_param_gather);
	cJSON_AddNumberToObject(o, "bucket_bytes", c->bucket_bytes);
	cJSON_AddBoolToObject(o, "pp_scatter_gather", c->pp_scatter_gather);
	cJSON_AddNumberToObject(o, "moe_imbalance", c->moe_imbalance);
	cJSON_AddNumberToObject(o, "moe_capacity", c->moe_capacity);
	cJSON_AddNumberToObject(o, "first_stage_layers", c->first_stage_layers);
	cJSON_AddNumberToObject(o, "last_stage_layers", c->last_stage_layers);
	cJSON_AddBoolToObject(o, "full_mode", c->full);
	/* fine-tuning, only when asked for: a pre-training document keeps its keys */
	if (c->lora_rank > 0) {
		char mods[64];
		cJSON_AddNumberToObject(o, "lora_rank", c->lora_rank);
		cJSON_AddStringToObject(o, "lora_modules", sim_lora_modules_name(c->lora_modules, mods, sizeof mods));
		cJSON_AddStringToObject(o, "base_dtype", c->base_nf4 ? "nf4" : hw_dtype_name(c->dtype));
	}
	if (c->sample_len > 0)
		cJSON_AddNumberToObject(o, "sample_len", (double)c->sample_len);
	return o;
}

cJSON *
sim_train_json(const sim_train_result *r)
{
	const sim_metrics *m = &r->m;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "kind", "train");
	cJSON_AddStringToObject(o, "model", r->model);
	cJSON_AddStringToObject(o, "system", r->system);
	cJSON_AddItemToObject(o, "config", sim_train_cfg_json(&r->cfg, r->seq));
	cJSON_AddNumberToObject(o, "step_time_s", m->step_time_s);
	if (isfinite(m->step_lo_s) && isfinite(m->step_hi_s)) {
		/* the 80% interval: the step's, and the throughput's (its inverse) */
		double v[2] = {m->step_lo_s, m->step_hi_s};
		cJSON_AddItemToObject(o, "step_time_interval_s", cJSON_CreateDoubleArray(v, 2));
		double per = m->tokens_per_s_per_gpu * m->step_time_s;
		double w[2] = {per / m->step_hi_s, per / m->step_lo_s};
		cJSON_AddItemToObject(o, "tokens_per_s_per_gpu_interval", cJSON_CreateDoubleArray(w, 2));
	}
	cJSON_AddNumberToObject(o, "tokens_per_s", m->tokens_per_s);
	cJSON_AddNumberToObject(o, "tokens_per_s_per_gpu", m->tokens_per_s_per_gpu);
	cJSON_AddNumberToObject(o, "samples_per_s", m->samples_per_s);
	cJSON_AddNumberToObject(o, "model_flops_per_step", m->model_flops);
	cJSON_AddNumberToObject(o, "hardware_flops_per_step", m->hardware_flops);
	cJSON_AddNumberToObject(o, "model_tflops_per_gpu", m->model_tflops_per_gpu);
	cJSON_AddNumberToObject(o, "hardware_tflops_per_gpu", m->hardware_tflops_per_gpu);
	cJSON_AddNumberToObject(o, "peak_tflops_per_gpu", r->peak_tflops);
	cJSON_AddNumberToObject(o, "mfu", m->mfu);
	cJSON_AddNumberToObject(o, "hfu", m->hfu);
	cJSON_AddNumberToObject(o, "bubble_fraction", m->bubble_fraction);
	cJSON_AddNumberToObject(o, "exposed_comm_s", m->exposed_comm_s);
	cJSON_AddNumberToObject(o, "compute_s", m->compute_s);
	cJSON_AddBoolToObject(o, "fits", m->fits);
	if (r->cfg.lora_rank > 0 || r->cfg.sample_len > 0) {
		cJSON *ft = cJSON_AddObjectToObject(o, "finetune");
		cJSON_AddStringToObject(ft, "method", r->cfg.lora_rank == 0 ? "full" : r->cfg.base_nf4 ? "qlora" : "lora");
		cJSON_AddNumberToObject(ft, "trainable_params", r->ft.trainable);
		cJSON_AddNumberToObject(ft, "frozen_params", r->ft.frozen);
		cJSON_AddNumberToObject(ft, "nf4_params", r->ft.quantized);
		cJSON_AddNumberToObject(ft, "flops_per_token", r->ft.flops_per_token);
	}
	cJSON *mem = cJSON_AddArrayToObject(o, "memory");
	for (int s = 0; s < m->stages; s++) {
		const sim_mem *x = &r->mem[s];
		cJSON *e = cJSON_CreateObject();
		cJSON_AddNumberToObject(e, "stage", s);
		cJSON_AddNumberToObject(e, "weights_bytes", x->weights);
		cJSON_AddNumberToObject(e, "grads_bytes", x->grads);
		cJSON_AddNumberToObject(e, "optimizer_bytes", x->optimizer);
		cJSON_AddNumberToObject(e, "activations_bytes", x->activations);
		cJSON_AddNumberToObject(e, "inflight_microbatches", x->inflight);
		cJSON_AddNumberToObject(e, "comm_buffers_bytes", x->comm_buffers);
		cJSON_AddNumberToObject(e, "workspace_bytes", x->workspace);
		cJSON_AddNumberToObject(e, "reserve_bytes", x->reserve);
		cJSON_AddNumberToObject(e, "peak_bytes", x->total);
		cJSON_AddNumberToObject(e, "capacity_bytes", x->capacity);
		cJSON_AddBoolToObject(e, "fits", x->fits);
		cJSON_AddItemToArray(mem, e);
	}
	cJSON *prov = cJSON_AddObjectToObject(o, "provenance");
	for (int k = 0; k < HW_NPROV; k++)
		cJSON_AddNumberToObject(prov, hw_prov_name((hw_prov)k), m->prov_share[k]);
	cJSON *sim = cJSON_AddObjectToObject(o, "simulation");
	cJSON_AddNumberToObject(sim, "ranks", r->nranks);
	cJSON_AddNumberToObject(sim, "ops", (double)m->ops);
	cJSON_AddNumberToObject(sim, "events", (double)m->events);
	return o;
}

/* Trace Event Format (the Chrome/Perfetto JSON): one complete ("X") event per op, pid = rank,
 * tid = stream, times in microseconds; metadata events name the processes and threads. */
int
sim_train_trace(const sim_train_result *r, const char *path, char *err, size_t errlen)
{
	const sim_engine *e = r->engine;
	if (e == NULL)
		return pp_err(err, errlen, PP_EUSAGE, "no trace was recorded (set trace in the configuration)");
	static const char *const stream_names[] = {"compute", "tp", "cp", "ep", "dp", "dp reduce-scatter",
						   "pp send fwd", "pp recv fwd", "pp send bwd", "pp recv bwd"};
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "schema", SIM_TRACE_SCHEMA); /* trace viewers ignore it */
	cJSON *ev = cJSON_AddArrayToObject(root, "traceEvents");
	cJSON_AddStringToObject(root, "displayTimeUnit", "ms");
	int ns = sim_engine_streams(e);
	for (int st = 0; st < ns; st++) {
		int rank = sim_stream_rank(e, st);
		int local = st % 10;
		if (local == 0) {
			cJSON *p = cJSON_CreateObject();
			cJSON_AddStringToObject(p, "name", "process_name");
			cJSON_AddStringToObject(p, "ph", "M");
			cJSON_AddNumberToObject(p, "pid", rank);
			cJSON *a = cJSON_AddObjectToObject(p, "args");
			char nm[64];
			snprintf(nm, sizeof nm, "rank %d", rank);
			cJSON_AddStringToObject(a, "name", nm);
			cJSON_AddItemToArray(ev, p);
		}
		cJSON *t = cJSON_CreateObject();
		cJSON_AddStringToObject(t, "name", "thread_name");
		cJSON_AddStringToObject(t, "ph", "M");
		cJSON_AddNumberToObject(t, "pid", rank);
		cJSON_AddNumberToObject(t, "tid", st);
		cJSON *a = cJSON_AddObjectToObject(t, "args");
		cJSON_AddStringToObject(a, "name", stream_names[local]);
		cJSON_AddItemToArray(ev, t);
	}
	int32_t nops = sim_engine_ops(e);
	for (int32_t op = 0; op < nops; op++) {
		int64_t s0 = sim_op_start(e, op), s1 = sim_op_end(e, op);
		if (s0 < 0 || s1 < s0 || s1 == s0)
			continue;
		int st = sim_op_first_stream(e, op);
		char nm[96];
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "name", sim_tag_name(sim_op_tag(e, op), nm, sizeof nm));
		cJSON_AddStringToObject(x, "ph", "X");
		cJSON_AddNumberToObject(x, "ts", (double)s0 / 1e6);
		cJSON_AddNumberToObject(x, "dur", (double)(s1 - s0) / 1e6);
		cJSON_AddNumberToObject(x, "pid", sim_stream_rank(e, st));
		cJSON_AddNumberToObject(x, "tid", st);
		cJSON_AddItemToArray(ev, x);
	}
	char *text = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (text == NULL)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory while writing the trace");
	int rc = pp_write_file_atomic(path, text, strlen(text), err, errlen);
	free(text);
	return rc;
}
