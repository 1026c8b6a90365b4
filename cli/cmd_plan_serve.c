/*
 * cmd_plan_serve.c -- 'paraplan plan serve': the cheapest deployment of a model that serves a
 * request rate within a latency SLO, over systems, TP and PP degrees, weight formats, batch
 * limits and prefill/decode disaggregation.
 */
#include "config.h"
#include "cli/cli.h"
#include "models/model.h"
#include "planner/plan.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

static const char about_text[] =
	"Finds the cheapest deployment of M that serves QPS requests per second within the SLO:\n"
	"for each system (default: dgx-a100, dgx-h100, hgx-h200, dgx-b200), TP and PP degree, weight\n"
	"format, batch limit and prefill/decode disaggregation (1:1 and 1:2, unless\n"
	"--no-disaggregate), the highest rate one unit (a replica, or a prefill:decode group)\n"
	"sustains within the SLO (found by bisection over simulated runs), the units the rate needs\n"
	"(plus K spare replicas with --failures K, K of each kind when disaggregated, so the SLO\n"
	"holds with K replicas down; or, with --availability A, the fewest spares that keep the\n"
	"needed replicas up a share A of the time given a failure rate and a repair time), checked\n"
	"by simulating the whole deployment at the rate.\n"
	"Ranked by dollars per hour at each system's price.\n"
	"DIST as in 'simulate serve' (default prompt 512, output 256 tokens), or a dataset by name:\n"
	"mlperf-llama2-70b, mlperf-llama3.1-405b, mlperf-llama3.1-8b (prompt only),\n"
	"mlperf-mixtral-8x7b, mlperf-deepseek-r1, sharegpt.\n"
	"\n"
	"With --scenario offline|server|interactive, runs an MLPerf Inference scenario on one\n"
	"deployment (--system, --tp, [--pp], [--replicas], [--weights]) instead: Offline issues\n"
	"every request at once, as many as last ten minutes at the rate a first run of --requests\n"
	"reaches, and reports the throughput; Server and Interactive find by bisection\n"
	"over seeded Poisson runs the highest rate whose P99 TTFT and P99 TPOT stay within the\n"
	"limits, to within --tolerance (default 0.01: the answer is at most 1% below the threshold).\n"
	"--dataset NAME sets both lengths and MLPerf's limits for the scenario (loadgen/mlperf.conf);\n"
	"--slo-ttft-p99 and --slo-tpot-p99 override them.\n";

/* The scenario mode: one deployment, one MLPerf scenario. */
static int
run_scenario(const char *model_spec, const char *system, const char *db_path, const char *engine_name,
	     plan_scenario_opts *so, bool weights_given, bool json)
{
	char err[1024];
	model *m;
	int rc = cli_load_model(model_spec, &m, err, sizeof err);
	if (rc != 0)
		return cli_fail(rc == PP_ENOTFOUND ? PP_EUSAGE : rc, err);
	hw_db *db;
	if ((rc = cli_open_db(db_path, 0, &db)) != 0) {
		model_free(m);
		return rc;
	}
	hw_profile *en;
	hw_cost *cost = NULL;
	if ((rc = hw_profile_find(db, HW_SCOPE_ENGINE, engine_name, &en, err, sizeof err)) == 0) {
		sim_engine_from_profile(&so->cfg.engine, en);
		hw_profile_free(en);
		rc = hw_cost_new(db, system, &cost, err, sizeof err);
	}
	if (rc == 0 && !weights_given)
		so->cfg.weights = sim_serve_released_weights(m, &hw_cost_system(cost)->gpu);
	cJSON *doc = NULL;
	if (rc == 0)
		rc = plan_serve_scenario(m, cost, so, &doc, err, sizeof err);
	int status = 0;
	if (rc != 0) {
		status = cli_fail(rc == PP_ENOTFOUND ? PP_EUSAGE : rc, err);
	} else if (json) {
		cli_print_json(doc, PLAN_SCENARIO_SCHEMA);
	} else {
		const cJSON *off = cJSON_GetObjectItem(doc, "offline");
		printf("%s on %s, tp %.0f x pp %.0f, %.0f replica(s): MLPerf %s scenario\n", cli_str(doc, "model"),
		       cli_str(doc, "system"), cli_num(doc, "tp"), cli_num(doc, "pp"), cli_num(doc, "replicas"),
		       cli_str(doc, "scenario"));
		printf("offline (%.0f requests at once): %.4g requests/s, %.4g output tokens/s\n",
		       cli_num(doc, "offline_requests"), cli_num(off, "requests_per_s"), cli_num(off, "output_tokens_per_s"));
		const cJSON *lim = cJSON_GetObjectItem(doc, "limits");
		if (lim != NULL) {
			printf("highest rate within P99 TTFT <= %.0f ms and P99 TPOT <= %.0f ms: %.4g requests/s "
			       "(tolerance %g, %.0f runs)\n",
			       1e3 * cli_num(lim, "ttft_p99_s"), 1e3 * cli_num(lim, "tpot_p99_s"), cli_num(doc, "rate"),
			       cli_num(doc, "tolerance"), cli_num(doc, "evaluations"));
			const cJSON *at = cJSON_GetObjectItem(doc, "at_rate");
			if (at != NULL)
				printf("at that rate: %.4g output tokens/s, P99 TTFT %.1f ms, P99 TPOT %.2f ms\n",
				       cli_num(at, "output_tokens_per_s"), 1e3 * cli_num(at, "ttft_p99_s"),
				       1e3 * cli_num(at, "tpot_p99_s"));
			else
				printf("no rate passes: the limits are missed even unloaded\n");
		}
	}
	cJSON_Delete(doc);
	hw_cost_free(cost);
	hw_close(db);
	model_free(m);
	return status;
}

static void
print_serve_plan(const cJSON *doc)
{
	const cJSON *slo = cJSON_GetObjectItem(doc, "slo");
	printf("%s at %.4g requests/s, P99 TTFT <= %.0f ms, P99 TPOT <= %.0f ms", cli_str(doc, "model"), cli_num(doc, "rate"),
	       1e3 * cli_num(slo, "ttft_p99_s"), 1e3 * cli_num(slo, "tpot_p99_s"));
	if (cli_num(slo, "e2e_p99_s") > 0)
		printf(", P99 end-to-end <= %.0f ms", 1e3 * cli_num(slo, "e2e_p99_s"));
	if (cli_num(doc, "failures_tolerated") > 0)
		printf(", sized for %.0f failed replica(s)", cli_num(doc, "failures_tolerated"));
	const cJSON *av = cJSON_GetObjectItemCaseSensitive(doc, "availability");
	if (av != NULL)
		printf(", spares for %g availability (%.3g failures per GPU-hour, %g h to repair)", cli_num(av, "target"),
		       cli_num(av, "failures_per_gpu_hour"), cli_num(av, "repair_hours"));
	printf("\n%.0f deployments evaluated\n\n", cli_num(doc, "candidates_evaluated"));
	const cJSON *arr = cJSON_GetObjectItem(doc, "deployments");
	if (cJSON_GetArraySize(arr) == 0) {
		printf("no deployment meets the SLO (see --json for why each was rejected)\n");
		return;
	}
	const char *h[] = {"#", "system", "tp", "pp", "experts", "weights", "max seqs", "P:D", "req/s per unit", "replicas",
			   "GPUs", "$/hour", "$/month", "$/M out tok", "P99 TTFT", "P99 TPOT", "headroom"};
	cli_table *t = cli_table_new(17, h, "rlrrllrlrrrrrrrrr");
	const cJSON *x;
	cJSON_ArrayForEach(x, arr)
	{
		char a[32], b[32];
		cli_table_addf(t, 0, "%.0f", cli_num(x, "rank"));
		cli_table_addf(t, 1, "%s", cli_str(x, "system"));
		cli_table_addf(t, 2, "%.0f", cli_num(x, "tp"));
		cli_table_addf(t, 3, "%.0f", cli_num(x, "pp"));
		/* EP over the replica's GPUs, attention data-parallel ("dp") or tensor-parallel */
		double ep = cJSON_IsNumber(cJSON_GetObjectItem(x, "ep")) ? cli_num(x, "ep") : 1;
		if (ep > 1)
			cli_table_addf(t, 4, "EP%.0f%s", ep, cJSON_IsTrue(cJSON_GetObjectItem(x, "attention_dp")) ? " dp-attn" : "");
		else
			cli_table_addf(t, 4, "-");
		cli_table_addf(t, 5, "%s", cli_str(x, "weights"));
		cli_table_addf(t, 6, "%.0f", cli_num(x, "max_num_seqs"));
		cli_table_addf(t, 7, "%s", strcmp(cli_str(x, "disaggregation"), "off") ? cli_str(x, "disaggregation") : "-");
		const cJSON *iv = cJSON_GetObjectItem(x, "capacity_per_unit_interval");
		double cap = cli_num(x, "capacity_per_unit");
		if (cJSON_GetArraySize(iv) == 2 && cap > 0)
			/* the 80% interval as its half width, relative (docs/validation.md) */
			cli_table_addf(t, 8, "%.3g \u00b1%.0f%%", cap,
				       50.0 * (cJSON_GetArrayItem(iv, 1)->valuedouble - cJSON_GetArrayItem(iv, 0)->valuedouble) / cap);
		else
			cli_table_addf(t, 8, "%.3g", cap);
		if (cli_num(x, "spares") > 0)
			cli_table_addf(t, 9, "%.0f (+%.0f)", cli_num(x, "replicas") - cli_num(x, "spares"), cli_num(x, "spares"));
		else
			cli_table_addf(t, 9, "%.0f", cli_num(x, "replicas"));
		cli_table_addf(t, 10, "%.0f", cli_num(x, "gpus"));
		cli_table_addf(t, 11, "%.2f", cli_num(x, "usd_per_hour"));
		cli_table_addf(t, 12, "%.0f", cli_num(x, "usd_per_month"));
		cli_table_addf(t, 13, "%.3f", cli_num(x, "usd_per_million_output_tokens"));
		cli_table_addf(t, 14, "%s", cli_seconds(cli_num(x, "ttft_p99_s"), a, sizeof a));
		cli_table_addf(t, 15, "%s", cli_seconds(cli_num(x, "tpot_p99_s"), b, sizeof b));
		cli_table_addf(t, 16, "%+.0f%%", 100.0 * cli_num(x, "headroom"));
	}
	cli_table_print(t, stdout);
	cli_table_free(t);
}

int
cmd_plan_serve(int argc, char **argv)
{
	static const cli_cmd cmd = {
		"plan serve",
		"plan serve --model M --rate QPS --slo-ttft-p99 MS --slo-tpot-p99 MS [OPTIONS]\n"
		"plan serve --model M --system S --tp T --scenario offline|server|interactive [--dataset NAME]\n"
		"           [--replicas R] [--tolerance F] [OPTIONS]\n",
		about_text,
		"  paraplan plan serve --model llama-3-70b --rate 100 --slo-ttft-p99 500 --slo-tpot-p99 50 \\\n"
		"      --systems dgx-h100,hgx-h200 --weights bf16,int4\n"
		"  paraplan plan serve --model llama-3-8b --system dgx-h100 --tp 1 --scenario server \\\n"
		"      --dataset mlperf-llama3.1-8b --output-len 128\n"};
	plan_serve_opts o;
	plan_serve_opts_init(&o);
	const char *model_spec = NULL, *db_path = NULL, *system = NULL;
	cli_strs systems = {0}, weights = {0};
	const char *export_s = NULL, *out_path = NULL, *engine_name = HW_DEFAULT_ENGINE;
	bool json = false;
	int spec = SIM_SPEC_OFF, chunked = SIM_CHUNKED_ENGINE;
	char err[1024];
	const char *scenario_s = NULL, *dataset_s = NULL;
	plan_scenario_opts so;
	plan_scenario_opts_init(&so);
	const cli_opt opts[] = {
		OPT_MODEL(&model_spec),
		OPT_NUM("rate", "QPS", &o.rate, 1e-6, 1e7, "requests per second to serve"),
		OPT_MS("slo-ttft-p99", "MS", &o.slo_ttft_s, 0.001, 1e9, "SLO on the P99 time to first token, ms"),
		OPT_MS("slo-tpot-p99", "MS", &o.slo_tpot_s, 0.001, 1e9, "SLO on the P99 time per output token, ms"),
		OPT_MS("slo-e2e-p99", "MS", &o.slo_e2e_s, 0.001, 1e9, "SLO on the P99 end-to-end latency, ms"),
		OPT_SYSTEMS(&systems),
		OPT_STR("system", "S", &system, "one system: the same as --systems S"),
		OPT_LIST("weights", "LIST", &weights,
			 "weight formats to try, of bf16, fp8, fp4 (NVFP4 experts, Blackwell), int8, int4 (default: as the "
			 "model is published, on each system's GPU)"),
		OPT_STR("engine", "E", &engine_name,
			"the serving engine every deployment runs: vllm (default; with --export, the exported one), "
			"vllm-v0, sglang, trtllm, generic"),
		OPT_DIST("prompt-len", "DIST", &o.prompt, "prompt tokens (default 512)"),
		OPT_DIST("output-len", "DIST", &o.output, "output tokens (default 256)"),
		OPT_SERVE_FEATURES(&o.prefix_hit, &spec, &o.spec_tokens, &o.spec_accept),
		OPT_CHUNKED(&chunked),
		OPT_INT("failures", "K", &o.failures, 0, 1000, "spare replicas so that the SLO holds with K down"),
		OPT_NUM("availability", "A", &o.availability, 0.5, 0.999999999,
			"instead of --failures: the fewest spares that keep the SLO's replicas up this share of the "
			"time (e.g. 0.999), from the failure rate and the repair time"),
		OPT_NUM("failure-rate", "R", &o.failures_per_gpu_hour, 0, 1,
			"with --availability: failures per GPU-hour (default Llama 3's 1.97e-5)"),
		OPT_NUM("repair-hours", "H", &o.repair_hours, 0, 1e4,
			"with --availability: mean hours to bring a failed replica back (default 1, an assumption)"),
		OPT_NUM("duration", "S", &o.duration_s, 1, 1e6, "simulated seconds per evaluation"),
		OPT_INT("top", "K", &o.top, 1, 1000, "deployments shown"),
		OPT_NEGATE("no-disaggregate", &o.disaggregate, "do not try prefill/decode disaggregation"),
		OPT_INT("jobs", "N", &o.jobs, 1, 256, "threads (default: all cores)"),
		OPT_I64("seed", "N", (int64_t *)&o.seed, 0, SEED_MAX, "random seed (0 to 2^53, exact in the JSON output)"),
		OPT_STR("export", "ENGINE", &export_s,
			"print the serve command of the cheapest deployment's replica: vllm, sglang or trtllm (TP, PP, "
			"weight quantization, KV-cache dtype, batch limits)"),
		OPT_OUT("out", "FILE", &out_path, "with --export: write it to FILE (atomically) and print the table"),
		OPT_STR("scenario", "S", &scenario_s, "offline, server or interactive: an MLPerf scenario on one deployment"),
		OPT_STR("dataset", "NAME", &dataset_s, "with --scenario: the dataset's lengths and MLPerf's limits"),
		OPT_INT("tp", "T", &so.cfg.tp, 1, 1024, "with --scenario: tensor-parallel degree of a replica"),
		OPT_INT("pp", "P", &so.cfg.pp, 1, 1024, "with --scenario: pipeline stages of a replica"),
		OPT_INT("replicas", "R", &so.cfg.replicas, 1, 100000, "with --scenario: replicas behind the router"),
		OPT_NUM("tolerance", "F", &so.tolerance, 1e-4, 0.5, "with --scenario: the rate search's relative tolerance"),
		OPT_I64("requests", "N", &so.offline_requests, 1, 1e7, "with --scenario: the Offline run's requests at least (it issues 600 s of them)"),
		OPT_JSON(&json),
		OPT_DB(&db_path),
		OPT_END,
	};
	int st = cli_parse(&cmd, opts, argc, argv, NULL, 0, NULL);
	if (st != CLI_RUN)
		return st;
	o.spec = (sim_spec_method)spec;
	o.chunked = (sim_chunked)chunked;
	if ((st = cli_spec_check("plan serve", opts, spec)) != 0)
		return st;
	static const char *const deployment_only[] = {"tp", "pp", "replicas", "tolerance", "requests", "dataset", NULL};
	if (scenario_s == NULL) {
		for (int i = 0; deployment_only[i]; i++)
			if (cli_given(opts, deployment_only[i]))
				return cli_usage("plan serve", "--%s applies to --scenario", deployment_only[i]);
	} else {
		if (plan_scenario_parse(scenario_s, &so.scenario) != 0)
			return cli_usage("plan serve", "--scenario must be offline, server or interactive, got \"%s\"", scenario_s);
		static const char *const search_only[] = {"rate", "systems", "failures", "availability", "failure-rate",
							  "repair-hours", "top", "export", "out", "slo-e2e-p99", NULL};
		for (int i = 0; search_only[i]; i++)
			if (cli_given(opts, search_only[i]))
				return cli_usage("plan serve", "--%s does not apply to --scenario (one deployment; the rate is "
							       "searched for)", search_only[i]);
		if (model_spec == NULL)
			return cli_usage("plan serve", "--model is required");
		if (system == NULL)
			return cli_usage("plan serve", "--scenario needs --system S (one deployment)");
		if (!cli_given(opts, "tp"))
			return cli_usage("plan serve", "--scenario needs --tp T (one deployment)");
		if (weights.n > 1)
			return cli_usage("plan serve", "--weights: --scenario takes one weight format");
		if (weights.n == 1 && (hw_dtype_parse(weights.v[0], &so.cfg.weights) != 0 ||
				       (so.cfg.weights != HW_BF16 && so.cfg.weights != HW_FP8 && so.cfg.weights != HW_FP4 &&
					so.cfg.weights != HW_INT8 && so.cfg.weights != HW_INT4)))
			return cli_usage("plan serve", "--weights must be bf16, fp8, fp4, int8 or int4, got \"%s\"",
					 weights.v[0]);
		so.cfg.prompt = o.prompt;
		so.cfg.output = o.output;
		so.cfg.seed = o.seed;
		so.cfg.prefix_hit = o.prefix_hit;
		so.cfg.spec = o.spec;
		so.cfg.spec_tokens = o.spec_tokens;
		so.cfg.spec_accept = o.spec_accept;
		so.cfg.chunked = o.chunked;
		if (cli_given(opts, "duration"))
			so.duration_s = o.duration_s;
		so.ttft_p99_s = o.slo_ttft_s;
		so.tpot_p99_s = o.slo_tpot_s;
		if (dataset_s != NULL) {
			const sim_dataset *d = sim_dataset_find(dataset_s);
			if (d == NULL)
				return cli_usage("plan serve", "--dataset: unknown dataset \"%s\" (see --help)", dataset_s);
			if (!cli_given(opts, "prompt-len") && sim_dataset_dist(d, false, &so.cfg.prompt, err, sizeof err) != 0)
				return cli_usage("plan serve", "--dataset: %s", err);
			if (!cli_given(opts, "output-len") && sim_dataset_dist(d, true, &so.cfg.output, err, sizeof err) != 0)
				return cli_usage("plan serve", "--dataset: %s; give --output-len", err);
			double t = so.scenario == PLAN_SCEN_INTERACTIVE ? d->interactive_ttft_ms : d->server_ttft_ms;
			double p = so.scenario == PLAN_SCEN_INTERACTIVE ? d->interactive_tpot_ms : d->server_tpot_ms;
			if (!cli_given(opts, "slo-ttft-p99"))
				so.ttft_p99_s = t / 1e3;
			if (!cli_given(opts, "slo-tpot-p99"))
				so.tpot_p99_s = p / 1e3;
		}
		if (so.scenario != PLAN_SCEN_OFFLINE && (!(so.ttft_p99_s > 0) || !(so.tpot_p99_s > 0)))
			return cli_usage("plan serve", "--scenario %s needs --slo-ttft-p99 and --slo-tpot-p99, or a --dataset "
						       "with MLPerf limits for it", scenario_s);
		return run_scenario(model_spec, system, db_path, engine_name, &so, weights.n == 1, json);
	}
	plan_engine engine = PLAN_ENGINE_VLLM;
	if (export_s != NULL && plan_engine_parse(export_s, &engine) != 0)
		return cli_usage("plan serve", "--export must be vllm, sglang or trtllm, got \"%s\"", export_s);
	if (out_path != NULL && export_s == NULL)
		return cli_usage("plan serve", "--out applies to --export");
	/* the deployments are simulated as the engine they are exported to, unless --engine says */
	if (export_s != NULL && !cli_given(opts, "engine"))
		engine_name = export_s;
	if (system != NULL) {
		if (systems.n > 0)
			return cli_usage("plan serve", "give --system S or --systems S1,S2,..., not both");
		systems.v[systems.n++] = system;
	}
	if (model_spec == NULL)
		return cli_usage("plan serve", "--model is required");
	if (cli_given(opts, "availability") && cli_given(opts, "failures"))
		return cli_usage("plan serve", "give --failures K or --availability A, not both");
	if ((cli_given(opts, "failure-rate") || cli_given(opts, "repair-hours")) && !cli_given(opts, "availability"))
		return cli_usage("plan serve", "--failure-rate and --repair-hours apply to --availability");
	if (!(o.rate > 0))
		return cli_usage("plan serve", "--rate is required (requests per second)");
	if (!(o.slo_ttft_s > 0) || !(o.slo_tpot_s > 0))
		return cli_usage("plan serve", "--slo-ttft-p99 and --slo-tpot-p99 are required (milliseconds)");
	const char *defaults[] = {"dgx-a100", "dgx-h100", "hgx-h200", "dgx-b200"};
	const char *list[32];
	size_t nl = 0;
	if (systems.n > 0) {
		for (int i = 0; i < systems.n && nl < 32; i++)
			list[nl++] = systems.v[i];
	} else {
		for (size_t i = 0; i < 4; i++)
			list[nl++] = defaults[i];
	}
	o.systems = list;
	o.nsystems = nl;
	for (int i = 0; i < weights.n; i++) {
		const char *tok = weights.v[i];
		{
			hw_dtype w;
			if (hw_dtype_parse(tok, &w) != 0 || o.nweights >= 4 ||
			    (w != HW_BF16 && w != HW_FP8 && w != HW_FP4 && w != HW_INT8 && w != HW_INT4))
				return cli_usage("plan serve", "--weights takes up to four of bf16, fp8, fp4, int8, int4; got \"%s\"",
						 tok);
			o.weights[o.nweights++] = w;
		}
	}
	model *m;
	int rc = cli_load_model(model_spec, &m, err, sizeof err);
	if (rc != 0)
		return cli_fail(rc == PP_ENOTFOUND ? PP_EUSAGE : rc, err);
	hw_db *db;
	if ((rc = cli_open_db(db_path, 0, &db)) != 0) {
		model_free(m);
		return rc;
	}
	hw_profile *en;
	if ((rc = hw_profile_find(db, HW_SCOPE_ENGINE, engine_name, &en, err, sizeof err)) != 0) {
		hw_close(db);
		model_free(m);
		return cli_fail(rc, err);
	}
	sim_engine_from_profile(&o.engine, en);
	hw_profile_free(en);
	cli_progress pg;
	cli_progress_init(&pg, "deployments");
	o.stop = cli_sigint_catch();
	o.progress = cli_progress_cb;
	o.progress_arg = &pg;
	cJSON *doc = NULL;
	rc = plan_serve(m, db, &o, &doc, err, sizeof err);
	cli_progress_end(&pg);
	cli_sigint_release();
	int status = 0;
	if (rc != 0) {
		status = cli_fail(rc, err);
	} else {
		const cJSON *best = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "deployments"), 0);
		if (export_s != NULL && best != NULL) {
			char *text = NULL;
			rc = plan_export_serve(best, model_name(m), engine, &text, err, sizeof err);
			if (rc == 0 && out_path != NULL)
				rc = pp_write_file_atomic(out_path, text, strlen(text), err, sizeof err);
			else if (rc == 0)
				fputs(text, stdout);
			free(text);
			if (rc != 0)
				status = cli_fail(rc, err);
		}
		if (export_s == NULL || out_path != NULL)
			json ? cli_print_json(doc, PLAN_SERVE_SCHEMA) : print_serve_plan(doc);
		if (best == NULL) {
			cli_error("no deployment of %s meets the SLO at %.4g requests/s", model_name(m), o.rate);
			status = 1;
		}
	}
	cJSON_Delete(doc);
	hw_close(db);
	model_free(m);
	return status;
}
