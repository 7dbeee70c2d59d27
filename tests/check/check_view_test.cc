// check's reason line (a Slurm drain reason), its JSON and text.
#include "views/check_view.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "check_fixture.h"

namespace gd::check::test {
namespace {

TEST(CheckView, ReasonNamesTheGpuItsBusIdAndTheWorstProblem) {
  Host h;
  h.sample.events.push_back(
      event("xid", 2, 79,
            "NVRM: Xid (PCI:0000:12:00): 79, GPU has fallen off the bus."));
  h.header.gpus[0].persistence_mode = false;
  Result r = h.judge();
  // No stamp on the line: no time.
  EXPECT_EQ(check_reason(r, h.header),
            "gpudoctor: GPU 2 00000000:12:00.0 Xid 79 (it fell off the bus); "
            "+2 more");
  // The kernel's stamp: the time (UTC) the Xid was logged.
  h.sample.events.back().logged_at = 1732276991;  // 2024-11-22T12:03:11Z
  EXPECT_EQ(check_reason(h.judge(), h.header),
            "gpudoctor: GPU 2 00000000:12:00.0 Xid 79 (it fell off the bus) "
            "12:03:11; +2 more");
  EXPECT_EQ(check_reason(Host().judge(), h.header), "");
}

TEST(CheckView, ReasonIsOneSafeLineOfAtMost200Chars) {
  Host h;
  h.gpu(1).processes->push_back(process(9, 1ull << 30));
  ProcessSample p;
  p.pid = 9;
  p.state = "S";
  p.user = "eve";
  p.name = std::string("x\"\n\x1b[31m") + std::string(400, 'y');
  h.sample.processes.push_back(p);
  std::string reason = check_reason(h.judge(), h.header);
  EXPECT_LE(reason.size(), kCheckReasonMax);
  EXPECT_EQ(reason.find('\n'), std::string::npos);
  EXPECT_EQ(reason.find('"'), std::string::npos);
  EXPECT_EQ(reason.find('\x1b'), std::string::npos);
  EXPECT_EQ(
      reason.rfind("gpudoctor: GPU 1 00000000:11:00.0 pid 9 (x'??[31my", 0), 0u)
      << reason;
}

TEST(CheckView, AFatalSxidCarriesItsTime) {
  Host h;
  h.sample.events.push_back(event("sxid", std::nullopt, 24007,
                                  "nvidia-nvswitch1: SXid (PCI:0000:06:00.0): "
                                  "24007, Fatal, Link 44"));
  h.sample.events.back().logged_at = 1732276991;
  EXPECT_EQ(check_reason(h.judge(), h.header),
            "gpudoctor: NVSwitch fatal SXid 24007 12:03:11");
}

TEST(CheckView, JsonHasTheContractsFields) {
  Host h;
  h.gpu(3).remapped_rows_pending = true;
  auto j = nlohmann::json::parse(format_check_json(h.judge(), h.header));
  EXPECT_EQ(j["healthy"], false);
  EXPECT_EQ(j["exit_code"], 2);
  EXPECT_EQ(j["status"], "unhealthy");
  ASSERT_EQ(j["findings"].size(), 1u);
  EXPECT_EQ(j["findings"][0]["id"], "ecc-reset-required");
  EXPECT_EQ(j["findings"][0]["gpus"], nlohmann::json::array({3}));
  EXPECT_TRUE(j["findings"][0].contains("evidence"));
  EXPECT_TRUE(j["not_judged"].is_array());
  EXPECT_TRUE(j["reason"].is_string());
  auto ok = nlohmann::json::parse(format_check_json(Host().judge(), h.header));
  EXPECT_EQ(ok["healthy"], true);
  EXPECT_TRUE(ok["reason"].is_null());
}

TEST(CheckView, TextSaysTheVerdictAndEachFinding) {
  Host h;
  h.header.gpus[0].persistence_mode = false;
  std::string text = format_check_text(h.judge(), h.header);
  EXPECT_EQ(text.rfind("gpudoctor check: warnings (exit 1): 0 problems, 1 "
                       "warning on 4 GPUs",
                       0),
            0u)
      << text;
  EXPECT_NE(text.find("persistence-mode-off"), std::string::npos);
}

TEST(CheckView, NpdAnswersOkProblemOrUnknownInOneLine) {
  Host h;
  NpdVerdict ok = check_npd(h.judge({}, true), h.header, kNpdMessageMax, false);
  EXPECT_EQ(ok.exit_status, kNpdOk);
  EXPECT_EQ(ok.message, "gpudoctor: 4 GPUs healthy");

  h.header.gpus[2].persistence_mode = false;  // a warning
  NpdVerdict warned = check_npd(h.judge({}, true), h.header, 80, false);
  EXPECT_EQ(warned.exit_status, kNpdOk);
  EXPECT_EQ(warned.message,
            "gpudoctor: OK; warning: GPU 2 00000000:12:00.0 persistence mode "
            "off");
  EXPECT_EQ(check_npd(h.judge({}, true), h.header, 80, true).exit_status,
            kNpdProblem);

  h.gpu(3).remapped_rows_pending = true;  // critical
  NpdVerdict bad = check_npd(h.judge({}, true), h.header, 80, false);
  EXPECT_EQ(bad.exit_status, kNpdProblem);
  EXPECT_EQ(bad.message.rfind("gpudoctor: GPU 3 00000000:13:00.0 ", 0), 0u)
      << bad.message;

  NpdVerdict unknown = check_npd_unknown(
      std::string("NVML did not start (\x1b[31m") + std::string(300, 'z'), 80);
  EXPECT_EQ(unknown.exit_status, kNpdUnknown);
  EXPECT_EQ(unknown.message.size(), 80u);
  EXPECT_EQ(unknown.message.find('\x1b'), std::string::npos);
}

TEST(CheckView, EveryLimitIsKeptAndTheTailSurvivesTheCut) {
  Host h(8);
  for (int g = 0; g < 8; ++g) {
    h.sample.events.push_back(
        event("xid", g, 79, "NVRM: Xid 79, GPU has fallen off the bus."));
    h.sample.events.back().logged_at = 1732276991;  // 12:03:11 UTC
  }
  Result r = h.judge({}, true);
  for (size_t max = kCheckLineMin; max <= 130; ++max) {
    std::string line = check_reason(r, h.header, max);
    EXPECT_LE(line.size(), max);
    EXPECT_TRUE(line.ends_with(" 12:03:11; +15 more")) << line;
    EXPECT_EQ(line.rfind("gpudoctor: ", 0), 0u) << line;
    EXPECT_EQ(check_npd(r, h.header, max, false).message, line);
  }
}

TEST(CheckView, NodeOnlyLooksAtNoJobsGpus) {
  Host h;
  h.gpu(1).processes->push_back(process(4242, 8ull << 30));
  EXPECT_EQ(h.judge().exit_code(), kExitUnhealthy);  // the gate: not free
  Result r = h.judge({}, true);
  EXPECT_TRUE(r.healthy());
  EXPECT_TRUE(r.node_only);
  EXPECT_TRUE(r.gpus.empty());
  EXPECT_EQ(std::count(r.checked.begin(), r.checked.end(), "gpu-not-clean"), 0);
  EXPECT_NE(format_check_text(r, h.header).find("the node's health only"),
            std::string::npos);
}

}  // namespace
}  // namespace gd::check::test
