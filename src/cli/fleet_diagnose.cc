#include "cli/fleet_diagnose.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "http_client/prometheus_api.h"
#include "promsource/fleet_nodes.h"
#include "promsource/read_node.h"
#include "views/diagnose_report.h"

namespace gd {
namespace {

// A node's window, held whole (NodeWindow bounds it) for the engine.
class WindowSource : public SampleSource {
 public:
  explicit WindowSource(const promsource::NodeWindow& w) {
    w.each_sample([this](const Sample& s) { samples_.push_back(s); });
  }
  bool next(Sample& out) override {
    if (at_ == samples_.size()) return false;
    out = std::move(samples_[at_++]);
    return true;
  }

 private:
  std::vector<Sample> samples_;
  size_t at_ = 0;
};

}  // namespace

int diagnose_fleet(const FleetDiagnoseFlags& f,
                   const DiagnoseOptions& options) {
  http::Url url;
  try {
    url = http::parse_url(f.url);
  } catch (const std::invalid_argument& e) {
    throw CLI::ValidationError("--prometheus", e.what());
  }
  std::signal(SIGPIPE, SIG_IGN);
  http::prom::Limits limits;
  // One series per GPU of the fleet when listing the nodes.
  limits.max_series = 65536;
  http::prom::Client client(url, {}, limits);
  http::RequestCancel cancel;
  const double end = std::chrono::duration<double>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  const double start = end - f.window_s;
  const auto nodes = promsource::fleet_nodes(client, start, end, cancel);
  if (nodes.empty())
    throw std::runtime_error(f.url +
                             " has no GPU series (DCGM_FI_DEV_GPU_UTIL)"
                             " in the last " +
                             std::to_string(static_cast<long>(f.window_s)) +
                             " s");
  int worst = -1;
  std::string json = "{\"nodes\":[";
  for (const std::string& node : nodes) {
    DiagnoseResult result;
    TraceHeader header;
    try {
      auto window =
          promsource::read_node(client, {node, start, end, f.step_s}, cancel);
      header = window.header();
      WindowSource source(window);
      result = diagnose(header, source, options);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpudoctor: diagnose: %s: %s\n", node.c_str(),
                   e.what());
      continue;
    }
    worst = std::max(worst, diagnose_exit_code(result));
    // Node names are letters, digits, '.', '-', '_' (node_match.h): no
    // JSON escaping needed.
    if (f.json) {
      if (json.back() != '[') json += ',';
      json += "{\"node\":\"" + node +
              "\",\"report\":" + format_json_report(result) + "}";
    } else {
      std::printf("== %s ==\n%s\n", node.c_str(),
                  format_text_report(result, header).c_str());
    }
  }
  if (f.json) std::printf("%s]}\n", json.c_str());
  return worst < 0 ? kExitCouldNotDiagnose : worst;
}

}  // namespace gd
