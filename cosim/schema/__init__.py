"""What crosses the boundary between Python and the C++ models, declared once: the
engine's columns, the rows and the run's summary, each device's numbers
(cosim/schema/_columns.py, _rows.py), the toggles, the serving section, the host's
options and the event and decision kinds (_toggles.py), and the cluster's pools and the
batching (_cluster.py); the last two are imported on their own, as they build on
cosim/schema/_declarations.py. The C++ structs and the binding's exports are generated
from these at build time (scripts/gen_native_params.py); the Python field lists and
docs/metrics.md's tables are derived from them. The device and model parameters are
declared in _declarations.py. These declaration modules import nothing but the standard
library and each other, so the build can read them by path. _params.py builds the
configuration classes from the declarations and reads values against them, with units
(_units.py) and the file and line each value came from (_yamlio.py)."""

from ._columns import ENGINE, EngineColumn, engine_columns
from ._rows import COLUMNS, DEVICES, SUMS, TOTALS, Column, DeviceColumn, Sum, Total, row_fields

__all__ = ["COLUMNS", "DEVICES", "ENGINE", "SUMS", "TOTALS", "Column", "DeviceColumn", "EngineColumn", "Sum",
           "Total", "engine_columns", "row_fields"]
