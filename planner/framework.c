/*
 * framework.c -- what each training framework can run: pipeline schedules, ZeRO stages,
 * parallel dimensions, at a stated version with where it was read.
 *
 * The planner ranks layouts by simulated speed; the simulator knows schedules no framework
 * ships (ZB-H1 exists in the authors' Megatron fork only) and ZeRO stages some frameworks only
 * reach through another code path.  plan_train with a framework ranks only what that framework
 * runs, and the exporters (export.c) use the same entry to refuse what they cannot express, so
 * the two cannot disagree.  Facts only; the speed of a framework (its kernels, overlap, host
 * overhead) lives in its profile in the hardware database.
 */
#include "config.h"
#include "planner/plan_int.h"

#include <stdio.h>
#include <string.h>

#define S(x) (1u << (x))

static const plan_framework frameworks[] = {
	{
		/* Megatron-LM arguments.py at 950aa43 (Megatron-Core 0.15.0rc8, 2025-10-20): 1F1B and the
		 * interleaved schedule (--num-virtual-stages-per-pipeline-rank), no zero-bubble schedule;
		 * ZeRO-1 is --use-distributed-optimizer, ZeRO-2/3 are Megatron-FSDP
		 * (--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads[_params]), which
		 * shards over DP x CP and works beside TP but is not documented with PP
		 * (megatron/core/distributed/fsdp/src/README.md); uneven stages by
		 * --decoder-first/last-pipeline-num-layers and --pipeline-model-parallel-layout;
		 * --context-parallel-size (ring attention), --expert-model-parallel-size, --fp8-format;
		 * --num-distributed-optimizer-instances replicates the distributed optimizer or the
		 * Megatron-FSDP shards over that many groups (hybrid sharding). */
		.name = "megatron", .title = "Megatron-LM (Megatron-Core 0.15)",
		.schedules = S(SIM_1F1B) | S(SIM_INTERLEAVED), .zero = S(0) | S(1) | S(2) | S(3), .hybrid = S(1) | S(2) | S(3),
		.zero23_with_pp = false, .fsdp = false, .tp = true, .tp_without_sp = true, .pp = true, .uneven_pp = true,
		.cp = true, .ep = true, .fp8 = true, .fp16 = true, .selective_recompute = true,
		.source = "Megatron-LM megatron/training/arguments.py at 950aa43 (Megatron-Core 0.15.0rc8)",
	},
	{
		/* NeMo 2.0 and Megatron-Bridge build the same Megatron-Core model and DDP config: what
		 * Megatron-Core runs, NeMo runs (nemo/collections/llm/recipes; megatron.bridge.training.config). */
		.name = "nemo", .title = "NeMo 2.0 / Megatron-Bridge (Megatron-Core 0.15)",
		.schedules = S(SIM_1F1B) | S(SIM_INTERLEAVED), .zero = S(0) | S(1) | S(2) | S(3), .hybrid = S(1) | S(2) | S(3),
		.zero23_with_pp = false, .fsdp = false, .tp = true, .tp_without_sp = true, .pp = true, .uneven_pp = true,
		.cp = true, .ep = true, .fp8 = true, .fp16 = true, .selective_recompute = true,
		.source = "Megatron-Bridge ConfigContainer over Megatron-Core 0.15 (the same model, DDP and optimizer configs)",
	},
	{
		/* torchtitan 0.2.1 (torchtitan/config/job_config.py at 64b5e15): FSDP2 fully_shard per
		 * transformer block (data_parallel_shard_degree) or DDP (data_parallel_replicate_degree);
		 * tensor_parallel_degree with sequence parallelism on the norms always; pipeline schedules
		 * of torch.distributed.pipelining (GPipe, 1F1B, Interleaved1F1B; its zero-bubble schedules
		 * are InterleavedZeroBubble and ZBVZeroBubble, not the single-stage ZB-H1), uneven ends by
		 * pipeline_parallel_first/last_stage_less_layers; context_parallel_degree,
		 * expert_parallel_degree; Float8 training; HSDP with both data-parallel degrees above 1. */
		.name = "torchtitan", .title = "torchtitan 0.2.1",
		.schedules = S(SIM_GPIPE) | S(SIM_1F1B) | S(SIM_INTERLEAVED), .zero = S(0) | S(3), .hybrid = S(3),
		.zero23_with_pp = true,
		.fsdp = true, .tp = true, .tp_without_sp = false, .pp = true, .uneven_pp = true, .cp = true, .ep = true,
		.fp8 = true, .fp16 = false, .selective_recompute = true, .op_recompute = true,
		.source = "torchtitan torchtitan/config/job_config.py at 64b5e15 (0.2.1)",
	},
	{
		/* DeepSpeed with Megatron-DeepSpeed: ZeRO 0-3 in the JSON config; pipeline parallelism by
		 * DeepSpeed's PipelineEngine (its TrainSchedule, a 1F1B; ZeRO-2/3 are refused with it);
		 * TP and sequence parallelism from Megatron-DeepSpeed's arguments; no ring-attention CP
		 * (its --ds-sequence-parallel-size is Ulysses, another algorithm), no interleaving, no
		 * uneven split the planner can state; expert parallelism by DeepSpeed-MoE; ZeRO-3 over
		 * replicated shard groups is MiCS (zero_optimization.mics_shard_size). */
		.name = "deepspeed", .title = "DeepSpeed with Megatron-DeepSpeed",
		.schedules = S(SIM_1F1B), .zero = S(0) | S(1) | S(2) | S(3), .hybrid = S(3), .zero23_with_pp = false,
		.fsdp = false,
		.tp = true, .tp_without_sp = true, .pp = true, .uneven_pp = false, .cp = false, .ep = true, .fp8 = false,
		.fp16 = true, .selective_recompute = true,
		.source = "DeepSpeed deepspeed/runtime/pipe/engine.py and zero/config.py; Megatron-DeepSpeed megatron/arguments.py",
	},
	{
		/* llm-foundry on Composer: PyTorch FSDP (FULL_SHARD, SHARD_GRAD_OP, NO_SHARD,
		 * HYBRID_SHARD), no tensor, pipeline or context parallelism; MoE through MegaBlocks'
		 * expert parallelism. */
		.name = "llm-foundry", .title = "MosaicML llm-foundry (Composer, PyTorch FSDP)",
		.schedules = 0, .zero = S(0) | S(2) | S(3), .hybrid = S(3), .zero23_with_pp = false, .fsdp = true, .tp = false,
		.tp_without_sp = false, .pp = false, .uneven_pp = false, .cp = false, .ep = true, .fp8 = true, .fp16 = true,
		.selective_recompute = false,
		.source = "llm-foundry scripts/train/yamls (fsdp_config: sharding_strategy, activation_checkpointing)",
	},
	{
		/* A plain PyTorch training script: DDP or FSDP (ZeRO-2 as SHARD_GRAD_OP, ZeRO-3 as
		 * FULL_SHARD, either over replicated groups as _HYBRID_SHARD_ZERO2 and HYBRID_SHARD),
		 * nothing else. */
		.name = "pytorch", .title = "PyTorch DDP / FSDP",
		.schedules = 0, .zero = S(0) | S(2) | S(3), .hybrid = S(2) | S(3), .zero23_with_pp = false, .fsdp = true, .tp = false,
		.tp_without_sp = false, .pp = false, .uneven_pp = false, .cp = false, .ep = false, .fp8 = false, .fp16 = true,
		.selective_recompute = false,
		.source = "torch.nn.parallel.DistributedDataParallel, torch.distributed.fsdp ShardingStrategy",
	},
	{
		/* MaxText (JAX): the fsdp, tensor, context, expert and pipeline mesh axes; its pipeline
		 * runs all forwards then all backwards (GPipe-like, autodiff through the loop); the
		 * dcn_data_parallelism axis replicates FSDP groups. */
		.name = "maxtext", .title = "MaxText (JAX)",
		.schedules = S(SIM_GPIPE), .zero = S(0) | S(3), .hybrid = S(3), .zero23_with_pp = true, .fsdp = true, .tp = true,
		.tp_without_sp = true, .pp = true, .uneven_pp = false, .cp = true, .ep = true, .fp8 = true, .fp16 = false,
		.selective_recompute = true,
		.source = "MaxText MaxText/configs/base.yml (ici_*_parallelism, num_pipeline_microbatches, remat_policy)",
	},
};

#define NFRAMEWORKS (sizeof frameworks / sizeof frameworks[0])

const plan_framework *
plan_framework_find(const char *name)
{
	for (size_t i = 0; i < NFRAMEWORKS; i++)
		if (!strcmp(frameworks[i].name, name))
			return &frameworks[i];
	return NULL;
}

const plan_framework *
plan_framework_at(size_t i)
{
	return i < NFRAMEWORKS ? &frameworks[i] : NULL;
}

size_t
plan_framework_count(void)
{
	return NFRAMEWORKS;
}

const char *
plan_framework_names(void)
{
	return "megatron, nemo, torchtitan, deepspeed, llm-foundry, pytorch, maxtext";
}

static bool
lacks(char *why, size_t n, const char *fmt, const char *arg)
{
	if (why != NULL && n > 0)
		snprintf(why, n, fmt, arg);
	return false;
}

bool
plan_framework_runs(const plan_framework *f, const model *m, const sim_train_cfg *c, char *why, size_t n)
{
	const model_tf *t = model_transformer(m);
	if (c->tp > 1 && !f->tp)
		return lacks(why, n, "%stensor parallelism", "");
	if (c->tp > 1 && !c->sequence_parallel && !f->tp_without_sp)
		return lacks(why, n, "%stensor parallelism without sequence parallelism", "");
	if (c->pp > 1 && !f->pp)
		return lacks(why, n, "%spipeline parallelism", "");
	if (c->pp > 1 && !(f->schedules & S(c->schedule)))
		return lacks(why, n, "the %s pipeline schedule", sim_schedule_name(c->schedule));
	if (c->cp > 1 && !f->cp)
		return lacks(why, n, "%scontext parallelism (ring attention)", "");
	if (c->ep > 1 && !f->ep)
		return lacks(why, n, "%sexpert parallelism", "");
	int zero = c->fsdp ? 3 : c->zero;
	if (!(f->zero & S(zero))) {
		char z[16];
		snprintf(z, sizeof z, "ZeRO-%d", zero);
		return lacks(why, n, "%s", z);
	}
	if (sim_dp_replicas(c) > 1 && !(f->hybrid & S(zero))) {
		char z[64];
		snprintf(z, sizeof z, "hybrid sharding with ZeRO-%d", zero);
		return lacks(why, n, "%s", z);
	}
	if (zero >= 2 && c->pp > 1 && !f->zero23_with_pp)
		return lacks(why, n, "%sZeRO-2/3 together with pipeline parallelism", "");
	if (zero == 3 && c->fsdp != f->fsdp)
		return lacks(why, n, "%s", f->fsdp ? "ZeRO-3 with per-layer gathers (it shards per block, as FSDP)"
						   : "FSDP's per-block ZeRO-3 (it gathers per layer)");
	int64_t nvs = (int64_t)c->pp * (c->schedule == SIM_INTERLEAVED && c->vpp > 1 ? c->vpp : 1);
	if (c->pp > 1 && !f->uneven_pp &&
	    (c->first_stage_layers > 0 || c->last_stage_layers > 0 || (t != NULL && t->layers % nvs != 0)))
		return lacks(why, n, "%spipeline stages of different layer counts", "");
	if (c->dtype == HW_FP8 && !f->fp8)
		return lacks(why, n, "%sFP8 training", "");
	if (c->dtype == HW_FP16 && !f->fp16)
		return lacks(why, n, "%sFP16 training with loss scaling", "");
	if (c->recompute == SIM_RECOMPUTE_SELECTIVE && !f->selective_recompute)
		return lacks(why, n, "%sselective recomputation", "");
	if (c->recompute == SIM_RECOMPUTE_OP && !f->op_recompute)
		return lacks(why, n, "%sper-operator selective recomputation", "");
	return true;
}
