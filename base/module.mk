# base/module.mk: logging and errors, options, timing, randomness, Kaldi-format I/O primitives.
base_SRCS  := error.cc io-funcs.cc math-utils.cc parse-options.cc random.cc text-utils.cc timer.cc \
              config-line.cc utils.cc pickle-writer.cc
base_TESTS := error-test.cc io-funcs-test.cc math-utils-test.cc parse-options-test.cc \
              random-test.cc text-utils-test.cc timer-test.cc kaldi-names-test.cc \
              config-line-test.cc utils-test.cc
