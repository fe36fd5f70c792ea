//! The core's clock on a JS thread: monotonic time from a per-thread origin, wall time from the
//! system clock.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::core::seam::Clock;

#[derive(Clone)]
pub struct HostClock {
    origin: Instant,
}

impl HostClock {
    pub fn new() -> Self {
        Self { origin: Instant::now() }
    }
}

impl Clock for HostClock {
    fn mono_ns(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    fn wall_ms(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0)
    }
}
