"""The scripts in examples/ run (headless) and write their plots; their numbers come from the API tested
in test_accounting.py / test_train.py, checked here for the expected shapes only."""

import os
import subprocess
import sys

from conftest import SOURCE_DIR, SHARED_DIR


def run_example(name, *args):
    env = dict(os.environ, MPLBACKEND="Agg")
    result = subprocess.run([sys.executable, str(SOURCE_DIR / "examples" / name), *map(str, args)],
                            capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_sigma_sweep_writes_a_plot_and_more_noise_spends_less_epsilon(tmp_path):
    out = tmp_path / "sweep.png"
    stdout = run_example("sigma_sweep.py", "--sigmas", "4", "19.29962", "--rows-per-client", "500",
                         "--epochs", "1", "--data-dir", SHARED_DIR / "datasets" / "libsvm", "--out", out)
    lines = [line for line in stdout.splitlines() if line.startswith("sigma=")]
    assert len(lines) == 2
    epsilons = [float(line.split("epsilon(pld)=")[1].split()[0]) for line in lines]
    assert epsilons[0] > epsilons[1]
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_compare_accountants_prints_the_table_and_plots(tmp_path):
    out = tmp_path / "accountants.png"
    schedule = tmp_path / "schedule.csv"
    schedule.write_text("q,sigma,count\n0.01,2.0,500\n0.02,1.0,200\n")
    stdout = run_example("compare_accountants.py", "--schedule", schedule, "--out", out)
    rows = [line.split() for line in stdout.splitlines() if line.strip() and line.split()[0].isdigit()]
    assert [int(r[0]) for r in rows] == [500, 700]
    for _, rdp, pld, pld_lower, _gdp in rows:
        assert float(pld_lower) <= float(pld) <= float(rdp)  # PLD is the tighter upper bound
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
