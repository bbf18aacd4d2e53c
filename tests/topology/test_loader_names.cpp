// Name patterns ("gpu[0-7]") and the typo helpers behind the loader's "did you mean".
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "topology/expand/expand_names.hpp"
#include "topology/parse/loader_names.hpp"

using cs::topo::names::expand_pattern;
using cs::topo::names::PatternError;
using Names = std::vector<std::string>;

TEST_CASE("a range, a list and a plain name") {
  CHECK(expand_pattern("gpu[0-3]", 100) == Names{"gpu0", "gpu1", "gpu2", "gpu3"});
  CHECK(expand_pattern("psw[0,0,1,1]", 100) == Names{"psw0", "psw0", "psw1", "psw1"});
  CHECK(expand_pattern("x[2-3,7]", 100) == Names{"x2", "x3", "x7"});
  CHECK(expand_pattern("cpu", 100) == Names{"cpu"});
  CHECK(expand_pattern("[1-2]a", 100) == Names{"1a", "2a"});
}

TEST_CASE("two groups form the product, the last varying fastest") {
  CHECK(expand_pattern("node[0-1]/nic[0-1]", 100) ==
        Names{"node0/nic0", "node0/nic1", "node1/nic0", "node1/nic1"});
}

TEST_CASE("bad patterns say what is wrong") {
  auto message = [](const char* pattern) {
    try {
      expand_pattern(pattern, 1000);
    } catch (const PatternError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK(message("gpu[0-3").find("not closed") != std::string::npos);
  CHECK(message("gpu0-3]").find("without a matching '['") != std::string::npos);
  CHECK(message("gpu[a]").find("not an index") != std::string::npos);
  CHECK(message("gpu[]").find("not an index") != std::string::npos);
  CHECK(message("gpu[-1]").find("not an index") != std::string::npos);
  CHECK(message("gpu[3-1]").find("runs backwards") != std::string::npos);
  CHECK(message("").find("empty") != std::string::npos);
  // 10^9 names would exhaust memory; the cap (1000 here) turns it into a message.
  CHECK(message("gpu[0-999999999]").find("more than 1000 names") != std::string::npos);
  CHECK(message("a[0-99]b[0-99]").find("more than 1000 names") != std::string::npos);
}

TEST_CASE("edit distance and the closest candidate") {
  using namespace cs::topo::names;
  CHECK(edit_distance("bandwith", "bandwidth") == 1);  // one insertion
  CHECK(edit_distance("kitten", "sitting") == 3);      // k->s, e->i, +g
  CHECK(edit_distance("", "abc") == 3);
  CHECK(closest("fabrik", {"name", "fabric", "links"}) == "fabric");
  // Nothing within max(2, 3 / 3) = 2 edits of "zzz": no suggestion rather than a misleading one.
  CHECK(closest("zzz", {"name", "fabric", "links"}).empty());
  CHECK(did_you_mean("H10", {"H100"}) == " (did you mean 'H100'?)");
}

TEST_CASE("long name lists are truncated with a count") {
  using namespace cs::topo::names;
  Names many;
  for (int i = 0; i < 15; ++i) many.push_back("n" + std::to_string(i));
  CHECK(join_truncated(many, 3) == "n0, n1, n2, ... (12 more)");
  CHECK(join_truncated({"a", "b"}) == "a, b");
  CHECK(join_truncated({}) == "(none)");
}
