#!/bin/sh
# 'paraplan import nccl-tests' on the real logs of tests/data/nccl-tests-samples.txt, and the
# import runs in 'hw calibrations' and 'hw diff'.
. "$top_srcdir/tests/lib.sh"

# The sample blocks as the files a user would have (the '##' lines are the fixture's annotations).
awk -v d="$TMPD" '/^## BEGIN/ { n++; f = d "/block" n ".log"; next } /^## END/ { f = ""; next } f { print > f }' \
	"$top_srcdir/tests/data/nccl-tests-samples.txt"
[ -s "$TMPD/block6.log" ] || fail "sample blocks not extracted"
DB="$TMPD/hw.db"

run 0 import --help
expect_out "usage: paraplan import nccl-tests"
run 2 import
expect_err "missing what to import"
run 2 import ucc-tests --system dgx-h100 x.log
expect_err "unknown source \"ucc-tests\""
run 2 import nccl-tests "$TMPD/block5.log"
expect_err "--system is required"
run 2 import nccl-tests --system dgx-h100
expect_err "no files to import"
run 2 import nccl-tests --system dgx-h100 --op allreduce "$TMPD/block5.log"
expect_err "--op \"allreduce\" is not a collective"
run 2 import nccl-tests --system dgx-h100 --ranks 0 "$TMPD/block5.log"
expect_err "--ranks must be an integer"
run 2 import nccl-tests --system dgx-h100 --ranks 8 --nodes 2 --gpus-per-node 8 "$TMPD/block1.log"
expect_err "--ranks 8 disagrees with --nodes 2 x --gpus-per-node 8"
run 2 import nccl-tests --system no-such-system --db "$DB" "$TMPD/block5.log"
expect_err "unknown system \"no-such-system\""

# The device list gives 16 ranks on 2 hosts; --op names the collective of a file that does not.
run 0 import nccl-tests --system gcp-a3-mega --op all_reduce --db "$DB" "$TMPD/block5.log"
expect_out "all_reduce     16      2    62"
expect_out "338.83 GB/s"
expect_out "stored 62 rows as run 1 (import) for gcp-a3-mega"
# Several files, one run: a 32-rank old-format log and an 8-GPU sendrecv log need the rank count.
run 1 import nccl-tests --system dgx-a100 --db "$DB" --ranks 32 --op all_reduce "$TMPD/block1.log" "$TMPD/block6.log"
expect_err "block6.log:4: --op all_reduce, but line 1 says this is sendrecv_perf"
run 0 import nccl-tests --system dgx-a100 --db "$DB" --nodes 4 --gpus-per-node 8 --op all_reduce --json \
	--note "deepops 4-node run" "$TMPD/block1.log"
json_check "$TMPD/out" "d['run_id'] == 2 and d['groups'][0]['rows'] == 26 and d['blocks'][0]['nodes'] == 4 \
and abs(d['groups'][0]['peak_busbw_gbps'] - 191.05) < 0.01"
run 0 import nccl-tests --system dgx-a100 --db "$DB" --ranks 8 "$TMPD/block6.log"
expect_out "send_recv      8      1     8"
expect_out "(test name at line 1)"
# The srun- and mpirun-prefixed logs of two p5 runs.
run 0 import nccl-tests --system aws-p5 --db "$DB" --ranks 16 --op all_reduce "$TMPD/block3.log" "$TMPD/block4.log"
expect_out "all_reduce     16      2    76"
expect_out "2 half-rows skipped (size 0 or N/A)"

# Errors store nothing: a wrong rank count, a missing file, a log that is not nccl-tests output.
run 1 import nccl-tests --system dgx-a100 --db "$DB" --ranks 16 --op all_reduce "$TMPD/block1.log"
expect_err "block1.log:5: out-of-place busbw 15.02 GB/s does not match algbw 7.75 GB/s x 1.875"
run 1 import nccl-tests --system aws-p5 --db "$DB" --ranks 16 --op all_reduce "$TMPD/block3.log" "$TMPD/missing.log"
expect_err "missing.log: cannot open"
printf 'just some\nlog lines\n' > "$TMPD/notes.txt"
run 1 import nccl-tests --system aws-p5 --db "$DB" --ranks 16 "$TMPD/notes.txt"
expect_err "notes.txt: no nccl-tests result table found"
sed 's/  161.5   12.98/  171.5   12.98/' "$TMPD/block1.log" > "$TMPD/edited.log"
run 1 import nccl-tests --system dgx-a100 --db "$DB" --ranks 32 --op all_reduce "$TMPD/edited.log"
expect_err "edited.log:6: out-of-place algbw 12.98 GB/s does not match"

# The runs in 'hw calibrations' and 'hw diff'.
run 0 hw calibrations --db "$DB"
expect_out "import"
expect_out "deepops 4-node run"
expect_out "nccl-tests: block3.log, block4.log"
run 0 hw calibrations --db "$DB" --json
json_check "$TMPD/out" "d['schema'] == 'paraplan.hw-calibrations/1' and len(d['runs']) == 4 and all(r['kind'] == 'import' and r['status'] == 'complete' for r in d['runs']) \
and [r['collective_rows'] for r in d['runs']] == [76, 8, 26, 62] and d['runs'][3]['host'] == 'ztan-mig-235z'"
run 0 hw diff 1 4 --db "$DB"
expect_out "all_reduce ranks=16 nodes=2 bytes=1073741824"
run 0 hw diff 1 4 --db "$DB" --json
# Run 1 has 31 sizes, all in block 3 of run 4; block 4 repeats 6 of them (64 MiB .. 2 GiB).
json_check "$TMPD/out" "d['schema'] == 'paraplan.hw-diff/1' and len(d['rows']) == 31 + 6 and all(r['kind'] == 'collective' for r in d['rows'])"
run 0 hw show gcp-a3-mega --db "$DB"
expect_out "Measured collectives"

# The log's GPUs against the system's: H100 logs stored for an A100 system draw a warning (and
# are stored: the log may name a GPU the database does not know); the right system draws none.
W="$TMPD/warn.db"
run 0 import nccl-tests --system dgx-a100 --op all_reduce --db "$W" "$TMPD/block5.log"
expect_err "warning: $TMPD/block5.log:22: the log's GPUs are \"NVIDIA H100 80GB HBM3\", but dgx-a100 has a100-sxm4-80gb: is --system right?"
run 0 import nccl-tests --system gcp-a3-mega --op all_reduce --db "$W" "$TMPD/block5.log"
grep -q warning "$TMPD/err" && fail "a warning for H100 logs on an H100 system: $(cat "$TMPD/err")"
run 0 import nccl-tests --system aws-p4de --op all_reduce --db "$W" "$TMPD/block1.log" --ranks 32 --nodes 4
grep -q warning "$TMPD/err" && fail "a warning for a log without a device list: $(cat "$TMPD/err")"
# Lines behind two launcher prefixes: a cluster manager's process tag, then Open MPI's
sed 's/^/(head, rank=0, pid=4242) [1,0]<stdout>:/' "$TMPD/block5.log" > "$TMPD/tagged.log"
run 0 import nccl-tests --system gcp-a3-mega --op all_reduce --db "$W" "$TMPD/tagged.log"
expect_out "all_reduce     16      2    62"
# An old-format alltoall table with an empty redop column (64 V100 on 8 nodes)
run 0 import nccl-tests --system dgx-v100 --op alltoall --nodes 8 --gpus-per-node 8 --db "$W" "$TMPD/block7.log"
expect_out "stored 4 rows"

# A read-only database: nothing written (root ignores file modes, so only as a user).
if [ "$(id -u)" != 0 ]; then
	chmod 0444 "$DB"
	run 1 import nccl-tests --system aws-p5 --db "$DB" --ranks 16 --op all_reduce "$TMPD/block3.log"
	expect_err "read-only"
	chmod 0644 "$DB"
	run 0 hw calibrations --db "$DB" --json
	json_check "$TMPD/out" "len(d['runs']) == 4"
fi
finish
