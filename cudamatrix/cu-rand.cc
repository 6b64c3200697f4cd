// cudamatrix/cu-rand.cc: CuRand (cuRAND on the GPU, base/random.h on the CPU) and the SetRandn /
// SetRandUniform fills of CuMatrixBase and CuVectorBase.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-rand.h"

#include "base/error.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-profile.h"
#include "cudamatrix/internal/cu-capture-gate.h"
#include "cudamatrix/internal/cu-kernels.h"
#include "cudamatrix/internal/cu-operand.h"
#include "cudamatrix/internal/cu-storage.h"

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-check.h"

#include <curand.h>
#endif

namespace cuctx {
namespace {

using internal::HostView;

#if CUCTX_HAVE_CUDA
curandStatus_t Generate(curandGenerator_t gen, bool gaussian, float* out, size_t n) {
  return gaussian ? curandGenerateNormal(gen, out, n, 0.0f, 1.0f)
                  : curandGenerateUniform(gen, out, n);
}
curandStatus_t Generate(curandGenerator_t gen, bool gaussian, double* out, size_t n) {
  return gaussian ? curandGenerateNormalDouble(gen, out, n, 0.0, 1.0)
                  : curandGenerateUniformDouble(gen, out, n);
}

// Fills rows x cols elements (row pitch `stride`) with the next draws of this thread's generator,
// in packed row-major order (see NOTE ON pitch independence in cu-rand.h).
template <typename Real>
void FillOnDevice(bool gaussian, Real* data, MatrixIndexT rows, MatrixIndexT cols,
                  MatrixIndexT stride) {
  const size_t n = static_cast<size_t>(rows) * static_cast<size_t>(cols);
  const size_t draws = gaussian ? n + (n & 1) : n;
  curandGenerator_t gen = CuDevice::Instantiate().GetCurandHandle();
  if ((rows == 1 || stride == cols) && draws == n) {
    CUCTX_CURAND_CHECK(Generate(gen, gaussian, data, n));
    return;
  }
  internal::ScopedStorage scratch(draws * sizeof(Real));
  Real* packed = static_cast<Real*>(scratch.Data());
  CUCTX_CURAND_CHECK(Generate(gen, gaussian, packed, draws));
  const size_t row_bytes = static_cast<size_t>(cols) * sizeof(Real);
  internal::CopyStorage2D(data, static_cast<size_t>(stride) * sizeof(Real), packed, row_bytes,
                          row_bytes, static_cast<size_t>(rows));
}
#endif

}  // namespace

template <typename Real>
void CuRand<Real>::SeedGpu() {
  CuDevice::Instantiate().SeedGpu();
}

template <typename Real>
void CuRand<Real>::RandUniform(CuMatrixBase<Real>* tgt) {
  internal::CuOpScope op_scope("CuRand::RandUniform");
  // cuRAND's generators allocate and keep host-side state: not capturable.
  internal::CheckNotCapturing("CuRand::RandUniform (SetRandn, SetRandUniform)");
  CUCTX_CHECK(tgt != nullptr) << "CuRand::RandUniform: null matrix";
  if (tgt->NumRows() == 0 || tgt->NumCols() == 0) return;
#if CUCTX_HAVE_CUDA
  if (internal::OnGpu()) {
    FillOnDevice(false, tgt->Data(), tgt->NumRows(), tgt->NumCols(), tgt->Stride());
    return;
  }
#endif
  HostView(*tgt).SetRandUniform();
}

template <typename Real>
void CuRand<Real>::RandUniform(CuMatrix<Real>* tgt) {
  RandUniform(static_cast<CuMatrixBase<Real>*>(tgt));
}

template <typename Real>
void CuRand<Real>::RandUniform(CuVectorBase<Real>* tgt) {
  internal::CuOpScope op_scope("CuRand::RandUniform");
  // cuRAND's generators allocate and keep host-side state: not capturable.
  internal::CheckNotCapturing("CuRand::RandUniform (SetRandn, SetRandUniform)");
  CUCTX_CHECK(tgt != nullptr) << "CuRand::RandUniform: null vector";
  if (tgt->Dim() == 0) return;
#if CUCTX_HAVE_CUDA
  if (internal::OnGpu()) {
    FillOnDevice(false, tgt->Data(), 1, tgt->Dim(), tgt->Dim());
    return;
  }
#endif
  HostView(*tgt).SetRandUniform();
}

template <typename Real>
void CuRand<Real>::RandGaussian(CuMatrixBase<Real>* tgt) {
  internal::CuOpScope op_scope("CuRand::RandGaussian");
  // cuRAND's generators allocate and keep host-side state: not capturable.
  internal::CheckNotCapturing("CuRand::RandGaussian (SetRandn, SetRandUniform)");
  CUCTX_CHECK(tgt != nullptr) << "CuRand::RandGaussian: null matrix";
  if (tgt->NumRows() == 0 || tgt->NumCols() == 0) return;
#if CUCTX_HAVE_CUDA
  if (internal::OnGpu()) {
    FillOnDevice(true, tgt->Data(), tgt->NumRows(), tgt->NumCols(), tgt->Stride());
    return;
  }
#endif
  HostView(*tgt).SetRandn();
}

template <typename Real>
void CuRand<Real>::RandGaussian(CuMatrix<Real>* tgt) {
  RandGaussian(static_cast<CuMatrixBase<Real>*>(tgt));
}

template <typename Real>
void CuRand<Real>::RandGaussian(CuVectorBase<Real>* tgt) {
  internal::CuOpScope op_scope("CuRand::RandGaussian");
  // cuRAND's generators allocate and keep host-side state: not capturable.
  internal::CheckNotCapturing("CuRand::RandGaussian (SetRandn, SetRandUniform)");
  CUCTX_CHECK(tgt != nullptr) << "CuRand::RandGaussian: null vector";
  if (tgt->Dim() == 0) return;
#if CUCTX_HAVE_CUDA
  if (internal::OnGpu()) {
    FillOnDevice(true, tgt->Data(), 1, tgt->Dim(), tgt->Dim());
    return;
  }
#endif
  HostView(*tgt).SetRandn();
}

template <typename Real>
void CuRand<Real>::BinarizeProbs(const CuMatrix<Real>& probs, CuMatrix<Real>* states) {
  internal::CuOpScope op_scope("CuRand::BinarizeProbs");
  CUCTX_CHECK(states != nullptr && states != &probs)
      << "CuRand::BinarizeProbs: states must be a matrix other than probs";
  states->Resize(probs.NumRows(), probs.NumCols(), kUndefined);
  // The uniform draws go into *states, which the comparison then overwrites in place.
  RandUniform(states);
  if (probs.NumRows() == 0 || probs.NumCols() == 0) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchBinarizeProbs(states->Dim(), probs.Data(), probs.Stride(), states->Data(), s);
      }))
    return;
  const SubMatrix<Real> p = HostView(probs);
  SubMatrix<Real> s = HostView(*states);
  for (MatrixIndexT r = 0; r < p.NumRows(); ++r)
    for (MatrixIndexT c = 0; c < p.NumCols(); ++c) s(r, c) = p(r, c) > s(r, c) ? 1 : 0;
}

template <typename Real>
void CuRand<Real>::AddGaussNoise(CuMatrix<Real>* tgt, Real gscale) {
  CUCTX_CHECK(tgt != nullptr) << "CuRand::AddGaussNoise: null matrix";
  CuMatrix<Real> noise(tgt->NumRows(), tgt->NumCols(), kUndefined, kStrideEqualNumCols);
  RandGaussian(&noise);
  tgt->AddMat(gscale, noise);
}

template <typename Real>
void CuMatrixBase<Real>::SetRandn() {
  CuRand<Real>().RandGaussian(this);
}

template <typename Real>
void CuMatrixBase<Real>::SetRandUniform() {
  CuRand<Real>().RandUniform(this);
}

template <typename Real>
void CuVectorBase<Real>::SetRandn() {
  CuRand<Real>().RandGaussian(this);
}

template <typename Real>
void CuVectorBase<Real>::SetRandUniform() {
  CuRand<Real>().RandUniform(this);
}

template class CuRand<float>;
template class CuRand<double>;
template void CuMatrixBase<float>::SetRandn();
template void CuMatrixBase<double>::SetRandn();
template void CuMatrixBase<float>::SetRandUniform();
template void CuMatrixBase<double>::SetRandUniform();
template void CuVectorBase<float>::SetRandn();
template void CuVectorBase<double>::SetRandn();
template void CuVectorBase<float>::SetRandUniform();
template void CuVectorBase<double>::SetRandUniform();

}  // namespace cuctx
