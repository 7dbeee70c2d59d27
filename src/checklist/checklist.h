// gpudoctor diagnose --checklist: the static self-check a careful operator
// runs first. Each check looks at one setting of the driver, the GPUs or the
// host and says pass / warn / fail (or skip, with the reason, when it cannot
// tell), with the value it saw and, for warn/fail, what to do.
//
// One check per file in checks/, registered in check_table.cc. A check reads
// the trace header and one live sample, plus files under proc_root/sys_root
// (never "/proc" or "/sys" directly), so tests run it on fixture trees.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/sample.h"

namespace gd {

enum class CheckStatus { kPass, kWarn, kFail, kSkip };

// "pass" | "warn" | "fail" | "skip".
const char* check_status_name(CheckStatus status);

struct CheckItem {
  std::string id;  // the check's id, e.g. "persistence-mode"
  CheckStatus status = CheckStatus::kSkip;
  std::string value;   // what was seen: "GPU 3: off"
  std::string detail;  // warn/fail: what to do; skip: why; pass: a note or ""
};

struct CheckContext {
  const TraceHeader& header;
  const Sample& sample;
  std::string proc_root = "/proc";
  std::string sys_root = "/sys";
  // Size in bytes of the filesystem holding `path` (statvfs by default);
  // nullopt when it cannot be read. Tests replace it: a fixture tree cannot
  // hold a small tmpfs without mounting one.
  std::function<std::optional<uint64_t>(const std::string& path)> fs_size_bytes;

  CheckContext(const TraceHeader& h, const Sample& s,
               std::string proc = "/proc", std::string sys = "/sys");
};

using CheckFn = std::vector<CheckItem> (*)(const CheckContext& ctx);

struct CheckEntry {
  const char* id;
  CheckFn run;
};

// The one table of checks, in the order they are printed (check_table.cc).
const std::vector<CheckEntry>& check_table();

// Runs every check of the table. A check that throws becomes one "skip" item
// naming the error, so one unreadable file never hides the other checks.
std::vector<CheckItem> run_checks(const CheckContext& ctx);

// 0 when everything passed or was skipped, 1 when any warned, 2 when any
// failed.
int checklist_exit_code(const std::vector<CheckItem>& items);

}  // namespace gd
