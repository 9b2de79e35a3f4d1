#include "decision_broker.hpp"

namespace cosim {

void DecisionBroker::ask(Decision& decision) {
    decision.answered = false;
    pending_.push_back(&decision);
    ++asked_;
    sc_core::sc_pause();  // sc_start returns at the end of this delta cycle; its caller answers
    while (!decision.answered) sc_core::wait(decision.done);
}

}  // namespace cosim
