/*
 * cmd_simulate.c -- 'paraplan simulate train|serve|infer': one training configuration, one
 * serving deployment, or batch inference of a CNN, predicted.
 */
#include "config.h"
#include "cli/cli.h"
#include "models/model.h"
#include "sim/sim.h"

#include <cJSON.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

static const char about_train[] =
	"Predicts one training step of model M on N GPUs of system S: step time, throughput, MFU,\n"
	"pipeline bubble, exposed communication and memory per pipeline stage.  DP defaults to\n"
	"N / (T x P x C).  A configuration whose degrees do not divide the GPUs, heads, layers or\n"
	"batch is a usage error that names the failed constraint; one that does not fit in memory\n"
	"is simulated and reported as out of memory with its breakdown.  The step time carries its\n"
	"80% interval: how far the framework's predictions have been from measured runs under\n"
	"cross-validation (docs/validation.md).\n";

static const char usage_top[] =
	"usage: paraplan simulate train ...   (see 'paraplan simulate train --help')\n"
	"       paraplan simulate serve ...   (see 'paraplan simulate serve --help')\n"
	"       paraplan simulate infer ...   (see 'paraplan simulate infer --help')\n";

static const char about_infer[] =
	"Predicts batch inference of a CNN: B images per replica in micro-batches of M, through P\n"
	"pipeline stages (contiguous layer ranges balanced by forward time, one GPU each, in one\n"
	"node; activations handed to the next stage over NVLink or PCIe while it computes the next\n"
	"micro-batch).  Prints the batch latency, images/s, the pipeline bubble and each stage's\n"
	"layers, time and memory (weights, live activations, receive buffers); a stage that does\n"
	"not fit its GPU is reported.  M defaults to B with one stage, else B / (4 P).\n";

static const char about_serve[] =
	"Simulates a serving deployment the way vLLM schedules it: continuous batching under\n"
	"--max-num-seqs (default 256) and a token budget per iteration (--max-batched-tokens,\n"
	"default 8192) with chunked prefill, a paged KV cache (16-token blocks, 90% of GPU memory)\n"
	"with preemption by recomputation, TP all-reduces per layer, replicas behind a router.\n"
	"DIST is a length (512) or uniform:min=A,max=B, lognormal:mean=M,sigma=S,\n"
	"exponential:mean=M, gamma:mean=M,cv=C (each may add ,max=N), or a dataset's lengths by name\n"
	"(also as dataset:NAME): mlperf-llama2-70b, mlperf-llama3.1-405b, mlperf-llama3.1-8b (prompt\n"
	"only), mlperf-mixtral-8x7b, mlperf-deepseek-r1, sharegpt (means, deviations and sources in\n"
	"docs/validation.md).  A trace file is CSV with a\n"
	"header arrival_s,prompt_tokens,output_tokens, or JSONL with those keys.\n"
	"\n"
	"Prints TTFT, TPOT, inter-token latency and end-to-end latency (mean, P50, P90, P99),\n"
	"throughput, goodput under the given SLO, KV-cache use and preemptions, and dollars per\n"
	"million tokens at the system's price.  A deployment that cannot keep up is reported as\n"
	"saturated.\n";

/* --straggler RANK:FACTOR */
static int
opt_straggler(const cli_opt *o, const char *val, char *err, size_t errlen)
{
	sim_train_cfg *c = o->target;
	const char *colon = strchr(val, ':');
	char rank[32];
	int64_t r;
	double f;
	if (colon == NULL || colon == val || (size_t)(colon - val) >= sizeof rank)
		return pp_err(err, errlen, PP_EUSAGE, "--straggler must be RANK:FACTOR, got \"%s\"", val);
	memcpy(rank, val, (size_t)(colon - val));
	rank[colon - val] = '\0';
	if (pp_parse_i64(rank, &r) != 0 || r < 0 || r > (1 << 24))
		return pp_err(err, errlen, PP_EUSAGE, "--straggler rank must be an integer from 0 to %d, got \"%s\"", 1 << 24, rank);
	if (pp_parse_double(colon + 1, &f) != 0 || !(f >= 1.0) || !(f <= 1000.0))
		return pp_err(err, errlen, PP_EUSAGE, "--straggler factor must be a number from 1 to 1000, got \"%s\"", colon + 1);
	c->straggler_rank = (int)r;
	c->straggler = f;
	return 0;
}

/* --grad-reduce fp32|bf16|fp16: bytes per gradient element reduced */
static int
opt_grad_reduce(const cli_opt *o, const char *val, char *err, size_t errlen)
{
	int *bytes = o->target;
	if (!strcmp(val, "fp32"))
		*bytes = 4;
	else if (!strcmp(val, "bf16") || !strcmp(val, "fp16"))
		*bytes = 2;
	else
		return pp_err(err, errlen, PP_EUSAGE, "--grad-reduce must be fp32, bf16 or fp16, got \"%s\"", val);
	return 0;
}

static void
print_table(const cJSON *doc, const sim_train_result *r)
{
	const sim_metrics *m = sim_train_metrics(r);
	const cJSON *cfg = cJSON_GetObjectItem(doc, "config");
	char a[48], b[48];
	printf("%s on %.0f x %s: tp %.0f, pp %.0f, dp %.0f", cJSON_GetObjectItem(doc, "model")->valuestring,
	       cJSON_GetObjectItem(cfg, "gpus")->valuedouble, cJSON_GetObjectItem(doc, "system")->valuestring,
	       cJSON_GetObjectItem(cfg, "tp")->valuedouble, cJSON_GetObjectItem(cfg, "pp")->valuedouble,
	       cJSON_GetObjectItem(cfg, "dp")->valuedouble);
	if (cJSON_GetObjectItem(cfg, "cp")->valuedouble > 1)
		printf(", cp %.0f", cJSON_GetObjectItem(cfg, "cp")->valuedouble);
	if (cJSON_GetObjectItem(cfg, "ep")->valuedouble > 1) {
		printf(", ep %.0f", cJSON_GetObjectItem(cfg, "ep")->valuedouble);
		if (cJSON_GetObjectItem(cfg, "etp")->valuedouble != cJSON_GetObjectItem(cfg, "tp")->valuedouble)
			printf(" (etp %.0f)", cJSON_GetObjectItem(cfg, "etp")->valuedouble);
	}
	printf(", %s", cJSON_GetObjectItem(cfg, "schedule")->valuestring);
	if (cJSON_GetObjectItem(cfg, "vpp")->valuedouble > 1)
		printf(" (vpp %.0f)", cJSON_GetObjectItem(cfg, "vpp")->valuedouble);
	printf(", %.0f micro-batches of %.0f, recompute %s%s%s, %s", cJSON_GetObjectItem(cfg, "micro_batches")->valuedouble,
	       cJSON_GetObjectItem(cfg, "micro_batch")->valuedouble, cJSON_GetObjectItem(cfg, "recompute")->valuestring,
	       cJSON_IsTrue(cJSON_GetObjectItem(cfg, "sequence_parallel")) ? ", sequence parallel" : "",
	       cJSON_GetObjectItem(cfg, "zero")->valuedouble > 0 ? ", ZeRO" : "", cJSON_GetObjectItem(cfg, "dtype")->valuestring);
	if (cJSON_IsNumber(cJSON_GetObjectItem(cfg, "dp_shard")))
		printf(", sharded over %.0f data-parallel ranks x %.0f replicas",
		       cJSON_GetObjectItem(cfg, "dp_shard")->valuedouble, cJSON_GetObjectItem(cfg, "dp_replicas")->valuedouble);
	const cJSON *fw = cJSON_GetObjectItem(cfg, "framework");
	if (cJSON_IsString(fw))
		printf(", as %s runs it", fw->valuestring);
	printf("\n\n");
	const char *h[] = {"metric", "value"};
	cli_table *t = cli_table_new(2, h, "lr");
	cli_table_addf(t, 0, "step time");
	if (isfinite(m->step_lo_s)) {
		char lo[48], hi[48];
		cli_table_addf(t, 1, "%s (80%%: %s to %s)", cli_seconds(m->step_time_s, a, sizeof a),
			       cli_seconds(m->step_lo_s, lo, sizeof lo), cli_seconds(m->step_hi_s, hi, sizeof hi));
	} else {
		cli_table_addf(t, 1, "%s", cli_seconds(m->step_time_s, a, sizeof a));
	}
	const char *seqs = cJSON_GetObjectItem(cfg, "seq")->valuedouble > 1 ? "tokens/s" : "samples/s";
	cli_table_addf(t, 0, "throughput");
	cli_table_addf(t, 1, "%s (%s per GPU)", cli_si(m->tokens_per_s, seqs, a, sizeof a),
		       cli_si(m->tokens_per_s_per_gpu, seqs, b, sizeof b));
	cli_table_addf(t, 0, "model TFLOP/s per GPU");
	cli_table_addf(t, 1, "%.1f", m->model_tflops_per_gpu);
	cli_table_addf(t, 0, "hardware TFLOP/s per GPU");
	cli_table_addf(t, 1, "%.1f", m->hardware_tflops_per_gpu);
	cli_table_addf(t, 0, "MFU / HFU");
	cli_table_addf(t, 1, "%.1f%% / %.1f%%", 100.0 * m->mfu, 100.0 * m->hfu);
	cli_table_addf(t, 0, "pipeline bubble");
	cli_table_addf(t, 1, "%.1f%%", 100.0 * m->bubble_fraction);
	cli_table_addf(t, 0, "exposed communication");
	cli_table_addf(t, 1, "%s (%.1f%%)", cli_seconds(m->exposed_comm_s, a, sizeof a),
		       m->step_time_s > 0 ? 100.0 * m->exposed_comm_s / m->step_time_s : 0.0);
	const cJSON *ft = cJSON_GetObjectItem(doc, "finetune");
	if (ft != NULL) {
		cli_table_addf(t, 0, "fine-tuning");
		if (cJSON_GetObjectItem(cfg, "lora_rank") != NULL)
			cli_table_addf(t, 1, "%s rank %.0f on %s, %s base: %s trainable of %s", cli_str(ft, "method"),
				       cli_num(cfg, "lora_rank"), cli_str(cfg, "lora_modules"), cli_str(cfg, "base_dtype"),
				       cli_si(cli_num(ft, "trainable_params"), "", a, sizeof a),
				       cli_si(cli_num(ft, "frozen_params"), "", b, sizeof b));
		else
			cli_table_addf(t, 1, "full, %s trainable", cli_si(cli_num(ft, "trainable_params"), "", a, sizeof a));
		if (cJSON_GetObjectItem(cfg, "sample_len") != NULL) {
			cli_table_addf(t, 0, "packed samples");
			cli_table_addf(t, 1, "%.0f tokens each, attention within each sample", cli_num(cfg, "sample_len"));
		}
	}
	cli_table_addf(t, 0, "rests on");
	cli_table_addf(t, 1, "%.0f%% measured, %.0f%% fitted, %.0f%% datasheet", 100.0 * m->prov_share[HW_PROV_MEASURED],
		       100.0 * m->prov_share[HW_PROV_FITTED], 100.0 * m->prov_share[HW_PROV_DATASHEET]);
	cli_table_print(t, stdout);
	cli_table_free(t);
	printf("\nMemory per GPU%s\n\n", m->fits ? "" : "  -- DOES NOT FIT");
	const char *mh[] = {"stage", "weights", "grads", "optimizer", "activations", "other", "peak", "of", "fits"};
	t = cli_table_new(9, mh, "rrrrrrrrl");
	for (int s = 0; s < m->stages; s++) {
		const sim_mem *x = sim_train_stage_memory(r, s);
		char w[5][32];
		cli_table_addf(t, 0, "%d", s);
		cli_table_addf(t, 1, "%s", cli_bytes(x->weights, w[0], 32));
		cli_table_addf(t, 2, "%s", cli_bytes(x->grads, w[1], 32));
		cli_table_addf(t, 3, "%s", cli_bytes(x->optimizer, w[2], 32));
		cli_table_addf(t, 4, "%s", cli_bytes(x->activations, w[3], 32));
		cli_table_addf(t, 5, "%s", cli_bytes(x->comm_buffers + x->workspace + x->reserve, w[4], 32));
		cli_table_addf(t, 6, "%s", cli_bytes(x->total, a, sizeof a));
		cli_table_addf(t, 7, "%s", cli_bytes(x->capacity, b, sizeof b));
		cli_table_addf(t, 8, "%s", x->fits ? "yes" : "NO");
		if (m->stages > 8 && s == 3 && m->stages - 1 > 4)
			s = m->stages - 2; /* long pipelines: first four stages and the last */
	}
	cli_table_print(t, stdout);
	cli_table_free(t);
}

static int
simulate_train(int argc, char **argv)
{
	static const cli_cmd cmd = {
		"simulate train",
		"simulate train --model M --system S --gpus N --tp T --pp P [--dp D] [--cp C]\n"
		"                         [--ep E] [--etp T] [--vpp V] [--zero 0..3] [--fsdp] [--schedule gpipe|1f1b|interleaved|zb-h1]\n"
		"                         --micro-batch B --global-batch G [--seq L] [--recompute none|selective|full|op]\n"
		"                         [--[no-]sequence-parallel] [--dtype bf16|fp16|fp8|fp32] [--full] [--trace FILE] [--json]\n"
		"                         [--lora-rank R [--lora-modules LIST] [--base-dtype bf16|nf4]] [--sample-len L]\n",
		about_train,
		"  paraplan simulate train --model gpt3-175b --system dgx-a100 --gpus 1024 --tp 8 --pp 8 \\\n"
		"      --vpp 3 --micro-batch 1 --global-batch 1536 --recompute selective --sequence-parallel\n"};
	static const char *const attns[] = {"flash2", "unfused", "flash3", NULL};
	static const char *const recipes[] = {"delayed", "tensorwise", "rowwise", "mxfp8", NULL};
	static const char *const gathers[] = {"layer", "module", "tensor", NULL};
	static const char *const onoff[] = {"off", "on", NULL};
	sim_train_cfg c;
	sim_train_cfg_init(&c);
	const char *model_spec = NULL, *system = NULL, *db_path = NULL, *trace = NULL, *framework = HW_DEFAULT_FRAMEWORK;
	bool json = false;
	int gpn = 0, attn = 0, recipe = 0, gather = 0, regather = 0, prefetch = 0, onestream = 0;
	bool sp_on = false, sp_off = false, no_tp_overlap = false, no_wgrad_overlap = false;
	double bucket_mb = 0;
	c.gpus = 0; /* required */
	const cli_opt opts[] = {
		OPT_MODEL(&model_spec),
		OPT_SYSTEM(&system),
		OPT_INT("gpus", "N", &c.gpus, 1, 1 << 24, "GPUs in the job"),
		OPT_INT("tp", "T", &c.tp, 1, 1 << 16, "tensor-parallel degree"),
		OPT_INT("pp", "P", &c.pp, 1, 1 << 16, "pipeline-parallel degree"),
		OPT_INT("dp", "D", &c.dp, 1, 1 << 24, "data-parallel degree (default: N / (T x P x C))"),
		OPT_INT("cp", "C", &c.cp, 1, 1 << 16, "context-parallel degree"),
		OPT_INT("ep", "E", &c.ep, 1, 1 << 16, "expert-parallel degree"),
		OPT_INT("etp", "T", &c.etp, 1, 1 << 16,
			"the MoE layers' tensor parallelism (parallel folding: etp x ep divides T x C x D; default T where E "
			"divides D x C, else the largest divisor of T that fits)"),
		OPT_INT("vpp", "V", &c.vpp, 1, 1 << 10, "virtual stages per pipeline rank (the interleaved schedule)"),
		OPT_INT("zero", "Z", &c.zero, 0, 3, "ZeRO stage: 1 optimizer states, 2 + gradients, 3 + parameters"),
		OPT_SWITCH("fsdp", &c.fsdp, "ZeRO-3 as PyTorch FSDP FULL_SHARD does it (per-block gathers)"),
		OPT_INT("dp-shard", "S", &c.dp_shard, 1, 1 << 24,
			"hybrid sharding (HSDP): ZeRO shards over groups of S data-parallel ranks, which D / S replicas "
			"repeat (S divides D; default D: no replicas)"),
		OPT_CHOICE("zero3-gather", "G", &gather, gathers,
			   "ZeRO-3's parameter gathers: one collective a layer, one a module or one a tensor (default: "
			   "the framework's)"),
		OPT_CHOICE("zero3-regather", "on|off", &regather, onoff,
			   "ZeRO-3 with full recomputation: the backward gathers again what the recompute gathered and "
			   "released (default: the framework's; DeepSpeed on)"),
		OPT_CHOICE("zero3-prefetch", "on|off", &prefetch, onoff,
			   "ZeRO-3 gathers a layer's parameters one layer ahead, beside the compute (off: once the "
			   "layer before it is done; default: the framework's, on)"),
		OPT_CHOICE("dp-one-stream", "on|off", &onestream, onoff,
			   "ZeRO-2/3: reduce-scatters queue with the all-gathers on the DP group's one stream "
			   "(default: the framework's; PyTorch's on)"),
		OPT_SWITCH("offload-optimizer", &c.offload_optimizer,
			   "ZeRO-Offload: optimizer states and the optimizer step on the CPU (over PCIe)"),
		OPT_SCHEDULE("schedule", "NAME", &c.schedule, "pipeline schedule: gpipe, 1f1b (default), interleaved or zb-h1"),
		OPT_I64("micro-batch", "B", &c.micro_batch, 1, 1 << 24, "sequences per micro-batch"),
		OPT_I64("global-batch", "G", &c.global_batch, 1, (double)(1LL << 40), "sequences per step"),
		OPT_I64("seq", "L", &c.seq, 1, 1 << 24, "sequence length (default: the model's)"),
		OPT_RECOMPUTE("recompute", "R", &c.recompute, "activation recomputation: none (default), selective, full or op (per operator, as torchtitan)"),
		OPT_SWITCH("sequence-parallel", &sp_on, "sequence parallelism with TP (default: as the framework does)"),
		OPT_SWITCH("no-sequence-parallel", &sp_off, "no sequence parallelism"),
		OPT_SWITCH("no-tp-comm-overlap", &no_tp_overlap,
			   "do not overlap TP collectives with the GEMMs (default: as the framework does)"),
		OPT_SWITCH("no-tp-wgrad-overlap", &no_wgrad_overlap,
			   "do not run a block's backward TP all-reduce beside its first linear's weight gradient "
			   "(default: as the framework does; Megatron-Core does)"),
		OPT_CHOICE("fp8-recipe", "R", &recipe, recipes,
			   "how fp8 GEMMs are scaled: delayed, tensorwise, rowwise or mxfp8 (default: the framework's)"),
		OPT_DTYPE("dtype", "D", &c.dtype, "bf16 (default), fp16, fp8 (fp8 GEMMs, bf16 elsewhere) or fp32"),
		OPT_STR("framework", "NAME", &framework,
			"the training framework the step runs as: megatron (default), megatron-2021, torchtitan, llm-foundry, "
			"deepspeed, pytorch, maxtext, nemo-automodel ('paraplan hw profiles')"),
		OPT_CHOICE("attention", "K", &attn, attns, "attention kernels: flash2, flash3 or unfused (default: the framework's)"),
		OPT_NEGATE("no-overlap-grad-reduce", &c.overlap_grad_reduce,
			   "do not overlap the gradient reduction with the backward pass (default: as the framework does)"),
		OPT_FN("grad-reduce", "DTYPE", opt_grad_reduce, &c.grad_reduce_bytes, "gradient reduction in fp32, bf16 or fp16"),
		OPT_NUM("bucket-mb", "X", &bucket_mb, 0.001, 1e6, "gradient bucket size, MiB"),
		OPT_NUM("moe-imbalance", "F", &c.moe_imbalance, 1.0, 64.0, "tokens on the busiest expert over the mean"),
		OPT_NUM("moe-capacity", "F", &c.moe_capacity, 0.0, 64.0, "MoE capacity factor (0: no token dropping)"),
		OPT_INT("first-stage-layers", "N", &c.first_stage_layers, 1, 1 << 16, "layers of the first pipeline stage"),
		OPT_INT("last-stage-layers", "N", &c.last_stage_layers, 1, 1 << 16, "layers of the last pipeline stage"),
		OPT_SWITCH("full", &c.full, "simulate every rank (default: one representative rank per stage)"),
		OPT_FN("straggler", "R:F", opt_straggler, &c, "full mode: GPU R runs its compute F times slower"),
		OPT_INT("gpus-per-node", "N", &gpn, 1, 1024,
			"use N GPUs of each node (nodes of fewer GPUs, e.g. two nodes of 4); each keeps its NIC bandwidth, "
			"the NVLink domain shrinks to N"),
		OPT_FINETUNE(&c.lora_rank, &c.lora_modules, &c.base_nf4, &c.sample_len),
		OPT_OUT("trace", "FILE", &trace, "write a Chrome/Perfetto trace (open in ui.perfetto.dev)"),
		OPT_JSON(&json),
		OPT_DB(&db_path),
		OPT_END,
	};
	int st = cli_parse(&cmd, opts, argc, argv, NULL, 0, NULL);
	if (st != CLI_RUN)
		return st;
	if (bucket_mb > 0)
		c.bucket_bytes = bucket_mb * 1048576.0;
	if (trace != NULL)
		c.trace = true;
	bool have_gpus = c.gpus > 0, have_mb = cli_given(opts, "micro-batch"), have_gb = cli_given(opts, "global-batch");
	if (model_spec == NULL)
		return cli_usage("simulate train", "--model is required (a catalog name or a path)");
	if (system == NULL)
		return cli_usage("simulate train", "--system is required (see 'paraplan hw list')");
	if (!have_gpus)
		return cli_usage("simulate train", "--gpus is required");
	if (!have_mb || !have_gb)
		return cli_usage("simulate train", "--micro-batch and --global-batch are required");
	if (c.straggler_rank >= 0 && !c.full)
		return cli_usage("simulate train", "--straggler needs --full (every rank simulated)");
	if (sp_on && sp_off)
		return cli_usage("simulate train", "--sequence-parallel and --no-sequence-parallel contradict each other");

	char err[1024];
	model *m;
	int rc = cli_load_model(model_spec, &m, err, sizeof err);
	if (rc != 0)
		return cli_fail(rc == PP_ENOTFOUND ? PP_EUSAGE : rc, err);
	hw_db *db;
	if ((rc = cli_open_db(db_path, 0, &db)) != 0) {
		model_free(m);
		return rc;
	}
	hw_profile *fw;
	if ((rc = hw_profile_find(db, HW_SCOPE_FRAMEWORK, framework, &fw, err, sizeof err)) != 0) {
		hw_close(db);
		model_free(m);
		return cli_fail(rc, err);
	}
	/* the framework's way first, then what the command line says */
	sim_train_cfg_framework(&c, fw);
	if (cli_given(opts, "attention"))
		c.attention = (sim_attention)attn;
	if (cli_given(opts, "no-overlap-grad-reduce"))
		c.overlap_grad_reduce = false;
	if (sp_on || sp_off)
		c.sequence_parallel = sp_on;
	if (no_tp_overlap)
		c.tp_comm_overlap = false;
	if (no_wgrad_overlap)
		c.tp_wgrad_overlap = false;
	if (cli_given(opts, "fp8-recipe"))
		c.fp8_recipe = recipe;
	if (cli_given(opts, "zero3-gather"))
		c.zero3_gather = gather;
	if (cli_given(opts, "zero3-regather"))
		c.zero3_regather = regather == 1;
	if (cli_given(opts, "zero3-prefetch"))
		c.zero3_prefetch = prefetch == 1;
	if (cli_given(opts, "dp-one-stream"))
		c.dp_one_stream = onestream == 1;
	hw_cost *cost;
	rc = hw_cost_new(db, system, &cost, err, sizeof err);
	if (rc == 0 && gpn > 0 && (rc = hw_cost_use_gpus_per_node(cost, gpn, err, sizeof err)) != 0)
		hw_cost_free(cost);
	if (rc != 0) {
		hw_profile_free(fw);
		hw_close(db);
		model_free(m);
		return cli_fail(rc == PP_ENOTFOUND ? PP_EUSAGE : rc, err);
	}
	sim_train_result *res = NULL;
	rc = sim_train(m, cost, &c, &res, err, sizeof err);
	int status = 0;
	if (rc != 0) {
		status = cli_fail(rc, err);
	} else {
		if (trace != NULL && (rc = sim_train_trace(res, trace, err, sizeof err)) != 0)
			status = cli_fail(rc, err);
		if (status == 0) {
			cJSON *doc = sim_train_json(res);
			if (json)
				cli_print_json(doc, SIM_TRAIN_SCHEMA);
			else
				print_table(doc, res);
			cJSON_Delete(doc);
		}
	}
	sim_train_result_free(res);
	hw_cost_free(cost);
	hw_profile_free(fw);
	hw_close(db);
	model_free(m);
	return status;
}

/* published: the model's published weight format when the run took it for want of --weights
 * and it is not 16-bit ("mxfp4"), else NULL */
static void
print_serve(const cJSON *doc, const char *published)
{
	const cJSON *c = cJSON_GetObjectItem(doc, "config");
	char a[48], b[48];
	printf("%s on %s under %s: %.0f replica(s) of tp %.0f x pp %.0f (%.0f GPUs), %s weights%s%s%s, %s KV cache, %.0f "
	       "requests at %.3g/s\n",
	       cJSON_GetObjectItem(doc, "model")->valuestring, cJSON_GetObjectItem(doc, "system")->valuestring,
	       cJSON_GetObjectItem(c, "engine")->valuestring,
	       cJSON_GetObjectItem(c, "replicas")->valuedouble, cJSON_GetObjectItem(c, "tp")->valuedouble,
	       cJSON_GetObjectItem(c, "pp")->valuedouble, cJSON_GetObjectItem(c, "gpus")->valuedouble,
	       cJSON_GetObjectItem(c, "weights")->valuestring, published ? " (published as " : "", published ? published : "",
	       published ? ")" : "", cJSON_GetObjectItem(c, "kv_dtype")->valuestring,
	       cJSON_GetObjectItem(c, "requests")->valuedouble, cJSON_GetObjectItem(c, "rate")->valuedouble);
	const char *pf = cJSON_GetObjectItem(c, "prefill")->valuestring;
	printf("batch: up to %.0f sequences and %.0f tokens an iteration, prompts %s\n",
	       cJSON_GetObjectItem(c, "max_num_seqs")->valuedouble, cJSON_GetObjectItem(c, "max_batched_tokens")->valuedouble,
	       !strcmp(pf, "chunked") ? "in chunks beside the decodes"
	       : !strcmp(pf, "mixed") ? "whole beside the decodes"
				      : "in prefill-only iterations");
	const cJSON *ep = cJSON_GetObjectItem(c, "ep");
	if (cJSON_IsNumber(ep) && ep->valuedouble > 1)
		printf("MoE: the experts over EP %.0f, attention %s\n", ep->valuedouble,
		       cJSON_IsTrue(cJSON_GetObjectItem(c, "attention_dp")) ? "data-parallel on each GPU" : "tensor-parallel");
	putchar('\n');
	const char *h[] = {"latency", "mean", "P50", "P90", "P99"};
	cli_table *t = cli_table_new(5, h, "lrrrr");
	static const char *const keys[] = {"ttft_s", "tpot_s", "itl_s", "e2e_s"};
	static const char *const names[] = {"time to first token", "time per output token", "inter-token latency",
					    "end to end"};
	for (int i = 0; i < 4; i++) {
		const cJSON *p = cJSON_GetObjectItem(doc, keys[i]);
		static const char *const q[] = {"mean", "p50", "p90", "p99"};
		cli_table_addf(t, 0, "%s", names[i]);
		for (int j = 0; j < 4; j++)
			cli_table_addf(t, 1 + j, "%s", cli_seconds(cJSON_GetObjectItem(p, q[j])->valuedouble, a, sizeof a));
	}
	cli_table_print(t, stdout);
	cli_table_free(t);
	putchar('\n');
	const char *h2[] = {"metric", "value"};
	t = cli_table_new(2, h2, "lr");
	cli_table_addf(t, 0, "throughput");
	cli_table_addf(t, 1, "%.3g requests/s, %s (%s per GPU)", cJSON_GetObjectItem(doc, "requests_per_s")->valuedouble,
		       cli_si(cJSON_GetObjectItem(doc, "output_tokens_per_s")->valuedouble, "output tokens/s", a, sizeof a),
		       cli_si(cJSON_GetObjectItem(doc, "output_tokens_per_s_per_gpu")->valuedouble, "", b, sizeof b));
	/* the 80% intervals, where the engine's cross-validation gave them */
	static const char *const ivk[] = {"output_tokens_per_s_interval", "ttft_mean_interval_s", "tpot_mean_interval_s"};
	static const char *const ivn[] = {"output tokens/s", "mean TTFT", "mean TPOT"};
	char line[256] = "";
	for (int i = 0; i < 3; i++) {
		const cJSON *v = cJSON_GetObjectItem(doc, ivk[i]);
		if (cJSON_GetArraySize(v) != 2)
			continue;
		double lo = cJSON_GetArrayItem(v, 0)->valuedouble, hi = cJSON_GetArrayItem(v, 1)->valuedouble;
		size_t n = strlen(line);
		if (i == 0)
			snprintf(line + n, sizeof line - n, "%s%s %s to %s", n ? "; " : "", ivn[i], cli_si(lo, "", a, sizeof a),
				 cli_si(hi, "", b, sizeof b));
		else
			snprintf(line + n, sizeof line - n, "%s%s %s to %s", n ? "; " : "", ivn[i], cli_seconds(lo, a, sizeof a),
				 cli_seconds(hi, b, sizeof b));
	}
	if (line[0]) {
		cli_table_addf(t, 0, "80%% interval");
		cli_table_addf(t, 1, "%s", line);
	}
	const cJSON *slo = cJSON_GetObjectItem(doc, "slo");
	if (cJSON_GetObjectItem(slo, "ttft_s")->valuedouble > 0 || cJSON_GetObjectItem(slo, "tpot_s")->valuedouble > 0 ||
	    cJSON_GetObjectItem(slo, "e2e_s")->valuedouble > 0) {
		cli_table_addf(t, 0, "goodput under the SLO");
		cli_table_addf(t, 1, "%.3g requests/s (%.1f%% of requests meet it)",
			       cJSON_GetObjectItem(doc, "goodput_requests_per_s")->valuedouble,
			       100.0 * cJSON_GetObjectItem(doc, "slo_attainment")->valuedouble);
	}
	if (cJSON_IsNumber(cJSON_GetObjectItem(doc, "spec_tokens_per_step"))) {
		const cJSON *sp = cJSON_GetObjectItem(c, "speculative");
		cli_table_addf(t, 0, "speculative decoding");
		cli_table_addf(t, 1, "%s, %.0f proposed: %.2f tokens per decode step (expected %.2f)", cli_str(sp, "method"),
			       cli_num(sp, "tokens"), cli_num(doc, "spec_tokens_per_step"), cli_num(sp, "expected_tokens_per_step"));
	}
	/* a GPU holds the replica's every token (its share of the heads), or with attention-DP
	 * only its own sequences' */
	const cJSON *adp = cJSON_GetObjectItem(c, "attention_dp");
	double kv_ranks = cJSON_IsTrue(adp) ? cJSON_GetObjectItem(c, "tp")->valuedouble : 1.0;
	cli_table_addf(t, 0, "KV cache");
	cli_table_addf(t, 1, "%.0f tokens per replica, %.1f%% used on average, %.1f%% peak, %.0f preemptions",
		       kv_ranks * cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "memory_per_gpu"), "kv_cache_tokens")->valuedouble,
		       100.0 * cJSON_GetObjectItem(doc, "kv_utilization_mean")->valuedouble,
		       100.0 * cJSON_GetObjectItem(doc, "kv_utilization_peak")->valuedouble,
		       cJSON_GetObjectItem(doc, "preemptions")->valuedouble);
	if (cJSON_GetObjectItem(doc, "usd_per_million_output_tokens")) {
		cli_table_addf(t, 0, "cost");
		cli_table_addf(t, 1, "$%.3f per million output tokens, $%.3f per million tokens ($%.2f/GPU-h)",
			       cJSON_GetObjectItem(doc, "usd_per_million_output_tokens")->valuedouble,
			       cJSON_GetObjectItem(doc, "usd_per_million_tokens")->valuedouble,
			       cJSON_GetObjectItem(doc, "price_usd_per_gpu_hour")->valuedouble);
	}
	cli_table_print(t, stdout);
	cli_table_free(t);
	if (cJSON_IsTrue(cJSON_GetObjectItem(doc, "saturated")))
		printf("\nSATURATED: requests arrive faster than the deployment serves them; latency grows with the run.\n"
		       "Add replicas or GPUs per replica, or lower the rate.\n");
}

/* --arrival poisson|gamma:cv=C|batch|closed:N|trace:FILE */
typedef struct arrival_arg {
	sim_serve_cfg *c;
	const char **trace_in;
} arrival_arg;

static int
opt_arrival(const cli_opt *o, const char *val, char *err, size_t errlen)
{
	arrival_arg *a = o->target;
	char e[256];
	if (!strncmp(val, "trace:", 6)) {
		if (val[6] == '\0')
			return pp_err(err, errlen, PP_EUSAGE, "--arrival trace:FILE needs the trace file's path");
		a->c->arrival = SIM_ARR_TRACE;
		*a->trace_in = val + 6;
		return 0;
	}
	if (sim_arrival_parse(val, &a->c->arrival, &a->c->arrival_param, e, sizeof e) != 0)
		return pp_err(err, errlen, PP_EUSAGE, "%s", e);
	return 0;
}

/* --disaggregate P:D */
static int
opt_disaggregate(const cli_opt *o, const char *val, char *err, size_t errlen)
{
	sim_serve_cfg *c = o->target;
	int pr, dr;
	char tail;
	if (sscanf(val, "%d:%d%c", &pr, &dr, &tail) != 2 || pr < 1 || dr < 1 || pr > 50000 || dr > 50000)
		return pp_err(err, errlen, PP_EUSAGE, "--disaggregate must be P:D (prefill and decode replicas), got \"%s\"", val);
	c->prefill_replicas = pr;
	c->decode_replicas = dr;
	return 0;
}

static int
simulate_serve(int argc, char **argv)
{
	static const cli_cmd cmd = {
		"simulate serve",
		"simulate serve --model M --system S --tp T [--pp P] [--replicas R] --rate QPS [--engine E]\n"
		"                         [--arrival poisson|gamma:cv=C|batch|closed:N|trace:FILE] [--prompt-len DIST]\n"
		"                         [--output-len DIST] [--requests N | --duration S] [--max-num-seqs N]\n"
		"                         [--max-batched-tokens N] [--chunked-prefill engine|on|off]\n"
		"                         [--weights bf16|fp8|fp4|int8|int4] [--kv-dtype bf16|fp8]\n"
		"                         [--ep E] [--attention-dp] [--moe-imbalance F] [--disaggregate P:D] [--router least-outstanding|round-robin]\n"
		"                         [--slo-ttft-p99 MS] [--slo-tpot-p99 MS] [--slo-e2e-p99 MS] [--price USD_PER_GPU_HOUR]\n"
		"                         [--prefix-hit R] [--spec ngram|eagle --spec-tokens K --spec-accept A]\n"
		"                         [--seed N] [--trace FILE] [--json] [--db FILE]\n",
		about_serve,
		"  paraplan simulate serve --model llama-3-70b --system dgx-h100 --tp 4 --replicas 2 --rate 10 \\\n"
		"      --prompt-len lognormal:mean=800,sigma=0.6 --output-len 256 --duration 300\n"};
	static const char *const routers[] = {"least-outstanding", "round-robin", NULL};
	int spec = SIM_SPEC_OFF, chunked = SIM_CHUNKED_ENGINE;
	sim_serve_cfg c;
	sim_serve_cfg_init(&c);
	const char *model_spec = NULL, *system = NULL, *db_path = NULL, *trace_out = NULL, *trace_in = NULL;
	const char *engine = HW_DEFAULT_ENGINE;
	bool json = false;
	int router = 0;
	char err[1024];
	arrival_arg arr = {&c, &trace_in};
	const cli_opt opts[] = {
		OPT_MODEL(&model_spec),
		OPT_SYSTEM(&system),
		OPT_INT("tp", "T", &c.tp, 1, 1024, "tensor-parallel degree of a replica"),
		OPT_INT("pp", "P", &c.pp, 1, 1024, "pipeline stages of a replica, a batch in each"),
		OPT_INT("replicas", "R", &c.replicas, 1, 100000, "replicas behind the router"),
		OPT_NUM("rate", "QPS", &c.rate, 1e-6, 1e7, "requests per second"),
		OPT_FN("arrival", "KIND", opt_arrival, &arr,
		       "poisson (default), gamma:cv=C, batch (all at once), closed:N (N in flight) or trace:FILE"),
		OPT_DIST("prompt-len", "DIST", &c.prompt, "prompt tokens (default 512)"),
		OPT_DIST("output-len", "DIST", &c.output, "output tokens (default 256)"),
		OPT_I64("requests", "N", &c.requests, 1, 10000000, "requests to simulate"),
		OPT_NUM("duration", "S", &c.duration_s, 0.001, 1e7, "seconds of arrivals to simulate"),
		OPT_STR("engine", "E", &engine,
			"the serving engine: vllm (default), vllm-v0, sglang, trtllm or generic ('paraplan hw profiles')"),
		OPT_INT("max-num-seqs", "N", &c.max_num_seqs, 1, 1 << 20, "sequences in a batch (default: the engine's)"),
		OPT_I64("max-batched-tokens", "N", &c.max_batched_tokens, 1, 1 << 22,
			"tokens per iteration (default: the engine's; an engine that runs whole prompts, at least the "
			"longest)"),
		OPT_CHUNKED(&chunked),
		OPT_DTYPE("weights", "W", &c.weights,
			  "weight format: bf16, fp8, fp4 (NVFP4 experts, Blackwell), int8 or int4 (default: as the model is "
			  "published, 'paraplan model show')"),
		OPT_DTYPE("kv-dtype", "D", &c.kv_dtype, "KV-cache dtype: bf16 (default) or fp8"),
		OPT_INT("ep", "E", &c.ep, 1, 1024, "MoE: shard the routed experts over E of the replica's --tp GPUs"),
		OPT_SWITCH("attention-dp", &c.attention_dp,
			   "MoE: attention data-parallel, each GPU with its own batch and KV cache (needs --ep)"),
		OPT_NUM("moe-imbalance", "F", &c.moe_imbalance, 1.0, 64.0,
			"busiest expert rank's tokens over the mean (default: uniform routing's, docs/moe.md)"),
		OPT_FN("disaggregate", "P:D", opt_disaggregate, &c, "P prefill and D decode replicas"),
		OPT_CHOICE("router", "R", &router, routers, "least-outstanding (default) or round-robin"),
		OPT_SERVE_FEATURES(&c.prefix_hit, &spec, &c.spec_tokens, &c.spec_accept),
		OPT_MS("slo-ttft-p99", "MS", &c.slo_ttft_s, 0.001, 1e9, "SLO on the P99 time to first token, ms"),
		OPT_MS("slo-tpot-p99", "MS", &c.slo_tpot_s, 0.001, 1e9, "SLO on the P99 time per output token, ms"),
		OPT_MS("slo-e2e-p99", "MS", &c.slo_e2e_s, 0.001, 1e9, "SLO on the P99 end-to-end latency, ms"),
		OPT_NUM("price", "USD", &c.price, 0.0001, 1e6, "USD per GPU-hour (default: the database's price for S)"),
		OPT_I64("seed", "N", (int64_t *)&c.seed, 0, SEED_MAX, "random seed (0 to 2^53, exact in the JSON output)"),
		OPT_OUT("trace", "FILE", &trace_out, "write a Chrome/Perfetto trace of the iterations"),
		OPT_JSON(&json),
		OPT_DB(&db_path),
		OPT_END,
	};
	int st = cli_parse(&cmd, opts, argc, argv, NULL, 0, NULL);
	if (st != CLI_RUN)
		return st;
	c.router = router == 0 ? SIM_ROUTE_LEAST_OUTSTANDING : SIM_ROUTE_ROUND_ROBIN;
	if (trace_out != NULL)
		c.keep_iterations = true;
	c.spec = (sim_spec_method)spec;
	c.chunked = (sim_chunked)chunked;
	if ((st = cli_spec_check("simulate serve", opts, spec)) != 0)
		return st;
	bool have_tp = cli_given(opts, "tp"), have_rate = cli_given(opts, "rate");
	if (model_spec == NULL || system == NULL)
		return cli_usage("simulate serve", "--model and --system are required");
	if (!have_tp)
		return cli_usage("simulate serve", "--tp is required");
	if (!have_rate && c.arrival != SIM_ARR_BATCH && c.arrival != SIM_ARR_CLOSED && c.arrival != SIM_ARR_TRACE)
		return cli_usage("simulate serve", "--rate is required (requests per second)");
	sim_request *trace = NULL;
	size_t ntrace = 0;
	int rc;
	if (trace_in != NULL) {
		if ((rc = sim_trace_load(trace_in, &trace, &ntrace, err, sizeof err)) != 0)
			return cli_fail(rc == PP_ENOTFOUND ? PP_EUSAGE : rc, err);
		c.trace = trace;
		c.ntrace = ntrace;
	}
	model *m = NULL;
	hw_db *db = NULL;
	hw_cost *cost = NULL;
	sim_serve_result *res = NULL;
	int status = 0;
	if ((rc = cli_load_model(model_spec, &m, err, sizeof err)) != 0) {
		status = cli_fail(rc == PP_ENOTFOUND ? PP_EUSAGE : rc, err);
		goto out;
	}
	if ((status = cli_open_db(db_path, 0, &db)) != 0)
		goto out;
	if ((rc = hw_cost_new(db, system, &cost, err, sizeof err)) != 0) {
		status = cli_fail(rc == PP_ENOTFOUND ? PP_EUSAGE : rc, err);
		goto out;
	}
	hw_profile *en;
	if ((rc = hw_profile_find(db, HW_SCOPE_ENGINE, engine, &en, err, sizeof err)) != 0) {
		status = cli_fail(rc, err);
		goto out;
	}
	sim_engine_from_profile(&c.engine, en);
	hw_profile_free(en);
	if (!cli_given(opts, "weights"))
		c.weights = sim_serve_released_weights(m, &hw_cost_system(cost)->gpu);
	if (!(c.price > 0)) {
		hw_price pr;
		if (hw_default_price(db, system, &pr, NULL, 0) == 0)
			c.price = pr.usd_per_gpu_hour;
	}
	if ((rc = sim_serve(m, cost, &c, &res, err, sizeof err)) != 0 ||
	    (rc = sim_serve_add_band(m, cost, res, err, sizeof err)) != 0) {
		status = cli_fail(rc, err);
		goto out;
	}
	if (trace_out != NULL && (rc = sim_serve_trace(res, trace_out, err, sizeof err)) != 0) {
		status = cli_fail(rc, err);
		goto out;
	}
	cJSON *doc = sim_serve_json(res);
	const model_tf *mt = model_transformer(m);
	if (json)
		cli_print_json(doc, SIM_SERVE_SCHEMA);
	else
		print_serve(doc, !cli_given(opts, "weights") && mt != NULL && mt->weights != MODEL_WEIGHTS_16BIT
					 ? model_weights_name(mt->weights)
					 : NULL);
	cJSON_Delete(doc);
out:
	sim_serve_result_free(res);
	hw_cost_free(cost);
	hw_close(db);
	model_free(m);
	free(trace);
	return status;
}

static void
print_infer(const cJSON *doc)
{
	const cJSON *cf = cJSON_GetObjectItem(doc, "config");
	char a[32], b[32], x[32], y[32], z[32], w[32];
	printf("%s on %s: %.0f replica(s) x %.0f pipeline stage(s) (%.0f GPUs), %s, batch %.0f in %.0f micro-batch(es) "
	       "of %.0f\n\n",
	       cJSON_GetObjectItem(doc, "model")->valuestring, cJSON_GetObjectItem(doc, "system")->valuestring,
	       cli_num(cf, "replicas"), cli_num(cf, "pp"), cli_num(cf, "gpus"), cJSON_GetObjectItem(cf, "dtype")->valuestring,
	       cli_num(cf, "batch"), cli_num(doc, "micro_batches"), cli_num(cf, "micro_batch"));
	printf("batch latency          %s (first micro-batch through all stages: %s)\n",
	       cli_seconds(cli_num(doc, "batch_latency_s"), a, sizeof a),
	       cli_seconds(cli_num(doc, "first_micro_batch_latency_s"), b, sizeof b));
	printf("throughput             %.0f images/s (%.0f per GPU), %.1f TFLOP/s per GPU\n", cli_num(doc, "images_per_s"),
	       cli_num(doc, "images_per_s_per_gpu"), cli_num(doc, "tflops_per_gpu"));
	printf("pipeline bubble        %.1f%% of the stages' time\n\n", 100.0 * cli_num(doc, "bubble_fraction"));
	const char *h[] = {"stage", "layers", "first", "last", "per micro-batch", "send", "weights", "activations",
			   "recv buffers", "peak", "capacity", "fits"};
	cli_table *t = cli_table_new(12, h, "rrllrrrrrrrl");
	const cJSON *st;
	cJSON_ArrayForEach(st, cJSON_GetObjectItem(doc, "stages"))
	{
		const cJSON *mem = cJSON_GetObjectItem(st, "memory");
		cli_table_addf(t, 0, "%.0f", cli_num(st, "stage"));
		cli_table_addf(t, 1, "%.0f", cli_num(st, "layers"));
		cli_table_addf(t, 2, "%s", cJSON_GetObjectItem(st, "first_layer")->valuestring);
		cli_table_addf(t, 3, "%s", cJSON_GetObjectItem(st, "last_layer")->valuestring);
		cli_table_addf(t, 4, "%s", cli_seconds(cli_num(st, "time_per_micro_batch_s"), a, sizeof a));
		cli_table_addf(t, 5, "%s", cli_seconds(cli_num(st, "send_per_micro_batch_s"), b, sizeof b));
		cli_table_addf(t, 6, "%s", cli_bytes(cli_num(mem, "weights_bytes"), x, sizeof x));
		cli_table_addf(t, 7, "%s", cli_bytes(cli_num(mem, "activation_bytes"), y, sizeof y));
		cli_table_addf(t, 8, "%s", cli_bytes(cli_num(mem, "receive_buffer_bytes"), z, sizeof z));
		cli_table_addf(t, 9, "%s", cli_bytes(cli_num(mem, "peak_bytes"), w, sizeof w));
		cli_table_addf(t, 10, "%s", cli_bytes(cli_num(mem, "capacity_bytes"), a, sizeof a));
		cli_table_addf(t, 11, "%s", cJSON_IsTrue(cJSON_GetObjectItem(mem, "fits")) ? "yes" : "NO");
	}
	cli_table_print(t, stdout);
	cli_table_free(t);
	if (!cJSON_IsTrue(cJSON_GetObjectItem(doc, "fits")))
		printf("\nOUT OF MEMORY: a stage exceeds its GPU; lower --micro-batch or add stages.\n");
}

static int
simulate_infer(int argc, char **argv)
{
	static const cli_cmd cmd = {
		"simulate infer",
		"simulate infer --model CNN --system S --batch B [--pp P] [--micro-batch M]\n"
		"                         [--replicas R] [--dtype fp16|bf16|fp32|tf32|int8] [--trace FILE] [--json] [--db FILE]\n",
		about_infer, "  paraplan simulate infer --model resnet-152 --system pcie-t4x4 --batch 4096 --pp 4\n"};
	sim_infer_cfg c;
	sim_infer_cfg_init(&c);
	const char *model_spec = NULL, *system = NULL, *db_path = NULL, *trace_out = NULL;
	bool json = false;
	char err[1024];
	const cli_opt opts[] = {
		OPT_MODEL(&model_spec),
		OPT_SYSTEM(&system),
		OPT_I64("batch", "B", &c.batch, 1, 100000000, "images per replica"),
		OPT_I64("micro-batch", "M", &c.micro_batch, 1, 100000000, "images per micro-batch"),
		OPT_INT("pp", "P", &c.pp, 1, 1024, "pipeline stages, one GPU each"),
		OPT_INT("replicas", "R", &c.replicas, 1, 1000000, "replicas side by side"),
		OPT_DTYPE("dtype", "D", &c.dtype, "fp16 (default), bf16, fp32, tf32 or int8"),
		OPT_OUT("trace", "FILE", &trace_out, "write a Chrome/Perfetto trace"),
		OPT_JSON(&json),
		OPT_DB(&db_path),
		OPT_END,
	};
	int st = cli_parse(&cmd, opts, argc, argv, NULL, 0, NULL);
	if (st != CLI_RUN)
		return st;
	bool have_batch = cli_given(opts, "batch");
	if (model_spec == NULL || system == NULL)
		return cli_usage("simulate infer", "--model and --system are required");
	if (!have_batch)
		return cli_usage("simulate infer", "--batch is required (images per replica)");
	model *m = NULL;
	hw_db *db = NULL;
	hw_cost *cost = NULL;
	sim_infer_result *res = NULL;
	int status = 0, rc;
	if ((rc = cli_load_model(model_spec, &m, err, sizeof err)) != 0) {
		status = cli_fail(rc == PP_ENOTFOUND ? PP_EUSAGE : rc, err);
		goto out;
	}
	if ((status = cli_open_db(db_path, 0, &db)) != 0)
		goto out;
	if ((rc = hw_cost_new(db, system, &cost, err, sizeof err)) != 0 ||
	    (rc = sim_infer(m, cost, &c, &res, err, sizeof err)) != 0 ||
	    (trace_out != NULL && (rc = sim_infer_trace(res, trace_out, err, sizeof err)) != 0)) {
		status = cli_fail(rc == PP_ENOTFOUND ? PP_EUSAGE : rc, err);
		goto out;
	}
	cJSON *doc = sim_infer_json(res, m);
	if (json)
		cli_print_json(doc, SIM_INFER_SCHEMA);
	else
		print_infer(doc);
	cJSON_Delete(doc);
out:
	sim_infer_result_free(res);
	hw_cost_free(cost);
	hw_close(db);
	model_free(m);
	return status;
}

int
cmd_simulate(int argc, char **argv)
{
	static const cli_sub subs[] = {
		{"train", simulate_train}, {"serve", simulate_serve}, {"infer", simulate_infer}, {NULL, NULL}};
	return cli_dispatch("simulate", usage_top, subs, argc, argv);
}
