#!/usr/bin/env bash
# tests/bin/matrix-info-test.sh: end-to-end checks of bin/matrix-info on the golden files in
# tests/bin/data. Run by `make test`.
source "$(dirname "$0")/tool-test-lib.sh"

# expect_info WHAT FILE EXPECTED: matrix-info FILE prints exactly EXPECTED.
expect_info() {
  run matrix-info "$2"
  printf '%s\n' "$3" >"$TMP/expected"
  if [ "$rc" -eq 0 ] && cmp -s "$TMP/out" "$TMP/expected"; then pass "$1"; else
    fail "$1 (exit $rc): got"
    cat "$TMP/out" "$TMP/err"
  fi
}

stats='min: -7
max: 100
mean: 15.7708333
nan-count: 0
inf-count: 0'
expect_info "binary float" "$DATA/m23.fm.bin" "rows: 2
cols: 3
format: binary
precision: float
compression: none
$stats"
expect_info "binary double" "$DATA/m23.dm.bin" "rows: 2
cols: 3
format: binary
precision: double
compression: none
$stats"
expect_info "text" "$DATA/m23.txt" "rows: 2
cols: 3
format: text
precision: none (text)
compression: none
$stats"
expect_info "compressed CM2" "$DATA/m23.cm2.bin" "rows: 2
cols: 3
format: binary
precision: float
compression: CM2 (two bytes per value)
min: -100
max: 65435
mean: 10873.8333
nan-count: 0
inf-count: 0"
expect_info "compressed CM3" "$DATA/m23.cm3.bin" "rows: 2
cols: 3
format: binary
precision: float
compression: CM3 (one byte per value)
min: -10
max: 245
mean: 43.3333333
nan-count: 0
inf-count: 0"

printf ' [\n  1 nan \n  -inf 3 ]\n' >"$TMP/nan.txt"
expect_info "NaN and inf are counted; min/max/mean skip NaN" "$TMP/nan.txt" "rows: 2
cols: 2
format: text
precision: none (text)
compression: none
min: -inf
max: 3
mean: -inf
nan-count: 1
inf-count: 1"
printf ' [\n  inf nan \n  -inf 3 ]\n' >"$TMP/infs.txt"
expect_info "+inf and -inf: the mean has no value and says so (no -nan)" "$TMP/infs.txt" "rows: 2
cols: 2
format: text
precision: none (text)
compression: none
min: -inf
max: inf
mean: n/a (+inf and -inf)
nan-count: 1
inf-count: 2"
run matrix-info --help
grep -q 'n/a (+inf and -inf)' "$TMP/err" && pass "--help says what the mean is with both infinities" ||
  fail "--help does not promise the mean shown for +inf and -inf"
printf ' [ ]\n' >"$TMP/empty.txt"
expect_info "empty matrix" "$TMP/empty.txt" "rows: 0
cols: 0
format: text
precision: none (text)
compression: none
min: n/a
max: n/a
mean: n/a
nan-count: 0
inf-count: 0"

"$BIN/matrix-info" --print-args=false - <"$DATA/m23.fm.bin" >"$TMP/out" 2>"$TMP/err"
if grep -qx "precision: float" "$TMP/out" && grep -qx "rows: 2" "$TMP/out"; then
  pass "reads stdin"
else
  fail "reading stdin: $(cat "$TMP/out" "$TMP/err")"
fi

expect_error "missing input file" matrix-info 1 "cannot open" "$TMP/no-such.mat"
expect_error "bad number" matrix-info 1 "bad number" "$DATA/bad-number.txt"
expect_error "truncated binary" matrix-info 1 "truncated" "$DATA/truncated.fm.bin"
expect_error "a vector is not a matrix" matrix-info 1 "found \"FV\"" "$DATA/v4.fv.bin"
expect_usage_errors matrix-info "$DATA/m23.txt"
expect_bare_usage "no arguments" matrix-info 1
expect_help matrix-info

finish
