// SqliteHistoryStore (sqlite_history_store.h): the reads. query_many
// decodes only the numeric columns it needs, from minute averages or raw
// blocks as the step allows; scan and export_trace pass whole samples in
// time order on a connection of their own, scan_fields only the fields
// asked for (projected_block.h).
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/block_codec.h"
#include "store/downsample.h"
#include "store/numeric_fields.h"
#include "store/projected_block.h"
#include "store/series_points.h"
#include "store/sqlite_history_store.h"

namespace gd::store {

namespace {

// Where the tiers overlap (a read transaction must be open on `db`):
// raw blocks up to rolled_id are also in tier 1; tier 1 is only needed
// before raw_from, the first raw sample kept.
struct TierView {
  int64_t rolled_id = 0;
  double raw_from = std::numeric_limits<double>::infinity();
};

TierView tier_view(const Db& db) {
  TierView v;
  Stmt rolled(db, "SELECT value FROM meta WHERE key = 'rolled_id'");
  if (rolled.step())
    v.rolled_id =
        std::strtoll(std::string(rolled.col_blob(0)).c_str(), nullptr, 10);
  Stmt first(db, "SELECT min(t0) FROM blocks WHERE tier = 0");
  if (first.step() && !first.col_is_null(0)) v.raw_from = first.col_double(0);
  return v;
}

// The part [since, hi] of a block a read uses, or false to skip it:
// minute-step reads take tier 1 and only the raw blocks not rolled up
// yet; every other read takes raw data, and tier 1 only before it.
bool block_range(const TierView& v, bool minute, int64_t id, int64_t tier,
                 double until, double& hi) {
  hi = until;
  if (minute) return tier != 0 || id > v.rolled_id;
  if (tier == 0) return true;
  hi = std::min(until, std::nextafter(v.raw_from, -1e308));
  return true;
}

// Points of a decoded block's columns (gpu.* and host.* metrics).
void add_points(SeriesSet& set, const Metric& m, std::optional<int> gpu,
                const NumericColumns& cols, double since, double until) {
  auto add_column = [&](std::optional<int> g, const std::vector<Cell>& col) {
    for (size_t i = 0; i < col.size() && i < cols.t.size(); ++i)
      if (col[i].present && cols.t[i] >= since && cols.t[i] <= until)
        set.add(g, std::nullopt, cols.t[i], col[i].as_double());
  };
  if (m.kind == Metric::kHost) {
    add_column(std::nullopt, cols.host[m.field]);
    return;
  }
  if (m.kind != Metric::kGpu) return;
  for (size_t g = 0; g < cols.gpu_indices.size(); ++g)
    if (!gpu || cols.gpu_indices[g] == *gpu)
      add_column(cols.gpu_indices[g], cols.gpu[g][m.field]);
}

// Points of a format-2 block's process columns (process metrics), with
// the semantics of the per-sample add_points above.
void add_process_points(SeriesSet& set, const Metric& m, std::optional<int> gpu,
                        std::optional<int> pid, const NumericColumns& cols,
                        double since, double until) {
  const auto& pc = cols.processes;
  const size_t n = cols.t.size();
  auto in_range = [&](uint32_t i) {
    return i < n && cols.t[i] >= since && cols.t[i] <= until;
  };
  auto wanted = [&](uint32_t p) {
    return !pid || static_cast<int64_t>(p) == *pid;
  };
  if (m.kind == Metric::kProcessUsed) {
    for (const auto& g : pc.gpus) {
      if (gpu && g.index != *gpu) continue;
      for (const auto& e : g.entries) {
        if (!wanted(e.pid)) continue;
        for (size_t k = 0; k < e.at.size() && k < e.used.size(); ++k)
          if (e.used[k].present && in_range(e.at[k]))
            set.add(g.index, static_cast<int>(e.pid), cols.t[e.at[k]],
                    e.used[k].as_double());
      }
    }
    return;
  }
  if (m.kind != Metric::kProcessCpu) return;
  // The GPU each pid is on in each sample: the first (by index) whose
  // list names it, among the GPUs asked for.
  std::map<uint32_t, std::vector<int>> on_gpu;
  for (const auto& proc : pc.procs)
    if (wanted(proc.statics.pid)) on_gpu[proc.statics.pid];
  for (const auto& g : pc.gpus) {
    if (gpu && g.index != *gpu) continue;
    for (const auto& e : g.entries) {
      auto it = on_gpu.find(e.pid);
      if (it == on_gpu.end()) continue;
      if (it->second.empty()) it->second.assign(n, -1);
      for (uint32_t i : e.at)
        if (i < n && it->second[i] < 0) it->second[i] = g.index;
    }
  }
  for (const auto& proc : pc.procs) {
    const uint32_t p = proc.statics.pid;
    if (!wanted(p)) continue;
    const auto& where = on_gpu[p];
    for (size_t k = 0; k < proc.at.size() && k < proc.cpu_pct.size(); ++k) {
      const uint32_t i = proc.at[k];
      if (!proc.cpu_pct[k].present || !in_range(i)) continue;
      const int g = where.empty() ? -1 : where[i];
      if (gpu && g < 0) continue;
      if (g < 0 && !pid) continue;
      set.add(g >= 0 ? std::optional<int>(g) : std::nullopt,
              static_cast<int>(p), cols.t[i], proc.cpu_pct[k].as_double());
    }
  }
}

}  // namespace

// A read transaction on rdb_ whose snapshot matches open_: both are taken
// under the writer lock, so a block sealed meanwhile is seen either in the
// DB or in open_, never in both or neither.
class SqliteHistoryStore::ReadSnapshot {
 public:
  template <typename Fn>
  ReadSnapshot(const SqliteHistoryStore& s, Fn&& with_open) : s_(s) {
    s_.rdb_.exec("BEGIN");
    try {
      std::lock_guard lock(s_.mu_);
      // The snapshot starts at the first read, not at BEGIN.
      Stmt first(s_.rdb_, "SELECT count(*) FROM meta");
      first.run();
      with_open();
    } catch (...) {
      s_.rdb_.exec("ROLLBACK");
      throw;
    }
  }
  ~ReadSnapshot() {
    if (active_) {
      // An exception left a statement mid-way: stop it so the
      // transaction can end and the statement be reused.
      s_.sel_num_.reset();
      s_.sel_all_.reset();
      s_.sel_meta_.reset();
      try {
        s_.rdb_.exec("ROLLBACK");
      } catch (...) {
        // Read-only transaction: nothing to undo.
      }
    }
  }
  void end() {
    active_ = false;
    s_.rdb_.exec("COMMIT");
  }

 private:
  const SqliteHistoryStore& s_;
  bool active_ = true;
};

std::vector<HistorySeries> SqliteHistoryStore::query(
    const std::string& metric_name, std::optional<int> gpu,
    std::optional<int> pid, double since, double until, double step,
    ReadReport* report) const {
  return query_many({metric_name}, gpu, pid, since, until, step, report)
      .front();
}

std::vector<std::vector<HistorySeries>> SqliteHistoryStore::query_many(
    const std::vector<std::string>& names, std::optional<int> gpu,
    std::optional<int> pid, double since, double until, double step,
    ReadReport* report) const {
  std::vector<Metric> ms;
  for (const auto& n : names) ms.push_back(parse_metric(opt_.path, n));
  if (!(step >= 0) || !std::isfinite(step))
    throw StoreError(opt_.path + ": step must be a number >= 0");
  std::vector<SeriesSet> sets(ms.size());
  std::vector<int> gpu_keep, host_keep;
  bool need_samples = false;  // a process metric: whole samples decoded
  for (const auto& m : ms) {
    if (m.kind == Metric::kGpu) gpu_keep.push_back(m.field);
    if (m.kind == Metric::kHost) host_keep.push_back(m.field);
    if (m.kind == Metric::kProcessUsed || m.kind == Metric::kProcessCpu)
      need_samples = true;
  }
  auto add_sample = [&](const Sample& s) {
    for (size_t i = 0; i < ms.size(); ++i)
      add_points(sets[i], ms[i], gpu, pid, s);
  };
  size_t skipped = skipped_pending_;
  std::lock_guard rlock(rmu_);
  ReadSnapshot snap(*this, [&] {
    for (const auto& s : queued_samples(since, until)) add_sample(s);
    for (const auto& s : open_)
      if (s.t >= since && s.t <= until) add_sample(s);
  });
  // Format-2 blocks answer process metrics from their process columns;
  // older blocks are decoded whole.
  const TierView tiers = tier_view(rdb_);
  const bool minute =
      step >= store::kTier1StepS && std::fmod(step, store::kTier1StepS) == 0;
  Stmt& sel = need_samples ? sel_all_ : sel_num_;
  const int id_col = need_samples ? 3 : 2;
  sel.reset();
  sel.bind(1, since).bind(2, until);
  while (sel.step()) {
    double hi = until;
    if (!block_range(tiers, minute, sel.col_int(id_col),
                     sel.col_int(id_col + 1), until, hi) ||
        hi < since)
      continue;
    store::NumericColumns cols;
    try {
      cols = store::decode_numeric_fields(sel.col_blob(1), gpu_keep, host_keep,
                                          need_samples);
    } catch (const std::exception&) {  // CodecError
      ++skipped;  // `db check` names it; the other blocks still answer
      continue;
    }
    for (size_t i = 0; i < ms.size(); ++i)
      add_points(sets[i], ms[i], gpu, cols, since, hi);
    if (!need_samples) continue;
    if (cols.has_processes) {
      for (size_t i = 0; i < ms.size(); ++i)
        add_process_points(sets[i], ms[i], gpu, pid, cols, since, hi);
      continue;
    }
    auto samples = try_decode(sel.col_blob(1), sel.col_blob(2));
    if (!samples) ++skipped;
    for (const auto& s : samples.value_or(std::vector<Sample>{})) {
      if (s.t < since || s.t > hi) continue;
      for (size_t i = 0; i < ms.size(); ++i)
        if (ms[i].kind == Metric::kProcessUsed ||
            ms[i].kind == Metric::kProcessCpu)
          add_points(sets[i], ms[i], gpu, pid, s);
    }
  }
  snap.end();
  if (report) report->skipped_blocks += skipped;

  std::vector<std::vector<HistorySeries>> out;
  for (auto& set : sets) out.push_back(finish_series(set, step));
  return out;
}

std::vector<std::string> SqliteHistoryStore::metrics() const {
  return metric_names();
}

size_t SqliteHistoryStore::export_trace(double since, double until,
                                        TraceWriter& out,
                                        ReadReport* report) const {
  out.write_header(header());
  return scan(
      since, until,
      [&](const Sample& s) {
        out.write_sample(s);
        if (report) {
          if (report->first_t == 0) report->first_t = s.t;
          report->last_t = s.t;
        }
        return true;
      },
      report);
}

size_t SqliteHistoryStore::scan(double since, double until,
                                const std::function<bool(Sample&)>& fn,
                                ReadReport* report) const {
  // The block's samples are this scan's: passed mutable, fn may move them
  // or swap them for others. Every block is decoded into this one vector,
  // reusing the storage the samples there hold: without read-ahead, a
  // block is decoded only once the one before has been passed.
  auto samples = std::make_shared<std::vector<Sample>>();
  return scan_blocks<Sample&>(
      since, until,
      [samples](std::string_view num,
                std::string_view rest) -> BlockPass<Sample&> {
        store::decode_block_into(num, rest, *samples);
        return [samples](const SampleFn<Sample&>& each) {
          for (Sample& s : *samples)
            if (!each(s, false)) return;
        };
      },
      false, [&fn](Sample& s, bool) { return fn(s); }, report);
}

size_t SqliteHistoryStore::scan_fields(double since, double until,
                                       const ScanFields& fields,
                                       const SampleFn<const Sample&>& fn,
                                       ReadReport* report) const {
  ProjectedBlockDecoder decoder(opt_.path, fields);
  return scan_blocks<const Sample&>(
      since, until,
      [&decoder](std::string_view num,
                 std::string_view rest) -> BlockPass<const Sample&> {
        auto block = std::make_shared<const ProjectedBlockDecoder::Prepared>(
            decoder.prepare(num, rest));
        return [&decoder, block](const SampleFn<const Sample&>& each) {
          decoder.pass(*block, each);
        };
      },
      true, fn, report);
}

template <typename SampleRef>
size_t SqliteHistoryStore::scan_blocks(double since, double until,
                                       const BlockReader<SampleRef>& read,
                                       bool read_ahead,
                                       const SampleFn<SampleRef>& fn,
                                       ReadReport* report) const {
  size_t skipped = skipped_pending_;
  std::vector<Sample> tail;
  Db db(opt_.path, true);
  sqlite3_busy_timeout(db.handle(), kBusyTimeoutMs);
  db.exec("BEGIN");
  struct Rollback {
    Db& db;
    bool done = false;
    ~Rollback() {
      if (done) return;
      try {
        db.exec("ROLLBACK");
      } catch (...) {
        // Read-only transaction: nothing to undo.
      }
    }
  } rollback{db};
  {
    // The snapshot and the in-memory samples are taken together (see
    // ReadSnapshot): a block sealed meanwhile is seen once.
    std::lock_guard lock(mu_);
    Stmt first(db, "SELECT count(*) FROM meta");
    first.run();
    // Blocks waiting for the disk come after every written one.
    tail = queued_samples(since, until);
    for (const auto& s : open_)
      if (s.t >= since && s.t <= until) tail.push_back(s);
  }
  size_t passed = 0;
  bool go_on = true;
  double last = -std::numeric_limits<double>::infinity();
  // Whether the sample before the one being passed reached fn: only then
  // does "the same processes as the sample before" hold for fn too.
  bool passed_before = false;
  auto pass = [&](SampleRef s, bool same_processes) {
    // Blocks are ordered by their first sample; never pass time going
    // backwards, which a trace reader would reject.
    if (!go_on || s.t < since || s.t > until || s.t < last) {
      passed_before = false;
      return;
    }
    last = s.t;
    ++passed;
    const bool same = same_processes && passed_before;
    passed_before = true;
    go_on = fn(s, same);
  };
  const TierView tiers = tier_view(db);
  Stmt sel(db,
           "SELECT t0, num, rest, id, tier FROM blocks WHERE t1 >= ?1 AND "
           "t0 <= ?2 ORDER BY t0, tier DESC");
  sel.bind(1, since).bind(2, until);
  // The block being decoded (on another thread with read_ahead) while
  // the one before it is passed; one decode at a time.
  struct Ahead {
    std::future<BlockPass<SampleRef>> decoded;
    double hi = 0;
  };
  std::optional<Ahead> ahead;
  using Decoded = std::optional<std::pair<BlockPass<SampleRef>, double>>;
  auto take = [&]() -> Decoded {
    if (!ahead) return std::nullopt;
    Ahead a = std::move(*ahead);
    ahead.reset();
    try {
      return std::make_pair(a.decoded.get(), a.hi);
    } catch (const std::exception&) {  // CodecError, or bad JSON in rest
      ++skipped;  // `db check` names it; the other blocks still answer
      return std::nullopt;
    }
  };
  auto pass_block = [&](const Decoded& b) {
    if (!b || !go_on) return;
    const double hi = b->second;
    b->first([&](SampleRef s, bool same_processes) {
      if (s.t <= hi)
        pass(s, same_processes);
      else
        passed_before = false;
      return go_on;
    });
  };
  // The block passed before `ready`: freed by the next decode, off the
  // thread that passes samples.
  Decoded spent;
  while (go_on && sel.step()) {
    double hi = until;
    block_range(tiers, false, sel.col_int(3), sel.col_int(4), until, hi);
    if (hi < since) continue;
    auto ready = take();
    // The row's bytes last until the next step: the decoder gets copies.
    ahead = Ahead{
        std::async(read_ahead ? std::launch::async : std::launch::deferred,
                   [&read, num = std::string(sel.col_blob(1)),
                    rest = std::string(sel.col_blob(2)),
                    spent = std::move(spent)]() mutable {
                     spent.reset();
                     return read(num, rest);
                   }),
        hi};
    pass_block(ready);
    spent = std::move(ready);
  }
  pass_block(take());
  sel.reset();
  db.exec("COMMIT");
  rollback.done = true;
  for (auto& s : tail) pass(s, false);
  if (report) report->skipped_blocks += skipped;
  return passed;
}

// Samples of sealed blocks still waiting for the disk (full), so reads
// see them too. Caller holds mu_.
std::vector<Sample> SqliteHistoryStore::queued_samples(double since,
                                                       double until) const {
  std::vector<Sample> out;
  for (const auto& w : queue_.items()) {
    if (!w.is_block || w.t1 < since || w.t0 > until) continue;
    for (auto& s :
         try_decode(w.enc.numeric, w.enc.rest).value_or(std::vector<Sample>{}))
      if (s.t >= since && s.t <= until) out.push_back(std::move(s));
  }
  return out;
}

}  // namespace gd::store
