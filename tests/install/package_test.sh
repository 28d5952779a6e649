#!/usr/bin/env bash
# The Debian packages: cpack builds them from this build tree (dependencies from dpkg-shlibdeps),
# dpkg installs them into a fresh root (--force-depends: the root holds no libraries; the binary
# runs with this machine's), and there `iotail --version` runs, `man -l` shows iotail-run(1) and
# the bash completion offers randread for `iotail run --rw=` (and bash-completion loads it on
# demand, man finds the page by name, PATH the binary); removing them leaves no file.
# lintian reports no error on the packages (a copyright file, gzipped man pages).
# Usage: package_test.sh BUILD_DIR CPACK. Exit 77 (skipped) when a packaging tool is missing.
set -euo pipefail
build=$(cd "$1" && pwd)
cpack=$2
for tool in "$cpack" dpkg dpkg-deb dpkg-shlibdeps man lintian; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIPPED: $tool is not installed (scripts/setup.sh installs dpkg-dev, man-db and lintian)"
    exit 77
  fi
done
bash_completion=/usr/share/bash-completion/bash_completion
if [ ! -f "$bash_completion" ]; then
  echo "SKIPPED: bash-completion is not installed (scripts/setup.sh installs it)"
  exit 77
fi
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/iotail-package-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

"$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/pkg" >"$tmp/cpack.log" 2>&1 ||
  { cat "$tmp/cpack.log"; exit 1; }
deb=$(ls "$tmp"/pkg/iotail_*.deb)
depends=$(dpkg-deb -f "$deb" Depends)
echo "iotail: Depends: $depends"
# Every shared library the binary loads comes from a package in Depends (dpkg -S names it).
needed=$(ldd "$build/iotail" | awk '$3 ~ /^\// {print $3}')
for lib in $needed; do
  package=$(dpkg -S "$lib" 2>/dev/null | head -1 | cut -d: -f1) ||
    package=$(dpkg -S "$(readlink -f "$lib")" | head -1 | cut -d: -f1)
  grep -q "\b${package}\b" <<<"$depends" ||
    fail "iotail loads $lib (package $package), which its Depends lacks: $depends"
done
# With IOTAIL_STATIC_RUNTIME (the default) it loads no C++ library (see CMakeLists.txt).
if grep -q "^IOTAIL_STATIC_RUNTIME:BOOL=ON" "$build/CMakeCache.txt"; then
  for lib in libstdc++ libfmt libboost; do
    ! grep -q "$lib" <<<"$needed" || fail "iotail loads $lib despite IOTAIL_STATIC_RUNTIME"
  done
fi
grep -q "libc6" <<<"$depends" || fail "iotail's Depends lacks libc6: $depends"
debs=("$deb")
packages_built=(iotail)
if [ -x "$build/iotail-mpi" ]; then
  mpi_deb=$(ls "$tmp"/pkg/iotail-mpi_*.deb)
  mpi_depends=$(dpkg-deb -f "$mpi_deb" Depends)
  echo "iotail-mpi: Depends: $mpi_depends"
  for dep in libopenmpi openmpi-bin "iotail (="; do
    grep -qF "$dep" <<<"$mpi_depends" || fail "iotail-mpi's Depends lacks $dep: $mpi_depends"
  done
  debs+=("$mpi_deb")
  packages_built+=(iotail-mpi)
fi
# Debian's policy as lintian checks it: no error (a copyright file, man pages gzipped, ...).
# Warnings and informational tags are printed, not failed.
lint=$(lintian --tag-display-limit 0 "${debs[@]}" 2>&1) || true
[ -z "$lint" ] || echo "$lint"
! grep -q '^E: ' <<<"$lint" || fail "lintian reports errors: $(grep '^E: ' <<<"$lint")"

root=$tmp/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/triggers"
touch "$root/var/lib/dpkg/status" "$root/var/lib/dpkg/available"
dpkg --root="$root" --log=/dev/null --force-depends --force-script-chrootless -i "${debs[@]}" \
  >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; exit 1; }

# As a user would find them: iotail on PATH, its page by name, its completion loaded on demand by
# bash-completion (the root's share/ stands for /usr/share).
[ "$(PATH="$root/usr/bin:$PATH" command -v iotail)" = "$root/usr/bin/iotail" ] ||
  fail "iotail is not found on PATH"
[ "$(MANPATH="$root/usr/share/man" man -w iotail-run)" = "$root/usr/share/man/man1/iotail-run.1.gz" ] ||
  fail "man iotail-run does not find the installed page"
loaded=$(XDG_DATA_DIRS="$root/usr/share" BASH_COMPLETION_USER_DIR="$tmp/none" bash -c \
  'source "$1"; __load_completion iotail && complete -p iotail' _ "$bash_completion") || true
[ "$loaded" = "complete -F _iotail iotail" ] || fail "bash-completion does not load it: $loaded"
version=$("$root/usr/bin/iotail" --version) || fail "the installed iotail --version failed"
head -1 <<<"$version" | grep -qE '^iotail [0-9]+\.[0-9]+\.[0-9]+$' || fail "--version: $version"
grep -q '^commit: ' <<<"$version" || fail "--version names no commit: $version"
page=$(MANWIDTH=100 man -l "$root/usr/share/man/man1/iotail-run.1.gz" 2>&1)
grep -q '^NAME' <<<"$page" && grep -q -- '--rw=' <<<"$page" || fail "man -l iotail-run.1.gz: $page"
for page in iotail iotail-pctiles iotail-merge iotail-plot; do
  [ -s "$root/usr/share/man/man1/$page.1.gz" ] || fail "no $page.1.gz installed"
done
[ -x "$build/iotail-mpi" ] && { [ -x "$root/usr/bin/iotail-mpi" ] && [ -s "$root/usr/share/man/man1/iotail-mpi.1.gz" ] || fail "iotail-mpi or its page not installed"; }
for p in "${packages_built[@]}"; do
  [ -s "$root/usr/share/doc/$p/copyright" ] || fail "no /usr/share/doc/$p/copyright installed"
done
[ -s "$root/usr/share/zsh/vendor-completions/_iotail" ] || fail "no zsh completion installed"
reply=$(bash -c 'source "$1"; COMP_WORDS=(iotail run --rw = ""); COMP_CWORD=4; _iotail
                 printf "%s\n" "${COMPREPLY[@]}"' _ \
          "$root/usr/share/bash-completion/completions/iotail")
grep -qx randread <<<"$reply" || fail "installed completion of 'iotail run --rw=': $reply"

packages=(iotail)
[ -x "$build/iotail-mpi" ] && packages=(iotail-mpi iotail)
dpkg --root="$root" --log=/dev/null --force-depends --force-script-chrootless -P "${packages[@]}" \
  >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; exit 1; }
left=$(find "$root" -type f -not -path "$root/var/lib/dpkg/*")
[ -z "$left" ] || fail "files left after removal: $left"

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "ok: ${#debs[@]} package(s) built, installed, run and removed"
