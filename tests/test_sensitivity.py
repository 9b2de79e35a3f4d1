"""Sensitivity analysis: the ranking of a function whose dependence on its factors is known
(through the same analysis code the command runs), the command end to end on a real
scenario whose figure depends on two parameters in a known direction, factors shared by
roles and the baseline, determinism, the journal, and bad input."""

import json

import pytest

import cosim
from cosim.errors import ConfigError
from cosim.uncertainty._analysis import analyse
from cosim.uncertainty._factors import Factor
from conftest import run_cli

SCN = "heteroreason-u280-200"


def _known(points):
    """y = 4a + b^2, c plays no part. Var(4a) = 16/12 and Var(b^2) = 1/5 - 1/9 on [0, 1], so
    the total-order indices are 0.9375, 0.0625 and 0; Morris's mu* is 4 for a (linear)."""
    return [4 * p["a"] + p["b"] ** 2 + 0 * p["c"] for p in points]


FACTORS = [Factor(n, 0.0, 1.0, 0.5, "given") for n in ("a", "b", "c")]


def test_sobol_recovers_the_known_ranking_and_indices():
    out = analyse("y", FACTORS, _known, "sobol", 512, seed=5)
    assert [r.name for r in out.ranking] == ["a", "b", "c"]
    st = {r.name: r for r in out.ranking}
    assert st["a"].index == pytest.approx(0.9375, abs=0.03)
    assert st["b"].index == pytest.approx(0.0625, abs=0.01)
    assert st["c"].index == 0.0
    # One at a time: a from 0 to 1 moves y from 0 + 0.25 to 4 + 0.25.
    assert (st["a"].low_value, st["a"].high_value) == pytest.approx((0.25, 4.25))
    assert out.nominal == pytest.approx(2.25)
    assert out.points == 512 * (3 + 2) + 1 + 2 * 3


def test_morris_recovers_the_known_ranking():
    out = analyse("y", FACTORS, _known, "morris", 20, seed=5)
    assert [r.name for r in out.ranking] == ["a", "b", "c"]
    mu = {r.name: r.index for r in out.ranking}
    assert mu["a"] == pytest.approx(4.0) and mu["c"] == 0.0
    assert 0.5 < mu["b"] < 1.5  # |d(b^2)/db| averages 1 over [0, 1]


def test_the_analysis_is_deterministic_for_a_seed():
    a = analyse("y", FACTORS, _known, "morris", 8, seed=2)
    b = analyse("y", FACTORS, _known, "morris", 8, seed=2)
    assert a.ranking == b.ranking and a.band == b.band
    seen = []
    analyse("y", FACTORS, lambda pts: seen.append(pts) or _known(pts), "morris", 8, seed=3)
    again = []
    analyse("y", FACTORS, lambda pts: again.append(pts) or _known(pts), "morris", 8, seed=4)
    assert seen != again


@pytest.mark.parametrize("method,samples,message", [
    ("morris", 3, "--samples 3: morris needs at least 4 trajectories"),
    ("sobol", 8, "--samples 8: sobol needs at least 16 base samples"),
    ("sobol", 48, "--samples 48: Sobol sampling takes a power of 2"),
])
def test_too_few_samples_for_the_method_are_named(method, samples, message):
    with pytest.raises(ConfigError, match=message):
        analyse("y", FACTORS, _known, method, samples)


def test_one_factor_is_too_few():
    with pytest.raises(ConfigError, match="at least 2 factors with a range"):
        analyse("y", FACTORS[:1], _known, "morris", 4)


def cli(*args, cwd):
    return run_cli(*args, cwd=cwd, timeout=600)


def test_the_command_ranks_the_fpga_clock_over_the_pcie_bandwidth(tmp_path):
    """The draft decodes on the FPGA at 200 MHz while its PCIe link carries a few kilobytes per
    step: the clock sets the draft's time (slower below 200 MHz, faster above) and the link's
    bandwidth barely shows (the report's sweep: comm share 1e-4)."""
    out = tmp_path / "sens"
    args = [SCN, "--range", "fpga.clock_mhz=150:300", "--range", "pcie.bandwidth_gbps=4:16", "--only",
            "fpga.clock_mhz,pcie.bandwidth_gbps", "--metric", "latency_s", "--problems", "8", "--seed", "1",
            "--method", "sobol", "--samples", "16", "--out", str(out), "--quiet"]
    proc = cli("sensitivity", *args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    result = json.loads((out / "sensitivity.json").read_text())
    names = [r["name"] for r in result["ranking"]]
    assert names == ["fpga.clock_mhz", "pcie.bandwidth_gbps"]
    clock, link = result["ranking"]
    assert clock["ST"] > 0.9 and abs(link["ST"]) < 0.02
    # One at a time, checked against simulations run here.
    trace = cosim.trace.generate("math500", 8, seed=1).in_memory()
    scn = cosim.load_scenario(SCN)
    for end, value in (("at_low", 150), ("at_high", 300)):
        direct = cosim.simulate(scn.with_value("fpga.clock_mhz", value), trace).summary["latency_s"]
        assert clock[end] == pytest.approx(direct, rel=1e-12)
    assert clock["at_low"] > result["nominal"] > clock["at_high"]
    assert result["nominal"] == pytest.approx(cosim.simulate(scn, trace).summary["latency_s"], rel=1e-12)
    assert result["band"][0] <= result["nominal"] <= result["band"][1]
    assert (out / "tornado.png").stat().st_size > 10_000
    assert "fpga.clock_mhz" in proc.stdout.splitlines()[4 + 1]  # rank 1 of the printed table
    # A rerun finds every point in the journal and gives the same answer.
    lines = (out / "points.jsonl").read_text().count("\n")
    again = cli("sensitivity", *args, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (out / "points.jsonl").read_text().count("\n") == lines
    assert json.loads((out / "sensitivity.json").read_text()) == result


def test_a_files_value_is_one_factor_across_roles_and_the_baseline(tmp_path):
    """The RTX 3090's request overhead is the PRM's, the target's, and every role's of the
    baseline: a speedup point sets it on all of them."""
    from cosim.uncertainty._sensitivity import sensitivity

    out = sensitivity(cosim.load_scenario(SCN), "speedup", problems=6, seed=2, method="morris", samples=4,
                      ranges=["fpga.clock_mhz=150:300"], only=["rtx3090:gpu.request_overhead_ns,fpga.clock_mhz"])
    overhead = next(r for r in out.ranking if r.name == "rtx3090:gpu.request_overhead_ns")
    trace = cosim.trace.generate("math500", 6, seed=2).in_memory()
    for value, found in ((15e6, overhead.low_value), (50e6, overhead.high_value)):
        fast = cosim.load_scenario(SCN)
        base = cosim.load_scenario("gpu-baseline")
        for role in ("prm", "target"):
            fast = fast.with_value(f"{role}.device.gpu.request_overhead_ns", value)
        for role in ("draft", "prm", "target"):
            base = base.with_value(f"{role}.device.gpu.request_overhead_ns", value)
        expected = cosim.simulate(base, trace).summary["latency_s"] / cosim.simulate(fast, trace).summary["latency_s"]
        assert found == pytest.approx(expected, rel=1e-12)
    # The baseline pays the overhead on its draft GPU's requests too, the FPGA draft does not:
    # the speedup rises with it.
    assert overhead.low_value < out.nominal < overhead.high_value


def test_a_profile_factor_draws_the_problems_again():
    from cosim.uncertainty._sensitivity import sensitivity

    out = sensitivity(cosim.load_scenario(SCN), "accuracy", problems=40, seed=3, method="morris", samples=4,
                      only=["math500:clean_chain_accuracy,math500:bad_step_penalty,u280:accelerator.macs_per_cycle"])
    by_name = {r.name: r for r in out.ranking}
    assert by_name["u280:accelerator.macs_per_cycle"].index == 0.0  # hardware does not change answers
    clean = by_name["math500:clean_chain_accuracy"]
    # Labels are drawn from the probability a right answer has (one uniform per problem, the same
    # at every point): a higher clean-chain accuracy can only turn wrong answers right.
    assert clean.low_value <= out.nominal <= clean.high_value and clean.low_value < clean.high_value
    assert out.ranking[-1].name == "u280:accelerator.macs_per_cycle"


@pytest.mark.parametrize("args,message", [
    (["--metric", "latency"], "--metric latency: not a metric; one of latency_s"),
    (["--range", "fpga.clok_mhz=150:300"], "--range fpga.clok_mhz: names no parameter of heteroreason-u280-200"),
    (["--range", "fpga.clock_mhz=250:300"], "--range fpga.clock_mhz: [250, 300] does not contain the value 200"),
    (["--range", "fpga.clock_mhz=300:150"], "--range fpga.clock_mhz: [300, 150] is reversed or one value"),
    (["--range", "fpga.clock_mhz=nan:300"], "--range fpga.clock_mhz: the ends must be finite numbers, got 'nan'"),
    (["--range", "fpga.clock_mhz=150"], "--range 'fpga.clock_mhz=150': write NAME=LOW:HIGH"),
    (["--range", "rtx3090:gpu.memory_efficiency=0.5:1.2"], "1.2 must be in (0, 1], as memory_efficiency"),
    (["--only", "nosuch:*"], "--only nosuch:*: matches no factor with a range"),
    (["--method", "sobol", "--samples", "20"], "--samples 20: Sobol sampling takes a power of 2"),
    (["--method", "morris", "--samples", "2"], "--samples 2: morris needs at least 4 trajectories"),
    (["--problems", "1"], "--problems: at least 2"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, message):
    proc = cli("sensitivity", SCN, "--problems", "4", *args, "--out", str(tmp_path / "o"), "--quiet", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o" / "sensitivity.json").exists()


def test_a_nan_range_end_with_a_unit_is_named(tmp_path):
    proc = cli("sensitivity", SCN, "--range", "pcie.latency_ns=nan us:5 us", "--out", str(tmp_path / "o"), "--quiet",
               cwd=tmp_path)
    assert proc.returncode == 2 and "--range pcie.latency_ns: the ends must be finite numbers" in proc.stderr


def test_points_on_ray_give_the_local_answer(tmp_path):
    pytest.importorskip("ray", reason="the Ray executor's test needs the [ray] extra")
    from cosim.uncertainty._sensitivity import sensitivity

    options = dict(problems=5, seed=4, method="morris", samples=4, ranges=["fpga.clock_mhz=150:300"],
                   only=["fpga.clock_mhz,u280:accelerator.macs_per_cycle"])
    local = sensitivity(cosim.load_scenario(SCN), "latency_s", **options)
    on_ray = sensitivity(cosim.load_scenario(SCN), "latency_s", workers=2, executor="ray",
                         out=tmp_path / "ray", **options)
    assert on_ray.ranking == local.ranking and on_ray.band == local.band
    rows = [json.loads(line) for line in (tmp_path / "ray" / "points.jsonl").read_text().splitlines()[1:]]
    assert len(rows) >= 5 and all(r["status"] == "ok" for r in rows)  # the nominal and the four ends at least


def test_morris_with_fewer_than_ten_trajectories_says_why_mu_star_has_no_interval(tmp_path):
    # A bootstrap interval needs ten units at least (docs/metrics.md); four trajectories
    # give mu* without one, and the table says so under its rows.
    args = [SCN, "--range", "fpga.clock_mhz=150:300", "--range", "pcie.bandwidth_gbps=4:16", "--only",
            "fpga.clock_mhz,pcie.bandwidth_gbps", "--metric", "latency_s", "--problems", "2", "--method", "morris",
            "--samples", "4", "--out", str(tmp_path / "sens"), "--quiet"]
    proc = cli("sensitivity", *args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    rows = [line for line in lines if line.split()[:2] in (["1", "fpga.clock_mhz"], ["2", "pcie.bandwidth_gbps"])]
    assert len(rows) == 2 and all(row.split()[3] == "n/a" for row in rows)
    assert ("+/-: n/a (N < 10): 4 trajectories are too few for a bootstrap interval of mu* (docs/metrics.md)"
            in lines)
    ranking = json.loads((tmp_path / "sens" / "sensitivity.json").read_text())["ranking"]
    assert [r["mu_star_conf"] for r in ranking] == [None, None]
