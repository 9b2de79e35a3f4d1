#pragma once
// An FPGA board's power from its decoder's design (power_params.hpp's design model), as an
// FPGA paper estimates it from its implementation: the board's idle power, plus the energy
// of the MACs its array performs and the bytes it moves to and from its memory, over the
// time the decoder takes. Pure arithmetic: no SystemC, so a check can evaluate it outside
// a simulation.
#include <string>

#include "fpga_decoder_timing.hpp"
#include "model_spec.hpp"
#include "power_params.hpp"

namespace cosim {

// The board's state powers. With the design model the busy states are derived from what
// the decoder does: decode_w a token's at the start of the context (a streaming decoder's
// MAC and byte rates barely move with the context), prefill_w a local prefill's of
// kNominalPrefillTokens (power_params.hpp); each is idle_w plus the energy of its MACs and
// bytes over its time. State powers pass as given; the load model (a GPU's) is refused, naming `where`.
PowerParams fpga_board_power(const std::string& where, PowerParams power, const FpgaDecoderTiming& timing,
                             const ModelSpec& model);

}  // namespace cosim
