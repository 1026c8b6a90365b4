/*
 * cal.h -- calibration: measurements into the hardware database, and parameters fitted to them.
 *
 * Three ways in, one way out.  Measurements come from nccl-tests logs made elsewhere
 * (cal_nccl_*: parse, check, store as one 'import' run), or from this build's own GPU programs
 * (cal_gpu_run: cuBLASLt GEMM sweeps, HBM bandwidth, NCCL collectives, one 'calibrate' run,
 * MPI across nodes); both land in hardware/ through the run API of hw.h, one write transaction
 * per run, so an error or Ctrl-C leaves nothing half-written.  cal_fit then turns a system's
 * stored rows into the cost model's parameters (alpha-beta collectives, GEMM efficiency, HBM
 * efficiency) with origin 'fitted'; hardware/cost.c uses measured tables first, fitted
 * parameters next and datasheet figures last.
 *
 * Ownership: cal_nccl is opaque, made by cal_nccl_new and released by cal_nccl_free; the
 * strings and rows its accessors hand out belong to it and live until it is freed.  cJSON
 * reports returned to the caller are freed with cJSON_Delete.  hw_db handles are the caller's.
 *
 * Invariants: a parsed row has bytes > 0, time_s > 0, and algbw/busbw equal to size/time and
 * algbw x hw_coll_busbw_factor (checked against the printed columns within their rounding); a
 * store or a fit either writes everything it reports or nothing.  Nothing here prints or
 * exits; progress goes through a caller's callback.
 */
#ifndef CAL_H
#define CAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hardware/hw.h"

struct cJSON;

/* ---- nccl-tests logs ----------------------------------------------------------------------- */

typedef struct cal_nccl cal_nccl;

/* What the command line knows that a log may not say.  Zero / -1 fields are unknown. */
typedef struct cal_nccl_opts {
	int op;            /* an hw_coll, or -1: the collective of files that do not name theirs */
	int ranks;         /* ranks of the test; must agree with a file's device list */
	int nodes;         /* nodes of the test; must agree with a file's device list */
	int gpus_per_node; /* GPUs of the test per node (nodes = ranks / this when not given) */
	int node_size;     /* the system's GPUs per node: the last resort for the node count */
} cal_nccl_opts;

cal_nccl *cal_nccl_new(void); /* NULL when out of memory */
void cal_nccl_free(cal_nccl *log);

/* Parses the text of one nccl-tests output and appends its result tables (blocks) to log.
 * `name` is the file name used in messages and, when the text does not name its test, to infer
 * the collective (all_reduce_perf ...).  Errors (PP_EINPUT) name name:line; on error log keeps
 * only the blocks of earlier calls. */
int cal_nccl_parse(cal_nccl *log, const char *name, const char *text, const cal_nccl_opts *opts, char *err,
		   size_t errlen);
/* Reads and parses a file (PP_EIO / PP_ENOTFOUND when it cannot be read). */
int cal_nccl_read(cal_nccl *log, const char *path, const cal_nccl_opts *opts, char *err, size_t errlen);

/* One result table of a log. */
typedef struct cal_nccl_block {
	const char *file;
	int line;               /* of the table's column header */
	hw_coll op;
	int ranks, nodes;
	const char *op_from;    /* how the op was found: "test name at line 3", "--op", "file name" */
	const char *ranks_from; /* "device list at line 5", "--ranks", "nThread x nGpus at line 2" */
	const char *dtype;      /* nccl-tests' type column of the first row ("float") */
	const char *gpu_name;   /* from the device list, or "" */
	const char *nccl;       /* NCCL library version from the nccl-tests banner, or "" */
	bool new_format;        /* 'root' and '#wrong' columns (nccl-tests 2.13 and later) */
	size_t nrows;           /* stored rows, out-of-place and in-place */
	size_t skipped;         /* halves not stored: size 0 or N/A fields */
} cal_nccl_block;

size_t cal_nccl_nblocks(const cal_nccl *log);
void cal_nccl_block_get(const cal_nccl *log, size_t i, cal_nccl_block *out);
/* Row j of block i (its time, algbw and busbw as checked and stored); *line gets its line. */
void cal_nccl_row(const cal_nccl *log, size_t i, size_t j, hw_coll_row *out, int *line);

/* Stores every row of the log as one calibration run of kind 'import' for `system` (which must
 * exist: PP_ENOTFOUND otherwise).  note NULL: the file names.  Any error writes nothing. */
int cal_nccl_store(const cal_nccl *log, hw_db *db, const char *system, const char *note, int64_t *run_id, char *err,
		   size_t errlen);

/* What a log holds, per (op, ranks, nodes): rows, size range, peak out-of-place busbw, as
 * {"blocks": [...], "groups": [...]}. */
struct cJSON *cal_nccl_summary(const cal_nccl *log);

/* ---- fitting ------------------------------------------------------------------------------- */

/* Fits the cost model's parameters of `system` (and of its GPU) to the rows of run `run_id`, or
 * of every complete run of the system when run_id is 0, and stores them with origin 'fitted',
 * all in one transaction.  Parameters that the rows cannot determine are left alone and listed
 * with the reason.  *report (may be NULL) gets {"system", "runs", "collectives", "gemm",
 * "bandwidth", "parameters", "skipped"}.  PP_ENOTFOUND: no such system or run; PP_EINPUT: the
 * rows determine nothing. */
int cal_fit(hw_db *db, const char *system, int64_t run_id, struct cJSON **report, char *err, size_t errlen);

/* One alpha-beta fit t = latency + wire_bytes / busbw over a curve of nccl-tests rows
 * (wire_bytes = bytes x the bus factor), each parameter by weighted least squares (weights
 * 1/t^2) over the sizes where it shows: busbw from the bandwidth-bound tail (busbw within 80%
 * of the best), latency from the latency-bound head (times within 1.5x the fastest).  The
 * mid-size rows, where NCCL switches protocol and no two-parameter line follows the curve, are
 * left out.  0, or PP_EINPUT when fewer than 3 distinct sizes. */
typedef struct cal_ab_fit {
	double latency_s;
	double busbw;            /* bytes/s, the asymptotic bus bandwidth */
	double rms_rel;          /* root mean square relative residual of the model over all rows */
	size_t n, downweighted;  /* rows, and mid-size rows used by neither end */
	bool latency_determined; /* two head sizes whose time is less than half transfer */
	bool busbw_determined;   /* two tail sizes whose time is at least half transfer */
} cal_ab_fit;
int cal_fit_alpha_beta(const double *wire_bytes, const double *time_s, size_t n, cal_ab_fit *out);

/* ---- the sweeps of 'paraplan calibrate' (pure functions: no device needed) ------------------ */

enum {
	CAL_SHAPE_TRANSFORMER = 1 << 0, /* a GEMM of a transformer layer (forward, dgrad, wgrad) */
	CAL_SHAPE_GRID = 1 << 1,        /* a point of the log grid */
};
typedef struct cal_gemm_shape {
	int64_t m, n, k;
	unsigned kinds; /* CAL_SHAPE_* bits */
} cal_gemm_shape;

/* The GEMM sweep's shapes (docs/calibration.md lists the rules): for hidden sizes 2048, 4096,
 * 5120, 8192, 12288, 16384, tensor-parallel degrees 1, 2, 4, 8 and token counts 2048, 8192,
 * 16384, the QKV, attention-output, MLP-up and MLP-down GEMMs of a Megatron layer with their
 * dgrad and wgrad GEMMs; plus the log grid {128, 512, 2048, 8192}^3 and 64^3.  Deduplicated,
 * sorted by (m, n, k); *out is malloc'd. */
int cal_gemm_shapes(cal_gemm_shape **out, size_t *n, char *err, size_t errlen);

/* Collective message sizes: 1 KiB, 2 KiB, ... up to max_bytes (at most 4 GiB).  Returns the
 * count written (at most cap). */
size_t cal_coll_sizes(int64_t max_bytes, int64_t *out, size_t cap);

/* Group sizes of the intra-node sweep on a node of `gpus` GPUs: 2, 4, 8, ... and `gpus`. */
size_t cal_group_sizes(int gpus, int *out, size_t cap);

/* HBM sweep buffer sizes: powers of two from the first one >= 4 x L2 (at least 64 MiB) up to
 * max_bytes. */
size_t cal_membw_sizes(double l2_bytes, int64_t max_bytes, int64_t *out, size_t cap);

/* nccl-tests' buffers for a requested size: per-rank send and receive element counts and the
 * size it reports (rounded down to whole elements per rank, as nccl-tests does). */
typedef struct cal_coll_layout {
	int64_t send_count, recv_count; /* elements in each rank's buffers */
	int64_t chunk;                  /* elements per peer (all-to-all) or per rank (gather/scatter) */
	int64_t bytes;                  /* nccl-tests' 'size' column */
} cal_coll_layout;
int cal_coll_layout_get(hw_coll op, int64_t size, int ranks, int elsize, cal_coll_layout *out);

/* ---- measuring on GPUs ('paraplan calibrate') ---------------------------------------------- */

enum {
	CAL_GEMM = 1 << 0,
	CAL_MEMBW = 1 << 1,
	CAL_COLLECTIVES = 1 << 2,
};

typedef struct cal_gpu_opts {
	unsigned what;           /* CAL_* bits; 0 means all */
	const char *db_path;     /* --db, or NULL for the default database */
	const char *system;      /* must exist; NULL: the one system matching the GPUs, if unique */
	const char *note;
	unsigned dtypes;         /* GEMM dtypes as 1 << hw_dtype bits; 0: every supported one */
	int64_t max_coll_bytes;  /* largest collective size; 0: 4 GiB (less when memory is short) */
	bool fit;                /* run cal_fit on the new run after committing it */
	/* Progress lines (never NULL-terminated by us: one line per call, no newline). */
	void (*progress)(void *ctx, const char *line);
	void *progress_ctx;
} cal_gpu_opts;

/* True when this build has the GPU programs (CUDA, cuBLASLt and NCCL were found). */
bool cal_gpu_built(void);
/* True when it can run multi-node under MPI. */
bool cal_mpi_built(void);

/* Counts the GPUs this process sees: 0 with *ndev set, or PP_ENODEV with "no GPU found: ..."
 * (the CUDA error: no driver, no device) or "built without CUDA and NCCL". */
int cal_gpu_probe(int *ndev, char *err, size_t errlen);

/* Runs the selected measurements as one calibration run.  Without a usable GPU: PP_ENODEV with
 * "no GPU found: ..." naming the CUDA error, before the database is opened.  A build without
 * CUDA/NCCL: PP_ENODEV saying so.  Ctrl-C (SIGINT, SIGTERM): PP_EINTR, nothing written.  Under
 * MPI every rank calls this; rank 0 writes.  *report (rank 0 only, may be NULL) summarizes the
 * run; *is_root says whether this process should print it. */
int cal_gpu_run(const cal_gpu_opts *opts, struct cJSON **report, bool *is_root, char *err, size_t errlen);

#endif /* CAL_H */
