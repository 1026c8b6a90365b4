/*
 * record.c -- the calibration-run recorder and the Ctrl-C flag (see cal_int.h).  Host code
 * only, built everywhere, so the transaction and interrupt behaviour is tested without a GPU.
 */
#include "config.h"
#include "calibrate/cal_int.h"
#include "common/pp.h"

#include <gsl/gsl_sort_double.h>
#include <gsl/gsl_statistics_double.h>
#include <signal.h>
#include <string.h>

static volatile sig_atomic_t caught;
static struct sigaction old_int, old_term;
static bool installed;

static void
on_signal(int sig)
{
	(void)sig;
	caught = 1;
}

void
cal_sig_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	caught = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	installed = true;
}

void
cal_sig_restore(void)
{
	if (!installed)
		return;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	installed = false;
}

bool
cal_sig_caught(void)
{
	return caught != 0;
}

void
cal_sig_clear(void)
{
	caught = 0;
}

int
cal_rec_begin(hw_db *db, const hw_run_info *info, cal_rec *rec, char *err, size_t errlen)
{
	memset(rec, 0, sizeof *rec);
	if (db == NULL)
		return 0;
	return hw_run_begin(db, info, &rec->run, err, errlen);
}

int
cal_rec_check(const cal_rec *rec, char *err, size_t errlen)
{
	(void)rec;
	if (cal_sig_caught())
		return pp_err(err, errlen, PP_EINTR, "interrupted: the calibration run was rolled back, nothing was written");
	return 0;
}

int
cal_rec_gemm(cal_rec *rec, int device, hw_dtype t, int64_t m, int64_t n, int64_t k, double time_s, char *err,
	     size_t errlen)
{
	if (rec->run == NULL)
		return 0;
	int rc = hw_run_add_gemm(rec->run, device, t, m, n, k, time_s, err, errlen);
	rec->gemm += rc == 0;
	return rc;
}

int
cal_rec_membw(cal_rec *rec, int device, const char *kind, int64_t bytes, double time_s, char *err, size_t errlen)
{
	if (rec->run == NULL)
		return 0;
	int rc = hw_run_add_membw(rec->run, device, kind, bytes, time_s, err, errlen);
	rec->membw += rc == 0;
	return rc;
}

int
cal_rec_coll(cal_rec *rec, const hw_coll_row *row, char *err, size_t errlen)
{
	if (rec->run == NULL)
		return 0;
	int rc = hw_run_add_coll(rec->run, row, err, errlen);
	rec->coll += rc == 0;
	return rc;
}

int
cal_rec_end(cal_rec *rec, int rc, int64_t *run_id, char *err, size_t errlen)
{
	*run_id = 0;
	if (rc == 0 && cal_sig_caught())
		rc = cal_rec_check(rec, err, errlen);
	if (rec->run == NULL)
		return rc;
	if (rc != 0) {
		hw_run_abort(rec->run);
		rec->run = NULL;
		return rc;
	}
	int64_t id = hw_run_id(rec->run);
	rc = hw_run_commit(rec->run, true, err, errlen);
	rec->run = NULL;
	if (rc == 0)
		*run_id = id;
	return rc;
}

double
cal_median(double *v, size_t n)
{
	gsl_sort(v, 1, n);
	return gsl_stats_median_from_sorted_data(v, 1, n);
}
