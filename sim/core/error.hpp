// The two error channels of STYLE.md: InputError for bad input (a file, a flag, a device that is
// not there), and CS_ASSERT for broken invariants, which are bugs.
#pragma once

#include <stdexcept>
#include <string>

namespace cs {

// Where a value came from: a file and a 1-based line (0 when no line applies).
struct SourceLoc {
  std::string file;
  int line = 0;
};

// Bad input. what() reads "file:line: key 'k': message" so that a user can jump to the spot.
class InputError : public std::runtime_error {
 public:
  InputError(const SourceLoc& loc, const std::string& key, const std::string& message);
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

// A unit string that does not parse; loaders catch it and rethrow as InputError with a location.
class UnitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A broken invariant: a bug in clustersim, never a user's mistake.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void fail_invariant(const char* condition, const char* file, int line,
                                 const std::string& detail);

}  // namespace cs

#define CS_ASSERT(cond, detail)                                             \
  do {                                                                      \
    if (!(cond)) ::cs::fail_invariant(#cond, __FILE__, __LINE__, (detail)); \
  } while (0)
