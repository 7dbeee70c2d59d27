// A writable copy of one fixture tree (fixtures/<name>) in a temp
// directory, a GPU PCI topology built into its /sys, and a header + sample
// that describe two GPUs and one GPU process with a data-loader worker.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "checklist/checklist.h"

namespace gd::test {

inline constexpr uint32_t kTrainerPid = 4242;
inline constexpr uint32_t kWorkerPid = 4300;

class ChecklistTree {
 public:
  explicit ChecklistTree(const std::string& fixture) {
    char tmpl[] = "/tmp/gd_checklist_fixture_XXXXXX";
    root_ = mkdtemp(tmpl);
    std::filesystem::copy(std::string(GD_CHECKLIST_FIXTURES) + "/" + fixture,
                          root_, std::filesystem::copy_options::recursive);
  }
  ~ChecklistTree() { std::filesystem::remove_all(root_); }
  ChecklistTree(const ChecklistTree&) = delete;
  ChecklistTree& operator=(const ChecklistTree&) = delete;

  std::string proc() const { return root_ + "/proc"; }
  std::string sys() const { return root_ + "/sys"; }

  void write(const std::string& rel, const std::string& text) const {
    std::filesystem::create_directories(
        std::filesystem::path(root_ + "/" + rel).parent_path());
    std::ofstream(root_ + "/" + rel, std::ios::trunc | std::ios::binary)
        << text;
  }
  void remove(const std::string& rel) const {
    std::filesystem::remove_all(root_ + "/" + rel);
  }

  // A PCI device at sys/devices/<path> ("pci0000:00/0000:00:01.0/...") with
  // the sys/bus/pci/devices/<bdf> symlink the kernel makes.
  void add_pci_device(const std::string& path) const {
    namespace fs = std::filesystem;
    fs::path dev = fs::path(sys()) / "devices" / path;
    fs::create_directories(dev);
    fs::path bus = fs::path(sys()) / "bus/pci/devices";
    fs::create_directories(bus);
    fs::path link = bus / dev.filename();
    if (!fs::exists(fs::symlink_status(link)))
      fs::create_directory_symlink(fs::path("../../..") / "devices" / path,
                                   link);
  }

  // Config space of `bdf`: `size` bytes (64 = what non-root reads), with an
  // ACS capability (control register `acs_ctrl`) after an AER capability in
  // the extended list when `with_acs`.
  void write_config(const std::string& bdf, size_t size, bool with_acs,
                    uint16_t acs_ctrl) const {
    std::vector<unsigned char> cfg(size, 0);
    auto put32 = [&](size_t off, uint32_t v) {
      for (int i = 0; i < 4 && off + i < cfg.size(); ++i)
        cfg[off + i] = static_cast<unsigned char>(v >> (8 * i));
    };
    put32(0, 0x10b5u | (0x8747u << 16));  // vendor PLX, a switch port
    if (size > 0x100) {
      // AER (id 0x0001, version 2) at 0x100 -> next at 0x148.
      put32(0x100, 0x0001u | (2u << 16) | (0x148u << 20));
      if (with_acs) {
        put32(0x148, 0x000Du | (1u << 16));  // ACS, version 1, last
        put32(0x148 + 4, 0x007fu | (static_cast<uint32_t>(acs_ctrl) << 16));
      }
    }
    std::ofstream(sys() + "/bus/pci/devices/" + bdf + "/config",
                  std::ios::trunc | std::ios::binary)
        .write(reinterpret_cast<const char*>(cfg.data()),
               static_cast<std::streamsize>(cfg.size()));
  }

  // Two GPUs behind one PCIe switch: root port 00:01.0 -> switch upstream
  // 01:00.0 -> downstream ports 02:08.0 / 02:10.0 -> GPUs 07:00.0 / 0f:00.0.
  // Both GPUs sit on NUMA node 0.
  void add_gpus_behind_switch(size_t config_size, uint16_t acs_ctrl) const {
    const std::string up = "pci0000:00/0000:00:01.0/0000:01:00.0";
    add_pci_device(up + "/0000:02:08.0/0000:07:00.0");
    add_pci_device(up + "/0000:02:10.0/0000:0f:00.0");
    for (auto* bdf :
         {"0000:00:01.0", "0000:01:00.0", "0000:02:08.0", "0000:02:10.0"})
      add_pci_device_link(bdf, up);
    for (auto* bdf : {"0000:02:08.0", "0000:02:10.0"})
      write_config(bdf, config_size, true, acs_ctrl);
    write("sys/devices/" + up + "/0000:02:08.0/0000:07:00.0/numa_node", "0\n");
    write("sys/devices/" + up + "/0000:02:10.0/0000:0f:00.0/numa_node", "0\n");
  }

  // Two GPUs on their own root ports (no shared switch).
  void add_gpus_on_root_ports() const {
    add_pci_device("pci0000:00/0000:00:01.0/0000:07:00.0");
    add_pci_device("pci0000:00/0000:00:03.0/0000:0f:00.0");
    add_pci_device_link("0000:00:01.0", "pci0000:00/0000:00:01.0");
    add_pci_device_link("0000:00:03.0", "pci0000:00/0000:00:03.0");
  }

 private:
  // Symlink for a bridge that lies on an already created path.
  void add_pci_device_link(const std::string& bdf,
                           const std::string& path_containing) const {
    std::string p = path_containing;
    auto at = p.find(bdf);
    add_pci_device(at == std::string::npos ? p + "/" + bdf
                                           : p.substr(0, at + bdf.size()));
  }

  std::string root_;
};

// Two healthy GPUs (A100, 535.129.03 / CUDA 12.2).
inline TraceHeader healthy_header() {
  TraceHeader h;
  h.host.hostname = "node07";
  h.host.swap_total_bytes = 8ull << 30;
  h.driver = DriverInfo{"535.129.03", "12.2", "12.535.129.03", "", ""};
  for (int i = 0; i < 2; ++i) {
    GpuInfo g;
    g.index = i;
    g.name = "NVIDIA A100-SXM4-80GB";
    g.pci_bus_id = i == 0 ? "00000000:07:00.0" : "00000000:0F:00.0";
    g.power_limit_w = 400.0;
    g.power_default_limit_w = 400.0;
    g.pcie_max_gen = 4;
    g.pcie_max_width = 16;
    g.ecc_enabled = true;
    g.persistence_mode = true;
    g.numa_node = 0;
    g.mig_enabled = false;
    g.mig_enabled_pending = false;
    g.nvlink_count = 12;
    h.gpus.push_back(g);
  }
  return h;
}

// Both GPUs busy at full link speed; the trainer (CUDA 12.1) on GPU 0 with
// one data-loader worker.
inline Sample healthy_sample() {
  Sample s;
  s.t = 1732262400.0;
  for (int i = 0; i < 2; ++i) {
    GpuSample g;
    g.index = i;
    g.util_pct = 95.0;
    g.pcie_gen = 4;
    g.pcie_width = 16;
    g.pcie_tx_bytes_per_s = 2'000'000'000;
    g.pcie_rx_bytes_per_s = 3'000'000'000;
    g.retired_pages_pending = false;
    g.remapped_rows_pending = false;
    g.remapped_rows_failure = false;
    // An A100's memory health as nvidia-smi -q shows it on a good board.
    g.ecc_sram_uncorrectable_aggregate_total = 0;
    g.ecc_sram_threshold_exceeded = false;
    g.row_remap_histogram = RowRemapHistogram{640, 0, 0, 0, 0};
    g.recovery_action = kRecoveryNone;
    g.processes = std::vector<GpuProcess>{};
    // Every NVLink up, the GPU registered in its NVSwitch fabric.
    g.nvlinks.emplace();
    for (int l = 0; l < 12; ++l) {
      NvLink link;
      link.link = l;
      link.active = true;
      link.version = 3;
      g.nvlinks->push_back(link);
    }
    g.fabric_state = kFabricCompleted;
    s.gpus.push_back(g);
  }
  s.gpus[0].processes->push_back({kTrainerPid, 30ull << 30, "compute"});
  ProcessSample trainer;
  trainer.pid = kTrainerPid;
  trainer.ppid = 4100;
  trainer.name = "python";
  trainer.state = "S";
  trainer.libs = {"libcublas.so.12.1.3.1", "libcudart.so.12.1.105"};
  ProcessSample worker;
  worker.pid = kWorkerPid;
  worker.ppid = kTrainerPid;
  worker.name = "pt_data_worker";
  worker.state = "R";
  s.processes = {trainer, worker};
  return s;
}

// Runs one check by id.
inline std::vector<CheckItem> run_check(const CheckContext& ctx,
                                        const std::string& id) {
  for (const auto& e : check_table())
    if (id == e.id) return e.run(ctx);
  ADD_FAILURE() << "no check " << id;
  return {};
}

// Tests that run checks against fixture trees: `h` and `s` start as the
// healthy GPUs' header and sample, for the test to spoil.
struct HealthyGpusTest : public ::testing::Test {
  TraceHeader h = healthy_header();
  Sample s = healthy_sample();
};

// Runs one check by id on the healthy GPUs' header and sample, with this
// tree's /proc and /sys.
inline std::vector<CheckItem> run_on_healthy_gpus(const ChecklistTree& tree,
                                                  const std::string& id) {
  auto h = healthy_header();
  auto s = healthy_sample();
  CheckContext ctx(h, s, tree.proc(), tree.sys());
  return run_check(ctx, id);
}

inline std::vector<CheckStatus> statuses(const std::vector<CheckItem>& items) {
  std::vector<CheckStatus> out;
  for (const auto& i : items) out.push_back(i.status);
  return out;
}

}  // namespace gd::test
