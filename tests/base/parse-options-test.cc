// tests/base/parse-options-test.cc: every command-line form, config files, help, errors, prefixes.
// SPDX-License-Identifier: Apache-2.0
#include "base/parse-options.h"

#include "base/error.h"
#include "tests/testing.h"

#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace cuctx {
namespace {

// Warnings seen by the capturing log handler (a plain function pointer cannot capture state).
std::vector<std::string>* g_warnings = nullptr;

void CaptureLog(const LogMessageEnvelope& envelope, const char* message) {
  if (g_warnings != nullptr && envelope.severity == kLogWarning) g_warnings->push_back(message);
}

// A config file in the temporary directory, removed when the object goes away.
class TempFile {
 public:
  explicit TempFile(const std::string& contents) {
    const char* dir = std::getenv("TMPDIR");
    std::string pattern = std::string(dir != nullptr ? dir : "/tmp") + "/cuctx-po-XXXXXX";
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    int fd = mkstemp(name.data());
    EXPECT_GE(fd, 0) << "mkstemp failed";
    if (fd >= 0) close(fd);
    path_ = name.data();
    std::ofstream(path_) << contents;
  }
  ~TempFile() { unlink(path_.c_str()); }
  const std::string& Path() const { return path_; }

 private:
  std::string path_;
};

class ParseOptionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_warnings = &warnings_;
    old_handler_ = SetLogHandler(CaptureLog);
    old_program_ = GetProgramName();
    old_verbose_ = GetVerboseLevel();
  }
  void TearDown() override {
    SetLogHandler(old_handler_);
    g_warnings = nullptr;
    SetProgramName(old_program_.c_str());
    SetVerboseLevel(old_verbose_);
  }

  // Registers the usual set of options on `po` and sends its messages to messages_.
  void RegisterAll(ParseOptions* po) {
    po->SetMessageStream(&messages_);
    po->SetExitOnHelp(false);
    po->Register("flag", &flag_, "A boolean flag");
    po->Register("num", &num_, "An int32");
    po->Register("count", &count_, "A uint32");
    po->Register("scale", &scale_, "A float");
    po->Register("weight", &weight_, "A double");
    po->Register("name", &name_, "A string");
  }

  // Runs Read() on {"prog", args...}.
  int Read(ParseOptions* po, std::vector<std::string> args) {
    args.insert(args.begin(), "prog");
    std::vector<const char*> argv;
    for (const std::string& a : args) argv.push_back(a.c_str());
    argv.push_back(nullptr);
    return po->Read(static_cast<int>(args.size()), argv.data());
  }

  bool flag_ = false;
  int32 num_ = 5;
  uint32 count_ = 7;
  float scale_ = 0.5f;
  double weight_ = 0.25;
  std::string name_ = "none";
  std::ostringstream messages_;
  std::vector<std::string> warnings_;

 private:
  LogHandler old_handler_ = nullptr;
  std::string old_program_;
  int old_verbose_ = 0;
};

TEST_F(ParseOptionsTest, ParsesEqualsForm) {
  ParseOptions po("usage");
  RegisterAll(&po);
  Read(&po, {"--flag=true", "--num=-12", "--count=4294967295", "--scale=1.5", "--weight=-2e-3",
             "--name=hello", "--print-args=false"});
  EXPECT_TRUE(flag_);
  EXPECT_EQ(num_, -12);
  EXPECT_EQ(count_, 4294967295u);
  EXPECT_EQ(scale_, 1.5f);
  EXPECT_EQ(weight_, -2e-3);
  EXPECT_EQ(name_, "hello");
  EXPECT_EQ(po.NumArgs(), 0);
  EXPECT_FALSE(po.HelpRequested());
}

TEST_F(ParseOptionsTest, LeavesUnsetOptionsAtDefaults) {
  ParseOptions po("usage");
  RegisterAll(&po);
  Read(&po, {"--num=1"});
  EXPECT_FALSE(flag_);
  EXPECT_EQ(count_, 7u);
  EXPECT_EQ(name_, "none");
}

TEST_F(ParseOptionsTest, ParsesBareBoolFlag) {
  ParseOptions po("usage");
  RegisterAll(&po);
  Read(&po, {"--flag"});
  EXPECT_TRUE(flag_);
}

TEST_F(ParseOptionsTest, ParsesEveryBoolSpelling) {
  const std::vector<std::pair<std::string, bool>> cases = {
      {"true", true},   {"TRUE", true},   {"t", true},  {"T", true},  {"1", true},
      {"false", false}, {"False", false}, {"f", false}, {"F", false}, {"0", false}};
  for (const auto& [text, expected] : cases) {
    ParseOptions po("usage");
    RegisterAll(&po);
    flag_ = !expected;
    Read(&po, {"--flag=" + text});
    EXPECT_EQ(flag_, expected) << text;
  }
}

TEST_F(ParseOptionsTest, NormalisesUnderscoresAndCase) {
  ParseOptions po("usage");
  po.SetMessageStream(&messages_);
  po.SetExitOnHelp(false);
  int32 iters = 0, other = 0;
  po.Register("max_iters", &iters, "");
  po.Register("Other-Opt", &other, "");
  Read(&po, {"--max-iters=3", "--other_opt=4"});
  EXPECT_EQ(iters, 3);
  EXPECT_EQ(other, 4);
  Read(&po, {"--MAX_ITERS=6"});
  EXPECT_EQ(iters, 6);
}

TEST_F(ParseOptionsTest, TrimsValuesAndKeepsInnerEqualsSigns) {
  ParseOptions po("usage");
  RegisterAll(&po);
  Read(&po, {"--num= 42 ", "--name=a=b c"});
  EXPECT_EQ(num_, 42);
  EXPECT_EQ(name_, "a=b c");
  Read(&po, {"--name="});
  EXPECT_EQ(name_, "");
}

TEST_F(ParseOptionsTest, LaterOptionWins) {
  ParseOptions po("usage");
  RegisterAll(&po);
  Read(&po, {"--num=1", "--num=2"});
  EXPECT_EQ(num_, 2);
}

TEST_F(ParseOptionsTest, RejectsUnknownOption) {
  ParseOptions po("usage");
  RegisterAll(&po);
  std::string what = test::ErrorText([&] { Read(&po, {"--num=1", "--nope=3"}); });
  EXPECT_TRUE(test::Contains(what, "--nope"));
  EXPECT_TRUE(test::Contains(what, "unknown option"));
}

TEST_F(ParseOptionsTest, RejectsMalformedValuesNamingOptionAndValue) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"num", "abc"},   {"num", "2147483648"}, {"num", "-2147483649"},  {"num", "1.0"},
      {"num", ""},      {"count", "-1"},       {"count", "4294967296"}, {"flag", "maybe"},
      {"flag", "yes"},  {"scale", "1.5x"},     {"scale", "1e50"},       {"scale", ""},
      {"weight", "0x"}, {"weight", "1e400"},   {"weight", "two"}};
  for (const auto& [option, value] : cases) {
    ParseOptions po("usage");
    RegisterAll(&po);
    std::string what = test::ErrorText([&] { Read(&po, {"--" + option + "=" + value}); });
    EXPECT_TRUE(test::Contains(what, "--" + option));
    EXPECT_TRUE(test::Contains(what, "'" + value + "'"));
  }
}

TEST_F(ParseOptionsTest, RejectsEmptyBoolValue) {
  ParseOptions po("usage");
  RegisterAll(&po);
  EXPECT_TRUE(test::ThrowsWith([&] { Read(&po, {"--flag="}); }, "--flag"));
}

TEST_F(ParseOptionsTest, RejectsNonBoolOptionWithoutValue) {
  ParseOptions po("usage");
  RegisterAll(&po);
  for (const char* option : {"num", "count", "scale", "weight", "name"}) {
    std::string what = test::ErrorText([&] { Read(&po, {std::string("--") + option}); });
    EXPECT_TRUE(test::Contains(what, std::string("--") + option));
    EXPECT_TRUE(test::Contains(what, "needs a value"));
  }
}

TEST_F(ParseOptionsTest, RejectsOptionWithoutName) {
  ParseOptions po("usage");
  RegisterAll(&po);
  EXPECT_TRUE(test::ThrowsWith([&] { Read(&po, {"--=3"}); }, "--=3"));
}

TEST_F(ParseOptionsTest, CollectsPositionalArgumentsFromOne) {
  ParseOptions po("usage");
  RegisterAll(&po);
  int first = Read(&po, {"--num=3", "in.ark", "out.ark"});
  EXPECT_EQ(first, 2);
  ASSERT_EQ(po.NumArgs(), 2);
  EXPECT_EQ(po.GetArg(1), "in.ark");
  EXPECT_EQ(po.GetArg(2), "out.ark");
  EXPECT_EQ(po.GetOptArg(2), "out.ark");
  EXPECT_EQ(po.GetOptArg(3), "");
  EXPECT_EQ(num_, 3);
}

TEST_F(ParseOptionsTest, GetArgOutOfRangeIsError) {
  ParseOptions po("usage");
  RegisterAll(&po);
  Read(&po, {"a"});
  EXPECT_TRUE(test::ThrowsWith([&] { po.GetArg(0); }, "GetArg(0)"));
  EXPECT_TRUE(test::ThrowsWith([&] { po.GetArg(2); }, "GetArg(2)"));
  EXPECT_THROW(po.GetOptArg(0), Error);
}

TEST_F(ParseOptionsTest, OptionsAfterFirstPositionalArePositional) {
  ParseOptions po("usage");
  RegisterAll(&po);
  int first = Read(&po, {"--num=1", "a", "--num=2", "--nope"});
  EXPECT_EQ(first, 2);
  EXPECT_EQ(num_, 1);
  ASSERT_EQ(po.NumArgs(), 3);
  EXPECT_EQ(po.GetArg(2), "--num=2");
  EXPECT_EQ(po.GetArg(3), "--nope");
}

TEST_F(ParseOptionsTest, DoubleDashEndsOptions) {
  ParseOptions po("usage");
  RegisterAll(&po);
  int first = Read(&po, {"--num=1", "--", "--num=2", "--", "x"});
  EXPECT_EQ(first, 3);
  EXPECT_EQ(num_, 1);
  ASSERT_EQ(po.NumArgs(), 3);
  EXPECT_EQ(po.GetArg(1), "--num=2");
  EXPECT_EQ(po.GetArg(2), "--");
  EXPECT_EQ(po.GetArg(3), "x");
}

TEST_F(ParseOptionsTest, SingleDashArgumentsArePositional) {
  ParseOptions po("usage");
  RegisterAll(&po);
  Read(&po, {"-", "-x"});
  ASSERT_EQ(po.NumArgs(), 2);
  EXPECT_EQ(po.GetArg(1), "-");
  EXPECT_EQ(po.GetArg(2), "-x");
}

TEST_F(ParseOptionsTest, ReadReplacesPreviousPositionals) {
  ParseOptions po("usage");
  RegisterAll(&po);
  Read(&po, {"a", "b"});
  Read(&po, {"c"});
  ASSERT_EQ(po.NumArgs(), 1);
  EXPECT_EQ(po.GetArg(1), "c");
}

TEST_F(ParseOptionsTest, HelpPrintsUsageOptionsAndDefaults) {
  ParseOptions po("Does things.\nUsage: prog [options] <in>\n");
  RegisterAll(&po);
  int ret = Read(&po, {"--num=99", "--help", "file"});
  EXPECT_EQ(ret, 4);
  EXPECT_TRUE(po.HelpRequested());
  EXPECT_EQ(num_, 5) << "options are not applied after --help";
  EXPECT_EQ(po.NumArgs(), 0);
  std::string help = messages_.str();
  EXPECT_TRUE(test::Contains(help, "Does things.\nUsage: prog [options] <in>\n"));
  EXPECT_TRUE(test::Contains(help, "Options:"));
  EXPECT_TRUE(test::Contains(help, "--flag[=BOOL]"));
  EXPECT_TRUE(test::Contains(help, "A boolean flag (default: false)"));
  EXPECT_TRUE(test::Contains(help, "--num=INT32"));
  EXPECT_TRUE(test::Contains(help, "An int32 (default: 5)"));
  EXPECT_TRUE(test::Contains(help, "--count=UINT32"));
  EXPECT_TRUE(test::Contains(help, "(default: 7)"));
  EXPECT_TRUE(test::Contains(help, "--scale=FLOAT"));
  EXPECT_TRUE(test::Contains(help, "(default: 0.5)"));
  EXPECT_TRUE(test::Contains(help, "--weight=DOUBLE"));
  EXPECT_TRUE(test::Contains(help, "(default: 0.25)"));
  EXPECT_TRUE(test::Contains(help, "--name=STRING"));
  EXPECT_TRUE(test::Contains(help, "(default: \"none\")"));
  EXPECT_TRUE(test::Contains(help, "Standard options:"));
  EXPECT_TRUE(test::Contains(help, "--config=STRING"));
  EXPECT_TRUE(test::Contains(help, "--print-args[=BOOL]"));
  EXPECT_TRUE(test::Contains(help, "(default: true)"));
  EXPECT_TRUE(test::Contains(help, "--verbose=INT32"));
  EXPECT_LT(help.find("Options:"), help.find("Standard options:"));
}

TEST_F(ParseOptionsTest, HelpShowsRegistrationTimeDefaults) {
  ParseOptions po("usage");
  RegisterAll(&po);
  num_ = 123;  // changed after registration: the documented default stays 5
  Read(&po, {"--help"});
  EXPECT_TRUE(test::Contains(messages_.str(), "An int32 (default: 5)"));
}

TEST_F(ParseOptionsTest, ShortHelpFlag) {
  ParseOptions po("usage");
  RegisterAll(&po);
  Read(&po, {"-h"});
  EXPECT_TRUE(po.HelpRequested());
  EXPECT_TRUE(test::Contains(messages_.str(), "Options:"));
}

TEST_F(ParseOptionsTest, HelpWinsOverBadOptionsAndMissingConfig) {
  ParseOptions po("usage");
  RegisterAll(&po);
  EXPECT_NO_THROW(
      Read(&po, {"--bogus", "--=3", "--num=abc", "--config=/nonexistent/x.conf", "--help"}));
  EXPECT_TRUE(po.HelpRequested());
}

TEST_F(ParseOptionsTest, HelpAfterDoubleDashIsPositional) {
  ParseOptions po("usage");
  RegisterAll(&po);
  Read(&po, {"--", "--help", "-h"});
  EXPECT_FALSE(po.HelpRequested());
  EXPECT_EQ(po.NumArgs(), 2);
}

TEST_F(ParseOptionsTest, HelpFalseIsNoHelp) {
  ParseOptions po("usage");
  RegisterAll(&po);
  Read(&po, {"--help=false", "--num=2"});
  EXPECT_FALSE(po.HelpRequested());
  EXPECT_EQ(num_, 2);
  EXPECT_THROW(Read(&po, {"--help=maybe"}), Error);
}

TEST_F(ParseOptionsTest, HelpRequestedResetsOnNextRead) {
  ParseOptions po("usage");
  RegisterAll(&po);
  Read(&po, {"--help"});
  EXPECT_TRUE(po.HelpRequested());
  Read(&po, {"x"});
  EXPECT_FALSE(po.HelpRequested());
}

TEST_F(ParseOptionsTest, PrintArgsEchoesCommandLineByDefault) {
  ParseOptions po("usage");
  RegisterAll(&po);
  Read(&po, {"--num=3", "a b", "it's", ""});
  EXPECT_EQ(messages_.str(), "prog --num=3 'a b' 'it'\\''s' ''\n");
}

TEST_F(ParseOptionsTest, PrintArgsFalseIsSilent) {
  ParseOptions po("usage");
  RegisterAll(&po);
  Read(&po, {"--print-args=false", "x"});
  EXPECT_EQ(messages_.str(), "");
}

TEST_F(ParseOptionsTest, VerboseSetsGlobalLevel) {
  ParseOptions po("usage");
  RegisterAll(&po);
  Read(&po, {"--verbose=3"});
  EXPECT_EQ(GetVerboseLevel(), 3);
  EXPECT_THROW(Read(&po, {"--verbose=high"}), Error);
}

TEST_F(ParseOptionsTest, SetsProgramNameFromArgvZero) {
  ParseOptions po("usage");
  po.SetMessageStream(&messages_);
  po.SetExitOnHelp(false);
  const char* argv[] = {"/usr/local/bin/my-tool", "x", nullptr};
  EXPECT_EQ(po.Read(2, argv), 1);
  EXPECT_EQ(GetProgramName(), "my-tool");
}

TEST_F(ParseOptionsTest, ReadsConfigFile) {
  TempFile config(
      "# a comment line\n"
      "\n"
      "   --num=11   # trailing comment\n"
      "--flag\n"
      "\t--name=from config\n"
      "--scale=2.5\n");
  ParseOptions po("usage");
  RegisterAll(&po);
  Read(&po, {"--config=" + config.Path()});
  EXPECT_EQ(num_, 11);
  EXPECT_TRUE(flag_);
  EXPECT_EQ(name_, "from config");
  EXPECT_EQ(scale_, 2.5f);
}

TEST_F(ParseOptionsTest, CommandLineOverridesConfigInAnyOrder) {
  TempFile config("--num=11\n--name=cfg\n");
  ParseOptions po("usage");
  RegisterAll(&po);
  Read(&po, {"--num=1", "--config=" + config.Path(), "x"});
  EXPECT_EQ(num_, 1);
  EXPECT_EQ(name_, "cfg");
  EXPECT_EQ(po.NumArgs(), 1);
}

TEST_F(ParseOptionsTest, ReadsRepeatedConfigsInOrder) {
  TempFile first("--num=1\n--name=first\n");
  TempFile second("--num=2\n");
  ParseOptions po("usage");
  RegisterAll(&po);
  Read(&po, {"--config=" + first.Path(), "--config=" + second.Path()});
  EXPECT_EQ(num_, 2);
  EXPECT_EQ(name_, "first");
}

TEST_F(ParseOptionsTest, ConfigBadLineNamesFileAndLine) {
  TempFile config("--num=1\n# fine\nnum=2\n");
  ParseOptions po("usage");
  RegisterAll(&po);
  std::string what = test::ErrorText([&] { Read(&po, {"--config=" + config.Path()}); });
  EXPECT_TRUE(test::Contains(what, config.Path()));
  EXPECT_TRUE(test::Contains(what, "line 3"));
  EXPECT_TRUE(test::Contains(what, "num=2"));
}

TEST_F(ParseOptionsTest, ConfigUnknownOptionNamesFileAndLine) {
  TempFile config("\n--bogus=1\n");
  ParseOptions po("usage");
  RegisterAll(&po);
  std::string what = test::ErrorText([&] { po.ReadConfigFile(config.Path()); });
  EXPECT_TRUE(test::Contains(what, config.Path()));
  EXPECT_TRUE(test::Contains(what, "line 2"));
  EXPECT_TRUE(test::Contains(what, "--bogus"));
}

TEST_F(ParseOptionsTest, ConfigMalformedValueNamesLineOptionAndValue) {
  TempFile config("--num=1\n--count=-5\n");
  ParseOptions po("usage");
  RegisterAll(&po);
  std::string what = test::ErrorText([&] { po.ReadConfigFile(config.Path()); });
  EXPECT_TRUE(test::Contains(what, "line 2"));
  EXPECT_TRUE(test::Contains(what, "--count"));
  EXPECT_TRUE(test::Contains(what, "'-5'"));
}

TEST_F(ParseOptionsTest, ConfigRejectsHelp) {
  TempFile config("--help\n");
  ParseOptions po("usage");
  RegisterAll(&po);
  EXPECT_TRUE(test::ThrowsWith([&] { po.ReadConfigFile(config.Path()); }, "line 1"));
}

TEST_F(ParseOptionsTest, MissingConfigFileIsError) {
  ParseOptions po("usage");
  RegisterAll(&po);
  EXPECT_TRUE(test::ThrowsWith([&] { Read(&po, {"--config=/nonexistent/dir/x.conf"}); },
                               "/nonexistent/dir/x.conf"));
  EXPECT_THROW(Read(&po, {"--config="}), Error);
  EXPECT_THROW(Read(&po, {"--config"}), Error);
}

TEST_F(ParseOptionsTest, ConfigCanIncludeAnotherConfig) {
  TempFile inner("--num=8\n--name=inner\n");
  TempFile outer("--num=7\n--config=" + inner.Path() + "\n--name=outer\n");
  ParseOptions po("usage");
  RegisterAll(&po);
  po.ReadConfigFile(outer.Path());
  EXPECT_EQ(num_, 8);
  EXPECT_EQ(name_, "outer");
}

TEST_F(ParseOptionsTest, SelfIncludingConfigIsError) {
  TempFile config("");
  std::ofstream(config.Path()) << "--config=" << config.Path() << "\n";
  ParseOptions po("usage");
  RegisterAll(&po);
  EXPECT_TRUE(test::ThrowsWith([&] { po.ReadConfigFile(config.Path()); }, "nested"));
}

TEST_F(ParseOptionsTest, PrintConfigRoundTrips) {
  ParseOptions po("usage");
  RegisterAll(&po);
  flag_ = true;
  num_ = -3;
  count_ = 4000000000u;
  scale_ = 0.1f;
  weight_ = 1.0 / 3.0;
  name_ = "some text";
  std::ostringstream config_text;
  po.PrintConfig(config_text);
  EXPECT_EQ(config_text.str().find("--verbose"), std::string::npos) << "no standard options";
  TempFile config(config_text.str());

  bool flag = false;
  int32 num = 0;
  uint32 count = 0;
  float scale = 0;
  double weight = 0;
  std::string name;
  ParseOptions reader("usage");
  reader.Register("flag", &flag, "");
  reader.Register("num", &num, "");
  reader.Register("count", &count, "");
  reader.Register("scale", &scale, "");
  reader.Register("weight", &weight, "");
  reader.Register("name", &name, "");
  reader.ReadConfigFile(config.Path());
  EXPECT_EQ(flag, flag_);
  EXPECT_EQ(num, num_);
  EXPECT_EQ(count, count_);
  EXPECT_EQ(scale, scale_);
  EXPECT_EQ(weight, weight_);
  EXPECT_EQ(name, name_);
}

TEST_F(ParseOptionsTest, RegisterRejectsBadNamesAndNullPointers) {
  ParseOptions po("usage");
  int32 x = 0;
  EXPECT_THROW(po.Register("", &x, ""), Error);
  EXPECT_THROW(po.Register("a b", &x, ""), Error);
  EXPECT_THROW(po.Register("a=b", &x, ""), Error);
  EXPECT_THROW(po.Register("x", static_cast<int32*>(nullptr), ""), Error);
  EXPECT_THROW(po.Register("s", static_cast<std::string*>(nullptr), ""), Error);
}

TEST_F(ParseOptionsTest, DuplicateRegistrationKeepsFirstAndWarns) {
  ParseOptions po("usage");
  po.SetMessageStream(&messages_);
  po.SetExitOnHelp(false);
  int32 first = 0, second = 0;
  po.Register("n", &first, "");
  po.Register("N", &second, "");
  int32 verbose = 0;
  po.Register("verbose", &verbose, "");
  ASSERT_EQ(warnings_.size(), 2u);
  EXPECT_TRUE(test::Contains(warnings_[0], "--n"));
  EXPECT_TRUE(test::Contains(warnings_[1], "--verbose"));
  Read(&po, {"--n=4"});
  EXPECT_EQ(first, 4);
  EXPECT_EQ(second, 0);
}

TEST_F(ParseOptionsTest, DisableOptionMakesItUnknown) {
  ParseOptions po("usage");
  RegisterAll(&po);
  po.DisableOption("num");
  EXPECT_TRUE(test::ThrowsWith([&] { Read(&po, {"--num=1"}); }, "unknown option"));
  Read(&po, {"--help"});
  EXPECT_EQ(messages_.str().find("--num"), std::string::npos);
  EXPECT_THROW(po.DisableOption("never-registered"), Error);
}

// An options struct as library code writes one: it only knows OptionsItf.
struct BeamOptions {
  float beam = 16.0f;
  int32 max_active = 7000;
  void Register(OptionsItf* opts) {
    opts->Register("beam", &beam, "Decoding beam");
    opts->Register("max-active", &max_active, "Maximum active states");
  }
};

TEST_F(ParseOptionsTest, PrefixForwardingNamesNestedOptions) {
  ParseOptions po("usage");
  po.SetMessageStream(&messages_);
  po.SetExitOnHelp(false);
  BeamOptions plain, encoder, decoder, nested;
  plain.Register(&po);
  ParseOptions enc("enc", &po);
  encoder.Register(&enc);
  ParseOptions dec("dec", &po);
  decoder.Register(&dec);
  ParseOptions inner("inner", &enc);
  nested.Register(&inner);
  Read(&po, {"--beam=1", "--enc.beam=2", "--dec.max_active=3", "--enc.inner.beam=4"});
  EXPECT_EQ(plain.beam, 1.0f);
  EXPECT_EQ(encoder.beam, 2.0f);
  EXPECT_EQ(decoder.beam, 16.0f);
  EXPECT_EQ(decoder.max_active, 3);
  EXPECT_EQ(nested.beam, 4.0f);
  Read(&po, {"--help"});
  EXPECT_TRUE(test::Contains(messages_.str(), "--enc.inner.max-active=INT32"));
}

TEST_F(ParseOptionsTest, ForwardingParserCannotRead) {
  ParseOptions po("usage");
  ParseOptions enc("enc", &po);
  const char* argv[] = {"prog", nullptr};
  EXPECT_THROW(enc.Read(1, argv), Error);
  EXPECT_THROW(enc.ReadConfigFile("/dev/null"), Error);
  EXPECT_THROW(ParseOptions("", &po), Error);
  EXPECT_THROW(ParseOptions("x", nullptr), Error);
}

TEST_F(ParseOptionsTest, ReadAndCheckArgsAcceptsRightCount) {
  ParseOptions po("usage");
  RegisterAll(&po);
  std::vector<const char*> argv = {"prog", "--print-args=false", "a", "b", nullptr};
  int status = -1;
  EXPECT_TRUE(po.ReadAndCheckArgs(4, argv.data(), 2, 2, &status));
  EXPECT_EQ(status, 0);
  EXPECT_TRUE(po.ReadAndCheckArgs(4, argv.data(), 1, -1, &status));
  EXPECT_EQ(messages_.str(), "");
}

TEST_F(ParseOptionsTest, ReadAndCheckArgsReportsWrongCount) {
  ParseOptions po("my usage line");
  RegisterAll(&po);
  std::vector<const char*> argv = {"prog", "--print-args=false", "a", nullptr};
  int status = -1;
  EXPECT_FALSE(po.ReadAndCheckArgs(3, argv.data(), 2, 3, &status));
  EXPECT_EQ(status, 2);
  EXPECT_TRUE(test::Contains(messages_.str(), "my usage line"));
  EXPECT_TRUE(test::Contains(messages_.str(), "expected 2 to 3 positional arguments, got 1"));
}

TEST_F(ParseOptionsTest, ReadAndCheckArgsStopsAfterHelp) {
  ParseOptions po("usage");
  RegisterAll(&po);
  std::vector<const char*> argv = {"prog", "--help", nullptr};
  int status = -1;
  EXPECT_FALSE(po.ReadAndCheckArgs(2, argv.data(), 2, 2, &status));
  EXPECT_EQ(status, 0);
  EXPECT_THROW(po.ReadAndCheckArgs(2, argv.data(), 3, 2, &status), Error);
}

TEST_F(ParseOptionsTest, PrintUsageCanShowCommandLine) {
  ParseOptions po("usage");
  RegisterAll(&po);
  Read(&po, {"--print-args=false", "x y"});
  po.PrintUsage(true);
  EXPECT_TRUE(test::Contains(messages_.str(), "Command line was: prog --print-args=false 'x y'"));
}

TEST_F(ParseOptionsTest, EscapeQuotesOnlyWhenNeeded) {
  EXPECT_EQ(ParseOptions::Escape("plain-arg_1.txt"), "plain-arg_1.txt");
  EXPECT_EQ(ParseOptions::Escape("--opt=a,b:c"), "--opt=a,b:c");
  EXPECT_EQ(ParseOptions::Escape("ark:-|"), "'ark:-|'");
  EXPECT_EQ(ParseOptions::Escape("a b"), "'a b'");
  EXPECT_EQ(ParseOptions::Escape("it's"), "'it'\\''s'");
  EXPECT_EQ(ParseOptions::Escape("$HOME"), "'$HOME'");
  EXPECT_EQ(ParseOptions::Escape(""), "''");
}

TEST_F(ParseOptionsTest, AcceptsNonConstArgv) {
  ParseOptions po("usage");
  RegisterAll(&po);
  char arg0[] = "prog", arg1[] = "--num=9";
  char* argv[] = {arg0, arg1, nullptr};
  po.Read(2, argv);
  EXPECT_EQ(num_, 9);
}

TEST(ParseOptionsExitTest, HelpExitsZeroByDefaultAsInKaldi) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the test main may have started threads
  // A ported Kaldi main() relies on Read() ending the process after --help.
  auto read_help = [] {
    ParseOptions po("Does things.\nUsage: prog <in>\n");
    std::ostringstream sink;
    po.SetMessageStream(&sink);
    const char* argv[] = {"prog", "--help", nullptr};
    po.Read(2, argv);
    std::fprintf(stderr, "Read returned\n");
    std::exit(7);
  };
  // Exit status 0, not the 7 that follows a returning Read().
  EXPECT_EXIT(read_help(), ::testing::ExitedWithCode(0), "");
}

TEST_F(ParseOptionsTest, SetExitOnHelpFalseReturnsFromRead) {
  ParseOptions po("usage");
  RegisterAll(&po);  // calls SetExitOnHelp(false)
  EXPECT_EQ(Read(&po, {"--help"}), 2);
  EXPECT_TRUE(po.HelpRequested());
}

TEST_F(ParseOptionsTest, NonFiniteRealValuesAreRefused) {
  for (const char* bad : {"nan", "NaN", "-nan", "inf", "-inf", "+Infinity", "1e999"}) {
    ParseOptions po("usage");
    RegisterAll(&po);
    EXPECT_TRUE(test::ThrowsWith([&] { Read(&po, {std::string("--scale=") + bad}); },
                                 "option --scale: expected a finite float"))
        << bad;
    EXPECT_TRUE(test::ThrowsWith([&] { Read(&po, {std::string("--weight=") + bad}); },
                                 "option --weight: expected a finite double"))
        << bad;
  }
  EXPECT_EQ(scale_, 0.5f) << "a refused value leaves the option unchanged";
  TempFile config("--scale=inf\n");
  ParseOptions po("usage");
  RegisterAll(&po);
  EXPECT_TRUE(test::ThrowsWith([&] { po.ReadConfigFile(config.Path()); },
                               "line 1: invalid value 'inf' for option --scale"));
  Read(&po, {"--scale=-1e30", "--weight=1e300"});
  EXPECT_EQ(scale_, -1e30f);
  EXPECT_EQ(weight_, 1e300);
}

// An options struct that checks its values, as cuctx's allocator options do.
struct RangeOptions {
  int32 level = 1;
  void Register(OptionsItf* opts) {
    opts->Register("level", &level, "A level in [0, 3]");
    opts->RegisterValidator([this] {
      if (level < 0 || level > 3) CUCTX_ERR << "--level must be in [0, 3], got " << level;
    });
  }
};

TEST_F(ParseOptionsTest, ValidatorsRunWhenOptionsAreParsed) {
  ParseOptions po("usage");
  RegisterAll(&po);
  RangeOptions range;
  range.Register(&po);
  Read(&po, {"--level=3"});
  EXPECT_EQ(range.level, 3);
  EXPECT_TRUE(test::ThrowsWith([&] { Read(&po, {"--level=-5"}); }, "--level must be in [0, 3]"));
  TempFile config("--level=9\n");
  EXPECT_TRUE(test::ThrowsWith([&] { Read(&po, {"--config=" + config.Path()}); }, "got 9"));
  EXPECT_TRUE(test::ThrowsWith([&] { po.ReadConfigFile(config.Path()); }, "got 9"));
  range.level = 1;
  EXPECT_EQ(Read(&po, {"--help", "--level=7"}), 3) << "--help runs no validator";
}

TEST_F(ParseOptionsTest, ForwardingParserForwardsValidators) {
  ParseOptions po("usage");
  RegisterAll(&po);
  ParseOptions enc("enc", &po);
  RangeOptions range;
  range.Register(&enc);
  EXPECT_TRUE(test::ThrowsWith([&] { Read(&po, {"--enc.level=4"}); }, "got 4"));
}

TEST_F(ParseOptionsTest, HelpSectionsFollowTheMainOptions) {
  ParseOptions po("usage");
  RegisterAll(&po);
  bool gpu = false, trace = false;
  int32 quantum = 32;
  po.SetHelpSection("Device options");
  po.Register("gpu-thing", &gpu, "A device option");
  po.SetHelpSection("Allocator options");
  po.Register("quantum", &quantum, "An allocator option");
  po.SetHelpSection("Device options");
  po.Register("trace", &trace, "Another device option");
  po.SetHelpSection("");
  bool late = false;
  po.Register("late", &late, "Registered after the sections");
  Read(&po, {"--help"});
  const std::string help = messages_.str();
  const size_t main = help.find("Options:"), device = help.find("Device options:"),
               allocator = help.find("Allocator options:"),
               standard = help.find("Standard options:");
  ASSERT_NE(device, std::string::npos);
  ASSERT_NE(allocator, std::string::npos);
  EXPECT_LT(main, device);
  EXPECT_LT(device, allocator);
  EXPECT_LT(allocator, standard);
  EXPECT_LT(help.find("--late"), device) << "\"\" goes back to the main block";
  EXPECT_GT(help.find("--trace"), device);
  EXPECT_LT(help.find("--trace"), allocator);
  EXPECT_GT(help.find("--quantum"), allocator);
  EXPECT_LT(help.find("--quantum"), standard);
  EXPECT_GT(help.find("--verbose"), standard);
  ParseOptions enc("enc", &po);
  EXPECT_THROW(enc.SetHelpSection("x"), Error);
}

}  // namespace
}  // namespace cuctx
