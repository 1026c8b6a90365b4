/*
 * check_ft.c -- fine-tuning (sim/finetune.c and what it changes in the training simulator):
 * LoRA and QLoRA memory and FLOPs worked by hand on Llama-2-7B's shapes, packed sequences, and
 * the settings it refuses; goodput under failures (planner/goodput.c): Daly's formulas worked by
 * hand on Llama 3's failure rate, against a Monte Carlo run of the same failure process, and in
 * capacity planning.
 */
#include "config.h"
#include "common/pp.h"
#include "hardware/hw.h"
#include "models/model.h"
#include "planner/plan.h"
#include "sim/sim.h"
#include "tests/testutil.h"

#include <cJSON.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

static char err[1024];

/* Llama-2-7B (models/catalog): 32 layers, h 4096, 32 heads (MHA), SwiGLU width 11008, vocab
 * 32000, untied; 6,738,415,616 parameters. */
#define L7 32.0
#define H7 4096.0
#define F7 11008.0
#define V7 32000.0
#define P7 6738415616.0
/* the linear layers' weights: q, k, v, o (h x h each) and gate, up, down (h x f each) */
#define LIN7 (L7 * (4.0 * H7 * H7 + 3.0 * H7 * F7)) /* 6,476,005,376 */

static void
setup(hw_db **db, hw_system *sys, model **m)
{
	ck_assert_int_eq(hw_open(":memory:", 0, db, err, sizeof err), 0);
	ck_assert_int_eq(hw_system_get(*db, "dgx-a100", sys, err, sizeof err), 0);
	ck_assert_int_eq(model_load("llama-2-7b", m, err, sizeof err), 0);
	ck_assert_rel(model_params(*m), P7, 0.0);
}

static void
one_gpu(sim_train_cfg *c, int64_t seq, int64_t gb)
{
	sim_train_cfg_init(c);
	c->gpus = 1;
	c->micro_batch = 1;
	c->global_batch = gb;
	c->seq = seq;
}

/* LoRA r = 16 on q and v of Llama-2-7B, one A100, bf16, no ZeRO.  Hu et al. 2021 (section 4):
 * an adapter on W (k x n) is A (r x k) and B (n x r), r (k + n) parameters, so q and v of each of
 * the 32 layers add 2 x 16 x (4096 + 4096): 8,388,608 trainable parameters (the familiar 4.2M
 * of r = 8).  Memory per GPU, by hand:
 *   weights    the whole frozen base in bf16 plus the adapters: 2 (6,738,415,616 + 8,388,608) B
 *   grads      the adapters' only, in fp32 (Megatron-LM accumulates bf16 gradients in fp32):
 *              4 x 8,388,608 B = 32 MiB
 *   optimizer  the adapters' fp32 master copy and Adam's two moments: 12 x 8,388,608 B = 96 MiB
 *   activations those of training the same model, plus x A (r values a token, bf16) that each
 *              of the 2 adapted projections of each layer keeps for its backward pass:
 *              + 2 B x 512 tokens x 2 x 16 x 32 layers
 * QLoRA (Dettmers et al. 2023, section 3): the linear layers' weights in NF4 with double
 * quantization, 4 bits + an 8-bit constant per block of 64 + a 32-bit constant per 256 blocks =
 * 4.127 bits; the embedding, head and norms (262,410,240 parameters) stay in bf16.  The memory
 * that the full fine-tuning of the same model needs (16 B a parameter for weights, fp32 grads
 * and Adam) is far beyond one 80 GB GPU; LoRA's fits. */
START_TEST(lora_7b_memory_by_hand)
{
	hw_db *db;
	hw_system sys;
	model *m;
	setup(&db, &sys, &m);
	double A = L7 * 2.0 * 16.0 * (H7 + H7);
	ck_assert_rel(A, 8388608.0, 0.0);

	sim_train_cfg full;
	one_gpu(&full, 512, 8);
	ck_assert_int_eq(sim_train_check(m, &sys, &full, err, sizeof err), 0);
	sim_mem fm;
	sim_train_memory(m, &sys, &full, 0, &fm);
	ck_assert_rel(fm.weights + fm.grads + fm.optimizer, 2.0 * P7 + 4.0 * P7 + 12.0 * P7, 1e-12);
	ck_assert(!fm.fits);

	sim_train_cfg c;
	one_gpu(&c, 512, 8);
	c.lora_rank = 16;
	ck_assert_int_eq(sim_lora_modules_parse("q,v", &c.lora_modules, err, sizeof err), 0);
	ck_assert_int_eq(sim_train_check(m, &sys, &c, err, sizeof err), 0);
	sim_ft_totals tot;
	sim_ft_totals_get(m, &c, &tot);
	ck_assert_rel(tot.trainable, A, 1e-12);
	ck_assert_rel(tot.frozen, P7, 1e-12);
	sim_mem lm;
	sim_train_memory(m, &sys, &c, 0, &lm);
	ck_assert_rel(lm.weights, 2.0 * (P7 + A), 1e-12);
	ck_assert_rel(lm.grads, 4.0 * A, 1e-12);
	ck_assert_rel(lm.grads, 32.0 * 1048576.0, 1e-12);
	ck_assert_rel(lm.optimizer, 96.0 * 1048576.0, 1e-12);
	ck_assert_rel(lm.activations - fm.activations, 2.0 * 512.0 * 2.0 * 16.0 * L7, 1e-9);
	ck_assert(lm.fits);

	c.base_nf4 = true;
	ck_assert_int_eq(sim_train_check(m, &sys, &c, err, sizeof err), 0);
	sim_ft_totals_get(m, &c, &tot);
	ck_assert_rel(tot.quantized, LIN7, 1e-12);
	sim_mem qm;
	sim_train_memory(m, &sys, &c, 0, &qm);
	double nf4 = (4.0 + 8.0 / 64.0 + 32.0 / (64.0 * 256.0)) / 8.0; /* bytes a weight */
	ck_assert_rel(nf4 * 8.0, 4.126953125, 1e-12);
	ck_assert_rel(qm.weights, 2.0 * (P7 - LIN7) + nf4 * LIN7 + 2.0 * A, 1e-12); /* 3.62 GiB */
	ck_assert_rel(qm.grads, lm.grads, 1e-12);
	ck_assert_rel(qm.optimizer, lm.optimizer, 1e-12);
	/* one dequantized weight at a time: the largest, h x f in bf16 */
	ck_assert_rel(qm.workspace - lm.workspace, 2.0 * H7 * F7, 1e-12);
	model_free(m);
	hw_close(db);
}
END_TEST

/* FLOPs with a frozen base.  Training computes per token a forward (2 N for the N weights a
 * token multiplies, plus the attention core a), the input gradients (2 N + 2 a) and the weight
 * gradients (2 N): 6 N + 3 a.  A frozen base skips its weight gradients, 4 N + 3 a; the
 * adapters add their forward and both gradients, 6 FLOPs a parameter.  With N 6,607,077,376
 * (the linear layers and the 4096 x 32000 head) and the attention small at 512 tokens, the
 * frozen base needs (4 + 3a/N) / (6 + 3a/N) of full training's FLOPs: 2/3 and a little more.
 * Asserted on the formula (finetune.c) and on what the simulated kernels executed (kernels.c,
 * an independent path): the simulated step of full training minus LoRA's executes exactly
 * tokens x (2 N - 6 A) FLOPs, whatever the attention kernels count. */
START_TEST(lora_flops_by_hand)
{
	hw_db *db;
	hw_system sys;
	model *m;
	setup(&db, &sys, &m);
	hw_cost *cost;
	ck_assert_int_eq(hw_cost_new(db, "dgx-a100", &cost, err, sizeof err), 0);
	double N = LIN7 + H7 * V7, A = L7 * 2.0 * 16.0 * (H7 + H7), tokens = 8.0 * 512.0;
	sim_train_cfg full, c;
	one_gpu(&full, 512, 8);
	one_gpu(&c, 512, 8);
	c.lora_rank = 16;
	ck_assert_int_eq(sim_lora_modules_parse("q,v", &c.lora_modules, err, sizeof err), 0);
	sim_ft_totals tot;
	sim_ft_totals_get(m, &c, &tot);
	double fullf = model_flops_train_per_token(m, 512);
	ck_assert_rel(tot.flops_per_token, fullf - 2.0 * N + 6.0 * A, 1e-12);
	double ratio = (tot.flops_per_token - 6.0 * A) / fullf;
	ck_assert_msg(ratio > 2.0 / 3.0 && ratio < 2.0 / 3.0 + 0.01, "frozen base / full = %.4f", ratio);

	sim_train_result *rf, *rl;
	ck_assert_msg(sim_train(m, cost, &full, &rf, err, sizeof err) == 0, "%s", err);
	ck_assert_msg(sim_train(m, cost, &c, &rl, err, sizeof err) == 0, "%s", err);
	const sim_metrics *a = sim_train_metrics(rf), *b = sim_train_metrics(rl);
	ck_assert_rel(a->executed_flops - b->executed_flops, tokens * (2.0 * N - 6.0 * A), 1e-9);
	ck_assert_rel(b->model_flops, tokens * tot.flops_per_token, 1e-12);
	/* fewer FLOPs, shorter step: the weight gradients were a third of the GEMM time */
	double st = b->step_time_s / a->step_time_s;
	ck_assert_msg(st > 0.6 && st < 0.75, "LoRA step / full step = %.3f", st);

	/* NF4: the same FLOPs, and before each of the two GEMMs that read a base weight
	 * (forward, input gradient) its dequantization reads 4.127 bits and writes 16 a weight.
	 * At the A100's 2.04 TB/s, the extra time is at least those bytes over the bandwidth
	 * and (memory-bound kernels reach well over half of it) at most twice that. */
	c.base_nf4 = true;
	sim_train_result *rq;
	ck_assert_msg(sim_train(m, cost, &c, &rq, err, sizeof err) == 0, "%s", err);
	const sim_metrics *q = sim_train_metrics(rq);
	ck_assert_rel(q->executed_flops, b->executed_flops, 1e-12);
	double nf4 = (4.0 + 8.0 / 64.0 + 32.0 / (64.0 * 256.0)) / 8.0;
	double bytes = 8.0 * 2.0 * LIN7 * (nf4 + 2.0), floor_s = bytes / (sys.gpu.hbm_gbps * 1e9);
	double extra = q->step_time_s - b->step_time_s;
	ck_assert_msg(extra >= floor_s && extra <= 2.0 * floor_s, "NF4 dequantization %.4f s, bytes / HBM %.4f s", extra,
		      floor_s);
	sim_train_result_free(rf);
	sim_train_result_free(rl);
	sim_train_result_free(rq);
	hw_cost_free(cost);
	model_free(m);
	hw_close(db);
}
END_TEST

/* Packed sequences: samples of 512 tokens packed into 4096-token sequences attend within their
 * sample, so a step of 8 packed sequences executes the FLOPs of a step of 64 sequences of 512
 * (the same tokens, the same GEMMs, the same attention per token), and full SFT counts
 * 3 x forward at 512 tokens. */
START_TEST(packed_sequences_attend_within_samples)
{
	hw_db *db;
	hw_system sys;
	model *m;
	setup(&db, &sys, &m);
	hw_cost *cost;
	ck_assert_int_eq(hw_cost_new(db, "dgx-a100", &cost, err, sizeof err), 0);
	sim_train_cfg packed, short_;
	sim_train_cfg_init(&packed);
	packed.gpus = 8;
	packed.tp = 8;
	packed.micro_batch = 1;
	packed.global_batch = 8;
	packed.seq = 4096;
	packed.sample_len = 512;
	short_ = packed;
	short_.seq = 512;
	short_.sample_len = 0;
	short_.micro_batch = 8;
	short_.global_batch = 64;
	sim_train_result *a, *b;
	ck_assert_msg(sim_train(m, cost, &packed, &a, err, sizeof err) == 0, "%s", err);
	ck_assert_msg(sim_train(m, cost, &short_, &b, err, sizeof err) == 0, "%s", err);
	ck_assert_rel(sim_train_metrics(a)->executed_flops, sim_train_metrics(b)->executed_flops, 1e-9);
	ck_assert_rel(sim_train_metrics(a)->model_flops, 8.0 * 4096.0 * model_flops_train_per_token(m, 512), 1e-12);
	sim_train_result_free(a);
	sim_train_result_free(b);
	hw_cost_free(cost);
	model_free(m);
	hw_close(db);
}
END_TEST

/* Published single-GPU LoRA and Q-LoRA measurements of Qwen-7B and -14B
 * (tests/data/finetune/qwen-profile.csv, from the Qwen README), simulated as they ran: one A100
 * 80 GB, micro-batch 1, 8 micro-batches, LoRA r 64 on every linear layer, full recomputation.
 * Guards (what the model achieves today, not a fit: nothing was tuned to these rows): peak
 * memory within 20% of every row (LoRA and Q-LoRA); LoRA step time within 15% from 1024 tokens
 * up (below, the eager PyTorch/PEFT host overhead the simulator does not model dominates: 0.72 s
 * predicted for 1.2 s measured at 256 tokens).  The errors are printed. */
START_TEST(qwen_published_finetuning)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	hw_system sys;
	ck_assert_int_eq(hw_system_get(db, "dgx-a100", &sys, err, sizeof err), 0);
	hw_cost *cost;
	ck_assert_int_eq(hw_cost_new(db, "dgx-a100", &cost, err, sizeof err), 0);
	hw_profile *fw; /* Hugging Face Transformers with PEFT: the plain PyTorch profile */
	ck_assert_msg(hw_profile_find(db, HW_SCOPE_FRAMEWORK, "pytorch", &fw, err, sizeof err) == 0, "%s", err);
	FILE *f = fopen(test_data("finetune/qwen-profile.csv"), "r");
	ck_assert_ptr_nonnull(f);
	char line[512];
	int rows = 0;
	while (fgets(line, sizeof line, f)) {
		char name[64], method[16];
		long long seq;
		double gb, sit;
		if (line[0] == '#' || sscanf(line, "%63[^,],%15[^,],%lld,%lf,%lf", name, method, &seq, &gb, &sit) != 5)
			continue;
		char path[128];
		snprintf(path, sizeof path, "finetune/%s.json", name);
		model *m;
		ck_assert_msg(model_load(test_data(path), &m, err, sizeof err) == 0, "%s", err);
		sim_train_cfg c;
		sim_train_cfg_init(&c);
		c.gpus = 1;
		c.micro_batch = 1;
		c.global_batch = 8;
		c.seq = seq;
		c.recompute = SIM_RECOMPUTE_FULL;
		c.lora_rank = 64;
		c.base_nf4 = !strcmp(method, "qlora");
		sim_train_cfg_framework(&c, fw);
		sim_train_result *r;
		ck_assert_msg(sim_train(m, cost, &c, &r, err, sizeof err) == 0, "%s", err);
		double mem = sim_train_stage_memory(r, 0)->total / 1e9, st = sim_train_metrics(r)->step_time_s;
		printf("%-9s %-6s %5lld  memory %5.1f GB (measured %5.1f, %+5.1f%%)  step %6.2f s (measured %5.1f, %+5.1f%%)\n",
		       name, method, seq, mem, gb, 100.0 * (mem / gb - 1.0), st, sit, 100.0 * (st / sit - 1.0));
		fflush(stdout);
		ck_assert_msg(fabs(mem / gb - 1.0) <= 0.20, "%s %s %lld: %.1f GB predicted, %.1f measured", name, method, seq, mem,
			      gb);
		if (!c.base_nf4 && seq >= 1024)
			ck_assert_msg(fabs(st / sit - 1.0) <= 0.15, "%s %s %lld: %.2f s predicted, %.1f measured", name, method, seq,
				      st, sit);
		sim_train_result_free(r);
		model_free(m);
		rows++;
	}
	fclose(f);
	ck_assert_int_eq(rows, 24);
	hw_profile_free(fw);
	hw_cost_free(cost);
	hw_close(db);
}
END_TEST

/* What fine-tuning refuses, each with a message naming the flag. */
START_TEST(finetune_bad_settings)
{
	hw_db *db;
	hw_system sys;
	model *m;
	setup(&db, &sys, &m);
	unsigned mask = 0;
	ck_assert_int_eq(sim_lora_modules_parse("q,x", &mask, err, sizeof err), PP_EUSAGE);
	ck_assert_ptr_nonnull(strstr(err, "\"x\""));
	ck_assert_int_eq(sim_lora_modules_parse("", &mask, err, sizeof err), PP_EUSAGE);
	ck_assert_int_eq(sim_lora_modules_parse("attn,gate", &mask, err, sizeof err), 0);
	ck_assert_uint_eq(mask, SIM_LORA_Q | SIM_LORA_K | SIM_LORA_V | SIM_LORA_O | SIM_LORA_GATE);
	sim_train_cfg c;
	one_gpu(&c, 512, 8);
	c.base_nf4 = true; /* without --lora-rank */
	ck_assert_int_eq(sim_train_check(m, &sys, &c, err, sizeof err), PP_EUSAGE);
	ck_assert_ptr_nonnull(strstr(err, "--lora-rank"));
	one_gpu(&c, 512, 8);
	c.lora_rank = 8;
	c.dtype = HW_FP8;
	ck_assert_int_eq(sim_train_check(m, &sys, &c, err, sizeof err), PP_EUSAGE);
	ck_assert_ptr_nonnull(strstr(err, "fp8"));
	one_gpu(&c, 512, 8);
	c.sample_len = 1024; /* longer than the sequence */
	ck_assert_int_eq(sim_train_check(m, &sys, &c, err, sizeof err), PP_EUSAGE);
	ck_assert_ptr_nonnull(strstr(err, "--sample-len"));
	model_free(m);
	hw_close(db);
}
END_TEST

/* ---- goodput ------------------------------------------------------------------------------ */

/* Llama 3's rate on Llama 3's cluster: 419 interruptions in 54 days on 16,384 GPUs is one every
 * 54 x 24 x 3600 / 419 = 11,135.08 s (3.09 h) for the job.  A checkpoint of 120 TB at Llama 3's
 * 2 TB/s takes delta = 60 s to write and as long to read; with the 600 s restart R = 660 s.
 * By hand (a calculator):
 *   Young  sqrt(2 x 60 x 11,135.08) = 1,155.95 s
 *   Daly   x = 60 / 22,270.17 = 0.0026942; 1,155.95 (1 + 0.051906 / 3 + 0.0026942 / 9) - 60
 *          = 1,116.29 s
 *   goodput 1,116.29 / (11,135.08 e^{660/11,135.08} (e^{1,176.29/11,135.08} - 1))
 *          = 1,116.29 / (11,135.08 x 1.061064 x 0.111420) = 0.84797
 * and no interval does better: a grid of half seconds peaks at 1,116.5 s with the same 0.84797. */
START_TEST(daly_by_hand)
{
	plan_failure_opts o;
	plan_failure_opts_init(&o);
	ck_assert_rel(o.failures_per_gpu_hour, 419.0 / (54.0 * 24.0 * 16384.0), 1e-15);
	ck_assert_rel(o.storage_bps_per_gpu * 16384.0, 2e12, 1e-15);
	plan_goodput_result g;
	ck_assert_int_eq(plan_goodput(&o, 16384.0, 1.2e14, &g, err, sizeof err), 0);
	ck_assert_rel(g.mtbf_s, 11135.08, 1e-6);
	ck_assert_rel(g.failures_per_day, 419.0 / 54.0, 1e-12);
	ck_assert_rel(g.write_s, 60.0, 1e-12);
	ck_assert_rel(g.restart_s, 660.0, 1e-12);
	ck_assert_rel(g.young_s, 1155.95, 1e-5);
	ck_assert_rel(g.interval_s, 1116.29, 1e-5);
	ck_assert_rel(g.goodput, 0.84797, 1e-5);
	for (double f = 0.5; f <= 2.0; f += 0.01) /* the optimum is one */
		ck_assert(plan_daly_goodput(f * g.interval_s, 60.0, 660.0, g.mtbf_s) <= g.goodput + 1e-9);
	/* a fixed interval of an hour: 3600 / (11,135.08 x 1.061066 x (e^{3660/11,135.08} - 1)) = 0.78298 */
	o.interval_s = 3600.0;
	ck_assert_int_eq(plan_goodput(&o, 16384.0, 1.2e14, &g, err, sizeof err), 0);
	ck_assert_rel(g.goodput, 0.78298, 1e-4);
	/* no failures: only the checkpoints asked for cost anything */
	o.failures_per_gpu_hour = 0.0;
	ck_assert_int_eq(plan_goodput(&o, 16384.0, 1.2e14, &g, err, sizeof err), 0);
	ck_assert_rel(g.goodput, 3600.0 / 3660.0, 1e-12);
	o.interval_s = 0.0;
	ck_assert_int_eq(plan_goodput(&o, 16384.0, 1.2e14, &g, err, sizeof err), 0);
	ck_assert_rel(g.goodput, 1.0, 0.0);
	/* a checkpoint longer than two MTBFs: Daly checkpoints every M */
	ck_assert_rel(plan_daly_interval(3000.0, 1000.0), 1000.0, 0.0);
	/* bad settings name their option */
	o.failures_per_gpu_hour = -1.0;
	ck_assert_int_eq(plan_goodput(&o, 8.0, 1e9, &g, err, sizeof err), PP_EUSAGE);
	ck_assert_ptr_nonnull(strstr(err, "--failure-rate"));
	plan_failure_opts_init(&o);
	o.storage_bps_per_gpu = 0.0;
	ck_assert_int_eq(plan_goodput(&o, 8.0, 1e9, &g, err, sizeof err), PP_EUSAGE);
	ck_assert_ptr_nonnull(strstr(err, "--checkpoint-gbps"));
}
END_TEST

/* Daly's model against the process it models, run event by event: failures a Poisson process
 * of mean interval M (also during restarts), each segment needs tau + delta seconds without a
 * failure to save tau seconds of work, a failure loses the segment and costs a restart of R
 * that itself starts over when a failure hits it.  Over 200,000 segments the measured goodput
 * is within 0.5% of the formula, at the Llama 3 case and at one where failures are frequent. */
START_TEST(daly_against_monte_carlo)
{
	const double cases[][4] = {{1116.29, 60.0, 660.0, 11135.08}, {600.0, 120.0, 900.0, 1800.0}};
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 18);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		double tau = cases[i][0], delta = cases[i][1], R = cases[i][2], M = cases[i][3];
		double wall = 0.0, work = 0.0;
		for (int seg = 0; seg < 200000;) {
			double f = gsl_ran_exponential(r, M);
			if (f >= tau + delta) {
				wall += tau + delta;
				work += tau;
				seg++;
				continue;
			}
			wall += f;
			for (;;) { /* restart until one completes */
				double f2 = gsl_ran_exponential(r, M);
				if (f2 >= R) {
					wall += R;
					break;
				}
				wall += f2;
			}
		}
		ck_assert_rel(work / wall, plan_daly_goodput(tau, delta, R, M), 0.005);
	}
	gsl_rng_free(r);
}
END_TEST

/* A checkpoint holds the trainable parameters and their Adam state: Llama-2-7B in bf16,
 * 2 + 4 + 4 + 4 = 14 bytes a parameter (94.3 GB); its LoRA r = 16 on q, v only the 8,388,608
 * adapter parameters (117 MB). */
START_TEST(checkpoint_bytes_by_hand)
{
	model *m;
	ck_assert_int_eq(model_load("llama-2-7b", &m, err, sizeof err), 0);
	sim_train_cfg c;
	sim_train_cfg_init(&c);
	ck_assert_rel(plan_checkpoint_bytes(m, &c), 14.0 * P7, 1e-12);
	c.dtype = HW_FP32;
	ck_assert_rel(plan_checkpoint_bytes(m, &c), 12.0 * P7, 1e-12);
	c.dtype = HW_BF16;
	c.lora_rank = 16;
	c.lora_modules = SIM_LORA_Q | SIM_LORA_V;
	ck_assert_rel(plan_checkpoint_bytes(m, &c), 14.0 * 8388608.0, 1e-12);
	model_free(m);
}
END_TEST

/* Capacity planning with failures: the count found must meet the deadline at its goodput
 * (training days / goodput <= days), the days it reports are training days over goodput, it
 * needs at least the GPUs of the failure-free answer, and at an interruption rate a thousand
 * times Llama 3's (an interruption every 3.2 hours on 16 GPUs, goodput about 0.9) with a
 * deadline 2% beyond the failure-free plan's days it needs more GPUs than that plan. */
static cJSON *
capacity(hw_db *db, model *m, double days, double rate_x, bool off, const cJSON **sys)
{
	const char *systems[] = {"dgx-a100"};
	plan_capacity_opts o;
	plan_capacity_opts_init(&o);
	o.tokens = 2e10;
	o.days = days;
	o.global_batch = 512;
	o.seq = 2048;
	o.jobs = 2;
	o.failures.failures_per_gpu_hour *= rate_x;
	o.failures.off = off;
	cJSON *doc;
	ck_assert_msg(plan_capacity(m, db, systems, 1, &o, &doc, err, sizeof err) == 0, "%s", err);
	*sys = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "systems"), 0);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(*sys, "feasible")));
	if (!off) {
		const cJSON *f = cJSON_GetObjectItem(*sys, "failures");
		ck_assert_ptr_nonnull(f);
		double gpus = cJSON_GetObjectItem(*sys, "gpus")->valuedouble;
		double d = cJSON_GetObjectItem(*sys, "days")->valuedouble;
		double train = cJSON_GetObjectItem(f, "training_days")->valuedouble;
		double g = cJSON_GetObjectItem(f, "goodput")->valuedouble;
		ck_assert(g > 0.0 && g < 1.0);
		ck_assert_rel(d, train / g, 1e-12);
		ck_assert(d <= days);
		ck_assert(gpus >= cJSON_GetObjectItem(f, "gpus_without_failures")->valuedouble);
		/* the goodput reported is the formula's for that many GPUs */
		plan_goodput_result pg;
		ck_assert_int_eq(plan_goodput(&o.failures, gpus, cJSON_GetObjectItem(f, "checkpoint_bytes")->valuedouble, &pg,
					      err, sizeof err),
				 0);
		ck_assert_rel(g, pg.goodput, 1e-12);
		ck_assert_rel(cJSON_GetObjectItem(f, "checkpoint_bytes")->valuedouble, 14.0 * model_params(m), 1e-12);
	} else {
		ck_assert_ptr_null(cJSON_GetObjectItem(*sys, "failures"));
	}
	return doc;
}

START_TEST(capacity_counts_failures)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	model *m;
	ck_assert_int_eq(model_load("gpt-1.7b", &m, err, sizeof err), 0);
	const cJSON *x;
	cJSON *free_ = capacity(db, m, 2.0, 1.0, true, &x);
	double gpus0 = cJSON_GetObjectItem(x, "gpus")->valuedouble, days0 = cJSON_GetObjectItem(x, "days")->valuedouble;
	cJSON *a = capacity(db, m, 2.0, 1.0, false, &x); /* Llama 3's rate, slack: the same count */
	ck_assert_rel(cJSON_GetObjectItem(x, "gpus")->valuedouble, gpus0, 0.0);
	cJSON *b = capacity(db, m, days0 * 1.02, 1000.0, false, &x);
	double gpus = cJSON_GetObjectItem(x, "gpus")->valuedouble;
	ck_assert_msg(gpus > gpus0, "1000x Llama 3's failures: %g GPUs, %g without failures", gpus, gpus0);
	ck_assert_rel(cJSON_GetObjectItem(cJSON_GetObjectItem(x, "failures"), "gpus_without_failures")->valuedouble, gpus0, 0.0);
	cJSON_Delete(free_);
	cJSON_Delete(a);
	cJSON_Delete(b);
	model_free(m);
	hw_close(db);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("finetune");
	TCase *tf = tcase_create("finetune");
	tcase_set_timeout(tf, 120);
	tcase_add_test(tf, lora_7b_memory_by_hand);
	tcase_add_test(tf, lora_flops_by_hand);
	tcase_add_test(tf, packed_sequences_attend_within_samples);
	tcase_add_test(tf, finetune_bad_settings);
	tcase_add_test(tf, qwen_published_finetuning);
	suite_add_tcase(s, tf);
	TCase *tg = tcase_create("goodput");
	tcase_set_timeout(tg, 300);
	tcase_add_test(tg, daly_by_hand);
	tcase_add_test(tg, daly_against_monte_carlo);
	tcase_add_test(tg, checkpoint_bytes_by_hand);
	tcase_add_test(tg, capacity_counts_failures);
	suite_add_tcase(s, tg);
	return test_run(s);
}
