import math
import re
import statistics

import pytest

from cosim import ConfigError, trace
from cosim.trace import Backtrack, Refine

PROFILES = ["gsm8k", "math500", "gaokao2023en", "olympiadbench"]


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path):
    a = trace.generate("math500", 300, seed=7).save(tmp_path / "a.jsonl").read_bytes()
    b = trace.generate("math500", 300, seed=7).save(tmp_path / "b.jsonl").read_bytes()
    c = trace.generate("math500", 300, seed=8).save(tmp_path / "c.jsonl").read_bytes()
    assert a == b and a != c


@pytest.mark.parametrize("name", PROFILES)
def test_statistics_of_2000_problems_match_the_profile(name):
    profile = trace.load_profile(name)
    generated = trace.generate(name, 2000, seed=11)
    summaries = generated.summaries()
    steps = [t for s in summaries for t in s.final_steps]
    drafts = sum(s.drafts for s in summaries)
    rejected = sum(s.rejected_drafts for s in summaries)
    questions = [p.prompt_tokens - profile.template_tokens for p in generated]
    # Lognormal medians: the median of the draws, up to sampling error (a few %) and rounding to tokens.
    assert statistics.median(steps) == pytest.approx(profile.step_tokens_median, rel=0.06)
    assert statistics.median(questions) == pytest.approx(profile.prompt_tokens_median, rel=0.06)
    assert abs(statistics.median(s.steps for s in summaries) - profile.steps_median) <= 1
    log_sigma = statistics.pstdev(math.log(t) for t in steps)
    assert log_sigma == pytest.approx(profile.step_tokens_sigma, rel=0.08)
    # Bernoulli rates: within 4 standard errors of the step-quality model's reject rate.
    p = trace.reject_probability(profile, "draft", 0.7)
    assert abs(rejected / drafts - p) < 4 * math.sqrt(p * (1 - p) / drafts)
    # The window is respected.
    for problem, summary in zip(generated, summaries):
        assert problem.prompt_tokens + summary.final_tokens <= profile.max_context_tokens


def test_profiles_are_ordered_by_length_and_difficulty():
    profiles = {n: trace.load_profile(n) for n in PROFILES}
    reject = {n: trace.reject_probability(p, "draft", 0.7) for n, p in profiles.items()}
    assert all(r < 0.3 for r in reject.values())
    length = {n: statistics.fmean(s.final_tokens for s in trace.generate(n, 500, seed=1).summaries())
              for n in PROFILES}
    assert min(length, key=length.get) == "gsm8k"
    assert max(length, key=length.get) == "olympiadbench"
    assert min(reject, key=reject.get) == "gsm8k" and max(reject, key=reject.get) == "olympiadbench"
    accuracy = {n: p.clean_chain_accuracy for n, p in profiles.items()}
    assert min(accuracy, key=accuracy.get) == "olympiadbench"


def test_forward_only_run_pairs_with_the_backtracking_run():
    brsd = trace.generate("olympiadbench", 300, seed=5)
    rsd = trace.generate("olympiadbench", 300, seed=5, backtracking=False)
    assert not rsd.header.backtracking and brsd.header.backtracking
    backtracked = 0
    for b, r in zip(brsd, rsd):
        assert (b.id, b.prompt_tokens) == (r.id, r.prompt_tokens)
        assert not any(isinstance(e, Backtrack) for e in r.events)
        assert all(e.accepted and e.score is None for e in r.events if isinstance(e, Refine))
        first_backtrack = next((i for i, e in enumerate(b.events) if isinstance(e, Backtrack)), None)
        prefix = len(b.events) if first_backtrack is None else first_backtrack - 1  # the failed refine differs
        for eb, er in zip(b.events[:prefix], r.events[:prefix]):
            if isinstance(eb, Refine):
                assert (eb.step, eb.tokens) == (er.step, er.tokens)
            else:
                assert eb == er
        if first_backtrack is None:
            assert len(b.events) == len(r.events)
            assert b.answer_correct == r.answer_correct  # the same kept steps, the same answer draw
        else:
            backtracked += 1
            failed = b.events[first_backtrack - 1]
            kept = r.events[first_backtrack - 1]
            assert (failed.step, failed.tokens, failed.accepted) == (kept.step, kept.tokens, False)
            assert kept.accepted
    assert backtracked > 50  # the comparison exercised both kinds of problem


def test_a_user_profile_file_works_and_a_bad_one_is_named(tmp_path):
    text = (trace.load_profile.__globals__["_profiles_dir"]() / "math500.yaml").read_text()
    mine = tmp_path / "mine.yaml"
    mine.write_text(text.replace("name: math500", "name: mine"))
    assert trace.generate(str(mine), 3, seed=0).problems[0].dataset == "mine"
    bad = tmp_path / "bad.yaml"
    # The values' plausible ranges left out, so that the profile's own checks are what refuse them.
    unranged = re.sub(r", range: \[[^\]]*\]", "", text)
    bad.write_text(unranged.replace("draft_good_step_probability: {value: 0.7848",
                                    "draft_good_step_probability: {value: 0.6"))
    with pytest.raises(ConfigError, match=r"bad\.yaml:\d+: draft_good_step_probability: 0.6 gives a draft reject "
                                          r"rate of 0.348 at threshold 0.7, not below 0.3"):
        trace.load_profile(bad)
    # 0.348 by hand: 0.6 x P(score < 0.7 | good) + 0.4 x P(score < 0.7 | bad), normal log-odds.
    phi = lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2)))  # noqa: E731
    logit = math.log(0.69995 / 0.30005)
    assert 0.6 * phi((logit - 3.272) / 1.269) + 0.4 * phi((logit + 0.823) / 1.770) == pytest.approx(0.348, abs=5e-4)
    for old, new in (("max_context_tokens:", "accuracy: {value: 0.9, estimate: x}\nmax_context_tokens:"),
                     ("max_context_tokens:", "refine_failure_probability: 0.1\nmax_context_tokens:"),
                     ("max_context_tokens:", "reject_probability: 0.2\nmax_context_tokens:")):
        retired = tmp_path / "old.yaml"
        retired.write_text(text.replace(old, new))
        key = new.split(":")[0]
        with pytest.raises(ConfigError, match=rf"old\.yaml:\d+: {key}: no longer a parameter: .* use "):
            trace.load_profile(retired)
    for old, new, message in (
            ("bad_step_penalty: {value: 0.2", "bad_step_penalty: {value: 1.5", "bad_step_penalty: must be at most 1"),
            ("prm_bad_logit_mean: {value: -0.823", "prm_bad_logit_mean: {value: 3.5",
             "prm_good_logit_mean: 3.272 must be above prm_bad_logit_mean"),
            ("clean_chain_accuracy: {value: 0.9921", "clean_chain_accuracy: {value: 1.2",
             r"clean_chain_accuracy: must be in \(0, 1\]")):
        wrong = tmp_path / "wrong.yaml"
        wrong.write_text(unranged.replace(old, new))
        with pytest.raises(ConfigError, match=rf"wrong\.yaml:\d+: {message}"):
            trace.load_profile(wrong)
    typo = tmp_path / "typo.yaml"
    typo.write_text(text.replace("steps_sigma:", "step_sigma:"))
    with pytest.raises(ConfigError, match=r"typo\.yaml:\d+: step_sigma: unknown parameter; did you mean 'steps_sigma'"):
        trace.load_profile(typo)
    with pytest.raises(ConfigError, match="unknown dataset profile 'aime'"):
        trace.generate("aime", 3)
    with pytest.raises(ConfigError, match="problems: must be a whole number > 0"):
        trace.generate("math500", 0)


def test_statistics_table_lists_each_dataset():
    merged = trace.Trace(trace.TraceHeader(), trace.generate("gsm8k", 50, seed=1).problems
                         + trace.generate("math500", 50, seed=1).problems)
    stats = trace.trace_statistics(merged)
    assert set(stats) == {"gsm8k", "math500"} and stats["gsm8k"]["problems"] == 50
    table = trace.format_table(stats)
    assert "gsm8k" in table and "reject rate" in table and "backtracks/problem" in table
