// cutool/nvml.cc: NVML opened with dlopen and queried read-only (see nvml.h).
// SPDX-License-Identifier: Apache-2.0
#include "cutool/nvml.h"

#include <cstdio>
#include <dlfcn.h>
#include <string>

namespace cuctx {
namespace {

constexpr const char* kNvmlLibrary = "libnvidia-ml.so.1";
constexpr int kNvmlSuccess = 0;
// Enumerator values from the NVML reference (nvmlTemperatureSensors_t, nvmlTemperatureThresholds_t,
// nvmlMemoryErrorType_t, nvmlEccCounterType_t).
constexpr int kNvmlTemperatureGpu = 0;
constexpr int kNvmlThresholdSlowdown = 1;
constexpr int kNvmlErrorCorrected = 0;
constexpr int kNvmlErrorUncorrected = 1;
constexpr int kNvmlVolatileEcc = 0;
constexpr int kNvmlAggregateEcc = 1;

void* Symbol(void* library, const char* name) {
  return library != nullptr ? dlsym(library, name) : nullptr;
}

}  // namespace

NvmlDevice::NvmlDevice(const std::string& pci_bus_id) {
  if (pci_bus_id.empty()) {
    reason_ = "no GPU selected";
    return;
  }
  library_ = dlopen(kNvmlLibrary, RTLD_NOW | RTLD_LOCAL);
  if (library_ == nullptr) {
    reason_ =
        std::string(kNvmlLibrary) + " not found (no NVIDIA driver, or not on the loader path)";
    return;
  }
  using InitFn = int (*)();
  auto init = reinterpret_cast<InitFn>(Symbol(library_, "nvmlInit_v2"));
  if (init == nullptr) {
    reason_ = std::string("nvmlInit_v2 not in ") + kNvmlLibrary;
    return;
  }
  int status = init();
  if (status != kNvmlSuccess) {
    reason_ = "nvmlInit_v2: " + ErrorText(status);
    return;
  }
  initialized_ = true;
  using HandleFn = int (*)(const char*, nvmlDevice_st**);
  auto by_bus_id = reinterpret_cast<HandleFn>(Symbol(library_, "nvmlDeviceGetHandleByPciBusId_v2"));
  if (by_bus_id == nullptr) {
    reason_ = std::string("nvmlDeviceGetHandleByPciBusId_v2 not in ") + kNvmlLibrary;
    return;
  }
  nvmlDevice_st* handle = nullptr;
  status = by_bus_id(pci_bus_id.c_str(), &handle);
  if (status != kNvmlSuccess) {
    reason_ = "nvmlDeviceGetHandleByPciBusId_v2(" + pci_bus_id + "): " + ErrorText(status);
    return;
  }
  device_ = handle;
}

NvmlDevice::~NvmlDevice() {
  if (initialized_) {
    using ShutdownFn = int (*)();
    auto shutdown = reinterpret_cast<ShutdownFn>(Symbol(library_, "nvmlShutdown"));
    if (shutdown != nullptr) shutdown();
  }
  if (library_ != nullptr) dlclose(library_);
}

std::string NvmlDevice::ErrorText(int status) const {
  using ErrorStringFn = const char* (*)(int);
  auto to_string = reinterpret_cast<ErrorStringFn>(Symbol(library_, "nvmlErrorString"));
  const char* text = to_string != nullptr ? to_string(status) : nullptr;
  return text != nullptr ? std::string(text) : "NVML error " + std::to_string(status);
}

template <typename... Args>
bool NvmlDevice::Query(const char* symbol, std::string* why, Args... args) const {
  if (!Available()) {
    *why = reason_;
    return false;
  }
  using Fn = int (*)(nvmlDevice_st*, Args...);
  auto fn = reinterpret_cast<Fn>(Symbol(library_, symbol));
  if (fn == nullptr) {
    *why = std::string(symbol) + " not in " + kNvmlLibrary + " (driver too old?)";
    return false;
  }
  int status = fn(device_, args...);
  if (status != kNvmlSuccess) {
    *why = std::string(symbol) + ": " + ErrorText(status);
    return false;
  }
  return true;
}

bool NvmlDevice::Temperature(uint32* celsius, std::string* why) const {
  unsigned value = 0;
  if (!Query("nvmlDeviceGetTemperature", why, kNvmlTemperatureGpu, &value)) return false;
  *celsius = value;
  return true;
}

bool NvmlDevice::SlowdownTemperature(uint32* celsius, std::string* why) const {
  unsigned value = 0;
  if (!Query("nvmlDeviceGetTemperatureThreshold", why, kNvmlThresholdSlowdown, &value))
    return false;
  *celsius = value;
  return true;
}

bool NvmlDevice::Clock(NvmlClock clock, bool max, uint32* mhz, std::string* why) const {
  unsigned value = 0;
  const char* symbol = max ? "nvmlDeviceGetMaxClockInfo" : "nvmlDeviceGetClockInfo";
  if (!Query(symbol, why, static_cast<int>(clock), &value)) return false;
  *mhz = value;
  return true;
}

bool NvmlDevice::ClockEventReasons(uint64* mask, std::string* why) const {
  unsigned long long value = 0;
  // The "event" spelling replaced the "throttle" one in driver 535; older drivers have only that.
  const char* symbol = Symbol(library_, "nvmlDeviceGetCurrentClocksEventReasons") != nullptr
                           ? "nvmlDeviceGetCurrentClocksEventReasons"
                           : "nvmlDeviceGetCurrentClocksThrottleReasons";
  if (!Query(symbol, why, &value)) return false;
  *mask = value;
  return true;
}

bool NvmlDevice::EccErrors(bool uncorrected, bool aggregate, uint64* count,
                           std::string* why) const {
  unsigned long long value = 0;
  if (!Query("nvmlDeviceGetTotalEccErrors", why,
             uncorrected ? kNvmlErrorUncorrected : kNvmlErrorCorrected,
             aggregate ? kNvmlAggregateEcc : kNvmlVolatileEcc, &value))
    return false;
  *count = value;
  return true;
}

bool NvmlDevice::PowerUsage(uint32* milliwatts, std::string* why) const {
  unsigned value = 0;
  if (!Query("nvmlDeviceGetPowerUsage", why, &value)) return false;
  *milliwatts = value;
  return true;
}

bool NvmlDevice::PowerLimit(uint32* milliwatts, std::string* why) const {
  unsigned value = 0;
  if (!Query("nvmlDeviceGetEnforcedPowerLimit", why, &value)) return false;
  *milliwatts = value;
  return true;
}

bool NvmlDevice::PcieLink(bool max, uint32* generation, uint32* width, std::string* why) const {
  unsigned gen = 0, lanes = 0;
  if (!Query(max ? "nvmlDeviceGetMaxPcieLinkGeneration" : "nvmlDeviceGetCurrPcieLinkGeneration",
             why, &gen) ||
      !Query(max ? "nvmlDeviceGetMaxPcieLinkWidth" : "nvmlDeviceGetCurrPcieLinkWidth", why, &lanes))
    return false;
  *generation = gen;
  *width = lanes;
  return true;
}

std::string DescribeClockEventReasons(uint64 mask) {
  static const struct {
    uint64 bit;
    const char* name;
  } kReasons[] = {{0x1, "gpu-idle"},
                  {0x2, "applications-clocks"},
                  {0x4, "sw-power-cap"},
                  {0x8, "hw-slowdown"},
                  {0x10, "sync-boost"},
                  {0x20, "sw-thermal-slowdown"},
                  {0x40, "hw-thermal-slowdown"},
                  {0x80, "hw-power-brake"},
                  {0x100, "display-clocks"}};
  std::string text;
  uint64 known = 0;
  for (const auto& reason : kReasons) {
    known |= reason.bit;
    if ((mask & reason.bit) == 0) continue;
    if (!text.empty()) text += ",";
    text += reason.name;
  }
  if ((mask & ~known) != 0) {
    char other[40];
    std::snprintf(other, sizeof(other), "%sother(0x%llx)", text.empty() ? "" : ",",
                  static_cast<unsigned long long>(mask & ~known));
    text += other;
  }
  return text.empty() ? "none" : text;
}

}  // namespace cuctx
