/*
 * bench_sim.c -- speed and memory of the training simulator in-process (sim_train alone: the
 * model, the database and the cost model are set up before the clock starts):
 *   GPT-3 175B on 1024 A100 (TP 8, PP 8, DP 16, interleaved with 3 chunks a stage, micro-batch
 *     1, batch 1536, selective recomputation, sequence parallelism), symmetric mode: the step
 *     issue 17 puts beside Calculon (7.9 ms on the development machine); target at most 5 ms;
 *   the same in full mode (all 1024 ranks);
 *   Llama-3-405B on 16,384 H100 (TP 8, PP 16, DP 128, batch 2048 of 8192 tokens), symmetric
 *     and full mode (target for the full mode: at most 4 s and 1.5 GiB).
 * Each case runs in its own process so its peak memory (max RSS) is its own, REPEATS times
 * (the full modes at most 3), and the table gives the median wall time and the median CPU
 * time of the simulating thread (what a busy shared machine leaves least disturbed); targets
 * are checked against the wall time.
 *
 *   usage: bench_sim [REPEATS [CASE]]   CASE: a substring of a case's name, to run only those
 *          bench_sim --one CASE          one run of the first matching case in this process,
 *                                        for instruction counts:
 *   valgrind --tool=callgrind --toggle-collect=sim_train bench/bench_sim --one gpt3-175b-sym
 */
#include "config.h"
#include "hardware/hw.h"
#include "models/model.h"
#include "sim/sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct bcase {
	const char *name, *model, *system;
	int gpus, tp, pp, vpp;
	int64_t mb, gb, seq;
	sim_recompute rc;
	bool sp, full;
	const char *peer;
	double target_s, target_gib;
} bcase;

static const bcase cases[] = {
	{"gpt3-175b-sym 1024xA100 vpp3", "gpt3-175b", "dgx-a100", 1024, 8, 8, 3, 1, 1536, 2048, SIM_RECOMPUTE_SELECTIVE,
	 true, false, "Calculon 7.9 ms (measured, issue 17)", 0.005, 0},
	{"gpt3-175b-full 1024xA100 vpp3", "gpt3-175b", "dgx-a100", 1024, 8, 8, 3, 1, 1536, 2048, SIM_RECOMPUTE_SELECTIVE,
	 true, true, "", 0, 0},
	{"llama-3-405b-sym 16384xH100", "llama-3-405b", "dgx-h100", 16384, 8, 16, 1, 1, 2048, 8192, SIM_RECOMPUTE_NONE,
	 true, false, "", 0, 0},
	{"llama-3-405b-full 16384xH100", "llama-3-405b", "dgx-h100", 16384, 8, 16, 1, 1, 2048, 8192, SIM_RECOMPUTE_NONE,
	 true, true, "before: 8.0 s, 1.71 GiB (CLI)", 4.0, 1.5},
};
enum { NCASES = sizeof cases / sizeof cases[0] };

static double
now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of this thread: on a machine shared with other work it leaves out the time spent
 * waiting for a core, which wall time counts. */
static double
cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Runs one case `reps` times in this process; writes "median-wall median-cpu events ops step
 * bytes" to out (when not NULL). */
static int
run_case(const bcase *bc, int reps, FILE *out)
{
	char err[512];
	hw_db *db;
	model *m;
	hw_cost *cost;
	if (hw_open(":memory:", 0, &db, err, sizeof err) != 0 || model_load(bc->model, &m, err, sizeof err) != 0 ||
	    hw_cost_new(db, bc->system, &cost, err, sizeof err) != 0) {
		fprintf(stderr, "bench: %s\n", err);
		return 1;
	}
	sim_train_cfg c;
	sim_train_cfg_init(&c);
	c.gpus = bc->gpus;
	c.tp = bc->tp;
	c.pp = bc->pp;
	c.vpp = bc->vpp;
	c.schedule = bc->vpp > 1 ? SIM_INTERLEAVED : SIM_1F1B;
	c.micro_batch = bc->mb;
	c.global_batch = bc->gb;
	c.seq = bc->seq;
	c.recompute = bc->rc;
	c.sequence_parallel = bc->sp;
	c.full = bc->full;
	double t[64], u[64];
	if (reps > 64)
		reps = 64;
	sim_metrics mt;
	memset(&mt, 0, sizeof mt);
	for (int i = 0; i < reps; i++) {
		double t0 = now_s(), u0 = cpu_s();
		sim_train_result *r;
		if (sim_train(m, cost, &c, &r, err, sizeof err) != 0) {
			fprintf(stderr, "bench: %s: %s\n", bc->name, err);
			return 1;
		}
		t[i] = now_s() - t0;
		u[i] = cpu_s() - u0;
		mt = *sim_train_metrics(r);
		sim_train_result_free(r);
	}
	double med = median(t, reps), medu = median(u, reps);
	if (out)
		fprintf(out, "%.9f %.9f %lld %lld %.6f %zu\n", med, medu, (long long)mt.events, (long long)mt.ops,
			mt.step_time_s, mt.engine_bytes);
	hw_cost_free(cost);
	model_free(m);
	hw_close(db);
	return 0;
}

int
main(int argc, char **argv)
{
	/* No pp_keep_freed_memory here: a step is one simulation in 'simulate train', and the runs
	 * of a case repeat in one process only to take their median. */
	if (argc > 2 && !strcmp(argv[1], "--one")) {
		for (int i = 0; i < NCASES; i++)
			if (strstr(cases[i].name, argv[2]) != NULL)
				return run_case(&cases[i], 1, NULL);
		fprintf(stderr, "bench_sim: no case matches \"%s\"\n", argv[2]);
		return 2;
	}
	int reps = argc > 1 ? atoi(argv[1]) : 5;
	const char *only = argc > 2 ? argv[2] : NULL;
	if (reps < 1)
		reps = 1;
	printf("command: bench/bench_sim %d%s%s   (median of %d runs, full modes of at most 3; each case in its own "
	       "process)\n\n",
	       reps, only ? " " : "", only ? only : "", reps);
	printf("%-32s %10s %10s %10s %10s %11s %10s %9s  %-38s %s\n", "case", "wall", "CPU", "ops", "events", "events/s",
	       "peak RSS", "step", "peer", "target");
	for (int i = 0; i < NCASES; i++) {
		const bcase *bc = &cases[i];
		if (only != NULL && strstr(bc->name, only) == NULL)
			continue;
		int pfd[2];
		if (pipe(pfd) != 0)
			return 1;
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			close(pfd[0]);
			FILE *f = fdopen(pfd[1], "w");
			int rc = run_case(bc, bc->full && reps > 3 ? 3 : reps, f);
			fclose(f);
			_exit(rc);
		}
		close(pfd[1]);
		FILE *f = fdopen(pfd[0], "r");
		double secs = 0, cpu = 0, step = 0;
		long long events = 0, ops = 0;
		size_t ebytes = 0;
		int got = fscanf(f, "%lf %lf %lld %lld %lf %zu", &secs, &cpu, &events, &ops, &step, &ebytes);
		fclose(f);
		int status;
		struct rusage ru;
		wait4(pid, &status, 0, &ru);
		if (got != 6 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			printf("%-32s failed\n", bc->name);
			continue;
		}
		double rss_gib = (double)ru.ru_maxrss * 1024.0 / 1073741824.0;
		char target[64] = "", tm[32], tc[32];
		if (secs < 1.0)
			snprintf(tm, sizeof tm, "%.2f ms", secs * 1e3);
		else
			snprintf(tm, sizeof tm, "%.2f s", secs);
		if (cpu < 1.0)
			snprintf(tc, sizeof tc, "%.2f ms", cpu * 1e3);
		else
			snprintf(tc, sizeof tc, "%.2f s", cpu);
		if (bc->target_s > 0 && bc->target_gib > 0)
			snprintf(target, sizeof target, "<= %.0f s, <= %.1f GiB: %s", bc->target_s, bc->target_gib,
				 secs <= bc->target_s && rss_gib <= bc->target_gib ? "met" : "MISSED");
		else if (bc->target_s > 0)
			snprintf(target, sizeof target, "<= %.0f ms: %s", bc->target_s * 1e3,
				 secs <= bc->target_s ? "met" : "MISSED");
		printf("%-32s %10s %10s %10lld %10lld %11.3g %6.2f GiB %7.2f s  %-38s %s\n", bc->name, tm, tc, ops, events,
		       secs > 0 ? (double)events / secs : 0.0, rss_gib, step, bc->peer, target);
		fflush(stdout);
	}
	return 0;
}
