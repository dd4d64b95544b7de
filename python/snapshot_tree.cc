#include "python/snapshot_tree.h"

#include <bit>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "sim/all_layers.h"
#include "trace/pickle/tree_builder.h"
#include "trace/pickle/unpickler.h"

namespace py = pybind11;

namespace hbmsim::python {
namespace {

class Converter {
 public:
  Converter(const std::string& name, std::string shown)
      : shown_(std::move(shown)),
        // No input size bounds a live object: only the 32-bit node ids do.
        builder_(name, PickleBytes(), UINT64_MAX, UnpickleLimits{}.max_nesting) {}

  PickleTree Run(py::handle obj) { return builder_.Finish(Value(obj)); }

 private:
  [[noreturn]] void Fail(const std::string& what) {
    std::string path;
    for (const std::string& step : path_) path += step;
    throw py::value_error(shown_ + (path.empty() ? "" : ": " + path) + ": " + what);
  }
  void Check(bool ok) {
    if (!ok) Fail("more values than a snapshot tree holds (2^32 nodes)");
  }
  void Check(BuildError e) {
    if (e == BuildError::kTooDeep) Fail("containers nest deeper than the unpickler allows");
    if (e != BuildError::kOk) Fail("a container the snapshot tree cannot hold");
  }

  PickleNodeId Value(py::handle obj) {
    PyObject* o = obj.ptr();
    PickleNodeId id;
    if (o == Py_None) {
      Check(builder_.AddScalar(PickleKind::kNone, 0, 0, id));
    } else if (PyBool_Check(o)) {
      Check(builder_.AddScalar(PickleKind::kBool, o == Py_True ? 1 : 0, 0, id));
    } else if (PyLong_Check(o)) {
      id = Int(obj);
    } else if (PyFloat_Check(o)) {
      Check(builder_.AddScalar(PickleKind::kFloat, std::bit_cast<uint64_t>(PyFloat_AS_DOUBLE(o)), 0, id));
    } else if (const auto it = shared_.find(o); it != shared_.end()) {
      return it->second;  // pickle's memo: the same object is the same node
    } else if (PyUnicode_Check(o)) {
      Py_ssize_t n = 0;
      const char* s = PyUnicode_AsUTF8AndSize(o, &n);
      if (s == nullptr) {
        PyErr_Clear();
        Fail("a str that is not valid UTF-8 (lone surrogates)");
      }
      Check(builder_.AddString(PickleKind::kString, std::string_view(s, static_cast<size_t>(n)), id));
      shared_.emplace(o, id);
    } else if (PyBytes_Check(o) || PyByteArray_Check(o)) {
      const std::string b = py::bytes(py::reinterpret_borrow<py::object>(obj));
      Check(builder_.AddString(PickleKind::kBytes, b, id));
      shared_.emplace(o, id);
    } else if (PyList_Check(o) || PyTuple_Check(o) || PyDict_Check(o)) {
      id = Container(obj);
      shared_.emplace(o, id);
    } else {
      Fail("unsupported type " + std::string(Py_TYPE(o)->tp_name) +
           " (a snapshot holds dict, list, tuple, str, bytes, int, float, bool and None)");
    }
    return id;
  }

  PickleNodeId Int(py::handle obj) {
    PickleNodeId id;
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow);
    if (overflow == 0) {
      Check(builder_.AddScalar(PickleKind::kInt, static_cast<uint64_t>(v), 0, id));
      return id;
    }
    if (overflow > 0) {
      const unsigned long long u = PyLong_AsUnsignedLongLong(obj.ptr());
      if (!PyErr_Occurred()) {
        Check(builder_.AddScalar(PickleKind::kUInt, u, 0, id));
        return id;
      }
      PyErr_Clear();
    }
    // Wider than 64 bits: its two's-complement bytes, as LONG1/LONG4 hold them.
    const size_t bits = py::int_(obj.attr("bit_length")()).cast<size_t>();
    const std::string b = py::bytes(obj.attr("to_bytes")(bits / 8 + 1, "little", py::arg("signed") = true));
    Check(builder_.AddString(PickleKind::kBigInt, b, id));
    return id;
  }

  PickleNodeId Container(py::handle obj) {
    PyObject* o = obj.ptr();
    if (!open_.insert(o).second) Fail("a container that contains itself");
    if (path_.size() >= UnpickleLimits{}.max_nesting) Fail("containers nest deeper than the unpickler allows");
    const PickleKind kind = PyDict_Check(o) ? PickleKind::kDict : PyList_Check(o) ? PickleKind::kList
                                                                                  : PickleKind::kTuple;
    std::vector<PickleNodeId> items;
    if (kind == PickleKind::kDict) {
      for (const auto [k, v] : py::reinterpret_borrow<py::dict>(obj)) {
        path_.push_back(Step(k));
        items.push_back(Value(k));
        items.push_back(Value(v));
        path_.pop_back();
      }
    } else {
      size_t i = 0;
      for (const py::handle item : py::reinterpret_borrow<py::sequence>(obj)) {
        path_.push_back("[" + std::to_string(i++) + "]");
        items.push_back(Value(item));
        path_.pop_back();
      }
    }
    PickleNodeId id;
    Check(builder_.AddContainer(kind, id));
    Check(builder_.Extend(id, items.data(), items.size()));
    open_.erase(o);
    return id;
  }

  // `['frames']` for a str key, `[<repr>]` for another.
  static std::string Step(py::handle key) {
    if (PyUnicode_Check(key.ptr())) return "['" + py::str(key).cast<std::string>() + "']";
    return "[" + py::repr(key).cast<std::string>() + "]";
  }

  std::string shown_;
  PickleTreeBuilder builder_;
  std::vector<std::string> path_;
  absl::flat_hash_map<PyObject*, PickleNodeId> shared_;  // the object is kept alive by the caller
  absl::flat_hash_set<PyObject*> open_;                  // containers being converted
};

}  // namespace

PickleTree TreeFromPython(py::handle obj, const std::string& name, const std::string& shown) {
  return Converter(name, shown).Run(obj);
}

}  // namespace hbmsim::python
