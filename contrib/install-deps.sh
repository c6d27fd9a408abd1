#!/usr/bin/env bash
# Installs the Debian 12 packages dsforge needs to build and test.
# Run as root; otherwise it prints the exact apt-get line to run.
#   contrib/install-deps.sh          build + test dependencies
#   contrib/install-deps.sh --bench  also the benchmark tools
#   contrib/install-deps.sh --browser  also chromium, for the report page's
#                                    browser test (skipped without it)
set -euo pipefail
packages=(
  build-essential cmake pkg-config      # the build
  liblua5.4-dev libcjson-dev libcurl4-openssl-dev libssl-dev libcmocka-dev
  python3 python3-jsonschema python3-yaml openssl  # the tests (CLI, JSON Schema, YAML, TLS)
  groff-base zsh fish                   # the man page and completion tests
  strace                                # the tests that count system calls
  slurm-wlm munge                       # the job-array test's one-node Slurm (contrib/slurm/cluster.sh)
  neovim                                # tests/lsp: dsforge lsp in Neovim's built-in LSP client
)
# node and npm for tests/editor (VS Code's JSON language service and ajv)
# and tests/lsp (vscode-jsonrpc, driving dsforge lsp), their packages
# installed from npm into the build tree: Debian's packages, unless a
# node (with its own npm, e.g. NodeSource's) is already there.
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)
for opt in "$@"; do
  case $opt in
    --bench) packages+=(hyperfine jsonnet time lua5.4 jq curl valgrind) ;;
    --browser) packages+=(chromium) ;;
    *) echo "dsforge: install-deps: unknown option '$opt'" >&2; exit 2 ;;
  esac
done
if [ "$(id -u)" -ne 0 ]; then
  echo "dsforge: install-deps needs root. Run:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${packages[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
echo "dsforge: dependencies installed"
