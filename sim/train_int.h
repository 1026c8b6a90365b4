/*
 * train_int.h -- private to the training simulator: the placement of a configuration on the
 * system, the per-layer costs, and the result struct.
 */
#ifndef SIM_TRAIN_INT_H
#define SIM_TRAIN_INT_H

#include "common/pp.h"
#include "sim/engine.h"
#include "sim/kernels_int.h"
#include "sim/sim.h"

/* The most ops (estimated before building) one training simulation may hold: about 1.6 GB. */
#define SIM_MAX_OPS 16777216.0

/* A compute segment: the kernels of one op, summed. */
typedef struct seg {
	double t;              /* seconds */
	double flops;          /* FLOPs executed */
	double pt[HW_NPROV];   /* of t, the seconds priced from each provenance */
} seg;

/* Adds a kernel of t seconds, priced from provenance p. */
static inline void
seg_add(seg *s, double t, double flops, hw_prov p)
{
	s->t += t;
	s->flops += flops;
	s->pt[p] += t;
}

static inline void
seg_merge(seg *into, const seg *from)
{
	into->t += from->t;
	into->flops += from->flops;
	for (int k = 0; k < HW_NPROV; k++)
		into->pt[k] += from->pt[k];
}

/* The provenance most of the segment's time was priced from (on a tie the weaker): an op is
 * accounted under one provenance. */
static inline hw_prov
seg_prov(const seg *s)
{
	int best = HW_PROV_MEASURED;
	for (int k = 1; k < HW_NPROV; k++)
		if (s->pt[k] >= s->pt[best])
			best = k;
	return (hw_prov)best;
}

/* The costs of one block (attention or MLP) of one layer for one micro-batch on one rank.
 * A block runs pre -> core -> post; its side flow (context-parallel KV exchange for attention,
 * expert all-to-all for MoE) runs beside the core.  bwd[] are the backward segments in the
 * order they run (post, core, pre); with a zero-bubble schedule they exclude the weight
 * gradients, which are in w. */
typedef struct block_cost {
	seg fwd[3], bwd[3], w;
	seg recompute;      /* selective recomputation before the backward */
	bool split;         /* pre/core/post are separate ops (a side flow runs beside core) */
	double side_bytes;  /* bytes of the side collective per direction (0: none) */
	hw_coll side_op;
	int side_ranks, side_per_node;
	/* MoE with expert tensor parallelism: after the dispatch the etp ranks all-gather the tokens
	 * their expert shards share, before the combine they reduce-scatter the partial outputs
	 * (bytes: the gathered buffer, nccl-tests' all-gather size; 0: none) */
	double etp_bytes;
	int etp_ranks, etp_per_node;
	bool no_tp;         /* no TP collectives around the block: a MoE block with sequence
	                     * parallelism dispatches each rank's own tokens (no shared expert) */
	double params;        /* parameters of the block held by this rank (reduced over dp x cp) */
	double expert_params; /* MoE expert parameters (reduced over the expert-data group) */
	/* of them the trainable ones, whose gradients are reduced and which the optimizer steps
	 * (all of them; a LoRA fine-tuning's adapters), and the bytes of the block's weights as
	 * stored, which ZeRO-3 gathers (finetune.c, sim_ft_block_params) */
	double train_params, train_expert_params;
	double wbytes, wexpert_bytes;
	int32_t klist;        /* recording: the first of its SLOT_N kernel lists (sim_rec), else -1 */
} block_cost;


typedef struct layer_cost {
	block_cost attn, mlp;
} layer_cost;

/* Where the groups of a configuration land on the system. */
typedef struct placement {
	int domain;               /* GPUs sharing the scale-up fabric (NVLink domain) */
	int tp_per_node;          /* members of a TP group inside one domain */
	int cp_per_node, dp_per_node, ep_per_node, edp_per_node, etp_per_node;
	int edp;                  /* expert-data-parallel degree: tp * cp * dp / (etp * ep), over the
	                           * replicas of hybrid sharding (the expert shard group) */
	int grad;                 /* the gradient-reduction group: dp x cp; with hybrid sharding its
	                           * shard group, dp_shard x cp */
	int grad_per_node;        /* its members per domain */
	int repl, repl_per_node;  /* hybrid sharding's replica group (1: none), per domain */
	bool pp_intra;            /* consecutive stages share a domain */
} placement;

void sim_place(const hw_system *sys, const sim_train_cfg *c, placement *out);

/* The ops the full mode's graph of a configuration holds (the limit SIM_MAX_OPS applies to this),
 * counted on its symmetric graph: each of its ops stands for a known number of the full mode's
 * by its kind (a rank's own op for every rank, a TP collective for every instance, ...).
 * INFINITY when even the symmetric graph passes the limit. */
int sim_train_census(const model *m, const hw_cost *cost, const sim_train_cfg *c, double *ops, char *err,
		     size_t errlen);

/* ---- fine-tuning (finetune.c) ---- */
/* A layer's projections on one rank: base linear weights (what NF4 stores) and LoRA adapter
 * parameters of the attention, the dense or shared MLP and the routed experts; the largest base
 * weight (elements, a dequantization buffer's size); the adapter rows r each token keeps for
 * the backward pass (x A, per adapted projection), and per routed token of the experts. */
typedef struct sim_ft_layer {
	double attn_linear, mlp_linear, expert_linear;
	double attn_adapters, mlp_adapters, expert_adapters;
	double largest;
	double act_rows, expert_act_rows;
} sim_ft_layer;
void sim_ft_layer_get(const model *m, const sim_train_cfg *c, int64_t layer, sim_ft_layer *out);
void sim_ft_block_params(const model *m, const sim_train_cfg *c, int64_t layer, block_cost *attn, block_cost *mlp);
/* The fine-tuning settings' own rules (sim_train_check calls it). */
int sim_ft_check(const model *m, sim_train_cfg *c, char *err, size_t errlen);
/* The base is frozen: no weight gradients but the adapters'. */
static inline bool
sim_ft_frozen(const sim_train_cfg *c)
{
	return c->lora_rank > 0;
}

/* The collectives ZeRO-3 gathers a layer's attention and MLP blocks in (c->zero3_gather); 1 and
 * 1 mean the whole layer in one collective (HW_Z3_LAYER, and any model that is no transformer). */
void sim_zero3_gathers(const model *m, const sim_train_cfg *c, int *attn, int *mlp);
double sim_act_bytes(const sim_train_cfg *c); /* bytes per activation element */
/* Forward and backward (data and weight gradients) of one CNN layer over `mb` samples. */
void sim_cnn_layer_cost(const hw_cost *cost, hw_dtype dt, double act_bytes, const model_layer *l, double mb, seg *fwd,
			seg *bwd);
int64_t sim_seq(const model *m, const sim_train_cfg *c);

/* The jobs of stage s under a schedule, in the order the stage runs them: forward (F),
 * backward (B; for ZB-H1 its input-gradient part) and weight-gradient (W, ZB-H1 only) passes
 * of micro-batch `mb`'s chunk `chunk`.  *out is malloc'd. */
enum { J_F, J_B, J_W };
typedef struct sim_job {
	int8_t type;
	int chunk;
	int64_t mb;
} sim_job;
int sim_schedule_jobs(sim_schedule sched, int p, int v, int64_t micro, int s, sim_job **out, size_t *n);

/* ---- recording the op graph for replay (oplist.c) ------------------------------------------ *
 * A recorder holds kernel lists (the kernels of one segment, in the order the cost model priced
 * them) and, per engine op, what the op is beyond its duration.  It exists only when
 * cfg.record_ops is set; every hook below is skipped when the builder has none. */
typedef struct sim_rec sim_rec;

enum { REC_COMPUTE, REC_COLL, REC_P2P, REC_MARK };
typedef struct sim_oprec {
	uint8_t what;        /* REC_* */
	uint8_t group;       /* sim_group (collectives, p2p) */
	uint8_t coll;        /* hw_coll */
	uint8_t elem;        /* bytes per element of a collective */
	bool tp_gather;      /* p2p: the receiving TP ranks all-gather the slices */
	int32_t gsize, per_node;
	int32_t from_stage, to_stage; /* p2p */
	int32_t list;        /* compute: its kernel list, -1 none */
	int32_t layer;       /* the model layer of a compute op's weights, -1 none */
	double bytes;        /* collective or p2p size; compute: its FLOPs */
} sim_oprec;

sim_rec *sim_rec_new(int nranks);
void sim_rec_free(sim_rec *r);
bool sim_rec_failed(const sim_rec *r); /* out of memory at some point */
/* A new empty kernel list; its id, or -1 (and the recorder failed) when out of memory. */
int32_t sim_rec_list(sim_rec *r);
void sim_rec_kernel(sim_rec *r, int32_t list, const sim_kernel *k);
/* The concatenation of up to four lists (-1 entries skipped), made once per distinct tuple. */
int32_t sim_rec_concat(sim_rec *r, int32_t a, int32_t b, int32_t c, int32_t d);
/* Appends list src to list dst. */
void sim_rec_append(sim_rec *r, int32_t dst, int32_t src);
void sim_rec_op(sim_rec *r, int32_t op, const sim_oprec *info);
/* The streams of simulated rank rk (SIM_NSTREAMS engine stream ids, SIM_S_* order), and where
 * a simulated rank sits: its stage, instance and TP member. */
void sim_rec_rank(sim_rec *r, int rk, const int *streams, int stage, int inst, int tpm);

/* layer.c */
void sim_layer_cost(const model *m, const hw_cost *cost, const sim_train_cfg *c, int64_t layer, layer_cost *out);
/* Whether a block's backward TP collective runs beside its first linear's weight gradient, which
 * the kernel builder then puts in SLOT_W (tp_wgrad_overlap; a zero-bubble schedule keeps every
 * weight gradient there for its W jobs instead; under TP communication overlap the
 * reduce-scatter runs beside the whole block already). */
bool sim_w_beside(const sim_train_cfg *c);
/* The time a block's backward TP collective (tp, its whole time) adds to the block in the
 * closed forms: none around a block without one; with tp_wgrad_overlap, what the first
 * linear's weight gradient (bc->w) does not hide. */
double sim_block_bwd_tp(const sim_train_cfg *c, const block_cost *bc, double tp);
/* The same, also recording each segment's kernels into lists of rec (blocks' klist). */
void sim_layer_cost_rec(const model *m, const hw_cost *cost, const sim_train_cfg *c, int64_t layer, layer_cost *out,
			sim_rec *rec);
/* Embedding (first stage) and head (last stage) per micro-batch: forward and backward.  With a
 * recorder, lists[0] and lists[1] get the forward and backward kernel lists. */
void sim_embed_cost(const model *m, const hw_cost *cost, const sim_train_cfg *c, seg *fwd, seg *bwd);
void sim_head_cost(const model *m, const hw_cost *cost, const sim_train_cfg *c, seg *fwd, seg *bwd);
void sim_embed_cost_rec(const model *m, const hw_cost *cost, const sim_train_cfg *c, seg *fwd, seg *bwd, sim_rec *rec,
			int32_t *lists);
void sim_head_cost_rec(const model *m, const hw_cost *cost, const sim_train_cfg *c, seg *fwd, seg *bwd, sim_rec *rec,
		       int32_t *lists);
double sim_embed_params(const model *m, const sim_train_cfg *c); /* per rank */
double sim_head_params(const model *m, const sim_train_cfg *c);  /* per rank, untied head only */
double sim_layer_params(const model *m, const sim_train_cfg *c, int64_t layer, double *expert);

/* Op tags: kind in the top 6 bits, then layer (10 bits), then micro-batch (16 bits). */
enum tag_kind {
	TAG_FWD_ATTN = 1, TAG_FWD_MLP, TAG_BWD_ATTN, TAG_BWD_MLP, TAG_W_ATTN, TAG_W_MLP, TAG_RECOMP,
	TAG_TP, TAG_CP, TAG_EP, TAG_PP_FWD, TAG_PP_BWD, TAG_DP, TAG_ZERO_AG, TAG_ZERO_RS, TAG_EMBED_FWD,
	TAG_EMBED_BWD, TAG_HEAD_FWD, TAG_HEAD_BWD, TAG_OPTIM, TAG_EMB_SYNC, TAG_PARAM_AG, TAG_CNN_FWD,
	TAG_CNN_BWD, TAG_STEP, TAG_ETP, TAG_DPR, TAG_NKINDS
};
static inline uint32_t
sim_tag(int kind, int64_t layer, int64_t mb)
{
	return ((uint32_t)kind << 26) | ((uint32_t)(layer & 0x3ff) << 16) | (uint32_t)(mb & 0xffff);
}
const char *sim_tag_name(uint32_t tag, char *buf, size_t n);

struct sim_train_result {
	sim_train_cfg cfg;
	sim_metrics m;
	sim_mem *mem; /* per stage */
	char model[64], system[48];
	hw_dtype dtype;
	double peak_tflops;
	int64_t seq;
	sim_engine *engine; /* kept for traces */
	int nranks;
	int *stage_of_rank;
	double price_per_gpu_hour;
	sim_rec *rec;      /* cfg.record_ops: the recorder (the engine is kept too) */
	int ninst, tpm;    /* simulated instances per stage and TP members per instance */
	bool transformer;
	sim_ft_totals ft;  /* what the fine-tuning trains and holds (the whole model) */
	int64_t stamped;   /* jobs stamped (sim_train_jobs_stamped) */
};

#endif
