/*
 * check_sim.c -- the discrete-event engine on hand-computed cases, the pipeline schedules
 * against their closed-form bubbles, and the training simulator's invariants (symmetric mode
 * equals full mode, determinism, the trace).
 */
#include "config.h"
#include "common/pp.h"
#include "sim/engine.h"
#include "sim/train_int.h"
#include "tests/testutil.h"

#include <cJSON.h>
#include <sqlite3.h>
#include <time.h>

#define S(x) ((int64_t)((x) * 1e12))
static char err[1024];

static double
secs(int64_t ps)
{
	return (double)ps / 1e12;
}

/* Issue 16, item 5: the clock never wraps.  Three ops of 20 days each in a row: the third
 * would end at 60 days, past the clock's 2^62 ps (53.4 days); the run stops with PP_ERANGE and
 * says why, and the clock never went negative.  Two of them (40 days) run to the exact sum. */
START_TEST(clock_refuses_overflow)
{
	const double day = 86400.0;
	ck_assert_int_eq(sim_ps(1e9), SIM_CLOCK_MAX_PS); /* 31 years saturate, they do not wrap */
	ck_assert_int_eq(sim_ps(-1.0), 0);
	ck_assert_int_eq(sim_ps(NAN), 0);
	sim_engine *e = sim_engine_new(1, true);
	int s = sim_stream_new(e, 0, SIM_STREAM_COMPUTE);
	for (int i = 0; i < 2; i++)
		sim_op_compute(e, s, sim_ps(20 * day), 1, HW_PROV_DATASHEET);
	ck_assert_int_eq(sim_run(e, err, sizeof err), 0);
	ck_assert_int_eq(sim_engine_now(e), 2 * sim_ps(20 * day));
	sim_engine_free(e);
	e = sim_engine_new(1, true);
	s = sim_stream_new(e, 0, SIM_STREAM_COMPUTE);
	for (int i = 0; i < 3; i++)
		sim_op_compute(e, s, sim_ps(20 * day), 1, HW_PROV_DATASHEET);
	ck_assert_int_eq(sim_run(e, err, sizeof err), PP_ERANGE);
	ck_assert_msg(strstr(err, "passed 53 days") != NULL, "%s", err);
	ck_assert_int_ge(sim_engine_now(e), 0);
	sim_engine_free(e);
	/* a flow of absurd size on a slow link: the same */
	e = sim_engine_new(1, true);
	int c = sim_stream_new(e, 0, SIM_STREAM_COMM);
	int l = sim_link_new(e, 1.0);
	sim_op_flow(e, &c, 1, &l, NULL, 1, 0, 1e300, 1e300, 1.0, 0, HW_PROV_DATASHEET);
	ck_assert_int_eq(sim_run(e, err, sizeof err), PP_ERANGE);
	sim_engine_free(e);
}
END_TEST

/* A 1T-parameter step on one GPU (the case, 262,144 sequences): refused with the
 * reason, where a negative step time or an MFU of 150% used to be printed. */
START_TEST(impossible_step_refused)
{
	model *m;
	ck_assert_int_eq(model_load("gpt-1t", &m, err, sizeof err), 0);
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	hw_cost *cost;
	ck_assert_int_eq(hw_cost_new(db, "dgx-h100", &cost, err, sizeof err), 0);
	sim_train_cfg c;
	sim_train_cfg_init(&c);
	c.gpus = c.tp = c.pp = c.dp = 1;
	c.micro_batch = 16;
	c.global_batch = 262144;
	c.seq = 8192;
	sim_train_result *r = NULL;
	ck_assert_int_eq(sim_train(m, cost, &c, &r, err, sizeof err), PP_ERANGE);
	ck_assert_ptr_null(r);
	ck_assert_msg(strstr(err, "days") != NULL, "%s", err);
	/* 512 sequences of 2,048 tokens take hours (6 x 1e12 x 2048 x 512 FLOPs, 6.3e18, over a
	 * dense peak under 1e15 FLOP/s): simulated, with an MFU below 100%; 32 micro-batches of 16
	 * keep the op graph small enough for the sanitizer and valgrind runs */
	c.micro_batch = 16;
	c.global_batch = 512;
	c.seq = 2048;
	ck_assert_int_eq(sim_train(m, cost, &c, &r, err, sizeof err), 0);
	const sim_metrics *mt = sim_train_metrics(r);
	ck_assert(mt->step_time_s > 3600 && mt->mfu > 0 && mt->mfu < 1);
	sim_train_result_free(r);
	hw_cost_free(cost);
	hw_close(db);
	model_free(m);
}
END_TEST

START_TEST(chain_sums)
{
	sim_engine *e = sim_engine_new(1, true);
	int s = sim_stream_new(e, 0, SIM_STREAM_COMPUTE);
	int32_t a = sim_op_compute(e, s, S(1), 1, HW_PROV_DATASHEET);
	int32_t b = sim_op_compute(e, s, S(2), 2, HW_PROV_DATASHEET);
	int32_t c = sim_op_compute(e, s, S(3), 3, HW_PROV_MEASURED);
	ck_assert_int_eq(sim_run(e, err, sizeof err), 0);
	ck_assert_int_eq(sim_op_end(e, a), S(1));
	ck_assert_int_eq(sim_op_start(e, b), S(1));
	ck_assert_int_eq(sim_op_end(e, c), S(6));
	ck_assert_int_eq(sim_engine_now(e), S(6));
	sim_rank_stats st;
	sim_engine_rank_stats(e, 0, &st);
	ck_assert_int_eq(st.busy_ps, S(6));
	ck_assert_int_eq(st.prov_ps[HW_PROV_MEASURED], S(3));
	ck_assert_int_eq(st.prov_ps[HW_PROV_DATASHEET], S(3));
	sim_engine_free(e);
}
END_TEST

START_TEST(waits_for_later_dependency)
{
	sim_engine *e = sim_engine_new(3, true);
	int s1 = sim_stream_new(e, 0, SIM_STREAM_COMPUTE), s2 = sim_stream_new(e, 1, SIM_STREAM_COMPUTE);
	int s3 = sim_stream_new(e, 2, SIM_STREAM_COMPUTE);
	int32_t a = sim_op_compute(e, s1, S(2), 0, HW_PROV_DATASHEET);
	int32_t b = sim_op_compute(e, s2, S(5), 0, HW_PROV_DATASHEET);
	int32_t c = sim_op_compute(e, s3, S(1), 0, HW_PROV_DATASHEET);
	sim_dep(e, a, c);
	sim_dep(e, b, c);
	ck_assert_int_eq(sim_run(e, err, sizeof err), 0);
	ck_assert_int_eq(sim_op_start(e, c), S(5));
	ck_assert_int_eq(sim_op_end(e, c), S(6));
	sim_rank_stats st;
	sim_engine_rank_stats(e, 2, &st);
	ck_assert_int_eq(st.idle_ps, S(5));
	ck_assert_int_eq(st.busy_ps, S(1));
	sim_engine_free(e);
}
END_TEST

/* Two flows on one link get half the bandwidth each. */
START_TEST(two_flows_share_a_link)
{
	sim_engine *e = sim_engine_new(1, true);
	int s1 = sim_stream_new(e, 0, SIM_STREAM_COMM), s2 = sim_stream_new(e, 0, SIM_STREAM_COMM);
	int l = sim_link_new(e, 100.0);
	double one = 1.0;
	int32_t f1 = sim_op_flow(e, &s1, 1, &l, &one, 1, 0, 100.0, 1000.0, 1.0, 0, HW_PROV_DATASHEET);
	int32_t f2 = sim_op_flow(e, &s2, 1, &l, &one, 1, 0, 100.0, 1000.0, 1.0, 0, HW_PROV_DATASHEET);
	ck_assert_int_eq(sim_run(e, err, sizeof err), 0);
	ck_assert_double_eq_tol(secs(sim_op_end(e, f1)), 2.0, 1e-9);
	ck_assert_double_eq_tol(secs(sim_op_end(e, f2)), 2.0, 1e-9);
	sim_engine_free(e);
}
END_TEST

/* A flow with twice the weight gets twice the share; when it ends the other gets the link:
 * 60 B and 60 B over 90 B/s with weights 2:1 run at 60 and 30 B/s; the first ends at 1 s,
 * the second has 30 B left at 90 B/s and ends at 1.333 s. */
START_TEST(weighted_share)
{
	sim_engine *e = sim_engine_new(1, true);
	int s1 = sim_stream_new(e, 0, SIM_STREAM_COMM), s2 = sim_stream_new(e, 0, SIM_STREAM_COMM);
	int l = sim_link_new(e, 90.0);
	int32_t f1 = sim_op_flow(e, &s1, 1, &l, NULL, 1, 0, 60.0, 1e9, 2.0, 0, HW_PROV_DATASHEET);
	int32_t f2 = sim_op_flow(e, &s2, 1, &l, NULL, 1, 0, 60.0, 1e9, 1.0, 0, HW_PROV_DATASHEET);
	ck_assert_int_eq(sim_run(e, err, sizeof err), 0);
	ck_assert_double_eq_tol(secs(sim_op_end(e, f1)), 1.0, 1e-9);
	ck_assert_double_eq_tol(secs(sim_op_end(e, f2)), 1.0 + 1.0 / 3.0, 1e-9);
	sim_engine_free(e);
}
END_TEST

/* Max-min fairness with caps and a second bottleneck: f2 crosses a 30 B/s link, so on the
 * shared 100 B/s link f1 gets the remaining 70; a capped flow keeps its cap. */
START_TEST(max_min_with_bottlenecks)
{
	sim_engine *e = sim_engine_new(1, true);
	int s1 = sim_stream_new(e, 0, SIM_STREAM_COMM), s2 = sim_stream_new(e, 0, SIM_STREAM_COMM);
	int s3 = sim_stream_new(e, 0, SIM_STREAM_COMM);
	int l1 = sim_link_new(e, 100.0), l2 = sim_link_new(e, 30.0), l3 = sim_link_new(e, 100.0);
	int both[2] = {l1, l2};
	int32_t f1 = sim_op_flow(e, &s1, 1, &l1, NULL, 1, 0, 70.0, 1e9, 1.0, 0, HW_PROV_DATASHEET);
	int32_t f2 = sim_op_flow(e, &s2, 1, both, NULL, 2, 0, 30.0, 1e9, 1.0, 0, HW_PROV_DATASHEET);
	int32_t f3 = sim_op_flow(e, &s3, 1, &l3, NULL, 1, 0, 10.0, 10.0, 1.0, 0, HW_PROV_DATASHEET);
	ck_assert_int_eq(sim_run(e, err, sizeof err), 0);
	ck_assert_double_eq_tol(secs(sim_op_end(e, f1)), 1.0, 1e-9);
	ck_assert_double_eq_tol(secs(sim_op_end(e, f2)), 1.0, 1e-9);
	ck_assert_double_eq_tol(secs(sim_op_end(e, f3)), 1.0, 1e-9);
	sim_engine_free(e);
}
END_TEST

/* A flow across many links (as a data-parallel collective crosses every member's NIC) is held
 * back by the slowest link it has to itself, and shares the rest: f1 crosses 70 links, one of
 * 30 B/s and the others faster, and shares the first (100 B/s) with f2.  Max-min: f1 moves at
 * 30, f2 gets the other 70 of the shared link; f2's 150 B end at 150/70 s, then f1, still held
 * by its 30 B/s link, ends its 100 B at 10/3 s.  (An even split of the shared link would end
 * both differently.)  The same with the fast links all alike (two distinct private levels) and
 * all different (seventy). */
START_TEST(private_links_bound_a_wide_flow)
{
	for (int distinct = 0; distinct < 2; distinct++) {
		sim_engine *e = sim_engine_new(1, true);
		int s1 = sim_stream_new(e, 0, SIM_STREAM_COMM), s2 = sim_stream_new(e, 0, SIM_STREAM_COMM);
		int links[70];
		for (int i = 0; i < 70; i++)
			links[i] = sim_link_new(e, i == 0 ? 100.0 : i == 37 ? 30.0 : distinct ? 120.0 + i : 120.0);
		int32_t f1 = sim_op_flow(e, &s1, 1, links, NULL, 70, 0, 100.0, 1e9, 1.0, 0, HW_PROV_DATASHEET);
		int32_t f2 = sim_op_flow(e, &s2, 1, links, NULL, 1, 0, 150.0, 1e9, 1.0, 0, HW_PROV_DATASHEET);
		ck_assert_int_eq(sim_run(e, err, sizeof err), 0);
		ck_assert_double_eq_tol(secs(sim_op_end(e, f2)), 150.0 / 70.0, 1e-9);
		ck_assert_double_eq_tol(secs(sim_op_end(e, f1)), 100.0 / 30.0, 1e-9);
		sim_engine_free(e);
	}
}
END_TEST

/* A latency, then the transfer; a flow on two streams starts when both reach it. */
START_TEST(latency_and_rendezvous)
{
	sim_engine *e = sim_engine_new(2, true);
	int a = sim_stream_new(e, 0, SIM_STREAM_COMPUTE), b = sim_stream_new(e, 1, SIM_STREAM_COMPUTE);
	int ca = sim_stream_new(e, 0, SIM_STREAM_COMM), cb = sim_stream_new(e, 1, SIM_STREAM_COMM);
	int32_t x = sim_op_compute(e, a, S(3), 0, HW_PROV_DATASHEET);
	int32_t y = sim_op_compute(e, b, S(1), 0, HW_PROV_DATASHEET);
	int both[2] = {ca, cb};
	int32_t f = sim_op_flow(e, both, 2, NULL, NULL, 0, S(1), 100.0, 100.0, 1.0, 0, HW_PROV_DATASHEET);
	sim_dep(e, x, f);
	sim_dep(e, y, f);
	ck_assert_int_eq(sim_run(e, err, sizeof err), 0);
	ck_assert_int_eq(sim_op_start(e, f), S(3));
	ck_assert_double_eq_tol(secs(sim_op_end(e, f)), 5.0, 1e-9);
	/* alone on its links, the flow's end is known when it starts: three events (x, y and f
	 * ending), none at the end of f's latency */
	ck_assert_int_eq(sim_engine_events(e), 3);
	/* rank 1: busy 1 s, idle 2 s waiting, then 2 s of exposed communication */
	sim_rank_stats st;
	sim_engine_rank_stats(e, 1, &st);
	ck_assert_int_eq(st.busy_ps, S(1));
	ck_assert_int_eq(st.comm_ps, S(2));
	ck_assert_int_eq(st.idle_ps, S(2));
	sim_engine_free(e);
}
END_TEST

/* A rank whose compute runs at half speed while it communicates: 10 s of compute beside a 4 s
 * transfer does 2 s of work in the first 4 s and the other 8 s after: it ends at 12 s. */
START_TEST(interference_slows_compute)
{
	sim_engine *e = sim_engine_new(1, true);
	int c = sim_stream_new(e, 0, SIM_STREAM_COMPUTE), m = sim_stream_new(e, 0, SIM_STREAM_COMM);
	sim_rank_slowdown(e, 0, 1.0);
	int32_t x = sim_op_compute(e, c, S(10), 0, HW_PROV_DATASHEET);
	int32_t f = sim_op_flow(e, &m, 1, NULL, NULL, 0, 0, 400.0, 100.0, 1.0, 0, HW_PROV_DATASHEET);
	ck_assert_int_eq(sim_run(e, err, sizeof err), 0);
	ck_assert_double_eq_tol(secs(sim_op_end(e, f)), 4.0, 1e-9);
	ck_assert_double_eq_tol(secs(sim_op_end(e, x)), 12.0, 1e-9);
	/* The compute op was first due at 10 s, then (slowed when the transfer began) at 20 s,
	 * then at 12 s once the transfer ended: both earlier completions are stale and must move
	 * neither the clock nor the rank's accounting.  The run ends at 12 s, busy all of it. */
	ck_assert_int_eq(sim_engine_now(e), S(12));
	sim_rank_stats st;
	sim_engine_rank_stats(e, 0, &st);
	ck_assert_int_eq(st.busy_ps, S(12));
	ck_assert_int_eq(st.idle_ps, 0);
	ck_assert_int_eq(st.end_ps, S(12));
	sim_engine_free(e);
}
END_TEST

START_TEST(deadlock_is_reported)
{
	sim_engine *e = sim_engine_new(1, false);
	int s1 = sim_stream_new(e, 0, SIM_STREAM_COMPUTE), s2 = sim_stream_new(e, 0, SIM_STREAM_COMPUTE);
	int32_t a = sim_op_compute(e, s1, S(1), 0, HW_PROV_DATASHEET);
	int32_t b = sim_op_compute(e, s2, S(1), 0, HW_PROV_DATASHEET);
	sim_dep(e, a, b);
	sim_dep(e, b, a);
	ck_assert_int_eq(sim_run(e, err, sizeof err), PP_EINPUT);
	ck_assert(strstr(err, "stalled") != NULL);
	sim_engine_free(e);
}
END_TEST

START_TEST(op_limit_is_exact)
{
	sim_engine *e = sim_engine_new(1, false);
	sim_engine_limit_ops(e, 2);
	int s = sim_stream_new(e, 0, SIM_STREAM_COMPUTE);
	ck_assert_int_ge(sim_op_compute(e, s, S(1), 0, HW_PROV_DATASHEET), 0);
	ck_assert_int_ge(sim_op_compute(e, s, S(1), 0, HW_PROV_DATASHEET), 0);
	ck_assert(!sim_engine_over_limit(e));
	ck_assert_int_eq(sim_op_compute(e, s, S(1), 0, HW_PROV_DATASHEET), -1);
	ck_assert(sim_engine_over_limit(e));
	ck_assert_int_eq(sim_engine_ops(e), 2);
	ck_assert_int_ne(sim_run(e, err, sizeof err), 0);
	sim_engine_free(e);
}
END_TEST

/* Compute ops on many streams with dependencies between them, durations drawn from a few
 * values so that many ops end at the same instants and far apart (picoseconds to seconds):
 * every op must start at max(end of the op before it on its stream, end of its dependencies),
 * as a longest-path pass over the graph computes it independently of any event queue. */
START_TEST(random_dag_matches_longest_path)
{
	enum { NS = 37, NOPS = 4000 };
	static const int64_t durs[] = {0, 1, 7, 1000, 1000, 1048576, S(0.25), S(3), INT64_C(1) << 40};
	sim_engine *e = sim_engine_new(NS, true);
	int st[NS];
	for (int i = 0; i < NS; i++)
		st[i] = sim_stream_new(e, i, SIM_STREAM_COMPUTE);
	static int32_t id[NOPS], on[NOPS], dep[NOPS][2];
	static int64_t dur[NOPS], end[NOPS];
	uint64_t x = 88172645463325252ull; /* xorshift64 */
#define RND() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, x)
	for (int i = 0; i < NOPS; i++) {
		on[i] = (int)(RND() % NS);
		dur[i] = durs[RND() % (sizeof durs / sizeof durs[0])];
		id[i] = sim_op_compute(e, st[on[i]], dur[i], (uint32_t)i, HW_PROV_DATASHEET);
		for (int k = 0; k < 2; k++) {
			dep[i][k] = i > 0 && RND() % 3 == 0 ? (int32_t)(RND() % (uint64_t)i) : -1;
			if (dep[i][k] >= 0)
				ck_assert_int_eq(sim_dep(e, id[dep[i][k]], id[i]), 0);
		}
	}
#undef RND
	ck_assert_int_eq(sim_run(e, err, sizeof err), 0);
	int64_t stream_end[NS] = {0}, last = 0;
	for (int i = 0; i < NOPS; i++) {
		int64_t start = stream_end[on[i]];
		for (int k = 0; k < 2; k++)
			if (dep[i][k] >= 0 && end[dep[i][k]] > start)
				start = end[dep[i][k]];
		end[i] = start + dur[i];
		stream_end[on[i]] = end[i];
		if (end[i] > last)
			last = end[i];
		ck_assert_int_eq(sim_op_start(e, id[i]), start);
		ck_assert_int_eq(sim_op_end(e, id[i]), end[i]);
	}
	ck_assert_int_eq(sim_engine_now(e), last);
	ck_assert_int_eq(sim_engine_events(e), NOPS);
	sim_engine_free(e);
}
END_TEST

/* A random graph of compute ops and flows (on one to three streams, across shared links, with
 * latencies; ranks whose compute slows beside communication), many of them starting and ending
 * at the same instants.  pad: idle streams added after the others.  Returns the engine, run. */
static sim_engine *
random_flow_graph(int pad, int32_t *ids, int nops)
{
	enum { NR = 6, NL = 5 };
	sim_engine *e = sim_engine_new(NR, true);
	int comp[NR], comm[NR][2], link[NL];
	for (int r = 0; r < NR; r++) {
		comp[r] = sim_stream_new(e, r, SIM_STREAM_COMPUTE);
		comm[r][0] = sim_stream_new(e, r, SIM_STREAM_COMM);
		comm[r][1] = sim_stream_new(e, r, SIM_STREAM_COMM);
		sim_rank_slowdown(e, r, r % 2 ? 0.25 : 0.0);
	}
	for (int l = 0; l < NL; l++)
		link[l] = sim_link_new(e, 1e9 * (1 + l % 3) / 7.0);
	for (int i = 0; i < pad; i++)
		sim_stream_new(e, i % NR, SIM_STREAM_COMM);
	static const int64_t durs[] = {0, 1000, 1000, 1000, 1048576, S(0.001)};
	uint64_t x = 0x9E3779B97F4A7C15ull;
#define RND() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, x)
	for (int i = 0; i < nops; i++) {
		if (RND() % 2) {
			int r = (int)(RND() % NR);
			ids[i] = sim_op_compute(e, comp[r], durs[RND() % 6], (uint32_t)i, HW_PROV_DATASHEET);
		} else {
			int ns = 1 + (int)(RND() % 3), nl = 1 + (int)(RND() % 3), st[3], ln[3];
			double coef[3];
			int r0 = (int)(RND() % NR), c = (int)(RND() % 2);
			for (int k = 0; k < ns; k++)
				st[k] = comm[(r0 + k) % NR][c];
			for (int k = 0; k < nl; k++) {
				ln[k] = link[(int)(RND() % NL)];
				coef[k] = 0.5 * (double)(1 + RND() % 3);
			}
			int64_t lat = (int64_t)(RND() % 3) * 1000;
			double work = 1e5 * (double)(1 + RND() % 4) / 3.0;
			double weight = 1.0 + (double)(RND() % 2);
			ids[i] = sim_op_flow(e, st, ns, ln, coef, nl, lat, work, 4e9, weight, (uint32_t)i, HW_PROV_DATASHEET);
		}
		ck_assert_int_ge(ids[i], 0);
		if (i > 0 && RND() % 2)
			ck_assert_int_eq(sim_dep(e, ids[RND() % (uint64_t)i], ids[i]), 0);
	}
#undef RND
	ck_assert_int_eq(sim_run(e, err, sizeof err), 0);
	return e;
}

/* The engine keeps its events in a binary heap where few can be pending (at most 256 streams)
 * and in radix buckets where many can: both give them in the order of time, then of queueing,
 * so a graph run with either gives the same times, to the picosecond, and the same totals. */
START_TEST(event_queues_agree)
{
	enum { NOPS = 3000 };
	static int32_t a[NOPS], b[NOPS];
	sim_engine *small = random_flow_graph(0, a, NOPS), *big = random_flow_graph(300, b, NOPS);
	ck_assert_int_eq(sim_engine_now(small), sim_engine_now(big));
	ck_assert_int_eq(sim_engine_events(small), sim_engine_events(big));
	ck_assert_int_gt(sim_engine_events(small), NOPS / 2);
	for (int i = 0; i < NOPS; i++) {
		ck_assert_int_eq(a[i], b[i]);
		ck_assert_int_eq(sim_op_start(small, a[i]), sim_op_start(big, b[i]));
		ck_assert_int_eq(sim_op_end(small, a[i]), sim_op_end(big, b[i]));
	}
	for (int r = 0; r < 6; r++) {
		sim_rank_stats x, y;
		sim_engine_rank_stats(small, r, &x);
		sim_engine_rank_stats(big, r, &y);
		ck_assert_int_eq(memcmp(&x, &y, sizeof x), 0);
	}
	sim_engine_free(small);
	sim_engine_free(big);
}
END_TEST

/* ---- schedules: one stage per rank, F takes tf, B tb (ZB: B tb, W tw), transfers free;
 * a stage's own order puts its B after its F and its W after its B ---- */

static double
pipeline(sim_schedule sched, int p, int v, int64_t m, double tf, double tb, double tw, double *bubble)
{
	sim_engine *e = sim_engine_new(p, false);
	int *st = malloc((size_t)p * sizeof *st);
	sim_job **jobs = calloc((size_t)p, sizeof *jobs);
	size_t *nj = calloc((size_t)p, sizeof *nj);
	/* op ids by (stage, type, chunk, mb) */
	size_t keys = (size_t)3 * v * m;
	int32_t *id = malloc((size_t)p * keys * sizeof *id);
	for (size_t i = 0; i < (size_t)p * keys; i++)
		id[i] = -1;
#define ID(s, t, c, mb) id[(size_t)(s) * keys + ((size_t)(t) * v + (size_t)(c)) * (size_t)m + (size_t)(mb)]
	for (int s = 0; s < p; s++) {
		st[s] = sim_stream_new(e, s, SIM_STREAM_COMPUTE);
		ck_assert_int_eq(sim_schedule_jobs(sched, p, v, m, s, &jobs[s], &nj[s]), 0);
		for (size_t k = 0; k < nj[s]; k++) {
			sim_job *j = &jobs[s][k];
			double d = j->type == J_F ? tf / v : j->type == J_B ? tb / v : tw / v;
			ID(s, j->type, j->chunk, j->mb) = sim_op_compute(e, st[s], S(d), 0, HW_PROV_DATASHEET);
		}
	}
	for (int s = 0; s < p; s++)
		for (int c = 0; c < v; c++)
			for (int64_t mb = 0; mb < m; mb++) {
				/* forward from the previous virtual stage, backward from the next */
				if (!(s == 0 && c == 0))
					sim_dep(e, s > 0 ? ID(s - 1, J_F, c, mb) : ID(p - 1, J_F, c - 1, mb), ID(s, J_F, c, mb));
				if (!(s == p - 1 && c == v - 1))
					sim_dep(e, s < p - 1 ? ID(s + 1, J_B, c, mb) : ID(0, J_B, c + 1, mb), ID(s, J_B, c, mb));
			}
#undef ID
	ck_assert_int_eq(sim_run(e, err, sizeof err), 0);
	double step = secs(sim_engine_now(e));
	sim_rank_stats rs;
	sim_engine_rank_stats(e, 0, &rs);
	*bubble = secs(rs.idle_ps) / step;
	for (int s = 0; s < p; s++)
		free(jobs[s]);
	free(jobs), free(nj), free(id), free(st);
	sim_engine_free(e);
	return step;
}

START_TEST(bubbles_match_closed_forms)
{
	double bub;
	for (int p = 2; p <= 8; p *= 2)
		for (int64_t m = 1; m <= 16; m *= 4) {
			/* GPipe and 1F1B: (m + p - 1)(tf + tb), bubble (p - 1)/(m + p - 1) */
			double step = pipeline(SIM_GPIPE, p, 1, m, 1.0, 2.0, 0.0, &bub);
			ck_assert_rel(step, (double)(m + p - 1) * 3.0, 1e-9);
			ck_assert_rel(bub, (double)(p - 1) / (double)(m + p - 1), 1e-9);
			step = pipeline(SIM_1F1B, p, 1, m, 1.0, 2.0, 0.0, &bub);
			ck_assert_rel(step, (double)(m + p - 1) * 3.0, 1e-9);
			ck_assert_rel(bub, (double)(p - 1) / (double)(m + p - 1), 1e-9);
		}
	/* Interleaved with v chunks (Narayanan 2021 section 2.2.2): the bubble shrinks by v:
	 * step = m (tf + tb) + (p - 1)(tf + tb) / v, for m a multiple of p. */
	for (int v = 2; v <= 4; v++) {
		double step = pipeline(SIM_INTERLEAVED, 4, v, 8, 1.0, 2.0, 0.0, &bub);
		ck_assert_rel(step, 8.0 * 3.0 + 3.0 * 3.0 / v, 1e-9);
	}
	/* ZB-H1 with tF = tB = tW = 1 (Qi et al. 2023): the bubble falls from (p - 1)(tF + tB + tW)
	 * to (p - 1)(tF + tB - tW) = p - 1. */
	double zb = pipeline(SIM_ZB_H1, 4, 1, 8, 1.0, 1.0, 1.0, &bub);
	ck_assert_rel(zb, 8.0 * 3.0 + 3.0, 1e-9);
}
END_TEST

/* ---- the training simulator -------------------------------------------------------------- */

/* A database with a toy system: 8 GPUs per node with fast links. */
static hw_db *
toy_db(const char *dir)
{
	char file[1200];
	snprintf(file, sizeof file, "%s/toy.db", dir);
	hw_db *db;
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), 0);
	hw_close(db);
	sqlite3 *s;
	ck_assert_int_eq(sqlite3_open(file, &s), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(s,
				      "INSERT INTO system(name, gpu, gpus_per_node, scaleup, scaleup_gbps, scaleup_domain,"
				      " nics_per_node, nic_gbit, scaleup_latency_us, scaleout_latency_us, source)"
				      " VALUES('toy', 'a100-sxm4-80gb', 8, 'nvswitch', 300, 8, 8, 200, 10, 20, 'test')",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(s);
	ck_assert_int_eq(hw_open(file, 0, &db, err, sizeof err), 0);
	return db;
}

static sim_train_result *
run_train(const model *m, const hw_cost *c, sim_train_cfg *cfg)
{
	sim_train_result *r = NULL;
	int rc = sim_train(m, c, cfg, &r, err, sizeof err);
	ck_assert_msg(rc == 0, "sim_train: %s", err);
	return r;
}

/* Rank 0's op list of cfg's step, recorded (its step time into *step where not NULL). */
static sim_rank_ops *
rank0_ops(const model *m, const hw_cost *c, sim_train_cfg *cfg, double *step)
{
	cfg->record_ops = true;
	sim_train_result *r = run_train(m, c, cfg);
	if (step != NULL)
		*step = sim_train_metrics(r)->step_time_s;
	sim_rank_ops *o;
	ck_assert_msg(sim_train_rank_ops(r, 0, &o, err, sizeof err) == 0, "%s", err);
	sim_train_result_free(r);
	return o;
}

/* The full mode's op count, taken from the symmetric graph before anything is built, is the
 * number of ops the full mode then builds, over every kind of op the builder makes: TP with and
 * without sequence parallelism, CP rings, EP all-to-alls, ZeRO 1 to 3 and FSDP, every schedule,
 * recomputation, tied embeddings, a straggler, CNN buckets. */
START_TEST(census_counts_the_full_graph)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	hw_cost *c;
	ck_assert_int_eq(hw_cost_new(db, "dgx-h100", &c, err, sizeof err), 0);
	static const struct {
		const char *model;
		int tp, pp, cp, ep, vpp, zero;
		bool fsdp, sp;
		sim_schedule sched;
		sim_recompute rc;
		int64_t mb, gb, seq;
		int dp;
		int etp;      /* 0: the default */
		int dp_shard; /* 0: none */
	} cases[] = {
		{"gpt-1.7b", 2, 4, 1, 1, 1, 0, false, false, SIM_1F1B, SIM_RECOMPUTE_NONE, 1, 16, 0, 2, 0, 0},
		{"gpt-1.7b", 2, 2, 1, 1, 2, 1, false, true, SIM_INTERLEAVED, SIM_RECOMPUTE_SELECTIVE, 1, 16, 0, 2, 0, 0},
		{"gpt-1.7b", 1, 4, 1, 1, 1, 0, false, false, SIM_ZB_H1, SIM_RECOMPUTE_NONE, 1, 16, 0, 2, 0, 0},
		{"gpt-1.7b", 2, 2, 1, 1, 1, 0, false, false, SIM_GPIPE, SIM_RECOMPUTE_FULL, 2, 16, 0, 2, 0, 0},
		{"gpt2-xl", 1, 1, 1, 1, 1, 3, false, false, SIM_1F1B, SIM_RECOMPUTE_NONE, 2, 16, 0, 4, 0, 0},
		{"gpt2-xl", 1, 1, 1, 1, 1, 3, true, false, SIM_1F1B, SIM_RECOMPUTE_FULL, 2, 16, 0, 4, 0, 0},
		{"gpt-1.7b", 2, 1, 1, 1, 1, 2, false, true, SIM_1F1B, SIM_RECOMPUTE_NONE, 1, 8, 0, 4, 0, 0},
		{"llama-3-8b", 2, 2, 4, 1, 1, 1, false, true, SIM_1F1B, SIM_RECOMPUTE_NONE, 1, 4, 32768, 1, 0, 0},
		{"mixtral-8x7b", 2, 2, 1, 4, 1, 1, false, true, SIM_1F1B, SIM_RECOMPUTE_NONE, 1, 16, 2048, 4, 0, 0},
		{"mixtral-8x7b", 1, 1, 2, 4, 1, 3, false, false, SIM_1F1B, SIM_RECOMPUTE_NONE, 1, 8, 8192, 2, 0, 0},
		/* parallel folding: EP over the TP ranks (etp 1); a hybrid Mamba/attention model */
		{"mixtral-8x7b", 2, 2, 1, 4, 1, 1, false, true, SIM_1F1B, SIM_RECOMPUTE_NONE, 1, 8, 1024, 2, 1, 0},
		{"nemotron-h-56b", 8, 1, 1, 1, 1, 1, false, true, SIM_1F1B, SIM_RECOMPUTE_NONE, 1, 4, 1024, 2, 0, 0},
		{"resnet-50", 1, 1, 1, 1, 1, 0, false, false, SIM_1F1B, SIM_RECOMPUTE_NONE, 32, 512, 0, 8, 0, 0},
		{"resnet-50", 1, 1, 1, 1, 1, 1, false, false, SIM_1F1B, SIM_RECOMPUTE_NONE, 16, 256, 0, 4, 0, 0},
		/* hybrid sharding: ZeRO-1 buckets and ZeRO-3 layers, each shard all-reduced over replicas */
		{"gpt-1.7b", 2, 2, 1, 1, 1, 1, false, true, SIM_1F1B, SIM_RECOMPUTE_NONE, 1, 16, 0, 4, 0, 2},
		{"gpt2-xl", 1, 1, 2, 1, 1, 3, true, false, SIM_1F1B, SIM_RECOMPUTE_NONE, 1, 16, 2048, 8, 0, 2},
		{"mixtral-8x7b", 1, 1, 1, 2, 1, 3, false, false, SIM_1F1B, SIM_RECOMPUTE_NONE, 1, 8, 1024, 4, 0, 2},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		model *m;
		ck_assert_int_eq(model_load(cases[i].model, &m, err, sizeof err), 0);
		sim_train_cfg cfg;
		sim_train_cfg_init(&cfg);
		cfg.dp_shard = cases[i].dp_shard;
		cfg.tp = cases[i].tp;
		cfg.pp = cases[i].pp;
		cfg.cp = cases[i].cp;
		cfg.ep = cases[i].ep;
		cfg.etp = cases[i].etp;
		cfg.vpp = cases[i].vpp;
		cfg.dp = cases[i].dp;
		cfg.gpus = cfg.tp * cfg.pp * cfg.cp * cfg.dp;
		cfg.zero = cases[i].zero;
		cfg.fsdp = cases[i].fsdp;
		cfg.sequence_parallel = cases[i].sp;
		cfg.schedule = cases[i].sched;
		cfg.recompute = cases[i].rc;
		cfg.micro_batch = cases[i].mb;
		cfg.global_batch = cases[i].gb;
		cfg.seq = cases[i].seq;
		if (model_transformer(m) == NULL)
			cfg.dtype = HW_FP16;
		cfg.full = true;
		if (i == 0) {
			cfg.straggler_rank = 3;
			cfg.straggler = 1.5;
		}
		double census;
		ck_assert_msg(sim_train_census(m, c, &cfg, &census, err, sizeof err) == 0, "case %zu: %s", i, err);
		sim_train_result *r = run_train(m, c, &cfg);
		ck_assert_msg(census == (double)sim_train_metrics(r)->ops, "case %zu (%s): census %.0f, built %lld ops", i,
			      cases[i].model, census, (long long)sim_train_metrics(r)->ops);
		/* and the symmetric graph is smaller unless one rank is all there is */
		cfg.full = false;
		sim_train_result *y = run_train(m, c, &cfg);
		ck_assert_int_lt(sim_train_metrics(y)->ops, sim_train_metrics(r)->ops);
		sim_train_result_free(y);
		sim_train_result_free(r);
		model_free(m);
	}
	hw_cost_free(c);
	hw_close(db);
}
END_TEST

/* A full-mode graph over the op limit is refused from its census, before it is built: at once
 * and without its memory.  Llama-3-405B's 16,384 ranks with 64 micro-batches would hold about
 * 40 million ops. */
static double
seconds_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) * 1e-9;
}

START_TEST(over_the_op_limit_refused_before_building)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	hw_cost *c;
	ck_assert_int_eq(hw_cost_new(db, "dgx-h100", &c, err, sizeof err), 0);
	model *m;
	ck_assert_int_eq(model_load("llama-3-405b", &m, err, sizeof err), 0);
	sim_train_cfg cfg;
	sim_train_cfg_init(&cfg);
	cfg.gpus = 16384;
	cfg.tp = 8;
	cfg.pp = 16;
	cfg.micro_batch = 1;
	cfg.global_batch = 8192;
	cfg.seq = 8192;
	cfg.sequence_parallel = true;
	cfg.full = true;
	double census;
	struct timespec t0, t1, t2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(sim_train_census(m, c, &cfg, &census, err, sizeof err), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ck_assert_msg(census > SIM_MAX_OPS && census < 4.0 * SIM_MAX_OPS, "census %.0f", census);
	sim_train_result *r = NULL;
	ck_assert_int_eq(sim_train(m, c, &cfg, &r, err, sizeof err), PP_EUSAGE);
	clock_gettime(CLOCK_MONOTONIC, &t2);
	ck_assert_ptr_null(r);
	ck_assert_msg(strstr(err, "16384 simulated ranks x 64 micro-batches") != NULL, "%s", err);
	/* building 16.8 million ops took seconds, hundreds of times the census's few
	 * milliseconds: the refusal costs about one census.  Measured against the census on the
	 * same machine, the bound holds on a loaded one and under valgrind (where 1.43 s against a
	 * fixed second failed once). */
	double tc = seconds_between(&t0, &t1), secs = seconds_between(&t1, &t2);
	ck_assert_msg(secs < 0.2 + 5.0 * tc, "refused after %.2f s (the census alone: %.3f s)", secs, tc);
	model_free(m);
	hw_cost_free(c);
	hw_close(db);
}
END_TEST

/* The full mode (every rank) agrees with the symmetric mode (one rank per stage) when every
 * rank does the same work. */
START_TEST(symmetric_equals_full)
{
	const char *dir = test_tmpdir("simfull");
	hw_db *db = toy_db(dir);
	hw_cost *c;
	ck_assert_int_eq(hw_cost_new(db, "toy", &c, err, sizeof err), 0);
	model *m;
	ck_assert_int_eq(model_load("gpt-1.7b", &m, err, sizeof err), 0);
	/* tp, pp, dp, and 0 plain, 1 sequence parallel, 2 ZeRO-1 with full recompute, 3 ZeRO-3,
	 * 4 ZeRO-1 and 5 ZeRO-3 sharded over pairs of data-parallel ranks (hybrid sharding), 6 the
	 * same with the reduce-scatters on the gathers' stream (dp_one_stream), the replicas'
	 * all-reduce after them: 2 and 80 replicas */
	const int cfgs[][4] = {{2, 2, 2, 0}, {2, 4, 2, 1}, {4, 2, 2, 2}, {1, 2, 4, 3},
			       {2, 1, 8, 4}, {1, 2, 4, 5}, {1, 2, 4, 6}, {1, 1, 160, 6}};
	for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
		sim_train_cfg cfg;
		sim_train_cfg_init(&cfg);
		cfg.tp = cfgs[i][0];
		cfg.pp = cfgs[i][1];
		cfg.dp = cfgs[i][2];
		cfg.gpus = cfg.tp * cfg.pp * cfg.dp;
		cfg.zero = cfgs[i][3] == 3 || cfgs[i][3] >= 5 ? 3 : cfgs[i][3] == 2 || cfgs[i][3] == 4 ? 1 : 0;
		cfg.dp_shard = cfgs[i][3] >= 4 ? 2 : 0;
		cfg.dp_one_stream = cfgs[i][3] == 6;
		cfg.sequence_parallel = cfgs[i][3] == 1;
		cfg.recompute = cfgs[i][3] == 2 ? SIM_RECOMPUTE_FULL : SIM_RECOMPUTE_NONE;
		cfg.micro_batch = 1;
		cfg.global_batch = 4 * cfg.dp;
		cfg.seq = 1024;
		sim_train_result *a = run_train(m, c, &cfg);
		cfg.full = true;
		sim_train_result *b = run_train(m, c, &cfg);
		ck_assert_msg(fabs(sim_train_metrics(a)->step_time_s - sim_train_metrics(b)->step_time_s) <=
				      1e-9 * sim_train_metrics(a)->step_time_s,
			      "config %zu: symmetric %.9f s, full %.9f s", i, sim_train_metrics(a)->step_time_s,
			      sim_train_metrics(b)->step_time_s);
		/* a GPU 1.5x slower in full mode slows the whole step, by less than 1.5x (communication
		 * does not slow down) */
		cfg.straggler_rank = 1;
		cfg.straggler = 1.5;
		sim_train_result *d = run_train(m, c, &cfg);
		double ratio = sim_train_metrics(d)->step_time_s / sim_train_metrics(a)->step_time_s;
		ck_assert_msg(ratio > 1.05 && ratio < 1.5, "config %zu: straggler slows the step %.3fx", i, ratio);
		sim_train_result_free(a);
		sim_train_result_free(b);
		sim_train_result_free(d);
	}
	model_free(m);
	hw_cost_free(c);
	hw_close(db);
	test_rmdir(dir);
}
END_TEST

/* The symmetric mode folds the steady state of 1F1B and interleaved steps (small steps, then
 * the groups of micro-batches they show repeating): the result is the one simulating every
 * micro-batch gives, to the bit, over TP with and without sequence parallelism, CP, ZeRO 1 to 3,
 * full and selective recomputation, interleaved stages, fp16 and a MoE model; and the fold did
 * run (its engine held a small step, not the whole one), but not where ZeRO's reduce-scatters
 * queued. */
/* Simulates cfg folded and whole and checks they give the same JSON to the bit; true where the
 * fold ran (its engine held a small step, not the whole one). */
/* Asserts that results a and b give the same JSON, to the bit (as, bs: what each one is). */
static void
same_json(const sim_train_result *a, const sim_train_result *b, const char *what, const char *as, const char *bs)
{
	cJSON *ja = sim_train_json(a), *jb = sim_train_json(b);
	char *sa = cJSON_PrintUnformatted(ja), *sb = cJSON_PrintUnformatted(jb);
	ck_assert_msg(strcmp(sa, sb) == 0, "%s: %s %s\n%s %s", what, as, sa, bs, sb);
	free(sa);
	free(sb);
	cJSON_Delete(ja);
	cJSON_Delete(jb);
}

static bool
folds_exactly(const model *m, const hw_cost *c, sim_train_cfg *cfg, const char *what)
{
	sim_train_result *a = run_train(m, c, cfg);
	cfg->no_fold = true;
	sim_train_result *b = run_train(m, c, cfg);
	cfg->no_fold = false;
	same_json(a, b, what, "folded", "whole");
	bool folded = sim_train_metrics(a)->engine_bytes < sim_train_metrics(b)->engine_bytes / 2;
	sim_train_result_free(a);
	sim_train_result_free(b);
	return folded;
}

START_TEST(fold_is_exact)
{
	const char *dir = test_tmpdir("simfold");
	hw_db *db = toy_db(dir);
	hw_cost *c;
	ck_assert_int_eq(hw_cost_new(db, "toy", &c, err, sizeof err), 0);
	struct {
		const char *model;
		int tp, pp, cp, dp, ep, vpp, zero;
		sim_recompute rc;
		bool sp;
		int64_t micro, seq;
		bool folds;
		int dp_shard;
		bool one; /* dp_one_stream */
	} cases[] = {
		{"gpt-1.7b", 1, 1, 1, 2, 1, 1, 0, SIM_RECOMPUTE_NONE, false, 40, 1024, true, 0, false},
		{"gpt-1.7b", 2, 2, 1, 2, 1, 1, 1, SIM_RECOMPUTE_NONE, true, 48, 1024, true, 0, false},
		{"gpt-1.7b", 2, 4, 1, 1, 1, 1, 0, SIM_RECOMPUTE_FULL, false, 97, 1024, true, 0, false},
		{"gpt-1.7b", 2, 2, 2, 2, 1, 1, 1, SIM_RECOMPUTE_SELECTIVE, true, 64, 1024, true, 0, false},
		{"gpt-1.7b", 2, 2, 1, 2, 1, 1, 2, SIM_RECOMPUTE_NONE, true, 64, 1024, true, 0, false},
		{"gpt-1.7b", 1, 1, 1, 4, 1, 1, 3, SIM_RECOMPUTE_NONE, false, 40, 1024, true, 0, false},
		{"gpt-1.7b", 1, 2, 1, 4, 1, 3, 1, SIM_RECOMPUTE_NONE, false, 48, 1024, true, 0, false},
		{"gpt-1.7b", 1, 1, 1, 16, 1, 1, 2, SIM_RECOMPUTE_NONE, false, 40, 128, false, 0, false},
		{"gpt-1.7b", 2, 4, 1, 1, 1, 2, 0, SIM_RECOMPUTE_NONE, true, 96, 1024, true, 0, false},
		{"mixtral-8x7b", 2, 2, 1, 4, 4, 1, 1, SIM_RECOMPUTE_NONE, true, 40, 1024, true, 0, false},
		{"gpt-1.7b", 2, 2, 1, 4, 1, 1, 1, SIM_RECOMPUTE_NONE, true, 48, 1024, true, 2, false},
		{"gpt-1.7b", 1, 1, 1, 4, 1, 1, 3, SIM_RECOMPUTE_NONE, false, 40, 1024, true, 2, false},
		/* ZeRO's reduce-scatters on the gathers' stream, in issue order (dp_one_stream): ZeRO-3's
		 * fold, the compute waiting for that stream; ZeRO-2's only where nothing queued there
		 * (case 15, PP 2 with tied embeddings: the step's closing all-reduce of the embedding
		 * gradients waits behind the last reduce-scatter; case 16, PP 1, folds) */
		{"gpt-1.7b", 1, 1, 1, 4, 1, 1, 3, SIM_RECOMPUTE_NONE, false, 40, 1024, true, 0, true},
		{"gpt-1.7b", 1, 2, 1, 4, 1, 1, 3, SIM_RECOMPUTE_FULL, false, 40, 1024, true, 0, true},
		{"gpt-1.7b", 1, 1, 1, 4, 1, 1, 3, SIM_RECOMPUTE_NONE, false, 40, 1024, true, 2, true},
		{"gpt-1.7b", 2, 2, 1, 2, 1, 1, 2, SIM_RECOMPUTE_NONE, true, 64, 1024, false, 0, true},
		{"gpt-1.7b", 2, 1, 1, 2, 1, 1, 2, SIM_RECOMPUTE_NONE, true, 64, 1024, true, 0, true},
		{"gpt-1.7b", 1, 1, 1, 16, 1, 1, 2, SIM_RECOMPUTE_NONE, false, 40, 128, false, 0, true},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		model *m;
		ck_assert_int_eq(model_load(cases[i].model, &m, err, sizeof err), 0);
		sim_train_cfg cfg;
		sim_train_cfg_init(&cfg);
		cfg.tp = cases[i].tp;
		cfg.pp = cases[i].pp;
		cfg.cp = cases[i].cp;
		cfg.dp = cases[i].dp;
		cfg.ep = cases[i].ep;
		cfg.vpp = cases[i].vpp;
		cfg.schedule = cfg.vpp > 1 ? SIM_INTERLEAVED : SIM_1F1B;
		cfg.zero = cases[i].zero;
		cfg.dp_shard = cases[i].dp_shard;
		cfg.dp_one_stream = cases[i].one;
		cfg.recompute = cases[i].rc;
		cfg.sequence_parallel = cases[i].sp;
		cfg.dtype = i == 1 ? HW_FP16 : HW_BF16;
		cfg.gpus = cfg.tp * cfg.pp * cfg.cp * cfg.dp;
		cfg.micro_batch = 1;
		cfg.global_batch = cases[i].micro * cfg.dp;
		cfg.seq = cases[i].seq;
		char what[32];
		snprintf(what, sizeof what, "case %zu", i);
		/* ZeRO-2 and 3 reduce-scatter every micro-batch's gradients, which nothing waits for:
		 * folded only where none of them queued (case 7: a short sequence over 16 GPUs, whose
		 * reduce-scatters outlast the backward passes that feed them) */
		bool folded = folds_exactly(m, c, &cfg, what);
		ck_assert_msg(folded == cases[i].folds, "%s: %s", what, folded ? "folded" : "not folded");
		model_free(m);
	}
	hw_cost_free(c);
	hw_close(db);
	test_rmdir(dir);
}
END_TEST

/* A stage with slack settles into its phase a little more each micro-batch: Llama 3 70B on TP 4,
 * PP 8 and CP 2 without sequence parallelism, as Megatron-Core runs it (each block's input-
 * gradient all-reduce beside its weight gradient, compute slowed beside communication), where
 * the second stage's busy time per micro-batch converges geometrically and no two groups of
 * small steps agree to the picosecond in the first windows.  The windows then start at twice
 * the count, where the transient is gone: the step folds, and to the same bits as whole. */
START_TEST(fold_after_a_transient)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	hw_profile *fw;
	ck_assert_int_eq(hw_profile_find(db, HW_SCOPE_FRAMEWORK, "megatron", &fw, err, sizeof err), 0);
	hw_cost *c;
	ck_assert_int_eq(hw_cost_new(db, "dgx-h100", &c, err, sizeof err), 0);
	model *m;
	ck_assert_int_eq(model_load("llama-3-70b", &m, err, sizeof err), 0);
	sim_train_cfg cfg;
	sim_train_cfg_init(&cfg);
	sim_train_cfg_framework(&cfg, fw);
	cfg.gpus = 64;
	cfg.tp = 4;
	cfg.pp = 8;
	cfg.cp = 2;
	cfg.schedule = SIM_1F1B;
	cfg.sequence_parallel = false;
	cfg.micro_batch = 1;
	cfg.global_batch = 320;
	ck_assert(cfg.tp_wgrad_overlap);
	ck_assert_msg(folds_exactly(m, c, &cfg, "llama-3-70b tp 4 pp 8 cp 2"), "not folded");
	/* Interleaved (vpp 2) with sequence parallelism over 512 micro-batches: the windows'
	 * disagreement shrinks about a hundredfold a group (1.6 us, 12 ns, 78 ps, 1 ps) and the
	 * groups agree from 56 to 72, past half of the whole step's count: the small steps may
	 * take three quarters of it while the disagreement dies out, and the step folds. */
	cfg.schedule = SIM_INTERLEAVED;
	cfg.vpp = 2;
	cfg.sequence_parallel = true;
	cfg.global_batch = 512;
	ck_assert_msg(folds_exactly(m, c, &cfg, "llama-3-70b tp 4 pp 8 cp 2 vpp 2"), "not folded");
	model_free(m);
	hw_cost_free(c);
	hw_profile_free(fw);
	hw_close(db);
}
END_TEST

/* A job stamped from the journal of one like it (sim/train.c, "stamping") makes the graph
 * building it op by op makes: cfg simulated whole with a trace, stamped and not, gives the same
 * result and the same trace (every op's stream, tag, start and end) to the byte; folded, the
 * same result.  Returns the jobs stamped. */
static int64_t
stamps_exactly(const model *m, const hw_cost *c, sim_train_cfg *cfg, const char *dir, const char *what)
{
	char *text[2];
	sim_train_result *r[2];
	for (int i = 0; i < 2; i++) {
		cfg->no_stamp = i == 1;
		cfg->trace = true;
		r[i] = run_train(m, c, cfg);
		char path[1200];
		snprintf(path, sizeof path, "%s/trace%d.json", dir, i);
		ck_assert_int_eq(sim_train_trace(r[i], path, err, sizeof err), 0);
		size_t len;
		ck_assert_int_eq(pp_read_file(path, 1 << 28, &text[i], &len, err, sizeof err), 0);
	}
	same_json(r[0], r[1], what, "stamped", "built");
	ck_assert_msg(strcmp(text[0], text[1]) == 0, "%s: the traces differ", what);
	int64_t stamped = sim_train_jobs_stamped(r[0]);
	ck_assert_int_eq(sim_train_jobs_stamped(r[1]), 0);
	for (int i = 0; i < 2; i++)
		free(text[i]), sim_train_result_free(r[i]);
	cfg->trace = false;
	if (!cfg->full) {
		for (int i = 0; i < 2; i++) {
			cfg->no_stamp = i == 1;
			r[i] = run_train(m, c, cfg);
		}
		same_json(r[0], r[1], what, "folded, stamped", "folded, built");
		ck_assert_int_eq(sim_train_jobs_stamped(r[1]), 0);
		for (int i = 0; i < 2; i++)
			sim_train_result_free(r[i]);
	}
	cfg->no_stamp = false;
	return stamped;
}

/* Over 1F1B, interleaved and ZB-H1 schedules, TP with and without sequence parallelism, TP
 * communication beside compute (Megatron-Core's profile), CP's ring, a MoE model's all-to-all,
 * a hybrid model's layers without TP collectives, full and selective recomputation, ZeRO-1,
 * small full-mode graphs without TP (whose collectives, on several streams, are not stamped)
 * and a straggler in one; and nothing is stamped with ZeRO-2. */
START_TEST(stamp_is_exact)
{
	const char *dir = test_tmpdir("simstamp");
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	hw_profile *fw;
	ck_assert_int_eq(hw_profile_find(db, HW_SCOPE_FRAMEWORK, "megatron", &fw, err, sizeof err), 0);
	hw_cost *c;
	ck_assert_int_eq(hw_cost_new(db, "dgx-h100", &c, err, sizeof err), 0);
	struct {
		const char *model;
		int tp, pp, cp, dp, ep, vpp, zero;
		sim_schedule sched;
		sim_recompute rc;
		bool sp, megatron, full;
		int64_t micro, seq;
		int straggler; /* full mode: this rank 1.3x slower (-1: none) */
	} cases[] = {
		{"gpt-1.7b", 2, 2, 1, 2, 1, 1, 1, SIM_1F1B, SIM_RECOMPUTE_SELECTIVE, true, false, false, 16, 2048, -1},
		{"gpt-1.7b", 2, 4, 1, 1, 1, 2, 0, SIM_INTERLEAVED, SIM_RECOMPUTE_FULL, false, false, false, 16, 2048, -1},
		{"gpt-1.7b", 2, 4, 1, 1, 1, 1, 0, SIM_ZB_H1, SIM_RECOMPUTE_NONE, true, false, false, 12, 2048, -1},
		{"llama-3-8b", 4, 2, 2, 1, 1, 2, 1, SIM_INTERLEAVED, SIM_RECOMPUTE_NONE, true, true, false, 8, 8192, -1},
		{"llama-3-8b", 2, 2, 1, 2, 1, 1, 1, SIM_1F1B, SIM_RECOMPUTE_NONE, false, true, false, 8, 4096, -1},
		{"mixtral-8x7b", 2, 2, 1, 4, 4, 1, 1, SIM_1F1B, SIM_RECOMPUTE_NONE, true, false, false, 8, 2048, -1},
		{"nemotron-3-nano-30b-a3b", 2, 2, 1, 2, 2, 1, 1, SIM_1F1B, SIM_RECOMPUTE_NONE, true, true, false, 8,
		 4096, -1},
		{"gpt-1.7b", 1, 2, 1, 2, 1, 1, 1, SIM_1F1B, SIM_RECOMPUTE_SELECTIVE, false, false, true, 8, 2048, -1},
		{"gpt-1.7b", 1, 2, 1, 4, 1, 2, 0, SIM_INTERLEAVED, SIM_RECOMPUTE_NONE, false, false, true, 8, 2048, 5},
		{"gpt-1.7b", 2, 2, 1, 2, 1, 1, 2, SIM_1F1B, SIM_RECOMPUTE_NONE, true, false, false, 8, 2048, -1},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		model *m;
		ck_assert_int_eq(model_load(cases[i].model, &m, err, sizeof err), 0);
		sim_train_cfg cfg;
		sim_train_cfg_init(&cfg);
		if (cases[i].megatron)
			sim_train_cfg_framework(&cfg, fw);
		cfg.tp = cases[i].tp;
		cfg.pp = cases[i].pp;
		cfg.cp = cases[i].cp;
		cfg.dp = cases[i].dp;
		cfg.ep = cases[i].ep;
		cfg.vpp = cases[i].vpp;
		cfg.schedule = cases[i].sched;
		cfg.zero = cases[i].zero;
		cfg.recompute = cases[i].rc;
		cfg.sequence_parallel = cases[i].sp;
		cfg.full = cases[i].full;
		if (cases[i].straggler >= 0)
			cfg.straggler_rank = cases[i].straggler, cfg.straggler = 1.3;
		cfg.gpus = cfg.tp * cfg.pp * cfg.cp * cfg.dp;
		cfg.micro_batch = 1;
		cfg.global_batch = cases[i].micro * cfg.dp;
		cfg.seq = cases[i].seq;
		char what[64];
		snprintf(what, sizeof what, "case %zu (%s)", i, cases[i].model);
		int64_t n = stamps_exactly(m, c, &cfg, dir, what);
		if (cfg.zero >= 2)
			ck_assert_msg(n == 0, "%s: %lld jobs stamped under ZeRO-2", what, (long long)n);
		else
			ck_assert_msg(n > 0, "%s: no job stamped", what);
		model_free(m);
	}
	hw_profile_free(fw);
	hw_cost_free(c);
	hw_close(db);
	test_rmdir(dir);
}
END_TEST

START_TEST(deterministic_and_traced)
{
	const char *dir = test_tmpdir("simdet");
	hw_db *db = toy_db(dir);
	hw_cost *c;
	ck_assert_int_eq(hw_cost_new(db, "toy", &c, err, sizeof err), 0);
	model *m;
	ck_assert_int_eq(model_load("gpt-1.7b", &m, err, sizeof err), 0);
	sim_train_cfg cfg;
	sim_train_cfg_init(&cfg);
	cfg.gpus = 32;
	cfg.tp = 2;
	cfg.pp = 4;
	cfg.vpp = 2;
	cfg.micro_batch = 1;
	cfg.global_batch = 32;
	cfg.trace = true;
	sim_train_result *a = run_train(m, c, &cfg);
	sim_train_result *b = run_train(m, c, &cfg);
	cJSON *ja = sim_train_json(a), *jb = sim_train_json(b);
	char *sa = cJSON_Print(ja), *sb = cJSON_Print(jb);
	ck_assert_str_eq(sa, sb);
	free(sa), free(sb);
	cJSON_Delete(ja), cJSON_Delete(jb);
	char path[1200];
	snprintf(path, sizeof path, "%s/trace.json", dir);
	ck_assert_int_eq(sim_train_trace(a, path, err, sizeof err), 0);
	char *text;
	size_t len;
	ck_assert_int_eq(pp_read_file(path, 1 << 28, &text, &len, err, sizeof err), 0);
	cJSON *t = cJSON_Parse(text);
	ck_assert_ptr_nonnull(t);
	int n = cJSON_GetArraySize(cJSON_GetObjectItem(t, "traceEvents"));
	ck_assert_int_gt(n, 100);
	/* every complete event lies within the step */
	double step_us = sim_train_metrics(a)->step_time_s * 1e6;
	const cJSON *ev;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItem(t, "traceEvents"))
	{
		const cJSON *ph = cJSON_GetObjectItem(ev, "ph");
		if (strcmp(ph->valuestring, "X") != 0)
			continue;
		double ts = cJSON_GetObjectItem(ev, "ts")->valuedouble, du = cJSON_GetObjectItem(ev, "dur")->valuedouble;
		ck_assert(ts >= 0 && du > 0 && ts + du <= step_us * (1 + 1e-9));
	}
	cJSON_Delete(t);
	free(text);
	sim_train_result_free(a);
	sim_train_result_free(b);
	model_free(m);
	hw_cost_free(c);
	hw_close(db);
	test_rmdir(dir);
}
END_TEST

/* Korthikanti 2022 per-layer activation formulas (section 4), in bytes, on GPT-22B's shapes
 * (h = 6144, a = 64, s = 2048, b = 4, t = 8): no recompute sbh(10 + 24/t + 5as/(ht)); with SP
 * sbh/t (34 + 5as/h); selective with SP 34 sbh/t; full 2sbh. */
START_TEST(activation_memory_formulas)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	hw_system sys;
	ck_assert_int_eq(hw_system_get(db, "dgx-a100", &sys, err, sizeof err), 0);
	model *m;
	ck_assert_int_eq(model_load("gpt-22b", &m, err, sizeof err), 0);
	const model_tf *t = model_transformer(m);
	double s = 2048, b = 4, h = (double)t->hidden, a = (double)t->heads, tp = 8, L = (double)t->layers;
	struct {
		sim_recompute r;
		bool sp;
		double per_layer;
	} cases[] = {
		{SIM_RECOMPUTE_NONE, false, s * b * h * (10 + 24 / tp + 5 * a * s / (h * tp))},
		{SIM_RECOMPUTE_NONE, true, s * b * h / tp * (34 + 5 * a * s / h)},
		{SIM_RECOMPUTE_SELECTIVE, true, 34 * s * b * h / tp},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		sim_train_cfg cfg;
		sim_train_cfg_init(&cfg);
		cfg.gpus = 8;
		cfg.tp = 8;
		cfg.micro_batch = 4;
		cfg.global_batch = 4;
		cfg.seq = 2048;
		cfg.attention = SIM_ATTN_UNFUSED;
		cfg.dtype = HW_FP16;
		cfg.recompute = cases[i].r;
		cfg.sequence_parallel = cases[i].sp;
		ck_assert_int_eq(sim_train_check(m, &sys, &cfg, err, sizeof err), 0);
		sim_mem mem;
		sim_train_memory(m, &sys, &cfg, 0, &mem);
		/* one micro-batch in flight (pp = 1); the stage adds the embedding output and the
		 * logits, which the per-layer formula leaves out */
		double extra = 2.0 * s * b * h / (cases[i].sp ? tp : 1.0) + 2.0 * 4.0 * s * b * (double)t->vocab / tp;
		ck_assert_rel(mem.activations, L * cases[i].per_layer + extra, 1e-9);
	}
	model_free(m);
	hw_close(db);
}
END_TEST

/* ZeRO-3's gathers by the framework's granularity (HW_Z3_*), counted by hand for gpt2-xl (48
 * layers, linears with biases, LayerNorm): a layer's parameters in one all-gather, or each
 * block's two linear modules and norm apart (6 a layer), or each of their tensors apart (a
 * weight and a bias per linear, a scale and a shift per norm: 12 a layer).  Every layer gathers
 * before its forward and again before its backward, once per micro-batch: 2 micro-batches of
 * 1 on 32 ranks of batch 64.  Each extra collective pays the ring's latency, so the step only
 * grows. */
static void
zero3_gpt2xl_cfg(sim_train_cfg *cfg)
{
	sim_train_cfg_init(cfg);
	cfg->gpus = 32;
	cfg->zero = 3;
	cfg->micro_batch = 1;
	cfg->global_batch = 64;
	cfg->seq = 1024;
}

START_TEST(zero3_gather_granularity)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	hw_cost *cost;
	ck_assert_int_eq(hw_cost_new(db, "dgx-a100", &cost, err, sizeof err), 0);
	model *m;
	ck_assert_int_eq(model_load("gpt2-xl", &m, err, sizeof err), 0);
	int64_t ops[3];
	double step[3];
	for (int g = HW_Z3_LAYER; g <= HW_Z3_TENSOR; g++) {
		sim_train_cfg cfg;
		zero3_gpt2xl_cfg(&cfg);
		cfg.zero3_gather = g;
		sim_train_result *r = run_train(m, cost, &cfg);
		ops[g] = sim_train_metrics(r)->ops;
		step[g] = sim_train_metrics(r)->step_time_s;
		sim_train_result_free(r);
	}
	const int64_t gathers = 48 * 2 * 2;
	ck_assert_int_eq(ops[HW_Z3_MODULE] - ops[HW_Z3_LAYER], (6 - 1) * gathers);
	ck_assert_int_eq(ops[HW_Z3_TENSOR] - ops[HW_Z3_LAYER], (12 - 1) * gathers);
	ck_assert(step[HW_Z3_LAYER] <= step[HW_Z3_MODULE] && step[HW_Z3_MODULE] <= step[HW_Z3_TENSOR]);
	model_free(m);
	hw_cost_free(cost);
	hw_close(db);
}
END_TEST

/* Whether any ZeRO-3 gather of rank 0 runs while one of its compute ops does (the traced step's
 * ops, from the engine). */
static bool
gathers_beside_compute(const sim_train_result *r)
{
	const sim_engine *e = r->engine;
	int32_t n = sim_engine_ops(e);
	for (int32_t g = 0; g < n; g++) {
		int sg = sim_op_first_stream(e, g);
		if (sim_op_tag(e, g) >> 26 != TAG_ZERO_AG || sim_stream_rank(e, sg) != 0)
			continue;
		for (int32_t k = 0; k < n; k++) {
			int sk = sim_op_first_stream(e, k);
			if (sim_stream_kind(e, sk) != SIM_STREAM_COMPUTE || sim_stream_rank(e, sk) != 0)
				continue;
			if (sim_op_start(e, k) < sim_op_end(e, g) && sim_op_start(e, g) < sim_op_end(e, k))
				return true;
		}
	}
	return false;
}

/* ZeRO-3 without prefetching (zero3_prefetch off: DeepSpeed of early 2021) gathers a layer's
 * parameters once the layer before it is done: no gather runs beside the compute, and the step
 * is longer than with the gathers one layer ahead, which do run beside it. */
START_TEST(zero3_prefetch_off_serializes)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	hw_cost *cost;
	ck_assert_int_eq(hw_cost_new(db, "dgx-a100", &cost, err, sizeof err), 0);
	model *m;
	ck_assert_int_eq(model_load("gpt2-xl", &m, err, sizeof err), 0);
	double step[2];
	for (int pf = 0; pf < 2; pf++) {
		sim_train_cfg cfg;
		zero3_gpt2xl_cfg(&cfg);
		cfg.global_batch = 32;
		cfg.trace = true;
		cfg.zero3_prefetch = pf == 1;
		sim_train_result *r = run_train(m, cost, &cfg);
		ck_assert_msg(gathers_beside_compute(r) == (pf == 1), "prefetch %d", pf);
		step[pf] = sim_train_metrics(r)->step_time_s;
		sim_train_result_free(r);
	}
	ck_assert_msg(step[0] > step[1], "without prefetch %.6f s, with %.6f s", step[0], step[1]);
	model_free(m);
	hw_cost_free(cost);
	hw_close(db);
}
END_TEST

/* The precision gradients are reduced in, by hand: the dtype rule (fp32 for bf16 under DDP or
 * ZeRO-1, as Megatron-LM forces; 16 bits under ZeRO-2/3 and FSDP, and for fp8), a framework's
 * fp32 or bf16 (torchtitan's mixed_precision_reduce float32), and --grad-reduce above both.  A
 * ZeRO-3 rank's gradient shard and its reduce-scatters are in those bytes. */
START_TEST(grad_reduce_precision)
{
	static const struct {
		hw_dtype dtype;
		int zero;
		bool fsdp;
		int rule, given, bytes;
	} cases[] = {
		{HW_BF16, 1, false, HW_GR_DTYPE, 0, 4}, {HW_BF16, 3, true, HW_GR_DTYPE, 0, 2},
		{HW_BF16, 2, false, HW_GR_DTYPE, 0, 2}, {HW_FP8, 1, false, HW_GR_DTYPE, 0, 2},
		{HW_FP16, 0, false, HW_GR_DTYPE, 0, 2}, {HW_FP32, 3, true, HW_GR_DTYPE, 0, 4},
		{HW_BF16, 3, true, HW_GR_FP32, 0, 4},   {HW_FP8, 1, false, HW_GR_FP32, 0, 4},
		{HW_BF16, 1, false, HW_GR_BF16, 0, 2},  {HW_FP32, 0, false, HW_GR_BF16, 0, 4},
		{HW_BF16, 3, true, HW_GR_FP32, 2, 2},   {HW_BF16, 3, true, HW_GR_DTYPE, 4, 4},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		sim_train_cfg cfg;
		sim_train_cfg_init(&cfg);
		cfg.dtype = cases[i].dtype;
		cfg.zero = cases[i].zero;
		cfg.fsdp = cases[i].fsdp;
		cfg.grad_reduce = cases[i].rule;
		cfg.grad_reduce_bytes = cases[i].given;
		ck_assert_msg(sim_grad_bytes(&cfg) == cases[i].bytes, "case %zu: %d bytes", i, sim_grad_bytes(&cfg));
	}

	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	static const struct {
		const char *name;
		int rule;
	} fws[] = {{"torchtitan", HW_GR_FP32}, {"megatron", HW_GR_DTYPE}, {"megatron-2021", HW_GR_DTYPE},
		   {"llm-foundry", HW_GR_DTYPE}};
	for (size_t i = 0; i < sizeof fws / sizeof fws[0]; i++) {
		hw_profile *fw;
		ck_assert_int_eq(hw_profile_find(db, HW_SCOPE_FRAMEWORK, fws[i].name, &fw, err, sizeof err), 0);
		sim_train_cfg cfg;
		sim_train_cfg_init(&cfg);
		sim_train_cfg_framework(&cfg, fw);
		ck_assert_msg(cfg.grad_reduce == fws[i].rule, "%s: grad_reduce %d", fws[i].name, cfg.grad_reduce);
		hw_profile_free(fw);
	}

	/* gpt2-xl under ZeRO-3 on 32 A100s: the fp32 gradient shard is twice the bf16 one, and the
	 * step with twice the reduce-scatter bytes is no shorter */
	hw_cost *cost;
	ck_assert_int_eq(hw_cost_new(db, "dgx-a100", &cost, err, sizeof err), 0);
	model *m;
	ck_assert_int_eq(model_load("gpt2-xl", &m, err, sizeof err), 0);
	sim_mem mem[2];
	double step[2];
	for (int k = 0; k < 2; k++) {
		sim_train_cfg cfg;
		zero3_gpt2xl_cfg(&cfg);
		cfg.fsdp = true;
		cfg.grad_reduce = k ? HW_GR_FP32 : HW_GR_DTYPE;
		ck_assert_int_eq(sim_train_check(m, hw_cost_system(cost), &cfg, err, sizeof err), 0);
		sim_train_memory(m, hw_cost_system(cost), &cfg, 0, &mem[k]);
		sim_train_result *r = run_train(m, cost, &cfg);
		step[k] = sim_train_metrics(r)->step_time_s;
		sim_train_result_free(r);
	}
	ck_assert(mem[0].grads > 0);
	ck_assert_double_eq_tol(mem[1].grads, 2 * mem[0].grads, 1e-6 * mem[0].grads);
	ck_assert(step[1] >= step[0]);
	model_free(m);
	hw_cost_free(cost);
	hw_close(db);
}
END_TEST

/* ZeRO-3 with full recomputation, counted by hand for gpt2-xl (48 layers, one gather a layer)
 * on 32 ranks, 2 micro-batches of 1: a layer's recompute waits for a gather of its parameters.
 * Without zero3_regather (FSDP) that gather serves the recompute and the backward: 2 a layer a
 * micro-batch, 192 a step.  With it (DeepSpeed) the recompute releases them and the backward
 * gathers again: 3 a layer a micro-batch, 288 a step, and the step only grows. */
START_TEST(zero3_gathers_for_the_recompute)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	hw_cost *cost;
	ck_assert_int_eq(hw_cost_new(db, "dgx-a100", &cost, err, sizeof err), 0);
	model *m;
	ck_assert_int_eq(model_load("gpt2-xl", &m, err, sizeof err), 0);
	double step[2];
	for (int regather = 0; regather <= 1; regather++) {
		sim_train_cfg cfg;
		zero3_gpt2xl_cfg(&cfg);
		cfg.recompute = SIM_RECOMPUTE_FULL;
		cfg.zero3_regather = regather;
		sim_rank_ops *o = rank0_ops(m, cost, &cfg, &step[regather]);
		int gathers = 0, recomputes = 0;
		for (size_t i = 0; i < o->nops; i++) {
			const sim_rop *op = &o->ops[i];
			if (op->kind == SIM_OP_COLL && op->coll == HW_ALL_GATHER && op->group == SIM_G_DP)
				gathers++;
			char lab[64];
			if (op->kind != SIM_OP_COMPUTE || strncmp(sim_op_label(op->tag, lab, sizeof lab), "recompute", 9) != 0)
				continue;
			/* the layer's first recompute kernel waits for a gather of that layer */
			bool waits = false;
			for (size_t d = op->d0; d < op->d0 + op->nd; d++) {
				const sim_rop *w = &o->ops[o->deps[d]];
				waits = waits || (w->kind == SIM_OP_COLL && w->coll == HW_ALL_GATHER && w->layer == op->layer &&
						  w->mb == op->mb);
			}
			if (waits)
				recomputes++;
		}
		ck_assert_int_eq(gathers, 48 * 2 * (2 + regather));
		ck_assert_int_eq(recomputes, 48 * 2);
		sim_rank_ops_free(o);
	}
	ck_assert(step[1] >= step[0]);
	model_free(m);
	hw_cost_free(cost);
	hw_close(db);
}
END_TEST

/* ZeRO-3 on PyTorch runs its gathers and reduce-scatters on one NCCL stream of the DP group
 * (dp_one_stream), in the order they are issued: gpt2-xl (48 layers, one gather a layer, no
 * recompute) on 32 ranks, 2 micro-batches.  Rank 0's DP stream then holds, a micro-batch, 48
 * gathers for the forward, then the backward's as FSDP's BACKWARD_PRE issues them: the gather
 * of layer l - 1 ahead of the reduce-scatter of layer l (l = 47 .. 1), the reduce-scatter of
 * layer 0 last: 144 collectives a micro-batch, none on the reduce-scatter stream.  On two
 * streams (dp_one_stream off) the 96 reduce-scatters have a stream of their own, in layer order
 * 47 .. 0, and the step is no longer than on one. */
START_TEST(zero3_one_dp_stream)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	hw_cost *cost;
	ck_assert_int_eq(hw_cost_new(db, "dgx-a100", &cost, err, sizeof err), 0);
	model *m;
	ck_assert_int_eq(model_load("gpt2-xl", &m, err, sizeof err), 0);
	double step[2];
	for (int one = 0; one <= 1; one++) {
		sim_train_cfg cfg;
		zero3_gpt2xl_cfg(&cfg);
		cfg.dp_one_stream = one;
		sim_rank_ops *o = rank0_ops(m, cost, &cfg, &step[one]);
		/* each stream's DP collectives in program order: kind, layer, micro-batch */
		static int seq[2][400][3];
		int n[2] = {0, 0};
		for (int st = 0; st < 2; st++)
			for (int32_t q = 0;; q++) {
				const sim_rop *op = NULL;
				for (size_t i = 0; i < o->nops && op == NULL; i++)
					if (o->ops[i].stream == (st ? SIM_S_DP_RS : SIM_S_DP) && o->ops[i].seq == q)
						op = &o->ops[i];
				if (op == NULL)
					break;
				if (op->kind != SIM_OP_COLL || op->group != SIM_G_DP)
					continue;
				ck_assert_int_lt(n[st], 400);
				seq[st][n[st]][0] = op->coll == HW_ALL_GATHER ? 'g' : op->coll == HW_REDUCE_SCATTER ? 'r' : '?';
				seq[st][n[st]][1] = (int)op->layer;
				seq[st][n[st]][2] = (int)op->mb;
				n[st]++;
			}
		if (one) {
			ck_assert_int_eq(n[1], 0);
			ck_assert_int_eq(n[0], 2 * 144);
			for (int mb = 0; mb < 2; mb++) {
				int(*x)[3] = &seq[0][mb * 144];
				for (int l = 0; l < 48; l++)
					ck_assert(x[l][0] == 'g' && x[l][1] == l && x[l][2] == mb);
				ck_assert(x[48][0] == 'g' && x[48][1] == 47);
				for (int l = 47; l >= 1; l--) {
					int at = 49 + 2 * (47 - l);
					ck_assert_msg(x[at][0] == 'g' && x[at][1] == l - 1, "mb %d: gather of layer %d at %d", mb,
						      l - 1, at);
					ck_assert_msg(x[at + 1][0] == 'r' && x[at + 1][1] == l && x[at + 1][2] == mb,
						      "mb %d: reduce-scatter of layer %d at %d", mb, l, at + 1);
				}
				ck_assert(x[143][0] == 'r' && x[143][1] == 0 && x[143][2] == mb);
			}
		} else {
			ck_assert_int_eq(n[0], 2 * 96);
			ck_assert_int_eq(n[1], 2 * 48);
			for (int i = 0; i < n[1]; i++)
				ck_assert(seq[1][i][0] == 'r' && seq[1][i][1] == 47 - i % 48 && seq[1][i][2] == i / 48);
		}
		sim_rank_ops_free(o);
	}
	ck_assert(step[0] <= step[1]);
	model_free(m);
	hw_cost_free(cost);
	hw_close(db);
}
END_TEST

/* ZeRO-Offload (Ren et al. 2021), worked by hand: with ZeRO-3 over 32 ranks each rank owns
 * P / 32 of gpt2-xl's P parameters; the offloaded step sends their 16-bit gradients to the host
 * and brings the 16-bit weights back (2 x 2 bytes a parameter over the host link), and the CPU
 * runs Adam over the fp32 states (28 bytes a parameter at host_optim_gbps).  The optimizer op is
 * exactly that long, with each system's own host link: dgx-h100's measured 51 GB/s (kernels.csv,
 * nvbandwidth), dgx-a100's the registry default. */
START_TEST(zero_offload_step_by_hand)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	model *m;
	ck_assert_int_eq(model_load("gpt2-xl", &m, err, sizeof err), 0);
	const char *systems[] = {"dgx-h100", "dgx-a100"};
	const double pcie[] = {51.0, 25.0};
	for (int i = 0; i < 2; i++) {
		hw_cost *cost;
		ck_assert_int_eq(hw_cost_new(db, systems[i], &cost, err, sizeof err), 0);
		ck_assert(fabs(hw_cost_param(cost, HW_P_PCIE_GBPS) - pcie[i]) < 1e-12);
		ck_assert(fabs(hw_cost_param(cost, HW_P_HOST_OPTIM_GBPS) - 25.0) < 1e-12);
		sim_train_cfg cfg;
		zero3_gpt2xl_cfg(&cfg);
		cfg.dtype = HW_BF16;
		cfg.offload_optimizer = true;
		sim_rank_ops *o = rank0_ops(m, cost, &cfg, NULL);
		double t = -1.0;
		for (size_t k = 0; k < o->nops; k++) {
			char lab[64];
			const sim_rop *op = &o->ops[k];
			if (op->kind == SIM_OP_COMPUTE && !strcmp(sim_op_label(op->tag, lab, sizeof lab), "optimizer"))
				t = (double)(op->end_ps - op->start_ps) * 1e-12;
		}
		double shard = model_params(m) / 32.0;
		double want = shard * 2.0 * 2.0 / (pcie[i] * 1e9) + shard * 28.0 / (25.0 * 1e9);
		ck_assert_msg(fabs(t - want) < 1e-6 * want, "%s: optimizer %.9f s, by hand %.9f s", systems[i], t, want);
		sim_rank_ops_free(o);
		hw_cost_free(cost);
	}
	model_free(m);
	hw_close(db);
}
END_TEST

/* Hybrid sharding by hand: gpt2-xl under FSDP on 32 A100s (4 nodes of 8), 2 micro-batches of
 * 1, sharded within each node (dp_shard 8, 4 replicas).  Rank 0's ops: every gather and
 * reduce-scatter spans its node's 8 ranks, all on NVLink; each reduce-scatter is followed on
 * its stream by one all-reduce of the node's shard of it (1/8 of the bytes) over the 4
 * replicas, one rank a node; 48 layers gathered twice and reduced once a micro-batch.  The
 * states per GPU are those of 8-way sharding: gradients and optimizer states 4x the 32-way
 * figures, the weights' shards 4x too. */
START_TEST(hybrid_sharding_by_hand)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	hw_cost *cost;
	ck_assert_int_eq(hw_cost_new(db, "dgx-a100", &cost, err, sizeof err), 0);
	model *m;
	ck_assert_int_eq(model_load("gpt2-xl", &m, err, sizeof err), 0);
	sim_mem mem[2];
	for (int k = 0; k < 2; k++) {
		sim_train_cfg cfg;
		zero3_gpt2xl_cfg(&cfg);
		cfg.fsdp = true;
		cfg.dp_shard = k ? 8 : 0;
		ck_assert_int_eq(sim_train_check(m, hw_cost_system(cost), &cfg, err, sizeof err), 0);
		ck_assert_int_eq(sim_dp_replicas(&cfg), k ? 4 : 1);
		sim_train_memory(m, hw_cost_system(cost), &cfg, 0, &mem[k]);
	}
	ck_assert_double_eq_tol(mem[1].grads, 4 * mem[0].grads, 1e-9 * mem[1].grads);
	ck_assert_double_eq_tol(mem[1].optimizer, 4 * mem[0].optimizer, 1e-9 * mem[1].optimizer);
	ck_assert(mem[1].weights > mem[0].weights);

	sim_train_cfg cfg;
	zero3_gpt2xl_cfg(&cfg);
	cfg.fsdp = true;
	cfg.dp_shard = 8;
	cfg.record_ops = true;
	sim_train_result *r = run_train(m, cost, &cfg);
	sim_rank_ops *o;
	ck_assert_msg(sim_train_rank_ops(r, 0, &o, err, sizeof err) == 0, "%s", err);
	int gathers = 0, scatters = 0, replicas = 0;
	double last_rs = 0.0;
	int last_stream = -1;
	for (size_t k = 0; k < o->nops; k++) {
		const sim_rop *op = &o->ops[k];
		if (op->kind != SIM_OP_COLL)
			continue;
		if (op->group == SIM_G_DP) {
			ck_assert_int_eq(op->group_size, 8);
			ck_assert_int_eq(op->per_node, 8);
			if (op->coll == HW_ALL_GATHER)
				gathers++;
			if (op->coll == HW_REDUCE_SCATTER) {
				scatters++;
				last_rs = op->bytes;
				last_stream = op->stream;
			}
		} else if (op->group == SIM_G_DPR) {
			ck_assert_int_eq(op->coll, HW_ALL_REDUCE);
			ck_assert_int_eq(op->group_size, 4);
			ck_assert_int_eq(op->per_node, 1);
			ck_assert_int_eq(op->stream, last_stream);
			ck_assert_double_eq_tol(op->bytes, last_rs / 8.0, 1e-9 * op->bytes);
			replicas++;
		}
	}
	ck_assert_int_eq(gathers, 48 * 2 * 2);
	ck_assert_int_eq(scatters, 48 * 2);
	ck_assert_int_eq(replicas, scatters);
	/* the group lists say the same: rank 0 shards with ranks 0-7, holds replicas with 8, 16, 24 */
	int g[32];
	ck_assert_int_eq(sim_group_members(sim_train_config(r), SIM_G_DP, 0, g, 32), 8);
	for (int i = 0; i < 8; i++)
		ck_assert_int_eq(g[i], i);
	ck_assert_int_eq(sim_group_members(sim_train_config(r), SIM_G_DPR, 0, g, 32), 4);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(g[i], 8 * i);
	sim_rank_ops_free(o);
	sim_train_result_free(r);
	model_free(m);
	hw_cost_free(cost);
	hw_close(db);
}
END_TEST

/* Megatron's asynchronous input-gradient all-reduce (tp_wgrad_overlap), worked by hand: Llama 3
 * 8B on TP 8 in one node (no DP, PP, SP or recomputation), 2 micro-batches of 2.  Without it every
 * collective is synchronous, so the step is the kernels and the all-reduces end to end.  With it
 * the all-reduce leaving each block's backward runs beside the block's first linear's weight
 * gradient (QKV, FC1), which moved to the end of the block's kernels and did not change: the step
 * shortens by min(all-reduce, weight gradient) for each block of each layer's backward of each
 * micro-batch, and by nothing else. */
START_TEST(tp_allreduce_beside_wgrad)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	hw_cost *cost;
	ck_assert_int_eq(hw_cost_new(db, "dgx-a100", &cost, err, sizeof err), 0);
	model *m;
	ck_assert_int_eq(model_load("llama-3-8b", &m, err, sizeof err), 0);
	sim_train_cfg cfg;
	sim_train_cfg_init(&cfg);
	cfg.gpus = 8;
	cfg.tp = 8;
	cfg.micro_batch = 2;
	cfg.global_batch = 4;
	cfg.seq = 1024;
	double step[2];
	for (int on = 0; on <= 1; on++) {
		cfg.tp_wgrad_overlap = on;
		sim_train_result *r = run_train(m, cost, &cfg);
		step[on] = sim_train_metrics(r)->step_time_s;
		sim_train_result_free(r);
	}
	ck_assert_int_eq(sim_train_check(m, hw_cost_system(cost), &cfg, err, sizeof err), 0);
	layer_cost lc;
	sim_layer_cost(m, cost, &cfg, 0, &lc);
	ck_assert(lc.attn.w.t > 0 && lc.mlp.w.t > 0);
	placement pl;
	sim_place(hw_cost_system(cost), &cfg, &pl);
	double msg = 2.0 * 1024.0 * (double)model_transformer(m)->hidden * sim_act_bytes(&cfg);
	double ar = hw_cost_coll_time(cost, HW_ALL_REDUCE, 8, pl.tp_per_node, msg, NULL);
	double hidden = (double)model_transformer(m)->layers * 2.0 * (fmin(ar, lc.attn.w.t) + fmin(ar, lc.mlp.w.t));
	ck_assert_rel(step[0] - step[1], hidden, 1e-6);
	/* the closed form of one layer's time (validate's per-layer rows) hides the same */
	double with = sim_layer_time(m, cost, &cfg, 0);
	cfg.tp_wgrad_overlap = false;
	ck_assert_rel(sim_layer_time(m, cost, &cfg, 0) - with, fmin(ar, lc.attn.w.t) + fmin(ar, lc.mlp.w.t), 1e-9);
	model_free(m);
	hw_cost_free(cost);
	hw_close(db);
}
END_TEST

/* Sliding-window attention, by hand: gpt-oss-20b (64 heads of 64, layer 0 in a 128-token
 * window, layer 1 over the whole context) at sequence 4096, micro-batch 1, tp 1.  The full
 * layer's scores and context are 2 x 64 x 4096^2 x (64 + 64) x 0.5 = 137,438,953,472 FLOPs
 * forward; the windowed layer's kernel scores 128 x 129 / 2 + 3968 x 128 = 516,160 pairs of
 * the 4096 x 4097 / 2 = 8,390,656 causal ones. */
START_TEST(sliding_window_attention)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	hw_cost *cost;
	ck_assert_int_eq(hw_cost_new(db, "dgx-h100", &cost, err, sizeof err), 0);
	model *m;
	ck_assert_int_eq(model_load("gpt-oss-20b", &m, err, sizeof err), 0);
	ck_assert_double_eq(model_causal_pairs(0, 4096, 128), 516160.0);
	ck_assert_double_eq(model_causal_pairs(0, 4096, 0), 8390656.0);
	ck_assert_double_eq(model_causal_pairs(3, 6, 4), 12.0); /* positions 3, 4, 5: four keys each */
	sim_train_cfg cfg;
	sim_train_cfg_init(&cfg);
	cfg.gpus = 8;
	cfg.micro_batch = 1;
	cfg.global_batch = 8;
	cfg.seq = 4096;
	ck_assert_int_eq(sim_train_check(m, hw_cost_system(cost), &cfg, err, sizeof err), 0);
	layer_cost win, full;
	sim_layer_cost(m, cost, &cfg, 0, &win);
	sim_layer_cost(m, cost, &cfg, 1, &full);
	ck_assert_rel(full.attn.fwd[1].flops, 137438953472.0, 1e-12);
	ck_assert_rel(win.attn.fwd[1].flops, 137438953472.0 * 516160.0 / 8390656.0, 1e-12);
	ck_assert(win.attn.fwd[1].t < full.attn.fwd[1].t && win.attn.bwd[1].t < full.attn.bwd[1].t);
	/* the blocks around the attention core are the same */
	ck_assert_double_eq(win.attn.fwd[0].t, full.attn.fwd[0].t);
	ck_assert_double_eq(win.mlp.fwd[1].t, full.mlp.fwd[1].t);
	ck_assert(!model_layers_alike(m, 0, 1) && model_layers_alike(m, 0, 2));
	/* model FLOPs, causally: 12 full layers of 3 x 4 x 64 x 64 x 2048 per token, 12 windowed of
	 * 3 x 4 x 64 x 64 x 516,160 / 4096 (NeMo Automodel's gpt_oss formula) */
	ck_assert_rel(model_flops_train_causal_per_token(m, 4096) - model_flops_train_causal_per_token(m, 0),
		      1207959552.0 + 74327040.0, 1e-12);
	/* and over the full matrix, the windowed layers' band: 128 keys a query */
	ck_assert_rel(model_flops_fwd_per_token(m, 4096) - model_flops_fwd_per_token(m, 0),
		      12.0 * 4.0 * 64 * 64 * (4096 + 128), 1e-12);
	model_free(m);
	hw_cost_free(cost);
	hw_close(db);
}
END_TEST

/* ZeRO-3 with GPT-530B at micro-batch 4 does not fit on 560 A100s, fits on 640, and fits at
 * micro-batch 1 on 2240, as Narayanan 2021 Table 2 reports. */
START_TEST(zero3_530b_fit)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	hw_system sys;
	ck_assert_int_eq(hw_system_get(db, "dgx-a100", &sys, err, sizeof err), 0);
	model *m;
	ck_assert_int_eq(model_load("gpt-530b", &m, err, sizeof err), 0);
	sim_train_cfg cfg;
	sim_train_cfg_init(&cfg);
	cfg.gpus = 560;
	cfg.zero = 3;
	cfg.micro_batch = 4;
	cfg.global_batch = 2240;
	cfg.dtype = HW_FP16;
	cfg.recompute = SIM_RECOMPUTE_FULL;
	cfg.attention = SIM_ATTN_UNFUSED;
	ck_assert_int_eq(sim_train_check(m, &sys, &cfg, err, sizeof err), 0);
	sim_mem mem;
	sim_train_memory(m, &sys, &cfg, 0, &mem);
	ck_assert_msg(!mem.fits, "530B ZeRO-3 mbs 4 on 560 GPUs: %.1f GiB fits in %.1f GiB", mem.total / 1073741824.0,
		      mem.capacity / 1073741824.0);
	cfg.gpus = 640;
	cfg.dp = 0;
	cfg.global_batch = 2560;
	ck_assert_int_eq(sim_train_check(m, &sys, &cfg, err, sizeof err), 0);
	sim_train_memory(m, &sys, &cfg, 0, &mem);
	ck_assert_msg(mem.fits, "530B ZeRO-3 mbs 4 on 640 GPUs: %.1f GiB", mem.total / 1073741824.0);
	cfg.gpus = 2240;
	cfg.dp = 0;
	cfg.global_batch = 2240;
	cfg.micro_batch = 1;
	ck_assert_int_eq(sim_train_check(m, &sys, &cfg, err, sizeof err), 0);
	sim_train_memory(m, &sys, &cfg, 0, &mem);
	ck_assert_msg(mem.fits, "530B ZeRO-3 mbs 1 on 2240 GPUs: %.1f GiB", mem.total / 1073741824.0);
	model_free(m);
	hw_close(db);
}
END_TEST

/* A segment keeps its time by the provenance that priced each kernel.  With every compute
 * parameter of the GPU fitted, all of every segment of a layer (GEMMs, flash attention,
 * memory-bound kernels) rests on fitted figures; with only the GEMM efficiency fitted, the
 * GEMM time is fitted and the memory-bound kernels' datasheet, adding up to the segment's time.
 * The sanitizer build once found the provenance of a GEMM read before the call that sets it
 * (unspecified argument order in add(s, hw_cost_gemm(..., &p), fl, p)). */
START_TEST(layer_provenance)
{
	for (int all = 1; all >= 0; all--) {
		hw_db *db;
		ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
		ck_assert_int_eq(hw_exec_simple(db, "DELETE FROM param WHERE origin = 'fitted'", err, sizeof err), 0);
		static const char *const keys[] = {"gemm_eff_bf16", "hbm_eff", "attn_flash2_fwd", "attn_flash2_bwd", "kernel_launch_us"};
		double vals[] = {0.7, 0.7, 0.7, 0.7, 3.0};
		for (size_t i = 0; i < (all ? 5 : 1); i++)
			ck_assert_msg(hw_param_set(db, "gpu", "h100-sxm", keys[i], vals[i], "fitted", "test", "test", 0, err,
						   sizeof err) == 0, "%s", err);
		hw_cost *c;
		ck_assert_int_eq(hw_cost_new(db, "dgx-h100", &c, err, sizeof err), 0);
		model *m;
		ck_assert_int_eq(model_load("llama-3-8b", &m, err, sizeof err), 0);
		sim_train_cfg cfg;
		sim_train_cfg_init(&cfg);
		ck_assert_int_eq(sim_train_check(m, hw_cost_system(c), &cfg, err, sizeof err), 0);
		layer_cost lc;
		sim_layer_cost(m, c, &cfg, 0, &lc);
		const block_cost *blocks[] = {&lc.attn, &lc.mlp};
		for (int b = 0; b < 2; b++)
			for (int i = 0; i < 6; i++) {
				const seg *g = i < 3 ? &blocks[b]->fwd[i] : &blocks[b]->bwd[i - 3];
				double f = g->pt[HW_PROV_FITTED], d = g->pt[HW_PROV_DATASHEET];
				ck_assert(g->t > 0);
				ck_assert_msg(fabs(f + d - g->t) <= 1e-12 * g->t, "block %d seg %d: %g + %g != %g", b, i, f, d, g->t);
				ck_assert(g->pt[HW_PROV_MEASURED] == 0.0);
				if (all)
					ck_assert_msg(d == 0.0 && seg_prov(g) == HW_PROV_FITTED, "block %d seg %d: %g s datasheet", b, i, d);
				else
					ck_assert(seg_prov(g) == (f >= d ? HW_PROV_FITTED : HW_PROV_DATASHEET));
			}
		if (!all) {
			/* the MLP's core (two GEMMs and the activation) is mostly GEMM time, not all of it */
			const seg *g = &lc.mlp.fwd[1];
			ck_assert_msg(g->pt[HW_PROV_FITTED] > 0.5 * g->t && g->pt[HW_PROV_DATASHEET] > 0.0,
				      "mlp core: %g fitted, %g datasheet of %g s", g->pt[HW_PROV_FITTED], g->pt[HW_PROV_DATASHEET],
				      g->t);
		}
		model_free(m);
		hw_cost_free(c);
		hw_close(db);
	}
}
END_TEST

/* A framework's fitted GEMM and attention scales make the time of those kernels rest on the
 * fit, though the GPU's kernel rates are shipped figures; the memory-bound kernels, which the
 * framework does not scale, keep the rates' provenance. */
START_TEST(layer_provenance_profile)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	hw_profile *fw;
	ck_assert_int_eq(hw_profile_find(db, HW_SCOPE_FRAMEWORK, "megatron", &fw, err, sizeof err), 0);
	ck_assert(hw_profile_prov(fw, HW_P_FW_GEMM_SCALE) == HW_PROV_FITTED);
	hw_cost *c;
	ck_assert_int_eq(hw_cost_new(db, "dgx-h100", &c, err, sizeof err), 0);
	model *m;
	ck_assert_int_eq(model_load("llama-3-8b", &m, err, sizeof err), 0);
	for (int with = 0; with < 2; with++) {
		sim_train_cfg cfg;
		sim_train_cfg_init(&cfg);
		if (with)
			sim_train_cfg_framework(&cfg, fw);
		ck_assert_int_eq(sim_train_check(m, hw_cost_system(c), &cfg, err, sizeof err), 0);
		layer_cost lc;
		sim_layer_cost(m, c, &cfg, 0, &lc);
		const seg *g = &lc.mlp.fwd[1]; /* two GEMMs and the activation */
		if (with)
			ck_assert_msg(g->pt[HW_PROV_FITTED] > 0.5 * g->t && g->pt[HW_PROV_DATASHEET] > 0.0,
				      "mlp core: %g fitted, %g datasheet of %g s", g->pt[HW_PROV_FITTED],
				      g->pt[HW_PROV_DATASHEET], g->t);
		else
			ck_assert_msg(g->pt[HW_PROV_FITTED] == 0.0, "no framework, yet %g s fitted", g->pt[HW_PROV_FITTED]);
	}
	model_free(m);
	hw_cost_free(c);
	hw_profile_free(fw);
	hw_close(db);
}
END_TEST

/* Model states of a 1T-parameter model (gpt-1t: 128 layers, h 25600) on one GPU and under
 * ZeRO-1 over 3072 data-parallel ranks: 2 bytes of bf16 weights, 4 of fp32 gradients (bf16 with
 * ZeRO <= 1 reduces in fp32) and 12 of Adam per parameter (Rajbhandari et al. 2020, section
 * 3), against the parameter count of the model module.  18 TB is far beyond 32 bits and still
 * exact in a double (below 2^53) and in 64-bit integers, where products that do overflow are
 * caught by pp_mul64. */
START_TEST(trillion_parameter_states)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	hw_system sys;
	ck_assert_int_eq(hw_system_get(db, "dgx-h100", &sys, err, sizeof err), 0);
	model *m;
	ck_assert_int_eq(model_load("gpt-1t", &m, err, sizeof err), 0);
	double P = model_params(m);
	ck_assert(P > 1.0e12 && P < 1.1e12);
	sim_train_cfg cfg;
	sim_train_cfg_init(&cfg);
	cfg.seq = 2048;
	ck_assert_int_eq(sim_train_check(m, &sys, &cfg, err, sizeof err), 0);
	sim_mem mem;
	ck_assert_int_eq(sim_train_memory(m, &sys, &cfg, 0, &mem), 0);
	ck_assert_rel(mem.weights, 2.0 * P, 1e-12);
	ck_assert_rel(mem.grads, 4.0 * P, 1e-12);
	ck_assert_rel(mem.optimizer, 12.0 * P, 1e-12);
	ck_assert(!mem.fits && isfinite(mem.total) && mem.total > 18.0 * P);
	int64_t ip = (int64_t)llround(P), bytes;
	ck_assert(pp_mul64(ip, 18, &bytes));
	ck_assert_rel((double)bytes, mem.weights + mem.grads + mem.optimizer, 1e-12);
	ck_assert(!pp_mul64(bytes, (int64_t)1 << 20, &bytes)); /* 18 TB x 2^20 overflows 64 bits */
	sim_train_cfg_init(&cfg);
	cfg.seq = 2048;
	cfg.gpus = 3072 * 8;
	cfg.tp = 8;
	cfg.zero = 1;
	cfg.global_batch = 3072;
	ck_assert_int_eq(sim_train_check(m, &sys, &cfg, err, sizeof err), 0);
	ck_assert_int_eq(cfg.dp, 3072);
	ck_assert_int_eq(sim_train_memory(m, &sys, &cfg, 0, &mem), 0);
	/* every parameter split over tp except the replicated norms and biases of each layer */
	ck_assert(mem.optimizer >= 12.0 * P / 8.0 / 3072.0 && mem.optimizer <= 12.0 * P / 8.0 / 3072.0 * 1.01);
	model_free(m);
	hw_close(db);
}
END_TEST

START_TEST(invalid_configurations)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	hw_system sys;
	ck_assert_int_eq(hw_system_get(db, "dgx-a100", &sys, err, sizeof err), 0);
	model *m;
	ck_assert_int_eq(model_load("gpt3-175b", &m, err, sizeof err), 0);
	struct {
		int gpus, tp, pp, vpp;
		int64_t mb, gb;
		const char *needle;
	} bad[] = {
		{64, 7, 1, 1, 1, 64, "must be a multiple of tp x pp x cp"},
		{64, 64, 1, 1, 1, 64, "attention heads (96) must be divisible by tp (64)"},
		{64, 8, 8, 1, 3, 64, "must be a multiple of dp x micro-batch"},
		{64, 8, 8, 13, 1, 64, "layers (96) must be at least pp x vpp - 2"},
		{64, 1, 128, 1, 1, 64, "must be a multiple of tp x pp x cp"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		sim_train_cfg cfg;
		sim_train_cfg_init(&cfg);
		cfg.gpus = bad[i].gpus;
		cfg.tp = bad[i].tp;
		cfg.pp = bad[i].pp;
		cfg.vpp = bad[i].vpp;
		cfg.micro_batch = bad[i].mb;
		cfg.global_batch = bad[i].gb;
		ck_assert_int_eq(sim_train_check(m, &sys, &cfg, err, sizeof err), PP_EUSAGE);
		ck_assert_msg(strstr(err, bad[i].needle) != NULL, "case %zu: \"%s\" lacks \"%s\"", i, err, bad[i].needle);
	}
	/* hybrid sharding: a shard group that divides dp, under ZeRO, of a transformer */
	static const struct {
		int zero, dp_shard;
		const char *needle; /* NULL: valid */
	} hy[] = {{1, 3, "--dp-shard (3) must divide dp (8)"}, {3, 16, "--dp-shard (16) must divide dp (8)"},
		  {0, 2, "it needs --zero 1, 2 or 3"}, {3, 2, NULL}, {1, 8, NULL}};
	for (size_t i = 0; i < sizeof hy / sizeof hy[0]; i++) {
		sim_train_cfg cfg;
		sim_train_cfg_init(&cfg);
		cfg.gpus = 64;
		cfg.tp = 8;
		cfg.global_batch = 64;
		cfg.zero = hy[i].zero;
		cfg.dp_shard = hy[i].dp_shard;
		int rc = sim_train_check(m, &sys, &cfg, err, sizeof err);
		if (hy[i].needle == NULL) {
			ck_assert_msg(rc == 0, "hybrid case %zu: %s", i, err);
			/* a shard group of every data-parallel rank is the plain form */
			ck_assert_int_eq(cfg.dp_shard, hy[i].dp_shard == cfg.dp ? 0 : hy[i].dp_shard);
			ck_assert_int_eq(sim_dp_shard(&cfg) * sim_dp_replicas(&cfg), cfg.dp);
		} else {
			ck_assert_int_eq(rc, PP_EUSAGE);
			ck_assert_msg(strstr(err, hy[i].needle) != NULL, "hybrid case %zu: \"%s\"", i, err);
		}
	}
	model *cnn;
	ck_assert_int_eq(model_load("resnet-50", &cnn, err, sizeof err), 0);
	sim_train_cfg cc;
	sim_train_cfg_init(&cc);
	cc.gpus = 8;
	cc.zero = 1;
	cc.dp_shard = 4;
	cc.micro_batch = 32;
	cc.global_batch = 256;
	cc.dtype = HW_FP16;
	ck_assert_int_eq(sim_train_check(cnn, &sys, &cc, err, sizeof err), PP_EUSAGE);
	ck_assert_msg(strstr(err, "hybrid sharding (--dp-shard) is not modelled for CNNs") != NULL, "%s", err);
	model_free(cnn);
	/* uneven stages: Llama-3-405B's 126 layers on 16 stages run 7 on the ends, 8 elsewhere */
	model *big;
	ck_assert_int_eq(model_load("llama-3-405b", &big, err, sizeof err), 0);
	sim_train_cfg cfg;
	sim_train_cfg_init(&cfg);
	cfg.gpus = 128;
	cfg.tp = 8;
	cfg.pp = 16;
	cfg.global_batch = 16;
	ck_assert_int_eq(sim_train_check(big, &sys, &cfg, err, sizeof err), 0);
	int total = 0;
	for (int s = 0; s < 16; s++) {
		int n = sim_stage_layers(big, &cfg, s);
		ck_assert_int_eq(n, (s == 0 || s == 15) ? 7 : 8);
		total += n;
	}
	ck_assert_int_eq(total, 126);
	/* interleaved, uneven: 126 layers in 16 x 8 = 128 virtual stages of 1 layer, the first and
	 * last giving theirs up (Llama 3's layout: embedding alone, head alone); in 16 x 4 = 64 of
	 * 2, the first and last holding 1 */
	cfg.schedule = SIM_INTERLEAVED;
	cfg.global_batch = 32;
	static const struct { int vpp, head, mid; } split[] = {{8, 0, 1}, {4, 1, 2}};
	for (size_t i = 0; i < 2; i++) {
		cfg.vpp = split[i].vpp;
		ck_assert_msg(sim_train_check(big, &sys, &cfg, err, sizeof err) == 0, "%s", err);
		int64_t next = 0;
		for (int ch = 0; ch < cfg.vpp; ch++)
			for (int s = 0; s < 16; s++) {
				int64_t first;
				int n = sim_chunk_layers(big, &cfg, s, ch, &first);
				bool end = (s == 0 && ch == 0) || (s == 15 && ch == cfg.vpp - 1);
				ck_assert_int_eq(n, end ? split[i].head : split[i].mid);
				ck_assert_int_eq(first, next); /* model order: chunk ch of stage s after stage s - 1's */
				next += n;
			}
		ck_assert_int_eq(next, 126);
		ck_assert_int_eq(sim_stage_layers(big, &cfg, 0), cfg.vpp * split[i].mid - (split[i].mid - split[i].head));
	}
	cfg.vpp = 9; /* 144 virtual stages: more than two would be empty */
	ck_assert_int_eq(sim_train_check(big, &sys, &cfg, err, sizeof err), PP_EUSAGE);
	model_free(big);
	model_free(m);
	hw_close(db);
}
END_TEST

/* Llama-3-405B's published layout (TP 8, PP 16, interleaved, 126 layers in uneven virtual
 * stages) simulates: every layer runs once, so the step executes the FLOPs of the same step
 * under 1F1B with its uneven stages, and interleaving shrinks the bubble. */
START_TEST(uneven_interleaved_runs)
{
	hw_db *db;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	hw_cost *c;
	ck_assert_int_eq(hw_cost_new(db, "dgx-h100", &c, err, sizeof err), 0);
	model *m;
	ck_assert_int_eq(model_load("llama-3-405b", &m, err, sizeof err), 0);
	double flops[3], bubble[3];
	for (int i = 0; i < 3; i++) {
		sim_train_cfg cfg;
		sim_train_cfg_init(&cfg);
		cfg.gpus = 128;
		cfg.tp = 8;
		cfg.pp = 16;
		cfg.micro_batch = 1;
		cfg.global_batch = 32;
		cfg.sequence_parallel = true;
		cfg.schedule = i == 0 ? SIM_1F1B : SIM_INTERLEAVED;
		cfg.vpp = i == 0 ? 1 : i == 1 ? 4 : 8;
		sim_train_result *r = run_train(m, c, &cfg);
		const sim_metrics *mt = sim_train_metrics(r);
		flops[i] = mt->hardware_tflops_per_gpu * mt->step_time_s;
		bubble[i] = mt->bubble_fraction;
		sim_train_result_free(r);
	}
	for (int i = 1; i < 3; i++) {
		ck_assert_rel(flops[i], flops[0], 1e-9);
		ck_assert_msg(bubble[i] < bubble[0], "vpp %d: bubble %.3f, 1F1B %.3f", i == 1 ? 4 : 8, bubble[i], bubble[0]);
	}
	model_free(m);
	hw_cost_free(c);
	hw_close(db);
}
END_TEST

/* ---- CNN batch inference ------------------------------------------------------------------- */

static sim_infer_result *
infer(const char *model_name, const char *system, int pp, int64_t batch, int64_t mb, model **mout, hw_db **dbout,
      hw_cost **cout)
{
	ck_assert_int_eq(hw_open(":memory:", 0, dbout, err, sizeof err), 0);
	ck_assert_int_eq(hw_cost_new(*dbout, system, cout, err, sizeof err), 0);
	ck_assert_int_eq(model_load(model_name, mout, err, sizeof err), 0);
	sim_infer_cfg c;
	sim_infer_cfg_init(&c);
	c.pp = pp;
	c.batch = batch;
	c.micro_batch = mb;
	sim_infer_result *r = NULL;
	ck_assert_msg(sim_infer(*mout, *cout, &c, &r, err, sizeof err) == 0, "%s", err);
	return r;
}

/* ResNet-50's largest live set is at layer1.0's downsample: its input (the block input,
 * 64x56x56), its output (256x56x56) and the branch's output waiting for the add (256x56x56):
 * 200,704 + 802,816 + 802,816 = 1,806,336 elements, 2 bytes each in fp16.  The weights are
 * 25,557,032 parameters x 2 bytes. */
START_TEST(infer_memory_by_hand)
{
	model *m;
	hw_db *db;
	hw_cost *c;
	sim_infer_result *r = infer("resnet-50", "pcie-t4x4", 1, 8, 8, &m, &db, &c);
	const sim_infer_stage *st = sim_infer_get_stage(r, 0);
	ck_assert_double_eq(st->activation_bytes, 1806336.0 * 2 * 8);
	ck_assert_double_eq(st->weights_bytes, 25557032.0 * 2);
	ck_assert_double_eq(st->recv_bytes, 0.0);
	ck_assert(sim_infer_get_metrics(r)->fits);
	sim_infer_result_free(r);
	model_free(m);
	hw_cost_free(c);
	hw_close(db);
}
END_TEST

/* Identical micro-batches through the stages and their sends (a flow shop of 2p - 1
 * machines): makespan = the sum of every machine's time + (m - 1) x the slowest machine. */
START_TEST(infer_pipeline_closed_form)
{
	model *m;
	hw_db *db;
	hw_cost *c;
	sim_infer_result *r = infer("resnet-152", "pcie-t4x4", 4, 1024, 64, &m, &db, &c);
	const sim_infer_metrics *mt = sim_infer_get_metrics(r);
	double sum = 0.0, slowest = 0.0, weights = 0.0, stage_max = 0.0, stage_sum = 0.0;
	const model_layer *ly;
	model_layers(m, &ly);
	for (int s = 0; s < 4; s++) {
		const sim_infer_stage *st = sim_infer_get_stage(r, s);
		sum += st->time_per_micro_s + st->send_per_micro_s;
		slowest = fmax(slowest, fmax(st->time_per_micro_s, st->send_per_micro_s));
		stage_max = fmax(stage_max, st->time_per_micro_s);
		stage_sum += st->time_per_micro_s;
		weights += st->weights_bytes;
		/* stages begin between residual blocks */
		const char *name = ly[st->first_layer].name;
		ck_assert_msg(st->first_layer == 0 || strstr(name, ".conv1") != NULL, "stage %d begins at %s", s, name);
		if (s > 0)
			ck_assert_int_eq(st->first_layer, sim_infer_get_stage(r, s - 1)->last_layer + 1);
	}
	ck_assert_int_eq(mt->micro_batches, 16);
	ck_assert_rel(mt->batch_latency_s, sum + 15.0 * slowest, 1e-9);
	ck_assert_rel(weights, model_params(m) * 2.0, 1e-12);
	ck_assert_msg(stage_max < 1.15 * stage_sum / 4, "stages unbalanced: %g s max, %g s mean", stage_max, stage_sum / 4);
	ck_assert_rel(mt->images_per_s, 1024.0 / mt->batch_latency_s, 1e-12);
	sim_infer_result_free(r);
	model_free(m);
	hw_cost_free(c);
	hw_close(db);
}
END_TEST

START_TEST(infer_bad_input)
{
	hw_db *db;
	hw_cost *c;
	model *m;
	ck_assert_int_eq(hw_open(":memory:", 0, &db, err, sizeof err), 0);
	ck_assert_int_eq(hw_cost_new(db, "pcie-t4x4", &c, err, sizeof err), 0);
	ck_assert_int_eq(model_load("llama-3-8b", &m, err, sizeof err), 0);
	sim_infer_cfg cfg;
	sim_infer_cfg_init(&cfg);
	sim_infer_result *r = NULL;
	ck_assert_int_eq(sim_infer(m, c, &cfg, &r, err, sizeof err), PP_EUSAGE);
	ck_assert_ptr_nonnull(strstr(err, "simulate serve"));
	model_free(m);
	ck_assert_int_eq(model_load("resnet-50", &m, err, sizeof err), 0);
	cfg.pp = 8; /* four T4s in the node */
	ck_assert_int_eq(sim_infer(m, c, &cfg, &r, err, sizeof err), PP_EUSAGE);
	ck_assert_ptr_nonnull(strstr(err, "--pp"));
	sim_infer_cfg_init(&cfg);
	cfg.batch = 100;
	cfg.micro_batch = 30;
	ck_assert_int_eq(sim_infer(m, c, &cfg, &r, err, sizeof err), PP_EUSAGE);
	ck_assert_ptr_nonnull(strstr(err, "--micro-batch"));
	sim_infer_cfg_init(&cfg);
	cfg.dtype = HW_FP8; /* no fp8 on a T4 */
	ck_assert_int_eq(sim_infer(m, c, &cfg, &r, err, sizeof err), PP_EUSAGE);
	ck_assert_ptr_null(r);
	model_free(m);
	hw_cost_free(c);
	hw_close(db);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("sim");
	TCase *te = tcase_create("engine");
	tcase_add_test(te, chain_sums);
	tcase_add_test(te, clock_refuses_overflow);
	tcase_add_test(te, impossible_step_refused);
	tcase_add_test(te, waits_for_later_dependency);
	tcase_add_test(te, two_flows_share_a_link);
	tcase_add_test(te, weighted_share);
	tcase_add_test(te, max_min_with_bottlenecks);
	tcase_add_test(te, private_links_bound_a_wide_flow);
	tcase_add_test(te, latency_and_rendezvous);
	tcase_add_test(te, interference_slows_compute);
	tcase_add_test(te, deadlock_is_reported);
	tcase_add_test(te, op_limit_is_exact);
	tcase_add_test(te, random_dag_matches_longest_path);
	tcase_add_test(te, event_queues_agree);
	tcase_add_test(te, bubbles_match_closed_forms);
	suite_add_tcase(s, te);
	TCase *tt = tcase_create("train");
	tcase_set_timeout(tt, 120);
	tcase_add_test(tt, symmetric_equals_full);
	tcase_add_test(tt, fold_is_exact);
	tcase_add_test(tt, fold_after_a_transient);
	tcase_add_test(tt, stamp_is_exact);
	tcase_add_test(tt, census_counts_the_full_graph);
	tcase_add_test(tt, hybrid_sharding_by_hand);
	tcase_add_test(tt, over_the_op_limit_refused_before_building);
	tcase_add_test(tt, deterministic_and_traced);
	tcase_add_test(tt, activation_memory_formulas);
	tcase_add_test(tt, zero3_530b_fit);
	tcase_add_test(tt, sliding_window_attention);
	tcase_add_test(tt, zero3_gather_granularity);
	tcase_add_test(tt, zero3_prefetch_off_serializes);
	tcase_add_test(tt, grad_reduce_precision);
	tcase_add_test(tt, zero3_gathers_for_the_recompute);
	tcase_add_test(tt, zero3_one_dp_stream);
	tcase_add_test(tt, zero_offload_step_by_hand);
	tcase_add_test(tt, tp_allreduce_beside_wgrad);
	tcase_add_test(tt, invalid_configurations);
	tcase_add_test(tt, uneven_interleaved_runs);
	tcase_add_test(tt, infer_memory_by_hand);
	tcase_add_test(tt, infer_pipeline_closed_form);
	tcase_add_test(tt, infer_bad_input);
	tcase_add_test(tt, layer_provenance);
	tcase_add_test(tt, layer_provenance_profile);
	tcase_add_test(tt, trillion_parameter_states);
	suite_add_tcase(s, tt);
	return test_run(s);
}
