"""The real models as a live co-simulation's policy: each problem's BRSD run over the
draft, target and PRM is made as far as the simulation's questions need, and the
simulated hardware times it in lockstep (``cosim record --simulate``)."""

from __future__ import annotations

from typing import Any, Callable

from ..live import TracePolicy
from ..live._policy import View
from ..trace import Problem, Trace, TraceHeader
from ._brsd import BrsdRun
from ._models import CausalModel, Scorer
from ._runner import PROMPT_TEMPLATE, final_answer

Models = tuple[CausalModel, CausalModel, Scorer]


class RecordingPolicy(TracePolicy):
    """Answers from each problem's BRSD run over real models, made event by event as the
    questions reach further; questions asked ahead run the models ahead (as far as the next
    draft or refinement of the step asked about), so the trace it makes replays the run.

    ``models`` is called once, where the simulation runs (a worker process), to load the
    draft, target and PRM; ``questions`` are (question, answer) per problem, in order."""

    def __init__(self, models: Callable[[], Models], questions: list[tuple[str, str | None]], problems: Trace,
                 max_step_tokens: int, max_steps: int):
        super().__init__(problems)
        self._load, self._questions = models, questions
        self._models: Models | None = None
        self._runs: dict[int, BrsdRun] = {}
        self.max_step_tokens, self.max_steps = max_step_tokens, max_steps
        self.texts: dict[int, str] = {}

    def models(self) -> Models:
        if self._models is None:
            self._models = self._load()
        return self._models

    def events_of(self, view: View) -> Any:
        draft, target, prm = self.models()
        question = self._questions[view.request][0]
        prompt = draft.encode(PROMPT_TEMPLATE.format(question=question))
        run = BrsdRun(draft, target, prm, prompt, self.trace.header, self.max_step_tokens, self.max_steps)
        self._runs[view.request] = run
        return run

    def answer_correct(self, request: int, problem: Problem, events: tuple[Any, ...]) -> bool | None:
        run = self._runs.pop(request, None)
        if run is None:
            return None
        text = self.models()[0].decode([t for s in run.chain for t in s])
        self.texts[request] = text
        answer = self._questions[request][1]
        return None if answer is None else final_answer(text) == answer.strip()

    def collect(self) -> dict[str, Any]:
        """What goes back with the run: each model's measured timings, the answers' texts."""
        if self._models is None:
            return {"timings": {}, "texts": []}
        draft, target, prm = self._models
        timings = {"draft": draft.timings, "target": target.timings}
        if getattr(prm, "timings", None) is not None:
            timings["prm"] = prm.timings
        return {"timings": timings, "texts": [self.texts[i] for i in sorted(self.texts)]}


def prompt_problems(encode: Callable[[str], list[int]], questions: list[tuple[str, str | None]], dataset: str,
                    header: TraceHeader) -> Trace:
    """The problems as a live run starts them: id, dataset and prompt length (the events come live)."""
    problems = [Problem(f"{dataset}-{i:05d}", dataset, len(encode(PROMPT_TEMPLATE.format(question=q))), ())
                for i, (q, _) in enumerate(questions)]
    return Trace(header, problems)
