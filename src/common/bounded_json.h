// JSON from outside this process (a remote serve's reply, a kill request):
// nlohmann parses without recursion, but dump(), comparisons and our own
// walks recurse once per level, so a reply nested 100,000 deep would
// overflow the stack. Such a text is refused while it is parsed, before
// anything walks it.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

namespace gd {

// Far deeper than any reply of ours (a trace sample is 4 levels deep).
inline constexpr int kMaxJsonDepth = 64;

struct JsonTooDeep : std::runtime_error {
  JsonTooDeep();
};

// `text` parsed; a discarded value when it is not JSON. Throws JsonTooDeep
// ("nested deeper than 64 levels") as soon as an object or array opens
// deeper than `max_depth`.
nlohmann::json parse_bounded_json(std::string_view text,
                                  int max_depth = kMaxJsonDepth);

}  // namespace gd
