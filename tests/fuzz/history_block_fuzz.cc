// A history block (the store's numeric blob, and with it the rest blob)
// through the decoders that `db check`, `db repair`, `export` and serve's
// queries use. The first byte picks the path; the rest is the raw stream,
// which the harness compresses (so mutations reach the block format, not
// zstd's), or with path 3 the zstd bytes themselves:
//   0  decode_numeric            (every column and the processes)
//   1  decode_numeric_fields     (one GPU and one host field, no processes)
//   2  decode_block              (numeric, then "\0GDREST\0", then rest)
//   3  decode_block of the bytes as given (numeric = rest = the input)
//   4  ProjectedBlockDecoder (report --db's column-only read: the
//      accountant's GPU fields, each GPU's processes and the host tree),
//      split as path 2; a bad rest line may also throw TraceError
// A decode either succeeds or throws CodecError with one line; and however
// the input lies about its counts, the heap a decode holds at once never
// passes what the decoders allow a block (kMaxDecodedBytes of structures
// plus the two decompressed blobs) -- measured with the sanitizer's malloc
// hooks, so a count trusted anywhere shows up as a broken invariant long
// before libFuzzer's -malloc_limit_mb.
#include <sanitizer/allocator_interface.h>
#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>

#include "fuzz_check.h"
#include "store/block_codec.h"
#include "store/byte_io.h"
#include "store/projected_block.h"
#include "trace/trace_io.h"

namespace {

// Live heap bytes and their peak since the last reset.
size_t g_live = 0;
size_t g_peak = 0;
bool g_tracking = false;

void on_malloc(const volatile void*, size_t size) {
  if (!g_tracking) return;
  g_live += size;
  if (g_live > g_peak) g_peak = g_live;
}

void on_free(const volatile void* p) {
  if (!g_tracking || !p) return;
  const size_t size = __sanitizer_get_allocated_size(const_cast<void*>(p));
  g_live = size > g_live ? 0 : g_live - size;
}

// What a decode may hold at once: the structures the budget allows, both
// decompressed blobs (32 MiB each) and room for the input and bookkeeping.
// HISTORY_BLOCK_FUZZ_LIMIT_MB=N sets a tighter one (to see what a given
// input costs: the report names the peak).
size_t heap_limit() {
  static const size_t limit = [] {
    if (const char* mb = std::getenv("HISTORY_BLOCK_FUZZ_LIMIT_MB"))
      return static_cast<size_t>(std::strtoull(mb, nullptr, 10)) << 20;
    return gd::store::kMaxDecodedBytes + (size_t{64} << 20) +
           (size_t{16} << 20);
  }();
  return limit;
}

std::string compress(std::string_view raw) {
  std::string out(ZSTD_compressBound(raw.size()), '\0');
  const size_t n =
      ZSTD_compress(out.data(), out.size(), raw.data(), raw.size(), 1);
  FUZZ_CHECK(!ZSTD_isError(n), "zstd compress");
  out.resize(n);
  return out;
}

// Numeric and rest parts of `in`, split at "\0GDREST\0".
std::pair<std::string_view, std::string_view> split(std::string_view in) {
  constexpr std::string_view kSplit("\0GDREST\0", 8);
  const size_t at = in.find(kSplit);
  return {in.substr(0, at), at == std::string_view::npos
                                ? std::string_view()
                                : in.substr(at + kSplit.size())};
}

void decode_projected(std::string_view in) {
  using namespace gd::store;
  gd::ScanFields fields;
  fields.gpu = {"util_pct", "power_w", "energy_mj_total", "sm_active_pct"};
  fields.gpu_processes = true;
  fields.process_tree = true;
  ProjectedBlockDecoder decoder("fuzz.db", fields);
  const auto [num, rest] = split(in);
  size_t samples = 0;
  decoder.decode(compress(num), compress(rest), [&](const gd::Sample& s, bool) {
    for (const auto& g : s.gpus)
      FUZZ_CHECK(!g.processes || g.processes->size() < (1u << 20),
                 "a process list past any block's");
    ++samples;
    return true;
  });
  (void)samples;
}

void decode(uint8_t path, std::string_view in) {
  using namespace gd::store;
  switch (path % 5) {
    case 0:
      decode_numeric(compress(in));
      break;
    case 1: {
      const int gpu[] = {0}, host[] = {0};
      decode_numeric_fields(compress(in), gpu, host);
      break;
    }
    case 2: {
      const auto [num, rest] = split(in);
      decode_block(compress(num), compress(rest));
      break;
    }
    case 4:
      decode_projected(in);
      break;
    default:
      decode_block(in, in);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
  g_live = g_peak = 0;
  g_tracking = true;
  try {
    decode(data[0], in);
  } catch (const gd::store::CodecError& e) {
    FUZZ_CHECK(gd::fuzz::one_line(e.what()), e.what());
  } catch (const gd::TraceError& e) {
    FUZZ_CHECK(gd::fuzz::one_line(e.what()), e.what());
  }
  g_tracking = false;
  FUZZ_CHECK(g_peak <= heap_limit(),
             "decode held " + std::to_string(g_peak >> 10) + " KiB at once");
  return 0;
}
