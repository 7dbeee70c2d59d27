// Deterministic fuzzing: valid trace lines and files, mutated thousands of
// ways. The parser must return or throw TraceError, nothing else (no crash,
// no other exception). Run under GD_SANITIZE=ON this also catches memory
// errors. Open-ended fuzzing: tests/fuzz (scripts/fuzz.sh).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "temp_dir.h"
#include "trace/trace_io.h"
#include "trace_fixtures.h"

namespace gd {
namespace {

class Mutator {
 public:
  explicit Mutator(uint32_t seed) : rng_(seed) {}

  std::string mutate(std::string s) {
    const int n = pick(1, 4);
    for (int i = 0; i < n; ++i) mutate_once(s);
    return s;
  }

 private:
  int pick(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng_);
  }
  size_t pos(const std::string& s) {
    return s.empty()
               ? 0
               : static_cast<size_t>(pick(0, static_cast<int>(s.size()) - 1));
  }

  void mutate_once(std::string& s) {
    // Tokens that steer the parser into interesting places.
    static const char* kTokens[] = {"{",
                                    "}",
                                    "[",
                                    "]",
                                    "\"",
                                    ",",
                                    ":",
                                    "null",
                                    "true",
                                    "-1",
                                    "1e999",
                                    "-0",
                                    "18446744073709551616",
                                    "4294967296",
                                    "0.5",
                                    "\\u0000",
                                    "\\ud800",
                                    "\xff",
                                    "\xc3",
                                    "\"index\":",
                                    "\"lost\":true",
                                    "\"t\":",
                                    "\n",
                                    " ",
                                    "\"processes\":[{}]",
                                    "\"gpus\":[{\"index\":0}]"};
    switch (pick(0, 5)) {
      case 0:  // flip a byte
        if (!s.empty()) s[pos(s)] = static_cast<char>(pick(0, 255));
        break;
      case 1:  // truncate
        s.resize(pos(s));
        break;
      case 2:  // insert a token
        s.insert(pos(s), kTokens[pick(0, std::size(kTokens) - 1)]);
        break;
      case 3: {  // delete a range
        const size_t at = pos(s);
        s.erase(at, static_cast<size_t>(pick(1, 16)));
        break;
      }
      case 4: {  // duplicate a range
        const size_t at = pos(s);
        s.insert(at, s.substr(at, static_cast<size_t>(pick(1, 64))));
        break;
      }
      default:  // flip one bit
        if (!s.empty()) s[pos(s)] ^= static_cast<char>(1 << pick(0, 7));
    }
  }

  std::mt19937 rng_;
};

std::vector<std::string> seed_lines() {
  Sample lost = testing::full_sample();
  lost.gpus[1].lost = true;
  lost.gpus[0].stale = true;
  return {header_to_json(testing::full_header()),
          sample_to_json(testing::full_sample()),
          sample_to_json(testing::unknown_sample()), sample_to_json(lost),
          R"({"t": 1, "gpus": [{"index": 0, "lost": true}], "host": null})"};
}

TEST(TraceFuzz, MutatedLinesParseOrThrowTraceError) {
  const auto seeds = seed_lines();
  Mutator m(12345);
  int parsed = 0, rejected = 0;
  Sample reused;  // also exercises storage reuse after errors
  for (int i = 0; i < 5000; ++i) {
    const std::string line =
        m.mutate(seeds[static_cast<size_t>(i) % seeds.size()]);
    for (int as_header = 0; as_header < 2; ++as_header) {
      try {
        if (as_header) {
          header_from_json(line, "fuzz:1");
        } else {
          sample_from_json(line, "fuzz:2", reused);
        }
        ++parsed;
      } catch (const TraceError& e) {
        ++rejected;
        ASSERT_EQ(std::string(e.what()).rfind("fuzz:", 0), 0u) << e.what();
      } catch (const std::exception& e) {
        FAIL() << "unexpected exception " << e.what() << " for: " << line;
      }
    }
  }
  // The mutations must exercise both outcomes, or the test proves nothing.
  EXPECT_GT(parsed, 500);
  EXPECT_GT(rejected, 500);
}

TEST(TraceFuzz, MutatedFilesReadOrThrowTraceError) {
  testing::TempDir dir;
  std::vector<std::string> files;
  for (const char* name : {"seed.jsonl", "seed.jsonl.zst"}) {
    TraceWriter w(dir.path(name));
    w.write_header(testing::full_header());
    for (int i = 0; i < 5; ++i) w.write_sample(testing::full_sample(100 + i));
    w.close();
    files.push_back(testing::TempDir::read(dir.path(name)));
  }
  Mutator m(777);
  int complete = 0, rejected = 0;
  for (int i = 0; i < 600; ++i) {
    const std::string path =
        dir.write("m", m.mutate(files[static_cast<size_t>(i) % files.size()]));
    try {
      TraceReader r(path);
      Sample s;
      while (r.next(s)) {
      }
      ++complete;
    } catch (const TraceError&) {
      ++rejected;
    } catch (const std::exception& e) {
      FAIL() << "unexpected exception " << e.what() << " in iteration " << i;
    }
  }
  EXPECT_GT(complete, 10);
  EXPECT_GT(rejected, 100);
}

}  // namespace
}  // namespace gd
