// Names and nccl-tests factors of the NCCL vocabulary.
#include "collectives/nccl/nccl_types.hpp"

#include <algorithm>
#include <cctype>

namespace cs::coll {
namespace {

std::string lower_without_underscores(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '_' || c == '-') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

constexpr Op kAllOps[] = {Op::all_reduce, Op::all_gather, Op::reduce_scatter, Op::broadcast,
                          Op::reduce,     Op::all_to_all, Op::send_recv};

}  // namespace

const char* to_string(Op op) {
  switch (op) {
    case Op::all_reduce:
      return "allreduce";
    case Op::all_gather:
      return "allgather";
    case Op::reduce_scatter:
      return "reducescatter";
    case Op::broadcast:
      return "broadcast";
    case Op::reduce:
      return "reduce";
    case Op::all_to_all:
      return "alltoall";
    case Op::send_recv:
      return "sendrecv";
  }
  return "?";
}

const char* to_string(Algo algo) {
  switch (algo) {
    case Algo::tree:
      return "TREE";
    case Algo::ring:
      return "RING";
    case Algo::nvls:
      return "NVLS";
    case Algo::pat:
      return "PAT";
    case Algo::nvls_tree:
      return "NVLSTREE";
    case Algo::collnet_direct:
      return "COLLNETDIRECT";
    case Algo::collnet_chain:
      return "COLLNETCHAIN";
  }
  return "?";
}

const char* to_string(Proto proto) {
  switch (proto) {
    case Proto::ll:
      return "LL";
    case Proto::ll128:
      return "LL128";
    case Proto::simple:
      return "SIMPLE";
  }
  return "?";
}

const char* to_string(LinkClass c) {
  switch (c) {
    case LinkClass::nvlink:
      return "nvlink";
    case LinkClass::pcie:
      return "pcie";
    case LinkClass::network:
      return "network";
  }
  return "?";
}

std::optional<Op> parse_op(std::string_view text) {
  const std::string key = lower_without_underscores(text);
  for (Op op : kAllOps) {
    if (key == to_string(op)) return op;
  }
  return std::nullopt;
}

std::optional<Algo> parse_algo(std::string_view text) {
  const std::string key = lower_without_underscores(text);
  for (Algo a : kAllAlgos) {
    if (key == lower_without_underscores(to_string(a))) return a;
  }
  return std::nullopt;
}

std::optional<Proto> parse_proto(std::string_view text) {
  const std::string key = lower_without_underscores(text);
  for (Proto p : kAllProtos) {
    if (key == lower_without_underscores(to_string(p))) return p;
  }
  return std::nullopt;
}

std::string valid_ops() {
  std::string out;
  for (Op op : kAllOps) out += (out.empty() ? "" : ", ") + std::string(to_string(op));
  return out;
}

std::string valid_algos() {
  std::string out;
  for (Algo a : kAllAlgos) out += (out.empty() ? "" : ", ") + std::string(to_string(a));
  return out;
}

std::string valid_protos() {
  std::string out;
  for (Proto p : kAllProtos) out += (out.empty() ? "" : ", ") + std::string(to_string(p));
  return out;
}

double busbw_factor(Op op, int n_ranks) {
  const double n = static_cast<double>(std::max(n_ranks, 1));
  switch (op) {
    case Op::all_reduce:
      return 2.0 * (n - 1.0) / n;
    case Op::all_gather:
    case Op::reduce_scatter:
    case Op::all_to_all:
      return (n - 1.0) / n;
    case Op::broadcast:
    case Op::reduce:
    case Op::send_recv:
      return 1.0;
  }
  return 1.0;
}

}  // namespace cs::coll
