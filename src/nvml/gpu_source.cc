// Threads and deadlines around DeviceReader: a driver call that hangs must
// never hang the tool. Each GPU has one long-lived worker thread; sample()
// hands every idle worker a job and waits on one condition variable until
// all are done or the deadline passes. A worker still stuck in the driver is
// given no new job until it comes back, and on destruction it is detached
// (and the library is never shut down or unloaded under it).
#include "nvml/gpu_source.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "common/phase_timing.h"
#include "nvml/device_reader.h"
#include "nvml/nvml_library.h"

namespace gd {

using Clock = std::chrono::steady_clock;
using nvml::DeviceReader;
using nvml::NvmlLibrary;

namespace {

// State shared with worker threads; outlives the GpuSource while a detached
// worker is still stuck in the driver.
struct Shared {
  std::mutex mu;
  std::condition_variable done;  // the last job of a round finished
  // The round of jobs sample() waits for, and how many of its jobs are not
  // done: only the last one wakes the waiter (8 GPUs woke it 8 times).
  uint64_t round = 0;
  size_t waiting = 0;
};

struct Worker {
  enum class Job { kNone, kInfo, kSample };

  // Guarded by Shared::mu.
  Job job = Job::kNone;
  uint64_t round = 0;  // Shared::round of the job
  bool busy = false;   // a job is queued or running
  bool stop = false;
  GpuInfo info;
  std::vector<uint32_t> pids;  // listed with the static facts (kInfo)
  GpuSample sample;
  std::vector<Event> events;  // produced by finished jobs, not yet handed out
  std::condition_variable wake;

  // Owned by the caller's thread (sample()).
  Clock::time_point hung_since{};
  Clock::time_point last_hung_event{};

  // Touched only by the worker thread.
  std::shared_ptr<NvmlLibrary> lib;  // keeps the library mapped while running
  std::unique_ptr<DeviceReader> reader;
  std::thread thread;
};

void worker_loop(std::shared_ptr<Shared> shared, std::shared_ptr<Worker> w) {
  std::unique_lock lock(shared->mu);
  std::vector<Event> events;
  for (;;) {
    w->wake.wait(lock, [&] { return w->stop || w->job != Worker::Job::kNone; });
    if (w->stop) return;
    const Worker::Job job = w->job;
    w->job = Worker::Job::kNone;
    lock.unlock();

    GpuInfo info;
    std::vector<uint32_t> pids;
    GpuSample sample;
    if (job == Worker::Job::kInfo) {
      info = w->reader->read_info();
      pids = w->reader->read_pids();
    } else {
      sample = w->reader->read_sample(events);
    }

    lock.lock();
    if (job == Worker::Job::kInfo) {
      w->info = std::move(info);
      w->pids = std::move(pids);
    } else {
      w->sample = std::move(sample);
    }
    for (auto& e : events) w->events.push_back(std::move(e));
    events.clear();
    w->busy = false;
    if (w->round == shared->round && shared->waiting > 0 &&
        --shared->waiting == 0)
      shared->done.notify_all();
  }
}

Event nvml_error(int gpu, std::string text) {
  Event e;
  e.kind = "nvml_error";
  e.gpu = gpu;
  e.text = std::move(text);
  return e;
}

// Result of init phase 1 (dlopen + nvmlInit + system facts), produced on a
// thread of its own so that a hang there is bounded too.
struct InitState {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::shared_ptr<NvmlLibrary> lib;
  nvml::InitOutcome outcome;
  DriverInfo driver;
  unsigned gpu_count = 0;
  std::string library_version;
};

void init_library(InitState& st, const GpuSource::Options& o) {
  std::string error;
  note_phase("nvml: dlopen");
  std::shared_ptr<NvmlLibrary> lib =
      NvmlLibrary::open(o.lib_path, &error, o.hidden_symbols);
  nvml::InitOutcome outcome{kNvmlNoDriver, error};
  DriverInfo driver;
  unsigned count = 0;
  if (lib) driver.library_version = lib->library_version();
  if (lib) outcome = lib->init();
  note_phase("nvml: nvmlInit returned");
  if (lib && outcome.status == kNvmlOk) {
    const nvml::NvmlFunctions& f = lib->fn();
    char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
    if (f.nvmlSystemGetDriverVersion &&
        f.nvmlSystemGetDriverVersion(buf, sizeof buf) == NVML_SUCCESS) {
      driver.driver_version.assign(buf, strnlen(buf, sizeof buf));
    }
    char nvml_buf[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE] = {};
    if (f.nvmlSystemGetNVMLVersion &&
        f.nvmlSystemGetNVMLVersion(nvml_buf, sizeof nvml_buf) == NVML_SUCCESS) {
      driver.nvml_version.assign(nvml_buf, strnlen(nvml_buf, sizeof nvml_buf));
    }
    int cuda = 0;
    nvmlReturn_t rc = NVML_ERROR_FUNCTION_NOT_FOUND;
    if (f.nvmlSystemGetCudaDriverVersion_v2)
      rc = f.nvmlSystemGetCudaDriverVersion_v2(&cuda);
    if (rc == NVML_ERROR_FUNCTION_NOT_FOUND &&
        f.nvmlSystemGetCudaDriverVersion) {
      rc = f.nvmlSystemGetCudaDriverVersion(&cuda);
    }
    if (rc == NVML_SUCCESS)
      driver.cuda_driver_version = nvml::cuda_version_string(cuda);

    rc = f.nvmlDeviceGetCount_v2 ? f.nvmlDeviceGetCount_v2(&count)
                                 : NVML_ERROR_FUNCTION_NOT_FOUND;
    if (rc != NVML_SUCCESS) {
      outcome = {kNvmlError,
                 "nvmlDeviceGetCount_v2 failed: " + lib->error_string(rc)};
      count = 0;
    }
  }
  std::lock_guard guard(st.mu);
  st.lib = std::move(lib);
  st.outcome = std::move(outcome);
  st.driver = std::move(driver);
  st.gpu_count = count;
  st.library_version = st.driver.library_version;
  st.done = true;
  st.cv.notify_all();
}

std::string ms_text(std::chrono::milliseconds ms) {
  return std::to_string(ms.count()) + " ms";
}

}  // namespace

struct GpuSource::Impl {
  Options options;
  std::string status = kNvmlOk;
  std::string error;
  std::optional<DriverInfo> driver;
  std::vector<GpuInfo> gpus;
  std::vector<uint32_t> initial_pids;
  std::string library_version;

  std::shared_ptr<NvmlLibrary> lib;
  std::shared_ptr<Shared> shared = std::make_shared<Shared>();
  std::vector<std::shared_ptr<Worker>> workers;
  // Bound on loading the library and nvmlInit (Options::init_deadline).
  std::chrono::milliseconds load_deadline{0};

  explicit Impl(Options o) : options(std::move(o)) {
    if (options.init_deadline.count() <= 0) {
      options.init_deadline = options.deadline;
      load_deadline = std::max(options.deadline, Options::kLoadDeadlineFloor);
    } else {
      load_deadline = options.init_deadline;
    }
    if (!open_library()) {
      driver.reset();
      return;
    }
    start_workers();
    read_static_facts();
  }

  ~Impl() {
    {
      std::lock_guard guard(shared->mu);
      for (auto& w : workers) {
        w->stop = true;
        w->wake.notify_one();
      }
    }
    bool any_stuck = false;
    for (auto& w : workers) {
      bool busy;
      {
        std::lock_guard guard(shared->mu);
        busy = w->busy;
      }
      if (busy) {
        any_stuck = true;
        w->thread.detach();  // still inside the driver: cannot wait for it
      } else {
        w->thread.join();
      }
    }
    if (any_stuck && lib) lib->leak();
  }

  bool open_library() {
    auto st = std::make_shared<InitState>();
    Options o = options;
    std::thread t([st, o] { init_library(*st, o); });
    std::unique_lock lock(st->mu);
    if (!st->cv.wait_for(lock, load_deadline, [&] { return st->done; })) {
      lock.unlock();
      t.detach();  // if it ever returns, it cleans up after itself
      status = kNvmlError;
      error = "NVML initialisation (loading " + options.lib_path +
              " and nvmlInit) did not return within " + ms_text(load_deadline);
      return false;
    }
    lock.unlock();
    t.join();
    library_version = st->library_version;
    status = st->outcome.status;
    error = st->outcome.error;
    if (status != kNvmlOk) return false;
    lib = st->lib;
    driver = st->driver;
    gpus.resize(st->gpu_count);
    for (unsigned i = 0; i < st->gpu_count; ++i)
      gpus[i].index = static_cast<int>(i);
    return true;
  }

  void start_workers() {
    for (size_t i = 0; i < gpus.size(); ++i) {
      auto w = std::make_shared<Worker>();
      w->lib = lib;
      w->reader = std::make_unique<DeviceReader>(
          *lib, static_cast<int>(i), options.sysfs_root, options.error_interval,
          options.slow_read_interval);
      w->thread = std::thread(worker_loop, shared, w);
      workers.push_back(std::move(w));
    }
  }

  // Runs `job` on every idle worker and waits until they are done or
  // `timeout` passes. dispatched[i]: worker i was given the job.
  std::vector<bool> run_on_all(Worker::Job job,
                               std::chrono::milliseconds timeout,
                               std::unique_lock<std::mutex>& lock) {
    std::vector<bool> dispatched(workers.size(), false);
    ++shared->round;
    shared->waiting = 0;
    for (size_t i = 0; i < workers.size(); ++i) {
      Worker& w = *workers[i];
      if (w.busy) continue;
      w.job = job;
      w.round = shared->round;
      w.busy = true;
      dispatched[i] = true;
      ++shared->waiting;
    }
    // Woken with the lock released, a worker does not block on it at once.
    lock.unlock();
    for (size_t i = 0; i < workers.size(); ++i)
      if (dispatched[i]) workers[i]->wake.notify_one();
    lock.lock();
    shared->done.wait_until(lock, Clock::now() + timeout, [&] {
      for (size_t i = 0; i < workers.size(); ++i) {
        if (dispatched[i] && workers[i]->busy) return false;
      }
      return true;
    });
    return dispatched;
  }

  void read_static_facts() {
    std::unique_lock lock(shared->mu);
    run_on_all(Worker::Job::kInfo, options.init_deadline, lock);
    for (size_t i = 0; i < workers.size(); ++i) {
      Worker& w = *workers[i];
      w.events.clear();  // static reads emit none; keep the buffer clean
      if (w.busy) {
        w.hung_since = Clock::now() - options.init_deadline;
        continue;  // gpus[i] stays {index}; samples report it stale
      }
      gpus[i] = std::move(w.info);
      initial_pids.insert(initial_pids.end(), w.pids.begin(), w.pids.end());
    }
    std::sort(initial_pids.begin(), initial_pids.end());
    initial_pids.erase(std::unique(initial_pids.begin(), initial_pids.end()),
                       initial_pids.end());
  }

  std::vector<GpuSample> sample(std::vector<Event>& events) {
    std::vector<GpuSample> out(workers.size());
    std::unique_lock lock(shared->mu);
    std::vector<bool> dispatched =
        run_on_all(Worker::Job::kSample, options.deadline, lock);
    const auto now = Clock::now();
    for (size_t i = 0; i < workers.size(); ++i) {
      Worker& w = *workers[i];
      const int index = static_cast<int>(i);
      // Events of finished jobs, including a late job that missed an
      // earlier deadline (e.g. the gpu_lost it saw).
      for (auto& e : w.events) events.push_back(std::move(e));
      w.events.clear();
      if (!w.busy) {
        out[i] = std::move(w.sample);
        continue;
      }
      out[i].index = index;
      out[i].stale = true;
      if (dispatched[i]) {
        w.hung_since = now - options.deadline;
        w.last_hung_event = now;
        events.push_back(
            nvml_error(index, "GPU " + std::to_string(index) +
                                  ": NVML read did not return within " +
                                  ms_text(options.deadline)));
      } else if (now - w.last_hung_event >= options.error_interval) {
        w.last_hung_event = now;
        auto hung_s = std::chrono::duration_cast<std::chrono::seconds>(
            now - w.hung_since);
        events.push_back(nvml_error(
            index, "GPU " + std::to_string(index) +
                       ": NVML read still has not returned after " +
                       std::to_string(hung_s.count()) + " s; GPU skipped"));
      }
    }
    return out;
  }
};

GpuSource::GpuSource(Options options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

GpuSource::GpuSource() : GpuSource(Options{}) {}

GpuSource::~GpuSource() = default;

const std::string& GpuSource::status() const { return impl_->status; }
const std::string& GpuSource::error() const { return impl_->error; }
const std::string& GpuSource::library_version() const {
  return impl_->library_version;
}

const std::optional<DriverInfo>& GpuSource::driver() const {
  return impl_->driver;
}
const std::vector<GpuInfo>& GpuSource::gpus() const { return impl_->gpus; }
const std::vector<uint32_t>& GpuSource::initial_pids() const {
  return impl_->initial_pids;
}

std::vector<GpuSample> GpuSource::sample(std::vector<Event>& events) {
  return impl_->sample(events);
}

}  // namespace gd
