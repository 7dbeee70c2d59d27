// sxid-error: a fatal NVSwitch error (SXid) in the kernel log since boot
// (or --since). A fatal SXid takes the switch's links down for every GPU
// of the fabric until the node is reset; non-fatal ones (the driver says
// "Non-fatal") are corrected and counted, and do not stop a job.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "check/judges/judge_util.h"
#include "common/ascii_text.h"

namespace gd::check {

void judge_sxid(const Input& in, std::vector<CheckFinding>& out,
                std::vector<NotJudged>& not_judged) {
  if (!in.header->kernel_log_error.empty()) {
    not_judged.push_back({"sxid-error", "needs the kernel log's SXid lines; " +
                                            in.header->kernel_log_error});
    return;
  }
  struct Seen {
    size_t count = 0;
    std::string line;      // the first
    double logged_at = 0;  // the newest stamp
  };
  std::map<int, Seen> fatal;  // by code
  for (const auto& e : in.sample->events) {
    if (e.kind != kEventSxid || icontains(e.text, "non-fatal")) continue;
    if (!icontains(e.text, "fatal")) continue;
    Seen& seen = fatal[e.code.value_or(-1)];
    if (seen.count++ == 0) seen.line = e.text;
    seen.logged_at = std::max(seen.logged_at, e.logged_at.value_or(0));
  }
  for (const auto& [code, seen] : fatal) {
    CheckFinding c;
    Finding& f = c.finding;
    f.id = "sxid-error";
    f.severity = "critical";
    f.title = fmt::format("NVSwitch logged fatal SXid {}", code);
    f.evidence = fmt::format("{} line{}; first: \"{}\"", seen.count,
                             seen.count == 1 ? "" : "s", seen.line);
    f.action =
        "Drain the node and reset the fabric (reboot): a fatal SXid takes "
        "NVSwitch links down. Look the code up in NVIDIA's NVSwitch SXid "
        "list and collect nvidia-bug-report.sh output if it repeats.";
    f.start = f.end = in.sample->t;
    c.brief = fmt::format("NVSwitch fatal SXid {}", code);
    c.logged_at = seen.logged_at;
    out.push_back(std::move(c));
  }
}

}  // namespace gd::check
