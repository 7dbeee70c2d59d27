// CRC-32C (Castagnoli, polynomial 0x1EDC6F41, reflected), the checksum
// Prometheus' streamed remote-read frames carry. No Debian package exports
// one (snappy and leveldb keep theirs internal), and the table form is a few
// lines.
#pragma once

#include <cstdint>
#include <string_view>

namespace gd {

// The CRC-32C of `data`, continuing from `crc` (0 for a fresh one).
uint32_t crc32c(std::string_view data, uint32_t crc = 0);

}  // namespace gd
