#include "common/text_cap.h"

#include <gtest/gtest.h>

namespace gd {
namespace {

TEST(TextCap, ShortTextIsUnchanged) {
  std::string s = "python3 train.py";
  cap_text(s, 4096);
  EXPECT_EQ(s, "python3 train.py");
}

TEST(TextCap, LongTextIsCutWithACountedMarker) {
  std::string s(1 << 20, 'a');
  cap_text(s, 4096);
  EXPECT_EQ(s, std::string(4096, 'a') + "…[truncated 1044480 bytes]");
}

TEST(TextCap, BytesNeverReadCountInTheMarker) {
  std::string s(4096, 'a');
  cap_text(s, 4096, 1000);
  EXPECT_EQ(s, std::string(4096, 'a') + "…[truncated 1000 bytes]");
}

TEST(TextCap, CutDoesNotSplitACharacter) {
  std::string s = "ab日本";  // 2 + 3 + 3 bytes
  cap_text(s, 4);
  EXPECT_EQ(s, "ab…[truncated 6 bytes]");
}

}  // namespace
}  // namespace gd
