#!/usr/bin/env python3
"""bin-by-line.py BASE STAMPED_LOG OUT.tsv: the kernels of a cupti-trace (BASE.bin, BASE.names) that
started between consecutive 'For OP, for dim = N ... speed was S' lines of a speed test's log
(time-stamped by stamp-lines.py), one row per line: the window's wall time, the speed printed, the
kernel time of the window (all kernels but cuRAND's set-up), the most launched kernel signature
(name, grid, block: for a one-kernel op, one launch per call), its launches, median duration and
median gap between consecutive starts (for a one-kernel op, the time per call in this run).
Kernels still queued when a line is printed fall into the next window; at sizes where an op takes
most of its window they are a small part of it."""
import sys

import numpy as np

import speedlog

base, log, out = sys.argv[1:4]
dt = np.dtype([('s', '<i8'), ('e', '<i8'), ('name', '<i4'), ('gx', '<i4'), ('gy', '<i4'),
               ('gz', '<i4'), ('bx', '<i4'), ('by', '<i4'), ('bz', '<i4'), ('pad', '<i4')])
rec = np.fromfile(base + '.bin', dtype=dt)
names = open(base + '.names').read().split('\n')
setup = np.array([('curand' in n or 'gen_sequenced' in n or 'generate_seed' in n) for n in names]
                 + [False])
rec = rec[~setup[rec['name']]]
rec = rec[np.argsort(rec['s'], kind='stable')]
labels = speedlog.labels(log)
starts = rec['s']
with open(out, 'w') as f:
    f.write("op\tdim\twall_ns\tspeed\tkernel_ns\ttop_launches\ttop_med_ns\ttop_grid\ttop_block\t"
            "top_name\ttop_gap_ns\n")
    prev = int(starts[0]) if len(starts) else 0  # the first window starts at the first kernel
    for i, (t, op, dim, speed) in enumerate(labels):
        a, b = np.searchsorted(starts, prev), np.searchsorted(starts, t)
        wall, prev = t - prev, t
        w = rec[a:b]
        if len(w) == 0:
            f.write("%s\t%d\t%d\t%g\t0\t0\t0\t-\t-\t-\t0\n" % (op, dim, wall, speed))
            continue
        key = np.stack([w['name'], w['gx'], w['gy'], w['gz'], w['bx'], w['by'], w['bz']], axis=1)
        uniq, inv, cnt = np.unique(key, axis=0, return_inverse=True, return_counts=True)
        inv = inv.reshape(-1)
        dur = (w['e'] - w['s']).astype(np.float64)
        top = int(np.argmax(cnt))
        u = uniq[top]
        gaps = np.diff(w['s'][inv == top])
        f.write("%s\t%d\t%d\t%g\t%.0f\t%d\t%.0f\t%d,%d,%d\t%d,%d,%d\t%s\t%.0f\n" % (
            op, dim, wall, speed, dur.sum(), cnt[top], np.median(dur[inv == top]), u[1], u[2],
            u[3], u[4], u[5], u[6], names[u[0]][:200], np.median(gaps) if len(gaps) else 0))
print(out, len(labels), "lines,", len(rec), "kernels")
