#include "procfs/process_files.h"

#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>

#include "common/slurm_job_id.h"
#include "common/text_cap.h"
#include "procfs/text_util.h"

namespace gd::procfs {

std::optional<PidStat> parse_pid_stat(std::string_view text) {
  size_t open = text.find('(');
  size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos ||
      close < open)
    return std::nullopt;
  PidStat s;
  s.comm = std::string(text.substr(open + 1, close - open - 1));
  cap_text(s.comm, kProcessTextMax);  // the kernel keeps 16; a fixture may not
  std::string_view rest = text.substr(close + 1);
  // Fields after the comm, 0-based: state(0) ppid(1) pgrp session tty_nr
  // tpgid flags minflt cminflt majflt cmajflt utime(11) stime(12) cutime
  // cstime priority nice num_threads(17) itrealvalue starttime(19) vsize
  // rss(21).
  std::string_view f[22];
  for (int i = 0; i < 22; ++i) {
    f[i] = next_field(rest);
    if (f[i].empty()) return std::nullopt;
  }
  // The state is one letter (R, S, D, Z, T, t, X, I, ...); a NUL or other
  // byte there means the comm held a ')' and the split went wrong.
  if (f[0].size() != 1 || !std::isalpha(static_cast<unsigned char>(f[0][0])))
    return std::nullopt;
  s.state = f[0][0];
  auto ppid = parse_u64(f[1]);
  auto utime = parse_u64(f[11]);
  auto stime = parse_u64(f[12]);
  auto threads = parse_i64(f[17]);
  auto start = parse_u64(f[19]);
  auto rss = parse_i64(f[21]);  // signed in the kernel's format
  if (!ppid || !utime || !stime || !threads || !start || !rss)
    return std::nullopt;
  // Out of range would wrap in the casts below into a wrong, even negative,
  // count.
  if (*threads < 0 || *threads > INT_MAX || *ppid > UINT32_MAX)
    return std::nullopt;
  s.ppid = static_cast<uint32_t>(*ppid);
  s.utime = *utime;
  s.stime = *stime;
  s.num_threads = static_cast<int>(*threads);
  s.starttime = *start;
  s.rss_pages = *rss > 0 ? static_cast<uint64_t>(*rss) : 0;
  return s;
}

std::optional<SchedStat> parse_schedstat(std::string_view text) {
  auto run = parse_u64(next_field(text));
  auto wait = parse_u64(next_field(text));
  auto slices = parse_u64(next_field(text));
  if (!run || !wait || !slices || *slices == 0) return std::nullopt;
  return SchedStat{*run, *wait, *slices};
}

std::optional<uint32_t> parse_status_euid(std::string_view text) {
  std::string_view line;
  while (next_line(text, line)) {
    auto v = value_after_key(line, "Uid");
    if (!v) continue;
    next_field(*v);  // real
    auto euid = parse_u64(next_field(*v));
    if (!euid) return std::nullopt;
    return static_cast<uint32_t>(*euid);
  }
  return std::nullopt;
}

std::optional<uint32_t> parse_status_ns_pid(std::string_view text) {
  std::string_view line;
  while (next_line(text, line)) {
    auto v = value_after_key(line, "NSpid");
    if (!v) continue;
    std::optional<uint64_t> last;
    for (std::string_view field = next_field(*v); !field.empty();
         field = next_field(*v)) {
      last = parse_u64(field);
      if (!last) return std::nullopt;
    }
    if (!last || *last > UINT32_MAX) return std::nullopt;
    return static_cast<uint32_t>(*last);
  }
  return std::nullopt;
}

std::optional<uint64_t> filesystem_size(const char* path) {
  struct statvfs fs {};
  if (statvfs(path, &fs) != 0) return std::nullopt;
  return static_cast<uint64_t>(fs.f_blocks) * fs.f_frsize;
}

std::string cmdline_from_raw(std::string_view raw) {
  std::string s(raw);
  std::replace(s.begin(), s.end(), '\0', ' ');
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n')) s.pop_back();
  return s;
}

std::optional<std::string> read_cmdline(const char* path) {
  std::string raw;
  size_t left_out = 0;
  if (!read_file_prefix(path, raw, kProcessTextMax, left_out))
    return std::nullopt;
  std::string cmdline = cmdline_from_raw(raw);
  cap_text(cmdline, kProcessTextMax, left_out);
  return cmdline;
}

std::optional<std::string> read_cgroup(const char* path,
                                       std::optional<std::string>* slurm_job) {
  // A v1 host lists a dozen hierarchies; each path is kept to the cap, so
  // reading more than this many bytes could only find longer paths.
  constexpr size_t kCgroupFileMax = 16 * kProcessTextMax;
  std::string text;
  size_t left_out = 0;
  if (!read_file_prefix(path, text, kCgroupFileMax, left_out))
    return std::nullopt;
  auto cgroup = parse_cgroup(text);
  if (cgroup) cap_text(*cgroup, kProcessTextMax);
  if (slurm_job) *slurm_job = slurm_job_in_cgroup_file(text);
  return cgroup;
}

std::optional<std::string> read_environ_slurm_job(const char* path) {
  std::string text;
  if (!read_file_head(path, text, kEnvironReadMax)) return std::nullopt;
  // A cut entry ("SLURM_JOB_ID=12" of 1234) is not read: only whole ones.
  if (text.size() == kEnvironReadMax) {
    size_t last_nul = text.rfind('\0');
    text.resize(last_nul == std::string::npos ? 0 : last_nul);
  }
  return slurm_job_in_environ(text);
}

std::optional<std::string> parse_cgroup(std::string_view text) {
  std::optional<std::string> first_v1;
  std::string_view line;
  while (next_line(text, line)) {
    size_t c1 = line.find(':');
    if (c1 == std::string_view::npos) continue;
    size_t c2 = line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) continue;
    std::string_view id = line.substr(0, c1);
    std::string_view controllers = line.substr(c1 + 1, c2 - c1 - 1);
    std::string_view path = line.substr(c2 + 1);  // may contain ':'
    if (path.empty()) continue;
    if (id == "0" && controllers.empty()) return std::string(path);
    if (!first_v1) first_v1 = std::string(path);
  }
  return first_v1;
}

bool is_cuda_library_name(std::string_view n) {
  // "libcuda.so.1" but not "libcudadebugger.so": the stem must end at ".so"
  // (or "-<hash>.so", as pip wheels vendor "libcudart-d0da41ae.so.11.0").
  auto stem_is = [&](std::string_view stem) {
    if (!n.starts_with(stem)) return false;
    std::string_view rest = n.substr(stem.size());
    if (rest.starts_with(".so")) return true;
    // auditwheel-style "-" + 8 hex digits + ".so"
    if (rest.size() < 12 || rest[0] != '-' || rest.substr(9, 3) != ".so")
      return false;
    return std::all_of(rest.begin() + 1, rest.begin() + 9, [](char c) {
      return std::isxdigit(static_cast<unsigned char>(c));
    });
  };
  if (stem_is("libcudart") || stem_is("libcuda") || stem_is("libcublas") ||
      stem_is("libcublasLt") || stem_is("libnccl") || stem_is("libnvrtc"))
    return true;
  // libcudnn.so.8 and its sub-libraries: libcudnn_ops_infer.so.8, ...
  return stem_is("libcudnn") || (n.starts_with("libcudnn_") &&
                                 n.find(".so") != std::string_view::npos);
}

std::vector<std::string> parse_maps_cuda_libs(std::string_view text) {
  std::vector<std::string> libs;
  std::string_view line;
  std::string_view last_path;  // maps lists each library 4-5 times in a row
  while (next_line(text, line)) {
    // "address perms offset dev inode   path": the path is the 6th field and
    // may contain spaces, so take everything from the first '/'.
    size_t slash = line.find('/');
    if (slash == std::string_view::npos) continue;
    std::string_view path = line.substr(slash);
    if (path == last_path) continue;
    last_path = path;
    if (path.ends_with(" (deleted)")) path.remove_suffix(10);
    std::string_view file = path.substr(path.rfind('/') + 1);
    if (!file.starts_with("lib")) continue;
    if (is_cuda_library_name(file)) libs.emplace_back(file);
  }
  std::sort(libs.begin(), libs.end());
  libs.erase(std::unique(libs.begin(), libs.end()), libs.end());
  return libs;
}

std::vector<std::string> read_maps_cuda_libs(const std::string& proc_root,
                                             uint32_t pid) {
  // A CUDA process's maps is a few hundred KiB; what is past this is left.
  constexpr size_t kMaxMapsBytes = 8u << 20;
  std::string text;
  size_t left_out = 0;
  const std::string path = proc_root + "/" + std::to_string(pid) + "/maps";
  if (!read_file_prefix(path.c_str(), text, kMaxMapsBytes, left_out)) return {};
  return parse_maps_cuda_libs(text);
}

void parse_pid_list(std::string_view text, std::vector<uint32_t>& out) {
  for (std::string_view f = next_field(text); !f.empty();
       f = next_field(text)) {
    if (auto v = parse_u64(f); v && *v > 0 && *v <= UINT32_MAX)
      out.push_back(static_cast<uint32_t>(*v));
  }
}

std::optional<bool> proc_pids_are_own(const std::string& proc_root) {
  char self[32];
  const ssize_t n =
      readlink((proc_root + "/self").c_str(), self, sizeof self - 1);
  if (n < 0) return std::nullopt;
  return parse_u64(std::string_view(self, static_cast<size_t>(n))) ==
         static_cast<uint64_t>(getpid());
}

// The clock id is the kernel's encoding of a process's scheduler clock,
// ~pid << 3 | CPUCLOCK_SCHED (2), as clock_getcpuclockid(3) makes it; that
// function also asks clock_getres first, a second system call per process.
std::optional<uint64_t> own_process_cpu_ns(uint32_t pid) {
  const auto clock = static_cast<clockid_t>((~pid << 3) | 2u);
  timespec ts{};
  if (clock_gettime(clock, &ts) != 0) return std::nullopt;
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<uint64_t>(ts.tv_nsec);
}

CpuClock own_cpu_clock(bool own_pids) {
  if (!own_pids || !own_process_cpu_ns(static_cast<uint32_t>(getpid())))
    return {};
  return own_process_cpu_ns;
}

}  // namespace gd::procfs
