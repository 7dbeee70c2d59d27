// `w` in top: who holds a GPU's memory (procmgmt's account, as `gpudoctor
// who` shows it). Live, it reads this machine's /proc and device files; for
// a replay or a remote serve it works from what the sample carries (its
// processes and device holders), which is what that machine showed then.
#pragma once

#include <string>

#include "model/sample.h"
#include "procmgmt/gpu_memory_account.h"
#include "procmgmt/proc_snapshot.h"

namespace gd::monitor {

// /proc-like entries made from a sample's processes (no uid or start time).
procmgmt::ProcSnapshot snapshot_from_sample(const Sample& s);

// The account of `gpu`; `live` reads proc_root and dev_prefix instead of
// the sample's processes.
procmgmt::GpuMemoryAccount who_account(const TraceHeader& header,
                                       const Sample& sample, int gpu, bool live,
                                       const std::string& proc_root,
                                       const std::string& dev_prefix);

}  // namespace gd::monitor
