// The HBM: streaming time from pseudo-channels x channel bandwidth x efficiency, and
// capacity by region.
#include <systemc>

#include <heteroreason/errors.hpp>
#include <heteroreason/hbm.hpp>

#include "check.hpp"

int sc_main(int, char*[]) {
    cosim::HbmParams p;
    p.capacity_bytes = 1000.0;
    p.pseudo_channels = 32;
    p.channel_bandwidth_gbps = 14.375;  // the U280's: 460 GB/s peak (AMD UG1393)
    p.efficiency = 0.5;
    cosim::Hbm hbm("test.hbm", p);

    // 460 GB/s x 0.5 = 230 bytes per ns.
    CHECK_NEAR(p.peak_gbps(), 460.0, 1e-12);
    CHECK_NEAR(p.effective_gbps(), 230.0, 1e-12);
    CHECK_NEAR(hbm.stream_ns(2300.0), 10.0, 1e-12);
    CHECK_NEAR(hbm.stream_ns(230e6), 1e6, 1e-6);
    CHECK_NEAR(hbm.stream_ns(0.0), 0.0, 0.0);
    // A negative or not-finite size is refused by name, never a negative or NaN time.
    CHECK_THROWS(cosim::ConfigError, "Hbm::stream_ns: bytes: must be a finite number >= 0, got -100",
                 hbm.stream_ns(-100.0));
    CHECK_THROWS(cosim::ConfigError, "Hbm::stream_ns: bytes", hbm.stream_ns(std::nan("")));
    CHECK_THROWS(cosim::ConfigError, "Hbm::stream_ns: bytes", hbm.stream_ns(HUGE_VAL));

    // Regions share the capacity; a region that does not fit names both sizes.
    hbm.allocate("weights", 600.0);
    hbm.allocate("kv_cache", 300.0);
    CHECK_EQ_NUM(hbm.used_bytes(), 900.0);
    CHECK_EQ_NUM(hbm.free_bytes(), 100.0);
    CHECK_EQ_NUM(hbm.region_bytes("kv_cache"), 300.0);
    CHECK_THROWS(cosim::CapacityError, "test.hbm", hbm.allocate("scratch", 101.0));
    CHECK_EQ_NUM(hbm.used_bytes(), 900.0);  // a refused region takes nothing
    hbm.allocate("scratch", 100.0);
    CHECK_EQ_NUM(hbm.free_bytes(), 0.0);
    // Resizing checks the new size against what the others leave.
    CHECK_THROWS(cosim::CapacityError, "test.hbm", hbm.resize("kv_cache", 301.0));
    hbm.resize("kv_cache", 200.0);
    CHECK_EQ_NUM(hbm.used_bytes(), 900.0);
    CHECK_EQ_NUM(hbm.region_bytes("kv_cache"), 200.0);
    return check_failures();
}
