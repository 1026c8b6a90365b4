/*
 * search.c -- plan_train: enumerate, prune, estimate, simulate, rank.
 *
 * Work is split across threads by an atomic index over the candidate array; every result is
 * written to its candidate's slot and the final order is a sort with a total tie-break, so the
 * ranking does not depend on the number of threads or their timing.
 */
#include "config.h"
#include "planner/plan_int.h"

#include <cJSON.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void
plan_train_opts_init(plan_train_opts *o)
{
	memset(o, 0, sizeof *o);
	o->top = 10;
	o->simulate = 16;
	o->objective = PLAN_TIME;
	o->life_years = PLAN_LIFE_YEARS;
	o->usd_per_kwh = PLAN_USD_PER_KWH;
	o->pue = PLAN_PUE;
	o->memory_headroom = PLAN_MEMORY_HEADROOM;
}

double
plan_uncertainty(const sim_metrics *m)
{
	if (isfinite(m->step_lo_s) && isfinite(m->step_hi_s) && m->step_time_s > 0)
		return (m->step_hi_s - m->step_lo_s) / (2.0 * m->step_time_s);
	double d = m->prov_share[HW_PROV_DATASHEET];
	if (!(d >= 0.0) || d > 1.0)
		d = 1.0;
	return d * PLAN_UNCERTAINTY_DATASHEET + (1.0 - d) * PLAN_UNCERTAINTY_FITTED;
}

static const char *const sched_short[] = {"gpipe", "1f1b", "interleaved", "zb-h1"};

/* Appends to a key what printf's %s and %0*lld would (the planner makes a key for each of
 * thousands of layouts: formatting them by hand takes a tenth of snprintf's time). */
static char *
put_str(char *p, const char *s)
{
	while (*s)
		*p++ = *s++;
	return p;
}

static char *
put_int(char *p, long long v, int width)
{
	char d[24];
	int n = 0;
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
	do
		d[n++] = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0) {
		*p++ = '-';
		width--;
	}
	for (int i = n; i < width; i++)
		*p++ = '0';
	while (n > 0)
		*p++ = d[--n];
	return p;
}

void
plan_key(const sim_train_cfg *c, char *buf, size_t n)
{
	/* "tp%02d pp%03d cp%02d ep%03d dp%05d %s v%d z%d%s mb%03lld %s%s %s" */
	char k[256], *p = k;
	p = put_int(put_str(p, "tp"), c->tp, 2);
	p = put_int(put_str(p, " pp"), c->pp, 3);
	p = put_int(put_str(p, " cp"), c->cp, 2);
	p = put_int(put_str(p, " ep"), c->ep, 3);
	p = put_int(put_str(p, " dp"), c->dp, 5);
	p = put_str(put_str(p, " "), sched_short[c->schedule]);
	p = put_int(put_str(p, " v"), c->vpp, 0);
	p = put_int(put_str(p, " z"), c->zero, 0);
	p = put_str(p, c->fsdp ? "f" : "");
	if (sim_dp_replicas(c) > 1)
		p = put_int(put_str(p, " h"), sim_dp_shard(c), 0);
	p = put_int(put_str(p, " mb"), (long long)c->micro_batch, 3);
	p = put_str(put_str(p, " "), sim_recompute_name(c->recompute));
	p = put_str(p, c->sequence_parallel ? " sp" : "");
	p = put_str(put_str(p, " "), hw_dtype_name(c->dtype));
	*p = '\0';
	pp_strlcpy(buf, k, n);
}

/* ---- enumeration --------------------------------------------------------------------------- */

static int
push(plan_cand **arr, size_t *n, size_t *cap, const sim_train_cfg *c)
{
	if (PP_GROW(*arr, *cap, *n + 1) != 0)
		return PP_ENOMEM;
	plan_cand *x = &(*arr)[(*n)++];
	memset(x, 0, sizeof *x);
	x->cfg = *c;
	x->state = CAND_NEW;
	return 0;
}

#define DIM_MAX 512

enum { DIM_EVERY = 0, DIM_DOUBLING = -1 };

/* L layers over n stages: evenly, or with at most two stages one layer short and at least `min`
 * layers a stage. */
static bool
even_enough(int64_t L, int64_t n, int64_t min)
{
	int64_t per = (L + n - 1) / n;
	return L % n == 0 || (L / n >= min && per * n - L <= 2);
}

/* The values of one dimension: the pinned ones; else from lo to hi every integer (DIM_EVERY),
 * lo, 2 lo, 4 lo ... (DIM_DOUBLING), or the divisors of `of` (of > 0). */
static int
dim_values(const plan_pin *pin, int lo, int hi, int64_t of, int *out)
{
	int n = 0;
	if (pin->n > 0) {
		for (int i = 0; i < pin->n && n < DIM_MAX; i++)
			out[n++] = pin->v[i];
		return n;
	}
	for (int64_t v = lo; v <= hi && n < DIM_MAX; v = of == DIM_DOUBLING ? v * 2 : v + 1)
		if (of <= 0 || of % v == 0)
			out[n++] = (int)v;
	return n;
}

/* Every combination of the search dimensions for one GPU count that is worth checking.  The
 * divisibility rules are left to sim_train_check, which names the failed one.  Pinned values
 * are tried as given, past the rules of thumb below (the user asked for them). */
int
plan_enumerate(const model *m, const hw_system *sys, int gpus, const plan_train_opts *o, int64_t seq, plan_cand **out,
	       size_t *nout)
{
	const model_tf *t = model_transformer(m);
	plan_cand *arr = NULL;
	size_t n = 0, cap = 0;
	int domain = sys->scaleup_domain > 0 ? sys->scaleup_domain : sys->gpus_per_node;
	hw_dtype dts[4] = {HW_BF16};
	int ndt = 1;
	if (o->ndtypes > 0) {
		ndt = o->ndtypes;
		memcpy(dts, o->dtypes, (size_t)ndt * sizeof *dts);
	}
	const plan_framework *runs = o->framework; /* what the framework runs; o->fw: how fast */
	sim_train_cfg base;
	sim_train_cfg_init(&base);
	sim_train_cfg_framework(&base, o->fw);
	base.gpus = gpus;
	base.global_batch = o->global_batch;
	base.seq = seq;
	base.lora_rank = o->lora_rank;
	base.lora_modules = o->lora_modules;
	base.base_nf4 = o->base_nf4;
	base.sample_len = o->sample_len;
	/* flash attention keeps no score matrix and recomputes it anyway: selective recomputation is
	 * the same as none, so by default only none and full are tried (and selective with unfused
	 * attention) */
	unsigned recomputes = o->recomputes ? o->recomputes : (1u << SIM_RECOMPUTE_NONE) | (1u << SIM_RECOMPUTE_FULL);
	if (o->recomputes == 0 && base.attention == SIM_ATTN_UNFUSED)
		recomputes |= 1u << SIM_RECOMPUTE_SELECTIVE;
	int mbs[DIM_MAX], nmb = dim_values(&o->micro_batch, 1, 16, DIM_DOUBLING, mbs);
	if (t == NULL) {
		/* CNNs: data parallelism, micro-batch and dtype */
		nmb = dim_values(&o->micro_batch, 1, 1024, DIM_DOUBLING, mbs);
		for (int di = 0; di < ndt; di++)
			for (int k = 0; k < nmb; k++) {
				sim_train_cfg c = base;
				c.dtype = dts[di];
				c.micro_batch = mbs[k];
				if (push(&arr, &n, &cap, &c) != 0)
					goto oom;
			}
		*out = arr;
		*nout = n;
		return 0;
	}
	int64_t L = t->layers;
	int tps[DIM_MAX], ntp = dim_values(&o->tp, 1, gpus, gpus, tps);
	for (int ti = 0; ti < ntp; ti++) {
		int tp = tps[ti];
		if (o->tp.n == 0 && (gpus % tp != 0 || (!o->tp_across && tp > domain) || t->heads % tp != 0))
			continue;
		if (gpus % tp != 0)
			continue;
		int cps[DIM_MAX], ncp = dim_values(&o->cp, 1, gpus / tp, DIM_DOUBLING, cps);
		for (int ci = 0; ci < ncp; ci++) {
			int cp = cps[ci];
			/* context parallelism only for long sequences: chunks of at least 4096 tokens */
			if (o->cp.n == 0 && cp > 1 && (seq < 8192 || seq / cp < 4096))
				break;
			if ((gpus / tp) % cp != 0)
				continue;
			int rest = gpus / tp / cp;
			int pps[DIM_MAX], npp = dim_values(&o->pp, 1, rest < L ? rest : (int)L, rest, pps);
			for (int pi = 0; pi < npp; pi++) {
				int pp = pps[pi];
				if (rest % pp != 0 || pp > L)
					continue;
				/* An uneven pipeline only as Llama 3 405B ran one (126 layers on 16 stages: the
				 * two end stages, which also hold the embedding and the head, one layer short)
				 * with at least 4 layers a stage.  80 layers on 41 stages of one or two, or on 11
				 * stages of 4 and 8, are layouts nobody launches, and a node count with an odd
				 * prime factor would otherwise force them on capacity plans. */
				if (o->pp.n == 0 && !even_enough(L, pp, 4))
					continue;
				int dp = rest / pp;
				int eps[DIM_MAX], nep = dim_values(&o->ep, 1, t->experts > 0 ? dp * cp : 1, (int64_t)dp * cp, eps);
				for (int ei = 0; ei < nep; ei++) {
					int ep = eps[ei];
					if (o->ep.n == 0 && t->experts > 0 && (t->experts % ep != 0 || (dp * cp) % ep != 0))
						continue;
					/* schedules: GPipe only when asked (it is 1F1B's bubble with more memory),
					 * 1F1B, the interleaved one with each valid chunk count, ZB-H1 */
					int nsched = 0;
					struct { sim_schedule s; int v; } scheds[24];
					unsigned want = o->schedules ? o->schedules
								     : (1u << SIM_1F1B) | (1u << SIM_INTERLEAVED) | (1u << SIM_ZB_H1);
					bool vpp_ok[16] = {false};
					int vpps[DIM_MAX], nv = dim_values(&o->vpp, 1, 8, DIM_EVERY, vpps);
					for (int k = 0; k < nv; k++)
						if (vpps[k] >= 1 && vpps[k] < 16)
							vpp_ok[vpps[k]] = true;
					if (pp == 1) {
						/* no pipeline: the schedule is moot; one entry */
						scheds[nsched].s = SIM_1F1B, scheds[nsched++].v = 1;
					} else {
						static const sim_schedule plain[] = {SIM_GPIPE, SIM_1F1B, SIM_ZB_H1};
						for (int k = 0; k < 3; k++)
							if ((want & (1u << plain[k])) && vpp_ok[1])
								scheds[nsched].s = plain[k], scheds[nsched++].v = 1;
						/* every virtual stage needs a layer; uneven splits as sim_chunk_layers */
						if (want & (1u << SIM_INTERLEAVED))
							for (int v = 2; v < 16 && nsched < 23; v++)
								if (vpp_ok[v] && (o->vpp.n > 0 || (L >= (int64_t)pp * v && even_enough(L, (int64_t)pp * v, 1))))
									scheds[nsched].s = SIM_INTERLEAVED, scheds[nsched++].v = v;
					}
					int zs[DIM_MAX], nz = dim_values(&o->zero, 0, 3, DIM_EVERY, zs);
					for (int si = 0; si < nsched; si++)
						for (int zi = 0; zi < nz; zi++) {
							int zero = zs[zi];
							if (o->zero.n == 0 && zero > 0 && dp * cp == 1)
								break;
							if (o->zero.n == 0 && zero >= 2 && pp > 1 && !(runs && runs->zero23_with_pp))
								break; /* DeepSpeed and FSDP shard over data parallelism without PP */
							int shards[PLAN_PIN_MAX + 1], nsh = 0;
							if (o->dp_shard.n > 0) {
								for (int q = 0; q < o->dp_shard.n; q++) {
									int v = o->dp_shard.v[q];
									if (v >= 1 && v <= dp && dp % v == 0 && (v == dp || zero >= 1))
										shards[nsh++] = v == dp ? 0 : v;
								}
							} else {
								/* ZeRO-2/3 over several scale-up domains: also sharded within one */
								shards[nsh++] = 0;
								int dom = domain / (tp * cp);
								if (zero >= 2 && dom >= 1 && dom < dp && dp % dom == 0)
									shards[nsh++] = dom;
							}
							for (int hi = 0; hi < nsh; hi++)
								for (int k = 0; k < nmb; k++)
									for (int rc = 0; rc < 3; rc++) {
										if (!(recomputes & (1u << rc)))
											continue;
										for (int sp = 0; sp <= (tp > 1 ? 1 : 0); sp++)
											for (int di = 0; di < ndt; di++) {
												sim_train_cfg c = base;
												c.tp = tp;
												c.cp = cp;
												c.pp = pp;
												c.dp = dp;
												c.ep = ep;
												c.schedule = scheds[si].s;
												c.vpp = scheds[si].v;
												c.zero = zero;
												c.fsdp = zero == 3 && runs != NULL && runs->fsdp;
												c.dp_shard = shards[hi];
												c.micro_batch = mbs[k];
												c.recompute = (sim_recompute)rc;
												c.sequence_parallel = sp;
												c.dtype = dts[di];
												if (runs != NULL && !plan_framework_runs(runs, m, &c, NULL, 0))
													continue;
												if (push(&arr, &n, &cap, &c) != 0)
													goto oom;
											}
									}
						}
				}
			}
		}
	}
	*out = arr;
	*nout = n;
	return 0;
oom:
	free(arr);
	return PP_ENOMEM;
}

/* ---- parallel evaluation ------------------------------------------------------------------- */

typedef struct pool {
	plan_cand *c;
	size_t n;
	atomic_size_t next, done;
	const model *m;
	const hw_cost *cost;
	const hw_system *sys;
	bool simulate; /* false: check + memory + estimate; true: full simulation */
	const plan_train_opts *o;
	atomic_int oom;
} pool;

/* The worst stages for memory: the first (most micro-batches in flight), the second (a full
 * layer count when the first gives one up) and the last (the logits).  A layout fits when each
 * stays within the GPU's memory less the headroom. */
static bool
fits(const model *m, const hw_system *sys, const sim_train_cfg *c, double headroom, sim_mem *worst)
{
	int stages[3] = {0, c->pp > 1 ? 1 : 0, c->pp - 1};
	bool ok = true;
	memset(worst, 0, sizeof *worst);
	for (int i = 0; i < 3; i++) {
		if ((i > 0 && stages[i] == stages[i - 1]) || (i == 2 && stages[2] == stages[0]))
			continue; /* a stage counted already (pp 1 or 2) */
		sim_mem mm;
		sim_train_memory(m, sys, c, stages[i], &mm);
		if (mm.total > worst->total)
			*worst = mm;
		ok &= mm.total <= mm.capacity * (1.0 - headroom);
	}
	return ok;
}

static void
eval_one(pool *p, plan_cand *x)
{
	char err[256];
	if (!p->simulate) {
		sim_train_cfg c = x->cfg;
		if (sim_train_check(p->m, p->sys, &c, err, sizeof err) != 0) {
			x->state = CAND_INVALID;
			pp_strlcpy(x->why, err, sizeof x->why); /* for "no valid layout" */
			return;
		}
		x->cfg = c;
		if (!fits(p->m, p->sys, &c, p->o->memory_headroom, &x->mem)) {
			x->state = CAND_OOM;
			return;
		}
		if (model_transformer(p->m) == NULL) {
			/* CNNs have no closed form here: simulate them directly (they are few) */
			x->est_s = 0.0;
			x->state = CAND_ESTIMATED;
			return;
		}
		if (sim_train_estimate(p->m, p->cost, &c, &x->est_s, err, sizeof err) != 0) {
			x->state = CAND_INVALID;
			return;
		}
		x->state = CAND_ESTIMATED;
		return;
	}
	sim_train_result *r;
	if (sim_train(p->m, p->cost, &x->cfg, &r, err, sizeof err) != 0) {
		if (strstr(err, "out of memory") != NULL)
			atomic_store(&p->oom, 1);
		x->state = CAND_INVALID;
		pp_strlcpy(x->why, err, sizeof x->why); /* said when no layout of the count is left */
		return;
	}
	x->metrics = *sim_train_metrics(r);
	x->step_s = x->metrics.step_time_s;
	x->state = CAND_SIMULATED;
	sim_train_result_free(r);
}

static void *
worker(void *arg)
{
	pool *p = arg;
	for (;;) {
		if (p->o->stop != NULL && *p->o->stop)
			break;
		size_t i = atomic_fetch_add(&p->next, 1);
		if (i >= p->n)
			break;
		eval_one(p, &p->c[i]);
		atomic_fetch_add(&p->done, 1);
	}
	return NULL;
}

static int
ncores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

/* Runs eval_one over p->c on `jobs` threads; the calling thread reports progress. */
static void
run_pool(pool *p, int jobs, size_t base_done, size_t total)
{
	if (jobs <= 0)
		jobs = ncores();
	if ((size_t)jobs > p->n)
		jobs = p->n > 0 ? (int)p->n : 1;
	pthread_t th[256];
	int started = 0;
	for (int i = 1; i < jobs && i < 256; i++)
		if (pthread_create(&th[started], NULL, worker, p) == 0)
			started++;
	/* this thread works too, reporting progress between items */
	for (;;) {
		if (p->o->stop != NULL && *p->o->stop)
			break;
		size_t i = atomic_fetch_add(&p->next, 1);
		if (i >= p->n)
			break;
		eval_one(p, &p->c[i]);
		size_t d = atomic_fetch_add(&p->done, 1) + 1;
		if (p->o->progress != NULL && (d % 64 == 0 || d == p->n))
			p->o->progress(p->o->progress_arg, base_done + d, total);
	}
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	if (p->o->progress != NULL)
		p->o->progress(p->o->progress_arg, base_done + atomic_load(&p->done), total);
}

/* ---- ranking ------------------------------------------------------------------------------- *
 *
 * Candidates are ordered by a value (the estimate, then the simulated step) and ties by their
 * key string (plan_key), the order the reports print.  The strings are made once per candidate
 * and sorted once, so that each candidate carries its key's rank; the sorts then compare two
 * numbers and move small records (the candidates themselves are over a kilobyte), and permute
 * the candidates once at the end.  The order is the one comparing strings gave. */

/* The key strings of a count's candidates, sorted through an index array (moving 4-byte indices,
 * not 128-byte strings). */
static _Thread_local const char (*sort_keys)[128];

static int
cmp_keyed(const void *x, const void *y)
{
	return strcmp(sort_keys[*(const uint32_t *)x], sort_keys[*(const uint32_t *)y]);
}

/* Sets every candidate's key_rank. */
static int
rank_keys(plan_cand *c, size_t n)
{
	char(*k)[128] = malloc((n ? n : 1) * sizeof *k);
	uint32_t *idx = malloc((n ? n : 1) * sizeof *idx);
	if (k == NULL || idx == NULL) {
		free(k);
		free(idx);
		return PP_ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		plan_key(&c[i].cfg, k[i], sizeof k[i]);
		idx[i] = (uint32_t)i;
	}
	/* qsort has no context argument in C11: the keys go through a pointer of this thread's */
	sort_keys = (const char(*)[128])k;
	qsort(idx, n, sizeof *idx, cmp_keyed);
	sort_keys = NULL;
	uint32_t r = 0;
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && strcmp(k[idx[i]], k[idx[i - 1]]) != 0)
			r++;
		c[idx[i]].key_rank = r;
	}
	free(k);
	free(idx);
	return 0;
}

/* What the sorts compare, apart from the candidate. */
typedef struct sortrec {
	double v;      /* est_s or step_s */
	uint32_t key;  /* key_rank */
	bool valid;    /* has the value */
	uint32_t idx;
} sortrec;

/* Ascending by the value, then by key; candidates without the value last. */
static int
cmp_rec(const void *x, const void *y)
{
	const sortrec *a = x, *b = y;
	if (a->valid != b->valid)
		return a->valid ? -1 : 1;
	if (a->valid && a->v != b->v)
		return a->v < b->v ? -1 : 1;
	return a->key < b->key ? -1 : a->key > b->key;
}

/* Sorts c[0..n) by estimate (by_step false: candidates estimated or further have one) or by
 * simulated step time. */
static int
sort_cands(plan_cand *c, size_t n, bool by_step)
{
	if (n < 2)
		return 0;
	sortrec *r = malloc(n * sizeof *r);
	plan_cand *tmp = malloc(n * sizeof *tmp);
	if (r == NULL || tmp == NULL) {
		free(r);
		free(tmp);
		return PP_ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		r[i].valid = by_step ? c[i].state == CAND_SIMULATED : c[i].state >= CAND_ESTIMATED;
		r[i].v = by_step ? c[i].step_s : c[i].est_s;
		r[i].key = c[i].key_rank;
		r[i].idx = (uint32_t)i;
	}
	qsort(r, n, sizeof *r, cmp_rec);
	for (size_t i = 0; i < n; i++)
		tmp[i] = c[r[i].idx];
	memcpy(c, tmp, n * sizeof *c);
	free(r);
	free(tmp);
	return 0;
}

/* Why a runner-up is slower than the winner: the part of its step that grew most. */
static void
why_lost(const plan_cand *w, plan_cand *x)
{
	const sim_metrics *a = &w->metrics, *b = &x->metrics;
	double d_step = b->step_time_s - a->step_time_s;
	if (d_step <= 0) {
		snprintf(x->why, sizeof x->why, "as fast as the winner; ranked after it by its key");
		return;
	}
	struct { const char *what; double d; } parts[] = {
		{"more pipeline bubble", b->bubble_fraction * b->step_time_s - a->bubble_fraction * a->step_time_s},
		{"more exposed communication", b->exposed_comm_s - a->exposed_comm_s},
		{"more recomputation", (b->hfu - b->mfu) * b->step_time_s - (a->hfu - a->mfu) * a->step_time_s},
		{"slower compute (smaller or less efficient kernels)", b->compute_s - a->compute_s},
	};
	int best = 0;
	for (int i = 1; i < 4; i++)
		if (parts[i].d > parts[best].d)
			best = i;
	snprintf(x->why, sizeof x->why, "+%.1f%% step time: %s (+%.3g s)", 100.0 * d_step / a->step_time_s,
		 parts[best].what, parts[best].d);
}

static double
usd_per_mtok(double price, int gpus, double step, double tokens)
{
	if (!(price > 0) || !(step > 0) || !(tokens > 0))
		return 0.0;
	return plan_usd_per_mtok(plan_rent_usd(price, gpus, step / 3600.0), tokens);
}

/* ---- the search ---------------------------------------------------------------------------- */

void
plan_train_result_free(plan_train_result *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->ncounts; i++)
		free(r->counts[i].cands);
	free(r->counts);
	free(r->prices);
	free(r);
}

const sim_train_cfg *
plan_train_winner(const plan_train_result *r)
{
	if (r->ncounts == 0 || r->counts[0].nbest == 0)
		return NULL;
	return &r->counts[0].cands[0].cfg;
}

size_t
plan_train_ncounts(const plan_train_result *r)
{
	return r->ncounts;
}

int
plan_train_gpus_at(const plan_train_result *r, size_t i)
{
	return i < r->ncounts ? r->counts[i].gpus : 0;
}

const sim_train_cfg *
plan_train_winner_at(const plan_train_result *r, size_t i, double *step_s)
{
	if (i >= r->ncounts || r->counts[i].nbest == 0)
		return NULL;
	if (step_s != NULL)
		*step_s = r->counts[i].cands[0].step_s;
	return &r->counts[i].cands[0].cfg;
}

bool
plan_train_interrupted(const plan_train_result *r)
{
	return r->interrupted;
}

/* Why nothing was enumerated (pinned values that do not divide, a framework that runs none of
 * them): the first pinned value of each dimension, checked as 'simulate train' would. */
static void
diagnose(const model *m, const hw_system *sys, int gpus, const plan_train_opts *o, int64_t seq, char *why, size_t n)
{
	sim_train_cfg c;
	sim_train_cfg_init(&c);
	c.gpus = gpus;
	c.global_batch = o->global_batch;
	c.seq = seq;
	c.lora_rank = o->lora_rank;
	c.lora_modules = o->lora_modules;
	c.base_nf4 = o->base_nf4;
	c.sample_len = o->sample_len;
	c.tp = o->tp.n ? o->tp.v[0] : 1;
	c.pp = o->pp.n ? o->pp.v[0] : 1;
	c.cp = o->cp.n ? o->cp.v[0] : 1;
	c.ep = o->ep.n ? o->ep.v[0] : 1;
	c.vpp = o->vpp.n ? o->vpp.v[0] : 1;
	c.zero = o->zero.n ? o->zero.v[0] : 0;
	c.dp_shard = o->dp_shard.n ? o->dp_shard.v[0] : 0;
	c.micro_batch = o->micro_batch.n ? o->micro_batch.v[0] : 1;
	if (o->schedules)
		for (int k = SIM_NSCHEDULES - 1; k >= 0; k--)
			if (o->schedules & (1u << k))
				c.schedule = (sim_schedule)k;
	if (c.vpp > 1)
		c.schedule = SIM_INTERLEAVED;
	char err[100];
	if (sim_train_check(m, sys, &c, err, sizeof err) != 0) {
		snprintf(why, n, "%s", err);
		return;
	}
	if (o->framework != NULL && !plan_framework_runs(o->framework, m, &c, err, sizeof err)) {
		snprintf(why, n, "%s does not run %s", o->framework->title, err);
		return;
	}
	snprintf(why, n, "the pinned dimensions leave no layout to try on %d GPUs", gpus);
}

static int
plan_count(const model *m, const hw_cost *cost, const hw_system *sys, int gpus, const plan_train_opts *o, int64_t seq,
	   plan_count_result *pc, size_t *done, size_t total_hint, char *err, size_t errlen)
{
	memset(pc, 0, sizeof *pc);
	pc->gpus = gpus;
	int rc = plan_enumerate(m, sys, gpus, o, seq, &pc->cands, &pc->ncands);
	if (rc != 0)
		return pp_err(err, errlen, rc, "out of memory");
	pc->enumerated = pc->ncands;
	if (pc->ncands == 0)
		diagnose(m, sys, gpus, o, seq, pc->invalid_reason, sizeof pc->invalid_reason);
	pool p = {.c = pc->cands, .n = pc->ncands, .m = m, .cost = cost, .sys = sys, .o = o};
	atomic_init(&p.next, 0);
	atomic_init(&p.done, 0);
	atomic_init(&p.oom, 0);
	/* the total for the progress line: this count's layouts and the ones it will simulate */
	size_t nsim_hint = (size_t)(o->simulate > o->top ? o->simulate : o->top);
	if (total_hint == 0)
		total_hint = *done + pc->ncands + nsim_hint;
	run_pool(&p, o->jobs, *done, total_hint);
	*done += pc->ncands;
	double min_mem = INFINITY;
	for (size_t i = 0; i < pc->ncands; i++) {
		plan_cand *x = &pc->cands[i];
		if (x->state == CAND_INVALID && pc->invalid++ == 0)
			pp_strlcpy(pc->invalid_reason, x->why, sizeof pc->invalid_reason);
		else if (x->state == CAND_OOM) {
			pc->oom++;
			if (x->mem.total < min_mem) {
				min_mem = x->mem.total;
				pc->min_oom_bytes = x->mem.total;
				pc->capacity = x->mem.capacity;
			}
		} else if (x->state == CAND_ESTIMATED)
			pc->estimated++;
	}
	if (rank_keys(pc->cands, pc->ncands) != 0 || sort_cands(pc->cands, pc->ncands, false) != 0)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	size_t nsim = (size_t)(o->simulate > o->top ? o->simulate : o->top);
	if (nsim > pc->estimated)
		nsim = pc->estimated;
	pool q = {.c = pc->cands, .n = nsim, .m = m, .cost = cost, .sys = sys, .simulate = true, .o = o};
	atomic_init(&q.next, 0);
	atomic_init(&q.done, 0);
	atomic_init(&q.oom, 0);
	run_pool(&q, o->jobs, *done, total_hint);
	pc->simulated = atomic_load(&q.done);
	if (sort_cands(pc->cands, nsim, true) != 0)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	size_t good = 0;
	while (good < nsim && pc->cands[good].state == CAND_SIMULATED)
		good++;
	pc->nbest = good < (size_t)o->top ? good : (size_t)o->top;
	/* nothing left although layouts fit: say why the simulations failed (the first in the
	 * ranked order, so the same every run), not that nothing fits */
	for (size_t i = 0; good == 0 && i < nsim && pc->sim_failed[0] == '\0'; i++)
		if (pc->cands[i].state == CAND_INVALID && pc->cands[i].why[0] != '\0')
			pp_strlcpy(pc->sim_failed, pc->cands[i].why, sizeof pc->sim_failed);
	double tokens = (double)o->global_batch * (double)(model_transformer(m) ? seq : 1);
	double band = good > 0 ? plan_uncertainty(&pc->cands[0].metrics) : 0.0;
	for (size_t i = 0; i < good; i++) {
		plan_cand *x = &pc->cands[i];
		x->usd_per_mtok = usd_per_mtok(o->price, gpus, x->step_s, tokens);
		x->uncertainty = plan_uncertainty(&x->metrics);
		x->framework = o->framework;
		for (size_t k = 0; x->framework == NULL && k < plan_framework_count(); k++)
			if (plan_framework_runs(plan_framework_at(k), m, &x->cfg, NULL, 0))
				x->framework = plan_framework_at(k);
		if (i > 0) {
			why_lost(&pc->cands[0], x);
			/* the two 80% intervals overlap (or, without intervals, within the winner's own
			 * uncertainty): the model cannot tell the two apart */
			const sim_metrics *w = &pc->cands[0].metrics;
			if (isfinite(x->metrics.step_lo_s) && isfinite(w->step_hi_s))
				x->tie = x->metrics.step_lo_s <= w->step_hi_s;
			else
				x->tie = x->step_s - pc->cands[0].step_s <= band * pc->cands[0].step_s;
		}
	}
	if (o->objective == PLAN_COST) {
		/* per GPU count the cost is proportional to the time: the order stands */
	}
	return 0;
}

int
plan_train(const model *m, hw_db *db, const char *system, const plan_train_opts *oin, plan_train_result **out,
	   char *err, size_t errlen)
{
	*out = NULL;
	plan_train_opts o = *oin;
	if (o.ngpus == 0 || o.gpus == NULL)
		return pp_err(err, errlen, PP_EUSAGE, "no GPU count given");
	if (o.global_batch <= 0)
		return pp_err(err, errlen, PP_EUSAGE, "--global-batch must be positive");
	if (o.top < 1)
		o.top = 1;
	if (!(o.memory_headroom >= 0.0) || !(o.memory_headroom < 1.0))
		return pp_err(err, errlen, PP_EUSAGE, "--memory-headroom must be from 0 to 99%%, got %g%%", 100.0 * o.memory_headroom);
	if (model_transformer(m) == NULL) {
		/* a CNN's layouts are data parallelism, micro-batch and dtype: a pin of anything else
		 * would be ignored, so it is refused */
		const struct { bool given; const char *name; } pins[] = {
			{o.tp.n > 0, "--tp"}, {o.pp.n > 0, "--pp"}, {o.vpp.n > 0, "--vpp"}, {o.cp.n > 0, "--cp"},
			{o.ep.n > 0, "--ep"}, {o.zero.n > 0, "--zero"}, {o.dp_shard.n > 0, "--dp-shard"},
			{o.schedules != 0, "--schedule"}, {o.recomputes != 0, "--recompute"},
		};
		for (size_t i = 0; i < sizeof pins / sizeof pins[0]; i++)
			if (pins[i].given)
				return pp_err(err, errlen, PP_EUSAGE,
					      "%s is a CNN: its layouts are data parallelism, micro-batch and dtype; %s does "
					      "not apply",
					      model_name(m), pins[i].name);
	}
	hw_cost *cost;
	int rc = hw_cost_new(db, system, &cost, err, errlen);
	if (rc != 0)
		return rc == PP_ENOTFOUND ? PP_EUSAGE : rc;
	if (o.gpus_per_node > 0 && (rc = hw_cost_use_gpus_per_node(cost, o.gpus_per_node, err, errlen)) != 0) {
		hw_cost_free(cost);
		return rc;
	}
	const hw_system *sys = hw_cost_system(cost);
	plan_train_result *r = calloc(1, sizeof *r);
	if (r == NULL) {
		hw_cost_free(cost);
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	}
	pp_strlcpy(r->model, model_name(m), sizeof r->model);
	pp_strlcpy(r->system, system, sizeof r->system);
	r->global_batch = o.global_batch;
	const model_tf *t = model_transformer(m);
	r->seq = o.seq > 0 ? o.seq : (t ? t->seq : 1);
	if (!(o.price > 0)) {
		hw_price pr;
		if (hw_default_price(db, system, &pr, NULL, 0) == 0) {
			o.price = pr.usd_per_gpu_hour;
			snprintf(r->price_source, sizeof r->price_source, "%s %s, %s ($%.2f/GPU-h)", pr.provider, pr.kind, pr.date,
				 pr.usd_per_gpu_hour);
		}
	} else {
		snprintf(r->price_source, sizeof r->price_source, "--price $%.2f/GPU-h", o.price);
	}
	r->price = o.price;
	r->objective = o.objective;
	r->memory_headroom = o.memory_headroom;
	r->framework = o.framework;
	/* every price and the ownership terms, for the reports' cost table (a database without
	 * prices for the system is not an error: the plan then carries none) */
	if (hw_prices(db, system, &r->prices, &r->nprices, NULL, 0) != 0) {
		r->prices = NULL;
		r->nprices = 0;
	}
	r->life_years = o.life_years > 0 ? o.life_years : PLAN_LIFE_YEARS;
	r->usd_per_kwh = o.usd_per_kwh >= 0 ? o.usd_per_kwh : PLAN_USD_PER_KWH;
	r->pue = o.pue >= 1 ? o.pue : PLAN_PUE;
	r->counts = calloc(o.ngpus, sizeof *r->counts);
	if (r->counts == NULL) {
		rc = pp_err(err, errlen, PP_ENOMEM, "out of memory");
		goto fail;
	}
	size_t done = 0;
	for (size_t i = 0; i < o.ngpus; i++) {
		if (o.gpus[i] < 1 || o.gpus[i] > (1 << 24)) {
			rc = pp_err(err, errlen, PP_EUSAGE, "--gpus must be from 1 to %d, got %d", 1 << 24, o.gpus[i]);
			goto fail;
		}
		rc = plan_count(m, cost, sys, o.gpus[i], &o, r->seq, &r->counts[i], &done, 0, err, errlen);
		r->ncounts = i + 1;
		if (rc != 0)
			goto fail;
		if (o.stop != NULL && *o.stop) {
			r->interrupted = true;
			break;
		}
	}
	r->sys = *sys;
	hw_cost_free(cost);
	*out = r;
	return 0;
fail:
	hw_cost_free(cost);
	plan_train_result_free(r);
	return rc;
}
