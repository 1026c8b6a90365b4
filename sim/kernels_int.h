/*
 * kernels_int.h -- private to sim/: the one kernel builder.  It turns a model layer, the
 * layout of one rank (TP, SP, CP, EP) and what the software runs (dtypes, fused or unfused
 * attention, weight-only quantization) into the kernels of that layer, each described in full
 * (hw_kernel), for training steps (forward, backward, recomputation), serving iterations
 * (forward) and the GPU replay alike.  The builder prices nothing: it hands each kernel to the
 * caller's emit function with the block (attention, MLP) and segment it belongs to, and the
 * caller prices it (hw_cost_kernel), groups it into ops or sums it.
 */
#ifndef SIM_KERNELS_INT_H
#define SIM_KERNELS_INT_H

#include "sim/sim.h"

/* The segments of a block (attention or MLP) in the order they run: forward pre, core, post;
 * backward post, core, pre; the weight gradients when a zero-bubble schedule runs them apart;
 * the selective recomputation before the backward. */
enum { SLOT_F0, SLOT_F1, SLOT_F2, SLOT_B0, SLOT_B1, SLOT_B2, SLOT_W, SLOT_RC, SLOT_N };
enum { SIM_KB_ATTN, SIM_KB_MLP, SIM_KB_N };

typedef struct sim_kspec {
	const model *m;
	int tp, cp, ep;
	int etp;             /* the MoE layers' tensor parallelism (0: tp) */
	bool sp;             /* sequence parallelism: norms, residuals and dropout over T / tp tokens */
	hw_dtype dt;         /* the linear layers' GEMMs (fp8: not the LM head's or the router's) */
	int fp8_recipe;      /* with dt fp8: HW_FP8_*, which casts run around each fp8 GEMM */
	hw_dtype adt;        /* attention: the fused kernel or the batched products */
	double wbytes;       /* bytes per stored weight element (weight-only quantization); 0: dt's */
	double kvbytes;      /* bytes per cached K/V element (serving); 0: adt's */
	bool kv_per_head;    /* decode attention reads each KV head once per query head (no GQA sharing) */
	double e;            /* bytes per activation element between kernels */
	bool backward;       /* the backward kernels too (training) */
	bool opsac;          /* per-op selective recomputation (SIM_RECOMPUTE_OP) into SLOT_RC */
	bool zb;             /* weight gradients into SLOT_W (zero-bubble) instead of the backward */
	bool wbeside;        /* the weight gradient of a block's first linear layer (QKV or the MLA
	                      * projections, FC1, a Mamba block's input projection) into SLOT_W: it runs
	                      * beside the block's backward TP collective (tp_wgrad_overlap) */
	bool flash;          /* fused attention; else batched products and softmax kernels */
	hw_attn_impl attn;   /* the fused attention's generation */
	bool dropout;        /* attention and hidden dropout (models with biases train with it) */
	double moe_imb;      /* tokens on the busiest local expert over the mean (>= 1) */
	bool expert_fp4;     /* serving NVFP4: the routed experts' GEMMs in fp4 (W4A4), whatever dt is */
	/* fine-tuning (finetune.c): a frozen base computes no weight gradients (the embedding
	 * and head included); LoRA adapters of rank lora_rank on the projections of lora_mask
	 * (SIM_LORA_*) add their own kernels; qbytes > 0: the base's linear weights are stored at
	 * qbytes a weight (NF4) and dequantized before each GEMM that reads them */
	bool frozen;
	int lora_rank;
	unsigned lora_mask;
	double qbytes;
} sim_kspec;

/* Receives each kernel: the block (SIM_KB_*) and segment (SLOT_*) it belongs to.  Kernels of a
 * segment arrive in the order they run. */
typedef void (*sim_kemit)(void *arg, int block, int slot, const sim_kernel *k);

/* The kernels of transformer layer `layer` for T tokens through its linear layers on one rank;
 * its attention core over b sequences of sq local queries against sk keys, of which `density`
 * of the scores are computed (b 0: no core; serving prices its cores with sim_kernels_attn). */
void sim_kernels_layer(const sim_kspec *s, int64_t layer, double T, double b, double sq, double sk, double density,
		       sim_kemit emit, void *arg);
/* One attention core (into SIM_KB_ATTN's SLOT_F1, and its backward into SLOT_B1).  decode: one
 * new query per sequence against its cache (MLA attends to its latent with the projections
 * absorbed, as serving engines run it). */
void sim_kernels_attn(const sim_kspec *s, double b, double sq, double sk, double density, bool decode, sim_kemit emit,
		      void *arg);
/* Embedding lookup of T tokens (block SIM_KB_ATTN, SLOT_F0 forward, SLOT_B0 backward). */
void sim_kernels_embed(const sim_kspec *s, double T, sim_kemit emit, void *arg);
/* Final norm, LM head (vocabulary split over tp) and loss over T tokens (forward SLOT_F0,
 * backward SLOT_B0); without the backward, the sampling of T sequences' next tokens. */
void sim_kernels_head(const sim_kspec *s, double T, sim_kemit emit, void *arg);

#endif
