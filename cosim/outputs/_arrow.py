"""Results as Arrow tables: columns with declared types, written as CSV or Parquet by
pyarrow, each file whole or not at all; pandas on request."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from ._atomic import write_atomically
from ..errors import ConfigError


def column(values: Any, kind: Any = None) -> Any:
    """An Arrow array; values that mix numbers and text (swept quantities) become text."""
    import pyarrow as pa  # lazy: pyarrow, loaded only when a table is written or read

    if kind is not None:
        return pa.array(values, type=kind)
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([None if v is None else str(v) for v in values], type=pa.string())


def to_pandas(table: Any) -> Any:
    try:
        import pandas  # noqa: F401 - lazy: pandas, optional, for to_pandas only
    except ImportError:
        raise ConfigError("to_pandas() needs pandas: pip install pandas") from None
    return table.to_pandas()


def csv_text(table: Any) -> str:
    """CSV quoted only where a value needs it (the header too, which pyarrow would always quote)."""
    import pyarrow.csv as pacsv  # lazy: pyarrow, loaded only when a table is written or read

    header = io.StringIO()
    csv.writer(header, lineterminator="\n").writerow(table.column_names)
    body = io.BytesIO()
    pacsv.write_csv(table, body, pacsv.WriteOptions(include_header=False, quoting_style="needed"))
    return header.getvalue() + body.getvalue().decode("utf-8")


def write_csv(table: Any, path: Path) -> Path:
    return write_atomically(path, csv_text(table))


def write_parquet(table: Any, path: Path) -> Path:
    import pyarrow.parquet as pq  # lazy: pyarrow, loaded only when a table is written or read

    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return write_atomically(path, buffer.getvalue())
