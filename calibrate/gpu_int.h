/*
 * gpu_int.h -- private to the GPU halves of calibrate/ (gpu.c, replay_gpu.c): every CUDA,
 * cuBLASLt and NCCL call checked.  The including function has `int rc`, a label `out` that
 * cleans up, and a context `x` with `err`, `errlen`, `rank` and options `o` (progress,
 * progress_ctx); a failed call becomes the message naming the call and the rank
 * (gpu_util.c).  Also the CUDA, cuBLASLt, NCCL and MPI headers, and the kernels of kernels.cu.
 */
#ifndef CAL_GPU_INT_H
#define CAL_GPU_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
/* CUDA 13's cublasLt.h and NCCL's nccl.h declare some functions as f() rather than f(void). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <nccl.h>
#pragma GCC diagnostic pop
#if HAVE_MPI
#include <mpi.h>
#endif

#if HAVE_NVCC
int cal_readwrite_launch(void *buf, size_t bytes, void *stream); /* kernels.cu */
#endif

/* gpu_util.c */
int cal_cuda_err(char *err, size_t errlen, int rank, const char *what, cudaError_t e);
int cal_blas_err(char *err, size_t errlen, int rank, const char *what, cublasStatus_t s);
int cal_nccl_err(char *err, size_t errlen, int rank, const char *what, ncclResult_t r);
void cal_say(void (*progress)(void *ctx, const char *line), void *ctx, int rank, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int cal_fill_random(void *dptr, size_t bytes, int elsz, bool bf16, uint64_t seed, int rank, char *err, size_t errlen);
void cal_version(int code, int div_major, char *buf, size_t n);

/* A progress line, from rank 0 only; device memory filled with random non-zero values, a
 * pattern of each rank's own. */
#define say(x, ...) cal_say((x)->o->progress, (x)->o->progress_ctx, (x)->rank, __VA_ARGS__)
#define fill(x, dptr, bytes, elsz, bf16)                                                           \
	cal_fill_random((dptr), (bytes), (elsz), (bf16), 0x9E3779B97F4A7C15ull + (uint64_t)(x)->rank, \
			(x)->rank, (x)->err, (x)->errlen)

#define CU(call)                                                                                   \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess) {                                                           \
			rc = cal_cuda_err(x->err, x->errlen, x->rank, #call, e_);                  \
			goto out;                                                                  \
		}                                                                                  \
	} while (0)
#define BL(call)                                                                                   \
	do {                                                                                       \
		cublasStatus_t s_ = (call);                                                        \
		if (s_ != CUBLAS_STATUS_SUCCESS) {                                                 \
			rc = cal_blas_err(x->err, x->errlen, x->rank, #call, s_);                  \
			goto out;                                                                  \
		}                                                                                  \
	} while (0)
#define NC(call)                                                                                   \
	do {                                                                                       \
		ncclResult_t r_ = (call);                                                          \
		if (r_ != ncclSuccess) {                                                           \
			rc = cal_nccl_err(x->err, x->errlen, x->rank, #call, r_);                  \
			goto out;                                                                  \
		}                                                                                  \
	} while (0)
#define CHECK(expr)                                                                                \
	do {                                                                                       \
		if ((rc = (expr)) != 0)                                                            \
			goto out;                                                                  \
	} while (0)

#endif
