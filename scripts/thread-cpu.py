#!/usr/bin/env python3
"""A JVM's CPU by thread group between two listings of `comm ticks` lines (one per thread, ticks of
10 ms from /proc/<pid>/task/*/stat), trailing numbers dropped from the names so that the threads of
one pool add up: scripts/waiting-run.sh and scripts/first-night.sh.

    thread-cpu.py BEFORE AFTER PER_TICK UNIT [MIN]

PER_TICK scales one tick into the figure printed in UNIT (e.g. 0.5 for ms/s over 20 s); groups
below MIN are left out."""
import collections
import re
import sys

before, after = collections.Counter(), collections.Counter()
for path, into in ((sys.argv[1], before), (sys.argv[2], after)):
    for line in open(path):
        name, ticks = line.rsplit(' ', 1)
        into[re.sub(r'[-_#]?\d+$', '', name)] += int(ticks)
per_tick, unit = float(sys.argv[3]), sys.argv[4]
least = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0
for name, ticks in sorted(((n, after[n] - before[n]) for n in after), key=lambda x: -x[1]):
    if ticks > 0 and ticks * per_tick >= least:
        print(f"  {ticks * per_tick:7.1f} {unit}  {name}")
