// Process names and command lines come from /proc and may hold any bytes.
// Whatever they hold, a trace line must stay valid JSON and valid UTF-8.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "trace/trace_io.h"
#include "trace_fixtures.h"

namespace gd {
namespace {

using nlohmann::json;

// Writes a process with this name and cmdline; checks that nlohmann (which
// rejects invalid UTF-8) accepts the line; returns the name read back.
std::string round_trip_name(const std::string& name) {
  Sample s = testing::unknown_sample();
  s.processes[0].name = name;
  s.processes[0].cmdline = name + " --arg";
  s.processes[0].cgroup = name;
  s.processes[0].libs = {name};
  s.events[0].text = name;
  const std::string line = sample_to_json(s);
  EXPECT_EQ(line.find('\n'), std::string::npos) << "line breaks the JSONL";
  json j;
  EXPECT_NO_THROW(j = json::parse(line)) << line;
  const Sample back = sample_from_json(line, "t:2");
  EXPECT_EQ(back.processes[0].cmdline, back.processes[0].name + " --arg");
  EXPECT_EQ(back.processes[0].cgroup, back.processes[0].name);
  EXPECT_EQ(back.events[0].text, back.processes[0].name);
  if (j.is_object()) {
    EXPECT_EQ(j["processes"][0]["name"].get<std::string>(),
              back.processes[0].name);
  }
  return back.processes[0].name;
}

TEST(TraceEscaping, QuotesBackslashesAndControlCharactersSurvive) {
  const std::string nasty =
      std::string("a\"b\\c\nd\re\tf\bg\fh\x01i\x1fj\x7fk") +
      std::string(1, '\0') + "end";
  EXPECT_EQ(round_trip_name(nasty), nasty);
}

TEST(TraceEscaping, ControlCharactersAreWrittenAsEscapes) {
  Sample s = testing::unknown_sample();
  s.processes[0].name = "x\x01y";
  EXPECT_NE(sample_to_json(s).find(R"("name":"x\u0001y")"), std::string::npos);
}

TEST(TraceEscaping, ValidMultiByteUtf8IsKept) {
  const std::string text =
      "caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x94\xA5";
  EXPECT_EQ(round_trip_name(text), text);
}

TEST(TraceEscaping, InvalidUtf8BytesBecomeReplacementCharacters) {
  const std::string fffd = "\xEF\xBF\xBD";
  // A stray byte that can never start a sequence.
  EXPECT_EQ(round_trip_name("a\xFF"
                            "b"),
            "a" + fffd + "b");
  // A lone continuation byte.
  EXPECT_EQ(round_trip_name("\x80"), fffd);
  // A sequence cut short: its valid prefix is one replacement.
  EXPECT_EQ(round_trip_name("\xE2\x82"
                            "x"),
            fffd + "x");
  // Truncated at the very end of the string.
  EXPECT_EQ(round_trip_name("ok\xF0\x9F\x94"), "ok" + fffd);
  // Overlong encoding of '/': both bytes are invalid.
  EXPECT_EQ(round_trip_name("\xC0\xAF"), fffd + fffd);
  // UTF-16 surrogate encoded in UTF-8 (CESU): not valid UTF-8.
  EXPECT_EQ(round_trip_name("\xED\xA0\x80"), fffd + fffd + fffd);
  // Above U+10FFFF.
  EXPECT_EQ(round_trip_name("\xF4\x90\x80\x80"), fffd + fffd + fffd + fffd);
}

// Plain text is passed over 8 bytes at a time: a byte that needs escaping
// or checking is found at every place in and across those words.
TEST(TraceEscaping, EachSpecialByteIsFoundAtEveryPlace) {
  const std::string fffd = "\xEF\xBF\xBD";
  struct Case {
    std::string put, back;
  };
  const std::vector<Case> cases = {{"\"", "\""},
                                   {"\\", "\\"},
                                   {std::string(1, '\0'), std::string(1, '\0')},
                                   {"\x1f", "\x1f"},
                                   {"\n", "\n"},
                                   {"\x7f", "\x7f"},
                                   {" ", " "},
                                   {"\xC3\xA9", "\xC3\xA9"},
                                   {"\xFF", fffd},
                                   {"\xE2\x82", fffd}};
  for (const Case& c : cases) {
    for (size_t at = 0; at < 24; ++at) {
      std::string name(24, 'a');
      name.replace(at, 1, c.put);
      std::string want(24, 'a');
      want.replace(at, 1, c.back);
      SCOPED_TRACE("byte " + std::to_string(at));
      EXPECT_EQ(round_trip_name(name), want);
    }
  }
}

TEST(TraceEscaping, RandomBytesAlwaysGiveValidJson) {
  std::mt19937 rng(20241122);
  std::uniform_int_distribution<int> byte(0, 255), len(0, 40);
  for (int i = 0; i < 2000; ++i) {
    std::string name(static_cast<size_t>(len(rng)), '\0');
    for (char& c : name) c = static_cast<char>(byte(rng));
    SCOPED_TRACE(i);
    round_trip_name(name);
    if (::testing::Test::HasFailure()) break;
  }
}

}  // namespace
}  // namespace gd
