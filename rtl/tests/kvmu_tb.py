"""cocotb tests of rtl/kvmu.v. Every cycle is also checked against the Python reference
(kvmu_bench.Bench); the directed tests compare with values worked out by hand."""

from __future__ import annotations

import os
import random

import cocotb

from kvmu_bench import MAX_DEPTH, PTR_W, Bench
from kvmu_reference import (ACCEPT_NONE, BAD_DEPTH, COLLISION, DEPTH, DEPTH_FULL, DRAFTING, FULL, INIT,
                            MODE_NAMES, MUX_PCIE, MUX_SAMPLER, NO_DRAFT, NOT_INIT, OK, REVERT, ROLLBACK_NONE,
                            COMMANDS)

MODE = {name: i for i, name in enumerate(MODE_NAMES)}


def state(out: dict) -> tuple:
    return (out["valid_ptr"], out["curr_ptr"], out["ahead_ptr"], MODE_NAMES[out["mode"]],
            "pcie" if out["mux_pcie"] else "sampler")


async def run_ops(bench: Bench, ops) -> list[dict]:
    outs = []
    for op in ops:
        outs.append(await bench.op(*op))
    return outs


@cocotb.test()
async def hand_worked_sequence(dut):
    """The depth-1 workflow of tests/test_kvmu.py, pointer by pointer, worked out by hand."""
    bench = Bench(dut, capacity=4096)
    await bench.start()
    S, P = ("sample",), ("pcie",)
    ops = [("init", 100), ("spec",), S, S, S, ("end_step",), S, S, ("accept",), S, ("end_step",), S, S,
           ("end_step",), ("rollback",), P, P, P, P, ("spec",), S, S, ("accept",), S, ("end_step",),
           ("rollback",), P, P, P, ("init", 103), P, P, P, P, P, ("accept",), ("clear",), ("init", 40)]
    expected = [
        (100, 100, 100, "initialization", "pcie"), (100, 100, 100, "speculation", "sampler"),
        (100, 101, 101, "speculation", "sampler"), (100, 102, 102, "speculation", "sampler"),
        (100, 103, 103, "speculation", "sampler"), (100, 103, 103, "speculation", "sampler"),
        (100, 103, 104, "speculation", "sampler"), (100, 103, 105, "speculation", "sampler"),
        (103, 105, 105, "accept", "sampler"), (103, 106, 106, "accept", "sampler"),
        (103, 106, 106, "accept", "sampler"), (103, 106, 107, "accept", "sampler"),
        (103, 106, 108, "accept", "sampler"), (103, 106, 108, "accept", "sampler"),
        (103, 103, 103, "rollback", "pcie"), (103, 104, 104, "rollback", "pcie"),
        (103, 105, 105, "rollback", "pcie"), (103, 106, 106, "rollback", "pcie"),
        (103, 107, 107, "rollback", "pcie"), (103, 107, 107, "speculation", "sampler"),
        (103, 107, 108, "speculation", "sampler"), (103, 107, 109, "speculation", "sampler"),
        (107, 109, 109, "accept", "sampler"), (107, 110, 110, "accept", "sampler"),
        (107, 110, 110, "accept", "sampler"), (107, 107, 107, "rollback", "pcie"),
        (107, 108, 108, "rollback", "pcie"), (107, 109, 109, "rollback", "pcie"),
        (107, 110, 110, "rollback", "pcie"), (103, 103, 103, "initialization", "pcie"),
        (103, 104, 104, "initialization", "pcie"), (103, 105, 105, "initialization", "pcie"),
        (103, 106, 106, "initialization", "pcie"), (103, 107, 107, "initialization", "pcie"),
        (103, 108, 108, "initialization", "pcie"), (108, 108, 108, "accept", "sampler"),
        (0, 0, 0, "initialization", "pcie"), (40, 40, 40, "initialization", "pcie"),
    ]
    outs = await run_ops(bench, ops)
    assert [o["err"] for o in outs] == [0] * len(ops)
    assert [state(o) for o in outs] == expected


# Four states, one per mode, each reached by a set-up sequence, and what each operation does
# from there: (valid, curr, ahead, mode) after it, or the reason it is refused.
SETUP = {
    # Initialization with two target tokens synced: the step under verification is [10, 12).
    "initialization": [("init", 10), ("pcie",), ("pcie",)],
    # Speculation with the drafted step [10, 13) finished and under verification.
    "speculation": [("init", 10), ("spec",), ("sample",), ("sample",), ("sample",), ("end_step",)],
    # Accept of [10, 13) with the step-ahead step [13, 15) finished: it is now under verification.
    "accept": [("init", 10), ("spec",), ("sample",), ("sample",), ("sample",), ("end_step",), ("sample",),
               ("sample",), ("end_step",), ("accept",)],
    # Rollback of the drafted step [10, 13).
    "rollback": [("init", 10), ("spec",), ("sample",), ("sample",), ("sample",), ("end_step",), ("rollback",)],
}
TRANSITIONS = {
    "initialization": {
        ("init", 8): (8, 8, 8, "initialization"), ("init", 11): REVERT, ("spec",): (10, 12, 12, "speculation"),
        ("accept",): (12, 12, 12, "accept"), ("rollback",): MUX_PCIE, ("sample",): MUX_PCIE,
        ("pcie",): (10, 13, 13, "initialization"), ("end_step",): MUX_PCIE, ("clear",): (0, 0, 0, "initialization"),
    },
    "speculation": {
        ("init", 10): (10, 10, 10, "initialization"), ("init", 11): REVERT, ("spec",): (10, 13, 13, "speculation"),
        ("accept",): (13, 13, 13, "accept"), ("rollback",): (10, 10, 10, "rollback"),
        ("sample",): (10, 13, 14, "speculation"), ("pcie",): MUX_SAMPLER, ("end_step",): NO_DRAFT,
        ("clear",): (0, 0, 0, "initialization"),
    },
    "accept": {
        ("init", 13): (13, 13, 13, "initialization"), ("init", 14): REVERT, ("spec",): (13, 15, 15, "speculation"),
        ("accept",): (15, 15, 15, "accept"), ("rollback",): (13, 13, 13, "rollback"),
        ("sample",): (13, 15, 16, "accept"), ("pcie",): MUX_SAMPLER, ("end_step",): NO_DRAFT,
        ("clear",): (0, 0, 0, "initialization"),
    },
    "rollback": {
        ("init", 5): (5, 5, 5, "initialization"), ("init", 11): REVERT, ("spec",): (10, 10, 10, "speculation"),
        ("accept",): ACCEPT_NONE, ("rollback",): MUX_PCIE, ("sample",): MUX_PCIE,
        ("pcie",): (10, 11, 11, "rollback"), ("end_step",): MUX_PCIE, ("clear",): (0, 0, 0, "initialization"),
    },
}


@cocotb.test()
async def every_mode_transition(dut):
    """Every operation from every mode: the mode and pointers it leaves, or its refusal
    (which changes nothing and raises err for exactly one cycle)."""
    bench = Bench(dut, capacity=64)
    await bench.start()
    for mode, table in TRANSITIONS.items():
        for op, want in table.items():
            await bench.op("clear")
            outs = await run_ops(bench, SETUP[mode])
            before = outs[-1]
            assert MODE_NAMES[before["mode"]] == mode and not any(o["err"] for o in outs)
            after = await bench.op(*op)
            label = f"{op} in {mode}"
            if isinstance(want, int):
                assert (after["err"], after["err_code"]) == (1, want), label
                assert state(after) == state(before), label
                quiet = await bench.op("nop")
                assert quiet["err"] == 0, f"{label}: err lasts one cycle"
            else:
                assert after["err"] == 0, label
                assert state(after)[:4] == want, label
    assert {m for m, _ in bench.seen_transitions} == set(range(4))
    assert {m for _, m in bench.seen_transitions} == set(range(4))


@cocotb.test()
async def refusals_name_their_reason(dut):
    """Each refusal the block can give, from a state worked out by hand."""
    bench = Bench(dut, capacity=20)
    await bench.start()
    cases = [
        ([], ("spec",), NOT_INIT),
        ([], ("pcie",), MUX_PCIE),  # nothing held: no target token may be written
        ([("init", 19)], ("pcie",), OK),  # fills the last slot
        ([("init", 20)], ("pcie",), FULL),
        ([], ("init", 21), FULL),
        ([("init", 10), ("spec",)], ("accept",), ACCEPT_NONE),
        ([("init", 10), ("spec",), ("sample",)], ("accept",), DRAFTING),
        ([("init", 10), ("spec",), ("sample",)], ("rollback",), DRAFTING),
        ([("init", 10), ("spec",)], ("rollback",), ROLLBACK_NONE),
        ([("init", 10), ("spec",)], ("end_step",), NO_DRAFT),
        ([("depth", 0), ("init", 10), ("spec",), ("sample",), ("end_step",)], ("sample",), DEPTH_FULL),
        ([("depth", 1), ("init", 10), ("spec",), ("sample",), ("end_step",), ("sample",), ("end_step",)],
         ("sample",), DEPTH_FULL),
        ([], ("depth", MAX_DEPTH + 1), BAD_DEPTH),
        ([("depth", 1), ("init", 18), ("spec",), ("sample",), ("sample",), ("end_step",)], ("sample",), FULL),
    ]
    for prefix, op, reason in cases:
        await bench.cycle(COMMANDS["clear"])
        outs = await run_ops(bench, prefix)
        assert not any(o["err"] for o in outs), prefix
        before = bench.read()
        after = await bench.op(*op)
        assert after["err_code"] == reason, (prefix, op)
        if reason != OK:
            assert {k: v for k, v in after.items() if k not in ("err", "err_code")} == \
                   {k: v for k, v in before.items() if k not in ("err", "err_code")}, (prefix, op)
    # A command and a token write in the same cycle.
    await bench.cycle(INIT, 3)
    out = await bench.cycle(COMMANDS["spec"], tok_we=True)
    assert (out["err_code"], out["mode"]) == (COLLISION, MODE["initialization"])


@cocotb.test()
async def depth_two_keeps_the_marks_in_order(dut):
    """Two step-ahead steps: the first's end is the new boundary (worked out by hand)."""
    bench = Bench(dut, capacity=4096)
    await bench.start()
    S = ("sample",)
    await run_ops(bench, [("depth", 2), ("init", 0), ("spec",), S, S, ("end_step",)])  # y1 = [0, 2)
    await run_ops(bench, [S, S, S, ("end_step",), S, ("end_step",)])  # y2 = [2, 5), y3 = [5, 6)
    out = bench.read()
    assert (out["valid_ptr"], out["curr_ptr"], out["ahead_ptr"], out["marks"], out["steps_ahead"]) == \
           (0, 2, 6, [5, 6], 2)
    out = await bench.op("sample")  # a third step ahead is refused at depth 2
    assert out["err_code"] == DEPTH_FULL
    out = await bench.op("accept")  # y1 kept: y2 under verification
    assert (out["valid_ptr"], out["curr_ptr"], out["ahead_ptr"], out["marks"], out["mark"]) == (2, 5, 6, [6], 6)
    out = await bench.op("sample")  # y4 starts ahead of y2 and y3
    assert (out["curr_ptr"], out["ahead_ptr"], out["steps_ahead"], out["following"]) == (5, 7, 2, 0)
    out = await bench.op("accept")  # y2 kept: y3 under verification
    assert (out["valid_ptr"], out["curr_ptr"], out["marks"], out["mark"]) == (5, 6, [], 6)
    out = await bench.op("accept")  # y3 kept while y4 is drafted: curr jumps to ahead and follows
    assert (out["valid_ptr"], out["curr_ptr"], out["ahead_ptr"], out["following"]) == (6, 7, 7, 1)
    out = await bench.op("sample")
    assert (out["curr_ptr"], out["ahead_ptr"]) == (8, 8)
    await bench.op("end_step")
    await run_ops(bench, [S, ("end_step",), S, S, ("end_step",)])  # y5 = [8, 9), y6 = [9, 11)
    out = await bench.op("rollback")  # y4 rejected: y5 and y6 go with it
    assert (out["valid_ptr"], out["curr_ptr"], out["ahead_ptr"], out["n_marks"], out["mode"]) == \
           (6, 6, 6, 0, MODE["rollback"])


@cocotb.test()
async def reset_returns_to_the_empty_state(dut):
    bench = Bench(dut, capacity=64)
    await bench.start()
    await run_ops(bench, [("depth", 2), ("init", 7), ("spec",), ("sample",), ("end_step",), ("sample",)])
    await bench.reset()
    out = await bench.op("nop")
    assert (state(out), out["fresh"], out["depth"], out["n_marks"]) == \
           ((0, 0, 0, "initialization", "pcie"), 1, 1, 0)


def random_operation(rng: random.Random, bench: Bench) -> tuple:
    """A command stream biased towards the legal workflow, with every illegal kind mixed in."""
    ref = bench.ref
    roll = rng.random()
    if roll < 0.004:
        return ("clear",)
    if roll < 0.01:
        return ("depth", rng.randint(0, MAX_DEPTH + 1))
    if roll < 0.02:
        return ("collision",)
    if roll < 0.04:
        top = min(ref.capacity + 2, (1 << PTR_W) - 1)  # what the pins can carry
        return ("init", rng.choice([rng.randint(0, top), max(ref.valid - rng.randint(0, 5), 0)]))
    if roll < 0.06:
        return ("nop",)
    if ref.mux_pcie:
        pick = rng.random()
        if pick < 0.75:
            return ("pcie",)
        if pick < 0.9:
            return ("spec",)
        return rng.choice([("accept",), ("sample",), ("rollback",), ("end_step",)])
    pick = rng.random()
    if pick < 0.7:
        return ("sample",)
    if pick < 0.8:
        return ("end_step",)
    if pick < 0.88:
        return ("accept",)
    if pick < 0.95:
        return ("rollback",)
    return rng.choice([("pcie",), ("spec",)])


@cocotb.test()
async def random_stream_matches_the_reference_every_cycle(dut):
    """At least 10,000 cycles of a random command stream, outputs compared every cycle."""
    cycles = int(os.environ.get("KVMU_RANDOM_CYCLES", "12000"))
    seed = int(os.environ.get("KVMU_RANDOM_SEED", "2024"))
    rng = random.Random(seed)
    bench = Bench(dut, capacity=int(os.environ.get("KVMU_RANDOM_CAPACITY", "48")))
    await bench.start()
    await bench.op("init", 0)
    while bench.cycles < cycles:
        op = random_operation(rng, bench)
        if op == ("collision",):
            await bench.cycle(COMMANDS["accept"], tok_we=True)
        else:
            await bench.op(*op)
    # The stream took every mode change the block allows (all but initialization to
    # rollback: a rollback needs the sampler) and gave every refusal the block can give.
    possible = {(a, b) for a in range(4) for b in range(4)} - {(MODE["initialization"], MODE["rollback"])}
    assert bench.seen_transitions == possible, sorted(bench.seen_transitions)
    assert bench.seen_errors >= set(range(13)), sorted(set(range(13)) - bench.seen_errors)
