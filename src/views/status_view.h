// `gpudoctor status`: one screen with every GPU and the host beside it.
#pragma once

#include <cstddef>
#include <string>

#include "model/sample.h"

namespace gd {

// Plain text, no colour; `now` is printed in the title line.
// `width` > 0 fits its lines to that many columns (text_table.h:
// fit_lines); 0 leaves them whole.
std::string render_status(const TraceHeader& header, const Sample& sample,
                          size_t width = 0);

// Explains the header's nvml_status to a person ("" when ok).
std::string explain_nvml_status(const TraceHeader& header);

// Words for a clock event reason of trace-format.md.
std::string describe_clock_reason(const std::string& reason);

}  // namespace gd
