// `hbmsim scale` end to end on the shared families (filled in below).
#include "gtest/gtest.h"
#include "tests/cli/cli_test_util.h"
