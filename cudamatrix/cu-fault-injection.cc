// cudamatrix/cu-fault-injection.cc: FaultInjector's process-wide mode and counters, and the
// fault-injecting upstream (see cu-fault-injection.h).
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-fault-injection.h"

#include "base/error.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <utility>
#include <vector>

namespace cuctx {

namespace {

constexpr int kNumSites = static_cast<int>(FaultSite::kNumSites);
constexpr uint32 kAllSites = (1u << kNumSites) - 1;
// cudaErrorLaunchFailure: the status of an injected CudaError (a value the CUDA runtime uses, so
// that code checking Status() sees an ordinary failure).
constexpr int kInjectedStatus = 719;

struct State {
  std::mutex mutex;  // guards `options` and the order of Configure calls
  FaultInjectionOptions options;
  std::atomic<bool> enabled{false};
  std::atomic<uint32> sites{kAllSites};
  std::atomic<int64> nth{0};
  std::atomic<int64> one_in{0};
  std::atomic<uint64> seed{1};
  std::atomic<int64> selected_calls{0};  // calls at the selected sites since Configure
  std::atomic<int64> calls[kNumSites];
  std::atomic<int64> failures[kNumSites];
  std::atomic<int64> last_failed_call[kNumSites];
};

State& TheState() {
  static State* state = new State();  // zeroed; never destroyed: sites may be asked during exit
  return *state;
}

uint32 ParseSites(const std::string& sites) {
  if (sites == "all" || sites.empty()) return kAllSites;
  uint32 mask = 0;
  std::string name;
  std::istringstream is(sites);
  while (std::getline(is, name, '+')) {
    std::istringstream parts(name);
    std::string part;
    while (std::getline(parts, part, ',')) {
      bool found = false;
      for (int s = 0; s < kNumSites; ++s) {
        if (part == FaultSiteName(static_cast<FaultSite>(s))) {
          mask |= 1u << s;
          found = true;
        }
      }
      if (part == "all") {
        mask = kAllSites;
        found = true;
      }
      if (!found)
        CUCTX_ERR << "fault injection: unknown site '" << part << "' in '" << sites
                  << "': expected all or device, vmm, stream, pinned, event joined by '+'";
    }
  }
  return mask;
}

void Apply(const FaultInjectionOptions& o) {
  State& st = TheState();
  st.enabled.store(false, std::memory_order_relaxed);
  st.options = o;
  st.sites.store(ParseSites(o.sites), std::memory_order_relaxed);
  st.nth.store(o.nth, std::memory_order_relaxed);
  st.one_in.store(o.one_in, std::memory_order_relaxed);
  st.seed.store(o.seed, std::memory_order_relaxed);
  st.selected_calls.store(0, std::memory_order_relaxed);
  for (int s = 0; s < kNumSites; ++s) {
    st.calls[s].store(0, std::memory_order_relaxed);
    st.failures[s].store(0, std::memory_order_relaxed);
    st.last_failed_call[s].store(0, std::memory_order_relaxed);
  }
  st.enabled.store(o.Active(), std::memory_order_release);
}

void ReadEnvironmentOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* env = std::getenv("CUCTX_FAULT_INJECT");
    if (env == nullptr || *env == '\0') return;
    FaultInjectionOptions o;
    try {
      o = FaultInjectionOptions::Parse(env);
    } catch (const Error& e) {
      CUCTX_ERR << "CUCTX_FAULT_INJECT='" << env << "': " << e.Message();
    }
    State& st = TheState();
    std::lock_guard<std::mutex> lock(st.mutex);
    Apply(o);
    CUCTX_WARN << "CUCTX_FAULT_INJECT='" << env << "': injecting failures into the allocator "
               << "layer's device calls";
  });
}

uint64 Mix(uint64 x) {  // splitmix64's finalizer
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The upstream wrapper: fails the device, vmm and stream sites.
class FaultInjectingUpstream : public CuAllocatorUpstream {
 public:
  explicit FaultInjectingUpstream(std::unique_ptr<CuAllocatorUpstream> inner)
      : inner_(std::move(inner)) {}

  void* Allocate(size_t bytes) override {
    if (FaultInjector::ShouldFail(FaultSite::kDevice)) return nullptr;
    return inner_->Allocate(bytes);
  }
  void Release(void* ptr, size_t bytes) noexcept override { inner_->Release(ptr, bytes); }
  void SynchronizeAllStreams() override {
    if (FaultInjector::ShouldFail(FaultSite::kStream))
      FaultInjector::Throw(FaultSite::kStream, "SynchronizeAllStreams (the sync kernel's launch)");
    inner_->SynchronizeAllStreams();
  }
  void MemoryInfo(size_t* free_bytes, size_t* total_bytes) override {
    if (FaultInjector::ShouldFail(FaultSite::kDevice))
      FaultInjector::Throw(FaultSite::kDevice, "cudaMemGetInfo(&free_bytes, &total_bytes)");
    inner_->MemoryInfo(free_bytes, total_bytes);
  }
  uint64 CurrentThreadId() override { return inner_->CurrentThreadId(); }
  std::string Name() const override { return inner_->Name() + " (fault injection)"; }
  void GrantPeerAccess(int peer) override { inner_->GrantPeerAccess(peer); }
  size_t MapGranularity() const override { return inner_->MapGranularity(); }
  void* Reserve(size_t bytes) override {
    if (FaultInjector::ShouldFail(FaultSite::kVmm)) return nullptr;
    return inner_->Reserve(bytes);
  }
  bool Map(void* addr, size_t bytes) override {
    if (FaultInjector::ShouldFail(FaultSite::kVmm)) return false;
    return inner_->Map(addr, bytes);
  }
  void Unmap(const std::vector<std::pair<void*, size_t>>& ranges) noexcept override {
    inner_->Unmap(ranges);
  }
  void Unreserve(void* base, size_t bytes) noexcept override { inner_->Unreserve(base, bytes); }

 private:
  std::unique_ptr<CuAllocatorUpstream> inner_;
};

}  // namespace

const char* FaultSiteName(FaultSite site) {
  switch (site) {
    case FaultSite::kDevice:
      return "device";
    case FaultSite::kVmm:
      return "vmm";
    case FaultSite::kStream:
      return "stream";
    case FaultSite::kPinned:
      return "pinned";
    case FaultSite::kEvent:
      return "event";
    default:
      return "?";
  }
}

FaultInjectionOptions FaultInjectionOptions::Parse(const std::string& spec) {
  FaultInjectionOptions o;
  std::string item;
  std::string normalized = spec;
  for (char& c : normalized)
    if (c == ';') c = ',';
  // Items are split at ',' unless the ',' continues a sites list (sites=device,vmm is allowed
  // only with '+'; a bare name after a ',' is taken as another site).
  std::istringstream is(normalized);
  std::string last_key;
  while (std::getline(is, item, ',')) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      if (last_key == "sites") {
        o.sites += "+" + item;
        continue;
      }
      CUCTX_ERR << "fault injection: '" << item << "' in '" << spec
                << "' is not key=value (keys: nth, one_in, seed, sites)";
    }
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    last_key = key;
    char* end = nullptr;
    if (key == "sites") {
      o.sites = value;
      continue;
    }
    const long long n = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0')
      CUCTX_ERR << "fault injection: '" << item << "' in '" << spec << "': expected an integer";
    if (key == "nth")
      o.nth = n;
    else if (key == "one_in")
      o.one_in = n;
    else if (key == "seed")
      o.seed = static_cast<uint64>(n);
    else
      CUCTX_ERR << "fault injection: unknown key '" << key << "' in '" << spec
                << "' (keys: nth, one_in, seed, sites)";
  }
  o.Check();
  return o;
}

void FaultInjectionOptions::Check() const {
  if (nth < 0) CUCTX_ERR << "fault injection: nth=" << nth << " must be >= 0";
  if (one_in < 0) CUCTX_ERR << "fault injection: one_in=" << one_in << " must be >= 0";
  if (nth > 0 && one_in > 0)
    CUCTX_ERR << "fault injection: nth=" << nth << " and one_in=" << one_in
              << " are both set; choose one mode";
  ParseSites(sites);
}

void FaultInjector::Configure(const FaultInjectionOptions& options) {
  options.Check();
  ReadEnvironmentOnce();
  State& st = TheState();
  std::lock_guard<std::mutex> lock(st.mutex);
  Apply(options);
}

void FaultInjector::Disable() { Configure(FaultInjectionOptions()); }

bool FaultInjector::Enabled() {
  ReadEnvironmentOnce();
  return TheState().enabled.load(std::memory_order_acquire);
}

bool FaultInjector::ShouldFail(FaultSite site) {
  if (!Enabled()) return false;
  State& st = TheState();
  const int s = static_cast<int>(site);
  st.calls[s].fetch_add(1, std::memory_order_relaxed);
  if ((st.sites.load(std::memory_order_relaxed) & (1u << s)) == 0) return false;
  const int64 call = st.selected_calls.fetch_add(1, std::memory_order_relaxed) + 1;
  const int64 nth = st.nth.load(std::memory_order_relaxed);
  const int64 one_in = st.one_in.load(std::memory_order_relaxed);
  bool fail = false;
  if (nth > 0) fail = call == nth;
  if (one_in > 0)
    fail = Mix(st.seed.load(std::memory_order_relaxed) ^ Mix(static_cast<uint64>(call))) %
               static_cast<uint64>(one_in) ==
           0;
  if (fail) {
    st.failures[s].fetch_add(1, std::memory_order_relaxed);
    st.last_failed_call[s].store(call, std::memory_order_relaxed);
  }
  return fail;
}

void FaultInjector::Throw(FaultSite site, const char* call) {
  const int s = static_cast<int>(site);
  std::ostringstream msg;
  msg << "injected fault (cuctx fault injection): " << call << " failed at site "
      << FaultSiteName(site) << ", call #"
      << TheState().last_failed_call[s].load(std::memory_order_relaxed);
  throw CudaError(internal::WithOrigin(msg.str(), __func__, __FILE__, __LINE__), "CUDA",
                  kInjectedStatus);
}

int64 FaultInjector::Counters::TotalFailures() const {
  int64 total = 0;
  for (int64 f : failures) total += f;
  return total;
}

FaultInjector::Counters FaultInjector::GetCounters() {
  State& st = TheState();
  Counters c;
  for (int s = 0; s < kNumSites; ++s) {
    c.calls[s] = st.calls[s].load(std::memory_order_relaxed);
    c.failures[s] = st.failures[s].load(std::memory_order_relaxed);
  }
  return c;
}

ScopedFaultInjection::ScopedFaultInjection(const FaultInjectionOptions& options) {
  ReadEnvironmentOnce();
  {
    State& st = TheState();
    std::lock_guard<std::mutex> lock(st.mutex);
    previous_ = st.options;
  }
  FaultInjector::Configure(options);
}

ScopedFaultInjection::~ScopedFaultInjection() {
  try {
    FaultInjector::Configure(previous_);
  } catch (...) {
    // previous_ was valid when it was active; nothing to report from a destructor.
  }
}

std::unique_ptr<CuAllocatorUpstream> NewFaultInjectingUpstream(
    std::unique_ptr<CuAllocatorUpstream> inner) {
  CUCTX_CHECK(inner != nullptr) << "NewFaultInjectingUpstream needs an upstream to wrap";
  return std::make_unique<FaultInjectingUpstream>(std::move(inner));
}

}  // namespace cuctx
