//! Writing an output whole: a temporary file renamed over the target, or written through to
//! standard output, a FIFO or a device; the meaning of a failed write.

use super::*;
use crate::error::CliError;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

/// Says what an I/O error means for a write, naming the output.
pub(super) fn write_error(o: &Out, e: &io::Error) -> CliError {
    let why = match e.kind() {
        io::ErrorKind::StorageFull => format!("the disk is full ({e})"),
        io::ErrorKind::FileTooLarge => format!("the file-size limit was reached ({e})"),
        _ => e.to_string(),
    };
    CliError::Output(format!("{}: cannot write: {why}", o.name()))
}

/// Writes `contents` to an output (see the module docs for what each kind of path does).
pub fn write(o: Out, contents: &str) -> Result<(), CliError> {
    let dest = resolve(o.path).map_err(|m| CliError::Input(format!("{}: {m}", o.name())))?;
    refuse_input(&o, &dest)?;
    match dest {
        Dest::Stdout => to_stdio(&mut io::stdout().lock(), contents.as_bytes()),
        Dest::Stderr => to_stdio(&mut io::stderr().lock(), contents.as_bytes()),
        Dest::Through(p) => open_through(&p)
            .map_err(|e| no_reader(&o, &p, e))?
            .and_then(|mut f| f.write_all(contents.as_bytes()).and_then(|()| f.flush())),
        Dest::Replace(target) => replace(&target, |f| f.write_all(contents.as_bytes())),
    }
    .map_err(|e| write_error(&o, &e))
}

/// Removes the temporary files of `target` that an earlier process left (killed while writing):
/// those whose lock nobody holds; a writer at work holds its temporary file's lock.
pub(super) fn clean_leftovers(target: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(folder(target)) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        // `.NAME.` then tempfile's 6 random characters then `.tmp`, nothing else.
        let random = name
            .strip_prefix(prefix)
            .and_then(|r| r.strip_suffix(".tmp"));
        if !random.is_some_and(|r| r.len() == 6 && r.chars().all(|c| c.is_ascii_alphanumeric())) {
            continue;
        }
        // Only the plain files of the pattern, and only when their lock is free.
        if e.file_type().is_ok_and(|t| t.is_file())
            && let Ok(f) = File::open(e.path())
            && lock_exclusive(&f)
        {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Opens a FIFO, a device or `/dev/fd/N` to write through. A FIFO is opened without waiting
/// (`O_NONBLOCK`), so one that nobody reads fails at once (ENXIO) instead of blocking forever;
/// then it is made blocking again for the write. The outer error is "nobody reads it".
pub(super) fn open_through(p: &Path) -> Result<io::Result<File>, io::Error> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
        if std::fs::metadata(p).is_ok_and(|m| m.file_type().is_fifo()) {
            return match OpenOptions::new()
                .append(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(p)
            {
                Err(e) if e.raw_os_error() == Some(libc::ENXIO) => Err(e),
                Err(e) => Ok(Err(e)),
                Ok(f) => Ok(rustix::fs::fcntl_getfl(&f)
                    .and_then(|fl| rustix::fs::fcntl_setfl(&f, fl - rustix::fs::OFlags::NONBLOCK))
                    .map(|()| f)
                    .map_err(io::Error::from)),
            };
        }
    }
    Ok(OpenOptions::new().append(true).open(p))
}

/// The error of an output FIFO that no process reads.
pub(super) fn no_reader(o: &Out, p: &Path, e: io::Error) -> CliError {
    CliError::Output(format!(
        "{}: no process reads the FIFO {} ({e}); start its reader first (e.g. `cat {} &`), or give a file",
        o.name(),
        p.display(),
        p.display()
    ))
}

/// Prints human output on stdout; a closed pipe ends it quietly, a failed write is exit 3.
pub fn print(text: &str) -> Result<(), CliError> {
    to_stdio(&mut io::stdout().lock(), text.as_bytes())
        .map_err(|e| write_error(&Out::new("stdout", Path::new("-")), &e))
}

/// Writes to stdout or stderr; a reader that went away (`| head -1`) is not an error.
pub fn to_stdio(w: &mut impl Write, bytes: &[u8]) -> io::Result<()> {
    match w.write_all(bytes).and_then(|()| w.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        r => r,
    }
}

/// Replaces `target` (a regular file or nothing) with what `fill` writes: a temporary file in
/// the same folder, synced, then renamed over it. On any error the temporary file is removed and
/// `target` is left as it was. An existing file keeps its permissions.
pub fn replace(target: &Path, fill: impl FnOnce(&mut File) -> io::Result<()>) -> io::Result<()> {
    let tmp = filled(target, fill)?;
    tmp.persist(target).map_err(|e| e.error)?;
    Ok(())
}

/// Creates `target` with what `fill` writes, as [`replace`] does, but only if nothing is there:
/// a file that appeared meanwhile is kept and the error is `AlreadyExists`.
pub(super) fn replace_new(
    target: &Path,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    let tmp = filled(target, fill)?;
    tmp.persist_noclobber(target).map_err(|e| e.error)?;
    Ok(())
}

/// A temporary file beside `target` holding what `fill` wrote, synced and locked (the lock
/// tells the next writer of `target` to leave it alone); removed when dropped.
fn filled(
    target: &Path,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<tempfile::NamedTempFile> {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let prefix = format!(".{name}.");
    let mut b = tempfile::Builder::new();
    b.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(0o666));
    }
    clean_leftovers(target, &prefix);
    let mut tmp = b.tempfile_in(folder(target))?;
    lock_exclusive(tmp.as_file());
    if let Ok(m) = std::fs::metadata(target) {
        tmp.as_file().set_permissions(m.permissions())?;
    }
    fill(tmp.as_file_mut())?;
    tmp.as_file_mut().flush()?;
    tmp.as_file().sync_all()?;
    Ok(tmp)
}
