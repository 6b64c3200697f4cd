# base/module.mk: logging and errors, options, timing, randomness, Kaldi-format I/O primitives.
base_SRCS  := $(notdir $(wildcard base/*.cc))
base_TESTS := $(notdir $(wildcard tests/base/*-test.cc))
base_DEPS  :=
