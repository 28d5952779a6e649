#!/usr/bin/env bash
# Installs iotail's dependencies from Debian's packages, by need. Idempotent: packages already
# present are skipped. Needs root (or sudo).
#   scripts/setup.sh --run    what building and running iotail needs, nothing else (quickstart.sh)
#   scripts/setup.sh          that, plus what the tests, packaging and benchmarks need
#   scripts/setup.sh --mpi    add Open MPI, to build iotail-mpi (test.sh passes it)
#   --log FILE                apt-get's and dpkg's output appended to FILE instead of shown: one
#                             line per stage here, and FILE's last lines if a stage fails
# (--run --mpi: building and running both binaries.)
set -euo pipefail

# Building and running: compiler, CMake, ninja and the libraries iotail links or includes
# (nlohmann-json3-dev, header-only, reads json+ summaries for `iotail compare`). libnbd is not
# among them: the nbd engine loads it with dlopen when a run uses it (libnbd-dev, for its header,
# comes with the tests' set). Nettle's headers (nettle-dev) for verify=sha*: its library too is
# loaded when a job uses it. zlib1g-dev and libzstd-dev, for replayed traces read compressed (.gz,
# .zst): their headers; the libraries are loaded when a trace is compressed.
run_packages=(
  g++ cmake ninja-build pkg-config
  liburing-dev libaio-dev libboost-program-options-dev libfmt-dev libblkid-dev nlohmann-json3-dev
  nettle-dev zlib1g-dev libzstd-dev
)
# The tests, the golden data, packaging and the benchmarks; and what builds the BPF tracer of
# --explain (optional: without it the build goes on and --explain says why it explains nothing):
# libbpf's headers (libbpf-dev; libbpf1 itself is loaded with dlopen), bpftool for vmlinux.h and
# the skeletons, clang to compile the programs (-target bpf) and llvm to strip them. gzip, zstd
# and blktrace (blktrace, blkparse) make the traces the replay tests read.
test_packages=(
  clang llvm libbpf-dev bpftool make git googletest libgtest-dev nlohmann-json3-dev
  fio python3 python3-numpy python3-pandas
  util-linux hyperfine strace valgrind gzip zstd blktrace
  nbdkit libnbd-bin libnbd-dev fuse3 e2fsprogs fdisk lvm2 mdadm
  prometheus chromium tmux
  dpkg-dev file man-db groff zsh bash-completion lintian
)
mpi_packages=(openmpi-bin libopenmpi-dev)

tests=1 mpi=0 log=
while [ $# -gt 0 ]; do
  case $1 in
    --run) tests=0 ;;
    --mpi) mpi=1 ;;
    --log)
      [ $# -ge 2 ] || { echo "setup: --log needs a file name" >&2; exit 2; }
      log=$2
      shift
      ;;
    *) echo "usage: scripts/setup.sh [--run] [--mpi] [--log FILE]" >&2; exit 2 ;;
  esac
  shift
done
packages=("${run_packages[@]}")
if [ "$tests" -eq 1 ]; then packages+=("${test_packages[@]}"); fi
if [ "$mpi" -eq 1 ]; then packages+=("${mpi_packages[@]}"); fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages already installed"
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
# stage WHAT COMMAND...: says WHAT in one line and runs COMMAND, its output in the log when there
# is one (on failure: the log's last lines, and COMMAND's exit status).
stage() {
  local what=$1
  shift
  if [ -z "$log" ]; then
    echo "setup: $what"
    "$@"
    return
  fi
  echo "setup: $what (output in $log)"
  local status=0
  "$@" >>"$log" 2>&1 || status=$?
  if [ "$status" -ne 0 ]; then
    echo "setup: failed (exit status $status): $*" >&2
    echo "setup: the last lines of $log:" >&2
    tail -n 25 "$log" >&2
    exit "$status"
  fi
}
stage "updating the package lists" "${sudo_cmd[@]}" apt-get update -qq
stage "installing ${#missing[@]} packages and what they need: ${missing[*]}" \
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
