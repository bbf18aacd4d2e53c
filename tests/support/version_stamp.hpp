// The JSON outputs carry the clustersim that wrote them ("clustersim_version": "0.1 (git <commit>,
// Release)"), which changes with every commit; golden files hold "VERSION" there instead, and the
// golden tests put it into the output before comparing (the refresh scripts write it so).
#pragma once

#include <regex>
#include <string>

namespace cs::test {

inline std::string unversioned(const std::string& output) {
  static const std::regex stamp("\"clustersim_version\": \"[^\"]*\"");
  return std::regex_replace(output, stamp, "\"clustersim_version\": \"VERSION\"");
}

}  // namespace cs::test
