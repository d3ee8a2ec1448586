#!/usr/bin/env bash
# The quickstart episode, end to end, on the embedded defaults (bundled SQLite and the
# embedded AILANG interpreter; no external `ailang` needed). Builds `world`, creates a fresh
# store in a temp directory and walks through: genesis; client commits (one with a rest:
# receipt) and a refused stale commit; publishing the fixture transitions; minting a session
# (unattended, recorded as such); a pure invocation; an effectful write and read in the
# episode worktree; a denial when the budget runs out; an approval decided and claimed once;
# effects, receipts, `why` and `verify`.
# Exits non-zero if any step does not behave as shown.
set -euo pipefail
cd "$(dirname "$0")/.."

# WORLD_BIN names an already-built binary (tests/quickstart.rs runs this script with the test
# build); by default the script builds the release binary itself.
if [ -n "${WORLD_BIN:-}" ]; then
  W="$WORLD_BIN"
else
  cargo build --release --quiet
  W="$PWD/target/release/world"
fi
DIR="$(mktemp -d "${TMPDIR:-/tmp}/world-quickstart.XXXXXX")"
export WORLD_DB="$DIR/world.db"
trap 'rm -rf "$DIR"' EXIT

say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
run() { say "world $*"; "$W" "$@"; }
sha() { printf 'sha256:%s' "$(printf '%s' "$1" | sha256sum | cut -d' ' -f1)"; }

run genesis
HEAD="$("$W" head)"
PREV="$("$W" log get 0 --json | sed -E 's/.*"entryHash":"([^"]+)".*/\1/')"

# A client commit: one object, and entry/world refs chosen by the client (the store does not
# recompute client hashes; `world verify` reports them as "not recomputed").
commit_body() { # index payload prev observed [invocationId]
  local idx="$1" payload="$2" prev="$3" observed="$4" inv="${5:-}"
  local h; h="$(sha "$payload")"
  local b64; b64="$(printf '%s' "$payload" | base64 -w0)"
  local eh; eh="$(sha "quickstart-entry-$idx")"
  local wr; wr="$(sha "quickstart-world-$idx")"
  local invj=""; [ -n "$inv" ] && invj="\"invocationId\":\"$inv\","
  printf '{%s"observedHead":"%s","objects":[{"hash":"%s","interfaceHash":"%s","semanticId":"world/demo/note","provenance":"quickstart","payload":"%s"}],"nextWorld":{"ref":"%s","revision":%d,"stateRoot":"%s","logHead":"%s"},"entry":{"header":{"entryIndex":%d,"semanticsEpoch":1,"transitionFn":"%s","interpreter":"%s","prevEntryHash":"%s","writtenBy":"quickstart"},"entryHash":"%s","transitionRef":"%s"}}\n' \
    "$invj" "$observed" "$h" "$(sha iface-v1)" "$b64" "$wr" "$idx" "$h" "$eh" "$idx" "$h" "$(sha interp)" "$prev" "$eh" "$h"
}

commit_body 1 '{"note":"first"}' "$PREV" "$HEAD" "rest:quickstart-1" > "$DIR/c1.json"
run commit "$DIR/c1.json"
run receipt rest:quickstart-1
say "world commit $DIR/c1.json   # resent: idempotent, nothing written"
"$W" commit "$DIR/c1.json"
HEAD1="$("$W" head)"

commit_body 2 '{"note":"second"}' "$(sha quickstart-entry-1)" "$HEAD" > "$DIR/stale.json"
say "world commit stale.json   # observes the old head: refused, store unchanged"
if "$W" commit "$DIR/stale.json"; then echo "expected a conflict" >&2; exit 1; else echo "(exit $?)"; fi

commit_body 2 '{"note":"second"}' "$(sha quickstart-entry-1)" "$HEAD1" > "$DIR/c2.json"
run commit "$DIR/c2.json"
run log
run log --json --reverse --limit 1
run object find world/demo/note
run object get "$(sha '{"note":"second"}')" --payload; echo
# A receipt that was never sent exits 1 (not-started), so CI scripts can tell it apart.
run receipt rest:never-sent || [ $? -eq 1 ]

# Transitions: publish the fixtures (AILANG sources checked by the embedded interpreter).
# --yes skips the terminal confirmation and is recorded as unattended in the revision.
run publish --manifest fixtures/transitions/manifest.json --yes
run transitions list

# A session for episode ep1: one Workspace.Write, two Workspace.Read and two Human.Approve calls.
mkdir -p "$DIR/ws/ep1"
run session mint --episode ep1 --grant world.apply=world:10 --grant Workspace.Write=worktree:1 \
  --grant Workspace.Read=worktree:2 --grant Human.Approve=approvals:2 --workspace-root "$DIR/ws" \
  --yes --out "$DIR/token"
run session list
export WORLD_SESSION="$DIR/token"
run tools list

run invoke counter --args '{"items":[1,2,3],"name":"demo"}' --invocation-id count-1
run invoke ailang-write --args '{"path":"notes.txt","content":"hello\nworld\n"}'
run invoke readcount --args '{"path":"notes.txt"}' --invocation-id read-1
run invoke ailang-read --args '{"path":"notes.txt"}'
say "world invoke ailang-read ...   # the Workspace.Read budget is spent: a recorded denial (exit 8)"
if "$W" invoke ailang-read --args '{"path":"notes.txt"}'; then echo "expected a denial" >&2; exit 1; else echo "(exit $?)"; fi
say "world invoke refuse --args '{}'   # the transition refuses: committed, exit 7"
if "$W" invoke refuse --args '{}'; then echo "expected a refusal" >&2; exit 1; else echo "(exit $?)"; fi

# Approvals: a person decides a request (--yes: recorded as unattended); the transition's
# Human.Approve effect claims it; an approval is single use.
say "world approval request --episode ep1 --summary 'publish notes.txt'"
R="$("$W" approval request --episode ep1 --summary 'publish notes.txt')"; echo "$R"
run approval decide "$R" --approve --yes --decided-by quickstart
run invoke approval --args "{\"approval_ref\":\"$R\"}"
say "world invoke approval ...   # the same approval again: already consumed, the handler fails (exit 9)"
if "$W" invoke approval --args "{\"approval_ref\":\"$R\"}"; then echo "expected a failure" >&2; exit 1; else echo "(exit $?)"; fi
run approval list
run effects
run receipt cli:ep1:read-1
run why cli:ep1:read-1
run log
run verify
say "done: store at $WORLD_DB (removed on exit)"
