// Formatting of the error messages declared in error.hpp.
#include "core/error.hpp"

namespace cs {
namespace {

std::string located(const SourceLoc& loc, const std::string& key, const std::string& message) {
  std::string out = loc.file.empty() ? std::string("<input>") : loc.file;
  if (loc.line > 0) out += ":" + std::to_string(loc.line);
  out += ": ";
  if (!key.empty()) out += "key '" + key + "': ";
  return out + message;
}

}  // namespace

InputError::InputError(const SourceLoc& loc, const std::string& key, const std::string& message)
    : std::runtime_error(located(loc, key, message)) {}

void fail_invariant(const char* condition, const char* file, int line, const std::string& detail) {
  throw InternalError(std::string("internal error: ") + condition + " failed at " + file + ":" +
                      std::to_string(line) + ": " + detail);
}

}  // namespace cs
