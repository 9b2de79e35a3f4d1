"""Recording BRSD runs of real models (optional extra ``record``: torch and
transformers): the trace of each run and a measured latency profile per model,
in the CSV format the GPU proxy reads."""

from ._models import CausalModel, ValueHeadPrm
from ._runner import Recording, final_answer, read_problems, record_brsd

__all__ = ["CausalModel", "Recording", "ValueHeadPrm", "final_answer", "read_problems", "record_brsd"]
