"""The experiment layer of ``run_experiments.sh``: run matrices over seeds, tables with intervals,
verdicts from intervals, figures drawn from the tables written beside them, REPORT.md.

    /usr/bin/python3 -m asyncdp.experiments quick --out results/quick [--tiny] [--jobs N] [--seeds N]

``run_experiments.sh`` is the front door (it installs and builds first); this package is what it runs.
Modules: ``stats`` (intervals, paired differences, verdicts), ``runner`` (runs in worker processes),
``plots`` (tidy tables → matplotlib figures), ``output`` (atomic publication), ``report`` (Markdown),
``env`` (repository, data, machine) and one module per mode.
"""
