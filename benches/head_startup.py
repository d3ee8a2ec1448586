#!/usr/bin/env python3
"""Issue 34: start-up of `world head` against the sqlite3 CLI reading the same row.

Usage: python3 benches/head_startup.py DB WORLD_BIN [OTHER_WORLD_BIN] [ROUNDS]

One process per call; the binaries and sqlite3 alternate in every round (so load drift hits
all alike); prints the median of each and its ratio to sqlite3 (target <= 1.2). Give two
world binaries to compare a before and an after build in the same run.
"""
import os
import statistics
import subprocess
import sys
import time

db, bins = sys.argv[1], [a for a in sys.argv[2:] if not a.isdigit()]
rounds = int(next((a for a in sys.argv[2:] if a.isdigit()), "201"))
env = dict(os.environ, WORLD_DB=db, NO_COLOR="1")
cmds = {b: [b, "head"] for b in bins}
cmds["sqlite3"] = ["sqlite3", "-readonly", db,
                   "SELECT world_ref FROM store_heads WHERE head_key = 'selected_world_head'"]
times = {k: [] for k in cmds}
for _ in range(rounds):
    for k, c in cmds.items():
        start = time.perf_counter()
        subprocess.run(c, env=env, stdout=subprocess.DEVNULL, check=True)
        times[k].append(time.perf_counter() - start)
med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
for b in bins:
    print(f"{b} head {med[b]:.2f} ms, sqlite3 {med['sqlite3']:.2f} ms, "
          f"ratio {med[b] / med['sqlite3']:.2f} (median of {rounds}; target <= 1.2)")
