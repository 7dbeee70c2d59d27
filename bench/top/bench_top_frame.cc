// `top`'s frame: the rows, the layout and the ncurses drawing of one screen
// at 200x60 and 80x24, with 8 GPUs and ~500 processes (8 GPU jobs with 61
// workers each), folded and as a tree. The drawing goes to /dev/null through
// ncurses as it would to a terminal (terminfo xterm-256color). Goal: a
// 200x60 frame in under 1 ms. Also what keeping each second's sample in the
// findings' window costs (BM_WindowAdd).
#include <benchmark/benchmark.h>

#include <clocale>
#include <cstdio>

#include "model/process_tree.h"
#include "monitor/window_diagnosis.h"
#include "views/top/layout.h"
#include "views/top/terminal.h"

namespace {

using namespace gd;

constexpr uint64_t kGiB = 1ull << 30;

// `shift` changes every number of the frame (GPU values, each process's
// CPU and memory, the charts' newest point), as one second to the next does.
std::shared_ptr<monitor::Frame> busy_frame(int shift = 0) {
  TraceHeader h;
  h.host.hostname = "node07";
  h.host.mem_total_bytes = 1024 * kGiB;
  h.driver = DriverInfo{"550.54.15", "12.4", "12.550.54.15", "", ""};
  Sample s;
  s.t = 1.7e9;
  s.host.cpu_util_pct = 63;
  s.host.cpu_iowait_pct = 1.2;
  s.host.cpu_steal_pct = 0;
  s.host.load1 = 41;
  s.host.mem_available_bytes = 700 * kGiB;
  s.host.swap_used_bytes = 0;
  uint32_t pid = 10000;
  for (int i = 0; i < 8; ++i) {
    GpuInfo g;
    g.index = i;
    g.name = "NVIDIA H100 80GB HBM3";
    g.pci_bus_id = "00000000:1" + std::to_string(i) + ":00.0";
    g.memory_total_bytes = 80 * kGiB;
    g.power_limit_w = 700;
    g.temp_slowdown_c = 87;
    g.sm_clock_max_mhz = 1980;
    g.mem_clock_max_mhz = 2619;
    g.pcie_max_gen = 5;
    g.pcie_max_width = 16;
    h.gpus.push_back(g);
    GpuSample gs;
    gs.index = i;
    gs.util_pct = 90 - shift;
    gs.mem_used_bytes = 70 * kGiB;
    gs.temp_c = 70 + shift;
    gs.power_w = 600 + 7 * shift;
    gs.sm_clock_mhz = 1980;
    gs.mem_clock_mhz = 2619;
    gs.pcie_gen = 5;
    gs.pcie_width = 16;
    gs.pcie_tx_bytes_per_s = 1 << 30;
    gs.pcie_rx_bytes_per_s = 2 << 30;
    gs.clock_event_reasons = std::vector<std::string>{"sw_power_cap"};
    const uint32_t job = pid++;
    gs.processes = std::vector<GpuProcess>{
        {job, 68 * kGiB - static_cast<uint64_t>(shift) * (100 << 20),
         "compute"}};
    s.gpus.push_back(gs);
    auto proc = [&](uint32_t p, uint32_t parent) {
      ProcessSample ps;
      ps.pid = p;
      ps.ppid = parent;
      ps.user = "alice";
      ps.name = "python";
      ps.cmdline =
          "/opt/conda/bin/python -u train.py --config configs/llm.yaml "
          "--rank " +
          std::to_string(i);
      ps.state = "S";
      ps.cpu_pct = 12.5 + shift;
      ps.threads = 1;
      ps.rss_bytes = 2 * kGiB;
      ps.start_time = s.t - 7200;
      ps.cgroup =
          "/kubepods/burstable/pod1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d/"
          "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
      s.processes.push_back(ps);
    };
    proc(job, 1);
    for (int w = 0; w < 61; ++w) proc(pid++, job);
  }
  auto f = std::make_shared<monitor::Frame>();
  f->seq = 1;
  f->header = std::make_shared<const TraceHeader>(h);
  auto hist = std::make_shared<monitor::GpuHistory>(h);
  for (int i = 0; i < 300 + shift; ++i) {
    s.gpus[0].util_pct = (i * 7 + shift) % 100;
    hist->add(h, s);
  }
  s.gpus[0].util_pct = 90 - shift;
  f->history = hist;
  f->sample = std::make_shared<const Sample>(s);
  auto fs = std::make_shared<monitor::FindingsState>();
  fs->source = "diagnosis of the last 60 s";
  fs->findings.push_back({"power-capping",
                          "warning",
                          {0, 1, 2, 3},
                          {},
                          "GPUs 0-3 are held at their power limit",
                          "e",
                          "a",
                          s.t,
                          s.t});
  f->findings = fs;
  return f;
}

void BM_Frame(benchmark::State& state) {
  const int w = static_cast<int>(state.range(0));
  const int h = static_cast<int>(state.range(1));
  const bool tree = state.range(2) != 0;
  // Each iteration draws the other of two frames a second apart: every
  // line with a number on it changes, as on a real screen.
  static std::shared_ptr<monitor::Frame> frames[2] = {busy_frame(0),
                                                      busy_frame(1)};
  size_t k = 0;
  top::TopState st;
  st.tree = tree;
  std::map<int, std::pair<GpuSample, double>> last_good;
  std::FILE* out = std::fopen("/dev/null", "w");
  top::Terminal term(false, out, "xterm-256color", w, h);
  size_t rows_n = 0;
  for (auto _ : state) {
    const auto& frame = frames[k++ % 2];
    // As top does: the sample's process tree built once, for the rows and
    // every GPU panel's memory split.
    ProcessTree tree(*frame->sample);
    auto rows = top::build_rows(*frame->sample, st, &tree);
    top::settle_selection(st, rows, h / 2);
    top::LayoutInput in;
    in.frame = frame.get();
    in.tree = &tree;
    in.rows = &rows;
    in.state = &st;
    in.last_good = &last_good;
    in.now = frame->sample->t;
    top::Screen screen = top::layout(in, w, h);
    term.draw(screen);
    rows_n = rows.size();
  }
  state.counters["rows"] = static_cast<double>(rows_n);
  std::fclose(out);
}
// The two halves of a frame: the screen model alone, and ncurses alone
// (two alternating screens).
void BM_ModelOnly(benchmark::State& state) {
  static auto frame = busy_frame();
  top::TopState st;
  st.tree = state.range(0) != 0;
  std::map<int, std::pair<GpuSample, double>> last_good;
  for (auto _ : state) {
    ProcessTree tree(*frame->sample);
    auto rows = top::build_rows(*frame->sample, st, &tree);
    top::LayoutInput in;
    in.frame = frame.get();
    in.tree = &tree;
    in.rows = &rows;
    in.state = &st;
    in.last_good = &last_good;
    in.now = frame->sample->t;
    benchmark::DoNotOptimize(top::layout(in, 200, 60));
  }
}
BENCHMARK(BM_ModelOnly)
    ->ArgNames({"tree"})
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMicrosecond);

void BM_DrawOnly(benchmark::State& state) {
  static auto frame = busy_frame();
  top::TopState st;
  std::map<int, std::pair<GpuSample, double>> last_good;
  auto rows = top::build_rows(*frame->sample, st);
  top::LayoutInput in;
  in.frame = frame.get();
  in.rows = &rows;
  in.state = &st;
  in.last_good = &last_good;
  in.now = frame->sample->t;
  top::Screen screens[2];
  screens[0] = top::layout(in, 200, 60);
  static auto other = busy_frame(1);
  in.frame = other.get();
  screens[1] = top::layout(in, 200, 60);
  std::FILE* out = std::fopen("/dev/null", "w");
  top::Terminal term(false, out, "xterm-256color", 200, 60);
  size_t k = 0;
  for (auto _ : state) term.draw(screens[k++ % 2]);
  std::fclose(out);
}
BENCHMARK(BM_DrawOnly)->Unit(benchmark::kMicrosecond);

// One second's sample into top's findings window (written as a trace line
// and compressed), the window full (60 s).
void BM_WindowAdd(benchmark::State& state) {
  static auto frame = busy_frame();
  monitor::WindowDiagnosis window;
  auto s = std::make_shared<Sample>(*frame->sample);
  for (auto _ : state) {
    s->t += 1;
    window.add(s);
  }
  state.counters["kept_bytes"] = static_cast<double>(window.bytes());
}
BENCHMARK(BM_WindowAdd)->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_Frame)
    ->ArgNames({"w", "h", "tree"})
    ->Args({200, 60, 0})
    ->Args({200, 60, 1})
    ->Args({80, 24, 0})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
int main(int argc, char** argv) {
  // As `top` runs: a UTF-8 locale, so ncurses takes the block and tree
  // glyphs as the wide characters they are.
  std::setlocale(LC_ALL, "C.UTF-8");
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
