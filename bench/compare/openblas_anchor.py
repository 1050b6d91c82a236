"""The honest anchor of bench/compare/compare.py: which BLAS the torch side runs on, and that the header
says so. Debian's torch calls the system BLAS; compare.py re-executes itself with OpenBLAS first on
LD_LIBRARY_PATH, without the variables some hosts set that pin OpenBLAS to another CPU's kernels (unset for
the torch side only: the asyncdp processes get the caller's environment back), with the kernels the CPU's
flags allow where OpenBLAS by itself falls back to older ones, and it names the CPU model, the BLAS library
and OpenBLAS's kernel set in its header (compare.py's docstring, "BLAS"). No torch needed here:
python/tests/test_compare_anchor.py tests these decisions."""

import os
import subprocess
import sys

OPENBLAS_DIRS = ["/usr/lib/x86_64-linux-gnu/openblas-pthread", "/usr/lib/aarch64-linux-gnu/openblas-pthread"]

# Variables some hosts set that pin OpenBLAS to another CPU's kernels or cache size (seen: OPENBLAS_CORETYPE=
# Haswell, OPENBLAS_L2_SIZE=512 on an AVX-512 Xeon); with them torch runs slower than this CPU allows and
# every ratio against it is inflated. They are unset for the torch side only (this process after the
# re-exec) and given back to the asyncdp processes, whose Eigen kernels never read them.
OPENBLAS_OVERRIDES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
SAVED_PREFIX = "ASYNCDP_COMPARE_SAVED_"
FORCED_CORE = "ASYNCDP_COMPARE_FORCED_CORE"

# OpenBLAS's fallback kernel sets, older than AVX2. On a CPU its table does not know, OpenBLAS picks one of
# these whatever the CPU can do: 0.3.21 (Debian 12) chose Prescott (SSE3) on an Intel Xeon of family 6
# model 207 (Emerald Rapids, AVX-512; 2026-12-04), which would slow torch and inflate every ratio.
PRE_AVX2_CORES = {"Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Katmai", "Coppermine", "Northwood",
                  "Banias", "Atom", "Sandybridge"}


def cpu_flags():
    """The flags of /proc/cpuinfo's first CPU (empty where there is none)."""
    try:
        with open("/proc/cpuinfo") as info:
            return next((line.split(":", 1)[1].split() for line in info if line.startswith("flags")), [])
    except OSError:
        return []


def best_openblas_core(flags):
    """The OpenBLAS kernel set CPU flags `flags` allow (an OPENBLAS_CORETYPE name), or None."""
    if "avx512f" in flags:
        return "Cooperlake" if "avx512_bf16" in flags else "SkylakeX"
    if "avx2" in flags and "fma" in flags:
        return "Haswell"
    return None


def detected_openblas_core(directory, env):
    """The kernel set OpenBLAS in `directory` chooses by itself under `env` (a fresh interpreter, so this
    process loads no BLAS before its re-exec), or None."""
    probe = ("import ctypes, sys; f = ctypes.CDLL(sys.argv[1]).openblas_get_corename; "
             "f.restype = ctypes.c_char_p; print(f().decode())")
    library = os.path.join(directory, "libopenblas.so.0")
    try:
        out = subprocess.run([sys.executable, "-c", probe, library], env=env, capture_output=True, text=True,
                             timeout=60, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def reexec_with_openblas(threads, keep_overrides=False):
    """Re-executes this script for the torch side: OpenBLAS first on LD_LIBRARY_PATH if installed, with as
    many OpenBLAS threads as the comparison's --threads (torch's BLAS calls get the same cores as its other
    kernels and as asyncdp), and without OPENBLAS_OVERRIDES (kept aside for asyncdp_environment)."""
    if os.environ.get("ASYNCDP_COMPARE_BLAS"):
        return
    env = dict(os.environ, ASYNCDP_COMPARE_BLAS="system")
    for name in OPENBLAS_OVERRIDES if not keep_overrides else ():
        if name in env:
            env[SAVED_PREFIX + name] = env.pop(name)
    for directory in OPENBLAS_DIRS:
        if os.path.exists(os.path.join(directory, "libblas.so.3")):
            env.update(ASYNCDP_COMPARE_BLAS=directory, OPENBLAS_NUM_THREADS=str(threads),
                       LD_LIBRARY_PATH=directory + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""))
            if "OPENBLAS_CORETYPE" not in env:
                # OpenBLAS's own choice, unless it fell back to kernels older than this CPU's: then the
                # kernels the CPU's flags allow (named in the header), so torch is not slowed by a table
                # that predates the CPU.
                detected, best = detected_openblas_core(directory, env), best_openblas_core(cpu_flags())
                if detected in PRE_AVX2_CORES and best is not None:
                    env["OPENBLAS_CORETYPE"] = best
                    env[FORCED_CORE] = f"OPENBLAS_CORETYPE={best} for torch: OpenBLAS chose {detected} by itself"
            break
    else:
        print("compare: OpenBLAS not installed (apt-get install libopenblas0-pthread); torch uses the system BLAS",
              file=sys.stderr, flush=True)
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


def asyncdp_environment():
    """The environment the asyncdp processes run in: the caller's, OPENBLAS_OVERRIDES included."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(SAVED_PREFIX) and k != FORCED_CORE}
    if FORCED_CORE in os.environ:
        env.pop("OPENBLAS_CORETYPE", None)  # set for torch only
    for name in OPENBLAS_OVERRIDES:
        if SAVED_PREFIX + name in os.environ:
            env[name] = os.environ[SAVED_PREFIX + name]
    return env


def overrides_text():
    """What the torch side unset, for the header."""
    unset = [f"{name}={os.environ[SAVED_PREFIX + name]}" for name in OPENBLAS_OVERRIDES
             if SAVED_PREFIX + name in os.environ]
    kept = [f"{name}={os.environ[name]}" for name in OPENBLAS_OVERRIDES if name in os.environ]
    forced = os.environ.get(FORCED_CORE)
    if kept and not forced:
        return "KEPT for torch (--keep-openblas-overrides): " + ", ".join(kept)
    text = "unset for torch: " + ", ".join(unset) if unset else "no OpenBLAS overrides were set"
    return f"{text}; {forced}" if forced else text


def cpu_model():
    """The CPU model of /proc/cpuinfo (BENCHMARKS.md records it beside every figure)."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def openblas_core():
    """The kernel set OpenBLAS chose in this process (openblas_get_corename of the mapped library; else
    threadpoolctl's report), or why there is none."""
    import ctypes
    with open("/proc/self/maps") as maps:
        paths = sorted({line.split()[-1] for line in maps if "blas" in line.split()[-1]})
    for path in paths:
        try:
            corename = ctypes.CDLL(path).openblas_get_corename
        except (OSError, AttributeError):
            continue
        corename.restype = ctypes.c_char_p
        return corename().decode()
    try:
        from threadpoolctl import threadpool_info
        for pool in threadpool_info():
            if pool.get("internal_api") == "openblas":
                return str(pool.get("architecture"))
    except ImportError:
        pass
    return "not OpenBLAS"


def loaded_blas():
    """The BLAS shared library this process has mapped (after torch ran a product)."""
    with open("/proc/self/maps") as maps:
        names = {line.split()[-1] for line in maps if "blas" in line.split()[-1]}
    return ", ".join(sorted(names)) or "none mapped"
