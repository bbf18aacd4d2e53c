// Output files appear whole or not at all: written to a temporary beside the target, then renamed.
#pragma once

#include <string>
#include <string_view>

namespace cs {

// Writes `content` to `path` atomically; throws InputError naming the path if it cannot.
void write_file_atomically(const std::string& path, std::string_view content);

// The two steps, for writers of several files that rename none before all are written
// (cli/output/output_files.hpp). `what` names the file in errors ("the --csv file").
// Writes and flushes a temporary beside `path` (path + ".clustersim-<pid>.tmp": no file of the
// user's is taken) and returns its name; InputError, leaving no temporary, if it cannot.
std::string write_temporary(const std::string& path, std::string_view content,
                            const std::string& what);
// Renames a finished temporary over `path`; InputError, the temporary removed, if it cannot.
void put_in_place(const std::string& temporary, const std::string& path, const std::string& what);

}  // namespace cs
