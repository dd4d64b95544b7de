"""Shared fixtures of the Python suite: where the CLI binary, the repository
and the shared recordings are (ctest passes them in the environment, see
python/CMakeLists.txt), and running the CLI itself for comparison."""

import json
import os
import subprocess

import pytest

SOURCE_DIR = os.environ.get("HBMSIM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
SHARED_DIR = os.environ.get("HBMSIM_SHARED_DIR", os.path.join(SOURCE_DIR, "..", "shared"))
BINARY = os.environ.get("HBMSIM_BINARY", os.path.join(SOURCE_DIR, "build", "sim", "cli", "hbmsim"))
EXAMPLES = os.path.join(SOURCE_DIR, "configs", "examples")


def example(name):
    return os.path.join(EXAMPLES, name)


def shared_snapshots():
    """Every shared PyTorch snapshot (empty when ../shared is absent)."""
    folder = os.path.join(SHARED_DIR, "torch_snapshots")
    if not os.path.isdir(folder):
        return []
    return sorted(os.path.join(folder, n) for n in os.listdir(folder) if n.endswith((".pickle", ".pkl")))


class CliRun:
    def __init__(self, code, out, err, report):
        self.code, self.out, self.err, self.report = code, out, err, report


@pytest.fixture
def run_cli(tmp_path):
    """Runs the hbmsim binary with `--json` into tmp_path; the parsed report
    is None when the run wrote none (exit 2)."""
    counter = [0]

    def run(*args):
        counter[0] += 1
        out_json = tmp_path / f"cli{counter[0]}.json"
        proc = subprocess.run([BINARY, *map(str, args), "--json", str(out_json)],
                              capture_output=True, text=True, errors="replace")
        report = json.loads(out_json.read_text()) if out_json.exists() else None
        return CliRun(proc.returncode, proc.stdout, proc.stderr, report)

    return run
