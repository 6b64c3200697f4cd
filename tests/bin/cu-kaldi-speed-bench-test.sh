#!/usr/bin/env bash
# tests/bin/cu-kaldi-speed-bench-test.sh: cu-kaldi-speed-bench prints ratios only against Kaldi's
# figures from a log given with --kaldi-log (the same host and run), never against the table's
# stored figures; a log without figures or a missing log is a clear error. Runs the CPU fallback
# (--use-gpu=no), so it needs no GPU. Run by `make test` (CUDA builds: the tool is CUDA-only).
source "$(dirname "$0")/tool-test-lib.sh"
: "${CUDA:?CUDA must be 0 or 1 (make test sets it)}"
if [ "$CUDA" = 0 ]; then
  echo "skip: cu-kaldi-speed-bench is built only with CUDA"
  finish
fi
common=(--use-gpu=no --time=0.001 --dims=32 --only='CuVector::Sum<float>,CuMatrix::Sigmoid<float>')

run cu-kaldi-speed-bench "${common[@]}"
expect_rc "no --kaldi-log" 0
grep -q "No --kaldi-log: cuctx speeds only" "$TMP/out" && pass "says it prints no ratios" ||
  fail "no notice that ratios need Kaldi's log: $(head -c 400 "$TMP/out")"
if grep -q "^Summary" "$TMP/out"; then fail "a ratio summary without Kaldi's log"; else
  pass "no ratio summary without Kaldi's log"
fi
grep -E -q '^CuVector::Sum<float> +32 +[0-9.e+-]+ +- +-' "$TMP/out" && pass "row without a ratio" ||
  fail "the Sum row should show '-' for Kaldi and ratio: $(grep 'Sum<float>' "$TMP/out")"

# Kaldi's CPU pass logs each label first and its GPU pass last: the last figure counts.
cat >"$TMP/kaldi.log" <<'LOG'
LOG (cu-vector-speed-test[5.5]:TestSum():cu-vector-speed-test.cc:60) For CuVector::Sum<float>, for dim = 32, speed was 1e-09 gigaflops.
LOG (cu-vector-speed-test[5.5]:TestSum():cu-vector-speed-test.cc:60) For CuVector::Sum<float>, for dim = 32, speed was 1e-06 gigaflops.
LOG
run cu-kaldi-speed-bench "${common[@]}" --kaldi-log="$TMP/kaldi.log" --tsv-out="$TMP/rows.tsv"
expect_rc "--kaldi-log" 0
grep -q "Kaldi's figures from $TMP/kaldi.log: 1 of the table's" "$TMP/out" && pass "one figure found" ||
  fail "expected one figure from the log: $(grep -m1 "Kaldi's figures" "$TMP/out")"
kaldi=$(awk -F'\t' '$1 == "CuVector::Sum<float>" && $2 == "32" {print $4}' "$TMP/rows.tsv")
[ "$kaldi" = "1e-06" ] && pass "the GPU pass's figure (the last) is used" ||
  fail "Kaldi's figure for Sum<float> 32 is '$kaldi', expected 1e-06"
sigmoid=$(awk -F'\t' '$1 == "CuMatrix::Sigmoid<float>" && $2 == "32" {print $4 "/" $5}' "$TMP/rows.tsv")
[ "$sigmoid" = "-/-" ] && pass "a row the log lacks has no ratio" ||
  fail "Sigmoid<float> 32 has Kaldi/ratio '$sigmoid', expected -/-"
grep -q "^Summary" "$TMP/out" && pass "summary with Kaldi's log" || fail "no summary with the log"

echo "nothing here" >"$TMP/empty.log"
expect_error "a log without figures" cu-kaldi-speed-bench 1 "holds no line" "${common[@]}" \
  --kaldi-log="$TMP/empty.log"
expect_error "a missing log" cu-kaldi-speed-bench 1 "cannot open '$TMP/none.log'" "${common[@]}" \
  --kaldi-log="$TMP/none.log"
finish
