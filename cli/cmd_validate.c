/*
 * cmd_validate.c -- 'paraplan validate': predictions against published measurements.
 */
#include "config.h"
#include "cli/cli.h"
#include "sim/sim.h"

#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char about_text[] =
	"Simulates every row of the bundled published training measurements (sim/data/\n"
	"published-training.csv: Narayanan 2021, Korthikanti 2022, Shoeybi 2019, the Megatron-LM\n"
	"README, MosaicML llm-foundry on A100 and H100; every row with its source) that it can\n"
	"express, converts the prediction to the row's own metric and FLOP accounting, and prints\n"
	"the error of each row, the mean absolute percentage error (MAPE) per source and overall,\n"
	"and the rows skipped with the reason.\n"
	"\n"
	"--fit fits the cost-model parameters of the named GPUs (one silicon, e.g.\n"
	"a100-sxm4-80gb,a100-sxm4-40gb) to the rows that ran on them: GEMM efficiency, the host's\n"
	"time to issue a kernel, flash-attention efficiency and the compute slowdown under\n"
	"overlapping communication; it prints the values and the MAPE before and after, and --save\n"
	"stores them as 'fitted' parameters.  With --set serving the names are systems and the\n"
	"parameters the per-step cost of the serving engine: iteration overhead and the latency of\n"
	"a decode step's small tensor-parallel all-reduce.\n";

static void
print_report(const cJSON *doc)
{
	const char *h[] = {"line", "source", "model", "GPUs", "tp/pp/dp/vpp/mb", "metric", "measured", "predicted", "error"};
	cli_table *t = cli_table_new(9, h, "rllrllrrr");
	const cJSON *r;
	cJSON_ArrayForEach(r, cJSON_GetObjectItem(doc, "rows"))
	{
		const cJSON *c = cJSON_GetObjectItem(r, "config");
		cli_table_addf(t, 0, "%.0f", cli_num(r, "line"));
		cli_table_addf(t, 1, "%s", cli_str(r, "source"));
		cli_table_addf(t, 2, "%s", cli_str(r, "model"));
		cli_table_addf(t, 3, "%.0f", cli_num(c, "gpus"));
		cli_table_addf(t, 4, "%.0f/%.0f/%.0f/%.0f/%.0f", cli_num(c, "tp"), cli_num(c, "pp"), cli_num(c, "dp"), cli_num(c, "vpp"),
			       cli_num(c, "micro_batch"));
		char metric[48];
		snprintf(metric, sizeof metric, "%.40s", cli_str(r, "metric"));
		cli_table_addf(t, 5, "%s", metric);
		cli_table_addf(t, 6, "%.4g %s", cli_num(r, "measured"), cli_str(r, "unit"));
		cli_table_addf(t, 7, "%.4g", cli_num(r, "predicted"));
		cli_table_addf(t, 8, "%+.1f%%", 100.0 * cli_num(r, "error"));
	}
	cli_table_print(t, stdout);
	cli_table_free(t);
	printf("\n");
	const char *sh[] = {"source", "rows", "MAPE"};
	t = cli_table_new(3, sh, "lrr");
	cJSON_ArrayForEach(r, cJSON_GetObjectItem(doc, "sources"))
	{
		cli_table_addf(t, 0, "%s", cli_str(r, "source"));
		cli_table_addf(t, 1, "%.0f", cli_num(r, "rows"));
		cli_table_addf(t, 2, "%.1f%%", 100.0 * cli_num(r, "mape"));
	}
	const cJSON *ov = cJSON_GetObjectItem(doc, "overall");
	cli_table_addf(t, 0, "overall");
	cli_table_addf(t, 1, "%.0f", cli_num(ov, "rows"));
	cli_table_addf(t, 2, "%.1f%%", 100.0 * cli_num(ov, "mape"));
	cli_table_print(t, stdout);
	cli_table_free(t);
	const cJSON *sk = cJSON_GetObjectItem(doc, "skipped");
	if (cJSON_GetArraySize(sk) > 0) {
		printf("\nSkipped %d rows:\n", cJSON_GetArraySize(sk));
		const char *kh[] = {"line", "source", "model", "why"};
		t = cli_table_new(4, kh, "rlll");
		cJSON_ArrayForEach(r, sk)
		{
			char src[40];
			snprintf(src, sizeof src, "%.32s", cli_str(r, "source"));
			cli_table_addf(t, 0, "%.0f", cli_num(r, "line"));
			cli_table_addf(t, 1, "%s", src);
			cli_table_addf(t, 2, "%s", cli_str(r, "model"));
			cli_table_addf(t, 3, "%s", cli_str(r, "reason"));
		}
		cli_table_print(t, stdout);
		cli_table_free(t);
	}
}

int
cmd_validate(int argc, char **argv)
{
	static const cli_cmd cmd = {"validate",
				    "validate [--set NAME] [--file CSV] [--max-mape PERCENT] [--json] [--db FILE]\n"
				    "validate --fit GPU[,GPU...] [--max-evals N] [--save] [--file CSV] [--db FILE]\n"
				    "validate --set serving --fit SYSTEM[,SYSTEM...] [--max-evals N] [--save]\n",
				    about_text, "  paraplan validate --set korthikanti\n"};
	char *fit = NULL;
	int max_evals = 300;
	bool save = false, json = false;
	const char *set = NULL, *file = NULL, *db_path = NULL, *fit_s = NULL;
	double max_mape = -1.0;
	const cli_opt opts[] = {
		OPT_STR("set", "NAME", &set,
			"only rows of one source: narayanan, korthikanti, shoeybi, megatron-readme, mosaicml (default: all "
			"training rows); or the rows of one GPU: a100, h100, v100; or serving: "
			"sim/data/published-serving.csv (TensorRT-LLM, vLLM)"),
		OPT_STR("file", "CSV", &file, "validate another file with the same columns (your own measurements)"),
		OPT_NUM("max-mape", "X", &max_mape, 0.0, 1000.0, "exit 1 when the overall MAPE is above X percent"),
		OPT_JSON(&json),
		OPT_DB(&db_path),
		OPT_STR("fit", "NAMES", &fit_s, "fit the cost-model parameters of these GPUs (or systems, with --set serving)"),
		OPT_INT("max-evals", "N", &max_evals, 1, 100000, "at most N evaluations of the fit (default 300)"),
		OPT_SWITCH("save", &save, "store the fitted parameters in the database"),
		OPT_END,
	};
	int st = cli_parse(&cmd, opts, argc, argv, NULL, 0, NULL);
	if (st != CLI_RUN)
		return st;
	char fitbuf[1024];
	if (fit_s != NULL) {
		if (!pp_strlcpy(fitbuf, fit_s, sizeof fitbuf))
			return cli_usage("validate", "--fit is too long");
		fit = fitbuf;
	}
	if (save && fit == NULL)
		return cli_usage("validate", "--save applies to --fit");
	static const char *const sets[] = {"training", "all", "narayanan", "korthikanti", "shoeybi", "megatron-readme",
					   "mosaicml", "a100", "h100", "v100", "serving", NULL};
	if (set != NULL) {
		bool ok = false;
		for (int i = 0; sets[i]; i++)
			ok |= !strcmp(set, sets[i]);
		if (!ok)
			return cli_usage("validate", "--set must be one of training, narayanan, korthikanti, shoeybi, "
					 "megatron-readme, mosaicml, a100, h100, v100, serving; got \"%s\"", set);
	}
	bool serving = set != NULL && !strcmp(set, "serving");
	char err[1024];
	char *text = NULL;
	const char *data;
	size_t len;
	const char *origin;
	if (file != NULL) {
		int rc = pp_read_file(file, 64 << 20, &text, &len, err, sizeof err);
		if (rc != 0)
			return cli_fail(rc == PP_ENOTFOUND ? PP_EUSAGE : rc, err);
		data = text;
		origin = file;
	} else if (serving) {
		data = sim_validation_data("published-serving");
		len = strlen(data);
		origin = "sim/data/published-serving.csv";
	} else {
		data = sim_validation_data("published-training");
		len = strlen(data);
		origin = "sim/data/published-training.csv";
	}
	hw_db *db;
	int rc = cli_open_db(db_path, 0, &db);
	if (rc != 0) {
		free(text);
		return rc;
	}
	cJSON *doc = NULL;
	int status = 0;
	if (fit != NULL) {
		const char *gpus[17];
		int ng = 0;
		for (char *tok = strtok(fit, ","); tok && ng < 16; tok = strtok(NULL, ","))
			gpus[ng++] = tok;
		gpus[ng] = NULL;
		if (serving)
			rc = sim_validate_serving_fit(db, data, len, origin, gpus, (int)max_evals, &doc, err, sizeof err);
		else
			rc = sim_validate_fit(db, data, len, origin, gpus, (int)max_evals, &doc, err, sizeof err);
		if (rc == 0 && save)
			rc = sim_validate_fit_save(db, doc, err, sizeof err);
		if (rc != 0)
			status = cli_fail(rc, err);
		else
			cli_print_json(doc);
		cJSON_Delete(doc);
		hw_close(db);
		free(text);
		return status;
	}
	if (serving)
		rc = sim_validate_serving(db, data, len, origin, &doc, err, sizeof err);
	else
		rc = sim_validate_training(db, data, len, origin, set, &doc, err, sizeof err);
	if (rc != 0) {
		status = cli_fail(rc, err);
	} else {
		if (json)
			cli_print_json(doc);
		else
			print_report(doc);
		double mape = 100.0 * cli_num(cJSON_GetObjectItem(doc, "overall"), "mape");
		if (max_mape >= 0 && mape > max_mape) {
			cli_error("overall MAPE %.1f%% is above --max-mape %.1f%%", mape, max_mape);
			status = 1;
		}
	}
	cJSON_Delete(doc);
	hw_close(db);
	free(text);
	return status;
}
