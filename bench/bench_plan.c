/*
 * bench_plan.c -- speed and memory of the planner on the cases the plan names:
 *   Llama-3-70B on 64 H100, global batch 512 (target: full search under 2 s on 2 cores);
 *   GPT-3 175B on 1024 A100, global batch 1536;
 *   Llama-3-405B on 16,384 H100, global batch 2048 (target: under 30 s and 2 GiB).
 * (bench_cli times the first two with --jobs 1 as whole processes, against issue 17's targets.)
 * Each case runs in its own process (its own peak RSS), with all cores.  Prints a table and
 * the command that produced it.  Usage: bench_plan [JOBS]
 */
#include "config.h"
#include "common/pp.h"
#include "hardware/hw.h"
#include "models/model.h"
#include "planner/plan.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct bcase {
	const char *name, *model, *system;
	int gpus;
	int64_t gb;
	double target_s, target_gib;
} bcase;

static const bcase cases[] = {
	{"llama-3-70b on 64 x H100", "llama-3-70b", "dgx-h100", 64, 512, 2.0, 0},
	{"gpt3-175b on 1024 x A100", "gpt3-175b", "dgx-a100", 1024, 1536, 0, 0},
	{"llama-3-405b on 16384 x H100", "llama-3-405b", "dgx-h100", 16384, 2048, 30.0, 2.0},
};

static double
now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int
run_case(const bcase *bc, int jobs, FILE *out)
{
	char err[512];
	hw_db *db;
	model *m;
	if (hw_open(":memory:", 0, &db, err, sizeof err) != 0 || model_load(bc->model, &m, err, sizeof err) != 0) {
		fprintf(stderr, "bench: %s\n", err);
		return 1;
	}
	plan_train_opts o;
	plan_train_opts_init(&o);
	int g = bc->gpus;
	o.gpus = &g;
	o.ngpus = 1;
	o.global_batch = bc->gb;
	o.jobs = jobs;
	double t0 = now_s();
	plan_train_result *r;
	if (plan_train(m, db, bc->system, &o, &r, err, sizeof err) != 0) {
		fprintf(stderr, "bench: %s: %s\n", bc->name, err);
		return 1;
	}
	double dt = now_s() - t0;
	cJSON *doc = plan_train_json(r);
	const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "counts"), 0);
	const cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItem(c, "candidates"), 0);
	fprintf(out, "%.6f %.0f %.0f %.0f %.0f %.0f %s\n", dt, cJSON_GetObjectItem(c, "enumerated")->valuedouble,
		cJSON_GetObjectItem(c, "invalid")->valuedouble, cJSON_GetObjectItem(c, "out_of_memory")->valuedouble,
		cJSON_GetObjectItem(c, "estimated")->valuedouble, cJSON_GetObjectItem(c, "simulated")->valuedouble,
		w ? cJSON_GetObjectItem(w, "key")->valuestring : "none");
	cJSON_Delete(doc);
	plan_train_result_free(r);
	model_free(m);
	hw_close(db);
	return 0;
}

int
main(int argc, char **argv)
{
	pp_keep_freed_memory(); /* as the paraplan program does */
	int jobs = argc > 1 ? atoi(argv[1]) : 0;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	printf("command: bench/bench_plan %d   (%ld cores; jobs %s; each case in its own process)\n\n", jobs, cores,
	       jobs > 0 ? argv[1] : "all");
	printf("%-30s %9s %10s %8s %8s %9s %9s %12s %9s  %-24s %s\n", "case", "time", "enumerated", "invalid", "no fit",
	       "estimated", "simulated", "layouts/s", "peak RSS", "target", "winner");
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const bcase *bc = &cases[i];
		int pfd[2];
		if (pipe(pfd) != 0)
			return 1;
		pid_t pid = fork();
		if (pid == 0) {
			close(pfd[0]);
			FILE *f = fdopen(pfd[1], "w");
			int rc = run_case(bc, jobs, f);
			fclose(f);
			_exit(rc);
		}
		close(pfd[1]);
		FILE *f = fdopen(pfd[0], "r");
		double secs = 0, en = 0, inv = 0, oom = 0, est = 0, sim = 0;
		char key[256] = "";
		int got = fscanf(f, "%lf %lf %lf %lf %lf %lf %255[^\n]", &secs, &en, &inv, &oom, &est, &sim, key);
		fclose(f);
		int status;
		struct rusage ru;
		wait4(pid, &status, 0, &ru);
		if (got != 7 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			printf("%-30s failed\n", bc->name);
			continue;
		}
		double gib = (double)ru.ru_maxrss * 1024.0 / 1073741824.0;
		char target[64];
		if (bc->target_s <= 0)
			target[0] = '\0';
		else if (bc->target_gib > 0)
			snprintf(target, sizeof target, "< %.0f s, < %.0f GiB: %s", bc->target_s, bc->target_gib,
				 secs < bc->target_s && gib < bc->target_gib ? "met" : "MISSED");
		else
			snprintf(target, sizeof target, "< %.0f s: %s", bc->target_s, secs < bc->target_s ? "met" : "MISSED");
		printf("%-30s %7.2f s %10.0f %8.0f %8.0f %9.0f %9.0f %12.0f %5.2f GiB  %-24s %s\n", bc->name, secs, en, inv, oom,
		       est, sim, secs > 0 ? en / secs : 0.0, gib, target, key);
		fflush(stdout);
	}
	return 0;
}
