#include "http_client/remote_read_frames.h"

#include <cstdint>

#include "common/crc32c.h"

namespace gd::http::prom {
namespace {

// A varint at the front of `in`: its bytes used (0 when `in` ends first,
// or SIZE_MAX when it is longer than 10 bytes).
size_t uvarint(std::string_view in, uint64_t& out) {
  out = 0;
  for (size_t i = 0; i < in.size() && i < 10; ++i) {
    const auto byte = static_cast<unsigned char>(in[i]);
    out |= static_cast<uint64_t>(byte & 0x7F) << (7 * i);
    if (!(byte & 0x80)) return i + 1;
  }
  return in.size() >= 10 ? SIZE_MAX : 0;
}

}  // namespace

std::string FrameReader::feed(std::string_view piece) {
  if (!error_.empty()) return error_;
  pending_.append(piece);
  error_ = take_frames();
  return error_;
}

std::string FrameReader::take_frames() {
  size_t at = 0;
  std::string why;
  while (why.empty()) {
    const std::string_view rest = std::string_view(pending_).substr(at);
    uint64_t size = 0;
    const size_t used = uvarint(rest, size);
    if (used == SIZE_MAX) {
      why = "a remote-read frame whose size is not a varint";
      break;
    }
    if (used == 0) break;
    if (size > max_) {
      why = "a remote-read frame of " + std::to_string(size) +
            " bytes, over the bound of " + std::to_string(max_);
      break;
    }
    if (rest.size() < used + 4 + size) break;
    uint32_t want = 0;
    for (size_t i = 0; i < 4; ++i)
      want = (want << 8) | static_cast<unsigned char>(rest[used + i]);
    const std::string_view message = rest.substr(used + 4, size);
    if (crc32c(message) != want) {
      why = "a remote-read frame whose CRC-32C does not match";
      break;
    }
    why = on_message_(message);
    at += used + 4 + size;
  }
  pending_.erase(0, at);
  return why;
}

std::string FrameReader::finish() const {
  if (!error_.empty()) return error_;
  if (!pending_.empty()) return "the remote-read reply ends inside a frame";
  return "";
}

std::string frame(std::string_view message) {
  std::string out;
  for (uint64_t n = message.size();; n >>= 7) {
    if (n < 0x80) {
      out.push_back(static_cast<char>(n));
      break;
    }
    out.push_back(static_cast<char>((n & 0x7F) | 0x80));
  }
  const uint32_t crc = crc32c(message);
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((crc >> shift) & 0xFF));
  out.append(message);
  return out;
}

}  // namespace gd::http::prom
