#!/bin/sh
# Benchmark for `world invoke` (issue 5, "Reliability and performance").
#
# 1. Coordinator overhead per invocation, excluding interpreter time: the wall time of
#    `world invoke echo` (pure echo transition, fresh process each time) minus the wall time of
#    `world ailang run` of the same source with the same argument (fresh process each time),
#    median of N each (default 100). Target: < 10 ms.
# 2. A long episode on one store: M invocations of `echo` (default 2000; set INVOKE_BENCH_M=10000
#    for the full run), invocations per second and store bytes per invocation (db + WAL after a
#    checkpoint, minus the store before the episode).
#
# Usage (from the repository root):
#   cargo build --release --bin world && sh benches/invoke.sh
# Environment: WORLD_BIN (default target/release/world), INVOKE_BENCH_N, INVOKE_BENCH_M.
set -eu

BIN=${WORLD_BIN:-target/release/world}
N=${INVOKE_BENCH_N:-100}
M=${INVOKE_BENCH_M:-2000}
[ -x "$BIN" ] || { echo "no world binary at $BIN; run: cargo build --release --bin world" >&2; exit 2; }
[ -f fixtures/transitions/manifest.json ] || { echo "run from the repository root" >&2; exit 2; }

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export WORLD_DB="$TMP/w.db"
unset WORLD_SESSION || true
mkdir -p "$TMP/ws/bench"
"$BIN" -q genesis >/dev/null
"$BIN" -q publish --manifest fixtures/transitions/manifest.json --yes >/dev/null 2>&1
"$BIN" -q session mint --episode bench --grant world.apply=world:1 --workspace-root "$TMP/ws" \
  --ttl 86400 --yes --out "$TMP/tok" >/dev/null 2>&1

ARGS='{"a":1,"b":"two"}'
# The interpreter sees the Go-json invocation input as its string argument.
INPUT_JSON='"{\"a\":1,\"b\":\"two\"}"'

now_ns() { date +%s%N; }

median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print int((a[NR/2]+a[NR/2+1])/2)}'; }

: > "$TMP/inv.txt"; : > "$TMP/run.txt"
i=0
while [ "$i" -lt "$N" ]; do
  t0=$(now_ns); "$BIN" -q invoke echo --session "$TMP/tok" --args "$ARGS" >/dev/null; t1=$(now_ns)
  echo $((t1 - t0)) >> "$TMP/inv.txt"
  t0=$(now_ns); "$BIN" -q ailang run --args-json "$INPUT_JSON" fixtures/transitions/echo.ail >/dev/null; t1=$(now_ns)
  echo $((t1 - t0)) >> "$TMP/run.txt"
  i=$((i + 1))
done
INV=$(median < "$TMP/inv.txt")
RUN=$(median < "$TMP/run.txt")
OVER=$((INV - RUN))
awk -v inv="$INV" -v run="$RUN" -v over="$OVER" -v n="$N" 'BEGIN {
  printf "overhead: median of %d: invoke %.2f ms, bare interpreter run %.2f ms, coordinator overhead %.2f ms (target < 10 ms); invoke/run ratio %.2f\n",
    n, inv/1e6, run/1e6, over/1e6, inv/run }'

# Long episode.
"$BIN" -q verify >/dev/null
sqlite_bytes() { s=0; for f in "$WORLD_DB" "$WORLD_DB-wal"; do [ -f "$f" ] && s=$((s + $(stat -c %s "$f"))); done; echo "$s"; }
B0=$(sqlite_bytes)
t0=$(now_ns)
i=0
while [ "$i" -lt "$M" ]; do
  "$BIN" -q invoke echo --session "$TMP/tok" --args "{\"i\":$i}" >/dev/null
  i=$((i + 1))
  [ "$i" -eq $((M / 2)) ] && th=$(now_ns)
done
t1=$(now_ns)
awk -v h=$((M / 2)) -v a=$((th - t0)) -v b=$((t1 - th)) 'BEGIN {
  printf "first half %.2f ms/invocation, second half %.2f ms/invocation\n", a/1e6/h, b/1e6/h }'
"$BIN" -q verify >/dev/null
B1=$(sqlite_bytes)
awk -v m="$M" -v ns=$((t1 - t0)) -v b=$((B1 - B0)) -v over="$OVER" 'BEGIN {
  s = ns/1e9
  printf "episode: %d invocations in %.1f s = %.1f invocations/s (%.2f ms each); store grew %d bytes = %.0f bytes/invocation\n",
    m, s, m/s, s*1000/m, b, b/m
  if (m < 10000) printf "extrapolated to 10000 invocations: %.0f s at the same rate (linear; compare the two halves above)\n", s*10000/m
}'
