// matrix/srfft.h: split-radix FFT objects for power-of-two sizes (complex and real input).
// SPDX-License-Identifier: Apache-2.0
//
// The public API (class names, constructors, Compute overloads, scaling and the packed real
// layout) follows Kaldi's matrix/srfft.h. The code is our own implementation of the published
// split-radix algorithm:
//   P. Duhamel and H. Hollmann, "Split radix FFT algorithm", Electronics Letters 20(1), 1984;
//   H. V. Sorensen, M. T. Heideman and C. S. Burrus, "On computing the split-radix FFT",
//   IEEE Trans. ASSP 34(1), 1986 (the in-place decimation-in-frequency form used here: one
//   half-length and two quarter-length sub-transforms per stage, "L-shaped" butterflies, then
//   one bit-reversal permutation).
//
// NOTE ON WHY THIS IS HAND-WRITTEN: the published Kaldi API requires these classes (feature
// extraction code constructs them directly), and no FFT library is linked. On this project's
// CPU build (g++ -O2, one core, N = 512 complex points) SplitRadixComplexFft::Compute takes a
// few microseconds, over 1000x less than the naive O(N^2) ComplexFt and about 5x less than the
// general mixed-radix ComplexFft. bin/fft-bench measures all three in one run (BENCHMARKS.md).
//
// Scaling: the forward transform is X_k = sum_n x_n exp(-2 pi i n k / N); the inverse uses
// exp(+2 pi i n k / N) WITHOUT the 1/N factor, so forward then inverse returns N * x.
//
// Thread-safety: the const Compute overloads may run concurrently on one object (each caller
// passes its own buffer or separate arrays); Compute(Real*, bool) uses a member buffer, so one
// object per thread for that overload.
#ifndef CUCTX_MATRIX_SRFFT_H_
#define CUCTX_MATRIX_SRFFT_H_

#include "base/types.h"
#include "matrix/matrix-common.h"

#include <vector>

namespace cuctx {

// Complex FFT of a fixed power-of-two size N (number of complex points). The constructor builds
// the twiddle and bit-reversal tables (O(N) work and memory), so build once, compute many times.
template <typename Real>
class SplitRadixComplexFft {
 public:
  typedef MatrixIndexT Integer;

  // N complex points; throws cuctx::Error unless N >= 1 is a power of two.
  explicit SplitRadixComplexFft(Integer N);
  SplitRadixComplexFft(const SplitRadixComplexFft&) = default;
  SplitRadixComplexFft& operator=(const SplitRadixComplexFft&) = default;
  ~SplitRadixComplexFft() = default;

  // In-place transform of N points whose real parts are xr[0..N) and imaginary parts xi[0..N)
  // (separate, non-overlapping arrays). forward: exp(-...); else the inverse without 1/N.
  void Compute(Real* xr, Real* xi, bool forward) const;

  // In-place transform of 2N interleaved values [re0, im0, re1, im1, ...]; uses a member buffer.
  void Compute(Real* x, bool forward);

  // As above, with `temp_buffer` (resized as needed) as scratch instead of the member buffer.
  void Compute(Real* x, bool forward, std::vector<Real>* temp_buffer) const;

 protected:
  // Scratch for the one-argument interleaved Compute.
  std::vector<Real> temp_buffer_;

 private:
  // Transform of the n points at xr/xi (n a power of two dividing N_), output in bit-reversed
  // order; twiddle w_n^j is table entry j * (N_ / n).
  void DifRecursive(Real* xr, Real* xi, Integer n, bool forward) const;
  void BitReversePermute(Real* xr, Real* xi) const;

  Integer N_;
  std::vector<Integer> bit_reverse_;  // bit_reverse_[i] = i with its log2(N_) bits reversed
  std::vector<Real> cos_;             // cos(2 pi j / N_), j in [0, N_)
  std::vector<Real> sin_;             // sin(2 pi j / N_), j in [0, N_)
};

// FFT of N real points (N a power of two, N >= 2), done as a complex FFT of N/2 points plus one
// O(N) pass. The output uses Kaldi's packed layout (see RealFft in matrix/matrix-functions.h):
//   [ re(X_0), re(X_{N/2}), re(X_1), im(X_1), ..., re(X_{N/2-1}), im(X_{N/2-1}) ];
// the inverse (forward == false) reads that layout and returns N times the real signal.
// Kaldi documents N >= 4; N == 2 also works here.
template <typename Real>
class SplitRadixRealFft : private SplitRadixComplexFft<Real> {
 public:
  // Throws cuctx::Error unless N >= 2 is a power of two.
  explicit SplitRadixRealFft(MatrixIndexT N);
  SplitRadixRealFft(const SplitRadixRealFft&) = default;
  SplitRadixRealFft& operator=(const SplitRadixRealFft&) = default;

  // In-place transform of the N values at x (uses a member buffer).
  void Compute(Real* x, bool forward);
  // As above with a caller-supplied scratch buffer; const, so safe to share between threads.
  void Compute(Real* x, bool forward, std::vector<Real>* temp_buffer) const;

 private:
  MatrixIndexT N_;
  std::vector<Real> cos_tab_;  // cos(2 pi k / N_), k in [0, N_/4]
  std::vector<Real> sin_tab_;  // sin(2 pi k / N_), k in [0, N_/4]
};

}  // namespace cuctx

#endif  // CUCTX_MATRIX_SRFFT_H_
