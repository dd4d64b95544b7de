// What trace/ code sees: the allocator layer's names, unqualified.
//
// Each top folder is one namespace (hbmsim::allocator, hbmsim::trace,
// hbmsim::sim), nested where its folder is (trace/xla is hbmsim::trace::xla),
// so a name's namespace says which folder holds it. Dependencies run one way,
// allocator/ <- trace/ <- sim/, and the namespaces say so too: a trace file that
// includes an allocator/ header includes this one, and from then on writes
// `Bytes` or `BufferId` as if they were its own. Nothing in allocator/ includes
// a layer header, so allocator code cannot name a trace or sim name unqualified,
// exactly as the dependency rule says. A name both layers declare stays
// ambiguous here: qualify it (`allocator::X`) where it is used.
#ifndef HBMSIM_TRACE_LAYER_H_
#define HBMSIM_TRACE_LAYER_H_

namespace hbmsim::allocator {}

namespace hbmsim::trace {
using namespace ::hbmsim::allocator;
}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_LAYER_H_
