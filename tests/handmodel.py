"""The timing formulas of docs/hardware.md, written again for the tests from the
published parameters, independently of the C++ models."""

import dataclasses

from cosim import load_device, load_link, load_model

TOKEN_BYTES = 4      # a 32-bit token id on PCIe
CONTROL_BYTES = 64   # the serving default for a verdict or command


def linear_macs(m):
    h, q, kv = m.hidden, m.heads * m.head_dim, m.kv_heads * m.head_dim
    head = h * m.vocab if m.lm_head else m.score_head_params
    return m.layers * (h * q + 2 * h * kv + q * h + 3 * h * m.ffn) + head


def kv_elements(m):
    return 2 * m.layers * m.kv_heads * m.head_dim


def attention_macs_per_position(m):
    return 2 * m.layers * m.heads * m.head_dim


def head_macs(m):
    return m.hidden * m.vocab if m.lm_head else m.score_head_params


def roofline(compute, memory, p):
    """The smooth roofline (compute^p + memory^p)^(1/p); p = 0 is the hard max."""
    return max(compute, memory) if p == 0 else (compute**p + memory**p) ** (1 / p)


class Link:
    def __init__(self, name, bandwidth_gbps=None):
        self.cfg = load_link(name)
        if bandwidth_gbps is not None:
            self.cfg = dataclasses.replace(self.cfg, bandwidth_gbps=bandwidth_gbps)

    def ns(self, nbytes):
        return self.cfg.latency_ns + nbytes / (self.cfg.bandwidth_gbps * self.cfg.efficiency)


class Gpu:
    def __init__(self, device, model, weight_bytes=None):
        self.g = load_device(device).gpu
        self.m = load_model(model)
        self.wb = weight_bytes or self.g.weight_bytes_per_param
        self.request = self.g.request_overhead_ns

    def overhead(self):
        return self.g.forward_overhead_ns + self.m.layers * self.g.layer_overhead_ns

    def bandwidth(self):
        return self.g.memory_bandwidth_gbps * self.g.memory_efficiency

    def decode(self, ctx):
        return self.prefill(1, ctx, kv_tokens=ctx)

    def prefill(self, n, ctx, kv_tokens=None):
        """n tokens after ctx: every token through the layers, the output head once; the
        weights and the KV cache (ctx + n tokens, ctx for a decode) streamed once."""
        macs = n * (linear_macs(self.m) - head_macs(self.m)) + head_macs(self.m) + \
            attention_macs_per_position(self.m) * (n * ctx + n * (n - 1) / 2)
        compute = 2 * macs / (self.g.peak_tflops * self.g.compute_efficiency * 1e3)
        kv = ctx + n if kv_tokens is None else kv_tokens
        memory = (linear_macs(self.m) * self.wb + kv * kv_elements(self.m) * self.g.kv_bytes_per_element) \
            / self.bandwidth()
        return self.overhead() + roofline(compute, memory, self.g.roofline_exponent)


# A decoder faster than the PRM scores a step: 4096 MACs a cycle at 300 MHz on all 32 U280
# pseudo-channels, so a step-ahead draft ends before the verdict and the draft device stalls.
FAST_FPGA = {"accelerator.macs_per_cycle": 4096, "accelerator.clock_mhz": 300, "accelerator.hbm_ports": 32}


class Fpga:
    def __init__(self, device="u280", model="qwen2.5-0.5b", clock_mhz=None, overrides=None):
        d = load_device(device)
        self.a, self.h, self.m = d.accelerator, d.hbm, load_model(model)
        fields = {path.removeprefix("accelerator."): value for path, value in (overrides or {}).items()}
        self.a = dataclasses.replace(self.a, **fields)
        self.clock = clock_mhz or self.a.clock_mhz

    def ns_per_cycle(self):
        return 1e3 / self.clock

    def bandwidth(self):
        # Each port moves its width per cycle at most, and its pseudo-channel caps it.
        port = min(self.a.port_width_bits / 8 * self.clock / 1e3 * self.a.port_efficiency,
                   self.h.channel_bandwidth_gbps * self.h.efficiency)
        return self.a.hbm_ports * port

    def pipeline(self):
        return self.m.layers * self.a.pipeline_cycles_per_layer * self.ns_per_cycle()

    def kv_bytes(self):
        return kv_elements(self.m) * self.a.kv_bytes_per_element

    def token(self, ctx):
        compute = (linear_macs(self.m) + attention_macs_per_position(self.m) * ctx) / self.a.macs_per_cycle
        memory = (linear_macs(self.m) * self.a.weight_bytes_per_param + ctx * self.kv_bytes()) / self.bandwidth()
        return max(compute * self.ns_per_cycle(), memory) + self.pipeline()

    def step(self, ctx, n):
        return sum(self.token(ctx + j) for j in range(n))

    def prefill(self, n, ctx):
        macs = n * linear_macs(self.m) + attention_macs_per_position(self.m) * (n * ctx + n * (n - 1) / 2)
        compute = macs / self.a.macs_per_cycle * self.ns_per_cycle()
        memory = (linear_macs(self.m) * self.a.weight_bytes_per_param + (ctx + n) * self.kv_bytes()) / self.bandwidth()
        return max(compute, memory) + self.pipeline()


def all_accept_timeline(prompt, steps, step_ahead, fpga_overrides=None, depth=1):
    """heteroreason, U280 (with `fpga_overrides` of its accelerator), Config 1, every draft
    step accepted, the draft device drafting up to `depth` steps ahead: the verdict times,
    the stall, and when the prompt's KV starts migrating."""
    gen3, gen4 = Link("pcie_gen3_x16"), Link("pcie_gen4_x16")
    fpga = Fpga(overrides=fpga_overrides)
    prm = Gpu("rtx3090", "qwen2.5-math-prm-7b")
    draft_on_target = Gpu("rtx3090", "qwen2.5-0.5b")
    depth = depth if step_ahead else 0
    # Phase 1: the target GPU prefills the prompt for the draft model; its INT8 KV migrates to HBM.
    migrate = draft_on_target.request + draft_on_target.prefill(prompt, 0)
    kv = prompt * fpga.kv_bytes()
    ready = migrate + gen4.ns(kv) + gen3.ns(kv)
    ctx = [prompt + sum(steps[:i]) for i in range(len(steps))]
    done = {0: ready + fpga.step(ctx[0], steps[0])}  # the first step needs no verdict
    free = done[0]     # when the draft device has drafted all it was given
    counted = 0.0      # stall time is counted up to here
    verdicts, stall = [], 0.0
    for i, n in enumerate(steps):
        if i == 0:
            sent = done[0]
        elif depth == 0:  # drafted only once the verdict's command has reached the FPGA
            sent = done[i] = verdicts[-1] + gen3.ns(CONTROL_BYTES) + fpga.step(ctx[i], n)
        else:
            sent = max(verdicts[-1], done[i])
            # Idle from the end of the last step it drafted ahead, until it may draft more.
            last = done[max(done)]
            if sent > max(last, counted):
                stall += sent - max(last, counted)
                counted = sent
        # While step i is verified, steps up to i + depth are drafted back to back.
        for j in range(i + 1, min(i + depth, len(steps) - 1) + 1):
            if j not in done:
                free = done[j] = max(sent, free) + fpga.step(ctx[j], steps[j])
        arrive = sent + gen3.ns(TOKEN_BYTES * n) + gen4.ns(TOKEN_BYTES * n)
        # No prefix cache on the PRM: each step is scored over the whole context.
        verdicts.append(arrive + prm.request + prm.prefill(ctx[i] + n, 0) + gen4.ns(CONTROL_BYTES))
    return {"verdicts": verdicts, "stall": stall, "migrate_end": migrate, "kv_bytes": kv, "kv_ready": ready}
