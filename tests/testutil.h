/*
 * testutil.h -- small helpers for the Check suites: relative-tolerance asserts, fixture paths
 * under $(top_srcdir)/tests/data, a scratch directory in the build tree, the runner.
 */
#ifndef TESTUTIL_H
#define TESTUTIL_H

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* |a - b| <= tol * |b| */
#define ck_assert_rel(a, b, tol)                                                                   \
	do {                                                                                       \
		double a_ = (a), b_ = (b), t_ = (tol);                                             \
		ck_assert_msg(fabs(a_ - b_) <= t_ * fabs(b_), "%s = %.9g, expected %.9g within %g%%", \
			      #a, a_, b_, 100.0 * t_);                                             \
	} while (0)

static inline const char *
test_srcdir(void)
{
	const char *d = getenv("top_srcdir");
	return d && d[0] ? d : ".";
}

/* Path of a fixture: $(top_srcdir)/tests/data/<rel>.  Returns a static buffer. */
static inline const char *
test_data(const char *rel)
{
	static char buf[4][1024];
	static int i;
	i = (i + 1) % 4;
	snprintf(buf[i], sizeof buf[i], "%s/tests/data/%s", test_srcdir(), rel);
	return buf[i];
}

/* A fresh scratch directory in the build tree (tests never write to the source tree). */
static inline const char *
test_tmpdir(const char *name)
{
	static char buf[256];
	snprintf(buf, sizeof buf, "tests/tmp-%.64s-%ld", name, (long)getpid());
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", buf, buf);
	if (system(cmd) != 0)
		return NULL;
	return buf;
}

static inline void
test_rmdir(const char *dir)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%.500s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

static inline int
test_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}

#endif
