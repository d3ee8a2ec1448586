#!/usr/bin/env python3
"""Issue 34: start-up of `world head` against the sqlite3 CLI reading the same row.

Usage: python3 benches/head_startup.py DB WORLD_BIN [OTHER_WORLD_BIN] [ROUNDS]
       python3 benches/head_startup.py --instructions DB WORLD_BIN [OTHER_WORLD_BIN]

One process per call; the binaries and sqlite3 alternate in every round (so load drift hits
all alike); prints the median of each and its ratio to sqlite3 (target <= 1.2). Give two
world binaries to compare a before and an after build in the same run.

With --instructions, each command runs once under `valgrind --tool=callgrind` instead and the
ratio is of the instructions executed by the whole process (dynamic loader included), which do
not depend on the machine's load.
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

argv = sys.argv[1:]
instructions = "--instructions" in argv
argv = [a for a in argv if a != "--instructions"]
db, bins = argv[0], [a for a in argv[1:] if not a.isdigit()]
rounds = int(next((a for a in argv[1:] if a.isdigit()), "201"))
env = dict(os.environ, WORLD_DB=db, NO_COLOR="1")
cmds = {b: [b, "head"] for b in bins}
cmds["sqlite3"] = ["sqlite3", "-readonly", db,
                   "SELECT world_ref FROM store_heads WHERE head_key = 'selected_world_head'"]


def instructions_of(cmd):
    """Instructions the whole process executes (callgrind's `I refs`)."""
    with tempfile.TemporaryDirectory() as d:
        out = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={d}/cg.out"] + cmd,
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True)
    refs = re.search(r"I\s+refs:\s+([\d,]+)", out.stderr)
    return int(refs.group(1).replace(",", ""))


if instructions:
    count = {k: instructions_of(c) for k, c in cmds.items()}
    for b in bins:
        print(f"{b} head {count[b]:,} instructions, sqlite3 {count['sqlite3']:,}, "
              f"ratio {count[b] / count['sqlite3']:.2f} (callgrind, whole process; target <= 1.2)")
    sys.exit(0)

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
print(f"load average at the end: {os.getloadavg()[0]:.2f}")
