# util/module.mk: Kaldi's util layer where programs need it. Header-only so far (stl-utils.h and
# the forwarding headers with Kaldi's names); its archive is empty until sources arrive.
util_SRCS  :=
util_TESTS := stl-utils-test.cc
