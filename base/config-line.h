// base/config-line.h: Kaldi's config-file lines: ConfigLine ("first-token key=value ..."),
// ReadConfigLines, ParseConfigLines and IsValidName.
// SPDX-License-Identifier: Apache-2.0
//
// The format, as Kaldi's nnet3 config files use it:
//   component-node name=affine1 input=Append(x, Offset(x, -1)) dim='a b' flag=t  # comment
// An optional first token (absent when the line starts with key=value), then key=value pairs.
// A key starts with a letter or '_' and holds letters, digits, '-', '_' and '.'. A value ends
// where the next key begins, so it may contain spaces (input=Append(x, y)) but then no '='; a
// value quoted with '...' or "..." may contain anything but its quote. ReadConfigLines strips
// comments ('#' to the end of the line) and blank lines.
//
// A ConfigLine is a plain value (copyable); it is not thread-safe to use one object from two
// threads. The free functions are reentrant.
#ifndef CUCTX_BASE_CONFIG_LINE_H_
#define CUCTX_BASE_CONFIG_LINE_H_

#include "base/types.h"

#include <istream>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace cuctx {

class ConfigLine {
 public:
  // Parses one line (without comments). Returns false, leaving the object holding whatever was
  // parsed before the failure, on: an empty or blank line, a first token or key that is not a
  // valid name, a '=' with no key before it, or an unterminated quote. Replaces earlier contents.
  bool ParseLine(const std::string& line);

  // Each returns true and sets *value if `key` is present and its value converts to the type, and
  // marks the pair as used; otherwise returns false and leaves *value alone. A bool is "t", "T",
  // "true", "True", "TRUE" or their "f"/"false" forms; an int32 vector is separated by ':' or ','.
  // A value may be read any number of times.
  bool GetValue(const std::string& key, std::string* value);
  bool GetValue(const std::string& key, BaseFloat* value);
  bool GetValue(const std::string& key, int32* value);
  bool GetValue(const std::string& key, std::vector<int32>* value);
  bool GetValue(const std::string& key, bool* value);

  // True if some pair has not been read by a successful GetValue.
  bool HasUnusedValues() const;
  // The unread pairs as "key=value key2=value2", in key order; "" if none.
  std::string UnusedValues() const;

  // The first token ("" if the line starts with key=value) and the line as given to ParseLine.
  const std::string& FirstToken() const { return first_token_; }
  const std::string WholeLine() const { return whole_line_; }

 private:
  // Finds `key` and marks it used on success of `convert`; false if absent or conversion fails.
  template <typename Convert>
  bool Lookup(const std::string& key, Convert convert);

  std::string whole_line_;
  std::string first_token_;
  // key -> (value, used?)
  std::map<std::string, std::pair<std::string, bool> > data_;
};

// Reads `is` to its end and *appends* its lines to *lines, each with any '#' comment removed and
// surrounding whitespace trimmed; lines left empty are dropped.
void ReadConfigLines(std::istream& is, std::vector<std::string>* lines);

// Parses each line into *config_lines (replaced). Throws cuctx::Error naming the line (1-based)
// and its text if one does not parse.
void ParseConfigLines(const std::vector<std::string>& lines, std::vector<ConfigLine>* config_lines);

// True if `name` is non-empty, starts with A-Z, a-z or '_', and has only those, digits, '-' and
// '.' after that (a valid nnet3 node or component name, and a valid config key).
bool IsValidName(const std::string& name);

}  // namespace cuctx

#endif  // CUCTX_BASE_CONFIG_LINE_H_
