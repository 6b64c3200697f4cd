// bin/cu-kaldi-speed-bench.cc: cuctx at the sizes of Kaldi's own cudamatrix speed tests, timed
// Kaldi's way; with --kaldi-log, the ratio to the figures Kaldi printed on this host in this run.
// SPDX-License-Identifier: Apache-2.0
//
// WHAT: every row of the Kaldi table (default kaldi-speed-h100.tsv from tests/data, or from
// PREFIX/share/cuctx when installed: see FindToolDataFile in cutool/tool.h; columns op, dim,
// kaldi_speed, unit; the speed column is not used, see BASELINE below) names one test of Kaldi's cu-matrix-speed-test or cu-vector-speed-test by the
// label Kaldi logs (e.g. "CuMatrix::AddDiagVecMat<float>[trans]", "CuVector::CopyFromVec<float>
// to <double>") and one size ("256", or "128, 32" for the CuVector::AddDiagMatMat shape test).
// For each row this tool builds the objects that test builds (same shapes, random contents), times
// the same Cu call and counts the same work per call, so that its figure and Kaldi's are the same
// quantity: mostly 1e9 matrix (or vector) elements per second, dim^3 per call for AddMatMat,
// Cholesky and SymInvertPosDef, dim^2 / 2 for the non-square transpose, 5 dim^2 for
// MulRowsGroupMat, rows x cols for the shaped AddDiagMatMat. Tests that do more than one call per
// iteration (TransposeCross: a transposing copy there and back; GroupMax over all group sizes:
// one call per divisor of dim, each with a fresh output) or set up inside the loop (Resize,
// VecVecOne and CopyFromVec allocate, CompObjfAndDeriv and Lookup upload host vectors) do so here.
//
// METHOD (Kaldi's): on one thread the call is repeated back to back while the wall clock
// (base/timer.h) shows less than the test's budget; there is no device synchronisation between
// calls and none after the loop (the clock stops when the last call returns, as in Kaldi; only
// ops that return a value to the host wait). speed = work per call * calls / elapsed / 1e9. The
// budget is each Kaldi test's own: 25 ms for most, 15 ms for AddDiagVecMat, 20 ms for
// TraceMatMat, TraceMatSmat and the CuVector tests, 50 ms for the shaped AddDiagMatMat; --time
// scales them all (--time=0.025, the default, keeps Kaldi's values).
// --passes=N (default 1) times the whole table N times and keeps each row's fastest pass: on
// shared hosts one row's figure can drop several-fold in one pass and not in the next, which a
// single pass cannot tell from a slow op. Kaldi's figures are single passes on a quiet host.
// Two deliberate differences: each op is called once and the device drained before its timed
// loop (Kaldi's figures come after earlier tests have warmed the GPU, and we want steady state
// with no queued work of one row spilling into the next), and the random data comes from a fixed
// seed. Kaldi logs two different tests as "CuMatrix::CopyRows" (index array and row-pointer
// array) and two as "CuMatrix::AddRows", but the table keeps one figure per label and size: for
// those labels both forms are timed and the slower one is reported (both are shown).
//
// BASELINE: a ratio to Kaldi means something only against Kaldi's own binary on the same host in
// the same run (hosts drift by several percent within a minute, and the table's figures come from
// another host and day). So the tool prints ratios only with --kaldi-log=LOG[,LOG...]: the output
// of Kaldi's cu-matrix-speed-test / cu-vector-speed-test run just before on this host (each
// label's last figure, Kaldi's GPU pass, is taken). Without it the tool prints cuctx's speeds
// alone. The project's figure against Kaldi is the one from ../shared/kaldi-speed/compare.sh, which
// runs both binaries alternating, with a Kaldi-against-Kaldi control. With --use-gpu=no the tool
// runs cuctx's CPU fallback (a smoke test).
#include "base/error.h"
#include "base/parse-options.h"
#include "base/random.h"
#include "base/timer.h"
#include "bin/bench-table.h"
#include "cudamatrix/cu-array.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-sp-matrix.h"
#include "cudamatrix/cu-sparse-matrix.h"
#include "cudamatrix/cu-tp-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "cudamatrix/internal/cu-kernels.h"
#include "cutool/tool.h"
#include "matrix/sparse-matrix.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace cuctx {
namespace {

const char* kUsage =
    "Runs cuctx at the sizes of Kaldi's cu-matrix-speed-test and cu-vector-speed-test, timed as\n"
    "Kaldi times them (each op back to back on one thread for the test's budget, no sync between\n"
    "calls, Kaldi's work count per call), and prints per row the cuctx speed. With --kaldi-log\n"
    "(Kaldi's speed-test output from this host, this run) it also prints Kaldi's speed and the\n"
    "ratio cuctx / Kaldi (> 1: cuctx faster), then a summary: geometric means for CuMatrix rows\n"
    "(CuSparseMatrix counted with them) and CuVector rows, per size, the rows below 0.9 and 0.8,\n"
    "and the 25 worst rows. Without it there are no ratios: the project's figure against Kaldi\n"
    "comes from ../shared/kaldi-speed/compare.sh (both binaries alternating in one run).\n"
    "\n"
    "Usage: cu-kaldi-speed-bench [options]\n"
    " e.g.: cu-kaldi-speed-bench --only=AddMatMat,Softmax --dims=256,1024\n"
    "       cu-kaldi-speed-bench --kaldi-log=kaldi-matrix.log,kaldi-vector.log\n"
    "       cu-kaldi-speed-bench --use-gpu=no --time=0.001 --dims=16,64   (CPU smoke test)\n"
    "Exit status: 0 done, 1 error (unreadable table or log), 2 usage error, 3 no usable GPU with\n"
    "--use-gpu=yes.\n";

constexpr double kKaldiDefaultBudget = 0.025;  // seconds; what --time=0.025 reproduces
constexpr double kTargetGeomean = 1.2;
constexpr double kTargetFloor = 0.9;
constexpr size_t kWorstRows = 25;

template <typename Real>
std::string NameOf() {
  return sizeof(Real) == 8 ? "<double>" : "<float>";
}

double Sq(int32 dim) { return static_cast<double>(dim) * dim; }

// Kaldi's timing loop around op, after one warm-up call and a drained device. Returns the speed
// in 1e9 units of work per second given the work one call counts.
template <typename Op>
double Gigaflops(double work_per_call, double budget, Op&& op) {
  op();
  WaitForThreadStream();
  Timer timer;
  int64 calls = 0;
  for (; timer.Elapsed() < budget; ++calls) op();
  return work_per_call * static_cast<double>(calls) / (timer.Elapsed() * 1e9);
}

// What a test reports: its speed, and a remark shown with the row ("" if none).
struct Speed {
  double gflops = 0;
  std::string note;
  Speed(double g) : gflops(g) {}  // NOLINT(google-explicit-constructor): tests return a bare figure
  Speed(double g, std::string n) : gflops(g), note(std::move(n)) {}
};

// One Kaldi test, at a single size (dim x dim matrices, or dim for vectors) and, where Kaldi has
// one, at a "rows, cols" size. Each gets the budget already scaled by --time.
using SingleFn = std::function<Speed(int32 dim, double budget)>;
using PairFn = std::function<Speed(int32 rows, int32 cols, double budget)>;

struct SpeedTest {
  double kaldi_budget = kKaldiDefaultBudget;  // of `single`
  double kaldi_pair_budget = kKaldiDefaultBudget;
  SingleFn single;
  PairFn pair;
};

// The tests by Kaldi label; filled once for float and once for double.
class Registry {
 public:
  void Add(const std::string& label, double kaldi_budget, SingleFn fn) {
    SpeedTest& t = tests_[label];
    t.kaldi_budget = kaldi_budget;
    t.single = std::move(fn);
  }
  void AddPair(const std::string& label, double kaldi_budget, PairFn fn) {
    SpeedTest& t = tests_[label];
    t.kaldi_pair_budget = kaldi_budget;
    t.pair = std::move(fn);
  }
  const SpeedTest* Find(const std::string& label) const {
    auto it = tests_.find(label);
    return it == tests_.end() ? nullptr : &it->second;
  }

 private:
  std::map<std::string, SpeedTest> tests_;
};

// ---- shapes shared by many CuMatrix tests -------------------------------------------------------

// M random dim x dim; each call op(M). dim^2 per call.
template <typename Real, typename Op>
SingleFn OnOne(Op op) {
  return [op](int32 dim, double budget) -> Speed {
    CuMatrix<Real> m(dim, dim);
    m.SetRandn();
    return Gigaflops(Sq(dim), budget, [&] { op(m); });
  };
}

// M and N random dim x dim; each call op(M, N) (N is the one written). dim^2 per call.
template <typename Real, typename Op>
SingleFn OnTwo(Op op) {
  return [op](int32 dim, double budget) -> Speed {
    CuMatrix<Real> m(dim, dim), n(dim, dim);
    m.SetRandn();
    n.SetRandn();
    return Gigaflops(Sq(dim), budget, [&] { op(m, n); });
  };
}

// M random dim x dim, output N of dim x dim/group; each call op(M, N). dim^2 per call.
template <typename Real, typename Op>
SingleFn OnGroups(int32 group, Op op) {
  return [group, op](int32 dim, double budget) -> Speed {
    CuMatrix<Real> m(dim, dim), n(dim, dim / group);
    m.SetRandn();
    return Gigaflops(Sq(dim), budget, [&] { op(m, n); });
  };
}

// The gather/scatter tests' objects: M (written) and N, random dim x dim; the identity as an index
// array; the rows of N as a pointer array (const for gathers into M, mutable for scatters from M).
template <typename Real>
struct RowsFixture {
  CuMatrix<Real> m, n;
  CuArray<int32> identity;
  CuArray<const Real*> src_rows;
  CuArray<Real*> dst_rows;
  explicit RowsFixture(int32 dim) : m(dim, dim), n(dim, dim) {
    m.SetRandn();
    n.SetRandn();
    std::vector<int32> idx(dim);
    std::vector<const Real*> src(dim);
    std::vector<Real*> dst(dim);
    for (int32 i = 0; i < dim; ++i) {
      idx[i] = i;
      src[i] = n.RowData(i);
      dst[i] = n.RowData(i);
    }
    identity.CopyFromVec(idx);
    src_rows.CopyFromVec(src);
    dst_rows.CopyFromVec(dst);
  }
};

// Kaldi times two forms under one label; the table has one figure: report the slower form.
Speed SlowerOf(const char* name_a, double a, const char* name_b, double b) {
  char note[96];
  std::snprintf(note, sizeof(note), "%s %.4g, %s %.4g", name_a, a, name_b, b);
  return Speed(std::min(a, b), note);
}

template <typename Real>
void AddMatrixTests(Registry* reg) {
  const std::string R = NameOf<Real>();
  const std::string M = "CuMatrix::";
  using Mat = CuMatrix<Real>;

  // Reductions that return to the host.
  reg->Add(M + "TestCuMatrixSum" + R, 0.025, OnOne<Real>([](Mat& m) { m.Sum(); }));
  reg->Add(M + "TestCuMatrixMax" + R, 0.025, OnOne<Real>([](Mat& m) { m.Max(); }));
  reg->Add(M + "TestCuMatrixMin" + R, 0.025, OnOne<Real>([](Mat& m) { m.Min(); }));

  reg->Add(M + "DivRowsVec" + R, 0.025, [](int32 dim, double budget) -> Speed {
    Mat m(dim, dim);
    CuVector<Real> v(dim);
    m.SetRandn();
    v.SetRandn();
    return Gigaflops(Sq(dim), budget, [&] { m.DivRowsVec(v); });
  });
  reg->Add(M + "TransposeS" + R, 0.025, OnOne<Real>([](Mat& m) { m.Transpose(); }));
  reg->Add(M + "TransposeNS" + R, 0.025, [](int32 dim, double budget) -> Speed {
    Mat m(dim, dim / 2);
    m.SetRandn();
    return Gigaflops(Sq(dim) / 2, budget, [&] { m.Transpose(); });
  });
  // A float (dim/2 x dim) copied transposed into a Real (dim x dim/2) and back: one iteration.
  reg->Add(M + "TransposeCross" + R, 0.025, [](int32 dim, double budget) -> Speed {
    CuMatrix<float> f(dim / 2, dim);
    Mat r(dim, dim / 2);
    f.SetRandn();
    return Gigaflops(Sq(dim), budget, [&] {
      r.CopyFromMat(f, kTrans);
      f.CopyFromMat(r, kTrans);
    });
  });
  reg->Add(M + "TestCuMatrixResize" + R, 0.025, [](int32 dim, double budget) -> Speed {
    return Gigaflops(Sq(dim), budget, [&] { Mat m(dim, dim, kUndefined); });
  });

  // BLAS and solvers: dim^3 per call.
  reg->Add(M + "AddMatMat" + R, 0.025, [](int32 dim, double budget) -> Speed {
    Mat a(dim, dim), b(dim, dim), c(dim, dim);
    a.SetRandn();
    b.SetRandn();
    return Gigaflops(Sq(dim) * dim, budget,
                     [&] { c.AddMatMat(1.0, a, kNoTrans, b, kNoTrans, 0.0); });
  });
  for (MatrixTransposeType trans : {kNoTrans, kTrans}) {
    const std::string tag = trans == kTrans ? "[trans]" : "[no-trans]";
    reg->Add(M + "AddDiagVecMat" + R + tag, 0.015, [trans](int32 dim, double budget) -> Speed {
      Mat src(dim, dim), dst(dim, dim);
      CuVector<Real> v(dim);
      src.SetRandn();
      v.SetRandn();
      return Gigaflops(Sq(dim), budget, [&] { dst.AddDiagVecMat(1.0, v, src, trans, 0.0); });
    });
  }
  // Restores the positive definite input and inverts it, each iteration.
  reg->Add(M + "TestCuInvertPosDef" + R, 0.025, [](int32 dim, double budget) -> Speed {
    Mat tall(dim, 2 * dim), spd(dim, dim);
    tall.SetRandn();
    spd.SymAddMat2(1.0, tall, kNoTrans, 0.0);
    Mat work(spd);
    return Gigaflops(Sq(dim) * dim, budget, [&] {
      work.CopyFromMat(spd);
      work.SymInvertPosDef();
    });
  });
  // Factorised in place again and again (100 I, then 10 I, ... stays positive definite).
  reg->Add(M + "Cholesky" + R, 0.025, [](int32 dim, double budget) -> Speed {
    Mat m(dim, dim);
    m.AddToDiag(100.0);
    return Gigaflops(Sq(dim) * dim, budget, [&] { m.Cholesky(); });
  });

  // Element-wise and nnet ops.
  reg->Add(M + "Sigmoid" + R, 0.025, OnTwo<Real>([](const Mat& m, Mat& n) { n.Sigmoid(m); }));
  reg->Add(M + "Heaviside" + R, 0.025, OnTwo<Real>([](const Mat&, Mat& n) { n.ApplyHeaviside(); }));
  reg->Add(M + "Softmax" + R, 0.025, OnTwo<Real>([](const Mat& m, Mat& n) { n.SoftMaxPerRow(m); }));
  reg->Add(M + "LogSoftmax" + R, 0.025,
           OnTwo<Real>([](const Mat& m, Mat& n) { n.LogSoftMaxPerRow(m); }));
  for (bool log : {false, true}) {
    reg->Add(M + (log ? "DiffLogSoftmaxPerRow" : "DiffSoftmaxPerRow") + R, 0.025,
             [log](int32 dim, double budget) -> Speed {
               Mat value(dim, dim), out(dim, dim), diff(dim, dim);
               value.SetRandn();
               out.SetRandn();
               diff.SetRandn();
               return Gigaflops(Sq(dim), budget, [&] {
                 if (log)
                   out.DiffLogSoftmaxPerRow(value, diff);
                 else
                   out.DiffSoftmaxPerRow(value, diff);
               });
             });
  }
  reg->Add(M + "FindRowMaxId" + R, 0.025, [](int32 dim, double budget) -> Speed {
    RandomState rng(dim);
    Mat m(dim, dim + Rand(&rng) % 5);
    m.SetRandn();
    CuArray<int32> ids(m.NumCols());
    return Gigaflops(Sq(dim), budget, [&] { m.FindRowMaxId(&ids); });
  });
  // About one labelled element per row (probability 1 / cols each); labels uploaded per call.
  reg->Add(M + "CompObjfAndDeriv" + R, 0.025, [](int32 dim, double budget) -> Speed {
    RandomState rng(dim + 1);
    const int32 rows = dim, cols = dim + Rand(&rng) % 5;
    Mat probs(rows, cols), deriv(rows, cols);
    probs.SetRandn();
    probs.Add(1.0);
    probs.ApplyFloor(1.0e-10);
    std::vector<MatrixElement<Real>> labels;
    for (int32 r = 0; r < rows; ++r)
      for (int32 c = 0; c < cols; ++c)
        if (Rand(&rng) % cols == 0) labels.push_back({r, c, RandUniform(&rng)});
    Real objf = 0, weight = 0;
    return Gigaflops(static_cast<double>(rows) * cols, budget,
                     [&] { deriv.CompObjfAndDeriv(labels, probs, &objf, &weight); });
  });
  reg->Add(M + "MulRowsGroupMat" + R, 0.025, [](int32 dim, double budget) -> Speed {
    const int32 group = 5;
    Mat m(dim, dim * group), scale(dim, dim);
    m.SetRandn();
    scale.SetRandn();
    return Gigaflops(Sq(dim) * group, budget, [&] { m.MulRowsGroupMat(scale); });
  });
  reg->Add(M + "GroupPnorm" + R, 0.025,
           OnGroups<Real>(4, [](const Mat& m, Mat& n) { n.GroupPnorm(m, 2.0); }));
  reg->Add(M + "DiffGroupPnorm" + R, 0.025, [](int32 dim, double budget) -> Speed {
    const int32 group = 8;
    Mat in_value(dim, dim), out_value(dim, dim / group), in_deriv(dim, dim),
        out_deriv(dim, dim / group);
    in_value.SetRandn();
    out_deriv.SetRandn();
    out_value.GroupPnorm(in_value, 2.0);
    return Gigaflops(Sq(dim), budget,
                     [&] { in_deriv.DiffGroupPnorm(in_value, out_value, out_deriv, 2.0); });
  });
  reg->Add(M + "GroupMax" + R, 0.025,
           OnGroups<Real>(4, [](const Mat& m, Mat& n) { n.GroupMax(m); }));
  // One iteration = GroupMax at every group size dividing dim, each into a new output; Kaldi
  // counts dim^2 per GroupMax and looks at the clock once per sweep.
  reg->Add(M + "GroupMax (all group sizes)" + R, 0.025, [](int32 dim, double budget) -> Speed {
    Mat m(dim, dim);
    m.SetRandn();
    int32 divisors = 0;
    for (int32 g = 1; g <= dim; ++g) divisors += dim % g == 0;
    return Gigaflops(Sq(dim) * divisors, budget, [&] {
      for (int32 g = 1; g <= dim; ++g) {
        if (dim % g != 0) continue;
        Mat out(dim, dim / g, kUndefined);
        out.GroupMax(m);
      }
    });
  });
  reg->Add(M + "GroupMaxDeriv" + R, 0.025, [](int32 dim, double budget) -> Speed {
    const int32 group = 4;
    Mat in(dim, dim), out(dim, dim / group), deriv(dim, dim);
    in.SetRandn();
    out.GroupMax(in);
    return Gigaflops(Sq(dim), budget, [&] { deriv.GroupMaxDeriv(in, out); });
  });
  for (MatrixTransposeType trans : {kNoTrans, kTrans}) {
    const std::string tag = trans == kTrans ? " [transposed]" : "";
    reg->Add(M + "TraceMatMat" + R + tag, 0.02,
             OnTwo<Real>([trans](const Mat& a, Mat& b) { TraceMatMat(a, b, trans); }));
    // One nonzero per row, at a random column with a random integer value below dim.
    reg->Add("CuSparseMatrix::TraceMatSmat" + R + tag, 0.02,
             [trans](int32 dim, double budget) -> Speed {
               RandomState rng(dim + 2);
               Mat a(dim, dim);
               a.SetRandn();
               std::vector<std::vector<std::pair<MatrixIndexT, Real>>> pairs(dim);
               for (auto& row : pairs)
                 row.emplace_back(Rand(&rng) % dim, static_cast<Real>(Rand(&rng) % dim));
               CuSparseMatrix<Real> b{SparseMatrix<Real>(dim, pairs)};
               return Gigaflops(Sq(dim), budget, [&] { TraceMatSmat(a, b, trans); });
             });
  }

  // Triangles and packed matrices.
  reg->Add(M + "CopyLowerToUpper" + R, 0.025, OnOne<Real>([](Mat& m) { m.CopyLowerToUpper(); }));
  reg->Add(M + "CopyUpperToLower" + R, 0.025, OnOne<Real>([](Mat& m) { m.CopyUpperToLower(); }));
  reg->Add(M + "SetZeroAboveDiag" + R, 0.025, OnOne<Real>([](Mat& m) { m.SetZeroAboveDiag(); }));
  for (MatrixTransposeType trans : {kNoTrans, kTrans}) {
    const std::string tag = trans == kTrans ? "[Trans]" : "[NoTrans]";
    reg->Add(M + "CopyFromTp" + tag + R, 0.025, [trans](int32 dim, double budget) -> Speed {
      CuTpMatrix<Real> tp(dim);
      tp.SetRandn();
      Mat m(dim, dim);
      return Gigaflops(Sq(dim), budget, [&] { m.CopyFromTp(tp, trans); });
    });
  }
  reg->Add(M + "CopyFromSp" + R, 0.025, [](int32 dim, double budget) -> Speed {
    CuSpMatrix<Real> sp(dim);
    sp.SetRandn();
    Mat m(dim, dim);
    return Gigaflops(Sq(dim), budget, [&] { m.CopyFromSp(sp); });
  });

  // Gathers and scatters; Lookup takes dim^2 random (row, col) pairs from the host each call.
  reg->Add(M + "Lookup" + R, 0.025, [](int32 dim, double budget) -> Speed {
    RandomState rng(dim + 3);
    Mat m(dim, dim);
    m.SetRandn();
    std::vector<Int32Pair> where(static_cast<size_t>(dim) * dim);
    for (Int32Pair& p : where) {
      p.first = Rand(&rng) % dim;
      p.second = Rand(&rng) % dim;
    }
    std::vector<Real> out(where.size());
    return Gigaflops(Sq(dim), budget, [&] { m.Lookup(where, out.data()); });
  });
  reg->Add(M + "CopyRows" + R, 0.025, [](int32 dim, double budget) -> Speed {
    RowsFixture<Real> f(dim);
    const double by_index = Gigaflops(Sq(dim), budget, [&] { f.m.CopyRows(f.n, f.identity); });
    const double by_pointer = Gigaflops(Sq(dim), budget, [&] { f.m.CopyRows(f.src_rows); });
    return SlowerOf("index form", by_index, "pointer form", by_pointer);
  });
  reg->Add(M + "CopyToRows" + R, 0.025, [](int32 dim, double budget) -> Speed {
    RowsFixture<Real> f(dim);
    return Gigaflops(Sq(dim), budget, [&] { f.m.CopyToRows(f.dst_rows); });
  });
  reg->Add(M + "AddRows" + R, 0.025, [](int32 dim, double budget) -> Speed {
    RowsFixture<Real> f(dim);
    const double by_index = Gigaflops(Sq(dim), budget, [&] { f.m.AddRows(0.5, f.n, f.identity); });
    const double by_pointer = Gigaflops(Sq(dim), budget, [&] { f.m.AddRows(0.5, f.src_rows); });
    return SlowerOf("index form", by_index, "pointer form", by_pointer);
  });
  reg->Add(M + "AddToRows" + R, 0.025, [](int32 dim, double budget) -> Speed {
    RowsFixture<Real> f(dim);
    return Gigaflops(Sq(dim), budget, [&] { f.m.AddToRows(0.5, f.dst_rows); });
  });
  // Row r of the output sums the source rows [r, r + 1): a one-row range each.
  reg->Add(M + "AddRowRanges" + R, 0.025, [](int32 dim, double budget) -> Speed {
    Mat out(dim, dim), src(dim, dim);
    out.SetRandn();
    src.SetRandn();
    std::vector<Int32Pair> ranges(dim);
    for (int32 i = 0; i < dim; ++i) ranges[i] = {i, i + 1};
    CuArray<Int32Pair> d_ranges(ranges);
    return Gigaflops(Sq(dim), budget, [&] { out.AddRowRanges(src, d_ranges); });
  });
}

// A CuVector<Real> of dim random values.
template <typename Real>
CuVector<Real> RandomVector(int32 dim) {
  CuVector<Real> v(dim);
  v.SetRandn();
  return v;
}

template <typename Real, typename Other>
void AddCopyFromVecTest(Registry* reg) {
  // A new destination vector of the other precision each call, as Kaldi's test has.
  reg->Add("CuVector::CopyFromVec" + NameOf<Real>() + " to " + NameOf<Other>(), 0.02,
           [](int32 dim, double budget) -> Speed {
             CuVector<Real> src = RandomVector<Real>(dim);
             return Gigaflops(dim, budget, [&] {
               CuVector<Other> dst(dim);
               dst.CopyFromVec(src);
             });
           });
}

template <typename Real>
void AddVectorTests(Registry* reg) {
  const std::string R = NameOf<Real>();
  const std::string V = "CuVector::";
  using Mat = CuMatrix<Real>;
  using Vec = CuVector<Real>;

  reg->Add(V + "Softmax" + R, 0.02, [](int32 dim, double budget) -> Speed {
    Vec v = RandomVector<Real>(dim);
    return Gigaflops(dim, budget, [&] { v.ApplySoftMax(); });
  });
  reg->Add(V + "Sum" + R, 0.02, [](int32 dim, double budget) -> Speed {
    Vec v = RandomVector<Real>(dim);
    return Gigaflops(dim, budget, [&] { v.Sum(); });
  });
  // A fresh vector of ones each call, then the dot product (which returns to the host).
  reg->Add(V + "VecVecOne" + R, 0.02, [](int32 dim, double budget) -> Speed {
    Vec v = RandomVector<Real>(dim);
    return Gigaflops(dim, budget, [&] {
      Vec ones(dim);
      ones.Set(1.0);
      VecVec(v, ones);
    });
  });
  AddCopyFromVecTest<Real, float>(reg);
  AddCopyFromVecTest<Real, double>(reg);

  for (MatrixTransposeType tm : {kNoTrans, kTrans}) {
    for (MatrixTransposeType tn : {kNoTrans, kTrans}) {
      const std::string label = V + "AddDiagMatMat" + R +
                                (tm == kTrans ? "[trans]" : "[no-trans]") + "," +
                                (tn == kTrans ? "[trans]" : "[no-trans]");
      // Square: v (dim) += diag(op(A) op(B)), A and B dim x dim.
      reg->Add(label, 0.02, [tm, tn](int32 dim, double budget) -> Speed {
        Vec v = RandomVector<Real>(dim);
        Mat a(dim, dim), b(dim, dim);
        a.SetRandn();
        b.SetRandn();
        return Gigaflops(Sq(dim), budget, [&] { v.AddDiagMatMat(1.0, a, tm, b, tn, 1.0); });
      });
      // Shaped: A rows x cols, B shaped so that op(A) op(B) is square; rows * cols per call.
      // Kaldi's exact source for this test was not at hand: shapes and work are as the table and
      // the label show; the 50 ms budget and beta = 0 follow the test's development version.
      reg->AddPair(label, 0.05, [tm, tn](int32 rows, int32 cols, double budget) -> Speed {
        Vec v = RandomVector<Real>(tm == kTrans ? cols : rows);
        const bool same = tm == tn;
        Mat a(rows, cols), b(same ? cols : rows, same ? rows : cols);
        a.SetRandn();
        b.SetRandn();
        return Gigaflops(static_cast<double>(rows) * cols, budget,
                         [&] { v.AddDiagMatMat(1.0, a, tm, b, tn, 0.0); });
      });
    }
  }
  for (MatrixTransposeType trans : {kNoTrans, kTrans}) {
    const std::string tag = trans == kTrans ? "[trans]" : "[no-trans]";
    reg->Add(V + "AddDiagMat2" + R + tag, 0.02, [trans](int32 dim, double budget) -> Speed {
      Vec v = RandomVector<Real>(dim);
      Mat m(dim, dim);
      m.SetRandn();
      return Gigaflops(Sq(dim), budget, [&] { v.AddDiagMat2(1.0, m, trans, 0.0); });
    });
    // Kaldi's [trans] and [no-trans] variants of these two make the same call (the tag is only in
    // the label), so both labels time the one call.
    reg->Add(V + "AddRowSumMat" + R + tag, 0.02, [](int32 dim, double budget) -> Speed {
      Vec v = RandomVector<Real>(dim);
      Mat m(dim, dim);
      m.SetRandn();
      return Gigaflops(Sq(dim), budget, [&] { v.AddRowSumMat(1.0, m, 0.5); });
    });
    reg->Add(V + "AddColSumMat" + R + tag, 0.02, [](int32 dim, double budget) -> Speed {
      Vec v = RandomVector<Real>(dim);
      Mat m(dim, dim);
      m.SetRandn();
      return Gigaflops(Sq(dim), budget, [&] { v.AddColSumMat(1.0, m, 0.5); });
    });
  }
  // Floor / ceiling at a random threshold in [-350, 350], with the count (which waits for the
  // device) and without it.
  for (bool ceiling : {false, true}) {
    for (bool count : {true, false}) {
      const std::string label =
          V + (ceiling ? "ApplyCeiling" : "ApplyFloor") + (count ? "" : " (no count variety)") + R;
      reg->Add(label, 0.02, [ceiling, count](int32 dim, double budget) -> Speed {
        RandomState rng(dim + 4);
        Vec v = RandomVector<Real>(dim);
        const Real threshold = RandInt(-35000, 35000, &rng) / Real(100);
        MatrixIndexT changed = 0;
        MatrixIndexT* counted = count ? &changed : nullptr;
        return Gigaflops(dim, budget, [&] {
          if (ceiling)
            v.ApplyCeiling(threshold, counted);
          else
            v.ApplyFloor(threshold, counted);
        });
      });
    }
  }
}

// ---- the table ------------------------------------------------------------------------------

// A size as the table writes it: "256" or "128, 32".
struct Dims {
  std::string text;
  std::vector<int32> values;  // one or two
};

struct KaldiRow {
  std::string label;
  Dims dims;
  double kaldi = 0;  // Kaldi's speed from --kaldi-log; 0: none (no ratio for this row)
};

Dims ParseDims(const std::string& text) {
  Dims d;
  d.text = text;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    while (end && *end == ' ') ++end;
    if (end == item.c_str() || (end && *end != '\0') || v < 1 || v > (1 << 20))
      CUCTX_ERR << "bad size '" << text << "' (expected N or \"ROWS, COLS\")";
    d.values.push_back(static_cast<int32>(v));
  }
  if (d.values.empty() || d.values.size() > 2)
    CUCTX_ERR << "bad size '" << text << "' (expected N or \"ROWS, COLS\")";
  return d;
}

std::vector<KaldiRow> ReadKaldiTable(const std::string& path, std::vector<std::string>* header) {
  std::ifstream in(path);
  if (!in) CUCTX_ERR << "cannot open the Kaldi table '" << path << "'";
  std::vector<KaldiRow> rows;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (line[0] == '#') {
      header->push_back(line);
      continue;
    }
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string col;
    while (std::getline(ss, col, '\t')) cols.push_back(col);
    if (cols.size() == 4 && cols[0] == "op") continue;  // the column names
    try {
      if (cols.size() != 4) CUCTX_ERR << "expected 4 tab-separated columns, got " << cols.size();
      KaldiRow row;
      row.label = cols[0];
      row.dims = ParseDims(cols[1]);
      char* end = nullptr;
      const double stored = std::strtod(cols[2].c_str(), &end);  // checked, never used
      if (end == cols[2].c_str() || *end != '\0' || !(stored >= 0))
        CUCTX_ERR << "bad speed '" << cols[2] << "'";
      rows.push_back(std::move(row));
    } catch (const Error& e) {
      throw Error(path + ":" + std::to_string(line_no) + ": " + e.what());
    }
  }
  if (rows.empty()) CUCTX_ERR << "the Kaldi table '" << path << "' has no rows";
  return rows;
}

// "128, 32" and "128,32" name the same size.
std::string DimsKeyText(const std::string& text) {
  std::string key;
  for (char c : text)
    if (c != ' ') key += c;
  return key;
}

// Kaldi's speed figures from the logs of its speed tests (lines "For LABEL, for dim = DIMS, speed
// was X ..."), keyed by label and size. A label logged twice (Kaldi's CPU pass, then its GPU pass)
// keeps the last figure. Throws when a log cannot be read or holds no figure.
std::map<std::pair<std::string, std::string>, double> ReadKaldiLogs(
    const std::vector<std::string>& paths) {
  std::map<std::pair<std::string, std::string>, double> figures;
  for (const std::string& path : paths) {
    std::ifstream in(path);
    if (!in) CUCTX_ERR << "--kaldi-log: cannot open '" << path << "'";
    size_t found = 0;
    std::string line;
    while (std::getline(in, line)) {
      const size_t a = line.find("For "), b = line.find(", for dim = "),
                   c = line.find(", speed was ");
      if (a == std::string::npos || b == std::string::npos || c == std::string::npos || !(a < b) ||
          !(b < c))
        continue;
      const std::string label = line.substr(a + 4, b - a - 4);
      const std::string dims = line.substr(b + 12, c - b - 12);
      char* end = nullptr;
      const double speed = std::strtod(line.c_str() + c + 12, &end);
      if (end == line.c_str() + c + 12 || !(speed >= 0)) continue;
      figures[{label, DimsKeyText(dims)}] = speed;
      ++found;
    }
    if (found == 0)
      CUCTX_ERR
          << "--kaldi-log: '" << path
          << "' holds no line \"For <op>, for dim = <n>, speed was <x>\" (expected the output "
             "of Kaldi's cu-matrix-speed-test or cu-vector-speed-test)";
  }
  return figures;
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) items.push_back(item);
  return items;
}

// ---- results and summary ----------------------------------------------------------------------

struct Result {
  bench::Row row;  // group, case_name = label, metric = size, cuctx, baseline, ratio, target
  bool missing = false;
  std::string note;  // the reason when missing, else the test's remark
};

// "CuVector" for CuVector rows; CuMatrix and CuSparseMatrix rows are summarised together.
std::string GroupOf(const std::string& label) {
  return label.compare(0, 10, "CuVector::") == 0 ? "CuVector" : "CuMatrix";
}

struct Stats {
  int rows = 0, below_floor = 0, below_08 = 0, missing = 0, over_10x = 0;
  double log_sum = 0, log_sum_no_outliers = 0;
  void Add(const Result& r) {
    if (r.missing) {
      ++missing;
      return;
    }
    if (!(r.row.baseline_value > 0)) return;  // Kaldi's log has no figure for this row
    ++rows;
    const double l = std::log(std::max(r.row.ratio, 1e-12));
    log_sum += l;
    if (r.row.ratio > 10)
      ++over_10x;
    else
      log_sum_no_outliers += l;
    below_floor += r.row.ratio < kTargetFloor;
    below_08 += r.row.ratio < 0.8;
  }
  double Geomean() const { return rows ? std::exp(log_sum / rows) : 0; }
  double GeomeanNoOutliers() const {
    const int n = rows - over_10x;
    return n ? std::exp(log_sum_no_outliers / n) : 0;
  }
};

void PrintRow(const Result& r) {
  if (!r.missing && !(r.row.baseline_value > 0)) {
    std::printf("%-54s %-8s %12.5g %12s %8s%s%s\n", r.row.case_name.c_str(), r.row.metric.c_str(),
                r.row.cuctx, "-", "-", r.note.empty() ? "" : "  ", r.note.c_str());
  } else if (r.missing) {
    std::printf("%-54s %-8s %12s %12.5g %8s  %s\n", r.row.case_name.c_str(), r.row.metric.c_str(),
                "missing", r.row.baseline_value, "-", r.note.c_str());
  } else {
    std::printf("%-54s %-8s %12.5g %12.5g %8.3g%s%s%s\n", r.row.case_name.c_str(),
                r.row.metric.c_str(), r.row.cuctx, r.row.baseline_value, r.row.ratio,
                r.row.ratio < kTargetFloor ? " <" : "", r.note.empty() ? "" : "  ", r.note.c_str());
  }
  std::fflush(stdout);
}

// Sort key for sizes: by the first number, then the second (single sizes first).
std::pair<int64, int64> DimsKey(const Dims& d) {
  return {d.values[0], d.values.size() > 1 ? d.values[1] : -1};
}

void PrintSummary(const std::vector<Result>& results, const std::vector<KaldiRow>& kaldi) {
  std::map<std::string, Stats> groups;
  Stats all;
  std::map<std::pair<int64, int64>, std::pair<std::string, Stats>> per_dim;
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    groups[r.row.group].Add(r);
    all.Add(r);
    auto& slot = per_dim[DimsKey(kaldi[i].dims)];
    slot.first = kaldi[i].dims.text;
    slot.second.Add(r);
  }
  std::printf(
      "\nSummary: ratio = cuctx speed / Kaldi speed (> 1: cuctx faster). CuSparseMatrix rows "
      "are counted with CuMatrix.\n");
  std::printf("Targets: geomean >= %.1f for each group, no row below %.1f.\n", kTargetGeomean,
              kTargetFloor);
  std::printf("%-10s %6s %9s %6s %6s %8s %9s %18s  %s\n", "group", "rows", "geomean", "<0.9",
              "<0.8", "missing", ">10x", "geomean w/o >10x", "targets");
  auto line = [](const char* name, const Stats& s, bool targets) {
    std::string verdict;
    if (targets) {
      verdict = std::string("geomean ") + (s.Geomean() >= kTargetGeomean ? "PASS" : "FAIL") +
                ", floor " + (s.below_floor == 0 && s.missing == 0 ? "PASS" : "FAIL");
    }
    std::printf("%-10s %6d %9.3f %6d %6d %8d %9d %18.3f  %s\n", name, s.rows, s.Geomean(),
                s.below_floor, s.below_08, s.missing, s.over_10x, s.GeomeanNoOutliers(),
                verdict.c_str());
  };
  for (const char* g : {"CuMatrix", "CuVector"})
    if (groups.count(g)) line(g, groups[g], true);
  line("all", all, false);
  std::printf(
      "(>10x: rows where cuctx measures over 10 times Kaldi's figure. Some Kaldi figures are far "
      "out of line with the same test's other sizes, e.g. AddMatMat<float> at 16 and 64, so the "
      "column before the targets leaves these rows out.)\n");

  std::printf("\nGeometric mean per size:\n%-10s %6s %9s %6s %6s\n", "dim", "rows", "geomean",
              "<0.9", "<0.8");
  for (const auto& kv : per_dim) {
    const Stats& s = kv.second.second;
    std::printf("%-10s %6d %9.3f %6d %6d\n", kv.second.first.c_str(), s.rows, s.Geomean(),
                s.below_floor, s.below_08);
  }

  std::vector<const Result*> measured;
  for (const Result& r : results)
    if (!r.missing && r.row.baseline_value > 0) measured.push_back(&r);
  std::stable_sort(measured.begin(), measured.end(),
                   [](const Result* a, const Result* b) { return a->row.ratio < b->row.ratio; });
  if (measured.size() > kWorstRows) measured.resize(kWorstRows);
  std::printf("\nThe %zu worst rows:\n", measured.size());
  std::printf("%-54s %-8s %12s %12s %8s\n", "op", "dim", "cuctx", "kaldi", "ratio");
  for (const Result* r : measured) PrintRow(*r);

  int missing = 0;
  for (const Result& r : results) missing += r.missing;
  if (missing > 0) {
    std::printf("\n%d rows could not be measured:\n", missing);
    for (const Result& r : results)
      if (r.missing)
        std::printf("  %s (%s): %s\n", r.row.case_name.c_str(), r.row.metric.c_str(),
                    r.note.c_str());
  }
}

std::string FormatNumber(double x) {
  std::ostringstream os;
  os << x;
  return os.str();
}

void WriteTsv(const std::string& path, const std::vector<Result>& results) {
  std::ofstream out(path);
  if (!out) CUCTX_ERR << "cannot write '" << path << "'";
  out << "op\tdim\tcuctx\tkaldi\tratio\n";
  for (const Result& r : results) {
    out << r.row.case_name << '\t' << r.row.metric << '\t';
    const bool base = r.row.baseline_value > 0;
    if (r.missing)
      out << "missing\t" << (base ? FormatNumber(r.row.baseline_value) : "-") << "\tmissing\n";
    else if (!base)
      out << r.row.cuctx << "\t-\t-\n";
    else
      out << r.row.cuctx << '\t' << r.row.baseline_value << '\t' << r.row.ratio << '\n';
  }
  out.close();
  if (!out) CUCTX_ERR << "error writing '" << path << "'";
}

struct Options {
  std::string kaldi_tsv = "kaldi-speed-h100.tsv";  // found by FindToolDataFile
  double time = kKaldiDefaultBudget;
  int32 passes = 1;
  std::string only, dims, tsv_out, kaldi_log;
};

// Runs one table row; a missing test, a size the test does not take, or a cuctx::Error from the
// op becomes a "missing" result with the reason.
Result RunRow(const Registry& registry, const KaldiRow& k, double scale) {
  Result r;
  r.row.group = GroupOf(k.label);
  r.row.case_name = k.label;
  r.row.metric = k.dims.text;
  r.row.baseline = "Kaldi, this run";
  r.row.baseline_value = k.kaldi;
  r.row.target = ">= 0.9";
  const SpeedTest* test = registry.Find(k.label);
  const bool pair = k.dims.values.size() == 2;
  if (test == nullptr || (pair ? !test->pair : !test->single)) {
    r.missing = true;
    r.note = test == nullptr ? "no cuctx equivalent of this Kaldi test in the registry"
             : pair          ? "this test takes one size, the table gives two"
                             : "this test takes \"rows, cols\", the table gives one size";
    return r;
  }
  try {
    const Speed s =
        pair ? test->pair(k.dims.values[0], k.dims.values[1], test->kaldi_pair_budget * scale)
             : test->single(k.dims.values[0], test->kaldi_budget * scale);
    r.row.cuctx = s.gflops;
    r.row.ratio = k.kaldi > 0 ? s.gflops / k.kaldi : 0;
    r.note = s.note;
  } catch (const Error& e) {
    r.missing = true;
    r.note = std::string("cuctx failed: ") + e.what();
  }
  return r;
}

// The host's launch cost: microseconds per call of an empty kernel launched back to back, timed
// as the rows are. No op that launches a kernel can take less per call on this host.
double BareLaunchUs(double budget) {
  return 1e-3 / Gigaflops(1, budget, [] { LaunchNoOp(cudaStreamPerThread); });
}

// Runs every row `passes` times, a whole pass over the table after another (so a disturbance of
// the host that lasts a few seconds hits different rows in different passes), and keeps each
// row's fastest pass. With one pass the rows print as they are measured; with more, each pass
// prints one line (its geometric mean, the rows that moved more than 10% from the previous pass
// and the bare launch cost), then the kept rows print. *bare_launch_us (null on the CPU path) gets
// the fastest BareLaunchUs, measured before each pass.
std::vector<Result> RunPasses(const Registry& registry, const std::vector<KaldiRow>& rows,
                              double scale, int32 passes, double* bare_launch_us) {
  std::vector<Result> best;
  for (int32 pass = 0; pass < passes; ++pass) {
    const double bare = bare_launch_us ? BareLaunchUs(kKaldiDefaultBudget * scale) : 0;
    if (bare_launch_us) *bare_launch_us = pass == 0 ? bare : std::min(*bare_launch_us, bare);
    double log_sum = 0;
    int counted = 0, moved = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
      Result r = RunRow(registry, rows[i], scale);
      if (passes == 1) PrintRow(r);
      if (!r.missing && r.row.ratio > 0) {
        log_sum += std::log(r.row.ratio);
        ++counted;
      }
      if (pass == 0) {
        best.push_back(r);
        continue;
      }
      Result& b = best[i];
      if (!r.missing && !b.missing && b.row.cuctx > 0 &&
          std::fabs(r.row.cuctx / b.row.cuctx - 1) > 0.1)
        ++moved;
      if (b.missing || (!r.missing && r.row.cuctx > b.row.cuctx)) b = r;
    }
    WaitForThreadStream();
    if (passes > 1) {
      std::printf("pass %d of %d: ", pass + 1, passes);
      if (counted > 0)
        std::printf("geomean %.3f over %d rows; ", std::exp(log_sum / counted), counted);
      std::printf("%d rows differ by > 10%% from the best so far", moved);
      if (bare > 0) std::printf("; bare launch %.2f us", bare);
      std::printf("\n");
    }
  }
  if (passes > 1) {
    std::printf("\nEach row's fastest of %d passes:\n", passes);
    std::printf("%-54s %-8s %12s %12s %8s\n", "op", "dim", "cuctx", "kaldi", "ratio");
    for (const Result& r : best) PrintRow(r);
  }
  return best;
}

// Kaldi's one-launch reference: microseconds per call {fastest, slowest} of its `label` rows up
// to 512 (one kernel, dim^2 work per call, e.g. CuMatrix::Sigmoid<float>); {0, 0} if none.
std::pair<double, double> KaldiOneLaunchUs(const std::vector<KaldiRow>& table,
                                           const std::string& label) {
  double lo = 0, hi = 0;
  for (const KaldiRow& k : table) {
    if (k.label != label || k.dims.values.size() != 1 || k.dims.values[0] > 512 || !(k.kaldi > 0))
      continue;
    const double us = Sq(k.dims.values[0]) / (k.kaldi * 1e3);
    lo = lo == 0 ? us : std::min(lo, us);
    hi = std::max(hi, us);
  }
  return {lo, hi};
}

// What the host's launch cost allows: Kaldi's host issued a one-launch op at t us per call, so a
// row bound by one launch here reaches at most t / bare_us of Kaldi's figure.
void PrintLaunchCeiling(double bare_us, const std::vector<KaldiRow>& table) {
  std::printf(
      "\nLaunch cost: an empty kernel launched back to back takes %.2f us per call on this host "
      "(fastest pass).\n",
      bare_us);
  for (const char* label : {"CuMatrix::Sigmoid<float>", "CuMatrix::Sigmoid<double>"}) {
    const std::pair<double, double> t = KaldiOneLaunchUs(table, label);
    if (t.first <= 0) continue;
    const double lo = t.first / bare_us, hi = t.second / bare_us;
    std::printf(
        "Kaldi's %s (one launch per call, 16-512): %.2f-%.2f us per call, so a row bound by one "
        "launch reaches at most %.2f-%.2f of Kaldi's figure here%s\n",
        label, t.first, t.second, lo, hi,
        lo < kTargetFloor ? " (under the floor: such rows cannot all meet it on this host)" : "");
  }
}

int Body(const ToolArgs& args, const Options& opts) {
  if (!(opts.time > 0 && opts.time <= 10))
    throw ToolUsageError("--time must be in (0, 10] seconds, got " + FormatNumber(opts.time));
  if (opts.passes < 1 || opts.passes > 20)
    throw ToolUsageError("--passes must be in [1, 20], got " + std::to_string(opts.passes));
  std::vector<int32> dims_filter;
  for (const std::string& d : SplitList(opts.dims)) {
    char* end = nullptr;
    const long v = std::strtol(d.c_str(), &end, 10);
    if (end == d.c_str() || *end != '\0' || v < 1)
      throw ToolUsageError("--dims: expected sizes separated by commas, got '" + d + "'");
    dims_filter.push_back(static_cast<int32>(v));
  }
  const std::vector<std::string> only = SplitList(opts.only);

  std::vector<std::string> header;
  const std::string kaldi_tsv = FindToolDataFile(opts.kaldi_tsv);
  std::vector<KaldiRow> table = ReadKaldiTable(kaldi_tsv, &header);
  const std::vector<std::string> logs = SplitList(opts.kaldi_log);
  size_t with_figure = 0;
  if (!logs.empty()) {
    const std::map<std::pair<std::string, std::string>, double> figures = ReadKaldiLogs(logs);
    for (KaldiRow& k : table) {
      auto it = figures.find({k.label, DimsKeyText(k.dims.text)});
      if (it != figures.end()) {
        k.kaldi = it->second;
        ++with_figure;
      }
    }
  }
  std::vector<KaldiRow> rows;
  for (const KaldiRow& k : table) {
    bool keep = only.empty();
    for (const std::string& s : only) keep = keep || k.label.find(s) != std::string::npos;
    for (int32 v : k.dims.values)
      if (!dims_filter.empty() &&
          std::find(dims_filter.begin(), dims_filter.end(), v) == dims_filter.end())
        keep = false;
    if (keep) rows.push_back(k);
  }
  if (rows.empty()) throw ToolUsageError("no row of '" + kaldi_tsv + "' matches --only / --dims");

  SelectToolGpu(args);
  Registry registry;
  AddMatrixTests<float>(&registry);
  AddMatrixTests<double>(&registry);
  AddVectorTests<float>(&registry);
  AddVectorTests<double>(&registry);

  CuDevice& device = CuDevice::Instantiate();
  if (device.Enabled()) {
    const CuDeviceProperties& p = device.Properties();
    std::printf("cu-kaldi-speed-bench: %s (cc %d.%d, %d SMs), driver %d, runtime %d\n",
                p.name.c_str(), p.major, p.minor, p.multiprocessors, p.driver_version,
                p.runtime_version);
  } else {
    std::printf(
        "cu-kaldi-speed-bench: CPU (%s): this times cuctx's CPU fallback; the ratios to Kaldi's "
        "GPU figures mean nothing\n",
        device.NoGpuReason().c_str());
  }
  std::printf("Rows from %s (%zu of %zu selected).\n", kaldi_tsv.c_str(), rows.size(),
              table.size());
  if (logs.empty())
    std::printf(
        "No --kaldi-log: cuctx speeds only. A ratio to Kaldi needs Kaldi's binary on this host in "
        "this run: ../shared/kaldi-speed/compare.sh, or --kaldi-log with its output.\n");
  else
    std::printf("Kaldi's figures from %s: %zu of the table's %zu rows.\n", opts.kaldi_log.c_str(),
                with_figure, table.size());
  const double scale = opts.time / kKaldiDefaultBudget;
  std::printf(
      "Budget per row: each Kaldi test's own x %.3g (--time=%g); speeds in Kaldi's units.\n", scale,
      opts.time);
  if (opts.passes > 1)
    std::printf("Passes: %d over the whole table; each row keeps its fastest.\n\n", opts.passes);
  else
    std::printf("\n%-54s %-8s %12s %12s %8s\n", "op", "dim", "cuctx", "kaldi", "ratio");

  const Timer total;
  double bare_launch_us = 0;
  std::vector<Result> results =
      RunPasses(registry, rows, scale, opts.passes, device.Enabled() ? &bare_launch_us : nullptr);
  if (!logs.empty()) {
    PrintSummary(results, rows);
    if (device.Enabled()) PrintLaunchCeiling(bare_launch_us, table);
  } else if (device.Enabled()) {
    std::printf(
        "\nLaunch cost: an empty kernel launched back to back takes %.2f us per call on this host "
        "(fastest pass).\n",
        bare_launch_us);
  }
  std::printf("\n%zu rows in %.1f s\n", results.size(), total.Elapsed());
  if (!opts.tsv_out.empty()) {
    WriteTsv(opts.tsv_out, results);
    std::printf("wrote %s\n", opts.tsv_out.c_str());
  }
  return kToolExitOk;
}

}  // namespace
}  // namespace cuctx

int main(int argc, char* argv[]) {
  cuctx::Options opts;
  // The device is selected after the table is read (Body), so a missing table is found first.
  cuctx::ToolSpec spec{cuctx::kUsage, 0, 0, cuctx::ToolGpu::kOptionsOnly, "yes"};
  return cuctx::RunTool(
      argc, argv, spec,
      [&](cuctx::ParseOptions* po) {
        po->Register("kaldi-tsv", &opts.kaldi_tsv,
                     "The rows to run: op, dim, kaldi_speed, unit (tab-separated, '#' comments; "
                     "the stored speed is not used); a bare file name is also looked for in the "
                     "data shipped with cuctx (tests/data, PREFIX/share/cuctx)");
        po->Register("kaldi-log", &opts.kaldi_log,
                     "Comma-separated logs of Kaldi's cu-matrix-speed-test / cu-vector-speed-test "
                     "run on this host in this run: Kaldi's speeds, for ratios (none without it)");
        po->Register("time", &opts.time,
                     "Seconds per row for a test whose Kaldi budget is 25 ms; the others scale "
                     "with it (0.025 = Kaldi's budgets)");
        po->Register("only", &opts.only,
                     "Run only labels containing one of these substrings (comma-separated)");
        po->Register("dims", &opts.dims,
                     "Run only rows whose sizes are all in this comma-separated list (e.g. 16,32)");
        po->Register("passes", &opts.passes,
                     "Time the whole table this many times and keep each row's fastest pass "
                     "(1 = Kaldi's single measurement; more filters out passing disturbances of "
                     "the host)");
        po->Register("tsv-out", &opts.tsv_out,
                     "Also write op, dim, cuctx, kaldi, ratio as TSV to this file");
      },
      [&](const cuctx::ToolArgs& args) { return cuctx::Body(args, opts); });
}
