# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_world_global_optspecs
    string join \n db= json= q/quiet color= wait-lock= h/help V/version
end

function __fish_world_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_world_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_world_using_subcommand
    set -l cmd (__fish_world_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c world -n "__fish_world_needs_command" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_needs_command" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_needs_command" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_needs_command" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_needs_command" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_needs_command" -s V -l version -d 'Print version'
complete -c world -n "__fish_world_needs_command" -f -a "genesis" -d 'Create the store if needed and commit a genesis world'
complete -c world -n "__fish_world_needs_command" -f -a "commit" -d 'Compare-and-append a world from a commit body (the POST /v1/commit JSON)'
complete -c world -n "__fish_world_needs_command" -f -a "head" -d 'Print the selected world head'
complete -c world -n "__fish_world_needs_command" -f -a "world" -d 'Read world rows'
complete -c world -n "__fish_world_needs_command" -f -a "object" -d 'Read objects'
complete -c world -n "__fish_world_needs_command" -f -a "log" -d 'List log entries, or read one with `log get INDEX`'
complete -c world -n "__fish_world_needs_command" -f -a "show" -d 'Show one entry: header, input, plan, effects with budgets, output, receipt, outcome'
complete -c world -n "__fish_world_needs_command" -f -a "status" -d 'Summarise the store: head, entries, registry, sessions, approvals, intents, limits'
complete -c world -n "__fish_world_needs_command" -f -a "registry" -d 'Read named registry heads'
complete -c world -n "__fish_world_needs_command" -f -a "publish" -d 'Publish transitions from a manifest (attended; --yes for scripts, recorded as unattended)'
complete -c world -n "__fish_world_needs_command" -f -a "pin" -d 'Archive an interpreter and bootstrap the epoch registry from its release'
complete -c world -n "__fish_world_needs_command" -f -a "package" -d 'Publish an AILANG package to the registry: packet, approve, publish, reconcile, status'
complete -c world -n "__fish_world_needs_command" -f -a "transitions" -d 'Read the transition registry: list, or show one descriptor'
complete -c world -n "__fish_world_needs_command" -f -a "invoke" -d 'Call a published transition as a session and commit the result'
complete -c world -n "__fish_world_needs_command" -f -a "tools" -d 'What a session can see and call'
complete -c world -n "__fish_world_needs_command" -f -a "ailang" -d 'The embedded AILANG interpreter behind the `ailang` CLI contract'
complete -c world -n "__fish_world_needs_command" -f -a "receipt" -d 'Answer a receipt: not-started, indeterminate or resolved'
complete -c world -n "__fish_world_needs_command" -f -a "session" -d 'Mint, list and revoke session credentials'
complete -c world -n "__fish_world_needs_command" -f -a "effects" -d 'Effect records and pending effect intents'
complete -c world -n "__fish_world_needs_command" -f -a "approval" -d 'Approval requests for Human.Approve: open, list, show, decide'
complete -c world -n "__fish_world_needs_command" -f -a "broker" -d 'Ask the broker what it would decide (dry run)'
complete -c world -n "__fish_world_needs_command" -f -a "verify" -d 'Check the whole store: hashes, chain, links, journal'
complete -c world -n "__fish_world_needs_command" -f -a "why" -d 'Walk the provenance of an entry, object, invocation or result and verify each link'
complete -c world -n "__fish_world_needs_command" -f -a "key" -d 'Make Ed25519 keys for signing checkpoints (log keys) or cosigning them (witness keys)'
complete -c world -n "__fish_world_needs_command" -f -a "checkpoint" -d 'Sign a C2SP tlog-checkpoint of the log; list, show, cosign and merge checkpoints'
complete -c world -n "__fish_world_needs_command" -f -a "prove" -d 'Print an inclusion proof of an entry, or a consistency proof between checkpoints'
complete -c world -n "__fish_world_needs_command" -f -a "limits" -d 'The nested limits ledger: init, reserve, dispatch, settle, reconcile, release, stop, adjust, report'
complete -c world -n "__fish_world_needs_command" -f -a "mission" -d 'finite-v1 missions: contracts, runs, grant chains, admission and settlement'
complete -c world -n "__fish_world_needs_command" -f -a "serve" -d 'Serve the store over HTTP /v1, MCP and A2A on loopback (holds the writer lock)'
complete -c world -n "__fish_world_needs_command" -f -a "mcp" -d 'Serve MCP on stdin/stdout for a local agent client'
complete -c world -n "__fish_world_needs_command" -f -a "replay" -d 'Re-run coordinator entries with their pinned interpreters and compare every byte (read-only)'
complete -c world -n "__fish_world_needs_command" -f -a "export-episode" -d 'Write a self-contained bundle store holding what replaying one episode needs'
complete -c world -n "__fish_world_needs_command" -f -a "util" -d 'Generate shell completions and man pages'
complete -c world -n "__fish_world_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand genesis" -l goal-file -d 'File whose bytes become the goal object (default: `{}`)' -r -F
complete -c world -n "__fish_world_using_subcommand genesis" -l goal-semantic-id -d 'Semantic id of the goal object' -r
complete -c world -n "__fish_world_using_subcommand genesis" -l interpreter -l ailang-bin -d 'Pin an interpreter first (a path is archived, a sha256: ref resolved, or `embedded`) and bootstrap the epoch registry from its release; without it the header records the store\'s only pinned interpreter, else the embedded one, and nothing is bootstrapped' -r
complete -c world -n "__fish_world_using_subcommand genesis" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand genesis" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand genesis" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand genesis" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand genesis" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand genesis" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand commit" -l batch -d 'JSON Lines file, one commit per line, each in its own transaction: a full commit body, or a put line (`{"put":"FILE","semanticId":"ID"}`, or `"text"`, `"json"` or base64 `"payload"` inline) that chains from the head like --put' -r -F
complete -c world -n "__fish_world_using_subcommand commit" -l put -d 'Store FILE\'s bytes as an object of the next world (repeatable; the first is the state root); the entry extends the current head' -r -F
complete -c world -n "__fish_world_using_subcommand commit" -l semantic-id -d 'Semantic id of the --put objects: once for all, or once per --put in order' -r
complete -c world -n "__fish_world_using_subcommand commit" -l provenance -d 'Provenance text of the --put objects' -r
complete -c world -n "__fish_world_using_subcommand commit" -l writer -d '`writtenBy` of the --put entry (not `coordinator:` or `world:`, which world writes)' -r
complete -c world -n "__fish_world_using_subcommand commit" -l invocation-id -d 'With --put: a `rest:<id>` invocation id, so `world receipt` can answer for it' -r
complete -c world -n "__fish_world_using_subcommand commit" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand commit" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand commit" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand commit" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand commit" -l keep-going -d 'With --batch: commit the remaining bodies after a refusal, and report every refusal'
complete -c world -n "__fish_world_using_subcommand commit" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand commit" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand head" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand head" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand head" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand head" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand head" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand world; and not __fish_seen_subcommand_from get help" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand world; and not __fish_seen_subcommand_from get help" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand world; and not __fish_seen_subcommand_from get help" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand world; and not __fish_seen_subcommand_from get help" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand world; and not __fish_seen_subcommand_from get help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand world; and not __fish_seen_subcommand_from get help" -f -a "get" -d 'Print one world row `{ref, revision, stateRoot, logHead}` (GET /v1/worlds/{ref})'
complete -c world -n "__fish_world_using_subcommand world; and not __fish_seen_subcommand_from get help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand world; and __fish_seen_subcommand_from get" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand world; and __fish_seen_subcommand_from get" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand world; and __fish_seen_subcommand_from get" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand world; and __fish_seen_subcommand_from get" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand world; and __fish_seen_subcommand_from get" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand world; and __fish_seen_subcommand_from help" -f -a "get" -d 'Print one world row `{ref, revision, stateRoot, logHead}` (GET /v1/worlds/{ref})'
complete -c world -n "__fish_world_using_subcommand world; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand object; and not __fish_seen_subcommand_from get find help" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand object; and not __fish_seen_subcommand_from get find help" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand object; and not __fish_seen_subcommand_from get find help" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand object; and not __fish_seen_subcommand_from get find help" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand object; and not __fish_seen_subcommand_from get find help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand object; and not __fish_seen_subcommand_from get find help" -f -a "get" -d 'Print an object\'s metadata, or its payload bytes with --payload (GET /v1/objects/{ref})'
complete -c world -n "__fish_world_using_subcommand object; and not __fish_seen_subcommand_from get find help" -f -a "find" -d 'List objects with a semantic id, ascending hash, paged (GET /v1/objects/by-semantic-id)'
complete -c world -n "__fish_world_using_subcommand object; and not __fish_seen_subcommand_from get find help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand object; and __fish_seen_subcommand_from get" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand object; and __fish_seen_subcommand_from get" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand object; and __fish_seen_subcommand_from get" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand object; and __fish_seen_subcommand_from get" -l payload -d 'Print the payload: raw bytes on stdout, or base64 in the JSON form'
complete -c world -n "__fish_world_using_subcommand object; and __fish_seen_subcommand_from get" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand object; and __fish_seen_subcommand_from get" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand object; and __fish_seen_subcommand_from find" -l after -d 'Start after this hash (exclusive)' -r
complete -c world -n "__fish_world_using_subcommand object; and __fish_seen_subcommand_from find" -l limit -d 'Page size: 1..500, default 100' -r
complete -c world -n "__fish_world_using_subcommand object; and __fish_seen_subcommand_from find" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand object; and __fish_seen_subcommand_from find" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand object; and __fish_seen_subcommand_from find" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand object; and __fish_seen_subcommand_from find" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand object; and __fish_seen_subcommand_from find" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand object; and __fish_seen_subcommand_from help" -f -a "get" -d 'Print an object\'s metadata, or its payload bytes with --payload (GET /v1/objects/{ref})'
complete -c world -n "__fish_world_using_subcommand object; and __fish_seen_subcommand_from help" -f -a "find" -d 'List objects with a semantic id, ascending hash, paged (GET /v1/objects/by-semantic-id)'
complete -c world -n "__fish_world_using_subcommand object; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand log; and not __fish_seen_subcommand_from get help" -l from -d 'First index to print (default: 0, or the last entry with --reverse)' -r
complete -c world -n "__fish_world_using_subcommand log; and not __fish_seen_subcommand_from get help" -l limit -d 'Print at most M entries' -r
complete -c world -n "__fish_world_using_subcommand log; and not __fish_seen_subcommand_from get help" -l episode -d 'Only entries of this episode' -r
complete -c world -n "__fish_world_using_subcommand log; and not __fish_seen_subcommand_from get help" -l transition -d 'Only entries that called this transition (descriptor id, e.g. tools.echo)' -r
complete -c world -n "__fish_world_using_subcommand log; and not __fish_seen_subcommand_from get help" -l writer -d 'Only entries written by WRITER (exact, or its prefix before `:`, e.g. coordinator)' -r
complete -c world -n "__fish_world_using_subcommand log; and not __fish_seen_subcommand_from get help" -l since -d 'Only entries at or after TIME (RFC 3339 such as 2026-12-01T09:00:00Z, a date, or Unix seconds); client commits sent without a `rest:` id carry no time and are left out' -r
complete -c world -n "__fish_world_using_subcommand log; and not __fish_seen_subcommand_from get help" -l invocation -d 'Only the entry of this invocation id (<surface>:<episode>:<task>, or the rest:<id> a client commit was sent with)' -r
complete -c world -n "__fish_world_using_subcommand log; and not __fish_seen_subcommand_from get help" -l until-index -d 'With --follow: stop once entry N has been printed' -r
complete -c world -n "__fish_world_using_subcommand log; and not __fish_seen_subcommand_from get help" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand log; and not __fish_seen_subcommand_from get help" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand log; and not __fish_seen_subcommand_from get help" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand log; and not __fish_seen_subcommand_from get help" -l reverse -d 'Newest first'
complete -c world -n "__fish_world_using_subcommand log; and not __fish_seen_subcommand_from get help" -l follow -d 'Keep printing new entries as they are committed (polls the store twice a second); ends on SIGINT, or after --until-index'
complete -c world -n "__fish_world_using_subcommand log; and not __fish_seen_subcommand_from get help" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand log; and not __fish_seen_subcommand_from get help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand log; and not __fish_seen_subcommand_from get help" -f -a "get" -d 'Print one entry `{header, entryHash, transitionRef}` (GET /v1/log/{index})'
complete -c world -n "__fish_world_using_subcommand log; and not __fish_seen_subcommand_from get help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand log; and __fish_seen_subcommand_from get" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand log; and __fish_seen_subcommand_from get" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand log; and __fish_seen_subcommand_from get" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand log; and __fish_seen_subcommand_from get" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand log; and __fish_seen_subcommand_from get" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand log; and __fish_seen_subcommand_from help" -f -a "get" -d 'Print one entry `{header, entryHash, transitionRef}` (GET /v1/log/{index})'
complete -c world -n "__fish_world_using_subcommand log; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand show" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand show" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand show" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand show" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand status" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand status" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand status" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand status" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand status" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand registry; and not __fish_seen_subcommand_from get help" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand registry; and not __fish_seen_subcommand_from get help" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand registry; and not __fish_seen_subcommand_from get help" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand registry; and not __fish_seen_subcommand_from get help" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand registry; and not __fish_seen_subcommand_from get help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand registry; and not __fish_seen_subcommand_from get help" -f -a "get" -d 'Print a registry head, e.g. world/transition-registry/v1 (GET /v1/registry/{name})'
complete -c world -n "__fish_world_using_subcommand registry; and not __fish_seen_subcommand_from get help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand registry; and __fish_seen_subcommand_from get" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand registry; and __fish_seen_subcommand_from get" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand registry; and __fish_seen_subcommand_from get" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand registry; and __fish_seen_subcommand_from get" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand registry; and __fish_seen_subcommand_from get" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand registry; and __fish_seen_subcommand_from help" -f -a "get" -d 'Print a registry head, e.g. world/transition-registry/v1 (GET /v1/registry/{name})'
complete -c world -n "__fish_world_using_subcommand registry; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand publish" -l manifest -d 'The manifest: a JSON array of descriptors (transitions.md §2)' -r -F
complete -c world -n "__fish_world_using_subcommand publish" -l interpreter -d 'Interpreter to pin: a path (archived next to the store), a sha256: ref of an archived one, or `embedded`; default: the store\'s only pinned interpreter, else embedded' -r
complete -c world -n "__fish_world_using_subcommand publish" -l ailang-bin -d 'Alias of --interpreter PATH' -r -F
complete -c world -n "__fish_world_using_subcommand publish" -l prompt-timeout -d 'Seconds the confirmation prompt waits for the phrase; then nothing is published and the writer lock is released' -r
complete -c world -n "__fish_world_using_subcommand publish" -l check-against -d 'Before asking, re-run the recorded entries of every transition whose source, interpreter or declared effects change, in these stores or episode bundles, and show what would behave differently (repeatable)' -r -F
complete -c world -n "__fish_world_using_subcommand publish" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand publish" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand publish" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand publish" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand publish" -l yes -d 'Unattended: no terminal, no phrase; the revision is recorded as unattended'
complete -c world -n "__fish_world_using_subcommand publish" -l details -d 'Before the prompt, also list every added transition\'s access and declared effects in full (by default the diff table shows them, a long list cut to fit the terminal)'
complete -c world -n "__fish_world_using_subcommand publish" -l live -d 'Refused for this verb (publishing writes the local store only)'
complete -c world -n "__fish_world_using_subcommand publish" -l accept-changes -d 'With --yes: publish even when --check-against finds a changed behaviour (without it an unattended publish then fails with exit 3)'
complete -c world -n "__fish_world_using_subcommand publish" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand publish" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand pin" -l interpreter -d 'The interpreter: a path to an `ailang` binary (archived), a sha256: ref of an archived one, or `embedded`' -r
complete -c world -n "__fish_world_using_subcommand pin" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand pin" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand pin" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand pin" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand pin" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand pin" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand package; and not __fish_seen_subcommand_from packet approve publish reconcile status help" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand package; and not __fish_seen_subcommand_from packet approve publish reconcile status help" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand package; and not __fish_seen_subcommand_from packet approve publish reconcile status help" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand package; and not __fish_seen_subcommand_from packet approve publish reconcile status help" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand package; and not __fish_seen_subcommand_from packet approve publish reconcile status help" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand package; and not __fish_seen_subcommand_from packet approve publish reconcile status help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand package; and not __fish_seen_subcommand_from packet approve publish reconcile status help" -f -a "packet" -d 'Recompute a package\'s ready packet and compare it with a golden (read only)'
complete -c world -n "__fish_world_using_subcommand package; and not __fish_seen_subcommand_from packet approve publish reconcile status help" -f -a "approve" -d 'Mint the one-shot approval to publish a package version (attended)'
complete -c world -n "__fish_world_using_subcommand package; and not __fish_seen_subcommand_from packet approve publish reconcile status help" -f -a "publish" -d 'Spend the approval: publish the package version, exactly once (attended; irreversible with --live)'
complete -c world -n "__fish_world_using_subcommand package; and not __fish_seen_subcommand_from packet approve publish reconcile status help" -f -a "reconcile" -d 'Resolve publishes left indeterminate by reading the registry (GET only)'
complete -c world -n "__fish_world_using_subcommand package; and not __fish_seen_subcommand_from packet approve publish reconcile status help" -f -a "status" -d 'List publish approvals and Registry.Publish effects'
complete -c world -n "__fish_world_using_subcommand package; and not __fish_seen_subcommand_from packet approve publish reconcile status help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from packet" -l golden -d 'A ready-packet golden the recomputed packet must equal in every field' -r -F
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from packet" -l compiler-version -d 'The packet\'s compilerVersion (default: the golden\'s, else the pinned publisher\'s `--version`, else empty)' -r
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from packet" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from packet" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from packet" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from packet" -l live -d 'Refused: packet performs no public write'
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from packet" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from packet" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from approve" -l golden -d 'A ready-packet golden the recomputed packet must equal in every field' -r -F
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from approve" -l compiler-version -d 'The packet\'s compilerVersion (default: the golden\'s, else the pinned publisher\'s `--version`, else empty)' -r
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from approve" -l registry-origin -d 'The registry bucket origin, https only (default https://storage.googleapis.com/ailang-registry)' -r
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from approve" -l loopback-registry -d 'A LOCAL registry on this machine (loopback only, http allowed): its origin serves both the bucket layout and POST /publish' -r
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from approve" -l requester -d 'Who asks: 1-128 characters of [A-Za-z0-9._@:-]' -r
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from approve" -l decided-by -d 'Who approves: 1-128 characters of [A-Za-z0-9._@:-]' -r
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from approve" -l episode -d 'The episode the publish will be journaled in' -r
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from approve" -l ttl -d 'Seconds the approval stays spendable' -r
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from approve" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from approve" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from approve" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from approve" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from approve" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from approve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from publish" -l golden -d 'A ready-packet golden the recomputed packet must equal in every field' -r -F
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from publish" -l compiler-version -d 'The packet\'s compilerVersion (default: the golden\'s, else the pinned publisher\'s `--version`, else empty)' -r
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from publish" -l registry-origin -d 'The registry bucket origin, https only (default https://storage.googleapis.com/ailang-registry)' -r
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from publish" -l loopback-registry -d 'A LOCAL registry on this machine (loopback only, http allowed): its origin serves both the bucket layout and POST /publish' -r
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from publish" -l credential-file -d 'A file outside the working tree, mode 0600, holding the registry API key (never the environment)' -r -F
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from publish" -l approval-ref -d 'The approval to spend (default: the one unspent approval that stamps these bytes)' -r
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from publish" -l episode -d 'The episode the publish is journaled in (its budget is one publish per scope)' -r
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from publish" -l publisher -d 'Who uploads' -r -f -a "world\t'world builds the tarball and speaks the registry\'s POST /publish itself'
ailang\t'the pinned external `ailang publish` (needs --ailang-bin)'"
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from publish" -l ailang-bin -d 'The `ailang` binary for --publisher ailang (archived next to the store and re-hashed before it runs)' -r -F
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from publish" -l timeout -d 'Seconds the upload may take before it is indeterminate' -r
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from publish" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from publish" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from publish" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from publish" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from publish" -l live -d 'PERFORM THE IRREVERSIBLE PUBLIC WRITE'
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from publish" -l dry-run -d 'Rehearse: every fence, then what --live would do; no request of any kind'
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from publish" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from publish" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from reconcile" -l control -d 'The known-positive control probed in the same pass, VENDOR/NAME@VERSION' -r
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from reconcile" -l interval-ms -d 'Milliseconds between probe passes' -r
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from reconcile" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from reconcile" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from reconcile" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from reconcile" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from reconcile" -l probe -d 'Issue the read-only metadata GETs (without it nothing is resolved)'
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from reconcile" -l loopback-registry -d 'The publishes went to a LOCAL registry on this machine (loopback, http allowed)'
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from reconcile" -l live -d 'Refused: reconcile performs no public write'
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from reconcile" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from reconcile" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from status" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from status" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from status" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from status" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from help" -f -a "packet" -d 'Recompute a package\'s ready packet and compare it with a golden (read only)'
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from help" -f -a "approve" -d 'Mint the one-shot approval to publish a package version (attended)'
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from help" -f -a "publish" -d 'Spend the approval: publish the package version, exactly once (attended; irreversible with --live)'
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from help" -f -a "reconcile" -d 'Resolve publishes left indeterminate by reading the registry (GET only)'
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from help" -f -a "status" -d 'List publish approvals and Registry.Publish effects'
complete -c world -n "__fish_world_using_subcommand package; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand transitions; and not __fish_seen_subcommand_from list show help" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand transitions; and not __fish_seen_subcommand_from list show help" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand transitions; and not __fish_seen_subcommand_from list show help" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand transitions; and not __fish_seen_subcommand_from list show help" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand transitions; and not __fish_seen_subcommand_from list show help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand transitions; and not __fish_seen_subcommand_from list show help" -f -a "list" -d 'List every descriptor of the current revision (table, or JSON lines with --json)'
complete -c world -n "__fish_world_using_subcommand transitions; and not __fish_seen_subcommand_from list show help" -f -a "show" -d 'Show one descriptor and its MCP tool name (ID may also be the MCP name)'
complete -c world -n "__fish_world_using_subcommand transitions; and not __fish_seen_subcommand_from list show help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand transitions; and __fish_seen_subcommand_from list" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand transitions; and __fish_seen_subcommand_from list" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand transitions; and __fish_seen_subcommand_from list" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand transitions; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand transitions; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand transitions; and __fish_seen_subcommand_from show" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand transitions; and __fish_seen_subcommand_from show" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand transitions; and __fish_seen_subcommand_from show" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand transitions; and __fish_seen_subcommand_from show" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand transitions; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand transitions; and __fish_seen_subcommand_from help" -f -a "list" -d 'List every descriptor of the current revision (table, or JSON lines with --json)'
complete -c world -n "__fish_world_using_subcommand transitions; and __fish_seen_subcommand_from help" -f -a "show" -d 'Show one descriptor and its MCP tool name (ID may also be the MCP name)'
complete -c world -n "__fish_world_using_subcommand transitions; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand invoke" -l session -d 'Session token file or token (else WORLD_SESSION)' -r
complete -c world -n "__fish_world_using_subcommand invoke" -l args -d 'Arguments as a JSON object (default {})' -r
complete -c world -n "__fish_world_using_subcommand invoke" -l args-file -d 'Arguments from a file; `-` reads stdin' -r -F
complete -c world -n "__fish_world_using_subcommand invoke" -l invocation-id -d 'Idempotency key: the invocation id is cli:<episode>:<ID> ([A-Za-z0-9._-]{1,128}); without it a random id is used (no idempotency)' -r
complete -c world -n "__fish_world_using_subcommand invoke" -l workspace-root -d 'Override the episode\'s recorded workspace root (worktree = DIR/<episode>)' -r -F
complete -c world -n "__fish_world_using_subcommand invoke" -l tool-ailang-bin -d 'The pinned AILANG tool binary for the Ailang.* effects' -r -F
complete -c world -n "__fish_world_using_subcommand invoke" -l run-allow-caps -d 'Capabilities ailang-run may use beyond IO and FS: Env, Net, Declassify' -r
complete -c world -n "__fish_world_using_subcommand invoke" -l run-net-allow -d 'IP:PORT a Net run may reach (repeatable)' -r
complete -c world -n "__fish_world_using_subcommand invoke" -l ledger -d 'Pair effects of episodes bound to a limits scope with this standalone ledger (a file, or postgres://user@host/db) instead of the store file\'s tables (docs/LEDGER.md)' -r
complete -c world -n "__fish_world_using_subcommand invoke" -l exec-profile -d 'An exec profile (world/exec-profile/v1) that enables Workspace.Exec; repeatable, one per project. Commands run in a bubblewrap sandbox (bwrap >= 0.8) or not at all' -r -F
complete -c world -n "__fish_world_using_subcommand invoke" -l exec-episode-project -d 'Serve episode EP with the profile of PROJECT (repeatable; else the only profile serves every episode)' -r
complete -c world -n "__fish_world_using_subcommand invoke" -l exec-max-output-bytes -d 'Kill a command whose stdout or stderr passes N bytes (default 67108864)' -r
complete -c world -n "__fish_world_using_subcommand invoke" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand invoke" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand invoke" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand invoke" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand invoke" -l allow-unattested -d 'Accept a session credential this store holds no mint record for (a row the reference daemon minted, or one inserted into the file); refused by default, and `world verify` warns `unattested` about such rows'
complete -c world -n "__fish_world_using_subcommand invoke" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand invoke" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand tools; and not __fish_seen_subcommand_from list help" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand tools; and not __fish_seen_subcommand_from list help" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand tools; and not __fish_seen_subcommand_from list help" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand tools; and not __fish_seen_subcommand_from list help" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand tools; and not __fish_seen_subcommand_from list help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand tools; and not __fish_seen_subcommand_from list help" -f -a "list" -d 'The transitions this session\'s live grants can see and call, in registry id order'
complete -c world -n "__fish_world_using_subcommand tools; and not __fish_seen_subcommand_from list help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand tools; and __fish_seen_subcommand_from list" -l session -d 'Session token file or token (else WORLD_SESSION)' -r
complete -c world -n "__fish_world_using_subcommand tools; and __fish_seen_subcommand_from list" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand tools; and __fish_seen_subcommand_from list" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand tools; and __fish_seen_subcommand_from list" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand tools; and __fish_seen_subcommand_from list" -l allow-unattested -d 'Accept a session credential this store holds no mint record for (a row the reference daemon minted, or one inserted into the file); refused by default, and `world verify` warns `unattested` about such rows'
complete -c world -n "__fish_world_using_subcommand tools; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand tools; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand tools; and __fish_seen_subcommand_from help" -f -a "list" -d 'The transitions this session\'s live grants can see and call, in registry id order'
complete -c world -n "__fish_world_using_subcommand tools; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand ailang; and not __fish_seen_subcommand_from version check test run help" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand ailang; and not __fish_seen_subcommand_from version check test run help" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand ailang; and not __fish_seen_subcommand_from version check test run help" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand ailang; and not __fish_seen_subcommand_from version check test run help" -l version -d 'Print the embedded interpreter\'s version text (like `ailang --version`)'
complete -c world -n "__fish_world_using_subcommand ailang; and not __fish_seen_subcommand_from version check test run help" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand ailang; and not __fish_seen_subcommand_from version check test run help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand ailang; and not __fish_seen_subcommand_from version check test run help" -f -a "version" -d 'Print the embedded interpreter\'s version text'
complete -c world -n "__fish_world_using_subcommand ailang; and not __fish_seen_subcommand_from version check test run help" -f -a "check" -d 'Parse, resolve and type-check FILE (exit 0 pass, 1 errors); MOD010 relaxed by default'
complete -c world -n "__fish_world_using_subcommand ailang; and not __fish_seen_subcommand_from version check test run help" -f -a "test" -d 'Run FILE\'s inline `tests [...]` pairs and `test "…" { }` blocks; each pass/fail with FILE:LINE:COL, then `N passed, M failed` (exit 0 all pass, 1 otherwise)'
complete -c world -n "__fish_world_using_subcommand ailang; and not __fish_seen_subcommand_from version check test run help" -f -a "run" -d 'Run FILE\'s entry function with one JSON argument; prints the result (strings raw)'
complete -c world -n "__fish_world_using_subcommand ailang; and not __fish_seen_subcommand_from version check test run help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from version" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from version" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from version" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from version" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from version" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from check" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from check" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from check" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from check" -l strict-modules -d 'Enforce MOD010 (module header must match the file path)'
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from check" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from check" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from test" -l timeout -d 'Wall-clock limit for the whole run, seconds' -r
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from test" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from test" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from test" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from test" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from test" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from run" -l entry -d 'Entry function' -r
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from run" -l args-json -d 'The argument as JSON (default null); `-` reads stdin; `-1` is the number -1' -r
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from run" -l max-recursion-depth -d 'Maximum call depth (default 10000)' -r
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from run" -l timeout -d 'Wall-clock limit in seconds' -r
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from run" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from run" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from run" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from run" -l strict-modules -d 'Enforce MOD010'
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from run" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from help" -f -a "version" -d 'Print the embedded interpreter\'s version text'
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from help" -f -a "check" -d 'Parse, resolve and type-check FILE (exit 0 pass, 1 errors); MOD010 relaxed by default'
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from help" -f -a "test" -d 'Run FILE\'s inline `tests [...]` pairs and `test "…" { }` blocks; each pass/fail with FILE:LINE:COL, then `N passed, M failed` (exit 0 all pass, 1 otherwise)'
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from help" -f -a "run" -d 'Run FILE\'s entry function with one JSON argument; prints the result (strings raw)'
complete -c world -n "__fish_world_using_subcommand ailang; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand receipt" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand receipt" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand receipt" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand receipt" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand receipt" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand session; and not __fish_seen_subcommand_from mint list show revoke help" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand session; and not __fish_seen_subcommand_from mint list show revoke help" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand session; and not __fish_seen_subcommand_from mint list show revoke help" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand session; and not __fish_seen_subcommand_from mint list show revoke help" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand session; and not __fish_seen_subcommand_from mint list show revoke help" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand session; and not __fish_seen_subcommand_from mint list show revoke help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand session; and not __fish_seen_subcommand_from mint list show revoke help" -f -a "mint" -d 'Mint a session credential for an episode (attended: a human confirms at the terminal)'
complete -c world -n "__fish_world_using_subcommand session; and not __fish_seen_subcommand_from mint list show revoke help" -f -a "list" -d 'List live session credentials: attended, expiry, and each grant\'s remaining budget'
complete -c world -n "__fish_world_using_subcommand session; and not __fish_seen_subcommand_from mint list show revoke help" -f -a "show" -d 'Show one credential: state, expiry, and per grant the budget, what the episode spent and what remains (as the broker would seed it)'
complete -c world -n "__fish_world_using_subcommand session; and not __fish_seen_subcommand_from mint list show revoke help" -f -a "revoke" -d 'Revoke one credential by id, or every credential of an episode'
complete -c world -n "__fish_world_using_subcommand session; and not __fish_seen_subcommand_from mint list show revoke help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from mint" -l episode -d 'The episode: [a-z0-9][a-z0-9-]{0,63}' -r
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from mint" -l grant -d 'EFFECT=SCOPE:BUDGET, repeatable (e.g. Workspace.Read=worktree:50)' -r
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from mint" -l ttl -d 'Lifetime in seconds for the session and every grant' -r
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from mint" -l workspace-root -d 'Directory holding the episode worktrees (<DIR>/<episode>), recorded for the episode' -r -F
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from mint" -l limits-scope -d 'Limits-ledger scope this episode\'s effects are charged to' -r
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from mint" -l mission -d 'Mission every allowed effect is admitted in (missions.md §7; needs --mission-run and --mission-grant)' -r
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from mint" -l mission-run -d 'The mission run effects are admitted in' -r
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from mint" -l mission-grant -d 'The mission grant effects are admitted under' -r
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from mint" -l ledger -d 'The standalone ledger holding --mission (a file made by `world limits init`, or postgres://user@host/db); recorded in the binding, and `invoke`/`serve`/`mcp` must name the same ledger with --ledger. Without it the mission is in the store file' -r
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from mint" -l out -d 'Write the token to this new file (mode 0600) instead of stdout' -r -F
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from mint" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from mint" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from mint" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from mint" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from mint" -l yes -d 'No terminal confirmation (scripts, CI): recorded as unattended'
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from mint" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from mint" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from list" -l episode -d 'Only this episode' -r
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from list" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from list" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from list" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from list" -l all -d 'Also list expired and revoked credentials (state `expired`, `revoked`)'
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from show" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from show" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from show" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from show" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from revoke" -l episode -d 'Revoke every credential of this episode' -r
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from revoke" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from revoke" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from revoke" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from revoke" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from revoke" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from revoke" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "mint" -d 'Mint a session credential for an episode (attended: a human confirms at the terminal)'
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "list" -d 'List live session credentials: attended, expiry, and each grant\'s remaining budget'
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "show" -d 'Show one credential: state, expiry, and per grant the budget, what the episode spent and what remains (as the broker would seed it)'
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "revoke" -d 'Revoke one credential by id, or every credential of an episode'
complete -c world -n "__fish_world_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand effects; and not __fish_seen_subcommand_from show help" -l episode -d 'Only this episode' -r
complete -c world -n "__fish_world_using_subcommand effects; and not __fish_seen_subcommand_from show help" -l invocation -d 'Only the records of this invocation (e.g. cli:ep1:t1)' -r
complete -c world -n "__fish_world_using_subcommand effects; and not __fish_seen_subcommand_from show help" -l effect -d 'Only this effect name' -r
complete -c world -n "__fish_world_using_subcommand effects; and not __fish_seen_subcommand_from show help" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand effects; and not __fish_seen_subcommand_from show help" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand effects; and not __fish_seen_subcommand_from show help" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand effects; and not __fish_seen_subcommand_from show help" -l denied -d 'Only denials'
complete -c world -n "__fish_world_using_subcommand effects; and not __fish_seen_subcommand_from show help" -l pending -d 'List effect intents without an outcome (indeterminate; never retried)'
complete -c world -n "__fish_world_using_subcommand effects; and not __fish_seen_subcommand_from show help" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand effects; and not __fish_seen_subcommand_from show help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand effects; and not __fish_seen_subcommand_from show help" -f -a "show" -d 'Resolve one effect record down to its request and result'
complete -c world -n "__fish_world_using_subcommand effects; and not __fish_seen_subcommand_from show help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand effects; and __fish_seen_subcommand_from show" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand effects; and __fish_seen_subcommand_from show" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand effects; and __fish_seen_subcommand_from show" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand effects; and __fish_seen_subcommand_from show" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand effects; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand effects; and __fish_seen_subcommand_from help" -f -a "show" -d 'Resolve one effect record down to its request and result'
complete -c world -n "__fish_world_using_subcommand effects; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand approval; and not __fish_seen_subcommand_from request list show decide help" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand approval; and not __fish_seen_subcommand_from request list show decide help" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand approval; and not __fish_seen_subcommand_from request list show decide help" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand approval; and not __fish_seen_subcommand_from request list show decide help" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand approval; and not __fish_seen_subcommand_from request list show decide help" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand approval; and not __fish_seen_subcommand_from request list show decide help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand approval; and not __fish_seen_subcommand_from request list show decide help" -f -a "request" -d 'Open a pending approval request for an episode and print its ref'
complete -c world -n "__fish_world_using_subcommand approval; and not __fish_seen_subcommand_from request list show decide help" -f -a "list" -d 'List approval requests with their state and the effect that consumed each'
complete -c world -n "__fish_world_using_subcommand approval; and not __fish_seen_subcommand_from request list show decide help" -f -a "show" -d 'Show one approval request with its decision and claim'
complete -c world -n "__fish_world_using_subcommand approval; and not __fish_seen_subcommand_from request list show decide help" -f -a "decide" -d 'Decide a pending request (attended: a human confirms at the terminal)'
complete -c world -n "__fish_world_using_subcommand approval; and not __fish_seen_subcommand_from request list show decide help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from request" -l episode -d 'The episode the request is bound to (only its sessions can use it)' -r
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from request" -l summary -d 'What the approver is shown (at most 4096 bytes)' -r
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from request" -l requester -d 'Who asks: 1-128 characters of [A-Za-z0-9._@:-]' -r
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from request" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from request" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from request" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from request" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from request" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from request" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from list" -l episode -d 'Only this episode' -r
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from list" -l state -d 'Only requests in this state' -r -f -a "pending\t'Not decided yet'
approved\t'Approved (consumed or not)'
denied\t'Denied'"
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from list" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from list" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from list" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from show" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from show" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from show" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from show" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from decide" -l decided-by -d 'Who decides: 1-128 characters of [A-Za-z0-9._@:-]' -r
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from decide" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from decide" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from decide" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from decide" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from decide" -l approve -d 'Approve the request'
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from decide" -l deny -d 'Deny the request'
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from decide" -l yes -d 'No terminal confirmation (scripts, CI): recorded as unattended'
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from decide" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from decide" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from help" -f -a "request" -d 'Open a pending approval request for an episode and print its ref'
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from help" -f -a "list" -d 'List approval requests with their state and the effect that consumed each'
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from help" -f -a "show" -d 'Show one approval request with its decision and claim'
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from help" -f -a "decide" -d 'Decide a pending request (attended: a human confirms at the terminal)'
complete -c world -n "__fish_world_using_subcommand approval; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand broker; and not __fish_seen_subcommand_from check help" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand broker; and not __fish_seen_subcommand_from check help" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand broker; and not __fish_seen_subcommand_from check help" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand broker; and not __fish_seen_subcommand_from check help" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand broker; and not __fish_seen_subcommand_from check help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand broker; and not __fish_seen_subcommand_from check help" -f -a "check" -d 'Decide EFFECT SCOPE COST for a session (budgets seeded from the journal); writes nothing'
complete -c world -n "__fish_world_using_subcommand broker; and not __fish_seen_subcommand_from check help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand broker; and __fish_seen_subcommand_from check" -l session -d 'Session token file or token (else WORLD_SESSION)' -r
complete -c world -n "__fish_world_using_subcommand broker; and __fish_seen_subcommand_from check" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand broker; and __fish_seen_subcommand_from check" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand broker; and __fish_seen_subcommand_from check" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand broker; and __fish_seen_subcommand_from check" -l allow-unattested -d 'Accept a session credential this store holds no mint record for (a row the reference daemon minted, or one inserted into the file); refused by default, and `world verify` warns `unattested` about such rows'
complete -c world -n "__fish_world_using_subcommand broker; and __fish_seen_subcommand_from check" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand broker; and __fish_seen_subcommand_from check" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand broker; and __fish_seen_subcommand_from help" -f -a "check" -d 'Decide EFFECT SCOPE COST for a session (budgets seeded from the journal); writes nothing'
complete -c world -n "__fish_world_using_subcommand broker; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand verify" -l checkpoint -d 'A signed checkpoint (C2SP tlog-checkpoint) the store\'s log must extend' -r -F
complete -c world -n "__fish_world_using_subcommand verify" -l bundle -d 'Check this episode bundle (world export-episode --checkpoint) instead of --db' -r -F
complete -c world -n "__fish_world_using_subcommand verify" -l key -d 'The log\'s public key (NAME+KEYID+BASE64, or a file holding it)' -r
complete -c world -n "__fish_world_using_subcommand verify" -l witness -d 'A witness whose cosignature the checkpoint must carry (repeatable; tlog-cosignature)' -r
complete -c world -n "__fish_world_using_subcommand verify" -l ledger -d 'Check a standalone limits/mission ledger (a ledger file or a postgres:// URL) instead of the store: re-fold every total, the hash chains, the append-only triggers, the schema' -r
complete -c world -n "__fish_world_using_subcommand verify" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand verify" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand verify" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand verify" -l full -d 'Run SQLite\'s full `PRAGMA integrity_check` instead of `quick_check`'
complete -c world -n "__fish_world_using_subcommand verify" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand verify" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand why" -l result -d 'A result file: the output an invoke printed, or its `invoke --json` object (walked by its invocationId); one trailing LF is ignored' -r -F
complete -c world -n "__fish_world_using_subcommand why" -l scan -d 'How many entries back from the head to search for non-index targets (1..5000)' -r
complete -c world -n "__fish_world_using_subcommand why" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand why" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand why" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand why" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand why" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand key; and not __fish_seen_subcommand_from generate public help" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand key; and not __fish_seen_subcommand_from generate public help" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand key; and not __fish_seen_subcommand_from generate public help" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand key; and not __fish_seen_subcommand_from generate public help" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand key; and not __fish_seen_subcommand_from generate public help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand key; and not __fish_seen_subcommand_from generate public help" -f -a "generate" -d 'Make an Ed25519 key: the private key goes to FILE (mode 0600, never overwritten), the public verifier key (NAME+KEYID+BASE64) to stdout'
complete -c world -n "__fish_world_using_subcommand key; and not __fish_seen_subcommand_from generate public help" -f -a "public" -d 'Print the public verifier key of a private key file'
complete -c world -n "__fish_world_using_subcommand key; and not __fish_seen_subcommand_from generate public help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand key; and __fish_seen_subcommand_from generate" -l out -d 'Where to write the private key (PRIVATE+KEY+…); refused when it exists' -r -F
complete -c world -n "__fish_world_using_subcommand key; and __fish_seen_subcommand_from generate" -l name -d 'The key name: a log\'s name is its checkpoints\' origin line (default: the store\'s, ailang-world/<first 16 hex digits of its genesis entry hash>)' -r
complete -c world -n "__fish_world_using_subcommand key; and __fish_seen_subcommand_from generate" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand key; and __fish_seen_subcommand_from generate" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand key; and __fish_seen_subcommand_from generate" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand key; and __fish_seen_subcommand_from generate" -l witness -d 'A witness key: signs C2SP tlog-cosignature lines (type 0x04) on other logs\' checkpoints instead of checkpoints of its own'
complete -c world -n "__fish_world_using_subcommand key; and __fish_seen_subcommand_from generate" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand key; and __fish_seen_subcommand_from generate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand key; and __fish_seen_subcommand_from public" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand key; and __fish_seen_subcommand_from public" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand key; and __fish_seen_subcommand_from public" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand key; and __fish_seen_subcommand_from public" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand key; and __fish_seen_subcommand_from public" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand key; and __fish_seen_subcommand_from help" -f -a "generate" -d 'Make an Ed25519 key: the private key goes to FILE (mode 0600, never overwritten), the public verifier key (NAME+KEYID+BASE64) to stdout'
complete -c world -n "__fish_world_using_subcommand key; and __fish_seen_subcommand_from help" -f -a "public" -d 'Print the public verifier key of a private key file'
complete -c world -n "__fish_world_using_subcommand key; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand checkpoint; and not __fish_seen_subcommand_from list show cosign merge help" -l key -d 'The log\'s private key file (world key generate)' -r -F
complete -c world -n "__fish_world_using_subcommand checkpoint; and not __fish_seen_subcommand_from list show cosign merge help" -l out -d 'Also write the checkpoint to FILE (replaced atomically)' -r -F
complete -c world -n "__fish_world_using_subcommand checkpoint; and not __fish_seen_subcommand_from list show cosign merge help" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand checkpoint; and not __fish_seen_subcommand_from list show cosign merge help" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand checkpoint; and not __fish_seen_subcommand_from list show cosign merge help" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand checkpoint; and not __fish_seen_subcommand_from list show cosign merge help" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand checkpoint; and not __fish_seen_subcommand_from list show cosign merge help" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand checkpoint; and not __fish_seen_subcommand_from list show cosign merge help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand checkpoint; and not __fish_seen_subcommand_from list show cosign merge help" -f -a "list" -d 'List the checkpoints this store signed, oldest first'
complete -c world -n "__fish_world_using_subcommand checkpoint; and not __fish_seen_subcommand_from list show cosign merge help" -f -a "show" -d 'Print a stored checkpoint\'s note (the latest, or the one of tree size N)'
complete -c world -n "__fish_world_using_subcommand checkpoint; and not __fish_seen_subcommand_from list show cosign merge help" -f -a "cosign" -d 'As a witness: check a checkpoint\'s log signature (and, with --last and --proof, that it extends the checkpoint this witness cosigned before), then add a tlog-cosignature line'
complete -c world -n "__fish_world_using_subcommand checkpoint; and not __fish_seen_subcommand_from list show cosign merge help" -f -a "merge" -d 'Merge the cosignature lines of a cosigned copy of a stored checkpoint into it'
complete -c world -n "__fish_world_using_subcommand checkpoint; and not __fish_seen_subcommand_from list show cosign merge help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from list" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from list" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from list" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from show" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from show" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from show" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from show" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from cosign" -l key -d 'The witness\'s private key file (world key generate --witness)' -r -F
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from cosign" -l log-key -d 'The log\'s public key (NAME+KEYID+BASE64, or a file holding it)' -r
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from cosign" -l last -d 'The checkpoint this witness cosigned last (requires --proof)' -r -F
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from cosign" -l proof -d 'The consistency proof from --last to CHECKPOINT (world prove --from LAST --checkpoint CHECKPOINT)' -r -F
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from cosign" -l out -d 'Write the cosigned checkpoint to FILE instead of stdout' -r -F
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from cosign" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from cosign" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from cosign" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from cosign" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from cosign" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from cosign" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from merge" -l witness -d 'A witness whose cosignature must verify before anything is merged (repeatable)' -r
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from merge" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from merge" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from merge" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from merge" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from merge" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from merge" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from help" -f -a "list" -d 'List the checkpoints this store signed, oldest first'
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from help" -f -a "show" -d 'Print a stored checkpoint\'s note (the latest, or the one of tree size N)'
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from help" -f -a "cosign" -d 'As a witness: check a checkpoint\'s log signature (and, with --last and --proof, that it extends the checkpoint this witness cosigned before), then add a tlog-cosignature line'
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from help" -f -a "merge" -d 'Merge the cosignature lines of a cosigned copy of a stored checkpoint into it'
complete -c world -n "__fish_world_using_subcommand checkpoint; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand prove" -l checkpoint -d 'The checkpoint to prove against (default: this store\'s latest)' -r -F
complete -c world -n "__fish_world_using_subcommand prove" -l from -d 'Print the consistency proof from this older checkpoint to the checkpoint instead' -r -F
complete -c world -n "__fish_world_using_subcommand prove" -l key -d 'Check the checkpoints\' signatures with this public key first (NAME+KEYID+BASE64 or a file)' -r
complete -c world -n "__fish_world_using_subcommand prove" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand prove" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand prove" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand prove" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand prove" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand limits; and not __fish_seen_subcommand_from init reserve dispatch settle reconcile release stop adjust report help" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand limits; and not __fish_seen_subcommand_from init reserve dispatch settle reconcile release stop adjust report help" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand limits; and not __fish_seen_subcommand_from init reserve dispatch settle reconcile release stop adjust report help" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand limits; and not __fish_seen_subcommand_from init reserve dispatch settle reconcile release stop adjust report help" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand limits; and not __fish_seen_subcommand_from init reserve dispatch settle reconcile release stop adjust report help" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand limits; and not __fish_seen_subcommand_from init reserve dispatch settle reconcile release stop adjust report help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand limits; and not __fish_seen_subcommand_from init reserve dispatch settle reconcile release stop adjust report help" -f -a "init" -d 'Load a ledger config (attended; --yes for scripts, recorded as an unattended HOST act)'
complete -c world -n "__fish_world_using_subcommand limits; and not __fish_seen_subcommand_from init reserve dispatch settle reconcile release stop adjust report help" -f -a "reserve" -d 'Reserve an attempt\'s maximum cost and active time against a scope and its ancestors'
complete -c world -n "__fish_world_using_subcommand limits; and not __fish_seen_subcommand_from init reserve dispatch settle reconcile release stop adjust report help" -f -a "dispatch" -d 'Mark a RESERVED attempt DISPATCHED, before any external call'
complete -c world -n "__fish_world_using_subcommand limits; and not __fish_seen_subcommand_from init reserve dispatch settle reconcile release stop adjust report help" -f -a "settle" -d 'Settle a DISPATCHED attempt: --actual X (SUCCEEDED, or FAILED with --failed) or --unknown'
complete -c world -n "__fish_world_using_subcommand limits; and not __fish_seen_subcommand_from init reserve dispatch settle reconcile release stop adjust report help" -f -a "reconcile" -d 'Human settlement of an UNKNOWN attempt (attended; always needs the terminal)'
complete -c world -n "__fish_world_using_subcommand limits; and not __fish_seen_subcommand_from init reserve dispatch settle reconcile release stop adjust report help" -f -a "release" -d 'Free a RESERVED attempt (a DISPATCHED one can only be settled)'
complete -c world -n "__fish_world_using_subcommand limits; and not __fish_seen_subcommand_from init reserve dispatch settle reconcile release stop adjust report help" -f -a "stop" -d 'Stop a scope\'s subtree: freezes time, keeps exposure, blocks reserve and dispatch'
complete -c world -n "__fish_world_using_subcommand limits; and not __fish_seen_subcommand_from init reserve dispatch settle reconcile release stop adjust report help" -f -a "adjust" -d 'Change bounds or lift a stop (attended; always needs the terminal and evidence)'
complete -c world -n "__fish_world_using_subcommand limits; and not __fish_seen_subcommand_from init reserve dispatch settle reconcile release stop adjust report help" -f -a "report" -d 'Blocked scopes, dependents, usage, outstanding and unknown attempts, violations (read-only)'
complete -c world -n "__fish_world_using_subcommand limits; and not __fish_seen_subcommand_from init reserve dispatch settle reconcile release stop adjust report help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from init" -l config -d 'The config file (limits.md §3), canonicalised with TR-CJSON-1' -r -F
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from init" -l request-id -d 'Idempotency key (default: random, so no idempotency); a retry with the same id and command answers `exists`' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from init" -l expected-revision -d 'Refuse (revision_mismatch) unless the ledger is at revision N' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from init" -l session -d 'Act as the AGENT holding this session (a token file, or the token); default: the HOST' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from init" -l now -d 'The clock: Unix milliseconds or RFC 3339 (2026-12-05T21:30:00Z); default: the system clock; never earlier than the ledger\'s last recorded time' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from init" -l ledger -d 'A standalone ledger (a file, or postgres://user@host/db) instead of the tables in the store file' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from init" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from init" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from init" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from init" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from init" -l yes -d 'Unattended: no terminal, no phrase; recorded with actor kind HOST'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from init" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from init" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reserve" -l scope -d 'Target scope' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reserve" -l attempt -d 'New attempt id' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reserve" -l operation -d 'Operation id (default: the attempt id)' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reserve" -l run -d 'Run id (informational)' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reserve" -l purpose -d 'ordinary or handoff (case-insensitive); an AGENT may reserve ordinary only' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reserve" -l amount -d 'Maximum cost, a canonical unsigned decimal in the config\'s unit' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reserve" -l max-active-ms -d 'Maximum active time, milliseconds (canonical unsigned decimal)' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reserve" -l request-id -d 'Idempotency key (default: random, so no idempotency); a retry with the same id and command answers `exists`' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reserve" -l expected-revision -d 'Refuse (revision_mismatch) unless the ledger is at revision N' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reserve" -l session -d 'Act as the AGENT holding this session (a token file, or the token); default: the HOST' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reserve" -l now -d 'The clock: Unix milliseconds or RFC 3339 (2026-12-05T21:30:00Z); default: the system clock; never earlier than the ledger\'s last recorded time' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reserve" -l ledger -d 'A standalone ledger (a file, or postgres://user@host/db) instead of the tables in the store file' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reserve" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reserve" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reserve" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reserve" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reserve" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reserve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from dispatch" -l attempt -d 'The attempt' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from dispatch" -l request-id -d 'Idempotency key (default: random, so no idempotency); a retry with the same id and command answers `exists`' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from dispatch" -l expected-revision -d 'Refuse (revision_mismatch) unless the ledger is at revision N' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from dispatch" -l session -d 'Act as the AGENT holding this session (a token file, or the token); default: the HOST' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from dispatch" -l now -d 'The clock: Unix milliseconds or RFC 3339 (2026-12-05T21:30:00Z); default: the system clock; never earlier than the ledger\'s last recorded time' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from dispatch" -l ledger -d 'A standalone ledger (a file, or postgres://user@host/db) instead of the tables in the store file' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from dispatch" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from dispatch" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from dispatch" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from dispatch" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from dispatch" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from dispatch" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from settle" -l attempt -d 'The attempt' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from settle" -l actual -d 'Actual cost (canonical unsigned decimal); above the reserved amount is refused as exposure exceeded' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from settle" -l request-id -d 'Idempotency key (default: random, so no idempotency); a retry with the same id and command answers `exists`' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from settle" -l expected-revision -d 'Refuse (revision_mismatch) unless the ledger is at revision N' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from settle" -l session -d 'Act as the AGENT holding this session (a token file, or the token); default: the HOST' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from settle" -l now -d 'The clock: Unix milliseconds or RFC 3339 (2026-12-05T21:30:00Z); default: the system clock; never earlier than the ledger\'s last recorded time' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from settle" -l ledger -d 'A standalone ledger (a file, or postgres://user@host/db) instead of the tables in the store file' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from settle" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from settle" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from settle" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from settle" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from settle" -l failed -d 'The effect failed (it still cost --actual)'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from settle" -l unknown -d 'Nobody knows: the full reservation is kept until a human reconciles (limits: HOST only)'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from settle" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from settle" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reconcile" -l attempt -d 'The attempt' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reconcile" -l actual -d 'Actual cost attested by the evidence' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reconcile" -l evidence -d 'A sha256: ref of an object in the World store (re-hashed before use)' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reconcile" -l evidence-file -d 'A file hashed on the spot (stored as a world/limits-evidence/v1 object when the ledger is in the store file)' -r -F
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reconcile" -l request-id -d 'Idempotency key (default: random, so no idempotency); a retry with the same id and command answers `exists`' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reconcile" -l expected-revision -d 'Refuse (revision_mismatch) unless the ledger is at revision N' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reconcile" -l session -d 'Act as the AGENT holding this session (a token file, or the token); default: the HOST' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reconcile" -l now -d 'The clock: Unix milliseconds or RFC 3339 (2026-12-05T21:30:00Z); default: the system clock; never earlier than the ledger\'s last recorded time' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reconcile" -l ledger -d 'A standalone ledger (a file, or postgres://user@host/db) instead of the tables in the store file' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reconcile" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reconcile" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reconcile" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reconcile" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reconcile" -l from-store -d 'As the HOST, settle or release every outstanding attempt of this store (--db) in the standalone --ledger from the store\'s journal: never-dispatched reservations are released, journaled outcomes settled; DISPATCHED attempts without an outcome are kept for an attended reconcile (exit 5 while any remain). Takes the store\'s writer lock'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reconcile" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from reconcile" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from release" -l attempt -d 'The attempt' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from release" -l request-id -d 'Idempotency key (default: random, so no idempotency); a retry with the same id and command answers `exists`' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from release" -l expected-revision -d 'Refuse (revision_mismatch) unless the ledger is at revision N' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from release" -l session -d 'Act as the AGENT holding this session (a token file, or the token); default: the HOST' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from release" -l now -d 'The clock: Unix milliseconds or RFC 3339 (2026-12-05T21:30:00Z); default: the system clock; never earlier than the ledger\'s last recorded time' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from release" -l ledger -d 'A standalone ledger (a file, or postgres://user@host/db) instead of the tables in the store file' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from release" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from release" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from release" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from release" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from release" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from release" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from stop" -l scope -d 'The scope' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from stop" -l reason -d 'Why (recorded with the event)' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from stop" -l evidence -d 'A sha256: ref of an object in the World store (re-hashed before use)' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from stop" -l evidence-file -d 'A file hashed on the spot (stored as a world/limits-evidence/v1 object when the ledger is in the store file)' -r -F
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from stop" -l request-id -d 'Idempotency key (default: random, so no idempotency); a retry with the same id and command answers `exists`' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from stop" -l expected-revision -d 'Refuse (revision_mismatch) unless the ledger is at revision N' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from stop" -l session -d 'Act as the AGENT holding this session (a token file, or the token); default: the HOST' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from stop" -l now -d 'The clock: Unix milliseconds or RFC 3339 (2026-12-05T21:30:00Z); default: the system clock; never earlier than the ledger\'s last recorded time' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from stop" -l ledger -d 'A standalone ledger (a file, or postgres://user@host/db) instead of the tables in the store file' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from stop" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from stop" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from stop" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from stop" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from stop" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from stop" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from adjust" -l scope -d 'The scope' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from adjust" -l set -d 'KIND=VALUE or KIND=null (cost, handoff, activeMs, elapsedMs, attempts); repeatable' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from adjust" -l evidence -d 'A sha256: ref of an object in the World store (re-hashed before use)' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from adjust" -l evidence-file -d 'A file hashed on the spot (stored as a world/limits-evidence/v1 object when the ledger is in the store file)' -r -F
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from adjust" -l request-id -d 'Idempotency key (default: random, so no idempotency); a retry with the same id and command answers `exists`' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from adjust" -l expected-revision -d 'Refuse (revision_mismatch) unless the ledger is at revision N' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from adjust" -l session -d 'Act as the AGENT holding this session (a token file, or the token); default: the HOST' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from adjust" -l now -d 'The clock: Unix milliseconds or RFC 3339 (2026-12-05T21:30:00Z); default: the system clock; never earlier than the ledger\'s last recorded time' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from adjust" -l ledger -d 'A standalone ledger (a file, or postgres://user@host/db) instead of the tables in the store file' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from adjust" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from adjust" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from adjust" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from adjust" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from adjust" -l resume -d 'Lift a stop on this scope'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from adjust" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from adjust" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from report" -l scope -d 'Only this scope and its subtree' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from report" -l now -d 'The clock: Unix milliseconds or RFC 3339 (2026-12-05T21:30:00Z); default: the system clock' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from report" -l ledger -d 'A standalone ledger (a file, or postgres://user@host/db) instead of the tables in the store file' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from report" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from report" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from report" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from report" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from report" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from help" -f -a "init" -d 'Load a ledger config (attended; --yes for scripts, recorded as an unattended HOST act)'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from help" -f -a "reserve" -d 'Reserve an attempt\'s maximum cost and active time against a scope and its ancestors'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from help" -f -a "dispatch" -d 'Mark a RESERVED attempt DISPATCHED, before any external call'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from help" -f -a "settle" -d 'Settle a DISPATCHED attempt: --actual X (SUCCEEDED, or FAILED with --failed) or --unknown'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from help" -f -a "reconcile" -d 'Human settlement of an UNKNOWN attempt (attended; always needs the terminal)'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from help" -f -a "release" -d 'Free a RESERVED attempt (a DISPATCHED one can only be settled)'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from help" -f -a "stop" -d 'Stop a scope\'s subtree: freezes time, keeps exposure, blocks reserve and dispatch'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from help" -f -a "adjust" -d 'Change bounds or lift a stop (attended; always needs the terminal and evidence)'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from help" -f -a "report" -d 'Blocked scopes, dependents, usage, outstanding and unknown attempts, violations (read-only)'
complete -c world -n "__fish_world_using_subcommand limits; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand mission; and not __fish_seen_subcommand_from create apply start-run grant admit dispatch settle release reconcile approve revoke complete-run report list log verify help" -l ledger -d 'A standalone ledger holding the missions (a file made by `world limits init`, or postgres://user@host/db) instead of the store file' -r
complete -c world -n "__fish_world_using_subcommand mission; and not __fish_seen_subcommand_from create apply start-run grant admit dispatch settle release reconcile approve revoke complete-run report list log verify help" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand mission; and not __fish_seen_subcommand_from create apply start-run grant admit dispatch settle release reconcile approve revoke complete-run report list log verify help" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand mission; and not __fish_seen_subcommand_from create apply start-run grant admit dispatch settle release reconcile approve revoke complete-run report list log verify help" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand mission; and not __fish_seen_subcommand_from create apply start-run grant admit dispatch settle release reconcile approve revoke complete-run report list log verify help" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand mission; and not __fish_seen_subcommand_from create apply start-run grant admit dispatch settle release reconcile approve revoke complete-run report list log verify help" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand mission; and not __fish_seen_subcommand_from create apply start-run grant admit dispatch settle release reconcile approve revoke complete-run report list log verify help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand mission; and not __fish_seen_subcommand_from create apply start-run grant admit dispatch settle release reconcile approve revoke complete-run report list log verify help" -f -a "create" -d 'Store a new mission from a contract (attended; --yes for scripts, recorded as unattended)'
complete -c world -n "__fish_world_using_subcommand mission; and not __fish_seen_subcommand_from create apply start-run grant admit dispatch settle release reconcile approve revoke complete-run report list log verify help" -f -a "apply" -d 'Apply the seed\'s command JSON: one (--command FILE, - for stdin) or a JSON-lines file'
complete -c world -n "__fish_world_using_subcommand mission; and not __fish_seen_subcommand_from create apply start-run grant admit dispatch settle release reconcile approve revoke complete-run report list log verify help" -f -a "start-run" -d 'startRun: a new ACTIVE run'
complete -c world -n "__fish_world_using_subcommand mission; and not __fish_seen_subcommand_from create apply start-run grant admit dispatch settle release reconcile approve revoke complete-run report list log verify help" -f -a "grant" -d 'grant: a root grant, or a delegation with --parent (attenuation only)'
complete -c world -n "__fish_world_using_subcommand mission; and not __fish_seen_subcommand_from create apply start-run grant admit dispatch settle release reconcile approve revoke complete-run report list log verify help" -f -a "admit" -d 'admit: reserve an attempt\'s maximum exposure against the mission and the grant chain'
complete -c world -n "__fish_world_using_subcommand mission; and not __fish_seen_subcommand_from create apply start-run grant admit dispatch settle release reconcile approve revoke complete-run report list log verify help" -f -a "dispatch" -d 'dispatch: ADMITTED -> DISPATCHED, before any external call'
complete -c world -n "__fish_world_using_subcommand mission; and not __fish_seen_subcommand_from create apply start-run grant admit dispatch settle release reconcile approve revoke complete-run report list log verify help" -f -a "settle" -d 'settle: --actual X (SUCCEEDED, or FAILED with --failed), or --unknown (keeps the reservation)'
complete -c world -n "__fish_world_using_subcommand mission; and not __fish_seen_subcommand_from create apply start-run grant admit dispatch settle release reconcile approve revoke complete-run report list log verify help" -f -a "release" -d 'release: ADMITTED -> RELEASED (the attempt still counts)'
complete -c world -n "__fish_world_using_subcommand mission; and not __fish_seen_subcommand_from create apply start-run grant admit dispatch settle release reconcile approve revoke complete-run report list log verify help" -f -a "reconcile" -d 'reconcile: a HUMAN resolves an UNKNOWN attempt (always attended); or, with --from-store and --ledger, the HOST settles this store\'s paired attempts from its journal'
complete -c world -n "__fish_world_using_subcommand mission; and not __fish_seen_subcommand_from create apply start-run grant admit dispatch settle release reconcile approve revoke complete-run report list log verify help" -f -a "approve" -d 'approve: a HUMAN approves an operation (always attended)'
complete -c world -n "__fish_world_using_subcommand mission; and not __fish_seen_subcommand_from create apply start-run grant admit dispatch settle release reconcile approve revoke complete-run report list log verify help" -f -a "revoke" -d 'revoke: the grant and its delegations stop admitting'
complete -c world -n "__fish_world_using_subcommand mission; and not __fish_seen_subcommand_from create apply start-run grant admit dispatch settle release reconcile approve revoke complete-run report list log verify help" -f -a "complete-run" -d 'completeRun: every contract criterion evidenced (NAME=sha256:REF, repeatable)'
complete -c world -n "__fish_world_using_subcommand mission; and not __fish_seen_subcommand_from create apply start-run grant admit dispatch settle release reconcile approve revoke complete-run report list log verify help" -f -a "report" -d 'Budget, reserved, settled, remaining; runs; the grant tree; outstanding and UNKNOWN attempts; violations'
complete -c world -n "__fish_world_using_subcommand mission; and not __fish_seen_subcommand_from create apply start-run grant admit dispatch settle release reconcile approve revoke complete-run report list log verify help" -f -a "list" -d 'Every mission in the store'
complete -c world -n "__fish_world_using_subcommand mission; and not __fish_seen_subcommand_from create apply start-run grant admit dispatch settle release reconcile approve revoke complete-run report list log verify help" -f -a "log" -d 'The mission\'s hash-chained command journal'
complete -c world -n "__fish_world_using_subcommand mission; and not __fish_seen_subcommand_from create apply start-run grant admit dispatch settle release reconcile approve revoke complete-run report list log verify help" -f -a "verify" -d 'Re-fold every mission\'s journal and compare it with the stored state, outbox and hash chain (read-only; exit 3 on a finding)'
complete -c world -n "__fish_world_using_subcommand mission; and not __fish_seen_subcommand_from create apply start-run grant admit dispatch settle release reconcile approve revoke complete-run report list log verify help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from create" -l contract -d 'The contract JSON (missions.md §2)' -r -F
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from create" -l now -d 'The clock: Unix milliseconds or RFC 3339 (2026-12-05T21:30:00Z); default: the system clock' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from create" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from create" -l ledger -d 'A standalone ledger holding the missions (a file made by `world limits init`, or postgres://user@host/db) instead of the store file' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from create" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from create" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from create" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from create" -l yes -d 'Unattended: no terminal, no phrase; recorded as unattended'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from create" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from create" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from apply" -l command -d 'One command JSON (`-` = stdin)' -r -F
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from apply" -l commands -d 'One command per line; all are parsed first, then applied in order, stopping at the first rejection' -r -F
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from apply" -l now -d 'The clock: Unix milliseconds or RFC 3339 (2026-12-05T21:30:00Z); default: the system clock; never more than 24 h ahead of it, never before the mission\'s last recorded time' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from apply" -l request-id -d 'Idempotency key: the same command again answers the recorded result (admit: default admit:<attemptId>)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from apply" -l session -d 'Act as the AGENT of this session (minted with --mission); default: the HOST' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from apply" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from apply" -l ledger -d 'A standalone ledger holding the missions (a file made by `world limits init`, or postgres://user@host/db) instead of the store file' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from apply" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from apply" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from apply" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from apply" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from apply" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from start-run" -l run -d 'Run id' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from start-run" -l now -d 'The clock: Unix milliseconds or RFC 3339 (2026-12-05T21:30:00Z); default: the system clock; never more than 24 h ahead of it, never before the mission\'s last recorded time' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from start-run" -l request-id -d 'Idempotency key: the same command again answers the recorded result (admit: default admit:<attemptId>)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from start-run" -l session -d 'Act as the AGENT of this session (minted with --mission); default: the HOST' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from start-run" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from start-run" -l ledger -d 'A standalone ledger holding the missions (a file made by `world limits init`, or postgres://user@host/db) instead of the store file' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from start-run" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from start-run" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from start-run" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from start-run" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from start-run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from grant" -l id -d 'Grant id' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from grant" -l parent -d 'The parent grant (a delegation)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from grant" -l subject -d 'Who may act under the grant' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from grant" -l action -d 'A capability (repeatable)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from grant" -l resource -d 'A resource (repeatable)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from grant" -l not-before -d 'Live from (inclusive): Unix ms or RFC 3339, as --now' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from grant" -l expires-at -d 'Live until (exclusive): Unix ms or RFC 3339, as --now' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from grant" -l limit -d 'Ceiling on the chain\'s share of reserved + settled' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from grant" -l depth -d 'Remaining delegation depth' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from grant" -l now -d 'The clock: Unix milliseconds or RFC 3339 (2026-12-05T21:30:00Z); default: the system clock; never more than 24 h ahead of it, never before the mission\'s last recorded time' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from grant" -l request-id -d 'Idempotency key: the same command again answers the recorded result (admit: default admit:<attemptId>)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from grant" -l session -d 'Act as the AGENT of this session (minted with --mission); default: the HOST' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from grant" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from grant" -l ledger -d 'A standalone ledger holding the missions (a file made by `world limits init`, or postgres://user@host/db) instead of the store file' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from grant" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from grant" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from grant" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from grant" -l can-delegate -d 'The subject may delegate'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from grant" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from grant" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from admit" -l run -d 'Run id' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from admit" -l operation -d 'Operation id (retries share it)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from admit" -l attempt -d 'Attempt id (unique; also the default idempotency key)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from admit" -l grant -d 'The grant acted under' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from admit" -l subject -d 'Who acts' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from admit" -l capability -d 'The capability' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from admit" -l resource -d 'The resource' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from admit" -l amount -d 'Maximum exposure to reserve' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from admit" -l payload -d 'Opaque payload JSON for the adapter' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from admit" -l preconditions -d 'Opaque preconditions JSON for the adapter' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from admit" -l authorization-checked-at -d 'When authorization was last checked: Unix ms or RFC 3339 (default: --now)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from admit" -l policy -d 'The policy decision (ALLOW admits)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from admit" -l depends-on -d 'An operation that must have SUCCEEDED first (repeatable; contract feature graphs)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from admit" -l now -d 'The clock: Unix milliseconds or RFC 3339 (2026-12-05T21:30:00Z); default: the system clock; never more than 24 h ahead of it, never before the mission\'s last recorded time' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from admit" -l request-id -d 'Idempotency key: the same command again answers the recorded result (admit: default admit:<attemptId>)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from admit" -l session -d 'Act as the AGENT of this session (minted with --mission); default: the HOST' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from admit" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from admit" -l ledger -d 'A standalone ledger holding the missions (a file made by `world limits init`, or postgres://user@host/db) instead of the store file' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from admit" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from admit" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from admit" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from admit" -l mandatory-checks-failed -d 'The mandatory checks failed'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from admit" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from admit" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from dispatch" -l attempt -d 'The attempt' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from dispatch" -l now -d 'The clock: Unix milliseconds or RFC 3339 (2026-12-05T21:30:00Z); default: the system clock; never more than 24 h ahead of it, never before the mission\'s last recorded time' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from dispatch" -l request-id -d 'Idempotency key: the same command again answers the recorded result (admit: default admit:<attemptId>)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from dispatch" -l session -d 'Act as the AGENT of this session (minted with --mission); default: the HOST' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from dispatch" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from dispatch" -l ledger -d 'A standalone ledger holding the missions (a file made by `world limits init`, or postgres://user@host/db) instead of the store file' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from dispatch" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from dispatch" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from dispatch" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from dispatch" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from dispatch" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from settle" -l attempt -d 'The attempt' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from settle" -l actual -d 'Actual cost (canonical unsigned decimal); above the reserved amount is refused as exposure exceeded' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from settle" -l now -d 'The clock: Unix milliseconds or RFC 3339 (2026-12-05T21:30:00Z); default: the system clock; never more than 24 h ahead of it, never before the mission\'s last recorded time' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from settle" -l request-id -d 'Idempotency key: the same command again answers the recorded result (admit: default admit:<attemptId>)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from settle" -l session -d 'Act as the AGENT of this session (minted with --mission); default: the HOST' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from settle" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from settle" -l ledger -d 'A standalone ledger holding the missions (a file made by `world limits init`, or postgres://user@host/db) instead of the store file' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from settle" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from settle" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from settle" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from settle" -l failed -d 'The effect failed (it still cost --actual)'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from settle" -l unknown -d 'Nobody knows: the full reservation is kept until a human reconciles (limits: HOST only)'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from settle" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from settle" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from release" -l attempt -d 'The attempt' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from release" -l now -d 'The clock: Unix milliseconds or RFC 3339 (2026-12-05T21:30:00Z); default: the system clock; never more than 24 h ahead of it, never before the mission\'s last recorded time' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from release" -l request-id -d 'Idempotency key: the same command again answers the recorded result (admit: default admit:<attemptId>)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from release" -l session -d 'Act as the AGENT of this session (minted with --mission); default: the HOST' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from release" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from release" -l ledger -d 'A standalone ledger holding the missions (a file made by `world limits init`, or postgres://user@host/db) instead of the store file' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from release" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from release" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from release" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from release" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from release" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from reconcile" -l attempt -d 'The attempt' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from reconcile" -l actual -d 'Actual cost attested by the evidence' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from reconcile" -l evidence -d 'A sha256: ref of an object in the store (re-hashed before use)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from reconcile" -l evidence-file -d 'A file hashed on the spot and stored as a world/mission-evidence/v1 object' -r -F
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from reconcile" -l now -d 'The clock: Unix milliseconds or RFC 3339 (2026-12-05T21:30:00Z); default: the system clock; never more than 24 h ahead of it, never before the mission\'s last recorded time' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from reconcile" -l request-id -d 'Idempotency key: the same command again answers the recorded result (admit: default admit:<attemptId>)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from reconcile" -l session -d 'Act as the AGENT of this session (minted with --mission); default: the HOST' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from reconcile" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from reconcile" -l ledger -d 'A standalone ledger holding the missions (a file made by `world limits init`, or postgres://user@host/db) instead of the store file' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from reconcile" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from reconcile" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from reconcile" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from reconcile" -l failed -d 'The effect failed'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from reconcile" -l from-store -d 'Settle the attempts this store paired with the mission in the standalone --ledger from the store\'s journal (HOST, unattended; a dispatched attempt without an outcome is settled UNKNOWN, never refunded)'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from reconcile" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from reconcile" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from approve" -l operation -d 'The operation' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from approve" -l evidence -d 'A sha256: ref of an object in the store (re-hashed before use)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from approve" -l evidence-file -d 'A file hashed on the spot and stored as a world/mission-evidence/v1 object' -r -F
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from approve" -l now -d 'The clock: Unix milliseconds or RFC 3339 (2026-12-05T21:30:00Z); default: the system clock; never more than 24 h ahead of it, never before the mission\'s last recorded time' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from approve" -l request-id -d 'Idempotency key: the same command again answers the recorded result (admit: default admit:<attemptId>)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from approve" -l session -d 'Act as the AGENT of this session (minted with --mission); default: the HOST' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from approve" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from approve" -l ledger -d 'A standalone ledger holding the missions (a file made by `world limits init`, or postgres://user@host/db) instead of the store file' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from approve" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from approve" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from approve" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from approve" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from approve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from revoke" -l grant -d 'The grant' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from revoke" -l now -d 'The clock: Unix milliseconds or RFC 3339 (2026-12-05T21:30:00Z); default: the system clock; never more than 24 h ahead of it, never before the mission\'s last recorded time' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from revoke" -l request-id -d 'Idempotency key: the same command again answers the recorded result (admit: default admit:<attemptId>)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from revoke" -l session -d 'Act as the AGENT of this session (minted with --mission); default: the HOST' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from revoke" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from revoke" -l ledger -d 'A standalone ledger holding the missions (a file made by `world limits init`, or postgres://user@host/db) instead of the store file' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from revoke" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from revoke" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from revoke" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from revoke" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from revoke" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from complete-run" -l run -d 'Run id' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from complete-run" -l criterion -d 'NAME=sha256:… (repeatable)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from complete-run" -l now -d 'The clock: Unix milliseconds or RFC 3339 (2026-12-05T21:30:00Z); default: the system clock; never more than 24 h ahead of it, never before the mission\'s last recorded time' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from complete-run" -l request-id -d 'Idempotency key: the same command again answers the recorded result (admit: default admit:<attemptId>)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from complete-run" -l session -d 'Act as the AGENT of this session (minted with --mission); default: the HOST' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from complete-run" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from complete-run" -l ledger -d 'A standalone ledger holding the missions (a file made by `world limits init`, or postgres://user@host/db) instead of the store file' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from complete-run" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from complete-run" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from complete-run" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from complete-run" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from complete-run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from report" -l now -d 'The clock for liveness and the deadline: Unix milliseconds or RFC 3339; default: the system clock' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from report" -l ledger -d 'A standalone ledger holding the missions (a file made by `world limits init`, or postgres://user@host/db) instead of the store file' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from report" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from report" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from report" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from report" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from report" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from list" -l ledger -d 'A standalone ledger holding the missions (a file made by `world limits init`, or postgres://user@host/db) instead of the store file' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from list" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from list" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from list" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from log" -l ledger -d 'A standalone ledger holding the missions (a file made by `world limits init`, or postgres://user@host/db) instead of the store file' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from log" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from log" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from log" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from log" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from log" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from verify" -l ledger -d 'A standalone ledger holding the missions (a file made by `world limits init`, or postgres://user@host/db) instead of the store file' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from verify" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from verify" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from verify" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from verify" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from verify" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from help" -f -a "create" -d 'Store a new mission from a contract (attended; --yes for scripts, recorded as unattended)'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from help" -f -a "apply" -d 'Apply the seed\'s command JSON: one (--command FILE, - for stdin) or a JSON-lines file'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from help" -f -a "start-run" -d 'startRun: a new ACTIVE run'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from help" -f -a "grant" -d 'grant: a root grant, or a delegation with --parent (attenuation only)'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from help" -f -a "admit" -d 'admit: reserve an attempt\'s maximum exposure against the mission and the grant chain'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from help" -f -a "dispatch" -d 'dispatch: ADMITTED -> DISPATCHED, before any external call'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from help" -f -a "settle" -d 'settle: --actual X (SUCCEEDED, or FAILED with --failed), or --unknown (keeps the reservation)'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from help" -f -a "release" -d 'release: ADMITTED -> RELEASED (the attempt still counts)'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from help" -f -a "reconcile" -d 'reconcile: a HUMAN resolves an UNKNOWN attempt (always attended); or, with --from-store and --ledger, the HOST settles this store\'s paired attempts from its journal'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from help" -f -a "approve" -d 'approve: a HUMAN approves an operation (always attended)'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from help" -f -a "revoke" -d 'revoke: the grant and its delegations stop admitting'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from help" -f -a "complete-run" -d 'completeRun: every contract criterion evidenced (NAME=sha256:REF, repeatable)'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from help" -f -a "report" -d 'Budget, reserved, settled, remaining; runs; the grant tree; outstanding and UNKNOWN attempts; violations'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from help" -f -a "list" -d 'Every mission in the store'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from help" -f -a "log" -d 'The mission\'s hash-chained command journal'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from help" -f -a "verify" -d 'Re-fold every mission\'s journal and compare it with the stored state, outbox and hash chain (read-only; exit 3 on a finding)'
complete -c world -n "__fish_world_using_subcommand mission; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand serve" -l bind -d 'host:port to listen on; the host must be 127.0.0.1, ::1 or localhost (port 0 = any)' -r
complete -c world -n "__fish_world_using_subcommand serve" -l interpreter -d 'The interpreter: a path to an `ailang` binary, a sha256: ref of an archived one, or `embedded` (default: the store\'s pinned interpreter, else the embedded one)' -r
complete -c world -n "__fish_world_using_subcommand serve" -l workspace-root -d 'Directory of the episode worktrees (<DIR>/<episode>); overrides each episode\'s binding' -r -F
complete -c world -n "__fish_world_using_subcommand serve" -l tool-ailang-bin -d 'The pinned AILANG tool binary for the Ailang.* effects (must report AILANG v0.52.1)' -r -F
complete -c world -n "__fish_world_using_subcommand serve" -l examples-dir -d 'Corpus for examples-search' -r -F
complete -c world -n "__fish_world_using_subcommand serve" -l run-allow-caps -d 'Capabilities ailang-run may use beyond IO and FS: Env, Net, Declassify' -r
complete -c world -n "__fish_world_using_subcommand serve" -l run-net-allow -d 'Loopback IP:PORT a Net run may reach (repeatable)' -r
complete -c world -n "__fish_world_using_subcommand serve" -l allow-origin -d 'An extra allowed Origin header value (repeatable; `null` is always refused)' -r
complete -c world -n "__fish_world_using_subcommand serve" -l ledger -d 'Pair effects of episodes bound to a limits scope with this standalone ledger (a file, or postgres://user@host/db) instead of the store file\'s tables (docs/LEDGER.md)' -r
complete -c world -n "__fish_world_using_subcommand serve" -l exec-profile -d 'An exec profile (world/exec-profile/v1) that enables Workspace.Exec; repeatable, one per project. Commands run in a bubblewrap sandbox (bwrap >= 0.8) or not at all' -r -F
complete -c world -n "__fish_world_using_subcommand serve" -l exec-episode-project -d 'Serve episode EP with the profile of PROJECT (repeatable; else the only profile serves every episode)' -r
complete -c world -n "__fish_world_using_subcommand serve" -l exec-max-output-bytes -d 'Kill a command whose stdout or stderr passes N bytes (default 67108864)' -r
complete -c world -n "__fish_world_using_subcommand serve" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand serve" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand serve" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand serve" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand serve" -l run-net-allow-http -d 'Allow plain http to the --run-net-allow pairs'
complete -c world -n "__fish_world_using_subcommand serve" -l approve-on-tty -d 'Human.Approve asks on this daemon\'s controlling terminal (default: requests stay pending, decided with `world approval decide` once the daemon is stopped)'
complete -c world -n "__fish_world_using_subcommand serve" -l allow-unattested -d 'Accept a session credential this store holds no mint record for (a row the reference daemon minted, or one inserted into the file); refused by default, and `world verify` warns `unattested` about such rows'
complete -c world -n "__fish_world_using_subcommand serve" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand serve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand mcp" -l session -d 'Session token file or token (else WORLD_SESSION)' -r
complete -c world -n "__fish_world_using_subcommand mcp" -l workspace-root -d 'Override the episode\'s recorded workspace root (worktree = DIR/<episode>)' -r -F
complete -c world -n "__fish_world_using_subcommand mcp" -l tool-ailang-bin -d 'The pinned AILANG tool binary for the Ailang.* effects' -r -F
complete -c world -n "__fish_world_using_subcommand mcp" -l ledger -d 'Pair effects of episodes bound to a limits scope with this standalone ledger (a file, or postgres://user@host/db) instead of the store file\'s tables (docs/LEDGER.md)' -r
complete -c world -n "__fish_world_using_subcommand mcp" -l exec-profile -d 'An exec profile (world/exec-profile/v1) that enables Workspace.Exec; repeatable, one per project. Commands run in a bubblewrap sandbox (bwrap >= 0.8) or not at all' -r -F
complete -c world -n "__fish_world_using_subcommand mcp" -l exec-episode-project -d 'Serve episode EP with the profile of PROJECT (repeatable; else the only profile serves every episode)' -r
complete -c world -n "__fish_world_using_subcommand mcp" -l exec-max-output-bytes -d 'Kill a command whose stdout or stderr passes N bytes (default 67108864)' -r
complete -c world -n "__fish_world_using_subcommand mcp" -l wait-lock -d 'Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)' -r
complete -c world -n "__fish_world_using_subcommand mcp" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand mcp" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand mcp" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand mcp" -l allow-unattested -d 'Accept a session credential this store holds no mint record for (a row the reference daemon minted, or one inserted into the file); refused by default, and `world verify` warns `unattested` about such rows'
complete -c world -n "__fish_world_using_subcommand mcp" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand mcp" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand replay" -l episode -d 'Replay the coordinator entries of this episode' -r
complete -c world -n "__fish_world_using_subcommand replay" -l invocation -d 'Replay the entry committed for this invocation id (<surface>:<episode>:<task>)' -r
complete -c world -n "__fish_world_using_subcommand replay" -l from -d 'First log index of a range (with --to)' -r
complete -c world -n "__fish_world_using_subcommand replay" -l to -d 'Last log index of a range (with --from)' -r
complete -c world -n "__fish_world_using_subcommand replay" -l junit -d 'Also write a JUnit XML report (one test case per entry) to FILE' -r -F
complete -c world -n "__fish_world_using_subcommand replay" -l candidate -d 'Re-run the entries of the transitions this manifest names (the `world publish` format) with its sources and declared effects, and report what changes' -r -F
complete -c world -n "__fish_world_using_subcommand replay" -l transition -d 'Re-run the entries of transition ID with the source in FILE (repeatable; the recording\'s calling convention)' -r
complete -c world -n "__fish_world_using_subcommand replay" -l interpreter -d 'Re-run every selected entry under this interpreter: a path, a sha256: ref of an archived one, or `embedded`' -r
complete -c world -n "__fish_world_using_subcommand replay" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand replay" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand replay" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand replay" -l all -d 'Replay the whole log (client commits are listed as not replayable)'
complete -c world -n "__fish_world_using_subcommand replay" -l keep-going -d 'Keep going after the first divergence and report all of them'
complete -c world -n "__fish_world_using_subcommand replay" -l allow-empty -d 'Succeed even when the selection holds nothing replayable (default: exit 1, so a CI job that replays nothing does not pass by accident)'
complete -c world -n "__fish_world_using_subcommand replay" -l allow-gaps -d 'Replay what is there even when the log has a gap or misses the entry of an invocation the journal records as committed (default: exit 3 before replaying anything)'
complete -c world -n "__fish_world_using_subcommand replay" -l report-only -d 'Report changed verdicts but exit 0 (a divergence of the recording still exits 3)'
complete -c world -n "__fish_world_using_subcommand replay" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand replay" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand export-episode" -l out -d 'The bundle store to create (refused when it exists)' -r -F
complete -c world -n "__fish_world_using_subcommand export-episode" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand export-episode" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand export-episode" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand export-episode" -l embed -d 'Store the pinned interpreter binaries inside the bundle instead of FILE.artifacts/'
complete -c world -n "__fish_world_using_subcommand export-episode" -l checkpoint -d 'Put the store\'s latest signed checkpoint and each entry\'s inclusion proof into the bundle, so `world verify --bundle FILE --key KEY` proves it offline'
complete -c world -n "__fish_world_using_subcommand export-episode" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand export-episode" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand util; and not __fish_seen_subcommand_from completions man exec-probe help" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand util; and not __fish_seen_subcommand_from completions man exec-probe help" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand util; and not __fish_seen_subcommand_from completions man exec-probe help" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand util; and not __fish_seen_subcommand_from completions man exec-probe help" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand util; and not __fish_seen_subcommand_from completions man exec-probe help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand util; and not __fish_seen_subcommand_from completions man exec-probe help" -f -a "completions" -d 'Write bash, zsh and fish completions into DIR (default: completions/)'
complete -c world -n "__fish_world_using_subcommand util; and not __fish_seen_subcommand_from completions man exec-probe help" -f -a "man" -d 'Write man pages (one per command) into DIR (default: man/)'
complete -c world -n "__fish_world_using_subcommand util; and not __fish_seen_subcommand_from completions man exec-probe help" -f -a "exec-probe" -d 'The Workspace.Exec startup probe\'s client, run inside the sandbox (internal)'
complete -c world -n "__fish_world_using_subcommand util; and not __fish_seen_subcommand_from completions man exec-probe help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand util; and __fish_seen_subcommand_from completions" -l out -d 'Output directory' -r -F
complete -c world -n "__fish_world_using_subcommand util; and __fish_seen_subcommand_from completions" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand util; and __fish_seen_subcommand_from completions" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand util; and __fish_seen_subcommand_from completions" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand util; and __fish_seen_subcommand_from completions" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand util; and __fish_seen_subcommand_from completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand util; and __fish_seen_subcommand_from man" -l out -d 'Output directory' -r -F
complete -c world -n "__fish_world_using_subcommand util; and __fish_seen_subcommand_from man" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand util; and __fish_seen_subcommand_from man" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand util; and __fish_seen_subcommand_from man" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand util; and __fish_seen_subcommand_from man" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand util; and __fish_seen_subcommand_from man" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand util; and __fish_seen_subcommand_from exec-probe" -l db -d 'The store file (default ~/.ailang/world/world.db)' -r -F
complete -c world -n "__fish_world_using_subcommand util; and __fish_seen_subcommand_from exec-probe" -l json -d 'Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS` (comma-separated, with `=`) keeps only those members of each line, on the list commands that name their fields (log, effects, session list; an unknown field lists the valid ones)' -r
complete -c world -n "__fish_world_using_subcommand util; and __fish_seen_subcommand_from exec-probe" -l color -d 'Colour output: auto (terminal and no NO_COLOR), always or never' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c world -n "__fish_world_using_subcommand util; and __fish_seen_subcommand_from exec-probe" -s q -l quiet -d 'Print only what was asked for: no status lines or warnings'
complete -c world -n "__fish_world_using_subcommand util; and __fish_seen_subcommand_from exec-probe" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c world -n "__fish_world_using_subcommand util; and __fish_seen_subcommand_from help" -f -a "completions" -d 'Write bash, zsh and fish completions into DIR (default: completions/)'
complete -c world -n "__fish_world_using_subcommand util; and __fish_seen_subcommand_from help" -f -a "man" -d 'Write man pages (one per command) into DIR (default: man/)'
complete -c world -n "__fish_world_using_subcommand util; and __fish_seen_subcommand_from help" -f -a "exec-probe" -d 'The Workspace.Exec startup probe\'s client, run inside the sandbox (internal)'
complete -c world -n "__fish_world_using_subcommand util; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "genesis" -d 'Create the store if needed and commit a genesis world'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "commit" -d 'Compare-and-append a world from a commit body (the POST /v1/commit JSON)'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "head" -d 'Print the selected world head'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "world" -d 'Read world rows'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "object" -d 'Read objects'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "log" -d 'List log entries, or read one with `log get INDEX`'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "show" -d 'Show one entry: header, input, plan, effects with budgets, output, receipt, outcome'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "status" -d 'Summarise the store: head, entries, registry, sessions, approvals, intents, limits'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "registry" -d 'Read named registry heads'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "publish" -d 'Publish transitions from a manifest (attended; --yes for scripts, recorded as unattended)'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "pin" -d 'Archive an interpreter and bootstrap the epoch registry from its release'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "package" -d 'Publish an AILANG package to the registry: packet, approve, publish, reconcile, status'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "transitions" -d 'Read the transition registry: list, or show one descriptor'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "invoke" -d 'Call a published transition as a session and commit the result'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "tools" -d 'What a session can see and call'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "ailang" -d 'The embedded AILANG interpreter behind the `ailang` CLI contract'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "receipt" -d 'Answer a receipt: not-started, indeterminate or resolved'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "session" -d 'Mint, list and revoke session credentials'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "effects" -d 'Effect records and pending effect intents'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "approval" -d 'Approval requests for Human.Approve: open, list, show, decide'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "broker" -d 'Ask the broker what it would decide (dry run)'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "verify" -d 'Check the whole store: hashes, chain, links, journal'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "why" -d 'Walk the provenance of an entry, object, invocation or result and verify each link'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "key" -d 'Make Ed25519 keys for signing checkpoints (log keys) or cosigning them (witness keys)'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "checkpoint" -d 'Sign a C2SP tlog-checkpoint of the log; list, show, cosign and merge checkpoints'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "prove" -d 'Print an inclusion proof of an entry, or a consistency proof between checkpoints'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "limits" -d 'The nested limits ledger: init, reserve, dispatch, settle, reconcile, release, stop, adjust, report'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "mission" -d 'finite-v1 missions: contracts, runs, grant chains, admission and settlement'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "serve" -d 'Serve the store over HTTP /v1, MCP and A2A on loopback (holds the writer lock)'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "mcp" -d 'Serve MCP on stdin/stdout for a local agent client'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "replay" -d 'Re-run coordinator entries with their pinned interpreters and compare every byte (read-only)'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "export-episode" -d 'Write a self-contained bundle store holding what replaying one episode needs'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "util" -d 'Generate shell completions and man pages'
complete -c world -n "__fish_world_using_subcommand help; and not __fish_seen_subcommand_from genesis commit head world object log show status registry publish pin package transitions invoke tools ailang receipt session effects approval broker verify why key checkpoint prove limits mission serve mcp replay export-episode util help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from world" -f -a "get" -d 'Print one world row `{ref, revision, stateRoot, logHead}` (GET /v1/worlds/{ref})'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from object" -f -a "get" -d 'Print an object\'s metadata, or its payload bytes with --payload (GET /v1/objects/{ref})'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from object" -f -a "find" -d 'List objects with a semantic id, ascending hash, paged (GET /v1/objects/by-semantic-id)'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from log" -f -a "get" -d 'Print one entry `{header, entryHash, transitionRef}` (GET /v1/log/{index})'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from registry" -f -a "get" -d 'Print a registry head, e.g. world/transition-registry/v1 (GET /v1/registry/{name})'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from package" -f -a "packet" -d 'Recompute a package\'s ready packet and compare it with a golden (read only)'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from package" -f -a "approve" -d 'Mint the one-shot approval to publish a package version (attended)'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from package" -f -a "publish" -d 'Spend the approval: publish the package version, exactly once (attended; irreversible with --live)'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from package" -f -a "reconcile" -d 'Resolve publishes left indeterminate by reading the registry (GET only)'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from package" -f -a "status" -d 'List publish approvals and Registry.Publish effects'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from transitions" -f -a "list" -d 'List every descriptor of the current revision (table, or JSON lines with --json)'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from transitions" -f -a "show" -d 'Show one descriptor and its MCP tool name (ID may also be the MCP name)'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from tools" -f -a "list" -d 'The transitions this session\'s live grants can see and call, in registry id order'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from ailang" -f -a "version" -d 'Print the embedded interpreter\'s version text'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from ailang" -f -a "check" -d 'Parse, resolve and type-check FILE (exit 0 pass, 1 errors); MOD010 relaxed by default'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from ailang" -f -a "test" -d 'Run FILE\'s inline `tests [...]` pairs and `test "…" { }` blocks; each pass/fail with FILE:LINE:COL, then `N passed, M failed` (exit 0 all pass, 1 otherwise)'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from ailang" -f -a "run" -d 'Run FILE\'s entry function with one JSON argument; prints the result (strings raw)'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "mint" -d 'Mint a session credential for an episode (attended: a human confirms at the terminal)'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "list" -d 'List live session credentials: attended, expiry, and each grant\'s remaining budget'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "show" -d 'Show one credential: state, expiry, and per grant the budget, what the episode spent and what remains (as the broker would seed it)'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "revoke" -d 'Revoke one credential by id, or every credential of an episode'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from effects" -f -a "show" -d 'Resolve one effect record down to its request and result'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from approval" -f -a "request" -d 'Open a pending approval request for an episode and print its ref'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from approval" -f -a "list" -d 'List approval requests with their state and the effect that consumed each'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from approval" -f -a "show" -d 'Show one approval request with its decision and claim'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from approval" -f -a "decide" -d 'Decide a pending request (attended: a human confirms at the terminal)'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from broker" -f -a "check" -d 'Decide EFFECT SCOPE COST for a session (budgets seeded from the journal); writes nothing'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from key" -f -a "generate" -d 'Make an Ed25519 key: the private key goes to FILE (mode 0600, never overwritten), the public verifier key (NAME+KEYID+BASE64) to stdout'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from key" -f -a "public" -d 'Print the public verifier key of a private key file'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from checkpoint" -f -a "list" -d 'List the checkpoints this store signed, oldest first'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from checkpoint" -f -a "show" -d 'Print a stored checkpoint\'s note (the latest, or the one of tree size N)'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from checkpoint" -f -a "cosign" -d 'As a witness: check a checkpoint\'s log signature (and, with --last and --proof, that it extends the checkpoint this witness cosigned before), then add a tlog-cosignature line'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from checkpoint" -f -a "merge" -d 'Merge the cosignature lines of a cosigned copy of a stored checkpoint into it'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from limits" -f -a "init" -d 'Load a ledger config (attended; --yes for scripts, recorded as an unattended HOST act)'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from limits" -f -a "reserve" -d 'Reserve an attempt\'s maximum cost and active time against a scope and its ancestors'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from limits" -f -a "dispatch" -d 'Mark a RESERVED attempt DISPATCHED, before any external call'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from limits" -f -a "settle" -d 'Settle a DISPATCHED attempt: --actual X (SUCCEEDED, or FAILED with --failed) or --unknown'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from limits" -f -a "reconcile" -d 'Human settlement of an UNKNOWN attempt (attended; always needs the terminal)'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from limits" -f -a "release" -d 'Free a RESERVED attempt (a DISPATCHED one can only be settled)'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from limits" -f -a "stop" -d 'Stop a scope\'s subtree: freezes time, keeps exposure, blocks reserve and dispatch'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from limits" -f -a "adjust" -d 'Change bounds or lift a stop (attended; always needs the terminal and evidence)'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from limits" -f -a "report" -d 'Blocked scopes, dependents, usage, outstanding and unknown attempts, violations (read-only)'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from mission" -f -a "create" -d 'Store a new mission from a contract (attended; --yes for scripts, recorded as unattended)'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from mission" -f -a "apply" -d 'Apply the seed\'s command JSON: one (--command FILE, - for stdin) or a JSON-lines file'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from mission" -f -a "start-run" -d 'startRun: a new ACTIVE run'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from mission" -f -a "grant" -d 'grant: a root grant, or a delegation with --parent (attenuation only)'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from mission" -f -a "admit" -d 'admit: reserve an attempt\'s maximum exposure against the mission and the grant chain'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from mission" -f -a "dispatch" -d 'dispatch: ADMITTED -> DISPATCHED, before any external call'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from mission" -f -a "settle" -d 'settle: --actual X (SUCCEEDED, or FAILED with --failed), or --unknown (keeps the reservation)'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from mission" -f -a "release" -d 'release: ADMITTED -> RELEASED (the attempt still counts)'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from mission" -f -a "reconcile" -d 'reconcile: a HUMAN resolves an UNKNOWN attempt (always attended); or, with --from-store and --ledger, the HOST settles this store\'s paired attempts from its journal'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from mission" -f -a "approve" -d 'approve: a HUMAN approves an operation (always attended)'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from mission" -f -a "revoke" -d 'revoke: the grant and its delegations stop admitting'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from mission" -f -a "complete-run" -d 'completeRun: every contract criterion evidenced (NAME=sha256:REF, repeatable)'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from mission" -f -a "report" -d 'Budget, reserved, settled, remaining; runs; the grant tree; outstanding and UNKNOWN attempts; violations'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from mission" -f -a "list" -d 'Every mission in the store'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from mission" -f -a "log" -d 'The mission\'s hash-chained command journal'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from mission" -f -a "verify" -d 'Re-fold every mission\'s journal and compare it with the stored state, outbox and hash chain (read-only; exit 3 on a finding)'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from util" -f -a "completions" -d 'Write bash, zsh and fish completions into DIR (default: completions/)'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from util" -f -a "man" -d 'Write man pages (one per command) into DIR (default: man/)'
complete -c world -n "__fish_world_using_subcommand help; and __fish_seen_subcommand_from util" -f -a "exec-probe" -d 'The Workspace.Exec startup probe\'s client, run inside the sandbox (internal)'
