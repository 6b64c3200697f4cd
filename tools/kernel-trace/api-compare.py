#!/usr/bin/env python3
"""api-compare.py KALDI.tsv CUCTX.tsv [MAX_DIM]: per op and size up to MAX_DIM (default 256, where
ops are bound by the host; the last row of each, Kaldi's GPU pass), from two api-by-line.py tables:
each side's depth-0 calls and driver calls per kernel launch, and the ratio cuctx/Kaldi of depth-0
calls per op call (calls taken from the printed speed: both sides print speed = work x calls / time
with the same work, so calls per op call are proportional to calls / (speed x wall)). Sorted by
that ratio, largest first (where cuctx makes more calls than Kaldi), with each side's most made
calls; the geometric mean at the end."""
import math
import sys

import speedlog

kal, cux = speedlog.load_table(sys.argv[1]), speedlog.load_table(sys.argv[2])
max_dim = int(sys.argv[3]) if len(sys.argv) > 3 else 256
out = []
for key, k in kal.items():
    c = cux.get(key)
    if c is None or key[1] > max_dim:
        continue
    kt, ks, kw, kl = (float(k[f]) for f in ('top_calls', 'speed', 'wall_ns', 'launches'))
    ct, cs, cw, cl = (float(c[f]) for f in ('top_calls', 'speed', 'wall_ns', 'launches'))
    if min(kt, ks, kw, ct, cs, cw) <= 0:
        continue
    ratio = (ct / (cs * cw)) / (kt / (ks * kw))
    per = lambda t, l: '%.1f' % (t / l) if l else '-'
    out.append((ratio, key, per(kt, kl), per(ct, cl), per(float(k['driver_calls']), kl),
                per(float(c['driver_calls']), cl), k['most_made'], c['most_made']))
out.sort(key=lambda o: -o[0])
print("calls/op cuctx/Kaldi  op dim | depth-0 calls per launch Kaldi cuctx | driver calls per "
      "launch Kaldi cuctx")
for ratio, key, kp, cp, kd, cd, km, cm in out:
    print("%5.2f  %s %d | %s %s | %s %s" % (ratio, key[0], key[1], kp, cp, kd, cd))
    print("        Kaldi: %s\n        cuctx: %s" % (km[:200], cm[:200]))
if out:
    g = math.exp(sum(math.log(o[0]) for o in out) / len(out))
    print("GEOMEAN calls per op call cuctx/Kaldi %.3f over %d pairs (dim <= %d); above 1.1: %d" % (
        g, len(out), max_dim, sum(1 for o in out if o[0] > 1.1)))
