// Compact encoding of a run of samples (one SQLite row per block).
//
// numeric blob: every numeric GPU/host field as a column over the block's
// samples (one column per GPU index and field), each column a presence mask
// plus values as integers -- doubles scaled by the smallest power of ten
// that makes every value an exact integer (sensor readings have 0-2
// decimals), else their raw bits XORed with the previous -- written as
// zigzag varints of the 0th, 1st or 2nd difference, whichever is shortest
// (constant columns cost ~0 bytes, counters ~their rate's noise). The whole
// stream is zstd-compressed. Lossless: decoding gives back the same doubles.
//
// Format 2 adds the processes to the numeric blob, columnar
// (process_columns.h): host processes and each GPU's NVML process list.
//
// rest blob: what is neither a number nor a process -- GPU lost/stale
// flags, clock event reasons, the row-remap histogram, the recovery action,
// read errors, events, device holders, the host's other CPU work
// (other_cpu_top), the RDMA ports (rdma_ports) -- as one trace-format
// JSON line per sample with the numeric fields nulled, zstd-compressed as a
// whole (the lines repeat from sample to sample, which zstd squeezes out).
// Format-1 blocks (older files) keep their processes here.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/sample.h"
#include "store/byte_io.h"
#include "store/numeric_fields.h"
#include "store/process_columns.h"

namespace gd::store {

// Samples in one block, at most: the writer seals a raw block at this many
// (4096 samples of 8 GPUs are ~4 MiB before compression), so a block that
// says more is corrupt.
inline constexpr size_t kMaxBlockSamples = 4096;

// A block of a format newer than this gpudoctor reads: not corrupt, so
// `db repair` must not quarantine it.
struct NewerBlockFormat : CodecError {
  using CodecError::CodecError;
};

struct EncodedBlock {
  std::string numeric;
  std::string rest;
};

EncodedBlock encode_block(std::span<const Sample> samples, int zstd_level);
// encode_block calls since the process started (tests check that a failing
// disk does not make the store re-encode its backlog).
uint64_t encode_block_calls();

// The numeric blob decoded to columns, for queries that need no processes.
struct NumericColumns {
  std::vector<double> t;
  std::vector<int> gpu_indices;
  // gpu[g][f]: GPU gpu_indices[g], field gpu_fields()[f]; one cell per sample
  // (an empty vector when the block has no such column).
  std::vector<std::vector<std::vector<Cell>>> gpu;
  std::vector<std::vector<Cell>> host;  // host[f] like gpu[g][f]
  // Format 2 blocks, when asked for: the processes (process_columns.h).
  bool has_processes = false;
  ProcessColumns processes;
};

// Throw CodecError on a corrupted blob, including one that would decode to
// more than kMaxDecodedBytes (byte_io.h). With `only_gpu_field` or
// `only_host_field` >= 0, only that column is kept (the others are parsed
// past, not stored): a query reads one field of many blocks.
NumericColumns decode_numeric(std::string_view numeric_blob,
                              int only_gpu_field = -1,
                              int only_host_field = -1);
// The same keeping the columns of several fields (indices into
// gpu_fields()/host_fields()); the others are parsed past. `scratch`, when
// given, holds the decompressed bytes (a reader of many blocks reuses it);
// `processes_tree_only` keeps only those process columns
// (read_processes' tree_only).
NumericColumns decode_numeric_fields(std::string_view numeric_blob,
                                     std::span<const int> gpu_fields,
                                     std::span<const int> host_fields,
                                     bool keep_processes = false,
                                     std::string* scratch = nullptr,
                                     bool processes_tree_only = false);
std::vector<Sample> decode_block(std::string_view numeric_blob,
                                 std::string_view rest_blob);
// The same into `out` (resized to the block's samples), reusing the storage
// the samples there hold: a scan decodes block after block into one vector.
// A sample whose rest line equals the one before but for its time (most
// do) is copied from the sample before instead of parsed again.
void decode_block_into(std::string_view numeric_blob,
                       std::string_view rest_blob, std::vector<Sample>& out);
// The rest blob's text, one JSON line per sample, in `buf` (grown as
// needed, never shrunk: reused from block to block). Throws CodecError.
std::string_view decompress_rest(std::string_view rest_blob, std::string& buf);

}  // namespace gd::store
