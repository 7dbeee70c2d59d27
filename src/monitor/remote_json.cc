#include "monitor/remote_json.h"

#include "api/findings_json.h"
#include "api/status_json.h"

namespace gd::monitor {

RemoteStatus parse_remote_status(std::string_view body) {
  api::StatusReply reply = api::parse_status_json(body);
  RemoteStatus r;
  r.header = std::move(reply.header);
  r.sample = std::move(reply.sample);
  r.interval_s = reply.collect.interval_s;
  r.collect_duration_s = reply.collect.collect_duration_s;
  r.version = std::move(reply.collect.version);
  r.remote_kill = reply.collect.remote_kill;
  return r;
}

FindingsState parse_remote_findings(std::string_view body) {
  api::FindingsReply reply = api::parse_findings_json(body);
  FindingsState out;
  out.source = "serve's alerts";
  out.findings.reserve(reply.findings.size());
  for (auto& a : reply.findings) out.findings.push_back(std::move(a.finding));
  out.evaluated_at = reply.evaluated_at;
  out.window = std::move(reply.window);
  out.not_judged = std::move(reply.not_judged);
  return out;
}

}  // namespace gd::monitor
