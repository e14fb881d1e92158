//! TOML tables as the loader layers them: a variant over the base, a preset under the user's keys.

use toml::{Table, Value};

/// Puts each section of `fill` into `scope` under what the user wrote there: a section written
/// as a table is merged over the fill's; one written as anything else is kept, so that serde
/// reports the user's own mistake.
pub fn fill_under(scope: &mut Table, fill: Table) {
    for (section, mut f) in fill {
        match scope.remove(&section) {
            Some(Value::Table(user)) => {
                if let Value::Table(t) = &mut f {
                    merge(t, user);
                }
            }
            Some(other) => f = other,
            None => {}
        }
        scope.insert(section, f);
    }
}

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
