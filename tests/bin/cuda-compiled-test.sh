#!/usr/bin/env bash
# tests/bin/cuda-compiled-test.sh: bin/cuda-compiled answers 0 in a CUDA build and 1 in a CUDA=0
# build, and bin/cuda-gpu-available keeps its documented exit codes on the shared tool frame.
# Run by `make test` (which passes CUDA).
source "$(dirname "$0")/tool-test-lib.sh"
: "${CUDA:?CUDA must be 0 or 1 (make test sets it)}"

run cuda-compiled
if [ "$CUDA" = 1 ]; then expect_rc "cuda-compiled in a CUDA build" 0; else
  expect_rc "cuda-compiled in a CUDA=0 build" 1
fi
if [ ! -s "$TMP/out" ] && [ ! -s "$TMP/err" ]; then pass "cuda-compiled prints nothing"; else
  fail "cuda-compiled printed: $(cat "$TMP/out" "$TMP/err")"
fi
expect_error "cuda-compiled takes no arguments" cuda-compiled 2 "expected 0 positional" x
expect_error "cuda-compiled: unknown option" cuda-compiled 2 "unknown option" --bogus
expect_help cuda-compiled

# cuda-gpu-available: 0 GPU works, 1 built without CUDA, 2 usage, 3 no usable GPU.
run cuda-gpu-available --use-gpu=yes
if [ "$CUDA" = 0 ]; then
  expect_rc "cuda-gpu-available in a CUDA=0 build" 1
elif [ "$rc" -eq 0 ]; then
  pass "cuda-gpu-available: a GPU works"
else
  expect_rc "cuda-gpu-available --use-gpu=yes without a GPU" 3
fi
run cuda-gpu-available --use-gpu=no
expect_rc "cuda-gpu-available --use-gpu=no (CPU check)" "$([ "$CUDA" = 1 ] && echo 0 || echo 1)"
grep -q "check: .*OK" "$TMP/out" && pass "the CPU check passed" || fail "no passing check line"
expect_error "cuda-gpu-available: bad --use-gpu" cuda-gpu-available 2 "invalid value 'x'" --use-gpu=x
expect_error "cuda-gpu-available: an argument" cuda-gpu-available 2 "expected 0 positional" x
expect_help cuda-gpu-available --use-gpu --cuda-cache-memory

finish
