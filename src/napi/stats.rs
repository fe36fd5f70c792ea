//! `stats()`: the JS object of every core counter. Its fields are generated from the core's one
//! list of counters ([`for_each_counter_set`](crate::for_each_counter_set)), so a counter added
//! to the core is in `stats()` and in `index.d.ts` without another line here.

use napi_derive_ohos::napi;

use crate::core::stats::{Counter, DispatchCounters, StorageCounters};

/// Where each counter set is read from.
pub struct Sources<'a> {
    pub dispatch: &'a DispatchCounters,
    pub storage: &'a StorageCounters,
}

impl AsRef<DispatchCounters> for Sources<'_> {
    fn as_ref(&self) -> &DispatchCounters {
        self.dispatch
    }
}

impl AsRef<StorageCounters> for Sources<'_> {
    fn as_ref(&self) -> &StorageCounters {
        self.storage
    }
}

/// A counter as a JS number (counters never reach 2^53 in practice; saturate rather than wrap).
fn js(c: &Counter) -> i64 {
    i64::try_from(c.get()).unwrap_or(i64::MAX)
}

macro_rules! pipeline_stats {
    ($( $(#[$set_doc:meta])* $set:ident { $( $(#[$doc:meta])* $field:ident, )* } )*) => {
        /// Counters of the pipeline (all threads' dispatchers and the writer together).
        #[napi(object, js_name = "PipelineStats")]
        pub struct BindingPipelineStats {
            $( $( $(#[$doc])* pub $field: i64, )* )*
        }

        impl BindingPipelineStats {
            pub fn read(sources: &Sources<'_>) -> Self {
                $( let $set { $($field),* } = AsRef::<$set>::as_ref(sources); )*
                Self { $( $( $field: js($field), )* )* }
            }
        }
    };
}

crate::for_each_counter_set!(pipeline_stats);
