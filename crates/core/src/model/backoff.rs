//! The backoff keys `[retry]` (also `[tier.retry]`) and `[[layer]]` share: one struct,
//! [`BackoffSpec`], written flat among each section's own keys (`[retry]\nbase = "10ms"`, not
//! `[retry.backoff]`).
//!
//! serde's `flatten` does not work with `deny_unknown_fields`, so the two sections read their
//! keys with [`Section`]: the same work serde's derive does for a struct with
//! `deny_unknown_fields` and `default` (the same messages, the same paths for
//! `serde_path_to_error`; the `expected one of` list is built from the section's key table, in
//! which [`BACKOFF_KEYS`] is one run), with the backoff keys handed to [`BackoffSpec::read`].
//! Serialization and the schema use the derives with `flatten`.

use crate::base::keys::{Key, key};
use crate::base::time::Duration;
use crate::policy::backoff::{Backoff, BackoffKind, CapApplies, Jitter, Spread};
use serde::Serialize;
use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;
use std::marker::PhantomData;

/// How a client waits between attempts: the backoff formula, its jitter and their sizes.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
#[serde(default)]
pub struct BackoffSpec {
    pub backoff: BackoffKind,
    pub jitter: Jitter,
    pub base: Duration,
    pub cap: Duration,
    pub multiplier: f64,
    /// Exponent of the first retry's window: 0 as in the article, 1 as in the AWS blog's simulator.
    pub first_exponent: u32,
    /// `jitter = "proportional"`: the delay is `d × U[1 − r, 1 + r]`, `r` in 0..=1
    /// (cenkalti/backoff's `RandomizationFactor`, gRPC's `jitter`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub randomization_factor: Option<f64>,
    /// `jitter = "additive"`: the delay is `d + U[0, f × d)`, `f` >= 0 (Kubernetes
    /// `wait.Backoff.Jitter`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jitter_factor: Option<f64>,
    /// `jitter = "absolute"`: the delay is `d + U[0, J)` (tenacity's `jitter`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jitter_max: Option<Duration>,
    /// For `proportional`, `additive` and `absolute`: whether `cap` bounds the window
    /// (`before-jitter`, the default) or the jittered delay (`after-jitter`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cap_applies: Option<CapApplies>,
}

/// The backoff keys' rows, in the order `[retry]` and `[[layer]]` list them.
pub(crate) const BACKOFF_KEYS: [Key; 10] = [
    key(
        "backoff",
        "`\"exponential\"`",
        "`immediate` (no delay), `constant` (`base`), `exponential`, `linear` (Polly: `base × (n + \
        1)`), `envoy` (Envoy's jittered doubling in whole ms, `docs/policies.md`), `grpc` (gRPC's \
        connection backoff: `exponential`, but the first delay is `base` with no jitter)",
    ),
    key(
        "jitter",
        "`\"full\"`",
        "`none`, `full`, `equal`, `decorrelated`, `polly` (Polly v8 `UseJitter`: ±25 %, or \
        decorrelated jitter V2 for `exponential`), `proportional` (`d × U[1 − r, 1 + r]`), \
        `additive` (`d + U[0, f × d)`), `absolute` (`d + U[0, J)`)",
    ),
    key("base", "`\"100ms\"`", "first window"),
    key("cap", "`\"20s\"`", "largest window; must be >= `base`"),
    key("multiplier", "`2`", "growth per retry, >= 1"),
    key(
        "first_exponent",
        "`0`",
        "exponent of the first retry's window: 0 as in the article, 1 as in the AWS blog's \
        simulator (first window `2 * base`)",
    ),
    key(
        "randomization_factor",
        "none",
        "`r` of `jitter = \"proportional\"`, in 0..=1 (cenkalti/backoff 0.5, gRPC 0.2); required \
        by it, refused with any other jitter",
    ),
    key(
        "jitter_factor",
        "none",
        "`f` of `jitter = \"additive\"`, >= 0 (Kubernetes client-go 0.1; Spring's `multiplier − \
        1`); required by it, refused with any other jitter",
    ),
    key(
        "jitter_max",
        "none",
        "`J` of `jitter = \"absolute\"`, a duration (tenacity 1 s); required by it, refused with \
        any other jitter",
    ),
    key(
        "cap_applies",
        "`\"before-jitter\"`",
        "for `proportional`, `additive` and `absolute` only: `before-jitter` caps the window and \
        lets the jitter go past `cap` (cenkalti, gRPC, Kubernetes, google-http-java-client), \
        `after-jitter` caps the jittered delay (resilience4j, tenacity, Spring Retry)",
    ),
];

impl Default for BackoffSpec {
    fn default() -> Self {
        BackoffSpec {
            backoff: BackoffKind::Exponential,
            jitter: Jitter::Full,
            base: Duration::from_millis(100),
            cap: Duration::from_secs(20),
            multiplier: 2.0,
            first_exponent: 0,
            randomization_factor: None,
            jitter_factor: None,
            jitter_max: None,
            cap_applies: None,
        }
    }
}

impl BackoffSpec {
    /// The engine's backoff (unset sizes are 0; `cap_applies` defaults to `before-jitter`).
    pub fn backoff(&self) -> Backoff {
        Backoff {
            kind: self.backoff,
            jitter: self.jitter,
            base: self.base,
            cap: self.cap,
            multiplier: self.multiplier,
            first_exponent: self.first_exponent,
            spread: Spread {
                randomization_factor: self.randomization_factor.unwrap_or(0.0),
                jitter_factor: self.jitter_factor.unwrap_or(0.0),
                jitter_max: self.jitter_max.unwrap_or(Duration::ZERO),
                cap_applies: self.cap_applies.unwrap_or_default(),
            },
        }
    }

    /// Reads `key` if it is one of the backoff keys.
    pub(crate) fn read<'de, N: Next<'de>>(
        &mut self,
        key: &str,
        n: &mut N,
    ) -> Result<Found, N::Error> {
        Ok(match key {
            "backoff" => set(n, &mut self.backoff)?,
            "jitter" => set(n, &mut self.jitter)?,
            "base" => set(n, &mut self.base)?,
            "cap" => set(n, &mut self.cap)?,
            "multiplier" => set(n, &mut self.multiplier)?,
            "first_exponent" => set(n, &mut self.first_exponent)?,
            "randomization_factor" => set(n, &mut self.randomization_factor)?,
            "jitter_factor" => set(n, &mut self.jitter_factor)?,
            "jitter_max" => set(n, &mut self.jitter_max)?,
            "cap_applies" => set(n, &mut self.cap_applies)?,
            _ => Found::Unknown,
        })
    }
}

/// What [`Section::read`] did with a key.
pub(crate) enum Found {
    /// Read its value.
    Read,
    /// The array the section was written as has no more elements (serde's derive reads a struct
    /// from an array too, field by field: `[[retry]]` fails on its first field, at `retry[0]`,
    /// which the loader turns into "write `[retry]`").
    End,
    /// Not one of the section's keys.
    Unknown,
}

/// Where a section's values come from: a table's value for the key just read, or an array's
/// next element.
pub(crate) trait Next<'de> {
    type Error: de::Error;
    /// The value as a `T`; none when the array has ended.
    fn value<T: Deserialize<'de>>(&mut self) -> Result<Option<T>, Self::Error>;
}

struct FromMap<'a, A>(&'a mut A);

impl<'de, A: MapAccess<'de>> Next<'de> for FromMap<'_, A> {
    type Error = A::Error;
    fn value<T: Deserialize<'de>>(&mut self) -> Result<Option<T>, A::Error> {
        self.0.next_value().map(Some)
    }
}

struct FromSeq<'a, A>(&'a mut A);

impl<'de, A: SeqAccess<'de>> Next<'de> for FromSeq<'_, A> {
    type Error = A::Error;
    fn value<T: Deserialize<'de>>(&mut self) -> Result<Option<T>, A::Error> {
        self.0.next_element()
    }
}

/// Reads the next value into `slot`.
pub(crate) fn set<'de, N: Next<'de>, T: Deserialize<'de>>(
    n: &mut N,
    slot: &mut T,
) -> Result<Found, N::Error> {
    Ok(match n.value()? {
        Some(v) => {
            *slot = v;
            Found::Read
        }
        None => Found::End,
    })
}

/// A model section read key by key, each key missing from the file keeping its default.
pub(crate) trait Section: Default {
    /// The struct's name in serde's messages (`expected struct Retry`).
    const NAME: &'static str;
    /// Every key, in the order of the section's key table (`expected one of ...`):
    /// `TABLE.names::<{ TABLE.count() }>()`.
    const KEYS: &'static [&'static str];
    /// Reads `key`'s value from `n`.
    fn read<'de, N: Next<'de>>(&mut self, key: &str, n: &mut N) -> Result<Found, N::Error>;
}

/// Deserializes a [`Section`] as serde's derive would with `deny_unknown_fields` and `default`.
pub(crate) fn deserialize_section<'de, D: Deserializer<'de>, T: Section>(
    d: D,
) -> Result<T, D::Error> {
    d.deserialize_struct(T::NAME, T::KEYS, SectionVisitor(PhantomData))
}

struct SectionVisitor<T>(PhantomData<T>);

impl<'de, T: Section> Visitor<'de> for SectionVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "struct {}", T::NAME)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let mut out = T::default();
        while let Some(key) = map.next_key_seed(KnownKey(T::KEYS))? {
            if let Found::Unknown = out.read(&key, &mut FromMap(&mut map))? {
                return Err(de::Error::unknown_field(&key, T::KEYS));
            }
        }
        Ok(out)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<T, A::Error> {
        let mut out = T::default();
        for key in T::KEYS {
            if let Found::End = out.read(key, &mut FromSeq(&mut seq))? {
                break;
            }
        }
        Ok(out)
    }
}

/// A section's key, refused while it is read when it is not one of `KEYS` (as serde's derive
/// does, so that the error's path names the key: `retry.jiter`).
#[derive(Clone, Copy)]
struct KnownKey(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for KnownKey {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        d.deserialize_identifier(self)
    }
}

impl<'de> Visitor<'de> for KnownKey {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("field identifier")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        if self.0.contains(&v) {
            Ok(v.to_string())
        } else {
            Err(E::unknown_field(v, self.0))
        }
    }
}
