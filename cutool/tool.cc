// cutool/tool.cc: RunTool, ToolInput/ToolOutput and the other helpers of tool.h.
// SPDX-License-Identifier: Apache-2.0
#include "cutool/tool.h"

#include "base/io-funcs.h"
#include "base/version.h"
#include "cudamatrix/cu-device.h"

#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-check.h"

#include <cuda_runtime_api.h>
#endif

namespace cuctx {
namespace {

// Every error-severity message in cuctx is logged just before an exception carrying the same text
// is thrown (CUCTX_ERR, the CUDA status checks, the pinned allocator), and RunTool prints that
// exception; logging it too would say the same thing twice. A failed CUCTX_ASSERT is the one
// error that aborts instead, so it must still be printed.
void ToolLogHandler(const LogMessageEnvelope& envelope, const char* message) {
  if (envelope.severity == kLogError && std::strncmp(message, "Assertion failed", 16) != 0) return;
  std::string line = FormatLogLine(envelope, message);
  std::fprintf(stderr, "%s\n", line.c_str());
}

// Restores the previous log handler when RunTool returns.
class ScopedLogHandler {
 public:
  explicit ScopedLogHandler(LogHandler handler) : previous_(SetLogHandler(handler)) {}
  ~ScopedLogHandler() { SetLogHandler(previous_); }
  ScopedLogHandler(const ScopedLogHandler&) = delete;
  ScopedLogHandler& operator=(const ScopedLogHandler&) = delete;

 private:
  LogHandler previous_;
};

int Fail(const std::string& tool, const std::string& message, int status) {
  std::fprintf(stderr, "%s: %s\n", tool.c_str(), ToolMessage(message).c_str());
  return status;
}

// Parses the command line and checks it. Returns true when the body should run; otherwise
// *status is the exit status (0 after --help). Throws on bad options (the caller maps that to 2).
bool ParseToolCommandLine(int argc, char* argv[], const ToolSpec& spec, ParseOptions* po,
                          const std::string& use_gpu, const bool& version, int* status) {
  po->Read(argc, argv);
  *status = kToolExitOk;
  if (po->HelpRequested()) return false;
  if (version) {
    std::printf("%s (%s)\n", GetProgramName().c_str(), CuctxVersionString().c_str());
    std::fflush(stdout);
    return false;
  }
  const int n = po->NumArgs();
  // A bare call (too few arguments) shows the usage first, as Kaldi's tools do.
  if (n < spec.min_args) po->PrintUsage();
  if (n < spec.min_args || (spec.max_args >= 0 && n > spec.max_args)) {
    std::ostringstream msg;
    msg << "expected ";
    if (spec.max_args == spec.min_args)
      msg << spec.min_args;
    else if (spec.max_args < 0)
      msg << "at least " << spec.min_args;
    else
      msg << spec.min_args << " to " << spec.max_args;
    msg << " positional argument" << (spec.max_args == 1 ? "" : "s") << ", got " << n
        << (n < spec.min_args ? "" : " (see --help)");
    throw ToolUsageError(msg.str());
  }
  if (spec.gpu != ToolGpu::kNone && use_gpu != "yes" && use_gpu != "no" && use_gpu != "optional" &&
      use_gpu != "wait")
    throw ToolUsageError("invalid value '" + use_gpu +
                         "' for option --use-gpu: expected yes, no, optional or wait");
  return true;
}

}  // namespace

std::string CuctxVersionString() {
  const std::string revision = CUCTX_REVISION;
  return std::string("cuctx ") + CUCTX_VERSION + ", revision " +
         (revision.empty() ? "unknown" : revision);
}

std::string ToolMessage(const std::string& what) {
  std::string text = what;
  // A message may quote an inner error, so origins can appear mid-text too.
  for (size_t origin = text.find(" [in "); GetVerboseLevel() < 1 && origin != std::string::npos;
       origin = text.find(" [in ", origin)) {
    size_t close = text.find(']', origin);
    if (close != std::string::npos && text.find(" at ", origin) < close)
      text.erase(origin, close + 1 - origin);
    else
      ++origin;
  }
  std::string out;
  for (char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == '\n') {
      if (!out.empty()) out += "; ";
    } else if (c == '\r') {
      continue;
    } else if (c < 0x20 || c == 0x7f) {
      // A malformed input's bytes must not reach the terminal raw; bytes >= 0x80 stay (UTF-8).
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += ch;
    }
  }
  while (out.size() >= 2 && out.compare(out.size() - 2, 2, "; ") == 0) out.resize(out.size() - 2);
  return out;
}

int RunTool(int argc, char* argv[], const ToolSpec& spec, const ToolRegisterFn& register_options,
            const ToolBodyFn& body) {
  ScopedLogHandler log_handler(&ToolLogHandler);
  if (argc > 0 && argv != nullptr && argv[0] != nullptr) SetProgramName(argv[0]);
  const std::string tool = GetProgramName().empty() ? "tool" : GetProgramName();

  std::string use_gpu = spec.gpu == ToolGpu::kNone ? "" : spec.default_use_gpu;
  bool version = false;
  ParseOptions po(spec.usage);
  // RunTool returns the --help status itself (it never calls exit()).
  po.SetExitOnHelp(false);
  try {
    if (register_options) register_options(&po);
    if (spec.gpu != ToolGpu::kNone) {
      po.SetHelpSection("Device options");
      po.Register("use-gpu", &use_gpu, "yes|no|optional|wait: whether to use a GPU");
      CuDevice::RegisterDeviceOptions(&po);
      po.SetHelpSection("Device memory options");
      CuDevice::RegisterCuAllocatorOptions(&po);
    }
    po.SetHelpSection("Standard options");
    po.Register("version", &version, "Print the cuctx version and revision, and stop");
    po.SetHelpSection("");
    int status = kToolExitOk;
    if (!ParseToolCommandLine(argc, argv, spec, &po, use_gpu, version, &status)) return status;
  } catch (const std::exception& e) {
    return Fail(tool, e.what(), kToolExitUsage);
  }

  int status = kToolExitFailure;
  try {
    const ToolArgs args(&po, &use_gpu);
    if (spec.gpu == ToolGpu::kSelect) SelectToolGpu(args);
    status = body(args);
    std::fflush(stdout);
    std::cout.flush();
  } catch (const ToolUsageError& e) {
    return Fail(tool, e.what(), kToolExitUsage);
  } catch (const ToolNoGpuError& e) {
    return Fail(tool, std::string("no usable GPU: ") + e.what(), kToolExitNoGpu);
  } catch (const std::bad_alloc&) {
    return Fail(tool, "out of host memory", kToolExitFailure);
  } catch (const std::exception& e) {
    return Fail(tool, e.what(), kToolExitFailure);
  } catch (...) {
    return Fail(tool, "unknown exception", kToolExitFailure);
  }
  try {
    CuDevice::Instantiate().PrintProfile();
  } catch (const std::exception& e) {
    return Fail(tool, e.what(), kToolExitFailure);
  }
  return status;
}

ToolInput::ToolInput(const std::string& rxfilename)
    : input_(rxfilename, &binary_), name_(PrintableRxfilename(rxfilename)) {}

ToolOutput::ToolOutput(const std::string& wxfilename, bool binary)
    : output_(wxfilename, binary), name_(PrintableWxfilename(wxfilename)) {}

void ToolOutput::Close() {
  std::string error;
  if (!output_.Close(&error)) CUCTX_ERR << error;
}

void CheckRxfilenameArg(const std::string& arg, const std::string& what) {
  if (ClassifyRxfilename(arg) != kNoInput) return;
  std::string why = LooksLikeTableSpecifier(arg)
                        ? " is a table specifier, which this argument does not take"
                        : " is not a usable input name";
  throw ToolUsageError(what + " " + PrintableRxfilename(arg) + why +
                       " (expected a file, \"-\" for standard input, \"command |\" or "
                       "\"file:offset\")");
}

void CheckWxfilenameArg(const std::string& arg, const std::string& what) {
  if (ClassifyWxfilename(arg) != kNoOutput) return;
  std::string why = LooksLikeTableSpecifier(arg)
                        ? " is a table specifier, which this argument does not take"
                        : " is not a usable output name";
  throw ToolUsageError(what + " " + PrintableWxfilename(arg) + why +
                       " (expected a file, \"-\" for standard output or \"| command\")");
}

void SelectToolGpu(const ToolArgs& args) {
  try {
    CuDevice::Instantiate().SelectGpuId(args.UseGpu());
  } catch (const std::exception& e) {
    throw ToolNoGpuError(e.what());
  }
}

void RequireToolGpu(const ToolArgs& args) {
  SelectToolGpu(args);
  CuDevice& device = CuDevice::Instantiate();
  if (!device.Enabled())
    throw ToolNoGpuError("this tool runs only on a GPU (--use-gpu=" + args.UseGpu() +
                         "): " + device.NoGpuReason());
}

std::string FindToolDataFile(const std::string& path) {
  auto is_file = [](const std::string& p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  };
  if (path.empty() || path.find('/') != std::string::npos || is_file(path)) return path;
  std::vector<std::string> candidates = {"tests/data/" + path};
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    std::string dir(exe, static_cast<size_t>(n));
    dir.erase(dir.rfind('/') + 1);
    candidates.push_back(dir + "../share/cuctx/" + path);
    candidates.push_back(dir + "../../../tests/data/" + path);
  }
  for (const std::string& candidate : candidates)
    if (is_file(candidate)) return candidate;
  return path;
}

void WaitForThreadStream() {
#if CUCTX_HAVE_CUDA
  if (CuDevice::Instantiate().Enabled())
    CUCTX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
#endif
}

}  // namespace cuctx
