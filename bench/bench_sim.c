/*
 * bench_sim.c -- speed and memory of the training simulator on the cases the plan names:
 *   GPT-3 175B on 1024 A100 (TP 8, PP 8, DP 16, interleaved, micro-batch 1, batch 1536),
 *     symmetric mode (target: under 50 ms on one core);
 *   Llama-3-405B on 16,384 H100 (TP 8, PP 16, DP 128, batch 2048 of 8192 tokens), full mode
 *     (target: under 10 s and 4 GiB).
 * Each case runs in its own process so its peak memory (max RSS) is its own.  Prints a table
 * and the command that produced it.  Usage: bench_sim [REPEATS]
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
	double target_s, target_gib;
} bcase;

static const bcase cases[] = {
	{"gpt3-175b 1024xA100 symmetric", "gpt3-175b", "dgx-a100", 1024, 8, 8, 2, 1, 1536, 2048, SIM_RECOMPUTE_SELECTIVE,
	 true, false, 0.050, 0},
	{"gpt3-175b 1024xA100 full", "gpt3-175b", "dgx-a100", 1024, 8, 8, 2, 1, 1536, 2048, SIM_RECOMPUTE_SELECTIVE, true,
	 true, 0, 0},
	{"llama-3-405b 16384xH100 symmetric", "llama-3-405b", "dgx-h100", 16384, 8, 16, 1, 1, 2048, 8192,
	 SIM_RECOMPUTE_NONE, true, false, 0, 0},
	{"llama-3-405b 16384xH100 full", "llama-3-405b", "dgx-h100", 16384, 8, 16, 1, 1, 2048, 8192, SIM_RECOMPUTE_NONE,
	 true, true, 10.0, 4.0},
};

static double
now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs one case `reps` times in this process; writes "seconds events ops step" to fd. */
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
	double best = 1e30;
	sim_metrics mt;
	memset(&mt, 0, sizeof mt);
	for (int i = 0; i < reps; i++) {
		double t0 = now_s();
		sim_train_result *r;
		if (sim_train(m, cost, &c, &r, err, sizeof err) != 0) {
			fprintf(stderr, "bench: %s: %s\n", bc->name, err);
			return 1;
		}
		double dt = now_s() - t0;
		if (dt < best)
			best = dt;
		mt = *sim_train_metrics(r);
		sim_train_result_free(r);
	}
	fprintf(out, "%.9f %lld %lld %.6f %zu\n", best, (long long)mt.events, (long long)mt.ops, mt.step_time_s,
		mt.engine_bytes);
	hw_cost_free(cost);
	model_free(m);
	hw_close(db);
	return 0;
}

int
main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 5;
	if (reps < 1)
		reps = 1;
	printf("command: bench/bench_sim %d   (best of %d runs; each case in its own process)\n\n", reps, reps);
	printf("%-36s %10s %12s %12s %14s %10s %10s  %s\n", "case", "time", "ops", "events", "events/s", "peak RSS",
	       "step", "target");
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const bcase *bc = &cases[i];
		int pfd[2];
		if (pipe(pfd) != 0)
			return 1;
		pid_t pid = fork();
		if (pid == 0) {
			close(pfd[0]);
			FILE *f = fdopen(pfd[1], "w");
			int rc = run_case(bc, bc->full ? 1 : reps, f);
			fclose(f);
			_exit(rc);
		}
		close(pfd[1]);
		FILE *f = fdopen(pfd[0], "r");
		double secs = 0, step = 0;
		long long events = 0, ops = 0;
		size_t ebytes = 0;
		int got = fscanf(f, "%lf %lld %lld %lf %zu", &secs, &events, &ops, &step, &ebytes);
		fclose(f);
		int status;
		struct rusage ru;
		wait4(pid, &status, 0, &ru);
		if (got != 5 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			printf("%-36s failed\n", bc->name);
			continue;
		}
		double rss_gib = (double)ru.ru_maxrss * 1024.0 / 1073741824.0;
		char target[64] = "";
		if (bc->target_s > 0 && bc->target_gib > 0)
			snprintf(target, sizeof target, "< %.0f s, < %.0f GiB: %s", bc->target_s, bc->target_gib,
				 secs < bc->target_s && rss_gib < bc->target_gib ? "met" : "MISSED");
		else if (bc->target_s > 0)
			snprintf(target, sizeof target, "< %.0f ms: %s", bc->target_s * 1e3, secs < bc->target_s ? "met" : "MISSED");
		printf("%-36s %8.1f ms %12lld %12lld %14.3g %6.2f GiB %8.2f s  %s\n", bc->name, secs * 1e3, ops, events,
		       secs > 0 ? (double)events / secs : 0.0, rss_gib, step, target);
		fflush(stdout);
	}
	return 0;
}
