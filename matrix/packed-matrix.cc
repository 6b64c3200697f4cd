// matrix/packed-matrix.cc: storage, element-wise operations and Kaldi I/O of PackedMatrix.
// SPDX-License-Identifier: Apache-2.0
#include "matrix/packed-matrix.h"

#include "base/error.h"
#include "base/io-funcs.h"
#include "base/random.h"
#include "matrix/vector.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

namespace cuctx {

namespace {

template <typename Real>
const char* PackedToken() {
  return sizeof(Real) == 4 ? "FP" : "DP";
}

int64 TriangleSize(int64 n) { return n * (n + 1) / 2; }

}  // namespace

template <typename Real>
void PackedMatrix<Real>::ThrowBadIndex(MatrixIndexT r, MatrixIndexT c) const {
  CUCTX_ERR << "packed matrix index (" << r << ", " << c << ") out of range for size " << num_rows_
            << " (the stored triangle needs 0 <= c <= r < " << num_rows_ << ")";
}

template <typename Real>
void PackedMatrix<Real>::Resize(MatrixIndexT n, MatrixResizeType resize_type) {
  if (n < 0) CUCTX_ERR << "PackedMatrix::Resize: negative size " << n;
  const size_t new_size = static_cast<size_t>(TriangleSize(n));
  if (resize_type == kCopyData) {
    // The leading block of a packed matrix is a prefix of its storage.
    data_.resize(std::min(data_.size(), new_size));
    data_.resize(new_size, Real(0));
  } else {
    std::vector<Real> fresh(new_size, Real(0));
    data_.swap(fresh);
  }
  num_rows_ = n;
}

template <typename Real>
void PackedMatrix<Real>::SetZero() {
  std::fill(data_.begin(), data_.end(), Real(0));
}

template <typename Real>
void PackedMatrix<Real>::SetUnit() {
  SetZero();
  SetDiag(Real(1));
}

template <typename Real>
void PackedMatrix<Real>::SetRandn() {
  for (Real& x : data_) x = static_cast<Real>(RandGauss());
}

template <typename Real>
Real PackedMatrix<Real>::Trace() const {
  Real sum = 0;
  for (MatrixIndexT i = 0; i < num_rows_; ++i) sum += data_[TriangleSize(i + 1) - 1];
  return sum;
}

template <typename Real>
void PackedMatrix<Real>::AddToDiag(Real r) {
  for (MatrixIndexT i = 0; i < num_rows_; ++i) data_[TriangleSize(i + 1) - 1] += r;
}

template <typename Real>
void PackedMatrix<Real>::ScaleDiag(Real alpha) {
  for (MatrixIndexT i = 0; i < num_rows_; ++i) data_[TriangleSize(i + 1) - 1] *= alpha;
}

template <typename Real>
void PackedMatrix<Real>::SetDiag(Real alpha) {
  for (MatrixIndexT i = 0; i < num_rows_; ++i) data_[TriangleSize(i + 1) - 1] = alpha;
}

template <typename Real>
void PackedMatrix<Real>::Scale(Real alpha) {
  for (Real& x : data_) x *= alpha;
}

template <typename Real>
void PackedMatrix<Real>::AddPacked(Real alpha, const PackedMatrix<Real>& M) {
  if (M.NumRows() != num_rows_)
    CUCTX_ERR << "PackedMatrix::AddPacked: size " << M.NumRows() << " added to size " << num_rows_;
  for (size_t i = 0; i < data_.size(); ++i) data_[i] += alpha * M.data_[i];
}

template <typename Real>
Real PackedMatrix<Real>::Max() const {
  if (data_.empty()) CUCTX_ERR << "PackedMatrix::Max of an empty matrix";
  return *std::max_element(data_.begin(), data_.end());
}

template <typename Real>
Real PackedMatrix<Real>::Min() const {
  if (data_.empty()) CUCTX_ERR << "PackedMatrix::Min of an empty matrix";
  return *std::min_element(data_.begin(), data_.end());
}

template <typename Real>
template <typename OtherReal>
void PackedMatrix<Real>::CopyFromPacked(const PackedMatrix<OtherReal>& orig) {
  if (orig.NumRows() != num_rows_)
    CUCTX_ERR << "PackedMatrix::CopyFromPacked: source size " << orig.NumRows()
              << ", destination size " << num_rows_;
  const OtherReal* src = orig.Data();
  for (size_t i = 0; i < data_.size(); ++i) data_[i] = static_cast<Real>(src[i]);
}

template <typename Real>
template <typename OtherReal>
void PackedMatrix<Real>::CopyFromVec(const VectorBase<OtherReal>& v) {
  if (static_cast<int64>(v.Dim()) != static_cast<int64>(data_.size()))
    CUCTX_ERR << "PackedMatrix::CopyFromVec: vector dim " << v.Dim() << ", expected "
              << data_.size() << " for size " << num_rows_;
  const OtherReal* src = v.Data();
  for (size_t i = 0; i < data_.size(); ++i) data_[i] = static_cast<Real>(src[i]);
}

template <typename Real>
void PackedMatrix<Real>::Swap(PackedMatrix<Real>* other) {
  std::swap(num_rows_, other->num_rows_);
  data_.swap(other->data_);
}

template <typename Real>
void PackedMatrix<Real>::Write(std::ostream& os, bool binary) const {
  if (!os.good()) CUCTX_ERR << "cannot write a packed matrix: the output stream is not good";
  if (binary) {
    WriteToken(os, binary, PackedToken<Real>());
    WriteBasicType(os, binary, static_cast<int32>(num_rows_));
    if (!data_.empty())
      os.write(reinterpret_cast<const char*>(data_.data()),
               static_cast<std::streamsize>(data_.size() * sizeof(Real)));
  } else if (num_rows_ == 0) {
    os << "[ ]\n";
  } else {
    os << "[\n";
    const Real* p = data_.data();
    for (MatrixIndexT r = 0; r < num_rows_; ++r) {
      for (MatrixIndexT c = 0; c <= r; ++c) os << *p++ << ' ';
      os << (r + 1 == num_rows_ ? "]\n" : "\n");
    }
  }
  if (os.fail()) CUCTX_ERR << "failed to write a packed matrix of size " << num_rows_;
}

template <typename Real>
void PackedMatrix<Real>::Read(std::istream& is, bool binary, bool add) {
  typedef typename std::conditional<sizeof(Real) == 4, double, float>::type Other;
  if (add) {
    PackedMatrix<Real> tmp;
    tmp.Read(is, binary, false);
    if (num_rows_ == 0) {
      Swap(&tmp);
    } else if (tmp.num_rows_ != num_rows_) {
      if (tmp.num_rows_ != 0)
        CUCTX_ERR << "PackedMatrix::Read with add: the stream holds size " << tmp.num_rows_
                  << ", this matrix has size " << num_rows_;
    } else {
      AddPacked(Real(1), tmp);
    }
    return;
  }
  const char* my_token = PackedToken<Real>();
  const int c = Peek(is, binary);
  const std::string start = StreamPosition(is);
  if (c == PackedToken<Other>()[0]) {
    PackedMatrix<Other> other;
    other.Read(is, binary, false);
    Resize(other.NumRows(), kUndefined);
    CopyFromPacked(other);
    return;
  }
  if (c == std::char_traits<char>::eof())
    CUCTX_ERR << "expected a packed matrix (\"" << my_token << "\"" << (binary ? "" : " or '['")
              << ")" << start << ", found end of stream";
  std::string token;
  ReadToken(is, binary, &token);
  if (token == my_token) {
    const std::string size_pos = StreamPosition(is);
    int32 n = 0;
    ReadBasicType(is, binary, &n);
    if (n < 0) CUCTX_ERR << "negative size " << n << " of a \"" << token << "\" matrix" << size_pos;
    const int64 count = TriangleSize(n);
    const std::string data_pos = StreamPosition(is);
    if (binary) {
      const int64 bytes = count * static_cast<int64>(sizeof(Real));
      const int64 left = BytesLeftInStream(is);
      if (left >= 0 && bytes > left)
        CUCTX_ERR << "truncated or corrupt \"" << token << "\"" << data_pos << ": size " << n
                  << " needs " << bytes << " bytes but the stream has only " << left << " left";
      PackedMatrix<Real> tmp;
      try {
        tmp.Resize(n, kUndefined);
      } catch (const std::bad_alloc&) {
        CUCTX_ERR << "cannot allocate a packed matrix of size " << n << data_pos;
      }
      if (bytes > 0) {
        is.read(reinterpret_cast<char*>(tmp.data_.data()), bytes);
        if (is.gcount() != bytes)
          CUCTX_ERR << "truncated \"" << token << "\" data" << data_pos << ": expected " << bytes
                    << " bytes, found " << is.gcount();
      }
      Swap(&tmp);
    } else {
      std::vector<Real> values;
      for (int64 i = 0; i < count; ++i) {
        Real x;
        ReadBasicType(is, false, &x);
        values.push_back(x);
      }
      num_rows_ = n;
      data_.swap(values);
    }
    return;
  }
  if (binary || (token != "[" && token != "[]"))
    CUCTX_ERR << "expected token \"" << my_token << "\"" << (binary ? "" : " or '['") << start
              << ", found \"" << token.substr(0, 40) << "\"";
  std::vector<Real> values;
  if (token == "[") {
    while (true) {
      is >> std::ws;
      int next = is.peek();
      if (next == std::char_traits<char>::eof())
        CUCTX_ERR << "unterminated text packed matrix (started" << start << "): end of stream"
                  << StreamPosition(is) << " before ']'";
      if (next == ']') {
        is.get();
        break;
      }
      Real x;
      ReadBasicType(is, false, &x);
      values.push_back(x);
    }
  }
  // Consume the newline the writer put after ']'.
  if (is.peek() == '\r') is.get();
  if (is.peek() == '\n') is.get();
  is.clear(is.rdstate() & ~(std::ios::failbit | std::ios::eofbit));
  const int64 count = static_cast<int64>(values.size());
  int64 n = static_cast<int64>((std::sqrt(8.0 * static_cast<double>(count) + 1.0) - 1.0) / 2.0);
  while (TriangleSize(n) > count) --n;
  while (TriangleSize(n + 1) <= count) ++n;
  if (TriangleSize(n) != count)
    CUCTX_ERR << "text packed matrix" << start << " holds " << count
              << " values, which is not n(n+1)/2 for any n";
  num_rows_ = static_cast<MatrixIndexT>(n);
  data_.swap(values);
}

template class PackedMatrix<float>;
template class PackedMatrix<double>;
template void PackedMatrix<float>::CopyFromPacked(const PackedMatrix<float>&);
template void PackedMatrix<float>::CopyFromPacked(const PackedMatrix<double>&);
template void PackedMatrix<double>::CopyFromPacked(const PackedMatrix<float>&);
template void PackedMatrix<double>::CopyFromPacked(const PackedMatrix<double>&);
template void PackedMatrix<float>::CopyFromVec(const VectorBase<float>&);
template void PackedMatrix<float>::CopyFromVec(const VectorBase<double>&);
template void PackedMatrix<double>::CopyFromVec(const VectorBase<float>&);
template void PackedMatrix<double>::CopyFromVec(const VectorBase<double>&);

}  // namespace cuctx
