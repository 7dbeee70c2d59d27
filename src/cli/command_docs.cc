#include "cli/command_docs.h"

#include <algorithm>
#include <stdexcept>

namespace gd {
namespace {

bool visible(const CLI::Option* o) { return !o->get_group().empty(); }

FlagDoc flag_doc(const CLI::Option& o) {
  FlagDoc f;
  for (const auto& l : o.get_lnames()) f.names.push_back("--" + l);
  for (const auto& s : o.get_snames()) f.names.push_back("-" + s);
  if (o.get_items_expected_max() > 0) {
    // CLI11 writes "TEXT:DURATION" for a validated text: the validator's
    // name is the value's kind.
    std::string type = o.get_type_name();
    if (auto colon = type.rfind(':'); colon != std::string::npos)
      type = type.substr(colon + 1);
    // A range validator's name: "(10ms..1h)" is no value kind.
    if (auto blank = type.find(' '); blank != std::string::npos)
      type = type.substr(0, blank);
    f.value = type.empty() ? "VALUE" : type;
  }
  f.description = o.get_description();
  return f;
}

std::vector<const CLI::App*> commands_of(const CLI::App& app);

CommandDoc doc_of(const CLI::App& app, const std::string& name) {
  CommandDoc d;
  d.name = name;
  d.description = app.get_description();
  for (const CLI::Option* o : app.get_options()) {
    if (!visible(o)) continue;
    if (o->get_positional() && !o->nonpositional()) {
      std::string p = o->get_name();
      std::transform(p.begin(), p.end(), p.begin(), ::toupper);
      d.positionals.push_back(p);
      continue;
    }
    d.flags.push_back(flag_doc(*o));
  }
  if (!name.empty())
    for (const CLI::App* sub : commands_of(app))
      d.subcommands.push_back(doc_of(*sub, name + " " + sub->get_name()));
  return d;
}

std::vector<const CLI::App*> commands_of(const CLI::App& app) {
  std::vector<const CLI::App*> out;
  for (const CLI::App* sub :
       app.get_subcommands([](const CLI::App*) { return true; }))
    if (!sub->get_group().empty()) out.push_back(sub);
  return out;
}

// ---- roff -------------------------------------------------------------

// Text as roff shows it: backslashes and minus signs escaped, no line
// that starts with a control character.
std::string roff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    line_start = c == '\n';
    if (c == '\\')
      out += "\\e";
    else if (c == '-')
      out += "\\-";
    else
      out += c;
  }
  return out;
}

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), ::toupper);
  return s;
}

void man_flags(const std::vector<FlagDoc>& flags, std::string& out) {
  for (const FlagDoc& f : flags) {
    out += ".TP\n";
    std::string names;
    for (const auto& n : f.names)
      names +=
          (names.empty() ? "" : ", ") + std::string("\\fB") + roff(n) + "\\fR";
    if (!f.value.empty()) names += " \\fI" + roff(f.value) + "\\fR";
    out += names + "\n" + roff(f.description) + "\n";
  }
}

// ---- shells -----------------------------------------------------------

std::string names_of(const std::vector<FlagDoc>& flags) {
  std::string out;
  for (const FlagDoc& f : flags)
    for (const auto& n : f.names) out += (out.empty() ? "" : " ") + n;
  return out;
}

// A single-quoted shell word.
std::string shell_word(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A description on one line, short: completion menus show one line each.
std::string one_line(const std::string& s, size_t max = 100) {
  std::string out;
  for (char c : s) out += c == '\n' || c == '\t' ? ' ' : c;
  if (out.size() > max) {
    out.resize(max - 3);
    out += "...";
  }
  return out;
}

// zsh's _arguments spec text: brackets and colons are its syntax.
std::string zsh_text(const std::string& s) {
  std::string out;
  for (char c : one_line(s)) {
    if (c == '[' || c == ']' || c == ':' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// The commands' names, blank-separated (docs[0] is gpudoctor itself).
std::string command_words(const std::vector<CommandDoc>& docs) {
  std::string out;
  for (size_t i = 1; i < docs.size(); ++i)
    out += (out.empty() ? "" : " ") + docs[i].name;
  return out;
}

// A command's flags and its subcommands', each name once.
std::vector<FlagDoc> all_flags(const CommandDoc& d) {
  std::vector<FlagDoc> out;
  std::vector<std::string> seen;
  auto add = [&](const std::vector<FlagDoc>& flags) {
    for (const FlagDoc& f : flags) {
      if (std::find(seen.begin(), seen.end(), f.names.front()) != seen.end())
        continue;
      seen.push_back(f.names.front());
      out.push_back(f);
    }
  };
  add(d.flags);
  for (const CommandDoc& s : d.subcommands) add(s.flags);
  return out;
}

}  // namespace

std::vector<CommandDoc> command_docs(const CLI::App& app) {
  std::vector<CommandDoc> out{doc_of(app, "")};
  for (const CLI::App* sub : commands_of(app))
    out.push_back(doc_of(*sub, sub->get_name()));
  return out;
}

std::string man_page(const CLI::App& app, const std::string& command,
                     const std::string& version) {
  const auto docs = command_docs(app);
  auto it = std::find_if(docs.begin(), docs.end(), [&](const CommandDoc& d) {
    return d.name == command;
  });
  if (it == docs.end())
    throw std::invalid_argument("no command '" + command + "'");
  const CommandDoc& d = *it;
  const std::string title =
      command.empty() ? "gpudoctor" : "gpudoctor-" + command;
  std::string out;
  out += ".\\\" Generated by gpudoctor " + roff(version) +
         " from its command table; do not edit.\n";
  // Command names are [a-z-]: the title as it is, as man -k finds it.
  out += ".TH " + upper(title) + " 1 \"\" \"gpudoctor " + roff(version) +
         "\" \"gpudoctor manual\"\n";
  out += ".SH NAME\n" + roff(title) + " \\- " +
         roff(one_line(d.description, 200)) + "\n";
  out += ".SH SYNOPSIS\n\\fBgpudoctor\\fR ";
  if (command.empty()) {
    out += "[\\fIOPTIONS\\fR] \\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n";
  } else {
    out += "\\fB" + roff(command) + "\\fR [\\fIOPTIONS\\fR]";
    for (const auto& p : d.positionals) out += " [\\fI" + roff(p) + "\\fR]";
    out += "\n";
  }
  out += ".SH DESCRIPTION\n" + roff(d.description) + "\n";
  out += ".SH OPTIONS\n";
  man_flags(d.flags, out);
  for (const CommandDoc& s : d.subcommands) {
    out += ".SH " + roff(upper(s.name)) + "\n" + roff(s.description) + "\n";
    man_flags(s.flags, out);
  }
  if (command.empty()) {
    out += ".SH COMMANDS\n";
    for (size_t i = 1; i < docs.size(); ++i)
      out += ".TP\n\\fB" + roff(docs[i].name) + "\\fR\n" +
             roff(docs[i].description) + "\n";
  } else {
    out += ".SH GLOBAL OPTIONS\nThese may come before or after the command.\n";
    man_flags(docs.front().flags, out);
  }
  out += ".SH SEE ALSO\n";
  if (command.empty()) {
    std::string see;
    for (size_t i = 1; i < docs.size(); ++i)
      see += (see.empty() ? "" : ",\n") + std::string("\\fBgpudoctor\\-") +
             roff(docs[i].name) + "\\fR(1)";
    out += see + "\n";
  } else {
    out +=
        "\\fBgpudoctor\\fR(1), \\fBgpudoctor help " + roff(command) + "\\fR\n";
  }
  return out;
}

std::string bash_completion(const CLI::App& app) {
  const auto docs = command_docs(app);
  const std::string commands = command_words(docs);
  std::string out =
      "# bash completion for gpudoctor, generated from its command table\n"
      "_gpudoctor() {\n"
      "  local cur=${COMP_WORDS[COMP_CWORD]} cmd= i\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    case ${COMP_WORDS[i]} in -*) ;; *) cmd=${COMP_WORDS[i]}; break ;; "
      "esac\n"
      "  done\n"
      "  local global=" +
      shell_word(names_of(docs.front().flags)) +
      "\n"
      "  if [[ -z $cmd ]]; then\n"
      "    if [[ $cur == -* ]]; then\n"
      "      COMPREPLY=($(compgen -W \"$global\" -- \"$cur\"))\n"
      "    else\n"
      "      COMPREPLY=($(compgen -W " +
      shell_word(commands) +
      " -- \"$cur\"))\n"
      "    fi\n"
      "    return\n"
      "  fi\n"
      "  local flags= words=\n"
      "  case $cmd in\n";
  for (size_t i = 1; i < docs.size(); ++i) {
    std::string words = names_of(docs[i].flags);
    for (const CommandDoc& s : docs[i].subcommands)
      words +=
          " " + s.name.substr(s.name.rfind(' ') + 1) + " " + names_of(s.flags);
    // help and a command of commands complete words, not files.
    const bool words_only =
        docs[i].name == "help" || !docs[i].subcommands.empty();
    if (docs[i].name == "help") words += " " + commands;
    out += "    " + docs[i].name + ") flags=" + shell_word(words) +
           (words_only ? "; words=1" : "") + " ;;\n";
  }
  out +=
      "  esac\n"
      "  if [[ $cur == -* || -n $words ]]; then\n"
      "    COMPREPLY=($(compgen -W \"$flags $global\" -- \"$cur\"))\n"
      "  else\n"
      "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
      "  fi\n"
      "}\n"
      "complete -o filenames -F _gpudoctor gpudoctor\n";
  return out;
}

std::string zsh_completion(const CLI::App& app) {
  const auto docs = command_docs(app);
  auto specs = [](const std::vector<FlagDoc>& flags) {
    std::string out;
    for (const FlagDoc& f : flags)
      for (const auto& n : f.names) {
        std::string spec = n + "[" + zsh_text(f.description) + "]";
        if (!f.value.empty()) spec += ":" + zsh_text(f.value) + ":_files";
        out += " \\\n      " + shell_word(spec);
      }
    return out;
  };
  std::string out =
      "#compdef gpudoctor\n"
      "# zsh completion for gpudoctor, generated from its command table\n"
      "_gpudoctor() {\n"
      "  local -a commands\n"
      "  commands=(\n";
  for (size_t i = 1; i < docs.size(); ++i) {
    std::string item = docs[i].name + ":";
    for (char c : one_line(docs[i].description))
      item += c == ':' ? std::string("\\:") : std::string(1, c);
    out += "    " + shell_word(item) + "\n";
  }
  out +=
      "  )\n"
      "  if (( CURRENT == 2 )); then\n"
      "    _describe -t commands 'gpudoctor command' commands\n"
      "    return\n"
      "  fi\n"
      "  case $words[2] in\n";
  for (size_t i = 1; i < docs.size(); ++i)
    out += "    " + docs[i].name + ")\n      _arguments" +
           specs(all_flags(docs[i])) + specs(docs.front().flags) +
           " \\\n      '*:file:_files' ;;\n";
  out +=
      "  esac\n"
      "}\n"
      "_gpudoctor \"$@\"\n";
  return out;
}

std::string fish_completion(const CLI::App& app) {
  const auto docs = command_docs(app);
  const std::string commands = command_words(docs);
  std::string out =
      "# fish completion for gpudoctor, generated from its command table\n"
      "complete -c gpudoctor -f\n";
  auto flag_lines = [&](const std::vector<FlagDoc>& flags,
                        const std::string& when) {
    for (const FlagDoc& f : flags) {
      std::string line = "complete -c gpudoctor -n " + shell_word(when);
      for (const auto& n : f.names)
        line +=
            n.rfind("--", 0) == 0 ? " -l " + n.substr(2) : " -s " + n.substr(1);
      if (!f.value.empty()) line += " -r -F";
      line += " -d " + shell_word(one_line(f.description));
      out += line + "\n";
    }
  };
  for (size_t i = 1; i < docs.size(); ++i)
    out += "complete -c gpudoctor -n '__fish_use_subcommand' -a " +
           docs[i].name + " -d " + shell_word(one_line(docs[i].description)) +
           "\n";
  flag_lines(docs.front().flags, "true");
  for (size_t i = 1; i < docs.size(); ++i) {
    flag_lines(all_flags(docs[i]),
               "__fish_seen_subcommand_from " + docs[i].name);
    for (const CommandDoc& s : docs[i].subcommands)
      out += "complete -c gpudoctor -n " +
             shell_word("__fish_seen_subcommand_from " + docs[i].name) +
             " -a " + s.name.substr(s.name.rfind(' ') + 1) + " -d " +
             shell_word(one_line(s.description)) + "\n";
    if (docs[i].name == "help")
      out += "complete -c gpudoctor -n '__fish_seen_subcommand_from help' -a " +
             shell_word(commands) + "\n";
  }
  return out;
}

}  // namespace gd
