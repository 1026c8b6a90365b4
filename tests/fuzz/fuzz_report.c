/*
 * fuzz_report.c -- reports/, reading the JSON documents of 'plan', 'simulate' and 'validate'
 * (--json) and Chrome traces of 'simulate train --trace' into a report ('paraplan report
 * --from').  The report is built in memory, not rendered (no gnuplot).  A refusal names the
 * file; an accepted document gives tables whose every cell can be read, and charts whose
 * gnuplot scripts pass rep_gp_check (no backquote anywhere, every string of the document an
 * escaped constant: nothing a document says can run in gnuplot) and whose data files hold
 * comments and numbers only.
 */
#include "config.h"
#include "tests/fuzz/fuzz.h"

#include "reports/rep.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
fuzz_report(const uint8_t *data, size_t size)
{
	/* rep_build reads its documents from files: one scratch file per process */
	static char path[256];
	if (path[0] == '\0')
		snprintf(path, sizeof path, "%s/paraplan-fuzz-report-%ld.json", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
			 (long)getpid());
	FILE *f = fopen(path, "wb");
	FUZZ_CHECK(f != NULL);
	FUZZ_CHECK(fwrite(data, 1, size, f) == size);
	FUZZ_CHECK(fclose(f) == 0);
	rep_opts o;
	rep_opts_init(&o);
	o.gnuplot = "";
	const char *paths[] = {path};
	rep_report *r = NULL;
	char err[1024] = "";
	if (rep_build(paths, 1, &o, &r, err, sizeof err) != 0) {
		FUZZ_CHECK(r == NULL && err[0] != '\0');
		FUZZ_CHECK(strstr(err, "paraplan-fuzz-report-") != NULL || strstr(err, "out of memory") != NULL);
	} else {
		for (size_t t = 0; t < rep_ntables(r); t++) {
			FUZZ_CHECK(rep_table_find(r, rep_table_id(r, t)) == (int)t);
			for (size_t c = 0; c < rep_table_cols(r, t); c++)
				FUZZ_CHECK(rep_table_key(r, t, c) != NULL);
			for (size_t row = 0; row < rep_table_rows(r, t); row++)
				for (size_t c = 0; c < rep_table_cols(r, t); c++) {
					const char *text = NULL;
					double v = 0;
					if (rep_table_cell(r, t, row, c, &text, &v))
						FUZZ_CHECK(text != NULL);
				}
		}
		for (size_t c = 0; c < rep_ncharts(r); c++) {
			FUZZ_CHECK(rep_chart_name(r, c) != NULL && rep_chart_series(r, c) >= 0);
			char *gp = rep_chart_script(r, c), *dat = rep_chart_data(r, c);
			int line;
			FUZZ_CHECK(gp != NULL && dat != NULL);
			FUZZ_CHECK(strchr(gp, '`') == NULL);
			FUZZ_CHECK(rep_gp_check(gp, strlen(gp), &line) == 0);
			for (const char *l = dat; *l;) {
				size_t n = strcspn(l, "\n");
				if (n > 0 && l[0] != '#')
					FUZZ_CHECK(strspn(l, "0123456789.eE+- NaN") >= n);
				else if (n > 0)
					for (size_t k = 0; k < n; k++)
						FUZZ_CHECK((unsigned char)l[k] >= 0x20 && l[k] != 0x7f && l[k] != '\\');
				l += n + (l[n] == '\n');
			}
			free(gp);
			free(dat);
		}
		rep_free(r);
	}
	unlink(path);
	return 0;
}
