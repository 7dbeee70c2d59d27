#include "burn/burn.h"

#include <pthread.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "burn/collective.h"
#include "burn/cublas.h"
#include "burn/gpu_tests.h"
#include "burn/verdict.h"
#include "common/pci_bus_id.h"
#include "model/gpu_lookup.h"
#include "trace/trace_io.h"

extern char** environ;

namespace gd::burn {

namespace {

// Shares of the run, in the order the tests run on every GPU at once
// (compute heats the node first; the memory test then runs hot; the copy
// test loads every link at the same time, as a data-loading job does).
constexpr double kComputeShare = 0.50, kMemoryShare = 0.35, kPcieShare = 0.15;
// With other tests, the all-reduce takes the run's last share (it needs
// every GPU at once, after their own tests).
constexpr double kCollectiveShare = 0.15;
// A GPU that has not finished a wait for this long (or 10 times what the
// wait should take, if longer) has stopped responding.
constexpr double kHangFloorS = 5;
// The longest the GPUs may take to set up (context, JIT) before the run
// starts without the late ones.
constexpr double kSetupTimeoutS = 120;

// The watchdog's test, for a GPU's tests and the all-reduce alike.
bool stopped_answering(const LiveSlot& live) {
  auto [since, expected] = live.since_beat();
  return since > std::max(kHangFloorS, 10 * expected);
}

struct Target {
  int gpu = 0;  // NVML index
  cuda::DeviceFacts device;
  const GpuInfo* info = nullptr;
};

// What one GPU's thread shares with the others. Held by shared_ptr: a hung
// GPU's thread is left behind (it may never return from the driver).
struct Worker {
  Target target;
  LiveSlot live;
  std::mutex mu;
  GpuRunResult result;     // guarded by mu
  bool finished = false;   // guarded by mu
  bool abandoned = false;  // guarded by mu: declared hung
};

// Everything a worker thread reads, kept alive as long as any thread is.
struct Shared {
  std::unique_ptr<cuda::CudaLibrary> lib;
  std::unique_ptr<cuda::NcclLibrary> nccl;
  std::unique_ptr<Cublas> cublas;
  std::string no_cublas;
  FmaReference reference;
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  bool released = false;
  Clock::time_point t0;
};

struct Phase {
  const char* name;
  double share;
};

std::vector<Phase> plan_for(const BurnOptions& o) {
  std::vector<Phase> phases;
  if (o.compute) phases.push_back({"compute", kComputeShare});
  if (o.memory) phases.push_back({"memory", kMemoryShare});
  if (o.pcie) phases.push_back({"pcie", kPcieShare});
  double total = 0;
  for (const auto& p : phases) total += p.share;
  // The per-GPU tests' part of the run: all of it, or all but the
  // all-reduce's share.
  const double part = o.collective ? 1 - kCollectiveShare : 1;
  for (auto& p : phases) p.share *= part / total;
  return phases;
}

void run_worker(std::shared_ptr<Shared> shared, std::shared_ptr<Worker> w,
                BurnOptions options, const std::atomic<bool>* stop) {
  const std::string thread_name = "gd-burn-" + std::to_string(w->target.gpu);
  pthread_setname_np(pthread_self(), thread_name.substr(0, 15).c_str());
  GpuRunResult local;
  auto commit = [&] {
    std::lock_guard<std::mutex> lock(w->mu);
    if (!w->abandoned) w->result = local;
  };
  auto arrive = [&] {
    std::unique_lock<std::mutex> lock(shared->mu);
    ++shared->arrived;
    shared->cv.notify_all();
  };
  Clock::time_point t0;
  std::unique_ptr<GpuTests> tests;
  try {
    tests = std::make_unique<GpuTests>(*shared->lib, w->target.device,
                                       shared->reference, *stop, w->live);
  } catch (const std::exception& e) {
    local.fatal_error = e.what();
    if (auto* ce = dynamic_cast<const cuda::CudaError*>(&e))
      local.fatal_error_name = ce->name();
    local.fatal_phase = "setup";
    w->live.update([&](GpuLive& l) {
      l.phase = "failed";
      l.error = e.what();
    });
    commit();
    arrive();
    std::lock_guard<std::mutex> lock(w->mu);
    w->finished = true;
    return;
  }
  arrive();
  {
    std::unique_lock<std::mutex> lock(shared->mu);
    shared->cv.wait(lock, [&] { return shared->released; });
    t0 = shared->t0;
  }
  local.ran = true;
  try {
    double at = 0;
    for (const Phase& p : plan_for(options)) {
      at += p.share;
      const auto deadline =
          t0 + std::chrono::duration_cast<Clock::duration>(
                   std::chrono::duration<double>(options.duration_s * at));
      if (stop->load()) break;
      const std::string name = p.name;
      if (name == "compute")
        tests->compute(deadline, shared->cublas.get(), shared->no_cublas,
                       local.compute);
      else if (name == "memory")
        tests->memory(deadline, options.memory_fraction, local.memory);
      else
        tests->copy(deadline, local.copy);
      commit();
    }
    w->live.update([](GpuLive& l) { l.phase = "done"; });
  } catch (const std::exception& e) {
    local.fatal_error = e.what();
    if (auto* ce = dynamic_cast<const cuda::CudaError*>(&e))
      local.fatal_error_name = ce->name();
    local.fatal_phase = w->live.get().phase;
    local.fatal_at_s = std::chrono::duration<double>(Clock::now() - t0).count();
    w->live.update([&](GpuLive& l) {
      l.phase = "failed";
      l.error =
          local.fatal_error_name.empty() ? e.what() : local.fatal_error_name;
    });
  }
  local.ran_s = std::chrono::duration<double>(Clock::now() - t0).count();
  tests.reset();  // frees the GPU's memory and destroys its context
  commit();
  std::lock_guard<std::mutex> lock(w->mu);
  w->finished = true;
}

// The diagnosis's samples: one every interval while the GPUs run, then one
// more after they stopped (counters read after the load), each also kept
// in the GPU watches, written to the trace and shown live.
class BurnSampleSource : public SampleSource {
 public:
  BurnSampleSource(Sampler& sampler, Sample first, double interval_s,
                   const std::atomic<bool>& done,
                   std::function<void(const Sample&)> on_sample)
      : sampler_(sampler),
        pending_(std::move(first)),
        interval_(std::chrono::duration_cast<Clock::duration>(
            std::chrono::duration<double>(interval_s))),
        done_(done),
        on_sample_(std::move(on_sample)) {
    next_ = Clock::now() + interval_;
  }

  bool next(Sample& out) override {
    if (pending_) {
      out = std::move(*pending_);
      pending_.reset();
      on_sample_(out);
      return true;
    }
    if (ended_) return false;
    while (!done_.load() && Clock::now() < next_)
      std::this_thread::sleep_for(std::min<Clock::duration>(
          std::chrono::milliseconds(50), next_ - Clock::now()));
    if (done_.load()) ended_ = true;  // this is the last one
    out = sampler_.sample();
    next_ += interval_;
    if (next_ < Clock::now()) next_ = Clock::now();
    on_sample_(out);
    return true;
  }

 private:
  Sampler& sampler_;
  std::optional<Sample> pending_;
  Clock::duration interval_;
  const std::atomic<bool>& done_;
  std::function<void(const Sample&)> on_sample_;
  Clock::time_point next_;
  bool ended_ = false;
};

std::string process_list(const GpuSample& g, const Sample& s) {
  std::string out;
  size_t shown = 0;
  for (const auto& p : *g.processes) {
    if (shown++ == 3) {
      out += ", ...";
      break;
    }
    std::string name;
    for (const auto& proc : s.processes)
      if (proc.pid == p.pid) name = proc.name;
    out += (out.empty() ? "" : ", ") + std::string("pid ") +
           std::to_string(p.pid) + (name.empty() ? "" : " " + name);
  }
  return out;
}

std::vector<Target> choose_targets(
    const BurnOptions& o, const TraceHeader& header,
    const std::vector<cuda::DeviceFacts>& devices) {
  std::vector<Target> all;
  const bool have_nvml = header.nvml_status == kNvmlOk && !header.gpus.empty();
  if (have_nvml) {
    std::map<std::string, const GpuInfo*> by_bus;
    for (const auto& g : header.gpus)
      if (auto key = canonical_pci_bus_id(g.pci_bus_id)) by_bus[*key] = &g;
    for (const auto& d : devices) {
      auto it = by_bus.find(d.pci_bus_id);
      if (it == by_bus.end())
        continue;  // CUDA sees it, NVML does not: not one we can watch
      all.push_back({it->second->index, d, it->second});
    }
  } else {
    // No NVML: number the GPUs in PCI bus order, as NVML would.
    std::vector<cuda::DeviceFacts> sorted = devices;
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
      return a.pci_bus_id < b.pci_bus_id;
    });
    for (size_t i = 0; i < sorted.size(); ++i)
      all.push_back({static_cast<int>(i), sorted[i], nullptr});
  }
  std::sort(all.begin(), all.end(),
            [](const Target& a, const Target& b) { return a.gpu < b.gpu; });
  if (all.empty())
    throw BurnError("cannot_run",
                    "no GPU that both CUDA and NVML see (CUDA lists " +
                        std::to_string(devices.size()) + ", NVML " +
                        std::to_string(header.gpus.size()) + ")");
  if (o.gpus.empty()) return all;
  std::vector<Target> chosen;
  for (const std::string& name : o.gpus) {
    auto index = gpu_index_of(name);
    if (!index) index = gpu_by_name(header, name);
    if (!index)
      throw BurnError("usage", "--gpu " + name + ": no GPU of that name here");
    const int g = *index;
    auto it = std::find_if(all.begin(), all.end(),
                           [&](const Target& t) { return t.gpu == g; });
    if (it != all.end()) {
      if (std::none_of(chosen.begin(), chosen.end(),
                       [&](const Target& t) { return t.gpu == g; }))
        chosen.push_back(*it);
      continue;
    }
    bool nvml_has = std::any_of(header.gpus.begin(), header.gpus.end(),
                                [&](const GpuInfo& i) { return i.index == g; });
    if (nvml_has)
      throw BurnError(
          "cannot_run",
          "GPU " + std::to_string(g) +
              " is not visible to CUDA (CUDA_VISIBLE_DEVICES, or the "
              "driver cannot use it)");
    std::string have;
    for (const auto& t : all)
      have += (have.empty() ? "" : ",") + std::to_string(t.gpu);
    throw BurnError("usage", "--gpu " + std::to_string(g) +
                                 ": no such GPU (this node has GPUs " + have +
                                 ")");
  }
  std::sort(chosen.begin(), chosen.end(),
            [](const Target& a, const Target& b) { return a.gpu < b.gpu; });
  return chosen;
}

// NCCL_* variables of this process's environment, which NCCL reads and which
// can keep it off the fast path: "NCCL_P2P_DISABLE=1, NCCL_ALGO=Ring".
std::string nccl_environment() {
  constexpr size_t kMaxValue = 40, kMaxText = 240;
  std::string out;
  for (char** e = environ; e && *e; ++e) {
    std::string_view var(*e);
    if (var.rfind("NCCL_", 0) != 0) continue;
    std::string item(var.substr(0, var.find('=') + kMaxValue + 1));
    if (out.size() + item.size() + 2 > kMaxText) {
      out += ", ...";
      break;
    }
    out += (out.empty() ? "" : ", ") + item;
  }
  return out;
}

// "NVLink" when every rank's GPU has NVLink, "PCIe" when none has, "" when
// NVML did not say for one of them or they differ.
std::string collective_link(const TraceHeader& header,
                            const std::vector<int>& gpus) {
  int with = 0, without = 0;
  for (int g : gpus)
    for (const auto& info : header.gpus)
      if (info.index == g && info.nvlink_count)
        (*info.nvlink_count > 0 ? with : without) += 1;
  const int n = static_cast<int>(gpus.size());
  return with == n ? "NVLink" : without == n ? "PCIe" : "";
}

// What the all-reduce's thread shares with the watchdog; held by shared_ptr
// like a Worker (a hung collective's thread is left behind).
struct CollectiveRun {
  LiveSlot live;
  std::mutex mu;
  CollectiveResult result;  // guarded by mu
  bool finished = false;    // guarded by mu
  bool abandoned = false;   // guarded by mu
};

void run_collective_thread(std::shared_ptr<Shared> shared,
                           std::shared_ptr<CollectiveRun> run,
                           CollectivePlan plan, const std::atomic<bool>* stop) {
  pthread_setname_np(pthread_self(), "gd-burn-nccl");
  CollectiveResult local;
  {
    std::lock_guard<std::mutex> lock(run->mu);
    local = run->result;
  }
  try {
    run_all_reduce(*shared->lib, *shared->nccl, plan, *stop, run->live, local);
  } catch (const std::exception& e) {
    local.error = e.what();
  }
  std::lock_guard<std::mutex> lock(run->mu);
  if (!run->abandoned) run->result = local;
  run->finished = true;
}

// The all-reduce over the GPUs that came through their own tests, on its
// own thread under the same watchdog as theirs.
CollectiveResult run_collective(
    const std::shared_ptr<Shared>& shared,
    const std::vector<std::shared_ptr<Worker>>& workers,
    const BurnReport& report, const BurnOptions& o,
    const std::atomic<bool>& stop) {
  auto run = std::make_shared<CollectiveRun>();
  CollectiveResult& r = run->result;
  r.asked = true;
  r.nccl = report.collective.nccl;
  r.nccl_env = nccl_environment();
  CollectivePlan plan;
  std::string left_out;
  std::vector<std::shared_ptr<Worker>> in;
  for (const auto& w : workers) {
    std::lock_guard<std::mutex> lock(w->mu);
    if (w->abandoned || w->result.hung || !w->result.fatal_error.empty()) {
      left_out += (left_out.empty() ? "" : ",") + std::to_string(w->target.gpu);
      continue;
    }
    plan.ranks.push_back({w->target.gpu, w->target.device.ordinal});
    in.push_back(w);
  }
  if (!left_out.empty())
    r.left_out = "GPU " + left_out + " failed its own tests";
  if (plan.ranks.empty()) {
    r.skipped = "no GPU came through its own tests to take part";
    return r;
  }
  std::vector<int> gpus;
  for (const auto& rank : plan.ranks) gpus.push_back(rank.gpu);
  r.link = collective_link(report.header, gpus);
  plan.deadline = shared->t0 + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(o.duration_s));
  for (auto& w : in)
    w->live.update([](GpuLive& l) {
      l.phase = "all-reduce";
      l.gflops.reset();
      l.bytes_per_s.reset();
    });
  run->live.beat(0);
  std::thread thread(run_collective_thread, shared, run, plan, &stop);
  while (true) {
    {
      std::lock_guard<std::mutex> lock(run->mu);
      if (run->finished) break;
      if (stopped_answering(run->live)) {
        run->abandoned = true;
        r.hung = true;
        break;
      }
    }
    const auto rate = run->live.get().bytes_per_s;
    for (auto& w : in)
      w->live.update([&](GpuLive& l) { l.bytes_per_s = rate; });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  bool abandoned = false;
  {
    std::lock_guard<std::mutex> lock(run->mu);
    abandoned = run->abandoned;
  }
  // Stuck in the driver or NCCL: not waited for.
  if (abandoned)
    thread.detach();
  else
    thread.join();
  CollectiveResult out;
  {
    std::lock_guard<std::mutex> lock(run->mu);
    out = run->result;
  }
  const bool failed = out.hung || !out.error.empty();
  for (auto& w : in)
    w->live.update([&](GpuLive& l) {
      l.phase = out.hung ? "hung" : failed ? "failed" : "done";
      l.bytes_per_s =
          out.busbw_bytes_per_s ? out.busbw_bytes_per_s : out.algbw_bytes_per_s;
    });
  return out;
}

// The ranks' common model ("" when they differ).
std::string collective_model(const std::vector<GpuVerdict>& gpus,
                             const std::vector<int>& ranks) {
  std::string model;
  for (int g : ranks)
    for (const auto& v : gpus)
      if (v.gpu == g) {
        if (!model.empty() && model != v.name) return "";
        model = v.name;
      }
  return model;
}

}  // namespace

int burn_exit_code(const BurnReport& report) {
  const int collective = collective_severity(report.collective_verdict);
  if (collective == 2) return 2;
  bool warn = collective == 1;
  for (const auto& g : report.gpus) {
    if (g.verdict == "fail") return 2;
    warn |= g.verdict == "warn";
  }
  if (report.interrupted) return 3;
  return warn ? 1 : 0;
}

BurnReport run_burn(const BurnOptions& o, const std::atomic<bool>& stop,
                    const Callbacks& cb) {
  auto shared = std::make_shared<Shared>();
  std::string error;
  shared->lib = cuda::CudaLibrary::open(o.cuda_lib, &error);
  if (!shared->lib)
    throw BurnError("cannot_run", "no NVIDIA driver found: " + error);
  std::vector<cuda::DeviceFacts> devices;
  try {
    devices = cuda::list_devices(*shared->lib);
  } catch (const cuda::CudaError& e) {
    throw BurnError("cannot_run",
                    std::string("the CUDA driver cannot start: ") + e.what());
  }
  if (o.collective) {
    std::string why;
    shared->nccl = cuda::NcclLibrary::open(o.nccl_lib, &why);
    if (!shared->nccl)
      throw BurnError("cannot_run",
                      "--collective needs NCCL: " + why +
                          "; install it (libnccl2) or name it with "
                          "--nccl-lib PATH");
  }
  int version = 0;
  if (shared->lib->fn().cuDriverGetVersion)
    shared->lib->fn().cuDriverGetVersion(&version);

  Sampler sampler(o.sampler);
  BurnReport report;
  report.header = sampler.header();
  report.duration_s = o.duration_s;
  report.compute = o.compute;
  report.memory = o.memory;
  report.pcie = o.pcie;
  report.collective.asked = o.collective;
  if (shared->nccl) {
    const std::string v = shared->nccl->version();
    report.collective.nccl = shared->nccl->name() + (v.empty() ? "" : " " + v);
  }
  report.driver_version = cuda::driver_version_text(version);
  Sample first = sampler.sample();
  const std::vector<Target> targets = choose_targets(o, report.header, devices);

  if (!o.force) {
    std::string busy;
    for (const auto& t : targets)
      for (const auto& g : first.gpus)
        if (g.index == t.gpu && g.processes && !g.processes->empty())
          busy += (busy.empty() ? "" : "; ") + std::string("GPU ") +
                  std::to_string(t.gpu) + " has " +
                  std::to_string(g.processes->size()) + " process" +
                  (g.processes->size() == 1 ? "" : "es") + " (" +
                  process_list(g, first) + ")";
    if (!busy.empty())
      throw BurnError(
          "cannot_run",
          busy +
              ": burn would disturb them and they its figures; stop "
              "them, choose other GPUs with --gpu, or pass --force");
  }

  if (o.compute) {
    shared->cublas = Cublas::open(o.cublas_lib, &shared->no_cublas);
    report.cublas = shared->cublas ? shared->cublas->name() : shared->no_cublas;
  }
  if (o.compute) shared->reference = FmaReference::make();

  std::vector<std::shared_ptr<Worker>> workers;
  for (const auto& t : targets) {
    auto w = std::make_shared<Worker>();
    w->target = t;
    workers.push_back(w);
  }
  std::map<int, GpuWatch> watches;
  for (const auto& t : targets) watches[t.gpu];

  if (cb.on_start) {
    BurnStart start;
    start.header = report.header;
    for (const auto& t : targets) start.gpus.emplace_back(t.gpu, t.device);
    start.driver_version = report.driver_version;
    start.cublas = report.cublas;
    start.nccl = report.collective.nccl;
    cb.on_start(start);
  }

  std::unique_ptr<TraceWriter> trace;
  if (!o.record_path.empty()) {
    trace = std::make_unique<TraceWriter>(o.record_path);
    trace->write_header(report.header);
    trace->flush();
  }

  std::vector<std::thread> threads;
  for (auto& w : workers) threads.emplace_back(run_worker, shared, w, o, &stop);

  // Wait for every GPU to be set up (or the setup timeout), then start the
  // clock.
  {
    std::unique_lock<std::mutex> lock(shared->mu);
    shared->cv.wait_for(
        lock, std::chrono::duration<double>(kSetupTimeoutS), [&] {
          return shared->arrived == static_cast<int>(workers.size()) ||
                 stop.load();
        });
    shared->t0 = Clock::now();
    shared->released = true;
    shared->cv.notify_all();
  }
  report.started_at = unix_now();
  for (auto& w : workers) w->live.beat(0);

  // The watcher: sampling, trace, live view and the diagnosis, on its own
  // thread.
  std::atomic<bool> done{false};
  auto on_sample = [&](const Sample& s) {
    for (auto& [gpu, watch] : watches) watch.add(gpu, s);
    if (trace) {
      // A trace that cannot be written (disk full) ends the recording, not
      // the burn: the GPUs' verdicts matter more than the file.
      try {
        trace->write_sample(s);
        trace->flush();
      } catch (const TraceError& e) {
        report.record_error = e.what();
        trace.reset();
      }
    }
    BurnTick tick;
    tick.elapsed_s =
        std::chrono::duration<double>(Clock::now() - shared->t0).count();
    tick.duration_s = o.duration_s;
    for (const auto& w : workers) {
      GpuTick g;
      g.gpu = w->target.gpu;
      g.live = w->live.get();
      g.sample.index = g.gpu;
      for (const auto& gs : s.gpus)
        if (gs.index == g.gpu) g.sample = gs;
      tick.gpus.push_back(std::move(g));
    }
    if (cb.on_tick) cb.on_tick(tick);
  };
  DiagnoseResult diagnosis;
  std::exception_ptr watcher_error;
  std::thread watcher([&] {
    pthread_setname_np(pthread_self(), "gd-burn-watch");
    try {
      BurnSampleSource source(sampler, std::move(first), o.interval_s, done,
                              on_sample);
      diagnosis = diagnose(report.header, source, o.diagnose);
    } catch (...) {
      watcher_error = std::current_exception();
    }
  });

  // Wait for the GPUs, watching for one that stops responding.
  while (true) {
    bool all_done = true;
    for (auto& w : workers) {
      std::lock_guard<std::mutex> lock(w->mu);
      if (w->finished || w->abandoned) continue;
      all_done = false;
      if (stopped_answering(w->live)) {
        w->abandoned = true;
        w->result.hung = true;
        w->result.hung_phase = w->live.get().phase;
        w->result.ran_s =
            std::chrono::duration<double>(Clock::now() - shared->t0).count();
        w->live.update([](GpuLive& l) { l.phase = "hung"; });
      }
    }
    if (all_done) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (o.collective && !stop.load())
    report.collective = run_collective(shared, workers, report, o, stop);
  report.ran_s =
      std::chrono::duration<double>(Clock::now() - shared->t0).count();
  report.interrupted = stop.load();
  for (size_t i = 0; i < workers.size(); ++i) {
    std::lock_guard<std::mutex> lock(workers[i]->mu);
    // Stuck in the driver: it must not be waited for (CudaLibrary never
    // unloads the driver under it).
    if (workers[i]->abandoned) threads[i].detach();
  }
  for (size_t i = 0; i < threads.size(); ++i)
    if (threads[i].joinable()) threads[i].join();
  done.store(true);
  watcher.join();
  if (trace) {
    try {
      trace->close();
    } catch (const TraceError& e) {
      report.record_error = e.what();
    }
  }
  if (watcher_error) std::rethrow_exception(watcher_error);
  report.diagnosis = std::move(diagnosis);

  for (const auto& w : workers) {
    GpuVerdict v;
    v.gpu = w->target.gpu;
    v.device = w->target.device;
    if (w->target.info) {
      v.name = w->target.info->name;
      v.uuid = w->target.info->uuid;
      v.pci_bus_id = w->target.info->pci_bus_id;
    } else {
      v.name = w->target.device.name;
      v.pci_bus_id = w->target.device.pci_bus_id;
    }
    {
      std::lock_guard<std::mutex> lock(w->mu);
      v.run = w->result;
    }
    v.watch = watches[v.gpu];
    report.gpus.push_back(std::move(v));
  }
  judge(report.gpus, report.diagnosis.findings, report);
  if (report.collective.asked) {
    const CollectiveResult& c = report.collective;
    report.collective_verdict =
        judge_collective(c, collective_model(report.gpus, c.gpus));
    // Wrong sums land in a GPU's receive buffer: that GPU fails too.
    for (auto [gpu, wrong] : c.wrong_by_gpu)
      for (auto& v : report.gpus)
        if (v.gpu == gpu) {
          if (v.verdict == "pass") {
            v.notes = v.reasons;
            v.reasons.clear();
          }
          v.verdict = "fail";
          v.reasons.push_back(std::to_string(wrong) +
                              " wrong results in its all-reduce receive "
                              "buffer");
        }
  }
  return report;
}

}  // namespace gd::burn
