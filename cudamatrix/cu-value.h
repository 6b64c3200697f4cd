// cudamatrix/cu-value.h: CuValue, a proxy for one element of a CuVector or CuMatrix.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_CUDAMATRIX_CU_VALUE_H_
#define CUCTX_CUDAMATRIX_CU_VALUE_H_

#include "base/math-utils.h"
#include "cudamatrix/cu-copy.h"

#include <type_traits>

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

  // Where the element lives (device memory in GPU mode): the device-result forms of Sum, Max,
  // Min and Trace write there without a transfer.
  Real* Data() const { return data_; }
  // The element's value.
  operator Real() const {
    Real value;
    CopyDeviceToHost(&value, data_, sizeof(Real));
    return value;
  }

 private:
  Real* data_;
};

// ---- Kaldi parity: the scalar ApproxEqual / AssertEqual of base/math-utils.h taking an element
// proxy on either side (each read is a transfer); same tolerance rule and default (0.001) ----
template <typename Real, typename B, typename = std::enable_if_t<std::is_arithmetic<B>::value>>
bool ApproxEqual(const CuValue<Real>& a, B b, double relative_tolerance = 0.001) {
  return ApproxEqual(static_cast<Real>(a), b, relative_tolerance);
}
template <typename A, typename Real, typename = std::enable_if_t<std::is_arithmetic<A>::value>>
bool ApproxEqual(A a, const CuValue<Real>& b, double relative_tolerance = 0.001) {
  return ApproxEqual(a, static_cast<Real>(b), relative_tolerance);
}
template <typename Real, typename OtherReal>
bool ApproxEqual(const CuValue<Real>& a, const CuValue<OtherReal>& b,
                 double relative_tolerance = 0.001) {
  return ApproxEqual(static_cast<Real>(a), static_cast<OtherReal>(b), relative_tolerance);
}
// Throw cuctx::Error naming both values and the tolerance unless ApproxEqual.
template <typename Real, typename B, typename = std::enable_if_t<std::is_arithmetic<B>::value>>
void AssertEqual(const CuValue<Real>& a, B b, double relative_tolerance = 0.001) {
  AssertEqual(static_cast<Real>(a), b, relative_tolerance);
}
template <typename A, typename Real, typename = std::enable_if_t<std::is_arithmetic<A>::value>>
void AssertEqual(A a, const CuValue<Real>& b, double relative_tolerance = 0.001) {
  AssertEqual(a, static_cast<Real>(b), relative_tolerance);
}
template <typename Real, typename OtherReal>
void AssertEqual(const CuValue<Real>& a, const CuValue<OtherReal>& b,
                 double relative_tolerance = 0.001) {
  AssertEqual(static_cast<Real>(a), static_cast<OtherReal>(b), relative_tolerance);
}
// ---- end of Kaldi parity ----

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_VALUE_H_
