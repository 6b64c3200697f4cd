# tests/module.mk: support code linked into every test binary, and script tests run by `make test`.
tests_SUPPORT := test-main.cc testing.cc
SCRIPT_TESTS  := tests/install-test.sh
SCRIPT_TESTS  += tests/bin/gpu-health-check-test.sh
