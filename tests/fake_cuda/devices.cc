#include "devices.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "trace/trace_io.h"

namespace fake_cuda {

namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

// SMs of the boards the scenarios name (public specifications); others get
// a small default.
int sm_count_for(const std::string& name) {
  struct Known {
    const char* part;
    int sms;
  };
  static constexpr Known kKnown[] = {
      {"H100 PCIe", 114}, {"H100", 132}, {"H200", 132}, {"A100", 108},
      {"A30", 56},        {"A10", 72},   {"L40S", 142}, {"L4", 58},
      {"V100", 80},       {"T4", 40}};
  for (const auto& k : kKnown)
    if (name.find(k.part) != std::string::npos) return k.sms;
  return 16;
}

// Usable share of a PCIe link's raw rate (TLP/DLLP overhead), as pinned
// copies on real boards show (~25 GB/s on Gen4 x16).
constexpr double kLinkEfficiency = 0.82;

double link_bytes_per_s(int gen, int width) {
  static constexpr double kGtPerLane[] = {0, 2.5, 5, 8, 16, 32, 64};
  if (gen < 1 || gen > 6 || width < 1) return 1e9;
  const double encoding = gen <= 2 ? 0.8 : 128.0 / 130.0;
  return kGtPerLane[gen] * 1e9 * width * encoding / 8 * kLinkEfficiency;
}

bool parse_bus_id(const std::string& text, DeviceModel& d) {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  if (std::sscanf(text.c_str(), "%x:%x:%x.%x", &domain, &bus, &device,
                  &function) != 4)
    return false;
  d.pci_domain = static_cast<int>(domain);
  d.pci_bus = static_cast<int>(bus);
  d.pci_device = static_cast<int>(device);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04X:%02X:%02X.%X", domain & 0xffff, bus,
                device, function);
  d.pci_bus_id = buf;
  return true;
}

}  // namespace

int fp32_lanes_per_sm(int major, int minor) {
  switch (major * 10 + minor) {
    case 60:
    case 70:
    case 72:
    case 75:
    case 80:
      return 64;
    case 61:
    case 62:
    case 86:
    case 87:
    case 89:
    case 90:
    case 100:
    case 120:
      return 128;
    default:
      return 0;
  }
}

int fp64_lanes_per_sm(int major, int minor) {
  switch (major * 10 + minor) {
    case 60:
    case 70:
    case 80:
      return 32;
    case 90:
    case 100:
      return 64;
    case 61:
    case 62:
      return 4;
    case 72:
    case 75:
    case 86:
    case 87:
    case 89:
    case 120:
      return 2;
    default:
      return 0;
  }
}

std::vector<DeviceModel> load_devices() {
  const char* path = env("FAKE_CUDA_SCENARIO");
  if (!path) path = env("FAKE_NVML_SCENARIO");
  if (!path) return {};
  gd::TraceReader reader(path);
  const gd::TraceHeader header = reader.header();
  // Link state under load, where the scenario shows it: its first sample.
  gd::Sample first;
  const bool have_sample = reader.next(first);

  size_t memory = size_t{64} << 20;
  if (const char* mib = env("FAKE_CUDA_MEMORY_MIB")) {
    char* end = nullptr;
    long v = std::strtol(mib, &end, 10);
    if (*end || v < 4 || v > 65536)
      throw std::runtime_error(std::string("bad FAKE_CUDA_MEMORY_MIB=") + mib);
    memory = static_cast<size_t>(v) << 20;
  }
  const Faults faults =
      Faults::parse(env("FAKE_CUDA_FAULTS") ? env("FAKE_CUDA_FAULTS") : "");

  std::vector<DeviceModel> all;
  for (const auto& g : header.gpus) {
    DeviceModel d;
    d.nvml_index = g.index;
    d.name = g.name;
    if (!parse_bus_id(g.pci_bus_id, d))
      throw std::runtime_error("scenario GPU " + std::to_string(g.index) +
                               " has no PCI bus id the fake can use");
    if (std::sscanf(g.compute_capability.c_str(), "%d.%d", &d.cc_major,
                    &d.cc_minor) != 2) {
      d.cc_major = 8;
      d.cc_minor = 0;
    }
    d.sm_count = sm_count_for(g.name);
    if (g.sm_clock_max_mhz) d.clock_khz = *g.sm_clock_max_mhz * 1000;
    if (g.mem_clock_max_mhz) d.mem_clock_khz = *g.mem_clock_max_mhz * 1000;
    if (g.name.find("A100") != std::string::npos ||
        g.name.find("H100") != std::string::npos ||
        g.name.find("H200") != std::string::npos)
      d.mem_bus_width_bits = 5120;  // HBM
    d.ecc_enabled = g.ecc_enabled.value_or(false);
    d.total_bytes = memory;
    d.faults = faults.for_gpu(g.index);
    const double speed = d.faults.speed;
    // Sustained rates: 95% of the lanes' peak, 90% of memory's (what a
    // good kernel gets on real boards).
    const double clock = d.clock_khz * 1e3;
    d.fp32_flops = d.sm_count *
                   std::max(fp32_lanes_per_sm(d.cc_major, d.cc_minor), 64) *
                   2.0 * clock * 0.95 * speed;
    d.fp64_flops = d.sm_count *
                   std::max(fp64_lanes_per_sm(d.cc_major, d.cc_minor), 2) *
                   2.0 * clock * 0.95 * speed;
    d.mem_bytes_per_s =
        d.mem_clock_khz * 1e3 * 2 * d.mem_bus_width_bits / 8 * 0.9 * speed;
    int gen = g.pcie_max_gen.value_or(4), width = g.pcie_max_width.value_or(16);
    if (have_sample)
      for (const auto& s : first.gpus)
        if (s.index == g.index && s.pcie_gen && s.pcie_width) {
          gen = *s.pcie_gen;
          width = *s.pcie_width;
        }
    d.copy_bytes_per_s = link_bytes_per_s(gen, width) * speed;
    all.push_back(std::move(d));
  }

  const char* order = env("CUDA_DEVICE_ORDER");
  const bool by_bus = order && std::string(order) == "PCI_BUS_ID";
  auto bus_key = [](const DeviceModel& d) {
    return std::tuple(d.pci_domain, d.pci_bus, d.pci_device);
  };
  std::stable_sort(all.begin(), all.end(),
                   [&](const DeviceModel& a, const DeviceModel& b) {
                     if (!by_bus) {
                       if (a.cc_major != b.cc_major)
                         return a.cc_major > b.cc_major;
                       if (a.cc_minor != b.cc_minor)
                         return a.cc_minor > b.cc_minor;
                       const double pa = double(a.sm_count) * a.clock_khz,
                                    pb = double(b.sm_count) * b.clock_khz;
                       if (pa != pb) return pa > pb;
                     }
                     return bus_key(a) < bus_key(b);
                   });

  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!visible) return all;
  std::vector<DeviceModel> shown;
  std::string list = visible;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    std::string item = list.substr(
        pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char* end = nullptr;
    long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end || v < 0 || v >= static_cast<long>(all.size()))
      break;
    shown.push_back(all[static_cast<size_t>(v)]);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return shown;
}

}  // namespace fake_cuda
