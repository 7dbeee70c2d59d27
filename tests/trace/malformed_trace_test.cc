// A malformed trace is reported as "FILE:LINE: what is wrong", naming the
// field, and reading stops: the reader never guesses.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "temp_dir.h"
#include "trace/trace_io.h"

namespace gd {
namespace {

using testing::TempDir;

const char* kHeader =
    R"({"format": "gpudoctor-trace", "version": 1, "gpus": []})";
const char* kGoodSample =
    R"({"t": 100.0, "gpus": [{"index": 0, "util_pct": 5}]})";

class MalformedTrace : public ::testing::Test {
 protected:
  // Writes the lines to a file, reads it to the end; returns the error
  // message, or "" when it read without error.
  std::string error_reading(const std::vector<std::string>& lines) {
    std::string text;
    for (const auto& l : lines) text += l + "\n";
    path_ = dir_.write("bad.jsonl", text);
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

  // Expects the error to start with "FILE:LINE: " and to mention `what`.
  void expect_error(const std::vector<std::string>& lines, int line,
                    const std::string& what) {
    const std::string msg = error_reading(lines);
    const std::string prefix = path_ + ":" + std::to_string(line) + ": ";
    EXPECT_EQ(msg.substr(0, prefix.size()), prefix) << msg;
    EXPECT_NE(msg.find(what), std::string::npos)
        << "message does not mention '" << what << "': " << msg;
  }

  TempDir dir_;
  std::string path_;
};

TEST_F(MalformedTrace, WellFormedTraceReadsWithoutError) {
  EXPECT_EQ(error_reading({kHeader, kGoodSample, kGoodSample}), "");
}

TEST_F(MalformedTrace, BadJsonNamesTheLine) {
  expect_error({kHeader, kGoodSample, R"({"t": 101, "gpus": [})"}, 3,
               "invalid JSON");
}

TEST_F(MalformedTrace, TrailingGarbageAfterTheObjectIsBadJson) {
  expect_error({kHeader, R"({"t": 101} {"t": 102})"}, 2, "invalid JSON");
}

TEST_F(MalformedTrace, WrongTypeNamesTheField) {
  expect_error(
      {kHeader, R"({"t": 101, "gpus": [{"index": 0, "util_pct": "high"}]})"}, 2,
      "gpus[0].util_pct: expected a number, got a string");
}

TEST_F(MalformedTrace, WrongTypeInNestedArraysNamesThePath) {
  expect_error(
      {kHeader,
       R"({"t": 1, "gpus": [{"index": 0}, {"index": 1, "processes": [{"pid": 5}, {"pid": "x"}]}]})"},
      2, "gpus[1].processes[1].pid: expected an integer");
  expect_error(
      {kHeader,
       R"({"t": 1, "processes": [{"pid": 5, "libs": ["libcuda.so.1", 7]}]})"},
      2, "processes[0].libs[1]: expected a string");
  expect_error({kHeader, R"({"t": 1, "host": {"cpu_util_pct": true}})"}, 2,
               "host.cpu_util_pct: expected a number, got a boolean");
  expect_error(
      {kHeader,
       R"({"t": 1, "gpus": [{"index": 0, "retired_pages_pending": 1}]})"},
      2, "gpus[0].retired_pages_pending: expected a boolean");
  expect_error(
      {kHeader,
       R"({"t": 1, "gpus": [{"index": 0, "clock_event_reasons": "sw_power_cap"}]})"},
      2, "gpus[0].clock_event_reasons: expected an array");
  expect_error({kHeader, R"({"t": 1, "gpus": {"index": 0}})"}, 2,
               "gpus: expected an array, got an object");
  expect_error({kHeader, R"({"t": 1, "gpus": [5]})"}, 2,
               "gpus[0]: expected an object, got an integer");
  expect_error({kHeader, R"({"t": 1, "host": []})"}, 2,
               "host: expected an object, got an array");
}

TEST_F(MalformedTrace, FractionalOrNegativeIntegersAreErrorsNotRounded) {
  expect_error({kHeader, R"({"t": 1, "gpus": [{"index": 0, "temp_c": 71.5}]})"},
               2, "gpus[0].temp_c: expected an integer");
  expect_error(
      {kHeader, R"({"t": 1, "gpus": [{"index": 0, "mem_used_bytes": -1}]})"}, 2,
      "gpus[0].mem_used_bytes: value -1 is out of range");
  expect_error({kHeader, R"({"t": 1, "processes": [{"pid": 4294967296}]})"}, 2,
               "processes[0].pid: value 4294967296 is out of range");
  expect_error(
      {kHeader, R"({"t": 1, "gpus": [{"index": 0, "pstate": 3000000000}]})"}, 2,
      "gpus[0].pstate: value 3000000000 is out of range");
}

TEST_F(MalformedTrace, MissingTimeIsAnError) {
  expect_error({kHeader, kGoodSample, R"({"gpus": []})"}, 3,
               "missing required field \"t\"");
  expect_error({kHeader, R"({"t": null})"}, 2, "t: expected a number");
  expect_error({kHeader, R"({"t": "1732262400"})"}, 2, "t: expected a number");
}

TEST_F(MalformedTrace, MissingIdentifiersAreErrors) {
  expect_error(
      {kHeader, R"({"t": 1, "gpus": [{"index": 0}, {"util_pct": 3}]})"}, 2,
      "gpus[1]: missing required field \"index\"");
  expect_error(
      {kHeader, R"({"t": 1, "processes": [{"pid": 1}, {"name": "x"}]})"}, 2,
      "processes[1]: missing required field \"pid\"");
  expect_error(
      {kHeader,
       R"({"t": 1, "gpus": [{"index": 0, "processes": [{"used_bytes": 1}]}]})"},
      2, "gpus[0].processes[0]: missing required field \"pid\"");
  expect_error({kHeader, R"({"t": 1, "events": [{"gpu": 0, "code": 79}]})"}, 2,
               "events[0]: missing required field \"kind\"");
  expect_error(
      {R"({"format": "gpudoctor-trace", "version": 1, "gpus": [{"uuid": "GPU-1"}]})"},
      1, "gpus[0]: missing required field \"index\"");
}

TEST_F(MalformedTrace, TimeGoingBackwardsIsAnError) {
  expect_error({kHeader, R"({"t": 100})", R"({"t": 100})", R"({"t": 99.5})"}, 4,
               "t: 99.5");
  expect_error({kHeader, R"({"t": 100})", R"({"t": 99.5})"}, 3,
               "earlier than the previous");
}

TEST_F(MalformedTrace, NonObjectLineIsAnError) {
  expect_error({kHeader, "[1, 2, 3]"}, 2,
               "expected a JSON object, got an array");
  expect_error({kHeader, "42"}, 2, "expected a JSON object, got an integer");
  expect_error({"\"gpudoctor-trace\""}, 1,
               "expected a JSON object, got a string");
}

TEST_F(MalformedTrace, HeaderWithoutFormatIsNotATrace) {
  expect_error({R"({"version": 1})", kGoodSample}, 1, "\"format\"");
  // A sample where the header should be.
  expect_error({kGoodSample}, 1, "not a gpudoctor trace header");
}

TEST_F(MalformedTrace, HeaderOfAnotherFormatIsNotATrace) {
  expect_error({R"({"format": "nvidia-smi-log", "version": 1})"}, 1,
               "format: not a gpudoctor trace header");
  expect_error({R"({"format": 1, "version": 1})"}, 1, "format:");
}

TEST_F(MalformedTrace, NewerVersionIsRefusedByNumber) {
  expect_error({R"({"format": "gpudoctor-trace", "version": 2})", kGoodSample},
               1, "version 2");
  expect_error({R"({"format": "gpudoctor-trace", "version": 0})"}, 1,
               "version 0");
  expect_error({R"({"format": "gpudoctor-trace"})"}, 1,
               "missing required field \"version\"");
  expect_error({R"({"format": "gpudoctor-trace", "version": "1"})"}, 1,
               "version: expected an integer, got a string");
}

TEST_F(MalformedTrace, HeaderFieldsOfTheWrongTypeAreNamed) {
  expect_error(
      {R"({"format": "gpudoctor-trace", "version": 1, "host": {"cpu_count": "128"}})"},
      1, "host.cpu_count: expected an integer, got a string");
  expect_error(
      {R"({"format": "gpudoctor-trace", "version": 1, "driver": {"driver_version": 535}})"},
      1, "driver.driver_version: expected a string");
  expect_error(
      {R"({"format": "gpudoctor-trace", "version": 1, "driver": "535"})"}, 1,
      "driver: expected an object");
  expect_error(
      {R"({"format": "gpudoctor-trace", "version": 1, "gpus": [{"index": 0, "ecc_enabled": "yes"}]})"},
      1, "gpus[0].ecc_enabled: expected a boolean");
}

TEST_F(MalformedTrace, BlankLinesAreIgnoredButCounted) {
  EXPECT_EQ(error_reading({"", kHeader, "", "   ", kGoodSample, "\t", ""}), "");
  expect_error({kHeader, "", "  ", R"({"t": "x"})"}, 4, "t: expected a number");
}

TEST_F(MalformedTrace, ReadingStopsAtTheFirstError) {
  std::string text = std::string(kHeader) + "\n" + kGoodSample + "\n{oops\n" +
                     kGoodSample + "\n";
  const std::string path = dir_.write("stop.jsonl", text);
  TraceReader r(path);
  Sample s;
  EXPECT_TRUE(r.next(s));
  EXPECT_THROW(r.next(s), TraceError);
  EXPECT_EQ(r.line(), 3u);
}

TEST(SampleFromJson, ErrorsArePrefixedWithTheGivenWhere) {
  try {
    sample_from_json(R"({"t": 1, "gpus": [{"index": 0, "power_w": []}]})",
                     "my.jsonl:42");
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_STREQ(
        e.what(),
        "my.jsonl:42: gpus[0].power_w: expected a number, got an array");
  }
}

TEST(SampleFromJson, EmptyOrWhitespaceInputIsAnError) {
  EXPECT_THROW(sample_from_json("", "x:1"), TraceError);
  EXPECT_THROW(sample_from_json("   ", "x:1"), TraceError);
  EXPECT_THROW(header_from_json("", "x:1"), TraceError);
}

}  // namespace
}  // namespace gd
