/*
 * gpu.c -- 'paraplan calibrate' on GPUs: cuBLASLt GEMM sweeps, HBM bandwidth, NCCL collectives
 * (one process over the node's GPUs, or one process per GPU under MPI across nodes), stored as
 * one calibration run.  Built only where configure found CUDA, cuBLASLt and NCCL (gpu_none.c
 * otherwise); host C throughout, the read-write kernel comes from kernels.cu when nvcc was found.
 *
 * How it measures, and why:
 *   GEMM: cuBLASLt with its heuristic's first algorithm and a 64 MiB workspace, "TN" layout (A
 *     transposed: what FP8 requires, and what frameworks call for linear layers); inputs are
 *     random non-zero values (random bits in the mantissa, exponents around 1, random signs):
 *     zeros would let the tensor cores idle at lower power and clock; written from a host
 *     pattern, so no curand and no kernel.  Two warm-up calls, then the median of 5..25 timed
 *     calls (CUDA events around each), with L2 flushed before each by writing a buffer of twice
 *     its size -- a GEMM that finds its operands in L2 is faster than one in a training step.
 *   HBM: cudaMemcpy device-to-device and the read-write kernel, buffers from 4 x L2 up; bytes
 *     stored are read + written (2 x the buffer), as BabelStream counts a copy.
 *   Collectives: nccl-tests' method -- float buffers, a warm-up, then the wall time of a run of
 *     back-to-back calls over all ranks' streams divided by their number (averaged over ranks
 *     under MPI), algbw = size / time and busbw = algbw x nccl-tests' factor.
 *   Each row is added to the run as it is measured; Ctrl-C (SIGINT, SIGTERM) sets a flag that
 *   is checked between measurements (and agreed among MPI ranks), and the run is then rolled
 *   back, as it is on any error: the database gets the whole run or nothing.
 */
#include "config.h"
#include "calibrate/cal_int.h"
#include "calibrate/gpu_int.h"
#include "common/pp.h"

#include <cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WORKSPACE_BYTES ((size_t)64 << 20)
#define MAX_GPUS 64

int
cal_gpu_probe(int *ndev, char *err, size_t errlen)
{
	*ndev = 0;
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	if (e != cudaSuccess)
		return pp_err(err, errlen, PP_ENODEV, "no GPU found: cudaGetDeviceCount: %s (%s)", cudaGetErrorString(e),
			      cudaGetErrorName(e));
	if (n <= 0) {
		const char *v = getenv("CUDA_VISIBLE_DEVICES");
		return pp_err(err, errlen, PP_ENODEV, "no GPU found: cudaGetDeviceCount reports no devices (CUDA_VISIBLE_DEVICES=%s)",
			      v ? v : "unset");
	}
	*ndev = n;
	return 0;
}

/* ---- the run's state ----------------------------------------------------------------------- */

typedef struct gctx {
	const cal_gpu_opts *o;
	char *err;
	size_t errlen;
	/* processes: one, or MPI's world */
	bool mpi;
	int rank, nranks, local_rank, local_size, node, nodes;
	int ndev; /* devices this process sees */
	int dev;  /* the device this process measures on */
	struct cudaDeviceProp prop;
	hw_db *db; /* rank 0 only */
	hw_system sys;
	cal_rec rec;
	size_t skipped_shapes;
} gctx;

static double
now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- GEMM ---------------------------------------------------------------------------------- */

typedef struct gdtype {
	hw_dtype t;
	cudaDataType_t ab, c;
	cublasComputeType_t compute;
	int min_cc; /* compute capability x 10 */
	int ab_bytes, c_bytes;
	bool ab_bf16, grid_only;
} gdtype;

/* FP32 without TF32 is 8-16x slower and rare in training: the log grid only. */
static const gdtype gemm_dtypes[] = {
	{HW_FP32, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 0, 4, 4, false, true},
	{HW_TF32, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 80, 4, 4, false, false},
	{HW_FP16, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 70, 2, 2, false, false},
	{HW_BF16, CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 80, 2, 2, true, false},
	{HW_FP8, CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 89, 1, 2, false, false},
};

/* One GEMM shape: the median time of its timed calls, or *t = 0 when cuBLASLt has no
 * algorithm for it. */
static int
gemm_time(gctx *x, cublasLtHandle_t lt, const gdtype *d, const cal_gemm_shape *s, void *A, void *B, void *C, void *ws,
	  void *flush, size_t flush_bytes, cudaStream_t st, cudaEvent_t e0, cudaEvent_t e1, double *t)
{
	int rc = 0;
	*t = 0;
	cublasLtMatmulDesc_t op = NULL;
	cublasLtMatrixLayout_t la = NULL, lb = NULL, lc = NULL;
	cublasLtMatmulPreference_t pref = NULL;
	cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
	size_t wsb = WORKSPACE_BYTES;
	BL(cublasLtMatmulDescCreate(&op, d->compute, CUDA_R_32F));
	BL(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
	BL(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
	/* C (m x n) = A^T B with A stored k x m and B k x n, column-major. */
	BL(cublasLtMatrixLayoutCreate(&la, d->ab, (uint64_t)s->k, (uint64_t)s->m, (int64_t)s->k));
	BL(cublasLtMatrixLayoutCreate(&lb, d->ab, (uint64_t)s->k, (uint64_t)s->n, (int64_t)s->k));
	BL(cublasLtMatrixLayoutCreate(&lc, d->c, (uint64_t)s->m, (uint64_t)s->n, (int64_t)s->m));
	BL(cublasLtMatmulPreferenceCreate(&pref));
	BL(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof wsb));
	cublasLtMatmulHeuristicResult_t h;
	int found = 0;
	if (cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &h, &found) != CUBLAS_STATUS_SUCCESS || found == 0)
		goto out; /* no algorithm for this shape and dtype: skipped, not an error */
	float alpha = 1.0f, beta = 0.0f;
	double t0 = now_s();
	for (int w = 0; w < 2; w++)
		BL(cublasLtMatmul(lt, op, &alpha, A, la, B, lb, &beta, C, lc, C, lc, &h.algo, ws, wsb, st));
	CU(cudaStreamSynchronize(st));
	/* About 0.1 s of timed calls per shape, 5 at least, 25 at most. */
	double warm = (now_s() - t0) / 2.0;
	int reps = (int)fmin(25.0, fmax(5.0, 0.1 / fmax(warm, 1e-9)));
	double times[25];
	for (int r = 0; r < reps; r++) {
		CU(cudaMemsetAsync(flush, r & 0xff, flush_bytes, st));
		CU(cudaEventRecord(e0, st));
		BL(cublasLtMatmul(lt, op, &alpha, A, la, B, lb, &beta, C, lc, C, lc, &h.algo, ws, wsb, st));
		CU(cudaEventRecord(e1, st));
		CU(cudaEventSynchronize(e1));
		float ms = 0;
		CU(cudaEventElapsedTime(&ms, e0, e1));
		times[r] = (double)ms * 1e-3;
	}
	*t = cal_median(times, (size_t)reps);
out:
	if (pref)
		cublasLtMatmulPreferenceDestroy(pref);
	if (lc)
		cublasLtMatrixLayoutDestroy(lc);
	if (lb)
		cublasLtMatrixLayoutDestroy(lb);
	if (la)
		cublasLtMatrixLayoutDestroy(la);
	if (op)
		cublasLtMatmulDescDestroy(op);
	return rc;
}

static int
run_gemm(gctx *x)
{
	int rc = 0;
	cal_gemm_shape *sh = NULL;
	size_t nsh = 0;
	cublasLtHandle_t lt = NULL;
	cudaStream_t st = NULL;
	cudaEvent_t e0 = NULL, e1 = NULL;
	void *A = NULL, *B = NULL, *C = NULL, *ws = NULL, *flush = NULL;
	int cc = x->prop.major * 10 + x->prop.minor;
	CHECK(cal_gemm_shapes(x->o->models, x->o->nmodels, &sh, &nsh, x->err, x->errlen));
	CU(cudaSetDevice(x->dev));
	BL(cublasLtCreate(&lt));
	CU(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
	CU(cudaEventCreate(&e0));
	CU(cudaEventCreate(&e1));
	CU(cudaMalloc(&ws, WORKSPACE_BYTES));
	size_t flush_bytes = 2 * (size_t)(x->prop.l2CacheSize > 0 ? x->prop.l2CacheSize : 64 << 20);
	CU(cudaMalloc(&flush, flush_bytes));
	for (size_t di = 0; di < sizeof gemm_dtypes / sizeof gemm_dtypes[0]; di++) {
		const gdtype *d = &gemm_dtypes[di];
		if (x->o->dtypes != 0 && !(x->o->dtypes & (1u << d->t)))
			continue;
		if (cc < d->min_cc) {
			say(x, "gemm %s: skipped (compute capability %d.%d < %d.%d)", hw_dtype_name(d->t), x->prop.major,
			    x->prop.minor, d->min_cc / 10, d->min_cc % 10);
			continue;
		}
		/* Each operand gets at most a third of the free memory; larger shapes are skipped. */
		size_t fr = 0, tot = 0;
		CU(cudaMemGetInfo(&fr, &tot));
		double third = (double)fr * 0.85 / 3.0;
		double amax = 0, bmax = 0, cmax = 0;
		size_t todo = 0;
		for (size_t i = 0; i < nsh; i++) {
			const cal_gemm_shape *s = &sh[i];
			double a = (double)s->m * s->k * d->ab_bytes, b = (double)s->k * s->n * d->ab_bytes,
			       c = (double)s->m * s->n * d->c_bytes;
			if ((d->grid_only && !(s->kinds & CAL_SHAPE_GRID)) || a > third || b > third || c > third)
				continue;
			amax = fmax(amax, a);
			bmax = fmax(bmax, b);
			cmax = fmax(cmax, c);
			todo++;
		}
		if (todo == 0)
			continue;
		CU(cudaMalloc(&A, (size_t)amax));
		CU(cudaMalloc(&B, (size_t)bmax));
		CU(cudaMalloc(&C, (size_t)cmax));
		CHECK(fill(x, A, (size_t)amax, d->ab_bytes, d->ab_bf16));
		CHECK(fill(x, B, (size_t)bmax, d->ab_bytes, d->ab_bf16));
		say(x, "gemm %s: %zu shapes", hw_dtype_name(d->t), todo);
		size_t done = 0, noalgo = 0;
		double t_start = now_s();
		for (size_t i = 0; i < nsh; i++) {
			const cal_gemm_shape *s = &sh[i];
			double a = (double)s->m * s->k * d->ab_bytes, b = (double)s->k * s->n * d->ab_bytes,
			       c = (double)s->m * s->n * d->c_bytes;
			if ((d->grid_only && !(s->kinds & CAL_SHAPE_GRID)))
				continue;
			if (a > third || b > third || c > third) {
				x->skipped_shapes++;
				continue;
			}
			CHECK(cal_rec_check(&x->rec, x->err, x->errlen));
			double t;
			CHECK(gemm_time(x, lt, d, s, A, B, C, ws, flush, flush_bytes, st, e0, e1, &t));
			if (t > 0)
				CHECK(cal_rec_gemm(&x->rec, x->dev, d->t, s->m, s->n, s->k, t, x->err, x->errlen));
			else
				noalgo++;
			if (++done % 100 == 0)
				say(x, "gemm %s: %zu/%zu shapes, %.0f s", hw_dtype_name(d->t), done, todo, now_s() - t_start);
		}
		if (noalgo > 0)
			say(x, "gemm %s: %zu shapes without a cuBLASLt algorithm", hw_dtype_name(d->t), noalgo);
		x->skipped_shapes += noalgo;
		cudaFree(A);
		cudaFree(B);
		cudaFree(C);
		A = B = C = NULL;
	}
out:
	cudaFree(A);
	cudaFree(B);
	cudaFree(C);
	cudaFree(ws);
	cudaFree(flush);
	if (e0)
		cudaEventDestroy(e0);
	if (e1)
		cudaEventDestroy(e1);
	if (st)
		cudaStreamDestroy(st);
	if (lt)
		cublasLtDestroy(lt);
	free(sh);
	return rc;
}

/* ---- HBM bandwidth ------------------------------------------------------------------------- */

static int
run_membw(gctx *x)
{
	int rc = 0;
	void *a = NULL, *b = NULL;
	cudaStream_t st = NULL;
	cudaEvent_t e0 = NULL, e1 = NULL;
	CU(cudaSetDevice(x->dev));
	CU(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
	CU(cudaEventCreate(&e0));
	CU(cudaEventCreate(&e1));
	size_t fr = 0, tot = 0;
	CU(cudaMemGetInfo(&fr, &tot));
	int64_t maxb = (int64_t)4 << 30;
	if ((double)maxb > (double)fr * 0.8 / 2.0)
		maxb = (int64_t)((double)fr * 0.8 / 2.0);
	int64_t sizes[32];
	size_t ns = cal_membw_sizes((double)x->prop.l2CacheSize, maxb, sizes, 32);
	if (ns == 0) {
		say(x, "membw: skipped (less free memory than 4 x L2)");
		goto out;
	}
	CU(cudaMalloc(&a, (size_t)sizes[ns - 1]));
	CU(cudaMalloc(&b, (size_t)sizes[ns - 1]));
	CHECK(fill(x, a, (size_t)sizes[ns - 1], 4, false));
	CHECK(fill(x, b, (size_t)sizes[ns - 1], 4, false));
	static const char *const kinds[] = {"copy", "readwrite"};
	for (int k = 0; k < 2; k++) {
#if !HAVE_NVCC
		if (k == 1) {
			say(x, "membw readwrite: skipped (built without nvcc)");
			break;
		}
#endif
		for (size_t i = 0; i < ns; i++) {
			CHECK(cal_rec_check(&x->rec, x->err, x->errlen));
			size_t n = (size_t)sizes[i];
			double times[15];
			for (int r = -2; r < 15; r++) {
				CU(cudaEventRecord(e0, st));
				if (k == 0) {
					CU(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, st));
				} else {
#if HAVE_NVCC
					CU((cudaError_t)cal_readwrite_launch(a, n, st));
#endif
				}
				CU(cudaEventRecord(e1, st));
				CU(cudaEventSynchronize(e1));
				float ms = 0;
				CU(cudaEventElapsedTime(&ms, e0, e1));
				if (r >= 0)
					times[r] = (double)ms * 1e-3;
			}
			double t = cal_median(times, 15);
			/* read + written, as BabelStream counts a copy */
			CHECK(cal_rec_membw(&x->rec, x->dev, kinds[k], 2 * (int64_t)n, t, x->err, x->errlen));
			say(x, "membw %s %zu MiB: %.0f GB/s", kinds[k], n >> 20, 2.0 * (double)n / t / 1e9);
		}
	}
out:
	cudaFree(a);
	cudaFree(b);
	if (e0)
		cudaEventDestroy(e0);
	if (e1)
		cudaEventDestroy(e1);
	if (st)
		cudaStreamDestroy(st);
	return rc;
}

/* ---- collectives --------------------------------------------------------------------------- */

static const hw_coll coll_ops[] = {HW_ALL_REDUCE, HW_ALL_GATHER, HW_REDUCE_SCATTER, HW_ALL_TO_ALL, HW_BROADCAST,
				   HW_SEND_RECV};

/* The ranks of one NCCL communicator that this process drives: all of a group's in the
 * single-process case, one under MPI. */
typedef struct cgroup {
	int n;          /* ranks in the group */
	int nodes;      /* nodes it spans */
	int nlocal;     /* ranks this process drives */
	int first_rank; /* group rank of comms[0] */
	ncclComm_t comms[MAX_GPUS];
	cudaStream_t streams[MAX_GPUS];
	int devs[MAX_GPUS];
	void *send[MAX_GPUS], *recv[MAX_GPUS];
#if HAVE_MPI
	MPI_Comm mpi; /* the group's processes (MPI_COMM_NULL in the single-process case) */
#endif
} cgroup;

/* Issues one collective on every rank this process drives (one NCCL group call). */
static ncclResult_t
issue(cgroup *g, hw_coll op, const cal_coll_layout *L)
{
	ncclResult_t r = ncclGroupStart();
	if (r != ncclSuccess)
		return r;
	for (int i = 0; i < g->nlocal && r == ncclSuccess; i++) {
		int me = g->first_rank + i;
		ncclComm_t c = g->comms[i];
		cudaStream_t s = g->streams[i];
		void *sb = g->send[i], *rb = g->recv[i];
		switch (op) {
		case HW_ALL_REDUCE:
			r = ncclAllReduce(sb, rb, (size_t)L->send_count, ncclFloat, ncclSum, c, s);
			break;
		case HW_ALL_GATHER:
			r = ncclAllGather(sb, rb, (size_t)L->send_count, ncclFloat, c, s);
			break;
		case HW_REDUCE_SCATTER:
			r = ncclReduceScatter(sb, rb, (size_t)L->recv_count, ncclFloat, ncclSum, c, s);
			break;
		case HW_BROADCAST:
			r = ncclBroadcast(sb, rb, (size_t)L->send_count, ncclFloat, 0, c, s);
			break;
		case HW_REDUCE:
			r = ncclReduce(sb, rb, (size_t)L->send_count, ncclFloat, ncclSum, 0, c, s);
			break;
		case HW_ALL_TO_ALL:
			/* As nccl-tests' alltoall_perf: a send and a receive of one chunk per peer. */
			for (int p = 0; p < g->n && r == ncclSuccess; p++) {
				size_t off = (size_t)p * (size_t)L->chunk * sizeof(float);
				r = ncclSend((char *)sb + off, (size_t)L->chunk, ncclFloat, p, c, s);
				if (r == ncclSuccess)
					r = ncclRecv((char *)rb + off, (size_t)L->chunk, ncclFloat, p, c, s);
			}
			break;
		case HW_SEND_RECV:
		default:
			/* As nccl-tests' sendrecv_perf: each rank to the next, from the previous. */
			r = ncclSend(sb, (size_t)L->send_count, ncclFloat, (me + 1) % g->n, c, s);
			if (r == ncclSuccess)
				r = ncclRecv(rb, (size_t)L->recv_count, ncclFloat, (me - 1 + g->n) % g->n, c, s);
			break;
		}
	}
	ncclResult_t e = ncclGroupEnd();
	return r != ncclSuccess ? r : e;
}

static int
sync_all(gctx *x, cgroup *g)
{
	int rc = 0;
	for (int i = 0; i < g->nlocal; i++) {
		CU(cudaSetDevice(g->devs[i]));
		CU(cudaStreamSynchronize(g->streams[i]));
		ncclResult_t ae = ncclSuccess;
		NC(ncclCommGetAsyncError(g->comms[i], &ae));
		if (ae != ncclSuccess) {
			rc = cal_nccl_err(x->err, x->errlen, x->rank, "NCCL asynchronous error", ae);
			goto out;
		}
	}
out:
	return rc;
}

/* Agrees on a status among the group's processes: the first failure (its message too) wins. */
static int
agree(gctx *x, cgroup *g, int rc)
{
#if HAVE_MPI
	if (g->mpi == MPI_COMM_NULL)
		return rc;
	int me;
	MPI_Comm_rank(g->mpi, &me);
	struct { int rc, rank; } in = {rc, me}, outv;
	MPI_Allreduce(&in, &outv, 1, MPI_2INT, MPI_MINLOC, g->mpi);
	if (outv.rc != 0) {
		char msg[512];
		pp_strlcpy(msg, x->err ? x->err : "", sizeof msg);
		MPI_Bcast(msg, sizeof msg, MPI_CHAR, outv.rank, g->mpi);
		if (x->err)
			pp_strlcpy(x->err, msg, x->errlen);
	}
	return outv.rc;
#else
	(void)x;
	(void)g;
	return rc;
#endif
}

/* Measures every op and size on a set-up group; rank 0 of the world records the rows. */
static int
measure_group(gctx *x, cgroup *g, int64_t max_bytes)
{
	int rc = 0;
	int64_t sizes[40];
	size_t ns = cal_coll_sizes(max_bytes, sizes, 40);
	say(x, "collectives on %d GPUs (%d node%s): 1 KiB .. %lld MiB", g->n, g->nodes, g->nodes == 1 ? "" : "s",
	    (long long)(sizes[ns - 1] >> 20));
	for (size_t oi = 0; oi < sizeof coll_ops / sizeof coll_ops[0]; oi++) {
		hw_coll op = coll_ops[oi];
		double peak = 0;
		for (size_t si = 0; si < ns; si++) {
			rc = cal_rec_check(&x->rec, x->err, x->errlen);
			if ((rc = agree(x, g, rc)) != 0)
				return rc;
			cal_coll_layout L;
			if (cal_coll_layout_get(op, sizes[si], g->n, (int)sizeof(float), &L) != 0)
				continue; /* fewer elements than ranks */
			/* Warm-up (and the estimate that sets the iteration count). */
			double t0 = now_s();
			ncclResult_t r = ncclSuccess;
			for (int w = 0; w < 3 && r == ncclSuccess; w++)
				r = issue(g, op, &L);
			if (r != ncclSuccess)
				rc = cal_nccl_err(x->err, x->errlen, x->rank, hw_coll_name(op), r);
			if (rc == 0)
				rc = sync_all(x, g);
			if ((rc = agree(x, g, rc)) != 0)
				return rc;
			double est = (now_s() - t0) / 3.0;
			int iters = (int)fmin(100.0, fmax(5.0, 0.1 / fmax(est, 1e-9)));
#if HAVE_MPI
			if (g->mpi != MPI_COMM_NULL) {
				MPI_Bcast(&iters, 1, MPI_INT, 0, g->mpi); /* the same count on every rank */
				MPI_Barrier(g->mpi);
			}
#endif
			t0 = now_s();
			for (int it = 0; it < iters && r == ncclSuccess; it++)
				r = issue(g, op, &L);
			if (r != ncclSuccess)
				rc = cal_nccl_err(x->err, x->errlen, x->rank, hw_coll_name(op), r);
			if (rc == 0)
				rc = sync_all(x, g);
			double t = (now_s() - t0) / iters;
			if ((rc = agree(x, g, rc)) != 0)
				return rc;
#if HAVE_MPI
			if (g->mpi != MPI_COMM_NULL) { /* nccl-tests averages the time over ranks */
				double sum = 0;
				int gn;
				MPI_Comm_size(g->mpi, &gn);
				MPI_Allreduce(&t, &sum, 1, MPI_DOUBLE, MPI_SUM, g->mpi);
				t = sum / gn;
			}
#endif
			hw_coll_row row = {.op = op, .ranks = g->n, .nodes = g->nodes, .bytes = L.bytes, .time_s = t,
					   .dtype = "float", .origin = "paraplan calibrate"};
			row.algbw_gbps = (double)L.bytes / t / 1e9;
			row.busbw_gbps = row.algbw_gbps * hw_coll_busbw_factor(op, g->n);
			peak = fmax(peak, row.busbw_gbps);
			rc = cal_rec_coll(&x->rec, &row, x->err, x->errlen);
			if ((rc = agree(x, g, rc)) != 0)
				return rc;
		}
		say(x, "  %-14s %d GPUs: peak busbw %.1f GB/s", hw_coll_name(op), g->n, peak);
	}
	return 0;
}

/* Buffers and streams for the ranks this process drives: send and receive of max_bytes each. */
static int
group_buffers(gctx *x, cgroup *g, int64_t max_bytes)
{
	int rc = 0;
	for (int i = 0; i < g->nlocal; i++) {
		CU(cudaSetDevice(g->devs[i]));
		CU(cudaStreamCreateWithFlags(&g->streams[i], cudaStreamNonBlocking));
		CU(cudaMalloc(&g->send[i], (size_t)max_bytes));
		CU(cudaMalloc(&g->recv[i], (size_t)max_bytes));
		CHECK(fill(x, g->send[i], (size_t)max_bytes, 4, false));
		CU(cudaMemset(g->recv[i], 0, (size_t)max_bytes));
	}
out:
	return rc;
}

/* After a failure the communicators are aborted, not destroyed: an operation may still be
 * waiting for a peer that gave up, and ncclCommDestroy would wait for it forever (NCCL: after
 * an error, nothing can be assumed of enqueued operations; end the communicator with
 * ncclCommAbort). */
static void
group_free(cgroup *g, bool failed)
{
	for (int i = 0; i < g->nlocal; i++) {
		cudaSetDevice(g->devs[i]);
		if (g->comms[i] && failed)
			ncclCommAbort(g->comms[i]);
		else if (g->comms[i])
			ncclCommDestroy(g->comms[i]);
		if (g->streams[i])
			cudaStreamDestroy(g->streams[i]);
		cudaFree(g->send[i]);
		cudaFree(g->recv[i]);
	}
#if HAVE_MPI
	if (g->mpi != MPI_COMM_NULL)
		MPI_Comm_free(&g->mpi);
#endif
	memset(g, 0, sizeof *g);
#if HAVE_MPI
	g->mpi = MPI_COMM_NULL; /* not 0: Open MPI's null communicator is a real object */
#endif
}

/* The largest size every device can hold twice (send and receive), a power of two. */
static int
coll_max_bytes(gctx *x, const int *devs, int n, int64_t *out)
{
	int rc = 0;
	double least = INFINITY;
	for (int i = 0; i < n; i++) {
		size_t fr = 0, tot = 0;
		CU(cudaSetDevice(devs[i]));
		CU(cudaMemGetInfo(&fr, &tot));
		least = fmin(least, (double)fr);
	}
	int64_t m = x->o->max_coll_bytes > 0 ? x->o->max_coll_bytes : (int64_t)4 << 30;
	while (m > 1024 && (double)m * 2.0 > least * 0.7)
		m /= 2;
	*out = m;
out:
	return rc;
}

/* One process, all GPUs of the node: groups of 2, 4, ... and all of them, ncclCommInitAll. */
static int
run_coll_single(gctx *x)
{
	int rc = 0;
	int sizes[16];
	size_t ng = cal_group_sizes(x->ndev > MAX_GPUS ? MAX_GPUS : x->ndev, sizes, 16);
	if (ng == 0) {
		say(x, "collectives: skipped (one GPU)");
		return 0;
	}
	cgroup g;
	memset(&g, 0, sizeof g);
#if HAVE_MPI
	g.mpi = MPI_COMM_NULL;
#endif
	for (size_t gi = 0; gi < ng; gi++) {
		int n = sizes[gi];
		g.n = n;
		g.nodes = 1;
		g.nlocal = n;
		g.first_rank = 0;
		for (int i = 0; i < n; i++)
			g.devs[i] = i;
		int64_t maxb = 0;
		CHECK(coll_max_bytes(x, g.devs, n, &maxb));
		NC(ncclCommInitAll(g.comms, n, g.devs));
		CHECK(group_buffers(x, &g, maxb));
		CHECK(measure_group(x, &g, maxb));
		group_free(&g, false);
	}
out:
	group_free(&g, rc != 0);
	return rc;
}

#if HAVE_MPI
/* Under MPI, one process per GPU: the groups of 2, 4, ... GPUs of the first node, then all
 * ranks, then one GPU per node.  Processes outside a group wait at the world barrier. */
static int
run_coll_mpi(gctx *x)
{
	int rc = 0;
	int sizes[16];
	size_t ng = cal_group_sizes(x->local_size, sizes, 16);
	struct step {
		int member, n, nodes;
	} plan[20];
	size_t np = 0;
	for (size_t i = 0; i < ng; i++)
		plan[np++] = (struct step){x->node == 0 && x->local_rank < sizes[i], sizes[i], 1};
	if (x->nodes > 1) {
		plan[np++] = (struct step){1, x->nranks, x->nodes};
		if (x->local_size > 1)
			plan[np++] = (struct step){x->local_rank == 0, x->nodes, x->nodes};
	}
	for (size_t p = 0; p < np && rc == 0; p++) {
		cgroup g;
		memset(&g, 0, sizeof g);
		g.mpi = MPI_COMM_NULL;
		MPI_Comm_split(MPI_COMM_WORLD, plan[p].member ? 0 : MPI_UNDEFINED, x->rank, &g.mpi);
		if (plan[p].member) {
			int grank;
			MPI_Comm_rank(g.mpi, &grank);
			g.n = plan[p].n;
			g.nodes = plan[p].nodes;
			g.nlocal = 1;
			g.first_rank = grank;
			g.devs[0] = x->dev;
			ncclUniqueId id;
			ncclResult_t r = ncclSuccess;
			if (grank == 0)
				r = ncclGetUniqueId(&id);
			MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, g.mpi);
			int64_t maxb = 0;
			if (r != ncclSuccess)
				rc = cal_nccl_err(x->err, x->errlen, x->rank, "ncclGetUniqueId", r);
			if (rc == 0)
				rc = coll_max_bytes(x, g.devs, 1, &maxb);
			MPI_Allreduce(MPI_IN_PLACE, &maxb, 1, MPI_INT64_T, MPI_MIN, g.mpi);
			if ((rc = agree(x, &g, rc)) == 0) {
				cudaSetDevice(x->dev);
				r = ncclCommInitRank(&g.comms[0], g.n, id, grank);
				if (r != ncclSuccess)
					rc = cal_nccl_err(x->err, x->errlen, x->rank, "ncclCommInitRank", r);
			}
			if ((rc = agree(x, &g, rc)) == 0)
				rc = agree(x, &g, group_buffers(x, &g, maxb));
			if (rc == 0)
				rc = measure_group(x, &g, maxb);
			group_free(&g, rc != 0);
		}
		/* Everyone learns how the group went, and whether Ctrl-C came anywhere. */
		struct { int rc, rank; } in = {rc, x->rank}, outv;
		MPI_Allreduce(&in, &outv, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
		if (outv.rc != 0) {
			char msg[512];
			pp_strlcpy(msg, x->err, sizeof msg);
			MPI_Bcast(msg, sizeof msg, MPI_CHAR, outv.rank, MPI_COMM_WORLD);
			pp_strlcpy(x->err, msg, x->errlen);
			rc = outv.rc;
		}
	}
	return rc;
}
#endif

/* ---- setup --------------------------------------------------------------------------------- */

/* The one system whose GPU matches this device and whose GPUs per node match the node. */
static int
guess_system(gctx *x, char *out, size_t n)
{
	char dev[256];
	size_t j = 0;
	for (const char *p = x->prop.name; *p && j + 1 < sizeof dev; p++)
		dev[j++] = (char)tolower((unsigned char)*p);
	dev[j] = '\0';
	char **names;
	size_t nn;
	int rc = hw_system_names(x->db, &names, &nn, x->err, x->errlen);
	if (rc != 0)
		return rc;
	pp_str cands = {0};
	int found = 0;
	for (size_t i = 0; i < nn; i++) {
		hw_system s;
		if (hw_system_get(x->db, names[i], &s, NULL, 0) != 0 || s.gpus_per_node != x->local_size)
			continue;
		/* The GPU's model token ("h100" of "h100-sxm") must be a word of the device name. */
		char token[48];
		pp_strlcpy(token, s.gpu.name, sizeof token);
		token[strcspn(token, "-")] = '\0';
		const char *q = strstr(dev, token);
		size_t ml = strlen(token);
		if (ml == 0 || q == NULL || (q > dev && isalnum((unsigned char)q[-1])) || isalnum((unsigned char)q[ml]))
			continue;
		if (found++ == 0)
			pp_strlcpy(out, names[i], n);
		pp_str_addf(&cands, "%s%s", cands.len ? ", " : "", names[i]);
	}
	free(names);
	if (found == 1) {
		pp_str_free(&cands);
		return 0;
	}
	rc = pp_err(x->err, x->errlen, PP_EUSAGE,
		    "cannot tell which system this is (%d x %s): give --system-name%s%s (see 'paraplan hw list')", x->local_size,
		    x->prop.name, found ? ", one of " : "", found ? cands.buf : "");
	pp_str_free(&cands);
	return rc;
}

#if HAVE_MPI
static int
mpi_setup(gctx *x)
{
	int inited = 0;
	MPI_Initialized(&inited);
	if (!inited && MPI_Init(NULL, NULL) != MPI_SUCCESS)
		return pp_err(x->err, x->errlen, PP_EIO, "MPI_Init failed");
	x->mpi = true;
	MPI_Comm_rank(MPI_COMM_WORLD, &x->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &x->nranks);
	MPI_Comm local;
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, x->rank, MPI_INFO_NULL, &local);
	MPI_Comm_rank(local, &x->local_rank);
	MPI_Comm_size(local, &x->local_size);
	int leader = x->rank;
	MPI_Bcast(&leader, 1, MPI_INT, 0, local);
	MPI_Comm_free(&local);
	int *all = malloc((size_t)x->nranks * sizeof *all);
	if (all == NULL)
		return pp_err(x->err, x->errlen, PP_ENOMEM, "out of memory");
	MPI_Allgather(&leader, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
	x->nodes = 0;
	x->node = 0;
	int minsize = x->local_size, maxsize = x->local_size;
	for (int i = 0; i < x->nranks; i++) {
		if (all[i] == i) {
			x->nodes++;
			if (i < leader)
				x->node++;
		}
	}
	free(all);
	MPI_Allreduce(MPI_IN_PLACE, &minsize, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	MPI_Allreduce(MPI_IN_PLACE, &maxsize, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (minsize != maxsize)
		return pp_err(x->err, x->errlen, PP_EUSAGE,
			      "%d to %d processes per node: run the same number on every node (one per GPU)", minsize, maxsize);
	return 0;
}
#endif

/* Launched as several tasks (mpirun, srun)? */
static int
launched_tasks(void)
{
	static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MPI_LOCALNRANKS", "SLURM_STEP_NUM_TASKS"};
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
		const char *v = getenv(vars[i]);
		if (v != NULL && atoi(v) > 0)
			return atoi(v);
	}
	if (getenv("PMIX_RANK") != NULL || getenv("PMI_RANK") != NULL)
		return 2; /* a PMI launch without a size variable: treat as MPI */
	return 1;
}

/* Any rank's failure ends every rank's run, with the failing rank's message. */
static int
world_agree(gctx *x, int rc)
{
#if HAVE_MPI
	if (!x->mpi)
		return rc;
	struct { int rc, rank; } in = {rc, x->rank}, outv;
	MPI_Allreduce(&in, &outv, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
	if (outv.rc != 0) {
		char msg[512];
		pp_strlcpy(msg, x->err, sizeof msg);
		MPI_Bcast(msg, sizeof msg, MPI_CHAR, outv.rank, MPI_COMM_WORLD);
		pp_strlcpy(x->err, msg, x->errlen);
	}
	return outv.rc;
#else
	(void)x;
	return rc;
#endif
}

int
cal_gpu_run(const cal_gpu_opts *opts, cJSON **report, bool *is_root, char *err, size_t errlen)
{
	if (report)
		*report = NULL;
	if (is_root)
		*is_root = true;
	gctx x;
	memset(&x, 0, sizeof x);
	x.o = opts;
	x.err = err;
	x.errlen = errlen;
	x.nranks = 1;
	x.local_size = 1;
	x.nodes = 1;
	unsigned what = opts->what ? opts->what : (CAL_GEMM | CAL_MEMBW | CAL_COLLECTIVES);
	int tasks = launched_tasks();
	int rc = 0;
	if (tasks > 1) {
#if HAVE_MPI
		if ((rc = mpi_setup(&x)) != 0)
			goto done;
#else
		return pp_err(err, errlen, PP_EUSAGE,
			      "launched as %d tasks, but this paraplan was built without MPI: run one process per node "
			      "without mpirun/srun, or rebuild with MPI (configure --with-mpi)",
			      tasks);
#endif
	}
	if (is_root)
		*is_root = x.rank == 0;
	/* No GPU: say so before the database is opened. */
	rc = cal_gpu_probe(&x.ndev, err, errlen);
	if (rc == 0 && x.mpi) {
		/* One GPU per process: the launcher bound one (srun --gpus-per-task=1), or each
		 * process takes the one of its local rank. */
		if (x.ndev == 1)
			x.dev = 0;
		else if (x.local_size <= x.ndev)
			x.dev = x.local_rank;
		else
			rc = pp_err(err, errlen, PP_EUSAGE, "%d processes on a node with %d GPUs: run one process per GPU",
				    x.local_size, x.ndev);
	}
	if (rc == 0 && !x.mpi)
		x.local_size = x.ndev;
	if (rc == 0) {
		cudaError_t e = cudaSetDevice(x.dev);
		if (e == cudaSuccess)
			e = cudaGetDeviceProperties(&x.prop, x.dev);
		if (e != cudaSuccess)
			rc = cal_cuda_err(x.err, x.errlen, x.rank, "cudaGetDeviceProperties", e);
	}
	if ((rc = world_agree(&x, rc)) != 0)
		goto done;

	/* Rank 0 opens the database and starts the run (one transaction). */
	char host[256] = "", system[48] = "", drv[16] = "", rt[16] = "", nccl[24] = "";
	gethostname(host, sizeof host - 1);
	int dv = 0, rv = 0, nv = 0;
	cudaDriverGetVersion(&dv);
	cudaRuntimeGetVersion(&rv);
	ncclGetVersion(&nv);
	cal_version(dv, 1000, drv, sizeof drv);
	cal_version(rv, 1000, rt, sizeof rt);
	snprintf(nccl, sizeof nccl, "%d.%d.%d", nv / 10000, nv / 100 % 100, nv % 100);
	if (x.rank == 0) {
		rc = hw_open(opts->db_path, 0, &x.db, err, errlen);
		if (rc == 0 && opts->system != NULL)
			pp_strlcpy(system, opts->system, sizeof system);
		else if (rc == 0)
			rc = guess_system(&x, system, sizeof system);
		if (rc == 0)
			rc = hw_system_get(x.db, system, &x.sys, err, errlen);
		if (rc == PP_ENOTFOUND)
			rc = PP_EUSAGE; /* an unknown --system-name is the user's to fix */
		hw_run_info info = {.system = system, .kind = "calibrate", .host = host, .driver = drv, .cuda = rt,
				    .nccl = nccl, .gpu_name = x.prop.name, .note = opts->note, .nodes = x.nodes,
				    .gpus_per_node = x.local_size};
		if (rc == 0)
			rc = cal_rec_begin(x.db, &info, &x.rec, err, errlen);
	} else {
		cal_rec_begin(NULL, NULL, &x.rec, NULL, 0);
	}
	if ((rc = world_agree(&x, rc)) != 0)
		goto done;
	say(&x, "calibrating %s: %d x %s (compute %d.%d, %.0f GiB), %d node%s, CUDA driver %s, runtime %s, NCCL %s", system,
	    x.local_size, x.prop.name, x.prop.major, x.prop.minor, (double)x.prop.totalGlobalMem / 1073741824.0, x.nodes,
	    x.nodes == 1 ? "" : "s", drv, rt, nccl);

	cal_sig_install();
	/* GEMM and HBM on one GPU (rank 0's); the other ranks wait. */
	if (x.rank == 0 && (what & CAL_GEMM))
		rc = run_gemm(&x);
	if (rc == 0 && x.rank == 0 && (what & CAL_MEMBW))
		rc = run_membw(&x);
	rc = world_agree(&x, rc);
	if (rc == 0 && (what & CAL_COLLECTIVES)) {
#if HAVE_MPI
		if (x.mpi && x.nranks > 1)
			rc = run_coll_mpi(&x);
		else
#endif
			rc = run_coll_single(&x);
	}
	rc = world_agree(&x, rc);
	/* Ctrl-C anywhere is Ctrl-C everywhere. */
	int caught = cal_sig_caught();
#if HAVE_MPI
	if (x.mpi)
		MPI_Allreduce(MPI_IN_PLACE, &caught, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
#endif
	if (rc == 0 && caught)
		rc = pp_err(err, errlen, PP_EINTR, "interrupted: the calibration run was rolled back, nothing was written");
	size_t coll = x.rec.coll, gemm = x.rec.gemm, membw = x.rec.membw;
	int64_t run_id = 0;
	int end = cal_rec_end(&x.rec, rc, &run_id, err, errlen);
	cal_sig_restore();
	rc = world_agree(&x, end);
	if (rc != 0 || x.rank != 0)
		goto done;
	say(&x, "stored run %lld: %zu GEMM, %zu bandwidth, %zu collective rows", (long long)run_id, gemm, membw, coll);

	cJSON *rep = cJSON_CreateObject();
	cJSON_AddNumberToObject(rep, "run_id", (double)run_id);
	cJSON_AddStringToObject(rep, "system", system);
	cJSON_AddStringToObject(rep, "host", host);
	cJSON_AddStringToObject(rep, "gpu_name", x.prop.name);
	cJSON_AddStringToObject(rep, "driver", drv);
	cJSON_AddStringToObject(rep, "cuda", rt);
	cJSON_AddStringToObject(rep, "nccl", nccl);
	cJSON_AddNumberToObject(rep, "nodes", x.nodes);
	cJSON_AddNumberToObject(rep, "gpus_per_node", x.local_size);
	cJSON_AddNumberToObject(rep, "gemm_rows", (double)gemm);
	cJSON_AddNumberToObject(rep, "bandwidth_rows", (double)membw);
	cJSON_AddNumberToObject(rep, "collective_rows", (double)coll);
	cJSON_AddNumberToObject(rep, "skipped_gemm_shapes", (double)x.skipped_shapes);
	if (opts->fit) {
		cJSON *fit = NULL;
		char ferr[512];
		if (cal_fit(x.db, system, run_id, &fit, ferr, sizeof ferr) == 0)
			cJSON_AddItemToObject(rep, "fit", fit);
		else {
			cJSON_Delete(fit);
			cJSON_AddStringToObject(rep, "fit_error", ferr);
		}
	}
	if (report)
		*report = rep;
	else
		cJSON_Delete(rep);
done:
	if (x.rec.run != NULL)
		hw_run_abort(x.rec.run);
	hw_close(x.db);
#if HAVE_MPI
	if (x.mpi) {
		int fin = 0;
		MPI_Finalized(&fin);
		if (!fin)
			MPI_Finalize();
	}
#endif
	return rc;
}
