"""`cosim model import`: a config.json becomes the model YAML a reader writes by hand;
bad configs get one line naming the file, line and field, and nothing is written."""

import json

import pytest
import yaml

from cosim import ConfigError, hardware, load_model
from cosim.config._hf_import import import_config
from conftest import ROOT, run_cli

CONFIGS = ROOT / "tests" / "data" / "hf_configs"

TINY_LLAMA = {
    "_name_or_path": "someone/tiny-llama",
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 8,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 16,
    "vocab_size": 10,
    "max_position_embeddings": 64,
    "tie_word_embeddings": False,
}

# Worked by hand: head_dim 8 / 4 = 2, so q is 8 wide and k, v are 2 x 2 = 4 wide.
# Per layer: q 8x8 = 64, k 8x4 = 32, v 32, o 64 (attention 192); gate/up/down 3 x 8 x 16 = 384;
# two norms of 8. Layer: 192 + 384 + 16 = 592; 2 layers 1184. Embedding 10 x 8 = 80, final norm 8,
# untied head 80: 80 + 1184 + 8 + 80 = 1352.
TINY_LLAMA_YAML = """\
# Written by `cosim model import` from the config.json of someone/tiny-llama
# (model_type llama, LlamaForCausalLM).
kind: model
name: "tiny-llama"
description: "someone/tiny-llama (llama), from its config.json"
layers: {value: 2, source: "someone/tiny-llama config.json: num_hidden_layers"}
hidden: {value: 8, source: "someone/tiny-llama config.json: hidden_size"}
heads: {value: 4, source: "someone/tiny-llama config.json: num_attention_heads"}
kv_heads: {value: 2, source: "someone/tiny-llama config.json: num_key_value_heads"}
head_dim: {value: 2, source: "someone/tiny-llama config.json: hidden_size / num_attention_heads (8 / 4)"}
ffn: {value: 16, source: "someone/tiny-llama config.json: intermediate_size"}
vocab: {value: 10, source: "someone/tiny-llama config.json: vocab_size"}
params: {value: 1352, source: "someone/tiny-llama config.json: the shapes it gives: embedding 80 + 2 layers x 592 \
(attention 192, gated MLP 384, norms 16) + final norm 8 + output head 80 (tie_word_embeddings false)"}
lm_head: {value: true, source: "someone/tiny-llama config.json: architectures LlamaForCausalLM (an output head onto \
the vocabulary)"}
context_window: {value: 64, source: "someone/tiny-llama config.json: max_position_embeddings"}
"""


def write(tmp_path, data, name="config.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2))
    return path


def test_a_tiny_llama_imports_to_the_yaml_worked_by_hand(tmp_path):
    out = tmp_path / "tiny.yaml"
    result = run_cli("model", "import", write(tmp_path, TINY_LLAMA), "--out", out, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert out.read_text() == TINY_LLAMA_YAML
    model = load_model(out)
    assert (model.name, model.params, model.head_dim, model.context_window) == ("tiny-llama", 1352, 2, 64)


def test_qwen3_with_its_own_head_dim_and_qk_norms_and_tied_embeddings(tmp_path):
    config = dict(TINY_LLAMA, model_type="qwen3", architectures=["Qwen3ForCausalLM"], head_dim=4,
                  tie_word_embeddings=True)
    values = {k: v for k, (v, _) in import_config(write(tmp_path, config)).values.items()}
    # head_dim 4 (given, not 8 / 4): q 4 x 4 = 16 wide, k and v 2 x 4 = 8 wide.
    # Per layer: q 8x16 = 128, k 8x8 = 64, v 64, o 16x8 = 128 (384), q and k norms 4 + 4,
    # MLP 384, norms 16: 792. Two layers 1584, embedding 80 (the head is tied), final norm 8: 1672.
    assert values["head_dim"] == 4
    assert values["params"] == 1672


def test_qwen2_has_qkv_biases_and_mistral_none(tmp_path):
    qwen2 = dict(TINY_LLAMA, model_type="qwen2", architectures=["Qwen2ForCausalLM"])
    mistral = dict(TINY_LLAMA, model_type="mistral", architectures=["MistralForCausalLM"])
    # q, k, v biases: 8 + 4 + 4 = 16 per layer, 32 in all.
    assert import_config(write(tmp_path, qwen2)).values["params"][0] == 1352 + 32
    assert import_config(write(tmp_path, mistral)).values["params"][0] == 1352
    llama_biased = dict(TINY_LLAMA, attention_bias=True, mlp_bias=True)
    # q/k/v/o biases 8 + 4 + 4 + 8 = 24, MLP biases 16 + 16 + 8 = 40: 64 per layer.
    assert import_config(write(tmp_path, llama_biased)).values["params"][0] == 1352 + 2 * 64


def test_without_num_key_value_heads_every_head_has_its_kv(tmp_path):
    config = {k: v for k, v in TINY_LLAMA.items() if k != "num_key_value_heads"}
    imported = import_config(write(tmp_path, config))
    assert imported.values["kv_heads"][0] == 4
    assert "not given" in imported.values["kv_heads"][1]


@pytest.mark.parametrize("shipped,config,origin", [
    ("llama-3.1-8b", "llama-3.1-8b.json", "meta-llama/Llama-3.1-8B"),
    ("qwen2.5-7b-instruct", "qwen2.5-7b-instruct.json", "Qwen/Qwen2.5-7B-Instruct"),
    ("llama-3.2-1b", "llama-3.2-1b.json", "meta-llama/Llama-3.2-1B"),
    ("llama-2-7b", "llama-2-7b.json", "meta-llama/Llama-2-7b-hf"),
    ("qwen2.5-1.5b-instruct", "qwen2.5-1.5b-instruct.json", "Qwen/Qwen2.5-1.5B-Instruct"),
    ("qwen3-8b", "qwen3-8b.json", "Qwen/Qwen3-8B"),
    ("qwen3-32b", "qwen3-32b.json", "Qwen/Qwen3-32B"),
    ("llama-3.1-70b", "llama-3.1-70b.json", "meta-llama/Llama-3.1-70B"),
    ("qwen3-30b-a3b", "qwen3-30b-a3b.json", "Qwen/Qwen3-30B-A3B-Instruct-2507"),
    ("gpt-oss-20b", "gpt-oss-20b.json", "openai/gpt-oss-20b"),
    ("deepseek-v3", "deepseek-v3.json", "deepseek-ai/DeepSeek-V3"),
    ("llama-4-scout-17b-16e", "llama-4-scout-17b-16e.json", "meta-llama/Llama-4-Scout-17B-16E"),
])
def test_the_shipped_models_are_what_the_import_writes(shipped, config, origin):
    imported = import_config(CONFIGS / config, name=load_model(shipped).name, origin=origin)
    assert imported.yaml_text() == hardware.builtin_path("model", shipped).read_text()


TINY_MOE = {**TINY_LLAMA, "_name_or_path": "someone/tiny-moe", "architectures": ["Qwen3MoeForCausalLM"],
            "model_type": "qwen3_moe", "head_dim": 2, "num_experts": 4, "num_experts_per_tok": 2,
            "moe_intermediate_size": 4, "decoder_sparse_step": 1, "mlp_only_layers": [1]}


def test_a_tiny_moe_imports_its_experts_and_counts_them_by_hand(tmp_path):
    # Worked by hand: attention as the tiny llama's, 192, with q/k norms of head_dim 2 each: 196.
    # Layer 0 is MoE: router 8 x 4 = 32, four experts of 3 x 8 x 4 = 96 each: 416. Layer 1 is
    # dense (mlp_only_layers): 3 x 8 x 16 = 384. Norms 16 a layer. Layers: (196 + 16 + 416)
    # + (196 + 16 + 384) = 1224; embedding 80, final norm 8, head 80: 1392.
    imported = import_config(write(tmp_path, TINY_MOE))
    values = {k: v for k, (v, _) in imported.values.items()}
    assert values["params"] == 1392
    assert (values["experts"], values["experts_per_token"], values["expert_ffn"], values["dense_layers"]) == \
        (4, 2, 4, 1)
    assert "shared_expert_ffn" not in values
    model = load_model(write(tmp_path, imported.yaml_text(), "tiny.yaml"))
    assert model.experts == 4 and model.dense_layers == 1


TINY_MLA = {"_name_or_path": "someone/tiny-mla", "architectures": ["DeepseekV3ForCausalLM"],
            "model_type": "deepseek_v3", "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2,
            "num_key_value_heads": 2, "kv_lora_rank": 4, "qk_rope_head_dim": 2, "qk_nope_head_dim": 4,
            "v_head_dim": 4, "intermediate_size": 16, "moe_intermediate_size": 4, "n_routed_experts": 4,
            "n_shared_experts": 1, "num_experts_per_tok": 2, "first_k_dense_replace": 1, "vocab_size": 10,
            "max_position_embeddings": 64, "topk_method": "greedy", "tie_word_embeddings": False}


def test_a_tiny_mla_model_imports_its_latent_and_counts_it_by_hand(tmp_path):
    # Worked by hand: the query in full, 8 x 2 x (4 + 2) = 96; the latent and rotary key
    # 8 x (4 + 2) = 48 and its norm 4; the latent expanded to keys and values 4 x 2 x (4 + 4)
    # = 64; the output 2 x 4 x 8 = 64: attention 276. Layer 0 dense: 3 x 8 x 16 = 384. Layer 1
    # MoE: router 32 (no score bias with greedy routing), four experts of 96, one shared of
    # 96: 512. Layers (276 + 16 + 384) + (276 + 16 + 512) = 1480; with 80 + 8 + 80: 1648.
    imported = import_config(write(tmp_path, TINY_MLA))
    values = {k: v for k, (v, _) in imported.values.items()}
    assert values["params"] == 1648
    assert (values["kv_lora_rank"], values["rope_head_dim"], values["v_head_dim"], values["q_lora_rank"]) == \
        (4, 2, 4, 0)
    assert (values["shared_expert_ffn"], values["dense_layers"], values["head_dim"]) == (4, 1, 4)
    model = load_model(write(tmp_path, imported.yaml_text(), "tiny.yaml"))
    # Two layers of the latent and the rotary key, two bytes each: 2 x (4 + 2) x 2 = 24.
    assert hardware.kv_bytes_per_token(model, 2) == 24


def test_printing_instead_of_writing(tmp_path):
    result = run_cli("model", "import", write(tmp_path, TINY_LLAMA), "--name", "mine", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert yaml.safe_load(result.stdout)["name"] == "mine"


BAD = [
    # (config text or dict, expected message part: the file's line and the field)
    ('{"model_type": "llama",\n  "hidden_size": 8,,\n}', r"config\.json:2: not valid JSON"),
    ({k: v for k, v in TINY_LLAMA.items() if k != "intermediate_size"}, r"config\.json: intermediate_size: missing"),
    (json.dumps(TINY_LLAMA, indent=2).replace('"hidden_size": 8', '"hidden_size": NaN'),
     r"config\.json:\d+: not a finite number: NaN"),
    (dict(TINY_LLAMA, hidden_size=8.5), r"config\.json:\d+: hidden_size: must be a whole number, got 8\.5"),
    (dict(TINY_LLAMA, num_hidden_layers=True), r"num_hidden_layers: must be a whole number, got True"),
    (dict(TINY_LLAMA, vocab_size=-3), r"vocab_size: must be >= 1, got -3"),
    (dict(TINY_LLAMA, num_key_value_heads=3), r"num_key_value_heads: 3 does not divide num_attention_heads \(4\)"),
    (dict(TINY_LLAMA, model_type="gpt2", architectures=["GPT2LMHeadModel"]),
     r"config\.json:\d+: model_type: 'gpt2': unsupported architecture"),
    (dict(TINY_LLAMA, model_type="mixtral", num_local_experts=8, num_experts_per_tok=2),
     r"config\.json:\d+: num_local_experts: a mixture-of-experts model"),
    (dict(TINY_LLAMA, model_type="qwen3_moe", architectures=["Qwen3MoeForCausalLM"]),
     r"config\.json: num_experts: missing"),
    (dict(TINY_LLAMA, model_type="qwen3_moe", num_experts=4, num_experts_per_tok=8, moe_intermediate_size=4),
     r"config\.json:\d+: num_experts_per_tok: 8 experts a token, but only 4 experts"),
    (dict(TINY_LLAMA, model_type="gpt_oss", num_local_experts=4, num_experts_per_tok=2,
          quantization_config={"quant_method": "awq"}), r"config\.json:\d+: quantization_config: quant_method 'awq'"),
    (dict(TINY_LLAMA, model_type="llama4", architectures=["Llama4ForConditionalGeneration"]),
     r"config\.json: text_config: a Llama 4 config holds its language model there"),
    (dict(TINY_LLAMA, architectures=["Qwen2ForProcessRewardModel"]), r"architectures: .*only causal LMs"),
    ('[1, 2]', r"config\.json:1: a config\.json is a JSON object"),
    (dict(TINY_LLAMA, tie_word_embeddings="no"), r"tie_word_embeddings: must be true or false"),
    ('{"model_type": "llama", "vocab_size": ' + "9" * 5000 + "}", r"config\.json: not a usable config\.json"),
]


@pytest.mark.parametrize("config,message", BAD)
def test_bad_configs_are_one_line_naming_file_line_and_field_and_write_nothing(tmp_path, config, message):
    path = write(tmp_path, config)
    with pytest.raises(ConfigError, match=message):
        import_config(path)
    out = tmp_path / "model.yaml"
    out.write_text("kept\n")
    result = run_cli("model", "import", path, "--out", out, cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cosim: error: ") and "Traceback" not in result.stderr
    assert str(path) in lines[0]
    assert out.read_text() == "kept\n"  # the previous file is untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json", "model.yaml"]  # no temporary left


def test_a_model_too_large_for_its_numbers_names_the_config(tmp_path):
    path = write(tmp_path, dict(TINY_LLAMA, vocab_size=2**60))
    result = run_cli("model", "import", path, "--out", tmp_path / "m.yaml", cwd=tmp_path)
    assert result.returncode == 2
    assert f"{path}: the model it describes is not usable" in result.stderr and "out of range" in result.stderr
    assert not (tmp_path / "m.yaml").exists()


@pytest.mark.parametrize("out", ["config.json", "./sub/../config.json", "link.yaml"])
def test_the_config_itself_is_never_the_output(tmp_path, out):
    path = write(tmp_path, TINY_LLAMA)
    (tmp_path / "sub").mkdir()
    (tmp_path / "link.yaml").symlink_to("config.json")
    before = path.read_bytes()
    result = run_cli("model", "import", "config.json", "--out", out, cwd=tmp_path)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert result.stderr.startswith(f"cosim: error: --out {out}: is the same file as the config.json config.json "
                                    f"being imported"), result.stderr
    assert path.read_bytes() == before and (tmp_path / "link.yaml").is_symlink()


def test_a_missing_file_is_named(tmp_path):
    result = run_cli("model", "import", tmp_path / "nope.json", cwd=tmp_path)
    assert result.returncode == 2 and "nope.json: no such file" in result.stderr


def test_the_help_example_runs_as_written(tmp_path):
    from cosim.cli._model_cmd import EXAMPLE

    args = EXAMPLE.split()[1:]
    args[2] = str(ROOT / args[2])  # the example runs from the repository's root
    done = run_cli(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert load_model(tmp_path / "llama.yaml").params == load_model("llama-3.1-8b").params


MODEL_KEYS = {"kind", "name", "description", "layers", "hidden", "heads", "kv_heads", "head_dim", "ffn", "vocab",
              "params", "lm_head", "context_window"}
# Text that would end a comment or a quoted value, start a key, or not be text YAML takes raw:
# YAML's line breaks include U+0085, U+2028 and U+2029.
AWKWARD = ["owner/model\nname: other", "model # not a comment: really", "模型-ünïcødé 😀", "a\u2028layers: 3",
           "nel\x85here", "quote \" and back\\slash", "tab\there", "x\u2029kind: link"]


@pytest.mark.parametrize("text", AWKWARD)
def test_any_name_and_origin_load_back_as_given(tmp_path, text):
    out = tmp_path / "m.yaml"
    done = run_cli("model", "import", write(tmp_path, TINY_LLAMA), "--name", text, "--origin", text, "--out", out,
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    data = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert set(data) == MODEL_KEYS  # no key gained, none lost
    assert data["name"] == text
    assert data["description"] == f"{text} (llama), from its config.json"
    assert data["layers"] == {"value": 2, "source": f"{text} config.json: num_hidden_layers"}
    assert load_model(out).name == text


@pytest.mark.parametrize("text", [t for t in AWKWARD if "/" not in t and "\\" not in t])  # one part of a path
def test_a_config_s_own_name_and_class_load_back_as_given(tmp_path, text):
    config = dict(TINY_LLAMA, _name_or_path=f"someone/{text}", architectures=[f"{text}LlamaForCausalLM"])
    out = tmp_path / "m.yaml"
    done = run_cli("model", "import", write(tmp_path, config), "--out", out, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    data = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert set(data) == MODEL_KEYS
    assert data["name"] == text  # the last part of _name_or_path
    assert data["lm_head"]["source"].startswith(f"someone/{text} config.json: architectures {text}LlamaForCausalLM")
    assert load_model(out).params == 1352  # worked by hand above


@pytest.mark.parametrize("given,name", [
    (None, "llama-1.35K"),  # no _name_or_path: the model_type and the 1,352 parameters worked by hand above
    (".", "llama-1.35K"),
    ("/home/someone/models/My-Model/", "My-Model"),
    ("C:\\models\\Other-Model", "Other-Model"),
    ("owner/Repo-Name", "Repo-Name"),
])
def test_the_default_name_is_the_config_s_own(tmp_path, given, name):
    folder = tmp_path / "hf_configs"  # a folder named for something other than the model
    folder.mkdir()
    config = dict(TINY_LLAMA, _name_or_path=given) if given is not None else \
        {k: v for k, v in TINY_LLAMA.items() if k != "_name_or_path"}
    done = run_cli("model", "import", write(folder, config), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert yaml.safe_load(done.stdout)["name"] == name


def test_a_hub_config_without_its_name_is_named_by_its_type_and_size(tmp_path):
    # Llama-3.1-8B: 8.03B parameters (Meta's model card); its hub config.json carries no _name_or_path.
    done = run_cli("model", "import", CONFIGS / "llama-3.1-8b.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert yaml.safe_load(done.stdout)["name"] == "llama-8.03B"
