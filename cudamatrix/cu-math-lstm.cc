// cudamatrix/cu-math-lstm.cc: cu::ComputeLstmNonlinearity and cu::BackpropLstmNonlinearity (GPU
// kernels of cu-kernels-lstm.cu) and their host references, the Cpu* forms.
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "cudamatrix/cu-math.h"
#include "cudamatrix/cu-profile.h"
#include "cudamatrix/internal/cu-kernels.h"
#include "cudamatrix/internal/cu-operand.h"
#include "cudamatrix/internal/cu-storage.h"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace cuctx {
namespace cu {
namespace {

using internal::HostView;
using internal::Overlap;
using internal::SameView;

template <typename M>
std::string Shape(const M& m) {
  return std::to_string(m.NumRows()) + "x" + std::to_string(m.NumCols());
}

// Throws unless m is rows x cols, naming the argument.
template <typename M>
void CheckShape(const char* op, const M& m, const char* name, MatrixIndexT rows,
                MatrixIndexT cols) {
  CUCTX_CHECK(m.NumRows() == rows && m.NumCols() == cols)
      << op << ": " << name << " is " << Shape(m) << ", expected " << rows << "x" << cols;
}

// The number of cells C of an input of width 5C or 5C + 3 (throws for any other width).
MatrixIndexT CellDim(const char* op, MatrixIndexT input_cols) {
  const MatrixIndexT cell_dim = input_cols / 5;
  CUCTX_CHECK(input_cols == 5 * cell_dim || input_cols == 5 * cell_dim + 3)
      << op << ": input has " << input_cols << " columns, which is neither 5C nor 5C + 3";
  return cell_dim;
}

template <typename M>
MatrixIndexT CheckForward(const char* op, const M& input, const M& params, const M* output) {
  CUCTX_CHECK(output != nullptr) << op << ": output is NULL";
  const MatrixIndexT cell_dim = CellDim(op, input.NumCols());
  CheckShape(op, params, "params", 3, cell_dim);
  CheckShape(op, *output, "output", input.NumRows(), 2 * cell_dim);
  return cell_dim;
}

template <typename M, typename D, typename V>
MatrixIndexT CheckBackprop(const char* op, const M& input, const M& params, const M& output_deriv,
                           const D& deriv_sum_in, const V& self_repair_config, const M* input_deriv,
                           const M* params_deriv, const D* value_sum_out, const D* deriv_sum_out,
                           const M* self_repair_sum_out) {
  const MatrixIndexT cell_dim = CellDim(op, input.NumCols());
  CheckShape(op, params, "params", 3, cell_dim);
  CheckShape(op, output_deriv, "output_deriv", input.NumRows(), 2 * cell_dim);
  CheckShape(op, deriv_sum_in, "deriv_sum_in", 5, cell_dim);
  CUCTX_CHECK(self_repair_config.Dim() == 10)
      << op << ": self_repair_config has dimension " << self_repair_config.Dim() << ", expected 10";
  if (input_deriv != nullptr)
    CheckShape(op, *input_deriv, "input_deriv", input.NumRows(), input.NumCols());
  const bool sums = params_deriv != nullptr;
  CUCTX_CHECK((value_sum_out != nullptr) == sums && (deriv_sum_out != nullptr) == sums &&
              (self_repair_sum_out != nullptr) == sums)
      << op << ": params_deriv, value_sum_out, deriv_sum_out and self_repair_sum_out must be all "
      << "NULL or all non-NULL";
  if (sums) {
    CheckShape(op, *params_deriv, "params_deriv", 3, cell_dim);
    CheckShape(op, *value_sum_out, "value_sum_out", 5, cell_dim);
    CheckShape(op, *deriv_sum_out, "deriv_sum_out", 5, cell_dim);
    CheckShape(op, *self_repair_sum_out, "self_repair_sum_out", 5, cell_dim);
  }
  return cell_dim;
}

// Throws if the named operands share memory.
template <typename A, typename B>
void CheckDisjoint(const char* op, const A& a, const char* a_name, const B& b, const char* b_name) {
  CUCTX_CHECK(!Overlap(a, b)) << op << ": " << a_name << " overlaps " << b_name;
}

template <typename Real>
Real Sigmoid(Real x) {
  // exp of a non-positive argument only, so neither branch overflows.
  if (x > 0) return Real(1) / (Real(1) + std::exp(-x));
  const Real e = std::exp(x);
  return e / (e + Real(1));
}

}  // namespace

template <typename Real>
void CpuComputeLstmNonlinearity(const MatrixBase<Real>& input, const MatrixBase<Real>& params,
                                MatrixBase<Real>* output) {
  const MatrixIndexT C = CheckForward("cu::CpuComputeLstmNonlinearity", input, params,
                                      static_cast<const MatrixBase<Real>*>(output));
  const bool dropout = input.NumCols() == 5 * C + 3;
  for (MatrixIndexT r = 0; r < input.NumRows(); ++r) {
    const Real* x = input.RowData(r);
    Real* y = output->RowData(r);
    const Real i_scale = dropout ? x[5 * C] : 1, f_scale = dropout ? x[5 * C + 1] : 1,
               o_scale = dropout ? x[5 * C + 2] : 1;
    for (MatrixIndexT c = 0; c < C; ++c) {
      const Real c_prev = x[4 * C + c];
      const Real i_t = Sigmoid(x[c] + params(0, c) * c_prev);
      const Real f_t = Sigmoid(x[C + c] + params(1, c) * c_prev);
      const Real c_t = f_t * f_scale * c_prev + i_t * i_scale * std::tanh(x[2 * C + c]);
      const Real o_t = Sigmoid(x[3 * C + c] + params(2, c) * c_t);
      y[c] = c_t;
      y[C + c] = o_t * o_scale * std::tanh(c_t);
    }
  }
}

template <typename Real>
void CpuBackpropLstmNonlinearity(const MatrixBase<Real>& input, const MatrixBase<Real>& params,
                                 const MatrixBase<Real>& output_deriv,
                                 const MatrixBase<double>& deriv_sum_in,
                                 const VectorBase<Real>& self_repair_config, double count_in,
                                 MatrixBase<Real>* input_deriv, MatrixBase<Real>* params_deriv,
                                 MatrixBase<double>* value_sum_out,
                                 MatrixBase<double>* deriv_sum_out,
                                 MatrixBase<Real>* self_repair_sum_out) {
  const MatrixIndexT C =
      CheckBackprop("cu::CpuBackpropLstmNonlinearity", input, params, output_deriv, deriv_sum_in,
                    self_repair_config, static_cast<const MatrixBase<Real>*>(input_deriv),
                    static_cast<const MatrixBase<Real>*>(params_deriv),
                    static_cast<const MatrixBase<double>*>(value_sum_out),
                    static_cast<const MatrixBase<double>*>(deriv_sum_out),
                    static_cast<const MatrixBase<Real>*>(self_repair_sum_out));
  const MatrixIndexT rows = input.NumRows();
  const bool dropout = input.NumCols() == 5 * C + 3;
  const bool sums = params_deriv != nullptr;
  // Kaldi adds 1 to the count (so that a zero count divides safely) in Real precision.
  const double count = static_cast<Real>(1.0 + count_in);
  // repair[k * C + c]: the self-repair scale of nonlinearity k in cell c, 0 where it is off.
  std::vector<Real> repair(5 * C);
  for (int k = 0; k < 5; ++k)
    for (MatrixIndexT c = 0; c < C; ++c)
      repair[k * C + c] =
          deriv_sum_in(k, c) / count < self_repair_config(k) ? self_repair_config(5 + k) : Real(0);
  // acc[k * C + c]: the 13 column sums of GPU kernel order (3 parameter derivatives, 5 values,
  // 5 derivatives), accumulated in double.
  std::vector<double> acc(sums ? 13 * C : 0, 0.0);
  for (MatrixIndexT r = 0; r < rows; ++r) {
    const Real* x = input.RowData(r);
    const Real* dy = output_deriv.RowData(r);
    const Real i_scale = dropout ? x[5 * C] : 1, f_scale = dropout ? x[5 * C + 1] : 1,
               o_scale = dropout ? x[5 * C + 2] : 1;
    Real* dx = input_deriv != nullptr ? input_deriv->RowData(r) : nullptr;
    for (MatrixIndexT c = 0; c < C; ++c) {
      const Real w_ic = params(0, c), w_fc = params(1, c), w_oc = params(2, c);
      const Real c_prev = x[4 * C + c];
      const Real i_t = Sigmoid(x[c] + w_ic * c_prev);
      const Real f_t = Sigmoid(x[C + c] + w_fc * c_prev);
      const Real g = std::tanh(x[2 * C + c]);
      const Real c_t = f_t * f_scale * c_prev + i_t * i_scale * g;
      const Real o_t = Sigmoid(x[3 * C + c] + w_oc * c_t);
      const Real h = std::tanh(c_t);
      const Real dc_out = dy[c], dm = dy[C + c];
      const Real i_d = i_t * (1 - i_t), f_d = f_t * (1 - f_t), g_d = 1 - g * g,
                 o_d = o_t * (1 - o_t), h_d = 1 - h * h;
      // Backwards through m_t, o_t, c_t, then the gates; each input derivative carries its
      // nonlinearity's self-repair term.
      const Real do_in = o_d * (o_scale * h * dm) - (2 * o_t - 1) * repair[3 * C + c];
      const Real dc = h_d * (o_t * o_scale * dm) + dc_out + do_in * w_oc - h * repair[4 * C + c];
      const Real df_in = f_d * (dc * f_scale * c_prev) - (2 * f_t - 1) * repair[C + c];
      const Real di_in = i_d * (dc * i_scale * g) - (2 * i_t - 1) * repair[c];
      if (dx != nullptr) {
        // Every read of this element's inputs is done, so dx may be x (in place).
        dx[c] = di_in;
        dx[C + c] = df_in;
        dx[2 * C + c] = g_d * (i_t * i_scale * dc) - g * repair[2 * C + c];
        dx[3 * C + c] = do_in;
        dx[4 * C + c] = w_ic * di_in + w_fc * df_in + f_t * f_scale * dc;
      }
      if (sums) {
        const Real terms[13] = {c_prev * di_in,
                                c_prev * df_in,
                                c_t * do_in,
                                i_t,
                                f_t,
                                g,
                                o_t,
                                h,
                                i_d,
                                f_d,
                                g_d,
                                o_d,
                                h_d};
        for (int k = 0; k < 13; ++k) acc[k * C + c] += terms[k];
      }
    }
  }
  if (!sums) return;
  for (MatrixIndexT c = 0; c < C; ++c) {
    for (int k = 0; k < 3; ++k) (*params_deriv)(k, c) = static_cast<Real>(acc[k * C + c]);
    for (int k = 0; k < 5; ++k) {
      (*value_sum_out)(k, c) += acc[(3 + k) * C + c];
      // deriv_sum_out may be deriv_sum_in: the count is decided before the sum is updated.
      (*self_repair_sum_out)(k, c) =
          deriv_sum_in(k, c) / count < self_repair_config(k) ? static_cast<Real>(rows) : Real(0);
      (*deriv_sum_out)(k, c) += acc[(8 + k) * C + c];
    }
  }
}

template <typename Real>
void ComputeLstmNonlinearity(const CuMatrixBase<Real>& input, const CuMatrixBase<Real>& params,
                             CuMatrixBase<Real>* output) {
  internal::CuOpScope op_scope("cu::ComputeLstmNonlinearity");
  const char* op = "cu::ComputeLstmNonlinearity";
  const MatrixIndexT C =
      CheckForward(op, input, params, static_cast<const CuMatrixBase<Real>*>(output));
  CheckDisjoint(op, input, "input", *output, "output");
  CheckDisjoint(op, params, "params", *output, "output");
  if (input.NumRows() == 0 || C == 0) return;
  const bool dropout = input.NumCols() == 5 * C + 3;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchLstmForward(input.NumRows(), C, dropout, input.Data(), input.Stride(), params.Data(),
                          params.Stride(), output->Data(), output->Stride(), s);
      }))
    return;
  SubMatrix<Real> out = HostView(*output);
  CpuComputeLstmNonlinearity<Real>(HostView(input), HostView(params), &out);
}

template <typename Real>
void BackpropLstmNonlinearity(const CuMatrixBase<Real>& input, const CuMatrixBase<Real>& params,
                              const CuMatrixBase<Real>& output_deriv,
                              const CuMatrixBase<double>& deriv_sum_in,
                              const CuVectorBase<Real>& self_repair_config, double count_in,
                              CuMatrixBase<Real>* input_deriv, CuMatrixBase<Real>* params_deriv,
                              CuMatrixBase<double>* value_sum_out,
                              CuMatrixBase<double>* deriv_sum_out,
                              CuMatrixBase<Real>* self_repair_sum_out) {
  internal::CuOpScope op_scope("cu::BackpropLstmNonlinearity");
  const char* op = "cu::BackpropLstmNonlinearity";
  const MatrixIndexT C =
      CheckBackprop(op, input, params, output_deriv, deriv_sum_in, self_repair_config,
                    static_cast<const CuMatrixBase<Real>*>(input_deriv),
                    static_cast<const CuMatrixBase<Real>*>(params_deriv),
                    static_cast<const CuMatrixBase<double>*>(value_sum_out),
                    static_cast<const CuMatrixBase<double>*>(deriv_sum_out),
                    static_cast<const CuMatrixBase<Real>*>(self_repair_sum_out));
  if (input_deriv != nullptr) {
    if (!SameView(input, *input_deriv))
      CheckDisjoint(op, input, "input", *input_deriv, "input_deriv");
    CheckDisjoint(op, params, "params", *input_deriv, "input_deriv");
    CheckDisjoint(op, output_deriv, "output_deriv", *input_deriv, "input_deriv");
  }
  if (params_deriv != nullptr) {
    CheckDisjoint(op, params, "params", *params_deriv, "params_deriv");
    CheckDisjoint(op, input, "input", *params_deriv, "params_deriv");
    CheckDisjoint(op, *value_sum_out, "value_sum_out", *deriv_sum_out, "deriv_sum_out");
    CheckDisjoint(op, deriv_sum_in, "deriv_sum_in", *value_sum_out, "value_sum_out");
    if (!SameView(deriv_sum_in, *deriv_sum_out))
      CheckDisjoint(op, deriv_sum_in, "deriv_sum_in", *deriv_sum_out, "deriv_sum_out");
  }
  if (C == 0) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LstmBackpropArgs<Real> a{};
        a.rows = input.NumRows();
        a.cell_dim = C;
        a.dropout = input.NumCols() == 5 * C + 3;
        a.input = input.Data();
        a.input_stride = input.Stride();
        a.params = params.Data();
        a.params_stride = params.Stride();
        a.output_deriv = output_deriv.Data();
        a.output_deriv_stride = output_deriv.Stride();
        a.deriv_sum_in = deriv_sum_in.Data();
        a.deriv_sum_in_stride = deriv_sum_in.Stride();
        a.self_repair_config = self_repair_config.Data();
        a.count = static_cast<Real>(1.0 + count_in);
        if (input_deriv != nullptr) {
          a.input_deriv = input_deriv->Data();
          a.input_deriv_stride = input_deriv->Stride();
        }
        const bool sums = params_deriv != nullptr;
        if (sums) {
          a.params_deriv = params_deriv->Data();
          a.params_deriv_stride = params_deriv->Stride();
          a.value_sum_out = value_sum_out->Data();
          a.value_sum_out_stride = value_sum_out->Stride();
          a.deriv_sum_out = deriv_sum_out->Data();
          a.deriv_sum_out_stride = deriv_sum_out->Stride();
          a.self_repair_sum_out = self_repair_sum_out->Data();
          a.self_repair_sum_out_stride = self_repair_sum_out->Stride();
        }
        internal::ScopedStorage work(LstmBackpropWorkspaceBytes(a.rows, C, sums));
        LaunchLstmBackprop(a, work.Data(), s);
      }))
    return;
  std::optional<SubMatrix<Real>> id, pd, srs;
  std::optional<SubMatrix<double>> vs, ds;
  if (input_deriv != nullptr) id.emplace(HostView(*input_deriv));
  if (params_deriv != nullptr) {
    pd.emplace(HostView(*params_deriv));
    vs.emplace(HostView(*value_sum_out));
    ds.emplace(HostView(*deriv_sum_out));
    srs.emplace(HostView(*self_repair_sum_out));
  }
  auto ptr = [](auto& o) { return o ? &*o : nullptr; };
  CpuBackpropLstmNonlinearity<Real>(HostView(input), HostView(params), HostView(output_deriv),
                                    HostView(deriv_sum_in), HostView(self_repair_config), count_in,
                                    ptr(id), ptr(pd), ptr(vs), ptr(ds), ptr(srs));
}

#define CUCTX_INSTANTIATE_CU_MATH_LSTM_(R)                                                         \
  template void CpuComputeLstmNonlinearity(const MatrixBase<R>&, const MatrixBase<R>&,             \
                                           MatrixBase<R>*);                                        \
  template void ComputeLstmNonlinearity(const CuMatrixBase<R>&, const CuMatrixBase<R>&,            \
                                        CuMatrixBase<R>*);                                         \
  template void CpuBackpropLstmNonlinearity(                                                       \
      const MatrixBase<R>&, const MatrixBase<R>&, const MatrixBase<R>&, const MatrixBase<double>&, \
      const VectorBase<R>&, double, MatrixBase<R>*, MatrixBase<R>*, MatrixBase<double>*,           \
      MatrixBase<double>*, MatrixBase<R>*);                                                        \
  template void BackpropLstmNonlinearity(                                                          \
      const CuMatrixBase<R>&, const CuMatrixBase<R>&, const CuMatrixBase<R>&,                      \
      const CuMatrixBase<double>&, const CuVectorBase<R>&, double, CuMatrixBase<R>*,               \
      CuMatrixBase<R>*, CuMatrixBase<double>*, CuMatrixBase<double>*, CuMatrixBase<R>*);

CUCTX_INSTANTIATE_CU_MATH_LSTM_(float)
CUCTX_INSTANTIATE_CU_MATH_LSTM_(double)

#undef CUCTX_INSTANTIATE_CU_MATH_LSTM_

}  // namespace cu
}  // namespace cuctx
