"""hbmsim in Python: replay allocation recordings through allocator models.

    >>> import hbmsim
    >>> r = hbmsim.replay("configs/examples/fragmentation.trace", allocator="bfc",
    ...                   bytes_limit="256MiB")
    >>> print(r.verdict)

Each function runs the hbmsim command of the same name in-process (the
pybind11 module hbmsim._native runs the CLI's own code, sim/cli), with
--json (and for a replay --placements and --html) written to a temporary
directory, and returns a Result holding that JSON report. So the values are
the CLI's, under the CLI's names (docs/cli.md), and a bad
input raises the CLI's one-line message: OSError for a file that cannot be
read or written, ValueError for any other bad input or option, RuntimeError
for an internal error (exit 3). The GIL is released while a command runs.

A recording is a path, the bytes of a recording file, or the object
``torch.cuda.memory._snapshot()`` returns (a dict, or the bare list of
segments): any format `hbmsim replay` reads. The snapshot object is read
directly, converted into the snapshot reader's value tree in memory (no
pickling, no temporary file); an object of a type a snapshot cannot hold
raises ValueError naming its key path.
"""

import json
import os
import tempfile

from . import _native
from .results import Result

__all__ = ["replay", "size", "compare", "advise", "scale", "diagnose", "presets", "cli", "Result"]
__version__ = _native.__version__  # the CLI's (the file VERSION), as `hbmsim --version` prints it

# Words of the CLI's messages about a file itself (trace/io): these raise
# OSError, every other bad input ValueError.
_OS_ERROR_MARKERS = ("cannot read ", "cannot write ", " is a directory", "cannot open ",
                     "No such file", "Permission denied")


def replay(recording, allocator=None, bytes_limit=None, settings=None, device=None, *,
           on_oom=None, start_state=None, check_recorded=False, advice=True, jobs=None,
           paranoid=False, html=True):
    """`hbmsim replay`: where and why allocations fail under `bytes_limit`.

    settings: {"allow_growth": True, ...}, each a `--set KEY=VALUE`.
    advice=False skips the "What would fit" trials (`--no-advice`);
    html=False skips writing the HTML report that `_repr_html_` shows.
    """
    with _Run("replay", recording) as run:
        args = _allocator(allocator) + _limit(bytes_limit) + _sets(settings) + _device(device)
        if on_oom is not None:
            args += ["--on-oom", on_oom]
        if start_state is not None:
            args += ["--start-state", start_state]
        if check_recorded:
            args.append("--check-recorded")
        if not advice:
            args.append("--no-advice")
        if paranoid:
            args.append("--paranoid")
        args += _jobs(jobs) + ["--placements", run.output("placements.csv")]
        if html:
            args += ["--html", run.output("report.html")]
        return run.go(args, placements="placements.csv", html_page="report.html" if html else None)


def size(recording, allocator=None, settings=None, device=None, *, start_state=None, resolution=None,
         jobs=None):
    """`hbmsim size`: the smallest bytes_limit at which the recording fits."""
    with _Run("size", recording) as run:
        args = _allocator(allocator) + _sets(settings) + _device(device) + _jobs(jobs)
        if start_state is not None:
            args += ["--start-state", start_state]
        if resolution is not None:
            args += ["--resolution", str(resolution)]
        return run.go(args)


def compare(recording=None, allocators=None, bytes_limit=None, *, baseline=None, candidate=None,
            allocator=None, settings=None, device=None, start_state=None, resolution=None, jobs=None):
    """`hbmsim compare`: one row per allocator (`allocators=["bfc", "tpu"]`;
    None: the runtimes' allocators, the recording's own first) on one
    recording, or `baseline=` against `candidate=` under `allocator=` (None:
    the one that wrote the baseline): peaks, reserved explained part by part,
    where the two streams diverge (`r.peaks`, `r.reserved_explained`,
    `r.divergence`)."""
    with _Run("compare", recording) as run:
        args = []
        if allocators is not None:
            names = allocators if isinstance(allocators, str) else ",".join(allocators)
            args += ["--allocators", names]
        if baseline is not None:
            args += ["--baseline", run.input(baseline, "baseline")]
        if candidate is not None:
            args += ["--candidate", run.input(candidate, "candidate")]
        if allocator is not None:
            args += ["--allocator", allocator]
        args += _limit(bytes_limit) + _sets(settings) + _device(device) + _jobs(jobs)
        if start_state is not None:
            args += ["--start-state", start_state]
        if resolution is not None:
            args += ["--resolution", str(resolution)]
        return run.go(args)


def advise(recording, allocator=None, bytes_limit=None, settings=None, device=None, *,
           device_memory=None, start_state=None, jobs=None):
    """`hbmsim advise`: the settings to try, each with its minimum limit. For a
    recording that began with memory reserved, `fresh_start` holds the same
    advice for a new run of the job (start_state="place" asks for that alone)."""
    with _Run("advise", recording) as run:
        args = _allocator(allocator) + _limit(bytes_limit) + _sets(settings) + _device(device)
        if device_memory is not None:
            args += ["--device-memory", str(device_memory)]
        if start_state is not None:
            args += ["--start-state", start_state]
        return run.go(args + _jobs(jobs))


def scale(at, to=None, *, fit_limit=None, step=None, check=False, allocator=None, settings=None,
          bytes_limit=None, device=None, out=None):
    """`hbmsim scale`: the job at a size nobody ran, from recordings at a few
    sizes. `at`: {value: recording} (or (value, recording) pairs), each
    recording a path, bytes or a snapshot object; then `to=N`,
    `fit_limit="80GiB"` (with `step=64`) and/or `check=True`. `out`: a path
    for the predicted recording (.pickle/.json: a snapshot; else a trace)."""
    pairs = at.items() if isinstance(at, dict) else at
    with _Run("scale", None) as run:
        args = []
        for value, recording in pairs:
            args += ["--at", str(value), run.input(recording, f"at {value}")]
        if to is not None:
            args += ["--to", str(to)]
        if fit_limit is not None:
            args += ["--fit-limit", str(fit_limit)]
        if step is not None:
            args += ["--step", str(step)]
        if check:
            args.append("--check")
        if out is not None:
            args += ["--out", os.fspath(out)]
        args += _allocator(allocator) + _sets(settings) + _limit(bytes_limit) + _device(device)
        return run.go(args)


def diagnose(log, *, html=False):
    """`hbmsim diagnose`: a BFC OOM dump (a log's path, or its text) read back
    into a verdict and every figure it shows."""
    if isinstance(log, str) and not os.path.exists(log) and ("\n" in log or len(log) > 4096):
        log = log.encode()  # the log's text, not a path
    with _Run("diagnose", log) as run:
        args = ["--html", run.output("report.html")] if html else []
        return run.go(args, html_page="report.html" if html else None)


def presets():
    """`hbmsim presets`: the device presets a `bytes_limit` may name
    ("a100-40gb", "h100-80gb", "tpu-v5e", ...), as {name: {"bytes", "device",
    "figure", "source"}}."""
    with _Run("presets", None) as run:
        table = run.go([])
    return {p["name"]: {k: v for k, v in p.items() if k != "name"} for p in table["presets"]}


def cli(*args):
    """Any hbmsim command line, captured: (exit_code, stdout, stderr)."""
    code, out, err = _native.run_captured([os.fspath(a) for a in args])
    return code, out.decode(errors="replace"), err.decode(errors="replace")


class _Run:
    """One command: its temporary directory, its inputs and outputs there,
    and turning its exit code into a Result or an exception."""

    def __init__(self, command, recording):
        self.command = command
        self.recording = recording
        self.renames = {}  # temporary path or memory name -> how the user gave the input
        self.memory = []  # names of snapshot objects registered in memory

    def __enter__(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="hbmsim-")
        return self

    def __exit__(self, *exc):
        for name in self.memory:
            _native.release_recording(name)
        self.tmp.cleanup()
        return False

    def output(self, name):
        return os.path.join(self.tmp.name, name)

    def input(self, recording, role="recording"):
        """A path the CLI can open for `recording` (see the module doc)."""
        if isinstance(recording, (str, os.PathLike)):
            return os.fspath(recording)
        if isinstance(recording, (dict, list)):
            # The snapshot object, converted in memory into the tree the
            # snapshot reader takes and registered under a name the CLI opens
            # like a path (trace/formats/memory_recordings.h): no pickle round trip.
            shown = f"<{role} snapshot>"
            name = _native.register_snapshot(recording, shown)
            self.memory.append(name)
            self.renames[name] = shown
            return name
        path = self.output(f"{role}.input")
        if isinstance(recording, (bytes, bytearray, memoryview)):
            data, shown = bytes(recording), f"<{role} bytes>"
        else:
            raise TypeError(f"{role}: a path, bytes or a snapshot dict/list, not {type(recording).__name__}")
        with open(path, "wb") as f:
            f.write(data)
        self.renames[path] = shown
        return path

    def go(self, args, placements=None, html_page=None):
        head = [self.command]
        if self.recording is not None:
            head.append(self.input(self.recording))
        json_path = self.output("report.json")
        code, out, err = _native.run_captured(head + args + ["--json", json_path])
        text, notes = self._named(out.decode(errors="replace")), self._named(err.decode(errors="replace"))
        if code not in (0, 1):
            raise _error(code, notes)
        with open(json_path, encoding="utf-8") as f:
            report = json.loads(self._named(f.read(), quote=json.dumps))
        return Result(self.command, code, report, text, notes.splitlines(),
                      placements_csv=self._read(placements, missing=""), html_page=self._read(html_page))

    def _read(self, name, missing=None):
        if name is None:
            return None
        if not os.path.exists(self.output(name)):  # a state without a trace: no replay to list or draw
            return missing
        with open(self.output(name), encoding="utf-8", errors="replace") as f:
            return f.read()

    def _named(self, text, quote=None):
        """Messages and reports name an input as the user gave it, never by
        the temporary file it was written to."""
        for path, shown in self.renames.items():
            if quote is None:
                text = text.replace(path, shown)
            else:  # inside JSON: replace whole string values, kept valid
                text = text.replace(quote(path), quote(shown))
        return text


def _error(code, notes):
    lines = [line for line in notes.splitlines() if line.strip()]
    message = lines[-1] if lines else f"hbmsim exited with {code}"
    if code == 3:
        return RuntimeError(message)
    if any(marker in message for marker in _OS_ERROR_MARKERS):
        return OSError(message)
    return ValueError(message)


def _allocator(allocator):
    """`--allocator NAME`; None: the allocator that wrote the recording (torch
    for a PyTorch snapshot, bfc for a TF/JAX profile; a text trace needs one)."""
    return [] if allocator is None else ["--allocator", allocator]


def _limit(bytes_limit):
    return [] if bytes_limit is None else ["--bytes-limit", str(bytes_limit)]


def _device(device):
    return [] if device is None else ["--device", str(device)]


def _jobs(jobs):
    return [] if jobs is None else ["--jobs", str(jobs)]


def _sets(settings):
    args = []
    for key, value in (settings or {}).items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        args += ["--set", f"{key}={value}"]
    return args
