// The pickle opcodes (CPython's Lib/pickletools.py names) and which of them a
// safe reader runs, refuses because they reach for code, or does not support.
#ifndef HBMSIM_TRACE_PICKLE_OPCODES_H_
#define HBMSIM_TRACE_PICKLE_OPCODES_H_

#include <cstdint>
#include <string_view>

namespace hbmsim::trace {

enum class OpcodeClass : uint8_t {
  kUnknown,      // not a pickle opcode at all
  kData,         // builds plain data; the unpickler runs it
  kCode,         // imports or calls Python code, or asks the caller for objects
  kUnsupported,  // plain data, but a form no snapshot uses (protocol 0 text, sets, buffers)
};

struct OpcodeInfo {
  std::string_view name;  // "REDUCE"; empty for unknown bytes
  OpcodeClass cls = OpcodeClass::kUnknown;
  // For kCode: what the opcode does, as it reads after "opcode NAME "
  // ("calls code"); for kUnsupported: why no snapshot needs it.
  std::string_view why;
};

const OpcodeInfo& GetOpcodeInfo(uint8_t op);

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_PICKLE_OPCODES_H_
