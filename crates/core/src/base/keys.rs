//! A model key's one definition: its name, its doc line and what it needs to have an effect.
//!
//! Each section keeps a [`KeyTable`] beside its struct. The loader's key lists (the `expected
//! one of ...` of an unknown key) of the sections read by hand are built from the tables; the
//! breaker's "has no effect" check reads [`Needs::Enabled`], and the one-replica check's keys are
//! tested against [`Needs::Replicas`]; the docs' key tables are written from the tables
//! (`UPDATE_MODEL_KEYS=1 cargo test --test cli model_keys`), and that test fails when the
//! loader, the schema or the docs list a key a table does not, miss one, or word one differently.

/// One key of a model section.
#[derive(Clone, Copy, Debug)]
pub struct Key {
    /// The key as a model file writes it.
    pub name: &'static str,
    /// Its default as the docs show it (`"20s"`, none, "as `[server]`").
    pub default: &'static str,
    /// What it means: the last column of its row in the docs' key table.
    pub doc: &'static str,
    /// What it needs to have an effect.
    pub needs: Needs,
}

/// What a key needs to have an effect: written without it, the key is refused ("has no effect").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    /// Nothing: it always acts.
    Nothing,
    /// Its section's `enabled = true` (`[breaker]`).
    Enabled,
    /// A tier of two replicas or more (the balancer keys of `[server]`).
    Replicas,
}

/// The keys of one section, in the order the loader lists them.
#[derive(Clone, Copy, Debug)]
pub struct KeyTable {
    /// The section as a field path names it (`retry`, `layer`, `breaker`).
    pub section: &'static str,
    /// The schema's name of the section's type (`Retry`, `BreakerConfig`).
    pub schema: &'static str,
    /// Where the docs list the keys: a file and the heading its key table follows.
    pub docs: &'static [(&'static str, &'static str)],
    /// The keys in runs, so that sections share a run (the backoff keys of `[retry]` and
    /// `[[layer]]`).
    pub runs: &'static [&'static [Key]],
    /// Keys the loader replaces before it reads the section (`retry.from`, a file whose keys
    /// are imported in its place): documented and in the schema, not in the loader's list.
    pub expanded: &'static [Key],
}

impl KeyTable {
    /// The keys in order.
    pub fn keys(&self) -> impl Iterator<Item = &'static Key> + use<> {
        self.runs.iter().flat_map(|run| run.iter())
    }

    /// The key called `name`, if the section has it.
    pub fn get(&self, name: &str) -> Option<&'static Key> {
        self.keys().find(|k| k.name == name)
    }

    /// How many keys the loader lists.
    pub const fn count(&self) -> usize {
        let mut n = 0;
        let mut r = 0;
        while r < self.runs.len() {
            n += self.runs[r].len();
            r += 1;
        }
        n
    }

    /// The names in order: `N` is [`KeyTable::count`] (`T.names::<{ T.count() }>()`).
    pub const fn names<const N: usize>(&self) -> [&'static str; N] {
        let mut out = [""; N];
        let mut n = 0;
        let mut r = 0;
        while r < self.runs.len() {
            let mut i = 0;
            while i < self.runs[r].len() {
                out[n] = self.runs[r][i].name;
                n += 1;
                i += 1;
            }
            r += 1;
        }
        assert!(n == N, "N must be the table's length");
        out
    }
}

/// A key that always acts (see [`Key::only_with`] for one that does not).
pub const fn key(name: &'static str, default: &'static str, doc: &'static str) -> Key {
    Key {
        name,
        default,
        doc,
        needs: Needs::Nothing,
    }
}

impl Key {
    /// This key, acting only with `needs`.
    pub const fn only_with(self, needs: Needs) -> Key {
        Key { needs, ..self }
    }
}
