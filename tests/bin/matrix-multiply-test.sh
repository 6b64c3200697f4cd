#!/usr/bin/env bash
# tests/bin/matrix-multiply-test.sh: end-to-end checks of bin/matrix-multiply: known products (in
# both transposition modes), where it says it ran, --use-gpu handling, and its errors. Run by
# `make test`; on a GPU host the default --use-gpu=optional runs the product on the GPU.
source "$(dirname "$0")/tool-test-lib.sh"

"$BIN/cuda-gpu-available" --print-args=false --use-gpu=yes >/dev/null 2>&1
have_gpu=$([ $? -eq 0 ] && echo 1 || echo 0)

run matrix-multiply --binary=false "$DATA/a23.txt" "$DATA/b32.fm.bin" "$TMP/c.txt"
expect_rc "A B" 0
expect_same "A B equals the known product" "$TMP/c.txt" "$DATA/ab22.txt"
if [ "$have_gpu" -eq 1 ]; then where="on GPU [0-9]+ \("; else where="on CPU \("; fi
if grep -qE "^matrix-multiply: C \(2 x 2\) = A \(2 x 3\) \* B \(3 x 2\) $where.*product [0-9.]+ ms" \
  "$TMP/err"; then
  pass "says where it ran and how long it took: $(tail -n 1 "$TMP/err")"
else
  fail "stderr does not say where it ran ($where): $(cat "$TMP/err")"
fi
run matrix-multiply --binary=false --transpose-b "$DATA/a23.txt" "$DATA/bt23.txt" "$TMP/c.txt"
expect_same "A (B^T)^T with --transpose-b" "$TMP/c.txt" "$DATA/ab22.txt"
run matrix-multiply --binary=false --transpose-a --transpose-b "$DATA/at32.txt" "$DATA/bt23.txt" \
  "$TMP/c.txt"
expect_same "(A^T)^T (B^T)^T with both transposed" "$TMP/c.txt" "$DATA/ab22.txt"
run matrix-multiply --use-gpu=no "$DATA/a23.txt" "$DATA/b32.fm.bin" "$TMP/c.bin"
grep -qE "on CPU \(--use-gpu=no\)" "$TMP/err" && pass "--use-gpu=no runs on the CPU" ||
  fail "--use-gpu=no: stderr does not say 'on CPU (--use-gpu=no)': $(cat "$TMP/err")"
run copy-matrix --binary=false "$TMP/c.bin" "$TMP/c2.txt"
expect_same "binary output (the default) on the CPU" "$TMP/c2.txt" "$DATA/ab22.txt"
"$BIN/matrix-multiply" --print-args=false --use-gpu=no --binary=false "$DATA/a23.txt" - - \
  <"$DATA/b32.fm.bin" >"$TMP/p.txt" 2>/dev/null
expect_same "B from stdin, C to stdout" "$TMP/p.txt" "$DATA/ab22.txt"

# --use-gpu=yes needs a GPU: without one it is a runtime failure (exit 1), one line.
if [ "$have_gpu" -eq 1 ]; then
  run matrix-multiply --use-gpu=yes --binary=false "$DATA/a23.txt" "$DATA/b32.fm.bin" "$TMP/g.txt"
  expect_same "--use-gpu=yes on the GPU" "$TMP/g.txt" "$DATA/ab22.txt"
else
  expect_error "--use-gpu=yes without a GPU" matrix-multiply 3 "no usable GPU: --use-gpu=yes" --use-gpu=yes \
    "$DATA/a23.txt" "$DATA/b32.fm.bin" "$TMP/g.txt"
fi
run matrix-multiply --use-gpu=no --verbose=1 "$DATA/a23.txt" "$DATA/b32.fm.bin" "$TMP/v.bin"
expect_rc "--verbose=1" 0

expect_error "inner dimensions differ" matrix-multiply 1 \
  "inner dimensions differ: A is 2 x 3, B is 2 x 3" --use-gpu=no "$DATA/a23.txt" "$DATA/a23.txt" \
  "$TMP/x"
expect_error "missing input" matrix-multiply 1 "cannot open" --use-gpu=no "$DATA/a23.txt" \
  "$TMP/no-such.mat" "$TMP/x"
expect_error "malformed input" matrix-multiply 1 "bad number" --use-gpu=no "$DATA/bad-number.txt" \
  "$DATA/b32.fm.bin" "$TMP/x"
expect_usage_errors matrix-multiply "$DATA/a23.txt" "$DATA/b32.fm.bin" "$TMP/x"
expect_error "bad --use-gpu value" matrix-multiply 2 "invalid value 'maybe' for option --use-gpu" \
  --use-gpu=maybe "$DATA/a23.txt" "$DATA/b32.fm.bin" "$TMP/x"
expect_bare_usage "two arguments" matrix-multiply 3 "$DATA/a23.txt" "$DATA/b32.fm.bin"
expect_help matrix-multiply --transpose-a --transpose-b --binary --use-gpu --cuda-memory-proportion \
  --cuda-use-tf32-compute
grep -q -- '--use-gpu=STRING .*(default: "optional")' "$TMP/err" && pass "--use-gpu defaults to optional" ||
  fail "--help does not show --use-gpu's default \"optional\""

finish
