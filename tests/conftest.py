import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "cosim" / "data" / "scenarios"  # the built-in scenarios


def run_cli(*args, cwd, **kwargs):
    """`cosim` in a child process, from a folder that holds no source tree (so the
    installed package is what runs, whichever way it was installed)."""
    return subprocess.run([sys.executable, "-m", "cosim.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, **kwargs)

# Datasheet figures restated here, independently of the package's YAML, so the
# tests check the shipped data as well as the formulas.
GEN3_RAW_GBPS = 15.75  # 8 GT/s x 16 lanes, 128b/130b, rounded
GEN4_RAW_GBPS = 31.5
U280_HBM_BYTES = 8 * 1024**3
U280_HBM_PEAK_GBPS = 32 * 14.375


def qwen_linear_macs(layers, hidden, heads, kv_heads, head_dim, ffn, head):
    """Weight MACs of one token: q, k, v, o projections, gated MLP, output head."""
    per_layer = hidden * heads * head_dim + 2 * hidden * kv_heads * head_dim + heads * head_dim * hidden
    per_layer += 3 * hidden * ffn
    return layers * per_layer + head


# Qwen2.5-0.5B config: 24 layers, hidden 896, 14/2 heads, head dim 64, FFN 4864, vocab 151936, tied.
DRAFT_MACS = qwen_linear_macs(24, 896, 14, 2, 64, 4864, 896 * 151936)
DRAFT_KV_ELEMENTS = 2 * 24 * 2 * 64
DRAFT_ATTN_MACS_PER_CTX = 2 * 24 * 14 * 64
# Qwen2.5-Math-7B config: 28 layers, hidden 3584, 28/4 heads, head dim 128, FFN 18944, vocab 152064.
TARGET_MACS = qwen_linear_macs(28, 3584, 28, 4, 128, 18944, 3584 * 152064)
TARGET_KV_ELEMENTS = 2 * 28 * 4 * 128
TARGET_ATTN_MACS_PER_CTX = 2 * 28 * 28 * 128


@pytest.fixture
def tmp_yaml(tmp_path):
    def write(name, text):
        path = tmp_path / name
        path.write_text(text)
        return path

    return write
