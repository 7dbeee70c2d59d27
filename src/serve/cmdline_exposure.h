// How much of each process's command line `gpudoctor serve` exports (JSON
// API, history, /metrics, alerts): command lines carry secrets
// (--api-key=..., TOKEN=..., https://user:pass@...), and anyone who can
// connect to the daemon reads them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "model/sample.h"

namespace gd {

enum class CmdlineExposure {
  kRedacted,  // default: secrets replaced by <redacted> (common/redact.h)
  kFull,      // as read from /proc
  kNone,      // empty; the process name stays
};

// "redacted", "full", "none"; nullopt for anything else.
std::optional<CmdlineExposure> parse_cmdline_exposure(std::string_view text);

// Rewrites every process's command line of `s` as `exposure` says.
void apply_cmdline_exposure(Sample& s, CmdlineExposure exposure);
// One command line as `exposure` says ("" for kNone).
std::string exposed_cmdline(std::string_view cmdline, CmdlineExposure exposure);

}  // namespace gd
