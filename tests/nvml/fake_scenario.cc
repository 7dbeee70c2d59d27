#include "fake_scenario.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace gd_test {

json full_gpu_info(int index) {
  char bus[32];
  std::snprintf(bus, sizeof bus, "00000000:%02X:00.0", 0x07 + 8 * index);
  return json{{"index", index},
              {"uuid", "GPU-00000000-1111-2222-3333-44444444440" +
                           std::to_string(index)},
              {"name", "NVIDIA A100-SXM4-80GB"},
              {"pci_bus_id", bus},
              {"serial", "15621210000" + std::to_string(10 + index)},
              {"memory_total_bytes", 85899345920ULL},
              {"power_limit_w", 350.5},
              {"power_default_limit_w", 400.0},
              {"pcie_max_gen", 4},
              {"pcie_max_width", 16},
              {"temp_slowdown_c", 89},
              {"temp_shutdown_c", 92},
              {"sm_clock_max_mhz", 1410},
              {"mem_clock_max_mhz", 1593},
              {"compute_capability", "8.0"},
              {"architecture", "ampere"},
              {"ecc_enabled", true},
              {"mig_enabled", false},
              {"persistence_mode", true},
              {"compute_mode", "exclusive_process"},
              {"numa_node", 3},
              // Additions to version 1 (minor number deliberately != index).
              {"minor_number", 4 + index},
              {"temp_max_operating_c", 87},
              {"temp_mem_max_c", 95},
              {"bar1_total_bytes", 137438953472ULL},
              {"vbios_version", "92.00.45.00.0" + std::to_string(index)}};
}

json full_gpu_sample(int index) {
  return json{
      {"index", index},
      {"util_pct", 97.0},
      {"mem_util_pct", 61.0},
      {"mem_used_bytes", 70866960384ULL},
      {"temp_c", 71},
      {"mem_temp_c", 64},
      {"power_w", 312.5},
      {"energy_mj_total", 912345678ULL},
      {"fan_pct", 45.0},
      {"sm_clock_mhz", 1410},
      {"mem_clock_mhz", 1593},
      {"pstate", 2},
      {"clock_event_reasons", {"sw_power_cap", "hw_thermal_slowdown"}},
      {"pcie_gen", 3},
      {"pcie_width", 8},
      // Multiples of 1024: NVML carries KB/s.
      {"pcie_tx_bytes_per_s", 1200000 * 1024ULL},
      {"pcie_rx_bytes_per_s", 5400000 * 1024ULL},
      {"pcie_replay_total", 7},
      {"ecc_sbe_volatile_total", 5},
      {"ecc_dbe_volatile_total", 1},
      {"retired_pages_pending", true},
      {"remapped_rows_pending", false},
      {"remapped_rows_failure", true},
      // Additions to version 1.
      {"mem_reserved_bytes", 659554304ULL},
      {"bar1_used_bytes", 4194304ULL},
      {"ecc_sbe_aggregate_total", 120},
      {"ecc_dbe_aggregate_total", 3},
      {"ecc_sram_correctable_aggregate_total", 20},
      {"ecc_sram_uncorrectable_aggregate_total", 2},
      {"ecc_dram_correctable_aggregate_total", 100},
      {"ecc_dram_uncorrectable_aggregate_total", 1},
      {"ecc_sram_correctable_volatile_total", 4},
      {"ecc_sram_uncorrectable_volatile_total", 1},
      {"ecc_dram_correctable_volatile_total", 1},
      {"ecc_dram_uncorrectable_volatile_total", 0},
      {"ecc_sram_threshold_exceeded", true},
      {"remapped_rows_correctable_total", 6},
      {"remapped_rows_uncorrectable_total", 2},
      {"row_remap_histogram",
       {{"max", 630}, {"high", 8}, {"partial", 1}, {"low", 1}, {"none", 0}}},
      {"recovery_action", "drain_and_reset"},
      {"temp_limit_margin_c", 18},
      {"processes",
       {{{"pid", 4242}, {"used_bytes", 68719476736ULL}, {"type", "compute"}},
        {{"pid", 4300}, {"used_bytes", 1048576}, {"type", "graphics"}},
        {{"pid", 4400}, {"used_bytes", 2097152}, {"type", "compute+graphics"}},
        {{"pid", 4500}, {"used_bytes", nullptr}, {"type", "compute"}}}}};
}

FakeScenario FakeScenario::with_gpus(int gpus) {
  FakeScenario s;
  json infos = json::array(), samples = json::array();
  for (int i = 0; i < gpus; ++i) {
    infos.push_back(full_gpu_info(i));
    samples.push_back(full_gpu_sample(i));
  }
  s.header["gpus"] = infos;
  s.samples.push_back(json{{"t", 1000.0}, {"gpus", samples}});
  return s;
}

std::string FakeScenario::install(const std::string& name) const {
  json h = header;
  h["format"] = "gpudoctor-trace";
  h["version"] = 1;
  if (!h.contains("host")) h["host"] = json{{"hostname", "fake"}};
  if (!h.contains("nvml_status")) h["nvml_status"] = "ok";
  if (!h.contains("driver")) {
    h["driver"] = json{{"driver_version", "535.129.03"},
                       {"cuda_driver_version", "12.2"},
                       {"nvml_version", "12.535.129.03"}};
  }
  const std::string path = ::testing::TempDir() + "/" + name + ".jsonl";
  std::ofstream out(path);
  out << h.dump() << "\n";
  for (json s : samples) {
    if (!s.contains("host")) s["host"] = json::object();
    if (!s.contains("processes")) s["processes"] = json::array();
    if (!s.contains("events")) s["events"] = json::array();
    out << s.dump() << "\n";
  }
  if (!out) throw std::runtime_error("cannot write " + path);
  setenv("FAKE_NVML_SCENARIO", path.c_str(), 1);
  return path;
}

gd::GpuSource::Options fake_options(bool old_api) {
  gd::GpuSource::Options o;
  o.lib_path = old_api ? GD_FAKE_NVML_OLD_LIB : GD_FAKE_NVML_LIB;
  o.deadline = std::chrono::milliseconds(2000);
  // Keep tests independent of the machine's real PCI devices.
  o.sysfs_root = "/nonexistent-sysfs";
  return o;
}

}  // namespace gd_test

namespace gd_test {

namespace {

template <typename T>
void expect_opt(const std::optional<T>& got, const json& want,
                const char* field) {
  if (want.is_null()) {
    EXPECT_FALSE(got.has_value()) << field;
  } else {
    ASSERT_TRUE(got.has_value()) << field;
    EXPECT_EQ(*got, want.get<T>()) << field;
  }
}

}  // namespace

void expect_info_matches(const gd::GpuInfo& i, const json& w) {
  EXPECT_EQ(i.index, w["index"].get<int>());
  EXPECT_EQ(i.uuid, w["uuid"].get<std::string>());
  EXPECT_EQ(i.name, w["name"].get<std::string>());
  EXPECT_EQ(i.pci_bus_id, w["pci_bus_id"].get<std::string>());
  EXPECT_EQ(i.serial, w["serial"].get<std::string>());
  expect_opt(i.memory_total_bytes, w["memory_total_bytes"],
             "memory_total_bytes");
  expect_opt(i.power_limit_w, w["power_limit_w"], "power_limit_w");
  expect_opt(i.power_default_limit_w, w["power_default_limit_w"],
             "power_default_limit_w");
  expect_opt(i.pcie_max_gen, w["pcie_max_gen"], "pcie_max_gen");
  expect_opt(i.pcie_max_width, w["pcie_max_width"], "pcie_max_width");
  expect_opt(i.temp_slowdown_c, w["temp_slowdown_c"], "temp_slowdown_c");
  expect_opt(i.temp_shutdown_c, w["temp_shutdown_c"], "temp_shutdown_c");
  expect_opt(i.sm_clock_max_mhz, w["sm_clock_max_mhz"], "sm_clock_max_mhz");
  expect_opt(i.mem_clock_max_mhz, w["mem_clock_max_mhz"], "mem_clock_max_mhz");
  EXPECT_EQ(i.compute_capability, w["compute_capability"].get<std::string>());
  EXPECT_EQ(i.architecture, w["architecture"].get<std::string>());
  expect_opt(i.ecc_enabled, w["ecc_enabled"], "ecc_enabled");
  expect_opt(i.mig_enabled, w["mig_enabled"], "mig_enabled");
  expect_opt(i.persistence_mode, w["persistence_mode"], "persistence_mode");
  EXPECT_EQ(i.compute_mode, w["compute_mode"].get<std::string>());
  expect_opt(i.numa_node, w.value("numa_node", json()), "numa_node");
  auto v = [&](const char* k) { return w.value(k, json()); };
  expect_opt(i.minor_number, v("minor_number"), "minor_number");
  expect_opt(i.temp_max_operating_c, v("temp_max_operating_c"),
             "temp_max_operating_c");
  expect_opt(i.temp_mem_max_c, v("temp_mem_max_c"), "temp_mem_max_c");
  expect_opt(i.bar1_total_bytes, v("bar1_total_bytes"), "bar1_total_bytes");
  EXPECT_EQ(i.vbios_version, w.value("vbios_version", std::string()));
}

void expect_sample_matches(const gd::GpuSample& s, const json& w) {
  EXPECT_EQ(s.index, w["index"].get<int>());
  EXPECT_FALSE(s.lost);
  EXPECT_FALSE(s.stale);
  auto v = [&](const char* k) { return w.value(k, json()); };
  expect_opt(s.util_pct, v("util_pct"), "util_pct");
  expect_opt(s.mem_util_pct, v("mem_util_pct"), "mem_util_pct");
  expect_opt(s.mem_used_bytes, v("mem_used_bytes"), "mem_used_bytes");
  expect_opt(s.temp_c, v("temp_c"), "temp_c");
  expect_opt(s.mem_temp_c, v("mem_temp_c"), "mem_temp_c");
  expect_opt(s.power_w, v("power_w"), "power_w");
  expect_opt(s.energy_mj_total, v("energy_mj_total"), "energy_mj_total");
  expect_opt(s.fan_pct, v("fan_pct"), "fan_pct");
  expect_opt(s.sm_clock_mhz, v("sm_clock_mhz"), "sm_clock_mhz");
  expect_opt(s.mem_clock_mhz, v("mem_clock_mhz"), "mem_clock_mhz");
  expect_opt(s.pstate, v("pstate"), "pstate");
  expect_opt(s.clock_event_reasons, v("clock_event_reasons"),
             "clock_event_reasons");
  expect_opt(s.pcie_gen, v("pcie_gen"), "pcie_gen");
  expect_opt(s.pcie_width, v("pcie_width"), "pcie_width");
  expect_opt(s.pcie_tx_bytes_per_s, v("pcie_tx_bytes_per_s"),
             "pcie_tx_bytes_per_s");
  expect_opt(s.pcie_rx_bytes_per_s, v("pcie_rx_bytes_per_s"),
             "pcie_rx_bytes_per_s");
  expect_opt(s.pcie_replay_total, v("pcie_replay_total"), "pcie_replay_total");
  expect_opt(s.ecc_sbe_volatile_total, v("ecc_sbe_volatile_total"),
             "ecc_sbe_volatile_total");
  expect_opt(s.ecc_dbe_volatile_total, v("ecc_dbe_volatile_total"),
             "ecc_dbe_volatile_total");
  expect_opt(s.retired_pages_pending, v("retired_pages_pending"),
             "retired_pages_pending");
  expect_opt(s.remapped_rows_pending, v("remapped_rows_pending"),
             "remapped_rows_pending");
  expect_opt(s.remapped_rows_failure, v("remapped_rows_failure"),
             "remapped_rows_failure");
  expect_opt(s.mem_reserved_bytes, v("mem_reserved_bytes"),
             "mem_reserved_bytes");
  expect_opt(s.bar1_used_bytes, v("bar1_used_bytes"), "bar1_used_bytes");
  expect_opt(s.ecc_sbe_aggregate_total, v("ecc_sbe_aggregate_total"),
             "ecc_sbe_aggregate_total");
  expect_opt(s.ecc_dbe_aggregate_total, v("ecc_dbe_aggregate_total"),
             "ecc_dbe_aggregate_total");
  expect_opt(s.ecc_sram_correctable_aggregate_total,
             v("ecc_sram_correctable_aggregate_total"),
             "ecc_sram_correctable_aggregate_total");
  expect_opt(s.ecc_sram_uncorrectable_aggregate_total,
             v("ecc_sram_uncorrectable_aggregate_total"),
             "ecc_sram_uncorrectable_aggregate_total");
  expect_opt(s.ecc_dram_correctable_aggregate_total,
             v("ecc_dram_correctable_aggregate_total"),
             "ecc_dram_correctable_aggregate_total");
  expect_opt(s.ecc_dram_uncorrectable_aggregate_total,
             v("ecc_dram_uncorrectable_aggregate_total"),
             "ecc_dram_uncorrectable_aggregate_total");
  expect_opt(s.ecc_sram_correctable_volatile_total,
             v("ecc_sram_correctable_volatile_total"),
             "ecc_sram_correctable_volatile_total");
  expect_opt(s.ecc_sram_uncorrectable_volatile_total,
             v("ecc_sram_uncorrectable_volatile_total"),
             "ecc_sram_uncorrectable_volatile_total");
  expect_opt(s.ecc_dram_correctable_volatile_total,
             v("ecc_dram_correctable_volatile_total"),
             "ecc_dram_correctable_volatile_total");
  expect_opt(s.ecc_dram_uncorrectable_volatile_total,
             v("ecc_dram_uncorrectable_volatile_total"),
             "ecc_dram_uncorrectable_volatile_total");
  expect_opt(s.ecc_sram_threshold_exceeded, v("ecc_sram_threshold_exceeded"),
             "ecc_sram_threshold_exceeded");
  expect_opt(s.remapped_rows_correctable_total,
             v("remapped_rows_correctable_total"),
             "remapped_rows_correctable_total");
  expect_opt(s.remapped_rows_uncorrectable_total,
             v("remapped_rows_uncorrectable_total"),
             "remapped_rows_uncorrectable_total");
  expect_opt(s.temp_limit_margin_c, v("temp_limit_margin_c"),
             "temp_limit_margin_c");
  if (v("row_remap_histogram").is_null()) {
    EXPECT_FALSE(s.row_remap_histogram.has_value()) << "row_remap_histogram";
  } else {
    const json h = v("row_remap_histogram");
    EXPECT_EQ(s.row_remap_histogram,
              (gd::RowRemapHistogram{h["max"], h["high"], h["partial"],
                                     h["low"], h["none"]}))
        << "row_remap_histogram";
  }
  EXPECT_EQ(s.recovery_action, w.value("recovery_action", std::string()))
      << "recovery_action";
  EXPECT_TRUE(s.read_errors.empty())
      << "read_errors: " << json(s.read_errors).dump();
  const json want_procs = v("processes");
  if (want_procs.is_null()) {
    EXPECT_FALSE(s.processes.has_value()) << "processes";
    return;
  }
  ASSERT_TRUE(s.processes.has_value()) << "processes";
  ASSERT_EQ(s.processes->size(), want_procs.size());
  for (const json& p : want_procs) {
    const gd::GpuProcess* got = nullptr;
    for (const auto& q : *s.processes) {
      if (q.pid == p["pid"].get<uint32_t>()) got = &q;
    }
    ASSERT_NE(got, nullptr) << "pid " << p["pid"];
    EXPECT_EQ(got->type, p["type"].get<std::string>()) << "pid " << p["pid"];
    expect_opt(got->used_bytes, p["used_bytes"], "used_bytes");
  }
}

void expect_no_values(const gd::GpuSample& s) {
  EXPECT_FALSE(
      s.util_pct || s.mem_util_pct || s.mem_used_bytes || s.temp_c ||
      s.mem_temp_c || s.power_w || s.energy_mj_total || s.fan_pct ||
      s.sm_clock_mhz || s.mem_clock_mhz || s.pstate || s.clock_event_reasons ||
      s.pcie_gen || s.pcie_width || s.pcie_tx_bytes_per_s ||
      s.pcie_rx_bytes_per_s || s.pcie_replay_total ||
      s.ecc_sbe_volatile_total || s.ecc_dbe_volatile_total ||
      s.retired_pages_pending || s.remapped_rows_pending ||
      s.remapped_rows_failure || s.processes || s.mem_reserved_bytes ||
      s.bar1_used_bytes || s.ecc_sbe_aggregate_total ||
      s.ecc_dbe_aggregate_total || s.ecc_sram_correctable_aggregate_total ||
      s.ecc_sram_uncorrectable_aggregate_total ||
      s.ecc_dram_correctable_aggregate_total ||
      s.ecc_dram_uncorrectable_aggregate_total ||
      s.ecc_sram_correctable_volatile_total ||
      s.ecc_sram_uncorrectable_volatile_total ||
      s.ecc_dram_correctable_volatile_total ||
      s.ecc_dram_uncorrectable_volatile_total ||
      s.ecc_sram_threshold_exceeded || s.remapped_rows_correctable_total ||
      s.remapped_rows_uncorrectable_total || s.row_remap_histogram ||
      !s.recovery_action.empty() || s.temp_limit_margin_c)
      << "GPU " << s.index << " has a value although none was expected:"
      << (s.util_pct ? " util_pct" : "")
      << (s.mem_util_pct ? " mem_util_pct" : "")
      << (s.mem_used_bytes ? " mem_used_bytes" : "")
      << (s.temp_c ? " temp_c" : "") << (s.mem_temp_c ? " mem_temp_c" : "")
      << (s.power_w ? " power_w" : "")
      << (s.energy_mj_total ? " energy_mj_total" : "")
      << (s.fan_pct ? " fan_pct" : "")
      << (s.sm_clock_mhz ? " sm_clock_mhz" : "")
      << (s.mem_clock_mhz ? " mem_clock_mhz" : "")
      << (s.pstate ? " pstate" : "")
      << (s.clock_event_reasons ? " clock_event_reasons" : "")
      << (s.pcie_gen ? " pcie_gen" : "") << (s.pcie_width ? " pcie_width" : "")
      << (s.pcie_tx_bytes_per_s ? " pcie_tx" : "")
      << (s.pcie_rx_bytes_per_s ? " pcie_rx" : "")
      << (s.pcie_replay_total ? " pcie_replay_total" : "")
      << (s.ecc_sbe_volatile_total ? " ecc_sbe" : "")
      << (s.ecc_dbe_volatile_total ? " ecc_dbe" : "")
      << (s.retired_pages_pending ? " retired_pages_pending" : "")
      << (s.remapped_rows_pending ? " remapped_rows_pending" : "")
      << (s.remapped_rows_failure ? " remapped_rows_failure" : "")
      << (s.processes ? " processes" : "");
}

}  // namespace gd_test
