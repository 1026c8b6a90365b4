#!/usr/bin/env python3
"""example-answers.py -- the README's table of example answers, from the examples' JSON.

    mkdir ex && PATH=$PWD:$PATH EXAMPLES_JSON=ex sh -c 'for f in examples/[0-9]*.sh; do sh $f; done'
    python3 tools/example-answers.py ex

Prints one Markdown table row per example (examples/*.sh, run with EXAMPLES_JSON=DIR as
tests/cli_examples.sh runs them): what the current build answers, so that the README says what
the build prints.
"""
import json
import os
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    top = sys.argv[1]

    def d(name):
        with open(os.path.join(top, name + ".json")) as f:
            return json.load(f)

    def gib(b):
        return "%.1f GiB" % (b / 2**30)

    def step(x):
        t = x["step_time_s"]
        return "%.0f ms" % (t * 1e3) if t < 1 else "%.3g s" % t

    rows = []
    a, b = d("mnist-1gpu"), d("mnist-2gpu")
    rows.append(("01 MNIST CNN, 1 to 2 T4s (DDP)",
                 "speedup %.2fx (%.0f to %.0f samples/s), exposed communication %.1f ms a step"
                 % (b["samples_per_s"] / a["samples_per_s"], a["samples_per_s"], b["samples_per_s"],
                    b["exposed_comm_s"] * 1e3)))
    one = d("resnet50-dgx-1")["samples_per_s"]
    eff = ", ".join("%d GPUs %.0f%%" % (g, 100 * d("resnet50-dgx-%d" % g)["samples_per_s"] / g / one)
                    for g in (4, 8, 32, 256))
    buckets = ", ".join("%s MB %.0f" % (k, d("resnet50-gcp-bucket-%s" % k)["samples_per_s"])
                        for k in ("1", "25", "100", "1000") if os.path.exists(os.path.join(top, "resnet50-gcp-bucket-%s.json" % k)))
    rows.append(("02 ResNet-50, 1 to 256 A100s (DDP)",
                 "%.0f images/s on 1 GPU; scaling efficiency %s; at 256 GPUs on 100 Gb/s TCP by bucket size "
                 "(images/s): %s" % (one, eff, buckets)))
    bd, bn, b1 = d("bert-default"), d("bert-no-overlap"), d("bert-one-bucket")
    rows.append(("03 BERT-large on 4 nodes",
                 "step %s, exposed communication %.0f%% of it; without overlap %s, one bucket %s"
                 % (step(bd), 100 * bd["exposed_comm_s"] / bd["step_time_s"], step(bn), step(b1))))
    parts = []
    for k, label in (("ddp", "DDP"), ("zero1", "ZeRO-1"), ("zero2", "ZeRO-2"), ("zero3", "ZeRO-3"), ("fsdp", "FSDP"),
                     ("fsdp-recompute", "FSDP+recompute")):
        x = d("gpt2-" + k)
        parts.append("%s %s%s %s" % (label, gib(max(m["peak_bytes"] for m in x["memory"])),
                                     "" if x["fits"] else " (does not fit)", step(x)))
    rows.append(("04 GPT-2 1.3B memory on 8 GPUs", "; ".join(parts)))
    p = d("gpt10b-plan")
    w, c = p["winner"]["config"], p["counts"][0]["candidates"][0]
    rows.append(("05 10B model on 8 GPUs in 2 nodes",
                 "TP %d PP %d DP %d ZeRO %d, micro-batch %d: step %s, bubble %.0f%%, peak %s a GPU"
                 % (w["tp"], w["pp"], w["dp"], w["zero"], w["micro_batch"], step(c), 100 * c["bubble_fraction"],
                    gib(c["peak_bytes"]))))
    p = d("gpt100b-plan")
    w, c = p["winner"]["config"], p["counts"][0]["candidates"][0]
    bub = ", ".join("m=%d: %.0f%%" % (m, 100 * d("gpt100b-tp8pp8-m%d" % m)["bubble_fraction"]) for m in (8, 16, 32, 64, 128))
    rows.append(("06 100B model on 64 GPUs",
                 "best TP %d PP %d DP %d%s, step %s, MFU %.0f%%; TP 8 PP 8 bubble by micro-batches %s"
                 % (w["tp"], w["pp"], w["dp"], " (vpp %d)" % w["vpp"] if w.get("vpp", 1) > 1 else "", step(c),
                    100 * c["mfu"], bub)))
    tp = ", ".join("TP %d %.1f ms" % (t, d("llama7b-tp%d" % t)["tpot_s"]["p50"] * 1e3) for t in (1, 2, 4))
    rows.append(("07 Llama-2 7B on 4 H100s, TP 1/2/4",
                 "TPOT p50 at 4 requests/s: %s; overloaded, 4 x TP 1 serve %.1f K output tokens/s, 1 x TP 4 %.1f K"
                 % (tp, d("llama7b-tp1-load")["output_tokens_per_s"] / 1e3, d("llama7b-tp4-load")["output_tokens_per_s"] / 1e3)))
    deps = d("llama70b-slo")["deployments"]
    seen, best = set(), []
    for r in deps:
        if r["weights"] not in seen:
            seen.add(r["weights"])
            best.append("%s TP %d %s, %d GPUs, $%.2f/M output tokens" % (r["system"], r["tp"], r["weights"], r["gpus"],
                                                                       r["usd_per_million_output_tokens"]))
    rows.append(("08 70B at 100 req/s, P99 under 500 ms", "cheapest: " + "; ".join(best)))
    rows.append(("09 175B fault-tolerant serving",
                 "; ".join("N+%d: %d replicas of TP %d%s (%d GPUs)" % (k, x["replicas"], x["tp"],
                                                                       " PP %d" % x["pp"] if x.get("pp", 1) > 1 else "",
                                                                       x["gpus"])
                           for k, x in ((k, d("gpt175b-n%d" % k)["deployments"][0]) for k in (0, 1, 2)))))
    rows.append(("10 ResNet-152 inference, batch 8192 on T4s",
                 "one T4 %s; images/s: PP 2 %.0f, PP 4 %.0f, 4 replicas of micro-batch 512 %.0f"
                 % ("does not fit" if not d("r152-one-gpu")["fits"] else "fits", d("r152-pp2")["images_per_s"],
                    d("r152-pp4")["images_per_s"], d("r152-4-replicas")["images_per_s"])))
    cap = []
    for s in d("capacity-70b")["systems"]:
        c = s["config"]
        f = s.get("failures") or {}
        cap.append("%s: %d GPUs (TP %d, PP %d, CP %d, DP %d), %.1f days, MFU %.0f%%%s"
                   % (s["system"], s["gpus"], c["tp"], c["pp"], c.get("cp", 1), c["dp"], s["days"], 100 * s["mfu"],
                      ", goodput %.1f%%" % (100 * f["goodput"]) if "goodput" in f else ""))
    rows.append(("11 Llama-3-70B on 15T tokens in 90 days, failures counted", "; ".join(cap)))
    ft = []
    for k, label in (("ft-gpt2xl-full", "GPT-2 XL full fine-tuning on one T4"), ("ft-gpt2xl-lora", "LoRA r 16"),
                     ("ft-70b-qlora-gpu", "Llama-2-70B QLoRA r 64 on one H100")):
        x = d(k)
        ft.append("%s %s%s, %s" % (label, gib(max(m["peak_bytes"] for m in x["memory"])),
                                   "" if x["fits"] else " (does not fit)", step(x)))
    p = d("ft-70b-lora-node")
    w, c = p["winner"]["config"], p["counts"][0]["candidates"][0]
    ft.append("Llama-2-70B LoRA r 16 on 8 H100: TP %d DP %d ZeRO %d, %s, %s" % (w["tp"], w["dp"], w["zero"], step(c),
                                                                         gib(c["peak_bytes"])))
    rows.append(("12 fine-tuning: full, LoRA, QLoRA", "; ".join(ft)))
    if os.path.exists(os.path.join(top, "deepseek-r1-slo.json")):
        deps = d("deepseek-r1-slo")["deployments"]
        seen, best = set(), []
        for r in deps:
            if r["system"] not in seen:
                seen.add(r["system"])
                lay = ("EP%d%s" % (r["ep"], " dp-attn" if r.get("attention_dp") else "")) if r.get("ep", 1) > 1 \
                    else "TP %d" % r["tp"]
                iv = r.get("capacity_per_unit_interval")
                best.append("%s %s %s, %d GPUs, $%.2f/M output tokens, %.3g req/s per unit%s" % (
                    r["system"], lay, r["weights"], r["gpus"], r["usd_per_million_output_tokens"],
                    r["capacity_per_unit"], " (80%%: %.3g to %.3g)" % tuple(iv) if iv else ""))
        ep, tp = d("deepseek-r1-ep8"), d("deepseek-r1-tp8")
        rows.append(("13 DeepSeek-R1 at 20 req/s, P99 TTFT 2 s and TPOT 80 ms",
                     "cheapest per system: %s; one B200 node fp4, P50 TPOT EP8 attention-DP %.1f ms vs TP 8 %.1f ms"
                     % ("; ".join(best), ep["tpot_s"]["p50"] * 1e3, tp["tpot_s"]["p50"] * 1e3)))
    print("| example | what the current build answers |")
    print("| --- | --- |")
    for k, v in rows:
        print("| %s | %s |" % (k, v))


if __name__ == "__main__":
    main()
