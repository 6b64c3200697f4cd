// matrix/sparse-matrix.cc: SparseVector and SparseMatrix: construction, dense conversion, I/O.
// SPDX-License-Identifier: Apache-2.0
#include "matrix/sparse-matrix.h"

#include "base/error.h"
#include "base/io-funcs.h"
#include "base/random.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

namespace cuctx {

namespace {

// Reads a basic type, adding `what` and where it started to any error.
template <typename T>
T ReadField(std::istream& is, bool binary, const char* what, int64 index = -1) {
  const std::string pos = StreamPosition(is);
  T value{};
  try {
    ReadBasicType(is, binary, &value);
  } catch (const Error& e) {
    if (index >= 0)
      CUCTX_ERR << "reading the " << what << " of pair " << index << " of a sparse vector" << pos
                << ": " << e.what();
    CUCTX_ERR << "reading the " << what << " of a sparse vector or matrix" << pos << ": "
              << e.what();
  }
  return value;
}

// Parses "name=<non-negative int>" (the text headers "dim=5", "rows=3").
int32 ReadNamedCount(std::istream& is, const char* name) {
  is >> std::ws;
  const std::string pos = StreamPosition(is);
  std::string word;
  if (!(is >> word))
    CUCTX_ERR << "expected '" << name << "=<count>'" << pos << ", found end of stream";
  const std::string prefix = std::string(name) + "=";
  const std::string digits =
      word.compare(0, prefix.size(), prefix) == 0 ? word.substr(prefix.size()) : "";
  char* end = nullptr;
  long long value = digits.empty() ? -1 : std::strtoll(digits.c_str(), &end, 10);
  if (digits.empty() || *end != '\0' || !std::isdigit(static_cast<unsigned char>(digits[0])) ||
      value > std::numeric_limits<int32>::max())
    CUCTX_ERR << "expected '" << name << "=<count>'" << pos << ", found \"" << word.substr(0, 40)
              << "\"";
  return static_cast<int32>(value);
}

}  // namespace

// ---- SparseVector
// ---------------------------------------------------------------------------------

template <typename Real>
SparseVector<Real>::SparseVector(MatrixIndexT dim) : dim_(dim) {
  if (dim < 0) CUCTX_ERR << "SparseVector: negative dimension " << dim;
}

template <typename Real>
SparseVector<Real>::SparseVector(MatrixIndexT dim,
                                 const std::vector<std::pair<MatrixIndexT, Real>>& pairs)
    : dim_(dim) {
  if (dim < 0) CUCTX_ERR << "SparseVector: negative dimension " << dim;
  for (size_t i = 0; i < pairs.size(); ++i)
    if (pairs[i].first < 0 || pairs[i].first >= dim)
      CUCTX_ERR << "SparseVector: index " << pairs[i].first << " (pair " << i
                << ") out of range for dimension " << dim;
  std::vector<std::pair<MatrixIndexT, Real>> sorted(pairs);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const std::pair<MatrixIndexT, Real>& a,
                      const std::pair<MatrixIndexT, Real>& b) { return a.first < b.first; });
  for (size_t i = 0; i < sorted.size();) {
    std::pair<MatrixIndexT, Real> merged = sorted[i];
    for (++i; i < sorted.size() && sorted[i].first == merged.first; ++i)
      merged.second += sorted[i].second;
    if (merged.second != Real(0)) pairs_.push_back(merged);
  }
}

template <typename Real>
SparseVector<Real>::SparseVector(const VectorBase<Real>& vec) : dim_(vec.Dim()) {
  for (MatrixIndexT i = 0; i < dim_; ++i)
    if (vec(i) != Real(0)) pairs_.emplace_back(i, vec(i));
}

template <typename Real>
const std::pair<MatrixIndexT, Real>& SparseVector<Real>::GetElement(MatrixIndexT i) const {
  if (i < 0 || i >= NumElements())
    CUCTX_ERR << "SparseVector::GetElement: element " << i << " out of range [0, " << NumElements()
              << ")";
  return pairs_[i];
}

template <typename Real>
Real SparseVector<Real>::Sum() const {
  double sum = 0.0;
  for (const auto& p : pairs_) sum += p.second;
  return static_cast<Real>(sum);
}

template <typename Real>
Real SparseVector<Real>::Max(int32* index) const {
  if (dim_ == 0) CUCTX_ERR << "SparseVector::Max of an empty vector";
  bool have = false;
  Real best = 0;
  int32 best_index = 0;
  for (const auto& p : pairs_) {
    if (!have || p.second > best) {
      best = p.second;
      best_index = p.first;
      have = true;
    }
  }
  if (NumElements() < dim_ && (!have || best < Real(0))) {
    // An implicit zero wins: report the first index that is not stored.
    best = 0;
    best_index = 0;
    for (const auto& p : pairs_) {
      if (p.first != best_index) break;
      ++best_index;
    }
  }
  if (index != nullptr) *index = best_index;
  return best;
}

template <typename Real>
void SparseVector<Real>::Scale(Real alpha) {
  for (auto& p : pairs_) p.second *= alpha;
}

template <typename Real>
template <typename OtherReal>
void SparseVector<Real>::CopyElementsToVec(VectorBase<OtherReal>* vec) const {
  CUCTX_CHECK(vec != nullptr) << "null destination vector";
  if (vec->Dim() != dim_)
    CUCTX_ERR << "SparseVector::CopyElementsToVec: vector dim " << vec->Dim()
              << ", sparse vector dim " << dim_;
  vec->SetZero();
  OtherReal* data = vec->Data();
  for (const auto& p : pairs_) data[p.first] = static_cast<OtherReal>(p.second);
}

template <typename Real>
template <typename OtherReal>
void SparseVector<Real>::AddToVec(Real alpha, VectorBase<OtherReal>* vec) const {
  CUCTX_CHECK(vec != nullptr) << "null destination vector";
  if (vec->Dim() != dim_)
    CUCTX_ERR << "SparseVector::AddToVec: vector dim " << vec->Dim() << ", sparse vector dim "
              << dim_;
  OtherReal* data = vec->Data();
  for (const auto& p : pairs_) data[p.first] += static_cast<OtherReal>(alpha * p.second);
}

template <typename Real>
template <typename OtherReal>
void SparseVector<Real>::CopyFromSvec(const SparseVector<OtherReal>& other) {
  dim_ = other.Dim();
  pairs_.resize(other.NumElements());
  const std::pair<MatrixIndexT, OtherReal>* src = other.Data();
  for (size_t i = 0; i < pairs_.size(); ++i)
    pairs_[i] = std::make_pair(src[i].first, static_cast<Real>(src[i].second));
}

template <typename Real>
void SparseVector<Real>::SetRandn(BaseFloat zero_prob) {
  if (!(zero_prob >= 0 && zero_prob <= 1))
    CUCTX_ERR << "SparseVector::SetRandn: zero_prob " << zero_prob << " is not in [0, 1]";
  pairs_.clear();
  for (MatrixIndexT i = 0; i < dim_; ++i)
    if (WithProb(1.0f - zero_prob)) pairs_.emplace_back(i, static_cast<Real>(RandGauss()));
}

template <typename Real>
void SparseVector<Real>::Resize(MatrixIndexT dim, MatrixResizeType resize_type) {
  if (dim < 0) CUCTX_ERR << "SparseVector::Resize: negative dimension " << dim;
  if (resize_type == kCopyData) {
    while (!pairs_.empty() && pairs_.back().first >= dim) pairs_.pop_back();
  } else {
    pairs_.clear();
  }
  dim_ = dim;
}

template <typename Real>
void SparseVector<Real>::Swap(SparseVector<Real>* other) {
  std::swap(dim_, other->dim_);
  pairs_.swap(other->pairs_);
}

template <typename Real>
void SparseVector<Real>::Write(std::ostream& os, bool binary) const {
  if (!os.good()) CUCTX_ERR << "cannot write a sparse vector: the output stream is not good";
  if (binary) {
    WriteToken(os, binary, "SV");
    WriteBasicType(os, binary, static_cast<int32>(dim_));
    WriteBasicType(os, binary, static_cast<int32>(pairs_.size()));
    for (const auto& p : pairs_) {
      WriteBasicType(os, binary, static_cast<int32>(p.first));
      WriteBasicType(os, binary, p.second);
    }
  } else {
    os << "dim=" << dim_ << " [ ";
    for (const auto& p : pairs_) os << p.first << ' ' << p.second << ' ';
    os << "] ";
  }
  if (os.fail()) CUCTX_ERR << "failed to write a sparse vector of dimension " << dim_;
}

template <typename Real>
void SparseVector<Real>::Read(std::istream& is, bool binary) {
  std::vector<std::pair<MatrixIndexT, Real>> pairs;
  int32 dim = 0;
  if (!binary) is >> std::ws;
  const std::string start = StreamPosition(is);
  // Checks one pair against the invariants, naming the index and where the vector started.
  auto check = [&](int32 index, const std::string& pos) {
    if (index < 0 || index >= dim)
      CUCTX_ERR << "sparse vector (started" << start << "): index " << index << pos
                << " out of range for dimension " << dim;
    if (!pairs.empty() && index <= pairs.back().first)
      CUCTX_ERR << "sparse vector (started" << start << "): index " << index << pos
                << " is not greater than the previous index " << pairs.back().first
                << " (indices must be sorted and unique)";
  };
  if (binary) {
    ExpectToken(is, binary, "SV");
    dim = ReadField<int32>(is, binary, "dimension");
    if (dim < 0) CUCTX_ERR << "sparse vector" << start << " has negative dimension " << dim;
    const std::string count_pos = StreamPosition(is);
    const int32 count = ReadField<int32>(is, binary, "number of elements");
    if (count < 0 || count > dim)
      CUCTX_ERR << "sparse vector" << start << " claims " << count << " elements, expected 0.."
                << dim << count_pos;
    // Each pair takes at least 5 + 5 bytes (size byte + int32, size byte + float).
    const int64 left = BytesLeftInStream(is);
    if (left >= 0 && static_cast<int64>(count) * 10 > left)
      CUCTX_ERR << "truncated or corrupt sparse vector" << start << ": " << count
                << " elements need at least " << static_cast<int64>(count) * 10
                << " bytes, the stream has " << left << " left";
    pairs.reserve(left >= 0 ? count : std::min(count, 1 << 16));
    for (int32 i = 0; i < count; ++i) {
      const std::string pos = StreamPosition(is);
      const int32 index = ReadField<int32>(is, binary, "index", i);
      const Real value = ReadField<Real>(is, binary, "value", i);
      check(index, pos);
      pairs.emplace_back(index, value);
    }
  } else {
    dim = ReadNamedCount(is, "dim");
    is >> std::ws;
    const std::string bracket_pos = StreamPosition(is);
    std::string word;
    if (!(is >> word) || word != "[")
      CUCTX_ERR << "expected '[' in text sparse vector" << bracket_pos << ", found "
                << (is ? "\"" + word.substr(0, 40) + "\"" : std::string("end of stream"));
    while (true) {
      is >> std::ws;
      const int c = is.peek();
      if (c == std::char_traits<char>::eof())
        CUCTX_ERR << "unterminated text sparse vector (started" << start << "): end of stream"
                  << StreamPosition(is) << " before ']'";
      if (c == ']') {
        is.get();
        break;
      }
      const std::string pos = StreamPosition(is);
      const int64 i = static_cast<int64>(pairs.size());
      const int32 index = ReadField<int32>(is, false, "index", i);
      const Real value = ReadField<Real>(is, false, "value", i);
      check(index, pos);
      pairs.emplace_back(index, value);
    }
  }
  dim_ = dim;
  pairs_.swap(pairs);
}

template <typename Real>
Real VecSvec(const VectorBase<Real>& vec, const SparseVector<Real>& svec) {
  if (vec.Dim() != svec.Dim())
    CUCTX_ERR << "VecSvec: vector dim " << vec.Dim() << ", sparse vector dim " << svec.Dim();
  double sum = 0.0;
  const std::pair<MatrixIndexT, Real>* p = svec.Data();
  for (MatrixIndexT i = 0; i < svec.NumElements(); ++i)
    sum += static_cast<double>(vec(p[i].first)) * p[i].second;
  return static_cast<Real>(sum);
}

// ---- SparseMatrix
// ---------------------------------------------------------------------------------

template <typename Real>
SparseMatrix<Real>::SparseMatrix(
    MatrixIndexT dim, const std::vector<std::vector<std::pair<MatrixIndexT, Real>>>& pairs) {
  rows_.reserve(pairs.size());
  for (size_t r = 0; r < pairs.size(); ++r) {
    try {
      rows_.emplace_back(dim, pairs[r]);
    } catch (const Error& e) {
      CUCTX_ERR << "SparseMatrix: row " << r << ": " << e.what();
    }
  }
}

template <typename Real>
SparseMatrix<Real>::SparseMatrix(const MatrixBase<Real>& mat) {
  rows_.reserve(mat.NumRows());
  for (MatrixIndexT r = 0; r < mat.NumRows(); ++r) {
    std::vector<std::pair<MatrixIndexT, Real>> pairs;
    const Real* data = mat.RowData(r);
    for (MatrixIndexT c = 0; c < mat.NumCols(); ++c)
      if (data[c] != Real(0)) pairs.emplace_back(c, data[c]);
    rows_.emplace_back(mat.NumCols(), pairs);
  }
}

template <typename Real>
SparseMatrix<Real>::SparseMatrix(const std::vector<int32>& indexes, MatrixIndexT dim,
                                 MatrixTransposeType trans) {
  std::vector<std::vector<std::pair<MatrixIndexT, Real>>> pairs(indexes.size());
  for (size_t i = 0; i < indexes.size(); ++i) {
    if (indexes[i] >= dim)
      CUCTX_ERR << "SparseMatrix: index " << indexes[i] << " (entry " << i
                << ") out of range for dimension " << dim;
    if (indexes[i] >= 0) pairs[i].emplace_back(indexes[i], Real(1));
  }
  SparseMatrix<Real> rows(dim, pairs);
  if (trans == kNoTrans)
    Swap(&rows);
  else
    CopyFromSmat(rows, kTrans);
}

template <typename Real>
SparseMatrix<Real>::SparseMatrix(const std::vector<int32>& indexes, const VectorBase<Real>& weights,
                                 MatrixIndexT dim, MatrixTransposeType trans) {
  if (static_cast<size_t>(weights.Dim()) != indexes.size())
    CUCTX_ERR << "SparseMatrix: " << indexes.size() << " indexes but " << weights.Dim()
              << " weights";
  std::vector<std::vector<std::pair<MatrixIndexT, Real>>> pairs(indexes.size());
  for (size_t i = 0; i < indexes.size(); ++i) {
    if (indexes[i] >= dim)
      CUCTX_ERR << "SparseMatrix: index " << indexes[i] << " (entry " << i
                << ") out of range for dimension " << dim;
    if (indexes[i] >= 0) pairs[i].emplace_back(indexes[i], weights(static_cast<MatrixIndexT>(i)));
  }
  SparseMatrix<Real> rows(dim, pairs);
  if (trans == kNoTrans)
    Swap(&rows);
  else
    CopyFromSmat(rows, kTrans);
}

template <typename Real>
MatrixIndexT SparseMatrix<Real>::NumElements() const {
  int64 n = 0;
  for (const auto& row : rows_) n += row.NumElements();
  return static_cast<MatrixIndexT>(n);
}

template <typename Real>
Real SparseMatrix<Real>::Sum() const {
  double sum = 0.0;
  for (const auto& row : rows_)
    for (MatrixIndexT i = 0; i < row.NumElements(); ++i) sum += row.Data()[i].second;
  return static_cast<Real>(sum);
}

template <typename Real>
Real SparseMatrix<Real>::FrobeniusNorm() const {
  double sum = 0.0;
  for (const auto& row : rows_) {
    for (MatrixIndexT i = 0; i < row.NumElements(); ++i) {
      const double v = row.Data()[i].second;
      sum += v * v;
    }
  }
  return static_cast<Real>(std::sqrt(sum));
}

template <typename Real>
void SparseMatrix<Real>::Scale(Real alpha) {
  for (auto& row : rows_) row.Scale(alpha);
}

template <typename Real>
const SparseVector<Real>& SparseMatrix<Real>::Row(MatrixIndexT r) const {
  if (r < 0 || r >= NumRows())
    CUCTX_ERR << "SparseMatrix::Row: row " << r << " out of range [0, " << NumRows() << ")";
  return rows_[r];
}

template <typename Real>
void SparseMatrix<Real>::SetRow(int32 r, const SparseVector<Real>& vec) {
  if (r < 0 || r >= NumRows())
    CUCTX_ERR << "SparseMatrix::SetRow: row " << r << " out of range [0, " << NumRows() << ")";
  if (vec.Dim() != NumCols())
    CUCTX_ERR << "SparseMatrix::SetRow: vector dim " << vec.Dim() << ", matrix has " << NumCols()
              << " columns";
  rows_[r] = vec;
}

template <typename Real>
template <typename OtherReal>
void SparseMatrix<Real>::CopyToMat(MatrixBase<OtherReal>* other, MatrixTransposeType trans) const {
  CUCTX_CHECK(other != nullptr) << "null destination matrix";
  const bool t = (trans == kTrans);
  const MatrixIndexT want_rows = t ? NumCols() : NumRows(), want_cols = t ? NumRows() : NumCols();
  if (other->NumRows() != want_rows || (NumRows() > 0 && other->NumCols() != want_cols))
    CUCTX_ERR << "SparseMatrix::CopyToMat: destination is " << other->NumRows() << " x "
              << other->NumCols() << ", expected " << want_rows << " x " << want_cols
              << (t ? " (transposed)" : "");
  other->SetZero();
  for (MatrixIndexT r = 0; r < NumRows(); ++r) {
    const SparseVector<Real>& row = rows_[r];
    for (MatrixIndexT i = 0; i < row.NumElements(); ++i) {
      const auto& p = row.Data()[i];
      if (t)
        (*other)(p.first, r) = static_cast<OtherReal>(p.second);
      else
        (*other)(r, p.first) = static_cast<OtherReal>(p.second);
    }
  }
}

template <typename Real>
void SparseMatrix<Real>::CopyElementsToVec(VectorBase<Real>* other) const {
  CUCTX_CHECK(other != nullptr) << "null destination vector";
  if (other->Dim() != NumElements())
    CUCTX_ERR << "SparseMatrix::CopyElementsToVec: vector dim " << other->Dim() << ", expected "
              << NumElements();
  Real* dst = other->Data();
  for (const auto& row : rows_)
    for (MatrixIndexT i = 0; i < row.NumElements(); ++i) *dst++ = row.Data()[i].second;
}

template <typename Real>
void SparseMatrix<Real>::AddToMat(BaseFloat alpha, MatrixBase<Real>* other,
                                  MatrixTransposeType trans) const {
  CUCTX_CHECK(other != nullptr) << "null destination matrix";
  const bool t = (trans == kTrans);
  const MatrixIndexT want_rows = t ? NumCols() : NumRows(), want_cols = t ? NumRows() : NumCols();
  if (other->NumRows() != want_rows || (NumRows() > 0 && other->NumCols() != want_cols))
    CUCTX_ERR << "SparseMatrix::AddToMat: destination is " << other->NumRows() << " x "
              << other->NumCols() << ", expected " << want_rows << " x " << want_cols
              << (t ? " (transposed)" : "");
  for (MatrixIndexT r = 0; r < NumRows(); ++r) {
    const SparseVector<Real>& row = rows_[r];
    for (MatrixIndexT i = 0; i < row.NumElements(); ++i) {
      const auto& p = row.Data()[i];
      if (t)
        (*other)(p.first, r) += alpha * p.second;
      else
        (*other)(r, p.first) += alpha * p.second;
    }
  }
}

template <typename Real>
template <typename OtherReal>
void SparseMatrix<Real>::CopyFromSmat(const SparseMatrix<OtherReal>& other,
                                      MatrixTransposeType trans) {
  std::vector<SparseVector<Real>> rows;
  if (trans == kNoTrans) {
    rows.resize(other.NumRows());
    for (MatrixIndexT r = 0; r < other.NumRows(); ++r) rows[r].CopyFromSvec(other.Row(r));
  } else {
    std::vector<std::vector<std::pair<MatrixIndexT, Real>>> cols(other.NumCols());
    for (MatrixIndexT r = 0; r < other.NumRows(); ++r) {
      const SparseVector<OtherReal>& row = other.Row(r);
      for (MatrixIndexT i = 0; i < row.NumElements(); ++i)
        cols[row.Data()[i].first].emplace_back(r, static_cast<Real>(row.Data()[i].second));
    }
    rows.resize(cols.size());
    for (size_t c = 0; c < cols.size(); ++c) {
      rows[c] = SparseVector<Real>(other.NumRows(), cols[c]);
    }
  }
  rows_.swap(rows);
}

template <typename Real>
void SparseMatrix<Real>::SelectRows(const std::vector<int32>& row_indexes,
                                    const SparseMatrix<Real>& smat_other) {
  std::vector<SparseVector<Real>> rows;
  rows.reserve(row_indexes.size());
  for (size_t i = 0; i < row_indexes.size(); ++i) {
    if (row_indexes[i] < 0 || row_indexes[i] >= smat_other.NumRows())
      CUCTX_ERR << "SparseMatrix::SelectRows: index " << row_indexes[i] << " (entry " << i
                << ") out of range [0, " << smat_other.NumRows() << ")";
    rows.push_back(smat_other.rows_[row_indexes[i]]);
  }
  rows_.swap(rows);
}

template <typename Real>
void SparseMatrix<Real>::AppendSparseMatrixRows(std::vector<SparseMatrix<Real>>* inputs) {
  CUCTX_CHECK(inputs != nullptr) << "null input list";
  MatrixIndexT cols = -1;
  size_t total = 0;
  for (size_t k = 0; k < inputs->size(); ++k) {
    const SparseMatrix<Real>& in = (*inputs)[k];
    if (in.NumRows() == 0) continue;
    if (cols >= 0 && in.NumCols() != cols)
      CUCTX_ERR << "SparseMatrix::AppendSparseMatrixRows: input " << k << " has " << in.NumCols()
                << " columns, earlier inputs have " << cols;
    cols = in.NumCols();
    total += in.rows_.size();
  }
  std::vector<SparseVector<Real>> rows;
  rows.reserve(total);
  for (auto& in : *inputs) {
    for (auto& row : in.rows_) rows.emplace_back(std::move(row));
    in.rows_.clear();
  }
  rows_.swap(rows);
}

template <typename Real>
void SparseMatrix<Real>::SetRandn(BaseFloat zero_prob) {
  for (auto& row : rows_) row.SetRandn(zero_prob);
}

template <typename Real>
void SparseMatrix<Real>::Resize(MatrixIndexT num_rows, MatrixIndexT num_cols,
                                MatrixResizeType resize_type) {
  if (num_rows < 0 || num_cols < 0)
    CUCTX_ERR << "SparseMatrix::Resize: negative size " << num_rows << " x " << num_cols;
  if (resize_type != kCopyData) rows_.clear();
  rows_.resize(num_rows, SparseVector<Real>(num_cols));
  for (auto& row : rows_) row.Resize(num_cols, kCopyData);
}

template <typename Real>
void SparseMatrix<Real>::Swap(SparseMatrix<Real>* other) {
  rows_.swap(other->rows_);
}

template <typename Real>
void SparseMatrix<Real>::Write(std::ostream& os, bool binary) const {
  if (!os.good()) CUCTX_ERR << "cannot write a sparse matrix: the output stream is not good";
  if (binary) {
    WriteToken(os, binary, "SM");
    WriteBasicType(os, binary, static_cast<int32>(rows_.size()));
    for (const auto& row : rows_) row.Write(os, binary);
  } else {
    os << "rows=" << rows_.size() << " ";
    for (const auto& row : rows_) row.Write(os, binary);
    os << "\n";
  }
  if (os.fail()) CUCTX_ERR << "failed to write a sparse matrix of " << rows_.size() << " rows";
}

template <typename Real>
void SparseMatrix<Real>::Read(std::istream& is, bool binary) {
  if (!binary) is >> std::ws;
  const std::string start = StreamPosition(is);
  int32 num_rows = 0;
  int64 left = -1;
  if (binary) {
    ExpectToken(is, binary, "SM");
    num_rows = ReadField<int32>(is, binary, "number of rows");
    if (num_rows < 0)
      CUCTX_ERR << "sparse matrix" << start << " has a negative number of rows " << num_rows;
    // Each row takes at least 13 bytes ("SV " and two int32 with their size bytes).
    left = BytesLeftInStream(is);
    if (left >= 0 && static_cast<int64>(num_rows) * 13 > left)
      CUCTX_ERR << "truncated or corrupt sparse matrix" << start << ": " << num_rows
                << " rows need at least " << static_cast<int64>(num_rows) * 13
                << " bytes, the stream has " << left << " left";
  } else {
    num_rows = ReadNamedCount(is, "rows");
  }
  std::vector<SparseVector<Real>> rows;
  rows.reserve(left >= 0 ? num_rows : std::min(num_rows, 1 << 16));
  for (int32 r = 0; r < num_rows; ++r) {
    SparseVector<Real> row;
    try {
      row.Read(is, binary);
    } catch (const Error& e) {
      CUCTX_ERR << "reading row " << r << " of the sparse matrix that started" << start << ": "
                << e.what();
    }
    if (r > 0 && row.Dim() != rows[0].Dim())
      CUCTX_ERR << "sparse matrix (started" << start << "): row " << r << " has dimension "
                << row.Dim() << ", row 0 has " << rows[0].Dim();
    rows.push_back(std::move(row));
  }
  rows_.swap(rows);
}

template <typename Real>
Real TraceMatSmat(const MatrixBase<Real>& A, const SparseMatrix<Real>& B,
                  MatrixTransposeType trans) {
  const bool t = (trans == kTrans);
  const MatrixIndexT want_rows = t ? A.NumRows() : A.NumCols();
  const MatrixIndexT want_cols = t ? A.NumCols() : A.NumRows();
  if (B.NumRows() != want_rows || (B.NumRows() > 0 && B.NumCols() != want_cols))
    CUCTX_ERR << "TraceMatSmat: A is " << A.NumRows() << " x " << A.NumCols() << ", B is "
              << B.NumRows() << " x " << B.NumCols() << (t ? " (transposed)" : "");
  double sum = 0.0;
  for (MatrixIndexT r = 0; r < B.NumRows(); ++r) {
    const SparseVector<Real>& row = B.Row(r);
    for (MatrixIndexT i = 0; i < row.NumElements(); ++i) {
      const auto& p = row.Data()[i];
      sum += static_cast<double>(t ? A(r, p.first) : A(p.first, r)) * p.second;
    }
  }
  return static_cast<Real>(sum);
}

#define CUCTX_INSTANTIATE_SPARSE_(Real)                                                            \
  template class SparseVector<Real>;                                                               \
  template class SparseMatrix<Real>;                                                               \
  template void SparseVector<Real>::CopyElementsToVec(VectorBase<float>*) const;                   \
  template void SparseVector<Real>::CopyElementsToVec(VectorBase<double>*) const;                  \
  template void SparseVector<Real>::AddToVec(Real, VectorBase<float>*) const;                      \
  template void SparseVector<Real>::AddToVec(Real, VectorBase<double>*) const;                     \
  template void SparseVector<Real>::CopyFromSvec(const SparseVector<float>&);                      \
  template void SparseVector<Real>::CopyFromSvec(const SparseVector<double>&);                     \
  template void SparseMatrix<Real>::CopyToMat(MatrixBase<float>*, MatrixTransposeType) const;      \
  template void SparseMatrix<Real>::CopyToMat(MatrixBase<double>*, MatrixTransposeType) const;     \
  template void SparseMatrix<Real>::CopyFromSmat(const SparseMatrix<float>&, MatrixTransposeType); \
  template void SparseMatrix<Real>::CopyFromSmat(const SparseMatrix<double>&,                      \
                                                 MatrixTransposeType);                             \
  template Real VecSvec(const VectorBase<Real>&, const SparseVector<Real>&);                       \
  template Real TraceMatSmat(const MatrixBase<Real>&, const SparseMatrix<Real>&,                   \
                             MatrixTransposeType)
CUCTX_INSTANTIATE_SPARSE_(float);
CUCTX_INSTANTIATE_SPARSE_(double);
#undef CUCTX_INSTANTIATE_SPARSE_

}  // namespace cuctx
