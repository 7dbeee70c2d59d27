// One node's window of Prometheus series -> a trace: its header and its
// samples on a fixed grid (start, start + step, ...). A field no series
// gives stays absent; a grid time no series has a value for gives no
// sample.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "http_client/prometheus_api.h"
#include "model/sample.h"
#include "promsource/node_match.h"
#include "promsource/series_table.h"

namespace gd::promsource {

// The most grid steps one window holds: two days at 15 s.
inline constexpr size_t kMaxSteps = 11520;
// The most GPUs of one node: more than any node has (an HGX board has 8,
// the largest PCIe servers 20). A series naming GPU 64 or above refuses
// the node's window: a server listing a GPU per label value 0..1023 is not
// describing a node. A GPU's samples are kept only at the steps a series
// gave a value for, so memory follows the points the server sent, never
// GPUs x steps.
inline constexpr int kMaxGpusPerNode = 64;
// The most series of one per-process entry a window keeps (pids come and go
// over a long window; the client's own bounds cap the points).
inline constexpr size_t kMaxProcessSeries = 4096;

class NodeWindow {
 public:
  // Throws std::invalid_argument when the grid is not valid or has more
  // than kMaxSteps steps.
  NodeWindow(NodeSelector node, double start, double end, double step_s);
  NodeWindow(std::string node, double start, double end, double step_s)
      : NodeWindow(NodeSelector{std::move(node), {}, {}}, start, end, step_s) {}

  // The series of entry `e` (as the node's query answered them). Throws
  // std::runtime_error (one line) when a series names a GPU index of
  // kMaxGpusPerNode or more.
  void add(const Entry& e, const std::vector<http::prom::Series>& series);

  TraceHeader header() const;
  // Each sample that has any value, in time order.
  void each_sample(const std::function<void(const Sample&)>& fn) const;
  size_t steps() const { return steps_; }

 private:
  struct Gpu {
    GpuInfo info;
    // By grid step, only the steps a series gave a value for.
    std::map<size_t, GpuSample> at;
    // serve's process lists, by grid step where serve counted one: how
    // many processes it listed, and those whose series gave them. A list is
    // known at a step only when every listed process is there (one whose
    // values NVML did not give has no series).
    struct List {
      int size = 0;
      std::vector<GpuProcess> listed;
    };
    std::map<size_t, List> lists;
    // Where each listed pid is in the lists, by grid step (steps in order):
    // the pid's slot (slot_of) -> (step, its index in that step's list). A
    // value of a pid is filed by walking these beside its points, never by
    // searching a list: thousands of processes stay linear.
    std::unordered_map<uint32_t, size_t> slot_of;
    std::vector<std::vector<std::pair<size_t, uint32_t>>> where;
  };
  // A process of the node as its series' labels name it.
  struct Proc {
    uint32_t pid = 0;
    opt<uint32_t> ppid;
    std::string name, user, state;
    void (*set)(ProcessSample&, double) = nullptr;  // its entry's setter
  };
  // The grid step of time `t`, or steps_ when `t` is not on the grid.
  size_t step_of(double t) const;
  Gpu& gpu(int index, const http::prom::Series& s);
  // The GPU's sample at step `i`, made when it is the first value there.
  static GpuSample& sample_at(Gpu& g, size_t i);
  void add_gpu(const Entry& e, const std::vector<http::prom::Series>& series);
  void add_host(const Entry& e, const std::vector<http::prom::Series>& series);
  void add_xid(int index, const http::prom::Series& s);
  void add_fb_free(Gpu& g, const http::prom::Series& s);
  void add_cpu_modes(const std::vector<http::prom::Series>& series);
  void add_process(const Entry& e,
                   const std::vector<http::prom::Series>& series);
  void add_process_list(int index, const http::prom::Series& s);
  void add_gpu_process(const Entry& e, int index, uint32_t pid,
                       const http::prom::Series& s);
  void add_node_process(const Entry& e, uint32_t pid,
                        const http::prom::Series& s);
  void add_dead_process(uint32_t pid, const http::prom::Series& s);
  // Files `proc` at each step of `s` with a value (only 1s: `only_ones`),
  // and keeps it when it has any.
  void keep_process(Proc proc, const http::prom::Series& s, bool only_ones);

  NodeSelector node_;
  double start_, step_;
  size_t steps_;
  std::map<int, Gpu> gpus_;
  std::vector<opt<HostSample>> host_;
  HostInfo host_info_;
  std::string driver_version_;
  std::map<size_t, std::vector<Event>> events_;  // by grid step
  // The node's processes (one per series), and by grid step which of them
  // had a value (index into procs_, the value).
  std::vector<Proc> procs_;
  std::vector<std::vector<std::pair<size_t, double>>> proc_at_;
  // (field, GPU index or -1 for the host) that a source already gave.
  std::set<std::pair<std::string, int>> given_;
};

}  // namespace gd::promsource
