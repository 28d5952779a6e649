#include "cli/option_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "cli/option_values.h"
#include "stats/core/errors.h"

namespace iotail::cli {

using stats::UsageError;

namespace {

// "a, b or c" (separator ", ", last " or "), or "a|b|c".
std::string ChoiceList(const OptionDef& def, std::string_view separator,
                       std::string_view last_separator) {
  std::string out;
  for (size_t i = 0; i < def.choices.size(); ++i) {
    if (i > 0) out += i + 1 == def.choices.size() ? last_separator : separator;
    out += def.choices[i].name;
  }
  return out;
}

// Wraps `text` to end before `width` columns when it starts at column `indent`; each continuation
// line is indented to that column too.
std::string Wrap(std::string_view text, size_t indent, size_t width) {
  std::string out;
  size_t column = indent;
  while (!text.empty()) {
    const size_t space = text.find(' ');
    const std::string_view word = text.substr(0, space);
    if (column > indent && column + 1 + word.size() > width) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
    } else if (column > indent) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    text = space == std::string_view::npos ? "" : text.substr(space + 1);
  }
  return out;
}

// What the value looks like, for --help and the docs.
std::string ValueLabel(const OptionDef& def) {
  if (*def.label != '\0') return def.label;
  switch (def.type) {
    case ValueType::kFlag:
      return "";
    case ValueType::kCount:
      return "N";
    case ValueType::kSize:
      return "SIZE";
    case ValueType::kTime:
    case ValueType::kTimeUs:
    case ValueType::kMillis:
      return "TIME";
    case ValueType::kChoice: {
      if (!TakesBareValue(def)) return ChoiceList(def, "|", "|");
      std::string named;  // --help[=markdown]: the choices besides 1 and 0
      for (const OptionChoice& c : def.choices) {
        if (std::string_view(c.name) != "1" && std::string_view(c.name) != "0") {
          named += (named.empty() ? "" : "|") + std::string(c.name);
        }
      }
      return "[=" + named + "]";
    }
    case ValueType::kText:
    case ValueType::kName:
      break;
  }
  return "V";
}

std::string Aliases(const OptionDef& def, std::string_view prefix) {
  std::string out;
  for (const char* a : def.aliases)
    out += fmt::format("{}{}{}", out.empty() ? "" : ", ", prefix, a);
  return out;
}

}  // namespace

std::string OptionValueLabel(const OptionDef& def) { return ValueLabel(def); }

std::vector<std::string> OptionValueWords(const OptionDef& def) {
  std::vector<std::string> words;
  if (def.type == ValueType::kChoice) {
    for (const OptionChoice& c : def.choices) {
      if (std::string_view(c.name) != "1" && std::string_view(c.name) != "0") {
        words.emplace_back(c.name);
      }
    }
    return words;
  }
  if (def.type != ValueType::kText) return words;
  // "read|write|randread; ...", "sync|psync|... (sync ones at depth 1)", "normal|json, or ..."
  const std::string_view help = def.help;
  const size_t end = help.find_first_of(" ;,");
  const std::string_view head = help.substr(0, end);
  if (head.find('|') == std::string_view::npos) return words;
  if (head.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_+|") != std::string_view::npos) {
    return words;
  }
  size_t start = 0;
  while (start <= head.size()) {
    const size_t bar = std::min(head.find('|', start), head.size());
    if (bar > start) words.emplace_back(head.substr(start, bar - start));
    start = bar + 1;
  }
  return words;
}

bool TakesBareValue(const OptionDef& def) {
  if (def.type == ValueType::kFlag) return true;
  return std::any_of(def.choices.begin(), def.choices.end(),
                     [](const OptionChoice& c) { return std::string_view(c.name) == "1"; });
}

std::vector<OptionGroup> AllOptionTables() {
  return {{"What, where and when", CoreOptionTable()},
          {"The engine and its queue", EngineOptionTable()},
          {"How a job does its I/O", IoBehaviourOptionTable()},
          {"Files, their layout and what the writes carry", FileOptionTable()},
          {"Opening files, and the file and directory operations", OpenOptionTable()},
          {"Zones (zonemode)", ZoneOptionTable()},
          {"Trace replay (read_iolog)", ReplayOptionTable()},
          {"Verified writes", VerifyOptionTable()},
          {"Jobs, groups and fio's switches", JobControlOptionTable()},
          {"Outputs, fio's logs and the metrics endpoint", LogOptionTable()},
          {"fio's sampling, seeding, file order and verify_only", FioMiscOptionTable()},
          {"fio's options accepted with no effect in iotail", AcceptedOptionTable()}};
}

namespace {

const OptionDef* FindIn(std::span<const OptionGroup> groups, std::string_view name) {
  for (const OptionGroup& group : groups) {
    for (const OptionDef& d : group.rows) {
      if (name == d.name) return &d;
      for (const char* alias : d.aliases) {
        if (name == alias) return &d;
      }
    }
  }
  return nullptr;
}

void AddNames(std::span<const OptionGroup> groups, std::vector<std::string_view>& names) {
  for (const OptionGroup& group : groups) {
    for (const OptionDef& d : group.rows) {
      names.emplace_back(d.name);
      names.insert(names.end(), d.aliases.begin(), d.aliases.end());
    }
  }
}

}  // namespace

const OptionDef* FindRunOption(std::string_view name, std::span<const OptionGroup> driver) {
  if (const OptionDef* own = FindIn(driver, name)) return own;
  static const std::vector<OptionGroup> run = AllOptionTables();
  return FindIn(run, name);
}

std::vector<std::string_view> RunOptionNames(std::span<const OptionGroup> driver) {
  std::vector<std::string_view> names;
  AddNames(driver, names);
  AddNames(AllOptionTables(), names);
  return names;
}

std::string ParseContext::Substitute(std::string text) const {
  for (const auto& [key, value] : substitutions) {
    for (size_t p = text.find(key); p != std::string::npos; p = text.find(key, p + value.size())) {
      text.replace(p, key.size(), value);
    }
  }
  return text;
}

OptionValue ParseOptionValue(const OptionDef& def, std::string_view given_as,
                             const std::string& text, const ValueContext& context) {
  OptionValue v{given_as, text, 0, context};
  switch (def.type) {
    case ValueType::kFlag:
      v.number = ParseBool(text, given_as) ? 1 : 0;
      break;
    case ValueType::kCount:
      v.number = ParseU32(text, given_as, context);
      if (v.number < def.min || v.number > def.max) {
        throw UsageError(
            fmt::format("--{}: expected {}..{}, got '{}'", given_as, def.min, def.max, text));
      }
      break;
    case ValueType::kSize:
      v.number = static_cast<int64_t>(ParseSize(text, given_as, context));
      break;
    case ValueType::kTime:
      v.number = static_cast<int64_t>(ParseTimeNs(text, given_as, context));
      break;
    case ValueType::kTimeUs: {
      // Bare arithmetic (2*1s) as fio reads it first: its leading number is microseconds too.
      const std::string time =
          FioBareArithmetic(text, given_as, ValueSyntax::kTime, context).value_or(text);
      const bool bare = !time.empty() && std::all_of(time.begin(), time.end(),
                                                     [](char c) { return c >= '0' && c <= '9'; });
      v.number = static_cast<int64_t>(ParseTimeNs(bare ? time + "us" : time, given_as, context));
      break;
    }
    case ValueType::kMillis: {
      const uint64_t ns = ParseTimeNs(text, given_as, context);
      if (ns < 1'000'000 || ns % 1'000'000 != 0) {
        throw UsageError(fmt::format("--{}: expected whole milliseconds, at least 1ms, got '{}'",
                                     given_as, text));
      }
      v.number = static_cast<int64_t>(ns / 1'000'000);
      break;
    }
    case ValueType::kChoice: {
      const auto it = std::find_if(def.choices.begin(), def.choices.end(),
                                   [&](const OptionChoice& c) { return text == c.name; });
      if (it == def.choices.end()) {
        throw UsageError(fmt::format("--{}: expected {}, got '{}'", given_as,
                                     ChoiceList(def, ", ", " or "), text));
      }
      v.number = it->value;
      break;
    }
    case ValueType::kText:
      break;
    case ValueType::kName:
      if (text.empty()) throw UsageError(fmt::format("--{}: empty", given_as));
      break;
  }
  return v;
}

std::string OptionsHelp() { return OptionsHelp(AllOptionTables()); }

std::string OptionsHelp(std::span<const OptionGroup> groups) {
  std::string out;
  for (const OptionGroup& group : groups) {
    out += fmt::format("\n{}:\n", group.title);
    for (const OptionDef& d : group.rows) {
      const std::string label = ValueLabel(d);
      const std::string name =
          std::string(d.name) + (label.empty() || label[0] == '[' ? label : "=" + label);
      std::string help = d.help;
      if (*d.default_value != '\0') help += fmt::format(" (default {})", d.default_value);
      if (!d.aliases.empty()) help += fmt::format(" [also {}]", Aliases(d, "--"));
      constexpr size_t kHelpColumn = 33;
      if (name.size() + 4 > kHelpColumn) {
        out +=
            fmt::format("  --{}\n{:<{}}{}\n", name, "", kHelpColumn, Wrap(help, kHelpColumn, 100));
      } else {
        out += fmt::format("  --{:<{}}{}\n", name, kHelpColumn - 4, Wrap(help, kHelpColumn, 100));
      }
    }
  }
  return out;
}

std::string OptionsMarkdown() {
  std::string out =
      "# iotail run: every option\n\n"
      "Generated from the option table (`cli/option_table.h`); a test keeps this file equal to it\n"
      "(to regenerate: `build/iotail run --help=markdown > docs/run-options.md`). Options take\n"
      "fio's names and values; *run* options apply to the whole run and are given on the command\n"
      "line only, *job* options to their job (or, before the first `--name` and in `[global]`,\n"
      "to every job).\n";
  for (const OptionGroup& group : AllOptionTables()) {
    out += fmt::format(
        "\n## {}\n\n| option | also | value | default | meaning | applies to |\n"
        "|---|---|---|---|---|---|\n",
        group.title);
    for (const OptionDef& d : group.rows) {
      std::string label = ValueLabel(d);
      if (label.empty()) label = "flag";
      if (label[0] == '[') label = "flag, or " + label.substr(2, label.size() - 3);
      std::string help = d.help;
      std::string escaped;
      for (char c : help) escaped += c == '|' ? std::string("\\|") : std::string(1, c);
      for (char& c : label) c = c == '|' ? '/' : c;
      out += fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", d.name, Aliases(d, ""), label,
                         d.default_value, escaped, d.scope == OptionScope::kRun ? "run" : "job");
    }
  }
  return out;
}

}  // namespace iotail::cli
