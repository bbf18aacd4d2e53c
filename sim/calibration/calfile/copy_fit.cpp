// Looking up a copy fit by its path kind.
#include "calibration/calfile/copy_fit.hpp"

namespace cs::cal {

const CopyFit* find_copy_fit(const std::vector<CopyFit>& fits, const std::string& path) {
  for (const CopyFit& f : fits) {
    if (f.path == path) return &f;
  }
  return nullptr;
}

}  // namespace cs::cal
