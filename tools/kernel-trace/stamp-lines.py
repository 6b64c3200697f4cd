#!/usr/bin/env python3
"""stamp-lines.py: copies standard input to standard output, each line prefixed with the time it
arrived (CLOCK_REALTIME seconds, microseconds), for bin-by-line.py."""
import sys
import time

for line in sys.stdin:
    sys.stdout.write("%.6f %s" % (time.time(), line))
    sys.stdout.flush()
