// `iotail --version` says what the binary is (version, git commit and tree state, compiler, the
// libraries found at build time) and the JSON summary carries the same under iotail_run.build;
// the man pages and completions come from the option tables (cli/command_doc.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "cli/command_doc.h"
#include "cli/commands.h"
#include "cli/option_table.h"
#include "cli_test_util.h"

namespace build_info_test {

namespace fs = std::filesystem;
using iotail::testing::CommandResult;

using BuildInfoTest = iotail::testing::ScratchDirTest;

TEST_F(BuildInfoTest, VersionNamesCommitTreeCompilerAndFeatures) {
  const CommandResult r = iotail::testing::RunIotail("--version", dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto lines = iotail::testing::Lines(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_TRUE(std::regex_match(lines[0], std::regex(R"(iotail \d+\.\d+\.\d+)"))) << lines[0];
  EXPECT_TRUE(std::regex_match(
      lines[1], std::regex(R"(commit: ([0-9a-f]{12}|unknown) \((clean|dirty|unknown)\))")))
      << lines[1];
  EXPECT_TRUE(std::regex_match(lines[2], std::regex(R"(compiler: (GNU|Clang) \d+\.\d+.*)")))
      << lines[2];
  EXPECT_TRUE(lines[3].starts_with("built with: ")) << lines[3];
  EXPECT_NE(lines[3].find("libblkid"), std::string::npos) << lines[3];  // required at build
}

TEST_F(BuildInfoTest, JsonSummaryCarriesTheSameBuild) {
  const CommandResult version = iotail::testing::RunIotail("--version", dir_);
  const CommandResult r = iotail::testing::RunShell(
      "cd " + dir_.string() + " && " + IOTAIL_BINARY +
          " run --name=x --ioengine=null --size=1m --bs=4k --rw=read --output-format=json",
      dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out.substr(r.out.find('{')));
  const auto& build = summary["iotail_run"]["build"];
  const auto lines = iotail::testing::Lines(version.out);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ("iotail " + build["version"].get<std::string>(), lines[0]);
  EXPECT_EQ("commit: " + build["commit"].get<std::string>() + " (" +
                build["tree"].get<std::string>() + ")",
            lines[1]);
  EXPECT_EQ("compiler: " + build["compiler"].get<std::string>(), lines[2]);
  EXPECT_EQ("built with: " + build["features"].get<std::string>(), lines[3]);
  EXPECT_EQ(summary["fio version"], "iotail-" + build["version"].get<std::string>());
}

// Every row of the option table is in the page and in the completion, its aliases too.
TEST(CommandDocTest, RunPageAndCompletionListEveryOptionAndAlias) {
  const iotail::cli::CommandDoc run = iotail::cli::RunDoc();
  const std::string page = iotail::cli::ManPage(run);
  const std::vector<iotail::cli::CommandDoc> docs = iotail::cli::SubcommandDocs();
  const std::string bash = iotail::cli::BashCompletion(docs);
  const std::string zsh = iotail::cli::ZshCompletion(docs);
  for (const auto& name : iotail::cli::RunOptionNames()) {
    std::string roff = "\\-\\-";
    for (char c : name) roff += c == '-' ? std::string("\\-") : std::string(1, c);
    EXPECT_NE(page.find("\\fB" + roff + "\\fR"), std::string::npos) << name;
    EXPECT_NE(bash.find(" --" + std::string(name)), std::string::npos) << name;
    EXPECT_NE(zsh.find("'--" + std::string(name)), std::string::npos) << name;
  }
  EXPECT_NE(bash.find("'run --rw'|'run --readwrite') echo 'read write randread"),
            std::string::npos);
  EXPECT_NE(bash.find("'run --ioengine') echo 'sync psync vsync pvsync pvsync2 io_uring"),
            std::string::npos);
  EXPECT_NE(bash.find("'run --output_format') echo 'normal json json+ terse'"), std::string::npos);
}

TEST(CommandDocTest, ProgramOptionsPagesHaveUsageDescriptionAndOptions) {
  for (const auto& doc : iotail::cli::SubcommandDocs()) {
    if (doc.page == "iotail-run" || doc.page == "iotail-completion") continue;
    SCOPED_TRACE(doc.page);
    if (doc.page == "iotail-sweep") {
      // sweep takes every option of run: its own section first, then run's sections.
      ASSERT_GT(doc.sections.size(), 1u);
      EXPECT_NE(doc.sections[0].title.find("sweep"), std::string::npos) << doc.sections[0].title;
      for (size_t i = 1; i < doc.sections.size(); ++i) {
        EXPECT_TRUE(doc.sections[i].title.starts_with("iotail run: ")) << doc.sections[i].title;
      }
      continue;
    }
    ASSERT_FALSE(doc.synopsis.empty());
    EXPECT_TRUE(doc.synopsis[0].starts_with("iotail ")) << doc.synopsis[0];
    EXPECT_FALSE(doc.description.empty());
    ASSERT_EQ(doc.sections.size(), 1u);
    bool quantum = false;
    for (const auto& o : doc.sections[0].options) quantum |= o.names[0] == "--time-quantum";
    // compare reads two runs (REP[,REP...] of FILE[+FILE...]), not a merged set of logs.
    EXPECT_EQ(quantum, doc.page != "iotail-compare")
        << "the log-input options are part of every command that merges logs";
  }
}

TEST_F(BuildInfoTest, HelpManPrintsEachPageItsBinaryDocuments) {
  for (const std::string command : {"", "run ", "pctiles ", "merge ", "compare ", "plot "}) {
    const CommandResult r = iotail::testing::RunIotail(command + "--help=man", dir_);
    ASSERT_EQ(r.status, 0) << command << r.err;
    std::string page =
        "iotail" + (command.empty() ? "" : "-" + command.substr(0, command.size() - 1));
    std::string upper;
    for (char c : page)
      upper += c == '-' ? std::string("\\-") : std::string(1, static_cast<char>(std::toupper(c)));
    EXPECT_NE(r.out.find(".TH " + upper + " 1 "), std::string::npos) << command;
    for (const char* section : {".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH OPTIONS",
                                ".SH \"EXIT STATUS\"", ".SH \"SEE ALSO\""}) {
      EXPECT_NE(r.out.find(section), std::string::npos) << command << section;
    }
  }
}

}  // namespace build_info_test
