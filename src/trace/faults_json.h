// Header "faults" (fake-NVML scenarios) is kept as raw JSON text so the fake
// library can interpret a vocabulary that the trace module does not know.
#pragma once

#include <string>
#include <string_view>

namespace gd {

// Raw text of the member `name` of the top-level JSON object `object_text`
// (which must already be known to be valid JSON), exactly as written there;
// empty when there is no such member. Keys written with escapes are matched
// by their decoded value.
std::string_view raw_top_level_member(std::string_view object_text,
                                      std::string_view name);

// Appends `raw` (TraceHeader::faults_json) verbatim, except that line breaks
// become spaces: outside strings they are only whitespace, and inside strings
// valid JSON cannot hold them raw, so a trace line stays one line. Throws
// TraceError when `raw` is not valid JSON, rather than write a trace that
// nobody can read back.
void append_faults_json(std::string& out, std::string_view raw);

}  // namespace gd
