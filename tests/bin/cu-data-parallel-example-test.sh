#!/usr/bin/env bash
# tests/bin/cu-data-parallel-example-test.sh: bin/cu-data-parallel-example: --help and usage
# errors everywhere; with CUCTX_TEST_GPU=yes and at least 2 visible GPUs, the threads mode on two
# GPUs and the processes mode with two processes sharing an id file, each of which must report OK
# and exit 0. Run by `make test` with BUILD set (exit 0 pass, 77 skip, else fail); by hand:
#   CUCTX_TEST_GPU=yes BUILD=build/release bash tests/bin/cu-data-parallel-example-test.sh
set -u
tool_name=cu-data-parallel-example
if [ ! -x "${BUILD:-build/release}/bin/$tool_name" ]; then
  echo "skipped: ${BUILD:-build/release}/bin/$tool_name not built (CUDA tools only)"
  exit 77
fi
source "$(dirname "$0")/tool-test-lib.sh"

expect_help "$tool_name" --gpus --nranks --rank --nccl-id-file --batch --steps --double
expect_usage_errors "$tool_name"
expect_error "batch not divisible by the ranks" "$tool_name" 2 "not divisible by the 3 ranks" \
  --nranks=3 --rank=0 --nccl-id-file="$TMP/id" --batch=10
expect_error "rank out of range" "$tool_name" 2 "--rank must be in \[0, 2\), got 2" \
  --nranks=2 --rank=2 --nccl-id-file="$TMP/id"
expect_error "no id source" "$tool_name" 2 "exactly one of --nccl-id-file and --nccl-id-env" \
  --nranks=2 --rank=0
expect_error "--rank without --nranks" "$tool_name" 2 "need --nranks" --rank=1
expect_error "bad --steps" "$tool_name" 2 "--steps must be >= 1" --steps=0

run "$tool_name" --print-gpu-count
expect_rc "--print-gpu-count" 0
gpus=$(cat "$TMP/out")
if [ "$gpus" = 0 ]; then
  expect_error "no GPU visible" "$tool_name" 3 "no GPU visible"
fi
if [ "${CUCTX_TEST_GPU:-optional}" != yes ] || [ "$gpus" -lt 2 ]; then
  if [ "$failures" -ne 0 ]; then finish; fi
  echo "skipped: the multi-GPU runs need CUCTX_TEST_GPU=yes and 2 GPUs ($gpus visible)"
  exit 77
fi

small=(--batch=512 --in=96 --out=40 --steps=2)
for precision in "" --double; do
  run "$tool_name" --gpus=2 "${small[@]}" $precision
  expect_rc "threads mode on 2 GPUs ${precision:-(float)}" 0
  if grep -q "whole batch).*: OK$" "$TMP/out"; then pass "threads mode reports OK"; else
    fail "threads mode output: $(cat "$TMP/out" "$TMP/err")"
  fi
done

# Two processes, rank 0 writing the id file that rank 1 waits for; both must exit 0.
id_file=$TMP/nccl-id
for r in 0 1; do
  timeout 300 "$BIN/$tool_name" --print-args=false --nranks=2 --rank=$r --nccl-id-file="$id_file" \
    --id-timeout=120 "${small[@]}" >"$TMP/rank$r.out" 2>&1 &
  eval "pid$r=\$!"
done
wait "$pid0"
rc0=$?
wait "$pid1"
rc1=$?
for r in 0 1; do
  eval "rc=\$rc$r"
  expect_rc "processes mode, rank $r" 0
  if grep -q "^rank $r: gradient vs one GPU.*: OK$" "$TMP/rank$r.out"; then
    pass "rank $r reports OK"
  else
    fail "rank $r output: $(cat "$TMP/rank$r.out")"
  fi
done
if [ ! -e "$id_file" ]; then pass "rank 0 removed the id file"; else fail "the id file is left"; fi
finish
