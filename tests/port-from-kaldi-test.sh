#!/usr/bin/env bash
# tests/port-from-kaldi-test.sh: tools/port-from-kaldi on Kaldi-style sources: the README's porting
# example turned back into its Kaldi form, and Kaldi-style programs that use the names the two
# rename rules do not reach (KaldiFatalError, KaldiMessage, g_kaldi_verbose_level), the base macros,
# util/ headers, and std::thread with only the cudamatrix headers. The ported files must compile
# against an installed cuctx with pkg-config and run. Also checks the report, literals left alone, --in-place, --dry-run and usage errors.
# Run by `make test` (exit 0 pass, else fail).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
port=$here/tools/port-from-kaldi
make_cmd=${MAKE:-make}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "port-from-kaldi-test: $*"; exit 1; }

mkdir -p "$tmp/kaldi/sub"
# The README's example, back in Kaldi form (namespace and macro prefix reversed).
awk '/^<!-- porting-example/ {on = 1; next} on && /^```cpp/ {code = 1; next} code && /^```/ {exit}
     code {print}' "$here/README.md" | sed -e 's/namespace cuctx/namespace kaldi/g' \
  -e 's/cuctx::/kaldi::/g' -e 's/CUCTX_/KALDI_/g' >"$tmp/kaldi/porting-example.cc"
[ -s "$tmp/kaldi/porting-example.cc" ] || fail "no porting example found in README.md"
grep -q 'using namespace kaldi' "$tmp/kaldi/porting-example.cc" || fail "README example lost its namespace"

cat >"$tmp/kaldi/errors.cc" <<'CC'
// Kaldi-style: errors, verbosity, base macros and constants.
#include "base/kaldi-common.h"
#include "util/common-utils.h"

namespace kaldi {
class Holder {
 public:
  Holder() {}
 private:
  KALDI_DISALLOW_COPY_AND_ASSIGN(Holder);
};

template <typename I> I Twice(I x) {
  KALDI_ASSERT_IS_INTEGER_TYPE(I);
  return 2 * x;
}

void Fail() { KALDI_ERR << "expected failure 42"; }
}  // namespace kaldi

int main() {
  using namespace kaldi;
  int32 old_level = g_kaldi_verbose_level;
  g_kaldi_verbose_level = 3;
  KALDI_ASSERT(GetVerboseLevel() == 3 && g_kaldi_verbose_level == 3);
  kaldi::g_kaldi_verbose_level = old_level;
  KALDI_COMPILE_TIME_ASSERT(sizeof(int32) == 4);
  BaseFloat zero = 0.0;
  KALDI_ASSERT(KALDI_ISNAN(zero / zero) && KALDI_ISINF(1.0 / zero) && !KALDI_ISFINITE(1.0 / zero));
  assert(std::abs(std::cos(M_2PI) - 1.0) < 1e-9 && DBL_EPSILON > 0);
  KALDI_ASSERT(Twice<int16>(21) == 42);
  try {
    Fail();
    return 1;
  } catch (const kaldi::KaldiFatalError &e) {
    std::cout << "caught: " << e.KaldiMessage() << "\n";
  }
  std::cout << "KALDI_ stays in strings; kaldi::too\n";
  return 0;
}
CC

cat >"$tmp/kaldi/sub/containers.cc" <<'CC'
// Kaldi-style: util/stl-utils.h, util/text-utils.h (ConfigLine), integer-pair I/O, Factorize.
#include "base/kaldi-common.h"
#include "util/stl-utils.h"
#include "util/text-utils.h"

int main() {
  using namespace kaldi;
  std::vector<int32> v = {5, 3, 5, 1};
  SortAndUniq(&v);
  KALDI_ASSERT(IsSortedAndUniq(v) && v.size() == 3);
  std::set<int32> s;
  CopyVectorToSet(v, &s);
  unordered_map<std::vector<int32>, int32, VectorHasher<int32> > by_vec;
  by_vec[v] = 7;
  ConfigLine line;
  KALDI_ASSERT(line.ParseLine("component name=a dim=4"));
  int32 dim = 0;
  KALDI_ASSERT(line.GetValue("dim", &dim) && dim == 4);
  std::vector<int32> factors;
  Factorize(360, &factors);
  std::vector<std::pair<int32, int32> > pairs = {{1, 2}, {3, 4}}, back;
  std::ostringstream os;
  WriteIntegerPairVector(os, false, pairs);
  std::istringstream is(os.str());
  ReadIntegerPairVector(is, false, &back);
  KALDI_ASSERT(back == pairs);
  std::cout << "sizes " << s.size() << " " << by_vec.size() << " " << factors.size() << "\n";
  return 0;
}
CC
cat >"$tmp/kaldi/threads.cc" <<'CC'
// Kaldi-style: std::thread and CuDevice with only the cudamatrix headers (Kaldi's reach <thread>,
// and its cu-matrix-test relies on that); without a GPU, double precision is supported.
#include "base/kaldi-common.h"
#include "cudamatrix/cu-matrix-lib.h"

int main() {
  using namespace kaldi;
  CuDevice::Instantiate().SelectGpuId("no");
  KALDI_ASSERT(CuDevice::Instantiate().DoublePrecisionSupported());
  std::vector<double> sums(3, 0.0);
  std::vector<std::thread*> threads;
  for (size_t i = 0; i < sums.size(); i++)
    threads.push_back(new std::thread([i, &sums]() {
      CuMatrix<double> m(4, 5);
      m.Set(static_cast<double>(i + 1));
      sums[i] = m.Sum();
    }));
  for (size_t i = 0; i < threads.size(); i++) {
    threads[i]->join();
    delete threads[i];
  }
  std::cout << "sums " << sums[0] << " " << sums[1] << " " << sums[2] << "\n";
  return 0;
}
CC
cp "$tmp/kaldi/errors.cc" "$tmp/errors-original.cc"

# Into a new folder: one report line per changed file and a total.
"$port" -o "$tmp/ported" "$tmp/kaldi" >"$tmp/report.txt" || fail "porting into a folder failed"
grep -q "^$tmp/kaldi/errors.cc: namespace [0-9]*, macro-prefix [0-9]*, names [1-9]" "$tmp/report.txt" ||
  { cat "$tmp/report.txt"; fail "no report line with renamed names for errors.cc"; }
grep -q "^4 of 4 files changed: " "$tmp/report.txt" || { cat "$tmp/report.txt"; fail "bad total line"; }
cmp -s "$tmp/kaldi/errors.cc" "$tmp/errors-original.cc" || fail "-o changed the source file"
[ -f "$tmp/ported/sub/containers.cc" ] || fail "the folder layout was not kept"
grep -q 'KALDI_\|namespace kaldi\|kaldi::\|KaldiFatalError\|g_kaldi_verbose_level' \
  <(grep -v '"' "$tmp/ported/errors.cc") && fail "Kaldi names left in code: $(grep -n 'KALDI_\|kaldi' "$tmp/ported/errors.cc")"
grep -q '"KALDI_ stays in strings; kaldi::too' "$tmp/ported/errors.cc" || fail "a string literal was renamed"
grep -q '#include "base/kaldi-common.h"' "$tmp/ported/errors.cc" || fail "an include path was renamed"

# The ported sources build against an installed cuctx with pkg-config, and run.
$make_cmd --no-print-directory install PREFIX="$tmp/prefix" BUILD="${BUILD:?}" CUDA="${CUDA:?}" >"$tmp/install.log"
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
for f in porting-example errors sub/containers threads; do
  g++ "$tmp/ported/$f.cc" $(pkg-config --cflags --libs cuctx) -o "$tmp/$(basename $f)" 2>"$tmp/cc.err" ||
    { head -20 "$tmp/cc.err"; fail "ported $f.cc does not compile"; }
done
"$tmp/porting-example" --use-gpu=optional >"$tmp/run1.txt" 2>&1 || { cat "$tmp/run1.txt"; fail "porting example failed"; }
grep -q "mean row sum 1" "$tmp/run1.txt" || { cat "$tmp/run1.txt"; fail "porting example printed something unexpected"; }
"$tmp/errors" >"$tmp/run2.txt" 2>/dev/null || fail "ported errors.cc failed"
[ "$(cat "$tmp/run2.txt")" = $'caught: expected failure 42\nKALDI_ stays in strings; kaldi::too' ] ||
  { cat "$tmp/run2.txt"; fail "ported errors.cc printed something unexpected"; }
[ "$("$tmp/containers")" = "sizes 3 1 6" ] || fail "ported containers.cc printed: $("$tmp/containers")"
[ "$("$tmp/threads" 2>/dev/null)" = "sums 20 40 60" ] || fail "ported threads.cc printed: $("$tmp/threads" 2>&1)"

# --dry-run writes nothing; --in-place rewrites; a second pass changes nothing.
"$port" --dry-run --in-place "$tmp/kaldi" >/dev/null
cmp -s "$tmp/kaldi/errors.cc" "$tmp/errors-original.cc" || fail "--dry-run wrote a file"
"$port" --in-place "$tmp/kaldi/errors.cc" >/dev/null
cmp -s "$tmp/kaldi/errors.cc" "$tmp/ported/errors.cc" || fail "--in-place differs from -o"
[ "$("$port" --in-place "$tmp/kaldi/errors.cc")" = "0 of 1 files changed: namespace 0, macro-prefix 0, names 0" ] ||
  fail "a second pass changed something"

# A compound update of g_kaldi_verbose_level cannot be rewritten: warned about, left as it is.
printf 'void f() { g_kaldi_verbose_level += 1; }\n' >"$tmp/compound.cc"
"$port" --in-place "$tmp/compound.cc" >/dev/null 2>"$tmp/warn.txt"
grep -q "warning: .*compound.cc: g_kaldi_verbose_level" "$tmp/warn.txt" || fail "no warning for +="

# Usage errors exit 2.
set +e
"$port" "$tmp/kaldi" >/dev/null 2>&1; [ $? -eq 2 ] || fail "no mode given: expected exit 2"
"$port" -o "$tmp/x" "$tmp/missing" >/dev/null 2>&1; [ $? -eq 2 ] || fail "missing path: expected exit 2"
set -e
echo "port-from-kaldi: ported the README example and Kaldi-style programs; they compile and run"
