// cudamatrix/cu-packed-matrix.h: CuPackedMatrix, the packed lower-triangle base of CuSpMatrix and
// CuTpMatrix.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_CUDAMATRIX_CU_PACKED_MATRIX_H_
#define CUCTX_CUDAMATRIX_CU_PACKED_MATRIX_H_

#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/matrix-common.h"
#include "matrix/packed-matrix.h"

#include <cstddef>
#include <cstdint>
#include <istream>
#include <ostream>

namespace cuctx {

// Kernel-side operation codes (defined in cudamatrix/internal/cu-kernels.h).
enum class PackedDiagOp : int32_t;
enum class PackedLayout : int32_t;
enum class PackSource : int32_t;

// An n x n matrix of which only the lower triangle is stored, row by row, exactly as the CPU
// PackedMatrix stores it: element (r, c), c <= r, at Data()[r (r + 1) / 2 + c], n (n + 1) / 2
// elements with no padding (LAPACK's column-major packed "U" layout, which is how cuBLAS and the
// kernels read it). n is at most 65535, so that the element count fits in MatrixIndexT.
//
// Memory: device memory from the caching allocator in GPU mode (CuDevice::Enabled()), 16-byte
// aligned host memory otherwise, chosen when the object is resized; the mode must not change while
// objects exist. Methods are asynchronous on this thread's stream (cudaStreamPerThread) unless
// they return a value or data to the host (Trace, element reads, CopyToPacked, Write), which wait
// for that stream. Without a GPU every method computes the same thing on the host.
//
// Owns its elements (a deep copy on copy). Not thread-safe: one thread uses an object at a time.
// Misuse (size mismatch, bad index, a negative or too large size) throws cuctx::Error naming the
// sizes or the index.
template <typename Real>
class CuPackedMatrix {
 public:
  CuPackedMatrix() = default;
  // An n x n packed matrix, zeroed unless resize_type == kUndefined.
  explicit CuPackedMatrix(MatrixIndexT n, MatrixResizeType resize_type = kSetZero) {
    Resize(n, resize_type);
  }
  CuPackedMatrix(const CuPackedMatrix<Real>& orig) { CopyFromPackedResizing(orig); }
  explicit CuPackedMatrix(const PackedMatrix<Real>& orig) {
    Resize(orig.NumRows(), kUndefined);
    CopyFromPacked(orig);
  }
  CuPackedMatrix<Real>& operator=(const CuPackedMatrix<Real>& orig) {
    if (this != &orig) CopyFromPackedResizing(orig);
    return *this;
  }
  ~CuPackedMatrix() { Destroy(); }

  MatrixIndexT NumRows() const { return num_rows_; }
  MatrixIndexT NumCols() const { return num_rows_; }
  // Bytes of storage: n (n + 1) / 2 * sizeof(Real).
  size_t SizeInBytes() const { return NumElements() * sizeof(Real); }
  // Device pointer in GPU mode (host pointer otherwise); nullptr when empty.
  Real* Data() { return data_; }
  const Real* Data() const { return data_; }

  // Changes the size. kSetZero zeroes, kUndefined leaves the contents unspecified, kCopyData keeps
  // the leading min(old, new) block (a prefix of the packed elements) and zeroes the rest. Throws
  // if n < 0 or n > 65535.
  void Resize(MatrixIndexT n, MatrixResizeType resize_type = kSetZero);
  // Frees the storage (size 0).
  void Destroy();
  void Swap(CuPackedMatrix<Real>* other);
  // Exchanges contents with a host PackedMatrix (copies both ways; waits for the copies).
  void Swap(PackedMatrix<Real>* other);

  void SetZero();
  // The identity.
  void SetUnit();
  // Standard normal values in every stored element (CuRand; see cu-rand.h).
  void SetRandn();
  // Diagonal elements = alpha, += alpha, *= alpha.
  void SetDiag(Real alpha);
  void AddToDiag(Real alpha);
  void ScaleDiag(Real alpha);
  // Every stored element *= alpha.
  void Scale(Real alpha);
  // Sum of the diagonal. Waits for the result.
  Real Trace() const;

  // Copies another packed matrix of the same size (throws otherwise).
  void CopyFromPacked(const CuPackedMatrix<Real>& src);
  void CopyFromPacked(const PackedMatrix<Real>& src);
  // *dst = this; dst must have this size (throws otherwise). Waits for the copy.
  void CopyToPacked(PackedMatrix<Real>* dst) const;

  // Element (r, c) for 0 <= r, c < NumRows() (throws otherwise); with c > r it reads the mirrored
  // stored element (c, r), as Kaldi does. A transfer per call in GPU mode. CuTpMatrix redefines
  // it to give 0 above the diagonal.
  Real operator()(MatrixIndexT r, MatrixIndexT c) const;

  // The Kaldi packed format (matrix/packed-matrix.h), through a host PackedMatrix. Read resizes.
  void Read(std::istream& is, bool binary);
  void Write(std::ostream& os, bool binary) const;

 protected:
  size_t NumElements() const {
    return static_cast<size_t>(num_rows_) * (static_cast<size_t>(num_rows_) + 1) / 2;
  }
  // The stored elements as one vector (for element-wise work through CuVectorBase).
  CuSubVector<Real> Elements() const {
    return CuSubVector<Real>(data_, static_cast<MatrixIndexT>(NumElements()));
  }
  // Reads element `index` of the storage (a transfer in GPU mode).
  Real ReadElement(size_t index) const;
  void CopyFromPackedResizing(const CuPackedMatrix<Real>& orig) {
    Resize(orig.NumRows(), kUndefined);
    CopyFromPacked(orig);
  }
  // Applies `op` with alpha to the diagonal (PackedDiagOp::kCopyOut is not used here).
  void DiagOp(PackedDiagOp op, Real alpha);

  Real* data_ = nullptr;
  MatrixIndexT num_rows_ = 0;
};

namespace internal {

// Packed <-> full conversions shared by the packed classes and CuMatrixBase::CopyFromSp /
// CopyFromTp (one kernel in GPU mode, host loops otherwise). `packed` holds dst's (or src's)
// NumRows() (NumRows() + 1) / 2 elements; the full matrix must be square and must not overlap it.
// Asynchronous on this thread's stream.
template <typename Real>
void UnpackTriangle(const Real* packed, PackedLayout layout, CuMatrixBase<Real>* dst);
template <typename Real>
void PackTriangle(const CuMatrixBase<Real>& src, PackSource source, Real* packed);

}  // namespace internal

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_PACKED_MATRIX_H_
