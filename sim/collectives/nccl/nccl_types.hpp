// The vocabulary of NCCL's cost model: collectives, algorithms, protocols and link classes, with
// their NCCL spellings (NCCL_ALGO / NCCL_PROTO values) and nccl-tests' bus-bandwidth factors.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cs::coll {

enum class Op { all_reduce, all_gather, reduce_scatter, broadcast, reduce, all_to_all, send_recv };
// nvls_tree: NVLS inside each server, a tree across servers (NCCL's NVLSTree; several servers).
// CollNet (in-network reduction on a SHARP fabric) comes last, so that the tables of earlier
// calibration files keep their rows.
enum class Algo { tree, ring, nvls, pat, nvls_tree, collnet_direct, collnet_chain };
enum class Proto { ll, ll128, simple };
// The kind of hop a step crosses; NCCL keeps one per-hop latency table per class.
enum class LinkClass { nvlink, pcie, network };

inline constexpr int kAlgoCount = 7;
inline constexpr int kProtoCount = 3;
inline constexpr int kLinkClassCount = 3;
inline constexpr Algo kAllAlgos[kAlgoCount] = {
    Algo::tree,      Algo::ring,           Algo::nvls,         Algo::pat,
    Algo::nvls_tree, Algo::collnet_direct, Algo::collnet_chain};
inline constexpr Proto kAllProtos[kProtoCount] = {Proto::ll, Proto::ll128, Proto::simple};

inline constexpr int index_of(Algo a) {
  return static_cast<int>(a);
}
inline constexpr int index_of(Proto p) {
  return static_cast<int>(p);
}
inline constexpr int index_of(LinkClass c) {
  return static_cast<int>(c);
}

const char* to_string(
    Op op);  // allreduce, allgather, reducescatter, broadcast, reduce, alltoall, sendrecv
const char* to_string(Algo algo);    // RING, TREE, NVLS, PAT, NVLSTREE (NCCL's log spelling)
const char* to_string(Proto proto);  // LL, LL128, SIMPLE
const char* to_string(LinkClass c);  // nvlink, pcie, network

// Case-insensitive parsers; std::nullopt for an unknown name. Ops also accept nccl-tests program
// stems ("all_reduce").
std::optional<Op> parse_op(std::string_view text);
std::optional<Algo> parse_algo(std::string_view text);
std::optional<Proto> parse_proto(std::string_view text);
std::string valid_ops();  // "allreduce, allgather, ..." for error messages
std::string valid_algos();
std::string valid_protos();

// nccl-tests: busbw = algbw * factor; 2(n-1)/n for all-reduce, (n-1)/n for all-gather,
// reduce-scatter and all-to-all, 1 for broadcast, reduce and send/recv.
double busbw_factor(Op op, int n_ranks);

}  // namespace cs::coll
