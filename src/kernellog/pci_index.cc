// PciIndex: kernel-printed PCI addresses -> GPU index.
#include "common/pci_bus_id.h"
#include "kernellog/kernel_log.h"

namespace gd {

PciIndex::PciIndex(const std::vector<GpuInfo>& gpus) {
  for (const GpuInfo& g : gpus) add(g.pci_bus_id, g.index);
}

void PciIndex::add(std::string_view pci_bus_id, int gpu_index) {
  if (auto key = canonical_pci_device(pci_bus_id))
    by_domain_bus_dev_[*key] = gpu_index;
  add_pci_gpu(pci_bus_id);
}

void PciIndex::add_pci_gpu(std::string_view address) {
  if (auto a = canonical_pci_bus_id(address)) gpu_by_address_[*a] = *a;
}

void PciIndex::add_port(std::string_view port_address,
                        std::string_view gpu_address) {
  auto port = canonical_pci_bus_id(port_address);
  auto gpu = canonical_pci_bus_id(gpu_address);
  if (port && gpu) gpu_by_address_[*port] = *gpu;
}

std::optional<std::string> PciIndex::gpu_at(std::string_view address) const {
  auto a = canonical_pci_bus_id(address);
  if (!a) return std::nullopt;
  auto it = gpu_by_address_.find(*a);
  if (it == gpu_by_address_.end()) return std::nullopt;
  return it->second;
}

std::optional<int> PciIndex::find(std::string_view kernel_pci) const {
  auto key = canonical_pci_device(kernel_pci);
  if (!key) return std::nullopt;
  auto it = by_domain_bus_dev_.find(*key);
  if (it == by_domain_bus_dev_.end()) return std::nullopt;
  return it->second;
}

}  // namespace gd
