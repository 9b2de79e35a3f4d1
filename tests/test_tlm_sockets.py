"""A second, independent initiator on the devices' TLM-2.0 target sockets: a C++ test bench
of its own (tests/cpp/second_initiator.cpp, no host orchestration, no Python in the loop)
binds to the FPGA draft accelerator and to a GPU proxy, drives one speculative step through
them (load the context, draft a step with an annotated delay, score it on the GPU, accept it,
then a GPU decode another process aborts through the GPU's socket) and prints the time each
command returned at. A PCIe link stands as the interconnect in front of both devices, routing
the FPGA's commands and the abort by address. The timeline is worked here by hand from the bench's profiles."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from cosim import _native

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests" / "cpp" / "second_initiator.cpp"


def _model_folders() -> list[Path]:
    """The folders of the models' headers, as the library's build includes them (the RTL's stay out)."""
    models = ROOT / "models"
    return [models, *sorted(p for p in models.iterdir() if p.is_dir() and p.name != "rtl")]


def _sanitized(build: Path) -> bool:
    # scripts/sanitize.sh's build needs the sanitizer runtime at link time: not this bench's.
    cache = build / "CMakeCache.txt"
    return cache.is_file() and "COSIM_SANITIZE:BOOL=ON" in cache.read_text(errors="replace")


def _library() -> Path | None:
    found = sorted((p for p in ROOT.glob("build/*/libcosim_models.a") if not _sanitized(p.parent)),
                   key=lambda p: p.stat().st_mtime)
    return found[-1] if found else None


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    lib = _library()
    if lib is None or shutil.which("pkg-config") is None:
        pytest.skip("no built model library (build/*/libcosim_models.a): run scripts/bootstrap.sh setup")
    systemc = subprocess.run(["pkg-config", "--cflags", "--libs", "systemc"], capture_output=True, text=True,
                             check=True).stdout.split()
    exe = tmp_path_factory.mktemp("bench") / "second_initiator"
    cmd = ["g++", "-std=c++17", "-O1", str(SOURCE), "-o", str(exe), *(f"-I{d}" for d in _model_folders()),
           f"-I{lib.parent / 'generated'}", str(lib), *systemc, "-lpthread"]
    subprocess.run(cmd, check=True, timeout=600)
    return exe


def run(exe: Path, kvmu: str) -> dict[str, dict[str, str]]:
    out = subprocess.run([str(exe), kvmu], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = {}
    for line in out.stdout.splitlines():
        words = line.split()
        if len(words) >= 2 and "=" in words[-1] and words[0] != "regs":
            key = " ".join(w for w in words if "=" not in w)
            lines[key] = dict(w.split("=", 1) for w in words if "=" in w)
    assert "DONE" in out.stdout.split(), out.stdout
    for line in out.stdout.splitlines():
        words = line.split()
        if words and words[0] == "regs":
            lines["regs " + words[1]] = dict(w.split("=", 1) for w in words[2:])
    return lines


# The bench's FPGA: 2 ms per drafted token (its profile); its HBM stream is timed by the
# bandwidth model: 4 ports of 256 bits at 200 MHz x 0.8 = 5.12 GB/s each (below the
# pseudo-channel's 14.375 x 0.9 GB/s), 20.48 GB/s in all.
# The tiny model streams, per token, its linear weights at 1 byte each:
#   2 layers x (64x64 + 2x64x64 + 64x64 + 3x64x128) + 64x100 = 88,320 bytes,
# and reads 2 x 2 layers x 4 KV heads x 16 = 256 bytes of KV per earlier token.
W, K = 88_320, 256
STEP_BYTES = 5 * W + K * (100 + 101 + 102 + 103 + 104)
HBM_NS = STEP_BYTES / 20.48


@pytest.mark.parametrize("kvmu", ["tlm", "rtl"])
def test_a_second_initiator_drives_a_step_with_the_hand_worked_timing(bench, kvmu):
    if kvmu not in _native.kvmu_implementations:
        pytest.skip("this build has no Verilated KVMU")
    got = run(bench, kvmu)
    # t = 0: the context is loaded: all three pointers at the prompt's end.
    assert float(got["load_context"]["t_ms"]) == 0.0
    assert got["load_context kvmu"] == {"valid": "100", "curr": "100", "ahead": "100", "mode": "initialization"}
    # The bench was 1 ms ahead when it asked: the accelerator waits that out, then drafts
    # 5 tokens x 2 ms: back at 11 ms, the step under verification [100, 105).
    assert float(got["draft_step"]["t_ms"]) == pytest.approx(11.0, abs=1e-9)
    assert got["draft_step"]["produced"] == "5"
    assert got["draft_step kvmu"] == {"valid": "100", "curr": "105", "ahead": "105", "mode": "speculation"}
    # One HBM transaction for the whole step, not one per token.
    assert got["hbm"]["transactions"] == "1"
    assert float(got["hbm"]["busy_ns"]) == pytest.approx(HBM_NS, abs=1e-3)
    # The GPU scores the 5 tokens: its prefill profile, 1 ms + 4 x 0.5 ms = 3 ms: 14 ms.
    assert float(got["gpu_score"]["t_ms"]) == pytest.approx(14.0, abs=1e-9)
    assert got["gpu_score"]["ok"] == "1"
    # The verdict takes no time and moves valid to the step's end.
    assert float(got["verdict"]["t_ms"]) == pytest.approx(14.0, abs=1e-9)
    assert got["verdict kvmu"] == {"valid": "105", "curr": "105", "ahead": "105", "mode": "accept"}
    # A 10-token GPU decode from 14 ms at 1.5 ms per token: tokens end at 15.5, 17, 18.5...
    # The other process aborts it at 18 ms: it returns at once with 2 tokens.
    assert float(got["gpu_abort"]["t_ms"]) == pytest.approx(18.0, abs=1e-9)
    assert float(got["gpu_decode"]["t_ms"]) == pytest.approx(18.0, abs=1e-9)
    assert got["gpu_decode"]["produced"] == "2" and got["gpu_decode"]["ok"] == "0"
    # The PCIe link forwarded the FPGA's three commands and the abort, routed by address.
    assert got["pcie"]["forwarded"] == "4"


@pytest.mark.parametrize("kvmu", ["tlm", "rtl"])
def test_the_kvmus_register_block_answers_as_its_map_says(bench, kvmu):
    if kvmu not in _native.kvmu_implementations:
        pytest.skip("this build has no Verilated KVMU")
    got = run(bench, kvmu)

    def regs(valid, curr, ahead, mode, mux, nmarks, mark0):
        return {"valid": str(valid), "curr": str(curr), "ahead": str(ahead), "mode": str(mode), "mux": str(mux),
                "nmarks": str(nmarks), "mark0": str(mark0)}

    # DEPTH 2, ARG 50, CMD initialize: all pointers at 50, Initialization (0), MUX on PCIe (1).
    assert got["regs initialize"] == regs(50, 50, 50, 0, 1, 0, 0)
    # Speculation (1), MUX on the sampler (0); a 3-token step becomes the step under
    # verification (curr follows ahead to 53); a 2-token step-ahead step ends at 55: one mark.
    assert got["regs two_steps"] == regs(50, 53, 55, 1, 0, 1, 55)
    # Accept: valid to the verified step's end, curr to the first mark; Accept mode (2).
    assert got["regs accept"] == regs(53, 55, 55, 2, 0, 0, 0)
    # A write to a read-only register and an unmapped address: TLM_ADDRESS_ERROR_RESPONSE
    # (-2 in tlm_gp.h); a 4-byte access: TLM_BURST_ERROR_RESPONSE (-4).
    assert got["errors"] == {"readonly": "-2", "unmapped": "-2", "short": "-4"}
    # A target token while the MUX selects the sampler is refused, the state unchanged.
    assert got["sync"] == {"refused": "1"}
    assert got["regs refused"] == got["regs accept"]
