#include "serve/history.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "serve/log.h"
#include "store/history_store.h"

namespace gd {
namespace {

class StoreHistory : public History {
 public:
  explicit StoreHistory(std::unique_ptr<HistoryStore> store)
      : store_(std::move(store)) {}
  void set_header(const TraceHeader& header) override {
    store_->set_header(header);
  }
  void append(const Sample& sample) override { store_->append(sample); }
  void flush() override { store_->flush(); }
  void maintain(double now) override { store_->maintain(now); }

  std::string query_json(const HistoryQuery& q) const override {
    const auto known = store_->metrics();
    if (std::find(known.begin(), known.end(), q.metric) == known.end())
      throw HistoryQueryError(
          "unknown metric '" + q.metric +
          "' (gpu.<field>, host.<field>, process.used_bytes, "
          "process.cpu_pct)");
    std::vector<HistorySeries> series;
    ReadReport report;
    try {
      series = store_->query(q.metric, q.gpu, q.pid, q.since, q.until, q.step,
                             &report);
    } catch (const StoreError& e) {
      // The message names the DB file: the log gets it, the client not.
      spdlog::error("msg=\"history query failed\" error={}",
                    serve_log::q(e.what()));
      throw std::runtime_error("history query failed (see the serve log)");
    }
    if (report.skipped_blocks > 0)
      spdlog::warn(
          "msg=\"history query skipped corrupt blocks\" skipped_blocks={} "
          "hint=\"gpudoctor db check\"",
          report.skipped_blocks);
    using nlohmann::json;
    json out = {{"metric", q.metric},
                {"since", q.since},
                {"until", q.until},
                {"step", q.step},
                {"skipped_blocks", report.skipped_blocks}};
    json arr = json::array();
    for (const auto& s : series) {
      json points = json::array();
      for (const auto& p : s.points) points.push_back({p.t, p.v});
      arr.push_back({{"gpu", s.gpu ? json(*s.gpu) : json(nullptr)},
                     {"pid", s.pid ? json(*s.pid) : json(nullptr)},
                     {"points", std::move(points)}});
    }
    out["series"] = std::move(arr);
    return out.dump(-1, ' ', false, json::error_handler_t::replace);
  }

  Health health() const override {
    StoreHealth h = store_->health();
    Health out;
    out.status.writable = h.writable;
    out.status.write_errors_total = h.write_errors_total;
    out.status.pending_bytes = h.pending_bytes;
    out.status.dropped_samples_total = h.dropped_samples_total;
    out.status.quarantined_total = h.quarantined_total;
    out.last_error = h.last_error;
    return out;
  }

 private:
  std::unique_ptr<HistoryStore> store_;
};

}  // namespace

std::unique_ptr<History> open_history(const std::string& path,
                                      double retention_s) {
  std::error_code ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) {
    std::filesystem::create_directories(parent, ec);
    if (ec)
      throw std::runtime_error(parent.string() +
                               ": cannot create: " + ec.message());
  }
  StoreOptions o;
  o.path = path;
  o.retention_s = retention_s;
  auto history = std::make_unique<StoreHistory>(HistoryStore::open(o));
  if (auto n = history->health().status.quarantined_total; n > 0)
    spdlog::warn(
        "msg=\"corrupt pending history moved to quarantine\" db={} "
        "batches={} hint=\"gpudoctor db check --db PATH\"",
        serve_log::q(path), n);
  return history;
}

}  // namespace gd
