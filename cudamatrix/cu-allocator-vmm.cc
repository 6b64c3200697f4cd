// cudamatrix/cu-allocator-vmm.cc: the VMM upstream of CuMemoryAllocator: expandable regions over
// the CUDA driver's virtual memory management API.
// SPDX-License-Identifier: Apache-2.0
//
// Reserve() takes address space (cuMemAddressReserve); Map() backs it granule by granule with
// physical memory (cuMemCreate + cuMemMap, one allocation per granule so that any granule can be
// unmapped on its own later) and grants access (cuMemSetAccess) to every device in the access
// list: the owning device and the peers CuDevice connected it to (GrantPeerAccess). The handle of each granule is released right
// after it is mapped: the driver keeps the memory while the mapping exists and frees it at
// cuMemUnmap, so nothing here has to remember handles. Allocate()/Release() (pass-through mode),
// SynchronizeAllStreams() and MemoryInfo() are those of the cudaMalloc upstream.
//
// The driver functions come through cudaGetDriverEntryPointByVersion (internal/cu-driver.h), so
// the library links and runs without libcuda; NewVmmAllocatorUpstream() then says why not.
// The only file that may call the driver's cuMem* functions (tools/lint.sh; the other places that
// may call cudaMalloc/cudaFree are listed in cu-allocator-upstream.h).
#include "base/error.h"
#include "cudamatrix/cu-allocator-upstream.h"
#include "cudamatrix/cu-fault-injection.h"

#include <utility>

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-thread-state.h"
#include "cudamatrix/internal/cu-capture-gate.h"
#include "cudamatrix/internal/cu-device-scope.h"
#include "cudamatrix/internal/cu-driver.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <mutex>
#include <set>
#include <sstream>
#endif

namespace cuctx {

#if CUCTX_HAVE_CUDA
namespace {

// The driver functions this upstream calls, looked up once per process.
struct VmmDriverApi {
  decltype(&cuDeviceGet) DeviceGet = nullptr;
  decltype(&cuDeviceGetAttribute) DeviceGetAttribute = nullptr;
  decltype(&cuMemGetAllocationGranularity) GetAllocationGranularity = nullptr;
  decltype(&cuMemAddressReserve) AddressReserve = nullptr;
  decltype(&cuMemAddressFree) AddressFree = nullptr;
  decltype(&cuMemCreate) Create = nullptr;
  decltype(&cuMemRelease) Release = nullptr;
  decltype(&cuMemMap) Map = nullptr;
  decltype(&cuMemUnmap) Unmap = nullptr;
  decltype(&cuMemSetAccess) SetAccess = nullptr;
  std::string why_not;  // empty when every function was found

  VmmDriverApi() {
    using internal::LoadDriverFunction;
    (void)(LoadDriverFunction("cuDeviceGet", &DeviceGet, &why_not) &&
           LoadDriverFunction("cuDeviceGetAttribute", &DeviceGetAttribute, &why_not) &&
           LoadDriverFunction("cuMemGetAllocationGranularity", &GetAllocationGranularity,
                              &why_not) &&
           LoadDriverFunction("cuMemAddressReserve", &AddressReserve, &why_not) &&
           LoadDriverFunction("cuMemAddressFree", &AddressFree, &why_not) &&
           LoadDriverFunction("cuMemCreate", &Create, &why_not) &&
           LoadDriverFunction("cuMemRelease", &Release, &why_not) &&
           LoadDriverFunction("cuMemMap", &Map, &why_not) &&
           LoadDriverFunction("cuMemUnmap", &Unmap, &why_not) &&
           LoadDriverFunction("cuMemSetAccess", &SetAccess, &why_not));
  }
};

const VmmDriverApi& DriverApi() {
  static const VmmDriverApi api;
  return api;
}

CUdeviceptr Address(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

class VmmAllocatorUpstream : public CuAllocatorUpstream {
 public:
  // `device`: the runtime's ordinal of the calling thread's device; `cu_device` its driver handle.
  VmmAllocatorUpstream(int device, CUdevice cu_device, size_t granule,
                       std::unique_ptr<CuAllocatorUpstream> cuda)
      : api_(DriverApi()), device_(device), granule_(granule), cuda_(std::move(cuda)) {
    prop_ = PhysicalProperties(cu_device);
    size_t free_bytes = 0;
    cuda_->MemoryInfo(&free_bytes, &total_bytes_);
    CUmemAccessDesc own = {};
    own.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    own.location.id = cu_device;
    own.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    access_.push_back(own);
  }

  static CUmemAllocationProp PhysicalProperties(CUdevice cu_device) {
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = cu_device;
    return prop;
  }

  // Pass-through mode and everything that is not about mapping: the cudaMalloc upstream.
  void* Allocate(size_t bytes) override { return cuda_->Allocate(bytes); }
  void Release(void* ptr, size_t bytes) noexcept override { cuda_->Release(ptr, bytes); }
  void SynchronizeAllStreams() override { cuda_->SynchronizeAllStreams(); }
  void MemoryInfo(size_t* free_bytes, size_t* total_bytes) override {
    cuda_->MemoryInfo(free_bytes, total_bytes);
  }

  std::string Name() const override {
    std::ostringstream name;
    name << "CUDA device " << device_ << " (VMM)";
    return name.str();
  }

  size_t MapGranularity() const override { return granule_; }

  void* Reserve(size_t bytes) override {
    CUdeviceptr p = 0;
    const CUresult r = api_.AddressReserve(&p, bytes, granule_, 0, 0);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) return nullptr;
    CUCTX_CU_CHECK(r);
    return reinterpret_cast<void*>(p);
  }

  void GrantPeerAccess(int peer) override {
    std::lock_guard<std::mutex> lock(access_mutex_);
    CUdevice cu_peer = 0;
    CUCTX_CU_CHECK(api_.DeviceGet(&cu_peer, peer));
    for (const CUmemAccessDesc& d : access_)
      if (d.location.id == cu_peer) return;
    CUmemAccessDesc desc = {};
    desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    desc.location.id = cu_peer;
    desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    // Memory mapped so far: one call per granule (each was mapped on its own).
    for (char* granule : mapped_)
      CUCTX_CU_CHECK(api_.SetAccess(Address(granule), granule_, &desc, 1));
    access_.push_back(desc);
  }

  bool Map(void* addr, size_t bytes) override {
    // More than the device's memory can never be mapped: say so at once. Granule by granule,
    // the driver refuses only once all free memory is mapped, which must then be unmapped again:
    // for such a request (the soak's provoked out-of-memory errors) every free 2 MiB granule
    // created, mapped and unmapped, with the allocator's mutex held, in each of the allocator's
    // attempts before it throws OutOfMemoryError. (Asking for the free memory here instead would
    // be a runtime call during other threads' global-mode captures.)
    if (bytes > total_bytes_) return false;
    std::lock_guard<std::mutex> lock(access_mutex_);
    char* const begin = static_cast<char*>(addr);
    size_t done = 0;
    for (; done < bytes; done += granule_) {
      CUmemGenericAllocationHandle h = 0;
      const CUresult r = api_.Create(&h, granule_, &prop_, 0);
      if (r == CUDA_ERROR_OUT_OF_MEMORY) {
        UnmapGranules(begin, done);  // never used by any kernel: no wait needed
        return false;
      }
      CUCTX_CU_CHECK(r);
      const CUresult m = api_.Map(Address(begin + done), granule_, 0, h, 0);
      // The mapping holds the memory from here on; cuMemUnmap frees it.
      CUCTX_CU_CHECK_NOTHROW(api_.Release(h));
      if (m != CUDA_SUCCESS) {
        UnmapGranules(begin, done);
        CUCTX_CU_CHECK(m);
      }
    }
    const CUresult a = api_.SetAccess(Address(begin), bytes, access_.data(), access_.size());
    if (a != CUDA_SUCCESS) {
      UnmapGranules(begin, bytes);
      if (a == CUDA_ERROR_OUT_OF_MEMORY) return false;
      CUCTX_CU_CHECK(a);
    }
    for (size_t off = 0; off < bytes; off += granule_) mapped_.insert(begin + off);
    return true;
  }

  void Unmap(const std::vector<std::pair<void*, size_t>>& ranges) noexcept override {
    // Kernels queued by any thread may still use the memory; cuMemUnmap does not wait for them.
    // CUDA refuses the device sync while a graph capture runs: wait for captures to end. A
    // capturing thread unmaps only its graph's private pool, which no device work has used yet.
    auto unmap = [&] {
      std::lock_guard<std::mutex> lock(access_mutex_);
      for (const auto& range : ranges) UnmapGranules(static_cast<char*>(range.first), range.second);
    };
    try {
      if (internal::ThreadCapturing())
        internal::RunInRelaxedCaptureMode(unmap);
      else
        internal::OutsideCapturesToRelease(device_, [&] {
          internal::DeviceScope scope(device_);  // the thread may belong to another device
          CUCTX_CUDA_CHECK(scope.Status());
          CUCTX_CUDA_CHECK(cudaDeviceSynchronize());
          unmap();
        });
    } catch (const std::exception& e) {
      CUCTX_WARN << "unmapping device memory: " << e.what();
    }
  }

  void Unreserve(void* base, size_t bytes) noexcept override {
    CUCTX_CU_CHECK_NOTHROW(api_.AddressFree(Address(base), bytes));
  }

 private:
  // Each granule was mapped on its own, so each is unmapped on its own.
  void UnmapGranules(char* begin, size_t bytes) noexcept {
    for (size_t off = 0; off < bytes; off += granule_) {
      CUCTX_CU_CHECK_NOTHROW(api_.Unmap(Address(begin + off), granule_));
      mapped_.erase(begin + off);
    }
  }

  const VmmDriverApi& api_;
  const int device_;
  const size_t granule_;
  std::unique_ptr<CuAllocatorUpstream> cuda_;
  size_t total_bytes_ = 0;  // the device's memory (cudaMemGetInfo at construction)
  CUmemAllocationProp prop_;
  // Guards access_ and mapped_: GrantPeerAccess comes from the thread setting up another device.
  std::mutex access_mutex_;
  // Who may access mapped memory: the owning device first; peers are appended by
  // GrantPeerAccess (every new mapping gets the whole list).
  std::vector<CUmemAccessDesc> access_;
  // The base address of every granule mapped now, so that a new peer can be granted access.
  std::set<char*> mapped_;
};

}  // namespace

std::unique_ptr<CuAllocatorUpstream> NewVmmAllocatorUpstream(std::function<void()> synchronize_gpu,
                                                             std::string* why_not) {
  auto fail = [&](const std::string& why) {
    if (why_not != nullptr) *why_not = why;
    return nullptr;
  };
  const VmmDriverApi& api = DriverApi();
  if (!api.why_not.empty()) return fail(api.why_not);
  int device = -1;
  const cudaError_t e = cudaGetDevice(&device);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return fail(std::string("no current device: ") + cudaGetErrorName(e));
  }
  CUdevice cu_device = 0;
  CUCTX_CU_CHECK(api.DeviceGet(&cu_device, device));
  int supported = 0;
  CUCTX_CU_CHECK(api.DeviceGetAttribute(
      &supported, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, cu_device));
  if (supported == 0) {
    std::ostringstream why;
    why << "device " << device << " does not support virtual memory management";
    return fail(why.str());
  }
  const CUmemAllocationProp prop = VmmAllocatorUpstream::PhysicalProperties(cu_device);
  size_t granule = 0;
  CUCTX_CU_CHECK(api.GetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  // The allocator needs granules that are a multiple of its 256-byte alignment.
  if (granule == 0 || granule % 256 != 0) {
    std::ostringstream why;
    why << "device " << device << " maps memory in " << granule << "-byte granules";
    return fail(why.str());
  }
  return std::make_unique<VmmAllocatorUpstream>(
      device, cu_device, granule, NewCudaAllocatorUpstream(std::move(synchronize_gpu)));
}

#else  // !CUCTX_HAVE_CUDA

std::unique_ptr<CuAllocatorUpstream> NewVmmAllocatorUpstream(std::function<void()>,
                                                             std::string* why_not) {
  if (why_not != nullptr) *why_not = "cuctx was built without CUDA (CUDA=0)";
  return nullptr;
}

#endif  // CUCTX_HAVE_CUDA

std::unique_ptr<CuAllocatorUpstream> NewDeviceAllocatorUpstream(
    const std::string& kind, std::function<void()> synchronize_gpu, std::string* fallback_reason) {
  CUCTX_CHECK(kind == "vmm" || kind == "cuda")
      << "allocator upstream must be vmm or cuda, got '" << kind << "'";
  if (fallback_reason != nullptr) fallback_reason->clear();
  std::unique_ptr<CuAllocatorUpstream> upstream;
  if (kind == "vmm") {
    std::string why_not;
    upstream = NewVmmAllocatorUpstream(synchronize_gpu, &why_not);
    if (upstream == nullptr && fallback_reason != nullptr) *fallback_reason = why_not;
  }
  if (upstream == nullptr) upstream = NewCudaAllocatorUpstream(std::move(synchronize_gpu));
  // CUCTX_FAULT_INJECT (cu-fault-injection.h): the device's calls may fail on purpose.
  if (FaultInjector::Enabled()) upstream = NewFaultInjectingUpstream(std::move(upstream));
  return upstream;
}

}  // namespace cuctx
