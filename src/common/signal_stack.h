// An alternate signal stack for the calling thread while this object
// lives. A handler installed with SA_ONSTACK then still runs after the
// thread overflowed its stack (deep recursion on hostile input), e.g. to
// restore the terminal before the default action. Each thread needs its
// own: a new thread starts without one.
#pragma once

#include <memory>

namespace gd {

class SignalStack {
 public:
  SignalStack();
  ~SignalStack();
  SignalStack(const SignalStack&) = delete;
  SignalStack& operator=(const SignalStack&) = delete;

 private:
  std::unique_ptr<char[]> memory_;
  bool installed_ = false;
};

}  // namespace gd
