// bin/cu-data-parallel-example.cc: one data-parallel gradient step of a linear model over several
// GPUs (CuNcclComm::AllReduce of per-shard gradients), checked against the same gradient computed
// on one GPU.
// SPDX-License-Identifier: Apache-2.0
//
// Model: W (in x out); batch X (batch x in), targets Y (batch x out), all generated from --seed,
// so every rank and the one-GPU reference see the same numbers. Rank k of n takes rows
// [k b, (k + 1) b) of X and Y (b = batch / n) and computes E_k = X_k W - Y_k and G_k = X_k^T E_k /
// batch with two GEMMs on its GPU; the sum of G_k over the ranks (AllReduce) is the full-batch
// gradient of the loss sum ||X W - Y||^2 / (2 batch).
#include "base/error.h"
#include "bin/bench-table.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-nccl.h"
#include "cutool/tool.h"
#include "matrix/matrix.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace cuctx {
namespace {

const char* kUsage =
    "Runs a data-parallel gradient step of a linear model: each rank computes the gradient of its\n"
    "shard of the batch on its GPU (two GEMMs), AllReduce sums them, and the result is compared\n"
    "with the gradient of the whole batch computed on one GPU. Prints the time per step, the\n"
    "largest absolute and the relative difference, the tolerance and OK or MISMATCH.\n"
    "\n"
    "Two modes:\n"
    "  threads    (default) one thread per GPU in this process: --gpus=N (0: all visible).\n"
    "  processes  one process per rank: --nranks=N --rank=R, each on GPU R % (visible GPUs), and\n"
    "             the NCCL id either in a file (--nccl-id-file=PATH: rank 0 creates it, the\n"
    "             others wait for it) or in CUCTX_NCCL_ID (--nccl-id-env, hex; the process that\n"
    "             made the id must stay alive until all ranks joined).\n"
    "\n"
    "Usage: cu-data-parallel-example [options]\n"
    "  e.g. cu-data-parallel-example --gpus=2 --steps=10\n"
    "       cu-data-parallel-example --nranks=2 --rank=0 --nccl-id-file=/tmp/id &\n"
    "       cu-data-parallel-example --nranks=2 --rank=1 --nccl-id-file=/tmp/id\n"
    "Exit status: 0 the gradients agree; 1 MISMATCH or an error; 2 usage error; 3 no GPU (or too\n"
    "  few for --gpus).\n";

struct Options {
  int32 gpus = 0, nranks = 0, rank = -1, batch = 4096, in = 1024, out = 512, seed = 1, steps = 1;
  std::string nccl_id_file;
  bool nccl_id_env = false, use_double = false, print_gpu_count = false;
  double id_timeout = 60;
};

// The model and data, on the host, from the seed.
template <typename Real>
struct Problem {
  explicit Problem(const Options& o) : w(o.in, o.out), x(o.batch, o.in), y(o.batch, o.out) {
    std::mt19937_64 gen(static_cast<uint64>(o.seed));
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    const double w_scale = 1.0 / std::sqrt(static_cast<double>(o.in));
    for (MatrixIndexT r = 0; r < o.in; ++r)
      for (MatrixIndexT c = 0; c < o.out; ++c) w(r, c) = static_cast<Real>(w_scale * uniform(gen));
    for (MatrixIndexT r = 0; r < o.batch; ++r)
      for (MatrixIndexT c = 0; c < o.in; ++c) x(r, c) = static_cast<Real>(uniform(gen));
    for (MatrixIndexT r = 0; r < o.batch; ++r)
      for (MatrixIndexT c = 0; c < o.out; ++c) y(r, c) = static_cast<Real>(uniform(gen));
  }
  Matrix<Real> w, x, y;
};

// G = X_rows^T (X_rows W - Y_rows) / batch for rows [first, first + rows), on this thread's GPU.
template <typename Real>
class ShardGradient {
 public:
  ShardGradient(const Problem<Real>& p, MatrixIndexT first, MatrixIndexT rows)
      : w_(p.w),
        x_(p.x.RowRange(first, rows)),
        y_(p.y.RowRange(first, rows)),
        e_(rows, p.w.NumCols(), kUndefined),
        g_(p.w.NumRows(), p.w.NumCols(), kUndefined),
        scale_(static_cast<Real>(1.0 / p.x.NumRows())) {}
  // Queues the two GEMMs (asynchronous on this thread's stream).
  void Compute() {
    e_.CopyFromMat(y_);
    e_.AddMatMat(1.0, x_, kNoTrans, w_, kNoTrans, -1.0);
    g_.AddMatMat(scale_, x_, kTrans, e_, kNoTrans, 0.0);
  }
  CuMatrix<Real>& Gradient() { return g_; }

 private:
  CuMatrix<Real> w_, x_, y_, e_, g_;
  Real scale_;
};

// One rank's steps on the calling thread (bound to comm's GPU): returns the all-reduced gradient
// on the host and the seconds of each step (from `barrier`, if any, to this stream's end).
template <typename Real>
Matrix<Real> RunRank(const Problem<Real>& p, const Options& o, CuNcclComm* comm,
                     bench::ThreadBarrier* barrier, std::vector<double>* step_seconds) {
  const MatrixIndexT shard = o.batch / comm->NumRanks();
  ShardGradient<Real> grad(p, comm->Rank() * shard, shard);
  WaitForThreadStream();  // the uploads are not part of a step
  for (int s = 0; s < o.steps; ++s) {
    if (barrier != nullptr && !barrier->Wait()) CUCTX_ERR << "another rank failed";
    const double start = bench::Now();
    grad.Compute();
    comm->AllReduce(&grad.Gradient());
    WaitForThreadStream();
    step_seconds->push_back(bench::Now() - start);
  }
  return Matrix<Real>(grad.Gradient());
}

// The whole batch's gradient on the calling thread's GPU.
template <typename Real>
Matrix<Real> Reference(const Problem<Real>& p) {
  ShardGradient<Real> grad(p, 0, p.x.NumRows());
  grad.Compute();
  return Matrix<Real>(grad.Gradient());
}

// Prints the comparison of `got` (one or more ranks' results) with `ref`; true when all agree.
template <typename Real>
bool Compare(const std::vector<Matrix<Real>>& got, const Matrix<Real>& ref, int ref_gpu,
             const std::string& prefix) {
  const double tol = sizeof(Real) == sizeof(float) ? 1e-4 : 1e-10;
  double max_abs = 0, rel = 0, ref_norm2 = 0;
  for (MatrixIndexT r = 0; r < ref.NumRows(); ++r)
    for (MatrixIndexT c = 0; c < ref.NumCols(); ++c) ref_norm2 += double(ref(r, c)) * ref(r, c);
  for (const Matrix<Real>& g : got) {
    double diff2 = 0;
    for (MatrixIndexT r = 0; r < ref.NumRows(); ++r)
      for (MatrixIndexT c = 0; c < ref.NumCols(); ++c) {
        const double d = std::abs(double(g(r, c)) - double(ref(r, c)));
        max_abs = std::max(max_abs, d);
        diff2 += d * d;
      }
    // ||G - G_ref||_F / ||G_ref||_F, NaN-safe: a NaN anywhere makes the comparison fail.
    const double this_rel = std::sqrt(diff2) / std::max(std::sqrt(ref_norm2), 1e-300);
    rel = std::isnan(this_rel) ? this_rel : std::max(rel, this_rel);
  }
  const bool ok = rel <= tol;
  std::printf(
      "%sgradient vs one GPU (GPU %d, whole batch): max abs diff %.3g, relative diff "
      "%.3g, tolerance %.0e: %s\n",
      prefix.c_str(), ref_gpu, max_abs, rel, tol, ok ? "OK" : "MISMATCH");
  return ok;
}

void PrintTimes(const std::string& prefix, const std::vector<double>& seconds) {
  double sum = 0;
  for (size_t s = 0; s < seconds.size(); ++s) {
    std::printf("%sstep %zu: %.3f ms\n", prefix.c_str(), s + 1, seconds[s] * 1e3);
    sum += seconds[s];
  }
  std::printf("%smean time per step: %.3f ms over %zu step(s)\n", prefix.c_str(),
              seconds.empty() ? 0.0 : sum / seconds.size() * 1e3, seconds.size());
}

template <typename Real>
int RunThreads(const Options& o, int num_gpus) {
  if (o.batch % num_gpus != 0)
    throw ToolUsageError("--batch=" + std::to_string(o.batch) + " is not divisible by the " +
                         std::to_string(num_gpus) + " ranks");
  std::vector<int> ids(num_gpus);
  for (int k = 0; k < num_gpus; ++k) ids[k] = k;
  CuDevice& device = CuDevice::Instantiate();
  device.SelectGpuIdForThread(ids[0]);
  device.AllowMultithreading();
  std::printf(
      "cu-data-parallel-example: threads mode, %d rank(s) on GPUs 0..%d, %s, batch %d, "
      "in %d, out %d, seed %d\n",
      num_gpus, num_gpus - 1, sizeof(Real) == sizeof(float) ? "float" : "double", o.batch, o.in,
      o.out, o.seed);
  const Problem<Real> p(o);
  std::vector<std::unique_ptr<CuNcclComm>> comms = CuNcclComm::CreateForThreads(ids);
  bench::ThreadBarrier barrier(num_gpus);
  std::vector<Matrix<Real>> results(num_gpus);
  std::vector<std::vector<double>> seconds(num_gpus);
  std::vector<std::string> errors(num_gpus);
  std::vector<std::thread> threads;
  for (int k = 0; k < num_gpus; ++k)
    threads.emplace_back([&, k] {
      try {
        CuDevice::Instantiate().SelectGpuIdForThread(ids[k]);
        results[k] = RunRank(p, o, comms[k].get(), &barrier, &seconds[k]);
      } catch (const std::exception& e) {
        errors[k] = e.what();
        barrier.Cancel();
      }
    });
  for (std::thread& t : threads) t.join();
  // Report the rank that failed first, not the ones it stopped ("another rank failed").
  for (bool stopped : {false, true})
    for (int k = 0; k < num_gpus; ++k)
      if (!errors[k].empty() &&
          (stopped || errors[k].find("another rank failed") == std::string::npos))
        CUCTX_ERR << "rank " << k << " (GPU " << ids[k] << "): " << errors[k];
  // A step ends when the slowest rank's stream is done.
  std::vector<double> step(o.steps, 0.0);
  for (int s = 0; s < o.steps; ++s)
    for (int k = 0; k < num_gpus; ++k) step[s] = std::max(step[s], seconds[k][s]);
  PrintTimes("", step);
  return Compare(results, Reference(p), ids[0], "") ? 0 : 1;
}

template <typename Real>
int RunProcess(const Options& o, int visible) {
  const int gpu = o.rank % visible;
  CuDevice::Instantiate().SelectGpuIdForThread(gpu);
  const std::string prefix = "rank " + std::to_string(o.rank) + ": ";
  std::printf(
      "%scu-data-parallel-example: processes mode, rank %d of %d on GPU %d, %s, batch %d, "
      "in %d, out %d, seed %d\n",
      prefix.c_str(), o.rank, o.nranks, gpu, sizeof(Real) == sizeof(float) ? "float" : "double",
      o.batch, o.in, o.out, o.seed);
  std::fflush(stdout);
  CuNcclUniqueId id;
  if (o.nccl_id_env) {
    id = CuNcclUniqueId::FromEnvironment();
  } else if (o.rank == 0) {
    id = CuNcclUniqueId::Create();
    id.WriteToFile(o.nccl_id_file);
  } else {
    id = CuNcclUniqueId::ReadFromFile(o.nccl_id_file, o.id_timeout);
  }
  CuNcclComm comm(id, o.nranks, o.rank);
  // Every rank has read the id once the communicator exists; a stale file would mislead the
  // next run's ranks, so rank 0 removes it.
  if (!o.nccl_id_env && o.rank == 0) std::remove(o.nccl_id_file.c_str());
  const Problem<Real> p(o);
  std::vector<double> seconds;
  std::vector<Matrix<Real>> results;
  results.push_back(RunRank(p, o, &comm, nullptr, &seconds));
  PrintTimes(prefix, seconds);
  return Compare(results, Reference(p), gpu, prefix) ? 0 : 1;
}

int Run(const Options& o) {
  if (o.batch < 1 || o.in < 1 || o.out < 1)
    throw ToolUsageError("--batch, --in and --out must be >= 1");
  if (o.steps < 1) throw ToolUsageError("--steps must be >= 1");
  if (o.gpus < 0) throw ToolUsageError("--gpus must be >= 0 (0: all visible)");
  if (o.nranks < 0) throw ToolUsageError("--nranks must be >= 1 (0: threads mode)");
  if (o.nranks == 0 && (o.rank >= 0 || !o.nccl_id_file.empty() || o.nccl_id_env))
    throw ToolUsageError("--rank, --nccl-id-file and --nccl-id-env need --nranks");
  if (o.nranks > 0) {
    if (o.gpus != 0)
      throw ToolUsageError("--gpus is for threads mode; with --nranks each process uses one GPU");
    if (o.rank < 0 || o.rank >= o.nranks)
      throw ToolUsageError("--rank must be in [0, " + std::to_string(o.nranks) + "), got " +
                           std::to_string(o.rank));
    if (o.nccl_id_file.empty() == !o.nccl_id_env)
      throw ToolUsageError("with --nranks, give exactly one of --nccl-id-file and --nccl-id-env");
    if (o.batch % o.nranks != 0)
      throw ToolUsageError("--batch=" + std::to_string(o.batch) + " is not divisible by the " +
                           std::to_string(o.nranks) + " ranks");
  }
  const int visible = CuDevice::DeviceCount();
  if (o.print_gpu_count) {
    std::printf("%d\n", visible);
    return 0;
  }
  if (visible == 0) {
    std::fprintf(stderr, "cu-data-parallel-example: no GPU visible\n");
    return kToolExitNoGpu;
  }
  if (o.nranks > 0)
    return o.use_double ? RunProcess<double>(o, visible) : RunProcess<float>(o, visible);
  const int n = o.gpus == 0 ? visible : o.gpus;
  if (n > visible) {
    std::fprintf(stderr, "cu-data-parallel-example: --gpus=%d but only %d GPU(s) are visible\n", n,
                 visible);
    return kToolExitNoGpu;
  }
  return o.use_double ? RunThreads<double>(o, n) : RunThreads<float>(o, n);
}

}  // namespace
}  // namespace cuctx

int main(int argc, char* argv[]) {
  cuctx::Options o;
  auto register_options = [&](cuctx::ParseOptions* po) {
    po->Register("gpus", &o.gpus, "Threads mode: number of GPUs (devices 0..N-1); 0: all visible");
    po->Register("nranks", &o.nranks, "Processes mode: number of ranks (0: threads mode)");
    po->Register("rank", &o.rank, "Processes mode: this process's rank, in [0, --nranks)");
    po->Register("nccl-id-file", &o.nccl_id_file,
                 "Processes mode: file through which rank 0 hands the NCCL id to the others");
    po->Register("nccl-id-env", &o.nccl_id_env,
                 "Processes mode: read the NCCL id (hex) from CUCTX_NCCL_ID instead");
    po->Register("id-timeout", &o.id_timeout,
                 "Processes mode: seconds ranks > 0 wait for --nccl-id-file to appear");
    po->Register("batch", &o.batch, "Rows of the batch (divisible by the number of ranks)");
    po->Register("in", &o.in, "Input dimension (rows of W)");
    po->Register("out", &o.out, "Output dimension (columns of W)");
    po->Register("seed", &o.seed, "Seed of the model and the data");
    po->Register("steps", &o.steps, "Repeat the step this many times, timing each");
    po->Register("double", &o.use_double, "Double precision instead of float");
    po->Register("print-gpu-count", &o.print_gpu_count,
                 "Print the number of visible GPUs and exit (for scripts)");
  };
  cuctx::ToolSpec spec{cuctx::kUsage, 0, 0, cuctx::ToolGpu::kNone};
  return cuctx::RunTool(argc, argv, spec, register_options,
                        [&](const cuctx::ToolArgs&) { return cuctx::Run(o); });
}
