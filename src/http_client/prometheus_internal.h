// What prometheus_api.cc (the HTTP API) and prometheus_remote_read.cc
// (remote read) share: deadlines, the pause between tries, a label set as a
// map key. Internal to the Prometheus client.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "http_client/cancel.h"
#include "http_client/prometheus_api.h"

namespace gd::http::prom {

using Clock = std::chrono::steady_clock;

// "12.500": seconds in the API's text and in messages.
std::string number_text(double v);

Clock::time_point after(double s);
double seconds_left(Clock::time_point deadline);

// Sleeps `s` seconds unless `cancel` ends it sooner; false when cancelled.
bool pause(double s, const RequestCancel& cancel);

// A label set as one key: each name and value with its length first, so no
// two different sets give the same key.
std::string key_of(const Labels& labels);

// `text` cut to `max_bytes` with cap_text's mark of what was cut: a label
// or a server's words kept within the limits.
std::string capped(std::string_view text, size_t max_bytes);

// A failed call's result.
Result fail(std::string why);

}  // namespace gd::http::prom
