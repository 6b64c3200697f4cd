// bin/copy-matrix.cc: copies a Kaldi matrix or a table of them, converting between binary/text and float/double;
// reads compressed matrices too.
// SPDX-License-Identifier: Apache-2.0
#include "bin/copy-object.h"
#include "matrix/matrix.h"

namespace {

const char* kUsage =
    "Copies a matrix in Kaldi's format, converting between binary and text and between float and\n"
    "double; reads compressed (CM, CM2, CM3) matrices too. Output is float unless --double.\n"
    "\n"
    "Usage: copy-matrix [options] <matrix-in-rxfilename> <matrix-out-wxfilename>\n"
    "   or: copy-matrix [options] <matrix-in-rspecifier> <matrix-out-wspecifier>\n"
    "rxfilenames: a file, \"-\" (stdin), \"command |\", \"file:offset\"; wxfilenames: a file,\n"
    "\"-\" (stdout), \"| command\". Specifiers: \"ark:in.ark\", \"scp:feats.scp\", \"ark,t:-\",\n"
    "\"ark,scp:out.ark,out.scp\" (util/kaldi-table.h lists the options).\n"
    " e.g.: copy-matrix --binary=false feats.mat - | less\n"
    "       copy-matrix ark:feats.ark ark,t:-\n"
    "       copy-matrix scp:feats.scp ark,scp:out.ark,out.scp\n"
    "Exit status: 0 copied; 1 the input could not be read or the output written; 2 usage error.\n";

}  // namespace

int main(int argc, char* argv[]) {
  return cuctx::RunCopyTool<cuctx::Matrix>(argc, argv, {kUsage, "matrix", "FM", "DM"});
}
