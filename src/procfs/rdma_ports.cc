#include "procfs/rdma_ports.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <string_view>

#include "common/ascii_text.h"
#include "procfs/kept_file.h"
#include "procfs/text_util.h"

namespace gd::procfs {

namespace {

constexpr long kSysfsMagic = 0x62656572;  // SYSFS_MAGIC, linux/magic.h
constexpr long kProcMagic = 0x9fa0;       // PROC_SUPER_MAGIC
// Bytes read of one attribute: "18446744073709551615\n" and
// "400 Gb/sec (4X NDR)\n" fit with room; anything longer is not a value.
constexpr size_t kAttrBytes = 64;
// Devices looked at: more than any host has (ports are bounded anyway).
constexpr size_t kMaxDevices = 64;
constexpr uint64_t kSaturated32 = 0xffffffffu;

// One sysfs attribute read every sample.
class Attr {
 public:
  Attr() = default;
  Attr(std::string path, bool keep_regular)
      : path_(std::move(path)), keep_regular_(keep_regular) {}
  ~Attr() { close(); }
  Attr(Attr&& o) noexcept
      : path_(std::move(o.path_)),
        fd_(o.fd_),
        kept_(o.kept_),
        keep_regular_(o.keep_regular_) {
    o.fd_ = -1;
    o.kept_ = false;
  }
  Attr& operator=(Attr&& o) noexcept {
    if (this != &o) {
      close();
      path_ = std::move(o.path_);
      fd_ = o.fd_;
      kept_ = o.kept_;
      keep_regular_ = o.keep_regular_;
      o.fd_ = -1;
      o.kept_ = false;
    }
    return *this;
  }
  Attr(const Attr&) = delete;

  bool configured() const { return !path_.empty(); }

  // The attribute's text (up to kAttrBytes - 1 bytes), or an empty view
  // when it cannot be read or is too long to be a value.
  std::string_view read(char (&buf)[kAttrBytes]) {
    if (path_.empty()) return {};
    int fd = fd_;
    if (fd < 0) {
      fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) return {};
    }
    ssize_t n;
    do {
      n = ::pread(fd, buf, kAttrBytes, 0);
    } while (n < 0 && errno == EINTR);
    if (fd_ < 0) {
      if (n >= 0 && should_keep(fd) && take_kept_slot()) {
        fd_ = fd;
        kept_ = true;
      } else {
        ::close(fd);
      }
    } else if (n < 0) {
      close();  // the device went away: open by path next time
    }
    if (n <= 0 || static_cast<size_t>(n) >= kAttrBytes) return {};
    return trim(std::string_view(buf, static_cast<size_t>(n)));
  }

 private:
  bool should_keep(int fd) const {
    struct statfs fs {};
    if (fstatfs(fd, &fs) != 0) return false;
    return fs.f_type == kSysfsMagic || fs.f_type == kProcMagic || keep_regular_;
  }
  void close() {
    if (fd_ < 0) return;
    ::close(fd_);
    fd_ = -1;
    if (kept_) give_kept_slot();
    kept_ = false;
  }

  std::string path_;
  int fd_ = -1;
  bool kept_ = false;
  bool keep_regular_ = false;
};

// The counters of the trace format, in RdmaPort's order after the two data
// counters.
enum Counter {
  kRcvData,
  kXmitData,
  kSymbolError,
  kLinkErrorRecovery,
  kLinkDowned,
  kPortRcvErrors,
  kPortXmitDiscards,
  kPortXmitWait,
  kLocalLinkIntegrityErrors,
  kExcessiveBufferOverrunErrors,
  kCounters
};
constexpr const char* kCounterFile[kCounters] = {
    "port_rcv_data",
    "port_xmit_data",
    "symbol_error",
    "link_error_recovery",
    "link_downed",
    "port_rcv_errors",
    "port_xmit_discards",
    "port_xmit_wait",
    "local_link_integrity_errors",
    "excessive_buffer_overrun_errors",
};

opt<uint64_t>& counter_field(RdmaPort& p, int c) {
  switch (c) {
    case kSymbolError:
      return p.symbol_error_total;
    case kLinkErrorRecovery:
      return p.link_error_recovery_total;
    case kLinkDowned:
      return p.link_downed_total;
    case kPortRcvErrors:
      return p.port_rcv_errors_total;
    case kPortXmitDiscards:
      return p.port_xmit_discards_total;
    case kPortXmitWait:
      return p.port_xmit_wait_total;
    case kLocalLinkIntegrityErrors:
      return p.local_link_integrity_errors_total;
    default:
      return p.excessive_buffer_overrun_errors_total;
  }
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// The word after "N: " in state and phys_state ("4: ACTIVE"), letters only.
std::string_view state_word(std::string_view text) {
  if (size_t colon = text.find(':'); colon != std::string_view::npos)
    text = trim(text.substr(colon + 1));
  if (text.empty() || text.size() > 24) return {};
  for (char c : text)
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'))
      return {};
  return text;
}

// "400 Gb/sec (4X NDR)" -> 400; "2.5 Gb/sec" -> 2.5.
opt<double> rate_of(std::string_view text) {
  size_t space = text.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  if (!text.substr(space + 1).starts_with("Gb/sec")) return std::nullopt;
  auto v = parse_double(text.substr(0, space));
  if (!v || *v > 1e6) return std::nullopt;
  return v;
}

// A name or version from sysfs: printable ASCII without blanks or quotes,
// at most kRdmaNameMax bytes; "" otherwise.
std::string clean_name(std::string_view text) {
  text = trim(text);
  if (text.size() > kRdmaNameMax) return "";
  for (char c : text)
    if (c <= ' ' || c > '~' || c == '"' || c == '\\') return "";
  return std::string(text);
}

std::string read_small(const std::string& path) {
  char buf[kAttrBytes];
  Attr a(path, false);
  return std::string(a.read(buf));
}

std::vector<std::string> sorted_entries(const std::string& dir, size_t max) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    std::string_view n = e->d_name;
    if (n == "." || n == ".." || n.size() > kRdmaNameMax) continue;
    out.emplace_back(n);
    if (out.size() >= 4 * max) break;  // a hostile directory
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  if (out.size() > max) out.resize(max);
  return out;
}

bool is_pci_address(std::string_view s) {
  return s.size() >= 12 && s.size() <= 16 && s[s.size() - 2] == '.' &&
         s[s.size() - 5] == ':' && s[s.size() - 8] == ':';
}

}  // namespace

struct RdmaPortReader::Impl {
  struct Port {
    size_t device = 0;  // index into devices
    int number = 0;
    Attr state, phys_state, rate;
    Attr counters[kCounters];
    opt<uint64_t> prev[2];  // rcv, xmit data at the previous sample
  };
  opt<std::vector<RdmaDevice>> devices;
  std::vector<Port> ports;
  double prev_now = 0;
  bool have_prev = false;

  void discover(const std::string& sys_root, const Options& options) {
    const std::string cls = sys_root + "/class/infiniband";
    if (!exists(cls)) {
      if (exists(sys_root + "/class")) devices.emplace();  // none here
      return;
    }
    devices.emplace();
    for (const std::string& name : sorted_entries(cls, kMaxDevices)) {
      if (ports.size() >= kRdmaPortsMax) break;
      const std::string dir = cls + "/" + name;
      RdmaDevice dev;
      dev.device = clean_name(name);
      if (dev.device.empty()) continue;
      char link[PATH_MAX];
      ssize_t n = ::readlink((dir + "/device").c_str(), link, sizeof link - 1);
      if (n > 0) {
        std::string_view where(link, static_cast<size_t>(n));
        where = where.substr(where.rfind('/') + 1);
        if (is_pci_address(where)) dev.pci_bus_id = std::string(where);
      }
      if (auto numa = parse_i64(read_small(dir + "/device/numa_node"));
          numa && *numa >= 0 && *numa < 4096)
        dev.numa_node = static_cast<int>(*numa);
      dev.model = clean_name(read_small(dir + "/hca_type"));
      dev.fw_version = clean_name(read_small(dir + "/fw_ver"));
      const size_t dev_index = devices->size();
      for (const std::string& pn : sorted_entries(dir + "/ports", 256)) {
        if (ports.size() >= kRdmaPortsMax) break;
        auto number = parse_u64(pn);
        if (!number || *number > 65535) continue;
        const std::string pdir = dir + "/ports/" + pn;
        RdmaPortInfo info;
        info.port = static_cast<int>(*number);
        const std::string layer = read_small(pdir + "/link_layer");
        if (layer == "InfiniBand" || layer == "Ethernet")
          info.link_layer = layer;
        char buf[kAttrBytes];
        Attr rate(pdir + "/rate", false);
        info.max_rate_gbps = rate_of(rate.read(buf));
        if (info.link_layer == "Ethernet") {
          std::string nd = clean_name(read_small(pdir + "/gid_attrs/ndevs/0"));
          if (nd.empty()) {
            auto nets = sorted_entries(dir + "/device/net", 1);
            if (!nets.empty()) nd = clean_name(nets.front());
          }
          if (!nd.empty()) info.netdev = nd;
        }
        dev.ports.push_back(info);
        Port& p = ports.emplace_back();
        p.device = dev_index;
        p.number = info.port;
        const bool keep = options.keep_regular_files;
        p.state = Attr(pdir + "/state", keep);
        p.phys_state = Attr(pdir + "/phys_state", keep);
        p.rate = Attr(pdir + "/rate", keep);
        for (int c = 0; c < kCounters; ++c) {
          for (const char* sub : {"/counters/", "/hw_counters/"}) {
            std::string path = pdir + sub + kCounterFile[c];
            if (exists(path)) {
              p.counters[c] = Attr(std::move(path), keep);
              break;
            }
          }
        }
      }
      devices->push_back(std::move(dev));
    }
  }
};

RdmaPortReader::RdmaPortReader(const std::string& sys_root, Options options)
    : impl_(std::make_unique<Impl>()) {
  impl_->ports.reserve(kRdmaPortsMax);
  impl_->discover(sys_root, options);
}

RdmaPortReader::~RdmaPortReader() = default;

const std::optional<std::vector<RdmaDevice>>& RdmaPortReader::devices() const {
  return impl_->devices;
}

size_t RdmaPortReader::port_count() const { return impl_->ports.size(); }

void RdmaPortReader::sample(double now, std::vector<RdmaPort>& out) {
  Impl& m = *impl_;
  out.resize(m.ports.size());
  const double dt = m.have_prev ? now - m.prev_now : 0;
  char buf[kAttrBytes];
  for (size_t i = 0; i < m.ports.size(); ++i) {
    Impl::Port& p = m.ports[i];
    RdmaPort& o = out[i];
    o.device.assign((*m.devices)[p.device].device);
    o.port = p.number;
    o.state.assign(state_word(p.state.read(buf)));
    o.phys_state.assign(state_word(p.phys_state.read(buf)));
    o.rate_gbps = rate_of(p.rate.read(buf));
    for (int c = 0; c < kCounters; ++c) {
      opt<uint64_t> v;
      if (p.counters[c].configured()) v = parse_u64(p.counters[c].read(buf));
      if (c == kRcvData || c == kXmitData) {
        opt<double>& rate = c == kRcvData ? o.rx_bytes_per_s : o.tx_bytes_per_s;
        opt<uint64_t>& total =
            c == kRcvData ? o.rx_bytes_total : o.tx_bytes_total;
        total.reset();
        if (v && *v <= UINT64_MAX / 4) total = *v * 4;
        opt<uint64_t>& prev = p.prev[c];
        rate.reset();
        if (v && prev && dt > 0 && *v >= *prev && *v != kSaturated32)
          rate = static_cast<double>(*v - *prev) * 4.0 / dt;
        prev = v;
      } else {
        counter_field(o, c) = v;
      }
    }
  }
  m.prev_now = now;
  m.have_prev = true;
}

}  // namespace gd::procfs
