#!/usr/bin/env python3
"""make-fitted.py -- write hardware/data/fitted.sql from the JSON of the fits.

    paraplan validate --db FIT.db --fit a100-sxm4-80gb,a100-sxm4-40gb --max-evals 300 > a100.json
    paraplan validate --db FIT.db --fit h100-sxm --max-evals 300 > h100.json
    paraplan validate --db FIT.db --set serving --fit hgx-h200 > serve.json
    python3 tools/make-fitted.py a100.json h100.json serve.json > hardware/data/fitted.sql

The training fits come first, the serving fit last.  FIT.db should hold no fitted rows of
the training GPUs (sqlite3 FIT.db "DELETE FROM param WHERE origin='fitted'"), so that each
training fit starts from the datasheet figures and its "before" is the datasheet MAPE; the
serving fit runs with the training fits saved (--save), since a serving step is made of the
same GEMMs.

Each training fit's GPUs get its parameters.  The other NVIDIA GPUs of the fit's generation
(TRAIN_TO) get them transferred: every datasheet gemm_eff_<dtype> of params.sql times the
fitted GPU's ratio of in-training to large-GEMM efficiency, and every other parameter as
fitted.  The serving fit's system passes its parameters to the other NVLink 4 NVSwitch
systems.  See docs/validation.md.
"""
import json
import os
import re
import sys

# The GPUs that take a training fit's parameters, by the fit's first GPU: the same silicon in
# another package, or (Blackwell) the nearest generation with published training rows.
TRAIN_TO = {
    "a100-sxm4-80gb": ["a100-pcie-80gb"],
    "h100-sxm": ["h100-pcie", "h100-nvl", "h200-sxm", "b200", "gb200"],
}
SERVE_TO = ["dgx-h100", "aws-p5", "aws-p5e", "aws-p5en", "azure-nd-h100-v5", "azure-nd-h200-v5",
            "gcp-a3-high", "gcp-a3-mega", "gcp-a3-ultra"]
ATTN_BWD_RATIO = 0.8  # sim/validate.c ties attn_eff_bwd to this fraction of attn_eff_fwd
MEANING = {
    "gemm_eff_fp16": "gemm_eff_fp16 (= bf16)  GEMM efficiency inside a training step",
    "gemm_k_ramp": "gemm_k_ramp             a GEMM tile's prologue and epilogue, in steps of k",
    "host_op_us": "host_op_us              the framework's time to issue one kernel (a floor on a kernel's time)",
    "attn_eff_fwd": "attn_eff_fwd, _bwd      flash attention (the backward tied at %.1f of the forward)" % ATTN_BWD_RATIO,
    "overlap_slowdown": "overlap_slowdown        compute slowdown while communication runs beside it",
}
TRAIN_SRC = "sim/data/published-training.csv"
SERVE_SRC = "sim/data/published-serving.csv"


def q(s):
    return "'" + s.replace("'", "''") + "'"


def row(scope, subject, key, value, method, source):
    return "(%s, %s, %s, %.6g, 'fitted', %s, %s)" % (q(scope), q(subject), q(key), value, q(method), q(source))


def datasheet_gemm(params_sql):
    eff = {}
    pat = re.compile(r"\('gpu', '([^']+)', 'gemm_eff_(\w+)', ([0-9.]+), 'default'")
    for m in pat.finditer(params_sql):
        eff.setdefault(m.group(1), {})[m.group(2)] = float(m.group(3))
    return eff


def tag(gpu):
    return gpu.split("-")[0].upper()


def train_rows(train, eff):
    """The rows of one training fit: its own GPUs, then those of TRAIN_TO."""
    tp, gpus = train["parameters"], train["gpus"]
    base = gpus[0]
    ratio = tp["gemm_eff_fp16"] / eff[base]["fp16"]
    fitted = "paraplan validate --fit %s: Nelder-Mead over %d rows, MAPE %.1f%% -> %.1f%%" % (
        ",".join(gpus), train["rows"], 100 * train["mape_before"], 100 * train["mape_after"])
    soft = "transferred from the %s fit (framework and software, assumed to carry over)" % tag(base)
    out = []

    def same(g, method):
        for k, v in tp.items():
            if k == "gemm_eff_fp16":
                continue
            out.append(row("gpu", g, k, v, method, TRAIN_SRC))
            if k == "attn_eff_fwd":
                out.append(row("gpu", g, "attn_eff_bwd", ATTN_BWD_RATIO * v, method, TRAIN_SRC))

    for g in gpus:
        for k in ("fp16", "bf16"):
            out.append(row("gpu", g, "gemm_eff_" + k, tp["gemm_eff_fp16"], fitted, TRAIN_SRC))
        # the dtypes the rows did not train in (FP8) scale with the 16-bit ratio
        for k, v in sorted(eff[g].items()):
            if k not in ("fp16", "bf16"):
                m = "%s; %s: datasheet %.2f x %.4f (the fitted in-training / large-GEMM ratio)" % (fitted, k, v, ratio)
                out.append(row("gpu", g, "gemm_eff_" + k, v * ratio, m, TRAIN_SRC))
        same(g, fitted)
    for g in TRAIN_TO[base]:
        for k, v in sorted(eff[g].items()):
            m = "transferred from the %s fit: datasheet %.2f x %.4f (the fitted in-training / large-GEMM ratio)" % (
                tag(base), v, ratio)
            out.append(row("gpu", g, "gemm_eff_" + k, v * ratio, m, TRAIN_SRC))
        same(g, soft)
    head = "--   %s: %d %s rows of %s, MAPE %.1f%% -> %.1f%%;\n" \
           "--     passed to %s with GEMM efficiency x %.4f (the fitted in-training / large-GEMM\n" \
           "--     ratio), the rest as fitted" % (
               ", ".join(gpus), train["rows"], tag(base), TRAIN_SRC, 100 * train["mape_before"],
               100 * train["mape_after"], ", ".join(TRAIN_TO[base]), ratio)
    return head, out


def main(argv):
    if len(argv) < 3:
        sys.exit("usage: make-fitted.py TRAIN_FIT.json [TRAIN_FIT.json ...] SERVE_FIT.json")
    fits = [json.load(open(p)) for p in argv[1:]]
    trains, serve = fits[:-1], fits[-1]
    here = os.path.dirname(os.path.abspath(__file__))
    eff = datasheet_gemm(open(os.path.join(here, "..", "hardware", "data", "params.sql")).read())
    heads, out, keys = [], [], []
    for t in trains:
        h, rows = train_rows(t, eff)
        heads.append(h)
        out += rows
        keys += [k for k in t["parameters"] if k not in keys]
    sp, systems = serve["parameters"], serve["systems"]
    sfit = "paraplan validate --set serving --fit %s: Nelder-Mead over %d rows, MAPE %.1f%% -> %.1f%%" % (
        ",".join(systems), serve["rows"], 100 * serve["mape_before"], 100 * serve["mape_after"])
    strans = "transferred from the %s serving fit (an NVLink 4 NVSwitch system, the same engines)" % systems[0]
    for s in systems:
        for k in ("iter_overhead_s", "serve_allreduce_us"):
            out.append(row("system", s, k, sp[k], sfit, SERVE_SRC))
    for s in SERVE_TO:
        for k in ("iter_overhead_s", "serve_allreduce_us"):
            out.append(row("system", s, k, sp[k], strans, SERVE_SRC))
    print("""-- Cost-model parameters fitted to published measurements, shipped with the defaults (origin
-- 'fitted': they take precedence over the datasheet rows of params.sql; a user's own fit or
-- calibration takes precedence over them).  Generated by tools/make-fitted.py; see
-- docs/validation.md for the fits, their ranges and their results.
--
-- Training (per GPU), each fitted once over every row of its GPUs:
%s
-- where
%s
-- The other GPUs (V100, the AMD GPUs, the Ada and Turing inference GPUs) keep their
-- datasheet rows.
--
-- Serving (per system), fitted over the %s rows of %s:
--   iter_overhead_s     per-iteration CPU and launch time of the serving engine
--   serve_allreduce_us  latency of a decode step's small TP all-reduce
-- and transferred to the other systems of the same NVLink 4 NVSwitch generation.
INSERT INTO param(scope, subject, key, value, origin, method, source) VALUES""" % (
        "\n".join(heads), "\n".join("--   " + MEANING[k] for k in keys), ",".join(systems), SERVE_SRC))
    print(",\n".join(out) + ";")


if __name__ == "__main__":
    main(sys.argv)
