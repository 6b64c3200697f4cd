// tests/cudamatrix/cu-nccl-test.cc: CuNcclUniqueId (hex, files, environment) everywhere; with a
// GPU, every CuNcclComm collective on one rank and, with two or more GPUs, on one thread per GPU,
// checked against the same reductions on the CPU.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-nccl.h"

#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"
#include "tests/cu-matrix-testing.h"
#include "tests/matrix-testing.h"
#include "tests/testing.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace cuctx {
namespace {

using test::Layout;
using test::LayoutCuMatrix;
using test::ToHost;

// A path under gtest's temporary directory that no other test process uses.
std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "cu-nccl-test-" + std::to_string(getpid()) + "-" + name;
}

// 256 random hex digits, upper and lower case mixed.
std::string RandomHex(test::Rng* rng) {
  const char* digits = "0123456789abcdefABCDEF";
  std::string hex(2 * CuNcclUniqueId::kBytes, '0');
  for (char& c : hex) c = digits[rng->Int(0, 21)];
  return hex;
}

// Reads `path` with a short timeout, expecting an error, with the log silenced.
std::string ReadError(const std::string& path) {
  test::QuietLog quiet;
  return test::ErrorText([&] { CuNcclUniqueId::ReadFromFile(path, 0.05); });
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// ---- CuNcclUniqueId: plain host code, tested in every build ---------------------------------

TEST(CuNcclUniqueIdTest, HexRoundTripKeepsEveryByte) {
  test::Rng rng = test::MakeRng();
  for (int round = 0; round < 20; ++round) {
    const std::string hex = RandomHex(&rng);
    const CuNcclUniqueId id = CuNcclUniqueId::FromHex(hex);
    EXPECT_EQ(id.ToHex(), Lower(hex));
    EXPECT_EQ(CuNcclUniqueId::FromHex(id.ToHex()), id);
    for (int i = 0; i < CuNcclUniqueId::kBytes; ++i)
      ASSERT_EQ(id.Bytes()[i], std::stoi(hex.substr(2 * i, 2), nullptr, 16)) << "byte " << i;
  }
  EXPECT_EQ(CuNcclUniqueId().ToHex(), std::string(256, '0'));
  EXPECT_NE(CuNcclUniqueId::FromHex(std::string(255, '0') + "1"), CuNcclUniqueId());
}

TEST(CuNcclUniqueIdTest, BadHexThrowsNamingTheProblem) {
  test::ExpectErrorContaining([] { CuNcclUniqueId::FromHex("abc"); },
                              "256 hex digits (128 bytes), got 3 characters");
  test::ExpectErrorContaining([] { CuNcclUniqueId::FromHex(""); }, "got 0 characters");
  test::ExpectErrorContaining([] { CuNcclUniqueId::FromHex(std::string(258, 'a')); },
                              "got 258 characters");
  std::string bad(256, '7');
  bad[41] = 'g';
  test::ExpectErrorContaining([&] { CuNcclUniqueId::FromHex(bad); }, "character 41 is 'g'");
  bad[41] = '7';
  bad[0] = ' ';
  test::ExpectErrorContaining([&] { CuNcclUniqueId::FromHex(bad); }, "character 0 is ' '");
}

TEST(CuNcclUniqueIdTest, FileRoundTripLeavesNoTemporary) {
  test::Rng rng = test::MakeRng(1);
  const std::string path = TempPath("id");
  const CuNcclUniqueId id = CuNcclUniqueId::FromHex(RandomHex(&rng));
  id.WriteToFile(path);
  EXPECT_EQ(CuNcclUniqueId::ReadFromFile(path, 1.0), id);
  EXPECT_FALSE(std::ifstream(path + ".tmp." + std::to_string(getpid())).good());
  // A second write replaces the first.
  const CuNcclUniqueId other = CuNcclUniqueId::FromHex(RandomHex(&rng));
  other.WriteToFile(path);
  EXPECT_EQ(CuNcclUniqueId::ReadFromFile(path, 1.0), other);
  std::remove(path.c_str());
}

TEST(CuNcclUniqueIdTest, ReadFromFileWaitsForTheWriter) {
  test::Rng rng = test::MakeRng(2);
  const std::string path = TempPath("late");
  std::remove(path.c_str());
  const CuNcclUniqueId id = CuNcclUniqueId::FromHex(RandomHex(&rng));
  CuNcclUniqueId read;
  std::string error;
  // The reader polls before the file exists; the writer then writes it (no sleeps needed).
  std::thread reader([&] {
    try {
      read = CuNcclUniqueId::ReadFromFile(path, 30.0);
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
  id.WriteToFile(path);
  reader.join();
  EXPECT_EQ(error, "");
  EXPECT_EQ(read, id);
  std::remove(path.c_str());
}

TEST(CuNcclUniqueIdTest, ReadFromFileTimesOutNamingThePath) {
  const std::string path = TempPath("never-written");
  std::remove(path.c_str());
  const std::string text = ReadError(path);
  EXPECT_TRUE(test::Contains(text, path));
  EXPECT_TRUE(test::Contains(text, "did not appear within 0.05 s"));
}

TEST(CuNcclUniqueIdTest, ReadFromFileRejectsBadContent) {
  const std::string path = TempPath("bad");
  {
    std::ofstream out(path);
    out << "not an id\n";
  }
  const std::string text = ReadError(path);
  EXPECT_TRUE(test::Contains(text, path));
  EXPECT_TRUE(test::Contains(text, "got 9 characters"));
  std::remove(path.c_str());
}

TEST(CuNcclUniqueIdTest, FromEnvironmentReadsHexAndNamesAMissingVariable) {
  test::Rng rng = test::MakeRng(3);
  const CuNcclUniqueId id = CuNcclUniqueId::FromHex(RandomHex(&rng));
  const char* name = "CUCTX_NCCL_TEST_ID";
  ASSERT_EQ(setenv(name, (id.ToHex() + "\n").c_str(), 1), 0);
  EXPECT_EQ(CuNcclUniqueId::FromEnvironment(name), id);
  ASSERT_EQ(setenv(name, "12", 1), 0);
  test::ExpectErrorContaining([&] { CuNcclUniqueId::FromEnvironment(name); },
                              "CUCTX_NCCL_TEST_ID: an NCCL unique id is 256 hex digits");
  ASSERT_EQ(unsetenv(name), 0);
  test::ExpectErrorContaining([&] { CuNcclUniqueId::FromEnvironment(name); },
                              "CUCTX_NCCL_TEST_ID is not set");
  // The default variable.
  ASSERT_EQ(setenv("CUCTX_NCCL_ID", id.ToHex().c_str(), 1), 0);
  EXPECT_EQ(CuNcclUniqueId::FromEnvironment(), id);
  ASSERT_EQ(unsetenv("CUCTX_NCCL_ID"), 0);
}

// ---- CuNcclComm: creation rules in every mode -----------------------------------------------

TEST(CuNcclCommTest, ConstructorChecksItsArgumentsFirst) {
  const CuNcclUniqueId id;
#if CUCTX_HAVE_NCCL
  test::ExpectErrorContaining([&] { CuNcclComm comm(id, 2, 2); }, "rank must be in [0, 2), got 2");
  test::ExpectErrorContaining([&] { CuNcclComm comm(id, 2, -1); }, "got -1");
  test::ExpectErrorContaining([&] { CuNcclComm comm(id, 0, 0); }, "num_ranks must be >= 1, got 0");
  test::ExpectErrorContaining([] { CuNcclComm::CreateForThreads({}); }, "no device ids");
#else
  test::ExpectErrorContaining([&] { CuNcclComm comm(id, 2, 0); },
                              "cuctx was built without NCCL (CUDA=0 or no nccl.h)");
  test::ExpectErrorContaining([] { CuNcclComm::CreateForThreads({0}); },
                              "cuctx was built without NCCL");
  test::ExpectErrorContaining([] { CuNcclUniqueId::Create(); }, "cuctx was built without NCCL");
#endif
}

// Without a GPU (CPU fallback, or a build without NCCL) no communicator can be made, and the
// error says why; with one, a one-rank communicator is made both ways.
TEST(CuNcclCommTest, CreationNeedsAGpu) {
  if (!test::GpuEnabled()) {
    // An id that NCCL never sees: the GPU check comes first.
    const CuNcclUniqueId id;
    const std::string expected =
        CUCTX_HAVE_NCCL ? "no GPU is selected" : "cuctx was built without NCCL";
    test::ExpectErrorContaining([&] { CuNcclComm comm(id, 1, 0); }, expected);
    test::ExpectErrorContaining([] { CuNcclComm::CreateForThreads({0}); }, expected);
    return;
  }
  const int device = CuDevice::Instantiate().DeviceId();
  std::vector<std::unique_ptr<CuNcclComm>> comms = CuNcclComm::CreateForThreads({device});
  ASSERT_EQ(comms.size(), 1u);
  EXPECT_EQ(comms[0]->Rank(), 0);
  EXPECT_EQ(comms[0]->NumRanks(), 1);
  EXPECT_EQ(comms[0]->DeviceId(), device);
  CuNcclComm comm(CuNcclUniqueId::Create(), 1, 0);
  EXPECT_EQ(comm.DeviceId(), device);
  comm.CheckAsyncError();
  test::ExpectErrorContaining([&] { CuNcclComm::CreateForThreads({CuDevice::DeviceCount()}); },
                              "out of range");
  test::ExpectErrorContaining(
      [&] {
        CuNcclComm::CreateForThreads({device, device});
      },
      "listed twice");
}

// With NCCL built in, the library loads (or its absence is a clear error naming it).
TEST(CuNcclCommTest, LibraryLoadsOrSaysWhatIsMissing) {
#if CUCTX_HAVE_NCCL
  try {
    EXPECT_GE(CuNcclComm::NcclVersion(), 21300);
  } catch (const Error& e) {
    EXPECT_TRUE(test::Contains(e.what(), "libnccl.so.2"));
  }
#else
  test::ExpectErrorContaining([] { CuNcclComm::NcclVersion(); }, "built without NCCL");
#endif
}

// ---- collectives against the CPU ------------------------------------------------------------

constexpr MatrixIndexT kRows = 17, kCols = 33, kDim = 257;

// One rank's inputs, from a generator seeded by the rank.
template <typename Real>
struct RankInput {
  RankInput(int rank, int num_ranks) {
    test::Rng rng = test::MakeRng(100 + rank);
    a = test::RandomMatrix<Real>(kRows, kCols, &rng);
    big = test::RandomMatrix<Real>(num_ranks * kRows, kCols, &rng);
    v = test::RandomVector<Real>(kDim, &rng);
    big_v = test::RandomVector<Real>(num_ranks * kDim, &rng);
  }
  Matrix<Real> a, big;
  Vector<Real> v, big_v;
};

// What one rank got back, on the host, and any damage around the views.
template <typename Real>
struct RankOutput {
  Matrix<Real> sum, average, max, min, broadcast, gather, scatter;
  Vector<Real> v_sum, v_broadcast, v_gather, v_scatter;
  std::string error;  // an exception or a changed element outside a view
};

constexpr Layout kTestLayouts[] = {Layout::kPacked, Layout::kAlignedView, Layout::kUnalignedView};

// The root of the broadcasts: rank 1 when there is one.
int BroadcastRoot(int num_ranks) { return std::min(1, num_ranks - 1); }

// Runs every collective of `comm` on this rank's inputs in `layout` (matrices) on the calling
// thread, which must be bound to the comm's device. Every rank runs the same sequence.
template <typename Real>
void RunRank(CuNcclComm* comm, Layout layout, RankOutput<Real>* out) {
  const int n = comm->NumRanks();
  const RankInput<Real> in(comm->Rank(), n);
  auto note = [out](const char* what, const ::testing::AssertionResult& r) {
    if (!r) out->error += std::string(what) + ": " + r.message() + "; ";
  };
  auto in_place = [&](const char* what, Matrix<Real>* result, auto op) {
    LayoutCuMatrix<Real> m(in.a, layout);
    op(&m.view);
    *result = ToHost(m.view);
    note(what, m.OutsideUnchanged());
  };
  in_place("AllReduce sum", &out->sum, [&](CuMatrixBase<Real>* m) { comm->AllReduce(m); });
  in_place("AllReduce average", &out->average,
           [&](CuMatrixBase<Real>* m) { comm->AllReduce(m, CuNcclOp::kAverage); });
  in_place("AllReduce max", &out->max,
           [&](CuMatrixBase<Real>* m) { comm->AllReduce(m, CuNcclOp::kMax); });
  in_place("AllReduce min", &out->min,
           [&](CuMatrixBase<Real>* m) { comm->AllReduce(m, CuNcclOp::kMin); });
  in_place("Broadcast", &out->broadcast,
           [&](CuMatrixBase<Real>* m) { comm->Broadcast(m, BroadcastRoot(n)); });
  {
    LayoutCuMatrix<Real> send(in.a, layout);
    LayoutCuMatrix<Real> recv(Matrix<Real>(n * kRows, kCols), layout);
    comm->AllGather(send.view, &recv.view);
    out->gather = ToHost(recv.view);
    note("AllGather recv", recv.OutsideUnchanged());
    note("AllGather send", test::SameElements(ToHost(send.view), in.a));
  }
  {
    LayoutCuMatrix<Real> send(in.big, layout);
    LayoutCuMatrix<Real> recv(Matrix<Real>(kRows, kCols), layout);
    comm->ReduceScatter(send.view, &recv.view);
    out->scatter = ToHost(recv.view);
    note("ReduceScatter recv", recv.OutsideUnchanged());
  }
  CuVector<Real> v(in.v);
  comm->AllReduce(&v);
  out->v_sum = ToHost(v);
  v.CopyFromVec(in.v);
  comm->Broadcast(&v, BroadcastRoot(n));
  out->v_broadcast = ToHost(v);
  CuVector<Real> gathered(n * kDim);
  comm->AllGather(CuVector<Real>(in.v), &gathered);
  out->v_gather = ToHost(gathered);
  CuVector<Real> scattered(kDim);
  comm->ReduceScatter(CuVector<Real>(in.big_v), &scattered);
  out->v_scatter = ToHost(scattered);
}

// Checks every rank's outputs against the CPU. Sums (and the average) may differ from the CPU's
// in the last bits, as NCCL adds the ranks' values in its own order: tolerance 10 * Tol<Real>()
// relative (at most 8 terms here). Max, min, broadcast and gather move values and must be exact.
template <typename Real>
void CheckOutputs(const std::vector<RankOutput<Real>>& outputs, Layout layout) {
  const int n = static_cast<int>(outputs.size());
  const double tol = 10 * test::Tol<Real>();
  std::vector<RankInput<Real>> inputs;
  for (int k = 0; k < n; ++k) inputs.emplace_back(k, n);
  Matrix<double> sum(kRows, kCols), big_sum(n * kRows, kCols);
  Matrix<Real> max(inputs[0].a), min(inputs[0].a), gather(n * kRows, kCols);
  Vector<double> v_sum(kDim), big_v_sum(n * kDim);
  Vector<Real> v_gather(n * kDim);
  for (int k = 0; k < n; ++k) {
    const RankInput<Real>& in = inputs[k];
    sum.AddMat(1.0, Matrix<double>(in.a));
    big_sum.AddMat(1.0, Matrix<double>(in.big));
    v_sum.AddVec(1.0, Vector<double>(in.v));
    big_v_sum.AddVec(1.0, Vector<double>(in.big_v));
    gather.RowRange(k * kRows, kRows).CopyFromMat(in.a);
    v_gather.Range(k * kDim, kDim).CopyFromVec(in.v);
    for (MatrixIndexT r = 0; r < kRows; ++r)
      for (MatrixIndexT c = 0; c < kCols; ++c) {
        max(r, c) = std::max(max(r, c), in.a(r, c));
        min(r, c) = std::min(min(r, c), in.a(r, c));
      }
  }
  Matrix<double> average(sum);
  average.Scale(1.0 / n);
  const int root = BroadcastRoot(n);
  for (int k = 0; k < n; ++k) {
    const RankOutput<Real>& out = outputs[k];
    SCOPED_TRACE("rank " + std::to_string(k) + " of " + std::to_string(n) + ", " +
                 test::LayoutName(layout));
    EXPECT_EQ(out.error, "");
    if (!out.error.empty()) continue;
    EXPECT_TRUE(test::ExpectNear(out.sum, sum, tol)) << "AllReduce sum";
    EXPECT_TRUE(test::ExpectNear(out.average, average, tol)) << "AllReduce average";
    EXPECT_TRUE(test::SameElements(out.max, max)) << "AllReduce max";
    EXPECT_TRUE(test::SameElements(out.min, min)) << "AllReduce min";
    EXPECT_TRUE(test::SameElements(out.broadcast, inputs[root].a)) << "Broadcast";
    EXPECT_TRUE(test::SameElements(out.gather, gather)) << "AllGather";
    EXPECT_TRUE(test::ExpectNear(out.scatter, big_sum.RowRange(k * kRows, kRows), tol))
        << "ReduceScatter";
    EXPECT_TRUE(test::ExpectNear(out.v_sum, v_sum, tol)) << "vector AllReduce";
    EXPECT_TRUE(test::ExpectNear(out.v_broadcast, inputs[root].v, 0.0)) << "vector Broadcast";
    EXPECT_TRUE(test::ExpectNear(out.v_gather, v_gather, 0.0)) << "vector AllGather";
    EXPECT_TRUE(test::ExpectNear(out.v_scatter, big_v_sum.Range(k * kDim, kDim), tol))
        << "vector ReduceScatter";
  }
}

template <typename Real>
class CuNcclCollectiveTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CuNcclCollectiveTest, RealTypes);

TYPED_TEST(CuNcclCollectiveTest, OneRankMatchesCpu) {
  using Real = TypeParam;
  CUCTX_REQUIRE_GPU();
  const int device = CuDevice::Instantiate().DeviceId();
  std::vector<std::unique_ptr<CuNcclComm>> comms = CuNcclComm::CreateForThreads({device});
  CuNcclComm by_id(CuNcclUniqueId::Create(), 1, 0);
  for (CuNcclComm* comm : {comms[0].get(), &by_id}) {
    for (Layout layout : kTestLayouts) {
      std::vector<RankOutput<Real>> outputs(1);
      RunRank(comm, layout, &outputs[0]);
      CheckOutputs(outputs, layout);
    }
    comm->CheckAsyncError();
  }
}

// One thread per GPU (up to 8), each bound with SelectGpuIdForThread, all collectives in every
// layout.
TYPED_TEST(CuNcclCollectiveTest, OneThreadPerGpuMatchesCpu) {
  using Real = TypeParam;
  CUCTX_REQUIRE_GPU();
  const int count = CuDevice::DeviceCount();
  if (count < 2) GTEST_SKIP() << "skipped: needs 2 GPUs, " << count << " visible";
  const int n = std::min(count, 8);
  CuDevice::Instantiate().AllowMultithreading();
  std::vector<int> ids(n);
  for (int k = 0; k < n; ++k) ids[k] = k;
  std::vector<std::unique_ptr<CuNcclComm>> comms = CuNcclComm::CreateForThreads(ids);
  const std::vector<Layout> layouts(std::begin(kTestLayouts), std::end(kTestLayouts));
  std::vector<std::vector<RankOutput<Real>>> outputs(layouts.size(),
                                                     std::vector<RankOutput<Real>>(n));
  std::vector<std::thread> threads;
  for (int k = 0; k < n; ++k)
    threads.emplace_back([&, k] {
      try {
        CuDevice::Instantiate().SelectGpuIdForThread(ids[k]);
        for (size_t l = 0; l < layouts.size(); ++l)
          RunRank(comms[k].get(), layouts[l], &outputs[l][k]);
      } catch (const std::exception& e) {
        for (auto& per_layout : outputs) per_layout[k].error += e.what();
      }
    });
  for (std::thread& t : threads) t.join();
  for (size_t l = 0; l < layouts.size(); ++l) CheckOutputs(outputs[l], layouts[l]);
}

// A collective from a thread bound to another device is an error before NCCL is called.
TEST(CuNcclCommTest, WrongThreadDeviceThrows) {
  CUCTX_REQUIRE_GPU();
  const int count = CuDevice::DeviceCount();
  if (count < 2) GTEST_SKIP() << "skipped: needs 2 GPUs, " << count << " visible";
  const int mine = CuDevice::Instantiate().DeviceId();
  const int other = mine == 0 ? 1 : 0;
  // Rank 1 lives on `other`; this thread uses `mine`.
  std::vector<std::unique_ptr<CuNcclComm>> comms = CuNcclComm::CreateForThreads({mine, other});
  CuMatrix<float> m(4, 5);
  CuVector<double> v(7);
  const std::string expected = "comm of rank 1 is on GPU " + std::to_string(other) +
                               " but this thread uses GPU " + std::to_string(mine) +
                               "; bind the thread with SelectGpuIdForThread(" +
                               std::to_string(other) + ")";
  test::ExpectErrorContaining([&] { comms[1]->AllReduce(&m); }, expected);
  test::ExpectErrorContaining([&] { comms[1]->Broadcast(&v, 0); }, expected);
}

// Shape and root mistakes are caught before NCCL is called (a mismatch would hang the ranks).
TEST(CuNcclCommTest, ShapeMismatchesThrowNamingBothShapes) {
  CUCTX_REQUIRE_GPU();
  std::vector<std::unique_ptr<CuNcclComm>> comms =
      CuNcclComm::CreateForThreads({CuDevice::Instantiate().DeviceId()});
  CuNcclComm& comm = *comms[0];
  CuMatrix<float> send(2, 4), recv_rows(3, 4), recv_cols(2, 5);
  test::ExpectErrorContaining([&] { comm.AllGather(send, &recv_rows); },
                              "recv must be NumRanks() * send.NumRows() x send.NumCols() = 1 * 2 "
                              "x 4 = 2x4 (send is 2x4), got 3x4");
  test::ExpectErrorContaining([&] { comm.AllGather(send, &recv_cols); }, "got 2x5");
  test::ExpectErrorContaining([&] { comm.ReduceScatter(recv_rows, &send); },
                              "send must be NumRanks() * recv.NumRows() x recv.NumCols() = 1 * 2 "
                              "x 4 = 2x4 (recv is 2x4), got 3x4");
  test::ExpectErrorContaining([&] { comm.Broadcast(&send, 1); },
                              "root must be a rank in [0, 1), got 1");
  test::ExpectErrorContaining([&] { comm.Broadcast(&send, -1); }, "got -1");
  CuVector<double> v(6), w(5);
  test::ExpectErrorContaining([&] { comm.AllGather(v, &w); },
                              "recv.Dim() must be NumRanks() * send.Dim() = 1 * 6 = 6, got 5");
  test::ExpectErrorContaining([&] { comm.ReduceScatter(v, &w); },
                              "send.Dim() must be NumRanks() * recv.Dim() = 1 * 5 = 5, got 6");
  CuMatrix<float> whole(4, 4);
  CuSubMatrix<float> top = whole.RowRange(0, 2), middle = whole.RowRange(1, 2);
  test::ExpectErrorContaining([&] { comm.AllGather(top, &middle); }, "send and recv overlap");
}

// Aborting leaves a communicator that refuses further collectives.
TEST(CuNcclCommTest, AbortedCommRefusesCollectives) {
  CUCTX_REQUIRE_GPU();
  CuNcclComm comm(CuNcclUniqueId::Create(), 1, 0);
  comm.Abort();
  CuVector<float> v(3);
  test::ExpectErrorContaining([&] { comm.AllReduce(&v); }, "was aborted");
  comm.Abort();  // a second abort does nothing
}

}  // namespace
}  // namespace cuctx
