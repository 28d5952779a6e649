// `iotail completion bash|zsh`: the completion scripts, rendered from every command's CommandDoc
// (cli/command_doc.h), so that they complete exactly the options and choices the parsers take.
#include <fmt/format.h>

#include <ostream>

#include "cli/command_doc.h"
#include "cli/commands.h"
#include "stats/core/errors.h"

namespace iotail::cli {

namespace {

std::string Join(const std::vector<std::string>& words, std::string_view separator = " ") {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : std::string(separator)) + w;
  return out;
}

// The command's name as typed after `iotail` ("run" for page "iotail-run").
std::string CommandName(const CommandDoc& doc) { return doc.page.substr(doc.page.find('-') + 1); }

// bash: the words of an option (those taking a value end in '=', so the value follows).
std::string BashOptionWords(const CommandDoc& doc) {
  std::vector<std::string> words;
  for (const OptionSection& s : doc.sections) {
    for (const OptionDoc& o : s.options) {
      for (const std::string& name : o.names) {
        if (!name.starts_with("--")) continue;
        words.push_back(o.value.empty() || o.value_optional ? name : name + "=");
      }
    }
  }
  return Join(words);
}

// bash: `case` arms giving each option's value words (choices), or "-" for an option that takes a
// value of its own (a file, a size: the shell completes files), keyed by "COMMAND OPTION".
std::string BashValueCases(std::span<const CommandDoc> commands) {
  std::string out;
  for (const CommandDoc& doc : commands) {
    for (const OptionSection& s : doc.sections) {
      for (const OptionDoc& o : s.options) {
        if (o.value.empty()) continue;
        std::vector<std::string> keys;
        for (const std::string& n : o.names)
          keys.push_back(fmt::format("'{} {}'", CommandName(doc), n));
        out += fmt::format("    {}) echo '{}' ;;\n", Join(keys, "|"),
                           o.words.empty() ? "-" : Join(o.words));
      }
    }
  }
  return out;
}

constexpr const char* kBashBody = R"BASH(
# An option's value words under its name as typed or in the other spelling (fio's underscores,
# or dashes: --output-format is --output_format).
_iotail_lookup() {
  local name=${2#--} words
  words=$(_iotail_values "$1" "$2")
  [[ -z $words ]] && words=$(_iotail_values "$1" "--${name//-/_}")
  [[ -z $words ]] && words=$(_iotail_values "$1" "--${name//_/-}")
  printf '%s' "$words"
}
# The current word, with "--opt=" arriving as one word or split at '=' (COMP_WORDBREAKS).
_iotail() {
  local cword=$COMP_CWORD cur=${COMP_WORDS[COMP_CWORD]} opt='' val='' joined=0
  if [[ $cur == --*=* ]]; then
    opt=${cur%%=*} val=${cur#*=} joined=1
  elif [[ $cur == = ]] && (( cword >= 1 )); then
    opt=${COMP_WORDS[cword-1]}
  elif (( cword >= 2 )) && [[ ${COMP_WORDS[cword-1]} == = ]]; then
    opt=${COMP_WORDS[cword-2]} val=$cur
  fi
  COMPREPLY=()
  if (( cword == 1 )); then
    COMPREPLY=($(compgen -W "$_iotail_commands --help --version" -- "$cur"))
    return 0
  fi
  local cmd=${COMP_WORDS[1]} words
  if [[ -z $opt && $cur != -* ]] && (( cword >= 3 )); then
    # "--opt VALUE": the previous word is an option that takes a value.
    words=$(_iotail_lookup "$cmd" "${COMP_WORDS[cword-1]}")
    [[ -n $words ]] && opt=${COMP_WORDS[cword-1]} val=$cur
  fi
  if [[ -n $opt ]]; then
    words=$(_iotail_lookup "$cmd" "$opt")
    if [[ -n $words && $words != - ]]; then
      COMPREPLY=($(compgen -W "$words" -- "$val"))
      if (( joined )); then COMPREPLY=("${COMPREPLY[@]/#/$opt=}"); fi
    else
      COMPREPLY=($(compgen -f -- "$val"))
      if (( joined )); then COMPREPLY=("${COMPREPLY[@]/#/$opt=}"); fi
    fi
    return 0
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_iotail_options "$cmd")" -- "$cur"))
    if [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *= ]]; then
      compopt -o nospace 2>/dev/null
    fi
    return 0
  fi
  if [[ $cmd == completion ]]; then
    COMPREPLY=($(compgen -W "bash zsh" -- "$cur"))
    return 0
  fi
  compopt -o filenames 2>/dev/null
  COMPREPLY=($(compgen -f -- "$cur"))
  return 0
}
complete -F _iotail iotail
)BASH";

// zsh: text inside single quotes and inside an _arguments description's brackets.
std::string ZshQuote(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else if (c == '[' || c == ']' || c == ':' || c == '\\') {
      out += '\\';
      out += c;
    } else {
      out += c;
    }
  }
  return out;
}

std::string ZshArguments(const CommandDoc& doc) {
  std::string out;
  for (const OptionSection& s : doc.sections) {
    for (const OptionDoc& o : s.options) {
      std::string help = o.help.substr(0, o.help.find(". "));
      if (help.size() > 70) {
        help.resize(67);  // (not substr + "...": GCC 12's -Warray-bounds misfires on it at -O2)
        help += "...";
      }
      const std::string action = o.words.empty() ? "_files" : fmt::format("({})", Join(o.words));
      for (const std::string& name : o.names) {
        if (o.value.empty()) {
          out += fmt::format("    '{}[{}]' \\\n", name, ZshQuote(help));
        } else if (!name.starts_with("--")) {  // -o VALUE
          out += fmt::format("    '{}+[{}]:value:{}' \\\n", name, ZshQuote(help), action);
        } else {
          out += fmt::format("    '{}={}[{}]:value:{}' \\\n", name, o.value_optional ? "-" : "",
                             ZshQuote(help), action);
        }
      }
    }
  }
  return out;
}

}  // namespace

std::string BashCompletion(std::span<const CommandDoc> commands) {
  std::vector<std::string> names;
  std::string options;
  for (const CommandDoc& doc : commands) {
    names.push_back(CommandName(doc));
    options += fmt::format("    {}) echo '{}' ;;\n", CommandName(doc), BashOptionWords(doc));
  }
  return fmt::format(
      "# bash completion for iotail: generated by `iotail completion bash` from its option "
      "tables.\n"
      "_iotail_commands='{}'\n"
      "_iotail_options() {{\n  case $1 in\n{}  esac\n}}\n"
      "# The words of an option's value: its choices, '-' for a value of its own (files).\n"
      "_iotail_values() {{\n  case \"$1 $2\" in\n{}  esac\n}}\n{}",
      Join(names), options, BashValueCases(commands), kBashBody);
}

std::string ZshCompletion(std::span<const CommandDoc> commands) {
  std::string out =
      "#compdef iotail\n"
      "# zsh completion for iotail: generated by `iotail completion zsh` from its option tables.\n";
  std::string arms, command_list;
  for (const CommandDoc& doc : commands) {
    const std::string name = CommandName(doc);
    std::string fn = name;
    out += fmt::format("_iotail_{}() {{\n  _arguments -S \\\n{}    '*:file:_files'\n}}\n", fn,
                       ZshArguments(doc));
    arms += fmt::format("        {}) _iotail_{} ;;\n", name, fn);
    command_list += fmt::format("      '{}:{}'\n", name, ZshQuote(doc.summary));
  }
  out += fmt::format(
      "_iotail() {{\n"
      "  local curcontext=\"$curcontext\" state line\n"
      "  _arguments -C '(- *)--version[the version and build]' '(- *)--help[the commands]' \\\n"
      "    '1:command:->command' '*::argument:->argument'\n"
      "  case $state in\n"
      "    command)\n"
      "      local -a commands\n      commands=(\n{}      )\n"
      "      _describe -t commands 'iotail command' commands ;;\n"
      "    argument)\n      case $line[1] in\n{}      esac ;;\n"
      "  esac\n}}\n"
      "_iotail \"$@\"\n",
      command_list, arms);
  return out;
}

CommandDoc CompletionDoc() {
  CommandDoc doc;
  doc.page = "iotail-completion";
  doc.summary = "print the bash or zsh completion script";
  doc.synopsis = {"iotail completion bash|zsh"};
  doc.operands = "bash zsh";
  return doc;
}

int CompletionCommand(CommandArgs args, std::ostream& out, std::ostream&) {
  const std::string_view shell = args.size() >= 2 ? std::string_view(args[1]) : "";
  if (shell == "--help" || shell == "-h") {
    out << "usage: iotail completion bash|zsh\n\nPrints the completion script of that shell:\n"
           "  source <(iotail completion bash)\n";
    return 0;
  }
  const std::vector<CommandDoc> docs = SubcommandDocs();
  if (shell == "bash") {
    out << BashCompletion(docs);
  } else if (shell == "zsh") {
    out << ZshCompletion(docs);
  } else {
    throw stats::UsageError(fmt::format("completion: expected bash or zsh, got '{}'", shell));
  }
  return 0;
}

}  // namespace iotail::cli
