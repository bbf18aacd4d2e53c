// Output files appear whole or not at all: written to a temporary beside the target, then renamed.
#pragma once

#include <string>
#include <string_view>

namespace cs {

// Writes `content` to `path` atomically; throws InputError naming the path if it cannot.
void write_file_atomically(const std::string& path, std::string_view content);

}  // namespace cs
