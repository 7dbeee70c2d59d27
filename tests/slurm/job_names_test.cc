#include "slurm/job_names.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>

namespace gd::slurm {
namespace {

using namespace std::chrono_literals;

// A fake scontrol: a shell script in a fresh temporary folder.
class FakeScontrol : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gd-scontrol-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }
  std::string script(const std::string& body) {
    std::string path = dir_ + "/scontrol";
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    ::chmod(path.c_str(), 0755);
    return path;
  }
  std::string dir_;
};

const char* kJobLine =
    "echo 'JobId=1234 JobName=train llm UserId=alice(1000) "
    "GroupId=alice(1000) JobState=RUNNING StartTime=2026-12-02T05:00:01 "
    "Partition=gpu-a NodeList=n1'";

TEST_F(FakeScontrol, AsksOnceThenAnswersFromTheCache) {
  std::string path = script(
      std::string("[ \"$1 $2 $3 $4\" = 'show job -o 1234' ] && ") + kJobLine);
  JobNames names(path);
  EXPECT_FALSE(names.lookup("1234"));  // queued, not waited for
  names.wait({"1234"}, std::chrono::steady_clock::now() + 20s);
  auto j = names.lookup("1234");
  ASSERT_TRUE(j);
  EXPECT_EQ(j->name, "train llm");
  EXPECT_EQ(j->user, "alice");
  EXPECT_EQ(j->partition, "gpu-a");
  names.lookup("1234");
  EXPECT_EQ(names.calls(), 1u);
}

TEST_F(FakeScontrol, SleepingScontrolIsKilledAtTheDeadline) {
  std::string pidfile = dir_ + "/pid";
  std::string path =
      script("echo $$ > " + pidfile + "; sleep 600; " + kJobLine);
  JobNames names(path, 200ms);
  names.lookup("1234");
  names.lookup("1235");
  names.wait({"1234", "1235"}, std::chrono::steady_clock::now() + 20s);
  // The script and its sleep are gone (the whole group was killed).
  std::ifstream in(pidfile);
  pid_t pid = 0;
  in >> pid;
  ASSERT_GT(pid, 0);
  EXPECT_NE(::kill(pid, 0), 0);
  EXPECT_FALSE(names.lookup("1234"));
  EXPECT_FALSE(names.lookup("1235"));
  // After one timeout the worker backs off: 1235 was not asked.
  EXPECT_EQ(names.calls(), 1u);
}

TEST_F(FakeScontrol, HugeGarbageIsCutAndUnknown) {
  std::string path = script("yes 'JobId=1234 JobName=' | head -c 10000000");
  std::string why;
  EXPECT_FALSE(ask_scontrol(path, "1234", 20s, &why));
  EXPECT_FALSE(why.empty());
}

TEST_F(FakeScontrol, AbsentScontrolIsUnknown) {
  std::string why;
  EXPECT_FALSE(ask_scontrol(dir_ + "/none", "1234", 1s, &why));
  EXPECT_NE(why.find("cannot run"), std::string::npos) << why;
  JobNames names(dir_ + "/none");
  names.lookup("1234");
  names.wait({"1234"}, std::chrono::steady_clock::now() + 20s);
  EXPECT_FALSE(names.lookup("1234"));
}

TEST_F(FakeScontrol, FailingScontrolAndBadIds) {
  std::string path = script(
      "echo 'slurm_load_jobs error: Invalid job id "
      "specified' >&2; exit 1");
  std::string why;
  EXPECT_FALSE(ask_scontrol(path, "1234", 20s, &why));
  EXPECT_NE(why.find("exited with 1"), std::string::npos) << why;
  EXPECT_FALSE(ask_scontrol(path, "12;rm", 20s, &why));
  JobNames names(path);
  EXPECT_FALSE(names.lookup("../x"));
  EXPECT_EQ(names.calls(), 0u);
}

TEST(ScontrolPath, FromEnvironment) {
  ::setenv("GPUDOCTOR_SCONTROL", "/opt/slurm/bin/scontrol", 1);
  EXPECT_EQ(scontrol_path_from_env(), "/opt/slurm/bin/scontrol");
  ::setenv("GPUDOCTOR_SCONTROL", "", 1);
  EXPECT_EQ(scontrol_path_from_env(), "scontrol");
  ::unsetenv("GPUDOCTOR_SCONTROL");
  EXPECT_EQ(scontrol_path_from_env(), "scontrol");
}

}  // namespace
}  // namespace gd::slurm
