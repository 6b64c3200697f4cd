// cutool/tool.cc: RunTool, ToolInput/ToolOutput and the other helpers of tool.h.
// SPDX-License-Identifier: Apache-2.0
#include "cutool/tool.h"

#include "base/io-funcs.h"
#include "cudamatrix/cu-device.h"

#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <sstream>

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

// One line for a message: newlines become "; ", and below --verbose=1 every " [in F at file:line]"
// origin of a cuctx::Error is dropped (it points into our sources, which users do not need).
std::string OneLine(const std::string& what) {
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
  for (char c : text) {
    if (c == '\n') {
      if (!out.empty()) out += "; ";
    } else if (c != '\r') {
      out += c;
    }
  }
  while (out.size() >= 2 && out.compare(out.size() - 2, 2, "; ") == 0) out.resize(out.size() - 2);
  return out;
}

int Fail(const std::string& tool, const std::string& message, int status) {
  std::fprintf(stderr, "%s: %s\n", tool.c_str(), OneLine(message).c_str());
  return status;
}

// Parses the command line and checks it. Returns true when the body should run; otherwise
// *status is the exit status (0 after --help). Throws on bad options (the caller maps that to 2).
bool ParseToolCommandLine(int argc, char* argv[], const ToolSpec& spec, ParseOptions* po,
                          const std::string& use_gpu, int* status) {
  po->Read(argc, argv);
  *status = kToolExitOk;
  if (po->HelpRequested()) return false;
  const int n = po->NumArgs();
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
        << " (see --help)";
    throw ToolUsageError(msg.str());
  }
  if (spec.gpu != ToolGpu::kNone && use_gpu != "yes" && use_gpu != "no" && use_gpu != "optional" &&
      use_gpu != "wait")
    throw ToolUsageError("invalid value '" + use_gpu +
                         "' for option --use-gpu: expected yes, no, optional or wait");
  return true;
}

}  // namespace

int RunTool(int argc, char* argv[], const ToolSpec& spec, const ToolRegisterFn& register_options,
            const ToolBodyFn& body) {
  ScopedLogHandler log_handler(&ToolLogHandler);
  if (argc > 0 && argv != nullptr && argv[0] != nullptr) SetProgramName(argv[0]);
  const std::string tool = GetProgramName().empty() ? "tool" : GetProgramName();

  std::string use_gpu = spec.gpu == ToolGpu::kNone ? "" : spec.default_use_gpu;
  ParseOptions po(spec.usage);
  try {
    if (spec.gpu != ToolGpu::kNone) {
      po.Register("use-gpu", &use_gpu, "yes|no|optional|wait: whether to use a GPU");
      CuDevice::RegisterDeviceOptions(&po);
      CuDevice::RegisterCuAllocatorOptions(&po);
    }
    if (register_options) register_options(&po);
    int status = kToolExitOk;
    if (!ParseToolCommandLine(argc, argv, spec, &po, use_gpu, &status)) return status;
  } catch (const std::exception& e) {
    return Fail(tool, e.what(), kToolExitUsage);
  }

  int status = kToolExitFailure;
  try {
    if (spec.gpu == ToolGpu::kSelect) CuDevice::Instantiate().SelectGpuId(use_gpu);
    status = body(ToolArgs(&po, &use_gpu));
    std::fflush(stdout);
    std::cout.flush();
  } catch (const ToolUsageError& e) {
    return Fail(tool, e.what(), kToolExitUsage);
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

void WaitForThreadStream() {
#if CUCTX_HAVE_CUDA
  if (CuDevice::Instantiate().Enabled())
    CUCTX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
#endif
}

}  // namespace cuctx
