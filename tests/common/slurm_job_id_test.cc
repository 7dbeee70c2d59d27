#include "common/slurm_job_id.h"

#include <gtest/gtest.h>

#include <string>

namespace gd {
namespace {

using std::string_literals::operator""s;

TEST(SlurmJobId, CgroupV1Path) {
  EXPECT_EQ(slurm_job_in_cgroup_path("/slurm/uid_1000/job_1234/step_0/task_0"),
            "1234");
  EXPECT_EQ(slurm_job_in_cgroup_path("/slurm/uid_0/job_77/step_batch"), "77");
  // The job's own cgroup (processes outside any step): after uid_U.
  EXPECT_EQ(slurm_job_in_cgroup_path("/slurm_node1/uid_1000/job_5"), "5");
}

TEST(SlurmJobId, CgroupV2Path) {
  EXPECT_EQ(slurm_job_in_cgroup_path(
                "/system.slice/slurmstepd.scope/job_1234/step_0/user/task_0"),
            "1234");
  EXPECT_EQ(slurm_job_in_cgroup_path(
                "/system.slice/node7_slurmstepd.scope/job_42/step_extern"),
            "42");
  EXPECT_EQ(slurm_job_in_cgroup_path("/system.slice/slurmstepd.scope/job_9"),
            "9");
  // Another root, a step below it.
  EXPECT_EQ(slurm_job_in_cgroup_path("/custom/job_31/step_interactive"), "31");
}

TEST(SlurmJobId, OuterJobWinsOverOneTheJobMadeInside) {
  // A delegated subtree: the job names a cgroup like another job's.
  EXPECT_EQ(slurm_job_in_cgroup_path("/system.slice/slurmstepd.scope/job_12/"
                                     "step_0/user/task_0/job_99/step_0"),
            "12");
}

TEST(SlurmJobId, HostilePaths) {
  EXPECT_EQ(slurm_job_in_cgroup_path(""), std::nullopt);
  EXPECT_EQ(slurm_job_in_cgroup_path("/"), std::nullopt);
  EXPECT_EQ(slurm_job_in_cgroup_path("job_"), std::nullopt);
  EXPECT_EQ(slurm_job_in_cgroup_path("/user.slice/job_12"), std::nullopt);
  EXPECT_EQ(slurm_job_in_cgroup_path("/user.slice/job_x/step_0"), std::nullopt);
  EXPECT_EQ(slurm_job_in_cgroup_path("/slurm/uid_1000/job_-1/step_0"),
            std::nullopt);
  EXPECT_EQ(slurm_job_in_cgroup_path("/slurm/uid_1000/job_12345678901/step_0"),
            std::nullopt);  // 11 digits
  EXPECT_EQ(slurm_job_in_cgroup_path("/slurm/uid_1000/job_12 /step_0"),
            std::nullopt);
  EXPECT_EQ(slurm_job_in_cgroup_path("/slurm/uid_x/job_12"), std::nullopt);
  EXPECT_EQ(slurm_job_in_cgroup_path("/a/job_12/step_"), std::nullopt);
  EXPECT_EQ(slurm_job_in_cgroup_path("/docker/abc"), std::nullopt);
  EXPECT_EQ(slurm_job_in_cgroup_path(std::string(100000, '/')), std::nullopt);
  std::string deep;
  for (int i = 0; i < 10000; ++i) deep += "/job_1";
  EXPECT_EQ(slurm_job_in_cgroup_path(deep), std::nullopt);
  EXPECT_EQ(slurm_job_in_cgroup_path("/slurm/uid_1/job_1\0/step_0"s),
            std::nullopt);
}

TEST(SlurmJobId, CgroupFileHybridLayout) {
  // cgroup v2 line first (a user slice), the job on v1 hierarchies.
  EXPECT_EQ(slurm_job_in_cgroup_file(
                "13:freezer:/slurm/uid_1000/job_1234/step_0/task_0\n"
                "12:devices:/slurm/uid_1000/job_1234/step_0/task_0\n"
                "1:name=systemd:/user.slice\n"
                "0::/user.slice/user-1000.slice/session-3.scope\n"),
            "1234");
  EXPECT_EQ(slurm_job_in_cgroup_file(
                "0::/system.slice/slurmstepd.scope/job_8/step_0/user/task_0\n"),
            "8");
  EXPECT_EQ(slurm_job_in_cgroup_file("0::/init.scope\n"), std::nullopt);
  EXPECT_EQ(slurm_job_in_cgroup_file("garbage\n::\n:\n\n"), std::nullopt);
  EXPECT_EQ(slurm_job_in_cgroup_file(""), std::nullopt);
}

TEST(SlurmJobId, Environ) {
  EXPECT_EQ(slurm_job_in_environ("PATH=/bin\0SLURM_JOB_ID=1234\0HOME=/\0"s),
            "1234");
  EXPECT_EQ(slurm_job_in_environ("SLURM_JOB_ID=77"s), "77");
  EXPECT_EQ(slurm_job_in_environ("SLURM_JOB_IDX=5\0SLURM_JOBID=6\0"s),
            std::nullopt);
  EXPECT_EQ(slurm_job_in_environ("XSLURM_JOB_ID=5\0"s), std::nullopt);
  EXPECT_EQ(slurm_job_in_environ("SLURM_JOB_ID=\0"s), std::nullopt);
  EXPECT_EQ(slurm_job_in_environ("SLURM_JOB_ID=12a\0SLURM_JOB_ID=5\0"s),
            std::nullopt);  // getenv finds the first
  EXPECT_EQ(slurm_job_in_environ("SLURM_JOB_ID=99999999999\0"s), std::nullopt);
  EXPECT_EQ(slurm_job_in_environ(""), std::nullopt);
  EXPECT_EQ(slurm_job_in_environ(std::string(100000, '\0')), std::nullopt);
}

}  // namespace
}  // namespace gd
