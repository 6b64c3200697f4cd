// matrix/sp-matrix-solve.cc: stable maximizers of quadratic auxiliary functions (SolverOptions).
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "matrix/matrix-check.h"
#include "matrix/matrix.h"
#include "matrix/sp-matrix.h"
#include "matrix/tp-matrix.h"
#include "matrix/vector.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace cuctx {

namespace {

// True if every stored element is exactly zero.
bool IsExactlyZero(const SpMatrix<double>& A) {
  const double* d = A.Data();
  const size_t size = static_cast<size_t>(A.NumRows()) * (A.NumRows() + 1) / 2;
  return std::all_of(d, d + size, [](double x) { return x == 0.0; });
}

// The eigendecomposition H = U diag(l) U^T of a positive semidefinite H with the eigenvalues
// floored at max(eps, largest / K); logs how many were floored if the options ask for it.
void FlooredEig(const SpMatrix<double>& H, const SolverOptions& opts, const char* what,
                Vector<double>* l, Matrix<double>* U) {
  const MatrixIndexT n = H.NumRows();
  l->Resize(n);
  U->Resize(n, n);
  H.SymPosSemiDefEig(l, U);
  const double floor = std::max<double>(opts.eps, l->Max() / opts.K);
  MatrixIndexT floored = 0;
  l->ApplyFloor(floor, &floored);
  if (floored != 0 && opts.print_debug_output)
    CUCTX_LOG << "Solving " << what << " problem for " << opts.name << ": floored " << floored
              << " eigenvalues";
}

// sqrt of the diagonal of H, each diagonal element first floored at a tiny positive value.
Vector<double> SqrtDiag(const SpMatrix<double>& H) {
  Vector<double> d(H.NumRows());
  for (MatrixIndexT i = 0; i < d.Dim(); ++i)
    d(i) = std::sqrt(std::max(H(i, i), std::numeric_limits<double>::min() * 1.0e+3));
  return d;
}

// H scaled on both sides by diag(1 / scale).
SpMatrix<double> ScaleBoth(const SpMatrix<double>& H, const Vector<double>& scale) {
  SpMatrix<double> out(H.NumRows());
  for (MatrixIndexT r = 0; r < H.NumRows(); ++r)
    for (MatrixIndexT c = 0; c <= r; ++c) out(r, c) = H(r, c) / (scale(r) * scale(c));
  return out;
}

// x^T g - 0.5 x^T H x.
double VectorObjective(const Matrix<double>& H_full, const VectorBase<double>& g,
                       const VectorBase<double>& x) {
  return VecVec(g, x) - 0.5 * VecMatVec(x, H_full, x);
}

double SolveVector(const SpMatrix<double>& H, const VectorBase<double>& g,
                   const SolverOptions& opts, VectorBase<double>* x) {
  const MatrixIndexT n = x->Dim();
  if (IsExactlyZero(H)) {
    CUCTX_WARN << "Zero quadratic term in quadratic vector problem for " << opts.name
               << ": leaving it unchanged";
    return 0.0;
  }
  if (opts.diagonal_precondition) {
    // x' = D x, g' = D^-1 g, H' = D^-1 H D^-1 with D = sqrt(diag(H)) leaves Q unchanged.
    const Vector<double> scale = SqrtDiag(H);
    Vector<double> x_scaled(*x), g_scaled(g);
    x_scaled.MulElements(scale);
    g_scaled.DivElements(scale);
    SolverOptions plain(opts);
    plain.diagonal_precondition = false;
    const double gain = SolveVector(ScaleBoth(H, scale), g_scaled, plain, &x_scaled);
    x_scaled.DivElements(scale);
    x->CopyFromVec(x_scaled);
    return gain;
  }
  Matrix<double> H_full(n, n);
  H.CopyToMat(&H_full);
  Vector<double> g_bar(g);
  if (opts.optimize_delta) g_bar.AddMatVec(-1.0, H_full, kNoTrans, *x, 1.0);
  Vector<double> l;
  Matrix<double> U;
  FlooredEig(H, opts, "quadratic vector", &l, &U);
  Vector<double> tmp(n);
  tmp.AddMatVec(1.0, U, kTrans, g_bar, 0.0);
  tmp.DivElements(l);
  Vector<double> x_new(n);
  x_new.AddMatVec(1.0, U, kNoTrans, tmp, 0.0);
  if (opts.optimize_delta) x_new.AddVec(1.0, *x);
  const double before = VectorObjective(H_full, g, *x);
  const double after = VectorObjective(H_full, g, x_new);
  if (after < before) {
    if (after < before - 1.0e-10 && opts.print_debug_output)
      CUCTX_WARN << "Optimizing vector auxiliary function for " << opts.name
                 << ": objective decreased from " << before << " to " << after
                 << "; keeping the old value";
    return 0.0;
  }
  x->CopyFromVec(x_new);
  return after - before;
}

// tr(M^T P Y) - 0.5 tr(P M Q M^T), with P Y precomputed.
double MatrixObjective(const Matrix<double>& M, const Matrix<double>& PY, const Matrix<double>& P,
                       const Matrix<double>& Q) {
  Matrix<double> MQ(M.NumRows(), M.NumCols());
  MQ.AddMatMat(1.0, M, kNoTrans, Q, kNoTrans, 0.0);
  Matrix<double> MQM(M.NumRows(), M.NumRows());
  MQM.AddMatMat(1.0, MQ, kNoTrans, M, kTrans, 0.0);
  return TraceMatMat(M, PY, kTrans) - 0.5 * TraceMatMat(P, MQM, kNoTrans);
}

double SolveMatrix(const SpMatrix<double>& Q, const Matrix<double>& Y, const SpMatrix<double>& P,
                   const SolverOptions& opts, Matrix<double>* M) {
  const MatrixIndexT rows = M->NumRows(), cols = M->NumCols();
  if (IsExactlyZero(Q)) {
    CUCTX_WARN << "Zero quadratic term in quadratic matrix problem for " << opts.name
               << ": leaving it unchanged";
    return 0.0;
  }
  if (opts.diagonal_precondition) {
    // The same rescaling as the vector case, on the column space of M (the space of Q).
    const Vector<double> scale = SqrtDiag(Q);
    Matrix<double> M_scaled(*M), Y_scaled(Y);
    M_scaled.MulColsVec(scale);
    Vector<double> inv_scale(scale);
    inv_scale.InvertElements();
    Y_scaled.MulColsVec(inv_scale);
    SolverOptions plain(opts);
    plain.diagonal_precondition = false;
    const double gain = SolveMatrix(ScaleBoth(Q, scale), Y_scaled, P, plain, &M_scaled);
    M_scaled.MulColsVec(inv_scale);
    M->CopyFromMat(M_scaled);
    return gain;
  }
  Matrix<double> Q_full(cols, cols), P_full(rows, rows);
  Q.CopyToMat(&Q_full);
  P.CopyToMat(&P_full);
  Matrix<double> Y_bar(Y);
  if (opts.optimize_delta) Y_bar.AddMatMat(-1.0, *M, kNoTrans, Q_full, kNoTrans, 1.0);
  Vector<double> l;
  Matrix<double> U;
  FlooredEig(Q, opts, "quadratic matrix", &l, &U);
  // Delta = Y_bar U diag(l)^-1 U^T.
  Matrix<double> tmp(rows, cols);
  tmp.AddMatMat(1.0, Y_bar, kNoTrans, U, kNoTrans, 0.0);
  l.InvertElements();
  tmp.MulColsVec(l);
  Matrix<double> M_new(rows, cols);
  M_new.AddMatMat(1.0, tmp, kNoTrans, U, kTrans, 0.0);
  if (opts.optimize_delta) M_new.AddMat(1.0, *M);
  Matrix<double> PY(rows, cols);
  PY.AddMatMat(1.0, P_full, kNoTrans, Y, kNoTrans, 0.0);
  const double before = MatrixObjective(*M, PY, P_full, Q_full);
  const double after = MatrixObjective(M_new, PY, P_full, Q_full);
  if (after < before) {
    if (after < before - 1.0e-10 && opts.print_debug_output)
      CUCTX_WARN << "Optimizing matrix auxiliary function for " << opts.name
                 << ": objective decreased from " << before << " to " << after
                 << "; keeping the old value";
    return 0.0;
  }
  M->CopyFromMat(M_new);
  return after - before;
}

}  // namespace

void SolverOptions::Check() const {
  CUCTX_CHECK(K > 10 && eps < 1.0e-10)
      << "SolverOptions::Check: need K > 10 and eps < 1e-10, got K = " << K << ", eps = " << eps;
}

template <typename Real>
Real SolveQuadraticProblem(const SpMatrix<Real>& H, const VectorBase<Real>& g,
                           const SolverOptions& opts, VectorBase<Real>* x) {
  CUCTX_CHECK(x != nullptr) << "SolveQuadraticProblem: x must not be null";
  if (H.NumRows() != g.Dim() || g.Dim() != x->Dim() || x->Dim() == 0)
    CUCTX_ERR << "SolveQuadraticProblem: H is " << H.NumRows() << "x" << H.NumRows()
              << ", g has dimension " << g.Dim() << " and x " << x->Dim()
              << "; they must agree and be nonzero";
  opts.Check();
  const SpMatrix<double> H_d(H);
  const Vector<double> g_d(g);
  Vector<double> x_d(*x);
  const double gain = SolveVector(H_d, g_d, opts, &x_d);
  x->CopyFromVec(x_d);
  return static_cast<Real>(gain);
}

template <typename Real>
Real SolveQuadraticMatrixProblem(const SpMatrix<Real>& Q, const MatrixBase<Real>& Y,
                                 const SpMatrix<Real>& P, const SolverOptions& opts,
                                 MatrixBase<Real>* M) {
  CUCTX_CHECK(M != nullptr) << "SolveQuadraticMatrixProblem: M must not be null";
  if (Q.NumRows() != M->NumCols() || P.NumRows() != M->NumRows() || Y.NumRows() != M->NumRows() ||
      Y.NumCols() != M->NumCols() || M->NumCols() == 0)
    CUCTX_ERR << "SolveQuadraticMatrixProblem: M is " << internal::ShapeOf(*M) << ", Y "
              << internal::ShapeOf(Y) << ", Q " << Q.NumRows() << "x" << Q.NumRows() << ", P "
              << P.NumRows() << "x" << P.NumRows()
              << "; need Y like M (with columns), Q of M's columns and P of M's rows";
  opts.Check();
  const SpMatrix<double> Q_d(Q), P_d(P);
  const Matrix<double> Y_d(Y);
  Matrix<double> M_d(*M);
  const double gain = SolveMatrix(Q_d, Y_d, P_d, opts, &M_d);
  M->CopyFromMat(M_d);
  return static_cast<Real>(gain);
}

template <typename Real>
Real SolveDoubleQuadraticMatrixProblem(const MatrixBase<Real>& G, const SpMatrix<Real>& P1,
                                       const SpMatrix<Real>& P2, const SpMatrix<Real>& Q1,
                                       const SpMatrix<Real>& Q2, const SolverOptions& opts,
                                       MatrixBase<Real>* M) {
  static const char* const kOp = "SolveDoubleQuadraticMatrixProblem";
  CUCTX_CHECK(M != nullptr) << kOp << ": M must not be null";
  const MatrixIndexT rows = M->NumRows(), cols = M->NumCols();
  if (G.NumRows() != rows || G.NumCols() != cols || P1.NumRows() != rows || P2.NumRows() != rows ||
      Q1.NumRows() != cols || Q2.NumRows() != cols || cols == 0)
    CUCTX_ERR << kOp << ": M is " << internal::ShapeOf(*M) << ", G " << internal::ShapeOf(G)
              << ", P1/P2 " << P1.NumRows() << "/" << P2.NumRows() << ", Q1/Q2 " << Q1.NumRows()
              << "/" << Q2.NumRows() << "; need G like M, P of M's rows, Q of its columns";
  opts.Check();
  if (!P1.IsPosDef()) CUCTX_ERR << kOp << ": P1 is not positive definite";
  // With P1 = L L^T and L^-1 P2 L^-T = U diag(d) U^T, T = U^T L^-1 gives T P1 T^T = I and
  // T P2 T^T = diag(d). Writing M = T^T M' splits the problem into one vector problem per row n
  // of M': maximize m'.g' - 0.5 m'^T (Q1 + d(n) Q2) m', with G' = T G.
  TpMatrix<double> L(rows);
  L.Cholesky(SpMatrix<double>(P1));
  TpMatrix<double> l_inv(L);
  l_inv.Invert();
  Matrix<double> l_full(rows, rows), l_inv_full(rows, rows), P2_full(rows, rows);
  L.CopyToMat(&l_full);
  l_inv.CopyToMat(&l_inv_full);
  P2.CopyToMat(&P2_full);
  Matrix<double> tmp(rows, rows), S_full(rows, rows);
  tmp.AddMatMat(1.0, l_inv_full, kNoTrans, P2_full, kNoTrans, 0.0);
  S_full.AddMatMat(1.0, tmp, kNoTrans, l_inv_full, kTrans, 0.0);
  Vector<double> d(rows);
  Matrix<double> U(rows, rows);
  SpMatrix<double>(S_full, kTakeMean).SymPosSemiDefEig(&d, &U);
  Matrix<double> T(rows, rows), T_inv_t(rows, rows);
  T.AddMatMat(1.0, U, kTrans, l_inv_full, kNoTrans, 0.0);
  // T^-T = (L U)^T = U^T L^T.
  T_inv_t.AddMatMat(1.0, U, kTrans, l_full, kTrans, 0.0);
  const Matrix<double> G_d(G), M_d(*M);
  Matrix<double> G_dash(rows, cols), M_dash(rows, cols);
  G_dash.AddMatMat(1.0, T, kNoTrans, G_d, kNoTrans, 0.0);
  M_dash.AddMatMat(1.0, T_inv_t, kNoTrans, M_d, kNoTrans, 0.0);
  const SpMatrix<double> Q1_d(Q1), Q2_d(Q2);
  double gain = 0.0;
  for (MatrixIndexT n = 0; n < rows; ++n) {
    SpMatrix<double> Q_sum(Q1_d);
    Q_sum.AddSp(d(n), Q2_d);
    SubVector<double> m(M_dash, n);
    const SubVector<double> g(G_dash, n);
    if (Q_sum.IsPosDef()) {
      // Direct solve m = Q_sum^-1 g, kept only if it does not lower the objective.
      Matrix<double> Q_full(cols, cols), Q_inv(cols, cols);
      Q_sum.CopyToMat(&Q_full);
      Q_inv.CopyFromMat(Q_full);
      Q_inv.SymInvertPosDef();
      Vector<double> m_new(cols);
      m_new.AddMatVec(1.0, Q_inv, kNoTrans, g, 0.0);
      const double before = VecVec(m, g) - 0.5 * VecMatVec(m, Q_full, m);
      const double after = VecVec(m_new, g) - 0.5 * VecMatVec(m_new, Q_full, m_new);
      if (after >= before) {
        m.CopyFromVec(m_new);
        gain += after - before;
        continue;
      }
      if (after >= before - 1.0e-05) continue;  // At the optimum already, up to rounding.
      CUCTX_WARN << kOp << ": direct solve lowered the objective for " << opts.name << " (row " << n
                 << "); using the eigenvalue-floored solver";
    }
    gain += SolveQuadraticProblem(Q_sum, Vector<double>(g), opts, &m);
  }
  Matrix<double> M_new(rows, cols);
  M_new.AddMatMat(1.0, T, kTrans, M_dash, kNoTrans, 0.0);
  M->CopyFromMat(M_new);
  return static_cast<Real>(gain);
}

#define CUCTX_INSTANTIATE_SOLVERS(Real)                                                     \
  template Real SolveQuadraticProblem(const SpMatrix<Real>&, const VectorBase<Real>&,       \
                                      const SolverOptions&, VectorBase<Real>*);             \
  template Real SolveQuadraticMatrixProblem(const SpMatrix<Real>&, const MatrixBase<Real>&, \
                                            const SpMatrix<Real>&, const SolverOptions&,    \
                                            MatrixBase<Real>*);                             \
  template Real SolveDoubleQuadraticMatrixProblem(                                          \
      const MatrixBase<Real>&, const SpMatrix<Real>&, const SpMatrix<Real>&,                \
      const SpMatrix<Real>&, const SpMatrix<Real>&, const SolverOptions&, MatrixBase<Real>*);

CUCTX_INSTANTIATE_SOLVERS(float)
CUCTX_INSTANTIATE_SOLVERS(double)
#undef CUCTX_INSTANTIATE_SOLVERS

}  // namespace cuctx
