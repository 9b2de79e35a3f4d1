#pragma once
// Who sets the drafts of a lone request's verification passes beyond the scenario's schedule
// (spec_decode.hpp): the schedule a trace recorded, or a live policy asked before each pass
// (docs/live.md). Asked only where a pass can draft (not for a request's last token).
#include <cstdint>
#include <functional>

namespace cosim {

struct PassChoice {
    int64_t pass = 0;           // the pass, 0 for the first after the prefill
    int64_t proposed = 0;       // the scenario's schedule's drafts for it
    int64_t most = 0;           // the acceptance profile's positions: no pass drafts more
    int64_t produced = 0;       // output tokens the request has (the prefill's first included)
    int64_t output = 0;         // its output's length
    int64_t last_drafts = 0;    // the pass before: its drafts (0 before the first)
    int64_t last_accepted = 0;  // and the drafts it kept
};

// The drafts the pass makes (before the cap at the tokens left to write).
using DraftChooser = std::function<int64_t(const PassChoice&)>;

}  // namespace cosim
