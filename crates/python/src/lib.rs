//! The native half of the `retrystorm` Python package: thin calls into `retrystorm_cli::embed`,
//! which runs the CLI's own steps and returns the JSON the CLI writes. The Python half
//! (`python/retrystorm/__init__.py`) turns that JSON into dicts and DataFrames.
//!
//! Every call runs on a thread of its own while the caller waits without the GIL, checking for
//! signals every 50 ms: Ctrl-C raises `KeyboardInterrupt` at once and tells the runs to stop (a
//! sweep takes no new run; the runs of `run`, `compare` and `check` stop at their next progress
//! point, within 65,536 events, as the CLI's do on Ctrl-C).

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use retrystorm_cli::CliError;
use retrystorm_cli::embed::Source;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;

pyo3::create_exception!(
    _native,
    InputError,
    PyValueError,
    "Bad input, as the CLI refuses it with exit 2 (the Python package raises ModelError)."
);

fn to_py(e: CliError) -> PyErr {
    match e {
        CliError::Input(m) => InputError::new_err(m),
        CliError::Output(m) => PyOSError::new_err(m),
        CliError::Failed(m) | CliError::Incomplete(m) | CliError::Missing(m) => {
            PyRuntimeError::new_err(m)
        }
    }
}

/// Runs `f` on its own thread; waits for it with the GIL released, polling for signals.
fn blocking<T: Send + 'static>(
    py: Python<'_>,
    stop: Arc<AtomicBool>,
    f: impl FnOnce() -> Result<T, CliError> + Send + 'static,
) -> PyResult<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    let mut rx = rx;
    loop {
        // The receiver moves into the GIL-free closure and back (a `&Receiver` is not `Send`).
        let (got, back) =
            py.allow_threads(move || (rx.recv_timeout(Duration::from_millis(50)), rx));
        rx = back;
        match got {
            Ok(r) => return r.map_err(to_py),
            Err(RecvTimeoutError::Timeout) => {
                if let Err(e) = py.check_signals() {
                    stop.store(true, Ordering::Relaxed);
                    return Err(e);
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err(PyRuntimeError::new_err(
                    "retrystorm: the run stopped unexpectedly",
                ));
            }
        }
    }
}

fn source(origin: &str, text: Option<String>, flags: &[String]) -> Result<Source, CliError> {
    Source::new(origin, text, flags)
}

/// `load(origin, text, flags)` -> (name, [variant names]); raises InputError.
#[pyfunction]
#[pyo3(signature = (origin, text, flags))]
fn load(origin: &str, text: Option<String>, flags: Vec<String>) -> PyResult<(String, Vec<String>)> {
    let s = source(origin, text, &flags)
        .and_then(|s| s.scenario())
        .map_err(to_py)?;
    Ok((s.name, s.variants.into_iter().map(|m| m.name).collect()))
}

/// What `run MODEL [--variant V] FLAGS --json - --csv -` write: (JSON, CSV).
#[pyfunction]
#[pyo3(signature = (origin, text, flags, variant=None))]
fn run(
    py: Python<'_>,
    origin: String,
    text: Option<String>,
    flags: Vec<String>,
    variant: Option<String>,
) -> PyResult<(String, String)> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    blocking(py, stop, move || {
        source(&origin, text, &flags)?.run_outputs(variant.as_deref(), &flag)
    })
}

/// What `compare MODEL FLAGS --json -` writes.
#[pyfunction]
fn compare(
    py: Python<'_>,
    origin: String,
    text: Option<String>,
    flags: Vec<String>,
) -> PyResult<String> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    blocking(py, stop, move || {
        source(&origin, text, &flags)?.compare_json(&flag)
    })
}

/// The lines of `sweep MODEL FLAGS --vary ... --out FILE` (header first), and whether every run
/// is there.
#[pyfunction]
fn sweep(
    py: Python<'_>,
    origin: String,
    text: Option<String>,
    flags: Vec<String>,
    vary: Vec<String>,
) -> PyResult<(Vec<String>, bool)> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    blocking(py, stop, move || {
        source(&origin, text, &flags)?.sweep_lines(&vary, &flag)
    })
}

/// `check MODEL FLAGS [--expect EXPR]...` as JSON.
#[pyfunction]
fn check(
    py: Python<'_>,
    origin: String,
    text: Option<String>,
    flags: Vec<String>,
    expects: Vec<String>,
) -> PyResult<String> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    blocking(py, stop, move || {
        source(&origin, text, &flags)?.check_json(&expects, &flag)
    })
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("InputError", m.py().get_type::<InputError>())?;
    // The engine's version: what `retrystorm --version` prints and sweep headers record.
    m.add("__version__", retrystorm_cli::embed::VERSION)?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    Ok(())
}
