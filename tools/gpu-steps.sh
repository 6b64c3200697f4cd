# tools/gpu-steps.sh: sourced by tools/gpu-test.sh and tools/gpu-multi-test.sh. Defines
# step NAME LOG COMMAND...: runs COMMAND with its output in $out/LOG and appends a verdict line
# (name, PASS or FAIL with the exit status, seconds, the log's last line) to the array `summary`.
summary=()
step() {
  local name=$1 log=$2
  shift 2
  local start=$SECONDS
  "$@" >"$out/$log" 2>&1
  local rc=$?
  local verdict=PASS
  [ $rc -ne 0 ] && verdict="FAIL (exit $rc)"
  summary+=("$(printf '%-30s %-14s %4d s  %s' "$name" "$verdict" $((SECONDS - start)) "$(tail -n 1 "$out/$log")")")
}
