#!/usr/bin/env python3
"""api-by-line.py BASE STAMPED_LOG OUT.tsv: the API calls of a cupti-trace run with CUTRACE=api
(BASE.api.bin, BASE.api.names) that began between consecutive 'For OP, for dim = N ... speed was S'
lines of a speed test's log (time-stamped by stamp-lines.py), one row per line: the window's wall
time, the speed printed, the calls the program made itself (depth 0: runtime calls, and driver
calls made outside the runtime), all driver calls (nested ones too), the kernel launches among them
(cuLaunchKernel*), the time spent inside the depth-0 calls, and the most made depth-0 calls.
api-compare.py compares two such tables."""
import bisect
import collections
import struct
import sys

import speedlog

base, log, out = sys.argv[1:4]
data = open(base + '.api.bin', 'rb').read()
# (enter, exit, domain, cbid, depth, thread), sorted by enter (threads' buffers are written one
# after the other).
rec = sorted(struct.iter_unpack('<qqiiii', data))
names = {}
for line in open(base + '.api.names'):
    d, c, n = line.rstrip('\n').split('\t')
    names[(int(d), int(c))] = n
DRIVER, RUNTIME = 1, 2  # CUpti_CallbackDomain
launch = {k for k, n in names.items() if k[0] == DRIVER and n.startswith('cuLaunchKernel')}
labels = speedlog.labels(log)
enter = [r[0] for r in rec]
with open(out, 'w') as f:
    f.write("op\tdim\twall_ns\tspeed\ttop_calls\tdriver_calls\tlaunches\tin_cuda_ns\tmost_made\n")
    prev = enter[0] if enter else 0
    for t, op, dim, speed in labels:
        a, b = bisect.bisect_left(enter, prev), bisect.bisect_left(enter, t)
        wall, prev = t - prev, t
        top = collections.Counter()
        n_driver = n_launch = in_cuda = 0
        for r in rec[a:b]:
            k = (r[2], r[3])
            if k[0] == DRIVER:
                n_driver += 1
                n_launch += k in launch
            if r[4] == 0:
                top[k] += 1
                in_cuda += max(r[1] - r[0], 0)
        most_s = ';'.join('%s:%d' % (names.get(k, '?'), n) for k, n in top.most_common(6))
        f.write("%s\t%d\t%d\t%g\t%d\t%d\t%d\t%d\t%s\n" % (op, dim, wall, speed, sum(top.values()),
                                                         n_driver, n_launch, in_cuda, most_s))
print(out, len(labels), "lines,", len(rec), "API calls")
