// Which clustersim wrote an output: the project's version (top-level CMakeLists.txt), the git
// commit the build was configured at ("unknown" without git) and the build type, set by CMake as
// compile definitions. `clustersim --version` prints it and the JSON outputs carry it
// (`clustersim_version`); text headers do not, since golden files and README examples compare
// them byte for byte and a commit changes with every one.
#pragma once

#include <string>

namespace cs::cli {

// "0.1 (git 1a2b3c4d5e6f, Release)".
std::string version_text();

// A JSON object's text with `clustersim_version` added, in the text's own indentation.
std::string with_version(const std::string& json_object_text);

}  // namespace cs::cli
