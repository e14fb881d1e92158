//! Distributions of durations: latency, service time, think time.
//!
//! A model file writes a constant as a plain duration (`"10ms"`) and anything else as a call:
//! `"uniform(0ms, 60ms)"`, `"exp(10ms)"` (mean), `"lognormal(10ms, 0.5)"` (mean and sigma of the
//! underlying normal), `"normal(10ms, 2ms)"` (mean and standard deviation, folded at zero:
//! |N(mu, sd)|, the AWS Architecture Blog's network delay). The table form
//! `{ dist = "uniform", min = "0ms", max = "60ms" }` is accepted too.

use crate::base::rng::Stream;
use crate::base::time::Duration;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dist {
    Constant(Duration),
    Uniform {
        min: Duration,
        max: Duration,
    },
    Exponential {
        mean: Duration,
    },
    /// Log-normal with the given mean; `sigma` is the standard deviation of ln(X).
    Lognormal {
        mean: Duration,
        sigma: f64,
    },
    /// |N(mean, sd)|.
    Normal {
        mean: Duration,
        sd: Duration,
    },
}

impl Default for Dist {
    fn default() -> Self {
        Dist::Constant(Duration::ZERO)
    }
}

const FORMS: &str = "a duration (\"10ms\") or one of \"uniform(MIN, MAX)\", \"exp(MEAN)\", \"lognormal(MEAN, SIGMA)\", \"normal(MEAN, SD)\"";

impl Dist {
    /// Draws one value.
    #[inline]
    pub fn sample(&self, s: &mut Stream) -> Duration {
        match *self {
            Dist::Constant(d) => d,
            Dist::Uniform { min, max } => Duration(s.range_u64(min.0, max.0)),
            Dist::Exponential { mean } => Duration::from_nanos_f64(s.exponential(mean.0 as f64)),
            Dist::Lognormal { mean, sigma } => {
                let mu = (mean.0 as f64).ln() - sigma * sigma / 2.0;
                Duration::from_nanos_f64((mu + sigma * s.standard_normal()).exp())
            }
            Dist::Normal { mean, sd } => {
                Duration::from_nanos_f64((mean.0 as f64 + sd.0 as f64 * s.standard_normal()).abs())
            }
        }
    }

    /// True when every draw is zero: the engine skips scheduling such hops.
    pub fn is_zero(&self) -> bool {
        matches!(self, Dist::Constant(d) if d.0 == 0)
    }

    /// The mean in nanoseconds (for the folded normal, the mean of |X|).
    pub fn mean_ns(&self) -> f64 {
        match *self {
            Dist::Constant(d) => d.0 as f64,
            Dist::Uniform { min, max } => (min.0 as f64 + max.0 as f64) / 2.0,
            Dist::Exponential { mean } | Dist::Lognormal { mean, .. } => mean.0 as f64,
            Dist::Normal { mean, sd } => {
                let (m, s) = (mean.0 as f64, sd.0 as f64);
                if s == 0.0 {
                    return m;
                }
                let z = m / s;
                s * (2.0 / std::f64::consts::PI).sqrt() * (-z * z / 2.0).exp()
                    + m * statrs::function::erf::erf(z / std::f64::consts::SQRT_2)
            }
        }
    }

    /// Parses the string form.
    pub fn parse(text: &str) -> Result<Dist, String> {
        let s = text.trim();
        let Some(open) = s.find('(') else {
            return Duration::parse(s)
                .map(Dist::Constant)
                .map_err(|e| format!("{e}; a distribution is {FORMS}"));
        };
        let name = s[..open].trim().to_ascii_lowercase();
        let args = s[open + 1..]
            .strip_suffix(')')
            .ok_or_else(|| format!("missing ')' in {text:?}; a distribution is {FORMS}"))?;
        let args: Vec<&str> = args.split(',').map(str::trim).collect();
        let dur = |i: usize| -> Result<Duration, String> {
            let a = args
                .get(i)
                .ok_or_else(|| format!("{name}(...) needs more arguments in {text:?}"))?;
            Duration::parse(a).map_err(|e| format!("in {text:?}: {e}"))
        };
        let want = |n: usize| -> Result<(), String> {
            if args.len() == n {
                Ok(())
            } else {
                Err(format!(
                    "{name}(...) takes {n} argument(s), got {} in {text:?}",
                    args.len()
                ))
            }
        };
        let d = match name.as_str() {
            "constant" | "const" => {
                want(1)?;
                Dist::Constant(dur(0)?)
            }
            "uniform" => {
                want(2)?;
                let (min, max) = (dur(0)?, dur(1)?);
                if max < min {
                    return Err(format!("uniform(MIN, MAX) needs MIN <= MAX, got {text:?}"));
                }
                Dist::Uniform { min, max }
            }
            "exp" | "exponential" => {
                want(1)?;
                Dist::Exponential { mean: dur(0)? }
            }
            "lognormal" => {
                want(2)?;
                let sigma: f64 = args[1].parse().map_err(|_| {
                    format!(
                        "lognormal(MEAN, SIGMA): SIGMA must be a number, got {:?}",
                        args[1]
                    )
                })?;
                if !sigma.is_finite() || sigma < 0.0 {
                    return Err(format!(
                        "lognormal(MEAN, SIGMA): SIGMA must be finite and >= 0, got {sigma}"
                    ));
                }
                Dist::Lognormal {
                    mean: dur(0)?,
                    sigma,
                }
            }
            "normal" => {
                want(2)?;
                Dist::Normal {
                    mean: dur(0)?,
                    sd: dur(1)?,
                }
            }
            other => {
                return Err(format!(
                    "unknown distribution {other:?}; a distribution is {FORMS}"
                ));
            }
        };
        Ok(d)
    }
}

impl fmt::Display for Dist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dist::Constant(d) => write!(f, "{d}"),
            Dist::Uniform { min, max } => write!(f, "uniform({min}, {max})"),
            Dist::Exponential { mean } => write!(f, "exp({mean})"),
            Dist::Lognormal { mean, sigma } => write!(f, "lognormal({mean}, {sigma})"),
            Dist::Normal { mean, sd } => write!(f, "normal({mean}, {sd})"),
        }
    }
}

impl serde::Serialize for Dist {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> serde::Deserialize<'de> for Dist {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Table {
            dist: String,
            value: Option<Duration>,
            min: Option<Duration>,
            max: Option<Duration>,
            mean: Option<Duration>,
            sd: Option<Duration>,
            sigma: Option<f64>,
        }
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Dist;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(FORMS)
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Dist, E> {
                Dist::parse(s).map_err(E::custom)
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Dist, E> {
                if n == 0 {
                    Ok(Dist::Constant(Duration::ZERO))
                } else {
                    Err(E::custom(format!(
                        "expected {FORMS}, got the bare number {n} (add a unit)"
                    )))
                }
            }
            fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<Dist, E> {
                Err(E::custom(format!(
                    "expected {FORMS}, got the bare number {n} (add a unit)"
                )))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Dist, A::Error> {
                use serde::de::Error;
                let t = <Table as serde::Deserialize>::deserialize(
                    serde::de::value::MapAccessDeserializer::new(map),
                )?;
                let need = |o: Option<Duration>, k: &str| {
                    o.ok_or_else(|| A::Error::custom(format!("dist = {:?} needs `{k}`", t.dist)))
                };
                Ok(match t.dist.as_str() {
                    "constant" => Dist::Constant(need(t.value, "value")?),
                    "uniform" => {
                        let (min, max) = (need(t.min, "min")?, need(t.max, "max")?);
                        if max < min {
                            return Err(A::Error::custom("uniform needs min <= max"));
                        }
                        Dist::Uniform { min, max }
                    }
                    "exp" | "exponential" => Dist::Exponential {
                        mean: need(t.mean, "mean")?,
                    },
                    "lognormal" => {
                        let sigma = t.sigma.ok_or_else(|| {
                            A::Error::custom("dist = \"lognormal\" needs `sigma`")
                        })?;
                        if !sigma.is_finite() || sigma < 0.0 {
                            return Err(A::Error::custom(
                                "lognormal sigma must be finite and >= 0",
                            ));
                        }
                        Dist::Lognormal {
                            mean: need(t.mean, "mean")?,
                            sigma,
                        }
                    }
                    "normal" => Dist::Normal {
                        mean: need(t.mean, "mean")?,
                        sd: need(t.sd, "sd")?,
                    },
                    other => {
                        return Err(A::Error::custom(format!(
                            "unknown dist {other:?}; allowed: constant, uniform, exponential, lognormal, normal"
                        )));
                    }
                })
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::rng::Purpose;

    #[test]
    fn parses_forms() {
        assert_eq!(
            Dist::parse("10ms"),
            Ok(Dist::Constant(Duration::from_millis(10)))
        );
        assert_eq!(
            Dist::parse("uniform(0ms, 60ms)"),
            Ok(Dist::Uniform {
                min: Duration::ZERO,
                max: Duration::from_millis(60)
            })
        );
        assert_eq!(
            Dist::parse("exp(5ms)"),
            Ok(Dist::Exponential {
                mean: Duration::from_millis(5)
            })
        );
        assert!(Dist::parse("uniform(60ms, 0ms)").is_err());
        assert!(Dist::parse("gamma(1ms)").is_err());
        assert!(Dist::parse("lognormal(1ms, -1)").is_err());
        for s in [
            "uniform(1ms, 2ms)",
            "exp(3ms)",
            "lognormal(10ms, 0.5)",
            "normal(10ms, 2ms)",
            "7us",
        ] {
            assert_eq!(Dist::parse(s).unwrap().to_string(), s);
        }
    }

    #[test]
    fn sample_means_match() {
        for d in [
            "uniform(0ms, 60ms)",
            "exp(10ms)",
            "lognormal(10ms, 0.5)",
            "normal(10ms, 2ms)",
            "normal(1ms, 2ms)",
        ] {
            let d = Dist::parse(d).unwrap();
            let mut s = Stream::new(5, 0, Purpose::Service, 0);
            let n = 200_000;
            let mean = (0..n).map(|_| d.sample(&mut s).0 as f64).sum::<f64>() / n as f64;
            assert!(
                (mean / d.mean_ns() - 1.0).abs() < 0.01,
                "{d}: {mean} vs {}",
                d.mean_ns()
            );
        }
    }
}
