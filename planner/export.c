/*
 * export.c -- the ranked configuration as something people launch: a Megatron-LM run script, a
 * NeMo 2.0 / Megatron-Bridge training script, a torchtitan TOML, a DeepSpeed JSON with its
 * Megatron-DeepSpeed launcher, a per-node torchrun script and a SLURM batch script; and, for a
 * serving plan, the vLLM, SGLang and TensorRT-LLM serve commands.
 *
 * An export launches exactly the configuration that was ranked or refuses, saying what the
 * framework cannot express (planner/framework.c holds what each runs, the same table that
 * 'plan train --framework' ranks with).  Every flag, key and field written here exists in the
 * program at the version named in the output's header; tests/cli_exports.sh checks them against
 * the lists in tests/data/flags/ (read from those programs' sources, tools/extract-flags.py).
 * What the planner does not decide -- data, tokenizer, checkpoints, the learning-rate schedule
 * and its length, the nodes' addresses -- is a placeholder: named in the header's list, and
 * written so that the program stops when it was not filled in (a shell variable that must be
 * set, a string "FILL-IN: ..." where a file wants a path), never a silent default.
 */
#include "config.h"
#include "planner/plan_int.h"

#include <cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[PLAN_EXPORT_NKINDS] = {"megatron", "nemo", "torchtitan", "deepspeed", "torchrun",
							   "slurm"};

int
plan_export_parse(const char *s, plan_export *out)
{
	for (int i = 0; i < PLAN_EXPORT_NKINDS; i++)
		if (!strcmp(s, kind_names[i])) {
			*out = (plan_export)i;
			return 0;
		}
	return PP_EUSAGE;
}

const char *
plan_export_name(plan_export k)
{
	return (unsigned)k < PLAN_EXPORT_NKINDS ? kind_names[k] : "?";
}

/* The versions the exports are written for (their flags are in tests/data/flags/). */
#define MEGATRON_AT "Megatron-LM as of Megatron-Core 0.15 (megatron/training/arguments.py at 950aa43)"
#define BRIDGE_AT "Megatron-Bridge 0.2.0 on Megatron-Core 0.15 (NeMo 2.0's training library)"
#define TITAN_AT "torchtitan 0.2.1 (torchtitan/config/job_config.py at 64b5e15)"
#define DEEPSPEED_AT "DeepSpeed 0.19.5 with Megatron-DeepSpeed (megatron/arguments.py at 4efb479)"

typedef struct ex {
	const model *m;
	const model_tf *t;
	const hw_system *sys;
	const sim_train_cfg *c;
	const plan_export_opts *o;
	const plan_framework *fw; /* what runs it */
	int per_node, nodes;
	int64_t seq, micro;       /* sequence length; micro-batches per step */
	pp_str *s;
} ex;

static void
add(ex *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void
add(ex *x, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pp_str_vaddf(x->s, fmt, ap);
	va_end(ap);
}

/* Layers of the model's stages that a framework names by per-stage counts: 0 when even. */
static bool
uneven(const ex *x)
{
	int64_t nvs = (int64_t)x->c->pp * (x->c->schedule == SIM_INTERLEAVED && x->c->vpp > 1 ? x->c->vpp : 1);
	return x->c->pp > 1 && (x->t->layers % nvs != 0 || x->c->first_stage_layers > 0 || x->c->last_stage_layers > 0);
}

/* ---- what a framework cannot express ----------------------------------------------------------- */

static int
refuse(char *err, size_t errlen, const char *target, const char *why, const char *hint)
{
	return pp_err(err, errlen, PP_EUSAGE, "--export %s cannot launch the ranked layout: %s%s%s", target, why,
		      hint && *hint ? "; " : "", hint ? hint : "");
}

static int
check_framework(const ex *x, const char *target, char *err, size_t errlen)
{
	char why[160], msg[256];
	if (!plan_framework_runs(x->fw, x->m, x->c, why, sizeof why)) {
		snprintf(msg, sizeof msg, "it uses %s, which %s does not run", why, x->fw->title);
		char hint[160];
		snprintf(hint, sizeof hint, "rank with --framework %s to search only what it runs", x->fw->name);
		return refuse(err, errlen, target, msg, hint);
	}
	if (x->c->cp > 1 && x->c->seq > 0 && x->c->seq % (2 * x->c->cp) != 0)
		return refuse(err, errlen, target, "the sequence does not split into 2 x cp chunks", NULL);
	return 0;
}

/* ---- the header every export opens with ----------------------------------------------------- */

static void
header(ex *x, const char *cm, const char *version, const char *const *fill)
{
	const sim_train_cfg *c = x->c;
	add(x, "%s %s on %d GPUs of %s (%d node%s of %d): tp %d, pp %d, dp %d, cp %d, ep %d", cm, model_name(x->m), c->gpus,
	    x->sys->name, x->nodes, x->nodes == 1 ? "" : "s", x->per_node, c->tp, c->pp, c->dp, c->cp, c->ep);
	char hybrid[80] = "";
	if (sim_dp_replicas(c) > 1)
		snprintf(hybrid, sizeof hybrid, " sharded over %d data-parallel ranks x %d replicas", sim_dp_shard(c),
			 sim_dp_replicas(c));
	add(x, ",\n%s %s%s, ZeRO-%d%s%s, micro-batch %lld x %lld, recompute %s%s, %s -- the layout paraplan ranked", cm,
	    sim_schedule_name(c->schedule), c->vpp > 1 ? " (virtual stages)" : "", c->fsdp ? 3 : c->zero,
	    c->fsdp ? " (FSDP)" : "", hybrid, (long long)c->micro_batch, (long long)x->micro,
	    sim_recompute_name(c->recompute), c->sequence_parallel ? ", sequence parallel" : "", hw_dtype_name(c->dtype));
	if (x->o->step_s > 0)
		add(x, " (predicted step %.3f s)", x->o->step_s);
	add(x, ".\n%s Written for %s.\n", cm, version);
	if (fill != NULL && fill[0] != NULL) {
		add(x, "%s\n%s Fill in before running (the run stops on any left unset):\n", cm, cm);
		for (int i = 0; fill[i] != NULL; i++)
			add(x, "%s   %s\n", cm, fill[i]);
	}
}

/* ---- Megatron-LM ------------------------------------------------------------------------------ */

/* Megatron-LM's arguments for the model and the layout, one per line (continued with '\'). */
/* Megatron-Core's names: its attention backends (fused = cuDNN's, flash = FlashAttention-2) and
 * FP8 recipes (torchao's row-wise scaling is closest to its blockwise one). */
static const char *
megatron_attention(sim_attention a)
{
	return a == SIM_ATTN_UNFUSED ? "unfused" : a == SIM_ATTN_FLASH3 ? "fused" : "flash";
}

static const char *
megatron_fp8_recipe(int r)
{
	static const char *const names[] = {"delayed", "tensorwise", "blockwise", "mxfp8"};
	return names[r >= 0 && r < 4 ? r : 0];
}

static void
megatron_args(ex *x, const char *indent)
{
	const sim_train_cfg *c = x->c;
	const model_tf *t = x->t;
	const char *nl = " \\\n";
#define ARG(...) (add(x, "%s%s", nl, indent), add(x, __VA_ARGS__))
	/* parallel layout */
	ARG("--tensor-model-parallel-size %d", c->tp);
	ARG("--pipeline-model-parallel-size %d", c->pp);
	bool inter = c->schedule == SIM_INTERLEAVED && c->vpp > 1;
	int64_t nvs = inter ? (int64_t)c->pp * c->vpp : c->pp;
	bool even = t->layers % nvs == 0;
	if (inter && even)
		ARG("--num-virtual-stages-per-pipeline-rank %d", c->vpp);
	/* an uneven split: Megatron-Core's explicit layout when the middle stages differ or stages
	 * are virtual (one '|'-separated part per virtual stage, in model order: E the embedding,
	 * t*n n layers, L the loss); else the first/last-stage options */
	bool middle_differ = false;
	for (int st = 2; st < c->pp - 1; st++)
		middle_differ |= sim_stage_layers(x->m, c, st) != sim_stage_layers(x->m, c, 1);
	bool explicit = c->first_stage_layers > 0 || c->last_stage_layers > 0;
	if (!even && !explicit && (inter || middle_differ)) {
		add(x, "%s%s--pipeline-model-parallel-layout '", nl, indent);
		for (int64_t vs = 0; vs < nvs; vs++) {
			int64_t first;
			int n = sim_chunk_layers(x->m, c, (int)(vs % c->pp), (int)(vs / c->pp), &first);
			add(x, "%s%st*%d%s", vs > 0 ? "|" : "", vs == 0 ? "E," : "", n, vs == nvs - 1 ? ",L" : "");
		}
		add(x, "'");
	} else if (c->pp > 1 && (!even || explicit)) {
		ARG("--decoder-first-pipeline-num-layers %d", sim_stage_layers(x->m, c, 0));
		ARG("--decoder-last-pipeline-num-layers %d", sim_stage_layers(x->m, c, c->pp - 1));
	}
	if (c->cp > 1)
		ARG("--context-parallel-size %d", c->cp);
	if (c->ep > 1)
		ARG("--expert-model-parallel-size %d", c->ep);
	if (c->ep > 1 && sim_train_etp(c) != c->tp) /* Megatron-Core's default is tp */
		ARG("--expert-tensor-parallel-size %d", sim_train_etp(c));
	if (c->sequence_parallel && c->tp > 1) {
		ARG("--sequence-parallel");
		if (c->tp_comm_overlap)
			ARG("--tp-comm-overlap");
	}
	/* data-parallel sharding: ZeRO-1 is the distributed optimizer; ZeRO-2/3 are Megatron-FSDP's
	 * optim_grads and optim_grads_params, which save checkpoints as fsdp_dtensor */
	int zero = c->fsdp ? 3 : c->zero;
	if (zero == 1)
		ARG("--use-distributed-optimizer");
	if (zero >= 2) {
		ARG("--use-megatron-fsdp");
		ARG("--data-parallel-sharding-strategy %s", zero == 2 ? "optim_grads" : "optim_grads_params");
		ARG("--ckpt-format fsdp_dtensor");
	}
	if (sim_dp_replicas(c) > 1) /* hybrid sharding: the optimizer's (or FSDP's) shards, replicated */
		ARG("--num-distributed-optimizer-instances %d", sim_dp_replicas(c));
	if (c->overlap_grad_reduce && (int64_t)c->dp * c->cp > 1)
		ARG("--overlap-grad-reduce");
	if (zero >= 1 && c->overlap_param_gather && (int64_t)c->dp * c->cp > 1)
		ARG("--overlap-param-gather");
	/* shape of a step */
	ARG("--micro-batch-size %lld", (long long)c->micro_batch);
	ARG("--global-batch-size %lld", (long long)c->global_batch);
	ARG("--seq-length %lld", (long long)x->seq);
	int64_t maxpos = t->max_pos > x->seq ? t->max_pos : x->seq;
	ARG("--max-position-embeddings %lld", (long long)maxpos);
	/* the model */
	ARG("--num-layers %lld", (long long)t->layers);
	ARG("--hidden-size %lld", (long long)t->hidden);
	ARG("--num-attention-heads %lld", (long long)t->heads);
	if (t->kv_lora_rank > 0) {
		ARG("--multi-latent-attention");
		if (t->q_lora_rank > 0)
			ARG("--q-lora-rank %lld", (long long)t->q_lora_rank);
		ARG("--kv-lora-rank %lld", (long long)t->kv_lora_rank);
		ARG("--qk-head-dim %lld", (long long)t->qk_nope_dim);
		ARG("--qk-pos-emb-head-dim %lld", (long long)t->qk_rope_dim);
		ARG("--v-head-dim %lld", (long long)t->v_head_dim);
	} else {
		if (t->head_dim * t->heads != t->hidden)
			ARG("--kv-channels %lld", (long long)t->head_dim);
		if (t->kv_heads != t->heads) {
			ARG("--group-query-attention");
			ARG("--num-query-groups %lld", (long long)t->kv_heads);
		}
	}
	if (t->ffn > 0)
		ARG("--ffn-hidden-size %lld", (long long)t->ffn);
	if (t->experts > 0) {
		ARG("--num-experts %lld", (long long)t->experts);
		ARG("--moe-router-topk %lld", (long long)t->top_k);
		ARG("--moe-ffn-hidden-size %lld", (long long)t->expert_ffn);
		if (t->shared_experts > 0)
			ARG("--moe-shared-expert-intermediate-size %lld", (long long)(t->shared_experts * t->expert_ffn));
		if (t->dense_layers > 0 || t->moe_every > 1) {
			/* a Python list of one 0/1 per layer: the dense ones first, then every n-th MoE */
			add(x, "%s%s--moe-layer-freq '[", nl, indent);
			for (int64_t l = 0; l < t->layers; l++)
				add(x, "%s%d", l ? "," : "", model_layer_is_moe(x->m, l) ? 1 : 0);
			add(x, "]'");
		}
		ARG("--moe-grouped-gemm");
		ARG("--moe-token-dispatcher-type alltoall");
		ARG("--moe-router-load-balancing-type aux_loss");
		ARG("--moe-aux-loss-coeff 1e-3");
		if (c->moe_capacity > 0)
			ARG("--moe-expert-capacity-factor %g", c->moe_capacity);
	}
	if (t->mlp == MODEL_MLP_SWIGLU)
		ARG("--swiglu");
	ARG("--normalization %s", t->norm == MODEL_NORM_RMSNORM ? "RMSNorm" : "LayerNorm");
	if (t->norm_eps > 0)
		ARG("--norm-epsilon %g", t->norm_eps);
	ARG("--position-embedding-type %s", t->pos == MODEL_POS_ROPE ? "rope" : t->pos == MODEL_POS_LEARNED ? "learned_absolute" : "none");
	if (t->pos == MODEL_POS_ROPE && t->rope_theta > 0)
		ARG("--rotary-base %.0f", t->rope_theta);
	if (!t->tied_embeddings)
		ARG("--untie-embeddings-and-output-weights");
	if (!t->bias)
		ARG("--disable-bias-linear");
	if (t->qkv_bias)
		ARG("--add-qkv-bias");
	/* a sliding window: Transformer Engine's (left, right), left the tokens before the query */
	if (t->window > 0) {
		ARG("--window-size %lld,0", (long long)t->window - 1);
		if (t->window_global > 0)
			ARG("--window-attn-skip-freq %lld", (long long)t->window_global);
	}
	ARG("--attention-dropout 0");
	ARG("--hidden-dropout 0");
	/* how a step runs */
	if (c->recompute == SIM_RECOMPUTE_SELECTIVE) {
		ARG("--recompute-granularity selective");
	} else if (c->recompute == SIM_RECOMPUTE_FULL) {
		ARG("--recompute-granularity full");
		ARG("--recompute-method uniform");
		ARG("--recompute-num-layers 1");
	}
	ARG("--attention-backend %s", megatron_attention(c->attention));
	if (c->dtype == HW_BF16 || c->dtype == HW_FP8)
		ARG("--bf16");
	else if (c->dtype == HW_FP16)
		ARG("--fp16");
	if (c->dtype == HW_FP8) {
		ARG("--fp8-format hybrid");
		ARG("--fp8-recipe %s", megatron_fp8_recipe(c->fp8_recipe));
	}
	/* Megatron-LM reduces bf16 gradients in fp32 unless told otherwise, under the distributed
	 * optimizer and Megatron-FSDP alike */
	if ((c->dtype == HW_BF16 || c->dtype == HW_FP8) && sim_grad_bytes(c) == 2)
		ARG("--grad-reduce-in-bf16");
	/* what the plan does not decide: the placeholders of the header */
	ARG("--train-iters \"$TRAIN_ITERS\"");
	ARG("--lr \"$LR\"");
	ARG("--min-lr \"$MIN_LR\"");
	ARG("--lr-decay-style cosine");
	ARG("--lr-warmup-iters \"$LR_WARMUP_ITERS\"");
	ARG("--weight-decay 0.1");
	ARG("--clip-grad 1.0");
	ARG("--adam-beta1 0.9");
	ARG("--adam-beta2 0.95");
	ARG("--init-method-std 0.02");
	ARG("--tokenizer-type HuggingFaceTokenizer");
	ARG("--tokenizer-model \"$TOKENIZER_MODEL\"");
	ARG("--data-path \"$DATA_PATH\"");
	ARG("--split 99,1,0");
	ARG("--save \"$CHECKPOINT_DIR\"");
	ARG("--load \"$CHECKPOINT_DIR\"");
	ARG("--save-interval 1000");
	ARG("--log-interval 10");
	ARG("--eval-interval 1000");
	ARG("--eval-iters 10");
#undef ARG
}

static const char *const megatron_fill[] = {
	"MEGATRON_LM      a Megatron-LM checkout at Megatron-Core 0.15 (its pretrain_gpt.py)",
	"DATA_PATH        the training data: the prefix of a Megatron indexed dataset (tools/preprocess_data.py)",
	"TOKENIZER_MODEL  the model's Hugging Face tokenizer: a hub name or a local path",
	"CHECKPOINT_DIR   where checkpoints are saved and loaded",
	"TRAIN_ITERS      steps to train, LR and MIN_LR the learning rates, LR_WARMUP_ITERS the warm-up steps",
	NULL,
};

static const char *const launch_fill[] = {
	"MASTER_ADDR      the first node's address; NODE_RANK this node's rank (run the script on every node)",
	NULL,
};

/* Bash lines that stop the run when a placeholder is unset. */
static void
require_vars(ex *x, const char *const *names)
{
	for (int i = 0; names[i] != NULL; i++)
		add(x, ": \"${%s:?%s is a placeholder: see the list at the top}\"\n", names[i], names[i]);
}

/* The shell's environment for a Megatron-Core run: one CUDA connection serializes the TP and
 * CP collectives behind the compute they overlap (Megatron-LM's examples set it); FSDP needs
 * more than one (arguments.py asserts it). */
static void
megatron_env(ex *x)
{
	int zero = x->c->fsdp ? 3 : x->c->zero;
	if (zero >= 2)
		add(x, "export CUDA_DEVICE_MAX_CONNECTIONS=8 # Megatron-FSDP refuses 1\n");
	else
		add(x, "export CUDA_DEVICE_MAX_CONNECTIONS=1\n");
}

/* ---- torchtitan ----------------------------------------------------------------------------- */

static const struct {
	const char *model, *name, *flavor;
} titan_models[] = {
	{"llama-3-8b", "llama3", "8B"},
	{"llama-3-70b", "llama3", "70B"},
	{"llama-3-405b", "llama3", "405B"},
	{"llama-4-scout", "llama4", "17bx16e"},
	{"llama-4-maverick", "llama4", "17bx128e"},
	{"deepseek-v3", "deepseek_v3", "671B"},
	{"qwen3-30b-a3b", "qwen3", "30B-A3B"},
	{"qwen3-235b-a22b", "qwen3", "235B-A22B"},
};

static int
titan_model(const ex *x, const char **name, const char **flavor, char *err, size_t errlen)
{
	for (size_t i = 0; i < sizeof titan_models / sizeof titan_models[0]; i++)
		if (!strcmp(model_name(x->m), titan_models[i].model)) {
			*name = titan_models[i].name;
			*flavor = titan_models[i].flavor;
			return 0;
		}
	return refuse(err, errlen, "torchtitan",
		      "torchtitan 0.2.1 trains only the models it defines (llama3 8B/70B/405B, llama4 17bx16e/17bx128e, "
		      "deepseek_v3 16B/236B/671B, qwen3 0.6B-32B, 30B-A3B, 235B-A22B), and this is none of them",
		      "export megatron, nemo or deepspeed instead");
}

static void
titan_toml(ex *x, const char *name, const char *flavor)
{
	const sim_train_cfg *c = x->c;
	int zero = c->fsdp ? 3 : c->zero;
	add(x, "[job]\n");
	add(x, "description = \"%s: tp %d pp %d dp %d cp %d ep %d, ranked by paraplan\"\n", model_name(x->m), c->tp, c->pp,
	    c->dp, c->cp, c->ep);
	add(x, "dump_folder = \"FILL-IN: a directory for checkpoints, logs and traces\"\n\n");
	add(x, "[model]\nname = \"%s\"\nflavor = \"%s\"\n", name, flavor);
	add(x, "hf_assets_path = \"FILL-IN: the model's tokenizer (a Hugging Face download, scripts/download_hf_assets.py)\"\n");
	if (c->dtype == HW_FP8)
		add(x, "converters = [\"quantize.linear.float8\"]\n");
	add(x, "\n[optimizer]\nname = \"AdamW\"\nlr = 0.0 # FILL-IN: the learning rate (a plan does not choose it)\n"
	       "weight_decay = 0.1\n\n");
	add(x, "[lr_scheduler]\nwarmup_steps = 0 # FILL-IN: warm-up steps\ndecay_type = \"cosine\"\n\n");
	add(x, "[training]\n");
	/* local_batch_size is per data-parallel rank (shard x replicate), global the whole step:
	 * their ratio over the pipeline's micro-batch is the gradient accumulation */
	add(x, "local_batch_size = %lld\n", (long long)(c->global_batch / ((int64_t)c->dp)));
	add(x, "global_batch_size = %lld\n", (long long)c->global_batch);
	add(x, "seq_len = %lld\n", (long long)x->seq);
	add(x, "steps = 0 # FILL-IN: steps to train\n");
	add(x, "max_norm = 1.0\n");
	add(x, "mixed_precision_param = \"%s\"\n", c->dtype == HW_FP32 ? "float32" : "bfloat16");
	/* the only value 0.2.1 takes: plan_export_config refuses a plan that reduced in 16 bits */
	add(x, "mixed_precision_reduce = \"float32\"\n");
	add(x, "dataset = \"c4\"\n");
	add(x, "dataset_path = \"FILL-IN: the training data\"\n\n");
	add(x, "[parallelism]\n");
	/* FSDP2 shards over the data-parallel ranks (ZeRO-3); without it they replicate (DDP) */
	add(x, "data_parallel_replicate_degree = %d\n", zero == 3 ? sim_dp_replicas(c) : c->dp);
	add(x, "data_parallel_shard_degree = %d\n", zero == 3 ? sim_dp_shard(c) : 1);
	add(x, "tensor_parallel_degree = %d\n", c->tp);
	add(x, "pipeline_parallel_degree = %d\n", c->pp);
	if (c->pp > 1) {
		add(x, "pipeline_parallel_schedule = \"%s\"\n",
		    c->schedule == SIM_GPIPE ? "GPipe" : c->schedule == SIM_INTERLEAVED ? "Interleaved1F1B" : "1F1B");
		add(x, "pipeline_parallel_microbatch_size = %lld\n", (long long)c->micro_batch);
		int64_t nvs = (int64_t)c->pp * (c->schedule == SIM_INTERLEAVED ? c->vpp : 1);
		if (x->t->layers % nvs == 0) {
			add(x, "pipeline_parallel_layers_per_stage = %lld\n", (long long)(x->t->layers / nvs));
		} else {
			/* torchtitan counts the embedding and the head as a layer each on the end stages and
			 * gives them fewer transformer layers: first_stage_less_layers, last_stage_less_layers */
			int64_t per = (x->t->layers + nvs - 1) / nvs;
			add(x, "pipeline_parallel_layers_per_stage = %lld\n", (long long)per);
			add(x, "pipeline_parallel_first_stage_less_layers = %lld\n", (long long)(per - sim_stage_layers(x->m, c, 0)));
			add(x, "pipeline_parallel_last_stage_less_layers = %lld\n",
			    (long long)(per - sim_stage_layers(x->m, c, c->pp - 1)));
		}
	}
	add(x, "context_parallel_degree = %d\n", c->cp);
	if (x->t->experts > 0)
		add(x, "expert_parallel_degree = %d\n", c->ep);
	add(x, "\n[activation_checkpoint]\nmode = \"%s\"\n", c->recompute == SIM_RECOMPUTE_FULL ? "full"
								    : c->recompute == SIM_RECOMPUTE_SELECTIVE || c->recompute == SIM_RECOMPUTE_OP
									    ? "selective"
									    : "none");
	if (c->recompute == SIM_RECOMPUTE_OP)
		add(x, "selective_ac_option = \"op\"\n");
	add(x, "\n[checkpoint]\nenable = true\ninterval = 1000\n");
	if (c->dtype == HW_FP8)
		add(x, "\n[quantize.linear.float8]\nrecipe_name = \"tensorwise\"\n");
}

/* ---- Megatron-Bridge (NeMo 2.0) ------------------------------------------------------------- */

static void
bridge_script(ex *x)
{
	const sim_train_cfg *c = x->c;
	const model_tf *t = x->t;
	int zero = c->fsdp ? 3 : c->zero;
	bool mla = t->kv_lora_rank > 0;
	add(x, "import os\n\nimport torch\nimport torch.nn.functional as F\n\n");
	add(x, "from megatron.core.transformer.enums import AttnBackend\n");
	if (mla)
		add(x, "from megatron.bridge.models.deepseek.deepseek_provider import DeepSeekModelProvider\n");
	else
		add(x, "from megatron.bridge.models.gpt_provider import GPTModelProvider\n");
	add(x, "from megatron.bridge.training.config import (\n    CheckpointConfig,\n    ConfigContainer,\n"
	       "    DistributedDataParallelConfig,\n    GPTDatasetConfig,\n    LoggerConfig,\n    OptimizerConfig,\n"
	       "    RNGConfig,\n    SchedulerConfig,\n    TrainingConfig,\n)\n"
	       "from megatron.bridge.training.gpt_step import forward_step\n"
	       "from megatron.bridge.training.pretrain import pretrain\n"
	       "from megatron.bridge.training.tokenizers.config import TokenizerConfig\n\n\n");
	add(x, "def need(name):\n    \"\"\"A placeholder of the header: stop when it was not filled in.\"\"\"\n"
	       "    value = os.environ.get(name)\n    if not value:\n"
	       "        raise SystemExit(f\"{name} is a placeholder: see the list at the top\")\n    return value\n\n\n");
	add(x, "model = %s(\n", mla ? "DeepSeekModelProvider" : "GPTModelProvider");
#define F(...) (add(x, "    "), add(x, __VA_ARGS__), add(x, ",\n"))
	F("num_layers=%lld", (long long)t->layers);
	F("hidden_size=%lld", (long long)t->hidden);
	F("num_attention_heads=%lld", (long long)t->heads);
	if (mla) {
		if (t->q_lora_rank > 0)
			F("q_lora_rank=%lld", (long long)t->q_lora_rank);
		else
			F("q_lora_rank=None");
		F("kv_lora_rank=%lld", (long long)t->kv_lora_rank);
		F("qk_head_dim=%lld", (long long)t->qk_nope_dim);
		F("qk_pos_emb_head_dim=%lld", (long long)t->qk_rope_dim);
		F("v_head_dim=%lld", (long long)t->v_head_dim);
	} else {
		F("num_query_groups=%lld", (long long)t->kv_heads);
		F("kv_channels=%lld", (long long)t->head_dim);
	}
	if (t->ffn > 0)
		F("ffn_hidden_size=%lld", (long long)t->ffn);
	if (t->experts > 0) {
		F("num_moe_experts=%lld", (long long)t->experts);
		F("moe_router_topk=%lld", (long long)t->top_k);
		F("moe_ffn_hidden_size=%lld", (long long)t->expert_ffn);
		if (t->shared_experts > 0)
			F("moe_shared_expert_intermediate_size=%lld", (long long)(t->shared_experts * t->expert_ffn));
		if (t->dense_layers > 0 || t->moe_every > 1) {
			add(x, "    moe_layer_freq=[");
			for (int64_t l = 0; l < t->layers; l++)
				add(x, "%s%d", l ? ", " : "", model_layer_is_moe(x->m, l) ? 1 : 0);
			add(x, "],\n");
		}
		F("moe_grouped_gemm=True");
		F("moe_token_dispatcher_type=\"alltoall\"");
		F("moe_router_load_balancing_type=\"aux_loss\"");
		F("moe_aux_loss_coeff=1e-3");
		if (c->moe_capacity > 0)
			F("moe_expert_capacity_factor=%g", c->moe_capacity);
	}
	F("vocab_size=%lld", (long long)t->vocab);
	F("seq_length=%lld", (long long)x->seq);
	F("normalization=\"%s\"", t->norm == MODEL_NORM_RMSNORM ? "RMSNorm" : "LayerNorm");
	if (t->norm_eps > 0)
		F("layernorm_epsilon=%g", t->norm_eps);
	if (t->mlp == MODEL_MLP_SWIGLU) {
		F("gated_linear_unit=True");
		F("activation_func=F.silu");
	} else {
		F("gated_linear_unit=False");
		F("activation_func=%s", t->mlp == MODEL_MLP_RELU ? "F.relu" : "F.gelu");
	}
	F("position_embedding_type=\"%s\"", t->pos == MODEL_POS_ROPE ? "rope" : t->pos == MODEL_POS_LEARNED ? "learned_absolute" : "none");
	if (t->pos == MODEL_POS_ROPE && t->rope_theta > 0)
		F("rotary_base=%.0f", t->rope_theta);
	F("share_embeddings_and_output_weights=%s", t->tied_embeddings ? "True" : "False");
	F("add_bias_linear=%s", t->bias ? "True" : "False");
	F("add_qkv_bias=%s", t->qkv_bias || t->bias ? "True" : "False");
	if (t->window > 0) {
		F("window_size=(%lld, 0)", (long long)t->window - 1);
		if (t->window_global > 0)
			F("window_attn_skip_freq=%lld", (long long)t->window_global);
	}
	F("attention_dropout=0.0");
	F("hidden_dropout=0.0");
	F("init_method_std=0.02");
	F("tensor_model_parallel_size=%d", c->tp);
	F("pipeline_model_parallel_size=%d", c->pp);
	if (c->schedule == SIM_INTERLEAVED && c->vpp > 1)
		F("virtual_pipeline_model_parallel_size=%d", c->vpp);
	if (c->pp > 1 && uneven(x)) {
		F("num_layers_in_first_pipeline_stage=%d", sim_stage_layers(x->m, c, 0));
		F("num_layers_in_last_pipeline_stage=%d", sim_stage_layers(x->m, c, c->pp - 1));
	}
	F("context_parallel_size=%d", c->cp);
	F("expert_model_parallel_size=%d", c->ep);
	F("sequence_parallel=%s", c->sequence_parallel && c->tp > 1 ? "True" : "False");
	if (c->sequence_parallel && c->tp > 1 && c->tp_comm_overlap)
		F("tp_comm_overlap=True");
	F("attention_backend=AttnBackend.%s", megatron_attention(c->attention));
	if (c->recompute == SIM_RECOMPUTE_SELECTIVE) {
		F("recompute_granularity=\"selective\"");
	} else if (c->recompute == SIM_RECOMPUTE_FULL) {
		F("recompute_granularity=\"full\"");
		F("recompute_method=\"uniform\"");
		F("recompute_num_layers=1");
	}
	F("bf16=%s", c->dtype == HW_BF16 || c->dtype == HW_FP8 ? "True" : "False");
	F("fp16=%s", c->dtype == HW_FP16 ? "True" : "False");
	F("params_dtype=torch.%s", c->dtype == HW_FP16 ? "float16" : c->dtype == HW_FP32 ? "float32" : "bfloat16");
	if (c->pp > 1)
		F("pipeline_dtype=torch.%s", c->dtype == HW_FP16 ? "float16" : c->dtype == HW_FP32 ? "float32" : "bfloat16");
	if (c->dtype == HW_FP8) {
		F("fp8=\"hybrid\"");
		F("fp8_recipe=\"%s\"", megatron_fp8_recipe(c->fp8_recipe));
	}
	add(x, ")\n\n");
	add(x, "config = ConfigContainer(\n    model=model,\n");
	add(x, "    train=TrainingConfig(\n        micro_batch_size=%lld,\n        global_batch_size=%lld,\n"
	       "        train_iters=int(need(\"TRAIN_ITERS\")),\n        eval_interval=1000,\n        eval_iters=10,\n    ),\n",
	    (long long)c->micro_batch, (long long)c->global_batch);
	add(x, "    optimizer=OptimizerConfig(\n        optimizer=\"adam\",\n        lr=float(need(\"LR\")),\n"
	       "        min_lr=float(need(\"MIN_LR\")),\n        weight_decay=0.1,\n        adam_beta1=0.9,\n        adam_beta2=0.95,\n"
	       "        clip_grad=1.0,\n        bf16=%s,\n        fp16=%s,\n        use_distributed_optimizer=%s,\n    ),\n",
	    c->dtype == HW_BF16 || c->dtype == HW_FP8 ? "True" : "False", c->dtype == HW_FP16 ? "True" : "False",
	    zero == 1 ? "True" : "False");
	add(x, "    scheduler=SchedulerConfig(\n        lr_decay_style=\"cosine\",\n"
	       "        lr_warmup_iters=int(need(\"LR_WARMUP_ITERS\")),\n    ),\n");
	/* Megatron-Core's grad_reduce_in_fp32 is False unless stated: say what the plan reduced in */
	add(x, "    ddp=DistributedDataParallelConfig(\n        grad_reduce_in_fp32=%s,\n        overlap_grad_reduce=%s,\n"
	       "        overlap_param_gather=%s,\n        use_distributed_optimizer=%s,\n",
	    sim_grad_bytes(c) == 4 ? "True" : "False", c->overlap_grad_reduce && (int64_t)c->dp * c->cp > 1 ? "True" : "False",
	    zero >= 1 && c->overlap_param_gather && (int64_t)c->dp * c->cp > 1 ? "True" : "False", zero == 1 ? "True" : "False");
	if (zero >= 2)
		add(x, "        use_megatron_fsdp=True,\n        data_parallel_sharding_strategy=\"%s\",\n",
		    zero == 2 ? "optim_grads" : "optim_grads_params");
	if (sim_dp_replicas(c) > 1)
		add(x, "        num_distributed_optimizer_instances=%d,\n", sim_dp_replicas(c));
	add(x, "    ),\n");
	add(x, "    dataset=GPTDatasetConfig(\n        random_seed=1234,\n        sequence_length=%lld,\n"
	       "        blend=([need(\"DATA_PATH\")], None),\n        split=\"99,1,0\",\n"
	       "        reset_position_ids=False,\n        reset_attention_mask=False,\n        eod_mask_loss=False,\n    ),\n",
	    (long long)x->seq);
	add(x, "    logger=LoggerConfig(log_interval=10),\n");
	add(x, "    tokenizer=TokenizerConfig(\n        tokenizer_type=\"HuggingFaceTokenizer\",\n"
	       "        tokenizer_model=need(\"TOKENIZER_MODEL\"),\n    ),\n");
	add(x, "    checkpoint=CheckpointConfig(\n        save=need(\"CHECKPOINT_DIR\"),\n        load=need(\"CHECKPOINT_DIR\"),\n"
	       "        save_interval=1000,\n%s    ),\n",
	    zero >= 2 ? "        ckpt_format=\"fsdp_dtensor\",\n" : "");
	add(x, "    rng=RNGConfig(seed=1234),\n)\n\n");
	add(x, "if __name__ == \"__main__\":\n    pretrain(config, forward_step)\n");
#undef F
}

/* ---- DeepSpeed ------------------------------------------------------------------------------ */

static char *
deepspeed_json(const ex *x)
{
	const sim_train_cfg *c = x->c;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "train_batch_size", (double)c->global_batch);
	cJSON_AddNumberToObject(o, "train_micro_batch_size_per_gpu", (double)c->micro_batch);
	cJSON_AddNumberToObject(o, "gradient_accumulation_steps", (double)x->micro);
	cJSON_AddNumberToObject(o, "gradient_clipping", 1.0);
	cJSON_AddNumberToObject(o, "steps_per_print", 10);
	cJSON_AddBoolToObject(o, "wall_clock_breakdown", false);
	/* the precision the gradients are reduced in, as the plan priced it (DeepSpeed's default
	 * follows the engine's optimizer) */
	cJSON_AddStringToObject(o, "communication_data_type",
				sim_grad_bytes(c) == 4 ? "fp32" : c->dtype == HW_FP16 ? "fp16" : "bf16");
	cJSON *z = cJSON_AddObjectToObject(o, "zero_optimization");
	cJSON_AddNumberToObject(z, "stage", c->zero);
	cJSON_AddBoolToObject(z, "overlap_comm", c->overlap_grad_reduce);
	cJSON_AddBoolToObject(z, "contiguous_gradients", true);
	if (c->bucket_bytes > 0)
		cJSON_AddNumberToObject(z, "reduce_bucket_size", floor(c->bucket_bytes));
	if (c->zero >= 3) {
		cJSON_AddNumberToObject(z, "stage3_prefetch_bucket_size", 5e7);
		cJSON_AddNumberToObject(z, "stage3_param_persistence_threshold", 1e5);
	}
	if (sim_dp_replicas(c) > 1) /* MiCS: ZeRO-3 within groups of this many ranks, replicated */
		cJSON_AddNumberToObject(z, "mics_shard_size", sim_dp_shard(c));
	if (c->dtype == HW_BF16) {
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
		/* the stages come from Megatron-DeepSpeed's --pipeline-model-parallel-size; the engine
		 * partitions the layers evenly (the planner's layout was even, check_framework says) */
		cJSON *p = cJSON_AddObjectToObject(o, "pipeline");
		cJSON_AddNumberToObject(p, "stages", c->pp);
		cJSON_AddStringToObject(p, "partition", "uniform");
	}
	char *s = cJSON_Print(o);
	cJSON_Delete(o);
	return s;
}

static void
deepspeed_args(ex *x, const char *indent)
{
	const sim_train_cfg *c = x->c;
	const model_tf *t = x->t;
	const char *nl = " \\\n";
#define ARG(...) (add(x, "%s%s", nl, indent), add(x, __VA_ARGS__))
	ARG("--tensor-model-parallel-size %d", c->tp);
	ARG("--pipeline-model-parallel-size %d", c->pp);
	if (c->pp == 1)
		ARG("--no-pipeline-parallel");
	if (c->sequence_parallel && c->tp > 1)
		ARG("--sequence-parallel");
	if (t->experts > 0) {
		ARG("--num-experts %lld", (long long)t->experts);
		ARG("--topk %lld", (long long)t->top_k);
		ARG("--moe-expert-parallel-size %d", c->ep);
	}
	ARG("--micro-batch-size %lld", (long long)c->micro_batch);
	ARG("--global-batch-size %lld", (long long)c->global_batch);
	ARG("--seq-length %lld", (long long)x->seq);
	ARG("--max-position-embeddings %lld", (long long)(t->max_pos > x->seq ? t->max_pos : x->seq));
	ARG("--num-layers %lld", (long long)t->layers);
	ARG("--hidden-size %lld", (long long)t->hidden);
	ARG("--num-attention-heads %lld", (long long)t->heads);
	if (t->kv_heads != t->heads)
		ARG("--num-key-value-heads %lld", (long long)t->kv_heads);
	if (t->head_dim * t->heads != t->hidden)
		ARG("--kv-channels %lld", (long long)t->head_dim);
	if (t->ffn > 0)
		ARG("--ffn-hidden-size %lld", (long long)t->ffn);
	if (t->mlp == MODEL_MLP_SWIGLU)
		ARG("--swiglu");
	ARG("--normalization %s", t->norm == MODEL_NORM_RMSNORM ? "rmsnorm" : "layernorm");
	if (t->norm_eps > 0)
		ARG("--layernorm-epsilon %g", t->norm_eps);
	if (t->pos == MODEL_POS_ROPE) {
		ARG("--use-rotary-position-embeddings");
		if (t->rope_theta > 0)
			ARG("--rotary-position-embeddings-theta %.0f", t->rope_theta);
	}
	if (!t->tied_embeddings)
		ARG("--untie-embeddings-and-output-weights");
	if (!t->bias)
		ARG("--disable-bias-linear");
	ARG("--attention-dropout 0");
	ARG("--hidden-dropout 0");
	if (c->attention != SIM_ATTN_UNFUSED)
		ARG("--use-flash-attn-v2");
	if (c->recompute == SIM_RECOMPUTE_SELECTIVE) {
		ARG("--recompute-granularity selective");
	} else if (c->recompute == SIM_RECOMPUTE_FULL) {
		ARG("--deepspeed-activation-checkpointing");
		ARG("--checkpoint-activations");
	}
	if (c->dtype == HW_BF16)
		ARG("--bf16");
	else if (c->dtype == HW_FP16)
		ARG("--fp16");
	ARG("--zero-stage %d", c->zero);
	ARG("--deepspeed");
	ARG("--deepspeed_config \"$DS_CONFIG\"");
	ARG("--train-iters \"$TRAIN_ITERS\"");
	ARG("--lr \"$LR\"");
	ARG("--min-lr \"$MIN_LR\"");
	ARG("--lr-decay-style cosine");
	ARG("--lr-warmup-iters \"$LR_WARMUP_ITERS\"");
	ARG("--weight-decay 0.1");
	ARG("--clip-grad 1.0");
	ARG("--adam-beta1 0.9");
	ARG("--adam-beta2 0.95");
	ARG("--init-method-std 0.02");
	ARG("--tokenizer-type HFTokenizer");
	ARG("--tokenizer-model \"$TOKENIZER_MODEL\"");
	ARG("--data-path \"$DATA_PATH\"");
	ARG("--split 99,1,0");
	ARG("--save \"$CHECKPOINT_DIR\"");
	ARG("--load \"$CHECKPOINT_DIR\"");
	ARG("--log-interval 10");
	ARG("--eval-interval 1000");
	ARG("--eval-iters 10");
#undef ARG
}

/* ---- the launchers ----------------------------------------------------------------------------- */

/* What a node runs: the files it writes first (torchtitan's TOML, DeepSpeed's JSON, the Bridge
 * script) and the program torchrun starts with its arguments. */
static void
payload_files(ex *x, const char *tt_name, const char *tt_flavor)
{
	if (!strcmp(x->fw->name, "torchtitan")) {
		add(x, "cat > \"$RUN_DIR/plan.toml\" <<'EOF'\n");
		titan_toml(x, tt_name, tt_flavor);
		add(x, "EOF\n");
	} else if (!strcmp(x->fw->name, "deepspeed")) {
		char *j = deepspeed_json(x);
		add(x, "cat > \"$RUN_DIR/ds_config.json\" <<'EOF'\n%s\nEOF\nDS_CONFIG=\"$RUN_DIR/ds_config.json\"\n", j ? j : "{}");
		free(j);
	} else if (!strcmp(x->fw->name, "nemo")) {
		add(x, "cat > \"$RUN_DIR/pretrain_plan.py\" <<'EOF'\n");
		bridge_script(x);
		add(x, "EOF\n");
	}
}

static void
payload_program(ex *x, const char *indent)
{
	if (!strcmp(x->fw->name, "torchtitan")) {
		add(x, "%s-m torchtitan.train --job.config_file \"$RUN_DIR/plan.toml\"", indent);
	} else if (!strcmp(x->fw->name, "nemo")) {
		add(x, "%s\"$RUN_DIR/pretrain_plan.py\"", indent);
	} else if (!strcmp(x->fw->name, "deepspeed")) {
		add(x, "%s\"$MEGATRON_DEEPSPEED/pretrain_gpt.py\"", indent);
		deepspeed_args(x, indent);
	} else {
		add(x, "%s\"$MEGATRON_LM/pretrain_gpt.py\"", indent);
		megatron_args(x, indent);
	}
}

/* The placeholders of what the framework reads, by framework. */
static void
payload_fill(const ex *x, const char **fill, int *n)
{
	const char *name = x->fw->name;
	if (!strcmp(name, "torchtitan")) {
		fill[(*n)++] = "the FILL-IN strings and zeros of the TOML below: data, tokenizer, output directory, learning "
			       "rate, warm-up and steps (a plan does not choose them)";
	} else if (!strcmp(name, "deepspeed")) {
		fill[(*n)++] = "MEGATRON_DEEPSPEED a Megatron-DeepSpeed checkout (its pretrain_gpt.py)";
		for (int i = 1; megatron_fill[i] != NULL; i++)
			fill[(*n)++] = megatron_fill[i];
	} else if (!strcmp(name, "nemo")) {
		for (int i = 1; megatron_fill[i] != NULL; i++)
			fill[(*n)++] = megatron_fill[i];
	} else {
		for (int i = 0; megatron_fill[i] != NULL; i++)
			fill[(*n)++] = megatron_fill[i];
	}
}

static void
payload_require(ex *x)
{
	const char *name = x->fw->name;
	static const char *const mg[] = {"MEGATRON_LM", "DATA_PATH", "TOKENIZER_MODEL", "CHECKPOINT_DIR", "TRAIN_ITERS",
					 "LR", "MIN_LR", "LR_WARMUP_ITERS", NULL};
	static const char *const ds[] = {"MEGATRON_DEEPSPEED", "DATA_PATH", "TOKENIZER_MODEL", "CHECKPOINT_DIR",
					 "TRAIN_ITERS", "LR", "MIN_LR", "LR_WARMUP_ITERS", NULL};
	if (!strcmp(name, "deepspeed"))
		require_vars(x, ds);
	else if (!strcmp(name, "megatron"))
		require_vars(x, mg);
	else if (!strcmp(name, "nemo"))
		require_vars(x, mg + 1);
}

/* A script run on every node: torchrun with a static rendezvous on the first node. */
static void
torchrun_script(ex *x, const char *tt_name, const char *tt_flavor)
{
	const char *fill[16];
	int n = 0;
	payload_fill(x, fill, &n);
	for (int i = 0; launch_fill[i] != NULL; i++)
		fill[n++] = launch_fill[i];
	fill[n] = NULL;
	char version[256];
	snprintf(version, sizeof version, "%s, launched by torchrun",
		 !strcmp(x->fw->name, "torchtitan") ? TITAN_AT : !strcmp(x->fw->name, "nemo") ? BRIDGE_AT
							   : !strcmp(x->fw->name, "deepspeed") ? DEEPSPEED_AT : MEGATRON_AT);
	add(x, "#!/bin/bash\n");
	header(x, "#", version, fill);
	add(x, "set -euo pipefail\n");
	payload_require(x);
	add(x, ": \"${MASTER_ADDR:?MASTER_ADDR is a placeholder: see the list at the top}\"\n");
	add(x, ": \"${NODE_RANK:?NODE_RANK is a placeholder: see the list at the top}\"\n");
	add(x, "RUN_DIR=${RUN_DIR:-$(pwd)}\n");
	payload_files(x, tt_name, tt_flavor);
	megatron_env(x);
	add(x, "torchrun --nnodes %d --nproc-per-node %d --node-rank \"$NODE_RANK\" \\\n"
	       "    --master-addr \"$MASTER_ADDR\" --master-port 29500 \\\n",
	    x->nodes, x->per_node);
	payload_program(x, "    ");
	add(x, "\n");
}

/* The job name sbatch is given: the model's name with every character but letters, digits,
 * '.', '_' and '-' made '_' (sbatch splits an #SBATCH line at blanks and reads quotes, so a
 * model file's name could otherwise add options of its own). */
static void
slurm_job_name(const char *name, char *out, size_t n)
{
	size_t i = 0;
	for (; name[i] != '\0' && i + 1 < n; i++) {
		unsigned char ch = (unsigned char)name[i];
		out[i] = isalnum(ch) || ch == '.' || ch == '_' || ch == '-' ? (char)ch : '_';
	}
	out[i] = '\0';
}

/* A SLURM batch script: one task per node, each running torchrun, which starts a process per
 * GPU; the c10d rendezvous on the first node of the allocation. */
static void
slurm_script(ex *x, const char *tt_name, const char *tt_flavor)
{
	const char *fill[16];
	int n = 0;
	payload_fill(x, fill, &n);
	fill[n] = NULL;
	char version[256];
	snprintf(version, sizeof version, "%s, launched by Slurm 25.11 (sbatch, srun) and torchrun",
		 !strcmp(x->fw->name, "torchtitan") ? TITAN_AT : !strcmp(x->fw->name, "nemo") ? BRIDGE_AT
							   : !strcmp(x->fw->name, "deepspeed") ? DEEPSPEED_AT : MEGATRON_AT);
	add(x, "#!/bin/bash\n");
	char job[64];
	slurm_job_name(model_name(x->m), job, sizeof job);
	add(x, "#SBATCH --job-name=%s\n", job);
	add(x, "#SBATCH --nodes=%d\n", x->nodes);
	add(x, "#SBATCH --ntasks-per-node=1\n");
	add(x, "#SBATCH --gpus-per-node=%d\n", x->per_node);
	add(x, "#SBATCH --exclusive\n");
	header(x, "#", version, fill);
	add(x, "set -euo pipefail\n");
	payload_require(x);
	add(x, "RUN_DIR=${RUN_DIR:-$SLURM_SUBMIT_DIR}\n");
	payload_files(x, tt_name, tt_flavor);
	add(x, "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n");
	megatron_env(x);
	add(x, "srun --nodes=%d --ntasks-per-node=1 --kill-on-bad-exit=1 \\\n"
	       "    torchrun --nnodes %d --nproc-per-node %d --rdzv-id \"$SLURM_JOB_ID\" \\\n"
	       "    --rdzv-backend c10d --rdzv-endpoint \"$MASTER_ADDR:29500\" \\\n",
	    x->nodes, x->nodes, x->per_node);
	payload_program(x, "    ");
	add(x, "\n");
}

/* DeepSpeed's own launcher over a hostfile, with the JSON it reads. */
static void
deepspeed_script(ex *x)
{
	const char *fill[16];
	int n = 0;
	payload_fill(x, fill, &n);
	fill[n++] = "HOSTFILE         the nodes, one 'host slots=N' line each (DeepSpeed's hostfile)";
	fill[n] = NULL;
	add(x, "#!/bin/bash\n");
	header(x, "#", DEEPSPEED_AT, fill);
	add(x, "# The layout is in the launcher's arguments below (tensor and pipeline parallelism are Megatron-\n"
	       "# DeepSpeed's, ZeRO DeepSpeed's): ds_config.json alone does not hold it.\n");
	add(x, "set -euo pipefail\n");
	payload_require(x);
	add(x, ": \"${HOSTFILE:?HOSTFILE is a placeholder: see the list at the top}\"\n");
	add(x, "RUN_DIR=${RUN_DIR:-$(pwd)}\n");
	payload_files(x, NULL, NULL);
	add(x, "export CUDA_DEVICE_MAX_CONNECTIONS=1\n");
	add(x, "deepspeed --num_nodes %d --num_gpus %d --hostfile \"$HOSTFILE\" \\\n", x->nodes, x->per_node);
	payload_program(x, "    ");
	add(x, "\n");
}

/* ---- entry --------------------------------------------------------------------------------- */

void
plan_export_opts_init(plan_export_opts *o)
{
	memset(o, 0, sizeof *o);
}

int
plan_export_config(const model *m, const hw_system *sys, const sim_train_cfg *c, const plan_export_opts *o,
		   char **out, char *err, size_t errlen)
{
	*out = NULL;
	const model_tf *t = model_transformer(m);
	plan_export kind = o->kind;
	if ((unsigned)kind >= PLAN_EXPORT_NKINDS)
		return pp_err(err, errlen, PP_EUSAGE, "unknown export");
	if (t == NULL)
		return refuse(err, errlen, plan_export_name(kind),
			      "launch configurations are written for transformers and this is a CNN", NULL);
	/* the exporters write pre-training launches; a LoRA/QLoRA run is launched by PEFT-aware
	 * tools (torchtune, NeMo's PEFT recipes, axolotl) whose settings are not written yet */
	if (c->lora_rank > 0)
		return refuse(err, errlen, plan_export_name(kind),
			      "LoRA fine-tuning (--lora-rank) is not written by the exporters: they launch full training", NULL);
	ex x = {.m = m, .t = t, .sys = sys, .c = c, .o = o};
	/* what runs it: the export's own framework, or for a launcher the one ranked with */
	const char *fw = kind == PLAN_EXPORT_NEMO ? "nemo" : kind == PLAN_EXPORT_TORCHTITAN ? "torchtitan"
						     : kind == PLAN_EXPORT_DEEPSPEED ? "deepspeed" : "megatron";
	if ((kind == PLAN_EXPORT_TORCHRUN || kind == PLAN_EXPORT_SLURM) && o->framework != NULL)
		fw = o->framework->name;
	x.fw = plan_framework_find(fw);
	if (x.fw == NULL || !strcmp(fw, "llm-foundry") || !strcmp(fw, "pytorch") || !strcmp(fw, "maxtext"))
		return refuse(err, errlen, plan_export_name(kind), "no launch configuration is written for this framework",
			      "rank with --framework megatron, nemo, torchtitan or deepspeed");
	int rc = check_framework(&x, plan_export_name(kind), err, errlen);
	if (rc != 0)
		return rc;
	int gpn = o->gpus_per_node > 0 ? o->gpus_per_node : sys->gpus_per_node > 0 ? sys->gpus_per_node : 1;
	x.per_node = c->gpus < gpn ? c->gpus : gpn;
	if (c->gpus % x.per_node != 0)
		return refuse(err, errlen, plan_export_name(kind), "the GPUs do not fill whole nodes", NULL);
	x.nodes = c->gpus / x.per_node;
	x.seq = c->seq > 0 ? c->seq : t->seq;
	x.micro = c->global_batch / ((int64_t)c->dp * c->micro_batch);
	const char *tt_name = NULL, *tt_flavor = NULL;
	if (!strcmp(x.fw->name, "torchtitan") && (rc = titan_model(&x, &tt_name, &tt_flavor, err, errlen)) != 0)
		return rc;
	if (!strcmp(x.fw->name, "torchtitan") && sim_grad_bytes(c) != 4)
		return refuse(err, errlen, "torchtitan",
			      "torchtitan 0.2.1 reduces gradients in float32 only (training.mixed_precision_reduce), and the "
			      "plan reduced them in 16 bits",
			      "rank with --framework torchtitan, which prices its fp32 reduction");
	/* MiCS forms its shard groups over consecutive global ranks, which are data-parallel ranks
	 * only when nothing else splits the model */
	if (!strcmp(x.fw->name, "deepspeed") && sim_dp_replicas(c) > 1 && c->tp * c->pp * c->cp > 1)
		return refuse(err, errlen, "deepspeed",
			      "the plan shards ZeRO-3 over replicated groups (MiCS) together with tensor, pipeline or context "
			      "parallelism, and MiCS groups consecutive ranks of the whole job",
			      "pin --dp-shard to the data parallelism, or --tp 1 --pp 1 --cp 1");
	/* DeepSpeed's pipeline engine accumulates gradients over its micro-batches itself */
	pp_str s = {0};
	x.s = &s;
	switch (kind) {
	case PLAN_EXPORT_MEGATRON:
	case PLAN_EXPORT_TORCHRUN:
		torchrun_script(&x, tt_name, tt_flavor);
		break;
	case PLAN_EXPORT_SLURM:
		slurm_script(&x, tt_name, tt_flavor);
		break;
	case PLAN_EXPORT_DEEPSPEED:
		deepspeed_script(&x);
		break;
	case PLAN_EXPORT_TORCHTITAN: {
		const char *fill[] = {"the FILL-IN strings and zeros below: data, tokenizer, output directory, learning rate, "
				      "warm-up and steps (a plan does not choose them)",
				      NULL};
		char launch[200];
		header(&x, "#", TITAN_AT, fill);
		snprintf(launch, sizeof launch,
			 "# Launch on each of the %d node%s: torchrun --nnodes %d --nproc-per-node %d --node-rank N "
			 "--master-addr HOST -m torchtitan.train --job.config_file THIS.toml\n\n",
			 x.nodes, x.nodes == 1 ? "" : "s", x.nodes, x.per_node);
		pp_str_add(&s, launch);
		titan_toml(&x, tt_name, tt_flavor);
		break;
	}
	case PLAN_EXPORT_NEMO: {
		const char *fill[16];
		int n = 0;
		payload_fill(&x, fill, &n);
		fill[n] = NULL;
		header(&x, "#", BRIDGE_AT, fill);
		add(&x, "# Launch on each of the %d node%s: torchrun --nnodes %d --nproc-per-node %d --node-rank N "
			"--master-addr HOST THIS.py\n",
		    x.nodes, x.nodes == 1 ? "" : "s", x.nodes, x.per_node);
		bridge_script(&x);
		break;
	}
	default:
		break;
	}
	if (s.oom) {
		pp_str_free(&s);
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	}
	*out = pp_str_detach(&s);
	return 0;
}

/* ---- serving ----------------------------------------------------------------------------------- */

static const char *const engine_names[] = {"vllm", "sglang", "trtllm"};

int
plan_engine_parse(const char *s, plan_engine *out)
{
	for (int i = 0; i < 3; i++)
		if (!strcmp(s, engine_names[i])) {
			*out = (plan_engine)i;
			return 0;
		}
	return PP_EUSAGE;
}

int
plan_export_serve(const struct cJSON *dep, const char *model_ref, plan_engine engine, char **out, char *err,
		  size_t errlen)
{
	*out = NULL;
	const cJSON *tpj = cJSON_GetObjectItemCaseSensitive(dep, "tp"), *ppj = cJSON_GetObjectItemCaseSensitive(dep, "pp");
	const cJSON *wj = cJSON_GetObjectItemCaseSensitive(dep, "weights"), *sj = cJSON_GetObjectItemCaseSensitive(dep, "max_num_seqs");
	const cJSON *tj = cJSON_GetObjectItemCaseSensitive(dep, "max_num_batched_tokens");
	const cJSON *kj = cJSON_GetObjectItemCaseSensitive(dep, "kv_cache_dtype");
	const cJSON *gj = cJSON_GetObjectItemCaseSensitive(dep, "gpu_memory_utilization");
	const cJSON *dj = cJSON_GetObjectItemCaseSensitive(dep, "disaggregation");
	const cJSON *rj = cJSON_GetObjectItemCaseSensitive(dep, "replicas");
	const cJSON *yj = cJSON_GetObjectItemCaseSensitive(dep, "system");
	const cJSON *fj = cJSON_GetObjectItemCaseSensitive(dep, "prefill");
	if (!cJSON_IsNumber(tpj) || !cJSON_IsNumber(ppj) || !cJSON_IsString(wj) || !cJSON_IsNumber(sj) || !cJSON_IsNumber(tj) ||
	    !cJSON_IsString(kj) || !cJSON_IsNumber(gj) || !cJSON_IsNumber(rj) || !cJSON_IsString(yj) || !cJSON_IsString(fj))
		return pp_err(err, errlen, PP_EINPUT, "the deployment lacks the fields a serve command needs");
	const char *name = engine_names[engine];
	/* how prompts entered the batch as planned: TensorRT-LLM's chunked context is a flag; vLLM V1
	 * always chunks; SGLang runs prefill batches apart (its mixed chunks are not written) */
	bool chunked = !strcmp(fj->valuestring, "chunked");
	if (!chunked && strcmp(fj->valuestring, "mixed") != 0 && strcmp(fj->valuestring, "separate") != 0)
		return pp_err(err, errlen, PP_EINPUT, "the deployment's \"prefill\" is not chunked, mixed or separate");
	/* speculative decoding as planned: vLLM's draft options; the other engines' are not written
	 * yet */
	const cJSON *spj = cJSON_GetObjectItemCaseSensitive(dep, "speculative");
	const cJSON *spm = cJSON_GetObjectItemCaseSensitive(spj, "method"), *spk = cJSON_GetObjectItemCaseSensitive(spj, "tokens");
	bool spec = spj != NULL;
	if (spec && (!cJSON_IsString(spm) || !cJSON_IsNumber(spk) || spk->valuedouble < 1 || spk->valuedouble > 64 ||
		     (strcmp(spm->valuestring, "ngram") && strcmp(spm->valuestring, "eagle"))))
		return pp_err(err, errlen, PP_EINPUT, "the deployment's \"speculative\" is not a method (ngram, eagle) and 1 to 64 tokens");
	if (spec && engine != PLAN_ENGINE_VLLM)
		return pp_err(err, errlen, PP_EUSAGE,
			      "--export %s does not write speculative decoding yet: export vllm, or add the engine's own "
			      "speculative options by hand",
			      name);
	if (cJSON_IsString(dj) && strcmp(dj->valuestring, "off") != 0 && engine != PLAN_ENGINE_SGLANG)
		return pp_err(err, errlen, PP_EUSAGE,
			      "--export %s cannot launch the ranked deployment: it disaggregates prefill and decode (%s), and "
			      "this export writes %s's unified server only; export sglang, or plan with --no-disaggregate",
			      name, dj->valuestring, name);
	const cJSON *ej = cJSON_GetObjectItemCaseSensitive(dep, "ep");
	if (cJSON_IsNumber(ej) && ej->valuedouble > 1)
		return pp_err(err, errlen, PP_EUSAGE,
			      "--export %s cannot launch the ranked deployment: it shards the experts (EP %d%s), and this "
			      "export writes no expert-parallel flags yet; use the table's layout by hand",
			      name, ej->valueint,
			      cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(dep, "attention_dp")) ? ", attention data-parallel" : "");
	if ((engine == PLAN_ENGINE_VLLM && !chunked) || (engine == PLAN_ENGINE_SGLANG && chunked))
		return pp_err(err, errlen, PP_EUSAGE,
			      "--export %s cannot launch the ranked deployment: it was planned with %s prefill, and this "
			      "export writes %s; plan with --engine %s and without --chunked-prefill",
			      name, chunked ? "chunked" : "whole-prompt",
			      engine == PLAN_ENGINE_VLLM ? "vLLM V1's chunked prefill" : "SGLang's separate prefill batches", name);
	int tp = tpj->valueint, pp = ppj->valueint, seqs = sj->valueint;
	long long toks = (long long)tj->valuedouble;
	const char *w = wj->valuestring, *kv = kj->valuestring;
	bool disagg = cJSON_IsString(dj) && strcmp(dj->valuestring, "off") != 0;
	pp_str s = {0};
	pp_str_addf(&s, "#!/bin/bash\n# %s: one replica of the deployment paraplan ranked first on %s -- tp %d, pp %d, %s weights, "
			"KV cache %s,\n# at most %d sequences and %lld tokens an iteration; %d replica%s (GPUs tp x pp each) "
			"behind a router.\n",
		    model_ref, yj->valuestring, tp, pp, w, kv, seqs, toks, rj->valueint, rj->valueint == 1 ? "" : "s");
	/* Weight formats: FP8 quantizes a bf16 checkpoint when it loads; INT8 and INT4 need a checkpoint
	 * quantized beforehand (AWQ/GPTQ int4, SmoothQuant/W8A8 int8), named by MODEL. */
	bool prequant = !strcmp(w, "int4") || !strcmp(w, "int8") || (engine == PLAN_ENGINE_TRTLLM && !strcmp(w, "fp8"));
	pp_str_addf(&s, "# Fill in before running:\n#   MODEL  the model: a Hugging Face name or path%s\n",
		    prequant ? ", of a checkpoint quantized to that format beforehand (the engine reads its quantization "
			       "config; a model published quantized -- gpt-oss in MXFP4, DeepSeek-V3 in FP8 -- is its "
			       "published checkpoint)"
			     : "");
	bool eagle = spec && !strcmp(spm->valuestring, "eagle");
	if (eagle)
		pp_str_add(&s, "#   DRAFT  the EAGLE draft head trained for MODEL (a Hugging Face name or path)\n");
	pp_str_add(&s, "set -euo pipefail\n: \"${MODEL:?MODEL is a placeholder: see the list at the top}\"\n");
	if (eagle)
		pp_str_add(&s, ": \"${DRAFT:?DRAFT is a placeholder: see the list at the top}\"\n");
	double mem = gj->valuedouble;
	switch (engine) {
	case PLAN_ENGINE_VLLM:
		pp_str_add(&s, "# Written for vLLM (vllm/engine/arg_utils.py at 001999d2).\n");
		pp_str_addf(&s, "vllm serve \"$MODEL\" --tensor-parallel-size %d --pipeline-parallel-size %d \\\n"
				"    --max-num-seqs %d --max-num-batched-tokens %lld --gpu-memory-utilization %.2f",
			    tp, pp, seqs, toks, mem);
		if (!strcmp(w, "fp8"))
			pp_str_add(&s, " \\\n    --quantization fp8");
		if (!strcmp(kv, "fp8"))
			pp_str_add(&s, " \\\n    --kv-cache-dtype fp8");
		/* speculative decoding as this vLLM takes it: a draft named by --speculative-model
		 * ("[ngram]": prompt lookup, its window up to 4 tokens as vLLM's documentation shows) */
		if (eagle)
			pp_str_addf(&s, " \\\n    --speculative-model \"$DRAFT\" --num-speculative-tokens %d", spk->valueint);
		else if (spec)
			pp_str_addf(&s, " \\\n    --speculative-model \"[ngram]\" --num-speculative-tokens %d --ngram-prompt-lookup-max 4",
				    spk->valueint);
		pp_str_add(&s, "\n");
		break;
	case PLAN_ENGINE_SGLANG: {
		pp_str_add(&s, "# Written for SGLang (python/sglang/srt/server_args.py at 001067ff).\n");
		char extra[160] = "";
		size_t k = 0;
		if (!strcmp(w, "fp8"))
			k += (size_t)snprintf(extra + k, sizeof extra - k, " \\\n    --quantization fp8");
		if (!strcmp(kv, "fp8"))
			snprintf(extra + k, sizeof extra - k, " \\\n    --kv-cache-dtype fp8_e4m3");
		const char *modes[2] = {NULL, NULL};
		int nm = 1;
		if (disagg) {
			modes[0] = "prefill";
			modes[1] = "decode";
			nm = 2;
			pp_str_addf(&s, "# Disaggregated %s (prefill:decode replicas): start the prefill and the decode servers of\n"
					"# each group on their own GPUs, and SGLang's router in front of them.\n",
				    dj->valuestring);
		}
		for (int i = 0; i < nm; i++) {
			pp_str_addf(&s, "python3 -m sglang.launch_server --model-path \"$MODEL\" --tp-size %d --pp-size %d \\\n"
					"    --max-running-requests %d --chunked-prefill-size %lld --mem-fraction-static %.2f%s",
				    tp, pp, seqs, toks, mem, extra);
			if (modes[i] != NULL)
				pp_str_addf(&s, " \\\n    --disaggregation-mode %s --port %d &", modes[i], 30000 + i);
			pp_str_add(&s, "\n");
		}
		break;
	}
	case PLAN_ENGINE_TRTLLM:
		pp_str_add(&s, "# Written for TensorRT-LLM (trtllm-serve, tensorrt_llm/commands/serve.py).\n");
		if (!strcmp(kv, "fp8")) {
			pp_str_add(&s, "cat > extra_llm_api_options.yaml <<'EOF'\nkv_cache_config:\n  dtype: fp8\nEOF\n");
		}
		pp_str_addf(&s, "trtllm-serve \"$MODEL\" --backend pytorch --tp_size %d --pp_size %d \\\n"
				"    --max_batch_size %d --max_num_tokens %lld --kv_cache_free_gpu_memory_fraction %.2f",
			    tp, pp, seqs, toks, mem);
		if (chunked)
			pp_str_add(&s, " \\\n    --enable_chunked_prefill");
		if (!strcmp(kv, "fp8"))
			pp_str_add(&s, " \\\n    --extra_llm_api_options extra_llm_api_options.yaml");
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
