// Where a collective's bytes go: for each NCCL channel, the link directions that every edge of its
// ring, chain or tree crosses, concatenated (a direction crossed by k edges appears k times: the
// multiplicity a FlowSpec understands). Rings are built as NCCL's search builds them: NVLink
// inside a server; across servers channel c leaves through NIC (c mod nics) to the same rail of
// the next server, entering at the GPU nearest that NIC; a GPU that is not the NIC's own reaches
// it through the NIC's GPU over NVLink (PXN), as NCCL does by default.
#pragma once

#include <functional>
#include <unordered_map>
#include <vector>

#include "collectives/comm_layout.hpp"
#include "collectives/route_cache.hpp"

namespace cs::coll {

using ChannelList = std::vector<topo::ChannelId>;

class PathBuilder {
 public:
  PathBuilder(const CommLayout& layout, RouteCache& routes);

  // GPU nodes in ring order for channel c (one entry per rank).
  std::vector<int> ring_order(int channel);
  // Every edge of channel c's ring.
  ChannelList ring(int channel);
  // The ring without the edge that ends at `root` (a communicator rank): a pipeline from root.
  ChannelList chain(int channel, int root);
  // Channel c's tree (double binary tree across servers, tree (c / nics) mod 2; chains inside):
  // every edge up (reduce) and every edge down (broadcast).
  ChannelList tree(int channel);
  // Every GPU to its NVSwitch and back (in-switch reduction).
  ChannelList nvls();
  // NVLSTree across servers, the share of head `head` on tree `tree` (0 or 1): the head-th GPU of
  // every server to its parent's in NCCL's double binary tree and back, through rail `rail` of
  // each head's own NICs. NCCL's NVLS channels each split their data over every head (the switch
  // reduce-scatters it to them) and alternate between the two trees (connect.cc, connectNvls), so
  // each (tree, head) carries an equal share. The in-switch part inside each server is not on the
  // list: NCCL's per-channel figure bounds it (tuner/tuner.hpp), and it would put every GPU's links
  // on every flow.
  ChannelList nvls_tree(int tree, int head, int rail);
  // CollNet's network part (tuner/collnet.hpp): the head-th GPU of every server (head mod its GPUs)
  // to its own NIC of rail `rail` and on to the switch that NIC plugs into, and back: the switches
  // reduce, so each head's share crosses its NIC's link once each way and goes no further than
  // the leaf here (the links above carry one reduced stream per tree, not one per server).
  ChannelList collnet(int head, int rail);
  // Every rank i to rank (i + distance) mod n; across servers through rail `channel` mod nics.
  ChannelList shift(int distance, int channel);
  // Point-to-point: every rank i to rank (i + distance) mod n, across servers through rail `rail`
  // (mod their count) of each GPU's own NICs, those nearer it than any other GPU; a GPU without a
  // NIC of its own goes through its nearest. NCCL gives each peer its own channels and picks the
  // NIC by channel among the GPU's NICs, so many peers spread over all of them; aws-ofi-nccl's
  // RDMA protocol also stripes one peer's large sends over the rails.
  ChannelList p2p_shift(int distance, int rail);
  // The most NICs of its own that a communicator GPU has (at least 1).
  int rails() const { return rails_; }
  // The fabric plane that paths built from now on take between servers (multi-plane fabrics:
  // topo::FabricInfo::planes); -1, the default, leaves it to the route's tie-break.
  void set_plane(int plane) { plane_ = plane; }

  // The tree parent of node `rank` of `n` in NCCL's double binary tree `which` (0 or 1); -1 root.
  static int dtree_parent(int rank, int n, int which);

 private:
  struct Edge {
    int to_gpu;
    ChannelList channels;
  };
  std::vector<Edge> ring_edges(int channel);
  int group_index(int gpu) const;
  int nic_for(int group, int channel) const;
  int nics_of(int group) const;
  int nearest_member(int nic, const std::vector<int>& members);
  int entry_gpu(int group, int channel);
  void append_route(ChannelList& out, int from, int to, int plane = -1);
  void append_gpu_to_nic(ChannelList& out, int gpu, int nic);
  void append_across(ChannelList& out, int from_gpu, int to_gpu, int nic_from, int nic_to);
  // Every server's head (heads[g]) to its parent's in double binary tree `which` and back,
  // leaving and entering each server through nic_of(g).
  void append_tree_edges(ChannelList& out, const std::vector<int>& heads, int which,
                         const std::function<int(int)>& nic_of);

  const CommLayout& layout_;
  RouteCache& routes_;
  std::unordered_map<int, int> group_of_gpu_;
  std::unordered_map<long long, int> entry_cache_;      // (group, nic) -> entry GPU
  std::unordered_map<int, std::vector<int>> own_nics_;  // GPU -> NICs nearest it
  int rails_ = 1;
  int plane_ = -1;
  int own_nic(int gpu, int rail);
  // Every rank i to rank (i + distance) mod n, leaving and entering servers through nic_of(gpu).
  ChannelList shift_through(int distance, const std::function<int(int)>& nic_of);
};

}  // namespace cs::coll
