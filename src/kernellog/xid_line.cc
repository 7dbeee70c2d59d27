#include "kernellog/xid_line.h"

#include <cctype>
#include <charconv>

namespace gd::kernellog {

namespace {

bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Leading decimal digits of `s` as a number; nullopt if none or overflow.
template <typename T>
std::optional<T> leading_number(std::string_view s) {
  T v{};
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p == s.data()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<XidLine> parse_xid(std::string_view msg) {
  constexpr std::string_view kMarker = "Xid (";
  for (size_t at = msg.find(kMarker); at != std::string_view::npos;
       at = msg.find(kMarker, at + 1)) {
    // "SXid (" (NVSwitch) and any other word ending in Xid are not GPU Xids.
    if (at > 0 && is_word_char(msg[at - 1])) continue;
    std::string_view rest = msg.substr(at + kMarker.size());
    size_t close = rest.find(')');
    if (close == std::string_view::npos || close > 32) continue;
    XidLine x;
    x.pci = rest.substr(0, close);
    if (x.pci.starts_with("PCI:")) x.pci.remove_prefix(4);
    rest.remove_prefix(close + 1);
    if (!rest.starts_with(":")) continue;
    rest.remove_prefix(1);
    while (rest.starts_with(" ")) rest.remove_prefix(1);
    auto code = leading_number<int>(rest);
    if (!code || *code < 0) continue;
    x.code = *code;
    // The pid field, when present, comes right after the code:
    // ", pid=1234," or ", pid='<unknown>',".
    size_t digits = 0;
    while (digits < rest.size() &&
           std::isdigit(static_cast<unsigned char>(rest[digits])))
      ++digits;
    rest.remove_prefix(digits);
    if (rest.starts_with(", pid=")) {
      auto pid = leading_number<uint32_t>(rest.substr(6));
      if (pid && *pid > 0) x.pid = *pid;
    }
    return x;
  }
  return std::nullopt;
}

}  // namespace gd::kernellog
