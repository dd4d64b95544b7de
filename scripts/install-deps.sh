#!/usr/bin/env bash
# Installs the Debian packages hbmsim needs, only those that are missing.
# Usage: install-deps.sh [--tests] [--sanitizers] [--slurm] [--browser]
#   (none)        what building the CLI and the Python module needs, plus
#                 ccache and mold, which make every later build faster
#   --tests       gtest, Google Benchmark, rapidcheck, the Python test
#                 suite's pytest, numpy, pandas and distributed, and the
#                 browser test's chromium, chromedriver and selenium
#   --sanitizers  clang and its ASan/UBSan/libFuzzer runtimes (scripts/test-sanitizers.sh)
#   --slurm       a one-node Slurm for the slow test tests/slurm (scripts/slurm-local.sh)
set -euo pipefail
packages=(cmake ninja-build g++ pkg-config ccache mold python3
  libabsl-dev libfmt-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libzstd-dev
  libprotobuf-dev protobuf-compiler zlib1g-dev pybind11-dev python3-dev python3-pip)
for arg in "$@"; do
  case $arg in
    --tests) packages+=(libgtest-dev libgmock-dev libbenchmark-dev librapidcheck-dev
      python3-numpy python3-pandas python3-pytest python3-distributed
      chromium chromium-driver python3-selenium) ;;
    --sanitizers) packages+=(clang libclang-rt-14-dev) ;;
    --slurm) packages+=(slurmctld slurmd slurm-client munge) ;;
    *) echo "install-deps: unknown option $arg (--tests, --sanitizers, --slurm)" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
