// matrix/internal/real-fft-pack.h: the O(N) passes that turn a complex FFT of N/2 points into
// the FFT of N real points and back, in Kaldi's packed layout. Private (not installed); shared by
// RealFft (matrix/matrix-functions-fft.cc) and SplitRadixRealFft (matrix/srfft.cc).
// SPDX-License-Identifier: Apache-2.0
//
// Notation: x is real of even length N, M = N / 2, z_n = x_{2n} + i x_{2n+1} (n < M), Z its
// M-point DFT, E and O the DFTs of the even and odd samples, w = exp(-2 pi i / N). Then
//   E_k = (Z_k + conj Z_{M-k}) / 2,  O_k = (Z_k - conj Z_{M-k}) / (2i),  X_k = E_k + w^k O_k,
// and X_{M-k} = conj(E_k - w^k O_k), so each pass handles k and M - k together in place.
// Packed layout: [ re X_0, re X_M, re X_1, im X_1, ..., re X_{M-1}, im X_{M-1} ].
#ifndef CUCTX_MATRIX_INTERNAL_REAL_FFT_PACK_H_
#define CUCTX_MATRIX_INTERNAL_REAL_FFT_PACK_H_

#include "base/types.h"

#include <cmath>
#include <vector>

namespace cuctx {
namespace internal {

// cos(2 pi k / N) and sin(2 pi k / N) for k in [0, N/4], computed in double.
template <typename Real>
void RealFftTwiddles(MatrixIndexT N, std::vector<Real>* cos_tab, std::vector<Real>* sin_tab) {
  const MatrixIndexT count = N / 4 + 1;
  cos_tab->resize(count);
  sin_tab->resize(count);
  const double step = 2.0 * M_PI / static_cast<double>(N);
  for (MatrixIndexT k = 0; k < count; ++k) {
    (*cos_tab)[k] = static_cast<Real>(std::cos(step * k));
    (*sin_tab)[k] = static_cast<Real>(std::sin(step * k));
  }
}

// x holds Z (M interleaved complex values); on return it holds X in the packed layout.
template <typename Real>
void RealFftForwardPass(Real* x, MatrixIndexT N, const Real* cos_tab, const Real* sin_tab) {
  const MatrixIndexT M = N / 2;
  const Real z0r = x[0], z0i = x[1];
  x[0] = z0r + z0i;  // E_0 + O_0
  x[1] = z0r - z0i;  // E_0 - O_0 = X_M
  for (MatrixIndexT k = 1; 2 * k <= M; ++k) {
    Real* zk = x + 2 * k;
    Real* zm = x + 2 * (M - k);
    const Real a = zk[0], b = zk[1], c = zm[0], d = zm[1];
    const Real er = (a + c) / 2, ei = (b - d) / 2;
    const Real orr = (b + d) / 2, oi = (c - a) / 2;
    // w^k = cos - i sin
    const Real pr = cos_tab[k] * orr + sin_tab[k] * oi;
    const Real pi = cos_tab[k] * oi - sin_tab[k] * orr;
    zk[0] = er + pr;
    zk[1] = ei + pi;
    if (zm != zk) {
      zm[0] = er - pr;
      zm[1] = pi - ei;
    }
  }
}

// The inverse of RealFftForwardPass scaled by 2: x holds X packed; on return it holds 2 Z, so an
// unnormalized inverse M-point FFT of it gives N x.
template <typename Real>
void RealFftInversePass(Real* x, MatrixIndexT N, const Real* cos_tab, const Real* sin_tab) {
  const MatrixIndexT M = N / 2;
  const Real x0 = x[0], xm = x[1];
  x[0] = x0 + xm;
  x[1] = x0 - xm;
  for (MatrixIndexT k = 1; 2 * k <= M; ++k) {
    Real* xk = x + 2 * k;
    Real* xmk = x + 2 * (M - k);
    const Real a = xk[0], b = xk[1], c = xmk[0], d = xmk[1];
    // E = X_k + conj X_{M-k}, D = X_k - conj X_{M-k}, O = D conj(w^k) with conj(w^k) = cos + i sin.
    const Real er = a + c, ei = b - d;
    const Real dr = a - c, di = b + d;
    const Real orr = cos_tab[k] * dr - sin_tab[k] * di;
    const Real oi = cos_tab[k] * di + sin_tab[k] * dr;
    // Z_k = E + i O; Z_{M-k} = conj E + i conj O.
    xk[0] = er - oi;
    xk[1] = ei + orr;
    if (xmk != xk) {
      xmk[0] = er + oi;
      xmk[1] = orr - ei;
    }
  }
}

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_MATRIX_INTERNAL_REAL_FFT_PACK_H_
