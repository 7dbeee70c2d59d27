// Shared helpers of the store tests: a scratch directory and samples.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "model/sample.h"
#include "store/history_store.h"
#include "trace/trace_io.h"

namespace gd::testing {

class StoreDir {
 public:
  StoreDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("gd_store_" + std::to_string(::getpid()) + "_" +
            (info ? info->name() : "x"));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~StoreDir() { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const {
    return (dir_ / name).string();
  }

 private:
  std::filesystem::path dir_;
};

// 2024-11-22 08:00:00 UTC: a multiple of every block span and tier step.
inline constexpr double kT0 = 1732262400.0;

// A sample at `t` with `gpus` GPUs whose values are simple functions of
// `i`, so tests can compute what queries and averages must return.
inline Sample make_sample(double t, int i, int gpus = 2) {
  Sample s;
  s.t = t;
  for (int g = 0; g < gpus; ++g) {
    GpuSample gs;
    gs.index = g;
    gs.util_pct = (i % 10) * (g + 1);
    gs.mem_used_bytes = 1000000000ull + 1000ull * i;
    gs.temp_c = 40 + g;
    gs.power_w = 100.5 + i;
    gs.energy_mj_total = 5000000000ull + 100500ull * i;
    gs.clock_event_reasons = std::vector<std::string>{};
    gs.retired_pages_pending = false;
    gs.processes = std::vector<GpuProcess>{
        {static_cast<uint32_t>(100 + g), 2000ull + i, "compute"}};
    s.gpus.push_back(gs);
  }
  s.host.cpu_util_pct = 10 + (i % 4);
  s.host.mem_available_bytes = 800000000000ull - i;
  for (int g = 0; g < gpus; ++g) {
    ProcessSample p;
    p.pid = 100 + g;
    p.ppid = 1;
    p.user = "alice";
    p.name = "python";
    p.cmdline = "python train.py --rank " + std::to_string(g);
    p.state = "R";
    p.cpu_pct = 50.0 + (i % 3);
    p.threads = 8;
    p.rss_bytes = 1ull << 30;
    p.libs = {"libcudart.so.12.1.105"};
    s.processes.push_back(p);
  }
  return s;
}

inline std::unique_ptr<HistoryStore> open_store(const std::string& path,
                                                size_t batch = 10,
                                                double retention_s = 7 *
                                                                     86400) {
  StoreOptions o;
  o.path = path;
  o.batch_samples = batch;
  o.retention_s = retention_s;
  return HistoryStore::open(o);
}

// h.db in `dir` with `samples` samples at 1 s from kT0, in batches of 10
// (sealed blocks of 600 and the pending batches after them), closed.
inline std::string filled_history(const StoreDir& dir, int samples) {
  std::string path = dir.path("h.db");
  auto store = open_store(path, 10);
  for (int i = 0; i < samples; ++i) store->append(make_sample(kT0 + i, i));
  return path;
}

// Everything export_trace writes for [since, until], read back.
inline std::vector<Sample> export_all(const HistoryStore& store,
                                      const std::string& file, double since = 0,
                                      double until = 1e18,
                                      TraceHeader* header = nullptr) {
  {
    TraceWriter w(file);
    store.export_trace(since, until, w);
  }
  TraceReader r(file);
  if (header) *header = r.header();
  std::vector<Sample> out;
  Sample s;
  while (r.next(s)) out.push_back(s);
  return out;
}

// Runs SQL on the file behind the store's back (the store is closed).
inline void sql(const std::string& path, const std::string& text) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, text.c_str(), nullptr, nullptr, &err), SQLITE_OK)
      << err;
  sqlite3_free(err);
  sqlite3_close(db);
}

// The first column of the first row of a query, or -1.
inline int64_t sql_int(const std::string& path, const std::string& text) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_stmt* st = nullptr;
  int64_t v = -1;
  if (sqlite3_prepare_v2(db, text.c_str(), -1, &st, nullptr) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

}  // namespace gd::testing
