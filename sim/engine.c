/*
 * engine.c -- the discrete-event engine (see engine.h for the model).
 *
 * Storage is flat arrays indexed by int32 ids; successor lists are singly linked through one
 * edge array, so adding a dependency is O(1) and nothing is allocated per op.  The event heap
 * orders by (time, sequence number).  Flow rates are recomputed only over the connected
 * component (flows linked through shared links) of the flow that started or ended; a stale
 * completion event is recognised by its version number and dropped.
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
enum { EV_END, EV_LATENCY };

typedef struct eop {
	int64_t dur;     /* compute: duration; flow: latency */
	int32_t ndeps;   /* dependencies not yet done */
	int32_t succ;    /* first edge of the successor list, -1 */
	int32_t streams; /* nstreams == 1: the stream; else offset into op_streams */
	int32_t flow;    /* index into flows, -1 */
	uint32_t tag;
	uint16_t nstreams;
	uint16_t heads;  /* member streams that are idle with this op at their head */
	uint8_t kind, prov, state;
} eop;

typedef struct edge {
	int32_t to, next;
} edge;

typedef struct estream {
	int32_t *seq;
	size_t n, cap, pos;
	int32_t rank;
	int32_t running; /* op running on the stream, -1 */
	uint8_t kind;
	bool head_counted;
	/* a running compute op's progress, for rate changes under interference */
	double rem_ps;   /* picoseconds of work left at full speed */
	int64_t since;   /* when rem_ps was last brought up to date */
	uint32_t ver;    /* version of its completion event */
} estream;

typedef struct eflow {
	double work, cap, rate, weight;
	int64_t last;
	int32_t links; /* offset into flow_link / flow_coef */
	uint16_t nlinks;
	bool active, frozen;
	uint32_t version;
	uint32_t mark;
	int32_t op;
} eflow;

typedef struct elink {
	double cap;
	int32_t *flows;
	size_t n, ncap;
	uint32_t mark;
	double rem, wsum;
} elink;

typedef struct erank {
	int32_t ncomp, ncomm;
	int64_t last;
	sim_rank_stats st;
	double slowdown;  /* compute runs 1 / (1 + slowdown) as fast while communication runs */
	int32_t comp[4];  /* the rank's compute streams */
	int ncompstreams;
} erank;

typedef struct event {
	int64_t t;
	uint64_t seq;
	int32_t op;
	uint32_t ver;
	uint8_t type;
} event;

struct sim_engine {
	eop *ops;
	size_t nops, opcap;
	edge *edges;
	size_t nedges, edgecap;
	int32_t *op_streams;
	size_t nopstreams, opstreamcap;
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
	event *heap;
	size_t nheap, heapcap;
	uint64_t seq;
	int64_t now;
	int64_t events;
	int64_t *start, *end; /* recorded times, or NULL */
	size_t timecap;
	bool record;
	bool oom;
	size_t maxops; /* op constructors refuse beyond this many ops */
	bool over;     /* ... and did */
	uint32_t mark;
	/* scratch for rate recomputation */
	int32_t *cflows, *clinks;
	size_t ncflows, ncflowcap, nclinks, nclinkcap;
};

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

void
sim_engine_free(sim_engine *e)
{
	if (e == NULL)
		return;
	for (size_t i = 0; i < e->nstreams; i++) {
		free(e->streams[i].seq);
	}
	for (size_t i = 0; i < e->nlinks; i++)
		free(e->links[i].flows);
	free(e->ops);
	free(e->edges);
	free(e->op_streams);
	free(e->streams);
	free(e->flows);
	free(e->flow_link);
	free(e->flow_coef);
	free(e->links);
	free(e->ranks);
	free(e->heap);
	free(e->start);
	free(e->end);
	free(e->cflows);
	free(e->clinks);
	free(e);
}

int
sim_stream_new(sim_engine *e, int rank, int kind)
{
	if (rank < 0 || rank >= e->nranks || PP_GROW(e->streams, e->streamcap, e->nstreams + 1) != 0) {
		e->oom = true;
		return -1;
	}
	estream *s = &e->streams[e->nstreams];
	memset(s, 0, sizeof *s);
	s->rank = rank;
	s->kind = (uint8_t)kind;
	s->running = -1;
	erank *k = &e->ranks[rank];
	if (kind == SIM_STREAM_COMPUTE && k->ncompstreams < 4)
		k->comp[k->ncompstreams++] = (int32_t)e->nstreams;
	return (int)e->nstreams++;
}

void
sim_rank_slowdown(sim_engine *e, int rank, double slowdown)
{
	if (rank >= 0 && rank < e->nranks && slowdown >= 0)
		e->ranks[rank].slowdown = slowdown;
}

int
sim_link_new(sim_engine *e, double bytes_per_s)
{
	if (PP_GROW(e->links, e->linkcap, e->nlinks + 1) != 0) {
		e->oom = true;
		return -1;
	}
	elink *l = &e->links[e->nlinks];
	memset(l, 0, sizeof *l);
	l->cap = bytes_per_s > 0 ? bytes_per_s : 1.0;
	return (int)e->nlinks++;
}

static int32_t
op_new(sim_engine *e, int kind, int64_t dur, uint32_t tag, hw_prov prov)
{
	if (e->nops >= e->maxops) {
		e->over = e->oom = true;
		return -1;
	}
	if (PP_GROW(e->ops, e->opcap, e->nops + 1) != 0) {
		e->oom = true;
		return -1;
	}
	eop *o = &e->ops[e->nops];
	memset(o, 0, sizeof *o);
	o->dur = dur > 0 ? dur : 0;
	o->succ = -1;
	o->flow = -1;
	o->tag = tag;
	o->kind = (uint8_t)kind;
	o->prov = (uint8_t)prov;
	return (int32_t)e->nops++;
}

static int
stream_push(sim_engine *e, int s, int32_t op)
{
	estream *st = &e->streams[s];
	if (PP_GROW(st->seq, st->cap, st->n + 1) != 0)
		return -1;
	st->seq[st->n++] = op;
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
	if (stream_push(e, stream, id) != 0) {
		e->oom = true;
		return -1;
	}
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

int32_t
sim_op_flow(sim_engine *e, const int *streams, int nstreams, const int *links, const double *coef, int nlinks,
	    int64_t latency_ps, double work, double cap, double weight, uint32_t tag, hw_prov prov)
{
	if (nstreams < 1 || nstreams > 65535 || nlinks < 0 || nlinks > 65535) {
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
	} else {
		if (PP_GROW(e->op_streams, e->opstreamcap, e->nopstreams + (size_t)nstreams) != 0) {
			e->oom = true;
			return -1;
		}
		o->streams = (int32_t)e->nopstreams;
		memcpy(e->op_streams + e->nopstreams, streams, (size_t)nstreams * sizeof *streams);
		e->nopstreams += (size_t)nstreams;
	}
	for (int i = 0; i < nstreams; i++)
		if (streams[i] < 0 || (size_t)streams[i] >= e->nstreams || stream_push(e, streams[i], id) != 0) {
			e->oom = true;
			return -1;
		}
	if (work > 0) {
		if (PP_GROW(e->flows, e->flowcap, e->nflows + 1) != 0) {
			e->oom = true;
			return -1;
		}
		size_t c1 = e->flcap, c2 = e->fccap;
		if (PP_GROW(e->flow_link, c1, e->nfl + (size_t)nlinks + 1) != 0 ||
		    PP_GROW(e->flow_coef, c2, e->nfl + (size_t)nlinks + 1) != 0) {
			e->oom = true;
			return -1;
		}
		e->flcap = c1;
		e->fccap = c2;
		eflow *f = &e->flows[e->nflows];
		memset(f, 0, sizeof *f);
		f->work = work;
		f->cap = cap > 0 ? cap : 1.0;
		f->weight = weight > 0 ? weight : 1.0;
		f->links = (int32_t)e->nfl;
		f->nlinks = (uint16_t)nlinks;
		f->op = id;
		for (int i = 0; i < nlinks; i++) {
			e->flow_link[e->nfl] = links[i];
			e->flow_coef[e->nfl] = coef ? coef[i] : 1.0;
			e->nfl++;
		}
		e->ops[id].flow = (int32_t)e->nflows++;
	}
	return id;
}

int
sim_dep(sim_engine *e, int32_t before, int32_t after)
{
	if (before < 0 || after < 0 || (size_t)before >= e->nops || (size_t)after >= e->nops ||
	    PP_GROW(e->edges, e->edgecap, e->nedges + 1) != 0) {
		e->oom = true;
		return -1;
	}
	e->edges[e->nedges].to = after;
	e->edges[e->nedges].next = e->ops[before].succ;
	e->ops[before].succ = (int32_t)e->nedges++;
	e->ops[after].ndeps++;
	return 0;
}

/* ---- events -------------------------------------------------------------------------------- */

static bool
ev_less(const event *a, const event *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void
push_event(sim_engine *e, int64_t t, int32_t op, uint32_t ver, int type)
{
	if (PP_GROW(e->heap, e->heapcap, e->nheap + 1) != 0) {
		e->oom = true;
		return;
	}
	event ev = {t, e->seq++, op, ver, (uint8_t)type};
	size_t i = e->nheap++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!ev_less(&ev, &e->heap[p]))
			break;
		e->heap[i] = e->heap[p];
		i = p;
	}
	e->heap[i] = ev;
}

static event
pop_event(sim_engine *e)
{
	event top = e->heap[0];
	event last = e->heap[--e->nheap];
	size_t i = 0, n = e->nheap;
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		const event *best = &last;
		if (l < n && ev_less(&e->heap[l], best)) {
			m = l;
			best = &e->heap[l];
		}
		if (r < n && ev_less(&e->heap[r], best))
			m = r;
		if (m == i)
			break;
		e->heap[i] = e->heap[m];
		i = m;
	}
	if (n > 0)
		e->heap[i] = last;
	return top;
}

/* ---- accounting ---------------------------------------------------------------------------- */

static void
rank_advance(sim_engine *e, int r)
{
	erank *k = &e->ranks[r];
	int64_t dt = e->now - k->last;
	if (dt > 0) {
		if (k->ncomp > 0)
			k->st.busy_ps += dt;
		else if (k->ncomm > 0)
			k->st.comm_ps += dt;
		else
			k->st.idle_ps += dt;
	}
	k->last = e->now;
}

static int32_t
op_stream(const sim_engine *e, const eop *o, int i)
{
	return o->nstreams == 1 ? o->streams : e->op_streams[o->streams + i];
}

static void push_event(sim_engine *e, int64_t t, int32_t op, uint32_t ver, int type);

static double
compute_rate(const erank *k)
{
	return k->ncomm > 0 && k->slowdown > 0 ? 1.0 / (1.0 + k->slowdown) : 1.0;
}

/* Communication started or stopped on a rank: its running compute ops change speed. */
static void
rerate(sim_engine *e, int r, double old_rate)
{
	erank *k = &e->ranks[r];
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
		st->ver++;
		push_event(e, e->now + (int64_t)ceil(st->rem_ps / rate), st->running, st->ver, EV_END);
	}
}

/* Adjusts the running-op counters of the ranks an op runs on (once per rank). */
static void
rank_count(sim_engine *e, const eop *o, int delta)
{
	int last = -1;
	for (int i = 0; i < o->nstreams; i++) {
		const estream *s = &e->streams[op_stream(e, o, i)];
		if (s->rank == last)
			continue;
		last = s->rank;
		rank_advance(e, s->rank);
		if (s->kind == SIM_STREAM_COMPUTE) {
			e->ranks[s->rank].ncomp += delta;
		} else {
			double old = compute_rate(&e->ranks[s->rank]);
			e->ranks[s->rank].ncomm += delta;
			rerate(e, s->rank, old);
		}
	}
}

/* ---- flows --------------------------------------------------------------------------------- */

static void
link_add_flow(sim_engine *e, int32_t l, int32_t f)
{
	elink *k = &e->links[l];
	if (PP_GROW(k->flows, k->ncap, k->n + 1) != 0) {
		e->oom = true;
		return;
	}
	k->flows[k->n++] = f;
}

static void
link_remove_flow(sim_engine *e, int32_t l, int32_t f)
{
	elink *k = &e->links[l];
	for (size_t i = 0; i < k->n; i++)
		if (k->flows[i] == f) {
			/* keep the order: it decides nothing, but stable lists keep runs easy to follow */
			memmove(&k->flows[i], &k->flows[i + 1], (k->n - i - 1) * sizeof *k->flows);
			k->n--;
			return;
		}
}

static void
comp_add_link(sim_engine *e, int32_t l)
{
	if (e->links[l].mark == e->mark)
		return;
	e->links[l].mark = e->mark;
	if (PP_GROW(e->clinks, e->nclinkcap, e->nclinks + 1) != 0) {
		e->oom = true;
		return;
	}
	e->clinks[e->nclinks++] = l;
}

/* Recomputes the rates of the flows connected to `seed` (a flow that just joined, or the links
 * of one that just left) and reschedules their completions. */
static void
recompute(sim_engine *e, const int32_t *seed_links, int nseed, int32_t seed_flow)
{
	e->mark++;
	e->ncflows = e->nclinks = 0;
	for (int i = 0; i < nseed; i++)
		comp_add_link(e, seed_links[i]);
	if (seed_flow >= 0 && e->flows[seed_flow].active) {
		e->flows[seed_flow].mark = e->mark;
		if (PP_GROW(e->cflows, e->ncflowcap, e->ncflows + 1) != 0) {
			e->oom = true;
			return;
		}
		e->cflows[e->ncflows++] = seed_flow;
	}
	/* Breadth-first over links and flows. */
	for (size_t li = 0; li < e->nclinks; li++) {
		elink *k = &e->links[e->clinks[li]];
		for (size_t j = 0; j < k->n; j++) {
			int32_t f = k->flows[j];
			eflow *fl = &e->flows[f];
			if (fl->mark == e->mark)
				continue;
			fl->mark = e->mark;
			if (PP_GROW(e->cflows, e->ncflowcap, e->ncflows + 1) != 0) {
				e->oom = true;
				return;
			}
			e->cflows[e->ncflows++] = f;
			for (int m = 0; m < fl->nlinks; m++)
				comp_add_link(e, e->flow_link[fl->links + m]);
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
	}
	/* Progressive filling: raise every unfrozen flow's rate in proportion to its weight until
	 * a link saturates (freezing its flows) or a flow reaches its cap. */
	for (size_t i = 0; i < e->nclinks; i++) {
		elink *k = &e->links[e->clinks[i]];
		k->rem = k->cap;
		k->wsum = 0;
	}
	for (size_t i = 0; i < e->ncflows; i++) {
		eflow *f = &e->flows[e->cflows[i]];
		for (int m = 0; m < f->nlinks; m++)
			e->links[e->flow_link[f->links + m]].wsum += f->weight * e->flow_coef[f->links + m];
	}
	size_t left = e->ncflows;
	while (left > 0) {
		double lam = INFINITY;
		for (size_t i = 0; i < e->ncflows; i++) {
			eflow *f = &e->flows[e->cflows[i]];
			if (!f->frozen && f->cap / f->weight < lam)
				lam = f->cap / f->weight;
		}
		for (size_t i = 0; i < e->nclinks; i++) {
			elink *k = &e->links[e->clinks[i]];
			if (k->wsum > 1e-300) {
				double x = (k->rem > 0 ? k->rem : 0) / k->wsum;
				if (x < lam)
					lam = x;
			}
		}
		double lim = lam * (1.0 + 1e-12);
		size_t froze = 0;
		for (size_t i = 0; i < e->ncflows; i++) {
			eflow *f = &e->flows[e->cflows[i]];
			if (f->frozen)
				continue;
			bool freeze = f->cap / f->weight <= lim;
			for (int m = 0; m < f->nlinks && !freeze; m++) {
				elink *k = &e->links[e->flow_link[f->links + m]];
				if (k->wsum > 1e-300 && (k->rem > 0 ? k->rem : 0) / k->wsum <= lim)
					freeze = true;
			}
			if (!freeze)
				continue;
			f->rate = lam * f->weight;
			if (f->rate > f->cap)
				f->rate = f->cap;
			f->frozen = true;
			froze++;
		}
		/* Take the newly frozen flows out of their links' sums. */
		for (size_t i = 0; i < e->ncflows; i++) {
			eflow *f = &e->flows[e->cflows[i]];
			if (!f->frozen || f->mark != e->mark)
				continue;
			f->mark = e->mark - 1; /* accounted */
			for (int m = 0; m < f->nlinks; m++) {
				elink *k = &e->links[e->flow_link[f->links + m]];
				double c = e->flow_coef[f->links + m];
				k->rem -= f->rate * c;
				k->wsum -= f->weight * c;
			}
		}
		if (froze == 0) /* cannot happen with finite caps; guard against a stall */
			break;
		left -= froze;
	}
	for (size_t i = 0; i < e->ncflows; i++) {
		eflow *f = &e->flows[e->cflows[i]];
		f->version++;
		double secs = f->rate > 0 ? f->work / f->rate : 0.0;
		if (secs > 1e6) /* a starved flow: it is rescheduled when its neighbours change */
			secs = 1e6;
		push_event(e, e->now + (int64_t)ceil(secs * 1e12), f->op, f->version, EV_END);
	}
}

static void
flow_join(sim_engine *e, int32_t fi)
{
	eflow *f = &e->flows[fi];
	f->active = true;
	f->last = e->now;
	f->rate = 0;
	bool alone = true;
	for (int m = 0; m < f->nlinks; m++) {
		int32_t l = e->flow_link[f->links + m];
		link_add_flow(e, l, fi);
		alone &= e->links[l].n == 1;
	}
	if (alone) {
		/* the common case: no other flow on its links, its rate is its own limit */
		double rate = f->cap;
		for (int m = 0; m < f->nlinks; m++) {
			double c = e->flow_coef[f->links + m];
			if (c > 0 && e->links[e->flow_link[f->links + m]].cap / c < rate)
				rate = e->links[e->flow_link[f->links + m]].cap / c;
		}
		f->rate = rate;
		f->version++;
		push_event(e, e->now + (int64_t)ceil(f->work / rate * 1e12), f->op, f->version, EV_END);
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
	bool others = false;
	for (int m = 0; m < f->nlinks; m++) {
		int32_t l = e->flow_link[f->links + m];
		link_remove_flow(e, l, fi);
		others |= e->links[l].n > 0;
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
	for (int i = 0; i < o->nstreams; i++)
		e->streams[op_stream(e, o, i)].running = id;
	e->start[id] = e->now;
	rank_count(e, o, +1);
	if (o->kind == OP_FLOW && o->flow >= 0) {
		if (o->dur > 0)
			push_event(e, e->now + o->dur, id, 0, EV_LATENCY);
		else
			flow_join(e, o->flow);
	} else if (o->kind == OP_COMPUTE) {
		estream *st = &e->streams[o->streams];
		st->rem_ps = (double)o->dur;
		st->since = e->now;
		st->ver++;
		push_event(e, e->now + (int64_t)ceil((double)o->dur / compute_rate(&e->ranks[st->rank])), id, st->ver, EV_END);
	} else {
		push_event(e, e->now + o->dur, id, 0, EV_END);
	}
}

/* Starts the stream's head op if it is ready on all its streams. */
static void
stream_kick(sim_engine *e, int s)
{
	estream *st = &e->streams[s];
	if (st->running >= 0 || st->pos >= st->n)
		return;
	int32_t h = st->seq[st->pos];
	eop *o = &e->ops[h];
	if (!st->head_counted) {
		st->head_counted = true;
		o->heads++;
	}
	if (o->state == ST_PENDING && o->ndeps == 0 && o->heads == o->nstreams)
		op_start(e, h);
}

static void
op_done(sim_engine *e, int32_t id)
{
	eop *o = &e->ops[id];
	o->state = ST_DONE;
	if (e->end)
		e->end[id] = e->now;
	rank_count(e, o, -1);
	int last = -1;
	for (int i = 0; i < o->nstreams; i++) {
		estream *st = &e->streams[op_stream(e, o, i)];
		st->running = -1;
		st->pos++;
		st->head_counted = false;
		if (st->rank != last) {
			e->ranks[st->rank].st.prov_ps[o->prov] += e->now - e->start[id];
			if (e->now > e->ranks[st->rank].st.end_ps)
				e->ranks[st->rank].st.end_ps = e->now;
			last = st->rank;
		}
	}
	for (int32_t ed = o->succ; ed >= 0; ed = e->edges[ed].next) {
		eop *s = &e->ops[e->edges[ed].to];
		if (--s->ndeps == 0)
			for (int i = 0; i < s->nstreams; i++)
				stream_kick(e, op_stream(e, s, i));
	}
	for (int i = 0; i < o->nstreams; i++)
		stream_kick(e, op_stream(e, o, i));
}

int
sim_run(sim_engine *e, char *err, size_t errlen)
{
	if (e->oom)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory while building the op graph");
	/* Start times are always kept (provenance accounting needs them); end times on request. */
	if (PP_GROW(e->start, e->timecap, e->nops + 1) != 0)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	if (e->record) {
		size_t c = 0;
		if (PP_GROW(e->end, c, e->nops + 1) != 0)
			return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	}
	for (size_t s = 0; s < e->nstreams; s++)
		stream_kick(e, (int)s);
	while (e->nheap > 0 && !e->oom) {
		event ev = pop_event(e);
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
			flow_join(e, o->flow);
			continue;
		}
		if (o->kind == OP_FLOW && o->flow >= 0)
			flow_leave(e, o->flow);
		op_done(e, ev.op);
	}
	if (e->oom)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory while simulating");
	for (int r = 0; r < e->nranks; r++)
		rank_advance(e, r);
	for (size_t i = 0; i < e->nops; i++)
		if (e->ops[i].state != ST_DONE) {
			const eop *o = &e->ops[i];
			return pp_err(err, errlen, PP_EINPUT,
				      "simulation stalled: op %zu (tag %u, stream %d) never started; the schedule has a "
				      "dependency cycle or a collective some rank never reaches",
				      i, o->tag, (int)op_stream(e, o, 0));
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
	return e->ops[op].tag;
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
	return e->streams[stream].n;
}

int32_t
sim_stream_op(const sim_engine *e, int stream, size_t i)
{
	return e->streams[stream].seq[i];
}

int
sim_stream_rank(const sim_engine *e, int stream)
{
	return e->streams[stream].rank;
}

int
sim_stream_kind(const sim_engine *e, int stream)
{
	return e->streams[stream].kind;
}

size_t
sim_engine_bytes(const sim_engine *e)
{
	size_t b = e->opcap * sizeof(eop) + e->edgecap * sizeof(edge) + e->opstreamcap * sizeof(int32_t) +
		   e->streamcap * sizeof(estream) + e->flowcap * sizeof(eflow) + e->flcap * sizeof(int32_t) +
		   e->fccap * sizeof(double) + e->linkcap * sizeof(elink) + (size_t)e->nranks * sizeof(erank) +
		   e->heapcap * sizeof(event) + e->timecap * sizeof(int64_t) * (e->end ? 2 : 1);
	for (size_t i = 0; i < e->nstreams; i++)
		b += e->streams[i].cap * sizeof(int32_t);
	for (size_t i = 0; i < e->nlinks; i++)
		b += e->links[i].ncap * sizeof(int32_t);
	return b;
}
