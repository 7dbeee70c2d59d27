// Whether a finding's text holds a phrase: the check most diagnosis tests
// make. One definition for all of them (each test file once had its own,
// which a unity build cannot compile together).
#pragma once

#include <string>

namespace gd::test {

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace gd::test
