// gpudoctor_gpu_job_info: the Slurm job of each GPU on an info series of
// its own, bounded, labels escaped; no other series carries a job label.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "exporter/exporter.h"
#include "trace/trace_io.h"

namespace gd {
namespace {

struct JobScenario {
  TraceHeader header;
  Sample sample;
};

JobScenario slurm_scenario() {
  TraceReader reader(std::string(GD_TEST_DATA) + "/scenario_4gpu.jsonl");
  JobScenario s{reader.header(), {}};
  EXPECT_TRUE(reader.next(s.sample));
  // pids 4242, 4243 (GPUs 0, 1): job 1234; 5100 (GPU 2): job 78.
  for (ProcessSample& p : s.sample.processes) {
    if (p.pid == 4242 || p.pid == 4243) p.slurm_job_id = "1234";
    if (p.pid == 5100) p.slurm_job_id = "78";
  }
  s.sample.slurm_jobs = {{"1234", "train \"llm\"\n", "alice", "gpu-a"}};
  return s;
}

std::string page_of(const JobScenario& s) {
  MetricsInput in;
  in.header = &s.header;
  in.sample = &s.sample;
  for (const auto& g : s.sample.gpus)
    in.gpu_health.push_back({g.index, true, false, s.sample.t});
  in.now = s.sample.t;
  in.version = "9.9.9";
  return render_metrics(in);
}

TEST(SlurmJobInfo, OneInfoSeriesPerGpuAndJob) {
  const JobScenario s = slurm_scenario();
  const std::string page = page_of(s);
  const std::string uuid0 = s.header.gpus[0].uuid;
  EXPECT_NE(page.find("gpudoctor_gpu_job_info{Hostname="), std::string::npos);
  EXPECT_NE(page.find("gpu=\"0\",uuid=\"" + uuid0 +
                      "\",job_id=\"1234\",job_name=\"train \\\"llm\\\"\\n\","
                      "user=\"alice\",partition=\"gpu-a\"} 1\n"),
            std::string::npos)
      << page;
  // A job whose name is not known yet: the process's user, empty name.
  EXPECT_NE(page.find("gpu=\"2\","), std::string::npos);
  EXPECT_NE(
      page.find("job_id=\"78\",job_name=\"\",user=\"bob\",partition=\"\""),
      std::string::npos);
  size_t n = 0;
  for (size_t at = page.find("\ngpudoctor_gpu_job_info{");
       at != std::string::npos;
       at = page.find("\ngpudoctor_gpu_job_info{", at + 1))
    ++n;
  EXPECT_EQ(n, 3u);  // GPUs 0, 1 (job 1234) and 2 (job 78)
}

TEST(SlurmJobInfo, NoOtherSeriesCarriesAJobLabel) {
  const std::string page = page_of(slurm_scenario());
  std::istringstream lines(page);
  std::string line;
  size_t series = 0;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    ++series;
    if (line.starts_with("gpudoctor_gpu_job_info{")) continue;
    EXPECT_EQ(line.find("job_id="), std::string::npos) << line;
    EXPECT_EQ(line.find("job_name="), std::string::npos) << line;
    // The job's id as a label value, under any label name (a value such
    // as an energy counter may well contain the digits 1234).
    EXPECT_EQ(line.find("=\"1234\""), std::string::npos) << line;
  }
  EXPECT_GT(series, 50u);
}

TEST(SlurmJobInfo, BoundedPerGpu) {
  JobScenario s = slurm_scenario();
  // 40 jobs' processes on GPU 0.
  for (uint32_t i = 0; i < 40; ++i) {
    ProcessSample p;
    p.pid = 10000 + i;
    p.state = "S";
    p.user = "u";
    p.slurm_job_id = std::to_string(500 + i);
    s.sample.processes.push_back(p);
    GpuProcess gp;
    gp.pid = p.pid;
    s.sample.gpus[0].processes->push_back(gp);
  }
  const std::string page = page_of(s);
  std::istringstream lines(page);
  std::string line;
  size_t n = 0;
  while (std::getline(lines, line))
    if (line.starts_with("gpudoctor_gpu_job_info{") &&
        line.find(",gpu=\"0\",") != std::string::npos)
      ++n;
  EXPECT_EQ(n, 8u);
}

TEST(SlurmJobInfo, AbsentWithoutSlurmJobs) {
  TraceReader reader(std::string(GD_TEST_DATA) + "/scenario_4gpu.jsonl");
  JobScenario s{reader.header(), {}};
  ASSERT_TRUE(reader.next(s.sample));
  EXPECT_EQ(page_of(s).find("gpudoctor_gpu_job_info"), std::string::npos);
}

}  // namespace
}  // namespace gd
