// The one table from the series a fleet's Prometheus already has
// (dcgm-exporter, node_exporter, gpudoctor serve's /metrics) to the fields
// of the trace model (docs/trace-format.md), with their units converted.
//
// Where two entries give the same field (DCGM's framebuffer in MiB and
// serve's exact bytes), the first that has data for a GPU or host wins for
// the whole window: one source per field, never a mix from step to step.
#pragma once

#include <span>

#include "model/sample.h"

namespace gd::promsource {

enum class Scope {
  kGpu,   // a series per GPU (label "gpu"), of the node's GPU exporter
  kHost,  // one series for the node, computed by the server
  // A series per process (label "pid"), of serve's: read as the GPU ones
  // are (the metric with the node's selector).
  kProcess,
};

// What an entry's values become.
enum class Kind {
  kSample,  // a field of each sample at the grid's times
  kFact,    // a field of the header: the window's last value
  kXid,     // DCGM's "last Xid": a change to a non-zero code is an event
  kFbFree,  // DCGM's free framebuffer (MiB): with the used one, the total
  // node_exporter's CPU time by mode (one series per mode): the busy,
  // iowait and steal shares of cpu_util_pct, cpu_iowait_pct and
  // cpu_steal_pct, each a field of its own for the one-source rule.
  kCpuModes,
  // serve's count of a GPU's listed processes: where it has a value, the
  // GPU's process list is known at that step (empty when it is 0).
  kProcessList,
  // serve's dead GPU processes (label "state": Z or missing): entries of
  // the node's processes with that state.
  kDeadProcess,
};

struct Entry {
  const char* field;  // the trace's name ("temp_c"), for one source per field
  Scope scope;
  Kind kind;
  // kGpu: a metric name (the node's selector is added where it is asked
  // for). kHost: PromQL where $I stands for the node's instance matcher and
  // $W for the rate window ("[60s]").
  const char* query;
  // The one setter of the entry's scope and kind; values are in the
  // series' unit and converted here.
  void (*gpu)(GpuSample&, double) = nullptr;
  void (*host)(HostSample&, double) = nullptr;
  void (*gpu_fact)(GpuInfo&, double) = nullptr;
  void (*host_fact)(HostInfo&, double) = nullptr;
  // kProcess: a field of a GPU's listed process (series with "gpu" and
  // "pid"), or of the node's process (series with "pid" and "ppid").
  void (*gpu_proc)(GpuProcess&, double) = nullptr;
  void (*proc)(ProcessSample&, double) = nullptr;
};

std::span<const Entry> entries();

// DCGM's clock event (throttle) reason bitmask as trace-format.md's names;
// unknown bits are left out. nullopt when `mask` is not a whole number in
// range.
opt<std::vector<std::string>> clock_event_reasons(double mask);

}  // namespace gd::promsource
