// HBMSIM_DCHECK(cond, what): a debug check of a precondition that release
// builds trust for speed — an unchecked subtraction of unit types, a free of
// a handle the policy never issued. Compiled in only when HBMSIM_DCHECKS is
// defined (the sanitizer build: CMake's HBMSIM_SANITIZE turns it on), where a
// failure prints the condition and its place and aborts, so the sanitizer
// test suite and the fuzzers (tests/fuzz/fuzz_policies.cc) see a crash. In
// every other build it compiles to nothing and evaluates nothing.
#ifndef HBMSIM_ALLOCATOR_CORE_DCHECK_H_
#define HBMSIM_ALLOCATOR_CORE_DCHECK_H_

#ifdef HBMSIM_DCHECKS
#include <cstdio>
#include <cstdlib>

namespace hbmsim::allocator::internal {

[[noreturn]] inline void DcheckFailed(const char* cond, const char* what, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: HBMSIM_DCHECK(%s) failed: %s\n", file, line, cond, what);
  std::abort();
}

}  // namespace hbmsim::allocator::internal

#define HBMSIM_DCHECK(cond, what) \
  ((cond) ? static_cast<void>(0)  \
          : ::hbmsim::allocator::internal::DcheckFailed(#cond, what, __FILE__, __LINE__))
#else
#define HBMSIM_DCHECK(cond, what) static_cast<void>(0)
#endif

#endif  // HBMSIM_ALLOCATOR_CORE_DCHECK_H_
