#include "cli/output/gnuplot.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cli/output/output_guard.hpp"
#include "core/error.hpp"

namespace cs::cli {

namespace fs = std::filesystem;

std::string gnuplot_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    out += c;
    if (c == '\'') out += '\'';
  }
  return out + "'";
}

void GnuplotJob::check_target(const std::string& flag, const std::string& path) {
  const std::string ext = fs::path(path).extension().string();
  if (ext != ".png" && ext != ".svg") {
    throw InputError("key '" + flag + "': '" + path + "' is neither .png nor .svg");
  }
  check_output_folder({flag, path});
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    throw InputError("key '" + flag +
                     "': gnuplot is not installed (Debian: apt-get install gnuplot-nox)");
  }
}

GnuplotJob::GnuplotJob(std::string flag, std::string path)
    : flag_(std::move(flag)), target_(std::move(path)) {
  check_target(flag_, target_.string());
  partial_ = target_.parent_path() / ("." + target_.filename().string() + ".partial");
  dir_ = fs::temp_directory_path() /
         ("clustersim-plot-" + std::to_string(static_cast<long>(::getpid())));
  fs::create_directories(dir_);
}

GnuplotJob::~GnuplotJob() {
  std::error_code ignored;
  fs::remove_all(dir_, ignored);
  fs::remove(partial_, ignored);
}

std::string GnuplotJob::data(const std::string& name, const std::string& content) {
  std::ofstream(dir_ / name) << content;
  return gnuplot_quoted((dir_ / name).string());
}

std::string GnuplotJob::header(int width, int height) const {
  const std::string size = std::to_string(width) + "," + std::to_string(height);
  const std::string terminal = target_.extension() == ".png" ? "pngcairo" : "svg";
  return "set terminal " + terminal + " size " + size + " font 'sans,11'\nset output " +
         gnuplot_quoted(partial_.string()) + "\n";
}

void GnuplotJob::run(const std::string& script) {
  std::ofstream(dir_ / "plot.gp") << script;
  const std::string command = "gnuplot " + gnuplot_quoted((dir_ / "plot.gp").string()) + " 2>" +
                              gnuplot_quoted((dir_ / "err").string());
  const int status = std::system(command.c_str());
  std::string first_error;
  std::getline(std::ifstream(dir_ / "err"), first_error);
  if (status != 0 || !fs::exists(partial_)) {
    throw InputError("key '" + flag_ + "': gnuplot failed: " +
                     (first_error.empty()
                          ? "it exited with status " +
                                std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : status) +
                                " and printed no reason"
                          : first_error));
  }
  fs::rename(partial_, target_);
}

}  // namespace cs::cli
