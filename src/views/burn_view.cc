#include "views/burn_view.h"

#include <fmt/format.h>

#include <cctype>
#include <nlohmann/json.hpp>

#include "burn/figures.h"
#include "common/bytes_text.h"
#include "common/terminal_text.h"
#include "diagnose/finding_json.h"
#include "views/format.h"

namespace gd {

namespace {

using burn::flops_text;
using burn::rate_text;

std::string burn_text(std::string_view text) {
  return terminal_safe(text, kTerminalSentenceMax);
}

std::string tests_text(bool compute, bool memory, bool pcie, bool collective) {
  std::string out;
  for (auto [on, name] : {std::pair{compute, "compute"},
                          {memory, "memory"},
                          {pcie, "pcie"},
                          {collective, "all-reduce"}})
    if (on) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

std::string upper_case(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// Clock-event reasons in a few words ("power cap", "thermal").
std::string events_text(const GpuSample& g) {
  if (!g.clock_event_reasons) return kUnknown;
  std::string out;
  for (const auto& r : *g.clock_event_reasons) {
    if (r == "gpu_idle") continue;
    std::string word = r;
    if (r == "sw_power_cap")
      word = "power cap";
    else if (r == "sw_thermal_slowdown" || r == "hw_thermal_slowdown")
      word = "THERMAL";
    else if (r == "hw_slowdown")
      word = "HW SLOWDOWN";
    else if (r == "hw_power_brake_slowdown")
      word = "POWER BRAKE";
    else if (r == "applications_clocks_setting")
      word = "app clocks";
    if (out.find(word) == std::string::npos)
      out += (out.empty() ? "" : ", ") + word;
  }
  return out.empty() ? "none" : burn_text(out);
}

// Ordered: the fields of the document first, in its order.
using Json = nlohmann::ordered_json;

template <typename T>
Json opt_json(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

// The all-reduce's block of the report ("" when not asked for).
std::string collective_text(const burn::BurnReport& r) {
  const burn::CollectiveResult& c = r.collective;
  if (!c.asked) return "";
  const auto& v = r.collective_verdict;
  std::string gpus;
  for (int g : c.gpus) gpus += (gpus.empty() ? "" : ",") + std::to_string(g);
  std::string head = "\nAll-reduce";
  if (!gpus.empty()) head += " across GPUs " + gpus;
  std::vector<std::string> paren;
  if (!c.nccl.empty()) paren.push_back(burn_text(c.nccl));
  if (!c.link.empty()) paren.push_back(c.link);
  std::string out = head;
  if (!paren.empty()) {
    out += " (";
    for (size_t i = 0; i < paren.size(); ++i) out += (i ? ", " : "") + paren[i];
    out += ")";
  }
  out += "  " + upper_case(v.verdict) + "\n";
  for (const auto& reason : v.reasons)
    out += "    - " + burn_text(reason) + "\n";
  if (!c.left_out.empty())
    out += "    left out: " + burn_text(c.left_out) + "\n";
  return out;
}

Json collective_json(const burn::BurnReport& r) {
  const burn::CollectiveResult& c = r.collective;
  if (!c.asked) return nullptr;
  const auto& v = r.collective_verdict;
  Json wrong = Json::array();
  for (auto [gpu, n] : c.wrong_by_gpu)
    wrong.push_back({{"gpu", gpu}, {"count", n}});
  auto text_or_null = [](const std::string& t) {
    return t.empty() ? Json(nullptr) : Json(t);
  };
  return {
      {"verdict", v.verdict},
      {"reasons", v.reasons},
      {"busbw_bytes_per_s", opt_json(c.busbw_bytes_per_s)},
      {"algbw_bytes_per_s", opt_json(c.algbw_bytes_per_s)},
      {"expected_busbw_bytes_per_s",
       v.reference ? Json::array({v.reference->low_bytes_per_s,
                                  v.reference->high_bytes_per_s})
                   : Json(nullptr)},
      {"expected_for", v.reference ? Json(v.reference->setup) : Json(nullptr)},
      {"expected_source",
       v.reference ? Json(v.reference->source) : Json(nullptr)},
      {"gpus", c.gpus},
      {"bytes_per_gpu", c.bytes},
      {"iterations", c.iterations},
      {"seconds_per_iteration", opt_json(c.seconds_per_iteration)},
      {"loopback", c.loopback},
      {"link", text_or_null(c.link)},
      {"nccl", text_or_null(c.nccl)},
      {"checked", c.checked},
      {"wrong", c.wrong},
      {"wrong_by_gpu", wrong},
      {"error", text_or_null(c.error)},
      {"hung", c.hung},
      {"left_out", text_or_null(c.left_out)},
      {"nccl_env", text_or_null(c.nccl_env)},
  };
}

}  // namespace

std::string format_burn_start(const burn::BurnStart& s,
                              const burn::BurnOptions& o) {
  std::string host = s.header.host.hostname.empty()
                         ? "this host"
                         : burn_text(s.header.host.hostname);
  std::string out = fmt::format(
      "gpudoctor burn — {}, {} GPU{}, {}: {}; CUDA {}{}\n", host, s.gpus.size(),
      s.gpus.size() == 1 ? "" : "s", elapsed_words(o.duration_s),
      tests_text(o.compute, o.memory, o.pcie, o.collective),
      s.driver_version.empty() ? kUnknown : s.driver_version,
      o.compute ? "; " + (s.cublas.rfind("no cuBLAS", 0) == 0
                              ? burn_text(s.cublas)
                              : "cuBLAS " + burn_text(s.cublas))
                : "");
  if (o.collective) {
    out.pop_back();
    out += "; NCCL " + burn_text(s.nccl) + "\n";
  }
  for (const auto& [gpu, d] : s.gpus)
    out += fmt::format("  GPU {}  {}  {}  CUDA device {}, {} SMs, cc {}.{}\n",
                       gpu, burn_text(d.name), d.pci_bus_id, d.ordinal,
                       d.sm_count, d.cc_major, d.cc_minor);
  return out;
}

std::string format_burn_tick(const burn::BurnTick& t) {
  std::string out;
  const double pct =
      t.duration_s > 0 ? std::min(100.0, 100 * t.elapsed_s / t.duration_s) : 0;
  for (const auto& g : t.gpus) {
    const auto& l = g.live;
    const auto& s = g.sample;
    std::string figure;
    if (l.gflops)
      figure = flops_text(*l.gflops);
    else if (l.bytes_per_s)
      figure = rate_text(*l.bytes_per_s);
    std::string line = fmt::format(
        "GPU {:<2} {:<13} {:>3.0f}%  {:<13} {:>4}  {:>6}  SM {:>9}  events: {} "
        " errors {}",
        g.gpu, l.phase, pct, figure,
        s.temp_c ? fmt::format("{} C", *s.temp_c) : kUnknown,
        s.power_w ? fmt::format("{:.0f} W", *s.power_w) : kUnknown,
        s.sm_clock_mhz ? fmt::format("{} MHz", *s.sm_clock_mhz) : kUnknown,
        events_text(s), l.compute_errors + l.memory_errors);
    if (!l.error.empty()) line += "  " + burn_text(l.error);
    out += line + "\n";
  }
  return out;
}

std::string format_burn_report(const burn::BurnReport& r) {
  std::string host = r.header.host.hostname.empty()
                         ? "this host"
                         : burn_text(r.header.host.hostname);
  std::string out = fmt::format(
      "gpudoctor burn — {}, {} GPU{}, {} ({})\n", host, r.gpus.size(),
      r.gpus.size() == 1 ? "" : "s", elapsed_words(r.ran_s),
      tests_text(r.compute, r.memory, r.pcie, r.collective.asked));
  if (r.interrupted)
    out += fmt::format(
        "!! stopped early (Ctrl-C) after {} of {}: the figures cover what "
        "ran\n",
        elapsed_words(r.ran_s), elapsed_words(r.duration_s));
  if (!r.record_error.empty())
    out += "!! the trace stopped being recorded: " + burn_text(r.record_error) +
           "\n";
  int counts[3] = {0, 0, 0};
  for (const auto& g : r.gpus) {
    const int rank = g.verdict == "fail" ? 2 : g.verdict == "warn" ? 1 : 0;
    ++counts[rank];
    out +=
        fmt::format("\nGPU {}  {:<4}  {}  {}\n", g.gpu, upper_case(g.verdict),
                    burn_text(g.name), burn_text(g.pci_bus_id));
    if (g.verdict == "pass") {
      std::string line;
      for (const auto& s : g.reasons)
        line += (line.empty() ? "" : "; ") + burn_text(s);
      out += "    " + line + "\n";
    } else {
      for (const auto& s : g.reasons) out += "    - " + burn_text(s) + "\n";
      std::string line;
      for (const auto& s : g.notes)
        line += (line.empty() ? "" : "; ") + burn_text(s);
      if (!line.empty()) out += "    figures: " + line + "\n";
    }
  }
  out += collective_text(r);
  const auto& d = r.diagnosis;
  out += fmt::format("\nDiagnosis of the burn window ({} sample{}, {} rules):",
                     d.window.samples, d.window.samples == 1 ? "" : "s",
                     d.rules_checked.size());
  if (d.findings.empty()) {
    out += " no rule found a problem.\n";
  } else {
    out += "\n";
    for (const auto& f : d.findings) {
      out += fmt::format("{:<8}  {}  {}\n", upper_case(burn_text(f.severity)),
                         burn_text(f.id), burn_text(f.title));
      out += "  evidence: " + burn_text(f.evidence) + "\n";
      out += "  action:   " + burn_text(f.action) + "\n";
    }
  }
  out += fmt::format(
      "\n{} pass, {} warn, {} fail{}\n", counts[0], counts[1], counts[2],
      r.collective.asked ? "; all-reduce " + r.collective_verdict.verdict : "");
  return out;
}

std::string format_burn_json(const burn::BurnReport& r) {
  Json gpus = Json::array();
  for (const auto& g : r.gpus) {
    const auto& run = g.run;
    Json bad = Json::array();
    for (uint64_t a : run.memory.bad_addresses)
      bad.push_back(fmt::format("0x{:x}", a));
    Json xids = Json::array();
    for (const auto& x : g.watch.xids) xids.push_back(x.code);
    Json o = {
        // The fields, in its order.
        {"gpu", g.gpu},
        {"verdict", g.verdict},
        {"reasons", g.reasons},
        {"gflops_fp32", opt_json(run.compute.gflops_fp32)},
        {"gflops_fp64", opt_json(run.compute.gflops_fp64)},
        {"compute_errors", run.compute.errors},
        {"memory_errors", run.memory.bad_address_count},
        {"h2d_bytes_per_s", opt_json(run.copy.h2d_bytes_per_s)},
        {"d2h_bytes_per_s", opt_json(run.copy.d2h_bytes_per_s)},
        {"peak_temp_c", opt_json(g.watch.peak_temp_c)},
        {"throttled_pct", opt_json(g.throttled_pct)},
        // Added: what identifies the GPU and the figures behind the reasons.
        {"name", g.name},
        {"uuid", g.uuid},
        {"pci_bus_id", g.pci_bus_id},
        {"cuda_device", g.device.ordinal},
        {"notes", g.notes},
        {"gflops_tensor", opt_json(run.compute.gflops_tensor)},
        {"gflops_fp32_peak", opt_json(g.fp32_expected_gflops)},
        {"memory_bytes_tested", run.memory.bytes_tested},
        {"memtest_bytes_per_s", opt_json(run.memory.bytes_per_s)},
        {"bad_addresses", bad},
        {"copy_errors", run.copy.mismatches},
        {"xids", xids},
        {"pcie_gen", opt_json(g.watch.pcie_gen)},
        {"pcie_width", opt_json(g.watch.pcie_width)},
        {"error",
         run.fatal_error.empty() ? Json(nullptr) : Json(run.fatal_error)},
        {"hung", run.hung},
    };
    gpus.push_back(std::move(o));
  }
  Json findings = Json::array();
  for (const auto& f : r.diagnosis.findings)
    findings.push_back(Json::parse(finding_to_json(f).dump()));
  Json tests = Json::array();
  if (r.compute) tests.push_back("compute");
  if (r.memory) tests.push_back("memory");
  if (r.pcie) tests.push_back("pcie");
  if (r.collective.asked) tests.push_back("collective");
  Json doc = {{"gpus", gpus},
              {"findings", findings},
              {"tests", tests},
              {"duration_s", r.duration_s},
              {"ran_s", r.ran_s},
              {"interrupted", r.interrupted},
              {"record_error",
               r.record_error.empty() ? Json(nullptr) : Json(r.record_error)},
              {"cuda_driver", r.driver_version},
              {"cublas", r.cublas},
              {"collective", collective_json(r)},
              {"exit_code", burn::burn_exit_code(r)}};
  return doc.dump();
}

}  // namespace gd
