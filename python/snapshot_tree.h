// The object torch.cuda.memory._snapshot() returns (dicts, lists, tuples,
// str, int, float, bool, None, bytes), converted straight into the PickleTree
// the snapshot reader consumes, so a Python caller's dict never goes through
// pickle.dumps, a temporary file and the unpickler (issue 19).
//
// The tree is the one unpickling the same object would give: a container or
// str referenced twice is one node referenced twice, as pickle's memo makes
// it (the reader keys shared frame lists by node), ints and floats are values.
// An object of any other type, a recursive container or nesting deeper than
// the unpickler allows is a ValueError that names the key path:
//   "<recording snapshot>: device_traces[0][3]['frames']: unsupported type set"
#ifndef HBMSIM_PYTHON_SNAPSHOT_TREE_H_
#define HBMSIM_PYTHON_SNAPSHOT_TREE_H_

#include <pybind11/pybind11.h>

#include <string>

#include "sim/all_layers.h"
#include "trace/pickle/pickle_tree.h"

namespace hbmsim::python {

// `name` is the tree's file name (messages); `shown` how errors name the object.
PickleTree TreeFromPython(pybind11::handle obj, const std::string& name, const std::string& shown);

}  // namespace hbmsim::python

#endif  // HBMSIM_PYTHON_SNAPSHOT_TREE_H_
