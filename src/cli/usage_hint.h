// The one line a usage error prints (main.cc's failure message), with a
// suggestion for a mistyped command or flag: "gpudoctor: unknown command
// 'stauts' (did you mean status? see --help)", "gpudoctor: diagnose: the
// following argument was not expected: --durtion (did you mean --duration?
// see --help)".
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace gd {

std::string usage_failure_message(const CLI::App* app, const CLI::Error& e);

// The names of `app`'s commands (help included), in --help's order.
std::vector<std::string> command_names(const CLI::App& app);

// " (did you mean X?" + " see --help)" when `word` is a likely typo of one
// of `candidates`, else " (see --help)".
std::string see_help(const std::string& word,
                     const std::vector<std::string>& candidates);

}  // namespace gd
