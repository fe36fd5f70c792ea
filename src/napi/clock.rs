//! The core's clock on a JS thread: the core's [`SystemClock`](crate::core::seam::SystemClock), monotonic time from the
//! pipeline's creation on that thread.

pub use crate::core::seam::SystemClock as HostClock;
