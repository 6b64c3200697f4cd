// tools/probes/gemm-host.cc: where a small GEMM's time goes on a GPU host, for Kaldi's AddMatMat
// sizes (square, no transposes, alpha 1, beta 0), float and double. Per size, us per call
// (median of 7 batches) of:
//   blas    cublasSgemm / cublasDgemm (what Kaldi and cuctx call), back to back then one wait
//   issue   the same, host time of 64 calls before the wait (what the host pays per call)
//   lt      cublasLtMatmul with the heuristic's first algorithm found once, back to back
//   lt-iss  the same, host time of 64 calls
// then, with a workspace set on the cuBLAS handle (capture needs one):
//   gpu     20 cuBLAS calls captured in a graph and replayed: GPU time per call alone, and the
//           graph's kernel nodes per call (split-K and similar add nodes); lt-gpu the same for Lt
// Both handles use cudaStreamPerThread and CUBLAS_DEFAULT_MATH; the Lt calls get a 32 MiB
// workspace. Build on a host with CUDA:
//   g++ -O2 -std=c++17 -I/usr/local/cuda/include tools/probes/gemm-host.cc
//     -L/usr/local/cuda/lib64 -lcublasLt -lcublas -lcudart -o gemm-host   (one line)
// SPDX-License-Identifier: Apache-2.0
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

namespace {

void Check(bool ok, const char* what, int line) {
  if (!ok) {
    std::fprintf(stderr, "gemm-host: %s failed at line %d\n", what, line);
    std::exit(1);
  }
}
#define CHECK_CUDA(x) Check((x) == cudaSuccess, #x, __LINE__)
#define CHECK_BLAS(x) Check((x) == CUBLAS_STATUS_SUCCESS, #x, __LINE__)

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
void Wait() { CHECK_CUDA(cudaStreamSynchronize(cudaStreamPerThread)); }

// us per call: back to back (steady) and the host time of 64 calls (issue).
void Time(const std::function<void()>& call, double* steady, double* issue) {
  for (int i = 0; i < 50; ++i) call();
  Wait();
  std::vector<double> s, h;
  for (int rep = 0; rep < 7; ++rep) {
    double t0 = Now();
    for (int i = 0; i < 1000; ++i) call();
    Wait();
    s.push_back((Now() - t0) / 1000 * 1e6);
    t0 = Now();
    for (int i = 0; i < 64; ++i) call();
    h.push_back((Now() - t0) / 64 * 1e6);
    Wait();
  }
  *steady = Median(s);
  *issue = Median(h);
}

// GPU time per call from a graph of 20 calls, and its kernel nodes per call.
void GraphTime(const std::function<void()>& call, double* gpu, double* nodes) {
  cudaStream_t st;
  CHECK_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cudaGraph_t g;
  // cuBLAS uses the handle's stream: capture on cudaStreamPerThread through a relaxed capture.
  CHECK_CUDA(cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < 20; ++i) call();
  CHECK_CUDA(cudaStreamEndCapture(cudaStreamPerThread, &g));
  size_t n = 0;
  CHECK_CUDA(cudaGraphGetNodes(g, nullptr, &n));
  std::vector<cudaGraphNode_t> all(n);
  CHECK_CUDA(cudaGraphGetNodes(g, all.data(), &n));
  int kernels = 0;
  for (auto node : all) {
    cudaGraphNodeType t;
    CHECK_CUDA(cudaGraphNodeGetType(node, &t));
    kernels += t == cudaGraphNodeTypeKernel;
  }
  *nodes = kernels / 20.0;
  cudaGraphExec_t ge;
  CHECK_CUDA(cudaGraphInstantiate(&ge, g, 0));
  for (int i = 0; i < 5; ++i) CHECK_CUDA(cudaGraphLaunch(ge, st));
  CHECK_CUDA(cudaStreamSynchronize(st));
  std::vector<double> v;
  for (int rep = 0; rep < 7; ++rep) {
    double t0 = Now();
    for (int i = 0; i < 20; ++i) CHECK_CUDA(cudaGraphLaunch(ge, st));
    CHECK_CUDA(cudaStreamSynchronize(st));
    v.push_back((Now() - t0) / 400 * 1e6);
  }
  *gpu = Median(v);
  CHECK_CUDA(cudaGraphExecDestroy(ge));
  CHECK_CUDA(cudaGraphDestroy(g));
  CHECK_CUDA(cudaStreamDestroy(st));
}

template <typename Real>
struct Types;
template <>
struct Types<float> {
  static constexpr cudaDataType_t kData = CUDA_R_32F;
  static constexpr cublasComputeType_t kCompute = CUBLAS_COMPUTE_32F;
  static const char* Name() { return "float"; }
  static cublasStatus_t Gemm(cublasHandle_t h, int n, const float* a, const float* b, float* c) {
    const float one = 1, zero = 0;
    return cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n);
  }
};
template <>
struct Types<double> {
  static constexpr cudaDataType_t kData = CUDA_R_64F;
  static constexpr cublasComputeType_t kCompute = CUBLAS_COMPUTE_64F;
  static const char* Name() { return "double"; }
  static cublasStatus_t Gemm(cublasHandle_t h, int n, const double* a, const double* b, double* c) {
    const double one = 1, zero = 0;
    return cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n);
  }
};

template <typename Real>
void RunSize(cublasHandle_t blas, cublasLtHandle_t lt, void* work, size_t work_bytes, int n,
             bool graph) {
  using T = Types<Real>;
  Real *a, *b, *c;
  const size_t bytes = sizeof(Real) * n * n;
  CHECK_CUDA(cudaMalloc(&a, bytes));
  CHECK_CUDA(cudaMalloc(&b, bytes));
  CHECK_CUDA(cudaMalloc(&c, bytes));
  CHECK_CUDA(cudaMemset(a, 0, bytes));
  CHECK_CUDA(cudaMemset(b, 0, bytes));

  cublasLtMatmulDesc_t op;
  CHECK_BLAS(cublasLtMatmulDescCreate(&op, T::kCompute, T::kData));
  cublasLtMatrixLayout_t la, lb, lc;
  CHECK_BLAS(cublasLtMatrixLayoutCreate(&la, T::kData, n, n, n));
  CHECK_BLAS(cublasLtMatrixLayoutCreate(&lb, T::kData, n, n, n));
  CHECK_BLAS(cublasLtMatrixLayoutCreate(&lc, T::kData, n, n, n));
  cublasLtMatmulPreference_t pref;
  CHECK_BLAS(cublasLtMatmulPreferenceCreate(&pref));
  CHECK_BLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                  &work_bytes, sizeof(work_bytes)));
  cublasLtMatmulHeuristicResult_t found{};
  int count = 0;
  CHECK_BLAS(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &found, &count));
  Check(count > 0, "a cublasLt algorithm", __LINE__);
  const Real one = 1, zero = 0;

  auto call_blas = [&] { CHECK_BLAS(T::Gemm(blas, n, a, b, c)); };
  auto call_lt = [&] {
    CHECK_BLAS(cublasLtMatmul(lt, op, &one, a, la, b, lb, &zero, c, lc, c, lc, &found.algo, work,
                              work_bytes, cudaStreamPerThread));
  };
  if (graph) {
    double gpu, nodes, lgpu, lnodes;
    GraphTime(call_blas, &gpu, &nodes);
    GraphTime(call_lt, &lgpu, &lnodes);
    std::printf("%-6s %5d  gpu %7.2f (%.1f kernels)  lt-gpu %7.2f (%.1f kernels)\n", T::Name(), n,
                gpu, nodes, lgpu, lnodes);
  } else {
    double bs, bi, ls, li;
    Time(call_blas, &bs, &bi);
    Time(call_lt, &ls, &li);
    std::printf("%-6s %5d  blas %7.2f  issue %7.2f  lt %7.2f  lt-iss %7.2f  lt/blas %.3f\n",
                T::Name(), n, bs, bi, ls, li, ls / bs);
  }
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(lc);
  cublasLtMatmulDescDestroy(op);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
}

}  // namespace

int main() {
  cublasHandle_t blas;
  cublasLtHandle_t lt;
  CHECK_BLAS(cublasCreate(&blas));
  CHECK_BLAS(cublasSetStream(blas, cudaStreamPerThread));
  CHECK_BLAS(cublasSetMathMode(blas, CUBLAS_DEFAULT_MATH));
  CHECK_BLAS(cublasLtCreate(&lt));
  const size_t work_bytes = 32u << 20;
  void* work;
  CHECK_CUDA(cudaMalloc(&work, work_bytes));
  const int sizes[] = {16, 32, 64, 128, 256, 512, 1024};
  for (bool graph : {false, true}) {
    // The eager rows use cuBLAS's own workspace, as Kaldi and cuctx do; capture needs one set.
    if (graph) CHECK_BLAS(cublasSetWorkspace(blas, work, work_bytes));
    for (int n : sizes) RunSize<float>(blas, lt, work, work_bytes, n, graph);
    for (int n : sizes) RunSize<double>(blas, lt, work, work_bytes, n, graph);
  }
  cudaFree(work);
  cublasLtDestroy(lt);
  cublasDestroy(blas);
  return 0;
}
