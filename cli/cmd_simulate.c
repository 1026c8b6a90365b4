/*
 * cmd_simulate.c -- 'paraplan simulate train': one training configuration, predicted.
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
	"           [--full [--straggler RANK:FACTOR]] [--trace FILE] [--json] [--db FILE]\n"
	"\n"
	"Predicts one training step of model M on N GPUs of system S: step time, throughput, MFU,\n"
	"pipeline bubble, exposed communication and memory per pipeline stage.  DP defaults to\n"
	"N / (T x P x C).  A configuration whose degrees do not divide the GPUs, heads, layers or\n"
	"batch is a usage error that names the failed constraint; one that does not fit in memory\n"
	"is simulated and reported as out of memory with its breakdown.\n"
	"\n"
	"  --full          simulate every rank (default: one representative rank per stage)\n"
	"  --straggler R:F full mode: GPU R runs its compute F times slower\n"
	"  --trace FILE    write a Chrome/Perfetto trace (open in ui.perfetto.dev)\n"
	"\n"
	"Example:\n"
	"  paraplan simulate train --model gpt3-175b --system dgx-a100 --gpus 1024 --tp 8 --pp 8 \\\n"
	"      --vpp 3 --micro-batch 1 --global-batch 1536 --recompute selective --sequence-parallel\n";

static const char usage_top[] =
	"usage: paraplan simulate train ...   (see 'paraplan simulate train --help')\n";

enum {
	O_MODEL = 256, O_SYSTEM, O_GPUS, O_TP, O_PP, O_DP, O_CP, O_EP, O_VPP, O_ZERO, O_FSDP, O_SCHED, O_MB, O_GB,
	O_SEQ, O_RECOMP, O_SP, O_DTYPE, O_ATTN, O_NOOVL, O_GRED, O_BUCKET, O_IMB, O_CAPF, O_FIRST, O_LAST, O_FULL,
	O_STRAG, O_TRACE, O_JSON, O_DB, O_HELP
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
		{"help", no_argument, NULL, O_HELP}, {NULL, 0, NULL, 0},
	};
	sim_train_cfg c;
	sim_train_cfg_init(&c);
	const char *model_spec = NULL, *system = NULL, *db_path = NULL, *trace = NULL;
	bool json = false, have_gpus = false, have_mb = false, have_gb = false;
	int opt;
	double d;
	long long ll;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
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

int
cmd_simulate(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(usage_top, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "train"))
		return simulate_train(argc - 1, argv + 1);
	return cli_usage("simulate", "unknown workload \"%s\" (expected train)", argv[1]);
}
