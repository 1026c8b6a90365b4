/*
 * cmd_replay.c -- 'paraplan replay': run a plan's op graph on GPUs and compare the measured step
 * with the prediction (calibrate/replay_gpu.c, one process per GPU under mpirun or srun), or,
 * with --dry-run, print what each rank would launch (no GPU needed).
 */
#include "config.h"
#include "calibrate/cal.h"
#include "cli/cli.h"
#include "models/model.h"
#include "sim/sim.h"

#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char about_text[] =
	"Runs one training step of a plan on real GPUs, the way the simulator predicted it: every rank\n"
	"executes the op list the simulator built for it -- cuBLASLt GEMMs of the real shapes and\n"
	"dtype, memory-bound kernels moving the same bytes, attention as GEMMs of the same FLOPs, the\n"
	"TP, CP, EP, DP and pipeline collectives and sends through NCCL on their own communicators and\n"
	"streams, with CUDA events where the schedule makes one stream wait for another.  N warm-up\n"
	"steps (default 3), then N timed steps (default 10); rank 0 reports each step (the slowest\n"
	"rank's), their median, the predicted step and the error (predicted / measured - 1), and\n"
	"stores them as one validation run ('paraplan hw validations').  Beside the plan's prediction\n"
	"(its framework's kernel rates and host time included) it prints what the hardware layer\n"
	"predicts for the kernels the replay ran, with no framework: the figure the replay checks.\n"
	"\n"
	"PLAN.json is the --json output of 'paraplan plan train' (its winner is replayed) or of\n"
	"'paraplan simulate train'.  Launch one process per GPU of the plan (tp x pp x dp x cp):\n"
	"  mpirun -np 16 --npernode 8 paraplan replay --plan plan.json\n"
	"  srun -N 2 --ntasks-per-node 8 --gpus-per-node 8 paraplan replay --plan plan.json\n"
	"A one-GPU plan also runs without a launcher.  Only rank 0 reads the plan and the database.\n"
	"\n"
	"Exit status: 0 measured (or printed); 1 no GPU, a build without CUDA and NCCL, or a failed\n"
	"run (nothing is stored); 2 a usage error, including a --plan that is not a readable plan\n"
	"document, a plan whose model or system is unknown, and a launch of the wrong size.\n";

static const char examples_text[] =
	"  paraplan plan train --model llama-3-8b --system dgx-h100 --gpus 8 --global-batch 64 --json > plan.json\n"
	"  paraplan replay --plan plan.json --dry-run --rank 0\n"
	"  mpirun -np 8 paraplan replay --plan plan.json --steps 20\n";


static void
progress(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "%s\n", line);
	fflush(stderr);
}

/* ---- --dry-run ----------------------------------------------------------------------------- */

static void
print_kernel(const sim_kernel *sk)
{
	const hw_kernel *k = &sk->hk;
	char a[32];
	switch (k->kind) {
	case HW_K_GEMM:
		printf("gemm %.0fx%.0fx%.0f", k->m, k->n, k->k);
		if (k->batch > 1)
			printf(" x%.0f", k->batch);
		printf(" %s", hw_dtype_name(k->dtype));
		if (sk->weight != SIM_W_NONE) {
			printf(" %s", sim_weight_name(sk->weight));
			if (sk->layer >= 0)
				printf(" L%lld", (long long)sk->layer);
			printf(" %s", sk->pass == SIM_PASS_FWD ? "fwd" : sk->pass == SIM_PASS_DGRAD ? "dgrad" : "wgrad");
		}
		break;
	case HW_K_ATTN:
		printf("attention%s b%.0f h%.0f/%.0f s%.0fx%.0f d%.0f/%.0f%s %s", k->bwd ? " bwd" : "", k->b, k->heads,
		       k->kv_heads, k->sq, k->sk, k->dqk, k->dv, k->density < 1.0 ? " causal" : "",
		       cli_si(hw_kernel_flops(k), "FLOP", a, sizeof a));
		break;
	default:
		printf("memory %s", cli_bytes(hw_kernel_bytes(k), a, sizeof a));
		break;
	}
}

static void
print_members(const sim_train_cfg *c, sim_group g, int rank)
{
	int n = sim_group_size(c, g);
	int *mem = malloc((size_t)n * sizeof *mem);
	if (mem == NULL)
		return;
	sim_group_members(c, g, rank, mem, n);
	printf("[");
	for (int i = 0; i < n; i++) {
		if (i == 8 && n > 10) {
			printf(" ... %d", mem[n - 1]);
			break;
		}
		printf("%s%d", i ? " " : "", mem[i]);
	}
	printf("]");
	free(mem);
}

static void
print_rank(const sim_rank_ops *o, const cal_replay_prog *p, const sim_train_cfg *c, bool full)
{
	char a[32], b[32];
	int per_stream[SIM_NSTREAMS] = {0};
	for (size_t i = 0; i < o->nops; i++)
		per_stream[o->ops[i].stream]++;
	printf("rank %d: stage %d, tp %d, cp %d, dp %d -- %zu ops, %zu launches, %d events, %s GEMM, %s moved by kernels\n",
	       o->rank, o->co.pp, o->co.tp, o->co.cp, o->co.dp, o->nops, p->nlaunches, p->nevents,
	       cli_si(p->gemm_flops, "FLOP", a, sizeof a), cli_si(p->mem_bytes, "B", b, sizeof b));
	printf("  streams:");
	for (int s = 0; s < SIM_NSTREAMS; s++)
		if (per_stream[s])
			printf(" %s %d", sim_stream_name(s), per_stream[s]);
	printf("\n  communicators:");
	if (p->ncomms == 0)
		printf(" none");
	for (size_t i = 0; i < p->ncomms; i++) {
		const cal_comm *cm = &p->comms[i];
		printf("%s %s on %s [", i ? ";" : "", sim_group_name(cm->group), sim_stream_name(cm->stream));
		for (int k = 0; k < cm->size; k++)
			printf("%s%d", k ? " " : "", cm->members[k]);
		printf("]");
	}
	printf("\n");
	if (!full)
		return;
	printf("  %-5s %-12s %-24s %s\n", "#", "stream", "op", "launches (wait: ops of other streams it waits for)");
	for (size_t i = 0; i < o->nops; i++) {
		const sim_rop *op = &o->ops[i];
		char lb[96];
		printf("  %-5zu %-12s %-24s ", i, sim_stream_name(op->stream), sim_op_label(op->tag, lb, sizeof lb));
		switch (op->kind) {
		case SIM_OP_COMPUTE:
			for (size_t k = op->k0; k < op->k0 + op->nk; k++) {
				if (k > op->k0)
					printf(", ");
				print_kernel(&o->kernels[k]);
			}
			break;
		case SIM_OP_COLL:
			printf("%s %s over %s ", hw_coll_name(op->coll), cli_bytes(op->bytes, a, sizeof a), sim_group_name(op->group));
			print_members(c, op->group, o->rank);
			break;
		case SIM_OP_SEND:
		case SIM_OP_RECV:
			printf("%s %s %s rank %d (stage %d)%s", op->kind == SIM_OP_SEND ? "send" : "recv",
			       cli_bytes(op->bytes, a, sizeof a), op->kind == SIM_OP_SEND ? "to" : "from", op->peer, op->peer_stage,
			       op->tp_gather ? ", then all_gather over tp" : "");
			break;
		default:
			printf("event at the stream's tail");
			break;
		}
		if (op->nd > 0) {
			printf("  (wait:");
			for (size_t d = op->d0; d < op->d0 + op->nd; d++)
				printf(" %zu", o->deps[d]);
			printf(")");
		}
		printf("\n");
	}
}

/* The op list and program of global rank `rank`. */
static int
rank_program(const sim_train_result *r, int rank, sim_rank_ops **o, cal_replay_prog **p, char *err, size_t errlen)
{
	*p = NULL;
	int rc = sim_train_rank_ops(r, rank, o, err, errlen);
	if (rc == 0 && (rc = cal_replay_lower(*o, sim_train_config(r), p, err, errlen)) != 0) {
		sim_rank_ops_free(*o);
		*o = NULL;
	}
	return rc;
}

static cJSON *
world_json(const sim_train_cfg *c)
{
	cJSON *w = cJSON_CreateObject();
	cJSON_AddNumberToObject(w, "ranks", c->gpus);
	cJSON *gr = cJSON_AddObjectToObject(w, "groups");
	int *mem = malloc((size_t)c->gpus * sizeof *mem);
	if (mem == NULL)
		return w;
	for (int g = 0; g < SIM_NGROUPS; g++) {
		cJSON *arr = cJSON_AddArrayToObject(gr, sim_group_name((sim_group)g));
		/* each instance once: listed by its smallest member */
		for (int rk = 0; rk < c->gpus; rk++) {
			int n = sim_group_members(c, (sim_group)g, rk, mem, c->gpus);
			int least = mem[0];
			for (int i = 1; i < n; i++)
				if (mem[i] < least)
					least = mem[i];
			if (least == rk)
				cJSON_AddItemToArray(arr, cJSON_CreateIntArray(mem, n));
		}
	}
	free(mem);
	return w;
}

static int
dry_run(const cal_replay_plan *plan, const char *plan_path, const char *db_path, int rank, bool json)
{
	char err[1024] = "";
	model *m = NULL;
	int rc = cli_load_model(plan->model, &m, err, sizeof err);
	if (rc != 0)
		return cli_usage("replay", "%s: model \"%s\": %s (give --model PATH)", plan_path, plan->model, err);
	hw_db *db;
	if ((rc = cli_open_db(db_path, 0, &db)) != 0) {
		model_free(m);
		return rc;
	}
	hw_cost *cost = NULL;
	hw_profile *fw = NULL;
	sim_train_result *res = NULL;
	int status = 0;
	if ((rc = hw_cost_new(db, plan->system, &cost, err, sizeof err)) != 0) {
		status = rc == PP_ENOTFOUND ? cli_usage("replay", "%s: system: %s", plan_path, err) : cli_fail(rc, err);
		goto out;
	}
	if ((rc = cal_replay_simulate(db, m, cost, plan, &fw, &res, err, sizeof err)) != 0) {
		status = rc == PP_EUSAGE ? cli_usage("replay", "%s: the plan's configuration: %s", plan_path, err)
					 : cli_fail(rc, err);
		goto out;
	}
	const sim_train_cfg *c = sim_train_config(res);
	if (rank >= c->gpus) {
		status = cli_usage("replay", "--rank %d: the plan has %d ranks (0 .. %d)", rank, c->gpus, c->gpus - 1);
		goto out;
	}
	double step = sim_train_metrics(res)->step_time_s, kernels = 0;
	if ((rc = cal_replay_kernels_s(m, cost, plan, &kernels, err, sizeof err)) != 0) {
		status = cli_fail(rc, err);
		goto out;
	}
	/* the ranks to list in full: the one asked for, or each stage's first */
	int first = rank >= 0 ? rank : 0, stride = c->tp * c->cp * c->dp, last = rank >= 0 ? rank : c->gpus - 1;
	int by = rank >= 0 ? 1 : stride;
	cJSON *doc = json ? cJSON_CreateObject() : NULL;
	cJSON *ranks = NULL;
	if (json) {
		cJSON_AddStringToObject(doc, "kind", "replay-dry-run");
		cJSON_AddStringToObject(doc, "plan", plan_path);
		cJSON_AddStringToObject(doc, "model", plan->model);
		cJSON_AddStringToObject(doc, "system", plan->system);
		cJSON_AddNumberToObject(doc, "predicted_step_s", step);
		cJSON_AddNumberToObject(doc, "kernels_step_s", kernels);
		if (plan->predicted_s > 0)
			cJSON_AddNumberToObject(doc, "plan_step_s", plan->predicted_s);
		cJSON_AddItemToObject(doc, "world", world_json(c));
		ranks = cJSON_AddArrayToObject(doc, "ranks");
	} else {
		char a[32], k[32];
		long long micro = (long long)(c->global_batch / ((int64_t)c->dp * c->micro_batch));
		printf("replay of %s on %d x %s: tp %d, pp %d, dp %d, cp %d, ep %d, %s, %lld micro-batch%s of %lld; predicted "
		       "step %s, its kernels alone %s\n",
		       plan->model, c->gpus, plan->system, c->tp, c->pp, c->dp, c->cp, c->ep, sim_schedule_name(c->schedule),
		       micro, micro == 1 ? "" : "es", (long long)c->micro_batch, cli_seconds(step, a, sizeof a),
		       cli_seconds(kernels, k, sizeof k));
		if (rank < 0) {
			printf("\ncommunicator groups (global ranks; TP fastest, then CP, DP, PP):\n");
			for (int g = 0; g < SIM_NGROUPS; g++) {
				int n = sim_group_size(c, (sim_group)g);
				printf("  %-4s %d group%s of %d, e.g. ", sim_group_name((sim_group)g), c->gpus / n, c->gpus / n == 1 ? "" : "s",
				       n);
				print_members(c, (sim_group)g, 0);
				printf("\n");
			}
			printf("\nthe ranks of a stage launch the same ops (with their own groups and peers); per stage:\n");
		}
		printf("\n");
	}
	for (int rk = first; rk <= last && status == 0; rk += by) {
		sim_rank_ops *o;
		cal_replay_prog *p;
		if ((rc = rank_program(res, rk, &o, &p, err, sizeof err)) != 0) {
			status = cli_fail(rc, err);
			break;
		}
		if (json) {
			cJSON *x = sim_rank_ops_json(o, c);
			cJSON_AddItemToObject(x, "program", cal_replay_prog_json(p));
			cJSON_AddItemToArray(ranks, x);
		} else {
			print_rank(o, p, c, rank >= 0 || c->gpus <= 64 || rk == first);
			printf("\n");
		}
		cal_replay_prog_free(p);
		sim_rank_ops_free(o);
	}
	if (json && status == 0)
		cli_print_json(doc, "paraplan.replay-dry-run/1");
	cJSON_Delete(doc);
out:
	sim_train_result_free(res);
	hw_profile_free(fw);
	hw_cost_free(cost);
	hw_close(db);
	model_free(m);
	return status;
}

/* ---- the run ------------------------------------------------------------------------------- */

static void
print_report(const cJSON *r)
{
	char a[32], b[32];
	const cJSON *c = cJSON_GetObjectItem(r, "config");
	printf("replay of %s on %.0f x %s (tp %.0f, pp %.0f, dp %.0f, cp %.0f): %.0f timed steps after %.0f warm-up\n\n",
	       cli_str(r, "model"), cli_num(c, "gpus"), cli_str(r, "system"), cli_num(c, "tp"), cli_num(c, "pp"),
	       cli_num(c, "dp"), cli_num(c, "cp"), cli_num(r, "steps"), cli_num(r, "warmup"));
	const char *h[] = {"step", "time (slowest rank)"};
	cli_table *t = cli_table_new(2, h, "rr");
	const cJSON *x;
	int i = 0;
	cJSON_ArrayForEach(x, cJSON_GetObjectItem(r, "step_s"))
	{
		cli_table_addf(t, 0, "%d", ++i);
		cli_table_addf(t, 1, "%s", cli_seconds(x->valuedouble, a, sizeof a));
	}
	cli_table_print(t, stdout);
	cli_table_free(t);
	printf("\nmeasured (median)  %s\n", cli_seconds(cli_num(r, "measured_s"), a, sizeof a));
	printf("predicted          %s", cli_seconds(cli_num(r, "predicted_s"), a, sizeof a));
	if (cli_num(r, "plan_step_s") > 0 && fabs(cli_num(r, "plan_step_s") / cli_num(r, "predicted_s") - 1.0) > 1e-9)
		printf("   (the plan document said %s: the database changed since)", cli_seconds(cli_num(r, "plan_step_s"), b, sizeof b));
	const char *fw = cli_str(c, "framework");
	printf("\nerror              %+.1f%%   (predicted / measured - 1; the plan as %s runs it)\n", 100.0 * cli_num(r, "error"),
	       fw[0] ? fw : "no framework profile");
	printf("kernels alone      %s   error %+.1f%%: the hardware layer's prediction of what the replay ran (its kernels "
	       "at the database's rates; attention as the GEMMs launched in its place; no framework)\n",
	       cli_seconds(cli_num(r, "kernels_s"), a, sizeof a), 100.0 * cli_num(r, "kernels_error"));
	if (cli_num(r, "run_id") > 0)
		printf("stored as validation run %.0f ('paraplan hw validations')\n", cli_num(r, "run_id"));
	else
		printf("not stored (--no-store)\n");
}

int
cmd_replay(int argc, char **argv)
{
	static const cli_cmd cmd = {"replay",
				    "replay --plan PLAN.json [--steps N] [--warmup N] [--model M]\n"
				    "                [--rank-config auto|local|first] [--note TEXT] [--no-store]\n"
				    "                [--json] [--quiet] [--db FILE]\n"
				    "replay --plan PLAN.json --dry-run [--rank R] [--model M] [--json] [--db FILE]\n",
				    about_text, examples_text};
	static const char *const devsels[] = {"auto", "local", "first", NULL};
	const char *plan_path = NULL, *model_spec = NULL, *note = NULL, *db_path = NULL;
	int steps = 10, warmup = 3, rank = -1, dsel = 0;
	bool json = false, quiet = false, dry = false, no_store = false;
	const cli_opt opts[] = {
		OPT_STR("plan", "PLAN.json", &plan_path, "the --json output of 'paraplan plan train' or 'simulate train'"),
		OPT_INT("steps", "N", &steps, 1, 10000, "timed steps (default 10)"),
		OPT_INT("warmup", "N", &warmup, 0, 1000, "untimed steps first (default 3)"),
		OPT_STR("model", "M", &model_spec, "the model, when the plan names one this machine cannot load (a path)"),
		OPT_CHOICE("rank-config", "X", &dsel, devsels,
			   "how a process picks its GPU: auto (the one it sees, else that of its local rank; default), local "
			   "(that of its local rank), first (the first it sees: the launcher binds one GPU per process)"),
		OPT_STR("note", "TEXT", &note, "stored with the validation run"),
		OPT_SWITCH("no-store", &no_store, "measure and report, store nothing"),
		OPT_JSON(&json),
		OPT_SWITCH("quiet", &quiet, "no progress lines on stderr"),
		OPT_SWITCH("dry-run", &dry,
			   "no GPU: print each rank's communicator groups and the ops it would launch, stream by stream, "
			   "with the events between streams"),
		OPT_INT("rank", "R", &rank, 0, (1 << 24) - 1,
			"with --dry-run: rank R's whole launch list (default: the world's groups and each pipeline stage's "
			"list; a stage's ranks launch the same ops)"),
		OPT_DB(&db_path),
		OPT_END,
	};
	int st = cli_parse(&cmd, opts, argc, argv, NULL, 0, NULL);
	if (st != CLI_RUN)
		return st;
	static const cal_devsel devsel_of[] = {CAL_DEV_AUTO, CAL_DEV_LOCAL, CAL_DEV_FIRST};
	cal_devsel devsel = devsel_of[dsel];
	bool have_steps = cli_given(opts, "steps") || cli_given(opts, "warmup"), have_rank = cli_given(opts, "rank");
	if (plan_path == NULL)
		return cli_usage("replay", "--plan PLAN.json is required (the --json output of 'paraplan plan train')");
	if (have_rank && !dry)
		return cli_usage("replay", "--rank applies to --dry-run (a replay runs every rank)");
	if (dry && (have_steps || no_store || note != NULL))
		return cli_usage("replay", "--dry-run launches nothing: --steps, --warmup, --note and --no-store do not apply");

	char err[1024] = "";
	if (dry) {
		cal_replay_plan plan;
		int rc = cal_replay_plan_read(plan_path, &plan, err, sizeof err);
		if (rc != 0)
			return rc == PP_EUSAGE ? cli_usage("replay", "%s", err) : cli_fail(rc, err);
		if (model_spec != NULL && !pp_strlcpy(plan.model, model_spec, sizeof plan.model))
			return cli_usage("replay", "--model is too long");
		return dry_run(&plan, plan_path, db_path, (int)rank, json);
	}

	/* A process alone reads the plan first, so that a wrong --plan is a usage error in every
	 * build; under a launcher, rank 0 reads it inside the run (after MPI starts, so that its
	 * failure ends every rank instead of leaving them waiting). */
	cal_replay_plan plan;
	cal_replay_opts o = {.plan_path = plan_path, .model = model_spec, .db_path = db_path, .steps = (int)steps,
			     .warmup = (int)warmup, .devsel = devsel, .note = note, .no_store = no_store,
			     .progress = quiet ? NULL : progress};
	if (!cal_launched_tasks(NULL, NULL)) {
		int rc = cal_replay_plan_read(plan_path, &plan, err, sizeof err);
		if (rc != 0)
			return rc == PP_EUSAGE ? cli_usage("replay", "%s", err) : cli_fail(rc, err);
		o.plan = &plan;
	}
	cJSON *rep = NULL;
	bool root = true;
	int rc = cal_replay_run(&o, &rep, &root, err, sizeof err);
	if (rc != 0) {
		cJSON_Delete(rep);
		if (!root)
			return cli_status(rc);
		return rc == PP_EUSAGE ? cli_usage("replay", "%s", err) : cli_fail(rc, err);
	}
	if (root && rep != NULL)
		json ? cli_print_json(rep, "paraplan.replay/1") : print_report(rep);
	cJSON_Delete(rep);
	return 0;
}
