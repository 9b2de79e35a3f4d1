#include "stepwise_top.hpp"

#include <map>
#include <string>

#include "draft_memory.hpp"
#include "errors.hpp"

namespace cosim {

namespace {
// Names as the single-request system has always had them; a pool of more than one
// numbers its devices.
std::string device_name(const char* base, int index, int count) {
    return count == 1 ? std::string(base) : std::string(base) + std::to_string(index);
}

std::string gb(double bytes) {
    std::string text = std::to_string(bytes / 1e9);
    return text.substr(0, text.find('.') + 3);
}

// The KV memory of a batching GPU: its memory share less the weights of every model on it
// (of a parallel group, one GPU's: its share of the weights, for its share of the KV).
double kv_budget_bytes(const std::string& gpu, const GpuParams& params, double model_weight_bytes,
                       const BatchingParams& batch, double other_weight_bytes) {
    const double weights = model_weight_bytes + other_weight_bytes;
    const double budget = params.memory_bytes * batch.gpu_memory_utilization - weights;
    if (budget <= 0.0)
        throw ConfigError("batching.gpu_memory_utilization: " + std::to_string(batch.gpu_memory_utilization) +
                          " of " + gpu + "'s " + gb(params.memory_bytes) + " GB leaves no room for KV cache beside " +
                          gb(weights) + " GB of weights");
    return budget;
}
}  // namespace

StepwiseTop::StepwiseTop(sc_core::sc_module_name name, const SystemSpec& spec) : sc_core::sc_module(name) {
    const ClusterShape& shape = spec.shape;
    shape.validate();  // every pool at least one device, a draft device one context, within the limit
    // validate() keeps these within the engine's thread limit, far inside an int.
    const int boards = static_cast<int>(shape.draft_devices);
    const int contexts = static_cast<int>(shape.draft_contexts_per_device);
    // SpecReason's target scores the drafts itself: no PRM GPUs, no PRM links.
    const bool judge = spec.options.verifier_is_target;
    const int prms = judge ? 0 : static_cast<int>(shape.prm_devices);
    const int targets = static_cast<int>(shape.target_devices);
    const int per_link = static_cast<int>(shape.draft_boards_per_host_link);
    const int slots = boards * contexts;
    dispatcher_ = std::make_unique<RequestDispatcher>("dispatcher", slots);

    std::vector<PcieLinkParams> links;
    std::vector<std::string> names;
    auto add_links = [&](int count, const char* base, const PcieLinkParams& link) {
        for (int i = 0; i < count; ++i) {
            links.push_back(link);
            names.push_back(device_name(base, i, count));
        }
    };
    add_links(boards, "pcie_draft", spec.links[0]);
    add_links(prms, "pcie_prm", spec.links[1]);
    add_links(targets, "pcie_target", spec.links[2]);
    // Boards behind one PCIe switch share its link to the host.
    const bool switched = per_link > 1;
    const size_t host_links_at = links.size();
    if (switched)
        add_links((boards + per_link - 1) / per_link, "pcie_host_link",
                  spec.host_link);
    fabric_ = std::make_unique<PcieFabric>("fabric", links, names);

    auto server = [&](std::vector<DeviceServer*>& pool, const std::string& name) {
        servers_.push_back(std::make_unique<DeviceServer>(name.c_str()));
        pool.push_back(servers_.back().get());
    };
    auto gpu = [&](std::vector<GpuProxy*>& pool, const std::string& name, const GpuParams& params,
                   const ModelSpec& model, const PowerParams& power, const LatencyProfile& profile,
                   const ParallelLayout& layout, double other_weight_bytes, bool batched, size_t link_at) {
        gpus_.push_back(std::make_unique<GpuProxy>(name.c_str(), params, model, power, profile, true, layout));
        pool.push_back(gpus_.back().get());
        GpuBatcher* batcher = nullptr;
        if (batched) {
            BatchingParams batch = spec.batch;
            batch.kv_budget_bytes = kv_budget_bytes(name, params, gpus_.back()->timing().stored_weight_bytes(),
                                                    spec.batch, other_weight_bytes);
            batchers_.push_back(std::make_unique<GpuBatcher>((name + "_batcher").c_str(), batch,
                                                             gpus_.back()->power()));
            batcher = batchers_.back().get();
            gpus_.back()->set_batcher(batcher);
        }
        // A group on PCIe shares its GPUs' links with the host's transfers: its collectives go there.
        gpus_.back()->set_collective_link(fabric_->interconnect(link_at));
        return batcher;
    };
    for (int i = 0; i < prms; ++i) {
        const auto link_at = static_cast<size_t>(boards + i);
        GpuBatcher* batcher = gpu(prm_gpu_, device_name("prm", i, prms), spec.prm_gpu, spec.prm_model,
                                  spec.prm_power, spec.prm_profile, spec.prm_layout, 0.0, spec.batching, link_at);
        server(prm_server_, device_name("prm_server", i, prms));
        devices_.push_back(
            Device{"prm", i, &prm_gpu_.back()->power(), prm_server_.back(), batcher, &fabric_->link(link_at)});
    }
    for (int i = 0; i < targets; ++i) {
        const auto link_at = static_cast<size_t>(boards + prms + i);
        // FPGA systems keep the draft model on the target GPU for the prompt's prefill.
        double helper_weights =
            spec.draft_on_fpga ? spec.draft_model.params * spec.draft_on_target_gpu.weight_bytes_per_param : 0.0;
        // A token-level proposer model decoding the target's runs sits on its GPU too.
        if (spec.target_speculation != nullptr && spec.target_drafter != nullptr)
            helper_weights += spec.target_drafter->stored_weight_bytes();
        // Lookahead Reasoning's target runs of one request overlap: its engine always batches.
        GpuBatcher* batcher = gpu(target_gpu_, device_name("target", i, targets), spec.target_gpu,
                                  spec.target_model, spec.target_power, spec.target_profile, spec.target_layout,
                                  helper_weights, spec.batching || spec.options.lookahead, link_at);
        if (spec.target_speculation != nullptr)
            target_gpu_.back()->set_speculation(std::make_shared<const SpecDecoder>(
                *spec.target_speculation, target_gpu_.back()->timing(), spec.target_drafter));
        server(target_server_, device_name("target_server", i, targets));
        devices_.push_back(Device{"target", i, &target_gpu_.back()->power(), target_server_.back(), batcher,
                                  &fabric_->link(link_at)});
        if (judge) {
            // The scoring passes are the target model's, on its GPUs, its meter and its server.
            gpus_.push_back(std::make_unique<GpuProxy>(device_name("judge", i, targets).c_str(), spec.target_gpu,
                                                       spec.target_model, target_gpu_.back()->power(),
                                                       spec.target_profile, spec.target_layout));
            gpus_.back()->set_batcher(batcher);
            gpus_.back()->set_collective_link(fabric_->interconnect(link_at));
            prm_gpu_.push_back(gpus_.back().get());
            prm_server_.push_back(target_server_.back());
        }
        if (spec.draft_on_fpga) {
            // The draft model's phase-1 prompt prefill runs on this GPU, drawing its power
            // (and, batched, in its iterations).
            gpus_.push_back(std::make_unique<GpuProxy>(
                device_name("draft_on_target", i, targets).c_str(), spec.draft_on_target_gpu,
                spec.draft_model, target_gpu_.back()->power()));
            gpus_.back()->set_batcher(batcher);
            helper_gpu_.push_back(gpus_.back().get());
        }
    }
    for (int b = 0; b < boards; ++b) {
        server(draft_server_, device_name("draft_server", b, boards));
        if (spec.draft_on_fpga) {
            if (contexts == 1) {
                contexts_.push_back(std::make_unique<FpgaDraftAccelerator>(
                    device_name("fpga", b, boards).c_str(), spec.fpga, spec.hbm, spec.draft_model, spec.draft_power,
                    spec.fpga_profile));
                devices_.push_back(Device{"draft", b, &contexts_.back()->power(), draft_server_.back(), nullptr,
                                          &fabric_->link(static_cast<size_t>(b))});
                continue;
            }
            // Weights once, and every context's KV reservation, must fit the board's HBM.
            const DraftMemory memory =
                draft_memory(spec.draft_model, spec.fpga.weight_bytes_per_param, spec.fpga.kv_bytes_per_element,
                             spec.fpga.kv_reserve_tokens, static_cast<double>(spec.hbm.capacity_bytes),
                             "cluster.draft");
            if (!memory.fits(contexts))
                throw ConfigError("cluster.draft.contexts_per_device: " + std::to_string(contexts) +
                                  " contexts need " + std::to_string(memory.need_bytes(contexts) / 1e9) +
                                  " GB of HBM (weights and each context's KV reservation); the board has " +
                                  std::to_string(memory.capacity_bytes / 1e9) + " GB");
            const std::string board = device_name("fpga", b, boards);
            const FpgaDecoderTiming timing(board, spec.fpga, spec.hbm, spec.draft_model, spec.fpga_profile);
            board_power_.push_back(std::make_unique<Power>(
                board, fpga_board_power(board, spec.draft_power, timing, spec.draft_model)));
            devices_.push_back(Device{"draft", b, board_power_.back().get(), draft_server_.back(), nullptr,
                                      &fabric_->link(static_cast<size_t>(b))});
        } else {
            GpuBatcher* batcher = gpu(draft_gpu_, device_name("draft_gpu", b, boards), spec.draft_gpu,
                                      spec.draft_model, spec.draft_power, spec.draft_gpu_profile, spec.draft_layout,
                                      0.0, spec.batching, static_cast<size_t>(b));
            // Alone on its GPU (draft speculation is refused with batching): setting it
            // reserves the proposer's memory there.
            if (spec.draft_speculation != nullptr)
                draft_gpu_.back()->set_speculation(std::make_shared<const SpecDecoder>(
                    *spec.draft_speculation, draft_gpu_.back()->timing(), spec.draft_drafter));
            devices_.push_back(Device{"draft", b, &draft_gpu_.back()->power(), draft_server_.back(), batcher,
                                      &fabric_->link(static_cast<size_t>(b))});
        }
    }

    // A device's route on its link, attached the first time a slot asks for it.
    std::map<const sc_core::sc_module*, uint64_t> routes;
    auto route = [&routes](PcieLink& link, const sc_core::sc_module& device, auto& socket) {
        auto it = routes.find(&device);
        if (it == routes.end()) it = routes.emplace(&device, link.attach(socket)).first;
        return it->second;
    };
    for (int s = 0; s < slots; ++s) {
        const int b = s % boards;
        const int t = s % targets;
        const int p = judge ? t : s % prms;
        const std::string port_name = device_name("draft_port", s, slots);
        const size_t base_prm = static_cast<size_t>(boards);
        const size_t base_target = base_prm + static_cast<size_t>(prms);
        // The host's commands cross each device's PCIe link (its interconnect port).
        PcieLink& draft_link = fabric_->interconnect(static_cast<size_t>(b));
        const size_t prm_at = judge ? base_target + static_cast<size_t>(t) : base_prm + static_cast<size_t>(p);
        PcieLink& prm_link = fabric_->interconnect(prm_at);
        PcieLink& target_link = fabric_->interconnect(base_target + static_cast<size_t>(t));
        if (spec.draft_on_fpga && contexts > 1) {
            const std::string name = device_name("fpga", b, boards) + "_context" + std::to_string(s / boards);
            contexts_.push_back(std::make_unique<FpgaDraftAccelerator>(name.c_str(), spec.fpga, spec.hbm,
                                                                       spec.draft_model, *board_power_[b],
                                                                       spec.fpga_profile));
            FpgaDraftAccelerator& fpga = *contexts_.back();
            draft_units_.push_back(std::make_unique<DraftUnit>(port_name.c_str(), fpga, &draft_link,
                                                               route(draft_link, fpga, fpga.host)));
        } else if (spec.draft_on_fpga) {
            FpgaDraftAccelerator& fpga = *contexts_[static_cast<size_t>(b)];
            draft_units_.push_back(std::make_unique<DraftUnit>(port_name.c_str(), fpga, &draft_link,
                                                               route(draft_link, fpga, fpga.host)));
        } else {
            GpuProxy& gpu = *draft_gpu_[static_cast<size_t>(b)];
            draft_units_.push_back(std::make_unique<DraftUnit>(port_name.c_str(), gpu, &draft_link,
                                                               route(draft_link, gpu, gpu.host)));
        }
        logs_.push_back(std::make_unique<ActivityLog>());
        ports_.push_back(std::make_unique<FabricPort>(
            *fabric_, *logs_.back(),
            std::array<size_t, 3>{static_cast<size_t>(b), prm_at,
                                  base_target + static_cast<size_t>(t)},
            switched ? host_links_at + static_cast<size_t>(b / per_link) : FabricPort::kNoLink));
        WorkflowDevices d;
        d.draft = draft_units_.back().get();
        d.prm = prm_gpu_[static_cast<size_t>(p)];
        d.target = target_gpu_[static_cast<size_t>(t)];
        d.draft_on_target = spec.draft_on_fpga ? helper_gpu_[static_cast<size_t>(t)] : nullptr;
        d.prm_link = &prm_link;
        d.prm_route = route(prm_link, *d.prm, d.prm->host);
        d.target_link = &target_link;
        d.target_route = route(target_link, *d.target, d.target->host);
        if (d.draft_on_target) d.helper_route = route(target_link, *d.draft_on_target, d.draft_on_target->host);
        d.draft_server = draft_server_[static_cast<size_t>(b)];
        d.prm_server = prm_server_[static_cast<size_t>(p)];
        d.target_server = target_server_[static_cast<size_t>(t)];
        if (spec.batching) {
            // Each request's GPU work in its own order; the batcher interleaves requests.
            const std::string tag = "_slot" + std::to_string(s);
            std::vector<DeviceServer*> own;
            if (!spec.draft_on_fpga) {
                server(own, "draft_server" + tag);
                d.draft_server = own.back();
            }
            if (!judge) {
                server(own, "prm_server" + tag);
                d.prm_server = own.back();
            }
            server(own, "target_server" + tag);
            d.target_server = own.back();
            if (judge) d.prm_server = d.target_server;
        }
        // Lookahead Reasoning's runs of one request go on at once in the target's engine: a
        // lane each for the step under verification, each drafted ahead, and the one built on
        // the last.
        for (int lane = 0; spec.options.lookahead && lane < spec.options.step_ahead_depth + 2; ++lane) {
            server(d.target_lanes, "target_lane" + std::to_string(lane) + "_slot" + std::to_string(s));
        }
        d.fabric = ports_.back().get();
        d.index = {b, judge ? -1 : p, t};  // a target that judges: no PRM device to name
        bound_.push_back(d.index);
        d.shared = slots > 1;
        WorkflowOptions options = spec.options;
        options.draft_prompt_on_target = spec.draft_on_fpga;
        slots_.push_back(std::make_unique<HostOrchestrator>(device_name("host", s, slots).c_str(), options, d,
                                                            *logs_.back(), *dispatcher_, s));
    }
}

const StepwiseTop::Device& StepwiseTop::device(const std::string& role, int index) const {
    for (const Device& d : devices_)
        if (role == d.role && d.index == index) return d;
    throw SimulationError("internal: no " + role + " device " + std::to_string(index));
}

std::exception_ptr StepwiseTop::error() const {
    for (const auto& server : servers_)
        if (server->error()) return server->error();
    for (const auto& slot : slots_)
        if (slot->error()) return slot->error();
    return dispatcher_->error();
}

}  // namespace cosim
