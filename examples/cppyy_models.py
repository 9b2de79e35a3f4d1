"""The installed C++ models from Python through cppyy, as a pysystemc user loads them.

    python examples/cppyy_models.py PREFIX     # PREFIX: where `cmake --install` put the library

It loads the library and SystemC, includes the headers, builds an HBM and a host DMA engine
bound to a PCIe link (two SystemC modules), posts two transfers and runs the kernel to the
second one's end.
No sc_main: Python drives the kernel, so libheteroreason_embed is loaded first (Debian's
libsystemc.so needs an sc_main to load). cppyy's interpreter is C++20 and Debian's SystemC
is C++17: SC_CPLUSPLUS tells the SystemC headers which library version to expect.
"""

from __future__ import annotations

import ctypes
import os
import sys


def load(prefix: str):
    import cppyy

    mode = os.RTLD_GLOBAL | os.RTLD_NOW
    lib = os.path.join(prefix, "lib")
    ctypes.CDLL(os.path.join(lib, "libheteroreason_embed.so"), mode=mode)
    ctypes.CDLL(os.path.join(lib, "libheteroreason_models.so"), mode=mode)  # brings libsystemc.so
    cppyy.cppdef("#define SC_CPLUSPLUS 201703L")
    cppyy.add_include_path(os.path.join(prefix, "include"))
    cppyy.include("systemc")
    for header in ("hbm.hpp", "pcie_link.hpp", "host_dma.hpp"):
        cppyy.include(f"heteroreason/{header}")
    return cppyy.gbl


def drive(gbl) -> dict[str, float]:
    """Runs the models on the kernel loaded in this process, printing what they do; returns
    the HBM stream's time and the two transfers' ends in ns."""
    cosim, sc = gbl.cosim, gbl.sc_core

    hbm_params = cosim.HbmParams()
    hbm_params.capacity_bytes = 8 * 2**30
    hbm_params.pseudo_channels = 32  # the U280's (AMD UG1393)
    hbm_params.channel_bandwidth_gbps = 14.375
    hbm_params.efficiency = 0.5
    hbm = cosim.Hbm("u280.hbm", hbm_params)
    hbm_ns = hbm.stream_ns(2300.0)
    print(f"hbm: 2300 bytes stream in {hbm_ns:.1f} ns")  # 32 x 14.375 x 0.5 = 230 B/ns

    link_params = cosim.PcieLinkParams()
    link_params.bandwidth_gbps = 16.0
    link_params.efficiency = 0.75  # 12 bytes per ns
    link_params.latency_ns = 1000.0
    link = cosim.PcieLink(sc.sc_module_name("link"), link_params)
    dma = cosim.HostDma(sc.sc_module_name("dma"))
    dma.socket.bind(link.socket)
    sc.sc_start(sc.SC_ZERO_TIME)  # elaborate
    first = dma.post(cosim.LinkDirection.host_to_device, 1200)
    second = dma.post(cosim.LinkDirection.host_to_device, 1200)  # waits for the first
    sc.sc_start(second)  # the kernel runs to the second one's end
    print(f"pcie: transfers of 1200 bytes end at {first.to_seconds() * 1e9:.1f} and {second.to_seconds() * 1e9:.1f} ns")
    print(f"kernel time: {sc.sc_time_stamp().to_seconds() * 1e9:.1f} ns")
    print(f"pcie: {link.transfers(cosim.LinkDirection.host_to_device)} transfers, "
          f"{link.bytes(cosim.LinkDirection.host_to_device)} bytes towards the device")
    return {"hbm_ns": hbm_ns, "first_ns": first.to_seconds() * 1e9, "second_ns": second.to_seconds() * 1e9}


def main(prefix: str) -> None:
    drive(load(prefix))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python examples/cppyy_models.py PREFIX")
    main(sys.argv[1])
