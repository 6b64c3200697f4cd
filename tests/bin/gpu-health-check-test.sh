#!/usr/bin/env bash
# tests/bin/gpu-health-check-test.sh: end-to-end test of bin/gpu-health-check: --help, usage
# errors (exit 2), no usable GPU (exit 3, a clear line, valid JSON with verdict "no-gpu") and, on a
# machine with a GPU, a healthy run with a short burn-in. Run by `make test` with BUILD set
# (exit 0 pass, 77 skip, else fail).
set -u
tool=${BUILD:-build/release}/bin/gpu-health-check
if [ ! -x "$tool" ]; then
  echo "skipped: $tool not built"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# run NAME EXPECTED_RC ARGS...: runs the tool, keeps stdout/stderr in $tmp/NAME.{out,err}.
run() {
  local name=$1 want=$2 rc
  shift 2
  "$tool" --print-args=false "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
  rc=$?
  [ "$rc" -eq "$want" ] || fail "$name: exit $rc, expected $want ($(head -c 300 "$tmp/$name.err"))"
  return 0
}
contains() {  # contains NAME FILE TEXT
  grep -qF -- "$3" "$2" || fail "$1: '$3' not in $(basename "$2"): $(head -c 300 "$2")"
}
have_python=0
command -v python3 >/dev/null 2>&1 && have_python=1
# json_field FILE EXPR: prints the Python expression EXPR over the parsed JSON object j.
json_field() {
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

run help 0 --help
contains help "$tmp/help.err" "Usage: gpu-health-check"
contains help "$tmp/help.err" "--memory-fraction"
contains help "$tmp/help.err" "Exit status: 0 healthy; 1 a check failed; 2 usage error; 3 no usable GPU"

run bad-option 2 --no-such-option
contains bad-option "$tmp/bad-option.err" "unknown option"
[ "$(wc -l <"$tmp/bad-option.err")" -eq 1 ] || fail "bad-option: expected one stderr line"
run bad-fraction 2 --memory-fraction=1.5
contains bad-fraction "$tmp/bad-fraction.err" "--memory-fraction must be in (0, 0.95]"
run bad-duration 2 --duration=-3
contains bad-duration "$tmp/bad-duration.err" "--duration"
run bad-device 2 --device=-7
run positional 2 extra-argument

# --use-gpu=no means no GPU to check, on every machine.
run use-gpu-no 3 --use-gpu=no
contains use-gpu-no "$tmp/use-gpu-no.out" "no usable GPU: --use-gpu=no"
contains use-gpu-no "$tmp/use-gpu-no.out" "verdict no-gpu"

# Is there a usable GPU here? (exit 3 says no)
"$tool" --print-args=false --memory-fraction=0.05 --gemm-size=256 --duration=1 --json \
  >"$tmp/full.json" 2>"$tmp/full.err"
rc=$?
if [ "$rc" -eq 3 ]; then
  echo "no usable GPU here: checking the no-GPU answers"
  contains no-gpu "$tmp/full.err" "no usable GPU: "
  contains no-gpu "$tmp/full.err" "verdict no-gpu"
  run no-gpu-lines 3
  contains no-gpu-lines "$tmp/no-gpu-lines.out" "no usable GPU: "
  [ -s "$tmp/no-gpu-lines.err" ] && fail "no-gpu-lines: unexpected stderr: $(cat "$tmp/no-gpu-lines.err")"
  run no-gpu-file 3 --json-file="$tmp/file.json"
  if [ "$have_python" -eq 1 ]; then
    for f in "$tmp/full.json" "$tmp/file.json"; do
      [ "$(json_field "$f" 'j["verdict"]')" = "no-gpu" ] || fail "$f: verdict is not no-gpu"
      [ "$(json_field "$f" 'j["exit_code"]')" = "3" ] || fail "$f: exit_code is not 3"
      [ "$(json_field "$f" 'len(j["reason"]) > 0')" = "True" ] || fail "$f: no reason"
    done
  else
    echo "python3 not found: JSON parsing skipped"
  fi
  if [ "${CUDA:-1}" = "0" ]; then contains no-gpu "$tmp/full.err" "without CUDA"; fi
else
  echo "a GPU is usable here: checking a healthy run"
  [ "$rc" -eq 0 ] || fail "full run: exit $rc, expected 0 (healthy): $(grep '^FAIL' "$tmp/full.err")"
  for name in sgemm dgemm "softmax float" "sum double" "row sums float" "memory walking-ones" \
    "memory own-address" "memory random" "bandwidth device-to-device" "bandwidth host-to-device" \
    "bandwidth device-to-host" temperature "burn-in round 1:" "burn-in done:"; do
    contains full "$tmp/full.err" "$name"
  done
  if [ "$have_python" -eq 1 ]; then
    [ "$(json_field "$tmp/full.json" 'j["verdict"]')" = "healthy" ] || fail "full: verdict"
    [ "$(json_field "$tmp/full.json" 'j["burn_in"]["rounds"] >= 1')" = "True" ] || fail "full: burn_in"
    [ "$(json_field "$tmp/full.json" 'all(c["status"] in ("PASS", "SKIP") for c in j["checks"])')" \
      = "True" ] || fail "full: a check is not PASS or SKIP"
    [ "$(json_field "$tmp/full.json" '[c["measured"] for c in j["checks"] if c["name"] == "memory random"][0] == 0')" \
      = "True" ] || fail "full: memory random found bad words"
  fi
  run bad-device-id 3 --device=4096
  contains bad-device-id "$tmp/bad-device-id.out" "no usable GPU: "
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "gpu-health-check: all checks passed"
