"""scripts/check-unity-shadowing.py: fails on a unity batch where one file's anonymous-namespace helper can
capture another file's call (also when the caller has an overload of its own), and passes when the helper
comes after the call (so the CI check can fail)."""
import atexit
import pathlib
import shutil
import subprocess
import sys
import tempfile
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "check-unity-shadowing.py"

HELPER = "namespace asyncdp {\nnamespace {\n\ndouble GaussianDelta(double mu, double eps) { return mu * eps; }\n\n}  // namespace\n}  // namespace asyncdp\n"
CALLER = "namespace asyncdp {\nnamespace {\n\nTEST(A, B) { EXPECT_NEAR(GaussianDelta(1.0, 2.0), 0.3, 1e-3); }\n\n}  // namespace\n}  // namespace asyncdp\n"
OWN = CALLER.replace("TEST(A, B)", "double GaussianDelta(int steps) { return steps; }\n\nTEST(A, B)")


def batch(*sources):
    root = pathlib.Path(tempfile.mkdtemp(prefix="asyncdp-unity-shadowing-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    includes = []
    for i, text in enumerate(sources):
        path = root / f"file_{i}.cc"
        path.write_text(text)
        includes.append(f'#include "{path}"\n')
    unity = root / "build" / "CMakeFiles" / "t.dir" / "Unity"
    unity.mkdir(parents=True)
    (unity / "unity_0_cxx.cxx").write_text("".join(includes))
    return subprocess.run([sys.executable, str(SCRIPT), str(root / "build")], capture_output=True, text=True)


class CheckUnityShadowing(unittest.TestCase):
    def test_a_call_captured_by_an_earlier_files_helper_fails(self):
        result = batch(HELPER, CALLER)
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertIn("calls GaussianDelta()", result.stdout)

    def test_an_overload_in_the_calling_file_does_not_make_it_safe(self):
        # The caller's GaussianDelta(int) takes one argument: its two-argument call resolves to the helper.
        result = batch(HELPER, OWN)
        self.assertEqual(result.returncode, 1, result.stdout)

    def test_a_helper_after_the_call_passes(self):
        result = batch(CALLER, HELPER)
        self.assertEqual(result.returncode, 0, result.stdout)

    def test_no_build_is_a_usage_error(self):
        empty = pathlib.Path(tempfile.mkdtemp(prefix="asyncdp-unity-shadowing-"))
        atexit.register(shutil.rmtree, empty, ignore_errors=True)
        result = subprocess.run([sys.executable, str(SCRIPT), str(empty)], capture_output=True, text=True)
        self.assertEqual(result.returncode, 2)


if __name__ == "__main__":
    unittest.main()
