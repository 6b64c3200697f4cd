// base/parse-options.h: ParseOptions, the command-line and config-file parser of every cuctx tool.
// SPDX-License-Identifier: Apache-2.0
//
// Typical use in a tool:
//
//   int main(int argc, char* argv[]) {
//     try {
//       ParseOptions po("Copies a matrix.\nUsage: copy-mat [options] <in> <out>\n");
//       int32 rows = 10;
//       bool binary = true;
//       po.Register("rows", &rows, "Number of rows");
//       po.Register("binary", &binary, "Write in binary mode");
//       int status;                      // --help prints the usage and exits 0 (as in Kaldi)
//       if (!po.ReadAndCheckArgs(argc, argv, 2, 2, &status)) return status;  // wrong count: 2
//       std::string in = po.GetArg(1), out = po.GetArg(2);
//       ...
//     } catch (const std::exception& e) {                 // unknown option, malformed value, ...
//       std::cerr << e.what() << "\n";
//       return 1;
//     }
//   }
//
// Command-line syntax (as in Kaldi):
//   --name=value     sets an option. Names are case-insensitive and '_' equals '-' (both in
//                    Register and on the command line), so --max_iters=3 sets "max-iters". The
//                    value is trimmed of surrounding whitespace.
//   --name           for a bool option only: sets it to true. A non-bool option needs "=value".
//   --name=true      bool values: true/false, t/f, 1/0, in any case. "--name=" is an error.
//   --config=FILE    reads FILE first (see ReadConfigFile); may be repeated, files are read in
//                    order, and options given on the command line override them wherever they
//                    appear.
//   --help, -h       prints the usage and the options with their defaults, then exits the
//                    process with status 0 (as Kaldi's Read does); see NOTE ON --help.
//   --print-args     (default true, as in Kaldi) echoes the command line to the message stream.
//   --verbose=N      sets the process-wide verbosity (SetVerboseLevel).
//   --               ends the options; everything after it is positional.
// Options come first: the first argument that does not start with "--" (a lone "-" included)
// begins the positional arguments, and every later argument is positional even if it looks like
// an option (as in Kaldi). --help and -h are honoured anywhere before a lone "--".
//
// NOTE ON --help: as in Kaldi, Read() prints the help and then calls std::exit(0), so a ported
// Kaldi main() behaves as it did. A program that must not be ended inside Read() (it owns
// resources to release, or it is a test) calls SetExitOnHelp(false) first: Read() then prints
// the help, applies nothing and returns, HelpRequested() says so, and the program returns 0
// itself (cuctx's bin/ tools do this through cutool's RunTool). Exiting after --help is the only
// exit() in this file; nothing here calls abort().
//
// Errors: an unknown option, a malformed value ("--num=abc", "--flag=maybe", an int32 that
// overflows, a negative uint32, "--x=1.5x" for a float), a non-finite float or double value
// ("--scale=nan", "--scale=inf": no option takes one; a program that needs "no limit" registers a
// large finite default or a string), a bad config line, a failed validator (RegisterValidator)
// and an out-of-range GetArg() throw cuctx::Error whose message names the option (or file and
// line) and the bad value. Misuse of the API (null pointer, empty or malformed name) also throws
// cuctx::Error.
//
// --help lists the caller's options under "Options:", then each section named with
// SetHelpSection() (e.g. the --cuda-* device options) in the order the sections were begun, then
// the standard options.
//
// Thread-safety: a ParseOptions object belongs to one thread. Read() also sets two process-wide
// values, the program name (from argv[0]) and, with --verbose, the verbosity.
#ifndef CUCTX_BASE_PARSE_OPTIONS_H_
#define CUCTX_BASE_PARSE_OPTIONS_H_

#include "base/options-itf.h"
#include "base/types.h"

#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

namespace cuctx {

// Parses "--name=value" options and positional arguments into registered variables.
//
// Owns only its bookkeeping: the registered variables belong to the caller and must outlive the
// object (they are written by Read() and ReadConfigFile()). The value a variable holds when it is
// registered is its default, shown by --help. Besides the caller's options every root parser
// registers the standard options config, help, print-args and verbose.
//
// A ParseOptions built with a prefix (the second constructor) is only a forwarding adaptor: it
// registers nothing itself, and Read(), ReadConfigFile() and DisableOption() on it throw.
class ParseOptions : public OptionsItf {
 public:
  // A root parser. `usage` is printed at the top of --help and PrintUsage(); it should say what
  // the program does and show its positional arguments.
  explicit ParseOptions(const char* usage);

  // A forwarding adaptor: Register("name", ...) on it calls
  // other->Register(prefix + ".name", ...). Used to give one options struct several instances,
  // e.g. --enc.beam and --dec.beam. Prefixes nest when `other` is itself a forwarder.
  // `other` must outlive this object. Throws if `other` is null or `prefix` is empty.
  ParseOptions(const std::string& prefix, OptionsItf* other);

  ParseOptions(const ParseOptions&) = delete;
  ParseOptions& operator=(const ParseOptions&) = delete;
  ~ParseOptions() override;

  // Registers *ptr under `name` with help text `doc`; *ptr now is the default. The name is
  // normalised (lower case, '_' -> '-'); it must be non-empty and free of '=' and whitespace, and
  // ptr must be non-null (else cuctx::Error). Registering a normalised name twice keeps the first
  // registration and logs a warning (as in Kaldi), which also covers the standard option names.
  void Register(const std::string& name, bool* ptr, const std::string& doc) override;
  void Register(const std::string& name, int32* ptr, const std::string& doc) override;
  void Register(const std::string& name, uint32* ptr, const std::string& doc) override;
  void Register(const std::string& name, float* ptr, const std::string& doc) override;
  void Register(const std::string& name, double* ptr, const std::string& doc) override;
  void Register(const std::string& name, std::string* ptr, const std::string& doc) override;

  // Forwarding parsers pass the validator on to their target.
  void RegisterValidator(const std::function<void()>& validate) override;

  // Options registered after this call are listed in --help under their own heading `title`
  // (e.g. "Device options"), after the main "Options:" block; "" goes back to the main block.
  // Registering into a title used before adds to that section; "Standard options" is the block of
  // --config, --help, --print-args and --verbose. Throws on a forwarding parser.
  void SetHelpSection(const std::string& title);

  // Whether Read() ends the process with std::exit(0) after printing --help (default true, as in
  // Kaldi). With false, Read() returns and HelpRequested() is true. See NOTE ON --help.
  void SetExitOnHelp(bool exit_on_help) { exit_on_help_ = exit_on_help; }

  // Removes a registered option before Read(), so that using it becomes an "unknown option" error
  // and --help no longer lists it. Throws if no such option is registered.
  void DisableOption(const std::string& name);

  // Parses the command line: reads the --config files, applies the options, collects the
  // positional arguments and, if --print-args is true, echoes the command line. argv[0] becomes
  // the program name (SetProgramName). With --help or -h it prints the usage instead, applies
  // nothing (no config file is read), collects no positional arguments and returns argc.
  // Otherwise returns the index in argv of the first positional argument (argc if none).
  // Each call replaces the positional arguments of the previous one.
  // Throws cuctx::Error on any bad option or config file; variables set before the error keep
  // their new values.
  int Read(int argc, const char* const argv[]);

  // True if the last Read() saw --help or -h (and printed the usage).
  bool HelpRequested() const { return help_; }

  // Tool helper: Read(), then check that NumArgs() is within [min_args, max_args] (max_args < 0:
  // no upper bound). Returns true when the tool should go on. Returns false when it should return
  // *exit_status from main at once: 0 after --help (with SetExitOnHelp(false); otherwise --help
  // has exited already), 2 after printing the usage and a line "expected ... positional
  // arguments, got N". Bad options still throw cuctx::Error.
  bool ReadAndCheckArgs(int argc, const char* const argv[], int min_args, int max_args,
                        int* exit_status);

  // Reads options from a file, one "--name=value" (or bare "--flag") per line. Everything after
  // a '#' is a comment, surrounding whitespace is ignored and blank lines are skipped. A
  // "--config=other" line reads that file in turn (nesting depth at most 16). Throws cuctx::Error
  // naming the file and the 1-based line number on a line that does not start with "--", an
  // unknown option, a malformed value or "--help"; and naming the file if it cannot be opened.
  // Runs the validators afterwards, as Read() does.
  void ReadConfigFile(const std::string& filename);

  // Positional arguments, counted from 1 as in Kaldi (GetArg(1) is the first after the options).
  int NumArgs() const { return static_cast<int>(positional_args_.size()); }
  // Throws cuctx::Error unless 1 <= i <= NumArgs().
  std::string GetArg(int i) const;
  // Like GetArg, but returns "" for i > NumArgs() (optional trailing arguments); throws if i < 1.
  std::string GetOptArg(int i) const;

  // Writes the usage text, the registered options and the standard options, each with its type,
  // help text and default, to the message stream. With print_command_line, also the command line
  // of the last Read().
  void PrintUsage(bool print_command_line = false) const;

  // Writes the current values of the caller's options (not the standard ones) as "--name=value"
  // lines, sorted by name; the output can be read back with ReadConfigFile unless a string value
  // has leading/trailing whitespace or a '#'.
  void PrintConfig(std::ostream& os) const;

  // Where --help, --print-args, PrintUsage() and the ReadAndCheckArgs() message go: std::cerr
  // unless set (the stream is not owned and must outlive its use).
  void SetMessageStream(std::ostream* os);

  // Quotes `str` for a POSIX shell when needed: returned as is if non-empty and made only of
  // letters, digits and "-_./:=,+@%"; otherwise in single quotes, with each ' written as '\''.
  static std::string Escape(const std::string& str);

 private:
  using ValuePtr = std::variant<bool*, int32*, uint32*, float*, double*, std::string*>;
  struct Option {
    ValuePtr ptr;
    std::string doc;
    std::string default_text;  // formatted at registration, as --help shows it
    bool standard;             // one of config/help/print-args/verbose
    std::string section;       // the --help heading it is listed under ("" = "Options:")
  };

  template <typename T>
  void RegisterOrForward(const std::string& name, T* ptr, const std::string& doc);
  void RegisterValue(const std::string& name, ValuePtr ptr, const std::string& doc, bool standard);
  // Applies one "--name[=value]" argument; `where` prefixes error messages ("" on the command
  // line, "config file 'f' line 3: " in a config file).
  void SetOption(const std::string& arg, const std::string& where, int config_depth);
  void ReadConfigFileAtDepth(const std::string& filename, int config_depth);
  void CheckRoot(const char* what) const;
  void RunValidators() const;

  std::string usage_;
  std::string prefix_;           // non-empty only in a forwarding adaptor
  OptionsItf* other_ = nullptr;  // the forwarding target, or null in a root parser
  std::map<std::string, Option> options_;
  std::vector<std::string> positional_args_;
  std::vector<std::string> command_line_;
  std::ostream* message_stream_;
  std::vector<std::function<void()>> validators_;
  std::string section_;                // where Register() puts options now (SetHelpSection)
  std::vector<std::string> sections_;  // the named --help sections, in the order begun
  bool exit_on_help_ = true;

  // The standard options.
  std::string config_;
  bool help_ = false;
  bool print_args_ = true;
  int32 verbose_ = 0;
};

}  // namespace cuctx

#endif  // CUCTX_BASE_PARSE_OPTIONS_H_
