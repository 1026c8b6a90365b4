/*
 * minimize.c -- the minimizers under the fits of profile parameters to published rows: GSL's
 * Nelder-Mead simplex on a scalar objective, and GSL's trust-region Levenberg-Marquardt on a
 * vector of residuals.  Each parameter lives in its physical range [lo, hi] through a logistic
 * transform, so the search moves freely and never proposes an impossible value.
 *
 * A start on the edge of its range cannot move in the transformed space, so it is pulled in by
 * 5% of the range; the result is never worse than the start (a short evaluation budget may not
 * come back below it).
 *
 * The residuals come from a simulator: piecewise in its parameters (wave quantization, a
 * kernel hidden behind another until it is not), so the Jacobian is a forward difference with
 * a wide step (0.1 in the transformed coordinate, about 2% of a mid-range value), which sees
 * the trend rather than the steps.
 */
#include "config.h"
#include "calibrate/cal.h"
#include "common/pp.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>
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

double
cal_param_value(const cal_param *p, double u)
{
	return p->lo + (p->hi - p->lo) / (1.0 + exp(-u));
}

double
cal_param_u(const cal_param *p, double v)
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
		c->x[k] = cal_param_value(&c->p[k], gsl_vector_get(u, k));
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
		gsl_vector_set(u, k, cal_param_u(&p[k], start[k]));
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
			best[k] = cal_param_value(&p[k], gsl_vector_get(mz->x, k));
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

/* ---- least squares ------------------------------------------------------------------------- */

static const double fd_step = 0.1; /* the forward difference's, in the transformed coordinate */

typedef struct lsctx {
	const cal_param *p;
	size_t n, m;
	cal_resid_fn f;
	void *arg;
	double x[16];
	int evals;
	int stop; /* f's nonzero code: it asked to stop */
} lsctx;

static int
ls_f(const gsl_vector *u, void *arg, gsl_vector *r)
{
	lsctx *c = arg;
	for (size_t k = 0; k < c->n; k++)
		c->x[k] = cal_param_value(&c->p[k], gsl_vector_get(u, k));
	c->evals++;
	if (c->stop != 0 || (c->stop = c->f(c->x, r->data, c->arg)) != 0) {
		gsl_vector_set_zero(r);
		return GSL_EBADFUNC;
	}
	for (size_t i = 0; i < c->m; i++)
		if (!isfinite(r->data[i]))
			r->data[i] = 1e3;
	return GSL_SUCCESS;
}

static int
ls_df(const gsl_vector *u, void *arg, gsl_matrix *J)
{
	lsctx *c = arg;
	const double h = fd_step;
	gsl_vector *r0 = gsl_vector_alloc(c->m), *r1 = gsl_vector_alloc(c->m), *v = gsl_vector_alloc(c->n);
	int rc = r0 && r1 && v ? ls_f(u, c, r0) : GSL_ENOMEM;
	if (rc == GSL_SUCCESS)
		gsl_vector_memcpy(v, u);
	for (size_t k = 0; k < c->n && rc == GSL_SUCCESS; k++) {
		gsl_vector_set(v, k, gsl_vector_get(u, k) + h);
		if ((rc = ls_f(v, c, r1)) == GSL_SUCCESS)
			for (size_t i = 0; i < c->m; i++)
				gsl_matrix_set(J, i, k, (gsl_vector_get(r1, i) - gsl_vector_get(r0, i)) / h);
		gsl_vector_set(v, k, gsl_vector_get(u, k));
	}
	gsl_vector_free(r0);
	gsl_vector_free(r1);
	gsl_vector_free(v);
	return rc;
}

static double
sumsq(const double *r, size_t m)
{
	double s = 0.0;
	for (size_t i = 0; i < m; i++)
		s += r[i] * r[i];
	return s;
}

int
cal_least_squares(const cal_param *p, size_t n, size_t m, cal_resid_fn f, void *arg, int max_iter, double *best,
		  double *cost, int *evals, char *err, size_t errlen)
{
	if (n == 0 || n > 16)
		return pp_err(err, errlen, PP_EUSAGE, "a fit takes 1 to 16 parameters, got %zu", n);
	if (m < n)
		return pp_err(err, errlen, PP_EUSAGE, "a fit of %zu parameters needs as many residuals, got %zu", n, m);
	for (size_t k = 0; k < n; k++)
		if (!(p[k].hi > p[k].lo) || !isfinite(p[k].start))
			return pp_err(err, errlen, PP_EUSAGE, "fit parameter %s: empty range or no start", p[k].name);
	lsctx c = {.p = p, .n = n, .m = m, .f = f, .arg = arg};
	double *r = malloc(m * sizeof *r);
	if (r == NULL)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	/* the start itself, as given */
	for (size_t k = 0; k < n; k++)
		c.x[k] = p[k].start;
	int rc = f(c.x, r, arg);
	if (rc != 0) {
		free(r);
		return rc;
	}
	double c0 = sumsq(r, m);
	free(r);
	for (size_t k = 0; k < n; k++)
		best[k] = p[k].start;
	*cost = c0;
	c.evals = 1;

	gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
	fp.trs = gsl_multifit_nlinear_trs_lm;
	gsl_multifit_nlinear_workspace *w = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, m, n);
	gsl_vector *u = gsl_vector_alloc(n);
	if (w == NULL || u == NULL) {
		if (w)
			gsl_multifit_nlinear_free(w);
		gsl_vector_free(u);
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	}
	for (size_t k = 0; k < n; k++) {
		double span = p[k].hi - p[k].lo, s = p[k].start;
		s = s < p[k].lo + 0.05 * span ? p[k].lo + 0.05 * span : s > p[k].hi - 0.05 * span ? p[k].hi - 0.05 * span : s;
		gsl_vector_set(u, k, cal_param_u(&p[k], s));
	}
	gsl_multifit_nlinear_fdf fdf = {.f = ls_f, .df = ls_df, .fvv = NULL, .n = m, .p = n, .params = &c};
	gsl_error_handler_t *old = gsl_set_error_handler_off();
	int info = 0;
	int st = gsl_multifit_nlinear_init(u, &fdf, w);
	if (st == GSL_SUCCESS)
		st = gsl_multifit_nlinear_driver((size_t)(max_iter > 0 ? max_iter : 1), 1e-3, 1e-6, 1e-6, NULL, NULL, &info,
						 w);
	gsl_set_error_handler(old);
	if (c.stop != 0) {
		rc = c.stop; /* f keeps its message */
	} else {
		/* the iterate the driver stopped at: kept when better than the start (GSL_EMAXITER
		 * and a step that could not improve still leave a usable point) */
		gsl_vector *x = gsl_multifit_nlinear_position(w), *fx = gsl_multifit_nlinear_residual(w);
		double cx = 0.0;
		gsl_blas_ddot(fx, fx, &cx);
		if (isfinite(cx) && cx < c0) {
			for (size_t k = 0; k < n; k++)
				best[k] = cal_param_value(&p[k], gsl_vector_get(x, k));
			*cost = cx;
		}
	}
	(void)st;
	if (evals)
		*evals = c.evals;
	gsl_multifit_nlinear_free(w);
	gsl_vector_free(u);
	return rc;
}
