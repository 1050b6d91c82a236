"""scripts/check-include-cycles.py: passes on this repository, and fails on small trees with a cycle or an
arrow up the layers (so the CI check can fail)."""
import atexit
import pathlib
import shutil
import subprocess
import sys
import tempfile
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "check-include-cycles.py"


def run(root):
    return subprocess.run([sys.executable, str(SCRIPT), str(root)], capture_output=True, text=True)


def tree(files):
    root = pathlib.Path(tempfile.mkdtemp(prefix="asyncdp-include-cycles-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    for name, includes in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f'#include "{i}"\n' for i in includes) + "#include <vector>\n")
    return root


class CheckIncludeCycles(unittest.TestCase):
    def test_this_repository_has_no_cycle(self):
        result = run(SCRIPT.parents[1])
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def test_a_cycle_through_a_source_file_fails(self):
        # a.h -> b.h, b.cc -> a.h: the units a and b include each other (a header and its source are one unit).
        root = tree({"sim/a.h": ["sim/b.h"], "sim/a.cc": ["sim/a.h"], "sim/b.h": [], "sim/b.cc": ["sim/a.h"],
                     "sim/c.h": ["sim/a.h"]})
        result = run(root)
        self.assertEqual(result.returncode, 1)
        self.assertIn("include cycle (2 units): sim/a sim/b", result.stdout)

    def test_a_long_cycle_fails_and_an_acyclic_tree_passes(self):
        chain = {f"models/m{i}.h": [f"models/m{i + 1}.h"] for i in range(5)}
        chain["models/m5.h"] = []
        self.assertEqual(run(tree(chain)).returncode, 0)
        chain["models/m5.cc"] = ["models/m0.h"]
        result = run(tree(chain))
        self.assertEqual(result.returncode, 1)
        self.assertIn("(6 units)", result.stdout)

    def test_an_arrow_up_the_layers_fails(self):
        root = tree({"core/x.h": ["sim/y.h"], "sim/y.h": []})
        result = run(root)
        self.assertEqual(result.returncode, 1)
        self.assertIn("core/x -> sim/y", result.stdout)


if __name__ == "__main__":
    unittest.main()
