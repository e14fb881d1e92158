//! The error a semantic check returns: the dotted path of a field and what is allowed. Its own
//! module, so that the model and the policy configurations it holds both use it without
//! importing each other.

/// A semantic error: the dotted field path and what is allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalid {
    pub path: String,
    pub message: String,
}

pub(crate) fn invalid(path: &str, message: impl Into<String>) -> Invalid {
    Invalid {
        path: path.to_string(),
        message: message.into(),
    }
}

pub(crate) fn probability(path: &str, p: f64) -> Result<(), Invalid> {
    if p.is_finite() && (0.0..=1.0).contains(&p) {
        Ok(())
    } else {
        Err(invalid(
            path,
            format!("must be a probability in [0, 1], got {p}"),
        ))
    }
}

/// `x` must be a finite number at least 0.
pub(crate) fn non_negative(path: &str, x: f64) -> Result<(), Invalid> {
    if x.is_finite() && x >= 0.0 {
        Ok(())
    } else {
        Err(invalid(
            path,
            format!("must be a finite number >= 0, got {x}"),
        ))
    }
}

/// `x` must be a finite number above 0.
pub(crate) fn positive(path: &str, x: f64) -> Result<(), Invalid> {
    if x.is_finite() && x > 0.0 {
        Ok(())
    } else {
        Err(invalid(
            path,
            format!("must be a finite number > 0, got {x}"),
        ))
    }
}
