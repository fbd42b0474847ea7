// Tests of the runs component: loops cut into runs of calls (ForEachRun), which the
// restore's validation relies on to stop at the first bad item.
#include "factlens/runs.h"

#include <catch2/catch.hpp>
#include <cstddef>
#include <vector>

namespace factlens {
namespace {

TEST_CASE("runs: every item once, in order, at any count and run size", "[runs]") {
  for (size_t run_size : {size_t{1}, size_t{3}, size_t{7}, kItemsPerRun}) {
    for (size_t count :
         {size_t{0}, size_t{1}, size_t{6}, size_t{7}, size_t{8}, kItemsPerRun - 1,
          kItemsPerRun, kItemsPerRun + 1, 3 * kItemsPerRun + 5}) {
      std::vector<size_t> seen;
      const bool all = ForEachRun(
          count,
          [&](size_t i) {
            seen.push_back(i);
            return true;
          },
          run_size);
      CHECK(all);
      REQUIRE(seen.size() == count);
      for (size_t i = 0; i < count; ++i) CHECK(seen[i] == i);
    }
  }
}

TEST_CASE("runs: the first false stops the loop and is returned", "[runs]") {
  // A false inside a run, at a run's last item, and at the very last item: no item
  // after it is visited, in its run or the next.
  for (size_t stop : {size_t{0}, size_t{5}, kItemsPerRun - 1, kItemsPerRun,
                      2 * kItemsPerRun + 9, 3 * kItemsPerRun - 1}) {
    std::vector<size_t> seen;
    const bool all = ForEachRun(3 * kItemsPerRun, [&](size_t i) {
      seen.push_back(i);
      return i != stop;
    });
    CHECK_FALSE(all);
    REQUIRE(seen.size() == stop + 1);
    CHECK(seen.back() == stop);
  }
}

TEST_CASE("runs: a body held as a const lvalue works as a temporary does", "[runs]") {
  size_t sum = 0;
  const auto add = [&sum](size_t i) {
    sum += i;
    return true;
  };
  CHECK(ForEachRun(100, add, 9));
  CHECK(sum == 4950);
}

}  // namespace
}  // namespace factlens
