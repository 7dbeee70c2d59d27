// serve's POST /api/v1/kill, both ends: the request body a client sends
// and the reply serve answers (docs/serve.md, "Remote kill"), written and
// read here so that `serve` and `top --connect` agree field for field. Each
// end reads what the other sent over the network, so both parsers are
// strict and bounded (and fuzzed: tests/fuzz/http_request_fuzz.cc,
// remote_reply_fuzz.cc).
#pragma once

#include <csignal>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "procmgmt/kill_plan.h"
#include "procmgmt/kill_session.h"

namespace gd::api {

// What one remote request may ask for.
inline constexpr size_t kKillApiMaxPids = 256;
// GPUs named in one request's "gpus" (a node has at most a few dozen).
inline constexpr size_t kKillApiMaxGpus = 64;
// A request waits for the processes and the memory for up to about three
// times this (TERM, then KILL, then NVML) on a connection held open.
inline constexpr double kKillApiMaxTimeoutS = 60;

struct KillApiRequest {
  procmgmt::KillRequest
      request;           // pids and/or gpu, user, tree, any (as `kill`)
  int signal = SIGTERM;  // SIGTERM or SIGKILL
  double timeout_s = 10;
  bool force = false;    // SIGKILL what outlives the timeout
  bool dry_run = false;  // answer the plan, send nothing
  // "" or the id of a plan the client showed (a dry run's plan_id): the
  // kill goes ahead only if the plan made now has the same id.
  std::string plan_id;
  // Stream the reply (application/x-ndjson) once signals are being sent:
  // each step as it happens, then the reply (kill_api_step_line below).
  bool stream = false;
};

// The body as JSON: {"pids":[..],"gpu":N,"user":"..","tree":false,
// "any":false,"signal":"TERM","timeout":10,"force":true,"dry_run":false,
// "plan_id":"..","stream":false} (absent: the defaults above).
std::string kill_api_request_json(const KillApiRequest& r);
// Throws std::invalid_argument with one line naming what is wrong: not a
// JSON object, an unknown key, a wrong type, a value out of range, or no
// pids and no gpu. `timeout` is seconds or a duration ("10s").
KillApiRequest parse_kill_api_request(std::string_view body);

// Names what a plan signals: a hash of each target's pid and start time,
// 16 hex digits ("" when there is nothing to signal). The same processes
// give the same id; a pid now held by another process (new start time)
// gives another.
std::string kill_plan_id(const procmgmt::KillPlan& plan);

struct KillApiReply {
  bool dry_run = false;
  int signal = SIGTERM;
  double timeout_s = 10;
  bool force = false;
  procmgmt::KillPlan plan;
  std::string plan_id;
  // GPU memory of each planned process (targets and zombies) in the sample
  // the plan was made from.
  std::map<uint32_t, uint64_t> gpu_memory;
  // The command of each refused pid, as its refusal line shows it.
  std::map<uint32_t, std::string> refused_commands;
  std::vector<procmgmt::KillStep> steps;         // each signal sent, in order
  std::optional<procmgmt::KillOutcome> outcome;  // set when the session ran
  int exit_code =
      procmgmt::kKillExitReleased;  // as `gpudoctor kill` would exit
  std::string message;              // one line: what happened
  std::string error;  // "" or why the request was refused (HTTP 409)
};

std::string kill_api_reply_json(const KillApiReply& r);
// Throws std::runtime_error with one line naming what is wrong. Every
// string is cut to a bound and every list is bounded.
KillApiReply parse_kill_api_reply(std::string_view body);

// A streamed reply (a request with "stream": true that went as far as
// signalling; refusals and dry runs are answered whole, as above): JSON
// lines, {"step": {...}} for each signal and escalation as it happens,
// then {"reply": {...}} with the whole reply (its steps included).
std::string kill_api_step_line(const procmgmt::KillStep& s);  // ends with '\n'
std::string kill_api_reply_line(const KillApiReply& r);       // ends with '\n'
struct KillStreamLine {
  std::optional<procmgmt::KillStep> step;  // a step line
  std::optional<KillApiReply> reply;       // the last line
};
// One line (without its '\n'); throws std::runtime_error like
// parse_kill_api_reply.
KillStreamLine parse_kill_api_stream_line(std::string_view line);

}  // namespace gd::api
