// Helpers shared by the BFC dump tests.
#ifndef HBMSIM_TESTS_BFC_DUMP_TEST_UTIL_H_
#define HBMSIM_TESTS_BFC_DUMP_TEST_UTIL_H_

#include <string>

#include "gtest/gtest.h"
#include "trace/bfc_dump/parser.h"

namespace hbmsim::trace::bfc_dump {

// Parses shared/bfc_dumps/<name>; fails the test when it does not parse.
inline BfcLog LoadSharedDump(const std::string& name) {
  auto log = ReadBfcLogFile(std::string(HBMSIM_SHARED_DIR) + "/bfc_dumps/" + name);
  EXPECT_TRUE(log.ok()) << log.status();
  return log.ok() ? *std::move(log) : BfcLog{};
}

// Parses in-memory text that must hold at least one dump.
inline BfcLog ParseText(const std::string& text) {
  auto log = ParseBfcLog(text, "test.log");
  EXPECT_TRUE(log.ok()) << log.status();
  return log.ok() ? *std::move(log) : BfcLog{};
}

}  // namespace hbmsim::trace::bfc_dump

#endif  // HBMSIM_TESTS_BFC_DUMP_TEST_UTIL_H_
