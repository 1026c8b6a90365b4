#!/bin/sh
# 'paraplan replay': usage errors, plan documents that are not, the dry run (groups, op lists,
# their order against the simulator's trace of the same plan), and the replay without a GPU
# (every test machine can take it: CUDA_VISIBLE_DEVICES= hides the devices of one that has them).
. "$top_srcdir/tests/lib.sh"

run 0 replay --help
expect_out "paraplan replay --plan PLAN.json --dry-run"
run 2 replay
expect_err "--plan PLAN.json is required"
run 2 replay --plan x.json --rank 3
expect_err "--rank applies to --dry-run"
run 2 replay --plan x.json --steps 0
expect_err "--steps must be an integer from 1 to 10000"
run 2 replay --plan x.json --rank-config gpu7
expect_err "--rank-config must be auto, local or first"
run 2 replay --plan x.json --dry-run --steps 5
expect_err "--dry-run launches nothing"
run 2 replay --plan x.json extra
expect_err "unexpected argument \"extra\""

# Plans: an 8-GPU one (tp 2, pp 2, dp 2) from the simulator, and the planner's 1-GPU winner.
run 0 simulate train --model mpt-125m --system dgx-h100 --gpus 8 --tp 2 --pp 2 --micro-batch 1 --global-batch 8 --no-sequence-parallel \
	--seq 1024 --json --trace "$TMPD/trace.json"
cp "$TMPD/out" "$TMPD/sim.json"
run 0 plan train --model mpt-125m --system dgx-h100 --gpus 1 --global-batch 8 --json
cp "$TMPD/out" "$TMPD/plan1.json"
json_check "$TMPD/plan1.json" "d['winner']['config']['gpus'] == 1"

# Documents that are not plans: exit 2, naming the file and the field.
run 2 replay --plan "$TMPD/missing.json"
expect_err "$TMPD/missing.json: cannot open"
printf '{"kind": "plan-train",\n "model": ' > "$TMPD/cut.json"
run 2 replay --plan "$TMPD/cut.json"
expect_err "cut.json:2:11: not valid JSON (unexpected end of file)"
sed 's/"kind":[^,]*/"kind": "serve"/' "$TMPD/sim.json" > "$TMPD/serve.json"
run 2 replay --plan "$TMPD/serve.json" --dry-run
expect_err "\"kind\" is \"serve\": replay takes a training plan"
python3 - "$TMPD/sim.json" "$TMPD/bad-tp.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d['config']['tp'] = 'two'; json.dump(d, open(sys.argv[2], 'w'))
PY
run 2 replay --plan "$TMPD/bad-tp.json" --dry-run
expect_err "bad-tp.json: config.tp must be an integer from 1 to 16777216, got \"two\""
python3 - "$TMPD/sim.json" "$TMPD/bad-model.json" "$TMPD/bad-sys.json" "$TMPD/bad-heads.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
m = dict(d, model='no-such-model'); json.dump(m, open(sys.argv[2], 'w'))
s = dict(d, system='no-such-system'); json.dump(s, open(sys.argv[3], 'w'))
h = json.loads(json.dumps(d)); h['config']['tp'] = 8; h['config']['dp'] = 1; h['config']['cp'] = 1
h['config']['pp'] = 1; h['config']['gpus'] = 8; json.dump(h, open(sys.argv[4], 'w'))
PY
run 2 replay --plan "$TMPD/bad-model.json" --dry-run
expect_err "model \"no-such-model\""
expect_err "(give --model PATH)"
run 2 replay --plan "$TMPD/bad-sys.json" --dry-run
expect_err "bad-sys.json: system: "
run 2 replay --plan "$TMPD/bad-heads.json" --dry-run
expect_err "bad-heads.json: the plan's configuration: attention heads (12) must be divisible by tp (8)"

# The dry run: the world's groups, a partition per kind; each stage's ops.
run 0 replay --plan "$TMPD/sim.json" --dry-run
expect_out "tp   4 groups of 2, e.g. [0 1]"
expect_out "pp   4 groups of 2, e.g. [0 4]"
expect_out "rank 4: stage 1, tp 0, cp 0, dp 0"
run 0 replay --plan "$TMPD/sim.json" --dry-run --json
cp "$TMPD/out" "$TMPD/dry.json"
# the replay predicts what the simulation printed: the same framework profile, its fitted rates
json_check "$TMPD/dry.json" "abs(d['predicted_step_s'] / d['plan_step_s'] - 1) < 1e-9"
# and its kernels alone, without the profile's slower kernel rates and host time, less
json_check "$TMPD/dry.json" "0 < d['kernels_step_s'] < d['predicted_step_s']"
json_check "$TMPD/dry.json" "all(sorted(r for g in d['world']['groups'][k] for r in g) == list(range(8)) \
for k in ('tp', 'cp', 'ep', 'dp', 'edp', 'pp')) and d['world']['groups']['tp'] == [[0,1],[2,3],[4,5],[6,7]] \
and d['world']['groups']['pp'] == [[0,4],[1,5],[2,6],[3,7]] and d['world']['groups']['dp'] == [[0,2],[1,3],[4,6],[5,7]] \
and [r['rank'] for r in d['ranks']] == [0, 4]"
# tied embeddings: one all-reduce between the stages; 8 micro-batches x 6 layers x 4 TP all-reduces
json_check "$TMPD/dry.json" "all(r['totals']['collectives']['tp']['all_reduce'] == 4 * 6 * 4 \
and r['totals']['collectives']['emb']['all_reduce'] == 1 for r in d['ranks']) \
and d['ranks'][0]['totals']['sends'] == 4 and d['ranks'][1]['totals']['recvs'] == 4"
# hybrid sharding: FSDP within pairs of ranks, each shard all-reduced over the four pairs; the
# replay builds both groups and predicts the simulated step
run 0 simulate train --model mpt-125m --system dgx-h100 --gpus 8 --zero 3 --fsdp --dp-shard 2 --micro-batch 1 \
	--global-batch 16 --seq 1024 --json
cp "$TMPD/out" "$TMPD/hsdp.json"
run 0 replay --plan "$TMPD/hsdp.json" --dry-run --json
json_check "$TMPD/out" "d['world']['groups']['dp'] == [[0,1],[2,3],[4,5],[6,7]] \
and d['world']['groups']['dpr'] == [[0,2,4,6],[1,3,5,7]] and abs(d['predicted_step_s'] / d['plan_step_s'] - 1) < 1e-9 \
and d['ranks'][0]['totals']['collectives']['dpr']['all_reduce'] == d['ranks'][0]['totals']['collectives']['dp']['reduce_scatter'] > 0"
python3 - "$TMPD/hsdp.json" "$TMPD/bad-shard.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d['config']['dp_shard'] = 3; json.dump(d, open(sys.argv[2], 'w'))
PY
run 2 replay --plan "$TMPD/bad-shard.json" --dry-run
expect_err "bad-shard.json: the plan's configuration: --dp-shard (3) must divide dp (8)"
# every op waits only for earlier ops; the program says what it launches
json_check "$TMPD/dry.json" "all(w < o['i'] for r in d['ranks'] for o in r['ops'] for w in o.get('wait', [])) \
and all(r['program']['communicators'] for r in d['ranks'])"

# The dry run's order is the simulator's: per stream, the trace's ops of that rank and stream
# in time order are its ops in program order (the trace leaves out zero-length ops, and lists an
# op of several ranks -- a pipeline transfer, the embedding sync -- under its first stream only).
python3 - "$TMPD/dry.json" "$TMPD/trace.json" <<'PY' || fail "dry-run order differs from the simulator's trace"
import json, sys
dry = json.load(open(sys.argv[1])); tr = json.load(open(sys.argv[2]))
names = ["compute", "tp", "cp", "ep", "dp", "dp_rs", "pp_send_fwd", "pp_recv_fwd", "pp_send_bwd", "pp_recv_bwd"]
for rank in dry['ranks']:
    stage = rank['coords']['pp']  # symmetric mode: simulated rank = stage
    ops = rank['ops']
    for st in rank['streams']:
        mine = [ops[i] for i in st['ops'] if ops[i]['end_s'] > ops[i]['start_s']]
        ev = sorted((e for e in tr['traceEvents'] if e['ph'] == 'X' and e['pid'] == stage
                     and names[e['tid'] % 10] == st['stream']), key=lambda e: e['ts'])
        a = [o['label'] for o in mine]; b = [e['name'] for e in ev]
        if st['stream'] in ('compute', 'tp') or st['stream'].startswith('pp_send'):
            assert a == b and len(a) > 0, (stage, st['stream'], a[:5], b[:5])
        else:
            it = iter(a)
            assert all(x in it for x in b), (stage, st['stream'], a, b)
PY

run 0 replay --plan "$TMPD/sim.json" --dry-run --rank 5
expect_out "rank 5: stage 1, tp 1, cp 0, dp 0"
expect_out "recv 768 KiB from rank 1 (stage 0), then all_gather over tp"
expect_out "all_reduce 1.50 MiB over tp [4 5]"
run 2 replay --plan "$TMPD/sim.json" --dry-run --rank 8
expect_err "--rank 8: the plan has 8 ranks (0 .. 7)"

# Without a GPU: a clear message, exit 1, and the database never opened.
CUDA_VISIBLE_DEVICES= run 1 replay --plan "$TMPD/plan1.json" --db "$TMPD/never.db"
gpu_code=yes
if grep -q "built without CUDA and NCCL" "$TMPD/err"; then gpu_code=no; else expect_err "no GPU found: "; fi
expect_no_out
[ ! -e "$TMPD/never.db" ] || fail "replay created a database without a GPU"
# An existing database stays byte for byte what it was.
run 0 hw validations --db "$TMPD/hw.db"
expect_out "no validation runs yet"
cksum < "$TMPD/hw.db" > "$TMPD/before"
CUDA_VISIBLE_DEVICES= run 1 replay --plan "$TMPD/plan1.json" --db "$TMPD/hw.db"
cksum < "$TMPD/hw.db" | cmp -s - "$TMPD/before" || fail "replay without a GPU changed the database"
# A plan of 8 ranks launched alone: the command to run instead (a build without CUDA and NCCL
# says that it cannot replay at all).
if [ "$gpu_code" = yes ]; then
	run 2 replay --plan "$TMPD/sim.json" --db "$TMPD/hw.db"
	expect_err "the plan has 8 ranks (tp 2 x pp 2 x dp 2 x cp 1): launch one process per GPU, e.g. mpirun -np 8"
else
	run 1 replay --plan "$TMPD/sim.json" --db "$TMPD/hw.db"
	expect_err "built without CUDA and NCCL"
fi
# plan train --validate: the plan in full, the validation not run and why, exit 1.
run 1 plan train --model mpt-125m --system dgx-h100 --gpus 16 --global-batch 32 --top 1 --validate
expect_out "tok/s/GPU"
expect_err "validation not run: the winner runs on"
expect_err "mpirun -np "
expect_err " paraplan plan train --model mpt-125m --system dgx-h100 --gpus 16 --global-batch 32 --top 1 --validate"
run 1 plan train --model mpt-125m --system dgx-h100 --gpus 16 --global-batch 32 --top 1 --validate --json
json_check "$TMPD/out" "d['winner']['config']['gpus'] == 16 and d['validation']['status'] == 'not run' and d['validation']['command'].startswith('mpirun -np ')"
CUDA_VISIBLE_DEVICES= run 1 plan train --model mpt-125m --system dgx-h100 --gpus 1 --global-batch 8 --validate --json 	--db "$TMPD/hw.db"
json_check "$TMPD/out" "d['winner']['config']['gpus'] == 1 and d['validation']['status'] == 'not run' and ('no GPU found' in d['validation']['reason'] or 'without CUDA' in d['validation']['reason'])"
cksum < "$TMPD/hw.db" | cmp -s - "$TMPD/before" || fail "plan train --validate without a GPU changed the database"
run 2 plan train --model mpt-125m --tokens 1T --days 10 --global-batch 64 --validate
expect_err "--validate applies to a layout search"
# ZeRO-3's gather granularity travels with the plan: a DeepSpeed run gathers per module, and
# the replay predicts the step the simulation printed; a value it does not know is refused.
run 0 simulate train --model gpt2-xl --system dgx-a100 --gpus 16 --zero 3 --micro-batch 1 --global-batch 32 --framework deepspeed --json
cp "$TMPD/out" "$TMPD/z3.json"
json_check "$TMPD/z3.json" "d['config']['zero3_gather'] == 'module'"
run 0 replay --plan "$TMPD/z3.json" --dry-run --json
json_check "$TMPD/out" "abs(d['predicted_step_s'] / d['plan_step_s'] - 1) < 1e-9"
sed 's/"zero3_gather":[^,]*/"zero3_gather": "bucket"/' "$TMPD/z3.json" > "$TMPD/bad-z3.json"
run 2 replay --plan "$TMPD/bad-z3.json" --dry-run
expect_err "bad-z3.json: config.zero3_gather must be layer, module or tensor, got \"bucket\""
# So does its gathering again after a full recompute (zero3_regather): the replay of the plan
# predicts its step, a plan without it the shorter step of one gather for both.
run 0 simulate train --model gpt2-xl --system dgx-a100 --gpus 16 --zero 3 --micro-batch 1 --global-batch 32 --framework deepspeed --recompute full --json
cp "$TMPD/out" "$TMPD/z3rc.json"
json_check "$TMPD/z3rc.json" "d['config']['zero3_regather'] is True"
run 0 replay --plan "$TMPD/z3rc.json" --dry-run --json
json_check "$TMPD/out" "abs(d['predicted_step_s'] / d['plan_step_s'] - 1) < 1e-9"
sed 's/"zero3_regather":[[:space:]]*true/"zero3_regather": false/' "$TMPD/z3rc.json" > "$TMPD/z3once.json"
run 0 replay --plan "$TMPD/z3once.json" --dry-run --json
json_check "$TMPD/out" "d['predicted_step_s'] < d['plan_step_s']"
sed 's/"zero3_regather":[[:space:]]*true/"zero3_regather": "yes"/' "$TMPD/z3rc.json" > "$TMPD/bad-z3rc.json"
run 2 replay --plan "$TMPD/bad-z3rc.json" --dry-run
expect_err "bad-z3rc.json: config.zero3_regather must be true or false, got \"yes\""
# Megatron's TP all-reduce beside the weight gradient travels too: without it (the flag, or a
# plan that drops it) the step is longer, and the replay of each plan predicts its own step.
run 0 simulate train --model llama-3-8b --system dgx-h100 --gpus 8 --tp 8 --micro-batch 1 --global-batch 4 --no-sequence-parallel --json
cp "$TMPD/out" "$TMPD/tpw.json"
json_check "$TMPD/tpw.json" "d['config']['tp_wgrad_overlap'] is True"
run 0 replay --plan "$TMPD/tpw.json" --dry-run --json
json_check "$TMPD/out" "abs(d['predicted_step_s'] / d['plan_step_s'] - 1) < 1e-9"
run 0 simulate train --model llama-3-8b --system dgx-h100 --gpus 8 --tp 8 --micro-batch 1 --global-batch 4 --no-sequence-parallel --no-tp-wgrad-overlap --json
cp "$TMPD/out" "$TMPD/tpw-off.json"
json_check "$TMPD/tpw-off.json" "'tp_wgrad_overlap' not in d['config'] and d['step_time_s'] > $(python3 -c "import json; print(json.load(open('$TMPD/tpw.json'))['step_time_s'])")"
grep -v '"tp_wgrad_overlap"' "$TMPD/tpw.json" > "$TMPD/tpw-dropped.json"
run 0 replay --plan "$TMPD/tpw-dropped.json" --dry-run --json
json_check "$TMPD/out" "d['predicted_step_s'] > d['plan_step_s']"
finish
