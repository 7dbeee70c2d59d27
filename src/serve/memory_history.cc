#include "serve/memory_history.h"

#include <deque>
#include <mutex>
#include <utility>
#include <vector>

#include "api/alerts_json.h"
#include "serve/history_reply.h"
#include "store/series_points.h"

namespace gd {
namespace {

class MemoryHistory : public History {
 public:
  MemoryHistory(double keep_s, size_t max_bytes)
      : keep_s_(keep_s), max_bytes_(max_bytes) {}

  void set_header(const TraceHeader& header) override {
    std::lock_guard lock(mu_);
    header_ = header;
  }

  void append(const Sample& sample) override {
    const size_t bytes = approx_sample_bytes(sample);
    std::lock_guard lock(mu_);
    samples_.push_back({sample, bytes});
    bytes_ += bytes;
    // By age, then by bytes; the sample just taken always stays.
    while (samples_.size() > 1 &&
           (samples_.front().sample.t < sample.t - keep_s_ ||
            bytes_ > max_bytes_)) {
      bytes_ -= samples_.front().bytes;
      samples_.pop_front();
    }
  }

  bool on_disk() const override { return false; }
  void flush() override {}
  void maintain(double) override {}

  std::string query_json(const HistoryQuery& q) const override {
    const std::vector<std::string> metrics = checked_metrics(q);
    std::vector<store::Metric> parsed;
    for (const auto& m : metrics)
      parsed.push_back(store::parse_metric("memory", m));
    std::vector<store::SeriesSet> sets(parsed.size());
    {
      std::lock_guard lock(mu_);
      for (const Held& h : samples_) {
        if (h.sample.t < q.since || h.sample.t > q.until) continue;
        for (size_t i = 0; i < parsed.size(); ++i)
          store::add_points(sets[i], parsed[i], q.gpu, q.pid, h.sample);
      }
    }
    std::vector<std::vector<HistorySeries>> results;
    for (auto& set : sets) results.push_back(store::finish_series(set, q.step));
    return history_reply_json(q, metrics, results, 0, keep_s_);
  }

  TraceHeader header() const override {
    std::lock_guard lock(mu_);
    return header_;
  }

  size_t scan(double since, double until,
              const std::function<bool(Sample&)>& fn,
              ReadReport*) const override {
    // A copy, so that a slow reader (a download) never holds up append().
    std::vector<Sample> range;
    {
      std::lock_guard lock(mu_);
      for (const Held& h : samples_)
        if (h.sample.t >= since && h.sample.t <= until)
          range.push_back(h.sample);
    }
    size_t passed = 0;
    for (Sample& s : range) {
      ++passed;
      if (!fn(s)) break;
    }
    return passed;
  }

  void record_alert(const AlertRecord& a) override {
    std::lock_guard lock(mu_);
    for (AlertRecord& held : alerts_)
      if (held.key == a.key && held.started_at == a.started_at) {
        held = a;  // its resolution
        return;
      }
    alerts_.push_back(a);
    if (alerts_.size() > kMemoryHistoryMaxAlerts) alerts_.pop_front();
  }

  std::string alerts_json(double since, double until) const override {
    api::AlertsReply out{since, until, {}};
    std::lock_guard lock(mu_);
    for (const AlertRecord& a : alerts_) {
      if (a.started_at > until || (a.resolved_at > 0 && a.resolved_at < since))
        continue;
      api::AlertEntry e;
      e.id = a.id;
      e.severity = a.severity;
      e.title = a.title;
      e.evidence = a.evidence;
      e.action = a.action;
      e.gpus = a.gpus;
      e.started_at = a.started_at;
      e.fired_at = a.fired_at;
      if (a.resolved_at > 0) {
        e.resolved_at = a.resolved_at;
        e.ended = "resolved";
      }
      out.alerts.push_back(std::move(e));
    }
    return api::alerts_json(out);
  }

 private:
  struct Held {
    Sample sample;
    size_t bytes = 0;
  };

  const double keep_s_;
  const size_t max_bytes_;
  mutable std::mutex mu_;
  TraceHeader header_;
  std::deque<Held> samples_;
  size_t bytes_ = 0;
  std::deque<AlertRecord> alerts_;
};

size_t text_bytes(const std::string& s) { return s.capacity(); }

}  // namespace

size_t approx_sample_bytes(const Sample& s) {
  size_t n = sizeof(Sample) + s.gpus.size() * sizeof(GpuSample) +
             s.processes.size() * sizeof(ProcessSample) +
             s.events.size() * sizeof(Event) +
             s.slurm_jobs.size() * sizeof(SlurmJob);
  for (const GpuSample& g : s.gpus)
    if (g.processes) n += g.processes->size() * sizeof(GpuProcess);
  for (const ProcessSample& p : s.processes) {
    n += text_bytes(p.user) + text_bytes(p.name) + text_bytes(p.cmdline) +
         text_bytes(p.state);
    if (p.cgroup) n += text_bytes(*p.cgroup);
    for (const std::string& lib : p.libs) n += sizeof lib + text_bytes(lib);
  }
  for (const Event& e : s.events)
    n += text_bytes(e.kind) + text_bytes(e.text) + text_bytes(e.severity) +
         text_bytes(e.pci_address);
  if (s.device_holders)
    for (const DeviceHolder& d : *s.device_holders) {
      n += sizeof d;
      for (const std::string& dev : d.devices)
        n += sizeof dev + text_bytes(dev);
    }
  return n;
}

std::unique_ptr<History> memory_history(double keep_s, size_t max_bytes) {
  return std::make_unique<MemoryHistory>(keep_s, max_bytes);
}

}  // namespace gd
