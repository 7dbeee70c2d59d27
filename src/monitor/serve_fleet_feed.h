// `top --connect URL,URL,...` (or @FILE): the fleet screen fed by running
// `gpudoctor serve`s over their JSON API, one request pair a node a round
// (GET /api/v1/status and /api/v1/findings), the way all-smi polls, beside
// the Prometheus path of fleet_feed.h. On a bounded pool of threads (at
// most max_in_flight requests at once), each request with its own
// deadline; a round is published when every node answered or the round's
// deadline passed, whichever comes first, so it never waits on the slowest
// node: a node that did not answer keeps its last values, marked as not
// answering with their age, and one that never answered is listed with
// why. Findings are serve's own (its live diagnosis), not judged again.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "http_client/cancel.h"
#include "http_client/client.h"
#include "http_client/url.h"
#include "model/sample.h"
#include "monitor/fleet_feed_core.h"
#include "monitor/fleet_frame.h"
#include "monitor/frame.h"

namespace gd::monitor {

// The longest line of a --connect @FILE, and the most bytes it may hold.
inline constexpr size_t kMaxServeListLine = 2048;
inline constexpr size_t kMaxServeListBytes = 4 << 20;

// "URL,URL,...": each a serve's base URL (parse_remote_url), at most
// promsource::kMaxFleetNodes, none twice. Throws std::invalid_argument with
// one line naming the URL at fault.
std::vector<std::string> parse_serve_list(const std::string& arg);
// A file of serve URLs, one a line ('#' starts a comment, blank lines are
// skipped); as parse_serve_list. Throws std::invalid_argument with one line
// naming FILE:LINE.
std::vector<std::string> read_serve_file(const std::string& path);

// A serve's newest good answer.
struct ServeReply {
  TraceHeader header;
  std::optional<Sample> sample;  // null before serve's first sample
  FindingsState findings;        // serve's live diagnosis
  double at = 0;                 // when it came (Unix s, this clock)
};

// One node as the feed holds it between rounds.
struct ServeNodeSlot {
  std::string url;
  std::string label;               // host:port, its name until it answers
  std::optional<ServeReply> last;  // its newest good answer
  std::string problem;             // why its newest request pair failed
  bool answered = false;           // in the round being published
};

// The frame's nodes from the slots (pure, for the tests): named by the
// Hostname of serve's header (its host:port before it answered, or when two
// serves give one name), judged by serve's findings; one that did not answer
// is not listed (its last values greyed, with their age and why), one that
// never answered carries its error instead of values.
std::vector<FleetNodeState> serve_round_nodes(
    const std::vector<ServeNodeSlot>& slots);

struct ServeFleetOptions {
  std::string source;             // shown in the header
  std::vector<std::string> urls;  // checked (parse_serve_list)
  http::Credentials who;          // the same for every serve
  double interval_s = 5;
  double request_timeout_s = 2;  // each request's own deadline
  size_t max_in_flight = 32;     // request pairs at once (threads)
};

class ServeFleetFeed : public FleetFeedCore {
 public:
  // Throws std::invalid_argument for a bad URL.
  explicit ServeFleetFeed(ServeFleetOptions options);
  ~ServeFleetFeed() override;
  ServeFleetFeed(const ServeFleetFeed&) = delete;
  ServeFleetFeed& operator=(const ServeFleetFeed&) = delete;

  void start() override;
  // Ends every request in flight at once: never waits on a hung serve.
  void stop() override;

  // Request pairs sent so far (benchmarks).
  uint64_t requests_sent() const;

 private:
  struct Outcome {
    std::optional<ServeReply> reply;
    std::string problem;
  };
  void run();
  void round();
  void work(size_t worker);
  Outcome poll(size_t node, http::RequestCancel& cancel) const;
  // A copy of `base` with the open node's processes; published.
  void publish_with_processes(std::shared_ptr<FleetFrame> f);

  ServeFleetOptions options_;
  std::vector<http::Url> urls_;
  double round_deadline_s_;

  // The pool: the nodes waiting for a worker, each node's newest outcome.
  mutable std::mutex pool_mu_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<size_t> queue_;
  std::vector<ServeNodeSlot> slots_;
  std::vector<char> busy_;          // queued or in flight
  std::vector<uint64_t> ok_round_;  // the round of its newest good answer
  std::vector<char> failed_;        // its newest request pair failed
  uint64_t round_no_ = 0;
  uint64_t sent_ = 0;
  bool pool_stopping_ = false;
  std::vector<std::unique_ptr<http::RequestCancel>> cancels_;  // a worker's
  std::vector<std::thread> workers_;
  std::thread thread_;
};

}  // namespace gd::monitor
