// bin/copy-vector.cc: copies a Kaldi vector or a table of them, converting between binary/text and float/double.
// SPDX-License-Identifier: Apache-2.0
#include "bin/copy-object.h"
#include "matrix/vector.h"

namespace {

const char* kUsage =
    "Copies a vector in Kaldi's format, converting between binary and text and between float and\n"
    "double. Output is float unless --double.\n"
    "\n"
    "Usage: copy-vector [options] <vector-in-rxfilename> <vector-out-wxfilename>\n"
    "   or: copy-vector [options] <vector-in-rspecifier> <vector-out-wspecifier>\n"
    "rxfilenames: a file, \"-\" (stdin), \"command |\", \"file:offset\"; wxfilenames: a file,\n"
    "\"-\" (stdout), \"| command\". Specifiers: \"ark:in.ark\", \"scp:ivectors.scp\", "
    "\"ark,t:-\".\n"
    " e.g.: copy-vector --binary=false weights.vec -\n"
    "       copy-vector ark:ivectors.ark ark,t:-\n"
    "Exit status: 0 copied; 1 the input could not be read or the output written; 2 usage error.\n";

}  // namespace

int main(int argc, char* argv[]) {
  return cuctx::RunCopyTool<cuctx::Vector>(argc, argv, {kUsage, "vector", "FV", "DV"});
}
