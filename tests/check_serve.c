/*
 * check_serve.c -- the serving simulator on cases worked by hand: KV capacity, the prefill
 * time of a lone request, the decode step of a lone sequence, chunked prefill's iteration
 * count, Little's law, saturation, preemption, the KV hand-over of disaggregation,
 * percentiles, determinism and bad input.
 *
 * The hand computations run on an in-memory database whose cost-model parameters for the
 * H100 are set here to round values (GEMM efficiency 0.75, HBM 0.90, flash attention 0.60,
 * no kernel launch time, 2 ms per iteration), so each expected time is a few lines of
 * arithmetic in the comments.
 */
#include "config.h"
#include "common/pp.h"
#include "sim/sim.h"
#include "tests/testutil.h"
#include "validate/val_int.h"

#include <cJSON.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

static char err[1024];

static hw_db *
h100_db(void)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	static const struct {
		const char *scope, *subject, *key;
		double v;
	} set[] = {
		{"gpu", "h100-sxm", "gemm_eff_bf16", 0.75},   {"gpu", "h100-sxm", "hbm_eff", 0.90},
		{"gpu", "h100-sxm", "attn_flash3_fwd", 0.60}, {"gpu", "h100-sxm", "attn_seq_ramp_fwd", 0.0},
		{"gpu", "h100-sxm", "kernel_launch_us", 0.0}, {"gpu", "h100-sxm", "gemm_k_ramp", 128.0},
	};
	for (size_t i = 0; i < sizeof set / sizeof set[0]; i++)
		ck_assert_msg(hw_param_set(db, set[i].scope, set[i].subject, set[i].key, set[i].v, "user", "test", "test", 0,
					   err, sizeof err) == 0,
			      "%s", err);
	return db;
}

/* The configuration defaults with an engine of round numbers: 2 ms of host time per iteration,
 * in series with the GPU's, no CUDA graphs and no launch cost (the kernels' times alone), a
 * 10 us one-shot all-reduce, the GPU's measured rates. */
static void
cfg_init(sim_serve_cfg *c)
{
	sim_serve_cfg_init(c);
	sim_engine *e = &c->engine;
	e->sched_s = 0.002;
	e->sched_seq_s = 0.0;
	e->launch_s = 0.0;
	e->graph_max = 0;
	e->overlap = false;
	e->sched_steps = 1;
	e->prefill = HW_EN_PREFILL_CHUNKED;
	e->attention = HW_FW_ATTN_FLASH3;
	e->allreduce_us = 10.0;
	e->gemm_scale = e->attn_scale = e->decode_scale = 1.0;
	e->max_num_seqs = 256;
	e->max_batched_tokens = 8192;
}

/* cfg_init for a batch of n requests of fixed lengths, all arriving at once. */
static void
batch_init(sim_serve_cfg *c, double prompt, double output, int64_t n)
{
	cfg_init(c);
	c->arrival = SIM_ARR_BATCH;
	c->prompt.mean = prompt;
	c->output.mean = output;
	c->requests = n;
}

typedef struct fixture {
	hw_db *db;
	hw_cost *cost;
	model *m;
} fixture;

static void
fx_open(fixture *f, const char *model_name)
{
	f->db = h100_db();
	ck_assert_int_eq(hw_cost_new(f->db, "dgx-h100", &f->cost, err, sizeof err), 0);
	ck_assert_msg(model_load(model_name, &f->m, err, sizeof err) == 0, "%s", err);
}

static void
fx_close(fixture *f)
{
	model_free(f->m);
	hw_cost_free(f->cost);
	hw_close(f->db);
}

static sim_serve_result *
serve(fixture *f, const sim_serve_cfg *c)
{
	sim_serve_result *r = NULL;
	int rc = sim_serve(f->m, f->cost, c, &r, err, sizeof err);
	ck_assert_msg(rc == 0, "sim_serve: %s", err);
	return r;
}

/* One request of `prompt` tokens producing `output`, alone. */
static void
lone(sim_serve_cfg *c, int64_t prompt, int64_t output)
{
	cfg_init(c);
	c->arrival = SIM_ARR_BATCH;
	c->requests = 1;
	c->prompt.mean = (double)prompt;
	c->output.mean = (double)output;
}

/* Llama-3-70B, TP 4 on an H100 (vLLM's defaults: 90% of memory, 8192 batched tokens, 256
 * sequences, blocks of 16 tokens):
 *   weights   70,553,706,496 parameters x 2 B / 4 GPUs             = 35,276,853,248 B
 *   activations 8192 x (4 x 8192 + 3 x 28672/4) x 2 B              =    889,192,448 B
 *             + logits 256 x 128256/4 x 4 B                        =     32,833,536 B
 *   reserve   1 GiB                                                =  1,073,741,824 B
 *   KV per token per GPU: 2 (K, V) x 8/4 heads x 128 x 80 layers x 2 B = 81,920 B */
START_TEST(kv_capacity_by_hand)
{
	fixture f;
	fx_open(&f, "llama-3-70b");
	ck_assert_double_eq(model_params(f.m), 70553706496.0);
	sim_serve_cfg c;
	cfg_init(&c);
	c.tp = 4;
	sim_serve_mem mem;
	ck_assert_int_eq(sim_serve_memory(f.m, hw_cost_system(f.cost), &c, &mem, err, sizeof err), 0);
	double cap = hw_cost_system(f.cost)->gpu.memory_bytes;
	ck_assert_double_eq_tol(mem.weights, 35276853248.0, 1.0);
	ck_assert_double_eq_tol(mem.activations, 889192448.0 + 32833536.0, 1.0);
	double kv = 0.9 * cap - 35276853248.0 - 922025984.0 - 1073741824.0;
	int64_t blocks = (int64_t)(kv / 81920.0) / 16;
	ck_assert_int_eq(mem.kv_blocks, blocks);
	ck_assert_int_eq(mem.kv_tokens, blocks * 16);
	ck_assert(mem.fits);
	/* fp8 KV halves the bytes per token: twice the tokens (to a block) */
	c.kv_dtype = HW_FP8;
	sim_serve_mem m8;
	ck_assert_int_eq(sim_serve_memory(f.m, hw_cost_system(f.cost), &c, &m8, err, sizeof err), 0);
	ck_assert_int_eq(m8.kv_blocks, (int64_t)(kv / 40960.0) / 16);
	/* int4 weights: the body at half a byte, the embeddings and head still 16-bit */
	c.kv_dtype = HW_BF16;
	c.weights = HW_INT4;
	ck_assert_int_eq(sim_serve_memory(f.m, hw_cost_system(f.cost), &c, &m8, err, sizeof err), 0);
	double emb = model_embedding_params(f.m) + model_head_params(f.m);
	ck_assert_double_eq_tol(m8.weights, ((70553706496.0 - emb) * 0.5 + emb * 2.0) / 4.0, 1.0);
	fx_close(&f);
}
END_TEST

/* Llama-3-8B (8,030,261,248 parameters; 2 x 128256 x 4096 in the embedding and the untied
 * head, so 6,979,588,096 in the 32 layers), TP 1, one prompt of 4096 tokens:
 *   layers' GEMMs   2 x 6,979,588,096 x 4096 FLOP / (989.4 TFLOP/s x 0.75)   = 77.06 ms
 *   flash attention 32 x 2 x 4096^2 x 4096 FLOP (causal) / (989.4 x 0.60)      =  7.41 ms
 *                   (the FA3 class at 0.60 with no length ramp; 1024 tiles on 132 SMs
 *                   leave the last wave 97% full)
 *   element-wise: per layer and token two norms (read and write h), two residual adds (read
 *   two, write one h), rotary of q and k ((a + g) d, read and write) and
 *   SwiGLU (read two f, write one):
 *                   32 x 4096 x (4h + 6h + 2 (32 + 8) 128 + 3 x 14336) x 2 B
 *                                                      / (3.35 TB/s x 0.9) =  8.19 ms
 *   the LM head for the one sampled token: 525,336,576 x 2 B / (3.35 x 0.9)     =  0.35 ms
 *   iteration overhead                                                         =  2.00 ms
 *   TTFT                                                                       = 95.0 ms
 * within 5% (the GEMMs' tile and wave quantization, and their k ramp, set to 128 steps here).
 * At 0.01 requests/s nearly every request is alone and the median and P90 TTFT are the same. */
START_TEST(prefill_ttft_by_hand)
{
	fixture f;
	fx_open(&f, "llama-3-8b");
	ck_assert_double_eq(model_params(f.m), 8030261248.0);
	const double hand = 77.06e-3 + 7.41e-3 + 8.19e-3 + 0.35e-3 + 2.0e-3;
	sim_serve_cfg c;
	lone(&c, 4096, 1);
	sim_serve_result *r = serve(&f, &c);
	const sim_serve_metrics *mt = sim_serve_get_metrics(r);
	ck_assert_rel(mt->ttft.mean, hand, 0.05);
	ck_assert_int_eq(mt->iterations, 1);
	double one = mt->ttft.mean;
	sim_serve_result_free(r);
	cfg_init(&c);
	c.rate = 0.01;
	c.requests = 50;
	c.prompt.mean = 4096;
	c.output.mean = 1;
	r = serve(&f, &c);
	mt = sim_serve_get_metrics(r);
	ck_assert_rel(mt->ttft.p50, one, 1e-9);
	ck_assert_rel(mt->ttft.p90, one, 1e-9);
	ck_assert(!mt->saturated);
	sim_serve_result_free(r);
	fx_close(&f);
}
END_TEST

/* A lone sequence's decode step reads every weight once but the embedding table (one row):
 *   (8,030,261,248 - 525,336,576) x 2 B / (3.35 TB/s x 0.9) = 4.979 ms, + 2 ms overhead = 6.98 ms
 * (its KV cache, 128 KiB a token, adds under 0.05 ms at these lengths).  TPOT is that step.
 * With int4 weights the layers read a quarter of the bytes, the LM head still 16-bit:
 *   (6,979,588,096 x 0.5 + 525,336,576 x 2) B / 3.015 TB/s = 1.506 ms, + 2 ms = 3.51 ms */
START_TEST(decode_tpot_by_hand)
{
	fixture f;
	fx_open(&f, "llama-3-8b");
	sim_serve_cfg c;
	lone(&c, 128, 65);
	sim_serve_result *r = serve(&f, &c);
	ck_assert_rel(sim_serve_get_metrics(r)->tpot.mean, 6.98e-3, 0.02);
	ck_assert_rel(sim_serve_get_metrics(r)->itl.p50, 6.98e-3, 0.02);
	ck_assert_int_eq(sim_serve_get_metrics(r)->iterations, 65);
	sim_serve_result_free(r);
	c.weights = HW_INT4;
	r = serve(&f, &c);
	ck_assert_rel(sim_serve_get_metrics(r)->tpot.mean, 3.51e-3, 0.03);
	sim_serve_result_free(r);
	fx_close(&f);
}
END_TEST

/* A decode kernel without grouped-query sharing (decode_gqa off: TensorRT-LLM before XQA)
 * reads each of Llama 3 8B's 8 KV heads once per query head, 4 times in all.  A lone sequence's
 * second token attends to 16,001 cached tokens of 128 KiB (bf16): the three extra passes take
 *   3 x 16,001 x 131,072 B / (3.35 TB/s x 0.9) = 2.087 ms
 * more a step; with the sharing kernel the step is the weights' 4.98 ms, its cache 0.70 ms and
 * the 2 ms overhead. */
START_TEST(decode_gqa_sharing_by_hand)
{
	fixture f;
	fx_open(&f, "llama-3-8b");
	sim_serve_cfg c;
	lone(&c, 16000, 2);
	sim_serve_result *r = serve(&f, &c);
	double shared = sim_serve_get_metrics(r)->tpot.mean;
	sim_serve_result_free(r);
	ck_assert_rel(shared, 4.979e-3 + 0.696e-3 + 2e-3, 0.03);
	c.engine.decode_gqa = false;
	r = serve(&f, &c);
	double per_head = sim_serve_get_metrics(r)->tpot.mean;
	sim_serve_result_free(r);
	ck_assert_rel(per_head - shared, 2.087e-3, 0.03);
	fx_close(&f);
}
END_TEST

/* A prompt longer than the token budget is prefilled in chunks: 20,000 tokens at 8192 a step
 * take 3 iterations before the first token, then one per further output token. */
START_TEST(chunked_prefill_iterations)
{
	fixture f;
	fx_open(&f, "llama-3-8b");
	sim_serve_cfg c;
	lone(&c, 20000, 1);
	sim_serve_result *r = serve(&f, &c);
	ck_assert_int_eq(sim_serve_get_metrics(r)->iterations, 3);
	sim_serve_result_free(r);
	lone(&c, 20000, 5);
	c.max_batched_tokens = 4096; /* ceil(20000 / 4096) = 5 */
	r = serve(&f, &c);
	ck_assert_int_eq(sim_serve_get_metrics(r)->iterations, 5 + 4);
	sim_serve_result_free(r);
	fx_close(&f);
}
END_TEST

/* Prefix caching by hand: a prompt of 1000 tokens with half of it cached keeps
 * floor(500 / 16) x 16 = 496 tokens (whole blocks); the 504 left fit one iteration of a 504-token
 * budget, where the whole prompt needs ceil(1000 / 504) = 2.  At most all but the last token is
 * cached: it samples the first output token. */
START_TEST(prefix_cache_by_hand)
{
	fixture f;
	fx_open(&f, "llama-3-8b");
	sim_serve_cfg c;
	lone(&c, 1000, 1);
	c.max_batched_tokens = 504;
	sim_serve_result *r = serve(&f, &c);
	ck_assert_int_eq(sim_serve_get_metrics(r)->iterations, 2);
	double cold = sim_serve_get_metrics(r)->ttft.mean;
	sim_serve_result_free(r);
	c.prefix_hit = 0.5;
	r = serve(&f, &c);
	ck_assert_int_eq(sim_serve_get_metrics(r)->iterations, 1);
	ck_assert(sim_serve_get_metrics(r)->ttft.mean < 0.6 * cold);
	sim_serve_result_free(r);
	lone(&c, 20, 1);
	c.prefix_hit = 0.99; /* 19 tokens round down to one block of 16 */
	c.max_batched_tokens = 4;
	r = serve(&f, &c);
	ck_assert_int_eq(sim_serve_get_metrics(r)->iterations, 1); /* 4 tokens left */
	sim_serve_result_free(r);
	c.prefix_hit = 1.0;
	ck_assert_int_ne(sim_serve(f.m, f.cost, &c, &r, err, sizeof err), 0);
	fx_close(&f);
}
END_TEST

/* Speculative decoding by hand: (1 - a^(k+1)) / (1 - a) tokens a step on average (Leviathan et al.
 * 2023, Eq. 1): 3 proposals at 0.7 give 2.533.  A request of 8 output tokens with every proposal
 * accepted: the prefill samples the first; a step with 3 proposals emits 4 (5 in all), the next
 * proposes only 2 (8 - 5 - 1) and emits 3: 1 + 2 iterations, where one token a step takes 1 + 7.
 * With none accepted it takes as many steps as without speculation, each verifying 4 tokens, and
 * no faster; n-gram proposals cost no GPU time, an EAGLE head's do. */
START_TEST(speculative_by_hand)
{
	ck_assert_double_eq_tol(sim_spec_expected_tokens(3, 0.7), 2.533, 1e-9);
	ck_assert_double_eq_tol(sim_spec_expected_tokens(4, 0.0), 1.0, 1e-12);
	ck_assert_double_eq_tol(sim_spec_expected_tokens(4, 1.0), 5.0, 1e-12);
	fixture f;
	fx_open(&f, "llama-3-8b");
	sim_serve_cfg c;
	lone(&c, 100, 8);
	sim_serve_result *r = serve(&f, &c);
	ck_assert_int_eq(sim_serve_get_metrics(r)->iterations, 8);
	double plain = sim_serve_get_metrics(r)->e2e.mean;
	sim_serve_result_free(r);
	c.spec = SIM_SPEC_NGRAM;
	c.spec_tokens = 3;
	c.spec_accept = 1.0;
	r = serve(&f, &c);
	ck_assert_int_eq(sim_serve_get_metrics(r)->iterations, 3);
	ck_assert_double_eq_tol(sim_serve_get_metrics(r)->spec_tokens_per_step, 3.5, 1e-12); /* (4 + 3) / 2 */
	ck_assert(sim_serve_get_metrics(r)->e2e.mean < plain);
	double ngram = sim_serve_get_metrics(r)->e2e.mean;
	sim_serve_result_free(r);
	c.spec = SIM_SPEC_EAGLE;
	r = serve(&f, &c);
	ck_assert_int_eq(sim_serve_get_metrics(r)->iterations, 3);
	ck_assert(sim_serve_get_metrics(r)->e2e.mean > ngram);
	sim_serve_result_free(r);
	c.spec = SIM_SPEC_NGRAM;
	c.spec_accept = 0.0;
	r = serve(&f, &c);
	ck_assert_int_eq(sim_serve_get_metrics(r)->iterations, 8);
	ck_assert_double_eq_tol(sim_serve_get_metrics(r)->spec_tokens_per_step, 1.0, 1e-12);
	ck_assert(sim_serve_get_metrics(r)->e2e.mean >= plain);
	sim_serve_result_free(r);
	c.spec_tokens = SIM_SPEC_MAX_TOKENS + 1;
	ck_assert_int_ne(sim_serve(f.m, f.cost, &c, &r, err, sizeof err), 0);
	fx_close(&f);
}
END_TEST

/* CUDA-graph buckets as vLLM captures them ([1, 2, 4] + range(8, 513, 8)): 3 tokens run as 4,
 * 5 as 8, 9 as 16, 512 as 512; 513 is past the largest, and an iteration with prefill tokens
 * replays a graph only where the engine captures mixed iterations (piecewise graphs). */
START_TEST(graph_buckets)
{
	sim_engine e;
	sim_engine_default(&e);
	e.graph_max = 512;
	e.graph_step = 8;
	e.graph_mixed = false;
	ck_assert_int_eq(sim_engine_graph_tokens(&e, 1, false), 1);
	ck_assert_int_eq(sim_engine_graph_tokens(&e, 2, false), 2);
	ck_assert_int_eq(sim_engine_graph_tokens(&e, 3, false), 4);
	ck_assert_int_eq(sim_engine_graph_tokens(&e, 5, false), 8);
	ck_assert_int_eq(sim_engine_graph_tokens(&e, 9, false), 16);
	ck_assert_int_eq(sim_engine_graph_tokens(&e, 512, false), 512);
	ck_assert_int_eq(sim_engine_graph_tokens(&e, 513, false), 0);
	ck_assert_int_eq(sim_engine_graph_tokens(&e, 9, true), 0);
	e.graph_mixed = true;
	ck_assert_int_eq(sim_engine_graph_tokens(&e, 9, true), 16);
	/* SGLang's 160: a bucket past the largest capture is the largest */
	e.graph_max = 160;
	ck_assert_int_eq(sim_engine_graph_tokens(&e, 157, false), 160);
	e.graph_max = 0;
	ck_assert_int_eq(sim_engine_graph_tokens(&e, 1, false), 0);
}
END_TEST

/* The host's time per iteration grows with the batch: 4 sequences with 100 us of scheduling
 * per sequence.  The first arrival starts an iteration alone (its prefill); the next prefills
 * the other three beside its first decode.  A then decodes its 32 tokens in iterations of 4
 * sequences (+0.4 ms each); B, C and D decode 31 of theirs beside A and the last with A gone
 * (3 sequences, +0.3 ms): TPOT rises by (0.4 + 3 x (31 x 0.4 + 0.3) / 32) / 4 = 0.39765625 ms. */
START_TEST(host_time_per_sequence)
{
	fixture f;
	fx_open(&f, "llama-3-8b");
	sim_serve_cfg c;
	lone(&c, 128, 33);
	c.requests = 4;
	sim_serve_result *r = serve(&f, &c);
	double base = sim_serve_get_metrics(r)->tpot.mean;
	sim_serve_result_free(r);
	c.engine.sched_seq_s = 100e-6;
	r = serve(&f, &c);
	ck_assert_rel(sim_serve_get_metrics(r)->tpot.mean - base, 0.39765625e-3, 1e-6);
	sim_serve_result_free(r);
	fx_close(&f);
}
END_TEST

/* An overlapping scheduler hides the host's time behind the GPU's: the lone 8B decode step of
 * decode_tpot_by_hand is 4.979 ms of kernels + 2 ms of host in series (6.98 ms), max(4.979, 2)
 * = 4.979 ms overlapped, and max(4.979, 8) = 8 ms when the host takes 8 ms. */
START_TEST(overlap_schedule)
{
	fixture f;
	fx_open(&f, "llama-3-8b");
	sim_serve_cfg c;
	lone(&c, 128, 65);
	c.engine.overlap = true;
	sim_serve_result *r = serve(&f, &c);
	ck_assert_rel(sim_serve_get_metrics(r)->tpot.mean, 4.979e-3, 0.02);
	sim_serve_result_free(r);
	c.engine.sched_s = 8e-3;
	r = serve(&f, &c);
	ck_assert_rel(sim_serve_get_metrics(r)->tpot.mean, 8e-3, 1e-6);
	sim_serve_result_free(r);
	fx_close(&f);
}
END_TEST

/* Launches: an eager iteration takes at least its kernels times the launch time.  Llama-3-8B
 * has 32 layers of more than 4 kernels each besides attention: at 1 ms a launch a decode step
 * is above 32 x 5 x 1 ms = 160 ms.  A graph-captured step (a lone decode is T = 1) launches
 * none: the 6.98 ms of decode_tpot_by_hand. */
START_TEST(launch_floor_and_graphs)
{
	fixture f;
	fx_open(&f, "llama-3-8b");
	sim_serve_cfg c;
	lone(&c, 128, 9);
	c.engine.launch_s = 1e-3;
	sim_serve_result *r = serve(&f, &c);
	ck_assert(sim_serve_get_metrics(r)->tpot.mean > 0.160);
	sim_serve_result_free(r);
	c.engine.graph_max = 512;
	r = serve(&f, &c);
	ck_assert_rel(sim_serve_get_metrics(r)->tpot.mean, 6.98e-3, 0.02);
	sim_serve_result_free(r);
	fx_close(&f);
}
END_TEST

/* How prompts enter, counted by hand: two requests of 1000 prompt and 3 output tokens at once,
 * a budget of 1000 tokens an iteration.
 *   chunked:  A's 1000 | A decode + B 999 | A decode (A done) + B 1 | B | B        = 5
 *   separate: A's 1000 | B's 1000 (prefill only) | A, B decode | A, B decode      = 4
 *   mixed:    A's 1000 | A decode (B's whole 1000 does not fit beside it) | A decode
 *             (A done) | B's 1000 | B | B                                          = 6 */
START_TEST(prefill_modes)
{
	fixture f;
	fx_open(&f, "llama-3-8b");
	sim_serve_cfg c;
	lone(&c, 1000, 3);
	c.requests = 2;
	c.max_batched_tokens = 1000;
	static const struct {
		int mode;
		int64_t iterations;
	} want[] = {{HW_EN_PREFILL_CHUNKED, 5}, {HW_EN_PREFILL_SEPARATE, 4}, {HW_EN_PREFILL_MIXED, 6}};
	for (size_t i = 0; i < 3; i++) {
		c.engine.prefill = want[i].mode;
		sim_serve_result *r = serve(&f, &c);
		ck_assert_int_eq(sim_serve_get_metrics(r)->iterations, want[i].iterations);
		ck_assert_int_eq(sim_serve_get_metrics(r)->completed, 2);
		sim_serve_result_free(r);
	}
	fx_close(&f);
}
END_TEST

/* An engine that runs whole prompts beside the decodes (mixed) has a token budget that holds the
 * longest prompt: its default is raised to it (the two prompts of 1000 then run as in
 * prefill_modes, 6 iterations), a stated budget below it is refused, and --chunked-prefill on
 * splits them within the stated budget.  The longest prompt of each kind of length, by hand. */
START_TEST(whole_prompt_budget)
{
	fixture f;
	fx_open(&f, "llama-3-8b");
	sim_serve_cfg c;
	lone(&c, 1000, 3);
	c.requests = 2;
	c.engine.prefill = HW_EN_PREFILL_MIXED;
	c.engine.max_batched_tokens = 600;
	ck_assert_int_eq(sim_serve_longest_prompt(&c), 1000);
	ck_assert_int_eq(sim_serve_budget(&c), 1000);
	sim_serve_result *r = serve(&f, &c);
	ck_assert_int_eq(sim_serve_get_metrics(r)->iterations, 6);
	cJSON *doc = sim_serve_json(r);
	const cJSON *cf = cJSON_GetObjectItem(doc, "config");
	ck_assert_int_eq(cJSON_GetObjectItem(cf, "max_batched_tokens")->valueint, 1000);
	ck_assert_str_eq(cJSON_GetObjectItem(cf, "prefill")->valuestring, "mixed");
	cJSON_Delete(doc);
	sim_serve_result_free(r);

	c.max_batched_tokens = 600;
	r = NULL;
	ck_assert_int_eq(sim_serve(f.m, f.cost, &c, &r, err, sizeof err), PP_EUSAGE);
	ck_assert_ptr_null(r);
	ck_assert_msg(strstr(err, "prompts of up to 1000 tokens exceed") && strstr(err, "--chunked-prefill on"), "%s", err);
	c.chunked = SIM_CHUNKED_ON;
	ck_assert_int_eq(sim_serve_prefill(&c), HW_EN_PREFILL_CHUNKED);
	r = serve(&f, &c);
	ck_assert_int_eq(sim_serve_get_metrics(r)->completed, 2);
	doc = sim_serve_json(r);
	cf = cJSON_GetObjectItem(doc, "config");
	ck_assert_int_eq(cJSON_GetObjectItem(cf, "max_batched_tokens")->valueint, 600);
	ck_assert_str_eq(cJSON_GetObjectItem(cf, "prefill")->valuestring, "chunked");
	cJSON_Delete(doc);
	sim_serve_result_free(r);

	/* off: a chunking engine runs whole prompts; prefill-only iterations stay as they are */
	c.chunked = SIM_CHUNKED_OFF;
	c.engine.prefill = HW_EN_PREFILL_CHUNKED;
	ck_assert_int_eq(sim_serve_prefill(&c), HW_EN_PREFILL_MIXED);
	c.engine.prefill = HW_EN_PREFILL_SEPARATE;
	ck_assert_int_eq(sim_serve_prefill(&c), HW_EN_PREFILL_SEPARATE);
	c.max_batched_tokens = 0;
	ck_assert_int_eq(sim_serve_budget(&c), 600); /* separate prefills chunk a long prompt */
	c.chunked = SIM_CHUNKED_ON;
	ck_assert_int_eq(sim_serve_prefill(&c), HW_EN_PREFILL_CHUNKED);

	/* the longest prompt each length allows: a uniform's upper end, a clip, none unbounded, a
	 * trace's longest */
	ck_assert_int_eq(sim_dist_parse("uniform:min=100,max=5000", &c.prompt, err, sizeof err), 0);
	ck_assert_int_eq(sim_serve_longest_prompt(&c), 5000);
	ck_assert_int_eq(sim_dist_parse("lognormal:mean=800,sigma=0.6", &c.prompt, err, sizeof err), 0);
	ck_assert_int_eq(sim_serve_longest_prompt(&c), 0);
	ck_assert_int_eq(sim_dist_parse("lognormal:mean=800,sigma=0.6,max=7000", &c.prompt, err, sizeof err), 0);
	ck_assert_int_eq(sim_serve_longest_prompt(&c), 7000);
	const sim_request tr[] = {{0.0, 300, 10}, {0.5, 4100, 10}, {1.0, 20, 10}};
	c.arrival = SIM_ARR_TRACE;
	c.trace = tr;
	c.ntrace = 3;
	ck_assert_int_eq(sim_serve_longest_prompt(&c), 4100);
	fx_close(&f);
}
END_TEST

/* An engine's 80% intervals, by hand: a time t with log ratios p10, p90 runs from t e^p10 to
 * t e^p90; a throughput v from v e^-p90 to v e^-p10 (a throughput is an inverse time); none
 * without the percentiles, or with them crossed. */
START_TEST(engine_intervals_by_hand)
{
	sim_engine e;
	sim_engine_default(&e);
	double lo, hi;
	sim_serve_interval(&e, SIM_IV_TPUT, 100.0, &lo, &hi);
	ck_assert(isnan(lo) && isnan(hi)); /* the registry's default: no interval */
	e.iv[SIM_IV_TPUT][0] = -0.1, e.iv[SIM_IV_TPUT][1] = 0.2;
	e.iv[SIM_IV_TTFT][0] = -0.3, e.iv[SIM_IV_TTFT][1] = 0.5;
	e.iv[SIM_IV_TPOT][0] = 0.4, e.iv[SIM_IV_TPOT][1] = 0.1;
	sim_serve_interval(&e, SIM_IV_TPUT, 100.0, &lo, &hi);
	ck_assert_double_eq_tol(lo, 81.873075, 1e-6); /* 100 e^-0.2 */
	ck_assert_double_eq_tol(hi, 110.517092, 1e-6); /* 100 e^0.1 */
	sim_serve_interval(&e, SIM_IV_TTFT, 2.0, &lo, &hi);
	ck_assert_double_eq_tol(lo, 1.481636, 1e-6); /* 2 e^-0.3 */
	ck_assert_double_eq_tol(hi, 3.297443, 1e-6); /* 2 e^0.5 */
	sim_serve_interval(&e, SIM_IV_TPOT, 0.05, &lo, &hi);
	ck_assert(isnan(lo) && isnan(hi)); /* crossed percentiles */
}
END_TEST

/* The capacity band by hand: the speeds are e^-p90 and e^-p10 of the capacity errors; a
 * value's banded interval is the hull of the engine's interval and the band's two values. */
START_TEST(banded_intervals_by_hand)
{
	sim_engine e;
	sim_engine_default(&e);
	double f[2], lo, hi;
	ck_assert(!sim_engine_speeds(&e, f)); /* no band */
	e.iv[SIM_IV_TPUT][0] = -0.1, e.iv[SIM_IV_TPUT][1] = 0.2;
	e.iv[SIM_IV_TTFT][0] = -0.3, e.iv[SIM_IV_TTFT][1] = 0.5;
	ck_assert(!sim_engine_speeds(&e, f)); /* the throughput's interval is not the band */
	e.cap[0] = -0.1, e.cap[1] = 0.2;
	ck_assert(sim_engine_speeds(&e, f));
	ck_assert_double_eq_tol(f[0], 0.818730753, 1e-9); /* e^-0.2 */
	ck_assert_double_eq_tol(f[1], 1.105170918, 1e-9); /* e^0.1 */
	/* TTFT 2 s: the engine's 1.4816 to 3.2974, the band's 1.9 and 9: 1.4816 to 9 */
	sim_serve_interval_banded(&e, SIM_IV_TTFT, 2.0, (double[2]){9.0, 1.9}, &lo, &hi);
	ck_assert_double_eq_tol(lo, 1.481636, 1e-6);
	ck_assert_double_eq_tol(hi, 9.0, 1e-12);
	/* a throughput of 100, its band 60 to 100: 60 to 110.5 */
	sim_serve_interval_banded(&e, SIM_IV_TPUT, 100.0, (double[2]){100.0, 60.0}, &lo, &hi);
	ck_assert_double_eq_tol(lo, 60.0, 1e-12);
	ck_assert_double_eq_tol(hi, 110.517092, 1e-6);
	/* no band: the engine's interval; no interval: none, band or not */
	sim_serve_interval_banded(&e, SIM_IV_TTFT, 2.0, NULL, &lo, &hi);
	ck_assert_double_eq_tol(hi, 3.297443, 1e-6);
	sim_serve_interval_banded(&e, SIM_IV_TPOT, 2.0, (double[2]){1.0, 3.0}, &lo, &hi);
	ck_assert(isnan(lo) && isnan(hi));
}
END_TEST

/* A run on an engine f times as fast (sim_serve_speed).  A batch has no clock of its own: its
 * times are divided by f and its rates multiplied, exactly.  A Poisson run at speed 1 is the run
 * itself, bit for bit.  Lightly loaded, a request waits for no other, so its latencies go as
 * 1/f; near saturation they do not: at 90% of the engine's capacity, an engine 0.7 times as
 * fast is offered 1.29 times what it can serve and its queue grows, so the time to first token
 * grows many times more than 1/0.7. */
START_TEST(speed_scales_the_clock)
{
	fixture f;
	fx_open(&f, "llama-3-8b");
	sim_serve_cfg c;
	batch_init(&c, 512, 128, 256);
	c.tp = 1;
	sim_serve_result *b = serve(&f, &c);
	const sim_serve_metrics *bm = sim_serve_get_metrics(b);
	sim_serve_metrics x;
	ck_assert_int_eq(sim_serve_speed(f.m, f.cost, &c, bm, 2.0, &x, err, sizeof err), 0);
	ck_assert_double_eq_tol(x.ttft.mean, bm->ttft.mean / 2, 1e-12 * bm->ttft.mean);
	ck_assert_double_eq_tol(x.tpot.p99, bm->tpot.p99 / 2, 1e-12 * bm->tpot.p99);
	ck_assert_double_eq_tol(x.output_tokens_per_s, 2 * bm->output_tokens_per_s, 1e-9 * bm->output_tokens_per_s);
	ck_assert_int_eq(x.iterations, bm->iterations);
	double cap = bm->requests_per_s; /* requests/s at the engine's full batch */
	ck_assert_int_eq(sim_serve_speed(f.m, f.cost, &c, bm, 0.0, &x, err, sizeof err), PP_EUSAGE);
	ck_assert_int_eq(sim_serve_speed(f.m, f.cost, &c, bm, NAN, &x, err, sizeof err), PP_EUSAGE);
	sim_serve_result_free(b);

	c.arrival = SIM_ARR_POISSON;
	c.requests = 400;
	c.rate = 0.05 * cap;
	sim_serve_result *r = serve(&f, &c);
	const sim_serve_metrics *rm = sim_serve_get_metrics(r);
	ck_assert_int_eq(sim_serve_speed(f.m, f.cost, &c, rm, 1.0, &x, err, sizeof err), 0);
	ck_assert(x.ttft.mean == rm->ttft.mean && x.tpot.p99 == rm->tpot.p99 && x.makespan_s == rm->makespan_s);
	/* a speed whose run the simulator refuses (a rate past 10^7/s) says it is the band's run */
	ck_assert_int_eq(sim_serve_speed(f.m, f.cost, &c, rm, 1e-9, &x, err, sizeof err), PP_EUSAGE);
	ck_assert_msg(strstr(err, "capacity band") != NULL, "%s", err);
	ck_assert_int_eq(sim_serve_speed(f.m, f.cost, &c, rm, 2.0, &x, err, sizeof err), 0);
	ck_assert_msg(fabs(x.ttft.mean / (rm->ttft.mean / 2) - 1) < 0.15, "light load: TTFT %g s at speed 2 for %g s",
		      x.ttft.mean, rm->ttft.mean);
	ck_assert_msg(fabs(x.tpot.mean / (rm->tpot.mean / 2) - 1) < 0.15, "light load: TPOT %g s at speed 2 for %g s",
		      x.tpot.mean, rm->tpot.mean);
	ck_assert_double_eq_tol(x.requests_per_s, rm->requests_per_s, 0.1 * rm->requests_per_s); /* the rate offered */
	sim_serve_result_free(r);

	c.rate = 0.9 * cap;
	r = serve(&f, &c);
	rm = sim_serve_get_metrics(r);
	ck_assert(!rm->saturated);
	ck_assert_int_eq(sim_serve_speed(f.m, f.cost, &c, rm, 0.7, &x, err, sizeof err), 0);
	ck_assert_msg(x.ttft.mean > 5 * rm->ttft.mean / 0.7, "near saturation: TTFT %g s at speed 0.7 for %g s",
		      x.ttft.mean, rm->ttft.mean);
	ck_assert(x.requests_per_s < 0.85 * rm->requests_per_s); /* it serves less than it is offered */
	sim_serve_result_free(r);
	fx_close(&f);
}
END_TEST

/* The engines' batch limits by default (profiles.sql, from their sources): vLLM V1 1024
 * sequences and 8192 tokens, vLLM V0 256 and 4096, TensorRT-LLM 2048 and 8192; a configuration
 * that states its own keeps it.  An unknown engine names the known ones. */
START_TEST(engine_defaults)
{
	fixture f;
	fx_open(&f, "llama-3-8b");
	static const struct {
		const char *name;
		int seqs;
		int64_t tokens;
	} want[] = {{"vllm", 1024, 8192}, {"vllm-v0", 256, 4096}, {"trtllm", 2048, 8192}};
	for (size_t i = 0; i < 3; i++) {
		hw_profile *p;
		ck_assert_msg(hw_profile_find(f.db, HW_SCOPE_ENGINE, want[i].name, &p, err, sizeof err) == 0, "%s", err);
		sim_serve_cfg c;
		sim_serve_cfg_init(&c);
		sim_engine_from_profile(&c.engine, p);
		hw_profile_free(p);
		ck_assert_str_eq(c.engine.name, want[i].name);
		ck_assert_int_eq(sim_serve_check(f.m, hw_cost_system(f.cost), &c, NULL, NULL, err, sizeof err), 0);
		ck_assert_int_eq(c.max_num_seqs, want[i].seqs);
		ck_assert_int_eq(c.max_batched_tokens, want[i].tokens);
		sim_serve_cfg_init(&c);
		c.max_num_seqs = 7;
		ck_assert_int_eq(sim_serve_check(f.m, hw_cost_system(f.cost), &c, NULL, NULL, err, sizeof err), 0);
		ck_assert_int_eq(c.max_num_seqs, 7);
	}
	hw_profile *p;
	ck_assert_int_eq(hw_profile_find(f.db, HW_SCOPE_ENGINE, "nosuch", &p, err, sizeof err), PP_EUSAGE);
	ck_assert_ptr_nonnull(strstr(err, "trtllm"));
	fx_close(&f);
}
END_TEST

/* Quantization as it runs: weight-only int4 (Marlin/AWQ kernels) reads a quarter of the bf16
 * weight bytes but dequantizes in its inner loop (gemm_eff_wq, 0.8 of the 16-bit rate), fp8
 * W8A8 reads half and computes at the fp8 rate with its activation casts.  A lone decode step
 * is weight-bound: int4 < fp8 < bf16.  The prefill of 8192 tokens is compute-bound: fp8 <
 * bf16 < int4, int4's GEMMs 1 / 0.8 = 1.25x bf16's (its TTFT more than 1.1x with attention
 * and the rest unchanged). */
/* Without --weights a model runs as it is published, in the kernels the GPU has: FP8 on FP8
 * tensor cores or as 8-bit weight-only, MXFP4 on FP4 tensor cores or as 4-bit weight-only. */
START_TEST(released_weights)
{
	hw_gpu ampere, hopper, blackwell;
	memset(&ampere, 0, sizeof ampere);
	ampere.peak_tflops[HW_BF16] = 312;
	hopper = ampere;
	hopper.peak_tflops[HW_FP8] = 1979;
	blackwell = hopper;
	blackwell.peak_tflops[HW_FP4] = 9000;
	static const struct {
		const char *model;
		hw_dtype a100, h100, b200;
	} c[] = {
		{"llama-3-8b", HW_BF16, HW_BF16, HW_BF16},
		{"deepseek-r1", HW_INT8, HW_FP8, HW_FP8},
		{"gpt-oss-20b", HW_INT4, HW_INT4, HW_FP4},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		model *m;
		ck_assert_msg(model_load(c[i].model, &m, err, sizeof err) == 0, "%s", err);
		ck_assert_int_eq(sim_serve_released_weights(m, &ampere), c[i].a100);
		ck_assert_int_eq(sim_serve_released_weights(m, &hopper), c[i].h100);
		ck_assert_int_eq(sim_serve_released_weights(m, &blackwell), c[i].b200);
		model_free(m);
	}
}
END_TEST

START_TEST(quantization_crossover)
{
	fixture f;
	fx_open(&f, "llama-3-8b");
	sim_serve_cfg c;
	double tpot[3], ttft[3];
	static const hw_dtype w[3] = {HW_INT4, HW_FP8, HW_BF16};
	for (int i = 0; i < 3; i++) {
		lone(&c, 8192, 33);
		c.weights = w[i];
		sim_serve_result *r = serve(&f, &c);
		tpot[i] = sim_serve_get_metrics(r)->tpot.mean;
		ttft[i] = sim_serve_get_metrics(r)->ttft.mean;
		sim_serve_result_free(r);
	}
	ck_assert(tpot[0] < tpot[1] && tpot[1] < tpot[2]);
	ck_assert(ttft[1] < ttft[2] && ttft[2] < ttft[0]);
	ck_assert(ttft[0] > 1.1 * ttft[2]);
	fx_close(&f);
}
END_TEST

/* Little's law: the time-average number of requests in the system equals the arrival rate
 * times the mean time in the system.  Over the whole run it is an identity of the event
 * accounting (integral of N(t) = sum of the requests' times); at steady state, with the
 * offered rate, it holds to the edge effects of a finite run. */
START_TEST(littles_law)
{
	fixture f;
	fx_open(&f, "llama-3-8b");
	sim_serve_cfg c;
	cfg_init(&c);
	c.rate = 4.0;
	c.requests = 4000;
	ck_assert_int_eq(sim_dist_parse("lognormal:mean=600,sigma=0.6,max=4000", &c.prompt, err, sizeof err), 0);
	ck_assert_int_eq(sim_dist_parse("exponential:mean=150,max=1000", &c.output, err, sizeof err), 0);
	sim_serve_result *r = serve(&f, &c);
	const sim_serve_metrics *mt = sim_serve_get_metrics(r);
	ck_assert(!mt->saturated);
	ck_assert_int_eq(mt->completed, 4000);
	ck_assert_rel(mt->concurrency_mean * mt->makespan_s, (double)mt->completed * mt->e2e.mean, 1e-9);
	ck_assert_rel(mt->concurrency_mean, c.rate * mt->e2e.mean, 0.03);
	ck_assert_rel(mt->requests_per_s, c.rate, 0.05);
	ck_assert(mt->concurrency_mean > 1.0); /* requests overlap: a real queue, not one at a time */
	sim_serve_result_free(r);
	fx_close(&f);
}
END_TEST

/* Above capacity the queue grows through the run: the tool flags saturation, and latency
 * grows with the length of the run (no steady state).  Below it, neither. */
START_TEST(saturation)
{
	fixture f;
	fx_open(&f, "llama-3-8b");
	sim_serve_cfg c;
	cfg_init(&c);
	c.rate = 400.0;
	c.duration_s = 10;
	sim_serve_result *a = serve(&f, &c);
	c.duration_s = 20;
	sim_serve_result *b = serve(&f, &c);
	const sim_serve_metrics *ma = sim_serve_get_metrics(a), *mb = sim_serve_get_metrics(b);
	ck_assert(ma->saturated && mb->saturated);
	ck_assert_msg(mb->e2e.p99 > 1.5 * ma->e2e.p99, "P99 %.2f s over 10 s, %.2f s over 20 s", ma->e2e.p99, mb->e2e.p99);
	ck_assert(ma->requests_per_s < 0.5 * c.rate);
	/* the sustained throughput is the capacity, whatever the length of the run */
	ck_assert_rel(mb->output_tokens_per_s, ma->output_tokens_per_s, 0.15);
	sim_serve_result_free(a);
	sim_serve_result_free(b);
	c.rate = 2.0;
	c.duration_s = 60;
	a = serve(&f, &c);
	ck_assert(!sim_serve_get_metrics(a)->saturated);
	sim_serve_result_free(a);
	fx_close(&f);
}
END_TEST

/* A batch of 64 requests of 100 prompt and 400 output tokens. */
static void
batch64(sim_serve_cfg *c)
{
	cfg_init(c);
	c->arrival = SIM_ARR_BATCH;
	c->requests = 64;
	c->prompt.mean = 100;
	c->output.mean = 400;
}

/* A KV cache too small for a batch's growing sequences preempts (recomputation) and still
 * finishes every request; a large one never preempts. */
START_TEST(preemption)
{
	fixture f;
	fx_open(&f, "llama-3-8b");
	sim_serve_cfg c;
	batch64(&c);
	sim_serve_result *r = serve(&f, &c);
	ck_assert_int_eq(sim_serve_get_metrics(r)->preemptions, 0);
	ck_assert_int_eq(sim_serve_get_metrics(r)->completed, 64);
	sim_serve_result_free(r);
	/* 0.22 x 80 GB leaves ~0.6 GiB of KV: about 4,700 tokens for 64 x 500 */
	c.gpu_memory_utilization = 0.22;
	r = serve(&f, &c);
	const sim_serve_metrics *mt = sim_serve_get_metrics(r);
	ck_assert_msg(mt->mem.kv_tokens > 500 && mt->mem.kv_tokens < 64 * 500, "%lld KV tokens",
		      (long long)mt->mem.kv_tokens);
	ck_assert(mt->preemptions > 0);
	ck_assert_int_eq(mt->completed, 64);
	ck_assert(mt->kv_utilization_peak > 0.9 && mt->kv_utilization_peak <= 1.0);
	sim_serve_result_free(r);
	fx_close(&f);
}
END_TEST

/* The same squeezed cache under an engine that admits a request only with room for its whole
 * output (kv_reserve 1, TensorRT-LLM's GUARANTEED_NO_EVICT): each of the 100 + 400-token
 * requests holds ceil(500 / 16) = 32 blocks at most, so floor(B / 32) run at once and none is
 * ever preempted; the cache's peak is at most those sequences' blocks. */
START_TEST(admission_reserve)
{
	fixture f;
	fx_open(&f, "llama-3-8b");
	sim_serve_cfg c;
	batch64(&c);
	c.gpu_memory_utilization = 0.22;
	c.engine.kv_reserve = 1.0;
	sim_serve_result *r = serve(&f, &c);
	const sim_serve_metrics *mt = sim_serve_get_metrics(r);
	int64_t blocks = mt->mem.kv_blocks, fit = blocks / 32;
	ck_assert(fit >= 2 && fit < 64);
	ck_assert_int_eq(mt->preemptions, 0);
	ck_assert_int_eq(mt->completed, 64);
	ck_assert_msg(mt->kv_utilization_peak <= (double)(fit * 32) / (double)blocks + 1e-12 &&
			      mt->kv_utilization_peak > (double)((fit - 1) * 32) / (double)blocks,
		      "peak %g with %lld blocks", mt->kv_utilization_peak, (long long)blocks);
	sim_serve_result_free(r);
	/* the output distribution's cap is what the engine knows (max_tokens): reserving for 800
	 * output tokens, ceil(900 / 16) = 57 blocks a request */
	c.output.max = 800;
	r = serve(&f, &c);
	mt = sim_serve_get_metrics(r);
	ck_assert_int_eq(mt->preemptions, 0);
	ck_assert(mt->kv_utilization_peak <= (double)(blocks / 57 * 32) / (double)blocks + 1e-12);
	sim_serve_result_free(r);
	fx_close(&f);
}
END_TEST

/* An Offline run deals its batch out to the replicas in turn: four replicas of fixed-length
 * requests run what one runs, four times over, and the query grows to min_s seconds of the
 * first run's rate. */
START_TEST(offline_by_replica)
{
	fixture f;
	fx_open(&f, "llama-3-8b");
	sim_serve_cfg c;
	batch_init(&c, 100, 50, 100);
	c.replicas = 1;
	sim_serve_result *one = serve(&f, &c);
	const sim_serve_metrics *m1 = sim_serve_get_metrics(one);
	c.replicas = 4;
	c.requests = 400;
	sim_serve_result *all = serve(&f, &c);
	const sim_serve_metrics *m4 = sim_serve_get_metrics(all);
	sim_serve_metrics off;
	int64_t issued;
	ck_assert_msg(sim_serve_offline(f.m, f.cost, &c, 0.0, 1000, &off, &issued, err, sizeof err) == 0, "%s", err);
	ck_assert_int_eq(issued, 400);
	ck_assert_rel(off.requests_per_s, 4.0 * m1->requests_per_s, 1e-12);
	ck_assert_rel(off.output_tokens_per_s, 4.0 * m1->output_tokens_per_s, 1e-12);
	ck_assert_rel(off.output_tokens_per_s, m4->output_tokens_per_s, 1e-9);
	ck_assert_rel(off.ttft.p99, m4->ttft.p99, 1e-9);
	ck_assert_int_eq(off.gpus, 4);
	ck_assert_int_eq(off.completed, 400);
	/* a minute's worth at the first run's rate, up to the cap per replica */
	double want = ceil(m1->requests_per_s * 60.0);
	ck_assert(want > 100 && want < 100000);
	ck_assert(sim_serve_offline(f.m, f.cost, &c, 60.0, 100000, &off, &issued, err, sizeof err) == 0);
	ck_assert_int_eq(issued, 4 * (int64_t)want);
	ck_assert(sim_serve_offline(f.m, f.cost, &c, 60.0, 150, &off, &issued, err, sizeof err) == 0);
	ck_assert_int_eq(issued, 600);
	c.arrival = SIM_ARR_POISSON;
	ck_assert_int_eq(sim_serve_offline(f.m, f.cost, &c, 60.0, 150, &off, &issued, err, sizeof err), PP_EUSAGE);
	sim_serve_result_free(one);
	sim_serve_result_free(all);
	fx_close(&f);
}
END_TEST

/* Pipeline parallelism as the engines run it: a batch in each stage.  Two stages of one GPU each
 * serve about as much as two replicas of a GPU (their iterations differ by the stages' hand-off
 * alone), and so much more than one replica; one batch through both stages at a time served
 * what one replica serves. */
START_TEST(pipeline_batches_in_flight)
{
	fixture f;
	fx_open(&f, "llama-3-8b");
	sim_serve_cfg c;
	batch_init(&c, 100, 50, 200);
	c.max_num_seqs = 32; /* the batch limit binds, not the cache */
	c.replicas = 1;
	sim_serve_result *one = serve(&f, &c);
	c.replicas = 2;
	sim_serve_result *two = serve(&f, &c);
	c.replicas = 1;
	c.pp = 2;
	sim_serve_result *piped = serve(&f, &c);
	const sim_serve_metrics *m1 = sim_serve_get_metrics(one), *m2 = sim_serve_get_metrics(two),
				*mp = sim_serve_get_metrics(piped);
	ck_assert_int_eq(mp->gpus, 2);
	ck_assert_int_eq(mp->completed, 200);
	double r = mp->output_tokens_per_s / m2->output_tokens_per_s;
	ck_assert_msg(r > 0.97 && r <= 1.0, "two stages serve %g of two replicas", r);
	ck_assert_msg(mp->output_tokens_per_s > 1.5 * m1->output_tokens_per_s, "two stages serve %g, one replica %g",
		      mp->output_tokens_per_s, m1->output_tokens_per_s);
	/* a batch's iteration passes both stages: a replica's time per token and the hand-off */
	ck_assert(mp->tpot.mean >= m2->tpot.mean);
	sim_serve_result_free(one);
	sim_serve_result_free(two);
	sim_serve_result_free(piped);
	fx_close(&f);
}
END_TEST

/* With prefill and decode on separate replicas, a lone request's end-to-end time grows by the
 * hand-over of its KV cache: 2048 tokens x 128 KiB over the NVLink of the node. */
START_TEST(disaggregation_adds_kv_transfer)
{
	fixture f;
	fx_open(&f, "llama-3-8b");
	sim_serve_cfg c;
	lone(&c, 2048, 16);
	sim_serve_result *u = serve(&f, &c);
	c.prefill_replicas = 1;
	c.decode_replicas = 1;
	sim_serve_result *d = serve(&f, &c);
	double kv = 2048.0 * 2 * 8 * 128 * 32 * 2;
	double xfer = hw_cost_coll_time(f.cost, HW_SEND_RECV, 2, 1, kv, NULL);
	ck_assert(xfer > 1e-4);
	ck_assert_rel(sim_serve_get_metrics(d)->ttft.mean, sim_serve_get_metrics(u)->ttft.mean, 1e-9);
	ck_assert_rel(sim_serve_get_metrics(d)->e2e.mean - sim_serve_get_metrics(u)->e2e.mean, xfer, 0.02);
	ck_assert_int_eq(sim_serve_get_metrics(d)->gpus, 2);
	sim_serve_result_free(u);
	sim_serve_result_free(d);
	fx_close(&f);
}
END_TEST

/* Two replicas behind the router sustain twice the overload throughput of one. */
START_TEST(replicas_scale)
{
	fixture f;
	fx_open(&f, "llama-3-8b");
	sim_serve_cfg c;
	cfg_init(&c);
	c.rate = 300;
	c.duration_s = 10;
	sim_serve_result *a = serve(&f, &c);
	c.replicas = 2;
	c.router = SIM_ROUTE_ROUND_ROBIN;
	sim_serve_result *b = serve(&f, &c);
	ck_assert_rel(sim_serve_get_metrics(b)->output_tokens_per_s, 2.0 * sim_serve_get_metrics(a)->output_tokens_per_s,
		      0.1);
	ck_assert_int_eq(sim_serve_get_metrics(b)->gpus, 2);
	sim_serve_result_free(a);
	sim_serve_result_free(b);
	fx_close(&f);
}
END_TEST

/* GSL's quantile of sorted data interpolates between order statistics: over 1..100 the P99
 * is 1 + 0.99 x 99 = 99.01 and the median 50.5. */
START_TEST(percentiles)
{
	double v[100];
	for (int i = 0; i < 100; i++)
		v[i] = (double)(100 - i);
	sim_pct p = sim_percentiles(v, 100);
	ck_assert_double_eq_tol(p.mean, 50.5, 1e-12);
	ck_assert_double_eq_tol(p.p50, 50.5, 1e-12);
	ck_assert_double_eq_tol(p.p90, 90.1, 1e-12);
	ck_assert_double_eq_tol(p.p99, 99.01, 1e-12);
	/* weighted: durations 1, 2, 3 ms over 50, 45 and 5 tokens */
	const double d[3] = {3e-3, 1e-3, 2e-3}, w[3] = {5, 50, 45};
	ck_assert_int_eq(sim_percentiles_weighted(d, w, 3, &p), 0);
	ck_assert_double_eq_tol(p.mean, (3e-3 * 5 + 1e-3 * 50 + 2e-3 * 45) / 100.0, 1e-15);
	ck_assert_double_eq(p.p50, 1e-3);
	ck_assert_double_eq(p.p90, 2e-3);
	ck_assert_double_eq(p.p99, 3e-3);
	p = sim_percentiles(v, 0);
	ck_assert_double_eq(p.p99, 0.0);
}
END_TEST

/* The long inputs take the radix sort: the answers must be the order statistics a plain
 * selection gives.  500 durations k ms (k = 1..500, shuffled, negative ones and ties among
 * them) with weight 1: the weighted P50 is the 250th smallest, P90 the 450th, P99 the 495th;
 * the unweighted sort must give the values in order. */
START_TEST(percentiles_long)
{
	enum { N = 500 };
	double d[N], w[N], v[N];
	for (int i = 0; i < N; i++) {
		int k = (i * 263) % N; /* 263 is prime to 500: a permutation of 0..499 */
		d[i] = (double)(k - 100) * 1e-3;
		w[i] = 1;
		v[i] = d[i];
	}
	sim_pct p;
	ck_assert_int_eq(sim_percentiles_weighted(d, w, N, &p), 0);
	ck_assert_double_eq_tol(p.p50, (250 - 1 - 100) * 1e-3, 1e-15);
	ck_assert_double_eq_tol(p.p90, (450 - 1 - 100) * 1e-3, 1e-15);
	ck_assert_double_eq_tol(p.p99, (495 - 1 - 100) * 1e-3, 1e-15);
	sim_pct q = sim_percentiles(v, N);
	for (int i = 0; i < N; i++)
		ck_assert_double_eq_tol(v[i], (double)(i - 100) * 1e-3, 1e-15);
	/* GSL: index (n - 1) x 0.5 = 249.5 between the 250th and 251st */
	ck_assert_double_eq_tol(q.p50, 149.5e-3, 1e-15);
	/* ties: every duration twice, weight 2 on one copy and 1 on the other; the P90 of total
	 * 1500 is reached at 1350 = 3 x 450: the 450th distinct duration */
	double d2[2 * N], w2[2 * N];
	for (int i = 0; i < N; i++) {
		d2[2 * i] = d2[2 * i + 1] = d[i];
		w2[2 * i] = 2;
		w2[2 * i + 1] = 1;
	}
	ck_assert_int_eq(sim_percentiles_weighted(d2, w2, 2 * N, &p), 0);
	ck_assert_double_eq_tol(p.p90, (450 - 1 - 100) * 1e-3, 1e-15);
	/* fractional weights take GSL's index sort: the same answers */
	for (int i = 0; i < N; i++)
		w[i] = 0.5;
	ck_assert_int_eq(sim_percentiles_weighted(d, w, N, &p), 0);
	ck_assert_double_eq_tol(p.p99, (495 - 1 - 100) * 1e-3, 1e-15);
}
END_TEST

static char *
json_of(fixture *f, const sim_serve_cfg *c)
{
	sim_serve_result *r = serve(f, c);
	cJSON *j = sim_serve_json(r);
	char *s = cJSON_Print(j);
	cJSON_Delete(j);
	sim_serve_result_free(r);
	return s;
}

/* Issue 16, item 9: memory does not grow with the output tokens.  The same run with every ITL
 * sample kept and with all but the first 10 in the histogram: the mean is the same, each
 * percentile at most 0.0085% (one bucket, 2^(1/8192) - 1) above the exact one, and the other
 * metrics identical. */
START_TEST(itl_in_bounded_memory)
{
	fixture f;
	fx_open(&f, "llama-3-8b");
	sim_serve_cfg c;
	sim_serve_cfg_init(&c);
	c.rate = 4;
	c.requests = 200;
	ck_assert_int_eq(sim_dist_parse("uniform:min=10,max=2000", &c.prompt, err, sizeof err), 0);
	ck_assert_int_eq(sim_dist_parse("uniform:min=20,max=400", &c.output, err, sizeof err), 0);
	sim_serve_result *exact = serve(&f, &c);
	c.itl_exact = 10;
	sim_serve_result *hist = serve(&f, &c);
	const sim_serve_metrics *a = sim_serve_get_metrics(exact), *b = sim_serve_get_metrics(hist);
	ck_assert_int_gt(a->iterations, 1000);
	ck_assert_rel(b->itl.mean, a->itl.mean, 1e-12);
	const double bucket = exp2(1.0 / 8192) - 1;
	const double ea[3] = {a->itl.p50, a->itl.p90, a->itl.p99}, eb[3] = {b->itl.p50, b->itl.p90, b->itl.p99};
	for (int q = 0; q < 3; q++) {
		ck_assert_msg(eb[q] >= ea[q] && eb[q] <= ea[q] * (1 + bucket), "quantile %d: %.12g against %.12g", q, eb[q],
			      ea[q]);
	}
	ck_assert(a->ttft.p99 == b->ttft.p99 && a->tpot.p50 == b->tpot.p50 && a->completed == b->completed);
	sim_serve_result_free(exact);
	sim_serve_result_free(hist);
	fx_close(&f);
}
END_TEST

START_TEST(seed_determinism)
{
	fixture f;
	fx_open(&f, "llama-3-8b");
	sim_serve_cfg c;
	cfg_init(&c);
	c.rate = 10;
	c.requests = 500;
	c.arrival = SIM_ARR_GAMMA;
	c.arrival_param = 2.0;
	ck_assert_int_eq(sim_dist_parse("lognormal:mean=800,sigma=0.6,max=6000", &c.prompt, err, sizeof err), 0);
	ck_assert_int_eq(sim_dist_parse("uniform:min=10,max=300", &c.output, err, sizeof err), 0);
	char *a = json_of(&f, &c), *b = json_of(&f, &c);
	ck_assert_str_eq(a, b);
	c.seed = 2;
	char *d = json_of(&f, &c);
	ck_assert_str_ne(a, d);
	free(a), free(b), free(d);
	fx_close(&f);
}
END_TEST

START_TEST(bad_distributions)
{
	sim_dist d;
	static const char *const bad[] = {"", "abc", "-5", "0", "uniform:min=10", "uniform:min=10,max=5",
					  "lognormal:mean=100,sigma=-1", "lognormal:sigma=0.5", "exponential:mean=0",
					  "gamma:mean=300,cv=0", "gamma:mean=nan,cv=1", "normal:mean=5", "512,max=-1",
					  "uniform:min=1,max=inf",
					  /* an item misspelt, not the distribution's, given twice or empty */
					  "lognormal:mean=800,sigma=0.6,mx=2000", "uniform:min=1,max=3,foo=9",
					  "uniform:min=1,max=3,min=5000", "exponential:mean=100,cv=3", "gamma:mean=100,cv=1,,,"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err[0] = '\0';
		ck_assert_msg(sim_dist_parse(bad[i], &d, err, sizeof err) == PP_EUSAGE, "\"%s\" accepted", bad[i]);
		ck_assert_msg(err[0] != '\0', "\"%s\": no message", bad[i]);
	}
	ck_assert_int_eq(sim_dist_parse("gamma:mean=300,cv=1.5", &d, err, sizeof err), 0);
	ck_assert_int_eq(d.kind, SIM_DIST_GAMMA);
	sim_arrival_kind k;
	double p;
	static const char *const badarr[] = {"", "uniform", "gamma:cv=-1", "gamma", "closed:0", "closed:x", "poisson:3",
					     "gamma:cv=2,cv=3", "gamma:cv=2,mean=4"};
	for (size_t i = 0; i < sizeof badarr / sizeof badarr[0]; i++)
		ck_assert_msg(sim_arrival_parse(badarr[i], &k, &p, err, sizeof err) == PP_EUSAGE, "\"%s\" accepted",
			      badarr[i]);
	ck_assert_int_eq(sim_arrival_parse("closed:16", &k, &p, err, sizeof err), 0);
	ck_assert_int_eq(k, SIM_ARR_CLOSED);
	ck_assert_double_eq(p, 16);
}
END_TEST

START_TEST(bad_configurations)
{
	fixture f;
	fx_open(&f, "llama-3-8b");
	sim_serve_cfg c;
	cfg_init(&c);
	sim_serve_result *r = NULL;
	c.rate = -3;
	ck_assert_int_eq(sim_serve(f.m, f.cost, &c, &r, err, sizeof err), PP_EUSAGE);
	ck_assert_ptr_nonnull(strstr(err, "--rate"));
	cfg_init(&c);
	c.tp = 3; /* 32 heads */
	ck_assert_int_eq(sim_serve(f.m, f.cost, &c, &r, err, sizeof err), PP_EUSAGE);
	ck_assert_ptr_nonnull(strstr(err, "divisible"));
	cfg_init(&c);
	c.gpu_memory_utilization = 1.5;
	ck_assert_int_eq(sim_serve(f.m, f.cost, &c, &r, err, sizeof err), PP_EUSAGE);
	cfg_init(&c);
	c.prefill_replicas = 1; /* and no decode replica */
	ck_assert_int_eq(sim_serve(f.m, f.cost, &c, &r, err, sizeof err), PP_EUSAGE);
	/* a request longer than the whole cache */
	cfg_init(&c);
	c.gpu_memory_utilization = 0.22;
	c.prompt.mean = 100000;
	ck_assert_int_eq(sim_serve(f.m, f.cost, &c, &r, err, sizeof err), PP_EUSAGE);
	ck_assert_ptr_nonnull(strstr(err, "KV cache"));
	ck_assert_ptr_null(r);
	model_free(f.m);
	/* Llama-3-405B on one 80 GB GPU */
	ck_assert_int_eq(model_load("llama-3-405b", &f.m, err, sizeof err), 0);
	cfg_init(&c);
	ck_assert_int_eq(sim_serve(f.m, f.cost, &c, &r, err, sizeof err), PP_EUSAGE);
	ck_assert_ptr_nonnull(strstr(err, "does not fit"));
	ck_assert_ptr_null(r);
	fx_close(&f);
}
END_TEST

static const char *
write_tmp(const char *dir, const char *name, const char *text)
{
	static char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	fputs(text, fp);
	fclose(fp);
	return path;
}

START_TEST(traces)
{
	const char *dir = test_tmpdir("servetrace");
	sim_request *q = NULL;
	size_t n = 0;
	ck_assert_int_eq(sim_trace_load(write_tmp(dir, "ok.csv", "arrival_s,prompt_tokens,output_tokens\n0,100,10\n0.5,200,20\n"),
				       &q, &n, err, sizeof err),
			 0);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(q[1].prompt, 200);
	free(q);
	ck_assert_int_eq(sim_trace_load(write_tmp(dir, "ok.jsonl",
						  "{\"arrival_s\": 0, \"prompt_tokens\": 100, \"output_tokens\": 10}\n\n"
						  "{\"arrival_s\": 1.5, \"prompt_tokens\": 300, \"output_tokens\": 30}\n"),
				       &q, &n, err, sizeof err),
			 0);
	ck_assert_int_eq(n, 2);
	ck_assert_double_eq(q[1].arrival_s, 1.5);
	free(q);
	static const struct {
		const char *name, *text, *expect;
	} bad[] = {
		{"dec.csv", "arrival_s,prompt_tokens,output_tokens\n1,100,10\n0.5,200,20\n", ":3"},
		{"col.csv", "arrival_s,prompt_tokens\n0,100\n", "output_tokens"},
		{"neg.csv", "arrival_s,prompt_tokens,output_tokens\n0,-100,10\n", ":2"},
		{"empty.csv", "", "empty.csv"},
		{"bad.jsonl", "{\"arrival_s\": 0, \"prompt_tokens\": 100, \"output_tokens\": 10}\n{\"arrival_s\": 1,\n", ":2"},
		{"type.jsonl", "{\"arrival_s\": \"soon\", \"prompt_tokens\": 100, \"output_tokens\": 10}\n", "arrival_s"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err[0] = '\0';
		q = NULL;
		int rc = sim_trace_load(write_tmp(dir, bad[i].name, bad[i].text), &q, &n, err, sizeof err);
		ck_assert_msg(rc != 0, "%s accepted", bad[i].name);
		ck_assert_msg(strstr(err, bad[i].expect) != NULL, "%s: \"%s\" does not name \"%s\"", bad[i].name, err,
			      bad[i].expect);
		ck_assert_ptr_null(q);
	}
	ck_assert_int_ne(sim_trace_load("/nonexistent/trace.csv", &q, &n, err, sizeof err), 0);
	test_rmdir(dir);
}
END_TEST

/* A trace replays its own arrivals: two requests far apart are each served alone. */
START_TEST(trace_replay)
{
	fixture f;
	fx_open(&f, "llama-3-8b");
	sim_request tr[2] = {{0.0, 4096, 1}, {100.0, 4096, 1}};
	sim_serve_cfg c;
	cfg_init(&c);
	c.arrival = SIM_ARR_TRACE;
	c.trace = tr;
	c.ntrace = 2;
	sim_serve_result *r = serve(&f, &c);
	const sim_serve_metrics *mt = sim_serve_get_metrics(r);
	ck_assert_int_eq(mt->completed, 2);
	ck_assert_rel(mt->ttft.p99, mt->ttft.p50, 1e-12);
	ck_assert_rel(mt->makespan_s, 100.0 + mt->ttft.mean, 1e-12);
	sim_serve_result_free(r);
	fx_close(&f);
}
END_TEST

/* ---- MoE serving: expert parallelism and attention data-parallelism ------------------------ */

/* The fixture with round collective figures on the DGX H100: 10 us to launch one collective,
 * 1 us a step inside the node and 5 us across, 0.80 of NVLink's 450 GB/s for an all-to-all's
 * bus bandwidth inside the node, 0.90 of a GPU's own 400 Gb/s NIC across nodes. */
static void
fx_open_moe(fixture *f, const char *model_name)
{
	f->db = h100_db();
	static const struct {
		const char *key;
		double v;
	} set[] = {{"coll_alpha_us", 10.0}, {"coll_hop_intra_us", 1.0}, {"coll_hop_inter_us", 5.0},
		   {"coll_eff_intra", 0.80}, {"coll_eff_inter", 0.90}};
	for (size_t i = 0; i < sizeof set / sizeof set[0]; i++)
		ck_assert_msg(hw_param_set(f->db, "system", "dgx-h100", set[i].key, set[i].v, "user", "test", "test", 0, err,
					   sizeof err) == 0,
			      "%s", err);
	ck_assert_int_eq(hw_cost_new(f->db, "dgx-h100", &f->cost, err, sizeof err), 0);
	ck_assert_msg(model_load(model_name, &f->m, err, sizeof err) == 0, "%s", err);
}

/* DeepSeek-V3 decoding 64 tokens on each of 8 ranks (EP 8, top 8 of 7168-wide hidden states):
 *   dispatch in fp8: 64 x 8 x 7168 x 1 B = 3,670,016 B a rank; combine in bf16: 7,340,032 B
 *   inside one node: 10 + 2 x 1 us + 3,670,016 x 7/8 / (450 GB/s x 0.80)  = 12 + 8.920 us
 *   over 2 nodes (16 ranks, 8 a node): half of each buffer leaves the node through the
 *   rank's own NIC at 400 Gb/s x 0.90 = 45 GB/s: 10 + 2 x 5 us + 1,835,008 B / 45 GB/s
 *                                                                         = 20 + 40.778 us */
START_TEST(moe_all_to_all_by_hand)
{
	fixture f;
	fx_open_moe(&f, "deepseek-v3");
	double d = sim_moe_a2a_bytes(64, 8, 7168, 1.0), cb = sim_moe_a2a_bytes(64, 8, 7168, 2.0);
	ck_assert_double_eq(d, 3670016.0);
	ck_assert_double_eq(cb, 7340032.0);
	ck_assert_rel(hw_cost_coll_time(f.cost, HW_ALL_TO_ALL, 8, 8, d, NULL), 12e-6 + 8.920e-6, 1e-3);
	ck_assert_rel(hw_cost_coll_time(f.cost, HW_ALL_TO_ALL, 16, 8, d, NULL), 20e-6 + 40.778e-6, 1e-3);
	/* the busiest of 8 expert ranks under uniform routing of 64 tokens x top 8 (mean 64 a
	 * rank, standard deviation sqrt(512 x 1/8 x 7/8) = 7.483): the expected largest of 8
	 * standard normals is 1.4236 (tables of normal order statistics), so about
	 * (64 + 1.4236 x 7.483) / 64 = 1.1665; Blom's approximation gives 1.1677 */
	ck_assert_rel(sim_moe_imbalance_floor(64, 8, 8), 1.1665, 0.002);
	ck_assert_double_eq(sim_moe_imbalance_floor(64, 8, 1), 1.0);
	/* one token, top 1, over 64 ranks: never beyond all of it on one rank */
	ck_assert(sim_moe_imbalance_floor(1, 1, 64) <= 64.0);
	fx_close(&f);
}
END_TEST

/* Per-GPU memory of Mixtral-8x7B (46,702,792,704 parameters; its 32 x 8 experts of 3 x 4096 x
 * 14336 = 45,097,156,608 of them; embedding and head 262,148,096) on 2 H100s, bf16:
 *   TP 2:                      46,702,792,704 x 2 B / 2                    = 46,702,792,704 B
 *   EP 2 with attention DP: the rest whole, half the experts:
 *                              1,605,636,096 x 2 B + 45,097,156,608 x 2 B / 2 = 48,308,428,800 B
 *   its KV cache per token holds all 8 KV heads: 2 x 8 x 128 x 32 x 2 B   =        131,072 B
 *   activations of its own 8192 tokens: 8192 x (4 x 4096 + 3 x 2 x 14336) x 2 B
 *                                       + 256 sequences' logits 32000 x 4 B =  1,710,489,600 B
 * DeepSeek-V3 (61 layers, 58 MoE of 256 experts of 3 x 7168 x 2048) on 8 B200s, EP 8 with
 * attention DP: fp8 weights hold the rest whole at 1 B (embeddings at 2 B) and an eighth of
 * the experts; fp4 (NVFP4) the experts at 0.5625 B; MLA's latent KV per token is
 * (512 + 64) x 61 x 2 B = 70,272 B whatever the parallelism. */
START_TEST(moe_memory_by_hand)
{
	fixture f;
	fx_open_moe(&f, "mixtral-8x7b");
	const hw_system *sys = hw_cost_system(f.cost);
	double cap = sys->gpu.memory_bytes;
	sim_serve_cfg c;
	cfg_init(&c);
	c.tp = 2;
	sim_serve_mem tp2, ep2;
	ck_assert_int_eq(sim_serve_memory(f.m, sys, &c, &tp2, err, sizeof err), 0);
	ck_assert_double_eq_tol(tp2.weights, 46702792704.0, 1.0);
	c.ep = 2;
	c.attention_dp = true;
	ck_assert_int_eq(sim_serve_memory(f.m, sys, &c, &ep2, err, sizeof err), 0);
	ck_assert_double_eq_tol(ep2.weights, 48308428800.0, 1.0);
	ck_assert_double_eq_tol(ep2.activations, 1710489600.0, 1.0);
	double kv = 0.9 * cap - 48308428800.0 - 1710489600.0 - 1073741824.0;
	ck_assert_int_eq(ep2.kv_blocks, (int64_t)(kv / 131072.0) / 16);
	/* EP alone (attention still TP 2) holds what TP 2 holds */
	c.attention_dp = false;
	ck_assert_int_eq(sim_serve_memory(f.m, sys, &c, &ep2, err, sizeof err), 0);
	ck_assert_double_eq_tol(ep2.weights, 46702792704.0, 1.0);
	model_free(f.m);
	hw_cost_free(f.cost);

	ck_assert_int_eq(hw_cost_new(f.db, "dgx-b200", &f.cost, err, sizeof err), 0);
	ck_assert_int_eq(model_load("deepseek-v3", &f.m, err, sizeof err), 0);
	sys = hw_cost_system(f.cost);
	double routed = 58.0 * 256.0 * 3.0 * 7168.0 * 2048.0;
	double emb = model_embedding_params(f.m) + model_head_params(f.m);
	double rest = model_params(f.m) - routed - emb;
	cfg_init(&c);
	c.tp = 8;
	c.ep = 8;
	c.attention_dp = true;
	c.weights = HW_FP8;
	sim_serve_mem d;
	ck_assert_int_eq(sim_serve_memory(f.m, sys, &c, &d, err, sizeof err), 0);
	ck_assert_double_eq_tol(d.weights, rest * 1.0 + emb * 2.0 + routed / 8.0, 1.0);
	cap = sys->gpu.memory_bytes;
	double act = 8192.0 * (4.0 * 7168.0 + 3.0 * 8.0 * 2048.0) * 2.0 + 256.0 * 129280.0 * 4.0;
	ck_assert_double_eq_tol(d.activations, act, 1.0);
	ck_assert_int_eq(d.kv_blocks, (int64_t)((0.9 * cap - d.weights - act - 1073741824.0) / 70272.0) / 16);
	c.weights = HW_FP4;
	ck_assert_int_eq(sim_serve_memory(f.m, sys, &c, &d, err, sizeof err), 0);
	ck_assert_double_eq_tol(d.weights, rest * 1.0 + emb * 2.0 + routed * 0.5625 / 8.0, 1.0);
	fx_close(&f);
}
END_TEST

/* Mixtral-8x7B on 2 H100s, EP 2 with attention DP, two sequences of 128 prompt tokens
 * decoding 64 more: each GPU decodes its own one, so each step reads, at 3.35 TB/s x 0.90:
 *   attention 32 x (4096 x 6144 + 4096 x 4096) = 1,342,177,280 weights, the router 1,048,576,
 *   the LM head 131,072,000, and the experts its token and the other GPU's pick (2 x 2
 *   assignments over 8 experts: each of its 4 local ones is hit with probability
 *   1 - (7/8)^4, 1.6553 of them) 32 x 1.6553 x 176,160,768 = 9,331,015,680;
 *   in all 10,805,313,536 weights x 2 B / 3.015 TB/s                         = 7.168 ms
 *   its cache, about 160 tokens x 128 KiB                                       = 0.007 ms
 *   per layer a dispatch and a combine of one token's 2 copies of 4096 bf16 values (16 KiB
 *   a rank) among 2 GPUs: 64 x (10 + 2 x 1 us + 8 KiB / (450 GB/s x 0.80))        = 0.770 ms
 *   the engine's 2 ms                                                           = 2.000 ms
 *   TPOT                                                                        = 9.945 ms
 * and no TP all-reduce at all.  Within 3% (tile quantization of the tiny GEMMs, norms). */
START_TEST(moe_decode_by_hand)
{
	fixture f;
	fx_open_moe(&f, "mixtral-8x7b");
	sim_serve_cfg c;
	lone(&c, 128, 65);
	c.requests = 2;
	c.tp = 2;
	c.ep = 2;
	c.attention_dp = true;
	sim_serve_result *r = serve(&f, &c);
	const sim_serve_metrics *mt = sim_serve_get_metrics(r);
	ck_assert_rel(mt->tpot.mean, 9.945e-3, 0.03);
	/* the first arrival starts an iteration alone, the second prefills beside its first decode
	 * step: 1 + 65 */
	ck_assert_int_eq(mt->iterations, 66);
	ck_assert_int_eq(mt->gpus, 2);
	sim_serve_result_free(r);
	/* an imbalance stated by the user slows only the expert GEMMs, which are weight-bound
	 * here: the same step */
	c.moe_imbalance = 1.5;
	r = serve(&f, &c);
	ck_assert_rel(sim_serve_get_metrics(r)->tpot.mean, 9.945e-3, 0.03);
	sim_serve_result_free(r);
	fx_close(&f);
}
END_TEST

/* The named datasets: the means and deviations as the sources state them (docs/validation.md:
 * MLPerf's accuracy targets and the per-sample summaries of the official datasets), read here
 * from the sources, not from the table. */
START_TEST(datasets_as_sourced)
{
	static const struct {
		const char *name;
		double prompt, prompt_sd, output, output_sd;
	} want[] = {
		{"mlperf-llama2-70b", 222.33, 171.5, 294.45, 0},       /* output sd: a shape, not a source figure */
		{"mlperf-llama3.1-405b", 9428.64, 4066.9, 684.68, 260.8},
		{"mlperf-llama3.1-8b", 870.73, 430.1, 0, 0},
		{"mlperf-mixtral-8x7b", 427.39, 328.6, 144.84, 112.7},
		{"mlperf-deepseek-r1", 803.79, 405.6, 3886.2274, 0},
		{"sharegpt", 229.711, 0, 203.068, 0},
	};
	ck_assert_uint_eq(sim_dataset_count(), sizeof want / sizeof want[0]);
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		const sim_dataset *d = sim_dataset_find(want[i].name);
		ck_assert_msg(d != NULL, "%s not found", want[i].name);
		char q[64];
		snprintf(q, sizeof q, "dataset:%s", want[i].name);
		ck_assert_ptr_eq(sim_dataset_find(q), d);
		ck_assert_double_eq_tol(d->prompt.mean, want[i].prompt, 0.01);
		ck_assert_double_eq_tol(d->output.mean, want[i].output, 0.01);
		if (want[i].prompt_sd > 0)
			ck_assert_double_eq_tol(d->prompt.sd, want[i].prompt_sd, 0.05);
		if (want[i].output_sd > 0)
			ck_assert_double_eq_tol(d->output.sd, want[i].output_sd, 0.05);
		ck_assert_ptr_nonnull(d->prompt_source);
		ck_assert_ptr_nonnull(d->output_source);
		sim_dist p;
		ck_assert_int_eq(sim_dist_parse_len(want[i].name, false, &p, err, sizeof err), 0);
		if (want[i].prompt_sd > 0) {
			/* a gamma of that mean and coefficient of variation: shape 1/CV^2, scale mean/shape */
			double cv = want[i].prompt_sd / want[i].prompt;
			ck_assert_int_eq(p.kind, SIM_DIST_GAMMA);
			ck_assert_double_eq_tol(p.a, 1.0 / (cv * cv), 1e-3);
			ck_assert_double_eq_tol(p.a * p.b, want[i].prompt, 0.01);
			ck_assert_double_eq((double)d->prompt.max, p.max);
		} else {
			ck_assert_int_eq(p.kind, SIM_DIST_FIXED);
			ck_assert_double_eq(p.mean, 230); /* 229.711 rounded */
		}
	}
	/* MLPerf's Server and Interactive P99 limits, loadgen/mlperf.conf */
	const sim_dataset *d = sim_dataset_find("mlperf-llama2-70b");
	ck_assert_double_eq(d->server_ttft_ms, 2000);
	ck_assert_double_eq(d->server_tpot_ms, 200);
	ck_assert_double_eq(d->interactive_ttft_ms, 450);
	ck_assert_double_eq(d->interactive_tpot_ms, 40);
	d = sim_dataset_find("mlperf-llama3.1-405b");
	ck_assert_double_eq(d->server_ttft_ms, 6000);
	ck_assert_double_eq(d->server_tpot_ms, 175);
	/* refusals: an unknown name lists the known ones; a length no source states names why */
	sim_dist x;
	ck_assert_int_eq(sim_dist_parse_len("dataset:openorca", false, &x, err, sizeof err), PP_EUSAGE);
	ck_assert_ptr_nonnull(strstr(err, "mlperf-llama2-70b"));
	ck_assert_int_eq(sim_dist_parse_len("mlperf-llama3.1-8b", true, &x, err, sizeof err), PP_EUSAGE);
	ck_assert_ptr_nonnull(strstr(err, "mlperf-llama3.1-8b"));
	ck_assert_ptr_null(sim_dataset_find("mlperf"));
	/* plain distributions still parse */
	ck_assert_int_eq(sim_dist_parse_len("512", true, &x, err, sizeof err), 0);
	ck_assert_double_eq(x.mean, 512);
}
END_TEST

/* The drawn prompts of a run have the dataset's mean: (total - output tokens/s) / requests/s
 * over 4000 requests of mlperf-llama2-70b's prompts is 222.33 within the sampling error
 * (sd 171.5 / sqrt(4000) = 2.7 tokens, 1.2%) and the clip at 1024 (-0.1%): 4% holds. */
START_TEST(dataset_lengths_drawn)
{
	fixture f;
	fx_open(&f, "llama-3-8b");
	sim_serve_cfg c;
	cfg_init(&c);
	c.rate = 20;
	c.requests = 4000;
	ck_assert_int_eq(sim_dist_parse_len("mlperf-llama2-70b", false, &c.prompt, err, sizeof err), 0);
	ck_assert_int_eq(sim_dist_parse_len("16", true, &c.output, err, sizeof err), 0);
	sim_serve_result *r = serve(&f, &c);
	const sim_serve_metrics *m = sim_serve_get_metrics(r);
	double prompt = (m->total_tokens_per_s - m->output_tokens_per_s) / m->requests_per_s;
	ck_assert_msg(fabs(prompt / 222.33 - 1) < 0.04, "mean prompt %.1f", prompt);
	sim_serve_result_free(r);
	fx_close(&f);
}
END_TEST

START_TEST(moe_bad_configurations)
{
	fixture f;
	fx_open_moe(&f, "mixtral-8x7b");
	sim_serve_cfg c;
	sim_serve_result *r = NULL;
	cfg_init(&c);
	c.tp = 4;
	c.ep = 3; /* divides neither 4 GPUs nor 8 experts */
	ck_assert_int_eq(sim_serve(f.m, f.cost, &c, &r, err, sizeof err), PP_EUSAGE);
	ck_assert_ptr_nonnull(strstr(err, "--ep"));
	cfg_init(&c);
	c.tp = 2;
	c.attention_dp = true; /* without --ep */
	ck_assert_int_eq(sim_serve(f.m, f.cost, &c, &r, err, sizeof err), PP_EUSAGE);
	ck_assert_ptr_nonnull(strstr(err, "--attention-dp"));
	cfg_init(&c);
	c.tp = 2;
	c.weights = HW_FP4; /* the H100 has no fp4 tensor cores */
	ck_assert_int_eq(sim_serve(f.m, f.cost, &c, &r, err, sizeof err), PP_EUSAGE);
	ck_assert_ptr_nonnull(strstr(err, "--weights fp4"));
	ck_assert_ptr_null(r);
	model_free(f.m);
	ck_assert_int_eq(model_load("llama-3-8b", &f.m, err, sizeof err), 0);
	cfg_init(&c);
	c.tp = 2;
	c.ep = 2; /* a dense model */
	ck_assert_int_eq(sim_serve(f.m, f.cost, &c, &r, err, sizeof err), PP_EUSAGE);
	ck_assert_ptr_nonnull(strstr(err, "no experts"));
	fx_close(&f);
}
END_TEST

/* The engine settings a serving row states, as the notes of the MLPerf and blog rows write
 * them (../shared/validation/serving-2024-2025.csv), read by hand. */
START_TEST(stated_settings)
{
	static const char *const seqs[] = {"max_num_seqs", "max-num-seqs", "max_batch_size", "batch_size", NULL};
	static const char *const toks[] = {"max_num_tokens", "max_num_batched_tokens", "max-num-batched-tokens", NULL};
	static const char *const steps[] = {"num_scheduler_steps", NULL};
	const char *a = "harness: batch_size 896 (Server) / 806 (Offline); max_num_tokens 3584 (Offline/Server), 768 "
			"(Interactive)";
	ck_assert_double_eq(val_stated_setting(a, seqs, 0), 806);
	ck_assert_double_eq(val_stated_setting(a, seqs, 1), 896);
	ck_assert_double_eq(val_stated_setting(a, seqs, 2), 0); /* not stated for Interactive */
	ck_assert_double_eq(val_stated_setting(a, toks, 1), 3584);
	ck_assert_double_eq(val_stated_setting(a, toks, 2), 768);
	const char *b = "num_scheduler_steps 11/9/8 (Offline/Server/Interactive), max_num_seqs 1792/650/600";
	ck_assert_double_eq(val_stated_setting(b, steps, 1), 9);
	ck_assert_double_eq(val_stated_setting(b, seqs, 2), 600); /* unlabelled: Offline, Server, Interactive */
	const char *c = "num_scheduler_steps 7 (Offline)/9 (Server), max_num_seqs 2700/1024";
	ck_assert_double_eq(val_stated_setting(c, steps, 0), 7);
	ck_assert_double_eq(val_stated_setting(c, steps, 1), 9);
	ck_assert_double_eq(val_stated_setting(c, seqs, 1), 1024);
	const char *d = "config: max_batch_size 512; batch_size 3072";
	ck_assert_double_eq(val_stated_setting(d, seqs, 0), 512); /* the first key stated wins */
	ck_assert_double_eq(val_stated_setting("tuned: --num-scheduler-steps 15 --max-num-seqs 1024", seqs, -1), 1024);
	ck_assert_double_eq(val_stated_setting("max_num_seqs 1232/858", seqs, -1), 0); /* per scenario, none named */
	ck_assert_double_eq(val_stated_setting("my_batch_size 64, batch_sizes 8", seqs, 0), 0); /* not whole keys */
	ck_assert_double_eq(val_stated_setting("batch_size", seqs, 0), 0);
	ck_assert_double_eq(val_stated_setting("", seqs, 0), 0);
	static const char *const mem[] = {"gpu_memory_utilization", "gpu-memory-utilization", NULL};
	const char *e = "tp=1 pp=1 dp=8; gpu_memory_utilization 0.95; max_num_seqs 1232/858, max_num_batched_tokens 8192";
	ck_assert_double_eq(val_stated_setting(e, mem, 0), 0.95);
	ck_assert_double_eq(val_stated_setting(e, seqs, 1), 858);
	ck_assert_double_eq(val_stated_setting("vllm serve --gpu-memory-utilization=0.9", mem, -1), 0.9);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("serve");
	TCase *tc = tcase_create("serve");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, kv_capacity_by_hand);
	tcase_add_test(tc, banded_intervals_by_hand);
	tcase_add_test(tc, speed_scales_the_clock);
	tcase_add_test(tc, prefill_ttft_by_hand);
	tcase_add_test(tc, decode_tpot_by_hand);
	tcase_add_test(tc, decode_gqa_sharing_by_hand);
	tcase_add_test(tc, chunked_prefill_iterations);
	tcase_add_test(tc, prefix_cache_by_hand);
	tcase_add_test(tc, speculative_by_hand);
	tcase_add_test(tc, littles_law);
	tcase_add_test(tc, saturation);
	tcase_add_test(tc, preemption);
	tcase_add_test(tc, admission_reserve);
	tcase_add_test(tc, offline_by_replica);
	tcase_add_test(tc, pipeline_batches_in_flight);
	tcase_add_test(tc, disaggregation_adds_kv_transfer);
	tcase_add_test(tc, replicas_scale);
	tcase_add_test(tc, percentiles);
	tcase_add_test(tc, percentiles_long);
	tcase_add_test(tc, seed_determinism);
	tcase_add_test(tc, itl_in_bounded_memory);
	tcase_add_test(tc, bad_distributions);
	tcase_add_test(tc, datasets_as_sourced);
	tcase_add_test(tc, dataset_lengths_drawn);
	tcase_add_test(tc, bad_configurations);
	tcase_add_test(tc, traces);
	tcase_add_test(tc, trace_replay);
	tcase_add_test(tc, graph_buckets);
	tcase_add_test(tc, host_time_per_sequence);
	tcase_add_test(tc, overlap_schedule);
	tcase_add_test(tc, launch_floor_and_graphs);
	tcase_add_test(tc, prefill_modes);
	tcase_add_test(tc, whole_prompt_budget);
	tcase_add_test(tc, engine_defaults);
	tcase_add_test(tc, engine_intervals_by_hand);
	tcase_add_test(tc, released_weights);
	tcase_add_test(tc, quantization_crossover);
	tcase_add_test(tc, moe_all_to_all_by_hand);
	tcase_add_test(tc, moe_memory_by_hand);
	tcase_add_test(tc, moe_decode_by_hand);
	tcase_add_test(tc, moe_bad_configurations);
	tcase_add_test(tc, stated_settings);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return test_run(suite());
}
