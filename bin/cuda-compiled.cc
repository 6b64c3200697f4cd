// bin/cuda-compiled.cc: exit status 0 when cuctx was built with CUDA, 1 when not (as Kaldi's).
// SPDX-License-Identifier: Apache-2.0
#include "cutool/tool.h"

namespace {

const char* kUsage =
    "Tells scripts whether cuctx was built with CUDA support; prints nothing (as Kaldi's tool).\n"
    "\n"
    "Usage: cuda-compiled\n"
    " e.g.: if cuda-compiled; then echo built with CUDA; fi\n"
    "Exit status: 0 built with CUDA; 1 built without (make CUDA=0); 2 usage error.\n";

}  // namespace

int main(int argc, char* argv[]) {
  return cuctx::RunTool(argc, argv, cuctx::ToolSpec{kUsage, 0, 0}, nullptr,
                        [](const cuctx::ToolArgs&) { return CUCTX_HAVE_CUDA ? 0 : 1; });
}
