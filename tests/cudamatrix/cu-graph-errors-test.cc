// tests/cudamatrix/cu-graph-errors-test.cc: what cannot be captured, and how a failed capture
// recovers.
// SPDX-License-Identifier: Apache-2.0
//
// GPU only (in CPU mode nothing is captured, so nothing throws): every op that waits for the
// device or copies to or from the host throws cuctx::Error naming itself; afterwards the thread
// is no longer capturing, eager ops work and a new capture succeeds. Nested captures and Launch()
// inside a capture throw; other exceptions from the body pass through. Random fills refuse to be
// captured, naming themselves (both modes). A new thread's first cuBLAS use can be captured
// (both modes).
#include "base/error.h"
#include "cudamatrix/cu-array.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-graph.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"
#include "tests/cu-matrix-testing.h"
#include "tests/cudamatrix/cu-graph-testing.h"
#include "tests/matrix-testing.h"
#include "tests/testing.h"

#include <exception>
#include <functional>
#include <gtest/gtest.h>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace cuctx {
namespace {

using test::Identical;
using test::ToHost;

using RealTypes = ::testing::Types<float, double>;

// The operand shape of cu-graph-ops-test.cc: odd sizes, neither a multiple of a block.
constexpr MatrixIndexT kRows = 37, kCols = 51;

template <typename Real>
class CuGraphErrorTest : public ::testing::Test {};
TYPED_TEST_SUITE(CuGraphErrorTest, RealTypes);

// After a failed capture: the thread is no longer capturing, eager ops (including host reads)
// work, and a new capture succeeds.
template <typename Real>
void ExpectRecovered(const Matrix<Real>& hx, const CuMatrix<Real>& x) {
  EXPECT_FALSE(CuGraph::Capturing());
  CuMatrix<Real> ones(20, 30);
  ones.Set(1.0);
  EXPECT_EQ(ones.Sum(), Real(600));
  SynchronizeGpu();
  CuMatrix<Real> y(x.NumRows(), x.NumCols());
  CuGraph graph = CuGraph::Capture([&] { y.AddMat(1.0, x); });
  graph.Launch();
  EXPECT_TRUE(Identical(ToHost(y), hx));
}

TYPED_TEST(CuGraphErrorTest, OpsThatWaitOrCopyToHostThrowNamingThemselves) {
  CUCTX_REQUIRE_GPU();
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const Matrix<Real> hx = test::RandomMatrix<Real>(kRows, kCols, &rng);
  CuMatrix<Real> m(hx), m2(hx), sq(kCols, kCols);
  sq.SetRandn();
  CuVector<Real> vc(test::RandomVector<Real>(kCols, &rng)), vr(kRows);
  const CuMatrixBase<Real>& cm = m;
  const CuVectorBase<Real>& cv = vc;
  Matrix<Real> host(kRows, kCols);
  Vector<Real> hv(kCols);
  const std::vector<int32> idx(kRows, 0);
  MatrixIndexT count = 0;

  struct Forbidden {
    const char* needle;  // what the message must contain besides "captures a CUDA graph"
    std::function<void()> op;
  };
  const std::vector<Forbidden> forbidden = {
      {"CuMatrixBase::Sum", [&] { (void)m.Sum(); }},
      {"CuMatrixBase::Max", [&] { (void)m.Max(); }},
      {"CuMatrixBase::Min", [&] { (void)m.Min(); }},
      {"CuMatrixBase::Trace", [&] { (void)sq.Trace(); }},
      {"CuMatrixBase::FrobeniusNorm", [&] { (void)m.FrobeniusNorm(); }},
      {"CuMatrixBase::ApproxEqual", [&] { (void)m.ApproxEqual(m2); }},
      {"CuMatrixBase::IsUnit", [&] { (void)sq.IsUnit(); }},
      {"CuMatrixBase::CopyToMat", [&] { m.CopyToMat(&host); }},
      {"operator()", [&] { (void)cm(0, 0); }},
      {"CuVectorBase::Sum", [&] { (void)vc.Sum(); }},
      {"CuVectorBase::Max", [&] { (void)vc.Max(); }},
      {"CuVectorBase::Min", [&] { (void)vc.Min(); }},
      {"CuVectorBase::Norm", [&] { (void)vc.Norm(2.0); }},
      {"CuVectorBase::ApproxEqual", [&] { (void)vc.ApproxEqual(vc); }},
      {"CuVectorBase::CopyToVec", [&] { vc.CopyToVec(&hv); }},
      {"operator()", [&] { (void)cv(0); }},
      {"SynchronizeGpu", [&] { SynchronizeGpu(); }},
      {"TraceMatMat", [&] { (void)TraceMatMat(m, m2, kTrans); }},
      {"VecVec", [&] { (void)VecVec(vc, vc); }},
      {"VecMatVec", [&] { (void)VecMatVec(vr, m, vc); }},
      // These reach the host through a CuValue or a plain host copy, which names itself.
      {"CopyDeviceToHost", [&] { (void)static_cast<Real>(m(0, 0)); }},
      {"CopyHostToDevice", [&] { m(0, 0) = Real(1); }},
      {"CopyHostToDevice", [&] { m.CopyFromMat(host); }},
      {"CopyHostToDevice", [&] { vc.CopyFromVec(hv); }},
      {"CopyHostToDevice", [&] { CuArray<int32> a(idx); }},
      {"CuVectorBase::ApplyFloor with a count", [&] { vc.ApplyFloor(0.0, &count); }},
  };
  test::QuietLog quiet;
  for (const Forbidden& f : forbidden) {
    SCOPED_TRACE(f.needle);
    // Device work before the forbidden op, and a temporary alive when it throws.
    const std::string what = test::ErrorText([&] {
      CuGraph::Capture([&] {
        CuMatrix<Real> t(m);
        t.Scale(2.0);
        f.op();
      });
    });
    EXPECT_TRUE(test::Contains(what, f.needle));
    EXPECT_TRUE(test::Contains(what, "captures a CUDA graph"));
    ExpectRecovered(hx, m);
  }
  // Nothing was written by the abandoned captures.
  EXPECT_TRUE(Identical(ToHost(m), hx));
}

TYPED_TEST(CuGraphErrorTest, NestedCaptureThrows) {
  CUCTX_REQUIRE_GPU();
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const Matrix<Real> hx = test::RandomMatrix<Real>(9, 11, &rng);
  CuMatrix<Real> x(hx), y(9, 11);
  bool inner_returned = false;
  test::ExpectErrorContaining(
      [&] {
        CuGraph::Capture([&] {
          y.Add(1.0);
          CuGraph inner = CuGraph::Capture([&] { y.Add(2.0); });
          inner_returned = true;
        });
      },
      "already capturing");
  EXPECT_FALSE(inner_returned);
  EXPECT_TRUE(Identical(ToHost(y), Matrix<Real>(9, 11)));
  ExpectRecovered(hx, x);
}

TYPED_TEST(CuGraphErrorTest, LaunchInsideACaptureThrows) {
  CUCTX_REQUIRE_GPU();
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const Matrix<Real> hx = test::RandomMatrix<Real>(9, 11, &rng);
  CuMatrix<Real> x(hx), y(9, 11);
  CuGraph first = CuGraph::Capture([&] { y.Add(1.0); });
  test::ExpectErrorContaining([&] { CuGraph::Capture([&] { first.Launch(); }); },
                              "CuGraph::Launch");
  ExpectRecovered(hx, x);
  first.Launch();  // the first graph is unharmed
  Matrix<Real> ones(9, 11);
  ones.Set(1.0);
  EXPECT_TRUE(Identical(ToHost(y), ones));
}

TYPED_TEST(CuGraphErrorTest, OtherExceptionsFromTheBodyPassThrough) {
  CUCTX_REQUIRE_GPU();
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const Matrix<Real> hx = test::RandomMatrix<Real>(9, 11, &rng);
  CuMatrix<Real> x(hx);
  EXPECT_THROW(CuGraph::Capture([&] {
                 CuMatrix<Real> t(256, 256);
                 t.Add(1.0);
                 throw std::runtime_error("from the body");
               }),
               std::runtime_error);
  ExpectRecovered(hx, x);
  // A shape error inside the body is a cuctx::Error like any other.
  CuMatrix<Real> wrong(3, 4);
  test::ExpectErrorContaining([&] { CuGraph::Capture([&] { wrong.AddMat(1.0, x); }); }, "3x4");
  ExpectRecovered(hx, x);
}

TYPED_TEST(CuGraphErrorTest, RandomFillsCannotBeCaptured) {
  // cuRAND's host API is not capturable (measured on the H100: its kernels fail to launch, or it
  // allocates); the fills say so, naming themselves, on the GPU and the CPU alike.
  using Real = TypeParam;
  CuMatrix<Real> m(40, 60);
  CuVector<Real> v(100);
  test::ExpectErrorContaining([&] { CuGraph::Capture([&] { m.SetRandn(); }).Launch(); },
                              "CuRand::RandGaussian");
  test::ExpectErrorContaining([&] { CuGraph::Capture([&] { v.SetRandUniform(); }).Launch(); },
                              "CuRand::RandUniform");
  EXPECT_FALSE(CuGraph::Capturing());
  m.SetRandn();  // eager fills still work
  EXPECT_GT(m.FrobeniusNorm(), Real(10));
}

TEST(CuGraphFreshThreadTest, FirstLibraryUseOfAThreadCanBeCaptured) {
  // A new thread has no cuBLAS handle yet: the capture must not create it while capturing
  // (creation allocates and synchronizes).
  CuDevice::Instantiate().AllowMultithreading();
  test::Rng rng = test::MakeRng();
  const Matrix<float> ha = test::RandomMatrix<float>(24, 32, &rng);
  std::string error;
  bool same_product = false;
  std::thread fresh([&] {
    try {
      CuDevice::Instantiate();
      CuMatrix<float> a(ha), p(24, 24), eager_p(24, 24);
      CuGraph graph = CuGraph::Capture([&] { p.AddMatMat(1.0f, a, kNoTrans, a, kTrans, 0.0f); });
      graph.Launch();
      graph.Launch();
      eager_p.AddMatMat(1.0f, a, kNoTrans, a, kTrans, 0.0f);
      same_product = Identical(eager_p, p);
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
  fresh.join();
  EXPECT_EQ(error, "");
  EXPECT_TRUE(same_product);
}

}  // namespace
}  // namespace cuctx
