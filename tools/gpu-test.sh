#!/usr/bin/env bash
# tools/gpu-test.sh: the GPU verification run. On a GPU host, runs every test binary in GPU mode and
# in CPU mode, compute-sanitizer memcheck and racecheck on the cudamatrix and cutool tests, and the
# benchmarks, and on a host with two or more GPUs tools/gpu-multi-test.sh;
# writes one log per step and a summary (last lines of the output).
# Usage: tools/gpu-test.sh [ROOT]   ROOT holds bin/ and tests/ (a build dir, or an unpacked
#        tools/gpu-bundle.sh bundle whose lib/ is added to LD_LIBRARY_PATH). Default build/release.
# Environment: OUT (log dir; default ROOT/gpu-test), SKIP_SANITIZER=1, SKIP_BENCH=1,
#   BENCH='name ...' (run only these bin/*-bench tools), BENCH_ARGS (extra arguments for each bench),
#   SANITIZE='pattern' (run the sanitizers only on cudamatrix/cutool tests whose name matches it),
#   SANITIZERS='memcheck racecheck' (the compute-sanitizer tools to run; tests see CUCTX_TEST_QUICK=1
#   there and may do fewer rounds), HEALTH_DURATION=SECONDS (also run gpu-health-check --duration=SECONDS), SKIP_SUITE=1 (skip the
#   suites, tool tests and health check: sanitizers and benchmarks only).
set -u
root=${1:-build/release}
out=${OUT:-$root/gpu-test}
mkdir -p "$out"
[ -d "$root/lib" ] && export LD_LIBRARY_PATH="$root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tools/gpu-steps.sh
source "$here/gpu-steps.sh"

nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv,noheader \
  >"$out/device.txt" 2>&1 || echo "nvidia-smi failed" >"$out/device.txt"
tests=$(find "$root/tests" -type f -perm -u+x -name '*-test' | sort)
# The device-code tests: cudamatrix/ and cutool/ (the health check's memory kernels).
cu_tests=$(echo "$tests" | grep -E '/(cudamatrix|cutool)/' || true)

step "tool cuda-gpu-available" tool.log "$root/bin/cuda-gpu-available" --use-gpu=yes
if [ "${SKIP_SUITE:-0}" != 1 ]; then
step "suite, GPU mode" suite-gpu.log env CUCTX_TEST_GPU=yes BUILD="$out" "$here/run-tests.sh" $tests
step "suite, CPU mode" suite-cpu.log env CUCTX_TEST_GPU=no BUILD="$out" "$here/run-tests.sh" $tests
# The tools' end-to-end script tests (tests/bin/*-test.sh, from the checkout) on this build's tools.
step "tool tests, GPU host" tool-tests.log env BUILD="$root" CUDA=1 "$here/run-tests.sh" \
  "$here"/../tests/bin/*-test.sh
if [ -x "$root/bin/gpu-health-check" ]; then
  step "gpu-health-check" health.log "$root/bin/gpu-health-check"
  step "gpu-health-check --json-file" health-json.log "$root/bin/gpu-health-check" \
    --json-file="$out/health.json"
  step "health.json parses" health-json-valid.log python3 -c \
    'import json, sys; d = json.load(open(sys.argv[1])); print("valid JSON, verdict", d["verdict"])' \
    "$out/health.json"
  [ -n "${HEALTH_DURATION:-}" ] && step "gpu-health-check --duration=$HEALTH_DURATION" \
    health-burn-in.log "$root/bin/gpu-health-check" --duration="$HEALTH_DURATION"
fi
step "cudamatrix, debug stride" suite-debug-stride.log env CUCTX_TEST_GPU=yes CUCTX_TEST_DEBUG_STRIDE=1 \
  BUILD="$out" "$here/run-tests.sh" $cu_tests
fi
[ -n "${SANITIZE:-}" ] && cu_tests=$(echo "$cu_tests" | grep -E "$SANITIZE" || true)
if [ "${SKIP_SANITIZER:-0}" != 1 ] && command -v compute-sanitizer >/dev/null; then
  for tool in ${SANITIZERS:-memcheck racecheck}; do
    for t in $cu_tests; do
      extra=""
      [ $tool = memcheck ] && extra="--leak-check full"
      # The caching allocator would hide out-of-bounds accesses inside its regions, so it passes
      # every call straight to CUDA here. API errors are not reported: the tests provoke some on
      # purpose (out-of-memory recovery) and check every status themselves.
      step "$tool $(basename "$t")" "$tool-$(basename "$t").log" env CUCTX_TEST_GPU=yes CUCTX_TEST_QUICK=1 \
        CUCTX_CUDA_CACHE_MEMORY=false compute-sanitizer --tool $tool $extra \
        --report-api-errors no --error-exitcode 86 "$t" --gtest_brief=1
    done
  done
fi
if [ "${SKIP_BENCH:-0}" != 1 ]; then
  for b in "$root"/bin/*-bench; do
    name=$(basename "$b")
    [ -n "${BENCH:-}" ] && ! [[ " $BENCH " == *" $name "* ]] && continue
    # shellcheck disable=SC2086
    [ -x "$b" ] && step "bench $name" "bench-$name.log" "$b" ${BENCH_ARGS:-}
  done
fi

# Two or more GPUs: the multi-device and NCCL part (its own summary in $out/multi).
if [ "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')" -ge 2 ]; then
  step "several GPUs (gpu-multi-test)" multi.log env OUT="$out/multi" "$here/gpu-multi-test.sh" "$root"
fi

echo "device: $(cat "$out/device.txt")"
echo "revision: $(cat "$root/REVISION" 2>/dev/null || git rev-parse --short HEAD 2>/dev/null)"
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
! grep -q FAIL "$out/summary.txt"
