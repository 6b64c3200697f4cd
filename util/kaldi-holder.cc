// util/kaldi-holder.cc: the non-template parts of the holders (see util/kaldi-holder.h).
// SPDX-License-Identifier: Apache-2.0
#include "util/kaldi-holder.h"

#include "util/kaldi-io.h"
#include <cctype>

namespace cuctx {

namespace internal {

int SkipBlanks(std::istream& is) {
  int c;
  while ((c = is.peek()) == ' ' || c == '\t' || c == '\r') is.get();
  return c;
}

void ExpectNewline(std::istream& is, const char* holder) {
  const int c = SkipBlanks(is);
  if (c != '\n') {
    const std::string pos = StreamPosition(is);
    if (c == -1) CUCTX_ERR << holder << ": expected a newline, found end of stream" << pos;
    if (std::isprint(c))
      CUCTX_ERR << holder << ": expected a newline, found '" << static_cast<char>(c) << "'" << pos;
    CUCTX_ERR << holder << ": expected a newline, found byte " << c << pos;
  }
  is.get();
}

void ThrowNoRange(const char* holder) {
  CUCTX_ERR << "ranges (\"[...]\" in scp files) are not defined for " << holder;
}

bool ReadHolderHeader(std::istream& is) {
  bool binary = false;
  if (!InitKaldiInputStream(is, &binary))
    CUCTX_ERR << "a '\\0' byte not followed by 'B' where a binary header was expected"
              << StreamPosition(is);
  return binary;
}

void CheckCount(std::istream& is, int32 n, int64 min_bytes_each, const char* holder) {
  if (n < 0) CUCTX_ERR << holder << ": negative size " << n << StreamPosition(is);
  const int64 left = BytesLeftInStream(is);
  if (left >= 0 && static_cast<int64>(n) * min_bytes_each > left)
    CUCTX_ERR << holder << ": size " << n << " needs at least " << n * min_bytes_each
              << " bytes but the stream has " << left << " left" << StreamPosition(is);
}

}  // namespace internal

bool TokenHolder::Write(std::ostream& os, bool, const T& t) {
  if (!IsToken(t))
    CUCTX_ERR << "TokenHolder: \"" << t << "\" is not a token (empty or has whitespace)";
  os << t << '\n';
  return os.good();
}

bool TokenHolder::Read(std::istream& is) {
  t_.clear();
  is >> t_;
  if (is.fail()) CUCTX_ERR << "TokenHolder: no token (end of stream)";
  internal::ExpectNewline(is, "TokenHolder");
  return true;
}

bool TokenVectorHolder::Write(std::ostream& os, bool, const T& t) {
  for (size_t i = 0; i < t.size(); ++i) {
    if (!IsToken(t[i]))
      CUCTX_ERR << "TokenVectorHolder: element " << i << " \"" << t[i]
                << "\" is not a token (empty or has whitespace)";
    if (i > 0) os << ' ';
    os << t[i];
  }
  os << '\n';
  return os.good();
}

bool TokenVectorHolder::Read(std::istream& is) {
  t_.clear();
  std::string line;
  std::getline(is, line);
  if (is.fail()) CUCTX_ERR << "TokenVectorHolder: no line (end of stream)";
  SplitStringToVector(line, " \t\r\n\f\v", true, &t_);
  return true;
}

bool HtkMatrixHolder::Write(std::ostream& os, bool binary, const T& t) {
  if (!binary) CUCTX_ERR << "HTK feature files can only be written in binary (use b, not t)";
  return WriteHtk(os, t.first, t.second) && os.good();
}

bool HtkMatrixHolder::Read(std::istream& is) {
  if (!ReadHtk(is, &t_.first, &t_.second))
    CUCTX_ERR << "HTK feature data ends early or cannot be read" << StreamPosition(is);
  return true;
}

bool ExtractRangeSpecifier(const std::string& with_range, std::string* data_rxfilename,
                           std::string* range) {
  range->clear();
  *data_rxfilename = with_range;
  if (with_range.empty() || with_range.back() != ']') return true;
  const size_t open = with_range.rfind('[');
  if (open == std::string::npos || open == 0) return false;
  *data_rxfilename = with_range.substr(0, open);
  *range = with_range.substr(open + 1, with_range.size() - open - 2);
  return true;
}

namespace {

// Parses "a:b" (inclusive) or "" (all of [0, n)) into an offset and a count within [0, n).
void ParseOneRange(const std::string& part, MatrixIndexT n, const std::string& range,
                   const char* what, MatrixIndexT* offset, MatrixIndexT* count) {
  if (part.empty()) {
    *offset = 0;
    *count = n;
    return;
  }
  const size_t colon = part.find(':');
  int32 first = 0, last = 0;
  if (colon == std::string::npos || !ConvertStringToInteger(part.substr(0, colon), &first) ||
      !ConvertStringToInteger(part.substr(colon + 1), &last))
    CUCTX_ERR << "bad range \"[" << range << "]\": expected first:last " << what;
  if (first < 0 || last < first || last >= n)
    CUCTX_ERR << "range \"[" << range << "]\" is outside the " << n << " " << what
              << " of the object";
  *offset = first;
  *count = last - first + 1;
}

}  // namespace

template <typename Real>
static bool ExtractMatrixRange(const Matrix<Real>& input, const std::string& range,
                               Matrix<Real>* out) {
  const size_t comma = range.find(',');
  const std::string rows = range.substr(0, comma);
  const std::string cols = comma == std::string::npos ? "" : range.substr(comma + 1);
  MatrixIndexT ro, nr, co, nc;
  ParseOneRange(rows, input.NumRows(), range, "rows", &ro, &nr);
  ParseOneRange(cols, input.NumCols(), range, "columns", &co, &nc);
  out->Resize(nr, nc, kUndefined);
  out->CopyFromMat(input.Range(ro, nr, co, nc));
  return true;
}

template <typename Real>
static void ReadMatrixWithRange(const std::string& rxfilename, Matrix<Real>* m) {
  std::string data_rxfilename, range;
  if (!ExtractRangeSpecifier(rxfilename, &data_rxfilename, &range))
    CUCTX_ERR << "malformed range in " << PrintableRxfilename(rxfilename);
  bool binary_in = false;
  Input ki(data_rxfilename, &binary_in);
  Matrix<Real> whole;
  try {
    (range.empty() ? *m : whole).Read(ki.Stream(), binary_in);
    if (!range.empty()) ExtractObjectRange(whole, range, m);
  } catch (const Error& e) {
    std::string pipe_error;
    ki.Close(&pipe_error);
    throw Error("reading " + PrintableRxfilename(rxfilename) + ": " + e.what() +
                (pipe_error.empty() ? "" : " (" + pipe_error + ")"));
  }
  std::string error;
  if (ki.Close(&error) != 0)
    CUCTX_ERR << "reading " << PrintableRxfilename(rxfilename) << ": " << error;
}

template <>
void ReadKaldiObject(const std::string& rxfilename, Matrix<float>* m) {
  ReadMatrixWithRange(rxfilename, m);
}
template <>
void ReadKaldiObject(const std::string& rxfilename, Matrix<double>* m) {
  ReadMatrixWithRange(rxfilename, m);
}

template <>
bool ExtractObjectRange(const Matrix<float>& input, const std::string& range, Matrix<float>* out) {
  return ExtractMatrixRange(input, range, out);
}
template <>
bool ExtractObjectRange(const Matrix<double>& input, const std::string& range,
                        Matrix<double>* out) {
  return ExtractMatrixRange(input, range, out);
}

}  // namespace cuctx
