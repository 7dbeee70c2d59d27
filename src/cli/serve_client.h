// ps and a live diagnose ask a running `gpudoctor serve` for its history
// over HTTP (monitor/serve_history.h), and only gpudoctor-full links the
// HTTP client (full_binary.h). serve_client.cc, in gpudoctor-full, asks;
// serve_client_exec.cc, in the lean gpudoctor, hands the command line over
// to gpudoctor-full before the command starts, as top --connect does.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "views/ps_history_view.h"

namespace gd {

// Called first by a command that will ask serve. In gpudoctor-full: returns
// at once. In the lean gpudoctor: replaces the process with gpudoctor-full
// running the same command line; returns only when that cannot be started,
// after a one-line warning naming `what` ("ps --serve"): the command then
// goes on without serve, whose history is optional.
void ask_serve_in_full_binary(std::string_view what);

// A --serve URL ("" and "none" aside: do not ask) that is not
// http[s]://host[:port][/path] is a usage error: throws CLI::ValidationError
// naming `flag`. gpudoctor-full checks with the one URL parser of the HTTP
// clients; the lean gpudoctor (which reaches this only when gpudoctor-full
// could not start) checks the scheme and that a host follows.
void check_serve_url(const char* flag, const std::string& url);

// monitor's fetches in gpudoctor-full; nothing (serve absent) in the lean
// gpudoctor, which reaches them only when gpudoctor-full could not start.
ProcessHistory serve_memory_history(const std::string& base_url,
                                    const std::vector<uint32_t>& pids,
                                    const std::string& since,
                                    const std::string& step);
std::optional<std::string> serve_get(const std::string& base_url,
                                     const std::string& path);

}  // namespace gd
