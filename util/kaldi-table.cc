// util/kaldi-table.cc: specifier parsing, scp files and the tables' error messages (see
// util/kaldi-table.h).
// SPDX-License-Identifier: Apache-2.0
#include "util/kaldi-table.h"

#include "base/text-utils.h"

#include <cctype>
#include <sstream>

namespace cuctx {

namespace {

// Splits "<options>:<rest>" into its comma-separated options; false if there is no ':' or an
// option is empty.
bool SplitSpecifier(const std::string& spec, std::vector<std::string>* options, std::string* rest) {
  if (spec.empty() || std::isspace(static_cast<unsigned char>(spec.front())) ||
      std::isspace(static_cast<unsigned char>(spec.back())))
    return false;
  const size_t colon = spec.find(':');
  if (colon == std::string::npos) return false;
  SplitStringToVector(spec.substr(0, colon), ",", false, options);
  for (const std::string& o : *options)
    if (o.empty()) return false;
  *rest = spec.substr(colon + 1);
  return true;
}

}  // namespace

WspecifierType ClassifyWspecifier(const std::string& wspecifier, std::string* archive_wxfilename,
                                  std::string* script_wxfilename, WspecifierOptions* opts) {
  if (archive_wxfilename != nullptr) archive_wxfilename->clear();
  if (script_wxfilename != nullptr) script_wxfilename->clear();
  std::vector<std::string> options;
  std::string rest;
  if (!SplitSpecifier(wspecifier, &options, &rest)) return kNoWspecifier;
  WspecifierOptions o;
  bool ark = false, scp = false;
  for (const std::string& opt : options) {
    if (opt == "ark") {
      if (ark) return kNoWspecifier;
      ark = true;
    } else if (opt == "scp") {
      if (scp) return kNoWspecifier;
      scp = true;
    } else if (opt == "b") {
      o.binary = true;
    } else if (opt == "t") {
      o.binary = false;
    } else if (opt == "f") {
      o.flush = true;
    } else if (opt == "nf") {
      o.flush = false;
    } else if (opt == "p") {
      o.permissive = true;
    } else {
      return kNoWspecifier;
    }
  }
  WspecifierType type;
  std::string ark_name, scp_name;
  if (ark && scp) {
    const size_t comma = rest.find(',');
    if (comma == std::string::npos) return kNoWspecifier;
    ark_name = rest.substr(0, comma);
    scp_name = rest.substr(comma + 1);
    type = kBothWspecifier;
  } else if (ark) {
    ark_name = rest;
    type = kArchiveWspecifier;
  } else if (scp) {
    scp_name = rest;
    type = kScriptWspecifier;
  } else {
    return kNoWspecifier;
  }
  if (archive_wxfilename != nullptr) *archive_wxfilename = ark_name;
  if (script_wxfilename != nullptr) *script_wxfilename = scp_name;
  if (opts != nullptr) *opts = o;
  return type;
}

RspecifierType ClassifyRspecifier(const std::string& rspecifier, std::string* rxfilename,
                                  RspecifierOptions* opts) {
  if (rxfilename != nullptr) rxfilename->clear();
  std::vector<std::string> options;
  std::string rest;
  if (!SplitSpecifier(rspecifier, &options, &rest)) return kNoRspecifier;
  RspecifierOptions o;
  bool ark = false, scp = false;
  for (const std::string& opt : options) {
    if (opt == "ark" || opt == "scp") {
      if (ark || scp) return kNoRspecifier;
      (opt == "ark" ? ark : scp) = true;
    } else if (opt == "b" || opt == "t") {
      // meaningless for reading; accepted as Kaldi does
    } else if (opt == "o" || opt == "no") {
      o.once = opt == "o";
    } else if (opt == "s" || opt == "ns") {
      o.sorted = opt == "s";
    } else if (opt == "cs" || opt == "ncs") {
      o.called_sorted = opt == "cs";
    } else if (opt == "p" || opt == "np") {
      o.permissive = opt == "p";
    } else if (opt == "bg") {
      o.background = true;
    } else {
      return kNoRspecifier;
    }
  }
  if (!ark && !scp) return kNoRspecifier;
  if (rxfilename != nullptr) *rxfilename = rest;
  if (opts != nullptr) *opts = o;
  return ark ? kArchiveRspecifier : kScriptRspecifier;
}

namespace {

// Reads the lines of an scp file; returns "" or why it failed.
std::string ParseScript(std::istream& is,
                        std::vector<std::pair<std::string, std::string>>* script_out) {
  script_out->clear();
  std::string line, key, rest;
  for (int64 line_number = 1; std::getline(is, line); ++line_number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    SplitStringOnFirstSpace(line, &key, &rest);
    if (key.empty() || rest.empty() || !IsToken(key)) {
      std::string shown;
      for (char c : line) shown += (static_cast<unsigned char>(c) < 0x20) ? '?' : c;
      return "bad line " + std::to_string(line_number) + ": \"" + shown +
             "\" (expected \"<key> <rxfilename>\")";
    }
    script_out->emplace_back(key, rest);
  }
  if (is.bad()) return "read error";
  return "";
}

}  // namespace

bool ReadScriptFile(std::istream& is, bool warn,
                    std::vector<std::pair<std::string, std::string>>* script_out) {
  std::string why = ParseScript(is, script_out);
  if (why.empty()) return true;
  if (warn) CUCTX_WARN << "scp file: " << why;
  return false;
}

namespace internal {

bool ReadScriptFileOrExplain(const std::string& rxfilename,
                             std::vector<std::pair<std::string, std::string>>* script_out,
                             std::string* error) {
  Input input;
  if (!input.Open(rxfilename, nullptr, error)) return false;
  std::string why = ParseScript(input.Stream(), script_out);
  std::string pipe_error;
  input.Close(&pipe_error);
  if (why.empty()) why = pipe_error;
  if (why.empty()) return true;
  *error = "scp file " + PrintableRxfilename(rxfilename) + ": " + why;
  return false;
}

}  // namespace internal

bool ReadScriptFile(const std::string& rxfilename, bool warn,
                    std::vector<std::pair<std::string, std::string>>* script_out) {
  std::string error;
  if (internal::ReadScriptFileOrExplain(rxfilename, script_out, &error)) return true;
  if (warn) CUCTX_WARN << error;
  return false;
}

bool WriteScriptFile(std::ostream& os,
                     const std::vector<std::pair<std::string, std::string>>& script) {
  for (const auto& entry : script) {
    if (!IsToken(entry.first)) {
      CUCTX_WARN << "WriteScriptFile: \"" << entry.first << "\" is not a valid key";
      return false;
    }
    if (!IsLine(entry.second) || entry.second.empty()) {
      CUCTX_WARN << "WriteScriptFile: \"" << entry.second << "\" is not a valid rxfilename";
      return false;
    }
    os << entry.first << ' ' << entry.second << '\n';
  }
  if (!os.good()) {
    CUCTX_WARN << "WriteScriptFile: write failed";
    return false;
  }
  return true;
}

bool WriteScriptFile(const std::string& wxfilename,
                     const std::vector<std::pair<std::string, std::string>>& script) {
  Output output;
  if (!output.Open(wxfilename, false, false)) return false;
  if (!WriteScriptFile(output.Stream(), script)) return false;
  return output.Close();
}

namespace internal {

std::string InvalidRspecifierMessage(const std::string& rspecifier) {
  return "invalid rspecifier " + PrintableSpecifier(rspecifier) +
         " (expected <options>:<rxfilename> with ark or scp and any of o, s, cs, p, bg, b, t, "
         "e.g. \"ark:feats.ark\", \"scp:feats.scp\", \"ark,s,cs:-\")";
}

std::string InvalidWspecifierMessage(const std::string& wspecifier) {
  return "invalid wspecifier " + PrintableSpecifier(wspecifier) +
         " (expected <options>:<wxfilename> with ark, scp or ark,scp and any of b, t, f, nf, p, "
         "e.g. \"ark:out.ark\", \"ark,t:-\", \"ark,scp:out.ark,out.scp\")";
}

void CheckKey(const std::string& table, const std::string& key) {
  if (!IsToken(key))
    CUCTX_ERR << "invalid key \"" << key << "\" for " << table
              << " (a key must be non-empty, without whitespace or control characters)";
}

std::string PrintableSpecifier(const std::string& specifier) { return "'" + specifier + "'"; }

int64 TellOrMinusOne(std::istream& is) {
  if (is.rdbuf() == nullptr) return -1;
  return static_cast<int64>(is.rdbuf()->pubseekoff(0, std::ios::cur, std::ios::in));
}

void ThrowTableError(const std::string& table, const std::string& key, int64 offset,
                     const std::string& cause) {
  std::ostringstream msg;
  msg << "error reading " << table;
  if (!key.empty()) msg << ": entry '" << key << "'";
  if (offset >= 0)
    msg << (key.empty() ? ": at byte " : " (data at byte ") << offset << (key.empty() ? "" : ")");
  msg << ": " << cause;
  CUCTX_ERR << msg.str();
}

}  // namespace internal

}  // namespace cuctx
