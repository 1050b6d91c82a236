"""``python3 -m asyncdp.experiments MODE [options]``: the modes ported from bash to Python.

Exit codes: 0 success, 1 a run or a reference failed (the REPORT lists it), 2 bad usage or input.
"""

from __future__ import annotations

import argparse
import datetime
import os
import pathlib
import shlex
import sys

from . import audit, checkins, clipping, env, paper, proactive, quick, sweep, userlevel
from .output import Output

MODES = {"quick": quick.main, "sweep": sweep.main, "audit": audit.main, "proactive": proactive.main,
         "checkins": checkins.main, "paper": paper.main,
         "clipping": clipping.main, "userlevel": userlevel.main}


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"needs a positive integer, got '{text}'") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"needs a positive integer, got '{text}'")
    return value


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # exit 2 with one clear line, as the rest of the tool
        print(f"run_experiments.sh: error: {message}", file=sys.stderr)
        sys.exit(2)


class _Once(argparse.Action):
    """Stores an option's value and refuses a second value (it would silently replace the first); a flag
    (nargs 0) given twice says the same thing twice and is taken. Records what was given in ``given``."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = namespace.__dict__.setdefault("given", {})
        if self.dest in given and self.nargs != 0:
            parser.error(f"{option_string} given twice ('{given[self.dest]}', then '{values}')")
        given[self.dest] = values
        setattr(namespace, self.dest, True if self.nargs == 0 else values)


# The options each mode reads beyond --out, --jobs and --tiny, which every mode reads (--full: below). An
# option given to a mode that does not read it is refused, not ignored, and the mode never sees it: parse()
# removes it from the namespace, so a mode that starts reading one fails until it is listed here.
# tests/test_experiments.py checks this table against the `args.<option>` reads of each mode's modules.
MODE_OPTIONS = ("seeds", "libsvm", "images", "config", "sample_sizes", "epsilons", "mpi")
READS = {
    "quick": {"seeds", "libsvm", "images"},
    "paper": {"seeds", "libsvm", "images"},
    "sweep": {"seeds", "config", "sample_sizes", "epsilons", "mpi"},
    "audit": {"libsvm"},
    "proactive": {"seeds", "libsvm", "images"},
    "checkins": {"seeds", "libsvm"},
    "clipping": {"seeds", "libsvm", "images"},
    "userlevel": {"seeds", "libsvm"},
}


def _path(text: str) -> str:
    """A path option's value: an empty one (``--out "$DIR"`` with DIR unset) is an error, not the default
    (``--out ''`` published into results/MODE, ``--libsvm ''`` ran on the default data)."""
    if not text:
        raise argparse.ArgumentTypeError("empty value; a path is expected")
    return text


# The environment settings that choose a report's data or cut its runs short (env.py); each REPORT's command
# line shows those that were set, so the line it prints re-runs what it reports.
RESULT_ENVIRONMENT = ("ASYNCDP_SHARED_DIR", "ASYNCDP_FASHION_DIR", "ASYNCDP_FASHION_PAIR", "ASYNCDP_RUN_TIMEOUT")


def command_line(argv, scale: str) -> str:
    """The command that reproduces a report: the words as given (seeds, data, sweep grid, ...), the scale as
    a flag when only ASYNCDP_EXPERIMENTS_SCALE chose it, and the result-changing environment when set.
    Before, each mode wrote its own line and dropped --seeds, --libsvm and --images (quick --seeds 2 said
    `./run_experiments.sh quick`, which runs 5 seeds)."""
    words = [str(w) for w in argv]
    flag = {"tiny": "--tiny", "full": "--full"}.get(scale)
    if flag and flag not in words:
        words.append(flag)
    settings = [f"{key}={shlex.quote(os.environ[key])}" for key in RESULT_ENVIRONMENT if os.environ.get(key)]
    return " ".join(settings + ["./run_experiments.sh", shlex.join(words)])


def _flag(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def parse(argv):
    # allow_abbrev=False: `--ep 1` is an error, not a guess at --epsilons (the asyncdp CLI does the same)
    p = _Parser(prog="run_experiments.sh", description="asyncdp experiments (Python modes)", allow_abbrev=False)
    p.add_argument("mode", choices=sorted(MODES))
    p.add_argument("--out", action=_Once, type=_path, help="output folder (default results/MODE)")
    p.add_argument("--jobs", action=_Once, type=_positive, default=None, help="runs at a time (default: the cores)")
    p.add_argument("--seeds", action=_Once, type=_positive, default=None,
                   help="seeds per run group (default: the mode's)")
    p.add_argument("--libsvm", action=_Once, type=_path, help="LIBSVM training file for the convex problems")
    p.add_argument("--images", action=_Once, type=_path, help="folder of IDX images for LeNet")
    p.add_argument("--tiny", action=_Once, nargs=0, default=False, help="seconds-long runs (tests; no verdicts)")
    p.add_argument("--full", action=_Once, nargs=0, default=False,
                   help="paper: every test row and finer utility graphs")
    p.add_argument("--config", action=_Once, type=_path, help="sweep: the base configuration (TOML)")
    p.add_argument("--sample-sizes", action=_Once, help="sweep: comma list of s (or max: the paper's calculator)")
    p.add_argument("--epsilons", action=_Once, help="sweep: comma list of target epsilons")
    p.add_argument("--mpi", action=_Once, type=_positive, default=0, help="sweep: spread the runs over P MPI ranks")
    args = p.parse_args(argv)
    given = vars(args).pop("given", {})
    for dest in MODE_OPTIONS:
        if dest in given and dest not in READS[args.mode]:
            readers = ", ".join(m for m in sorted(READS) if dest in READS[m])
            p.error(f"{_flag(dest)} is not read by '{args.mode}' (modes that read it: {readers}); refused, not ignored")
    if args.mpi and args.jobs:
        p.error("--mpi and --jobs exclude each other (with --mpi every rank runs one run at a time)")
    if args.mpi:
        from .runner import mpi_launcher
        launcher = mpi_launcher()[0]
        if env.which(launcher) is None:
            p.error(f"--mpi needs an MPI launcher: '{launcher}' not found (scripts/install-deps.sh installs Open MPI; "
                    "ASYNCDP_MPIRUN names another)")
    try:  # the environment's settings, read before any run (env.py)
        scale = env.scale()
        env.run_timeout()
        env.fashion_pair()
    except env.UsageError as e:
        p.error(str(e))
    if args.full and args.mode != "paper":
        p.error(f"--full is not read by '{args.mode}' (modes that read it: paper); refused, not ignored")
    if args.full and args.tiny:
        p.error("--full and --tiny exclude each other")
    if args.full:
        scale = "full"
    if args.tiny:
        scale = "tiny"
    if scale not in ("tiny", "default") and not (args.mode == "paper" and scale == "full"):
        p.error(f"{args.mode} runs at scale tiny or default, not '{scale}'")
    args.scale = scale
    args.command = command_line(argv, scale)
    args.jobs_given = args.jobs  # None: the mode's default (audit: each audit command uses every core)
    args.jobs = args.jobs or env.cores()
    for dest in MODE_OPTIONS:
        if dest not in READS[args.mode]:
            delattr(args, dest)
    return args


def log(message: str) -> None:
    print(f"[{datetime.datetime.now():%H:%M:%S}] {message}", file=sys.stderr, flush=True)


def main(argv=None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    args.log = log
    try:
        default = env.repo_dir() / "results" / args.mode
        if args.mode == "sweep" and args.config:
            default = default / pathlib.Path(args.config).stem
        destination = pathlib.Path(args.out or default)
        args.output = Output(destination, args.mode)
    except env.UsageError as e:
        print(f"run_experiments.sh: error: {e}", file=sys.stderr)
        return 2
    try:
        code = MODES[args.mode](args)
    except env.UsageError as e:
        args.output.discard()
        print(f"run_experiments.sh: error: {e}", file=sys.stderr)
        return 2
    except BaseException:
        args.output.discard()  # nothing half-published: the previous result stays where it was
        raise
    where = args.output.publish()
    log(f"{args.mode}: {where}/REPORT.md")
    return code


if __name__ == "__main__":
    sys.exit(main())
