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
}

static const char *const sched_short[] = {"gpipe", "1f1b", "interleaved", "zb-h1"};

void
plan_key(const sim_train_cfg *c, char *buf, size_t n)
{
	snprintf(buf, n, "tp%02d pp%03d cp%02d ep%03d dp%05d %s v%d z%d%s mb%03lld %s%s %s", c->tp, c->pp, c->cp, c->ep,
		 c->dp, sched_short[c->schedule], c->vpp, c->zero, c->fsdp ? "f" : "", (long long)c->micro_batch,
		 sim_recompute_name(c->recompute), c->sequence_parallel ? " sp" : "", hw_dtype_name(c->dtype));
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

/* Every combination of the search dimensions for one GPU count that is worth checking.  The
 * divisibility rules are left to sim_train_check, which names the failed one. */
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
	sim_train_cfg base;
	sim_train_cfg_init(&base);
	sim_train_cfg_framework(&base, o->fw);
	base.gpus = gpus;
	base.global_batch = o->global_batch;
	base.seq = seq;
	if (t == NULL) {
		/* CNNs: data parallelism, micro-batch and dtype */
		for (int di = 0; di < ndt; di++)
			for (int64_t mb = 1; mb <= 1024; mb *= 2) {
				sim_train_cfg c = base;
				c.dtype = dts[di];
				c.micro_batch = mb;
				if (push(&arr, &n, &cap, &c) != 0)
					goto oom;
			}
		*out = arr;
		*nout = n;
		return 0;
	}
	int64_t L = t->layers;
	for (int tp = 1; tp <= gpus; tp++) {
		if (gpus % tp != 0 || (!o->tp_across && tp > domain) || t->heads % tp != 0)
			continue;
		for (int cp = 1; cp <= gpus / tp; cp *= 2) {
			/* context parallelism only for long sequences: chunks of at least 4096 tokens */
			if (cp > 1 && (seq < 8192 || seq / cp < 4096))
				break;
			if ((gpus / tp) % cp != 0)
				continue;
			int rest = gpus / tp / cp;
			for (int pp = 1; pp <= rest && pp <= L; pp++) {
				if (rest % pp != 0)
					continue;
				int dp = rest / pp;
				for (int ep = 1; ep <= (t->experts > 0 ? dp * cp : 1); ep++) {
					if (t->experts > 0 && (t->experts % ep != 0 || (dp * cp) % ep != 0))
						continue;
					/* schedules: 1F1B, the interleaved one with each valid chunk count, ZB-H1 */
					int nsched = 0;
					struct { sim_schedule s; int v; } scheds[16];
					scheds[nsched].s = SIM_1F1B, scheds[nsched++].v = 1;
					if (pp > 1) {
						/* every virtual stage needs a layer; uneven splits as sim_chunk_layers */
						for (int v = 2; v <= 8 && nsched < 15; v++)
							if (L >= (int64_t)pp * v)
								scheds[nsched].s = SIM_INTERLEAVED, scheds[nsched++].v = v;
						scheds[nsched].s = SIM_ZB_H1, scheds[nsched++].v = 1;
					}
					for (int si = 0; si < nsched; si++)
						for (int zero = 0; zero <= 3; zero++) {
							if (zero > 0 && dp * cp == 1)
								break;
							if (zero >= 2 && pp > 1)
								break; /* DeepSpeed and FSDP shard over data parallelism without PP */
							for (int64_t mb = 1; mb <= 16; mb *= 2)
								for (int rc = 0; rc < 3; rc++) {
									/* flash attention keeps no score matrix and recomputes
									 * it anyway: selective recomputation is the same as none */
									if (rc == SIM_RECOMPUTE_SELECTIVE && base.attention == SIM_ATTN_FLASH)
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
											c.micro_batch = mb;
											c.recompute = (sim_recompute)rc;
											c.sequence_parallel = sp;
											c.dtype = dts[di];
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
 * layer count when the first gives one up) and the last (the logits). */
static bool
fits(const model *m, const hw_system *sys, const sim_train_cfg *c, sim_mem *worst)
{
	int stages[3] = {0, c->pp > 1 ? 1 : 0, c->pp - 1};
	bool ok = true;
	memset(worst, 0, sizeof *worst);
	for (int i = 0; i < 3; i++) {
		sim_mem mm;
		sim_train_memory(m, sys, c, stages[i], &mm);
		if (mm.total > worst->total)
			*worst = mm;
		ok &= mm.fits;
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
			return;
		}
		x->cfg = c;
		if (!fits(p->m, p->sys, &c, &x->mem)) {
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

typedef struct keyed {
	char key[128];
	size_t idx;
} keyed;

static int
cmp_keyed(const void *x, const void *y)
{
	return strcmp(((const keyed *)x)->key, ((const keyed *)y)->key);
}

/* Sets every candidate's key_rank. */
static int
rank_keys(plan_cand *c, size_t n)
{
	keyed *k = malloc((n ? n : 1) * sizeof *k);
	if (k == NULL)
		return PP_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		plan_key(&c[i].cfg, k[i].key, sizeof k[i].key);
		k[i].idx = i;
	}
	qsort(k, n, sizeof *k, cmp_keyed);
	uint32_t r = 0;
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && strcmp(k[i].key, k[i - 1].key) != 0)
			r++;
		c[k[i].idx].key_rank = r;
	}
	free(k);
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

bool
plan_train_interrupted(const plan_train_result *r)
{
	return r->interrupted;
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
	pool p = {.c = pc->cands, .n = pc->ncands, .m = m, .cost = cost, .sys = sys, .o = o};
	atomic_init(&p.next, 0);
	atomic_init(&p.done, 0);
	atomic_init(&p.oom, 0);
	run_pool(&p, o->jobs, *done, total_hint);
	*done += pc->ncands;
	double min_mem = INFINITY;
	for (size_t i = 0; i < pc->ncands; i++) {
		plan_cand *x = &pc->cands[i];
		if (x->state == CAND_INVALID)
			pc->invalid++;
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
	for (size_t i = 0; i < good; i++) {
		plan_cand *x = &pc->cands[i];
		x->usd_per_mtok = usd_per_mtok(o->price, gpus, x->step_s, tokens);
		if (i > 0)
			why_lost(&pc->cands[0], x);
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
