// One line of JSON <-> model: everything the writer writes reads back equal.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "model_compare.h"
#include "trace/trace_io.h"
#include "trace_fixtures.h"

namespace gd {
namespace {

using nlohmann::json;
using testing::expect_same;

TEST(TraceJson, SampleWithEveryFieldSetReadsBackEqual) {
  const Sample s = testing::full_sample();
  const std::string line = sample_to_json(s);
  // Every field is set, so the writer has no reason to write null.
  EXPECT_EQ(line.find("null"), std::string::npos) << line;
  expect_same(s, sample_from_json(line, "t:2"));
}

TEST(TraceJson, HeaderWithEveryFieldSetReadsBackEqual) {
  const TraceHeader h = testing::full_header();
  const std::string line = header_to_json(h);
  EXPECT_EQ(line.find("null"), std::string::npos) << line;
  expect_same(h, header_from_json(line, "t:1"));
}

TEST(TraceJson, UnknownFieldsAreWrittenAsNullAndReadBackAsUnknown) {
  const Sample s = testing::unknown_sample();
  const std::string line = sample_to_json(s);
  const json j = json::parse(line);
  const json& gpu = j["gpus"][0];
  EXPECT_TRUE(gpu.at("util_pct").is_null());
  EXPECT_TRUE(gpu.at("mem_used_bytes").is_null());
  EXPECT_TRUE(gpu.at("clock_event_reasons").is_null());
  EXPECT_TRUE(gpu.at("processes").is_null());
  EXPECT_TRUE(gpu.at("retired_pages_pending").is_null());
  EXPECT_TRUE(j["host"].at("cpu_util_pct").is_null());
  EXPECT_TRUE(j["host"].at("psi_io_some_pct").is_null());
  EXPECT_TRUE(j["processes"][0].at("ppid").is_null());
  EXPECT_TRUE(j["processes"][0].at("cgroup").is_null());
  EXPECT_TRUE(j["processes"][0].at("start_time").is_null());
  EXPECT_TRUE(j["events"][0].at("gpu").is_null());
  EXPECT_TRUE(j["events"][0].at("pid").is_null());

  const Sample back = sample_from_json(line, "t:2");
  expect_same(s, back);
  EXPECT_FALSE(back.gpus[0].util_pct.has_value());
  EXPECT_FALSE(back.gpus[0].clock_event_reasons.has_value());
  EXPECT_FALSE(back.gpus[0].processes.has_value());
  EXPECT_FALSE(back.processes[0].cgroup.has_value());
}

TEST(TraceJson, OtherCpuTopAbsentEmptyOrListedReadsBackAsWritten) {
  Sample s = testing::unknown_sample();
  // Absent: not looked. The key is not written at all.
  EXPECT_FALSE(
      json::parse(sample_to_json(s))["host"].contains("other_cpu_top"));
  EXPECT_FALSE(sample_from_json(sample_to_json(s), "t:2")
                   .host.other_cpu_top.has_value());
  // []: looked, nothing else busy.
  s.host.other_cpu_top = std::vector<OtherCpuProcess>{};
  Sample back = sample_from_json(sample_to_json(s), "t:2");
  ASSERT_TRUE(back.host.other_cpu_top.has_value());
  EXPECT_TRUE(back.host.other_cpu_top->empty());
  // A process outside any container: "container": null.
  s.host.other_cpu_top->push_back({5120, "yes", "bob", std::nullopt, 99.7});
  const json j = json::parse(sample_to_json(s));
  const json& top = j["host"]["other_cpu_top"];
  ASSERT_EQ(top.size(), 1u) << j.dump();
  EXPECT_EQ(top[0]["pid"], 5120);
  EXPECT_EQ(top[0]["comm"], "yes");
  EXPECT_EQ(top[0]["user"], "bob");
  EXPECT_TRUE(top[0]["container"].is_null());
  EXPECT_DOUBLE_EQ(top[0]["cpu_pct"].get<double>(), 99.7);
  back = sample_from_json(sample_to_json(s), "t:2");
  EXPECT_EQ(back.host.other_cpu_top, s.host.other_cpu_top);
}

TEST(TraceJson, OtherCpuTopIsBoundedAndNeedsPidAndCpu) {
  // A hostile trace's list longer than the contract's 8 keeps the first 8.
  std::string many;
  for (int i = 0; i < 50; ++i)
    many += (i ? "," : "") + std::string("{\"pid\":") +
            std::to_string(100 + i) + ",\"comm\":\"x\",\"cpu_pct\":50}";
  const std::string line = R"({"t":1,"gpus":[],"host":{"other_cpu_top":[)" +
                           many + R"(]},"processes":[],"events":[]})";
  const Sample s = sample_from_json(line, "t:2");
  ASSERT_TRUE(s.host.other_cpu_top.has_value());
  ASSERT_EQ(s.host.other_cpu_top->size(), kOtherCpuTopMax);
  EXPECT_EQ(s.host.other_cpu_top->back().pid, 107u);
  EXPECT_THROW(
      sample_from_json(
          R"({"t":1,"gpus":[],"host":{"other_cpu_top":[{"pid":5}]},"processes":[],"events":[]})",
          "t:3"),
      TraceError);
  EXPECT_THROW(
      sample_from_json(
          R"({"t":1,"gpus":[],"host":{"other_cpu_top":[{"cpu_pct":5}]},"processes":[],"events":[]})",
          "t:4"),
      TraceError);
}

TEST(TraceJson, PodFieldsAreReadNullAsUnknownAndCapped) {
  auto line = [](const std::string& processes) {
    return R"({"t":1,"gpus":[],"host":{},"processes":[)" + processes +
           R"(],"events":[]})";
  };
  Sample s = sample_from_json(
      line(R"({"pid":5,"pod":{"uid":"u-1","namespace":"ml","name":")" +
           std::string(5000, 'n') +
           R"(","container":null}},{"pid":6,"pod":null},{"pid":7})"),
      "t:2");
  ASSERT_TRUE(s.processes[0].pod);
  const ProcessPod& pod = *s.processes[0].pod;
  EXPECT_EQ(pod.uid, "u-1");
  EXPECT_EQ(pod.namespace_, "ml");
  ASSERT_TRUE(pod.name);
  EXPECT_LE(pod.name->size(), kPodTextMax + 32);  // capped where read
  EXPECT_FALSE(pod.container);
  EXPECT_FALSE(pod.deleted);
  EXPECT_FALSE(s.processes[1].pod);
  EXPECT_FALSE(s.processes[2].pod);
  // Written back: the unknown names null, `deleted` left out until asked.
  const json back = json::parse(sample_to_json(s))["processes"][0]["pod"];
  EXPECT_TRUE(back.at("container").is_null());
  EXPECT_FALSE(back.contains("deleted"));
  for (const char* bad :
       {R"("ml")", R"({"namespace":5})", R"({"deleted":"yes"})", "[]"})
    EXPECT_THROW(
        sample_from_json(line(std::string(R"({"pid":5,"pod":)") + bad + "}"),
                         "t:3"),
        TraceError)
        << bad;
}

TEST(TraceJson, SlurmJobFieldsAreCheckedAndBounded) {
  auto line = [](const std::string& processes, const std::string& jobs) {
    return R"({"t":1,"gpus":[],"host":{},"processes":[)" + processes +
           R"(],"events":[])" + jobs + "}";
  };
  Sample s = sample_from_json(
      line(R"({"pid":5,"slurm_job_id":"77"},{"pid":6,"slurm_job_id":null})",
           R"(,"slurm_jobs":[{"id":"77","name":")" + std::string(5000, 'n') +
               R"(","user":"u","partition":"p"}])"),
      "t:2");
  EXPECT_EQ(s.processes[0].slurm_job_id, "77");
  EXPECT_FALSE(s.processes[1].slurm_job_id);
  ASSERT_EQ(s.slurm_jobs.size(), 1u);
  EXPECT_LT(s.slurm_jobs[0].name.size(), 200u);  // capped where read
  for (const char* bad : {R"("7x")", R"("")", R"("12345678901")", "77"})
    EXPECT_THROW(
        sample_from_json(
            line(std::string(R"({"pid":5,"slurm_job_id":)") + bad + "}", ""),
            "t:3"),
        TraceError)
        << bad;
  std::string many;
  for (int i = 0; i < 65; ++i)
    many += (i ? "," : "") + std::string(R"({"id":")") + std::to_string(i) +
            R"("})";
  EXPECT_THROW(
      sample_from_json(line("", R"(,"slurm_jobs":[)" + many + "]"), "t:4"),
      TraceError);
  EXPECT_THROW(
      sample_from_json(line("", R"(,"slurm_jobs":[{"name":"x"}])"), "t:5"),
      TraceError);
}

TEST(TraceJson, HeaderWithEverythingUnknownReadsBackUnknown) {
  TraceHeader h;
  h.nvml_status = kNvmlNoDriver;
  h.gpus.push_back(GpuInfo{});
  const std::string line = header_to_json(h);
  const json j = json::parse(line);
  EXPECT_TRUE(j.at("driver").is_null());
  EXPECT_TRUE(j.at("host").at("cpu_count").is_null());
  EXPECT_TRUE(j.at("gpus")[0].at("power_limit_w").is_null());
  EXPECT_FALSE(j.contains("faults"));
  EXPECT_FALSE(j.contains("kernel_log_error"));  // read, or not said
  const TraceHeader back = header_from_json(line, "t:1");
  expect_same(h, back);
  EXPECT_FALSE(back.driver.has_value());
  EXPECT_FALSE(back.gpus[0].ecc_enabled.has_value());
}

TEST(TraceJson, EmptyClockReasonListMeansNoneActiveNotUnknown) {
  Sample s = testing::unknown_sample();
  s.gpus[0].clock_event_reasons = std::vector<std::string>{};
  s.gpus[0].processes = std::vector<GpuProcess>{};
  const std::string line = sample_to_json(s);
  const json j = json::parse(line);
  EXPECT_EQ(j["gpus"][0]["clock_event_reasons"], json::array());
  EXPECT_EQ(j["gpus"][0]["processes"], json::array());
  const Sample back = sample_from_json(line, "t:2");
  ASSERT_TRUE(back.gpus[0].clock_event_reasons.has_value());
  EXPECT_TRUE(back.gpus[0].clock_event_reasons->empty());
  ASSERT_TRUE(back.gpus[0].processes.has_value());
  EXPECT_TRUE(back.gpus[0].processes->empty());
}

TEST(TraceJson, LostAndStaleGpusAreWrittenAsIndexAndMarkerOnly) {
  Sample s = testing::full_sample();
  s.gpus[0].lost = true;
  s.gpus[1].stale = true;
  const std::string line = sample_to_json(s);
  const json j = json::parse(line);
  EXPECT_EQ(j["gpus"][0], json::parse(R"({"index": 0, "lost": true})"));
  EXPECT_EQ(j["gpus"][1], json::parse(R"({"index": 1, "stale": true})"));

  const Sample back = sample_from_json(line, "t:2");
  EXPECT_TRUE(back.gpus[0].lost);
  EXPECT_FALSE(back.gpus[0].stale);
  EXPECT_FALSE(back.gpus[0].util_pct.has_value());
  EXPECT_TRUE(back.gpus[1].stale);
  EXPECT_FALSE(back.gpus[1].lost);
  EXPECT_FALSE(back.gpus[1].processes.has_value());
}

TEST(TraceJson, LostGpuReadingsInTheLineAreNotTrusted) {
  const Sample s = sample_from_json(
      R"({"t": 1, "gpus": [{"util_pct": 50, "index": 3, "lost": true}]})",
      "t:2");
  ASSERT_EQ(s.gpus.size(), 1u);
  EXPECT_EQ(s.gpus[0].index, 3);
  EXPECT_TRUE(s.gpus[0].lost);
  EXPECT_FALSE(s.gpus[0].util_pct.has_value());
}

TEST(TraceJson, LostFalseIsAnOrdinaryGpu) {
  const Sample s = sample_from_json(
      R"({"t": 1, "gpus": [{"index": 0, "lost": false, "stale": null, "util_pct": 50}]})",
      "t:2");
  EXPECT_FALSE(s.gpus[0].lost);
  EXPECT_FALSE(s.gpus[0].stale);
  EXPECT_EQ(s.gpus[0].util_pct, 50.0);
}

TEST(TraceJson, UsesTheFieldNamesOfTheSpecAndTheProjectExtensions) {
  const json j = json::parse(sample_to_json(testing::full_sample()));
  for (const char* k : {"util_pct",
                        "mem_util_pct",
                        "mem_used_bytes",
                        "temp_c",
                        "mem_temp_c",
                        "power_w",
                        "energy_mj_total",
                        "fan_pct",
                        "sm_clock_mhz",
                        "mem_clock_mhz",
                        "pstate",
                        "clock_event_reasons",
                        "pcie_gen",
                        "pcie_width",
                        "pcie_tx_bytes_per_s",
                        "pcie_rx_bytes_per_s",
                        "pcie_replay_total",
                        "ecc_sbe_volatile_total",
                        "ecc_dbe_volatile_total",
                        "retired_pages_pending",
                        "remapped_rows_pending",
                        "remapped_rows_failure"}) {
    EXPECT_TRUE(j["gpus"][0].contains(k)) << k;
  }
  for (const char* k : {"pid", "used_bytes", "type"}) {
    EXPECT_TRUE(j["gpus"][0]["processes"][0].contains(k)) << k;
  }
  for (const char* k :
       {"cpu_util_pct", "cpu_iowait_pct", "cpu_steal_pct", "load1",
        "mem_available_bytes", "swap_used_bytes", "swap_in_pages_per_s",
        "swap_out_pages_per_s", "disk_read_bytes_per_s",
        "disk_write_bytes_per_s", "disk_busy_pct", "psi_cpu_some_pct",
        "psi_mem_some_pct", "psi_io_some_pct"}) {
    EXPECT_TRUE(j["host"].contains(k)) << k;
  }
  for (const char* k :
       {"pid", "ppid", "user", "name", "cmdline", "state", "cpu_pct", "threads",
        "rss_bytes", "cgroup", "libs", "start_time"}) {
    EXPECT_TRUE(j["processes"][0].contains(k)) << k;
  }
  for (const char* k : {"kind", "gpu", "code", "pid", "text"}) {
    EXPECT_TRUE(j["events"][0].contains(k)) << k;
  }
  EXPECT_EQ(j["host"]["psi_cpu_some_pct"], 12.34);
  EXPECT_EQ(j["processes"][0]["start_time"], 1732260000.37);
}

TEST(TraceJson, HeaderUsesTheFieldNamesOfTheSpec) {
  const json j = json::parse(header_to_json(testing::full_header()));
  EXPECT_EQ(j["format"], "gpudoctor-trace");
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["nvml_status"], "error");
  EXPECT_EQ(j["nvml_error"], "Unknown Error");
  EXPECT_EQ(j["kernel_log_error"], "not read (--kmsg none)");
  for (const char* k :
       {"hostname", "kernel", "cpu_model", "cpu_count", "mem_total_bytes",
        "swap_total_bytes", "pid_namespace"}) {
    EXPECT_TRUE(j["host"].contains(k)) << k;
  }
  for (const char* k :
       {"driver_version", "cuda_driver_version", "nvml_version"}) {
    EXPECT_TRUE(j["driver"].contains(k)) << k;
  }
  for (const char* k : {"index",
                        "uuid",
                        "name",
                        "pci_bus_id",
                        "serial",
                        "memory_total_bytes",
                        "power_limit_w",
                        "power_default_limit_w",
                        "pcie_max_gen",
                        "pcie_max_width",
                        "temp_slowdown_c",
                        "temp_shutdown_c",
                        "sm_clock_max_mhz",
                        "mem_clock_max_mhz",
                        "compute_capability",
                        "architecture",
                        "ecc_enabled",
                        "mig_enabled",
                        "persistence_mode",
                        "compute_mode",
                        "numa_node"}) {
    EXPECT_TRUE(j["gpus"][0].contains(k)) << k;
  }
}

TEST(TraceJson, FaultsAreKeptAsRawTextAndWrittenBackVerbatim) {
  const std::string faults =
      R"([{"function": "nvmlDeviceGetComputeRunningProcesses", "gpu": 0, "hang_s": 30},   {"gpu": 2, "lost_after_s": 5.0, "x": "\u00e9"}])";
  const std::string line =
      R"({"format": "gpudoctor-trace", "version": 1, "gpus": [], "faults": )" +
      faults + R"(, "driver": null})";
  const TraceHeader h = header_from_json(line, "s:1");
  EXPECT_EQ(h.faults_json, faults);
  const std::string written = header_to_json(h);
  EXPECT_NE(written.find(faults), std::string::npos) << written;
  EXPECT_EQ(json::parse(written)["faults"], json::parse(faults));
}

TEST(TraceJson, FaultsWrittenOverSeveralLinesStayOnOneTraceLine) {
  TraceHeader h;
  h.faults_json = "[\n  {\"gpu\": 1,\r\n   \"lost_after_s\": 2}\n]";
  const std::string line = header_to_json(h);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(json::parse(line)["faults"][0]["lost_after_s"], 2);
}

TEST(TraceJson, InvalidFaultsTextIsRefusedRatherThanWritten) {
  TraceHeader h;
  h.faults_json = "[{\"gpu\": 1";
  EXPECT_THROW(header_to_json(h), TraceError);
}

TEST(TraceJson, NvmlStatusAbsentIsUnknownNotOk) {
  const TraceHeader h =
      header_from_json(R"({"format": "gpudoctor-trace", "version": 1})", "h:1");
  EXPECT_EQ(h.nvml_status, "");
  EXPECT_FALSE(h.driver.has_value());
  EXPECT_TRUE(h.gpus.empty());
  EXPECT_EQ(h.faults_json, "");
}

TEST(TraceJson, DoublesRoundTripExactly) {
  for (double v : {0.1, 1.0 / 3.0, 1e-300, 5e-324, 1.7976931348623157e308, -0.0,
                   123456789.123456789, 1732262400.000001, 97.0, 1e21}) {
    Sample s = testing::unknown_sample();
    s.gpus[0].power_w = v;
    // t must be a Unix time before 2100 (the reader refuses 1e308).
    const bool t_in_range = v >= 0 && v <= 4102444800.0;
    if (t_in_range) s.t = v;
    const Sample back = sample_from_json(sample_to_json(s), "t:2");
    ASSERT_TRUE(back.gpus[0].power_w.has_value());
    EXPECT_EQ(std::signbit(*back.gpus[0].power_w), std::signbit(v));
    EXPECT_EQ(*back.gpus[0].power_w, v);
    if (t_in_range) {
      EXPECT_EQ(back.t, v);
    }
  }
}

TEST(TraceJson, IntegralDoublesAreWrittenAsFloats) {
  Sample s = testing::unknown_sample(1732262400.0);
  s.gpus[0].util_pct = 97.0;
  const std::string line = sample_to_json(s);
  EXPECT_NE(line.find("\"util_pct\":97.0"), std::string::npos) << line;
  EXPECT_NE(line.find("\"t\":1732262400.0"), std::string::npos) << line;
}

TEST(TraceJson, NonFiniteReadingsAreWrittenAsUnknown) {
  Sample s = testing::unknown_sample();
  s.gpus[0].power_w = std::numeric_limits<double>::quiet_NaN();
  s.gpus[0].util_pct = std::numeric_limits<double>::infinity();
  const Sample back = sample_from_json(sample_to_json(s), "t:2");
  EXPECT_FALSE(back.gpus[0].power_w.has_value());
  EXPECT_FALSE(back.gpus[0].util_pct.has_value());
}

TEST(TraceJson, SampleTimeMustBeFiniteToBeWritten) {
  Sample s = testing::unknown_sample();
  s.t = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(sample_to_json(s), TraceError);
}

TEST(TraceJson, IntegerFieldsAcceptIntegralFloatsButNotFractions) {
  const Sample s = sample_from_json(
      R"({"t": 5, "gpus": [{"index": 0.0, "temp_c": 71.0, "mem_used_bytes": 1e10}]})",
      "t:2");
  EXPECT_EQ(s.t, 5.0);
  EXPECT_EQ(s.gpus[0].temp_c, 71);
  EXPECT_EQ(s.gpus[0].mem_used_bytes, 10000000000ULL);
}

TEST(TraceJson, ReusingOneSampleGivesTheSameResultAsAFreshOne) {
  // The reader parses into the caller's Sample to keep its storage; nothing
  // from the previous line may leak into the next.
  Sample reused;
  sample_from_json(sample_to_json(testing::full_sample()), "t:2", reused);
  const Sample sparse = testing::unknown_sample();
  sample_from_json(sample_to_json(sparse), "t:3", reused);
  expect_same(sparse, reused);
  sample_from_json(R"({"t": 9})", "t:4", reused);
  expect_same(sample_from_json(R"({"t": 9})", "t:4"), reused);
  EXPECT_TRUE(reused.gpus.empty());
  EXPECT_TRUE(reused.processes.empty());
  EXPECT_FALSE(reused.host.cpu_util_pct.has_value());
}

TEST(TraceJson, UnknownFieldsAreIgnored) {
  const Sample s = sample_from_json(
      R"({"t": 7, "future": {"a": [1, {"b": null}]}, "gpus": [{"index": 0, "nvlink": [1,2], "util_pct": 12}],
          "host": {"cpu_util_pct": 3, "numa": "x"}, "processes": [{"pid": 1, "oom_score": 5}],
          "events": [{"kind": "xid", "severity": "bad", "code": 13}]})",
      "t:2");
  EXPECT_EQ(s.t, 7.0);
  EXPECT_EQ(s.gpus[0].util_pct, 12.0);
  EXPECT_EQ(s.host.cpu_util_pct, 3.0);
  EXPECT_EQ(s.processes[0].pid, 1u);
  EXPECT_EQ(s.events[0].code, 13);
}

TEST(TraceJson, KeysInAnyOrderAreRead) {
  const Sample s = sample_from_json(
      R"({"events": [], "host": {"load1": 2.5}, "gpus": [{"power_w": 100, "index": 2}], "t": 3})",
      "t:2");
  EXPECT_EQ(s.t, 3.0);
  EXPECT_EQ(s.gpus[0].index, 2);
  EXPECT_EQ(s.gpus[0].power_w, 100.0);
  EXPECT_EQ(s.host.load1, 2.5);
}

// "Additions to version 1": the contract's names, written only when known
// (absent and null both mean unknown, and older traces stay as they were).
TEST(TraceJson, AdditionsToVersion1UseTheContractNames) {
  const json s = json::parse(sample_to_json(testing::full_sample()));
  const json& g = s["gpus"][0];
  for (const char* k :
       {"mem_reserved_bytes", "bar1_used_bytes", "ecc_sbe_aggregate_total",
        "ecc_dbe_aggregate_total", "ecc_sram_correctable_aggregate_total",
        "ecc_sram_uncorrectable_aggregate_total",
        "ecc_dram_correctable_aggregate_total",
        "ecc_dram_uncorrectable_aggregate_total",
        "ecc_sram_correctable_volatile_total",
        "ecc_sram_uncorrectable_volatile_total",
        "ecc_dram_correctable_volatile_total",
        "ecc_dram_uncorrectable_volatile_total", "ecc_sram_threshold_exceeded",
        "remapped_rows_correctable_total", "remapped_rows_uncorrectable_total",
        "row_remap_histogram", "recovery_action", "temp_limit_margin_c",
        "read_errors"})
    EXPECT_TRUE(g.contains(k)) << k;
  EXPECT_EQ(
      g["row_remap_histogram"],
      json::parse(
          R"({"max": 639, "high": 1, "partial": 0, "low": 0, "none": 0})"));
  EXPECT_EQ(g["read_errors"], json::parse(R"(["fan_pct", "power_w"])"));
  EXPECT_EQ(s["gpus"][1]["recovery_action"], "drain_and_reset");
  EXPECT_EQ(s["processes"][0]["dev_shm_bytes"], 67108864);
  EXPECT_EQ(s["processes"][0]["ns_pid"], 17);
  EXPECT_EQ(s["events"][0]["logged_at"], 1732276991.25);
  EXPECT_FALSE(s["events"][1].contains("logged_at"));
  EXPECT_EQ(s["events"][1]["kind"], "pcie_aer");
  EXPECT_EQ(s["events"][1]["severity"], "corrected");
  EXPECT_EQ(s["device_holders"][0]["devices"][1], "nvidiactl");

  const json h = json::parse(header_to_json(testing::full_header()));
  EXPECT_EQ(h["driver"]["kernel_module_version"], "535.129.03");
  EXPECT_EQ(h["driver"]["library_version"], "535.104.05");
  EXPECT_EQ(h["pci_gpus"][3]["driver"], "vfio-pci");
  for (const char* k : {"minor_number", "temp_max_operating_c",
                        "temp_mem_max_c", "bar1_total_bytes", "vbios_version"})
    EXPECT_TRUE(h["gpus"][0].contains(k)) << k;

  const json u = json::parse(sample_to_json(testing::unknown_sample()));
  for (const char* k : {"mem_reserved_bytes", "row_remap_histogram",
                        "recovery_action", "read_errors"})
    EXPECT_FALSE(u["gpus"][0].contains(k)) << k;
  EXPECT_FALSE(u.contains("device_holders"));
}

// Issue 13's fields: GPM activity (flat, on the GPU and on each MIG
// instance), NVLink, MIG instances, per-process utilisation and instance.
TEST(TraceJson, MigNvlinkAndGpmUseTheContractNames) {
  const json s = json::parse(sample_to_json(testing::full_sample()));
  const json& g = s["gpus"][0];
  for (const char* k :
       {"sm_active_pct", "sm_occupancy_pct", "tensor_active_pct",
        "dram_active_pct", "fp64_active_pct", "fp32_active_pct",
        "fp16_active_pct", "nvlink_tx_bytes_per_s", "nvlink_rx_bytes_per_s",
        "nvlinks", "mig_instances"})
    EXPECT_TRUE(g.contains(k)) << k;
  EXPECT_EQ(g["nvlinks"][1],
            json::parse(R"({"link": 17, "active": false, "version": 4,
                            "crc_errors_total": 1234567, "replay_total": 0,
                            "recovery_total": 0})"));
  EXPECT_EQ(g["mig_instances"][0]["profile"], "3g.40gb");
  EXPECT_EQ(g["mig_instances"][0]["gi_id"], 1);
  EXPECT_EQ(g["mig_instances"][0]["sm_active_pct"], 50.0);
  EXPECT_FALSE(g["mig_instances"][1].contains("sm_active_pct"));
  const json& p = g["processes"][0];
  EXPECT_EQ(p["sm_util_pct"], 87.5);
  EXPECT_EQ(p["mem_util_pct"], 40.0);
  EXPECT_EQ(p["gi_id"], 1);
  EXPECT_EQ(p["ci_id"], 0);
  const json h = json::parse(header_to_json(testing::full_header()));
  EXPECT_EQ(h["gpus"][0]["mig_profiles"][0]["profile"], "3g.40gb");
  EXPECT_FALSE(h["gpus"][0]["mig_profiles"][0].contains("mem_used_bytes"));

  const json u = json::parse(sample_to_json(testing::unknown_sample()));
  for (const char* k : {"sm_active_pct", "nvlinks", "mig_instances",
                        "nvlink_tx_bytes_per_s", "fabric_state"})
    EXPECT_FALSE(u["gpus"][0].contains(k)) << k;
}

TEST(TraceJson, MigInstanceAndNvlinkNeedTheirIds) {
  for (const auto& [path, key] :
       std::vector<std::pair<std::string, std::string>>{
           {"mig_instances", "gi_id"},
           {"mig_instances", "ci_id"},
           {"nvlinks", "link"}}) {
    json s = json::parse(sample_to_json(testing::full_sample()));
    s["gpus"][0][path][0].erase(key);
    try {
      sample_from_json(s.dump(), "t:2");
      ADD_FAILURE() << path << " without " << key << " was accepted";
    } catch (const TraceError& e) {
      EXPECT_NE(std::string(e.what()).find("gpus[0]." + path +
                                           "[0]: missing required field \"" +
                                           key + "\""),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(TraceJson, RemapHistogramMustHaveEveryBank) {
  json s = json::parse(sample_to_json(testing::full_sample()));
  s["gpus"][0]["row_remap_histogram"].erase("low");
  try {
    sample_from_json(s.dump(), "t:2");
    FAIL() << "a histogram without its low bank was accepted";
  } catch (const TraceError& e) {
    EXPECT_NE(
        std::string(e.what()).find(
            "gpus[0].row_remap_histogram: missing required field \"low\""),
        std::string::npos)
        << e.what();
  }
}

TEST(TraceJson, PciGpuWithoutADriverIsNullAndReadsBackUnbound) {
  TraceHeader h = testing::full_header();
  h.pci_gpus = std::vector<PciGpu>{{.address = "0000:0a:00.0", .driver = {}}};
  const std::string line = header_to_json(h);
  EXPECT_NE(
      line.find(R"("pci_gpus":[{"address":"0000:0a:00.0","driver":null}])"),
      std::string::npos)
      << line;
  const TraceHeader back = header_from_json(line, "t:1");
  ASSERT_TRUE(back.pci_gpus);
  EXPECT_FALSE((*back.pci_gpus)[0].driver.has_value());
  TraceHeader none = testing::full_header();
  none.pci_gpus.reset();
  EXPECT_FALSE(header_from_json(header_to_json(none), "t:1").pci_gpus);
}

}  // namespace
}  // namespace gd
