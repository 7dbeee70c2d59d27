#include "http_client/prometheus_internal.h"

#include <cstdio>
#include <thread>

#include "common/text_cap.h"

namespace gd::http::prom {

std::string number_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

Clock::time_point after(double s) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(s));
}

double seconds_left(Clock::time_point deadline) {
  return std::chrono::duration<double>(deadline - Clock::now()).count();
}

bool pause(double s, const RequestCancel& cancel) {
  const auto until = after(s);
  while (Clock::now() < until) {
    if (cancel.cancelled()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return !cancel.cancelled();
}

std::string key_of(const Labels& labels) {
  std::string key;
  for (const auto& [name, value] : labels)
    key += std::to_string(name.size()) + ":" + name +
           std::to_string(value.size()) + ":" + value;
  return key;
}

std::string capped(std::string_view text, size_t max_bytes) {
  std::string s(text.substr(0, max_bytes + 1));
  cap_text(s, max_bytes, text.size() - s.size());
  return s;
}

Result fail(std::string why) {
  Result r;
  r.error = std::move(why);
  return r;
}

}  // namespace gd::http::prom
