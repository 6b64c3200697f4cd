#!/usr/bin/env bash
# tools/gpu-multi-test.sh: the several-GPU part of the GPU verification run (tools/gpu-test.sh
# calls it when the host shows two or more GPUs). Runs the multi-device and NCCL tests in GPU
# mode, the data-parallel example's script test (threads and two processes), compute-sanitizer
# memcheck on the multi-device test and on the NCCL test restricted to one GPU, the all-reduce
# bench and, when PyTorch is there, the same sizes through PyTorch's NCCL backend as a reference.
# Usage: tools/gpu-multi-test.sh [ROOT]   ROOT as for gpu-test.sh (default build/release).
# Environment: OUT (log dir; default ROOT/gpu-multi-test), MAX_BYTES (bench sizes; default 1G),
#   SKIP_SANITIZER=1, SKIP_BENCH=1.
# NVLink SHARP stays off (NCCL_NVLS_ENABLE=0): on shared hosts it can take the GPUs out of service.
set -u
root=${1:-build/release}
out=${OUT:-$root/gpu-multi-test}
mkdir -p "$out"
[ -d "$root/lib" ] && export LD_LIBRARY_PATH="$root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export NCCL_NVLS_ENABLE=0
here=$(cd "$(dirname "$0")" && pwd)
max_bytes=${MAX_BYTES:-1G}
# shellcheck source=tools/gpu-steps.sh
source "$here/gpu-steps.sh"

nvidia-smi -L >"$out/device.txt" 2>&1
nvidia-smi topo -m >>"$out/device.txt" 2>&1
tests=("$root/tests/cudamatrix/cu-multi-device-test" "$root/tests/cudamatrix/cu-nccl-test")
step "multi-GPU tests, GPU mode" tests.log env CUCTX_TEST_GPU=yes BUILD="$out" \
  "$here/run-tests.sh" "${tests[@]}"
step "multi-device, no peer access" tests-nopeer.log env CUCTX_TEST_GPU=yes CUCTX_PEER_ACCESS=0 \
  BUILD="$out/nopeer" "$here/run-tests.sh" "${tests[0]}"
step "data-parallel example test" example.log env CUCTX_TEST_GPU=yes BUILD="$root" CUDA=1 \
  "$here/run-tests.sh" "$here/../tests/bin/cu-data-parallel-example-test.sh"
step "data-parallel example, 2 GPUs" example-run.log "$root/bin/cu-data-parallel-example" \
  --gpus=2 --steps=20
if [ "${SKIP_SANITIZER:-0}" != 1 ]; then
  san=(compute-sanitizer --tool memcheck --leak-check full --report-api-errors no --error-exitcode 1)
  step "memcheck multi-device" memcheck-multi.log env CUCTX_TEST_GPU=yes CUCTX_TEST_QUICK=1 \
    CUCTX_CUDA_CACHE_MEMORY=false "${san[@]}" "${tests[0]}" --gtest_brief=1
  step "memcheck nccl (1 GPU)" memcheck-nccl.log env CUDA_VISIBLE_DEVICES=0 CUCTX_TEST_GPU=yes \
    CUCTX_TEST_QUICK=1 CUCTX_CUDA_CACHE_MEMORY=false "${san[@]}" "${tests[1]}" --gtest_brief=1
fi
if [ "${SKIP_BENCH:-0}" != 1 ]; then
  step "nccl-allreduce-bench" bench.log "$root/bin/nccl-allreduce-bench" --max-bytes="$max_bytes" \
    --csv-out="$out/bench.csv"
  if python3 -c 'import torch' 2>/dev/null; then
    step "PyTorch NCCL reference" torch.log python3 "$here/nccl-torch-busbw.py" \
      --max-bytes "$max_bytes"
  fi
fi
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
! grep -q FAIL "$out/summary.txt"
