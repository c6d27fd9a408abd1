#!/bin/sh
# tests/lint/test_core_names.sh -- the lint of tests/lint/core_names.py
# (ctest lint_no_deepspeed_in_core) fails on planted examples: each of
# these, alone in a C file of an otherwise clean tree, makes it exit 1
# naming the file and line; the clean tree passes; a debt list allows a
# name on as many lines as it says, no more, and a count higher than
# found fails. Run by ctest as lint_core_names_self_test.
#   tests/lint/test_core_names.sh
set -eu
lint="python3 $(dirname "$0")/core_names.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir -p "$tmp/src/cli"
cat >"$tmp/src/cli/clean.c" <<'C'
/* A comment may say DeepSpeed, accelerate or Slurm: not read. */
static const char *const targets_help = "the targets the plugins own";
int clean(void) { return puts("fits the budget: 'auto' values"); }
C
cat >"$tmp/CMakeLists.txt" <<'C'
# plugins/deepspeed in a comment is not read
file(GLOB lists plugins/*/builtin-data.txt)
C
$lint "$tmp" >/dev/null 2>&1 || fail "the clean tree does not pass"

plant() { # NAME LINE TEXT: TEXT in src/cli/planted.c must fail at LINE
    printf '%s\n' "$3" >"$tmp/src/cli/planted.c"
    if out=$($lint "$tmp" 2>&1); then
        fail "$1 passes: $3"
    fi
    case $out in
    *"src/cli/planted.c:$2: "*) ;;
    *) fail "$1: not reported at src/cli/planted.c:$2: $out" ;;
    esac
    rm "$tmp/src/cli/planted.c"
}
plant "a quoted key" 1 'const char *k = "zero_optimization";'
plant "a plain name" 1 'const char *t = "deepspeed";'
plant "a name in prose" 1 'puts("give the file to Hugging Face");'
plant "adjacent literals" 1 'const char *t = "deep" "speed";'
plant "literals across lines" 2 'static const char *t =
    "Deep"
    "Speed";'
plant "pieces of one call" 1 'char *s = dsf_xconcat("hugging", "face", NULL);'
plant "an option's name as a param's" 1 'static const char *o = "world-size";'
plant "a char array rewritten" 2 'void f(void) {
    char pname[] = "world-size";
    pname[5] = '"'"'_'"'"';
}'
plant "a launcher" 1 'const char *l = "torchrun";'
plant "a scheduler" 1 'const char *l = "--slurm";'
plant "an accelerate emitter" 1 'const char *e = "accelerate";'
plant "the hf target" 1 'if (!strcmp(target, "hf")) return 1;'
# issue 35: the options a plugin adds to check and gen, its texts
plant "a plugin's option" 1 'static const char *o = "ds-version";'
plant "a plugin's flag" 1 'const char *f = "--strict-fit";'
plant "a ctx field" 1 'lua_setfield(L, -2, "ds_version");'
plant "a family in a summary" 1 'const char *s = "validate DeepSpeed config files";'
plant "a machine param in a hint" 1 'puts("for gpus_per_node, gpu_mem_gb, ...");'

# CMakeLists.txt: paths count too.
cp "$tmp/CMakeLists.txt" "$tmp/keep.txt"
echo 'set(DATA plugins/deepspeed/schema.lua)' >>"$tmp/CMakeLists.txt"
$lint "$tmp" >/dev/null 2>&1 && fail "a plugin's path in CMakeLists.txt passes"
cp "$tmp/keep.txt" "$tmp/CMakeLists.txt"

# The debt list: N lines allowed, N+1 fail, a count above what is found fails.
printf 'const char *a = "deepspeed";\nconst char *b = "deepspeed";\n' \
    >"$tmp/src/cli/planted.c"
echo 'src/cli/planted.c: deepspeed: 2' >"$tmp/debt.txt"
$lint "$tmp" --debt "$tmp/debt.txt" >/dev/null 2>&1 ||
    fail "two listed lines do not pass"
echo 'const char *c = "DeepSpeed";' >>"$tmp/src/cli/planted.c"
$lint "$tmp" --debt "$tmp/debt.txt" >/dev/null 2>&1 &&
    fail "a third line passes a list of two"
echo 'src/cli/planted.c: deepspeed: 4' >"$tmp/debt.txt"
$lint "$tmp" --debt "$tmp/debt.txt" >/dev/null 2>&1 &&
    fail "a count above what is found passes"
echo "the lint fails on every planted example"
