// A row's SharedTrialSupport (sim/config/policy_registry.h) for a policy
// type P that keeps limit windows: `size`'s trials of it resume from each
// other's checkpoints and run the engine's loop with direct calls to P
// (ReplayEngine::RunPlain), no virtual call per event. The casts are safe
// because the row's factory builds P and SharedTrials asks only allocators
// that factory (or P::CloneAt) made.
#ifndef HBMSIM_SIM_POLICIES_CORE_SHARED_TRIALS_FOR_H_
#define HBMSIM_SIM_POLICIES_CORE_SHARED_TRIALS_FOR_H_

#include <type_traits>

#include "allocator/core/limit_window.h"
#include "sim/config/policy_registry.h"
#include "sim/engine/log_reader.h"
#include "sim/engine/replay_engine.h"
#include "sim/layer.h"

namespace hbmsim::sim {

template <typename P>
SharedTrialSupport SharedTrialsFor() {
  static_assert(std::is_base_of_v<LimitWindowPolicy, P> && std::is_base_of_v<Allocator, P>);
  SharedTrialSupport support;
  support.windows = [](Allocator& a) -> LimitWindowPolicy* { return &static_cast<P&>(a); };
  support.plain_loop = [](ReplayEngine& engine, LogReader& reader, Allocator& a) {
    return engine.RunPlain(reader, static_cast<P&>(a));
  };
  return support;
}

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_POLICIES_CORE_SHARED_TRIALS_FOR_H_
