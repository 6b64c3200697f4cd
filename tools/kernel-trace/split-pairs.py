#!/usr/bin/env python3
"""split-pairs.py TRACEDIR LOGDIR...: splits the (op, size) pairs of compare.sh's matrix logs by
what bounds them, and prints the geometric mean of cuctx/Kaldi per group. TRACEDIR holds the
bin-by-line.py tables of the same revision (kaldi-matrix.tsv, cuctx-matrix.tsv); LOGDIR is a
compare.sh log directory (kaldi-matrix-N.log, cuctx-matrix-N.log). A pair is "one-kernel" when
its most launched kernel carries at least 80% of the window's kernel time on both sides (one
launch per call), else "multi"; sizes up to 256 are where the host's launch bounds a one-kernel
op, 512 and up where its kernel does. Ratios are of the medians over the rounds, as compare.py
takes them (imported from beside compare.sh: set KALDI_SPEED to its folder, default
../shared/kaldi-speed)."""
import csv
import glob
import math
import os
import sys

from speedlog import compare_module
from speedlog import pair_key as key

ONE_KERNEL_SHARE = 0.8


def shares(path):
    """(op, dim) -> share of the window's kernel time in its most launched kernel (GPU pass)."""
    out = {}
    for r in csv.DictReader(open(path), delimiter="\t"):
        launches = int(r["top_launches"])
        if launches == 0:
            continue
        out[key(r["op"], r["dim"])] = launches * int(r["top_med_ns"]) / max(1, int(r["kernel_ns"]))
    return out


def gmean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    cmp = compare_module()
    kaldi = shares(os.path.join(sys.argv[1], "kaldi-matrix.tsv"))
    cuctx = shares(os.path.join(sys.argv[1], "cuctx-matrix.tsv"))
    for logdir in sys.argv[2:]:
        k = cmp.medians(sorted(glob.glob(os.path.join(logdir, "kaldi-matrix-*.log"))))
        c = cmp.medians(sorted(glob.glob(os.path.join(logdir, "cuctx-matrix-*.log"))))
        groups = {}
        for (op, dim), speed in k.items():
            if (op, dim) not in c or speed <= 0 or c[(op, dim)] <= 0:
                continue
            kk = key(op, dim)
            one = kk in kaldi and kk in cuctx and min(kaldi[kk], cuctx[kk]) >= ONE_KERNEL_SHARE
            small = max(int(x) for x in dim.split(",")) <= 256
            name = ("one-kernel" if one else "multi") + (" 16-256" if small else " 512-1024")
            groups.setdefault(name, []).append(c[(op, dim)] / speed)
        everything = [r for v in groups.values() for r in v]
        print("%s: %d pairs, geometric mean %.3f" % (logdir, len(everything), gmean(everything)))
        for name in sorted(groups):
            print("  %-20s %4d pairs  %.3f" % (name, len(groups[name]), gmean(groups[name])))


if __name__ == "__main__":
    main()
