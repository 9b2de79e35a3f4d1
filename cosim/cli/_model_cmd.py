"""`cosim model import CONFIG.json [--name N] [--origin TEXT] [--out F.yaml]`."""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml

from ..config._hf_import import FAMILIES, import_config
from ..schema._params import build
from ..schema._yamlio import locate
from ..config.hardware import ModelConfig
from ..errors import ConfigError
from ..outputs._atomic import write_atomically, writable_file
from ..outputs._check import check_files

EXAMPLE = "cosim model import tests/data/hf_configs/llama-3.1-8b.json --name Llama-3.1-8B --out llama.yaml"


def add_parser(sub: argparse._SubParsersAction) -> None:
    model = sub.add_parser("model", help="model descriptions: import a HuggingFace config.json")
    kinds = model.add_subparsers(dest="model_command", required=True, metavar="MODEL_COMMAND")
    imp = kinds.add_parser(
        "import", help=f"write a model YAML from a HuggingFace config.json ({', '.join(FAMILIES)})",
        description="Writes a model YAML from a HuggingFace config.json: layers, widths, heads, vocabulary, "
                    "context window and the stored parameter count worked out from the shapes, each value citing "
                    "the config field it came from; a mixture-of-experts model's experts, routing and shared experts, "
                    "MLA's latent ranks and a quantized checkpoint's bytes per weight too. Other architectures and "
                    "non-causal-LM configs are refused.",
        epilog=f"Example:\n  {EXAMPLE}", formatter_class=argparse.RawDescriptionHelpFormatter)
    imp.add_argument("config", help="the model's config.json")
    imp.add_argument("--name", help="the model's name (default: the last part of the config's _name_or_path, else its "
                                    "model_type and size, e.g. llama-8.03B)")
    imp.add_argument("--origin", help="whose config.json the citations name, e.g. meta-llama/Llama-3.1-8B "
                                      "(default: _name_or_path, else the name)")
    imp.add_argument("--out", help="the YAML to write (default: print it)")
    imp.set_defaults(func=cmd_model_import)


def cmd_model_import(args: argparse.Namespace) -> int:
    config = Path(args.config)
    out = None
    if args.out:  # checked before the config is read
        out, = check_files([("--out", args.out)], {f"the config.json {config} being imported": config})
        writable_file(out, "--out")
    imported = import_config(config, args.name, args.origin)
    text = imported.yaml_text()
    # The text must load as a model description before anything is written.
    body = {k: v for k, v in yaml.safe_load(text).items() if k != "kind"}
    try:
        build(ModelConfig, locate(body, "model", ""))
    except ConfigError as exc:
        raise ConfigError(f"{config}: the model it describes is not usable: {exc}") from None
    if out is None:
        print(text, end="")
    else:
        write_atomically(out, text)
        print(f"wrote {out} ({imported.name}: {imported.values['params'][0] / 1e9:.2f}B parameters)")
    return 0
