#include "views/fleet_html.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <regex>

#include "common/html_text.h"

namespace gd {
namespace {

constexpr double kStart = 1'700'000'000, kEnd = kStart + 3600;

Finding finding(std::string id, std::string severity, double start = 0,
                double end = 0) {
  Finding f;
  f.id = std::move(id);
  f.severity = std::move(severity);
  f.title = "title of " + f.id;
  f.start = start;
  f.end = end;
  return f;
}

FleetNodeOutcome node(std::string name, std::vector<Finding> findings) {
  FleetNodeOutcome n;
  n.node = std::move(name);
  n.checked = true;
  n.findings = std::move(findings);
  return n;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = 0; (at = s.find(what, at)) != std::string::npos;
       at += what.size())
    ++n;
  return n;
}

TEST(HtmlText, EscapesEverythingMarkupCanUse) {
  EXPECT_EQ(html_escape("<script>\"'&</td>"),
            "&lt;script&gt;&quot;&#39;&amp;&lt;/td&gt;");
  // Control and bidi characters are made visible first, invalid UTF-8 too.
  EXPECT_EQ(html_text("a\x1b[2J\xe2\x80\xae<b>\xff"),
            "a\\e[2J\\u202e&lt;b&gt;\\xff");
  EXPECT_EQ(json_in_script(R"(["</script><!--&", "x)"
                           "\xe2\x80\xa8"
                           R"("])"),
            R"(["\u003c/script\u003e\u003c!--\u0026", "x\u2028"])");
}

TEST(FleetHtml, HostileNamesAndTextAreEscaped) {
  Finding f = finding("thermal-throttling", "warning");
  f.title = "<img src=x onerror=alert(1)>";
  f.evidence = "\"</td><script>alert(2)</script>";
  f.action = "<a href=\"http://evil\">x</a>";
  std::vector<FleetNodeOutcome> nodes{
      node("<script>alert(3)</script>", {f}), node("\"</td>", {}),
      node("</script><script>alert(4)</script>", {f})};
  FleetNodeOutcome down;
  down.node = "<iframe>";
  down.why_not = "</li><script>alert(5)</script>";
  nodes.push_back(down);
  FleetChartBuilder b(kStart, kEnd, {"temp"});
  Sample s;
  s.t = kStart + 10;
  GpuSample g;
  g.temp_c = 80;
  s.gpus.push_back(g);
  b.add(s);
  std::vector<FleetNodeCharts> charts{b.take(), {}, {}, {}};
  FleetHtmlInput in;
  in.server = "http://x/<script>";
  in.start = kStart;
  in.end = kEnd;
  in.nodes = &nodes;
  in.charts = &charts;
  in.uplot_js = "var uPlot=function(){};/* '</script>' */";
  in.uplot_css = ".u{}</style><b>";
  const std::string page = format_fleet_html(in);
  // Only our own scripts: the JSON data, uPlot, the page's code.
  EXPECT_EQ(count(page, "<script"), 3u) << page;
  EXPECT_EQ(count(page, "</script"), 3u);
  EXPECT_EQ(count(page, "</style"), 2u);
  EXPECT_EQ(page.find("<img"), std::string::npos);
  EXPECT_EQ(page.find("<iframe"), std::string::npos);
  EXPECT_EQ(page.find("<a href=\"http"), std::string::npos);
  EXPECT_EQ(page.find("\"</td>"), std::string::npos);
  EXPECT_NE(page.find("&lt;script&gt;alert(3)&lt;/script&gt;"),
            std::string::npos);
  EXPECT_NE(page.find("&quot;&lt;/td&gt;"), std::string::npos);
  EXPECT_NE(page.find("&lt;/li&gt;&lt;script&gt;alert(5)"), std::string::npos);
  // Nothing that would be fetched.
  EXPECT_FALSE(
      std::regex_search(page, std::regex(R"((src|href)=["']?https?:)")));
  EXPECT_NE(page.find("Content-Security-Policy"), std::string::npos);
}

TEST(FleetHtml, HeatMapCells) {
  // A warning over the second quarter, a critical without a time span
  // (whole window), on different nodes.
  const FleetNodeOutcome a = node(
      "a", {finding("gpu-imbalance", "warning", kStart + 900, kStart + 1799),
            finding("persistence-mode-off", "info")});
  const FleetHeatRow ra = fleet_heat_row(a, kStart, kEnd);
  ASSERT_EQ(ra.severity.size(), kFleetHeatBuckets);
  const size_t q = kFleetHeatBuckets / 4;
  for (size_t i = 0; i < kFleetHeatBuckets; ++i) {
    const bool in = i >= q && i < 2 * q;
    EXPECT_EQ(ra.severity[i], in ? 2 : 1) << i;
    EXPECT_EQ(ra.spanless[i], !in) << i;
  }
  const FleetHeatRow rb = fleet_heat_row(
      node("b", {finding("xid-error", "critical")}), kStart, kEnd);
  EXPECT_TRUE(std::all_of(rb.severity.begin(), rb.severity.end(),
                          [](int s) { return s == 3; }));
  const FleetHeatRow rc = fleet_heat_row(node("c", {}), kStart, kEnd);
  EXPECT_TRUE(std::all_of(rc.severity.begin(), rc.severity.end(),
                          [](int s) { return s == 0; }));

  std::vector<FleetNodeOutcome> nodes{a, node("c", {})};
  FleetHtmlInput in;
  in.start = kStart;
  in.end = kEnd;
  in.nodes = &nodes;
  const std::string page = format_fleet_html(in);
  EXPECT_EQ(count(page, "<tr class=\"heat-row\""), 2u);
  EXPECT_EQ(count(page, "<td class=\"s2\"></td>"), q);
  EXPECT_EQ(count(page, "<td class=\"s1 w\"></td>"), kFleetHeatBuckets - q);
  EXPECT_EQ(count(page, "<td class=\"s0\"></td>"), kFleetHeatBuckets);
  // The legend names the finding without a time span.
  EXPECT_NE(page.find("whole window (persistence-mode-off)"),
            std::string::npos);
  // Findings most severe first.
  EXPECT_LT(page.find("<td class=\"id\">gpu-imbalance"),
            page.find("<td class=\"id\">persistence-mode-off"));
}

TEST(FleetHtml, ChartsAreBoundedAndFollowTheFindings) {
  EXPECT_EQ(fleet_chart_keys({finding("thermal-throttling", "warning")}),
            (std::vector<std::string>{"temp", "clock"}));
  EXPECT_EQ(fleet_chart_keys({finding("host-swapping", "warning"),
                              finding("something-new", "info")}),
            (std::vector<std::string>{"util", "swap"}));
  EXPECT_TRUE(fleet_chart_keys({}).empty());

  // A day at 1 s with 8 GPUs: 86400 samples, at most 300 points a series.
  const double end = kStart + 86400;
  FleetChartBuilder b(kStart, end, {"temp", "clock", "swap"});
  Sample s;
  s.gpus.resize(8);
  for (int i = 0; i < 8; ++i) s.gpus[i].index = i;
  for (int k = 0; k <= 86400; ++k) {
    s.t = kStart + k;
    for (auto& g : s.gpus) {
      g.temp_c = 50 + (k % 2) * 10;  // means to 55
      g.sm_clock_mhz = 1980;
    }
    s.host.swap_used_bytes = uint64_t{1} << 30;
    b.add(s);
  }
  const FleetNodeCharts c = b.take();
  ASSERT_EQ(c.charts.size(), 3u);
  EXPECT_EQ(c.charts[0].key, "temp");
  EXPECT_EQ(c.charts[0].labels.size(), 8u);
  for (const auto& chart : c.charts) {
    EXPECT_EQ(chart.t.size(), kFleetChartPoints);
    for (const auto& v : chart.values) EXPECT_EQ(v.size(), kFleetChartPoints);
  }
  EXPECT_NEAR(c.charts[0].values[3][100], 55, 0.1);
  EXPECT_EQ(c.charts[2].labels, (std::vector<std::string>{"swap used"}));
  EXPECT_DOUBLE_EQ(c.charts[2].values[0][7], 1.0);

  // Fewer samples than points: no empty buckets, one point per sample.
  FleetChartBuilder few(kStart, kStart + 3600, {"temp"});
  for (int k = 0; k < 10; ++k) {
    s.t = kStart + k * 360;
    few.add(s);
  }
  const FleetNodeCharts fc = few.take();
  ASSERT_EQ(fc.charts.size(), 1u);
  EXPECT_EQ(fc.charts[0].t.size(), 10u);
  // Series with no data are left out; a chart with none at all too.
  FleetChartBuilder nothing(kStart, kEnd, {"pcie"});
  nothing.add(s);
  EXPECT_TRUE(nothing.take().charts.empty());
}

}  // namespace
}  // namespace gd
