/*
 * cmd_hw.c -- 'paraplan hw list|show|profiles|params|export|import|calibrations|diff|validations':
 * the hardware database.
 */
#include "config.h"
#include "cli/cli.h"

#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char about_text[] =
	"The hardware database holds GPUs, systems (node types), prices, calibration runs and\n"
	"fitted cost-model parameters.  It lives in --db FILE, else $PARAPLAN_DB, else\n"
	"$XDG_DATA_HOME/paraplan/hardware.db (~/.local/share/paraplan/hardware.db), and is created\n"
	"from the built-in defaults on first use.\n"
	"\n"
	"  list          GPUs and systems\n"
	"  show NAME     every figure of a GPU or system with its source and whether it is a\n"
	"                datasheet, fitted or measured figure; prices; cost-model parameters\n"
	"  profiles [NAME]  the training-framework and serving-engine profiles; with NAME, every\n"
	"                parameter of that profile with its value, provenance and how it was fitted\n"
	"  params        every cost-model parameter: scope (gpu, system, framework, engine),\n"
	"                default, physical range, unit and meaning\n"
	"  export        the user's data (calibration and import runs with their measurements, fits,\n"
	"                prices, systems and GPUs they defined, replays) as one JSON document\n"
	"  import FILE   add an export to this database: runs get new ids, identical rows are\n"
	"                skipped, a conflicting row or a run already here refuses the whole file\n"
	"  calibrations  calibration and import runs\n"
	"  diff A B      compare the measurements of two runs\n"
	"  validations   replays of plans on GPUs ('paraplan replay'): predicted and measured\n"
	"                step time, the error and every timed step\n";

static const char examples_text[] =
	"  paraplan hw list\n"
	"  paraplan hw show dgx-h100\n"
	"  paraplan hw profiles torchtitan\n"
	"  paraplan hw export --system dgx-h100 --out my-cluster.json\n"
	"  paraplan hw import my-cluster.json --db other.db\n";

static void
print_list(const cJSON *doc)
{
	char a[32], b[32];
	const char *gh[] = {"GPU", "vendor", "arch", "memory", "HBM", "BF16 dense", "FP8 dense"};
	cli_table *t = cli_table_new(7, gh, "lllrrrr");
	const cJSON *g;
	cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(doc, "gpus"))
	{
		cli_table_addf(t, 0, "%s", cli_str(g, "name"));
		cli_table_addf(t, 1, "%s", cli_str(g, "vendor"));
		cli_table_addf(t, 2, "%s", cli_str(g, "arch"));
		cli_table_addf(t, 3, "%s", cli_bytes(cli_num(g, "memory_bytes"), a, sizeof a));
		cli_table_addf(t, 4, "%s", cli_si(cli_num(g, "hbm_gbps") * 1e9, "B/s", b, sizeof b));
		cli_table_addf(t, 5, "%.1f TFLOP/s", cli_num(g, "bf16_tflops"));
		if (cli_num(g, "fp8_tflops") > 0)
			cli_table_addf(t, 6, "%.1f TFLOP/s", cli_num(g, "fp8_tflops"));
		else
			cli_table_addf(t, 6, "-");
	}
	cli_table_print(t, stdout);
	cli_table_free(t);
	putchar('\n');
	const char *sh[] = {"system", "GPU", "GPUs/node", "scale-up (per GPU)", "scale-out", "description"};
	t = cli_table_new(6, sh, "llrlll");
	cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(doc, "systems"))
	{
		cli_table_addf(t, 0, "%s", cli_str(g, "name"));
		cli_table_addf(t, 1, "%s", cli_str(g, "gpu"));
		cli_table_addf(t, 2, "%.0f", cli_num(g, "gpus_per_node"));
		cli_table_addf(t, 3, "%s %.0f GB/s, %.0f-GPU domain", cli_str(g, "scaleup"), cli_num(g, "scaleup_gbps"),
			       cli_num(g, "scaleup_domain"));
		if (cli_num(g, "nics_per_node") > 0)
			cli_table_addf(t, 4, "%.0f x %.0f Gb/s %s", cli_num(g, "nics_per_node"), cli_num(g, "nic_gbit"), cli_str(g, "scaleout"));
		else
			cli_table_addf(t, 4, "none");
		cli_table_addf(t, 5, "%s", cli_str(g, "description"));
	}
	cli_table_print(t, stdout);
	cli_table_free(t);
}

static void
print_figures(const cJSON *arr)
{
	const char *h[] = {"figure", "value", "unit", "origin", "source"};
	cli_table *t = cli_table_new(5, h, "lrlll");
	const cJSON *f;
	cJSON_ArrayForEach(f, arr)
	{
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(f, "value");
		cli_table_addf(t, 0, "%s", cli_str(f, "field"));
		if (cJSON_IsString(v))
			cli_table_addf(t, 1, "%s", v->valuestring);
		else if (v != NULL && v->valuedouble == floor(v->valuedouble) && fabs(v->valuedouble) < 1e15)
			cli_table_addf(t, 1, "%.0f", v->valuedouble);
		else
			cli_table_addf(t, 1, "%.6g", v ? v->valuedouble : 0.0);
		cli_table_addf(t, 2, "%s", cli_str(f, "unit"));
		cli_table_addf(t, 3, "%s%s", cli_str(f, "origin"),
			       !strcmp(cli_str(f, "confidence"), "high") ? "" : !strcmp(cli_str(f, "confidence"), "low") ? " (low confidence)"
														 : " (unverified)");
		cli_table_addf(t, 4, "%s", cli_str(f, "source"));
	}
	cli_table_print(t, stdout);
	cli_table_free(t);
}

static void
print_show(const cJSON *doc)
{
	printf("%s %s\n\n", cli_str(doc, "kind"), cli_str(doc, "name"));
	print_figures(cJSON_GetObjectItemCaseSensitive(doc, "figures"));
	const cJSON *gpu = cJSON_GetObjectItemCaseSensitive(doc, "gpu");
	if (gpu != NULL) {
		printf("\nGPU %s\n\n", cli_str(gpu, "name"));
		print_figures(cJSON_GetObjectItemCaseSensitive(gpu, "figures"));
	}
	const cJSON *prices = cJSON_GetObjectItemCaseSensitive(doc, "prices");
	if (cJSON_GetArraySize(prices) > 0) {
		printf("\nPrices\n\n");
		const char *h[] = {"provider", "kind", "price", "per GPU", "date", "source"};
		cli_table *t = cli_table_new(6, h, "llrrll");
		const cJSON *p;
		cJSON_ArrayForEach(p, prices)
		{
			cli_table_addf(t, 0, "%s", cli_str(p, "provider"));
			cli_table_addf(t, 1, "%s", cli_str(p, "kind"));
			cli_table_addf(t, 2, "$%.2f/%s", cli_num(p, "usd"), cli_str(p, "unit"));
			if (cli_num(p, "usd_per_gpu_hour") > 0)
				cli_table_addf(t, 3, "$%.2f/GPU-h", cli_num(p, "usd_per_gpu_hour"));
			else
				cli_table_addf(t, 3, "$%.0f/GPU", cli_num(p, "usd_per_gpu"));
			cli_table_addf(t, 4, "%s", cli_str(p, "date"));
			cli_table_addf(t, 5, "%s", cli_str(p, "source"));
		}
		cli_table_print(t, stdout);
		cli_table_free(t);
	}
	const cJSON *cm = cJSON_GetObjectItemCaseSensitive(doc, "cost_model");
	const cJSON *params = cm ? cJSON_GetObjectItemCaseSensitive(cm, "parameters")
				 : cJSON_GetObjectItemCaseSensitive(doc, "parameters");
	if (cJSON_GetArraySize(params) > 0) {
		printf("\nCost-model parameters\n\n");
		const char *h[] = {"parameter", "value", "provenance", "how it was obtained"};
		cli_table *t = cli_table_new(4, h, "lrll");
		const cJSON *p;
		cJSON_ArrayForEach(p, params)
		{
			if (cm == NULL && cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(p, "in_use")))
				continue;
			cli_table_addf(t, 0, "%s", cli_str(p, "key"));
			cli_table_addf(t, 1, "%.6g", cli_num(p, "value"));
			cli_table_addf(t, 2, "%s", cm ? cli_str(p, "provenance") : cli_str(p, "origin"));
			cli_table_addf(t, 3, "%s", cli_str(p, "method"));
		}
		cli_table_print(t, stdout);
		cli_table_free(t);
	}
	if (cm != NULL) {
		const cJSON *mc = cJSON_GetObjectItemCaseSensitive(cm, "measured_collectives");
		if (cJSON_GetArraySize(mc) > 0) {
			printf("\nMeasured collectives\n\n");
			const char *h[] = {"op", "ranks", "nodes", "sizes", "max busbw"};
			cli_table *t = cli_table_new(5, h, "lrrrr");
			const cJSON *p;
			cJSON_ArrayForEach(p, mc)
			{
				cli_table_addf(t, 0, "%s", cli_str(p, "op"));
				cli_table_addf(t, 1, "%.0f", cli_num(p, "ranks"));
				cli_table_addf(t, 2, "%.0f", cli_num(p, "nodes"));
				cli_table_addf(t, 3, "%.0f", cli_num(p, "sizes"));
				cli_table_addf(t, 4, "%.1f GB/s", cli_num(p, "max_busbw_gbps"));
			}
			cli_table_print(t, stdout);
			cli_table_free(t);
		}
		printf("\nThe cost model uses: %s.\n", cli_str(cm, "applies"));
	}
	const cJSON *systems = cJSON_GetObjectItemCaseSensitive(doc, "systems");
	if (cJSON_GetArraySize(systems) > 0) {
		printf("\nSystems with this GPU:");
		const cJSON *s;
		cJSON_ArrayForEach(s, systems) printf(" %s", s->valuestring);
		putchar('\n');
	}
}

static void
print_runs(const cJSON *arr)
{
	if (cJSON_GetArraySize(arr) == 0) {
		printf("no calibration or import runs yet ('paraplan calibrate', 'paraplan import nccl-tests')\n");
		return;
	}
	const char *h[] = {"run", "system", "kind", "status", "started", "host", "rows", "note"};
	cli_table *t = cli_table_new(8, h, "rllllrrl");
	const cJSON *r;
	cJSON_ArrayForEach(r, arr)
	{
		cli_table_addf(t, 0, "%.0f", cli_num(r, "id"));
		cli_table_addf(t, 1, "%s", cli_str(r, "system"));
		cli_table_addf(t, 2, "%s", cli_str(r, "kind"));
		cli_table_addf(t, 3, "%s", cli_str(r, "status"));
		cli_table_addf(t, 4, "%s", cli_str(r, "started"));
		cli_table_addf(t, 5, "%s", cli_str(r, "host"));
		cli_table_addf(t, 6, "%.0f", cli_num(r, "collective_rows") + cli_num(r, "gemm_rows") + cli_num(r, "bandwidth_rows"));
		cli_table_addf(t, 7, "%s", cli_str(r, "note"));
	}
	cli_table_print(t, stdout);
	cli_table_free(t);
}

static void
print_validations(const cJSON *arr)
{
	if (cJSON_GetArraySize(arr) == 0) {
		printf("no validation runs yet ('paraplan replay --plan PLAN.json' on GPUs)\n");
		return;
	}
	const char *h[] = {"run", "created", "system", "model", "GPUs", "steps", "predicted", "measured", "error", "host"};
	cli_table *t = cli_table_new(10, h, "rllllrrrrl");
	const cJSON *r;
	cJSON_ArrayForEach(r, arr)
	{
		char a[32], b[32];
		cli_table_addf(t, 0, "%.0f", cli_num(r, "id"));
		cli_table_addf(t, 1, "%s", cli_str(r, "created"));
		cli_table_addf(t, 2, "%s", cli_str(r, "system"));
		cli_table_addf(t, 3, "%s", cli_str(r, "model"));
		cli_table_addf(t, 4, "%.0f", cli_num(r, "gpus"));
		cli_table_addf(t, 5, "%.0f", cli_num(r, "steps"));
		cli_table_addf(t, 6, "%s", cli_seconds(cli_num(r, "predicted_s"), a, sizeof a));
		cli_table_addf(t, 7, "%s", cli_seconds(cli_num(r, "measured_s"), b, sizeof b));
		cli_table_addf(t, 8, "%+.1f%%", 100.0 * cli_num(r, "error"));
		cli_table_addf(t, 9, "%s", cli_str(r, "host"));
	}
	cli_table_print(t, stdout);
	cli_table_free(t);
}

static void
print_diff(const cJSON *doc)
{
	const cJSON *rows = cJSON_GetObjectItemCaseSensitive(doc, "rows");
	if (cJSON_GetArraySize(rows) == 0) {
		printf("runs %.0f and %.0f share no measurements of the same kind and size\n", cli_num(doc, "run_a"),
		       cli_num(doc, "run_b"));
		return;
	}
	const char *h[] = {"kind", "measurement", "run A", "run B", "change"};
	cli_table *t = cli_table_new(5, h, "llrrr");
	const cJSON *r;
	cJSON_ArrayForEach(r, rows)
	{
		const char *unit = !strcmp(cli_str(r, "kind"), "gemm") ? "TFLOP/s" : "GB/s";
		cli_table_addf(t, 0, "%s", cli_str(r, "kind"));
		cli_table_addf(t, 1, "%s", cli_str(r, "what"));
		cli_table_addf(t, 2, "%.2f %s", cli_num(r, "a"), unit);
		cli_table_addf(t, 3, "%.2f %s", cli_num(r, "b"), unit);
		cli_table_addf(t, 4, "%+.1f%%", 100.0 * cli_num(r, "change"));
	}
	cli_table_print(t, stdout);
	cli_table_free(t);
}

/* 'hw export': the bundle of the user's rows (hardware/bundle.c), or with --sql the old SQL
 * dump (for a new, empty database only: it carries row ids). */
static int
do_export(hw_db *db, const char *system, const char *out_path, bool sql_dump, char *err, size_t errlen)
{
	char *text = NULL;
	int rc;
	if (sql_dump) {
		rc = hw_export(db, &text, err, errlen);
	} else {
		cJSON *doc = NULL;
		rc = hw_bundle_export(db, system, &doc, err, errlen);
		if (rc == 0) {
			char *s = cJSON_Print(doc);
			if (s == NULL) {
				rc = pp_err(err, errlen, PP_ENOMEM, "out of memory");
			} else {
				pp_str t = {0};
				pp_str_add(&t, s);
				pp_str_add(&t, "\n");
				free(s);
				text = pp_str_detach(&t);
			}
		}
		cJSON_Delete(doc);
	}
	if (rc == 0) {
		if (out_path != NULL)
			rc = pp_write_file_atomic(out_path, text, strlen(text), err, errlen);
		else
			fputs(text, stdout);
	}
	free(text);
	return rc;
}

/* 'hw import FILE': a bundle into this database, whole or not at all. */
static int
do_import(hw_db *db, const char *path, bool dry_run, bool json, char *err, size_t errlen)
{
	char *text;
	size_t len;
	int rc = pp_read_file(path, (size_t)1 << 30, &text, &len, err, errlen);
	if (rc != 0)
		return rc == PP_ENOTFOUND ? PP_EUSAGE : rc;
	cJSON *doc = cJSON_ParseWithOpts(text, NULL, true);
	free(text);
	if (doc == NULL)
		return pp_err(err, errlen, PP_EINPUT, "%s: not valid JSON (the output of 'paraplan hw export')", path);
	cJSON *sum = NULL;
	rc = hw_bundle_import(db, doc, path, dry_run, &sum, err, errlen);
	cJSON_Delete(doc);
	if (rc != 0)
		return rc;
	if (json)
		cli_print_json(sum, "paraplan.hw-import/1");
	else
		printf("%s %s: %.0f calibration run(s), %.0f validation run(s), %.0f rows%s; %.0f identical rows were here "
		       "already\n",
		       dry_run ? "would import" : "imported", path, cli_num(sum, "runs"), cli_num(sum, "validations"),
		       cli_num(sum, "rows"), dry_run ? " (--dry-run: nothing written)" : "", cli_num(sum, "identical_rows_skipped"));
	cJSON_Delete(sum);
	return 0;
}

/* The registry of parameters (hardware/params.c) as a document: what 'hw params' prints. */
static cJSON *
params_doc(void)
{
	cJSON *arr = cJSON_CreateArray();
	for (int k = 0; k < HW_NPKEYS; k++) {
		const hw_pdef *d = hw_pdef_get((hw_pkey)k);
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "key", d->key);
		cJSON_AddStringToObject(x, "scope", hw_scope_name(d->scope));
		if (d->names != NULL) {
			cJSON_AddStringToObject(x, "default", isnan(d->def) ? "derived" : hw_pdef_choice_name(d, d->def));
			cJSON *c = cJSON_AddArrayToObject(x, "choices");
			for (const char *const *n = d->names; *n != NULL; n++)
				cJSON_AddItemToArray(c, cJSON_CreateString(*n));
		} else {
			if (isnan(d->def))
				cJSON_AddStringToObject(x, "default", "derived");
			else
				cJSON_AddNumberToObject(x, "default", d->def);
			cJSON_AddNumberToObject(x, "min", d->lo);
			cJSON_AddNumberToObject(x, "max", d->hi);
		}
		cJSON_AddStringToObject(x, "unit", d->unit);
		if (d->fallback != NULL)
			cJSON_AddStringToObject(x, "fallback", d->fallback);
		cJSON_AddStringToObject(x, "what", d->what);
		cJSON_AddItemToArray(arr, x);
	}
	return arr;
}

static void
print_params(const cJSON *arr)
{
	const char *h[] = {"parameter", "scope", "default", "range", "unit", "meaning"};
	cli_table *t = cli_table_new(6, h, "llrlll");
	const cJSON *x;
	cJSON_ArrayForEach(x, arr)
	{
		cli_table_addf(t, 0, "%s", cli_str(x, "key"));
		cli_table_addf(t, 1, "%s", cli_str(x, "scope"));
		const cJSON *def = cJSON_GetObjectItemCaseSensitive(x, "default");
		if (cJSON_IsString(def))
			cli_table_addf(t, 2, "%s", def->valuestring);
		else
			cli_table_addf(t, 2, "%g", def->valuedouble);
		const cJSON *ch = cJSON_GetObjectItemCaseSensitive(x, "choices");
		if (ch != NULL) {
			pp_str names = {0};
			const cJSON *c;
			cJSON_ArrayForEach(c, ch)
			{
				pp_str_addf(&names, "%s%s", names.len ? "|" : "", c->valuestring);
			}
			cli_table_addf(t, 3, "%s", names.buf ? names.buf : "");
			pp_str_free(&names);
		} else {
			cli_table_addf(t, 3, "%g to %g", cli_num(x, "min"), cli_num(x, "max"));
		}
		cli_table_addf(t, 4, "%s", cli_str(x, "unit"));
		cli_table_addf(t, 5, "%s", cli_str(x, "what"));
	}
	cli_table_print(t, stdout);
	cli_table_free(t);
}

/* Every profile of both kinds, briefly; or one profile with its parameters. */
static int
profiles_doc(hw_db *db, const char *name, cJSON **out, char *err, size_t errlen)
{
	static const hw_pscope kinds[] = {HW_SCOPE_FRAMEWORK, HW_SCOPE_ENGINE};
	cJSON *arr = cJSON_CreateArray();
	bool found = false;
	int rc = 0;
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0] && rc == 0; i++) {
		char **names = NULL;
		size_t n = 0;
		if ((rc = hw_profile_names(db, kinds[i], &names, &n, err, errlen)) != 0)
			break;
		for (size_t j = 0; j < n && rc == 0; j++) {
			if (name != NULL && strcmp(name, names[j]) != 0)
				continue;
			hw_profile *p;
			if ((rc = hw_profile_load(db, kinds[i], names[j], 0, &p, err, errlen)) != 0)
				break;
			cJSON *d = hw_profile_describe(p);
			hw_profile_free(p);
			if (name == NULL)
				cJSON_DeleteItemFromObjectCaseSensitive(d, "parameters");
			cJSON_AddItemToArray(arr, d);
			found = true;
		}
		free(names);
	}
	if (rc == 0 && name != NULL && !found) {
		char shown[96];
		rc = pp_err(err, errlen, PP_ENOTFOUND,
			    "no framework or engine profile \"%s\" ('paraplan hw profiles' lists them)",
			    pp_printable(name, shown, sizeof shown));
	}
	if (rc != 0) {
		cJSON_Delete(arr);
		return rc;
	}
	*out = arr;
	return 0;
}

static void
print_profiles(const cJSON *arr, bool one)
{
	const cJSON *p;
	if (!one) {
		const char *h[] = {"profile", "kind", "base", "version", "description"};
		cli_table *t = cli_table_new(5, h, "lllll");
		cJSON_ArrayForEach(p, arr)
		{
			cli_table_addf(t, 0, "%s", cli_str(p, "name"));
			cli_table_addf(t, 1, "%s", cli_str(p, "kind"));
			cli_table_addf(t, 2, "%s", cli_str(p, "base"));
			cli_table_addf(t, 3, "%s", cli_str(p, "version"));
			cli_table_addf(t, 4, "%s", cli_str(p, "description"));
		}
		cli_table_print(t, stdout);
		cli_table_free(t);
		return;
	}
	p = cJSON_GetArrayItem(arr, 0);
	printf("%s (%s profile%s%s), %s\n%s\nsource: %s\n\n", cli_str(p, "name"), cli_str(p, "kind"),
	       *cli_str(p, "base") ? ", based on " : "", cli_str(p, "base"), cli_str(p, "version"),
	       cli_str(p, "description"), cli_str(p, "source"));
	const char *h[] = {"parameter", "value", "unit", "provenance", "how it was obtained"};
	cli_table *t = cli_table_new(5, h, "lrlll");
	const cJSON *x;
	cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(p, "parameters"))
	{
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(x, "value");
		cli_table_addf(t, 0, "%s", cli_str(x, "key"));
		if (cJSON_IsString(v))
			cli_table_addf(t, 1, "%s", v->valuestring);
		else if (isnan(v->valuedouble) || !cJSON_IsNumber(v))
			cli_table_addf(t, 1, "-");
		else
			cli_table_addf(t, 1, "%.6g", v->valuedouble);
		cli_table_addf(t, 2, "%s", cli_str(x, "unit"));
		cli_table_addf(t, 3, "%s", cli_str(x, "provenance"));
		cli_table_addf(t, 4, "%s", *cli_str(x, "method") ? cli_str(x, "method") : cli_str(x, "origin"));
	}
	cli_table_print(t, stdout);
	cli_table_free(t);
}

int
cmd_hw(int argc, char **argv)
{
	static const cli_cmd cmd = {"hw",
				    "hw list [--json] [--db FILE]\n"
				    "hw show NAME [--json] [--db FILE]\n"
				    "hw profiles [NAME] [--json] [--db FILE]\n"
				    "hw params [--json]\n"
				    "hw export [--system S] [--out FILE] [--sql] [--db FILE]\n"
				    "hw import FILE [--dry-run] [--json] [--db FILE]\n"
				    "hw calibrations [--json] [--db FILE]\n"
				    "hw diff RUN_A RUN_B [--json] [--db FILE]\n"
				    "hw validations [--json] [--db FILE]\n",
				    about_text, examples_text};
	const char *db_path = NULL, *out_path = NULL, *system = NULL;
	bool json = false, sql_dump = false, dry_run = false;
	const cli_opt opts[] = {
		OPT_DB(&db_path),
		OPT_JSON(&json),
		OPT_OUT("out", "FILE", &out_path, "hw export: write to FILE (atomically) instead of stdout"),
		OPT_STR("system", "S", &system, "hw export: only system S's rows (its runs, parameters, prices, validations)"),
		OPT_SWITCH("sql", &sql_dump,
			   "hw export: the whole user data as SQL with its row ids, to recreate it in a new, empty database "
			   "(it does not merge: use the default JSON and 'hw import' for that)"),
		OPT_SWITCH("dry-run", &dry_run, "hw import: check the file against the database, write nothing"),
		OPT_END,
	};
	char *ops[3];
	int nops, st;
	if ((st = cli_parse(&cmd, opts, argc, argv, ops, 3, &nops)) != CLI_RUN)
		return st;
	if (nops == 0)
		return cli_usage("hw",
				 "missing subcommand (list, show, profiles, params, export, import, calibrations, diff, validations)");
	const char *sub = ops[0];
	int nargs = nops - 1;
	char **args = ops + 1;
	int want = !strcmp(sub, "show") || !strcmp(sub, "import") ? 1 : !strcmp(sub, "diff") ? 2 : 0;
	if (strcmp(sub, "list") && strcmp(sub, "show") && strcmp(sub, "profiles") && strcmp(sub, "params") &&
	    strcmp(sub, "export") && strcmp(sub, "import") && strcmp(sub, "calibrations") && strcmp(sub, "diff") &&
	    strcmp(sub, "validations"))
		return cli_usage("hw",
				 "unknown subcommand \"%s\" (expected list, show, profiles, params, export, import, calibrations, "
				 "diff or validations)",
				 sub);
	if (!strcmp(sub, "profiles") && nargs <= 1)
		want = nargs;
	if (nargs != want)
		return cli_usage("hw", "'hw %s' takes %d argument%s, got %d", sub, want, want == 1 ? "" : "s", nargs);
	bool exporting = !strcmp(sub, "export"), importing = !strcmp(sub, "import");
	if (out_path != NULL && !exporting)
		return cli_usage("hw", "--out applies to 'hw export' only");
	if ((system != NULL || sql_dump) && !exporting)
		return cli_usage("hw", "--system and --sql apply to 'hw export' only");
	if (dry_run && !importing)
		return cli_usage("hw", "--dry-run applies to 'hw import' only");
	if (sql_dump && (json || system != NULL))
		return cli_usage("hw", "--sql writes the whole database as SQL: not with --json or --system");
	long long ra = 0, rb = 0;
	if (want == 2) {
		if (cli_int("hw", "RUN_A", args[0], 1, INT64_MAX, &ra) != 0 || cli_int("hw", "RUN_B", args[1], 1, INT64_MAX, &rb) != 0)
			return 2;
	}

	hw_db *db;
	int rc = cli_open_db(db_path, 0, &db);
	if (rc != 0)
		return rc;
	char err[512] = "";
	cJSON *doc = NULL;
	int status = 0;
	if (!strcmp(sub, "params")) {
		doc = params_doc();
		json ? cli_print_json(doc = cli_wrap("parameters", doc), "paraplan.hw-params/1") : print_params(doc);
	} else if (!strcmp(sub, "profiles")) {
		rc = profiles_doc(db, nargs ? args[0] : NULL, &doc, err, sizeof err);
		if (rc == 0 && json)
			cli_print_json(doc = cli_wrap("profiles", doc), "paraplan.hw-profiles/1");
		else if (rc == 0)
			print_profiles(doc, nargs == 1);
	} else if (!strcmp(sub, "list")) {
		rc = hw_list(db, &doc, err, sizeof err);
		if (rc == 0)
			json ? cli_print_json(doc, "paraplan.hw-list/1") : print_list(doc);
	} else if (!strcmp(sub, "show")) {
		rc = hw_show(db, args[0], &doc, err, sizeof err);
		if (rc == 0)
			json ? cli_print_json(doc, "paraplan.hw-show/1") : print_show(doc);
	} else if (!strcmp(sub, "calibrations")) {
		rc = hw_runs(db, &doc, err, sizeof err);
		if (rc == 0 && json)
			cli_print_json(doc = cli_wrap("runs", doc), "paraplan.hw-calibrations/1");
		else if (rc == 0)
			print_runs(doc);
	} else if (!strcmp(sub, "validations")) {
		rc = hw_validations(db, &doc, err, sizeof err);
		if (rc == 0 && json)
			cli_print_json(doc = cli_wrap("validations", doc), "paraplan.hw-validations/1");
		else if (rc == 0)
			print_validations(doc);
	} else if (!strcmp(sub, "diff")) {
		rc = hw_run_diff(db, ra, rb, &doc, err, sizeof err);
		if (rc == 0)
			json ? cli_print_json(doc, "paraplan.hw-diff/1") : print_diff(doc);
	} else if (importing) {
		rc = do_import(db, args[0], dry_run, json, err, sizeof err);
	} else {
		/* the export is a JSON document (paraplan.hw-export/1), with or without --json */
		rc = do_export(db, system, out_path, sql_dump, err, sizeof err);
	}
	/* an unknown GPU, system or run is a name the user typed wrong: a usage error, as an
	 * unknown model or system is everywhere else */
	if (rc != 0)
		status = cli_fail(rc == PP_ENOTFOUND ? PP_EUSAGE : rc, err);
	cJSON_Delete(doc);
	hw_close(db);
	return status;
}
