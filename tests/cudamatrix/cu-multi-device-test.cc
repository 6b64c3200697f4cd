// tests/cudamatrix/cu-multi-device-test.cc: several GPUs in one process (a device per thread):
// which device each Cu object is on, wrong-device errors, copies between devices, per-device
// allocators, peer access, and frees from a thread of another device.
// SPDX-License-Identifier: Apache-2.0
//
// The bookkeeping tests run everywhere: internal::SetThreadObjectDeviceForTesting makes a thread
// claim a device, so objects record it and the wrong-device checks and the copy-between-devices
// path run over host memory in CI. The Gpu tests need two or more GPUs (skipped otherwise) and run
// the same things for real, one std::thread per device.
#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/cu-array.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"
#include "tests/cu-matrix-testing.h"
#include "tests/matrix-testing.h"
#include "tests/testing.h"

#include <cstdio>
#include <functional>
#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace cuctx {
namespace {

using test::ToHost;

// Claims `device` for the calling thread's Cu objects for the scope (bookkeeping only).
class ClaimDevice {
 public:
  explicit ClaimDevice(int device) { internal::SetThreadObjectDeviceForTesting(device); }
  ~ClaimDevice() { internal::SetThreadObjectDeviceForTesting(internal::kNoDeviceOverride); }
};

// ---- bookkeeping (every machine) -----------------------------------------------------------------

TEST(CuMultiDeviceTest, ObjectsAndViewsRecordTheirDevice) {
  const int real = CuDevice::Instantiate().DeviceId();
  EXPECT_EQ(internal::ThreadObjectDevice(), real);
  CuMatrix<float> m;
  CuVector<double> v;
  CuArray<int32> a;
  {
    ClaimDevice claim(3);
    m.Resize(4, 6);
    v.Resize(5);
    a.Resize(7);
  }
  EXPECT_EQ(m.DeviceId(), 3);
  EXPECT_EQ(v.DeviceId(), 3);
  EXPECT_EQ(a.DeviceId(), 3);
  // Views share their object's device, whichever thread device makes them.
  EXPECT_EQ(m.Range(1, 2, 1, 3).DeviceId(), 3);
  EXPECT_EQ(m.Row(2).DeviceId(), 3);
  EXPECT_EQ(CuSubVector<float>(m, 1).DeviceId(), 3);
  EXPECT_EQ(v.Range(1, 3).DeviceId(), 3);
  // A fresh allocation takes the device of the thread that makes it.
  m.Resize(2, 2);
  EXPECT_EQ(m.DeviceId(), real);
  CuMatrix<float> other;
  {
    ClaimDevice claim(3);
    other.Resize(3, 3);
  }
  other.Swap(&m);
  EXPECT_EQ(m.DeviceId(), 3);
  EXPECT_EQ(other.DeviceId(), real);
  ClaimDevice claim(3);  // free them as their owner would
}

TEST(CuMultiDeviceTest, WrongDeviceUseIsAClearError) {
  test::QuietLog quiet;
  CuMatrix<float> a;
  CuVector<float> v;
  CuArray<int32> idx;
  {
    ClaimDevice claim(0);
    a.Resize(3, 4);
    v.Resize(4);
    idx.Resize(3);
  }
  ClaimDevice claim(1);
  CuMatrix<float> b(3, 4);
  const std::string text = test::ErrorText([&] { b.AddMat(1.0f, a); });
  EXPECT_NE(text.find("CuMatrix on GPU 0"), std::string::npos) << text;
  EXPECT_NE(text.find("thread of GPU 1"), std::string::npos) << text;
  EXPECT_NE(text.find("SelectGpuIdForThread"), std::string::npos) << text;
  EXPECT_TRUE(test::ThrowsWith([&] { (void)a.Data(); }, "CuMatrix on GPU 0"));
  EXPECT_TRUE(test::ThrowsWith([&] { (void)a.Dim(); }, "CuMatrix on GPU 0"));
  EXPECT_TRUE(test::ThrowsWith([&] { (void)v.Data(); }, "CuVector on GPU 0"));
  EXPECT_TRUE(test::ThrowsWith([&] { (void)idx.Data(); }, "CuArray on GPU 0"));
  CuVector<float> w(4);
  EXPECT_TRUE(test::ThrowsWith([&] { w.AddVec(1.0f, v); }, "CuVector on GPU 0"));
  EXPECT_TRUE(test::ThrowsWith([&] { a.Resize(5, 5, kCopyData); }, "CuMatrix on GPU 0"));
  // b is untouched and still usable.
  b.Set(2.0f);
  EXPECT_EQ(ToHost(b)(2, 3), 2.0f);
  // Empty objects have no device to be wrong about.
  CuMatrix<float> empty;
  EXPECT_EQ(empty.Data(), nullptr);
  ClaimDevice owner(0);  // a, v, idx are freed by a thread of their device
}

TEST(CuMultiDeviceTest, HostMemoryUsedByAGpuThreadIsAnError) {
  test::QuietLog quiet;
  CuMatrix<float> a;
  {
    ClaimDevice claim(-1);
    a.Resize(2, 2);
  }
  ClaimDevice claim(0);
  EXPECT_TRUE(test::ThrowsWith([&] { (void)a.Data(); }, "in host memory (made without a GPU)"));
  ClaimDevice owner(-1);
}

template <typename Real>
class CuMultiDeviceCopyTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CuMultiDeviceCopyTest, RealTypes);

// Copies from an object of device 0 into objects of device 1: plain, converting, transposed, into
// a strided view, and copy construction; each equal to the host copy. Runs over host memory here
// (the devices are claimed) and on two GPUs in the Gpu test below.
template <typename Real>
void CheckCopiesBetween(const std::function<void(const std::function<void()>&)>& on_device0,
                        const std::function<void(const std::function<void()>&)>& on_device1) {
  using Other = typename std::conditional<std::is_same<Real, float>::value, double, float>::type;
  test::Rng rng = test::MakeRng(31);
  const Matrix<Real> host = test::RandomMatrix<Real>(37, 45, &rng);
  const Vector<Real> hvec = test::RandomVector<Real>(101, &rng);
  std::unique_ptr<CuMatrix<Real>> a;
  std::unique_ptr<CuVector<Real>> v;
  on_device0([&] {
    a = std::make_unique<CuMatrix<Real>>(host);
    v = std::make_unique<CuVector<Real>>(hvec);
  });
  on_device1([&] {
    CuMatrix<Real> same(*a);  // copy construction across devices
    EXPECT_EQ(same.DeviceId(), internal::ThreadObjectDevice());
    EXPECT_TRUE(test::ExpectNear(ToHost(same), host, 0.0));
    CuMatrix<Other> converted(*a);
    Matrix<Other> host_converted(host);
    EXPECT_TRUE(test::ExpectNear(ToHost(converted), host_converted, 0.0));
    CuMatrix<Real> transposed(45, 37);
    transposed.CopyFromMat(*a, kTrans);
    Matrix<Real> host_transposed(host, kTrans);
    EXPECT_TRUE(test::ExpectNear(ToHost(transposed), host_transposed, 0.0));
    CuMatrix<Real> wide(39, 60);
    wide.SetZero();
    CuSubMatrix<Real> view = wide.Range(1, 37, 7, 45);
    view.CopyFromMat(*a);
    EXPECT_TRUE(test::ExpectNear(ToHost(view), host, 0.0));
    EXPECT_EQ(ToHost(wide)(0, 0), Real(0));
    CuSubMatrix<Real> src_view = a->Range(2, 10, 3, 20);  // a view of a foreign matrix
    CuMatrix<Real> part(src_view);
    EXPECT_TRUE(test::ExpectNear(ToHost(part), Matrix<Real>(host.Range(2, 10, 3, 20)), 0.0));
    CuVector<Real> w(*v);
    EXPECT_TRUE(test::ExpectNear(ToHost(w), hvec, 0.0));
    CuVector<Other> wc(101);
    wc.CopyFromVec(*v);
    Vector<Other> hvec_converted(hvec);
    EXPECT_TRUE(test::ExpectNear(ToHost(wc), hvec_converted, 0.0));
    // Pushing: a matrix of this device copied into one of the other device.
    CuMatrix<Real> mine(host);
    mine.Scale(2);
    a->CopyFromMat(mine);
  });
  on_device0([&] {
    Matrix<Real> doubled(host);
    doubled.Scale(2);
    EXPECT_TRUE(test::ExpectNear(ToHost(*a), doubled, 0.0));
    a.reset();
    v.reset();
  });
}

TYPED_TEST(CuMultiDeviceCopyTest, CopiesBetweenClaimedDevices) {
  if (test::GpuEnabled()) GTEST_SKIP() << "covered by the Gpu test (needs host memory here)";
  auto claim = [](int d) {
    return [d](const std::function<void()>& body) {
      ClaimDevice c(d);
      body();
    };
  };
  CheckCopiesBetween<TypeParam>(claim(0), claim(1));
}

TEST(CuMultiDeviceTest, SelectGpuIdForThreadErrors) {
  test::QuietLog quiet;
  const int count = CuDevice::DeviceCount();
  EXPECT_GE(count, 0);
  const std::string text =
      test::ErrorText([&] { CuDevice::Instantiate().SelectGpuIdForThread(count + 3); });
  if (CUCTX_HAVE_CUDA) {
    EXPECT_NE(text.find("sees " + std::to_string(count) + " CUDA device"), std::string::npos)
        << text;
  } else {
    EXPECT_NE(text.find("built without CUDA"), std::string::npos) << text;
  }
  EXPECT_TRUE(test::ThrowsWith([] { CuDevice::Instantiate().SelectGpuIdForThread(-1); }, "(-1)"));
  EXPECT_FALSE(CuDevice::PeerAccessEnabled(0, 0));
  EXPECT_FALSE(CuDevice::PeerAccessEnabled(-1, 70));
}

// ---- real devices (two or more GPUs) --------------------------------------------------------------

// Runs `body` on a new thread bound to `device` and waits for it; failures inside count.
void OnDeviceThread(int device, const std::function<void()>& body) {
  std::thread t([&] {
    CuDevice::Instantiate().SelectGpuIdForThread(device);
    body();
  });
  t.join();
}

bool TwoGpus() { return test::GpuEnabled() && CuDevice::DeviceCount() >= 2; }

TEST(CuMultiDeviceGpuTest, ThreadsComputeOnTheirOwnDevices) {
  if (!TwoGpus()) GTEST_SKIP() << "needs two GPUs (found " << CuDevice::DeviceCount() << ")";
  CuDevice::Instantiate().AllowMultithreading();
  const int n = CuDevice::DeviceCount();
  std::vector<CuMemoryAllocator*> allocators(n, nullptr);
  std::vector<std::thread> threads;
  std::vector<int> failures(n, 0);
  for (int d = 0; d < n; ++d) {
    threads.emplace_back([&, d] {
      CuDevice& dev = CuDevice::Instantiate();
      dev.SelectGpuIdForThread(d);
      EXPECT_EQ(dev.DeviceId(), d);
      allocators[d] = dev.Allocator();
      test::Rng rng = test::MakeRng(100 + d);
      const Matrix<float> ha = test::RandomMatrix<float>(96, 80, &rng);
      const Matrix<float> hb = test::RandomMatrix<float>(80, 64, &rng);
      CuMatrix<float> a(ha), b(hb), c(96, 64);
      EXPECT_EQ(c.DeviceId(), d);
      c.AddMatMat(1.0f, a, kNoTrans, b, kNoTrans, 0.0f);
      Matrix<float> expected(96, 64);
      expected.AddMatMat(1.0f, ha, kNoTrans, hb, kNoTrans, 0.0f);
      if (!test::ExpectNear(ToHost(c), expected, 1e-4)) ++failures[d];
      c.Sigmoid(c);
      EXPECT_GT(c.Sum(), 0.0f);
    });
  }
  for (auto& t : threads) t.join();
  for (int d = 0; d < n; ++d) EXPECT_EQ(failures[d], 0) << "device " << d;
  for (int d = 1; d < n; ++d) EXPECT_NE(allocators[d], allocators[0]) << "device " << d;
  const std::vector<int> active = CuDevice::ActiveDeviceIds();
  EXPECT_EQ(static_cast<int>(active.size()), n);
}

TYPED_TEST(CuMultiDeviceCopyTest, CopiesBetweenGpus) {
  if (!TwoGpus()) GTEST_SKIP() << "needs two GPUs (found " << CuDevice::DeviceCount() << ")";
  CuDevice::Instantiate().AllowMultithreading();
  auto on = [](int d) {
    return [d](const std::function<void()>& body) { OnDeviceThread(d, body); };
  };
  CheckCopiesBetween<TypeParam>(on(0), on(1));
}

TEST(CuMultiDeviceGpuTest, WrongDeviceIsCaughtBeforeAnyKernel) {
  if (!TwoGpus()) GTEST_SKIP() << "needs two GPUs (found " << CuDevice::DeviceCount() << ")";
  CuDevice::Instantiate().AllowMultithreading();
  test::QuietLog quiet;
  std::unique_ptr<CuMatrix<float>> a;
  std::unique_ptr<CuVector<float>> v;
  OnDeviceThread(0, [&] {
    a = std::make_unique<CuMatrix<float>>(16, 16);
    a->Set(1.0f);
    v = std::make_unique<CuVector<float>>(16);
    v->Set(1.0f);
  });
  OnDeviceThread(1, [&] {
    EXPECT_TRUE(test::ThrowsWith([&] { a->Scale(2.0f); }, "CuMatrix on GPU 0"));
    CuMatrix<float> b(16, 16);
    EXPECT_TRUE(test::ThrowsWith([&] { b.AddMatMat(1.0f, *a, kNoTrans, *a, kNoTrans, 0.0f); },
                                 "thread of GPU 1"));
    CuVector<float> w(16);
    EXPECT_TRUE(test::ThrowsWith([&] { w.AddVec(1.0f, *v); }, "CuVector on GPU 0"));
    // Nothing reached the device: this thread's GPU still works.
    b.Set(3.0f);
    EXPECT_FLOAT_EQ(b.Sum(), 3.0f * 256);
  });
  OnDeviceThread(0, [&] {
    EXPECT_FLOAT_EQ(a->Sum(), 256.0f);
    a.reset();
    v.reset();
  });
}

TEST(CuMultiDeviceGpuTest, MemoryOfAnotherDeviceIsFreedByItsAllocator) {
  if (!TwoGpus()) GTEST_SKIP() << "needs two GPUs (found " << CuDevice::DeviceCount() << ")";
  CuDevice::Instantiate().AllowMultithreading();
  std::unique_ptr<CuMatrix<double>> made_on_1;
  CuMemoryAllocator* allocator1 = nullptr;
  size_t in_use_before = 0;
  OnDeviceThread(1, [&] {
    allocator1 = CuDevice::Instantiate().Allocator();
    in_use_before = allocator1->GetAllocatedMemory();
    made_on_1 = std::make_unique<CuMatrix<double>>(512, 512);
    made_on_1->Set(1.0);
  });
  EXPECT_GT(allocator1->GetAllocatedMemory(), in_use_before);
  // Freed by this (main) thread, which uses the process's device, whichever that is.
  made_on_1.reset();
  EXPECT_EQ(allocator1->GetAllocatedMemory(), in_use_before);
  // The block is handed out again on device 1 without trouble.
  OnDeviceThread(1, [&] {
    CuMatrix<double> again(512, 512);
    again.Set(2.0);
    EXPECT_DOUBLE_EQ(again.Sum(), 2.0 * 512 * 512);
  });
}

TEST(CuMultiDeviceGpuTest, RebindingMovesTheThreadAndItsHandles) {
  if (!TwoGpus()) GTEST_SKIP() << "needs two GPUs (found " << CuDevice::DeviceCount() << ")";
  CuDevice::Instantiate().AllowMultithreading();
  OnDeviceThread(0, [&] {
    CuDevice& dev = CuDevice::Instantiate();
    CuMatrix<float> a(8, 8), b(8, 8);
    a.Set(1.0f);
    b.AddMatMat(1.0f, a, kNoTrans, a, kNoTrans, 0.0f);  // a cuBLAS handle on device 0
    EXPECT_FLOAT_EQ(b.Sum(), 8.0f * 64);
    dev.SelectGpuIdForThread(1);
    EXPECT_EQ(dev.DeviceId(), 1);
    CuMatrix<float> c(8, 8), e(8, 8);
    c.Set(2.0f);
    e.AddMatMat(1.0f, c, kNoTrans, c, kNoTrans, 0.0f);  // a new handle, on device 1
    EXPECT_EQ(e.DeviceId(), 1);
    EXPECT_FLOAT_EQ(e.Sum(), 32.0f * 64);
    // a and b stay on device 0 and are freed from here (another device's allocator).
  });
}

TEST(CuMultiDeviceGpuTest, PeerAccessWhereTheHardwareHasIt) {
  if (!TwoGpus()) GTEST_SKIP() << "needs two GPUs (found " << CuDevice::DeviceCount() << ")";
  OnDeviceThread(0, [] {});
  OnDeviceThread(1, [] {});
  // On NVLink or PCIe peers both directions are on; report rather than assume the topology.
  std::printf("peer access 0->1: %d, 1->0: %d\n", CuDevice::PeerAccessEnabled(0, 1),
              CuDevice::PeerAccessEnabled(1, 0));
  EXPECT_EQ(CuDevice::PeerAccessEnabled(0, 1), CuDevice::PeerAccessEnabled(1, 0));
}

// With peer access on, a kernel of device 1 reads device 0's memory in place: a raw view of the
// peer's elements (the caller vouches for it, so it carries this thread's device) converted by a
// kernel. This is what the VMM upstream's access list must allow (GrantPeerAccess).
TEST(CuMultiDeviceGpuTest, KernelsReadPeerMemoryWhenPeerAccessIsOn) {
  if (!TwoGpus()) GTEST_SKIP() << "needs two GPUs (found " << CuDevice::DeviceCount() << ")";
  CuDevice::Instantiate().AllowMultithreading();
  OnDeviceThread(0, [] {});
  OnDeviceThread(1, [] {});
  if (!CuDevice::PeerAccessEnabled(1, 0)) GTEST_SKIP() << "no peer access between GPUs 0 and 1";
  test::Rng rng = test::MakeRng(77);
  const Matrix<float> host = test::RandomMatrix<float>(300, 200, &rng);
  std::unique_ptr<CuMatrix<float>> a;
  OnDeviceThread(0, [&] {
    a = std::make_unique<CuMatrix<float>>(host);
    SynchronizeGpu();
    (void)ToHost(*a);  // the elements are in place before device 1 reads them
  });
  OnDeviceThread(1, [&] {
    const float* peer = nullptr;
    {
      ClaimDevice owner(0);
      peer = a->Data();
    }
    CuSubMatrix<float> view(peer, a->NumRows(), a->NumCols(), a->Stride());
    CuMatrix<double> b(300, 200);
    b.CopyFromMat(view);  // a conversion kernel on device 1 reading device 0
    EXPECT_TRUE(test::ExpectNear(ToHost(b), Matrix<double>(host), 0.0));
  });
  OnDeviceThread(0, [&] { a.reset(); });
}

}  // namespace
}  // namespace cuctx
