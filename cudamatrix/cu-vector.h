// cudamatrix/cu-vector.h: CuVectorBase / CuVector / CuSubVector, vectors on the GPU.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_CUDAMATRIX_CU_VECTOR_H_
#define CUCTX_CUDAMATRIX_CU_VECTOR_H_

#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-value.h"
#include "matrix/matrix-common.h"
#include "matrix/vector.h"

#include <istream>
#include <ostream>

namespace cuctx {

template <typename Real>
class CuVector;
template <typename Real>
class CuSubVector;
template <typename Real>
class CuMatrixBase;
template <typename Real>
class CuPackedMatrix;  // CopyDiagFromPacked source (cudamatrix/cu-packed-matrix.h)
template <typename Real>
class CuSpMatrix;  // AddSpVec operand (cudamatrix/cu-sp-matrix.h)
template <typename Real>
class CuTpMatrix;  // AddTpVec / MulTp operand (cudamatrix/cu-tp-matrix.h)
template <typename T>
class CuArrayBase;  // CopyElements indices (cudamatrix/cu-array.h)

// A contiguous vector of Dim() elements of Real (float or double).
//
// Memory: when a GPU is selected (CuDevice::Enabled()) the elements live in device memory from
// CuDevice::Malloc and every method is asynchronous on this thread's stream (cudaStreamPerThread)
// unless it returns a value or data to the host, which waits for that stream. Without a GPU the
// elements live in 16-byte aligned host memory and every method runs the matrix/ Vector operation
// on a SubVector view of it, so both modes compute the same thing. The mode must not change while
// vectors exist.
//
// CuVectorBase owns nothing; CuVector owns its memory; CuSubVector is a view that must not outlive
// what it views. Not thread-safe: one thread uses an object at a time. Misuse (dimension mismatch,
// out-of-range index) throws cuctx::Error naming both dimensions or the bad index.
template <typename Real>
class CuVectorBase {
 public:
  MatrixIndexT Dim() const { return dim_; }
  // Device pointer in GPU mode (host pointer otherwise); nullptr when empty.
  // Throws cuctx::Error when the calling thread uses another device than the vector's.
  Real* Data() {
    internal::CheckObjectDevice("CuVector", device_, data_);
    return data_;
  }
  const Real* Data() const {
    internal::CheckObjectDevice("CuVector", device_, data_);
    return data_;
  }
  // The device the elements are on, as CuMatrixBase::DeviceId().
  int DeviceId() const { return device_; }

  // Elements [origin, origin + length); throws if outside the vector.
  CuSubVector<Real> Range(MatrixIndexT origin, MatrixIndexT length);
  const CuSubVector<Real> Range(MatrixIndexT origin, MatrixIndexT length) const;

  // One element (a transfer per access in GPU mode; see CuValue). Throws on a bad index.
  CuValue<Real> operator()(MatrixIndexT i);
  Real operator()(MatrixIndexT i) const;

  // this = src, converting precision (on the device for a Cu source). A source on another device is
  // copied across as CuMatrixBase::CopyFromMat does. Throws unless dims match.
  template <typename OtherReal>
  void CopyFromVec(const CuVectorBase<OtherReal>& src);
  template <typename OtherReal>
  void CopyFromVec(const VectorBase<OtherReal>& src);
  // *dst = this; waits for the copy. Throws unless dims match.
  template <typename OtherReal>
  void CopyToVec(VectorBase<OtherReal>* dst) const;

  void SetZero();
  void Set(Real value);
  // this += value, element-wise.
  void Add(Real value);
  void Scale(Real alpha);
  // this = alpha * v + beta * this. v may be this vector.
  void AddVec(Real alpha, const CuVectorBase<Real>& v, Real beta = 1.0);
  // this *= v, element-wise.
  void MulElements(const CuVectorBase<Real>& v);

  // Writes in the Kaldi vector format (through a host Vector).
  void Write(std::ostream& os, bool binary) const;

  // ---- BLAS family (cu-vector-blas.cc) ---------------------------------------------------------
  // GPU: cuBLAS on this thread's handle or a kernel, asynchronous unless a value returns to the
  // host. Dimension mismatches and forbidden aliasing throw cuctx::Error naming both.

  // this = beta * this + alpha * op(M) v. Neither M nor v may overlap this vector. An empty inner
  // dimension gives this = beta * this. GPU: gemv.
  void AddMatVec(Real alpha, const CuMatrixBase<Real>& M, MatrixTransposeType trans,
                 const CuVectorBase<Real>& v, Real beta);
  // this = alpha * v .* r + beta * this (element-wise); v or r may be this vector (exactly, not a
  // shifted overlap). GPU: one element-wise kernel.
  void AddVecVec(Real alpha, const CuVectorBase<Real>& v, const CuVectorBase<Real>& r, Real beta);

  // The body of the free function VecVec below (cu-vector-blas.cc); call that, not this.
  static Real VecVecImpl(const CuVectorBase<Real>& a, const CuVectorBase<Real>& b);
  // ---- end of BLAS family -----------------------------------------------------------------------

  // ---- reductions and nnet family (cu-vector-nnet.cc) -------------------------------------------
  // this = beta * this + alpha * (sum of the rows of M); Dim() == M.NumCols(). One pass over M
  // with no host sync (a 32-column stripe per block). As on the CPU the old contents are always
  // read (beta == 0 keeps NaNs). M must not overlap this vector. Throws naming both shapes.
  void AddRowSumMat(Real alpha, const CuMatrixBase<Real>& M, Real beta = 1.0);
  // this = beta * this + alpha * (sum of the columns of M); Dim() == M.NumRows(). One block per
  // row of M, no host sync. Old contents and overlap as for AddRowSumMat.
  void AddColSumMat(Real alpha, const CuMatrixBase<Real>& M, Real beta = 1.0);
  // Sum of the elements (0 when empty); Max / Min throw on an empty vector. Each waits for the
  // result.
  Real Sum() const;
  Real Max() const;
  Real Min() const;
  // Device-result forms: write into `result` (an element of a CuVector or CuMatrix) without
  // waiting or a transfer, so they can be captured in a CuGraph; same errors as above.
  void Sum(CuValue<Real> result) const;
  void Max(CuValue<Real> result) const;
  void Min(CuValue<Real> result) const;
  // In-place softmax x_i = exp(x_i - m) / sum_j exp(x_j - m) (m the maximum) and log-softmax
  // x_i = x_i - log(sum_j exp(x_j)), both stable for large inputs. Unlike Vector they return
  // nothing (no host sync). Throw on an empty vector, as Vector does.
  void ApplySoftMax();
  void ApplyLogSoftMax();
  // ---- end of reductions and nnet family --------------------------------------------------------

  // ---- vector family (cu-vector-ops.cc) ---------------------------------------------------------
  // GPU: kernels of cu-kernels-vector.cu (or a device copy), asynchronous on this thread's stream
  // unless a value returns to the host (Norm, and ApplyFloor / ApplyCeiling with a count), which
  // waits for that stream. Misuse throws cuctx::Error naming the shapes or the bad index, in both
  // modes. A matrix operand must not overlap this vector.

  // this = the rows of M laid end to end; Dim() == M.NumRows() * M.NumCols(). A Cu source is a
  // device-to-device copy, a host source a host-to-device copy (it returns once M may be reused).
  void CopyRowsFromMat(const CuMatrixBase<Real>& M);
  void CopyRowsFromMat(const MatrixBase<Real>& M);
  // this = column `col` of M (either precision, converted on the device); Dim() == M.NumRows()
  // and 0 <= col < M.NumCols().
  template <typename OtherReal>
  void CopyColFromMat(const CuMatrixBase<OtherReal>& M, MatrixIndexT col);
  // this = the diagonal of M; Dim() == min(M.NumRows(), M.NumCols()).
  void CopyDiagFromMat(const CuMatrixBase<Real>& M);

  // this = beta * this + alpha * diag(M M^T) (trans == kNoTrans: the row sums of squares, Dim() ==
  // M.NumRows()) or alpha * diag(M^T M) (kTrans: the column sums of squares, Dim() ==
  // M.NumCols()). One pass over M without forming the product; sums are accumulated in double.
  // The old contents are always read (beta == 0 keeps NaNs), as on the CPU.
  void AddDiagMat2(Real alpha, const CuMatrixBase<Real>& M, MatrixTransposeType trans = kNoTrans,
                   Real beta = 1.0);
  // this = beta * this + alpha * diag(op(M) op(N)): element i is the dot product of row i of
  // op(M) and column i of op(N). op(M) must be Dim() x K and op(N) K x Dim() (K may be 0). One
  // pass over M and N in one kernel launch (every operand read along its contiguous direction,
  // for any transposition), without forming the product; sums in double. M may be N. The old
  // contents are always read (beta == 0 keeps NaNs), as on the CPU.
  void AddDiagMatMat(Real alpha, const CuMatrixBase<Real>& M, MatrixTransposeType transM,
                     const CuMatrixBase<Real>& N, MatrixTransposeType transN, Real beta = 1.0);

  // this = alpha * v + beta * this with v of the other precision (converted through a temporary
  // CuVector, as Kaldi does). Throws unless the dimensions match.
  template <typename OtherReal>
  void AddVec(Real alpha, const CuVectorBase<OtherReal>& v, Real beta = 1.0);
  // this ./= v, element-wise; v may be this vector. Throws unless the dimensions match.
  void DivElements(const CuVectorBase<Real>& v);
  // x = 1 / x, element-wise.
  void InvertElements();
  // x = max(x, floor_val). With floored_count != nullptr it receives the number of elements that
  // changed, which costs a reduction and a wait for the stream; without it nothing waits.
  void ApplyFloor(Real floor_val, MatrixIndexT* floored_count = nullptr);
  // x = min(x, ceiling_val); the optional count as for ApplyFloor.
  void ApplyCeiling(Real ceiling_val, MatrixIndexT* ceiled_count = nullptr);
  // x = pow(x, power) as std::pow computes it (a negative x with a non-integer power gives NaN).
  void ApplyPow(Real power);
  // x = exp(x) / log(x), element-wise.
  void ApplyExp();
  void ApplyLog();
  // Every element equal to `orig` becomes `changed`.
  void ReplaceValue(Real orig, Real changed);

  // The p-norm, as Vector::Norm: p == 0 counts the nonzero elements, p == inf is max |x|, else
  // (sum |x|^p)^(1/p); 0 for an empty vector. Throws if p < 0 (or NaN). One reduction kernel
  // pair, accumulating in double, and one read-back (waits for the stream).
  Real Norm(Real p) const;
  // True when ||this - other|| <= tol * ||this|| (the free ApproxEqual); waits for the copies.
  bool ApproxEqual(const CuVectorBase<Real>& other, float tol = 0.01) const;
  // ---- end of vector family ---------------------------------------------------------------------

  // ---- random fills and packed products (cu-rand.cc, cu-sp-matrix.cc) ---------------------------
  // Standard normal / uniform values in every element (see CuRand in cu-rand.h). Asynchronous on
  // this thread's stream in GPU mode.
  void SetRandn();
  void SetRandUniform();

  // this = beta * this + alpha * M v for the symmetric M (M.NumRows() == v.Dim() == Dim()); v
  // must not overlap this vector. GPU: cuBLAS spmv on the packed storage. Throws on a mismatch.
  void AddSpVec(Real alpha, const CuSpMatrix<Real>& M, const CuVectorBase<Real>& v, Real beta);
  // this = the diagonal of M (Dim() == M.NumRows()). One kernel on the GPU.
  void CopyDiagFromPacked(const CuPackedMatrix<Real>& M);
  // ---- end of random fills and packed products --------------------------------------------------

  // ---- element selection and triangular products (cu-vector-packed.cc) ------------------------
  // this(i) = mat(i, elements[i]) (trans == kNoTrans; Dim() == mat.NumRows()) or
  // mat(elements[i], i) (kTrans; Dim() == mat.NumCols()); elements.Dim() == Dim(). Throws on a
  // size mismatch. The indices are checked only in CPU mode (an entry outside mat throws there,
  // before anything is written); in GPU mode such an element is left unchanged. mat must not
  // overlap this vector. One kernel on the GPU.
  void CopyElements(const CuMatrixBase<Real>& mat, MatrixTransposeType trans,
                    const CuArrayBase<int32>& elements);
  // this = beta * this + alpha * op(M) v for the lower-triangular M (M.NumRows() == v.Dim() ==
  // Dim(), else throws); v may be this vector itself (otherwise it must not overlap it). With
  // beta == 0 the old contents are not read. GPU: cuBLAS tpmv on a copy of v, then one axpby.
  void AddTpVec(Real alpha, const CuTpMatrix<Real>& M, MatrixTransposeType trans,
                const CuVectorBase<Real>& v, Real beta);
  // this = op(M) this for the lower-triangular M (M.NumRows() == Dim(), else throws). (Kaldi's
  // comment says "*this <-- *this * M"; what it computes, as here, is op(M) times the vector.)
  // GPU: cuBLAS tpmv in place.
  void MulTp(const CuTpMatrix<Real>& M, MatrixTransposeType trans);
  // ---- end of element selection and triangular products --------------------------------------

 protected:
  CuVectorBase() = default;
  CuVectorBase(Real* data, MatrixIndexT dim, int device)
      : data_(data), dim_(dim), device_(device) {}
  CuVectorBase(const CuVectorBase&) = default;
  CuVectorBase& operator=(const CuVectorBase&) = default;
  ~CuVectorBase() = default;

  // A host view of the data; only valid without a GPU (the CPU fallback of every method).
  SubVector<Real> CpuView() const { return SubVector<Real>(data_, dim_); }

  Real* data_ = nullptr;
  MatrixIndexT dim_ = 0;
  int device_ = -1;  // see DeviceId()

  // Views and copies between devices read the source without the device check.
  template <typename>
  friend class CuVectorBase;
  template <typename>
  friend class CuMatrixBase;
  friend class CuSubVector<Real>;
};

// Owns Dim() elements (device memory in GPU mode, host memory otherwise).
// The dot product a . b. Throws on a dimension mismatch. Waits for the result. GPU: cuBLAS dot.
template <typename Real>
Real VecVec(const CuVectorBase<Real>& a, const CuVectorBase<Real>& b) {
  return CuVectorBase<Real>::VecVecImpl(a, b);
}

template <typename Real>
class CuVector : public CuVectorBase<Real> {
 public:
  CuVector() = default;
  explicit CuVector(MatrixIndexT dim, MatrixResizeType resize_type = kSetZero) {
    Resize(dim, resize_type);
  }
  CuVector(const CuVector<Real>& v) : CuVectorBase<Real>() { Assign(v); }
  explicit CuVector(const CuVectorBase<Real>& v) { Assign(v); }
  template <typename OtherReal>
  explicit CuVector(const CuVectorBase<OtherReal>& v) {
    Resize(v.Dim(), kUndefined);
    this->CopyFromVec(v);
  }
  template <typename OtherReal>
  explicit CuVector(const VectorBase<OtherReal>& v) {
    Resize(v.Dim(), kUndefined);
    try {
      this->CopyFromVec(v);
    } catch (...) {  // e.g. inside a CuGraph capture: no destructor runs for a failed constructor
      Destroy();
      throw;
    }
  }
  CuVector<Real>& operator=(const CuVector<Real>& v) {
    if (this != &v) Assign(v);
    return *this;
  }
  CuVector<Real>& operator=(const CuVectorBase<Real>& v) {
    Assign(v);
    return *this;
  }
  CuVector<Real>& operator=(const VectorBase<Real>& v) {
    Resize(v.Dim(), kUndefined);
    this->CopyFromVec(v);
    return *this;
  }
  ~CuVector() { Destroy(); }

  // Changes the dimension. kSetZero zeroes, kUndefined leaves the contents unspecified, kCopyData
  // keeps the first min(old, new) elements and zeroes the rest. Throws on a negative dim.
  void Resize(MatrixIndexT dim, MatrixResizeType resize_type = kSetZero);
  // Exchanges contents with another CuVector (no copy).
  void Swap(CuVector<Real>* other);
  // Exchanges contents with a host Vector (copies both ways; waits for the copies).
  void Swap(Vector<Real>* other);
  // Reads the Kaldi vector format (through a host Vector), resizing to the data read.
  void Read(std::istream& is, bool binary);

 private:
  void Assign(const CuVectorBase<Real>& v);
  void Destroy();
};

// A view of a range of a CuVector or of a CuMatrix row; does not own its data.
template <typename Real>
class CuSubVector : public CuVectorBase<Real> {
 public:
  // Elements [origin, origin + length) of v; throws if the range is outside v.
  CuSubVector(const CuVectorBase<Real>& v, MatrixIndexT origin, MatrixIndexT length);
  // A view of `length` elements at data (device memory in GPU mode).
  CuSubVector(const Real* data, MatrixIndexT length)
      : CuVectorBase<Real>(const_cast<Real*>(data), length, internal::ThreadObjectDevice()) {}
  // Row `row` of matrix (Kaldi parity; as matrix.Row(row)). Throws cuctx::Error if row is outside
  // [0, matrix.NumRows()). Defined in cu-host-conversions.cc.
  CuSubVector(const CuMatrixBase<Real>& matrix, MatrixIndexT row);
  CuSubVector(const CuSubVector<Real>& other) = default;
  CuSubVector<Real>& operator=(const CuSubVector<Real>&) = delete;
};

// True when ||a - b|| <= tol * ||a||, as for Vector.
template <typename Real>
bool ApproxEqual(const CuVectorBase<Real>& a, const CuVectorBase<Real>& b, float tol = 0.01);
// Throws cuctx::Error (naming the dimension and tolerance) unless ApproxEqual(a, b, tol). Kaldi
// parity; defined in cu-parity.cc.
template <typename Real>
void AssertEqual(const CuVectorBase<Real>& a, const CuVectorBase<Real>& b, float tol = 0.01);

// Prints the vector (through a host copy) in the Kaldi text format.
template <typename Real>
std::ostream& operator<<(std::ostream& os, const CuVectorBase<Real>& v);

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_VECTOR_H_
