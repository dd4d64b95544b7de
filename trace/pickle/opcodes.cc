#include "trace/pickle/opcodes.h"

#include <array>

namespace hbmsim::trace {
namespace {

constexpr std::string_view kCalls = "calls code";
constexpr std::string_view kImports = "imports code";
constexpr std::string_view kPersistent = "asks the loader for a persistent object";
constexpr std::string_view kExtension = "imports code through the extension registry";
constexpr std::string_view kText = "is the protocol 0 text form";
constexpr std::string_view kSet = "builds a set";
constexpr std::string_view kBuffer = "needs an out-of-band buffer";

struct Entry {
  uint8_t op;
  OpcodeInfo info;
};

// Every opcode of protocols 0-5.
constexpr Entry kEntries[] = {
    {'(', {"MARK", OpcodeClass::kData, {}}},
    {'.', {"STOP", OpcodeClass::kData, {}}},
    {'0', {"POP", OpcodeClass::kData, {}}},
    {'1', {"POP_MARK", OpcodeClass::kData, {}}},
    {'2', {"DUP", OpcodeClass::kData, {}}},
    {'F', {"FLOAT", OpcodeClass::kUnsupported, kText}},
    {'I', {"INT", OpcodeClass::kUnsupported, kText}},
    {'J', {"BININT", OpcodeClass::kData, {}}},
    {'K', {"BININT1", OpcodeClass::kData, {}}},
    {'L', {"LONG", OpcodeClass::kUnsupported, kText}},
    {'M', {"BININT2", OpcodeClass::kData, {}}},
    {'N', {"NONE", OpcodeClass::kData, {}}},
    {'P', {"PERSID", OpcodeClass::kCode, kPersistent}},
    {'Q', {"BINPERSID", OpcodeClass::kCode, kPersistent}},
    {'R', {"REDUCE", OpcodeClass::kCode, kCalls}},
    {'S', {"STRING", OpcodeClass::kUnsupported, kText}},
    {'T', {"BINSTRING", OpcodeClass::kData, {}}},
    {'U', {"SHORT_BINSTRING", OpcodeClass::kData, {}}},
    {'V', {"UNICODE", OpcodeClass::kUnsupported, kText}},
    {'X', {"BINUNICODE", OpcodeClass::kData, {}}},
    {'a', {"APPEND", OpcodeClass::kData, {}}},
    {'b', {"BUILD", OpcodeClass::kCode, kCalls}},
    {'c', {"GLOBAL", OpcodeClass::kCode, kImports}},
    {'d', {"DICT", OpcodeClass::kData, {}}},
    {'}', {"EMPTY_DICT", OpcodeClass::kData, {}}},
    {'e', {"APPENDS", OpcodeClass::kData, {}}},
    {'g', {"GET", OpcodeClass::kUnsupported, kText}},
    {'h', {"BINGET", OpcodeClass::kData, {}}},
    {'i', {"INST", OpcodeClass::kCode, kCalls}},
    {'j', {"LONG_BINGET", OpcodeClass::kData, {}}},
    {'l', {"LIST", OpcodeClass::kData, {}}},
    {']', {"EMPTY_LIST", OpcodeClass::kData, {}}},
    {'o', {"OBJ", OpcodeClass::kCode, kCalls}},
    {'p', {"PUT", OpcodeClass::kUnsupported, kText}},
    {'q', {"BINPUT", OpcodeClass::kData, {}}},
    {'r', {"LONG_BINPUT", OpcodeClass::kData, {}}},
    {'s', {"SETITEM", OpcodeClass::kData, {}}},
    {'t', {"TUPLE", OpcodeClass::kData, {}}},
    {')', {"EMPTY_TUPLE", OpcodeClass::kData, {}}},
    {'u', {"SETITEMS", OpcodeClass::kData, {}}},
    {'G', {"BINFLOAT", OpcodeClass::kData, {}}},
    {0x80, {"PROTO", OpcodeClass::kData, {}}},
    {0x81, {"NEWOBJ", OpcodeClass::kCode, kCalls}},
    {0x82, {"EXT1", OpcodeClass::kCode, kExtension}},
    {0x83, {"EXT2", OpcodeClass::kCode, kExtension}},
    {0x84, {"EXT4", OpcodeClass::kCode, kExtension}},
    {0x85, {"TUPLE1", OpcodeClass::kData, {}}},
    {0x86, {"TUPLE2", OpcodeClass::kData, {}}},
    {0x87, {"TUPLE3", OpcodeClass::kData, {}}},
    {0x88, {"NEWTRUE", OpcodeClass::kData, {}}},
    {0x89, {"NEWFALSE", OpcodeClass::kData, {}}},
    {0x8a, {"LONG1", OpcodeClass::kData, {}}},
    {0x8b, {"LONG4", OpcodeClass::kData, {}}},
    {'B', {"BINBYTES", OpcodeClass::kData, {}}},
    {'C', {"SHORT_BINBYTES", OpcodeClass::kData, {}}},
    {0x8c, {"SHORT_BINUNICODE", OpcodeClass::kData, {}}},
    {0x8d, {"BINUNICODE8", OpcodeClass::kData, {}}},
    {0x8e, {"BINBYTES8", OpcodeClass::kData, {}}},
    {0x8f, {"EMPTY_SET", OpcodeClass::kUnsupported, kSet}},
    {0x90, {"ADDITEMS", OpcodeClass::kUnsupported, kSet}},
    {0x91, {"FROZENSET", OpcodeClass::kUnsupported, kSet}},
    {0x92, {"NEWOBJ_EX", OpcodeClass::kCode, kCalls}},
    {0x93, {"STACK_GLOBAL", OpcodeClass::kCode, kImports}},
    {0x94, {"MEMOIZE", OpcodeClass::kData, {}}},
    {0x95, {"FRAME", OpcodeClass::kData, {}}},
    {0x96, {"BYTEARRAY8", OpcodeClass::kData, {}}},
    {0x97, {"NEXT_BUFFER", OpcodeClass::kUnsupported, kBuffer}},
    {0x98, {"READONLY_BUFFER", OpcodeClass::kUnsupported, kBuffer}},
};

constexpr std::array<OpcodeInfo, 256> BuildTable() {
  std::array<OpcodeInfo, 256> table{};
  for (const Entry& e : kEntries) table[e.op] = e.info;
  return table;
}

constexpr std::array<OpcodeInfo, 256> kTable = BuildTable();

}  // namespace

const OpcodeInfo& GetOpcodeInfo(uint8_t op) { return kTable[op]; }

}  // namespace hbmsim::trace
