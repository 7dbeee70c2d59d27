// PciIndex: kernel-printed PCI addresses -> GPU index.
#include <cctype>
#include <charconv>
#include <cstdio>

#include "kernellog/kernel_log.h"
#include "kernellog/pci_address.h"

namespace gd {

namespace kernellog {

namespace {

std::optional<unsigned> hex_field(std::string_view s, size_t max_digits) {
  if (s.empty() || s.size() > max_digits) return std::nullopt;
  unsigned v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<std::string> normalize_pci_address(std::string_view a) {
  while (!a.empty() && a.front() == ' ') a.remove_prefix(1);
  while (!a.empty() && a.back() == ' ') a.remove_suffix(1);
  if (a.size() >= 4 && (a.substr(0, 4) == "PCI:" || a.substr(0, 4) == "pci:"))
    a.remove_prefix(4);
  // Drop the function: "07:00.0" -> "07:00". GPUs are function 0, and the
  // kernel's Xid lines do not print it.
  if (size_t dot = a.rfind('.'); dot != std::string_view::npos) {
    if (!hex_field(a.substr(dot + 1), 1)) return std::nullopt;
    a = a.substr(0, dot);
  }
  std::string_view parts[3];
  int n = 0;
  while (n < 3) {
    size_t colon = a.find(':');
    parts[n++] = a.substr(0, colon);
    if (colon == std::string_view::npos) break;
    a.remove_prefix(colon + 1);
    if (n == 3) return std::nullopt;  // too many colons
  }
  unsigned domain = 0;
  std::string_view bus, dev;
  if (n == 3) {
    // NVML prints an 8-digit domain ("00000000:07:00.0"), the kernel 4.
    auto d = hex_field(parts[0], 8);
    if (!d) return std::nullopt;
    domain = *d;
    bus = parts[1];
    dev = parts[2];
  } else if (n == 2) {
    bus = parts[0];
    dev = parts[1];
  } else {
    return std::nullopt;
  }
  auto b = hex_field(bus, 2);
  auto d = hex_field(dev, 2);
  if (!b || !d || *d > 0x1f) return std::nullopt;
  char out[32];
  std::snprintf(out, sizeof out, "%04x:%02x:%02x", domain, *b, *d);
  return std::string(out);
}

}  // namespace kernellog

PciIndex::PciIndex(const std::vector<GpuInfo>& gpus) {
  for (const GpuInfo& g : gpus) add(g.pci_bus_id, g.index);
}

void PciIndex::add(std::string_view pci_bus_id, int gpu_index) {
  if (auto key = kernellog::normalize_pci_address(pci_bus_id))
    by_domain_bus_dev_[*key] = gpu_index;
  add_pci_gpu(pci_bus_id);
}

void PciIndex::add_pci_gpu(std::string_view address) {
  if (auto a = kernellog::normalize_pci_function_address(address))
    gpu_by_address_[*a] = *a;
}

void PciIndex::add_port(std::string_view port_address,
                        std::string_view gpu_address) {
  auto port = kernellog::normalize_pci_function_address(port_address);
  auto gpu = kernellog::normalize_pci_function_address(gpu_address);
  if (port && gpu) gpu_by_address_[*port] = *gpu;
}

std::optional<std::string> PciIndex::gpu_at(std::string_view address) const {
  auto a = kernellog::normalize_pci_function_address(address);
  if (!a) return std::nullopt;
  auto it = gpu_by_address_.find(*a);
  if (it == gpu_by_address_.end()) return std::nullopt;
  return it->second;
}

std::optional<int> PciIndex::find(std::string_view kernel_pci) const {
  auto key = kernellog::normalize_pci_address(kernel_pci);
  if (!key) return std::nullopt;
  auto it = by_domain_bus_dev_.find(*key);
  if (it == by_domain_bus_dev_.end()) return std::nullopt;
  return it->second;
}

}  // namespace gd
