// cudamatrix/cu-device-properties.h: CuDeviceProperties (facts about one CUDA device) and
// CuDeviceOptions (process-wide library options), plain structs shared by the per-device registry
// and the CuDevice facade (cu-device.h, which includes this header).
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_CUDAMATRIX_CU_DEVICE_PROPERTIES_H_
#define CUCTX_CUDAMATRIX_CU_DEVICE_PROPERTIES_H_

#include "base/types.h"

#include <string>

namespace cuctx {

// Device options shared by all threads; registered by CuDevice::RegisterDeviceOptions and applied
// to each cuBLAS handle when it is created.
struct CuDeviceOptions {
  bool use_tensor_cores = true;   // allow cuBLAS tensor-core algorithms for half-precision inputs
  bool use_tf32_compute = false;  // float GEMMs on TF32 tensor cores (faster, ~1e-3 relative error)
};

// Facts about one CUDA device, read once when it is selected.
struct CuDeviceProperties {
  int id = -1;               // CUDA device ordinal (after CUDA_VISIBLE_DEVICES)
  std::string name;          // e.g. "NVIDIA H100 80GB HBM3"
  int major = 0, minor = 0;  // compute capability
  int multiprocessors = 0;   // SM count
  int64 total_memory = 0;    // bytes
  int driver_version = 0;    // e.g. 13000 for CUDA 13.0
  int runtime_version = 0;
  int compute_mode = 0;  // cudaComputeMode value
  bool ecc_enabled = false;
  int memory_bus_width = 0;  // bits
  int memory_clock_khz = 0;  // peak memory clock
};

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_DEVICE_PROPERTIES_H_
