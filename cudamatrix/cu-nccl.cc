// cudamatrix/cu-nccl.cc: CuNcclUniqueId, CuNcclComm and the run-time loading of libnccl.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-nccl.h"

#include "base/error.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-profile.h"
#include "cudamatrix/internal/cu-nccl-lib.h"

#if CUCTX_HAVE_NCCL
#include "cudamatrix/cu-check.h"

#include <cuda_runtime.h>

#include <dlfcn.h>
#include <nccl.h>
#endif

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace cuctx {

// ---- CuNcclUniqueId: plain host code, the same in every build ------------------------------

namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string Trim(const std::string& s) {
  const char* space = " \t\r\n";
  const size_t first = s.find_first_not_of(space);
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(space) - first + 1);
}

// Decodes 2 * n hex digits into n bytes; on bad input returns false with *why set (so that the
// callers can add where the text came from and log the error once).
bool DecodeHex(const std::string& hex, unsigned char* bytes, int n, std::string* why) {
  if (hex.size() != static_cast<size_t>(2 * n)) {
    *why = "an NCCL unique id is " + std::to_string(2 * n) + " hex digits (" + std::to_string(n) +
           " bytes), got " + std::to_string(hex.size()) + " characters";
    return false;
  }
  for (int i = 0; i < 2 * n; ++i) {
    if (HexDigit(hex[i]) < 0) {
      *why = "an NCCL unique id is hex digits only; character " + std::to_string(i) + " is '" +
             hex[i] + "'";
      return false;
    }
  }
  for (int i = 0; i < n; ++i)
    bytes[i] = static_cast<unsigned char>(HexDigit(hex[2 * i]) * 16 + HexDigit(hex[2 * i + 1]));
  return true;
}

}  // namespace

CuNcclUniqueId::CuNcclUniqueId() { std::memset(bytes_, 0, sizeof(bytes_)); }

std::string CuNcclUniqueId::ToHex() const {
  static const char kDigits[] = "0123456789abcdef";
  std::string hex(2 * kBytes, '0');
  for (int i = 0; i < kBytes; ++i) {
    hex[2 * i] = kDigits[bytes_[i] >> 4];
    hex[2 * i + 1] = kDigits[bytes_[i] & 15];
  }
  return hex;
}

CuNcclUniqueId CuNcclUniqueId::FromHex(const std::string& hex) {
  CuNcclUniqueId id;
  std::string why;
  if (!DecodeHex(hex, id.bytes_, kBytes, &why)) CUCTX_ERR << why;
  return id;
}

void CuNcclUniqueId::WriteToFile(const std::string& path) const {
  const std::string tmp = path + ".tmp." + std::to_string(static_cast<long>(getpid()));
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << ToHex() << "\n";
    out.close();
    if (!out) {
      const int err = errno;
      std::remove(tmp.c_str());
      CUCTX_ERR << "could not write the NCCL unique id to '" << tmp << "': " << std::strerror(err);
    }
  }
  // rename() replaces `path` in one step, so a reader sees no file or a whole one.
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    CUCTX_ERR << "could not rename '" << tmp << "' to '" << path << "': " << std::strerror(err);
  }
}

CuNcclUniqueId CuNcclUniqueId::ReadFromFile(const std::string& path, double timeout_seconds) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  std::string text;
  bool found = false;
  for (;;) {
    std::ifstream in(path);
    if (in) {
      std::stringstream content;
      content << in.rdbuf();
      text = Trim(content.str());
      found = true;
      // A file written by other means than WriteToFile may still be growing: wait for all of it.
      if (text.size() >= 2 * kBytes) break;
    }
    const double waited = std::chrono::duration<double>(Clock::now() - start).count();
    if (waited >= timeout_seconds) {
      if (found) break;  // DecodeHex below says what is wrong with the content
      CUCTX_ERR << "the NCCL unique id file '" << path << "' did not appear within "
                << timeout_seconds << " s (waited " << waited
                << " s); is rank 0 running and writing it to the same path?";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CuNcclUniqueId id;
  std::string why;
  if (!DecodeHex(text, id.bytes_, kBytes, &why))
    CUCTX_ERR << "reading the NCCL unique id from '" << path << "': " << why;
  return id;
}

CuNcclUniqueId CuNcclUniqueId::FromEnvironment(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr)
    CUCTX_ERR << "the environment variable " << name
              << " is not set; it must hold the NCCL unique id in hex (CuNcclUniqueId::ToHex)";
  CuNcclUniqueId id;
  std::string why;
  if (!DecodeHex(Trim(value), id.bytes_, kBytes, &why))
    CUCTX_ERR << "reading the NCCL unique id from " << name << ": " << why;
  return id;
}

bool CuNcclUniqueId::operator==(const CuNcclUniqueId& other) const {
  return std::memcmp(bytes_, other.bytes_, sizeof(bytes_)) == 0;
}

#if CUCTX_HAVE_NCCL

// ---- the library, loaded on first use ------------------------------------------------------

namespace internal {
namespace {

// The handle of libnccl (never closed: comms may live until the process ends), or why loading
// failed.
struct NcclLibrary {
  void* handle = nullptr;
  std::string error;
};

const NcclLibrary& Library() {
  static const NcclLibrary library = [] {
    NcclLibrary lib;
    std::string tried;
    for (const char* name : {"libnccl.so.2", "libnccl.so"}) {
      lib.handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (lib.handle != nullptr) return lib;
      const char* why = dlerror();
      tried += std::string(tried.empty() ? "" : "; ") + "dlopen(\"" + name +
               "\"): " + (why != nullptr ? why : "unknown error");
    }
    lib.error = "could not load the NCCL library libnccl.so.2 (" + tried +
                "). Install NCCL 2.13 or newer (for example the libnccl2 package from NVIDIA's "
                "CUDA repository, or pip's nvidia-nccl-cu13), and if it is outside the linker's "
                "search path add the directory that holds libnccl.so.2 to LD_LIBRARY_PATH";
    return lib;
  }();
  return library;
}

}  // namespace

void* NcclFunction(const char* name) {
  const NcclLibrary& lib = Library();
  if (lib.handle == nullptr) CUCTX_ERR << lib.error;
  dlerror();
  void* fn = dlsym(lib.handle, name);
  if (fn == nullptr) {
    const char* why = dlerror();
    CUCTX_ERR << "the loaded NCCL library has no function " << name << " ("
              << (why != nullptr ? why : "not found") << "); cuctx needs NCCL 2.13 or newer";
  }
  return fn;
}

}  // namespace internal

namespace {

// NCCL 2.13 added ncclGetLastError; ncclAvg is from 2.10.
constexpr int kMinNcclVersion = 21300;

struct NcclApi {
  int version = 0;
  decltype(&ncclGetErrorString) get_error_string = nullptr;
  decltype(&ncclGetLastError) get_last_error = nullptr;
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRank) comm_init_rank = nullptr;
  decltype(&ncclCommInitAll) comm_init_all = nullptr;
  decltype(&ncclCommDestroy) comm_destroy = nullptr;
  decltype(&ncclCommAbort) comm_abort = nullptr;
  decltype(&ncclCommGetAsyncError) comm_get_async_error = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclBroadcast) broadcast = nullptr;
  decltype(&ncclAllGather) all_gather = nullptr;
  decltype(&ncclReduceScatter) reduce_scatter = nullptr;
};

// The function table, filled once (a failed load throws and is tried again on the next call).
const NcclApi& Api() {
  static const NcclApi api = [] {
    using internal::LoadNcclFunction;
    NcclApi a;
    decltype(&ncclGetVersion) get_version = nullptr;
    LoadNcclFunction("ncclGetVersion", &get_version);
    if (get_version(&a.version) != ncclSuccess) CUCTX_ERR << "ncclGetVersion failed";
    if (a.version < kMinNcclVersion)
      CUCTX_ERR << "the loaded NCCL library is version code " << a.version
                << "; cuctx needs NCCL 2.13 or newer (" << kMinNcclVersion << ")";
    LoadNcclFunction("ncclGetErrorString", &a.get_error_string);
    LoadNcclFunction("ncclGetLastError", &a.get_last_error);
    LoadNcclFunction("ncclGetUniqueId", &a.get_unique_id);
    LoadNcclFunction("ncclCommInitRank", &a.comm_init_rank);
    LoadNcclFunction("ncclCommInitAll", &a.comm_init_all);
    LoadNcclFunction("ncclCommDestroy", &a.comm_destroy);
    LoadNcclFunction("ncclCommAbort", &a.comm_abort);
    LoadNcclFunction("ncclCommGetAsyncError", &a.comm_get_async_error);
    LoadNcclFunction("ncclAllReduce", &a.all_reduce);
    LoadNcclFunction("ncclBroadcast", &a.broadcast);
    LoadNcclFunction("ncclAllGather", &a.all_gather);
    LoadNcclFunction("ncclReduceScatter", &a.reduce_scatter);
    return a;
  }();
  return api;
}

const char* ResultName(ncclResult_t r) {
  switch (r) {
    case ncclSuccess:
      return "ncclSuccess";
    case ncclUnhandledCudaError:
      return "ncclUnhandledCudaError";
    case ncclSystemError:
      return "ncclSystemError";
    case ncclInternalError:
      return "ncclInternalError";
    case ncclInvalidArgument:
      return "ncclInvalidArgument";
    case ncclInvalidUsage:
      return "ncclInvalidUsage";
    case ncclRemoteError:
      return "ncclRemoteError";
    case ncclInProgress:
      return "ncclInProgress";
    default:
      return "ncclResult_t";
  }
}

// Who made a failing call, for the message.
struct Site {
  ncclComm_t comm;
  int rank, num_ranks, device;
};

std::string Describe(const char* call, ncclResult_t result, const Site& site) {
  const NcclApi& api = Api();  // loaded: the failing call came from it
  std::ostringstream out;
  out << call << " failed: " << ResultName(result) << " " << static_cast<int>(result) << " ("
      << api.get_error_string(result) << ")";
  const char* last = api.get_last_error(site.comm);
  if (last != nullptr && last[0] != '\0') out << "; NCCL says: " << last;
  out << " [";
  if (site.rank >= 0) out << "rank " << site.rank << " of " << site.num_ranks << ", ";
  out << "GPU " << site.device << "]";
  return out.str();
}

[[noreturn]] void ThrowNccl(const char* call, ncclResult_t result, const Site& site,
                            const char* func, const char* file, int line) {
  const std::string text = Describe(call, result, site);
  internal::EmitLog(LogMessageEnvelope{kLogError, func, file, line}, text);
  throw CudaError(internal::WithOrigin(text, func, file, line), "NCCL", static_cast<int>(result));
}

}  // namespace

// The one NCCL status check: a failure throws cuctx::CudaError (library "NCCL") naming the call,
// NCCL's error string and last-error text, the rank and the device, and file:line.
#define CUCTX_NCCL_CHECK(call_name, site, call)                                         \
  do {                                                                                  \
    const ncclResult_t cuctx_nccl_result_ = (call);                                     \
    if (cuctx_nccl_result_ != ncclSuccess)                                              \
      ThrowNccl((call_name), cuctx_nccl_result_, (site), __func__, __FILE__, __LINE__); \
  } while (0)

namespace {

int CurrentDevice() {
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    device = -1;
  }
  return device;
}

ncclRedOp_t NcclOpOf(CuNcclOp op) {
  switch (op) {
    case CuNcclOp::kSum:
      return ncclSum;
    case CuNcclOp::kAverage:
      return ncclAvg;
    case CuNcclOp::kMax:
      return ncclMax;
    case CuNcclOp::kMin:
      return ncclMin;
  }
  CUCTX_ERR << "unknown CuNcclOp " << static_cast<int>(op);
}

// A GPU must be selected for the calling thread before a communicator can be made on it.
void RequireGpu(const char* what) {
  CuDevice& device = CuDevice::Instantiate();
  if (!device.Enabled() || device.DeviceId() < 0)
    CUCTX_ERR << what << ": no GPU is selected (" << device.NoGpuReason()
              << "); an NCCL communicator needs one: select a device with "
                 "CuDevice::SelectGpuId or SelectGpuIdForThread first";
}

// A matrix's elements as one contiguous device array, row after row: the matrix's own memory
// when its rows are contiguous, else a scratch buffer from CuDevice::Malloc filled (and emptied)
// by a pitched device-to-device copy on this thread's stream. The scratch is freed in stream
// order, after the work queued on it.
template <typename Real>
class ContiguousRows {
 public:
  ContiguousRows(const CuMatrixBase<Real>& m, bool copy_in)
      : rows_(m.NumRows()),
        cols_(m.NumCols()),
        stride_(m.Stride()),
        count_(static_cast<size_t>(rows_) * static_cast<size_t>(cols_)) {
    if (rows_ <= 1 || stride_ == cols_) {
      data_ = const_cast<Real*>(m.Data());
      return;
    }
    scratch_ = static_cast<Real*>(CuDevice::Instantiate().Malloc(count_ * sizeof(Real)));
    data_ = scratch_;
    if (copy_in) Copy2D(scratch_, cols_, m.Data(), stride_);
  }
  ~ContiguousRows() {
    if (scratch_ != nullptr) CuDevice::Instantiate().Free(scratch_);
  }
  ContiguousRows(const ContiguousRows&) = delete;
  ContiguousRows& operator=(const ContiguousRows&) = delete;

  Real* Data() const { return data_; }
  size_t Count() const { return count_; }
  // Copies the elements into m (which must be the matrix this was made from, or one of its
  // shape and stride); nothing to do when they are m's own memory.
  void CopyOut(CuMatrixBase<Real>* m) const {
    if (scratch_ != nullptr) Copy2D(m->Data(), stride_, scratch_, cols_);
  }

 private:
  void Copy2D(Real* dst, MatrixIndexT dst_stride, const Real* src, MatrixIndexT src_stride) const {
    CUCTX_CUDA_CHECK(cudaMemcpy2DAsync(
        dst, dst_stride * sizeof(Real), src, src_stride * sizeof(Real), cols_ * sizeof(Real), rows_,
        cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(CuDevice::Instantiate().Stream())));
  }

  MatrixIndexT rows_, cols_, stride_;
  size_t count_;
  Real* data_ = nullptr;
  Real* scratch_ = nullptr;
};

const char* KindName(int kind) {
  static const char* const kNames[] = {"CuNcclComm::AllReduce", "CuNcclComm::Broadcast",
                                       "CuNcclComm::AllGather", "CuNcclComm::ReduceScatter"};
  return kNames[kind];
}

std::string ShapeText(int64 rows, int64 cols) {
  return std::to_string(rows) + "x" + std::to_string(cols);
}

// Whether [a, a + a_bytes) and [b, b + b_bytes) share a byte.
bool Overlap(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  const char* pa = static_cast<const char*>(a);
  const char* pb = static_cast<const char*>(b);
  return a_bytes > 0 && b_bytes > 0 && pa < pb + b_bytes && pb < pa + a_bytes;
}

}  // namespace

// ---- CuNcclUniqueId::Create and CuNcclComm --------------------------------------------------

CuNcclUniqueId CuNcclUniqueId::Create() {
  const NcclApi& api = Api();
  ncclUniqueId raw;
  static_assert(sizeof(raw) == kBytes, "ncclUniqueId is not 128 bytes");
  CUCTX_NCCL_CHECK("ncclGetUniqueId", (Site{nullptr, -1, 0, CurrentDevice()}),
                   api.get_unique_id(&raw));
  CuNcclUniqueId id;
  std::memcpy(id.bytes_, &raw, kBytes);
  return id;
}

int CuNcclComm::NcclVersion() { return Api().version; }

CuNcclComm::CuNcclComm(void* comm, int num_ranks, int rank, int device_id)
    : comm_(comm), num_ranks_(num_ranks), rank_(rank), device_id_(device_id) {}

CuNcclComm::CuNcclComm(const CuNcclUniqueId& id, int num_ranks, int rank) {
  if (num_ranks < 1) CUCTX_ERR << "CuNcclComm: num_ranks must be >= 1, got " << num_ranks;
  if (rank < 0 || rank >= num_ranks)
    CUCTX_ERR << "CuNcclComm: rank must be in [0, " << num_ranks << "), got " << rank;
  RequireGpu("CuNcclComm");
  const int device = CuDevice::Instantiate().DeviceId();
  const NcclApi& api = Api();
  // ncclCommInitRank joins on the current CUDA device; make sure it is this thread's device.
  CUCTX_CUDA_CHECK(cudaSetDevice(device));
  ncclUniqueId raw;
  std::memcpy(&raw, id.Bytes(), CuNcclUniqueId::kBytes);
  ncclComm_t comm = nullptr;
  CUCTX_NCCL_CHECK("ncclCommInitRank", (Site{nullptr, rank, num_ranks, device}),
                   api.comm_init_rank(&comm, num_ranks, raw, rank));
  comm_ = comm;
  num_ranks_ = num_ranks;
  rank_ = rank;
  device_id_ = device;
}

std::vector<std::unique_ptr<CuNcclComm>> CuNcclComm::CreateForThreads(
    const std::vector<int>& device_ids) {
  if (device_ids.empty()) CUCTX_ERR << "CuNcclComm::CreateForThreads: no device ids given";
  RequireGpu("CuNcclComm::CreateForThreads");
  const int count = CuDevice::DeviceCount();
  for (size_t k = 0; k < device_ids.size(); ++k) {
    if (device_ids[k] < 0 || device_ids[k] >= count)
      CUCTX_ERR << "CuNcclComm::CreateForThreads: device_ids[" << k << "] = " << device_ids[k]
                << " is out of range: " << count << " device(s) visible";
    for (size_t j = 0; j < k; ++j)
      if (device_ids[j] == device_ids[k])
        CUCTX_ERR << "CuNcclComm::CreateForThreads: device " << device_ids[k]
                  << " is listed twice (device_ids[" << j << "] and [" << k << "])";
  }
  const NcclApi& api = Api();
  const int n = static_cast<int>(device_ids.size());
  std::vector<ncclComm_t> raw(n, nullptr);
  const int device = CurrentDevice();
  CUCTX_NCCL_CHECK("ncclCommInitAll", (Site{nullptr, -1, n, device}),
                   api.comm_init_all(raw.data(), n, device_ids.data()));
  // ncclCommInitAll visits every device; leave this thread on its own.
  if (device >= 0 && CurrentDevice() != device) CUCTX_CUDA_CHECK(cudaSetDevice(device));
  std::vector<std::unique_ptr<CuNcclComm>> comms;
  comms.reserve(n);
  for (int k = 0; k < n; ++k)
    comms.emplace_back(new CuNcclComm(static_cast<void*>(raw[k]), n, k, device_ids[k]));
  return comms;
}

CuNcclComm::~CuNcclComm() {
  if (comm_ == nullptr) return;
  try {
    const int device = CurrentDevice();
    const ncclResult_t r = Api().comm_destroy(static_cast<ncclComm_t>(comm_));
    if (device >= 0 && CurrentDevice() != device) CUCTX_CUDA_CHECK_NOTHROW(cudaSetDevice(device));
    if (r != ncclSuccess)
      CUCTX_WARN << "ncclCommDestroy failed for rank " << rank_ << " of " << num_ranks_ << " (GPU "
                 << device_id_ << "): " << ResultName(r) << " (" << Api().get_error_string(r)
                 << ")";
  } catch (const std::exception& e) {
    CUCTX_WARN << "destroying the NCCL communicator of rank " << rank_ << ": " << e.what();
  }
}

void CuNcclComm::CheckThreadDevice(const char* what) const {
  if (aborted_ || comm_ == nullptr)
    CUCTX_ERR << what << ": the communicator of rank " << rank_ << " of " << num_ranks_
              << " was aborted";
  const int device = CuDevice::Instantiate().DeviceId();
  if (device != device_id_)
    CUCTX_ERR << what << ": comm of rank " << rank_ << " is on GPU " << device_id_
              << " but this thread uses GPU " << device << (device < 0 ? " (none)" : "")
              << "; bind the thread with SelectGpuIdForThread(" << device_id_ << ")";
}

void CuNcclComm::CheckRoot(const char* what, int root) const {
  if (root < 0 || root >= num_ranks_)
    CUCTX_ERR << what << ": root must be a rank in [0, " << num_ranks_ << "), got " << root;
}

void CuNcclComm::CheckAsyncError() {
  if (aborted_ || comm_ == nullptr)
    CUCTX_ERR << "CheckAsyncError: the communicator of rank " << rank_ << " was aborted";
  ncclComm_t comm = static_cast<ncclComm_t>(comm_);
  const Site site{comm, rank_, num_ranks_, device_id_};
  ncclResult_t async = ncclSuccess;
  CUCTX_NCCL_CHECK("ncclCommGetAsyncError", site, Api().comm_get_async_error(comm, &async));
  if (async != ncclSuccess && async != ncclInProgress)
    ThrowNccl("an earlier collective (ncclCommGetAsyncError)", async, site, __func__, __FILE__,
              __LINE__);
}

void CuNcclComm::Abort() {
  if (comm_ == nullptr) return;
  ncclComm_t comm = static_cast<ncclComm_t>(comm_);
  comm_ = nullptr;
  aborted_ = true;
  CUCTX_NCCL_CHECK("ncclCommAbort", (Site{nullptr, rank_, num_ranks_, device_id_}),
                   Api().comm_abort(comm));
}

void CuNcclComm::Enqueue(Kind kind, const void* send, void* recv, size_t count, bool is_double,
                         CuNcclOp op, int root) {
  const NcclApi& api = Api();
  ncclComm_t comm = static_cast<ncclComm_t>(comm_);
  const ncclDataType_t type = is_double ? ncclFloat64 : ncclFloat32;
  // cudaStreamPerThread names the calling thread's stream; NCCL resolves it on this thread
  // because the communicator is blocking (the default), so the kernels run from this thread.
  cudaStream_t stream = static_cast<cudaStream_t>(CuDevice::Instantiate().Stream());
  const Site site{comm, rank_, num_ranks_, device_id_};
  switch (kind) {
    case Kind::kAllReduce:
      CUCTX_NCCL_CHECK("ncclAllReduce", site,
                       api.all_reduce(send, recv, count, type, NcclOpOf(op), comm, stream));
      break;
    case Kind::kBroadcast:
      CUCTX_NCCL_CHECK("ncclBroadcast", site,
                       api.broadcast(send, recv, count, type, root, comm, stream));
      break;
    case Kind::kAllGather:
      CUCTX_NCCL_CHECK("ncclAllGather", site,
                       api.all_gather(send, recv, count, type, comm, stream));
      break;
    case Kind::kReduceScatter:
      CUCTX_NCCL_CHECK("ncclReduceScatter", site,
                       api.reduce_scatter(send, recv, count, type, NcclOpOf(op), comm, stream));
      break;
  }
  // In sync-check mode a fault shows at the collective that caused it, as for kernel launches.
  if (internal::SyncChecksEnabled()) CUCTX_CUDA_CHECK(cudaStreamSynchronize(stream));
}

template <typename Real>
void CuNcclComm::MatrixCollective(Kind kind, const CuMatrixBase<Real>& send,
                                  CuMatrixBase<Real>* recv, CuNcclOp op, int root) {
  const char* name = KindName(static_cast<int>(kind));
  internal::CuOpScope op_scope(name);
  CheckThreadDevice(name);
  const int n = num_ranks_;
  switch (kind) {
    case Kind::kAllReduce:
      break;
    case Kind::kBroadcast:
      CheckRoot(name, root);
      break;
    case Kind::kAllGather:
      if (recv->NumRows() != static_cast<int64>(n) * send.NumRows() ||
          recv->NumCols() != send.NumCols())
        CUCTX_ERR << name << ": recv must be NumRanks() * send.NumRows() x send.NumCols() = " << n
                  << " * " << send.NumRows() << " x " << send.NumCols() << " = "
                  << ShapeText(static_cast<int64>(n) * send.NumRows(), send.NumCols())
                  << " (send is " << ShapeText(send.NumRows(), send.NumCols()) << "), got "
                  << ShapeText(recv->NumRows(), recv->NumCols());
      break;
    case Kind::kReduceScatter:
      if (send.NumRows() != static_cast<int64>(n) * recv->NumRows() ||
          send.NumCols() != recv->NumCols())
        CUCTX_ERR << name << ": send must be NumRanks() * recv.NumRows() x recv.NumCols() = " << n
                  << " * " << recv->NumRows() << " x " << recv->NumCols() << " = "
                  << ShapeText(static_cast<int64>(n) * recv->NumRows(), recv->NumCols())
                  << " (recv is " << ShapeText(recv->NumRows(), recv->NumCols()) << "), got "
                  << ShapeText(send.NumRows(), send.NumCols());
      break;
  }
  const bool in_place = kind == Kind::kAllReduce || kind == Kind::kBroadcast;
  if (!in_place && Overlap(send.Data(), send.SizeInBytes(), recv->Data(), recv->SizeInBytes()))
    CUCTX_ERR << name << ": send and recv overlap";
  if (recv->NumRows() == 0 || recv->NumCols() == 0) return;
  const bool is_double = sizeof(Real) == sizeof(double);
  if (in_place) {
    // Broadcast overwrites every rank but the root: only the root's elements need packing.
    const bool copy_in = kind == Kind::kAllReduce || rank_ == root;
    ContiguousRows<Real> buf(*recv, copy_in);
    Enqueue(kind, buf.Data(), buf.Data(), buf.Count(), is_double, op, root);
    if (kind == Kind::kAllReduce || rank_ != root) buf.CopyOut(recv);
    return;
  }
  ContiguousRows<Real> in(send, true);
  ContiguousRows<Real> out(*recv, false);
  const size_t count = kind == Kind::kAllGather ? in.Count() : out.Count();
  Enqueue(kind, in.Data(), out.Data(), count, is_double, op, root);
  out.CopyOut(recv);
}

template <typename Real>
void CuNcclComm::VectorCollective(Kind kind, const CuVectorBase<Real>& send,
                                  CuVectorBase<Real>* recv, CuNcclOp op, int root) {
  const char* name = KindName(static_cast<int>(kind));
  internal::CuOpScope op_scope(name);
  CheckThreadDevice(name);
  const int n = num_ranks_;
  switch (kind) {
    case Kind::kAllReduce:
      break;
    case Kind::kBroadcast:
      CheckRoot(name, root);
      break;
    case Kind::kAllGather:
      if (recv->Dim() != static_cast<int64>(n) * send.Dim())
        CUCTX_ERR << name << ": recv.Dim() must be NumRanks() * send.Dim() = " << n << " * "
                  << send.Dim() << " = " << static_cast<int64>(n) * send.Dim() << ", got "
                  << recv->Dim();
      break;
    case Kind::kReduceScatter:
      if (send.Dim() != static_cast<int64>(n) * recv->Dim())
        CUCTX_ERR << name << ": send.Dim() must be NumRanks() * recv.Dim() = " << n << " * "
                  << recv->Dim() << " = " << static_cast<int64>(n) * recv->Dim() << ", got "
                  << send.Dim();
      break;
  }
  const bool in_place = kind == Kind::kAllReduce || kind == Kind::kBroadcast;
  if (!in_place &&
      Overlap(send.Data(), send.Dim() * sizeof(Real), recv->Data(), recv->Dim() * sizeof(Real)))
    CUCTX_ERR << name << ": send and recv overlap";
  if (recv->Dim() == 0) return;
  const size_t count = static_cast<size_t>(kind == Kind::kAllGather ? send.Dim() : recv->Dim());
  Enqueue(kind, send.Data(), recv->Data(), count, sizeof(Real) == sizeof(double), op, root);
}

#define CUCTX_NCCL_INSTANTIATE_(Real)                                                      \
  void CuNcclComm::AllReduce(CuMatrixBase<Real>* m, CuNcclOp op) {                         \
    CUCTX_CHECK(m != nullptr) << "AllReduce: the matrix is null";                          \
    MatrixCollective(Kind::kAllReduce, *m, m, op, 0);                                      \
  }                                                                                        \
  void CuNcclComm::AllReduce(CuVectorBase<Real>* v, CuNcclOp op) {                         \
    CUCTX_CHECK(v != nullptr) << "AllReduce: the vector is null";                          \
    VectorCollective(Kind::kAllReduce, *v, v, op, 0);                                      \
  }                                                                                        \
  void CuNcclComm::Broadcast(CuMatrixBase<Real>* m, int root) {                            \
    CUCTX_CHECK(m != nullptr) << "Broadcast: the matrix is null";                          \
    MatrixCollective(Kind::kBroadcast, *m, m, CuNcclOp::kSum, root);                       \
  }                                                                                        \
  void CuNcclComm::Broadcast(CuVectorBase<Real>* v, int root) {                            \
    CUCTX_CHECK(v != nullptr) << "Broadcast: the vector is null";                          \
    VectorCollective(Kind::kBroadcast, *v, v, CuNcclOp::kSum, root);                       \
  }                                                                                        \
  void CuNcclComm::AllGather(const CuMatrixBase<Real>& send, CuMatrixBase<Real>* recv) {   \
    CUCTX_CHECK(recv != nullptr) << "AllGather: recv is null";                             \
    MatrixCollective(Kind::kAllGather, send, recv, CuNcclOp::kSum, 0);                     \
  }                                                                                        \
  void CuNcclComm::AllGather(const CuVectorBase<Real>& send, CuVectorBase<Real>* recv) {   \
    CUCTX_CHECK(recv != nullptr) << "AllGather: recv is null";                             \
    VectorCollective(Kind::kAllGather, send, recv, CuNcclOp::kSum, 0);                     \
  }                                                                                        \
  void CuNcclComm::ReduceScatter(const CuMatrixBase<Real>& send, CuMatrixBase<Real>* recv, \
                                 CuNcclOp op) {                                            \
    CUCTX_CHECK(recv != nullptr) << "ReduceScatter: recv is null";                         \
    MatrixCollective(Kind::kReduceScatter, send, recv, op, 0);                             \
  }                                                                                        \
  void CuNcclComm::ReduceScatter(const CuVectorBase<Real>& send, CuVectorBase<Real>* recv, \
                                 CuNcclOp op) {                                            \
    CUCTX_CHECK(recv != nullptr) << "ReduceScatter: recv is null";                         \
    VectorCollective(Kind::kReduceScatter, send, recv, op, 0);                             \
  }

CUCTX_NCCL_INSTANTIATE_(float)
CUCTX_NCCL_INSTANTIATE_(double)
#undef CUCTX_NCCL_INSTANTIATE_

#else  // !CUCTX_HAVE_NCCL

// ---- a build without NCCL: the same API, every NCCL entry point throws ----------------------

namespace {

[[noreturn]] void NoNccl(const char* what) {
  CUCTX_ERR << what << ": cuctx was built without NCCL (CUDA=0 or no nccl.h)";
}

}  // namespace

namespace internal {
void* NcclFunction(const char* name) { NoNccl(name); }
}  // namespace internal

CuNcclUniqueId CuNcclUniqueId::Create() { NoNccl("CuNcclUniqueId::Create"); }
int CuNcclComm::NcclVersion() { NoNccl("CuNcclComm::NcclVersion"); }

CuNcclComm::CuNcclComm(void* comm, int num_ranks, int rank, int device_id)
    : comm_(comm), num_ranks_(num_ranks), rank_(rank), device_id_(device_id) {}
CuNcclComm::CuNcclComm(const CuNcclUniqueId&, int, int) { NoNccl("CuNcclComm"); }
std::vector<std::unique_ptr<CuNcclComm>> CuNcclComm::CreateForThreads(const std::vector<int>&) {
  NoNccl("CuNcclComm::CreateForThreads");
}
CuNcclComm::~CuNcclComm() = default;
void CuNcclComm::CheckThreadDevice(const char* what) const { NoNccl(what); }
void CuNcclComm::CheckAsyncError() { NoNccl("CuNcclComm::CheckAsyncError"); }
void CuNcclComm::Abort() { NoNccl("CuNcclComm::Abort"); }
void CuNcclComm::Enqueue(Kind, const void*, void*, size_t, bool, CuNcclOp, int) {
  NoNccl("CuNcclComm::Enqueue");
}

#define CUCTX_NCCL_STUBS_(Real)                                                              \
  void CuNcclComm::AllReduce(CuMatrixBase<Real>*, CuNcclOp) { NoNccl("AllReduce"); }         \
  void CuNcclComm::AllReduce(CuVectorBase<Real>*, CuNcclOp) { NoNccl("AllReduce"); }         \
  void CuNcclComm::Broadcast(CuMatrixBase<Real>*, int) { NoNccl("Broadcast"); }              \
  void CuNcclComm::Broadcast(CuVectorBase<Real>*, int) { NoNccl("Broadcast"); }              \
  void CuNcclComm::AllGather(const CuMatrixBase<Real>&, CuMatrixBase<Real>*) {               \
    NoNccl("AllGather");                                                                     \
  }                                                                                          \
  void CuNcclComm::AllGather(const CuVectorBase<Real>&, CuVectorBase<Real>*) {               \
    NoNccl("AllGather");                                                                     \
  }                                                                                          \
  void CuNcclComm::ReduceScatter(const CuMatrixBase<Real>&, CuMatrixBase<Real>*, CuNcclOp) { \
    NoNccl("ReduceScatter");                                                                 \
  }                                                                                          \
  void CuNcclComm::ReduceScatter(const CuVectorBase<Real>&, CuVectorBase<Real>*, CuNcclOp) { \
    NoNccl("ReduceScatter");                                                                 \
  }

CUCTX_NCCL_STUBS_(float)
CUCTX_NCCL_STUBS_(double)
#undef CUCTX_NCCL_STUBS_

#endif  // CUCTX_HAVE_NCCL

}  // namespace cuctx
