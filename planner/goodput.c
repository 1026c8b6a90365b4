/*
 * goodput.c -- time to train with failures and checkpoints: how much of a cluster's time
 * trains, given how often it is interrupted, what a checkpoint costs to write and a restart to
 * come back, and how often it checkpoints (docs/finetune-goodput.md).
 *
 * Failures arrive as a Poisson process at a rate proportional to the GPUs (each GPU-hour as
 * likely to be interrupted as any other), so a job on N GPUs has a mean time between
 * interruptions M = 1 / (N lambda).  The default lambda is Llama 3's: 419 unexpected
 * interruptions in a 54-day snapshot of pre-training on 16,384 H100 GPUs (Llama Team, "The Llama
 * 3 Herd of Models", arXiv 2407.21783, section 3.3.4 and Table 5): 419 / (54 x 24 x 16,384) =
 * 1.97e-5 per GPU-hour, one every 3.1 hours on those 16,384 GPUs.
 *
 * A checkpoint holds the model state a restart needs: the trainable parameters in the training
 * dtype and their optimizer state (fp32 master copy and Adam's two moments: 12 bytes; 8 when the
 * weights are fp32 themselves), 14 bytes a parameter in bf16; a LoRA fine-tuning saves only its
 * adapters (the frozen base is read from where it came from).  It is written and read back at
 * the storage bandwidth, by default Llama 3's share: Tectonic sustained 2 TB/s for the 16,384
 * GPUs (same paper, section 3.3.1), 122 MB/s a GPU, the aggregate growing with the job.
 *
 * Between checkpoints every tau seconds of training, each interruption loses the work since the
 * last checkpoint, then the job restarts: R = a fixed restart (detection, rescheduling, process
 * and NCCL start-up, warm-up) plus reading the checkpoint.  Daly's complete model (J. T. Daly,
 * "A higher order estimate of the optimum checkpoint interval for restart dumps", Future
 * Generation Computer Systems 22 (2006) 303-312), exact for Poisson failures with
 * failures during restarts too: the wall time for T_s of work is
 *     T_w = M e^{R/M} (e^{(tau + delta)/M} - 1) T_s / tau,
 * delta the checkpoint's write time, and goodput = T_s / T_w.  The interval that maximizes it is
 * Daly's higher-order estimate (same paper):
 *     tau = sqrt(2 delta M) [1 + sqrt(delta / 2M) / 3 + (delta / 2M) / 9] - delta   (delta < 2M)
 *     tau = M                                                                        (otherwise)
 * which refines Young's first-order sqrt(2 delta M) (J. W. Young, "A first order approximation
 * to the optimum checkpoint interval", CACM 17(9), 1974).  Checkpoints are taken as blocking
 * writes; an asynchronous checkpoint (a copy to host memory, written while training goes on)
 * is a smaller delta: give its blocking part as the bandwidth.
 */
#include "config.h"
#include "planner/plan_int.h"

#include <math.h>
#include <string.h>

void
plan_failure_opts_init(plan_failure_opts *o)
{
	memset(o, 0, sizeof *o);
	o->failures_per_gpu_hour = PLAN_FAILURES_PER_GPU_HOUR;
	o->storage_bps_per_gpu = PLAN_STORAGE_BPS_PER_GPU;
	o->restart_s = PLAN_RESTART_S;
}

double
plan_checkpoint_bytes(const model *m, const sim_train_cfg *c)
{
	sim_ft_totals t;
	sim_ft_totals_get(m, c, &t);
	double e = c->dtype == HW_FP32 || c->dtype == HW_TF32 ? 4.0 : 2.0;
	double opt = e >= 4.0 ? 8.0 : 12.0;
	return t.trainable * (e + opt);
}

double
plan_daly_interval(double delta_s, double mtbf_s)
{
	if (!(delta_s >= 0.0) || !(mtbf_s > 0.0))
		return 0.0;
	if (delta_s >= 2.0 * mtbf_s)
		return mtbf_s;
	double x = delta_s / (2.0 * mtbf_s);
	return sqrt(2.0 * delta_s * mtbf_s) * (1.0 + sqrt(x) / 3.0 + x / 9.0) - delta_s;
}

double
plan_daly_goodput(double tau_s, double delta_s, double restart_s, double mtbf_s)
{
	if (!(tau_s > 0.0))
		return 0.0;
	if (isinf(mtbf_s))
		return tau_s / (tau_s + delta_s);
	/* expm1 keeps the precision where (tau + delta) / M is small (rare failures) */
	double wall = mtbf_s * exp(restart_s / mtbf_s) * expm1((tau_s + delta_s) / mtbf_s);
	return wall > 0.0 ? tau_s / wall : 0.0;
}

int
plan_goodput(const plan_failure_opts *o, double gpus, double checkpoint_bytes, plan_goodput_result *out, char *err,
	     size_t errlen)
{
	memset(out, 0, sizeof *out);
	if (!(gpus >= 1.0))
		return pp_err(err, errlen, PP_EUSAGE, "goodput needs at least one GPU, got %g", gpus);
	if (!(o->failures_per_gpu_hour >= 0.0) || !isfinite(o->failures_per_gpu_hour))
		return pp_err(err, errlen, PP_EUSAGE, "--failure-rate must be a non-negative number, got %g",
			      o->failures_per_gpu_hour);
	if (!(o->storage_bps_per_gpu > 0.0) && !(o->storage_bps > 0.0))
		return pp_err(err, errlen, PP_EUSAGE, "--checkpoint-gbps must be positive");
	if (!(o->restart_s >= 0.0) || !(o->interval_s >= 0.0) || !(checkpoint_bytes >= 0.0))
		return pp_err(err, errlen, PP_EUSAGE, "--restart-min and --checkpoint-interval-min must not be negative");
	double bw = o->storage_bps > 0.0 ? o->storage_bps : o->storage_bps_per_gpu * gpus;
	out->checkpoint_bytes = checkpoint_bytes;
	out->storage_bps = bw;
	out->write_s = checkpoint_bytes / bw;
	out->restart_s = o->restart_s + checkpoint_bytes / bw; /* restart, then read the checkpoint */
	double rate_s = o->failures_per_gpu_hour * gpus / 3600.0;
	out->mtbf_s = rate_s > 0.0 ? 1.0 / rate_s : INFINITY;
	if (rate_s > 0.0) {
		out->young_s = sqrt(2.0 * out->write_s * out->mtbf_s);
		out->interval_s = o->interval_s > 0.0 ? o->interval_s : plan_daly_interval(out->write_s, out->mtbf_s);
		if (!(out->interval_s > 0.0)) /* a free checkpoint: as often as one likes; goodput e^{-R/M} */
			out->interval_s = out->young_s > 0.0 ? out->young_s : 1.0;
	} else {
		out->young_s = INFINITY;
		out->interval_s = o->interval_s; /* none needed: no checkpoint at all unless asked */
	}
	if (rate_s > 0.0)
		out->goodput = plan_daly_goodput(out->interval_s, out->write_s, out->restart_s, out->mtbf_s);
	else
		out->goodput = out->interval_s > 0.0 ? out->interval_s / (out->interval_s + out->write_s) : 1.0;
	out->failures_per_day = rate_s * 86400.0;
	return 0;
}
