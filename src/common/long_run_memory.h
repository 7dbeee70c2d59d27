#pragma once

namespace gd {

// For a process kept open for days with a few threads (`top`): asks glibc's
// allocator to give memory back rather than keep it. Called before the
// process starts its threads.
// - Every block of 128 KiB or more is mapped on its own and unmapped when
//   freed. By default glibc raises that threshold to the largest block freed
//   so far, and the next such blocks (a compression context each second,
//   the diagnosis's parser) then come from an arena that keeps their pages
//   after they are freed.
// - The threads share one arena instead of one each: what one thread frees,
//   another reuses.
// Measured with `top` on 575 processes: ~1.4 MiB less resident memory
// (docs/benchmarks.md).
void prefer_returning_memory();

}  // namespace gd
