// What `gpudoctor report` tells: where the GPU-hours and the energy of a
// window went, per job, user, container and GPU. Plain data; the
// Accountant (accountant.h) fills it, views format it.
//
// Every figure closes: per GPU, the groups' held seconds + unheld seconds
// + unattributed seconds == the GPU's wall time (first to last sample), and
// the groups' energy + idle energy + unattributed energy == the energy the
// GPU used over that time.
#pragma once

#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace gd::accounting {

// What a report groups by.
// Kubernetes: a pod is "namespace/name" (its containers together), a
// namespace all of its pods.
enum class Dimension { kJob, kUser, kContainer, kPod, kNamespace, kGpu };
inline constexpr Dimension kDimensions[] = {
    Dimension::kJob, Dimension::kUser,      Dimension::kContainer,
    Dimension::kPod, Dimension::kNamespace, Dimension::kGpu};
inline constexpr size_t kDimensionCount = std::size(kDimensions);
const char* dimension_name(Dimension d);  // "job", "user", ...

// How an interval's energy was measured.
enum class EnergyMethod { kCounter, kPower };
// How a shared GPU's interval was split between its holders.
enum class SplitMethod { kSm, kMemory, kEqual };

// Seconds and joules summed over intervals. A "GPU-second" is one GPU for
// one second; report views divide by 3600.
struct Usage {
  double held_s = 0;         // the group had memory on the GPU (its share)
  double busy_s = 0;         // util_pct/100 x its share
  double sm_active_s = 0;    // GPM sm_active_pct/100 x its share
  double sm_measured_s = 0;  // held seconds where GPM said sm_active
  double idle_held_s = 0;    // held while the GPU's util was ~0
  double energy_j = 0;
  // Which methods the figures came from (seconds of the group's share).
  double energy_counter_j = 0, energy_power_j = 0;
  double split_sm_s = 0, split_memory_s = 0, split_equal_s = 0;
  // Memory: integral of used/total over the seconds the group held a GPU
  // (whole intervals, not shares), and the peak bytes on one GPU.
  double mem_frac_s = 0, mem_time_s = 0;
  uint64_t mem_peak_bytes = 0;
  void add(const Usage& o);
};

// Which method a group's share of shared GPUs was split by: "sm",
// "memory", "equal", or "sm+memory" ... when several did, in that order;
// "-" when none.
std::string split_text(const Usage& u);

// A diagnosis finding (diagnose's, handed over by the caller) that names
// pids of this group, and how much of the group's time it covers.
struct GroupFinding {
  std::string id, severity;
  double seconds = 0;  // the finding's span within the group's first..last
  double share = 0;    // seconds / the group's first..last (0..1)
};
// Findings kept per group (the most covering first).
inline constexpr size_t kFindingsPerGroup = 16;

struct GroupRow {
  std::string key;    // stable identity ("slurm:1234", "u:alice", "gpu:0")
  std::string label;  // what a person reads; untrusted text, unsanitised
  Usage usage;
  double first_t = 0, last_t = 0;      // first and last interval it held a GPU
  uint64_t gpu_mask = 0;               // GPUs 0..63 it held (bit i = GPU i)
  bool folded = false;                 // "other": groups past the cap
  std::vector<GroupFinding> findings;  // with Accountant::attribute
  // A fleet's report (fleet_merge.h): the nodes the group held GPUs on,
  // ascending, at most kNodesPerGroup of them, and how many in all; empty
  // and 0 for one node's report (gpu_mask then names its GPUs).
  std::vector<std::string> nodes;
  size_t node_count = 0;
};

struct GpuAccount {
  std::string node;  // a fleet's report: the GPU's node; "" for one node
  int index = 0;
  std::string name;  // from the trace header; untrusted
  std::optional<uint64_t> mem_total_bytes;
  double first_t = 0, last_t = 0;
  double wall_s = 0;          // last_t - first_t
  double held_s = 0;          // sum of groups' held_s on this GPU
  double unheld_s = 0;        // nobody held it (processes listed, none)
  double unattributed_s = 0;  // gaps, lost/stale GPU, processes unknown
  double busy_s = 0, sm_active_s = 0, sm_measured_s = 0;
  double energy_j = 0;               // everything measured on this GPU
  double held_energy_j = 0;          // given to groups
  double idle_energy_j = 0;          // while nobody held it
  double unattributed_energy_j = 0;  // counter delta across a gap
  double energy_counter_j = 0, energy_power_j = 0;
  double unmeasured_s = 0;  // intervals with neither counter nor power
  int counter_resets = 0;   // counter went backwards (driver reload)
  int gaps = 0;             // intervals too long to attribute
};

struct AccountReport {
  double start = 0, end = 0;  // first and last sample used
  size_t samples = 0;
  std::vector<GpuAccount> gpus;  // ascending index
  // Per dimension (indexed by Dimension), sorted by held_s, largest first;
  // "other" (folded groups) last.
  std::vector<GroupRow> groups[kDimensionCount];
  Usage total;  // over all groups (== sum of every dimension's rows)
  // Distinct groups put in "other", counted up to kFoldedCountMax.
  size_t groups_folded[kDimensionCount] = {};
  double gap_s = 0;  // the length over which an interval counted as a gap
  const std::vector<GroupRow>& by(Dimension d) const {
    return groups[static_cast<int>(d)];
  }
};

// Prices: cost of a group = kWh x price_kwh + held GPU-hours x
// price_gpu_hour (either may be absent).
struct Prices {
  std::optional<double> kwh, gpu_hour;
  bool any() const { return kwh || gpu_hour; }
  double cost(const Usage& u) const;
};

inline constexpr double kJoulesPerKwh = 3.6e6;
// Folded groups are counted up to this many (a count, not a list, would be
// unbounded only in its keys: each is remembered to count it once).
inline constexpr size_t kFoldedCountMax = 65536;

}  // namespace gd::accounting
