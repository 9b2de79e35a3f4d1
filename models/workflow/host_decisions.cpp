// Live co-simulation on the host's side: what a policy's question says of the host's state,
// and the switch from trace replay to live decisions (live_decisions.hpp).
#include "sim_time.hpp"
#include "host_orchestrator.hpp"

#include <string>

#include "errors.hpp"
#include "live_decisions.hpp"

namespace cosim {

void HostOrchestrator::fill(Decision& d, DecisionKind kind, int32_t step) const {
    d.kind = kind;
    d.slot = slot_;
    d.request = request_index_;
    d.step = step;
    d.time_ns = now_ns();
    d.chain.clear();
    for (const ChainStep& s : chain_) d.chain.push_back(s.tokens);
    d.backtracks = acct_.metrics_view().backtracks;
    d.kvmu = d_.draft->kvmu().pointers();
    d.states = {d_.draft->power().state(), d_.prm->power().state(), d_.target->power().state()};
}

void HostOrchestrator::set_decisions(DecisionBroker* broker, int32_t max_backtracks, bool scored_refinements) {
    HostState host;
    host.describe = [this](Decision& d, DecisionKind kind, int32_t step) { fill(d, kind, step); };
    host.steps_kept = [this] { return static_cast<int32_t>(chain_.size()); };
    host.drafted_ahead = [this](int32_t step) -> int64_t {
        return !specs_.empty() && specs_.front().step == step ? specs_.front().tokens : 0;
    };
    host.verdict_waited_ns = [this] { return now_ns() - verdict_sent_ns_; };
    source_ = std::make_unique<LiveDecisions>(*broker, max_backtracks, scored_refinements, std::move(host));
}

}  // namespace cosim
