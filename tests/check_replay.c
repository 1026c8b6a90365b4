/*
 * check_replay.c -- the replay of a plan, everything of it that needs no GPU: the op list the
 * simulator records (its FLOPs against the simulator's own count and against hand-worked layer
 * formulas, its collectives counted by hand, its order against the simulated times), the groups
 * (a partition of the ranks, placed as sim_place assumes, and the members the full mode's
 * collectives actually join), the lowering into launches (the same FLOPs and bytes, one
 * communicator per group and stream whose members issue the same calls in the same order), the
 * plan documents (and every way they can be wrong), packing for MPI, the validation-run storage
 * (one transaction), and the replay of a build without CUDA (gpu_none.c is compiled into this
 * program).
 */
#include "config.h"
#include "calibrate/cal.h"
#include "calibrate/cal_int.h"
#include "sim/train_int.h"
#include "testutil.h"

#include <cJSON.h>
#include <sqlite3.h>

static char err[1024];

typedef struct fixture {
	hw_db *db;
	hw_cost *cost;
	model *m;
	sim_train_result *r;
} fixture;

static void
setup(fixture *f, const char *model_name_, const char *system)
{
	memset(f, 0, sizeof *f);
	ck_assert_msg(hw_open(":memory:", 0, &f->db, err, sizeof err) == 0, "%s", err);
	ck_assert_msg(model_load(model_name_, &f->m, err, sizeof err) == 0, "%s", err);
	ck_assert_msg(hw_cost_new(f->db, system, &f->cost, err, sizeof err) == 0, "%s", err);
}

static void
simulate(fixture *f, sim_train_cfg *c)
{
	c->record_ops = true;
	ck_assert_msg(sim_train(f->m, f->cost, c, &f->r, err, sizeof err) == 0, "%s", err);
}

static void
teardown(fixture *f)
{
	sim_train_result_free(f->r);
	hw_cost_free(f->cost);
	model_free(f->m);
	hw_close(f->db);
}

static sim_rank_ops *
rank_ops(const fixture *f, int rank)
{
	sim_rank_ops *o;
	ck_assert_msg(sim_train_rank_ops(f->r, rank, &o, err, sizeof err) == 0, "%s", err);
	return o;
}

/* A configuration on `gpus` GPUs with the rest at its defaults. */
static sim_train_cfg
cfg(int gpus, int tp, int pp, int64_t mb, int64_t gb)
{
	sim_train_cfg c;
	sim_train_cfg_init(&c);
	c.gpus = gpus;
	c.tp = tp;
	c.pp = pp;
	c.micro_batch = mb;
	c.global_batch = gb;
	return c;
}

/* ---- FLOPs --------------------------------------------------------------------------------- */

/* Every kernel's FLOPs from its own shape (a GEMM: 2 m n k batch; flash attention:
 * 2 b h sq sk (dqk + dv), half of it causal, 2.5 x backward), summed per op, equal the
 * simulator's FLOPs of that op; summed over a stage's ranks and the stages, its executed FLOPs. */
static void
check_flops(const fixture *f)
{
	const sim_train_cfg *c = sim_train_config(f->r);
	int stride = c->tp * c->cp * c->dp;
	double total = 0;
	for (int s = 0; s < c->pp; s++) {
		sim_rank_ops *o = rank_ops(f, s * stride);
		for (size_t i = 0; i < o->nops; i++) {
			const sim_rop *op = &o->ops[i];
			if (op->kind != SIM_OP_COMPUTE)
				continue;
			double sum = 0;
			for (size_t k = op->k0; k < op->k0 + op->nk; k++) {
				const hw_kernel *kk = &o->kernels[k].hk;
				double fl = 0;
				if (kk->kind == HW_K_GEMM)
					fl = 2.0 * kk->m * kk->n * kk->k * kk->batch;
				else if (kk->kind == HW_K_ATTN)
					fl = 2.0 * kk->b * kk->heads * kk->sq * kk->sk * (kk->dqk + kk->dv) * kk->density *
					     (kk->bwd ? 2.5 : 1.0);
				ck_assert_msg(fabs(fl - hw_kernel_flops(kk)) <= 1e-9 * fl,
					      "kernel %zu of op %zu: shape gives %g FLOPs, the cost model counts %g", k, i, fl,
					      hw_kernel_flops(kk));
				sum += fl;
			}
			char lb[96];
			ck_assert_msg(fabs(sum - op->flops) <= 1e-9 * op->flops + 1.0, "rank %d op %zu (%s): kernels %g, simulator %g",
				      o->rank, i, sim_op_label(op->tag, lb, sizeof lb), sum, op->flops);
			total += sum;
		}
		sim_rank_ops_free(o);
	}
	double executed = sim_train_metrics(f->r)->executed_flops;
	ck_assert_rel(total * stride, executed, 1e-9);
}

START_TEST(flops_equal_the_simulators)
{
	static const struct {
		const char *model, *system;
		int gpus, tp, pp, cp, ep, vpp, zero;
		int64_t mb, gb, seq;
		sim_schedule sched;
		sim_recompute rc;
		bool sp;
		sim_attention attn;
		hw_dtype dt;
	} cases[] = {
		{"llama-3-8b", "dgx-h100", 8, 2, 2, 1, 1, 1, 0, 1, 8, 2048, SIM_1F1B, SIM_RECOMPUTE_NONE, false, SIM_ATTN_FLASH, HW_BF16},
		{"llama-3-8b", "dgx-h100", 16, 2, 2, 2, 1, 1, 1, 1, 16, 4096, SIM_1F1B, SIM_RECOMPUTE_FULL, true, SIM_ATTN_FLASH, HW_BF16},
		{"gpt-1.7b", "dgx-a100", 8, 2, 2, 1, 1, 2, 0, 1, 16, 0, SIM_INTERLEAVED, SIM_RECOMPUTE_SELECTIVE, true,
		 SIM_ATTN_UNFUSED, HW_BF16},
		{"mixtral-8x7b", "dgx-h100", 16, 2, 4, 1, 2, 1, 1, 1, 16, 1024, SIM_1F1B, SIM_RECOMPUTE_NONE, true, SIM_ATTN_FLASH,
		 HW_BF16},
		{"mpt-125m", "dgx-h100", 4, 1, 2, 1, 1, 1, 3, 2, 16, 0, SIM_ZB_H1, SIM_RECOMPUTE_NONE, false, SIM_ATTN_FLASH, HW_FP8},
		{"resnet-50", "dgx-a100", 8, 1, 1, 1, 1, 1, 0, 32, 512, 0, SIM_1F1B, SIM_RECOMPUTE_NONE, false, SIM_ATTN_FLASH, HW_FP16},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		fixture f;
		setup(&f, cases[i].model, cases[i].system);
		sim_train_cfg c = cfg(cases[i].gpus, cases[i].tp, cases[i].pp, cases[i].mb, cases[i].gb);
		c.cp = cases[i].cp;
		c.ep = cases[i].ep;
		c.vpp = cases[i].vpp;
		c.zero = cases[i].zero;
		c.seq = cases[i].seq;
		c.schedule = cases[i].sched;
		c.recompute = cases[i].rc;
		c.sequence_parallel = cases[i].sp;
		c.attention = cases[i].attn;
		c.dtype = cases[i].dt;
		simulate(&f, &c);
		check_flops(&f);
		teardown(&f);
	}
}
END_TEST

/* Llama-3-8B (h 4096, 32 heads of 128, 8 KV heads, SwiGLU 14336, vocab 128256) on tp 2, pp 2,
 * dp 2, four micro-batches of one 2048-token sequence: a layer's forward GEMMs on a rank are
 * 2 T h [(a + 2g) d + a d + 3 f] / t, its backward twice that; the last stage adds the LM head,
 * 3 x 2 T h V / t.  Attention: 2 b (a / t) s^2 2d / 2 forward, 2.5 x that backward. */
START_TEST(hand_counted_gemm_flops)
{
	fixture f;
	setup(&f, "llama-3-8b", "dgx-h100");
	sim_train_cfg c = cfg(8, 2, 2, 1, 8);
	c.seq = 2048;
	simulate(&f, &c);
	double T = 2048, h = 4096, a = 32, g = 8, d = 128, ff = 14336, V = 128256, t = 2, m = 4, L = 16;
	double layer = 2.0 * T * h * ((a + 2 * g) * d + a * d + 3 * ff) / t;
	double attn = 2.0 * 1 * (a / t) * T * T * 2 * d / 2;
	for (int s = 0; s < 2; s++) {
		sim_rank_ops *o = rank_ops(&f, s * 4);
		double gemm = 0, att = 0;
		for (size_t k = 0; k < o->nkernels; k++) {
			const hw_kernel *kk = &o->kernels[k].hk;
			if (kk->kind == HW_K_GEMM)
				gemm += hw_kernel_flops(kk);
			else if (kk->kind == HW_K_ATTN)
				att += hw_kernel_flops(kk);
		}
		double want = m * L * 3.0 * layer + (s == 1 ? m * 3.0 * 2.0 * T * h * V / t : 0.0);
		ck_assert_rel(gemm, want, 1e-12);
		ck_assert_rel(att, m * L * 3.5 * attn, 1e-12);
		sim_rank_ops_free(o);
	}
	teardown(&f);
}
END_TEST

/* ---- collectives counted by hand ----------------------------------------------------------- */

typedef struct counts {
	int coll[SIM_NGROUPS][HW_NCOLL];
	int send[SIM_NSTREAMS], recv[SIM_NSTREAMS];
} counts;

static void
count(const sim_rank_ops *o, counts *n)
{
	memset(n, 0, sizeof *n);
	for (size_t i = 0; i < o->nops; i++) {
		const sim_rop *op = &o->ops[i];
		if (op->kind == SIM_OP_COLL)
			n->coll[op->group][op->coll]++;
		else if (op->kind == SIM_OP_SEND)
			n->send[op->stream]++;
		else if (op->kind == SIM_OP_RECV)
			n->recv[op->stream]++;
	}
}

/* tp 2, pp 2, dp 2, 1F1B, m micro-batches, one gradient bucket: per rank and micro-batch each of
 * its L layers all-reduces twice forward and twice backward over TP (plus twice for a recomputed
 * forward); stage 0 sends m activations and receives m gradients, stage 1 the reverse; one DP
 * all-reduce (a reduce-scatter with ZeRO-1); tied embeddings add one all-reduce between the first
 * and last stage. */
START_TEST(hand_counted_collectives)
{
	for (int variant = 0; variant < 4; variant++) {
		fixture f;
		bool tied = variant == 1, full = variant == 2, sp = variant == 3;
		setup(&f, tied ? "mpt-125m" : "llama-3-8b", "dgx-h100");
		int m = 6;
		sim_train_cfg c = cfg(8, 2, 2, 1, 2 * m);
		c.seq = 1024;
		c.bucket_bytes = 1e15;
		c.recompute = full ? SIM_RECOMPUTE_FULL : SIM_RECOMPUTE_NONE;
		c.sequence_parallel = sp;
		if (variant == 1)
			c.zero = 1;
		simulate(&f, &c);
		int L = tied ? 6 : 16;
		for (int s = 0; s < 2; s++) {
			sim_rank_ops *o = rank_ops(&f, s * 4 + 1);
			counts n;
			count(o, &n);
			int per_layer = full ? 6 : 4;
			if (sp) {
				ck_assert_int_eq(n.coll[SIM_G_TP][HW_ALL_GATHER], per_layer * L * m);
				ck_assert_int_eq(n.coll[SIM_G_TP][HW_REDUCE_SCATTER], per_layer * L * m);
				ck_assert_int_eq(n.coll[SIM_G_TP][HW_ALL_REDUCE], 0);
			} else {
				ck_assert_int_eq(n.coll[SIM_G_TP][HW_ALL_REDUCE], per_layer * L * m);
			}
			ck_assert_int_eq(n.send[SIM_S_PP_SEND_FWD], s == 0 ? m : 0);
			ck_assert_int_eq(n.recv[SIM_S_PP_RECV_BWD], s == 0 ? m : 0);
			ck_assert_int_eq(n.recv[SIM_S_PP_RECV_FWD], s == 1 ? m : 0);
			ck_assert_int_eq(n.send[SIM_S_PP_SEND_BWD], s == 1 ? m : 0);
			ck_assert_int_eq(n.coll[SIM_G_DP][c.zero >= 1 ? HW_REDUCE_SCATTER : HW_ALL_REDUCE], 1);
			ck_assert_int_eq(n.coll[SIM_G_EMB][HW_ALL_REDUCE], tied ? 1 : 0);
			ck_assert_int_eq(n.coll[SIM_G_CP][HW_SEND_RECV] + n.coll[SIM_G_EP][HW_ALL_TO_ALL], 0);
			/* a TP collective leaving a block waits for the compute op launched last before
			 * it (the one that produced its input), and the next compute op of the rank
			 * waits for every TP collective */
			for (size_t i = 0; i < o->nops; i++) {
				const sim_rop *x = &o->ops[i];
				if (x->kind != SIM_OP_COLL || x->group != SIM_G_TP)
					continue;
				size_t prev = i;
				while (prev > 0 && o->ops[prev - 1].kind != SIM_OP_COMPUTE)
					prev--;
				bool produced = prev == 0, consumed = false;
				for (size_t d = x->d0; d < x->d0 + x->nd; d++)
					produced |= o->deps[d] == prev - 1;
				for (size_t j = i + 1; j < o->nops && !consumed; j++)
					if (o->ops[j].kind == SIM_OP_COMPUTE) {
						for (size_t d = o->ops[j].d0; d < o->ops[j].d0 + o->ops[j].nd; d++)
							consumed |= o->deps[d] == i;
						if (o->ops[j].start_ps >= x->end_ps)
							break; /* the first compute op after the collective in time */
					}
				/* (an all-gather entering a block at the start of a job waits for nothing: the
				 * simulator resets a rank's last op per job and links the pipeline receive to
				 * the job's first compute op only) */
				ck_assert_msg((produced || x->coll == HW_ALL_GATHER) && consumed,
					      "TP collective %zu: produced %d, consumed %d", i, produced, consumed);
			}
			/* the peers: the same TP/CP/DP coordinates on the other stage */
			for (size_t i = 0; i < o->nops; i++)
				if (o->ops[i].kind == SIM_OP_SEND || o->ops[i].kind == SIM_OP_RECV)
					ck_assert_int_eq(o->ops[i].peer, s == 0 ? 5 : 1);
			sim_rank_ops_free(o);
		}
		teardown(&f);
	}
}
END_TEST

/* Context parallelism exchanges K/V once per layer forward and once backward; expert
 * parallelism all-to-alls twice per MoE layer each way. */
START_TEST(cp_and_ep_collectives)
{
	fixture f;
	setup(&f, "llama-3-8b", "dgx-h100");
	sim_train_cfg c = cfg(8, 2, 1, 1, 8);
	c.cp = 2;
	c.seq = 4096;
	simulate(&f, &c);
	sim_rank_ops *o = rank_ops(&f, 3);
	counts n;
	count(o, &n);
	ck_assert_int_eq(n.coll[SIM_G_CP][HW_SEND_RECV], 2 * 32 * 4);
	for (size_t i = 0; i < o->nops; i++)
		if (o->ops[i].kind == SIM_OP_COLL && o->ops[i].group == SIM_G_CP)
			ck_assert_int_eq(o->ops[i].group_size, 2);
	sim_rank_ops_free(o);
	teardown(&f);

	setup(&f, "mixtral-8x7b", "dgx-h100");
	c = cfg(16, 2, 2, 1, 16);
	c.ep = 4;
	c.seq = 1024;
	simulate(&f, &c);
	o = rank_ops(&f, 9);
	count(o, &n);
	ck_assert_int_eq(n.coll[SIM_G_EP][HW_ALL_TO_ALL], 4 * 16 * 4);
	sim_rank_ops_free(o);
	teardown(&f);
}
END_TEST

/* DeepEP's exchange, by hand.  Qwen3-30B-A3B (h 2048, 128 experts, top-8, 48 MoE layers) on
 * 16 H100 in two nodes, tp 1, ep 16, one 1024-token sequence per micro-batch, two per rank:
 *   - the all-to-all each rank sends is 1024 x 8 x 2048 x 2 B = 33,554,432 B, of which
 *     (16 - 8) / 16 leaves the node: 4 copies of each token;
 *   - DeepEP sends a token to the other node once when one of its 8 experts is there: the 64
 *     experts of the other node hold none of the 8 with probability C(64, 8) / C(128, 8) =
 *     4,426,165,368 / 1,429,702,652,400, so a token crosses 0.99690414 times, and the
 *     exchange is priced as 33,554,432 x 0.99690414 / 4 B;
 *   - inside one node, ep 16 of 8 experts a rank, DeepEP sends a token once to each other rank
 *     holding one of its experts: a rank holds none of the 8 with probability C(120, 8) /
 *     C(128, 8) = 840,261,910,995 / 1,429,702,652,400, so a token goes to 15 x 0.41228205 =
 *     6.1842308 other ranks, where the all-to-all sends 8 x 15 / 16 = 7.5 of its copies;
 *   - without DeepEP the bytes stay those of the all-to-all. */
START_TEST(deepep_hand_worked)
{
	const double a2a = 1024.0 * 8 * 2048 * 2, crossed = 1.0 - 4426165368.0 / 1429702652400.0;
	sim_train_cfg k = cfg(16, 1, 1, 1, 32);
	k.ep = 16;
	ck_assert_rel(sim_ep_dispatch_scale(&k, 128, 8, 8), 1.0, 1e-15); /* the all-to-all */
	k.ep_deepep = true;
	ck_assert_rel(sim_ep_dispatch_scale(&k, 128, 8, 8), crossed / 4.0, 1e-12);
	const double ranks = 15.0 * (1.0 - 840261910995.0 / 1429702652400.0);
	ck_assert_rel(sim_ep_dispatch_scale(&k, 128, 8, 16), ranks / 7.5, 1e-12); /* one node */
	for (int deepep = 0; deepep < 2; deepep++) {
		fixture f;
		setup(&f, "qwen3-30b-a3b", "dgx-h100");
		sim_train_cfg c = cfg(16, 1, 1, 1, 32);
		c.ep = 16;
		c.seq = 1024;
		c.ep_deepep = deepep;
		simulate(&f, &c);
		sim_rank_ops *o = rank_ops(&f, 5);
		int n = 0;
		for (size_t i = 0; i < o->nops; i++) {
			const sim_rop *op = &o->ops[i];
			if (op->kind != SIM_OP_COLL || op->group != SIM_G_EP)
				continue;
			ck_assert_int_eq(op->group_size, 16);
			ck_assert_rel(op->bytes, deepep ? a2a * crossed / 4.0 : a2a, 1e-12);
			n++;
		}
		ck_assert_int_eq(n, 4 * 48 * 2);
		sim_rank_ops_free(o);
		teardown(&f);
	}
}
END_TEST

/* MoE parallel folding, counted by hand.  Mixtral-8x7B (h 4096, 8 experts of SwiGLU width
 * 14336, top-2, 32 MoE layers) on 8 GPUs, tp 2, dp 4, ep 4, one 1024-token sequence per
 * micro-batch with sequence parallelism, two micro-batches per rank:
 *   - each rank routes its T / tp = 512 tokens' k = 2 copies: an all-to-all of
 *     512 x 2 x 4096 x 2 B = 8,388,608 B over its EP group (nccl-tests' size: what each member
 *     sends), twice forward and twice backward per layer and micro-batch: 4 x 32 x 2 = 256;
 *   - with etp 1 the EP group is 4 consecutive ranks (it spans the TP pairs), there is no
 *     expert-TP exchange, and each rank's 2 local experts multiply the 512 x 2 = 1024 routings
 *     its group sends it, 512 each: GEMMs of 512 x 28672 x 4096 (fc1) and 512 x 4096 x 14336
 *     (fc2), two in a batch; it holds 8 x 3 x 4096 x 14336 / 4 = 352,321,536 expert weights
 *     a layer;
 *   - with etp 2 (Megatron-Core's default, tp) the EP group is every other rank (stride etp),
 *     the etp pairs all-gather the tokens they received (2 x 8,388,608 B) and reduce-scatter
 *     the outputs, each rank's expert slices are half as wide and multiply twice the tokens:
 *     1024 x 14336 x 4096 and 1024 x 4096 x 7168; its expert weights halve. */
START_TEST(moe_folding_hand_worked)
{
	static const struct {
		int etp;
		int ep_stride;                 /* flat distance between EP group members */
		double a2a_bytes, etp_bytes;   /* per collective */
		double m, n1, k2;              /* fc1 m x n1 x 4096, fc2 m x 4096 x k2 */
		double expert_params;          /* per rank and MoE layer */
	} cases[] = {
		{1, 1, 8388608.0, 0.0, 512, 28672, 14336, 352321536.0},
		{2, 2, 8388608.0, 16777216.0, 1024, 14336, 7168, 176160768.0},
	};
	for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
		fixture f;
		setup(&f, "mixtral-8x7b", "dgx-h100");
		sim_train_cfg c = cfg(8, 2, 1, 1, 8);
		c.ep = 4;
		c.etp = cases[ci].etp;
		c.seq = 1024;
		c.sequence_parallel = true;
		simulate(&f, &c);
		const sim_train_cfg *cc = sim_train_config(f.r);
		ck_assert_int_eq(sim_train_etp(cc), cases[ci].etp);
		ck_assert_int_eq(sim_group_size(cc, SIM_G_EDP), 8 / (4 * cases[ci].etp));
		int mem[8];
		ck_assert_int_eq(sim_group_members(cc, SIM_G_EP, 0, mem, 8), 4);
		for (int k = 0; k < 4; k++)
			ck_assert_int_eq(mem[k], k * cases[ci].ep_stride);
		double expert;
		sim_layer_params(f.m, cc, 0, &expert);
		ck_assert_rel(expert, cases[ci].expert_params, 1e-12);
		for (int rank = 0; rank < 8; rank += 3) {
			sim_rank_ops *o = rank_ops(&f, rank);
			counts n;
			count(o, &n);
			ck_assert_int_eq(n.coll[SIM_G_EP][HW_ALL_TO_ALL], 4 * 32 * 2);
			ck_assert_int_eq(n.coll[SIM_G_ETP][HW_ALL_GATHER], cases[ci].etp > 1 ? 2 * 32 * 2 : 0);
			ck_assert_int_eq(n.coll[SIM_G_ETP][HW_REDUCE_SCATTER], cases[ci].etp > 1 ? 2 * 32 * 2 : 0);
			/* no TP collectives around a MoE block: the dispatcher starts and ends on the
			 * rank's own sequence shard (the attention block's gather and reduce-scatter
			 * remain, twice forward and twice backward per layer) */
			ck_assert_int_eq(n.coll[SIM_G_TP][HW_ALL_GATHER], 2 * 32 * 2);
			ck_assert_int_eq(n.coll[SIM_G_TP][HW_REDUCE_SCATTER], 2 * 32 * 2);
			int fc1 = 0, fc2 = 0;
			for (size_t i = 0; i < o->nops; i++) {
				const sim_rop *op = &o->ops[i];
				if (op->kind == SIM_OP_COLL && op->group == SIM_G_EP) {
					ck_assert_int_eq(op->group_size, 4);
					ck_assert_rel(op->bytes, cases[ci].a2a_bytes, 1e-12);
				}
				if (op->kind == SIM_OP_COLL && op->group == SIM_G_ETP) {
					ck_assert_int_eq(op->group_size, cases[ci].etp);
					ck_assert_rel(op->bytes, cases[ci].etp_bytes, 1e-12);
				}
			}
			for (size_t k = 0; k < o->nkernels; k++) {
				const sim_kernel *sk = &o->kernels[k];
				if (sk->pass != SIM_PASS_FWD || sk->hk.kind != HW_K_GEMM)
					continue;
				if (sk->weight == SIM_W_EXPERT_FC1) {
					ck_assert_rel(sk->hk.m, cases[ci].m, 1e-6);
					ck_assert_rel(sk->hk.n, cases[ci].n1, 1e-12);
					ck_assert_rel(sk->hk.k, 4096, 1e-12);
					ck_assert_rel(sk->hk.batch, 2, 1e-6);
					fc1++;
				} else if (sk->weight == SIM_W_EXPERT_FC2) {
					ck_assert_rel(sk->hk.m, cases[ci].m, 1e-6);
					ck_assert_rel(sk->hk.n, 4096, 1e-12);
					ck_assert_rel(sk->hk.k, cases[ci].k2, 1e-12);
					fc2++;
				}
			}
			ck_assert_int_eq(fc1, 32 * 2);
			ck_assert_int_eq(fc2, 32 * 2);
			sim_rank_ops_free(o);
		}
		teardown(&f);
	}
}
END_TEST

/* A hybrid model's layers, counted by hand: Nemotron-H-56B (54 Mamba-2, 10 attention, 54 MLP
 * layers) on tp 8 with sequence parallelism, one 1024-token micro-batch.  Every layer holds one
 * block, so it gathers the sequence once and reduce-scatters once forward, and again backward:
 * 2 x 118 of each.  A Mamba-2 layer's in_proj is 1024 x (2 x 16384 + 2 x 8 x 256 + 256) / 8 =
 * 4640 wide from 8192, its out_proj 1024 x 8192 from 16384 / 8 = 2048; its scan runs 1024 / 128
 * = 8 chunks, the C B^T products 128 x 128 x 256 one group a rank (8 / 8) each, the others per
 * head (256 / 8 = 32 a rank): 256 of 128 x 64 x 128.  QKV projections in the 10 attention
 * layers only, up projections in the 54 MLPs. */
START_TEST(hybrid_layers_hand_counted)
{
	fixture f;
	setup(&f, "nemotron-h-56b", "dgx-h100");
	sim_train_cfg c = cfg(8, 8, 1, 1, 1);
	c.seq = 1024;
	c.sequence_parallel = true;
	simulate(&f, &c);
	check_flops(&f);
	sim_rank_ops *o = rank_ops(&f, 5);
	counts n;
	count(o, &n);
	ck_assert_int_eq(n.coll[SIM_G_TP][HW_ALL_GATHER], 2 * 118);
	ck_assert_int_eq(n.coll[SIM_G_TP][HW_REDUCE_SCATTER], 2 * 118);
	int in = 0, out = 0, qkv = 0, fc1 = 0, cb = 0, cx = 0;
	for (size_t k = 0; k < o->nkernels; k++) {
		const sim_kernel *sk = &o->kernels[k];
		const hw_kernel *h = &sk->hk;
		if (h->kind != HW_K_GEMM)
			continue;
		if (sk->pass == SIM_PASS_FWD && sk->weight == SIM_W_SSM_IN) {
			ck_assert(h->m == 1024 && h->n == 4640 && h->k == 8192 && h->batch == 1);
			in++;
		} else if (sk->pass == SIM_PASS_FWD && sk->weight == SIM_W_SSM_OUT) {
			ck_assert(h->m == 1024 && h->n == 8192 && h->k == 2048);
			out++;
		} else if (sk->pass == SIM_PASS_FWD && sk->weight == SIM_W_QKV) {
			qkv++;
		} else if (sk->pass == SIM_PASS_FWD && sk->weight == SIM_W_FC1) {
			fc1++;
		} else if (sk->pass == SIM_PASS_BMM && h->m == 128 && h->n == 128 && h->k == 256) {
			ck_assert(h->batch == 8 * 1);
			cb++;
		} else if (sk->pass == SIM_PASS_BMM && h->m == 128 && h->n == 64 && h->k == 128 && h->batch == 8 * 32) {
			cx++;
		}
	}
	ck_assert_int_eq(in, 54);
	ck_assert_int_eq(out, 54);
	ck_assert_int_eq(qkv, 10);
	ck_assert_int_eq(fc1, 54);
	ck_assert_int_eq(cb, 54);  /* forward only: the backward's products are transposed shapes */
	ck_assert_int_ge(cx, 54);
	sim_rank_ops_free(o);
	teardown(&f);
}
END_TEST

/* ---- groups -------------------------------------------------------------------------------- */

static void
check_partition(const sim_train_cfg *c)
{
	int n = c->gpus;
	int *mem = malloc((size_t)n * sizeof *mem), *mem2 = malloc((size_t)n * sizeof *mem2);
	int *seen = calloc((size_t)n, sizeof *seen);
	for (int g = 0; g < SIM_NGROUPS; g++) {
		memset(seen, 0, (size_t)n * sizeof *seen);
		int size = sim_group_size(c, (sim_group)g);
		for (int rk = 0; rk < n; rk++) {
			ck_assert_int_eq(sim_group_members(c, (sim_group)g, rk, mem, n), size);
			bool self = false;
			for (int i = 0; i < size; i++) {
				ck_assert(mem[i] >= 0 && mem[i] < n);
				self |= mem[i] == rk;
				/* every member computes the same group, in the same order */
				sim_group_members(c, (sim_group)g, mem[i], mem2, n);
				ck_assert(!memcmp(mem, mem2, (size_t)size * sizeof *mem));
				if (g == SIM_G_EMB && size == 2)
					continue;
				for (int j = 0; j < i; j++)
					ck_assert_int_ne(mem[i], mem[j]);
			}
			ck_assert_msg(self, "rank %d is not in its own %s group", rk, sim_group_name((sim_group)g));
			int least = mem[0];
			for (int i = 1; i < size; i++)
				least = mem[i] < least ? mem[i] : least;
			if (least == rk)
				for (int i = 0; i < size; i++)
					seen[mem[i]]++;
		}
		/* every rank in exactly one instance (the embedding group pairs the first and last
		 * stage only; the middle stages are alone in theirs) */
		for (int rk = 0; rk < n; rk++)
			if (g != SIM_G_EMB)
				ck_assert_msg(seen[rk] == 1, "rank %d is in %d %s groups", rk, seen[rk], sim_group_name((sim_group)g));
	}
	free(mem);
	free(mem2);
	free(seen);
}

START_TEST(groups_partition_and_placement)
{
	hw_db *db;
	ck_assert(hw_open(":memory:", 0, &db, err, sizeof err) == 0);
	hw_system sys;
	ck_assert(hw_system_get(db, "dgx-h100", &sys, err, sizeof err) == 0);
	static const int shapes[][7] = {/* tp, cp, dp, pp, ep, etp (0: the default), dp_shard (0: none) */
					{2, 1, 2, 2, 1, 0, 0}, {8, 1, 4, 2, 1, 0, 0}, {4, 2, 2, 2, 2, 0, 0}, {2, 2, 4, 1, 4, 0, 0},
					{1, 1, 8, 1, 8, 0, 0}, {8, 4, 2, 2, 4, 0, 0},
					/* parallel folding: EP over TP ranks (etp 1), etp 2 of tp 4, EP of 16 on tp 8 */
					{4, 1, 2, 1, 8, 1, 0}, {4, 1, 4, 2, 4, 2, 0}, {8, 1, 2, 1, 16, 1, 0}, {2, 2, 4, 1, 8, 2, 0},
					/* hybrid sharding: shard groups inside a node, across nodes; with experts */
					{1, 1, 32, 1, 1, 0, 8}, {2, 1, 16, 2, 1, 0, 8}, {1, 2, 16, 1, 1, 0, 2}, {2, 1, 8, 1, 2, 0, 4}};
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		sim_train_cfg c;
		sim_train_cfg_init(&c);
		c.tp = shapes[i][0];
		c.cp = shapes[i][1];
		c.dp = shapes[i][2];
		c.pp = shapes[i][3];
		c.ep = shapes[i][4];
		c.etp = shapes[i][5];
		c.dp_shard = shapes[i][6];
		c.zero = c.dp_shard > 0;
		c.gpus = c.tp * c.cp * c.dp * c.pp;
		check_partition(&c);
		/* TP groups: consecutive ranks inside one node */
		int mem[64];
		for (int rk = 0; rk < c.gpus; rk++) {
			int n = sim_group_members(&c, SIM_G_TP, rk, mem, 64);
			for (int k = 1; k < n; k++)
				ck_assert_int_eq(mem[k], mem[0] + k);
			ck_assert_int_eq(mem[0] / sys.gpus_per_node, mem[n - 1] / sys.gpus_per_node);
		}
		/* members per node as sim_place assumes them when it shares links */
		placement pl;
		sim_place(&sys, &c, &pl);
		static const sim_group gs[] = {SIM_G_TP, SIM_G_CP, SIM_G_DP, SIM_G_EP, SIM_G_EDP, SIM_G_ETP, SIM_G_DPR};
		const int want[] = {pl.tp_per_node,  pl.cp_per_node,  pl.grad_per_node, pl.ep_per_node,
				    pl.edp_per_node, pl.etp_per_node, pl.repl_per_node};
		ck_assert_int_eq(sim_group_size(&c, SIM_G_DP), pl.grad);
		ck_assert_int_eq(sim_group_size(&c, SIM_G_DPR), pl.repl);
		ck_assert_int_eq(sim_group_size(&c, SIM_G_EDP), pl.edp);
		for (size_t k = 0; k < 7; k++) {
			int all[512];
			int n = sim_group_members(&c, gs[k], 0, all, 512), on0 = 0;
			for (int j = 0; j < n; j++)
				on0 += all[j] / sys.gpus_per_node == 0;
			ck_assert_msg(on0 == want[k], "shape %zu: %s group of rank 0 has %d members on node 0, sim_place says %d", i,
				      sim_group_name(gs[k]), on0, want[k]);
		}
		ck_assert(pl.pp_intra == (sim_group_size(&c, SIM_G_PP) > 1 &&
					  c.tp * c.cp * c.dp < sys.gpus_per_node));
	}
	hw_close(db);
}
END_TEST

/* The full mode simulates every rank, a collective being one op on all its members' streams:
 * the ranks each TP, CP, EP, DP and embedding collective and each pipeline transfer joins are
 * exactly the groups (and peers) the op lists give. */
START_TEST(groups_are_the_full_modes)
{
	static const struct {
		const char *model;
		int gpus, tp, pp, cp, ep, zero, dp_shard;
	} cases[] = {{"mpt-125m", 16, 2, 2, 2, 1, 0, 0},
		     {"mixtral-8x7b", 16, 2, 2, 1, 2, 0, 0},
		     {"mpt-125m", 32, 2, 1, 2, 1, 1, 2},
		     {"mpt-125m", 16, 1, 1, 1, 1, 3, 4}};
	for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
		fixture f;
		setup(&f, cases[ci].model, "dgx-h100");
		sim_train_cfg c = cfg(cases[ci].gpus, cases[ci].tp, cases[ci].pp, 1, 8);
		c.cp = cases[ci].cp;
		c.ep = cases[ci].ep;
		c.zero = cases[ci].zero;
		c.dp_shard = cases[ci].dp_shard;
		c.global_batch = 16;
		c.seq = 1024;
		c.full = true;
		simulate(&f, &c);
		const sim_train_result *r = f.r;
		const sim_train_cfg *cc = sim_train_config(r);
		const sim_engine *e = r->engine;
		int checked[TAG_NKINDS] = {0};
		for (int32_t op = 0; op < sim_engine_ops(e); op++) {
			int ns = sim_op_nstreams(e, op);
			if (ns < 2)
				continue;
			unsigned kind = sim_op_tag(e, op) >> 26;
			int ranks[64];
			for (int i = 0; i < ns && i < 64; i++) {
				int sr = sim_stream_rank(e, sim_op_stream(e, op, i));
				int s = sr / (r->ninst * r->tpm), inst = sr / r->tpm % r->ninst, j = sr % r->tpm;
				ranks[i] = j + cc->tp * (inst + cc->cp * cc->dp * s);
			}
			sim_group g;
			if (kind == TAG_TP)
				g = SIM_G_TP;
			else if (kind == TAG_CP)
				g = SIM_G_CP;
			else if (kind == TAG_EP)
				g = SIM_G_EP;
			else if ((kind == TAG_DP || kind == TAG_ZERO_AG || kind == TAG_ZERO_RS) && cc->ep == 1)
				g = SIM_G_DP;
			else if (kind == TAG_DPR)
				g = SIM_G_DPR;
			else if (kind == TAG_EMB_SYNC)
				g = SIM_G_EMB;
			else if (kind == TAG_PP_FWD || kind == TAG_PP_BWD) {
				/* senders then receivers, member by member: the same TP/CP/DP coordinates */
				for (int i = 0; i < ns / 2; i++)
					ck_assert_int_eq(ranks[i] % (cc->tp * cc->cp * cc->dp),
							 ranks[ns / 2 + i] % (cc->tp * cc->cp * cc->dp));
				checked[kind]++;
				continue;
			} else
				continue;
			int want[64];
			int n = sim_group_members(cc, g, ranks[0], want, 64);
			ck_assert_int_eq(n, ns);
			for (int i = 0; i < ns; i++) {
				bool in = false;
				for (int k = 0; k < n; k++)
					in |= want[k] == ranks[i];
				ck_assert_msg(in, "a %s collective joins rank %d, not in rank %d's group", sim_group_name(g), ranks[i],
					      ranks[0]);
			}
			checked[kind]++;
		}
		ck_assert(checked[TAG_TP] > 0 || cc->tp == 1);
		ck_assert((checked[TAG_PP_FWD] > 0 && checked[TAG_PP_BWD] > 0) || cc->pp == 1);
		if (ci == 0)
			ck_assert(checked[TAG_CP] > 0 && checked[TAG_EMB_SYNC] > 0 && checked[TAG_DP] > 0);
		else if (ci == 1)
			ck_assert(checked[TAG_EP] > 0);
		else
			ck_assert(checked[TAG_DPR] > 0 && checked[c.zero >= 3 ? TAG_ZERO_RS : TAG_DP] > 0);
		teardown(&f);
	}
}
END_TEST

/* ---- the symmetric mode's lists are every rank's ------------------------------------------- */

static void
same_lists(const sim_rank_ops *a, const sim_rank_ops *b)
{
	ck_assert_int_eq(a->nops, b->nops);
	ck_assert_int_eq(a->nkernels, b->nkernels);
	/* per stream in program order: the same ops */
	for (size_t i = 0; i < a->nops; i++) {
		const sim_rop *x = &a->ops[i];
		const sim_rop *y = NULL;
		for (size_t j = 0; j < b->nops && y == NULL; j++)
			if (b->ops[j].stream == x->stream && b->ops[j].seq == x->seq)
				y = &b->ops[j];
		ck_assert_ptr_nonnull(y);
		ck_assert_int_eq(x->kind, y->kind);
		ck_assert_uint_eq(x->tag, y->tag);
		ck_assert_int_eq(x->nk, y->nk);
		for (size_t k = 0; k < x->nk; k++) {
			const sim_kernel *p = &a->kernels[x->k0 + k], *q = &b->kernels[y->k0 + k];
			ck_assert(p->weight == q->weight && p->layer == q->layer && p->pass == q->pass);
			ck_assert(!memcmp(&p->hk, &q->hk, sizeof p->hk));
		}
		ck_assert(x->coll == y->coll && x->group == y->group && x->bytes == y->bytes && x->peer == y->peer);
		/* the ops it waits for: the same (stream, position) pairs */
		ck_assert_int_eq(x->nd, y->nd);
		for (size_t d = 0; d < x->nd; d++) {
			const sim_rop *xa = &a->ops[a->deps[x->d0 + d]];
			bool found = false;
			for (size_t e = 0; e < y->nd; e++) {
				const sim_rop *yb = &b->ops[b->deps[y->d0 + e]];
				found |= xa->stream == yb->stream && xa->seq == yb->seq;
			}
			ck_assert(found);
		}
	}
}

START_TEST(full_mode_gives_the_same_lists)
{
	fixture sym, full;
	setup(&sym, "mpt-125m", "dgx-h100");
	setup(&full, "mpt-125m", "dgx-h100");
	sim_train_cfg c = cfg(16, 2, 2, 1, 8);
	c.cp = 2;
	c.seq = 1024;
	c.recompute = SIM_RECOMPUTE_FULL;
	c.zero = 3;
	sim_train_cfg cf = c;
	cf.full = true;
	simulate(&sym, &c);
	simulate(&full, &cf);
	/* the FLOPs of the step do not depend on how many ranks are simulated */
	ck_assert_rel(sim_train_metrics(full.r)->hardware_flops, sim_train_metrics(sym.r)->hardware_flops, 1e-12);
	ck_assert_rel(sim_train_metrics(full.r)->executed_flops, sim_train_metrics(sym.r)->executed_flops, 1e-12);
	for (int rk = 0; rk < 16; rk++) {
		sim_rank_ops *a = rank_ops(&full, rk);
		sim_rank_ops *rep = rank_ops(&sym, rk / 8 * 8);
		cal_replay_rebase(rep, sim_train_config(sym.r), rk);
		same_lists(a, rep);
		sim_rank_ops *b = rank_ops(&sym, rk);
		same_lists(b, rep);
		sim_rank_ops_free(a);
		sim_rank_ops_free(b);
		sim_rank_ops_free(rep);
	}
	teardown(&sym);
	teardown(&full);
}
END_TEST

/* ---- order --------------------------------------------------------------------------------- */

/* The launch order is a schedule the simulator could have run: each op after its stream
 * predecessor and the ops it waits for; and the simulation did run it so: along a stream the ops
 * started in program order, each after its predecessor ended, each after what it waits for. */
static void
check_order(const sim_rank_ops *o)
{
	int32_t last[SIM_NSTREAMS];
	int64_t end[SIM_NSTREAMS];
	for (int s = 0; s < SIM_NSTREAMS; s++)
		last[s] = -1, end[s] = 0;
	for (size_t i = 0; i < o->nops; i++) {
		const sim_rop *op = &o->ops[i];
		ck_assert_int_eq(op->seq, last[op->stream] + 1);
		last[op->stream] = op->seq;
		ck_assert_msg(op->start_ps >= end[op->stream], "op %zu on %s starts at %lld before its predecessor ends at %lld", i,
			      sim_stream_name(op->stream), (long long)op->start_ps, (long long)end[op->stream]);
		end[op->stream] = op->end_ps;
		ck_assert(op->end_ps >= op->start_ps);
		for (size_t d = op->d0; d < op->d0 + op->nd; d++) {
			ck_assert(o->deps[d] < i);
			const sim_rop *w = &o->ops[o->deps[d]];
			ck_assert(w->stream != op->stream);
			ck_assert_msg(w->end_ps <= op->start_ps, "op %zu starts before op %zu it waits for ends", i, o->deps[d]);
		}
	}
}

START_TEST(order_is_the_simulations)
{
	static const sim_schedule scheds[] = {SIM_1F1B, SIM_GPIPE, SIM_INTERLEAVED, SIM_ZB_H1};
	for (size_t i = 0; i < 4; i++) {
		fixture f;
		setup(&f, "llama-3-8b", "dgx-a100");
		sim_train_cfg c = cfg(16, 2, 4, 1, 16);
		c.seq = 2048;
		c.schedule = scheds[i];
		c.vpp = scheds[i] == SIM_INTERLEAVED ? 2 : 1;
		c.zero = i == 3 ? 2 : 1;
		c.sequence_parallel = true;
		simulate(&f, &c);
		for (int rk = 0; rk < 16; rk += 3) {
			sim_rank_ops *o = rank_ops(&f, rk);
			check_order(o);
			sim_rank_ops_free(o);
		}
		teardown(&f);
	}
}
END_TEST

/* ---- lowering and communicators ------------------------------------------------------------ */

static cal_replay_prog *
lower(const sim_rank_ops *o, const sim_train_cfg *c)
{
	cal_replay_prog *p;
	ck_assert_msg(cal_replay_lower(o, c, &p, err, sizeof err) == 0, "%s", err);
	return p;
}

/* The launches execute what the op list holds: the same GEMM FLOPs (whole shapes), attention
 * as GEMMs of its FLOPs, the same bytes through memory kernels, a collective per collective
 * (and the TP all-gather of a scatter/gather receive), one weight per layer and linear layer. */
START_TEST(lowering_keeps_flops_and_bytes)
{
	fixture f;
	setup(&f, "llama-3-8b", "dgx-h100");
	sim_train_cfg c = cfg(8, 2, 2, 1, 8);
	c.seq = 2048;
	simulate(&f, &c);
	for (int s = 0; s < 2; s++) {
		sim_rank_ops *o = rank_ops(&f, s * 4 + 2);
		cal_replay_prog *p = lower(o, sim_train_config(f.r));
		double gemm = 0, attn = 0, mem = 0;
		size_t nmem = 0, ncoll = 0, nrecv_gather = 0;
		for (size_t k = 0; k < o->nkernels; k++) {
			const hw_kernel *kk = &o->kernels[k].hk;
			if (kk->kind == HW_K_GEMM)
				gemm += hw_kernel_flops(kk);
			else if (kk->kind == HW_K_ATTN)
				attn += hw_kernel_flops(kk);
			else
				mem += kk->bytes, nmem++;
		}
		for (size_t i = 0; i < o->nops; i++) {
			ncoll += o->ops[i].kind == SIM_OP_COLL;
			nrecv_gather += o->ops[i].kind == SIM_OP_RECV && o->ops[i].tp_gather;
		}
		ck_assert_rel(p->gemm_flops - p->attn_flops, gemm, 1e-12);
		ck_assert_rel(p->attn_flops, attn, 1e-12);
		ck_assert_rel(p->sim_flops, gemm + attn, 1e-12);
		ck_assert(fabs(p->mem_bytes - mem) <= (double)nmem);
		ck_assert_int_eq(p->nmem, nmem);
		ck_assert_int_eq(p->ncoll, ncoll + (c.tp > 1 ? nrecv_gather : 0));
		ck_assert(nrecv_gather == (size_t)(s == 1 ? 4 : 0) || nrecv_gather == (size_t)(s == 0 ? 4 : 0));
		/* 16 layers x (qkv, proj, fc1, fc2), and the head on the last stage */
		ck_assert_int_eq(p->nweights, 16 * 4 + (s == 1));
		for (size_t l = 0; l < p->nlaunches; l++) {
			const cal_launch *x = &p->launches[l];
			if (x->kind != CAL_L_GEMM || x->weight < 0)
				continue;
			const cal_shape *sh = &p->shapes[x->shape];
			int64_t need = (x->weight_out ? sh->m * sh->n : sh->k * sh->n) * sh->batch * 2;
			ck_assert(p->weights[x->weight].bytes >= need);
		}
		/* the weights in a ring when they do not fit */
		int64_t all = cal_replay_place_weights(p, INT64_MAX);
		ck_assert_int_eq(p->nslots, (int)p->nweights);
		int64_t ring = cal_replay_place_weights(p, all / 4);
		ck_assert(p->nslots >= 2 && p->nslots < (int)p->nweights && ring <= all / 4 + 2 * p->slot_bytes);
		for (size_t w = 0; w < p->nweights; w++)
			ck_assert(p->weights[w].slot >= 0 && p->weights[w].slot < p->nslots && p->weights[w].bytes <= p->slot_bytes);
		cal_replay_prog_free(p);
		sim_rank_ops_free(o);
	}
	teardown(&f);
}
END_TEST

/* Every rank's program, for MPI_Comm_split played out here: the ranks that give a key the same
 * color form exactly the communicator each of them expects (members, order, its own index), and
 * on every communicator the members issue the same calls in the same order (a send on a link
 * matched by the receive of the same count on the other side) -- what NCCL needs not to hang. */
static void
check_comms(const sim_train_cfg *c, cal_replay_prog **progs)
{
	cal_split_key *keys;
	size_t nkeys;
	ck_assert(cal_replay_split_keys(c, &keys, &nkeys) == 0);
	int n = c->gpus;
	size_t used = 0;
	for (size_t k = 0; k < nkeys; k++) {
		for (int rk = 0; rk < n; rk++) {
			const cal_replay_prog *p = progs[rk];
			const cal_comm *cm = NULL;
			for (size_t i = 0; i < p->ncomms; i++)
				if (p->comms[i].key == (int)k)
					cm = &p->comms[i];
			if (cm == NULL)
				continue;
			used++;
			ck_assert_int_eq(cm->members[cm->me], rk);
			ck_assert_int_eq(cm->color, cm->members[0]);
			if (keys[k].link)
				ck_assert(cm->group == SIM_G_PP);
			else
				ck_assert(cm->group == keys[k].group && cm->stream == keys[k].stream);
			/* the ranks of the same color: exactly the members */
			int same = 0;
			for (int q = 0; q < n; q++) {
				const cal_replay_prog *pq = progs[q];
				for (size_t i = 0; i < pq->ncomms; i++)
					if (pq->comms[i].key == (int)k && pq->comms[i].color == cm->color) {
						same++;
						const cal_comm *cq = &pq->comms[i];
						ck_assert_int_eq(cq->size, cm->size);
						ck_assert(!memcmp(cq->members, cm->members, (size_t)cm->size * sizeof *cm->members));
						ck_assert_int_eq(cq->members[cq->me], q);
					}
			}
			ck_assert_int_eq(same, cm->size);
			/* the calls on it, in order, against every other member's */
			const cal_comm *c0 = cm;
			size_t ci = (size_t)(cm - p->comms);
			for (int j = 0; j < cm->size; j++) {
				int q = cm->members[j];
				const cal_replay_prog *pq = progs[q];
				size_t cj = 0;
				for (size_t i = 0; i < pq->ncomms; i++)
					if (pq->comms[i].key == (int)k)
						cj = i;
				size_t a = 0, b = 0;
				for (;;) {
					while (a < p->nlaunches && p->launches[a].comm != (int32_t)ci)
						a++;
					while (b < pq->nlaunches && pq->launches[b].comm != (int32_t)cj)
						b++;
					if (a >= p->nlaunches || b >= pq->nlaunches)
						break;
					const cal_launch *x = &p->launches[a], *y = &pq->launches[b];
					ck_assert_int_eq(x->count, y->count);
					ck_assert_int_eq(x->elem, y->elem);
					if (x->kind == CAL_L_SEND || x->kind == CAL_L_RECV) {
						ck_assert(q == rk ? x->kind == y->kind : x->kind != y->kind);
					} else {
						ck_assert_int_eq(x->kind, y->kind);
						ck_assert_int_eq(x->coll, y->coll);
					}
					a++, b++;
				}
				ck_assert_msg(a >= p->nlaunches && b >= pq->nlaunches, "ranks %d and %d issue different numbers of "
					      "calls on their %s communicator", rk, q, sim_group_name(c0->group));
			}
		}
	}
	ck_assert(used > 0);
	/* a communicator carries the calls of one stream only */
	for (int rk = 0; rk < n; rk++) {
		const cal_replay_prog *p = progs[rk];
		for (size_t i = 0; i < p->npops; i++)
			for (size_t l = p->pops[i].l0; l < p->pops[i].l0 + p->pops[i].nl; l++)
				if (p->launches[l].comm >= 0)
					ck_assert_int_eq(p->comms[p->launches[l].comm].stream, p->pops[i].stream);
	}
	free(keys);
}

START_TEST(communicators_agree_across_ranks)
{
	static const struct {
		const char *model;
		int gpus, tp, pp, cp, ep, vpp, zero;
		bool sp;
	} cases[] = {
		{"llama-3-8b", 16, 2, 2, 1, 1, 2, 1, false}, /* interleaved: a link from the last stage to the first */
		{"mpt-125m", 16, 2, 2, 2, 1, 1, 3, true},    /* CP ring, ZeRO-3 gathers, tied embeddings */
		{"mixtral-8x7b", 16, 2, 2, 1, 4, 1, 1, true},/* EP all-to-all, expert-data gradients */
	};
	for (size_t ci = 0; ci < 3; ci++) {
		fixture f;
		setup(&f, cases[ci].model, "dgx-h100");
		sim_train_cfg c = cfg(cases[ci].gpus, cases[ci].tp, cases[ci].pp, 1, 8);
		c.cp = cases[ci].cp;
		c.ep = cases[ci].ep;
		c.vpp = cases[ci].vpp;
		c.schedule = c.vpp > 1 ? SIM_INTERLEAVED : SIM_1F1B;
		c.zero = cases[ci].zero;
		c.sequence_parallel = cases[ci].sp;
		c.seq = 1024;
		simulate(&f, &c);
		const sim_train_cfg *cc = sim_train_config(f.r);
		cal_replay_prog *progs[16];
		int stride = cc->tp * cc->cp * cc->dp;
		for (int rk = 0; rk < cc->gpus; rk++) {
			/* as the executor does: the stage representative's list, packed, unpacked, rebased */
			sim_rank_ops *rep = rank_ops(&f, rk / stride * stride), *o;
			void *buf;
			size_t len;
			ck_assert(cal_replay_pack(rep, &buf, &len) == 0);
			ck_assert_msg(cal_replay_unpack(buf, len, &o, err, sizeof err) == 0, "%s", err);
			cal_replay_rebase(o, cc, rk);
			progs[rk] = lower(o, cc);
			free(buf);
			sim_rank_ops_free(o);
			sim_rank_ops_free(rep);
		}
		check_comms(cc, progs);
		if (cc->vpp > 1) {
			/* the last stage's first ranks send forward to the first stage */
			bool wrap = false;
			for (size_t i = 0; i < progs[stride]->ncomms; i++) {
				const cal_comm *cm = &progs[stride]->comms[i];
				wrap |= cm->group == SIM_G_PP && cm->stream == SIM_S_PP_SEND_FWD && cm->members[0] == 0;
			}
			ck_assert(wrap);
		}
		for (int rk = 0; rk < cc->gpus; rk++)
			cal_replay_prog_free(progs[rk]);
		teardown(&f);
	}
}
END_TEST

/* Flash attention becomes GEMMs of its FLOPs: causal keeps half the keys; the backward's five
 * products are 2.5 x the forward's two when the head dims agree. */
START_TEST(attention_lowering)
{
	sim_kernel k = {.hk = {.kind = HW_K_ATTN, .dtype = HW_BF16, .b = 2, .heads = 16, .kv_heads = 4, .sq = 8192,
			       .sk = 8192, .dqk = 128, .dv = 128, .density = 0.5},
			.layer = -1};
	double fwd = 2.0 * 2 * 16 * 8192.0 * 8192 * 256 * 0.5;
	sim_rop op = {.kind = SIM_OP_COMPUTE, .stream = SIM_S_COMPUTE, .nk = 2, .flops = 3.5 * fwd, .layer = 0};
	sim_kernel ks[2] = {k, k};
	ks[1].hk.bwd = true;
	sim_rank_ops o = {.rank = 0, .ranks = 1, .ops = &op, .nops = 1, .kernels = ks, .nkernels = 2};
	sim_train_cfg c = cfg(1, 1, 1, 1, 1);
	c.dp = 1;
	cal_replay_prog *p = lower(&o, &c);
	ck_assert_rel(p->attn_flops, 3.5 * fwd, 1e-12);
	/* 2 x 16 x 8192 x 4096 bf16 scores are 2 GiB: in chunks of at most 256 MiB */
	ck_assert_int_eq(p->ngemm, 8 * (2 + 5));
	ck_assert(p->operand_bytes[1][2] <= (int64_t)256 << 20);
	cal_replay_prog_free(p);
}
END_TEST

/* ---- packing ------------------------------------------------------------------------------- */

START_TEST(pack_round_trip_and_corruption)
{
	fixture f;
	setup(&f, "mpt-125m", "dgx-h100");
	sim_train_cfg c = cfg(4, 2, 2, 1, 4);
	simulate(&f, &c);
	sim_rank_ops *o = rank_ops(&f, 2), *u;
	void *buf;
	size_t len;
	ck_assert(cal_replay_pack(o, &buf, &len) == 0);
	ck_assert(cal_replay_unpack(buf, len, &u, err, sizeof err) == 0);
	ck_assert_int_eq(u->nops, o->nops);
	ck_assert(!memcmp(u->ops, o->ops, o->nops * sizeof *o->ops));
	ck_assert(!memcmp(u->kernels, o->kernels, o->nkernels * sizeof *o->kernels));
	ck_assert(!memcmp(u->deps, o->deps, o->ndeps * sizeof *o->deps));
	sim_rank_ops_free(u);
	ck_assert_int_eq(cal_replay_unpack(buf, len - 1, &u, err, sizeof err), PP_EINPUT);
	((unsigned char *)buf)[0] ^= 1;
	ck_assert_int_eq(cal_replay_unpack(buf, len, &u, err, sizeof err), PP_EINPUT);
	((unsigned char *)buf)[0] ^= 1;
	/* a wait on a later op */
	size_t *deps = (size_t *)((char *)buf + len - o->ndeps * sizeof *o->deps);
	ck_assert(o->ndeps > 0);
	deps[0] = o->nops;
	ck_assert_int_eq(cal_replay_unpack(buf, len, &u, err, sizeof err), PP_EINPUT);
	ck_assert(strstr(err, "inconsistent") != NULL);
	free(buf);
	sim_rank_ops_free(o);
	teardown(&f);
}
END_TEST

/* ---- plan documents ------------------------------------------------------------------------ */

static const char plan_ok[] =
	"{\"kind\": \"plan-train\", \"model\": \"llama-3-8b\", \"system\": \"dgx-h100\",\n"
	" \"winner\": {\"step_time_s\": 1.25, \"config\": {\"gpus\": 16, \"tp\": 2, \"pp\": 2, \"dp\": 4, \"cp\": 1,\n"
	"  \"ep\": 1, \"vpp\": 1, \"zero\": 1, \"fsdp\": false, \"schedule\": \"1f1b\", \"micro_batch\": 1,\n"
	"  \"global_batch\": 64, \"seq\": 8192, \"recompute\": \"selective\", \"sequence_parallel\": true,\n"
	"  \"dtype\": \"bf16\", \"attention\": \"flash\"}}}";

static int
parse_with(const char *from, const char *to, cal_replay_plan *p)
{
	char doc[2048];
	const char *at = strstr(plan_ok, from);
	ck_assert_ptr_nonnull(at);
	snprintf(doc, sizeof doc, "%.*s%s%s", (int)(at - plan_ok), plan_ok, to, at + strlen(from));
	return cal_replay_plan_parse("plan.json", doc, p, err, sizeof err);
}

START_TEST(plan_documents)
{
	cal_replay_plan p;
	ck_assert_msg(cal_replay_plan_parse("plan.json", plan_ok, &p, err, sizeof err) == 0, "%s", err);
	ck_assert_str_eq(p.model, "llama-3-8b");
	ck_assert_str_eq(p.system, "dgx-h100");
	ck_assert_int_eq(p.cfg.gpus, 16);
	ck_assert_int_eq(p.cfg.dp, 4);
	ck_assert_int_eq(p.cfg.zero, 1);
	ck_assert(p.cfg.sequence_parallel && p.cfg.recompute == SIM_RECOMPUTE_SELECTIVE);
	ck_assert(p.predicted_s == 1.25);
	/* the stored form reads back to the same configuration */
	char *j = cal_replay_plan_json(&p);
	cal_replay_plan q;
	ck_assert_msg(cal_replay_plan_parse("stored", j, &q, err, sizeof err) == 0, "%s", err);
	ck_assert(!memcmp(&q.cfg, &p.cfg, sizeof p.cfg));
	free(j);

	static const struct {
		const char *from, *to, *msg;
	} bad[] = {
		{"\"tp\": 2", "\"tp\": -2", "plan.json: winner.config.tp must be an integer from 1"},
		{"\"tp\": 2", "\"tp\": 2.5", "winner.config.tp must be an integer"},
		{"\"tp\": 2", "\"tp\": \"2\"", "winner.config.tp must be an integer from 1 to 16777216, got \"2\""},
		{"\"tp\": 2, ", "", "winner.config.tp is missing"},
		{"\"dp\": 4", "\"dp\": 3", "winner.config.tp x pp x dp x cp (2 x 2 x 3 x 1) must equal winner.config.gpus (16)"},
		{"\"1f1b\"", "\"2f2b\"", "winner.config.schedule must be gpipe, 1f1b, interleaved or zb-h1, got \"2f2b\""},
		{"\"bf16\"", "\"int3\"", "winner.config.dtype must be"},
		{"\"flash\"", "\"fast\"", "winner.config.attention must be flash2, flash3 or unfused"},
		{"\"sequence_parallel\": true", "\"sequence_parallel\": 1", "winner.config.sequence_parallel must be true or false"},
		{"\"zero\": 1", "\"zero\": 4", "winner.config.zero must be an integer from 0 to 3"},
		{"\"plan-train\"", "\"plan-serve\"", "plan.json: \"kind\" is \"plan-serve\""},
		{"\"kind\": \"plan-train\", ", "", "plan.json: \"kind\" is missing"},
		{"\"model\": \"llama-3-8b\", ", "", "plan.json: model must be a non-empty string, got nothing"},
		{"\"winner\"", "\"loser\"", "plan.json: the plan has no \"winner\""},
		{"\"config\"", "\"cfg\"", "plan.json: winner.config is missing"},
		{"\"dtype\": \"bf16\",", "\"dtype\": \"bf16\", \"grad_reduce_bytes\": 3,", "grad_reduce_bytes must be 2 or 4"},
		{"\"fsdp\": false", "\"fsdp\": false, \"moe_imbalance\": 0.5", "winner.config.moe_imbalance must be a number from 1"},
		{"1.25, ", "1.25,, ", "plan.json:2:34: not valid JSON near ' \"config\": {'"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_msg(parse_with(bad[i].from, bad[i].to, &p) == PP_EUSAGE, "case %zu parsed", i);
		ck_assert_msg(strstr(err, bad[i].msg) != NULL, "case %zu: \"%s\" lacks \"%s\"", i, err, bad[i].msg);
	}
	ck_assert_int_eq(cal_replay_plan_parse("x.json", "[1, 2]", &p, err, sizeof err), PP_EUSAGE);
	ck_assert(strstr(err, "x.json: expected a JSON object") != NULL);
	ck_assert_int_eq(cal_replay_plan_read("/nonexistent/plan.json", &p, err, sizeof err), PP_EUSAGE);
	ck_assert(strstr(err, "/nonexistent/plan.json") != NULL);
}
END_TEST

/* A 'simulate train --json' document replays the configuration it was simulated with. */
START_TEST(simulation_documents)
{
	fixture f;
	setup(&f, "mixtral-8x7b", "dgx-h100");
	sim_train_cfg c = cfg(16, 2, 2, 1, 32);
	c.ep = 4;
	c.zero = 1;
	c.bucket_bytes = 1e8;
	c.moe_imbalance = 1.3;
	c.moe_capacity = 1.5;
	c.first_stage_layers = 15;
	c.overlap_grad_reduce = false;
	c.pp_scatter_gather = false;
	ck_assert_msg(sim_train(f.m, f.cost, &c, &f.r, err, sizeof err) == 0, "%s", err);
	cJSON *doc = sim_train_json(f.r);
	char *text = cJSON_Print(doc);
	cal_replay_plan p;
	ck_assert_msg(cal_replay_plan_parse("sim.json", text, &p, err, sizeof err) == 0, "%s", err);
	const sim_train_cfg *d = sim_train_config(f.r);
	ck_assert_int_eq(p.cfg.dp, d->dp);
	ck_assert_int_eq(p.cfg.ep, 4);
	ck_assert(p.cfg.bucket_bytes == 1e8 && p.cfg.moe_imbalance == 1.3 && p.cfg.moe_capacity == 1.5);
	ck_assert_int_eq(p.cfg.first_stage_layers, 15);
	ck_assert(!p.cfg.overlap_grad_reduce && !p.cfg.pp_scatter_gather);
	ck_assert_int_eq(sim_grad_bytes(&p.cfg), sim_grad_bytes(d));
	/* and simulates to the same step */
	sim_train_result *r2;
	hw_profile *fw;
	ck_assert_msg(cal_replay_simulate(f.db, f.m, f.cost, &p, &fw, &r2, err, sizeof err) == 0, "%s", err);
	ck_assert_ptr_null(fw);
	ck_assert_rel(sim_train_metrics(r2)->step_time_s, sim_train_metrics(f.r)->step_time_s, 1e-12);
	sim_train_result_free(r2);
	free(text);
	cJSON_Delete(doc);
	/* Under a framework profile the document names it, and the replay's simulation runs with
	 * its fitted rates and host time: the same step again (the profile's scales move it). */
	hw_profile *mg;
	ck_assert_msg(hw_profile_find(f.db, HW_SCOPE_FRAMEWORK, "llm-foundry", &mg, err, sizeof err) == 0, "%s", err);
	sim_train_cfg_framework(&c, mg);
	sim_train_result *r3;
	ck_assert_msg(sim_train(f.m, f.cost, &c, &r3, err, sizeof err) == 0, "%s", err);
	ck_assert(fabs(sim_train_metrics(r3)->step_time_s / sim_train_metrics(f.r)->step_time_s - 1.0) > 0.01);
	doc = sim_train_json(r3);
	text = cJSON_Print(doc);
	ck_assert_msg(cal_replay_plan_parse("sim.json", text, &p, err, sizeof err) == 0, "%s", err);
	ck_assert_str_eq(p.framework, "llm-foundry");
	ck_assert_msg(cal_replay_simulate(f.db, f.m, f.cost, &p, &fw, &r2, err, sizeof err) == 0, "%s", err);
	ck_assert_str_eq(hw_profile_name(fw), "llm-foundry");
	ck_assert_rel(sim_train_metrics(r2)->step_time_s, sim_train_metrics(r3)->step_time_s, 1e-12);
	sim_train_result_free(r2);
	hw_profile_free(fw);
	/* a name that is no profile: a usage error naming it; one that is no name: the field */
	pp_strlcpy(p.framework, "no-such-framework", sizeof p.framework);
	ck_assert_int_eq(cal_replay_simulate(f.db, f.m, f.cost, &p, &fw, &r2, err, sizeof err), PP_EUSAGE);
	ck_assert_ptr_nonnull(strstr(err, "no-such-framework"));
	char *q = strstr(text, "\"llm-foundry\"");
	ck_assert_ptr_nonnull(q);
	q[1] = '`';
	ck_assert_int_eq(cal_replay_plan_parse("sim.json", text, &p, err, sizeof err), PP_EUSAGE);
	ck_assert_ptr_nonnull(strstr(err, "config.framework"));
	sim_train_result_free(r3);
	hw_profile_free(mg);
	free(text);
	cJSON_Delete(doc);
	teardown(&f);
}
END_TEST

/* What a replay runs, priced kernel by kernel: a one-GPU step is one stream of ops, so the
 * hardware layer's prediction of the replay (cal_replay_kernels_s) must be the sum of its kernels
 * at the database's rates -- GEMMs and memory-bound kernels as priced, each attention kernel as
 * the GEMMs the replay launches in its place -- with nothing of the framework's profile. */
typedef struct proxy_sum {
	const hw_cost *cost;
	hw_dtype t;
	double s;
	int n;
} proxy_sum;

static void
proxy_add(void *arg, int64_t m, int64_t n, int64_t k, int64_t batch)
{
	proxy_sum *a = arg;
	hw_kernel g = {.kind = HW_K_GEMM, .dtype = a->t, .m = (double)m, .n = (double)n, .k = (double)k,
		       .batch = (double)batch};
	a->s += hw_cost_kernel(a->cost, &g, NULL);
	a->n++;
}

START_TEST(kernels_alone_hand_summed)
{
	fixture f;
	setup(&f, "gpt-1.7b", "dgx-h100");
	hw_profile *mg;
	ck_assert_msg(hw_profile_find(f.db, HW_SCOPE_FRAMEWORK, "megatron", &mg, err, sizeof err) == 0, "%s", err);
	sim_train_cfg c = cfg(1, 1, 1, 2, 4);
	c.seq = 4096;
	sim_train_cfg_framework(&c, mg);
	ck_assert_msg(sim_train(f.m, f.cost, &c, &f.r, err, sizeof err) == 0, "%s", err);
	cJSON *doc = sim_train_json(f.r);
	char *text = cJSON_Print(doc);
	cal_replay_plan p;
	ck_assert_msg(cal_replay_plan_parse("sim.json", text, &p, err, sizeof err) == 0, "%s", err);
	double kernels;
	ck_assert_msg(cal_replay_kernels_s(f.m, f.cost, &p, &kernels, err, sizeof err) == 0, "%s", err);
	sim_train_result *r;
	hw_profile *fw;
	ck_assert_msg(cal_replay_simulate(f.db, f.m, f.cost, &p, &fw, &r, err, sizeof err) == 0, "%s", err);
	sim_rank_ops *o;
	ck_assert_msg(sim_train_rank_ops(r, 0, &o, err, sizeof err) == 0, "%s", err);
	double sum = 0;
	int proxies = 0;
	for (size_t i = 0; i < o->nops; i++) {
		const sim_rop *op = &o->ops[i];
		ck_assert(op->kind == SIM_OP_COMPUTE || (op->kind == SIM_OP_MARK && op->nk == 0));
		for (size_t k = op->k0; k < op->k0 + op->nk; k++) {
			const hw_kernel *kk = &o->kernels[k].hk;
			if (kk->kind == HW_K_ATTN) {
				proxy_sum a = {.cost = f.cost, .t = kk->dtype};
				sim_attn_proxy(kk, proxy_add, &a);
				sum += a.s;
				proxies += a.n;
			} else {
				sum += hw_cost_kernel(f.cost, kk, NULL);
			}
		}
	}
	/* 2 x 24 heads x 4096 queries x 2048 keys of bf16 scores are 768 MiB: three chunks, each two
	 * GEMMs forward and five backward, in 24 layers of 2 micro-batches */
	ck_assert_int_eq(proxies, 3 * (2 + 5) * 24 * 2);
	ck_assert_rel(kernels, sum, 1e-9);
	/* the framework's fitted kernel rates and host time make the plan's prediction slower */
	ck_assert(kernels < sim_train_metrics(r)->step_time_s);
	sim_rank_ops_free(o);
	sim_train_result_free(r);
	hw_profile_free(fw);
	hw_profile_free(mg);
	free(text);
	cJSON_Delete(doc);
	teardown(&f);
}
END_TEST

/* ---- validation runs ----------------------------------------------------------------------- */

static int
rows(const char *path, const char *sql)
{
	sqlite3 *s;
	ck_assert(sqlite3_open(path, &s) == SQLITE_OK);
	sqlite3_stmt *st;
	ck_assert(sqlite3_prepare_v2(s, sql, -1, &st, NULL) == SQLITE_OK);
	ck_assert(sqlite3_step(st) == SQLITE_ROW);
	int n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(s);
	return n;
}

START_TEST(validation_runs_in_one_transaction)
{
	const char *dir = test_tmpdir("replay");
	char path[512];
	snprintf(path, sizeof path, "%s/hw.db", dir);
	hw_db *db;
	ck_assert_msg(hw_open(path, 0, &db, err, sizeof err) == 0, "%s", err);
	double steps[5] = {0.52, 0.5, 0.51, 0.49, 0.5};
	hw_validation v = {.system = "dgx-h100", .model = "llama-3-8b", .plan_json = "{\"kind\":\"train\"}",
			   .predicted_s = 0.45, .measured_s = 0.5, .step_s = steps, .steps = 5, .warmup = 2, .gpus = 8,
			   .nodes = 1, .host = "node1", .gpu_name = "NVIDIA H100 80GB HBM3", .nccl = "2.21.5"};
	int64_t id;
	ck_assert_msg(hw_validation_store(db, &v, &id, err, sizeof err) == 0, "%s", err);
	ck_assert(id > 0);
	cJSON *arr;
	ck_assert(hw_validations(db, &arr, err, sizeof err) == 0);
	ck_assert_int_eq(cJSON_GetArraySize(arr), 1);
	cJSON *x = cJSON_GetArrayItem(arr, 0);
	ck_assert_rel(cJSON_GetObjectItem(x, "error")->valuedouble, 0.45 / 0.5 - 1.0, 1e-12);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(x, "step_s")), 5);
	ck_assert(cJSON_GetArrayItem(cJSON_GetObjectItem(x, "step_s"), 2)->valuedouble == 0.51);
	ck_assert_str_eq(cJSON_GetObjectItem(x, "host")->valuestring, "node1");
	cJSON_Delete(arr);
	/* bad runs write nothing */
	steps[3] = 0;
	ck_assert_int_eq(hw_validation_store(db, &v, &id, err, sizeof err), PP_ERANGE);
	steps[3] = 0.49;
	v.system = "no-such-system";
	ck_assert_int_eq(hw_validation_store(db, &v, &id, err, sizeof err), PP_ENOTFOUND);
	v.system = "dgx-h100";
	/* a failure after the run's row: rolled back with it */
	ck_assert(hw_exec_simple(db, "DROP TABLE validation_step", err, sizeof err) == 0);
	ck_assert(hw_validation_store(db, &v, &id, err, sizeof err) != 0);
	hw_close(db);
	ck_assert_int_eq(rows(path, "SELECT count(*) FROM validation_run"), 1);
	test_rmdir(dir);
}
END_TEST

/* ---- a build without CUDA, and the random inputs ------------------------------------------- */

START_TEST(no_gpu_build_says_so)
{
	const char *dir = test_tmpdir("replay-nogpu");
	char path[512];
	snprintf(path, sizeof path, "%s/never.db", dir);
	cal_replay_plan p;
	ck_assert(cal_replay_plan_parse("plan.json", plan_ok, &p, err, sizeof err) == 0);
	cal_replay_opts o = {.plan = &p, .db_path = path, .steps = 3};
	cJSON *rep = (cJSON *)&o; /* must be cleared */
	bool root = false;
	ck_assert_int_eq(cal_replay_run(&o, &rep, &root, err, sizeof err), PP_ENODEV);
	ck_assert_ptr_null(rep);
	ck_assert(root);
	ck_assert(strstr(err, "built without CUDA and NCCL") != NULL);
	ck_assert_int_eq(access(path, F_OK), -1);
	test_rmdir(dir);
}
END_TEST

static double
decode(const unsigned char *b, int elsz, bool bf16)
{
	if (elsz == 4) {
		float v;
		memcpy(&v, b, 4);
		return v;
	}
	if (elsz == 2) {
		uint16_t h;
		memcpy(&h, b, 2);
		if (bf16) {
			uint32_t u = (uint32_t)h << 16;
			float v;
			memcpy(&v, &u, 4);
			return v;
		}
		int e = (h >> 10) & 0x1f, mant = h & 0x3ff;
		if (e == 31)
			return NAN;
		double v = e ? ldexp(1.0 + mant / 1024.0, e - 15) : ldexp(mant / 1024.0, -14);
		return h & 0x8000 ? -v : v;
	}
	int e = (b[0] >> 3) & 0xf, mant = b[0] & 7;
	if (e == 15 && mant == 7)
		return NAN;
	double v = e ? ldexp(1.0 + mant / 8.0, e - 7) : ldexp(mant / 8.0, -6);
	return b[0] & 0x80 ? -v : v;
}

START_TEST(random_inputs_are_never_zero)
{
	static const struct {
		int elsz;
		bool bf16;
	} types[] = {{4, false}, {2, false}, {2, true}, {1, false}};
	unsigned char buf[4096];
	for (size_t t = 0; t < 4; t++) {
		cal_random_fill(buf, sizeof buf, types[t].elsz, types[t].bf16, 7);
		int neg = 0;
		for (size_t i = 0; i + (size_t)types[t].elsz <= sizeof buf; i += (size_t)types[t].elsz) {
			double v = decode(buf + i, types[t].elsz, types[t].bf16);
			ck_assert_msg(isfinite(v) && fabs(v) >= 0.5 && fabs(v) <= 2.0, "type %zu element %zu: %g", t, i, v);
			neg += v < 0;
		}
		int n = (int)(sizeof buf / (size_t)types[t].elsz);
		ck_assert(neg > n / 4 && neg < 3 * n / 4);
	}
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("replay");
	TCase *t = tcase_create("oplist");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, flops_equal_the_simulators);
	tcase_add_test(t, hand_counted_gemm_flops);
	tcase_add_test(t, hand_counted_collectives);
	tcase_add_test(t, cp_and_ep_collectives);
	tcase_add_test(t, moe_folding_hand_worked);
	tcase_add_test(t, deepep_hand_worked);
	tcase_add_test(t, hybrid_layers_hand_counted);
	tcase_add_test(t, groups_partition_and_placement);
	tcase_add_test(t, groups_are_the_full_modes);
	tcase_add_test(t, full_mode_gives_the_same_lists);
	tcase_add_test(t, order_is_the_simulations);
	suite_add_tcase(s, t);
	TCase *l = tcase_create("lowering");
	tcase_set_timeout(l, 120);
	tcase_add_test(l, lowering_keeps_flops_and_bytes);
	tcase_add_test(l, communicators_agree_across_ranks);
	tcase_add_test(l, attention_lowering);
	tcase_add_test(l, pack_round_trip_and_corruption);
	suite_add_tcase(s, l);
	TCase *d = tcase_create("documents");
	tcase_set_timeout(d, 60);
	tcase_add_test(d, plan_documents);
	tcase_add_test(d, simulation_documents);
	tcase_add_test(d, kernels_alone_hand_summed);
	tcase_add_test(d, validation_runs_in_one_transaction);
	tcase_add_test(d, no_gpu_build_says_so);
	tcase_add_test(d, random_inputs_are_never_zero);
	suite_add_tcase(s, d);
	return test_run(s);
}
