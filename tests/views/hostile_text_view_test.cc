// Text views print untrusted strings (process names, command lines, users,
// trace strings) inert: one row per process, no control bytes, columns
// still aligned.
#include <gtest/gtest.h>

#include <sstream>

#include "views/ps_view.h"
#include "views/status_view.h"

namespace gd {
namespace {

bool has_control(const std::string& s) {
  for (unsigned char c : s)
    if ((c < 0x20 && c != '\n') || c == 0x7f || c == 0x9b) return true;
  return false;
}

std::vector<std::string> hostile_lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

Sample hostile_sample() {
  Sample s;
  s.t = 1000;
  GpuSample g;
  g.index = 0;
  g.processes = std::vector<GpuProcess>{{101, 1ull << 30, "compute"},
                                        {102, 1ull << 30, "compute"}};
  s.gpus.push_back(g);
  ProcessSample a;
  a.pid = 101;
  a.user = "\x1b[2Jroot";
  a.state = "S";
  a.cmdline =
      "x\n0    4242  root  FORGED\x1b]0;title\x07\x9b"
      "31m\xff";
  s.processes.push_back(a);
  ProcessSample b;
  b.pid = 102;
  b.user = "ｗｉｄｅ";  // fullwidth: two columns per character
  b.state = "S";
  b.name = "\x1b[6n";
  s.processes.push_back(b);
  return s;
}

TEST(HostileTextViews, PsPrintsEachProcessOnOneInertRow) {
  Sample s = hostile_sample();
  std::string out = render_ps(s, build_ps_rows(s));
  EXPECT_FALSE(has_control(out)) << out;
  auto lines = hostile_lines_of(out);
  ASSERT_EQ(lines.size(), 3u) << out;  // header + one row per process
  EXPECT_NE(lines[1].find("\\e[2Jroot"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("x\\n0    4242"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("[\\e[6n]"), std::string::npos) << lines[2];
}

TEST(HostileTextViews, PsColumnsAlignWithEscapedAndWideUsers) {
  Sample s = hostile_sample();
  auto lines = hostile_lines_of(render_ps(s, build_ps_rows(s)));
  ASSERT_EQ(lines.size(), 3u);
  // GPU-MEM is right-aligned under its header, whatever the USER cell held.
  size_t end = lines[0].find("GPU-MEM") + std::string("GPU-MEM").size();
  EXPECT_EQ(lines[1].substr(end - 7, 7), "1.0 GiB") << lines[1];
  // The fullwidth user takes 8 columns on screen but 12 bytes: compare in
  // display columns by checking what follows the padded cell.
  size_t user_at = lines[2].find("ｗｉｄｅ");
  ASSERT_NE(user_at, std::string::npos);
  std::string after = lines[2].substr(user_at + std::string("ｗｉｄｅ").size());
  EXPECT_EQ(after.substr(0, 2 + 1 + 10),
            std::string(2, ' ') + " " + "   1.0 GiB")
      << lines[2];
}

TEST(HostileTextViews, StatusEscapesTraceStrings) {
  TraceHeader h;
  h.host.hostname = "node\x1b[2J";
  GpuInfo gi;
  gi.index = 0;
  gi.name = "A100\r\nGPU 9  FAKE";
  h.gpus.push_back(gi);
  Sample s;
  s.t = 1000;
  Event e;
  e.kind = "xid";
  e.text = "NVRM: Xid \x1b]0;x\x07 79";
  s.events.push_back(e);
  std::string out = render_status(h, s);
  EXPECT_FALSE(has_control(out)) << out;
  EXPECT_NE(out.find("node\\e[2J"), std::string::npos);
  EXPECT_NE(out.find("A100\\r\\nGPU 9  FAKE"), std::string::npos);
}

}  // namespace
}  // namespace gd
