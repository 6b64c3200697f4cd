# util/module.mk: Kaldi's util layer: extended filenames (Input/Output), tables (archives, scp files)
# and their holders, SimpleOptions; plus headers with Kaldi's names forwarding to base/.
util_SRCS  := fd-streambuf.cc kaldi-io.cc
util_TESTS := kaldi-io-test.cc
