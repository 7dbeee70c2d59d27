// diagnose --prometheus --html: the fleet as one self-contained HTML page
// (inline CSS and JS, uPlot inlined, nothing fetched at view time): a heat
// map of the worst severity per node and time bucket, the findings most
// severe first, and per node the charts of the series its findings are
// about, each series downsampled to at most kFleetChartPoints.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "model/sample.h"
#include "views/fleet_report.h"

namespace gd {

// Points per chart series: a node's charts stay this size however long the
// window or short the step.
inline constexpr size_t kFleetChartPoints = 300;
// GPU series per chart (the lowest indices).
inline constexpr size_t kFleetChartGpus = 16;
// Time buckets of the heat map.
inline constexpr size_t kFleetHeatBuckets = 96;

// One chart: shared times (Unix seconds) and its series (NaN: no data).
struct FleetChart {
  std::string key;    // "temp", "clock", ... (fleet_chart_keys)
  std::string title;  // "GPU temperature (°C)"
  std::vector<double> t;
  std::vector<std::string> labels;          // "GPU 0", "swap used", ...
  std::vector<std::vector<double>> values;  // [series][point]
};

// The charts behind one node's findings.
struct FleetNodeCharts {
  std::vector<FleetChart> charts;
};

// The chart keys behind these findings' ids, in a fixed order, each once
// (an id not known to have a chart gets GPU utilisation).
std::vector<std::string> fleet_chart_keys(const std::vector<Finding>& f);

// Downsamples a node's samples over [start, end] into the charts `keys`
// name: kFleetChartPoints time buckets, each point the mean of the
// bucket's samples; buckets with no sample at all are left out.
class FleetChartBuilder {
 public:
  FleetChartBuilder(double start, double end, std::vector<std::string> keys);
  void add(const Sample& s);
  FleetNodeCharts take();

 private:
  struct Acc {
    std::vector<double> sum;
    std::vector<unsigned> n;
  };
  struct Chart {
    std::string key;
    std::vector<Acc> series;  // by series slot
    std::vector<std::string> labels;
  };
  void put(Chart& c, size_t slot, const std::string& label, size_t bucket,
           double v);
  double start_, end_;
  std::vector<Chart> charts_;
  std::vector<bool> seen_;  // buckets with any sample
};

struct FleetHtmlInput {
  std::string server;  // the Prometheus URL (shown, escaped)
  double start = 0, end = 0;
  const std::vector<FleetNodeOutcome>* nodes = nullptr;
  const std::vector<FleetNodeCharts>* charts = nullptr;  // by node, or empty
  std::string_view uplot_js, uplot_css;
};

// The heat map's cells for one node: kFleetHeatBuckets severities (0 none,
// 1 info, 2 warning, 3 critical); `spanless` set for cells coloured by a
// finding without a time span (it covers the whole window).
struct FleetHeatRow {
  std::vector<int> severity;
  std::vector<bool> spanless;
};
FleetHeatRow fleet_heat_row(const FleetNodeOutcome& node, double start,
                            double end);

// The page. Every string from a node, the server or a finding is escaped.
std::string format_fleet_html(const FleetHtmlInput& in);

}  // namespace gd
