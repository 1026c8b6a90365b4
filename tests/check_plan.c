/*
 * check_plan.c -- the planner: cases whose best answer is known by hand, determinism across
 * thread counts, published layouts against the winner, exports that parse, bad input.
 */
#include "config.h"
#include "common/pp.h"
#include "planner/plan.h"
#include "planner/plan_int.h"
#include "tests/testutil.h"

#include <cJSON.h>

static char err[1024];

static plan_train_result *
plan(hw_db *db, const char *model_name, const char *system, int gpus, int64_t gb, int jobs, model **mout)
{
	model *m;
	ck_assert_msg(model_load(model_name, &m, err, sizeof err) == 0, "%s", err);
	plan_train_opts o;
	plan_train_opts_init(&o);
	o.gpus = &gpus;
	o.ngpus = 1;
	o.global_batch = gb;
	o.jobs = jobs;
	o.top = 10;
	plan_train_result *r;
	int rc = plan_train(m, db, system, &o, &r, err, sizeof err);
	ck_assert_msg(rc == 0, "plan_train: %s", err);
	if (mout)
		*mout = m;
	else
		model_free(m);
	return r;
}

/* The layout key is printf's "tp%02d pp%03d cp%02d ep%03d dp%05d %s v%d z%d%s mb%03lld %s%s %s"
 * (reports print it, ties rank by it), whatever the values: padded, wider than the padding,
 * zero and negative. */
START_TEST(layout_key_is_the_printf_format)
{
	static const int vals[] = {1, 2, 8, 64, 99, 100, 999, 1000, 12345, 99999, 123456, 0, -1, -42};
	static const char *const sched[] = {"gpipe", "1f1b", "interleaved", "zb-h1"};
	for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
		sim_train_cfg c;
		sim_train_cfg_init(&c);
		c.tp = vals[i];
		c.pp = vals[(i + 1) % 14];
		c.cp = vals[(i + 2) % 14];
		c.ep = vals[(i + 3) % 14];
		c.dp = vals[(i + 4) % 14];
		c.vpp = vals[(i + 5) % 14];
		c.zero = (int)(i % 4);
		c.fsdp = i % 3 == 0;
		c.micro_batch = (int64_t)vals[(i + 6) % 14] * (i == 7 ? 100000 : 1);
		c.schedule = (sim_schedule)(i % 4);
		c.recompute = (sim_recompute)(i % 3);
		c.sequence_parallel = i % 2 == 0;
		c.dtype = i % 2 ? HW_BF16 : HW_FP8;
		char want[256], got[256], small[20];
		snprintf(want, sizeof want, "tp%02d pp%03d cp%02d ep%03d dp%05d %s v%d z%d%s mb%03lld %s%s %s", c.tp, c.pp, c.cp,
			 c.ep, c.dp, sched[c.schedule], c.vpp, c.zero, c.fsdp ? "f" : "", (long long)c.micro_batch,
			 sim_recompute_name(c.recompute), c.sequence_parallel ? " sp" : "", hw_dtype_name(c.dtype));
		plan_key(&c, got, sizeof got);
		ck_assert_str_eq(got, want);
		/* a short buffer gets the key cut, as snprintf cuts it */
		plan_key(&c, small, sizeof small);
		ck_assert_int_eq(strlen(small), sizeof small - 1);
		ck_assert_int_eq(strncmp(small, want, sizeof small - 1), 0);
	}
}
END_TEST

/* A model that fits on one GPU, on GPUs joined only by PCIe: pure data parallelism wins. */
START_TEST(small_model_wants_data_parallelism)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	plan_train_result *r = plan(db, "gpt2-xl", "pcie-l40sx8", 8, 64, 0, NULL);
	const sim_train_cfg *w = plan_train_winner(r);
	ck_assert_ptr_nonnull(w);
	ck_assert_msg(w->tp == 1 && w->pp == 1 && w->dp == 8, "winner tp %d pp %d dp %d", w->tp, w->pp, w->dp);
	plan_train_result_free(r);
	hw_close(db);
}
END_TEST

/* Llama-3-70B cannot fit on one H100 unsharded: every layout returned on 32 shards the model. */
START_TEST(big_model_is_always_sharded)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	plan_train_result *r = plan(db, "llama-3-70b", "dgx-h100", 32, 64, 0, NULL);
	cJSON *doc = plan_train_json(r);
	const cJSON *c;
	int n = 0;
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "counts"), 0), "candidates"))
	{
		const cJSON *cf = cJSON_GetObjectItem(c, "config");
		int tp = (int)cJSON_GetObjectItem(cf, "tp")->valuedouble, pp = (int)cJSON_GetObjectItem(cf, "pp")->valuedouble;
		int zero = (int)cJSON_GetObjectItem(cf, "zero")->valuedouble;
		ck_assert_msg(tp * pp > 1 || zero >= 3, "unsharded layout returned: tp %d pp %d zero %d", tp, pp, zero);
		ck_assert(cJSON_GetObjectItem(c, "peak_bytes")->valuedouble <= cJSON_GetObjectItem(c, "capacity_bytes")->valuedouble);
		n++;
	}
	ck_assert_int_gt(n, 0);
	cJSON_Delete(doc);
	plan_train_result_free(r);
	hw_close(db);
}
END_TEST

/* Same inputs, same ranking, byte for byte, with one thread or two. */
START_TEST(ranking_is_deterministic)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	plan_train_result *a = plan(db, "llama-3-8b", "dgx-h100", 16, 128, 1, NULL);
	plan_train_result *b = plan(db, "llama-3-8b", "dgx-h100", 16, 128, 2, NULL);
	cJSON *ja = plan_train_json(a), *jb = plan_train_json(b);
	char *sa = cJSON_Print(ja), *sb = cJSON_Print(jb);
	ck_assert_str_eq(sa, sb);
	free(sa), free(sb);
	cJSON_Delete(ja), cJSON_Delete(jb);
	plan_train_result_free(a);
	plan_train_result_free(b);
	hw_close(db);
}
END_TEST

/* The published layout of Korthikanti 2022 Table 5 (GPT-3 175B, 64 A100, TP 8 PP 8, micro-batch
 * 1, batch 64, selective recomputation with sequence parallelism) is valid and fits, and the
 * planner's winner is at least as fast when both are simulated. */
START_TEST(winner_beats_published_layout)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	model *m;
	plan_train_result *r = plan(db, "gpt3-175b", "dgx-a100", 64, 64, 0, &m);
	const sim_train_cfg *w = plan_train_winner(r);
	ck_assert_ptr_nonnull(w);
	hw_cost *cost;
	ck_assert_int_eq(hw_cost_new(db, "dgx-a100", &cost, err, sizeof err), 0);
	sim_train_cfg pub;
	sim_train_cfg_init(&pub);
	pub.gpus = 64;
	pub.tp = 8;
	pub.pp = 8;
	pub.micro_batch = 1;
	pub.global_batch = 64;
	pub.recompute = SIM_RECOMPUTE_SELECTIVE;
	pub.sequence_parallel = true;
	sim_train_result *ps, *ws;
	ck_assert_int_eq(sim_train(m, cost, &pub, &ps, err, sizeof err), 0);
	ck_assert(sim_train_metrics(ps)->fits);
	ck_assert_int_eq(sim_train(m, cost, w, &ws, err, sizeof err), 0);
	ck_assert_msg(sim_train_metrics(ws)->step_time_s <= sim_train_metrics(ps)->step_time_s * (1 + 1e-9),
		      "winner %.3f s, published %.3f s", sim_train_metrics(ws)->step_time_s, sim_train_metrics(ps)->step_time_s);
	sim_train_result_free(ps);
	sim_train_result_free(ws);
	hw_cost_free(cost);
	model_free(m);
	plan_train_result_free(r);
	hw_close(db);
}
END_TEST

/* Exports: DeepSpeed's JSON parses and its batch arithmetic holds; Megatron's degrees multiply to
 * the GPU count; what a framework cannot run is refused with the reason. */
START_TEST(exports_parse)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	model *m;
	ck_assert_int_eq(model_load("llama-3-70b", &m, err, sizeof err), 0);
	int gpus = 64;
	plan_train_opts o;
	plan_train_opts_init(&o);
	o.gpus = &gpus, o.ngpus = 1, o.global_batch = 512;
	o.framework = plan_framework_find("deepspeed");
	plan_train_result *r;
	ck_assert_msg(plan_train(m, db, "dgx-h100", &o, &r, err, sizeof err) == 0, "%s", err);
	const sim_train_cfg *w = plan_train_winner(r);
	ck_assert_ptr_nonnull(w);
	hw_system sys;
	ck_assert_int_eq(hw_system_get(db, "dgx-h100", &sys, err, sizeof err), 0);
	plan_export_opts eo;
	plan_export_opts_init(&eo);
	eo.kind = PLAN_EXPORT_DEEPSPEED;
	char *text;
	ck_assert_msg(plan_export_config(m, &sys, w, &eo, &text, err, sizeof err) == 0, "%s", err);
	/* the JSON is the heredoc of the script */
	char *j = strstr(text, "<<'EOF'\n");
	ck_assert_ptr_nonnull(j);
	j += 8;
	char *e = strstr(j, "\nEOF\n");
	ck_assert_ptr_nonnull(e);
	*e = '\0';
	cJSON *ds = cJSON_Parse(j);
	ck_assert_ptr_nonnull(ds);
	double tb = cJSON_GetObjectItem(ds, "train_batch_size")->valuedouble;
	double mb = cJSON_GetObjectItem(ds, "train_micro_batch_size_per_gpu")->valuedouble;
	double ga = cJSON_GetObjectItem(ds, "gradient_accumulation_steps")->valuedouble;
	ck_assert_rel(tb, mb * ga * w->dp, 1e-12);
	ck_assert_int_eq((int)cJSON_GetObjectItem(cJSON_GetObjectItem(ds, "zero_optimization"), "stage")->valuedouble, w->zero);
	cJSON_Delete(ds);
	free(text);
	eo.kind = PLAN_EXPORT_MEGATRON;
	ck_assert_msg(plan_export_config(m, &sys, w, &eo, &text, err, sizeof err) == 0, "%s", err);
	int tp = 0, pp = 0, cp = 1;
	const char *p = strstr(text, "--tensor-model-parallel-size ");
	ck_assert_ptr_nonnull(p);
	tp = atoi(p + strlen("--tensor-model-parallel-size "));
	p = strstr(text, "--pipeline-model-parallel-size ");
	ck_assert_ptr_nonnull(p);
	pp = atoi(p + strlen("--pipeline-model-parallel-size "));
	if ((p = strstr(text, "--context-parallel-size ")) != NULL)
		cp = atoi(p + strlen("--context-parallel-size "));
	ck_assert_int_eq(tp * pp * cp * w->dp, 64);
	free(text);
	eo.kind = PLAN_EXPORT_SLURM;
	ck_assert_int_eq(plan_export_config(m, &sys, w, &eo, &text, err, sizeof err), 0);
	ck_assert(strstr(text, "#SBATCH --nodes=8") != NULL);
	free(text);
	/* a schedule no listed framework ships, and GPipe in Megatron: refused, naming it */
	sim_train_cfg c = *w;
	c.pp = 2, c.dp = w->dp * w->pp / 2, c.schedule = SIM_ZB_H1, c.vpp = 1, c.zero = 1, c.fsdp = false;
	eo.kind = PLAN_EXPORT_MEGATRON;
	ck_assert_int_eq(plan_export_config(m, &sys, &c, &eo, &text, err, sizeof err), PP_EUSAGE);
	ck_assert_msg(strstr(err, "the zb-h1 pipeline schedule") != NULL, "%s", err);
	c.schedule = SIM_GPIPE;
	ck_assert_int_eq(plan_export_config(m, &sys, &c, &eo, &text, err, sizeof err), PP_EUSAGE);
	eo.kind = PLAN_EXPORT_TORCHTITAN;
	c.zero = 0; /* torchtitan replicates (DDP) or shards (FSDP2): no ZeRO-1 */
	ck_assert_msg(plan_export_config(m, &sys, &c, &eo, &text, err, sizeof err) == 0, "%s", err);
	ck_assert(strstr(text, "pipeline_parallel_schedule = \"GPipe\"") != NULL);
	free(text);
	/* a serving deployment that disaggregates: vLLM's export refuses, SGLang's writes both roles */
	cJSON *dep = cJSON_Parse("{\"system\": \"dgx-h100\", \"tp\": 2, \"pp\": 1, \"weights\": \"int4\", "
				 "\"max_num_seqs\": 128, \"max_num_batched_tokens\": 8192, \"kv_cache_dtype\": \"fp8\", "
				 "\"gpu_memory_utilization\": 0.9, \"disaggregation\": \"1:2\", \"replicas\": 6, "
				 "\"prefill\": \"separate\"}");
	ck_assert_int_eq(plan_export_serve(dep, "llama-3-70b", PLAN_ENGINE_VLLM, &text, err, sizeof err), PP_EUSAGE);
	ck_assert_ptr_nonnull(strstr(err, "disaggregates prefill and decode (1:2)"));
	ck_assert_int_eq(plan_export_serve(dep, "llama-3-70b", PLAN_ENGINE_SGLANG, &text, err, sizeof err), 0);
	ck_assert_ptr_nonnull(strstr(text, "--disaggregation-mode prefill"));
	ck_assert_ptr_nonnull(strstr(text, "--disaggregation-mode decode"));
	ck_assert_ptr_nonnull(strstr(text, "--kv-cache-dtype fp8_e4m3"));
	ck_assert_ptr_nonnull(strstr(text, "quantized to that format beforehand")); /* int4 needs an AWQ/GPTQ checkpoint */
	free(text);
	/* chunked context as planned: TensorRT-LLM's flag only when the plan chunked prompts; vLLM V1
	 * always chunks, so a plan of whole prompts is refused there */
	cJSON_ReplaceItemInObject(dep, "disaggregation", cJSON_CreateString("off"));
	cJSON_ReplaceItemInObject(dep, "prefill", cJSON_CreateString("mixed"));
	ck_assert_int_eq(plan_export_serve(dep, "llama-3-70b", PLAN_ENGINE_TRTLLM, &text, err, sizeof err), 0);
	ck_assert_ptr_null(strstr(text, "--enable_chunked_prefill"));
	free(text);
	ck_assert_int_eq(plan_export_serve(dep, "llama-3-70b", PLAN_ENGINE_VLLM, &text, err, sizeof err), PP_EUSAGE);
	ck_assert_ptr_nonnull(strstr(err, "planned with whole-prompt prefill"));
	cJSON_ReplaceItemInObject(dep, "prefill", cJSON_CreateString("chunked"));
	ck_assert_int_eq(plan_export_serve(dep, "llama-3-70b", PLAN_ENGINE_TRTLLM, &text, err, sizeof err), 0);
	ck_assert_ptr_nonnull(strstr(text, "--enable_chunked_prefill"));
	free(text);
	ck_assert_int_eq(plan_export_serve(dep, "llama-3-70b", PLAN_ENGINE_SGLANG, &text, err, sizeof err), PP_EUSAGE);
	cJSON_ReplaceItemInObject(dep, "prefill", cJSON_CreateString("whole"));
	ck_assert_int_eq(plan_export_serve(dep, "llama-3-70b", PLAN_ENGINE_TRTLLM, &text, err, sizeof err), PP_EINPUT);
	cJSON_Delete(dep);
	model_free(m);
	plan_train_result_free(r);
	hw_close(db);
}
END_TEST

START_TEST(bad_input)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	model *m;
	ck_assert_int_eq(model_load("llama-3-70b", &m, err, sizeof err), 0);
	plan_train_opts o;
	plan_train_opts_init(&o);
	int zero = 0;
	o.gpus = &zero;
	o.ngpus = 1;
	o.global_batch = 64;
	plan_train_result *r;
	ck_assert_int_eq(plan_train(m, db, "dgx-h100", &o, &r, err, sizeof err), PP_EUSAGE);
	ck_assert(strstr(err, "--gpus") != NULL);
	ck_assert_int_eq(plan_train(m, db, "no-such", &o, &r, err, sizeof err), PP_EUSAGE);
	/* a batch no layout divides: 7 sequences on a prime number of GPUs (1031) */
	int g = 1031;
	o.gpus = &g;
	o.global_batch = 7;
	ck_assert_int_eq(plan_train(m, db, "dgx-h100", &o, &r, err, sizeof err), 0);
	ck_assert_ptr_null(plan_train_winner(r));
	plan_train_result_free(r);
	/* a model that fits nowhere on 8 GPUs: no winner, and the smallest footprint is reported */
	g = 8;
	o.global_batch = 64;
	ck_assert_int_eq(plan_train(m, db, "dgx-h100", &o, &r, err, sizeof err), 0);
	ck_assert_ptr_null(plan_train_winner(r));
	cJSON *doc = plan_train_json(r);
	const cJSON *cnt = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "counts"), 0);
	ck_assert(cJSON_GetObjectItem(cnt, "smallest_footprint_bytes")->valuedouble >
		  cJSON_GetObjectItem(cnt, "capacity_bytes")->valuedouble);
	cJSON_Delete(doc);
	plan_train_result_free(r);
	model_free(m);
	hw_close(db);
}
END_TEST

/* The cost arithmetic against hand computations, with hardware.md 5.3's worked example: an
 * 8-GPU H100 node bought for $300k and kept 4 years is $300000 / (4 x 8760 h) = $8.5616 per
 * node-hour; at 10.2 kW, PUE 1.3 and $0.09/kWh its energy is 10.2 x 1.3 x 0.09 = $1.1934 per
 * node-hour. */
START_TEST(cost_arithmetic)
{
	ck_assert_rel(plan_rent_usd(2.5, 64, 10.0), 1600.0, 1e-12);
	ck_assert_rel(plan_usd_per_mtok(1600.0, 4e8), 4.0, 1e-12);
	ck_assert(plan_usd_per_mtok(1600.0, 0.0) == 0.0);
	ck_assert_rel(PLAN_HOURS_PER_MONTH, 730.0, 1e-12);
	plan_own own = {300000.0 / 8, 4.0, 10.2, 8, 1.3, 0.09};
	double am, en;
	double tot = plan_own_usd(&own, 8, 1.0, &am, &en);
	ck_assert_rel(am, 8.5616438356, 1e-9);
	ck_assert_rel(en, 1.1934, 1e-12);
	ck_assert_rel(tot, 8.5616438356 + 1.1934, 1e-9);
	/* 64 GPUs (8 nodes) for 90 days: both parts scale with GPUs and hours */
	tot = plan_own_usd(&own, 64, 90 * 24.0, &am, &en);
	ck_assert_rel(am, 8.5616438356 * 8 * 2160, 1e-9);
	ck_assert_rel(en, 1.1934 * 8 * 2160, 1e-12);
	/* no power figure: energy is not counted, amortization still is */
	own.node_power_kw = 0;
	ck_assert_rel(plan_own_usd(&own, 8, 1.0, NULL, &en), 8.5616438356, 1e-9);
	ck_assert(en == 0.0);
}
END_TEST

/* The plan document carries the inputs of a cost table: every price of the system and the
 * ownership terms given in the options. */
START_TEST(plan_json_has_prices)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	model *m;
	ck_assert_msg(model_load("llama-3-8b", &m, err, sizeof err) == 0, "%s", err);
	plan_train_opts o;
	plan_train_opts_init(&o);
	int g = 8;
	o.gpus = &g;
	o.ngpus = 1;
	o.global_batch = 64;
	o.top = 1;
	o.life_years = 5;
	o.pue = 1.2;
	o.usd_per_kwh = 0.12;
	plan_train_result *r;
	ck_assert_int_eq(plan_train(m, db, "dgx-h100", &o, &r, err, sizeof err), 0);
	cJSON *doc = plan_train_json(r);
	const cJSON *own = cJSON_GetObjectItem(doc, "ownership");
	ck_assert(cJSON_GetObjectItem(own, "life_years")->valuedouble == 5);
	ck_assert(cJSON_GetObjectItem(own, "pue")->valuedouble == 1.2);
	ck_assert(cJSON_GetObjectItem(own, "usd_per_kwh")->valuedouble == 0.12);
	ck_assert(cJSON_GetObjectItem(own, "node_power_kw")->valuedouble > 0);
	hw_price *pr;
	size_t np, rent = 0, buy = 0;
	ck_assert_int_eq(hw_prices(db, "dgx-h100", &pr, &np, err, sizeof err), 0);
	for (size_t i = 0; i < np; i++) {
		rent += pr[i].usd_per_gpu_hour > 0;
		buy += pr[i].usd_per_gpu > 0;
	}
	free(pr);
	ck_assert(rent > 0 && buy > 0);
	size_t jr = 0, jb = 0;
	const cJSON *x;
	cJSON_ArrayForEach(x, cJSON_GetObjectItem(doc, "prices"))
	{
		jr += cJSON_GetObjectItem(x, "usd_per_gpu_hour") != NULL;
		jb += cJSON_GetObjectItem(x, "usd_per_gpu") != NULL;
	}
	ck_assert_uint_eq(jr, rent);
	ck_assert_uint_eq(jb, buy);
	cJSON_Delete(doc);
	plan_train_result_free(r);
	model_free(m);
	hw_close(db);
}
END_TEST

/* What each framework runs, checked on configurations whose answer is a documented fact. */
START_TEST(framework_capabilities)
{
	model *m;
	ck_assert_int_eq(model_load("llama-3-8b", &m, err, sizeof err), 0);
	sim_train_cfg c;
	sim_train_cfg_init(&c);
	c.gpus = 16, c.tp = 2, c.pp = 2, c.dp = 4, c.micro_batch = 1, c.global_batch = 64, c.sequence_parallel = true;
	const plan_framework *mg = plan_framework_find("megatron"), *tt = plan_framework_find("torchtitan"),
			     *ds = plan_framework_find("deepspeed"), *lf = plan_framework_find("llm-foundry");
	ck_assert_ptr_nonnull(mg);
	ck_assert_ptr_nonnull(tt);
	ck_assert_ptr_nonnull(ds);
	ck_assert_ptr_nonnull(lf);
	ck_assert_ptr_null(plan_framework_find("megatron-lm")); /* names match in full */
	char why[160];
	ck_assert(plan_framework_runs(mg, m, &c, why, sizeof why));
	ck_assert(plan_framework_runs(tt, m, &c, why, sizeof why));
	ck_assert(plan_framework_runs(ds, m, &c, why, sizeof why));
	ck_assert(!plan_framework_runs(lf, m, &c, why, sizeof why)); /* no tensor parallelism */
	ck_assert_str_eq(why, "tensor parallelism");
	/* ZB-H1 ships in no framework listed (only in its authors' Megatron fork) */
	c.schedule = SIM_ZB_H1;
	for (size_t i = 0; i < plan_framework_count(); i++)
		ck_assert_msg(!plan_framework_runs(plan_framework_at(i), m, &c, why, sizeof why), "%s runs zb-h1",
			      plan_framework_at(i)->name);
	c.schedule = SIM_INTERLEAVED, c.vpp = 2;
	ck_assert(plan_framework_runs(mg, m, &c, NULL, 0));
	ck_assert(!plan_framework_runs(ds, m, &c, why, sizeof why)); /* DeepSpeed's pipeline engine: one schedule */
	ck_assert_str_eq(why, "the interleaved pipeline schedule");
	c.schedule = SIM_1F1B, c.vpp = 1;
	/* torchtitan's TP always shards the norms' sequence (sequence parallelism) */
	c.sequence_parallel = false;
	ck_assert(!plan_framework_runs(tt, m, &c, NULL, 0));
	ck_assert(plan_framework_runs(mg, m, &c, NULL, 0));
	c.sequence_parallel = true;
	/* ring-attention CP: Megatron and torchtitan, not DeepSpeed (Ulysses is another algorithm) */
	c.cp = 2, c.dp = 2;
	ck_assert(plan_framework_runs(mg, m, &c, NULL, 0));
	ck_assert(!plan_framework_runs(ds, m, &c, why, sizeof why));
	c.cp = 1, c.dp = 4;
	/* ZeRO-3: DeepSpeed gathers per layer; torchtitan only as FSDP; not with PP in Megatron */
	c.zero = 3;
	ck_assert(!plan_framework_runs(mg, m, &c, NULL, 0));
	c.pp = 1, c.dp = 8;
	ck_assert(plan_framework_runs(mg, m, &c, NULL, 0));
	ck_assert(plan_framework_runs(ds, m, &c, NULL, 0));
	ck_assert(!plan_framework_runs(tt, m, &c, NULL, 0));
	c.fsdp = true;
	ck_assert(plan_framework_runs(tt, m, &c, NULL, 0));
	ck_assert(!plan_framework_runs(ds, m, &c, NULL, 0));
	/* 126 layers on 16 stages is uneven: DeepSpeed's engine cannot state the split */
	model *big;
	ck_assert_int_eq(model_load("llama-3-405b", &big, err, sizeof err), 0);
	c.fsdp = false, c.zero = 1, c.pp = 16, c.dp = 1, c.tp = 1;
	ck_assert(plan_framework_runs(mg, big, &c, NULL, 0));
	ck_assert(!plan_framework_runs(ds, big, &c, why, sizeof why));
	ck_assert_str_eq(why, "pipeline stages of different layer counts");
	model_free(big);
	model_free(m);
}
END_TEST

/* Pinned dimensions: only the pinned values come back; a pinned value that cannot divide is
 * reported with the rule it breaks. */
START_TEST(pinned_dimensions)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	model *m;
	ck_assert_int_eq(model_load("llama-3-8b", &m, err, sizeof err), 0);
	int gpus = 16;
	plan_train_opts o;
	plan_train_opts_init(&o);
	o.gpus = &gpus, o.ngpus = 1, o.global_batch = 128, o.top = 50, o.simulate = 50;
	o.tp.n = 2, o.tp.v[0] = 2, o.tp.v[1] = 4;
	o.micro_batch.n = 1, o.micro_batch.v[0] = 2;
	o.schedules = 1u << SIM_1F1B;
	o.recomputes = 1u << SIM_RECOMPUTE_FULL;
	plan_train_result *r;
	ck_assert_msg(plan_train(m, db, "dgx-h100", &o, &r, err, sizeof err) == 0, "%s", err);
	cJSON *doc = plan_train_json(r);
	const cJSON *x;
	int n = 0;
	cJSON_ArrayForEach(x, cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "counts"), 0), "candidates"))
	{
		const cJSON *c = cJSON_GetObjectItem(x, "config");
		int tp = cJSON_GetObjectItem(c, "tp")->valueint, pp = cJSON_GetObjectItem(c, "pp")->valueint;
		ck_assert_msg(tp == 2 || tp == 4, "tp %d", tp);
		ck_assert_int_eq(cJSON_GetObjectItem(c, "micro_batch")->valueint, 2);
		ck_assert_str_eq(cJSON_GetObjectItem(c, "recompute")->valuestring, "full");
		if (pp > 1)
			ck_assert_str_eq(cJSON_GetObjectItem(c, "schedule")->valuestring, "1f1b");
		n++;
	}
	ck_assert_int_gt(n, 5);
	cJSON_Delete(doc);
	plan_train_result_free(r);
	/* TP 3 does not divide 16 GPUs (nor 32 heads): nothing to rank, and the reason named */
	plan_train_opts_init(&o);
	o.gpus = &gpus, o.ngpus = 1, o.global_batch = 128;
	o.tp.n = 1, o.tp.v[0] = 3;
	ck_assert_int_eq(plan_train(m, db, "dgx-h100", &o, &r, err, sizeof err), 0);
	ck_assert_ptr_null(plan_train_winner(r));
	doc = plan_train_json(r);
	const char *why = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "counts"), 0), "invalid_reason")->valuestring;
	ck_assert_msg(strstr(why, "multiple of tp x pp x cp") != NULL, "%s", why);
	cJSON_Delete(doc);
	plan_train_result_free(r);
	model_free(m);
	hw_close(db);
}
END_TEST

/* Memory headroom: no layout ranked uses more than the GPU's memory less the headroom, and a
 * headroom of 0 admits layouts a 10% one refuses (Llama-3-8B on 8 GPUs: the winner without
 * headroom uses more than 90% of the 80 GB). */
START_TEST(memory_headroom)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	model *m;
	ck_assert_int_eq(model_load("llama-3-8b", &m, err, sizeof err), 0);
	int gpus = 8;
	double top_peak[2];
	for (int k = 0; k < 2; k++) {
		plan_train_opts o;
		plan_train_opts_init(&o);
		ck_assert_double_eq(o.memory_headroom, PLAN_MEMORY_HEADROOM);
		o.gpus = &gpus, o.ngpus = 1, o.global_batch = 64, o.top = 20;
		o.memory_headroom = k == 0 ? 0.10 : 0.0;
		plan_train_result *r;
		ck_assert_msg(plan_train(m, db, "dgx-h100", &o, &r, err, sizeof err) == 0, "%s", err);
		cJSON *doc = plan_train_json(r);
		const cJSON *x;
		top_peak[k] = 0;
		cJSON_ArrayForEach(x, cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "counts"), 0), "candidates"))
		{
			double peak = cJSON_GetObjectItem(x, "peak_bytes")->valuedouble;
			double cap = cJSON_GetObjectItem(x, "capacity_bytes")->valuedouble;
			ck_assert_double_le(peak, cap * (1.0 - o.memory_headroom));
			ck_assert_double_eq_tol(cJSON_GetObjectItem(x, "memory_limit_bytes")->valuedouble,
						cap * (1.0 - o.memory_headroom), 1.0);
			if (peak > top_peak[k])
				top_peak[k] = peak;
		}
		ck_assert_double_eq(cJSON_GetObjectItem(doc, "memory_headroom")->valuedouble, o.memory_headroom);
		cJSON_Delete(doc);
		plan_train_result_free(r);
	}
	ck_assert_msg(top_peak[1] > top_peak[0], "headroom 0 ranks nothing larger (%.4g vs %.4g)", top_peak[1], top_peak[0]);
	model_free(m);
	hw_close(db);
}
END_TEST

/* The uncertainty of a prediction by its provenance: 9.1% fitted, 33.6% datasheet, mixed
 * linearly. */
/* N+K from an availability, by hand: 10 replicas of 8 GPUs at Llama 3's 1.97e-5 failures per
 * GPU-hour, one hour to repair: x = 1.5787e-4, each down u = x/(1+x) of the time.  No spare:
 * (1-u)^10 = 0.998423 < 0.999; one spare: (1-u)^11 + 11 u (1-u)^10 = 1 - 55 u^2 + ... =
 * 0.9999986.  At 0.9999999 one spare is short (1.4e-6 down) and two reach it (C(12,3) u^3 =
 * 8.6e-10).  A rate of zero needs none; an unreachable target within max_k gives -1. */
START_TEST(spares_for_availability)
{
	double lam = 419.0 / (54.0 * 24.0 * 16384.0), x = lam * 8 * 1.0, u = x / (1 + x), p;
	ck_assert_int_eq(plan_spares(10, 8, lam, 1.0, 0.998, 10, &p), 0);
	ck_assert_double_eq_tol(p, pow(1 - u, 10), 1e-12);
	ck_assert_int_eq(plan_spares(10, 8, lam, 1.0, 0.999, 10, &p), 1);
	ck_assert_double_eq_tol(p, pow(1 - u, 11) + 11 * u * pow(1 - u, 10), 1e-12);
	ck_assert(p > 0.999998 && p < 0.999999);
	ck_assert_int_eq(plan_spares(10, 8, lam, 1.0, 0.9999999, 10, &p), 2);
	ck_assert_int_eq(plan_spares(10, 8, 0.0, 1.0, 0.9999999, 10, &p), 0);
	ck_assert_double_eq(p, 1.0);
	ck_assert_int_eq(plan_spares(10, 8, 0.5, 10.0, 0.999, 3, &p), -1);
}
END_TEST

START_TEST(uncertainty_and_ties)
{
	sim_metrics mt;
	memset(&mt, 0, sizeof mt);
	mt.prov_share[HW_PROV_FITTED] = 1.0;
	ck_assert_double_eq_tol(plan_uncertainty(&mt), 0.091, 1e-12);
	mt.prov_share[HW_PROV_FITTED] = 0.5, mt.prov_share[HW_PROV_DATASHEET] = 0.5;
	ck_assert_double_eq_tol(plan_uncertainty(&mt), 0.5 * 0.091 + 0.5 * 0.336, 1e-12);
	mt.prov_share[HW_PROV_FITTED] = 0, mt.prov_share[HW_PROV_MEASURED] = 0.75, mt.prov_share[HW_PROV_DATASHEET] = 0.25;
	ck_assert_double_eq_tol(plan_uncertainty(&mt), 0.75 * 0.091 + 0.25 * 0.336, 1e-12);
	/* in a plan: a runner-up is a tie exactly when within the winner's band */
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	plan_train_result *r = plan(db, "llama-3-8b", "dgx-h100", 16, 128, 0, NULL);
	cJSON *doc = plan_train_json(r);
	const cJSON *cands = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "counts"), 0), "candidates");
	const cJSON *w = cJSON_GetArrayItem(cands, 0), *x;
	double ws = cJSON_GetObjectItem(w, "step_time_s")->valuedouble, u = cJSON_GetObjectItem(w, "uncertainty")->valuedouble;
	ck_assert(u >= 0.091 - 1e-12 && u <= 0.336 + 1e-12);
	ck_assert(!cJSON_IsTrue(cJSON_GetObjectItem(w, "tie")));
	int i = 0;
	cJSON_ArrayForEach(x, cands)
	{
		if (i++ == 0)
			continue;
		double st = cJSON_GetObjectItem(x, "step_time_s")->valuedouble;
		ck_assert_int_eq(cJSON_IsTrue(cJSON_GetObjectItem(x, "tie")), st - ws <= u * ws);
	}
	cJSON_Delete(doc);
	plan_train_result_free(r);
	hw_close(db);
}
END_TEST

/* The scenario search on a service whose answer is known by hand: an M/D/1 queue (Poisson
 * arrivals, a deterministic service of 0.1 s) has a mean wait W = rho S / (2 (1 - rho)),
 * rho = rate x S (Pollaczek-Khinchine).  Passing is W <= 0.4 s: rho / (2 (1 - rho)) <= 4, so
 * rho <= 8/9 and the highest passing rate is 8.888... requests/s.  Searched in [0, 10] with a
 * tolerance of 1%, the answer is within 1% below it, and never above it. */
typedef struct md1 {
	double service_s, limit_s;
	int calls;
} md1;

static int
md1_pass(void *arg, double rate, bool *ok, char *msg, size_t msglen)
{
	(void)msg;
	(void)msglen;
	md1 *q = arg;
	q->calls++;
	double rho = rate * q->service_s;
	*ok = rho < 1 && rho * q->service_s / (2 * (1 - rho)) <= q->limit_s;
	return 0;
}

static int
failing_pass(void *arg, double rate, bool *ok, char *msg, size_t msglen)
{
	(void)arg;
	(void)rate;
	*ok = false;
	return pp_err(msg, msglen, PP_EINPUT, "the simulation failed");
}

START_TEST(rate_search_by_hand)
{
	md1 q = {0.1, 0.4, 0};
	double rate = 0;
	int steps = 0;
	ck_assert_int_eq(plan_rate_search(md1_pass, &q, 10.0, 0.01, &rate, &steps, err, sizeof err), 0);
	double want = 80.0 / 9.0;
	ck_assert_msg(rate <= want && rate >= want * 0.99, "rate %.6f, want %.6f", rate, want);
	/* hi tried first, then halvings of [0, 10] until the bracket is within 1% of its top
	 * (about 0.089): 10 x 2^-k <= 0.089 at k = 7 */
	ck_assert_int_eq(steps, q.calls);
	ck_assert_int_le(steps, 1 + 8);
	/* a tighter tolerance, a tighter answer */
	q.calls = 0;
	ck_assert_int_eq(plan_rate_search(md1_pass, &q, 10.0, 1e-4, &rate, &steps, err, sizeof err), 0);
	ck_assert_msg(rate <= want && rate >= want * (1 - 1e-4), "rate %.6f", rate);
	/* an upper bound that passes is the answer; a limit missed even unloaded gives 0 */
	ck_assert_int_eq(plan_rate_search(md1_pass, &q, 5.0, 0.01, &rate, &steps, err, sizeof err), 0);
	ck_assert_double_eq(rate, 5.0);
	ck_assert_int_eq(steps, 1);
	q.limit_s = -1;
	ck_assert_int_eq(plan_rate_search(md1_pass, &q, 10.0, 0.01, &rate, &steps, err, sizeof err), 0);
	ck_assert(rate < 0.01 * 10.0);
	/* an error stops the search and is passed on; bad bounds are refused */
	ck_assert_int_eq(plan_rate_search(failing_pass, NULL, 10.0, 0.01, &rate, &steps, err, sizeof err), PP_EINPUT);
	ck_assert_ptr_nonnull(strstr(err, "failed"));
	ck_assert_int_eq(plan_rate_search(md1_pass, &q, 0.0, 0.01, &rate, &steps, err, sizeof err), PP_EUSAGE);
	ck_assert_int_eq(plan_rate_search(md1_pass, &q, 10.0, 1.5, &rate, &steps, err, sizeof err), PP_EUSAGE);
	plan_scenario s;
	ck_assert_int_eq(plan_scenario_parse("interactive", &s), 0);
	ck_assert_int_eq(s, PLAN_SCEN_INTERACTIVE);
	ck_assert_str_eq(plan_scenario_name(PLAN_SCEN_OFFLINE), "offline");
	ck_assert_int_eq(plan_scenario_parse("Server", &s), -1);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("plan");
	TCase *tc = tcase_create("search");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, small_model_wants_data_parallelism);
	tcase_add_test(tc, rate_search_by_hand);
	tcase_add_test(tc, layout_key_is_the_printf_format);
	tcase_add_test(tc, big_model_is_always_sharded);
	tcase_add_test(tc, ranking_is_deterministic);
	tcase_add_test(tc, winner_beats_published_layout);
	tcase_add_test(tc, exports_parse);
	tcase_add_test(tc, bad_input);
	tcase_add_test(tc, cost_arithmetic);
	tcase_add_test(tc, plan_json_has_prices);
	tcase_add_test(tc, framework_capabilities);
	tcase_add_test(tc, pinned_dimensions);
	tcase_add_test(tc, memory_headroom);
	tcase_add_test(tc, uncertainty_and_ties);
	tcase_add_test(tc, spares_for_availability);
	suite_add_tcase(s, tc);
	return test_run(s);
}
