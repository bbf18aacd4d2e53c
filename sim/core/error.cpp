// Formatting of the error messages declared in error.hpp.
#include "core/error.hpp"

namespace cs {
namespace {

std::string located(const SourceLoc& loc, const std::string& key, const std::string& message) {
  // Built with append: GCC 12 warns falsely (-Wrestrict) on chains of string operator+.
  std::string out = loc.file.empty() ? std::string("<input>") : loc.file;
  if (loc.line > 0) out.append(":").append(std::to_string(loc.line));
  out.append(": ");
  if (!key.empty()) out.append("key '").append(key).append("': ");
  return out.append(message);
}

}  // namespace

InputError::InputError(const SourceLoc& loc, const std::string& key, const std::string& message)
    : std::runtime_error(located(loc, key, message)) {}

void fail_invariant(const char* condition, const char* file, int line, const std::string& detail) {
  throw InternalError(std::string("internal error: ") + condition + " failed at " + file + ":" +
                      std::to_string(line) + ": " + detail);
}

}  // namespace cs
