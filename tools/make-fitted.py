#!/usr/bin/env python3
"""make-fitted.py -- write hardware/data/fitted.sql from the recorded fits.

    paraplan validate --db :memory: --cross-validate --json --data bundled \\
        --data ../shared/validation/training-2024-2025.csv > xv.json
    python3 tools/make-fitted.py --train xv.json > hardware/data/fit-training.json
    paraplan validate --db :memory: --set serving --fit --json --data bundled \\
        --data ../shared/validation/serving-2024-2025.csv > serve-fit.json
    paraplan validate --db :memory: --set serving --cross-validate --json --data bundled \\
        --data ../shared/validation/serving-2024-2025.csv > serve-xv.json
    python3 tools/make-fitted.py --serve serve-fit.json serve-xv.json > hardware/data/fit-serving.json
    python3 tools/make-fitted.py hardware/data/fit-training.json \\
        hardware/data/fit-serving.json > hardware/data/fitted.sql

The training fit is of the framework profiles (profiles.sql): per profile root over every row
it runs, then per framework under it over its own rows, held near its root's values.  The
cross-validation's document holds that fit (on every row) and the 80% intervals of each
framework's predictions from its cross-validated errors; --train keeps both, without the rows.
Each fitted framework gets its parameters and its err_p10/err_p90; the GPUs keep their
measured kernel rates (params.sql).

The serving fit is of the engine profiles (profiles.sql): per engine, its host time per
iteration and the fraction of the GPUs' measured GEMM rates its kernels reach, over all of its
rows on every GPU; nothing is fitted per GPU or per system.  See docs/engines.md.  --serve keeps
that fit with the 80% intervals of each engine's predictions per kind of metric (throughput,
TTFT, TPOT) from the serving cross-validation.
"""
import json
import sys

MEANING = {
    "gemm_scale": "the rate its GEMMs reach, as a fraction of the GPU's measured rate",
    "attn_scale": "the rate its fused attention reaches, of the GPU's measured rate",
    "host_op_us": "the host's time to issue one kernel (a floor on a kernel's time)",
    "comm_slowdown": "compute slowdown while its collectives run beside it",
}
SERVE_MEANING = {
    "sched_us": "the host's scheduling time per iteration, fixed part",
    "serve_gemm_scale": "the rate its GEMMs reach, as a fraction of the GPU's measured rate",
}


def q(s):
    return "'" + s.replace("'", "''") + "'"


def row(scope, subject, key, value, method, source):
    return "(%s, %s, %s, %.6g, 'fitted', %s, %s)" % (q(scope), q(subject), q(key), value, q(method), q(source))


def source_of(data):
    """The data a fit read, as short as the param table's source column allows."""
    names = [d.replace("../shared/validation/", "") for d in data]
    return " + ".join(names)


def train_rows(fit):
    src = source_of(fit["data"])
    heads, out = [], []
    for f in fit["fits"]:
        method = ("paraplan validate --fit: least squares on log error (pseudo-Huber 10%%) over %d rows, "
                  "MAPE %.1f%% -> %.1f%%" % (f["rows"], 100 * f["mape_before"], 100 * f["mape_after"]))
        heads.append("--   %s%-14s %3d rows, MAPE %.1f%% -> %.1f%%" % (
            "  " * f["level"], f["framework"], f["rows"], 100 * f["mape_before"], 100 * f["mape_after"]))
        for k, v in f["parameters"].items():
            out.append(row("framework", f["framework"], k, v, method, src))
    iv = fit["intervals"]
    for f in iv["frameworks"]:
        method = ("paraplan validate --cross-validate: percentile of log(measured / predicted step time) over "
                  "%d cross-validated rows" % f["rows"])
        out.append(row("framework", f["framework"], "err_p10", f["p10"], method, src))
        out.append(row("framework", f["framework"], "err_p90", f["p90"], method, src))
    tail = ("-- and the 80%% intervals of %d frameworks' predictions (err_p10, err_p90: percentiles of their\n"
            "-- cross-validated errors), which held %.1f%% of %d measured values" % (
                len(iv["frameworks"]), 100 * iv["coverage"], iv["rows"]))
    return heads, out, src, tail


def main(argv):
    if len(argv) == 3 and argv[1] == "--train":
        doc = json.load(open(argv[2]))
        if doc.get("kind") != "validate-cross" or "intervals" not in doc:
            sys.exit("make-fitted.py: %s is not 'paraplan validate --cross-validate --json'" % argv[2])
        rec = {"kind": "validate-fit", "data": doc["data"], "fits": doc["fit"], "intervals": doc["intervals"],
               "cross_validated": doc["overall"]}
        print(json.dumps(rec, indent=1, sort_keys=True))
        return
    if len(argv) == 4 and argv[1] == "--serve":
        fit, doc = json.load(open(argv[2])), json.load(open(argv[3]))
        if fit.get("kind") != "validate-serving-fit":
            sys.exit("make-fitted.py: %s is not 'paraplan validate --set serving --fit --json'" % argv[2])
        if doc.get("kind") != "validate-cross" or doc.get("set") != "serving" or "intervals" not in doc:
            sys.exit("make-fitted.py: %s is not 'paraplan validate --set serving --cross-validate --json'" % argv[3])
        fit["intervals"] = doc["intervals"]
        fit["cross_validated"] = doc["overall"]
        print(json.dumps(fit, indent=1, sort_keys=True))
        return
    if len(argv) != 3:
        sys.exit("usage: make-fitted.py --train VALIDATE.json | make-fitted.py --serve FIT.json VALIDATE.json | "
                 "make-fitted.py TRAIN_FIT.json SERVE_FIT.json")
    train, serve = json.load(open(argv[1])), json.load(open(argv[2]))
    heads, out, src, tail = train_rows(train)
    ssrc = source_of(serve["data"].split(" + "))
    sheads = []
    for f in serve["fits"]:
        sheads.append("--   %-8s %3d rows, MAPE %.1f%% -> %.1f%%" % (
            f["engine"], f["rows"], 100 * f["mape_before"], 100 * f["mape_after"]))
        for k, v in f["parameters"].items():
            out.append(row("engine", f["engine"], k, v, f["method"], ssrc))
    siv = serve.get("intervals", {})
    skeys = {"throughput": "tput_err", "ttft": "ttft_err", "tpot": "tpot_err"}
    for kind, key in skeys.items():
        for f in siv.get(kind, {}).get("engines", []):
            method = ("paraplan validate --set serving --cross-validate: percentile of log(measured / predicted "
                      "time) over %d cross-validated %s rows" % (f["rows"], kind))
            out.append(row("engine", f["engine"], key + "_p10", f["p10"], method, ssrc))
            out.append(row("engine", f["engine"], key + "_p90", f["p90"], method, ssrc))
    cb = siv.get("capacity_band")
    if cb:
        method = ("paraplan validate --set serving --cross-validate: percentile of log(predicted / measured "
                  "tokens/s) over %d batch and closed-loop rows, all engines" % cb["rows"])
        out.append(row("engine", cb["engine"], "cap_err_p10", cb["p10"], method, ssrc))
        out.append(row("engine", cb["engine"], "cap_err_p90", cb["p90"], method, ssrc))
    stail = ""
    if siv:
        stail = "\n" + ("-- and the 80%% intervals of their predictions per kind of metric (tput_err_, ttft_err_, tpot_err_p10\n"
                         "-- and _p90: percentiles of their cross-validated errors; cap_err_p10 and _p90: the capacity\n"
                         "-- band, every engine's batch and closed-loop throughput errors, at whose ends a run at a rate\n"
                         "-- is simulated again), which held %.1f%% of %d measured values" % (100 * siv["coverage"], siv["rows"]))
    print("""-- Cost-model parameters fitted to published measurements, shipped with the defaults (origin
-- 'fitted': they take precedence over the default rows of params.sql and profiles.sql; a user's
-- own fit or calibration takes precedence over them).  Generated by tools/make-fitted.py from the
-- recorded fits (hardware/data/fit-*.json); docs/validation.md says how each was made.
--
-- Training (per framework profile) over %s:
%s
-- each with
%s
%s.
-- The GPUs keep their measured kernel rates (params.sql): no framework's behaviour is fitted
-- into them.
--
-- Serving (per engine profile, over all of its rows on every GPU) over %s:
%s
-- each with
%s%s
INSERT INTO param(scope, subject, key, value, origin, method, source) VALUES""" % (
        src, "\n".join(heads), "\n".join("--   %-14s %s" % (k, v) for k, v in MEANING.items()), tail,
        ssrc, "\n".join(sheads), "\n".join("--   %-14s %s" % (k, v) for k, v in SERVE_MEANING.items()), stail))
    print(",\n".join(out) + ";")


if __name__ == "__main__":
    main(sys.argv)
