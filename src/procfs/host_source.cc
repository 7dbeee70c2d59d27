// HostSource: reads the /proc sources (one parser file each) and turns
// cumulative counters into rates between two calls.
#include "procfs/host_source.h"

#include <sys/stat.h>
#include <unistd.h>

#include <unordered_map>

#include "common/ascii_text.h"
#include "procfs/cpu_stat.h"
#include "procfs/diskstats.h"
#include "procfs/host_facts.h"
#include "procfs/kept_file.h"
#include "procfs/loadavg.h"
#include "procfs/meminfo.h"
#include "procfs/other_cpu.h"
#include "procfs/pressure.h"
#include "procfs/process_table.h"
#include "procfs/text_util.h"
#include "procfs/vmstat.h"

namespace gd {

using namespace procfs;

struct HostSource::Impl {
  std::string proc, sys;
  ProcessTable table;
  OtherCpuScan other;
  std::string buf;

  // Previous reading, for rates.
  bool have_prev = false;
  double prev_now = 0;
  std::optional<CpuTimes> prev_cpu;
  SwapCounters prev_swap;
  std::vector<DiskCounters> prev_disks;
  bool prev_have_disks = false;

  std::optional<uint64_t> btime;
  std::unordered_map<std::string, bool> disk_counted;  // name -> decision

  Impl(std::string p, std::string s)
      : proc(std::move(p)), sys(std::move(s)), table(proc), other(proc) {}

  bool read(const char* rel) { return read_file(proc + rel, buf); }

  // The files read every sample stay open (see KeptFile). Most are printed
  // by one show() call (a short read ends them); vmstat and diskstats are
  // one record per line.
  enum PerSample {
    kStat,
    kLoadavg,
    kMeminfo,
    kVmstat,
    kDiskstats,
    kPsiCpu,
    kPsiMem,
    kPsiIo,
    kCount
  };
  struct PerSampleFile {
    const char* rel;
    KeptFile::Ending ending;
    std::string path;
    KeptFile file;
  };
  PerSampleFile per_sample[kCount] = {
      {"/stat", KeptFile::Ending::kShortRead, {}, {}},
      {"/loadavg", KeptFile::Ending::kShortRead, {}, {}},
      {"/meminfo", KeptFile::Ending::kShortRead, {}, {}},
      {"/vmstat", KeptFile::Ending::kZeroRead, {}, {}},
      {"/diskstats", KeptFile::Ending::kZeroRead, {}, {}},
      {"/pressure/cpu", KeptFile::Ending::kShortRead, {}, {}},
      {"/pressure/memory", KeptFile::Ending::kShortRead, {}, {}},
      {"/pressure/io", KeptFile::Ending::kShortRead, {}, {}},
  };
  bool read(PerSample which) {
    PerSampleFile& f = per_sample[which];
    if (f.path.empty()) f.path = proc + f.rel;
    return f.file.read(f.path.c_str(), buf, f.ending);
  }

  bool counts_disk(const std::string& name) {
    auto it = disk_counted.find(name);
    if (it != disk_counted.end()) return it->second;
    bool counted = false;
    if (!is_virtual_or_stacked_disk(name)) {
      struct stat st {};
      // sysfs spells '/' in device names as '!' (cciss/c0d0 -> cciss!c0d0).
      std::string sys_name = name;
      for (char& c : sys_name)
        if (c == '/') c = '!';
      if (::stat((sys + "/block").c_str(), &st) == 0)
        counted = ::stat((sys + "/block/" + sys_name).c_str(), &st) == 0;
      else
        counted = !looks_like_partition(name);
    }
    disk_counted.emplace(name, counted);
    return counted;
  }

  std::optional<uint64_t> boot_time() {
    if (!btime && read("/stat")) btime = parse_proc_stat(buf).btime;
    return btime;
  }
};

HostSource::HostSource(std::string proc_root, std::string sys_root)
    : impl_(std::make_unique<Impl>(std::move(proc_root), std::move(sys_root))) {
}

HostSource::~HostSource() = default;

HostInfo HostSource::host_info() {
  Impl& m = *impl_;
  HostInfo h;
  if (m.read("/sys/kernel/hostname")) h.hostname = std::string(trim(m.buf));
  if (h.hostname.empty()) {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) == 0) h.hostname = name;
  }
  if (m.read("/sys/kernel/osrelease")) h.kernel = std::string(trim(m.buf));
  if (m.read("/cpuinfo")) {
    CpuInfo ci = parse_cpuinfo(m.buf);
    h.cpu_model = ci.model;
    h.cpu_count = ci.processors;
  }
  if (!h.cpu_count && m.read("/stat")) {
    // No "processor" lines (unusual arch): count the per-CPU lines instead.
    int n = 0;
    std::string_view text = m.buf, line;
    while (next_line(text, line))
      if (line.size() > 3 && line.starts_with("cpu") && line[3] >= '0' &&
          line[3] <= '9')
        ++n;
    if (n > 0) h.cpu_count = n;
  }
  if (m.read("/meminfo")) {
    MemInfo mi = parse_meminfo(m.buf);
    h.mem_total_bytes = mi.mem_total_bytes;
    h.swap_total_bytes = mi.swap_total_bytes;
  }
  std::optional<unsigned long long> ns_inode;
  char link[128];
  ssize_t n =
      readlink((m.proc + "/self/ns/pid").c_str(), link, sizeof link - 1);
  if (n > 0)
    ns_inode = parse_ns_link(std::string_view(link, static_cast<size_t>(n)));
  std::optional<int> nspid;
  if (m.read("/self/status")) nspid = parse_nspid_depth(m.buf);
  h.pid_namespace = decide_pid_namespace(ns_inode, nspid);
  return h;
}

HostSample HostSource::sample(double now) {
  Impl& m = *impl_;
  HostSample s;
  double dt = m.have_prev ? now - m.prev_now : 0;
  bool rates = m.have_prev && dt > 0;

  std::optional<CpuTimes> cpu;
  if (m.read(Impl::kStat)) {
    ProcStat ps = parse_proc_stat(m.buf);
    cpu = ps.cpu;
    if (ps.btime) m.btime = ps.btime;
  }
  if (rates && cpu && m.prev_cpu) {
    if (auto pct = cpu_percent_between(*m.prev_cpu, *cpu)) {
      s.cpu_util_pct = pct->util;
      s.cpu_iowait_pct = pct->iowait;
      s.cpu_steal_pct = pct->steal;
    }
  }

  if (m.read(Impl::kLoadavg)) s.load1 = parse_loadavg1(m.buf);
  if (m.read(Impl::kMeminfo)) {
    MemInfo mi = parse_meminfo(m.buf);
    s.mem_available_bytes = mi.mem_available_bytes;
    s.swap_used_bytes = mi.swap_used_bytes();
  }

  SwapCounters swap;
  if (m.read(Impl::kVmstat)) swap = parse_vmstat(m.buf);
  if (rates && swap.pswpin && m.prev_swap.pswpin &&
      *swap.pswpin >= *m.prev_swap.pswpin)
    s.swap_in_pages_per_s =
        static_cast<double>(*swap.pswpin - *m.prev_swap.pswpin) / dt;
  if (rates && swap.pswpout && m.prev_swap.pswpout &&
      *swap.pswpout >= *m.prev_swap.pswpout)
    s.swap_out_pages_per_s =
        static_cast<double>(*swap.pswpout - *m.prev_swap.pswpout) / dt;

  std::vector<DiskCounters> disks;
  bool have_disks = m.read(Impl::kDiskstats);
  if (have_disks) {
    disks = parse_diskstats(m.buf);
    std::erase_if(
        disks, [&](const DiskCounters& d) { return !m.counts_disk(d.name); });
  }
  if (rates && have_disks && m.prev_have_disks) {
    if (auto r = disk_rates_between(m.prev_disks, disks, dt)) {
      s.disk_read_bytes_per_s = r->read_bytes_per_s;
      s.disk_write_bytes_per_s = r->write_bytes_per_s;
      s.disk_busy_pct = r->busiest_pct;
    }
  }

  // PSI files are absent on kernels without CONFIG_PSI (or psi=0): nullopt.
  if (m.read(Impl::kPsiCpu)) s.psi_cpu_some_pct = parse_psi_some_avg10(m.buf);
  if (m.read(Impl::kPsiMem)) s.psi_mem_some_pct = parse_psi_some_avg10(m.buf);
  if (m.read(Impl::kPsiIo)) s.psi_io_some_pct = parse_psi_some_avg10(m.buf);

  m.have_prev = true;
  m.prev_now = now;
  m.prev_cpu = cpu;
  m.prev_swap = swap;
  m.prev_disks = std::move(disks);
  m.prev_have_disks = have_disks;
  m.other.read(now, m.btime);
  return s;
}

std::vector<ProcessSample> HostSource::processes(
    const std::vector<uint32_t>& gpu_pids, double now,
    std::vector<ProcessSample> storage) {
  auto out = impl_->table.processes(gpu_pids, now, impl_->boot_time(),
                                    std::move(storage));
  // The next reading of the other work skips these: the table reads them.
  impl_->other.set_jobs(gpu_pids, out);
  return out;
}

std::optional<std::vector<OtherCpuProcess>> HostSource::other_cpu_top() {
  return impl_->other.top();
}

std::vector<uint32_t> HostSource::other_cpu_busy_families() const {
  return impl_->other.busy_families();
}

}  // namespace gd
