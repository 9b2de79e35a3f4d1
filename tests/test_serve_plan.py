"""Capacity planning: the pruned search against brute force, by hand and on random monotone grids."""

import itertools
import math
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cosim
from cosim import ConfigError, serve
from conftest import DRAFT_MACS

COSTS = {"draft": 50.0, "prm": 300.0, "target": 350.0}


def hand_p99(cluster):
    """A synthetic p99 (s) that falls as any pool grows: 2/d + 3/p + 6/t."""
    return 2 / cluster["draft_devices"] + 3 / cluster["prm_devices"] + 6 / cluster["target_devices"]


def brute_force(p99, draft, prm, target, slo_s, costs):
    """Every cluster evaluated; the cheapest meeting the objective (ties: fewer draft, PRM, target)."""
    best = None
    for d, p, t in itertools.product(draft, prm, target):
        cluster = {"draft_devices": d, "draft_contexts_per_device": 1, "prm_devices": p, "target_devices": t}
        if p99(cluster) <= slo_s:
            key = (d * costs["draft"] + p * costs["prm"] + t * costs["target"], d, p, t)
            best = min(best, key) if best else key
    return best


def key_of(result, costs):
    c = result.cluster
    if c is None:
        return None
    d, p, t = c["draft_devices"], c["prm_devices"], c["target_devices"]
    return (d * costs["draft"] + p * costs["prm"] + t * costs["target"], d, p, t)


def test_the_hand_worked_case():
    # 1-3 devices a pool, objective 5.5 s. With t = 1 the target alone takes 6 s. With t = 2,
    # 2/d + 3/p <= 2.5 needs p >= 2 and d >= 2: (2, 2, 2) costs 100 + 600 + 700 = 1400 and
    # takes 1 + 1.5 + 3 = 5.5 s exactly. With t = 3, 2/d + 3/p <= 3.5 needs p >= 2: (1, 2, 3)
    # costs 50 + 600 + 1050 = 1700. The answer is (2, 2, 2).
    result = serve.plan(hand_p99, draft=range(1, 4), prm=range(1, 4), target=range(1, 4), slo_s=5.5, costs=COSTS)
    assert result.cluster == {"draft_devices": 2, "draft_contexts_per_device": 1, "prm_devices": 2, "target_devices": 2}
    assert result.cost == 1400.0 and result.p99_s == 5.5 and result.candidates == 27
    assert key_of(result, COSTS) == brute_force(hand_p99, range(1, 4), range(1, 4), range(1, 4), 5.5, COSTS)
    assert len(result.evaluations) < 27
    clusters = [tuple(e.cluster.values()) for e in result.evaluations]
    assert len(set(clusters)) == len(clusters)  # no cluster evaluated twice


def test_the_default_costs_are_each_devices_highest_power():
    scn = cosim.load_scenario("heteroreason-u280-300")
    # U280 at 300 MHz: 37 W idle, 41 W transfer, and its design's decode power, a token's at
    # context 0 (bound by its 305-MAC array, 400 pipeline cycles a layer): 37 W plus 5 pJ a MAC
    # and 7 pJ a bit of its W8 weights over the token's time, above its transfer power.
    # RTX 3090: 25, 330, 220, 60 W.
    ns_per_cycle = 1e3 / 300
    token_ns = DRAFT_MACS / 305 * ns_per_cycle + 24 * 400 * ns_per_cycle
    u280 = 37.0 + (5.0 * DRAFT_MACS + 7.0 * 8 * DRAFT_MACS) / token_ns * 1e-3
    assert 41.0 < u280 < 60.0
    assert serve.device_costs(scn) == pytest.approx({"draft": u280, "prm": 330.0, "target": 330.0}, rel=1e-9)
    result = serve.plan(hand_p99, draft=[1, 2, 3], prm=[1, 2, 3], target=[1, 2, 3], slo_s=5.5, costs=scn)
    # (2, 2, 2): 2 x u280 + 660 + 660; (1, 2, 3): u280 + 660 + 990, more.
    assert result.cost == pytest.approx(2 * u280 + 1320.0) and result.cluster["target_devices"] == 2


def test_no_candidate_meeting_the_objective_gives_none():
    result = serve.plan(hand_p99, draft=[1, 2], prm=[1, 2], target=[1, 2], slo_s=1.0, costs=COSTS)
    assert result.cluster is None and result.cost is None and result.p99_s is None
    assert result.evaluations and not any(e.meets_slo for e in result.evaluations)


def test_a_cluster_that_cannot_keep_up_may_say_inf():
    result = serve.plan(lambda c: math.inf if c["target_devices"] < 3 else hand_p99(c), draft=[1, 2, 3],
                        prm=[1, 2, 3], target=[1, 2, 3, 4], slo_s=5.5, costs=COSTS)
    assert result.cluster["target_devices"] == 3 and result.cluster["prm_devices"] == 2  # (1, 2, 3): 1700


def monotone_grid(data, shape):
    """A random p99 table that never rises when a pool grows (minimum-accumulated along each axis)."""
    values = np.array(data.draw(st.lists(st.floats(0.1, 10.0), min_size=math.prod(shape),
                                         max_size=math.prod(shape)))).reshape(shape)
    for axis in range(3):
        values = np.minimum.accumulate(values, axis=axis)
    return values


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_the_search_finds_the_brute_force_answer_on_random_monotone_grids(data):
    shape = tuple(data.draw(st.integers(1, 5)) for _ in range(3))
    table = monotone_grid(data, shape)
    counts = [sorted(data.draw(st.sets(st.integers(1, 12), min_size=n, max_size=n))) for n in shape]
    costs = {role: data.draw(st.sampled_from([1.0, 2.0, 5.0, 7.5, 40.0])) for role in ("draft", "prm", "target")}
    slo = data.draw(st.floats(0.1, 10.0))
    width = data.draw(st.integers(1, 6))

    def p99(cluster):
        return float(table[counts[0].index(cluster["draft_devices"]), counts[1].index(cluster["prm_devices"]),
                           counts[2].index(cluster["target_devices"])])

    result = serve.plan(p99, draft=counts[0], prm=counts[1], target=counts[2], slo_s=slo, costs=costs, width=width)
    assert key_of(result, costs) == brute_force(p99, *counts, slo, costs)
    assert len(result.evaluations) <= math.prod(shape)


def test_a_larger_grid_is_searched_with_a_fraction_of_its_points():
    def p99(c):
        return 40 / c["draft_devices"] ** 0.5 / 10 + 30 / c["prm_devices"] + 90 / c["target_devices"]

    grid = dict(draft=range(1, 9), prm=range(1, 9), target=range(1, 17))
    result = serve.plan(p99, **grid, slo_s=30.0, costs=COSTS)
    assert key_of(result, COSTS) == brute_force(p99, *grid.values(), 30.0, COSTS)
    assert len(result.evaluations) < 8 * 8 * 16 / 4


def test_rounds_go_through_the_map_width_points_at_a_time():
    batches = []

    def recording_map(fn, clusters):
        batches.append(len(clusters))
        return [fn(c) for c in clusters]

    grid = dict(draft=range(1, 5), prm=range(1, 5), target=range(1, 9))
    one = serve.plan(hand_p99, **grid, slo_s=4.0, costs=COSTS)
    wide = serve.plan(hand_p99, **grid, slo_s=4.0, costs=COSTS, map=recording_map, width=4)
    assert wide.cluster == one.cluster and wide.rounds == len(batches) < one.rounds
    assert max(batches) == 4 and all(1 <= b <= 4 for b in batches)


def test_a_thread_pool_evaluates_a_round_at_once():
    threads = set()

    def p99(cluster):
        threads.add(threading.get_ident())
        return hand_p99(cluster)

    with ThreadPoolExecutor(max_workers=4) as pool:
        result = serve.plan(p99, draft=range(1, 5), prm=range(1, 5), target=range(1, 9), slo_s=4.0, costs=COSTS,
                            map=pool.map, width=4)
    assert key_of(result, COSTS) == brute_force(hand_p99, range(1, 5), range(1, 5), range(1, 9), 4.0, COSTS)
    assert threading.get_ident() not in threads


def test_the_clusters_carry_the_draft_contexts_and_apply_to_a_scenario():
    seen = []
    serve.plan(lambda c: seen.append(c) or 0.0, draft=[1], prm=[1], target=[1, 2], slo_s=1.0, costs=COSTS,
               draft_contexts_per_device=8)
    assert seen and all(c["draft_contexts_per_device"] == 8 for c in seen)
    scn = serve.with_cluster(cosim.scenario("heteroreason"), seen[0])
    assert scn.cluster.draft.contexts_per_device == 8 and scn.cluster.target.devices == seen[0]["target_devices"]
    engine = serve.serving_sections(scn)["cluster"]
    assert {key: engine[key] for key in seen[0]} == seen[0]
    with pytest.raises(ConfigError, match=r"cluster: unknown key 'gpus'"):
        serve.with_cluster(cosim.scenario("heteroreason"), {"gpus": 2})


BAD = [
    (dict(slo_s=0), r"slo_s: must be > 0"),
    (dict(slo_s=math.nan), r"slo_s: must be a finite number"),
    (dict(costs={"draft": 1.0, "prm": 1.0}), r"costs: a cost per device of each role"),
    (dict(costs={"draft": 1.0, "prm": -1.0, "target": 1.0}), r"costs\['prm'\]: must be >= 0"),
    (dict(draft=[0, 1]), r"draft: must be >= 1, got 0"),
    (dict(prm=[]), r"prm: give at least one device count"),
    (dict(target="1-4"), r"target: give the device counts to try"),
    (dict(target=[1.5]), r"target: must be a whole number"),
    (dict(width=0), r"width: must be >= 1"),
    (dict(draft_contexts_per_device=0), r"draft_contexts_per_device: must be >= 1"),
    (dict(contexts_per_draft=2, draft_contexts_per_device=3), r"contexts_per_draft: the old name of draft_con"),
    (dict(contexts_per_draft=2, draft_contexts_per_device=1), r"contexts_per_draft: the old name of draft_con"),
    (dict(evaluate=lambda c: math.nan), r"evaluate returned nan for \{'draft_devices': 1"),
    (dict(evaluate=lambda c: -1.0), r"evaluate returned -1.0"),
    (dict(evaluate=lambda c: "fast"), r"evaluate returned 'fast'"),
    (dict(map=lambda fn, clusters: []), r"map: returned 0 results for 1 clusters"),
]


@pytest.mark.parametrize("change,message", BAD)
def test_bad_arguments_are_named(change, message):
    args = dict(evaluate=hand_p99, draft=[1, 2], prm=[1, 2], target=[1, 2], slo_s=5.0, costs=COSTS)
    args.update(change)
    with pytest.raises(ConfigError, match=message):
        serve.plan(args.pop("evaluate"), **args)


def test_the_old_name_of_the_draft_contexts_is_still_read_with_a_warning():
    with pytest.warns(DeprecationWarning, match=r"'contexts_per_draft' is now named 'draft_contexts_per_device'"):
        scn = serve.with_cluster(cosim.scenario("heteroreason"), {"contexts_per_draft": 4})
    assert scn.cluster.draft.contexts_per_device == 4
    seen = []
    with pytest.warns(DeprecationWarning, match=r"plan: contexts_per_draft is now named draft_contexts_per_device"):
        serve.plan(lambda c: seen.append(c) or 0.0, draft=[1], prm=[1], target=[1], slo_s=1.0, costs=COSTS,
                   contexts_per_draft=3)
    assert [c["draft_contexts_per_device"] for c in seen] == [3]
    with pytest.raises(ConfigError, match=r"'contexts_per_draft' and 'draft_contexts_per_device' are one value"):
        serve.with_cluster(scn, {"contexts_per_draft": 4, "draft_contexts_per_device": 4})
