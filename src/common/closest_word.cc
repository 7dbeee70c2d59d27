#include "common/closest_word.h"

#include <algorithm>

namespace gd {
namespace {

constexpr size_t kMaxWord = 64;

// Optimal string alignment distance (Damerau-Levenshtein without
// substrings edited twice).
size_t distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1,
                                     std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] =
          std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

size_t allowed_edits(std::string_view word) {
  // "--" is the same for every flag: not part of what can be mistyped.
  const size_t n =
      word.size() - std::min<size_t>(word.find_first_not_of('-'), word.size());
  return n <= 4 ? 1 : n <= 8 ? 2 : 3;
}

}  // namespace

std::string closest_word(std::string_view word,
                         const std::vector<std::string>& candidates) {
  if (word.empty() || word.size() > kMaxWord) return "";
  std::string best;
  size_t best_distance = allowed_edits(word) + 1;
  for (const std::string& c : candidates) {
    if (c.size() > kMaxWord || c == word) continue;
    const size_t d = distance(word, c);
    if (d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  if (!best.empty()) return best;
  // An abbreviation: the one candidate it begins.
  const size_t letters =
      word.size() - std::min<size_t>(word.find_first_not_of('-'), word.size());
  if (letters < 3) return "";
  std::string only;
  for (const std::string& c : candidates)
    if (c.size() > word.size() && c.compare(0, word.size(), word) == 0) {
      if (!only.empty() && only != c) return "";
      only = c;
    }
  return only;
}

}  // namespace gd
