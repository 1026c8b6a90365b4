/*
 * export.c -- a configuration as something people run: Megatron-LM arguments (as of
 * Megatron-Core 0.x: --tensor-model-parallel-size, --pipeline-model-parallel-size,
 * --num-layers-per-virtual-pipeline-stage, --sequence-parallel, --recompute-granularity ...),
 * a DeepSpeed JSON config (built with cJSON), a torchrun command and a SLURM batch script.
 */
#include "config.h"
#include "planner/plan_int.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
plan_export_parse(const char *s, plan_export *out)
{
	static const char *const names[] = {"megatron", "deepspeed", "torchrun", "slurm"};
	for (int i = 0; i < 4; i++)
		if (!strcmp(s, names[i])) {
			*out = (plan_export)i;
			return 0;
		}
	return PP_EUSAGE;
}

static void
megatron_args(const model *m, const sim_train_cfg *c, pp_str *s)
{
	const model_tf *t = model_transformer(m);
	pp_str_addf(s, "--tensor-model-parallel-size %d --pipeline-model-parallel-size %d", c->tp, c->pp);
	bool inter = c->schedule == SIM_INTERLEAVED && c->vpp > 1;
	int64_t nvs = inter ? (int64_t)c->pp * c->vpp : c->pp; /* virtual stages */
	bool even = t->layers % nvs == 0;
	/* an automatic uneven split the first/last-stage options cannot say (the middle stages
	 * differ, or virtual stages do): Megatron-Core's explicit layout, one '|'-separated part
	 * per virtual stage in model order, E the embedding, t*n n layers, L the loss */
	bool middle_differ = false;
	for (int st = 2; st < c->pp - 1; st++)
		middle_differ |= sim_stage_layers(m, c, st) != sim_stage_layers(m, c, 1);
	bool layout = !even && c->first_stage_layers == 0 && c->last_stage_layers == 0 && (inter || middle_differ);
	if (inter && even)
		pp_str_addf(s, " --num-layers-per-virtual-pipeline-stage %lld", (long long)(t->layers / nvs));
	if (c->first_stage_layers > 0)
		pp_str_addf(s, " --decoder-first-pipeline-num-layers %d", c->first_stage_layers);
	if (c->last_stage_layers > 0)
		pp_str_addf(s, " --decoder-last-pipeline-num-layers %d", c->last_stage_layers);
	if (layout) {
		pp_str_add(s, " --pipeline-model-parallel-layout '");
		for (int64_t vs = 0; vs < nvs; vs++) {
			int64_t first;
			int n = sim_chunk_layers(m, c, (int)(vs % c->pp), (int)(vs / c->pp), &first);
			pp_str_addf(s, "%s%s%s*%d%s", vs > 0 ? "|" : "", vs == 0 ? "E," : "", "t", n, vs == nvs - 1 ? ",L" : "");
		}
		pp_str_add(s, "'");
	} else if (c->pp > 1 && !even && c->first_stage_layers == 0 && c->last_stage_layers == 0) {
		/* only the end stages differ (sim_stage_layers gives them up first) */
		pp_str_addf(s, " --decoder-first-pipeline-num-layers %d --decoder-last-pipeline-num-layers %d",
			    sim_stage_layers(m, c, 0), sim_stage_layers(m, c, c->pp - 1));
	}
	if (c->cp > 1)
		pp_str_addf(s, " --context-parallel-size %d", c->cp);
	if (c->ep > 1)
		pp_str_addf(s, " --expert-model-parallel-size %d", c->ep);
	if (c->sequence_parallel && c->tp > 1) {
		pp_str_add(s, " --sequence-parallel");
		if (c->tp_comm_overlap)
			pp_str_add(s, " --tp-comm-overlap");
	}
	pp_str_addf(s, " --micro-batch-size %lld --global-batch-size %lld --seq-length %lld",
		    (long long)c->micro_batch, (long long)c->global_batch, (long long)(c->seq > 0 ? c->seq : t->seq));
	pp_str_addf(s, " --num-layers %lld --hidden-size %lld --num-attention-heads %lld", (long long)t->layers,
		    (long long)t->hidden, (long long)t->heads);
	if (t->ffn > 0)
		pp_str_addf(s, " --ffn-hidden-size %lld", (long long)t->ffn);
	if (t->kv_heads != t->heads)
		pp_str_addf(s, " --group-query-attention --num-query-groups %lld", (long long)t->kv_heads);
	if (t->experts > 0)
		pp_str_addf(s, " --num-experts %lld --moe-router-topk %lld", (long long)t->experts, (long long)t->top_k);
	if (t->mlp == MODEL_MLP_SWIGLU)
		pp_str_add(s, " --swiglu");
	if (t->norm == MODEL_NORM_RMSNORM)
		pp_str_add(s, " --normalization RMSNorm");
	if (t->pos == MODEL_POS_ROPE)
		pp_str_add(s, " --position-embedding-type rope");
	if (!t->tied_embeddings)
		pp_str_add(s, " --untie-embeddings-and-output-weights");
	if (!t->bias)
		pp_str_add(s, " --disable-bias-linear");
	if (c->recompute == SIM_RECOMPUTE_SELECTIVE)
		pp_str_add(s, " --recompute-granularity selective");
	else if (c->recompute == SIM_RECOMPUTE_FULL)
		pp_str_add(s, " --recompute-granularity full --recompute-method uniform --recompute-num-layers 1");
	if (c->zero >= 1)
		pp_str_add(s, " --use-distributed-optimizer");
	if (c->overlap_grad_reduce && c->dp * c->cp > 1)
		pp_str_add(s, " --overlap-grad-reduce");
	if (c->zero >= 1 && c->overlap_param_gather)
		pp_str_add(s, " --overlap-param-gather");
	if (c->attention != SIM_ATTN_UNFUSED)
		pp_str_add(s, " --use-flash-attn");
	if (c->dtype == HW_BF16)
		pp_str_add(s, " --bf16");
	else if (c->dtype == HW_FP16)
		pp_str_add(s, " --fp16");
	else if (c->dtype == HW_FP8) {
		/* Megatron-Core's recipes; torchao's rowwise scaling is closest to its blockwise one */
		static const char *const recipe[] = {"delayed", "tensorwise", "blockwise", "mxfp8"};
		pp_str_addf(s, " --bf16 --fp8-format hybrid --fp8-recipe %s",
			    recipe[c->fp8_recipe >= 0 && c->fp8_recipe < 4 ? c->fp8_recipe : 0]);
	}
}

static char *
deepspeed_json(const sim_train_cfg *c)
{
	cJSON *o = cJSON_CreateObject();
	int64_t micro = c->global_batch / ((int64_t)c->dp * c->micro_batch);
	cJSON_AddNumberToObject(o, "train_batch_size", (double)c->global_batch);
	cJSON_AddNumberToObject(o, "train_micro_batch_size_per_gpu", (double)c->micro_batch);
	cJSON_AddNumberToObject(o, "gradient_accumulation_steps", (double)micro);
	cJSON_AddNumberToObject(o, "gradient_clipping", 1.0);
	cJSON *z = cJSON_AddObjectToObject(o, "zero_optimization");
	cJSON_AddNumberToObject(z, "stage", c->zero);
	cJSON_AddBoolToObject(z, "overlap_comm", c->overlap_grad_reduce);
	cJSON_AddBoolToObject(z, "contiguous_gradients", true);
	if (c->zero >= 3) {
		cJSON_AddNumberToObject(z, "stage3_prefetch_bucket_size", 5e7);
		cJSON_AddNumberToObject(z, "stage3_param_persistence_threshold", 1e5);
	}
	if (c->dtype == HW_BF16 || c->dtype == HW_FP8) {
		cJSON *b = cJSON_AddObjectToObject(o, "bf16");
		cJSON_AddBoolToObject(b, "enabled", true);
	} else if (c->dtype == HW_FP16) {
		cJSON *f = cJSON_AddObjectToObject(o, "fp16");
		cJSON_AddBoolToObject(f, "enabled", true);
		cJSON_AddNumberToObject(f, "loss_scale", 0);
	}
	if (c->recompute != SIM_RECOMPUTE_NONE) {
		cJSON *a = cJSON_AddObjectToObject(o, "activation_checkpointing");
		cJSON_AddBoolToObject(a, "partition_activations", c->tp > 1);
		cJSON_AddBoolToObject(a, "contiguous_memory_optimization", false);
	}
	if (c->pp > 1) {
		cJSON *p = cJSON_AddObjectToObject(o, "pipeline");
		cJSON_AddNumberToObject(p, "stages", c->pp);
	}
	char *s = cJSON_Print(o);
	cJSON_Delete(o);
	return s;
}

int
plan_export_config(const model *m, const hw_system *sys, const sim_train_cfg *c, plan_export kind, char **out,
		   char *err, size_t errlen)
{
	*out = NULL;
	if (model_transformer(m) == NULL && kind != PLAN_EXPORT_DEEPSPEED)
		return pp_err(err, errlen, PP_EUSAGE, "launch configurations are for transformers; %s is a CNN", model_name(m));
	int gpn = sys->gpus_per_node > 0 ? sys->gpus_per_node : 1;
	int nodes = (c->gpus + gpn - 1) / gpn;
	int per_node = c->gpus < gpn ? c->gpus : gpn;
	pp_str s = {0};
	switch (kind) {
	case PLAN_EXPORT_MEGATRON:
		megatron_args(m, c, &s);
		pp_str_add(&s, "\n");
		break;
	case PLAN_EXPORT_DEEPSPEED: {
		char *j = deepspeed_json(c);
		if (j == NULL)
			return pp_err(err, errlen, PP_ENOMEM, "out of memory");
		pp_str_addf(&s, "%s\n", j);
		free(j);
		break;
	}
	case PLAN_EXPORT_TORCHRUN:
		pp_str_addf(&s, "torchrun --nnodes %d --nproc-per-node %d --rdzv-backend c10d --rdzv-endpoint \"$MASTER_ADDR:29500\" \\\n"
				"    pretrain_gpt.py ", nodes, per_node);
		megatron_args(m, c, &s);
		pp_str_add(&s, "\n");
		break;
	case PLAN_EXPORT_SLURM:
		pp_str_addf(&s,
			    "#!/bin/bash\n"
			    "# %s on %d GPUs of %s: tp %d, pp %d, dp %d (written by paraplan)\n"
			    "#SBATCH --job-name=%s\n"
			    "#SBATCH --nodes=%d\n"
			    "#SBATCH --ntasks-per-node=1\n"
			    "#SBATCH --gpus-per-node=%d\n"
			    "#SBATCH --exclusive\n"
			    "set -euo pipefail\n"
			    "export MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n"
			    "export CUDA_DEVICE_MAX_CONNECTIONS=1\n"
			    "srun torchrun --nnodes \"$SLURM_NNODES\" --nproc-per-node %d --rdzv-id \"$SLURM_JOB_ID\" \\\n"
			    "    --rdzv-backend c10d --rdzv-endpoint \"$MASTER_ADDR:29500\" \\\n"
			    "    pretrain_gpt.py ",
			    model_name(m), c->gpus, sys->name, c->tp, c->pp, c->dp, model_name(m), nodes, per_node, per_node);
		megatron_args(m, c, &s);
		pp_str_add(&s, "\n");
		break;
	}
	if (s.oom) {
		pp_str_free(&s);
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	}
	*out = pp_str_detach(&s);
	return 0;
}
