// sxid-error: a fatal NVSwitch error (SXid) in the kernel log since boot
// (or --since). A fatal SXid takes the switch's links down for every GPU
// of the fabric until the node is reset; non-fatal ones (the driver says
// "Non-fatal") are corrected and counted, and do not stop a job.
#include <fmt/format.h>

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
  std::map<int, std::pair<size_t, std::string>> fatal;  // code -> count, line
  for (const auto& e : in.sample->events) {
    if (e.kind != kEventSxid || icontains(e.text, "non-fatal")) continue;
    if (!icontains(e.text, "fatal")) continue;
    auto& [count, line] = fatal[e.code.value_or(-1)];
    if (count++ == 0) line = e.text;
  }
  for (const auto& [code, seen] : fatal) {
    CheckFinding c;
    Finding& f = c.finding;
    f.id = "sxid-error";
    f.severity = "critical";
    f.title = fmt::format("NVSwitch logged fatal SXid {}", code);
    f.evidence = fmt::format("{} line{}; first: \"{}\"", seen.first,
                             seen.first == 1 ? "" : "s", seen.second);
    f.action =
        "Drain the node and reset the fabric (reboot): a fatal SXid takes "
        "NVSwitch links down. Look the code up in NVIDIA's NVSwitch SXid "
        "list and collect nvidia-bug-report.sh output if it repeats.";
    f.start = f.end = in.sample->t;
    c.brief = fmt::format("NVSwitch fatal SXid {}", code);
    out.push_back(std::move(c));
  }
}

}  // namespace gd::check
