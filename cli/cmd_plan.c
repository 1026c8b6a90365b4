/*
 * cmd_plan.c -- 'paraplan plan train': search layouts; capacity planning; launch configs.
 */
#include "config.h"
#include "calibrate/cal.h"
#include "cli/cli.h"
#include "models/model.h"
#include "planner/plan.h"

#include <cJSON.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char usage_top[] =
	"usage: paraplan plan train ...   (see 'paraplan plan train --help')\n"
	"       paraplan plan serve ...   (see 'paraplan plan serve --help')\n";

static const char usage_train[] =
	"usage: paraplan plan train --model M --system S --gpus N|A..B|A,B,... --global-batch G [--seq L]\n"
	"           [--objective time|cost] [--price USD_PER_GPU_HOUR] [--top K] [--jobs N]\n"
	"           [--tp-across-nodes] [--dtypes bf16,fp8] [--export megatron|deepspeed|torchrun|slurm\n"
	"           [--out FILE]] [--gpus-per-node N] [--life-years Y] [--kwh-price USD] [--pue P]\n"
	"           [--json] [--db FILE]\n"
	"       paraplan plan train --model M --tokens T --days D --global-batch G\n"
	"           [--systems S1,S2,...] [--life-years Y] [--kwh-price USD] [--pue P] [--json] [--db FILE]\n"
	"       paraplan plan train ... --validate [--validate-steps N]   (a layout search, then its winner on GPUs)\n"
	"\n"
	"Searches every valid layout of model M on N GPUs of system S (TP within the NVLink domain,\n"
	"PP, CP for long sequences, EP for MoE, virtual stages, ZeRO stage, micro-batch,\n"
	"recomputation, sequence parallelism, schedule), prunes what does not divide or fit, ranks\n"
	"the rest with a closed-form estimate, simulates the best in full and prints the top K with\n"
	"why each runner-up lost.  A range A..B doubles from A to B and gives a scaling curve.\n"
	"Ctrl-C stops the search and prints the best found so far.  --gpus-per-node N uses N GPUs\n"
	"of each node (two nodes of 4 GPUs: --gpus 8 --gpus-per-node 4).\n"
	"\n"
	"--validate replays the winner on GPUs after the search ('paraplan replay': every rank runs\n"
	"the op list the simulator built for it; N timed steps, default 10, after 3 warm-up) and\n"
	"reports the measured step against the predicted one, stored as a validation run.  A one-GPU\n"
	"winner runs in this process; a larger one runs when this command was launched as one process\n"
	"per GPU of the winner (mpirun -np N paraplan plan train ... --validate: every rank plans, rank\n"
	"0's winner is replayed, rank 0 prints).  Otherwise, or without a GPU, the plan is printed in\n"
	"full, the validation is reported as not run with the reason (and the mpirun command that\n"
	"would run it) on stderr and under \"validation\" in --json, nothing is stored, and the exit\n"
	"status is 1.\n"
	"\n"
	"With --tokens and --days it plans capacity: for each system, the smallest number of whole\n"
	"nodes that trains T tokens (15T = 15e12) in D days with its best layout, and the cost to\n"
	"rent it at each listed price or to buy it (purchase amortized over --life-years, default 4,\n"
	"plus power at --kwh-price, default 0.09, times --pue, default 1.3).  A layout search records\n"
	"the same terms and every price of the system in its --json document for 'paraplan report'.\n"
	"\n"
	"Examples:\n"
	"  paraplan plan train --model llama-3-70b --system dgx-h100 --gpus 64 --global-batch 512\n"
	"  paraplan plan train --model llama-3-70b --system dgx-h100 --gpus 64 --global-batch 512 --export megatron\n"
	"  paraplan plan train --model llama-3-70b --tokens 15T --days 90 --global-batch 2048 --systems dgx-h100,dgx-b200\n";

static volatile sig_atomic_t stop_flag;

static void
on_sigint(int sig)
{
	(void)sig;
	stop_flag = 1;
	signal(SIGINT, SIG_DFL); /* a second Ctrl-C ends the program */
}

typedef struct progress {
	bool tty;
	double t0;
} progress;

static double
now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void
show_progress(void *arg, size_t done, size_t total)
{
	progress *p = arg;
	if (!p->tty)
		return;
	if (total == 0)
		fprintf(stderr, "\r%zu evaluated (%.1f s)  ", done, now_s() - p->t0);
	else
		fprintf(stderr, "\r[%-30.*s] %3.0f%% (%zu/%zu)  ", (int)(30 * done / (total ? total : 1)),
			"==============================", 100.0 * (double)done / (double)total, done, total);
}

/* "64", "64..1024" (doubling), "64,128,512". */
static int
parse_gpus(const char *s, int **out, size_t *n)
{
	int *arr = NULL;
	size_t cap = 0, k = 0;
	const char *dots = strstr(s, "..");
	if (dots != NULL) {
		char a[32];
		size_t la = (size_t)(dots - s);
		if (la == 0 || la >= sizeof a)
			return -1;
		memcpy(a, s, la);
		a[la] = '\0';
		int64_t lo, hi;
		if (pp_parse_i64(a, &lo) != 0 || pp_parse_i64(dots + 2, &hi) != 0 || lo < 1 || hi < lo || hi > (1 << 24))
			return -1;
		for (int64_t g = lo; g <= hi; g *= 2) {
			if (PP_GROW(arr, cap, k + 1) != 0)
				return -1;
			arr[k++] = (int)g;
		}
	} else {
		char buf[1024];
		if (!pp_strlcpy(buf, s, sizeof buf))
			return -1;
		for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
			int64_t g;
			if (pp_parse_i64(tok, &g) != 0 || g < 1 || g > (1 << 24) || PP_GROW(arr, cap, k + 1) != 0) {
				free(arr);
				return -1;
			}
			arr[k++] = (int)g;
		}
	}
	if (k == 0) {
		free(arr);
		return -1;
	}
	*out = arr;
	*n = k;
	return 0;
}

static void
print_plan(const cJSON *doc, double secs)
{
	const cJSON *cnt;
	printf("%s on %s, global batch %.0f x %.0f tokens, objective %s", cli_str(doc, "model"), cli_str(doc, "system"),
	       cli_num(doc, "global_batch"), cli_num(doc, "seq"), cli_str(doc, "objective"));
	if (cli_num(doc, "price_usd_per_gpu_hour") > 0)
		printf(", price %s", cli_str(doc, "price_source"));
	printf("\n");
	if (cJSON_IsTrue(cJSON_GetObjectItem(doc, "interrupted")))
		printf("(interrupted: the best found so far)\n");
	cJSON_ArrayForEach(cnt, cJSON_GetObjectItem(doc, "counts"))
	{
		double total = cli_num(cnt, "enumerated");
		printf("\n%.0f GPUs: %.0f layouts enumerated, %.0f invalid, %.0f do not fit, %.0f estimated, %.0f simulated\n\n",
		       cli_num(cnt, "gpus"), total, cli_num(cnt, "invalid"), cli_num(cnt, "out_of_memory"), cli_num(cnt, "estimated"),
		       cli_num(cnt, "simulated"));
		/* The search speed is a measurement of this machine, not a result: stderr, so that the
		 * same command prints the same table every time. */
		fprintf(stderr, "%.0f GPUs: searched %.0f layouts/s\n", cli_num(cnt, "gpus"), secs > 0 ? total / secs : 0.0);
		const cJSON *cands = cJSON_GetObjectItem(cnt, "candidates");
		if (cJSON_GetArraySize(cands) == 0) {
			if (cli_num(cnt, "smallest_footprint_bytes") > 0) {
				char a[32], b[32];
				printf("no layout fits: the smallest needs %s per GPU of %s; use more GPUs or a GPU with more memory\n",
				       cli_bytes(cli_num(cnt, "smallest_footprint_bytes"), a, sizeof a),
				       cli_bytes(cli_num(cnt, "capacity_bytes"), b, sizeof b));
			} else {
				printf("no valid layout: check that --global-batch divides by the data-parallel degrees\n");
			}
			continue;
		}
		const char *h[] = {"#", "tp", "pp", "dp", "cp", "ep", "schedule", "zero", "mb", "recompute", "sp", "step",
				   "tok/s/GPU", "MFU", "bubble", "exp.comm", "memory", "$/Mtok", "why not first"};
		cli_table *t = cli_table_new(19, h, "rrrrrrlrrlrrrrrrrrl");
		const cJSON *x;
		cJSON_ArrayForEach(x, cands)
		{
			const cJSON *c = cJSON_GetObjectItem(x, "config");
			char a[32];
			cli_table_addf(t, 0, "%.0f", cli_num(x, "rank"));
			cli_table_addf(t, 1, "%.0f", cli_num(c, "tp"));
			cli_table_addf(t, 2, "%.0f", cli_num(c, "pp"));
			cli_table_addf(t, 3, "%.0f", cli_num(c, "dp"));
			cli_table_addf(t, 4, "%.0f", cli_num(c, "cp"));
			cli_table_addf(t, 5, "%.0f", cli_num(c, "ep"));
			if (cli_num(c, "vpp") > 1)
				cli_table_addf(t, 6, "%s v%.0f", cli_str(c, "schedule"), cli_num(c, "vpp"));
			else
				cli_table_addf(t, 6, "%s", cli_str(c, "schedule"));
			cli_table_addf(t, 7, "%.0f", cli_num(c, "zero"));
			cli_table_addf(t, 8, "%.0f", cli_num(c, "micro_batch"));
			cli_table_addf(t, 9, "%s", cli_str(c, "recompute"));
			cli_table_addf(t, 10, "%s", cJSON_IsTrue(cJSON_GetObjectItem(c, "sequence_parallel")) ? "yes" : "no");
			cli_table_addf(t, 11, "%s", cli_seconds(cli_num(x, "step_time_s"), a, sizeof a));
			cli_table_addf(t, 12, "%.0f", cli_num(x, "tokens_per_s_per_gpu"));
			cli_table_addf(t, 13, "%.1f%%", 100.0 * cli_num(x, "mfu"));
			cli_table_addf(t, 14, "%.1f%%", 100.0 * cli_num(x, "bubble_fraction"));
			cli_table_addf(t, 15, "%s", cli_seconds(cli_num(x, "exposed_comm_s"), a, sizeof a));
			cli_table_addf(t, 16, "%s", cli_bytes(cli_num(x, "peak_bytes"), a, sizeof a));
			if (cJSON_GetObjectItem(x, "usd_per_million_tokens"))
				cli_table_addf(t, 17, "%.3f", cli_num(x, "usd_per_million_tokens"));
			else
				cli_table_addf(t, 17, "-");
			cli_table_addf(t, 18, "%s", cli_str(x, "why_not_first"));
		}
		cli_table_print(t, stdout);
		cli_table_free(t);
	}
	const cJSON *sc = cJSON_GetObjectItem(doc, "scaling");
	if (cJSON_GetArraySize(sc) > 0) {
		printf("\nScaling (best layout at each count)\n\n");
		const char *h[] = {"GPUs", "step", "tokens/s", "tok/s/GPU", "efficiency", "$/Mtok"};
		cli_table *t = cli_table_new(6, h, "rrrrrr");
		const cJSON *x;
		cJSON_ArrayForEach(x, sc)
		{
			char a[32], b[32];
			cli_table_addf(t, 0, "%.0f", cli_num(x, "gpus"));
			cli_table_addf(t, 1, "%s", cli_seconds(cli_num(x, "step_time_s"), a, sizeof a));
			cli_table_addf(t, 2, "%s", cli_si(cli_num(x, "tokens_per_s"), "", b, sizeof b));
			cli_table_addf(t, 3, "%.0f", cli_num(x, "tokens_per_s_per_gpu"));
			cli_table_addf(t, 4, "%.1f%%", 100.0 * cli_num(x, "efficiency"));
			cli_table_addf(t, 5, "%.3f", cli_num(x, "usd_per_million_tokens"));
		}
		cli_table_print(t, stdout);
		cli_table_free(t);
	}
}

static void
print_capacity(const cJSON *doc)
{
	printf("%s: %.3g tokens in %.3g days, global batch %.0f x %.0f tokens\n\n", cli_str(doc, "model"), cli_num(doc, "tokens"),
	       cli_num(doc, "days"), cli_num(doc, "global_batch"), cli_num(doc, "seq"));
	const char *h[] = {"system", "GPUs", "nodes", "days", "MFU", "layout", "rent (cheapest)", "rent (on-demand max)", "buy"};
	cli_table *t = cli_table_new(9, h, "lrrrrlrrr");
	const cJSON *x;
	cJSON_ArrayForEach(x, cJSON_GetObjectItem(doc, "systems"))
	{
		cli_table_addf(t, 0, "%s", cli_str(x, "system"));
		if (!cJSON_IsTrue(cJSON_GetObjectItem(x, "feasible"))) {
			cli_table_addf(t, 1, "-");
			cli_table_addf(t, 8, "%s", cli_str(x, "reason"));
			continue;
		}
		const cJSON *c = cJSON_GetObjectItem(x, "config");
		cli_table_addf(t, 1, "%.0f", cli_num(x, "gpus"));
		cli_table_addf(t, 2, "%.0f", cli_num(x, "nodes"));
		cli_table_addf(t, 3, "%.1f", cli_num(x, "days"));
		cli_table_addf(t, 4, "%.1f%%", 100.0 * cli_num(x, "mfu"));
		/* cp and ep only where they split the work: the GPU count is their product with tp, pp, dp */
		char cp[16] = "", ep[16] = "";
		if (cli_num(c, "cp") > 1)
			snprintf(cp, sizeof cp, " cp%.0f", cli_num(c, "cp"));
		if (cli_num(c, "ep") > 1)
			snprintf(ep, sizeof ep, " ep%.0f", cli_num(c, "ep"));
		cli_table_addf(t, 5, "tp%.0f pp%.0f%s%s dp%.0f %s", cli_num(c, "tp"), cli_num(c, "pp"), cp, ep,
			       cli_num(c, "dp"), cli_str(c, "recompute"));
		double cheap = INFINITY, maxod = 0;
		const cJSON *r;
		cJSON_ArrayForEach(r, cJSON_GetObjectItem(x, "rent"))
		{
			double v = cli_num(r, "total_usd");
			if (v < cheap)
				cheap = v;
			if (!strcmp(cli_str(r, "kind"), "on-demand") && v > maxod)
				maxod = v;
		}
		if (isfinite(cheap))
			cli_table_addf(t, 6, "$%.3gM", cheap / 1e6);
		else
			cli_table_addf(t, 6, "-");
		if (maxod > 0)
			cli_table_addf(t, 7, "$%.3gM", maxod / 1e6);
		else
			cli_table_addf(t, 7, "-");
		const cJSON *b = cJSON_GetObjectItem(x, "buy");
		if (cJSON_GetObjectItem(b, "total_usd"))
			cli_table_addf(t, 8, "$%.3gM (of $%.3gM hardware)", cli_num(b, "total_usd") / 1e6, cli_num(b, "purchase_usd") / 1e6);
		else
			cli_table_addf(t, 8, "%s", cli_str(b, "note"));
	}
	cli_table_print(t, stdout);
	cli_table_free(t);
	printf("\nRent: GPU-hours x each listed price (see --json for every provider and date).  Buy: purchase\n"
	       "price amortized over its life for the days of training, plus node power x PUE x price per kWh.\n");
}

enum {
	O_MODEL = 256, O_SYSTEM, O_GPUS, O_GB, O_SEQ, O_OBJ, O_PRICE, O_TOP, O_JOBS, O_TPX, O_DTYPES, O_EXPORT, O_OUT,
	O_JSON, O_DB, O_TOKENS, O_DAYS, O_SYSTEMS, O_LIFE, O_KWH, O_PUE, O_SIMN, O_VALIDATE, O_VSTEPS, O_HELP, O_GPN
};

/* ---- --validate ---------------------------------------------------------------------------- */

/* Appends an argument quoted for a POSIX shell when it needs it. */
static void
shell_arg(pp_str *s, const char *a)
{
	bool plain = a[0] != '\0';
	for (const char *p = a; *p && plain; p++)
		plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%", *p) != NULL;
	pp_str_add(s, " ");
	if (plain) {
		pp_str_add(s, a);
		return;
	}
	pp_str_add(s, "'");
	for (const char *p = a; *p; p++)
		if (*p == '\'')
			pp_str_add(s, "'\\''");
		else
			pp_str_addn(s, p, 1);
	pp_str_add(s, "'");
}

/* Replays the winner, or says why it does not; *doc gets {"validation": ...}.  Returns 0 when
 * measured, 1 when not run, the replay's status on its failure. */
static int
validate(cJSON *doc, const char *model_spec, const char *system, const sim_train_cfg *w, double predicted,
	 const char *db_path, int steps, int argc, char **args)
{
	cJSON *v = cJSON_AddObjectToObject(doc, "validation");
	char err[1024] = "";
	int ntasks = 1, lrank = 0;
	cal_launched_tasks(&ntasks, &lrank);
	bool alone = ntasks <= 1;
	if ((alone && w->gpus > 1) || (!alone && ntasks != w->gpus)) {
		/* the command that runs it: this one, one process per GPU of the winner */
		hw_db *db = NULL;
		hw_system sys;
		int per_node = 0;
		if (hw_open(db_path, HW_OPEN_READONLY, &db, NULL, 0) == 0 && hw_system_get(db, system, &sys, NULL, 0) == 0)
			per_node = sys.gpus_per_node;
		hw_close(db);
		pp_str cmd = {0};
		pp_str_addf(&cmd, "mpirun -np %d", w->gpus);
		if (per_node > 0 && w->gpus > per_node)
			pp_str_addf(&cmd, " --npernode %d", per_node);
		pp_str_add(&cmd, " paraplan plan train");
		for (int i = 0; i < argc; i++)
			shell_arg(&cmd, args[i]);
		if (alone)
			snprintf(err, sizeof err, "the winner runs on %d GPUs, one process each, and this is one process", w->gpus);
		else
			snprintf(err, sizeof err, "launched as %d processes, but the winner runs on %d GPUs", ntasks, w->gpus);
		cJSON_AddStringToObject(v, "status", "not run");
		cJSON_AddStringToObject(v, "reason", err);
		cJSON_AddStringToObject(v, "command", cmd.buf ? cmd.buf : "");
		if (lrank == 0)
			fprintf(stderr, "validation not run: %s; to run it:\n  %s\n", err, cmd.buf ? cmd.buf : "");
		pp_str_free(&cmd);
		return 1;
	}
	cal_replay_plan plan;
	memset(&plan, 0, sizeof plan);
	pp_strlcpy(plan.model, model_spec, sizeof plan.model);
	pp_strlcpy(plan.system, system, sizeof plan.system);
	pp_strlcpy(plan.kind, "plan-train", sizeof plan.kind);
	plan.cfg = *w;
	plan.predicted_s = predicted;
	cal_replay_opts o = {.plan = &plan, .db_path = db_path, .steps = steps, .warmup = 3, .note = "plan train --validate",
			     .progress = NULL};
	cJSON *rep = NULL;
	bool root = true;
	int rc = cal_replay_run(&o, &rep, &root, err, sizeof err);
	if (rc != 0) {
		cJSON_AddStringToObject(v, "status", "not run");
		cJSON_AddStringToObject(v, "reason", err);
		if (root)
			fprintf(stderr, "validation not run: %s\n", err);
		cJSON_Delete(rep);
		return cli_status(rc) == 2 ? 2 : 1;
	}
	cJSON_AddStringToObject(v, "status", "measured");
	if (rep != NULL) {
		static const char *const keys[] = {"measured_s", "predicted_s", "error", "run_id", "steps", "warmup", "gpu_name",
						   "host", "step_s"};
		for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
			cJSON *x = cJSON_DetachItemFromObject(rep, keys[i]);
			if (x)
				cJSON_AddItemToObject(v, keys[i], x);
		}
	}
	cJSON_Delete(rep);
	return 0;
}

static void
print_validation(const cJSON *doc)
{
	const cJSON *v = cJSON_GetObjectItem(doc, "validation");
	if (v == NULL || strcmp(cli_str(v, "status"), "measured") != 0)
		return;
	char a[32], b[32];
	printf("\nValidation on %s: measured %s (median of %.0f steps), predicted %s, error %+.1f%%; validation run %.0f\n",
	       cli_str(v, "gpu_name"), cli_seconds(cli_num(v, "measured_s"), a, sizeof a), cli_num(v, "steps"),
	       cli_seconds(cli_num(v, "predicted_s"), b, sizeof b), 100.0 * cli_num(v, "error"), cli_num(v, "run_id"));
}

static int
plan_train_cmd(int argc, char **argv)
{
	static const struct option opts[] = {
		{"model", required_argument, NULL, O_MODEL}, {"system", required_argument, NULL, O_SYSTEM},
		{"gpus", required_argument, NULL, O_GPUS}, {"global-batch", required_argument, NULL, O_GB},
		{"seq", required_argument, NULL, O_SEQ}, {"objective", required_argument, NULL, O_OBJ},
		{"price", required_argument, NULL, O_PRICE}, {"top", required_argument, NULL, O_TOP},
		{"jobs", required_argument, NULL, O_JOBS}, {"tp-across-nodes", no_argument, NULL, O_TPX},
		{"dtypes", required_argument, NULL, O_DTYPES}, {"export", required_argument, NULL, O_EXPORT},
		{"out", required_argument, NULL, O_OUT}, {"json", no_argument, NULL, O_JSON},
		{"db", required_argument, NULL, O_DB}, {"tokens", required_argument, NULL, O_TOKENS},
		{"days", required_argument, NULL, O_DAYS}, {"systems", required_argument, NULL, O_SYSTEMS},
		{"life-years", required_argument, NULL, O_LIFE}, {"kwh-price", required_argument, NULL, O_KWH},
		{"pue", required_argument, NULL, O_PUE}, {"simulate", required_argument, NULL, O_SIMN},
		{"gpus-per-node", required_argument, NULL, O_GPN},
		{"validate", no_argument, NULL, O_VALIDATE}, {"validate-steps", required_argument, NULL, O_VSTEPS},
		{"help", no_argument, NULL, O_HELP}, {NULL, 0, NULL, 0},
	};
	bool want_validate = false;
	long long vsteps = 10;
	plan_train_opts o;
	plan_train_opts_init(&o);
	plan_capacity_opts co;
	plan_capacity_opts_init(&co);
	const char *model_spec = NULL, *system = NULL, *db_path = NULL, *out_path = NULL, *gpus_s = NULL;
	char *systems_s = NULL;
	bool json = false, have_export = false;
	plan_export ex = PLAN_EXPORT_MEGATRON;
	double d;
	long long ll;
	int c;
	optind = 1;
	opterr = 0;
	unsigned char seen[CLI_OPT_MAX] = {0};
	while ((c = cli_getopt(argc, argv, opts, seen)) != -1) {
		switch (c) {
		case O_MODEL: model_spec = optarg; break;
		case O_SYSTEM: system = optarg; break;
		case O_GPUS: gpus_s = optarg; break;
		case O_GB:
			if (cli_int("plan", "--global-batch", optarg, 1, 1LL << 40, &ll))
				return 2;
			o.global_batch = co.global_batch = ll;
			break;
		case O_SEQ:
			if (cli_int("plan", "--seq", optarg, 1, 1 << 24, &ll))
				return 2;
			o.seq = co.seq = ll;
			break;
		case O_OBJ:
			if (!strcmp(optarg, "time"))
				o.objective = PLAN_TIME;
			else if (!strcmp(optarg, "cost"))
				o.objective = PLAN_COST;
			else
				return cli_usage("plan", "--objective must be time or cost, got \"%s\"", optarg);
			break;
		case O_PRICE:
			if (cli_double("plan", "--price", optarg, 0.0001, 1e6, &o.price))
				return 2;
			break;
		case O_TOP:
			if (cli_int("plan", "--top", optarg, 1, 1000, &ll))
				return 2;
			o.top = (int)ll;
			break;
		case O_SIMN:
			if (cli_int("plan", "--simulate", optarg, 1, 100000, &ll))
				return 2;
			o.simulate = (int)ll;
			break;
		case O_JOBS:
			if (cli_int("plan", "--jobs", optarg, 1, 256, &ll))
				return 2;
			o.jobs = co.jobs = (int)ll;
			break;
		case O_TPX: o.tp_across = true; break;
		case O_DTYPES: {
			char buf[128];
			if (!pp_strlcpy(buf, optarg, sizeof buf))
				return cli_usage("plan", "--dtypes is too long");
			o.ndtypes = 0;
			for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
				hw_dtype t;
				if (hw_dtype_parse(tok, &t) != 0 || o.ndtypes >= 4)
					return cli_usage("plan", "--dtypes takes up to four of bf16, fp16, fp8, fp32; got \"%s\"", tok);
				o.dtypes[o.ndtypes++] = t;
			}
			break;
		}
		case O_EXPORT:
			if (plan_export_parse(optarg, &ex) != 0)
				return cli_usage("plan", "--export must be megatron, deepspeed, torchrun or slurm, got \"%s\"", optarg);
			have_export = true;
			break;
		case O_OUT: out_path = optarg; break;
		case O_JSON: json = true; break;
		case O_DB: db_path = optarg; break;
		case O_GPN:
			if (cli_int("plan", "--gpus-per-node", optarg, 1, 1024, &ll))
				return 2;
			o.gpus_per_node = (int)ll;
			break;
		case O_TOKENS:
			if (cli_double("plan", "--tokens", optarg, 1.0, 1e18, &co.tokens))
				return 2;
			break;
		case O_DAYS:
			if (cli_double("plan", "--days", optarg, 0.001, 1e5, &co.days))
				return 2;
			break;
		case O_SYSTEMS: systems_s = optarg; break;
		case O_LIFE:
			if (cli_double("plan", "--life-years", optarg, 0.1, 50, &co.life_years))
				return 2;
			break;
		case O_KWH:
			if (cli_double("plan", "--kwh-price", optarg, 0, 100, &co.usd_per_kwh))
				return 2;
			break;
		case O_PUE:
			if (cli_double("plan", "--pue", optarg, 1.0, 5.0, &co.pue))
				return 2;
			break;
		case O_VALIDATE: want_validate = true; break;
		case O_VSTEPS:
			if (cli_int("plan", "--validate-steps", optarg, 1, 10000, &vsteps))
				return 2;
			break;
		case O_HELP:
		case 'h':
			fputs(usage_train, stdout);
			return 0;
		default:
			return cli_bad_option("plan", c, argv);
		}
	}
	(void)d;
	o.life_years = co.life_years;
	o.usd_per_kwh = co.usd_per_kwh;
	o.pue = co.pue;
	if (optind < argc)
		return cli_usage("plan", "unexpected argument \"%s\"", argv[optind]);
	if (model_spec == NULL)
		return cli_usage("plan", "--model is required (a catalog name or a path)");
	if (o.global_batch <= 0)
		return cli_usage("plan", "--global-batch is required");
	bool capacity = co.tokens > 0 || co.days > 0;
	if (capacity && !(co.tokens > 0 && co.days > 0))
		return cli_usage("plan", "capacity planning needs both --tokens and --days");
	if (!capacity && system == NULL)
		return cli_usage("plan", "--system is required (see 'paraplan hw list')");
	if (!capacity && gpus_s == NULL)
		return cli_usage("plan", "--gpus is required (N, A..B or A,B,...)");
	if (out_path != NULL && !have_export)
		return cli_usage("plan", "--out applies to --export");
	if (capacity && have_export)
		return cli_usage("plan", "--export applies to a layout search, not to capacity planning");
	if (capacity && want_validate)
		return cli_usage("plan", "--validate applies to a layout search, not to capacity planning");
	int *gpus = NULL;
	size_t ngpus = 0;
	if (gpus_s != NULL && parse_gpus(gpus_s, &gpus, &ngpus) != 0)
		return cli_usage("plan", "--gpus must be N, A..B (doubling) or a comma list of counts from 1 to %d, got \"%s\"",
				 1 << 24, gpus_s);
	char err[1024];
	model *m;
	int rc = model_load(model_spec, &m, err, sizeof err);
	if (rc != 0) {
		free(gpus);
		return cli_fail(rc == PP_ENOTFOUND ? PP_EUSAGE : rc, err);
	}
	hw_db *db;
	if ((rc = cli_open_db(db_path, 0, &db)) != 0) {
		free(gpus);
		model_free(m);
		return rc;
	}
	progress pg = {isatty(2) != 0, now_s()};
	stop_flag = 0;
	signal(SIGINT, on_sigint);
	int status = 0;
	double t0 = now_s();
	if (capacity) {
		const char *defaults[] = {"dgx-a100", "dgx-h100", "hgx-h200", "dgx-b200"};
		const char *list[32];
		size_t nl = 0;
		if (systems_s != NULL) {
			for (char *tok = strtok(systems_s, ","); tok && nl < 32; tok = strtok(NULL, ","))
				list[nl++] = tok;
		} else {
			for (size_t i = 0; i < 4; i++)
				list[nl++] = defaults[i];
		}
		const model_tf *tf = model_transformer(m);
		if (co.seq <= 0)
			co.seq = tf ? tf->seq : 1;
		co.stop = &stop_flag;
		co.progress = show_progress;
		co.progress_arg = &pg;
		cJSON *doc = NULL;
		rc = plan_capacity(m, db, list, nl, &co, &doc, err, sizeof err);
		if (pg.tty)
			fputs("\r\033[K", stderr);
		if (rc != 0) {
			status = cli_fail(rc, err);
		} else {
			json ? cli_print_json(doc) : print_capacity(doc);
		}
		cJSON_Delete(doc);
	} else {
		o.gpus = gpus;
		o.ngpus = ngpus;
		o.stop = &stop_flag;
		o.progress = show_progress;
		o.progress_arg = &pg;
		plan_train_result *r = NULL;
		rc = plan_train(m, db, system, &o, &r, err, sizeof err);
		if (pg.tty)
			fputs("\r\033[K", stderr);
		if (rc != 0) {
			status = cli_fail(rc, err);
		} else {
			cJSON *doc = plan_train_json(r);
			const sim_train_cfg *w = plan_train_winner(r);
			if (have_export) {
				if (w == NULL) {
					status = cli_fail(PP_EINPUT, "no layout fits: nothing to export");
				} else {
					hw_system sys;
					char *text = NULL;
					rc = hw_system_get(db, system, &sys, err, sizeof err);
					if (rc == 0)
						rc = plan_export_config(m, &sys, w, ex, &text, err, sizeof err);
					if (rc == 0 && out_path != NULL)
						rc = pp_write_file_atomic(out_path, text, strlen(text), err, sizeof err);
					else if (rc == 0)
						fputs(text, stdout);
					if (rc != 0)
						status = cli_fail(rc, err);
					free(text);
				}
			}
			/* Under a launcher every rank plans; rank 0 prints. */
			int lrank = 0;
			cal_launched_tasks(NULL, &lrank);
			bool printing = lrank == 0;
			if (!json && printing && (!have_export || out_path != NULL))
				print_plan(doc, now_s() - t0);
			if (want_validate && w != NULL && status == 0) {
				fflush(stdout);
				const cJSON *win = cJSON_GetObjectItem(doc, "winner");
				status = validate(doc, model_spec, system, w, cli_num(win, "step_time_s"), db_path, (int)vsteps,
						  argc - 1, argv + 1); /* no operands: getopt_long kept the order */
				if (!json && printing)
					print_validation(doc);
			} else if (want_validate && w == NULL) {
				cJSON *v = cJSON_AddObjectToObject(doc, "validation");
				cJSON_AddStringToObject(v, "status", "not run");
				cJSON_AddStringToObject(v, "reason", "no layout fits: nothing to replay");
			}
			if (json && printing && (!have_export || out_path != NULL))
				cli_print_json(doc);
			if (status == 0 && w == NULL) {
				if (printing)
					cli_error("no layout of %s fits on %s: see the smallest footprint above", model_name(m), system);
				status = 1;
			}
			cJSON_Delete(doc);
			if (plan_train_interrupted(r))
				fprintf(stderr, "interrupted: printed the best found so far\n");
		}
		plan_train_result_free(r);
	}
	signal(SIGINT, SIG_DFL);
	free(gpus);
	hw_close(db);
	model_free(m);
	return status;
}

static const char usage_serve[] =
	"usage: paraplan plan serve --model M --rate QPS --slo-ttft-p99 MS --slo-tpot-p99 MS\n"
	"           [--slo-e2e-p99 MS] [--systems S1,S2,...] [--weights bf16,fp8,int8,int4]\n"
	"           [--prompt-len DIST] [--output-len DIST] [--failures K] [--duration S] [--top K]\n"
	"           [--no-disaggregate] [--jobs N] [--seed N] [--json] [--db FILE]\n"
	"\n"
	"Finds the cheapest deployment of M that serves QPS requests per second within the SLO:\n"
	"for each system (default: dgx-a100, dgx-h100, hgx-h200, dgx-b200), TP and PP degree, weight\n"
	"format, batch limit and prefill/decode disaggregation (1:1 and 1:2, unless\n"
	"--no-disaggregate), the highest rate one unit (a replica, or a prefill:decode group)\n"
	"sustains within the SLO (found by bisection over simulated runs), the units the rate needs\n"
	"(plus K spare replicas with --failures K, K of each kind when disaggregated, so the SLO\n"
	"holds with K replicas down), checked by simulating the whole deployment at the rate.\n"
	"Ranked by dollars per hour at each system's price.\n"
	"DIST as in 'simulate serve' (default prompt 512, output 256 tokens).\n"
	"\n"
	"Example:\n"
	"  paraplan plan serve --model llama-3-70b --rate 100 --slo-ttft-p99 500 --slo-tpot-p99 50 \\\n"
	"      --systems dgx-h100,hgx-h200 --weights bf16,int4\n";

static void
print_serve_plan(const cJSON *doc)
{
	const cJSON *slo = cJSON_GetObjectItem(doc, "slo");
	printf("%s at %.4g requests/s, P99 TTFT <= %.0f ms, P99 TPOT <= %.0f ms", cli_str(doc, "model"), cli_num(doc, "rate"),
	       1e3 * cli_num(slo, "ttft_p99_s"), 1e3 * cli_num(slo, "tpot_p99_s"));
	if (cli_num(slo, "e2e_p99_s") > 0)
		printf(", P99 end-to-end <= %.0f ms", 1e3 * cli_num(slo, "e2e_p99_s"));
	if (cli_num(doc, "failures_tolerated") > 0)
		printf(", sized for %.0f failed replica(s)", cli_num(doc, "failures_tolerated"));
	printf("\n%.0f deployments evaluated\n\n", cli_num(doc, "candidates_evaluated"));
	const cJSON *arr = cJSON_GetObjectItem(doc, "deployments");
	if (cJSON_GetArraySize(arr) == 0) {
		printf("no deployment meets the SLO (see --json for why each was rejected)\n");
		return;
	}
	const char *h[] = {"#", "system", "tp", "pp", "weights", "max seqs", "P:D", "req/s per unit", "replicas", "GPUs",
			   "$/hour", "$/month", "$/M out tok", "P99 TTFT", "P99 TPOT", "headroom"};
	cli_table *t = cli_table_new(16, h, "rlrrlrlrrrrrrrrr");
	const cJSON *x;
	cJSON_ArrayForEach(x, arr)
	{
		char a[32], b[32];
		cli_table_addf(t, 0, "%.0f", cli_num(x, "rank"));
		cli_table_addf(t, 1, "%s", cli_str(x, "system"));
		cli_table_addf(t, 2, "%.0f", cli_num(x, "tp"));
		cli_table_addf(t, 3, "%.0f", cli_num(x, "pp"));
		cli_table_addf(t, 4, "%s", cli_str(x, "weights"));
		cli_table_addf(t, 5, "%.0f", cli_num(x, "max_num_seqs"));
		cli_table_addf(t, 6, "%s", strcmp(cli_str(x, "disaggregation"), "off") ? cli_str(x, "disaggregation") : "-");
		cli_table_addf(t, 7, "%.3g", cli_num(x, "capacity_per_unit"));
		if (cli_num(x, "spares") > 0)
			cli_table_addf(t, 8, "%.0f (+%.0f)", cli_num(x, "replicas") - cli_num(x, "spares"), cli_num(x, "spares"));
		else
			cli_table_addf(t, 8, "%.0f", cli_num(x, "replicas"));
		cli_table_addf(t, 9, "%.0f", cli_num(x, "gpus"));
		cli_table_addf(t, 10, "%.2f", cli_num(x, "usd_per_hour"));
		cli_table_addf(t, 11, "%.0f", cli_num(x, "usd_per_month"));
		cli_table_addf(t, 12, "%.3f", cli_num(x, "usd_per_million_output_tokens"));
		cli_table_addf(t, 13, "%s", cli_seconds(cli_num(x, "ttft_p99_s"), a, sizeof a));
		cli_table_addf(t, 14, "%s", cli_seconds(cli_num(x, "tpot_p99_s"), b, sizeof b));
		cli_table_addf(t, 15, "%+.0f%%", 100.0 * cli_num(x, "headroom"));
	}
	cli_table_print(t, stdout);
	cli_table_free(t);
}

static int
plan_serve_cmd(int argc, char **argv)
{
	enum { P_MODEL = 400, P_RATE, P_TTFT, P_TPOT, P_E2E, P_SYSTEMS, P_WEIGHTS, P_PROMPT, P_OUTPUT, P_FAIL, P_DUR, P_TOP,
	       P_JOBS, P_SEED, P_JSON, P_DB, P_HELP, P_NODISAGG };
	static const struct option opts[] = {
		{"model", required_argument, NULL, P_MODEL}, {"rate", required_argument, NULL, P_RATE},
		{"slo-ttft-p99", required_argument, NULL, P_TTFT}, {"slo-tpot-p99", required_argument, NULL, P_TPOT},
		{"slo-e2e-p99", required_argument, NULL, P_E2E}, {"systems", required_argument, NULL, P_SYSTEMS},
		{"weights", required_argument, NULL, P_WEIGHTS}, {"prompt-len", required_argument, NULL, P_PROMPT},
		{"output-len", required_argument, NULL, P_OUTPUT}, {"failures", required_argument, NULL, P_FAIL},
		{"duration", required_argument, NULL, P_DUR}, {"top", required_argument, NULL, P_TOP},
		{"jobs", required_argument, NULL, P_JOBS}, {"seed", required_argument, NULL, P_SEED},
		{"json", no_argument, NULL, P_JSON}, {"db", required_argument, NULL, P_DB},
		{"no-disaggregate", no_argument, NULL, P_NODISAGG}, {"help", no_argument, NULL, P_HELP},
		{NULL, 0, NULL, 0},
	};
	plan_serve_opts o;
	plan_serve_opts_init(&o);
	const char *model_spec = NULL, *db_path = NULL;
	char *systems_s = NULL, *weights_s = NULL;
	bool json = false;
	char err[1024];
	double d;
	long long ll;
	int c;
	optind = 1;
	opterr = 0;
	unsigned char seen[CLI_OPT_MAX] = {0};
	while ((c = cli_getopt(argc, argv, opts, seen)) != -1) {
		switch (c) {
		case P_MODEL: model_spec = optarg; break;
		case P_RATE:
			if (cli_double("plan", "--rate", optarg, 1e-6, 1e7, &o.rate))
				return 2;
			break;
		case P_TTFT:
			if (cli_double("plan", "--slo-ttft-p99", optarg, 0.001, 1e9, &d))
				return 2;
			o.slo_ttft_s = d / 1e3;
			break;
		case P_TPOT:
			if (cli_double("plan", "--slo-tpot-p99", optarg, 0.001, 1e9, &d))
				return 2;
			o.slo_tpot_s = d / 1e3;
			break;
		case P_E2E:
			if (cli_double("plan", "--slo-e2e-p99", optarg, 0.001, 1e9, &d))
				return 2;
			o.slo_e2e_s = d / 1e3;
			break;
		case P_SYSTEMS: systems_s = optarg; break;
		case P_WEIGHTS: weights_s = optarg; break;
		case P_PROMPT:
			if (sim_dist_parse(optarg, &o.prompt, err, sizeof err) != 0)
				return cli_usage("plan", "--prompt-len: %s", err);
			break;
		case P_OUTPUT:
			if (sim_dist_parse(optarg, &o.output, err, sizeof err) != 0)
				return cli_usage("plan", "--output-len: %s", err);
			break;
		case P_FAIL:
			if (cli_int("plan", "--failures", optarg, 0, 1000, &ll))
				return 2;
			o.failures = (int)ll;
			break;
		case P_DUR:
			if (cli_double("plan", "--duration", optarg, 1, 1e6, &o.duration_s))
				return 2;
			break;
		case P_TOP:
			if (cli_int("plan", "--top", optarg, 1, 1000, &ll))
				return 2;
			o.top = (int)ll;
			break;
		case P_JOBS:
			if (cli_int("plan", "--jobs", optarg, 1, 256, &ll))
				return 2;
			o.jobs = (int)ll;
			break;
		case P_SEED:
			if (cli_int("plan", "--seed", optarg, 0, INT64_MAX, &ll))
				return 2;
			o.seed = (uint64_t)ll;
			break;
		case P_JSON: json = true; break;
		case P_DB: db_path = optarg; break;
		case P_NODISAGG: o.disaggregate = false; break;
		case P_HELP:
		case 'h':
			fputs(usage_serve, stdout);
			return 0;
		default:
			return cli_bad_option("plan", c, argv);
		}
	}
	if (optind < argc)
		return cli_usage("plan", "unexpected argument \"%s\"", argv[optind]);
	if (model_spec == NULL)
		return cli_usage("plan", "--model is required");
	if (!(o.rate > 0))
		return cli_usage("plan", "--rate is required (requests per second)");
	if (!(o.slo_ttft_s > 0) || !(o.slo_tpot_s > 0))
		return cli_usage("plan", "--slo-ttft-p99 and --slo-tpot-p99 are required (milliseconds)");
	const char *defaults[] = {"dgx-a100", "dgx-h100", "hgx-h200", "dgx-b200"};
	const char *list[32];
	size_t nl = 0;
	if (systems_s != NULL) {
		for (char *tok = strtok(systems_s, ","); tok && nl < 32; tok = strtok(NULL, ","))
			list[nl++] = tok;
	} else {
		for (size_t i = 0; i < 4; i++)
			list[nl++] = defaults[i];
	}
	o.systems = list;
	o.nsystems = nl;
	if (weights_s != NULL) {
		for (char *tok = strtok(weights_s, ","); tok; tok = strtok(NULL, ",")) {
			hw_dtype w;
			if (hw_dtype_parse(tok, &w) != 0 || o.nweights >= 4 ||
			    (w != HW_BF16 && w != HW_FP8 && w != HW_INT8 && w != HW_INT4))
				return cli_usage("plan", "--weights takes up to four of bf16, fp8, int8, int4; got \"%s\"", tok);
			o.weights[o.nweights++] = w;
		}
	}
	model *m;
	int rc = model_load(model_spec, &m, err, sizeof err);
	if (rc != 0)
		return cli_fail(rc == PP_ENOTFOUND ? PP_EUSAGE : rc, err);
	hw_db *db;
	if ((rc = cli_open_db(db_path, 0, &db)) != 0) {
		model_free(m);
		return rc;
	}
	progress pg = {isatty(2) != 0, now_s()};
	stop_flag = 0;
	signal(SIGINT, on_sigint);
	o.stop = &stop_flag;
	o.progress = show_progress;
	o.progress_arg = &pg;
	cJSON *doc = NULL;
	rc = plan_serve(m, db, &o, &doc, err, sizeof err);
	if (pg.tty)
		fputs("\r\033[K", stderr);
	signal(SIGINT, SIG_DFL);
	int status = 0;
	if (rc != 0) {
		status = cli_fail(rc, err);
	} else {
		json ? cli_print_json(doc) : print_serve_plan(doc);
		if (cJSON_GetArraySize(cJSON_GetObjectItem(doc, "deployments")) == 0) {
			cli_error("no deployment of %s meets the SLO at %.4g requests/s", model_name(m), o.rate);
			status = 1;
		}
	}
	cJSON_Delete(doc);
	hw_close(db);
	model_free(m);
	return status;
}

int
cmd_plan(int argc, char **argv)
{
	static const cli_sub subs[] = {{"train", plan_train_cmd}, {"serve", plan_serve_cmd}, {NULL, NULL}};
	return cli_dispatch("plan", usage_top, subs, argc, argv);
}
