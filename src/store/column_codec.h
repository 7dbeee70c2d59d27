// One column of numbers over a block's samples (block_codec.h): a presence
// mask plus the present values as integers -- doubles scaled by the smallest
// power of ten that makes every value an exact integer, else their raw bits
// XORed with the previous -- written as zigzag varints of the 0th, 1st or
// 2nd difference, whichever is shortest, or once when they are all equal.
#pragma once

#include <cstddef>
#include <vector>

#include "store/byte_io.h"
#include "store/numeric_fields.h"

namespace gd::store {

// allow_constant == false: a run of one value is still written per sample
// (the time column, so that a block's size bounds its sample count).
void write_column(ByteWriter& w, const std::vector<Cell>& col, bool is_double,
                  bool allow_constant = true);
// Reads one column of n cells: empty when the column has no values, or
// with keep == false (then only moves past it). Charges the cells to the
// reader's budget. Throws CodecError on a malformed column.
std::vector<Cell> read_column(ByteReader& r, size_t n, bool keep = true);

}  // namespace gd::store
