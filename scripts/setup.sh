#!/usr/bin/env bash
# Installs every build, test and benchmark dependency of iotail from Debian's packages.
# Idempotent: packages already present are skipped by apt-get. Needs root (or sudo).
set -euo pipefail

packages=(
  g++ clang cmake make pkg-config git
  liburing-dev libaio-dev libboost-program-options-dev libfmt-dev
  googletest libgtest-dev libblkid-dev nlohmann-json3-dev
  fio python3 python3-numpy python3-pandas
  util-linux hyperfine strace
  nbdkit libnbd-bin libnbd-dev fuse3 e2fsprogs fdisk lvm2 mdadm openmpi-bin libopenmpi-dev
  prometheus chromium tmux
)

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

echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
