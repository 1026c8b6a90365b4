/*
 * hw.h -- the hardware database and the cost model.
 *
 * The database (SQLite) holds GPUs, systems (node types), prices, calibration runs with their
 * GEMM, memory-bandwidth and collective measurements, fitted cost-model parameters and
 * validation runs.  Its schema is versioned with PRAGMA user_version and migrated forward on
 * open.  The default data (hardware/data/ (SQL), every figure with its source) is compiled in;
 * those rows carry origin 'default' and are refreshed when the binary's defaults change, while
 * rows that calibration, import or the user added are never touched by a refresh.
 *
 * The cost model (hw_cost) binds one system: it turns a GEMM, a memory-bound kernel, an
 * attention kernel or a collective into seconds, and says where each number came from:
 * measured (a calibration table, interpolated), fitted (parameters fitted to measurements) or
 * datasheet (peak figures times default efficiencies).  A hw_cost is read-only once built and
 * may be shared by threads.
 *
 * Ownership: hw_db and hw_cost are opaque and released with hw_close / hw_cost_free; cJSON
 * trees returned to the caller are freed with cJSON_Delete.  Nothing here prints or exits.
 */
#ifndef HW_H
#define HW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cJSON;
typedef struct hw_db hw_db;
typedef struct hw_cost hw_cost;

/* Schema version this build writes (PRAGMA user_version). */
#define HW_SCHEMA_VERSION 4

/* ---- data types ---------------------------------------------------------------------------- */

typedef enum hw_dtype {
	HW_FP64, HW_FP32, HW_TF32, HW_FP16, HW_BF16, HW_FP8, HW_INT8, HW_INT4, HW_FP4, HW_NDTYPES
} hw_dtype;

/* HW_FP4 is the 4-bit floating point of Blackwell's tensor cores (NVFP4: E2M1 values with an
 * FP8 scale per 16; MXFP4: an E8M0 scale per 32).  Its peak is not a column of the gpu table
 * but the GPU parameter fp4_tflops (hardware/params.c), which hw_cost_new puts in
 * peak_tflops[HW_FP4]; hw_gpu_get leaves it 0. */
const char *hw_dtype_name(hw_dtype t);
int hw_dtype_parse(const char *s, hw_dtype *out); /* 0, or PP_EUSAGE for an unknown name */
double hw_dtype_bytes(hw_dtype t);               /* 8, 4, 4, 2, 2, 1, 1, 0.5, 0.5 */

/* ---- opening ------------------------------------------------------------------------------- */

enum {
	HW_OPEN_READONLY = 1 << 0, /* never write: no migration, no defaults refresh */
};

/* Opens the database at path; NULL means the default location: $PARAPLAN_DB, else
 * $XDG_DATA_HOME/paraplan/hardware.db (XDG_DATA_HOME defaults to ~/.local/share).  A missing
 * file is created from the defaults.  ":memory:" gives a private in-memory copy of the
 * defaults.  When the default location cannot be written, an in-memory copy of the defaults
 * is used instead and hw_notice() says so.  An explicit path that cannot be opened, a file
 * that is not a database, or a schema newer than this build is an error. */
int hw_open(const char *path, unsigned flags, hw_db **out, char *err, size_t errlen);
void hw_close(hw_db *db);
const char *hw_path(const hw_db *db);   /* the file, or ":memory:" */
const char *hw_notice(const hw_db *db); /* a one-line notice for stderr, or NULL */
bool hw_readonly(const hw_db *db);

/* Runs a statement without user data (SAVEPOINT, RELEASE, ROLLBACK TO ...). */
int hw_exec_simple(hw_db *db, const char *sql, char *err, size_t errlen);

/* The compiled-in default data, as SQL text (for tests and 'hw export --defaults'). */
const char *hw_defaults_sql(void);

/* ---- GPUs and systems ---------------------------------------------------------------------- */

typedef struct hw_gpu {
	char name[48];
	char vendor[16];
	char arch[24];
	double memory_bytes;   /* usable device memory as the driver reports it */
	double hbm_gbps;       /* peak memory bandwidth, GB/s (1e9 B/s) */
	double l2_bytes;
	int sms;               /* streaming multiprocessors (CUs on AMD) */
	double boost_mhz;      /* clock the tensor peak is quoted at */
	double tdp_w;
	double peak_tflops[HW_NDTYPES]; /* dense peaks; 0 where the dtype is not supported */
} hw_gpu;

typedef struct hw_system {
	char name[48];
	char description[128];
	hw_gpu gpu;
	int gpus_per_node;
	char scaleup[16];          /* nvswitch, nvlink, pcie, xgmi */
	double scaleup_gbps;       /* per GPU, one direction, GB/s */
	int scaleup_domain;        /* GPUs in one scale-up (NVLink) domain */
	int nics_per_node;
	double nic_gbit;           /* per NIC, Gb/s */
	char scaleout[16];         /* ib-hdr, ib-ndr, efa, roce, tcp, none */
	double scaleup_latency_us; /* per-collective latency inside the domain */
	double scaleout_latency_us;/* per-collective latency across nodes */
	double oversubscription;   /* fabric oversubscription above the leaf (1 = non-blocking) */
	double node_power_kw;      /* maximum power of one node */
} hw_system;

int hw_gpu_get(hw_db *db, const char *name, hw_gpu *out, char *err, size_t errlen);
int hw_system_get(hw_db *db, const char *name, hw_system *out, char *err, size_t errlen);
/* Names of all systems, sorted; *names is one malloc'd block the caller frees. */
int hw_system_names(hw_db *db, char ***names, size_t *n, char *err, size_t errlen);

/* GPUs and systems as a JSON document {"gpus": [...], "systems": [...]}. */
int hw_list(hw_db *db, struct cJSON **out, char *err, size_t errlen);
/* Every figure of a GPU or system with its source and origin (datasheet, measured, fitted),
 * its prices, fitted parameters and calibration runs. */
int hw_show(hw_db *db, const char *name, struct cJSON **out, char *err, size_t errlen);
/* SQL text that recreates the user's data (every row whose origin is not 'default'). */
int hw_export(hw_db *db, char **sql, char *err, size_t errlen);

/* Moving a system's measurements between databases (hardware/bundle.c).  hw_bundle_export: the
 * user's rows -- GPUs, systems, figure sources, prices and profiles they defined, parameters,
 * calibration and import runs with their measurements, validation runs with their steps -- of
 * one system (NULL: all) as a document of HW_EXPORT_SCHEMA, without row ids.  hw_bundle_import:
 * adds such a document in one transaction, runs under new ids; rows matched by their natural key
 * are skipped when identical and refuse the whole import when not, as does a run already here;
 * with dry_run nothing is kept.  *summary says what was (or would be) added. */
#define HW_EXPORT_SCHEMA "paraplan.hw-export/1"
int hw_bundle_export(hw_db *db, const char *system, struct cJSON **out, char *err, size_t errlen);
int hw_bundle_import(hw_db *db, const struct cJSON *doc, const char *origin, bool dry_run, struct cJSON **summary,
		     char *err, size_t errlen);

/* ---- prices -------------------------------------------------------------------------------- */

typedef struct hw_price {
	char provider[48];
	char kind[24];    /* on-demand, reserved-1y, reserved-3y, spot, capacity-block, purchase */
	double usd;       /* in `unit` */
	char unit[16];    /* gpu-hour, node-hour, gpu, node */
	char date[16];
	char source[256];
	char subject_kind[8];    /* "system" (priced as this system) or "gpu" (priced per GPU) */
	double usd_per_gpu_hour; /* rentals normalized per GPU-hour; 0 for purchases */
	double usd_per_gpu;      /* purchases normalized per GPU; 0 for rentals */
} hw_price;

/* Prices that apply to a system: its own rows and its GPU's rows, newest first.  *out is
 * malloc'd. */
int hw_prices(hw_db *db, const char *system, hw_price **out, size_t *n, char *err, size_t errlen);
/* The price the planner uses by default, per GPU-hour: the newest on-demand rental of the system
 * itself, else the median of its GPU's on-demand prices.  PP_ENOTFOUND when there is none. */
int hw_default_price(hw_db *db, const char *system, hw_price *out, char *err, size_t errlen);

/* Where a figure came from: a measurement of this GPU or system, a fit to measurements, or a
 * datasheet figure (and the defaults of judgement). */
typedef enum hw_prov { HW_PROV_MEASURED, HW_PROV_FITTED, HW_PROV_DATASHEET, HW_NPROV } hw_prov;
const char *hw_prov_name(hw_prov p);

/* ---- the parameter registry ---------------------------------------------------------------- *
 *
 * Every cost-model parameter is declared once (hardware/params.c): its key, the scope it
 * belongs to (a GPU's kernel rates, a system's links, a training framework's or a serving
 * engine's behaviour), its default, physical bounds and unit.  Loaders read registered keys
 * only; hw_param_set refuses others. */

typedef enum hw_pscope { HW_SCOPE_GPU, HW_SCOPE_SYSTEM, HW_SCOPE_FRAMEWORK, HW_SCOPE_ENGINE, HW_NSCOPES } hw_pscope;
const char *hw_scope_name(hw_pscope s);          /* "gpu", "system", "framework", "engine" */
int hw_scope_parse(const char *s, hw_pscope *out); /* 0, or PP_EUSAGE */

typedef enum hw_pkey {
	/* gpu */
	HW_P_GEMM_EFF_FP64, HW_P_GEMM_EFF_FP32, HW_P_GEMM_EFF_TF32, HW_P_GEMM_EFF_FP16, HW_P_GEMM_EFF_BF16,
	HW_P_GEMM_EFF_FP8, HW_P_GEMM_EFF_INT8, HW_P_GEMM_EFF_INT4, HW_P_GEMM_EFF_FP4, /* in hw_dtype order */
	HW_P_GEMM_K_RAMP, HW_P_KERNEL_LAUNCH_US, HW_P_HBM_EFF, HW_P_ATTN_FLASH2_FWD, HW_P_ATTN_FLASH2_BWD,
	HW_P_ATTN_FLASH3_FWD, HW_P_ATTN_FLASH3_BWD, HW_P_ATTN_RAMP_FWD, HW_P_ATTN_RAMP_BWD, HW_P_ATTN_SEQ_MAX, HW_P_CONV_EFF,
	HW_P_FP4_TFLOPS, HW_P_GEMM_EFF_WQ, HW_P_ATTN_FP8_SCALE,
	/* system */
	HW_P_COLL_EFF_INTRA, HW_P_COLL_EFF_INTRA_AR, HW_P_COLL_EFF_INTER, HW_P_P2P_EFF_INTRA, HW_P_COLL_ALPHA_US,
	HW_P_COLL_HOP_INTRA_US, HW_P_COLL_HOP_INTER_US,
	HW_P_FABRIC_LEAF_NODES, HW_P_PCIE_GBPS, HW_P_HOST_OPTIM_GBPS,
	/* framework: what a training framework does */
	HW_P_FW_ATTENTION, HW_P_FW_OVERLAP_GRAD_REDUCE, HW_P_FW_OVERLAP_PARAM_GATHER, HW_P_FW_SEQUENCE_PARALLEL,
	HW_P_FW_TP_COMM_OVERLAP, HW_P_FW_TP_WGRAD_OVERLAP, HW_P_FW_FP8_RECIPE, HW_P_FW_EP_DISPATCH, HW_P_FW_ZERO3_GATHER, HW_P_FW_ZERO3_REGATHER, HW_P_FW_ZERO3_PREFETCH, HW_P_FW_DP_ONE_STREAM, HW_P_FW_DIST_OPTIMIZER, HW_P_FW_GRAD_REDUCE, HW_P_FW_GEMM_SCALE, HW_P_FW_ATTN_SCALE,
	HW_P_FW_HOST_OP_US, HW_P_FW_COMM_SLOWDOWN, HW_P_FW_ERR_P10, HW_P_FW_ERR_P90,
	/* engine: what a serving engine does (sim/serve.c; docs/engines.md) */
	HW_P_EN_MAX_NUM_SEQS, HW_P_EN_MAX_BATCHED_TOKENS, HW_P_EN_PREFILL, HW_P_EN_GRAPH_MAX, HW_P_EN_GRAPH_STEP,
	HW_P_EN_GRAPH_MIXED, HW_P_EN_LAUNCH_US, HW_P_EN_SCHED_US, HW_P_EN_SCHED_SEQ_US, HW_P_EN_OVERLAP,
	HW_P_EN_SCHED_STEPS, HW_P_EN_ATTENTION, HW_P_EN_FP8_ATTENTION, HW_P_EN_FP8_SCALING, HW_P_EN_ALLREDUCE_US, HW_P_EN_KV_RESERVE,
	HW_P_EN_DECODE_GQA,
	HW_P_EN_GEMM_SCALE, HW_P_EN_ATTN_SCALE, HW_P_EN_DECODE_SCALE, HW_P_EN_TPUT_P10, HW_P_EN_TPUT_P90,
	HW_P_EN_TTFT_P10, HW_P_EN_TTFT_P90, HW_P_EN_TPOT_P10, HW_P_EN_TPOT_P90, HW_P_EN_CAP_P10, HW_P_EN_CAP_P90,
	HW_NPKEYS
} hw_pkey;

/* The framework's attention kernels (HW_P_FW_ATTENTION): unfused batched products and softmax
 * kernels; FlashAttention-2-class fused kernels; the architecture's fastest fused kernels
 * (FlashAttention-3 or cuDNN on Hopper, cuDNN on Blackwell; FlashAttention-2-class elsewhere). */
enum { HW_FW_ATTN_UNFUSED, HW_FW_ATTN_FLASH2, HW_FW_ATTN_FLASH3 };
/* Its FP8 recipe (HW_P_FW_FP8_RECIPE): Transformer Engine's delayed per-tensor scaling (the amax
 * of earlier steps: one cast pass per operand), current ("dynamic") per-tensor scaling (an amax
 * pass, then the cast), row-wise scaling (per-row amax and cast, scaled GEMMs), MXFP8 (per-32
 * block scales on Blackwell: one pass writing data and scales). */
enum { HW_FP8_DELAYED, HW_FP8_TENSORWISE, HW_FP8_ROWWISE, HW_FP8_MXFP8 };
/* How its MoE layers move tokens between expert-parallel ranks (HW_P_FW_EP_DISPATCH): one
 * all-to-all that sends each token's copy to each of its top-k experts' ranks (NCCL, Megatron's
 * alltoall dispatcher); or DeepEP's, which sends a token across nodes once per node that holds
 * one of its experts and forwards it inside the node over NVLink (DeepSeek-V3 report 3.2.2). */
enum { HW_EP_ALLTOALL, HW_EP_DEEPEP };
/* How ZeRO-3 gathers a layer's parameters before its forward and backward passes
 * (HW_P_FW_ZERO3_GATHER): one collective for the layer's flat parameters (PyTorch FSDP, Megatron's
 * distributed parameters); one per linear module and norm (DeepSpeed from 0.5: a module's
 * parameters are fetched in one coalesced all-gather); one per parameter tensor (DeepSpeed's
 * ZeRO-3 of 2021: a dist.all_gather for each parameter).  Each collective pays the ring's
 * latency, which over hundreds of ranks is milliseconds. */
enum { HW_Z3_LAYER, HW_Z3_MODULE, HW_Z3_TENSOR };
/* The precision data parallelism reduces gradients in (HW_P_FW_GRAD_REDUCE): the training
 * dtype's rule (fp32 for bf16 under DDP or ZeRO-1, as Megatron-LM forces and PyTorch AMP's fp32
 * parameters give; else the 16-bit dtype), fp32 always, or bf16 always (fp32 training excepted). */
enum { HW_GR_DTYPE, HW_GR_FP32, HW_GR_BF16 };
/* How a serving engine schedules prefill (HW_P_EN_PREFILL): chunked -- each iteration decodes
 * every running sequence, then fills the token budget with prefill chunks (vLLM V1, TensorRT-LLM
 * with chunked context); mixed -- decodes, then adds whole prompts while they fit (TensorRT-LLM's
 * in-flight batching without chunked context); separate -- an iteration prefills only, whenever
 * a prompt can be admitted, else decodes (vLLM V0 without chunked prefill, SGLang's default). */
enum { HW_EN_PREFILL_CHUNKED, HW_EN_PREFILL_MIXED, HW_EN_PREFILL_SEPARATE };
/* How an engine's fp8 GEMMs get their activation scales at inference (HW_P_EN_FP8_SCALING):
 * static -- calibrated per-tensor scales, the cast fused into the kernel that writes the
 * activation (TensorRT-LLM/ModelOpt, AMD Quark); dynamic -- per tensor at run time, an amax pass
 * then the cast; token -- per token (row) at run time, one pass. */
enum { HW_EN_FP8_STATIC, HW_EN_FP8_DYNAMIC, HW_EN_FP8_TOKEN };

typedef struct hw_pdef {
	const char *key;
	hw_pscope scope;
	double def;          /* without a row; NAN: derived from the subject's other figures */
	double lo, hi;       /* physical bounds: values outside are refused */
	const char *unit;
	const char *fallback; /* a key read when this one has no row (gemm_eff_bf16 -> gemm_eff), or NULL */
	const char *what;     /* one line: what it means */
	const char *const *names; /* a choice: the names of its values 0, 1, ... (NULL-terminated); else NULL */
} hw_pdef;

/* A choice parameter's value by name, and its name ("?" out of range). */
int hw_pdef_choice(const hw_pdef *d, const char *name, double *out); /* 0, or PP_EUSAGE */
const char *hw_pdef_choice_name(const hw_pdef *d, double v);

const hw_pdef *hw_pdef_get(hw_pkey k);  /* NULL out of range */
/* The key's id in a scope: 0, or PP_ENOTFOUND. */
int hw_pdef_find(hw_pscope scope, const char *key, hw_pkey *out);
/* 0 when (scope, key) is registered and value finite and within its bounds; else PP_EUSAGE or
 * PP_ERANGE with a message naming the key and its bounds. */
int hw_pdef_check(const char *scope, const char *key, double value, char *err, size_t errlen);

/* ---- software profiles ---------------------------------------------------------------------- *
 *
 * A training framework (scope HW_SCOPE_FRAMEWORK: megatron, torchtitan, llm-foundry, deepspeed,
 * pytorch, maxtext, ...) or a serving engine (HW_SCOPE_ENGINE: vllm, sglang, trtllm) is a named
 * profile in the database: what it is (version, source) and the parameters of its scope, each
 * registered once; a profile may inherit another's (its base).  Found by name; a loaded profile
 * is a value in memory that fits change with hw_profile_set (the database only when a fit is
 * saved).  Read-only once built, it may be shared by threads. */

typedef struct hw_profile hw_profile;

/* The default profiles when none is chosen. */
#define HW_DEFAULT_FRAMEWORK "megatron"
#define HW_DEFAULT_ENGINE "vllm"

/* PP_EUSAGE naming the known profiles when there is none of that name. */
int hw_profile_find(hw_db *db, hw_pscope kind, const char *name, hw_profile **out, char *err, size_t errlen);
/* The same with flags: HW_PROFILE_DEFAULTS reads the profile without its fitted parameters
 * (the starting point of a fit that must not see the shipped fits, as cross-validation). */
enum { HW_PROFILE_DEFAULTS = 1 << 0 };
int hw_profile_load(hw_db *db, hw_pscope kind, const char *name, unsigned flags, hw_profile **out, char *err,
		    size_t errlen);
hw_profile *hw_profile_dup(const hw_profile *p); /* NULL when out of memory */
void hw_profile_free(hw_profile *p);
/* Names of the profiles of a kind, sorted; *names is one malloc'd block, NULL-terminated. */
int hw_profile_names(hw_db *db, hw_pscope kind, char ***names, size_t *n, char *err, size_t errlen);
hw_pscope hw_profile_kind(const hw_profile *p);
const char *hw_profile_name(const hw_profile *p);
const char *hw_profile_version(const hw_profile *p);
/* The last profile of its base chain: the one whose fitted parameters the chain shares. */
const char *hw_profile_root(const hw_profile *p);
/* The profile `level` steps below the root on its chain (0: the root; past the profile itself:
 * the profile). */
const char *hw_profile_ancestor(const hw_profile *p, int level);
/* A parameter of the profile's scope (0 for another scope's key), and where it came from. */
double hw_profile_get(const hw_profile *p, hw_pkey k);
hw_prov hw_profile_prov(const hw_profile *p, hw_pkey k);
/* Sets a parameter in memory (fits); PP_EUSAGE/PP_ERANGE as hw_pdef_check. */
int hw_profile_set(hw_profile *p, hw_pkey k, double v, char *err, size_t errlen);
/* The profile and every parameter with its value, provenance and meaning. */
struct cJSON *hw_profile_describe(const hw_profile *p);

/* ---- parameter values ---------------------------------------------------------------------- */

/* Parameters of the cost model, per GPU (scope "gpu") or per system (scope "system").  Origins
 * in order of precedence: measured, fitted, user, default. */
typedef struct hw_param {
	double value;
	char origin[12];
	char method[160];
	char source[200];
} hw_param;

/* Looks a parameter up: the user's own rows (calibrations, fits, values set by hand) before
 * the shipped ones; within each, measured before fitted before user before default.
 * PP_ENOTFOUND when no row exists. */
int hw_param_get(hw_db *db, const char *scope, const char *subject, const char *key, hw_param *out);
/* Stores a fitted (or measured/user) parameter, replacing one of the same origin. */
int hw_param_set(hw_db *db, const char *scope, const char *subject, const char *key, double value,
		 const char *origin, const char *method, const char *source, int64_t run_id, char *err, size_t errlen);

/* ---- calibration runs ---------------------------------------------------------------------- */

typedef enum hw_coll {
	HW_ALL_REDUCE, HW_ALL_GATHER, HW_REDUCE_SCATTER, HW_ALL_TO_ALL, HW_BROADCAST, HW_REDUCE,
	HW_SEND_RECV, HW_NCOLL
} hw_coll;
const char *hw_coll_name(hw_coll op); /* all_reduce, all_gather, ... */
int hw_coll_parse(const char *s, hw_coll *out);
/* nccl-tests' bus-bandwidth factor: busbw = algbw * factor (2(n-1)/n for all-reduce ...). */
double hw_coll_busbw_factor(hw_coll op, int ranks);

typedef struct hw_run_info {
	const char *system;  /* must exist in the database */
	const char *kind;    /* "calibrate" or "import" */
	const char *host, *driver, *cuda, *nccl, *gpu_name, *note;
	int nodes, gpus_per_node;
} hw_run_info;

typedef struct hw_coll_row {
	hw_coll op;
	int ranks, nodes;
	int64_t bytes;       /* nccl-tests 'size' */
	double time_s;
	double algbw_gbps, busbw_gbps;
	bool in_place;
	const char *dtype, *algorithm, *origin;
} hw_coll_row;

/* Whether a measured collective row is physically possible on the system: 0, or PP_EINPUT with
 * what is wrong in err ("out-of-place all_reduce of B bytes at X GB/s ...").  Above: a GPU
 * moves at most its NVLink and its share of the node's NICs each way, and a bus bandwidth
 * (nccl-tests' ring count) reaches twice that when a switch reduces in the network (NVLS,
 * SHARP); 10% more for clocks and rounding.  Below: slower than a thousandth of that after a
 * second of latency is no link at work.  Every collective row stored passes it. */
int hw_coll_row_check(const hw_system *sys, const hw_coll_row *row, char *err, size_t errlen);

typedef struct hw_run hw_run;
/* A run is one write transaction: rows added to it appear together at hw_run_commit, or not at
 * all (hw_run_abort, an error, or the process dying before the commit). */
int hw_run_begin(hw_db *db, const hw_run_info *info, hw_run **out, char *err, size_t errlen);
int64_t hw_run_id(const hw_run *run);
int hw_run_add_coll(hw_run *run, const hw_coll_row *row, char *err, size_t errlen);
int hw_run_add_gemm(hw_run *run, int device, hw_dtype dtype, int64_t m, int64_t n, int64_t k, double time_s,
		    char *err, size_t errlen);
int hw_run_add_membw(hw_run *run, int device, const char *kind, int64_t bytes, double time_s, char *err,
		     size_t errlen);
int hw_run_commit(hw_run *run, bool complete, char *err, size_t errlen); /* frees run */
void hw_run_abort(hw_run *run);                                           /* frees run */

/* The measurements that apply to a system, for fitting: collective rows of its complete runs,
 * GEMM and bandwidth rows of complete runs on its GPU (as the cost model reads them), or only
 * those of run `run_id` when it is > 0 (PP_ENOTFOUND when there is no such complete run for the
 * system or its GPU).  The arrays are malloc'd; hw_meas_free releases them.  Collective rows
 * carry no dtype, algorithm or origin strings. */
typedef struct hw_gemm_row {
	hw_dtype dtype;
	int64_t m, n, k;
	double time_s;
	int64_t run_id;
} hw_gemm_row;
typedef struct hw_membw_row {
	char kind[16]; /* copy, readwrite, triad */
	int64_t bytes; /* read + written */
	double time_s;
	int64_t run_id;
} hw_membw_row;
typedef struct hw_meas {
	hw_coll_row *coll;
	int64_t *coll_run; /* run of each collective row */
	size_t ncoll;
	hw_gemm_row *gemm;
	size_t ngemm;
	hw_membw_row *membw;
	size_t nmembw;
} hw_meas;
int hw_meas_get(hw_db *db, const char *system, int64_t run_id, hw_meas *out, char *err, size_t errlen);
void hw_meas_free(hw_meas *m);

/* Calibration runs as JSON (newest first), and a comparison of two runs' measurements. */
int hw_runs(hw_db *db, struct cJSON **out, char *err, size_t errlen);
int hw_run_diff(hw_db *db, int64_t a, int64_t b, struct cJSON **out, char *err, size_t errlen);

/* Stores a validation run (predicted vs measured step time of a replayed plan). */
int hw_validation_add(hw_db *db, const char *system, const char *plan_json, double predicted_s, double measured_s,
		      int steps, const char *note, char *err, size_t errlen);

/* A replay's measurements: the median of the timed steps against the prediction, each step's
 * time, and where and how it ran. */
typedef struct hw_validation {
	const char *system, *model;
	const char *plan_json;   /* the configuration replayed (a JSON document) */
	double predicted_s;      /* the simulated step */
	double measured_s;       /* the median of step_s */
	const double *step_s;    /* each timed step, seconds (> 0) */
	int steps, warmup;
	int gpus, nodes;
	const char *host, *gpu_name, *driver, *cuda, *nccl, *note; /* NULL: unknown */
} hw_validation;
/* Stores the run and its steps in one transaction (nothing on any error); *id (may be NULL)
 * gets the run's id.  The system must exist (PP_ENOTFOUND); times must be positive and finite
 * (PP_ERANGE). */
int hw_validation_store(hw_db *db, const hw_validation *v, int64_t *id, char *err, size_t errlen);
/* Validation runs, newest first, with their steps and error, as a JSON array. */
int hw_validations(hw_db *db, struct cJSON **out, char *err, size_t errlen);

/* ---- the cost model ------------------------------------------------------------------------ */


/* Builds the cost model of one system: reads its GPU, link figures, parameters and measured
 * tables once. */
int hw_cost_new(hw_db *db, const char *system, hw_cost **out, char *err, size_t errlen);
void hw_cost_free(hw_cost *c);
const hw_system *hw_cost_system(const hw_cost *c);
/* Uses only n of each node's GPUs (a job on part of every node, or nodes of fewer GPUs): the
 * node-wide NVLink domain shrinks to n, each GPU keeps its NIC bandwidth.  PP_EUSAGE when n is
 * not from 1 to the node's GPUs. */
int hw_cost_use_gpus_per_node(hw_cost *c, int n, char *err, size_t errlen);

/* The GEMM shape model: the fraction of (peak x gemm_eff) an m x n x k GEMM reaches on `gpu`
 * with tile prologue/epilogue cost k_ramp (wave and tile quantization, split-K, k / (k + k_ramp));
 * see cost.c.  Public so that calibrate/ can fit gemm_k_ramp against measured GEMMs. */
double hw_gemm_shape_eff(const hw_gpu *gpu, double k_ramp, double m, double n, double k);

/* ---- kernels: the seam between software and hardware --------------------------------------- *
 *
 * A kernel is described by its full shape and implementation; hw_cost_kernel prices it on the
 * bound system from measured tables first (GEMM shapes, bandwidth), then the GPU's measured or
 * datasheet rates.  What a framework or engine does (which kernels, in which dtype) is decided
 * by whoever builds the kernel (sim/kernels.c); nothing here knows about schedules. */

typedef enum hw_kkind { HW_K_GEMM, HW_K_ATTN, HW_K_MEM, HW_K_CONV, HW_NKKINDS } hw_kkind;
const char *hw_kkind_name(hw_kkind k); /* "gemm", "attention", "memory", "conv" */

/* Fused attention kernels by generation (their rates are the GPU's): FlashAttention-2-class
 * kernels (FA2, PyTorch SDPA's flash backend, CK on AMD), and the architecture's fastest
 * (FlashAttention-3 or cuDNN on Hopper, cuDNN or FlashAttention-4 on Blackwell; the FA2 class
 * where the GPU has nothing faster). */
typedef enum hw_attn_impl { HW_ATTN_FLASH2, HW_ATTN_FLASH3, HW_NATTN } hw_attn_impl;

typedef struct hw_kernel {
	hw_kkind kind;
	hw_dtype dtype;      /* GEMM, conv, attention: the dtype it computes in */
	/* GEMM: batch x [m x k] x [k x n]; conv: the implicit GEMM m x n x k.  m may be fractional
	 * (MoE tokens per expert under load imbalance). */
	double m, n, k, batch;
	double wbytes;       /* GEMM: bytes per element of the k x n operand (the weights) when stored
	                      * narrower than dtype (weight-only int8 1, int4 0.5); 0: dtype's */
	/* fused attention: b sequences of sq queries over sk keys, heads query heads and kv_heads
	 * key/value heads, head dims dqk and dv; density is the fraction of the sq x sk scores
	 * computed (1: all, 0.5: a causal square); bwd the backward kernel */
	hw_attn_impl impl;
	double b, heads, kv_heads, sq, sk, dqk, dv, density;
	double kvbytes;      /* attention: bytes per K/V element (an fp8 KV cache: 1); 0: dtype's */
	bool kv_latent;      /* K and V are one shared vector of dqk per token and KV head (MLA decode
	                      * with absorbed projections): K/V bytes sk x kv_heads x dqk */
	bool bwd;
	double bytes;        /* memory-bound: bytes read plus written */
} hw_kernel;

/* FLOPs a kernel executes (GEMM and conv 2mnk per batch; attention 2 b heads sq sk (dqk + dv)
 * density, the backward 2.5 times that: it recomputes the scores, then dV, dP, dQ and dK), and
 * the bytes it moves through HBM. */
double hw_kernel_flops(const hw_kernel *k);
double hw_kernel_bytes(const hw_kernel *k);
/* Seconds the kernel takes on the bound system, and where the figure came from. */
double hw_cost_kernel(const hw_cost *c, const hw_kernel *k, hw_prov *prov);

/* A collective (or a send/recv) among `ranks` GPUs, `per_node` of them on each node
 * (per_node == ranks: inside one scale-up domain).  `bytes` is nccl-tests' size: the message
 * of an all-reduce, the gathered total of an all-gather or reduce-scatter.  The transfer is
 * described as a flow so the engine can share links among concurrent flows:
 * time alone = latency_s + wire_bytes / bw.  `inter` says whether it leaves the node. */
typedef struct hw_flow {
	double latency_s;
	double wire_bytes; /* bytes * bus factor: what each rank moves over its bottleneck link */
	double bw;         /* achieved bus bandwidth alone, bytes/s */
	bool inter;
	hw_prov prov;
} hw_flow;
void hw_cost_coll(const hw_cost *c, hw_coll op, int ranks, int per_node, double bytes, hw_flow *out);
double hw_cost_coll_time(const hw_cost *c, hw_coll op, int ranks, int per_node, double bytes, hw_prov *prov);

/* A GPU or system parameter of the bound system, as loaded (gpu and system scopes only). */
double hw_cost_param(const hw_cost *c, hw_pkey k);

/* Physical per-GPU link capacities the engine shares among flows, bytes/s. */
double hw_cost_scaleup_bw(const hw_cost *c);
double hw_cost_nic_bw(const hw_cost *c); /* per GPU: node NIC bandwidth / GPUs per node */

/* A serving engine's TP all-reduce: its own one-shot kernel for small messages inside the
 * NVLink domain when oneshot_us > 0 (the engine's latency of one; vLLM's, TensorRT-LLM's and
 * SGLang's custom all-reduce), NCCL's model otherwise. */
double hw_cost_serve_allreduce(const hw_cost *c, double oneshot_us, int ranks, int per_node, double bytes,
			       hw_prov *prov);

/* A JSON account of the parameters in use and their provenance (for 'hw show'). */
struct cJSON *hw_cost_describe(const hw_cost *c);

#endif /* HW_H */
