// Varint / zigzag byte streams for the block codec. The reader throws
// CodecError on a truncated or malformed stream, so a corrupted blob becomes
// a one-line error instead of a crash.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gd::store {

struct CodecError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What one decode may build (cells, lists, samples), in bytes. A block's
// counts are checked against the bytes present, but the format also lets a
// few bytes stand for many values (a constant column, a repeated process
// list), so the total is capped too: a corrupt or crafted block fails with
// CodecError instead of allocating gigabytes. A block of 600 samples (10
// minutes at 1 s) of 8 GPUs with the 512 processes a sample keeps at most
// builds ~215 MiB (hostile_block_test); only blocks of many more samples
// (sub-second intervals) with that many processes come near the cap.
inline constexpr size_t kMaxDecodedBytes = size_t{512} << 20;

class DecodeBudget {
 public:
  // Takes `items` of `item_bytes` each out of what is left, or throws
  // CodecError naming `what`.
  void charge(uint64_t items, size_t item_bytes, const char* what) {
    if (item_bytes != 0 && items > left_ / item_bytes)
      throw CodecError(std::string("block would decode to more than ") +
                       std::to_string(kMaxDecodedBytes >> 20) + " MiB (" +
                       what + ")");
    left_ -= static_cast<size_t>(items) * item_bytes;
  }
  size_t used() const { return kMaxDecodedBytes - left_; }

 private:
  size_t left_ = kMaxDecodedBytes;
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
  ByteReader(std::string_view in, DecodeBudget& budget)
      : in_(in), budget_(&budget) {}
  ByteReader(const ByteReader&) = delete;
  ByteReader& operator=(const ByteReader&) = delete;
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
  // Moves past `m` varints (a column nobody asked for), eight bytes at a
  // time: a varint ends at each byte whose top bit is clear.
  void skip_varints(size_t m) {
    int run = 0;  // bytes of the varint being skipped so far
    while (m > 0 && in_.size() - pos_ >= 8) {
      uint64_t w;
      std::memcpy(&w, in_.data() + pos_, 8);
      uint64_t ends = ~w & 0x8080808080808080ull;  // little-endian bytes
      if (ends == 0) {
        run += 8;
        if (run >= 10) throw CodecError("malformed varint");
        pos_ += 8;
        continue;
      }
      if (run + std::countr_zero(ends) / 8 >= 10)
        throw CodecError("malformed varint");
      // Their number: each end bit moved to its byte's bottom, summed into
      // the top byte (no popcount instruction needed).
      const int count =
          static_cast<int>(((ends >> 7) * 0x0101010101010101ull) >> 56);
      if (static_cast<size_t>(count) >= m) {
        for (size_t k = 1; k < m; ++k) ends &= ends - 1;
        pos_ += static_cast<size_t>(std::countr_zero(ends) / 8 + 1);
        return;
      }
      m -= static_cast<size_t>(count);
      run = std::countl_zero(ends) / 8;
      pos_ += 8;
    }
    while (m > 0) {
      const uint8_t b = byte();
      if (b & 0x80) {
        if (++run == 10) throw CodecError("malformed varint");
      } else {
        run = 0;
        --m;
      }
    }
  }
  std::string_view bytes(size_t n) {
    if (n > in_.size() - pos_) throw CodecError("truncated block");
    auto s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  std::string_view str() { return bytes(varint()); }
  // A count of items that each take at least `min_item_bytes` of what is
  // left, so a corrupted count cannot make the decoder allocate gigabytes.
  // `what` names the items in the error.
  size_t count(size_t min_item_bytes, const char* what) {
    const uint64_t n = varint();
    if (n > left() / min_item_bytes)
      throw CodecError(std::string("implausible count of ") + what + " (" +
                       std::to_string(n) + " in " + std::to_string(left()) +
                       " bytes)");
    return static_cast<size_t>(n);
  }
  size_t left() const { return in_.size() - pos_; }
  bool at_end() const { return pos_ == in_.size(); }
  DecodeBudget& budget() { return *budget_; }

 private:
  std::string_view in_;
  size_t pos_ = 0;
  DecodeBudget own_budget_;
  DecodeBudget* budget_ = &own_budget_;
};

}  // namespace gd::store
