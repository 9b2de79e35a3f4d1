"""Where the installed package keeps the models as a C++ library (docs/cpp_library.md):
the shared library, its headers under include/heteroreason/ and its CMake package, laid out
as a `cmake --install` prefix, for a C++ project to find with CMAKE_PREFIX_PATH."""
from __future__ import annotations

import importlib.util
from pathlib import Path

from .errors import ConfigError


def cmake_prefix() -> Path:
    """The folder to put on CMAKE_PREFIX_PATH so that `find_package(heteroreason_models)`
    finds the library this package was built with:

        cmake -S app -B build -DCMAKE_PREFIX_PATH="$(python -c 'import cosim; print(cosim.cmake_prefix())')"

    ConfigError if this install carries no C++ library (built with COSIM_CPP_LIBRARY off)."""
    # The extension sits where the build installed the package's compiled files (site-packages
    # for a wheel or an editable install, whose Python sources stay in the source tree); the
    # library was installed beside it. Finding its spec does not load it.
    spec = importlib.util.find_spec("cosim._native")
    if spec is None or spec.origin is None:
        raise ConfigError("cosim.cmake_prefix: this install has no compiled part (cosim._native)")
    prefix = Path(spec.origin).resolve().parent / "_cpp"
    if not (prefix / "lib" / "cmake" / "heteroreason_models" / "heteroreason_modelsConfig.cmake").is_file():
        raise ConfigError(f"cosim.cmake_prefix: no C++ library installed in {prefix} "
                          "(the package was built with COSIM_CPP_LIBRARY off)")
    return prefix
