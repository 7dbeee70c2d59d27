#include "http_client/remote_read_wire.h"

namespace gd::http::prom {
namespace {

// A varint at `at` of `in`, `at` moved past it; false when it runs past
// the end or over 10 bytes.
bool read_varint(std::string_view in, size_t& at, uint64_t& out) {
  out = 0;
  for (int shift = 0; shift < 70 && at < in.size(); shift += 7) {
    const auto byte = static_cast<unsigned char>(in[at++]);
    out |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if (!(byte & 0x80)) return true;
  }
  return false;
}

}  // namespace

std::string each_message(
    std::string_view message, uint32_t number,
    const std::function<std::string(std::string_view)>& fn) {
  const std::string broken = "a remote-read message that is not protobuf";
  size_t at = 0;
  while (at < message.size()) {
    uint64_t key = 0, value = 0;
    if (!read_varint(message, at, key)) return broken;
    switch (key & 7) {
      case 0:  // varint
        if (!read_varint(message, at, value)) return broken;
        break;
      case 1:  // 64 bits
        if (message.size() - at < 8) return broken;
        at += 8;
        break;
      case 2: {  // length-delimited
        if (!read_varint(message, at, value) || value > message.size() - at)
          return broken;
        const std::string_view bytes = message.substr(at, value);
        at += value;
        if ((key >> 3) == number)
          if (auto why = fn(bytes); !why.empty()) return why;
        break;
      }
      case 5:  // 32 bits
        if (message.size() - at < 4) return broken;
        at += 4;
        break;
      default:  // groups (deprecated, never in these messages) and others
        return broken;
    }
  }
  return "";
}

}  // namespace gd::http::prom
