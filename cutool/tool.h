// cutool/tool.h: the shared frame of every bin/ tool: options, device choice, exit codes,
// one-line errors, and Kaldi-style "-" stdin/stdout streams.
// SPDX-License-Identifier: Apache-2.0
//
// A tool is a usage text, a callback that registers its own options and a body:
//
//   int main(int argc, char* argv[]) {
//     bool binary = true;
//     cuctx::ToolSpec spec{kUsage, 2, 2};     // usage text, min and max positional arguments
//     return cuctx::RunTool(
//         argc, argv, spec,
//         [&](cuctx::ParseOptions* po) { po->Register("binary", &binary, "Write binary output"); },
//         [&](const cuctx::ToolArgs& args) {
//           cuctx::ToolInput in(args.Arg(1));
//           ...
//           return cuctx::kToolExitOk;
//         });
//   }
//
// Behaviour RunTool gives every tool:
//   --help, -h        prints the usage, the options and their defaults to stderr; exit 0. The
//                     tool's own options come first, then (GPU tools) a "Device options" block
//                     (--use-gpu, --cuda-use-*) and a "Device memory options" block (the
//                     allocator's --cuda-* options), then the standard options.
//   --version         prints "<tool> (cuctx <version>, revision <git revision or unknown>)" to
//                     stdout; exit 0.
//   --config=FILE, --verbose=N, --print-args   the standard ParseOptions options (print-args
//                     defaults to true, as in Kaldi: the command line is echoed to stderr).
//   --use-gpu=yes|no|optional|wait and the device and allocator options (CuDevice::
//                     RegisterDeviceOptions, RegisterCuAllocatorOptions), for tools whose spec
//                     says they can use a GPU. Their values are checked when parsed, GPU or not.
//   exit 2            a bad option, a bad option value, a wrong number of positional arguments
//                     or a ToolUsageError from the body: one line "<tool>: <message>" on stderr.
//                     Too few positional arguments (a bare call) print the usage before the line,
//                     as Kaldi's tools do.
//   exit 3            no usable GPU where the tool needs one (kToolExitNoGpu; the same code in
//                     every tool that selects a GPU).
//   exit 1            any other exception from the body (cuctx::Error, std::exception, a missing
//                     file, malformed input): one line "<tool>: <message>" on stderr.
//   otherwise         the body's return value.
// Errors are printed once: while RunTool runs, the error-severity log line that CUCTX_ERR (and the
// CUDA status checks) write before throwing is suppressed, since the exception carries the same
// text (warnings, CUCTX_LOG lines and a failed CUCTX_ASSERT still print); and at --verbose=0 every
// "[in Function at file:line]" origin in the exception's text is dropped (kept at --verbose >= 1).
// Control bytes in a message (from a malformed input, say) are shown escaped ("\x04").
// RunTool never calls exit() or abort(), so a user error never ends in a stack trace or a core
// dump (only a failed CUCTX_ASSERT, i.e. a bug in cuctx, aborts). At --verbose >= 1, RunTool
// ends with CuDevice::PrintProfile().
#ifndef CUCTX_CUTOOL_TOOL_H_
#define CUCTX_CUTOOL_TOOL_H_

#include "base/error.h"
#include "base/parse-options.h"

#include <fstream>
#include <functional>
#include <memory>
#include <string>

namespace cuctx {

// Exit codes shared by all tools (a tool may document more of its own, e.g. cuda-gpu-available).
constexpr int kToolExitOk = 0;
constexpr int kToolExitFailure = 1;
constexpr int kToolExitUsage = 2;
// No usable GPU for a tool that needs one (--use-gpu=yes, or a benchmark), or cuctx built without
// CUDA where the tool can only run on a GPU.
constexpr int kToolExitNoGpu = 3;

// "cuctx <version>, revision <git revision>" ("revision unknown" when built outside a git
// checkout; a "+" after the revision marks a build with uncommitted changes).
std::string CuctxVersionString();

// A message as RunTool prints it: one line (newlines become "; "), control bytes escaped as
// "\xNN", and, below --verbose=1, every " [in Function at file:line]" origin removed. For tools
// that report an error on their own (e.g. as a line of their output) rather than by throwing.
std::string ToolMessage(const std::string& what);

// Thrown by a tool body for a usage mistake found after option parsing (an option value out of
// its range, two options that exclude each other); RunTool turns it into exit status 2.
class ToolUsageError : public Error {
 public:
  explicit ToolUsageError(const std::string& what) : Error(what) {}
};

// Thrown by a tool body that needs a GPU and has none; RunTool turns it into exit status 3
// (kToolExitNoGpu) with the line "<tool>: no usable GPU: <message>".
class ToolNoGpuError : public Error {
 public:
  explicit ToolNoGpuError(const std::string& what) : Error(what) {}
};

// How a tool uses the GPU.
enum class ToolGpu {
  kNone,         // no --use-gpu; the tool runs on the CPU
  kSelect,       // registers --use-gpu and the device/allocator options, and selects the device
                 // (CuDevice::SelectGpuId) before the body runs; failing to get one is exit 3
                 // (kToolExitNoGpu)
  kOptionsOnly,  // registers them, checks the --use-gpu value, but leaves selection to the body
};

// What a tool declares about itself.
struct ToolSpec {
  const char* usage = "";  // what the tool does and its positional arguments (shown by --help)
  int min_args = 0;        // positional arguments allowed: [min_args, max_args]
  int max_args = 0;        // < 0: no upper bound
  ToolGpu gpu = ToolGpu::kNone;
  const char* default_use_gpu = "optional";  // default of --use-gpu when gpu != kNone
};

// What the body sees of the parsed command line.
class ToolArgs {
 public:
  ToolArgs(const ParseOptions* po, const std::string* use_gpu) : po_(po), use_gpu_(use_gpu) {}
  int NumArgs() const { return po_->NumArgs(); }
  // Positional argument i, counted from 1 (RunTool has checked the count).
  std::string Arg(int i) const { return po_->GetArg(i); }
  // Optional trailing argument i, or "" when absent.
  std::string OptArg(int i) const { return po_->GetOptArg(i); }
  // The --use-gpu value ("" for a tool with ToolGpu::kNone).
  const std::string& UseGpu() const { return *use_gpu_; }

 private:
  const ParseOptions* po_;
  const std::string* use_gpu_;
};

using ToolRegisterFn = std::function<void(ParseOptions* po)>;
using ToolBodyFn = std::function<int(const ToolArgs& args)>;

// Parses the command line as `spec` says, then runs `body` and returns the exit status for main
// (see the file comment). `register_options` registers the tool's own options (may be empty).
// Call once, from main, before any other thread uses cuctx. Never throws.
int RunTool(int argc, char* argv[], const ToolSpec& spec, const ToolRegisterFn& register_options,
            const ToolBodyFn& body);

// An input named as in Kaldi's rxfilenames (the plain forms only): "-" or "" is stdin, anything
// else a file opened in binary mode. The constructor reads Kaldi's binary header ("\0B"), so
// Stream() is positioned at the object and Binary() says which mode to read it in. Stdin is read
// through a buffer that counts bytes, so messages about malformed data give byte offsets for
// stdin as they do for files (the stream's tellg() works; seeking does not).
// Throws cuctx::Error naming the file if it cannot be opened, is a directory, or starts with '\0'
// without 'B'.
class ToolInput {
 public:
  explicit ToolInput(const std::string& rxfilename);
  ~ToolInput();
  ToolInput(const ToolInput&) = delete;
  ToolInput& operator=(const ToolInput&) = delete;
  std::istream& Stream() { return *is_; }
  bool Binary() const { return binary_; }
  // "standard input" or "'name'", for messages.
  const std::string& Name() const { return name_; }

 private:
  std::ifstream file_;
  std::unique_ptr<std::streambuf> stdin_buf_;  // the counting stdin buffer, when reading stdin
  std::unique_ptr<std::istream> stdin_;
  std::istream* is_;
  bool binary_ = false;
  std::string name_;
};

// An output named as in Kaldi's wxfilenames (the plain forms only): "-" or "" is stdout, anything
// else a file, created or truncated, opened in binary mode (a directory is refused by name). The constructor writes Kaldi's binary
// header when `binary` (text mode raises the precision to 7 digits, as Kaldi's writers do).
// Close() flushes and throws cuctx::Error naming the file if anything failed to be written; call
// it before reporting success (the destructor closes silently).
class ToolOutput {
 public:
  ToolOutput(const std::string& wxfilename, bool binary);
  ToolOutput(const ToolOutput&) = delete;
  ToolOutput& operator=(const ToolOutput&) = delete;
  std::ostream& Stream() { return *os_; }
  void Close();
  const std::string& Name() const { return name_; }

 private:
  std::ofstream file_;
  std::ostream* os_;
  std::string name_;
};

// Reads a Kaldi object (anything with Read(std::istream&, bool binary): Matrix, Vector, ...) from
// an rxfilename as ToolInput names it, in the mode the input's header gives. Throws cuctx::Error
// if the input cannot be opened, or with Read's message prefixed by "reading <name>: " for
// malformed data.
template <class Object>
void ReadKaldiObject(const std::string& rxfilename, Object* object) {
  ToolInput in(rxfilename);
  try {
    object->Read(in.Stream(), in.Binary());
  } catch (const Error& e) {
    throw Error("reading " + in.Name() + ": " + e.what());
  }
}

// Writes `object` (anything with Write(std::ostream&, bool binary) const) to a wxfilename as
// ToolOutput names it, then closes the output; throws cuctx::Error if writing failed.
template <class Object>
void WriteKaldiObject(const Object& object, const std::string& wxfilename, bool binary) {
  ToolOutput out(wxfilename, binary);
  object.Write(out.Stream(), binary);
  out.Close();
}

// For a tool with ToolGpu::kOptionsOnly that checks its own options (or reads its input) before
// choosing the device: selects one as --use-gpu says, as ToolGpu::kSelect does before the body;
// throws ToolNoGpuError (exit 3) if --use-gpu=yes (or wait) finds none.
void SelectToolGpu(const ToolArgs& args);

// The same for a tool that runs only on a GPU (the benchmarks): also throws ToolNoGpuError when
// --use-gpu=no or optional left the tool on the CPU.
void RequireToolGpu(const ToolArgs& args);

// Finds a data file shipped with cuctx (a benchmark's reference table or trace). Returns `path`
// itself when it names an existing file or contains a '/'; otherwise the first existing one of
// tests/data/<path> (run from the source tree), <executable's folder>/../share/cuctx/<path>
// (installed by `make install`) and <executable's folder>/../../../tests/data/<path> (a build
// tree's bin/ inside the source tree). Returns `path` unchanged when none exists, so that opening
// it fails with the name the user gave.
std::string FindToolDataFile(const std::string& path);

// Blocks until this thread's stream (cudaStreamPerThread) has finished its queued GPU work, so
// that a host timer covers it. No-op without a GPU. Throws cuctx::CudaError on an earlier
// asynchronous fault.
void WaitForThreadStream();

}  // namespace cuctx

#endif  // CUCTX_CUTOOL_TOOL_H_
