/*
 * engine.c -- the discrete-event engine (see engine.h for the model).
 *
 * Storage is flat arrays indexed by int32 ids, laid out for the event loop:
 *   - an op's hot fields (dependency count, successor list, streams, the next op on its
 *     stream, state) sit together in one 28-byte record; its duration and tag, read once, apart;
 *   - a stream is a list threaded through its ops (the next op on the stream is kept in the
 *     op, or for an op on several streams in its membership record), so starting the next op
 *     reads the op record just finished instead of a per-stream array;
 *   - successor lists are singly linked through one edge array, so adding a dependency is O(1)
 *     and nothing is allocated per op;
 *   - flows that cross the same links with the same coefficients (every TP collective of an
 *     instance, every pipeline send of a stage) share one copy of their link list;
 *   - sim_engine_reserve sizes the arrays before a graph is built.  (Transparent huge pages
 *     for them were tried: the kernel's compaction cost more system time than the faults saved,
 *     and the resident size grew.)
 * Events are ordered by (time, insertion): a radix heap of FIFO buckets, or a binary heap where
 * few can be pending (see "events").  A flow no other flow can share a link with (a TP
 * collective inside its node) has its end known when it starts: one event, not one at the end
 * of its latency and another at its end.
 * Flow rates are recomputed only over the connected component (flows linked through shared
 * links) of the flow that started or ended; a stale completion event is recognised by its
 * version number and dropped.
 */
#include "config.h"
#include "sim/engine.h"

#include "common/pp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OP_COMPUTE, OP_FLOW, OP_MARK };
enum { ST_PENDING, ST_RUNNING, ST_DONE };
enum { EV_END, EV_LATENCY, EV_FREE }; /* EV_FREE: a node on the free list */

typedef struct eop {
	int32_t ndeps;   /* dependencies not yet done */
	int32_t succ;    /* first edge of the successor list, -1 */
	int32_t streams; /* nstreams == 1: the stream; else offset into memb */
	int32_t next;    /* nstreams == 1: the next op on the stream, -1 */
	int32_t flow;    /* index into flows, -1 */
	uint16_t nstreams;
	uint16_t heads;  /* member streams that are idle with this op at their head */
	uint8_t kind, prov, state;
} eop;

/* An op's place on one of several streams. */
typedef struct emember {
	int32_t stream;
	int32_t next;    /* the next op on that stream, -1 */
} emember;

typedef struct edge {
	int32_t to, next;
} edge;

typedef struct estream {
	int32_t first;   /* the stream's first op, -1 */
	int32_t head;    /* the op at its head (the next to run or running), -1 when done */
	int32_t tail;    /* the last op added, -1 */
	int32_t tail_slot; /* its membership record when it is on several streams, else -1 */
	int32_t n;       /* ops on the stream */
	int32_t rank;
	int32_t running; /* op running on the stream, -1 */
	int64_t started; /* when it started */
	uint8_t kind;
	bool head_counted;
	bool waited;     /* an op's last dependency was done while the stream was busy or held
	                  * ops before it (it queued) */
	/* a running compute op's progress, for rate changes under interference */
	double rem_ps;   /* picoseconds of work left at full speed */
	int64_t since;   /* when rem_ps was last brought up to date */
	uint32_t ver;    /* version of its completion event */
	int32_t evn;     /* the queue node of that event, -1: none (see requeue_event) */
} estream;

enum { PRIV_LEVELS = 4 }; /* distinct private link levels a flow tracks (see eflow) */

/* A flow: what it moves and how fast (made once), and its progress while it runs.  Ops made by
 * sim_op_flow_like share the flow record of the op they copy: they run on the same streams, so
 * one at a time, and the record holds the progress of whichever runs. */
typedef struct eflow {
	double work0;  /* bytes of work of each op that runs it */
	double work, cap, rate, weight;
	int64_t last;
	int32_t links; /* offset into flow_link / flow_coef (shared by flows with the same list) */
	uint16_t nlinks;
	bool active, frozen;
	bool excl;     /* never shares a link with another active flow (see link owners) */
	double alone;  /* its rate when no other flow shares its links */
	int64_t alone_ps; /* how long it takes alone from the start of its transfer, whole ps (as
	                   * later_ceil_at rounds it); -1: past that fast path; -2: not yet known */
	double capw;   /* cap / weight, the level at which its own cap stops it */
	/* While it runs: which of its links it shares (a bit per link, in the words at shared,
	 * or inline for up to 64 links) and the levels of the others, which it has to itself
	 * (cap / (weight coef), npriv distinct ones with their counts; a flow with more distinct
	 * levels than PRIV_LEVELS has them recounted when asked, priv_over). */
	uint64_t shared1;
	uint64_t *shared;
	double priv[PRIV_LEVELS];
	int32_t npriv_at[PRIV_LEVELS];
	uint8_t npriv;
	bool priv_over;
	double eff;    /* rate filling: the lowest of capw and its private levels */
	uint32_t version;
	uint32_t mark;
	int32_t op;    /* the op running it (or that ran it last) */
	int32_t evn;   /* the queue node of its completion event, -1: none (see requeue_event) */
} eflow;

/* A flow on a link: the flow and the link's place in the flow's list. */
typedef struct lentry {
	int32_t flow;
	int32_t m;
} lentry;

typedef struct elink {
	double cap;
	lentry *flows;    /* the active flows crossing it, in the order they joined */
	size_t n, ncap;
	uint32_t mark;
	double rem, wsum;
	double ratio;     /* rate filling: rem / wsum in this round, NaN when no weight is left */
	int32_t lastlist; /* the last link list (offset) that began with this link, -1 */
	int32_t lastlist_s0; /* the first stream of the last flow given that list */
	int32_t owner;   /* a stream every flow crossing the link runs on (-1: no flow yet, -2: none) */
} elink;

typedef struct erank {
	int32_t ncomp, ncomm;
	int64_t last;
	sim_rank_stats st;
	double slowdown;  /* compute runs 1 / (1 + slowdown) as fast while communication runs */
	double slow_rate; /* 1 / (1 + slowdown) */
	int32_t comp[4];  /* the rank's compute streams */
	int ncompstreams;
} erank;

/* ---- the event queue: a radix heap of FIFO buckets ------------------------------------------ */

typedef struct evnode {
	int64_t t;
	int32_t op;
	uint32_t ver;
	int32_t next;    /* the next event of the bucket, or the next free node */
	int32_t prev;    /* the previous event of the bucket, -1; in a small queue its place in the heap */
	uint8_t type;
	uint8_t bucket;  /* the bucket it is in */
} evnode;

/* An event in a small queue's heap: its time, the order it was queued in, its node. */
typedef struct hent {
	int64_t t;
	uint64_t seq;
	int32_t n;
} hent;

typedef struct equeue {
	evnode *node;
	size_t nnode, nodecap;
	int32_t freenode;
	bool small;       /* a binary heap (heap, seq) instead of the buckets below */
	hent *heap;
	size_t nheap, heapcap;
	uint64_t seq;
	int32_t head[65], tail[65]; /* bucket i > 0: events whose time first differs from `last`
				     * in bit i - 1; bucket 0: events at `last` */
	int64_t min[65];  /* the earliest time in each bucket (INT64_MAX when empty) */
	uint64_t used;   /* bit i - 1: bucket i holds events */
	int64_t last;    /* the time of the last event popped */
	size_t npending;
} equeue;

struct sim_engine {
	eop *ops;
	int64_t *dur;      /* compute: duration; flow: latency */
	uint32_t *tag;
	size_t nops, opcap; /* ops, dur and tag grow together */
	edge *edges;
	size_t nedges, edgecap;
	emember *memb;
	size_t nmemb, membcap;
	estream *streams;
	size_t nstreams, streamcap;
	eflow *flows;
	size_t nflows, flowcap;
	int32_t *flow_link;
	double *flow_coef;
	size_t nfl, flcap, fccap;
	elink *links;
	size_t nlinks, linkcap;
	erank *ranks;
	int nranks;
	equeue q;
	int64_t now;
	int64_t events;
	size_t ndone;      /* ops done */
	int64_t *start, *end; /* recorded times, or NULL */
	size_t startcap, endcap;
	bool record;
	bool oom;
	bool overflow; /* an event fell past SIM_CLOCK_MAX_PS: the run stops and says so */
	size_t maxops; /* op constructors refuse beyond this many ops */
	bool over;     /* ... and did */
	uint32_t mark;
	/* scratch for rate recomputation */
	int32_t *cflows, *clinks;
	size_t ncflows, ncflowcap, nclinks, nclinkcap;
	/* sim_stream_op: every stream's ops in an array, made on first use */
	int32_t *sseq;
	size_t *soff;
};

/* ---- memory -------------------------------------------------------------------------------- */

/* PP_GROW for the engine's arrays, with the common case (room left) inline. */
#define GROW(arr, cap, need)                                                                                      \
	((need) <= (cap) ? 0 : pp_grow((void **)&(arr), &(cap), (need), sizeof *(arr)))

static void
queue_init(equeue *q)
{
	q->freenode = -1;
	for (int i = 0; i <= 64; i++)
		q->head[i] = q->tail[i] = -1;
}

/* ---- construction -------------------------------------------------------------------------- */

sim_engine *
sim_engine_new(int nranks, bool record_times)
{
	if (nranks <= 0)
		return NULL;
	sim_engine *e = calloc(1, sizeof *e);
	if (e == NULL)
		return NULL;
	e->ranks = calloc((size_t)nranks, sizeof *e->ranks);
	if (e->ranks == NULL) {
		free(e);
		return NULL;
	}
	e->nranks = nranks;
	e->record = record_times;
	e->maxops = INT32_MAX - 1;
	queue_init(&e->q);
	return e;
}

void
sim_engine_limit_ops(sim_engine *e, size_t max)
{
	e->maxops = max < INT32_MAX - 1 ? max : INT32_MAX - 1;
}

bool
sim_engine_over_limit(const sim_engine *e)
{
	return e->over;
}

static int ops_grow(sim_engine *e, size_t need);

void
sim_engine_reserve(sim_engine *e, size_t ops, size_t edges, size_t members, size_t flows, size_t flow_links)
{
	if (ops > e->maxops)
		ops = e->maxops;
	if ((ops > e->opcap && ops_grow(e, ops) != 0) || GROW(e->edges, e->edgecap, edges) != 0 || GROW(e->memb, e->membcap, members) != 0 ||
	    GROW(e->flows, e->flowcap, flows) != 0 || GROW(e->flow_link, e->flcap, flow_links) != 0 ||
	    GROW(e->flow_coef, e->fccap, flow_links) != 0)
		e->oom = true;
}

void
sim_engine_free(sim_engine *e)
{
	if (e == NULL)
		return;
	for (size_t i = 0; i < e->nlinks; i++)
		free(e->links[i].flows);
	for (size_t i = 0; i < e->nflows; i++)
		free(e->flows[i].shared);
	free(e->ops);
	free(e->dur);
	free(e->tag);
	free(e->edges);
	free(e->memb);
	free(e->streams);
	free(e->flows);
	free(e->flow_link);
	free(e->flow_coef);
	free(e->links);
	free(e->ranks);
	free(e->q.node);
	free(e->q.heap);
	free(e->start);
	free(e->end);
	free(e->cflows);
	free(e->clinks);
	free(e->sseq);
	free(e->soff);
	free(e);
}

int
sim_stream_new(sim_engine *e, int rank, int kind)
{
	if (rank < 0 || rank >= e->nranks || GROW(e->streams, e->streamcap, e->nstreams + 1) != 0) {
		e->oom = true;
		return -1;
	}
	estream *s = &e->streams[e->nstreams];
	memset(s, 0, sizeof *s);
	s->first = s->head = s->tail = s->tail_slot = -1;
	s->rank = rank;
	s->kind = (uint8_t)kind;
	s->running = -1;
	s->evn = -1;
	erank *k = &e->ranks[rank];
	if (kind == SIM_STREAM_COMPUTE && k->ncompstreams < 4)
		k->comp[k->ncompstreams++] = (int32_t)e->nstreams;
	return (int)e->nstreams++;
}

void
sim_rank_slowdown(sim_engine *e, int rank, double slowdown)
{
	if (rank >= 0 && rank < e->nranks && slowdown >= 0) {
		e->ranks[rank].slowdown = slowdown;
		e->ranks[rank].slow_rate = 1.0 / (1.0 + slowdown);
	}
}

int
sim_link_new(sim_engine *e, double bytes_per_s)
{
	if (GROW(e->links, e->linkcap, e->nlinks + 1) != 0) {
		e->oom = true;
		return -1;
	}
	elink *l = &e->links[e->nlinks];
	memset(l, 0, sizeof *l);
	l->cap = bytes_per_s > 0 ? bytes_per_s : 1.0;
	l->lastlist = l->lastlist_s0 = l->owner = -1;
	return (int)e->nlinks++;
}

/* Grows ops, dur and tag to hold `need` ops. */
static int
ops_grow(sim_engine *e, size_t need)
{
	size_t c1 = e->opcap, c2 = e->opcap, c3 = e->opcap;
	if (PP_GROW(e->ops, c1, need) != 0 || PP_GROW(e->dur, c2, need) != 0 || PP_GROW(e->tag, c3, need) != 0)
		return PP_ENOMEM;
	/* the three grew by the same doubling from the same capacity */
	e->opcap = c1;
	return 0;
}

static int32_t op_new_slow(sim_engine *e, int kind, int64_t dur, uint32_t tag, hw_prov prov);

static inline int32_t
op_new(sim_engine *e, int kind, int64_t dur, uint32_t tag, hw_prov prov)
{
	size_t id = e->nops;
	if (__builtin_expect(id >= e->opcap || id >= e->maxops, 0))
		return op_new_slow(e, kind, dur, tag, prov);
	eop *o = &e->ops[id];
	o->ndeps = 0;
	o->succ = -1;
	o->streams = -1;
	o->next = -1;
	o->flow = -1;
	o->nstreams = 0;
	o->heads = 0;
	o->kind = (uint8_t)kind;
	o->prov = (uint8_t)prov;
	o->state = ST_PENDING;
	e->dur[id] = dur > 0 ? dur : 0;
	e->tag[id] = tag;
	e->nops = id + 1;
	return (int32_t)id;
}

/* op_new at the limit or with the arrays full (out of line: the common path saves no
 * registers). */
static __attribute__((noinline)) int32_t
op_new_slow(sim_engine *e, int kind, int64_t dur, uint32_t tag, hw_prov prov)
{
	if (e->nops >= e->maxops) {
		e->over = e->oom = true;
		return -1;
	}
	if (ops_grow(e, e->nops + 1) != 0) {
		e->oom = true;
		return -1;
	}
	return op_new(e, kind, dur, tag, prov);
}

/* Appends op `id` to stream s; slot is its membership record (-1: a one-stream op). */
static inline int
stream_push(sim_engine *e, int s, int32_t id, int32_t slot)
{
	estream *st = &e->streams[s];
	if (st->tail == id)
		return -1; /* a stream named twice by one op would wait for itself */
	if (st->tail < 0)
		st->first = st->head = id;
	else if (st->tail_slot < 0)
		e->ops[st->tail].next = id;
	else
		e->memb[st->tail_slot].next = id;
	st->tail = id;
	st->tail_slot = slot;
	st->n++;
	return 0;
}

static int32_t
single(sim_engine *e, int kind, int stream, int64_t dur, uint32_t tag, hw_prov prov)
{
	if (stream < 0 || (size_t)stream >= e->nstreams) {
		e->oom = true;
		return -1;
	}
	int32_t id = op_new(e, kind, dur, tag, prov);
	if (id < 0)
		return -1;
	e->ops[id].nstreams = 1;
	e->ops[id].streams = stream;
	stream_push(e, stream, id, -1);
	return id;
}

int32_t
sim_op_compute(sim_engine *e, int stream, int64_t dur_ps, uint32_t tag, hw_prov prov)
{
	return single(e, OP_COMPUTE, stream, dur_ps, tag, prov);
}

int32_t
sim_op_mark(sim_engine *e, int stream, uint32_t tag)
{
	return single(e, OP_MARK, stream, 0, tag, HW_PROV_MEASURED);
}

/* The offset of a link list equal to links/coef: the last list that began with the same link
 * when it matches (a collective repeated layer after layer), else a new copy. */
static int32_t
link_list(sim_engine *e, const int *links, const double *coef, int nlinks, bool *hit)
{
	*hit = false;
	if (nlinks > 0 && links[0] >= 0 && (size_t)links[0] < e->nlinks) {
		int32_t prev = e->links[links[0]].lastlist;
		if (prev >= 0 && (size_t)prev + (size_t)nlinks <= e->nfl) {
			bool same = true;
			for (int i = 0; i < nlinks && same; i++)
				same = e->flow_link[prev + i] == links[i] && e->flow_coef[prev + i] == (coef ? coef[i] : 1.0);
			if (same) {
				*hit = true;
				return prev;
			}
		}
	}
	for (int i = 0; i < nlinks; i++)
		if (links[i] < 0 || (size_t)links[i] >= e->nlinks)
			return -1;
	if (GROW(e->flow_link, e->flcap, e->nfl + (size_t)nlinks + 1) != 0 ||
	    GROW(e->flow_coef, e->fccap, e->nfl + (size_t)nlinks + 1) != 0)
		return -1;
	int32_t at = (int32_t)e->nfl;
	for (int i = 0; i < nlinks; i++) {
		e->flow_link[e->nfl] = links[i];
		e->flow_coef[e->nfl] = coef ? coef[i] : 1.0;
		e->nfl++;
	}
	if (nlinks > 0 && links[0] >= 0 && (size_t)links[0] < e->nlinks)
		e->links[links[0]].lastlist = at;
	return at;
}

int32_t
sim_op_flow(sim_engine *e, const int *streams, int nstreams, const int *links, const double *coef, int nlinks,
	    int64_t latency_ps, double work, double cap, double weight, uint32_t tag, hw_prov prov)
{
	if (nstreams < 1 || nstreams > 65535 || nlinks < 0 || nlinks > 65535) {
		e->oom = true;
		return -1;
	}
	for (int i = 0; i < nstreams; i++)
		if (streams[i] < 0 || (size_t)streams[i] >= e->nstreams) {
			e->oom = true;
			return -1;
		}
	int32_t id = op_new(e, OP_FLOW, latency_ps, tag, prov);
	if (id < 0)
		return -1;
	eop *o = &e->ops[id];
	o->nstreams = (uint16_t)nstreams;
	if (nstreams == 1) {
		o->streams = streams[0];
		if (stream_push(e, streams[0], id, -1) != 0) {
			e->oom = true;
			return -1;
		}
	} else {
		if (GROW(e->memb, e->membcap, e->nmemb + (size_t)nstreams) != 0) {
			e->oom = true;
			return -1;
		}
		o = &e->ops[id];
		o->streams = (int32_t)e->nmemb;
		for (int i = 0; i < nstreams; i++) {
			int32_t slot = (int32_t)e->nmemb++;
			e->memb[slot].stream = streams[i];
			e->memb[slot].next = -1;
			if (stream_push(e, streams[i], id, slot) != 0) {
				e->oom = true;
				return -1;
			}
		}
	}
	if (work > 0) {
		if (GROW(e->flows, e->flowcap, e->nflows + 1) != 0) {
			e->oom = true;
			return -1;
		}
		bool hit;
		int32_t at = link_list(e, links, coef, nlinks, &hit);
		if (at < 0) {
			e->oom = true;
			return -1;
		}
		/* Link owners: a link all of whose flows run on one stream never carries two at once
		 * (a stream runs one op at a time).  A repeated list with the same first stream changes
		 * no owner. */
		int32_t s0 = streams[0];
		if (nlinks > 0 && (!hit || e->links[links[0]].lastlist_s0 != s0)) {
			for (int i = 0; i < nlinks; i++) {
				elink *k = &e->links[links[i]];
				if (k->owner == -1)
					k->owner = s0;
				else if (k->owner != s0)
					k->owner = -2;
			}
			e->links[links[0]].lastlist_s0 = s0;
		}
		eflow *f = &e->flows[e->nflows];
		memset(f, 0, sizeof *f);
		f->evn = -1;
		f->alone_ps = -2;
		f->work0 = f->work = work;
		f->cap = cap > 0 ? cap : 1.0;
		f->weight = weight > 0 ? weight : 1.0;
		f->links = at;
		f->nlinks = (uint16_t)nlinks;
		f->op = id;
		f->capw = f->cap / f->weight;
		/* alone, it moves at its cap or a link's capacity over its coefficient there */
		f->alone = f->cap;
		for (int m = 0; m < nlinks; m++) {
			double c = e->flow_coef[at + m];
			if (c > 0 && e->links[e->flow_link[at + m]].cap / c < f->alone)
				f->alone = e->links[e->flow_link[at + m]].cap / c;
		}
		e->ops[id].flow = (int32_t)e->nflows++;
	}
	return id;
}

static inline int32_t flow_like(sim_engine *e, int32_t like, uint32_t tag);

int32_t
sim_op_flow_like(sim_engine *e, int32_t like, uint32_t tag)
{
	return flow_like(e, like, tag);
}

static inline __attribute__((always_inline)) int32_t
flow_like(sim_engine *e, int32_t like, uint32_t tag)
{
	if (like < 0 || (size_t)like >= e->nops || e->ops[like].kind != OP_FLOW) {
		e->oom = true;
		return -1;
	}
	int32_t id = op_new(e, OP_FLOW, e->dur[like], tag, (hw_prov)e->ops[like].prov);
	if (id < 0)
		return -1;
	eop *o = &e->ops[id];
	const eop *l = &e->ops[like];
	int n = l->nstreams;
	o->nstreams = (uint16_t)n;
	if (n == 1) {
		o->streams = l->streams;
		if (stream_push(e, l->streams, id, -1) != 0) {
			e->oom = true;
			return -1;
		}
	} else {
		if (GROW(e->memb, e->membcap, e->nmemb + (size_t)n) != 0) {
			e->oom = true;
			return -1;
		}
		o = &e->ops[id];
		l = &e->ops[like];
		o->streams = (int32_t)e->nmemb;
		for (int i = 0; i < n; i++) {
			int32_t slot = (int32_t)e->nmemb++, st = e->memb[l->streams + i].stream;
			e->memb[slot].stream = st;
			e->memb[slot].next = -1;
			if (stream_push(e, st, id, slot) != 0) {
				e->oom = true;
				return -1;
			}
		}
	}
	e->ops[id].flow = e->ops[like].flow; /* the same flow record: see eflow */
	return id;
}

/* sim_dep when the edge array is full (out of line: the common path saves no registers). */
static __attribute__((noinline)) int
dep_grow(sim_engine *e, int32_t before, int32_t after)
{
	if (GROW(e->edges, e->edgecap, e->nedges + 1) != 0) {
		e->oom = true;
		return -1;
	}
	return sim_dep(e, before, after);
}

static inline int dep_add(sim_engine *e, int32_t before, int32_t after);

int
sim_dep(sim_engine *e, int32_t before, int32_t after)
{
	return dep_add(e, before, after);
}

static inline __attribute__((always_inline)) int
dep_add(sim_engine *e, int32_t before, int32_t after)
{
	/* one unsigned comparison catches a negative id too */
	if ((uint32_t)before >= e->nops || (uint32_t)after >= e->nops) {
		e->oom = true;
		return -1;
	}
	size_t n = e->nedges;
	if (__builtin_expect(n >= e->edgecap, 0))
		return dep_grow(e, before, after);
	eop *ops = e->ops;
	e->edges[n] = (edge){.to = after, .next = ops[before].succ};
	ops[before].succ = (int32_t)n;
	ops[after].ndeps++;
	e->nedges = n + 1;
	return 0;
}

/* A journal, resolved: its ops as records to copy (each one's next op on its stream coded as
 * one of the journal's own, -1 for none), its dependencies in order, and for each stream its ops
 * are on, the first and last of them and how many.  Made again, the ops are written first, then
 * the dependencies: an op's successor list and dependency count come out as the calls made
 * them, whose order among the dependencies alone decides them. */
typedef struct jstream {
	int32_t stream, first, last, n;
} jstream;

struct sim_journal {
	const sim_engine *e;
	eop *op;           /* next: coded as above; everything else as made */
	int64_t *dur;
	uint32_t *tag;     /* without the replay's tag_lo */
	int32_t nops;
	int32_t *dep;      /* pairs of coded ops (see sim_rep) */
	int32_t ndeps;
	jstream *st;
	int nst;
	int nslot;
	uint64_t slots[4]; /* bit i: slot i is named (nslot <= 256) */
};

void
sim_journal_free(sim_journal *j)
{
	if (j == NULL)
		return;
	free(j->op);
	free(j->dur);
	free(j->tag);
	free(j->dep);
	free(j->st);
	free(j);
}

sim_journal *
sim_journal_new(sim_engine *e, const sim_rep *rep, size_t n, int nslot)
{
	if (nslot < 0 || nslot > 256 || n > (size_t)INT32_MAX / 2)
		return NULL;
	sim_journal *j = calloc(1, sizeof *j);
	size_t m = n ? n : 1;
	if (j == NULL || (j->op = malloc(m * sizeof *j->op)) == NULL || (j->dur = malloc(m * sizeof *j->dur)) == NULL ||
	    (j->tag = malloc(m * sizeof *j->tag)) == NULL || (j->dep = malloc(2 * m * sizeof *j->dep)) == NULL ||
	    (j->st = malloc(m * sizeof *j->st)) == NULL) {
		sim_journal_free(j);
		return NULL;
	}
	j->e = e;
	j->nslot = nslot;
	for (size_t i = 0; i < n; i++) {
		const sim_rep *x = &rep[i];
		bool ok = true;
		if (x->what == SIM_REP_DEP) {
			int32_t code[2] = {x->a, x->z};
			for (int k = 0; k < 2 && ok; k++) {
				int32_t c = code[k];
				if (c >= 0) {
					ok = c < j->nops;
				} else if (c <= -2 && -2 - (int64_t)c < nslot) {
					int sl = -2 - c;
					j->slots[sl >> 6] |= UINT64_C(1) << (sl & 63);
				} else {
					ok = false;
				}
			}
			j->dep[2 * j->ndeps] = x->a;
			j->dep[2 * j->ndeps + 1] = x->z;
			j->ndeps++;
		} else if (x->what == SIM_REP_COMPUTE || x->what == SIM_REP_LIKE) {
			eop o = {.ndeps = 0, .succ = -1, .next = -1, .flow = -1, .nstreams = 1, .state = ST_PENDING};
			int64_t dur = 0;
			if (x->what == SIM_REP_COMPUTE) {
				ok = x->a >= 0 && (size_t)x->a < e->nstreams && x->prov < HW_NPROV;
				o.kind = OP_COMPUTE, o.prov = x->prov, o.streams = x->a;
				dur = x->dur > 0 ? x->dur : 0;
			} else {
				/* a copy of a flow op on one stream (one on several is not journaled) */
				int32_t l = x->a;
				ok = l >= 0 && (size_t)l < e->nops && e->ops[l].kind == OP_FLOW && e->ops[l].nstreams == 1;
				if (ok) {
					o.kind = OP_FLOW, o.prov = e->ops[l].prov, o.streams = e->ops[l].streams;
					o.flow = e->ops[l].flow;
					dur = e->dur[l];
				}
			}
			if (ok) {
				int32_t id = j->nops++;
				j->op[id] = o;
				j->dur[id] = dur;
				j->tag[id] = x->tag;
				int k = 0;
				while (k < j->nst && j->st[k].stream != o.streams)
					k++;
				if (k == j->nst)
					j->st[j->nst++] = (jstream){o.streams, id, id, 1};
				else
					j->op[j->st[k].last].next = id, j->st[k].last = id, j->st[k].n++;
			}
		} else {
			ok = false;
		}
		if (!ok) {
			sim_journal_free(j);
			return NULL;
		}
	}
	return j;
}

int
sim_journal_replay(sim_engine *e, const sim_journal *j, const int32_t *slot, uint32_t tag_lo)
{
	if (j->e != e)
		return -1;
	size_t nops = e->nops;
	for (int i = 0; i < j->nslot; i++)
		if ((j->slots[i >> 6] >> (i & 63) & 1) && (slot[i] < 0 || (size_t)slot[i] >= nops))
			return -1;
	if (nops + (size_t)j->nops > e->maxops) {
		e->over = e->oom = true;
		return -1;
	}
	if ((nops + (size_t)j->nops > e->opcap && ops_grow(e, nops + (size_t)j->nops) != 0) ||
	    GROW(e->edges, e->edgecap, e->nedges + (size_t)j->ndeps) != 0) {
		e->oom = true;
		return -1;
	}
	/* Room made and every id checked: the ops and edges are written directly. */
	int32_t op0 = (int32_t)nops;
	eop *restrict ops = e->ops;
	int64_t *restrict dur = e->dur;
	uint32_t *restrict tag = e->tag;
	memcpy(&ops[op0], j->op, (size_t)j->nops * sizeof *ops);
	memcpy(&dur[op0], j->dur, (size_t)j->nops * sizeof *dur);
	for (int32_t k = 0; k < j->nops; k++) {
		ops[op0 + k].next += ops[op0 + k].next >= 0 ? op0 : 0;
		tag[op0 + k] = j->tag[k] | tag_lo;
	}
	for (int k = 0; k < j->nst; k++) {
		const jstream *js = &j->st[k];
		estream *st = &e->streams[js->stream];
		if (st->tail < 0)
			st->first = st->head = op0 + js->first;
		else if (st->tail_slot < 0)
			ops[st->tail].next = op0 + js->first;
		else
			e->memb[st->tail_slot].next = op0 + js->first;
		st->tail = op0 + js->last;
		st->tail_slot = -1;
		st->n += js->n;
	}
	e->nops = nops + (size_t)j->nops;
	edge *restrict edges = e->edges;
	size_t ne = e->nedges;
	for (int32_t k = 0; k < j->ndeps; k++) {
		int32_t a = j->dep[2 * k], z = j->dep[2 * k + 1];
		a = a >= 0 ? op0 + a : slot[-2 - a];
		z = z >= 0 ? op0 + z : slot[-2 - z];
		edges[ne] = (edge){.to = z, .next = ops[a].succ};
		ops[a].succ = (int32_t)ne++;
		ops[z].ndeps++;
	}
	e->nedges = ne;
	return 0;
}

/* ---- events -------------------------------------------------------------------------------- *
 *
 * Events leave in (time, insertion) order.  Times never go below the last one popped (nothing
 * is scheduled in the past), so the queue is a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan
 * 1990): an event waits in the bucket of the highest bit in which its time differs from the
 * last popped time, and when bucket 0 (the current time) is empty the lowest non-empty bucket
 * is spread into the buckets below it against its earliest time.  Buckets are FIFO lists, and
 * a bucket is always empty when it is filled by spreading (every bucket below the one spread
 * is), so each holds its events in insertion order and ties leave in that order without a
 * sequence number.  A push is a bit scan and a list append, a pop a list head: cheap at both
 * ends, for the few pending events of the symmetric mode and the ~13,000 of a full-mode step,
 * most of which fall on the same few instants. */

static inline int
bucket_of(int64_t t, int64_t last)
{
	return t <= last ? 0 : 64 - __builtin_clzll((uint64_t)(t ^ last));
}

static inline void
bucket_append(equeue *q, int b, int32_t n, int64_t t)
{
	q->node[n].next = -1;
	q->node[n].bucket = (uint8_t)b;
	if (q->head[b] < 0) {
		q->node[n].prev = -1;
		q->head[b] = n;
		q->min[b] = t;
		if (b > 0)
			q->used |= UINT64_C(1) << (b - 1);
	} else {
		q->node[n].prev = q->tail[b];
		q->node[q->tail[b]].next = n;
		if (t < q->min[b])
			q->min[b] = t;
	}
	q->tail[b] = n;
}

/* A node for an event when none is free (out of line: the common path saves no registers). */
static __attribute__((noinline)) int32_t
node_new(sim_engine *e)
{
	equeue *q = &e->q;
	if (GROW(q->node, q->nodecap, q->nnode + 1) != 0) {
		e->oom = true;
		return -1;
	}
	return (int32_t)q->nnode++;
}

/* The time dt_ps after now, checked: past SIM_CLOCK_MAX_PS (or not a number) the run is marked
 * as overflowed and stops, instead of the 64-bit clock wrapping to a negative step time (a
 * 1T-parameter step on one GPU printed one) or a double too large for int64_t.  Every event is
 * scheduled through it or through later_ps. */
static inline int64_t
later_at(sim_engine *e, int64_t base, double dt_ps)
{
	if (!(dt_ps >= 0))
		dt_ps = isnan(dt_ps) ? (double)SIM_CLOCK_MAX_PS : 0.0;
	if (dt_ps > (double)(SIM_CLOCK_MAX_PS - base)) {
		e->overflow = true;
		return SIM_CLOCK_MAX_PS;
	}
	return base + (int64_t)dt_ps;
}

/* ceil(x) in whole picoseconds where 0 <= x < 2^52 (exact there), else -1. */
static inline int64_t
ceil_ps(double x)
{
	if (!(x >= 0 && x < 4503599627370496.0))
		return -1;
	int64_t i = (int64_t)x;
	return i + ((double)i < x);
}

/* later_at(e, base, ceil(x)): the time x picoseconds after base, rounded up to a whole
 * picosecond.  Every rate-made duration is scheduled through it.  For 0 <= x < 2^52 (any
 * duration below 52 days) the integer part of x is exact in an int64_t, so the ceiling is made
 * in integers and the clock's range checked against it: the same time as through ceil and
 * later_at, whose rounding and range test are exact there too, for a third of their
 * instructions (the build targets x86-64 without SSE4.1's roundsd, and ceil there takes a
 * dozen).  Anything else (negative, NaN, past 2^52) goes through them. */
static inline int64_t
later_ceil_at(sim_engine *e, int64_t base, double x)
{
	int64_t i = ceil_ps(x);
	if (i >= 0 && i <= SIM_CLOCK_MAX_PS - base)
		return base + i;
	return later_at(e, base, ceil(x));
}

/* The same for a duration already in whole picoseconds (an op's fixed time), in integers: a
 * round trip through double would round durations above 2^53 ps. */
static inline int64_t
later_ps(sim_engine *e, int64_t dt_ps)
{
	if (dt_ps < 0)
		dt_ps = 0;
	if (dt_ps > SIM_CLOCK_MAX_PS - e->now) {
		e->overflow = true;
		return SIM_CLOCK_MAX_PS;
	}
	return e->now + dt_ps;
}

/* A small queue (sim_run makes one where few events can be pending at once, the symmetric
 * mode's ten or so, against thousands in the full mode): a binary heap ordered by time, then by
 * the order events were queued in (a requeued one counting as queued anew), which is the order
 * the buckets give.  With a handful of events it sifts through two or three levels, where the
 * buckets spread almost every pop. */
static inline bool
hent_before(const hent *a, const hent *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static inline void
heap_put(equeue *q, size_t i, hent x)
{
	q->heap[i] = x;
	q->node[x.n].prev = (int32_t)i;
}

/* Places x at i or above it. */
static inline void
heap_up(equeue *q, size_t i, hent x)
{
	while (i > 0 && hent_before(&x, &q->heap[(i - 1) / 2])) {
		heap_put(q, i, q->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	heap_put(q, i, x);
}

/* Places x at i or below it. */
static inline void
heap_down(equeue *q, size_t i, hent x)
{
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= q->nheap)
			break;
		if (c + 1 < q->nheap && hent_before(&q->heap[c + 1], &q->heap[c]))
			c++;
		if (!hent_before(&q->heap[c], &x))
			break;
		heap_put(q, i, q->heap[c]);
		i = c;
	}
	heap_put(q, i, x);
}

static inline __attribute__((always_inline)) int32_t
push_event(sim_engine *e, int64_t t, int32_t op, uint32_t ver, int type)
{
	equeue *q = &e->q;
	int32_t n;
	if (q->freenode >= 0) {
		n = q->freenode;
		q->freenode = q->node[n].next;
	} else if ((n = node_new(e)) < 0) {
		return -1;
	}
	evnode *x = &q->node[n];
	x->t = t;
	x->op = op;
	x->ver = ver;
	x->type = (uint8_t)type;
	if (q->small) {
		if (q->nheap == q->heapcap && GROW(q->heap, q->heapcap, q->nheap + 1) != 0) {
			e->oom = true;
			return -1;
		}
		heap_up(q, q->nheap++, (hent){t, q->seq++, n});
	} else {
		bucket_append(q, bucket_of(t, q->last), n, t);
	}
	q->npending++;
	return n;
}

/* Reschedules a completion event when a rate change replaces it: (op, ver)'s completion, held
 * by node n, moves to time t under version ver + 1.  Where n no longer holds it (it may have
 * fired, and its node serve another event since) a new event is pushed.  Left in the queue, a
 * replaced event would only be dropped when it came up (its version is stale), but until then
 * every spreading of its bucket walks it again: under interference a step's compute ops are
 * re-rated at every communication start and end, and the stale events outnumbered the live ones
 * many times over in a full-mode 16,384-GPU step.  The old bucket's earliest time stays a lower
 * bound, which pop_event allows for.
 *
 * The node is unlinked and appended to the tail of its new bucket in place: taking it out to the
 * free list and pushing anew would take the same node back (the free list's head), so the queue
 * ends in the same state, and the order of ties with it, for less work (a tenth of a step's
 * instructions went to the two under interference). */
static inline __attribute__((always_inline)) int32_t
requeue_event(sim_engine *e, int32_t n, int32_t op, uint32_t ver, int64_t t)
{
	equeue *q = &e->q;
	if (n < 0 || (size_t)n >= q->nnode)
		return push_event(e, t, op, ver + 1, EV_END);
	evnode *x = &q->node[n];
	if (x->type != EV_END || x->op != op || x->ver != ver)
		return push_event(e, t, op, ver + 1, EV_END);
	if (q->small) {
		x->t = t;
		x->ver = ver + 1;
		size_t i = (size_t)x->prev;
		hent h = {t, q->seq++, n};
		if (i > 0 && hent_before(&h, &q->heap[(i - 1) / 2]))
			heap_up(q, i, h);
		else
			heap_down(q, i, h);
		return n;
	}
	int b = x->bucket;
	if (x->prev >= 0)
		q->node[x->prev].next = x->next;
	else
		q->head[b] = x->next;
	if (x->next >= 0)
		q->node[x->next].prev = x->prev;
	else
		q->tail[b] = x->prev;
	if (q->head[b] < 0 && b > 0)
		q->used &= ~(UINT64_C(1) << (b - 1));
	x->t = t;
	x->ver = ver + 1;
	bucket_append(q, bucket_of(t, q->last), n, t);
	return n;
}

/* The earliest event; the queue must not be empty. */
static evnode
pop_event(sim_engine *e)
{
	equeue *q = &e->q;
	int32_t n = q->head[0];
	if (q->small) {
		n = q->heap[0].n;
		if (--q->nheap > 0)
			heap_down(q, 0, q->heap[q->nheap]);
		goto take;
	}
	while (n < 0) {
		/* spread the lowest non-empty bucket against its earliest time; when that time was a
		 * dropped event's (requeue_event), nothing lands in bucket 0 and the next spreading
		 * starts from the exact earliest time of a lower bucket */
		int b = __builtin_ctzll(q->used) + 1;
		int32_t h = q->head[b];
		q->head[b] = q->tail[b] = -1;
		q->used &= ~(UINT64_C(1) << (b - 1));
		if (q->node[h].next < 0) {
			/* A bucket of one event (about half the spreadings): spread, it would move down
			 * through the empty buckets below to bucket 0, `last` becoming its time (its
			 * bucket's earliest time, or a lower bound of it after a requeue_event), and
			 * leave at once.  It leaves from here in the same state. */
			q->last = q->node[h].t;
			n = h;
			goto take;
		}
		int64_t min = q->min[b];
		q->last = min;
		while (h >= 0) {
			int32_t next = q->node[h].next;
			int64_t t = q->node[h].t;
			bucket_append(q, bucket_of(t, min), h, t);
			h = next;
		}
		n = q->head[0];
	}
	q->head[0] = q->node[n].next;
	if (q->node[n].next >= 0)
		q->node[q->node[n].next].prev = -1;
take:;
	evnode x = q->node[n];
	q->node[n].next = q->freenode;
	q->node[n].type = EV_FREE;
	q->freenode = n;
	q->npending--;
	return x;
}

/* ---- accounting ---------------------------------------------------------------------------- */

static inline void
rank_advance_k(erank *k, int64_t now)
{
	int64_t dt = now - k->last;
	if (dt > 0) {
		if (k->ncomp > 0)
			k->st.busy_ps += dt;
		else if (k->ncomm > 0)
			k->st.comm_ps += dt;
		else
			k->st.idle_ps += dt;
	}
	k->last = now;
}

static void
rank_advance(sim_engine *e, int r)
{
	rank_advance_k(&e->ranks[r], e->now);
}

static inline int32_t
op_stream(const sim_engine *e, const eop *o, int i)
{
	return o->nstreams == 1 ? o->streams : e->memb[o->streams + i].stream;
}

/* How fast compute runs on a rank now: 1 / (1 + slowdown) while communication runs
 * (slow_rate, computed once), else 1. */
static inline double
compute_rate(const erank *k)
{
	return k->ncomm > 0 && k->slowdown > 0 ? k->slow_rate : 1.0;
}

/* Communication started or stopped on a rank: its running compute ops change speed. */
static __attribute__((noinline)) void
rerate(sim_engine *e, erank *k, double old_rate)
{
	if (k->ncomp == 0)
		return; /* nothing runs on its compute streams */
	double rate = compute_rate(k);
	if (rate == old_rate)
		return;
	for (int i = 0; i < k->ncompstreams; i++) {
		estream *st = &e->streams[k->comp[i]];
		if (st->running < 0 || e->ops[st->running].kind != OP_COMPUTE)
			continue;
		st->rem_ps -= (double)(e->now - st->since) * old_rate;
		if (st->rem_ps < 0)
			st->rem_ps = 0;
		st->since = e->now;
		st->evn = requeue_event(e, st->evn, st->running, st->ver, later_ceil_at(e, e->now, st->rem_ps / rate));
		st->ver++;
	}
}

/* An op starts (delta +1) or ends (-1) on stream s: the rank's time so far is accounted, its
 * running counters change, and its compute changes speed when its communication starts or
 * stops. */
static inline void
rank_touch(sim_engine *e, const estream *s, int delta)
{
	erank *k = &e->ranks[s->rank];
	rank_advance_k(k, e->now);
	if (s->kind == SIM_STREAM_COMPUTE) {
		k->ncomp += delta;
		return;
	}
	/* the compute rate depends only on whether communication runs: a second comm op starting
	 * or ending beside another changes nothing, and is not worth rerate's call */
	bool was = k->ncomm > 0;
	k->ncomm += delta;
	if (k->slowdown > 0 && k->ncomp > 0 && was != (k->ncomm > 0))
		rerate(e, k, was ? k->slow_rate : 1.0);
}

/* Adjusts the running-op counters of the ranks an op runs on (once per rank: a rank seen on
 * the op's previous stream is not counted again). */
static inline void
rank_count(sim_engine *e, const eop *o, int delta)
{
	if (o->nstreams == 1) {
		rank_touch(e, &e->streams[o->streams], delta);
		return;
	}
	int last = -1;
	for (int i = 0; i < o->nstreams; i++) {
		const estream *s = &e->streams[e->memb[o->streams + i].stream];
		if (s->rank == last)
			continue;
		last = s->rank;
		rank_touch(e, s, delta);
	}
}

/* ---- flows --------------------------------------------------------------------------------- */

/* Rate filling (Bertsekas and Gallager, "Data Networks", 6.5.2: max-min fairness by
 * progressive filling) runs over the connected component of the flow that joined or left: the
 * flows linked through links they share.  A link only one active flow crosses ("private" to it)
 * constrains that flow alone, at the fixed level cap / (weight x coefficient) until the flow is
 * frozen: each flow keeps the levels of its private links (usually one or two distinct values,
 * a data-parallel collective having hundreds of such links), and the filling visits shared
 * links only.  The component is found through shared links alone too.  Every value compared
 * and every sum is the one visiting all links gave, in the same order, so the rates are the same
 * to the bit; the cost of a collective's join is no longer its member count times its
 * component's size. */

/* A flow of more than WIDE_LINKS links (a collective over many members) keeps its shared links
 * and private levels as they change; a narrower one has them looked up when the filling needs
 * them, which costs less than keeping them for the few links it crosses. */
enum { WIDE_LINKS = 16 };

static inline bool
wide(const eflow *f)
{
	return f->nlinks > WIDE_LINKS;
}

static inline uint64_t *
shared_bits(eflow *f)
{
	return f->nlinks <= 64 ? &f->shared1 : f->shared;
}

static inline void
bit_set(eflow *f, int m)
{
	shared_bits(f)[m >> 6] |= UINT64_C(1) << (m & 63);
}

static inline void
bit_clear(eflow *f, int m)
{
	shared_bits(f)[m >> 6] &= ~(UINT64_C(1) << (m & 63));
}

/* The level of a link that flow f has to itself (what the filling computed for it: its capacity
 * over the weight it carries); false when it carries no weight (a zero coefficient). */
static inline bool
priv_level(const sim_engine *e, const eflow *f, int m, double *lv)
{
	double wsum = 0.0 + f->weight * e->flow_coef[f->links + m];
	if (!(wsum > 1e-300))
		return false;
	double rem = e->links[e->flow_link[f->links + m]].cap;
	*lv = (rem > 0 ? rem : 0) / wsum;
	return true;
}

static void
priv_add(eflow *f, double lv)
{
	if (f->priv_over)
		return;
	for (int i = 0; i < f->npriv; i++)
		if (f->priv[i] == lv) {
			f->npriv_at[i]++;
			return;
		}
	if (f->npriv == PRIV_LEVELS) {
		f->priv_over = true; /* recounted from its links when needed */
		return;
	}
	f->priv[f->npriv] = lv;
	f->npriv_at[f->npriv++] = 1;
}

static void
priv_del(eflow *f, double lv)
{
	if (f->priv_over)
		return;
	for (int i = 0; i < f->npriv; i++)
		if (f->priv[i] == lv) {
			if (--f->npriv_at[i] == 0) {
				f->npriv--;
				f->priv[i] = f->priv[f->npriv];
				f->npriv_at[i] = f->npriv_at[f->npriv];
			}
			return;
		}
}

/* The lowest level at which flow f stops by itself: its cap, or a private link. */
static double
flow_eff(const sim_engine *e, const eflow *f)
{
	double eff = f->capw;
	if (!wide(f) || f->priv_over) {
		for (int m = 0; m < f->nlinks; m++) {
			double lv;
			if (e->links[e->flow_link[f->links + m]].n == 1 && priv_level(e, f, m, &lv) && lv < eff)
				eff = lv;
		}
		return eff;
	}
	for (int i = 0; i < f->npriv; i++)
		if (f->priv[i] < eff)
			eff = f->priv[i];
	return eff;
}

/* Flow fi (its link m) joins link l. */
static void
link_add_flow(sim_engine *e, int32_t l, int32_t fi, int m)
{
	elink *k = &e->links[l];
	if (GROW(k->flows, k->ncap, k->n + 1) != 0) {
		e->oom = true;
		return;
	}
	eflow *f = &e->flows[fi];
	double lv;
	if (k->n == 0) {
		if (wide(f) && priv_level(e, f, m, &lv))
			priv_add(f, lv);
	} else {
		if (k->n == 1) {
			/* the flow that had it to itself shares it now */
			lentry o = k->flows[0];
			eflow *g = &e->flows[o.flow];
			if (wide(g)) {
				if (priv_level(e, g, o.m, &lv))
					priv_del(g, lv);
				bit_set(g, o.m);
			}
		}
		if (wide(f))
			bit_set(f, m);
	}
	k->flows[k->n++] = (lentry){fi, m};
}

/* Flow fi leaves link l. */
static void
link_remove_flow(sim_engine *e, int32_t l, int32_t fi)
{
	elink *k = &e->links[l];
	if (k->n == 1 && k->flows[0].flow == fi) {
		k->n = 0; /* the usual case: it was alone there */
		return;
	}
	size_t i = 0;
	while (i < k->n && k->flows[i].flow != fi)
		i++;
	if (i == k->n)
		return;
	/* keep the order: the rates are computed over the flows in this order */
	for (size_t j = i + 1; j < k->n; j++)
		k->flows[j - 1] = k->flows[j];
	k->n--;
	if (k->n == 1) {
		/* the flow left on it has it to itself again */
		lentry o = k->flows[0];
		eflow *g = &e->flows[o.flow];
		double lv;
		if (wide(g)) {
			bit_clear(g, o.m);
			if (priv_level(e, g, o.m, &lv))
				priv_add(g, lv);
		}
	}
}

static void
comp_add_link(sim_engine *e, int32_t l)
{
	if (e->links[l].mark == e->mark)
		return;
	e->links[l].mark = e->mark;
	if (GROW(e->clinks, e->nclinkcap, e->nclinks + 1) != 0) {
		e->oom = true;
		return;
	}
	e->clinks[e->nclinks++] = l;
}

/* Runs body for every shared link m of flow f, in the order of its links. */
#define FOR_SHARED(f, m, body)                                                                                    \
	do {                                                                                                      \
		if (wide(f)) {                                                                                    \
			const uint64_t *w_ = shared_bits(f);                                                      \
			for (int wi_ = 0; wi_ < ((f)->nlinks + 63) / 64; wi_++)                                   \
				for (uint64_t b_ = w_[wi_]; b_ != 0; b_ &= b_ - 1) {                              \
					int m = wi_ * 64 + __builtin_ctzll(b_);                                    \
					body;                                                                      \
				}                                                                                  \
		} else {                                                                                          \
			for (int m = 0; m < (f)->nlinks; m++)                                                     \
				if (e->links[e->flow_link[(f)->links + m]].n >= 2) {                              \
					body;                                                                      \
				}                                                                                  \
		}                                                                                                 \
	} while (0)

/* Recomputes the rates of the flows connected to `seed` (a flow that just joined, or the links
 * of one that just left) and reschedules their completions. */
static void
recompute(sim_engine *e, const int32_t *seed_links, int nseed, int32_t seed_flow)
{
	e->mark++;
	e->ncflows = e->nclinks = 0;
	for (int i = 0; i < nseed; i++)
		if (e->links[seed_links[i]].n > 0)
			comp_add_link(e, seed_links[i]);
	if (seed_flow >= 0 && e->flows[seed_flow].active) {
		e->flows[seed_flow].mark = e->mark;
		if (GROW(e->cflows, e->ncflowcap, e->ncflows + 1) != 0) {
			e->oom = true;
			return;
		}
		e->cflows[e->ncflows++] = seed_flow;
	}
	/* Breadth-first over links and flows (a private link leads to no other flow). */
	for (size_t li = 0; li < e->nclinks; li++) {
		elink *k = &e->links[e->clinks[li]];
		for (size_t j = 0; j < k->n; j++) {
			int32_t f = k->flows[j].flow;
			eflow *fl = &e->flows[f];
			if (fl->mark == e->mark)
				continue;
			fl->mark = e->mark;
			if (GROW(e->cflows, e->ncflowcap, e->ncflows + 1) != 0) {
				e->oom = true;
				return;
			}
			e->cflows[e->ncflows++] = f;
			FOR_SHARED(fl, m, comp_add_link(e, e->flow_link[fl->links + m]));
			k = &e->links[e->clinks[li]];
		}
	}
	/* Bring the work of every flow in the component up to now at its old rate. */
	for (size_t i = 0; i < e->ncflows; i++) {
		eflow *f = &e->flows[e->cflows[i]];
		if (f->rate > 0 && e->now > f->last) {
			f->work -= f->rate * (double)(e->now - f->last) * 1e-12;
			if (f->work < 0)
				f->work = 0;
		}
		f->last = e->now;
		f->frozen = false;
		f->eff = flow_eff(e, f);
	}
	/* Progressive filling: raise every unfrozen flow's rate in proportion to its weight until
	 * a link saturates (freezing its flows) or a flow reaches its cap or a private link's
	 * level. */
	for (size_t i = 0; i < e->nclinks; i++) {
		elink *k = &e->links[e->clinks[i]];
		k->rem = k->cap;
		k->wsum = 0;
	}
	for (size_t i = 0; i < e->ncflows; i++) {
		eflow *f = &e->flows[e->cflows[i]];
		FOR_SHARED(f, m, e->links[e->flow_link[f->links + m]].wsum += f->weight * e->flow_coef[f->links + m]);
	}
	size_t left = e->ncflows;
	while (left > 0) {
		double lam = INFINITY;
		for (size_t i = 0; i < e->ncflows; i++) {
			eflow *f = &e->flows[e->cflows[i]];
			if (!f->frozen && f->eff < lam)
				lam = f->eff;
		}
		/* each shared link's level once per round (the freezing below reads it; nothing
		 * changes it before the round's subtractions) */
		for (size_t i = 0; i < e->nclinks; i++) {
			elink *k = &e->links[e->clinks[i]];
			if (k->n < 2)
				continue;
			if (k->wsum > 1e-300) {
				double x = (k->rem > 0 ? k->rem : 0) / k->wsum;
				k->ratio = x;
				if (x < lam)
					lam = x;
			} else {
				k->ratio = NAN; /* no weight left: it stops nobody */
			}
		}
		double lim = lam * (1.0 + 1e-12);
		size_t froze = 0;
		for (size_t i = 0; i < e->ncflows; i++) {
			eflow *f = &e->flows[e->cflows[i]];
			if (f->frozen)
				continue;
			bool freeze = f->eff <= lim;
			if (!freeze)
				FOR_SHARED(f, m, if (e->links[e->flow_link[f->links + m]].ratio <= lim) { freeze = true; break; });
			if (!freeze)
				continue;
			f->rate = lam * f->weight;
			if (f->rate > f->cap)
				f->rate = f->cap;
			f->frozen = true;
			froze++;
		}
		/* Take the newly frozen flows out of their shared links' sums. */
		for (size_t i = 0; i < e->ncflows; i++) {
			eflow *f = &e->flows[e->cflows[i]];
			if (!f->frozen || f->mark != e->mark)
				continue;
			f->mark = e->mark - 1; /* accounted */
			FOR_SHARED(f, m, {
				elink *k = &e->links[e->flow_link[f->links + m]];
				double c = e->flow_coef[f->links + m];
				k->rem -= f->rate * c;
				k->wsum -= f->weight * c;
			});
		}
		if (froze == 0) /* cannot happen with finite caps; guard against a stall */
			break;
		left -= froze;
	}
	for (size_t i = 0; i < e->ncflows; i++) {
		eflow *f = &e->flows[e->cflows[i]];
		double secs = f->rate > 0 ? f->work / f->rate : 0.0;
		if (secs > 1e6) /* a starved flow: it is rescheduled when its neighbours change */
			secs = 1e6;
		f->evn = requeue_event(e, f->evn, f->op, f->version, later_ceil_at(e, e->now, secs * 1e12));
		f->version++;
	}
}

/* A flow alone on its links moves at its own limit (f->alone, computed when it was made) from
 * time `from` (now, or the end of its latency) to its end.  It is just starting: the last
 * completion event of its record (an op before it on the same streams) has fired, and none is
 * left to drop.  Its work is all of it (flow_begin), so it takes the same time every run:
 * f->alone_ps, rounded once for every op that runs the record. */
static inline __attribute__((always_inline)) void
flow_alone(sim_engine *e, eflow *f, int64_t from)
{
	f->rate = f->alone;
	f->version++;
	if (f->alone_ps == -2) {
		/* the first run of the record: its time rounded up as later_ceil_at does, or -1 where
		 * that takes its slow path */
		f->alone_ps = ceil_ps(f->work / f->rate * 1e12);
	}
	int64_t t = f->alone_ps >= 0 && f->alone_ps <= SIM_CLOCK_MAX_PS - from
			    ? from + f->alone_ps
			    : later_ceil_at(e, from, f->work / f->rate * 1e12);
	f->evn = push_event(e, t, f->op, f->version, EV_END);
}

/* Flow f starts moving for op `op` at time `from`. */
static inline void
flow_begin(eflow *f, int32_t op, int64_t from)
{
	f->op = op;
	f->work = f->work0;
	f->active = true;
	f->last = from;
	f->rate = 0;
}

static inline void
flow_join(sim_engine *e, int32_t fi, int32_t op)
{
	eflow *f = &e->flows[fi];
	flow_begin(f, op, e->now);
	if (f->excl) {
		/* no other flow can be on its links now: the link lists need not know it */
		flow_alone(e, f, e->now);
		return;
	}
	if (f->nlinks > 64 && f->shared == NULL &&
	    (f->shared = calloc((size_t)(f->nlinks + 63) / 64, sizeof *f->shared)) == NULL) {
		e->oom = true;
		return;
	}
	bool alone = true;
	for (int m = 0; m < f->nlinks; m++) {
		int32_t l = e->flow_link[f->links + m];
		link_add_flow(e, l, fi, m);
		alone &= e->links[l].n == 1;
	}
	if (alone) {
		/* the common case: no other flow on its links */
		flow_alone(e, f, e->now);
		return;
	}
	recompute(e, &e->flow_link[f->links], f->nlinks, fi);
}

static void
flow_leave(sim_engine *e, int32_t fi)
{
	eflow *f = &e->flows[fi];
	f->active = false;
	f->work = 0;
	if (f->excl)
		return;
	bool others = false;
	for (int m = 0; m < f->nlinks; m++) {
		int32_t l = e->flow_link[f->links + m];
		link_remove_flow(e, l, fi);
		others |= e->links[l].n > 0;
	}
	/* the record is clean for the next op that runs it */
	if (wide(f)) {
		if (f->nlinks <= 64)
			f->shared1 = 0;
		else
			memset(f->shared, 0, (size_t)(f->nlinks + 63) / 64 * sizeof *f->shared);
		f->npriv = 0;
		f->priv_over = false;
	}
	if (others)
		recompute(e, &e->flow_link[f->links], f->nlinks, -1);
}

/* ---- execution ----------------------------------------------------------------------------- */

static void
op_start(sim_engine *e, int32_t id)
{
	eop *o = &e->ops[id];
	o->state = ST_RUNNING;
	if (o->nstreams == 1) {
		estream *st = &e->streams[o->streams];
		st->running = id;
		st->started = e->now;
	} else {
		for (int i = 0; i < o->nstreams; i++) {
			estream *st = &e->streams[e->memb[o->streams + i].stream];
			st->running = id;
			st->started = e->now;
		}
	}
	if (e->start != NULL)
		e->start[id] = e->now;
	rank_count(e, o, +1);
	int64_t dur = e->dur[id];
	if (o->kind == OP_FLOW && o->flow >= 0) {
		eflow *f = &e->flows[o->flow];
		if (f->excl && dur > 0) {
			/* alone on its links, its rate is known now: one event at its end, not one at the
			 * end of its latency and another at the end of its transfer */
			int64_t from = later_ps(e, dur);
			flow_begin(f, id, from);
			flow_alone(e, f, from);
		} else if (dur > 0) {
			push_event(e, later_ps(e, dur), id, 0, EV_LATENCY);
		} else {
			flow_join(e, o->flow, id);
		}
	} else if (o->kind == OP_COMPUTE) {
		estream *st = &e->streams[o->streams];
		st->rem_ps = (double)dur;
		st->since = e->now;
		st->ver++;
		st->evn = push_event(e, later_ceil_at(e, e->now, (double)dur / compute_rate(&e->ranks[st->rank])), id, st->ver, EV_END);
	} else {
		push_event(e, later_ps(e, dur), id, 0, EV_END);
	}
}

/* Starts the stream's head op if it is ready on all its streams. */
static inline void
stream_kick(sim_engine *e, int s)
{
	estream *st = &e->streams[s];
	if (st->running >= 0 || st->head < 0)
		return;
	int32_t h = st->head;
	eop *o = &e->ops[h];
	if (o->nstreams == 1) {
		/* its one stream is idle with it at the head: it needs only its dependencies */
		if (o->state == ST_PENDING && o->ndeps == 0)
			op_start(e, h);
		return;
	}
	if (!st->head_counted) {
		st->head_counted = true;
		o->heads++;
	}
	if (o->state == ST_PENDING && o->ndeps == 0 && o->heads == o->nstreams)
		op_start(e, h);
}

/* Op id leaves stream st (next: the op after it there): the stream is idle again. */
static inline void
stream_leave(sim_engine *e, estream *st, const eop *o, int32_t next, int64_t took)
{
	st->running = -1;
	st->head = next;
	st->head_counted = false;
	erank *k = &e->ranks[st->rank];
	k->st.prov_ps[o->prov] += took;
	if (e->now > k->st.end_ps)
		k->st.end_ps = e->now;
}

static void
op_done(sim_engine *e, int32_t id)
{
	eop *o = &e->ops[id];
	o->state = ST_DONE;
	e->ndone++;
	if (e->end)
		e->end[id] = e->now;
	rank_count(e, o, -1);
	int64_t took = e->now - e->streams[op_stream(e, o, 0)].started;
	if (o->nstreams == 1) {
		stream_leave(e, &e->streams[o->streams], o, o->next, took);
	} else {
		int last = -1;
		for (int i = 0; i < o->nstreams; i++) {
			const emember *mb = &e->memb[o->streams + i];
			estream *st = &e->streams[mb->stream];
			if (st->rank != last) {
				stream_leave(e, st, o, mb->next, took);
				last = st->rank;
			} else {
				st->running = -1;
				st->head = mb->next;
				st->head_counted = false;
			}
		}
	}
	for (int32_t ed = o->succ; ed >= 0; ed = e->edges[ed].next) {
		int32_t to = e->edges[ed].to;
		eop *s = &e->ops[to];
		if (--s->ndeps == 0) {
			if (s->nstreams == 1) {
				estream *st = &e->streams[s->streams];
				st->waited |= st->head != to;
				stream_kick(e, s->streams);
			} else {
				for (int i = 0; i < s->nstreams; i++) {
					estream *st = &e->streams[e->memb[s->streams + i].stream];
					st->waited |= st->head != to;
					stream_kick(e, e->memb[s->streams + i].stream);
				}
			}
		}
	}
	if (o->nstreams == 1)
		stream_kick(e, o->streams);
	else
		for (int i = 0; i < o->nstreams; i++)
			stream_kick(e, e->memb[o->streams + i].stream);
}

int
sim_run(sim_engine *e, char *err, size_t errlen)
{
	if (e->oom)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory while building the op graph");
	/* Start and end times on request (a running op's start is kept on its streams). */
	if (e->record && (GROW(e->start, e->startcap, e->nops + 1) != 0 || GROW(e->end, e->endcap, e->nops + 1) != 0))
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	/* A flow is exclusive when every link it crosses is owned by one stream: no other flow can
	 * be active there while it is, so it runs alone without joining the links' lists. */
	int32_t memo_at = -1;
	bool memo = false;
	for (size_t i = 0; i < e->nflows; i++) {
		eflow *f = &e->flows[i];
		if (f->links != memo_at) {
			memo_at = f->links;
			memo = true;
			for (int m = 0; m < f->nlinks && memo; m++)
				memo = e->links[e->flow_link[f->links + m]].owner >= 0;
		}
		f->excl = memo;
	}
	/* no more events can be pending than ops running, one at most a stream */
	e->q.small = e->nstreams <= 256;
	for (size_t s = 0; s < e->nstreams; s++)
		stream_kick(e, (int)s);
	while (e->q.npending > 0 && !e->oom && !e->overflow) {
		evnode ev = pop_event(e);
		eop *o = &e->ops[ev.op];
		/* A stale completion (the op's rate changed after it was scheduled) is dropped before
		 * it can move the clock: a compute op slowed while communication ran and then sped up
		 * leaves behind an event at its old, later end, and setting the clock from it first
		 * stretched the step to that time. */
		if (ev.type == EV_END) {
			if (o->kind == OP_FLOW && o->flow >= 0) {
				const eflow *f = &e->flows[o->flow];
				if (!f->active || ev.ver != f->version)
					continue;
			} else if (o->kind == OP_COMPUTE &&
				   (o->state != ST_RUNNING || ev.ver != e->streams[o->streams].ver)) {
				continue;
			}
		}
		e->now = ev.t;
		e->events++;
		if (ev.type == EV_LATENCY) {
			flow_join(e, o->flow, ev.op);
			continue;
		}
		if (o->kind == OP_FLOW && o->flow >= 0)
			flow_leave(e, o->flow);
		op_done(e, ev.op);
	}
	if (e->oom)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory while simulating");
	if (e->overflow)
		return pp_err(err, errlen, PP_ERANGE,
			      "the simulated time passed %.0f days, the range of the engine's clock (2^62 ps): a step this "
			      "long is no plan to run (use more GPUs, a smaller batch or a smaller model)",
			      (double)SIM_CLOCK_MAX_PS * 1e-12 / 86400.0);
	for (int r = 0; r < e->nranks; r++)
		rank_advance(e, r);
	for (size_t i = 0; e->ndone < e->nops && i < e->nops; i++)
		if (e->ops[i].state != ST_DONE) {
			const eop *o = &e->ops[i];
			return pp_err(err, errlen, PP_EINPUT,
				      "simulation stalled: op %zu (tag %u, stream %d) never started; the schedule has a "
				      "dependency cycle or a collective some rank never reaches",
				      i, e->tag[i], (int)op_stream(e, o, 0));
		}
	return 0;
}

int64_t sim_engine_now(const sim_engine *e) { return e->now; }
int64_t sim_engine_events(const sim_engine *e) { return e->events; }
int32_t sim_engine_ops(const sim_engine *e) { return (int32_t)e->nops; }
int sim_engine_streams(const sim_engine *e) { return (int)e->nstreams; }

void
sim_engine_rank_stats(const sim_engine *e, int rank, sim_rank_stats *out)
{
	if (rank < 0 || rank >= e->nranks) {
		memset(out, 0, sizeof *out);
		return;
	}
	*out = e->ranks[rank].st;
}

int64_t
sim_op_start(const sim_engine *e, int32_t op)
{
	return e->start && op >= 0 && (size_t)op < e->nops ? e->start[op] : -1;
}

int64_t
sim_op_end(const sim_engine *e, int32_t op)
{
	return e->end && op >= 0 && (size_t)op < e->nops ? e->end[op] : -1;
}

uint32_t
sim_op_tag(const sim_engine *e, int32_t op)
{
	return e->tag[op];
}

int
sim_op_first_stream(const sim_engine *e, int32_t op)
{
	return op_stream(e, &e->ops[op], 0);
}

int
sim_op_nstreams(const sim_engine *e, int32_t op)
{
	return e->ops[op].nstreams;
}

int
sim_op_stream(const sim_engine *e, int32_t op, int i)
{
	return op_stream(e, &e->ops[op], i);
}

size_t
sim_op_succs(const sim_engine *e, int32_t op, int32_t *out, size_t cap)
{
	size_t n = 0;
	for (int32_t ed = e->ops[op].succ; ed >= 0; ed = e->edges[ed].next) {
		if (n < cap)
			out[n] = e->edges[ed].to;
		n++;
	}
	return n;
}

size_t
sim_stream_len(const sim_engine *e, int stream)
{
	return (size_t)e->streams[stream].n;
}

/* The op after `op` on stream s. */
static int32_t
next_on(const sim_engine *e, int32_t op, int s)
{
	const eop *o = &e->ops[op];
	if (o->nstreams == 1)
		return o->next;
	for (int i = 0; i < o->nstreams; i++)
		if (e->memb[o->streams + i].stream == s)
			return e->memb[o->streams + i].next;
	return -1;
}

int32_t
sim_stream_op(const sim_engine *e, int stream, size_t i)
{
	if (e->sseq == NULL) {
		/* every stream's ops in one array, made once: the replay reads them by position */
		sim_engine *w = (sim_engine *)e; /* a cache: the graph itself is not changed */
		size_t total = 0;
		w->soff = malloc((e->nstreams + 1) * sizeof *w->soff);
		for (size_t s = 0; s < e->nstreams; s++)
			total += (size_t)e->streams[s].n;
		w->sseq = malloc((total ? total : 1) * sizeof *w->sseq);
		if (w->soff == NULL || w->sseq == NULL) {
			free(w->soff);
			free(w->sseq);
			w->soff = NULL;
			w->sseq = NULL;
			return -1;
		}
		size_t k = 0;
		for (size_t s = 0; s < e->nstreams; s++) {
			w->soff[s] = k;
			for (int32_t op = e->streams[s].first; op >= 0; op = next_on(e, op, (int)s))
				w->sseq[k++] = op;
		}
		w->soff[e->nstreams] = k;
	}
	return e->sseq[e->soff[stream] + i];
}

int
sim_stream_rank(const sim_engine *e, int stream)
{
	return e->streams[stream].rank;
}

bool
sim_stream_waited(const sim_engine *e, int stream)
{
	return stream >= 0 && (size_t)stream < e->nstreams && e->streams[stream].waited;
}

int
sim_stream_kind(const sim_engine *e, int stream)
{
	return e->streams[stream].kind;
}

size_t
sim_engine_bytes(const sim_engine *e)
{
	size_t b = e->opcap * (sizeof(eop) + sizeof(int64_t) + sizeof(uint32_t)) +
		   e->edgecap * sizeof(edge) + e->membcap * sizeof(emember) + e->streamcap * sizeof(estream) +
		   e->flowcap * sizeof(eflow) + e->flcap * sizeof(int32_t) + e->fccap * sizeof(double) +
		   e->linkcap * sizeof(elink) + (size_t)e->nranks * sizeof(erank) + e->q.nodecap * sizeof(evnode) +
		   e->q.heapcap * sizeof(hent) + (e->startcap + e->endcap) * sizeof(int64_t);
	for (size_t i = 0; i < e->nlinks; i++)
		b += e->links[i].ncap * sizeof(lentry);
	return b;
}
