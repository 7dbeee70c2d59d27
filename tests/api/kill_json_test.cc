// serve's POST /api/v1/kill, both ends: what a request body may say (each
// wrong one refused with its reason), the plan id that ties a kill to the
// plan shown, the reply read back as it was written, and the syslog line
// naming a remote requester.
#include "api/kill_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "procmgmt/kill_signal.h"

namespace gd::api {
namespace {

using namespace procmgmt;

std::string kill_refusal(const std::string& body) {
  try {
    parse_kill_api_request(body);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(KillApiRequest, ReadsEveryField) {
  auto r = parse_kill_api_request(
      R"({"pids":[4242,4243],"gpu":1,"user":"alice","tree":true,"any":true,)"
      R"("signal":"KILL","timeout":"15s","force":true,"dry_run":true,)"
      R"("plan_id":"00ff00ff00ff00ff","stream":true})");
  EXPECT_EQ(r.request.pids, (std::vector<uint32_t>{4242, 4243}));
  EXPECT_EQ(r.request.gpus, (GpuSelection{1}));
  EXPECT_EQ(r.request.user, "alice");
  EXPECT_TRUE(r.request.tree);
  EXPECT_TRUE(r.request.any);
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_DOUBLE_EQ(r.timeout_s, 15);
  EXPECT_TRUE(r.force);
  EXPECT_TRUE(r.dry_run);
  EXPECT_EQ(r.plan_id, "00ff00ff00ff00ff");
  EXPECT_TRUE(r.stream);
}

TEST(KillApiRequest, DefaultsAreThoseOfKill) {
  auto r = parse_kill_api_request(R"({"pids":[7]})");
  EXPECT_EQ(r.signal, SIGTERM);
  EXPECT_DOUBLE_EQ(r.timeout_s, 10);
  EXPECT_FALSE(r.force || r.dry_run || r.request.tree || r.request.any ||
               r.stream);
  EXPECT_TRUE(r.request.gpus.empty());
  // Several GPUs as "gpus"; with "gpu" too, each GPU once.
  EXPECT_EQ(parse_kill_api_request(R"({"gpu":2,"gpus":[0,2,3]})").request.gpus,
            (GpuSelection{2, 0, 3}));
  EXPECT_EQ(parse_kill_api_request(R"({"gpu":0,"timeout":2.5})").timeout_s,
            2.5);
  EXPECT_EQ(parse_kill_api_request(R"({"pids":[7],"signal":"sigterm"})").signal,
            SIGTERM);
  EXPECT_EQ(parse_kill_api_request(R"({"pids":[7],"signal":9})").signal,
            SIGKILL);
}

TEST(KillApiRequest, WritesWhatItReads) {
  KillApiRequest r;
  r.request.pids = {1, 99};
  r.request.gpus = {3, 1};
  r.request.user = "bob";
  r.signal = SIGKILL;
  r.timeout_s = 4;
  r.force = true;
  r.plan_id = "abc";
  r.stream = true;
  auto back = parse_kill_api_request(kill_api_request_json(r));
  EXPECT_EQ(back.request.pids, r.request.pids);
  EXPECT_EQ(back.request.gpus, (GpuSelection{3, 1}));
  EXPECT_EQ(back.request.user, "bob");
  EXPECT_EQ(back.signal, SIGKILL);
  EXPECT_DOUBLE_EQ(back.timeout_s, 4);
  EXPECT_TRUE(back.force);
  EXPECT_FALSE(back.dry_run);
  EXPECT_EQ(back.plan_id, "abc");
  EXPECT_TRUE(back.stream);
}

TEST(KillApiRequest, EachWrongBodyIsRefusedWithItsReason) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "not JSON"},
      {"{\"pids\":[1]", "not JSON"},
      {"[1,2]", "not a JSON object"},
      {"\"pids\"", "not a JSON object"},
      {"{}", "name the processes"},
      {R"({"pids":[]})", "name the processes"},
      {R"({"pids":"4242"})", "'pids' must be a list"},
      {R"({"pids":[0]})", "each pid must be an integer 1..4194304"},
      {R"({"pids":[-1]})", "each pid must be an integer"},
      {R"({"pids":[1.5]})", "each pid must be an integer"},
      {R"({"pids":[4194305]})", "each pid must be an integer"},
      {R"({"pids":["1"]})", "each pid must be an integer"},
      {R"({"gpu":1024})", "'gpu' must be an integer 0..1023"},
      {R"({"gpu":true})", "'gpu' must be an integer"},
      {R"({"gpus":1})", "'gpus' must be a list of GPU indices"},
      {R"({"gpus":[]})", "name the processes"},
      {R"({"gpus":[0,-1]})", "each GPU must be an integer 0..1023"},
      {R"({"pids":[1],"user":7})", "'user' must be a string"},
      {R"({"pids":[1],"user":"a\nb"})", "'user' has a control character"},
      {R"({"pids":[1],"tree":"yes"})", "'tree' must be true or false"},
      {R"({"pids":[1],"dry_run":1})", "'dry_run' must be true or false"},
      {R"({"pids":[1],"signal":"HUP"})",
       "'signal' must be \"TERM\" or \"KILL\""},
      {R"({"pids":[1],"signal":15.5})", "'signal' must be"},
      {R"({"pids":[1],"timeout":61})",
       "'timeout' must be seconds or a duration"},
      {R"({"pids":[1],"timeout":"2h"})", "from 0 to 60s"},
      {R"({"pids":[1],"timeout":-1})", "'timeout' must be"},
      {R"({"pids":[1],"timeout":"soon"})", "'timeout' must be"},
      {R"({"pids":[1],"plan_id":5})", "'plan_id' must be a string"},
      {R"({"pids":[1],"pid":[2]})", "unknown key 'pid' (known: pids, gpu"},
  };
  for (const auto& [body, why] : cases)
    EXPECT_NE(kill_refusal(body).find(why), std::string::npos)
        << body << " -> " << kill_refusal(body);
  std::string many = "{\"pids\":[";
  for (int i = 1; i <= 257; ++i) many += (i > 1 ? "," : "") + std::to_string(i);
  many += "]}";
  EXPECT_NE(kill_refusal(many).find("at most 256"), std::string::npos);
}

KillTarget target(uint32_t pid, uint64_t start, std::string cmd) {
  KillTarget t;
  t.proc.pid = pid;
  t.proc.ppid = 1;
  t.proc.uid = 1000;
  t.proc.user = "alice";
  t.proc.state = 'S';
  t.proc.comm = "python3";
  t.proc.cmdline = std::move(cmd);
  t.proc.starttime = start;
  t.role = "GPU process on GPU 0";
  t.gpus = {0};
  return t;
}

TEST(KillPlanId, SameProcessesSameIdAReusedPidAnother) {
  KillPlan a, b;
  a.targets = {target(10, 100, "x"), target(20, 200, "y")};
  b.targets = {target(20, 200, "y"), target(10, 100, "x")};
  EXPECT_EQ(kill_plan_id(a), kill_plan_id(b));
  EXPECT_EQ(kill_plan_id(a).size(), 16u);
  b.targets[0].proc.starttime = 201;  // pid 20 now names another process
  EXPECT_NE(kill_plan_id(a), kill_plan_id(b));
  b.targets.pop_back();
  EXPECT_NE(kill_plan_id(a), kill_plan_id(b));
  EXPECT_EQ(kill_plan_id(KillPlan{}), "");
}

TEST(KillApiReply, ReadsBackWhatWasWritten) {
  KillApiReply r;
  r.signal = SIGTERM;
  r.timeout_s = 12;
  r.force = true;
  r.plan.targets = {target(4242, 777, "python3 train.py --lr 3e-4")};
  r.plan.zombies = {target(4300, 778, "")};
  r.plan.zombies[0].proc.state = 'Z';
  r.plan.refusals = {{1, "PID 1 (init) is never signalled"}};
  r.plan.notes = {"pid 9 belongs to bob, not alice: left alone"};
  r.plan.not_found = {31337};
  r.plan_id = kill_plan_id(r.plan);
  r.gpu_memory = {{4242, 8ull << 30}};
  r.refused_commands = {{1, "/sbin/init"}};
  r.steps = {{false, 4242, SIGTERM, "", 0, 0},
             {true, 0, 0, "", 1, 12},
             {false, 4242, SIGKILL, "it has already exited", 0, 0}};
  KillOutcome o;
  o.result = KillResult::kNotReleased;
  o.memory = {{0, 9ull << 30, std::nullopt}};
  HeldMemory h;
  h.pid = 4300;
  h.gpu = 0;
  h.next = "reset GPU 0";
  h.gpu_users = {4242};
  AccountedProcess ap;
  ap.pid = 4300;
  ap.status = HolderStatus::kMissing;
  ap.used_bytes = 1ull << 30;
  ap.explanation = "no process has this pid";
  h.account.processes = {ap};
  OtherHolder other;
  other.proc.pid = 5000;
  other.proc.user = "bob";
  other.proc.state = 'D';
  other.proc.cmdline = "nvidia-smi -l";
  h.account.other_holders = {other};
  h.unlisted_bytes = 6ull << 30;
  o.not_released = {h};
  r.outcome = o;
  r.exit_code = kKillExitNotReleased;
  r.message = "GPU memory NOT released.";

  const KillApiReply back = parse_kill_api_reply(kill_api_reply_json(r));
  EXPECT_EQ(back.timeout_s, 12);
  EXPECT_TRUE(back.force);
  EXPECT_EQ(back.plan_id, r.plan_id);
  ASSERT_EQ(back.plan.targets.size(), 1u);
  const KillTarget& t = back.plan.targets[0];
  EXPECT_EQ(t.proc.pid, 4242u);
  EXPECT_EQ(t.proc.starttime, 777u);
  EXPECT_EQ(t.proc.user, "alice");
  EXPECT_EQ(t.proc.uid, 1000u);
  EXPECT_EQ(t.proc.state, 'S');
  EXPECT_EQ(t.proc.command(), "python3 train.py --lr 3e-4");
  EXPECT_EQ(t.role, "GPU process on GPU 0");
  EXPECT_EQ(t.gpus, std::vector<int>{0});
  EXPECT_EQ(kill_plan_id(back.plan), r.plan_id);
  ASSERT_EQ(back.plan.zombies.size(), 1u);
  EXPECT_EQ(back.plan.zombies[0].proc.command(), "[python3]");
  ASSERT_EQ(back.plan.refusals.size(), 1u);
  EXPECT_EQ(back.plan.refusals[0].reason, "PID 1 (init) is never signalled");
  EXPECT_EQ(back.refused_commands.at(1), "/sbin/init");
  EXPECT_EQ(back.plan.notes, r.plan.notes);
  EXPECT_EQ(back.plan.not_found, std::vector<uint32_t>{31337});
  EXPECT_EQ(back.gpu_memory.at(4242), 8ull << 30);
  ASSERT_EQ(back.steps.size(), 3u);
  EXPECT_EQ(back.steps[0].sig, SIGTERM);
  EXPECT_TRUE(back.steps[1].escalation);
  EXPECT_EQ(back.steps[1].alive, 1u);
  EXPECT_EQ(back.steps[2].sig, SIGKILL);
  EXPECT_EQ(back.steps[2].error, "it has already exited");
  ASSERT_TRUE(back.outcome);
  EXPECT_EQ(back.outcome->result, KillResult::kNotReleased);
  EXPECT_EQ(back.outcome->exit_code(), kKillExitNotReleased);
  ASSERT_EQ(back.outcome->memory.size(), 1u);
  EXPECT_EQ(back.outcome->memory[0].before, 9ull << 30);
  EXPECT_FALSE(back.outcome->memory[0].after);
  ASSERT_EQ(back.outcome->not_released.size(), 1u);
  const HeldMemory& bh = back.outcome->not_released[0];
  EXPECT_EQ(bh.pid, 4300u);
  EXPECT_EQ(bh.next, "reset GPU 0");
  EXPECT_EQ(bh.gpu_users, std::vector<uint32_t>{4242});
  EXPECT_EQ(bh.unlisted_bytes, 6ull << 30);
  ASSERT_EQ(bh.account.processes.size(), 1u);
  EXPECT_EQ(bh.account.processes[0].status, HolderStatus::kMissing);
  EXPECT_EQ(bh.account.processes[0].used_bytes, 1ull << 30);
  ASSERT_EQ(bh.account.other_holders.size(), 1u);
  EXPECT_EQ(bh.account.other_holders[0].proc.command(), "nvidia-smi -l");
  EXPECT_TRUE(bh.account.other_holders[0].proc.uninterruptible());
  EXPECT_EQ(back.exit_code, kKillExitNotReleased);
  EXPECT_EQ(back.message, "GPU memory NOT released.");
}

TEST(KillApiReply, HostileRepliesAreRefusedOrBounded) {
  const char* bad[] = {
      "",
      "[]",
      "{}",
      R"({"signal":"SIGTERM","timeout_s":10})",
      R"({"signal":"SIGWHAT","timeout_s":10,"plan":{},"exit_code":0})",
      R"({"signal":"SIGTERM","timeout_s":1e9,"plan":{},"exit_code":0})",
      R"({"signal":"SIGTERM","timeout_s":10,"plan":{},"exit_code":99})",
      R"({"signal":"SIGTERM","timeout_s":10,"plan":{"targets":[{"pid":-4}]},"exit_code":0})",
      R"({"signal":"SIGTERM","timeout_s":10,"plan":{"targets":[7]},"exit_code":0})",
      R"({"signal":"SIGTERM","timeout_s":10,"plan":{"targets":[{"pid":7,"gpus":[5000]}]},"exit_code":0})",
      R"({"signal":"SIGTERM","timeout_s":10,"plan":{},"exit_code":0,"outcome":{"result":"gone"}})",
  };
  for (const char* body : bad)
    EXPECT_THROW(parse_kill_api_reply(body), std::runtime_error) << body;
  // A long text is cut, not kept whole.
  nlohmann::json j = {{"signal", "SIGTERM"},
                      {"timeout_s", 10},
                      {"plan", {{"notes", {std::string(100000, 'x')}}}},
                      {"exit_code", 0},
                      {"message", std::string(100000, 'y')}};
  auto r = parse_kill_api_reply(j.dump());
  EXPECT_LE(r.plan.notes.at(0).size(), 1024u);
  EXPECT_LE(r.message.size(), 1024u);
}

TEST(KillApiStream, StepLinesThenTheReplyLine) {
  const KillStep term{false, 4242, SIGTERM, "", 0, 0};
  const KillStep wait{true, 0, 0, "", 1, 12};
  const std::string a = kill_api_step_line(term), b = kill_api_step_line(wait);
  ASSERT_EQ(a.back(), '\n');
  EXPECT_EQ(a.find('\n'), a.size() - 1) << "one line each";
  auto back = parse_kill_api_stream_line(a.substr(0, a.size() - 1));
  ASSERT_TRUE(back.step);
  EXPECT_FALSE(back.reply);
  EXPECT_EQ(back.step->pid, 4242u);
  EXPECT_EQ(back.step->sig, SIGTERM);
  back = parse_kill_api_stream_line(b.substr(0, b.size() - 1));
  ASSERT_TRUE(back.step);
  EXPECT_TRUE(back.step->escalation);
  EXPECT_EQ(back.step->alive, 1u);
  EXPECT_DOUBLE_EQ(back.step->timeout_s, 12);

  KillApiReply r;
  r.steps = {term, wait};
  r.message = "GPU memory released.";
  r.outcome = KillOutcome{};
  const std::string last = kill_api_reply_line(r);
  EXPECT_EQ(last.find('\n'), last.size() - 1);
  back = parse_kill_api_stream_line(last.substr(0, last.size() - 1));
  ASSERT_TRUE(back.reply);
  EXPECT_FALSE(back.step);
  EXPECT_EQ(back.reply->message, "GPU memory released.");
  EXPECT_EQ(back.reply->steps.size(), 2u);
  EXPECT_EQ(kill_api_reply_json(*back.reply), kill_api_reply_json(r));

  for (const char* bad :
       {"", "[]", "{}", R"({"step":1})", R"({"reply":[]})",
        R"({"step":{"pid":1,"signal":"SIGTERM"},"reply":{}})",
        R"({"other":{}})", R"({"step":{"pid":1,"signal":"SIGNOPE"}})"}) {
    EXPECT_THROW(parse_kill_api_stream_line(bad), std::runtime_error) << bad;
  }
}

TEST(KillAuditLine, NamesTheRemoteUserAndAddress) {
  ProcEntry p;
  p.pid = 4242;
  p.user = "alice";
  p.cmdline = "python3 train.py\x1b[2J";
  Requester local{0, "root", "/dev/pts/3", ""};
  EXPECT_EQ(kill_audit_line(SIGTERM, p, local),
            "kill: sent SIGTERM to pid 4242 (python3 train.py\\e[2J, user "
            "alice) as requested by uid 0 (root) on tty /dev/pts/3");
  Requester remote{0, "root", "none", "remote user ops from 10.0.0.5"};
  EXPECT_EQ(kill_audit_line(SIGKILL, p, remote),
            "kill: sent SIGKILL to pid 4242 (python3 train.py\\e[2J, user "
            "alice) as requested by remote user ops from 10.0.0.5 through "
            "gpudoctor serve (uid 0, root)");
}

}  // namespace
}  // namespace gd::api
