#!/usr/bin/env bash
# tests/bin/cu-allocator-soak-test.sh: bin/cu-allocator-soak briefly (always CPU mode: an allocator
# over host memory; on a GPU a 2-second soak provokes too few actions to check: the device run soaks
# for minutes) and bin/cu-allocator-snapshot on the
# recorded trace tests/data/synthetic-nnet3.trace; both snapshots are read back by Python's pickle
# (tests/check-memory-snapshot.py). Run by `make test`; by hand: BUILD=build/<variant> bash
# tests/bin/cu-allocator-soak-test.sh
source "$(dirname "$0")/tool-test-lib.sh"
CHECK=$(cd "$(dirname "$0")/.." && pwd)/check-memory-snapshot.py
TRACE=$DATA/../../data/synthetic-nnet3.trace
have_python=1
python3 -c 'import pickle' 2>/dev/null || have_python=0

run cu-allocator-soak --use-gpu=no --seconds=2 --threads=8 --action-every=16 --snapshot="$TMP/soak.pickle"
expect_rc "a 2-second soak with 8 threads" 0
for line in "corruptions: 0" "double hand-outs: 0" "leaks: 0 bytes"; do
  if grep -qx "$line" "$TMP/out"; then pass "soak prints '$line'"; else
    fail "soak lacks '$line': $(cat "$TMP/out")"
  fi
done
for pattern in '^operations: [1-9][0-9]* ' '^actions: [1-9][0-9]* graphs \(0 wrong results\), [0-9]+ growths' \
  '^syncs per 1000 frees: [0-9]+\.[0-9]{2}$' '^peak held / peak in use: [0-9]+\.[0-9]{3} ' \
  '^time by kind \(wall seconds summed over 8 threads' '^  poison check +[1-9][0-9]* calls +[0-9.]+ s' \
  '^  action: provoked OOM +[1-9][0-9]* calls +[0-9.]+ s +[0-9.]+ ms each$'; do
  if grep -qE "$pattern" "$TMP/out"; then pass "soak prints /$pattern/"; else
    fail "soak output lacks /$pattern/: $(cat "$TMP/out")"
  fi
done
if [ "$have_python" = 1 ]; then
  # The planned scopes' block is marked (cu-memory-snapshot.h), at least on its events.
  if python3 "$CHECK" --expect-events --expect-active --expect-mark "CuPlannedScope block" \
    "$TMP/soak.pickle" >"$TMP/check" 2>&1; then
    pass "soak snapshot: $(cat "$TMP/check")"
  else
    fail "soak snapshot: $(cat "$TMP/check")"
  fi
fi

expect_error "soak --seconds=0" cu-allocator-soak 2 "--seconds must be > 0" --seconds=0 --use-gpu=no

# With failures injected at 1 in 20 of the allocator's upstream calls (CUCTX_FAULT_INJECT, read by
# the soak for its host upstream as by the device upstreams): still no corruption and no leak.
CUCTX_FAULT_INJECT="one_in=20,seed=3" "$BIN/cu-allocator-soak" --print-args=false --use-gpu=no \
  --seconds=2 --snapshot="$TMP/faults.pickle" >"$TMP/out" 2>"$TMP/err"
rc=$?
expect_rc "a 2-second soak with CUCTX_FAULT_INJECT=one_in=20" 0
injected=$(sed -n 's/^injected failures (CUCTX_FAULT_INJECT): \([0-9]*\);.*/\1/p' "$TMP/out")
if [ "${injected:-0}" -gt 0 ] && grep -qx "corruptions: 0" "$TMP/out" && grep -qx "leaks: 0 bytes" "$TMP/out" &&
  grep -qx "double hand-outs: 0" "$TMP/out"; then
  pass "soak with faults: $injected injected failures, 0 corruptions, 0 double hand-outs, 0 leaks"
else
  fail "soak with faults: $(cat "$TMP/out") $(head -c 300 "$TMP/err")"
fi
CUCTX_FAULT_INJECT="often=3" "$BIN/cu-allocator-soak" --print-args=false --use-gpu=no --seconds=1 \
  >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "^cu-allocator-soak: CUCTX_FAULT_INJECT='often=3': .*unknown key 'often'" "$TMP/err"; then
  pass "a bad CUCTX_FAULT_INJECT is an error naming it ($(cat "$TMP/err"))"
else
  fail "bad CUCTX_FAULT_INJECT: exit $rc, stderr: $(cat "$TMP/err")"
fi
# No usable GPU with --use-gpu=yes: exit 3 and one line (CUDA_VISIBLE_DEVICES= hides every GPU).
CUDA_VISIBLE_DEVICES= "$BIN/cu-allocator-soak" --print-args=false --use-gpu=yes --seconds=1 \
  >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ "$rc" -eq 3 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
  grep -q "^cu-allocator-soak: .*no usable GPU" "$TMP/err"; then
  pass "soak --use-gpu=yes without a GPU: exit 3 ($(cat "$TMP/err"))"
else
  fail "soak --use-gpu=yes without a GPU: exit $rc, stderr: $(cat "$TMP/err")"
fi

run cu-allocator-snapshot "$TRACE" "$TMP/nnet3.pickle"
expect_rc "snapshot of the synthetic nnet3 trace" 0
if grep -qE '^835 mallocs, 596 frees, 1 threads, 238 live at the end; snapshot .*: [0-9]+ segments, [0-9]+ events$' "$TMP/out"; then
  pass "snapshot tool summary: $(cat "$TMP/out")"
else
  fail "snapshot tool summary: $(cat "$TMP/out")"
fi
run cu-allocator-snapshot --vmm=false --threads=false "$TRACE" "$TMP/nnet3-regions.pickle"
expect_rc "snapshot with cudaMalloc-like regions" 0
if [ "$have_python" = 1 ]; then
  if python3 "$CHECK" --expect-events --expect-active --expect-kind expandable "$TMP/nnet3.pickle" >"$TMP/check" 2>&1 &&
    python3 "$CHECK" --expect-events --expect-active --expect-kind region "$TMP/nnet3-regions.pickle" >>"$TMP/check" 2>&1; then
    pass "trace snapshots read back: $(tr '\n' ' ' <"$TMP/check")"
  else
    fail "trace snapshots: $(cat "$TMP/check")"
  fi
  # Every allocation of the trace (zero-byte ones return no memory) is in the snapshot, each with
  # its free.
  num_allocs=$(awk '($1 == "m" || $1 == "p") && $NF != 0' "$TRACE" | wc -l)
  if python3 - "$TMP/nnet3.pickle" "$num_allocs" <<'PY'; then
import pickle, sys
d = pickle.load(open(sys.argv[1], "rb"))
n = int(sys.argv[2])
actions = [e["action"] for e in d["device_traces"][0]]
assert actions.count("alloc") == n, (actions.count("alloc"), n)
live = sum(1 for seg in d["segments"] for b in seg["blocks"] if b["state"] == "active_allocated")
assert live == 238, live  # the trace's pointers live at its end
assert actions.count("free_requested") == n - live and actions.count("free_completed") == n - live
PY
    pass "the nnet3 snapshot holds its $num_allocs allocations, the frees of all but the 238 live at the end"
  else
    fail "the nnet3 snapshot's events do not match the trace"
  fi
else
  echo "skip: python3 not found: snapshots not read back"
fi
printf 'm 0 100 1\nf 0 7\n' >"$TMP/bad.trace"
expect_error "snapshot of a malformed trace" cu-allocator-snapshot 1 "line 2" "$TMP/bad.trace" "$TMP/x.pickle"
expect_bare_usage "snapshot tool without arguments" cu-allocator-snapshot 2
finish
