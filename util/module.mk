# util/module.mk: Kaldi's util layer: extended filenames (Input/Output), tables (archives, scp files)
# and their holders, SimpleOptions, stl-utils.h; plus headers with Kaldi's names forwarding to base/.
# util/table-types.h includes cudamatrix/ (Kaldi's Cu table typedefs), so util comes after it.
util_SRCS  := fd-streambuf.cc kaldi-io.cc kaldi-holder.cc kaldi-table.cc simple-options.cc
util_TESTS := kaldi-io-test.cc kaldi-table-test.cc kaldi-table-errors-test.cc simple-options-test.cc \
              stl-utils-test.cc
