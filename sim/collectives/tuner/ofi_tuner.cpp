// aws-ofi-nccl's region tuner: see ofi_tuner.hpp.
#include "collectives/tuner/ofi_tuner.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace cs::coll {
namespace {

// The plugin's plane ends (internal/tuner/nccl_defaults.h): 100 GiB and 2^20 ranks.
constexpr double kMaxSize = 100.0 * 1024 * 1024 * 1024;
constexpr double kMaxRanks = 1024.0 * 1024;
constexpr double kEps = 1e-10;

// The plugin works on log2 coordinates; a zero coordinate stands for 1e-6.
OfiPoint to_log2(OfiPoint p) {
  return {std::log2(p.x == 0 ? 1e-6 : p.x), std::log2(p.y == 0 ? 1e-6 : p.y)};
}

double cross(OfiPoint a, OfiPoint b) {
  return a.x * b.y - a.y * b.x;
}
OfiPoint minus(OfiPoint a, OfiPoint b) {
  return {a.x - b.x, a.y - b.y};
}

// Where segment p0 -> p1 meets segment q0 -> q1: +1 strictly inside both, -1 apart, 0 parallel
// or within kEps of q's ends; `at` gets the meeting point on q's line when not parallel.
int meet(OfiPoint p0, OfiPoint p1, OfiPoint q0, OfiPoint q1, OfiPoint* at) {
  const OfiPoint dp = minus(p1, p0);
  const OfiPoint dq = minus(q1, q0);
  const double d = cross(dq, dp);
  if (std::fabs(d) < kEps) return 0;
  const double u = (cross(p0, dp) - cross(q0, dp)) / d;  // along q
  if (at != nullptr) *at = {q0.x + u * dq.x, q0.y + u * dq.y};
  if (u < -kEps || u > 1 + kEps) return -1;
  if (u < kEps || u > 1 - kEps) return 0;
  const double t = (cross(p0, dq) - cross(q0, dq)) / d;  // along p
  return t < 0 || t > 1 ? -1 : 1;
}

// Distance from p to segment q0 -> q1 along the perpendicular, infinity when its foot falls
// outside the segment.
double distance(OfiPoint p, OfiPoint q0, OfiPoint q1) {
  const OfiPoint dq = minus(q1, q0);
  const OfiPoint p1{p.x + dq.y, p.y - dq.x};
  OfiPoint foot{0, 0};
  if (meet(p, p1, q0, q1, &foot) == -1) return std::numeric_limits<double>::infinity();
  const OfiPoint v = minus(foot, p);
  return std::sqrt(v.x * v.x + v.y * v.y);
}

// The plugin's extend_region: on the line through a and b (log2 space), the farthest point that
// shares z's x or z's y, returned in plain coordinates.
OfiPoint extend(OfiPoint a, OfiPoint b, OfiPoint z) {
  a = to_log2(a);
  b = to_log2(b);
  z = to_log2(z);
  OfiPoint r;
  if (a.x == b.x) {
    r = {a.x, z.y};
  } else if (a.y == b.y) {
    r = {z.x, a.y};
  } else {
    const double m = (a.y - b.y) / (a.x - b.x);
    const double c = b.y - m * b.x;
    const double y_at = m * z.x + c;
    r = y_at < z.y ? OfiPoint{z.x, y_at} : OfiPoint{(z.y - c) / m, z.y};
  }
  return {std::exp2(r.x), std::exp2(r.y)};
}

struct Region {
  OfiChoice choice;
  std::vector<OfiPoint> vertices;  // plain coordinates
};

// region_init_internal_p5_p5e, 8 ranks per server, all-reduce: the vertices as the plugin lists
// them (bytes, ranks), its order kept (the first region holding a point wins).
const std::vector<Region>& p5_allreduce() {
  static const std::vector<Region> regions = [] {
    const OfiPoint far{kMaxSize, kMaxRanks};
    const OfiPoint tree_edge = extend({402653184, 2048}, {402653184, 4096}, far);
    const OfiPoint nvls_edge = extend({8053063680, 160}, {9663676416, 192}, far);
    std::vector<Region> r;
    r.push_back({{Algo::tree, Proto::ll128},
                 {{0, 16},
                  {31457280, 16},
                  {37748736, 32},
                  {117440512, 64},
                  {301989888, 128},
                  {301989888, 256},
                  {335544320, 512},
                  {536870912, 1024},
                  {402653184, 2048},
                  {402653184, 4096},
                  tree_edge,
                  {0, tree_edge.y}}});
    r.push_back(
        {{Algo::nvls_tree, Proto::simple}, {{31457281, 16}, {kMaxSize, 16}, {31457281, 16}}});
    r.push_back({{Algo::ring, Proto::ll128},
                 {{31457280, 17},
                  {1073741824, 17},
                  {2147483648, 64},
                  {2147483648, 128},
                  {1342177280, 160},
                  {2147483648, 256},
                  {1074790400, 256},
                  {444596224, 160},
                  {301989888, 128},
                  {117440512, 64},
                  {37748736, 32}}});
    r.push_back({{Algo::nvls_tree, Proto::simple},
                 {{2147483648, 128},
                  {6442450944, 128},
                  {8053063680, 160},
                  {9663676416, 192},
                  nvls_edge,
                  tree_edge,
                  {402653184, 4096},
                  {402653184, 2048},
                  {536870912, 1024},
                  {335544320, 512},
                  {301989888, 256},
                  {310378496, 160},
                  {444596224, 160},
                  {1074790400, 256},
                  {2684354560, 256},
                  {2147483648, 224},
                  {1342177280, 160}}});
    r.push_back({{Algo::ring, Proto::simple},
                 {{1073741824, 17},
                  {nvls_edge.x, 17},
                  nvls_edge,
                  {9663676416, 192},
                  {8053063680, 160},
                  {2684354560, 64},
                  {1610612736, 32}}});
    return r;
  }();
  return regions;
}

}  // namespace

OfiPlatform ofi_platform(std::string_view instance_type) {
  return instance_type == "p5.48xlarge" || instance_type == "p5e.48xlarge" ? OfiPlatform::p5
                                                                           : OfiPlatform::none;
}

bool ofi_inside(OfiPoint point, const std::vector<OfiPoint>& vertices) {
  const std::size_t n = vertices.size();
  if (n < 2) return false;
  std::vector<OfiPoint> v(n);
  std::transform(vertices.begin(), vertices.end(), v.begin(), to_log2);
  const OfiPoint p = to_log2(point);
  for (std::size_t i = 0; i < n; ++i) {
    if (distance(p, v[i], v[(i + 1) % n]) < kEps) return true;  // on an edge
  }
  double lo_x = v[0].x, hi_x = v[0].x, lo_y = v[0].y, hi_y = v[0].y;
  for (const OfiPoint& q : v) {
    lo_x = std::min(lo_x, q.x);
    hi_x = std::max(hi_x, q.x);
    lo_y = std::min(lo_y, q.y);
    hi_y = std::max(hi_y, q.y);
  }
  if (p.x < lo_x || p.x > hi_x || p.y < lo_y || p.y > hi_y) return false;
  // Even-odd crossings of the ray to a point beyond every region.
  const OfiPoint out = to_log2({2.0 * kMaxSize, 2.0 * kMaxRanks});
  int crossings = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (meet(p, out, v[i], v[(i + 1) % n], nullptr) == 1) ++crossings;
  }
  return (crossings & 1) != 0;
}

std::optional<OfiChoice> ofi_tuner_choice(OfiPlatform platform, Op op, double bytes, int n_ranks,
                                          int n_nodes,
                                          const std::function<bool(Algo, Proto)>& allowed) {
  // The plugin leaves two servers or fewer to NCCL ("regions are not well defined" there), and
  // has p5 regions for all-reduce on 8 ranks per server only.
  if (platform != OfiPlatform::p5 || op != Op::all_reduce || n_nodes <= 2 || n_ranks != 8 * n_nodes)
    return std::nullopt;
  const OfiPoint point{bytes, static_cast<double>(n_ranks)};
  for (const Region& r : p5_allreduce()) {
    if (!allowed(r.choice.algo, r.choice.proto)) continue;
    if (ofi_inside(point, r.vertices)) return r.choice;
  }
  return std::nullopt;
}

}  // namespace cs::coll
