// A trace whose values cannot be true (GPU index -5, a GPU listed twice, a
// negative Xid code, t = 1e308) is refused with "FILE:LINE: field: why";
// a UTF-8 byte order mark before the header is skipped.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "temp_dir.h"
#include "trace/trace_io.h"

namespace gd {
namespace {

using testing::TempDir;

const char* kRangeHeader =
    R"({"format": "gpudoctor-trace", "version": 1, "gpus": [{"index": 0}, {"index": 1}]})";
const char* kGood =
    R"({"t": 1732262400, "gpus": [{"index": 0}, {"index": 1}]})";

class TraceRange : public ::testing::Test {
 protected:
  // Reads the lines as a trace file; the error message, or "".
  std::string error_reading(const std::vector<std::string>& lines,
                            const std::string& prefix = "") {
    std::string text = prefix;
    for (const auto& l : lines) text += l + "\n";
    path_ = dir_.write("t.jsonl", text);
    try {
      TraceReader r(path_);
      Sample s;
      while (r.next(s)) {
      }
    } catch (const TraceError& e) {
      return e.what();
    }
    return "";
  }
  void expect_error(const std::vector<std::string>& lines, int line,
                    const std::string& what) {
    std::string msg = error_reading(lines);
    std::string where = path_ + ":" + std::to_string(line) + ": ";
    EXPECT_EQ(msg.substr(0, where.size()), where) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
  TempDir dir_;
  std::string path_;
};

TEST_F(TraceRange, GoodTraceReads) {
  EXPECT_EQ(error_reading({kRangeHeader, kGood, kGood}), "");
}

TEST_F(TraceRange, NegativeOrHugeGpuIndexIsRefused) {
  expect_error({kRangeHeader, R"({"t": 1, "gpus": [{"index": -5}]})"}, 2,
               "gpus[0].index: -5 is out of range 0..1023");
  expect_error({kRangeHeader, R"({"t": 1, "gpus": [{"index": 1024}]})"}, 2,
               "gpus[0].index: 1024 is out of range");
  expect_error(
      {R"({"format": "gpudoctor-trace", "version": 1, "gpus": [{"index": -1}]})"},
      1, "gpus[0].index: -1 is out of range");
}

TEST_F(TraceRange, GpuListedTwiceIsRefused) {
  expect_error(
      {R"({"format": "gpudoctor-trace", "version": 1, "gpus": [{"index": 0}, {"index": 0}]})"},
      1, "gpus[1].index: GPU 0 is listed twice");
  expect_error(
      {kRangeHeader, R"({"t": 1, "gpus": [{"index": 1}, {"index": 1}]})"}, 2,
      "GPU 1 is listed twice");
}

TEST_F(TraceRange, XidCodeMustBePositiveAndBelow65536) {
  expect_error(
      {kRangeHeader,
       R"({"t": 1, "events": [{"kind": "xid", "gpu": 0, "code": -3}]})"},
      2, "events[0].code: -3 is out of range 1..65535");
  expect_error(
      {kRangeHeader,
       R"({"t": 1, "events": [{"kind": "xid", "gpu": 0, "code": 70000}]})"},
      2, "events[0].code: 70000 is out of range");
  expect_error(
      {kRangeHeader,
       R"({"t": 1, "events": [{"kind": "xid", "gpu": -2, "code": 79}]})"},
      2, "events[0].gpu: -2 is out of range");
  EXPECT_EQ(
      error_reading(
          {kRangeHeader,
           R"({"t": 1, "events": [{"kind": "xid", "gpu": 0, "code": 79}]})"}),
      "");
}

TEST_F(TraceRange, APowerLimitNoGpuHasIsRefused) {
  expect_error(
      {R"({"format": "gpudoctor-trace", "version": 1, "gpus": [{"index": 0, "power_limit_w": 1e308}]})"},
      1, "gpus[0].power_limit_w: 1e+308 is not a power limit (0 to 10000 W)");
  expect_error(
      {R"({"format": "gpudoctor-trace", "version": 1, "gpus": [{"index": 0, "power_default_limit_w": -5}]})"},
      1, "gpus[0].power_default_limit_w: -5 is not a power limit");
  EXPECT_EQ(
      error_reading(
          {R"({"format": "gpudoctor-trace", "version": 1, "gpus": [{"index": 0, "power_limit_w": 700}]})"}),
      "");
}

TEST_F(TraceRange, TimeMustBeASaneUnixTime) {
  expect_error({kRangeHeader, R"({"t": 1e308})"}, 2,
               "t: 1e+308 is not a Unix time");
  expect_error({kRangeHeader, R"({"t": -1})"}, 2, "t: -1 is not a Unix time");
  expect_error({kRangeHeader, R"({"t": 5000000000})"}, 2, "t: 5e+09");
}

TEST_F(TraceRange, NegativeCpuCountIsRefused) {
  expect_error(
      {R"({"format": "gpudoctor-trace", "version": 1, "host": {"cpu_count": -4}})"},
      1, "host.cpu_count: -4 is negative");
}

TEST_F(TraceRange, Utf8ByteOrderMarkBeforeTheHeaderIsSkipped) {
  EXPECT_EQ(error_reading({kRangeHeader, kGood}, "\xEF\xBB\xBF"), "");
}

}  // namespace
}  // namespace gd
