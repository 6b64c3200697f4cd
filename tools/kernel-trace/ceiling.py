#!/usr/bin/env python3
"""ceiling.py TRACEDIR LOGDIR LAUNCH: how far the host's launch cost lets cuctx rise above Kaldi on
Kaldi's cu-matrix-speed-test, from one GPU host's measurements.
  TRACEDIR  bin-by-line.py tables of both builds (kaldi.tsv, cuctx.tsv: card.sh trace);
  LOGDIR    compare.sh's logs (kaldi-matrix-N.log, cuctx-matrix-N.log: card.sh matrix);
  LAUNCH    the host's cost of one bare kernel launch in us, or launch-paths' output (card.sh
            trace's launch.txt): per process the cheapest cuLaunchKernel path's median, and the
            median of those over the processes.
A pair (op, size) is "one launch per call" when on both sides its most launched kernel carries at
least 80% of the window's kernel time and both sides agree on the work per call (in the log's
units: the median gap between that kernel's starts, the time per call in the traced run, x the
speed printed there) within 20%. For those pairs the time per call in the compare run is that
work / the median speed over its rounds, and the floor is one bare launch or cuctx's kernel's
median duration, whichever is longer: no op that launches one kernel can cost the host less. Such
a pair is "launch-bound" when both sides take at most twice the floor per call (the others also
wait for the GPU, as a reduction read back to the host does, or do host work of their own, as
cuBLAS does). The ceiling of a launch-bound pair is Kaldi's time per call / the floor (or the
measured ratio where that is higher): what cuctx would read if its op cost exactly the floor.
Every other pair stays as measured. Prints the measured geometric mean, the ceiling, and both
sides' time per call against the floor on the launch-bound pairs."""
import csv
import math
import os
import re
import statistics
import sys

from speedlog import compare_module, pair_key

ONE_KERNEL_SHARE = 0.8
SAME_WORK = 1.2
LAUNCH_BOUND = 2.0


def gmean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def launch_us(arg):
    """A number, or launch-paths' output (processes separated by the chevron baseline row)."""
    try:
        return float(arg)
    except ValueError:
        pass
    best, per_process = None, []
    for line in open(arg):
        if line.startswith("chevron+gle perthread") and best is not None:
            per_process.append(best)
            best = None
        m = re.match(r"cuLaunchKernel .*? median ([0-9.]+) us", line)
        if m:
            best = min(best or float("inf"), float(m.group(1)))
    if best is not None:
        per_process.append(best)
    if not per_process:
        sys.exit("ceiling.py: no cuLaunchKernel rows in %s" % arg)
    return statistics.median(per_process)


def one_launch_rows(path):
    """pair key -> (work per call = the top kernel's median gap x speed, its median duration), for
    the windows whose most launched kernel carries most of the kernel time."""
    out = {}
    for r in csv.DictReader(open(path), delimiter="\t"):
        launches, top_ns = int(r["top_launches"]), float(r["top_med_ns"])
        if launches == 0 or launches * top_ns < ONE_KERNEL_SHARE * float(r["kernel_ns"]):
            continue
        work = float(r["top_gap_ns"]) * float(r["speed"])
        if work > 0:
            out[pair_key(r["op"], r["dim"])] = (work, top_ns)
    return out


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    trace, logdir = sys.argv[1], sys.argv[2]
    floor_ns = launch_us(sys.argv[3]) * 1000
    cmp = compare_module()
    logs = lambda side: sorted(os.path.join(logdir, f) for f in os.listdir(logdir)
                               if re.match(r"%s-matrix-\d+\.log$" % side, f))
    k, c = cmp.medians(logs("kaldi")), cmp.medians(logs("cuctx"))
    kt = one_launch_rows(os.path.join(trace, "kaldi.tsv"))
    ct = one_launch_rows(os.path.join(trace, "cuctx.tsv"))
    measured, ceiling, bound, bound_ceiling, cost, kaldi_cost, rest = [], [], [], [], [], [], []
    for pair, ks in k.items():
        cs = c.get(pair)
        if cs is None or ks <= 0 or cs <= 0:
            continue
        ratio = cs / ks
        measured.append(ratio)
        key = pair_key(*pair)
        if key in kt and key in ct and 1 / SAME_WORK <= kt[key][0] / ct[key][0] <= SAME_WORK:
            work, kernel_ns = ct[key]
            floor = max(floor_ns, kernel_ns)
            over_k, over_c = work / ks / floor, work / cs / floor
            if max(over_k, over_c) <= LAUNCH_BOUND:
                bound.append(ratio)
                bound_ceiling.append(max(ratio, over_k))
                ceiling.append(bound_ceiling[-1])
                cost.append(over_c)
                kaldi_cost.append(over_k)
                continue
        ceiling.append(ratio)
        rest.append(ratio)
    if not measured:
        sys.exit("ceiling.py: no common pairs in %s" % logdir)
    print("matrix: launch floor %.3f us; %d pairs, measured geometric mean cuctx/Kaldi %.3f, "
          "ceiling %.3f" % (floor_ns / 1000, len(measured), gmean(measured), gmean(ceiling)))
    if bound:
        print("  launch-bound: %d pairs, measured %.3f, ceiling %.3f"
              % (len(bound), gmean(bound), gmean(bound_ceiling)))
        for side, values in (("cuctx", cost), ("Kaldi", kaldi_cost)):
            q = statistics.quantiles(values, n=4) if len(values) > 1 else values * 3
            print("    %s's time per call / the floor: median %.3f (q1 %.3f, q3 %.3f)"
                  % (side, q[1], q[0], q[2]))
    print("  other pairs (as measured): %d, %.3f" % (len(rest), gmean(rest)))


if __name__ == "__main__":
    main()
