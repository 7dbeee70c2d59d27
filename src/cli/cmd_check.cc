// gpudoctor check [--gpus LIST] [--since TIME] [--json] [--reason]
// The health gate of a prolog (check/check.h): exit 0 healthy, 1 warnings
// only, 2 unhealthy, 3 could not check, 64 usage error.
#include <cstdio>
#include <memory>
#include <sstream>

#include "check/live.h"
#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "common/time_point.h"
#include "model/gpu_lookup.h"
#include "views/check_view.h"

namespace gd {
namespace {

struct CheckFlags {
  std::string gpus;  // "0,3" or "GPU-...,GPU-..."; "" = all
  std::string since;
  bool json = false;
  bool reason = false;
};

std::vector<std::string> split_gpus(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string e; std::getline(in, e, ',');) {
    if (std::string why = check_gpu_name(e); !why.empty())
      throw CLI::ValidationError("--gpus", why);
    out.push_back(e);
  }
  if (!list.empty() && list.back() == ',')
    throw CLI::ValidationError("--gpus", "ends with a comma");
  return out;
}

int run_check(const GlobalOptions& global, const CheckFlags& f,
              const std::vector<std::string>& gpus) {
  SamplerOptions options = global.sampler_options();
  if (!f.since.empty())
    options.kmsg_since = parse_time_point(f.since, unix_now());
  check::LiveCheck live;
  check::check_live(options, gpus, live);
  if (!live.could_not_check.empty()) {
    std::fprintf(stderr, "gpudoctor: check: could not check: %s\n",
                 live.could_not_check.c_str());
    if (f.reason)
      std::printf("gpudoctor: could not check: %.160s\n",
                  live.could_not_check.c_str());
    return check::kExitCouldNotCheck;
  }
  check::Result r = check::judge(live.input);
  std::string out = f.json     ? format_check_json(r, live.header)
                    : f.reason ? check_reason(r, live.header)
                               : format_check_text(r, live.header);
  if (f.reason && !out.empty()) out += "\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
  return r.exit_code();
}

void add_check_command(CLI::App& app, const GlobalOptions& global) {
  auto* cmd = app.add_subcommand(
      "check",
      "health gate for a prolog: are the GPUs fit for a job now? (exit 0 "
      "healthy, 1 warnings, 2 unhealthy, 3 could not check, 64 usage)");
  auto f = std::make_shared<CheckFlags>();
  cmd->add_option("--gpus", f->gpus,
                  "the GPUs a job gets, which must be free: indexes, UUIDs "
                  "or device files (/dev/nvidiaN), comma-separated (default "
                  "all)");
  cmd->add_option("--since", f->since,
                  "judge kernel-log lines from this time on (a duration ago "
                  "such as 1h, Unix seconds, or a UTC date/time; default: "
                  "since boot)")
      ->check(time_point_value());
  auto* json = cmd->add_flag("--json", f->json, "print the result as JSON");
  cmd->add_flag("--reason", f->reason,
                "print one line (<= 200 chars) naming the worst problem, fit "
                "for a Slurm drain reason; nothing when healthy")
      ->excludes(json);
  // Usage errors of check exit 64: 2 means unhealthy here.
  set_usage_exit_code("check", check::kExitUsage);
  cmd->callback([&global, f] {
    std::vector<std::string> gpus = split_gpus(f->gpus);
    try {
      command_exit_code() = run_check(global, *f, gpus);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpudoctor: check: could not check: %s\n", e.what());
      command_exit_code() = check::kExitCouldNotCheck;
    }
  });
}

}  // namespace

GD_REGISTER_COMMAND(25, add_check_command);

}  // namespace gd
