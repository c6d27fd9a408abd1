#!/usr/bin/env bash
# contrib/bench/lsp.sh -- what `dsforge lsp` costs an editor (issue 34;
# see README.md): diagnostics after one edit of a 200-line config and
# hover latency (medians over 200), and the server's RSS over 10,000
# edits. The client is contrib/bench/lsp.py (python3 only, no npm).
#
#   DSFORGE=/path/to/dsforge contrib/bench/lsp.sh
#
# Targets (exit 1 and say so if missed): diagnostics median <= 5 ms,
# hover median <= 2 ms, RSS flat (<= 5% growth from 1,000 to 10,000
# edits). Builds nothing. Knobs: DSFORGE (default ./build/dsforge),
# EDITS (200), RSS_EDITS (10000), PYTHON (python3).
set -euo pipefail

DSFORGE=${DSFORGE:-./build/dsforge}
PYTHON=${PYTHON:-python3}
EDITS=${EDITS:-200}
RSS_EDITS=${RSS_EDITS:-10000}

die() { printf 'lsp.sh: error: %s\n' "$*" >&2; exit 2; }

[[ -x $DSFORGE ]] || die "no dsforge binary at '$DSFORGE' (set DSFORGE=...)"
command -v "$PYTHON" >/dev/null 2>&1 || die "'$PYTHON' is needed"
exec "$PYTHON" "$(dirname "$0")/lsp.py" "$DSFORGE" "$EDITS" "$RSS_EDITS"
