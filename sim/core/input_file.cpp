// read_input_file: checks that the path is a readable regular file before reading it, because an
// ifstream opens a folder without complaint and then reads nothing. check_is_text: the bytes a
// text format never holds.
#include "core/input_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"

namespace cs {

std::string read_input_file(const std::string& path, const std::string& what) {
  const auto fail = [&](const std::string& reason) {
    return InputError(SourceLoc{path, 0}, "", "cannot open the " + what + ": " + reason);
  };
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) throw fail(ec.message());
  if (!std::filesystem::exists(status)) throw fail("no such file");
  if (std::filesystem::is_directory(status)) throw fail("it is a folder, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw fail(std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw fail("the read failed part way");
  return text.str();
}

void check_is_text(std::string_view text, const std::string& file, const std::string& expected) {
  int line = 1;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') ++line;
    if ((byte < 0x20 && c != '\n' && c != '\r' && c != '\t') || byte == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", byte);
      throw InputError(SourceLoc{file, line}, "",
                       std::string("not a text file (control byte ") + hex + "); " + expected);
    }
  }
}

}  // namespace cs
