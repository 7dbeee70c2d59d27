#include "burn/collective.h"

#include <algorithm>
#include <cstring>
#include <memory>

namespace gd::burn {

namespace {

constexpr uint64_t kMinBytes = 4096;
constexpr uint64_t kCheckChunkBytes = uint64_t{16} << 20;
constexpr int kMaxIterations = 10000;
// Iterations between two host-side checks of the deadline, stop and beat.
constexpr int kBatch = 10;
// What the watchdog allows before the first batch: NCCL's set-up of every
// GPU's channels (seconds on 8 GPUs) and the warm-up (the watchdog's limit
// is ten times this).
constexpr double kSetupExpectS = 6;
// Copying one GPU's result back for the check (1 GiB over PCIe: ~0.1 s).
constexpr double kCheckExpectS = 1;

// One rank: the GPU's primary context and what the all-reduce needs in it.
// Every member is created and destroyed with that context current.
class Rank {
 public:
  Rank(const cuda::CudaLibrary& lib, CollectiveRank who)
      : lib_(lib), who_(who) {
    GD_CU(lib_, cuDevicePrimaryCtxRetain, &ctx_, who_.ordinal);
    make_current();
  }
  ~Rank() {
    if (!ctx_) return;
    lib_.fn().cuCtxSetCurrent(ctx_);
    start_.reset();
    end_.reset();
    stream_.reset();
    send_.reset();
    recv_.reset();
    lib_.fn().cuCtxSetCurrent(nullptr);
    if (lib_.fn().cuDevicePrimaryCtxRelease_v2)
      lib_.fn().cuDevicePrimaryCtxRelease_v2(who_.ordinal);
  }
  Rank(const Rank&) = delete;
  Rank& operator=(const Rank&) = delete;

  void make_current() const { GD_CU(lib_, cuCtxSetCurrent, ctx_); }
  uint64_t free_bytes() const {
    make_current();
    size_t free = 0, total = 0;
    GD_CU(lib_, cuMemGetInfo_v2, &free, &total);
    return free;
  }
  // Buffers of `bytes`, the send one holding `value` in every element.
  void prepare(uint64_t bytes, float value) {
    make_current();
    send_ = std::make_unique<cuda::DeviceMemory>(lib_, bytes);
    recv_ = std::make_unique<cuda::DeviceMemory>(lib_, bytes);
    uint32_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    GD_CU(lib_, cuMemsetD32_v2, send_->get(), bits, bytes / 4);
    GD_CU(lib_, cuMemsetD32_v2, recv_->get(), 0u, bytes / 4);
    stream_ = std::make_unique<cuda::Stream>(lib_);
    start_ = std::make_unique<cuda::Event>(lib_);
    end_ = std::make_unique<cuda::Event>(lib_);
  }
  void synchronize() const {
    make_current();
    stream_->synchronize();
  }
  const CollectiveRank& who() const { return who_; }
  CUdeviceptr send() const { return send_->get(); }
  CUdeviceptr recv() const { return recv_->get(); }
  CUstream stream() const { return stream_->get(); }
  const cuda::Stream& stream_object() const { return *stream_; }
  cuda::Event& start() { return *start_; }
  cuda::Event& end() { return *end_; }

 private:
  const cuda::CudaLibrary& lib_;
  CollectiveRank who_;
  CUcontext ctx_ = nullptr;
  std::unique_ptr<cuda::DeviceMemory> send_, recv_;
  std::unique_ptr<cuda::Stream> stream_;
  std::unique_ptr<cuda::Event> start_, end_;
};

// The communicators, destroyed before the ranks' memory.
class Comms {
 public:
  Comms(const cuda::NcclLibrary& nccl, const std::vector<int>& ordinals)
      : nccl_(nccl), comms_(ordinals.size(), nullptr) {
    GD_NCCL(nccl_, ncclCommInitAll, comms_.data(),
            static_cast<int>(ordinals.size()), ordinals.data());
  }
  ~Comms() {
    for (ncclComm_t c : comms_)
      if (c) nccl_.fn().ncclCommDestroy(c);
  }
  Comms(const Comms&) = delete;
  Comms& operator=(const Comms&) = delete;
  ncclComm_t operator[](size_t i) const { return comms_[i]; }
  // The first error a communicator saw while its work ran ("" none).
  void check_async() const {
    for (ncclComm_t c : comms_) {
      ncclResult_t async = ncclSuccess;
      if (nccl_.fn().ncclCommGetAsyncError(c, &async) == ncclSuccess)
        nccl_.check(async, "ncclCommGetAsyncError");
    }
  }

 private:
  const cuda::NcclLibrary& nccl_;
  std::vector<ncclComm_t> comms_;
};

}  // namespace

std::optional<double> all_reduce_bus_bandwidth(double algbw, size_t ranks) {
  if (ranks < 2) return std::nullopt;
  const double n = static_cast<double>(ranks);
  return algbw * 2 * (n - 1) / n;
}

void run_all_reduce(const cuda::CudaLibrary& cu, const cuda::NcclLibrary& nccl,
                    const CollectivePlan& plan, const std::atomic<bool>& stop,
                    LiveSlot& live, CollectiveResult& out) {
  live.update([](GpuLive& l) { l.phase = "all-reduce"; });
  std::vector<std::unique_ptr<Rank>> ranks;
  std::vector<int> ordinals;
  uint64_t bytes = plan.max_bytes;
  for (const CollectiveRank& r : plan.ranks) {
    ranks.push_back(std::make_unique<Rank>(cu, r));
    ordinals.push_back(r.ordinal);
    out.gpus.push_back(r.gpu);
    // Send and receive buffers in a quarter of the free memory at most:
    // NCCL's own buffers and the driver need the rest.
    bytes = std::min(bytes, ranks.back()->free_bytes() / 8);
  }
  bytes = bytes >= (uint64_t{1} << 20) ? bytes / (uint64_t{1} << 20) << 20
                                       : bytes / kMinBytes * kMinBytes;
  if (bytes < kMinBytes)
    throw std::runtime_error(
        "too little free GPU memory for the all-reduce's "
        "buffers");
  const size_t n = ranks.size();
  for (size_t i = 0; i < n; ++i)
    ranks[i]->prepare(bytes, static_cast<float>(i + 1));
  out.bytes = bytes;
  const size_t count = bytes / 4;

  live.beat(kSetupExpectS);
  Comms comms(nccl, ordinals);
  auto iteration = [&] {
    GD_NCCL0(nccl, ncclGroupStart);
    for (size_t i = 0; i < n; ++i)
      GD_NCCL(nccl, ncclAllReduce,
              reinterpret_cast<const void*>(ranks[i]->send()),
              reinterpret_cast<void*>(ranks[i]->recv()), count, ncclFloat32,
              ncclSum, comms[i], ranks[i]->stream());
    GD_NCCL0(nccl, ncclGroupEnd);
  };
  auto synchronize = [&] {
    for (auto& r : ranks) r->synchronize();
    comms.check_async();
  };

  // Warm-up: NCCL connects its channels on the first calls.
  const auto warm_start = Clock::now();
  for (int i = 0; i < kCollectiveWarmup && !stop.load(); ++i) iteration();
  synchronize();
  live.beat();
  const double warm_s =
      std::chrono::duration<double>(Clock::now() - warm_start).count();
  const double per_iteration_s = warm_s / kCollectiveWarmup;

  out.ran = true;
  for (auto& r : ranks) {
    r->make_current();
    r->start().record(r->stream_object());
  }
  uint64_t done = 0;
  while (!stop.load() && done < static_cast<uint64_t>(kMaxIterations)) {
    if (done >= static_cast<uint64_t>(kCollectiveMinIterations) &&
        Clock::now() >= plan.deadline)
      break;
    live.beat(std::max(1.0, kBatch * per_iteration_s));
    for (int i = 0; i < kBatch; ++i) iteration();
    done += kBatch;
    ranks.front()->synchronize();  // bounds the queue; the others follow
  }
  for (auto& r : ranks) {
    r->make_current();
    r->end().record(r->stream_object());
  }
  synchronize();
  live.beat();
  out.iterations = done;
  if (done > 0) {
    // The slowest rank's span: a collective ends when its last rank does.
    double ms = 0;
    for (auto& r : ranks) {
      r->make_current();
      ms = std::max(ms, r->end().ms_since(r->start()));
    }
    const double seconds = ms / 1e3 / static_cast<double>(done);
    if (seconds > 0) {
      out.seconds_per_iteration = seconds;
      out.algbw_bytes_per_s = static_cast<double>(bytes) / seconds;
      out.busbw_bytes_per_s =
          all_reduce_bus_bandwidth(*out.algbw_bytes_per_s, n);
      out.loopback = n == 1;
      live.update([&](GpuLive& l) {
        l.bytes_per_s = out.busbw_bytes_per_s ? out.busbw_bytes_per_s
                                              : out.algbw_bytes_per_s;
      });
    }
  }

  // Every element of every rank's result: 1 + 2 + ... + n.
  const float expected = static_cast<float>(n * (n + 1) / 2);
  std::vector<float> host(kCheckChunkBytes / 4);
  for (auto& r : ranks) {
    live.beat(kCheckExpectS);
    r->make_current();
    uint64_t wrong = 0;
    for (uint64_t at = 0; at < bytes; at += kCheckChunkBytes) {
      const uint64_t chunk = std::min(kCheckChunkBytes, bytes - at);
      GD_CU(cu, cuMemcpyDtoH_v2, host.data(), r->recv() + at, chunk);
      for (uint64_t k = 0; k < chunk / 4; ++k) wrong += host[k] != expected;
      out.checked += chunk / 4;
    }
    if (wrong) out.wrong_by_gpu.emplace_back(r->who().gpu, wrong);
    out.wrong += wrong;
  }
  live.update([](GpuLive& l) { l.phase = "done"; });
}

}  // namespace gd::burn
