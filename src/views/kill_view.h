// `gpudoctor kill`: the plan before anything is sent, each step of the kill
// session as it happens, and its outcome (procmgmt/kill_plan.h,
// procmgmt/kill_session.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/sample.h"
#include "procmgmt/gpu_memory_account.h"
#include "procmgmt/kill_plan.h"
#include "procmgmt/kill_session.h"
#include "procmgmt/proc_snapshot.h"

namespace gd {

// What will be signalled (with each target's GPU memory in `sample`),
// zombies and notes. `signal` is the signal's name ("SIGTERM").
std::string render_kill_plan(const procmgmt::KillPlan& plan,
                             const Sample& sample, const std::string& signal,
                             bool force, double timeout_s);
// After "Nothing to signal." when the selected owners are gone: what `who`
// advises for each GPU they held memory on (the reset paragraph...), each
// line once. "" when there is no advice.
std::string render_gone_owners_advice(
    const std::vector<procmgmt::GpuMemoryAccount>& accounts);
// "Refused, nothing was sent:" and one line per refusal.
std::string render_kill_refusals(const procmgmt::KillPlan& plan,
                                 const procmgmt::ProcSnapshot& procs);
// "sent SIGTERM to 42" or why it could not be sent.
std::string render_signal_sent(uint32_t pid, int sig, const std::string& error);
// The processes outliving the timeout before SIGKILL.
std::string render_escalation(size_t alive, double timeout_s);
// What happened: still alive, memory before/after, released or why not.
std::string render_kill_outcome(const procmgmt::KillOutcome& outcome);

}  // namespace gd
