// The live view of `iotail run` on a real terminal (a tmux pane on its own tmux server): while the
// run goes, a status line with a progress bar redraws in place below the scrolling interval lines;
// when it ends, the status line is gone and only the interval lines and the summary remain, none
// wider than 120 columns. On a pipe (every other test) there is no status line. Skips, naming the
// reason, where tmux is missing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <string>
#include <thread>

#include "cli_test_util.h"
#include "nbd_fixture.h"

namespace run_live_view_test {

namespace fs = std::filesystem;
using iotail::testing::FindInPath;

const std::regex kStatus(R"(^\[[#-]{20}\] +\d+% [0-9.]+s left \| read \d+ IOPS)");

int CountMatching(const std::string& screen, const std::regex& re) {
  int n = 0;
  for (const std::string& line : iotail::testing::Lines(screen)) n += std::regex_search(line, re);
  return n;
}

std::string StatusLine(const std::string& screen) {
  for (const std::string& line : iotail::testing::Lines(screen)) {
    if (std::regex_search(line, kStatus)) return line;
  }
  return {};
}

TEST(RunLiveViewTest, StatusLineRedrawsOnATerminalAndIsGoneAfterTheRun) {
  const std::string tmux = FindInPath("tmux");
  if (tmux.empty()) GTEST_SKIP() << "tmux not found (Debian package tmux)";
  const fs::path dir = iotail::testing::MakeScratchDir("iotail_live_view");
  const std::string server = tmux + " -L iotail_test_" + std::to_string(::getpid());
  const std::string command = std::string(IOTAIL_BINARY) +
                              " run --filename=" + (dir / "t").string() +
                              " --size=16m --rw=randread --rate_iops=1000 --runtime=4 "
                              "--time_based --log_hist_msec=250 --status_interval=2s "
                              "--output-format=terse > " +
                              (dir / "summary").string() + "; sleep 30";
  ASSERT_EQ(iotail::testing::RunShell(
                server + " new-session -d -s live -x 160 -y 40 \"" + command + "\"", dir)
                .status,
            0);
  auto capture = [&] {
    return iotail::testing::RunShell(server + " capture-pane -p -t live", dir).out;
  };
  // Mid-run: between two interval lines (every 2 s) the status line keeps moving (every 250 ms).
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  const std::string early = capture();
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  const std::string later = capture();
  EXPECT_EQ(CountMatching(early, kStatus), 1) << early;
  EXPECT_EQ(CountMatching(later, kStatus), 1) << later;
  EXPECT_NE(StatusLine(early), StatusLine(later)) << early << later;  // it moved on
  // After the run.
  std::this_thread::sleep_for(std::chrono::milliseconds(4000));
  const std::string after = capture();
  iotail::testing::RunShell(server + " kill-server", dir);
  EXPECT_EQ(CountMatching(after, kStatus), 0) << after;
  EXPECT_GE(CountMatching(after, std::regex(R"(^\[ +[0-9.]+s\] read )")), 2) << after;
  EXPECT_NE(after.find("SLC1/SLC2: SBK's latency-spread factors"), std::string::npos) << after;
  for (const std::string& line : iotail::testing::Lines(after)) {
    EXPECT_LE(line.size(), 120u) << line;
  }
  EXPECT_FALSE(iotail::testing::ReadFile(dir / "summary").empty());
  fs::remove_all(dir);
}

}  // namespace run_live_view_test
