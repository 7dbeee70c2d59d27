// `k` in `top --connect`: the kill runs on the node, by its `gpudoctor
// serve` (POST /api/v1/kill, docs/serve.md "Remote kill"), through the same
// safe path as `gpudoctor kill` there. The plan is a dry run shown in the same
// dialog as a local kill; the yes sends the kill with the plan's id, so
// serve ends exactly the processes shown or nothing (a pid reused meanwhile
// changes the id). Serve's refusals (remote kill off, wrong password) come
// back as one line with its reason.
#pragma once

#include <memory>
#include <string>

#include "monitor/kill_job.h"
#include "monitor/remote_feed.h"

namespace gd::monitor {

// `connection`: the URL and basic auth of the feed (--connect,
// --auth-file). Throws std::invalid_argument for a bad URL.
std::unique_ptr<KillBackend> remote_kill_backend(RemoteOptions connection);

}  // namespace gd::monitor
