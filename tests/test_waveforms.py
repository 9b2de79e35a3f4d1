"""VCD waveforms (SystemC sc_trace) and Perfetto timelines."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from vcd.reader import TokenKind, tokenize

import cosim
from cosim.trace import Trace, TraceHeader, TrajectoryBuilder
from handmodel import FAST_FPGA, all_accept_timeline
from conftest import drawn_power

PROMPT = 100
STEPS = [40, 30, 50, 20, 64]
PS_PER_NS = 1000


def read_vcd(path):
    """{scope.signal: [(time_ps, value), ...]} from a VCD file (below SystemC's top scope)."""
    names, changes, now, scopes = {}, {}, 0, []
    with open(path, "rb") as handle:
        for token in tokenize(handle):
            if token.kind is TokenKind.SCOPE:
                scopes.append(token.data.ident)
            elif token.kind is TokenKind.UPSCOPE:
                scopes.pop()
            elif token.kind is TokenKind.VAR:
                name = ".".join(scopes[1:] + [token.data.reference])
                names[token.data.id_code] = name
                changes[name] = []
            elif token.kind is TokenKind.CHANGE_TIME:
                now = token.data
            elif token.kind in (TokenKind.CHANGE_VECTOR, TokenKind.CHANGE_REAL, TokenKind.CHANGE_SCALAR):
                changes[names[token.data.id_code]].append((now, token.data.value))
    return changes


def value_at(changes, signal, time_ps):
    value = None
    for t, v in changes[signal]:
        if t > time_ps:
            break
        value = v
    return value


@pytest.fixture(scope="module")
def all_accept_vcd(tmp_path_factory):
    path = tmp_path_factory.mktemp("vcd") / "accept.vcd"
    b = TrajectoryBuilder("accept", PROMPT)
    for n in STEPS:
        b.accept(n)
    cosim.simulate(cosim.scenario("heteroreason", 1), Trace(TraceHeader(), [b.build()]), vcd=path)
    return read_vcd(path)


def test_vcd_kvmu_pointers_at_hand_worked_verdict_times(all_accept_vcd):
    hand = all_accept_timeline(PROMPT, STEPS, step_ahead=True)
    valid = PROMPT
    for n, verdict_ns in zip(STEPS, hand["verdicts"]):
        # Just before the verdict the step is still under verification; just after, it is verified.
        assert value_at(all_accept_vcd, "kvmu.valid", int(verdict_ns * PS_PER_NS) - 1000) == valid
        valid += n
        assert value_at(all_accept_vcd, "kvmu.valid", int(verdict_ns * PS_PER_NS) + 1000) == valid
    # Before the KV of the prompt lands, the MUX feeds the decoder from PCIe; while drafting, from the sampler.
    assert value_at(all_accept_vcd, "kvmu.mux_pcie", int(hand["kv_ready"] * PS_PER_NS) + 1000) == "0"
    assert value_at(all_accept_vcd, "kvmu.ahead", int(hand["kv_ready"] * PS_PER_NS) + 1000) == PROMPT


def test_token_detail_moves_the_draft_pointer_token_by_token(tmp_path):
    from handmodel import Fpga

    path = tmp_path / "tokens.vcd"
    b = TrajectoryBuilder("accept", PROMPT)
    for n in STEPS:
        b.accept(n)
    cosim.simulate(cosim.scenario("heteroreason", 1), Trace(TraceHeader(), [b.build()]), vcd=path,
                   vcd_detail="token")
    changes = read_vcd(path)
    hand = all_accept_timeline(PROMPT, STEPS, step_ahead=True)
    fpga = Fpga()
    t = hand["kv_ready"]
    for j in range(5):  # the first tokens of step 1, each at its own time
        t += fpga.token(PROMPT + j)
        assert value_at(changes, "kvmu.ahead", int(t * PS_PER_NS) + 10) == PROMPT + j + 1
        assert value_at(changes, "kvmu.ahead", int(t * PS_PER_NS) - 1000) == PROMPT + j
    assert value_at(read_vcd(path), "kvmu.curr", int(t * PS_PER_NS) + 10) == PROMPT + 5  # curr follows y1


def test_step_detail_moves_the_draft_pointer_at_the_step_boundary(all_accept_vcd):
    from handmodel import Fpga

    hand = all_accept_timeline(PROMPT, STEPS, step_ahead=True)
    first_token = hand["kv_ready"] + Fpga().token(PROMPT)
    assert value_at(all_accept_vcd, "kvmu.ahead", int(first_token * PS_PER_NS) + 10) == PROMPT
    step_end = hand["kv_ready"] + Fpga().step(PROMPT, STEPS[0])
    assert value_at(all_accept_vcd, "kvmu.ahead", int(step_end * PS_PER_NS) + 10) == PROMPT + STEPS[0]


def test_vcd_device_power_and_pcie_bytes_in_flight(all_accept_vcd):
    hand = all_accept_timeline(PROMPT, STEPS, step_ahead=True)
    power = drawn_power("u280")
    assert value_at(all_accept_vcd, "draft.power_w", 0) == power.idle_w
    # Drafting step 1 right after the KV lands: the FPGA draws its decode power.
    # (the trace writes watts to the milliwatt)
    assert value_at(all_accept_vcd, "draft.power_w", int(hand["kv_ready"] * PS_PER_NS) + 10**6) == \
        pytest.approx(power.decode_w, abs=5e-4)
    assert value_at(all_accept_vcd, "draft.state", int(hand["kv_ready"] * PS_PER_NS) + 10**6) == 2  # decode
    # The prompt's KV on the target's link right after the migration prefill.
    assert value_at(all_accept_vcd, "pcie.target_bytes_in_flight",
                    int(hand["migrate_end"] * PS_PER_NS) + 1000) == hand["kv_bytes"]
    assert value_at(all_accept_vcd, "run.step", int(hand["verdicts"][-1] * PS_PER_NS)) == len(STEPS)


def test_timeline_slices_never_overlap_and_add_up_to_busy_time(tmp_path):
    trace = cosim.trace.generate("olympiadbench", 15, seed=5)
    path = tmp_path / "run.json"
    result = cosim.simulate(cosim.scenario("heteroreason", 1), trace, timeline=path)
    events = json.loads(path.read_text())["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    assert any(n.startswith("draft (U280)") for n in names.values())
    slices = [e for e in events if e["ph"] == "X"]
    by_track = {}
    for e in slices:
        by_track.setdefault(e["tid"], []).append(e)
    for track in by_track.values():
        track.sort(key=lambda e: e["ts"])
        for a, b in zip(track, track[1:]):
            assert b["ts"] >= a["ts"] + a["dur"] - 1e-6
    tid = {v.split()[0] if "pcie" not in v else v: k for k, v in names.items()}
    for i, row in enumerate(result.per_problem):
        end_us = row["end_s"] * 1e6
        for role in ("draft", "prm", "target"):
            busy_us = sum(e["dur"] for e in by_track.get(tid[role], [])
                          if e["args"]["problem"] == i and e["name"] != "stall" and e["ts"] + e["dur"] <= end_us + 1e-6)
            assert busy_us == pytest.approx(row[f"breakdown_{role}"] * row["latency_s"] * 1e6, rel=1e-9, abs=1e-6)


def integral_j(changes, signal, end_ps):
    """The integral of a power signal in watts from 0 to end_ps, in joules."""
    total, (t0, v0) = 0.0, changes[signal][0]
    for t, v in changes[signal][1:] + [(end_ps, None)]:
        total += v0 * (min(t, end_ps) - t0) * 1e-12
        if t >= end_ps:
            break
        t0, v0 = t, v
    return total


@pytest.fixture(scope="module")
def refined(tmp_path_factory):
    """One problem whose second and fourth steps the target refines (shadow sync),
    simulated with step-detail and token-detail waveforms."""
    b = TrajectoryBuilder("refine", PROMPT)
    b.accept(40).reject(30).refine(60).accept(20).reject(25).refine(45)
    trace = Trace(TraceHeader(), [b.build()])
    folder = tmp_path_factory.mktemp("sync")
    out = {}
    for detail in ("step", "token"):
        # A decoder faster than the target, so shadow-sync passes leave gaps between them.
        scn = cosim.scenario("heteroreason", 1, draft={"overrides": FAST_FPGA})
        result = cosim.simulate(scn, trace, vcd=folder / f"{detail}.vcd", vcd_detail=detail, activities=True)
        out[detail] = (result, read_vcd(folder / f"{detail}.vcd"))
    return out


@pytest.mark.parametrize("detail", ["step", "token"])
def test_vcd_draft_power_integrates_to_the_draft_energy_through_shadow_sync(refined, detail):
    result, changes = refined[detail]
    row = result.per_problem[0]
    end_ps = round(row["end_s"] * 1e12)
    # Work that runs on after the answer (a trailing pass) is outside the problem's energy.
    # Each level is rounded to a milliwatt: at most 0.5 mW of error over the whole problem.
    assert integral_j(changes, "draft.power_w", end_ps) == pytest.approx(row["energy_j_draft"],
                                                                          abs=0.5e-3 * row["latency_s"])


def test_vcd_shadow_sync_is_one_summary_state_by_step_and_each_pass_by_token(refined):
    result, step = refined["step"]
    _, token = refined["token"]
    syncs = sorted((a for a in result.activities if a.kind == "shadow_sync"), key=lambda a: a.start_ns)
    assert len(syncs) == 60 + 45 - 1 or len(syncs) == 60 + 45  # the last pass may run past the answer
    first, second = syncs[0], syncs[1]
    between = int((first.end_ns + second.start_ns) / 2 * PS_PER_NS)  # the gap between two passes
    inside = int((first.start_ns + first.end_ns) / 2 * PS_PER_NS)
    assert value_at(step, "draft.state", between) == 4 and value_at(step, "draft.state", inside) == 4
    assert value_at(token, "draft.state", inside) == 2 and value_at(token, "draft.state", between) == 0
    # A pass moves the KVMU pointers by one token: by token they climb pass by pass; by
    # step they jump once the known passes are done.
    assert value_at(token, "kvmu.curr", inside) + 1 == value_at(token, "kvmu.curr", between)
    assert value_at(step, "kvmu.curr", between) == value_at(step, "kvmu.curr", inside)
    # The stream's small transfers (one token each) and the 64-byte verdicts and commands show
    # on the links by token only; transfers of whole steps show either way.
    serving = cosim.scenario("heteroreason", 1).serving
    arrival_ps = int(second.start_ns * PS_PER_NS)
    assert any(v == serving.token_bytes and t < arrival_ps for t, v in token["pcie.draft_bytes_in_flight"])
    for detail, changes in (("token", token), ("step", step)):
        sizes = {v for link in ("draft", "prm") for _, v in changes[f"pcie.{link}_bytes_in_flight"]}
        assert (serving.control_bytes in sizes) == (detail == "token")
        assert (serving.token_bytes in sizes) == (detail == "token")
        assert 40 * serving.token_bytes in sizes  # the first drafted step on its way to the PRM


SCRIPTS = ["accept", "refine", "backtrack", "mixed"]


@pytest.mark.parametrize("name", SCRIPTS)
def test_trajectory_scripts_print_the_steps_and_write_a_vcd(tmp_path, name):
    script = Path(__file__).parent.parent / "scenarios" / f"trajectory_{name}.py"
    vcd = tmp_path / f"{name}.vcd"
    proc = subprocess.run([sys.executable, str(script), "--vcd", str(vcd)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "kvmu" in proc.stdout and "verify" in proc.stdout and "latency" in proc.stdout
    assert vcd.exists() and "kvmu.valid" in read_vcd(vcd)
