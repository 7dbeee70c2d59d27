// GET /api/v1/processes: what serve writes reads back field for field; what
// is not a process list is refused with a reason. (That the bytes are those
// serve sent before this writer: tests/serve/processes_bytes_test.cc.)
#include "api/processes_json.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "common/bounded_json.h"

namespace gd::api {
namespace {

ProcessesReply a_job_and_a_holder() {
  ProcessesReply r;
  r.t = 1732795000.5;
  ProcessRow rank;
  rank.gpu = 2;
  rank.pid = 5100;
  rank.used_bytes = 40ull << 30;
  rank.type = "compute";
  rank.in_proc = true;
  rank.ppid = 5000;
  rank.user = "bob";
  rank.name = "python";
  rank.cmdline = "python train.py --lr 3e-4";
  rank.state = "R";
  rank.cpu_pct = 99.5;
  rank.threads = 48;
  rank.rss_bytes = 12ull << 30;
  rank.start_time = 1732790000;
  rank.cgroup = "/slurm/job_42";
  rank.pod = ProcessPod{"5f0c1d2e-1111-4222-8333-444455556666", "ml", "train-0",
                        std::nullopt, true};
  rank.job = {5000, "torchrun", 2};
  rank.children = {{5101, "pt_data_worker", "S", 3.0},
                   {5102, "pt_data_worker", "Z", std::nullopt}};
  r.processes.push_back(rank);
  ProcessRow gone;  // NVML lists it, /proc does not
  gone.gpu = 3;
  gone.pid = 5200;
  gone.type = "compute+graphics";
  gone.state = "unknown";
  gone.job = {5200, "", 1};
  r.processes.push_back(gone);
  OrphanHolderEntry h;
  h.gpu = 3;
  h.pid = 5300;
  h.user = "bob";
  h.name = "python";
  h.cmdline = "python -c 'fork()'";
  h.dead_owners = {5200};
  h.evidence = {"holds nvidia3 (GPU 3) and nvidia-uvm", "re-parented to pid 1"};
  h.action = "gpudoctor kill 5300";
  r.orphan_holders = std::vector<OrphanHolderEntry>{
      h, OrphanHolderEntry{3, 5301, {}, {}, {}, {}, {}, ""}};
  return r;
}

TEST(ProcessesJson, ReadsBackWhatServeWrote) {
  const std::string body = processes_json(a_job_and_a_holder());
  const ProcessesReply r = parse_processes_json(body);
  EXPECT_EQ(r.t, 1732795000.5);
  ASSERT_EQ(r.processes.size(), 2u);
  const ProcessRow& p = r.processes[0];
  EXPECT_TRUE(p.in_proc);
  EXPECT_EQ(p.gpu, 2);
  EXPECT_EQ(p.pid, 5100u);
  EXPECT_EQ(p.used_bytes, 40ull << 30);
  EXPECT_EQ(p.ppid, 5000u);
  EXPECT_EQ(p.user, "bob");
  EXPECT_EQ(p.cmdline, "python train.py --lr 3e-4");
  EXPECT_EQ(p.cpu_pct, 99.5);
  EXPECT_EQ(p.threads, 48);
  EXPECT_EQ(p.rss_bytes, 12ull << 30);
  EXPECT_EQ(p.cgroup, "/slurm/job_42");
  EXPECT_EQ(p.job.pid, 5000u);
  EXPECT_EQ(p.job.name, "torchrun");
  EXPECT_EQ(p.job.ranks, 2u);
  ASSERT_TRUE(p.pod);
  EXPECT_EQ(p.pod, a_job_and_a_holder().processes[0].pod);
  EXPECT_FALSE(r.processes[1].pod);
  ASSERT_EQ(p.children.size(), 2u);
  EXPECT_EQ(p.children[1].state, "Z");
  EXPECT_FALSE(p.children[1].cpu_pct);
  EXPECT_FALSE(r.processes[1].in_proc);
  EXPECT_EQ(r.processes[1].state, "unknown");
  EXPECT_FALSE(r.processes[1].used_bytes);
  ASSERT_TRUE(r.orphan_holders);
  ASSERT_EQ(r.orphan_holders->size(), 2u);
  EXPECT_EQ((*r.orphan_holders)[0].dead_owners, std::vector<uint32_t>{5200});
  EXPECT_EQ((*r.orphan_holders)[0].evidence.size(), 2u);
  EXPECT_EQ((*r.orphan_holders)[0].cmdline, "python -c 'fork()'");
  EXPECT_FALSE((*r.orphan_holders)[1].user);
  EXPECT_EQ(processes_json(r), body);
}

// The keys in the order serve sent them before this writer (nlohmann's).
TEST(ProcessesJson, BytesAreAsBefore) {
  EXPECT_EQ(processes_json({}), R"({"processes":[],"t":null})");
  ProcessesReply r;
  r.t = 1;
  r.orphan_holders.emplace(1);
  r.processes.resize(2);
  r.processes[0].state = "unknown";
  r.processes[1].in_proc = true;
  EXPECT_EQ(
      processes_json(r),
      R"({"orphan_holders":[{"action":"","cmdline":null,"dead_owners":[],)"
      R"("evidence":[],"gpu":0,"name":null,"pid":0,"user":null}],)"
      R"("processes":[{"children":[],"gpu":0,"job":{"name":"","pid":0,)"
      R"("ranks":0},"pid":0,"state":"unknown","type":"","used_bytes":null},)"
      R"({"cgroup":null,"children":[],"cmdline":"","cpu_pct":null,"gpu":0,)"
      R"("job":{"name":"","pid":0,"ranks":0},"name":"","pid":0,"ppid":null,)"
      R"("rss_bytes":null,"start_time":null,"state":"","threads":null,)"
      R"("type":"","used_bytes":null,"user":""}],"t":1.0})");
}

std::string processes_refusal(const std::string& body) {
  try {
    parse_processes_json(body);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(ProcessesJson, RefusesWhatIsNotAProcessList) {
  EXPECT_EQ(processes_refusal("[]"),
            "processes: the reply is not a JSON object");
  EXPECT_EQ(processes_refusal(R"({"error":"no sample yet"})"),
            "processes: no 'processes' array");
  EXPECT_EQ(processes_refusal(R"({"processes":[1]})"),
            "processes: an item of 'processes' is not an object");
  EXPECT_EQ(processes_refusal(R"({"processes":[],"t":"now"})"),
            "processes: 't' is not a number");
  EXPECT_EQ(processes_refusal(R"({"processes":[{"name":"p","pod":"ml"}]})"),
            "processes: 'pod' is not an object");
  EXPECT_EQ(processes_refusal(
                R"({"processes":[{"name":"p","pod":{"deleted":"no"}}]})"),
            "processes: 'pod.deleted' is not a boolean");
  EXPECT_EQ(processes_refusal(R"({"processes":[{"gpu":1024}]})"),
            "processes: 'gpu' is not in range");
  EXPECT_EQ(processes_refusal(R"({"processes":[{"pid":-1}]})"),
            "processes: 'pid' is not in range");
  EXPECT_EQ(processes_refusal(R"({"processes":[{"pid":4194305}]})"),
            "processes: 'pid' is not in range");
  EXPECT_EQ(processes_refusal(R"({"processes":[{"used_bytes":1.5}]})"),
            "processes: 'used_bytes' is not a whole number");
  EXPECT_EQ(processes_refusal(R"({"processes":[{"name":"x","user":7}]})"),
            "processes: 'user' is not a string");
  EXPECT_EQ(processes_refusal(R"({"processes":[{"job":[]}]})"),
            "processes: 'job' is not an object");
  EXPECT_EQ(processes_refusal(R"({"processes":[{"children":{}}]})"),
            "processes: 'children' is not a list");
  EXPECT_EQ(
      processes_refusal(R"({"processes":[{"children":[{"cpu_pct":"x"}]}]})"),
      "processes: 'cpu_pct' is not a number");
  EXPECT_EQ(processes_refusal(R"({"processes":[],"orphan_holders":{}})"),
            "processes: 'orphan_holders' is not a list");
  EXPECT_EQ(processes_refusal(
                R"({"processes":[],"orphan_holders":[{"dead_owners":[-3]}]})"),
            "processes: a pid in 'dead_owners' is not 0..4194304");
  EXPECT_EQ(processes_refusal(
                R"({"processes":[],"orphan_holders":[{"evidence":[1]}]})"),
            "processes: an item of 'evidence' is not a string");
  EXPECT_THROW(
      parse_processes_json(R"({"processes":)" + std::string(100000, '[')),
      JsonTooDeep);
  const ProcessesReply long_text =
      parse_processes_json(R"({"processes":[{"name":"n","cmdline":")" +
                           std::string(100000, 'c') + R"("}]})");
  EXPECT_EQ(long_text.processes[0].cmdline.size(), 64u * 1024);
  EXPECT_TRUE(long_text.processes[0].in_proc);
}

}  // namespace
}  // namespace gd::api
