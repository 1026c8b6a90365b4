/*
 * estimate.c -- a closed-form estimate of a training step, for ranking thousands of
 * configurations before simulating the best in full.
 *
 * It prices the same segments the op graph runs (sim_layer_cost, the embedding and head, the
 * TP, CP and EP collectives, the pipeline transfers, the data-parallel and ZeRO collectives,
 * the optimizer) and composes them with the schedules' closed forms instead of events:
 *   per micro-batch time of the slowest stage T = sum over its layers of forward, backward,
 *   recomputation and TP collectives (+ embedding / head, + transfers);
 *   pipeline: (m + (p - 1) / v) T for 1F1B and interleaved (Narayanan 2021 eq. 1 and 2), GPipe
 *   the same, ZB-H1 (m + (p - 1) / 3) T (Qi et al. 2023: its bubble is about a third);
 *   gradient reduction: exposed in full without overlap, else only its last bucket;
 *   ZeRO-3: per layer, the gathers and reduce-scatter beyond the layer's compute are exposed;
 *   hybrid sharding adds each shard's all-reduce over the replicas to the reduction.
 * It ignores contention between flows, so it is optimistic where the engine finds contention;
 * the planner uses it to order candidates, then simulates the best in full.
 */
#include "config.h"
#include "sim/train_int.h"

#include <math.h>
#include <string.h>

static double
block_t(const block_cost *bc, bool bwd)
{
	const seg *s = bwd ? bc->bwd : bc->fwd;
	double t = s[0].t + s[1].t + s[2].t;
	if (bwd)
		t += bc->w.t + bc->recompute.t;
	return t;
}

/* Hybrid sharding: the all-reduce of a shard of `bytes` over the replicas (none: 0). */
static double
replicas(const hw_cost *cost, const placement *pl, double bytes)
{
	return pl->repl > 1 ? hw_cost_coll_time(cost, HW_ALL_REDUCE, pl->repl, pl->repl_per_node, bytes, NULL) : 0.0;
}

int
sim_train_estimate(const model *m, const hw_cost *cost, const sim_train_cfg *cin, double *step_s, char *err,
		   size_t errlen)
{
	sim_train_cfg cfg = *cin;
	const hw_system *sys = hw_cost_system(cost);
	int rc = sim_train_check(m, sys, &cfg, err, errlen);
	if (rc != 0)
		return rc;
	const sim_train_cfg *c = &cfg;
	const model_tf *t = model_transformer(m);
	if (t == NULL)
		return pp_err(err, errlen, PP_EUSAGE, "the estimate covers transformers; simulate %s instead", model_name(m));
	placement pl;
	sim_place(sys, c, &pl);
	int64_t micro = c->global_batch / ((int64_t)c->dp * c->micro_batch);
	double T = (double)c->micro_batch * (double)sim_seq(m, c) / (double)c->cp;
	double e = sim_act_bytes(c);
	double msg = T * (double)t->hidden * e;
	bool sp = c->sequence_parallel && c->tp > 1;
	double tp_block = 0.0; /* TP collectives around one block, one direction */
	if (c->tp > 1)
		tp_block = sp ? hw_cost_coll_time(cost, HW_ALL_GATHER, c->tp, pl.tp_per_node, msg, NULL) +
					hw_cost_coll_time(cost, HW_REDUCE_SCATTER, c->tp, pl.tp_per_node, msg, NULL)
			      : hw_cost_coll_time(cost, HW_ALL_REDUCE, c->tp, pl.tp_per_node, msg, NULL);
	double gb = (double)sim_grad_bytes(c);
	int grp = pl.grad; /* the ZeRO shard group (dp x cp without hybrid sharding) */
	int ka, kb;
	sim_zero3_gathers(m, c, &ka, &kb);

	/* Per stage: compute per micro-batch, parameters, the largest ZeRO-3 exposure. */
	double worst = 0.0, worst_params = 0.0, worst_expert = 0.0, zero_exposed = 0.0;
	layer_cost prev;
	int64_t prev_layer = -2;
	int64_t layer = 0;
	for (int s = 0; s < c->pp; s++) {
		int nl = sim_stage_layers(m, c, s);
		double tstage = 0.0, P = 0.0, Pe = 0.0, zexp = 0.0;
		for (int k = 0; k < nl; k++, layer++) {
			/* interleaved chunks hold other layers, but layers cost alike: the count matters */
			layer_cost lc;
			if (prev_layer >= 0 && model_layers_alike(m, layer, prev_layer)) {
				lc = prev;
			} else {
				sim_layer_cost(m, cost, c, layer, &lc);
				prev = lc;
			}
			prev_layer = layer;
			/* TP collectives around each block (a MoE block under sequence parallelism keeps
			 * the rank's own shard: none) */
			double ntp = (lc.attn.no_tp ? 0.0 : 1.0) + (lc.mlp.no_tp ? 0.0 : 1.0);
			double fwd = block_t(&lc.attn, false) + block_t(&lc.mlp, false) + ntp * tp_block;
			double bwd = block_t(&lc.attn, true) + block_t(&lc.mlp, true) +
				     sim_block_bwd_tp(c, &lc.attn, tp_block) + sim_block_bwd_tp(c, &lc.mlp, tp_block);
			if (c->recompute == SIM_RECOMPUTE_FULL)
				bwd += fwd;
			for (int b = 0; b < 2; b++) {
				const block_cost *bc = b ? &lc.mlp : &lc.attn;
				if (bc->side_bytes > 0) {
					double side = hw_cost_coll_time(cost, bc->side_op, bc->side_ranks, bc->side_per_node,
									bc->side_bytes, NULL);
					double core_f = bc->fwd[1].t, core_b = bc->bwd[1].t;
					if (bc->side_op == HW_ALL_TO_ALL) {
						/* dispatch and combine, and the expert-TP gather and reduce-scatter */
						if (bc->etp_bytes > 0)
							side += 0.5 * (hw_cost_coll_time(cost, HW_ALL_GATHER, bc->etp_ranks,
											 bc->etp_per_node, bc->etp_bytes, NULL) +
								       hw_cost_coll_time(cost, HW_REDUCE_SCATTER, bc->etp_ranks,
											 bc->etp_per_node, bc->etp_bytes, NULL));
						fwd += 2.0 * side;
						bwd += 2.0 * side;
					} else {
						fwd += side > core_f ? side - core_f : 0.0;
						bwd += 2.0 * side > core_b ? 2.0 * side - core_b : 0.0;
					}
				}
			}
			tstage += fwd + bwd;
			/* trainable parameters (reduced, stepped) and the weights' stored bytes (gathered) */
			double lp = lc.attn.train_params + lc.mlp.train_params, le = lc.mlp.train_expert_params;
			double wb = lc.attn.wbytes + lc.mlp.wbytes, we = lc.mlp.wexpert_bytes;
			P += lp;
			Pe += le;
			if (c->zero >= 3) {
				double ag = (we > 0 ? hw_cost_coll_time(cost, HW_ALL_GATHER, pl.edp, pl.edp_per_node, we, NULL) : 0);
				if (ka == 1 && kb == 1)
					ag += hw_cost_coll_time(cost, HW_ALL_GATHER, grp, pl.grad_per_node, wb, NULL);
				else
					ag += ka * hw_cost_coll_time(cost, HW_ALL_GATHER, grp, pl.grad_per_node, lc.attn.wbytes / ka, NULL) +
					      kb * hw_cost_coll_time(cost, HW_ALL_GATHER, grp, pl.grad_per_node, lc.mlp.wbytes / kb, NULL);
				double rs = hw_cost_coll_time(cost, HW_REDUCE_SCATTER, grp, pl.grad_per_node, (lp + le) * gb, NULL) +
					    replicas(cost, &pl, (lp / grp + le / pl.edp) * gb);
				double gathers = c->recompute == SIM_RECOMPUTE_FULL && c->zero3_regather ? 3.0 : 2.0;
				double comm = gathers * ag + rs;
				if (c->zero3_prefetch)
					zexp += comm > fwd + bwd ? comm - (fwd + bwd) : 0.0;
				else /* the gathers on the critical path; the reduce-scatters beside the backward */
					zexp += gathers * ag + (rs > bwd ? rs - bwd : 0.0);
			} else if (c->zero == 2) {
				double rs = hw_cost_coll_time(cost, HW_REDUCE_SCATTER, grp, pl.grad_per_node, (lp + le) * gb, NULL) +
					    replicas(cost, &pl, (lp / grp + le / pl.edp) * gb);
				zexp += rs > bwd ? rs - bwd : 0.0;
			}
		}
		seg f, b;
		if (s == 0) {
			sim_embed_cost(m, cost, c, &f, &b);
			tstage += f.t + b.t;
			if (!sim_ft_frozen(c))
				P += sim_embed_params(m, c);
		}
		if (s == c->pp - 1) {
			sim_head_cost(m, cost, c, &f, &b);
			tstage += f.t + b.t;
			if (!sim_ft_frozen(c))
				P += sim_head_params(m, c);
		}
		if (tstage > worst) {
			worst = tstage;
			worst_params = P;
			worst_expert = Pe;
		}
		if (zexp > zero_exposed)
			zero_exposed = zexp;
	}
	double step;
	double p = (double)c->pp, v = (double)c->vpp, mm = (double)micro;
	double p2p = 0.0;
	if (c->pp > 1) {
		double bytes = msg / ((sp || (c->pp_scatter_gather && c->tp > 1)) ? (double)c->tp : 1.0);
		p2p = hw_cost_coll_time(cost, HW_SEND_RECV, 2, pl.pp_intra ? 2 : 1, bytes, NULL);
	}
	switch (c->schedule) {
	case SIM_ZB_H1:
		step = (mm + (p - 1.0) / 3.0) * worst;
		break;
	case SIM_INTERLEAVED:
		step = (mm + (p - 1.0) / v) * worst;
		break;
	default:
		step = (mm + p - 1.0) * worst;
	}
	/* transfers on the critical path: the fill and drain of the pipeline, each chunk boundary */
	step += 2.0 * (p - 1.0) * v * p2p;
	step += zero_exposed * mm;
	/* gradient reduction (ZeRO < 2) and the optimizer */
	if (c->zero < 2 && (grp > 1 || pl.repl > 1)) {
		hw_coll op = c->zero >= 1 ? HW_REDUCE_SCATTER : HW_ALL_REDUCE;
		double red = hw_cost_coll_time(cost, op, grp, pl.grad_per_node, worst_params * gb, NULL);
		if (worst_expert > 0)
			red += hw_cost_coll_time(cost, op, pl.edp, pl.edp_per_node, worst_expert * gb, NULL);
		red += replicas(cost, &pl, (worst_params / grp + worst_expert / pl.edp) * gb);
		if (c->overlap_grad_reduce) {
			/* the reduction hides behind the last micro-batch's backward, but for its last bucket */
			double bwd_last = 0.6 * worst;
			red = red > bwd_last ? red - bwd_last : 0.0;
			double bucket = hw_cost_coll_time(cost, op, grp, pl.grad_per_node,
							  fmin(worst_params * gb, c->bucket_bytes > 0 ? c->bucket_bytes : 40e6 * gb),
							  NULL);
			if (red < bucket)
				red = bucket;
		}
		step += red;
	}
	double P = worst_params / (c->zero >= 1 ? (double)grp : 1.0) + worst_expert / (c->zero >= 1 ? (double)pl.edp : 1.0);
	const hw_kernel opt = {.kind = HW_K_MEM, .bytes = P * (e >= 4.0 ? 28.0 : 32.0)};
	step += hw_cost_kernel(cost, &opt, NULL);
	*step_s = step;
	return 0;
}
