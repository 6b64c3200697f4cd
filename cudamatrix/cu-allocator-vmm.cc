// cudamatrix/cu-allocator-vmm.cc: the VMM upstream of CuMemoryAllocator (expandable regions).
// SPDX-License-Identifier: Apache-2.0
//
// PLACEHOLDER while the driver-API implementation is written: always reports VMM unavailable.
#include "base/error.h"
#include "cudamatrix/cu-allocator-upstream.h"

namespace cuctx {

std::unique_ptr<CuAllocatorUpstream> NewVmmAllocatorUpstream(std::function<void()>,
                                                             std::string* why_not) {
  if (why_not != nullptr) *why_not = "not implemented yet";
  return nullptr;
}

}  // namespace cuctx
