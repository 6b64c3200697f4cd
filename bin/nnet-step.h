// bin/nnet-step.h: the nnet-style forward/backward step that the graph and memory-plan
// benchmarks time (bin/cu-graph-bench.cc, bin/cu-memory-plan-bench.cc).
// SPDX-License-Identifier: Apache-2.0
//
// For L layers of width `dim` on a minibatch of `rows` frames: forward z = x W^T (AddMatMat),
// z += b (AddVecToRows), a = sigmoid(z) (Sigmoid), keeping every a; then backward from the top,
// dz = a (1 - a) * da (DiffSigmoid), dW = dz^T x_in (AddMatMat) and da_in = dz W (AddMatMat).
// Every op allocates its output (CuMatrix temporaries), as real code does. Header-only; all work
// on the calling thread's stream.
#ifndef CUCTX_BIN_NNET_STEP_H_
#define CUCTX_BIN_NNET_STEP_H_

#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-vector.h"

#include <cmath>
#include <vector>

namespace cuctx {
namespace bench {

struct Net {
  std::vector<CuMatrix<float>> w;  // dim x dim
  std::vector<CuVector<float>> b;  // dim
};

// What a step produces: the top activation and every layer's weight gradient. Resized inside
// the step (so under capture they are graph memory that outlives the capture).
struct StepOutput {
  CuMatrix<float> top;
  std::vector<CuMatrix<float>> dw;
};

inline void Step(const Net& net, const CuMatrix<float>& x, StepOutput* out) {
  const int layers = static_cast<int>(net.w.size());
  const MatrixIndexT rows = x.NumRows(), dim = x.NumCols();
  std::vector<CuMatrix<float>> acts;
  acts.reserve(layers);
  for (int l = 0; l < layers; ++l) {
    const CuMatrixBase<float>& in = l == 0 ? x : acts[l - 1];
    CuMatrix<float> z(rows, dim, kUndefined);
    z.AddMatMat(1.0f, in, kNoTrans, net.w[l], kTrans, 0.0f);
    z.AddVecToRows(1.0f, net.b[l]);
    acts.emplace_back(rows, dim, kUndefined);
    acts.back().Sigmoid(z);
  }
  out->top.Resize(rows, dim, kUndefined);
  out->top.CopyFromMat(acts.back());
  out->dw.resize(layers);
  CuMatrix<float> da(acts.back());  // d(loss)/d(top) = top, as for a squared loss toward 0
  for (int l = layers - 1; l >= 0; --l) {
    const CuMatrixBase<float>& in = l == 0 ? x : acts[l - 1];
    CuMatrix<float> dz(rows, dim, kUndefined);
    dz.DiffSigmoid(acts[l], da);
    out->dw[l].Resize(dim, dim, kUndefined);
    out->dw[l].AddMatMat(1.0f, dz, kTrans, in, kNoTrans, 0.0f);
    CuMatrix<float> da_in(rows, dim, kUndefined);
    da_in.AddMatMat(1.0f, dz, kNoTrans, net.w[l], kNoTrans, 0.0f);
    da.Swap(&da_in);
  }
}

// L layers of width `dim`, weights scaled by 1/sqrt(dim) so activations stay in range.
inline Net MakeNet(MatrixIndexT dim, int layers) {
  Net net;
  for (int l = 0; l < layers; ++l) {
    net.w.emplace_back(dim, dim, kUndefined);
    net.w.back().SetRandn();
    net.w.back().Scale(1.0f / std::sqrt(static_cast<float>(dim)));
    net.b.emplace_back(dim, kUndefined);
    net.b.back().SetRandn();
  }
  return net;
}

}  // namespace bench
}  // namespace cuctx

#endif  // CUCTX_BIN_NNET_STEP_H_
