/*
 * oplist.c -- the op list of one rank, read out of the graph the simulator built and ran: what
 * 'paraplan replay' executes on GPUs and what its --dry-run prints.
 *
 * The recorder (sim_rec) is filled by the builders while cfg.record_ops is set: layer.c notes
 * every kernel it prices into the kernel list of the segment it adds it to, and train.c notes for
 * every engine op what it is (which kernel list a compute op runs, which group and how many
 * bytes a collective moves, which stages a pipeline transfer links).  Nothing else changes: the
 * engine runs the same graph with the same durations whether or not a recorder is attached.
 *
 * A rank's view (sim_train_rank_ops) then takes the ops of its simulated rank's streams in
 * program order, keeps the dependencies among them (a dependency on another rank's op is
 * what a collective or a send/recv realizes on real hardware), and orders them for launching:
 * every op after its stream predecessor and the ops it waits for, ties broken by the simulated
 * start time.  The groups and peers are those of the global rank asked for, placed as Megatron-LM
 * places them (TP fastest, then CP, DP, PP), which is what sim_place assumes for link sharing.
 */
#include "config.h"
#include "sim/train_int.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- names --------------------------------------------------------------------------------- */

const char *
sim_weight_name(sim_weight w)
{
	static const char *const n[SIM_NWEIGHTS] = {
		"none", "qkv", "q_down", "q_up", "kv_down", "kv_up", "proj", "fc1", "fc2", "router", "expert_fc1",
		"expert_fc2", "shared_fc1", "shared_fc2", "mlm", "head", "conv", "fc", "ssm_in", "ssm_out",
		"lora_a", "lora_b",
	};
	return (unsigned)w < SIM_NWEIGHTS ? n[w] : "?";
}

const char *
sim_group_name(sim_group g)
{
	static const char *const n[SIM_NGROUPS] = {"tp", "cp", "ep", "dp", "edp", "pp", "emb", "etp", "dpr"};
	return (unsigned)g < SIM_NGROUPS ? n[g] : "?";
}

const char *
sim_stream_name(int s)
{
	static const char *const n[SIM_NSTREAMS] = {"compute", "tp", "cp", "ep", "dp", "dp_rs",
						    "pp_send_fwd", "pp_recv_fwd", "pp_send_bwd", "pp_recv_bwd"};
	return s >= 0 && s < SIM_NSTREAMS ? n[s] : "?";
}

const char *
sim_opkind_name(sim_opkind k)
{
	static const char *const n[] = {"compute", "collective", "send", "recv", "mark"};
	return (unsigned)k <= SIM_OP_MARK ? n[k] : "?";
}

const char *
sim_op_label(uint32_t tag, char *buf, size_t n)
{
	return sim_tag_name(tag, buf, n);
}

/* ---- the recorder -------------------------------------------------------------------------- */

typedef struct klist {
	sim_kernel *k;
	size_t n, cap;
} klist;

typedef struct kcat {
	int32_t in[4], out;
} kcat;

enum { REC_NONE = 255 };

struct sim_rec {
	klist *lists;
	size_t nlists, listcap;
	kcat *cats;
	size_t ncats, catcap;
	sim_oprec *ops; /* indexed by engine op id */
	size_t nops, opcap;
	int nranks;
	int *streams; /* [rank][SIM_NSTREAMS] */
	int *where;   /* [rank][3]: stage, instance, TP member */
	bool failed;
};

sim_rec *
sim_rec_new(int nranks)
{
	sim_rec *r = calloc(1, sizeof *r);
	if (r == NULL)
		return NULL;
	r->nranks = nranks;
	r->streams = malloc((size_t)nranks * SIM_NSTREAMS * sizeof *r->streams);
	r->where = malloc((size_t)nranks * 3 * sizeof *r->where);
	if (r->streams == NULL || r->where == NULL) {
		sim_rec_free(r);
		return NULL;
	}
	for (size_t i = 0; i < (size_t)nranks * SIM_NSTREAMS; i++)
		r->streams[i] = -1;
	return r;
}

void
sim_rec_free(sim_rec *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->nlists; i++)
		free(r->lists[i].k);
	free(r->lists);
	free(r->cats);
	free(r->ops);
	free(r->streams);
	free(r->where);
	free(r);
}

bool
sim_rec_failed(const sim_rec *r)
{
	return r->failed;
}

int32_t
sim_rec_list(sim_rec *r)
{
	if (r->nlists >= INT32_MAX || PP_GROW(r->lists, r->listcap, r->nlists + 1) != 0) {
		r->failed = true;
		return -1;
	}
	memset(&r->lists[r->nlists], 0, sizeof r->lists[0]);
	return (int32_t)r->nlists++;
}

void
sim_rec_kernel(sim_rec *r, int32_t list, const sim_kernel *k)
{
	if (list < 0 || (size_t)list >= r->nlists)
		return;
	klist *l = &r->lists[list];
	if (PP_GROW(l->k, l->cap, l->n + 1) != 0) {
		r->failed = true;
		return;
	}
	/* field by field over zeros: the padding too is defined (op lists travel as bytes) */
	sim_kernel *d = &l->k[l->n++];
	memset(d, 0, sizeof *d);
	const hw_kernel *a = &k->hk;
	hw_kernel *z = &d->hk;
	z->kind = a->kind, z->dtype = a->dtype;
	z->m = a->m, z->n = a->n, z->k = a->k, z->batch = a->batch, z->wbytes = a->wbytes;
	z->impl = a->impl;
	z->b = a->b, z->heads = a->heads, z->kv_heads = a->kv_heads, z->sq = a->sq, z->sk = a->sk;
	z->dqk = a->dqk, z->dv = a->dv, z->density = a->density, z->kvbytes = a->kvbytes, z->bwd = a->bwd;
	z->kv_latent = a->kv_latent;
	z->bytes = a->bytes;
	d->weight = k->weight;
	d->pass = k->pass;
	d->layer = k->layer;
}

void
sim_rec_append(sim_rec *r, int32_t dst, int32_t src)
{
	if (dst < 0 || src < 0 || (size_t)dst >= r->nlists || (size_t)src >= r->nlists)
		return;
	/* index, not pointer: the source may be the destination and growing may move it */
	for (size_t i = 0, n = r->lists[src].n; i < n; i++) {
		sim_kernel k;
		memcpy(&k, &r->lists[src].k[i], sizeof k);
		sim_rec_kernel(r, dst, &k);
	}
}

int32_t
sim_rec_concat(sim_rec *r, int32_t a, int32_t b, int32_t c, int32_t d)
{
	int32_t in[4] = {a, b, c, d};
	for (size_t i = 0; i < r->ncats; i++)
		if (!memcmp(r->cats[i].in, in, sizeof in))
			return r->cats[i].out;
	int32_t out = sim_rec_list(r);
	if (out < 0 || PP_GROW(r->cats, r->catcap, r->ncats + 1) != 0) {
		r->failed = true;
		return -1;
	}
	for (int i = 0; i < 4; i++)
		sim_rec_append(r, out, in[i]);
	memcpy(r->cats[r->ncats].in, in, sizeof in);
	r->cats[r->ncats++].out = out;
	return out;
}

void
sim_rec_op(sim_rec *r, int32_t op, const sim_oprec *info)
{
	if (op < 0)
		return;
	size_t need = (size_t)op + 1;
	if (need > r->nops) {
		if (PP_GROW(r->ops, r->opcap, need) != 0) {
			r->failed = true;
			return;
		}
		for (size_t i = r->nops; i < need; i++)
			r->ops[i].what = REC_NONE;
		r->nops = need;
	}
	r->ops[op] = *info;
}

void
sim_rec_rank(sim_rec *r, int rk, const int *streams, int stage, int inst, int tpm)
{
	if (rk < 0 || rk >= r->nranks)
		return;
	memcpy(&r->streams[(size_t)rk * SIM_NSTREAMS], streams, SIM_NSTREAMS * sizeof *streams);
	r->where[rk * 3] = stage;
	r->where[rk * 3 + 1] = inst;
	r->where[rk * 3 + 2] = tpm;
}

/* ---- ranks and groups ---------------------------------------------------------------------- */

void
sim_rank_coords(const sim_train_cfg *c, int rank, sim_coords *out)
{
	int r = rank;
	out->tp = r % c->tp;
	r /= c->tp;
	out->cp = r % c->cp;
	r /= c->cp;
	out->dp = r % c->dp;
	out->pp = r / c->dp;
	out->inst = out->dp * c->cp + out->cp;
}

/* The global rank of TP member j of instance inst of stage s. */
static int
global_of(const sim_train_cfg *c, int s, int inst, int j)
{
	return j + c->tp * (inst + c->cp * c->dp * s);
}

static int
etp_of(const sim_train_cfg *c)
{
	return sim_train_etp(c);
}

int
sim_group_size(const sim_train_cfg *c, sim_group g)
{
	int ep = c->ep > 0 ? c->ep : 1;
	switch (g) {
	case SIM_G_TP: return c->tp;
	case SIM_G_CP: return c->cp;
	case SIM_G_EP: return ep;
	case SIM_G_DP: return sim_dp_shard(c) * c->cp;
	case SIM_G_EDP: return c->tp * c->cp * c->dp / (etp_of(c) * ep) / sim_dp_replicas(c);
	case SIM_G_DPR: return sim_dp_replicas(c);
	case SIM_G_PP: return c->pp;
	case SIM_G_EMB: return c->pp > 1 ? 2 : 1;
	case SIM_G_ETP: return etp_of(c);
	default: return 1;
	}
}

/* The k-th member of a MoE group of a stage's rank `flat` (its index tp + TP (cp + CP dp) in the
 * stage): the groups fold etp fastest, then ep, then edp (sim.h); a group's members are `stride`
 * flat indexes apart. */
static int
fold_member(int flat, int stride, int size, int k)
{
	return flat - (flat / stride) % size * stride + k * stride;
}

int
sim_group_members(const sim_train_cfg *c, sim_group g, int rank, int *out, int cap)
{
	sim_coords co;
	sim_rank_coords(c, rank, &co);
	int n = sim_group_size(c, g);
	int stage = co.pp * c->tp * c->cp * c->dp, flat = rank - stage;
	int shard = sim_dp_shard(c) * c->cp; /* instances of a shard group (all, without hybrid sharding) */
	for (int k = 0; k < n && k < cap; k++) {
		int v;
		switch (g) {
		case SIM_G_TP: v = global_of(c, co.pp, co.inst, k); break;
		case SIM_G_CP: v = global_of(c, co.pp, co.dp * c->cp + k, co.tp); break;
		case SIM_G_EP: v = stage + fold_member(flat, etp_of(c), n, k); break;
		case SIM_G_ETP: v = stage + fold_member(flat, 1, n, k); break;
		case SIM_G_EDP: v = stage + fold_member(flat, etp_of(c) * (c->ep > 0 ? c->ep : 1), n, k); break;
		case SIM_G_DP: v = global_of(c, co.pp, co.inst - co.inst % shard + k, co.tp); break;
		case SIM_G_DPR: v = global_of(c, co.pp, k * shard + co.inst % shard, co.tp); break;
		case SIM_G_PP: v = global_of(c, k, co.inst, co.tp); break;
		case SIM_G_EMB: v = n == 1 ? rank : global_of(c, k == 0 ? 0 : c->pp - 1, co.inst, co.tp); break;
		default: v = rank; break;
		}
		out[k] = v;
	}
	return n;
}

/* ---- a rank's view ------------------------------------------------------------------------- */

const sim_train_cfg *
sim_train_config(const sim_train_result *r)
{
	return &r->cfg;
}

typedef struct ent {
	int32_t op;
	int stream;
	int32_t seq;
} ent;

static int
cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return x < y ? -1 : x > y;
}

/* Launch-order heap: (simulated start, engine op id). */
typedef struct hnode {
	int64_t t;
	int32_t op;
	size_t ent;
} hnode;

static bool
h_less(const hnode *a, const hnode *b)
{
	return a->t < b->t || (a->t == b->t && a->op < b->op);
}

static void
h_push(hnode *h, size_t *n, hnode v)
{
	size_t i = (*n)++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!h_less(&v, &h[p]))
			break;
		h[i] = h[p];
		i = p;
	}
	h[i] = v;
}

static hnode
h_pop(hnode *h, size_t *n)
{
	hnode top = h[0], last = h[--(*n)];
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		const hnode *best = &last;
		if (l < *n && h_less(&h[l], best)) {
			m = l;
			best = &h[l];
		}
		if (r < *n && h_less(&h[r], best))
			m = r;
		if (m == i)
			break;
		h[i] = h[m];
		i = m;
	}
	if (*n > 0)
		h[i] = last;
	return top;
}

/* Layers whose weights a kernel list of a layer op refers to (the op's layer). */
static bool
layer_weight(sim_weight w)
{
	return w != SIM_W_NONE && w != SIM_W_HEAD && w != SIM_W_MLM && w != SIM_W_CONV && w != SIM_W_CNN_FC;
}

void
sim_rank_ops_free(sim_rank_ops *o)
{
	if (o == NULL)
		return;
	free(o->ops);
	free(o->kernels);
	free(o->deps);
	free(o);
}

int
sim_train_rank_ops(const sim_train_result *r, int rank, sim_rank_ops **out, char *err, size_t errlen)
{
	*out = NULL;
	const sim_train_cfg *c = &r->cfg;
	const sim_rec *rec = r->rec;
	const sim_engine *e = r->engine;
	if (rec == NULL || e == NULL)
		return pp_err(err, errlen, PP_EUSAGE, "the simulation kept no op graph (set record_ops in the configuration)");
	if (rank < 0 || rank >= c->gpus)
		return pp_err(err, errlen, PP_EUSAGE, "rank %d is out of range: the configuration has %d ranks (0 .. %d)", rank,
			      c->gpus, c->gpus - 1);
	sim_coords co;
	sim_rank_coords(c, rank, &co);
	int stage = r->transformer ? co.pp : 0;
	int inst = r->ninst > 1 ? co.inst : 0, tpm = r->tpm > 1 ? co.tp : 0;
	int sr = (stage * r->ninst + inst) * r->tpm + tpm;
	if (sr < 0 || sr >= r->nranks)
		return pp_err(err, errlen, PP_EINPUT, "rank %d has no simulated rank", rank);

	int rc = PP_ENOMEM;
	sim_rank_ops *o = calloc(1, sizeof *o);
	ent *en = NULL;
	int32_t *sorted = NULL, *succ = NULL;
	size_t *pos = NULL, *order = NULL, *pending = NULL, *first_dep = NULL;
	hnode *heap = NULL;
	struct dep { size_t to, from; } *dv = NULL;
	size_t ne = 0, ndv = 0, dcap = 0, succcap = 64;
	if (o == NULL)
		goto fail;
	o->rank = rank;
	o->ranks = c->gpus;
	o->co = co;
	o->step_ps = sim_engine_now(e);

	/* 1. the rank's ops, stream by stream in program order */
	for (int s = 0; s < SIM_NSTREAMS; s++) {
		int st = rec->streams[(size_t)sr * SIM_NSTREAMS + s];
		if (st >= 0)
			ne += sim_stream_len(e, st);
	}
	en = malloc((ne ? ne : 1) * sizeof *en);
	sorted = malloc((ne ? ne : 1) * sizeof *sorted);
	succ = malloc(succcap * sizeof *succ);
	if (en == NULL || sorted == NULL || succ == NULL)
		goto fail;
	ne = 0;
	for (int s = 0; s < SIM_NSTREAMS; s++) {
		int st = rec->streams[(size_t)sr * SIM_NSTREAMS + s];
		if (st < 0)
			continue;
		for (size_t i = 0, n = sim_stream_len(e, st); i < n; i++) {
			en[ne] = (ent){sim_stream_op(e, st, i), s, (int32_t)i};
			sorted[ne] = en[ne].op;
			ne++;
		}
	}
	qsort(sorted, ne, sizeof *sorted, cmp_i32);
	/* entry index of each sorted op id */
	size_t *ent_of = malloc((ne ? ne : 1) * sizeof *ent_of);
	if (ent_of == NULL)
		goto fail;
	for (size_t i = 0; i < ne; i++) {
		int32_t *p = bsearch(&en[i].op, sorted, ne, sizeof *sorted, cmp_i32);
		ent_of[p - sorted] = i;
	}

	/* 2. dependencies among them (other streams only: a stream runs in order anyway) */
	for (size_t i = 0; i < ne; i++) {
		size_t ns = sim_op_succs(e, en[i].op, succ, succcap);
		if (ns > succcap) {
			int32_t *g = realloc(succ, ns * sizeof *succ);
			if (g == NULL) {
				free(ent_of);
				goto fail;
			}
			succ = g;
			succcap = ns;
			sim_op_succs(e, en[i].op, succ, succcap);
		}
		for (size_t k = 0; k < ns; k++) {
			int32_t *p = bsearch(&succ[k], sorted, ne, sizeof *sorted, cmp_i32);
			if (p == NULL)
				continue; /* another rank's op: communication realizes it */
			size_t j = ent_of[p - sorted];
			if (en[j].stream == en[i].stream)
				continue;
			if (PP_GROW(dv, dcap, ndv + 1) != 0) {
				free(ent_of);
				goto fail;
			}
			dv[ndv].to = j;
			dv[ndv++].from = i;
		}
	}
	free(ent_of);

	/* 3. launch order: Kahn's algorithm over stream order and dependencies, earliest
	 * simulated start first */
	pending = calloc(ne ? ne : 1, sizeof *pending);
	first_dep = calloc(ne + 1, sizeof *first_dep);
	order = malloc((ne ? ne : 1) * sizeof *order);
	pos = malloc((ne ? ne : 1) * sizeof *pos);
	heap = malloc((ne ? ne : 1) * sizeof *heap);
	size_t *byfrom = malloc((ndv ? ndv : 1) * sizeof *byfrom);
	if (pending == NULL || first_dep == NULL || order == NULL || pos == NULL || heap == NULL || byfrom == NULL) {
		free(byfrom);
		goto fail;
	}
	/* successors by source: counting sort of the dependency pairs on `from` */
	for (size_t d = 0; d < ndv; d++)
		first_dep[dv[d].from + 1]++;
	for (size_t i = 0; i < ne; i++)
		first_dep[i + 1] += first_dep[i];
	{
		size_t *fill = calloc(ne ? ne : 1, sizeof *fill);
		if (fill == NULL) {
			free(byfrom);
			goto fail;
		}
		for (size_t d = 0; d < ndv; d++)
			byfrom[first_dep[dv[d].from] + fill[dv[d].from]++] = d;
		free(fill);
	}
	for (size_t d = 0; d < ndv; d++)
		pending[dv[d].to]++;
	for (size_t i = 0; i < ne; i++)
		if (en[i].seq > 0)
			pending[i]++; /* its stream predecessor */
	size_t nh = 0, no = 0;
	for (size_t i = 0; i < ne; i++)
		if (pending[i] == 0)
			h_push(heap, &nh, (hnode){sim_op_start(e, en[i].op), en[i].op, i});
	while (nh > 0) {
		hnode h = h_pop(heap, &nh);
		size_t i = h.ent;
		pos[i] = no;
		order[no++] = i;
		/* the next op of its stream (entries of a stream are consecutive, in order) */
		if (i + 1 < ne && en[i + 1].stream == en[i].stream && --pending[i + 1] == 0)
			h_push(heap, &nh, (hnode){sim_op_start(e, en[i + 1].op), en[i + 1].op, i + 1});
		for (size_t q = first_dep[i]; q < first_dep[i + 1]; q++) {
			size_t j = dv[byfrom[q]].to;
			if (--pending[j] == 0)
				h_push(heap, &nh, (hnode){sim_op_start(e, en[j].op), en[j].op, j});
		}
	}
	free(byfrom);
	if (no != ne) {
		rc = pp_err(err, errlen, PP_EINPUT, "rank %d: the op graph has a cycle (%zu of %zu ops ordered)", rank, no, ne);
		goto fail;
	}

	/* 4. the ops in launch order, their kernels and waits */
	o->ops = calloc(ne ? ne : 1, sizeof *o->ops);
	o->deps = malloc((ndv ? ndv : 1) * sizeof *o->deps);
	if (o->ops == NULL || o->deps == NULL)
		goto fail;
	o->nops = ne;
	size_t kcap = 0;
	int stride = c->tp * c->cp * c->dp;
	for (size_t q = 0; q < ne; q++) {
		const ent *x = &en[order[q]];
		sim_rop *op = &o->ops[q];
		const sim_oprec *ri = (size_t)x->op < rec->nops ? &rec->ops[x->op] : NULL;
		uint32_t tag = sim_op_tag(e, x->op);
		unsigned kind = tag >> 26;
		op->stream = x->stream;
		op->seq = x->seq;
		op->tag = tag;
		op->mb = tag & 0xffff;
		op->layer = -1;
		op->peer = op->peer_stage = -1;
		op->start_ps = sim_op_start(e, x->op);
		op->end_ps = sim_op_end(e, x->op);
		if (ri == NULL || ri->what == REC_NONE) {
			rc = pp_err(err, errlen, PP_EINPUT, "rank %d: op %d was not recorded", rank, (int)x->op);
			goto fail;
		}
		switch (ri->what) {
		case REC_COMPUTE: {
			op->kind = SIM_OP_COMPUTE;
			op->layer = ri->layer;
			op->flops = ri->bytes;
			op->k0 = o->nkernels;
			size_t n = ri->list >= 0 && (size_t)ri->list < rec->nlists ? rec->lists[ri->list].n : 0;
			if (PP_GROW(o->kernels, kcap, o->nkernels + n + 1) != 0)
				goto fail;
			for (size_t k = 0; k < n; k++) {
				sim_kernel *kk = &o->kernels[o->nkernels++];
				memcpy(kk, &rec->lists[ri->list].k[k], sizeof *kk);
				if (kk->layer < 0 && layer_weight(kk->weight))
					kk->layer = ri->layer;
			}
			op->nk = n;
			break;
		}
		case REC_COLL:
			op->kind = SIM_OP_COLL;
			op->coll = (hw_coll)ri->coll;
			op->group = (sim_group)ri->group;
			op->group_size = sim_group_size(c, op->group);
			op->per_node = ri->per_node;
			op->elem_bytes = ri->elem;
			op->bytes = ri->bytes;
			if (kind == TAG_TP || kind == TAG_CP || kind == TAG_EP || kind == TAG_ETP || kind == TAG_ZERO_AG ||
			    kind == TAG_ZERO_RS)
				op->layer = (tag >> 16) & 0x3ff;
			break;
		case REC_P2P: {
			bool send = x->stream == SIM_S_PP_SEND_FWD || x->stream == SIM_S_PP_SEND_BWD;
			op->kind = send ? SIM_OP_SEND : SIM_OP_RECV;
			op->coll = HW_SEND_RECV;
			op->group = SIM_G_PP;
			op->group_size = 2;
			op->per_node = ri->per_node;
			op->elem_bytes = ri->elem;
			op->bytes = ri->bytes;
			op->peer_stage = send ? ri->to_stage : ri->from_stage;
			op->peer = rank + (op->peer_stage - co.pp) * stride;
			op->tp_gather = !send && ri->tp_gather;
			break;
		}
		default:
			op->kind = SIM_OP_MARK;
			break;
		}
	}
	/* waits: dependency pairs sorted by (waiting op, awaited op) in launch positions */
	for (size_t d = 0; d < ndv; d++) {
		dv[d].to = pos[dv[d].to];
		dv[d].from = pos[dv[d].from];
	}
	{
		/* counting sort on `to`, then each op's sources sorted and made unique */
		size_t *cnt = calloc(ne + 1, sizeof *cnt);
		size_t *tmp = malloc((ndv ? ndv : 1) * sizeof *tmp);
		if (cnt == NULL || tmp == NULL) {
			free(cnt);
			free(tmp);
			goto fail;
		}
		for (size_t d = 0; d < ndv; d++)
			cnt[dv[d].to + 1]++;
		for (size_t i = 0; i < ne; i++)
			cnt[i + 1] += cnt[i];
		for (size_t d = 0; d < ndv; d++)
			tmp[cnt[dv[d].to]++] = dv[d].from;
		/* cnt[i] is now the end of op i's range; its start is cnt[i - 1] (0 for i = 0) */
		size_t start = 0;
		for (size_t i = 0; i < ne; i++) {
			size_t end = cnt[i];
			size_t *a = tmp + start, n = end - start;
			/* insertion sort: an op waits for a handful of others */
			for (size_t u = 1; u < n; u++)
				for (size_t v = u; v > 0 && a[v - 1] > a[v]; v--) {
					size_t t = a[v - 1];
					a[v - 1] = a[v];
					a[v] = t;
				}
			o->ops[i].d0 = o->ndeps;
			for (size_t u = 0; u < n; u++)
				if (u == 0 || a[u] != a[u - 1])
					o->deps[o->ndeps++] = a[u];
			o->ops[i].nd = o->ndeps - o->ops[i].d0;
			start = end;
		}
		free(cnt);
		free(tmp);
	}
	rc = 0;
	*out = o;
	o = NULL;
fail:
	if (rc == PP_ENOMEM)
		pp_err(err, errlen, PP_ENOMEM, "out of memory");
	sim_rank_ops_free(o);
	free(en);
	free(sorted);
	free(succ);
	free(pos);
	free(order);
	free(pending);
	free(first_dep);
	free(heap);
	free(dv);
	return rc;
}

/* ---- JSON ---------------------------------------------------------------------------------- */

static const char *
pass_name(sim_pass p)
{
	static const char *const n[] = {"fwd", "dgrad", "wgrad", "bmm"};
	return (unsigned)p <= SIM_PASS_BMM ? n[p] : "?";
}

static cJSON *
kernel_json(const sim_kernel *sk)
{
	const hw_kernel *k = &sk->hk;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "kind", hw_kkind_name(k->kind));
	switch (k->kind) {
	case HW_K_GEMM:
		cJSON_AddStringToObject(o, "dtype", hw_dtype_name(k->dtype));
		cJSON_AddNumberToObject(o, "m", k->m);
		cJSON_AddNumberToObject(o, "n", k->n);
		cJSON_AddNumberToObject(o, "k", k->k);
		cJSON_AddNumberToObject(o, "batch", k->batch);
		cJSON_AddStringToObject(o, "pass", pass_name(sk->pass));
		if (sk->weight != SIM_W_NONE) {
			cJSON_AddStringToObject(o, "weight", sim_weight_name(sk->weight));
			cJSON_AddNumberToObject(o, "layer", (double)sk->layer);
		}
		cJSON_AddNumberToObject(o, "flops", hw_kernel_flops(k));
		break;
	case HW_K_ATTN:
		cJSON_AddStringToObject(o, "dtype", hw_dtype_name(k->dtype));
		cJSON_AddBoolToObject(o, "backward", k->bwd);
		cJSON_AddNumberToObject(o, "batch", k->b);
		cJSON_AddNumberToObject(o, "heads", k->heads);
		cJSON_AddNumberToObject(o, "kv_heads", k->kv_heads);
		cJSON_AddNumberToObject(o, "seq_q", k->sq);
		cJSON_AddNumberToObject(o, "seq_k", k->sk);
		cJSON_AddNumberToObject(o, "head_dim_qk", k->dqk);
		cJSON_AddNumberToObject(o, "head_dim_v", k->dv);
		cJSON_AddNumberToObject(o, "density", k->density);
		cJSON_AddNumberToObject(o, "flops", hw_kernel_flops(k));
		cJSON_AddNumberToObject(o, "bytes", hw_kernel_bytes(k));
		break;
	default:
		cJSON_AddNumberToObject(o, "bytes", hw_kernel_bytes(k));
		break;
	}
	return o;
}

cJSON *
sim_rank_ops_json(const sim_rank_ops *o, const sim_train_cfg *c)
{
	cJSON *root = cJSON_CreateObject();
	cJSON_AddNumberToObject(root, "rank", o->rank);
	cJSON_AddNumberToObject(root, "ranks", o->ranks);
	cJSON *co = cJSON_AddObjectToObject(root, "coords");
	cJSON_AddNumberToObject(co, "tp", o->co.tp);
	cJSON_AddNumberToObject(co, "cp", o->co.cp);
	cJSON_AddNumberToObject(co, "dp", o->co.dp);
	cJSON_AddNumberToObject(co, "pp", o->co.pp);
	cJSON *gr = cJSON_AddObjectToObject(root, "groups");
	int *mem = malloc((size_t)c->gpus * sizeof *mem);
	for (int g = 0; g < SIM_NGROUPS && mem != NULL; g++) {
		int n = sim_group_members(c, (sim_group)g, o->rank, mem, c->gpus);
		cJSON_AddItemToObject(gr, sim_group_name((sim_group)g), cJSON_CreateIntArray(mem, n));
	}
	free(mem);
	cJSON_AddNumberToObject(root, "step_time_s", (double)o->step_ps * 1e-12);
	/* per stream: its ops' launch indexes in program order */
	cJSON *streams = cJSON_AddArrayToObject(root, "streams");
	for (int s = 0; s < SIM_NSTREAMS; s++) {
		size_t n = 0;
		for (size_t i = 0; i < o->nops; i++)
			n += o->ops[i].stream == s;
		if (n == 0)
			continue;
		int32_t *seq = malloc(n * sizeof *seq);
		if (seq == NULL)
			continue;
		for (size_t i = 0; i < o->nops; i++)
			if (o->ops[i].stream == s)
				seq[o->ops[i].seq] = (int32_t)i;
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "stream", sim_stream_name(s));
		cJSON *arr = cJSON_AddArrayToObject(x, "ops");
		for (size_t k = 0; k < n; k++)
			cJSON_AddItemToArray(arr, cJSON_CreateNumber(seq[k]));
		cJSON_AddItemToArray(streams, x);
		free(seq);
	}
	/* the ops in launch order */
	double gemm = 0, attn = 0, membytes = 0;
	int counts[SIM_NGROUPS][HW_NCOLL];
	memset(counts, 0, sizeof counts);
	int sends = 0, recvs = 0, events = 0;
	cJSON *ops = cJSON_AddArrayToObject(root, "ops");
	for (size_t i = 0; i < o->nops; i++) {
		const sim_rop *op = &o->ops[i];
		cJSON *x = cJSON_CreateObject();
		char lb[96];
		cJSON_AddNumberToObject(x, "i", (double)i);
		cJSON_AddStringToObject(x, "stream", sim_stream_name(op->stream));
		cJSON_AddNumberToObject(x, "seq", op->seq);
		cJSON_AddStringToObject(x, "kind", sim_opkind_name(op->kind));
		cJSON_AddStringToObject(x, "label", sim_op_label(op->tag, lb, sizeof lb));
		if (op->layer >= 0)
			cJSON_AddNumberToObject(x, "layer", (double)op->layer);
		cJSON_AddNumberToObject(x, "micro_batch", (double)op->mb);
		switch (op->kind) {
		case SIM_OP_COMPUTE: {
			cJSON_AddNumberToObject(x, "flops", op->flops);
			cJSON *ks = cJSON_AddArrayToObject(x, "kernels");
			for (size_t k = op->k0; k < op->k0 + op->nk; k++) {
				const sim_kernel *kk = &o->kernels[k];
				cJSON_AddItemToArray(ks, kernel_json(kk));
				if (kk->hk.kind == HW_K_GEMM)
					gemm += hw_kernel_flops(&kk->hk);
				else if (kk->hk.kind == HW_K_ATTN)
					attn += hw_kernel_flops(&kk->hk);
				else
					membytes += hw_kernel_bytes(&kk->hk);
			}
			break;
		}
		case SIM_OP_COLL:
			cJSON_AddStringToObject(x, "op", hw_coll_name(op->coll));
			cJSON_AddStringToObject(x, "group", sim_group_name(op->group));
			cJSON_AddNumberToObject(x, "group_size", op->group_size);
			cJSON_AddNumberToObject(x, "bytes", op->bytes);
			cJSON_AddNumberToObject(x, "elem_bytes", op->elem_bytes);
			counts[op->group][op->coll]++;
			break;
		case SIM_OP_SEND:
		case SIM_OP_RECV:
			cJSON_AddNumberToObject(x, "peer", op->peer);
			cJSON_AddNumberToObject(x, "peer_stage", op->peer_stage);
			cJSON_AddNumberToObject(x, "bytes", op->bytes);
			if (op->tp_gather)
				cJSON_AddBoolToObject(x, "tp_gather", true);
			if (op->kind == SIM_OP_SEND)
				sends++;
			else
				recvs++;
			break;
		default:
			break;
		}
		if (op->nd > 0) {
			cJSON *w = cJSON_AddArrayToObject(x, "wait");
			for (size_t d = op->d0; d < op->d0 + op->nd; d++)
				cJSON_AddItemToArray(w, cJSON_CreateNumber((double)o->deps[d]));
			events += (int)op->nd;
		}
		cJSON_AddNumberToObject(x, "start_s", (double)op->start_ps * 1e-12);
		cJSON_AddNumberToObject(x, "end_s", (double)op->end_ps * 1e-12);
		cJSON_AddItemToArray(ops, x);
	}
	cJSON *tot = cJSON_AddObjectToObject(root, "totals");
	cJSON_AddNumberToObject(tot, "ops", (double)o->nops);
	cJSON_AddNumberToObject(tot, "kernels", (double)o->nkernels);
	cJSON_AddNumberToObject(tot, "gemm_flops", gemm);
	cJSON_AddNumberToObject(tot, "attention_flops", attn);
	cJSON_AddNumberToObject(tot, "memory_bytes", membytes);
	cJSON_AddNumberToObject(tot, "sends", sends);
	cJSON_AddNumberToObject(tot, "recvs", recvs);
	cJSON_AddNumberToObject(tot, "waits", events);
	cJSON *cc = cJSON_AddObjectToObject(tot, "collectives");
	for (int g = 0; g < SIM_NGROUPS; g++) {
		cJSON *gx = NULL;
		for (int k = 0; k < HW_NCOLL; k++)
			if (counts[g][k] > 0) {
				if (gx == NULL)
					gx = cJSON_AddObjectToObject(cc, sim_group_name((sim_group)g));
				cJSON_AddNumberToObject(gx, hw_coll_name((hw_coll)k), counts[g][k]);
			}
	}
	return root;
}
