/*
 * cmd_validate.c -- 'paraplan validate': predictions against published measurements.
 */
#include "config.h"
#include "cli/cli.h"
#include "validate/val.h"

#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char about_text[] =
	"Simulates every row of published training measurements that it can express (the bundled\n"
	"validate/data/published-training.csv, and any --data FILE of the same columns: each row\n"
	"with its source), converts the prediction to the row's own metric and FLOP accounting, and\n"
	"prints the error of each row, the MAPE and mean signed error per source, per source family\n"
	"and overall, and the rows skipped with the reason.  Each row runs as the framework its\n"
	"source used (megatron, torchtitan, llm-foundry, ...: docs/profiles.md), or the one its\n"
	"optional \"framework\" column names ('paraplan hw profiles'): a file of your own runs\n"
	"states it there, its \"system\" column the system they ran on ('paraplan hw list'; else a\n"
	"cloud machine its notes name, GCP A3 or an AWS instance type, else the GPU's usual one), and\n"
	"it may leave out the model's dimensions (a catalog name), seq, dp, cp, ep, vpp, zero, table\n"
	"and notes (docs/validation.md).\n"
	"\n"
	"--cross-validate is the honest figure: for each source family in turn, the framework\n"
	"parameters are fitted on every other family and the family left out is predicted with\n"
	"them (the folds' fits on the rows' predictions linearized about the fit on every row;\n"
	"--exact simulates them, a full fit per fold).  --fit fits the framework parameters (the\n"
	"rate its GEMMs and attention reach of the GPU's, the host's time to issue a kernel, the\n"
	"slowdown of compute beside collectives) once per framework over all of its rows on every\n"
	"GPU, starting from the parameters' defaults (the same rows give the same fit), prints them\n"
	"and the report with them, and --save stores them.  With --set serving: the bundled serving\n"
	"rows, or --data FILE (e.g. ../shared/validation/serving-2024-2025.csv), each run under the\n"
	"engine its row names (vllm, vllm-v0, sglang, trtllm: docs/engines.md) or --engine E for all;\n"
	"--fit fits each engine's host time per iteration and GEMM rate over all of its rows on every\n"
	"GPU, and --cross-validate leaves one source family out of that fit at a time and predicts it.\n";

static void
progress(void *arg, const char *line)
{
	(void)arg;
	fprintf(stderr, "validate: %s\n", line);
}

static void
print_summary(const cJSON *doc, const char *key, const char *title)
{
	const char *sh[] = {title, "rows", "MAPE", "mean signed"};
	cli_table *t = cli_table_new(4, sh, "lrrr");
	const cJSON *r;
	cJSON_ArrayForEach(r, cJSON_GetObjectItem(doc, key))
	{
		cli_table_addf(t, 0, "%s", cli_str(r, title));
		cli_table_addf(t, 1, "%.0f", cli_num(r, "rows"));
		cli_table_addf(t, 2, "%.1f%%", 100.0 * cli_num(r, "mape"));
		cli_table_addf(t, 3, "%+.1f%%", 100.0 * cli_num(r, "mean_signed_error"));
	}
	const cJSON *ov = cJSON_GetObjectItem(doc, "overall");
	cli_table_addf(t, 0, "overall");
	cli_table_addf(t, 1, "%.0f", cli_num(ov, "rows"));
	cli_table_addf(t, 2, "%.1f%%", 100.0 * cli_num(ov, "mape"));
	cli_table_addf(t, 3, "%+.1f%%", 100.0 * cli_num(ov, "mean_signed_error"));
	cli_table_print(t, stdout);
	cli_table_free(t);
}

static void
print_report(const cJSON *doc)
{
	const char *h[] = {"line", "source", "model", "GPUs", "tp/pp/dp/vpp/mb", "metric", "measured", "predicted", "error"};
	cli_table *t = cli_table_new(9, h, "rllrllrrr");
	const cJSON *r;
	cJSON_ArrayForEach(r, cJSON_GetObjectItem(doc, "rows"))
	{
		const cJSON *c = cJSON_GetObjectItem(r, "config");
		char src[48], metric[48];
		snprintf(src, sizeof src, "%.40s", cli_str(r, "source"));
		snprintf(metric, sizeof metric, "%.40s", cli_str(r, "metric"));
		cli_table_addf(t, 0, "%.0f", cli_num(r, "line"));
		cli_table_addf(t, 1, "%s", src);
		cli_table_addf(t, 2, "%s", cli_str(r, "model"));
		cli_table_addf(t, 3, "%.0f", cli_num(c, "gpus"));
		cli_table_addf(t, 4, "%.0f/%.0f/%.0f/%.0f/%.0f", cli_num(c, "tp"), cli_num(c, "pp"), cli_num(c, "dp"), cli_num(c, "vpp"),
			       cli_num(c, "micro_batch"));
		cli_table_addf(t, 5, "%s", metric);
		cli_table_addf(t, 6, "%.4g %s", cli_num(r, "measured"), cli_str(r, "unit"));
		cli_table_addf(t, 7, "%.4g", cli_num(r, "predicted"));
		cli_table_addf(t, 8, "%+.1f%%", 100.0 * cli_num(r, "error"));
	}
	cli_table_print(t, stdout);
	cli_table_free(t);
	printf("\n");
	print_summary(doc, "sources", "source");
	if (cJSON_GetArraySize(cJSON_GetObjectItem(doc, "families")) > 0) {
		printf("\n");
		print_summary(doc, "families", "family");
	}
	if (cJSON_GetArraySize(cJSON_GetObjectItem(doc, "engines")) > 0) {
		printf("\n");
		print_summary(doc, "engines", "engine");
		printf("\n");
		print_summary(doc, "kinds", "kind");
	}
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
	const cJSON *ov = cJSON_GetObjectItem(doc, "overall");
	printf("\n%.0f of %.0f rows predicted (%.1f%%)\n", cli_num(ov, "rows"), cli_num(ov, "rows") + cli_num(ov, "skipped"),
	       100.0 * cli_num(ov, "predicted_share"));
}

/* The files to validate: --data FILE ... ("bundled": the compiled-in rows), read into texts. */
typedef struct inputs {
	val_src src[CLI_STRS_MAX];
	char *owned[CLI_STRS_MAX];
	size_t n;
} inputs;

static void
inputs_free(inputs *in)
{
	for (size_t i = 0; i < in->n; i++)
		free(in->owned[i]);
}

static int
read_inputs(const cli_strs *data, bool serving, inputs *in)
{
	memset(in, 0, sizeof *in);
	static const char *const bundled[] = {"bundled"};
	const char *const *names = data->n > 0 ? data->v : bundled;
	int n = data->n > 0 ? data->n : 1;
	for (int i = 0; i < n; i++) {
		val_src *s = &in->src[in->n];
		if (!strcmp(names[i], "bundled")) {
			s->text = val_data(serving ? "published-serving" : "published-training");
			s->len = strlen(s->text);
			s->origin = serving ? "validate/data/published-serving.csv" : "validate/data/published-training.csv";
		} else {
			char err[1024];
			size_t len;
			int rc = pp_read_text(names[i], 64 << 20, &in->owned[in->n], &len, err, sizeof err);
			if (rc != 0) {
				in->n++;
				inputs_free(in);
				return cli_fail(rc == PP_ENOTFOUND || rc == PP_EIO ? PP_EUSAGE : rc, err);
			}
			s->text = in->owned[in->n];
			s->len = len;
			s->origin = names[i];
		}
		in->n++;
	}
	return 0;
}

/* The coverage of a cross-validation's 80% intervals, and for serving per kind of metric. */
static void
print_intervals(const cJSON *doc)
{
	const cJSON *iv = cJSON_GetObjectItem(doc, "intervals");
	if (iv == NULL)
		return;
	printf("\n80%% intervals (each family's rows against the other families' errors): %.1f%% of "
	       "%.0f measured values inside\n",
	       100.0 * cli_num(iv, "coverage"), cli_num(iv, "rows"));
	static const char *const kinds[] = {"throughput", "ttft", "tpot"};
	for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
		const cJSON *y = cJSON_GetObjectItem(iv, kinds[k]);
		if (y != NULL)
			printf("  %-10s %5.1f%% of %.0f\n", kinds[k], 100.0 * cli_num(y, "coverage"), cli_num(y, "rows"));
	}
}

static int
serving_cmd(hw_db *db, const inputs *in, bool fit, bool save, bool xval, const char *engine, int max_evals, bool json,
	    double max_mape)
{
	char err[1024];
	cJSON *doc = NULL;
	int rc, status = 0;
	if (fit) {
		rc = val_serving_fit(db, in->src, in->n, engine, max_evals, &doc, err, sizeof err);
		if (rc == 0 && save) {
			/* one transaction: two fits saved at once leave one's parameters or the other's,
			 * never a mix (each row alone was its own write) */
			const cJSON *f, *v;
			rc = hw_exec_simple(db, "BEGIN IMMEDIATE", err, sizeof err);
			cJSON_ArrayForEach(f, cJSON_GetObjectItem(doc, "fits"))
			{
				cJSON_ArrayForEach(v, cJSON_GetObjectItem(f, "parameters"))
				{
					if (rc == 0)
						rc = hw_param_set(db, "engine", cli_str(f, "engine"), v->string, v->valuedouble, "fitted",
								  cli_str(f, "method"), cli_str(doc, "data"), 0, err, sizeof err);
				}
			}
			if (rc == 0)
				rc = hw_exec_simple(db, "COMMIT", err, sizeof err);
			else
				hw_exec_simple(db, "ROLLBACK", NULL, 0);
		}
		if (rc != 0)
			status = cli_fail(rc, err);
		else
			cli_print_json(doc, "paraplan.validate-serving-fit/2");
		cJSON_Delete(doc);
		return status;
	}
	if (xval)
		rc = val_serving_cross_validate(db, in->src, in->n, max_evals, &doc, err, sizeof err);
	else
		rc = val_serving(db, in->src, in->n, engine, &doc, err, sizeof err);
	if (rc != 0)
		return cli_fail(rc, err);
	if (json) {
		cli_print_json(doc, xval ? "paraplan.validate-cross/1" : "paraplan.validate/1");
	} else {
		print_report(doc);
		print_intervals(doc);
	}
	double mape = 100.0 * cli_num(cJSON_GetObjectItem(doc, "overall"), "mape");
	if (max_mape >= 0 && (mape > max_mape || cli_num(cJSON_GetObjectItem(doc, "overall"), "rows") == 0)) {
		cli_error("overall MAPE %.1f%% is above --max-mape %.1f%% (or no row was predicted)", mape, max_mape);
		status = 1;
	}
	cJSON_Delete(doc);
	return status;
}

int
cmd_validate(int argc, char **argv)
{
	static const cli_cmd cmd = {"validate",
				    "validate [--set NAME] [--data FILE ...] [--max-mape PERCENT] [--json] [--db FILE]\n"
				    "validate --cross-validate [--exact] [--data FILE ...] [--max-mape PERCENT] [--json]\n"
				    "validate --fit [--save] [--data FILE ...] [--max-evals N]\n"
				    "validate --set serving [--data FILE] [--engine E] [--fit [--save] | --cross-validate]\n",
				    about_text,
				    "  paraplan validate --set korthikanti\n"
				    "  paraplan validate --cross-validate --data bundled \\\n"
				    "      --data ../shared/validation/training-2024-2025.csv\n"};
	int max_evals = 120;
	bool save = false, json = false, fit = false, xval = false, exact = false;
	const char *set = NULL, *db_path = NULL, *engine = NULL;
	cli_strs data = {0}, systems = {0};
	double max_mape = -1.0;
	const cli_opt opts[] = {
		OPT_STR("set", "NAME", &set,
			"only some rows: a source or family (narayanan, korthikanti, dgxc, ...), a framework (megatron, "
			"torchtitan, ...) or a GPU (a100, h100, b200, ...); or serving: the serving rows"),
		OPT_STRS("data", "FILE", &data,
			 "a CSV of the published columns to validate (repeatable; \"bundled\": the compiled-in rows, the "
			 "default)"),
		OPT_SWITCH("cross-validate", &xval, "leave one source family out: fit on the others, predict it"),
		OPT_SWITCH("exact", &exact, "cross-validation: fit each fold by simulation, not on the linearization"),
		OPT_NUM("max-mape", "X", &max_mape, 0.0, 1000.0, "exit 1 when the overall MAPE is above X percent"),
		OPT_JSON(&json),
		OPT_DB(&db_path),
		OPT_SWITCH("fit", &fit, "fit the framework parameters to the rows (serving: the engines' parameters)"),
		OPT_SYSTEMS(&systems),
		OPT_STR("engine", "E", &engine,
			"serving: run every row under engine E (vllm, vllm-v0, sglang, trtllm, generic); with --fit, fit only E"),
		OPT_INT("max-evals", "N", &max_evals, 1, 100000, "at most about N evaluations per fit (default 120)"),
		OPT_SWITCH("save", &save, "store the fitted parameters in the database"),
		OPT_END,
	};
	int st = cli_parse(&cmd, opts, argc, argv, NULL, 0, NULL);
	if (st != CLI_RUN)
		return st;
	if (save && !fit)
		return cli_usage("validate", "--save applies to --fit");
	if (exact && !xval)
		return cli_usage("validate", "--exact applies to --cross-validate");
	if (fit && xval)
		return cli_usage("validate", "--fit and --cross-validate are two runs: the second fits per fold");
	bool serving = set != NULL && !strcmp(set, "serving");
	if (systems.n > 0)
		return cli_usage("validate", "--systems is gone: serving fits engine profiles over every GPU (--engine E)");
	if (!serving && engine != NULL)
		return cli_usage("validate", "--engine applies to --set serving");
	if (serving && xval && engine != NULL)
		return cli_usage("validate", "--cross-validate fits every engine: drop --engine");
	inputs in;
	if ((st = read_inputs(&data, serving, &in)) != 0)
		return st;
	hw_db *db;
	int rc = cli_open_db(db_path, 0, &db);
	if (rc != 0) {
		inputs_free(&in);
		return rc;
	}
	int status = 0;
	if (serving) {
		status = serving_cmd(db, &in, fit, save, xval, engine, max_evals, json, max_mape);
		hw_close(db);
		inputs_free(&in);
		return status;
	}
	char err[1024];
	val_set *s = NULL;
	cJSON *doc = NULL, *fitdoc = NULL;
	rc = val_train_load(db, in.src, in.n, set, true, &s, err, sizeof err);
	if (rc == 0)
		val_set_progress(s, progress, NULL);
	if (rc == 0 && fit)
		rc = val_train_fit(s, max_evals, &fitdoc, err, sizeof err);
	if (rc == 0 && fit && save)
		rc = val_fit_save(db, fitdoc, err, sizeof err);
	if (rc == 0)
		rc = xval ? val_train_cross_validate(s, max_evals, exact, &doc, err, sizeof err) : ((doc = val_train_report(s)), 0);
	if (rc == 0 && set != NULL && cli_num(cJSON_GetObjectItem(doc, "overall"), "rows") +
						    cli_num(cJSON_GetObjectItem(doc, "overall"), "skipped") == 0) {
		status = cli_usage("validate", "--set \"%s\" selects no rows (a source, family, framework or GPU of the data)",
				   set);
	} else if (rc != 0) {
		status = cli_fail(rc, err);
	} else {
		if (fitdoc != NULL)
			cJSON_AddItemToObject(doc, "fit", fitdoc), fitdoc = NULL;
		if (json) {
			/* validate, validate-fit or validate-cross: the document says which */
			char schema[64];
			snprintf(schema, sizeof schema, "paraplan.%s/1", cli_str(doc, "kind")[0] ? cli_str(doc, "kind") : "validate");
			cli_print_json(doc, schema);
		} else {
			if (xval)
				printf("Cross-validated: each source family predicted with framework parameters fitted on the "
				       "others\n\n");
			print_report(doc);
			print_intervals(doc);
		}
		const cJSON *ov = cJSON_GetObjectItem(doc, "overall");
		double mape = 100.0 * cli_num(ov, "mape");
		if (max_mape >= 0 && (mape > max_mape || cli_num(ov, "rows") == 0)) {
			cli_error("overall MAPE %.1f%% is above --max-mape %.1f%% (or no row was predicted)", mape, max_mape);
			status = 1;
		}
	}
	cJSON_Delete(doc);
	cJSON_Delete(fitdoc);
	val_set_free(s);
	hw_close(db);
	inputs_free(&in);
	return status;
}
