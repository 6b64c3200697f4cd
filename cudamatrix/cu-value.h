// cudamatrix/cu-value.h: CuValue, a proxy for one element of a CuVector or CuMatrix.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_CUDAMATRIX_CU_VALUE_H_
#define CUCTX_CUDAMATRIX_CU_VALUE_H_

#include "cudamatrix/cu-copy.h"

namespace cuctx {

// Refers to one element of a Cu container (device memory in GPU mode, host memory otherwise).
// Reading copies the element to the host and waits for this thread's stream, so prior work on the
// element is visible; assigning copies one value to the element. Each access is a transfer: use
// it for tests and single elements, never in loops over a matrix. Holds no ownership; it must not
// outlive the container. Not thread-safe.
template <typename Real>
class CuValue {
 public:
  explicit CuValue(Real* data) : data_(data) {}
  CuValue(const CuValue&) = default;

  // Element = value.
  CuValue& operator=(Real value) {
    CopyHostToDevice(data_, &value, sizeof(Real));
    return *this;
  }
  // Element = the other proxy's element (read, then written).
  CuValue& operator=(const CuValue& other) { return *this = static_cast<Real>(other); }
  CuValue& operator+=(Real value) { return *this = static_cast<Real>(*this) + value; }
  CuValue& operator-=(Real value) { return *this = static_cast<Real>(*this) - value; }

  // The element's value.
  operator Real() const {
    Real value;
    CopyDeviceToHost(&value, data_, sizeof(Real));
    return value;
  }

 private:
  Real* data_;
};

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_VALUE_H_
