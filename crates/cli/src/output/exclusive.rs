//! Outputs that must be new files, claimed (a lock file beside them) before a command runs.

use super::*;
use crate::error::CliError;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};

/// An output that must be a new file, claimed before the command runs by a locked claim file
/// beside it (`.NAME.claim`), so two commands never both write it; [`Claim::write`] then writes
/// a temporary file and renames it onto the path only if nothing is there (whole or not at all).
/// A command killed before it wrote leaves no output, only its claim file, whose lock died with
/// it: the next command takes it over. Dropped unwritten (an error, or nothing to write), the
/// claim file is removed. Standard output, a FIFO or a device is written through, as [`write`]
/// does.
pub struct Claim {
    flag: &'static str,
    path: PathBuf,
    /// The target and this process's claim file, locked while it is ours.
    claimed: Option<(PathBuf, PathBuf, File)>,
}

/// Claims `o` as a new file; `hint` says what to do when it exists ("pass --force to overwrite
/// it, or choose another -o").
pub fn claim(o: Out, hint: &str) -> Result<Claim, CliError> {
    let bad = |m: String| CliError::Input(format!("{}: {m}", o.name()));
    let dest = resolve(o.path).map_err(&bad)?;
    refuse_input(&o, &dest)?;
    let claimed = match dest {
        Dest::Replace(target) => {
            let lock = claim_path(&target);
            let file = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .open(&lock)
                .map_err(|e| bad(format!("cannot create {}: {e}", lock.display())))?;
            // Locked, and still the file at that name (not one a finishing command unlinked).
            if !lock_exclusive(&file) || !same_file(&file, &lock) {
                return Err(bad(
                    "another command is writing this file (it holds its lock); wait for it to finish, or give another path".into(),
                ));
            }
            if std::fs::symlink_metadata(&target).is_ok() {
                let _ = std::fs::remove_file(&lock);
                return Err(bad(format!("the file exists; {hint}")));
            }
            Some((target, lock, file))
        }
        _ => None,
    };
    Ok(Claim {
        flag: o.flag,
        path: o.path.to_path_buf(),
        claimed,
    })
}

/// The claim file of `target`: hidden beside it, in the same folder.
fn claim_path(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    folder(target).join(format!(".{name}.claim"))
}

/// Whether the open file `f` is the one at `path` now.
#[cfg(unix)]
fn same_file(f: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (f.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_: &File, path: &Path) -> bool {
    path.exists()
}

impl Claim {
    /// Writes the claimed output whole: a temporary file renamed onto the path, refused if a
    /// file appeared there since the claim.
    pub fn write(mut self, contents: &str) -> Result<(), CliError> {
        let o = Out::new(self.flag, &self.path);
        let Some((target, lock, _held)) = self.claimed.take() else {
            return write(o, contents);
        };
        let written = replace_new(&target, |f| f.write_all(contents.as_bytes()));
        let _ = std::fs::remove_file(&lock);
        match written {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(CliError::Input(format!(
                "{}: the file appeared while the command ran; nothing was written over it",
                o.name()
            ))),
            r => r.map_err(|e| write_error(&o, &e)),
        }
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if let Some((_, lock, _)) = self.claimed.take() {
            let _ = std::fs::remove_file(lock);
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
