// --match '{...}': a PromQL label matcher list that narrows a fleet to some
// of its nodes, checked before it goes into a query (it is user text).
#pragma once

#include <string>

namespace gd::promsource {

// Longest matcher list accepted, in bytes.
inline constexpr size_t kLabelMatcherMax = 1024;

// Checks `text` is `{name OP "value", ...}` (OP one of = != =~ !~; at least
// one matcher; names [a-zA-Z_][a-zA-Z0-9_]*; values double-quoted with \"
// and \\ escapes, no control bytes; a trailing comma allowed). Throws
// std::invalid_argument saying what is wrong.
void check_label_matcher(const std::string& text);

}  // namespace gd::promsource
