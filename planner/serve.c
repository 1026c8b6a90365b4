/*
 * serve.c -- plan_serve: the cheapest deployment that meets a latency SLO at a request rate.
 *
 * A candidate is (system, tp, pp, weights, max_num_seqs, disaggregation) and, for a MoE model,
 * its expert layout: experts sharded over the replica's tp GPUs (EP = tp) with attention
 * tensor-parallel or data-parallel (then a replica may span nodes, and max_num_seqs is per
 * GPU, as the engines take it).  Its unit is one
 * replica, or with prefill/decode disaggregation P:D, P prefill and D decode replicas.  Its
 * capacity is the highest rate one unit sustains within the SLO: a bisection over the rate (12
 * steps between zero and an upper bound from the unit's token throughput), each step a
 * simulation of `duration_s` of Poisson arrivals.  Units for the requested rate are
 * ceil(rate / capacity); the whole deployment is then simulated at the requested rate and grown
 * one unit at a time until it meets the SLO (the router does not balance perfectly).  Spares
 * for K failures are K replicas (K of each kind when disaggregated: either kind may fail).
 * Candidates run on all cores; the ranking sorts on cost with the key as a tie-break.
 */
#include "config.h"
#include "planner/plan_int.h"

#include <cJSON.h>
#include <gsl/gsl_cdf.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void
plan_serve_opts_init(plan_serve_opts *o)
{
	memset(o, 0, sizeof *o);
	o->prompt.kind = SIM_DIST_FIXED;
	o->prompt.mean = 512;
	o->output.kind = SIM_DIST_FIXED;
	o->output.mean = 256;
	o->duration_s = 120.0;
	o->top = 10;
	o->disaggregate = true;
	o->seed = 1;
	o->failures_per_gpu_hour = PLAN_FAILURES_PER_GPU_HOUR;
	o->repair_hours = PLAN_REPAIR_HOURS;
	sim_engine_default(&o->engine);
}

int
plan_spares(int n, int gpus, double per_gpu_hour, double repair_h, double availability, int max_k, double *achieved)
{
	double x = per_gpu_hour * gpus * repair_h, u = x / (1.0 + x);
	for (int k = 0; k <= max_k; k++) {
		double p = u > 0 ? gsl_cdf_binomial_P((unsigned)k, u, (unsigned)(n + k)) : 1.0;
		if (p >= availability) {
			if (achieved)
				*achieved = p;
			return k;
		}
	}
	return -1;
}

typedef struct scand {
	char system[48];
	const hw_cost *cost;
	double price;
	int tp, pp, max_num_seqs;
	int pd_p, pd_d; /* disaggregation P:D of a unit; 0:0 unified */
	int ep;            /* experts over ep of the tp GPUs (1: split by TP) */
	bool attention_dp; /* attention data-parallel over the tp GPUs */
	hw_dtype weights;
	/* results */
	bool ok;
	char why[160];
	double capacity; /* requests/s per unit within the SLO */
	int units, replicas;
	int spares;          /* of the replicas, spare (N+K) */
	double availability; /* the share of time the SLO's replicas are up with those spares */
	double usd_per_hour, usd_per_mtok;
	sim_serve_metrics at_rate;
	sim_serve_cfg at_cfg; /* the run at the requested rate at_rate is of */
} scand;

typedef struct spool {
	scand *c;
	size_t n;
	atomic_size_t next, done;
	const model *m;
	const plan_serve_opts *o;
} spool;

/* Sizes a configuration to `n` units of the candidate. */
static void
units(sim_serve_cfg *c, const scand *x, int n)
{
	if (x->pd_p > 0) {
		c->prefill_replicas = n * x->pd_p;
		c->decode_replicas = n * x->pd_d;
		c->replicas = c->prefill_replicas + c->decode_replicas;
	} else {
		c->replicas = n;
	}
}

static void
base_cfg(const plan_serve_opts *o, const scand *x, sim_serve_cfg *c)
{
	sim_serve_cfg_init(c);
	c->engine = o->engine;
	c->tp = x->tp;
	c->pp = x->pp;
	c->ep = x->ep;
	c->attention_dp = x->attention_dp;
	c->weights = x->weights;
	c->max_num_seqs = x->max_num_seqs;
	c->prompt = o->prompt;
	c->output = o->output;
	c->duration_s = o->duration_s;
	c->slo_ttft_s = o->slo_ttft_s;
	c->slo_tpot_s = o->slo_tpot_s;
	c->slo_e2e_s = o->slo_e2e_s;
	c->seed = o->seed;
	c->price = x->price;
	c->prefix_hit = o->prefix_hit;
	c->spec = o->spec;
	c->spec_tokens = o->spec_tokens;
	c->spec_accept = o->spec_accept;
	c->chunked = o->chunked;
	units(c, x, 1);
}

static bool
meets(const plan_serve_opts *o, const sim_serve_metrics *m)
{
	if (m->saturated)
		return false;
	if (o->slo_ttft_s > 0 && m->ttft.p99 > o->slo_ttft_s)
		return false;
	if (o->slo_tpot_s > 0 && m->tpot.p99 > o->slo_tpot_s)
		return false;
	if (o->slo_e2e_s > 0 && m->e2e.p99 > o->slo_e2e_s)
		return false;
	return true;
}

/* Requests of one evaluation: `duration_s` of arrivals, at least 100 (for a P99 of its own)
 * and at most 4000 (a P99 within a few percent; saturation shows in the queue long before). */
static int64_t
eval_requests(const sim_serve_cfg *c)
{
	double n = ceil(c->rate * c->duration_s);
	return n < 100 ? 100 : n > 4000 ? 4000 : (int64_t)n;
}

static void
eval(spool *p, scand *x)
{
	const plan_serve_opts *o = p->o;
	char err[512];
	sim_serve_cfg c;
	base_cfg(o, x, &c);
	sim_serve_mem mem;
	if (sim_serve_memory(p->m, hw_cost_system(x->cost), &c, &mem, err, sizeof err) != 0 || !mem.fits) {
		snprintf(x->why, sizeof x->why, "does not fit: %.0f GiB of weights per GPU", mem.weights / 1073741824.0);
		return;
	}
	/* An upper bound on one replica's rate: a saturated batch run's request throughput. */
	sim_serve_metrics mt;
	c.arrival = SIM_ARR_BATCH;
	c.requests = 4 * (int64_t)c.max_num_seqs * (x->attention_dp ? x->tp : 1); /* max_num_seqs is per attention rank */
	if (sim_serve_metrics_of(p->m, x->cost, &c, &mt, err, sizeof err) != 0) {
		pp_strlcpy(x->why, err, sizeof x->why);
		return;
	}
	double hi = mt.requests_per_s * 1.2, lo = 0.0;
	c.arrival = SIM_ARR_POISSON;
	for (int it = 0; it < 16 && hi - lo > 0.01 * hi; it++) {
		double mid = (lo + hi) / 2;
		c.rate = mid;
		c.requests = eval_requests(&c);
		if (sim_serve_metrics_of(p->m, x->cost, &c, &mt, err, sizeof err) != 0) {
			pp_strlcpy(x->why, err, sizeof x->why);
			return;
		}
		if (meets(o, &mt))
			lo = mid;
		else
			hi = mid;
	}
	x->capacity = lo;
	if (!(lo > 0)) {
		snprintf(x->why, sizeof x->why, "cannot meet the SLO even unloaded");
		return;
	}
	/* size the deployment and check it at the requested rate */
	int reps = (int)ceil(o->rate / lo);
	if (reps < 1)
		reps = 1;
	for (int tries = 0; tries < 8; tries++) {
		units(&c, x, reps);
		c.rate = o->rate;
		c.requests = eval_requests(&c);
		if (sim_serve_metrics_of(p->m, x->cost, &c, &mt, err, sizeof err) != 0) {
			pp_strlcpy(x->why, err, sizeof x->why);
			return;
		}
		if (meets(o, &mt))
			break;
		reps++;
	}
	if (!meets(o, &mt)) {
		snprintf(x->why, sizeof x->why, "misses the SLO at the requested rate even with %d %s", reps,
			 x->pd_p > 0 ? "units" : "replicas");
		return;
	}
	x->at_rate = mt;
	x->at_cfg = c;
	x->units = reps;
	x->spares = (x->pd_p > 0 ? 2 : 1) * o->failures;
	x->availability = 1.0;
	if (o->availability > 0) {
		/* the spares that keep the SLO's replicas up the stated share of the time; prefill and
		 * decode replicas of disaggregated units are two pools, each held to the square root
		 * of the target so that both are up together at least the target */
		int k = 0;
		if (x->pd_p > 0) {
			double ap = 0.0, ad = 0.0;
			int kp = plan_spares(reps * x->pd_p, x->tp * x->pp, o->failures_per_gpu_hour, o->repair_hours,
					     sqrt(o->availability), 1000, &ap);
			int kd = plan_spares(reps * x->pd_d, x->tp * x->pp, o->failures_per_gpu_hour, o->repair_hours,
					     sqrt(o->availability), 1000, &ad);
			k = kp < 0 || kd < 0 ? -1 : kp + kd;
			x->availability = ap * ad;
		} else {
			k = plan_spares(c.replicas, x->tp * x->pp, o->failures_per_gpu_hour, o->repair_hours, o->availability,
					1000, &x->availability);
		}
		if (k < 0) {
			snprintf(x->why, sizeof x->why, "no number of spares up to 1000 reaches availability %g", o->availability);
			return;
		}
		x->spares = k;
	}
	x->replicas = c.replicas + x->spares;
	int gpus = x->replicas * x->tp * x->pp;
	x->usd_per_hour = plan_rent_usd(x->price, gpus, 1.0);
	/* cost per output token at the requested rate, spares included */
	x->usd_per_mtok = mt.output_tokens_per_s > 0 ? x->usd_per_hour / 3600.0 / mt.output_tokens_per_s * 1e6 : 0.0;
	x->ok = true;
}

static void *
worker(void *arg)
{
	spool *p = arg;
	for (;;) {
		if (p->o->stop && *p->o->stop)
			break;
		size_t i = atomic_fetch_add(&p->next, 1);
		if (i >= p->n)
			break;
		eval(p, &p->c[i]);
		size_t d = atomic_fetch_add(&p->done, 1) + 1;
		if (p->o->progress)
			p->o->progress(p->o->progress_arg, d, p->n);
	}
	return NULL;
}

static void
add_disagg(cJSON *d, const scand *x)
{
	char pd[32] = "off";
	if (x->pd_p > 0)
		snprintf(pd, sizeof pd, "%d:%d", x->pd_p, x->pd_d);
	cJSON_AddStringToObject(d, "disaggregation", pd);
}

static int
cmp_cand(const void *x, const void *y)
{
	const scand *a = x, *b = y;
	if (a->ok != b->ok)
		return a->ok ? -1 : 1;
	if (a->ok && a->usd_per_hour != b->usd_per_hour)
		return a->usd_per_hour < b->usd_per_hour ? -1 : 1;
	if (a->ok && a->at_rate.ttft.p99 != b->at_rate.ttft.p99)
		return a->at_rate.ttft.p99 < b->at_rate.ttft.p99 ? -1 : 1;
	int s = strcmp(a->system, b->system);
	if (s != 0)
		return s;
	if (a->tp != b->tp)
		return a->tp - b->tp;
	if (a->pp != b->pp)
		return a->pp - b->pp;
	if (a->weights != b->weights)
		return (int)a->weights - (int)b->weights;
	if (a->pd_p != b->pd_p)
		return a->pd_p - b->pd_p;
	if (a->pd_d != b->pd_d)
		return a->pd_d - b->pd_d;
	if (a->ep != b->ep)
		return a->ep - b->ep;
	if (a->attention_dp != b->attention_dp)
		return (int)a->attention_dp - (int)b->attention_dp;
	return a->max_num_seqs - b->max_num_seqs;
}
/* The 80% intervals of a deployment, from its engine's cross-validated errors
 * (sim_serve_interval): the capacity per unit as a throughput, the units needed at its two
 * ends, and the P99 latencies at the requested rate with that run again on engines as fast as
 * the capacity band's ends (sim_serve_speed, sim_serve_interval_banded). */
static int
add_intervals(cJSON *d, const model *m, const scand *x, char *err, size_t errlen)
{
	const sim_engine *e = &x->at_cfg.engine;
	double v[2];
	sim_serve_interval(e, SIM_IV_TPUT, x->capacity, &v[0], &v[1]);
	if (isfinite(v[0]) && v[0] > 0) {
		cJSON_AddItemToObject(d, "capacity_per_unit_interval", cJSON_CreateDoubleArray(v, 2));
		/* the units the SLO needed, as many more or fewer as the capacity is off */
		double u[2] = {ceil(x->units * x->capacity / v[1] - 1e-9), ceil(x->units * x->capacity / v[0] - 1e-9)};
		cJSON_AddItemToObject(d, "units_interval", cJSON_CreateDoubleArray(u, 2));
	}
	/* the run at the requested rate on the band's engines */
	double f[2];
	sim_serve_metrics b[2];
	bool banded = sim_engine_speeds(e, f);
	for (int k = 0; k < 2 && banded; k++) {
		int rc = sim_serve_speed(m, x->cost, &x->at_cfg, &x->at_rate, f[k], &b[k], err, errlen);
		if (rc != 0)
			return rc;
	}
	sim_serve_interval_banded(e, SIM_IV_TTFT, x->at_rate.ttft.p99,
				  banded ? (double[2]){b[0].ttft.p99, b[1].ttft.p99} : NULL, &v[0], &v[1]);
	if (isfinite(v[0]))
		cJSON_AddItemToObject(d, "ttft_p99_interval_s", cJSON_CreateDoubleArray(v, 2));
	sim_serve_interval_banded(e, SIM_IV_TPOT, x->at_rate.tpot.p99,
				  banded ? (double[2]){b[0].tpot.p99, b[1].tpot.p99} : NULL, &v[0], &v[1]);
	if (isfinite(v[0]))
		cJSON_AddItemToObject(d, "tpot_p99_interval_s", cJSON_CreateDoubleArray(v, 2));
	return 0;
}

/* A new candidate at the end of *cands: one replica of tp x pp GPUs of a system, its weights and
 * batch limit, the rest zero (unified, no experts sharded); NULL when out of memory. */
static scand *
add_cand(scand **cands, size_t *cap, size_t *n, const char *system, hw_cost *cost, double price, int tp, int pp,
	 hw_dtype weights, int max_num_seqs)
{
	if (PP_GROW(*cands, *cap, *n + 1) != 0)
		return NULL;
	scand *x = &(*cands)[(*n)++];
	memset(x, 0, sizeof *x);
	pp_strlcpy(x->system, system, sizeof x->system);
	x->cost = cost;
	x->price = price;
	x->tp = tp;
	x->pp = pp;
	x->weights = weights;
	x->max_num_seqs = max_num_seqs;
	x->ep = 1;
	return x;
}

int
plan_serve(const model *m, hw_db *db, const plan_serve_opts *o, cJSON **out, char *err, size_t errlen)
{
	*out = NULL;
	const model_tf *t = model_transformer(m);
	if (t == NULL)
		return pp_err(err, errlen, PP_EUSAGE, "%s is not a language model", model_name(m));
	if (!(o->rate > 0))
		return pp_err(err, errlen, PP_EUSAGE, "--rate must be positive");
	if (!(o->slo_ttft_s > 0) || !(o->slo_tpot_s > 0))
		return pp_err(err, errlen, PP_EUSAGE, "--slo-ttft-p99 and --slo-tpot-p99 are required");
	hw_cost **costs = calloc(o->nsystems, sizeof *costs);
	double *prices = calloc(o->nsystems, sizeof *prices);
	scand *cands = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	if (costs == NULL || prices == NULL) {
		rc = pp_err(err, errlen, PP_ENOMEM, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < o->nsystems; i++) {
		if ((rc = hw_cost_new(db, o->systems[i], &costs[i], err, errlen)) != 0) {
			rc = rc == PP_ENOTFOUND ? PP_EUSAGE : rc;
			goto done;
		}
		hw_price pr;
		if (hw_default_price(db, o->systems[i], &pr, err, errlen) != 0) {
			rc = PP_EUSAGE;
			goto done;
		}
		prices[i] = pr.usd_per_gpu_hour;
		const hw_system *sys = hw_cost_system(costs[i]);
		/* the weight formats asked for that the GPU runs */
		hw_dtype wts[4];
		int nw = 0;
		for (int w = 0; w < (o->nweights > 0 ? o->nweights : 1) && w < 4; w++) {
			hw_dtype d = o->nweights > 0 ? o->weights[w] : sim_serve_released_weights(m, &sys->gpu);
			if ((d == HW_FP8 || d == HW_FP4) && !(sys->gpu.peak_tflops[HW_FP8] > 0))
				continue;
			if (d == HW_FP4 && !(sys->gpu.peak_tflops[HW_FP4] > 0))
				continue;
			wts[nw++] = d;
		}
		for (int tp = 1; tp <= sys->gpus_per_node; tp *= 2) {
			if (t->heads % tp != 0)
				continue;
			for (int pp = 1; pp <= 2; pp++) {
				if (pp > 1 && tp < sys->gpus_per_node)
					continue; /* pipeline a replica only once TP fills the node */
				for (int w = 0; w < nw; w++) {
					/* unified at two batch limits; disaggregated 1:1 and 1:2 (decode
					 * holds the long-lived sequences) at the large one, unpipelined */
					static const int shapes[][3] = {{64, 0, 0}, {256, 0, 0}, {256, 1, 1}, {256, 1, 2}};
					for (int s = 0; s < 4; s++) {
						if (shapes[s][1] > 0 && (pp > 1 || !o->disaggregate))
							continue;
						scand *x = add_cand(&cands, &cap, &n, o->systems[i], costs[i], prices[i], tp, pp, wts[w],
								    shapes[s][0]);
						if (x == NULL) {
							rc = pp_err(err, errlen, PP_ENOMEM, "out of memory");
							goto done;
						}
						x->pd_p = shapes[s][1];
						x->pd_d = shapes[s][2];
					}
				}
			}
		}
		/* a MoE model's expert layouts: its experts over all of a replica's g GPUs (EP = g), with
		 * attention tensor-parallel inside a node or data-parallel on each GPU (then up to four
		 * nodes a replica: attention needs no link between them, the all-to-all crosses the
		 * NICs); unified replicas at a small and a large batch per attention rank */
		for (int g = 2; t->experts > 0 && g <= 4 * sys->gpus_per_node; g *= 2) {
			if (t->experts % g != 0)
				continue;
			for (int adp = 0; adp <= 1; adp++) {
				if (!adp && (g > sys->gpus_per_node || t->heads % g != 0))
					continue;
				for (int w = 0; w < nw; w++) {
					static const int seqs[] = {64, 256};
					for (int s = 0; s < 2; s++) {
						scand *x = add_cand(&cands, &cap, &n, o->systems[i], costs[i], prices[i], g, 1, wts[w], seqs[s]);
						if (x == NULL) {
							rc = pp_err(err, errlen, PP_ENOMEM, "out of memory");
							goto done;
						}
						x->ep = g;
						x->attention_dp = adp != 0;
					}
				}
			}
		}
	}
	spool p = {.c = cands, .n = n, .m = m, .o = o};
	atomic_init(&p.next, 0);
	atomic_init(&p.done, 0);
	int jobs = o->jobs > 0 ? o->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (jobs < 1)
		jobs = 1;
	pthread_t th[256];
	int started = 0;
	for (int i = 1; i < jobs && i < 256; i++)
		if (pthread_create(&th[started], NULL, worker, &p) == 0)
			started++;
	worker(&p);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	qsort(cands, n, sizeof *cands, cmp_cand);
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "kind", "plan-serve");
	cJSON_AddStringToObject(doc, "model", model_name(m));
	cJSON_AddNumberToObject(doc, "rate", o->rate);
	cJSON *slo = cJSON_AddObjectToObject(doc, "slo");
	cJSON_AddNumberToObject(slo, "ttft_p99_s", o->slo_ttft_s);
	cJSON_AddNumberToObject(slo, "tpot_p99_s", o->slo_tpot_s);
	cJSON_AddNumberToObject(slo, "e2e_p99_s", o->slo_e2e_s);
	cJSON_AddNumberToObject(doc, "failures_tolerated", o->failures);
	if (o->availability > 0) {
		cJSON *av = cJSON_AddObjectToObject(doc, "availability");
		cJSON_AddNumberToObject(av, "target", o->availability);
		cJSON_AddNumberToObject(av, "failures_per_gpu_hour", o->failures_per_gpu_hour);
		cJSON_AddNumberToObject(av, "repair_hours", o->repair_hours);
		cJSON_AddStringToObject(av, "source",
					"failures: Llama 3 (arXiv 2407.21783) 419 interruptions in 54 days on 16,384 H100 "
					"unless set; repair time an assumption unless set");
	}
	cJSON_AddNumberToObject(doc, "candidates_evaluated", (double)n);
	cJSON_AddBoolToObject(doc, "interrupted", o->stop && *o->stop);
	cJSON *arr = cJSON_AddArrayToObject(doc, "deployments");
	int shown = 0;
	for (size_t i = 0; i < n; i++) {
		const scand *x = &cands[i];
		if (!x->ok)
			continue;
		if (shown++ >= o->top)
			break;
		cJSON *d = cJSON_CreateObject();
		int d_gpus = x->replicas * x->tp * x->pp;
		cJSON_AddNumberToObject(d, "rank", shown);
		cJSON_AddStringToObject(d, "system", x->system);
		cJSON_AddNumberToObject(d, "tp", x->tp);
		cJSON_AddNumberToObject(d, "pp", x->pp);
		cJSON_AddStringToObject(d, "weights", hw_dtype_name(x->weights));
		cJSON_AddNumberToObject(d, "ep", x->ep);
		cJSON_AddBoolToObject(d, "attention_dp", x->attention_dp);
		cJSON_AddNumberToObject(d, "max_num_seqs", x->max_num_seqs);
		{
			/* the engine settings the unit was simulated with (base_cfg's defaults), for
			 * 'plan serve --export' */
			sim_serve_cfg sc;
			base_cfg(o, x, &sc);
			cJSON_AddNumberToObject(d, "max_num_batched_tokens", (double)sim_serve_budget(&sc));
			cJSON_AddStringToObject(d, "prefill",
						hw_pdef_choice_name(hw_pdef_get(HW_P_EN_PREFILL), sim_serve_prefill(&sc)));
			cJSON_AddStringToObject(d, "engine", sc.engine.name);
			cJSON_AddStringToObject(d, "kv_cache_dtype", hw_dtype_name(sc.kv_dtype));
			cJSON_AddNumberToObject(d, "gpu_memory_utilization", sc.gpu_memory_utilization);
			if (sc.spec != SIM_SPEC_OFF) {
				cJSON *sp = cJSON_AddObjectToObject(d, "speculative");
				cJSON_AddStringToObject(sp, "method", sim_spec_names[sc.spec]);
				cJSON_AddNumberToObject(sp, "tokens", sc.spec_tokens);
				cJSON_AddNumberToObject(sp, "accept", sc.spec_accept);
			}
			if ((rc = add_intervals(d, m, x, err, errlen)) != 0) {
				cJSON_Delete(d);
				cJSON_Delete(doc);
				goto done;
			}
		}
		add_disagg(d, x);
		cJSON_AddNumberToObject(d, "capacity_per_unit", x->capacity);
		cJSON_AddNumberToObject(d, "units", x->units);
		cJSON_AddNumberToObject(d, "replicas", x->replicas);
		cJSON_AddNumberToObject(d, "spares", x->spares);
		if (o->availability > 0)
			cJSON_AddNumberToObject(d, "availability", x->availability);
		cJSON_AddNumberToObject(d, "gpus", x->replicas * x->tp * x->pp);
		cJSON_AddNumberToObject(d, "price_usd_per_gpu_hour", x->price);
		cJSON_AddNumberToObject(d, "usd_per_hour", x->usd_per_hour);
		cJSON_AddNumberToObject(d, "usd_per_month", plan_rent_usd(x->price, d_gpus, PLAN_HOURS_PER_MONTH));
		cJSON_AddNumberToObject(d, "usd_per_million_output_tokens", x->usd_per_mtok);
		cJSON_AddNumberToObject(d, "ttft_p99_s", x->at_rate.ttft.p99);
		cJSON_AddNumberToObject(d, "tpot_p99_s", x->at_rate.tpot.p99);
		cJSON_AddNumberToObject(d, "e2e_p99_s", x->at_rate.e2e.p99);
		cJSON_AddNumberToObject(d, "headroom", (double)x->units * x->capacity / o->rate - 1.0);
		cJSON_AddItemToArray(arr, d);
	}
	cJSON *rej = cJSON_AddArrayToObject(doc, "rejected");
	for (size_t i = 0; i < n; i++) {
		const scand *x = &cands[i];
		if (x->ok)
			continue;
		cJSON *d = cJSON_CreateObject();
		cJSON_AddStringToObject(d, "system", x->system);
		cJSON_AddNumberToObject(d, "tp", x->tp);
		cJSON_AddNumberToObject(d, "pp", x->pp);
		cJSON_AddStringToObject(d, "weights", hw_dtype_name(x->weights));
		cJSON_AddNumberToObject(d, "ep", x->ep);
		cJSON_AddBoolToObject(d, "attention_dp", x->attention_dp);
		cJSON_AddNumberToObject(d, "max_num_seqs", x->max_num_seqs);
		add_disagg(d, x);
		cJSON_AddStringToObject(d, "why", x->why[0] ? x->why : "not evaluated (interrupted)");
		cJSON_AddItemToArray(rej, d);
	}
	*out = doc;
done:
	for (size_t i = 0; costs && i < o->nsystems; i++)
		hw_cost_free(costs[i]);
	free(costs);
	free(prices);
	free(cands);
	return rc;
}

/* ---- MLPerf scenarios on one deployment ------------------------------------------------------ */

static const char *const scenario_names[] = {"offline", "server", "interactive"};

int
plan_scenario_parse(const char *s, plan_scenario *out)
{
	for (int i = 0; i < 3; i++)
		if (!strcmp(s, scenario_names[i])) {
			*out = (plan_scenario)i;
			return 0;
		}
	return -1;
}

const char *
plan_scenario_name(plan_scenario s)
{
	return (unsigned)s < 3 ? scenario_names[s] : "?";
}

int
plan_rate_search(plan_rate_pass pass, void *arg, double hi, double tol, double *rate, int *steps, char *err,
		 size_t errlen)
{
	int n = 0;
	bool ok = false;
	*rate = 0.0;
	if (!(hi > 0) || !(tol > 0) || !(tol < 1))
		return pp_err(err, errlen, PP_EUSAGE, "a rate search needs an upper bound above 0 and a tolerance in (0, 1)");
	int rc = pass(arg, hi, &ok, err, errlen);
	n++;
	double lo = 0.0;
	if (rc == 0 && ok)
		lo = hi;
	/* 64 halvings reach any tolerance a double can hold */
	for (int it = 0; rc == 0 && lo < hi && hi - lo > tol * hi && it < 64; it++) {
		double mid = (lo + hi) / 2;
		if ((rc = pass(arg, mid, &ok, err, errlen)) != 0)
			break;
		n++;
		if (ok)
			lo = mid;
		else
			hi = mid;
	}
	if (steps)
		*steps = n;
	*rate = lo;
	return rc;
}

void
plan_scenario_opts_init(plan_scenario_opts *o)
{
	memset(o, 0, sizeof *o);
	o->scenario = PLAN_SCEN_SERVER;
	sim_serve_cfg_init(&o->cfg);
	o->offline_requests = 4096;
	o->duration_s = 600.0; /* MLPerf's minimum run: ten minutes */
	o->tolerance = 0.01;
}

typedef struct scen_ctx {
	const model *m;
	const hw_cost *cost;
	const plan_scenario_opts *o;
	sim_serve_metrics last; /* of the highest passing rate so far */
	double last_rate;
} scen_ctx;

/* A Poisson run at `rate` passes when not saturated and within both P99 limits. */
static int
scen_pass(void *arg, double rate, bool *ok, char *err, size_t errlen)
{
	scen_ctx *x = arg;
	sim_serve_cfg c = x->o->cfg;
	c.arrival = SIM_ARR_POISSON;
	c.rate = rate;
	double n = ceil(rate * x->o->duration_s);
	c.requests = n < 1000 ? 1000 : n > 8192 ? 8192 : (int64_t)n;
	sim_serve_metrics mt;
	int rc = sim_serve_metrics_of(x->m, x->cost, &c, &mt, err, errlen);
	if (rc != 0)
		return rc;
	*ok = !mt.saturated && mt.ttft.p99 <= x->o->ttft_p99_s && mt.tpot.p99 <= x->o->tpot_p99_s;
	if (*ok && rate >= x->last_rate) {
		x->last = mt;
		x->last_rate = rate;
	}
	return 0;
}

static void
add_metrics(cJSON *d, const char *key, const sim_serve_metrics *m)
{
	cJSON *x = cJSON_AddObjectToObject(d, key);
	cJSON_AddNumberToObject(x, "requests_per_s", m->requests_per_s);
	cJSON_AddNumberToObject(x, "output_tokens_per_s", m->output_tokens_per_s);
	cJSON_AddNumberToObject(x, "ttft_mean_s", m->ttft.mean);
	cJSON_AddNumberToObject(x, "ttft_p99_s", m->ttft.p99);
	cJSON_AddNumberToObject(x, "tpot_mean_s", m->tpot.mean);
	cJSON_AddNumberToObject(x, "tpot_p99_s", m->tpot.p99);
	cJSON_AddBoolToObject(x, "saturated", m->saturated);
}

int
plan_serve_scenario(const model *m, const hw_cost *cost, const plan_scenario_opts *o, cJSON **out, char *err,
		    size_t errlen)
{
	*out = NULL;
	if (o->scenario != PLAN_SCEN_OFFLINE && (!(o->ttft_p99_s > 0) || !(o->tpot_p99_s > 0)))
		return pp_err(err, errlen, PP_EUSAGE, "the %s scenario needs P99 TTFT and TPOT limits (--slo-ttft-p99, "
			      "--slo-tpot-p99, or a --dataset that states them)", plan_scenario_name(o->scenario));
	if (o->offline_requests < 1 || !(o->tolerance > 0) || !(o->tolerance < 1) || !(o->duration_s > 0))
		return pp_err(err, errlen, PP_EUSAGE, "a scenario needs a request count, a duration and a tolerance in (0, 1)");
	scen_ctx x;
	memset(&x, 0, sizeof x);
	x.m = m;
	x.cost = cost;
	x.o = o;
	/* Offline, and the search's first upper bound: every request at once.  A Poisson rate well
	 * above a batch's throughput is not sustained where the batch ran the engine at its best;
	 * but a batch of every request at once can run it worse than arrivals do (an engine that
	 * admits more sequences than the KV cache holds preempts them and computes them again), so
	 * a bound that passes is doubled until one fails. */
	sim_serve_cfg c = o->cfg;
	c.arrival = SIM_ARR_BATCH;
	c.requests = o->offline_requests;
	sim_serve_metrics off;
	int64_t issued;
	int rc = sim_serve_offline(m, cost, &c, o->duration_s, SIM_SERVE_OFFLINE_MAX_PER_REPLICA, &off, &issued, err,
				   errlen);
	if (rc != 0)
		return rc;
	cJSON *d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "kind", "plan-scenario");
	cJSON_AddStringToObject(d, "model", model_name(m));
	cJSON_AddStringToObject(d, "system", hw_cost_system(cost)->name);
	cJSON_AddStringToObject(d, "scenario", plan_scenario_name(o->scenario));
	cJSON_AddNumberToObject(d, "tp", o->cfg.tp);
	cJSON_AddNumberToObject(d, "pp", o->cfg.pp);
	cJSON_AddNumberToObject(d, "replicas", o->cfg.replicas);
	{
		/* as digits: a double prints 2^53 with 15 significant digits, which does not reproduce it */
		char seed[24];
		snprintf(seed, sizeof seed, "%" PRIu64, (uint64_t)o->cfg.seed);
		cJSON_AddRawToObject(d, "seed", seed);
	}
	add_metrics(d, "offline", &off);
	cJSON_AddNumberToObject(d, "offline_requests", (double)issued);
	if (o->scenario == PLAN_SCEN_OFFLINE) {
		cJSON_AddNumberToObject(d, "rate", off.requests_per_s);
		*out = d;
		return 0;
	}
	double rate = 0, hi = 1.2 * off.requests_per_s;
	int steps = 0;
	for (int k = 0;; k++) {
		int n = 0;
		if ((rc = plan_rate_search(scen_pass, &x, hi, o->tolerance, &rate, &n, err, errlen)) != 0) {
			cJSON_Delete(d);
			return rc;
		}
		steps += n;
		if (rate < hi || k == PLAN_SCENARIO_DOUBLINGS)
			break;
		hi *= 2.0;
	}
	cJSON *lim = cJSON_AddObjectToObject(d, "limits");
	cJSON_AddNumberToObject(lim, "ttft_p99_s", o->ttft_p99_s);
	cJSON_AddNumberToObject(lim, "tpot_p99_s", o->tpot_p99_s);
	cJSON_AddNumberToObject(d, "rate", rate);
	cJSON_AddNumberToObject(d, "tolerance", o->tolerance);
	cJSON_AddNumberToObject(d, "evaluations", steps);
	if (rate > 0)
		add_metrics(d, "at_rate", &x.last);
	*out = d;
	return 0;
}
