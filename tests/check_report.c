/*
 * check_report.c -- reports: the cost arithmetic against hand computations, tables that are the
 * documents' numbers, CSV that reads back through common/csv.h, charts with the series they
 * should have, and bad input that fails with the file and field named and writes nothing.
 */
#include "config.h"
#include "common/csv.h"
#include "common/pp.h"
#include "reports/rep.h"
#include "reports/rep_int.h"
#include "tests/testutil.h"

#include <cJSON.h>
#include <sys/stat.h>

static char err[1024];

/* A layout search by hand: 64 GPUs (8 per node) at 1e6 tokens/s; renting at $2 per GPU-hour;
 * buying at $30,000 per GPU kept 4 years, 10 kW per node, PUE 1.25, $0.10 per kWh. */
static const char hand_plan[] =
	"{\"kind\": \"plan-train\", \"model\": \"hand-model\", \"system\": \"hand-system\", \"gpu\": \"hand-gpu\",\n"
	" \"gpus_per_node\": 8, \"global_batch\": 512, \"seq\": 2048, \"tokens_per_step\": 1048576, \"objective\": \"time\",\n"
	" \"price_usd_per_gpu_hour\": 2, \"price_source\": \"by hand\", \"interrupted\": false,\n"
	" \"counts\": [{\"gpus\": 64, \"enumerated\": 10, \"invalid\": 2, \"out_of_memory\": 3, \"estimated\": 5, \"simulated\": 1,\n"
	"   \"candidates\": [{\"rank\": 1, \"key\": \"k\", \"config\": {\"gpus\": 64, \"tp\": 8, \"pp\": 1, \"dp\": 8, \"cp\": 1,\n"
	"     \"ep\": 1, \"vpp\": 1, \"zero\": 1, \"fsdp\": false, \"schedule\": \"1f1b\", \"micro_batch\": 1, \"global_batch\": 512,\n"
	"     \"seq\": 2048, \"recompute\": \"none\", \"sequence_parallel\": true, \"dtype\": \"bf16\", \"attention\": \"flash\"},\n"
	"    \"step_time_s\": 1.048576, \"tokens_per_s\": 1000000, \"tokens_per_s_per_gpu\": 15625, \"model_tflops_per_gpu\": 400,\n"
	"    \"hardware_tflops_per_gpu\": 400, \"mfu\": 0.4, \"hfu\": 0.4, \"bubble_fraction\": 0, \"exposed_comm_s\": 0.1,\n"
	"    \"peak_bytes\": 6e10, \"capacity_bytes\": 8e10, \"memory_headroom_bytes\": 2e10,\n"
	"    \"provenance\": {\"measured\": 0.25, \"fitted\": 0, \"datasheet\": 0.75}, \"estimate_s\": 1,\n"
	"    \"usd_per_million_tokens\": 0.0355555555555556, \"why_not_first\": \"\"}]}],\n"
	" \"pareto\": [], \"winner\": {\"step_time_s\": 1.048576},\n"
	" \"prices\": [{\"provider\": \"Cloud A\", \"kind\": \"on-demand\", \"date\": \"2025-01\", \"usd_per_gpu_hour\": 2,\n"
	"              \"source\": \"by hand\"},\n"
	"            {\"provider\": \"Vendor\", \"kind\": \"purchase\", \"date\": \"2024-06\", \"usd_per_gpu\": 30000,\n"
	"              \"source\": \"by hand\"},\n"
	"            {\"provider\": \"Cloud B\", \"kind\": \"reserved-1y\", \"date\": \"2024-01\", \"usd_per_gpu_hour\": 1.5,\n"
	"              \"source\": \"by hand, with \\\"quotes\\\", and commas\"}],\n"
	" \"ownership\": {\"life_years\": 4, \"pue\": 1.25, \"usd_per_kwh\": 0.1, \"node_power_kw\": 10}}\n";

static const char *
write_doc(const char *dir, const char *name, const char *text)
{
	static char path[4][512];
	static int i;
	i = (i + 1) % 4;
	snprintf(path[i], sizeof path[i], "%s/%s", dir, name);
	ck_assert_int_eq(pp_write_file_atomic(path[i], text, strlen(text), err, sizeof err), 0);
	return path[i];
}

static double
cell(const rep_report *r, int t, size_t row, size_t col)
{
	const char *text;
	double v = NAN;
	ck_assert_msg(!rep_table_cell(r, (size_t)t, row, col, &text, &v), "cell %zu,%zu of %s is text", row, col,
		      rep_table_id(r, (size_t)t));
	return v;
}

static const char *
text(const rep_report *r, int t, size_t row, size_t col)
{
	const char *s = NULL;
	double v;
	ck_assert(rep_table_cell(r, (size_t)t, row, col, &s, &v));
	return s;
}

/* 8.64e10 tokens at 1e6 tokens/s take 86,400 s: one day, 24 hours, 64 x 24 = 1,536 GPU-hours.
 * Rent at $2: $3,072, or $3,072 / 86,400 Mtok = $0.035556 per million tokens; at $1.50: $2,304.
 * Own: $30,000 x 1,536 / (4 x 8,760) = $1,315.07 of the purchase, plus 10 kW x 8 nodes x 1.25
 * x $0.10 x 24 h = $240 of energy: $1,555.07. */
START_TEST(cost_by_hand)
{
	const char *dir = test_tmpdir("report-hand");
	const char *doc = write_doc(dir, "plan.json", hand_plan);
	rep_opts o;
	rep_opts_init(&o);
	o.tokens = 8.64e10;
	o.gnuplot = "";
	rep_report *r;
	ck_assert_msg(rep_build(&doc, 1, &o, &r, err, sizeof err) == 0, "%s", err);
	int t = rep_table_find(r, "d1-time");
	ck_assert_int_ge(t, 0);
	ck_assert_rel(cell(r, t, 2, 1), 1.0, 1e-12);    /* days */
	ck_assert_rel(cell(r, t, 3, 1), 1536.0, 1e-12); /* GPU-hours */
	int c = rep_table_find(r, "d1-cost");
	ck_assert_int_ge(c, 0);
	ck_assert_uint_eq(rep_table_rows(r, (size_t)c), 3); /* two rentals and owning */
	ck_assert_str_eq(text(r, c, 0, 0), "Cloud A");
	ck_assert_rel(cell(r, c, 0, 3), 2.0, 0);
	ck_assert_rel(cell(r, c, 0, 4), 3072.0, 1e-12);
	ck_assert_rel(cell(r, c, 0, 5), 3072.0 / 86400.0, 1e-12);
	ck_assert_str_eq(text(r, c, 1, 0), "Cloud B");
	ck_assert_rel(cell(r, c, 1, 4), 2304.0, 1e-12);
	ck_assert_str_eq(text(r, c, 2, 1), "purchase");
	ck_assert_rel(cell(r, c, 2, 4), 30000.0 * 1536 / 35040 + 240.0, 1e-12);
	ck_assert_rel(cell(r, c, 2, 5), (30000.0 * 1536 / 35040 + 240.0) / 86400.0, 1e-12);
	/* per GPU-hour of owning: $30,000 / 35,040 h + 10 kW / 8 x 1.25 x $0.10 */
	ck_assert_rel(cell(r, c, 2, 3), 30000.0 / 35040 + 10.0 / 8 * 1.25 * 0.1, 1e-12);
	int w = rep_table_find(r, "d1-ownership");
	ck_assert_int_ge(w, 0);
	ck_assert_rel(cell(r, w, 8, 1), 30000.0 * 1536 / 35040, 1e-12); /* amortization for this training */
	ck_assert_rel(cell(r, w, 9, 1), 240.0, 1e-12);                   /* energy for this training */
	rep_free(r);

	/* in another currency every amount is converted, nothing else */
	ck_assert_int_eq(rep_parse_currency("EUR:0.5", &o, err, sizeof err), 0);
	ck_assert_msg(rep_build(&doc, 1, &o, &r, err, sizeof err) == 0, "%s", err);
	c = rep_table_find(r, "d1-cost");
	ck_assert_rel(cell(r, c, 0, 4), 1536.0, 1e-12);
	ck_assert_str_eq(rep_table_key(r, (size_t)c, 4), "total_eur");
	t = rep_table_find(r, "d1-time");
	ck_assert_rel(cell(r, t, 3, 1), 1536.0, 1e-12);
	rep_free(r);
	ck_assert_int_eq(rep_parse_currency("EUR", &o, err, sizeof err), PP_EUSAGE);
	ck_assert_int_eq(rep_parse_currency("usd", &o, err, sizeof err), PP_EUSAGE);
	ck_assert_int_eq(rep_parse_currency("GBP:-1", &o, err, sizeof err), PP_EUSAGE);
	test_rmdir(dir);
}
END_TEST

static rep_report *
fixtures(const rep_opts *o)
{
	static const char *const names[] = {"plan-train-h100.json", "plan-train-a100.json", "sim-train.json",
					    "sim-train-trace.json", "serve-r2.json", "serve-r4.json", "serve-r8.json",
					    "plan-serve.json", "capacity.json", "validate.json"};
	const char *paths[10];
	static char buf[10][1024];
	for (int i = 0; i < 10; i++) {
		char rel[64];
		snprintf(rel, sizeof rel, "report/%s", names[i]);
		snprintf(buf[i], sizeof buf[i], "%s", test_data(rel));
		paths[i] = buf[i];
	}
	rep_report *r;
	ck_assert_msg(rep_build(paths, 10, o, &r, err, sizeof err) == 0, "%s", err);
	return r;
}

static cJSON *
load(const char *rel)
{
	char *text;
	size_t len;
	ck_assert_int_eq(pp_read_file(test_data(rel), 1 << 24, &text, &len, err, sizeof err), 0);
	cJSON *j = cJSON_Parse(text);
	free(text);
	ck_assert_ptr_nonnull(j);
	return j;
}

static double
jnum(const cJSON *o, const char *k)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
	ck_assert_msg(cJSON_IsNumber(x), "no number \"%s\"", k);
	return x->valuedouble;
}

/* The capacity plan's totals are GPU-hours x price, and the report shows the plan's numbers;
 * the serving cost per month is price x GPUs x 730 hours. */
START_TEST(documents_numbers)
{
	rep_opts o;
	rep_opts_init(&o);
	o.gnuplot = "";
	rep_report *r = fixtures(&o);
	cJSON *cap = load("report/capacity.json");
	int t = rep_table_find(r, "d9-rent");
	ck_assert_int_ge(t, 0);
	size_t row = 0;
	const cJSON *s;
	cJSON_ArrayForEach(s, cJSON_GetObjectItem(cap, "systems"))
	{
		const cJSON *x;
		double gpu_hours = jnum(s, "gpu_hours");
		ck_assert_rel(gpu_hours, jnum(s, "gpus") * jnum(s, "days") * 24, 1e-9);
		cJSON_ArrayForEach(x, cJSON_GetObjectItem(s, "rent"))
		{
			ck_assert_rel(jnum(x, "total_usd"), gpu_hours * jnum(x, "usd_per_gpu_hour"), 1e-9);
			ck_assert_rel(jnum(x, "usd_per_million_tokens"), jnum(x, "total_usd") / 1e5, 1e-9); /* 100G tokens */
			ck_assert(cell(r, t, row, 5) == jnum(x, "total_usd"));
			ck_assert(cell(r, t, row, 6) == jnum(x, "usd_per_million_tokens"));
			row++;
		}
	}
	ck_assert_uint_eq(row, rep_table_rows(r, (size_t)t));
	cJSON_Delete(cap);

	cJSON *sv = load("report/serve-r2.json");
	t = rep_table_find(r, "d5-serve-cost");
	ck_assert_int_ge(t, 0);
	double price = jnum(sv, "price_usd_per_gpu_hour"), gpus = jnum(cJSON_GetObjectItem(sv, "config"), "gpus");
	ck_assert_rel(cell(r, t, 1, 1), price * gpus, 1e-12);
	ck_assert_rel(cell(r, t, 2, 1), price * gpus * 730, 1e-12);
	cJSON_Delete(sv);

	/* the validation's MAPE per source, and overall last */
	cJSON *v = load("report/validate.json");
	t = rep_table_find(r, "d10-validation");
	ck_assert_int_ge(t, 0);
	size_t n = rep_table_rows(r, (size_t)t);
	ck_assert(cell(r, t, n - 1, 2) == jnum(cJSON_GetObjectItem(v, "overall"), "mape"));
	cJSON_Delete(v);
	rep_free(r);
}
END_TEST

/* Every table written as CSV reads back through common/csv.h, cell for cell. */
START_TEST(csv_round_trip)
{
	const char *dir = test_tmpdir("report-csv");
	rep_opts o;
	rep_opts_init(&o);
	o.gnuplot = "";
	o.formats = REP_CSV;
	rep_report *r = fixtures(&o);
	char out[600];
	snprintf(out, sizeof out, "%s/out", dir);
	ck_assert_msg(rep_write(r, out, NULL, err, sizeof err) == 0, "%s", err);
	ck_assert_uint_gt(rep_ntables(r), 20);
	for (size_t t = 0; t < rep_ntables(r); t++) {
		char path[800];
		snprintf(path, sizeof path, "%s/tables/%s.csv", out, rep_table_id(r, t));
		char *textbuf;
		size_t len;
		ck_assert_msg(pp_read_file(path, 1 << 24, &textbuf, &len, err, sizeof err) == 0, "%s", err);
		pp_csv csv;
		ck_assert_msg(pp_csv_parse(textbuf, len, path, &csv, err, sizeof err) == 0, "%s", err);
		ck_assert_uint_eq(csv.nrows, rep_table_rows(r, t) + 1);
		size_t nc = rep_table_cols(r, t);
		for (size_t c = 0; c < nc; c++)
			ck_assert_str_eq(pp_csv_get(&csv, 0, (int)c), rep_table_key(r, t, c));
		for (size_t row = 0; row < rep_table_rows(r, t); row++) {
			ck_assert_uint_eq(csv.nfields[row + 1], nc);
			for (size_t c = 0; c < nc; c++) {
				const char *s;
				double v;
				const char *got = pp_csv_get(&csv, row + 1, (int)c);
				if (rep_table_cell(r, t, row, c, &s, &v))
					ck_assert_str_eq(got, s);
				else
					ck_assert_msg(strtod(got, NULL) == v, "%s row %zu col %zu: %s != %.17g", path, row, c, got, v);
			}
		}
		pp_csv_free(&csv);
		free(textbuf);
	}
	rep_free(r);
	/* nothing but the tables and the manifest */
	struct stat st;
	char p[800];
	snprintf(p, sizeof p, "%s/report.html", out);
	ck_assert_int_ne(stat(p, &st), 0);
	snprintf(p, sizeof p, "%s/manifest.txt", out);
	ck_assert_int_eq(stat(p, &st), 0);
	test_rmdir(dir);
}
END_TEST

static int
count_series(const char *path)
{
	char *t;
	size_t len;
	ck_assert_msg(pp_read_file(path, 1 << 26, &t, &len, err, sizeof err) == 0, "%s", err);
	int n = 0;
	for (const char *p = t; (p = strstr(p, "# series: ")) != NULL; p++)
		n += p == t || p[-1] == '\n';
	free(t);
	return n;
}

/* Each chart has the series it draws, in its data file; with gnuplot, a non-empty SVG and
 * PNG; with a gnuplot that fails, the report is written without that chart. */
START_TEST(charts)
{
	const char *dir = test_tmpdir("report-charts");
	rep_opts o;
	rep_opts_init(&o);
	char gbuf[1024];
	const char *gnuplot = rep_gnuplot(&o, gbuf, sizeof gbuf);
	rep_report *r = fixtures(&o);
	char out[600];
	snprintf(out, sizeof out, "%s/out", dir);
	ck_assert_msg(rep_write(r, out, NULL, err, sizeof err) == 0, "%s", err);
	static const struct {
		const char *name;
		int series;
	} want[] = {
		{"d1-scaling", 3},      /* tokens/s, ideal, efficiency */
		{"d1-pareto", 2},       /* every layout, the front */
		{"d3-memory", 8},       /* seven parts and the GPU's memory */
		{"d8-serving", 3},      /* P99 TTFT and TPOT against the SLO, and the SLO */
		{"sweep1", 8},          /* P50/P90/P99 of TTFT and TPOT, two targets */
		{"cost-by-system", 3},  /* lowest and highest rental, owning */
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		size_t c = 0;
		while (c < rep_ncharts(r) && strcmp(rep_chart_name(r, c), want[i].name) != 0)
			c++;
		ck_assert_msg(c < rep_ncharts(r), "no chart %s", want[i].name);
		ck_assert_int_eq(rep_chart_series(r, c), want[i].series);
		char path[800];
		snprintf(path, sizeof path, "%s/charts/%s.dat", out, want[i].name);
		ck_assert_int_eq(count_series(path), want[i].series);
		if (gnuplot != NULL) {
			static const char *const ext[] = {"svg", "png"};
			for (int e = 0; e < 2; e++) {
				struct stat st;
				snprintf(path, sizeof path, "%s/charts/%s.%s", out, want[i].name, ext[e]);
				ck_assert_msg(stat(path, &st) == 0 && st.st_size > 0, "%s not drawn", path);
			}
		}
	}
	/* the timeline: forward, backward and at least one kind of communication */
	char path[800];
	snprintf(path, sizeof path, "%s/charts/d4-timeline.dat", out);
	ck_assert_int_ge(count_series(path), 3);
	rep_free(r);
	if (gnuplot == NULL)
		fprintf(stderr, "check_report: no gnuplot, the drawing was not checked\n");

	/* a gnuplot that fails: a notice, no images, the report written */
	o.gnuplot = "/bin/false";
	r = fixtures(&o);
	char *notes = NULL;
	snprintf(out, sizeof out, "%s/broken", dir);
	ck_assert_msg(rep_write(r, out, &notes, err, sizeof err) == 0, "%s", err);
	ck_assert_ptr_nonnull(notes);
	ck_assert_msg(strstr(notes, "could not draw") != NULL, "%s", notes);
	free(notes);
	struct stat st;
	snprintf(path, sizeof path, "%s/charts/d3-memory.svg", out);
	ck_assert_int_ne(stat(path, &st), 0);
	snprintf(path, sizeof path, "%s/report.html", out);
	ck_assert_int_eq(stat(path, &st), 0);
	rep_free(r);
	test_rmdir(dir);
}
END_TEST

/* Appends the payload to every string of a JSON tree but the keys a document's type rests on. */
static void
poison(cJSON *x, const char *payload)
{
	for (; x != NULL; x = x->next) {
		if (cJSON_IsString(x) && !(x->string && (!strcmp(x->string, "kind") || !strcmp(x->string, "ph")))) {
			pp_str s = {0};
			pp_str_add(&s, x->valuestring);
			pp_str_add(&s, payload);
			cJSON_SetValuestring(x, s.buf);
			pp_str_free(&s);
		}
		poison(x->child, payload);
	}
}

/* Issue 16: a string from a document reaches gnuplot as data, never as script text.  The
 * quoting by hand; then every fixture with every string poisoned (backquotes, system(), @macros,
 * $datablocks, quotes, backslashes, newlines, '#', escape sequences, invalid UTF-8): each chart's
 * script passes the check, has no backquote at all, and its data file no line that is not a
 * comment or numbers. */
START_TEST(gnuplot_quoting)
{
	/* a"b`c NEWLINE @m \ #: each byte gnuplot could read as syntax is an octal escape; the
	 * newline is first shown as \x0a (whose backslash is \134) */
	pp_str q = {0};
	rep_gp_quote(&q, "a\"b`c\n@m \\ #'$x");
	ck_assert_str_eq(q.buf, "\"a\\042b\\140c\\134x0a\\100m \\134 \\043\\047\\044x\"");
	pp_str_free(&q);
	rep_gp_quote(&q, "caf\xc3\xa9");
	ck_assert_str_eq(q.buf, "\"caf\\303\\251\"");
	pp_str_free(&q);
	rep_gp_comment(&q, "x\\\n`y`\x1b");
	ck_assert_str_eq(q.buf, "x//x0a'y'/x1b");
	pp_str_free(&q);
	/* the check refuses what would run or break out */
	static const char *const bad[] = {
		"set title \"a`id`\"\n", "set title '`id`'\n", "print @m\n", "plot $data using 1:2\n",
		"set title \"a\\\"\n", "set title \"x\" # `id`\n", "# comment \\\nprint 1\n", "set title \"\x1b\"\n",
		"set title \"unterminated\n",
	};
	int line;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_msg(rep_gp_check(bad[i], strlen(bad[i]), &line) != 0, "case %zu passed the check", i);
	}
	const char *ok = "# title\nset title \"a\\140\" font \"sans,13\" lc rgb \"#555555\"\nplot 'x.dat' using ($1-0.2):2 title 'y', \\\n     '' index 1\n";
	ck_assert_int_eq(rep_gp_check(ok, strlen(ok), &line), 0);

	static const char *const names[] = {"plan-train-h100.json", "plan-train-a100.json", "sim-train.json",
					    "sim-train-trace.json", "serve-r2.json", "serve-r4.json", "serve-r8.json",
					    "plan-serve.json", "capacity.json", "validate.json"};
	static const char payload[] = " x`touch PWNED` @m \"q' \\ $data system(\"touch PWNED2\") `touch PWNED3`\n#n\\\n\r"
				      "\x1b[31m\xe2\x80\xae\xff\xc0";
	const char *dir = test_tmpdir("report-poison");
	const char *paths[10];
	static char pbuf[10][600];
	for (int i = 0; i < 10; i++) {
		char rel[64], *text;
		size_t len;
		snprintf(rel, sizeof rel, "report/%s", names[i]);
		ck_assert_int_eq(pp_read_file(test_data(rel), 1 << 26, &text, &len, err, sizeof err), 0);
		cJSON *d = cJSON_Parse(text);
		free(text);
		ck_assert_ptr_nonnull(d);
		poison(d, payload);
		char *out = cJSON_PrintUnformatted(d);
		cJSON_Delete(d);
		snprintf(pbuf[i], sizeof pbuf[i], "%s", write_doc(dir, names[i], out));
		paths[i] = pbuf[i];
		free(out);
	}
	rep_opts o;
	rep_opts_init(&o);
	o.gnuplot = "";
	rep_report *r;
	ck_assert_msg(rep_build(paths, 10, &o, &r, err, sizeof err) == 0, "%s", err);
	ck_assert_uint_ge(rep_ncharts(r), 6);
	for (size_t c = 0; c < rep_ncharts(r); c++) {
		char *gp = rep_chart_script(r, c), *dat = rep_chart_data(r, c);
		ck_assert(gp != NULL && dat != NULL);
		ck_assert_msg(strchr(gp, '`') == NULL, "a backquote in the script of %s", rep_chart_name(r, c));
		ck_assert_msg(rep_gp_check(gp, strlen(gp), &line) == 0, "%s.gp:%d breaks the rules", rep_chart_name(r, c), line);
		for (const char *l = dat; *l;) {
			size_t n = strcspn(l, "\n");
			if (n > 0 && l[0] != '#')
				for (size_t k = 0; k < n; k++)
					ck_assert_msg(strchr("0123456789.eE+- NaN", l[k]) != NULL, "%s.dat: a data line \"%.*s\"",
						      rep_chart_name(r, c), (int)n, l);
			l += n + (l[n] == '\n');
		}
		free(gp);
		free(dat);
	}
	/* the payload reached the charts' titles (so the check above saw it) */
	size_t c3 = 0;
	while (c3 < rep_ncharts(r) && strcmp(rep_chart_name(r, c3), "d3-memory") != 0)
		c3++;
	ck_assert(c3 < rep_ncharts(r));
	char *gp = rep_chart_script(r, c3);
	ck_assert_msg(strstr(gp, "\\140touch PWNED\\140") != NULL, "%s", gp);
	free(gp);
	rep_free(r);
	test_rmdir(dir);
}
END_TEST

/* Issue 16, item 7: numbers a report would show as answers are held to what their field can
 * be: a step of -1 s or 0, a negative throughput, an MFU of 180%, a plan without a winner, a
 * trace event at 1e300 us.  Each fixture with one field changed must be refused, naming it. */
static cJSON *
fixture_json(const char *name)
{
	char rel[64], *text;
	size_t len;
	snprintf(rel, sizeof rel, "report/%s", name);
	ck_assert_int_eq(pp_read_file(test_data(rel), 1 << 26, &text, &len, err, sizeof err), 0);
	cJSON *d = cJSON_Parse(text);
	free(text);
	ck_assert_ptr_nonnull(d);
	return d;
}

START_TEST(impossible_numbers_refused)
{
	const char *dir = test_tmpdir("report-impossible");
	static const struct {
		const char *file, *ptr; /* the member set, as /a/b/c (no array indexes but the first candidate) */
		double v;
		bool remove;
		const char *want;
	} c[] = {
		{"sim-train.json", "step_time_s", -1, false, "\"/step_time_s\" must be a positive time of at most 1e9 s, got -1"},
		{"sim-train.json", "step_time_s", 0, false, "\"/step_time_s\" must be a positive time"},
		{"sim-train.json", "tokens_per_s", -5, false, "\"/tokens_per_s\" must be a positive rate, got -5"},
		{"sim-train.json", "mfu", 1.8, false, "\"/mfu\" must be a fraction from 0 to 1, got 1.8"},
		{"serve-r2.json", "ttft_s", -0.5, false, "must be a time from 0 to 1e9 s"},
		{"plan-train-h100.json", "winner", 0, true, "\"/winner\" is missing"},
		{"plan-train-h100.json", "winner/step_time_s", 1.0, false, "is not the first candidate's"},
		{"plan-train-h100.json", "counts/0/candidates/0/step_time_s", -1, false, "must be a positive time"},
		{"plan-train-h100.json", "counts/0/candidates/0/config/tp", 2.5, false, "must be a whole number, at least 1, got 2.5"},
		{"sim-train-trace.json", "traceEvents/22/ts", 1e300, false, "\"/traceEvents/22/ts\" must be a number of microseconds from 0 to 1e15"},
	};
	rep_opts o;
	rep_opts_init(&o);
	o.gnuplot = "";
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		cJSON *d = fixture_json(c[i].file);
		/* walk to the parent of the member */
		char path[128];
		snprintf(path, sizeof path, "%s", c[i].ptr);
		cJSON *x = d;
		char *tok = path, *slash;
		while ((slash = strchr(tok, '/')) != NULL) {
			*slash = '\0';
			x = cJSON_IsArray(x) ? cJSON_GetArrayItem(x, atoi(tok)) : cJSON_GetObjectItem(x, tok);
			ck_assert_ptr_nonnull(x);
			tok = slash + 1;
		}
		if (c[i].remove) {
			cJSON_DeleteItemFromObject(x, tok);
		} else {
			cJSON *old = cJSON_IsArray(x) ? cJSON_GetArrayItem(x, atoi(tok)) : cJSON_GetObjectItem(x, tok);
			ck_assert_msg(old != NULL, "case %zu: no %s", i, c[i].ptr);
			if (cJSON_IsObject(old)) /* a statistics object ("ttft_s"): its P99 */
				old = cJSON_GetObjectItem(old, "p99");
			cJSON_SetNumberValue(old, c[i].v);
		}
		char *text = cJSON_Print(d);
		cJSON_Delete(d);
		char name[32];
		snprintf(name, sizeof name, "case%zu.json", i);
		const char *p = write_doc(dir, name, text);
		free(text);
		rep_report *r = NULL;
		int rc = rep_build(&p, 1, &o, &r, err, sizeof err);
		ck_assert_msg(rc == PP_EINPUT, "case %zu (%s) accepted", i, c[i].ptr);
		ck_assert_msg(strstr(err, name) && strstr(err, c[i].want), "case %zu: %s", i, err);
		ck_assert_ptr_null(r);
	}
	test_rmdir(dir);
}
END_TEST

/* Bad documents: PP_EINPUT naming the file and the field; a bad command line: PP_EUSAGE; and
 * nothing written. */
START_TEST(bad_input)
{
	const char *dir = test_tmpdir("report-bad");
	rep_opts o;
	rep_opts_init(&o);
	o.gnuplot = "";
	static const struct {
		const char *text, *want;
	} cases[] = {
		{"{\"kind\": \"plan-train\",", "not valid JSON"},
		{"", "empty file"},
		{"{\"kind\": 7}", "\"/kind\" must be a string"},
		{"{\"kind\": \"serve\", \"model\": \"m\", \"system\": \"s\"}", "\"/config/rate\" is missing"},
		{"{\"kind\": \"validate\", \"set\": \"x\", \"overall\": {\"rows\": \"many\", \"mape\": 0.1, \"skipped\": 0}, "
		 "\"sources\": []}",
		 "\"/overall/rows\" must be a number"},
		{"{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"fwd attn L0 mb0\", \"ts\": -1, \"dur\": 1, \"pid\": 0, \"tid\": 0}]}",
		 "\"/traceEvents/0/ts\" must be"},
		{"{\"traceEvents\": []}", "no complete"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char name[32];
		snprintf(name, sizeof name, "bad%zu.json", i);
		const char *p = write_doc(dir, name, cases[i].text);
		rep_report *r = NULL;
		int rc = rep_build(&p, 1, &o, &r, err, sizeof err);
		ck_assert_msg(rc == PP_EINPUT, "case %zu: rc %d (%s)", i, rc, err);
		ck_assert_msg(strstr(err, name) != NULL, "case %zu: \"%s\" does not name the file", i, err);
		ck_assert_msg(strstr(err, cases[i].want) != NULL, "case %zu: \"%s\" lacks \"%s\"", i, err, cases[i].want);
		ck_assert_ptr_null(r);
	}
	/* two models in one report */
	const char *two[2];
	two[0] = write_doc(dir, "a.json", hand_plan);
	pp_str s = {0};
	pp_str_add(&s, hand_plan);
	char *m = strstr(s.buf, "hand-model");
	memcpy(m, "othr", 4);
	two[1] = write_doc(dir, "b.json", s.buf);
	pp_str_free(&s);
	rep_report *r = NULL;
	ck_assert_int_eq(rep_build(two, 2, &o, &r, err, sizeof err), PP_EINPUT);
	ck_assert_msg(strstr(err, "b.json") && strstr(err, "\"/model\"") && strstr(err, "one model"), "%s", err);
	/* the same file twice */
	two[1] = two[0];
	ck_assert_int_eq(rep_build(two, 2, &o, &r, err, sizeof err), PP_EUSAGE);
	/* an output directory of other files is not replaced, and nothing is left beside it */
	ck_assert_int_eq(rep_build(two, 1, &o, &r, err, sizeof err), 0);
	char out[600];
	snprintf(out, sizeof out, "%s/mine", dir);
	ck_assert_int_eq(pp_mkdirs(out, err, sizeof err), 0);
	write_doc(out, "notes.txt", "keep");
	ck_assert_int_eq(rep_write(r, out, NULL, err, sizeof err), PP_EUSAGE);
	ck_assert(strstr(err, "not an earlier report") != NULL);
	/* a path under a file cannot be made: an error, and no temporary directory beside it */
	char under[700];
	snprintf(under, sizeof under, "%s/notes.txt/report", out);
	ck_assert_int_ne(rep_write(r, under, NULL, err, sizeof err), 0);
	rep_free(r);
	char cmd[800];
	snprintf(cmd, sizeof cmd, "ls '%s' | grep -q tmp-", dir);
	ck_assert_int_ne(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "test \"$(ls '%s')\" = notes.txt", out);
	ck_assert_int_eq(system(cmd), 0);
	test_rmdir(dir);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("report");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, cost_by_hand);
	tcase_add_test(tc, documents_numbers);
	tcase_add_test(tc, csv_round_trip);
	tcase_add_test(tc, charts);
	tcase_add_test(tc, bad_input);
	tcase_add_test(tc, gnuplot_quoting);
	tcase_add_test(tc, impossible_numbers_refused);
	suite_add_tcase(s, tc);
	return test_run(s);
}
