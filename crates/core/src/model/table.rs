//! TOML tables as the loader layers them: a variant over the base, a preset under the user's keys.

use toml::{Table, Value};

/// Deep-merges `over` into `base`: tables merge key by key, anything else replaces.
pub fn merge(base: &mut Table, over: Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(Value::Table(b)), Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}
