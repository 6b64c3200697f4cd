// cudamatrix/cu-array.h: CuArrayBase / CuArray / CuSubArray, typed 1-D arrays on the GPU.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_CUDAMATRIX_CU_ARRAY_H_
#define CUCTX_CUDAMATRIX_CU_ARRAY_H_

#include "base/error.h"
#include "cudamatrix/cu-device.h"
#include "matrix/matrix-common.h"

#include <algorithm>
#include <istream>
#include <ostream>
#include <vector>

namespace cuctx {

template <typename T>
class CuArray;
template <typename T>
class CuSubArray;

// A contiguous array of Dim() elements of a trivially copyable T (int32, Int32Pair, float,
// double, ...). When a GPU is selected (CuDevice::Enabled()) the data lives in device memory from
// CuDevice::Malloc and every operation is asynchronous on this thread's stream
// (cudaStreamPerThread) unless it returns data to the host; otherwise the data lives in host
// memory and the same calls run on the CPU. The mode must not change while arrays exist.
// CuArrayBase owns nothing: CuArray owns its memory, CuSubArray is a view. Not thread-safe: an
// object is used by one thread at a time (device memory is tied to the allocating thread's stream).
template <typename T>
class CuArrayBase {
 public:
  MatrixIndexT Dim() const { return dim_; }
  // Device pointer in GPU mode (host pointer otherwise); nullptr when empty.
  // Throws cuctx::Error when the calling thread uses another device than the array's.
  T* Data() {
    internal::CheckObjectDevice("CuArray", device_, data_);
    return data_;
  }
  const T* Data() const {
    internal::CheckObjectDevice("CuArray", device_, data_);
    return data_;
  }
  // The device the elements are on, as CuMatrixBase::DeviceId().
  int DeviceId() const { return device_; }

  // Sets every element to zero bytes.
  void SetZero();
  // Sets every element to `value` (a fill kernel for 4- and 8-byte T).
  void Set(const T& value);
  // Copies src.size() elements from host memory; throws unless src.size() == Dim().
  void CopyFromVec(const std::vector<T>& src);
  // Resizes *dst to Dim() and copies the array into it (waits for the copy).
  void CopyToVec(std::vector<T>* dst) const;
  // Copies Dim() elements to host memory at dst (waits for the copy).
  void CopyToHost(T* dst) const;
  // Copies from an array of the same dimension (throws naming both dimensions otherwise).
  void CopyFromArray(const CuArrayBase<T>& src);

  // Smallest / largest element (copies the array to the host). Throws on an empty array.
  // Defined only for types with operator<, e.g. int32.
  template <typename U = T>
  U Min() const {
    CUCTX_CHECK(dim_ > 0) << "CuArray::Min: empty array";
    std::vector<T> h;
    CopyToVec(&h);
    return *std::min_element(h.begin(), h.end());
  }
  template <typename U = T>
  U Max() const {
    CUCTX_CHECK(dim_ > 0) << "CuArray::Max: empty array";
    std::vector<T> h;
    CopyToVec(&h);
    return *std::max_element(h.begin(), h.end());
  }

  // Writes in the integer-vector format of base/io-funcs (int32 arrays only; throws otherwise).
  void Write(std::ostream& os, bool binary) const;

 protected:
  CuArrayBase() = default;
  CuArrayBase(T* data, MatrixIndexT dim, int device) : data_(data), dim_(dim), device_(device) {}
  CuArrayBase(const CuArrayBase&) = default;
  CuArrayBase& operator=(const CuArrayBase&) = default;
  ~CuArrayBase() = default;

  T* data_ = nullptr;
  MatrixIndexT dim_ = 0;
  int device_ = -1;  // see DeviceId()
};

// Owns an array of Dim() elements (device memory in GPU mode, host memory otherwise).
template <typename T>
class CuArray : public CuArrayBase<T> {
 public:
  CuArray() = default;
  explicit CuArray(MatrixIndexT dim, MatrixResizeType resize_type = kSetZero) {
    Resize(dim, resize_type);
  }
  explicit CuArray(const std::vector<T>& src) {
    try {
      this->CopyFromVec2(src);
    } catch (...) {  // e.g. inside a CuGraph capture: no destructor runs for a failed constructor
      Destroy();
      throw;
    }
  }
  CuArray(const CuArray<T>& other) : CuArrayBase<T>() { CopyFrom(other); }
  explicit CuArray(const CuArrayBase<T>& other) { CopyFrom(other); }
  CuArray<T>& operator=(const CuArray<T>& other) {
    if (this != &other) CopyFrom(other);
    return *this;
  }
  CuArray<T>& operator=(const std::vector<T>& src) {
    CopyFromVec2(src);
    return *this;
  }
  ~CuArray() { Destroy(); }

  // Changes the dimension. kSetZero zeroes, kUndefined leaves the contents unspecified, kCopyData
  // keeps the first min(old, new) elements and zeroes the rest. Throws on a negative dim.
  void Resize(MatrixIndexT dim, MatrixResizeType resize_type = kSetZero);
  // Kaldi parity: unlike the CuArrayBase forms, these resize the array to the source's size
  // (they hide the base-class forms, which require equal sizes).
  void CopyFromVec(const std::vector<T>& src) { CopyFromVec2(src); }
  void CopyFromArray(const CuArrayBase<T>& src) { CopyFrom(src); }
  // Exchanges contents with *other (no copy).
  void Swap(CuArray<T>* other);
  // Reads the integer-vector format (int32 only), resizing to the data read.
  void Read(std::istream& is, bool binary);

 private:
  void Destroy();
  void CopyFrom(const CuArrayBase<T>& other);
  void CopyFromVec2(const std::vector<T>& src);
};

// A view of part of another array; does not own its data, so it must not outlive it.
template <typename T>
class CuSubArray : public CuArrayBase<T> {
 public:
  // Elements [offset, offset + dim) of src; throws if the range is outside src.
  CuSubArray(const CuArrayBase<T>& src, MatrixIndexT offset, MatrixIndexT dim);
  // A view of dim elements at data (device memory in GPU mode).
  CuSubArray(const T* data, MatrixIndexT dim)
      : CuArrayBase<T>(const_cast<T*>(data), dim, internal::ThreadObjectDevice()) {}
  CuSubArray(const CuSubArray<T>& other) = default;
  CuSubArray<T>& operator=(const CuSubArray<T>&) = delete;
};

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_ARRAY_H_
