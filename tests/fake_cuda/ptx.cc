#include "ptx.h"

#include <cctype>
#include <cstdio>

namespace fake_cuda {

namespace {

// Skips spaces and // comments.
void skip_blank(std::string_view& s) {
  while (!s.empty()) {
    if (std::isspace(static_cast<unsigned char>(s.front()))) {
      s.remove_prefix(1);
    } else if (s.substr(0, 2) == "//") {
      size_t nl = s.find('\n');
      s.remove_prefix(nl == std::string_view::npos ? s.size() : nl);
    } else {
      return;
    }
  }
}

std::string_view word(std::string_view& s) {
  skip_blank(s);
  size_t n = 0;
  while (n < s.size() && (std::isalnum(static_cast<unsigned char>(s[n])) ||
                          s[n] == '_' || s[n] == '.' || s[n] == '$'))
    ++n;
  std::string_view w = s.substr(0, n);
  s.remove_prefix(n);
  return w;
}

}  // namespace

std::optional<PtxModule> parse_ptx(std::string_view text, std::string* log) {
  auto fail = [&](const std::string& why) -> std::optional<PtxModule> {
    if (log) *log = "ptxas application ptx input: fatal: " + why;
    return std::nullopt;
  };
  PtxModule m;
  size_t v = text.find(".version");
  if (v == std::string_view::npos)
    return fail("no .version directive (not PTX)");
  if (std::sscanf(std::string(text.substr(v, 32)).c_str(), ".version %d.%d",
                  &m.version_major, &m.version_minor) != 2)
    return fail("malformed .version directive");
  size_t t = text.find(".target");
  if (t == std::string_view::npos) return fail("no .target directive");
  if (std::sscanf(std::string(text.substr(t, 32)).c_str(), ".target sm_%d",
                  &m.target_sm) != 1)
    return fail("malformed .target directive");
  size_t pos = 0;
  while ((pos = text.find(".entry", pos)) != std::string_view::npos) {
    std::string_view rest = text.substr(pos + 6);
    pos += 6;
    if (!rest.empty() &&
        !std::isspace(static_cast<unsigned char>(rest.front())))
      continue;
    PtxEntry e;
    e.name = std::string(word(rest));
    skip_blank(rest);
    if (e.name.empty() || rest.empty() || rest.front() != '(')
      return fail("malformed .entry " + e.name);
    rest.remove_prefix(1);
    while (true) {
      skip_blank(rest);
      if (rest.empty()) return fail("unterminated parameter list of " + e.name);
      if (rest.front() == ')') break;
      if (rest.front() == ',') {
        rest.remove_prefix(1);
        continue;
      }
      std::string_view kw = word(rest);
      if (kw != ".param")
        return fail("unexpected '" + std::string(kw) + "' in " + e.name);
      std::string_view type = word(rest);
      if (type.size() < 2 || type.front() != '.')
        return fail("parameter of " + e.name + " has no type");
      e.params.emplace_back(type.substr(1));
      std::string_view pname = word(rest);
      if (pname.empty()) return fail("unnamed parameter in " + e.name);
    }
    m.entries.push_back(std::move(e));
  }
  return m;
}

}  // namespace fake_cuda
