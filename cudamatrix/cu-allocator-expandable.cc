// cudamatrix/cu-allocator-expandable.cc: expandable (VMM) regions of CuMemoryAllocator.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/internal/cu-allocator-impl.h"

namespace cuctx {
namespace internal {}  // namespace internal
}  // namespace cuctx
