// bin/copy-matrix.cc: copies a Kaldi matrix, converting between binary/text and float/double;
// reads compressed matrices too.
// SPDX-License-Identifier: Apache-2.0
#include "bin/copy-object.h"
#include "matrix/matrix.h"

namespace {

const char* kUsage =
    "Copies a matrix in Kaldi's format, converting between binary and text and between float and\n"
    "double; reads compressed (CM, CM2, CM3) matrices too. Output is float unless --double.\n"
    "\n"
    "Usage: copy-matrix [options] <matrix-in> <matrix-out>   (\"-\" is stdin / stdout)\n"
    " e.g.: copy-matrix --binary=false feats.mat - | less\n"
    "Exit status: 0 copied; 1 the input could not be read or the output written; 2 usage error.\n";

}  // namespace

int main(int argc, char* argv[]) {
  return cuctx::RunCopyTool<cuctx::Matrix>(argc, argv, {kUsage, "matrix", "FM", "DM"});
}
