// matrix/optimization.cc: LinearCgd (Nocedal & Wright Alg. 5.2) and OptimizeLbfgs (Alg. 7.4/7.5).
// SPDX-License-Identifier: Apache-2.0
#include "matrix/optimization.h"

#include "base/error.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace cuctx {

namespace {

// The conjugate-gradient iteration, in double whatever the caller's type: in float the updated
// residual and the directions lose accuracy on ill-conditioned systems (condition 1e4 is common:
// A = M M^T), and n steps leave a residual several times above what rounding x to float costs;
// issue 27 measured 0.149 where Kaldi's test allows 0.061. The O(n^2) conversions are negligible
// next to the n matrix-vector products.
int32 LinearCgdDouble(const LinearCgdOptions& opts, const Matrix<double>& A,
                      const VectorBase<double>& b, VectorBase<double>* x) {
  const MatrixIndexT n = A.NumRows();
  // Exact arithmetic ends after n steps; with roundoff a few more may still reduce the residual.
  // Kaldi allows n + 5, and so do we.
  const int32 cap = n + kLinearCgdExtraIters;
  const int32 max_iters = opts.max_iters >= 0 ? std::min<int32>(opts.max_iters, cap) : cap;
  Vector<double> r(n), p(n), Ap(n);
  auto residual_from_scratch = [&]() {
    r.AddMatVec(1.0, A, kNoTrans, *x, 0.0);
    r.AddVec(-1.0, b);
  };
  residual_from_scratch();
  p.CopyFromVec(r);
  p.Scale(-1.0);
  const double factor_sq =
      static_cast<double>(opts.recompute_residual_factor) * opts.recompute_residual_factor;
  const double max_error_sq = static_cast<double>(opts.max_error) * opts.max_error;
  double rr = VecVec(r, r), rr_recomputed = rr;
  int32 k = 0;
  while (k < max_iters && rr > max_error_sq) {
    Ap.AddMatVec(1.0, A, kNoTrans, p, 0.0);
    const double pAp = VecVec(p, Ap);
    if (!(pAp > 0)) {
      // p^T A p is 0 for a positive definite A only when p is 0, i.e. r is: nothing left to do.
      CUCTX_CHECK(pAp == 0 && VecVec(p, p) == 0)
          << "LinearCgd: p^T A p = " << pAp << " at iteration " << k
          << ": A is not positive definite";
      break;
    }
    // The exact line minimum along p, -p^T r / p^T A p. In exact arithmetic -p^T r equals r^T r
    // (the textbook step), but computed directly it stays the minimum after roundoff.
    const double alpha = -VecVec(p, r) / pAp;
    x->AddVec(alpha, p);
    r.AddVec(alpha, Ap);
    ++k;
    double rr_new = VecVec(r, r);
    // The updated residual drifts from A x - b; recompute it when its norm has fallen (or, a sign
    // of trouble, grown) by the factor since it was last computed from scratch.
    if (rr_new < factor_sq * rr_recomputed || rr_new * factor_sq > rr_recomputed) {
      residual_from_scratch();
      rr_new = VecVec(r, r);
      rr_recomputed = rr_new;
    }
    // p <- -r + (r_new^T r_new / r^T r) p
    p.Scale(rr_new / rr);
    p.AddVec(-1.0, r);
    rr = rr_new;
  }
  return k;
}

}  // namespace

template <typename Real>
int32 LinearCgd(const LinearCgdOptions& opts, const SpMatrix<Real>& A, const VectorBase<Real>& b,
                VectorBase<Real>* x) {
  CUCTX_CHECK(x != nullptr) << "LinearCgd: null x";
  const MatrixIndexT n = A.NumRows();
  CUCTX_CHECK(b.Dim() == n && x->Dim() == n) << "LinearCgd: sizes differ (A " << n << "x" << n
                                             << ", b " << b.Dim() << ", x " << x->Dim() << ")";
  CUCTX_CHECK(opts.recompute_residual_factor > 0 && opts.recompute_residual_factor < 1)
      << "LinearCgd: recompute_residual_factor must be in (0, 1) (got "
      << opts.recompute_residual_factor << ")";
  // The dense copy lets each product go through BLAS gemv; it costs the same O(n^2) memory order
  // as the packed input.
  const Matrix<double> full((SpMatrix<double>(A)));
  Vector<double> b_d(b), x_d(*x);
  const int32 iters = LinearCgdDouble(opts, full, b_d, &x_d);
  x->CopyFromVec(x_d);
  return iters;
}

template <typename Real>
OptimizeLbfgs<Real>::OptimizeLbfgs(const VectorBase<Real>& x, const LbfgsOptions& opts)
    : opts_(opts), x_(x), new_x_(x), best_x_(x), deriv_(x.Dim()), grad_(x.Dim()), temp_(x.Dim()) {
  CUCTX_CHECK(opts.m >= 1) << "OptimizeLbfgs: m must be >= 1 (got " << opts.m << ")";
  CUCTX_CHECK(opts.d > 1) << "OptimizeLbfgs: d must be > 1 (got " << opts.d << ")";
  CUCTX_CHECK(opts.c1 > 0 && opts.c1 < opts.c2 && opts.c2 < 1)
      << "OptimizeLbfgs: need 0 < c1 < c2 < 1 (got c1 " << opts.c1 << ", c2 " << opts.c2 << ")";
  CUCTX_CHECK(opts.avg_step_length >= 1)
      << "OptimizeLbfgs: avg_step_length must be >= 1 (got " << opts.avg_step_length << ")";
  CUCTX_CHECK(opts.max_line_search_iters >= 0) << "OptimizeLbfgs: max_line_search_iters < 0";
  CUCTX_CHECK(
      opts.first_step_length >= 0 && opts.first_step_impr >= 0 &&
      (opts.first_step_length > 0 || opts.first_step_impr > 0 || opts.first_step_learning_rate > 0))
      << "OptimizeLbfgs: the first step needs first_step_length > 0, first_step_impr > 0 or "
         "first_step_learning_rate > 0 (got "
      << opts.first_step_length << ", " << opts.first_step_impr << ", "
      << opts.first_step_learning_rate << ")";
  f_ = std::numeric_limits<Real>::infinity();
  best_f_ = Sign() * std::numeric_limits<Real>::infinity();
  d_ = opts.d;
  s_.Resize(opts.m, x.Dim());
  y_.Resize(opts.m, x.Dim());
  rho_.Resize(opts.m);
  alpha_.Resize(opts.m);
}

template <typename Real>
const VectorBase<Real>& OptimizeLbfgs<Real>::GetValue(Real* objf_value) const {
  if (objf_value != nullptr) *objf_value = best_f_;
  return best_x_;
}

template <typename Real>
Real OptimizeLbfgs<Real>::RecentStepLength() const {
  const size_t n = step_lengths_.size();
  if (n == 0) return std::numeric_limits<Real>::infinity();
  if (n >= 2 && step_lengths_[n - 1] == 0 && step_lengths_[n - 2] == 0) return 0;
  Real sum = 0;
  for (Real len : step_lengths_) sum += len;
  return sum / static_cast<Real>(n);
}

template <typename Real>
void OptimizeLbfgs<Real>::RecordStepLength(Real length) {
  step_lengths_.push_back(length);
  if (step_lengths_.size() > static_cast<size_t>(opts_.avg_step_length))
    step_lengths_.erase(step_lengths_.begin());
}

template <typename Real>
void OptimizeLbfgs<Real>::DoStep(Real function_value, const VectorBase<Real>& gradient) {
  CUCTX_CHECK(gradient.Dim() == Dim()) << "OptimizeLbfgs::DoStep: gradient has dimension "
                                       << gradient.Dim() << ", expected " << Dim();
  if (opts_.minimize ? function_value < best_f_ : function_value > best_f_) {
    best_f_ = function_value;
    best_x_.CopyFromVec(new_x_);
  }
  grad_.CopyFromVec(gradient);
  grad_.Scale(Sign());
  const Real f = Sign() * function_value;
  if (state_ == kBeforeStep)
    ComputeNewDirection(f, grad_);
  else
    StepSizeIteration(f, grad_);
}

template <typename Real>
void OptimizeLbfgs<Real>::DoStep(Real function_value, const VectorBase<Real>& gradient,
                                 const VectorBase<Real>& diag_approx_2nd_deriv) {
  CUCTX_CHECK(diag_approx_2nd_deriv.Dim() == Dim())
      << "OptimizeLbfgs::DoStep: diagonal has dimension " << diag_approx_2nd_deriv.Dim()
      << ", expected " << Dim();
  if (Dim() > 0) {
    CUCTX_CHECK(opts_.minimize ? diag_approx_2nd_deriv.Min() > 0 : diag_approx_2nd_deriv.Max() < 0)
        << "OptimizeLbfgs::DoStep: the diagonal second derivative must be strictly "
        << (opts_.minimize ? "positive when minimizing (min " : "negative when maximizing (max ")
        << (opts_.minimize ? diag_approx_2nd_deriv.Min() : diag_approx_2nd_deriv.Max()) << ")";
  }
  H_.Resize(Dim(), kUndefined);
  H_.CopyFromVec(diag_approx_2nd_deriv);
  H_.Scale(Sign());
  H_.InvertElements();
  h_was_set_ = true;
  DoStep(function_value, gradient);
}

template <typename Real>
void OptimizeLbfgs<Real>::ComputeNewDirection(Real f, const VectorBase<Real>& g) {
  const int64 m = opts_.m;
  if (k_ == 0) {
    if (H_.Dim() == 0) {  // first direction ever: a scaled gradient step
      const Real gnorm = g.Norm(2.0);
      Real rate = opts_.first_step_learning_rate;
      if (opts_.first_step_length > 0)
        rate = gnorm > 0 ? opts_.first_step_length / gnorm : 1;
      else if (opts_.first_step_impr > 0)
        rate = gnorm > 0 ? opts_.first_step_impr / (gnorm * gnorm) : 1;
      H_.Resize(Dim());
      H_.Set(rate);
    }
  } else if (!h_was_set_) {
    // N&W eq. 7.20: H0 = (s^T y / y^T y) I from the newest pair.
    const SubVector<Real> s(s_, static_cast<MatrixIndexT>((k_ - 1) % m));
    const SubVector<Real> y(y_, static_cast<MatrixIndexT>((k_ - 1) % m));
    double gamma = static_cast<double>(VecVec(s, y)) / VecVec(y, y);
    if (!std::isfinite(gamma)) gamma = 1.0;
    H_.Set(static_cast<Real>(gamma));
  }
  // Two-loop recursion: r = H_k g, with q in temp_ and r in new_x_.
  Vector<Real>& q = temp_;
  q.CopyFromVec(g);
  const int64 oldest = std::max<int64>(k_ - m, 0);
  for (int64 i = k_ - 1; i >= oldest; --i) {
    const MatrixIndexT row = static_cast<MatrixIndexT>(i % m);
    alpha_(row) = rho_(row) * VecVec(SubVector<Real>(s_, row), q);
    q.AddVec(-alpha_(row), SubVector<Real>(y_, row));
  }
  Vector<Real>& r = new_x_;
  r.CopyFromVec(q);
  r.MulElements(H_);
  for (int64 i = oldest; i < k_; ++i) {
    const MatrixIndexT row = static_cast<MatrixIndexT>(i % m);
    const Real beta = rho_(row) * VecVec(SubVector<Real>(y_, row), r);
    r.AddVec(alpha_(row) - beta, SubVector<Real>(s_, row));
  }
  // Trial point with step 1 along p = -r.
  r.Scale(-1.0);
  r.AddVec(1.0, x_);
  if (&deriv_ != &g) deriv_.CopyFromVec(g);
  f_ = f;
  d_ = opts_.d;
  num_failures_i_ = num_failures_ii_ = 0;
  last_failure_ = kNone;
  state_ = kWithinStep;
}

template <typename Real>
bool OptimizeLbfgs<Real>::AcceptStep(Real f, const VectorBase<Real>& g) {
  const MatrixIndexT row = static_cast<MatrixIndexT>(k_ % opts_.m);
  SubVector<Real> s(s_, row), y(y_, row);
  s.CopyFromVec(new_x_);
  s.AddVec(-1.0, x_);
  y.CopyFromVec(g);
  y.AddVec(-1.0, deriv_);
  const Real sy = VecVec(s, y);
  const Real length = s.Norm(2.0);
  // A pair without positive curvature would break the positive definiteness of H; the caller
  // restarts instead (which also discards the overwritten row).
  if (!(sy > Real(1.0e-20)) || length == 0) return false;
  rho_(row) = 1 / sy;
  RecordStepLength(length);
  x_.CopyFromVec(new_x_);
  f_ = f;
  ++k_;
  return true;
}

template <typename Real>
void OptimizeLbfgs<Real>::Restart(bool at_new_x, Real f, const VectorBase<Real>& g) {
  if (at_new_x) {
    temp_.CopyFromVec(new_x_);
    temp_.AddVec(-1.0, x_);
    RecordStepLength(temp_.Norm(2.0));
    x_.CopyFromVec(new_x_);
  } else {
    RecordStepLength(0);  // back at x_: a step of length zero
    new_x_.CopyFromVec(x_);
  }
  k_ = 0;  // forget the pairs; H_ is kept as it was
  state_ = kBeforeStep;
  ComputeNewDirection(f, g);
}

template <typename Real>
void OptimizeLbfgs<Real>::StepSizeIteration(Real f, const VectorBase<Real>& g) {
  // s = new_x_ - x_; both tests use directional derivatives along s.
  Vector<Real>& s = temp_;
  s.CopyFromVec(new_x_);
  s.AddVec(-1.0, x_);
  const Real slope0 = VecVec(deriv_, s);
  const bool wolfe_i = f <= f_ + static_cast<Real>(opts_.c1) * slope0;  // false for inf and NaN
  const bool wolfe_ii = VecVec(g, s) >= static_cast<Real>(opts_.c2) * slope0;

  enum Action { kAccept, kDecrease, kIncrease, kRestart } action;
  if (wolfe_i && wolfe_ii) {
    action = kAccept;
  } else if (!wolfe_i) {
    // Too far (or past a constraint): shrink. Switching between failure kinds means we bracket
    // the acceptable region, so the factor is refined to its square root.
    if (last_failure_ == kWolfeII) d_ = std::sqrt(d_);
    last_failure_ = kWolfeI;
    ++num_failures_i_;
    action = kDecrease;
  } else {
    if (last_failure_ == kWolfeI) d_ = std::sqrt(d_);
    last_failure_ = kWolfeII;
    ++num_failures_ii_;
    action = kIncrease;
  }
  if (action != kAccept && num_failures_i_ + num_failures_ii_ > opts_.max_line_search_iters)
    action = kRestart;

  if (action == kAccept) {
    if (AcceptStep(f, g)) {
      state_ = kBeforeStep;
      ComputeNewDirection(f, g);
      return;
    }
    action = kRestart;
  }
  if (action == kDecrease || action == kIncrease) {
    const Real scale = action == kDecrease ? 1 / d_ : d_;
    // new_x_ = x_ + scale * s; s (temp_) still holds the old step.
    Vector<Real> old_x(new_x_);
    new_x_.CopyFromVec(x_);
    new_x_.AddVec(scale, s);
    if (new_x_.ApproxEqual(old_x, 0.0)) {
      action = kRestart;  // the step no longer changes x
    } else if (action == kDecrease && new_x_.ApproxEqual(old_x, 1.0e-08) &&
               std::abs(f_ - f) < 1.0e-08 * std::abs(f_)) {
      action = kRestart;  // backtracking in roundoff noise next to x_
    } else {
      return;
    }
  }
  // Restart from whichever of x_ and the trial point is better.
  if (f < f_)
    Restart(true, f, g);
  else
    Restart(false, f_, deriv_);
}

template int32 LinearCgd(const LinearCgdOptions&, const SpMatrix<float>&, const VectorBase<float>&,
                         VectorBase<float>*);
template int32 LinearCgd(const LinearCgdOptions&, const SpMatrix<double>&,
                         const VectorBase<double>&, VectorBase<double>*);
template class OptimizeLbfgs<float>;
template class OptimizeLbfgs<double>;

}  // namespace cuctx
