// What every policy folder shares: adapting a text of one policy type to a
// row's PolicyTexts member. A row's factory builds that type, so the cast
// succeeds for every allocator the row made; one of another type (a
// caller's mistake, a test's fake) gets `fallback` rather than undefined
// behaviour. This is the one place in sim/ that asks an allocator its type,
// and only on behalf of the row that knows it.
#ifndef HBMSIM_SIM_POLICIES_CORE_FOR_POLICY_H_
#define HBMSIM_SIM_POLICIES_CORE_FOR_POLICY_H_

#include <functional>
#include <string>

#include "allocator/core/allocator.h"
#include "sim/layer.h"

namespace hbmsim::sim {

template <typename Policy, typename... Args>
std::function<std::string(const Allocator&, Args...)> ForPolicy(std::string (*text)(const Policy&, Args...),
                                                                std::string (*fallback)(const Allocator&,
                                                                                        Args...)) {
  return [text, fallback](const Allocator& a, Args... args) {
    const auto* typed = dynamic_cast<const Policy*>(&a);
    return typed != nullptr ? text(*typed, args...) : fallback(a, args...);
  };
}

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_POLICIES_CORE_FOR_POLICY_H_
