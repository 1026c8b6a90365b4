#!/bin/sh
# Command-line basics: help, version, exit statuses, hw and model commands.
. "$top_srcdir/tests/lib.sh"

run 0 help
expect_out "usage: paraplan COMMAND"
run 0 --help
run 0 version
expect_out "paraplan "
run 2 no-such-command
expect_err "unknown command"
run 2 report
expect_err "--from is required"

run 0 hw list
expect_out "dgx-h100"
expect_out "h100-sxm"
run 0 hw list --json
json_check "$TMPD/out" "any(s['name'] == 'dgx-a100' for s in d['systems'])"
run 0 hw show dgx-h100
expect_out "NVIDIA H100 datasheet"
run 0 hw show dgx-h100 --json
json_check "$TMPD/out" "d['kind'] == 'system' and len(d['gpu']['figures']) >= 10"
run 2 hw show nothing-like-it
expect_err "unknown GPU or system \"nothing-like-it\""
# the profiles: every framework with its base chain; one with its fitted parameters
run 0 hw profiles --json
json_check "$TMPD/out" "{p['name']: p.get('base') for p in d['profiles'] if p['kind'] == 'framework'}['torchtitan'] == 'pytorch' and all('parameters' not in p for p in d['profiles'])"
run 0 hw profiles megatron --json
json_check "$TMPD/out" "len(d['profiles']) == 1 and {x['key']: x for x in d['profiles'][0]['parameters']}['gemm_scale']['provenance'] == 'fitted' and all(x['key'] != 'gemm_eff_bf16' for x in d['profiles'][0]['parameters'])"
run 0 hw profiles megatron
expect_out "gemm_scale"
run 2 hw profiles not-a-framework
expect_err "no framework or engine profile \"not-a-framework\""
run 2 hw profiles "$(printf 'x\033[31m\ny')"
grep -q "$(printf '\033')" "$TMPD/err" && fail "an escape character reached the terminal"
[ "$(wc -l <"$TMPD/err")" -eq 1 ] || fail "a newline in the name split the message: $(cat "$TMPD/err")"
run 2 hw profiles a b
# the registry: every key once, its scope, its bounds holding its default
run 0 hw params --json
json_check "$TMPD/out" "len({x['key'] for x in d['parameters']}) == len(d['parameters']) > 30 and all(x['min'] <= x['default'] <= x['max'] for x in d['parameters'] if isinstance(x['default'], float) or isinstance(x['default'], int)) and {x['key']: x['scope'] for x in d['parameters']}['gemm_scale'] == 'framework'"
run 0 hw params
expect_out "gemm_eff_bf16"
run 2 hw params extra
run 2 hw
expect_err "missing subcommand"
run 2 hw frobnicate
run 2 hw show
run 2 hw list --bogus
expect_err "unknown option \"--bogus\""
run 2 hw list --db
expect_err "needs a value"
run 0 hw export
expect_out "\"schema\":	\"paraplan.hw-export/1\""
run 0 hw export --sql
expect_out "BEGIN;"
run 0 hw calibrations

# A database file: created from the defaults, then exported to a file atomically.
run 0 hw list --db "$TMPD/hw.db"
[ -s "$TMPD/hw.db" ] || fail "database file was not created"
run 0 hw export --db "$TMPD/hw.db" --out "$TMPD/export.json"
json_check "$TMPD/export.json" "d['schema'] == 'paraplan.hw-export/1' and d['runs'] == []"
run 0 hw export --db "$TMPD/hw.db" --sql --out "$TMPD/export.sql"
grep -q "COMMIT;" "$TMPD/export.sql" || fail "export file incomplete"
run 1 hw export --db "$TMPD/hw.db" --out "$TMPD/no/such/dir/x.sql"
[ ! -e "$TMPD/no/such/dir/x.sql" ] || fail "partial export written"
printf 'garbage that is not sqlite at all, padded out to look like a file............' > "$TMPD/bad.db"
run 1 hw list --db "$TMPD/bad.db"
expect_err "not a paraplan hardware database"

run 0 model list
expect_out "llama-3-8b"
run 0 model show llama-3-8b
expect_out "8.03B"
run 0 model show gpt3-175b --json
json_check "$TMPD/out" "abs(d['params'] - 174.6e9) < 0.005 * 174.6e9"
run 2 model show not-a-model
expect_err "unknown model \"not-a-model\""
run 0 model show "$top_srcdir/tests/data/hf/llama-3-8b-config.json"
expect_out "8.03B"
printf '{"name": "x", "layers": 2, "hidden": 64, "heads": 5, "ffn": 256, "vocab": 100, "seq": 16}' > "$TMPD/bad.json"
run 1 model show "$TMPD/bad.json"
expect_err "\"heads\" (5) must divide \"hidden\" (64)"
run 2 model show a b
# Any Hugging Face decoder: read from its standard keys, what is not modelled named on stderr
# and in the JSON, what cannot be expressed refused with the reason.
run 0 model show "$top_srcdir/tests/data/hf/gemma-2-9b-config.json"
expect_out "9.24B"
expect_err "warning: gemma-2-9b-config.json: sliding-window attention (4096 tokens, 21 of 42 layers): training prices it over the window"
for f in gemma-3-27b-it phi-4 qwen2.5-72b qwen3-30b-a3b qwen3-235b-a22b gpt-oss-20b deepseek-v2 mixtral-8x7b llama-4-maverick kimi-k2; do
	run 0 model show --json "$top_srcdir/tests/data/hf/$f-config.json"
	json_check "$TMPD/out" "d['schema'] == 'paraplan.model/1' and d['params'] > 1e9 and isinstance(d['warnings'], list)"
done
run 0 model show --json "$top_srcdir/tests/data/hf/llama-4-scout-config.json"
json_check "$TMPD/out" "d['moe']['experts'] == 16 and any('vision encoder' in w for w in d['warnings'])"
run 0 model show --json llama-3-8b
json_check "$TMPD/out" "d['warnings'] == []"
printf '{"model_type": "jamba", "hidden_size": 4096, "num_hidden_layers": 32}' > "$TMPD/jamba.json"
run 1 model show "$TMPD/jamba.json"
expect_err "model_type \"jamba\" is not supported: a hybrid of attention and Mamba layers"
run 0 plan train --model "$top_srcdir/tests/data/hf/gemma-2-9b-config.json" --system dgx-h100 --gpus 8 --global-batch 64 --top 1
expect_err "warning: gemma-2-9b-config.json: logit soft-capping is not modelled"
finish
