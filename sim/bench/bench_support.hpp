// Shared by the benchmark programs: generated DGX H100 fat trees of any size, and the process's
// peak memory.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace cs::bench {

// The DGX H100 server of topologies/dgx-h100.yaml in the loader's format, `servers` of them on
// a fat tree. 2,048 servers exceed a two-level tree of 64-port switches, so the largest size uses
// 256-port leaves (a real 16k-GPU fabric has three levels: the shipped
// dgx-h100-2048node-superpod.yaml, which bench_collectives also runs).
inline std::string dgx_fat_tree_yaml(int servers) {
  std::ostringstream y;
  y << "name: dgx-h100-" << servers << "node-fattree\n"
    << "gpu_models:\n"
    << "  H100-SXM5-80GB: {bf16: 989TFLOPS, fp16: 989TFLOPS, fp32: 67TFLOPS, memory: 80GB, "
       "memory_bandwidth: 3.35TB/s}\n"
    << "servers:\n"
    << "  dgx-h100:\n"
    << "    nodes:\n"
    << "      - {name: gpu, kind: gpu, model: H100-SXM5-80GB, count: 8}\n"
    << "      - {name: nvswitch, kind: nvswitch}\n"
    << "      - {name: cpu, kind: cpu, count: 2, memory_bandwidth: 307.2GB/s}\n"
    << "      - {name: pcie, kind: pcie_switch, count: 4}\n"
    << "      - {name: nic, kind: nic, count: 8}\n"
    << "    links:\n"
    << "      - {from: \"gpu[0-7]\", to: nvswitch, type: nvlink, generation: 4, count: 18}\n"
    << "      - {from: \"gpu[0-7]\", to: \"pcie[0,0,1,1,2,2,3,3]\", type: pcie, generation: 5, "
       "width: 16}\n"
    << "      - {from: \"nic[0-7]\", to: \"pcie[0,0,1,1,2,2,3,3]\", type: pcie, generation: 5, "
       "width: 16}\n"
    << "      - {from: \"pcie[0-3]\", to: \"cpu[0,0,1,1]\", type: pcie, generation: 5, width: 16}\n"
    << "      - {from: cpu0, to: cpu1, type: socket, bandwidth: 128GB/s}\n"
    << "cluster:\n"
    << "  - {server: dgx-h100, count: " << servers << ", name: node}\n";
  if (servers > 1) {
    y << "fabric:\n"
      << "  kind: fat_tree\n"
      << "  leaf_ports: " << (servers * 8 > 64 * 32 ? 256 : 64) << "\n"
      << "  oversubscription: 1\n"
      << "  link: {type: infiniband, rate: NDR}\n";
  }
  return y.str();
}

// The process's high-water mark of resident memory so far, MB (Linux /proc).
inline double peak_rss_MB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0;
}

}  // namespace cs::bench
