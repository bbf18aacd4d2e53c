// The one translation unit per test binary that holds doctest's runner.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
