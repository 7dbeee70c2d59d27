// Live updates for the dashboard: Server-Sent Events (/api/v1/events).
//
// The sampling loop publishes each new snapshot once; the hub formats it
// once (the sample in trace format without the host process list, and the
// findings when they were re-evaluated) and hands the same bytes to every
// open stream. Nothing here is a thread per client: the HTTP layer reads a
// stream from its event loop and, when the stream has nothing to send,
// suspends the connection until the next publish resumes it.
//
// Bounds: at most `max_streams` streams are open (the HTTP layer answers
// 503 past it), and each stream queues at most `max_queued_bytes`; a client
// that does not read that fast is dropped (its queue freed at once, the
// connection closed), never buffered without limit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "serve/snapshot.h"

namespace gd {

class EventStream {
 public:
  // What read() found.
  enum class Read { kData, kWait, kEnd };

  // The HTTP layer's hooks, called with the stream's lock held: suspend()
  // from read() (on the event loop) when there is nothing to send,
  // resume() from the publishing thread when there is again.
  void set_hooks(std::function<void()> suspend, std::function<void()> resume);
  // Copies up to `max` queued bytes into `buf` (sets `n`). kWait: nothing
  // queued, and suspend() was called. kEnd: the stream was dropped or the
  // hub closed; the connection should end.
  Read read(char* buf, size_t max, size_t& n);
  // The connection is gone (MHD freed the response): nothing more is queued.
  void detach();

  size_t queued_bytes() const;
  bool dropped() const;

 private:
  friend class EventHub;
  // False when the stream is dropped for being too slow.
  bool push(const std::shared_ptr<const std::string>& event, size_t cap);
  void end();

  mutable std::mutex mu_;
  std::deque<std::shared_ptr<const std::string>> queue_;
  size_t offset_ = 0;  // into queue_.front()
  size_t bytes_ = 0;
  bool suspended_ = false;
  bool ended_ = false;
  bool dropped_ = false;
  bool detached_ = false;
  bool counted_ = false;  // in the hub's dropped_total (hub's lock)
  std::function<void()> suspend_, resume_;
};

class EventHub {
 public:
  EventHub(size_t max_streams, size_t max_queued_bytes);

  // A new stream, primed with the latest sample and findings, or nullptr
  // when max_streams are open.
  std::shared_ptr<EventStream> open();
  // Formats `s` once and queues it on every stream.
  void publish(const Snapshot& s);
  // Queues a formatted "fleet" event (serve/fleet_json.h's fleet_event) on
  // every stream, and primes new streams with it.
  void publish_fleet(std::string event);
  // Ends every stream (and resumes it so the connection closes): before
  // the HTTP server stops.
  void close_all();

  uint64_t dropped_total() const;

  // The event texts (exposed for tests).
  static std::string sample_event(const Sample& s);
  static std::string findings_event(const Snapshot& s);

 private:
  void prune_locked();
  void push_all_locked(const std::shared_ptr<const std::string>& event);

  const size_t max_streams_, max_queued_bytes_;
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<EventStream>> streams_;
  std::shared_ptr<const std::string> last_sample_, last_findings_, last_fleet_;
  std::optional<double> last_evaluated_at_;
  uint64_t dropped_total_ = 0;
  bool closed_ = false;
};

}  // namespace gd
