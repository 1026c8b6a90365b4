/*
 * bench_serve.c -- speed of the serving simulator and planner on the cases the plan names:
 *   10 simulated minutes of Llama-3-70B at 100 requests/s (60,000 requests; two replicas of
 *   TP 4 on H100; prompt 512, output 256 tokens): target under 1 s on one core;
 *   plan serve for Llama-3-70B at 100 requests/s, P99 TTFT <= 500 ms and TPOT <= 50 ms, over
 *   A100, H100, H200 and B200 systems with bf16 and int4 weights: target under 30 s.
 * Prints a table and the command that produced it.  Usage: bench_serve [JOBS]
 */
#include "config.h"
#include "common/pp.h"
#include "hardware/hw.h"
#include "models/model.h"
#include "planner/plan.h"
#include "sim/sim.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double
now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double
cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
	       (double)ru.ru_stime.tv_usec * 1e-6;
}

int
main(int argc, char **argv)
{
	pp_keep_freed_memory(); /* as the paraplan program does */
	int jobs = argc > 1 ? atoi(argv[1]) : 0;
	char err[512];
	hw_db *db;
	model *m;
	if (hw_open(":memory:", 0, &db, err, sizeof err) != 0 || model_load("llama-3-70b", &m, err, sizeof err) != 0) {
		fprintf(stderr, "bench_serve: %s\n", err);
		return 1;
	}
	printf("command: bench/bench_serve %d   (%ld cores; plan serve jobs %s)\n\n", jobs, sysconf(_SC_NPROCESSORS_ONLN),
	       jobs > 0 ? argv[1] : "all");
	printf("%-58s %9s %9s  %-16s %s\n", "case", "wall", "cpu", "target", "result");

	/* the simulation, single-threaded */
	hw_cost *cost;
	if (hw_cost_new(db, "dgx-h100", &cost, err, sizeof err) != 0) {
		fprintf(stderr, "bench_serve: %s\n", err);
		return 1;
	}
	sim_serve_cfg c;
	sim_serve_cfg_init(&c);
	c.tp = 4;
	c.replicas = 2;
	c.rate = 100;
	c.duration_s = 600;
	c.output.mean = 256;
	double t0 = now_s(), c0 = cpu_s();
	sim_serve_result *r;
	if (sim_serve(m, cost, &c, &r, err, sizeof err) != 0) {
		fprintf(stderr, "bench_serve: %s\n", err);
		return 1;
	}
	double dt = now_s() - t0, dc = cpu_s() - c0;
	const sim_serve_metrics *mt = sim_serve_get_metrics(r);
	char res[160];
	snprintf(res, sizeof res, "%lld requests, %lld iterations, %.0f output tok/s%s", (long long)mt->offered,
		 (long long)mt->iterations, mt->output_tokens_per_s, mt->saturated ? ", saturated" : "");
	printf("%-58s %7.3f s %7.3f s  %-16s %s\n", "simulate serve 70B, 2 x TP4 H100, 100 req/s, 600 s", dt, dc,
	       dc < 1.0 ? "< 1 s: met" : "< 1 s: MISSED", res);
	fflush(stdout);
	sim_serve_result_free(r);
	hw_cost_free(cost);

	/* the planner, on all cores */
	plan_serve_opts o;
	plan_serve_opts_init(&o);
	const char *systems[] = {"dgx-a100", "dgx-h100", "hgx-h200", "dgx-b200"};
	o.systems = systems;
	o.nsystems = 4;
	o.rate = 100;
	o.slo_ttft_s = 0.5;
	o.slo_tpot_s = 0.05;
	o.weights[0] = HW_BF16;
	o.weights[1] = HW_INT4;
	o.nweights = 2;
	o.jobs = jobs;
	t0 = now_s();
	c0 = cpu_s();
	cJSON *doc;
	if (plan_serve(m, db, &o, &doc, err, sizeof err) != 0) {
		fprintf(stderr, "bench_serve: %s\n", err);
		return 1;
	}
	dt = now_s() - t0;
	dc = cpu_s() - c0;
	const cJSON *best = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "deployments"), 0);
	if (best != NULL)
		snprintf(res, sizeof res, "%.0f candidates; best %s tp %.0f %s, %.0f GPUs, $%.2f/M output tokens",
			 cJSON_GetObjectItem(doc, "candidates_evaluated")->valuedouble,
			 cJSON_GetObjectItem(best, "system")->valuestring, cJSON_GetObjectItem(best, "tp")->valuedouble,
			 cJSON_GetObjectItem(best, "weights")->valuestring, cJSON_GetObjectItem(best, "gpus")->valuedouble,
			 cJSON_GetObjectItem(best, "usd_per_million_output_tokens")->valuedouble);
	else
		snprintf(res, sizeof res, "no deployment meets the SLO");
	printf("%-58s %7.2f s %7.2f s  %-16s %s\n", "plan serve 70B @ 100 req/s, 4 systems, bf16+int4", dt, dc,
	       dt < 30.0 ? "< 30 s: met" : "< 30 s: MISSED", res);
	cJSON_Delete(doc);
	model_free(m);
	hw_close(db);
	return 0;
}
