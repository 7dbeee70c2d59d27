// gpudoctor diagnose --checklist [--json]: one live sample, then every check
// of src/checklist/ (pass / warn / fail / skip with the value and what to
// do). Exit 0 when all pass or are skipped, 1 on any warn, 2 on any fail.
#include <cstdio>
#include <string>

#include "checklist/checklist.h"
#include "cli/global_options.h"
#include "collect/sampler.h"
#include "views/checklist_view.h"

namespace gd {

int run_checklist(const GlobalOptions& global, bool json) {
  SamplerOptions options = global.sampler_options();
  options.kmsg_path = "";  // settings only: no kernel log events needed
  Sampler sampler(options);
  Sample sample = sampler.sample_once();
  CheckContext ctx(sampler.header(), sample, global.proc_root, global.sys_root);
  auto items = run_checks(ctx);
  std::string out =
      json ? format_checklist_json(items) : format_checklist_text(items);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return checklist_exit_code(items);
}

}  // namespace gd
