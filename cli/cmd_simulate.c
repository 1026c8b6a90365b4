/*
 * cmd_simulate.c -- 'paraplan simulate train|serve|infer': one training configuration, one
 * serving deployment, or batch inference of a CNN, predicted.
 */
#include "config.h"
#include "cli/cli.h"
#include "models/model.h"
#include "sim/sim.h"

#include <cJSON.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char usage_train[] =
	"usage: paraplan simulate train --model M --system S --gpus N --tp T --pp P [--dp D] [--cp C]\n"
	"           [--ep E] [--vpp V] [--zero 0..3] [--fsdp] [--schedule gpipe|1f1b|interleaved|zb-h1]\n"
	"           --micro-batch B --global-batch G [--seq L] [--recompute none|selective|full]\n"
	"           [--sequence-parallel] [--dtype bf16|fp16|fp8|fp32] [--attention flash|unfused]\n"
	"           [--no-overlap-grad-reduce] [--grad-reduce fp32|bf16] [--bucket-mb X]\n"
	"           [--moe-imbalance F] [--moe-capacity F] [--first-stage-layers N] [--last-stage-layers N]\n"
	"           [--full [--straggler RANK:FACTOR]] [--gpus-per-node N] [--trace FILE] [--json]\n"
	"           [--db FILE]\n"
	"\n"
	"Predicts one training step of model M on N GPUs of system S: step time, throughput, MFU,\n"
	"pipeline bubble, exposed communication and memory per pipeline stage.  DP defaults to\n"
	"N / (T x P x C).  A configuration whose degrees do not divide the GPUs, heads, layers or\n"
	"batch is a usage error that names the failed constraint; one that does not fit in memory\n"
	"is simulated and reported as out of memory with its breakdown.\n"
	"\n"
	"  --full          simulate every rank (default: one representative rank per stage)\n"
	"  --gpus-per-node N  use N GPUs of each node (nodes of fewer GPUs, e.g. two nodes of 4);\n"
	"                  each keeps its NIC bandwidth, the NVLink domain shrinks to N\n"
	"  --straggler R:F full mode: GPU R runs its compute F times slower\n"
	"  --trace FILE    write a Chrome/Perfetto trace (open in ui.perfetto.dev)\n"
	"\n"
	"Example:\n"
	"  paraplan simulate train --model gpt3-175b --system dgx-a100 --gpus 1024 --tp 8 --pp 8 \\\n"
	"      --vpp 3 --micro-batch 1 --global-batch 1536 --recompute selective --sequence-parallel\n";

static const char usage_top[] =
	"usage: paraplan simulate train ...   (see 'paraplan simulate train --help')\n"
	"       paraplan simulate serve ...   (see 'paraplan simulate serve --help')\n"
	"       paraplan simulate infer ...   (see 'paraplan simulate infer --help')\n";

static const char usage_infer[] =
	"usage: paraplan simulate infer --model CNN --system S --batch B [--pp P] [--micro-batch M]\n"
	"           [--replicas R] [--dtype fp16|bf16|fp32|tf32|int8] [--trace FILE] [--json] [--db FILE]\n"
	"\n"
	"Predicts batch inference of a CNN: B images per replica in micro-batches of M, through P\n"
	"pipeline stages (contiguous layer ranges balanced by forward time, one GPU each, in one\n"
	"node; activations handed to the next stage over NVLink or PCIe while it computes the next\n"
	"micro-batch).  Prints the batch latency, images/s, the pipeline bubble and each stage's\n"
	"layers, time and memory (weights, live activations, receive buffers); a stage that does\n"
	"not fit its GPU is reported.  M defaults to B with one stage, else B / (4 P).\n"
	"\n"
	"Example:\n"
	"  paraplan simulate infer --model resnet-152 --system pcie-t4x4 --batch 4096 --pp 4\n";

static const char usage_serve[] =
	"usage: paraplan simulate serve --model M --system S --tp T [--pp P] [--replicas R] --rate QPS\n"
	"           [--arrival poisson|gamma:cv=C|batch|closed:N|trace:FILE] [--prompt-len DIST]\n"
	"           [--output-len DIST] [--requests N | --duration S] [--max-num-seqs N]\n"
	"           [--max-batched-tokens N] [--weights bf16|fp8|int8|int4] [--kv-dtype bf16|fp8]\n"
	"           [--disaggregate P:D] [--router least-outstanding|round-robin]\n"
	"           [--slo-ttft-p99 MS] [--slo-tpot-p99 MS] [--slo-e2e-p99 MS] [--price USD_PER_GPU_HOUR]\n"
	"           [--seed N] [--trace FILE] [--json] [--db FILE]\n"
	"\n"
	"Simulates a serving deployment the way vLLM schedules it: continuous batching under\n"
	"--max-num-seqs (default 256) and a token budget per iteration (--max-batched-tokens,\n"
	"default 8192) with chunked prefill, a paged KV cache (16-token blocks, 90% of GPU memory)\n"
	"with preemption by recomputation, TP all-reduces per layer, replicas behind a router.\n"
	"DIST is a length (512) or uniform:min=A,max=B, lognormal:mean=M,sigma=S,\n"
	"exponential:mean=M, gamma:mean=M,cv=C (each may add ,max=N).  A trace file is CSV with a\n"
	"header arrival_s,prompt_tokens,output_tokens, or JSONL with those keys.\n"
	"\n"
	"Prints TTFT, TPOT, inter-token latency and end-to-end latency (mean, P50, P90, P99),\n"
	"throughput, goodput under the given SLO, KV-cache use and preemptions, and dollars per\n"
	"million tokens at the system's price.  A deployment that cannot keep up is reported as\n"
	"saturated.\n"
	"\n"
	"Example:\n"
	"  paraplan simulate serve --model llama-3-70b --system dgx-h100 --tp 4 --replicas 2 --rate 10 \\\n"
	"      --prompt-len lognormal:mean=800,sigma=0.6 --output-len 256 --duration 300\n";

enum {
	O_MODEL = 256, O_SYSTEM, O_GPUS, O_TP, O_PP, O_DP, O_CP, O_EP, O_VPP, O_ZERO, O_FSDP, O_SCHED, O_MB, O_GB,
	O_SEQ, O_RECOMP, O_SP, O_DTYPE, O_ATTN, O_NOOVL, O_GRED, O_BUCKET, O_IMB, O_CAPF, O_FIRST, O_LAST, O_FULL,
	O_STRAG, O_TRACE, O_JSON, O_DB, O_HELP, O_GPN
};

static int
parse_int(const char *flag, const char *v, int lo, int hi, int *out)
{
	long long x;
	if (cli_int("simulate", flag, v, lo, hi, &x) != 0)
		return 2;
	*out = (int)x;
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
	if (cJSON_GetObjectItem(cfg, "ep")->valuedouble > 1)
		printf(", ep %.0f", cJSON_GetObjectItem(cfg, "ep")->valuedouble);
	printf(", %s", cJSON_GetObjectItem(cfg, "schedule")->valuestring);
	if (cJSON_GetObjectItem(cfg, "vpp")->valuedouble > 1)
		printf(" (vpp %.0f)", cJSON_GetObjectItem(cfg, "vpp")->valuedouble);
	printf(", %.0f micro-batches of %.0f, recompute %s%s%s\n\n", cJSON_GetObjectItem(cfg, "micro_batches")->valuedouble,
	       cJSON_GetObjectItem(cfg, "micro_batch")->valuedouble, cJSON_GetObjectItem(cfg, "recompute")->valuestring,
	       cJSON_IsTrue(cJSON_GetObjectItem(cfg, "sequence_parallel")) ? ", sequence parallel" : "",
	       cJSON_GetObjectItem(cfg, "zero")->valuedouble > 0 ? ", ZeRO" : "");
	const char *h[] = {"metric", "value"};
	cli_table *t = cli_table_new(2, h, "lr");
	cli_table_addf(t, 0, "step time");
	cli_table_addf(t, 1, "%s", cli_seconds(m->step_time_s, a, sizeof a));
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
	static const struct option opts[] = {
		{"model", required_argument, NULL, O_MODEL}, {"system", required_argument, NULL, O_SYSTEM},
		{"gpus", required_argument, NULL, O_GPUS}, {"tp", required_argument, NULL, O_TP},
		{"pp", required_argument, NULL, O_PP}, {"dp", required_argument, NULL, O_DP},
		{"cp", required_argument, NULL, O_CP}, {"ep", required_argument, NULL, O_EP},
		{"vpp", required_argument, NULL, O_VPP}, {"zero", required_argument, NULL, O_ZERO},
		{"fsdp", no_argument, NULL, O_FSDP}, {"schedule", required_argument, NULL, O_SCHED},
		{"micro-batch", required_argument, NULL, O_MB}, {"global-batch", required_argument, NULL, O_GB},
		{"seq", required_argument, NULL, O_SEQ}, {"recompute", required_argument, NULL, O_RECOMP},
		{"sequence-parallel", no_argument, NULL, O_SP}, {"dtype", required_argument, NULL, O_DTYPE},
		{"attention", required_argument, NULL, O_ATTN}, {"no-overlap-grad-reduce", no_argument, NULL, O_NOOVL},
		{"grad-reduce", required_argument, NULL, O_GRED}, {"bucket-mb", required_argument, NULL, O_BUCKET},
		{"moe-imbalance", required_argument, NULL, O_IMB}, {"moe-capacity", required_argument, NULL, O_CAPF},
		{"first-stage-layers", required_argument, NULL, O_FIRST},
		{"last-stage-layers", required_argument, NULL, O_LAST}, {"full", no_argument, NULL, O_FULL},
		{"straggler", required_argument, NULL, O_STRAG}, {"trace", required_argument, NULL, O_TRACE},
		{"json", no_argument, NULL, O_JSON}, {"db", required_argument, NULL, O_DB},
		{"gpus-per-node", required_argument, NULL, O_GPN},
		{"help", no_argument, NULL, O_HELP}, {NULL, 0, NULL, 0},
	};
	sim_train_cfg c;
	sim_train_cfg_init(&c);
	const char *model_spec = NULL, *system = NULL, *db_path = NULL, *trace = NULL;
	bool json = false, have_gpus = false, have_mb = false, have_gb = false;
	int opt, gpn = 0;
	double d;
	long long ll;
	optind = 1;
	opterr = 0;
	unsigned char seen[CLI_OPT_MAX] = {0};
	while ((opt = cli_getopt(argc, argv, opts, seen)) != -1) {
		switch (opt) {
		case O_MODEL: model_spec = optarg; break;
		case O_SYSTEM: system = optarg; break;
		case O_GPUS:
			if (parse_int("--gpus", optarg, 1, 1 << 24, &c.gpus))
				return 2;
			have_gpus = true;
			break;
		case O_TP: if (parse_int("--tp", optarg, 1, 1 << 16, &c.tp)) return 2; break;
		case O_PP: if (parse_int("--pp", optarg, 1, 1 << 16, &c.pp)) return 2; break;
		case O_DP: if (parse_int("--dp", optarg, 1, 1 << 24, &c.dp)) return 2; break;
		case O_CP: if (parse_int("--cp", optarg, 1, 1 << 16, &c.cp)) return 2; break;
		case O_EP: if (parse_int("--ep", optarg, 1, 1 << 16, &c.ep)) return 2; break;
		case O_VPP: if (parse_int("--vpp", optarg, 1, 1 << 10, &c.vpp)) return 2; break;
		case O_ZERO: if (parse_int("--zero", optarg, 0, 3, &c.zero)) return 2; break;
		case O_FSDP: c.fsdp = true; break;
		case O_SCHED:
			if (sim_schedule_parse(optarg, &c.schedule) != 0)
				return cli_usage("simulate", "--schedule must be gpipe, 1f1b, interleaved or zb-h1, got \"%s\"", optarg);
			break;
		case O_MB:
			if (cli_int("simulate", "--micro-batch", optarg, 1, 1 << 24, &ll))
				return 2;
			c.micro_batch = ll;
			have_mb = true;
			break;
		case O_GB:
			if (cli_int("simulate", "--global-batch", optarg, 1, 1LL << 40, &ll))
				return 2;
			c.global_batch = ll;
			have_gb = true;
			break;
		case O_SEQ:
			if (cli_int("simulate", "--seq", optarg, 1, 1 << 24, &ll))
				return 2;
			c.seq = ll;
			break;
		case O_RECOMP:
			if (sim_recompute_parse(optarg, &c.recompute) != 0)
				return cli_usage("simulate", "--recompute must be none, selective or full, got \"%s\"", optarg);
			break;
		case O_SP: c.sequence_parallel = true; break;
		case O_DTYPE:
			if (hw_dtype_parse(optarg, &c.dtype) != 0)
				return cli_usage("simulate", "--dtype must be bf16, fp16, fp8, tf32 or fp32, got \"%s\"", optarg);
			break;
		case O_ATTN:
			if (!strcmp(optarg, "flash"))
				c.attention = SIM_ATTN_FLASH;
			else if (!strcmp(optarg, "unfused"))
				c.attention = SIM_ATTN_UNFUSED;
			else
				return cli_usage("simulate", "--attention must be flash or unfused, got \"%s\"", optarg);
			break;
		case O_NOOVL: c.overlap_grad_reduce = false; break;
		case O_GRED:
			if (!strcmp(optarg, "fp32"))
				c.grad_reduce_bytes = 4;
			else if (!strcmp(optarg, "bf16") || !strcmp(optarg, "fp16"))
				c.grad_reduce_bytes = 2;
			else
				return cli_usage("simulate", "--grad-reduce must be fp32, bf16 or fp16, got \"%s\"", optarg);
			break;
		case O_BUCKET:
			if (cli_double("simulate", "--bucket-mb", optarg, 0.001, 1e6, &d))
				return 2;
			c.bucket_bytes = d * 1048576.0;
			break;
		case O_IMB:
			if (cli_double("simulate", "--moe-imbalance", optarg, 1.0, 64.0, &d))
				return 2;
			c.moe_imbalance = d;
			break;
		case O_CAPF:
			if (cli_double("simulate", "--moe-capacity", optarg, 0.0, 64.0, &d))
				return 2;
			c.moe_capacity = d;
			break;
		case O_FIRST: if (parse_int("--first-stage-layers", optarg, 1, 1 << 16, &c.first_stage_layers)) return 2; break;
		case O_LAST: if (parse_int("--last-stage-layers", optarg, 1, 1 << 16, &c.last_stage_layers)) return 2; break;
		case O_FULL: c.full = true; break;
		case O_STRAG: {
			char *colon = strchr(optarg, ':');
			if (colon == NULL)
				return cli_usage("simulate", "--straggler must be RANK:FACTOR, got \"%s\"", optarg);
			*colon = '\0';
			if (parse_int("--straggler rank", optarg, 0, 1 << 24, &c.straggler_rank) ||
			    cli_double("simulate", "--straggler factor", colon + 1, 1.0, 1000.0, &c.straggler))
				return 2;
			break;
		}
		case O_TRACE: trace = optarg; c.trace = true; break;
		case O_JSON: json = true; break;
		case O_DB: db_path = optarg; break;
		case O_GPN: if (parse_int("--gpus-per-node", optarg, 1, 1024, &gpn)) return 2; break;
		case O_HELP:
		case 'h':
			fputs(usage_train, stdout);
			return 0;
		default:
			return cli_bad_option("simulate", opt, argv);
		}
	}
	if (optind < argc)
		return cli_usage("simulate", "unexpected argument \"%s\"", argv[optind]);
	if (model_spec == NULL)
		return cli_usage("simulate", "--model is required (a catalog name or a path)");
	if (system == NULL)
		return cli_usage("simulate", "--system is required (see 'paraplan hw list')");
	if (!have_gpus)
		return cli_usage("simulate", "--gpus is required");
	if (!have_mb || !have_gb)
		return cli_usage("simulate", "--micro-batch and --global-batch are required");
	if (c.straggler_rank >= 0 && !c.full)
		return cli_usage("simulate", "--straggler needs --full (every rank simulated)");

	char err[1024];
	model *m;
	int rc = model_load(model_spec, &m, err, sizeof err);
	if (rc != 0)
		return cli_fail(rc == PP_ENOTFOUND ? PP_EUSAGE : rc, err);
	hw_db *db;
	if ((rc = cli_open_db(db_path, 0, &db)) != 0) {
		model_free(m);
		return rc;
	}
	hw_cost *cost;
	rc = hw_cost_new(db, system, &cost, err, sizeof err);
	if (rc == 0 && gpn > 0 && (rc = hw_cost_use_gpus_per_node(cost, gpn, err, sizeof err)) != 0)
		hw_cost_free(cost);
	if (rc != 0) {
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
				cli_print_json(doc);
			else
				print_table(doc, res);
			cJSON_Delete(doc);
		}
	}
	sim_train_result_free(res);
	hw_cost_free(cost);
	hw_close(db);
	model_free(m);
	return status;
}

static void
print_serve(const cJSON *doc)
{
	const cJSON *c = cJSON_GetObjectItem(doc, "config");
	char a[48], b[48];
	printf("%s on %s: %.0f replica(s) of tp %.0f x pp %.0f (%.0f GPUs), %s weights, %s KV cache, %.0f requests at %.3g/s\n\n",
	       cJSON_GetObjectItem(doc, "model")->valuestring, cJSON_GetObjectItem(doc, "system")->valuestring,
	       cJSON_GetObjectItem(c, "replicas")->valuedouble, cJSON_GetObjectItem(c, "tp")->valuedouble,
	       cJSON_GetObjectItem(c, "pp")->valuedouble, cJSON_GetObjectItem(c, "gpus")->valuedouble,
	       cJSON_GetObjectItem(c, "weights")->valuestring, cJSON_GetObjectItem(c, "kv_dtype")->valuestring,
	       cJSON_GetObjectItem(c, "requests")->valuedouble, cJSON_GetObjectItem(c, "rate")->valuedouble);
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
	const cJSON *slo = cJSON_GetObjectItem(doc, "slo");
	if (cJSON_GetObjectItem(slo, "ttft_s")->valuedouble > 0 || cJSON_GetObjectItem(slo, "tpot_s")->valuedouble > 0 ||
	    cJSON_GetObjectItem(slo, "e2e_s")->valuedouble > 0) {
		cli_table_addf(t, 0, "goodput under the SLO");
		cli_table_addf(t, 1, "%.3g requests/s (%.1f%% of requests meet it)",
			       cJSON_GetObjectItem(doc, "goodput_requests_per_s")->valuedouble,
			       100.0 * cJSON_GetObjectItem(doc, "slo_attainment")->valuedouble);
	}
	cli_table_addf(t, 0, "KV cache");
	cli_table_addf(t, 1, "%.0f tokens per replica, %.1f%% used on average, %.1f%% peak, %.0f preemptions",
		       cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "memory_per_gpu"), "kv_cache_tokens")->valuedouble,
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

enum {
	S_MODEL = 300, S_SYSTEM, S_TP, S_PP, S_REPL, S_RATE, S_ARR, S_PROMPT, S_OUTPUT, S_REQS, S_DUR, S_MAXSEQS, S_MAXTOK,
	S_WEIGHTS, S_KV, S_DISAGG, S_ROUTER, S_SLO_TTFT, S_SLO_TPOT, S_SLO_E2E, S_PRICE, S_SEED, S_TRACE, S_JSON, S_DB, S_HELP
};

static int
simulate_serve(int argc, char **argv)
{
	static const struct option opts[] = {
		{"model", required_argument, NULL, S_MODEL}, {"system", required_argument, NULL, S_SYSTEM},
		{"tp", required_argument, NULL, S_TP}, {"pp", required_argument, NULL, S_PP},
		{"replicas", required_argument, NULL, S_REPL}, {"rate", required_argument, NULL, S_RATE},
		{"arrival", required_argument, NULL, S_ARR}, {"prompt-len", required_argument, NULL, S_PROMPT},
		{"output-len", required_argument, NULL, S_OUTPUT}, {"requests", required_argument, NULL, S_REQS},
		{"duration", required_argument, NULL, S_DUR}, {"max-num-seqs", required_argument, NULL, S_MAXSEQS},
		{"max-batched-tokens", required_argument, NULL, S_MAXTOK}, {"weights", required_argument, NULL, S_WEIGHTS},
		{"kv-dtype", required_argument, NULL, S_KV}, {"disaggregate", required_argument, NULL, S_DISAGG},
		{"router", required_argument, NULL, S_ROUTER}, {"slo-ttft-p99", required_argument, NULL, S_SLO_TTFT},
		{"slo-tpot-p99", required_argument, NULL, S_SLO_TPOT}, {"slo-e2e-p99", required_argument, NULL, S_SLO_E2E},
		{"price", required_argument, NULL, S_PRICE}, {"seed", required_argument, NULL, S_SEED},
		{"trace", required_argument, NULL, S_TRACE}, {"json", no_argument, NULL, S_JSON},
		{"db", required_argument, NULL, S_DB}, {"help", no_argument, NULL, S_HELP}, {NULL, 0, NULL, 0},
	};
	sim_serve_cfg c;
	sim_serve_cfg_init(&c);
	const char *model_spec = NULL, *system = NULL, *db_path = NULL, *trace_out = NULL, *trace_in = NULL;
	bool json = false, have_tp = false, have_rate = false;
	char err[1024];
	long long ll;
	double d;
	int opt;
	optind = 1;
	opterr = 0;
	unsigned char seen[CLI_OPT_MAX] = {0};
	while ((opt = cli_getopt(argc, argv, opts, seen)) != -1) {
		switch (opt) {
		case S_MODEL: model_spec = optarg; break;
		case S_SYSTEM: system = optarg; break;
		case S_TP:
			if (parse_int("--tp", optarg, 1, 1024, &c.tp))
				return 2;
			have_tp = true;
			break;
		case S_PP: if (parse_int("--pp", optarg, 1, 1024, &c.pp)) return 2; break;
		case S_REPL: if (parse_int("--replicas", optarg, 1, 100000, &c.replicas)) return 2; break;
		case S_RATE:
			if (cli_double("simulate", "--rate", optarg, 1e-6, 1e7, &c.rate))
				return 2;
			have_rate = true;
			break;
		case S_ARR:
			if (!strncmp(optarg, "trace:", 6)) {
				c.arrival = SIM_ARR_TRACE;
				trace_in = optarg + 6;
			} else if (sim_arrival_parse(optarg, &c.arrival, &c.arrival_param, err, sizeof err) != 0) {
				return cli_usage("simulate", "%s", err);
			}
			break;
		case S_PROMPT:
			if (sim_dist_parse(optarg, &c.prompt, err, sizeof err) != 0)
				return cli_usage("simulate", "--prompt-len: %s", err);
			break;
		case S_OUTPUT:
			if (sim_dist_parse(optarg, &c.output, err, sizeof err) != 0)
				return cli_usage("simulate", "--output-len: %s", err);
			break;
		case S_REQS:
			if (cli_int("simulate", "--requests", optarg, 1, 10000000, &ll))
				return 2;
			c.requests = ll;
			break;
		case S_DUR:
			if (cli_double("simulate", "--duration", optarg, 0.001, 1e7, &c.duration_s))
				return 2;
			break;
		case S_MAXSEQS: if (parse_int("--max-num-seqs", optarg, 1, 1 << 20, &c.max_num_seqs)) return 2; break;
		case S_MAXTOK:
			if (cli_int("simulate", "--max-batched-tokens", optarg, 1, 1 << 22, &ll))
				return 2;
			c.max_batched_tokens = ll;
			break;
		case S_WEIGHTS:
			if (hw_dtype_parse(optarg, &c.weights) != 0)
				return cli_usage("simulate", "--weights must be bf16, fp8, int8 or int4, got \"%s\"", optarg);
			break;
		case S_KV:
			if (hw_dtype_parse(optarg, &c.kv_dtype) != 0)
				return cli_usage("simulate", "--kv-dtype must be bf16 or fp8, got \"%s\"", optarg);
			break;
		case S_DISAGG: {
			int pr, dr;
			char tail;
			if (sscanf(optarg, "%d:%d%c", &pr, &dr, &tail) != 2 || pr < 1 || dr < 1 || pr > 50000 || dr > 50000)
				return cli_usage("simulate", "--disaggregate must be P:D (prefill and decode replicas), got \"%s\"", optarg);
			c.prefill_replicas = pr;
			c.decode_replicas = dr;
			break;
		}
		case S_ROUTER:
			if (!strcmp(optarg, "round-robin"))
				c.router = SIM_ROUTE_ROUND_ROBIN;
			else if (!strcmp(optarg, "least-outstanding"))
				c.router = SIM_ROUTE_LEAST_OUTSTANDING;
			else
				return cli_usage("simulate", "--router must be round-robin or least-outstanding, got \"%s\"", optarg);
			break;
		case S_SLO_TTFT:
			if (cli_double("simulate", "--slo-ttft-p99", optarg, 0.001, 1e9, &d))
				return 2;
			c.slo_ttft_s = d / 1e3;
			break;
		case S_SLO_TPOT:
			if (cli_double("simulate", "--slo-tpot-p99", optarg, 0.001, 1e9, &d))
				return 2;
			c.slo_tpot_s = d / 1e3;
			break;
		case S_SLO_E2E:
			if (cli_double("simulate", "--slo-e2e-p99", optarg, 0.001, 1e9, &d))
				return 2;
			c.slo_e2e_s = d / 1e3;
			break;
		case S_PRICE:
			if (cli_double("simulate", "--price", optarg, 0.0001, 1e6, &c.price))
				return 2;
			break;
		case S_SEED:
			if (cli_int("simulate", "--seed", optarg, 0, INT64_MAX, &ll))
				return 2;
			c.seed = (uint64_t)ll;
			break;
		case S_TRACE:
			trace_out = optarg;
			c.keep_iterations = true;
			break;
		case S_JSON: json = true; break;
		case S_DB: db_path = optarg; break;
		case S_HELP:
		case 'h':
			fputs(usage_serve, stdout);
			return 0;
		default:
			return cli_bad_option("simulate", opt, argv);
		}
	}
	if (optind < argc)
		return cli_usage("simulate", "unexpected argument \"%s\"", argv[optind]);
	if (model_spec == NULL || system == NULL)
		return cli_usage("simulate", "--model and --system are required");
	if (!have_tp)
		return cli_usage("simulate", "--tp is required");
	if (!have_rate && c.arrival != SIM_ARR_BATCH && c.arrival != SIM_ARR_CLOSED && c.arrival != SIM_ARR_TRACE)
		return cli_usage("simulate", "--rate is required (requests per second)");
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
	if ((rc = model_load(model_spec, &m, err, sizeof err)) != 0) {
		status = cli_fail(rc == PP_ENOTFOUND ? PP_EUSAGE : rc, err);
		goto out;
	}
	if ((status = cli_open_db(db_path, 0, &db)) != 0)
		goto out;
	if ((rc = hw_cost_new(db, system, &cost, err, sizeof err)) != 0) {
		status = cli_fail(rc == PP_ENOTFOUND ? PP_EUSAGE : rc, err);
		goto out;
	}
	if (!(c.price > 0)) {
		hw_price pr;
		if (hw_default_price(db, system, &pr, NULL, 0) == 0)
			c.price = pr.usd_per_gpu_hour;
	}
	if ((rc = sim_serve(m, cost, &c, &res, err, sizeof err)) != 0) {
		status = cli_fail(rc, err);
		goto out;
	}
	if (trace_out != NULL && (rc = sim_serve_trace(res, trace_out, err, sizeof err)) != 0) {
		status = cli_fail(rc, err);
		goto out;
	}
	cJSON *doc = sim_serve_json(res);
	if (json)
		cli_print_json(doc);
	else
		print_serve(doc);
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
	enum { I_MODEL = 600, I_SYSTEM, I_BATCH, I_MB, I_PP, I_REPL, I_DTYPE, I_TRACE, I_JSON, I_DB, I_HELP };
	static const struct option opts[] = {
		{"model", required_argument, NULL, I_MODEL}, {"system", required_argument, NULL, I_SYSTEM},
		{"batch", required_argument, NULL, I_BATCH}, {"micro-batch", required_argument, NULL, I_MB},
		{"pp", required_argument, NULL, I_PP}, {"replicas", required_argument, NULL, I_REPL},
		{"dtype", required_argument, NULL, I_DTYPE}, {"trace", required_argument, NULL, I_TRACE},
		{"json", no_argument, NULL, I_JSON}, {"db", required_argument, NULL, I_DB},
		{"help", no_argument, NULL, I_HELP}, {NULL, 0, NULL, 0},
	};
	sim_infer_cfg c;
	sim_infer_cfg_init(&c);
	const char *model_spec = NULL, *system = NULL, *db_path = NULL, *trace_out = NULL;
	bool json = false, have_batch = false;
	char err[1024];
	long long ll;
	int opt;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (opt) {
		case I_MODEL: model_spec = optarg; break;
		case I_SYSTEM: system = optarg; break;
		case I_BATCH:
			if (cli_int("simulate", "--batch", optarg, 1, 100000000, &ll))
				return 2;
			c.batch = ll;
			have_batch = true;
			break;
		case I_MB:
			if (cli_int("simulate", "--micro-batch", optarg, 1, 100000000, &ll))
				return 2;
			c.micro_batch = ll;
			break;
		case I_PP: if (parse_int("--pp", optarg, 1, 1024, &c.pp)) return 2; break;
		case I_REPL: if (parse_int("--replicas", optarg, 1, 1000000, &c.replicas)) return 2; break;
		case I_DTYPE:
			if (hw_dtype_parse(optarg, &c.dtype) != 0)
				return cli_usage("simulate", "--dtype must be fp16, bf16, fp32, tf32 or int8, got \"%s\"", optarg);
			break;
		case I_TRACE: trace_out = optarg; break;
		case I_JSON: json = true; break;
		case I_DB: db_path = optarg; break;
		case I_HELP:
		case 'h':
			fputs(usage_infer, stdout);
			return 0;
		default:
			return cli_bad_option("simulate", opt, argv);
		}
	}
	if (optind < argc)
		return cli_usage("simulate", "unexpected argument \"%s\"", argv[optind]);
	if (model_spec == NULL || system == NULL)
		return cli_usage("simulate", "--model and --system are required");
	if (!have_batch)
		return cli_usage("simulate", "--batch is required (images per replica)");
	model *m = NULL;
	hw_db *db = NULL;
	hw_cost *cost = NULL;
	sim_infer_result *res = NULL;
	int status = 0, rc;
	if ((rc = model_load(model_spec, &m, err, sizeof err)) != 0) {
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
		cli_print_json(doc);
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
