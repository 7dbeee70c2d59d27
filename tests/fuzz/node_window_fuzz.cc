// What `diagnose --prometheus` and `report --prometheus` build from a
// server's series (promsource/node_window.h): series of any entry of the
// table, with hostile labels (a gpu, pid or ppid that is not a number, huge
// or zero, another node's Hostname, any state) and values (NaN, negative,
// huge, off the grid). Each record of the input is one series: its entry,
// its labels and its points, a few bytes each. The window must come out
// within bounds: GPU indices 0..63 (a series naming GPU 64 or above refuses
// the window in one line), no pid 0, each pid once in a sample's processes
// and once in a GPU's list, a list never longer than serve said, and only
// the node's own series; an Xid code and a power limit the trace reader
// takes.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "model/limits.h"
#include "promsource/node_window.h"

namespace {

using gd::http::prom::Point;
using gd::http::prom::Series;
using gd::promsource::Entry;

class Bytes {
 public:
  explicit Bytes(std::string_view in) : in_(in) {}
  bool empty() const { return at_ >= in_.size(); }
  uint8_t next() { return empty() ? 0 : static_cast<uint8_t>(in_[at_++]); }
  std::string text(size_t max) {
    std::string out;
    for (size_t n = next() % (max + 1); n > 0 && !empty(); --n)
      out += static_cast<char>(next());
    return out;
  }

 private:
  std::string_view in_;
  size_t at_ = 0;
};

// A label value: a small number, a big or odd one, or raw bytes.
std::string number_label(Bytes& b) {
  switch (b.next() % 6) {
    case 0:
      return std::to_string(b.next() % 8);
    case 1:
      return std::to_string(1000 + b.next());
    case 2:
      return "4294967296";
    case 3:
      return "0";
    case 4:
      return "";
    default:
      return b.text(6);
  }
}

double value(Bytes& b) {
  switch (b.next() % 8) {
    case 0:
      return std::numeric_limits<double>::quiet_NaN();
    case 1:
      return -1;
    case 2:
      return 1e300;
    case 3:
      return 1;
    case 4:
      return 0;
    default:
      return b.next();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  Bytes b(input);
  const auto entries = gd::promsource::entries();
  gd::promsource::NodeWindow w("n1", 0, 150, 15);  // 11 steps
  for (int records = 0; !b.empty() && records < 64; ++records) {
    const Entry& e = entries[b.next() % entries.size()];
    Series s;
    const uint8_t who = b.next();
    s.labels.emplace_back("Hostname", who % 4 == 0 ? "n2" : "n1");
    if (who & 2) s.labels.emplace_back("gpu", number_label(b));
    if (who & 4) s.labels.emplace_back("pid", number_label(b));
    if (who & 8) s.labels.emplace_back("ppid", number_label(b));
    if (who & 16) s.labels.emplace_back("state", b.text(3));
    if (who & 32) s.labels.emplace_back("comm", b.text(8));
    if (who & 64) s.labels.emplace_back("mode", b.text(8));
    for (int n = b.next() % 12; n > 0; --n) {
      // Half steps: every other time is off the grid.
      const double t = (b.next() % 24) * 7.5;
      s.points.push_back(Point{t, value(b)});
    }
    try {
      w.add(e, {s});
    } catch (const std::runtime_error& refused) {
      const std::string why = refused.what();
      FUZZ_CHECK(why.find("a node has at most 64 GPUs") != std::string::npos,
                 input);
      FUZZ_CHECK(why.find('\n') == std::string::npos, input);
      return 0;
    }
  }
  // What the window gives, the trace reader takes: power limits a GPU can
  // have, Xid codes 1..65535.
  for (const auto& g : w.header().gpus)
    FUZZ_CHECK(!g.power_limit_w || (*g.power_limit_w >= 0 &&
                                    *g.power_limit_w <= gd::kMaxPowerLimitW),
               input);
  w.each_sample([&](const gd::Sample& s) {
    for (const auto& e : s.events)
      FUZZ_CHECK(!e.code || (*e.code >= 1 && *e.code <= gd::kMaxXidCode),
                 input);
    std::set<uint32_t> pids;
    for (const auto& p : s.processes) {
      FUZZ_CHECK(p.pid != 0, input);
      FUZZ_CHECK(pids.insert(p.pid).second, input);
    }
    for (const auto& g : s.gpus) {
      FUZZ_CHECK(g.index >= 0 && g.index < gd::promsource::kMaxGpusPerNode,
                 input);
      if (!g.processes) continue;
      std::set<uint32_t> listed;
      for (const auto& gp : *g.processes) {
        FUZZ_CHECK(gp.pid != 0, input);
        FUZZ_CHECK(listed.insert(gp.pid).second, input);
      }
    }
  });
  return 0;
}
