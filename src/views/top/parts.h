// Internal to the layout: the pieces of the screen, each building lines of
// a given width.
#pragma once

#include <string>
#include <vector>

#include "views/top/layout.h"

namespace gd::top {

// A horizontal bar of `inner` columns: `fill` of it (0..1) in `style`,
// `extra` more (orphaned memory) in kBarOrphan, `label` right-aligned inside.
void add_bar(LineBuilder& b, const std::string& title, double fill,
             double extra, const std::string& label, int inner, Style style,
             bool unicode);

// Severity -> style and the strip's four-letter word.
Style severity_style(const std::string& severity);
const char* severity_word(const std::string& severity);

// Temperature against the slowdown limit: by margin.
Style temp_style(const GpuInfo* info, const GpuSample& g);
// A share of a limit: warn from `warn`, crit from `crit`.
Style level_style(double share, double warn, double crit);

// GPU panels: 1 line each (compact) or 2-3 (full).
int gpu_panel_lines(const GpuSample* g, bool compact);
void add_gpu_panel(std::vector<Line>& out, const LayoutInput& in,
                   const GpuInfo& info, int width, bool compact);
void add_host_strip(std::vector<Line>& out, const LayoutInput& in, int width);
// The host's RDMA ports on one line (none without ports).
void add_fabric_strip(std::vector<Line>& out, const LayoutInput& in, int width);
// `rows_per_gpu` lines of charts per GPU, with a title line first.
void add_charts(std::vector<Line>& out, const LayoutInput& in, int width,
                int rows_per_gpu);

// Overlays: the body lines (title first).
std::vector<Line> overlay_lines(const LayoutInput& in, int width);

// Text wrapped to `width` columns (untrusted text is made safe first).
std::vector<std::string> wrap_text(const std::string& text, int width);

// "11:54:56" or "2024-11-22 08:00:03" (local time).
std::string clock_text(double t, bool with_date);

}  // namespace gd::top
