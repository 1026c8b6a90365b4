/*
 * build.c -- what a report says, section by section: summary, inputs, then the training
 * (train.c), capacity (train.c) and serving (serve.c) sections, the hardware comparison,
 * confidence, and the method with every assumption; and the checks across documents (one
 * model, every trace matched to its simulation).
 *
 * Every number is read from a document (rep_src: the cell keeps the file and JSON pointer) or
 * derived from numbers read (rep_calc: the cell keeps its formula).  Derived numbers are few:
 * time to train a number of tokens at a throughput, GPU-hours, and cost under a price, all
 * through planner/cost.c, the arithmetic the planner itself uses.
 */
#include "config.h"
#include "planner/plan.h"
#include "reports/rep_int.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *
rep_ck(const rep_report *r, const char *pattern)
{
	static char buf[16][64];
	static int i;
	i = (i + 1) % 16;
	char cur[8];
	size_t k = 0;
	for (; r->currency[k] && k + 1 < sizeof cur; k++)
		cur[k] = (char)(r->currency[k] >= 'A' && r->currency[k] <= 'Z' ? r->currency[k] - 'A' + 'a' : r->currency[k]);
	cur[k] = '\0';
	snprintf(buf[i], sizeof buf[i], pattern, cur);
	return buf[i];
}

void
rep_id(char *buf, size_t n, const rep_doc *d, const char *name)
{
	snprintf(buf, n, "d%d-%s", d->no, name);
}

const char *
rep_yes_no(bool b)
{
	return b ? "yes" : "no";
}

/* A layout in words from a configuration object at `cfg`: "TP 2, PP 1, DP 16, CP 2, ZeRO-3,
 * 1f1b, micro-batch 1, no recomputation, sequence parallel, bf16". */
void
rep_layout(rep_report *r, const rep_doc *d, const char *cfg, pp_str *s)
{
	pp_str_addf(s, "TP %.0f, PP %.0f, DP %.0f", rep_num(r, d, "%s/tp", cfg), rep_num(r, d, "%s/pp", cfg),
		    rep_num(r, d, "%s/dp", cfg));
	if (rep_num(r, d, "%s/cp", cfg) > 1)
		pp_str_addf(s, ", CP %.0f", rep_num(r, d, "%s/cp", cfg));
	if (rep_num(r, d, "%s/ep", cfg) > 1)
		pp_str_addf(s, ", EP %.0f", rep_num(r, d, "%s/ep", cfg));
	if (rep_num(r, d, "%s/vpp", cfg) > 1)
		pp_str_addf(s, ", %.0f virtual stages", rep_num(r, d, "%s/vpp", cfg));
	pp_str_addf(s, ", ZeRO-%.0f%s, %s schedule, micro-batch %.0f", rep_num(r, d, "%s/zero", cfg),
		    rep_bool(r, d, "%s/fsdp", cfg) ? " (FSDP)" : "", rep_str(r, d, "%s/schedule", cfg),
		    rep_num(r, d, "%s/micro_batch", cfg));
	const char *rc = rep_str(r, d, "%s/recompute", cfg);
	if (!strcmp(rc, "none"))
		pp_str_add(s, ", no recomputation");
	else
		pp_str_addf(s, ", %s recomputation", rc);
	if (rep_bool(r, d, "%s/sequence_parallel", cfg))
		pp_str_add(s, ", sequence parallel");
	pp_str_addf(s, ", %s", rep_str(r, d, "%s/dtype", cfg));
}

/* ---- hardware comparison ------------------------------------------------------------------- */

typedef struct cmp_row {
	const rep_doc *d;
	char system[48], what[96];
	char gpus[64], tps[64], mfu[64], days[64], tokens[64]; /* JSON pointers, "" when absent */
	double days_v, tokens_v;                                  /* derived when days[0] is "" */
	rep_costs c;
	int cap_sys; /* capacity: the system's index, else -1 */
} cmp_row;

static void
comparison(rep_report *r, double tokens)
{
	cmp_row *rows = NULL;
	size_t n = 0, cap = 0;
	for (size_t i = 0; i < r->ndocs && rep_ok(r); i++) {
		const rep_doc *d = &r->docs[i];
		if (d->kind == K_PLAN_TRAIN || d->kind == K_TRAIN) {
			bool plan = d->kind == K_PLAN_TRAIN;
			if (plan && (rep_len(r, d, "/counts") == 0 || rep_len(r, d, "/counts/0/candidates") == 0))
				continue;
			if (PP_GROW(rows, cap, n + 1) != 0)
				break;
			cmp_row *x = &rows[n++];
			memset(x, 0, sizeof *x);
			x->d = d;
			x->cap_sys = -1;
			const char *w = plan ? "/counts/0/candidates/0" : "";
			pp_strlcpy(x->system, rep_str(r, d, "/system"), sizeof x->system);
			snprintf(x->what, sizeof x->what, "%s (%s)", plan ? "layout search" : "simulation", d->name);
			snprintf(x->gpus, sizeof x->gpus, "%s/config/gpus", w);
			snprintf(x->tps, sizeof x->tps, "%s/tokens_per_s", w);
			snprintf(x->mfu, sizeof x->mfu, "%s/mfu", w);
			x->tokens_v = tokens;
			x->days_v = tokens / rep_num(r, d, "%s", x->tps) / 86400.0;
			x->c = rep_train_costs(r, d, w, tokens, false); /* the document's own cost table's figures */
		} else if (d->kind == K_CAPACITY) {
			int ns = rep_len(r, d, "/systems");
			for (int s = 0; s < ns; s++) {
				if (!rep_bool(r, d, "/systems/%d/feasible", s))
					continue;
				if (PP_GROW(rows, cap, n + 1) != 0)
					break;
				cmp_row *x = &rows[n++];
				memset(x, 0, sizeof *x);
				x->d = d;
				x->cap_sys = s;
				pp_strlcpy(x->system, rep_str(r, d, "/systems/%d/system", s), sizeof x->system);
				snprintf(x->what, sizeof x->what, "capacity plan (%s)", d->name);
				snprintf(x->gpus, sizeof x->gpus, "/systems/%d/gpus", s);
				snprintf(x->tps, sizeof x->tps, "/systems/%d/tokens_per_s", s);
				snprintf(x->mfu, sizeof x->mfu, "/systems/%d/mfu", s);
				snprintf(x->days, sizeof x->days, "/systems/%d/days", s);
				snprintf(x->tokens, sizeof x->tokens, "/tokens");
				x->c = (rep_costs){false, INFINITY, 0, -1};
				int k = rep_len(r, d, "/systems/%d/rent", s);
				for (int j = 0; j < k; j++) {
					double per = rep_num(r, d, "/systems/%d/rent/%d/usd_per_million_tokens", s, j);
					x->c.any = true;
					x->c.rent_lo = fmin(x->c.rent_lo, per);
					x->c.rent_hi = fmax(x->c.rent_hi, per);
				}
				if (rep_has(d, "/systems/%d/buy/usd_per_million_tokens", s)) {
					x->c.own = rep_num(r, d, "/systems/%d/buy/usd_per_million_tokens", s);
					x->c.any = true;
				}
			}
		}
	}
	/* systems compared: at least two different ones */
	bool several = false;
	for (size_t i = 1; i < n; i++)
		several |= strcmp(rows[i].system, rows[0].system) != 0;
	/* serving: the cheapest deployment per system from each serving plan, and each simulation */
	char first_sys[48] = "";
	bool several_serve = false;
	for (size_t i = 0; i < r->ndocs && rep_ok(r); i++) {
		const rep_doc *d = &r->docs[i];
		int k = d->kind == K_PLAN_SERVE ? rep_len(r, d, "/deployments") : d->kind == K_SERVE ? 1 : 0;
		for (int j = 0; j < k; j++) {
			const char *s = d->kind == K_SERVE ? rep_str(r, d, "/system") : rep_str(r, d, "/deployments/%d/system", j);
			if (!first_sys[0])
				pp_strlcpy(first_sys, s, sizeof first_sys);
			several_serve |= strcmp(first_sys, s) != 0;
		}
	}
	rep_heading(r, B_H2, "comparison", "Hardware comparison");
	if (!several && !several_serve) {
		rep_block *b = rep_para(r, B_NOTE);
		rep_say(b, "Every document is about one system, so there is nothing to compare side by side. Give results for "
			   "several systems (for example a capacity plan, 'plan train --tokens T --days D --systems A,B', or "
			   "'plan serve --systems A,B').");
	}
	if (several) {
		static const char *const head[] = {"System", "From", "GPUs", "Tokens", "Days", "Tokens/s", "MFU",
						   "Lowest rent per M tokens", "Highest rent per M tokens", "Owned per M tokens"};
		const char *key[] = {"system", "from", "gpus", "tokens", "days", "tokens_per_s", "mfu",
				     rep_ck(r, "rent_low_%s_per_million_tokens"), rep_ck(r, "rent_high_%s_per_million_tokens"),
				     rep_ck(r, "owned_%s_per_million_tokens")};
		size_t t = rep_table_new(r, "comparison", "Training on each system: GPUs, time and cost per million tokens", 10,
					 head, key);
		/* the chart: the rows with prices, one group of bars each */
		size_t priced = 0;
		for (size_t i = 0; i < n; i++)
			priced += rows[i].c.any;
		rep_chart *c = NULL;
		if (priced > 0)
			c = rep_chart_new(r, "cost-by-system", "Training cost per million tokens by system",
					  "Cost per million tokens on each system: the lowest and highest rental price listed, "
					  "and owning the hardware (amortized purchase plus energy).");
		static const char *const series[] = {"lowest rental", "highest rental", "owned"};
		for (int s = 0; s < 3 && c != NULL; s++) {
			rep_series(c, series[s]);
			size_t at = 0;
			for (size_t i = 0; i < n; i++) {
				if (!rows[i].c.any)
					continue;
				double v = s == 0 ? rows[i].c.rent_lo : s == 1 ? rows[i].c.rent_hi : rows[i].c.own;
				bool have = s == 2 ? rows[i].c.own >= 0 : isfinite(rows[i].c.rent_lo);
				rep_chart_row(c, (double)at, have ? v : NAN); /* gnuplot leaves undefined points out */
				at++;
			}
		}
		for (size_t i = 0; i < n; i++) {
			cmp_row *x = &rows[i];
			const rep_doc *d = x->d;
			bool rent = x->c.any && isfinite(x->c.rent_lo);
			const char *f = x->cap_sys >= 0 ? "rent/buy of the capacity plan" : "prices listed in the plan";
			rep_cell row[] = {
				rep_text("%s", x->system),
				rep_text("%s", x->what),
				rep_src(r, d, F_INT, "%s", x->gpus),
				x->tokens[0] ? rep_src(r, d, F_COUNT, "%s", x->tokens) : rep_calc(x->tokens_v, F_COUNT, "tokens"),
				x->days[0] ? rep_src(r, d, F_NUM3, "%s", x->days)
					   : rep_calc(x->days_v, F_NUM3, "tokens / tokens_per_s / 86400"),
				rep_src(r, d, F_NUM, "%s", x->tps),
				rep_src(r, d, F_PCT, "%s", x->mfu),
				rent ? rep_calc(x->c.rent_lo, F_MONEY, f) : rep_none(),
				rent ? rep_calc(x->c.rent_hi, F_MONEY, f) : rep_none(),
				x->c.own >= 0 ? rep_calc(x->c.own, F_MONEY, f) : rep_none(),
			};
			rep_row(r, t, row);
		}
		rep_table_note(r, t,
			       "A capacity plan's row is the smallest cluster that trains its tokens in its days; a layout search "
			       "or simulation's row is its own GPU count training the report's tokens. Cost per million tokens "
			       "does not depend on the number of tokens; days do. A simulation carries no prices.");
		if (c != NULL) {
			pp_str_add(&c->gp, "set xtics (");
			size_t at = 0;
			for (size_t i = 0; i < n; i++) {
				if (!rows[i].c.any)
					continue;
				char lbl[96];
				snprintf(lbl, sizeof lbl, "%s, %.0f GPUs", rows[i].system, rep_num(r, rows[i].d, "%s", rows[i].gpus));
				pp_str_addf(&c->gp, "%s", at ? ", " : "");
				rep_gp_quote(&c->gp, lbl);
				pp_str_addf(&c->gp, " %zu", at++);
			}
			char ylabel[64];
			snprintf(ylabel, sizeof ylabel, "%s per million tokens", r->currency);
			pp_str_add(&c->gp, ") rotate by -20\nset bmargin 7\nset rmargin 9\nset ylabel ");
			rep_gp_quote(&c->gp, ylabel);
			pp_str_addf(&c->gp, "\nset yrange [0:*]\n"
					    "set xrange [-0.6:%zu.6]\nset style fill solid 0.85 noborder\nset key outside top center horizontal\n"
					    "plot '%s.dat' index 0 using ($1-0.27):($2*%.17g):(0.25) with boxes lt 1 title 'lowest rental', \\\n"
					    "     '' index 1 using 1:($2*%.17g):(0.25) with boxes lt 2 title 'highest rental', \\\n"
					    "     '' index 2 using ($1+0.27):($2*%.17g):(0.25) with boxes lt 3 title 'owned'\n",
				    priced - 1, c->name, r->o.per_usd, r->o.per_usd, r->o.per_usd);
			rep_show_chart(r, c);
		}
		rep_show_table(r, t);
	}
	if (several_serve) {
		static const char *const head[] = {"System", "Deployment", "From", "GPUs", "per month", "per M output tokens",
						   "P99 TTFT", "P99 TPOT"};
		const char *key[] = {"system", "deployment", "from", "gpus", rep_ck(r, "%s_per_month"),
				     rep_ck(r, "%s_per_million_output_tokens"), "ttft_p99_s", "tpot_p99_s"};
		size_t t = rep_table_new(r, "comparison-serving", "Serving on each system", 8, head, key);
		for (size_t i = 0; i < r->ndocs && rep_ok(r); i++) {
			const rep_doc *d = &r->docs[i];
			if (d->kind == K_PLAN_SERVE) {
				int k = rep_len(r, d, "/deployments");
				for (int j = 0; j < k; j++) {
					/* the cheapest of each system: the first of it in the ranking */
					bool first = true;
					for (int e = 0; e < j && first; e++)
						first = strcmp(rep_str(r, d, "/deployments/%d/system", e),
							       rep_str(r, d, "/deployments/%d/system", j)) != 0;
					if (!first)
						continue;
					rep_cell row[] = {
						rep_text("%s", rep_str(r, d, "/deployments/%d/system", j)),
						rep_text("TP %.0f, PP %.0f, %s, %.0f replicas", rep_num(r, d, "/deployments/%d/tp", j),
							 rep_num(r, d, "/deployments/%d/pp", j), rep_str(r, d, "/deployments/%d/weights", j),
							 rep_num(r, d, "/deployments/%d/replicas", j)),
						rep_text("serving plan (%s)", d->name),
						rep_src(r, d, F_INT, "/deployments/%d/gpus", j),
						rep_src(r, d, F_MONEY, "/deployments/%d/usd_per_month", j),
						rep_src(r, d, F_MONEY, "/deployments/%d/usd_per_million_output_tokens", j),
						rep_src(r, d, F_SEC, "/deployments/%d/ttft_p99_s", j),
						rep_src(r, d, F_SEC, "/deployments/%d/tpot_p99_s", j),
					};
					rep_row(r, t, row);
				}
			} else if (d->kind == K_SERVE) {
				bool priced = rep_has(d, "/price_usd_per_gpu_hour");
				double month = priced ? plan_rent_usd(rep_num(r, d, "/price_usd_per_gpu_hour"),
								      rep_num(r, d, "/config/gpus"), PLAN_HOURS_PER_MONTH)
						      : 0;
				rep_cell row[] = {
					rep_text("%s", rep_str(r, d, "/system")),
					rep_text("TP %.0f, PP %.0f, %s, %.0f replicas at %.4g req/s", rep_num(r, d, "/config/tp"),
						 rep_num(r, d, "/config/pp"), rep_str(r, d, "/config/weights"),
						 rep_num(r, d, "/config/replicas"), rep_num(r, d, "/config/rate")),
					rep_text("simulation (%s)", d->name),
					rep_src(r, d, F_INT, "/config/gpus"),
					priced ? rep_calc(month, F_MONEY, "price * gpus * 730") : rep_none(),
					priced ? rep_src(r, d, F_MONEY, "/usd_per_million_output_tokens") : rep_none(),
					rep_src(r, d, F_SEC, "/ttft_s/p99"),
					rep_src(r, d, F_SEC, "/tpot_s/p99"),
				};
				rep_row(r, t, row);
			}
		}
		rep_table_note(r, t, "A serving plan's rows are its cheapest deployment on each system at its requested rate.");
		rep_show_table(r, t);
	}
	free(rows);
}

/* ---- confidence ---------------------------------------------------------------------------- */

static void
confidence(rep_report *r)
{
	rep_heading(r, B_H2, "confidence", "Confidence");
	rep_block *b = rep_para(r, B_P);
	rep_say(b, "Each predicted duration says where it came from: measured (calibration tables of this hardware, "
		   "interpolated), fitted (cost-model parameters fitted to measurements) or datasheet (peak figures "
		   "times default efficiencies). The shares below weigh each source by the time it predicts. The "
		   "more rests on datasheet defaults, the more the validation error below applies.");
	static const char *const head[] = {"Document", "System", "Measured", "Fitted", "Datasheet"};
	static const char *const key[] = {"document", "system", "measured", "fitted", "datasheet"};
	size_t t = 0;
	size_t rows = 0;
	for (size_t i = 0; i < r->ndocs && rep_ok(r); i++) {
		const rep_doc *d = &r->docs[i];
		const char *p = NULL;
		if (d->kind == K_TRAIN)
			p = "/provenance";
		else if (d->kind == K_PLAN_TRAIN && rep_has(d, "/counts/0/candidates/0"))
			p = "/counts/0/candidates/0/provenance";
		if (p == NULL)
			continue;
		if (rows++ == 0)
			t = rep_table_new(r, "provenance", "What the training predictions rest on", 5, head, key);
		rep_cell row[] = {
			rep_text("%s (%s)", d->name, rep_kind_label[d->kind]), rep_text("%s", rep_str(r, d, "/system")),
			rep_src(r, d, F_PCT, "%s/measured", p),                rep_src(r, d, F_PCT, "%s/fitted", p),
			rep_src(r, d, F_PCT, "%s/datasheet", p),
		};
		rep_row(r, t, row);
	}
	if (rows > 0) {
		rep_table_note(r, t, "A layout search shows its winner's shares. Serving results do not carry provenance yet.");
		rep_show_table(r, t);
	}
	size_t nval = 0;
	for (size_t i = 0; i < r->ndocs && rep_ok(r); i++) {
		const rep_doc *d = &r->docs[i];
		if (d->kind != K_VALIDATE)
			continue;
		nval++;
		char tid[48];
		rep_id(tid, sizeof tid, d, "validation");
		b = rep_para(r, B_P);
		rep_say(b, "Validation (%s, %s rows): against ", d->name, rep_str(r, d, "/set"));
		rep_put(b, rep_src(r, d, F_INT, "/overall/rows"));
		rep_say(b, " published measurements the tool can express, the mean absolute percentage error (MAPE) of its "
			   "predictions is ");
		rep_put(b, rep_src(r, d, F_PCT, "/overall/mape"));
		rep_say(b, "; ");
		rep_put(b, rep_src(r, d, F_INT, "/overall/skipped"));
		rep_say(b, " rows could not be expressed and were skipped.");
		static const char *const vh[] = {"Source", "Rows", "MAPE"};
		static const char *const vk[] = {"source", "rows", "mape"};
		size_t vt = rep_table_new(r, tid, "Prediction error against published runs, by source", 3, vh, vk);
		int ns = rep_len(r, d, "/sources");
		for (int s = 0; s < ns; s++) {
			rep_cell row[] = {rep_text("%s", rep_str(r, d, "/sources/%d/source", s)),
					  rep_src(r, d, F_INT, "/sources/%d/rows", s), rep_src(r, d, F_PCT, "/sources/%d/mape", s)};
			rep_row(r, vt, row);
		}
		rep_cell all[] = {rep_text("all"), rep_src(r, d, F_INT, "/overall/rows"), rep_src(r, d, F_PCT, "/overall/mape")};
		rep_row(r, vt, all);
		rep_table_note(r, vt, "MAPE: the mean of |predicted - measured| / measured, each row in its source's own metric "
				      "(step time, TFLOP/s per GPU, tokens/s ...).");
		rep_show_table(r, vt);
	}
	if (nval == 0) {
		b = rep_para(r, B_NOTE);
		rep_say(b, "No validation result was given, so this report cannot state the tool's error on comparable "
			   "published runs. Run 'paraplan validate --json > validate.json' (and '--set serving' for serving) "
			   "and add '--from validate.json'.");
	}
}

/* ---- summary, inputs, method --------------------------------------------------------------- */

static void
summary(rep_report *r, double tokens)
{
	rep_heading(r, B_H2, "summary", "Summary");
	for (size_t i = 0; i < r->ndocs && rep_ok(r); i++) {
		const rep_doc *d = &r->docs[i];
		rep_block *b;
		switch (d->kind) {
		case K_PLAN_TRAIN: {
			if (rep_len(r, d, "/counts") == 0 || rep_len(r, d, "/counts/0/candidates") == 0) {
				b = rep_para(r, B_LI);
				rep_say(b, "Training on %s (%s): no layout fits.", rep_str(r, d, "/system"), d->name);
				break;
			}
			const char *w = "/counts/0/candidates/0";
			double tps = rep_num(r, d, "%s/tokens_per_s", w);
			b = rep_para(r, B_LI);
			rep_say(b, "Training on ");
			rep_put(b, rep_src(r, d, F_INT, "%s/config/gpus", w));
			rep_say(b, " GPUs of %s: TP %.0f x PP %.0f x DP %.0f, ", rep_str(r, d, "/system"),
				rep_num(r, d, "%s/config/tp", w), rep_num(r, d, "%s/config/pp", w), rep_num(r, d, "%s/config/dp", w));
			rep_put(b, rep_src(r, d, F_NUM, "%s/tokens_per_s", w));
			rep_say(b, " tokens/s at ");
			rep_put(b, rep_src(r, d, F_PCT, "%s/mfu", w));
			rep_say(b, " MFU; ");
			rep_put(b, rep_calc(tokens, F_COUNT, "tokens"));
			rep_say(b, " tokens take ");
			rep_put(b, rep_calc(tokens / tps / 86400.0, F_NUM3, "tokens / tokens_per_s / 86400"));
			rep_say(b, " days");
			if (rep_has(d, "%s/usd_per_million_tokens", w)) {
				rep_say(b, " at ");
				rep_put(b, rep_src(r, d, F_MONEY, "%s/usd_per_million_tokens", w));
				rep_say(b, " per million tokens (%s)", rep_str(r, d, "/price_source"));
			}
			rep_say(b, ".");
			break;
		}
		case K_TRAIN:
			b = rep_para(r, B_LI);
			rep_say(b, "Simulated training on ");
			rep_put(b, rep_src(r, d, F_INT, "/config/gpus"));
			rep_say(b, " GPUs of %s: step ", rep_str(r, d, "/system"));
			rep_put(b, rep_src(r, d, F_SEC, "/step_time_s"));
			rep_say(b, ", ");
			rep_put(b, rep_src(r, d, F_NUM, "/tokens_per_s"));
			rep_say(b, " tokens/s, ");
			rep_put(b, rep_src(r, d, F_PCT, "/mfu"));
			rep_say(b, " MFU%s.", rep_bool(r, d, "/fits") ? "" : "; does NOT fit in memory");
			break;
		case K_CAPACITY: {
			int n = rep_len(r, d, "/systems");
			for (int s = 0; s < n; s++) {
				b = rep_para(r, B_LI);
				rep_say(b, "To train ");
				rep_put(b, rep_src(r, d, F_COUNT, "/tokens"));
				rep_say(b, " tokens in ");
				rep_put(b, rep_src(r, d, F_NUM3, "/days"));
				rep_say(b, " days on %s: ", rep_str(r, d, "/systems/%d/system", s));
				if (!rep_bool(r, d, "/systems/%d/feasible", s)) {
					rep_say(b, "not feasible (%s).", rep_str(r, d, "/systems/%d/reason", s));
					continue;
				}
				rep_put(b, rep_src(r, d, F_INT, "/systems/%d/gpus", s));
				rep_say(b, " GPUs for ");
				rep_put(b, rep_src(r, d, F_NUM3, "/systems/%d/days", s));
				rep_say(b, " days");
				if (rep_has(d, "/systems/%d/buy/total_usd", s)) {
					rep_say(b, "; owned ");
					rep_put(b, rep_src(r, d, F_MONEY, "/systems/%d/buy/total_usd", s));
				}
				int k = rep_len(r, d, "/systems/%d/rent", s);
				if (k > 0) {
					int lo = 0;
					for (int j = 1; j < k; j++)
						if (rep_num(r, d, "/systems/%d/rent/%d/total_usd", s, j) <
						    rep_num(r, d, "/systems/%d/rent/%d/total_usd", s, lo))
							lo = j;
					rep_say(b, "; rented from ");
					rep_put(b, rep_src(r, d, F_MONEY, "/systems/%d/rent/%d/total_usd", s, lo));
					rep_say(b, " (%s %s)", rep_str(r, d, "/systems/%d/rent/%d/provider", s, lo),
						rep_str(r, d, "/systems/%d/rent/%d/kind", s, lo));
				}
				rep_say(b, ".");
			}
			break;
		}
		case K_PLAN_SERVE:
			b = rep_para(r, B_LI);
			rep_say(b, "Serving ");
			rep_put(b, rep_src(r, d, F_NUM3, "/rate"));
			rep_say(b, " requests/s within the P99 SLO: ");
			if (rep_len(r, d, "/deployments") == 0) {
				rep_say(b, "no deployment evaluated meets it.");
				break;
			}
			rep_say(b, "%s, TP %.0f, ", rep_str(r, d, "/deployments/0/system"), rep_num(r, d, "/deployments/0/tp"));
			rep_put(b, rep_src(r, d, F_INT, "/deployments/0/replicas"));
			rep_say(b, " replicas (");
			rep_put(b, rep_src(r, d, F_INT, "/deployments/0/gpus"));
			rep_say(b, " GPUs), ");
			rep_put(b, rep_src(r, d, F_MONEY, "/deployments/0/usd_per_month"));
			rep_say(b, " per month, ");
			rep_put(b, rep_src(r, d, F_MONEY, "/deployments/0/usd_per_million_output_tokens"));
			rep_say(b, " per million output tokens, ");
			rep_put(b, rep_src(r, d, F_PCT, "/deployments/0/headroom"));
			rep_say(b, " headroom.");
			break;
		case K_SERVE:
			b = rep_para(r, B_LI);
			rep_say(b, "Serving simulation on %s at ", rep_str(r, d, "/system"));
			rep_put(b, rep_src(r, d, F_NUM3, "/config/rate"));
			rep_say(b, " requests/s: P99 TTFT ");
			rep_put(b, rep_src(r, d, F_SEC, "/ttft_s/p99"));
			rep_say(b, ", P99 TPOT ");
			rep_put(b, rep_src(r, d, F_SEC, "/tpot_s/p99"));
			rep_say(b, "%s", rep_bool(r, d, "/saturated") ? ", saturated" : "");
			if (rep_has(d, "/usd_per_million_output_tokens")) {
				rep_say(b, ", ");
				rep_put(b, rep_src(r, d, F_MONEY, "/usd_per_million_output_tokens"));
				rep_say(b, " per million output tokens");
			}
			rep_say(b, ".");
			break;
		case K_VALIDATE:
			b = rep_para(r, B_LI);
			rep_say(b, "Validation (%s): ", rep_str(r, d, "/set"));
			rep_put(b, rep_src(r, d, F_PCT, "/overall/mape"));
			rep_say(b, " mean absolute error over ");
			rep_put(b, rep_src(r, d, F_INT, "/overall/rows"));
			rep_say(b, " published measurements.");
			break;
		case K_TRACE:
		case K_NKINDS:
			break;
		}
	}
}

static void
inputs(rep_report *r)
{
	rep_heading(r, B_H2, "inputs", "Inputs");
	static const char *const head[] = {"#", "File", "Kind", "Model", "System"};
	static const char *const key[] = {"no", "file", "kind", "model", "system"};
	size_t t = rep_table_new(r, "inputs", "The documents this report reads", 5, head, key);
	for (size_t i = 0; i < r->ndocs && rep_ok(r); i++) {
		const rep_doc *d = &r->docs[i];
		pp_str sys = {0};
		if (d->kind == K_CAPACITY) {
			int n = rep_len(r, d, "/systems");
			for (int s = 0; s < n; s++)
				pp_str_addf(&sys, "%s%s", s ? ", " : "", rep_str(r, d, "/systems/%d/system", s));
		} else if (d->kind == K_PLAN_SERVE) {
			int n = rep_len(r, d, "/deployments");
			for (int s = 0; s < n; s++) {
				const char *x = rep_str(r, d, "/deployments/%d/system", s);
				if (sys.buf == NULL || strstr(sys.buf, x) == NULL)
					pp_str_addf(&sys, "%s%s", sys.len ? ", " : "", x);
			}
		} else if (d->kind == K_TRACE) {
			pp_str_addf(&sys, "%d ranks, %zu ops", d->trace->nranks, d->trace->events);
		} else if (d->kind != K_VALIDATE) {
			pp_str_add(&sys, rep_str(r, d, "/system"));
		} else {
			pp_str_add(&sys, "published runs");
		}
		const char *mname = d->kind == K_VALIDATE || d->kind == K_TRACE ? "-" : rep_str(r, d, "/model");
		rep_cell row[] = {rep_calc(d->no, F_INT, "input number"), rep_text("%s", d->path),
				  rep_text("%s", rep_kind_label[d->kind]), rep_text("%s", mname),
				  rep_text("%s", sys.buf ? sys.buf : "")};
		pp_str_free(&sys);
		rep_row(r, t, row);
	}
	rep_show_table(r, t);
}

static void
method(rep_report *r, double tokens)
{
	rep_heading(r, B_H2, "method", "Method and assumptions");
	rep_block *b = rep_para(r, B_LI);
	rep_say(b, "Every number is a prediction of paraplan's simulator and cost model, read from the documents listed "
		   "under Inputs; this report adds no physics. Numbers it derives: time to train = tokens / throughput; "
		   "GPU-hours = GPUs x hours; rent = GPU-hours x price per GPU-hour; owned = purchase x hours / (life x "
		   "8,760) + node power x nodes x PUE x price per kWh x hours; per month = per hour x 730.");
	b = rep_para(r, B_LI);
	rep_say(b, "Time to train for layout searches and simulations assumes ");
	rep_put(b, rep_calc(tokens, F_COUNT, "tokens"));
	rep_say(b, " tokens ('paraplan report --tokens'); capacity plans state their own.");
	b = rep_para(r, B_LI);
	if (!strcmp(r->currency, "USD"))
		rep_say(b, "Money is in US dollars, as the hardware database records prices.");
	else
		rep_say(b, "Money is in %s at %.6g %s per US dollar, as given with --currency; the hardware database records "
			   "prices in US dollars.",
			r->currency, r->o.per_usd, r->currency);
	b = rep_para(r, B_LI);
	rep_say(b, "Prices carry their provider, kind, date and source. Costs assume the GPUs work all the time: no idle "
		   "capacity, failures, restarts or checkpoints; serving costs assume the deployment runs all month.");
	b = rep_para(r, B_LI);
	rep_say(b, "The tables are in tables/*.csv with every digit; the charts' data and gnuplot scripts are in "
		   "charts/, to redraw them.");
}

/* ---- checks across documents --------------------------------------------------------------- */

static void
check_models(rep_report *r)
{
	const rep_doc *first = NULL;
	for (size_t i = 0; i < r->ndocs && rep_ok(r); i++) {
		const rep_doc *d = &r->docs[i];
		if (d->kind == K_VALIDATE || d->kind == K_TRACE)
			continue;
		const char *m = rep_str(r, d, "/model");
		if (first == NULL) {
			first = d;
			r->model = m;
		} else if (strcmp(m, r->model) != 0) {
			rep_fail(r, PP_EINPUT,
				 "%s: \"/model\" is \"%s\" but %s is about \"%s\": a report covers one model (make one report "
				 "per model)",
				 d->path, m, first->path, r->model);
		}
	}
	if (r->model == NULL)
		r->model = "the model";
}

/* A trace belongs to the simulation with as many ranks whose step ends when the trace does. */
static void
match_traces(rep_report *r)
{
	for (size_t i = 0; i < r->ndocs && rep_ok(r); i++) {
		rep_doc *t = &r->docs[i];
		if (t->kind != K_TRACE)
			continue;
		bool any = false;
		for (size_t j = 0; j < r->ndocs && rep_ok(r); j++) {
			rep_doc *s = &r->docs[j];
			if (s->kind != K_TRAIN)
				continue;
			any = true;
			double step = rep_num(r, s, "/step_time_s");
			int ranks = (int)rep_num(r, s, "/simulation/ranks");
			if (ranks == t->trace->nranks && fabs(t->trace->end_s - step) <= 1e-6 * step && s->trace_doc < 0) {
				s->trace_doc = (int)i;
				t->trace_of = (int)j;
				break;
			}
		}
		if (any && t->trace_of < 0 && rep_ok(r)) {
			const rep_doc *s = NULL;
			for (size_t j = 0; j < r->ndocs && s == NULL; j++)
				if (r->docs[j].kind == K_TRAIN)
					s = &r->docs[j];
			rep_fail(r, PP_EINPUT,
				 "%s: the trace (%d ranks, step ends at %.6g s) matches no simulation given (%s: \"/simulation/"
				 "ranks\" %.0f, \"/step_time_s\" %.6g): give the simulation that wrote it",
				 t->path, t->trace->nranks, t->trace->end_s, s->path, rep_num(r, s, "/simulation/ranks"),
				 rep_num(r, s, "/step_time_s"));
		}
	}
}

void
rep_build_all(rep_report *r)
{
	double tokens = r->o.tokens > 0 ? r->o.tokens : 1e12;
	check_models(r);
	match_traces(r);
	if (!rep_ok(r))
		return;
	if (r->o.title != NULL)
		r->title = strdup(r->o.title);
	else
		r->title = rep_dupf("%s: training and serving cost report", r->model);
	summary(r, tokens);
	inputs(r);
	bool train = false, serve = false, cap = false;
	for (size_t i = 0; i < r->ndocs; i++) {
		train |= r->docs[i].kind == K_PLAN_TRAIN || r->docs[i].kind == K_TRAIN ||
			 (r->docs[i].kind == K_TRACE && r->docs[i].trace_of < 0);
		serve |= r->docs[i].kind == K_PLAN_SERVE || r->docs[i].kind == K_SERVE;
		cap |= r->docs[i].kind == K_CAPACITY;
	}
	if (train) {
		rep_heading(r, B_H2, "training", "Training");
		for (size_t i = 0; i < r->ndocs && rep_ok(r); i++) {
			rep_doc *d = &r->docs[i];
			if (d->kind == K_PLAN_TRAIN)
				rep_sec_plan_train(r, d, tokens);
			else if (d->kind == K_TRAIN)
				rep_sec_sim_train(r, d, tokens);
			else if (d->kind == K_TRACE && d->trace_of < 0)
				rep_sec_timeline(r, d, NULL);
		}
	}
	if (cap) {
		rep_heading(r, B_H2, "capacity", "Capacity: GPUs and time to train");
		for (size_t i = 0; i < r->ndocs && rep_ok(r); i++)
			if (r->docs[i].kind == K_CAPACITY)
				rep_sec_capacity(r, &r->docs[i]);
	}
	if (serve) {
		rep_heading(r, B_H2, "serving", "Serving");
		for (size_t i = 0; i < r->ndocs && rep_ok(r); i++) {
			if (r->docs[i].kind == K_PLAN_SERVE)
				rep_sec_plan_serve(r, &r->docs[i]);
			else if (r->docs[i].kind == K_SERVE)
				rep_sec_sim_serve(r, &r->docs[i]);
		}
		rep_sec_sweeps(r);
	}
	comparison(r, tokens);
	confidence(r);
	method(r, tokens);
}

