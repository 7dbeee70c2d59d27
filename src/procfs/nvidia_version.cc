#include "procfs/nvidia_version.h"

#include "procfs/text_util.h"

namespace gd::procfs {

namespace {

// "535.129.03", "384.98", "346.47": digits and dots, starting with a digit.
bool is_version(std::string_view v) {
  if (v.empty() || v.size() > 32 || v[0] < '0' || v[0] > '9') return false;
  for (char c : v)
    if (!(c == '.' || (c >= '0' && c <= '9'))) return false;
  return true;
}

}  // namespace

std::optional<std::string> parse_nvidia_version(std::string_view text) {
  std::string_view line;
  if (!next_line(text, line) || !line.starts_with("NVRM version:"))
    return std::nullopt;
  constexpr std::string_view kModule = "Kernel Module";
  size_t at = line.find(kModule);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + kModule.size());
  // The open module adds "for <arch>" before the version.
  std::string_view word = next_field(rest);
  if (word == "for") {
    next_field(rest);
    word = next_field(rest);
  }
  if (!is_version(word)) return std::nullopt;
  return std::string(word);
}

std::optional<std::string> read_nvidia_kernel_module_version(
    const std::string& proc_root) {
  std::string buf;
  if (!read_file(proc_root + "/driver/nvidia/version", buf))
    return std::nullopt;
  return parse_nvidia_version(buf);
}

}  // namespace gd::procfs
