// History store size and speed for `gpudoctor serve --db`.
//
// Goal: at most 1.3 bytes on disk per stored numeric value (Prometheus TSDB
// needs ~1.3) for 8 GPUs sampled at 1 Hz for a day with 64 processes,
// processes and events included in the file; append fast enough to never
// slow the 1 Hz sampling loop; the dashboard's queries under 50 ms: 24 h of
// 8 GPUs x 6 metrics at the 1-minute tier, and one process's GPU memory and
// CPU over the last hour.
//
//   bench_store [--hours 24] [--gpus 8] [--scenario healthy-training]
//               [--processes N] [--db PATH] [--keep]
//
// Prints: samples, numeric values, DB file size, bytes per value (whole
// file, and numeric blobs alone), bytes per sample of processes/events,
// append throughput, query and export latency, downsampling time.
#include <sqlite3.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "store/downsample.h"
#include "store/history_store.h"
#include "store/numeric_fields.h"
#include "tracegen/tracegen.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

size_t numeric_values(const gd::Sample& s) {
  size_t n = 0;
  for (const auto& g : s.gpus)
    for (const auto& f : gd::store::gpu_fields())
      n += gd::store::get_cell(g, f).present;
  for (const auto& f : gd::store::host_fields())
    n += gd::store::get_cell(s.host, f).present;
  return n;
}

// Checkpoints the WAL into the main file (as a daemon's automatic
// checkpoints do) and returns sizes of the blob columns.
struct Sizes {
  double num = 0, rest = 0;
};
Sizes checkpoint_and_measure(const std::string& path) {
  sqlite3* db = nullptr;
  Sizes s;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) return s;
  sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr,
               nullptr);
  sqlite3_stmt* st = nullptr;
  const char* sql =
      "SELECT (SELECT coalesce(sum(length(num)),0) FROM blocks) + "
      "(SELECT coalesce(sum(length(num)),0) FROM pending), "
      "(SELECT coalesce(sum(length(rest)),0) FROM blocks) + "
      "(SELECT coalesce(sum(length(rest)),0) FROM pending)";
  if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    s.num = sqlite3_column_double(st, 0);
    s.rest = sqlite3_column_double(st, 1);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return s;
}

template <typename Fn>
double time_ms(Fn fn, int reps = 5) {
  auto t0 = Clock::now();
  for (int i = 0; i < reps; ++i) fn();
  return seconds_since(t0) * 1000 / reps;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gpudoctor history store benchmark"};
  double hours = 24;
  std::string scenario = "healthy-training";
  std::string db =
      (std::filesystem::temp_directory_path() / "gd_bench_store.db").string();
  bool keep = false;
  gd::tracegen::Options go;
  go.gpus = 8;
  app.add_option("--hours", hours, "simulated hours at 1 Hz");
  app.add_option("--gpus", go.gpus, "GPUs");
  app.add_option("--scenario", scenario, "tracegen scenario");
  app.add_option("--processes", go.processes,
                 "process entries per sample (0: scenario's)");
  app.add_option("--db", db, "DB file (removed first)");
  app.add_flag("--keep", keep, "keep the DB file");
  CLI11_PARSE(app, argc, argv);
  go.duration_s = hours * 3600;

  for (const char* suffix : {"", "-wal", "-shm"})
    std::filesystem::remove(db + suffix);
  gd::tracegen::Generator gen(scenario, go);
  gd::StoreOptions so;
  so.path = db;
  so.retention_s = 400 * 86400.0;  // the generated day lies in the past
  auto store = gd::HistoryStore::open(so);
  store->set_header(gen.header());

  gd::Sample s;
  std::optional<uint32_t> gpu_pid;  // a GPU process of the last sample
  size_t samples = 0, values = 0, processes = 0, events = 0;
  double append_s = 0, first_t = 0, last_t = 0;
  while (gen.next(s)) {
    values += numeric_values(s);
    processes += s.processes.size();
    events += s.events.size();
    if (samples == 0) first_t = s.t;
    last_t = s.t;
    for (const auto& g : s.gpus)
      if (g.processes && !g.processes->empty() && !gpu_pid)
        gpu_pid = g.processes->front().pid;
    auto t0 = Clock::now();
    store->append(s);
    append_s += seconds_since(t0);
    ++samples;
  }
  store->flush();
  // As a running serve does once a minute: seal and roll up into minute
  // averages (12 raw blocks a call) while the raw day is kept.
  auto roll_t0 = Clock::now();
  for (int i = 0; i < 16; ++i) store->maintain(last_t + 1);
  const double roll_s = seconds_since(roll_t0);
  auto sizes = checkpoint_and_measure(db);
  double file = static_cast<double>(std::filesystem::file_size(db));

  std::printf("scenario %s: %d GPUs, %.1f h at 1 Hz\n", scenario.c_str(),
              go.gpus, hours);
  std::printf(
      "samples                 %zu (%.1f process entries, %.3f events per "
      "sample)\n",
      samples, static_cast<double>(processes) / samples,
      static_cast<double>(events) / samples);
  std::printf("numeric values          %zu\n", values);
  std::printf(
      "DB file                 %.2f MiB (raw day + its minute averages; "
      "rolling them up took %.2f s)\n",
      file / (1 << 20), roll_s);
  std::printf(
      "bytes per value (file)  %.3f   <- goal <= 1.3 (Prometheus TSDB ~1.3)\n",
      file / values);
  std::printf("bytes per value (numeric blobs only)  %.3f\n",
              sizes.num / values);
  std::printf(
      "processes+events+flags  %.1f bytes per sample (%.2f MiB, %.0f%% of "
      "file)\n",
      sizes.rest / samples, sizes.rest / (1 << 20), 100 * sizes.rest / file);
  std::printf(
      "append                  %.0f samples/s (%.1f us per sample incl. "
      "commits)\n",
      samples / append_s, 1e6 * append_s / samples);

  auto query = [&](const char* metric, double span, double step) {
    return time_ms([&] {
      auto r = store->query(metric, std::nullopt, std::nullopt, last_t - span,
                            last_t, step);
      if (r.empty()) std::printf("  (no data for %s)\n", metric);
    });
  };
  std::printf("query gpu.util_pct 1h raw, all GPUs      %8.2f ms\n",
              query("gpu.util_pct", 3600, 0));
  std::printf("query gpu.util_pct 24h step 60s          %8.2f ms\n",
              query("gpu.util_pct", 86400, 60));
  std::printf("query host.cpu_util_pct 10m raw          %8.2f ms\n",
              query("host.cpu_util_pct", 600, 0));
  std::printf("query process.used_bytes 1h step 10s     %8.2f ms\n",
              query("process.used_bytes", 3600, 10));
  // The dashboard's queries (serve's /api/v1/history with metric=a,b,...).
  const std::vector<std::string> six = {
      "gpu.util_pct", "gpu.mem_used_bytes", "gpu.temp_c",
      "gpu.power_w",  "gpu.sm_clock_mhz",   "gpu.pcie_tx_bytes_per_s"};
  auto dashboard_day = [&] {
    return time_ms([&] {
      store->query_many(six, std::nullopt, std::nullopt, last_t - 86400, last_t,
                        60);
    });
  };
  std::printf(
      "dashboard: 24h x %d GPUs x 6 metrics step 60s, fresh day %8.2f ms   <- "
      "goal < 50"
      "\n",
      go.gpus, dashboard_day());
  auto one_process = [&] {
    return time_ms([&] {
      auto r =
          store->query_many({"process.used_bytes", "process.cpu_pct"},
                            std::nullopt, gpu_pid, last_t - 3600, last_t, 0);
      if (r[0].empty() || r[1].empty()) std::printf("  (no process data)\n");
    });
  };
  if (gpu_pid)
    std::printf(
        "one process's GPU memory + CPU, 1h raw   %8.2f ms   <- goal < 50\n",
        one_process());
  std::printf("export 1h to a trace                     %8.2f ms\n",
              time_ms(
                  [&] {
                    gd::TraceWriter w("/dev/null");
                    store->export_trace(last_t - 3600, last_t, w);
                  },
                  2));

  // A day later everything is old: downsample it all to minute averages.
  auto t0 = Clock::now();
  for (int i = 0; i < 20; ++i)
    store->maintain(last_t + gd::store::kRawKeepS + 3600);
  double maintain_s = seconds_since(t0);
  auto after = checkpoint_and_measure(db);
  std::printf(
      "a day later: drop the raw day             %8.2f s; blobs %.2f MiB -> "
      "%.2f "
      "MiB\n",
      maintain_s, (sizes.num + sizes.rest) / (1 << 20),
      (after.num + after.rest) / (1 << 20));
  std::printf(
      "dashboard: the same a day later (raw tier gone)          %8.2f ms\n",
      dashboard_day());
  (void)first_t;
  store.reset();
  if (!keep)
    for (const char* suffix : {"", "-wal", "-shm"})
      std::filesystem::remove(db + suffix);
  return 0;
}
