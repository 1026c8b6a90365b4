/*
 * val.h -- predictions against published measurements: rows of a validation CSV turned into
 * runs, their errors per source and per source family, the fit of the framework profiles'
 * parameters to them, and the honest figure: leave-one-source-family-out cross-validation.
 *
 * A training row (the columns of validate/data/published-training.csv) becomes a model, a
 * system, a parallel configuration and the framework that ran it (its source says which, by
 * documented rules, never by its measured value); it is simulated and the prediction converted
 * to the row's own metric and FLOP convention.  Rows that cannot be expressed are kept with the
 * reason.  A source family is the repository or paper a row comes from: the unit that
 * cross-validation leaves out, because rows of one family share their software, their
 * configurations and their mistakes.
 *
 * Fitting sets the parameters of the framework profiles in memory (calibrate/), each fitted
 * once over all rows of its framework on every GPU; the database is written only by
 * val_fit_save.  Nothing here prints or exits.  A val_set owns its models, profiles and cost
 * models; the database must outlive it.
 */
#ifndef VAL_H
#define VAL_H

#include <stdbool.h>
#include <stddef.h>

#include "hardware/hw.h"

struct cJSON;

/* The compiled-in validation data ("published-training", "published-serving"), or NULL. */
const char *val_data(const char *name);

/* One CSV's text; origin names it in messages and reports. */
typedef struct val_src {
	const char *text;
	size_t len;
	const char *origin;
} val_src;

typedef struct val_set val_set;

/* Reads the training rows of every source that `filter` selects (NULL, "training" or "all":
 * every row; a GPU: "a100", "h100", "v100", ...; else a case-insensitive part of the source,
 * table or family), builds each row's run and, with `simulate`, settles the settings a row does
 * not state (micro-batch, virtual stages: the fastest that fits) with the profiles as the
 * database holds them.  Without `simulate` the rows are only read and checked (the fuzz
 * harness).  Errors are a CSV that cannot be read (PP_EINPUT naming the file) or a database
 * failure; a row that cannot be expressed is skipped with its reason. */
int val_train_load(hw_db *db, const val_src *srcs, size_t nsrcs, const char *filter, bool simulate, val_set **out,
		   char *err, size_t errlen);
void val_set_free(val_set *s);

/* Lines saying where a long fit or cross-validation is (NULL: none). */
void val_set_progress(val_set *s, void (*fn)(void *arg, const char *line), void *arg);

/* The report of the rows as last predicted: every row with its error, MAPE and mean signed
 * error per source and per family and overall, and the skipped rows with the reason. */
struct cJSON *val_train_report(const val_set *s);

/* Fits the parameters of every framework profile the rows use, from the values the profiles
 * hold (the database's): first per profile root over all of its rows on every GPU, then per
 * framework under it over its own rows, held near the root's values (a prior worth one row);
 * least squares on the logarithm of predicted over measured through a pseudo-Huber loss,
 * about max_evals simulations of the group's rows per fit.  Predicts the rows with the result
 * and returns what was fitted, from where to where.  The profiles change in memory only. */
int val_train_fit(val_set *s, int max_evals, struct cJSON **out, char *err, size_t errlen);

/* Leave-one-source-family-out cross-validation: the fit on every row first; then for each
 * family, the profiles fitted again on the rows of every other family, and the family's rows
 * simulated with them (a framework left without rows gets its root's values).  The fold fits
 * run on each row's prediction linearized about the fit on every row (the rows' logarithms
 * and their slopes in each parameter: ten passes over the rows in all), or with `exact` on the
 * simulator itself (a full fit per fold).  Leaves every row's prediction the out-of-family
 * one and returns the report (per family and overall MAPE and mean signed error; the fit on
 * every row; the fitted values per fold). */
int val_train_cross_validate(val_set *s, int max_evals, bool exact, struct cJSON **out, char *err, size_t errlen);

/* Stores a fit's parameters (val_train_fit's document) as 'fitted' rows of their profiles. */
int val_fit_save(hw_db *db, const struct cJSON *fit, char *err, size_t errlen);

/* ---- serving ------------------------------------------------------------------------------- */

/* Serving rows (the columns of validate/data/published-serving.csv and
 * ../shared/validation/serving-2024-2025.csv): static batches, closed-loop concurrency and
 * Poisson-rate runs, their throughput and latencies, each under the engine profile its engine
 * column names (or `engine` for every row when not NULL); the same report as training, with
 * summaries per engine and per metric kind (throughput, ttft, tpot). */
int val_serving(hw_db *db, const val_src *srcs, size_t n, const char *engine, struct cJSON **out, char *err,
		size_t errlen);
/* The reading half (rows read and checked, nothing simulated). */
int val_serving_rows(hw_db *db, const val_src *srcs, size_t n, struct cJSON **out, char *err, size_t errlen);
/* Fits each engine's few parameters (sched_us, serve_gemm_scale) over all of its rows on every GPU, or
 * only `engine`'s when not NULL; the database is left as it was. */
int val_serving_fit(hw_db *db, const val_src *srcs, size_t n, const char *engine, int max_evals, struct cJSON **out,
		    char *err, size_t errlen);
/* Leaves one source family out at a time: fits the engines on the others, predicts it. */
int val_serving_cross_validate(hw_db *db, const val_src *srcs, size_t n, int max_evals, struct cJSON **out,
			       char *err, size_t errlen);

#endif
