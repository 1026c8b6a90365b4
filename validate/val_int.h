/*
 * val_int.h -- private to validate/: what the training and serving validations share.
 */
#ifndef VAL_INT_H
#define VAL_INT_H

#include "common/pp.h"
#include "validate/val.h"

#include <stdbool.h>

struct cJSON;
struct hw_profile;

/* Case-insensitive substring test. */
bool val_has(const char *hay, const char *needle);

/* Whether a row's unit is one of list ("tokens/s|tok/s"), or not stated (empty): a value in
 * another unit, compared as if in the metric's, would be off by its factor and scored. */
bool val_unit_in(const char *unit, const char *list);

/* Whether a measured value is one a published run could report: finite and from 1e-6 to 1e9 in
 * its metric's unit (no metric of a run, a time in ms or s, a rate per GPU or in all, a
 * percentage, comes near either end); NULL, or why not. */
const char *val_measured_absurd(double v);

/* The short name of a source (its first author or repository and year: up to the first comma
 * or parenthesis), and its family: the repository (owner/name) of a "github ..." source or of
 * one that starts with owner/name, the benchmark round of an MLPerf source, else the paper
 * (up to the first comma). */
void val_source_key(const char *src, char *out, size_t n);
void val_family_key(const char *src, char *out, size_t n);

/* The error of a prediction as speed: (predicted - measured) / measured for a rate (tokens/s,
 * TFLOP/s, MFU, speedup), its negative for a time (step, latency): positive when the prediction
 * is faster than what was measured, whatever the metric. */
double val_speed_error(double predicted, double measured, bool time_like);

/* Adds "sources", "families" and "overall" summaries (rows, MAPE, mean signed error) of the
 * report's rows (each with "source", "family", "error" and "speed_error") to doc; the mean signed
 * error is of the speed errors. */
void val_summarize(struct cJSON *doc, const struct cJSON *rows, const struct cJSON *skipped);
/* One summary (rows, MAPE, mean signed speed error) per distinct value of the rows' `key` into arr. */
void val_group(struct cJSON *arr, const struct cJSON *rows, const char *key);

/* An engine setting a serving row states in its notes or engine column ("batch_size 896 (Server) /
 * 806 (Offline)", "max_num_seqs 1792/650/600": unlabelled values are Offline, Server,
 * Interactive): the value of the first of the NULL-terminated `keys` for scenario scen (0
 * Offline, 1 Server, 2 Interactive; -1, a row outside MLPerf's scenarios, takes only a single
 * unlabelled value); 0 when not stated. */
double val_stated_setting(const char *text, const char *const *keys, int scen);

/* ---- the 80% intervals of predictions ---------------------------------------------------- */

/* One predicted row as the intervals see it: q = log(measured / predicted) of a time (of a
 * rate, its negative), NAN when the row was not predicted; its source family and the profile
 * (framework or engine) it ran under.  A row may carry a band of its own, [blo, bhi] in the
 * same log terms (a serving row's value on engines as fast as its engine's capacity interval
 * says, sim_serve_speed): its interval is then the hull of the two.  A row out of the
 * percentiles is counted in the coverage only (a serving run's throughput at an arrival rate:
 * the rate it was offered, not the engine's speed). */
typedef struct {
	double q;
	const char *family;
	const struct hw_profile *p;
	bool banded, out_of_percentiles;
	double blo, bhi;
} val_err;

/* The 10th and 90th percentiles of the errors (q) of the rows under p (and out of family skip,
 * NULL: none), from the deepest level of p's chain, down to `level` (0: the root's group alone),
 * with min_rows of them.  false: too few even at the root, or out of memory. */
bool val_percentiles(const val_err *e, size_t n, const struct hw_profile *p, int level, const char *skip,
		     size_t min_rows, double *p10, double *p90);

/* The 80% intervals of predictions: for every profile in the chains of `profs` whose group (it
 * and the profiles under it) holds at least min_rows finite errors, the 10th and 90th
 * percentiles of their q, as {"<who>": name, "rows", "p10", "p90"} in "<who>s"; a profile with
 * fewer inherits its parent's (sim_interval reads them that way).  And their coverage, checked
 * as the cross-validation checks a fit: each family's rows against the percentiles of the other
 * families' rows ("families", "rows", "coverage").  NULL: out of memory. */
struct cJSON *val_intervals(const val_err *e, size_t n, const struct hw_profile *const *profs, size_t nprof,
			    const char *const *fam, size_t nf, size_t min_rows, const char *who);

#endif
