// cudamatrix/cu-rand.h: CuRand, uniform and Gaussian fills of Cu matrices and vectors.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_CUDAMATRIX_CU_RAND_H_
#define CUCTX_CUDAMATRIX_CU_RAND_H_

#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-vector.h"

namespace cuctx {

// Random fills for the Cu containers, as Kaldi's CuRand.
//
// Owns nothing: in GPU mode every draw comes from the calling thread's cuRAND generator
// (CuDevice::GetCurandHandle(), a pseudo-random generator bound to cudaStreamPerThread), so all
// CuRand objects of one thread share one sequence, and SeedGpu() (here or on CuDevice) makes that
// sequence reproducible. Without a GPU the numbers come from base/random.h (the process-wide
// generator; reproducible after SetRandomSeed()). The two modes give different numbers with the
// same distribution. Every method is asynchronous on this thread's stream in GPU mode.
//
// NOTE ON pitch independence: a matrix is filled as if its rows were packed end to end. When
// Stride() != NumCols() the numbers are generated into packed scratch from the caching allocator
// and copied into the rows, so a matrix receives the same numbers whatever its pitch (and a
// CuMatrix the same numbers as a CuSubMatrix of the same shape). cuRAND's normal generators only
// produce an even count; an odd-sized fill draws one extra number and drops it, so a fill of n
// elements always consumes n rounded up to even numbers of the sequence.
//
// Thread-safety: an object may be used by one thread at a time; objects on different threads use
// different generators.
template <typename Real>
class CuRand {
 public:
  CuRand() = default;
  CuRand(const CuRand&) = delete;
  CuRand& operator=(const CuRand&) = delete;

  // Reseeds this thread's cuRAND generator from base/random's Rand() (CuDevice::SeedGpu()), so
  // that after SetRandomSeed(s) the GPU draws repeat. No-op without a GPU.
  void SeedGpu();

  // Uniform values in (0, 1] (cuRAND) or (0, 1) (CPU) in every element.
  void RandUniform(CuMatrixBase<Real>* tgt);
  void RandUniform(CuMatrix<Real>* tgt);
  void RandUniform(CuVectorBase<Real>* tgt);
  // Standard normal values in every element.
  void RandGaussian(CuMatrixBase<Real>* tgt);
  void RandGaussian(CuMatrix<Real>* tgt);
  void RandGaussian(CuVectorBase<Real>* tgt);

  // Resizes *states to probs' shape and sets each element to 1 with probability probs(r, c)
  // (that is, 1 where a uniform draw is below the probability) and to 0 otherwise. states must
  // not be &probs (throws).
  void BinarizeProbs(const CuMatrix<Real>& probs, CuMatrix<Real>* states);
  // *tgt += gscale * (standard normal noise), one independent draw per element.
  void AddGaussNoise(CuMatrix<Real>* tgt, Real gscale = 1.0);
};

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_RAND_H_
