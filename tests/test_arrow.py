"""Results as Arrow tables: the same values as the column access, typed, and written by
pyarrow."""

import importlib.util

import numpy as np
import pyarrow as pa
import pytest

import cosim
from cosim import ConfigError
from cosim.result import ROW_FIELDS


@pytest.fixture(scope="module")
def result():
    trace = cosim.trace.generate("gsm8k", 5, seed=2)
    base = cosim.simulate(cosim.scenario("gpu-baseline", 1), trace)
    return cosim.simulate(cosim.scenario("heteroreason", 1), trace, activities=True), base


def test_per_problem_table_holds_the_columns(result):
    res, base = result
    table = res.per_problem.to_arrow()
    assert table.column_names == list(ROW_FIELDS) and table.num_rows == 5
    assert table.schema.field("id").type == pa.string()
    assert table.column("id").to_pylist() == list(res.per_problem.column("id"))
    for name in ("latency_s", "energy_j_draft", "final_tokens", "backtracks_per_problem"):
        assert np.array_equal(table.column(name).to_numpy(), res.per_problem.column(name))
    assert table.column("speedup").null_count == 5  # not known without a baseline
    with_speedup = res.with_baseline(base).per_problem.to_arrow()
    assert with_speedup.column("speedup").null_count == 0
    assert with_speedup.column("speedup").to_pylist() == pytest.approx(
        list(base.per_problem.column("latency_s") / res.per_problem.column("latency_s")))


def test_activities_table_names_devices_and_kinds(result):
    res, _ = result
    table = res.activities.to_arrow()
    assert table.num_rows == len(res.activities)
    assert table.column("device").to_pylist() == list(res.activities.column("device"))
    assert table.column("kind").to_pylist() == list(res.activities.column("kind"))
    assert np.array_equal(table.column("start_ns").to_numpy(), res.activities.column("start_ns"))


def test_sweep_table_types_its_columns(tmp_path):
    scn = cosim.scenario("heteroreason", 1)
    trace = cosim.trace.generate("math500", 3, seed=1)
    table = cosim.sweep(scn, trace, {"fpga.clock_mhz": [200, 0]}, out=tmp_path)
    arrow = table.to_arrow()
    assert arrow.schema.field("status").type == pa.string()
    assert arrow.schema.field("latency_s").type == pa.float64()
    assert arrow.schema.field("final_tokens").type == pa.int64()
    assert arrow.column("latency_s").null_count == 1  # the failed point
    assert arrow.column("fpga.clock_mhz").to_pylist() == [200, 0]
    import pyarrow.parquet as pq

    assert pq.read_table(tmp_path / "sweep.parquet").equals(arrow)


def test_to_pandas_or_a_clear_error(result):
    res, _ = result
    if importlib.util.find_spec("pandas") is None:
        with pytest.raises(ConfigError, match="to_pandas\\(\\) needs pandas"):
            res.per_problem.to_pandas()
    else:
        frame = res.per_problem.to_pandas()
        assert list(frame.columns) == list(ROW_FIELDS) and len(frame) == 5
