/*
 * train.c -- the training sections of a report: a layout search (the chosen layout and why,
 * its speed, the runners-up, time and cost to train under every price the plan lists, owning
 * instead of renting, scaling, the Pareto front), a simulated step (speed, memory per stage,
 * the timeline of its trace) and a capacity plan (GPUs and days per system, renting and
 * owning).  Cost arithmetic goes through planner/cost.c.
 */
#include "config.h"
#include "planner/plan.h"
#include "reports/rep_int.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
config_table(rep_report *r, const rep_doc *d, const char *cfg, const char *basis)
{
	char tid[48];
	rep_id(tid, sizeof tid, d, "config");
	size_t t = rep_kv_new(r, tid, "Configuration");
	rep_kv(r, t, "GPUs", rep_src(r, d, F_INT, "%s/gpus", cfg), "%s", basis);
	rep_kv(r, t, "tensor parallel (TP)", rep_src(r, d, F_INT, "%s/tp", cfg), "%s", basis);
	rep_kv(r, t, "pipeline parallel (PP)", rep_src(r, d, F_INT, "%s/pp", cfg), "%s", basis);
	rep_kv(r, t, "data parallel (DP)", rep_src(r, d, F_INT, "%s/dp", cfg), "%s", basis);
	rep_kv(r, t, "context parallel (CP)", rep_src(r, d, F_INT, "%s/cp", cfg), "%s", basis);
	rep_kv(r, t, "expert parallel (EP)", rep_src(r, d, F_INT, "%s/ep", cfg), "%s", basis);
	rep_kv(r, t, "virtual stages per GPU", rep_src(r, d, F_INT, "%s/vpp", cfg), "%s", basis);
	rep_kv(r, t, "ZeRO stage", rep_src(r, d, F_INT, "%s/zero", cfg), "%s", basis);
	rep_kv(r, t, "pipeline schedule", rep_text("%s", rep_str(r, d, "%s/schedule", cfg)), "%s", basis);
	rep_kv(r, t, "micro-batch (sequences)", rep_src(r, d, F_INT, "%s/micro_batch", cfg), "%s", basis);
	rep_kv(r, t, "global batch (sequences)", rep_src(r, d, F_INT, "%s/global_batch", cfg), "given");
	rep_kv(r, t, "sequence length (tokens)", rep_src(r, d, F_INT, "%s/seq", cfg), "given or the model's");
	rep_kv(r, t, "activation recomputation", rep_text("%s", rep_str(r, d, "%s/recompute", cfg)), "%s", basis);
	rep_kv(r, t, "sequence parallelism", rep_text("%s", rep_yes_no(rep_bool(r, d, "%s/sequence_parallel", cfg))), "%s",
	       basis);
	rep_kv(r, t, "data type", rep_text("%s", rep_str(r, d, "%s/dtype", cfg)), "%s", basis);
	rep_show_table(r, t);
}

/* ---- cost of training a number of tokens under every price a plan lists -------------------- */

/* Time and cost to train `tokens` at the throughput of `perf` (tokens_per_s and config/gpus
 * are read there) under every price the document lists, renting and owning (the newest purchase
 * price, as capacity planning takes it, with the plan's ownership terms).  With `show` it adds
 * the tables to the report; without, it only computes the summary the comparison needs, so the
 * arithmetic lives in one place. */
rep_costs
rep_train_costs(rep_report *r, const rep_doc *d, const char *perf, double tokens, bool show)
{
	rep_costs out = {false, INFINITY, 0.0, -1.0};
	double tps = rep_num(r, d, "%s/tokens_per_s", perf);
	double gpus = rep_num(r, d, "%s/config/gpus", perf);
	char tid[48];
	size_t t = 0, ct = 0, ot = 0;
	if (!rep_ok(r) || !(tps > 0))
		return out;
	double days = tokens / tps / 86400.0, hours = days * 24.0;

	if (show) {
		rep_id(tid, sizeof tid, d, "time");
		t = rep_kv_new(r, tid, "Tokens, days and GPU-hours");
		rep_kv(r, t, "tokens to train", rep_calc(tokens, F_COUNT, "tokens"),
		       "assumed: --tokens of 'paraplan report' (default 1T)");
		rep_kv(r, t, "throughput (tokens/s)", rep_src(r, d, F_NUM, "%s/tokens_per_s", perf), "simulated");
		rep_kv(r, t, "time to train (days)", rep_calc(days, F_NUM3, "tokens / tokens_per_s / 86400"),
		       "= tokens / throughput / 86,400 s per day, every step as simulated (no restarts, no failures)");
		rep_kv(r, t, "GPU-hours", rep_calc(gpus * hours, F_COUNT, "gpus * days * 24"), "= GPUs x hours");
		rep_show_table(r, t);
	}
	int np = rep_has(d, "/prices") ? rep_len(r, d, "/prices") : 0;
	if (np == 0) {
		if (show) {
			rep_block *b = rep_para(r, B_NOTE);
			rep_say(b, "This document lists no prices, so there is no cost table: 'paraplan plan train' records "
				   "every price the hardware database holds for its system.");
		}
		return out;
	}
	if (show) {
		static const char *const head[] = {"Price", "Kind", "Date", "per GPU-hour", "Total", "per M tokens", "Source"};
		const char *key[] = {"provider", "kind", "date", rep_ck(r, "%s_per_gpu_hour"), rep_ck(r, "total_%s"),
				     rep_ck(r, "%s_per_million_tokens"), "source"};
		rep_id(tid, sizeof tid, d, "cost");
		ct = rep_table_new(r, tid, "Cost to train under every price", 7, head, key);
	}
	int buy = -1;
	for (int i = 0; i < np; i++) {
		if (!rep_has(d, "/prices/%d/usd_per_gpu_hour", i)) {
			if (buy < 0 && rep_has(d, "/prices/%d/usd_per_gpu", i))
				buy = i; /* newest first */
			continue;
		}
		double p = rep_num(r, d, "/prices/%d/usd_per_gpu_hour", i);
		double total = plan_rent_usd(p, gpus, hours);
		double per = plan_usd_per_mtok(total, tokens);
		out.any = true;
		if (per < out.rent_lo)
			out.rent_lo = per;
		if (per > out.rent_hi)
			out.rent_hi = per;
		if (!show)
			continue;
		rep_cell row[] = {
			rep_text("%s", rep_str(r, d, "/prices/%d/provider", i)),
			rep_text("%s", rep_str(r, d, "/prices/%d/kind", i)),
			rep_text("%s", rep_str(r, d, "/prices/%d/date", i)),
			rep_src(r, d, F_MONEY, "/prices/%d/usd_per_gpu_hour", i),
			rep_calc(total, F_MONEY, "price * gpus * hours"),
			rep_calc(per, F_MONEY, "total / (tokens / 1e6)"),
			rep_text("%s", rep_str(r, d, "/prices/%d/source", i)),
		};
		rep_row(r, ct, row);
	}
	if (buy >= 0) {
		plan_own own = {
			rep_num(r, d, "/prices/%d/usd_per_gpu", buy), rep_num(r, d, "/ownership/life_years"),
			rep_num(r, d, "/ownership/node_power_kw"), (int)rep_num(r, d, "/gpus_per_node"),
			rep_num(r, d, "/ownership/pue"), rep_num(r, d, "/ownership/usd_per_kwh"),
		};
		double am, en, am1, en1;
		double total = plan_own_usd(&own, gpus, hours, &am, &en);
		plan_own_usd(&own, 1, 1, &am1, &en1);
		double per = plan_usd_per_mtok(total, tokens);
		out.any = true;
		out.own = per;
		if (show) {
			rep_cell row[] = {
				rep_text("owned (%s)", rep_str(r, d, "/prices/%d/provider", buy)),
				rep_text("purchase"),
				rep_text("%s", rep_str(r, d, "/prices/%d/date", buy)),
				rep_calc(am1 + en1, F_MONEY,
					 "usd_per_gpu / (life_years * 8760) + node_power_kw / gpus_per_node * pue * usd_per_kwh"),
				rep_calc(total, F_MONEY, "amortized + energy"),
				rep_calc(per, F_MONEY, "total / (tokens / 1e6)"),
				rep_text("%s; terms in the ownership table", rep_str(r, d, "/prices/%d/source", buy)),
			};
			rep_row(r, ct, row);
			rep_id(tid, sizeof tid, d, "ownership");
			ot = rep_kv_new(r, tid, "Owning instead of renting");
			rep_kv(r, ot, "purchase price per GPU", rep_src(r, d, F_MONEY, "/prices/%d/usd_per_gpu", buy), "%s, %s",
			       rep_str(r, d, "/prices/%d/provider", buy), rep_str(r, d, "/prices/%d/date", buy));
			rep_kv(r, ot, "life (years)", rep_src(r, d, F_NUM3, "/ownership/life_years"),
			       "assumed: linear amortization ('plan train --life-years')");
			rep_kv(r, ot, "node power (kW)", rep_src(r, d, F_NUM3, "/ownership/node_power_kw"),
			       "the system's maximum power in the hardware database");
			rep_kv(r, ot, "GPUs per node", rep_src(r, d, F_INT, "/gpus_per_node"), "the system");
			rep_kv(r, ot, "PUE", rep_src(r, d, F_NUM3, "/ownership/pue"), "assumed ('plan train --pue')");
			rep_kv(r, ot, "electricity per kWh", rep_src(r, d, F_MONEY, "/ownership/usd_per_kwh"),
			       "assumed ('plan train --kwh-price')");
			rep_kv(r, ot, "amortization per GPU-hour", rep_calc(am1, F_MONEY, "usd_per_gpu / (life_years * 8760)"),
			       "= purchase / (life x 8,760 h)");
			rep_kv(r, ot, "energy per GPU-hour",
			       rep_calc(en1, F_MONEY, "node_power_kw / gpus_per_node * pue * usd_per_kwh"),
			       "= node power / GPUs per node x PUE x price per kWh");
			rep_kv(r, ot, "amortization for this training",
			       rep_calc(am, F_MONEY, "amortization per GPU-hour * gpus * hours"),
			       "the share of the purchase the training uses up");
			rep_kv(r, ot, "energy for this training", rep_calc(en, F_MONEY, "energy per GPU-hour * gpus * hours"),
			       "every GPU at full node power");
		}
	}
	if (!show)
		return out;
	rep_table_note(r, ct,
		       "Rent: GPU-hours x the price per GPU-hour. Owned: the purchase amortized linearly over its life for the "
		       "hours of training, plus energy (node power x PUE x price per kWh). Both assume the GPUs train all the "
		       "time: no idle time, restarts or spare nodes. Prices are the hardware database's, each with its date and "
		       "source; cloud prices change often.");
	rep_show_table(r, ct);
	if (buy >= 0)
		rep_show_table(r, ot);
	return out;
}

/* ---- training: a layout search ------------------------------------------------------------- */

/* The 80% interval of the step time of the result at `at` ("" or "/counts/0/candidates/3"; sim/config.c
 * sim_interval: the framework's cross-validated errors). */
static bool
step_interval(rep_report *r, const rep_doc *d, const char *at, double *lo, double *hi)
{
	return rep_interval(r, d, at, "step_time_interval_s", lo, hi);
}

static void
interval_rows(rep_report *r, const rep_doc *d, size_t t, const char *at)
{
	double lo, hi;
	if (!step_interval(r, d, at, &lo, &hi))
		return;
	static const char basis[] = "80%% interval: the framework's cross-validated errors on published runs";
	rep_kv(r, t, "step time, low end", rep_src(r, d, F_SEC, "%s/step_time_interval_s/0", at), basis);
	rep_kv(r, t, "step time, high end", rep_src(r, d, F_SEC, "%s/step_time_interval_s/1", at), basis);
}

static void
scaling(rep_report *r, const rep_doc *d)
{
	int n = rep_has(d, "/scaling") ? rep_len(r, d, "/scaling") : 0;
	if (n < 2)
		return;
	bool priced = rep_has(d, "/scaling/0/usd_per_million_tokens");
	static const char *const head[] = {"GPUs", "Step time", "Tokens/s", "Tokens/s per GPU", "Efficiency", "per M tokens"};
	const char *key[] = {"gpus", "step_time_s", "tokens_per_s", "tokens_per_s_per_gpu", "efficiency",
			     rep_ck(r, "%s_per_million_tokens")};
	char tid[48];
	rep_id(tid, sizeof tid, d, "scaling");
	rep_heading(r, B_H3, tid, "Scaling with the number of GPUs");
	size_t t = rep_table_new(r, tid, "Scaling: the best layout at each GPU count", priced ? 6 : 5, head, key);
	char title[160];
	snprintf(title, sizeof title, "Scaling of %s on %s", r->model, rep_str(r, d, "/system"));
	rep_chart *c = rep_chart_new(r, tid, title,
				     "Throughput of the best layout at each GPU count (left axis), the ideal linear scaling "
				     "from the smallest count, and the efficiency against it (right axis).");
	double base = 0;
	for (int i = 0; i < n; i++) {
		rep_cell row[] = {
			rep_src(r, d, F_INT, "/scaling/%d/gpus", i),
			rep_src(r, d, F_SEC, "/scaling/%d/step_time_s", i),
			rep_src(r, d, F_NUM, "/scaling/%d/tokens_per_s", i),
			rep_src(r, d, F_NUM, "/scaling/%d/tokens_per_s_per_gpu", i),
			rep_src(r, d, F_PCT, "/scaling/%d/efficiency", i),
			priced ? rep_src(r, d, F_MONEY, "/scaling/%d/usd_per_million_tokens", i) : rep_none(),
		};
		if (!priced)
			rep_cell_free(&row[5]);
		rep_row(r, t, row);
	}
	rep_table_note(r, t, "Efficiency: tokens/s per GPU against the smallest count's.");
	rep_series(c, "tokens/s");
	for (int i = 0; i < n; i++)
		rep_chart_row(c, rep_num(r, d, "/scaling/%d/gpus", i), rep_num(r, d, "/scaling/%d/tokens_per_s", i));
	rep_series(c, "ideal (linear from the smallest count)");
	base = rep_num(r, d, "/scaling/0/tokens_per_s_per_gpu");
	for (int i = 0; i < n; i++) {
		double g = rep_num(r, d, "/scaling/%d/gpus", i);
		rep_chart_row(c, g, base * g);
	}
	rep_series(c, "efficiency");
	for (int i = 0; i < n; i++)
		rep_chart_row(c, rep_num(r, d, "/scaling/%d/gpus", i),
			      100.0 * rep_num(r, d, "/scaling/%d/efficiency", i));
	if (c != NULL) {
		pp_str_addf(&c->gp, "set xlabel \"GPUs\"\nset ylabel \"tokens/s\"\nset y2label \"efficiency (%%)\"\n"
				    "set logscale x 2\nset y2range [0:110]\nset ytics nomirror\nset y2tics\nset yrange [0:*]\n"
				    "set format y \"%%.0s%%c\"\nset key outside top center horizontal\n"
				    "plot '%s.dat' index 0 using 1:2 with linespoints lt 1 title 'tokens/s', \\\n"
				    "     '' index 1 using 1:2 with lines lt 8 dt 2 title 'ideal linear', \\\n"
				    "     '' index 2 using 1:2 axes x1y2 with linespoints lt 2 title 'efficiency (right axis)'\n",
			    c->name);
		rep_show_chart(r, c);
	}
	rep_show_table(r, t);
}

static void
pareto(rep_report *r, const rep_doc *d)
{
	int n = rep_has(d, "/pareto") ? rep_len(r, d, "/pareto") : 0;
	if (n < 1)
		return;
	char tid[48];
	rep_id(tid, sizeof tid, d, "pareto");
	rep_heading(r, B_H3, tid, "Time against cost");
	static const char *const head[] = {"GPUs", "Layout", "Step time", "Tokens/s", "per M tokens"};
	const char *key[] = {"gpus", "key", "step_time_s", "tokens_per_s", rep_ck(r, "%s_per_million_tokens")};
	size_t t = rep_table_new(r, tid, "Pareto front: no other layout is both faster and cheaper", 5, head, key);
	for (int i = 0; i < n; i++) {
		rep_cell row[] = {
			rep_src(r, d, F_INT, "/pareto/%d/gpus", i),
			rep_text("%s", rep_str(r, d, "/pareto/%d/key", i)),
			rep_src(r, d, F_SEC, "/pareto/%d/step_time_s", i),
			rep_src(r, d, F_NUM, "/pareto/%d/tokens_per_s", i),
			rep_src(r, d, F_MONEY, "/pareto/%d/usd_per_million_tokens", i),
		};
		rep_row(r, t, row);
	}
	rep_table_note(r, t, "Cost at the price the planner ranked with: %s.",
		       rep_has(d, "/price_source") ? rep_str(r, d, "/price_source") : "none");
	char title[160];
	snprintf(title, sizeof title, "Step time against cost per million tokens, %s on %s", r->model,
		 rep_str(r, d, "/system"));
	rep_chart *c = rep_chart_new(r, tid, title,
				     "Every layout simulated in full (points, with the 80% interval of its step time where "
				     "the plan has one) and the Pareto front (line): the layouts no other beats on both time "
				     "and cost.");
	rep_series(c, "simulated layouts");
	bool bars = false;
	int nc = rep_len(r, d, "/counts");
	for (int i = 0; i < nc; i++) {
		int k = rep_len(r, d, "/counts/%d/candidates", i);
		for (int j = 0; j < k; j++)
			if (rep_has(d, "/counts/%d/candidates/%d/usd_per_million_tokens", i, j)) {
				/* the 80% interval of the step time as an error bar; without one, none */
				double st = rep_num(r, d, "/counts/%d/candidates/%d/step_time_s", i, j), lo = st, hi = st;
				char at[64];
				snprintf(at, sizeof at, "/counts/%d/candidates/%d", i, j);
				if (step_interval(r, d, at, &lo, &hi))
					bars = true;
				rep_chart_row(c, st,
					      rep_num(r, d, "/counts/%d/candidates/%d/usd_per_million_tokens", i, j), lo, hi);
			}
	}
	/* the front sorted by time, so the line runs left to right */
	int *ord = calloc((size_t)n, sizeof *ord);
	if (ord == NULL) {
		rep_fail(r, PP_ENOMEM, "out of memory");
		return;
	}
	for (int i = 0; i < n; i++)
		ord[i] = i;
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && rep_num(r, d, "/pareto/%d/step_time_s", ord[j]) <
						 rep_num(r, d, "/pareto/%d/step_time_s", ord[j - 1]);
		     j--) {
			int x = ord[j];
			ord[j] = ord[j - 1];
			ord[j - 1] = x;
		}
	rep_series(c, "Pareto front");
	for (int i = 0; i < n; i++)
		rep_chart_row(c, rep_num(r, d, "/pareto/%d/step_time_s", ord[i]),
			      rep_num(r, d, "/pareto/%d/usd_per_million_tokens", ord[i]));
	free(ord);
	if (c != NULL) {
		pp_str_addf(&c->gp, "set xlabel \"step time (s)\"\nset ylabel \"USD per million tokens\"\nset key outside top center horizontal\n"
				    "set offsets graph 0.05, graph 0.05, graph 0.08, graph 0.08\n"
				    "plot '%s.dat' index 0 using 1:2%s title 'simulated layouts%s', \\\n"
				    "     '' index 1 using 1:2 with linespoints lt 4 pt 7 ps 1.3 title 'Pareto front'\n",
			    c->name, bars ? ":3:4 with xerrorbars lt 8 pt 7 ps 0.8" : " with points lt 8 pt 7 ps 0.8",
			    bars ? " (bars: 80% interval of the step time)" : "");
		rep_show_chart(r, c);
	}
	rep_show_table(r, t);
}

void
rep_sec_plan_train(rep_report *r, rep_doc *d, double tokens)
{
	char tid[48];
	rep_id(tid, sizeof tid, d, "plan");
	rep_heading(r, B_H3, tid, "Layout search: %s on %s (%s)", r->model, rep_str(r, d, "/system"), d->name);
	int nc = rep_len(r, d, "/counts");
	if (!rep_ok(r))
		return;
	if (nc == 0 || rep_len(r, d, "/counts/0/candidates") == 0) {
		rep_block *b = rep_para(r, B_NOTE);
		if (nc > 0 && rep_has(d, "/counts/0/smallest_footprint_bytes")) {
			rep_say(b, "No layout fits on ");
			rep_put(b, rep_src(r, d, F_INT, "/counts/0/gpus"));
			rep_say(b, " GPUs: the smallest needs ");
			rep_put(b, rep_src(r, d, F_GIB, "/counts/0/smallest_footprint_bytes"));
			rep_say(b, " per GPU of ");
			rep_put(b, rep_src(r, d, F_GIB, "/counts/0/capacity_bytes"));
			rep_say(b, ". Use more GPUs or GPUs with more memory.");
		} else {
			rep_say(b, "No valid layout was found: check that the global batch divides by the data-parallel degrees.");
		}
		return;
	}
	/* the search found layouts: the plan names its winner, the first candidate of the first
	 * count (planner/result.c); a plan without one is not a plan's output */
	if (!rep_has(d, "/winner")) {
		rep_fail(r, PP_EINPUT, "%s: \"/winner\" is missing: a plan whose search found layouts names its winner", d->path);
		return;
	}
	double ws = rep_num(r, d, "/winner/step_time_s"), cs = rep_num(r, d, "/counts/0/candidates/0/step_time_s");
	if (rep_ok(r) && fabs(ws - cs) > 1e-9 * cs) {
		rep_fail(r, PP_EINPUT, "%s: \"/winner/step_time_s\" (%.9g s) is not the first candidate's (%.9g s)", d->path, ws,
			 cs);
		return;
	}
	const char *w = "/counts/0/candidates/0";
	char cfg[64];
	snprintf(cfg, sizeof cfg, "%s/config", w);
	pp_str lay = {0};
	rep_layout(r, d, cfg, &lay);
	rep_block *b = rep_para(r, B_P);
	rep_say(b, "Chosen layout for ");
	rep_put(b, rep_src(r, d, F_INT, "%s/gpus", cfg));
	rep_say(b, " x %s (%s): %s. ", rep_str(r, d, "/gpu"), rep_str(r, d, "/system"), lay.buf ? lay.buf : "");
	pp_str_free(&lay);
	rep_say(b, "Why: of ");
	rep_put(b, rep_src(r, d, F_INT, "/counts/0/enumerated"));
	rep_say(b, " layouts enumerated, ");
	rep_put(b, rep_src(r, d, F_INT, "/counts/0/invalid"));
	rep_say(b, " do not divide the model or the batch, ");
	rep_put(b, rep_src(r, d, F_INT, "/counts/0/out_of_memory"));
	rep_say(b, " do not fit in memory; the best ");
	rep_put(b, rep_src(r, d, F_INT, "/counts/0/simulated"));
	rep_say(b, " of the rest by a closed-form estimate were simulated in full, and this one has the %s (the objective). "
		   "The runners-up below say what each lost on.",
		!strcmp(rep_str(r, d, "/objective"), "cost") ? "lowest cost per token" : "shortest step");
	if (rep_bool(r, d, "/interrupted"))
		rep_notice(r, "%s: the search was interrupted; it shows the best found so far", d->path);

	config_table(r, d, cfg, "the winner");

	rep_id(tid, sizeof tid, d, "performance");
	size_t t = rep_kv_new(r, tid, "Speed of the chosen layout");
	rep_kv(r, t, "step time", rep_src(r, d, F_SEC, "%s/step_time_s", w), "simulated");
	interval_rows(r, d, t, w);
	rep_kv(r, t, "tokens per step", rep_src(r, d, F_COUNT, "/tokens_per_step"), "= global batch x sequence length");
	rep_kv(r, t, "throughput (tokens/s)", rep_src(r, d, F_NUM, "%s/tokens_per_s", w), "= tokens per step / step time");
	rep_kv(r, t, "tokens/s per GPU", rep_src(r, d, F_NUM, "%s/tokens_per_s_per_gpu", w), "simulated");
	rep_kv(r, t, "MFU", rep_src(r, d, F_PCT, "%s/mfu", w), "model FLOPs per second over the GPUs' dense peak");
	rep_kv(r, t, "HFU", rep_src(r, d, F_PCT, "%s/hfu", w), "as MFU, counting recomputed FLOPs");
	rep_kv(r, t, "pipeline bubble", rep_src(r, d, F_PCT, "%s/bubble_fraction", w), "share of the step");
	rep_kv(r, t, "exposed communication per step", rep_src(r, d, F_SEC, "%s/exposed_comm_s", w),
	       "communication not hidden behind compute");
	rep_kv(r, t, "peak memory per GPU", rep_src(r, d, F_GIB, "%s/peak_bytes", w), "memory model, worst stage");
	rep_kv(r, t, "GPU memory", rep_src(r, d, F_GIB, "%s/capacity_bytes", w), "the GPU");
	rep_show_table(r, t);

	static const char *const head[] = {"#", "Layout", "Step time", "80% interval", "Tokens/s per GPU", "MFU",
					   "Peak memory", "per M tokens", "Why not first"};
	const char *key[] = {"rank", "key", "step_time_s", "step_time_interval_s", "tokens_per_s_per_gpu", "mfu",
			     "peak_bytes", rep_ck(r, "%s_per_million_tokens"), "why_not_first"};
	rep_id(tid, sizeof tid, d, "candidates");
	t = rep_table_new(r, tid, "The best layouts simulated, and why each lost", 9, head, key);
	int n = rep_len(r, d, "/counts/0/candidates");
	for (int i = 0; i < n; i++) {
		bool priced = rep_has(d, "/counts/0/candidates/%d/usd_per_million_tokens", i);
		char at[64];
		double lo, hi;
		snprintf(at, sizeof at, "/counts/0/candidates/%d", i);
		bool iv = step_interval(r, d, at, &lo, &hi);
		const char *why = rep_str(r, d, "/counts/0/candidates/%d/why_not_first", i);
		rep_cell row[] = {
			rep_src(r, d, F_INT, "/counts/0/candidates/%d/rank", i),
			rep_text("%s", rep_str(r, d, "/counts/0/candidates/%d/key", i)),
			rep_src(r, d, F_SEC, "/counts/0/candidates/%d/step_time_s", i),
			iv ? rep_text("%.4g to %.4g s", lo, hi) : rep_text("-"),
			rep_src(r, d, F_NUM, "/counts/0/candidates/%d/tokens_per_s_per_gpu", i),
			rep_src(r, d, F_PCT, "/counts/0/candidates/%d/mfu", i),
			rep_src(r, d, F_GIB, "/counts/0/candidates/%d/peak_bytes", i),
			priced ? rep_src(r, d, F_MONEY, "/counts/0/candidates/%d/usd_per_million_tokens", i) : rep_none(),
			rep_text("%s", i == 0 ? "the winner" : why),
		};
		rep_row(r, t, row);
	}
	if (rep_has(d, "/price_source"))
		rep_table_note(r, t, "Cost per million tokens at the price the planner ranked with: %s.",
			       rep_str(r, d, "/price_source"));
	rep_show_table(r, t);

	rep_id(tid, sizeof tid, d, "costs");
	rep_heading(r, B_H3, tid, "Time and cost to train");
	rep_train_costs(r, d, w, tokens, true);
	scaling(r, d);
	pareto(r, d);
}

/* ---- training: one simulated step ---------------------------------------------------------- */

static void
memory(rep_report *r, const rep_doc *d)
{
	static const char *const part[] = {"weights", "grads", "optimizer", "activations", "comm_buffers", "workspace", "reserve"};
	static const char *const label[] = {"weights", "gradients", "optimizer states", "activations",
					    "communication buffers", "workspace", "fragmentation reserve"};
	static const char *const head[] = {"Stage", "Weights", "Gradients", "Optimizer", "Activations", "In flight",
					   "Comm. buffers", "Workspace", "Reserve", "Peak", "GPU memory", "Fits"};
	static const char *const key[] = {"stage", "weights_bytes", "grads_bytes", "optimizer_bytes", "activations_bytes",
					  "inflight_microbatches", "comm_buffers_bytes", "workspace_bytes", "reserve_bytes",
					  "peak_bytes", "capacity_bytes", "fits"};
	int n = rep_len(r, d, "/memory");
	if (n == 0 || !rep_ok(r))
		return;
	char tid[48];
	rep_id(tid, sizeof tid, d, "memory");
	rep_heading(r, B_H3, tid, "Memory per pipeline stage");
	size_t t = rep_table_new(r, tid, "Memory per GPU by pipeline stage", 12, head, key);
	for (int s = 0; s < n; s++) {
		rep_cell row[12];
		row[0] = rep_src(r, d, F_INT, "/memory/%d/stage", s);
		for (int k = 0; k < 4; k++)
			row[1 + k] = rep_src(r, d, F_GIB, "/memory/%d/%s_bytes", s, part[k]);
		row[5] = rep_src(r, d, F_INT, "/memory/%d/inflight_microbatches", s);
		for (int k = 4; k < 7; k++)
			row[2 + k] = rep_src(r, d, F_GIB, "/memory/%d/%s_bytes", s, part[k]);
		row[9] = rep_src(r, d, F_GIB, "/memory/%d/peak_bytes", s);
		row[10] = rep_src(r, d, F_GIB, "/memory/%d/capacity_bytes", s);
		row[11] = rep_text("%s", rep_yes_no(rep_bool(r, d, "/memory/%d/fits", s)));
		rep_row(r, t, row);
	}
	rep_table_note(r, t, "Activations are those of the micro-batches in flight on the stage under the schedule; the "
			     "reserve allows for fragmentation.");
	char title[160];
	snprintf(title, sizeof title, "Memory per GPU by pipeline stage, %s on %s", r->model, rep_str(r, d, "/system"));
	rep_chart *c = rep_chart_new(r, tid, title,
				     "What fills each stage's GPU memory (stacked), against the GPU's memory (line).");
	/* one block per part: stage, middle and half height of its box, in GiB (stacked by hand so
	 * every series keeps its own block) */
	double *base = calloc((size_t)n, sizeof *base);
	if (base == NULL) {
		rep_fail(r, PP_ENOMEM, "out of memory");
		return;
	}
	for (int k = 0; k < 7; k++) {
		rep_series(c, label[k]);
		for (int s = 0; s < n; s++) {
			double v = rep_num(r, d, "/memory/%d/%s_bytes", s, part[k]) / 1073741824.0;
			rep_chart_row(c, s, base[s] + v / 2, v / 2);
			base[s] += v;
		}
	}
	free(base);
	rep_series(c, "GPU memory");
	for (int s = 0; s < n; s++) {
		double cap = rep_num(r, d, "/memory/%d/capacity_bytes", s) / 1073741824.0;
		rep_chart_row(c, s - 0.45, cap);
		rep_chart_row(c, s + 0.45, cap);
	}
	if (c != NULL) {
		pp_str_addf(&c->gp, "set xlabel \"pipeline stage\"\nset ylabel \"GiB per GPU\"\nset yrange [0:*]\n"
				    "set offsets 0, 0, graph 0.08, 0\n"
				    "set xrange [-0.6:%d.6]\nset xtics 1\nset key outside right top\nset style fill solid 0.85 border rgb \"#ffffff\"\n",
			    n - 1);
		rep_gp_each(c, 0, 7, "1:2:(0.35):3", "boxxyerror", 1, true);
		pp_str_add(&c->gp, ", \\\n     '' index 7 using 1:2 with lines lt 8 lw 3 dt 2 title 'GPU memory'\n");
		rep_show_chart(r, c);
	}
	rep_show_table(r, t);
}

/* The trace of a step as a timeline, and each rank's idle share. */
void
rep_sec_timeline(rep_report *r, const rep_doc *td, const rep_doc *sim)
{
	const rep_trace *tr = td->trace;
	char tid[48];
	rep_id(tid, sizeof tid, td, "timeline");
	if (sim == NULL)
		rep_heading(r, B_H3, tid, "Timeline of one training step (%s)", td->name);
	else
		rep_heading(r, B_H3, tid, "Timeline of the step (%s)", td->name);
	if (tr->shown < tr->nranks)
		rep_notice(r, "%s: the timeline shows the first %d of %d ranks", td->path, tr->shown, tr->nranks);
	char title[160];
	snprintf(title, sizeof title, "One training step, %s%s%s", sim ? r->model : td->name, sim ? " on " : "",
		 sim ? rep_str(r, sim, "/system") : "");
	rep_chart *c = rep_chart_new(r, tid, title,
				     "Each rank's compute stream and its communication streams over one step (pipeline "
				     "schedule, bubbles, exposed communication); ops closer than 1/2000 of the step are drawn "
				     "as one bar.");
	int rows = 2 * tr->shown;
	for (int cat = 0; cat < G_NCATS; cat++) {
		size_t k = 0;
		for (size_t i = 0; i < tr->nbars; i++)
			k += tr->bars[i].cat == cat;
		if (k == 0)
			continue;
		rep_series(c, rep_gantt_cat[cat]);
		for (size_t i = 0; i < tr->nbars; i++) {
			const rep_bar *b = &tr->bars[i];
			if (b->cat != cat)
				continue;
			/* compute fills its row; the three kinds of communication share theirs in thin lanes,
			 * so tensor-parallel traffic (nearly always busy) does not hide the rest */
			double y = rows - 1 - b->row, h = 0.38;
			if (cat >= G_TP) {
				y += cat == G_TP ? 0.26 : cat == G_PP ? 0.0 : -0.26;
				h = 0.11;
			}
			/* at least a pixel wide (1/1000 of the step), so short sends and reductions show */
			double half = fmax((b->t1 - b->t0) / 2, tr->end_s / 2000.0);
			rep_chart_row(c, (b->t0 + b->t1) / 2, y, half, h);
		}
	}
	if (c != NULL) {
		c->height = 160 + 40 * rows;
		pp_str_add(&c->gp, "set xlabel \"time in the step (s)\"\nset ytics (");
		for (int row = 0; row < rows; row++) {
			char lbl[64];
			snprintf(lbl, sizeof lbl, "rank %d %s", tr->pids[row / 2], row % 2 ? "comm" : "compute");
			pp_str_add(&c->gp, row ? ", " : "");
			rep_gp_quote(&c->gp, lbl);
			pp_str_addf(&c->gp, " %d", rows - 1 - row);
		}
		pp_str_addf(&c->gp, ")\nset yrange [-0.6:%d.6]\nset xrange [0:%.9g]\nset grid noytics\n"
				    "set key outside below horizontal\nset style fill solid 1.0 noborder\n",
			    rows - 1, tr->end_s);
		/* a colour per category, the same in every timeline */
		int k = 0;
		for (int cat = 0; cat < G_NCATS; cat++) {
			bool have = false;
			for (size_t i = 0; i < tr->nbars && !have; i++)
				have = tr->bars[i].cat == cat;
			if (!have)
				continue;
			pp_str_add(&c->gp, k == 0 ? "plot '" : ", \\\n     '");
			pp_str_addf(&c->gp, "%s%s' index %d using 1:2:3:4 with boxxyerror lt %d title ", k == 0 ? c->name : "",
				    k == 0 ? ".dat" : "", k,
				    cat + 1);
			rep_gp_quote(&c->gp, rep_gantt_cat[cat]);
			k++;
		}
		pp_str_add(&c->gp, "\n");
		rep_show_chart(r, c);
	}
	static const char *const head[] = {"Rank", "Compute busy", "Idle", "Idle share"};
	static const char *const key[] = {"rank", "compute_busy_s", "idle_s", "idle_fraction"};
	size_t t = rep_table_new(r, tid, "Where each rank waits in the step", 4, head, key);
	for (int k = 0; k < tr->shown; k++) {
		double busy = tr->busy_s[k], idle = tr->end_s - busy;
		rep_cell row[] = {
			rep_calc(tr->pids[k], F_INT, "trace pid"),
			rep_calc(busy, F_SEC, "sum of the durations of the rank's compute ops"),
			rep_calc(idle, F_SEC, "step - busy"),
			rep_calc(tr->end_s > 0 ? idle / tr->end_s : 0.0, F_PCT, "idle / step"),
		};
		rep_row(r, t, row);
	}
	rep_table_note(r, t, "From the trace: the step ends with its last op; a rank's compute is idle while it waits for "
			     "the pipeline (bubble) or for communication it cannot hide.");
	rep_show_table(r, t);
}

void
rep_sec_sim_train(rep_report *r, rep_doc *d, double tokens)
{
	char tid[48];
	rep_id(tid, sizeof tid, d, "sim");
	rep_heading(r, B_H3, tid, "Simulated step: %s on %s (%s)", r->model, rep_str(r, d, "/system"), d->name);
	pp_str lay = {0};
	rep_layout(r, d, "/config", &lay);
	rep_block *b = rep_para(r, B_P);
	rep_put(b, rep_src(r, d, F_INT, "/config/gpus"));
	rep_say(b, " GPUs of %s: %s. One step of ", rep_str(r, d, "/system"), lay.buf ? lay.buf : "");
	pp_str_free(&lay);
	rep_put(b, rep_src(r, d, F_INT, "/config/global_batch"));
	rep_say(b, " sequences takes ");
	rep_put(b, rep_src(r, d, F_SEC, "/step_time_s"));
	rep_say(b, " at ");
	rep_put(b, rep_src(r, d, F_PCT, "/mfu"));
	rep_say(b, " MFU. ");
	if (rep_bool(r, d, "/fits")) {
		rep_say(b, "It fits in memory on every stage.");
	} else {
		int n = rep_len(r, d, "/memory");
		for (int s = 0; s < n; s++)
			if (!rep_bool(r, d, "/memory/%d/fits", s)) {
				rep_say(b, "It does NOT fit in memory: stage %d needs ", s);
				rep_put(b, rep_src(r, d, F_GIB, "/memory/%d/peak_bytes", s));
				rep_say(b, " of ");
				rep_put(b, rep_src(r, d, F_GIB, "/memory/%d/capacity_bytes", s));
				rep_say(b, ".");
				break;
			}
		rep_notice(r, "%s: the simulated configuration does not fit in GPU memory", d->path);
	}
	config_table(r, d, "/config", "given");
	rep_id(tid, sizeof tid, d, "performance");
	size_t t = rep_kv_new(r, tid, "Speed");
	rep_kv(r, t, "step time", rep_src(r, d, F_SEC, "/step_time_s"), "simulated");
	interval_rows(r, d, t, "");
	rep_kv(r, t, "throughput (tokens/s)", rep_src(r, d, F_NUM, "/tokens_per_s"), "simulated");
	rep_kv(r, t, "tokens/s per GPU", rep_src(r, d, F_NUM, "/tokens_per_s_per_gpu"), "simulated");
	rep_kv(r, t, "MFU", rep_src(r, d, F_PCT, "/mfu"), "model FLOPs per second over the dense peak");
	rep_kv(r, t, "HFU", rep_src(r, d, F_PCT, "/hfu"), "as MFU, counting recomputed FLOPs");
	rep_kv(r, t, "model TFLOP/s per GPU", rep_src(r, d, F_NUM, "/model_tflops_per_gpu"), "simulated");
	rep_kv(r, t, "dense peak TFLOP/s per GPU", rep_src(r, d, F_NUM, "/peak_tflops_per_gpu"), "the GPU's datasheet");
	rep_kv(r, t, "pipeline bubble", rep_src(r, d, F_PCT, "/bubble_fraction"), "share of the step");
	rep_kv(r, t, "exposed communication per step", rep_src(r, d, F_SEC, "/exposed_comm_s"),
	       "communication not hidden behind compute");
	rep_kv(r, t, "compute per step", rep_src(r, d, F_SEC, "/compute_s"), "simulated");
	rep_show_table(r, t);
	rep_id(tid, sizeof tid, d, "costs");
	rep_heading(r, B_H3, tid, "Time to train");
	rep_train_costs(r, d, "", tokens, true);
	memory(r, d);
	if (d->trace_doc >= 0)
		rep_sec_timeline(r, &r->docs[d->trace_doc], d);
}

/* ---- capacity ------------------------------------------------------------------------------ */

void
rep_sec_capacity(rep_report *r, rep_doc *d)
{
	char tid[48];
	rep_id(tid, sizeof tid, d, "capacity");
	rep_heading(r, B_H3, tid, "Capacity plan (%s)", d->name);
	rep_block *b = rep_para(r, B_P);
	rep_say(b, "For each system, the smallest number of whole nodes whose best layout trains ");
	rep_put(b, rep_src(r, d, F_COUNT, "/tokens"));
	rep_say(b, " tokens within ");
	rep_put(b, rep_src(r, d, F_NUM3, "/days"));
	rep_say(b, " days (");
	rep_put(b, rep_src(r, d, F_INT, "/global_batch"));
	rep_say(b, " sequences of ");
	rep_put(b, rep_src(r, d, F_INT, "/seq"));
	rep_say(b, " tokens per step), and what it costs to rent at every listed price or to buy.");
	if (rep_has(d, "/interrupted") && rep_bool(r, d, "/interrupted"))
		rep_notice(r, "%s: the capacity search was interrupted; some systems are missing", d->path);

	static const char *const head[] = {"System", "GPU", "GPUs", "Nodes", "Days", "GPU-hours", "Tokens/s", "MFU", "Layout"};
	static const char *const key[] = {"system", "gpu", "gpus", "nodes", "days", "gpu_hours", "tokens_per_s", "mfu", "layout"};
	size_t t = rep_table_new(r, tid, "GPUs needed and time to train, per system", 9, head, key);
	int n = rep_len(r, d, "/systems");
	for (int i = 0; i < n; i++) {
		char p[32];
		snprintf(p, sizeof p, "/systems/%d", i);
		if (!rep_bool(r, d, "%s/feasible", p)) {
			rep_cell row[] = {rep_text("%s", rep_str(r, d, "%s/system", p)), rep_text("%s", rep_str(r, d, "%s/gpu", p)),
					  rep_none(), rep_none(), rep_none(), rep_none(), rep_none(), rep_none(),
					  rep_text("not feasible: %s", rep_str(r, d, "%s/reason", p))};
			rep_row(r, t, row);
			continue;
		}
		char cfg[48];
		snprintf(cfg, sizeof cfg, "%s/config", p);
		pp_str lay = {0};
		rep_layout(r, d, cfg, &lay);
		rep_cell row[] = {
			rep_text("%s", rep_str(r, d, "%s/system", p)), rep_text("%s", rep_str(r, d, "%s/gpu", p)),
			rep_src(r, d, F_INT, "%s/gpus", p),           rep_src(r, d, F_INT, "%s/nodes", p),
			rep_src(r, d, F_NUM3, "%s/days", p),          rep_src(r, d, F_COUNT, "%s/gpu_hours", p),
			rep_src(r, d, F_NUM, "%s/tokens_per_s", p),   rep_src(r, d, F_PCT, "%s/mfu", p),
			rep_text("%s", lay.buf ? lay.buf : ""),
		};
		pp_str_free(&lay);
		rep_row(r, t, row);
	}
	rep_show_table(r, t);

	static const char *const rhead[] = {"System", "Provider", "Kind", "Date", "per GPU-hour", "Total", "per M tokens", "Source"};
	const char *rkey[] = {"system", "provider", "kind", "date", rep_ck(r, "%s_per_gpu_hour"), rep_ck(r, "total_%s"),
			      rep_ck(r, "%s_per_million_tokens"), "source"};
	rep_id(tid, sizeof tid, d, "rent");
	t = rep_table_new(r, tid, "Renting: every listed price", 8, rhead, rkey);
	for (int i = 0; i < n; i++) {
		if (!rep_bool(r, d, "/systems/%d/feasible", i))
			continue;
		int k = rep_len(r, d, "/systems/%d/rent", i);
		for (int j = 0; j < k; j++) {
			char p[48];
			snprintf(p, sizeof p, "/systems/%d/rent/%d", i, j);
			rep_cell row[] = {
				rep_text("%s", rep_str(r, d, "/systems/%d/system", i)),
				rep_text("%s", rep_str(r, d, "%s/provider", p)),
				rep_text("%s", rep_str(r, d, "%s/kind", p)),
				rep_text("%s", rep_str(r, d, "%s/date", p)),
				rep_src(r, d, F_MONEY, "%s/usd_per_gpu_hour", p),
				rep_src(r, d, F_MONEY, "%s/total_usd", p),
				rep_src(r, d, F_MONEY, "%s/usd_per_million_tokens", p),
				rep_text("%s", rep_str(r, d, "%s/source", p)),
			};
			rep_row(r, t, row);
		}
	}
	rep_table_note(r, t, "Total: GPU-hours x the price per GPU-hour, the GPUs busy all the time.");
	rep_show_table(r, t);

	static const char *const bhead[] = {"System", "Price per GPU", "Purchase", "Life (years)", "Amortized", "Node kW",
					    "PUE", "per kWh", "Energy", "Total", "per M tokens"};
	const char *bkey[] = {"system", rep_ck(r, "%s_per_gpu"), rep_ck(r, "purchase_%s"), "life_years", rep_ck(r, "amortized_%s"),
			      "node_power_kw", "pue", rep_ck(r, "%s_per_kwh"), rep_ck(r, "energy_%s"), rep_ck(r, "total_%s"),
			      rep_ck(r, "%s_per_million_tokens")};
	rep_id(tid, sizeof tid, d, "buy");
	t = rep_table_new(r, tid, "Owning: purchase amortized over its life, plus energy", 11, bhead, bkey);
	pp_str notes = {0};
	for (int i = 0; i < n; i++) {
		if (!rep_bool(r, d, "/systems/%d/feasible", i))
			continue;
		char p[32];
		snprintf(p, sizeof p, "/systems/%d/buy", i);
		if (!rep_has(d, "%s/total_usd", p)) {
			if (rep_has(d, "%s/note", p))
				pp_str_addf(&notes, " %s: %s.", rep_str(r, d, "/systems/%d/system", i), rep_str(r, d, "%s/note", p));
			continue;
		}
		rep_cell row[] = {
			rep_text("%s", rep_str(r, d, "/systems/%d/system", i)),
			rep_src(r, d, F_MONEY, "%s/usd_per_gpu", p),
			rep_src(r, d, F_MONEY, "%s/purchase_usd", p),
			rep_src(r, d, F_NUM3, "%s/life_years", p),
			rep_src(r, d, F_MONEY, "%s/amortized_usd", p),
			rep_src(r, d, F_NUM3, "%s/node_power_kw", p),
			rep_src(r, d, F_NUM3, "%s/pue", p),
			rep_src(r, d, F_MONEY, "%s/usd_per_kwh", p),
			rep_src(r, d, F_MONEY, "%s/energy_usd", p),
			rep_src(r, d, F_MONEY, "%s/total_usd", p),
			rep_src(r, d, F_MONEY, "%s/usd_per_million_tokens", p),
		};
		rep_row(r, t, row);
		if (rep_has(d, "%s/note", p))
			pp_str_addf(&notes, " %s: %s.", rep_str(r, d, "/systems/%d/system", i), rep_str(r, d, "%s/note", p));
	}
	rep_table_note(r, t,
		       "Amortized: the purchase x the days of training / (365 x life). Energy: node power x nodes x PUE x "
		       "price per kWh x hours. Excludes staff, networking beyond the nodes, financing and resale.%s",
		       notes.buf ? notes.buf : "");
	pp_str_free(&notes);
	rep_show_table(r, t);
}
