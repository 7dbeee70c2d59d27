// POST /api/v1/kill: `gpudoctor kill` over the network, for `top
// --connect` and scripts (docs/serve.md, "Remote kill"). Off unless serve
// runs with --allow-remote-kill, which it accepts only with basic auth on
// every request. The request runs exactly the safe path of `gpudoctor kill`:
// procmgmt's plan (the same refusals: PID 1, kernel threads, serve itself
// and its ancestors, processes unrelated to a GPU unless `any`, other
// users' unless serve runs as root), then its session (pidfd pinning,
// syslog naming the remote user and address, the wait, NVML re-read until
// the memory is back). Plain functions of a request and a sample here; the
// HTTP server (http_server.cc) checks the head, reads the bounded body and
// runs handle() on its slow pool.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/sample.h"
#include "serve/api.h"
#include "serve/cmdline_exposure.h"

namespace gd {

inline constexpr std::string_view kKillPath = "/api/v1/kill";
// The header a request must carry: a browser sends a custom header
// cross-origin only after a CORS preflight, which serve never approves, so
// no web page (a form, a fetch from another origin) can send this request.
inline constexpr const char* kKillHeader = "X-Gpudoctor-Kill";

// How long a kill waits for a sample it asked the sampling loop for (one
// sample: at most the per-GPU deadline and a /proc walk).
inline constexpr std::chrono::seconds kKillSampleWait{10};

struct KillApiConfig {
  bool enabled = false;  // --allow-remote-kill
  std::string proc_root = "/proc";
  std::string dev_prefix = "/dev";  // NVIDIA device nodes (who holds memory)
  CmdlineExposure show_cmdline = CmdlineExposure::kRedacted;
  // A sample begun after the call (SamplingLoop::sample_now); null before
  // the first sample.
  std::function<std::shared_ptr<const Sample>()> fresh_sample;
  uint32_t self_pid = 0;  // serve itself (0: this process)
  // Basic-auth users who may end any user's processes; any other may end
  // only those of the Unix user of its own name (as `kill --user NAME`),
  // and a request naming another user (by name or uid; its own uid is
  // itself) is refused (403). Unset: all may.
  std::optional<std::vector<std::string>> admins;
  // The login name of a uid (common/user_name.h's user_name_of; tests
  // replace it): a non-admin naming its own user by uid is that user.
  std::function<std::string(uint32_t)> user_name_of;
};

// What the endpoint looks at in a request's head.
struct KillHead {
  std::string_view method;
  std::optional<std::string_view> content_type;
  std::optional<std::string_view> kill_header;  // X-Gpudoctor-Kill
  std::optional<std::string_view> content_length;
  bool transfer_encoding = false;  // any Transfer-Encoding (chunked)
};

// Checked when the headers are in, before a byte of the body is read:
// nullopt to go on and read the body, else the reply (403 when remote kill
// is off, saying how to turn it on; 405 not POST; 415 not JSON; 403 without
// the header; 411 no Content-Length; 413 a body over
// http_limits::kMaxKillBodyBytes).
std::optional<ApiReply> kill_head_refusal(const KillHead& head, bool enabled);

// Who asked, for serve's log and syslog.
struct KillCaller {
  std::string user;     // the basic-auth user
  std::string address;  // the client's address
};

struct KillApiResult {
  ApiReply reply;
  // logfmt fields for the request's log line. When the reply went out as
  // a stream (KillReplyStream::begin was called), reply.body is its last
  // line, to be written after the steps.
  std::string log_fields;
};

// The HTTP layer's end of a streamed reply (a request with "stream": true,
// api/kill_json.h): begin() once the plan goes ahead, just before the
// first signal (the reply is 200 from then on), then each step's line as
// it happens. Refusals, dry runs and a changed plan are answered whole.
class KillReplyStream {
 public:
  virtual ~KillReplyStream() = default;
  virtual void begin() = 0;
  virtual void write(std::string line) = 0;
};

class KillApi {
 public:
  explicit KillApi(KillApiConfig config);
  bool enabled() const { return config_.enabled; }
  // One request whose head passed: parse the body (400), plan from a fresh
  // sample and /proc, and unless a dry run (or a refusal) run the session.
  // Slow (seconds, up to about three times the timeout): never on the
  // event loop. One at a time: another request meanwhile gets 409.
  // `stream`: where a streamed reply goes; null answers every request
  // whole.
  KillApiResult handle(std::string_view body, const TraceHeader& header,
                       const KillCaller& who,
                       KillReplyStream* stream = nullptr);
  // A session under way stops waiting (serve is stopping).
  void stop();

 private:
  KillApiResult run(std::string_view body, const TraceHeader& header,
                    const KillCaller& who, KillReplyStream* stream);

  KillApiConfig config_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  bool busy_ = false;
  std::string busy_by_;
  double busy_since_ = 0;
};

}  // namespace gd
