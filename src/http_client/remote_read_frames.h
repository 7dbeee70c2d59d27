// The frames of a streamed remote-read reply (content type
// application/x-streamed-protobuf; proto=prometheus.ChunkedReadResponse):
// each is the message's size as a varint, its CRC-32C as 4 big-endian
// bytes, then the message. The reader takes the body in pieces as they
// arrive and hands out each whole message, refusing a frame over its bound
// or one whose checksum does not match; the writer, beside it, frames a
// message (the tests' fake servers).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace gd::http::prom {

class FrameReader {
 public:
  // `on_message` returns "" or why the message is refused (which ends the
  // reading with that line).
  FrameReader(size_t max_frame_bytes,
              std::function<std::string(std::string_view)> on_message)
      : max_(max_frame_bytes), on_message_(std::move(on_message)) {}

  // The next piece of the body. Returns "" or one line saying why the body
  // is refused; after a refusal every call returns it again.
  std::string feed(std::string_view piece);
  // At the body's end: "" when it ended between frames.
  std::string finish() const;

 private:
  std::string take_frames();

  size_t max_;
  std::function<std::string(std::string_view)> on_message_;
  std::string pending_;
  std::string error_;
};

// `message` as one frame.
std::string frame(std::string_view message);

}  // namespace gd::http::prom
