#include "serve/history.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "serve/log.h"
#include "serve/unusable_history.h"
#include "store/history_store.h"

namespace gd {
namespace {

// A finite double in its shortest round-trip form (JSON has no NaN or Inf:
// those are null).
void append_number(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, ec == std::errc() ? end : buf);
}

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
    std::vector<std::string> metrics = q.metrics;
    if (metrics.empty()) metrics.push_back(q.metric);
    for (const auto& m : metrics)
      if (std::find(known.begin(), known.end(), m) == known.end())
        throw HistoryQueryError(
            "unknown metric '" + m +
            "' (gpu.<field>, host.<field>, process.used_bytes, "
            "process.cpu_pct)");
    std::vector<std::vector<HistorySeries>> results;
    ReadReport report;
    try {
      results = store_->query_many(metrics, q.gpu, q.pid, q.since, q.until,
                                   q.step, &report);
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
    // Written directly (a day of 8 GPUs is ~100k points; a JSON tree of
    // them costs more than the query).
    std::string out = "{\"since\":";
    append_number(out, q.since);
    out += ",\"until\":";
    append_number(out, q.until);
    out += ",\"step\":";
    append_number(out, q.step);
    out += ",\"skipped_blocks\":" + std::to_string(report.skipped_blocks);
    auto append_series = [&](const std::vector<HistorySeries>& series) {
      out += '[';
      for (size_t k = 0; k < series.size(); ++k) {
        const auto& s = series[k];
        if (k) out += ',';
        out += "{\"gpu\":";
        out += s.gpu ? std::to_string(*s.gpu) : "null";
        out += ",\"pid\":";
        out += s.pid ? std::to_string(*s.pid) : "null";
        out += ",\"points\":[";
        for (size_t i = 0; i < s.points.size(); ++i) {
          if (i) out += ',';
          out += '[';
          append_number(out, s.points[i].t);
          out += ',';
          append_number(out, s.points[i].v);
          out += ']';
        }
        out += "]}";
      }
      out += ']';
    };
    if (q.multi) {
      out += ",\"results\":[";
      for (size_t i = 0; i < metrics.size(); ++i) {
        if (i) out += ',';
        // Metric names are from the store's own list (checked above).
        out += "{\"metric\":\"" + metrics[i] + "\",\"series\":";
        append_series(results[i]);
        out += '}';
      }
      out += ']';
    } else {
      out += ",\"metric\":\"" + metrics.front() + "\",\"series\":";
      append_series(results.front());
    }
    out += '}';
    return out;
  }

  TraceHeader header() const override {
    try {
      return store_->header();
    } catch (const StoreError& e) {
      spdlog::error("msg=\"history header read failed\" error={}",
                    serve_log::q(e.what()));
      throw std::runtime_error("history read failed (see the serve log)");
    }
  }

  size_t scan(double since, double until,
              const std::function<bool(const Sample&)>& fn,
              ReadReport* report) const override {
    try {
      return store_->scan(since, until, fn, report);
    } catch (const StoreError& e) {
      spdlog::error("msg=\"history read failed\" error={}",
                    serve_log::q(e.what()));
      throw std::runtime_error("history read failed (see the serve log)");
    }
  }

  double stored_step_s(double age_s) const override {
    return HistoryStore::stored_step_s(age_s);
  }

  void record_alert(const AlertRecord& a) override {
    StoredAlert s;
    s.key = a.key;
    s.id = a.id;
    s.severity = a.severity;
    s.title = a.title;
    s.evidence = a.evidence;
    s.action = a.action;
    s.gpus = a.gpus;
    s.started_at = a.started_at;
    s.fired_at = a.fired_at;
    s.resolved_at = a.resolved_at;
    s.ended = a.resolved_at > 0 ? "resolved" : "";
    try {
      store_->record_alert(s);
    } catch (const std::exception& e) {
      spdlog::error("msg=\"alert history write failed\" error={}",
                    serve_log::q(e.what()));
    }
  }

  std::string alerts_json(double since, double until) const override {
    using nlohmann::json;
    std::vector<StoredAlert> rows;
    try {
      rows = store_->alerts(since, until);
    } catch (const StoreError& e) {
      spdlog::error("msg=\"alert history query failed\" error={}",
                    serve_log::q(e.what()));
      throw std::runtime_error("alert history query failed (see the log)");
    }
    json arr = json::array();
    for (const auto& a : rows)
      arr.push_back(
          {{"id", a.id},
           {"severity", a.severity},
           {"gpus", a.gpus},
           {"title", a.title},
           {"evidence", a.evidence},
           {"action", a.action},
           {"started_at", a.started_at},
           {"fired_at", a.fired_at},
           {"resolved_at",
            a.resolved_at > 0 ? json(a.resolved_at) : json(nullptr)},
           {"ended", a.ended.empty() ? json(nullptr) : json(a.ended)}});
    json out = {{"since", since}, {"until", until}, {"alerts", std::move(arr)}};
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
  std::unique_ptr<History> history;
  try {
    history = std::make_unique<StoreHistory>(HistoryStore::open(o));
  } catch (const StoreVersionError& e) {
    // Monitoring goes on; the file is left as it is for the gpudoctor that
    // wrote it.
    spdlog::error(
        "msg=\"history not usable; serving without it\" db={} error={}",
        serve_log::q(path), serve_log::q(e.what()));
    return unusable_history(e.what());
  }
  if (auto n = history->health().status.quarantined_total; n > 0)
    spdlog::warn(
        "msg=\"corrupt pending history moved to quarantine\" db={} "
        "batches={} hint=\"gpudoctor db check --db PATH\"",
        serve_log::q(path), n);
  return history;
}

}  // namespace gd
