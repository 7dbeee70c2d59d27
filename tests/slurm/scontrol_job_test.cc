#include "slurm/scontrol_job.h"

#include <gtest/gtest.h>

#include <string>

namespace gd::slurm {
namespace {

// Slurm 22.05's one-liner, as `scontrol show job -o 1234` prints it.
const std::string kLine =
    "JobId=1234 JobName=train-llm UserId=alice(1000) GroupId=alice(1000) "
    "MCS_label=N/A Priority=4294901758 Nice=0 Account=(null) QOS=(null) "
    "JobState=RUNNING Reason=None Dependency=(null) Requeue=1 Restarts=0 "
    "BatchFlag=1 Reboot=0 ExitCode=0:0 RunTime=00:00:05 TimeLimit=UNLIMITED "
    "TimeMin=N/A SubmitTime=2026-12-02T05:00:00 "
    "EligibleTime=2026-12-02T05:00:00 AccrueTime=Unknown "
    "StartTime=2026-12-02T05:00:01 EndTime=Unknown Deadline=N/A "
    "SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-02T05:00:01 "
    "Scheduler=Main Partition=gpu-a AllocNode:Sid=node1:4242 "
    "ReqNodeList=(null) ExcNodeList=(null) NodeList=node1 BatchHost=node1 "
    "NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:* "
    "TRES=cpu=1,node=1,billing=1 Command=/home/alice/run it.sh "
    "WorkDir=/home/alice StdErr=/home/alice/slurm-1234.out StdIn=/dev/null "
    "StdOut=/home/alice/slurm-1234.out Power=\n";

TEST(ScontrolJob, ReadsNameUserPartitionStart) {
  auto j = parse_scontrol_job(kLine, "1234");
  ASSERT_TRUE(j);
  EXPECT_EQ(j->job.id, "1234");
  EXPECT_EQ(j->job.name, "train-llm");
  EXPECT_EQ(j->job.user, "alice");
  EXPECT_EQ(j->job.partition, "gpu-a");
  EXPECT_EQ(j->state, "RUNNING");
  EXPECT_EQ(j->start_time, parse_slurm_time("2026-12-02T05:00:01"));
  EXPECT_TRUE(j->start_time);
}

TEST(ScontrolJob, NameWithSpacesAndKeyLookalikes) {
  std::string line = kLine;
  line.replace(line.find("train-llm"), 9,
               "my job Partition=evil StartTime=x UserId=bob");
  auto j = parse_scontrol_job(line, "1234");
  ASSERT_TRUE(j);
  EXPECT_EQ(j->job.name, "my job Partition=evil StartTime=x UserId=bob");
  EXPECT_EQ(j->job.user, "alice");
  EXPECT_EQ(j->job.partition, "gpu-a");
}

TEST(ScontrolJob, OtherJobsLinesAndGarbage) {
  EXPECT_FALSE(parse_scontrol_job(kLine, "123"));
  EXPECT_FALSE(parse_scontrol_job(kLine, "12345"));
  EXPECT_FALSE(parse_scontrol_job(kLine, "x"));
  EXPECT_FALSE(parse_scontrol_job("", "1234"));
  EXPECT_FALSE(
      parse_scontrol_job("slurm_load_jobs error: Invalid job id "
                         "specified\n",
                         "1234"));
  EXPECT_FALSE(parse_scontrol_job("JobId=1234 JobName=x\n", "1234"));
  EXPECT_FALSE(parse_scontrol_job(
      "JobId=1234 JobName=x UserId=alice(10x0) GroupId=a(1)\n", "1234"));
  EXPECT_FALSE(parse_scontrol_job(std::string(100000, 'J'), "1234"));
  // An array job's lines: the one asked for is found among them.
  auto j = parse_scontrol_job(
      "JobId=1233 JobName=a UserId=u(1) GroupId=g(1) Partition=p\n" + kLine,
      "1234");
  ASSERT_TRUE(j);
  EXPECT_EQ(j->job.name, "train-llm");
}

TEST(ScontrolJob, CapsStrings) {
  std::string line = kLine;
  line.replace(line.find("train-llm"), 9, std::string(5000, 'n'));
  auto j = parse_scontrol_job(line, "1234");
  ASSERT_TRUE(j);
  EXPECT_LE(j->job.name.size(), kSlurmJobNameMax + 40);
  EXPECT_LT(j->job.name.size(), 5000u);
}

TEST(ScontrolJob, Times) {
  EXPECT_FALSE(parse_slurm_time("Unknown"));
  EXPECT_FALSE(parse_slurm_time("2026-13-02T05:00:00"));
  EXPECT_FALSE(parse_slurm_time("2026-12-02 05:00:00"));
  EXPECT_FALSE(parse_slurm_time("2026-12-02T05:00:0x"));
  auto a = parse_slurm_time("2026-12-02T05:00:00");
  auto b = parse_slurm_time("2026-12-02T05:00:10");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*b - *a, 10);
}

}  // namespace
}  // namespace gd::slurm
