#!/usr/bin/env bash
# Installs every Debian package asyncdp needs. Idempotent: does nothing when all are present.
# Works as root or through sudo. `--clang` adds Clang and its sanitizer/libFuzzer runtime, which only the
# sanitizer and fuzz builds need (scripts/asan-check.sh, scripts/fuzz-check.sh).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libeigen3-dev libtbb-dev libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev libtomlplusplus-dev nlohmann-json3-dev zlib1g-dev librandom123-dev
  python3-dev pybind11-dev python3-numpy python3-scipy python3-matplotlib python3-pytest  # matplotlib: run_experiments.sh's figures
  python3-venv python3-setuptools python3-pip   # `pip install .` of the Python package (docs/python.md)
  python3-pandas python3-hypothesis   # DataFrames (the Python package, run_experiments.sh's tables); property tests
  libopenmpi-dev openmpi-bin   # the MPI runtime (protocol.runtime = "mpi", docs/mpi.md); optional at build time
  dataset-fashion-mnist
  qemu-user   # an older CPU for the test that a native build refuses it cleanly (scripts/check-cpu-refusal.sh)
)
if [ "${1:-}" = "--clang" ]; then
  packages+=(clang libclang-rt-14-dev)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
