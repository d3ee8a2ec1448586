#!/usr/bin/env bash
# The quickstart episode, end to end, on the embedded defaults (bundled SQLite and the
# embedded AILANG interpreter; no external `ailang` needed). Builds `world`, creates a fresh
# store in a temp directory and walks through: genesis; client commits with the porcelain
# (`commit --put`, `commit --batch`; a retried rest: id answered as already committed, another
# body under it refused); publishing the fixture transitions; minting a session
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

run genesis

# Client commits with the porcelain: `commit --put` stores a file's bytes as the next world's
# object and chains the entry from the current head itself (no hashes to compute). A
# `rest:` invocation id makes it idempotent and answerable by `world receipt`.
printf '{"note":"first"}' > "$DIR/first.json"
run commit --put "$DIR/first.json" --semantic-id world/demo/note --invocation-id rest:quickstart-1
run receipt rest:quickstart-1
say "world commit --put first.json ... --invocation-id rest:quickstart-1   # retried: already committed, nothing written"
"$W" commit --put "$DIR/first.json" --semantic-id world/demo/note --invocation-id rest:quickstart-1
printf '{"note":"other"}' > "$DIR/other.json"
say "world commit --put other.json ... --invocation-id rest:quickstart-1   # other content under the same id: refused"
if "$W" commit --put "$DIR/other.json" --semantic-id world/demo/note --invocation-id rest:quickstart-1; then
  echo "expected a refusal" >&2; exit 1
else echo "(exit $?)"; fi

# A batch: one commit per line, each chained from the head in its own transaction; a line
# names a file ("put", read beside the batch file) or carries the payload inline ("text",
# "json", or base64 "payload"). Resending the batch answers the lines with an id as already
# committed.
cat > "$DIR/notes.jsonl" <<'JSONL'
{"json":{"note":"second"},"semanticId":"world/demo/note","invocationId":"rest:quickstart-2"}
{"put":"first.json","semanticId":"world/demo/copy","invocationId":"rest:quickstart-3"}
JSONL
run commit --batch "$DIR/notes.jsonl"
say "world commit --batch notes.jsonl   # resent: every line already committed"
"$W" commit --batch "$DIR/notes.jsonl"
run log
run log --json --reverse --limit 1
run object find world/demo/note
# `show` takes an entry index, an invocation id or a (short) hash: the entry rest:quickstart-2
# committed, whose transitionRef is the stored note (`world object get HASH --payload`).
run show rest:quickstart-2
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
