/*
 * cmd_calibrate.c -- 'paraplan calibrate': measure GPUs and collectives into the hardware
 * database (calibrate/gpu.c, in builds with CUDA and NCCL; under mpirun or srun across nodes),
 * and 'paraplan calibrate --fit': fit the cost model's parameters to stored measurements.
 */
#include "config.h"
#include "calibrate/cal.h"
#include "cli/cli.h"

#include <cJSON.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
	"usage: paraplan calibrate [--gemm] [--membw] [--collectives] [--system-name NAME]\n"
	"                          [--dtype LIST] [--max-bytes SIZE] [--no-fit] [--note TEXT]\n"
	"                          [--json] [--quiet] [--db FILE]\n"
	"       paraplan calibrate --fit --system NAME [--run ID] [--json] [--db FILE]\n"
	"\n"
	"Measures this machine's GPUs and stores the rows as one calibration run of system NAME:\n"
	"  --gemm          cuBLASLt GEMM sweep (fp32, tf32, fp16, bf16, fp8 where supported):\n"
	"                  transformer shapes of common widths, TP degrees and token counts, and\n"
	"                  a log grid; median of repeats with L2 flushed between them\n"
	"  --membw         HBM bandwidth: device-to-device copies and a read-write kernel over\n"
	"                  buffers well beyond L2\n"
	"  --collectives   NCCL all_reduce, all_gather, reduce_scatter, alltoall, broadcast and\n"
	"                  send/recv, 1 KiB .. 4 GiB, on groups of 2 .. all GPUs of the node; under\n"
	"                  mpirun or srun (one process per GPU) also across all nodes\n"
	"  (none of the three: all of them)\n"
	"  --system-name NAME  the system this machine is (see 'paraplan hw list'); without it,\n"
	"                  the one system whose GPU and GPU count match, if there is one\n"
	"  --dtype LIST    GEMM dtypes, comma-separated (fp32,tf32,fp16,bf16,fp8)\n"
	"  --max-bytes SIZE  largest collective (default 4Gi, less when GPU memory is short)\n"
	"  --no-fit        do not fit the cost-model parameters to the new run\n"
	"  --note TEXT     a note stored with the run\n"
	"  --quiet         no progress lines on stderr\n"
	"\n"
	"The run is one database transaction: Ctrl-C or an error leaves nothing of it.  After a\n"
	"complete run the parameters are fitted to it (as with --fit --run ID).\n"
	"\n"
	"  --fit           fit the cost model's parameters of system NAME (and its GPU) to its\n"
	"                  stored measurements (calibration and imported runs): alpha-beta\n"
	"                  collective efficiencies and latencies, GEMM efficiency, k ramp and launch\n"
	"                  time, HBM efficiency; stored with origin 'fitted' (see 'hw show NAME')\n"
	"  --run ID        fit to one run only (see 'paraplan hw calibrations')\n"
	"\n"
	"Examples:\n"
	"  paraplan calibrate --system-name dgx-h100\n"
	"  mpirun -np 16 --npernode 8 paraplan calibrate --collectives --system-name dgx-h100\n"
	"  srun -N 2 --ntasks-per-node 8 --gpus-per-node 8 paraplan calibrate --collectives --system-name dgx-h100\n"
	"  paraplan import nccl-tests --system aws-p5 all_reduce_perf.log && paraplan calibrate --fit --system aws-p5\n";

static const char *
s_of(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : "";
}

static double
n_of(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static void
print_fit(const cJSON *rep)
{
	const cJSON *arr = cJSON_GetObjectItem(rep, "collectives"), *x;
	if (cJSON_GetArraySize(arr) > 0) {
		printf("Collective curves: t = latency + size x bus factor / busbw, latency fitted over the small\n"
		       "sizes, busbw over the large ones (\"-\": the curve does not reach that regime)\n\n");
		const char *h[] = {"op", "ranks", "nodes", "rows", "latency", "busbw", "peak measured", "mid rows", "model error"};
		cli_table *t = cli_table_new(9, h, "lrrrrrrrr");
		cJSON_ArrayForEach(x, arr)
		{
			bool ok = cJSON_IsTrue(cJSON_GetObjectItem(x, "fitted"));
			cli_table_addf(t, 0, "%s", s_of(x, "op"));
			cli_table_addf(t, 1, "%.0f", n_of(x, "ranks"));
			cli_table_addf(t, 2, "%.0f", n_of(x, "nodes"));
			cli_table_addf(t, 3, "%.0f", n_of(x, "rows"));
			if (ok && cJSON_IsTrue(cJSON_GetObjectItem(x, "latency_determined")))
				cli_table_addf(t, 4, "%.1f us", n_of(x, "latency_us"));
			else
				cli_table_addf(t, 4, "-");
			if (ok && cJSON_IsTrue(cJSON_GetObjectItem(x, "busbw_determined")))
				cli_table_addf(t, 5, "%.1f GB/s", n_of(x, "busbw_gbps"));
			else
				cli_table_addf(t, 5, ok ? "-" : "too few sizes");
			cli_table_addf(t, 6, "%.1f GB/s", n_of(x, "peak_busbw_gbps"));
			if (ok) {
				cli_table_addf(t, 7, "%.0f", n_of(x, "set_aside"));
				cli_table_addf(t, 8, "%.1f%% rms", 100.0 * n_of(x, "rms_rel_err"));
			} else {
				cli_table_addf(t, 7, "-");
				cli_table_addf(t, 8, "-");
			}
		}
		cli_table_print(t, stdout);
		cli_table_free(t);
		putchar('\n');
	}
	arr = cJSON_GetObjectItem(rep, "parameters");
	printf("Fitted parameters of %s (GPU %s), stored with origin 'fitted'\n\n", s_of(rep, "system"), s_of(rep, "gpu"));
	const char *h[] = {"parameter", "was", "now", "how"};
	cli_table *t = cli_table_new(4, h, "lrrl");
	cJSON_ArrayForEach(x, arr)
	{
		cli_table_addf(t, 0, "%s", s_of(x, "key"));
		if (isfinite(n_of(x, "previous")))
			cli_table_addf(t, 1, "%.4g", n_of(x, "previous"));
		else
			cli_table_addf(t, 1, "-");
		cli_table_addf(t, 2, "%.4g", n_of(x, "value"));
		cli_table_addf(t, 3, "%s", s_of(x, "method"));
	}
	cli_table_print(t, stdout);
	cli_table_free(t);
	arr = cJSON_GetObjectItem(rep, "skipped");
	if (cJSON_GetArraySize(arr) > 0) {
		printf("\nNot fitted (the standing values stay):\n");
		cJSON_ArrayForEach(x, arr) printf("  %s: %s\n", s_of(x, "key"), s_of(x, "reason"));
	}
}

static void
progress(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "%s\n", line);
	fflush(stderr);
}

static int
parse_dtypes(const char *list, unsigned *out)
{
	char buf[128];
	pp_strlcpy(buf, list, sizeof buf);
	*out = 0;
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
		hw_dtype d;
		if (hw_dtype_parse(t, &d) != 0 || (d != HW_FP32 && d != HW_TF32 && d != HW_FP16 && d != HW_BF16 && d != HW_FP8))
			return cli_usage("calibrate", "--dtype: \"%s\" is not one of fp32, tf32, fp16, bf16, fp8", t);
		*out |= 1u << d;
	}
	if (*out == 0)
		return cli_usage("calibrate", "--dtype needs at least one dtype");
	return 0;
}

static int
run_fit(const char *db_path, const char *system, long long run, bool json)
{
	hw_db *db;
	int rc = cli_open_db(db_path, 0, &db);
	if (rc != 0)
		return rc;
	char err[1024] = "";
	hw_system sys;
	if ((rc = hw_system_get(db, system, &sys, err, sizeof err)) != 0) {
		hw_close(db);
		return rc == PP_ENOTFOUND ? cli_usage("calibrate", "%s", err) : cli_fail(rc, err);
	}
	cJSON *rep = NULL;
	rc = cal_fit(db, system, run, &rep, err, sizeof err);
	int status = 0;
	if (rc != 0) {
		status = cli_fail(rc, err);
		if (rep != NULL && json)
			cli_print_json(rep);
		else if (rep != NULL) {
			const cJSON *x;
			cJSON_ArrayForEach(x, cJSON_GetObjectItem(rep, "skipped"))
				fprintf(stderr, "  %s: %s\n", s_of(x, "key"), s_of(x, "reason"));
		}
	} else if (json) {
		cli_print_json(rep);
	} else {
		print_fit(rep);
	}
	cJSON_Delete(rep);
	hw_close(db);
	return status;
}

static void
print_run(const cJSON *rep)
{
	printf("calibration run %.0f of %s on %s (%s): %.0f GEMM, %.0f bandwidth and %.0f collective rows\n",
	       n_of(rep, "run_id"), s_of(rep, "system"), s_of(rep, "host"), s_of(rep, "gpu_name"), n_of(rep, "gemm_rows"),
	       n_of(rep, "bandwidth_rows"), n_of(rep, "collective_rows"));
	const cJSON *fit = cJSON_GetObjectItem(rep, "fit");
	if (fit != NULL) {
		putchar('\n');
		print_fit(fit);
	}
	const cJSON *fe = cJSON_GetObjectItem(rep, "fit_error");
	if (cJSON_IsString(fe))
		printf("\nno parameters fitted: %s\n", fe->valuestring);
}

int
cmd_calibrate(int argc, char **argv)
{
	enum { O_GEMM = 256, O_MEMBW, O_COLL, O_SYSTEM, O_DTYPE, O_MAXB, O_NOFIT, O_NOTE, O_FIT, O_RUN, O_JSON, O_QUIET, O_DB };
	static const struct option opts[] = {
		{"gemm", no_argument, NULL, O_GEMM}, {"membw", no_argument, NULL, O_MEMBW},
		{"collectives", no_argument, NULL, O_COLL}, {"system-name", required_argument, NULL, O_SYSTEM},
		{"system", required_argument, NULL, O_SYSTEM}, {"dtype", required_argument, NULL, O_DTYPE},
		{"max-bytes", required_argument, NULL, O_MAXB}, {"no-fit", no_argument, NULL, O_NOFIT},
		{"note", required_argument, NULL, O_NOTE}, {"fit", no_argument, NULL, O_FIT},
		{"run", required_argument, NULL, O_RUN}, {"json", no_argument, NULL, O_JSON},
		{"quiet", no_argument, NULL, O_QUIET}, {"db", required_argument, NULL, O_DB},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	cal_gpu_opts g = {.fit = true};
	const char *db_path = NULL, *system = NULL;
	bool fit = false, json = false, quiet = false, measure_flags = false;
	long long run = 0;
	double maxb = 0;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case O_GEMM:
			g.what |= CAL_GEMM;
			break;
		case O_MEMBW:
			g.what |= CAL_MEMBW;
			break;
		case O_COLL:
			g.what |= CAL_COLLECTIVES;
			break;
		case O_SYSTEM:
			system = optarg;
			break;
		case O_DTYPE:
			if (parse_dtypes(optarg, &g.dtypes) != 0)
				return 2;
			measure_flags = true;
			break;
		case O_MAXB:
			if (cli_double("calibrate", "--max-bytes", optarg, 1024, 4294967296.0, &maxb) != 0)
				return 2;
			measure_flags = true;
			break;
		case O_NOFIT:
			g.fit = false;
			measure_flags = true;
			break;
		case O_NOTE:
			g.note = optarg;
			break;
		case O_FIT:
			fit = true;
			break;
		case O_RUN:
			if (cli_int("calibrate", "--run", optarg, 1, INT64_MAX, &run) != 0)
				return 2;
			break;
		case O_JSON:
			json = true;
			break;
		case O_QUIET:
			quiet = true;
			break;
		case O_DB:
			db_path = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return cli_bad_option("calibrate", c, argv);
		}
	}
	if (optind < argc)
		return cli_usage("calibrate", "unexpected argument \"%s\"", argv[optind]);
	if (fit) {
		if (g.what != 0 || measure_flags || g.note != NULL)
			return cli_usage("calibrate", "--fit fits stored measurements: it takes no measurement options "
						      "(--gemm, --membw, --collectives, --dtype, --max-bytes, --no-fit, --note)");
		if (system == NULL)
			return cli_usage("calibrate", "--fit needs --system NAME");
		return run_fit(db_path, system, run, json);
	}
	if (run != 0)
		return cli_usage("calibrate", "--run applies to --fit only");
	g.db_path = db_path;
	g.system = system;
	g.max_coll_bytes = (int64_t)maxb;
	if (!quiet)
		g.progress = progress;
	cJSON *rep = NULL;
	bool root = true;
	char err[1024] = "";
	int rc = cal_gpu_run(&g, &rep, &root, err, sizeof err);
	if (rc != 0) {
		int st = root ? cli_fail(rc, err) : cli_status(rc);
		cJSON_Delete(rep);
		return st;
	}
	if (root && rep != NULL) {
		if (json)
			cli_print_json(rep);
		else
			print_run(rep);
	}
	cJSON_Delete(rep);
	return 0;
}
