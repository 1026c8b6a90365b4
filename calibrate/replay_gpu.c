/*
 * replay_gpu.c -- 'paraplan replay' on GPUs: every rank runs the launch program of its op list
 * (calibrate/replay.c lowers it) with cuBLASLt, its own kernels and NCCL, and rank 0 stores the
 * measured steps as one validation run.  Built only where configure found CUDA, cuBLASLt and
 * NCCL (gpu_none.c otherwise); host C throughout, the memory-bound kernel comes from kernels.cu
 * when nvcc was found (device-to-device copies of the same bytes otherwise).
 *
 * How a run goes:
 *   1. processes: one per GPU under mpirun or srun (MPI), or one alone for a one-GPU plan;
 *   2. rank 0 reads the plan, checks that the world has the plan's size, and every rank checks
 *      that it has a GPU (none: "no GPU found", before any database is opened);
 *   3. rank 0 opens the database, loads the model, simulates the plan with the op graph recorded
 *      and broadcasts each pipeline stage's op list; every rank takes its stage's, rebased to
 *      its own coordinates and peers, and lowers it;
 *   4. communicators: for every key of the split schedule (the same on all ranks) the ranks
 *      that use it split MPI_COMM_WORLD by the key's color, the group's first rank makes an
 *      ncclUniqueId, MPI broadcasts it, ncclCommInitRank;
 *   5. buffers sized from the program, filled with random non-zero values; one stream per
 *      simulator stream, an event per op another stream waits for;
 *   6. steps: warm-up, then timed ones: CUDA events on the compute stream around the step,
 *      every stream joined back into it at the end; a barrier between steps; per step the
 *      slowest rank's time goes to rank 0;
 *   7. rank 0 stores the run (hw_validation_store: one transaction) and reports.
 * Every CUDA, cuBLAS, NCCL and MPI call is checked; any rank's error (or Ctrl-C) is agreed on by
 * all ranks at the next agreement point and ends the run with that rank's message and nothing
 * stored.  A rank that fails or dies in the middle of a step, after its peers entered a
 * collective with it, leaves them waiting inside NCCL, as nccl-tests does; the launcher's kill
 * then leaves the database untouched (nothing is written before the end).
 */
#include "config.h"
#include "calibrate/cal_int.h"
#include "calibrate/gpu_int.h"
#include "common/pp.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WORKSPACE_BYTES ((size_t)32 << 20)

/* ---- the run's state ----------------------------------------------------------------------- */

typedef struct gshape {
	cublasLtMatmulDesc_t desc;
	cublasLtMatrixLayout_t la, lb, lc;
	cublasLtMatmulAlgo_t algo;
	bool padded; /* FP8 dimensions padded to multiples of 16 */
} gshape;

typedef struct rctx {
	const cal_replay_opts *o;
	char *err;
	size_t errlen;
	bool mpi;
	int rank, nranks, local_rank, local_size, nodes;
	int ndev, dev;
	struct cudaDeviceProp prop;
	cal_replay_plan plan;
	/* rank 0 */
	hw_db *db;
	model *m;
	hw_cost *cost;
	hw_profile *fw;        /* the plan's framework, which res points to */
	sim_train_result *res;
	/* every rank */
	sim_rank_ops *ops;
	cal_replay_prog *prog;
	cudaStream_t streams[SIM_NSTREAMS];
	cudaEvent_t *events;
	cudaEvent_t join[SIM_NSTREAMS], begin, t0, t1;
	cublasLtHandle_t lt;
	gshape *shapes;
	void *ws;
	void **slots;          /* weight buffers: the weight, then its gradient */
	void *operand[3][3];   /* per input element size: A, B, C */
	void *ring;
	ncclComm_t *comms;
	void **sendbuf, **recvbuf;
	bool used[SIM_NSTREAMS];
	double *step_s;        /* this rank's timed steps */
} rctx;


/* ---- agreement among ranks ------------------------------------------------------------------ */

/* Any rank's failure is every rank's, with the failing rank's message (the lowest failing
 * rank's when several fail). */
static int
agree(rctx *x, int rc)
{
#if HAVE_MPI
	if (!x->mpi)
		return rc;
	/* error codes are negative: MINLOC picks the failure, and the lowest rank among equals */
	struct { int rc, rank; } in = {rc, x->rank}, outv;
	MPI_Allreduce(&in, &outv, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
	if (outv.rc != 0) {
		char msg[1024] = "";
		if (x->err != NULL)
			pp_strlcpy(msg, x->err, sizeof msg);
		MPI_Bcast(msg, sizeof msg, MPI_CHAR, outv.rank, MPI_COMM_WORLD);
		if (x->err != NULL)
			pp_strlcpy(x->err, msg, x->errlen);
	}
	return outv.rc;
#else
	(void)x;
	return rc;
#endif
}

#if HAVE_MPI
static int
mpi_setup(rctx *x)
{
	int inited = 0;
	MPI_Initialized(&inited);
	if (!inited && MPI_Init(NULL, NULL) != MPI_SUCCESS)
		return pp_err(x->err, x->errlen, PP_EIO, "MPI_Init failed");
	x->mpi = true;
	MPI_Comm_rank(MPI_COMM_WORLD, &x->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &x->nranks);
	MPI_Comm local;
	if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, x->rank, MPI_INFO_NULL, &local) != MPI_SUCCESS)
		return pp_err(x->err, x->errlen, PP_EIO, "rank %d: MPI_Comm_split_type failed", x->rank);
	MPI_Comm_rank(local, &x->local_rank);
	MPI_Comm_size(local, &x->local_size);
	int leader = x->rank;
	MPI_Bcast(&leader, 1, MPI_INT, 0, local);
	MPI_Comm_free(&local);
	int is_leader = leader == x->rank;
	MPI_Allreduce(&is_leader, &x->nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	return 0;
}
#endif

/* ---- setup --------------------------------------------------------------------------------- */

static int
pick_device(rctx *x)
{
	int rc = cal_gpu_probe(&x->ndev, x->err, x->errlen);
	if (rc != 0)
		return rc;
	switch (x->o->devsel) {
	case CAL_DEV_FIRST:
		x->dev = 0;
		break;
	case CAL_DEV_LOCAL:
		if (x->local_rank >= x->ndev)
			return pp_err(x->err, x->errlen, PP_EUSAGE,
				      "rank %d is local rank %d but sees %d GPU%s: run one process per GPU (--rank-config)", x->rank,
				      x->local_rank, x->ndev, x->ndev == 1 ? "" : "s");
		x->dev = x->local_rank;
		break;
	case CAL_DEV_AUTO:
	default:
		if (x->ndev == 1)
			x->dev = 0;
		else if (x->local_size <= x->ndev)
			x->dev = x->local_rank;
		else
			return pp_err(x->err, x->errlen, PP_EUSAGE, "%d processes on a node with %d GPUs: run one process per GPU",
				      x->local_size, x->ndev);
		break;
	}
	cudaError_t e = cudaSetDevice(x->dev);
	if (e == cudaSuccess)
		e = cudaGetDeviceProperties(&x->prop, x->dev);
	if (e != cudaSuccess)
		return cal_cuda_err(x->err, x->errlen, x->rank, "cudaSetDevice", e);
	return 0;
}

/* Rank 0: the model, the cost model, the simulation with the op graph recorded. */
static int
simulate(rctx *x)
{
	char *err = x->err;
	size_t errlen = x->errlen;
	int rc = hw_open(x->o->db_path, 0, &x->db, err, errlen);
	if (rc != 0)
		return rc;
	if ((rc = model_load(x->plan.model, &x->m, err, errlen)) != 0) {
		char msg[768];
		pp_strlcpy(msg, err, sizeof msg);
		return pp_err(err, errlen, rc == PP_ENOTFOUND ? PP_EUSAGE : rc, "the plan's model \"%s\": %s (give --model PATH)",
			      x->plan.model, msg);
	}
	if ((rc = hw_cost_new(x->db, x->plan.system, &x->cost, err, errlen)) != 0)
		return rc == PP_ENOTFOUND ? PP_EUSAGE : rc;
	return cal_replay_simulate(x->db, x->m, x->cost, &x->plan, &x->fw, &x->res, err, errlen);
}

/* Rank 0's stage lists to every rank; each keeps its stage's, rebased to itself. */
static int
share_ops(rctx *x)
{
	const sim_train_cfg *c = &x->plan.cfg;
	int stride = c->tp * c->cp * c->dp, p = c->pp, rc = 0;
	int mystage = x->rank / stride;
	for (int s = 0; s < p; s++) {
		void *buf = NULL;
		size_t len = 0;
		sim_rank_ops *o = NULL;
		if (x->rank == 0) {
			rc = sim_train_rank_ops(x->res, s * stride, &o, x->err, x->errlen);
			if (rc == 0 && cal_replay_pack(o, &buf, &len) != 0)
				rc = pp_err(x->err, x->errlen, PP_ENOMEM, "out of memory");
			if (s == mystage && rc == 0) {
				x->ops = o;
				o = NULL;
			}
			sim_rank_ops_free(o);
		}
		if ((rc = agree(x, rc)) != 0) {
			free(buf);
			return rc;
		}
#if HAVE_MPI
		if (x->mpi) {
			uint64_t n = len;
			MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
			if (x->rank != 0) {
				buf = malloc(n ? n : 1);
				len = n;
				rc = buf == NULL ? pp_err(x->err, x->errlen, PP_ENOMEM, "out of memory") : 0;
			}
			if ((rc = agree(x, rc)) != 0) {
				free(buf);
				return rc;
			}
			/* in pieces: MPI counts are int */
			for (uint64_t off = 0; off < n; off += (uint64_t)1 << 30) {
				uint64_t k = n - off < ((uint64_t)1 << 30) ? n - off : (uint64_t)1 << 30;
				MPI_Bcast((char *)buf + off, (int)k, MPI_BYTE, 0, MPI_COMM_WORLD);
			}
			if (x->rank != 0 && s == mystage)
				rc = cal_replay_unpack(buf, len, &x->ops, x->err, x->errlen);
		}
#endif
		free(buf);
		if ((rc = agree(x, rc)) != 0)
			return rc;
	}
	cal_replay_rebase(x->ops, c, x->rank);
	return 0;
}

/* The element size and type of the values a buffer of input size `set` holds. */
static void
set_type(const rctx *x, int set, int *elsz, bool *bf16)
{
	*elsz = set == 0 ? 1 : set == 1 ? 2 : 4;
	*bf16 = x->plan.cfg.dtype != HW_FP16;
}

static cudaDataType_t
cuda_type(hw_dtype t, bool out)
{
	switch (t) {
	case HW_FP8: return out ? CUDA_R_16BF : CUDA_R_8F_E4M3;
	case HW_FP16: return CUDA_R_16F;
	case HW_FP32:
	case HW_TF32: return CUDA_R_32F;
	case HW_BF16:
	default: return CUDA_R_16BF;
	}
}

/* cuBLASLt descriptors and the heuristic's first algorithm for every shape: C (m x n) = A^T B
 * with A stored k x m and B k x n, column-major ("TN", as FP8 requires and as calibration
 * measures), strided over the batch. */
static int
make_shapes(rctx *x)
{
	int rc = 0;
	const cal_replay_prog *p = x->prog;
	cublasLtMatmulPreference_t pref = NULL;
	size_t wsb = WORKSPACE_BYTES;
	BL(cublasLtCreate(&x->lt));
	BL(cublasLtMatmulPreferenceCreate(&pref));
	BL(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof wsb));
	x->shapes = calloc(p->nshapes ? p->nshapes : 1, sizeof *x->shapes);
	if (x->shapes == NULL) {
		rc = pp_err(x->err, x->errlen, PP_ENOMEM, "out of memory");
		goto out;
	}
	size_t padded = 0;
	for (size_t i = 0; i < p->nshapes; i++) {
		const cal_shape *s = &p->shapes[i];
		gshape *g = &x->shapes[i];
		cublasComputeType_t ct = s->dtype == HW_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
		cudaDataType_t ab = cuda_type(s->dtype, false), cd = cuda_type(s->dtype, true);
		cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
		BL(cublasLtMatmulDescCreate(&g->desc, ct, CUDA_R_32F));
		BL(cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
		BL(cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
		/* the shape as it is; an FP8 shape cuBLASLt has no algorithm for, padded */
		for (int attempt = 0; attempt < 2; attempt++) {
			int64_t m = s->m, n = s->n, k = s->k;
			if (attempt == 1) {
				if (s->dtype != HW_FP8)
					break;
				m = cal_replay_buffer_dim(s->dtype, m);
				n = cal_replay_buffer_dim(s->dtype, n);
				k = cal_replay_buffer_dim(s->dtype, k);
				cublasLtMatrixLayoutDestroy(g->la);
				cublasLtMatrixLayoutDestroy(g->lb);
				cublasLtMatrixLayoutDestroy(g->lc);
				g->la = g->lb = g->lc = NULL;
			}
			BL(cublasLtMatrixLayoutCreate(&g->la, ab, (uint64_t)k, (uint64_t)m, k));
			BL(cublasLtMatrixLayoutCreate(&g->lb, ab, (uint64_t)k, (uint64_t)n, k));
			BL(cublasLtMatrixLayoutCreate(&g->lc, cd, (uint64_t)m, (uint64_t)n, m));
			if (s->batch > 1) {
				int32_t bc = (int32_t)s->batch;
				int64_t sa = k * m, sb = k * n, sc = m * n;
				BL(cublasLtMatrixLayoutSetAttribute(g->la, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &bc, sizeof bc));
				BL(cublasLtMatrixLayoutSetAttribute(g->lb, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &bc, sizeof bc));
				BL(cublasLtMatrixLayoutSetAttribute(g->lc, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &bc, sizeof bc));
				BL(cublasLtMatrixLayoutSetAttribute(g->la, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sa, sizeof sa));
				BL(cublasLtMatrixLayoutSetAttribute(g->lb, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sb, sizeof sb));
				BL(cublasLtMatrixLayoutSetAttribute(g->lc, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sc, sizeof sc));
			}
			cublasLtMatmulHeuristicResult_t h;
			int found = 0;
			cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(x->lt, g->desc, g->la, g->lb, g->lc, g->lc, pref, 1, &h,
									   &found);
			if (st == CUBLAS_STATUS_SUCCESS && found > 0) {
				g->algo = h.algo;
				g->padded = attempt == 1;
				padded += g->padded;
				break;
			}
			if (attempt == 1 || s->dtype != HW_FP8) {
				rc = pp_err(x->err, x->errlen, PP_EIO,
					    "rank %d: cuBLASLt has no algorithm for a %s GEMM of %lld x %lld x %lld (batch %lld) on %s",
					    x->rank, hw_dtype_name(s->dtype), (long long)s->m, (long long)s->n, (long long)s->k,
					    (long long)s->batch, x->prop.name);
				goto out;
			}
		}
	}
	if (padded > 0)
		say(x, "%zu FP8 GEMM shapes run padded to multiples of 16 (cuBLASLt has no algorithm for them as they are)",
		    padded);
out:
	if (pref)
		cublasLtMatmulPreferenceDestroy(pref);
	return rc;
}

/* Where a weight buffer's gradient starts: past the weight, rounded up to 256 bytes.  The
 * cuBLASLt heuristic picks its algorithm assuming every matrix pointer is 256-byte aligned (the
 * default of CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*_BYTES); cublasLtMatmul with a C less aligned
 * than its algorithm needs fails (CUBLAS_STATUS_NOT_SUPPORTED), and a weight of, say,
 * 1600 x 50257 bf16 elements ends on a 128-byte boundary. */
static int64_t
grad_offset(int64_t weight_bytes)
{
	return (weight_bytes + 255) / 256 * 256;
}

/* Device buffers sized from the program, filled with random non-zero values. */
static int
make_buffers(rctx *x)
{
	int rc = 0;
	cal_replay_prog *p = x->prog;
	size_t fr = 0, tot = 0;
	CU(cudaMemGetInfo(&fr, &tot));
	int64_t other = cal_replay_other_bytes(p) + (int64_t)WORKSPACE_BYTES;
	/* NCCL's own buffers and cuBLASLt's kernels need room too: keep a tenth free */
	int64_t budget = (int64_t)((double)fr * 0.9) - other;
	int64_t wbytes = cal_replay_place_weights(p, budget > 0 ? budget : 0);
	if (wbytes + other > (int64_t)((double)fr * 0.9)) {
		rc = pp_err(x->err, x->errlen, PP_ERANGE,
			    "rank %d needs %.2f GiB of GPU memory for the replay (weights %.2f GiB, operands and NCCL buffers %.2f "
			    "GiB); %s has %.2f GiB free",
			    x->rank, (double)(wbytes + other) / 1073741824.0, (double)wbytes / 1073741824.0,
			    (double)other / 1073741824.0, x->prop.name, (double)fr / 1073741824.0);
		goto out;
	}
	if (p->nslots < (int)p->nweights)
		say(x, "the %zu weights of a rank do not fit beside the rest: they share %d buffers of %.0f MiB", p->nweights,
		    p->nslots, (double)p->slot_bytes / 1048576.0);
	CU(cudaMalloc(&x->ws, WORKSPACE_BYTES));
	x->slots = calloc(p->nslots > 0 ? (size_t)p->nslots : 1, sizeof *x->slots);
	if (x->slots == NULL) {
		rc = pp_err(x->err, x->errlen, PP_ENOMEM, "out of memory");
		goto out;
	}
	int wset = cal_replay_in_bytes(x->plan.cfg.dtype) == 1 ? 0 : cal_replay_in_bytes(x->plan.cfg.dtype) == 2 ? 1 : 2;
	for (int i = 0; i < p->nslots; i++) {
		int64_t b = p->nslots < (int)p->nweights ? p->slot_bytes : p->weights[i].bytes;
		int elsz;
		bool bf16;
		set_type(x, wset, &elsz, &bf16);
		CU(cudaMalloc(&x->slots[i], (size_t)(grad_offset(b) + b)));
		CHECK(fill(x, x->slots[i], (size_t)(grad_offset(b) + b), elsz, bf16));
	}
	for (int set = 0; set < 3; set++)
		for (int w = 0; w < 3; w++) {
			int64_t b = p->operand_bytes[set][w];
			if (b <= 0)
				continue;
			int elsz;
			bool bf16;
			set_type(x, set, &elsz, &bf16);
			CU(cudaMalloc(&x->operand[set][w], (size_t)b));
			CHECK(fill(x, x->operand[set][w], (size_t)b, elsz, bf16));
		}
	if (p->nmem > 0) {
		CU(cudaMalloc(&x->ring, (size_t)CAL_REPLAY_MEM_RING_BYTES));
		CHECK(fill(x, x->ring, (size_t)CAL_REPLAY_MEM_RING_BYTES, 4, false));
	}
	x->sendbuf = calloc(p->ncomms ? p->ncomms : 1, sizeof *x->sendbuf);
	x->recvbuf = calloc(p->ncomms ? p->ncomms : 1, sizeof *x->recvbuf);
	if (x->sendbuf == NULL || x->recvbuf == NULL) {
		rc = pp_err(x->err, x->errlen, PP_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < p->ncomms; i++) {
		const cal_comm *c = &p->comms[i];
		int elsz = 2;
		for (size_t l = 0; l < p->nlaunches; l++)
			if (p->launches[l].comm == (int32_t)i)
				elsz = p->launches[l].elem;
		if (c->send_bytes > 0) {
			CU(cudaMalloc(&x->sendbuf[i], (size_t)c->send_bytes));
			CHECK(fill(x, x->sendbuf[i], (size_t)c->send_bytes, elsz == 4 ? 4 : elsz == 1 ? 1 : 2, true));
		}
		if (c->recv_bytes > 0) {
			CU(cudaMalloc(&x->recvbuf[i], (size_t)c->recv_bytes));
			CU(cudaMemset(x->recvbuf[i], 0, (size_t)c->recv_bytes));
		}
	}
	say(x, "buffers: %.2f GiB of weights in %d buffer%s, %.2f GiB of operands, memory ring and NCCL buffers",
	    (double)wbytes / 1073741824.0, p->nslots, p->nslots == 1 ? "" : "s", (double)other / 1073741824.0);
out:
	return rc;
}

/* Communicators: the split schedule, key by key, on every rank in the same order. */
static int
make_comms(rctx *x)
{
	int rc = 0;
	cal_replay_prog *p = x->prog;
	cal_split_key *keys = NULL;
	size_t nkeys = 0;
	int *mine = NULL, *used = NULL;
	x->comms = calloc(p->ncomms ? p->ncomms : 1, sizeof *x->comms);
	if (x->comms == NULL || cal_replay_split_keys(&x->plan.cfg, &keys, &nkeys) != 0) {
		rc = pp_err(x->err, x->errlen, PP_ENOMEM, "out of memory");
		return agree(x, rc);
	}
	mine = malloc((nkeys ? nkeys : 1) * sizeof *mine);
	used = malloc((nkeys ? nkeys : 1) * sizeof *used);
	if (mine == NULL || used == NULL)
		rc = pp_err(x->err, x->errlen, PP_ENOMEM, "out of memory");
	for (size_t k = 0; rc == 0 && k < nkeys; k++) {
		mine[k] = -1;
		for (size_t i = 0; i < p->ncomms; i++)
			if (p->comms[i].key == (int)k)
				mine[k] = (int)i;
		used[k] = mine[k] >= 0;
	}
	if ((rc = agree(x, rc)) != 0)
		goto done;
	if (!x->mpi) {
		if (p->ncomms > 0)
			rc = pp_err(x->err, x->errlen, PP_EUSAGE, "the plan communicates across ranks: launch it under mpirun or srun");
		goto done;
	}
#if HAVE_MPI
	MPI_Allreduce(MPI_IN_PLACE, used, (int)nkeys, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	for (size_t k = 0; k < nkeys && rc == 0; k++) {
		if (!used[k])
			continue;
		const cal_comm *c = mine[k] >= 0 ? &p->comms[mine[k]] : NULL;
		MPI_Comm sub = MPI_COMM_NULL;
		if (MPI_Comm_split(MPI_COMM_WORLD, c ? c->color : MPI_UNDEFINED, x->rank, &sub) != MPI_SUCCESS)
			rc = pp_err(x->err, x->errlen, PP_EIO, "rank %d: MPI_Comm_split failed", x->rank);
		ncclUniqueId id;
		memset(&id, 0, sizeof id);
		if (rc == 0 && c != NULL) {
			int n = 0, me = -1;
			MPI_Comm_size(sub, &n);
			MPI_Comm_rank(sub, &me);
			if (n != c->size || me != c->me)
				rc = pp_err(x->err, x->errlen, PP_EINPUT,
					    "rank %d: the %s communicator of stream %s has %d members where the op list expects %d "
					    "(the ranks' op lists disagree)",
					    x->rank, sim_group_name(c->group), sim_stream_name(c->stream), n, c->size);
			ncclResult_t r = ncclSuccess;
			if (rc == 0 && me == 0)
				r = ncclGetUniqueId(&id);
			if (r != ncclSuccess)
				rc = cal_nccl_err(x->err, x->errlen, x->rank, "ncclGetUniqueId", r);
		}
		/* the world learns whether the splits and ids went well before anyone blocks in NCCL */
		if ((rc = agree(x, rc)) != 0) {
			if (sub != MPI_COMM_NULL)
				MPI_Comm_free(&sub);
			break;
		}
		if (c != NULL) {
			MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, sub);
			ncclResult_t r = ncclCommInitRank(&x->comms[mine[k]], c->size, id, c->me);
			if (r != ncclSuccess)
				rc = cal_nccl_err(x->err, x->errlen, x->rank, "ncclCommInitRank", r);
			MPI_Comm_free(&sub);
		}
		rc = agree(x, rc);
	}
#endif
done:
	free(keys);
	free(mine);
	free(used);
	return agree(x, rc);
}

static int
make_streams(rctx *x)
{
	int rc = 0;
	const cal_replay_prog *p = x->prog;
	for (size_t i = 0; i < p->npops; i++)
		x->used[p->pops[i].stream] = true;
	x->used[SIM_S_COMPUTE] = true;
	for (int s = 0; s < SIM_NSTREAMS; s++) {
		if (!x->used[s])
			continue;
		CU(cudaStreamCreateWithFlags(&x->streams[s], cudaStreamNonBlocking));
		CU(cudaEventCreateWithFlags(&x->join[s], cudaEventDisableTiming));
	}
	CU(cudaEventCreateWithFlags(&x->begin, cudaEventDisableTiming));
	CU(cudaEventCreate(&x->t0));
	CU(cudaEventCreate(&x->t1));
	x->events = calloc(p->nevents > 0 ? (size_t)p->nevents : 1, sizeof *x->events);
	if (x->events == NULL) {
		rc = pp_err(x->err, x->errlen, PP_ENOMEM, "out of memory");
		goto out;
	}
	for (int e = 0; e < p->nevents; e++)
		CU(cudaEventCreateWithFlags(&x->events[e], cudaEventDisableTiming));
out:
	return rc;
}

/* ---- one step ------------------------------------------------------------------------------ */

static ncclDataType_t
nccl_type(int elem)
{
	return elem == 4 ? ncclFloat32 : elem == 1 ? ncclUint8 : ncclBfloat16;
}

static int
run_launch(rctx *x, const cal_launch *l, cudaStream_t st, int64_t *ring_off)
{
	int rc = 0;
	const cal_replay_prog *p = x->prog;
	switch (l->kind) {
	case CAL_L_GEMM: {
		const cal_shape *s = &p->shapes[l->shape];
		const gshape *g = &x->shapes[l->shape];
		int set = cal_replay_in_bytes(s->dtype) == 1 ? 0 : cal_replay_in_bytes(s->dtype) == 2 ? 1 : 2;
		void *A = x->operand[set][0], *B = x->operand[set][1], *C = x->operand[set][2];
		if (l->weight >= 0) {
			const cal_weight *w = &p->weights[l->weight];
			int64_t wb = p->nslots < (int)p->nweights ? p->slot_bytes : w->bytes;
			char *base = x->slots[w->slot];
			if (l->weight_out)
				C = base + grad_offset(wb); /* the weight's gradient */
			else
				B = base;
		}
		float alpha = 1.0f, beta = 0.0f;
		BL(cublasLtMatmul(x->lt, g->desc, &alpha, A, g->la, B, g->lb, &beta, C, g->lc, C, g->lc, &g->algo, x->ws,
				  WORKSPACE_BYTES, st));
		break;
	}
	case CAL_L_MEM: {
		/* read and write half the bytes each, over the next region of the ring (several
		 * passes over all of it for a kernel moving more than the ring holds) */
		int64_t half = l->bytes / 2, ring = CAL_REPLAY_MEM_RING_BYTES;
		half = (half + 15) / 16 * 16;
		if (half < 16)
			half = 16;
		while (half > 0) {
#if HAVE_NVCC
			int64_t n = half < ring ? half : ring;
			if (*ring_off + n > ring)
				*ring_off = 0;
			CU((cudaError_t)cal_readwrite_launch((char *)x->ring + *ring_off, (size_t)n, st));
#else
			/* a device copy reads n and writes n: the two halves of the ring */
			int64_t n = half < ring / 2 ? half : ring / 2;
			if (*ring_off + n > ring / 2)
				*ring_off = 0;
			CU(cudaMemcpyAsync((char *)x->ring + ring / 2 + *ring_off, (char *)x->ring + *ring_off, (size_t)n,
					   cudaMemcpyDeviceToDevice, st));
#endif
			*ring_off += n;
			half -= n;
		}
		break;
	}
	case CAL_L_COLL: {
		ncclComm_t c = x->comms[l->comm];
		void *sb = x->sendbuf[l->comm], *rb = x->recvbuf[l->comm];
		ncclDataType_t t = nccl_type(l->elem);
		switch (l->coll) {
		case HW_ALL_REDUCE:
			NC(ncclAllReduce(sb, rb, (size_t)l->count, t, ncclSum, c, st));
			break;
		case HW_ALL_GATHER:
			NC(ncclAllGather(sb, rb, (size_t)l->count, t, c, st));
			break;
		case HW_REDUCE_SCATTER:
			NC(ncclReduceScatter(sb, rb, (size_t)l->count, t, ncclSum, c, st));
			break;
		default:
			rc = pp_err(x->err, x->errlen, PP_EINPUT, "rank %d: a %s in the program", x->rank, hw_coll_name(l->coll));
			goto out;
		}
		break;
	}
	case CAL_L_ALLTOALL: {
		/* as nccl-tests' alltoall_perf: a send and a receive of one chunk per member */
		const cal_comm *cm = &p->comms[l->comm];
		ncclComm_t c = x->comms[l->comm];
		char *sb = x->sendbuf[l->comm], *rb = x->recvbuf[l->comm];
		size_t chunk = (size_t)l->count * (size_t)l->elem;
		NC(ncclGroupStart());
		for (int q = 0; q < cm->size; q++) {
			ncclResult_t r = ncclSend(sb + (size_t)q * chunk, (size_t)l->count, nccl_type(l->elem), q, c, st);
			if (r == ncclSuccess)
				r = ncclRecv(rb + (size_t)q * chunk, (size_t)l->count, nccl_type(l->elem), q, c, st);
			if (r != ncclSuccess) {
				ncclGroupEnd();
				rc = cal_nccl_err(x->err, x->errlen, x->rank, "ncclSend/ncclRecv (all-to-all)", r);
				goto out;
			}
		}
		NC(ncclGroupEnd());
		break;
	}
	case CAL_L_RING: {
		const cal_comm *cm = &p->comms[l->comm];
		ncclComm_t c = x->comms[l->comm];
		int next = (cm->me + 1) % cm->size, prev = (cm->me + cm->size - 1) % cm->size;
		for (int k = 0; k < l->steps; k++) {
			NC(ncclGroupStart());
			ncclResult_t r = ncclSend(x->sendbuf[l->comm], (size_t)l->count, nccl_type(l->elem), next, c, st);
			if (r == ncclSuccess)
				r = ncclRecv(x->recvbuf[l->comm], (size_t)l->count, nccl_type(l->elem), prev, c, st);
			if (r != ncclSuccess) {
				ncclGroupEnd();
				rc = cal_nccl_err(x->err, x->errlen, x->rank, "ncclSend/ncclRecv (ring)", r);
				goto out;
			}
			NC(ncclGroupEnd());
		}
		break;
	}
	case CAL_L_SEND:
		NC(ncclSend(x->sendbuf[l->comm], (size_t)l->count, nccl_type(l->elem), l->peer, x->comms[l->comm], st));
		break;
	case CAL_L_RECV:
		NC(ncclRecv(x->recvbuf[l->comm], (size_t)l->count, nccl_type(l->elem), l->peer, x->comms[l->comm], st));
		break;
	}
out:
	return rc;
}

/* Issues one step: the ops in launch order, each stream waiting where the schedule makes it,
 * between events on the compute stream that time it. */
static int
run_step(rctx *x, double *seconds)
{
	int rc = 0;
	const cal_replay_prog *p = x->prog;
	cudaStream_t comp = x->streams[SIM_S_COMPUTE];
	int64_t ring_off = 0;
	CU(cudaEventRecord(x->t0, comp));
	CU(cudaEventRecord(x->begin, comp));
	for (int s = 0; s < SIM_NSTREAMS; s++)
		if (x->used[s] && s != SIM_S_COMPUTE)
			CU(cudaStreamWaitEvent(x->streams[s], x->begin, 0));
	for (size_t i = 0; i < p->npops; i++) {
		const cal_pop *q = &p->pops[i];
		cudaStream_t st = x->streams[q->stream];
		for (size_t w = q->w0; w < q->w0 + q->nw; w++)
			CU(cudaStreamWaitEvent(st, x->events[p->waits[w]], 0));
		for (size_t l = q->l0; l < q->l0 + q->nl; l++)
			CHECK(run_launch(x, &p->launches[l], st, &ring_off));
		if (q->event >= 0)
			CU(cudaEventRecord(x->events[q->event], st));
	}
	for (int s = 0; s < SIM_NSTREAMS; s++)
		if (x->used[s] && s != SIM_S_COMPUTE) {
			CU(cudaEventRecord(x->join[s], x->streams[s]));
			CU(cudaStreamWaitEvent(comp, x->join[s], 0));
		}
	CU(cudaEventRecord(x->t1, comp));
	CU(cudaEventSynchronize(x->t1));
	float ms = 0;
	CU(cudaEventElapsedTime(&ms, x->t0, x->t1));
	*seconds = (double)ms * 1e-3;
	for (size_t i = 0; i < p->ncomms; i++) {
		ncclResult_t ar = ncclSuccess;
		NC(ncclCommGetAsyncError(x->comms[i], &ar));
		if (ar != ncclSuccess) {
			rc = cal_nccl_err(x->err, x->errlen, x->rank, "a collective of the step", ar);
			goto out;
		}
	}
out:
	return rc;
}

/* ---- teardown ------------------------------------------------------------------------------ */

/* After a failure the communicators are aborted, not destroyed: a collective of the step may
 * still wait for a rank that gave up, and ncclCommDestroy would wait with it (NCCL: after an
 * error, end a communicator with ncclCommAbort). */
static void
release(rctx *x, bool failed)
{
	cal_replay_prog *p = x->prog;
	if (p != NULL) {
		if (x->comms)
			for (size_t i = 0; i < p->ncomms; i++) {
				if (x->comms[i] && failed)
					ncclCommAbort(x->comms[i]);
				else if (x->comms[i])
					ncclCommDestroy(x->comms[i]);
			}
		if (x->sendbuf)
			for (size_t i = 0; i < p->ncomms; i++)
				cudaFree(x->sendbuf[i]);
		if (x->recvbuf)
			for (size_t i = 0; i < p->ncomms; i++)
				cudaFree(x->recvbuf[i]);
		if (x->slots)
			for (int i = 0; i < p->nslots; i++)
				cudaFree(x->slots[i]);
		if (x->events)
			for (int e = 0; e < p->nevents; e++)
				if (x->events[e])
					cudaEventDestroy(x->events[e]);
		if (x->shapes)
			for (size_t i = 0; i < p->nshapes; i++) {
				gshape *g = &x->shapes[i];
				if (g->la)
					cublasLtMatrixLayoutDestroy(g->la);
				if (g->lb)
					cublasLtMatrixLayoutDestroy(g->lb);
				if (g->lc)
					cublasLtMatrixLayoutDestroy(g->lc);
				if (g->desc)
					cublasLtMatmulDescDestroy(g->desc);
			}
	}
	for (int set = 0; set < 3; set++)
		for (int w = 0; w < 3; w++)
			cudaFree(x->operand[set][w]);
	cudaFree(x->ring);
	cudaFree(x->ws);
	for (int s = 0; s < SIM_NSTREAMS; s++) {
		if (x->join[s])
			cudaEventDestroy(x->join[s]);
		if (x->streams[s])
			cudaStreamDestroy(x->streams[s]);
	}
	if (x->begin)
		cudaEventDestroy(x->begin);
	if (x->t0)
		cudaEventDestroy(x->t0);
	if (x->t1)
		cudaEventDestroy(x->t1);
	if (x->lt)
		cublasLtDestroy(x->lt);
	free(x->comms);
	free(x->sendbuf);
	free(x->recvbuf);
	free(x->slots);
	free(x->events);
	free(x->shapes);
	free(x->step_s);
	cal_replay_prog_free(x->prog);
	sim_rank_ops_free(x->ops);
	sim_train_result_free(x->res);
	hw_profile_free(x->fw);
	hw_cost_free(x->cost);
	model_free(x->m);
	hw_close(x->db);
}

/* ---- the run ------------------------------------------------------------------------------- */

int
cal_replay_run(const cal_replay_opts *o, cJSON **report, bool *is_root, char *err, size_t errlen)
{
	if (report)
		*report = NULL;
	if (is_root)
		*is_root = true;
	rctx x;
	memset(&x, 0, sizeof x);
	x.o = o;
	x.err = err;
	x.errlen = errlen;
	x.nranks = 1;
	x.local_size = 1;
	x.nodes = 1;
	int steps = o->steps > 0 ? o->steps : 10, warmup = o->warmup >= 0 ? o->warmup : 3;
	int tasks = 1, rc = 0;
	cal_launched_tasks(&tasks, NULL);
	if (tasks > 1) {
#if HAVE_MPI
		if ((rc = mpi_setup(&x)) != 0)
			return rc;
#else
		return pp_err(err, errlen, PP_EUSAGE,
			      "launched as %d tasks, but this paraplan was built without MPI: rebuild with MPI (configure "
			      "--with-mpi) to replay a plan across processes",
			      tasks);
#endif
	}
	if (is_root)
		*is_root = x.rank == 0;

	/* 1. the plan (rank 0 reads it; everyone gets it) and the world's size */
	if (x.rank == 0) {
		if (o->plan != NULL)
			x.plan = *o->plan;
		else if (o->plan_path != NULL)
			rc = cal_replay_plan_read(o->plan_path, &x.plan, err, errlen);
		else
			rc = pp_err(err, errlen, PP_EUSAGE, "no plan to replay");
		if (rc == 0 && o->model != NULL && !pp_strlcpy(x.plan.model, o->model, sizeof x.plan.model))
			rc = pp_err(err, errlen, PP_EUSAGE, "--model is too long");
	}
	if ((rc = agree(&x, rc)) != 0)
		goto done;
#if HAVE_MPI
	if (x.mpi)
		MPI_Bcast(&x.plan, sizeof x.plan, MPI_BYTE, 0, MPI_COMM_WORLD);
#endif
	const sim_train_cfg *c = &x.plan.cfg;
	if (c->gpus != x.nranks) {
		if (x.mpi)
			rc = pp_err(err, errlen, PP_EUSAGE,
				    "the plan has %d ranks (tp %d x pp %d x dp %d x cp %d) but %d processes were launched: "
				    "launch one per GPU of the plan (mpirun -np %d ...)",
				    c->gpus, c->tp, c->pp, c->dp, c->cp, x.nranks, c->gpus);
		else
			rc = pp_err(err, errlen, PP_EUSAGE,
				    "the plan has %d ranks (tp %d x pp %d x dp %d x cp %d): launch one process per GPU, e.g. "
				    "mpirun -np %d paraplan replay --plan %s",
				    c->gpus, c->tp, c->pp, c->dp, c->cp, c->gpus, o->plan_path ? o->plan_path : "PLAN.json");
		goto done;
	}

	/* 2. a GPU for every rank, before any database is opened */
	rc = pick_device(&x);
	if ((rc = agree(&x, rc)) != 0)
		goto done;

	/* 3. the op lists */
	if (x.rank == 0)
		rc = simulate(&x);
	if ((rc = agree(&x, rc)) != 0)
		goto done;
	if ((rc = share_ops(&x)) != 0)
		goto done;
	rc = cal_replay_lower(x.ops, c, &x.prog, err, errlen);
	if ((rc = agree(&x, rc)) != 0)
		goto done;
	double predicted = 0, kernels = 0;
	if (x.rank == 0) {
		predicted = sim_train_metrics(x.res)->step_time_s;
		rc = cal_replay_kernels_s(x.m, x.cost, &x.plan, &kernels, err, errlen);
		if (rc == 0)
			say(&x,
			    "replaying %s on %d x %s (%s): %zu ops, %zu launches, %zu communicators on rank 0; predicted step "
			    "%.4g s, its kernels alone %.4g s",
			    x.plan.model, c->gpus, x.plan.system, x.prop.name, x.prog->npops, x.prog->nlaunches, x.prog->ncomms,
			    predicted, kernels);
	}
	if ((rc = agree(&x, rc)) != 0)
		goto done;

	/* 4.-5. communicators, buffers, streams, GEMM plans */
	if ((rc = make_comms(&x)) != 0)
		goto done;
	rc = make_streams(&x);
	if (rc == 0)
		rc = make_buffers(&x);
	if (rc == 0)
		rc = make_shapes(&x);
	if ((rc = agree(&x, rc)) != 0)
		goto done;

	/* 6. the steps */
	x.step_s = calloc((size_t)steps, sizeof *x.step_s);
	if (x.step_s == NULL)
		rc = pp_err(err, errlen, PP_ENOMEM, "out of memory");
	if ((rc = agree(&x, rc)) != 0)
		goto done;
	cal_sig_install();
	for (int i = 0; i < warmup + steps && rc == 0; i++) {
		double t = 0;
		rc = run_step(&x, &t);
		int caught = cal_sig_caught();
#if HAVE_MPI
		if (x.mpi)
			MPI_Allreduce(MPI_IN_PLACE, &caught, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
#endif
		if (rc == 0 && caught)
			rc = pp_err(err, errlen, PP_EINTR, "interrupted: the replay was stopped, nothing was stored");
		if ((rc = agree(&x, rc)) != 0)
			break;
		/* the step took as long as its slowest rank */
#if HAVE_MPI
		if (x.mpi) {
			MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
			MPI_Barrier(MPI_COMM_WORLD);
		}
#endif
		if (i >= warmup)
			x.step_s[i - warmup] = t;
		if (i == warmup - 1 || (i >= warmup && (i - warmup + 1) % 5 == 0))
			say(&x, "%s step %d: %.4g s", i < warmup ? "warm-up" : "timed", i < warmup ? i + 1 : i - warmup + 1, t);
	}
	cal_sig_restore();
	if (rc != 0)
		goto done;

	/* 7. rank 0 stores and reports */
	if (x.rank == 0) {
		double *sorted = malloc((size_t)steps * sizeof *sorted);
		if (sorted == NULL) {
			rc = pp_err(err, errlen, PP_ENOMEM, "out of memory");
			goto stored;
		}
		memcpy(sorted, x.step_s, (size_t)steps * sizeof *sorted);
		double med = cal_median(sorted, (size_t)steps);
		free(sorted);
		char host[256] = "", drv[16] = "", rt[16] = "", nccl[24] = "";
		gethostname(host, sizeof host - 1);
		int dv = 0, rv = 0, nv = 0;
		cudaDriverGetVersion(&dv);
		cudaRuntimeGetVersion(&rv);
		ncclGetVersion(&nv);
		cal_version(dv, 1000, drv, sizeof drv);
		cal_version(rv, 1000, rt, sizeof rt);
		snprintf(nccl, sizeof nccl, "%d.%d.%d", nv / 10000, nv / 100 % 100, nv % 100);
		char *pj = cal_replay_plan_json(&x.plan);
		int64_t run_id = 0;
		if (!o->no_store) {
			hw_validation v = {.system = x.plan.system, .model = model_name(x.m), .plan_json = pj,
					   .predicted_s = predicted, .measured_s = med, .step_s = x.step_s, .steps = steps,
					   .warmup = warmup, .gpus = c->gpus, .nodes = x.nodes, .host = host,
					   .gpu_name = x.prop.name, .driver = drv, .cuda = rt, .nccl = nccl, .note = o->note};
			rc = hw_validation_store(x.db, &v, &run_id, err, errlen);
		}
		if (rc == 0 && report != NULL) {
			cJSON *r = cJSON_CreateObject();
			cJSON_AddStringToObject(r, "kind", "replay");
			cJSON_AddStringToObject(r, "model", model_name(x.m));
			cJSON_AddStringToObject(r, "system", x.plan.system);
			cJSON *pd = pj ? cJSON_Parse(pj) : NULL;
			cJSON_AddItemToObject(r, "config", pd ? cJSON_DetachItemFromObject(pd, "config") : cJSON_CreateNull());
			cJSON_Delete(pd);
			cJSON_AddNumberToObject(r, "ranks", c->gpus);
			cJSON_AddNumberToObject(r, "nodes", x.nodes);
			cJSON_AddStringToObject(r, "host", host);
			cJSON_AddStringToObject(r, "gpu_name", x.prop.name);
			cJSON_AddStringToObject(r, "driver", drv);
			cJSON_AddStringToObject(r, "cuda", rt);
			cJSON_AddStringToObject(r, "nccl", nccl);
			cJSON_AddNumberToObject(r, "warmup", warmup);
			cJSON_AddNumberToObject(r, "steps", steps);
			cJSON_AddItemToObject(r, "step_s", cJSON_CreateDoubleArray(x.step_s, steps));
			cJSON_AddNumberToObject(r, "measured_s", med);
			cJSON_AddNumberToObject(r, "predicted_s", predicted);
			if (x.plan.predicted_s > 0)
				cJSON_AddNumberToObject(r, "plan_step_s", x.plan.predicted_s);
			cJSON_AddNumberToObject(r, "error", predicted / med - 1.0);
			cJSON_AddNumberToObject(r, "kernels_s", kernels);
			cJSON_AddNumberToObject(r, "kernels_error", kernels / med - 1.0);
			cJSON_AddNumberToObject(r, "run_id", (double)run_id);
			cJSON_AddItemToObject(r, "program", cal_replay_prog_json(x.prog));
			*report = r;
		}
		free(pj);
	}
stored:
	rc = agree(&x, rc);
done:
	release(&x, rc != 0);
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
