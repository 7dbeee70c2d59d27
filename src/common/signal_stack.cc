#include "common/signal_stack.h"

#include <signal.h>

#include <cstddef>

namespace gd {
namespace {

// Room for a handler that writes a few hundred bytes (SIGSTKSZ is no longer
// a constant in glibc, and too small for some handlers).
constexpr size_t kBytes = 64 * 1024;

}  // namespace

SignalStack::SignalStack() : memory_(new char[kBytes]) {
  stack_t ss{};
  ss.ss_sp = memory_.get();
  ss.ss_size = kBytes;
  installed_ = ::sigaltstack(&ss, nullptr) == 0;
}

SignalStack::~SignalStack() {
  if (!installed_) return;
  stack_t ss{};
  ss.ss_flags = SS_DISABLE;
  ::sigaltstack(&ss, nullptr);
}

}  // namespace gd
