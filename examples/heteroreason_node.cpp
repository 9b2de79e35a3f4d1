// A HeteroReason node built from the models: a host with one PCIe link to each device, a
// U280 drafting with its HBM and KVMU, a GPU running the process reward model (PRM) and a
// GPU running the target model. The host replays one hand-written problem, step by step:
//   prompt   48 tokens, prefilled on all three devices
//   step 1   drafted, accepted by the PRM
//   step 2   drafted, rejected; the target refines it, the refinement is synced into the
//            draft's KV cache, scored and kept
//   step 3   drafted, rejected; the host backtracks to the end of step 1
//   step 2'  drafted again from there, accepted
// Every operation waits for the one before (no overlap), so each time in the log is the
// sum of the durations before it; examples/README.md works them out from node_params.hpp,
// and CI compares the log with heteroreason_node.expected.
#include <cstdint>
#include <cstdio>
#include <string>

#include <systemc>

#include <heteroreason/fpga_draft_accelerator.hpp>
#include <heteroreason/gpu_proxy.hpp>
#include <heteroreason/host_dma.hpp>
#include <heteroreason/kvmu.hpp>
#include <heteroreason/pcie_link.hpp>
#include <heteroreason/sim_time.hpp>

#include "node_params.hpp"

namespace {

using cosim::LinkDirection;

constexpr int64_t kPromptTokens = 48;
constexpr int64_t kStepTokens = 24;
constexpr uint64_t kTokenBytes = 4;     // a 32-bit token id
constexpr uint64_t kControlBytes = 48;  // a score or a verdict

struct Node : sc_core::sc_module {
    cosim::HostDma fpga_dma, prm_dma, target_dma;
    cosim::PcieLink fpga_link, prm_link, target_link;
    cosim::FpgaDraftAccelerator u280;
    cosim::GpuProxy prm, target;

    SC_HAS_PROCESS(Node);
    explicit Node(sc_core::sc_module_name name)
        : sc_core::sc_module(name),
          fpga_dma("fpga_dma"),
          prm_dma("prm_dma"),
          target_dma("target_dma"),
          fpga_link("fpga_link", example::link()),
          prm_link("prm_link", example::link()),
          target_link("target_link", example::link()),
          u280("u280", example::u280_decoder(), example::u280_hbm(), example::draft_model(),
               example::power(40.0, 60.0, 50.0, 41.0)),
          prm("prm", example::gpu(), example::prm_model(), example::power(20.0, 400.0, 300.0, 60.0)),
          target("target", example::gpu(), example::target_model(), example::power(20.0, 400.0, 300.0, 60.0)) {
        // The host's DMA engines are the initiators; each link is the target they bind to.
        fpga_dma.socket.bind(fpga_link.socket);
        prm_dma.socket.bind(prm_link.socket);
        target_dma.socket.bind(target_link.socket);
        SC_THREAD(host);
    }

    void log(const std::string& what) {
        const cosim::KvmuPointers p = u280.kvmu().pointers();
        std::printf("%14.3f ns  %-44s kvmu %-14s valid %3lld curr %3lld ahead %3lld\n",
                    cosim::now_ns(), what.c_str(),
                    cosim::kvmu_mode_name(u280.kvmu().mode()), static_cast<long long>(p.valid),
                    static_cast<long long>(p.curr), static_cast<long long>(p.ahead));
    }

    // The PRM scores `tokens` drafted after `context`: tokens to the host, on to the PRM,
    // its prefill, the score back to the host.
    void score(const std::string& step, int64_t context) {
        fpga_dma.transfer(LinkDirection::device_to_host, kStepTokens * kTokenBytes);
        prm_dma.transfer(LinkDirection::host_to_device, kStepTokens * kTokenBytes);
        prm.prefill(kStepTokens, context);
        prm_dma.transfer(LinkDirection::device_to_host, kControlBytes);
        log(step + " scored by the PRM");
    }

    // A drafted step of kStepTokens at the KVMU's ahead pointer, then its score.
    void draft(const std::string& step) {
        const int64_t context = u280.kvmu().pointers().ahead;
        u280.decode_step(kStepTokens);
        log(step + " drafted on the U280");
        score(step, context);
    }

    void verdict(const std::string& step, bool accept) {
        fpga_dma.transfer(LinkDirection::host_to_device, kControlBytes);
        if (accept) {
            u280.kvmu().accept();
        } else {
            u280.kvmu().rollback();
        }
        log(step + (accept ? " accepted" : " rejected"));
    }

    void host() {
        // The prompt: its ids to each device, a prefill on each. The U280 prefills it
        // locally through the KVMU's PCIe input, and the host marks it verified.
        target_dma.transfer(LinkDirection::host_to_device, kPromptTokens * kTokenBytes);
        target.prefill(kPromptTokens, 0);
        log("prompt prefilled on the target GPU");
        prm_dma.transfer(LinkDirection::host_to_device, kPromptTokens * kTokenBytes);
        prm.prefill(kPromptTokens, 0);
        log("prompt prefilled on the PRM GPU");
        fpga_dma.transfer(LinkDirection::host_to_device, kPromptTokens * kTokenBytes);
        u280.load_context(0);
        u280.prefill_local(kPromptTokens);
        u280.kvmu().accept();
        log("prompt prefilled on the U280");

        draft("step 1");
        verdict("step 1", true);

        draft("step 2");
        verdict("step 2", false);
        // The target catches up on step 1, decodes its own step 2 and sends it back;
        // the U280 writes it into its KV cache pass by pass (shadow sync).
        target_dma.transfer(LinkDirection::host_to_device, kStepTokens * kTokenBytes);
        target.prefill(kStepTokens, kPromptTokens);
        target.decode(kStepTokens, kPromptTokens + kStepTokens);
        target_dma.transfer(LinkDirection::device_to_host, kStepTokens * kTokenBytes);
        log("step 2 refined on the target GPU");
        fpga_dma.transfer(LinkDirection::host_to_device, kStepTokens * kTokenBytes);
        for (int64_t i = 0; i < kStepTokens; ++i) u280.sync_token();
        log("step 2 refinement synced into the U280");
        prm_dma.transfer(LinkDirection::host_to_device, kStepTokens * kTokenBytes);
        prm.prefill(kStepTokens, kPromptTokens + kStepTokens);
        prm_dma.transfer(LinkDirection::device_to_host, kControlBytes);
        log("step 2 refinement scored by the PRM");
        verdict("step 2 refinement", true);

        draft("step 3");
        fpga_dma.transfer(LinkDirection::host_to_device, kControlBytes);
        u280.kvmu().initialize(kPromptTokens + kStepTokens);
        log("step 3 rejected: backtrack to end of step 1");

        draft("step 2'");
        verdict("step 2'", true);

        std::printf("tokens: drafted %lld, synced %lld, prefilled on the U280 %lld, target decoded %lld\n",
                    static_cast<long long>(u280.tokens_drafted()), static_cast<long long>(u280.tokens_synced()),
                    static_cast<long long>(u280.tokens_prefilled()), static_cast<long long>(target.tokens_decoded()));
        std::printf("energy: u280 %.6f J, prm %.6f J, target %.6f J\n", u280.power().energy_j(),
                    prm.power().energy_j(), target.power().energy_j());
        std::printf("pcie bytes: u280 %llu down %llu up, prm %llu down %llu up, target %llu down %llu up\n",
                    bytes(fpga_link, LinkDirection::host_to_device), bytes(fpga_link, LinkDirection::device_to_host),
                    bytes(prm_link, LinkDirection::host_to_device), bytes(prm_link, LinkDirection::device_to_host),
                    bytes(target_link, LinkDirection::host_to_device),
                    bytes(target_link, LinkDirection::device_to_host));
    }

    static unsigned long long bytes(const cosim::PcieLink& link, LinkDirection dir) {
        return static_cast<unsigned long long>(link.bytes(dir));
    }
};

}  // namespace

int sc_main(int, char*[]) {
    Node node("node");
    sc_core::sc_start();
    return 0;
}
