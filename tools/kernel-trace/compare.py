#!/usr/bin/env python3
"""compare.py KALDI.tsv CUCTX.tsv [MIN_DIM]: per op and size (the last row of each, Kaldi's GPU
pass) two ratios Kaldi/cuctx of bin-by-line.py tables, > 1 where cuctx's kernels are faster:
  top: median duration of each side's most launched kernel (one-kernel ops: kernel time per call);
  per_call: kernel time per call of the whole window, calls taken from the printed speed (both
    sides print speed = work x calls / time with the same work), so kernel time per call is
    proportional to kernel_ns / (speed x wall_ns) on each side.
Prints rows for sizes >= MIN_DIM (default 512) sorted by per_call, and geometric means."""
import math
import sys

import speedlog

kal, cux = speedlog.load_table(sys.argv[1]), speedlog.load_table(sys.argv[2])
min_dim = int(sys.argv[3]) if len(sys.argv) > 3 else 512
out = []
for key, k in kal.items():
    c = cux.get(key)
    if c is None or key[1] < min_dim:
        continue
    vals = [float(x[f]) for x in (k, c) for f in ('kernel_ns', 'speed', 'wall_ns', 'top_med_ns')]
    kk, ks, kw, km, ck, cs, cw, cm = vals
    if min(kk, ks, kw, km, ck, cs, cw, cm) <= 0:
        continue
    per_call = (kk / (ks * kw)) / (ck / (cs * cw))
    out.append((per_call, km / cm, key, km, cm, k['top_name'][:40], c['top_name'][:60]))
out.sort()
print("per_call  top  op dim | Kaldi top ns  cuctx top ns | Kaldi kernel | cuctx kernel")
for per_call, top, key, km, cm, kn, cn in out:
    print("%5.2f %5.2f  %s %d | %.0f %.0f | %s | %s" % (per_call, top, key[0], key[1], km, cm,
                                                       kn, cn))
if out:
    g = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs))
    print("GEOMEAN per_call %.3f top %.3f over %d pairs (dim >= %d); per_call < 0.9: %d" % (
        g([o[0] for o in out]), g([o[1] for o in out]), len(out), min_dim,
        sum(1 for o in out if o[0] < 0.9)))
