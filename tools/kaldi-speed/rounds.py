#!/usr/bin/env python3
"""rounds.py LOGDIR: how far each process of a ../shared/kaldi-speed/compare.sh run drifted, to judge
its noise beside compare.py's TOTAL and CONTROL lines. For each test and side (kaldi, control when
compare.sh ran with CONTROL=1, cuctx), one line per round: the geometric mean over the (op, size)
pairs of that round's speed over the side's median of all rounds (1.00: the process ran at the
side's typical speed; rounds at 0.95 and 1.05 mean the host drifted by 10% within the run). Then,
with a control, cuctx against each Kaldi run separately (cuctx / kaldi and cuctx / control, from
the medians), so that a run whose control is off 1.00 can be read against both."""
import glob
import math
import os
import re
import statistics
import sys

LINE = re.compile(r"For (.*?), for dim = ([\d, ]+?), speed was ([\d.e+-]+)")


def speeds(path):
    """(op, dims) -> the last speed printed for it (Kaldi's main runs the GPU pass last)."""
    out = {}
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.search(line)
            if m and float(m.group(3)) > 0:
                out[(m.group(1).strip(), m.group(2).strip())] = float(m.group(3))
    return out


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def side_runs(logdir, side, test):
    """{round: speeds} of one side's logs for one test."""
    runs = {}
    for path in glob.glob(os.path.join(logdir, "%s-%s-*.log" % (side, test))):
        m = re.search(r"-(\d+)\.log$", path)
        if m:
            runs[int(m.group(1))] = speeds(path)
    return runs


def medians(runs):
    keys = set().union(*runs.values()) if runs else set()
    return {k: statistics.median([r[k] for r in runs.values() if k in r]) for k in keys}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    logdir = sys.argv[1]
    tests = sorted({re.sub(r"^kaldi-(.*)-\d+\.log$", r"\1", os.path.basename(p))
                    for p in glob.glob(os.path.join(logdir, "kaldi-*-*.log"))})
    if not tests:
        sys.exit("rounds.py: no kaldi-<test>-<round>.log in %s" % logdir)
    for test in tests:
        med = {}
        for side in ("kaldi", "control", "cuctx"):
            runs = side_runs(logdir, side, test)
            if not runs:
                continue
            med[side] = medians(runs)
            per_round = []
            for rnd in sorted(runs):
                ratios = [v / med[side][k] for k, v in runs[rnd].items() if med[side].get(k, 0) > 0]
                per_round.append("%d: %.3f" % (rnd, geomean(ratios)))
            print("%s %-7s each round against the side's medians: %s" % (test, side,
                                                                         "  ".join(per_round)))
        if "cuctx" in med:
            for base in ("kaldi", "control"):
                if base not in med:
                    continue
                ratios = [med["cuctx"][k] / v for k, v in med[base].items()
                          if v > 0 and med["cuctx"].get(k, 0) > 0]
                print("%s cuctx / %-7s %d pairs, geometric mean %.3f" % (test, base, len(ratios),
                                                                          geomean(ratios)))


if __name__ == "__main__":
    main()
