// The rendered page against the 4-GPU scenario (tests/data): every
// dcgm-exporter family with dcgm's labels and the scenario's values, stale
// GPUs without series, untrusted process names escaped, and promtool's own
// parser and linter on the result.
#include "exporter/exporter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "trace/trace_io.h"

namespace gd {
namespace {

struct Scenario {
  TraceHeader header;
  Sample sample;
};

Scenario load_scenario() {
  TraceReader reader(std::string(GD_TEST_DATA) + "/scenario_4gpu.jsonl");
  Scenario s{reader.header(), {}};
  EXPECT_TRUE(reader.next(s.sample));
  return s;
}

MetricsInput input_for(const Scenario& s) {
  MetricsInput in;
  in.header = &s.header;
  in.sample = &s.sample;
  for (const auto& g : s.sample.gpus)
    in.gpu_health.push_back({g.index, !g.stale && !g.lost, g.lost, s.sample.t});
  in.now = s.sample.t + 0.5;
  in.collect_duration_s = 0.012;
  in.collections_total = 1;
  in.version = "9.9.9";
  return in;
}

// "name{labels}" -> value, plus name -> TYPE.
struct ExporterPage {
  std::map<std::string, double> series;
  std::map<std::string, std::string> types;
  std::string text;
};

// "gpudoctor_x{Hostname=\"h\",gpu=\"0\"}" -> "gpudoctor_x{gpu=\"0\"}": every
// native series carries the node's Hostname first (as dcgm-exporter's do);
// the tests below key series without it.
std::string without_hostname(const std::string& key) {
  if (key.rfind("gpudoctor_", 0) != 0) return key;
  const size_t open = key.find('{');
  const std::string want = "{Hostname=\"";
  if (open == std::string::npos || key.compare(open, want.size(), want) != 0) {
    ADD_FAILURE() << "no Hostname label first: " << key;
    return key;
  }
  const size_t close = key.find('"', open + want.size());
  std::string rest = key.substr(close + 1);  // "," or "}"
  if (rest == "}") return key.substr(0, open);
  return key.substr(0, open + 1) + rest.substr(1);
}

ExporterPage parse_exporter_page(const std::string& text) {
  ExporterPage p;
  p.text = text;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# TYPE ", 0) == 0) {
      auto rest = line.substr(7);
      auto sp = rest.find(' ');
      p.types[rest.substr(0, sp)] = rest.substr(sp + 1);
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    auto sp = line.rfind(' ');
    p.series[without_hostname(line.substr(0, sp))] =
        std::stod(line.substr(sp + 1));
  }
  return p;
}

std::string dcgm_labels(const TraceHeader& h, const GpuInfo& g) {
  return "gpu=\"" + std::to_string(g.index) + "\",UUID=\"" + g.uuid +
         "\",pci_bus_id=\"" + g.pci_bus_id + "\",device=\"nvidia" +
         std::to_string(g.index) + "\",modelName=\"" + g.name +
         "\",Hostname=\"" + h.host.hostname + "\",DCGM_FI_DRIVER_VERSION=\"" +
         h.driver->driver_version + "\"";
}

TEST(Exporter, EveryDcgmFamilyHasDcgmLabelsAndTheScenarioValues) {
  const Scenario s = load_scenario();
  ASSERT_EQ(s.header.gpus.size(), 4u);
  const ExporterPage page = parse_exporter_page(render_metrics(input_for(s)));
  constexpr double kMiB = 1024.0 * 1024.0;
  for (const auto& info : s.header.gpus) {
    const GpuSample& g = s.sample.gpus.at(info.index);
    const std::string l = "{" + dcgm_labels(s.header, info) + "}";
    std::map<std::string, double> want = {
        {"DCGM_FI_DEV_GPU_UTIL", *g.util_pct},
        {"DCGM_FI_DEV_MEM_COPY_UTIL", *g.mem_util_pct},
        {"DCGM_FI_DEV_FB_USED", std::floor(*g.mem_used_bytes / kMiB)},
        {"DCGM_FI_DEV_FB_FREE",
         std::floor((*info.memory_total_bytes - *g.mem_used_bytes) / kMiB)},
        {"DCGM_FI_DEV_GPU_TEMP", *g.temp_c},
        {"DCGM_FI_DEV_MEMORY_TEMP", *g.mem_temp_c},
        {"DCGM_FI_DEV_POWER_USAGE", *g.power_w},
        {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
         static_cast<double>(*g.energy_mj_total)},
        {"DCGM_FI_DEV_SM_CLOCK", *g.sm_clock_mhz},
        {"DCGM_FI_DEV_MEM_CLOCK", *g.mem_clock_mhz},
        {"DCGM_FI_DEV_XID_ERRORS", 0},
        {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
         static_cast<double>(*g.pcie_replay_total)},
        {"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
         static_cast<double>(*g.ecc_sbe_volatile_total)},
        {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
         static_cast<double>(*g.ecc_dbe_volatile_total)},
        {"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
         static_cast<double>(clock_event_reason_mask(*g.clock_event_reasons))},
    };
    for (const auto& [name, value] : want) {
      auto it = page.series.find(name + l);
      ASSERT_NE(it, page.series.end()) << name << l << "\n" << page.text;
      EXPECT_DOUBLE_EQ(it->second, value) << name << " gpu " << info.index;
    }
  }
  // Units and types as dcgm-exporter declares them.
  EXPECT_EQ(page.types.at("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"), "counter");
  EXPECT_EQ(page.types.at("DCGM_FI_DEV_PCIE_REPLAY_COUNTER"), "counter");
  EXPECT_EQ(page.types.at("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL"), "counter");
  EXPECT_EQ(page.types.at("DCGM_FI_DEV_GPU_UTIL"), "gauge");
  EXPECT_EQ(page.types.at("DCGM_FI_DEV_FB_USED"), "gauge");
  EXPECT_EQ(page.types.at("DCGM_FI_DEV_XID_ERRORS"), "gauge");
  // 80 GiB A100: 67584 MiB used of 81920 in the scenario's first sample.
  EXPECT_NE(page.text.find(
                "# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB)."),
            std::string::npos);
}

TEST(Exporter, ThrottleReasonMaskUsesNvmlBits) {
  EXPECT_EQ(clock_event_reason_mask({"gpu_idle"}), 0x1u);
  EXPECT_EQ(clock_event_reason_mask({"sw_power_cap", "sw_thermal_slowdown"}),
            0x24u);
  EXPECT_EQ(clock_event_reason_mask({"hw_power_brake_slowdown", "nonsense"}),
            0x80u);
}

TEST(Exporter, UnknownFieldsHaveNoSeriesNotZero) {
  Scenario s = load_scenario();
  // GPU 3's fan speed is null in the scenario.
  ASSERT_FALSE(s.sample.gpus[3].fan_pct);
  const ExporterPage page = parse_exporter_page(render_metrics(input_for(s)));
  for (const auto& [k, v] : page.series) {
    if (k.rfind("DCGM_FI_DEV_FAN_SPEED", 0) == 0) {
      EXPECT_EQ(k.find("gpu=\"3\""), std::string::npos) << k;
    }
  }
  EXPECT_TRUE(page.series.count("DCGM_FI_DEV_FAN_SPEED{" +
                                dcgm_labels(s.header, s.header.gpus[0]) + "}"));
}

TEST(Exporter, StaleAndLostGpusHaveNoValueSeriesAndCollectSuccessZero) {
  Scenario s = load_scenario();
  s.sample.gpus[1] = GpuSample{};
  s.sample.gpus[1].index = 1;
  s.sample.gpus[1].stale = true;
  s.sample.gpus[2] = GpuSample{};
  s.sample.gpus[2].index = 2;
  s.sample.gpus[2].lost = true;
  MetricsInput in = input_for(s);
  in.gpu_health[1].last_success_t = s.sample.t - 30;
  in.gpu_health[2].last_success_t.reset();
  const ExporterPage page = parse_exporter_page(render_metrics(in));
  for (const auto& [k, v] : page.series) {
    if (k.rfind("DCGM_", 0) == 0) {
      EXPECT_EQ(k.find("gpu=\"1\""), std::string::npos) << k;
      EXPECT_EQ(k.find("gpu=\"2\""), std::string::npos) << k;
    }
  }
  EXPECT_EQ(page.series.at("gpudoctor_collect_success{gpu=\"0\"}"), 1);
  EXPECT_EQ(page.series.at("gpudoctor_collect_success{gpu=\"1\"}"), 0);
  EXPECT_EQ(page.series.at("gpudoctor_collect_success{gpu=\"2\"}"), 0);
  EXPECT_EQ(page.series.at("gpudoctor_gpu_lost{gpu=\"2\"}"), 1);
  EXPECT_EQ(page.series.at("gpudoctor_gpu_lost{gpu=\"1\"}"), 0);
  EXPECT_DOUBLE_EQ(
      page.series.at("gpudoctor_gpu_sample_age_seconds{gpu=\"1\"}"), 30.5);
  EXPECT_DOUBLE_EQ(page.series.at("gpudoctor_sample_age_seconds"), 0.5);
}

TEST(Exporter, NativeFamiliesCarryProcessesReasonsPcieAndHost) {
  Scenario s = load_scenario();
  const ExporterPage page = parse_exporter_page(render_metrics(input_for(s)));
  // GPU 0's process 4242 and its CPU use from the scenario.
  const auto& p0 = (*s.sample.gpus[0].processes)[0];
  const ProcessSample* ps = nullptr;
  for (const auto& p : s.sample.processes)
    if (p.pid == p0.pid) ps = &p;
  ASSERT_NE(ps, nullptr);
  const std::string plabels = "{gpu=\"0\",pid=\"" + std::to_string(p0.pid) +
                              "\",user=\"" + ps->user + "\",comm=\"" +
                              ps->name + "\"}";
  EXPECT_DOUBLE_EQ(
      page.series.at("gpudoctor_process_gpu_memory_bytes" + plabels),
      static_cast<double>(*p0.used_bytes));
  EXPECT_DOUBLE_EQ(page.series.at("gpudoctor_process_cpu_percent" + plabels),
                   *ps->cpu_pct);
  // One 0/1 series per reason: GPU 2 is power capped, not thermally.
  const std::string u2 = s.header.gpus[2].uuid;
  EXPECT_EQ(page.series.at("gpudoctor_clock_event_reason{gpu=\"2\",UUID=\"" +
                           u2 + "\",reason=\"sw_power_cap\"}"),
            1);
  EXPECT_EQ(page.series.at("gpudoctor_clock_event_reason{gpu=\"2\",UUID=\"" +
                           u2 + "\",reason=\"hw_thermal_slowdown\"}"),
            0);
  // GPU 3's link trained down to gen 1 of 5.
  const std::string g3 = "{gpu=\"3\",UUID=\"" + s.header.gpus[3].uuid + "\"}";
  EXPECT_EQ(page.series.at("gpudoctor_pcie_link_generation" + g3),
            *s.sample.gpus[3].pcie_gen);
  EXPECT_EQ(page.series.at("gpudoctor_pcie_link_max_generation" + g3),
            *s.header.gpus[3].pcie_max_gen);
  EXPECT_DOUBLE_EQ(page.series.at("gpudoctor_host_cpu_iowait_percent"),
                   *s.sample.host.cpu_iowait_pct);
  EXPECT_DOUBLE_EQ(page.series.at("gpudoctor_host_memory_available_bytes"),
                   static_cast<double>(*s.sample.host.mem_available_bytes));
  EXPECT_EQ(page.series.at("gpudoctor_build_info{version=\"9.9.9\",nvml_status="
                           "\"ok\",driver_version=\"535.129.03\","
                           "cuda_driver_version=\"12.2\"}"),
            1);
}

// The CPU side of a GPU job, as a fleet reader rebuilds it: the GPU
// process and its workers with their parents, and each GPU's list size
// (0 where it was read and empty, no series where it was not).
TEST(Exporter, JobTreeAndListSizesLetAReaderRebuildTheJob) {
  Scenario s = load_scenario();
  Sample& sample = s.sample;
  sample.processes.clear();
  auto proc = [&](uint32_t pid, uint32_t ppid, const char* name, double cpu) {
    ProcessSample& p = sample.processes.emplace_back();
    p.pid = pid;
    p.ppid = ppid;
    p.name = name;
    p.user = "alice";
    p.cpu_pct = cpu;
  };
  proc(900, 1, "torchrun", 1);
  proc(1000, 900, "python", 60);
  proc(1001, 1000, "pt_data_worker", 97);
  proc(1002, 1000, "pt_data_worker", 98);
  proc(5000, 1, "sshd", 3);  // not of a GPU job
  GpuProcess gp;
  gp.pid = 1000;
  gp.used_bytes = 1u << 30;
  sample.gpus[0].processes = std::vector<GpuProcess>{gp};
  sample.gpus[1].processes = std::vector<GpuProcess>{};
  sample.gpus[2].processes.reset();
  const ExporterPage page = parse_exporter_page(render_metrics(input_for(s)));
  EXPECT_EQ(page.series.at("gpudoctor_gpu_processes{gpu=\"0\"}"), 1);
  EXPECT_EQ(page.series.at("gpudoctor_gpu_processes{gpu=\"1\"}"), 0);
  EXPECT_EQ(page.series.count("gpudoctor_gpu_processes{gpu=\"2\"}"), 0u);
  const std::string tree = "gpudoctor_process_tree_cpu_percent";
  EXPECT_EQ(page.series.at(tree + "{pid=\"1000\",ppid=\"900\",user=\"alice\","
                                  "comm=\"python\"}"),
            60);
  EXPECT_EQ(page.series.at(tree + "{pid=\"1002\",ppid=\"1000\",user=\"alice\","
                                  "comm=\"pt_data_worker\"}"),
            98);
  size_t rows = 0;
  for (const auto& [k, v] : page.series) rows += k.rfind(tree + "{", 0) == 0;
  EXPECT_EQ(rows, 3u);  // the job's three processes, not torchrun or sshd
  EXPECT_EQ(page.series.count("gpudoctor_process_dead{gpu=\"0\",pid=\"1000\","
                              "user=\"alice\",comm=\"python\",state=\"Z\"}"),
            0u);

  // A zombie holder is dead to a reader; in its own PID namespace serve
  // says nothing (every holder would look gone).
  sample.processes[1].state = "Z";
  const std::string dead =
      "gpudoctor_process_dead{gpu=\"0\",pid=\"1000\",user=\"alice\","
      "comm=\"python\",state=\"Z\"}";
  EXPECT_EQ(parse_exporter_page(render_metrics(input_for(s))).series.at(dead),
            1);
  s.header.host.pid_namespace = "container";
  EXPECT_EQ(
      parse_exporter_page(render_metrics(input_for(s))).series.count(dead), 0u);
}

TEST(Exporter, FindingsAreOneSeriesPerLabelSet) {
  Scenario s = load_scenario();
  MetricsInput in = input_for(s);
  in.findings = {{"xid-error", "critical", {0}, "firing"},
                 {"xid-error", "critical", {0}, "firing"},  // second code
                 {"host-swapping", "warning", {}, "pending"},
                 {"gpu-imbalance", "warning", {0, 1}, "pending"}};
  const ExporterPage page = parse_exporter_page(render_metrics(in));
  EXPECT_EQ(page.series.at("gpudoctor_finding{id=\"xid-error\",severity="
                           "\"critical\",gpu=\"0\"}"),
            1);
  EXPECT_EQ(page.series.at("gpudoctor_finding{id=\"host-swapping\",severity="
                           "\"warning\",gpu=\"\"}"),
            1);
  EXPECT_EQ(page.series.at("gpudoctor_alert{id=\"gpu-imbalance\",severity="
                           "\"warning\",gpu=\"0,1\",state=\"pending\"}"),
            1);
  size_t n = 0;
  for (size_t pos = 0;
       (pos = page.text.find("gpudoctor_finding{Hostname=\"dgx-fake-01\","
                             "id=\"xid-error\"",
                             pos)) != std::string::npos;
       ++pos)
    ++n;
  EXPECT_EQ(n, 1u);
}

// Pods time-sharing a GPU: each process's series carry its own pod's
// labels (dcgm-exporter's namespace, pod, container), so each pod's memory
// is its own; a pod known only by its UID adds none.
TEST(Exporter, ProcessSeriesCarryTheirOwnPod) {
  Scenario s = load_scenario();
  const auto& on_gpu0 = *s.sample.gpus[0].processes;
  ASSERT_FALSE(on_gpu0.empty());
  int n = 0;
  for (auto& p : s.sample.processes) {
    if (std::none_of(on_gpu0.begin(), on_gpu0.end(),
                     [&](const GpuProcess& gp) { return gp.pid == p.pid; }))
      continue;
    ProcessPod pod;
    pod.uid = "uid-" + std::to_string(n);
    if (n != 1) {  // the second one: its UID alone
      pod.namespace_ = "ml";
      pod.name = "train-" + std::to_string(n);
      pod.container = "main";
    }
    p.pod = pod;
    ++n;
  }
  const ExporterPage page = parse_exporter_page(render_metrics(input_for(s)));
  n = 0;
  for (const auto& p : s.sample.processes) {
    if (!p.pod) continue;
    const GpuProcess* gp = nullptr;
    for (const auto& g : on_gpu0)
      if (g.pid == p.pid) gp = &g;
    std::string labels = "{gpu=\"0\",pid=\"" + std::to_string(p.pid) +
                         "\",user=\"" + p.user + "\",comm=\"" + p.name + "\"";
    if (p.pod->name)
      labels +=
          ",namespace=\"ml\",pod=\"" + *p.pod->name + "\",container=\"main\"";
    labels += "}";
    ASSERT_TRUE(
        page.series.count("gpudoctor_process_gpu_memory_bytes" + labels))
        << labels << "\n"
        << page.text;
    if (gp && gp->used_bytes) {
      EXPECT_DOUBLE_EQ(
          page.series.at("gpudoctor_process_gpu_memory_bytes" + labels),
          static_cast<double>(*gp->used_bytes));
    }
    ++n;
  }
  EXPECT_GE(n, 1);
}

// The kubelet's allocations: one info series each, an idle one included.
TEST(Exporter, PodInfoSeriesPerAllocation) {
  Scenario s = load_scenario();
  s.sample.pod_allocations = std::vector<PodAllocation>{
      {0, s.header.gpus[0].uuid, 0, "nvidia.com/gpu", "ml", "train-0", "main"},
      {0, s.header.gpus[0].uuid, 1, "nvidia.com/gpu", "ml", "train-1", "main"},
      {1, s.header.gpus[1].uuid, std::nullopt, "nvidia.com/gpu", "infer",
       "serve\"0", "server"}};
  const ExporterPage page = parse_exporter_page(render_metrics(input_for(s)));
  auto info = [&](int gpu, const std::string& ns, const std::string& pod,
                  const std::string& container, const std::string& replica) {
    return "gpudoctor_gpu_pod_info{gpu=\"" + std::to_string(gpu) +
           "\",uuid=\"" + s.header.gpus[static_cast<size_t>(gpu)].uuid +
           "\",namespace=\"" + ns + "\",pod=\"" + pod + "\",container=\"" +
           container + "\",resource=\"nvidia.com/gpu\",replica=\"" + replica +
           "\"}";
  };
  EXPECT_EQ(page.series.at(info(0, "ml", "train-0", "main", "0")), 1);
  EXPECT_EQ(page.series.at(info(0, "ml", "train-1", "main", "1")), 1);
  EXPECT_EQ(page.series.at(info(1, "infer", "serve\\\"0", "server", "")), 1)
      << page.text;
  s.sample.pod_allocations.reset();
  EXPECT_EQ(render_metrics(input_for(s)).find("gpudoctor_gpu_pod_info"),
            std::string::npos);
}

// dcgm-exporter's Kubernetes labels: on a GPU's DCGM series when exactly
// one pod container holds it; a GPU time-shared by two pods keeps plain
// labels (each pod's share is on its per-process series instead).
TEST(Exporter, DcgmSeriesOfAGpuWithOnePodCarryThePodsLabels) {
  Scenario s = load_scenario();
  s.sample.pod_allocations = std::vector<PodAllocation>{
      {0, s.header.gpus[0].uuid, 0, "nvidia.com/gpu", "ml", "train-0", "main"},
      {0, s.header.gpus[0].uuid, 1, "nvidia.com/gpu", "ml", "train-1", "main"},
      {1, s.header.gpus[1].uuid, std::nullopt, "nvidia.com/gpu", "infer",
       "serve\"0", "server"},
      {2, s.header.gpus[2].uuid, 0, "nvidia.com/gpu", "ml", "solo", "main"},
      {2, s.header.gpus[2].uuid, 1, "nvidia.com/gpu", "ml", "solo", "main"}};
  const ExporterPage page = parse_exporter_page(render_metrics(input_for(s)));
  const auto& h = s.header;
  const std::string util = "DCGM_FI_DEV_GPU_UTIL";
  EXPECT_EQ(page.series.count(util + "{" + dcgm_labels(h, h.gpus[0]) + "}"), 1u)
      << page.text;
  EXPECT_EQ(page.series.count(util + "{" + dcgm_labels(h, h.gpus[1]) +
                              ",container=\"server\",namespace=\"infer\","
                              "pod=\"serve\\\"0\"}"),
            1u)
      << page.text;
  // Both replicas of GPU 2 went to one container: it is that pod's GPU.
  EXPECT_EQ(page.series.count(util + "{" + dcgm_labels(h, h.gpus[2]) +
                              ",container=\"main\",namespace=\"ml\","
                              "pod=\"solo\"}"),
            1u)
      << page.text;
  EXPECT_EQ(page.series.count(util + "{" + dcgm_labels(h, h.gpus[3]) + "}"),
            1u);
  // gpudoctor's own GPU series keep their labels: they join the info series.
  EXPECT_EQ(page.text.find("gpudoctor_gpu_memory_used_bytes{Hostname=\"" +
                           h.host.hostname + "\",gpu=\"1\",pod="),
            std::string::npos);
}

// A GPU listing more processes than the page keeps per GPU (a crowd of
// time-sliced pods, or a hostile list): the 64 largest holders have their
// own series, the rest one pid="other" series with their sum.
TEST(Exporter, ProcessSeriesPerGpuAreBoundedWithAnOtherRow) {
  Scenario s = load_scenario();
  constexpr uint64_t kMiB = 1ull << 20;
  std::vector<GpuProcess> crowd;
  uint64_t folded = 0;
  for (uint32_t i = 0; i < 100; ++i) {
    const uint64_t bytes = (1000 - i) * kMiB;  // pid 50000 holds the most
    crowd.push_back({50000 + i, bytes, "compute"});
    if (i >= 64) folded += bytes;
  }
  s.sample.gpus[0].processes = crowd;
  const ExporterPage page = parse_exporter_page(render_metrics(input_for(s)));
  size_t gpu0 = 0;
  for (const auto& [key, v] : page.series)
    if (key.rfind("gpudoctor_process_gpu_memory_bytes{gpu=\"0\"", 0) == 0)
      ++gpu0;
  EXPECT_EQ(gpu0, 65u) << page.text;
  EXPECT_EQ(page.series.count("gpudoctor_process_gpu_memory_bytes{gpu=\"0\","
                              "pid=\"50063\",user=\"\",comm=\"\"}"),
            1u);
  EXPECT_EQ(page.series.count("gpudoctor_process_gpu_memory_bytes{gpu=\"0\","
                              "pid=\"50064\",user=\"\",comm=\"\"}"),
            0u);
  EXPECT_DOUBLE_EQ(
      page.series.at("gpudoctor_process_gpu_memory_bytes{gpu=\"0\",pid="
                     "\"other\",user=\"\",comm=\"\"}"),
      static_cast<double>(folded));
}

// A process that names itself to break the exposition format.
Scenario hostile_scenario() {
  Scenario s = load_scenario();
  for (auto& p : s.sample.processes)
    if (p.pid == 4242) {
      p.name = "ev\"il\\na\nme\xFF\xC3";
      p.user = std::string(300, 'u');
    }
  return s;
}

TEST(Exporter, HostileProcessNameIsEscapedCappedAndValidUtf8) {
  const Scenario s = hostile_scenario();
  const std::string text = render_metrics(input_for(s));
  const std::string want =
      "gpudoctor_process_gpu_memory_bytes{Hostname=\"dgx-fake-01\",gpu=\"0\","
      "pid=\"4242\",user=\"" +
      std::string(128, 'u') +
      "\",comm=\"ev\\\"il\\\\na\\nme\xEF\xBF\xBD\xEF\xBF\xBD\"} ";
  EXPECT_NE(text.find(want), std::string::npos) << text;
  // Every line is a comment or a series: no raw newline inside a label.
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    EXPECT_TRUE(line.rfind("# ", 0) == 0 || line.rfind("DCGM_", 0) == 0 ||
                line.rfind("gpudoctor_", 0) == 0)
        << line;
}

// promtool parses the page with Prometheus's own parser and lints it. The
// dcgm-exporter names (upper case, counters without _total, camelCase
// labels) are kept on purpose for compatibility, so lint remarks about
// DCGM_* families are accepted; gpudoctor_* families must be clean.
// GPU 0 of the scenario as an A100 that has seen memory errors (the
// additions to version 1); GPU 1 reports none of them.
void add_memory_health(Scenario& s) {
  // The scenario file's GPUs may carry some of these already: GPU 1 is made
  // to know none of them.
  GpuSample& none = s.sample.gpus.at(1);
  none.mem_reserved_bytes.reset();
  none.bar1_used_bytes.reset();
  none.remapped_rows_correctable_total.reset();
  none.remapped_rows_uncorrectable_total.reset();
  none.ecc_sbe_aggregate_total.reset();
  none.ecc_dbe_aggregate_total.reset();
  none.row_remap_histogram.reset();
  none.recovery_action.clear();
  none.temp_limit_margin_c.reset();
  none.read_errors.clear();
  GpuSample& g = s.sample.gpus.at(0);
  g.ecc_sbe_aggregate_total = 14;
  g.ecc_dbe_aggregate_total = 1;
  g.ecc_sram_correctable_aggregate_total = 4;
  g.ecc_sram_uncorrectable_aggregate_total = 1;
  g.ecc_dram_correctable_aggregate_total = 10;
  g.ecc_dram_uncorrectable_aggregate_total = 0;
  g.ecc_sram_uncorrectable_volatile_total = 1;
  g.ecc_sram_threshold_exceeded = true;
  g.remapped_rows_correctable_total = 3;
  g.remapped_rows_uncorrectable_total = 2;
  g.row_remap_histogram = RowRemapHistogram{630, 6, 2, 1, 1};
  g.recovery_action = kRecoveryDrainAndReset;
  g.temp_limit_margin_c = 17;
  g.mem_reserved_bytes = 519ull << 20;
  g.bar1_used_bytes = 5ull << 20;
  g.read_errors = {"power_w", "fan_pct"};
  GpuInfo& info = s.header.gpus.at(0);
  info.bar1_total_bytes = 128ull << 30;
  info.minor_number = 4;
  info.temp_max_operating_c = 87;
  info.temp_mem_max_c = 95;
  info.vbios_version = "92.00.45.00.06";
}

TEST(Exporter, DcgmAggregateEccRemappedRowsAndReservedFbAsDcgmNamesThem) {
  Scenario s = load_scenario();
  add_memory_health(s);
  const ExporterPage page = parse_exporter_page(render_metrics(input_for(s)));
  const std::string g0 = "{" + dcgm_labels(s.header, s.header.gpus[0]) + "}";
  const std::string g1 = "{" + dcgm_labels(s.header, s.header.gpus[1]) + "}";
  const std::map<std::string, std::pair<double, std::string>> want = {
      {"DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", {14, "counter"}},
      {"DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", {1, "counter"}},
      {"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", {3, "counter"}},
      {"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", {2, "counter"}},
      {"DCGM_FI_DEV_FB_RESERVED", {519, "gauge"}},
  };
  for (const auto& [name, v] : want) {
    ASSERT_TRUE(page.series.count(name + g0)) << name << "\n" << page.text;
    EXPECT_EQ(page.series.at(name + g0), v.first) << name;
    EXPECT_EQ(page.types.at(name), v.second) << name;
    // Unknown on GPU 1: no series, never 0.
    EXPECT_FALSE(page.series.count(name + g1)) << name;
  }
}

TEST(Exporter, NativeMemoryHealthRecoveryActionAndFailedReads) {
  Scenario s = load_scenario();
  add_memory_health(s);
  const ExporterPage page = parse_exporter_page(render_metrics(input_for(s)));
  const std::string uuid = s.header.gpus[0].uuid;
  auto g0 = [&](const std::string& extra) {
    return "{gpu=\"0\",UUID=\"" + uuid + "\"" +
           (extra.empty() ? "" : "," + extra) + "}";
  };
  const std::map<std::string, double> want = {
      {"gpudoctor_ecc_aggregate_errors_total" + g0("type=\"correctable\""), 14},
      {"gpudoctor_ecc_aggregate_errors_total" + g0("type=\"uncorrectable\""),
       1},
      {"gpudoctor_ecc_aggregate_errors_by_location_total" +
           g0("location=\"sram\",type=\"uncorrectable\""),
       1},
      {"gpudoctor_ecc_aggregate_errors_by_location_total" +
           g0("location=\"dram\",type=\"correctable\""),
       10},
      {"gpudoctor_ecc_volatile_errors_by_location_total" +
           g0("location=\"sram\",type=\"uncorrectable\""),
       1},
      {"gpudoctor_ecc_sram_threshold_exceeded" + g0(""), 1},
      {"gpudoctor_remapped_rows_total" + g0("type=\"uncorrectable\""), 2},
      {"gpudoctor_row_remap_banks" + g0("bank=\"max\""), 630},
      {"gpudoctor_row_remap_banks" + g0("bank=\"partial\""), 2},
      {"gpudoctor_row_remap_banks" + g0("bank=\"none\""), 1},
      {"gpudoctor_gpu_recovery_action" + g0("action=\"drain_and_reset\""), 1},
      {"gpudoctor_gpu_recovery_action" + g0("action=\"none\""), 0},
      {"gpudoctor_gpu_temperature_limit_margin_celsius" + g0(""), 17},
      {"gpudoctor_gpu_memory_reserved_bytes" + g0(""), 519.0 * 1024 * 1024},
      {"gpudoctor_gpu_bar1_used_bytes" + g0(""), 5.0 * 1024 * 1024},
      {"gpudoctor_gpu_bar1_total_bytes" + g0(""), 128.0 * 1024 * 1024 * 1024},
      {"gpudoctor_gpu_minor_number" + g0(""), 4},
      {"gpudoctor_gpu_temperature_max_operating_celsius" + g0(""), 87},
      {"gpudoctor_gpu_memory_temperature_max_celsius" + g0(""), 95},
      {"gpudoctor_gpu_read_failed" + g0("field=\"power_w\""), 1},
      {"gpudoctor_gpu_read_failed" + g0("field=\"fan_pct\""), 1},
  };
  for (const auto& [series, value] : want) {
    ASSERT_TRUE(page.series.count(series)) << series << "\n" << page.text;
    EXPECT_EQ(page.series.at(series), value) << series;
  }
  EXPECT_EQ(page.types.at("gpudoctor_ecc_aggregate_errors_total"), "counter");
  EXPECT_EQ(page.types.at("gpudoctor_row_remap_banks"), "gauge");
  EXPECT_NE(page.text.find("vbios_version=\"92.00.45.00.06\""),
            std::string::npos);
  // GPU 1 reports none of these: no series at all.
  for (const auto& [series, value] : page.series) {
    if (series.rfind("gpudoctor_row_remap_banks", 0) == 0 ||
        series.rfind("gpudoctor_gpu_recovery_action", 0) == 0 ||
        series.rfind("gpudoctor_gpu_read_failed", 0) == 0) {
      EXPECT_EQ(series.find("gpu=\"1\""), std::string::npos) << series;
    }
  }
}

TEST(Exporter, PromtoolAcceptsThePageWithAHostileProcess) {
  // A prerequisite (scripts/install-deps.sh --test installs it), never a skip.
  ASSERT_STRNE(GD_PROMTOOL, "")
      << "promtool not found: install the Debian package prometheus and "
         "re-run cmake";
  Scenario s = hostile_scenario();
  add_memory_health(s);  // the lint covers the memory-health families too
  MetricsInput in = input_for(s);
  in.findings = {{"thermal-throttling", "warning", {2}, "firing"}};
  const std::string text = render_metrics(in);
  char path[] = "/tmp/gd_exporter_page_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, text.data(), text.size()),
            static_cast<ssize_t>(text.size()));
  close(fd);
  const std::string cmd =
      std::string(GD_PROMTOOL) + " check metrics < " + path + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  unlink(path);
  const int rc = WEXITSTATUS(status);
  // 0: clean; 3: lint remarks only. Anything else is a parse_exporter_page
  // failure.
  ASSERT_TRUE(rc == 0 || rc == 3) << "promtool exit " << rc << ":\n" << out;
  EXPECT_EQ(out.find("error"), std::string::npos) << out;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    EXPECT_EQ(line.find("gpudoctor_"), std::string::npos)
        << "lint remark on a native family: " << line;
  }
}

// serve's per-job counters: one series per job and family, names escaped
// and capped like any process-given text; none without jobs.
TEST(Exporter, JobCountersAreCountersWithEscapedJobLabels) {
  const Scenario s = load_scenario();
  MetricsInput in = input_for(s);
  EXPECT_EQ(render_metrics(in).find("gpudoctor_job_"), std::string::npos);
  in.jobs = {
      {"slurm:77", "ev\"il\nname" + std::string(300, 'x'), 120, 90, 5, 36000},
      {"other", "other", 3, 1, 0, 900}};
  const ExporterPage page = parse_exporter_page(render_metrics(in));
  EXPECT_EQ(page.types.at("gpudoctor_job_energy_joules_total"), "counter");
  EXPECT_EQ(page.types.at("gpudoctor_job_gpu_held_seconds_total"), "counter");
  const std::string evil = "job_key=\"slurm:77\",job_name=\"ev\\\"il\\nname" +
                           std::string(128 - 12, 'x') + "\"";
  EXPECT_EQ(page.series.at("gpudoctor_job_energy_joules_total{" + evil + "}"),
            36000);
  EXPECT_EQ(
      page.series.at("gpudoctor_job_gpu_busy_seconds_total{" + evil + "}"), 90);
  EXPECT_EQ(page.series.at("gpudoctor_job_gpu_idle_held_seconds_total{job_key="
                           "\"other\",job_name=\"other\"}"),
            0);
  EXPECT_EQ(page.series.at("gpudoctor_job_gpu_held_seconds_total{job_key="
                           "\"other\",job_name=\"other\"}"),
            3);
}

}  // namespace
}  // namespace gd
