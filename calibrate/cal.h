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
#include "sim/sim.h"

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
	CAL_SHAPE_MODEL = 1 << 2,       /* a GEMM of a named model's layers (--model) */
};
typedef struct cal_gemm_shape {
	int64_t m, n, k;
	unsigned kinds; /* CAL_SHAPE_* bits */
} cal_gemm_shape;

/* The GEMM sweep's shapes (docs/calibration.md lists the rules): for hidden sizes 2048, 4096,
 * 5120, 8192, 12288, 16384, tensor-parallel degrees 1, 2, 4, 8 and token counts 2048, 8192,
 * 16384, the QKV, attention-output, MLP-up and MLP-down GEMMs of a Megatron layer with their
 * dgrad and wgrad GEMMs; plus the log grid {128, 512, 2048, 8192}^3 and 64^3; plus, for each of
 * the `nmodels` models given, the same GEMMs of its own layers at the same TP degrees and token
 * counts: QKV ((heads + 2 kv_heads) head_dim / tp, h; not for latent attention), attention
 * output, MLP up (twice the width when gated) and down, and a routed expert's up and down (at
 * the token counts of a dense layer), every dimension rounded up to a multiple of 16.
 * Deduplicated, sorted by (m, n, k); *out is malloc'd. */
int cal_gemm_shapes(const model_tf *const *models, size_t nmodels, cal_gemm_shape **out, size_t *n, char *err,
		    size_t errlen);

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
	const model_tf *const *models; /* --model: their layers' GEMMs join the sweep (not owned) */
	size_t nmodels;
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

/* ---- replay: a plan's op graph on GPUs ------------------------------------------------------ *
 *
 * The host half (calibrate/replay.c, built and tested everywhere) reads a plan document, lowers
 * a rank's op list (sim_train_rank_ops) into a launch program -- cuBLASLt GEMMs of the real
 * shapes, memory-bound kernels moving the same bytes, NCCL calls on the communicator of each
 * (group, stream) -- and says which communicators exist and how every rank joins them.  The GPU
 * half (calibrate/replay_gpu.c, where CUDA and NCCL are found; gpu_none.c says it is absent)
 * runs the program with one process per GPU and stores the measured steps as a validation run. */

/* A plan document read back: the configuration to replay and where it came from. */
typedef struct cal_replay_plan {
	char model[512];       /* the model spec: a catalog name or a path */
	char system[48];
	char kind[16];         /* "plan-train" or "train" (a simulate train document) */
	sim_train_cfg cfg;     /* as the document states it (not yet checked) */
	char framework[64];    /* the framework profile it was simulated under ("": none stated) */
	double predicted_s;    /* the document's step time, 0 when it has none */
} cal_replay_plan;

/* Parses the text of a plan document: the --json of 'paraplan plan train' (its winner's
 * configuration) or of 'paraplan simulate train'.  Errors (PP_EUSAGE) name the file and the
 * field: "plan.json: winner.config.tp must be a positive integer, got -2". */
int cal_replay_plan_parse(const char *name, const char *text, cal_replay_plan *out, char *err, size_t errlen);
/* Reads and parses a file; an unreadable file is PP_EUSAGE too (the flag named it). */
int cal_replay_plan_read(const char *path, cal_replay_plan *out, char *err, size_t errlen);
/* The plan as the compact JSON document stored with a validation run (malloc'd text). */
char *cal_replay_plan_json(const cal_replay_plan *p);

/* A communicator: the ranks of one group instance that one stream of each member uses (every
 * communicator carries the ops of one stream, so each member issues them in the same order).
 * Communicators are made by a schedule of MPI_Comm_split calls every rank makes in the same
 * order (cal_replay_split_keys); `key` is this communicator's place in it and `color` the
 * split color (the smallest member's global rank). */
typedef struct cal_comm {
	int key;
	sim_group group;
	int stream;            /* SIM_S_*: the stream whose ops use it */
	int size, me;          /* members, and this rank's index among them */
	int color;
	int *members;          /* global ranks, ascending (the communicator's rank order) */
	int64_t send_bytes, recv_bytes; /* the largest buffers its ops need */
} cal_comm;

/* The split schedule of a configuration, the same on every rank: first one key per (group,
 * stream) in a fixed order, then one per pipeline link (direction and sending stage). */
typedef struct cal_split_key {
	bool link;
	sim_group group;       /* !link */
	int stream;            /* !link */
	int dir;               /* link: 0 forward (activations), 1 backward (gradients) */
	int from_stage, to_stage; /* link */
} cal_split_key;
/* *keys is malloc'd. */
int cal_replay_split_keys(const sim_train_cfg *c, cal_split_key **keys, size_t *n);

typedef enum cal_lkind {
	CAL_L_GEMM,      /* cuBLASLt: batch x [m x k] x [k x n] */
	CAL_L_MEM,       /* a kernel reading and writing `bytes` in all */
	CAL_L_COLL,      /* ncclAllReduce, ncclAllGather, ncclReduceScatter */
	CAL_L_ALLTOALL,  /* a send and a receive of `count` elements with every member */
	CAL_L_RING,      /* `steps` rounds: send `count` to the next member, receive from the previous */
	CAL_L_SEND,      /* ncclSend of `count` to member `peer` */
	CAL_L_RECV,      /* ncclRecv of `count` from member `peer` */
} cal_lkind;

typedef struct cal_shape {
	int64_t m, n, k, batch;
	hw_dtype dtype;
} cal_shape;

typedef struct cal_launch {
	cal_lkind kind;
	int32_t shape;       /* GEMM: index into shapes */
	int32_t weight;      /* GEMM: index into weights, -1 when no operand is a weight */
	bool weight_out;     /* GEMM: the weight's gradient is the output C (else the weight is B) */
	double flops;        /* GEMM: 2 m n k batch */
	int64_t bytes;       /* MEM: read + written; collectives: bytes per call (nccl-tests' size) */
	int32_t comm;        /* collectives, send, recv: index into comms */
	hw_coll coll;
	int64_t count;       /* elements per NCCL call (send count; a reduce-scatter's receive count) */
	int elem;            /* bytes per element */
	int peer;            /* SEND, RECV: the peer's index in the communicator */
	int steps;           /* RING */
} cal_launch;

/* One op of the rank's list: wait for the events of earlier ops on other streams, launch, then
 * record its own event when a later op of another stream waits for it. */
typedef struct cal_pop {
	int stream;
	size_t op;           /* index into the rank's op list */
	size_t l0, nl;       /* launches[l0 .. l0 + nl) */
	size_t w0, nw;       /* waits[w0 .. w0 + nw): event ids */
	int32_t event;       /* recorded after it, or -1 */
} cal_pop;

typedef struct cal_weight {
	int64_t layer;
	sim_weight w;
	int64_t bytes;       /* the weight (and its gradient's) buffer */
	int slot;            /* buffer it uses (cal_replay_place_weights) */
} cal_weight;

typedef struct cal_replay_prog {
	int rank, ranks, stage;
	cal_pop *pops;
	size_t npops;
	cal_launch *launches;
	size_t nlaunches;
	int32_t *waits;
	size_t nwaits;
	int nevents;
	cal_shape *shapes;
	size_t nshapes;
	cal_weight *weights;
	size_t nweights;
	int nslots;           /* weight buffers (== nweights unless placed in a ring) */
	int64_t slot_bytes;   /* each ring slot's size when nslots < nweights */
	/* the largest A, B and C operand a GEMM needs outside the weights, per input element size
	 * (1: fp8, 2: bf16 or fp16, 4: fp32 or tf32): each size has its own operand buffers, filled
	 * with random values of that type */
	int64_t operand_bytes[3][3];
	int64_t mem_bytes_max;    /* the largest memory-bound kernel */
	cal_comm *comms;
	size_t ncomms;
	/* totals: what one step executes */
	double gemm_flops;        /* every GEMM, attention's included */
	double attn_flops;        /* of which attention */
	double mem_bytes;
	double sim_flops;         /* the FLOPs the simulator counted for the rank's compute ops */
	size_t ngemm, nmem, ncoll, nsend, nrecv;
} cal_replay_prog;

/* The ring memory-bound kernels rotate through: large enough that consecutive kernels do not
 * find each other's bytes in L2 (L2 is at most 128 MiB on the GPUs of 2025); a kernel moving
 * more passes over it several times. */
#define CAL_REPLAY_MEM_RING_BYTES ((int64_t)512 << 20)
/* Bytes per input element of a GEMM in dtype t (fp8 1, bf16 and fp16 2, fp32 and tf32 4). */
int cal_replay_in_bytes(hw_dtype t);
/* A GEMM dimension as its buffers are sized: FP8 GEMMs whose dimensions cuBLASLt cannot run
 * (it wants multiples of 16) run padded up to multiples of 16, so their buffers have room. */
int64_t cal_replay_buffer_dim(hw_dtype t, int64_t v);

/* Lowers the op list of a rank (its own, or its stage representative's rebased with
 * cal_replay_rebase) into a launch program.  Attention is lowered to cuBLASLt GEMM pairs of the
 * same FLOPs (see docs/replay.md); every other kernel keeps its shape or bytes. */
int cal_replay_lower(const sim_rank_ops *o, const sim_train_cfg *c, cal_replay_prog **out, char *err, size_t errlen);
void cal_replay_prog_free(cal_replay_prog *p);
/* Places the weights in device buffers within `budget` bytes (weights and their gradients): one
 * buffer each when they fit, else a ring of as many buffers of the largest size as fit (at
 * least two).  Returns the bytes the weight buffers take. */
int64_t cal_replay_place_weights(cal_replay_prog *p, int64_t budget);
/* The device memory the program needs besides the weights (operands, memory ring, NCCL
 * buffers), bytes. */
int64_t cal_replay_other_bytes(const cal_replay_prog *p);
/* What one step executes, as JSON (for --dry-run and the report). */
struct cJSON *cal_replay_prog_json(const cal_replay_prog *p);

/* The op list of a rank taken from its stage representative's: the same ops, with the rank's
 * own coordinates and pipeline peers. */
void cal_replay_rebase(sim_rank_ops *o, const sim_train_cfg *c, int rank);
/* A rank's op list as one block of bytes (for MPI_Bcast) and back.  *buf is malloc'd; unpack
 * returns a list sim_rank_ops_free releases. */
int cal_replay_pack(const sim_rank_ops *o, void **buf, size_t *len);
int cal_replay_unpack(const void *buf, size_t len, sim_rank_ops **out, char *err, size_t errlen);

/* Simulates a plan with the op graph recorded (the symmetric mode, as the planner does), under
 * the framework profile the plan names (none where it names none, as it was simulated), so that
 * its prediction is the one 'simulate train' and 'plan train' printed: checks the configuration
 * (PP_EUSAGE naming the constraint or the unknown framework).  *fw (OUT) is the profile the
 * result points to, or NULL: the caller frees it after the result. */
int cal_replay_simulate(hw_db *db, const model *m, const hw_cost *cost, const cal_replay_plan *p, hw_profile **fw,
			sim_train_result **out, char *err, size_t errlen);

/* The step the hardware layer predicts for what a replay runs: the plan's configuration with
 * the kernels at the database's rates and nothing of a framework profile (its kernel-rate
 * scales, host time per kernel and compute slowdown under communication describe the framework,
 * which a replay does not run), attention priced as the GEMMs the replay launches in its place
 * (sim_attn_proxy).  The replay's measured step checks this figure; the plan's prediction adds
 * the framework to it. */
int cal_replay_kernels_s(const model *m, const hw_cost *cost, const cal_replay_plan *p, double *out, char *err,
			 size_t errlen);

/* How a process picks its GPU (--rank-config). */
typedef enum cal_devsel {
	CAL_DEV_AUTO,   /* the one GPU it sees, else the GPU of its local rank */
	CAL_DEV_LOCAL,  /* the GPU of its local rank among those it sees */
	CAL_DEV_FIRST,  /* the first GPU it sees (the launcher binds one per process) */
} cal_devsel;

typedef struct cal_replay_opts {
	const cal_replay_plan *plan; /* rank 0's is replayed; other ranks may pass NULL with plan_path */
	const char *plan_path;       /* read by rank 0 when plan is NULL */
	const char *model;           /* overrides the plan's model (a catalog name or a path) */
	const char *db_path;
	int steps, warmup;           /* timed and warm-up steps (defaults 10 and 3) */
	cal_devsel devsel;
	const char *note;
	bool no_store;               /* measure and report, but write nothing */
	void (*progress)(void *ctx, const char *line);
	void *progress_ctx;
} cal_replay_opts;

/* True when this process was launched as one of several tasks (mpirun, srun); *rank gets the
 * launcher's rank for this process (0 when alone).  Reads only the environment. */
bool cal_launched_tasks(int *ntasks, int *rank);

/* Replays a plan on the GPUs: one process per GPU under MPI (every rank calls this), or one
 * process and one GPU for a one-GPU plan.  Without a GPU: PP_ENODEV ("no GPU found: ...")
 * before the database is opened.  A build without CUDA and NCCL: PP_ENODEV saying so.  A world
 * size that is not the plan's GPU count: PP_EUSAGE.  Any rank's CUDA, cuBLAS, NCCL or MPI error
 * ends the run everywhere with that rank's message and nothing stored.  *report (rank 0) holds
 * the measured steps, their median, the prediction and the error; *is_root says whether this
 * process prints. */
int cal_replay_run(const cal_replay_opts *o, struct cJSON **report, bool *is_root, char *err, size_t errlen);

/* ---- the minimizer of the fits to published rows (minimize.c) ------------------------------ */

/* A parameter of a fit: its physical range and where the search starts. */
typedef struct cal_param {
	const char *name;
	double lo, hi, start;
} cal_param;

/* Minimizes f over the box (GSL's Nelder-Mead on a logistic transform of each parameter) with
 * at most about max_evals evaluations of f; f(x, arg) sees the values of the n parameters.
 * best[] gets the best point (never worse than the start), *fbest its value and *evals (may
 * be NULL) the evaluations made.  PP_EUSAGE for an empty range or n outside 1..16. */
int cal_minimize(const cal_param *p, size_t n, double (*f)(const double *x, void *arg), void *arg, int max_evals,
		 double *best, /* OUT */ double *fbest, /* OUT */ int *evals, /* OUT */ char *err, size_t errlen);

/* Residuals r[0 .. m) at the parameter values x[0 .. n); a nonzero PP_E* code stops the fit
 * (f keeps its own message). */
typedef int (*cal_resid_fn)(const double *x, double *r, void *arg);

/* Minimizes the sum of squared residuals over the box (GSL's trust-region Levenberg-Marquardt
 * on the logistic transform, forward-difference Jacobian) in at most max_iter iterations of n
 * + 1 evaluations each.  best[] gets the best point (never worse than the start), *cost its sum
 * of squares, *evals (may be NULL) the evaluations made.  PP_EUSAGE for an empty range, n
 * outside 1..16 or m < n; f's code when f stopped the fit. */
int cal_least_squares(const cal_param *p, size_t n, size_t m, cal_resid_fn f, void *arg, int max_iter,
		      double *best, /* OUT */ double *cost, /* OUT */ int *evals, /* OUT */ char *err, size_t errlen);

/* A parameter's value at a transformed coordinate u, and the coordinate of a value (clamped
 * a millionth of the range inside it). */
double cal_param_value(const cal_param *p, double u);
double cal_param_u(const cal_param *p, double v);

#endif /* CAL_H */
