// tools/launch-bench/op-cost.cu: per-call cost of small cuctx ops against a bare launch in the same
// process: steady (5,000 calls, then a wait), issue-only (64 calls, host time) and graph replay
// (the same 500 calls captured: GPU time alone). Run it against two libcuctx.so builds in turn
// (LD_LIBRARY_PATH) to compare them (BENCHMARKS.md, run `launch`). `op-cost vector` times the
// vector speed test's ops instead, `op-cost all` both. Build: build.sh.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-array.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-vector.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>
using namespace cuctx;
__global__ void Empty(float* p, int n) {
  if (n < 0) p[0] = 0;
}
static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
static double med(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
static void sync() { cudaStreamSynchronize(cudaStreamPerThread); }
static void measure(const char* name, const std::function<void()>& fn) {
  for (int i = 0; i < 100; ++i) fn();
  sync();
  std::vector<double> steady, issue, graph;
  for (int rep = 0; rep < 7; ++rep) {
    double t0 = now();
    for (int i = 0; i < 5000; ++i) fn();
    sync();
    steady.push_back((now() - t0) / 5000 * 1e6);
    for (int k = 0; k < 5; ++k) {
      double t1 = now();
      for (int i = 0; i < 64; ++i) fn();
      issue.push_back((now() - t1) / 64 * 1e6);
      sync();
    }
  }
  cudaGraph_t g = nullptr;
  cudaGraphExec_t ge = nullptr;
  if (cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeThreadLocal) ==
      cudaSuccess) {
    for (int i = 0; i < 500; ++i) fn();
    if (cudaStreamEndCapture(cudaStreamPerThread, &g) == cudaSuccess &&
        cudaGraphInstantiate(&ge, g, 0) == cudaSuccess) {
      cudaGraphLaunch(ge, cudaStreamPerThread);
      sync();
      for (int rep = 0; rep < 7; ++rep) {
        double t0 = now();
        cudaGraphLaunch(ge, cudaStreamPerThread);
        sync();
        graph.push_back((now() - t0) / 500 * 1e6);
      }
    }
  }
  cudaGetLastError();
  printf("%-34s steady %6.3f us  issue-only %6.3f us  graph-replay %6.3f us\n", name, med(steady),
         med(issue), graph.empty() ? -1.0 : med(graph));
  if (ge) cudaGraphExecDestroy(ge);
  if (g) cudaGraphDestroy(g);
}
template <typename Real>
void Ops(int dim, const char* tn) {
  CuMatrix<Real> M(dim, dim), N(dim, dim), O(dim, dim);
  M.SetRandn();
  N.SetRandn();
  O.SetRandn();
  CuVector<Real> v(dim);
  v.SetRandn();
  v.Set(2.0);
  std::vector<int32> idx(dim);
  for (int i = 0; i < dim; ++i) idx[i] = i;
  CuArray<int32> cidx(idx);
  char b[96];
  auto m = [&](const char* op, const std::function<void()>& fn) {
    snprintf(b, sizeof b, "%s<%s> %d", op, tn, dim);
    measure(b, fn);
  };
  m("Sigmoid", [&] { N.Sigmoid(M); });
  m("Heaviside", [&] { N.ApplyHeaviside(); });
  m("SetZeroAboveDiag", [&] { M.SetZeroAboveDiag(); });
  m("CopyRows", [&] { M.CopyRows(N, cidx); });
  m("AddRows", [&] { M.AddRows(0.5, N, cidx); });
  m("DivRowsVec", [&] { M.DivRowsVec(v); });
  m("GroupMaxDeriv", [&] { O.GroupMaxDeriv(M, N); });
  m("Transpose(CopyFromMat trans)", [&] { O.CopyFromMat(M, kTrans); });
  m("AddMat", [&] { O.AddMat(0.5, M); });
}
// The vector speed test's ops (each one launch in cuctx) on vectors of `dim`.
template <typename Real>
void VecOps(int dim, const char* tn) {
  CuMatrix<Real> M(dim, dim), N(dim, dim);
  M.SetRandn();
  N.SetRandn();
  CuVector<Real> v(dim), w(dim);
  v.SetRandn();
  CuVector<float> f(dim);
  char b[96];
  auto m = [&](const char* op, const std::function<void()>& fn) {
    snprintf(b, sizeof b, "%s<%s> %d", op, tn, dim);
    measure(b, fn);
  };
  m("Vec ApplyFloor", [&] { v.ApplyFloor(Real(-10)); });
  m("Vec ApplyCeiling", [&] { v.ApplyCeiling(Real(10)); });
  m("Vec CopyFromVec to float", [&] { f.CopyFromVec(v); });
  m("Vec AddColSumMat", [&] { w.AddColSumMat(1.0, M, 0.5); });
  m("Vec AddDiagMat2", [&] { w.AddDiagMat2(1.0, M, kNoTrans, 0.0); });
  m("Vec AddDiagMatMat[trans],[no-trans]",
    [&] { w.AddDiagMatMat(1.0, M, kTrans, N, kNoTrans, 1.0); });
  m("Vec ApplySoftMax", [&] { v.ApplySoftMax(); });
}
// op-cost [matrix|vector|all]: the matrix ops at 16 and 256 (the default), the vector ops at 64 and
// 128, or both; a bare launch first and last.
int main(int argc, char** argv) {
  const std::string set = argc > 1 ? argv[1] : "matrix";
  if (set != "matrix" && set != "vector" && set != "all") {
    std::fprintf(stderr, "op-cost: expected matrix, vector or all, got '%s'\n", set.c_str());
    return 2;
  }
  CuDevice::Instantiate().SelectGpuId("yes");
  float* p;
  cudaMalloc(&p, 1024);
  measure("bare <<<>>> + getlasterror", [&] {
    Empty<<<1, 256, 0, cudaStreamPerThread>>>(p, 1);
    cudaGetLastError();
  });
  if (set != "vector") {
    for (int dim : {16, 256}) {
      Ops<float>(dim, "float");
      Ops<double>(dim, "double");
    }
  }
  if (set != "matrix") {
    for (int dim : {64, 128}) {
      VecOps<float>(dim, "float");
      VecOps<double>(dim, "double");
    }
  }
  measure("bare <<<>>> + getlasterror", [&] {
    Empty<<<1, 256, 0, cudaStreamPerThread>>>(p, 1);
    cudaGetLastError();
  });
  return 0;
}
