#include "serve/event_stream.h"

#include <algorithm>
#include <cstring>

#include "api/sample_event_json.h"
#include "model/memory_owners.h"
#include "model/process_tree.h"
#include "serve/api.h"

namespace gd {

void EventStream::set_hooks(std::function<void()> suspend,
                            std::function<void()> resume) {
  std::lock_guard lock(mu_);
  suspend_ = std::move(suspend);
  resume_ = std::move(resume);
}

EventStream::Read EventStream::read(char* buf, size_t max, size_t& n) {
  std::lock_guard lock(mu_);
  n = 0;
  if (dropped_ || (ended_ && queue_.empty())) return Read::kEnd;
  while (n < max && !queue_.empty()) {
    const std::string& front = *queue_.front();
    const size_t take = std::min(max - n, front.size() - offset_);
    std::memcpy(buf + n, front.data() + offset_, take);
    n += take;
    offset_ += take;
    bytes_ -= take;
    if (offset_ == front.size()) {
      queue_.pop_front();
      offset_ = 0;
    }
  }
  if (n > 0) return Read::kData;
  // Nothing to send: park the connection until push() resumes it. Under
  // the lock, so a push cannot resume before the suspend.
  if (suspend_) {
    suspend_();
    suspended_ = true;
  }
  return Read::kWait;
}

void EventStream::detach() {
  std::lock_guard lock(mu_);
  detached_ = true;
  queue_.clear();
  bytes_ = 0;
  suspend_ = nullptr;
  resume_ = nullptr;
}

size_t EventStream::queued_bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

bool EventStream::dropped() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

bool EventStream::push(const std::shared_ptr<const std::string>& event,
                       size_t cap) {
  std::lock_guard lock(mu_);
  if (detached_ || dropped_ || ended_) return !dropped_;
  if (bytes_ + event->size() > cap) {
    // Too slow: free what it holds now; the connection ends on its next
    // read (or times out if it never reads again).
    dropped_ = true;
    queue_.clear();
    bytes_ = 0;
  } else {
    queue_.push_back(event);
    bytes_ += event->size();
  }
  if (suspended_ && resume_) {
    suspended_ = false;
    resume_();
  }
  return !dropped_;
}

void EventStream::end() {
  std::lock_guard lock(mu_);
  ended_ = true;
  if (suspended_ && resume_) {
    suspended_ = false;
    resume_();
  }
}

EventHub::EventHub(size_t max_streams, size_t max_queued_bytes)
    : max_streams_(max_streams), max_queued_bytes_(max_queued_bytes) {}

void EventHub::prune_locked() {
  std::erase_if(streams_, [](const std::shared_ptr<EventStream>& s) {
    std::lock_guard lock(s->mu_);
    return s->detached_;
  });
}

std::shared_ptr<EventStream> EventHub::open() {
  std::lock_guard lock(mu_);
  prune_locked();
  if (closed_ || streams_.size() >= max_streams_) return nullptr;
  auto s = std::make_shared<EventStream>();
  // The browser reconnects after 2 s if the connection drops.
  s->push(std::make_shared<const std::string>("retry: 2000\n\n"),
          max_queued_bytes_);
  if (last_sample_) s->push(last_sample_, max_queued_bytes_);
  if (last_findings_) s->push(last_findings_, max_queued_bytes_);
  if (last_fleet_) s->push(last_fleet_, max_queued_bytes_);
  streams_.push_back(s);
  return s;
}

void EventHub::publish(const Snapshot& snap) {
  std::shared_ptr<const std::string> sample, findings;
  if (snap.sample)
    sample = std::make_shared<const std::string>(sample_event(*snap.sample));
  std::lock_guard lock(mu_);
  if (snap.evaluated_at && snap.evaluated_at != last_evaluated_at_) {
    last_evaluated_at_ = snap.evaluated_at;
    findings = std::make_shared<const std::string>(findings_event(snap));
    last_findings_ = findings;
  }
  if (sample) last_sample_ = sample;
  prune_locked();
  for (const auto& s : streams_) {
    bool ok = true;
    if (sample) ok = s->push(sample, max_queued_bytes_);
    if (ok && findings) ok = s->push(findings, max_queued_bytes_);
    if (!ok && !s->counted_) {
      s->counted_ = true;
      ++dropped_total_;
    }
  }
}

void EventHub::publish_fleet(std::string event) {
  auto e = std::make_shared<const std::string>(std::move(event));
  std::lock_guard lock(mu_);
  last_fleet_ = e;
  prune_locked();
  push_all_locked(e);
}

void EventHub::push_all_locked(const std::shared_ptr<const std::string>& e) {
  for (const auto& s : streams_)
    if (!s->push(e, max_queued_bytes_) && !s->counted_) {
      s->counted_ = true;
      ++dropped_total_;
    }
}

void EventHub::close_all() {
  std::lock_guard lock(mu_);
  closed_ = true;
  for (const auto& s : streams_) s->end();
  streams_.clear();
}

uint64_t EventHub::dropped_total() const {
  std::lock_guard lock(mu_);
  return dropped_total_;
}

// event: sample -- api/sample_event_json.h: the sample without the host
// process list, and per GPU the memory no live process owns.
std::string EventHub::sample_event(const Sample& s) {
  Sample lean;
  lean.t = s.t;
  lean.gpus = s.gpus;
  lean.host = s.host;
  lean.events = s.events;
  ProcessTree tree(s);
  std::vector<api::GpuMemoryShare> memory;
  for (const auto& g : s.gpus) {
    // The figure of the orphaned-memory finding, who and top
    // (model/memory_owners.h); left out where it is unknown.
    const MemoryOwners owners = memory_owners(g, tree);
    if (!owners.not_owned_bytes) continue;
    memory.push_back({g.index, owners.live_bytes, *owners.not_owned_bytes});
  }
  std::string out = "event: sample\ndata: ";
  api::append_sample_event_json(out, lean, memory);
  out += "\n\n";
  return out;
}

// event: findings -- the /api/v1/findings object, when re-evaluated.
std::string EventHub::findings_event(const Snapshot& s) {
  return "event: findings\ndata: " + api_findings(s).body + "\n\n";
}

}  // namespace gd
