// One immutable value shared between threads: writers publish a new one,
// readers take a pointer copy and keep using it without holding any lock.
#pragma once

#include <memory>
#include <mutex>

namespace gd {

template <typename T>
class SharedValue {
 public:
  SharedValue() = default;
  explicit SharedValue(std::shared_ptr<const T> v) : current_(std::move(v)) {}
  std::shared_ptr<const T> get() const {
    std::lock_guard lock(mu_);
    return current_;
  }
  void set(std::shared_ptr<const T> v) {
    {
      std::lock_guard lock(mu_);
      current_.swap(v);
    }
    // The old value (now in `v`) is freed after the lock is released.
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const T> current_;
};

}  // namespace gd
