#include "common/cuda_version.h"

#include <charconv>

namespace gd {

namespace {

// Leading decimal number of `text` (consumed); nullopt when none.
std::optional<int> take_number(std::string_view& text) {
  int v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || v < 0) return std::nullopt;
  text.remove_prefix(static_cast<size_t>(end - text.data()));
  return v;
}

}  // namespace

std::optional<CudaVersion> parse_cuda_version(std::string_view text) {
  CudaVersion v;
  int parts = 0;
  while (true) {
    auto n = take_number(text);
    if (!n) return std::nullopt;
    if (parts == 0) v.major = *n;
    if (parts == 1) v.minor = *n;
    ++parts;  // later parts (the patch level) are checked, not kept
    if (text.empty()) return v;
    if (text.front() != '.') return std::nullopt;
    text.remove_prefix(1);
  }
}

std::optional<CudaVersion> cudart_version(std::string_view lib_name) {
  auto slash = lib_name.rfind('/');
  if (slash != std::string_view::npos) lib_name.remove_prefix(slash + 1);
  constexpr std::string_view kStem = "libcudart";
  if (!lib_name.starts_with(kStem)) return std::nullopt;
  auto so = lib_name.find(".so.");
  if (so == std::string_view::npos) return std::nullopt;
  // Between the stem and ".so.": nothing, or pip's "-<hash>"; anything else
  // is another library ("libcudart_static").
  std::string_view tag = lib_name.substr(kStem.size(), so - kStem.size());
  if (!tag.empty() && tag.front() != '-') return std::nullopt;
  return parse_cuda_version(lib_name.substr(so + 4));
}

std::string cuda_runtime_version(const std::vector<std::string>& libs) {
  for (const auto& lib : libs) {
    auto v = cudart_version(lib);
    if (!v) continue;
    std::string text = std::to_string(v->major);
    if (v->minor >= 0) text += "." + std::to_string(v->minor);
    return text;
  }
  return {};
}

}  // namespace gd
