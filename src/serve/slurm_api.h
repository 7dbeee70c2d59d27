// serve's drain with brakes in /metrics (gpudoctor_slurm_*) and in
// GET /api/v1/slurm/actions.
#pragma once

#include <string>

#include "serve/api.h"
#include "serve/slurm_drainer.h"

namespace gd {

// gpudoctor_slurm_drains_total{result}, gpudoctor_slurm_resumes_total{result}
// and gpudoctor_slurm_drained_by_gpudoctor (1 while a drain serve made
// stands), appended to `out`, each with the node's Hostname label first
// like every gpudoctor_* series (none when `hostname` is empty). Every
// result is written, 0 included, so a rate() sees the first one.
void render_slurm_families(const SlurmDrainStatus& s,
                           const std::string& hostname, std::string& out);

// {"enabled": true, "node": ..., "period_s": ..., "resume": bool,
//  "drained_by_gpudoctor": reason|null, "actions": [{t, action, result,
//  finding, reason, detail}...] newest first}. `s` null: enabled false.
ApiReply api_slurm_actions(const SlurmDrainStatus* s);

}  // namespace gd
