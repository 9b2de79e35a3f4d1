"""What crosses the boundary between Python and the C++ models, declared once: the
engine's columns, the rows and the run's summary, each device's numbers
(cosim/schema/_columns.py, _rows.py), the toggles, the serving section, the host's
options and the event and decision kinds (_toggles.py), and the cluster's pools and the
batching (_cluster.py); the last two are imported on their own, as they build on
cosim/config/_declarations.py. The C++ structs and the binding's exports are generated
from these at build time (scripts/gen_native_params.py); the Python field lists and
docs/metrics.md's tables are derived from them. The modules import nothing but the
standard library and the declarations, so the build can read them by path."""

from ._columns import ENGINE, EngineColumn, engine_columns
from ._rows import COLUMNS, DEVICES, SUMS, TOTALS, Column, DeviceColumn, Sum, Total, row_fields

__all__ = ["COLUMNS", "DEVICES", "ENGINE", "SUMS", "TOTALS", "Column", "DeviceColumn", "EngineColumn", "Sum",
           "Total", "engine_columns", "row_fields"]
