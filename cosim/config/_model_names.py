"""The built-in models of each role, by name (cosim/data/models): the trace layer and the
scenarios both name them."""

# Config 1 = 0.5B draft, 7B PRM, 7B target; Config 2 = the same with a 1.5B target.
CONFIG_TARGETS = {1: "qwen2.5-math-7b", 2: "qwen2.5-math-1.5b"}
DRAFT_MODEL = "qwen2.5-0.5b"
PRM_MODEL = "qwen2.5-math-prm-7b"
