// FamilyWriter: one metric family of the page, its HELP/TYPE header written
// only when the first series is (an empty family is noise).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "exporter/prom_text.h"

namespace gd::prom {

// Writes a family whose series are produced by `emit`; the header is
// written only if at least one series is (an empty family is noise).
class FamilyWriter {
 public:
  FamilyWriter(std::string& out, const char* name, const char* type,
               const char* help)
      : out_(out), name_(name), type_(type), help_(help) {}
  void add(std::string_view label_body, double v) {
    header();
    append_sample(out_, name_, label_body, v);
  }
  void add(std::string_view label_body, uint64_t v) {
    header();
    append_sample(out_, name_, label_body, v);
  }
  template <typename T>
  void add_opt(std::string_view label_body, const std::optional<T>& v) {
    if (v) add(label_body, static_cast<double>(*v));
  }

 private:
  void header() {
    if (written_) return;
    append_family_header(out_, name_, type_, help_);
    written_ = true;
  }
  std::string& out_;
  const char* name_;
  const char* type_;
  const char* help_;
  bool written_ = false;
};

}  // namespace gd::prom
