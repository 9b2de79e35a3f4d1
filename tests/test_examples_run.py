"""Every `cosim` example in the README, in docs/ and in the command line's --help runs as
written, on tiny sizes: each example's problem, request and sample counts are made small,
nothing else changes. An example that joins a Ray cluster joins a real one, started on this machine."""

import argparse
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from cosim.cli import build_parser

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# Sizes that keep an example to seconds; what each option means is unchanged.
TINY = {"--problems": "2", "--requests": "4"}
SIZED = {"run": "--problems", "sweep": "--problems", "sensitivity": "--problems", "report": "--problems",
         "serve": "--requests", "plan": "--requests"}


def doc_blocks():
    """(where, [command lines]) for each bash block of the docs that runs cosim."""
    found = []
    for path in DOCS:
        text = path.read_text()
        for match in re.finditer(r"```bash\n(.*?)```", text, re.S):
            lines = [line for line in match.group(1).splitlines() if line.strip().startswith("cosim ")]
            if lines:
                line_no = text[:match.start()].count("\n") + 2
                found.append((f"{path.relative_to(ROOT)}:{line_no}", lines))
    return found


def help_blocks():
    """(where, [command lines]) for the examples of `cosim --help` and each command's --help."""
    parser = build_parser()
    parsers = [("cosim --help", parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                parsers.append((f"cosim {name} --help", sub))
                parsers += [(f"cosim {name} {n} --help", p) for a in sub._actions
                            if isinstance(a, argparse._SubParsersAction) for n, p in a.choices.items()]
    found = []
    for where, p in parsers:
        lines = [line.strip() for line in (p.epilog or "").splitlines() if line.strip().startswith("cosim ")]
        if lines:
            found.append((where, lines))
    return found


def commands(line):
    """The commands of one example line (';' ends one), its comment left out."""
    found, current = [], []
    for word in shlex.split(line, comments=True):
        if word.endswith(";"):
            found.append([*current, word[:-1]])
            current = []
        else:
            current.append(word)
    return [c for c in (*found, current) if c]


def tiny(words):
    """One command with small sizes."""
    words = list(words)
    for i, word in enumerate(words[:-1]):
        if word in TINY:
            words[i + 1] = TINY[word]
        if word == "--samples":  # Sobol's base samples: the least it takes
            words[i + 1] = "16"
    sub = words[1] if len(words) > 1 else ""
    sized = SIZED.get(sub)
    if sized and sized not in words and "--trace" not in words:
        words += [sized, TINY[sized]]
    if sub == "sensitivity" and "--samples" not in words:
        words += ["--samples", "4"]  # Morris trajectories: the least it takes
    quiet = sub in SIZED or words[1:3] == ["trace", "gen"]
    if quiet and "--quiet" not in words:
        words.append("--quiet")  # no progress bars in the test's log
    return words


@pytest.fixture
def workspace(tmp_path):
    """A folder of its own for each example block, holding what the examples name beside
    the package, as in a clone: the repository's tests/data, cosim/data and examples."""
    for part in ("tests/data", "cosim/data", "examples"):
        (tmp_path / part).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / part).symlink_to(ROOT / part)
    return tmp_path


def python_blocks():
    """(where, code) for each Python block of the docs, with its traces drawn tiny."""
    found = []
    for path in DOCS:
        text = path.read_text()
        for match in re.finditer(r"```python\n(.*?)```", text, re.S):
            code = re.sub(r'(generate\("\w+", (?:problems=)?)\d+', r"\g<1>3", match.group(1))
            found.append((f"{path.relative_to(ROOT)}:{text[:match.start()].count(chr(10)) + 2}", code))
    return found


BLOCKS = doc_blocks() + help_blocks()
PYTHON = python_blocks()
RAN: set[str] = set()  # commands that ran as written here already: the same line again is not rerun


def test_the_examples_are_found():
    wheres = [where for where, _ in BLOCKS]
    assert any(w.startswith("README.md") for w in wheres) and "cosim --help" in wheres
    assert sum(len(lines) for _, lines in BLOCKS) >= 20
    assert len(PYTHON) >= 5 and all("generate(" not in code or re.search(r'generate\("\w+", (problems=)?3', code)
                                    for _, code in PYTHON)


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("where,code", PYTHON, ids=[where for where, _ in PYTHON])
def test_each_python_example_runs_as_written(tmp_path, where, code):
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{where}:\n{done.stderr[-2000:]}"


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("where,lines", BLOCKS, ids=[where for where, _ in BLOCKS])
def test_each_example_runs_as_written(request, workspace, where, lines):
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    for line in lines:  # in order: a later line may read what an earlier one wrote
        for words in commands(line):
            if "--ray-address" in words:  # the example's cluster: a real Ray head, on this machine
                address, head_env = request.getfixturevalue("ray_head")
                words[words.index("--ray-address") + 1] = address
                env.update({k: v for k, v in head_env.items() if k.startswith("RAY_")})
            command = shlex.join(tiny(words))
            if command in RAN:
                continue
            done = subprocess.run(["bash", "-c", command], cwd=workspace, env=env, capture_output=True, text=True,
                                  timeout=600)
            assert done.returncode == 0, f"{where}: {command}\n{done.stderr[-2000:]}"
            RAN.add(command)
