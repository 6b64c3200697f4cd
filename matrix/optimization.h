// matrix/optimization.h: linear conjugate gradient (LinearCgd) and L-BFGS (OptimizeLbfgs).
// SPDX-License-Identifier: Apache-2.0
//
// Names, options, defaults and the calling protocol follow Kaldi's matrix/optimization.h; the
// code is our own, from J. Nocedal and S. J. Wright, "Numerical Optimization", 2nd ed., Springer
// 2006: Algorithm 5.2 (conjugate gradient) and Algorithms 7.4/7.5 (L-BFGS two-loop recursion),
// with Kaldi's line search (below). These are iterative solvers that call back to the user, not
// dense factorizations, so there is no LAPACK routine to use instead.
#ifndef CUCTX_MATRIX_OPTIMIZATION_H_
#define CUCTX_MATRIX_OPTIMIZATION_H_

#include "base/types.h"
#include "matrix/matrix.h"
#include "matrix/sp-matrix.h"
#include "matrix/vector.h"

#include <vector>

namespace cuctx {

// ---- linear conjugate gradient ------------------------------------------------------------------

struct LinearCgdOptions {
  int32 max_iters;      // stop after this many iterations if >= 0 (-1: Dim() + 5 at most).
  BaseFloat max_error;  // stop once the 2-norm of the residual A x - b is <= this.
  // Whenever the residual norm has fallen by this factor since it was last computed from scratch
  // as A x - b, it is recomputed from scratch (limits the drift of the updated residual).
  BaseFloat recompute_residual_factor;

  LinearCgdOptions() : max_iters(-1), max_error(0.0), recompute_residual_factor(0.01) {}
};

// Iterations LinearCgd may do beyond b.Dim(): exact arithmetic converges in b.Dim() steps, but
// with roundoff an ill-conditioned system may need a few more (Kaldi allows the same 5).
constexpr int32 kLinearCgdExtraIters = 5;

// Solves A x = b approximately by linear conjugate gradient, starting from the value of *x on
// entry. Stops when the iteration count reaches b.Dim() + kLinearCgdExtraIters, or
// opts.max_iters (if >= 0), or when ||A x - b||_2 <= opts.max_error, whichever comes first. A must be symmetric positive definite
// (not checked beyond what the iteration sees: a direction with p^T A p <= 0 throws). Returns the
// number of iterations done. The iteration runs in double precision for float inputs too (only x
// is rounded back), so a float solve reaches what rounding x to float allows. Throws cuctx::Error if A.NumRows(), b.Dim() and x->Dim() differ or
// if opts.recompute_residual_factor is not in (0, 1).
template <typename Real>
int32 LinearCgd(const LinearCgdOptions& opts, const SpMatrix<Real>& A, const VectorBase<Real>& b,
                VectorBase<Real>* x);

// ---- L-BFGS -------------------------------------------------------------------------------------
//
// OptimizeLbfgs drives the optimization by calls from the user; there is no callback:
//   OptimizeLbfgs<Real> opt(x0, opts);
//   for (iter...) {
//     const VectorBase<Real>& x = opt.GetProposedValue();
//     compute f(x) and its gradient g(x);
//     opt.DoStep(f, g);
//     if (opt.RecentStepLength() < tolerance) break;
//   }
//   x_best = opt.GetValue(&f_best);
// The first evaluation (at x0) computes a direction; each later evaluation is a trial point of
// the line search along that direction, starting at step 1. The line search (Kaldi's) checks
//   Wolfe i (Armijo):  f(x + s) <= f(x) + c1 g(x)^T s,
//   Wolfe ii (weak curvature): g(x + s)^T s >= c2 g(x)^T s        (signs flipped when maximizing)
// accepts the step when both hold, divides the step by d when i fails and multiplies it by d
// when only ii fails; d starts at opts.d and becomes sqrt(d) each time the kind of failure
// switches. After more than max_line_search_iters failures, or when a trial step no longer moves
// x, or when an accepted step has y^T s <= 1e-20 or zero length, L-BFGS restarts (forgets its
// memory) from the better of x and the trial point. A function value of +inf (minimizing) or -inf
// (maximizing) marks a point outside a constraint: it fails Wolfe i and its gradient is unused.

struct LbfgsOptions {
  bool minimize;                   // true: minimize; false: maximize.
  int m;                           // number of (s, y) pairs kept.
  float first_step_learning_rate;  // the first step is -first_step_learning_rate * gradient...
  float first_step_length;         // ...unless this is > 0: a first step of this length...
  float first_step_impr;           // ...or, if this is > 0, one predicting this improvement
                                   // (for a linear objective). Length takes precedence.
  float c1;                        // Armijo constant (Wolfe i).
  float c2;                        // curvature constant (Wolfe ii).
  float d;                         // > 1: factor by which the line search changes the step.
  int max_line_search_iters;       // more line-search failures than this restart L-BFGS.
  int avg_step_length;             // how many recent steps RecentStepLength() averages.

  explicit LbfgsOptions(bool minimize_in = true)
      : minimize(minimize_in),
        m(10),
        first_step_learning_rate(1.0),
        first_step_length(0.0),
        first_step_impr(0.0),
        c1(1.0e-04),
        c2(0.9),
        d(2.0),
        max_line_search_iters(50),
        avg_step_length(4) {}
};

// L-BFGS over a vector of dimension x.Dim(). Owns copies of the current point, the trial point,
// the best point and m pairs of (step, gradient change). Not thread-safe; not copyable.
template <typename Real>
class OptimizeLbfgs {
 public:
  // Starts at x. Throws cuctx::Error on invalid options (m < 1, d <= 1, c1 or c2 outside (0, 1),
  // c1 >= c2, avg_step_length < 1, first-step settings that are negative or all zero).
  OptimizeLbfgs(const VectorBase<Real>& x, const LbfgsOptions& opts);
  OptimizeLbfgs(const OptimizeLbfgs&) = delete;
  OptimizeLbfgs& operator=(const OptimizeLbfgs&) = delete;

  // The point with the best function value seen so far (x0 before any DoStep), and that value
  // through objf_value if non-null (+inf, or -inf when maximizing, before any DoStep).
  const VectorBase<Real>& GetValue(Real* objf_value = nullptr) const;

  // The point at which the user should evaluate the function and gradient next.
  const VectorBase<Real>& GetProposedValue() const { return new_x_; }

  // Average length of the last (up to opts.avg_step_length) steps taken, a restart counting as a
  // step of its length (possibly zero). +inf before any step; 0 when the last two recorded steps
  // were both 0 (repeated restarts without progress), so it works as a convergence test.
  // (Kaldi's header says "if the most recent step was 0"; its code, followed here, needs two.)
  Real RecentStepLength() const;

  // Gives the function value and gradient at GetProposedValue(). gradient.Dim() must equal the
  // dimension (else throws).
  void DoStep(Real function_value, const VectorBase<Real>& gradient);

  // As above, also giving a diagonal approximation to the second derivative, whose inverse is
  // used as the initial inverse Hessian of this and later directions. Every element must be > 0
  // when minimizing, < 0 when maximizing (else throws).
  void DoStep(Real function_value, const VectorBase<Real>& gradient,
              const VectorBase<Real>& diag_approx_2nd_deriv);

 private:
  enum State { kBeforeStep, kWithinStep };
  enum Failure { kNone, kWolfeI, kWolfeII };

  MatrixIndexT Dim() const { return x_.Dim(); }
  // Internally we always minimize: these map the user's values to the minimized objective.
  Real Sign() const { return opts_.minimize ? Real(1) : Real(-1); }

  void ComputeNewDirection(Real f, const VectorBase<Real>& g);  // f, g already sign-adjusted
  void StepSizeIteration(Real f, const VectorBase<Real>& g);
  bool AcceptStep(Real f, const VectorBase<Real>& g);
  void Restart(bool at_new_x, Real f, const VectorBase<Real>& g);
  void RecordStepLength(Real length);

  LbfgsOptions opts_;
  int64 k_ = 0;  // number of stored pairs since the last (re)start
  State state_ = kBeforeStep;
  bool h_was_set_ = false;  // H_ came from the user's diagonal

  Vector<Real> x_;       // current accepted point
  Vector<Real> new_x_;   // trial point
  Vector<Real> best_x_;  // best point seen
  Vector<Real> deriv_;   // sign-adjusted gradient at x_
  Vector<Real> grad_;    // sign-adjusted gradient of the latest DoStep
  Vector<Real> temp_;
  Real f_ = 0;       // sign-adjusted function value at x_
  Real best_f_ = 0;  // user-signed best value
  Real d_ = 2;
  int num_failures_i_ = 0;
  int num_failures_ii_ = 0;
  Failure last_failure_ = kNone;

  Vector<Real> H_;      // diagonal initial inverse Hessian (sign-adjusted: positive)
  Matrix<Real> s_;      // m x dim: steps, row i % m holds s_i
  Matrix<Real> y_;      // m x dim: gradient changes, row i % m holds y_i
  Vector<Real> rho_;    // rho_(i % m) = 1 / (y_i^T s_i)
  Vector<Real> alpha_;  // scratch of the two-loop recursion
  std::vector<Real> step_lengths_;
};

}  // namespace cuctx

#endif  // CUCTX_MATRIX_OPTIMIZATION_H_
