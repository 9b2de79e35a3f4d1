import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosim import standalone

CAPACITY = 4096


def replay(ops, capacity=CAPACITY):
    return standalone.kvmu_replay(ops, capacity)


def state(record):
    return (record["valid"], record["curr"], record["ahead"], record["mode"], record["mux"])


def test_every_legal_transition_moves_the_pointers_as_worked_by_hand():
    ops = [
        ("initialize", 100),            # prompt KV migrated
        ("begin_speculation",),
        ("speculate",), ("speculate",), ("speculate",),  # draft y1: nothing under verification, curr follows
        ("end_step",),                  # y1 = [100, 103) goes to the PRM
        ("speculate",), ("speculate",),  # step-ahead y2
        ("accept",),                    # y1 accepted while y2 is still drafted: curr jumps to ahead, then follows
        ("speculate",),
        ("end_step",),                  # y2 = [103, 106) under verification
        ("speculate",), ("speculate",),  # step-ahead y3
        ("end_step",),                  # y3 finished: the FPGA stalls
        ("rollback",),                  # y2 rejected: y2 and y3 are dropped
        ("sync",), ("sync",), ("sync",), ("sync",),  # target's refinement streamed over PCIe
        ("begin_speculation",),
        ("speculate",), ("speculate",),  # step-ahead y3' behind the refined step
        ("accept",),                    # refinement accepted while y3' is drafted
        ("speculate",),
        ("end_step",),
        ("rollback",),                  # y3' rejected
        ("sync",), ("sync",), ("sync",),  # refinement of step 3 ...
        ("initialize", 103),            # ... fails: backtrack to the start of step 2
        ("sync",), ("sync",), ("sync",), ("sync",), ("sync",),  # the target's alternative step 2
        ("accept",),
        ("clear",),                     # next problem
        ("initialize", 40),
    ]
    expected = [
        (100, 100, 100, "initialization", "pcie"),
        (100, 100, 100, "speculation", "sampler"),
        (100, 101, 101, "speculation", "sampler"),
        (100, 102, 102, "speculation", "sampler"),
        (100, 103, 103, "speculation", "sampler"),
        (100, 103, 103, "speculation", "sampler"),
        (100, 103, 104, "speculation", "sampler"),
        (100, 103, 105, "speculation", "sampler"),
        (103, 105, 105, "accept", "sampler"),
        (103, 106, 106, "accept", "sampler"),
        (103, 106, 106, "accept", "sampler"),
        (103, 106, 107, "accept", "sampler"),
        (103, 106, 108, "accept", "sampler"),
        (103, 106, 108, "accept", "sampler"),
        (103, 103, 103, "rollback", "pcie"),
        (103, 104, 104, "rollback", "pcie"),
        (103, 105, 105, "rollback", "pcie"),
        (103, 106, 106, "rollback", "pcie"),
        (103, 107, 107, "rollback", "pcie"),
        (103, 107, 107, "speculation", "sampler"),
        (103, 107, 108, "speculation", "sampler"),
        (103, 107, 109, "speculation", "sampler"),
        (107, 109, 109, "accept", "sampler"),
        (107, 110, 110, "accept", "sampler"),
        (107, 110, 110, "accept", "sampler"),
        (107, 107, 107, "rollback", "pcie"),
        (107, 108, 108, "rollback", "pcie"),
        (107, 109, 109, "rollback", "pcie"),
        (107, 110, 110, "rollback", "pcie"),
        (103, 103, 103, "initialization", "pcie"),
        (103, 104, 104, "initialization", "pcie"),
        (103, 105, 105, "initialization", "pcie"),
        (103, 106, 106, "initialization", "pcie"),
        (103, 107, 107, "initialization", "pcie"),
        (103, 108, 108, "initialization", "pcie"),
        (108, 108, 108, "accept", "sampler"),
        (0, 0, 0, "initialization", "pcie"),
        (40, 40, 40, "initialization", "pcie"),
    ]
    records = replay(ops)
    assert [r["error"] for r in records] == [None] * len(ops)
    assert [state(r) for r in records] == expected


# Each case: a legal prefix, then one illegal operation, and the reason it gives.
ILLEGAL = [
    ([("initialize", 10)], ("speculate",), "MUX selects PCIe"),
    ([("initialize", 10), ("begin_speculation",)], ("sync",), "MUX selects the local sampler"),
    ([("initialize", 10), ("begin_speculation",)], ("accept",), "no step under verification"),
    ([("initialize", 10), ("begin_speculation",), ("speculate",)], ("accept",), "still being drafted"),
    ([("initialize", 10), ("begin_speculation",), ("speculate",)], ("rollback",), "still being drafted"),
    ([("initialize", 10), ("begin_speculation",)], ("rollback",), "no drafted step under verification"),
    ([("initialize", 10), ("begin_speculation",), ("speculate",), ("end_step",), ("rollback",)], ("rollback",),
     "MUX selects PCIe"),
    ([("initialize", 10)], ("initialize", 11), "only revert to verified context"),
    ([], ("initialize", -1), "negative position"),
    ([], ("begin_speculation",), "not initialised"),
    ([], ("sync",), "MUX selects PCIe"),
    ([("initialize", 10), ("begin_speculation",)], ("end_step",), "no step is being drafted"),
    ([("initialize", 10), ("begin_speculation",), ("speculate",), ("end_step",), ("speculate",), ("end_step",)],
     ("speculate",), "one step deep"),
    ([("initialize", 19)], ("sync",), None),  # legal: fills the last slot
    ([("initialize", 20)], ("sync",), "KV cache full"),
    ([], ("initialize", 21), "KV cache full"),
]


@pytest.mark.parametrize("prefix,op,reason", ILLEGAL)
def test_every_illegal_transition_raises_and_changes_nothing(prefix, op, reason):
    records = replay(prefix + [op], capacity=20)
    assert all(r["error"] is None for r in records[:-1])
    last = records[-1]
    if reason is None:
        assert last["error"] is None
        return
    assert last["error"] is not None and reason in last["error"]
    before = records[-2] if len(records) > 1 else {"valid": 0, "curr": 0, "ahead": 0, "mode": "initialization",
                                                   "mux": "pcie"}
    assert state(last) == state(before)


OPS = st.one_of(
    st.tuples(st.just("initialize"), st.integers(min_value=-2, max_value=80)),
    st.tuples(st.sampled_from(["begin_speculation", "speculate", "sync", "end_step", "accept", "rollback", "clear"])),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(OPS, min_size=1, max_size=120))
def test_random_operation_sequences_keep_the_pointer_order(ops):
    records = replay(ops, capacity=64)
    previous = (0, 0, 0)
    for op, record in zip(ops, records):
        v, c, a = record["valid"], record["curr"], record["ahead"]
        assert 0 <= v <= c <= a <= 64
        assert (record["mux"] == "sampler") == (record["mode"] in ("speculation", "accept"))
        if record["error"] is not None:
            assert (v, c, a) == previous  # a refused operation changes nothing
        previous = (v, c, a)
