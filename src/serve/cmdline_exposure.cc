#include "serve/cmdline_exposure.h"

#include "common/redact.h"

namespace gd {

std::optional<CmdlineExposure> parse_cmdline_exposure(std::string_view text) {
  if (text == "redacted") return CmdlineExposure::kRedacted;
  if (text == "full") return CmdlineExposure::kFull;
  if (text == "none") return CmdlineExposure::kNone;
  return std::nullopt;
}

void apply_cmdline_exposure(Sample& s, CmdlineExposure exposure) {
  if (exposure == CmdlineExposure::kFull) return;
  for (auto& p : s.processes) {
    if (exposure == CmdlineExposure::kNone)
      p.cmdline.clear();
    else
      p.cmdline = redact_secrets(p.cmdline);
  }
}

std::string exposed_cmdline(std::string_view cmdline,
                            CmdlineExposure exposure) {
  switch (exposure) {
    case CmdlineExposure::kFull:
      return std::string(cmdline);
    case CmdlineExposure::kNone:
      return "";
    case CmdlineExposure::kRedacted:
      break;
  }
  return redact_secrets(cmdline);
}

}  // namespace gd
