// hbmsim._native: the C++ side of `import hbmsim`. It exposes the command
// line itself (sim/cli/cli_run.h), not a second API over the simulator:
// hbmsim.replay(...) builds the argument list of `hbmsim replay ...`, this
// module runs that command in-process, and the Python side reads the --json,
// --placements and --html files the command wrote. So every number a Python
// user sees is the number the CLI prints, by construction, and a new CLI
// feature reaches Python without binding code.
//
// A snapshot object (the dict torch.cuda.memory._snapshot() returns) is not
// pickled: register_snapshot converts it into the reader's value tree and
// registers it in memory under a name the command then takes as its path.
//
// Two entry points:
//   run_captured(args) -> (exit_code, stdout_bytes, stderr_bytes)
//       for the API: stdout and stderr of this thread are kept in strings,
//       the GIL is released during the run (threads replay in parallel), and
//       the process's signal handlers stay Python's (Ctrl-C is Python's
//       KeyboardInterrupt, never an exit from inside the library).
//   run(args) -> exit_code
//       for `python3 -m hbmsim ...`: exactly the hbmsim binary, printing to
//       the process's stdout/stderr, with the CLI's cleanup on SIGINT/SIGTERM.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "python/snapshot_tree.h"
#include "sim/cli/cli_run.h"
#include "sim/cli/version.h"
#include "trace/formats/memory_recordings.h"
#include "trace/io/temp_registry.h"

namespace py = pybind11;

namespace {

// The Python side passes str arguments; a path may hold bytes that are not
// UTF-8 (os.fsencode), so bytes are taken as they are.
std::vector<std::string> Arguments(const py::sequence& args) {
  std::vector<std::string> out;
  out.reserve(py::len(args));
  for (const py::handle item : args) {
    if (py::isinstance<py::bytes>(item)) {
      out.push_back(item.cast<std::string>());
    } else {
      out.push_back(py::str(item).cast<std::string>());
    }
  }
  return out;
}

py::tuple RunCaptured(const py::sequence& args) {
  const std::vector<std::string> argv = Arguments(args);
  // An embedded library must not take over SIGINT from the interpreter; the
  // outputs' temporaries are still removed when the command ends normally.
  hbmsim::trace::io::KeepHostSignalHandlers();
  hbmsim::sim::cli::CapturedRun run;
  {
    py::gil_scoped_release release;
    run = hbmsim::sim::cli::RunCliCaptured(argv);
  }
  return py::make_tuple(run.exit_code, py::bytes(run.out), py::bytes(run.err));
}

int RunForwarded(const py::sequence& args) {
  const std::vector<std::string> argv = Arguments(args);
  py::gil_scoped_release release;
  return hbmsim::sim::cli::RunCli(argv);
}

// The snapshot object as a recording in memory (trace/formats/memory_recordings.h).
std::string RegisterSnapshot(py::handle snapshot, const std::string& shown) {
  const std::string name = hbmsim::trace::NextMemoryRecordingName();
  hbmsim::trace::RegisterMemorySnapshot(name, hbmsim::python::TreeFromPython(snapshot, name, shown));
  return name;
}

}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() = "The hbmsim command line, run in-process (see hbmsim/__init__.py for the Python API).";
  m.attr("__version__") = hbmsim::sim::cli::kVersion;
  m.def("run_captured", &RunCaptured, py::arg("args"),
        "Runs `hbmsim ARGS...` in-process with its stdout and stderr captured; returns "
        "(exit_code, stdout bytes, stderr bytes). The GIL is released during the run.");
  m.def("run", &RunForwarded, py::arg("args"),
        "Runs `hbmsim ARGS...` in-process exactly as the binary does (its own stdout/stderr); returns "
        "the exit code.");
  m.def("register_snapshot", &RegisterSnapshot, py::arg("snapshot"), py::arg("shown"),
        "Converts a torch.cuda.memory._snapshot() object into the snapshot reader's value tree and "
        "registers it; returns the name to pass where a recording path goes. ValueError (naming the "
        "key path, prefixed by `shown`) for a value a snapshot cannot hold.");
  m.def("release_recording", &hbmsim::trace::ReleaseMemoryRecording, py::arg("name"),
        "Forgets a registered snapshot.");
  m.def("memory_snapshot_opens", &hbmsim::trace::MemorySnapshotOpens,
        "How many times a command opened a registered snapshot (for tests).");
}
