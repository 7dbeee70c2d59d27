// The words of Rule::not_judged(), so every rule says alike what it needs
// and what the window had (findings.md "not_judged").
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "common/elapsed_text.h"

namespace gd {

// "needs 5 min of one process's GPU memory; the window has 15 s".
inline std::string needs_time(std::string_view what, double need_s,
                              double have_s) {
  return fmt::format("needs {} of {}; the window has {}", elapsed_words(need_s),
                     what, elapsed_words(have_s));
}

// "needs 30 samples of a GPU job; the window has 15".
inline std::string needs_samples(std::string_view what, double need,
                                 size_t have) {
  return fmt::format("needs {:.0f} samples of {}; the window has {}", need,
                     what, have);
}

}  // namespace gd
