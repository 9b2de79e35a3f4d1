"""What a reader sees in the report's figures: one colour per system in every figure, the
two sweeps of one design with the bandwidth on a log2 axis and paired intervals against
the design as built, paired latency whiskers in the accuracy-latency figure, and its
threshold labels, which never overlap (checked on the drawn figure's geometry)."""

import itertools
import json
import math
import random
from pathlib import Path

import matplotlib
import pytest
from matplotlib.colors import to_rgba

import cosim

from cosim.report import _serving, _sweeps, run_report
from cosim.report._figures import FIGURES, close, draw
from cosim.report._intervals import NEGLIGIBLE
from cosim.report._labels import stack
from cosim.report._plots_accuracy import LABEL_GID

PROBLEMS = 12
SYSTEM_NAMES = ("gpu-baseline", "gpu-stepahead", "heteroreason-u280-200", "heteroreason-u280-300",
                "heteroreason-u280-flexllm", "heteroreason-v80", "heteroreason-nobacktrack", "heteroreason-jetson",
                "heteroreason-vanilla")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    run_report(PROBLEMS, 5, out)
    return json.loads((out / "report.json").read_text()), (out / "report.md").read_text()


def handle_color(handle):
    """The colour a legend entry shows: a bar's face, a line's or an error bar's line."""
    if isinstance(handle, matplotlib.container.BarContainer):
        return to_rgba(handle.patches[0].get_facecolor())
    if isinstance(handle, matplotlib.container.ErrorbarContainer):
        return to_rgba(handle.lines[0].get_color())
    return to_rgba(handle.get_color())


def named_system(label):
    """The system a legend entry names: one of the report's systems written in it, or, for
    a serving curve, the design its cluster runs; None for anything else."""
    if label in _serving.SYSTEMS:
        return _serving.SYSTEMS[label][2]
    found = [s for s in SYSTEM_NAMES if s in label]
    return max(found, key=len) if found else None


def legend_entries(fig):
    entries = []
    for ax in fig.axes:
        entries += zip(*ax.get_legend_handles_labels())
    for legend in fig.legends:
        entries += zip(legend.legend_handles, [t.get_text() for t in legend.get_texts()])
    return entries


def test_every_system_has_one_colour_across_every_figure(report):
    data, _ = report
    seen, others = {}, {}
    for stem in FIGURES:
        fig = draw(data, stem)
        for handle, label in legend_entries(fig):
            system = named_system(label)
            (seen.setdefault(system, {}) if system else others).setdefault(handle_color(handle), set()).add(
                (stem, label))
        close(fig)
    # Every system compared shows up somewhere, in one colour wherever it is.
    assert set(seen) == set(SYSTEM_NAMES)
    for system, colours in seen.items():
        assert len(colours) == 1, (system, colours)
    colours = [next(iter(c)) for c in seen.values()]
    assert len(set(colours)) == len(colours)  # and no two systems share one
    for colour, where in others.items():  # what is no system (served = offered, a swept array) takes none of theirs
        assert colour not in colours, where


def test_both_sweeps_change_one_design_and_the_bandwidth_runs_on_a_log2_axis(report):
    data, _ = report
    assert {sw["system"] for sw in data["sweeps"].values()} == {"heteroreason-u280-200"}
    fig = draw(data, "sweep_pcie_bandwidth")
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.xaxis.get_transform().base == 2
    values = [r["value"] for r in data["sweeps"]["pcie_bandwidth_gbps"]["rows"]]
    assert all(v == 2 ** round(math.log2(v)) for v in values)  # powers of two: evenly spaced on it
    close(fig)
    fig = draw(data, "sweep_fpga_clock")
    assert fig.axes[0].get_xscale() == "linear"
    close(fig)


def test_each_sweep_point_is_compared_with_the_design_as_built_paired(report):
    data, markdown = report
    for sw in data["sweeps"].values():
        ref = sw["reference"]
        assert ref["latency_ratio"] == 1.0
        quiet = []
        for row in sw["rows"]:
            # The ratio of the two means, and an interval narrower than the mean's own: the
            # same problems replayed, what they share cancels.
            assert row["latency_ratio"] == pytest.approx(row["latency_s"] / ref["latency_s"], rel=1e-12)
            low, high = row["intervals"]["latency_ratio"]
            assert low <= row["latency_ratio"] <= high
            own_low, own_high = row["intervals"]["latency_s"]
            assert (high - low) < (own_high - own_low) / row["latency_s"]
            if low <= 1 <= high and row["value"] != ref["value"]:
                quiet.append(row["value"])
        text = _sweeps.verdict(sw)
        assert text in markdown
        if quiet:
            assert "Within noise" in text or "Every point is within noise" in text
        else:
            assert "Every point differs beyond noise" in text


def sweep_of(rows, reference=1.0):
    """A sweep as report.json holds it, of (value, ratio, [low, high]) rows."""
    def row(value, ratio, ends):
        return {"value": value, "status": "ok", "latency_s": 5.0 * ratio, "latency_ratio": ratio,
                "intervals": {"latency_s": [4.0 * ratio, 6.0 * ratio], "latency_ratio": ends}}
    return {"parameter": "pcie.bandwidth_gbps", "reference": row(reference, 1.0, [1.0, 1.0]),
            "rows": [row(*r) for r in rows]}


def test_the_sweep_says_which_points_are_within_noise():
    # Hand-made intervals: 2 and 4 hold a ratio of 1, 0.5 does not.
    text = _sweeps.verdict(sweep_of([(0.5, 1.03, [1.02, 1.04]), (2, 1.004, [0.999, 1.009]),
                                     (4, 0.999, [0.995, 1.001]), (16, 1.0, [1.0, 1.0])], reference=16))
    assert "Within noise (paired 95% interval holds no change) at 2, 4 GB/s" in text
    assert "the largest change is +3.00% at 0.5 GB/s" in text
    assert "negligible" not in text  # 3% is more than the 1% called negligible
    text = _sweeps.verdict(sweep_of([(1, 1.002, [0.998, 1.006]), (2, 1.001, [0.999, 1.003])], reference=16))
    assert "Every point is within noise" in text and "negligible" in text
    text = _sweeps.verdict(sweep_of([(1, 1.2, [1.1, 1.3]), (2, 1.0, [1.0, 1.0])], reference=2))
    assert "Every point differs beyond noise" in text


def test_accuracy_latency_whiskers_are_the_paired_speedup_drawn_on_latency(report):
    data, _ = report
    points = data["threshold_sweep"]["points"]
    fig = draw(data, "accuracy_latency")
    for point in points:
        if point["system"] == "gpu-baseline":
            continue
        base = next(p for p in points if p["system"] == "gpu-baseline" and
                    (p["config"], p["threshold"], p["mode"]) == (point["config"], point["threshold"], point["mode"]))
        assert point["speedup"] == pytest.approx(base["latency_s"] / point["latency_s"], rel=1e-12)
        low, high = point["intervals"]["speedup"]
        # Holding the baseline's latency, the speedup's interval puts this latency between these ends.
        ends = (base["latency_s"] / high, base["latency_s"] / low)
        drawn = [seg for seg in whisker_segments(fig, point["config"]) if
                 seg[0][1] == pytest.approx(100 * point["accuracy"]) and
                 seg[0][0] == pytest.approx(ends[0]) and seg[1][0] == pytest.approx(ends[1])]
        assert drawn, point
        own_low, own_high = point["intervals"]["latency_s"]
        assert ends[1] - ends[0] < own_high - own_low  # paired: narrower than the latency's own
    close(fig)


def whisker_segments(fig, config):
    """The horizontal whiskers drawn in a config's panel: ((x0, y), (x1, y)) in data units."""
    ax = fig.axes[config - 1]
    out = []
    for collection in ax.collections:
        for seg in collection.get_segments():
            if len(seg) == 2 and seg[0][1] == seg[1][1] and seg[0][0] != seg[1][0]:
                out.append((tuple(seg[0]), tuple(seg[1])))
    return out


def test_threshold_labels_never_overlap_and_stay_beside_their_panel(report):
    data, _ = report
    sweep = data["threshold_sweep"]
    fig = draw(data, "accuracy_latency")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    labels = [t for ax in fig.axes for t in ax.texts if t.get_gid() == LABEL_GID]
    # One per threshold, per mode, per config.
    assert len(labels) == len(sweep["thresholds"]) * 2 * 2
    boxes = [t.get_window_extent(renderer) for t in labels]
    for a, b in itertools.combinations(boxes, 2):
        assert a.x1 <= b.x0 or b.x1 <= a.x0 or a.y1 <= b.y0 or b.y1 <= a.y0, (a, b)
    panels = [ax.get_window_extent(renderer) for ax in fig.axes]
    legend = fig.legends[0].get_window_extent(renderer)
    whole = fig.bbox
    for box in boxes:
        assert whole.x0 <= box.x0 and box.x1 <= whole.x1 and whole.y0 <= box.y0 and box.y1 <= whole.y1
        assert not any(box.overlaps(p) for p in panels) and not box.overlaps(legend)
    close(fig)


def test_the_stacking_rule_keeps_labels_apart_in_order():
    rng = random.Random(7)
    for _ in range(200):
        n = rng.randint(1, 12)
        height = rng.uniform(0.01, 0.09)
        wanted = [rng.uniform(-0.2, 1.2) for _ in range(n)]
        placed = stack(wanted, height, 0.0, 1.0)
        order = sorted(range(n), key=lambda i: wanted[i])
        for i, j in zip(order, order[1:]):  # in the order wanted, a label's height apart at least
            assert placed[j] - placed[i] >= height - 1e-12
        if n * height <= 1.0:  # when they fit, inside the column
            assert all(height / 2 - 1e-12 <= p <= 1 - height / 2 + 1e-12 for p in placed)
    # Labels far apart stay where they want to be.
    assert stack([0.2, 0.5, 0.8], 0.05, 0.0, 1.0) == [0.2, 0.5, 0.8]
    # Two that want one place are pushed apart, upward; at the top, back down.
    assert stack([0.5, 0.5], 0.1, 0.0, 1.0) == pytest.approx([0.5, 0.6])
    assert stack([0.99, 0.99], 0.1, 0.0, 1.0) == pytest.approx([0.85, 0.95])


def test_what_the_docs_say_of_the_sweeps_is_what_runs():
    docs = (Path(__file__).resolve().parents[1] / "docs" / "report.md").read_text()
    text = " ".join(docs.split())
    bandwidth = {sw.key: sw.values for sw in _sweeps.SWEEPS}
    assert (f"powers of two from {min(bandwidth['pcie_bandwidth_gbps']):g} to "
            f"{max(bandwidth['pcie_bandwidth_gbps']):g} GB/s") in text
    assert all(v == 2 ** round(math.log2(v)) for v in bandwidth["pcie_bandwidth_gbps"])
    assert f"from {min(bandwidth['fpga_clock_mhz']):g} to {max(bandwidth['fpga_clock_mhz']):g} MHz" in text
    scn = cosim.load_scenario(_sweeps.SYSTEM)
    assert (f"its link's {_sweeps.as_built(scn, 'pcie.bandwidth_gbps'):g} GB/s, its "
            f"{_sweeps.as_built(scn, 'fpga.clock_mhz'):g} MHz clock") in text
    assert f"Both sweeps change one design, {_sweeps.SYSTEM} on {_sweeps.DATASET} (Config {_sweeps.CONFIG})" in text
    assert f"changes under {NEGLIGIBLE:.0%} negligible" in text and f"-{NEGLIGIBLE:.0%} to +{NEGLIGIBLE:.0%}" in text
