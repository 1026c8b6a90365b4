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

/* Exports: DeepSpeed JSON parses and its batch arithmetic holds; Megatron's degrees multiply to
 * the GPU count. */
START_TEST(exports_parse)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	model *m;
	plan_train_result *r = plan(db, "llama-3-70b", "dgx-h100", 64, 512, 0, &m);
	const sim_train_cfg *w = plan_train_winner(r);
	ck_assert_ptr_nonnull(w);
	hw_system sys;
	ck_assert_int_eq(hw_system_get(db, "dgx-h100", &sys, err, sizeof err), 0);
	char *text;
	ck_assert_int_eq(plan_export_config(m, &sys, w, PLAN_EXPORT_DEEPSPEED, &text, err, sizeof err), 0);
	cJSON *ds = cJSON_Parse(text);
	ck_assert_ptr_nonnull(ds);
	double tb = cJSON_GetObjectItem(ds, "train_batch_size")->valuedouble;
	double mb = cJSON_GetObjectItem(ds, "train_micro_batch_size_per_gpu")->valuedouble;
	double ga = cJSON_GetObjectItem(ds, "gradient_accumulation_steps")->valuedouble;
	ck_assert_rel(tb, mb * ga * w->dp, 1e-12);
	ck_assert_int_eq((int)cJSON_GetObjectItem(cJSON_GetObjectItem(ds, "zero_optimization"), "stage")->valuedouble, w->zero);
	cJSON_Delete(ds);
	free(text);
	ck_assert_int_eq(plan_export_config(m, &sys, w, PLAN_EXPORT_MEGATRON, &text, err, sizeof err), 0);
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
	ck_assert_int_eq(plan_export_config(m, &sys, w, PLAN_EXPORT_SLURM, &text, err, sizeof err), 0);
	ck_assert(strstr(text, "#SBATCH --nodes=8") != NULL);
	free(text);
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

int
main(void)
{
	Suite *s = suite_create("plan");
	TCase *tc = tcase_create("search");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, small_model_wants_data_parallelism);
	tcase_add_test(tc, layout_key_is_the_printf_format);
	tcase_add_test(tc, big_model_is_always_sharded);
	tcase_add_test(tc, ranking_is_deterministic);
	tcase_add_test(tc, winner_beats_published_layout);
	tcase_add_test(tc, exports_parse);
	tcase_add_test(tc, bad_input);
	tcase_add_test(tc, cost_arithmetic);
	tcase_add_test(tc, plan_json_has_prices);
	suite_add_tcase(s, tc);
	return test_run(s);
}
