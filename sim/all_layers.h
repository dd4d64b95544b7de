// For code that stands above the three layers (tests/, bench/, python/): every
// layer's names, unqualified, from namespace hbmsim and what nests in it
// (hbmsim::testing, hbmsim::bench, ...). Library code never includes it: a
// layer sees only the layers below it (trace/layer.h, sim/layer.h). A name two
// layers declare stays ambiguous here: qualify it (`sim::X`) where it is used.
#ifndef HBMSIM_SIM_ALL_LAYERS_H_
#define HBMSIM_SIM_ALL_LAYERS_H_

#include "sim/layer.h"

namespace hbmsim {
using namespace ::hbmsim::allocator;
using namespace ::hbmsim::trace;
using namespace ::hbmsim::sim;
}  // namespace hbmsim

#endif  // HBMSIM_SIM_ALL_LAYERS_H_
