#!/bin/sh
# 'paraplan calibrate': the fit of stored measurements, the usage errors, and the no-GPU path
# (every test machine can take: CUDA_VISIBLE_DEVICES= hides the devices of one that has them).
. "$top_srcdir/tests/lib.sh"

awk -v d="$TMPD" '/^## BEGIN/ { n++; f = d "/block" n ".log"; next } /^## END/ { f = ""; next } f { print > f }' \
	"$top_srcdir/tests/data/nccl-tests-samples.txt"
DB="$TMPD/hw.db"

run 0 calibrate --help
expect_out "paraplan calibrate --fit --system NAME"
run 2 calibrate --fit
expect_err "--fit needs --system NAME"
run 2 calibrate --fit --system no-such-system --db "$DB"
expect_err "unknown system \"no-such-system\""
run 2 calibrate --fit --system dgx-h100 --gemm
expect_err "--fit fits stored measurements"
run 2 calibrate --run 3
expect_err "--run applies to --fit only"
run 2 calibrate --dtype fp64
expect_err "--dtype: \"fp64\" is not one of"
run 2 calibrate --max-bytes 12
expect_err "--max-bytes must be a number"
run 2 calibrate extra
expect_err "unexpected argument \"extra\""

# Nothing measured yet.
run 1 calibrate --fit --system gcp-a3-mega --db "$DB"
expect_err "gcp-a3-mega: no measurements to fit"

# The A3 Mega log: its inter-node efficiency, the way the shipped default was derived by hand.
run 0 import nccl-tests --system gcp-a3-mega --op all_reduce --db "$DB" "$TMPD/block5.log"
run 0 calibrate --fit --system gcp-a3-mega --db "$DB"
expect_out "all_reduce     16      2    31"
expect_out "coll_eff_inter"
expect_out "coll_alpha_us: no one-node curve"
run 0 calibrate --fit --system gcp-a3-mega --run 1 --db "$DB" --json
json_check "$TMPD/out" "[p for p in d['parameters'] if p['key'] == 'coll_eff_inter'][0]['value'] > 0.88 \
and [p for p in d['parameters'] if p['key'] == 'coll_eff_inter'][0]['value'] < 0.95 \
and d['collectives'][0]['busbw_determined'] and d['run_id'] == 1"
run 0 hw show gcp-a3-mega --db "$DB" --json
json_check "$TMPD/out" "[p for p in d['cost_model']['parameters'] if p['key'] == 'coll_eff_inter'][0]['provenance'] == 'fitted'"
run 1 calibrate --fit --system gcp-a3-mega --run 7 --db "$DB"
expect_err "no complete calibration run 7 of system gcp-a3-mega"
# Run 1 is of another system with the same GPU: its GEMM rows would count, its collectives do not.
run 1 calibrate --fit --system dgx-h100 --run 1 --db "$DB"
expect_err "dgx-h100: no measurements to fit in that run"
run 1 calibrate --fit --system dgx-a100 --run 1 --db "$DB"
expect_err "no complete calibration run 1 of system dgx-a100 or its GPU a100-sxm4-80gb"

# paraplan's own measurements of one H100 and one H200 (calibrate/measured, docs/calibration.md):
# imported, their replays listed, and fitted to the rates the runs showed -- the Hopper GEMM
# efficiencies (bf16 about 0.79 of the dense peak, fp8 about 0.69), a k ramp near 200-230 steps,
# about 5.6 us a GEMM beyond its compute, and HBM copies at 0.89-0.90 of the peak.
M="$top_srcdir/calibrate/measured"
run 0 hw import "$M/dgx-h100-1gpu-2026-11-28.json" --db "$TMPD/own.db"
run 0 hw import "$M/hgx-h200-1gpu-2026-11-28.json" --db "$TMPD/own.db"
run 0 hw validations --db "$TMPD/own.db" --json
json_check "$TMPD/out" "len(d['validations']) == 14 and sum(r['system'] == 'hgx-h200' for r in d['validations']) == 10"
run 0 calibrate --fit --system dgx-h100 --db "$TMPD/own.db" --json
json_check "$TMPD/out" "(lambda p: d['gemm_rows'] == 1590 and abs(p['gemm_eff_bf16'] - 0.791) < 0.005 \
and abs(p['gemm_eff_fp8'] - 0.689) < 0.005 and abs(p['gemm_eff_fp16'] - 0.742) < 0.005 \
and abs(p['gemm_k_ramp'] - 229) < 3 and abs(p['kernel_launch_us'] - 5.57) < 0.05 \
and abs(p['hbm_eff'] - 0.904) < 0.003 and d['gemm']['rms_rel_err'] < 0.11)\
({x['key']: x['value'] for x in d['parameters']})"
run 0 calibrate --fit --system hgx-h200 --db "$TMPD/own.db" --json
json_check "$TMPD/out" "(lambda p: d['gemm_rows'] == 2120 and abs(p['gemm_eff_bf16'] - 0.788) < 0.005 \
and abs(p['gemm_eff_fp8'] - 0.698) < 0.005 and abs(p['gemm_eff_tf32'] - 0.768) < 0.005 \
and abs(p['gemm_k_ramp'] - 192) < 3 and abs(p['kernel_launch_us'] - 5.62) < 0.05 \
and 0.88 < p['hbm_eff'] < 0.91 and d['gemm']['rms_rel_err'] < 0.12)\
({x['key']: x['value'] for x in d['parameters']})"

# --model: the named models' layers join the GEMM sweep; a name that is no transformer of the
# catalog or no file, and a model without --gemm, are usage errors (the shapes: tests/check_cal.c)
run 2 calibrate --gemm --model llama-3-8b,no-such-model --db "$TMPD/never.db"
expect_err "--model \"no-such-model\": unknown model"
run 2 calibrate --gemm --model resnet-101 --db "$TMPD/never.db"
expect_err "--model \"resnet-101\": not a transformer"
run 2 calibrate --membw --model llama-3-8b --db "$TMPD/never.db"
expect_err "--model adds GEMM shapes to the sweep: it needs --gemm"
run 2 calibrate --fit --system dgx-h100 --model llama-3-8b --db "$TMPD/never.db"
expect_err "it takes no measurement options"
CUDA_VISIBLE_DEVICES= run 1 calibrate --gemm --model llama-2-13b --system-name dgx-h100 --db "$TMPD/never.db"
[ ! -e "$TMPD/never.db" ] || fail "calibrate --model created a database without a GPU"

# Measuring without a GPU: an error naming the cause, and no database opened for writing.
CUDA_VISIBLE_DEVICES= run 1 calibrate --system-name dgx-h100 --db "$TMPD/never.db"
if grep -q "built without CUDA and NCCL" "$TMPD/err"; then :; else expect_err "no GPU found: "; fi
[ ! -e "$TMPD/never.db" ] || fail "calibrate created a database without a GPU"

# The GPU libraries are loaded only by the commands that use them (the module paraplan-gpu.so):
# the program itself does not need CUDA, cuBLAS, NCCL or MPI to start (glibc's loader lists what
# a program needs when LD_TRACE_LOADED_OBJECTS is set, as ldd does).
LD_TRACE_LOADED_OBJECTS=1 "$PARAPLAN" >"$TMPD/libs" 2>/dev/null
if grep -q "libc\.so" "$TMPD/libs"; then
	grep -E "libcudart|libcublas|libnccl|libmpi" "$TMPD/libs" && fail "paraplan links the GPU libraries at start"
fi
# A module that is missing or not a module: the GPU commands say so, exit 1, and write nothing.
if ! grep -q "built without CUDA and NCCL" "$TMPD/err"; then
	PARAPLAN_GPU_MODULE="$TMPD/none.so" run 1 calibrate --system-name dgx-h100 --db "$TMPD/never.db"
	expect_err "GPU support not found: cannot load $TMPD/none.so"
	printf 'not a module' >"$TMPD/bad.so"
	run 0 simulate train --model gpt-1.7b --system dgx-a100 --gpus 1 --micro-batch 1 --global-batch 4 --json
	cp "$TMPD/out" "$TMPD/plan.json"
	PARAPLAN_GPU_MODULE="$TMPD/bad.so" run 1 replay --plan "$TMPD/plan.json" --db "$TMPD/never.db"
	expect_err "GPU support not found: cannot load $TMPD/bad.so"
	[ ! -e "$TMPD/never.db" ] || fail "a GPU command without its module created a database"
fi
finish
