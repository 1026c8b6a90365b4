/*
 * train.c -- the op graph of one training step, its simulation, and the metrics.
 *
 * The graph is built in three passes:
 *   1. compute and intra-stage collectives: for every pipeline stage, the jobs of its schedule
 *      (forward F, backward B, and for the zero-bubble schedule weight-gradient W of a
 *      micro-batch chunk) in order; for every layer of a job the segments of its attention and
 *      MLP blocks on each rank, with the TP collectives between them, the CP and EP exchanges
 *      beside them, and ZeRO-3's parameter gathers and gradient reduce-scatters;
 *   2. pipeline transfers: for every micro-batch chunk, the activation send to the next virtual
 *      stage and the gradient send back, linking the last op of the producing job to the
 *      first op of the consuming one;
 *   3. data parallelism: gradient buckets reduced over the data-parallel group as their layers'
 *      last gradients are ready (or after the backward pass when not overlapped), the embedding
 *      gradient sync of tied embeddings, the optimizer step, the ZeRO parameter all-gather.
 * The symmetric mode simulates one rank per stage ("instance" (dp 0, cp 0), TP member 0); the
 * full mode every rank, with groups as multi-stream ops that rendezvous their members.
 */
#include "config.h"
#include "sim/train_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef sim_job job;

typedef struct rank_res {
	int comp, tp, cp, ep, dp, dprs, pfs, pfr, pbs, pbr;
	int nvl_tx, nvl_rx, nic_tx, nic_rx;
	int32_t pending[4];
	int npending;
	int32_t first; /* first compute op of the job being emitted */
	int32_t last; /* last compute op */
	int32_t prev[2]; /* last compute op of the previous layer and of the one before */
	int32_t side;    /* 1 + the CP exchange the block's closing segment waits for; 0: none */
	double slow;
} rank_res;

/* A collective made before: the same members, stream, operation, group size and bytes make the
 * same op, which is copied (sim_op_flow_like) instead of priced and laid out again.  Groups of
 * up to COLL_MEMO_RANKS simulated members (TP groups, the symmetric mode's single ranks); the
 * table is direct-mapped, 2^memo_bits entries, enough for every TP group of the full mode. */
enum { COLL_MEMO_RANKS = 8 };
typedef struct coll_memo {
	int32_t like; /* -1: empty */
	int which, op, group, per_node, n;
	double bytes;
	int ranks[COLL_MEMO_RANKS];
} coll_memo;

/* The FLOP counts the builder keeps, and a log of what was added to one, in order. */
enum { FL_STAGE, FL_RECOMP, FL_OP, FL_N };
typedef struct flop_log {
	double *v;
	size_t n, cap;
} flop_log;

typedef struct bld {
	const model *m;
	const model_tf *t;
	const hw_cost *cost;
	const hw_system *sys;
	const sim_train_cfg *c;
	placement pl;
	sim_engine *e;
	int p, v, tpm;       /* stages, chunks, TP members simulated per instance */
	int ninst;           /* instances per stage (dp x cp in full mode, else 1) */
	int nranks;
	rank_res *r;
	int64_t micro;       /* micro-batches per step */
	layer_cost *lc;      /* per model layer */
	int32_t *lidx;       /* per model layer: its index among its stage's layers */
	seg embed_f, embed_b, head_f, head_b;
	double act_msg;      /* bytes of a T x h activation (TP collective message) */
	double pp_msg;       /* bytes each rank sends per micro-batch chunk */
	/* per stage: its jobs, and per (rank, job) the first and last op */
	job **jobs;
	size_t *njobs;
	int32_t *jfirst, *jlast; /* [rank][job] */
	size_t maxjobs;
	int32_t **jindex;    /* [stage][type * v * micro + chunk * micro + mb] -> job index */
	/* per rank and local layer: the op after which the layer's gradients are complete */
	int32_t *gready;     /* [rank][maxlayers] */
	int maxlayers;
	int32_t *ready;      /* scratch: per simulated rank of a stage, an op id */
	/* ZeRO-3 on one DP stream (dp_one_stream): the reduce-scatter of the layer whose backward
	 * was built last, held until the gather of the layer after it is queued (see layer_bwd);
	 * always within one backward job, so on the stage building it */
	bool rs_held;
	int64_t rs_layer, rs_mb;
	bool oom;
	/* FLOPs counted as the graph is built: FL_STAGE and FL_RECOMP the layers of one rank group
	 * per stage (recomputation apart), FL_OP every compute op of every simulated rank */
	double flops[FL_N];
	flop_log *flog;      /* folding: every count above as added, in order (NULL: not kept) */
	size_t *flog_at;     /* with flog: where each log stood before each job (stage by stage,
	                      * FL_N entries a job), after the last job, and at the end */
	sim_rec *rec;        /* cfg.record_ops: each op's kernels, collective or peer; else NULL */
	uint32_t cur_tag;    /* the TP collectives' tag of the block being built */
	int32_t embed_l[2], head_l[2]; /* recording: kernel lists of the embedding and head */
	coll_memo *memo;
	int memo_bits;
	int32_t *tp_like;    /* per (stage, instance) and TP collective kind: an op to copy, -1 */
	int32_t *pp_like;    /* per (stage, instance) and direction: a pipeline transfer to copy, -1 */
	struct merged *merged; /* per layer, block and direction: the block's segments as one op */
	struct jtpl *jt;     /* per stage, job type and chunk: a journal to stamp jobs from (NULL: none
	                      * are stamped; see "stamping") */
	struct jrun *jr;     /* the job being journaled, or NULL */
	int64_t stamped;     /* jobs stamped */
} bld;

/* log_flops when the log is full (out of line: the common path saves no registers). */
static __attribute__((noinline)) void
log_flops_grow(bld *b, int k, double f)
{
	flop_log *l = &b->flog[k];
	if (PP_GROW(l->v, l->cap, l->n + 1) != 0)
		b->oom = true;
	else
		l->v[l->n++] = f;
}

static void journal_flops(bld *b, int k, double f);

/* Adds f to FLOP count k (and notes it in the log, when one is kept: every compute op of a
 * folded step's small steps, so the append with room left is inline). */
static inline void
count_flops(bld *b, int k, double f)
{
	if (__builtin_expect(b->jr != NULL, 0))
		journal_flops(b, k, f);
	b->flops[k] += f;
	if (b->flog != NULL) {
		flop_log *l = &b->flog[k];
		if (__builtin_expect(l->n < l->cap, 1))
			l->v[l->n++] = f;
		else
			log_flops_grow(b, k, f);
	}
}

/* Notes where the FLOP logs stand as entry i of flog_at. */
static void
note_flops(bld *b, size_t i)
{
	if (b->flog_at != NULL)
		for (int k = 0; k < FL_N; k++)
			b->flog_at[i * FL_N + k] = b->flog[k].n;
}

/* The builder's engine calls in the jobs of pass 1, journaled while a job is (see "stamping"). */
static void journal_op(bld *b, int what, int32_t a, int64_t ps, uint32_t tag, hw_prov prov, int32_t op);
static void journal_dep(bld *b, int32_t before, int32_t after);
static void journal_memo(bld *b, size_t slot, int32_t like);
static void journal_gready(bld *b, size_t at, int32_t op);
static void journal_bad(bld *b);

/* Notes op as the one after which a layer's gradients are complete on a rank (gready[at]). */
static inline void
note_gready(bld *b, size_t at, int32_t op)
{
	b->gready[at] = op;
	if (__builtin_expect(b->jr != NULL, 0))
		journal_gready(b, at, op);
}

static inline int32_t
b_compute(bld *b, int stream, int64_t ps, uint32_t tag, hw_prov prov)
{
	int32_t op = sim_op_compute(b->e, stream, ps, tag, prov);
	if (__builtin_expect(b->jr != NULL, 0))
		journal_op(b, SIM_REP_COMPUTE, stream, ps, tag, prov, op);
	return op;
}

static inline int32_t
b_like(bld *b, int32_t like, uint32_t tag)
{
	int32_t op = sim_op_flow_like(b->e, like, tag);
	if (__builtin_expect(b->jr != NULL, 0))
		journal_op(b, SIM_REP_LIKE, like, 0, tag, HW_PROV_MEASURED, op);
	return op;
}

static inline void
b_dep(bld *b, int32_t before, int32_t after)
{
	sim_dep(b->e, before, after);
	if (__builtin_expect(b->jr != NULL, 0))
		journal_dep(b, before, after);
}

/* A block's three segments merged into the one op of a block without a side exchange, and that
 * op's duration and provenance, made once per layer, block and direction. */
struct merged {
	bool valid;
	seg all;
	int64_t ps;   /* sim_ps(all.t) */
	hw_prov prov;
};

/* ---- names --------------------------------------------------------------------------------- */

static const char *const tag_names[TAG_NKINDS] = {
	"?", "fwd attn", "fwd mlp", "bwd attn", "bwd mlp", "wgrad attn", "wgrad mlp", "recompute", "tp", "cp", "ep",
	"pp send fwd", "pp send bwd", "dp grads", "zero gather", "zero reduce-scatter", "embed fwd", "embed bwd",
	"head fwd", "head bwd", "optimizer", "embedding sync", "param gather", "cnn fwd", "cnn bwd", "step", "etp",
	"replica all-reduce",
};

const char *
sim_tag_name(uint32_t tag, char *buf, size_t n)
{
	unsigned k = tag >> 26;
	unsigned layer = (tag >> 16) & 0x3ff, mb = tag & 0xffff;
	const char *nm = k < TAG_NKINDS ? tag_names[k] : "?";
	switch (k) {
	case TAG_FWD_ATTN: case TAG_FWD_MLP: case TAG_BWD_ATTN: case TAG_BWD_MLP: case TAG_W_ATTN: case TAG_W_MLP:
	case TAG_RECOMP: case TAG_TP: case TAG_CP: case TAG_EP: case TAG_ETP: case TAG_ZERO_AG: case TAG_ZERO_RS:
	case TAG_DPR:
		snprintf(buf, n, "%s L%u mb%u", nm, layer, mb);
		break;
	case TAG_PP_FWD: case TAG_PP_BWD: case TAG_EMBED_FWD: case TAG_EMBED_BWD: case TAG_HEAD_FWD: case TAG_HEAD_BWD:
	case TAG_CNN_FWD: case TAG_CNN_BWD:
		snprintf(buf, n, "%s c%u mb%u", nm, layer, mb);
		break;
	case TAG_DP:
		snprintf(buf, n, "%s bucket %u", nm, mb);
		break;
	default:
		snprintf(buf, n, "%s", nm);
	}
	return buf;
}

/* ---- schedules ----------------------------------------------------------------------------- */

static void
push_job(job *arr, size_t *n, int type, int chunk, int64_t mb)
{
	arr[*n].type = (int8_t)type;
	arr[*n].chunk = chunk;
	arr[*n].mb = mb;
	(*n)++;
}

/* Megatron-LM's interleaved order: the k-th forward (or backward) of a stage runs chunk
 * (k / p) mod v of micro-batch (k / (p v)) p + k mod p; backward chunks count down. */
static void
interleaved_id(int64_t k, int p, int v, bool fwd, int *chunk, int64_t *mb)
{
	int64_t c = (k / p) % v;
	*chunk = fwd ? (int)c : v - 1 - (int)c;
	*mb = (k / ((int64_t)p * v)) * p + k % p;
}

int
sim_schedule_jobs(sim_schedule sched, int p, int v, int64_t m, int s, sim_job **out, size_t *n)
{
	int64_t M = m * v;
	job *arr = malloc((size_t)(3 * M + 1) * sizeof *arr);
	if (arr == NULL)
		return PP_ENOMEM;
	size_t k = 0;
	switch (sched) {
	case SIM_GPIPE:
		for (int64_t i = 0; i < m; i++)
			push_job(arr, &k, J_F, 0, i);
		for (int64_t i = m - 1; i >= 0; i--)
			push_job(arr, &k, J_B, 0, i);
		break;
	case SIM_INTERLEAVED: {
		int64_t warm = (int64_t)(p - s - 1) * 2 + (int64_t)(v - 1) * p;
		if (warm > M)
			warm = M;
		int ch;
		int64_t mb;
		for (int64_t i = 0; i < warm; i++) {
			interleaved_id(i, p, v, true, &ch, &mb);
			push_job(arr, &k, J_F, ch, mb);
		}
		for (int64_t i = 0; i < M - warm; i++) {
			interleaved_id(warm + i, p, v, true, &ch, &mb);
			push_job(arr, &k, J_F, ch, mb);
			interleaved_id(i, p, v, false, &ch, &mb);
			push_job(arr, &k, J_B, ch, mb);
		}
		for (int64_t i = M - warm; i < M; i++) {
			interleaved_id(i, p, v, false, &ch, &mb);
			push_job(arr, &k, J_B, ch, mb);
		}
		break;
	}
	case SIM_ZB_H1: {
		/* ZB-H1 (Qi et al. 2023): 1F1B's warm-up, then stage s defers the weight-gradient
		 * passes of its first s micro-batches (F B pairs), runs F B W in the steady state and
		 * B W in the cool-down, and ends with the deferred W passes.  Every stage then holds
		 * p micro-batches in flight, the first stage's count under 1F1B. */
		int64_t f = p - s - 1 < m ? p - s - 1 : m, bk = 0, w = 0;
		for (int64_t i = 0; i < f; i++)
			push_job(arr, &k, J_F, 0, i);
		for (int i = 0; i < s && f < m; i++) {
			push_job(arr, &k, J_F, 0, f++);
			push_job(arr, &k, J_B, 0, bk++);
		}
		while (f < m) {
			push_job(arr, &k, J_F, 0, f++);
			push_job(arr, &k, J_B, 0, bk++);
			push_job(arr, &k, J_W, 0, w++);
		}
		while (bk < m) {
			push_job(arr, &k, J_B, 0, bk++);
			push_job(arr, &k, J_W, 0, w++);
		}
		while (w < m)
			push_job(arr, &k, J_W, 0, w++);
		break;
	}
	case SIM_1F1B:
	default: {
		int64_t warm = p - s - 1 < m ? p - s - 1 : m;
		for (int64_t i = 0; i < warm; i++)
			push_job(arr, &k, J_F, 0, i);
		for (int64_t i = 0; i < m - warm; i++) {
			push_job(arr, &k, J_F, 0, warm + i);
			push_job(arr, &k, J_B, 0, i);
		}
		for (int64_t i = m - warm; i < m; i++)
			push_job(arr, &k, J_B, 0, i);
		break;
	}
	}
	*out = arr;
	*n = k;
	return 0;
}

/* ---- ranks and ops ------------------------------------------------------------------------- */

/* Simulated rank of TP member `j` of instance `i` of stage `s`. */
static int
rank_of(const bld *b, int s, int i, int j)
{
	return (s * b->ninst + i) * b->tpm + j;
}

static void
add_pending(bld *b, int rank, int32_t op)
{
	rank_res *r = &b->r[rank];
	if (op < 0)
		return;
	if (r->npending < 4) {
		r->pending[r->npending++] = op;
	} else {
		/* more than four distinct prerequisites never arise; fold into the newest */
		r->pending[3] = op;
	}
}

/* The kernel list of a block's segment (recording), or -1. */
static int32_t
klist(const block_cost *bc, int slot)
{
	return bc->klist >= 0 ? bc->klist + slot : -1;
}

/* A compute op of segment sg on a rank; `list` is the segment's kernel list (recording only) and
 * `layer` the model layer its weights belong to (-1 none).  It and compute() are inlined into
 * their callers (5 KiB of code): a step makes a compute op for every block and micro-batch, and
 * the calls with eight arguments, two on the stack, were a measurable part of building one. */
static inline __attribute__((always_inline)) int32_t
compute_priced(bld *b, int rank, const seg *sg, int64_t ps, hw_prov prov, uint32_t tag, int32_t list, int64_t layer)
{
	rank_res *r = &b->r[rank];
	int32_t op = b_compute(b, r->comp, ps, tag, prov);
	if (op < 0) {
		b->oom = true;
		return -1;
	}
	count_flops(b, FL_OP, sg->flops);
	if (b->rec) {
		sim_oprec x = {.what = REC_COMPUTE, .list = list, .layer = (int32_t)layer, .bytes = sg->flops};
		sim_rec_op(b->rec, op, &x);
	}
	for (int i = 0; i < r->npending; i++)
		b_dep(b, r->pending[i], op);
	r->npending = 0;
	if (r->first < 0)
		r->first = op;
	r->last = op;
	return op;
}

static inline __attribute__((always_inline)) int32_t
compute(bld *b, int rank, const seg *sg, uint32_t tag, int32_t list, int64_t layer)
{
	return compute_priced(b, rank, sg, sim_ps(sg->t * b->r[rank].slow), seg_prov(sg), tag, list, layer);
}

/* Which of a rank's comm streams a flow runs on. */
enum { S_TP, S_CP, S_EP, S_DP, S_DPRS };

static int
stream_of(const rank_res *r, int which)
{
	switch (which) {
	case S_TP: return r->tp;
	case S_CP: return r->cp;
	case S_EP: return r->ep;
	case S_DPRS: return r->dprs;
	case S_DP:
	default: return r->dp;
	}
}

/* Bytes per element a collective moves (recording): gradients at their reduction width,
 * activations and 16-bit parameters at the activations'. */
static int
coll_elem(const bld *b, uint32_t tag)
{
	unsigned k = tag >> 26;
	if (k == TAG_DP || k == TAG_ZERO_RS || k == TAG_DPR || k == TAG_EMB_SYNC)
		return b->t ? sim_grad_bytes(b->c) : 4; /* CNN buckets are fp32 (build_cnn) */
	return (int)sim_act_bytes(b->c);
}

static int32_t new_collective(bld *b, const int *ranks, int n, int which, hw_coll op, int group, int per_node,
			      double bytes, uint32_t tag);

/* A collective over `n` simulated ranks (all members of the group that are simulated; in
 * symmetric mode just the representative) of group kind gk.  deps: each member's last compute
 * op, plus `dep`. */
static int32_t
collective(bld *b, const int *ranks, int n, int which, sim_group gk, hw_coll op, int group, int per_node, double bytes,
	   uint32_t tag, const int32_t *deps, bool dep_last, bool gate_members)
{
	if (group <= 1 || bytes <= 0)
		return -1;
	coll_memo *cm = NULL;
	int32_t id = -1;
	if (n <= COLL_MEMO_RANKS && b->memo != NULL) {
		uint64_t h = (uint64_t)(unsigned)ranks[0] ^ ((uint64_t)which << 24) ^ ((uint64_t)op << 28) ^
			     ((uint64_t)(unsigned)group << 32);
		h *= UINT64_C(0x9E3779B97F4A7C15);
		cm = &b->memo[h >> (64 - b->memo_bits)];
		bool same = cm->like >= 0 && cm->which == which && cm->op == (int)op && cm->group == group &&
			    cm->per_node == per_node && cm->n == n && cm->bytes == bytes;
		for (int i = 0; i < n && same; i++)
			same = cm->ranks[i] == ranks[i];
		if (same && b->jr != NULL)
			journal_memo(b, (size_t)(cm - b->memo), cm->like);
		if (same && (id = b_like(b, cm->like, tag)) < 0) {
			b->oom = true;
			return -1;
		}
	}
	if (id < 0) {
		id = new_collective(b, ranks, n, which, op, group, per_node, bytes, tag);
		if (id < 0)
			return -1;
		if (cm != NULL) {
			cm->like = id;
			cm->which = which;
			cm->op = (int)op;
			cm->group = group;
			cm->per_node = per_node;
			cm->n = n;
			cm->bytes = bytes;
			memcpy(cm->ranks, ranks, (size_t)n * sizeof *ranks);
		}
	}
	if (b->rec) {
		sim_oprec x = {.what = REC_COLL, .group = (uint8_t)gk, .coll = (uint8_t)op, .elem = (uint8_t)coll_elem(b, tag),
			       .gsize = group, .per_node = per_node, .list = -1, .layer = -1, .bytes = bytes};
		sim_rec_op(b->rec, id, &x);
	}
	for (int i = 0; i < n; i++) {
		rank_res *r = &b->r[ranks[i]];
		if (deps != NULL && deps[i] >= 0)
			b_dep(b, deps[i], id);
		if (dep_last && r->last >= 0)
			b_dep(b, r->last, id);
		if (gate_members)
			add_pending(b, ranks[i], id);
	}
	return id;
}

/* The flow op of a collective, priced and laid out on its members' streams and links. */
static int32_t
new_collective(bld *b, const int *ranks, int n, int which, hw_coll op, int group, int per_node, double bytes,
	       uint32_t tag)
{
	hw_flow f;
	hw_cost_coll(b->cost, op, group, per_node, bytes, &f);
	int streams[64], links[128];
	double coef[128];
	int *sv = n <= 64 ? streams : malloc((size_t)n * sizeof *sv);
	int *lv = n <= 32 ? links : malloc((size_t)n * 4 * sizeof *lv);
	double *cv = n <= 32 ? coef : malloc((size_t)n * 4 * sizeof *cv);
	if (sv == NULL || lv == NULL || cv == NULL) {
		b->oom = true;
		if (sv != streams)
			free(sv);
		if (lv != links)
			free(lv);
		if (cv != coef)
			free(cv);
		return -1;
	}
	double cap_up = hw_cost_scaleup_bw(b->cost), cap_nic = hw_cost_nic_bw(b->cost);
	int nl = 0;
	for (int i = 0; i < n; i++) {
		const rank_res *r = &b->r[ranks[i]];
		sv[i] = stream_of(r, which);
		if (!f.inter) {
			double cf = f.bw > cap_up ? cap_up / f.bw : 1.0;
			lv[nl] = r->nvl_tx, cv[nl++] = cf;
			lv[nl] = r->nvl_rx, cv[nl++] = cf;
		} else {
			double g = per_node > 0 ? (double)per_node : 1.0;
			double cn = op == HW_ALL_TO_ALL || op == HW_SEND_RECV ? 1.0 : 1.0 / g;
			if (cap_nic > 0 && f.bw * cn > cap_nic)
				cn = cap_nic / f.bw;
			lv[nl] = r->nic_tx, cv[nl++] = cn;
			lv[nl] = r->nic_rx, cv[nl++] = cn;
			double cu = op == HW_ALL_TO_ALL || op == HW_SEND_RECV ? 0.0 : (g - 1.0) / g;
			if (cu > 0) {
				if (f.bw * cu > cap_up)
					cu = cap_up / f.bw;
				lv[nl] = r->nvl_tx, cv[nl++] = cu;
				lv[nl] = r->nvl_rx, cv[nl++] = cu;
			}
		}
	}
	int32_t id = sim_op_flow(b->e, sv, n, lv, cv, nl, sim_ps(f.latency_s), f.wire_bytes, f.bw, 1.0, tag, f.prov);
	if (b->jr != NULL)
		journal_bad(b); /* a new flow: a job like this one copies it */
	if (sv != streams)
		free(sv);
	if (lv != links)
		free(lv);
	if (cv != coef)
		free(cv);
	if (id < 0)
		b->oom = true;
	return id;
}

/* ---- layers -------------------------------------------------------------------------------- */

static int
tp_members(const bld *b, int s, int inst, int *out)
{
	for (int j = 0; j < b->tpm; j++)
		out[j] = rank_of(b, s, inst, j);
	return b->tpm;
}

/* A TP collective `op` of instance inst of stage s over the instance's members, as collective()
 * makes it (deps: each member's op it waits for, or NULL; dep_last: and each member's last
 * compute op; gate: each member's next compute op waits for it).  The instance's first
 * collective of each kind is made in full, the later ones copied: the same members, stream,
 * operation and size (act_msg).  collective() would find the copy in its memo, but the memo's
 * hash, its key's comparison and thirteen arguments cost more than the copy itself, for two of
 * a block's three ops.  (Where the memo's entry was taken by another collective, collective()
 * makes a new flow and this a copy: the two run alike, on the same streams and links with the
 * same work, latency and cap; only the engine's count of flow records differs.)  The
 * dependencies are added in the order collective() adds them: the engine's ties follow the
 * order of successor lists.  Inline: each caller's constant deps, dep_last and gate leave only
 * its own loop. */
static inline __attribute__((always_inline)) void
tp_collective(bld *b, int s, int inst, hw_coll op, uint32_t tag, const int32_t *deps, bool dep_last, bool gate)
{
	int k = op == HW_ALL_GATHER ? 0 : op == HW_REDUCE_SCATTER ? 1 : 2;
	int32_t *like = &b->tp_like[((size_t)s * (size_t)b->ninst + (size_t)inst) * 3 + (size_t)k];
	if (*like >= 0 && b->rec == NULL) {
		int32_t id = b_like(b, *like, tag);
		if (id < 0) {
			b->oom = true;
			return;
		}
		for (int j = 0; j < b->tpm; j++) {
			int rk = rank_of(b, s, inst, j);
			if (deps != NULL && deps[j] >= 0)
				b_dep(b, deps[j], id);
			if (dep_last && b->r[rk].last >= 0)
				b_dep(b, b->r[rk].last, id);
			if (gate)
				add_pending(b, rk, id);
		}
		return;
	}
	int mem[64];
	int n = tp_members(b, s, inst, mem);
	int32_t id = collective(b, mem, n, S_TP, SIM_G_TP, op, b->c->tp, b->pl.tp_per_node, b->act_msg, tag, deps,
				dep_last, gate);
	if (id >= 0 && b->jr != NULL)
		journal_bad(b); /* it sets the instance's op to copy */
	if (id >= 0)
		*like = id;
}

/* The TP collective around a block: all-reduce, or all-gather / reduce-scatter with sequence
 * parallelism.  It waits for each member's last compute op and the next one waits for it. */
static void
tp_coll(bld *b, int s, int inst, hw_coll op, uint32_t tag)
{
	tp_collective(b, s, inst, op, tag, NULL, true, true);
}

/* The TP collectives that run beside compute (see tp_overlapped): one waits for the members'
 * last compute op and gates nothing, the other waits for deps[] and gates the next one.  Out of
 * line, so that the callers choosing between them and tp_coll save no registers for them. */
static __attribute__((noinline)) void
tp_coll_beside(bld *b, int s, int inst, hw_coll op, uint32_t tag)
{
	tp_collective(b, s, inst, op, tag, NULL, true, false);
}

static __attribute__((noinline)) void
tp_coll_after(bld *b, int s, int inst, hw_coll op, uint32_t tag, const int32_t *deps)
{
	tp_collective(b, s, inst, op, tag, deps, false, true);
}

/* With TP communication overlap (Megatron's userbuffers: the all-gather is pipelined into the
 * GEMM that consumes it, the reduce-scatter into the GEMM that produces it, chunk by chunk),
 * the collectives of a block run beside its compute.  The entering all-gather waits for the
 * members' last compute op but does not hold up the block; the leaving reduce-scatter waits
 * for the compute op before the block's last one (it starts as that one does, on the TP stream
 * after the all-gather) and holds up the next block. */
static bool
tp_overlapped(const bld *b)
{
	return b->c->tp_comm_overlap && b->c->sequence_parallel && b->c->tp > 1;
}

static void
tp_coll_enter(bld *b, int s, int inst)
{
	if (!tp_overlapped(b)) {
		tp_coll(b, s, inst, HW_ALL_GATHER, b->cur_tag);
		return;
	}
	tp_coll_beside(b, s, inst, HW_ALL_GATHER, b->cur_tag);
}

/* before[j]: member j's compute op before the block's last one. */
/* Whether a block's backward runs its first linear's weight gradient (SLOT_W) beside the TP
 * collective that leaves it (tp_wgrad_overlap; the kernel builder put it there). */
static bool
w_beside(const bld *b, const block_cost *bc, bool bwd)
{
	return bwd && sim_w_beside(b->c) && bc->w.t > 0;
}

/* The end of a block's backward with w_beside: the weight gradient after the block's other
 * kernels, and the collective leaving the block (the input gradient's all-reduce, or SP's
 * reduce-scatter) beside it: it waits for the op before the weight gradient, and the next op
 * waits for it.  Megatron's linear layers launch that collective asynchronously after the
 * input gradient and wait for it after the weight gradient. */
static void
leave_beside(bld *b, int s, int inst, const block_cost *bc, uint32_t tag, int64_t layer)
{
	int32_t mid[64];
	for (int j = 0; j < b->tpm; j++) {
		int rk = rank_of(b, s, inst, j);
		mid[j] = b->r[rk].last;
		compute(b, rk, &bc->w, tag, klist(bc, SLOT_W), layer);
	}
	if (bc->no_tp)
		return;
	bool sp = b->c->sequence_parallel && b->c->tp > 1;
	tp_coll_after(b, s, inst, sp ? HW_REDUCE_SCATTER : HW_ALL_REDUCE, b->cur_tag, mid);
}

static void
tp_coll_leave(bld *b, int s, int inst, const int32_t *before)
{
	bool sp = b->c->sequence_parallel && b->c->tp > 1;
	if (!tp_overlapped(b)) {
		tp_coll(b, s, inst, sp ? HW_REDUCE_SCATTER : HW_ALL_REDUCE, b->cur_tag);
		return;
	}
	tp_coll_after(b, s, inst, HW_REDUCE_SCATTER, b->cur_tag, before);
}

/* The ranks of a MoE group of TP member j of instance `inst`: the MoE layers fold their groups
 * over the stage's ranks in Megatron-Core's order (flat index tp + TP (cp + CP dp): etp fastest,
 * then ep, then edp), so a group is `size` ranks `stride` flat indexes apart: the EP group
 * stride etp, the ETP group stride 1.  In the symmetric mode the representative alone. */
static int
fold_members(const bld *b, int s, int inst, int j, int stride, int size, int *out)
{
	if (b->ninst * b->tpm == 1) {
		out[0] = rank_of(b, s, 0, 0);
		return 1;
	}
	int tp = b->tpm, flat = inst * tp + j;
	int base = flat - (flat / stride) % size * stride;
	for (int g = 0; g < size; g++) {
		int f = base + g * stride;
		out[g] = rank_of(b, s, f / tp, f % tp);
	}
	return size;
}

/* The ranks of instance `inst`'s side group (CP ring or EP all-to-all), member j. */
static int
side_members(const bld *b, int s, int inst, int j, int group, int stride, int *out)
{
	if (b->ninst == 1) {
		out[0] = rank_of(b, s, 0, j);
		return 1;
	}
	int base = inst - (inst / stride) % group * stride;
	for (int g = 0; g < group; g++)
		out[g] = rank_of(b, s, base + g * stride, j);
	return group;
}

/* Shard groups of a stage in the full mode (hybrid sharding's replicas; 1 otherwise), and the
 * instances each spans: a shard group is a run of consecutive instances (sim_place). */
static int
shard_blocks(const bld *b)
{
	return b->ninst > 1 ? b->pl.repl : 1;
}

/* The members of shard group `blk` of the data-parallel (ZeRO) group of TP member j of stage s,
 * and for each the op that gates a prefetch: the end of the layer before the previous one, so
 * that one layer's gather overlaps the previous layer's compute and no more than two layers are
 * gathered; without prefetching (zero3_prefetch off), the rank's last compute op (the layer
 * before, or the embedding or head before the first), so that the gather runs on its own. */
static int
dp_members(const bld *b, int s, int j, int blk, int *mem, int32_t *gate)
{
	int per = b->ninst / shard_blocks(b), n = 0;
	for (int i = blk * per; i < (blk + 1) * per && n < 4096; i++) {
		mem[n] = rank_of(b, s, i, j);
		if (gate) {
			const rank_res *r = &b->r[mem[n]];
			gate[n] = b->c->zero3_prefetch ? r->prev[1] : r->last >= 0 ? r->last : r->prev[0];
		}
		n++;
	}
	return n;
}

/* Hybrid sharding: each shard of TP member j of stage s, reduced within its shard group, is
 * all-reduced over the replicas holding the same shard (bytes: a shard's of the dense and the
 * expert gradients), on `which`, after each shard group's reduce-scatter (after[blk], or NULL
 * where the two share the stream that orders them). */
static void
replica_reduce(bld *b, int s, int j, int which, double bytes, double ebytes, uint32_t tag, const int32_t *after)
{
	if (b->pl.repl <= 1)
		return;
	double shard = bytes / (double)b->pl.grad + ebytes / (double)b->pl.edp;
	int blocks = shard_blocks(b), per = b->ninst / blocks;
	for (int q = 0; q < per; q++) {
		int mem[4096];
		int n = 0;
		int32_t deps[4096];
		for (int r = 0; r < blocks && n < 4096; r++) {
			deps[n] = after != NULL ? after[r] : -1;
			mem[n++] = rank_of(b, s, r * per + q, j);
		}
		collective(b, mem, n, which, SIM_G_DPR, HW_ALL_REDUCE, b->pl.repl, b->pl.repl_per_node, shard, tag,
			   after != NULL ? deps : NULL, false, false);
	}
}

/* ZeRO-3: gather a layer's parameters before its forward or backward. */
static void
zero_gather(bld *b, int s, int64_t layer, int64_t mb, const block_cost *A, const block_cost *B)
{
	const sim_train_cfg *c = b->c;
	double bytes = A->wbytes + B->wbytes; /* as stored: a fine-tuning's NF4 base stays packed */
	double ebytes = B->wexpert_bytes;
	int grp = b->pl.grad;
	/* the collectives each block's parameters are gathered in (HW_Z3_*), the bytes split evenly
	 * among them */
	int ka, kb;
	sim_zero3_gathers(b->m, c, &ka, &kb);
	for (int j = 0; j < b->tpm; j++)
		for (int blk = 0; blk < shard_blocks(b); blk++) {
			int mem[4096];
			int32_t gate[4096];
			int n = dp_members(b, s, j, blk, mem, gate);
			if (ka == 1 && kb == 1)
				collective(b, mem, n, S_DP, SIM_G_DP, HW_ALL_GATHER, grp, b->pl.grad_per_node, bytes,
					   sim_tag(TAG_ZERO_AG, layer, mb), gate, false, true);
			else
				for (int i = 0; i < ka + kb; i++)
					collective(b, mem, n, S_DP, SIM_G_DP, HW_ALL_GATHER, grp, b->pl.grad_per_node,
						   i < ka ? A->wbytes / ka : B->wbytes / kb, sim_tag(TAG_ZERO_AG, layer, mb),
						   gate, false, true);
			if (ebytes > 0)
				collective(b, mem, n, S_DP, SIM_G_EDP, HW_ALL_GATHER, b->pl.edp, b->pl.edp_per_node, ebytes,
					   sim_tag(TAG_ZERO_AG, layer, mb), gate, false, true);
		}
}

/* ZeRO-2/3: reduce-scatter a layer's gradients once they are complete (deps: per simulated
 * rank of the stage, the op that completes them), then, with hybrid sharding, all-reduce the
 * shards over the replicas.  The reduce-scatters run on a stream of their own beside the
 * parameter all-gathers, or (dp_one_stream) on the all-gathers' stream in the order they are
 * issued: PyTorch runs every collective of a process group on one NCCL stream per device,
 * whatever stream issued it (torch.distributed.fsdp.BackwardPrefetch), and FSDP and DeepSpeed
 * gather and reduce over the same group.  The replicas' all-reduce is a group of its own. */
static void
zero_reduce(bld *b, int s, int64_t layer, int64_t mb, const block_cost *A, const block_cost *B, const int32_t *ready)
{
	const sim_train_cfg *c = b->c;
	double gb = (double)sim_grad_bytes(c);
	double bytes = (A->train_params + B->train_params) * gb, ebytes = B->train_expert_params * gb;
	int grp = b->pl.grad, which = c->dp_one_stream ? S_DP : S_DPRS, blocks = shard_blocks(b);
	int32_t rsbuf[64], *rs = blocks <= 64 ? rsbuf : malloc((size_t)blocks * sizeof *rs);
	if (rs == NULL) {
		b->oom = true;
		return;
	}
	for (int j = 0; j < b->tpm; j++) {
		for (int blk = 0; blk < blocks; blk++) {
			int mem[4096];
			int32_t deps[4096];
			int n = dp_members(b, s, j, blk, mem, NULL);
			for (int k = 0; k < n; k++)
				deps[k] = ready[mem[k] - rank_of(b, s, 0, 0)];
			rs[blk] = collective(b, mem, n, which, SIM_G_DP, HW_REDUCE_SCATTER, grp, b->pl.grad_per_node, bytes,
					     sim_tag(TAG_ZERO_RS, layer, mb), deps, false, false);
			if (ebytes > 0) {
				int32_t e = collective(b, mem, n, which, SIM_G_EDP, HW_REDUCE_SCATTER, b->pl.edp,
						       b->pl.edp_per_node, ebytes, sim_tag(TAG_ZERO_RS, layer, mb), deps, false,
						       false);
				if (e >= 0)
					rs[blk] = e; /* after the dense one on the same stream */
			}
		}
		replica_reduce(b, s, j, S_DPRS, bytes, ebytes, sim_tag(TAG_DPR, layer, mb), which == S_DPRS ? NULL : rs);
	}
	if (rs != rsbuf)
		free(rs);
}

static int64_t
local_index(const bld *b, int s, int64_t layer)
{
	(void)s;
	return b->lidx[layer];
}

/* The reduce-scatter layer_bwd held back on stage s, if any, queued now. */
static void
zero_reduce_held(bld *b, int s)
{
	if (!b->rs_held)
		return;
	b->rs_held = false;
	const layer_cost *lc = &b->lc[b->rs_layer];
	int64_t li = local_index(b, s, b->rs_layer);
	int base = rank_of(b, s, 0, 0), nr = b->ninst * b->tpm;
	for (int k = 0; k < nr; k++)
		b->ready[k] = b->gready[(size_t)(base + k) * b->maxlayers + li];
	zero_reduce(b, s, b->rs_layer, b->rs_mb, &lc->attn, &lc->mlp, b->ready);
}

/* Called at the end of each layer's forward or backward: shifts the prefetch gates. */
static void
layer_done(bld *b, int s)
{
	for (int k = 0; k < b->ninst * b->tpm; k++) {
		rank_res *r = &b->r[rank_of(b, s, 0, 0) + k];
		r->prev[1] = r->prev[0];
		r->prev[0] = r->last;
	}
}

/* The MoE exchanges around the experts of a block on stage s: before them (after = false) the
 * all-to-all dispatch over each EP group, then the all-gather over each expert-TP group; after
 * them the expert-TP reduce-scatter, then the all-to-all combine.  A group's op is made once,
 * by its first member; it waits for its members' last compute op and gates their next. */
static void
moe_exchange(bld *b, int s, const block_cost *bc, bool after, int64_t layer, int64_t mb)
{
	const sim_train_cfg *c = b->c;
	int etp = sim_train_etp(c);
	for (int step = 0; step < 2; step++) {
		bool a2a = after ? step == 1 : step == 0;
		if (!a2a && !(bc->etp_bytes > 0))
			continue;
		for (int i = 0; i < b->ninst; i++)
			for (int j = 0; j < b->tpm; j++) {
				int mem[4096];
				int n = a2a ? fold_members(b, s, i, j, etp, c->ep, mem) : fold_members(b, s, i, j, 1, etp, mem);
				if (n > 1 && mem[0] != rank_of(b, s, i, j))
					continue; /* the group's first member creates the op */
				if (a2a)
					collective(b, mem, n, S_EP, SIM_G_EP, HW_ALL_TO_ALL, bc->side_ranks, bc->side_per_node,
						   bc->side_bytes, sim_tag(TAG_EP, layer, mb), NULL, true, true);
				else
					collective(b, mem, n, S_EP, SIM_G_ETP, after ? HW_REDUCE_SCATTER : HW_ALL_GATHER,
						   bc->etp_ranks, bc->etp_per_node, bc->etp_bytes, sim_tag(TAG_ETP, layer, mb),
						   NULL, true, true);
			}
	}
}

/* Runs one block's forward (bwd = false) or backward on every simulated rank of stage s. */
static void
block(bld *b, int s, const block_cost *bc, bool bwd, bool attn, int64_t layer, int64_t mb, bool recomputing)
{
	const sim_train_cfg *c = b->c;
	bool sp = c->sequence_parallel && c->tp > 1;
	int kind = bwd ? (attn ? TAG_BWD_ATTN : TAG_BWD_MLP) : (recomputing ? TAG_RECOMP : attn ? TAG_FWD_ATTN : TAG_FWD_MLP);
	uint32_t tag = sim_tag(kind, layer, mb);
	const seg *sg = bwd ? bc->bwd : bc->fwd;
	int s0 = bwd ? SLOT_B0 : SLOT_F0;
	int side_kind = attn ? S_CP : S_EP;
	b->cur_tag = sim_tag(TAG_TP, layer, mb);
	int32_t before[64];
	for (int i = 0; i < b->ninst; i++) {
		/* Entering the block: SP gathers the sequence (the backward of the RS that left it). */
		if (sp && !bc->no_tp)
			tp_coll_enter(b, s, i);
		if (bwd && bc->recompute.t > 0)
			for (int j = 0; j < b->tpm; j++)
				compute(b, rank_of(b, s, i, j), &bc->recompute, sim_tag(TAG_RECOMP, layer, mb), klist(bc, SLOT_RC),
					layer);
		if (!bc->split) {
			struct merged *mg = &b->merged[((size_t)layer * 2 + (attn ? 0 : 1)) * 2 + (bwd ? 1 : 0)];
			if (!mg->valid) {
				mg->all = sg[0];
				seg_merge(&mg->all, &sg[1]);
				seg_merge(&mg->all, &sg[2]);
				mg->ps = sim_ps(mg->all.t);
				mg->prov = seg_prov(&mg->all);
				mg->valid = true;
			}
			int32_t l = b->rec ? sim_rec_concat(b->rec, klist(bc, s0), klist(bc, s0 + 1), klist(bc, s0 + 2), -1) : -1;
			for (int j = 0; j < b->tpm; j++) {
				int rk = rank_of(b, s, i, j);
				before[j] = b->r[rk].last;
				if (b->r[rk].slow == 1.0)
					compute_priced(b, rk, &mg->all, mg->ps, mg->prov, tag, l, layer);
				else
					compute(b, rk, &mg->all, tag, l, layer);
			}
			/* Leaving the block: all-reduce, or SP's reduce-scatter (none around a block a
			 * hybrid model's layer lacks) */
			if (w_beside(b, bc, bwd))
				leave_beside(b, s, i, bc, tag, layer);
			else if (!bc->no_tp)
				tp_coll_leave(b, s, i, before);
		} else {
			for (int j = 0; j < b->tpm; j++)
				compute(b, rank_of(b, s, i, j), &sg[0], tag, klist(bc, s0), layer);
		}
	}
	if (!bc->split)
		return;
	/* A block with a side exchange runs phase by phase over the instances: an exchange that
	 * joins several instances (the full mode's CP ring, EP all-to-all) is made after every
	 * member's segment before it, which it waits for.  The CP ring's KV chunks travel while the
	 * attention core computes on the chunks already there (ring attention), so the core runs
	 * beside the exchange and the block's closing segment waits for both; the experts need
	 * their tokens, so an EP dispatch gates every member's next segment. */
	if (attn) {
		for (int i = 0; i < b->ninst; i++)
			for (int j = 0; j < b->tpm; j++) {
				int mem[4096];
				int n = side_members(b, s, i, j, c->cp, 1, mem);
				if (b->ninst > 1 && mem[0] != rank_of(b, s, i, j))
					continue; /* the first instance of the group creates the op */
				int32_t x = collective(b, mem, n, side_kind, SIM_G_CP, bc->side_op, bc->side_ranks,
						       bc->side_per_node, bc->side_bytes * (bwd ? 2.0 : 1.0),
						       sim_tag(TAG_CP, layer, mb), NULL, true, false);
				for (int k = 0; k < n; k++)
					b->r[mem[k]].side = x + 1;
			}
	} else {
		/* dispatch before the experts (and the expert-TP gather), combine after (after the
		 * expert-TP reduce-scatter); the backward runs the same exchanges in the same order */
		moe_exchange(b, s, bc, false, layer, mb);
	}
	for (int i = 0; i < b->ninst; i++)
		for (int j = 0; j < b->tpm; j++)
			compute(b, rank_of(b, s, i, j), &sg[1], tag, klist(bc, s0 + 1), layer);
	if (attn) {
		for (int i = 0; i < b->ninst; i++)
			for (int j = 0; j < b->tpm; j++) {
				rank_res *r = &b->r[rank_of(b, s, i, j)];
				if (r->side > 0)
					add_pending(b, rank_of(b, s, i, j), r->side - 1);
				r->side = 0;
			}
	} else {
		moe_exchange(b, s, bc, true, layer, mb);
	}
	for (int i = 0; i < b->ninst; i++) {
		for (int j = 0; j < b->tpm; j++) {
			before[j] = b->r[rank_of(b, s, i, j)].last;
			compute(b, rank_of(b, s, i, j), &sg[2], tag, klist(bc, s0 + 2), layer);
		}
		/* Leaving the block: all-reduce, or SP's reduce-scatter. */
		if (w_beside(b, bc, bwd))
			leave_beside(b, s, i, bc, tag, layer);
		else if (!bc->no_tp)
			tp_coll_leave(b, s, i, before);
	}
}

static void
add_flops(bld *b, const block_cost *bc, bool bwd, bool recomputing)
{
	const seg *sg = bwd ? bc->bwd : bc->fwd;
	double f = sg[0].flops + sg[1].flops + sg[2].flops;
	if (bwd)
		f += bc->w.flops + bc->recompute.flops;
	count_flops(b, FL_STAGE, f);
	if (recomputing)
		count_flops(b, FL_RECOMP, f);
	if (bwd)
		count_flops(b, FL_RECOMP, bc->recompute.flops);
}

static void
layer_fwd(bld *b, int s, int64_t layer, int64_t mb, bool recomputing)
{
	const layer_cost *lc = &b->lc[layer];
	if (b->c->zero >= 3 && !recomputing)
		zero_gather(b, s, layer, mb, &lc->attn, &lc->mlp);
	block(b, s, &lc->attn, false, true, layer, mb, recomputing);
	block(b, s, &lc->mlp, false, false, layer, mb, recomputing);
	add_flops(b, &lc->attn, false, recomputing);
	add_flops(b, &lc->mlp, false, recomputing);
	if (!recomputing)
		layer_done(b, s);
}

static void
layer_bwd(bld *b, int s, int64_t layer, int64_t mb)
{
	const layer_cost *lc = &b->lc[layer];
	bool z3 = b->c->zero >= 3;
	/* ZeRO-3 gathers the layer's parameters before its recompute, which needs them; one gather
	 * serves the recompute and the backward (FSDP), or the recompute releases them as a forward
	 * does and the backward gathers again (zero3_regather: DeepSpeed's module hooks) */
	if (b->c->recompute == SIM_RECOMPUTE_FULL) {
		if (z3) {
			zero_gather(b, s, layer, mb, &lc->attn, &lc->mlp);
			zero_reduce_held(b, s);
		}
		layer_fwd(b, s, layer, mb, true);
		z3 = z3 && b->c->zero3_regather;
	}
	if (z3) {
		zero_gather(b, s, layer, mb, &lc->attn, &lc->mlp);
		zero_reduce_held(b, s);
	}
	block(b, s, &lc->mlp, true, false, layer, mb, false);
	block(b, s, &lc->attn, true, true, layer, mb, false);
	add_flops(b, &lc->mlp, true, false);
	add_flops(b, &lc->attn, true, false);
	layer_done(b, s);
	if (b->c->schedule == SIM_ZB_H1)
		return; /* the gradients are complete after the layer's W op */
	int64_t li = local_index(b, s, layer);
	int base = rank_of(b, s, 0, 0), nr = b->ninst * b->tpm;
	for (int k = 0; k < nr; k++) {
		note_gready(b, (size_t)(base + k) * b->maxlayers + li, b->r[base + k].last);
		b->ready[k] = b->r[base + k].last;
	}
	if (b->c->zero >= 3 && b->c->dp_one_stream) {
		/* On one stream in issue order, as FSDP's backward prefetch (BACKWARD_PRE) and
		 * DeepSpeed's prefetcher issue them: the next layer's gather, issued before this
		 * layer's backward ends, goes ahead of this layer's reduce-scatter, which would
		 * otherwise hold it until the backward is done */
		b->rs_held = true;
		b->rs_layer = layer, b->rs_mb = mb;
	} else if (b->c->zero >= 2) {
		zero_reduce(b, s, layer, mb, &lc->attn, &lc->mlp, b->ready);
	}
}

/* Zero-bubble weight gradients of a layer, in the W job the schedule places. */
static void
layer_w(bld *b, int s, int64_t layer, int64_t mb)
{
	const layer_cost *lc = &b->lc[layer];
	seg w = lc->attn.w;
	seg_merge(&w, &lc->mlp.w);
	int64_t li = local_index(b, s, layer);
	int base = rank_of(b, s, 0, 0), nr = b->ninst * b->tpm;
	int32_t l = b->rec ? sim_rec_concat(b->rec, klist(&lc->attn, SLOT_W), klist(&lc->mlp, SLOT_W), -1, -1) : -1;
	for (int k = 0; k < nr; k++) {
		int32_t op = compute(b, base + k, &w, sim_tag(TAG_W_ATTN, layer, mb), l, layer);
		note_gready(b, (size_t)(base + k) * b->maxlayers + li, op);
		b->ready[k] = op;
	}
	if (b->c->zero >= 2)
		zero_reduce(b, s, layer, mb, &lc->attn, &lc->mlp, b->ready);
}

/* The model layers of chunk `ch` of stage s. */
static void
chunk_layers(const bld *b, int s, int ch, int64_t *first, int64_t *count)
{
	*count = sim_chunk_layers(b->m, b->c, s, b->v > 1 ? ch : 0, first);
}

static bool
is_first_virtual(int s, int ch)
{
	return s == 0 && ch == 0;
}

static bool
is_last_virtual(const bld *b, int s, int ch)
{
	return s == b->p - 1 && ch == b->v - 1;
}

static size_t
jkey(const bld *b, int type, int ch, int64_t mb)
{
	return ((size_t)type * (size_t)b->v + (size_t)ch) * (size_t)b->micro + (size_t)mb;
}

/* ---- stamping: a job made again from the journal of one like it ---------------------------- *
 *
 * A stage's jobs of one type and chunk make the same ops in the same order: the same streams,
 * durations, flows to copy and dependencies among themselves.  They differ only in the
 * micro-batch in their tags and in the ops from before the job that they wait for: the
 * collective that gates each rank's next compute op (its pending list) and its last layers.  So
 * one job of a kind is built as usual and journaled: every engine call it makes, every FLOP it
 * counts and every gradient-ready op it notes, in order, with each op it names coded as one of
 * its own (by the order they were made) or as one of those slots from before it.  The jobs of
 * that kind after it replay the journal (the engine keeps it resolved: sim_journal_new): the same
 * calls with the same arguments, so the graph is the same op for op and edge for edge.  GPT-3
 * 175B's folded step (bench/bench_sim) builds three small graphs of 3,456 jobs, 168 of them as
 * usual and the rest stamped: 12.3 M instructions, against 27.2 M building every job.
 *
 * A journal is kept only where a job's calls are all of those kinds: none where a job makes a
 * new flow (the first of its kind on a stage, which later ones copy) or names an op from before
 * it that is not in a slot.  A job is replayed only where its slots are laid out as the
 * journaled job's were (the same ones empty, the same ones naming one op) and the collective
 * memo still holds each flow the journaled job copied from it; else it is built as usual.
 * Stamping is for the symmetric mode and small full-mode graphs (at most JR_RANKS simulated
 * ranks a stage, and without TP: the engine journals no copy of a flow on several streams),
 * without ZeRO-2/3 (whose collectives wait on layers of other jobs) and without recording. */

enum { JR_RANKS = 8, JR_SLOTS = 6, JR_OUT = 9, JR_TRIES = 3 };

typedef struct jtpl {
	int tries;      /* journals begun */
	bool ready;     /* journaled: jobs of this kind are stamped */
	sim_rep *rep;   /* the engine calls, in order, as journaled */
	size_t nrep, repcap;
	sim_journal *jn; /* and as the engine keeps them to replay */
	double *fl[FL_N]; /* the FLOPs added to each count, in order */
	size_t nfl[FL_N], flcap[FL_N];
	int32_t *gr;    /* gradient-ready ops noted: pairs of index into gready, coded op */
	size_t ngr, grcap;
	size_t memo[16], nmemo;   /* memo slots the job copied from, with the ops they held */
	int32_t memo_like[16];
	int8_t pat[JR_RANKS * JR_SLOTS]; /* slot layout at the start (see slot_pattern) */
	int32_t out[JR_RANKS * JR_OUT];  /* coded rank state at the end: first, last, prev[2], npending,
	                                  * pending[4] */
} jtpl;

typedef struct jrun {
	jtpl *t;
	int32_t op0;    /* the job's first op */
	int nslots;
	int32_t slot[JR_RANKS * JR_SLOTS];
	uint32_t mb;    /* the micro-batch in its tags */
	bool bad;
} jrun;

/* A stage's slots: per simulated rank its pending ops (-1 past npending) and prev[0], prev[1]. */
static int
slots_of(const bld *b, int s, int32_t *slot)
{
	int base = rank_of(b, s, 0, 0), nr = b->ninst * b->tpm, n = 0;
	for (int k = 0; k < nr; k++) {
		const rank_res *r = &b->r[base + k];
		for (int i = 0; i < 4; i++)
			slot[n++] = i < r->npending ? r->pending[i] : -1;
		slot[n++] = r->prev[0];
		slot[n++] = r->prev[1];
	}
	return n;
}

/* Their layout: for each slot -1 where it is empty, else the first slot naming the same op. */
static void
slot_pattern(const int32_t *slot, int n, int8_t *pat)
{
	for (int i = 0; i < n; i++) {
		pat[i] = -1;
		if (slot[i] < 0)
			continue;
		int j = 0;
		while (slot[j] != slot[i])
			j++;
		pat[i] = (int8_t)j;
	}
}

static void
journal_bad(bld *b)
{
	b->jr->bad = true;
}

/* An op as the journal names it: k >= 0 the job's k-th op, -1 none, -2 - i slot i. */
static int32_t
jcode(bld *b, int32_t op)
{
	jrun *jr = b->jr;
	if (op < 0)
		return -1;
	if (op >= jr->op0)
		return op - jr->op0;
	for (int i = 0; i < jr->nslots; i++)
		if (jr->slot[i] == op)
			return -2 - i;
	jr->bad = true;
	return -1;
}

static sim_rep *
journal_rep(bld *b, int what)
{
	jtpl *t = b->jr->t;
	if (t->nrep + 1 > t->repcap && PP_GROW(t->rep, t->repcap, t->nrep + 1) != 0) {
		b->jr->bad = true;
		return NULL;
	}
	sim_rep *x = &t->rep[t->nrep++];
	memset(x, 0, sizeof *x);
	x->what = (uint8_t)what;
	return x;
}

static void
journal_op(bld *b, int what, int32_t a, int64_t ps, uint32_t tag, hw_prov prov, int32_t op)
{
	sim_rep *x = journal_rep(b, what);
	if (x == NULL)
		return;
	if (op < 0 || (tag & 0xffff) != b->jr->mb)
		b->jr->bad = true;
	x->a = a;
	x->dur = ps;
	x->tag = tag & ~UINT32_C(0xffff);
	x->prov = (uint8_t)prov;
}

static void
journal_dep(bld *b, int32_t before, int32_t after)
{
	sim_rep *x = journal_rep(b, SIM_REP_DEP);
	if (x == NULL)
		return;
	if (before < 0 || after < 0)
		b->jr->bad = true;
	x->a = jcode(b, before);
	x->z = jcode(b, after);
}

static void
journal_flops(bld *b, int k, double f)
{
	jtpl *t = b->jr->t;
	if (t->nfl[k] + 1 > t->flcap[k] && PP_GROW(t->fl[k], t->flcap[k], t->nfl[k] + 1) != 0) {
		b->jr->bad = true;
		return;
	}
	t->fl[k][t->nfl[k]++] = f;
}

static void
journal_gready(bld *b, size_t at, int32_t op)
{
	jtpl *t = b->jr->t;
	if (t->ngr + 2 > t->grcap && PP_GROW(t->gr, t->grcap, t->ngr + 2) != 0) {
		b->jr->bad = true;
		return;
	}
	t->gr[t->ngr++] = (int32_t)at;
	t->gr[t->ngr++] = jcode(b, op);
}

static void
journal_memo(bld *b, size_t slot, int32_t like)
{
	jtpl *t = b->jr->t;
	for (size_t i = 0; i < t->nmemo; i++)
		if (t->memo[i] == slot)
			return;
	if (t->nmemo == sizeof t->memo / sizeof t->memo[0]) {
		b->jr->bad = true;
		return;
	}
	t->memo[t->nmemo] = slot;
	t->memo_like[t->nmemo++] = like;
}

/* Begins journaling the job of kind t on stage s: false where it is not to be. */
static bool
journal_begin(bld *b, int s, jtpl *t, jrun *jr, int64_t mb)
{
	if (t->ready || t->tries >= JR_TRIES)
		return false;
	t->tries++;
	t->nrep = t->ngr = t->nmemo = 0;
	memset(t->nfl, 0, sizeof t->nfl);
	memset(jr, 0, sizeof *jr);
	jr->t = t;
	jr->op0 = sim_engine_ops(b->e);
	jr->nslots = slots_of(b, s, jr->slot);
	jr->mb = (uint32_t)(mb & 0xffff);
	slot_pattern(jr->slot, jr->nslots, t->pat);
	b->jr = jr;
	return true;
}

static void
journal_end(bld *b, int s)
{
	jrun *jr = b->jr;
	jtpl *t = jr->t;
	int base = rank_of(b, s, 0, 0), nr = b->ninst * b->tpm;
	for (int k = 0; k < nr; k++) {
		const rank_res *r = &b->r[base + k];
		int32_t *o = &t->out[k * JR_OUT];
		o[0] = jcode(b, r->first);
		o[1] = jcode(b, r->last);
		o[2] = jcode(b, r->prev[0]);
		o[3] = jcode(b, r->prev[1]);
		o[4] = r->npending;
		for (int i = 0; i < 4; i++)
			o[5 + i] = i < r->npending ? jcode(b, r->pending[i]) : -1;
	}
	b->jr = NULL;
	t->ready = !jr->bad && !b->oom && (t->jn = sim_journal_new(b->e, t->rep, t->nrep, jr->nslots)) != NULL;
}

/* The op a journal's code names in a job whose first op is op0, with slots slot[]. */
static inline int32_t
jdecode(int32_t c, int32_t op0, const int32_t *slot)
{
	return c >= 0 ? op0 + c : c == -1 ? -1 : slot[-2 - c];
}

/* Makes the job of micro-batch mb of kind t on stage s from its journal: false, making nothing,
 * where its slots or the memo are not as they were journaled. */
static bool
stamp_job(bld *b, int s, const jtpl *t, int64_t mb)
{
	int32_t slot[JR_RANKS * JR_SLOTS];
	int8_t pat[JR_RANKS * JR_SLOTS];
	int n = slots_of(b, s, slot);
	slot_pattern(slot, n, pat);
	if (memcmp(pat, t->pat, (size_t)n) != 0)
		return false;
	for (size_t i = 0; i < t->nmemo; i++)
		if (b->memo[t->memo[i]].like != t->memo_like[i])
			return false;
	int32_t op0 = sim_engine_ops(b->e);
	if (sim_journal_replay(b->e, t->jn, slot, (uint32_t)(mb & 0xffff)) != 0) {
		b->oom = true;
		return true;
	}
	for (int k = 0; k < FL_N; k++) {
		/* each count as count_flops adds them, one by one in order: the same sum to the bit */
		size_t nf = t->nfl[k];
		const double *f = t->fl[k];
		if (b->flog != NULL && nf > 0) {
			flop_log *l = &b->flog[k];
			if (l->n + nf > l->cap && PP_GROW(l->v, l->cap, l->n + nf) != 0) {
				b->oom = true;
				return true;
			}
			memcpy(&l->v[l->n], f, nf * sizeof *f);
			l->n += nf;
		}
		double acc = b->flops[k];
		for (size_t i = 0; i < nf; i++)
			acc += f[i];
		b->flops[k] = acc;
	}
	for (size_t i = 0; i < t->ngr; i += 2)
		b->gready[t->gr[i]] = jdecode(t->gr[i + 1], op0, slot);
	int base = rank_of(b, s, 0, 0), nr = b->ninst * b->tpm;
	for (int k = 0; k < nr; k++) {
		rank_res *r = &b->r[base + k];
		const int32_t *o = &t->out[k * JR_OUT];
		r->first = jdecode(o[0], op0, slot);
		r->last = jdecode(o[1], op0, slot);
		r->prev[0] = jdecode(o[2], op0, slot);
		r->prev[1] = jdecode(o[3], op0, slot);
		r->npending = o[4];
		for (int i = 0; i < o[4]; i++)
			r->pending[i] = jdecode(o[5 + i], op0, slot);
	}
	return true;
}

/* Builds job jb of stage s as usual. */
static void
build_job(bld *b, int s, const job *jb)
{
	int64_t first, count;
	chunk_layers(b, s, jb->chunk, &first, &count);
	int base = rank_of(b, s, 0, 0), nr = b->ninst * b->tpm;
	/* the job's first and last compute op on each rank, as compute() makes them */
	for (int k = 0; k < nr; k++)
		b->r[base + k].first = b->r[base + k].last = -1;
	if (jb->type == J_F) {
		if (is_first_virtual(s, jb->chunk))
			for (int k = 0; k < nr; k++)
				compute(b, base + k, &b->embed_f, sim_tag(TAG_EMBED_FWD, jb->chunk, jb->mb), b->embed_l[0], -1);
		for (int64_t l = first; l < first + count; l++)
			layer_fwd(b, s, l, jb->mb, false);
		if (is_last_virtual(b, s, jb->chunk))
			for (int k = 0; k < nr; k++)
				compute(b, base + k, &b->head_f, sim_tag(TAG_HEAD_FWD, jb->chunk, jb->mb), b->head_l[0], -1);
	} else if (jb->type == J_B) {
		if (is_last_virtual(b, s, jb->chunk))
			for (int k = 0; k < nr; k++)
				compute(b, base + k, &b->head_b, sim_tag(TAG_HEAD_BWD, jb->chunk, jb->mb), b->head_l[1], -1);
		for (int64_t l = first + count - 1; l >= first; l--)
			layer_bwd(b, s, l, jb->mb);
		zero_reduce_held(b, s);
		if (is_first_virtual(s, jb->chunk))
			for (int k = 0; k < nr; k++)
				compute(b, base + k, &b->embed_b, sim_tag(TAG_EMBED_BWD, jb->chunk, jb->mb), b->embed_l[1], -1);
	} else {
		/* W: each layer's weight gradient after the matching B-part op of this micro-batch */
		for (int64_t l = first + count - 1; l >= first; l--)
			layer_w(b, s, l, jb->mb);
	}
}

static void
emit_job(bld *b, int s, size_t ji, const job *jb)
{
	jtpl *t = b->jt != NULL ? &b->jt[((size_t)s * 3 + (size_t)jb->type) * (size_t)b->v + (size_t)jb->chunk] : NULL;
	if (t != NULL && t->ready && stamp_job(b, s, t, jb->mb)) {
		b->stamped++;
	} else {
		jrun jr;
		bool journal = t != NULL && journal_begin(b, s, t, &jr, jb->mb);
		build_job(b, s, jb);
		if (journal)
			journal_end(b, s);
	}
	int base = rank_of(b, s, 0, 0), nr = b->ninst * b->tpm;
	for (int k = 0; k < nr; k++) {
		b->jfirst[(size_t)(base + k) * b->maxjobs + ji] = b->r[base + k].first;
		b->jlast[(size_t)(base + k) * b->maxjobs + ji] = b->r[base + k].last;
	}
}

/* ---- pass 2: pipeline transfers ------------------------------------------------------------ */

/* A pipeline transfer of instance i waits for the sending job's last compute op and gates the
 * receiving job's first, on every TP member. */
static void
pp_deps(bld *b, int from_s, size_t from_j, int to_s, size_t to_j, int i, int32_t id)
{
	for (int j = 0; j < b->tpm; j++) {
		int ra = rank_of(b, from_s, i, j), rz = rank_of(b, to_s, i, j);
		int32_t last = b->jlast[(size_t)ra * b->maxjobs + from_j];
		int32_t first = b->jfirst[(size_t)rz * b->maxjobs + to_j];
		if (last >= 0)
			sim_dep(b->e, last, id);
		if (first >= 0)
			sim_dep(b->e, id, first);
	}
}

static void
pp_flow(bld *b, int from_s, size_t from_j, int to_s, size_t to_j, bool fwd, int chunk, int64_t mb)
{
	const sim_train_cfg *c = b->c;
	hw_flow f;
	int per_node = b->pl.pp_intra ? 2 : 1;
	bool sg = c->pp_scatter_gather && !(c->sequence_parallel && c->tp > 1) && c->tp > 1;
	double lat = 0.0;
	bool priced = false;
	for (int i = 0; i < b->ninst; i++) {
		/* a stage's transfers to the next (or previous) of an instance are all alike: the first
		 * is made, the others copied from it */
		int32_t *like = &b->pp_like[((size_t)from_s * (size_t)b->ninst + (size_t)i) * 2 + (fwd ? 0 : 1)];
		int32_t id = -1;
		if (*like >= 0 && b->rec == NULL) {
			if ((id = sim_op_flow_like(b->e, *like, sim_tag(fwd ? TAG_PP_FWD : TAG_PP_BWD, chunk, mb))) < 0) {
				b->oom = true;
				return;
			}
			pp_deps(b, from_s, from_j, to_s, to_j, i, id);
			continue;
		}
		if (!priced) {
			hw_cost_coll(b->cost, HW_SEND_RECV, 2, per_node, b->pp_msg, &f);
			lat = f.latency_s;
			if (sg) /* the receiving TP ranks all-gather their slices */
				lat += hw_cost_coll_time(b->cost, HW_ALL_GATHER, c->tp, b->pl.tp_per_node, b->pp_msg * c->tp, NULL);
			priced = true;
		}
		int n = b->tpm;
		int streams[128], links[256];
		double coef[256];
		int nl = 0;
		for (int j = 0; j < n; j++) {
			const rank_res *a = &b->r[rank_of(b, from_s, i, j)], *z = &b->r[rank_of(b, to_s, i, j)];
			streams[j] = fwd ? a->pfs : a->pbs;
			streams[n + j] = fwd ? z->pfr : z->pbr;
			links[nl] = per_node == 2 ? a->nvl_tx : a->nic_tx, coef[nl++] = 1.0;
			links[nl] = per_node == 2 ? z->nvl_rx : z->nic_rx, coef[nl++] = 1.0;
		}
		id = sim_op_flow(b->e, streams, 2 * n, links, coef, nl, sim_ps(lat), b->pp_msg, f.bw, 1.0,
				 sim_tag(fwd ? TAG_PP_FWD : TAG_PP_BWD, chunk, mb), f.prov);
		if (id < 0) {
			b->oom = true;
			return;
		}
		*like = id;
		if (b->rec) {
			sim_oprec x = {.what = REC_P2P, .group = SIM_G_PP, .coll = HW_SEND_RECV,
				       .elem = (uint8_t)sim_act_bytes(c), .tp_gather = sg, .gsize = 2, .per_node = per_node,
				       .from_stage = from_s, .to_stage = to_s, .list = -1, .layer = -1, .bytes = b->pp_msg};
			sim_rec_op(b->rec, id, &x);
		}
		pp_deps(b, from_s, from_j, to_s, to_j, i, id);
	}
}

static void
pass_pipeline(bld *b)
{
	int p = b->p, v = b->v;
	if (p <= 1)
		return;
	/* Forward transfers in the global forward order (the same on every stage), backward ones in
	 * the global backward order, so each stream's sends and receives line up. */
	int64_t M = b->micro * v;
	for (int64_t k = 0; k < M; k++) {
		int ch;
		int64_t mb;
		if (v > 1)
			interleaved_id(k, p, v, true, &ch, &mb);
		else
			ch = 0, mb = k;
		for (int s = 0; s < p; s++) {
			if (is_last_virtual(b, s, ch))
				continue;
			int ts = s + 1 < p ? s + 1 : 0, tc = s + 1 < p ? ch : ch + 1;
			pp_flow(b, s, (size_t)b->jindex[s][jkey(b, J_F, ch, mb)], ts, (size_t)b->jindex[ts][jkey(b, J_F, tc, mb)],
				true, ch, mb);
		}
	}
	for (int64_t k = 0; k < M; k++) {
		int ch;
		int64_t mb;
		if (v > 1)
			interleaved_id(k, p, v, false, &ch, &mb);
		else
			ch = 0, mb = b->c->schedule == SIM_GPIPE ? b->micro - 1 - k : k;
		for (int s = p - 1; s >= 0; s--) {
			if (is_first_virtual(s, ch))
				continue;
			int ts = s > 0 ? s - 1 : p - 1, tc = s > 0 ? ch : ch - 1;
			pp_flow(b, s, (size_t)b->jindex[s][jkey(b, J_B, ch, mb)], ts, (size_t)b->jindex[ts][jkey(b, J_B, tc, mb)],
				false, ch, mb);
		}
	}
}

/* ---- pass 3: gradients and the optimizer --------------------------------------------------- */

static double
bucket_limit(const bld *b)
{
	if (b->c->bucket_bytes > 0)
		return b->c->bucket_bytes;
	/* Megatron-LM's default bucket: 40M parameters (times the gradient width). */
	return 40e6 * (double)sim_grad_bytes(b->c);
}

/* Gradient buckets of stage s for TP member j, filled in the order the layers' last gradients
 * complete (chunks and layers from last to first), each reduced over the data-parallel group
 * once its last layer is ready -- or, without overlap, after the stage's backward pass. */
static void
stage_buckets(bld *b, int s, int j)
{
	const sim_train_cfg *c = b->c;
	double gb = (double)sim_grad_bytes(c), limit = bucket_limit(b);
	hw_coll op = c->zero >= 1 ? HW_REDUCE_SCATTER : HW_ALL_REDUCE;
	double acc = 0.0, eacc = 0.0;
	int bucket = 0;
	for (int ch = b->v - 1; ch >= 0; ch--) {
		int64_t first, count;
		chunk_layers(b, s, ch, &first, &count);
		for (int64_t l = first + count - 1; l >= first; l--) {
			const layer_cost *lc = &b->lc[l];
			acc += (lc->attn.train_params + lc->mlp.train_params) * gb;
			eacc += lc->mlp.train_expert_params * gb;
			bool frozen = sim_ft_frozen(c); /* a frozen head and embedding have no gradients */
			if (is_last_virtual(b, s, ch) && l == first + count - 1 && !frozen)
				acc += sim_head_params(b->m, c) * gb;
			bool last = ch == 0 && l == first;
			if (last && s == 0 && !frozen)
				acc += sim_embed_params(b->m, c) * gb;
			if (acc < limit && eacc < limit && !last)
				continue;
			int64_t li = local_index(b, s, l);
			for (int blk = 0; blk < shard_blocks(b); blk++) {
				int mem[4096];
				int32_t deps[4096];
				int n = dp_members(b, s, j, blk, mem, NULL);
				for (int k = 0; k < n; k++)
					deps[k] = c->overlap_grad_reduce ? b->gready[(size_t)mem[k] * b->maxlayers + li]
									 : b->r[mem[k]].last;
				collective(b, mem, n, S_DP, SIM_G_DP, op, b->pl.grad, b->pl.grad_per_node, acc,
					   sim_tag(TAG_DP, 0, bucket), deps, false, false);
				collective(b, mem, n, S_DP, SIM_G_EDP, op, b->pl.edp, b->pl.edp_per_node, eacc,
					   sim_tag(TAG_DP, 0, bucket), deps, false, false);
			}
			replica_reduce(b, s, j, S_DP, acc, eacc, sim_tag(TAG_DPR, 0, bucket), NULL);
			acc = eacc = 0.0;
			bucket++;
		}
	}
}

/* Trainable parameters of stage s held by one rank: non-expert and expert. */
static void
stage_params(const bld *b, int s, double *P, double *Pe)
{
	*P = *Pe = 0.0;
	for (int ch = 0; ch < b->v; ch++) {
		int64_t first, count;
		chunk_layers(b, s, ch, &first, &count);
		for (int64_t l = first; l < first + count; l++) {
			*P += b->lc[l].attn.train_params + b->lc[l].mlp.train_params;
			*Pe += b->lc[l].mlp.train_expert_params;
		}
	}
	if (sim_ft_frozen(b->c))
		return;
	if (s == 0)
		*P += sim_embed_params(b->m, b->c);
	if (s == b->p - 1)
		*P += sim_head_params(b->m, b->c);
}

/* The optimizer step of a rank once every collective on its data-parallel streams is done (a
 * mark at each stream's tail): Adam in mixed precision reads the fp32 master weights, momentum,
 * variance and gradient and writes them back with the 16-bit copy, ~32 bytes per parameter with
 * the gradient norm's read (28 without 16-bit copies); SGD with momentum ~20. */
static int32_t
optimizer(bld *b, int rk, double params, double bytes_per_param)
{
	rank_res *r = &b->r[rk];
	seg opt = {0};
	hw_prov p = HW_PROV_DATASHEET;
	const hw_kernel step = {.kind = HW_K_MEM, .bytes = params * bytes_per_param};
	double t = hw_cost_kernel(b->cost, &step, &p);
	if (b->c->offload_optimizer && b->t != NULL) {
		/* ZeRO-Offload (Ren et al. 2021): the 16-bit gradients go to the host, the CPU runs Adam
		 * over the fp32 master weights and moments (read 16 B, write 12 B a parameter, at the host
		 * memory bandwidth the GPU's share of the CPU gets), the 16-bit weights come back; the GPU
		 * waits for it. */
		double e = sim_act_bytes(b->c);
		t = params * 2.0 * e / (hw_cost_param(b->cost, HW_P_PCIE_GBPS) * 1e9) +
		    params * 28.0 / (hw_cost_param(b->cost, HW_P_HOST_OPTIM_GBPS) * 1e9);
	}
	seg_add(&opt, t, 0.0, p);
	int32_t marks[2];
	marks[0] = sim_op_mark(b->e, r->dp, sim_tag(TAG_STEP, 0, 0));
	marks[1] = sim_op_mark(b->e, r->dprs, sim_tag(TAG_STEP, 0, 0));
	int32_t l = -1;
	if (b->rec) {
		sim_oprec x = {.what = REC_MARK, .list = -1, .layer = -1};
		for (int i = 0; i < 2; i++)
			if (marks[i] >= 0)
				sim_rec_op(b->rec, marks[i], &x);
		l = sim_rec_list(b->rec);
		sim_kernel k = {.hk = step, .layer = -1};
		sim_rec_kernel(b->rec, l, &k);
	}
	add_pending(b, rk, marks[0]);
	add_pending(b, rk, marks[1]);
	return compute(b, rk, &opt, sim_tag(TAG_OPTIM, 0, 0), l, -1);
}

static void
pass_grads(bld *b)
{
	const sim_train_cfg *c = b->c;
	const model_tf *t = b->t;
	int grp = b->pl.grad;
	for (int s = 0; s < b->p; s++)
		if (c->zero < 2)
			for (int j = 0; j < b->tpm; j++)
				stage_buckets(b, s, j);
	/* Tied embeddings split over the first and last stage: their gradients are summed. */
	if (b->p > 1 && t->tied_embeddings && !sim_ft_frozen(c)) {
		double bytes = (double)t->vocab * (double)t->hidden / (double)c->tp * (double)sim_grad_bytes(c);
		for (int i = 0; i < b->ninst; i++)
			for (int j = 0; j < b->tpm; j++) {
				int mem[2] = {rank_of(b, 0, i, j), rank_of(b, b->p - 1, i, j)};
				collective(b, mem, 2, S_DP, SIM_G_EMB, HW_ALL_REDUCE, 2, 1, bytes, sim_tag(TAG_EMB_SYNC, 0, 0), NULL,
					   true, false);
			}
	}
	double per_param = sim_act_bytes(c) >= 4.0 ? 28.0 : 32.0;
	for (int rk = 0; rk < b->nranks; rk++) {
		int s = rk / (b->ninst * b->tpm);
		double P, Pe;
		stage_params(b, s, &P, &Pe);
		if (c->zero >= 1) {
			P /= (double)grp;
			Pe /= (double)b->pl.edp;
		}
		int32_t op = optimizer(b, rk, P + Pe, per_param);
		if (op >= 0 && c->zero >= 1 && c->zero < 3 && !c->overlap_param_gather) {
			/* the updated 16-bit shards are gathered before the next forward */
			int mem[1] = {rk};
			double bytes = (P * (double)grp + Pe * (double)b->pl.edp) * sim_act_bytes(c);
			collective(b, mem, 1, S_DP, SIM_G_DP, HW_ALL_GATHER, grp, b->pl.grad_per_node, bytes,
				   sim_tag(TAG_PARAM_AG, 0, 0), NULL, true, false);
		}
	}
}

/* ---- CNNs ---------------------------------------------------------------------------------- */

static void
cnn_layer_cost(const hw_cost *cost, hw_dtype dt, double act_bytes, const model_layer *l, double mb, seg *fwd,
	       seg *bwd, sim_rec *rec, const int32_t *lists, int64_t layer);

void
sim_cnn_layer_cost(const hw_cost *cost, hw_dtype dt, double act_bytes, const model_layer *l, double mb, seg *fwd,
		   seg *bwd)
{
	cnn_layer_cost(cost, dt, act_bytes, l, mb, fwd, bwd, NULL, NULL, -1);
}

/* Prices a CNN kernel into segment s and, recording, lists it in list (weight w of model layer
 * `layer`, or none for an element-wise kernel).  flops are the layer's own count (the published
 * CNN FLOP convention), not the kernel's. */
static void
cnn_kernel(const hw_cost *cost, seg *s, const hw_kernel *k, double flops, sim_rec *rec, int32_t list, sim_weight w,
	   sim_pass pass, int64_t layer)
{
	hw_prov p = HW_PROV_DATASHEET;
	double t = hw_cost_kernel(cost, k, &p);
	seg_add(s, t, flops, p);
	if (rec == NULL || list < 0)
		return;
	/* the replay runs a convolution as the GEMM it is lowered to */
	sim_kernel sk = {.hk = *k, .weight = w, .pass = pass, .layer = w == SIM_W_NONE ? -1 : layer};
	if (sk.hk.kind == HW_K_CONV)
		sk.hk.kind = HW_K_GEMM, sk.hk.batch = 1.0;
	sim_rec_kernel(rec, list, &sk);
}

/* The kernels of a CNN layer: lists[0] gets the forward's, lists[1] the backward's. */
static void
cnn_layer_cost(const hw_cost *cost, hw_dtype dt, double act_bytes, const model_layer *l, double mb, seg *fwd,
	       seg *bwd, sim_rec *rec, const int32_t *lists, int64_t layer)
{
	memset(fwd, 0, sizeof *fwd);
	memset(bwd, 0, sizeof *bwd);
	int32_t lf = lists ? lists[0] : -1, lb = lists ? lists[1] : -1;
	if (l->kind == MODEL_LAYER_CONV || l->kind == MODEL_LAYER_FC) {
		/* implicit GEMM: M = output pixels of the batch, N = output channels, K = the
		 * receptive field; the backward's data and weight gradients swap the operands */
		bool conv = l->kind == MODEL_LAYER_CONV;
		double M = conv ? mb * (double)(l->out_h * l->out_w) : mb, N = (double)l->out_c;
		double K = conv ? (double)(l->in_c * l->kernel * l->kernel) : (double)l->in_c;
		double fl = l->fwd_flops * mb;
		hw_kernel k = {.kind = conv ? HW_K_CONV : HW_K_GEMM, .dtype = dt, .batch = 1.0};
		sim_weight w = conv ? SIM_W_CONV : SIM_W_CNN_FC;
		k.m = M, k.n = N, k.k = K;
		cnn_kernel(cost, fwd, &k, fl, rec, lf, w, SIM_PASS_FWD, layer);
		k.m = M, k.n = K, k.k = N;
		cnn_kernel(cost, bwd, &k, fl, rec, lb, w, SIM_PASS_DGRAD, layer);
		k.m = K, k.n = N, k.k = M;
		cnn_kernel(cost, bwd, &k, fl, rec, lb, w, SIM_PASS_WGRAD, layer);
	} else {
		/* element-wise: read the input, write the output (an add reads two inputs) */
		double bytes = (l->in_elems + l->out_elems + (l->kind == MODEL_LAYER_ADD ? l->out_elems : 0.0)) * act_bytes * mb;
		hw_kernel k = {.kind = HW_K_MEM, .bytes = bytes};
		cnn_kernel(cost, fwd, &k, 0.0, rec, lf, SIM_W_NONE, SIM_PASS_FWD, layer);
		k.bytes = 1.5 * bytes;
		cnn_kernel(cost, bwd, &k, 0.0, rec, lb, SIM_W_NONE, SIM_PASS_FWD, layer);
	}
}

/* A CNN under data parallelism (DDP): per micro-batch one forward op, and backward ops per
 * gradient bucket (buckets fill in reverse layer order, PyTorch DDP's 25 MiB by default); the
 * last micro-batch's buckets are all-reduced as each completes (no_sync before it). */
static int
build_cnn(bld *b)
{
	const sim_train_cfg *c = b->c;
	const model_layer *ly;
	size_t n = model_layers(b->m, &ly);
	hw_dtype dt = c->dtype;
	double e = sim_act_bytes(c), mb = (double)c->micro_batch;
	double limit = c->bucket_bytes > 0 ? c->bucket_bytes : 25.0 * 1048576.0;
	seg fwd = {0};
	seg *bwd = calloc(n, sizeof *bwd);
	seg *bk = calloc(n, sizeof *bk);
	double *bbytes = calloc(n, sizeof *bbytes);
	int32_t *bops = malloc((size_t)b->nranks * n * sizeof *bops);
	int *mem = malloc((size_t)b->nranks * sizeof *mem);
	int32_t *deps = malloc((size_t)b->nranks * sizeof *deps);
	if (bwd == NULL || bk == NULL || bbytes == NULL || bops == NULL || mem == NULL || deps == NULL) {
		free(bwd), free(bk), free(bbytes), free(bops), free(mem), free(deps);
		return PP_ENOMEM;
	}
	/* recording: the forward op's kernels (every layer's, in order) and per layer the
	 * backward's, concatenated per bucket below */
	int32_t fl = -1, *bl = NULL, *bkl = NULL;
	if (b->rec) {
		fl = sim_rec_list(b->rec);
		bl = malloc(n * sizeof *bl);
		bkl = malloc(n * sizeof *bkl);
		if (bl == NULL || bkl == NULL) {
			free(bwd), free(bk), free(bbytes), free(bops), free(mem), free(deps), free(bl), free(bkl);
			return PP_ENOMEM;
		}
		for (size_t i = 0; i < n; i++)
			bkl[i] = -1;
	}
	for (size_t i = 0; i < n; i++) {
		seg f;
		if (b->rec) {
			int32_t lists[2] = {sim_rec_list(b->rec), -1};
			lists[1] = sim_rec_list(b->rec);
			bl[i] = lists[1];
			cnn_layer_cost(b->cost, dt, e, &ly[i], mb, &f, &bwd[i], b->rec, lists, (int64_t)i);
			sim_rec_append(b->rec, fl, lists[0]);
		} else {
			sim_cnn_layer_cost(b->cost, dt, e, &ly[i], mb, &f, &bwd[i]);
		}
		seg_merge(&fwd, &f);
	}
	/* buckets */
	size_t nb = 0;
	for (size_t ii = n; ii-- > 0;) {
		seg *x = &bk[nb];
		if (b->rec) { /* bucket nb's kernels: its layers' backward kernels, last layer first */
			if (bkl[nb] < 0)
				bkl[nb] = sim_rec_list(b->rec);
			sim_rec_append(b->rec, bkl[nb], bl[ii]);
		}
		seg_merge(x, &bwd[ii]);
		bbytes[nb] += (double)ly[ii].params * 4.0;
		if (bbytes[nb] >= limit || ii == 0)
			nb++;
	}
	for (int64_t k = 0; k < b->micro; k++)
		for (int rk = 0; rk < b->nranks; rk++) {
			compute(b, rk, &fwd, sim_tag(TAG_CNN_FWD, 0, k), fl, -1);
			b->flops[FL_STAGE] += fwd.flops;
			for (size_t q = 0; q < nb; q++) {
				bops[(size_t)rk * n + q] =
					compute(b, rk, &bk[q], sim_tag(TAG_CNN_BWD, (int64_t)q, k), bkl ? bkl[q] : -1, -1);
				b->flops[FL_STAGE] += bk[q].flops;
			}
		}
	for (int rk = 0; rk < b->nranks; rk++)
		mem[rk] = rk;
	for (size_t q = 0; q < nb; q++) {
		for (int rk = 0; rk < b->nranks; rk++)
			deps[rk] = c->overlap_grad_reduce ? bops[(size_t)rk * n + q] : bops[(size_t)rk * n + nb - 1];
		collective(b, mem, b->nranks, S_DP, SIM_G_DP, HW_ALL_REDUCE, c->dp, b->pl.dp_per_node, bbytes[q],
			   sim_tag(TAG_DP, 0, (int64_t)q), deps, false, false);
	}
	for (int rk = 0; rk < b->nranks; rk++)
		optimizer(b, rk, model_params(b->m), 20.0);
	free(bwd), free(bk), free(bbytes), free(bops), free(mem), free(deps), free(bl), free(bkl);
	return 0;
}

/* ---- top level ----------------------------------------------------------------------------- */

static void
bld_free(bld *b)
{
	if (b->jobs)
		for (int s = 0; s < b->p; s++)
			free(b->jobs[s]);
	if (b->jindex)
		for (int s = 0; s < b->p; s++)
			free(b->jindex[s]);
	free(b->jobs);
	free(b->njobs);
	free(b->jindex);
	free(b->jfirst);
	free(b->jlast);
	free(b->gready);
	free(b->ready);
	free(b->r);
	free(b->lc);
	free(b->lidx);
	free(b->memo);
	free(b->tp_like);
	free(b->pp_like);
	free(b->merged);
	free(b->flog_at);
	if (b->jt != NULL)
		for (size_t i = 0; i < (size_t)b->p * 3 * (size_t)b->v; i++)
		{
			free(b->jt[i].rep), free(b->jt[i].gr), sim_journal_free(b->jt[i].jn);
			for (int k = 0; k < FL_N; k++)
				free(b->jt[i].fl[k]);
		}
	free(b->jt);
}

static int
make_ranks(bld *b)
{
	b->r = calloc((size_t)b->nranks, sizeof *b->r);
	if (b->r == NULL)
		return PP_ENOMEM;
	double up = hw_cost_scaleup_bw(b->cost), nic = hw_cost_nic_bw(b->cost);
	for (int rk = 0; rk < b->nranks; rk++) {
		rank_res *r = &b->r[rk];
		r->comp = sim_stream_new(b->e, rk, SIM_STREAM_COMPUTE);
		r->tp = sim_stream_new(b->e, rk, SIM_STREAM_COMM);
		r->cp = sim_stream_new(b->e, rk, SIM_STREAM_COMM);
		r->ep = sim_stream_new(b->e, rk, SIM_STREAM_COMM);
		r->dp = sim_stream_new(b->e, rk, SIM_STREAM_COMM);
		r->dprs = sim_stream_new(b->e, rk, SIM_STREAM_COMM);
		r->pfs = sim_stream_new(b->e, rk, SIM_STREAM_COMM);
		r->pfr = sim_stream_new(b->e, rk, SIM_STREAM_COMM);
		r->pbs = sim_stream_new(b->e, rk, SIM_STREAM_COMM);
		r->pbr = sim_stream_new(b->e, rk, SIM_STREAM_COMM);
		r->nvl_tx = sim_link_new(b->e, up);
		r->nvl_rx = sim_link_new(b->e, up);
		r->nic_tx = sim_link_new(b->e, nic > 0 ? nic : up);
		r->nic_rx = sim_link_new(b->e, nic > 0 ? nic : up);
		r->first = r->last = r->prev[0] = r->prev[1] = -1;
		r->slow = 1.0;
		sim_rank_slowdown(b->e, rk, b->c->fw ? hw_profile_get(b->c->fw, HW_P_FW_COMM_SLOWDOWN) : 0.0);
		if (r->comp < 0 || r->pbr < 0 || r->nic_rx < 0)
			return PP_ENOMEM;
		if (b->rec) {
			const int st[SIM_NSTREAMS] = {r->comp, r->tp, r->cp, r->ep, r->dp, r->dprs, r->pfs, r->pfr, r->pbs, r->pbr};
			int per_stage = b->ninst * b->tpm;
			sim_rec_rank(b->rec, rk, st, rk / per_stage, rk % per_stage / b->tpm, rk % b->tpm);
		}
	}
	return 0;
}

static int
too_many_ops(const bld *b, char *err, size_t errlen)
{
	return pp_err(err, errlen, PP_EUSAGE,
		      "the op graph would need more than the %.1f million ops the simulator holds (%d simulated ranks x "
		      "%lld micro-batches): raise --micro-batch%s",
		      SIM_MAX_OPS / 1e6, b->nranks, (long long)b->micro, b->c->full ? " or drop --full" : "");
}

/* The shape of the graph of a checked configuration: stages, chunks, micro-batches, simulated
 * instances per stage and TP members per instance. */
static int
shape(bld *b, const model *m, const sim_train_cfg *c, char *err, size_t errlen)
{
	b->m = m;
	b->t = model_transformer(m);
	b->c = c;
	sim_place(hw_cost_system(b->cost), c, &b->pl);
	b->p = b->t ? c->pp : 1;
	b->v = b->t ? c->vpp : 1;
	b->micro = c->global_batch / ((int64_t)c->dp * c->micro_batch);
	if (b->micro > 65535)
		return pp_err(err, errlen, PP_EUSAGE,
			      "%lld micro-batches per step is more than the simulator handles (65535): raise --micro-batch",
			      (long long)b->micro);
	b->ninst = c->full ? c->dp * c->cp : 1;
	b->tpm = c->full ? c->tp : 1;
	if (!b->t) {
		b->ninst = c->full ? c->dp : 1;
		b->tpm = 1;
	}
	b->nranks = b->p * b->ninst * b->tpm;
	return 0;
}

/* The op graph is held in memory whole: the engine refuses ops beyond SIM_MAX_OPS.  A simulated
 * rank runs at least 2 ops per layer and micro-batch, its forward and its backward (4 to 8 is
 * usual; ring attention and MoE dispatch take up to 19); a CNN rank at least 2 per micro-batch
 * (its layers run as a few fused segments): a graph sure to pass the limit by that count is
 * refused without counting. */
static bool
surely_too_many(const bld *b)
{
	double per_rank = 2.0 * (b->t ? (double)b->t->layers / (double)b->p : 1.0);
	return (double)b->nranks * (double)b->micro * per_rank > SIM_MAX_OPS;
}

/* Builds the op graph of a checked configuration into b (b->e; b must be zeroed but for flog),
 * with `micro` micro-batches (0: the configuration's).  On failure
 * the caller frees what b holds (bld_free, b->e, b->rec) as on success. */
static int
build(bld *b, const model *m, const hw_cost *cost, const sim_train_cfg *c, int64_t micro, size_t reserve_ops,
      char *err, size_t errlen)
{
	const hw_system *sys = hw_cost_system(cost);
	int rc = 0;
	b->cost = cost;
	b->sys = sys;
	if ((rc = shape(b, m, c, err, errlen)) != 0)
		return rc;
	if (micro > 0)
		b->micro = micro;
	if (surely_too_many(b))
		return too_many_ops(b, err, errlen);
	b->e = sim_engine_new(b->nranks, c->trace || c->record_ops);
	if (b->e != NULL) {
		sim_engine_limit_ops(b->e, (size_t)SIM_MAX_OPS);
		/* the arrays sized up front (growing them copies and touches pages twice): the census's
		 * count, or about 16 ops per layer and micro-batch on a rank (a forward and a backward of
		 * two blocks with their TP collectives); about 1.5 dependencies an op, 3.5 in full mode
		 * where collectives wait for every member.  Untouched reserve costs address space only. */
		size_t ops = reserve_ops;
		if (ops == 0)
			ops = (size_t)b->nranks * (size_t)b->micro * (size_t)(b->t ? 16 * (b->t->layers / b->p + 1) : 4 * 16) +
			      (size_t)b->nranks * 64;
		if (ops > (size_t)SIM_MAX_OPS)
			ops = (size_t)SIM_MAX_OPS;
		sim_engine_reserve(b->e, ops, c->full ? ops * 7 / 2 : ops * 3 / 2, 0, 0, 0);
		/* the FLOP logs likewise: an entry per compute op, and per block for the others */
		for (int k = 0; b->flog != NULL && k < FL_N; k++) {
			flop_log *l = &b->flog[k];
			if (PP_GROW(l->v, l->cap, k == FL_OP ? ops : ops / 2) != 0)
				b->oom = true;
		}
	}
	b->embed_l[0] = b->embed_l[1] = b->head_l[0] = b->head_l[1] = -1;
	if (c->record_ops && (b->rec = sim_rec_new(b->nranks)) == NULL)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	/* the collective memo: a few entries per simulated rank (each rank's TP collectives: all-reduce,
	 * or all-gather and reduce-scatter, forward and backward) */
	b->memo_bits = 6;
	while (b->memo_bits < 16 && ((size_t)1 << b->memo_bits) < (size_t)b->nranks * 8)
		b->memo_bits++;
	if ((b->memo = malloc(((size_t)1 << b->memo_bits) * sizeof *b->memo)) != NULL)
		for (size_t i = 0; i < ((size_t)1 << b->memo_bits); i++)
			b->memo[i].like = -1;
	if (b->e == NULL || b->memo == NULL || make_ranks(b) != 0)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	if (c->full && c->straggler_rank >= 0 && c->straggler > 1.0) {
		/* global rank -> simulated rank: tp fastest, then cp, dp, pp as Megatron orders them */
		int g = c->straggler_rank;
		int tpi = g % c->tp, rest = g / c->tp;
		int inst = b->t ? rest % (c->dp * c->cp) : rest % c->dp;
		int st = b->t ? rest / (c->dp * c->cp) : 0;
		if (!b->t)
			tpi = 0, inst = g % c->dp;
		int sr = rank_of(b, st, inst, tpi);
		if (sr >= 0 && sr < b->nranks)
			b->r[sr].slow = c->straggler;
	}
	if (b->t == NULL) {
		if (build_cnn(b) != 0) {
			return pp_err(err, errlen, PP_ENOMEM, "out of memory");
		}
	} else {
		int64_t L = b->t->layers;
		b->lc = calloc((size_t)L, sizeof *b->lc);
		b->merged = calloc((size_t)L * 4, sizeof *b->merged);
		b->tp_like = malloc((size_t)b->p * (size_t)b->ninst * 3 * sizeof *b->tp_like);
		if (b->tp_like != NULL)
			for (size_t i = 0; i < (size_t)b->p * (size_t)b->ninst * 3; i++)
				b->tp_like[i] = -1;
		b->pp_like = malloc((size_t)b->p * (size_t)b->ninst * 2 * sizeof *b->pp_like);
		if (b->pp_like != NULL)
			for (size_t i = 0; i < (size_t)b->p * (size_t)b->ninst * 2; i++)
				b->pp_like[i] = -1;
		if (b->lc == NULL || b->merged == NULL || b->tp_like == NULL || b->pp_like == NULL) {
			return pp_err(err, errlen, PP_ENOMEM, "out of memory");
		}
		for (int64_t l = 0; l < L; l++) {
			/* layers of the same kind cost the same: reuse the previous one's costs */
			if (l > 0 && model_layers_alike(m, l, l - 1))
				b->lc[l] = b->lc[l - 1];
			else if (b->rec)
				sim_layer_cost_rec(m, cost, c, l, &b->lc[l], b->rec);
			else
				sim_layer_cost(m, cost, c, l, &b->lc[l]);
		}
		if (b->rec) {
			sim_embed_cost_rec(m, cost, c, &b->embed_f, &b->embed_b, b->rec, b->embed_l);
			sim_head_cost_rec(m, cost, c, &b->head_f, &b->head_b, b->rec, b->head_l);
		} else {
			sim_embed_cost(m, cost, c, &b->embed_f, &b->embed_b);
			sim_head_cost(m, cost, c, &b->head_f, &b->head_b);
		}
		double T = (double)c->micro_batch * (double)sim_seq(m, c) / (double)c->cp;
		b->act_msg = T * (double)b->t->hidden * sim_act_bytes(c);
		bool sp = c->sequence_parallel && c->tp > 1;
		b->pp_msg = b->act_msg / ((sp || (c->pp_scatter_gather && c->tp > 1)) ? (double)c->tp : 1.0);
		b->lidx = malloc((size_t)L * sizeof *b->lidx);
		if (b->lidx == NULL) {
			return pp_err(err, errlen, PP_ENOMEM, "out of memory");
		}
		for (int s = 0; s < b->p; s++) {
			int32_t k = 0;
			for (int ch = 0; ch < b->v; ch++) {
				int64_t f, n;
				chunk_layers(b, s, ch, &f, &n);
				for (int64_t l = f; l < f + n; l++)
					b->lidx[l] = k++;
			}
		}
		/* schedules */
		b->jobs = calloc((size_t)b->p, sizeof *b->jobs);
		b->njobs = calloc((size_t)b->p, sizeof *b->njobs);
		b->jindex = calloc((size_t)b->p, sizeof *b->jindex);
		if (b->jobs == NULL || b->njobs == NULL || b->jindex == NULL) {
			return pp_err(err, errlen, PP_ENOMEM, "out of memory");
		}
		size_t keys = 3 * (size_t)b->v * (size_t)b->micro;
		for (int s = 0; s < b->p; s++) {
			if (sim_schedule_jobs(c->schedule, b->p, b->v, b->micro, s, &b->jobs[s], &b->njobs[s]) != 0 ||
			    (b->jindex[s] = malloc(keys * sizeof(int32_t))) == NULL) {
				return pp_err(err, errlen, PP_ENOMEM, "out of memory");
			}
			for (size_t k = 0; k < keys; k++)
				b->jindex[s][k] = -1;
			for (size_t k = 0; k < b->njobs[s]; k++) {
				const job *jb = &b->jobs[s][k];
				b->jindex[s][jkey(b, jb->type, jb->chunk, jb->mb)] = (int32_t)k;
			}
			if (b->njobs[s] > b->maxjobs)
				b->maxjobs = b->njobs[s];
		}
		int maxl = 0;
		for (int s = 0; s < b->p; s++)
			if (sim_stage_layers(m, c, s) > maxl)
				maxl = sim_stage_layers(m, c, s);
		b->maxlayers = maxl;
		b->jfirst = malloc((size_t)b->nranks * b->maxjobs * sizeof *b->jfirst);
		b->jlast = malloc((size_t)b->nranks * b->maxjobs * sizeof *b->jlast);
		b->gready = malloc((size_t)b->nranks * (size_t)maxl * sizeof *b->gready);
		b->ready = malloc((size_t)(b->ninst * b->tpm) * sizeof *b->ready);
		if (b->jfirst == NULL || b->jlast == NULL || b->gready == NULL || b->ready == NULL) {
			return pp_err(err, errlen, PP_ENOMEM, "out of memory");
		}
		for (size_t k = 0; k < (size_t)b->nranks * (size_t)maxl; k++)
			b->gready[k] = -1;
		size_t njobs = 0, at = 0;
		for (int s = 0; s < b->p; s++)
			njobs += b->njobs[s];
		if (b->flog != NULL && (b->flog_at = malloc((njobs + 2) * FL_N * sizeof *b->flog_at)) == NULL)
			return pp_err(err, errlen, PP_ENOMEM, "out of memory");
		/* stamping (see there); without its journals every job is built as usual */
		if (b->rec == NULL && !c->no_stamp && c->zero < 2 && b->ninst * b->tpm <= JR_RANKS)
			b->jt = calloc((size_t)b->p * 3 * (size_t)b->v, sizeof *b->jt);
		/* pass 1 */
		for (int s = 0; s < b->p; s++)
			for (size_t k = 0; k < b->njobs[s]; k++) {
				note_flops(b, at++);
				emit_job(b, s, k, &b->jobs[s][k]);
			}
		note_flops(b, at++);
		pass_pipeline(b);
		pass_grads(b);
		note_flops(b, at);
	}
	if (sim_engine_over_limit(b->e))
		return too_many_ops(b, err, errlen);
	if (b->oom || (b->rec && sim_rec_failed(b->rec)))
		return pp_err(err, errlen, PP_ENOMEM, "out of memory while building the op graph");
	return rc;
}

/* How many ops of each tag kind the full mode makes for one its symmetric graph makes: a
 * rank's own ops on every simulated rank, an instance's TP collectives and pipeline transfers
 * once per instance, a side exchange once per group of instances, a data-parallel collective
 * once per TP member (once for a CNN, whose buckets span every rank). */
static double
full_per_symmetric(const bld *f, int kind)
{
	const sim_train_cfg *c = f->c;
	double inst = (double)f->ninst, tpm = (double)f->tpm;
	switch (kind) {
	case TAG_TP: case TAG_PP_FWD: case TAG_PP_BWD:
		return inst;
	case TAG_CP:
		return inst / (double)c->cp * tpm;
	case TAG_EP:
		return inst * tpm / (double)c->ep;
	case TAG_ETP:
		return inst * tpm / (double)sim_train_etp(c);
	case TAG_DP:
		return f->t ? tpm * (double)f->pl.repl : 1.0;
	case TAG_ZERO_AG: case TAG_ZERO_RS:
		return tpm * (double)f->pl.repl;
	case TAG_DPR: /* one per position in a shard group */
		return tpm * (double)f->pl.grad;
	default: /* compute, marks, the embedding sync and parameter gather of each rank */
		return inst * tpm;
	}
}

int
sim_train_census(const model *m, const hw_cost *cost, const sim_train_cfg *cin, double *ops, char *err,
		 size_t errlen)
{
	*ops = 0.0;
	sim_train_cfg cfg = *cin;
	int rc = sim_train_check(m, hw_cost_system(cost), &cfg, err, errlen);
	if (rc != 0)
		return rc;
	/* the full mode's shape, for the multipliers */
	cfg.full = true;
	bld f;
	memset(&f, 0, sizeof f);
	f.cost = cost;
	if ((rc = shape(&f, m, &cfg, err, errlen)) != 0)
		return rc;
	sim_train_cfg sc = cfg;
	sc.full = false;
	sc.trace = sc.record_ops = false;
	sc.straggler = 1.0;
	bld b;
	memset(&b, 0, sizeof b);
	b.cost = cost;
	if ((rc = shape(&b, m, &sc, err, errlen)) != 0)
		return rc;
	if (surely_too_many(&b)) {
		*ops = INFINITY;
		return 0;
	}
	memset(&b, 0, sizeof b);
	rc = build(&b, m, cost, &sc, 0, 0, err, errlen);
	if (rc == 0) {
		double n = 0.0;
		int32_t nops = sim_engine_ops(b.e);
		for (int32_t i = 0; i < nops; i++)
			n += full_per_symmetric(&f, (int)(sim_op_tag(b.e, i) >> 26));
		*ops = n;
	} else if (b.e != NULL && sim_engine_over_limit(b.e)) {
		*ops = INFINITY;
		rc = 0;
	}
	bld_free(&b);
	sim_engine_free(b.e);
	sim_rec_free(b.rec);
	return rc;
}

/* ---- folding the steady state -------------------------------------------------------------- *
 *
 * In the symmetric mode a 1F1B or interleaved step of M micro-batches repeats itself: past the
 * pipeline's warm-up every stage holds a bounded number of micro-batches in flight, and every
 * group of g more micro-batches (g = 1 for 1F1B, pp for the interleaved schedule, which takes
 * them a group of pp at a time) adds the same events in the same order; the engine's clock
 * counts whole picoseconds, so each group adds exactly the same times.  The step is simulated
 * at small counts m, m + g, m + 2g, ... (m = pp + 1 for 1F1B, past its warm-up; 2 pp for the
 * interleaved schedule); as soon as two groups in a row added exactly the same -- to the step's
 * end, its events and ops, and every time of every simulated rank, to the picosecond -- the
 * step of M is the last small step plus its (M - m') / g missing groups.  The FLOP counts are
 * doubles, whose sums depend on their order: they are added again in the order the whole graph
 * adds them, from the last small step's log of what each job added.  Where no two groups agree
 * before the small steps have cost half of the whole step (three quarters while their
 * disagreement shrinks geometrically; the first three are run where they cost at most three
 * quarters: GPT-3's interleaved step of 96 micro-batches on PP 8 agrees in its first window, at
 * 72), every micro-batch is simulated; and wherever something may run ahead of the schedule
 * without bound, whose queue can grow until the step's pattern changes far past any small step.  GPipe
 * and ZB-H1 are never folded (GPipe runs every forward before any backward; a GPT-3 GPipe
 * step's groups agreed to the picosecond from 8 to 76 micro-batches, then shortened by
 * microseconds).  ZeRO-2 and 3 reduce-scatter every micro-batch's gradients and nothing waits
 * for them: folded only where none of them had to wait for its stream in the small steps (a
 * ZeRO-2 MoE step whose reduce-scatter stream was busy from its first to its last, a queue that
 * never emptied, agreed from 3 to 5 micro-batches; its 32 took 19 us longer than they
 * foretold), except where ZeRO-3's reduce-scatters share the gathers' stream (dp_one_stream),
 * which the compute waits for.  Elsewhere every stream is held by the schedule: a stage waits
 * for its next stage's backward before its next forward, and the TP, CP and EP exchanges for
 * the blocks they feed.  Folded or not, the result is the same to the bit (tests/check_sim.c, fold_is_exact;
 * every training row of validate, and 680 random configurations, compared with the build
 * before). */

/* What the metrics read of a simulated step: when it ended, the events and ops, each simulated
 * rank's times and the builder's FLOP counts. */
typedef struct run_sum {
	int64_t now, events, ops;
	size_t engine_bytes;
	double flops[FL_N];
	sim_rank_stats *st; /* [nranks] */
	int64_t stamped;
} run_sum;

static int
sum_run(const bld *b, run_sum *s)
{
	s->now = sim_engine_now(b->e);
	s->events = sim_engine_events(b->e);
	s->ops = sim_engine_ops(b->e);
	s->stamped = b->stamped;
	s->engine_bytes = sim_engine_bytes(b->e);
	memcpy(s->flops, b->flops, sizeof s->flops);
	if ((s->st = malloc((size_t)b->nranks * sizeof *s->st)) == NULL)
		return PP_ENOMEM;
	for (int rk = 0; rk < b->nranks; rk++)
		sim_engine_rank_stats(b->e, rk, &s->st[rk]);
	return 0;
}

/* x = z + n (z - y) where z - y = y - x: 1, or 0 where the two differences disagree, -1 where
 * the result would overflow. */
static int
extend(int64_t x, int64_t y, int64_t z, int64_t n, int64_t *out)
{
	int64_t d = z - y, nd;
	if (y - x != d)
		return 0;
	return __builtin_mul_overflow(n, d, &nd) || __builtin_add_overflow(z, nd, out) ? -1 : 1;
}

/* How far the differences z - y and y - x are apart (INT64_MAX where that overflows). */
static int64_t
gap(int64_t x, int64_t y, int64_t z)
{
	int64_t a, b, d;
	if (__builtin_sub_overflow(z, y, &a) || __builtin_sub_overflow(y, x, &b) || __builtin_sub_overflow(a, b, &d) ||
	    d == INT64_MIN)
		return INT64_MAX;
	return d < 0 ? -d : d;
}

static int64_t
max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* The largest gap() of a window's step ends, events, ops and every time of every rank. */
static int64_t
window_gap(const run_sum *s, int nranks)
{
	int64_t g = gap(s[0].now, s[1].now, s[2].now);
	g = max64(g, gap(s[0].events, s[1].events, s[2].events));
	g = max64(g, gap(s[0].ops, s[1].ops, s[2].ops));
	for (int rk = 0; rk < nranks; rk++) {
		const sim_rank_stats *x = &s[0].st[rk], *y = &s[1].st[rk], *z = &s[2].st[rk];
		g = max64(g, gap(x->busy_ps, y->busy_ps, z->busy_ps));
		g = max64(g, gap(x->comm_ps, y->comm_ps, z->comm_ps));
		g = max64(g, gap(x->idle_ps, y->idle_ps, z->idle_ps));
		g = max64(g, gap(x->end_ps, y->end_ps, z->end_ps));
		for (int k = 0; k < HW_NPROV; k++)
			g = max64(g, gap(x->prov_ps[k], y->prov_ps[k], z->prov_ps[k]));
	}
	return g;
}

/* The verdict over several extend() results: 0 where any disagrees, else -1 where any
 * overflows, else 1. */
static int
agreement(const int *r, size_t n)
{
	int a = 1;
	for (size_t i = 0; i < n; i++) {
		if (r[i] == 0)
			return 0;
		if (r[i] < 0)
			a = -1;
	}
	return a;
}

/* The same over every time of a rank. */
static int
extend_stats(const sim_rank_stats *x, const sim_rank_stats *y, const sim_rank_stats *z, int64_t n, sim_rank_stats *out)
{
	int r[4 + HW_NPROV] = {
		extend(x->busy_ps, y->busy_ps, z->busy_ps, n, &out->busy_ps),
		extend(x->comm_ps, y->comm_ps, z->comm_ps, n, &out->comm_ps),
		extend(x->idle_ps, y->idle_ps, z->idle_ps, n, &out->idle_ps),
		extend(x->end_ps, y->end_ps, z->end_ps, n, &out->end_ps),
	};
	for (int k = 0; k < HW_NPROV; k++)
		r[4 + k] = extend(x->prov_ps[k], y->prov_ps[k], z->prov_ps[k], n, &out->prov_ps[k]);
	return agreement(r, sizeof r / sizeof r[0]);
}

/* Adds log entries [from, to) of each count to acc, in order. */
static void
replay_flops(const flop_log *log, const size_t *from, const size_t *to, double *acc)
{
	for (int k = 0; k < FL_N; k++)
		for (size_t i = from[k]; i < to[k]; i++)
			acc[k] += log[k].v[i];
}

/* The FLOP counts of the whole step of `micro` micro-batches from b, a smaller step built with
 * its log: every job of a stage adds what the small step's jobs of its kind (forward, backward
 * or weight gradients of its chunk) added, each of which must have added the same. */
static bool
whole_flops(const bld *b, const sim_train_cfg *c, int64_t micro, double *acc)
{
	const size_t *at = b->flog_at;
	size_t nj = 0;
	for (int s = 0; s < b->p; s++)
		nj += b->njobs[s];
	memset(acc, 0, FL_N * sizeof *acc);
	size_t zero[FL_N] = {0};
	replay_flops(b->flog, zero, &at[0], acc); /* anything counted before the first job */
	size_t base = 0;
	int ncls = 3 * b->v;
	for (int s = 0; s < b->p; s++) {
		size_t rep[3 * 64];
		if (ncls > 3 * 64)
			return false;
		for (int k = 0; k < ncls; k++)
			rep[k] = SIZE_MAX;
		for (size_t j = 0; j < b->njobs[s]; j++) {
			const job *jb = &b->jobs[s][j];
			size_t i = base + j, *r = &rep[jb->type * b->v + jb->chunk];
			if (*r == SIZE_MAX) {
				*r = i;
				continue;
			}
			for (int k = 0; k < FL_N; k++) {
				size_t n = at[(i + 1) * FL_N + k] - at[i * FL_N + k];
				if (n != at[(*r + 1) * FL_N + k] - at[*r * FL_N + k] ||
				    memcmp(&b->flog[k].v[at[i * FL_N + k]], &b->flog[k].v[at[*r * FL_N + k]], n * sizeof(double)) != 0)
					return false;
			}
		}
		job *full;
		size_t nfull;
		if (sim_schedule_jobs(c->schedule, b->p, b->v, micro, s, &full, &nfull) != 0)
			return false;
		for (size_t j = 0; j < nfull; j++) {
			size_t r = rep[full[j].type * b->v + full[j].chunk];
			if (r == SIZE_MAX) {
				free(full);
				return false;
			}
			replay_flops(b->flog, &at[r * FL_N], &at[(r + 1) * FL_N], acc);
		}
		free(full);
		base += b->njobs[s];
	}
	replay_flops(b->flog, &at[nj * FL_N], &at[(nj + 1) * FL_N], acc); /* the transfers, gradients, optimizer */
	return true;
}

/* Builds and runs a small step of `micro` micro-batches into b (kept, with its FLOP log, for
 * whole_flops) and *s. */
static bool
small_step(const model *m, const hw_cost *cost, const sim_train_cfg *c, int64_t micro, int nranks, bld *b, run_sum *s)
{
	memset(b, 0, sizeof *b);
	if ((b->flog = calloc(FL_N, sizeof *b->flog)) == NULL)
		return false;
	char err[256];
	bool ok = build(b, m, cost, c, micro, 0, err, sizeof err) == 0 && sim_run(b->e, err, sizeof err) == 0 &&
		  b->nranks == nranks && sum_run(b, s) == 0;
	/* ZeRO-2 and 3 reduce-scatter every micro-batch's gradients and nothing waits for them:
	 * where one of them queued behind another, their queue may grow without bound.  Not so
	 * where ZeRO-3's reduce-scatters queue with its gathers (dp_one_stream), which the compute
	 * waits for: a backlog there holds up the backward, and the small steps agree only where
	 * it repeats itself */
	bool one = c->dp_one_stream;
	for (int rk = 0; ok && c->zero >= 2 && !(one && c->zero >= 3) && rk < b->nranks; rk++)
		ok = !sim_stream_waited(b->e, one ? b->r[rk].dp : b->r[rk].dprs);
	sim_engine_free(b->e);
	b->e = NULL;
	return ok;
}

static void
small_free(bld *b)
{
	if (b->flog != NULL)
		for (int k = 0; k < FL_N; k++)
			free(b->flog[k].v);
	free(b->flog);
	bld_free(b);
	sim_engine_free(b->e);
	sim_rec_free(b->rec);
	memset(b, 0, sizeof *b);
}

/* The step of a symmetric configuration of `micro` micro-batches on nranks simulated ranks,
 * folded (see above) into *out: true, or false where it does not fold.  Where two groups agree
 * but the whole step would pass the clock or the op limit, it does not fold either: simulated
 * whole, the step stops and says why. */
static bool
fold_steady(const model *m, const hw_cost *cost, const sim_train_cfg *c, int64_t micro, int nranks, run_sum *out)
{
	/* the interleaved schedule takes micro-batches a group of pp at a time, from about two
	 * groups in; 1F1B one at a time, from its pp - 1 warm-up forwards */
	bool il = c->schedule == SIM_INTERLEAVED;
	int64_t g = il ? c->pp : 1, first = il ? 2 * c->pp : c->pp + 1, spent = 0;
	if (3 * first + 3 * g > micro / 4 * 3)
		return false;
	run_sum s[3];
	memset(s, 0, sizeof s);
	bld last;
	memset(&last, 0, sizeof last);
	int agree = 0;
	/* k counts the small steps of the current window of consecutive counts mk - 2g, mk - g, mk.
	 * After WINDOW_SLIDES windows that disagree, their disagreement not dying out (below), the
	 * next window starts at twice the count: a transient that dies out geometrically with the
	 * micro-batches (a stage with slack whose communication and slowed compute settle into
	 * their phase a little more each micro-batch) is gone, to the picosecond, sooner at twice
	 * the count than one micro-batch further on */
	enum { WINDOW_SLIDES = 2 };
	int64_t k = 0, mk = first, slides = 0, last_gap = INT64_MAX, stamped = 0;
	int64_t budget = 3 * first + 3 * g > micro / 2 ? 3 * first + 3 * g : micro / 2; /* the first window */
	while (agree == 0 && spent + mk <= budget) {
		free(s[0].st);
		s[0] = s[1];
		s[1] = s[2];
		memset(&s[2], 0, sizeof s[2]);
		spent += mk;
		small_free(&last);
		if (!small_step(m, cost, c, mk, nranks, &last, &s[2]))
			break;
		stamped += s[2].stamped;
		int64_t at = mk;
		mk += g;
		if (++k < 3)
			continue;
		/* a window whose disagreement shrank eightfold from the one before, or is down to a
		 * picosecond of the clock's rounding, is a transient dying out: the small steps may
		 * then cost up to 3/4 of the whole step (a Llama-3-70B interleaved step of 512
		 * micro-batches agrees from 56 to 72, past half of it), and the window slides on */
		int64_t gp = window_gap(s, nranks), prev = last_gap;
		bool dying = gp <= 1 || (prev != INT64_MAX && gp <= prev / 8);
		last_gap = gp;
		budget = dying ? micro / 4 * 3 : micro / 2;
		if (!dying && ++slides >= WINDOW_SLIDES)
			mk = 2 * at, k = 0, slides = 0, last_gap = INT64_MAX;
		if (dying && gp > 1 && prev != INT64_MAX) {
			/* shrinking by prev / gp a group, it is gone in about log(gp) / log(prev / gp)
			 * groups: the window ending one group later is the first likely to agree, and the
			 * counts before it need not run (70B: from 40 micro-batches straight to 56, 64
			 * and 72) */
			int64_t more = (int64_t)ceil(log((double)gp) / log((double)prev / (double)gp));
			int64_t end = at + (more + 1) * g;
			if (more > 2 && more < micro && end - 2 * g > mk && spent + 3 * end - 3 * g <= budget)
				mk = end - 2 * g, k = 0;
		}
		if (gp != 0)
			continue; /* some increment differs: no agreement to extend */
		int64_t n = (micro - at) / g;
		int r[3] = {extend(s[0].now, s[1].now, s[2].now, n, &out->now),
			    extend(s[0].events, s[1].events, s[2].events, n, &out->events),
			    extend(s[0].ops, s[1].ops, s[2].ops, n, &out->ops)};
		agree = agreement(r, 3);
		if (agree == 0)
			continue;
		if ((out->st = malloc((size_t)nranks * sizeof *out->st)) == NULL) {
			agree = -1;
			break;
		}
		for (int rk = 0; agree != 0 && rk < nranks; rk++) {
			int v[2] = {agree, extend_stats(&s[0].st[rk], &s[1].st[rk], &s[2].st[rk], n, &out->st[rk])};
			agree = agreement(v, 2);
		}
		if (agree != 1) {
			free(out->st);
			out->st = NULL;
		}
	}
	bool ok = agree == 1 && out->now < SIM_CLOCK_MAX_PS && out->ops <= (int64_t)SIM_MAX_OPS &&
		  whole_flops(&last, c, micro, out->flops);
	if (ok)
		out->engine_bytes = s[2].engine_bytes, out->stamped = stamped;
	else if (agree == 1) {
		free(out->st);
		out->st = NULL;
	}
	small_free(&last);
	for (int i = 0; i < 3; i++)
		free(s[i].st);
	return ok;
}

int
sim_train(const model *m, const hw_cost *cost, const sim_train_cfg *cin, sim_train_result **out, char *err,
	  size_t errlen)
{
	*out = NULL;
	sim_train_cfg cfg = *cin;
	const hw_system *sys = hw_cost_system(cost);
	int rc = sim_train_check(m, sys, &cfg, err, errlen);
	if (rc != 0)
		return rc;
	const sim_train_cfg *c = &cfg;
	size_t reserve = 0;
	bld b;
	memset(&b, 0, sizeof b);
	b.cost = cost;
	if ((rc = shape(&b, m, c, err, errlen)) != 0)
		return rc;
	if (surely_too_many(&b))
		return too_many_ops(&b, err, errlen);
	if (c->full) {
		/* The full mode's ops are counted before any is made, from the symmetric graph (a
		 * thousandth of the work): a graph over SIM_MAX_OPS is refused at once, instead of after
		 * building it to the limit (1.7 s and 2.1 GiB for one of Llama-3-405B's), and one under
		 * it is built into arrays of its size. */
		double n;
		if ((rc = sim_train_census(m, cost, c, &n, err, errlen)) != 0)
			return rc;
		if (n > SIM_MAX_OPS)
			return too_many_ops(&b, err, errlen);
		reserve = (size_t)n;
	}
	sim_train_result *res = NULL;
	run_sum sum;
	memset(&sum, 0, sizeof sum);
	bool folded = !c->full && !c->trace && !c->record_ops && !c->no_fold && b.t != NULL &&
		      (c->schedule == SIM_1F1B || c->schedule == SIM_INTERLEAVED) &&
		      fold_steady(m, cost, c, b.micro, b.nranks, &sum);
	if (!folded) {
		memset(&b, 0, sizeof b);
		if ((rc = build(&b, m, cost, c, 0, reserve, err, errlen)) != 0 || (rc = sim_run(b.e, err, errlen)) != 0)
			goto fail;
		if (sum_run(&b, &sum) != 0) {
			rc = pp_err(err, errlen, PP_ENOMEM, "out of memory");
			goto fail;
		}
	}
	if ((res = calloc(1, sizeof *res)) == NULL) {
		rc = pp_err(err, errlen, PP_ENOMEM, "out of memory");
		goto fail;
	}

	/* ---- metrics ---- */
	res->cfg = cfg;
	res->engine = b.e;
	b.e = NULL;
	res->rec = b.rec;
	b.rec = NULL;
	res->ninst = b.ninst;
	res->tpm = b.tpm;
	res->transformer = b.t != NULL;
	res->nranks = b.nranks;
	pp_strlcpy(res->model, model_name(m), sizeof res->model);
	pp_strlcpy(res->system, sys->name, sizeof res->system);
	res->dtype = c->dtype;
	res->peak_tflops = sys->gpu.peak_tflops[c->dtype];
	res->seq = b.t ? sim_seq(m, c) : 1;
	sim_metrics *mt = &res->m;
	double step = (double)sum.now * 1e-12;
	mt->step_time_s = step;
	res->stamped = sum.stamped;
	sim_interval(c->fw, step, &mt->step_lo_s, &mt->step_hi_s);
	mt->stages = b.p;
	double tokens = (double)c->global_batch * (double)res->seq;
	mt->samples_per_s = step > 0 ? (double)c->global_batch / step : 0.0;
	mt->tokens_per_s = step > 0 ? tokens / step : 0.0;
	mt->tokens_per_s_per_gpu = mt->tokens_per_s / (double)c->gpus;
	if (b.t) {
		mt->model_flops = model_flops_train_per_token(m, res->seq) * tokens;
		sim_ft_totals_get(m, c, &res->ft);
		if (c->lora_rank > 0 || c->sample_len > 0) /* no base weight gradients, attention within samples */
			mt->model_flops = res->ft.flops_per_token * tokens;
		/* what ran: FL_STAGE and FL_RECOMP count the layers of one rank group per stage
		 * (add_flops runs once per layer, whatever the number of simulated instances), scaled
		 * up to every rank of the step (each stage instance and TP member does the same work);
		 * FL_OP counts every simulated rank's compute ops */
		double ranks = (double)c->dp * (double)c->cp * (double)c->tp;
		mt->hardware_flops = sum.flops[FL_STAGE] * ranks;
		mt->executed_flops = sum.flops[FL_OP] / (double)(b.ninst * b.tpm) * ranks;
		/* the simulated layers count the attention with the causal half; the model count uses
		 * the full matrix (the published convention): keep hardware >= model for recompute */
		if (c->recompute == SIM_RECOMPUTE_NONE)
			mt->hardware_flops = mt->model_flops;
		else
			mt->hardware_flops = mt->model_flops + sum.flops[FL_RECOMP] * ranks;
	} else {
		mt->model_flops = 3.0 * model_cnn_flops_per_sample(m) * (double)c->global_batch;
		mt->hardware_flops = mt->model_flops;
		mt->executed_flops = sum.flops[FL_OP] / (double)b.ninst * (double)c->dp;
	}
	double peak = res->peak_tflops * 1e12;
	mt->model_tflops_per_gpu = step > 0 ? mt->model_flops / step / (double)c->gpus / 1e12 : 0.0;
	mt->hardware_tflops_per_gpu = step > 0 ? mt->hardware_flops / step / (double)c->gpus / 1e12 : 0.0;
	mt->mfu = peak > 0 ? mt->model_tflops_per_gpu * 1e12 / peak : 0.0;
	mt->hfu = peak > 0 ? mt->hardware_tflops_per_gpu * 1e12 / peak : 0.0;
	/* An impossible result is refused with what is wrong, never printed as an answer: a step
	 * that is not a positive finite time, or more work per second than the GPUs' peak. */
	if (!(step > 0) || !isfinite(step) || !isfinite(mt->tokens_per_s) || !(mt->mfu <= 1.0) || !(mt->hfu <= 1.0)) {
		rc = pp_err(err, errlen, PP_ERANGE,
			    "the simulation gave an impossible result (step %.6g s, MFU %.1f%%, HFU %.1f%% of the GPU's %.6g "
			    "TFLOP/s peak): it is not printed; please report the command",
			    step, 100.0 * mt->mfu, 100.0 * mt->hfu, res->peak_tflops);
		goto fail;
	}
	double idle = 0.0, comm = 0.0, busy_max = 0.0, prov[HW_NPROV] = {0}, prov_tot = 0.0;
	for (int rk = 0; rk < b.nranks; rk++) {
		const sim_rank_stats st = sum.st[rk];
		idle += (double)st.idle_ps * 1e-12;
		comm += (double)st.comm_ps * 1e-12;
		if ((double)st.busy_ps * 1e-12 > busy_max)
			busy_max = (double)st.busy_ps * 1e-12;
		for (int k = 0; k < HW_NPROV; k++) {
			prov[k] += (double)st.prov_ps[k];
			prov_tot += (double)st.prov_ps[k];
		}
	}
	mt->bubble_fraction = step > 0 ? idle / (double)b.nranks / step : 0.0;
	mt->exposed_comm_s = comm / (double)b.nranks;
	mt->compute_s = busy_max;
	for (int k = 0; k < HW_NPROV; k++)
		mt->prov_share[k] = prov_tot > 0 ? prov[k] / prov_tot : 0.0;
	mt->events = sum.events;
	mt->ops = sum.ops;
	mt->engine_bytes = sum.engine_bytes;
	res->mem = calloc((size_t)b.p, sizeof *res->mem);
	if (res->mem == NULL) {
		rc = pp_err(err, errlen, PP_ENOMEM, "out of memory");
		goto fail;
	}
	mt->fits = true;
	for (int s = 0; s < b.p; s++) {
		sim_train_memory(m, sys, c, s, &res->mem[s]);
		if (!res->mem[s].fits)
			mt->fits = false;
	}
	if (!c->trace && !c->record_ops) {
		sim_engine_free(res->engine);
		res->engine = NULL;
	}
	bld_free(&b);
	free(sum.st);
	*out = res;
	return 0;
fail:
	bld_free(&b);
	free(sum.st);
	sim_engine_free(b.e);
	sim_rec_free(b.rec);
	sim_train_result_free(res);
	return rc;
}

const sim_metrics *
sim_train_metrics(const sim_train_result *r)
{
	return &r->m;
}

int64_t
sim_train_jobs_stamped(const sim_train_result *r)
{
	return r->stamped;
}

const sim_mem *
sim_train_stage_memory(const sim_train_result *r, int stage)
{
	return stage >= 0 && stage < r->m.stages ? &r->mem[stage] : NULL;
}

void
sim_train_result_free(sim_train_result *r)
{
	if (r == NULL)
		return;
	sim_engine_free(r->engine);
	sim_rec_free(r->rec);
	free(r->mem);
	free(r->stage_of_rank);
	free(r);
}
