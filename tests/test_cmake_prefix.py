"""The package carries the models as a C++ library under cosim.cmake_prefix(), laid out as a
`cmake --install` prefix (docs/cpp_library.md). scripts/cpp_check.sh builds examples/
against it; this checks the layout find_package relies on, from the source tree's own lists."""
from __future__ import annotations

from pathlib import Path

import cosim

ROOT = Path(__file__).resolve().parent.parent


def test_the_prefix_holds_the_package_config_the_library_and_every_public_header():
    prefix = cosim.cmake_prefix()
    config = prefix / "lib" / "cmake" / "heteroreason_models"
    assert (config / "heteroreason_modelsConfig.cmake").is_file()
    assert (config / "heteroreason_modelsTargets.cmake").is_file()
    assert (prefix / "lib" / "libheteroreason_models.so").is_file()
    # Every header of models/ (the RTL transactor's stay private), flat, plus the generated one.
    models = ROOT / "models"
    public = {p.name for p in models.rglob("*.hpp") if "rtl" not in p.relative_to(models).parts}
    installed = {p.name for p in (prefix / "include" / "heteroreason").glob("*.hpp")}
    assert installed == public | {"cosim_params.hpp"}


def test_the_targets_file_finds_the_headers_relative_to_itself():
    # The exported target names its include folder from the prefix it computes by walking up
    # from its own folder: the wheel's layout must keep include/ beside lib/.
    config = cosim.cmake_prefix() / "lib" / "cmake" / "heteroreason_models"
    text = (config / "heteroreason_modelsTargets.cmake").read_text()
    assert '${_IMPORT_PREFIX}/cosim/_cpp/include' in text
