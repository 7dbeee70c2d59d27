#include "views/epilog_view.h"

#include <nlohmann/json.hpp>

#include "common/bytes_text.h"
#include "common/terminal_text.h"

namespace gd {
namespace {

constexpr size_t kCommandShown = 60;

std::string process_text(const procmgmt::EpilogProcess& p) {
  return "pid " + std::to_string(p.proc.pid) + " (" +
         terminal_fit(p.proc.command(), kCommandShown) + ", " +
         terminal_fit(p.proc.user.empty() ? "?" : p.proc.user, 32) +
         "): " + terminal_safe(p.why, kTerminalSentenceMax);
}

std::string used_text(const procmgmt::EpilogGpu& g) {
  return g.used_bytes ? human_bytes(*g.used_bytes) + " used" : "used unknown";
}

}  // namespace

std::string render_epilog(const EpilogReport& r) {
  const std::string job = "job " + r.job_id + ": ";
  std::string out;
  if (r.selection.leftovers.empty()) out += job + "no process left behind\n";
  for (const auto& p : r.selection.leftovers)
    out += job + "ending " + process_text(p) + "\n";
  for (const auto& p : r.selection.spared)
    out += job + "leaving " + process_text(p) + "\n";
  for (const auto& s : r.kill_steps) out += job + s;
  for (const auto& g : r.gpus)
    out += job + "GPU " + std::to_string(g.gpu) + ": " +
           (g.back ? "memory back (" + used_text(g) + ")"
                   : "memory NOT back (" + used_text(g) + ")") +
           "\n";
  if (!r.reason.empty()) out += terminal_safe(r.reason, 200) + "\n";
  return out;
}

std::string epilog_to_json(const EpilogReport& r) {
  auto procs = [](const std::vector<procmgmt::EpilogProcess>& list) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& p : list)
      a.push_back({{"pid", p.proc.pid},
                   {"user", p.proc.user},
                   {"command", p.proc.command()},
                   {"why", p.why}});
    return a;
  };
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : r.gpus)
    gpus.push_back({{"gpu", g.gpu},
                    {"used_bytes", g.used_bytes ? nlohmann::json(*g.used_bytes)
                                                : nlohmann::json()},
                    {"memory_back", g.back},
                    {"holder_pid", g.holder_pid ? nlohmann::json(g.holder_pid)
                                                : nlohmann::json()},
                    {"holder_gone", g.holder_pid ? nlohmann::json(g.holder_gone)
                                                 : nlohmann::json()}});
  nlohmann::json j = {{"job", r.job_id},
                      {"job_start", r.selection.job_start
                                        ? nlohmann::json(*r.selection.job_start)
                                        : nlohmann::json()},
                      {"ended", procs(r.selection.leftovers)},
                      {"spared", procs(r.selection.spared)},
                      {"gpus", std::move(gpus)},
                      {"memory_back", r.memory_back},
                      {"reason", r.reason.empty() ? nlohmann::json()
                                                  : nlohmann::json(r.reason)}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace gd
