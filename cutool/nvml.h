// cutool/nvml.h: read-only NVML queries about one GPU, with NVML loaded at run time.
// SPDX-License-Identifier: Apache-2.0
//
// The CUDA toolkit we build with ships no nvml.h, and a machine without the NVIDIA driver has no
// libnvidia-ml.so.1, so NVML is opened with dlopen() and each entry point is looked up with dlsym()
// when it is first used. Only documented, read-only queries are made: nothing here changes a
// device setting. Every query reports failure as a short reason ("libnvidia-ml.so.1 not found",
// "nvmlDeviceGetPowerUsage: Not Supported", ...) that callers print on a SKIP line.
#ifndef CUCTX_CUTOOL_NVML_H_
#define CUCTX_CUTOOL_NVML_H_

#include "base/types.h"

#include <string>

struct nvmlDevice_st;  // NVML's opaque device type (nvmlDevice_t is nvmlDevice_st*)

namespace cuctx {

// The clock domains of nvmlClockType_t (values as NVML defines them).
enum class NvmlClock : int32 { kGraphics = 0, kSm = 1, kMemory = 2 };

// NvmlDevice: an NVML session bound to one device, found by its PCI bus id.
//
// Owns: the dlopen() handle and one nvmlInit_v2() reference (NVML counts them), both released by
// the destructor (nvmlShutdown, dlclose). Not copyable. Thread-safety: NVML itself is thread-safe,
// but use one object from one thread. Makes no CUDA calls; the caller passes the bus id (e.g. from
// cudaDeviceGetPCIBusId, "0000:3B:00.0").
//
// Construction never throws: when the library, nvmlInit_v2 or the device lookup fails, Available()
// is false and every query returns false with the reason from UnavailableReason().
class NvmlDevice {
 public:
  // Opens libnvidia-ml.so.1, initialises NVML and looks up the device with `pci_bus_id`. An empty
  // bus id leaves the object unavailable with the reason "no GPU selected".
  explicit NvmlDevice(const std::string& pci_bus_id);
  ~NvmlDevice();
  NvmlDevice(const NvmlDevice&) = delete;
  NvmlDevice& operator=(const NvmlDevice&) = delete;

  bool Available() const { return device_ != nullptr; }
  // Why Available() is false ("" when it is true).
  const std::string& UnavailableReason() const { return reason_; }

  // The queries. Each returns true and sets its outputs, or returns false and sets *why (the
  // missing symbol or NVML's error string); outputs are then unchanged.
  // GPU core temperature in degrees C.
  bool Temperature(uint32* celsius, std::string* why) const;
  // The temperature at which the GPU starts slowing down (NVML's slowdown threshold), degrees C.
  bool SlowdownTemperature(uint32* celsius, std::string* why) const;
  // Current (max false) or maximum (max true) clock of `clock`, in MHz.
  bool Clock(NvmlClock clock, bool max, uint32* mhz, std::string* why) const;
  // The bit mask of nvmlDeviceGetCurrentClocksEventReasons (older drivers: ...ThrottleReasons).
  bool ClockEventReasons(uint64* mask, std::string* why) const;
  // Total ECC errors since the driver loaded (aggregate false: volatile counter) or over the
  // device's lifetime (aggregate true), corrected (uncorrected false) or uncorrected.
  bool EccErrors(bool uncorrected, bool aggregate, uint64* count, std::string* why) const;
  // Power draw and the enforced power limit, in milliwatts.
  bool PowerUsage(uint32* milliwatts, std::string* why) const;
  bool PowerLimit(uint32* milliwatts, std::string* why) const;
  // PCIe link generation and width: the current link (max false), or the most the device and the
  // system it sits in support (max true).
  bool PcieLink(bool max, uint32* generation, uint32* width, std::string* why) const;

 private:
  // Looks up `symbol` and calls it with the device handle followed by `args`; see the queries.
  template <typename... Args>
  bool Query(const char* symbol, std::string* why, Args... args) const;
  // NVML's text for a status code, or "NVML error <n>".
  std::string ErrorText(int status) const;

  void* library_ = nullptr;
  bool initialized_ = false;
  nvmlDevice_st* device_ = nullptr;
  std::string reason_;
};

// The clock-event (throttle) reason bits that mean the GPU is slowed down by a fault condition:
// hardware slowdown, software or hardware thermal slowdown, and hardware power brake. Idle, the
// power cap, sync boost, application and display clock settings are normal operation.
constexpr uint64 kNvmlSlowdownReasons = 0x8 | 0x20 | 0x40 | 0x80;

// Names the set bits of a clock-event mask, e.g. "gpu-idle,sw-power-cap", or "none".
std::string DescribeClockEventReasons(uint64 mask);

}  // namespace cuctx

#endif  // CUCTX_CUTOOL_NVML_H_
