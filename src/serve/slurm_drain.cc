#include "serve/slurm_drain.h"

#include <fmt/format.h>

#include "common/time_point.h"
#include "diagnose/xid_catalog.h"
#include "serve/alerting.h"

namespace gd {
namespace {

// "Xid 79: the driver can no longer reach the GPU over PCIe (it fell off
// the bus)" from an xid-error title ("GPU 2 (...) logged Xid 79 (pcie-bus):
// ..."), the words from the Xid catalogue; "Xid" if the title names none.
std::string xid_words(const std::string& title) {
  auto at = title.find("Xid ");
  if (at == std::string::npos) return "Xid";
  size_t end = at + 4;
  int code = 0;
  while (end < title.size() && title[end] >= '0' && title[end] <= '9' &&
         end - at < 10)
    code = code * 10 + (title[end++] - '0');
  if (end == at + 4) return "Xid";
  std::string text = "Xid " + std::to_string(code);
  if (const XidInfo* info = find_xid(code); info && *info->meaning)
    text += std::string(": ") + info->meaning;
  return text;
}

// Printable ASCII only (the reason reaches scontrol, sinfo and terminals),
// at most kSlurmReasonMax bytes with `tail` (the time) kept whole.
std::string clean_reason(const std::string& text, const std::string& tail) {
  const size_t room = kSlurmReasonMax - tail.size();
  std::string out;
  for (char c : text) {
    if (out.size() >= room) break;
    out += (c >= 0x20 && c <= 0x7e) ? c : '?';
  }
  return out + tail;
}

// How often serve asks Slurm whether its drain still stands once the
// period is over and the finding is still present.
constexpr double kRecheckS = 60;

int rank_of(const std::string& id) {
  int i = 0;
  for (const auto& d : kSlurmDrainIds) {
    if (id == d.id) return i;
    ++i;
  }
  return -1;
}

}  // namespace

std::optional<SlurmDrainCandidate> slurm_drain_candidate(
    const std::vector<Finding>& findings, const TraceHeader& header) {
  const Finding* best = nullptr;
  int best_rank = 0, best_gpu = 0;
  for (const auto& f : findings) {
    int rank = rank_of(f.id);
    if (rank < 0 || f.severity != "critical") continue;
    int gpu = f.gpus.empty() ? -1 : f.gpus.front();
    if (!best || rank < best_rank || (rank == best_rank && gpu < best_gpu)) {
      best = &f;
      best_rank = rank;
      best_gpu = gpu;
    }
  }
  if (!best) return std::nullopt;
  const auto& d = kSlurmDrainIds[best_rank];
  std::string what = *d.what ? d.what : xid_words(best->title);
  std::string where = "host";
  if (!best->gpus.empty()) {
    where = fmt::format("GPU {}", best_gpu);
    for (const auto& g : header.gpus)
      if (g.index == best_gpu && !g.pci_bus_id.empty())
        where += " " + g.pci_bus_id;
  }
  std::string when = utc_hms(best->start);
  SlurmDrainCandidate c;
  c.key = AlertTracker::key_of(*best);
  c.id = best->id;
  c.reason = clean_reason(fmt::format("gpudoctor: {} {}", where, what),
                          when.empty() ? "" : " " + when);
  return c;
}

SlurmDrainBrakes::SlurmDrainBrakes(SlurmDrainConfig config,
                                   SlurmNodeControl& control)
    : config_(std::move(config)), control_(control) {}

void SlurmDrainBrakes::record(std::vector<SlurmAction>& out, SlurmAction a,
                              const std::string& once_key) {
  if (!once_key.empty() && once_key == reported_) return;
  reported_ = once_key;
  (a.action == "drain" ? drains_ : resumes_)[a.result]++;
  actions_.push_back(a);
  while (actions_.size() > kKeptActions) actions_.pop_front();
  out.push_back(std::move(a));
}

std::vector<SlurmAction> SlurmDrainBrakes::step(
    const std::optional<SlurmDrainCandidate>& worst, double now) {
  std::vector<SlurmAction> out;
  if (worst)
    step_present(*worst, now, out);
  else
    step_cleared(now, out);
  return out;
}

void SlurmDrainBrakes::step_present(const SlurmDrainCandidate& c, double now,
                                    std::vector<SlurmAction>& out) {
  const bool in_period =
      last_drain_at_ && now - *last_drain_at_ < config_.period_s;
  SlurmAction a{now, "drain", "", c.id, c.reason, ""};
  std::string error;
  if (in_period) {
    // Each finding is looked at once per period: the one serve drained for
    // at once, another when it appears.
    if (c.key == quiet_key_) return;
    quiet_key_ = c.key;
    if (own_reason_) {
      auto node = control_.show(config_.node, &error);
      if (!node) {
        quiet_key_.clear();  // looked at again at the next evaluation
        a.result = "failed";
        a.detail = error;
        record(out, a, "failed-show " + error);
        return;
      }
      // serve's drain still stands and covers this finding too.
      if (node->drain && node->reason == *own_reason_) return;
      own_reason_.reset();
    }
    // serve drained within the period and that drain is gone (resumed by
    // someone): no second drain before the period ends.
    a.result = "rate_limited";
    a.detail = fmt::format("last drain {:.0f} s ago; period {:.0f} s",
                           now - *last_drain_at_, config_.period_s);
    record(out, a, "rate_limited " + c.key);
    return;
  }
  // Past the period with serve's drain standing: Slurm is asked again at
  // most once a minute.
  if (own_reason_ && now < next_check_at_) return;
  auto node = control_.show(config_.node, &error);
  if (!node) {
    a.result = "failed";
    a.detail = error;
    record(out, a, "failed-show " + error);
    return;
  }
  if (own_reason_ && node->drain && node->reason == *own_reason_) {
    next_check_at_ = now + kRecheckS;  // serve's drain still stands
    return;
  }
  own_reason_.reset();
  if (node->unavailable || !node->reason.empty()) {
    // Drained or down already, or a reason someone else set: left alone.
    a.result =
        node->unavailable ? "already_unavailable" : "reason_set_by_other";
    a.detail = "State=" + node->state + " Reason=" + node->reason;
    record(out, a, a.result + " " + node->state + " " + node->reason);
    return;
  }
  if (!control_.drain(config_.node, c.reason, &error)) {
    a.result = "failed";
    a.detail = error;
    record(out, a, "failed-drain " + error);
    return;
  }
  own_reason_ = c.reason;
  last_drain_at_ = now;
  quiet_key_ = c.key;
  a.result = "drained";
  a.detail = "State=" + node->state;
  record(out, a, "");
}

void SlurmDrainBrakes::step_cleared(double now, std::vector<SlurmAction>& out) {
  if (!own_reason_) {
    reported_.clear();  // a finding that comes back is reported again
    return;
  }
  SlurmAction a{now, "resume", "", "", *own_reason_, ""};
  if (!config_.resume) {
    a.result = "not_enabled";
    a.detail =
        "the finding cleared; the node stays drained (--slurm-resume "
        "is off)";
    record(out, a, "not_enabled " + *own_reason_);
    return;
  }
  std::string error;
  auto node = control_.show(config_.node, &error);
  if (!node) {
    a.result = "failed";
    a.detail = error;
    record(out, a, "failed-show " + error);
    return;
  }
  if (!node->drain || node->reason != *own_reason_ ||
      node->reason.rfind("gpudoctor:", 0) != 0) {
    // Resumed, or drained again with another reason by someone else: the
    // drain is no longer serve's.
    own_reason_.reset();
    if (!node->drain) {
      reported_.clear();
      return;
    }
    a.result = "not_ours";
    a.detail = "State=" + node->state + " Reason=" + node->reason;
    record(out, a, "");
    return;
  }
  if (!control_.resume(config_.node, &error)) {
    a.result = "failed";
    a.detail = error;
    record(out, a, "failed-resume " + error);
    return;
  }
  own_reason_.reset();
  a.result = "resumed";
  a.detail = "State=" + node->state;
  record(out, a, "");
  reported_.clear();
}

}  // namespace gd
