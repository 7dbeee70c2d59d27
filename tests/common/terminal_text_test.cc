#include "common/terminal_text.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace gd {
namespace {

using namespace std::string_literals;

// True when `s` is well-formed UTF-8 without C0 (any), DEL or C1 code
// points: nothing a terminal would act on.
bool terminal_inert(const std::string& s, std::string* why) {
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {
      *why = "control byte at " + std::to_string(i);
      return false;
    }
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
    if (n == 0 || i + n > s.size() || c > 0xf4) {
      *why = "invalid UTF-8 lead at " + std::to_string(i);
      return false;
    }
    uint32_t cp = c & (0x7f >> n);
    for (size_t k = 1; k < n; ++k) {
      auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xc0) != 0x80) {
        *why = "invalid UTF-8 continuation at " + std::to_string(i + k);
        return false;
      }
      cp = (cp << 6) | (d & 0x3f);
    }
    bool overlong = (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
    if (overlong || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) {
      *why = "invalid code point at " + std::to_string(i);
      return false;
    }
    if (cp <= 0x9f) {
      *why = "C1 control at " + std::to_string(i);
      return false;
    }
    if ((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069)) {
      *why = "bidi control at " + std::to_string(i);
      return false;
    }
    i += n;
  }
  return true;
}

TEST(TerminalSafe, PlainTextIsUnchanged) {
  EXPECT_EQ(terminal_safe("python3 train.py --lr 0.1"),
            "python3 train.py --lr 0.1");
  EXPECT_EQ(terminal_safe(""), "");
  EXPECT_EQ(terminal_safe("日本語のジョブ"), "日本語のジョブ");
  EXPECT_EQ(terminal_safe("café ñ €5 😀"), "café ñ €5 😀");
}

TEST(TerminalSafe, EscapeSequencesBecomeVisible) {
  EXPECT_EQ(terminal_safe("\x1b[2Jcleared"), "\\e[2Jcleared");
  EXPECT_EQ(terminal_safe("\x1b]0;title\x07"), "\\e]0;title\\x07");
  EXPECT_EQ(terminal_safe("ask\x1b[6n"), "ask\\e[6n");
}

TEST(TerminalSafe, LineBreaksAndCursorMovesBecomeVisible) {
  EXPECT_EQ(terminal_safe("a\nb"), "a\\nb");
  EXPECT_EQ(terminal_safe("real\rfake"), "real\\rfake");
  EXPECT_EQ(terminal_safe("ab\b\bxy"), "ab\\x08\\x08xy");
  EXPECT_EQ(terminal_safe("a\tb"), "a\\tb");
  EXPECT_EQ(terminal_safe("a\x7f"), "a\\x7f");
  EXPECT_EQ(terminal_safe("nul\0here"s), "nul\\x00here");
}

TEST(TerminalSafe, ForgedRowStaysInItsRow) {
  std::string out =
      terminal_safe("job\n0    4242             root        1.0 GiB  ");
  EXPECT_EQ(out.find('\n'), std::string::npos);
  EXPECT_EQ(out.rfind("job\\n0", 0), 0u);
}

TEST(TerminalSafe, C1ControlsBecomeVisible) {
  // The single byte 0x9b (8-bit CSI) is invalid UTF-8.
  EXPECT_EQ(terminal_safe("x\x9b"
                          "2Jy"),
            "x\\x9b2Jy");
  // U+009B well-formed in UTF-8 (C2 9B) is still a control.
  EXPECT_EQ(terminal_safe("x\xc2\x9b"
                          "2J"),
            "x\\u009b2J");
  EXPECT_EQ(terminal_safe("\xc2\x80\xc2\x9f"), "\\u0080\\u009f");
  // U+00A0 (first code point after C1) is printable.
  EXPECT_EQ(terminal_safe("\xc2\xa0"), "\xc2\xa0");
}

TEST(TerminalSafe, InvalidUtf8BecomesVisibleBytes) {
  EXPECT_EQ(terminal_safe("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(terminal_safe("\x80"), "\\x80");           // stray continuation
  EXPECT_EQ(terminal_safe("\xc0\xaf"), "\\xc0\\xaf");  // overlong '/'
  EXPECT_EQ(terminal_safe("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");  // overlong
  EXPECT_EQ(terminal_safe("\xf0\x80\x80\xaf"), "\\xf0\\x80\\x80\\xaf");
  EXPECT_EQ(terminal_safe("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // surrogate
  EXPECT_EQ(terminal_safe("\xf4\x90\x80\x80"),
            "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(terminal_safe("\xf5\x80\x80\x80"), "\\xf5\\x80\\x80\\x80");
  EXPECT_EQ(terminal_safe("ok\xe6\x97"), "ok\\xe6\\x97");  // truncated
  EXPECT_EQ(terminal_safe("\xe6\x97x"), "\\xe6\\x97x");
  // The highest valid code point passes.
  EXPECT_EQ(terminal_safe("\xf4\x8f\xbf\xbf"), "\xf4\x8f\xbf\xbf");
}

TEST(TerminalSafe, BidiControlsAreNeutralised) {
  // U+202E RIGHT-TO-LEFT OVERRIDE, U+2066 LEFT-TO-RIGHT ISOLATE, U+2069 PDI.
  EXPECT_EQ(terminal_safe("admin\xe2\x80\xaegpj.exe"), "admin\\u202egpj.exe");
  EXPECT_EQ(terminal_safe("\xe2\x81\xa6x\xe2\x81\xa9"), "\\u2066x\\u2069");
  EXPECT_EQ(terminal_safe("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad"),
            "\\u202a\\u202b\\u202c\\u202d");
  EXPECT_EQ(terminal_safe("\xe2\x80\x8e\xe2\x80\x8f"), "\\u200e\\u200f");
  // U+2028 LINE SEPARATOR would break the row on some terminals.
  EXPECT_EQ(terminal_safe("a\xe2\x80\xa8"
                          "b"),
            "a\\u2028b");
}

TEST(TerminalSafe, LongTextIsCutWithAMarker) {
  std::string big(1 << 20, 'a');
  std::string out = terminal_safe(big);
  EXPECT_LE(out.size(), kTerminalTextMax);
  EXPECT_TRUE(out.ends_with(kTerminalCutMarker));
  EXPECT_EQ(terminal_safe(std::string(kTerminalTextMax, 'b')),
            std::string(kTerminalTextMax, 'b'));
  std::string over = terminal_safe(std::string(kTerminalTextMax + 1, 'b'));
  EXPECT_EQ(over.size(), kTerminalTextMax);
  EXPECT_TRUE(over.ends_with(kTerminalCutMarker));
}

TEST(TerminalSafe, CutNeverSplitsAnEscapeOrACharacter) {
  EXPECT_EQ(terminal_safe("abcdef\x1bxyz", 10), "abcdef…");
  EXPECT_EQ(terminal_safe("ab日本語", 10), "ab日…");
  // Exactly at the cap: nothing cut.
  EXPECT_EQ(terminal_safe("abcd\x1b", 6), "abcd\\e");
  EXPECT_EQ(terminal_safe("abcdefgh\x1b", 10), "abcdefgh\\e");
  EXPECT_EQ(terminal_safe("abcdefgh\x1b", 9), "abcdef…");
  std::string out = terminal_safe(std::string(100, '\x9b'), 20);
  EXPECT_EQ(out, "\\x9b\\x9b\\x9b\\x9b…");
}

TEST(TerminalSafe, IsIdempotent) {
  for (const char* s : {"\x1b[2J\n\x9b\xe2\x80\xae", "plain", "日本\xff"}) {
    std::string once = terminal_safe(s);
    EXPECT_EQ(terminal_safe(once), once) << once;
  }
}

// Property: whatever the input, the output is inert and within the cap.
TEST(TerminalSafe, RandomInputNeverYieldsAControl) {
  std::mt19937 rng(20261124);
  // Bias towards the interesting bytes so multi-byte forms show up often.
  const std::string alphabet =
      "\x00\x07\x08\x09\x0a\x0d\x1b\x7f\x80\x9b\x9f\xa0\xbf\xc0\xc1\xc2\xdf"
      "\xe0\xe2\x80\xae\xed\xef\xf0\xf4\xf5\xff[]0;a~\\ "s;
  for (int round = 0; round < 20000; ++round) {
    size_t len = rng() % 64;
    std::string in;
    for (size_t k = 0; k < len; ++k)
      in += (rng() % 4 == 0) ? static_cast<char>(rng() & 0xff)
                             : alphabet[rng() % alphabet.size()];
    size_t cap = 8 + rng() % 64;
    std::string out = terminal_safe(in, cap);
    std::string why;
    ASSERT_TRUE(terminal_inert(out, &why)) << why << " for round " << round;
    ASSERT_LE(out.size(), cap);
  }
}

TEST(TerminalWidth, CountsDisplayColumns) {
  EXPECT_EQ(terminal_width("abc"), 3u);
  EXPECT_EQ(terminal_width("日本"), 4u);
  EXPECT_EQ(terminal_width("e\xcc\x81"), 1u);  // e + combining acute
  EXPECT_EQ(terminal_width("😀"), 2u);
}

TEST(TerminalFit, CutsToColumnsWithTilde) {
  EXPECT_EQ(terminal_fit("alice", 10), "alice");
  EXPECT_EQ(terminal_fit("averyverylongname", 10), "averyvery~");
  EXPECT_EQ(terminal_fit("日本語日本語", 5), "日本~");
  EXPECT_EQ(terminal_fit("a\x1b[2J", 10), "a\\e[2J");
  EXPECT_EQ(terminal_fit("\x1b\x1b\x1b\x1b", 5), "\\e\\e~");
}

TEST(TerminalCell, PadsToExactColumns) {
  EXPECT_EQ(terminal_cell("bob", 6), "bob   ");
  EXPECT_EQ(terminal_cell("日本", 6), "日本  ");
  EXPECT_EQ(terminal_cell("e\xcc\x81", 3), "e\xcc\x81  ");
  EXPECT_EQ(terminal_width(terminal_cell("日本語日本語", 7)), 7u);
}

}  // namespace
}  // namespace gd
