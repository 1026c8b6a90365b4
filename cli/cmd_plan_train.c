/*
 * cmd_plan_train.c -- 'paraplan plan train': search the layouts of a model on a system and GPU
 * count and rank them; capacity planning (--tokens, --days); launch configurations of the
 * winner (--export); its replay on GPUs (--validate).
 */
#include "config.h"
#include "calibrate/cal.h"
#include "cli/cli.h"
#include "models/model.h"
#include "planner/plan.h"

#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char about_text[] =
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
	"Capacity counts failures: the days are the training days over the goodput, the share of the\n"
	"wall-clock time that trains when the job is interrupted (--failure-rate per GPU-hour, default\n"
	"Llama 3's), checkpoints at Daly's optimal interval and restarts (--restart-min plus reading the\n"
	"checkpoint at --checkpoint-gbps); --no-failures gives the failure-free answer.\n"
	"\n"
	"--lora-rank, --lora-modules, --base-dtype and --sample-len plan a fine-tuning run as\n"
	"'simulate train' runs it (docs/finetune-goodput.md).\n";

static const char examples_text[] =
	"  paraplan plan train --model llama-3-70b --system dgx-h100 --gpus 64 --global-batch 512\n"
	"  paraplan plan train --model llama-3-70b --system dgx-h100 --gpus 64 --global-batch 512 --export megatron\n"
	"  paraplan plan train --model llama-3-70b --tokens 15T --days 90 --global-batch 2048 --systems dgx-h100,dgx-b200\n"
	"  paraplan plan train --model llama-2-70b --system dgx-h100 --gpus 8 --global-batch 32 --seq 4096 --lora-rank 16\n";

/* --tp 4, --tp 2,4,8, --tp 1..8: a pinned search dimension (plan_pin) */
static int
opt_pin(const cli_opt *o, const char *val, char *err, size_t errlen)
{
	plan_pin *pin = o->target;
	cli_ints l;
	cli_opt tmp = *o;
	tmp.target = &l;
	int rc = cli_opt_ints(&tmp, val, err, errlen);
	if (rc != 0)
		return rc;
	if (l.n > PLAN_PIN_MAX)
		return pp_err(err, errlen, PP_EUSAGE, "--%s lists more than %d values", o->name, PLAN_PIN_MAX);
	pin->n = l.n;
	memcpy(pin->v, l.v, (size_t)l.n * sizeof *l.v);
	return 0;
}
#define OPT_PIN(N, A, P, LO, HI, H) {N, A, opt_pin, CLI_TARGET(plan_pin, P), LO, HI, H, 0, NULL, NULL}

/* --schedule 1f1b,interleaved: a mask of schedules */
static int
opt_schedules(const cli_opt *o, const char *val, char *err, size_t errlen)
{
	unsigned *mask = o->target;
	cli_strs l = {0};
	cli_opt tmp = *o;
	tmp.target = &l;
	int rc = cli_opt_list(&tmp, val, err, errlen);
	*mask = 0;
	for (int i = 0; rc == 0 && i < l.n; i++) {
		sim_schedule sc;
		if (sim_schedule_parse(l.v[i], &sc) != 0)
			return pp_err(err, errlen, PP_EUSAGE, "--schedule takes gpipe, 1f1b, interleaved or zb-h1 (or a list), got \"%s\"",
				      l.v[i]);
		*mask |= 1u << sc;
	}
	return rc;
}

/* --recompute none,full: a mask */
static int
opt_recomputes(const cli_opt *o, const char *val, char *err, size_t errlen)
{
	unsigned *mask = o->target;
	cli_strs l = {0};
	cli_opt tmp = *o;
	tmp.target = &l;
	int rc = cli_opt_list(&tmp, val, err, errlen);
	*mask = 0;
	for (int i = 0; rc == 0 && i < l.n; i++) {
		sim_recompute r;
		if (sim_recompute_parse(l.v[i], &r) != 0)
			return pp_err(err, errlen, PP_EUSAGE, "--recompute takes none, selective, full or op (or a list), got \"%s\"", l.v[i]);
		*mask |= 1u << r;
	}
	return rc;
}

/* --dtype bf16 or bf16,fp8: the dtypes to try */
static int
opt_dtypes(const cli_opt *o, const char *val, char *err, size_t errlen)
{
	plan_train_opts *po = o->target;
	cli_strs l = {0};
	cli_opt tmp = *o;
	tmp.target = &l;
	int rc = cli_opt_list(&tmp, val, err, errlen);
	po->ndtypes = 0;
	for (int i = 0; rc == 0 && i < l.n; i++) {
		hw_dtype t;
		if (hw_dtype_parse(l.v[i], &t) != 0 || po->ndtypes >= 4 ||
		    (t != HW_BF16 && t != HW_FP16 && t != HW_FP8 && t != HW_FP32))
			return pp_err(err, errlen, PP_EUSAGE, "--dtype takes up to four of bf16, fp16, fp8, fp32; got \"%s\"", l.v[i]);
		po->dtypes[po->ndtypes++] = t;
	}
	return rc;
}

/* --memory-headroom 10 or 10%: percent of GPU memory kept free */
static int
opt_headroom(const cli_opt *o, const char *val, char *err, size_t errlen)
{
	char buf[32];
	double v;
	if (!pp_strlcpy(buf, val, sizeof buf))
		return pp_err(err, errlen, PP_EUSAGE, "--memory-headroom must be a percentage from 0 to 90, got \"%s\"", val);
	size_t n = strlen(buf);
	if (n > 0 && buf[n - 1] == '%')
		buf[n - 1] = '\0';
	if (pp_parse_double(buf, &v) != 0 || !(v >= 0.0) || !(v <= 90.0))
		return pp_err(err, errlen, PP_EUSAGE, "--memory-headroom must be a percentage from 0 to 90, got \"%s\"", val);
	*(double *)o->target = v / 100.0;
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
		double headroom = cli_num(doc, "memory_headroom");
		if (cJSON_GetArraySize(cands) == 0) {
			if (cli_str(cnt, "simulation_failed")[0] != '\0') {
				printf("no layout: those that fit could not be simulated: %s\n", cli_str(cnt, "simulation_failed"));
			} else if (cli_num(cnt, "smallest_footprint_bytes") > 0) {
				char a[32], b[32], l[32];
				printf("no layout fits: the smallest needs %s per GPU, and the limit is %s (%s less %.0f%% headroom, "
				       "--memory-headroom); use more GPUs or a GPU with more memory\n",
				       cli_bytes(cli_num(cnt, "smallest_footprint_bytes"), a, sizeof a),
				       cli_bytes(cli_num(cnt, "memory_limit_bytes"), l, sizeof l),
				       cli_bytes(cli_num(cnt, "capacity_bytes"), b, sizeof b), 100.0 * headroom);
			} else if (cli_str(cnt, "invalid_reason")[0] != '\0') {
				printf("no valid layout: %s\n", cli_str(cnt, "invalid_reason"));
			} else {
				printf("no valid layout: check that --global-batch divides by the data-parallel degrees\n");
			}
			continue;
		}
		{
			const cJSON *first = cJSON_GetArrayItem(cands, 0);
			char a[32], b[32];
			printf("memory limit per GPU %s: %s less %.0f%% headroom (--memory-headroom)\n",
			       cli_bytes(cli_num(first, "memory_limit_bytes"), a, sizeof a),
			       cli_bytes(cli_num(first, "capacity_bytes"), b, sizeof b), 100.0 * headroom);
			const cJSON *iv = cJSON_GetObjectItem(first, "step_time_interval_s");
			if (cJSON_GetArraySize(iv) == 2)
				printf("ties (=): runners-up whose 80%% interval overlaps the winner's (%.3g to %.3g s)\n\n",
				       cJSON_GetArrayItem(iv, 0)->valuedouble, cJSON_GetArrayItem(iv, 1)->valuedouble);
			else
				printf("ties (=): runners-up within the winner's %.1f%% prediction uncertainty of it\n\n",
				       100.0 * cli_num(first, "uncertainty"));
		}
		const char *h[] = {"#", "tp", "pp", "dp", "cp", "ep", "schedule", "zero", "mb", "recompute", "sp", "dtype",
				   "framework", "step", "tok/s/GPU", "MFU", "bubble", "exp.comm", "memory", "$/Mtok", "why not first"};
		cli_table *t = cli_table_new(21, h, "rrrrrrlrrlllllrrrrrrl");
		const cJSON *x;
		cJSON_ArrayForEach(x, cands)
		{
			const cJSON *c = cJSON_GetObjectItem(x, "config");
			char a[32];
			bool tie = cJSON_IsTrue(cJSON_GetObjectItem(x, "tie"));
			cli_table_addf(t, 0, "%.0f%s", cli_num(x, "rank"), tie ? "=" : "");
			cli_table_addf(t, 1, "%.0f", cli_num(c, "tp"));
			cli_table_addf(t, 2, "%.0f", cli_num(c, "pp"));
			cli_table_addf(t, 3, "%.0f", cli_num(c, "dp"));
			cli_table_addf(t, 4, "%.0f", cli_num(c, "cp"));
			cli_table_addf(t, 5, "%.0f", cli_num(c, "ep"));
			if (cli_num(c, "vpp") > 1)
				cli_table_addf(t, 6, "%s v%.0f", cli_str(c, "schedule"), cli_num(c, "vpp"));
			else
				cli_table_addf(t, 6, "%s", cli_str(c, "schedule"));
			char shard[32] = "";
			if (cJSON_IsNumber(cJSON_GetObjectItem(c, "dp_shard")))
				snprintf(shard, sizeof shard, ", shard %.0f", cli_num(c, "dp_shard"));
			cli_table_addf(t, 7, "%.0f%s%s", cli_num(c, "zero"), cJSON_IsTrue(cJSON_GetObjectItem(c, "fsdp")) ? " fsdp" : "",
				       shard);
			cli_table_addf(t, 8, "%.0f", cli_num(c, "micro_batch"));
			cli_table_addf(t, 9, "%s", cli_str(c, "recompute"));
			cli_table_addf(t, 10, "%s", cJSON_IsTrue(cJSON_GetObjectItem(c, "sequence_parallel")) ? "yes" : "no");
			cli_table_addf(t, 11, "%s", cli_str(c, "dtype"));
			cli_table_addf(t, 12, "%s", cli_str(x, "framework")[0] ? cli_str(x, "framework") : "-");
			cli_table_addf(t, 13, "%s", cli_seconds(cli_num(x, "step_time_s"), a, sizeof a));
			cli_table_addf(t, 14, "%.0f", cli_num(x, "tokens_per_s_per_gpu"));
			cli_table_addf(t, 15, "%.1f%%", 100.0 * cli_num(x, "mfu"));
			cli_table_addf(t, 16, "%.1f%%", 100.0 * cli_num(x, "bubble_fraction"));
			cli_table_addf(t, 17, "%s", cli_seconds(cli_num(x, "exposed_comm_s"), a, sizeof a));
			cli_table_addf(t, 18, "%s", cli_bytes(cli_num(x, "peak_bytes"), a, sizeof a));
			if (cJSON_GetObjectItem(x, "usd_per_million_tokens"))
				cli_table_addf(t, 19, "%.3f", cli_num(x, "usd_per_million_tokens"));
			else
				cli_table_addf(t, 19, "-");
			cli_table_addf(t, 20, "%s%s", tie ? "tie: " : "", cli_str(x, "why_not_first"));
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
	const char *h[] = {"system", "GPUs", "nodes", "days", "goodput", "GPUs w/o failures", "MFU", "layout",
			   "rent (cheapest)", "rent (on-demand max)", "buy"};
	cli_table *t = cli_table_new(11, h, "lrrrrrrlrrr");
	bool failures = false;
	const cJSON *x;
	cJSON_ArrayForEach(x, cJSON_GetObjectItem(doc, "systems"))
	{
		cli_table_addf(t, 0, "%s", cli_str(x, "system"));
		if (!cJSON_IsTrue(cJSON_GetObjectItem(x, "feasible"))) {
			cli_table_addf(t, 1, "-");
			cli_table_addf(t, 10, "%s", cli_str(x, "reason"));
			continue;
		}
		const cJSON *c = cJSON_GetObjectItem(x, "config");
		cli_table_addf(t, 1, "%.0f", cli_num(x, "gpus"));
		cli_table_addf(t, 2, "%.0f", cli_num(x, "nodes"));
		cli_table_addf(t, 3, "%.1f", cli_num(x, "days"));
		const cJSON *f = cJSON_GetObjectItem(x, "failures");
		if (f != NULL) {
			failures = true;
			cli_table_addf(t, 4, "%.1f%%", 100.0 * cli_num(f, "goodput"));
			cli_table_addf(t, 5, "%.0f", cli_num(f, "gpus_without_failures"));
		} else {
			cli_table_addf(t, 4, "-");
			cli_table_addf(t, 5, "-");
		}
		cli_table_addf(t, 6, "%.1f%%", 100.0 * cli_num(x, "mfu"));
		/* cp and ep only where they split the work: the GPU count is their product with tp, pp, dp */
		char cp[16] = "", ep[16] = "";
		if (cli_num(c, "cp") > 1)
			snprintf(cp, sizeof cp, " cp%.0f", cli_num(c, "cp"));
		if (cli_num(c, "ep") > 1)
			snprintf(ep, sizeof ep, " ep%.0f", cli_num(c, "ep"));
		cli_table_addf(t, 7, "tp%.0f pp%.0f%s%s dp%.0f %s", cli_num(c, "tp"), cli_num(c, "pp"), cp, ep,
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
			cli_table_addf(t, 8, "$%.3gM", cheap / 1e6);
		else
			cli_table_addf(t, 8, "-");
		if (maxod > 0)
			cli_table_addf(t, 9, "$%.3gM", maxod / 1e6);
		else
			cli_table_addf(t, 9, "-");
		const cJSON *b = cJSON_GetObjectItem(x, "buy");
		if (cJSON_GetObjectItem(b, "total_usd"))
			cli_table_addf(t, 10, "$%.3gM (of $%.3gM hardware)", cli_num(b, "total_usd") / 1e6, cli_num(b, "purchase_usd") / 1e6);
		else
			cli_table_addf(t, 10, "%s", cli_str(b, "note"));
	}
	cli_table_print(t, stdout);
	cli_table_free(t);
	printf("\nRent: GPU-hours x each listed price (see --json for every provider and date).  Buy: purchase\n"
	       "price amortized over its life for the days of training, plus node power x PUE x price per kWh.\n");
	if (failures)
		printf("Days count failures: training days over the goodput (Daly 2006) at the interruption rate (default\n"
		       "Llama 3's, 419 in 54 days on 16,384 GPUs), checkpointing at the optimal interval; --no-failures for\n"
		       "the failure-free answer, --json for the interval, checkpoint size and restart time.\n");
}

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
/* The winner of every GPU count of the search as a launch configuration: one to stdout after
 * another, or each to its own file (FILE, or for a sweep FILE with -<N>gpus before its
 * extension).  A count whose winner cannot be exported fails the whole: nothing is written. */
static int
export_all(const model *m, hw_db *db, const char *system, const plan_train_result *r, plan_export_opts *eo,
	   const char *out_path, char *err, size_t errlen)
{
	hw_system sys;
	int rc = hw_system_get(db, system, &sys, err, errlen);
	if (rc != 0)
		return cli_fail(rc, err);
	size_t n = plan_train_ncounts(r);
	char **texts = calloc(n, sizeof *texts);
	if (texts == NULL)
		return cli_fail(PP_ENOMEM, "out of memory");
	for (size_t i = 0; i < n && rc == 0; i++) {
		double step = 0;
		const sim_train_cfg *w = plan_train_winner_at(r, i, &step);
		if (w == NULL && n == 1) {
			/* nothing ranked: the caller says why (no valid layout, or none fits) */
			free(texts);
			return 0;
		}
		if (w == NULL) {
			rc = pp_err(err, errlen, PP_EINPUT, "no layout fits on %d GPUs: nothing to export", plan_train_gpus_at(r, i));
			break;
		}
		eo->step_s = step;
		rc = plan_export_config(m, &sys, w, eo, &texts[i], err, errlen);
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (out_path == NULL) {
			if (n > 1)
				printf("%s# ---- %d GPUs ----\n", i ? "\n" : "", plan_train_gpus_at(r, i));
			fputs(texts[i], stdout);
			continue;
		}
		char path[4096];
		if (n == 1) {
			pp_strlcpy(path, out_path, sizeof path);
		} else {
			const char *slash = strrchr(out_path, '/'), *dot = strrchr(out_path, '.');
			size_t stem = dot != NULL && (slash == NULL || dot > slash) ? (size_t)(dot - out_path) : strlen(out_path);
			snprintf(path, sizeof path, "%.*s-%dgpus%s", (int)stem, out_path, plan_train_gpus_at(r, i), out_path + stem);
		}
		rc = pp_write_file_atomic(path, texts[i], strlen(texts[i]), err, errlen);
	}
	for (size_t i = 0; i < n; i++)
		free(texts[i]);
	free(texts);
	return rc != 0 ? cli_fail(rc, err) : 0;
}

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
		static const char *const keys[] = {"measured_s", "predicted_s", "error", "kernels_s", "kernels_error", "run_id",
						   "steps", "warmup", "gpu_name", "host", "step_s"};
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
	char a[32], b[32], k[32];
	printf("\nValidation on %s: measured %s (median of %.0f steps), predicted %s, error %+.1f%%; its kernels alone "
	       "predicted %s, error %+.1f%%; validation run %.0f\n",
	       cli_str(v, "gpu_name"), cli_seconds(cli_num(v, "measured_s"), a, sizeof a), cli_num(v, "steps"),
	       cli_seconds(cli_num(v, "predicted_s"), b, sizeof b), 100.0 * cli_num(v, "error"),
	       cli_seconds(cli_num(v, "kernels_s"), k, sizeof k), 100.0 * cli_num(v, "kernels_error"), cli_num(v, "run_id"));
}

int
cmd_plan_train(int argc, char **argv)
{
	static const cli_cmd cmd = {
		"plan train",
		"plan train --model M --system S --gpus N|A..B|A,B,... --global-batch G [OPTIONS]\n"
		"plan train --model M --tokens T --days D --global-batch G [--systems S1,S2,...] [OPTIONS]\n"
		"plan train ... --validate [--validate-steps N]   (a layout search, then its winner on GPUs)\n",
		about_text, examples_text};
	static const char *const objectives[] = {"time", "cost", NULL};
	plan_train_opts o;
	plan_train_opts_init(&o);
	plan_capacity_opts co;
	plan_capacity_opts_init(&co);
	const char *model_spec = NULL, *system = NULL, *db_path = NULL, *out_path = NULL, *export_s = NULL, *framework = HW_DEFAULT_FRAMEWORK;
	cli_ints gpus = {0};
	cli_strs systems = {0};
	int64_t global_batch = 0, seq = 0;
	int objective = 0, vsteps = 10;
	double ckpt_gbps = 0, restart_min = -1, interval_min = 0;
	bool json = false, validate_flag = false;
	const cli_opt opts[] = {
		OPT_MODEL(&model_spec),
		OPT_SYSTEM(&system),
		OPT_INTS("gpus", "N", &gpus, 1, 1 << 24, "GPUs: a count, a list A,B,... or a range A..B (doubling) for a scaling curve"),
		OPT_I64("global-batch", "G", &global_batch, 1, (double)(1LL << 40), "sequences per step"),
		OPT_I64("seq", "L", &seq, 1, 1 << 24, "sequence length (default: the model's)"),
		OPT_CHOICE("objective", "time|cost", &objective, objectives, "rank by step time (default) or by cost"),
		OPT_NUM("price", "USD", &o.price, 0.0001, 1e6, "USD per GPU-hour (default: the database's price for the system)"),
		OPT_INT("top", "K", &o.top, 1, 1000, "layouts shown per GPU count (default 10)"),
		OPT_INT("simulate", "N", &o.simulate, 1, 100000, "best estimates simulated in full per GPU count (default 16)"),
		OPT_INT("jobs", "N", &co.jobs, 1, 256, "threads (default: all cores)"),
		OPT_SWITCH("tp-across-nodes", &o.tp_across, "let TP span nodes (default: TP stays in the NVLink domain)"),
		OPT_PIN("tp", "T", &o.tp, 1, 1 << 16, "pin tensor parallelism to T or a list (T may then cross the NVLink domain)"),
		OPT_PIN("pp", "P", &o.pp, 1, 1 << 16, "pin pipeline parallelism (P need not divide the layers)"),
		OPT_PIN("vpp", "V", &o.vpp, 1, 15, "pin the virtual stages per pipeline rank (1: no interleaving)"),
		OPT_PIN("cp", "C", &o.cp, 1, 1 << 16, "pin context parallelism (any sequence length)"),
		OPT_PIN("ep", "E", &o.ep, 1, 1 << 16, "pin expert parallelism"),
		OPT_PIN("zero", "Z", &o.zero, 0, 3, "pin the ZeRO stage(s), 0 to 3"),
		OPT_PIN("dp-shard", "S", &o.dp_shard, 1, 1 << 24,
			"pin hybrid sharding's shard groups to S data-parallel ranks or a list (a layout whose data "
			"parallelism S equals shards over all of it; default: ZeRO-2/3 over all of it and within one NVLink "
			"domain)"),
		OPT_FN("schedule", "LIST", opt_schedules, &o.schedules,
		       "pipeline schedules to try: gpipe, 1f1b, interleaved, zb-h1 (default: those of 1f1b, interleaved and zb-h1 the framework runs)"),
		OPT_FN("recompute", "LIST", opt_recomputes, &o.recomputes,
		       "recomputation to try: none, selective, full (default: none and full; selective equals none under "
		       "flash attention)"),
		OPT_PIN("micro-batch", "B", &o.micro_batch, 1, 1 << 20, "pin the micro-batch size (default: 1, 2, 4, 8, 16)"),
		OPT_FN("dtype", "LIST", opt_dtypes, &o, "dtypes to try, up to four of bf16, fp16, fp8, fp32 (default bf16)"),
		OPT_FN("memory-headroom", "PCT", opt_headroom, &o.memory_headroom,
		       "percent of each GPU's memory kept free for what the memory model does not count: a communicator's "
		       "buffers per process group, fragmentation over a long run, the allocator's margin (default 10)"),
		OPT_STR("framework", "NAME", &framework,
			"the training framework the layouts run as, and the only layouts ranked are those it runs: megatron "
			"(default), torchtitan, llm-foundry, deepspeed, pytorch, maxtext, ... ('paraplan hw profiles')"),
		OPT_INT("gpus-per-node", "N", &o.gpus_per_node, 1, 1024,
			"use N GPUs of each node (two nodes of 4 GPUs: --gpus 8 --gpus-per-node 4)"),
		OPT_STR("export", "KIND", &export_s,
			"print the winner's launch configuration: megatron, nemo, torchtitan, deepspeed, torchrun or slurm "
			"(one per GPU count of a sweep); it ranks what that framework runs unless --framework says otherwise"),
		OPT_OUT("out", "FILE", &out_path,
			"with --export: write it to FILE (atomically; a sweep's to FILE with -<N>gpus before its extension) "
			"and print the table"),
		OPT_FINETUNE(&o.lora_rank, &o.lora_modules, &o.base_nf4, &o.sample_len),
		OPT_NUM("tokens", "T", &co.tokens, 1.0, 1e18, "capacity planning: tokens to train (15T = 15e12)"),
		OPT_NUM("days", "D", &co.days, 0.001, 1e5, "capacity planning: days to train them in"),
		OPT_SYSTEMS(&systems),
		OPT_NUM("failure-rate", "F", &co.failures.failures_per_gpu_hour, 0, 1,
			"capacity planning: interruptions per GPU-hour (default 1.97e-5, Llama 3's 419 in 54 days on 16,384 "
			"GPUs; 0: none, checkpoints still cost their write)"),
		OPT_SWITCH("no-failures", &co.failures.off, "capacity planning: assume no GPU ever fails and no checkpoint is taken"),
		OPT_NUM("checkpoint-gbps", "G", &ckpt_gbps, 1e-6, 1e9,
			"capacity planning: checkpoint write and read bandwidth of the whole job, GB/s (default 0.122 per GPU, "
			"Llama 3's 2 TB/s over 16,384 GPUs)"),
		OPT_NUM("restart-min", "M", &restart_min, 0, 1e6,
			"capacity planning: minutes from an interruption to training again, before the checkpoint is read (default 10)"),
		OPT_NUM("checkpoint-interval-min", "M", &interval_min, 0.001, 1e9,
			"capacity planning: minutes of training between checkpoints (default: Daly's optimum)"),
		OPT_NUM("life-years", "Y", &co.life_years, 0.1, 50, "years a bought cluster is amortized over (default 4)"),
		OPT_NUM("kwh-price", "USD", &co.usd_per_kwh, 0, 100, "USD per kWh of power (default 0.09)"),
		OPT_NUM("pue", "P", &co.pue, 1.0, 5.0, "facility power over IT power (default 1.3)"),
		OPT_SWITCH("validate", &validate_flag, "replay the winner on GPUs and report measured against predicted"),
		OPT_INT("validate-steps", "N", &vsteps, 1, 10000, "timed steps of --validate (default 10)"),
		OPT_JSON(&json),
		OPT_DB(&db_path),
		OPT_END,
	};
	int st = cli_parse(&cmd, opts, argc, argv, NULL, 0, NULL);
	if (st != CLI_RUN)
		return st;
	co.failures.storage_bps = ckpt_gbps * 1e9;
	if (restart_min >= 0)
		co.failures.restart_s = restart_min * 60.0;
	co.failures.interval_s = interval_min * 60.0;
	o.global_batch = co.global_batch = global_batch;
	o.seq = co.seq = seq;
	o.jobs = co.jobs;
	o.life_years = co.life_years;
	o.usd_per_kwh = co.usd_per_kwh;
	o.pue = co.pue;
	o.objective = objective == 0 ? PLAN_TIME : PLAN_COST;
	bool have_export = export_s != NULL, want_validate = validate_flag;
	plan_export ex = PLAN_EXPORT_MEGATRON;
	if (have_export && plan_export_parse(export_s, &ex) != 0)
		return cli_usage("plan train", "--export must be megatron, nemo, torchtitan, deepspeed, torchrun or slurm, got \"%s\"",
				 export_s);
	/* An export launches exactly what was ranked, so without --framework the export's own
	 * framework ranks: a Megatron export never gets a schedule Megatron-LM lacks.  NeMo runs
	 * Megatron-Core: the megatron profile, NeMo's exporter. */
	const char *runs = framework;
	if (have_export && !cli_given(opts, "framework")) {
		if (ex == PLAN_EXPORT_TORCHTITAN)
			framework = runs = "torchtitan";
		else if (ex == PLAN_EXPORT_DEEPSPEED)
			framework = runs = "deepspeed";
		else if (ex == PLAN_EXPORT_NEMO)
			runs = "nemo";
	}
	/* what the framework runs (its profile, found below, says how fast); a profile the table does
	 * not know ranks every layout */
	o.framework = plan_framework_find(runs);
	co.search = &o;
	if (model_spec == NULL)
		return cli_usage("plan train", "--model is required (a catalog name or a path)");
	if (o.global_batch <= 0)
		return cli_usage("plan train", "--global-batch is required");
	bool capacity = co.tokens > 0 || co.days > 0;
	if (capacity && !(co.tokens > 0 && co.days > 0))
		return cli_usage("plan train", "capacity planning needs both --tokens and --days");
	if (!capacity && (cli_given(opts, "failure-rate") || cli_given(opts, "no-failures") || cli_given(opts, "checkpoint-gbps") ||
			  cli_given(opts, "restart-min") || cli_given(opts, "checkpoint-interval-min")))
		return cli_usage("plan train", "--failure-rate, --no-failures, --checkpoint-gbps, --restart-min and "
				 "--checkpoint-interval-min apply to capacity planning (--tokens and --days)");
	if (!capacity && system == NULL)
		return cli_usage("plan train", "--system is required (see 'paraplan hw list')");
	if (!capacity && gpus.n == 0)
		return cli_usage("plan train", "--gpus is required (N, A..B or A,B,...)");
	if (out_path != NULL && !have_export)
		return cli_usage("plan train", "--out applies to --export");
	if (capacity && have_export)
		return cli_usage("plan train", "--export applies to a layout search, not to capacity planning");
	if (capacity && want_validate)
		return cli_usage("plan train", "--validate applies to a layout search, not to capacity planning");
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
	o.fw = co.fw = fw;
	cli_progress pg;
	cli_progress_init(&pg, capacity ? "cluster sizes" : "layouts");
	volatile sig_atomic_t *stop = cli_sigint_catch();
	int status = 0;
	double t0 = cli_now_s();
	if (capacity) {
		const char *defaults[] = {"dgx-a100", "dgx-h100", "hgx-h200", "dgx-b200"};
		const char *list[32];
		size_t nl = 0;
		if (systems.n > 0) {
			for (int i = 0; i < systems.n && nl < 32; i++)
				list[nl++] = systems.v[i];
		} else {
			for (size_t i = 0; i < 4; i++)
				list[nl++] = defaults[i];
		}
		const model_tf *tf = model_transformer(m);
		if (co.seq <= 0)
			co.seq = tf ? tf->seq : 1;
		co.stop = stop;
		co.progress = cli_progress_cb;
		co.progress_arg = &pg;
		cJSON *doc = NULL;
		rc = plan_capacity(m, db, list, nl, &co, &doc, err, sizeof err);
		cli_progress_end(&pg);
		if (rc != 0) {
			status = cli_fail(rc, err);
		} else {
			json ? cli_print_json(doc, PLAN_CAPACITY_SCHEMA) : print_capacity(doc);
		}
		cJSON_Delete(doc);
	} else {
		o.gpus = gpus.v;
		o.ngpus = (size_t)gpus.n;
		o.stop = stop;
		o.progress = cli_progress_cb;
		o.progress_arg = &pg;
		plan_train_result *r = NULL;
		rc = plan_train(m, db, system, &o, &r, err, sizeof err);
		cli_progress_end(&pg);
		if (rc != 0) {
			status = cli_fail(rc, err);
		} else {
			cJSON *doc = plan_train_json(r);
			const sim_train_cfg *w = plan_train_winner(r);
			if (have_export) {
				plan_export_opts eo;
				plan_export_opts_init(&eo);
				eo.kind = ex;
				eo.framework = o.framework;
				eo.gpus_per_node = o.gpus_per_node;
				status = export_all(m, db, system, r, &eo, out_path, err, sizeof err);
			}
			/* an export that could not be written fails the command: nothing on stdout */
			bool exported = status == 0;
			/* Under a launcher every rank plans; rank 0 prints. */
			int lrank = 0;
			cal_launched_tasks(NULL, &lrank);
			bool printing = lrank == 0;
			if (!json && printing && exported && (!have_export || out_path != NULL))
				print_plan(doc, cli_now_s() - t0);
			if (want_validate && w != NULL && status == 0) {
				fflush(stdout);
				const cJSON *win = cJSON_GetObjectItem(doc, "winner");
				status = validate(doc, model_spec, system, w, cli_num(win, "step_time_s"), db_path, vsteps,
						  argc - 1, argv + 1);
				if (!json && printing)
					print_validation(doc);
			} else if (want_validate && w == NULL) {
				cJSON *v = cJSON_AddObjectToObject(doc, "validation");
				cJSON_AddStringToObject(v, "status", "not run");
				cJSON_AddStringToObject(v, "reason", "no layout fits: nothing to replay");
			}
			if (json && printing && exported && (!have_export || out_path != NULL))
				cli_print_json(doc, PLAN_TRAIN_SCHEMA);
			/* A scaling curve (several counts) is a result when some count has a layout: it says
			 * which counts have none, and fails only when none has one. */
			pp_str none = {0};
			int nnone = 0, ncounts = 0;
			bool none_valid = true;
			const cJSON *cnt;
			cJSON_ArrayForEach(cnt, cJSON_GetObjectItem(doc, "counts"))
			{
				ncounts++;
				if (cJSON_GetArraySize(cJSON_GetObjectItem(cnt, "candidates")) == 0)
					pp_str_addf(&none, "%s%.0f", nnone++ ? ", " : "", cli_num(cnt, "gpus"));
				if (cli_num(cnt, "out_of_memory") != 0 || cli_num(cnt, "estimated") != 0)
					none_valid = false;
			}
			if (status == 0 && nnone == ncounts) {
				/* nothing valid at all is the command line's fault (a pinned degree that does not
				 * divide, a batch that does not split): 2; valid layouts that do not fit: 1 */
				const cJSON *c0 = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "counts"), 0);
				if (printing && none_valid)
					cli_error("no valid layout of %s on %s: %s", model_name(m), system,
						  cli_str(c0, "invalid_reason")[0] ? cli_str(c0, "invalid_reason") : "see above");
				else if (printing)
					cli_error("no layout of %s fits on %s: see the smallest footprint above", model_name(m), system);
				status = none_valid ? 2 : 1;
			} else if (status == 0 && nnone > 0 && printing) {
				fprintf(stderr, "notice: no layout on %s of the %d GPU counts (%s GPUs); the others have one (see each "
						"count above)\n",
					nnone == 1 ? "one" : "some", ncounts, none.buf ? none.buf : "");
			}
			pp_str_free(&none);
			cJSON_Delete(doc);
			if (plan_train_interrupted(r))
				fprintf(stderr, "interrupted: printed the best found so far\n");
		}
		plan_train_result_free(r);
	}
	cli_sigint_release();
	hw_profile_free(fw);
	hw_close(db);
	model_free(m);
	return status;
}
