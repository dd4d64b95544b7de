// What sim/ code sees: the allocator and trace layers' names, unqualified.
//
// sim/ stands on both lower layers (allocator/ <- trace/ <- sim/), so a sim file
// that includes an allocator/ or trace/ header includes this one and writes
// `Bytes`, `OpenRecording` or `io::OutputSet` without their layer's prefix.
// Neither lower layer includes this header: their code cannot see a sim name.
// See trace/layer.h for the namespace rule.
#ifndef HBMSIM_SIM_LAYER_H_
#define HBMSIM_SIM_LAYER_H_

#include "trace/layer.h"

namespace hbmsim::sim {
using namespace ::hbmsim::allocator;
using namespace ::hbmsim::trace;
}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_LAYER_H_
