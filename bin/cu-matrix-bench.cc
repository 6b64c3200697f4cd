// bin/cu-matrix-bench.cc: throughput of the Cu container families (copies, element-wise,
// reductions, softmax, BLAS, host transfers) against cudaMemcpy device-to-device, raw cuBLAS GEMM
// and pinned cudaMemcpy, all measured in the same run on the same device.
// SPDX-License-Identifier: Apache-2.0
//
// Every op is timed with CUDA events around a batch of calls on this thread's stream, with no
// synchronisation between calls (ops that return a value to the host, such as Sum, wait by design
// and are timed that way). Memory-bound ops report GB/s counted as the bytes their definition must
// read and write (e.g. AddMat: read A, read and write this = 3 matrix sizes) and the ratio to a
// cudaMemcpy D2D of one matrix (read + write = 2 sizes). This tool calls CUDA and cuBLAS directly
// on purpose: they are the baselines (tools/lint.sh exempts bin/*-bench.cc).
#include "base/error.h"
#include "base/parse-options.h"
#include "bin/bench-table.h"
#include "cudamatrix/cu-array.h"
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-math.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-profile.h"
#include "cudamatrix/cu-sparse-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "cudamatrix/internal/cu-blas-wrappers.h"
#include "cudamatrix/internal/cu-kernels.h"
#include "cudamatrix/pinned-matrix.h"
#include "cutool/tool.h"
#include "matrix/matrix.h"
#include "matrix/sparse-matrix.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

// LAPACK's Cholesky and inverse-from-Cholesky, as OpenBLAS exports them (Fortran interface):
// the CPU baseline of the solver rows.
extern "C" {
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info);
void spotri_(const char* uplo, const int* n, float* a, const int* lda, int* info);
void dpotri_(const char* uplo, const int* n, double* a, const int* lda, int* info);
}

namespace cuctx {
namespace {

using bench::Row;
using bench::Table;

// Seconds per call of fn, from CUDA events around a batch on this thread's stream. The batch size
// is chosen from one timed call so that a case takes about `budget` seconds (3..1000 calls).
double TimeCalls(const std::function<void()>& fn, double budget) {
  cudaStream_t stream = cudaStreamPerThread;
  cudaEvent_t start, stop;
  CUCTX_CUDA_CHECK(cudaEventCreate(&start));
  CUCTX_CUDA_CHECK(cudaEventCreate(&stop));
  auto batch = [&](int calls) {
    CUCTX_CUDA_CHECK(cudaEventRecord(start, stream));
    for (int i = 0; i < calls; ++i) fn();
    CUCTX_CUDA_CHECK(cudaEventRecord(stop, stream));
    CUCTX_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUCTX_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms * 1e-3 / calls;
  };
  batch(1);  // warm-up: first-call costs (handles, workspaces, caches)
  const double one = batch(1);
  int calls = one > 0 ? static_cast<int>(budget / one) : 1000;
  calls = std::max(3, std::min(1000, calls));
  const double t = batch(calls);
  CUCTX_CUDA_CHECK(cudaEventDestroy(start));
  CUCTX_CUDA_CHECK(cudaEventDestroy(stop));
  return t;
}

template <typename Real>
const char* PrecisionName() {
  return sizeof(Real) == 4 ? "float" : "double";
}

// One benchmark configuration: a precision and a shape, with its baselines measured once.
template <typename Real>
class MatrixBench {
 public:
  MatrixBench(MatrixIndexT rows, MatrixIndexT cols, double budget, Table* table)
      : rows_(rows), cols_(cols), budget_(budget), table_(table) {
    std::ostringstream os;
    os << PrecisionName<Real>() << " " << rows << "x" << cols;
    shape_ = os.str();
    bytes_ = static_cast<double>(rows) * cols * sizeof(Real);
  }

  void Run(const std::string& only) {
    CuMatrix<Real> a(rows_, cols_, kUndefined), b(rows_, cols_, kUndefined),
        c(rows_, cols_, kUndefined);
    a.SetZero();
    a.Add(0.5);
    b.Set(0.25);
    c.Set(1.5);
    MeasureD2D(a, &b);
    auto want = [&](const char* family) { return only.empty() || only == family; };
    if (want("copy")) Copies(a, &b);
    if (want("elementwise")) Elementwise(a, &b, &c);
    if (want("reduce")) Reductions(a, &b);
    if (want("softmax")) Softmax(a, &b);
    if (want("gather")) Gathers(a, &b);
    if (want("blas")) Blas();
    if (want("host")) HostCopies(&a);
  }

 private:
  // cudaMemcpyAsync D2D of one matrix (its stride-padded span, as a single block).
  void MeasureD2D(const CuMatrix<Real>& a, CuMatrix<Real>* b) {
    const size_t span = a.SizeInBytes();
    const double t = TimeCalls(
        [&] {
          CUCTX_CUDA_CHECK(cudaMemcpyAsync(b->Data(), a.Data(), span, cudaMemcpyDeviceToDevice,
                                           cudaStreamPerThread));
        },
        budget_);
    d2d_seconds_ = t;
    d2d_gbps_ = 2.0 * static_cast<double>(span) / t / 1e9;
    table_->Add({"baseline", shape_, "GB/s", d2d_gbps_, "cudaMemcpy D2D", d2d_gbps_, 1.0, ""});
  }

  // A memory-bound op moving `sizes` matrix sizes per call, against the D2D copy.
  void Bandwidth(const char* group, const std::string& name, double sizes, const char* target,
                 const std::function<void()>& fn) {
    const double t = TimeCalls(fn, budget_);
    const double gbps = sizes * bytes_ / t / 1e9;
    table_->Add({group, name + " " + shape_, "GB/s", gbps, "cudaMemcpy D2D", d2d_gbps_,
                 gbps / d2d_gbps_, target});
  }

  void Copies(const CuMatrix<Real>& a, CuMatrix<Real>* b) {
    Bandwidth("copy", "CopyFromMat", 2, "", [&] { b->CopyFromMat(a); });
    if (rows_ == cols_)
      Bandwidth("copy", "CopyFromMat(kTrans)", 2, "", [&] { b->CopyFromMat(a, kTrans); });
    using Other = typename std::conditional<sizeof(Real) == 4, double, float>::type;
    CuMatrix<Other> o(rows_, cols_, kUndefined);
    // Reads sizeof(Other) bytes and writes sizeof(Real) per element.
    const double sizes = 1.0 + static_cast<double>(sizeof(Other)) / sizeof(Real);
    Bandwidth("copy", std::string("CopyFromMat(") + PrecisionName<Other>() + ")", sizes, "",
              [&] { b->CopyFromMat(o); });
    Bandwidth("copy", "SetZero", 1, "", [&] { b->SetZero(); });
    Bandwidth("copy", "Set", 1, "", [&] { b->Set(2.0); });
  }

  void Elementwise(const CuMatrix<Real>& a, CuMatrix<Real>* b, CuMatrix<Real>* c) {
    const char* t = ">= 0.85";
    Bandwidth("elementwise", "Scale", 2, t, [&] { b->Scale(1.0); });
    Bandwidth("elementwise", "Add", 2, t, [&] { b->Add(0.0); });
    Bandwidth("elementwise", "AddMat", 3, t, [&] { b->AddMat(0.5, a); });
    Bandwidth("elementwise", "MulElements", 3, t, [&] { c->MulElements(a); });
    Bandwidth("elementwise", "DivElements", 3, t, [&] { c->DivElements(a); });
    Bandwidth("elementwise", "Sigmoid", 2, t, [&] { b->Sigmoid(a); });
    Bandwidth("elementwise", "Tanh", 2, t, [&] { b->Tanh(a); });
    Bandwidth("elementwise", "ApplyExp", 2, t, [&] { b->ApplyExp(); });
    Bandwidth("elementwise", "DiffSigmoid", 3, t, [&] { c->DiffSigmoid(a, *b); });
    CuVector<Real> col(cols_), row(rows_);
    col.Set(1.0);
    row.Set(1.0);
    Bandwidth("elementwise", "ApplyPow(2)", 2, t, [&] { c->ApplyPow(2.0); });
    Bandwidth("elementwise", "ApplyFloor", 2, t, [&] { c->ApplyFloor(-1.0); });
    Bandwidth("elementwise", "Max(A)", 3, t, [&] { c->Max(a); });
    Bandwidth("elementwise", "AddVecToRows", 2, t, [&] { c->AddVecToRows(1.0, col, 1.0); });
    Bandwidth("elementwise", "MulRowsVec", 2, t, [&] { c->MulRowsVec(row); });
    Bandwidth("elementwise", "AddMatMatElements", 4, t,
              [&] { c->AddMatMatElements(1.0, a, *b, 1.0); });
    Bandwidth("elementwise", "AddDiagVecMat", 3, t,
              [&] { c->AddDiagVecMat(1.0, row, a, kNoTrans, 0.0); });
    Bandwidth("elementwise", "AddMatDiagVec", 3, t,
              [&] { c->AddMatDiagVec(1.0, a, kNoTrans, col, 0.0); });
  }

  void Reductions(const CuMatrix<Real>& a, CuMatrix<Real>* b) {
    const char* t = ">= 0.75";
    Bandwidth("reduce", "Sum (waits)", 1, t, [&] { sink_ += a.Sum(); });
    Bandwidth("reduce", "FrobeniusNorm (waits)", 1, t, [&] { sink_ += a.FrobeniusNorm(); });
    CuVector<Real> per_row(rows_), per_col(cols_);
    Bandwidth("reduce", "AddColSumMat (row sums)", 1, t,
              [&] { per_row.AddColSumMat(1.0, a, 0.0); });
    Bandwidth("reduce", "AddRowSumMat (column sums)", 1, t,
              [&] { per_col.AddRowSumMat(1.0, a, 0.0); });
    CuArray<int32> ids;
    Bandwidth("reduce", "FindRowMaxId", 1, t, [&] { b->FindRowMaxId(&ids); });
    Bandwidth("reduce", "Max (waits)", 1, t, [&] { sink_ += a.Max(); });
    Bandwidth("reduce", "TraceMatMat(kTrans) (waits)", 2, t,
              [&] { sink_ += TraceMatMat(a, *b, kTrans); });
    if (rows_ == cols_)
      Bandwidth("reduce", "TraceMatMat(kNoTrans) (waits)", 2, t,
                [&] { sink_ += TraceMatMat(a, *b, kNoTrans); });
    ReadbackFloors(a, *b);
  }

  // The reductions that return a value, against their physical floor measured here: the time of
  // a device-to-device copy of the bytes they read (cudaMemcpyAsync, MeasureD2D) plus one round
  // trip of a kernel that posts one word to the host-visible read-back slot (Sum() of a 1 x 1
  // matrix: one launch, one posted result, the host's wait). Ratio = time / floor; target <= 1.15.
  void ReadbackFloors(const CuMatrix<Real>& a, const CuMatrix<Real>& b) {
    CuMatrix<Real> one(1, 1);
    const double round_trip = TimeCalls([&] { sink_ += one.Sum(); }, budget_);
    table_->Add({"readback", "round trip (1x1 Sum)", "us", round_trip * 1e6, "", 0, 0, ""});
    table_->Add(
        {"readback", "copy of one matrix " + shape_, "us", d2d_seconds_ * 1e6, "", 0, 0, ""});
    auto row = [&](const char* name, int matrices, const std::function<void()>& fn) {
      const double t = TimeCalls(fn, budget_);
      const double floor = matrices * d2d_seconds_ + round_trip;
      table_->Add({"readback", std::string(name) + " " + shape_, "us", t * 1e6, "copy + round trip",
                   floor * 1e6, t / floor, "<= 1.15"});
    };
    row("Sum", 1, [&] { sink_ += a.Sum(); });
    row("FrobeniusNorm", 1, [&] { sink_ += a.FrobeniusNorm(); });
    row("Max", 1, [&] { sink_ += a.Max(); });
    row("TraceMatMat(kTrans)", 2, [&] { sink_ += TraceMatMat(a, b, kTrans); });
  }

  void Softmax(const CuMatrix<Real>& a, CuMatrix<Real>* b) {
    const char* t = ">= 0.75";
    Bandwidth("softmax", "SoftMaxPerRow", 2, t, [&] { b->SoftMaxPerRow(a); });
    Bandwidth("softmax", "LogSoftMaxPerRow", 2, t, [&] { b->LogSoftMaxPerRow(a); });
    Bandwidth("softmax", "ApplySoftMaxPerRow", 2, t, [&] { b->ApplySoftMaxPerRow(); });
    CuMatrix<Real> value(rows_, cols_), diff(rows_, cols_);
    value.SoftMaxPerRow(a);
    diff.Set(0.5);
    Bandwidth("softmax", "DiffSoftmaxPerRow", 3, t, [&] { b->DiffSoftmaxPerRow(value, diff); });
    Bandwidth("softmax", "DiffLogSoftmaxPerRow", 3, t,
              [&] { b->DiffLogSoftmaxPerRow(value, diff); });
    CuMatrix<Real> pnorm(rows_, cols_ / 4);
    // Reads the input and writes a quarter of its size.
    Bandwidth("softmax", "GroupPnorm(2), groups of 4", 1.25, t, [&] { pnorm.GroupPnorm(a, 2.0); });
    Bandwidth("softmax", "GroupMax, groups of 4", 1.25, t, [&] { pnorm.GroupMax(a); });
  }

  // Row and column gathers with a random permutation (one read of the source rows, one write).
  void Gathers(const CuMatrix<Real>& a, CuMatrix<Real>* b) {
    const char* t = "";  // the issue sets no target for gathers
    std::vector<int32> perm(rows_), cperm(cols_);
    for (MatrixIndexT i = 0; i < rows_; ++i) perm[i] = (static_cast<int64>(i) * 7919) % rows_;
    for (MatrixIndexT i = 0; i < cols_; ++i) cperm[i] = (static_cast<int64>(i) * 7919) % cols_;
    CuArray<int32> rows(perm), cols(cperm);
    Bandwidth("gather", "CopyRows", 2, t, [&] { b->CopyRows(a, rows); });
    Bandwidth("gather", "AddRows", 3, t, [&] { b->AddRows(1.0, a, rows); });
    Bandwidth("gather", "CopyCols", 2, t, [&] { b->CopyCols(a, cols); });
    Bandwidth("gather", "AddToRows", 3, t, [&] { a.AddToRows(1.0, rows, b); });
    if (rows_ == cols_)
      Bandwidth("gather", "CopyLowerToUpper", 1, "", [&] { b->CopyLowerToUpper(); });
  }

  // AddMatMat C (rows x cols) = A (rows x k) B (k x cols), k = cols, against the same GEMM through
  // cuBLAS on packed operands (the handle and math mode cuctx uses).
  void Blas() {
    const MatrixIndexT m = rows_, n = cols_, k = cols_;
    CuMatrix<Real> A(m, k, kUndefined, kStrideEqualNumCols),
        B(k, n, kUndefined, kStrideEqualNumCols), C(m, n, kUndefined, kStrideEqualNumCols);
    A.Set(0.001);
    B.Set(0.002);
    C.SetZero();
    const double flops = 2.0 * m * n * k;
    const double t_cuctx =
        TimeCalls([&] { C.AddMatMat(1.0, A, kNoTrans, B, kNoTrans, 0.0); }, budget_);
    cublasHandle_t handle = internal::ThreadCublasHandle();
    const Real alpha = 1, beta = 0;
    // Row-major C = A B is column-major C^T = B^T A^T: pass B first.
    const double t_raw = TimeCalls(
        [&] {
          if constexpr (sizeof(Real) == 4)
            CUCTX_CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha,
                                           B.Data(), n, A.Data(), k, &beta, C.Data(), n));
          else
            CUCTX_CUBLAS_CHECK(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha,
                                           B.Data(), n, A.Data(), k, &beta, C.Data(), n));
        },
        budget_);
    table_->Add({"blas", "AddMatMat " + shape_ + "x" + std::to_string(k), "TFLOP/s",
                 flops / t_cuctx / 1e12, "cublas gemm", flops / t_raw / 1e12, t_raw / t_cuctx,
                 n == 4096 ? ">= 0.95" : ""});
    // The same product with the pitched (default-stride) storage CuMatrix normally has.
    CuMatrix<Real> Ap(m, k), Bp(k, n), Cp(m, n);
    const double t_pitched =
        TimeCalls([&] { Cp.AddMatMat(1.0, Ap, kNoTrans, Bp, kNoTrans, 0.0); }, budget_);
    table_->Add({"blas", "AddMatMat pitched " + shape_, "TFLOP/s", flops / t_pitched / 1e12,
                 "cublas gemm", flops / t_raw / 1e12, t_raw / t_pitched, ""});
  }

  // Host -> device: CopyFromMat from a pageable Matrix and from a PinnedMatrix, against cudaMemcpy
  // from the same pinned buffer (bytes counted once: the transfer).
  void HostCopies(CuMatrix<Real>* a) {
    Matrix<Real> pageable(rows_, cols_, kUndefined, kStrideEqualNumCols);
    pageable.Set(1.0);
    PinnedMatrix<Real> pinned(rows_, cols_, kUndefined, kStrideEqualNumCols);
    pinned.Set(1.0);
    CuMatrix<Real> packed(rows_, cols_, kUndefined, kStrideEqualNumCols);
    const double t_raw = TimeCalls(
        [&] {
          CUCTX_CUDA_CHECK(cudaMemcpyAsync(packed.Data(), pinned.Data(), bytes_,
                                           cudaMemcpyHostToDevice, cudaStreamPerThread));
        },
        budget_);
    const double raw_gbps = bytes_ / t_raw / 1e9;
    table_->Add({"baseline", shape_, "GB/s", raw_gbps, "cudaMemcpy pinned H2D", raw_gbps, 1.0, ""});
    auto row = [&](const std::string& name, const char* target, const std::function<void()>& fn) {
      const double t = TimeCalls(fn, budget_);
      table_->Add({"host", name + " " + shape_, "GB/s", bytes_ / t / 1e9, "cudaMemcpy pinned H2D",
                   raw_gbps, t_raw / t, target});
    };
    row("CopyFromMat(PinnedMatrix)", ">= 0.90", [&] { a->CopyFromMat(pinned); });
    row("CopyFromMat(PinnedMatrix) packed", "", [&] { packed.CopyFromMat(pinned); });
    row("CopyFromMat(Matrix)", "", [&] { a->CopyFromMat(pageable); });
    row("CopyToMat(PinnedMatrix)", "", [&] { a->CopyToMat(&pinned); });
    row("CopyToMat(Matrix)", "", [&] { a->CopyToMat(&pageable); });
  }

  MatrixIndexT rows_, cols_;
  double budget_;
  Table* table_;
  std::string shape_;
  double bytes_ = 0;
  double d2d_gbps_ = 0;
  double d2d_seconds_ = 0;  // one cudaMemcpyAsync D2D of a matrix (MeasureD2D)
  double sink_ = 0;
};

// Host LAPACK (OpenBLAS) on a packed n x n matrix: potrf, then potri when `invert`.
template <typename Real>
void HostPotrf(Matrix<Real>* a, bool invert) {
  const int n = a->NumRows(), lda = a->Stride();
  int info = 0;
  const char uplo = 'U';  // row-major lower triangle = column-major upper triangle
  if constexpr (sizeof(Real) == 4) {
    spotrf_(&uplo, &n, a->Data(), &lda, &info);
    if (info == 0 && invert) spotri_(&uplo, &n, a->Data(), &lda, &info);
  } else {
    dpotrf_(&uplo, &n, a->Data(), &lda, &info);
    if (info == 0 && invert) dpotri_(&uplo, &n, a->Data(), &lda, &info);
  }
  if (info != 0) CUCTX_ERR << "host LAPACK potrf/potri failed with info " << info;
}

// Cholesky (n^3 / 3 flops) and SymInvertPosDef (n^3) of a random positive definite matrix on the
// GPU (cuSOLVER through CuMatrix), against LAPACK potrf/potri of OpenBLAS on the host. Each GPU
// call restores the input first (an n^2 copy, included in the time).
template <typename Real>
void SolverBench(MatrixIndexT n, double budget, Table* table) {
  CuMatrix<Real> r(n, n), spd(n, n), work(n, n);
  r.SetRandn();
  spd.AddMatMat(1.0 / n, r, kNoTrans, r, kTrans, 0.0);
  spd.AddToDiag(1.0);
  spd.CopyLowerToUpper();
  Matrix<Real> host_spd(n, n, kUndefined, kStrideEqualNumCols);
  spd.CopyToMat(&host_spd);
  const std::string shape = std::string(PrecisionName<Real>()) + " n=" + std::to_string(n);
  for (bool invert : {false, true}) {
    const double flops =
        invert ? static_cast<double>(n) * n * n : static_cast<double>(n) * n * n / 3;
    const double t_gpu = TimeCalls(
        [&] {
          work.CopyFromMat(spd);
          if (invert)
            work.SymInvertPosDef();
          else
            work.Cholesky();
        },
        budget);
    Matrix<Real> host(n, n, kUndefined, kStrideEqualNumCols);
    double t_cpu = 1e30;
    for (int rep = 0; rep < 2; ++rep) {
      host.CopyFromMat(host_spd);
      const auto t0 = std::chrono::steady_clock::now();
      HostPotrf(&host, invert);
      t_cpu = std::min(
          t_cpu, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    table->Add({"solver", std::string(invert ? "SymInvertPosDef " : "Cholesky ") + shape, "TFLOP/s",
                flops / t_gpu / 1e12,
                invert ? "OpenBLAS potrf+potri (host)" : "OpenBLAS potrf (host)",
                flops / t_cpu / 1e12, t_cpu / t_gpu, ""});
  }
}

// Sparse x dense products (cuSPARSE SpMM through CuMatrix::AddSmatMat / AddMatSmat) at a given
// density, against the dense GEMM of the same shape (AddMatMat on the densified sparse operand),
// and AddMatSmat (each of its GPU paths, and the transpose it caches) against AddSmatMat.
template <typename Real>
void SparseBench(MatrixIndexT n, double density, double budget, Table* table) {
  std::vector<std::vector<std::pair<MatrixIndexT, Real>>> pairs(n);
  uint64_t state = 12345;
  auto next = [&state] {  // a small LCG: reproducible and fast for millions of draws
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) / 9007199254740992.0;
  };
  for (MatrixIndexT r = 0; r < n; ++r)
    for (MatrixIndexT c = 0; c < n; ++c)
      if (next() < density) pairs[r].emplace_back(c, static_cast<Real>(next() - 0.5));
  SparseMatrix<Real> host(n, pairs);
  CuSparseMatrix<Real> sparse(host);
  CuMatrix<Real> dense_a(n, n), b(n, n), c(n, n);
  sparse.CopyToMat(&dense_a);
  b.Set(0.001);
  const double t_dense =
      TimeCalls([&] { c.AddMatMat(1.0, dense_a, kNoTrans, b, kNoTrans, 0.0); }, budget);
  const double t_smm = TimeCalls([&] { c.AddSmatMat(1.0, sparse, kNoTrans, b, 0.0); }, budget);
  // TimeCalls' warm-up call builds the sparse matrix's transpose cache, which AddMatSmat keeps.
  const double t_msm = TimeCalls([&] { c.AddMatSmat(1.0, b, sparse, kNoTrans, 0.0); }, budget);
  // The same product with the transpose stored as such (kTrans needs no cache).
  const CuSparseMatrix<Real> sparse_t(sparse, kTrans);
  const double t_msm_t = TimeCalls([&] { c.AddMatSmat(1.0, b, sparse_t, kTrans, 0.0); }, budget);
  // What building the cache costs once per matrix.
  const double t_csc = TimeCalls([&] { CuSparseMatrix<Real> t(sparse, kTrans); }, budget);
  // The other AddMatSmat paths (see internal::MatSmatPath), kNoTrans.
  internal::SetMatSmatPath(internal::MatSmatPath::kColMajor);
  const double t_col = TimeCalls([&] { c.AddMatSmat(1.0, b, sparse, kNoTrans, 0.0); }, budget);
  internal::SetMatSmatPath(internal::MatSmatPath::kTransposeOp);
  const double t_op = TimeCalls([&] { c.AddMatSmat(1.0, b, sparse, kNoTrans, 0.0); }, budget);
  internal::SetMatSmatPath(internal::MatSmatPath::kRowMajor);
  char what[96];
  std::snprintf(what, sizeof(what), "%s n=%d, %.0f%% nonzero", PrecisionName<Real>(), n,
                density * 100);
  table->Add({"sparse", std::string("AddSmatMat ") + what, "ms", t_smm * 1e3, "dense AddMatMat",
              t_dense * 1e3, t_dense / t_smm, ""});
  table->Add({"sparse", std::string("AddMatSmat ") + what, "ms", t_msm * 1e3, "dense AddMatMat",
              t_dense * 1e3, t_dense / t_msm, ""});
  // Issue 14: AddMatSmat within 1.5x of AddSmatMat (ratio >= 0.67).
  const char* target = ">= 0.67";
  table->Add({"sparse", std::string("AddMatSmat ") + what, "ms", t_msm * 1e3, "AddSmatMat",
              t_smm * 1e3, t_smm / t_msm, target});
  table->Add({"sparse", std::string("AddMatSmat(kTrans) ") + what, "ms", t_msm_t * 1e3,
              "AddSmatMat", t_smm * 1e3, t_smm / t_msm_t, target});
  table->Add({"sparse", std::string("AddMatSmat col-major path ") + what, "ms", t_col * 1e3,
              "AddSmatMat", t_smm * 1e3, t_smm / t_col, ""});
  table->Add({"sparse", std::string("AddMatSmat transpose-op path ") + what, "ms", t_op * 1e3,
              "AddSmatMat", t_smm * 1e3, t_smm / t_op, ""});
  table->Add({"sparse", std::string("CuSparseMatrix(kTrans) ") + what, "ms", t_csc * 1e3,
              "AddSmatMat", t_smm * 1e3, t_smm / t_csc, ""});
}

// ---- lstm family: cu::ComputeLstmNonlinearity / cu::BackpropLstmNonlinearity ----------------
// rows x C cells (input rows x 5C) against a cudaMemcpy D2D of the input matrix measured here.
// Bytes per call are the per-row matrices each pass must read and write: forward reads the input
// (5C) and writes the output (2C); backward reads the input and output_deriv (2C) and writes
// input_deriv (5C); the 3 x C and 5 x C operands are left out (under 0.1% at these sizes).
template <typename Real>
void LstmBench(MatrixIndexT rows, MatrixIndexT cells, double budget, Table* table) {
  CuMatrix<Real> input(rows, 5 * cells, kUndefined), copy(rows, 5 * cells, kUndefined);
  input.Set(0.25);
  CuMatrix<Real> params(3, cells), output(rows, 2 * cells, kUndefined),
      output_deriv(rows, 2 * cells, kUndefined), input_deriv(rows, 5 * cells, kUndefined),
      params_deriv(3, cells), self_repair_sum(5, cells);
  params.Set(0.5);
  output_deriv.Set(0.125);
  CuMatrix<double> deriv_sum(5, cells), value_sum(5, cells);
  CuVector<Real> config(10);
  config.Set(0.05);
  const size_t span = input.SizeInBytes();
  const double t_d2d = TimeCalls(
      [&] {
        CUCTX_CUDA_CHECK(cudaMemcpyAsync(copy.Data(), input.Data(), span, cudaMemcpyDeviceToDevice,
                                         cudaStreamPerThread));
      },
      budget);
  const double d2d_gbps = 2.0 * static_cast<double>(span) / t_d2d / 1e9;
  std::ostringstream os;
  os << PrecisionName<Real>() << " " << rows << "x" << cells;
  const std::string shape = os.str();
  table->Add(
      {"baseline", shape + " (input)", "GB/s", d2d_gbps, "cudaMemcpy D2D", d2d_gbps, 1.0, ""});
  const double row_bytes = static_cast<double>(rows) * cells * sizeof(Real);
  const double t_fwd =
      TimeCalls([&] { cu::ComputeLstmNonlinearity(input, params, &output); }, budget);
  const double fwd_gbps = 7 * row_bytes / t_fwd / 1e9;
  table->Add({"lstm", "LstmForward " + shape, "GB/s", fwd_gbps, "cudaMemcpy D2D", d2d_gbps,
              fwd_gbps / d2d_gbps, ""});
  const double t_bwd = TimeCalls(
      [&] {
        cu::BackpropLstmNonlinearity(input, params, output_deriv, deriv_sum, config, 1000.0,
                                     &input_deriv, &params_deriv, &value_sum, &deriv_sum,
                                     &self_repair_sum);
      },
      budget);
  const double bwd_gbps = 12 * row_bytes / t_bwd / 1e9;
  table->Add({"lstm", "LstmBackprop " + shape, "GB/s", bwd_gbps, "cudaMemcpy D2D", d2d_gbps,
              bwd_gbps / d2d_gbps, ""});
}
// ---- end of lstm family ---------------------------------------------------------------------

// "1024,4096" -> "1024x1024,4096x4096" (so ParseShapes checks the items).
// ---- small-op latency: host cost per call (launch-bound sizes) ---------------------------------

// Host microseconds per call of fn, issued `kCalls` times back to back (the clock stops before
// the device is waited for); median of several batches. At these sizes the GPU keeps up, so this
// is what one thread pays to issue the op.
double HostUsPerCall(const std::function<void()>& fn) {
  constexpr int kCalls = 200;
  fn();
  CUCTX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
  std::vector<double> t;
  for (int rep = 0; rep < 9; ++rep) {
    const double t0 = bench::Now();
    for (int i = 0; i < kCalls; ++i) fn();
    t.push_back((bench::Now() - t0) * 1e6 / kCalls);
    CUCTX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
  }
  return bench::Percentile(t, 0.5);
}

// AddMatMat, Sigmoid, AddVecToRows and SoftMaxPerRow on rows x cols float matrices against a bare
// kernel launch and a raw cuBLAS GEMM of the same shape on the same handle; CopyFromMat and a
// vector's CopyFromVec against the runtime's device-to-device copy of the same bytes.
void LatencyBench(MatrixIndexT rows, MatrixIndexT cols, Table* table) {
  CuMatrix<float> x(rows, cols), w(cols, cols), y(rows, cols);
  CuVector<float> b(cols);
  x.SetRandn();
  w.SetRandn();
  b.SetRandn();
  cublasHandle_t handle = CuDevice::Instantiate().GetCublasHandle();
  const float one = 1.0f, zero = 0.0f;
  const double bare = HostUsPerCall([] { LaunchNoOp(cudaStreamPerThread); });
  const double gemm = HostUsPerCall([&] {
    // y = x w^T in row-major terms: column-major y^T = w x^T.
    CUCTX_CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, cols, rows, cols, &one,
                                   w.Data(), w.Stride(), x.Data(), x.Stride(), &zero, y.Data(),
                                   y.Stride()));
  });
  char shape[32];
  std::snprintf(shape, sizeof(shape), "%dx%d", rows, cols);
  auto row = [&](const char* op, const std::function<void()>& fn, const char* baseline,
                 double base) {
    const double us = HostUsPerCall(fn);
    table->Add({"latency", std::string(op) + " " + shape, "host us/call", us, baseline, base,
                base / us, ""});
  };
  row(
      "AddMatMat", [&] { y.AddMatMat(1.0f, x, kNoTrans, w, kTrans, 0.0f); }, "raw cublasSgemm",
      gemm);
  row(
      "Sigmoid", [&] { y.Sigmoid(x); }, "bare kernel launch", bare);
  row(
      "AddVecToRows", [&] { y.AddVecToRows(1.0f, b); }, "bare kernel launch", bare);
  row(
      "SoftMaxPerRow", [&] { y.SoftMaxPerRow(x); }, "bare kernel launch", bare);
  // Same-type copies: cuctx's small-copy kernel against the runtime's device-to-device copies.
  const double memcpy2d = HostUsPerCall([&] {
    CUCTX_CUDA_CHECK(cudaMemcpy2DAsync(y.Data(), y.Stride() * sizeof(float), x.Data(),
                                       x.Stride() * sizeof(float), cols * sizeof(float), rows,
                                       cudaMemcpyDeviceToDevice, cudaStreamPerThread));
  });
  row(
      "CopyFromMat", [&] { y.CopyFromMat(x); }, "raw cudaMemcpy2DAsync", memcpy2d);
  CuVector<float> c(cols);
  const double memcpy1d = HostUsPerCall([&] {
    CUCTX_CUDA_CHECK(cudaMemcpyAsync(c.Data(), b.Data(), cols * sizeof(float),
                                     cudaMemcpyDeviceToDevice, cudaStreamPerThread));
  });
  row(
      "CuVector::CopyFromVec", [&] { c.CopyFromVec(b); }, "raw cudaMemcpyAsync", memcpy1d);
}

// ---- profiling overhead: per-op profiling (--verbose >= 1) off against on ---------------------

// Host microseconds per call of Sigmoid and AddMatMat at 32x256 (launch-bound: the host cost is the
// op's whole cost) with profiling on (verbose 1: two CUDA events and an NVTX range per op) against
// off (verbose 0), and the cost of an op's profiling scope when off, against the same loop without
// it (the hooks' whole cost when profiling is off).
void ProfileOverheadBench(Table* table) {
  const MatrixIndexT rows = 32, cols = 256;
  CuMatrix<float> x(rows, cols), w(cols, cols), y(rows, cols);
  x.SetRandn();
  w.SetRandn();
  const int old_level = GetVerboseLevel();
  auto row = [&](const char* op, const std::function<void()>& fn) {
    SetVerboseLevel(0);
    const double off = HostUsPerCall(fn);
    SetVerboseLevel(1);
    const double on = HostUsPerCall(fn);
    SetVerboseLevel(old_level);
    table->Add({"profile", std::string(op) + " 32x256 profiled", "host us/call", on,
                "profiling off", off, off / on, ""});
  };
  row("Sigmoid", [&] { y.Sigmoid(x); });
  row("AddMatMat", [&] { y.AddMatMat(1.0f, x, kNoTrans, w, kTrans, 0.0f); });

  SetVerboseLevel(0);
  constexpr int kIterations = 10000000;
  volatile int sink = 0;
  auto loop_ns = [&](bool with_scope) {
    std::vector<double> t;
    for (int rep = 0; rep < 5; ++rep) {
      const double t0 = bench::Now();
      if (with_scope) {
        for (int i = 0; i < kIterations; ++i) {
          internal::CuOpScope op_scope("cu-matrix-bench::Empty");
          sink = sink + 1;
        }
      } else {
        for (int i = 0; i < kIterations; ++i) sink = sink + 1;
      }
      t.push_back((bench::Now() - t0) * 1e9 / kIterations);
    }
    return bench::Percentile(t, 0.5);
  };
  const double bare = loop_ns(false), scoped = loop_ns(true);
  SetVerboseLevel(old_level);
  table->Add({"profile", "op scope, profiling off", "host ns/call", scoped, "loop without it", bare,
              bare / scoped, "off: 0 within noise"});
}

std::string SquareShapes(const std::string& sizes) {
  std::stringstream in(sizes), out;
  std::string item;
  bool first = true;
  while (std::getline(in, item, ',')) {
    out << (first ? "" : ",") << item << "x" << item;
    first = false;
  }
  return out.str();
}

// Parses "RxC,RxC,..." into shapes; throws naming the bad item.
std::vector<std::pair<MatrixIndexT, MatrixIndexT>> ParseShapes(const std::string& text) {
  std::vector<std::pair<MatrixIndexT, MatrixIndexT>> shapes;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    int rows = 0, cols = 0;
    char x = 0, extra = 0;
    if (std::sscanf(item.c_str(), "%d%c%d%c", &rows, &x, &cols, &extra) != 3 || x != 'x' ||
        rows < 1 || cols < 1)
      CUCTX_ERR << "--shapes: expected ROWSxCOLS items separated by commas, got '" << item << "'";
    shapes.emplace_back(rows, cols);
  }
  if (shapes.empty()) CUCTX_ERR << "--shapes: no shape given";
  return shapes;
}

}  // namespace
}  // namespace cuctx

int main(int argc, char* argv[]) {
  using namespace cuctx;
  const char* usage =
      "Benchmarks the Cu container families (copies, element-wise ops, reductions, softmax,\n"
      "AddMatMat, host transfers) on the GPU, with the ratio to cudaMemcpy D2D bandwidth, raw\n"
      "cuBLAS GEMM and pinned cudaMemcpy measured in the same run. Prints one table; ratio is\n"
      "cuctx / baseline throughput (1.0 = as fast as the baseline).\n"
      "Usage: cu-matrix-bench [options]\n"
      "Exit status: 0 done, 1 error, 2 usage error, 3 no usable GPU.\n";
  std::string shapes_text = "4096x4096,16384x4096", precision = "both", only;
  double budget = 0.1;
  bool csv = false;
  std::string solver_sizes = "1024,4096";
  auto register_options = [&](ParseOptions* po) {
    po->Register("shapes", &shapes_text, "matrix shapes ROWSxCOLS, comma-separated");
    po->Register("precision", &precision, "float, double or both");
    po->Register(
        "only", &only,
        "run one family: copy, elementwise, reduce, softmax, gather, blas, host, solver, "
        "sparse, lstm, latency (host cost per call of small ops) or profile (the same with "
        "per-op profiling on and off); default all");
    po->Register("budget", &budget, "seconds of GPU time per case (about)");
    po->Register("csv", &csv, "print the final table as CSV");
    po->Register("solver-sizes", &solver_sizes,
                 "matrix sizes n of the solver rows (Cholesky, SymInvertPosDef), comma-separated");
  };
  auto body = [&](const ToolArgs& args) {
    std::vector<std::pair<MatrixIndexT, MatrixIndexT>> shapes;
    try {
      shapes = ParseShapes(shapes_text);
      ParseShapes(SquareShapes(solver_sizes));
    } catch (const Error& e) {
      throw ToolUsageError(e.what());
    }
    if (precision != "float" && precision != "double" && precision != "both")
      throw ToolUsageError("--precision must be float, double or both, got '" + precision + "'");
    const std::vector<std::string> families = {
        "",     "copy",   "elementwise", "reduce", "softmax", "gather", "blas",
        "host", "solver", "sparse",      "lstm",   "latency", "profile"};
    if (std::find(families.begin(), families.end(), only) == families.end())
      throw ToolUsageError(
          "--only must be copy, elementwise, reduce, softmax, gather, blas, host, solver, "
          "sparse, lstm, latency or profile, got '" +
          only + "'");
    if (!(budget > 0 && budget <= 10))
      throw ToolUsageError("--budget must be in (0, 10], got " + std::to_string(budget));
    RequireToolGpu(args);
    CuDevice& device = CuDevice::Instantiate();
    const CuDeviceProperties& p = device.Properties();
    std::printf("cu-matrix-bench: %s (cc %d.%d, %d SMs), driver %d, runtime %d\n", p.name.c_str(),
                p.major, p.minor, p.multiprocessors, p.driver_version, p.runtime_version);
    Table table;
    for (const auto& s : shapes) {
      if (only == "solver" || only == "sparse" || only == "lstm" || only == "latency" ||
          only == "profile")
        break;
      if (precision != "double") MatrixBench<float>(s.first, s.second, budget, &table).Run(only);
      if (precision != "float") MatrixBench<double>(s.first, s.second, budget, &table).Run(only);
    }
    if (only.empty() || only == "solver") {
      for (const auto& s : ParseShapes(SquareShapes(solver_sizes))) {
        if (precision != "double") SolverBench<float>(s.first, budget, &table);
        if (precision != "float") SolverBench<double>(s.first, budget, &table);
      }
    }
    if (only.empty() || only == "sparse") {
      for (double density : {0.01, 0.1}) {
        if (precision != "double") SparseBench<float>(4096, density, budget, &table);
        if (precision != "float") SparseBench<double>(4096, density, budget, &table);
      }
    }
    if (only.empty() || only == "latency") {
      LatencyBench(32, 256, &table);
      LatencyBench(128, 1024, &table);
    }
    if (only.empty() || only == "profile") ProfileOverheadBench(&table);
    if (only.empty() || only == "lstm") {
      for (MatrixIndexT rows : {2048, 16384}) {
        if (precision != "double") LstmBench<float>(rows, 1024, budget, &table);
        if (precision != "float") LstmBench<double>(rows, 1024, budget, &table);
      }
    }
    table.Print(csv);
    return kToolExitOk;
  };
  ToolSpec spec{usage, 0, 0, ToolGpu::kOptionsOnly, "yes"};
  return RunTool(argc, argv, spec, register_options, body);
}
