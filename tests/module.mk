# tests/module.mk: support code linked into every test binary, and script tests run by `make test`.
tests_SUPPORT := test-main.cc testing.cc
SCRIPT_TESTS  := tests/install-test.sh tests/cmake-test.sh tests/port-from-kaldi-test.sh
SCRIPT_TESTS  += $(addprefix tests/bin/,copy-matrix-test.sh copy-vector-test.sh matrix-info-test.sh \
                   matrix-multiply-test.sh cuda-compiled-test.sh gpu-health-check-test.sh)
SCRIPT_TESTS  += tests/bin/cu-memory-plan-test.sh
SCRIPT_TESTS  += tests/bin/cu-data-parallel-example-test.sh
SCRIPT_TESTS  += tests/bin/tool-frame-test.sh tests/bin/cu-kaldi-speed-bench-test.sh
SCRIPT_TESTS  += tests/bin/cu-allocator-soak-test.sh
