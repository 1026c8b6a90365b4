/*
 * minimize.c -- the minimizer under the fits of profile parameters to published rows (GSL's
 * Nelder-Mead simplex).  Each parameter lives in its physical range [lo, hi] through a logistic
 * transform, so the simplex moves freely and never proposes an impossible value.
 *
 * A start on the edge of its range cannot move in the transformed space, so it is pulled in by
 * 5% of the range; the result is never worse than the start (a short evaluation budget may not
 * come back below it).
 */
#include "config.h"
#include "calibrate/cal.h"
#include "common/pp.h"

#include <gsl/gsl_multimin.h>
#include <math.h>
#include <stdlib.h>

typedef struct nmctx {
	const cal_param *p;
	size_t n;
	double (*f)(const double *x, void *arg);
	void *arg;
	double *x; /* scratch: the values of the point being evaluated */
	int evals;
} nmctx;

static double
to_value(const cal_param *p, double u)
{
	return p->lo + (p->hi - p->lo) / (1.0 + exp(-u));
}

static double
to_u(const cal_param *p, double v)
{
	double t = (v - p->lo) / (p->hi - p->lo);
	if (t < 1e-6)
		t = 1e-6;
	if (t > 1 - 1e-6)
		t = 1 - 1e-6;
	return log(t / (1.0 - t));
}

static double
objective(const gsl_vector *u, void *arg)
{
	nmctx *c = arg;
	for (size_t k = 0; k < c->n; k++)
		c->x[k] = to_value(&c->p[k], gsl_vector_get(u, k));
	c->evals++;
	double e = c->f(c->x, c->arg);
	return isfinite(e) ? e : 1e300;
}

int
cal_minimize(const cal_param *p, size_t n, double (*f)(const double *x, void *arg), void *arg, int max_evals,
	     double *best, double *fbest, int *evals, char *err, size_t errlen)
{
	if (n == 0 || n > 16)
		return pp_err(err, errlen, PP_EUSAGE, "a fit takes 1 to 16 parameters, got %zu", n);
	for (size_t k = 0; k < n; k++)
		if (!(p[k].hi > p[k].lo) || !isfinite(p[k].start))
			return pp_err(err, errlen, PP_EUSAGE, "fit parameter %s: empty range or no start", p[k].name);
	double x[16], start[16];
	nmctx c = {p, n, f, arg, x, 0};
	for (size_t k = 0; k < n; k++) {
		double span = p[k].hi - p[k].lo;
		start[k] = p[k].start;
		if (start[k] < p[k].lo + 0.05 * span)
			start[k] = p[k].lo + 0.05 * span;
		if (start[k] > p[k].hi - 0.05 * span)
			start[k] = p[k].hi - 0.05 * span;
	}
	/* the start itself, as given */
	for (size_t k = 0; k < n; k++)
		x[k] = p[k].start;
	double f0 = f(x, arg);
	c.evals = 1;
	gsl_vector *u = gsl_vector_alloc(n), *step = gsl_vector_alloc(n);
	gsl_multimin_fminimizer *mz = gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2, n);
	if (u == NULL || step == NULL || mz == NULL) {
		gsl_vector_free(u);
		gsl_vector_free(step);
		if (mz)
			gsl_multimin_fminimizer_free(mz);
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	}
	for (size_t k = 0; k < n; k++) {
		gsl_vector_set(u, k, to_u(&p[k], start[k]));
		gsl_vector_set(step, k, 0.5);
	}
	gsl_multimin_function fn = {objective, n, &c};
	gsl_multimin_fminimizer_set(mz, &fn, u, step);
	/* at least one iteration: setting up the simplex leaves its minimum unset */
	for (int iter = 0; iter == 0 || c.evals < max_evals; iter++) {
		if (gsl_multimin_fminimizer_iterate(mz) != GSL_SUCCESS)
			break;
		if (gsl_multimin_test_size(gsl_multimin_fminimizer_size(mz), 1e-3) == GSL_SUCCESS)
			break;
	}
	double fm = gsl_multimin_fminimizer_minimum(mz);
	if (fm < f0) {
		for (size_t k = 0; k < n; k++)
			best[k] = to_value(&p[k], gsl_vector_get(mz->x, k));
		*fbest = fm;
	} else {
		for (size_t k = 0; k < n; k++)
			best[k] = p[k].start;
		*fbest = f0;
	}
	if (evals)
		*evals = c.evals;
	gsl_multimin_fminimizer_free(mz);
	gsl_vector_free(u);
	gsl_vector_free(step);
	return 0;
}
