// serve's POST /api/v1/kill: the bytes of the request, the reply and the
// streamed lines are those of the nlohmann writer they had before json_out
// (recorded below from it), hostile text and every optional part included.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "api/kill_json.h"
#include "procmgmt/kill_signal.h"

namespace gd::api {
namespace {

using namespace procmgmt;

constexpr char kHostileBytes[] =
    "q\" b\\ nl\n tab\t nul\0 esc\x1b del\x7f bad\xff\xc3 ok\xc3\xa9 "
    "sur\xed\xa0\x80";
const std::string kHostile(kHostileBytes, sizeof kHostileBytes - 1);

KillTarget byte_case_target(uint32_t pid, uint64_t start,
                            const std::string& cmd) {
  KillTarget t;
  t.proc.pid = pid;
  t.proc.ppid = 1;
  t.proc.state = 'S';
  t.proc.uid = 1000;
  t.proc.user = "alice";
  t.proc.comm = "python3";
  t.proc.cmdline = cmd;
  t.proc.starttime = start;
  t.role = "GPU process on GPU 0";
  t.gpus = {0, 3};
  return t;
}

KillApiReply full_reply() {
  KillApiReply r;
  r.dry_run = false;
  r.signal = SIGKILL;
  r.timeout_s = 12.5;
  r.force = true;
  r.plan.targets = {byte_case_target(4242, 777, "python3 train.py --lr 3e-4"),
                    byte_case_target(4243, 778, kHostile)};
  r.plan.targets[1].proc.uid.reset();
  r.plan.targets[1].proc.user = kHostile;
  r.plan.targets[1].proc.state = '\xfe';
  r.plan.targets[1].role = kHostile;
  r.plan.targets[1].gpus = {};
  r.plan.zombies = {byte_case_target(4300, 779, "")};
  r.plan.zombies[0].proc.state = 'Z';
  r.plan.refusals = {{1, "PID 1 (init) is never signalled"}, {2, kHostile}};
  r.plan.notes = {"pid 9 belongs to bob", kHostile};
  r.plan.not_found = {31337, 7};
  r.plan_id = kill_plan_id(r.plan);
  r.gpu_memory = {{4242, 8ull << 30}, {4300, 0}};
  r.refused_commands = {{1, "/sbin/init"}};
  r.steps = {{false, 4242, SIGTERM, "", 0, 0},
             {true, 0, 0, "", 1, 12},
             {false, 4242, SIGKILL, kHostile, 0, 0}};
  KillOutcome o;
  o.result = KillResult::kNotReleased;
  o.still_alive = {{4242, 'D', kHostile}};
  o.memory = {{0, 9ull << 30, std::nullopt}, {3, std::nullopt, 1}};
  HeldMemory h;
  h.pid = 4300;
  h.gpu = 0;
  h.next = "reset GPU 0";
  h.gpu_users = {4242, 5000};
  AccountedProcess other_pid;
  other_pid.pid = 9;
  other_pid.explanation = "not this one";
  AccountedProcess ap;
  ap.pid = 4300;
  ap.status = HolderStatus::kZombie;
  ap.used_bytes = 1ull << 30;
  ap.explanation = "no process has this pid";
  ap.action = kHostile;
  h.account.processes = {other_pid, ap};
  OtherHolder other;
  other.proc.pid = 5000;
  other.proc.user = "bob";
  other.proc.state = 'D';
  other.proc.cmdline = "nvidia-smi -l";
  h.account.other_holders = {other};
  h.unlisted_bytes = 6ull << 30;
  HeldMemory bare;  // no accounted process of its pid, no unlisted bytes
  bare.pid = 4301;
  bare.gpu = 1;
  o.not_released = {h, bare};
  r.outcome = o;
  r.exit_code = kKillExitNotReleased;
  r.message = "GPU memory NOT released.";
  r.error = kHostile;
  return r;
}

struct Case {
  const char* name;
  std::string written;
};

std::vector<Case> cases() {
  KillApiRequest minimal;
  minimal.request.pids = {7};
  KillApiRequest every;
  every.request.pids = {1, 99};
  every.request.gpus = {3};
  every.request.user = "bob";
  every.request.tree = true;
  every.request.any = true;
  every.signal = SIGKILL;
  every.timeout_s = 0.25;
  every.force = true;
  every.dry_run = true;
  every.plan_id = "0123456789abcdef";
  every.stream = true;
  KillApiRequest gpu_only;
  gpu_only.request.gpus = {0};
  gpu_only.timeout_s = 60;
  KillApiReply dry;
  dry.dry_run = true;
  dry.plan.targets = {byte_case_target(10, 1, "x")};
  dry.plan_id = kill_plan_id(dry.plan);
  dry.message = "would signal 1 process";
  return {
      {"request_minimal", kill_api_request_json(minimal)},
      {"request_every", kill_api_request_json(every)},
      {"request_gpu_only", kill_api_request_json(gpu_only)},
      {"reply_empty", kill_api_reply_json(KillApiReply{})},
      {"reply_dry_run", kill_api_reply_json(dry)},
      {"reply_full", kill_api_reply_json(full_reply())},
      {"step_signal", kill_api_step_line({false, 4242, SIGTERM, "", 0, 0})},
      {"step_escalation", kill_api_step_line({true, 0, 0, "", 3, 0.5})},
      {"step_error", kill_api_step_line({false, 1, SIGKILL, kHostile, 0, 0})},
      {"reply_line", kill_api_reply_line(dry)},
  };
}

// Recorded from the nlohmann writer (kill_json.cc before json_out).
const std::map<std::string, std::string> kBefore = {
    {"request_minimal",
     "{\"dry_run\":false,\"force\":false,\"pids\":[7],\"signal\":\"TERM\""
     ",\"timeout\":10.0}"},
    {"request_every",
     "{\"any\":true,\"dry_run\":true,\"force\":true,\"gpu\":3,\"pids\":["
     "1,99],\"plan_id\":\"0123456789abcdef\",\"signal\":\"KILL\",\"strea"
     "m\":true,\"timeout\":0.25,\"tree\":true,\"user\":\"bob\"}"},
    {"request_gpu_only",
     "{\"dry_run\":false,\"force\":false,\"gpu\":0,\"signal\":\"TERM\",\""
     "timeout\":60.0}"},
    {"reply_empty",
     "{\"dry_run\":false,\"exit_code\":0,\"force\":false,\"message\":\"\""
     ",\"outcome\":null,\"plan\":{\"id\":\"\",\"not_found\":[],\"notes\""
     ":[],\"refusals\":[],\"targets\":[],\"zombies\":[]},\"signal\":\"SI"
     "GTERM\",\"steps\":[],\"timeout_s\":10.0}"},
    {"reply_dry_run",
     "{\"dry_run\":true,\"exit_code\":0,\"force\":false,\"message\":\"wo"
     "uld signal 1 process\",\"outcome\":null,\"plan\":{\"id\":\"2c48947"
     "628baa0e3\",\"not_found\":[],\"notes\":[],\"refusals\":[],\"target"
     "s\":[{\"comm\":\"python3\",\"command\":\"x\",\"gpu_memory_bytes\":"
     "null,\"gpus\":[0,3],\"pid\":10,\"ppid\":1,\"role\":\"GPU process o"
     "n GPU 0\",\"start_time\":1,\"state\":\"S\",\"uid\":1000,\"user\":\""
     "alice\"}],\"zombies\":[]},\"signal\":\"SIGTERM\",\"steps\":[],\"ti"
     "meout_s\":10.0}"},
    {"reply_full",
     "{\"dry_run\":false,\"error\":\"q\\\" b\\\\ nl\\n tab\\t nul\\u0000"
     " esc\\u001b del\x7f bad\xef\xbf\xbd\xef\xbf\xbd ok\xc3\xa9 sur\xef"
     "\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\",\"exit_code\":4,\"force\":true,"
     "\"message\":\"GPU memory NOT released.\",\"outcome\":{\"memory\":["
     "{\"after_bytes\":null,\"before_bytes\":9663676416,\"gpu\":0},{\"af"
     "ter_bytes\":1,\"before_bytes\":null,\"gpu\":3}],\"not_released\":["
     "{\"action\":\"q\\\" b\\\\ nl\\n tab\\t nul\\u0000 esc\\u001b del\x7f"
     " bad\xef\xbf\xbd\xef\xbf\xbd ok\xc3\xa9 sur\xef\xbf\xbd\xef\xbf\xbd"
     "\xef\xbf\xbd\",\"explanation\":\"no process has this pid\",\"gpu\""
     ":0,\"gpu_users\":[4242,5000],\"next\":\"reset GPU 0\",\"other_hold"
     "ers\":[{\"command\":\"nvidia-smi -l\",\"pid\":5000,\"state\":\"D\""
     ",\"user\":\"bob\"}],\"pid\":4300,\"status\":\"zombie\",\"unlisted_"
     "bytes\":6442450944,\"used_bytes\":1073741824},{\"gpu\":1,\"gpu_use"
     "rs\":[],\"next\":\"\",\"other_holders\":[],\"pid\":4301}],\"result"
     "\":\"not_released\",\"still_alive\":[{\"pid\":4242,\"state\":\"D\""
     ",\"why\":\"q\\\" b\\\\ nl\\n tab\\t nul\\u0000 esc\\u001b del\x7f "
     "bad\xef\xbf\xbd\xef\xbf\xbd ok\xc3\xa9 sur\xef\xbf\xbd\xef\xbf\xbd"
     "\xef\xbf\xbd\"}]},\"plan\":{\"id\":\"ce7d000cf7e5401d\",\"not_foun"
     "d\":[31337,7],\"notes\":[\"pid 9 belongs to bob\",\"q\\\" b\\\\ nl"
     "\\n tab\\t nul\\u0000 esc\\u001b del\x7f bad\xef\xbf\xbd\xef\xbf\xbd"
     " ok\xc3\xa9 sur\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"],\"refusals\""
     ":[{\"command\":\"/sbin/init\",\"pid\":1,\"reason\":\"PID 1 (init) "
     "is never signalled\"},{\"command\":null,\"pid\":2,\"reason\":\"q\\"
     "\" b\\\\ nl\\n tab\\t nul\\u0000 esc\\u001b del\x7f bad\xef\xbf\xbd"
     "\xef\xbf\xbd ok\xc3\xa9 sur\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"}"
     "],\"targets\":[{\"comm\":\"python3\",\"command\":\"python3 train.p"
     "y --lr 3e-4\",\"gpu_memory_bytes\":8589934592,\"gpus\":[0,3],\"pid"
     "\":4242,\"ppid\":1,\"role\":\"GPU process on GPU 0\",\"start_time\""
     ":777,\"state\":\"S\",\"uid\":1000,\"user\":\"alice\"},{\"comm\":\""
     "python3\",\"command\":\"q\\\" b\\\\ nl\\n tab\\t nul\\u0000 esc\\u"
     "001b del\x7f bad\xef\xbf\xbd\xef\xbf\xbd ok\xc3\xa9 sur\xef\xbf\xbd"
     "\xef\xbf\xbd\xef\xbf\xbd\",\"gpu_memory_bytes\":null,\"gpus\":[],\""
     "pid\":4243,\"ppid\":1,\"role\":\"q\\\" b\\\\ nl\\n tab\\t nul\\u00"
     "00 esc\\u001b del\x7f bad\xef\xbf\xbd\xef\xbf\xbd ok\xc3\xa9 sur\xef"
     "\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\",\"start_time\":778,\"state\":\""
     "\xef\xbf\xbd\",\"uid\":null,\"user\":\"q\\\" b\\\\ nl\\n tab\\t nu"
     "l\\u0000 esc\\u001b del\x7f bad\xef\xbf\xbd\xef\xbf\xbd ok\xc3\xa9"
     " sur\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"}],\"zombies\":[{\"comm\""
     ":\"python3\",\"command\":\"[python3]\",\"gpu_memory_bytes\":0,\"gp"
     "us\":[0,3],\"pid\":4300,\"ppid\":1,\"role\":\"GPU process on GPU 0"
     "\",\"start_time\":779,\"state\":\"Z\",\"uid\":1000,\"user\":\"alic"
     "e\"}]},\"signal\":\"SIGKILL\",\"steps\":[{\"error\":\"\",\"pid\":4"
     "242,\"signal\":\"SIGTERM\"},{\"alive\":1,\"escalation\":true,\"tim"
     "eout_s\":12.0},{\"error\":\"q\\\" b\\\\ nl\\n tab\\t nul\\u0000 es"
     "c\\u001b del\x7f bad\xef\xbf\xbd\xef\xbf\xbd ok\xc3\xa9 sur\xef\xbf"
     "\xbd\xef\xbf\xbd\xef\xbf\xbd\",\"pid\":4242,\"signal\":\"SIGKILL\""
     "}],\"timeout_s\":12.5}"},
    {"step_signal",
     "{\"step\":{\"error\":\"\",\"pid\":4242,\"signal\":\"SIGTERM\"}}\n"},
    {"step_escalation",
     "{\"step\":{\"alive\":3,\"escalation\":true,\"timeout_s\":0.5}}\n"},
    {"step_error",
     "{\"step\":{\"error\":\"q\\\" b\\\\ nl\\n tab\\t nul\\u0000 esc\\u0"
     "01b del\x7f bad\xef\xbf\xbd\xef\xbf\xbd ok\xc3\xa9 sur\xef\xbf\xbd"
     "\xef\xbf\xbd\xef\xbf\xbd\",\"pid\":1,\"signal\":\"SIGKILL\"}}\n"},
    {"reply_line",
     "{\"reply\":{\"dry_run\":true,\"exit_code\":0,\"force\":false,\"mes"
     "sage\":\"would signal 1 process\",\"outcome\":null,\"plan\":{\"id\""
     ":\"2c48947628baa0e3\",\"not_found\":[],\"notes\":[],\"refusals\":["
     "],\"targets\":[{\"comm\":\"python3\",\"command\":\"x\",\"gpu_memor"
     "y_bytes\":null,\"gpus\":[0,3],\"pid\":10,\"ppid\":1,\"role\":\"GPU"
     " process on GPU 0\",\"start_time\":1,\"state\":\"S\",\"uid\":1000,"
     "\"user\":\"alice\"}],\"zombies\":[]},\"signal\":\"SIGTERM\",\"step"
     "s\":[],\"timeout_s\":10.0}}\n"},
};

TEST(KillJsonBytes, AsBefore) {
  const auto written = cases();
  ASSERT_EQ(written.size(), kBefore.size());
  for (const auto& c : written)
    EXPECT_EQ(c.written, kBefore.at(c.name)) << c.name;
}

}  // namespace
}  // namespace gd::api
