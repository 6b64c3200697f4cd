# tests/bin/tool-test-lib.sh: helpers sourced by the tool tests in tests/bin/*-test.sh.
# Sets BIN (the tools of the build being tested: $BUILD/bin, as `make test` passes BUILD), DATA (the
# golden files) and TMP (removed on exit), and defines the checks below. Each check prints one line
# "ok: ..." or "FAIL: ..."; finish() exits 1 if any failed, else 0.
set -u
: "${BUILD:?BUILD must name the build tree (make test sets it)}"
BIN=$BUILD/bin
DATA=$(cd "$(dirname "${BASH_SOURCE[0]}")/data" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0

pass() { echo "ok: $1"; }
fail() {
  echo "FAIL: $1"
  failures=$((failures + 1))
}

# run TOOL ARGS...: runs $BIN/TOOL with --print-args=false (so stderr holds only what the tool
# itself says); stdout goes to $TMP/out, stderr to $TMP/err, the status to $rc.
run() {
  local tool=$1
  shift
  "$BIN/$tool" --print-args=false "$@" >"$TMP/out" 2>"$TMP/err"
  rc=$?
}

# expect_rc WHAT N: the last run's status is N.
expect_rc() {
  if [ "$rc" -eq "$2" ]; then pass "$1 (exit $rc)"; else
    fail "$1: exit $rc, expected $2; stderr: $(head -c 400 "$TMP/err")"
  fi
}

# expect_same WHAT FILE1 FILE2: byte-identical files.
expect_same() {
  if cmp -s "$2" "$3"; then pass "$1"; else
    fail "$1: $2 and $3 differ"
    od -c "$2" | head -n 8
    od -c "$3" | head -n 8
  fi
}

# expect_error WHAT TOOL STATUS PATTERN ARGS...: the tool exits with STATUS and its stderr is exactly
# one line "TOOL: ..." matching the extended regex PATTERN, with no log prefix or stack trace.
expect_error() {
  local what=$1 tool=$2 status=$3 pattern=$4
  shift 4
  run "$tool" "$@"
  local lines
  lines=$(wc -l <"$TMP/err")
  if [ "$rc" -ne "$status" ]; then
    fail "$what: exit $rc, expected $status; stderr: $(head -c 400 "$TMP/err")"
  elif [ "$lines" -ne 1 ]; then
    fail "$what: stderr has $lines lines, expected one:"
    cat "$TMP/err"
  elif ! grep -qE "^$tool: .*($pattern)" "$TMP/err"; then
    fail "$what: stderr '$(cat "$TMP/err")' does not match '$tool: .*($pattern)'"
  else
    pass "$what (exit $rc: $(cat "$TMP/err"))"
  fi
}

# expect_help TOOL OPTION...: --help exits 0 and lists the standard options, the given ones and
# their defaults.
expect_help() {
  local tool=$1 opt
  shift
  run "$tool" --help
  expect_rc "$tool --help" 0
  for opt in --config --verbose --print-args --version "$@"; do
    if grep -qE -- "^ +$opt[=\[].*\(default: " "$TMP/err"; then pass "$tool --help lists $opt"; else
      fail "$tool --help does not list $opt with its default"
    fi
  done
}

# expect_usage_errors TOOL GOOD_ARGS...: the usage mistakes every tool rejects with exit 2.
expect_usage_errors() {
  local tool=$1
  shift
  expect_error "$tool: unknown option" "$tool" 2 "unknown option '--no-such-option'" \
    --no-such-option "$@"
  expect_error "$tool: bad --verbose value" "$tool" 2 "invalid value 'x' for option --verbose" \
    --verbose=x "$@"
  expect_error "$tool: missing config file" "$tool" 2 "cannot open config file" \
    --config="$TMP/no-such.conf" "$@"
  expect_error "$tool: one argument too many" "$tool" 2 "positional argument.*got $(($# + 1))" \
    "$@" extra
}

# expect_bare_usage WHAT TOOL NEEDED ARGS...: too few positional arguments (ARGS) print the usage,
# then the line "TOOL: expected NEEDED positional argument(s), got N" last; exit 2 (as Kaldi's tools
# print their usage).
expect_bare_usage() {
  local what=$1 tool=$2 needed=$3
  shift 3
  run "$tool" "$@"
  if [ "$rc" -ne 2 ]; then
    fail "$what: exit $rc, expected 2; stderr: $(head -c 400 "$TMP/err")"
  elif ! grep -q "^Usage: $tool " "$TMP/err"; then
    fail "$what: no 'Usage: $tool' line on stderr: $(head -c 400 "$TMP/err")"
  elif ! tail -n 1 "$TMP/err" | grep -qE "^$tool: expected $needed positional arguments?, got $#\$"; then
    fail "$what: last stderr line is '$(tail -n 1 "$TMP/err")'"
  else
    pass "$what (exit 2, usage and '$(tail -n 1 "$TMP/err")')"
  fi
}

# expect_version TOOL: --version prints "TOOL (cuctx X.Y.Z, revision R)" on stdout and exits 0,
# whatever arguments the tool needs otherwise.
expect_version() {
  local tool=$1
  run "$tool" --version
  if [ "$rc" -eq 0 ] && [ "$(wc -l <"$TMP/out")" -eq 1 ] &&
    grep -qE "^$tool \(cuctx [0-9]+\.[0-9]+\.[0-9]+, revision [^ )]+\)\$" "$TMP/out"; then
    pass "$tool --version: $(cat "$TMP/out")"
  else
    fail "$tool --version: exit $rc, stdout '$(cat "$TMP/out")', stderr '$(head -c 300 "$TMP/err")'"
  fi
}

finish() {
  if [ "$failures" -eq 0 ]; then
    echo "all checks passed"
    exit 0
  fi
  echo "$failures check(s) failed"
  exit 1
}
