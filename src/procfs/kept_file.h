// A /proc file read again and again through one open descriptor.
//
// procfs produces a file's text anew on every read from offset 0, so the
// descriptor can stay open between samples. That saves the path walk, the
// open and the close: about half the kernel time of reading
// /proc/PID/stat on a VM. The descriptor also pins the process it was opened
// for: once that process is gone, reads fail (ESRCH) even if its pid has
// been reused, so a kept file never reads another process's data.
//
// Only procfs files are kept open, and only while the process-wide budget of
// kept descriptors lasts (half the soft RLIMIT_NOFILE); anything else is
// opened for each read like read_file() does. Fixture trees in tests are
// regular files, which a test may replace on disk.
#pragma once

#include <cstddef>
#include <string>

#include "procfs/text_util.h"

namespace gd::procfs {

class KeptFile {
 public:
  KeptFile() = default;
  ~KeptFile() { close(); }
  KeptFile(KeptFile&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  KeptFile& operator=(KeptFile&& other) noexcept;
  KeptFile(const KeptFile&) = delete;
  KeptFile& operator=(const KeptFile&) = delete;

  // How the end of the text is found: see text_util.h.
  using Ending = procfs::Ending;

  // Reads the whole file into `out`. The first call opens `path`; while the
  // descriptor is kept, later calls read through it and `path` is not looked
  // at. False when the file cannot be opened or read (the process is gone);
  // the descriptor is then closed.
  bool read(const char* path, std::string& out, Ending ending);

  // Whether reads go through a kept descriptor, i.e. the file's process is
  // the one it was first opened for.
  bool pins_process() const { return fd_ >= 0; }
  void close();

 private:
  int fd_ = -1;
};

// Descriptors kept open by all KeptFiles of this process, and the budget.
size_t kept_file_count();
size_t kept_file_budget();
// For other readers that keep descriptors (rdma_ports.h): takes one slot
// of the same budget (false when it is spent), and gives one back.
bool take_kept_slot();
void give_kept_slot();

// Raises the soft RLIMIT_NOFILE to the hard limit, as daemons that watch
// many processes do (the soft default of 1024 dates from select()). Call
// once at startup, before the first sample.
void raise_open_files_limit();

// Grows this process's descriptor table now, while it has one thread, to
// hold kReservedDescriptors (at most the kept-file budget). The kernel
// grows the table (64 entries, then powers of two) when an open needs a
// higher number, and in a process of several threads it first waits out an
// RCU grace period (expand_fdtable): 5-13 ms each on a 2-CPU VM. A first
// sample that keeps ~1,000 /proc files open grew it four times, ~35 ms of
// `status`'s wall on such a node and of `top`'s first frame. A table is
// never shrunk; 4,096 entries cost the kernel ~33 KB. Call after
// raise_open_files_limit() and before any thread starts.
void reserve_descriptor_table();
constexpr size_t kReservedDescriptors = 4096;

}  // namespace gd::procfs
