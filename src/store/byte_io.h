// Varint / zigzag byte streams for the block codec. The reader throws
// CodecError on a truncated or malformed stream, so a corrupted blob becomes
// a one-line error instead of a crash.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gd::store {

struct CodecError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Small signed differences become small unsigned numbers (-1 -> 1, 1 -> 2).
// Unsigned arithmetic throughout: differences of uint64 counters may wrap.
inline uint64_t zigzag(uint64_t v) { return (v << 1) ^ (0 - (v >> 63)); }
inline uint64_t unzigzag(uint64_t z) { return (z >> 1) ^ (0 - (z & 1)); }

class ByteWriter {
 public:
  void byte(uint8_t b) { out_.push_back(static_cast<char>(b)); }
  void varint(uint64_t v) {
    while (v >= 0x80) {
      byte(static_cast<uint8_t>(v | 0x80));
      v >>= 7;
    }
    byte(static_cast<uint8_t>(v));
  }
  void svarint(int64_t v) { varint(zigzag(static_cast<uint64_t>(v))); }
  void bytes(std::string_view s) { out_.append(s); }
  void str(std::string_view s) {
    varint(s.size());
    bytes(s);
  }
  std::string& data() { return out_; }

 private:
  std::string out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}
  uint8_t byte() {
    if (pos_ >= in_.size()) throw CodecError("truncated block");
    return static_cast<uint8_t>(in_[pos_++]);
  }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b = byte();
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    throw CodecError("malformed varint");
  }
  int64_t svarint() { return static_cast<int64_t>(unzigzag(varint())); }
  std::string_view bytes(size_t n) {
    if (n > in_.size() - pos_) throw CodecError("truncated block");
    auto s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  std::string_view str() { return bytes(varint()); }
  // A count that must fit in what is left (each counted item takes >= 1
  // byte), so a corrupted count cannot make the decoder allocate gigabytes.
  size_t count() {
    uint64_t n = varint();
    if (n > in_.size() - pos_ + 1) throw CodecError("implausible count");
    return static_cast<size_t>(n);
  }
  bool at_end() const { return pos_ == in_.size(); }

 private:
  std::string_view in_;
  size_t pos_ = 0;
};

}  // namespace gd::store
