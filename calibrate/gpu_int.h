/*
 * gpu_int.h -- private to the GPU halves of calibrate/ (gpu.c, replay_gpu.c): every CUDA,
 * cuBLASLt and NCCL call checked.  The including function has `int rc`, a label `out` that
 * cleans up, and a context `x`; the file defines cuda_err, blas_err and nccl_err, which turn
 * a failed call into the message (naming the call, and the rank where that matters).  Also
 * the CUDA, cuBLASLt, NCCL and MPI headers, and the kernels of kernels.cu.
 */
#ifndef CAL_GPU_INT_H
#define CAL_GPU_INT_H

#include <stddef.h>
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

#define CU(call)                                                                                   \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess) {                                                           \
			rc = cuda_err(x, #call, e_);                                               \
			goto out;                                                                  \
		}                                                                                  \
	} while (0)
#define BL(call)                                                                                   \
	do {                                                                                       \
		cublasStatus_t s_ = (call);                                                        \
		if (s_ != CUBLAS_STATUS_SUCCESS) {                                                 \
			rc = blas_err(x, #call, s_);                                               \
			goto out;                                                                  \
		}                                                                                  \
	} while (0)
#define NC(call)                                                                                   \
	do {                                                                                       \
		ncclResult_t r_ = (call);                                                          \
		if (r_ != ncclSuccess) {                                                           \
			rc = nccl_err(x, #call, r_);                                               \
			goto out;                                                                  \
		}                                                                                  \
	} while (0)
#define CHECK(expr)                                                                                \
	do {                                                                                       \
		if ((rc = (expr)) != 0)                                                            \
			goto out;                                                                  \
	} while (0)

#endif
