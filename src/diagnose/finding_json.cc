#include "diagnose/finding_json.h"

namespace gd {

nlohmann::json finding_to_json(const Finding& f) {
  return {
      {"id", f.id},         {"severity", f.severity}, {"gpus", f.gpus},
      {"pids", f.pids},     {"title", f.title},       {"evidence", f.evidence},
      {"action", f.action}, {"start", f.start},       {"end", f.end}};
}

}  // namespace gd
