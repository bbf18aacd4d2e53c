// Drawing with gnuplot (Debian's gnuplot-nox): a script and its data files in a temporary folder,
// the image written beside the target and renamed into place, so that a failed plot leaves nothing.
#pragma once

#include <filesystem>
#include <string>

namespace cs::cli {

class GnuplotJob {
 public:
  // Whether `path` can take a plot: .png or .svg, in a folder that exists, with gnuplot installed;
  // InputError naming `flag` otherwise. Commands call it before their work, the job again.
  static void check_target(const std::string& flag, const std::string& path);
  // `path` is the image to write (check_target's InputErrors).
  GnuplotJob(std::string flag, std::string path);
  ~GnuplotJob();
  GnuplotJob(const GnuplotJob&) = delete;
  GnuplotJob& operator=(const GnuplotJob&) = delete;

  // Writes a data file into the temporary folder and returns its name quoted for the script.
  std::string data(const std::string& name, const std::string& content);
  // The `set terminal ...` and `set output ...` lines for the target, `width` x `height` pixels.
  std::string header(int width, int height) const;
  // Runs `script` (which starts with header()); InputError with gnuplot's first error line if it
  // fails, else the image is renamed into place.
  void run(const std::string& script);

 private:
  std::string flag_;
  std::filesystem::path target_;
  std::filesystem::path partial_;
  std::filesystem::path dir_;
};

// gnuplot's own quoting: a single-quoted string, its quotes doubled.
std::string gnuplot_quoted(const std::string& text);

}  // namespace cs::cli
