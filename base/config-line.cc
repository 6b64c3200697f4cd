// base/config-line.cc: parsing of Kaldi-style config lines.
// SPDX-License-Identifier: Apache-2.0
#include "base/config-line.h"

#include "base/error.h"
#include "base/text-utils.h"

namespace cuctx {
namespace {

bool IsBlank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

bool IsLetterOrUnderscore(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

}  // namespace

bool IsValidName(const std::string& name) {
  if (name.empty() || !IsLetterOrUnderscore(name[0])) return false;
  for (char c : name) {
    if (!IsLetterOrUnderscore(c) && !(c >= '0' && c <= '9') && c != '-' && c != '.') return false;
  }
  return true;
}

bool ConfigLine::ParseLine(const std::string& line) {
  whole_line_ = line;
  first_token_.clear();
  data_.clear();
  const size_t size = line.size();
  size_t pos = 0;
  while (pos < size && IsBlank(line[pos])) ++pos;
  if (pos == size) return false;
  // The first run of non-blanks is the first token unless it is already a key=value pair.
  size_t word_end = pos;
  while (word_end < size && !IsBlank(line[word_end])) ++word_end;
  std::string word = line.substr(pos, word_end - pos);
  if (word.find('=') == std::string::npos) {
    if (!IsValidName(word)) return false;
    first_token_ = word;
    pos = word_end;
  }
  while (true) {
    while (pos < size && IsBlank(line[pos])) ++pos;
    if (pos == size) return true;
    const size_t equals = line.find('=', pos);
    if (equals == std::string::npos || equals == pos) return false;
    std::string key = line.substr(pos, equals - pos);
    if (!IsValidName(key)) return false;
    const size_t value_start = equals + 1;
    if (value_start < size && (line[value_start] == '\'' || line[value_start] == '"')) {
      const size_t close = line.find(line[value_start], value_start + 1);
      if (close == std::string::npos) return false;
      data_[key] = {line.substr(value_start + 1, close - value_start - 1), false};
      pos = close + 1;
      continue;
    }
    // An unquoted value runs to the blank before the next key, i.e. before the word holding the
    // next '=', or to the end of the line; trailing blanks are not part of it.
    size_t value_end = size;
    const size_t next_equals = line.find('=', value_start);
    if (next_equals != std::string::npos) {
      const size_t blank = line.find_last_of(" \t\n\r\f\v", next_equals);
      if (blank != std::string::npos && blank >= value_start) value_end = blank;
    }
    size_t trimmed_end = value_end;
    while (trimmed_end > value_start && IsBlank(line[trimmed_end - 1])) --trimmed_end;
    data_[key] = {line.substr(value_start, trimmed_end - value_start), false};
    pos = value_end;
  }
}

template <typename Convert>
bool ConfigLine::Lookup(const std::string& key, Convert convert) {
  auto it = data_.find(key);
  if (it == data_.end() || !convert(it->second.first)) return false;
  it->second.second = true;
  return true;
}

bool ConfigLine::GetValue(const std::string& key, std::string* value) {
  CUCTX_CHECK(value != nullptr) << "ConfigLine::GetValue: null output for key " << key;
  return Lookup(key, [value](const std::string& v) {
    *value = v;
    return true;
  });
}

bool ConfigLine::GetValue(const std::string& key, BaseFloat* value) {
  CUCTX_CHECK(value != nullptr) << "ConfigLine::GetValue: null output for key " << key;
  return Lookup(key, [value](const std::string& v) { return ConvertStringToReal(v, value); });
}

bool ConfigLine::GetValue(const std::string& key, int32* value) {
  CUCTX_CHECK(value != nullptr) << "ConfigLine::GetValue: null output for key " << key;
  return Lookup(key, [value](const std::string& v) { return ConvertStringToInteger(v, value); });
}

bool ConfigLine::GetValue(const std::string& key, std::vector<int32>* value) {
  CUCTX_CHECK(value != nullptr) << "ConfigLine::GetValue: null output for key " << key;
  return Lookup(key, [value](const std::string& v) {
    std::vector<int32> parsed;
    if (v.empty() || !SplitStringToIntegers(v, ":,", false, &parsed)) return false;
    value->swap(parsed);
    return true;
  });
}

bool ConfigLine::GetValue(const std::string& key, bool* value) {
  CUCTX_CHECK(value != nullptr) << "ConfigLine::GetValue: null output for key " << key;
  return Lookup(key, [value](const std::string& v) {
    if (v == "t" || v == "T" || v == "true" || v == "True" || v == "TRUE") {
      *value = true;
    } else if (v == "f" || v == "F" || v == "false" || v == "False" || v == "FALSE") {
      *value = false;
    } else {
      return false;
    }
    return true;
  });
}

bool ConfigLine::HasUnusedValues() const {
  for (const auto& kv : data_) {
    if (!kv.second.second) return true;
  }
  return false;
}

std::string ConfigLine::UnusedValues() const {
  std::string out;
  for (const auto& kv : data_) {
    if (kv.second.second) continue;
    if (!out.empty()) out += ' ';
    out += kv.first + '=' + kv.second.first;
  }
  return out;
}

void ReadConfigLines(std::istream& is, std::vector<std::string>* lines) {
  CUCTX_CHECK(lines != nullptr) << "ReadConfigLines: the output vector is null";
  std::string line;
  while (std::getline(is, line)) {
    const size_t comment = line.find('#');
    if (comment != std::string::npos) line.erase(comment);
    Trim(&line);
    if (!line.empty()) lines->push_back(line);
  }
  CUCTX_CHECK(is.eof()) << "ReadConfigLines: read error after " << lines->size() << " lines";
}

void ParseConfigLines(const std::vector<std::string>& lines,
                      std::vector<ConfigLine>* config_lines) {
  CUCTX_CHECK(config_lines != nullptr) << "ParseConfigLines: the output vector is null";
  config_lines->resize(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    CUCTX_CHECK((*config_lines)[i].ParseLine(lines[i]))
        << "ParseConfigLines: cannot parse config line " << (i + 1) << ": '" << lines[i] << "'";
  }
}

}  // namespace cuctx
