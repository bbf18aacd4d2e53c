// Reading an input file whole, with the one-line error every command gives when it cannot: a
// missing file, a folder where a file belongs, a read that fails part way, or binary data where
// text belongs.
#pragma once

#include <string>
#include <string_view>

namespace cs {

// The bytes of `path`. Throws InputError "path: cannot open the <what>: <reason>" where `what`
// names the input ("topology file", "flows file") so that the user knows which flag to fix.
std::string read_input_file(const std::string& path, const std::string& what);

// Refuses binary data: the first NUL or other control byte (tab, CR and LF aside) throws
// InputError "file:line: not a text file (control byte 0x00); <expected>", `expected` saying what
// the file should hold ("a model file is YAML text"). The YAML and JSON parsers would call it
// malformed and quote its raw bytes.
void check_is_text(std::string_view text, const std::string& file, const std::string& expected);

}  // namespace cs
