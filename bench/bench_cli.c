/*
 * bench_cli.c -- whole-process timing of the command line: what a user waits for, library
 * loading and database set-up included.  Each case runs REPEATS times as its own process
 * (fork, exec, wait4), interleaved with the other cases so that a busy moment of a shared
 * machine spreads over all of them; the table gives the median wall time, the median CPU time
 * (user + system) and the largest peak RSS, beside the peer figure and target.
 *
 *   usage: bench_cli [REPEATS [PARAPLAN]]     (defaults: 5, ./paraplan)
 *
 * Peers are constants measured or published elsewhere, named in the table; "met" compares the
 * median with the target.  The database is in memory (PARAPLAN_DB=:memory:), as in the tests,
 * which costs each process about 7 ms to build; one case opens a database file made beforehand,
 * as a user's is after the first run.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct ccase {
	const char *name;
	bool file_db;          /* the database is a file made beforehand (as a user's is), not :memory: */
	const char *args[40];
	const char *peer;      /* the peer column, "" for none */
	double target_s;       /* wall time, 0: none */
	double target_cpu_s;   /* CPU time, 0: none */
	double target_mib;     /* peak RSS, 0: none */
} ccase;

static const ccase cases[] = {
	{"paraplan --version", false,
	 {"--version", NULL},
	 "a build without CUDA/NCCL/MPI: 1 ms, 11 MiB",
	 0, 0.005, 20},
	{"paraplan hw list (database in memory)", false,
	 {"hw", "list", NULL},
	 "",
	 0, 0, 0},
	{"paraplan hw list (database file)", true,
	 {"hw", "list", NULL},
	 "",
	 0, 0.005, 20},
	{"paraplan model list (catalog read)", false,
	 {"model", "list", NULL},
	 "",
	 0, 0.005, 20},
	{"simulate train llama-3-405b 16384 H100 --full", false,
	 {"simulate", "train", "--model", "llama-3-405b", "--system", "dgx-h100", "--gpus", "16384", "--tp", "8", "--pp",
	  "16", "--micro-batch", "1", "--global-batch", "2048", "--seq", "8192", "--sequence-parallel", "--full", "--json",
	  NULL},
	 "before: 8.0 s, 1.71 GiB",
	 4.0, 0, 1536},
	{"plan train llama-3-70b 64 H100 --jobs 1", false,
	 {"plan", "train", "--model", "llama-3-70b", "--system", "dgx-h100", "--gpus", "64", "--global-batch", "512",
	  "--jobs", "1", "--json", NULL},
	 "before: 0.79 s",
	 0.2, 0, 0},
	{"plan train gpt3-175b 1024 A100 --jobs 1", false,
	 {"plan", "train", "--model", "gpt3-175b", "--system", "dgx-a100", "--gpus", "1024", "--global-batch", "1536",
	  "--jobs", "1", "--json", NULL},
	 "before: 0.26 s",
	 0.1, 0, 0},
};
enum { NCASES = sizeof cases / sizeof cases[0] };

static double
now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char dbfile[256];

/* Runs one case once; wall and CPU seconds, peak RSS in MiB.  Returns the exit status. */
static int
run_once(const char *paraplan, const ccase *c, double *wall, double *cpu, double *mib)
{
	const char *argv[42];
	argv[0] = paraplan;
	int n = 0;
	while (c->args[n] != NULL) {
		argv[n + 1] = c->args[n];
		n++;
	}
	argv[n + 1] = NULL;
	double t0 = now_s();
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (freopen("/dev/null", "w", stdout) == NULL || freopen("/dev/null", "w", stderr) == NULL)
			_exit(127);
		setenv("PARAPLAN_DB", c->file_db ? dbfile : ":memory:", 1);
		execv(paraplan, (char *const *)argv);
		_exit(127);
	}
	int status;
	struct rusage ru;
	if (wait4(pid, &status, 0, &ru) < 0)
		return -1;
	*wall = now_s() - t0;
	*cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
	       (double)ru.ru_stime.tv_usec * 1e-6;
	*mib = (double)ru.ru_maxrss / 1024.0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
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

static void
fmt_time(char *buf, size_t n, double s)
{
	if (s < 1.0)
		snprintf(buf, n, "%.1f ms", s * 1e3);
	else
		snprintf(buf, n, "%.2f s", s);
}

int
main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 5;
	const char *paraplan = argc > 2 ? argv[2] : "./paraplan";
	if (reps < 1)
		reps = 1;
	if (access(paraplan, X_OK) != 0) {
		fprintf(stderr, "bench_cli: %s is not an executable program (give its path)\n", paraplan);
		return 2;
	}
	/* the file database of the cases that use one, made (defaults loaded) before timing */
	char dir[] = "/tmp/paraplan-bench.XXXXXX";
	if (mkdtemp(dir) == NULL) {
		perror("bench_cli: mkdtemp");
		return 1;
	}
	snprintf(dbfile, sizeof dbfile, "%s/hardware.db", dir);
	for (int i = 0; i < NCASES; i++) {
		double w0, c0, m0;
		if (cases[i].file_db && run_once(paraplan, &cases[i], &w0, &c0, &m0) != 0) {
			fprintf(stderr, "bench_cli: %s: could not make the database file %s\n", paraplan, dbfile);
			return 1;
		}
	}
	static double wall[NCASES][64], cpu[NCASES][64], mib[NCASES];
	if (reps > 64)
		reps = 64;
	/* interleaved: every case once per round */
	for (int r = 0; r < reps; r++)
		for (int i = 0; i < NCASES; i++) {
			double m = 0;
			int st = run_once(paraplan, &cases[i], &wall[i][r], &cpu[i][r], &m);
			if (st != 0) {
				fprintf(stderr, "bench_cli: %s exited with %d\n", cases[i].name, st);
				return 1;
			}
			if (m > mib[i])
				mib[i] = m;
		}
	unlink(dbfile);
	rmdir(dir);
	printf("command: bench/bench_cli %d %s   (median of %d runs, interleaved; peak RSS: the largest; database in\n"
	       "memory, PARAPLAN_DB=:memory:, unless the case says file)\n\n",
	       reps, paraplan, reps);
	printf("%-46s %10s %10s %10s  %-44s %s\n", "case", "wall", "CPU", "peak RSS", "peer", "target");
	for (int i = 0; i < NCASES; i++) {
		const ccase *c = &cases[i];
		double w = median(wall[i], reps), u = median(cpu[i], reps);
		char ws[32], us[32], target[96] = "", part[48];
		fmt_time(ws, sizeof ws, w);
		fmt_time(us, sizeof us, u);
		bool met = true;
		if (c->target_s > 0) {
			fmt_time(part, sizeof part, c->target_s);
			snprintf(target + strlen(target), sizeof target - strlen(target), "wall <= %s ", part);
			met &= w <= c->target_s;
		}
		if (c->target_cpu_s > 0) {
			fmt_time(part, sizeof part, c->target_cpu_s);
			snprintf(target + strlen(target), sizeof target - strlen(target), "CPU <= %s ", part);
			met &= u <= c->target_cpu_s;
		}
		if (c->target_mib > 0) {
			snprintf(target + strlen(target), sizeof target - strlen(target), "<= %.0f MiB ", c->target_mib);
			met &= mib[i] <= c->target_mib;
		}
		printf("%-46s %10s %10s %6.0f MiB  %-44s %s%s\n", c->name, ws, us, mib[i], c->peer, target,
		       target[0] ? (met ? ": met" : ": MISSED") : "");
	}
	return 0;
}
