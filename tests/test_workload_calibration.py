"""The built-in profiles meet their calibration targets. Reject rates and RSD
accuracy have closed forms, written out here from the model's definition and
compared with the targets and with sampled traces; BRSD's gains are sampled,
with tolerances from the samples' own standard errors. The full check on
5,000 problems per dataset is bench/check_workload.py."""

import math
import statistics

import pytest

from cosim import trace
from cosim.trace import TraceHeader

PROFILES = ["gsm8k", "math500", "gaokao2023en", "olympiadbench"]
# The draft reject rates the profiles had before the step-quality model, at threshold 0.7.
REJECT_RATE = {"gsm8k": 0.15, "math500": 0.20, "gaokao2023en": 0.22, "olympiadbench": 0.25}
# RSD Config 1: MATH from the responses data (728 of 800); the others the Qwen2.5-Math report's 7B results.
RSD_ACCURACY = {"gsm8k": 0.95, "math500": 0.91, "gaokao2023en": 0.67, "olympiadbench": 0.42}
GAIN = {1: 0.020, 2: 0.050}  # the paper's mean BRSD - RSD gain, Config 1 and 2
CALIBRATION_PROBLEMS = 10_000  # per dataset, in scripts/calibrate_workload.py
HALF_POINT = 0.005
TARGET_GOOD = {1: "target_7b_good_step_probability", 2: "target_1_5b_good_step_probability"}


def phi(x):
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def reject(profile, good, threshold):
    """P(score < threshold): normal log-odds, scores rounded to four decimals."""
    edge = threshold - 0.00005
    mean = profile.prm_good_logit_mean if good else profile.prm_bad_logit_mean
    sigma = profile.prm_good_logit_sigma if good else profile.prm_bad_logit_sigma
    return phi((math.log(edge / (1 - edge)) - mean) / sigma)


def draft_reject_rate(profile, threshold):
    g = profile.draft_good_step_probability
    return g * reject(profile, True, threshold) + (1 - g) * reject(profile, False, threshold)


def step_counts(profile):
    """P(n steps): a lognormal rounded to whole steps, at least 1, redrawn above the cap."""
    mu, sigma, top = math.log(profile.steps_median), profile.steps_sigma, profile.steps_max
    cdf = lambda x: phi((math.log(x) - mu) / sigma)  # noqa: E731
    total = cdf(top + 0.5)
    return {k: ((cdf(1.5) if k == 1 else cdf(k + 0.5) - cdf(k - 0.5)) / total) for k in range(1, top + 1)}


def rsd_accuracy(profile, config, threshold=0.7):
    """RSD keeps a bad step when the draft is bad and passes, or when the draft is rejected and
    the target's step is bad. One hardness draw per step: the draft is good below g_d, the
    target below g_t, so each of the three hardness ranges has its own draft verdict."""
    gd, gt = profile.draft_good_step_probability, getattr(profile, TARGET_GOOD[config])
    bad_kept = ((1 - gd) * (1 - reject(profile, False, threshold))
                + max(0.0, gd - gt) * reject(profile, True, threshold)
                + (1 - max(gd, gt)) * reject(profile, False, threshold))
    p = profile.bad_step_penalty
    # Bad steps are independent across steps: E[(1 - p) ** Binomial(n, q)] = (1 - p q) ** n.
    return profile.clean_chain_accuracy * sum(w * (1 - p * bad_kept) ** n for n, w in step_counts(profile).items())


def sample(name, problems, seed, config, backtracking, threshold=0.7):
    generated = trace.generate(name, problems, seed, backtracking, TraceHeader(accept_threshold=threshold),
                               config=config)
    drawn = [generated.problems.drawn(i) for i in range(problems)]
    return generated, drawn


@pytest.mark.parametrize("name", PROFILES)
def test_draft_reject_rates_stay_where_they_were_and_move_with_the_threshold(name):
    profile = trace.load_profile(name)
    assert draft_reject_rate(profile, 0.7) == pytest.approx(REJECT_RATE[name], abs=HALF_POINT)
    assert draft_reject_rate(profile, 0.7) < 0.3
    assert trace.reject_probability(profile, "draft", 0.7) == pytest.approx(draft_reject_rate(profile, 0.7), abs=1e-12)
    for threshold in (0.5, 0.7, 0.9):
        generated, _ = sample(name, 600, 3, 1, True, threshold)
        stats = trace.trace_statistics(generated)[name]
        drafts = sum(s.drafts for s in generated.summaries())
        expected = draft_reject_rate(profile, threshold)
        # Each draft's verdict is its own draw: a binomial share, within 4 standard errors.
        assert abs(stats["reject_rate"] - expected) < 4 * math.sqrt(expected * (1 - expected) / drafts)


@pytest.mark.parametrize("name", PROFILES)
def test_rsd_accuracy_is_the_closed_form_and_config_1_meets_the_data(name):
    profile = trace.load_profile(name)
    # The calibration solved on sampled paths; the closed form is exact (but for the context
    # window, which cuts a very few solutions short).
    assert rsd_accuracy(profile, 1) == pytest.approx(RSD_ACCURACY[name], abs=HALF_POINT)
    assert rsd_accuracy(profile, 2) < rsd_accuracy(profile, 1) - 0.01
    for config in (1, 2):
        _, drawn = sample(name, 1000, 5, config, False)
        chances = [d.correct_probability for d in drawn]
        standard_error = statistics.pstdev(chances) / math.sqrt(len(chances))
        assert abs(statistics.fmean(chances) - rsd_accuracy(profile, config)) < 4 * standard_error
        labels = [d.problem.answer_correct for d in drawn]  # drawn from those chances: a binomial around them
        assert abs(statistics.fmean(labels) - statistics.fmean(chances)) < 4 * math.sqrt(0.25 / len(labels))


def test_brsd_gains_over_rsd_meet_the_paper_on_average():
    problems = 1000
    for config in (1, 2):
        gains, variances = [], []
        for name in PROFILES:
            _, rsd = sample(name, problems, 11, config, False)
            _, brsd = sample(name, problems, 11, config, True)
            # The two runs share their draws, so the per-problem differences are what varies.
            diffs = [b.correct_probability - r.correct_probability for b, r in zip(brsd, rsd)]
            gains.append(statistics.fmean(diffs))
            variances.append(statistics.pvariance(diffs) / problems)
        mean_gain = statistics.fmean(gains)
        standard_error = math.sqrt(sum(variances)) / len(PROFILES)
        # The calibration's own sampling error, on its 10,000 problems per dataset, adds to the test's.
        tolerance = 4 * standard_error * math.sqrt(1 + problems / CALIBRATION_PROBLEMS)
        assert abs(mean_gain - GAIN[config]) < tolerance, (config, mean_gain, tolerance)
        assert tolerance < 0.01  # tight enough to tell +2.0 from +5.0
        assert all(g > 0 for g in gains)
