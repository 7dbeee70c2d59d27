#include "serve/history.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>

#include "api/alerts_json.h"
#include "serve/history_reply.h"
#include "serve/log.h"
#include "serve/unusable_history.h"
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
    const std::vector<std::string> metrics = checked_metrics(q);
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
    return history_reply_json(q, metrics, results, report.skipped_blocks);
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
              const std::function<bool(Sample&)>& fn,
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
    std::vector<StoredAlert> rows;
    try {
      rows = store_->alerts(since, until);
    } catch (const StoreError& e) {
      spdlog::error("msg=\"alert history query failed\" error={}",
                    serve_log::q(e.what()));
      throw std::runtime_error("alert history query failed (see the log)");
    }
    api::AlertsReply out{since, until, {}};
    out.alerts.reserve(rows.size());
    for (auto& a : rows) {
      api::AlertEntry e;
      e.id = std::move(a.id);
      e.severity = std::move(a.severity);
      e.title = std::move(a.title);
      e.evidence = std::move(a.evidence);
      e.action = std::move(a.action);
      e.gpus = std::move(a.gpus);
      e.started_at = a.started_at;
      e.fired_at = a.fired_at;
      if (a.resolved_at > 0) e.resolved_at = a.resolved_at;
      e.ended = std::move(a.ended);
      out.alerts.push_back(std::move(e));
    }
    return api::alerts_json(out);
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
