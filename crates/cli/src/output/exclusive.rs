//! Outputs that must be new files, claimed (created exclusively and locked) before a command
//! runs.

use super::*;
use crate::error::CliError;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};

/// An output that must be a new file, claimed before the command runs: created exclusively
/// (`O_EXCL`) and locked, so two commands never both write it; [`Claim::write`] then replaces
/// the placeholder whole. Dropped unwritten (an error, or nothing to write), the placeholder is
/// removed. Standard output, a FIFO or a device is written through, as [`write`] does.
pub struct Claim {
    flag: &'static str,
    path: PathBuf,
    /// The placeholder this process created, locked while it is ours.
    placeholder: Option<(PathBuf, File)>,
}

/// Claims `o` as a new file; `hint` says what to do when it exists ("pass --force to overwrite
/// it, or choose another -o").
pub fn claim(o: Out, hint: &str) -> Result<Claim, CliError> {
    let bad = |m: String| CliError::Input(format!("{}: {m}", o.name()));
    let dest = resolve(o.path).map_err(&bad)?;
    refuse_input(&o, &dest)?;
    let placeholder = match dest {
        Dest::Replace(target) => {
            match OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&target)
            {
                Ok(f) => {
                    lock_exclusive(&f);
                    Some((target, f))
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    let busy = File::open(&target).is_ok_and(|f| !lock_exclusive(&f));
                    return Err(bad(if busy {
                        "another command is writing this file (it holds its lock); wait for it to finish, or give another path".into()
                    } else {
                        format!("the file exists; {hint}")
                    }));
                }
                Err(e) => return Err(bad(format!("cannot create the file: {e}"))),
            }
        }
        _ => None,
    };
    Ok(Claim {
        flag: o.flag,
        path: o.path.to_path_buf(),
        placeholder,
    })
}

impl Claim {
    /// Writes the claimed output whole (the placeholder is replaced at once).
    pub fn write(mut self, contents: &str) -> Result<(), CliError> {
        let o = Out::new(self.flag, &self.path);
        match self.placeholder.take() {
            Some((target, _lock)) => replace(&target, |f| f.write_all(contents.as_bytes()))
                .map_err(|e| {
                    let _ = std::fs::remove_file(&target);
                    write_error(&o, &e)
                }),
            None => write(o, contents),
        }
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if let Some((target, _)) = self.placeholder.take() {
            let _ = std::fs::remove_file(target);
        }
    }
}

/// Takes `f`'s exclusive lock without waiting; false when another process holds it. (Where
/// locks are not supported, true: the exclusive creation still stands.)
#[cfg(unix)]
pub(super) fn lock_exclusive(f: &File) -> bool {
    use rustix::fs::{FlockOperation, flock};
    match flock(f, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => true,
        Err(e) => e != rustix::io::Errno::WOULDBLOCK,
    }
}

#[cfg(not(unix))]
pub(super) fn lock_exclusive(_: &File) -> bool {
    true
}
