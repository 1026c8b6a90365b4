/*
 * cmd_calibrate.c -- 'paraplan calibrate': measure GPUs and collectives into the hardware
 * database (calibrate/gpu.c, in builds with CUDA and NCCL; under mpirun or srun across nodes),
 * and 'paraplan calibrate --fit': fit the cost model's parameters to stored measurements.
 */
#include "config.h"
#include "calibrate/cal.h"
#include "cli/cli.h"

#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char about_text[] =
	"Measures this machine's GPUs and stores the rows as one calibration run of system NAME:\n"
	"--gemm, a cuBLASLt GEMM sweep (fp32, tf32, fp16, bf16, fp8 where supported) of transformer\n"
	"shapes of common widths, TP degrees and token counts, and a log grid, median of repeats\n"
	"with L2 flushed between them; --membw, HBM bandwidth (device-to-device copies and a\n"
	"read-write kernel over buffers well beyond L2); --collectives, NCCL all_reduce,\n"
	"all_gather, reduce_scatter, alltoall, broadcast and send/recv, 1 KiB .. 4 GiB, on groups\n"
	"of 2 .. all GPUs of the node, and under mpirun or srun (one process per GPU) across all\n"
	"nodes.  None of the three: all of them.\n"
	"\n"
	"The run is one database transaction: Ctrl-C or an error leaves nothing of it.  After a\n"
	"complete run the parameters are fitted to it (as with --fit --run ID).\n";

static const char examples_text[] =
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

/* --model LIST: each a transformer of the catalog or a config file; usage errors name it. */
static int
load_models(const char *list, model **models, const model_tf **tfs, size_t *n)
{
	char buf[4096];
	if (!pp_strlcpy(buf, list, sizeof buf))
		return cli_usage("calibrate", "--model: the list is too long");
	*n = 0;
	int st = 0;
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t != NULL && st == 0; t = strtok_r(NULL, ",", &save)) {
		char err[512];
		model *m = NULL;
		if (*n == 16)
			st = cli_usage("calibrate", "--model: at most 16 models");
		else if (cli_load_model(t, &m, err, sizeof err) != 0)
			st = cli_usage("calibrate", "--model \"%s\": %s", t, err);
		else if (model_transformer(m) == NULL) {
			st = cli_usage("calibrate", "--model \"%s\": not a transformer (the sweep adds linear layers)", t);
			model_free(m);
		} else {
			models[*n] = m;
			tfs[(*n)++] = model_transformer(m);
		}
	}
	if (st == 0 && *n == 0)
		st = cli_usage("calibrate", "--model needs at least one model");
	if (st != 0)
		for (size_t i = 0; i < *n; i++)
			model_free(models[i]);
	return st;
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
			cli_print_json(rep, "paraplan.calibrate-fit/1");
		else if (rep != NULL) {
			const cJSON *x;
			cJSON_ArrayForEach(x, cJSON_GetObjectItem(rep, "skipped"))
				fprintf(stderr, "  %s: %s\n", s_of(x, "key"), s_of(x, "reason"));
		}
	} else if (json) {
		cli_print_json(rep, "paraplan.calibrate-fit/1");
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
	static const cli_cmd cmd = {"calibrate",
				    "calibrate [--gemm] [--membw] [--collectives] [--system-name NAME]\n"
				    "                   [--dtype LIST] [--model LIST] [--max-bytes SIZE] [--no-fit] [--note TEXT]\n"
				    "                   [--json] [--quiet] [--db FILE]\n"
				    "calibrate --fit --system NAME [--run ID] [--json] [--db FILE]\n",
				    about_text, examples_text};
	cal_gpu_opts g = {.fit = true};
	const char *db_path = NULL, *system = NULL, *system_name = NULL, *dtype_s = NULL, *model_s = NULL;
	bool fit = false, json = false, quiet = false, gemm = false, membw = false, coll = false, nofit = false;
	int64_t run = 0;
	double maxb = 0;
	const cli_opt opts[] = {
		OPT_SWITCH("gemm", &gemm, "measure GEMMs (cuBLASLt)"),
		OPT_SWITCH("membw", &membw, "measure HBM bandwidth"),
		OPT_SWITCH("collectives", &coll, "measure NCCL collectives"),
		OPT_STR("system-name", "NAME", &system_name,
			"the system this machine is (see 'paraplan hw list'); without it, the one system whose GPU and GPU "
			"count match, if there is one"),
		OPT_STR("system", "NAME", &system, "the same as --system-name"),
		OPT_STR("dtype", "LIST", &dtype_s, "GEMM dtypes, comma-separated (fp32,tf32,fp16,bf16,fp8)"),
		OPT_STR("model", "LIST", &model_s,
			"add the GEMMs of these models' layers to the sweep (catalog names or config files, "
			"comma-separated; at most 16): the widths you will train at TP 1, 2, 4 and 8"),
		OPT_NUM("max-bytes", "SIZE", &maxb, 1024, 4294967296.0, "largest collective (default 4Gi, less when GPU memory is short)"),
		OPT_SWITCH("no-fit", &nofit, "do not fit the cost-model parameters to the new run"),
		OPT_STR("note", "TEXT", &g.note, "a note stored with the run"),
		OPT_SWITCH("fit", &fit,
			   "fit the cost model's parameters of system NAME (and its GPU) to its stored measurements "
			   "(calibration and imported runs): alpha-beta collective efficiencies and latencies, GEMM "
			   "efficiency, k ramp and launch time, HBM efficiency; stored with origin 'fitted' (see 'hw show NAME')"),
		OPT_I64("run", "ID", &run, 1, (double)INT64_MAX, "with --fit: fit to one run only (see 'paraplan hw calibrations')"),
		OPT_JSON(&json),
		OPT_SWITCH("quiet", &quiet, "no progress lines on stderr"),
		OPT_DB(&db_path),
		OPT_END,
	};
	int st = cli_parse(&cmd, opts, argc, argv, NULL, 0, NULL);
	if (st != CLI_RUN)
		return st;
	if (system != NULL && system_name != NULL)
		return cli_usage("calibrate", "--system and --system-name are the same option: give one");
	if (system == NULL)
		system = system_name;
	bool measure_flags = nofit || maxb > 0 || dtype_s != NULL || model_s != NULL;
	if (gemm)
		g.what |= CAL_GEMM;
	if (membw)
		g.what |= CAL_MEMBW;
	if (coll)
		g.what |= CAL_COLLECTIVES;
	if (nofit)
		g.fit = false;
	if (dtype_s != NULL && parse_dtypes(dtype_s, &g.dtypes) != 0)
		return 2;
	if (fit) {
		if (g.what != 0 || measure_flags || g.note != NULL)
			return cli_usage("calibrate", "--fit fits stored measurements: it takes no measurement options "
						      "(--gemm, --membw, --collectives, --dtype, --model, --max-bytes, --no-fit, "
						      "--note)");
		if (system == NULL)
			return cli_usage("calibrate", "--fit needs --system NAME");
		return run_fit(db_path, system, run, json);
	}
	if (run != 0)
		return cli_usage("calibrate", "--run applies to --fit only");
	if (model_s != NULL && g.what != 0 && !(g.what & CAL_GEMM))
		return cli_usage("calibrate", "--model adds GEMM shapes to the sweep: it needs --gemm (or no selection)");
	model *models[16];
	const model_tf *tfs[16];
	size_t nm = 0;
	if (model_s != NULL && (st = load_models(model_s, models, tfs, &nm)) != 0)
		return st;
	g.models = tfs;
	g.nmodels = nm;
	g.db_path = db_path;
	g.system = system;
	g.max_coll_bytes = (int64_t)maxb;
	if (!quiet)
		g.progress = progress;
	cJSON *rep = NULL;
	bool root = true;
	char err[1024] = "";
	int rc = cal_gpu_run(&g, &rep, &root, err, sizeof err);
	for (size_t i = 0; i < nm; i++)
		model_free(models[i]);
	if (rc != 0) {
		st = root ? cli_fail(rc, err) : cli_status(rc);
		cJSON_Delete(rep);
		return st;
	}
	if (root && rep != NULL) {
		if (json)
			cli_print_json(rep, "paraplan.calibrate/1");
		else
			print_run(rep);
	}
	cJSON_Delete(rep);
	return 0;
}
