// Node history: samples kept in a SQLite file so `gpudoctor serve` can answer
// /api/v1/history and `gpudoctor export` can write yesterday's incident back
// as a trace (docs/trace-format.md) for `diagnose --from`.
//
// The SQLite implementation lives in sqlite_history_store.cc (samples packed in
// blocks, see block_codec.h).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/sample.h"
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

struct HistoryPoint {
  double t;
  double v;
};

struct HistorySeries {
  std::optional<int> gpu;
  std::optional<int> pid;
  std::vector<HistoryPoint> points;
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
  virtual std::vector<std::string> metrics() const = 0;

  // Writes the header and every stored sample with since <= t <= until as a
  // trace; returns samples written. Corrupted blocks are skipped and
  // counted in `report`.
  virtual size_t export_trace(double since, double until, TraceWriter& out,
                              ReadReport* report = nullptr) const = 0;

  virtual StoreHealth health() const = 0;
};

}  // namespace gd
