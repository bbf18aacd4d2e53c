// publish_file / await_file: the writer renames a finished temporary into place (atomic within one
// file system), so a reader that sees the name reads the whole text.
#include "rendezvous.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "core/atomic_file.hpp"

namespace cs_cal {

namespace fs = std::filesystem;

void publish_file(const std::string& dir, const std::string& name, const std::string& text) {
  const fs::path path = fs::path(dir) / name;
  if (fs::exists(path))
    throw std::runtime_error("rendezvous file " + path.string() +
                             " exists already (left by an earlier run?): remove it or give a "
                             "fresh directory");
  cs::write_file_atomically(path.string(), text);
}

std::string await_file(const std::string& dir, const std::string& name, double timeout_s,
                       const std::string& writer) {
  const fs::path path = fs::path(dir) / name;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (!fs::exists(path)) {
    if (std::chrono::steady_clock::now() > deadline) {
      std::ostringstream what;
      what << "rendezvous: no " << path.string() << " after " << timeout_s << " s; " << writer
           << " writes it (is it running, with the same rendezvous directory?)";
      throw std::runtime_error(what.str());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) throw std::runtime_error("rendezvous: cannot read " + path.string());
  return text.str();
}

void withdraw_file(const std::string& dir, const std::string& name) {
  std::error_code ignored;  // gone already is fine
  fs::remove(fs::path(dir) / name, ignored);
}

}  // namespace cs_cal
