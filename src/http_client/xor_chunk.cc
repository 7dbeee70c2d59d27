#include "http_client/xor_chunk.h"

#include <bit>
#include <cstring>
#include <stdexcept>

namespace gd::http::prom {
namespace {

uint64_t bits_of(double v) { return std::bit_cast<uint64_t>(v); }

// Times and their deltas wrap as the format's Go writer and reader do (a
// hostile chunk's deltas may overflow; signed overflow is undefined here).
int64_t wrapping_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) +
                              static_cast<uint64_t>(b));
}
int64_t wrapping_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) -
                              static_cast<uint64_t>(b));
}
double double_of(uint64_t b) { return std::bit_cast<double>(b); }

class BitReader {
 public:
  explicit BitReader(std::string_view bytes) : bytes_(bytes) {}

  // False when the stream ends first.
  bool read(int n, uint64_t& out) {
    out = 0;
    for (int i = 0; i < n; ++i) {
      if (pos_ >= bytes_.size() * 8) return false;
      const auto byte = static_cast<unsigned char>(bytes_[pos_ / 8]);
      out = (out << 1) | ((byte >> (7 - pos_ % 8)) & 1u);
      ++pos_;
    }
    return true;
  }
  bool bit(bool& out) {
    uint64_t b = 0;
    if (!read(1, b)) return false;
    out = b != 0;
    return true;
  }
  // A Go varint (encoding/binary) read byte by byte from the stream.
  bool uvarint(uint64_t& out) {
    out = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      uint64_t byte = 0;
      if (!read(8, byte)) return false;
      if (shift == 63 && byte > 1) return false;  // more than 64 bits
      out |= (byte & 0x7F) << shift;
      if (!(byte & 0x80)) return true;
    }
    return false;
  }
  bool varint(int64_t& out) {
    uint64_t u = 0;
    if (!uvarint(u)) return false;
    out = static_cast<int64_t>(u >> 1) ^ -static_cast<int64_t>(u & 1);
    return true;
  }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

class BitWriter {
 public:
  void write(int n, uint64_t value) {
    for (int i = n - 1; i >= 0; --i) {
      if (pos_ % 8 == 0) out_.push_back('\0');
      if ((value >> i) & 1u)
        out_.back() = static_cast<char>(out_.back() | (0x80 >> (pos_ % 8)));
      ++pos_;
    }
  }
  void uvarint(uint64_t v) {
    while (v >= 0x80) {
      write(8, (v & 0x7F) | 0x80);
      v >>= 7;
    }
    write(8, v);
  }
  void varint(int64_t v) {
    uvarint((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
  size_t pos_ = 0;
};

// The XOR window of the last value written or read: leading zeros (0xFF
// before the first XOR) and trailing zeros.
struct Window {
  int leading = 0xFF, trailing = 0;
};

bool read_value(BitReader& r, Window& w, uint64_t& prev) {
  bool changed = false;
  if (!r.bit(changed)) return false;
  if (!changed) return true;
  bool fresh = false;
  if (!r.bit(fresh)) return false;
  if (fresh || w.leading == 0xFF) {
    // A value that is the first XOR must open its own window; a writer
    // that claims to reuse one that does not exist wrote a broken chunk.
    if (!fresh) return false;
    uint64_t leading = 0, sig = 0;
    if (!r.read(5, leading) || !r.read(6, sig)) return false;
    if (sig == 0) sig = 64;
    if (leading + sig > 64) return false;
    w.leading = static_cast<int>(leading);
    w.trailing = 64 - w.leading - static_cast<int>(sig);
  }
  const int sig = 64 - w.leading - w.trailing;
  uint64_t delta = 0;
  if (!r.read(sig, delta)) return false;
  prev ^= delta << w.trailing;
  return true;
}

void write_value(BitWriter& w, Window& win, uint64_t prev, uint64_t now) {
  const uint64_t delta = prev ^ now;
  if (delta == 0) {
    w.write(1, 0);
    return;
  }
  w.write(1, 1);
  int leading = std::countl_zero(delta);
  const int trailing = std::countr_zero(delta);
  if (leading >= 32) leading = 31;  // five bits hold it
  if (win.leading != 0xFF && leading >= win.leading &&
      trailing >= win.trailing) {
    w.write(1, 0);
    w.write(64 - win.leading - win.trailing, delta >> win.trailing);
    return;
  }
  win.leading = leading;
  win.trailing = trailing;
  const int sig = 64 - leading - trailing;
  w.write(1, 1);
  w.write(5, static_cast<uint64_t>(leading));
  w.write(6, static_cast<uint64_t>(sig) & 63);  // 64 is written as 0
  w.write(sig, delta >> trailing);
}

// The delta-of-delta's width after its prefix of 1 bits.
constexpr int kDodBits[] = {0, 14, 17, 20, 64};

bool read_dod(BitReader& r, int64_t& dod) {
  int ones = 0;
  for (bool b = true; ones < 4; ++ones) {
    if (!r.bit(b)) return false;
    if (!b) break;
  }
  const int n = kDodBits[ones];
  dod = 0;
  if (n == 0) return true;
  uint64_t bits = 0;
  if (!r.read(n, bits)) return false;
  if (n != 64 && bits > (uint64_t{1} << (n - 1))) bits -= uint64_t{1} << n;
  dod = static_cast<int64_t>(bits);
  return true;
}

bool fits(int64_t dod, int n) {
  return -((int64_t{1} << (n - 1)) - 1) <= dod && dod <= int64_t{1} << (n - 1);
}

void write_dod(BitWriter& w, int64_t dod) {
  if (dod == 0) {
    w.write(1, 0);
    return;
  }
  for (int ones = 1; ones < 4; ++ones) {
    const int n = kDodBits[ones];
    if (fits(dod, n)) {
      w.write(ones + 1, ((uint64_t{1} << ones) - 1) << 1);  // 1..10
      w.write(n, static_cast<uint64_t>(dod) & ((uint64_t{1} << n) - 1));
      return;
    }
  }
  w.write(4, 0xF);
  w.write(64, static_cast<uint64_t>(dod));
}

}  // namespace

std::string decode_xor_chunk(std::string_view chunk, size_t max_samples,
                             std::vector<RawSample>& out) {
  if (chunk.size() < 2) return "an XOR chunk of under 2 bytes";
  const size_t n =
      (static_cast<size_t>(static_cast<unsigned char>(chunk[0])) << 8) |
      static_cast<unsigned char>(chunk[1]);
  if (n > max_samples)
    return "an XOR chunk of " + std::to_string(n) + " samples, over the " +
           std::to_string(max_samples) + " left";
  BitReader r(chunk.substr(2));
  int64_t t = 0, delta = 0;
  uint64_t v = 0;
  Window w;
  const std::string ended =
      "an XOR chunk that ends before its " + std::to_string(n) + " samples";
  for (size_t i = 0; i < n; ++i) {
    if (i == 0) {
      if (!r.varint(t) || !r.read(64, v)) return ended;
    } else if (i == 1) {
      uint64_t d = 0;
      if (!r.uvarint(d) || !read_value(r, w, v)) return ended;
      delta = static_cast<int64_t>(d);
      t = wrapping_add(t, delta);
    } else {
      int64_t dod = 0;
      if (!read_dod(r, dod) || !read_value(r, w, v)) return ended;
      delta = wrapping_add(delta, dod);
      t = wrapping_add(t, delta);
    }
    out.push_back({t, double_of(v)});
  }
  return "";
}

std::string encode_xor_chunk(const std::vector<RawSample>& samples) {
  if (samples.size() > 0xFFFF)
    throw std::invalid_argument("an XOR chunk holds at most 65535 samples");
  BitWriter w;
  w.write(16, samples.size());
  Window win;
  int64_t delta = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    const RawSample& s = samples[i];
    if (i == 0) {
      w.varint(s.t_ms);
      w.write(64, bits_of(s.v));
      continue;
    }
    const int64_t d = wrapping_sub(s.t_ms, samples[i - 1].t_ms);
    if (i == 1)
      w.uvarint(static_cast<uint64_t>(d));
    else
      write_dod(w, wrapping_sub(d, delta));
    delta = d;
    write_value(w, win, bits_of(samples[i - 1].v), bits_of(s.v));
  }
  return w.take();
}

}  // namespace gd::http::prom
