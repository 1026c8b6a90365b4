#!/bin/sh
# The command line itself: options declared once per command and matched only in full, help
# for every command and workload, exit statuses that agree.
. "$top_srcdir/tests/lib.sh"

# a bare 'paraplan' does nothing: usage on stderr, status 2
run 2
expect_no_out
expect_err "usage: paraplan COMMAND"
# 'help COMMAND WORKLOAD' is that workload's help
run 0 help plan train
expect_out "usage: paraplan plan train"
expect_out "  --global-batch G"
run 0 help plan serve
expect_out "usage: paraplan plan serve"
run 0 help simulate train
expect_out "usage: paraplan simulate train"
run 0 help hw
expect_out "usage: paraplan hw list"
run 2 help plan nothing
expect_err "unknown workload"
run 2 help nothing
expect_err "unknown command"
# every command's help lists its options from its table
for c in "simulate train" "simulate serve" "simulate infer" "plan train" "plan serve" report validate calibrate \
	replay import hw model; do
	# shellcheck disable=SC2086
	run 0 $c --help
	expect_out "Options:"
	expect_out "  --help"
done

# options match only in full: a prefix is an error that names the option it may have meant
run 2 plan train --model llama-3-8b --system dgx-h100 --gpus 8 --global-batch 64 --tp-across
expect_err "unknown option \"--tp-across\" (options match only in full: did you mean --tp-across-nodes?)"
run 2 simulate train --model llama-3-8b --system dgx-h100 --gpus 8 --t 8 --pp 1 --micro-batch 1 --global-batch 8
expect_err "unknown option \"--t\""
run 2 plan train --model llama-3-8b --system dgx-h100 --gpus 8 --global-batch 64 --top 3 --top 4
expect_err "option \"--top\" is given more than once"
run 2 hw list --json=yes
expect_err "takes no value"
run 2 hw list --db --json
expect_err "option \"--db\" needs a value"
# values with '=', operands before options
run 0 hw --json list
json_check "$TMPD/out" "any(s['name'] == 'dgx-h100' for s in d['systems'])"
run 0 simulate train --model=llama-3-8b --system=dgx-h100 --gpus=8 --tp=8 --pp=1 --micro-batch=1 --global-batch=8 --json
json_check "$TMPD/out" "d['config']['tp'] == 8"

# an unknown system or model is a usage error (2) everywhere; so is an unknown run
run 2 hw show nothing-like-it
expect_err "unknown GPU or system \"nothing-like-it\""
run 2 hw diff 1 2
run 2 model show nothing-like-it
run 2 simulate train --model llama-3-8b --system nope --gpus 8 --tp 8 --pp 1 --micro-batch 1 --global-batch 8
expect_err "unknown system \"nope\""
run 2 simulate serve --model nothing-like-it --system dgx-h100 --tp 1 --rate 1
expect_err "unknown model"
run 2 plan serve --model llama-3-8b --systems nope --rate 1 --slo-ttft-p99 100 --slo-tpot-p99 100
expect_err "unknown system \"nope\""
run 2 import nccl-tests --system nope x.log
expect_err "unknown system \"nope\""
run 2 calibrate --fit --system nope
expect_err "unknown system \"nope\""
finish
