// matrix/matrix-functions-fft.cc: mixed-radix complex FFT, naive DFT, real FFT and the DCT matrix.
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "matrix/internal/real-fft-pack.h"
#include "matrix/matrix-functions.h"

#include <complex>
#include <vector>

namespace cuctx {

namespace {

MatrixIndexT SmallestPrimeFactor(MatrixIndexT n) {
  if (n % 2 == 0) return 2;
  for (MatrixIndexT p = 3; p * p <= n; p += 2)
    if (n % p == 0) return p;
  return n;
}

// Decimation in time: the n inputs in[0], in[stride], ... split into p interleaved subsequences
// (p the smallest prime factor of n) whose m = n / p point transforms land in out[r*m .. r*m+m);
// one pass of p-point DFTs with twiddles then combines them in place. tw[j] = w_N^j for the
// full size N, and w_n = w_N^(N/n) = tw[tw_step].
template <typename Real>
void MixedRadix(const std::complex<Real>* in, MatrixIndexT stride, MatrixIndexT n,
                std::complex<Real>* out, const std::vector<std::complex<Real>>& tw,
                MatrixIndexT tw_step) {
  if (n == 1) {
    out[0] = in[0];
    return;
  }
  const MatrixIndexT p = SmallestPrimeFactor(n), m = n / p;
  for (MatrixIndexT r = 0; r < p; ++r)
    MixedRadix(in + r * stride, stride * p, m, out + r * m, tw, tw_step * p);
  const int64 big_n = static_cast<int64>(tw.size());
  if (p == 2) {
    for (MatrixIndexT k = 0; k < m; ++k) {
      const std::complex<Real> a = out[k], b = out[k + m] * tw[k * tw_step];
      out[k] = a + b;
      out[k + m] = a - b;
    }
    return;
  }
  std::vector<std::complex<Real>> t(p);
  for (MatrixIndexT k = 0; k < m; ++k) {
    for (MatrixIndexT r = 0; r < p; ++r) t[r] = out[r * m + k] * tw[r * k * tw_step];
    // X_{k + q m} = sum_r t_r w_p^(r q), with w_p = w_N^(N / p) = tw[m * tw_step].
    for (MatrixIndexT q = 0; q < p; ++q) {
      std::complex<Real> sum = t[0];
      for (MatrixIndexT r = 1; r < p; ++r)
        sum += t[r] * tw[(static_cast<int64>(r) * q % p) * m * tw_step % big_n];
      out[k + q * m] = sum;
    }
  }
}

}  // namespace

template <typename Real>
void ComplexFft(VectorBase<Real>* v, bool forward, Vector<Real>* tmp_work) {
  CUCTX_CHECK(v != nullptr) << "ComplexFft: null vector";
  CUCTX_CHECK(v->Dim() % 2 == 0) << "ComplexFft: dimension must be even (got " << v->Dim() << ")";
  const MatrixIndexT N = v->Dim() / 2;
  if (N <= 1) return;
  Vector<Real> local;
  Vector<Real>* work = tmp_work != nullptr ? tmp_work : &local;
  if (work->Dim() != v->Dim()) work->Resize(v->Dim(), kUndefined);
  work->CopyFromVec(*v);
  std::vector<std::complex<Real>> tw(N);
  const double step = (forward ? -2.0 : 2.0) * M_PI / static_cast<double>(N);
  for (MatrixIndexT j = 0; j < N; ++j)
    tw[j] = std::complex<Real>(static_cast<Real>(std::cos(step * j)),
                               static_cast<Real>(std::sin(step * j)));
  // std::complex<Real> is layout-compatible with Real[2] (guaranteed by the standard).
  MixedRadix(reinterpret_cast<const std::complex<Real>*>(work->Data()), 1, N,
             reinterpret_cast<std::complex<Real>*>(v->Data()), tw, 1);
}

template <typename Real>
void ComplexFt(const VectorBase<Real>& in, VectorBase<Real>* out, bool forward) {
  CUCTX_CHECK(out != nullptr) << "ComplexFt: null output";
  CUCTX_CHECK(in.Dim() == out->Dim() && in.Dim() % 2 == 0)
      << "ComplexFt: dimensions must be equal and even (in " << in.Dim() << ", out " << out->Dim()
      << ")";
  const MatrixIndexT N = in.Dim() / 2;
  if (N == 0) return;
  const Real* a = in.Data();
  const Real* b = out->Data();
  CUCTX_CHECK(a + in.Dim() <= b || b + out->Dim() <= a)
      << "ComplexFt: input and output must not overlap";
  const double sign = forward ? -1.0 : 1.0;
  for (MatrixIndexT m = 0; m < N; ++m) {
    double re = 0.0, im = 0.0;
    for (MatrixIndexT n = 0; n < N; ++n) {
      // Reduce m*n mod N first so the angle stays exact for large N.
      const double angle =
          sign * 2.0 * M_PI * static_cast<double>(static_cast<int64>(m) * n % N) / N;
      const double c = std::cos(angle), s = std::sin(angle);
      const double xr = in(2 * n), xi = in(2 * n + 1);
      re += xr * c - xi * s;
      im += xr * s + xi * c;
    }
    (*out)(2 * m) = static_cast<Real>(re);
    (*out)(2 * m + 1) = static_cast<Real>(im);
  }
}

template <typename Real>
void RealFft(VectorBase<Real>* v, bool forward) {
  CUCTX_CHECK(v != nullptr) << "RealFft: null vector";
  const MatrixIndexT N = v->Dim();
  CUCTX_CHECK(N % 2 == 0) << "RealFft: dimension must be even (got " << N << ")";
  if (N == 0) return;
  std::vector<Real> cos_tab, sin_tab;
  internal::RealFftTwiddles(N, &cos_tab, &sin_tab);
  if (forward) {
    ComplexFft(v, true);
    internal::RealFftForwardPass(v->Data(), N, cos_tab.data(), sin_tab.data());
  } else {
    internal::RealFftInversePass(v->Data(), N, cos_tab.data(), sin_tab.data());
    ComplexFft(v, false);
  }
}

template <typename Real>
void RealFftInefficient(VectorBase<Real>* v, bool forward) {
  CUCTX_CHECK(v != nullptr) << "RealFftInefficient: null vector";
  const MatrixIndexT N = v->Dim();
  CUCTX_CHECK(N % 2 == 0) << "RealFftInefficient: dimension must be even (got " << N << ")";
  if (N == 0) return;
  Vector<Real> full(2 * N);
  if (forward) {
    for (MatrixIndexT n = 0; n < N; ++n) full(2 * n) = (*v)(n);
    ComplexFft(&full, true);
    (*v)(0) = full(0);
    (*v)(1) = full(N);  // re X_{N/2}
    for (MatrixIndexT k = 1; k < N / 2; ++k) {
      (*v)(2 * k) = full(2 * k);
      (*v)(2 * k + 1) = full(2 * k + 1);
    }
  } else {
    // Rebuild the Hermitian spectrum X_{N-k} = conj X_k, then a full inverse transform.
    full(0) = (*v)(0);
    full(N) = (*v)(1);
    for (MatrixIndexT k = 1; k < N / 2; ++k) {
      full(2 * k) = (*v)(2 * k);
      full(2 * k + 1) = (*v)(2 * k + 1);
      full(2 * (N - k)) = (*v)(2 * k);
      full(2 * (N - k) + 1) = -(*v)(2 * k + 1);
    }
    ComplexFft(&full, false);
    for (MatrixIndexT n = 0; n < N; ++n) (*v)(n) = full(2 * n);
  }
}

template <typename Real>
void ComputeDctMatrix(Matrix<Real>* M) {
  CUCTX_CHECK(M != nullptr) << "ComputeDctMatrix: null matrix";
  const MatrixIndexT K = M->NumRows(), N = M->NumCols();
  CUCTX_CHECK(K > 0 && N > 0) << "ComputeDctMatrix: matrix must be non-empty (got " << K << "x" << N
                              << ")";
  const Real first = static_cast<Real>(std::sqrt(1.0 / N));
  for (MatrixIndexT n = 0; n < N; ++n) (*M)(0, n) = first;
  const double scale = std::sqrt(2.0 / N);
  for (MatrixIndexT k = 1; k < K; ++k)
    for (MatrixIndexT n = 0; n < N; ++n)
      (*M)(k, n) = static_cast<Real>(scale * std::cos(M_PI / N * (n + 0.5) * k));
}

#define CUCTX_INSTANTIATE_FFT(Real)                                          \
  template void ComplexFft(VectorBase<Real>*, bool, Vector<Real>*);          \
  template void ComplexFt(const VectorBase<Real>&, VectorBase<Real>*, bool); \
  template void RealFft(VectorBase<Real>*, bool);                            \
  template void RealFftInefficient(VectorBase<Real>*, bool);                 \
  template void ComputeDctMatrix(Matrix<Real>*)
CUCTX_INSTANTIATE_FFT(float);
CUCTX_INSTANTIATE_FFT(double);
#undef CUCTX_INSTANTIATE_FFT

}  // namespace cuctx
