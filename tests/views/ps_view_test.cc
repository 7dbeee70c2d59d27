#include "views/ps_view.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/terminal_text.h"

namespace gd {
namespace {

ProcessSample proc(uint32_t pid, uint32_t ppid, std::string state,
                   std::string cmd) {
  ProcessSample p;
  p.pid = pid;
  p.ppid = ppid;
  p.state = std::move(state);
  p.cmdline = std::move(cmd);
  p.name = "python";
  p.user = "alice";
  p.cpu_pct = 99.0;
  return p;
}

Sample training_sample() {
  Sample s;
  s.t = 1000;
  GpuSample g;
  g.index = 0;
  g.processes = std::vector<GpuProcess>{{4242, 64ull << 30, "compute"},
                                        {5555, 2ull << 30, "compute"},
                                        {6666, 1ull << 30, "compute"}};
  s.gpus.push_back(g);
  auto trainer = proc(4242, 4100, "R", "python train.py --bs 256");
  trainer.start_time = 1000 - 7380;
  trainer.libs = {"libcudart.so.12.1.105", "libnccl.so.2.18.3"};
  trainer.cgroup =
      "/kubepods/burstable/pod1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d/"
      "3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d";
  s.processes.push_back(trainer);
  s.processes.push_back(proc(4300, 4242, "R", "python train.py --bs 256"));
  s.processes.push_back(proc(4301, 4242, "S", "python train.py --bs 256"));
  s.processes.push_back(proc(4400, 4300, "S", "python nested"));
  s.processes.push_back(proc(5555, 1, "Z", ""));
  ProcessSample gone;
  gone.pid = 6666;
  gone.state = "missing";
  s.processes.push_back(gone);
  return s;
}

TEST(PsView, FoldsWorkersUnderTheirGpuProcess) {
  Sample s = training_sample();
  auto rows = build_ps_rows(s);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].gpu_process.pid, 4242u);
  ASSERT_EQ(rows[0].children.size(), 3u);
  EXPECT_EQ(rows[0].children[0]->pid, 4300u);
  EXPECT_EQ(rows[0].child_depth[0], 1);
  EXPECT_EQ(rows[0].children[1]->pid, 4400u);  // grandchild right after
  EXPECT_EQ(rows[0].child_depth[1], 2);
  EXPECT_EQ(rows[0].children[2]->pid, 4301u);
}

TEST(PsView, ZombiesAndMissingOwnersAreFlaggedLoudly) {
  Sample s = training_sample();
  auto rows = build_ps_rows(s);
  EXPECT_TRUE(rows[1].zombie());
  EXPECT_TRUE(rows[2].missing());
  std::string out = render_ps(s, rows);
  EXPECT_NE(out.find("ZOMBIE: memory is freed when parent 1 reaps it"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("NOT IN /proc"), std::string::npos) << out;
  EXPECT_NE(out.find("2 GPU process(es) hold memory without a live owner"),
            std::string::npos)
      << out;
}

TEST(PsView, ShowsMemoryElapsedContainerAndCudaRuntime) {
  Sample s = training_sample();
  std::string out = render_ps(s, build_ps_rows(s));
  EXPECT_NE(out.find("64.0 GiB"), std::string::npos) << out;
  EXPECT_NE(out.find("2h03m"), std::string::npos) << out;
  EXPECT_NE(out.find("k8s-pod:1a2b3c4d-5e6"), std::string::npos) << out;
  EXPECT_NE(out.find(" 12.1 "), std::string::npos) << out;
  EXPECT_NE(out.find("python train.py --bs 256"), std::string::npos) << out;
}

TEST(PsView, JsonHasEveryRowWithChildren) {
  Sample s = training_sample();
  auto j = nlohmann::json::parse(ps_to_json(s, build_ps_rows(s)));
  ASSERT_EQ(j["processes"].size(), 3u);
  EXPECT_EQ(j["processes"][0]["pid"], 4242);
  EXPECT_EQ(j["processes"][0]["used_bytes"], 64ull << 30);
  EXPECT_EQ(j["processes"][0]["cuda_runtime"], "12.1");
  EXPECT_EQ(j["processes"][0]["children"].size(), 3u);
  EXPECT_EQ(j["processes"][1]["state"], "Z");
  EXPECT_EQ(j["processes"][2]["state"], "missing");
}

// PyTorch from pip maps its own hashed copy of the runtime; ps named no CUDA
// version for it.
TEST(PsView, NamesTheCudaRuntimeOfPipInstalledPytorch) {
  Sample s = training_sample();
  s.processes[0].libs = {"libcudart-d0da41ae.so.11.0", "libnccl.so.2.18.3"};
  auto rows = build_ps_rows(s);
  std::string out = render_ps(s, rows);
  std::string first_row = out.substr(out.find('\n') + 1);
  first_row = first_row.substr(0, first_row.find('\n'));
  EXPECT_NE(first_row.find(" 11.0 "), std::string::npos) << out;
  auto j = nlohmann::json::parse(ps_to_json(s, rows));
  EXPECT_EQ(j["processes"][0]["cuda_runtime"], "11.0");
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

// Fitted to 80 columns: no line longer, the columns empty on every row
// (MIG, SM%, MEM%) left out, the long command cut with the mark, the notes
// on their own lines; --wide shows every column and the whole command.
TEST(PsView, FitsTheWidthLeavingEmptyColumnsOut) {
  Sample s = training_sample();
  const std::string long_cmd =
      "python train.py --bs 256 --lr 3e-4 --epochs 90 --data "
      "/datasets/imagenet/train --output /checkpoints/run-2024-11-22 --amp";
  s.processes[0].cmdline = long_cmd;
  auto rows = build_ps_rows(s);
  const std::string out = render_ps(s, rows, {}, PsFit{80, false});
  for (const auto& l : lines_of(out))
    EXPECT_LE(terminal_width(terminal_safe(l)), 80u) << l;
  const std::string header = lines_of(out)[0];
  EXPECT_EQ(header.find("MIG"), std::string::npos) << header;
  EXPECT_EQ(header.find("SM%"), std::string::npos) << header;
  EXPECT_NE(header.find("COMMAND"), std::string::npos) << header;
  EXPECT_NE(out.find("python train.py --bs 256"), std::string::npos) << out;
  EXPECT_EQ(out.find("--amp"), std::string::npos) << out;
  EXPECT_NE(out.find("~\n"), std::string::npos) << out;
  EXPECT_NE(out.find("\n    <-- ZOMBIE: memory is freed when parent 1"),
            std::string::npos)
      << out;
  const std::string wide = render_ps(s, rows, {}, PsFit{80, true});
  EXPECT_NE(wide.find(long_cmd), std::string::npos) << wide;
  EXPECT_NE(lines_of(wide)[0].find("MIG"), std::string::npos) << wide;
}

}  // namespace
}  // namespace gd
