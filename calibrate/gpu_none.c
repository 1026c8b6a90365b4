/*
 * gpu_none.c -- 'paraplan calibrate' and 'paraplan replay' in a build without CUDA, cuBLASLt and
 * NCCL: they say so.  (configure builds calibrate/gpu.c and calibrate/replay_gpu.c instead where
 * they are found.)
 */
#include "config.h"
#include "calibrate/cal.h"
#include "common/pp.h"

bool
cal_gpu_built(void)
{
	return false;
}

bool
cal_mpi_built(void)
{
	return false;
}

int
cal_gpu_run(const cal_gpu_opts *opts, struct cJSON **report, bool *is_root, char *err, size_t errlen)
{
	(void)opts;
	if (report)
		*report = NULL;
	if (is_root)
		*is_root = true;
	return pp_err(err, errlen, PP_ENODEV,
		      "paraplan was built without CUDA and NCCL (configure did not find them, or was given --without-cuda): "
		      "GPU calibration is not available in this build; 'paraplan import nccl-tests' and "
		      "'paraplan calibrate --fit' work without it");
}

int
cal_gpu_probe(int *ndev, char *err, size_t errlen)
{
	*ndev = 0;
	return cal_gpu_run(NULL, NULL, NULL, err, errlen);
}

int
cal_replay_run(const cal_replay_opts *o, struct cJSON **report, bool *is_root, char *err, size_t errlen)
{
	(void)o;
	if (report)
		*report = NULL;
	if (is_root)
		*is_root = true;
	return pp_err(err, errlen, PP_ENODEV,
		      "paraplan was built without CUDA and NCCL (configure did not find them, or was given --without-cuda): "
		      "replaying a plan on GPUs is not available in this build; 'paraplan replay --dry-run' shows what each "
		      "rank would launch");
}
