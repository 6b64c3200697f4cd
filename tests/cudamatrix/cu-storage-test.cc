// tests/cudamatrix/cu-storage-test.cc: CopyStorage2D (the containers' same-device copy) over
// alignments, pitches and both of its GPU paths (the small-copy kernel and the runtime's copy).
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/internal/cu-storage.h"

#include "cudamatrix/cu-copy.h"
#include "tests/testing.h"

#include <cstdint>
#include <cstring>
#include <gtest/gtest.h>
#include <vector>

namespace cuctx {
namespace {

constexpr unsigned char kSentinel = 0x5a;

// One copy case: `rows` rows of `row_bytes`, source and destination starting `src_offset` and
// `dst_offset` bytes into their storage, rows `src_pitch` and `dst_pitch` bytes apart.
struct CopyCase {
  size_t row_bytes, rows, src_pitch, dst_pitch, src_offset, dst_offset;
};

// Runs CopyStorage2D on storage from AllocStorage (device memory in GPU mode) and checks every
// byte of the destination storage: the copied rows equal the source, the rest keeps its sentinel.
void CheckCopy(const CopyCase& c, test::Rng* rng) {
  SCOPED_TRACE(::testing::Message()
               << "row_bytes " << c.row_bytes << ", rows " << c.rows << ", pitches " << c.src_pitch
               << "/" << c.dst_pitch << ", offsets " << c.src_offset << "/" << c.dst_offset);
  const size_t src_bytes = c.src_offset + (c.rows - 1) * c.src_pitch + c.row_bytes;
  const size_t dst_bytes = c.dst_offset + (c.rows - 1) * c.dst_pitch + c.row_bytes + 64;
  std::vector<unsigned char> src_host(src_bytes), dst_host(dst_bytes, kSentinel);
  for (unsigned char& b : src_host) b = static_cast<unsigned char>(rng->Engine()());
  internal::ScopedStorage src(src_bytes), dst(dst_bytes);
  CopyHostToDevice(src.Data(), src_host.data(), src_bytes);
  CopyHostToDevice(dst.Data(), dst_host.data(), dst_bytes);

  internal::CopyStorage2D(static_cast<char*>(dst.Data()) + c.dst_offset, c.dst_pitch,
                          static_cast<const char*>(src.Data()) + c.src_offset, c.src_pitch,
                          c.row_bytes, c.rows);

  std::vector<unsigned char> got(dst_bytes);
  CopyDeviceToHost(got.data(), dst.Data(), dst_bytes);
  std::vector<unsigned char> want(dst_bytes, kSentinel);
  for (size_t r = 0; r < c.rows; ++r)
    std::memcpy(&want[c.dst_offset + r * c.dst_pitch], &src_host[c.src_offset + r * c.src_pitch],
                c.row_bytes);
  for (size_t i = 0; i < dst_bytes; ++i)
    ASSERT_EQ(got[i], want[i]) << "destination byte " << i << " differs";
}

TEST(CuStorageTest, CopyStorage2DOneRowAllAlignments) {
  test::Rng rng = test::MakeRng();
  // Offsets and lengths that allow 16-, 8-, 4- and 1-byte units.
  for (size_t offset : {0, 1, 4, 8, 16})
    for (size_t bytes : {1, 3, 4, 8, 16, 40, 4096, 4100, 65537})
      CheckCopy({bytes, 1, 0, 0, offset, offset}, &rng);
  // Source and destination aligned differently.
  CheckCopy({4096, 1, 0, 0, 0, 4}, &rng);
  CheckCopy({4096, 1, 0, 0, 8, 0}, &rng);
}

TEST(CuStorageTest, CopyStorage2DPitchedRows) {
  test::Rng rng = test::MakeRng(1);
  CheckCopy({1024, 33, 1024, 1024, 0, 0}, &rng);  // contiguous
  CheckCopy({1000, 33, 1024, 1536, 0, 0}, &rng);  // row length not a 16-byte multiple
  CheckCopy({1024, 7, 1040, 2048, 16, 0}, &rng);  // pitches differ
  CheckCopy({12, 100, 20, 12, 4, 0}, &rng);       // 4-byte units
  CheckCopy({7, 5, 9, 11, 1, 3}, &rng);           // bytes only
  CheckCopy({8, 70000, 8, 16, 0, 0}, &rng);       // many short rows
  CheckCopy({4, 1000, 256, 4, 0, 0}, &rng);       // a pitched column
}

TEST(CuStorageTest, CopyStorage2DLargeCopiesUseTheSameContract) {
  test::Rng rng = test::MakeRng(2);
  // Above the small-copy limit (1 MiB) the GPU path is the runtime's copy.
  CheckCopy({(size_t{1} << 20) + 16, 1, 0, 0, 0, 0}, &rng);
  CheckCopy({4096, 300, 4608, 4096, 0, 0}, &rng);
}

}  // namespace
}  // namespace cuctx
