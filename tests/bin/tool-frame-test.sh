#!/usr/bin/env bash
# tests/bin/tool-frame-test.sh: what cutool's RunTool gives every tool in $BUILD/bin: --version,
# --help (exit 0, device options in their own blocks), device and allocator options checked when
# parsed (exit 2, no GPU needed), one exit code (3) for "no usable GPU", a no-driver message that
# says so, and source locations only at --verbose >= 1. Run by `make test` (which passes CUDA).
source "$(dirname "$0")/tool-test-lib.sh"
: "${CUDA:?CUDA must be 0 or 1 (make test sets it)}"

tools=()
for t in "$BIN"/*; do [ -f "$t" ] && [ -x "$t" ] && tools+=("$(basename "$t")"); done
least=$([ "$CUDA" = 1 ] && echo 13 || echo 8)  # the CUDA build adds the benchmarks
[ "${#tools[@]}" -ge "$least" ] && pass "${#tools[@]} tools in $BIN" ||
  fail "only ${#tools[@]} tools in $BIN (expected at least $least)"

# Tools that take --use-gpu and the --cuda-* options.
gpu_tools=()
for tool in "${tools[@]}"; do
  expect_version "$tool"
  run "$tool" --help
  expect_rc "$tool --help" 0
  grep -q -- "^  --use-gpu=" "$TMP/err" && gpu_tools+=("$tool")
done
[ "${#gpu_tools[@]}" -ge 3 ] && pass "GPU tools: ${gpu_tools[*]}" || fail "GPU tools: ${gpu_tools[*]}"

for tool in "${gpu_tools[@]}"; do
  # --help: every --use-gpu/--cuda-* option sits under "Device options:" or "Device memory
  # options:", after the tool's own "Options:" block and before "Standard options:".
  run "$tool" --help
  misplaced=$(awk '/^[A-Z][A-Za-z ]*:$/ { block = $0 }
                   /^  --(use-gpu|cuda-)/ && block != "Device options:" && block != "Device memory options:" { print block " " $1 }' "$TMP/err")
  order=$(grep -E '^(Options|Device options|Device memory options|Standard options):$' "$TMP/err" | tr '\n' '|')
  if [ -z "$misplaced" ] && [[ "$order" == *"Device options:|Device memory options:|Standard options:|" ]]; then
    pass "$tool --help: device options in their own blocks ($order)"
  else
    fail "$tool --help: blocks '$order', misplaced: $misplaced"
  fi
  # Bad device/allocator values are usage errors found when parsing, with or without a GPU.
  expect_error "$tool: three bad allocator options" "$tool" 2 \
    "invalid value 'foo' for option --cuda-allocator: expected caching or async" \
    --cuda-allocator=foo --cuda-memory-proportion=-1 --cuda-region-quantum-mb=-5
  expect_error "$tool: --cuda-memory-proportion=-1" "$tool" 2 \
    "invalid value -1 for option --cuda-memory-proportion" --cuda-memory-proportion=-1
  expect_error "$tool: --cuda-region-quantum-mb=-5" "$tool" 2 \
    "invalid value -5 for option --cuda-region-quantum-mb" --cuda-region-quantum-mb=-5
  expect_error "$tool: --cuda-memory-proportion=nan" "$tool" 2 \
    "invalid value 'nan' for option --cuda-memory-proportion: expected a finite float" \
    --cuda-memory-proportion=nan
done

# No usable GPU (CUDA_VISIBLE_DEVICES= hides every device, so this holds on GPU hosts too): exit 3
# from every tool that needs one, one line, no source location at the default verbosity.
no_gpu() {
  local what=$1 tool=$2
  shift 2
  [ -x "$BIN/$tool" ] || return 0
  CUDA_VISIBLE_DEVICES= "$BIN/$tool" --print-args=false "$@" >"$TMP/out" 2>"$TMP/err"
  rc=$?
  if [ "$rc" -ne 3 ]; then
    fail "$what: exit $rc, expected 3; stderr: $(head -c 300 "$TMP/err")"
  elif grep -q " \[in .* at .*:[0-9]*\]" "$TMP/out" "$TMP/err"; then
    fail "$what: source location at --verbose=0: $(cat "$TMP/out" "$TMP/err")"
  else
    pass "$what (exit 3: $(tail -n 1 "$TMP/err"))"
  fi
}
for bench in cu-matrix-bench cu-graph-bench cu-allocator-bench cu-memory-plan-bench \
  cu-kaldi-speed-bench cu-data-parallel-example nccl-allreduce-bench; do
  no_gpu "$bench without a GPU" "$bench"
done
no_gpu "gpu-health-check without a GPU" gpu-health-check
no_gpu "matrix-multiply --use-gpu=yes without a GPU" matrix-multiply --use-gpu=yes \
  "$DATA/a23.txt" "$DATA/b32.fm.bin" "$TMP/c.mat"
if [ "$CUDA" = 1 ]; then
  no_gpu "cuda-gpu-available without a GPU" cuda-gpu-available
else
  run cuda-gpu-available
  expect_rc "cuda-gpu-available in a CUDA=0 build (built without CUDA)" 1
fi

# Source locations appear at --verbose=1.
CUDA_VISIBLE_DEVICES= "$BIN/matrix-multiply" --print-args=false --verbose=1 --use-gpu=yes \
  "$DATA/a23.txt" "$DATA/b32.fm.bin" "$TMP/c.mat" >"$TMP/out" 2>"$TMP/err"
grep -q "^matrix-multiply: no usable GPU: .* \[in SelectGpuId at .*:[0-9]*\]" "$TMP/err" &&
  pass "--verbose=1 keeps the source location" ||
  fail "--verbose=1: no source location in '$(cat "$TMP/err")'"

CUDA_VISIBLE_DEVICES= "$BIN/gpu-health-check" --print-args=false --verbose=1 >"$TMP/out" 2>"$TMP/err"
grep -q "no usable GPU: .* \[in SelectGpuId at .*:[0-9]*\]" "$TMP/out" &&
  pass "gpu-health-check --verbose=1 keeps the source location" ||
  fail "gpu-health-check --verbose=1: no source location in '$(cat "$TMP/out")'"

# With no NVIDIA driver at all, the reason says so (not CUDA's "driver version is insufficient").
if [ "$CUDA" = 1 ] && [ ! -e /proc/driver/nvidia/version ]; then
  run cuda-gpu-available
  if [ "$rc" -eq 3 ] && grep -q "no NVIDIA driver found" "$TMP/out" &&
    ! grep -q "insufficient" "$TMP/out" "$TMP/err"; then
    pass "no driver: $(grep 'GPU: none' "$TMP/out")"
  else
    fail "no driver: exit $rc, '$(cat "$TMP/out" "$TMP/err")'"
  fi
  expect_error "matrix-multiply: no driver" matrix-multiply 3 "no usable GPU: .*no NVIDIA driver found" \
    --use-gpu=yes "$DATA/a23.txt" "$DATA/b32.fm.bin" "$TMP/c.mat"
fi

finish
