/*
 * cal_int.h -- private to calibrate/: the recorder that every measurement program writes a run
 * through, and the Ctrl-C flag it checks between measurements.
 *
 * The recorder wraps one hw_run (one write transaction): rows are added as they are measured
 * and the run is committed only when the program finished without error and without an
 * interrupt; otherwise it is rolled back and nothing of it remains.  On MPI ranks other than 0
 * the recorder holds no run and its calls do nothing, so measurement code is the same on all.
 */
#ifndef CAL_INT_H
#define CAL_INT_H

#include "calibrate/cal.h"

/* SIGINT and SIGTERM set a flag instead of killing the process; restore puts the previous
 * handlers back.  caught() is what loops check between measurements. */
void cal_sig_install(void);
void cal_sig_restore(void);
bool cal_sig_caught(void);
void cal_sig_clear(void);

/* The median of v[0..n) (n >= 1), which it sorts in place (GSL). */
double cal_median(double *v, size_t n);

/* Random non-zero values for GPU buffers (zeros would let tensor cores idle at lower power):
 * magnitudes 0.5 .. 2 with random signs and mantissas, of element size elsz (4 fp32; 2 bf16
 * when bf16, else fp16; 1 fp8 e4m3, never its NaN pattern), from seed.  bytes need not be a
 * multiple of elsz (the tail is left as it is). */
void cal_random_fill(void *buf, size_t bytes, int elsz, bool bf16, uint64_t seed);

typedef struct cal_rec {
	hw_run *run;   /* NULL: this process does not write */
	size_t coll, gemm, membw; /* rows added */
} cal_rec;

int cal_rec_begin(hw_db *db, const hw_run_info *info, cal_rec *rec, char *err, size_t errlen);
/* PP_EINTR once Ctrl-C was pressed (with a message saying nothing was written). */
int cal_rec_check(const cal_rec *rec, char *err, size_t errlen);
int cal_rec_gemm(cal_rec *rec, int device, hw_dtype t, int64_t m, int64_t n, int64_t k, double time_s, char *err,
		 size_t errlen);
int cal_rec_membw(cal_rec *rec, int device, const char *kind, int64_t bytes, double time_s, char *err, size_t errlen);
int cal_rec_coll(cal_rec *rec, const hw_coll_row *row, char *err, size_t errlen);
/* Commits when rc is 0 and no interrupt came (*run_id gets the run), else rolls back and
 * returns rc (or PP_EINTR). */
int cal_rec_end(cal_rec *rec, int rc, int64_t *run_id, char *err, size_t errlen);

/* ---- the GPU module ------------------------------------------------------------------------ *
 * The GPU programs (gpu.c, replay_gpu.c, gpu_util.c: CUDA, cuBLASLt, NCCL, MPI) are built into a
 * module of their own, CAL_GPU_MODULE_NAME, which exports one table; gpu_load.c finds and loads
 * it on the first call of cal_gpu_probe, cal_gpu_run or cal_replay_run and forwards them there.
 * The module resolves the rest of paraplan against the program that loads it, so both must come
 * from the same build: abi and version are checked before anything is called. */
#define CAL_GPU_MODULE_NAME "paraplan-gpu.so"
#define CAL_GPU_MODULE_SYMBOL "cal_gpu_module_v1"
#define CAL_GPU_MODULE_ABI 1

typedef struct cal_gpu_module {
	int abi;             /* CAL_GPU_MODULE_ABI of the build that made it */
	const char *version; /* PACKAGE_VERSION of that build */
	int (*probe)(int *ndev, char *err, size_t errlen);
	int (*run)(const cal_gpu_opts *opts, struct cJSON **report, bool *is_root, char *err, size_t errlen);
	int (*replay)(const cal_replay_opts *o, struct cJSON **report, bool *is_root, char *err, size_t errlen);
} cal_gpu_module;

/* Loads the module once (later calls return the same table).  PP_ENODEV with "GPU support not
 * found: ..." naming the path and the reason when it is missing, does not load or is of
 * another build. */
int cal_gpu_module_load(const cal_gpu_module **out, char *err, size_t errlen);

#endif
