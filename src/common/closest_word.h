// "did you mean --duration?": the candidate a mistyped word most likely
// meant, for the one-line usage errors of the command line.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gd {

// The candidate nearest to `word` by edit distance (a character inserted,
// deleted, replaced, or two neighbours swapped), when near enough to be a
// typo: at most 1 edit for words of up to 4 characters, 2 up to 8, 3
// beyond; or the one candidate that `word` (3 characters or more) begins.
// "" when none is. Ties go to the earlier candidate. Words longer than 64
// characters are nobody's typo.
std::string closest_word(std::string_view word,
                         const std::vector<std::string>& candidates);

}  // namespace gd
