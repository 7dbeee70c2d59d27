#include "exporter/prom_text.h"

#include <gtest/gtest.h>

namespace gd::prom {
namespace {

std::string label(std::string_view v) {
  std::string out;
  append_label_value(out, v);
  return out;
}

TEST(PromText, EscapesBackslashQuoteAndNewline) {
  EXPECT_EQ(label(R"(a\b"c)"
                  "\nd"),
            R"(a\\b\"c\nd)");
}

TEST(PromText, KeepsValidUtf8) {
  EXPECT_EQ(label("caf\xC3\xA9 \xE2\x9C\x93"), "caf\xC3\xA9 \xE2\x9C\x93");
}

TEST(PromText, ReplacesInvalidUtf8AndControlBytes) {
  // Lone continuation byte, truncated 2-byte sequence, overlong '/',
  // a surrogate, a tab.
  EXPECT_EQ(label("a\x80z"), "a\xEF\xBF\xBDz");
  EXPECT_EQ(label("b\xC3"), "b\xEF\xBF\xBD");
  EXPECT_EQ(label("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(label("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(label("x\ty"), "x\xEF\xBF\xBDy");
}

TEST(PromText, UntrustedValuesAreCappedAtACharacterBoundary) {
  std::string out;
  append_untrusted_label_value(out, std::string(500, 'a'));
  EXPECT_EQ(out.size(), kMaxUntrustedLabelBytes);

  // A 3-byte character straddling the cap is dropped whole.
  out.clear();
  append_untrusted_label_value(out, "ab\xE2\x9C\x93", 4);
  EXPECT_EQ(out, "ab");
  // An escape is never cut in half.
  out.clear();
  append_untrusted_label_value(out, "abc\"", 4);
  EXPECT_EQ(out, "abc");
}

TEST(PromText, FormatsValues) {
  std::string out;
  append_value(out, 1410.0);
  out += ' ';
  append_value(out, 312.5);
  out += ' ';
  append_value(out, uint64_t{18446744073709551615u});
  out += ' ';
  append_value(out, std::numeric_limits<double>::quiet_NaN());
  out += ' ';
  append_value(out, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(out, "1410 312.5 18446744073709551615 NaN -Inf");
}

TEST(PromText, FamilyHeaderAndLabels) {
  std::string out;
  append_family_header(out, "x_bytes", "gauge", "Bytes\\used\nnow");
  Labels l;
  l.add("gpu", int64_t{3}).add("name", "a\"b").add_untrusted("comm", "c\nd");
  append_sample(out, "x_bytes", l.body(), uint64_t{7});
  EXPECT_EQ(out,
            "# HELP x_bytes Bytes\\\\used\\nnow\n# TYPE x_bytes gauge\n"
            "x_bytes{gpu=\"3\",name=\"a\\\"b\",comm=\"c\\nd\"} 7\n");
}

// serve's Hostname label goes first into every sample line after `from`,
// escaped; comments, the part before `from` and values are left as they are.
TEST(PromText, PrependLabelToEverySampleLineAfterFrom) {
  std::string page =
      "DCGM_X{gpu=\"0\"} 1\n"
      "# HELP gpudoctor_a A {x} y.\n"
      "# TYPE gpudoctor_a gauge\n"
      "gpudoctor_a 2\n"
      "gpudoctor_b{} 3\n"
      "gpudoctor_c{gpu=\"1\",comm=\"a b{\"} 4\n";
  prepend_label(page, page.find('#'), "Hostname", "n\"1\n");
  EXPECT_EQ(page,
            "DCGM_X{gpu=\"0\"} 1\n"
            "# HELP gpudoctor_a A {x} y.\n"
            "# TYPE gpudoctor_a gauge\n"
            "gpudoctor_a{Hostname=\"n\\\"1\\n\"} 2\n"
            "gpudoctor_b{Hostname=\"n\\\"1\\n\"} 3\n"
            "gpudoctor_c{Hostname=\"n\\\"1\\n\",gpu=\"1\",comm=\"a b{\"} 4\n");
  std::string unchanged = "gpudoctor_a 2\n";
  prepend_label(unchanged, unchanged.size(), "Hostname", "n");
  EXPECT_EQ(unchanged, "gpudoctor_a 2\n");
}

}  // namespace
}  // namespace gd::prom
