"""Recording BRSD with tiny Qwen2-architecture models built from a config with
random weights (no download)."""

import json

import pytest

torch = pytest.importorskip("torch", reason="the recorder's tests need the [record] extra (torch, transformers)")
transformers = pytest.importorskip("transformers",
                                   reason="the recorder's tests need the [record] extra (torch, transformers)")

import cosim  # noqa: E402
from conftest import run_cli  # noqa: E402
from cosim import standalone  # noqa: E402
from cosim.record import CausalModel, ValueHeadPrm, record_brsd  # noqa: E402
from cosim.trace import Backtrack, Draft, Refine, TraceHeader  # noqa: E402

CORPUS = ["Question: what is two plus two? The answer is \\boxed{4}.\n\nFirst add the numbers.\n\n",
          "Let x be 3. Then 2x + 1 = 7, so the answer is \\boxed{7}.\n\n"] * 20
PROBLEMS = [{"question": "What is 2 + 2?", "answer": "4"}, {"question": "Solve 2x + 1 = 7.", "answer": "3"}]


@pytest.fixture(scope="module")
def tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(CORPUS, trainers.BpeTrainer(vocab_size=300, special_tokens=["<eos>"],
                                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<eos>")


def tiny(tokenizer, seed, layers=2):
    torch.manual_seed(seed)
    config = transformers.Qwen2Config(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64,
                                      num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2,
                                      max_position_embeddings=1024, eos_token_id=tokenizer.eos_token_id)
    return transformers.Qwen2ForCausalLM(config)


@pytest.fixture(scope="module")
def models(tokenizer):
    draft = CausalModel(tiny(tokenizer, 1), tokenizer, name="tiny-draft")
    target = CausalModel(tiny(tokenizer, 2, layers=3), tokenizer, name="tiny-target")
    torch.manual_seed(3)
    prm = ValueHeadPrm(tiny(tokenizer, 4), tokenizer, head=torch.nn.Linear(32, 1))
    return draft, target, prm


def scripted(scores):
    it = iter(scores)
    return lambda context, step: next(it)


def test_a_run_validates_and_replays(models, tmp_path):
    draft, target, prm = models
    recording = record_brsd(draft, target, prm, PROBLEMS, dataset="tiny", max_step_tokens=6, max_steps=4)
    paths = recording.write(tmp_path)
    loaded = cosim.trace.load(paths["trace"])  # validated on load
    assert len(loaded) == 2 and all(p.answer_correct in (True, False) for p in loaded)
    result = cosim.simulate(cosim.scenario("heteroreason", 1), loaded)
    assert result.summary["problems"] == 2
    for role in ("draft", "target", "prm"):
        assert cosim.load_latency_profile(paths[role]).rows


def test_accept_and_reject_paths_follow_the_threshold(models):
    draft, target, _ = models
    # Accept, reject (refinement kept), accept, accept.
    prm = scripted([0.9, 0.2, 0.95, 0.8, 0.9])
    recording = record_brsd(draft, target, prm, PROBLEMS[:1], max_step_tokens=5, max_steps=4)
    kinds = [(type(e).__name__, e.accepted) for e in recording.trace.problems[0].events]
    assert kinds == [("Draft", True), ("Draft", False), ("Refine", True), ("Draft", True), ("Draft", True)]


def test_a_backtrack_when_forced(models):
    draft, target, _ = models
    # Step 1 accepted; step 2's draft rejected and its refinement fails: back to step 1,
    # whose alternative (by the target) is kept; then steps 2 and 3 are accepted.
    prm = scripted([0.9, 0.1, 0.2, 0.9, 0.9, 0.9])
    recording = record_brsd(draft, target, prm, PROBLEMS[:1], max_step_tokens=5, max_steps=3)
    events = recording.trace.problems[0].events
    assert [type(e) for e in events] == [Draft, Draft, Refine, Backtrack, Refine, Draft, Draft]
    assert events[3] == Backtrack(1) and events[4].step == 1 and events[4].accepted
    assert all(e.tokens == 5 for e in events if not isinstance(e, Backtrack))  # random models never hit "\n\n"


def test_forward_only_runs_keep_refinements_unscored(models):
    draft, target, _ = models
    recording = record_brsd(draft, target, scripted([0.1, 0.1, 0.1]), PROBLEMS[:1], max_step_tokens=4,
                            max_steps=3, header=TraceHeader(backtracking=False))
    assert all(e.score is None for e in recording.trace.problems[0].events if isinstance(e, Refine))


def test_the_measured_profile_drives_the_gpu_proxy(models, tmp_path):
    draft, target, prm = models
    recording = record_brsd(draft, target, prm, PROBLEMS, max_step_tokens=6, max_steps=3)
    path = recording.write(tmp_path)["target"]
    rows = {(r[0], r[1], r[2]): r[3] for r in recording.profile_rows("target")}
    decode = sorted((c, s) for (phase, _, c), s in rows.items() if phase == "decode")
    context, seconds = decode[0]
    simulated = standalone.gpu_decode("rtx3090", "qwen2.5-math-7b", 1, context, profile=path)
    assert simulated.time_ns == pytest.approx(seconds * 1e9, rel=1e-6)
    formula = standalone.gpu_decode("rtx3090", "qwen2.5-math-7b", 1, context)
    assert formula.time_ns != pytest.approx(simulated.time_ns, rel=0.01)  # the profile replaced the roofline


def save_models(models, tokenizer, folder):
    """The three models saved as the record command reads them, and a problems file: its path."""
    draft, target, prm = models
    for name, model in (("draft", draft.model), ("target", target.model), ("prm", prm.lm.model)):
        model.save_pretrained(folder / name)
        tokenizer.save_pretrained(folder / name)
    torch.save(prm.head.state_dict(), folder / "prm" / "value_head.pt")
    data = folder / "problems.jsonl"
    data.write_text("\n".join(json.dumps(p) for p in PROBLEMS) + "\n")
    return data


def test_the_record_command(models, tokenizer, tmp_path):
    data = save_models(models, tokenizer, tmp_path)
    from cosim.cli import main

    out = tmp_path / "out"
    assert main(["record", "--draft", str(tmp_path / "draft"), "--target", str(tmp_path / "target"),
                 "--prm", str(tmp_path / "prm"), "--dataset", str(data), "--problems", "2",
                 "--max-step-tokens", "4", "--max-steps", "2", "--out", str(out), "--quiet"]) == 0
    assert len(cosim.trace.load(out / "trace.jsonl")) == 2
    assert (out / "profile_prm.csv").read_text().startswith("phase,tokens,context,seconds")
    assert main(["record", "--draft", str(tmp_path / "nowhere"), "--target", str(tmp_path / "target"),
                 "--prm", str(tmp_path / "prm"), "--dataset", str(data), "--out", str(out), "--quiet"]) == 2


def test_with_the_value_head_prm_both_paths_occur_at_a_threshold_between_its_scores(models):
    draft, target, prm = models
    seen = []

    def watching(context, step):
        score = prm(context, step)
        seen.append(score)
        return score

    everything = TraceHeader(accept_threshold=0.0, backtracking=False)
    record_brsd(draft, target, watching, PROBLEMS, max_step_tokens=4, max_steps=4, header=everything)
    assert len(set(seen)) > 1  # a random head still scores different steps differently
    middle = sorted(seen)[len(seen) // 2]
    recording = record_brsd(draft, target, prm, PROBLEMS, max_step_tokens=4, max_steps=4,
                            header=TraceHeader(accept_threshold=middle, backtracking=False))
    verdicts = {e.accepted for p in recording.trace.problems for e in p.events if isinstance(e, Draft)}
    assert verdicts == {True, False}


def test_with_the_value_head_prm_a_backtrack_occurs_when_forced(models):
    draft, target, prm = models
    # Nothing passes: drafts are rejected and refinements fail until the cap keeps one.
    forced = TraceHeader(accept_threshold=1.0, backtrack_threshold=1.0, max_backtracks=2)
    recording = record_brsd(draft, target, prm, PROBLEMS[:1], max_step_tokens=3, max_steps=3, header=forced)
    events = recording.trace.problems[0].events
    assert sum(isinstance(e, Backtrack) for e in events) == 2
    cosim.trace.summarize(recording.trace.problems[0], recording.trace.header)  # a run BRSD can make


def test_record_simulate_runs_the_models_in_lockstep_and_its_trace_replays(models, tokenizer, tmp_path):
    data = save_models(models, tokenizer, tmp_path)
    # In fresh processes: the models run in the forked simulation worker, and a process whose
    # torch has already run (this one) must not fork one.
    common = ["record", "--draft", tmp_path / "draft", "--target", tmp_path / "target", "--prm", tmp_path / "prm",
              "--dataset", data, "--problems", "2", "--max-step-tokens", "4", "--max-steps", "3", "--quiet"]
    out = tmp_path / "live"
    proc = run_cli(*common, "--simulate", "heteroreason-u280-200", "--out", out, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    made = cosim.trace.load(out / "trace.jsonl")  # validated on load
    assert len(made) == 2 and (out / "profile_target.csv").exists()
    # The same models recorded offline make the same runs: the live run asked as far as it needed.
    proc = run_cli(*common, "--out", tmp_path / "offline", cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    offline = cosim.trace.load(tmp_path / "offline" / "trace.jsonl")
    assert [p.events for p in made.problems] == [p.events for p in offline.problems]
    replay = cosim.simulate(cosim.load_scenario("heteroreason-u280-200"), made)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["latency_s"] == replay.summary["latency_s"]
    assert summary["energy_j"] == replay.summary["energy_j"]
