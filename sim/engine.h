/*
 * engine.h -- the discrete-event engine, private to sim/ (and its tests).
 *
 * The engine runs a graph of ops on streams.  A stream executes its ops one at a time in the
 * order they were added; an op may belong to several streams at once (a collective shared by
 * the ranks of a group: it starts when it is at the head of every member stream, so it is
 * also the rendezvous).  An op starts when its dependencies are done and it heads all its
 * streams.
 *
 * Ops are compute (a fixed duration), flows (a latency, then `work` bytes moved over links at
 * a rate set by weighted max-min fairness among the flows active at the time, each capped by
 * its own achievable bandwidth) and marks (zero duration).  A flow names the links it crosses
 * with a coefficient per link: the bytes it moves there per byte of its work (1 on its
 * bottleneck link).  Whenever a flow starts or ends, the rates of the flows that share links
 * with it, transitively, are recomputed by progressive filling.
 *
 * Time is int64 picoseconds.  Events are ordered by (time, insertion sequence); nothing
 * depends on pointer values or hash order, so a run is deterministic.
 *
 * Interference: a rank may be given a slowdown; its compute ops then progress more slowly
 * while one of its comm streams runs an op, and are rescheduled whenever that changes.
 *
 * Accounting: every stream belongs to a "rank" (a simulated GPU) and is a compute or a comm
 * stream.  Per rank the engine integrates the time its compute streams are busy, the time
 * only communication is running (exposed communication), and idle time, and the busy time
 * of each provenance.
 */
#ifndef SIM_ENGINE_H
#define SIM_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "hardware/hw.h"

typedef struct sim_engine sim_engine;

enum { SIM_STREAM_COMPUTE = 0, SIM_STREAM_COMM = 1 };

/* Per-rank totals after a run. */
typedef struct sim_rank_stats {
	int64_t busy_ps;    /* a compute stream was running */
	int64_t comm_ps;    /* only communication was running */
	int64_t idle_ps;    /* nothing was running, up to the end of the run */
	int64_t prov_ps[HW_NPROV]; /* busy time of ops by provenance (compute and comm) */
	int64_t end_ps;     /* when the rank's last op finished */
} sim_rank_stats;

sim_engine *sim_engine_new(int nranks, bool record_times);
void sim_engine_free(sim_engine *e);

/* Resources.  Return ids >= 0, or -1 when out of memory. */
int sim_stream_new(sim_engine *e, int rank, int kind);
/* Compute on `rank` runs 1 / (1 + slowdown) as fast while any of its comm streams is busy
 * (communication kernels share the GPU's SMs and memory); 0 by default. */
void sim_rank_slowdown(sim_engine *e, int rank, double slowdown);
int sim_link_new(sim_engine *e, double bytes_per_s);

/* Ops.  Return the op id (>= 0), or -1 when out of memory.  `tag` is the caller's label
 * (kept for traces); `prov` the provenance of the duration. */
int32_t sim_op_compute(sim_engine *e, int stream, int64_t dur_ps, uint32_t tag, hw_prov prov);
int32_t sim_op_mark(sim_engine *e, int stream, uint32_t tag);
/* A flow on `nstreams` streams (all different) crossing `nlinks` links (coef[i] bytes on
 * links[i] per byte of work).  cap is its own rate limit (bytes/s of work); weight its share
 * under contention. */
int32_t sim_op_flow(sim_engine *e, const int *streams, int nstreams, const int *links, const double *coef,
		    int nlinks, int64_t latency_ps, double work, double cap, double weight, uint32_t tag, hw_prov prov);
/* A flow op like `like` (same streams, links, coefficients, latency, work, cap, weight and
 * provenance, as sim_op_flow made it) under another tag: a collective the builder repeats
 * layer after layer costs a copy instead of its construction. */
int32_t sim_op_flow_like(sim_engine *e, int32_t like, uint32_t tag);
/* `after` cannot start before `before` is done. */
int sim_dep(sim_engine *e, int32_t before, int32_t after);

/* A construction call kept to be made again (sim_journal_replay): a compute op (a: its stream),
 * a copy of a flow op on one stream (a: the op copied), or a dependency (a before z).  The ops a
 * dependency names are coded: k >= 0 the k-th op the replay makes, -2 - i the op in slot[i]. */
enum { SIM_REP_COMPUTE, SIM_REP_LIKE, SIM_REP_DEP };
typedef struct sim_rep {
	uint8_t what;   /* SIM_REP_* */
	uint8_t prov;   /* compute: the provenance of its duration */
	int32_t a, z;
	uint32_t tag;   /* its tag is tag | the replay's tag_lo */
	int64_t dur;    /* compute: duration (ps) */
} sim_rep;
/* Calls rep[0..n) checked against e (every stream and coded op exists, every copied op is a flow
 * op on one stream, every slot is below nslot) and kept, resolved, to be made again on e: NULL
 * where one is not so, or out of memory. */
typedef struct sim_journal sim_journal;
sim_journal *sim_journal_new(sim_engine *e, const sim_rep *rep, size_t n, int nslot);
void sim_journal_free(sim_journal *j);
/* Makes j's calls on e again, as sim_op_compute, sim_op_flow_like and sim_dep would, in order:
 * the same graph for a fraction of their work.  0, or -1 when out of memory, over the op limit,
 * given another engine than j's, or given a slot j names that holds no op. */
int sim_journal_replay(sim_engine *e, const sim_journal *j, const int32_t *slot, uint32_t tag_lo);

/* Runs to completion.  Returns 0, PP_ENOMEM, or PP_EINPUT when ops were left that could never
 * start (a dependency cycle or a rendezvous that never completes); *err says which. */
int sim_run(sim_engine *e, char *err, size_t errlen);

/* Refuses ops beyond `max` (the op constructors return -1, as out of memory, and sim_run fails);
 * sim_engine_over_limit says that this, not memory, stopped the graph. */
void sim_engine_limit_ops(sim_engine *e, size_t max);
/* Sizes the graph's arrays for that many ops, dependencies, stream memberships of ops on more
 * than one stream, flows and flow-link entries, so that building it allocates nothing more (a
 * hint: the arrays still grow past it).  Out of memory shows at sim_run. */
void sim_engine_reserve(sim_engine *e, size_t ops, size_t edges, size_t members, size_t flows, size_t flow_links);
bool sim_engine_over_limit(const sim_engine *e);
int64_t sim_engine_now(const sim_engine *e);
int64_t sim_engine_events(const sim_engine *e);
int32_t sim_engine_ops(const sim_engine *e);
void sim_engine_rank_stats(const sim_engine *e, int rank, sim_rank_stats *out);
/* Recorded times (record_times) and labels of an op, for traces and tests. */
int64_t sim_op_start(const sim_engine *e, int32_t op);
int64_t sim_op_end(const sim_engine *e, int32_t op);
uint32_t sim_op_tag(const sim_engine *e, int32_t op);
int sim_op_first_stream(const sim_engine *e, int32_t op);
int sim_stream_rank(const sim_engine *e, int stream);
/* Whether an op of the stream, its dependencies done, had to wait for the stream (busy, or
 * holding ops before it): the stream queued. */
bool sim_stream_waited(const sim_engine *e, int stream);
/* The graph as built, for the op lists of replay: an op's member streams, its successors
 * (the ops that cannot start before it is done: up to cap of them into out; returns how many
 * there are), and a stream's ops in program order. */
int sim_op_nstreams(const sim_engine *e, int32_t op);
int sim_op_stream(const sim_engine *e, int32_t op, int i);
size_t sim_op_succs(const sim_engine *e, int32_t op, int32_t *out, size_t cap);
size_t sim_stream_len(const sim_engine *e, int stream);
int32_t sim_stream_op(const sim_engine *e, int stream, size_t i);
int sim_stream_kind(const sim_engine *e, int stream);
int sim_engine_streams(const sim_engine *e);
/* Approximate heap memory held by the engine, bytes. */
size_t sim_engine_bytes(const sim_engine *e);

/* The clock's range: 2^62 ps, 53.4 days.  Half of int64_t, so that a time and a duration
 * within it add without overflow; sim_run stops with PP_ERANGE when an event falls past it. */
#define SIM_CLOCK_MAX_PS (INT64_C(1) << 62)

/* Seconds to picoseconds for a duration: negative and NaN give 0, anything past the clock's
 * range gives SIM_CLOCK_MAX_PS (and the run that schedules it stops with PP_ERANGE). */
static inline int64_t
sim_ps(double seconds)
{
	double ps = seconds * 1e12;
	if (!(ps > 0))
		return 0;
	if (ps >= (double)SIM_CLOCK_MAX_PS)
		return SIM_CLOCK_MAX_PS;
	return (int64_t)(ps + 0.5);
}

#endif
