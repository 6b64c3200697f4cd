// base/parse-options.cc: ParseOptions: option registry, command-line and config-file parsing, help.
// SPDX-License-Identifier: Apache-2.0
#include "base/parse-options.h"

#include "base/error.h"
#include "base/text-utils.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>

namespace cuctx {
namespace {

constexpr int kMaxConfigDepth = 16;
constexpr const char* kStandardSection = "Standard options";

std::string NormalizeName(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    if (c == '_')
      c = '-';
    else if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool IsOptionArg(const char* arg) { return std::strncmp(arg, "--", 2) == 0; }

// Splits "--name=value" (or "--name") into its normalised name, its trimmed value and whether
// there was an '='. The name may come back empty; SplitOptionArg rejects that.
void SplitOptionParts(const std::string& arg, std::string* name, std::string* value,
                      bool* has_value) {
  std::string body = arg.substr(2);
  size_t eq = body.find('=');
  *has_value = (eq != std::string::npos);
  *name = NormalizeName(body.substr(0, eq));
  *value = *has_value ? body.substr(eq + 1) : "";
  Trim(value);
}

void SplitOptionArg(const std::string& arg, const std::string& where, std::string* name,
                    std::string* value, bool* has_value) {
  SplitOptionParts(arg, name, value, has_value);
  if (name->empty()) CUCTX_ERR << where << "malformed option '" << arg << "' (no name)";
}

// Kaldi accepts these spellings, in any case.
bool ParseBool(const std::string& value, bool* out) {
  std::string v = NormalizeName(value);
  if (v == "true" || v == "t" || v == "1") {
    *out = true;
    return true;
  }
  if (v == "false" || v == "f" || v == "0") {
    *out = false;
    return true;
  }
  return false;
}

// Formats a value for --help and PrintConfig. `exact` asks for enough digits to read a float or
// double back unchanged; --help prefers the short form ("0.1", not "0.10000000000000001").
struct ValueFormatter {
  bool exact;
  std::string operator()(const bool* p) const { return *p ? "true" : "false"; }
  std::string operator()(const int32* p) const { return std::to_string(*p); }
  std::string operator()(const uint32* p) const { return std::to_string(*p); }
  std::string operator()(const float* p) const { return Real(*p); }
  std::string operator()(const double* p) const { return Real(*p); }
  std::string operator()(const std::string* p) const { return exact ? *p : "\"" + *p + "\""; }
  template <typename T>
  std::string Real(T x) const {
    std::ostringstream os;
    if (exact) os.precision(std::numeric_limits<T>::max_digits10);
    os << x;
    return os.str();
  }
};

// The placeholder --help shows after the option name.
struct TypeNamer {
  const char* operator()(const bool*) const { return "[=BOOL]"; }
  const char* operator()(const int32*) const { return "=INT32"; }
  const char* operator()(const uint32*) const { return "=UINT32"; }
  const char* operator()(const float*) const { return "=FLOAT"; }
  const char* operator()(const double*) const { return "=DOUBLE"; }
  const char* operator()(const std::string*) const { return "=STRING"; }
};

// Parses `value` into the variable. Returns the expectation to quote in the error message, or
// nullptr on success.
struct ValueSetter {
  const std::string& value;
  const char* operator()(bool* p) const {
    return ParseBool(value, p) ? nullptr : "expected true or false (also t/f, 1/0)";
  }
  const char* operator()(int32* p) const {
    return ConvertStringToInteger(value, p) ? nullptr
                                            : "expected an integer in [-2147483648, 2147483647]";
  }
  const char* operator()(uint32* p) const {
    return ConvertStringToInteger(value, p) ? nullptr : "expected an integer in [0, 4294967295]";
  }
  const char* operator()(float* p) const { return Real(p, "expected a finite float"); }
  const char* operator()(double* p) const { return Real(p, "expected a finite double"); }
  const char* operator()(std::string* p) const {
    *p = value;
    return nullptr;
  }
  // NaN and infinity are refused for every option (see the file comment of parse-options.h):
  // "--scale=nan" would otherwise turn a whole output into NaN without a word.
  template <typename T>
  const char* Real(T* p, const char* expected) const {
    T x;
    if (!ConvertStringToReal(value, &x) || !std::isfinite(x)) return expected;
    *p = x;
    return nullptr;
  }
};

}  // namespace

ParseOptions::ParseOptions(const char* usage)
    : usage_(usage != nullptr ? usage : ""), message_stream_(&std::cerr) {
  verbose_ = GetVerboseLevel();
  section_ = kStandardSection;
  RegisterValue("config", &config_,
                "Configuration file to read before the command-line options; may be repeated",
                true);
  RegisterValue("help", &help_, "Print this help message and stop", true);
  RegisterValue("print-args", &print_args_, "Print the command line to stderr", true);
  RegisterValue("verbose", &verbose_, "Verbosity level of log messages (CUCTX_VLOG)", true);
  section_.clear();
}

ParseOptions::ParseOptions(const std::string& prefix, OptionsItf* other)
    : prefix_(prefix), other_(other), message_stream_(&std::cerr) {
  CUCTX_CHECK(other != nullptr) << "ParseOptions: null parser to forward to";
  CUCTX_CHECK(!prefix.empty()) << "ParseOptions: empty prefix";
}

ParseOptions::~ParseOptions() = default;

template <typename T>
void ParseOptions::RegisterOrForward(const std::string& name, T* ptr, const std::string& doc) {
  if (other_ != nullptr)
    other_->Register(prefix_ + "." + name, ptr, doc);
  else
    RegisterValue(name, ptr, doc, false);
}

void ParseOptions::Register(const std::string& name, bool* ptr, const std::string& doc) {
  RegisterOrForward(name, ptr, doc);
}
void ParseOptions::Register(const std::string& name, int32* ptr, const std::string& doc) {
  RegisterOrForward(name, ptr, doc);
}
void ParseOptions::Register(const std::string& name, uint32* ptr, const std::string& doc) {
  RegisterOrForward(name, ptr, doc);
}
void ParseOptions::Register(const std::string& name, float* ptr, const std::string& doc) {
  RegisterOrForward(name, ptr, doc);
}
void ParseOptions::Register(const std::string& name, double* ptr, const std::string& doc) {
  RegisterOrForward(name, ptr, doc);
}
void ParseOptions::Register(const std::string& name, std::string* ptr, const std::string& doc) {
  RegisterOrForward(name, ptr, doc);
}

void ParseOptions::RegisterValue(const std::string& name, ValuePtr ptr, const std::string& doc,
                                 bool standard) {
  CUCTX_CHECK(std::visit([](auto* p) { return p != nullptr; }, ptr))
      << "ParseOptions::Register(\"" << name << "\"): null pointer";
  std::string key = NormalizeName(name);
  CUCTX_CHECK(IsToken(key) && key.find('=') == std::string::npos)
      << "ParseOptions::Register: invalid option name \"" << name << "\"";
  if (options_.count(key) != 0) {
    CUCTX_WARN << "option --" << key << " registered twice; keeping the first registration";
    return;
  }
  std::string default_text = std::visit(ValueFormatter{false}, ptr);
  options_.emplace(key, Option{ptr, doc, default_text, standard, section_});
}

void ParseOptions::RegisterValidator(const std::function<void()>& validate) {
  CUCTX_CHECK(validate != nullptr) << "ParseOptions::RegisterValidator: empty function";
  if (other_ != nullptr)
    other_->RegisterValidator(validate);
  else
    validators_.push_back(validate);
}

void ParseOptions::RunValidators() const {
  for (const auto& validate : validators_) validate();
}

void ParseOptions::SetHelpSection(const std::string& title) {
  CheckRoot("SetHelpSection");
  section_ = title;
  if (!title.empty() && title != kStandardSection &&
      std::find(sections_.begin(), sections_.end(), title) == sections_.end())
    sections_.push_back(title);
}

void ParseOptions::DisableOption(const std::string& name) {
  CheckRoot("DisableOption");
  std::string key = NormalizeName(name);
  CUCTX_CHECK(options_.erase(key) == 1) << "DisableOption: no option --" << key << " is registered";
}

void ParseOptions::CheckRoot(const char* what) const {
  CUCTX_CHECK(other_ == nullptr) << "ParseOptions::" << what
                                 << " called on a forwarding parser (prefix '" << prefix_ << "')";
}

void ParseOptions::SetOption(const std::string& arg, const std::string& where, int config_depth) {
  std::string name, value;
  bool has_value;
  SplitOptionArg(arg, where, &name, &value, &has_value);
  auto it = options_.find(name);
  if (it == options_.end())
    CUCTX_ERR << where << "unknown option '--" << name << "'"
              << (where.empty() ? " (see --help)" : "");
  Option& option = it->second;
  bool is_bool = std::holds_alternative<bool*>(option.ptr);
  if (is_bool && !has_value) value = "true";
  if (!is_bool && !has_value)
    CUCTX_ERR << where << "option --" << name << " needs a value (--" << name << "=...)";
  if (is_bool && has_value && value.empty())
    CUCTX_ERR << where << "option --" << name << "= has an empty value; expected true or false";

  if (option.standard && name == "config") {
    // On the command line the files were read before anything else (see Read); in a file, a
    // --config line includes the named file at that point.
    if (config_depth > 0) {
      if (value.empty()) CUCTX_ERR << where << "--config needs a file name";
      ReadConfigFileAtDepth(value, config_depth);
    }
    return;
  }
  if (option.standard && name == "help") {
    if (config_depth > 0) CUCTX_ERR << where << "--help is not allowed in a config file";
    return;  // handled by the scan at the start of Read
  }
  const char* expected = std::visit(ValueSetter{value}, option.ptr);
  if (expected != nullptr)
    CUCTX_ERR << where << "invalid value '" << value << "' for option --" << name << ": "
              << expected;
  if (option.standard && name == "verbose") SetVerboseLevel(verbose_);
}

void ParseOptions::ReadConfigFile(const std::string& filename) {
  CheckRoot("ReadConfigFile");
  ReadConfigFileAtDepth(filename, 1);
  RunValidators();
}

void ParseOptions::ReadConfigFileAtDepth(const std::string& filename, int config_depth) {
  CUCTX_CHECK(config_depth <= kMaxConfigDepth)
      << "config file '" << filename << "': --config files nested more than " << kMaxConfigDepth
      << " deep (a file that includes itself?)";
  std::ifstream is(filename);
  if (!is.is_open()) CUCTX_ERR << "cannot open config file '" << filename << "'";
  std::string line;
  for (int line_number = 1; std::getline(is, line); ++line_number) {
    size_t hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    Trim(&line);
    if (line.empty()) continue;
    std::string where = "config file '" + filename + "' line " + std::to_string(line_number) + ": ";
    if (!IsOptionArg(line.c_str()))
      CUCTX_ERR << where << "expected '--name=value', found '" << line << "'";
    SetOption(line, where, config_depth + 1);
  }
  if (is.bad()) CUCTX_ERR << "error reading config file '" << filename << "'";
}

int ParseOptions::Read(int argc, const char* const argv[]) {
  CheckRoot("Read");
  CUCTX_CHECK(argc >= 0 && (argc == 0 || argv != nullptr)) << "ParseOptions::Read: bad argc/argv";
  if (argc > 0 && argv[0] != nullptr) SetProgramName(argv[0]);
  command_line_.assign(argv, argv + argc);
  positional_args_.clear();
  help_ = false;

  // The option arguments are argv[1, first_positional); a lone "--" ends them and is skipped.
  int end_of_options = 1;
  while (end_of_options < argc && IsOptionArg(argv[end_of_options]) &&
         std::strcmp(argv[end_of_options], "--") != 0)
    ++end_of_options;
  int first_positional = end_of_options;
  if (first_positional < argc && std::strcmp(argv[first_positional], "--") == 0) ++first_positional;

  // --help wins over everything else, even a bad option elsewhere, so that it always works.
  for (int i = 1; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
    bool wants_help = (std::strcmp(argv[i], "-h") == 0 && options_.count("help") != 0);
    if (IsOptionArg(argv[i])) {
      std::string name, value;
      bool has_value;
      SplitOptionParts(argv[i], &name, &value, &has_value);
      if (name == "help" && options_.count("help") != 0) {
        if (!has_value) value = "true";
        if (!ParseBool(value, &wants_help))
          CUCTX_ERR << "invalid value '" << value << "' for option --help: expected true or false";
      }
    }
    if (wants_help) {
      help_ = true;
      PrintUsage();
      if (exit_on_help_) {
        message_stream_->flush();
        std::fflush(nullptr);
        std::exit(0);
      }
      return argc;
    }
  }

  // Config files first, so that the command line overrides them regardless of order.
  for (int i = 1; i < end_of_options; ++i) {
    std::string name, value;
    bool has_value;
    SplitOptionArg(argv[i], "", &name, &value, &has_value);
    if (name != "config" || options_.count("config") == 0) continue;
    if (!has_value || value.empty()) CUCTX_ERR << "--config needs a file name (--config=FILE)";
    ReadConfigFileAtDepth(value, 1);
  }
  for (int i = 1; i < end_of_options; ++i) SetOption(argv[i], "", 0);
  positional_args_.assign(argv + first_positional, argv + argc);
  RunValidators();

  if (print_args_) {
    std::ostringstream line;
    for (int i = 0; i < argc; ++i) line << (i > 0 ? " " : "") << Escape(argv[i]);
    line << "\n";
    *message_stream_ << line.str() << std::flush;
  }
  return first_positional;
}

bool ParseOptions::ReadAndCheckArgs(int argc, const char* const argv[], int min_args, int max_args,
                                    int* exit_status) {
  CUCTX_CHECK(exit_status != nullptr);
  CUCTX_CHECK(min_args >= 0 && (max_args < 0 || max_args >= min_args))
      << "ReadAndCheckArgs: bad range [" << min_args << ", " << max_args << "]";
  *exit_status = 0;
  Read(argc, argv);
  if (help_) return false;
  int n = NumArgs();
  if (n >= min_args && (max_args < 0 || n <= max_args)) return true;
  PrintUsage();
  std::ostringstream msg;
  msg << GetProgramName() << ": expected ";
  if (max_args == min_args)
    msg << min_args;
  else if (max_args < 0)
    msg << "at least " << min_args;
  else
    msg << min_args << " to " << max_args;
  msg << " positional argument" << (max_args == 1 && min_args == 1 ? "" : "s") << ", got " << n
      << "\n";
  *message_stream_ << msg.str() << std::flush;
  *exit_status = 2;
  return false;
}

std::string ParseOptions::GetArg(int i) const {
  CUCTX_CHECK(i >= 1 && i <= NumArgs()) << "GetArg(" << i << "): positional arguments are "
                                        << "numbered 1 to " << NumArgs();
  return positional_args_[i - 1];
}

std::string ParseOptions::GetOptArg(int i) const {
  CUCTX_CHECK(i >= 1) << "GetOptArg(" << i << "): positional arguments are numbered from 1";
  return i <= NumArgs() ? positional_args_[i - 1] : std::string();
}

void ParseOptions::PrintUsage(bool print_command_line) const {
  // Name column wide enough for the longest "--name=TYPE", but capped so one long name does not
  // push every help text to the right edge; longer entries put their text on the next line.
  const size_t kMaxWidth = 32;
  size_t width = 0;
  for (const auto& [name, option] : options_) {
    size_t left = name.size() + 4 + std::strlen(std::visit(TypeNamer(), option.ptr));
    if (left <= kMaxWidth) width = std::max(width, left);
  }

  std::ostringstream out;
  out << usage_;
  if (!usage_.empty() && usage_.back() != '\n') out << "\n";
  std::vector<std::string> sections = {""};
  sections.insert(sections.end(), sections_.begin(), sections_.end());
  sections.push_back(kStandardSection);
  for (const std::string& section : sections) {
    bool any = false;
    for (const auto& [name, option] : options_) {
      if (option.section != section) continue;
      if (!any) out << "\n" << (section.empty() ? "Options" : section) << ":\n";
      any = true;
      std::string left = "  --" + name + std::visit(TypeNamer(), option.ptr);
      out << left;
      if (left.size() > width) {
        out << "\n" << std::string(width + 2, ' ');
      } else {
        out << std::string(width + 2 - left.size(), ' ');
      }
      out << option.doc << (option.doc.empty() ? "" : " ") << "(default: " << option.default_text
          << ")\n";
    }
  }
  if (print_command_line && !command_line_.empty()) {
    out << "\nCommand line was:";
    for (const std::string& arg : command_line_) out << " " << Escape(arg);
    out << "\n";
  }
  *message_stream_ << out.str() << std::flush;
}

void ParseOptions::PrintConfig(std::ostream& os) const {
  for (const auto& [name, option] : options_) {
    if (option.standard) continue;
    os << "--" << name << "=" << std::visit(ValueFormatter{true}, option.ptr) << "\n";
  }
}

void ParseOptions::SetMessageStream(std::ostream* os) {
  CUCTX_CHECK(os != nullptr) << "ParseOptions::SetMessageStream: null stream";
  message_stream_ = os;
}

std::string ParseOptions::Escape(const std::string& str) {
  static const char kSafe[] = "-_./:=,+@%";
  bool safe = !str.empty();
  for (char c : str) {
    bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && (c == '\0' || std::strchr(kSafe, c) == nullptr)) safe = false;
  }
  if (safe) return str;
  std::string out = "'";
  for (char c : str) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

}  // namespace cuctx
