/*
 * cmd_report.c -- 'paraplan report': results into a report for people who decide (HTML,
 * Markdown, CSV, gnuplot charts).
 */
#include "config.h"
#include "cli/cli.h"
#include "reports/rep.h"

#include <stdlib.h>
#include <string.h>

static const char about_text[] =
	"Turns the --json results of 'plan train' (layout search or capacity plan with --tokens/--days),\n"
	"'plan serve', 'simulate train', 'simulate serve' and 'validate', and traces of 'simulate train\n"
	"--trace', into a report: the chosen configuration and why, speed, time and cost to train under\n"
	"every listed price (rented, or owned: purchase amortized plus power), serving cost and latency\n"
	"against the SLO, a side-by-side comparison when several systems are given, scaling, and how\n"
	"much of each prediction rests on measurements.  It reads results only; it never simulates.\n"
	"\n"
	"DIR receives report.html (self-contained, charts embedded, prints well), report.md with the\n"
	"charts beside it in charts/ (PNG and SVG, with their data and gnuplot scripts), tables/*.csv\n"
	"(every table, every digit) and manifest.txt.  DIR appears complete or not at all; an existing\n"
	"DIR is replaced only if it is empty or an earlier report.  Without gnuplot (or with\n"
	"PARAPLAN_GNUPLOT naming a program that is not there) the report has tables only.\n";

static const char examples_text[] =
	"  paraplan plan train --model llama-3-70b --system dgx-h100 --gpus 64..512 --global-batch 512 --json > plan.json\n"
	"  paraplan validate --json > validate.json\n"
	"  paraplan report --from plan.json --from validate.json --out report --tokens 15T\n";

int
cmd_report(int argc, char **argv)
{
	static const cli_cmd cmd = {"report",
				    "report --from RESULT.json [--from ...] --out DIR [--format html|md|csv|all]\n"
				    "           [--title T] [--currency USD|CODE:RATE] [--tokens T] [--trace TRACE.json]\n",
				    about_text, examples_text};
	rep_opts o;
	rep_opts_init(&o);
	cli_strs from = {0};
	const char *out = NULL, *format = NULL, *currency = NULL;
	char err[1024];
	const cli_opt opts[] = {
		OPT_STRS("from", "FILE", &from,
			 "a --json result of plan, simulate or validate (or a trace); - reads standard input; repeat for more"),
		OPT_STRS("trace", "FILE", &from, "a 'simulate train --trace' file (the same as --from FILE)"),
		OPT_STR("out", "DIR", &out, "the directory to write the report into"),
		OPT_STR("format", "F", &format, "html, md, csv or all (default all)"),
		OPT_STR("title", "T", &o.title, "the report's title (default: the model's name and what the report is)"),
		OPT_STR("currency", "C", &currency, "USD (default), or CODE:RATE with RATE units per US dollar (EUR:0.92)"),
		OPT_NUM("tokens", "T", &o.tokens, 1.0, 1e18,
			"tokens for the time to train of layout searches and simulations (default 1T)"),
		OPT_END,
	};
	int st = cli_parse(&cmd, opts, argc, argv, NULL, 0, NULL);
	if (st != CLI_RUN)
		return st;
	if (format != NULL && rep_parse_format(format, &o.formats) != 0)
		return cli_usage("report", "--format must be html, md, csv or all, got \"%s\"", format);
	if (currency != NULL && rep_parse_currency(currency, &o, err, sizeof err) != 0)
		return cli_usage("report", "%s", err);
	size_t nfrom = (size_t)from.n;
	int nstdin = 0;
	for (int i = 0; i < from.n; i++)
		nstdin += !strcmp(from.v[i], "-");
	if (nstdin > 1)
		return cli_usage("report", "--from - (standard input) may be given once");
	if (nfrom == 0)
		return cli_usage("report", "--from is required (a --json result of plan, simulate or validate)");
	if (out == NULL)
		return cli_usage("report", "--out is required (the directory to write the report into)");
	rep_report *r;
	int rc = rep_build(from.v, nfrom, &o, &r, err, sizeof err);
	if (rc != 0)
		return cli_fail(rc, err);
	char *notes = NULL;
	rc = rep_write(r, out, &notes, err, sizeof err);
	if (rc != 0) {
		rep_free(r);
		return cli_fail(rc, err);
	}
	for (const char *p = notes; p && *p;) {
		size_t n = strcspn(p, "\n");
		fprintf(stderr, "notice: %.*s\n", (int)n, p);
		p += n + (p[n] == '\n');
	}
	free(notes);
	printf("report written to %s:", out);
	if (o.formats & REP_HTML)
		printf(" report.html");
	if (o.formats & REP_MD)
		printf(" report.md");
	if (o.formats & REP_CSV)
		printf(" tables/ (%zu CSV)", rep_ntables(r));
	if (rep_ncharts(r) > 0)
		printf(" charts/ (%zu)", rep_ncharts(r));
	printf("\n");
	rep_free(r);
	return 0;
}
