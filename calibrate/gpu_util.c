/*
 * gpu_util.c -- what the two GPU programs of calibrate/ (gpu.c: calibration, replay_gpu.c:
 * replay) share: their error messages for CUDA, cuBLASLt and NCCL calls, progress lines,
 * random device buffers and version strings.
 */
#include "config.h"
#include "calibrate/cal_int.h"
#include "calibrate/gpu_int.h"
#include "common/pp.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* "rank N: " before a message of a multi-process run (rank >= 0), nothing otherwise. */
static const char *
rank_prefix(int rank, char *buf, size_t n)
{
	if (rank < 0)
		return "";
	snprintf(buf, n, "rank %d: ", rank);
	return buf;
}

int
cal_cuda_err(char *err, size_t errlen, int rank, const char *what, cudaError_t e)
{
	char p[32];
	return pp_err(err, errlen, PP_EIO, "%s%s: %s (%s)", rank_prefix(rank, p, sizeof p), what, cudaGetErrorString(e),
		      cudaGetErrorName(e));
}

int
cal_blas_err(char *err, size_t errlen, int rank, const char *what, cublasStatus_t s)
{
	char p[32];
	return pp_err(err, errlen, PP_EIO, "%s%s: cuBLASLt status %d", rank_prefix(rank, p, sizeof p), what, (int)s);
}

/* ncclGetErrorString names only the class ("unhandled cuda error (run with NCCL_DEBUG=INFO
 * for details)"); ncclGetLastError (NCCL 2.13) has the failure itself. */
int
cal_nccl_err(char *err, size_t errlen, int rank, const char *what, ncclResult_t r)
{
	const char *last = NULL;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 13, 0)
	last = ncclGetLastError(NULL);
#endif
	bool detail = last != NULL && *last != '\0';
	char p[32];
	return pp_err(err, errlen, PP_EIO, "%s%s: %s%s%s", rank_prefix(rank, p, sizeof p), what, ncclGetErrorString(r),
		      detail ? ": " : "", detail ? last : "");
}

void
cal_say(void (*progress)(void *ctx, const char *line), void *ctx, int rank, const char *fmt, ...)
{
	if (rank != 0 || progress == NULL)
		return;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	progress(ctx, buf);
}

/* Fills `bytes` of device memory with random non-zero values of element size elsz (4: fp32,
 * 2: fp16 or bf16 per `bf16`, 1: fp8 e4m3), from a host pattern of 16 MiB (cal_random_fill)
 * copied over it. */
int
cal_fill_random(void *dptr, size_t bytes, int elsz, bool bf16, uint64_t seed, int rank, char *err, size_t errlen)
{
	size_t pat = (size_t)16 << 20;
	unsigned char *h = malloc(pat);
	if (h == NULL)
		return pp_err(err, errlen, PP_ENOMEM, "out of memory");
	cal_random_fill(h, pat, elsz, bf16, seed);
	int rc = 0;
	for (size_t off = 0; off < bytes && rc == 0; off += pat) {
		size_t n = bytes - off < pat ? bytes - off : pat;
		cudaError_t e = cudaMemcpy((char *)dptr + off, h, n, cudaMemcpyHostToDevice);
		if (e != cudaSuccess)
			rc = cal_cuda_err(err, errlen, rank, "cudaMemcpy", e);
	}
	free(h);
	return rc;
}

/* "12.4" of CUDA's 12040 (div_major 1000). */
void
cal_version(int code, int div_major, char *buf, size_t n)
{
	snprintf(buf, n, "%d.%d", code / div_major, code % div_major / 10);
}
