// matrix/srfft.cc: split-radix decimation-in-frequency FFT (see matrix/srfft.h for references).
// SPDX-License-Identifier: Apache-2.0
#include "matrix/srfft.h"

#include "base/error.h"
#include "matrix/internal/real-fft-pack.h"

#include <cmath>
#include <utility>

namespace cuctx {

namespace {

// log2(n) if n >= 1 is a power of two, else -1.
int Log2IfPowerOfTwo(MatrixIndexT n) {
  if (n < 1 || (n & (n - 1)) != 0) return -1;
  int log = 0;
  while ((MatrixIndexT{1} << log) < n) ++log;
  return log;
}

// Half of N for SplitRadixRealFft's base class, checked before the base is built.
MatrixIndexT CheckedHalf(MatrixIndexT N) {
  CUCTX_CHECK(N >= 2 && Log2IfPowerOfTwo(N) >= 0)
      << "SplitRadixRealFft: N must be a power of two >= 2 (got " << N << ")";
  return N / 2;
}

}  // namespace

template <typename Real>
SplitRadixComplexFft<Real>::SplitRadixComplexFft(Integer N) : N_(N) {
  const int logn = Log2IfPowerOfTwo(N);
  CUCTX_CHECK(logn >= 0) << "SplitRadixComplexFft: N must be a power of two >= 1 (got " << N << ")";
  bit_reverse_.resize(N);
  for (Integer i = 0; i < N; ++i) {
    Integer r = 0;
    for (int b = 0; b < logn; ++b)
      if (i & (Integer{1} << b)) r |= Integer{1} << (logn - 1 - b);
    bit_reverse_[i] = r;
  }
  cos_.resize(N);
  sin_.resize(N);
  // Tables in double, rounded once, so float twiddles carry no accumulated error.
  const double step = 2.0 * M_PI / static_cast<double>(N);
  for (Integer j = 0; j < N; ++j) {
    cos_[j] = static_cast<Real>(std::cos(step * j));
    sin_[j] = static_cast<Real>(std::sin(step * j));
  }
}

template <typename Real>
void SplitRadixComplexFft<Real>::DifRecursive(Real* xr, Real* xi, Integer n, bool forward) const {
  if (n == 1) return;
  if (n == 2) {
    const Real ar = xr[0], ai = xi[0];
    xr[0] = ar + xr[1];
    xi[0] = ai + xi[1];
    xr[1] = ar - xr[1];
    xi[1] = ai - xi[1];
    return;
  }
  const Integer q = n / 4, h = n / 2, step = N_ / n;
  // Forward twiddles are exp(-i theta) = cos - i sin; the inverse uses the conjugates.
  const Real sign = forward ? Real(-1) : Real(1);
  for (Integer k = 0; k < q; ++k) {
    const Real ar = xr[k], ai = xi[k];
    const Real br = xr[k + q], bi = xi[k + q];
    const Real cr = xr[k + h], ci = xi[k + h];
    const Real dr = xr[k + h + q], di = xi[k + h + q];
    xr[k] = ar + cr;
    xi[k] = ai + ci;
    xr[k + q] = br + dr;
    xi[k + q] = bi + di;
    const Real t1r = ar - cr, t1i = ai - ci;
    const Real t2r = br - dr, t2i = bi - di;
    // Outputs 4k+1 take (t1 + sign*i*t2) w^k and outputs 4k+3 take (t1 - sign*i*t2) w^3k, since
    // w^(n/4) = sign * i.
    const Real ur = t1r - sign * t2i, ui = t1i + sign * t2r;
    const Real vr = t1r + sign * t2i, vi = t1i - sign * t2r;
    const Integer j1 = k * step, j3 = 3 * k * step;
    const Real c1 = cos_[j1], s1 = sign * sin_[j1];
    const Real c3 = cos_[j3], s3 = sign * sin_[j3];
    xr[k + h] = ur * c1 - ui * s1;
    xi[k + h] = ur * s1 + ui * c1;
    xr[k + h + q] = vr * c3 - vi * s3;
    xi[k + h + q] = vr * s3 + vi * c3;
  }
  DifRecursive(xr, xi, h, forward);
  DifRecursive(xr + h, xi + h, q, forward);
  DifRecursive(xr + h + q, xi + h + q, q, forward);
}

template <typename Real>
void SplitRadixComplexFft<Real>::BitReversePermute(Real* xr, Real* xi) const {
  for (Integer i = 0; i < N_; ++i) {
    const Integer j = bit_reverse_[i];
    if (i < j) {
      std::swap(xr[i], xr[j]);
      std::swap(xi[i], xi[j]);
    }
  }
}

template <typename Real>
void SplitRadixComplexFft<Real>::Compute(Real* xr, Real* xi, bool forward) const {
  CUCTX_CHECK(xr != nullptr && xi != nullptr && xr != xi)
      << "SplitRadixComplexFft::Compute: xr and xi must be distinct non-null arrays";
  DifRecursive(xr, xi, N_, forward);
  BitReversePermute(xr, xi);
}

template <typename Real>
void SplitRadixComplexFft<Real>::Compute(Real* x, bool forward) {
  Compute(x, forward, &temp_buffer_);
}

template <typename Real>
void SplitRadixComplexFft<Real>::Compute(Real* x, bool forward,
                                         std::vector<Real>* temp_buffer) const {
  CUCTX_CHECK(x != nullptr && temp_buffer != nullptr)
      << "SplitRadixComplexFft::Compute: null data or buffer";
  // Split into separate real and imaginary arrays (the butterflies stride through both).
  temp_buffer->resize(2 * static_cast<size_t>(N_));
  Real* re = temp_buffer->data();
  Real* im = re + N_;
  for (Integer i = 0; i < N_; ++i) {
    re[i] = x[2 * i];
    im[i] = x[2 * i + 1];
  }
  Compute(re, im, forward);
  for (Integer i = 0; i < N_; ++i) {
    x[2 * i] = re[i];
    x[2 * i + 1] = im[i];
  }
}

template <typename Real>
SplitRadixRealFft<Real>::SplitRadixRealFft(MatrixIndexT N)
    : SplitRadixComplexFft<Real>(CheckedHalf(N)), N_(N) {
  internal::RealFftTwiddles(N_, &cos_tab_, &sin_tab_);
}

template <typename Real>
void SplitRadixRealFft<Real>::Compute(Real* x, bool forward) {
  Compute(x, forward, &this->temp_buffer_);
}

template <typename Real>
void SplitRadixRealFft<Real>::Compute(Real* x, bool forward, std::vector<Real>* temp_buffer) const {
  CUCTX_CHECK(x != nullptr && temp_buffer != nullptr)
      << "SplitRadixRealFft::Compute: null data or buffer";
  if (forward) {
    SplitRadixComplexFft<Real>::Compute(x, true, temp_buffer);
    internal::RealFftForwardPass(x, N_, cos_tab_.data(), sin_tab_.data());
  } else {
    internal::RealFftInversePass(x, N_, cos_tab_.data(), sin_tab_.data());
    SplitRadixComplexFft<Real>::Compute(x, false, temp_buffer);
  }
}

template class SplitRadixComplexFft<float>;
template class SplitRadixComplexFft<double>;
template class SplitRadixRealFft<float>;
template class SplitRadixRealFft<double>;

}  // namespace cuctx
