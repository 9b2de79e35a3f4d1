#include "draft_device.hpp"

#include "errors.hpp"

namespace cosim {

void DraftDevice::validate(const std::string& where) const {
    if (timing == nullptr) throw ConfigError(where + ": a draft device needs its decoder's timing");
    draft_link.validate(where + ".link");
    target_link.validate(where + ".target_link");
    if (token_bytes < 1) throw ConfigError(where + ".token_bytes: must be >= 1");
    if (control_bytes < 1) throw ConfigError(where + ".control_bytes: must be >= 1");
    require_non_negative(where + ".decode_w", decode_w);
    require_non_negative(where + ".prefill_w", prefill_w);
    require_non_negative(where + ".idle_w", idle_w);
}

}  // namespace cosim
