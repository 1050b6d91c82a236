#!/usr/bin/env bash
# End to end: a binary built for this machine's CPU, started on an older CPU, stops with the reason and exit
# code 2 instead of dying with SIGILL (apps/cpu_support.h). The older CPU is qemu-user's "qemu64" model
# (the x86-64 baseline: no SSE4.2, no AVX), which lacks what any -march=native build on a current CPU uses;
# a portable build (ASYNCDP_NATIVE=OFF) must instead run there. Checks the CLI and, when given, the Python
# module (imported by the system interpreter, which runs on the baseline).
# Usage: scripts/check-cpu-refusal.sh NATIVE(ON|OFF) ASYNCDP_BINARY [PYTHON_MODULE_DIR]
set -uo pipefail
native=$1 binary=$2 module_dir=${3:-}
qemu=$(command -v qemu-x86_64) || { echo "check-cpu-refusal: qemu-x86_64 not found (scripts/install-deps.sh installs qemu-user)" >&2; exit 1; }
status=0
expect() {  # expect WHAT EXIT_CODE OUTPUT
  local what=$1 code=$2 output=$3
  if [ "$native" = ON ]; then
    if [ "$code" -ne 2 ] || ! grep -q '^error: this asyncdp was compiled for a CPU with instructions this CPU lacks (' <<<"$output" \
        || ! grep -q -- '-DASYNCDP_NATIVE=OFF' <<<"$output"; then
      echo "check-cpu-refusal: $what on qemu64: expected the refusal and exit code 2, got exit code $code:" >&2
      grep -v "TCG doesn't support" <<<"$output" | head -5 >&2
      status=1
    fi
  elif [ "$code" -ne 0 ]; then
    echo "check-cpu-refusal: $what (a portable build) failed on qemu64 with exit code $code" >&2
    status=1
  fi
}
out=$("$qemu" -cpu qemu64 "$binary" --version 2>&1); expect "asyncdp --version" $? "$out"
if [ -n "$module_dir" ]; then
  out=$(cd / && PYTHONPATH="$module_dir" "$qemu" -cpu qemu64 /usr/bin/python3 -c 'import asyncdp' 2>&1)
  expect "python3 -c 'import asyncdp'" $? "$out"
fi
[ $status -eq 0 ] && echo "check-cpu-refusal: the CLI${module_dir:+ and the Python module} on an older CPU: as expected (native build: $native)"
exit $status
