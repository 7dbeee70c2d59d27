#include "procmgmt/serve_history.h"

#include <httplib.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace gd::procmgmt {

std::optional<std::vector<HistorySeries>> parse_history_json(
    const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("series") ||
      !j["series"].is_array())
    return std::nullopt;
  std::vector<HistorySeries> out;
  for (const auto& s : j["series"]) {
    if (!s.is_object() || !s.contains("points") || !s["points"].is_array())
      return std::nullopt;
    HistorySeries hs;
    if (s.contains("gpu") && s["gpu"].is_number_integer())
      hs.gpu = s["gpu"].get<int>();
    for (const auto& p : s["points"]) {
      if (!p.is_array() || p.size() != 2 || !p[0].is_number() ||
          !p[1].is_number())
        return std::nullopt;
      hs.points.emplace_back(p[0].get<double>(), p[1].get<double>());
    }
    out.push_back(std::move(hs));
  }
  return out;
}

std::map<uint32_t, std::vector<HistorySeries>> fetch_process_memory_history(
    const std::string& base_url, const std::vector<uint32_t>& pids,
    const std::string& since, const std::string& step) {
  std::map<uint32_t, std::vector<HistorySeries>> out;
  if (pids.empty() || base_url.empty()) return out;
  std::string url = base_url;
  while (!url.empty() && url.back() == '/') url.pop_back();
  httplib::Client client(url);
  if (!client.is_valid()) return out;
  client.set_connection_timeout(0, kServeConnectTimeoutMs * 1000);
  client.set_read_timeout(0, kServeReadTimeoutMs * 1000);
  client.set_write_timeout(0, kServeReadTimeoutMs * 1000);
  client.set_keep_alive(true);
  for (uint32_t pid : pids) {
    std::string path =
        "/api/v1/history?metric=process.used_bytes&pid=" + std::to_string(pid) +
        "&since=" + since + "&step=" + step;
    auto res = client.Get(path);
    if (!res) break;  // not running: do not wait once per pid
    if (res->status != 200) continue;
    if (auto series = parse_history_json(res->body); series && !series->empty())
      out[pid] = std::move(*series);
  }
  return out;
}

std::string sparkline(const std::vector<double>& values) {
  static const char* kBars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  if (values.empty()) return {};
  auto [mn, mx] = std::minmax_element(values.begin(), values.end());
  std::string out;
  for (double v : values) {
    size_t i = *mx > *mn
                   ? static_cast<size_t>((v - *mn) / (*mx - *mn) * 7.0 + 0.5)
                   : 0;
    out += kBars[std::min<size_t>(i, 7)];
  }
  return out;
}

}  // namespace gd::procmgmt
