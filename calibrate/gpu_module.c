/*
 * gpu_module.c -- the one symbol the GPU module (paraplan-gpu.so: gpu.c, replay_gpu.c,
 * gpu_util.c) exports: the table gpu_load.c calls through.  Everything else in the module is
 * compiled with hidden visibility, so its cal_gpu_probe and the others bind to the module's own
 * definitions and never to the program's forwarding ones of the same name.
 */
#include "config.h"
#include "calibrate/cal_int.h"

__attribute__((visibility("default"))) extern const cal_gpu_module cal_gpu_module_v1;

const cal_gpu_module cal_gpu_module_v1 = {
	.abi = CAL_GPU_MODULE_ABI,
	.version = PACKAGE_VERSION,
	.probe = cal_gpu_probe,
	.run = cal_gpu_run,
	.replay = cal_replay_run,
};
