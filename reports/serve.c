/*
 * serve.c -- the serving sections of a report: a serving plan (the cheapest deployment within
 * the SLO, its cost and headroom, the rest ranked and the rejected with the reason), a
 * simulated deployment (latency percentiles against the SLO, throughput, cost per hour, month
 * and million output tokens), and latency against request rate when several simulations of
 * one deployment at different rates are given.
 */
#include "config.h"
#include "planner/plan.h"
#include "reports/rep_int.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- serving ------------------------------------------------------------------------------- */

void
rep_sec_plan_serve(rep_report *r, rep_doc *d)
{
	char tid[48];
	rep_id(tid, sizeof tid, d, "serving");
	rep_heading(r, B_H3, tid, "Serving plan (%s)", d->name);
	rep_block *b = rep_para(r, B_P);
	rep_say(b, "The cheapest deployment of %s that serves ", r->model);
	rep_put(b, rep_src(r, d, F_NUM3, "/rate"));
	rep_say(b, " requests/s with a P99 time to first token within ");
	rep_put(b, rep_src(r, d, F_SEC, "/slo/ttft_p99_s"));
	rep_say(b, " and a P99 time per output token within ");
	rep_put(b, rep_src(r, d, F_SEC, "/slo/tpot_p99_s"));
	if (rep_num(r, d, "/slo/e2e_p99_s") > 0) {
		rep_say(b, " (end to end within ");
		rep_put(b, rep_src(r, d, F_SEC, "/slo/e2e_p99_s"));
		rep_say(b, ")");
	}
	if (rep_num(r, d, "/failures_tolerated") > 0) {
		rep_say(b, ", keeping the SLO with ");
		rep_put(b, rep_src(r, d, F_INT, "/failures_tolerated"));
		rep_say(b, " replica(s) down");
	}
	rep_say(b, "; ");
	rep_put(b, rep_src(r, d, F_INT, "/candidates_evaluated"));
	rep_say(b, " deployments evaluated.");
	if (rep_has(d, "/interrupted") && rep_bool(r, d, "/interrupted"))
		rep_notice(r, "%s: the serving search was interrupted", d->path);
	int n = rep_len(r, d, "/deployments");
	if (n == 0) {
		b = rep_para(r, B_NOTE);
		rep_say(b, "No deployment meets the SLO at this rate; the rejected ones are listed with the reason.");
	} else {
		b = rep_para(r, B_P);
		rep_say(b, "Best: %s, TP %.0f, PP %.0f, %s weights, ", rep_str(r, d, "/deployments/0/system"),
			rep_num(r, d, "/deployments/0/tp"), rep_num(r, d, "/deployments/0/pp"),
			rep_str(r, d, "/deployments/0/weights"));
		rep_put(b, rep_src(r, d, F_INT, "/deployments/0/replicas"));
		rep_say(b, " replicas on ");
		rep_put(b, rep_src(r, d, F_INT, "/deployments/0/gpus"));
		rep_say(b, " GPUs: ");
		rep_put(b, rep_src(r, d, F_MONEY, "/deployments/0/usd_per_month"));
		rep_say(b, " per month, ");
		rep_put(b, rep_src(r, d, F_MONEY, "/deployments/0/usd_per_million_output_tokens"));
		rep_say(b, " per million output tokens. Its replicas sustain ");
		if (d->version >= 2) {
			/* plan-serve/2: a unit is a replica or a prefill:decode group; units exclude spares */
			double cap = rep_num(r, d, "/deployments/0/capacity_per_unit"), units = rep_num(r, d, "/deployments/0/units");
			rep_put(b, rep_calc(cap * units, F_NUM3, "capacity_per_unit * units"));
		} else {
			double cap = rep_num(r, d, "/deployments/0/capacity_per_replica"),
			       rep = rep_num(r, d, "/deployments/0/replicas"), sp = rep_num(r, d, "/deployments/0/spares");
			rep_put(b, rep_calc(cap * (rep - sp), F_NUM3, "capacity_per_replica * (replicas - spares)"));
		}
		rep_say(b, " requests/s within the SLO: ");
		rep_put(b, rep_src(r, d, F_PCT, "/deployments/0/headroom"));
		rep_say(b, " headroom over the requested rate.");
	}
	const char *per = d->version >= 2 ? "capacity_per_unit" : "capacity_per_replica";
	const char *head[] = {"#", "System", "TP", "PP", "Weights", "Max seqs", d->version >= 2 ? "Req/s per unit" : "Req/s per replica", "Replicas",
					   "Spares", "GPUs", "per GPU-hour", "per hour", "per month", "per M output tokens",
					   "P99 TTFT", "P99 TPOT", "P99 end to end", "Headroom"};
	const char *key[] = {"rank", "system", "tp", "pp", "weights", "max_num_seqs", per, "replicas",
			     "spares", "gpus", rep_ck(r, "%s_per_gpu_hour"), rep_ck(r, "%s_per_hour"), rep_ck(r, "%s_per_month"),
			     rep_ck(r, "%s_per_million_output_tokens"), "ttft_p99_s", "tpot_p99_s", "e2e_p99_s", "headroom"};
	size_t t = rep_table_new(r, tid, "Deployments that meet the SLO, cheapest first", 18, head, key);
	for (int i = 0; i < n; i++) {
		char p[32];
		snprintf(p, sizeof p, "/deployments/%d", i);
		rep_cell row[] = {
			rep_src(r, d, F_INT, "%s/rank", p),
			rep_text("%s", rep_str(r, d, "%s/system", p)),
			rep_src(r, d, F_INT, "%s/tp", p),
			rep_src(r, d, F_INT, "%s/pp", p),
			rep_text("%s", rep_str(r, d, "%s/weights", p)),
			rep_src(r, d, F_INT, "%s/max_num_seqs", p),
			rep_src(r, d, F_NUM3, "%s/%s", p, per),
			rep_src(r, d, F_INT, "%s/replicas", p),
			rep_src(r, d, F_INT, "%s/spares", p),
			rep_src(r, d, F_INT, "%s/gpus", p),
			rep_src(r, d, F_MONEY, "%s/price_usd_per_gpu_hour", p),
			rep_src(r, d, F_MONEY, "%s/usd_per_hour", p),
			rep_src(r, d, F_MONEY, "%s/usd_per_month", p),
			rep_src(r, d, F_MONEY, "%s/usd_per_million_output_tokens", p),
			rep_src(r, d, F_SEC, "%s/ttft_p99_s", p),
			rep_src(r, d, F_SEC, "%s/tpot_p99_s", p),
			rep_src(r, d, F_SEC, "%s/e2e_p99_s", p),
			rep_src(r, d, F_PCT, "%s/headroom", p),
		};
		rep_row(r, t, row);
	}
	rep_table_note(r, t,
		       "Per month: 730 hours of every GPU at the system's default price. Per million output tokens: the hourly "
		       "cost over the output tokens served per hour at the requested rate, spares included. Headroom: the "
		       "rate the replicas (spares aside) sustain within the SLO over the requested rate, minus one.");
	rep_show_table(r, t);
	if (n > 0) {
		char title[160];
		snprintf(title, sizeof title, "P99 latency against the SLO at %.4g requests/s", rep_num(r, d, "/rate"));
		rep_chart *c = rep_chart_new(r, tid, title,
					     "Each deployment's P99 time to first token and time per output token at the "
					     "requested rate, as a share of the SLO (the line at 100%).");
		/* each bar with its 80% interval (the engine's cross-validated errors), where the
		 * document has one */
		static const char *const what[] = {"ttft", "tpot"};
		bool bars = false;
		for (int k = 0; k < 2; k++) {
			rep_series(c, k ? "P99 TPOT / SLO" : "P99 TTFT / SLO");
			double slo = rep_num(r, d, "/slo/%s_p99_s", what[k]);
			for (int i = 0; i < n; i++) {
				char at[48], ik[48];
				double v = rep_num(r, d, "/deployments/%d/%s_p99_s", i, what[k]), lo = v, hi = v;
				snprintf(at, sizeof at, "/deployments/%d", i);
				snprintf(ik, sizeof ik, "%s_p99_interval_s", what[k]);
				bars |= rep_interval(r, d, at, ik, &lo, &hi);
				rep_chart_row(c, i + 1, 100.0 * v / slo, 100.0 * lo / slo, 100.0 * hi / slo);
			}
		}
		rep_series(c, "SLO");
		rep_chart_row(c, 0.5, 100);
		rep_chart_row(c, n + 0.5, 100);
		if (c != NULL) {
			pp_str_add(&c->gp, "set xtics (");
			for (int i = 0; i < n; i++) {
				char lbl[200];
				snprintf(lbl, sizeof lbl, "#%d %s tp%.0f x%.0f", i + 1, rep_str(r, d, "/deployments/%d/system", i),
					 rep_num(r, d, "/deployments/%d/tp", i), rep_num(r, d, "/deployments/%d/replicas", i));
				pp_str_add(&c->gp, i ? ", " : "");
				rep_gp_quote(&c->gp, lbl);
				pp_str_addf(&c->gp, " %d", i + 1);
			}
			pp_str_addf(&c->gp, ") rotate by -30\nset bmargin 8\nset rmargin 9\nset ylabel \"P99 as %% of the SLO\"\nset yrange [0:*]\n"
					    "set xrange [0.4:%d.6]\nset style fill solid 0.85 noborder\nset key top right\n"
					    "plot '%s.dat' index 0 using ($1-0.18):2:(0.16) with boxes lt 1 title 'P99 TTFT', \\\n"
					    "     '' index 1 using ($1+0.18):2:(0.16) with boxes lt 2 title 'P99 TPOT', \\\n"
					    "     '' index 2 using 1:2 with lines lt 4 lw 2 dt 2 title 'SLO'%s\n",
				    n, c->name,
				    bars ? ", \\\n     '' index 0 using ($1-0.18):2:3:4 with yerrorbars lt 8 pt 0 title "
					   "'80% interval', \\\n     '' index 1 using ($1+0.18):2:3:4 with yerrorbars lt 8 pt 0 notitle"
					 : "");
			rep_show_chart(r, c);
		}
	}
	int nr = rep_len(r, d, "/rejected");
	if (nr > 0) {
		static const char *const rh[] = {"System", "TP", "PP", "Weights", "Max seqs", "Why rejected"};
		static const char *const rk[] = {"system", "tp", "pp", "weights", "max_num_seqs", "why"};
		rep_id(tid, sizeof tid, d, "rejected");
		t = rep_table_new(r, tid, "Deployments rejected", 6, rh, rk);
		for (int i = 0; i < nr; i++) {
			rep_cell row[] = {
				rep_text("%s", rep_str(r, d, "/rejected/%d/system", i)),
				rep_src(r, d, F_INT, "/rejected/%d/tp", i),
				rep_src(r, d, F_INT, "/rejected/%d/pp", i),
				rep_text("%s", rep_str(r, d, "/rejected/%d/weights", i)),
				rep_src(r, d, F_INT, "/rejected/%d/max_num_seqs", i),
				rep_text("%s", rep_str(r, d, "/rejected/%d/why", i)),
			};
			rep_row(r, t, row);
		}
		rep_show_table(r, t);
	}
}

static const char *const pct_key[] = {"mean", "p50", "p90", "p99"};
static bool same_deployment(rep_report *r, const rep_doc *a, const rep_doc *b);
static void single_latency(rep_report *r, const rep_doc *d0);

void
rep_sec_sim_serve(rep_report *r, rep_doc *d)
{
	char tid[48];
	rep_id(tid, sizeof tid, d, "serve");
	rep_heading(r, B_H3, tid, "Simulated serving: %s on %s at %.4g requests/s (%s)", r->model, rep_str(r, d, "/system"),
		    rep_num(r, d, "/config/rate"), d->name);
	static const char *const metric[] = {"ttft", "tpot", "itl", "e2e"};
	static const char *const mlabel[] = {"time to first token (TTFT)", "time per output token (TPOT)",
					     "inter-token latency (ITL)", "end to end"};
	rep_block *b = rep_para(r, B_P);
	rep_say(b, "TP %.0f, PP %.0f, ", rep_num(r, d, "/config/tp"), rep_num(r, d, "/config/pp"));
	rep_put(b, rep_src(r, d, F_INT, "/config/replicas"));
	rep_say(b, " replica(s), ");
	rep_put(b, rep_src(r, d, F_INT, "/config/gpus"));
	rep_say(b, " GPUs, %s weights. Offered ", rep_str(r, d, "/config/weights"));
	rep_put(b, rep_src(r, d, F_NUM3, "/config/rate"));
	rep_say(b, " requests/s, it completed ");
	rep_put(b, rep_src(r, d, F_NUM3, "/requests_per_s"));
	rep_say(b, " requests/s");
	if (rep_bool(r, d, "/saturated"))
		rep_say(b, " and is SATURATED: it cannot keep up, queues grow without bound. ");
	else
		rep_say(b, " and keeps up. ");
	/* the P99 targets: TTFT, TPOT and end to end (inter-token latency has none) */
	static const char *const slo_metric[] = {"ttft", "tpot", "e2e"};
	bool slo = false, met = true;
	for (int k = 0; k < 3; k++) {
		double s = rep_num(r, d, "/slo/%s_s", slo_metric[k]);
		if (s > 0) {
			slo = true;
			met = met && rep_num(r, d, "/%s_s/p99", slo_metric[k]) <= s;
		}
	}
	if (slo) {
		rep_say(b, "%s: ", met && !rep_bool(r, d, "/saturated") ? "It meets its P99 SLO" : "It MISSES its P99 SLO");
		rep_put(b, rep_src(r, d, F_PCT, "/slo_attainment"));
		rep_say(b, " of requests within every target.");
	}

	static const char *const head[] = {"Metric", "Mean", "P50", "P90", "P99", "P99 target", "P99 within target"};
	static const char *const key[] = {"metric", "mean_s", "p50_s", "p90_s", "p99_s", "slo_p99_s", "within_slo"};
	size_t t = rep_table_new(r, tid, "Latency percentiles against the SLO", 7, head, key);
	for (int k = 0; k < 4; k++) {
		rep_cell row[7];
		row[0] = rep_text("%s", mlabel[k]);
		for (int q = 0; q < 4; q++)
			row[1 + q] = rep_src(r, d, F_SEC, "/%s_s/%s", metric[k], pct_key[q]);
		double s = k == 2 ? 0.0 : rep_num(r, d, "/slo/%s_s", metric[k]);
		if (s > 0) {
			row[5] = rep_src(r, d, F_SEC, "/slo/%s_s", metric[k]);
			row[6] = rep_text("%s", rep_yes_no(rep_num(r, d, "/%s_s/p99", metric[k]) <= s));
		} else {
			row[5] = rep_text("none");
			row[6] = rep_none();
		}
		rep_row(r, t, row);
	}
	rep_show_table(r, t);

	rep_id(tid, sizeof tid, d, "throughput");
	t = rep_kv_new(r, tid, "Throughput and memory");
	rep_kv(r, t, "offered rate (requests/s)", rep_src(r, d, F_NUM3, "/config/rate"), "given");
	rep_kv(r, t, "sustained rate (requests/s)", rep_src(r, d, F_NUM3, "/requests_per_s"), "completed per second, simulated");
	rep_kv(r, t, "goodput (requests/s within the SLO)", rep_src(r, d, F_NUM3, "/goodput_requests_per_s"), "simulated");
	rep_kv(r, t, "output tokens/s", rep_src(r, d, F_NUM, "/output_tokens_per_s"), "simulated");
	rep_kv(r, t, "output tokens/s per GPU", rep_src(r, d, F_NUM, "/output_tokens_per_s_per_gpu"), "simulated");
	double lo, hi;
	if (rep_interval(r, d, "", "output_tokens_per_s_interval", &lo, &hi)) {
		rep_kv(r, t, "output tokens/s, low end", rep_src(r, d, F_NUM, "/output_tokens_per_s_interval/0"),
		       "80%% interval: the engine's cross-validated errors");
		rep_kv(r, t, "output tokens/s, high end", rep_src(r, d, F_NUM, "/output_tokens_per_s_interval/1"),
		       "80%% interval");
	}
	rep_kv(r, t, "KV cache use, peak", rep_src(r, d, F_PCT, "/kv_utilization_peak"), "of the KV cache's blocks");
	rep_kv(r, t, "preemptions", rep_src(r, d, F_INT, "/preemptions"), "requests recomputed for want of KV cache");
	rep_kv(r, t, "weights per GPU", rep_src(r, d, F_GIB, "/memory_per_gpu/weights_bytes"), "memory model");
	rep_kv(r, t, "KV cache per GPU", rep_src(r, d, F_GIB, "/memory_per_gpu/kv_cache_bytes"), "memory model");
	rep_kv(r, t, "requests simulated", rep_src(r, d, F_INT, "/config/requests"), "seed %.0f", rep_num(r, d, "/config/seed"));
	rep_show_table(r, t);

	if (rep_has(d, "/price_usd_per_gpu_hour")) {
		double price = rep_num(r, d, "/price_usd_per_gpu_hour"), gpus = rep_num(r, d, "/config/gpus");
		rep_id(tid, sizeof tid, d, "serve-cost");
		t = rep_kv_new(r, tid, "Cost");
		rep_kv(r, t, "price per GPU-hour", rep_src(r, d, F_MONEY, "/price_usd_per_gpu_hour"),
		       "the system's default price, or 'simulate serve --price'");
		rep_kv(r, t, "per hour", rep_calc(plan_rent_usd(price, gpus, 1.0), F_MONEY, "price * gpus"), "= price x GPUs");
		rep_kv(r, t, "per month", rep_calc(plan_rent_usd(price, gpus, PLAN_HOURS_PER_MONTH), F_MONEY, "price * gpus * 730"),
		       "= price x GPUs x 730 hours, rented all month");
		rep_kv(r, t, "per million output tokens", rep_src(r, d, F_MONEY, "/usd_per_million_output_tokens"),
		       "at the offered rate");
		rep_kv(r, t, "per million tokens, prompt and output", rep_src(r, d, F_MONEY, "/usd_per_million_tokens"),
		       "at the offered rate");
		rep_show_table(r, t);
	}
	bool alone = true;
	for (size_t i = 0; i < r->ndocs && alone; i++)
		alone = &r->docs[i] == d || r->docs[i].kind != K_SERVE || !same_deployment(r, d, &r->docs[i]);
	if (alone)
		single_latency(r, d);
}

/* One rate only: the percentiles of that run against its SLO. */
static void
single_latency(rep_report *r, const rep_doc *d0)
{
	char tid[48], title[200];
	rep_id(tid, sizeof tid, d0, "latency");
	snprintf(title, sizeof title, "Latency percentiles at %.4g requests/s, %s on %s",
		 rep_num(r, d0, "/config/rate"), r->model, rep_str(r, d0, "/system"));
	rep_chart *c = rep_chart_new(r, tid, title,
				     "P50, P90 and P99 of each latency at the one rate simulated, with the P99 "
				     "targets; a curve against the rate needs several 'simulate serve' results "
				     "of this deployment at different --rate.");
	static const char *const metric[] = {"ttft", "tpot", "itl", "e2e"};
	for (int q = 1; q < 4; q++) {
		char nm[16];
		snprintf(nm, sizeof nm, "P%s", pct_key[q] + 1);
		rep_series(c, nm);
		for (int m = 0; m < 4; m++)
			rep_chart_row(c, m, 1e3 * rep_num(r, d0, "/%s_s/%s", metric[m], pct_key[q]));
	}
	rep_series(c, "P99 target");
	int targets = 0;
	for (int m = 0; m < 4; m++)
		if (m != 2 && rep_num(r, d0, "/slo/%s_s", metric[m]) > 0) {
			rep_chart_row(c, m, 1e3 * rep_num(r, d0, "/slo/%s_s", metric[m]));
			targets++;
		}
	if (targets == 0)
		rep_chart_row(c, 0, NAN);
	if (c != NULL) {
		pp_str_addf(&c->gp,
			    "set xtics (\"TTFT\" 0, \"TPOT\" 1, \"ITL\" 2, \"end to end\" 3)\nset xrange [-0.6:3.6]\n"
			    "set logscale y\nset ylabel \"milliseconds (log scale)\"\nset style fill solid 0.85 noborder\n"
			    "set key top left\n"
			    "plot '%s.dat' index 0 using ($1-0.25):2:(0.22) with boxes lt 1 title 'P50', \\\n"
			    "     '' index 1 using 1:2:(0.22) with boxes lt 2 title 'P90', \\\n"
			    "     '' index 2 using ($1+0.25):2:(0.22) with boxes lt 3 title 'P99', \\\n"
			    "     '' index 3 using ($1+0.25):2 with points lt 4 pt 9 ps 2.5 title 'P99 target'\n",
			    c->name);
		rep_show_chart(r, c);
	}
}

/* Serving documents of one deployment at several rates: latency against the rate. */
static bool
same_deployment(rep_report *r, const rep_doc *a, const rep_doc *b)
{
	static const char *const num[] = {"tp", "pp", "replicas", "prefill_replicas", "decode_replicas", "max_num_seqs",
					  "max_batched_tokens"};
	if (strcmp(rep_str(r, a, "/system"), rep_str(r, b, "/system")) != 0 ||
	    strcmp(rep_str(r, a, "/config/weights"), rep_str(r, b, "/config/weights")) != 0 ||
	    strcmp(rep_str(r, a, "/config/kv_dtype"), rep_str(r, b, "/config/kv_dtype")) != 0)
		return false;
	for (size_t i = 0; i < sizeof num / sizeof num[0]; i++)
		if (rep_num(r, a, "/config/%s", num[i]) != rep_num(r, b, "/config/%s", num[i]))
			return false;
	return true;
}

void
rep_sec_sweeps(rep_report *r)
{
	size_t n = r->ndocs;
	bool *done = calloc(n ? n : 1, sizeof *done);
	int *grp = calloc(n ? n : 1, sizeof *grp);
	if (done == NULL || grp == NULL) {
		free(done);
		free(grp);
		rep_fail(r, PP_ENOMEM, "out of memory");
		return;
	}
	int nsweep = 0;
	for (size_t i = 0; i < n && rep_ok(r); i++) {
		if (r->docs[i].kind != K_SERVE || done[i])
			continue;
		int k = 0;
		for (size_t j = i; j < n; j++)
			if (r->docs[j].kind == K_SERVE && !done[j] && same_deployment(r, &r->docs[i], &r->docs[j])) {
				done[j] = true;
				grp[k++] = (int)j;
			}
		/* ascending rate */
		for (int a = 1; a < k; a++)
			for (int b = a; b > 0 && rep_num(r, &r->docs[grp[b]], "/config/rate") <
						     rep_num(r, &r->docs[grp[b - 1]], "/config/rate");
			     b--) {
				int x = grp[b];
				grp[b] = grp[b - 1];
				grp[b - 1] = x;
			}
		const rep_doc *d0 = &r->docs[grp[0]];
		char tid[48], title[200];
		if (k < 2)
			continue; /* one rate: its subsection drew the percentiles */
		nsweep++;
		snprintf(tid, sizeof tid, "sweep%d", nsweep);
		rep_heading(r, B_H3, tid, "Latency against request rate: %s, TP %.0f, %.0f replica(s)", rep_str(r, d0, "/system"),
			    rep_num(r, d0, "/config/tp"), rep_num(r, d0, "/config/replicas"));
		static const char *const head[] = {"Offered req/s", "Sustained req/s", "P50 TTFT", "P99 TTFT", "P50 TPOT",
						   "P99 TPOT", "Saturated", "Document"};
		static const char *const key[] = {"rate", "requests_per_s", "ttft_p50_s", "ttft_p99_s", "tpot_p50_s",
						  "tpot_p99_s", "saturated", "document"};
		size_t t = rep_table_new(r, tid, "One deployment at several request rates", 8, head, key);
		for (int a = 0; a < k; a++) {
			const rep_doc *d = &r->docs[grp[a]];
			rep_cell row[] = {
				rep_src(r, d, F_NUM3, "/config/rate"),   rep_src(r, d, F_NUM3, "/requests_per_s"),
				rep_src(r, d, F_SEC, "/ttft_s/p50"),     rep_src(r, d, F_SEC, "/ttft_s/p99"),
				rep_src(r, d, F_SEC, "/tpot_s/p50"),     rep_src(r, d, F_SEC, "/tpot_s/p99"),
				rep_text("%s", rep_yes_no(rep_bool(r, d, "/saturated"))), rep_text("%s", d->name),
			};
			rep_row(r, t, row);
		}
		/* the highest rate simulated that meets the SLO: a lower bound on capacity */
		double best = -1, slo_t = rep_num(r, d0, "/slo/ttft_s"), slo_p = rep_num(r, d0, "/slo/tpot_s");
		for (int a = 0; a < k; a++) {
			const rep_doc *d = &r->docs[grp[a]];
			bool ok = !rep_bool(r, d, "/saturated") && (!(slo_t > 0) || rep_num(r, d, "/ttft_s/p99") <= slo_t) &&
				  (!(slo_p > 0) || rep_num(r, d, "/tpot_s/p99") <= slo_p);
			if (ok)
				best = rep_num(r, d, "/config/rate");
		}
		if (slo_t > 0 || slo_p > 0) {
			if (best > 0)
				rep_table_note(r, t, "The highest rate simulated that meets the P99 SLO is %.4g requests/s: the "
						     "deployment's capacity is at least that.",
					       best);
			else
				rep_table_note(r, t, "No rate simulated meets the P99 SLO.");
		}
		snprintf(title, sizeof title, "Latency against request rate, %s on %s", r->model, rep_str(r, d0, "/system"));
		rep_chart *c = rep_chart_new(r, tid, title,
					     "P50, P90 and P99 time to first token and time per output token against the "
					     "offered rate, with the P99 targets as dashed lines.");
		static const char *const ms[] = {"ttft", "tpot"};
		for (int m = 0; m < 2; m++)
			for (int q = 1; q < 4; q++) {
				char nm[32];
				snprintf(nm, sizeof nm, "%s P%s", m ? "TPOT" : "TTFT", pct_key[q] + 1);
				rep_series(c, nm);
				for (int a = 0; a < k; a++)
					rep_chart_row(c, rep_num(r, &r->docs[grp[a]], "/config/rate"),
						      1e3 * rep_num(r, &r->docs[grp[a]], "/%s_s/%s", ms[m], pct_key[q]));
			}
		double lo = rep_num(r, &r->docs[grp[0]], "/config/rate"), hi = rep_num(r, &r->docs[grp[k - 1]], "/config/rate");
		rep_series(c, "TTFT P99 target");
		rep_chart_row(c, lo, slo_t > 0 ? 1e3 * slo_t : NAN);
		rep_chart_row(c, hi, slo_t > 0 ? 1e3 * slo_t : NAN);
		rep_series(c, "TPOT P99 target");
		rep_chart_row(c, lo, slo_p > 0 ? 1e3 * slo_p : NAN);
		rep_chart_row(c, hi, slo_p > 0 ? 1e3 * slo_p : NAN);
		if (c != NULL) {
			pp_str_addf(&c->gp, "set xlabel \"offered requests/s\"\nset ylabel \"milliseconds (log scale)\"\n"
					    "set logscale y\nset key outside right top\n"
					    "plot '%s.dat' index 0 using 1:2 with linespoints lt 1 dt 3 title 'TTFT P50', \\\n"
					    "     '' index 1 using 1:2 with linespoints lt 1 dt 2 title 'TTFT P90', \\\n"
					    "     '' index 2 using 1:2 with linespoints lt 1 dt 1 title 'TTFT P99', \\\n"
					    "     '' index 3 using 1:2 with linespoints lt 2 dt 3 title 'TPOT P50', \\\n"
					    "     '' index 4 using 1:2 with linespoints lt 2 dt 2 title 'TPOT P90', \\\n"
					    "     '' index 5 using 1:2 with linespoints lt 2 dt 1 title 'TPOT P99', \\\n"
					    "     '' index 6 using 1:2 with lines lt 4 lw 2 dt 4 title 'TTFT P99 target', \\\n"
					    "     '' index 7 using 1:2 with lines lt 5 lw 2 dt 4 title 'TPOT P99 target'\n",
				    c->name);
			rep_show_chart(r, c);
		}
		rep_show_table(r, t);
	}
	free(done);
	free(grp);
}
