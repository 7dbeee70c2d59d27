// Node history: samples kept in a SQLite file so `gpudoctor serve` can answer
// /api/v1/history and `gpudoctor export` can write yesterday's incident back
// as a trace (docs/trace-format.md) for `diagnose --from`.
//
// The SQLite implementation is SqliteHistoryStore (sqlite_history_store.h,
// internal to the store; samples packed in blocks, see block_codec.h).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/sample.h"
#include "model/sample_fields.h"
#include "trace/trace_io.h"

namespace gd {

struct StoreOptions {
  std::string path;                // SQLite file
  double retention_s = 7 * 86400;  // older data deleted
  size_t batch_samples = 10;       // samples buffered before one transaction
  // Store extension (beyond what serve needs): open an existing DB for reading
  // only (export, inspection). Missing file = StoreError; append() throws.
  bool read_only = false;
  // While the disk is full (or the file unwritable) encoded batches wait in
  // memory, up to this many bytes; beyond it the oldest are dropped and
  // counted. 32 MiB holds hours of 8 GPUs at 1 s (a 10-minute block of
  // 8 GPUs encodes to ~0.5 MiB).
  size_t max_pending_bytes = size_t{32} << 20;
  // A failed write is retried after retry_min_s, doubling up to retry_max_s.
  double retry_min_s = 1;
  double retry_max_s = 10;
};

// What a read (query, export) had to leave out: blocks or pending batches
// whose bytes no longer decode. The rest of the data is still returned.
struct ReadReport {
  size_t skipped_blocks = 0;
  // export_trace: the first and last sample time written (0 when none), the
  // data's own range, whatever the window asked for.
  double first_t = 0, last_t = 0;
};

// The writer's state, for /metrics and /healthz.
struct StoreHealth {
  bool writable = true;  // false from a failed write until one succeeds
  uint64_t write_errors_total = 0;
  uint64_t pending_bytes = 0;  // encoded, waiting to be written
  uint64_t dropped_samples_total = 0;
  uint64_t quarantined_total = 0;  // blocks/batches moved aside since open
  std::string last_error;          // "PATH: why"; empty when none
};

// what() is "PATH: why" (one line).
class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What scan_fields() fills in each sample of the stored blocks
// (model/sample_fields.h); an unknown GPU field name is a StoreError.
using ScanFields = SampleFields;

// The file is a gpudoctor history of a schema version this gpudoctor does
// not know (store/schema_version.h): refused, nothing read or written.
class StoreVersionError : public StoreError {
 public:
  using StoreError::StoreError;
};

struct HistoryPoint {
  double t;
  double v;
};

struct HistorySeries {
  std::optional<int> gpu;
  std::optional<int> pid;
  std::vector<HistoryPoint> points;
};

// One alert of the alert history (serve's alerting): a finding that fired,
// and when it cleared.
struct StoredAlert {
  std::string key;  // finding id + GPUs: one alert per finding per GPU set
  std::string id, severity, title, evidence, action;
  std::vector<int> gpus;
  double started_at = 0;   // first seen (pending since)
  double fired_at = 0;     // began firing
  double resolved_at = 0;  // 0: still firing
  // Why it ended: "resolved" (the finding went away) or "serve stopped"
  // (the daemon stopped while it fired; set when the store is reopened).
  std::string ended;
};

// Thread-safe: append() from the sampling loop, queries from HTTP threads.
class HistoryStore {
 public:
  static std::unique_ptr<HistoryStore> open(
      const StoreOptions&);  // throws StoreError
  virtual ~HistoryStore();

  virtual void set_header(const TraceHeader&) = 0;  // static facts of this node
                                                    // (kept with the data)
  // Buffered; encoded every batch_samples and written. A failed write does
  // not throw: the batch waits (health() tells) and is retried later.
  virtual void append(const Sample&) = 0;
  virtual void flush() = 0;  // write the buffer now (SIGTERM, shutdown)
  virtual void maintain(
      double now) = 0;  // retention + downsampling; call ~once a minute

  // metric: "gpu.<field>" (numeric GpuSample fields, e.g. gpu.util_pct,
  // gpu.mem_used_bytes, gpu.temp_c), "host.<field>" (numeric HostSample
  // fields), "process.used_bytes", "process.cpu_pct" (per pid, with gpu).
  // step 0 = raw points; otherwise averaged per step bucket. Throws
  // StoreError on an unknown metric. Corrupted blocks are skipped and
  // counted in `report`.
  virtual std::vector<HistorySeries> query(
      const std::string& metric, std::optional<int> gpu, std::optional<int> pid,
      double since, double until, double step,
      ReadReport* report = nullptr) const = 0;
  // Several metrics over one range in one pass (each block is read and
  // decoded once): result i is query(metrics[i], ...). Throws StoreError on
  // an unknown metric.
  virtual std::vector<std::vector<HistorySeries>> query_many(
      const std::vector<std::string>& metrics, std::optional<int> gpu,
      std::optional<int> pid, double since, double until, double step,
      ReadReport* report = nullptr) const = 0;
  virtual std::vector<std::string> metrics() const = 0;
  // Seconds between the stored points of data `age_s` old: 0 (every
  // sample) for the raw tier, 60 for the minute averages kept after it.
  static double stored_step_s(double age_s);

  // Writes the header and every stored sample with since <= t <= until as a
  // trace; returns samples written. Corrupted blocks are skipped and
  // counted in `report`.
  virtual size_t export_trace(double since, double until, TraceWriter& out,
                              ReadReport* report = nullptr) const = 0;
  // Calls fn for every stored sample with since <= t <= until, in time
  // order, and stops early when fn returns false; returns the samples
  // passed. Each sample fn gets is the scan's own copy, its value never
  // read after fn returns: fn may move it away (a reader handing it to
  // another thread saves the copy), or swap it for a sample it is done
  // with, whose storage the scan may reuse. Reads on a connection of its
  // own, so a long download (fn waiting for a slow client) never holds up
  // queries or writes.
  virtual size_t scan(double since, double until,
                      const std::function<bool(Sample&)>& fn,
                      ReadReport* report = nullptr) const = 0;
  // Like scan, with the samples of stored blocks holding only `fields`
  // (samples not yet in a block are passed whole). The sample fn gets is
  // reused: it is valid during the call only. `same_processes`: its host
  // processes are those of the sample fn got before it (a reader keeping
  // something per process tree need not compare them).
  virtual size_t scan_fields(
      double since, double until, const ScanFields& fields,
      const std::function<bool(const Sample&, bool same_processes)>& fn,
      ReadReport* report = nullptr) const = 0;
  // The stored header (the node's static facts); empty if none yet.
  virtual TraceHeader header() const = 0;

  // Alert history. record_alert inserts the alert or updates the one with
  // the same key and started_at (its resolution); a failed write waits and
  // is retried with the samples. alerts() returns those overlapping
  // [since, until], oldest first.
  virtual void record_alert(const StoredAlert& alert) = 0;
  virtual std::vector<StoredAlert> alerts(double since, double until) const = 0;

  virtual StoreHealth health() const = 0;
};

}  // namespace gd
