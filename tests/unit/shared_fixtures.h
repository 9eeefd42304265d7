// The historical datasets written by released pylance versions live beside the
// clone, in ../shared/fixtures/lance-test-data (CI lays them there; a user's
// clone has none). A test that needs them starts with
// LANCE_REQUIRE_SHARED_FIXTURES(): without them it is skipped with one fixed
// message, which `make unit` counts and names in its summary.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>

namespace lance::shared_fixtures {

inline const std::filesystem::path& Dir() {
  static const std::filesystem::path dir = LANCE_FIXTURES_DIR;
  return dir;
}

inline bool Present() { return std::filesystem::is_directory(Dir()); }

}  // namespace lance::shared_fixtures

// scripts/unit_summary.sh greps for this text: keep the two in step.
#define LANCE_SHARED_FIXTURES_MISSING \
  "../shared/fixtures/lance-test-data not found beside the clone (historical pylance datasets)"

#define LANCE_REQUIRE_SHARED_FIXTURES()                                                   \
  do {                                                                                    \
    if (!::lance::shared_fixtures::Present()) {                                           \
      GTEST_SKIP() << LANCE_SHARED_FIXTURES_MISSING << "; looked in "                     \
                   << ::lance::shared_fixtures::Dir().string();                           \
    }                                                                                     \
  } while (0)
