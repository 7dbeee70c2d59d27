// gpudoctor check [--gpus LIST|none] [--since TIME] [--json | --reason |
//                  --npd [--npd-problem LEVEL]] [--max-length N]
// The health gate of a prolog (check/check.h): exit 0 healthy, 1 warnings
// only, 2 unhealthy, 3 could not check, 64 usage error. With --npd, a
// node-problem-detector custom plugin: exit 0 OK, 1 problem, 2 unknown.
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
  std::string gpus;  // "0,3" or "GPU-...,GPU-..."; "" = all; "none"
  std::string since;
  bool json = false;
  bool reason = false;
  bool npd = false;
  std::string npd_problem = "critical";
  size_t max_length = 0;  // 0: the output's own default
};

constexpr std::string_view kNoJobGpus = "none";

// --npd without --gpus is a node's health: no GPU need be free.
bool node_only(const CheckFlags& f) {
  return f.gpus == kNoJobGpus || (f.npd && f.gpus.empty());
}

std::vector<std::string> split_gpus(const std::string& list) {
  std::vector<std::string> out;
  if (list == kNoJobGpus) return out;
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

int run_npd(const check::LiveCheck& live, const CheckFlags& f) {
  const size_t max = f.max_length ? f.max_length : kNpdMessageMax;
  NpdVerdict v = live.could_not_check.empty()
                     ? check_npd(check::judge(live.input), live.header, max,
                                 f.npd_problem == "warning")
                     : check_npd_unknown(live.could_not_check, max);
  std::printf("%s\n", v.message.c_str());
  return v.exit_status;
}

int run_check(const GlobalOptions& global, const CheckFlags& f,
              const std::vector<std::string>& gpus) {
  SamplerOptions options = global.sampler_options();
  if (!f.since.empty())
    options.kmsg_since = parse_time_point(f.since, unix_now());
  check::LiveCheck live;
  check::check_live(options, gpus, live, node_only(f));
  if (f.npd) return run_npd(live, f);
  const size_t max = f.max_length ? f.max_length : kCheckReasonMax;
  if (!live.could_not_check.empty()) {
    std::fprintf(stderr, "gpudoctor: check: could not check: %s\n",
                 live.could_not_check.c_str());
    if (f.reason)
      std::printf("gpudoctor: could not check: %.*s\n",
                  static_cast<int>(max - 28), live.could_not_check.c_str());
    return check::kExitCouldNotCheck;
  }
  check::Result r = check::judge(live.input);
  std::string out = f.json     ? format_check_json(r, live.header)
                    : f.reason ? check_reason(r, live.header, max)
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
                  "all; with --npd none); 'none': the node's health only, no "
                  "GPU need be free");
  cmd->add_option("--since", f->since,
                  "judge kernel-log lines from this time on (a duration ago "
                  "such as 1h, Unix seconds, or a UTC date/time; default: "
                  "since boot)")
      ->check(time_point_value());
  auto* json = cmd->add_flag("--json", f->json, "print the result as JSON");
  auto* reason =
      cmd->add_flag("--reason", f->reason,
                    "print one line (<= 200 chars) naming the worst problem, "
                    "fit for a Slurm drain reason; nothing when healthy")
          ->excludes(json);
  auto* npd =
      cmd->add_flag("--npd", f->npd,
                    "be a node-problem-detector custom plugin: one line (<= "
                    "80 chars), exit 0 OK, 1 problem, 2 could not check; "
                    "judges the node's health (--gpus none) unless --gpus")
          ->excludes(json)
          ->excludes(reason);
  cmd->add_option("--npd-problem", f->npd_problem,
                  "what --npd reports as a problem (exit 1): critical "
                  "findings, or warnings too")
      ->capture_default_str()
      ->check(CLI::IsMember({"critical", "warning"}))
      ->needs(npd);
  cmd->add_option("--max-length", f->max_length,
                  "the --reason or --npd line's limit in bytes (default 200, "
                  "--npd 80: node-problem-detector's max_output_length)")
      ->check(CLI::Range(kCheckLineMin, size_t{4096}));
  // Usage errors of check exit 64: 2 means unhealthy here.
  set_usage_exit_code("check", check::kExitUsage);
  cmd->callback([&global, f] {
    if (f->max_length && !f->reason && !f->npd)
      throw CLI::ValidationError("--max-length", "needs --reason or --npd");
    std::vector<std::string> gpus = split_gpus(f->gpus);
    try {
      command_exit_code() = run_check(global, *f, gpus);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpudoctor: check: could not check: %s\n", e.what());
      if (f->npd) {
        std::printf("%s\n",
                    check_npd_unknown(e.what(), f->max_length ? f->max_length
                                                              : kNpdMessageMax)
                        .message.c_str());
        command_exit_code() = kNpdUnknown;
      } else {
        command_exit_code() = check::kExitCouldNotCheck;
      }
    }
  });
}

}  // namespace

GD_REGISTER_NAMED_COMMAND(25, "check", add_check_command);

}  // namespace gd
