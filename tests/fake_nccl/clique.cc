#include "clique.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>

#include "fake_cuda_hooks.h"

namespace fake_nccl {

namespace {

using SteadyClock = std::chrono::steady_clock;

template <typename T>
T load(const uint8_t* p, size_t i) {
  T v;
  std::memcpy(&v, p + i * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
void store(uint8_t* p, size_t i, T v) {
  std::memcpy(p + i * sizeof(T), &v, sizeof(T));
}

// Integer arithmetic wraps, as a GPU's does (never C++'s signed overflow).
template <typename T>
T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

template <typename T>
T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

// out[i] = f(out[i], in[i]) for i < count.
template <typename T, typename F>
void fold(uint8_t* out, const uint8_t* in, size_t count, F f) {
  for (size_t i = 0; i < count; ++i)
    store<T>(out, i, f(load<T>(out, i), load<T>(in, i)));
}

// The reduction of every rank's send buffer, in rank order, into out.
template <typename T>
void reduce(const std::vector<const uint8_t*>& sends, size_t count,
            ncclRedOp_t op, uint8_t* out) {
  std::memcpy(out, sends[0], count * sizeof(T));
  for (size_t r = 1; r < sends.size(); ++r) {
    const uint8_t* in = sends[r];
    switch (op) {
      case ncclProd:
        fold<T>(out, in, count, [](T a, T b) { return wrap_mul(a, b); });
        break;
      case ncclMax:
        fold<T>(out, in, count, [](T a, T b) { return b > a ? b : a; });
        break;
      case ncclMin:
        fold<T>(out, in, count, [](T a, T b) { return b < a ? b : a; });
        break;
      default:  // ncclSum, ncclAvg
        fold<T>(out, in, count, [](T a, T b) { return wrap_add(a, b); });
        break;
    }
  }
  if constexpr (std::is_floating_point_v<T>) {
    if (op == ncclAvg) {
      const T n = static_cast<T>(sends.size());
      for (size_t i = 0; i < count; ++i) store<T>(out, i, load<T>(out, i) / n);
    }
  }
}

// The first n elements made wrong: 1 added (a float that 1 does not change
// gets its lowest bit flipped).
template <typename T>
void spoil(uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const T v = load<T>(p, i);
    T w = wrap_add(v, T{1});
    if constexpr (std::is_floating_point_v<T>) {
      if (w == v) {
        p[i * sizeof(T)] ^= 1;  // little-endian: the mantissa's lowest bit
        continue;
      }
    }
    store<T>(p, i, w);
  }
}

// Calls f with a value of the C++ type of `type` (nothing for others).
template <typename F>
void with_type(ncclDataType_t type, F&& f) {
  switch (static_cast<int>(type)) {
    case ncclInt32:
      f(int32_t{});
      break;
    case ncclUint32:
      f(uint32_t{});
      break;
    case ncclInt64:
      f(int64_t{});
      break;
    case ncclUint64:
      f(uint64_t{});
      break;
    case ncclFloat32:
      f(float{});
      break;
    case ncclFloat64:
      f(double{});
      break;
    default:
      break;
  }
}

}  // namespace

size_t element_size(ncclDataType_t type) {
  size_t size = 0;
  with_type(type, [&size](auto v) { size = sizeof(v); });
  return size;
}

bool supported(ncclDataType_t type, ncclRedOp_t op) {
  if (element_size(type) == 0) return false;
  switch (static_cast<int>(op)) {
    case ncclSum:
    case ncclProd:
    case ncclMax:
    case ncclMin:
      return true;
    case ncclAvg:
      return type == ncclFloat32 || type == ncclFloat64;
    default:
      return false;
  }
}

Clique::Clique(std::vector<RankInfo> ranks, double bus_bytes_per_s,
               double timeout_s)
    : ranks_(std::move(ranks)),
      bus_bytes_per_s_(bus_bytes_per_s),
      timeout_s_(timeout_s) {
  for (const auto& r : ranks_)
    min_speed_ = std::min(min_speed_, r.faults.speed);
}

double Clique::modelled_s(int r, size_t bytes) const {
  const double b = static_cast<double>(bytes);
  const int n = size();
  if (n == 1) {
    const double rate = rank(r).mem_bytes_per_s / 2;  // read + write
    return rate > 0 ? b / rate : 0;
  }
  return b * 2 * (n - 1) / n / bus_bytes_per_s_ / min_speed_;
}

void Clique::complete(Collective& c) {
  c.done = true;
  const int n = size();
  const Call& first = c.parts[0].call;
  for (const auto& p : c.parts)
    if (p.call.count != first.count || p.call.type != first.type ||
        p.call.op != first.op) {
      std::fprintf(stderr,
                   "fake libnccl: the ranks of one all-reduce disagree on "
                   "count, type or operation\n");
      for (auto& o : c.outcomes)
        o = {CUDA_ERROR_LAUNCH_FAILED, ncclInvalidUsage};
      return;
    }
  bool illegal = false;
  for (int r = 0; r < n; ++r) {
    const Part& p = c.parts[static_cast<size_t>(r)];
    if (!p.send || !p.recv) {
      c.outcomes[static_cast<size_t>(r)] = {CUDA_ERROR_ILLEGAL_ADDRESS,
                                            ncclUnhandledCudaError};
      illegal = true;
    }
  }
  if (illegal) {
    // The peers of a faulted kernel never get its data.
    for (auto& o : c.outcomes)
      if (o.rc == CUDA_SUCCESS) o = {CUDA_ERROR_LAUNCH_FAILED, ncclRemoteError};
    return;
  }
  const size_t count = first.count;
  std::vector<uint8_t> result(count * element_size(first.type));
  std::vector<const uint8_t*> sends;
  for (const auto& p : c.parts) sends.push_back(p.send);
  const ncclRedOp_t op = first.op;
  with_type(first.type, [&](auto v) {
    reduce<decltype(v)>(sends, count, op, result.data());
  });
  for (int r = 0; r < n; ++r) {
    uint8_t* recv = c.parts[static_cast<size_t>(r)].recv;
    std::memcpy(recv, result.data(), result.size());
    const size_t wrong =
        std::min(count, static_cast<size_t>(rank(r).faults.wrong_results));
    if (wrong)
      with_type(first.type, [&](auto v) { spoil<decltype(v)>(recv, wrong); });
  }
}

CUresult Clique::run(int r, uint64_t seq, CUcontext ctx, const Call& call,
                     ncclResult_t* async) {
  const int n = size();
  const size_t bytes = call.count * element_size(call.type);
  Part mine;
  mine.present = true;
  mine.call = call;
  mine.send =
      static_cast<uint8_t*>(fake_cuda_device_bytes(ctx, call.send, bytes));
  mine.recv =
      static_cast<uint8_t*>(fake_cuda_device_bytes(ctx, call.recv, bytes));

  std::unique_lock<std::mutex> lock(mu_);
  Collective& c = pending_[seq];
  if (c.parts.empty()) {
    c.parts.resize(static_cast<size_t>(n));
    c.outcomes.resize(static_cast<size_t>(n));
  }
  if (!c.failed) {
    c.parts[static_cast<size_t>(r)] = mine;
    if (++c.came == n) {
      complete(c);
      cv_.notify_all();
    } else {
      // Polled for the context's end (the fake libcuda does not wake us).
      const auto deadline = SteadyClock::now() +
                            std::chrono::duration_cast<SteadyClock::duration>(
                                std::chrono::duration<double>(timeout_s_));
      while (!c.done && !c.failed) {
        if (fake_cuda_stopping(ctx)) {
          c.failed = true;
          cv_.notify_all();
          break;
        }
        const auto now = SteadyClock::now();
        if (now >= deadline) {
          std::string missing;
          for (int p = 0; p < n; ++p)
            if (!c.parts[static_cast<size_t>(p)].present)
              missing += (missing.empty() ? "" : ", ") + std::to_string(p);
          std::fprintf(stderr,
                       "fake libnccl: rank %d (CUDA device %d) waited %g s "
                       "for rank(s) %s in all-reduce #%llu: failing it\n",
                       r, rank(r).ordinal, timeout_s_, missing.c_str(),
                       static_cast<unsigned long long>(seq) + 1);
          c.failed = true;
          cv_.notify_all();
          break;
        }
        cv_.wait_until(lock,
                       std::min(deadline, now + std::chrono::milliseconds(20)));
      }
    }
  }
  Outcome out{CUDA_ERROR_LAUNCH_FAILED, ncclRemoteError};
  if (c.done) out = c.outcomes[static_cast<size_t>(r)];
  if (++c.seen == n) pending_.erase(seq);
  lock.unlock();

  *async = out.async;
  if (out.rc == CUDA_SUCCESS)
    fake_cuda_spend_gpu_time(ctx, modelled_s(r, bytes));
  return out.rc;
}

}  // namespace fake_nccl
