// bin/matrix-multiply.cc: C = op(A) op(B) through CuMatrix::AddMatMat, on the GPU or the CPU.
// SPDX-License-Identifier: Apache-2.0
#include "base/timer.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-matrix.h"
#include "cutool/tool.h"
#include "matrix/matrix.h"

#include <cstdio>
#include <sstream>
#include <string>

namespace {

const char* kUsage =
    "Multiplies two matrices in Kaldi's format: C = op(A) op(B), where op transposes with\n"
    "--transpose-a / --transpose-b, through CuMatrix::AddMatMat (cuBLAS on a GPU, BLAS on the\n"
    "CPU) in float. Says on stderr where it ran (the GPU's name, or the CPU) and how long the\n"
    "product and the whole computation with host<->device copies took.\n"
    "\n"
    "Usage: matrix-multiply [options] <matrix-a> <matrix-b> <matrix-out>   (\"-\": stdin/stdout)\n"
    " e.g.: matrix-multiply --use-gpu=yes --transpose-b a.mat b.mat c.mat\n"
    "Exit status: 0 written; 1 an input could not be read, the inner dimensions differ, or the\n"
    "output could not be written; 2 usage error; 3 no usable GPU with --use-gpu=yes.\n";

struct Options {
  bool transpose_a = false;
  bool transpose_b = false;
  bool binary = true;
};

std::string Shape(const cuctx::MatrixBase<float>& m, bool transposed) {
  std::ostringstream os;
  os << m.NumRows() << " x " << m.NumCols() << (transposed ? ", transposed" : "");
  return os.str();
}

std::string Where() {
  cuctx::CuDevice& device = cuctx::CuDevice::Instantiate();
  if (!device.Enabled()) return "CPU (" + device.NoGpuReason() + ")";
  return "GPU " + std::to_string(device.DeviceId()) + " (" + device.DeviceName() + ")";
}

int Multiply(const cuctx::ToolArgs& args, const Options& opts) {
  cuctx::Matrix<float> a, b;
  cuctx::ReadKaldiObject(args.Arg(1), &a);
  cuctx::ReadKaldiObject(args.Arg(2), &b);
  const cuctx::MatrixTransposeType trans_a = opts.transpose_a ? cuctx::kTrans : cuctx::kNoTrans;
  const cuctx::MatrixTransposeType trans_b = opts.transpose_b ? cuctx::kTrans : cuctx::kNoTrans;
  const cuctx::MatrixIndexT rows = opts.transpose_a ? a.NumCols() : a.NumRows();
  const cuctx::MatrixIndexT inner_a = opts.transpose_a ? a.NumRows() : a.NumCols();
  const cuctx::MatrixIndexT inner_b = opts.transpose_b ? b.NumCols() : b.NumRows();
  const cuctx::MatrixIndexT cols = opts.transpose_b ? b.NumRows() : b.NumCols();
  if (inner_a != inner_b)
    CUCTX_ERR << "inner dimensions differ: A is " << Shape(a, opts.transpose_a) << ", B is "
              << Shape(b, opts.transpose_b);

  cuctx::CuDevice& device = cuctx::CuDevice::Instantiate();
  // Creating the cuBLAS handle takes milliseconds; it is not part of the product's time.
  if (device.Enabled()) device.GetCublasHandle();
  cuctx::Timer total;
  cuctx::CuMatrix<float> cu_a(a), cu_b(b);
  cuctx::CuMatrix<float> cu_c(rows, cols, cuctx::kUndefined);
  cuctx::WaitForThreadStream();
  cuctx::Timer product;
  cu_c.AddMatMat(1.0f, cu_a, trans_a, cu_b, trans_b, 0.0f);
  cuctx::WaitForThreadStream();
  const double product_s = product.Elapsed();
  cuctx::Matrix<float> c(rows, cols, cuctx::kUndefined);
  cu_c.CopyToMat(&c);
  const double total_s = total.Elapsed();

  cuctx::WriteKaldiObject(c, args.Arg(3), opts.binary);
  const double flops = 2.0 * rows * cols * static_cast<double>(inner_a);
  std::fprintf(stderr,
               "matrix-multiply: C (%d x %d) = A (%s) * B (%s) on %s: product %.3f ms "
               "(%.2f GFLOP/s), with host<->device copies %.3f ms\n",
               rows, cols, Shape(a, opts.transpose_a).c_str(), Shape(b, opts.transpose_b).c_str(),
               Where().c_str(), product_s * 1e3, product_s > 0 ? flops / product_s * 1e-9 : 0.0,
               total_s * 1e3);
  return cuctx::kToolExitOk;
}

}  // namespace

int main(int argc, char* argv[]) {
  Options opts;
  cuctx::ToolSpec spec{kUsage, 3, 3, cuctx::ToolGpu::kSelect, "optional"};
  return cuctx::RunTool(
      argc, argv, spec,
      [&](cuctx::ParseOptions* po) {
        po->Register("transpose-a", &opts.transpose_a, "Use A transposed");
        po->Register("transpose-b", &opts.transpose_b, "Use B transposed");
        po->Register("binary", &opts.binary, "Write C in binary mode (false: text)");
      },
      [&](const cuctx::ToolArgs& args) { return Multiply(args, opts); });
}
