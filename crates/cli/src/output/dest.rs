//! Where an output path leads (standard output, a file to replace, a FIFO or device to write
//! through), and the checks made on every output before a command runs.

use super::*;
use crate::error::CliError;
use std::io;
use std::path::{Path, PathBuf};

/// Where an output's bytes go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dest {
    Stdout,
    Stderr,
    /// Opened for writing as it is: a FIFO, a character device, `/dev/fd/N`.
    Through(PathBuf),
    /// Replaced atomically; symbolic links are already resolved.
    Replace(PathBuf),
}

/// The longest chain of symbolic links followed (as Linux's `MAXSYMLINKS`).
pub(super) const MAX_LINKS: usize = 40;

pub(super) fn is_fd_path(p: &Path) -> bool {
    let s = p.to_string_lossy();
    if s.starts_with("/dev/fd/") {
        return true;
    }
    // /proc/self/fd/N and /proc/PID/fd/N: magic links that must be opened, never resolved.
    let mut parts = s.strip_prefix("/proc/").unwrap_or("").split('/');
    let who = parts.next().unwrap_or("");
    (who == "self" || who == "thread-self" || who.chars().all(|c| c.is_ascii_digit()))
        && !who.is_empty()
        && parts.next() == Some("fd")
        && parts.next().is_some_and(|n| !n.is_empty())
}

pub(super) fn stdio_alias(p: &Path) -> Option<Dest> {
    match p.to_str()? {
        "-" | "/dev/stdout" | "/dev/fd/1" | "/proc/self/fd/1" => Some(Dest::Stdout),
        "/dev/stderr" | "/dev/fd/2" | "/proc/self/fd/2" => Some(Dest::Stderr),
        _ => None,
    }
}

/// What kind of thing a path is, for messages.
#[cfg(unix)]
pub(super) fn kind(ft: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_dir() {
        "a directory"
    } else if ft.is_fifo() {
        "a FIFO (named pipe)"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_symlink() {
        "a symbolic link"
    } else {
        "a regular file"
    }
}

#[cfg(not(unix))]
pub(super) fn kind(ft: std::fs::FileType) -> &'static str {
    if ft.is_dir() {
        "a directory"
    } else if ft.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// Where `path` writes to, following symbolic links (without needing their targets to exist).
pub fn resolve(path: &Path) -> Result<Dest, String> {
    if let Some(d) = stdio_alias(path) {
        return Ok(d);
    }
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        if is_fd_path(&p) {
            return Ok(Dest::Through(p));
        }
        let meta = match std::fs::symlink_metadata(&p) {
            Ok(m) => m,
            // Not there yet (or its folder is not one: `check` says so).
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
            {
                return Ok(Dest::Replace(p));
            }
            Err(e) => return Err(format!("cannot inspect {}: {e}", p.display())),
        };
        let ft = meta.file_type();
        if ft.is_symlink() {
            let target = std::fs::read_link(&p)
                .map_err(|e| format!("cannot read the link {}: {e}", p.display()))?;
            p = match p.parent() {
                Some(dir) if target.is_relative() => dir.join(target),
                _ => target,
            };
            if let Some(d) = stdio_alias(&p) {
                return Ok(d);
            }
            continue;
        }
        if ft.is_file() {
            return Ok(Dest::Replace(p));
        }
        if ft.is_dir() {
            return Err(if p == path {
                "is a directory; give a file path".to_string()
            } else {
                format!(
                    "is a link to the directory {}; give a file path",
                    p.display()
                )
            });
        }
        return Ok(Dest::Through(p));
    }
    Err(format!(
        "more than {MAX_LINKS} symbolic links to follow (a loop?)"
    ))
}

/// The folder a replaced file is written in.
pub(super) fn folder(target: &Path) -> &Path {
    match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// What identifies an output's destination, to find two outputs on one path. Character devices
/// (`/dev/null`) may be shared.
pub(super) fn identity(d: &Dest) -> Option<String> {
    match d {
        Dest::Stdout => Some("stdout".into()),
        Dest::Stderr => Some("stderr".into()),
        Dest::Through(p) => {
            #[cfg(unix)]
            {
                use std::os::unix::fs::FileTypeExt;
                if std::fs::metadata(p).is_ok_and(|m| m.file_type().is_char_device()) {
                    return None;
                }
            }
            Some(canonical(p))
        }
        Dest::Replace(p) => Some(canonical(p)),
    }
}

/// The canonical form of a path that may not exist yet (its folder canonicalized).
pub(super) fn canonical(p: &Path) -> String {
    if let Ok(c) = std::fs::canonicalize(p) {
        return c.display().to_string();
    }
    match (std::fs::canonicalize(folder(p)), p.file_name()) {
        (Ok(dir), Some(name)) => dir.join(name).display().to_string(),
        _ => p.display().to_string(),
    }
}

/// Checks, before anything runs, that every output can be written: its folder exists and can be
/// written, it is not a directory, no two outputs share a path, and none is one of `inputs`
/// (`(what, path)`, e.g. the model file). Errors name the flag; they are input errors (exit 2).
pub fn check(outs: &[Out], inputs: &[(&str, &Path)]) -> Result<(), CliError> {
    let bad = |o: &Out, m: String| CliError::Input(format!("{}: {m}", o.name()));
    let mut seen: Vec<(String, &Out)> = Vec::new();
    for (what, p) in inputs {
        note_input(what, p);
    }
    for o in outs {
        let dest = resolve(o.path).map_err(|m| bad(o, m))?;
        match &dest {
            Dest::Stdout | Dest::Stderr => {}
            Dest::Through(p) => {
                if let Some(why) = unwritable_kind(p) {
                    return Err(bad(o, why));
                }
                writable(p).map_err(|e| bad(o, format!("cannot write: {e}")))?
            }
            Dest::Replace(target) => {
                let dir = folder(target);
                match std::fs::metadata(dir) {
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {
                        return Err(bad(
                            o,
                            format!("the folder {} does not exist", dir.display()),
                        ));
                    }
                    Err(e) => {
                        return Err(bad(
                            o,
                            format!("cannot use the folder {}: {e}", dir.display()),
                        ));
                    }
                    Ok(m) if !m.is_dir() => {
                        return Err(bad(
                            o,
                            format!("{} is {}, not a folder", dir.display(), kind(m.file_type())),
                        ));
                    }
                    Ok(_) => {}
                }
                // The honest test of a folder: make (and drop) a temporary file in it.
                tempfile::Builder::new()
                    .prefix(".retrystorm-probe-")
                    .tempfile_in(dir)
                    .map_err(|e| {
                        bad(
                            o,
                            format!(
                                "cannot write in the folder {}: {}",
                                dir.display(),
                                without_path(&e)
                            ),
                        )
                    })?;
            }
        }
        refuse_input(o, &dest)?;
        let Some(id) = identity(&dest) else {
            continue;
        };
        if let Some((_, first)) = seen.iter().find(|(s, _)| *s == id) {
            let m = if matches!(dest, Dest::Stdout | Dest::Stderr) {
                format!(
                    "{} also writes to {id}; at most one output can go to {id}",
                    first.name()
                )
            } else {
                format!(
                    "{} writes to the same file; give each output its own path",
                    first.name()
                )
            };
            return Err(bad(o, m));
        }
        seen.push((id, o));
    }
    Ok(())
}

/// Why a special file cannot take an output: a socket is opened by connecting, not by name.
pub(super) fn unwritable_kind(p: &Path) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if std::fs::metadata(p).is_ok_and(|m| m.file_type().is_socket()) {
            return Some(
                "is a socket, which cannot be opened as a file; give a file, a FIFO or a device"
                    .into(),
            );
        }
    }
    let _ = p;
    None
}

#[cfg(unix)]
pub(super) fn writable(p: &Path) -> io::Result<()> {
    rustix::fs::access(p, rustix::fs::Access::WRITE_OK).map_err(io::Error::from)
}

#[cfg(not(unix))]
pub(super) fn writable(p: &Path) -> io::Result<()> {
    std::fs::metadata(p).map(|_| ())
}

/// An I/O error without the path `tempfile` appends to it (the probe's own name, which the user
/// never gave): "Permission denied (os error 13)".
pub(super) fn without_path(e: &std::io::Error) -> String {
    // tempfile wraps the system's error with the path ("{error} at path {path}"); its source
    // is the system's error, when the wrapper gives it.
    let inner = e
        .get_ref()
        .and_then(|r| r.source())
        .and_then(|s| s.downcast_ref::<std::io::Error>());
    if let Some(code) = inner.and_then(|i| i.raw_os_error()).or(e.raw_os_error()) {
        return std::io::Error::from_raw_os_error(code).to_string();
    }
    let text = e.to_string();
    match text.split_once(" at path ") {
        Some((err, _)) => err.to_string(),
        None => text,
    }
}
