#!/usr/bin/env python3
"""durations.py TRACE_PREFIX: the kernels of a CUTRACE=kernels trace (TRACE_PREFIX.bin, .names)
in launch order, grouped into runs of consecutive launches of one kernel, grid and block (runs of
20 or more): median duration in ns, count, grid, block and name, one line a run."""
import struct, sys, statistics
p = sys.argv[1]
names = open(p + '.names').read().split('\n')
data = open(p + '.bin', 'rb').read()
recs = [struct.unpack_from('<qq8i', data, o) for o in range(0, len(data) - 47, 48)]
recs.sort(key=lambda r: r[0])
runs = []
for r in recs:
    key = (r[2], r[3], r[4], r[6], r[7])
    if runs and runs[-1][0] == key: runs[-1][1].append(r[1] - r[0])
    else: runs.append((key, [r[1] - r[0]]))
for key, ds in runs:
    if len(ds) < 20: continue
    n = names[key[0]]
    n = n[:90]
    print(f"{statistics.median(ds):8.0f} ns  n={len(ds):4d} grid {key[1]}x{key[2]} block {key[3]}x{key[4]}  {n}")
