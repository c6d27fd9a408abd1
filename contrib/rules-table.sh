#!/usr/bin/env bash
# Prints the README's rule table (| id | severity | what | fix |) from the
# rules the plugins declare, so the README can be kept in step:
#   contrib/rules-table.sh build/dsforge
set -euo pipefail
dsforge=${1:-build/dsforge}
"$dsforge" plugins --json | python3 -c '
import json, sys
for plugin in json.load(sys.stdin):
    for r in plugin.get("rules", []):
        print("| `%s` | %s | %s | %s |" % (r["id"], r["severity"],
              r["summary"].replace("|", "\\|"),
              r.get("fix", "").replace("|", "\\|")))'
