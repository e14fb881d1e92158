//! Writing outputs safely, and reading inputs without surprises.
//!
//! Where an output goes depends on what its path is:
//!
//! - `-`, `/dev/stdout`, `/dev/fd/1`, `/proc/self/fd/1`: standard output (and the same for
//!   stderr). A closed pipe (`| head -1`) ends the output quietly: it is not an error.
//! - a regular file, or a path that does not exist yet: replaced whole or not at all (a temporary
//!   file in the same folder, then a rename). A symbolic link is followed and its *target* is
//!   replaced; the link stays.
//! - a FIFO, a character device (`/dev/null`, a terminal) or `/dev/fd/N`: opened for writing and
//!   written through, never replaced.
//!
//! A failed write (a full disk, the file-size limit) is exit 3 and leaves no temporary file.
//! [`check`] refuses, before anything runs, outputs that could not be written (a missing folder,
//! a directory, a folder that cannot be written) and two outputs on one path.
//!
//! Every input a command reads goes through [`open_input`] (or is named up front with
//! [`check`]), which remembers it by identity ((device, inode) on Unix): an output on one of them
//! is refused, up front by [`check`] and [`refuse_inputs`], and again by [`write`] itself, so no
//! command can replace what it reads. Only `merge` replaces an input on purpose
//! ([`Out::in_place`]), after reading everything.

use crate::CliError;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// One output flag and its path, as the user gave them.
#[derive(Clone, Copy, Debug)]
pub struct Out<'a> {
    pub flag: &'static str,
    pub path: &'a Path,
    /// May replace one of the command's inputs (`merge -o` onto the runs so far).
    pub in_place: bool,
}

impl<'a> Out<'a> {
    pub fn new(flag: &'static str, path: &'a Path) -> Self {
        Out {
            flag,
            path,
            in_place: false,
        }
    }

    /// An output allowed to replace one of the inputs (read whole before it is written).
    pub fn in_place(self) -> Self {
        Out {
            in_place: true,
            ..self
        }
    }

    fn name(&self) -> String {
        format!("{} {}", self.flag, self.path.display())
    }
}

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
const MAX_LINKS: usize = 40;

fn is_fd_path(p: &Path) -> bool {
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

fn stdio_alias(p: &Path) -> Option<Dest> {
    match p.to_str()? {
        "-" | "/dev/stdout" | "/dev/fd/1" | "/proc/self/fd/1" => Some(Dest::Stdout),
        "/dev/stderr" | "/dev/fd/2" | "/proc/self/fd/2" => Some(Dest::Stderr),
        _ => None,
    }
}

/// What kind of thing a path is, for messages.
#[cfg(unix)]
fn kind(ft: std::fs::FileType) -> &'static str {
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
fn kind(ft: std::fs::FileType) -> &'static str {
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
fn folder(target: &Path) -> &Path {
    match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// What identifies an output's destination, to find two outputs on one path. Character devices
/// (`/dev/null`) may be shared.
fn identity(d: &Dest) -> Option<String> {
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
fn canonical(p: &Path) -> String {
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
                            format!("cannot write in the folder {}: {e}", dir.display()),
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

/// What identifies a file that exists: its (device, inode) on Unix (so a symbolic link, a hard
/// link and `./x` are the file itself), else its canonical path.
#[derive(Clone, Debug, PartialEq, Eq)]
enum FileId {
    #[cfg(unix)]
    Inode(u64, u64),
    #[cfg(not(unix))]
    Path(PathBuf),
}

#[cfg(unix)]
fn file_id(meta: &std::fs::Metadata, _: &Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    Some(FileId::Inode(meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn file_id(_: &std::fs::Metadata, p: &Path) -> Option<FileId> {
    std::fs::canonicalize(p).ok().map(FileId::Path)
}

/// The identity of an existing file (following links), if it exists.
fn id_of(p: &Path) -> Option<FileId> {
    std::fs::metadata(p).ok().and_then(|m| file_id(&m, p))
}

/// One input of this process: what it is ("the trace file"), and the file kept open so that its
/// identity cannot pass to another file while the process runs.
struct Input {
    what: String,
    id: FileId,
    _open: Option<File>,
}

/// Every input this process read or will read: the one place that knows them all.
static INPUTS: std::sync::Mutex<Vec<Input>> = std::sync::Mutex::new(Vec::new());

fn remember(what: &str, id: FileId, open: Option<File>) {
    let mut inputs = INPUTS.lock().unwrap_or_else(|e| e.into_inner());
    if !inputs.iter().any(|i| i.id == id) {
        inputs.push(Input {
            what: what.to_string(),
            id,
            _open: open,
        });
    }
}

/// Names an input the command will read (`what`: "the --baseline report"), so that no output
/// replaces it; a path that does not exist (yet) is nothing to protect.
pub fn note_input(what: &str, path: &Path) {
    let Ok(meta) = std::fs::metadata(path) else {
        return;
    };
    let Some(id) = file_id(&meta, path) else {
        return;
    };
    // Only a regular file is opened (and kept open): a FIFO with no writer would block.
    let open = meta.is_file().then(|| File::open(path).ok()).flatten();
    remember(what, id, open);
}

/// What the input at `dest` is, if the command reads it.
fn input_at(dest: &Dest) -> Option<String> {
    let (Dest::Replace(p) | Dest::Through(p)) = dest else {
        return None;
    };
    let id = id_of(p)?;
    let inputs = INPUTS.lock().unwrap_or_else(|e| e.into_inner());
    inputs.iter().find(|i| i.id == id).map(|i| i.what.clone())
}

fn refuse_input(o: &Out, dest: &Dest) -> Result<(), CliError> {
    if o.in_place {
        return Ok(());
    }
    match input_at(dest) {
        Some(what) => Err(CliError::Input(format!(
            "{}: is {what}, which this command reads; give another path",
            o.name()
        ))),
        None => Ok(()),
    }
}

/// Refuses any output that is one of the inputs read so far (the model's trace file and imported
/// configurations are known once it is loaded): call it after loading, before running.
pub fn refuse_inputs(outs: &[Out]) -> Result<(), CliError> {
    for o in outs {
        if let Ok(dest) = resolve(o.path) {
            refuse_input(o, &dest)?;
        }
    }
    Ok(())
}

/// Why a special file cannot take an output: a socket is opened by connecting, not by name.
fn unwritable_kind(p: &Path) -> Option<String> {
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
fn writable(p: &Path) -> io::Result<()> {
    rustix::fs::access(p, rustix::fs::Access::WRITE_OK).map_err(io::Error::from)
}

#[cfg(not(unix))]
fn writable(p: &Path) -> io::Result<()> {
    std::fs::metadata(p).map(|_| ())
}

/// Says what an I/O error means for a write, naming the output.
fn write_error(o: &Out, e: &io::Error) -> CliError {
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
fn lock_exclusive(f: &File) -> bool {
    use rustix::fs::{FlockOperation, flock};
    match flock(f, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => true,
        Err(e) => e != rustix::io::Errno::WOULDBLOCK,
    }
}

#[cfg(not(unix))]
fn lock_exclusive(_: &File) -> bool {
    true
}

/// Removes the temporary files of `target` that an earlier process left (killed while writing):
/// those whose lock nobody holds; a writer at work holds its temporary file's lock.
fn clean_leftovers(target: &Path, prefix: &str) {
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
fn open_through(p: &Path) -> Result<io::Result<File>, io::Error> {
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
fn no_reader(o: &Out, p: &Path, e: io::Error) -> CliError {
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
    // Held until the rename: the next writer of `target` leaves this file alone.
    lock_exclusive(tmp.as_file());
    if let Ok(m) = std::fs::metadata(target) {
        tmp.as_file().set_permissions(m.permissions())?;
    }
    fill(tmp.as_file_mut())?;
    tmp.as_file_mut().flush()?;
    tmp.as_file().sync_all()?;
    tmp.persist(target).map_err(|e| e.error)?;
    Ok(())
}

/// The largest model file read (a model is a few kilobytes; this stops `/dev/zero`-like
/// surprises long before memory runs out).
pub const MAX_MODEL_BYTES: u64 = 16 * 1024 * 1024;

/// Opens an input that must be a regular file, checking its type before opening it (so a FIFO
/// with no writer cannot block). `what` names it in errors: "the model file".
pub fn open_input(path: &Path, what: &str) -> Result<File, CliError> {
    let name = path.display();
    let meta = std::fs::metadata(path)
        .map_err(|e| CliError::Input(format!("{name}: cannot read {what}: {e}")))?;
    if !meta.is_file() {
        return Err(CliError::Input(format!(
            "{name}: is {}, not a regular file; give {what} itself",
            kind(meta.file_type())
        )));
    }
    let f = File::open(path)
        .map_err(|e| CliError::Input(format!("{name}: cannot read {what}: {e}")))?;
    if let (Ok(m), Ok(kept)) = (f.metadata(), f.try_clone())
        && let Some(id) = file_id(&m, path)
    {
        remember(what, id, Some(kept));
    }
    Ok(f)
}

/// Reads a text input of at most `limit` bytes that must be a regular file in UTF-8; errors say
/// where the text stops being UTF-8.
pub fn read_text(path: &Path, what: &str, limit: u64) -> Result<String, CliError> {
    let name = path.display();
    let f = open_input(path, what)?;
    let too_big = |n: u64| {
        CliError::Input(format!(
            "{name}: {what} is {}; it may be at most {}",
            size(n),
            size(limit)
        ))
    };
    if let Ok(m) = f.metadata()
        && m.len() > limit
    {
        return Err(too_big(m.len()));
    }
    let mut bytes = Vec::new();
    f.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::Input(format!("{name}: cannot read {what}: {e}")))?;
    if bytes.len() as u64 > limit {
        return Err(too_big(bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let before = &e.as_bytes()[..at];
        let line = before.iter().filter(|b| **b == b'\n').count() + 1;
        let col = at
            - before
                .iter()
                .rposition(|b| *b == b'\n')
                .map_or(0, |i| i + 1)
            + 1;
        CliError::Input(format!(
            "{name}:{line}:{col}: {what} is not UTF-8 text (byte 0x{:02x} at offset {at})",
            e.as_bytes()[at]
        ))
    })
}

fn size(n: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    match n {
        _ if n % MIB == 0 && n > 0 => format!("{} MiB", n / MIB),
        _ if n >= MIB => format!("{:.1} MiB", n as f64 / MIB as f64),
        _ => format!("{n} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn writes_whole_file_and_leaves_no_temp() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.json");
        write(Out::new("--json", &p), "one").unwrap();
        write(Out::new("--json", &p), "two").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        assert_eq!(entries(d.path()), ["a.json"]);
        assert!(write(Out::new("--json", &d.path().join("missing/x.json")), "z").is_err());
    }

    #[test]
    fn a_failed_write_removes_its_temporary_file_and_keeps_the_old_one() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("out.csv");
        std::fs::write(&p, "previous").unwrap();
        let full = io::Error::from(io::ErrorKind::StorageFull);
        let r = replace(&p, |f| {
            f.write_all(b"half of it")?;
            Err(io::Error::from(io::ErrorKind::StorageFull))
        });
        let e = r.unwrap_err();
        assert_eq!(e.kind(), full.kind());
        let msg = write_error(&Out::new("--csv", &p), &e).to_string();
        assert!(
            msg.contains("--csv") && msg.contains("disk is full"),
            "{msg}"
        );
        assert!(matches!(
            write_error(&Out::new("--csv", &p), &e),
            CliError::Output(_)
        ));
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "previous");
        assert_eq!(entries(d.path()), ["out.csv"]);
        let big = io::Error::from(io::ErrorKind::FileTooLarge);
        let msg = write_error(&Out::new("--csv", &p), &big).to_string();
        assert!(msg.contains("file-size limit"), "{msg}");
    }

    /// A writer that fails like `/dev/full`.
    struct Full;
    impl Write for Full {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::from_raw_os_error(28))
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// A writer whose reader went away.
    struct Closed;
    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::from(io::ErrorKind::BrokenPipe))
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn stdout_ignores_a_closed_pipe_but_not_a_full_disk() {
        assert!(to_stdio(&mut Closed, b"x").is_ok());
        let e = to_stdio(&mut Full, b"x").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::StorageFull);
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_followed_and_their_target_replaced() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("real.svg");
        std::fs::write(&target, "old").unwrap();
        let link = d.path().join("link.svg");
        std::os::unix::fs::symlink("real.svg", &link).unwrap();
        write(Out::new("--svg", &link), "new").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        // A dangling link creates its target.
        let dangling = d.path().join("dangling.svg");
        std::os::unix::fs::symlink("made.svg", &dangling).unwrap();
        write(Out::new("--svg", &dangling), "made").unwrap();
        assert_eq!(
            std::fs::read_to_string(d.path().join("made.svg")).unwrap(),
            "made"
        );
        assert_eq!(
            entries(d.path()),
            ["dangling.svg", "link.svg", "made.svg", "real.svg"]
        );
        // A loop is refused, not followed forever.
        let a = d.path().join("a");
        let b = d.path().join("b");
        std::os::unix::fs::symlink(&b, &a).unwrap();
        std::os::unix::fs::symlink(&a, &b).unwrap();
        assert!(resolve(&a).unwrap_err().contains("symbolic links"));
    }

    #[test]
    fn leftover_temporary_files_are_removed_but_not_a_writers_at_work() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("out.json");
        // Left by a writer killed with -9; one a writer at work holds; one that is not ours.
        std::fs::write(d.path().join(".out.json.Ab3xYz.tmp"), "half").unwrap();
        let busy = d.path().join(".out.json.Busy01.tmp");
        std::fs::write(&busy, "writing").unwrap();
        let held = File::open(&busy).unwrap();
        assert!(lock_exclusive(&held));
        std::fs::write(d.path().join(".out.json.notes.tmp"), "mine").unwrap();
        write(Out::new("--json", &p), "{}").unwrap();
        assert_eq!(
            entries(d.path()),
            [".out.json.Busy01.tmp", ".out.json.notes.tmp", "out.json"]
        );
        drop(held);
        write(Out::new("--json", &p), "{}").unwrap();
        assert_eq!(entries(d.path()), [".out.json.notes.tmp", "out.json"]);
    }

    #[test]
    fn a_claimed_output_is_exclusive_and_removed_when_unwritten() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("shard.jsonl");
        let c = claim(Out::new("--out", &p), "remove it").unwrap();
        let e = claim(Out::new("--out", &p), "remove it").err().unwrap();
        assert!(e.to_string().contains("another command is writing"), "{e}");
        c.write("runs\n").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "runs\n");
        let e = claim(Out::new("--out", &p), "remove it").err().unwrap();
        assert!(e.to_string().ends_with("the file exists; remove it"), "{e}");
        let q = d.path().join("other.jsonl");
        drop(claim(Out::new("--out", &q), "remove it").unwrap());
        assert_eq!(entries(d.path()), ["shard.jsonl"]);
    }

    #[test]
    fn stdio_paths_and_fd_paths() {
        assert_eq!(resolve(Path::new("-")), Ok(Dest::Stdout));
        assert_eq!(resolve(Path::new("/dev/stdout")), Ok(Dest::Stdout));
        assert_eq!(resolve(Path::new("/dev/fd/1")), Ok(Dest::Stdout));
        assert_eq!(resolve(Path::new("/dev/stderr")), Ok(Dest::Stderr));
        assert!(is_fd_path(Path::new("/dev/fd/63")));
        assert!(is_fd_path(Path::new("/proc/self/fd/7")));
        assert!(is_fd_path(Path::new("/proc/123/fd/7")));
        assert!(!is_fd_path(Path::new("/proc/cpuinfo")));
        assert!(!is_fd_path(Path::new("/tmp/fd/1")));
    }

    #[cfg(unix)]
    #[test]
    fn permissions_of_a_replaced_file_are_kept() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("o.json");
        std::fs::write(&p, "x").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        write(Out::new("--json", &p), "y").unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        // A new file is not private to its owner (the temporary file's 0600 is not kept).
        let q = d.path().join("new.json");
        write(Out::new("--json", &q), "y").unwrap();
        let mode = std::fs::metadata(&q).unwrap().permissions().mode() & 0o777;
        assert_ne!(mode & 0o044, 0, "{mode:o}");
    }

    #[test]
    fn two_outputs_on_one_path_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("x.svg");
        let same = d.path().join(".").join("x.svg");
        let e = check(&[Out::new("--svg", &a), Out::new("--cdf-svg", &same)], &[]).unwrap_err();
        assert!(e.to_string().contains("same file"), "{e}");
        let dash = Path::new("-");
        let e = check(
            &[
                Out::new("--json", dash),
                Out::new("--csv", Path::new("/dev/stdout")),
            ],
            &[],
        )
        .unwrap_err();
        assert!(e.to_string().contains("stdout"), "{e}");
        assert!(check(&[Out::new("--json", &a), Out::new("--csv", dash)], &[]).is_ok());
        let m = d.path().join("m.toml");
        std::fs::write(&m, "").unwrap();
        let e = check(&[Out::new("--json", &m)], &[("the model file", &m)]).unwrap_err();
        assert!(e.to_string().contains("the model file"), "{e}");
    }

    #[test]
    fn outputs_that_cannot_be_written_are_refused_up_front() {
        let d = tempfile::tempdir().unwrap();
        let e = check(&[Out::new("--json", &d.path().join("no/x.json"))], &[]).unwrap_err();
        assert!(matches!(e, CliError::Input(_)));
        assert!(e.to_string().starts_with("--json ") && e.to_string().contains("does not exist"));
        let e = check(&[Out::new("--csv", d.path())], &[]).unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
        let f = d.path().join("file");
        std::fs::write(&f, "").unwrap();
        let e = check(&[Out::new("--svg", &f.join("x.svg"))], &[]).unwrap_err();
        assert!(e.to_string().contains("not a folder"), "{e}");
        assert_eq!(entries(d.path()), ["file"]);
    }

    #[test]
    fn inputs_must_be_small_regular_utf8_files() {
        let d = tempfile::tempdir().unwrap();
        let e = read_text(d.path(), "the model file", 100).unwrap_err();
        assert!(
            e.to_string().contains("is a directory, not a regular file"),
            "{e}"
        );
        let p = d.path().join("m.toml");
        std::fs::write(&p, vec![b'#'; 101]).unwrap();
        let e = read_text(&p, "the model file", 100).unwrap_err();
        assert!(e.to_string().contains("at most"), "{e}");
        std::fs::write(&p, b"a = 1\nb = \"\xff\"\n").unwrap();
        let e = read_text(&p, "the model file", 100).unwrap_err();
        assert!(
            e.to_string()
                .contains("m.toml:2:6: the model file is not UTF-8"),
            "{e}"
        );
        std::fs::write(&p, b"a = 1\n").unwrap();
        assert_eq!(read_text(&p, "the model file", 100).unwrap(), "a = 1\n");
    }
}
