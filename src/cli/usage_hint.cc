#include "cli/usage_hint.h"

#include "common/closest_word.h"
#include "common/terminal_text.h"

namespace gd {
namespace {

// Every flag of `app`: "--duration", "-n", ...
void add_flags(const CLI::App& app, std::vector<std::string>& out) {
  for (const CLI::Option* o : app.get_options()) {
    for (const std::string& l : o->get_lnames()) out.push_back("--" + l);
    for (const std::string& s : o->get_snames()) out.push_back("-" + s);
  }
}

// The tokens of an ExtrasError's message that look like flags.
std::vector<std::string> flag_words(const std::string& what) {
  std::vector<std::string> out;
  const size_t colon = what.find(": ");
  if (colon == std::string::npos) return out;
  size_t at = colon + 2;
  while (at < what.size()) {
    size_t end = what.find(' ', at);
    if (end == std::string::npos) end = what.size();
    std::string word = what.substr(at, end - at);
    if (word.size() > 1 && word[0] == '-')
      out.push_back(word.substr(0, word.find('=')));
    at = end + 1;
  }
  return out;
}

}  // namespace

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::App* sub :
       app.get_subcommands([](const CLI::App*) { return true; }))
    out.push_back(sub->get_name());
  return out;
}

std::string see_help(const std::string& word,
                     const std::vector<std::string>& candidates) {
  const std::string guess = closest_word(word, candidates);
  return guess.empty() ? " (see --help)"
                       : " (did you mean " + guess + "? see --help)";
}

std::string usage_failure_message(const CLI::App* a, const CLI::Error& e) {
  // "A subcommand is required" for `gpudoctor frobnicate`: name the word.
  if (a->get_subcommands().empty() && !a->remaining().empty()) {
    const std::string word = a->remaining().front();
    return "gpudoctor: unknown command '" + terminal_fit(word, 64) + "'" +
           see_help(word, command_names(*a)) + "\n";
  }
  std::string hint = " (see --help)";
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    std::vector<std::string> flags;
    add_flags(*a, flags);
    for (const CLI::App* sub : a->get_subcommands()) add_flags(*sub, flags);
    for (const std::string& word : flag_words(e.what()))
      if (closest_word(word, flags) != "") {
        hint = see_help(word, flags);
        break;
      }
  }
  return "gpudoctor: " + terminal_safe(e.what(), kTerminalSentenceMax) + hint +
         "\n";
}

}  // namespace gd
