#include "store/block_codec.h"

#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <charconv>
#include <cmath>
#include <optional>

#include "store/column_codec.h"
#include "store/process_columns.h"
#include "trace/trace_checks.h"
#include "trace/trace_io.h"

namespace gd::store {
namespace {

// Format of the numeric stream; a decoder refuses other versions.
// 1: numbers only (processes in the rest blob's JSON); 2: + the process
// section (process_columns.h) and runs of one value stored once; 3: + the
// GPU processes' SM/memory utilisation and MIG instance in that section.
// All read.
constexpr uint64_t kNumericFormat = 3;
constexpr uint64_t kProcessSectionFormat = 2;
constexpr uint64_t kNumbersOnlyFormat = 1;
// A decompressed blob larger than this is corruption, not data: a raw
// block of 8 GPUs is ~1 MiB before compression, the largest one the writer
// makes ~4 MiB. The bound keeps a crafted blob (zstd turns a few KB into
// gigabytes of zeros) from costing more memory than a real one.
constexpr unsigned long long kMaxBlockBytes = 32ull << 20;

std::string compress(const std::string& in, int level) {
  std::string out(ZSTD_compressBound(in.size()), '\0');
  size_t n = ZSTD_compress(out.data(), out.size(), in.data(), in.size(), level);
  if (ZSTD_isError(n))
    throw CodecError(std::string("zstd: ") + ZSTD_getErrorName(n));
  out.resize(n);
  return out;
}

// Into `buf`, grown as needed and never shrunk (so a buffer reused for
// blocks of one size is not zeroed again); the bytes are its first
// returned-size chars.
std::string_view decompress_into(std::string_view in, std::string& buf) {
  unsigned long long size = ZSTD_getFrameContentSize(in.data(), in.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN)
    throw CodecError("not a zstd block");
  if (size > kMaxBlockBytes)
    throw CodecError("block decompresses to " + std::to_string(size) +
                     " bytes (at most " + std::to_string(kMaxBlockBytes >> 20) +
                     " MiB)");
  if (buf.size() < size) buf.resize(size);
  size_t n = ZSTD_decompress(buf.data(), size, in.data(), in.size());
  if (ZSTD_isError(n) || n != size)
    throw CodecError(std::string("zstd: ") +
                     (ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short"));
  return std::string_view(buf.data(), size);
}

std::string decompress(std::string_view in) {
  std::string out;
  decompress_into(in, out);
  return out;
}

const GpuSample* find_gpu(const Sample& s, int index) {
  for (const auto& g : s.gpus)
    if (g.index == index) return &g;
  return nullptr;
}

template <typename S>
void write_field_names(ByteWriter& w,
                       const std::vector<NumericField<S>>& fields) {
  w.varint(fields.size());
  for (const auto& f : fields) w.str(f.name);
}

// Maps the block's field names to our table (-1 = a field this version does
// not know: its column is read and dropped).
template <typename S>
std::vector<int> read_field_names(ByteReader& r,
                                  int (*find)(std::string_view)) {
  std::vector<int> map(r.count(1, "field names"));
  for (auto& m : map) m = find(r.str());
  return map;
}

template <typename S>
void clear_numeric(S& s, const std::vector<NumericField<S>>& fields) {
  for (const auto& f : fields) set_cell(s, f, Cell{});
}

}  // namespace

namespace {
std::atomic<uint64_t> g_encode_calls{0};
}  // namespace

uint64_t encode_block_calls() { return g_encode_calls.load(); }

EncodedBlock encode_block(std::span<const Sample> samples, int zstd_level) {
  ++g_encode_calls;
  const size_t n = samples.size();
  ByteWriter w;
  w.varint(kNumericFormat);
  w.varint(n);
  std::vector<Cell> col(n);
  for (size_t i = 0; i < n; ++i) col[i] = Cell{true, true, samples[i].t, 0};
  write_column(w, col, true, false);

  write_field_names(w, gpu_fields());
  write_field_names(w, host_fields());
  std::vector<int> indices;
  for (const auto& s : samples)
    for (const auto& g : s.gpus) indices.push_back(g.index);
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  w.varint(indices.size());
  std::vector<const GpuSample*> rows(n);
  for (int index : indices) {
    w.svarint(index);
    for (size_t i = 0; i < n; ++i) rows[i] = find_gpu(samples[i], index);
    for (const auto& f : gpu_fields()) {
      for (size_t i = 0; i < n; ++i)
        col[i] = rows[i] ? get_cell(*rows[i], f) : Cell{};
      write_column(w, col, is_double_field(f));
    }
  }
  for (const auto& f : host_fields()) {
    for (size_t i = 0; i < n; ++i) col[i] = get_cell(samples[i].host, f);
    write_column(w, col, is_double_field(f));
  }

  write_processes(w, samples, indices);

  std::string rest;
  Sample r;
  for (const auto& s : samples) {
    r.t = s.t;
    r.gpus = s.gpus;
    for (auto& g : r.gpus) {
      clear_numeric(g, gpu_fields());
      g.processes.reset();  // in the process section
    }
    r.events = s.events;
    r.device_holders = s.device_holders;
    r.host.other_cpu_top = s.host.other_cpu_top;  // not numeric columns
    r.host.rdma_ports = s.host.rdma_ports;        // nor these
    r.pod_allocations = s.pod_allocations;        // the kubelet's, for diagnose
    append_sample_json(rest, r);
    rest += '\n';
  }
  return {compress(w.data(), zstd_level), compress(rest, zstd_level)};
}

namespace {

// The block's sample count: at most what the writer puts in a block, and
// each sample's time takes at least a byte.
size_t read_sample_count(ByteReader& r) {
  const size_t n = r.count(1, "samples");
  if (n > kMaxBlockSamples)
    throw CodecError("block of " + std::to_string(n) +
                     " samples (a block has at most " +
                     std::to_string(kMaxBlockSamples) + ")");
  return n;
}

// The GPU sections' count and each one's index (unique, like a sample's).
size_t read_gpu_count(ByteReader& r, size_t columns_per_gpu) {
  // Each section: its index and one column per field name, >= 1 byte each.
  const size_t ngpus = r.count(1 + columns_per_gpu, "GPUs");
  r.budget().charge(
      ngpus, sizeof(int) + gpu_fields().size() * sizeof(std::vector<Cell>),
      "GPU sections");
  return ngpus;
}

// keep_gpu[f] / keep_host[f]: keep that column; nullptr keeps every one.
NumericColumns decode_columns(std::string_view blob,
                              const std::vector<bool>* keep_gpu,
                              const std::vector<bool>* keep_host,
                              bool keep_processes, DecodeBudget& budget,
                              std::string* scratch = nullptr,
                              bool processes_tree_only = false) {
  std::string own;
  const std::string_view raw = decompress_into(blob, scratch ? *scratch : own);
  ByteReader r(raw, budget);
  const uint64_t format = r.varint();
  if (format > kNumericFormat)
    throw NewerBlockFormat("block format " + std::to_string(format) +
                           " is newer than this gpudoctor reads (" +
                           std::to_string(kNumericFormat) + ")");
  if (format != kNumericFormat && format != kProcessSectionFormat &&
      format != kNumbersOnlyFormat)
    throw CodecError("unknown block format");
  NumericColumns out;
  const size_t n = read_sample_count(r);
  const auto times = read_column(r, n);
  if (times.size() != n) throw CodecError("bad time column");
  for (const auto& c : times) {
    if (!c.present || !c.is_double) throw CodecError("bad time column");
    out.t.push_back(c.d);
  }
  auto gmap = read_field_names<GpuSample>(r, find_gpu_field);
  auto hmap = read_field_names<HostSample>(r, find_host_field);
  const size_t ngpus = read_gpu_count(r, gmap.size());
  out.gpu.resize(ngpus);
  for (size_t g = 0; g < ngpus; ++g) {
    const int64_t index = r.svarint();
    if (index < 0 || index > trace_checks::kMaxGpuIndex ||
        std::find(out.gpu_indices.begin(), out.gpu_indices.end(), index) !=
            out.gpu_indices.end())
      throw CodecError("bad or repeated GPU index " + std::to_string(index));
    out.gpu_indices.push_back(static_cast<int>(index));
    out.gpu[g].resize(gpu_fields().size());
    for (int f : gmap) {
      bool keep = f >= 0 && (!keep_gpu || (*keep_gpu)[f]);
      auto col = read_column(r, n, keep);
      if (keep) out.gpu[g][f] = std::move(col);
    }
  }
  out.host.resize(host_fields().size());
  for (int f : hmap) {
    bool keep = f >= 0 && (!keep_host || (*keep_host)[f]);
    auto col = read_column(r, n, keep);
    if (keep) out.host[f] = std::move(col);
  }
  if (format >= kProcessSectionFormat) {
    // Skipped unless asked for: a GPU or host query does not pay for it.
    const bool gpu_util = format >= 3;
    if (keep_processes) {
      out.processes = read_processes(r, n, out.gpu_indices, true, gpu_util,
                                     processes_tree_only);
      out.has_processes = true;
    } else {
      read_processes(r, n, out.gpu_indices, false, gpu_util);
    }
  }
  if (!r.at_end()) throw CodecError("trailing bytes in block");
  return out;
}

}  // namespace

NumericColumns decode_numeric(std::string_view blob, int only_gpu_field,
                              int only_host_field) {
  if (only_gpu_field < 0 && only_host_field < 0) {
    DecodeBudget budget;
    return decode_columns(blob, nullptr, nullptr, true, budget);
  }
  std::vector<int> g, h;
  if (only_gpu_field >= 0) g.push_back(only_gpu_field);
  if (only_host_field >= 0) h.push_back(only_host_field);
  return decode_numeric_fields(blob, g, h);
}

NumericColumns decode_numeric_fields(std::string_view blob,
                                     std::span<const int> gpu_keep,
                                     std::span<const int> host_keep,
                                     bool keep_processes, std::string* scratch,
                                     bool processes_tree_only) {
  std::vector<bool> kg(gpu_fields().size()), kh(host_fields().size());
  for (int f : gpu_keep)
    if (f >= 0 && static_cast<size_t>(f) < kg.size()) kg[f] = true;
  for (int f : host_keep)
    if (f >= 0 && static_cast<size_t>(f) < kh.size()) kh[f] = true;
  DecodeBudget budget;
  return decode_columns(blob, &kg, &kh, keep_processes, budget, scratch,
                        processes_tree_only);
}

namespace {

// What a decoded sample holds beyond its line's strings, against the budget
// (`processes`: how many its line listed).
void charge_sample(DecodeBudget& budget, const Sample& s, size_t processes) {
  budget.charge(s.gpus.size(), sizeof(GpuSample), "GPU samples");
  budget.charge(s.events.size(), sizeof(Event), "events");
  if (s.device_holders)
    budget.charge(s.device_holders->size(), sizeof(DeviceHolder),
                  "device holders");
  if (s.host.other_cpu_top)
    budget.charge(s.host.other_cpu_top->size(), sizeof(OtherCpuProcess),
                  "other CPU work");
  if (s.host.rdma_ports)
    budget.charge(s.host.rdma_ports->size(), sizeof(RdmaPort), "RDMA ports");
  if (s.pod_allocations)
    budget.charge(s.pod_allocations->size(), sizeof(PodAllocation),
                  "pod allocations");
  budget.charge(processes, sizeof(ProcessSample), "processes");
}

template <typename S>
std::vector<CellSetter<S>> setters_of(const std::vector<NumericField<S>>& fs) {
  std::vector<CellSetter<S>> out;
  for (const auto& f : fs) out.emplace_back(f);
  return out;
}

// Sets samples' numbers from a block's columns: the setters and the
// columns the block has are looked up once, not per cell.
class NumberFiller {
 public:
  explicit NumberFiller(const NumericColumns& cols) : cols_(cols) {
    static const auto gpu_setters = setters_of(gpu_fields());
    static const auto host_setters = setters_of(host_fields());
    gpu_.resize(cols.gpu.size());
    for (size_t g = 0; g < cols.gpu.size(); ++g)
      for (size_t f = 0; f < cols.gpu[g].size(); ++f)
        if (!cols.gpu[g][f].empty())
          gpu_[g].push_back({&cols.gpu[g][f], &gpu_setters[f]});
    for (size_t f = 0; f < cols.host.size(); ++f)
      if (!cols.host[f].empty())
        host_.push_back({&cols.host[f], &host_setters[f]});
  }

  // The numbers of samples [from, to) (their lines gave the rest). Column
  // by column: a few dozen samples' GPU sections stay in the cache while
  // each column is read in order, not hundreds of columns at once.
  void fill(std::span<Sample> out, size_t from, size_t to) {
    const size_t slots = cols_.gpu_indices.size();
    at_.assign((to - from) * slots, nullptr);
    for (size_t i = from; i < to; ++i) {
      out[i].t = cols_.t[i];
      for (auto& g : out[i].gpus) {
        const auto& idx = cols_.gpu_indices;
        const size_t slot = static_cast<size_t>(
            std::find(idx.begin(), idx.end(), g.index) - idx.begin());
        // The writer has a column section for every GPU of every sample.
        if (slot == slots)
          throw CodecError("sample has GPU " + std::to_string(g.index) +
                           " that the block's columns do not");
        at_[(i - from) * slots + slot] = &g;
      }
    }
    for (size_t slot = 0; slot < slots; ++slot)
      for (const auto& c : gpu_[slot])
        for (size_t i = from; i < to; ++i)
          if (GpuSample* g = at_[(i - from) * slots + slot])
            (*c.set)(*g, (*c.column)[i]);
    for (const auto& c : host_)
      for (size_t i = from; i < to; ++i) (*c.set)(out[i].host, (*c.column)[i]);
  }

 private:
  template <typename S>
  struct Column {
    const std::vector<Cell>* column;
    const CellSetter<S>* set;
  };
  const NumericColumns& cols_;
  std::vector<std::vector<Column<GpuSample>>> gpu_;  // per GPU section
  std::vector<Column<HostSample>> host_;
  // fill's: sample i's GPU of section k, or null.
  std::vector<GpuSample*> at_;
};

// Whether `token` is a JSON number (RFC 8259's grammar).
bool is_json_number(std::string_view token) {
  size_t p = 0;
  auto digits = [&] {
    const size_t from = p;
    while (p < token.size() && token[p] >= '0' && token[p] <= '9') ++p;
    return p > from;
  };
  if (p < token.size() && token[p] == '-') ++p;
  if (p < token.size() && token[p] == '0')
    ++p;
  else if (!digits())
    return false;
  if (p < token.size() && token[p] == '.') {
    ++p;
    if (!digits()) return false;
  }
  if (p < token.size() && (token[p] == 'e' || token[p] == 'E')) {
    ++p;
    if (p < token.size() && (token[p] == '+' || token[p] == '-')) ++p;
    if (!digits()) return false;
  }
  return p == token.size();
}

// A rest line past its time: what follows `{"t":NUMBER` when NUMBER is a
// time the line's parse accepts; empty otherwise. Lines equal past their
// times parse to samples equal but for t, which the time column sets.
std::string_view past_time(std::string_view line) {
  constexpr std::string_view kStart = "{\"t\":";
  if (line.substr(0, kStart.size()) != kStart) return {};
  const size_t comma = line.find(',', kStart.size());
  if (comma == std::string_view::npos) return {};
  const std::string_view token =
      line.substr(kStart.size(), comma - kStart.size());
  if (!is_json_number(token)) return {};
  double t = 0;
  const auto [end, ec] =
      std::from_chars(token.data(), token.data() + token.size(), t);
  if (ec != std::errc() || end != token.data() + token.size() ||
      !std::isfinite(t) || t < 0 || t > trace_checks::kMaxUnixTime)
    return {};
  return line.substr(comma);
}

// to = from, into to's storage; but for the host processes when
// `keep_processes` (the process columns set them next): copying them
// first would be wasted.
void copy_but_processes(Sample& from, Sample& to, bool keep_processes) {
  if (!keep_processes) {
    to = from;
    return;
  }
  std::vector<ProcessSample> from_processes, to_processes;
  from_processes.swap(from.processes);
  to_processes.swap(to.processes);
  to = from;
  from.processes.swap(from_processes);
  to.processes.swap(to_processes);
}

}  // namespace

std::string_view decompress_rest(std::string_view rest_blob, std::string& buf) {
  return decompress_into(rest_blob, buf);
}

void decode_block_into(std::string_view numeric_blob,
                       std::string_view rest_blob, std::vector<Sample>& out) {
  DecodeBudget budget;
  NumericColumns cols =
      decode_columns(numeric_blob, nullptr, nullptr, true, budget);
  std::string rest = decompress(rest_blob);
  const size_t n = cols.t.size();
  NumberFiller numbers(cols);
  std::optional<ProcessApplier> processes;
  // read_processes charged the listings by what the applier copies.
  if (cols.has_processes) processes.emplace(cols.processes, n);

  budget.charge(n, sizeof(Sample), "samples");
  out.resize(n);
  // The last line parsed past its time, and how many processes it listed:
  // a line equal to it past its time is a copy of the sample before.
  std::string_view parsed_past_time;
  size_t parsed_processes = 0;
  size_t begin = 0;
  // In runs of samples: their lines, then their numbers, then processes.
  constexpr size_t kRun = 64;
  for (size_t from = 0; from < n; from += kRun) {
    const size_t to = std::min(n, from + kRun);
    for (size_t i = from; i < to; ++i) {
      size_t end = rest.find('\n', begin);
      if (end == std::string::npos)
        throw CodecError("block has fewer samples than its columns");
      const std::string_view line =
          std::string_view(rest).substr(begin, end - begin);
      // The line's strings are copied into the sample.
      budget.charge(line.size(), 1, "sample lines");
      const std::string_view past = past_time(line);
      if (i > 0 && !past.empty() && past == parsed_past_time) {
        copy_but_processes(out[i - 1], out[i], processes.has_value());
      } else {
        try {
          sample_from_json(line, "block", out[i]);
        } catch (const TraceError& e) {
          throw CodecError(e.what());
        }
        parsed_past_time = past;
        parsed_processes = out[i].processes.size();
      }
      begin = end + 1;
      charge_sample(budget, out[i], parsed_processes);
    }
    numbers.fill(out, from, to);
    if (processes)
      for (size_t i = from; i < to; ++i) processes->apply(i, out[i]);
  }
  if (begin != rest.size())
    throw CodecError("block has more samples than its columns");
}

std::vector<Sample> decode_block(std::string_view numeric_blob,
                                 std::string_view rest_blob) {
  std::vector<Sample> out;
  decode_block_into(numeric_blob, rest_blob, out);
  return out;
}

}  // namespace gd::store
