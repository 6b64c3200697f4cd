#!/usr/bin/env bash
# tests/bin/copy-vector-test.sh: end-to-end checks of bin/copy-vector against golden files in
# tests/bin/data (made by make-golden.py from the Kaldi format). Run by `make test`.
source "$(dirname "$0")/tool-test-lib.sh"

run copy-vector "$DATA/v4.txt" "$TMP/a.bin"
expect_rc "text -> binary float" 0
expect_same "text -> binary float matches the golden FV file" "$TMP/a.bin" "$DATA/v4.fv.bin"
run copy-vector --binary=false "$DATA/v4.fv.bin" "$TMP/a.txt"
expect_same "binary float -> text matches the golden text" "$TMP/a.txt" "$DATA/v4.txt"
run copy-vector --double "$DATA/v4.fv.bin" "$TMP/d.bin"
expect_same "float -> double (--double) matches the golden DV file" "$TMP/d.bin" "$DATA/v4.dv.bin"
run copy-vector "$DATA/v4.dv.bin" "$TMP/f.bin"
expect_same "double -> float matches the golden FV file" "$TMP/f.bin" "$DATA/v4.fv.bin"
run copy-vector --binary=false --scale=-1 "$DATA/v4.dv.bin" "$TMP/s.txt"
expect_same "--scale=-1" "$TMP/s.txt" "$DATA/v4-scaled.txt"

run copy-vector --double --binary=false "$DATA/v4.dv.bin" "$TMP/r.txt"
run copy-vector --double "$TMP/r.txt" "$TMP/r.bin"
expect_same "double binary -> text -> binary round trip" "$TMP/r.bin" "$DATA/v4.dv.bin"

"$BIN/copy-vector" --print-args=false --binary=false - - <"$DATA/v4.fv.bin" >"$TMP/p.txt" 2>"$TMP/err"
rc=$?
expect_rc "stdin -> stdout" 0
expect_same "binary on stdin -> text on stdout" "$TMP/p.txt" "$DATA/v4.txt"

expect_error "missing input file" copy-vector 1 "cannot open" "$TMP/no-such.vec" "$TMP/x"
expect_error "a matrix is not a vector" copy-vector 1 "found \"FM\"" "$DATA/m23.fm.bin" "$TMP/x"
expect_error "a text matrix is not a vector" copy-vector 1 "newline inside a text vector" \
  "$DATA/m23.txt" "$TMP/x"
expect_error "truncated binary" copy-vector 1 "truncated|expected" "$DATA/truncated.fm.bin" "$TMP/x"

expect_usage_errors copy-vector "$DATA/v4.txt" "$TMP/x"
expect_error "bad --scale value" copy-vector 2 "invalid value '1x' for option --scale" \
  --scale=1x "$DATA/v4.txt" "$TMP/x"
expect_error "--scale=inf" copy-vector 2 "invalid value 'inf' for option --scale: expected a finite float" \
  --scale=inf "$DATA/v4.txt" "$TMP/x"
expect_bare_usage "no arguments" copy-vector 2
expect_help copy-vector --binary --scale --double

finish
