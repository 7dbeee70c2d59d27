// The fake's GPUs: one per GPU of the fake NVML scenario (same names, PCI bus
// ids, compute capability, clocks), so that a client ties each CUDA device
// to its NVML GPU by bus id, as it must on a real node. The CUDA ordinals
// follow the real driver's rules, not NVML's: fastest first (newest compute
// capability, then most SMs x clock, then bus id) unless
// CUDA_DEVICE_ORDER=PCI_BUS_ID, then filtered and reordered by
// CUDA_VISIBLE_DEVICES (ordinals; the list stops at the first invalid one).
//
// Environment:
//   FAKE_CUDA_SCENARIO   trace whose header lists the GPUs (default: the
//                        fake NVML's FAKE_NVML_SCENARIO); unset: no device
//   FAKE_CUDA_MEMORY_MIB memory of each fake GPU (default 64): real backing
//                        memory, so kept small
//   FAKE_CUDA_FAULTS     see faults.h
#pragma once

#include <string>
#include <vector>

#include "faults.h"

namespace fake_cuda {

struct DeviceModel {
  int nvml_index = 0;
  std::string name;
  std::string pci_bus_id;  // as the driver prints it: "0000:07:00.0"
  int pci_domain = 0, pci_bus = 0, pci_device = 0;
  int cc_major = 8, cc_minor = 0;
  int sm_count = 16;
  int clock_khz = 1410000;
  int mem_clock_khz = 1593000;
  int mem_bus_width_bits = 384;
  bool ecc_enabled = true;
  size_t total_bytes = 64u << 20;
  // Modelled rates (faults' speed applied): what the fake's clock advances by.
  double fp32_flops = 0, fp64_flops = 0;
  double mem_bytes_per_s = 0;   // device memory, read + write
  double copy_bytes_per_s = 0;  // host <-> device over PCIe
  GpuFaults faults;
};

// Visible devices in CUDA order. Throws std::runtime_error for a bad
// environment (unreadable scenario, bad FAKE_CUDA_FAULTS).
std::vector<DeviceModel> load_devices();

// FP32 / FP64 lanes per SM of a compute capability (CUDA programming guide's
// arithmetic throughput table); 0 when unknown.
int fp32_lanes_per_sm(int major, int minor);
int fp64_lanes_per_sm(int major, int minor);

}  // namespace fake_cuda
