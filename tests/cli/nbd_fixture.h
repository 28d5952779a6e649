// Targets of known latency and known faults for end-to-end tests (see /work/shared/oracle.md):
// `NbdServer` runs nbdkit on a private Unix socket in a fresh temporary directory, for the nbd
// engine; `NbdFuseMount` runs nbdfuse over `nbdkit -s`, so that the export appears as a regular
// file for the file engines. Both own their processes and directory: the destructor stops the
// processes, reaps them and removes the directory. Neither listens on TCP.
//
// Use from a test (not thread-safe; one owner):
//   if (const std::string why = NbdServer::Unavailable(); !why.empty()) GTEST_SKIP() << why;
//   NbdServer server;
//   ASSERT_EQ(server.Start("--filter=delay memory 64M rdelay=5ms"), "");
//   ... iotail run --ioengine=nbd --uri='server.uri()' ...
//
//   NbdFuseMount mount;
//   if (const std::string why = mount.Start("--filter=delay memory 64M rdelay=5ms"); !why.empty())
//     GTEST_SKIP() << why;
//   ... iotail run --filename=mount.path() ...
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace iotail::testing {

// The full path of `program` found in $PATH, or empty.
inline std::string FindInPath(std::string_view program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + std::string(program);
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

// Splits a command line on blanks (no quoting: the arguments used here need none).
inline std::vector<std::string> SplitArgs(std::string_view args) {
  std::vector<std::string> out;
  std::istringstream in{std::string(args)};
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

// A process started by fork and exec in its own session (so the scheduler's autogroup does not
// make it share CPU time with the process under test), standard input from /dev/null, output
// appended to a log file. It gets `death_signal` if the test process dies first. The destructor
// kills and reaps it if it is still running.
class ChildProcess {
 public:
  ChildProcess() = default;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess() {
    Signal(SIGKILL);
    WaitFor(std::chrono::seconds(5));
  }

  // argv[0] is a full path. Returns an empty string, or why the process could not be started.
  std::string Spawn(const std::vector<std::string>& argv, const std::filesystem::path& log,
                    int death_signal) {
    std::vector<char*> c_argv;
    for (const std::string& a : argv) c_argv.push_back(const_cast<char*>(a.c_str()));
    c_argv.push_back(nullptr);
    const std::string log_path = log.string();
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) return std::string("fork: ") + std::strerror(errno);
    if (pid == 0) {
      ::setsid();
      ::prctl(PR_SET_PDEATHSIG, death_signal);
      if (::getppid() != parent) ::_exit(126);
      const int null_fd = ::open("/dev/null", O_RDONLY);
      const int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (null_fd < 0 || log_fd < 0) ::_exit(126);
      ::dup2(null_fd, 0);
      ::dup2(log_fd, 1);
      ::dup2(log_fd, 2);
      ::execv(c_argv[0], c_argv.data());
      ::_exit(127);
    }
    pid_ = pid;
    return {};
  }

  pid_t pid() const { return pid_; }

  // True while the process has not exited (reaps it when it has).
  bool Running() {
    if (pid_ <= 0) return false;
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == 0) return true;
    if (r == pid_) status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    pid_ = -1;
    return false;
  }

  void Signal(int sig) {
    if (Running()) ::kill(pid_, sig);
  }

  // SIGTERM, then SIGKILL if it has not exited within 2 s; waits up to 5 s more for it.
  void Stop() {
    Signal(SIGTERM);
    if (!WaitFor(std::chrono::seconds(2))) Signal(SIGKILL);
    WaitFor(std::chrono::seconds(5));
  }

  // Waits up to `timeout` for the process to exit; true if it has.
  bool WaitFor(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (Running()) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }

  // Exit status (or 128 + signal) once reaped; -1 before.
  int status() const { return status_; }

 private:
  pid_t pid_ = -1;
  int status_ = -1;
};

// A Unix stream socket bound to `path` (not listening yet), or -1.
inline int BindUnixSocket(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return fd;
  if (fd >= 0) ::close(fd);
  return -1;
}

// A fresh directory /tmp/iotail-nbd-XXXXXX (short, so socket paths stay under 108 bytes).
inline std::filesystem::path MakeShortTempDir() {
  char tmpl[] = "/tmp/iotail-nbd-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) return {};
  return tmpl;
}

// Removes `dir` and everything in it, if it is set; errors are ignored (a destructor's cleanup).
inline void RemoveTree(const std::filesystem::path& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

inline std::string ReadWholeFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// nbdkit serving one export on DIR/sock:
//   nbdkit -U DIR/sock -P DIR/pid -f --exit-with-parent -t 32 ARGS
// with its log in DIR/nbdkit.log. `-t 32`: at least the deepest queue the tests use, so the
// server never queues requests itself (add --log=null to ARGS with the error filter, which logs
// every injected error). Not copyable (it owns its process).
class NbdServer {
 public:
  NbdServer() = default;
  ~NbdServer() {
    if (process_.Running()) process_.Stop();
    RemoveTree(dir_);
  }

  // Why the server cannot run here (nbdkit missing), or empty.
  static std::string Unavailable() {
    if (FindInPath("nbdkit").empty()) return "nbdkit not found in PATH (Debian package nbdkit)";
    return {};
  }

  // Starts nbdkit with ARGS (e.g. "--filter=delay memory 64M rdelay=5ms") and waits up to 5 s
  // until it listens. Returns an empty string, or why it did not start (with nbdkit's log).
  std::string Start(std::string_view args) {
    if (std::string why = Unavailable(); !why.empty()) return why;
    dir_ = MakeShortTempDir();
    if (dir_.empty()) return std::string("mkdtemp: ") + std::strerror(errno);
    socket_ = dir_ / "sock";
    const std::filesystem::path pid_file = dir_ / "pid";
    std::vector<std::string> argv = {FindInPath("nbdkit"),
                                     "-U",
                                     socket_.string(),
                                     "-P",
                                     pid_file.string(),
                                     "-f",
                                     "--exit-with-parent",
                                     "-t",
                                     "32"};
    for (std::string& a : SplitArgs(args)) argv.push_back(std::move(a));
    if (std::string why = process_.Spawn(argv, log(), SIGKILL); !why.empty()) return why;
    // nbdkit writes its pid file after the socket is bound and listening.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (true) {
      std::error_code ec;
      if (std::filesystem::exists(socket_, ec) && std::filesystem::file_size(pid_file, ec) > 0 &&
          !ec) {
        return {};
      }
      if (!process_.Running()) {
        return "nbdkit exited (status " + std::to_string(process_.status()) +
               ") before listening: " + ReadWholeFile(log());
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        return "nbdkit did not listen on " + socket_.string() +
               " within 5 s: " + ReadWholeFile(log());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  // nbd+unix:///?socket=DIR/sock (quote it for the shell: it holds a '?').
  std::string uri() const { return "nbd+unix:///?socket=" + socket_.string(); }
  const std::filesystem::path& socket() const { return socket_; }
  std::filesystem::path log() const { return dir_ / "nbdkit.log"; }
  pid_t pid() { return process_.Running() ? process_.pid() : -1; }

  // SIGKILL, as for a server that dies mid-run; waits until it is gone.
  void Kill() {
    process_.Signal(SIGKILL);
    process_.WaitFor(std::chrono::seconds(5));
  }

 private:
  std::filesystem::path dir_;
  std::filesystem::path socket_;
  ChildProcess process_;
};

// An nbdkit export as the regular file DIR/mnt/disk on a FUSE mount at the directory DIR/mnt:
//   nbdfuse DIR/mnt/disk --command nbdkit -s ARGS
// (nbdfuse stays in the foreground; nbdkit exits with it). The destructor runs
// `fusermount3 -u DIR/mnt`, waits for nbdfuse to exit and removes DIR. Not copyable (it owns its
// process).
class NbdFuseMount {
 public:
  NbdFuseMount() = default;
  ~NbdFuseMount() {
    // Right after an io_uring run the kernel may still hold the file for a moment (the ring is
    // released asynchronously), and fusermount3 fails with EBUSY: retry for up to 5 s.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (Mounted() && std::chrono::steady_clock::now() < deadline) {
      Unmount(false);
      process_.WaitFor(std::chrono::milliseconds(100));
    }
    // nbdfuse exits once unmounted; if it does not, or the mount stayed, stop it by force.
    if (!process_.WaitFor(std::chrono::seconds(2)) || Mounted()) {
      process_.Stop();
      if (Mounted()) Unmount(true);
    }
    if (!Mounted()) RemoveTree(dir_);
  }

  // Why a FUSE mount cannot be tried here (a tool or /dev/fuse missing), or empty.
  static std::string Unavailable() {
    for (const char* tool : {"nbdkit", "nbdfuse", "fusermount3"}) {
      if (FindInPath(tool).empty()) {
        return std::string(tool) + " not found in PATH (Debian packages nbdkit, libnbd-bin, fuse3)";
      }
    }
    struct stat st;
    if (::stat("/dev/fuse", &st) != 0) {
      return std::string("no /dev/fuse (") + std::strerror(errno) +
             "): FUSE is not available in this container";
    }
    return {};
  }

  // Mounts an nbdkit export of `expected_size` bytes started with ARGS (e.g.
  // "--filter=delay memory 64M rdelay=5ms") and waits up to 5 s for DIR/mnt/disk to appear with
  // that size. Returns an empty string, or why not (a reason to skip: mounting FUSE needs root
  // or a working fusermount3 and /dev/fuse).
  std::string Start(std::string_view args, uint64_t expected_size = 64ull << 20) {
    if (std::string why = Unavailable(); !why.empty()) return why;
    dir_ = MakeShortTempDir();
    if (dir_.empty()) return std::string("mkdtemp: ") + std::strerror(errno);
    std::filesystem::create_directory(mount_point());
    std::vector<std::string> argv = {FindInPath("nbdfuse"), path().string(), "--command", "nbdkit",
                                     "-s"};
    for (std::string& a : SplitArgs(args)) argv.push_back(std::move(a));
    // SIGTERM if the test dies: libfuse unmounts on it.
    if (std::string why = process_.Spawn(argv, dir_ / "nbdfuse.log", SIGTERM); !why.empty()) {
      return why;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    uint64_t size = 0;
    while (true) {
      struct stat st;
      if (Mounted() && ::stat(path().c_str(), &st) == 0) {
        size = static_cast<uint64_t>(st.st_size);
        if (size == expected_size) return {};
      }
      const std::string user =
          ::geteuid() == 0 ? "" : " (not root: euid " + std::to_string(::geteuid()) + ")";
      if (!process_.Running()) {
        return "nbdfuse exited (status " + std::to_string(process_.status()) +
               ") without mounting" + user + ": " + ReadWholeFile(dir_ / "nbdfuse.log");
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        return "nbdfuse did not mount " + path().string() + " of " + std::to_string(expected_size) +
               " bytes within 5 s (size seen " + std::to_string(size) + ")" + user + ": " +
               ReadWholeFile(dir_ / "nbdfuse.log");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  // Runs nbdfuse and its nbdkit (every thread) real-time, so that the machine's other load adds no
  // scheduling delay to the latency the export is meant to have.
  void ServeRealTime() const {
    const std::string command =
        "{ for p in $(pgrep -f '" + mount_point().string() +
        "'); do chrt -a -f -p 10 $p; for c in $(pgrep -P $p); do chrt -a -f -p 10 $c; done;"
        " done; } >/dev/null 2>&1";
    (void)std::system(command.c_str());
  }
  // The file to do I/O on: DIR/mnt/disk.
  std::filesystem::path path() const { return mount_point() / "disk"; }
  std::filesystem::path mount_point() const { return dir_ / "mnt"; }

 private:
  // True when DIR/mnt is a mount point (another device than DIR).
  bool Mounted() const {
    if (dir_.empty()) return false;
    struct stat parent, mnt;
    if (::stat(dir_.c_str(), &parent) != 0) return false;
    // A FUSE mount whose server died fails with ENOTCONN: still mounted.
    if (::stat(mount_point().c_str(), &mnt) != 0) return errno == ENOTCONN;
    return mnt.st_dev != parent.st_dev;
  }

  void Unmount(bool lazy) const {
    ChildProcess fusermount;
    std::vector<std::string> argv = {FindInPath("fusermount3"), "-u"};
    if (lazy) argv.push_back("-z");
    argv.push_back(mount_point().string());
    if (fusermount.Spawn(argv, dir_ / "fusermount.log", SIGKILL).empty()) {
      fusermount.WaitFor(std::chrono::seconds(5));
    }
  }

  std::filesystem::path dir_;
  ChildProcess process_;
};

}  // namespace iotail::testing
