"""The latent-quality step model: scores, verdicts at any threshold, and the
chance of a right answer from the kept steps (values worked by hand or from
the normal distribution function written out here)."""

import dataclasses
import math

import pytest

from cosim import ConfigError, trace
from cosim.trace import Backtrack, Draft, TraceHeader, TrajectoryBuilder

PROFILES = ["gsm8k", "math500", "gaokao2023en", "olympiadbench"]
THRESHOLDS = [0.5, 0.6, 0.7, 0.8, 0.9]


def phi(x):
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def below(profile, good, threshold):
    """P(score < threshold) for a step of the given quality: its log-odds are normal."""
    mean = profile.prm_good_logit_mean if good else profile.prm_bad_logit_mean
    sigma = profile.prm_good_logit_sigma if good else profile.prm_bad_logit_sigma
    return phi((math.log(threshold / (1 - threshold)) - mean) / sigma)


def test_a_score_is_the_quality_distribution_read_through_a_uniform():
    profile = trace.load_profile("math500")
    for good in (True, False):
        scores = [trace.step_score(profile, good, (i + 0.5) / 20000) for i in range(20000)]
        assert scores == sorted(scores)  # a larger uniform never gives a lower score
        for t in (0.3, 0.5, 0.7, 0.9):
            # Scores carry four decimals, so a score rounds up to t from half a digit below it.
            edge = t - 0.00005
            # Over an even grid of uniforms, the share below t is the distribution function there
            # (up to the grid's step, 1/20000).
            assert sum(s < t for s in scores) / 20000 == pytest.approx(below(profile, good, edge), abs=1e-4)
            assert trace.pass_probability(profile, good, t) == pytest.approx(1 - below(profile, good, edge), abs=1e-12)


def draft_keys(problem):
    """(step, attempt) of the draw behind each draft, as the generator keys them: each
    draft takes the next attempt at its step, a refinement after a rejected draft shares
    that draft's draw, and one after a backtrack takes the next attempt of its step."""
    attempts, keys, backtracked = {}, {}, False
    for i, event in enumerate(problem.events):
        if isinstance(event, Backtrack):
            backtracked = True
        elif isinstance(event, Draft) or backtracked:
            attempt = attempts.get(event.step, 0)
            attempts[event.step] = attempt + 1
            if isinstance(event, Draft):
                keys[(event.step, attempt)] = event
            backtracked = False
    return keys


@pytest.mark.parametrize("backtracking", [False, True])
def test_at_fixed_draws_a_higher_acceptance_threshold_never_rejects_less(backtracking):
    checked = 0
    for name in PROFILES:
        for seed, config in ((0, 1), (1, 2)):
            runs = [trace.generate(name, 200, seed, backtracking, TraceHeader(accept_threshold=t),
                                   config=config).in_memory() for t in THRESHOLDS]
            for low, high in zip(runs, runs[1:]):
                for a, b in zip(low, high):
                    keys_a, keys_b = draft_keys(a), draft_keys(b)
                    for key in keys_a.keys() & keys_b.keys():
                        assert keys_a[key].score == keys_b[key].score  # the same draw, the same score
                        assert keys_a[key].accepted or not keys_b[key].accepted
                        checked += 1
                    if not backtracking and len(keys_a) == len(keys_b):
                        # Forward-only, the same steps are drafted (unless the window cuts one run
                        # earlier), so the problem as a whole is rejected at least as often.
                        assert sum(not d.accepted for d in keys_a.values()) <= \
                               sum(not d.accepted for d in keys_b.values())
            rates = [trace.trace_statistics(run)[name]["reject_rate"] for run in runs]
            assert rates == sorted(rates) and rates[0] < rates[-1]
    assert checked > 20_000


def test_a_kept_bad_step_costs_the_penalty_and_a_backtrack_that_replaces_it_wins_it_back():
    profile = dataclasses.replace(trace.load_profile("math500"), clean_chain_accuracy=0.9, bad_step_penalty=0.25)
    G, B = True, False
    brsd = (TrajectoryBuilder("p", 100).accept(40)          # step 1: a good draft, kept
            .reject(30).refine(50)                         # step 2: a bad draft rejected, a good refinement kept
            .accept(45)                                    # step 3: a bad draft the PRM let through
            .reject(20).refine_fails(35).backtrack()       # step 4: refinement fails; step 3 is dropped ...
            .refine(60)                                    # ... and the target rewrites it, well
            .accept(25).build())                           # step 4 again: a bad draft, kept
    brsd_quality = [G, B, G, B, B, B, None, G, B]
    kept = trace.kept_qualities(brsd.events, brsd_quality)
    assert kept == (G, G, G, B)
    assert trace.correctness_probability(profile, kept) == pytest.approx(0.9 * 0.75)
    # The forward-only run of the same draws keeps the bad refinement and the bad step 3.
    header = TraceHeader(backtracking=False)
    rsd = (TrajectoryBuilder("p", 100, header=header).accept(40).reject(30).refine(50).accept(45)
           .reject(20).refine(35).accept(25).build())
    kept = trace.kept_qualities(rsd.events, [G, B, G, B, B, B, B])
    assert kept == (G, G, B, B, B)
    assert trace.correctness_probability(profile, kept) == pytest.approx(0.9 * 0.75**3)
    assert trace.correctness_probability(profile, ()) == 0.9
    with pytest.raises(ConfigError, match="9 events but 2 qualities"):
        trace.kept_qualities(brsd.events, [G, G])


def test_a_generated_problem_carries_the_chance_its_kept_steps_give():
    profile = trace.load_profile("olympiadbench")
    drawn = trace.generate("olympiadbench", 200, seed=4, config=2).problems
    seen_bad = 0
    for i in range(200):
        d = drawn.drawn(i)
        bad = d.kept_good.count(False)
        seen_bad += bad > 0
        assert d.correct_probability == pytest.approx(
            profile.clean_chain_accuracy * (1 - profile.bad_step_penalty) ** bad)
        assert len(d.kept_good) == trace.summarize(d.problem).steps
        assert drawn[i] == d.problem
    assert seen_bad > 20


def test_rsd_and_brsd_share_every_draw_up_to_the_first_backtrack_and_the_answer_draw():
    for config in (1, 2):
        brsd = trace.generate("math500", 400, seed=9, config=config).problems
        rsd = trace.generate("math500", 400, seed=9, backtracking=False, config=config).problems
        helped = 0
        for i in range(400):
            b, r = brsd.drawn(i), rsd.drawn(i)
            first = next((k for k, e in enumerate(b.problem.events) if isinstance(e, Backtrack)), None)
            if first is None:
                assert [(type(e), e.step, e.tokens) for e in b.problem.events] == \
                       [(type(e), e.step, e.tokens) for e in r.problem.events]
                assert b.kept_good == r.kept_good and b.problem.answer_correct == r.problem.answer_correct
                continue
            # Up to the failed refinement the events are the same (a refinement is scored only in BRSD).
            for eb, er in zip(b.problem.events[:first - 1], r.problem.events):
                assert eb == er if isinstance(eb, Draft) else (eb.step, eb.tokens) == (er.step, er.tokens)
            # One uniform decides both answers: a higher chance is never right less.
            if b.correct_probability >= r.correct_probability and r.problem.answer_correct:
                assert b.problem.answer_correct
            helped += b.correct_probability > r.correct_probability
        assert helped > 20


def test_targets_and_thresholds_are_checked():
    with pytest.raises(ConfigError, match=r"config: must be 1 \(7B target\) or 2"):
        trace.generate("math500", 3, config=3)
    with pytest.raises(ConfigError, match="target: one of qwen2.5-math-7b, qwen2.5-math-1.5b, got 'gpt'"):
        trace.generate("math500", 3, target="gpt")
    with pytest.raises(ConfigError, match="disagree"):
        trace.generate("math500", 3, target="qwen2.5-math-7b", config=2)
    with pytest.raises(ConfigError, match=r"accept_threshold: must be in \[0, 1\], got 1.5"):
        trace.generate("math500", 3, header=TraceHeader(accept_threshold=1.5))
    t = trace.generate("math500", 3, target="qwen2.5-math-1.5b")
    assert t.header.metadata["generator"]["target"] == "qwen2.5-math-1.5b"
    assert trace.generate("math500", 3).header.metadata["generator"]["target"] == "qwen2.5-math-7b"
    with pytest.raises(ConfigError, match="writer: one of draft"):
        trace.good_step_probability(trace.load_profile("math500"), "qwen2.5-72b")


def test_the_1_5b_target_writes_bad_steps_wherever_the_7b_does():
    # One hardness draw per step: the weaker target fails wherever the stronger one does.
    seven = trace.generate("gaokao2023en", 300, seed=2, backtracking=False, config=1).problems
    one_five = trace.generate("gaokao2023en", 300, seed=2, backtracking=False, config=2).problems
    worse = 0
    for i in range(300):
        a, b = seven.drawn(i), one_five.drawn(i)
        # Forward-only, the PRM never scores a refinement, so the two runs have the same events ...
        assert a.problem.events == b.problem.events
        # ... and the 1.5B's kept steps are bad wherever the 7B's are, and sometimes elsewhere.
        assert all(bg <= ag for ag, bg in zip(a.kept_good, b.kept_good))
        worse += b.kept_good != a.kept_good
    assert worse > 10


def test_a_trace_without_a_target_in_its_header_loads_as_before(tmp_path):
    # Traces written before the target was recorded (and imported or recorded ones) carry
    # whatever metadata they had; nothing about the step model is required of them.
    path = tmp_path / "old.jsonl"
    path.write_text('{"format":"cosim-trace","version":1,"accept_threshold":0.7,"backtrack_threshold":0.7,'
                    '"max_backtracks":5,"backtracking":true,"metadata":{"generator":{"profile":"math500",'
                    '"problems":1,"seed":0,"backtracking":true}}}\n'
                    '{"id":"a","dataset":"math500","prompt_tokens":80,"answer_correct":true,"events":['
                    '{"type":"draft","step":1,"tokens":30,"score":0.9,"accepted":true}]}\n')
    loaded = trace.load(path)
    assert "target" not in loaded.header.metadata["generator"]
    assert trace.trace_statistics(loaded)["math500"]["accuracy"] == 1.0
