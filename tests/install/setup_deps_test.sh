#!/usr/bin/env bash
# Every dependency CMake requires is installed by `scripts/setup.sh --run`, the quickstart's
# set: each find_package(NAME ... REQUIRED) (and each of its COMPONENTS) and each module of a
# pkg_check_modules(PREFIX REQUIRED ...) in the CMakeLists.txt files is traced to the Debian
# package that owns what CMake found (NAME_DIR's config file in the build's cache, the module's
# .pc file; dpkg -S), and that package must be in setup.sh's run_packages or among their
# dependencies (apt-cache depends --recurse). The quickstart failed at configure on a fresh
# machine when CMake came to require nlohmann_json and run_packages lacked nlohmann-json3-dev;
# this fails instead. Threads needs no package (libc, with g++).
# Usage: setup_deps_test.sh SOURCE_DIR BUILD_DIR. Exit 77 (skipped) without dpkg or apt-cache.
set -euo pipefail
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
for tool in dpkg apt-cache pkg-config; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIPPED: $tool is not available (a Debian system is needed)"
    exit 77
  fi
done
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# run_packages=( ... ) of setup.sh, and everything they depend on.
run_packages=$(sed -n '/^run_packages=(/,/)/p' "$src/scripts/setup.sh" | tr -d '()' |
  sed 's/^run_packages=//' | tr -s ' \n' '\n' | grep -v '^$')
[ -n "$run_packages" ] || { echo "FAIL: no run_packages=( ... ) in scripts/setup.sh"; exit 1; }
# shellcheck disable=SC2086
closure=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
  --no-replaces --no-enhances $run_packages 2>/dev/null | grep -v '^ ' | sed 's/:.*//' | sort -u)
closure=$(printf '%s\n%s\n' "$run_packages" "$closure" | sort -u)

# The package owning FILE, without its :arch.
owner() { dpkg -S "$1" 2>/dev/null | head -1 | sed 's/:.*//; s/,.*//'; }
# WHAT (a CMake package or pkg-config module) found at FILE must come from the run set.
check() {
  local what=$1 file=$2 package
  package=$(owner "$file")
  if [ -z "$package" ]; then
    fail "$what: $file belongs to no Debian package (not installed by scripts/setup.sh)"
  elif ! grep -qx "$package" <<<"$closure"; then
    fail "$what: CMake requires it (found in $package), but 'scripts/setup.sh --run' does" \
      "not install $package: add it to run_packages"
  else
    echo "ok: $what <- $package"
  fi
}
cache_value() { sed -n "s|^$1:[A-Z]*=||p" "$build/CMakeCache.txt" | head -1; }
config_file() {
  find "$1" -maxdepth 1 \( -name '*Config.cmake' -o -name '*-config.cmake' \) | head -1
}

cmake_files=$(find "$src" -name CMakeLists.txt -not -path '*/tests/*' -not -path '*/build*')
# find_package(...) and pkg_check_modules(...) calls, each on one line.
calls=$(cat $cmake_files | sed 's/#.*//' | tr '\n' ' ' | grep -oE \
  '(find_package|pkg_check_modules)\([^)]*\)' || true)
checked=0
while read -r call; do
  [ -n "$call" ] || continue
  args=$(sed -E 's/^[a-z_]+\(//; s/\)$//' <<<"$call")
  grep -qw REQUIRED <<<"$args" || continue
  checked=$((checked + 1))
  if [[ $call == find_package* ]]; then
    read -r name rest <<<"$args"
    case $name in
      Threads) echo "ok: Threads <- libc"; continue ;;
      PkgConfig) check PkgConfig "$(cache_value PKG_CONFIG_EXECUTABLE)"; continue ;;
    esac
    dirs=("$name:$(cache_value "${name}_DIR")")
    if grep -qw COMPONENTS <<<"$rest"; then
      for component in $(sed -E 's/.*COMPONENTS//' <<<"$rest"); do
        dirs+=("$name $component:$(cache_value "$(tr 'A-Z' 'a-z' <<<"$name")_${component}_DIR")")
      done
    fi
    for entry in "${dirs[@]}"; do
      what=${entry%%:*} dir=${entry#*:}
      file=$([ -d "$dir" ] && config_file "$dir" || true)
      if [ -z "$file" ]; then
        fail "$what: no config file in the build's cache (${dir:-no _DIR}); cannot trace it"
      else
        check "$what" "$file"
      fi
    done
  else
    keywords='REQUIRED|QUIET|IMPORTED_TARGET|GLOBAL|NO_CMAKE_PATH|NO_CMAKE_ENVIRONMENT_PATH'
    for module in $(sed -E "s/^[A-Za-z_0-9]+//; s/\b($keywords)\b//g" <<<"$args"); do
      module=${module%%[<>=]*}
      file=$(pkg-config --path "$module" 2>/dev/null || true)
      if [ -z "$file" ]; then
        fail "pkg-config $module: not found"
      else
        check "pkg-config $module" "$file"
      fi
    done
  fi
done <<<"$calls"

[ "$checked" -gt 0 ] || fail "no REQUIRED dependency found in the CMakeLists.txt files"
if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all $checked REQUIRED find_package and pkg_check_modules calls: their packages come" \
  "from scripts/setup.sh --run"
