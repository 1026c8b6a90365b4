/*
 * cmd_report.c -- 'paraplan report': results into a report for people who decide (HTML,
 * Markdown, CSV, gnuplot charts).
 */
#include "config.h"
#include "cli/cli.h"
#include "reports/rep.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
	"usage: paraplan report --from RESULT.json [--from ...] --out DIR [--format html|md|csv|all]\n"
	"           [--title T] [--currency USD|CODE:RATE] [--tokens T] [--trace TRACE.json]\n"
	"\n"
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
	"PARAPLAN_GNUPLOT naming a program that is not there) the report has tables only.\n"
	"\n"
	"  --format F     html, md, csv or all (default all)\n"
	"  --title T      the report's title (default: the model's name and what the report is)\n"
	"  --currency C   USD (default), or CODE:RATE with RATE units per US dollar (EUR:0.92)\n"
	"  --tokens T     tokens for the time to train of layout searches and simulations (default 1T)\n"
	"  --trace FILE   a 'simulate train --trace' file (the same as --from FILE)\n"
	"\n"
	"Example:\n"
	"  paraplan plan train --model llama-3-70b --system dgx-h100 --gpus 64..512 --global-batch 512 --json > plan.json\n"
	"  paraplan validate --json > validate.json\n"
	"  paraplan report --from plan.json --from validate.json --out report --tokens 15T\n";

int
cmd_report(int argc, char **argv)
{
	enum { R_FROM = 300, R_OUT, R_FORMAT, R_TITLE, R_CURRENCY, R_TOKENS, R_TRACE, R_HELP };
	static const struct option opts[] = {
		{"from", required_argument, NULL, R_FROM},         {"out", required_argument, NULL, R_OUT},
		{"format", required_argument, NULL, R_FORMAT},     {"title", required_argument, NULL, R_TITLE},
		{"currency", required_argument, NULL, R_CURRENCY}, {"tokens", required_argument, NULL, R_TOKENS},
		{"trace", required_argument, NULL, R_TRACE},       {"help", no_argument, NULL, R_HELP},
		{NULL, 0, NULL, 0},
	};
	rep_opts o;
	rep_opts_init(&o);
	const char **from = calloc((size_t)argc + 1, sizeof *from);
	size_t nfrom = 0;
	const char *out = NULL;
	char err[1024];
	int c;
	if (from == NULL)
		return cli_fail(PP_ENOMEM, "out of memory");
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case R_FROM:
		case R_TRACE: from[nfrom++] = optarg; break;
		case R_OUT: out = optarg; break;
		case R_FORMAT:
			if (rep_parse_format(optarg, &o.formats) != 0) {
				free(from);
				return cli_usage("report", "--format must be html, md, csv or all, got \"%s\"", optarg);
			}
			break;
		case R_TITLE: o.title = optarg; break;
		case R_CURRENCY:
			if (rep_parse_currency(optarg, &o, err, sizeof err) != 0) {
				free(from);
				return cli_usage("report", "%s", err);
			}
			break;
		case R_TOKENS:
			if (cli_double("report", "--tokens", optarg, 1.0, 1e18, &o.tokens)) {
				free(from);
				return 2;
			}
			break;
		case R_HELP:
		case 'h':
			free(from);
			fputs(usage_text, stdout);
			return 0;
		default:
			free(from);
			return cli_bad_option("report", c, argv);
		}
	}
	if (optind < argc) {
		free(from);
		return cli_usage("report", "unexpected argument \"%s\"", argv[optind]);
	}
	if (nfrom == 0) {
		free(from);
		return cli_usage("report", "--from is required (a --json result of plan, simulate or validate)");
	}
	if (out == NULL) {
		free(from);
		return cli_usage("report", "--out is required (the directory to write the report into)");
	}
	rep_report *r;
	int rc = rep_build(from, nfrom, &o, &r, err, sizeof err);
	free(from);
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
