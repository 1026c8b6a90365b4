/*
 * gpu_load.c -- the GPU programs of 'paraplan calibrate' and 'paraplan replay' (and 'plan train
 * --validate'), reached through a module loaded on demand.
 *
 * calibrate/gpu.c, replay_gpu.c and gpu_util.c link CUDA, cuBLASLt, NCCL and MPI.  Linked into
 * the program, those libraries were loaded and initialised by every command (75 ms of CPU and
 * 200 MiB for 'paraplan --version'); built as a module (paraplan-gpu.so, by the same make), only
 * the commands that measure or replay on GPUs load them.  This file implements the public
 * cal_gpu_* and cal_replay_run of cal.h by loading the module on first use and calling its
 * table (cal_gpu_module in cal_int.h); builds without CUDA and NCCL link gpu_none.c instead.
 *
 * The module calls back into the rest of paraplan (the hardware database, the replay's host
 * half, the simulator): the program exports its symbols (-Wl,--export-dynamic) and links the
 * whole library, so those references resolve to the program's own copies.  It is loaded with
 * RTLD_GLOBAL because Open MPI loads plug-ins of its own that look for libmpi's symbols in the
 * global scope.
 *
 * Where the module is looked for, first found wins:
 *   $PARAPLAN_GPU_MODULE (a path), for tests and unusual installs;
 *   beside the running program (the build tree);
 *   ../lib/paraplan/ from the program's directory (an install moved as a whole);
 *   PKGLIBDIR, the directory configure chose and 'make install' fills.
 */
#include "config.h"
#include "calibrate/cal_int.h"
#include "common/pp.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PKGLIBDIR
#define PKGLIBDIR ""
#endif

static const cal_gpu_module *loaded;

/* The directory of the running program, or "" when /proc does not tell. */
static void
exe_dir(char *buf, size_t n)
{
	ssize_t len = readlink("/proc/self/exe", buf, n - 1);
	if (len <= 0) {
		buf[0] = '\0';
		return;
	}
	buf[len] = '\0';
	char *slash = strrchr(buf, '/');
	if (slash != NULL)
		*slash = '\0';
	else
		buf[0] = '\0';
}

/* The first candidate path that exists into path; false (path: the last one tried) when none. */
static bool
find_module(char *path, size_t n)
{
	const char *env = getenv("PARAPLAN_GPU_MODULE");
	if (env != NULL && env[0] != '\0') {
		pp_strlcpy(path, env, n);
		return true; /* an explicit choice is tried even when it is not there: dlopen says why */
	}
	char dir[PATH_MAX];
	exe_dir(dir, sizeof dir);
	char cand[3][PATH_MAX + 64];
	int nc = 0;
	if (dir[0] != '\0') {
		snprintf(cand[nc++], sizeof cand[0], "%s/%s", dir, CAL_GPU_MODULE_NAME);
		snprintf(cand[nc++], sizeof cand[0], "%s/../lib/paraplan/%s", dir, CAL_GPU_MODULE_NAME);
	}
	if (PKGLIBDIR[0] != '\0')
		snprintf(cand[nc++], sizeof cand[0], "%s/%s", PKGLIBDIR, CAL_GPU_MODULE_NAME);
	struct stat st;
	for (int i = 0; i < nc; i++) {
		pp_strlcpy(path, cand[i], n);
		if (stat(cand[i], &st) == 0)
			return true;
	}
	return false;
}

int
cal_gpu_module_load(const cal_gpu_module **out, char *err, size_t errlen)
{
	if (loaded != NULL) {
		*out = loaded;
		return 0;
	}
	*out = NULL;
	char path[PATH_MAX + 64] = "";
	if (!find_module(path, sizeof path))
		return pp_err(err, errlen, PP_ENODEV,
			      "GPU support not found: %s is not beside the program nor in %s (it is built with paraplan "
			      "where configure finds CUDA and NCCL, and installed by 'make install'; PARAPLAN_GPU_MODULE "
			      "names another path)",
			      CAL_GPU_MODULE_NAME, PKGLIBDIR[0] ? PKGLIBDIR : "the configured library directory");
	void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	if (h == NULL) {
		const char *why = dlerror();
		return pp_err(err, errlen, PP_ENODEV, "GPU support not found: cannot load %s: %s", path,
			      why ? why : "unknown error");
	}
	const cal_gpu_module *m = dlsym(h, CAL_GPU_MODULE_SYMBOL);
	if (m == NULL)
		return pp_err(err, errlen, PP_ENODEV, "GPU support not found: %s has no %s: not a paraplan GPU module",
			      path, CAL_GPU_MODULE_SYMBOL);
	if (m->abi != CAL_GPU_MODULE_ABI || strcmp(m->version, PACKAGE_VERSION) != 0)
		return pp_err(err, errlen, PP_ENODEV,
			      "GPU support not found: %s is from paraplan %s (module interface %d), this is paraplan %s "
			      "(interface %d): install the module built with this program",
			      path, m->version, m->abi, PACKAGE_VERSION, CAL_GPU_MODULE_ABI);
	/* the handle stays open for the life of the process: CUDA and NCCL keep state in it */
	loaded = m;
	*out = m;
	return 0;
}

bool
cal_gpu_built(void)
{
	return true;
}

bool
cal_mpi_built(void)
{
#ifdef HAVE_MPI
	return true;
#else
	return false;
#endif
}

int
cal_gpu_probe(int *ndev, char *err, size_t errlen)
{
	const cal_gpu_module *m;
	*ndev = 0;
	int rc = cal_gpu_module_load(&m, err, errlen);
	return rc != 0 ? rc : m->probe(ndev, err, errlen);
}

int
cal_gpu_run(const cal_gpu_opts *opts, struct cJSON **report, bool *is_root, char *err, size_t errlen)
{
	const cal_gpu_module *m;
	if (report)
		*report = NULL;
	if (is_root)
		*is_root = true;
	int rc = cal_gpu_module_load(&m, err, errlen);
	return rc != 0 ? rc : m->run(opts, report, is_root, err, errlen);
}

int
cal_replay_run(const cal_replay_opts *o, struct cJSON **report, bool *is_root, char *err, size_t errlen)
{
	const cal_gpu_module *m;
	if (report)
		*report = NULL;
	if (is_root)
		*is_root = true;
	int rc = cal_gpu_module_load(&m, err, errlen);
	return rc != 0 ? rc : m->replay(o, report, is_root, err, errlen);
}
