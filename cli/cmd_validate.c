/*
 * cmd_validate.c -- 'paraplan validate': predictions against published measurements.
 */
#include "config.h"
#include "cli/cli.h"
#include "sim/sim.h"

#include <cJSON.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
	"usage: paraplan validate [--set NAME] [--file CSV] [--max-mape PERCENT] [--json] [--db FILE]\n"
	"       paraplan validate --fit GPU[,GPU...] [--max-evals N] [--save] [--file CSV] [--db FILE]\n"
	"       paraplan validate --set serving --fit SYSTEM[,SYSTEM...] [--max-evals N] [--save]\n"
	"\n"
	"Simulates every row of the bundled published training measurements (sim/data/\n"
	"published-training.csv: Narayanan 2021, Korthikanti 2022, Shoeybi 2019, the Megatron-LM\n"
	"README, MosaicML llm-foundry on A100 and H100; every row with its source) that it can\n"
	"express, converts the prediction to the row's own metric and FLOP accounting, and prints\n"
	"the error of each row, the mean absolute percentage error (MAPE) per source and overall,\n"
	"and the rows skipped with the reason.\n"
	"\n"
	"  --set NAME        only rows of one source: narayanan, korthikanti, shoeybi,\n"
	"                    megatron-readme, mosaicml (default: all training rows); or the\n"
	"                    rows of one GPU: a100, h100, v100; or\n"
	"                    serving: sim/data/published-serving.csv (TensorRT-LLM, vLLM)\n"
	"  --file CSV        validate another file with the same columns (your own measurements)\n"
	"  --max-mape X      exit 1 when the overall MAPE is above X percent\n"
	"  --fit GPUS        fit the cost-model parameters of these GPUs (one silicon, e.g.\n"
	"                    a100-sxm4-80gb,a100-sxm4-40gb) to the rows that ran on them:\n"
	"                    GEMM efficiency, the host's time to issue a kernel, flash-attention\n"
	"                    efficiency and the\n"
	"                    compute slowdown under overlapping communication; prints the values,\n"
	"                    the MAPE before and after; --save stores them as 'fitted' parameters\n"
	"                    With --set serving, the names are systems and the parameters\n"
	"                    the per-step cost of the serving engine: iteration overhead and\n"
	"                    the latency of a decode step's small tensor-parallel all-reduce\n"
	"\n"
	"Example:\n"
	"  paraplan validate --set korthikanti\n";

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
	static const struct option opts[] = {
		{"set", required_argument, NULL, 's'}, {"file", required_argument, NULL, 'f'},
		{"max-mape", required_argument, NULL, 'm'}, {"json", no_argument, NULL, 'j'},
		{"db", required_argument, NULL, 'd'}, {"fit", required_argument, NULL, 'F'},
		{"max-evals", required_argument, NULL, 'E'}, {"save", no_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	char *fit = NULL;
	long long max_evals = 300;
	bool save = false;
	const char *set = NULL, *file = NULL, *db_path = NULL;
	double max_mape = -1.0;
	bool json = false;
	int c;
	optind = 1;
	opterr = 0;
	unsigned char seen[CLI_OPT_MAX] = {0};
	while ((c = cli_getopt(argc, argv, opts, seen)) != -1) {
		switch (c) {
		case 's': set = optarg; break;
		case 'f': file = optarg; break;
		case 'm':
			if (cli_double("validate", "--max-mape", optarg, 0.0, 1000.0, &max_mape) != 0)
				return 2;
			break;
		case 'j': json = true; break;
		case 'd': db_path = optarg; break;
		case 'F': fit = optarg; break;
		case 'E':
			if (cli_int("validate", "--max-evals", optarg, 1, 100000, &max_evals) != 0)
				return 2;
			break;
		case 'S': save = true; break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return cli_bad_option("validate", c, argv);
		}
	}
	if (optind < argc)
		return cli_usage("validate", "unexpected argument \"%s\"", argv[optind]);
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
