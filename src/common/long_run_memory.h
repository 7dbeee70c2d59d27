#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

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

// A mapping of program code that may be let go of: read and execute only,
// private, backed by a file, and holding no anonymous page (none the
// process wrote), so that every page of it can be read back from its file.
struct CodeMapping {
  uintptr_t start = 0, end = 0;
};

// The code mappings of a /proc/PID/smaps text that may be let go of. A
// mapping any of whose pages was written (a debugger's breakpoint, a
// library relocated in its code: pages copied on write, counted as
// Anonymous) is left out, as is one whose Anonymous field is missing or
// does not read: its pages may not be the file's.
std::vector<CodeMapping> clean_code_mappings(std::string_view smaps);

// Lets go of the pages of this process's code mappings (the program, libc,
// the driver's library...) that are mapped now, once start-up is over:
// each page is mapped again, from the page cache, when it runs next. Start-up
// maps every page of code it runs, and the kernel maps up to 64 KiB around
// each (fault-around), so what a view kept open runs each second is a
// fraction of what it holds. Returns the bytes of the mappings let go of;
// 0 where /proc/self/smaps cannot be read.
size_t drop_code_pages();

}  // namespace gd
