"""Every figure the README and the docs quote from the simulator is what the code computes
now. Each quoted figure sits between marker comments naming it (scripts/doc_spans.py);
here each is recomputed by the function scripts/gen_readme_numbers.py writes it with (the
report's own functions at its defaults, the report's serving sweep, the policy scripts'
runs, `cosim validate`) and compared with the doc's text exactly as printed. The words
around the figures that a figure could contradict ("far beyond its sampling interval",
"gains", "throws away the least") are checked against the recomputed values too.

The runs are the ones the docs describe, shared between the figures that quote them: the
report's nine systems on its eight traces of 300 problems, its serving sweep (three
clusters, nine rates, 600 requests), its one-at-a-time sensitivity in Config 1, the five
policy runs and three on gpu-stepahead, and the validation cases: tens of seconds on two
cores."""

import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import figures_live  # noqa: E402  (scripts/, put on the path above)
import figures_report  # noqa: E402
import gen_readme_numbers as gen  # noqa: E402
from doc_spans import rewrite, spans  # noqa: E402


def marked():
    """(doc, span) for every marked figure of the generated docs."""
    return [(path.relative_to(ROOT), span) for path in gen.DOCS for span in spans(path.read_text())]


@pytest.mark.parametrize("where,span", marked(), ids=lambda v: getattr(v, "name", str(v)))
def test_each_quoted_figure_is_what_the_code_computes(where, span):
    assert span.name in gen.FIGURES, f"{where}:{span.line}: no figure named {span.name}"
    assert span.value == gen.FIGURES[span.name](), (
        f"{where}:{span.line}: {span.name} is stale: run python scripts/gen_readme_numbers.py")


def test_every_figure_is_quoted_and_every_marker_names_one():
    quoted = {span.name for _, span in marked()}
    assert quoted == set(gen.FIGURES)
    # The README quotes the report, the serving sweep, the vLLM replay, validation and the policies.
    readme = {span.name for span in spans((ROOT / "README.md").read_text())}
    assert {"headline_speedup", "open_differences", "depends_band_speedup", "knee_u280_200", "vllm_ttft",
            "validation_fpga", "policy_table"} <= readme


def test_a_marked_figure_is_rewritten_and_nothing_else():
    text = ("Speedup <!-- fig:a -->1.17<!-- /fig --> and 1.17 unmarked.\n"
            "<!-- fig:t -->\n| x |\n|---|\n| 1 |\n<!-- /fig -->\nend\n")
    assert [(s.name, s.value, s.line) for s in spans(text)] == [("a", "1.17", 1), ("t", "| x |\n|---|\n| 1 |", 2)]
    new = rewrite(text, {"a": "1.20", "t": "| x |\n|---|\n| 2 |"})
    assert new == ("Speedup <!-- fig:a -->1.20<!-- /fig --> and 1.17 unmarked.\n"
                   "<!-- fig:t -->\n| x |\n|---|\n| 2 |\n<!-- /fig -->\nend\n")
    assert rewrite(new, {"a": "1.20", "t": "| x |\n|---|\n| 2 |"}) == new
    with pytest.raises(KeyError):
        rewrite(text, {"a": "1.20"})


def test_the_band_of_the_five_estimates_lies_beyond_the_sampling_interval():
    # README: set together they move the speedup "far beyond its sampling interval".
    low, high = figures_report.band()
    interval = figures_report.headline()["intervals"]["speedup"]
    assert low < interval[0] and interval[1] < high


def test_the_words_around_the_policy_figures_follow_their_signs():
    s = figures_live.summaries()
    # docs/live.md: drafting a second step ahead "gains" latency and energy per token and
    # "throws away a little more"; the adaptive policy "throws away the least" but "costs".
    assert figures_live.change("depth", "latency_s") < 0 and figures_live.change("depth", "energy_j_per_token") < 0
    assert s["depth"]["stall_ratio"] < s["thresholds"]["stall_ratio"]
    assert s["depth"]["wasted_energy_share"] > s["thresholds"]["wasted_energy_share"]
    for scenario in ("", figures_live.STEP_AHEAD):
        wasted = {run: v["wasted_energy_share"] for run, v in figures_live.summaries(scenario).items()}
        assert wasted["adaptive"] == min(wasted.values())
    assert figures_live.change("adaptive", "latency_s") > 0
    assert figures_live.change("adaptive", "energy_j_per_token") > 0


def test_the_words_around_the_draft_policy_follow_its_runs():
    # README: on split decoding it "drafts fewer than the scenario's count", "finishes sooner"
    # and "spends more energy a token"; on the H100 it "drafts more than the scenario's three",
    # sooner, on less energy.
    gpu, fpga = (figures_live.drafts(s) for s in figures_live.draft_length.SCENARIOS)
    warm = figures_live.draft_length.WARMUP
    assert figures_live.draft_change(figures_live.draft_length.SCENARIOS[1], "latency_s") < 0
    assert figures_live.draft_change(figures_live.draft_length.SCENARIOS[1], "energy_j_per_token") > 0
    fewer = sum(n for k, n in fpga["chosen"].items() if k < fpga["draft_tokens"])
    assert fewer > 0.9 * sum(fpga["chosen"].values())
    assert gpu["draft_tokens"] == 3
    more = sum(n for k, n in gpu["chosen"].items() if k > 3)
    assert more > 0.9 * sum(gpu["chosen"].values()) and sum(gpu["chosen"].values()) > 10 * warm
    assert figures_live.draft_change(figures_live.draft_length.SCENARIOS[0], "latency_s") < 0
    assert figures_live.draft_change(figures_live.draft_length.SCENARIOS[0], "energy_j_per_token") < 0


def test_the_words_around_the_mlenergy_errors_follow_the_rows():
    # docs/validation.md: with the sampler charged, "the chat rows of the dense models lie
    # within 15%, most within a tenth"; on GPQA "the predictions come out slow"; gpt-oss-20b
    # on GPQA "comes out slowest at its largest batches".
    import figures_serving
    from cosim.validation import _mlenergy
    itl = [r for r in figures_serving.rows() if r.case == f"{_mlenergy.CASE} (ITL)"]
    dense_chat = [r for r in itl if "lm-arena-chat" in r.quantity and "Qwen3-30B" not in r.quantity]
    assert dense_chat and all(abs(r.error) < 0.15 for r in dense_chat)
    assert sum(abs(r.error) <= 0.10 for r in dense_chat) > len(dense_chat) / 2
    gpqa = [r for r in itl if " gpqa " in r.quantity]
    assert sorted(r.error for r in gpqa)[len(gpqa) // 2] > 0
    worst = max(itl, key=lambda r: abs(r.error))
    assert "gpt-oss-20b gpqa" in worst.quantity and worst.error > 0
