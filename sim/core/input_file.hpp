// Reading an input file whole, with the one-line error every command gives when it cannot: a
// missing file, a folder where a file belongs, or a read that fails part way.
#pragma once

#include <string>

namespace cs {

// The bytes of `path`. Throws InputError "path: cannot open the <what>: <reason>" where `what`
// names the input ("topology file", "flows file") so that the user knows which flag to fix.
std::string read_input_file(const std::string& path, const std::string& what);

}  // namespace cs
