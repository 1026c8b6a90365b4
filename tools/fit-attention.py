#!/usr/bin/env python3
"""fit-attention.py -- the fused-attention rates of the H100 from measured kernel times.

Reads the FlashAttention-3 rows of ../shared/validation/kernels.csv (H100 SXM, BF16, causal,
B=4, H=48, D=128, S=1K-8K; meta-pytorch/tritonbench PR #1267), converts each kernel time to
TFLOP/s with the cost model's FLOP count (forward 2 B H S^2 (D + D) x 1/2 causal, backward 2.5x
that: hw_kernel_flops), and fits the cost model's attention curve, rate = eff x peak x S / (S +
ramp), by least squares on the logarithms (a grid over the ramp, the efficiency in closed form
for each).  Prints the parameter rows of hardware/data/params.sql for h100-sxm (the H200 has the
same compute and takes them too); tests/cli_validate.sh checks that the shipped rows agree.

    python3 tools/fit-attention.py [KERNELS_CSV]
"""
import csv
import math
import re
import sys

PEAK_BF16 = 989.4  # H100 SXM dense BF16 TFLOP/s (hardware/data/gpus.sql)


def points(path, direction):
    out = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["gpu"] != "H100" or "FlashAttention-3" not in r["kernel"] or direction not in r["kernel"]:
                continue
            m = re.search(r"B=(\d+), H=(\d+), S=(\d+), D=(\d+)", r["shape_or_size"])
            b, h, s, d = map(int, m.groups())
            flops = 2.0 * b * h * s * s * (d + d) * 0.5
            if direction == "backward":
                flops *= 2.5
            us = float(r["measured_value"])
            out.append((s, flops / (us * 1e-6) / 1e12))
    return sorted(out)


def fit(pts):
    best = None
    for ramp in range(0, 20001, 10):
        le = [math.log(t) - math.log(s / (s + ramp)) for s, t in pts]
        lmean = sum(le) / len(le)
        err = sum((lmean + math.log(s / (s + ramp)) - math.log(t)) ** 2 for s, t in pts)
        if best is None or err < best[0]:
            best = (err, ramp, math.exp(lmean))
    return best[1], best[2] / PEAK_BF16


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "../shared/validation/kernels.csv"
    src = "kernels.csv: meta-pytorch/tritonbench PR #1267 (H100 BF16 FA3 causal, B=4 H=48 D=128, S=1K-8K)"
    for direction, key in (("forward", "fwd"), ("backward", "bwd")):
        pts = points(path, direction)
        if len(pts) < 2:
            sys.exit("fit-attention.py: %s: no FlashAttention-3 %s rows" % (path, direction))
        ramp, eff = fit(pts)
        meas = ", ".join("%d %.0f" % p for p in pts)
        method = "fit of rate = eff x peak x S/(S + ramp) to FA3 %s TFLOP/s by S (%s)" % (key, meas)
        print("('gpu', 'h100-sxm', 'attn_flash3_%s', %.3f, 'default', '%s', '%s')," % (key, eff, method, src))
        print("('gpu', 'h100-sxm', 'attn_seq_ramp_%s', %d, 'default', '%s', '%s')," % (key, ramp, method, src))


if __name__ == "__main__":
    main()
