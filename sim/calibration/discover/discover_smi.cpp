// parse_nvidia_smi_topo: header -> device columns and trailing attribute columns; one row per
// device; "NIC Legend" lines name the NICs. Terminal escape codes (underlined header) are dropped.
#include "calibration/discover/discover_smi.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <sstream>

#include "core/error.hpp"

namespace cs::cal {
namespace {

std::string strip_escapes(std::string_view line) {
  std::string out;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\x1b' && i + 1 < line.size() && line[i + 1] == '[') {
      i += 2;
      while (i < line.size() && !std::isalpha(static_cast<unsigned char>(line[i]))) ++i;
      continue;
    }
    if (line[i] != '\r') out += line[i];
  }
  return out;
}

std::string trim(std::string_view text) {
  size_t a = 0;
  size_t b = text.size();
  while (a < b && std::isspace(static_cast<unsigned char>(text[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(text[b - 1]))) --b;
  return std::string(text.substr(a, b - a));
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, '\t')) cells.push_back(trim(cell));
  return cells;
}

bool is_attribute_header(const std::string& cell) {
  return cell.find("Affinity") != std::string::npos || cell.find("NUMA ID") != std::string::npos;
}

SmiCell parse_cell(const std::string& text, const SourceLoc& loc, const std::string& column) {
  if (text == "X") return {SmiLink::self, 0};
  if (text.size() > 2 && text.compare(0, 2, "NV") == 0 &&
      std::all_of(text.begin() + 2, text.end(),
                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    int links = 0;
    const auto [end, ec] = std::from_chars(text.data() + 2, text.data() + text.size(), links);
    if (ec != std::errc() || links < 1)
      throw InputError(loc, column,
                       "connection '" + text + "' is not a count of NVLinks (NV1, NV18)");
    return {SmiLink::nvlink, links};
  }
  static const std::map<std::string, SmiLink> kNames = {
      {"PIX", SmiLink::pix},   {"PXB", SmiLink::pxb}, {"PHB", SmiLink::phb},
      {"NODE", SmiLink::node}, {"SYS", SmiLink::sys}, {"SOC", SmiLink::sys}};
  const auto found = kNames.find(text);
  if (found == kNames.end()) {
    throw InputError(
        loc, column,
        "connection '" + text + "' is not one of X, NV<n>, PIX, PXB, PHB, NODE, SYS, SOC");
  }
  return {found->second, 0};
}

}  // namespace

const char* to_string(SmiLink link) {
  switch (link) {
    case SmiLink::self:
      return "X";
    case SmiLink::nvlink:
      return "NV";
    case SmiLink::pix:
      return "PIX";
    case SmiLink::pxb:
      return "PXB";
    case SmiLink::phb:
      return "PHB";
    case SmiLink::node:
      return "NODE";
    case SmiLink::sys:
      return "SYS";
  }
  return "?";
}

int SmiTopology::gpu_count() const {
  return static_cast<int>(
      std::count_if(devices.begin(), devices.end(), [](const SmiDevice& d) { return d.is_gpu; }));
}

SmiTopology parse_nvidia_smi_topo(std::string_view text, const std::string& source) {
  SmiTopology topo;
  std::vector<std::string> attributes;  // header cells after the device columns
  std::map<std::string, size_t> index;  // device name -> column
  std::vector<bool> row_seen;
  std::istringstream in{std::string(text)};
  std::string raw;
  int line = 0;
  bool header_done = false;
  while (std::getline(in, raw)) {
    ++line;
    const std::string clean = strip_escapes(raw);
    const std::string trimmed = trim(clean);
    if (trimmed.empty()) continue;
    if (!header_done) {
      if (clean.find('\t') == std::string::npos) continue;
      const auto cells = split_tabs(clean);
      for (const std::string& cell : cells) {
        if (cell.empty()) continue;
        if (is_attribute_header(cell) || !attributes.empty()) {
          attributes.push_back(cell);
          continue;
        }
        if (index.count(cell) != 0)
          throw InputError(SourceLoc{source, line}, cell, "the header names this device twice");
        SmiDevice device;
        device.name = cell;
        device.is_gpu = cell.rfind("GPU", 0) == 0;
        index[cell] = topo.devices.size();
        topo.devices.push_back(device);
      }
      if (topo.devices.empty())
        throw InputError(SourceLoc{source, line}, "header",
                         "no device columns (GPU0, ...) in the first tabbed line");
      topo.matrix.assign(topo.devices.size(), std::vector<SmiCell>(topo.devices.size()));
      row_seen.assign(topo.devices.size(), false);
      header_done = true;
      continue;
    }
    // "  NIC0: mlx5_0" legend lines
    const auto colon = trimmed.find(':');
    if (colon != std::string::npos && clean.find('\t') == std::string::npos) {
      const auto found = index.find(trim(trimmed.substr(0, colon)));
      if (found != index.end())
        topo.devices[found->second].legend_name = trim(trimmed.substr(colon + 1));
      continue;
    }
    const auto cells = split_tabs(clean);
    const auto found = index.find(cells.empty() ? std::string() : cells[0]);
    if (found == index.end()) continue;  // legend text and anything else
    const SourceLoc loc{source, line};
    const size_t row = found->second;
    const size_t columns = topo.devices.size();
    if (cells.size() < columns + 1) {
      throw InputError(loc, cells[0],
                       "row has " + std::to_string(cells.size() - 1) + " cells, the header names " +
                           std::to_string(columns) + " devices");
    }
    for (size_t c = 0; c < columns; ++c)
      topo.matrix[row][c] = parse_cell(cells[c + 1], loc, topo.devices[c].name);
    if (topo.matrix[row][row].link != SmiLink::self)
      throw InputError(loc, cells[0], "the diagonal cell is not X");
    // Attribute cells (CPU Affinity, NUMA Affinity, GPU NUMA ID): nvidia-smi pads with empty
    // cells, so take the non-empty ones in order.
    std::vector<std::string> values;
    for (size_t c = columns + 1; c < cells.size(); ++c) {
      if (!cells[c].empty()) values.push_back(cells[c]);
    }
    for (size_t a = 0; a < attributes.size() && a < values.size(); ++a) {
      if (attributes[a] == "CPU Affinity") topo.devices[row].cpu_affinity = values[a];
      if (attributes[a] == "NUMA Affinity") topo.devices[row].numa_affinity = values[a];
    }
    topo.devices[row].line = line;
    row_seen[row] = true;
  }
  if (!header_done)
    throw InputError(SourceLoc{source, 0}, "header",
                     "no `nvidia-smi topo -m` header (a tab-separated line naming GPU0, ...)");
  for (size_t r = 0; r < topo.devices.size(); ++r) {
    if (!row_seen[r])
      throw InputError(SourceLoc{source, line}, topo.devices[r].name,
                       "the header names this device but no row describes it");
    for (size_t c = 0; c < r; ++c) {
      const SmiCell& a = topo.matrix[r][c];
      const SmiCell& b = topo.matrix[c][r];
      if (a.link != b.link || a.nvlinks != b.nvlinks) {
        throw InputError(SourceLoc{source, topo.devices[r].line}, topo.devices[c].name,
                         "the matrix is not symmetric: " + topo.devices[r].name + "-" +
                             topo.devices[c].name + " differs from " + topo.devices[c].name + "-" +
                             topo.devices[r].name);
      }
    }
  }
  if (topo.gpu_count() == 0) throw InputError(SourceLoc{source, 0}, "header", "no GPU columns");
  return topo;
}

}  // namespace cs::cal
