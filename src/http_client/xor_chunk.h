// Prometheus' XOR chunk (the TSDB's float encoding, after Facebook's
// Gorilla paper): what remote read's streamed replies carry for each
// series. The reader turns a chunk into samples, refusing any chunk that
// ends early or holds more samples than asked for; the writer, beside it,
// makes chunks for the tests and fuzz seeds.
//
// Layout: a big-endian 16-bit sample count, then a bit stream: the first
// timestamp (zig-zag varint, ms) and value (64 raw bits); the second
// timestamp as a varint delta and its value XOR-encoded; every later
// timestamp as a delta-of-delta in 0, 14, 17, 20 or 64 bits behind a 0-4
// bit prefix, and every value as its XOR with the one before (0 when equal,
// else the meaningful bits, in the window of the last value when it fits).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gd::http::prom {

struct RawSample {
  int64_t t_ms = 0;
  double v = 0;
};

// Appends the chunk's samples to `out`. Returns "" or one line saying why
// the chunk is refused (it ends early, or has more than `max_samples`).
std::string decode_xor_chunk(std::string_view chunk, size_t max_samples,
                             std::vector<RawSample>& out);

// The chunk of `samples` (time order, at most 65,535).
std::string encode_xor_chunk(const std::vector<RawSample>& samples);

}  // namespace gd::http::prom
