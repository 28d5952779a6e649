// A real blktrace of a block device for the replay tests: `blktrace -d DEV` when the kernel lets
// it open its relay files in debugfs; else the kernel's ftrace "blk" tracer printing the same
// blk_io_trace records in binary (options/bin), which kernel lockdown (integrity) still allows
// where it forbids blktrace's relay files ("Lockdown: blktrace: debugfs access is restricted").
// Either way the result is DIR/trace.blktrace.CPU files, as blktrace writes them, for blkparse.
// Start mounts debugfs if it is not (blktrace needs it) and says why neither can run (a reason to
// skip); the destructor stops the capture, puts back the ftrace settings it changed and unmounts
// what Start mounted. One owner; needs root.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "tests/cli/cli_test_util.h"

namespace iotail::testing {

class BlockTraceCapture {
 public:
  BlockTraceCapture() = default;
  BlockTraceCapture(const BlockTraceCapture&) = delete;
  BlockTraceCapture& operator=(const BlockTraceCapture&) = delete;
  ~BlockTraceCapture() {
    Stop();
    // What Start mounted goes (tracefs is mounted under debugfs when first looked at); in use by
    // someone else, it stays.
    if (mounted_debugfs_) Shell("umount /sys/kernel/debug/tracing; umount /sys/kernel/debug");
  }

  // Starts tracing `device` (/dev/loopN) into `dir`; empty, or why it cannot (a reason to skip).
  std::string Start(const std::string& device, const std::filesystem::path& dir) {
    dir_ = dir;
    if (::geteuid() != 0) return "needs root for blktrace";
    if (!std::filesystem::exists("/sys/kernel/debug/block")) {
      if (Shell("mount -t debugfs none /sys/kernel/debug").status != 0) {
        return "debugfs is not mounted at /sys/kernel/debug and cannot be";
      }
      mounted_debugfs_ = true;
    }
    const std::string why_not_blktrace = StartBlktrace(device);
    if (why_not_blktrace.empty()) return {};
    const std::string why_not_ftrace = StartFtrace(device);
    if (why_not_ftrace.empty()) return {};
    return "blktrace: " + why_not_blktrace + "; ftrace's blk tracer: " + why_not_ftrace;
  }

  // "blktrace" or "ftrace blk tracer" once started.
  const std::string& method() const { return method_; }

  // Stops the capture; for ftrace, splits the records by CPU into trace.blktrace.CPU. Empty, or
  // what went wrong.
  std::string Stop() {
    if (pid_ <= 0) return {};
    // Let the last completions reach the trace before stopping it.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ::kill(pid_, method_ == "blktrace" ? SIGINT : SIGTERM);
    WaitGone(pid_);
    pid_ = 0;
    if (method_ != "blktrace") {
      RestoreFtrace();
      return SplitByCpu();
    }
    return {};
  }

 private:
  CommandResult Shell(const std::string& command) { return RunShell(command, dir_); }

  // Starts `command` in the background; its pid, or 0.
  pid_t Background(const std::string& command) {
    const CommandResult started = Shell(command + " & echo $!");
    return started.status == 0 ? static_cast<pid_t>(std::atoi(started.out.c_str())) : 0;
  }

  static bool Alive(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string pid_field, comm, state;
    if (!(stat >> pid_field >> comm >> state)) return false;
    return state != "Z" && state != "X";
  }
  static void WaitGone(pid_t pid) {
    for (int i = 0; i < 500 && Alive(pid); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  std::string StartBlktrace(const std::string& device) {
    if (Capture("command -v blktrace").status != 0) return "not installed";
    const std::string log = (dir_ / "blktrace.log").string();
    pid_ = Background("blktrace -d " + device + " -o trace -D " + dir_.string() + " > " + log +
                      " 2>&1");
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    if (pid_ > 0 && Alive(pid_) && ReadFile(log).find("ailed") == std::string::npos) {
      method_ = "blktrace";
      return {};
    }
    if (pid_ > 0) {
      ::kill(pid_, SIGINT);
      WaitGone(pid_);
    }
    pid_ = 0;
    std::string said = ReadFile(log);
    if (const size_t eol = said.find('\n'); eol != std::string::npos) said.resize(eol);
    return said.empty() ? "did not start" : said;
  }

  std::string StartFtrace(const std::string& device) {
    for (const char* candidate : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
      if (std::filesystem::exists(std::string(candidate) + "/trace_pipe")) {
        tracefs_ = candidate;
        break;
      }
    }
    if (tracefs_.empty()) return "no tracefs";
    if (ReadFile(tracefs_ + "/available_tracers").find("blk") == std::string::npos) {
      return "the kernel has no blk tracer";
    }
    if (Trimmed(ReadFile(tracefs_ + "/current_tracer")) != "nop") {
      return "ftrace is in use (current_tracer is not nop)";
    }
    enable_ = "/sys/block/" + std::filesystem::path(device).filename().string() + "/trace/enable";
    saved_bin_ = Trimmed(ReadFile(tracefs_ + "/options/bin"));
    saved_context_ = Trimmed(ReadFile(tracefs_ + "/options/context-info"));
    ftrace_changed_ = true;
    // The per-device switch, the tracer, its records in binary without ftrace's own header.
    if (!Write(enable_, "1") || !Write(tracefs_ + "/current_tracer", "blk") ||
        !Write(tracefs_ + "/options/bin", "1") || !Write(tracefs_ + "/options/context-info", "0") ||
        !Write(tracefs_ + "/trace", "")) {
      RestoreFtrace();
      return "cannot set it up (" + enable_ + ", " + tracefs_ + ")";
    }
    pid_ = Background("cat " + tracefs_ + "/trace_pipe > " + (dir_ / "ftrace.bin").string());
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    if (pid_ <= 0 || !Alive(pid_)) {
      pid_ = 0;
      RestoreFtrace();
      return "cannot read trace_pipe";
    }
    method_ = "ftrace blk tracer";
    return {};
  }

  void RestoreFtrace() {
    if (!ftrace_changed_) return;
    ftrace_changed_ = false;
    Write(tracefs_ + "/options/context-info", saved_context_.empty() ? "1" : saved_context_);
    Write(tracefs_ + "/options/bin", saved_bin_.empty() ? "0" : saved_bin_);
    Write(tracefs_ + "/current_tracer", "nop");
    Write(enable_, "0");
  }

  // ftrace's stream holds every CPU's records; blkparse wants one file per CPU, each holding only
  // records of its CPU (field `cpu` at byte 40; `pdu_len` at 46; native byte order).
  std::string SplitByCpu() {
    const std::string raw = ReadFile(dir_ / "ftrace.bin");
    std::map<uint32_t, std::string> per_cpu;
    size_t at = 0;
    while (at + 48 <= raw.size()) {
      uint32_t cpu;
      uint16_t pdu_len;
      std::memcpy(&cpu, raw.data() + at + 40, 4);
      std::memcpy(&pdu_len, raw.data() + at + 46, 2);
      if (at + 48 + pdu_len > raw.size()) break;
      per_cpu[cpu].append(raw, at, 48 + pdu_len);
      at += 48 + pdu_len;
    }
    if (at != raw.size()) {
      return "ftrace's stream has " + std::to_string(raw.size() - at) +
             " bytes after the last record";
    }
    // A file for every CPU up to the last (blkparse stops at the first missing one), as blktrace
    // writes them: empty for a CPU without records.
    const uint32_t cpus = per_cpu.empty() ? 1 : per_cpu.rbegin()->first + 1;
    for (uint32_t cpu = 0; cpu < cpus; ++cpu) {
      std::ofstream(dir_ / ("trace.blktrace." + std::to_string(cpu)), std::ios::binary)
          << per_cpu[cpu];
    }
    return {};
  }

  static bool Write(const std::string& path, const std::string& value) {
    std::ofstream out(path);
    out << value << '\n';
    out.flush();
    return static_cast<bool>(out);
  }
  static std::string Trimmed(std::string text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return text;
  }

  std::filesystem::path dir_;
  std::string method_;
  pid_t pid_ = 0;
  std::string tracefs_;
  std::string enable_;
  std::string saved_bin_;
  std::string saved_context_;
  bool ftrace_changed_ = false;
  bool mounted_debugfs_ = false;
};

}  // namespace iotail::testing
