//! The inputs a command reads: opened as regular files only, size-bounded, remembered by
//! identity so that no output replaces one of them.

use super::*;
use crate::error::CliError;
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// What identifies a file that exists: its (device, inode) on Unix (so a symbolic link, a hard
/// link and `./x` are the file itself), else its canonical path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum FileId {
    #[cfg(unix)]
    Inode(u64, u64),
    #[cfg(not(unix))]
    Path(PathBuf),
}

#[cfg(unix)]
pub(super) fn file_id(meta: &std::fs::Metadata, _: &Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    Some(FileId::Inode(meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
pub(super) fn file_id(_: &std::fs::Metadata, p: &Path) -> Option<FileId> {
    std::fs::canonicalize(p).ok().map(FileId::Path)
}

/// The identity of an existing file (following links), if it exists.
pub(super) fn id_of(p: &Path) -> Option<FileId> {
    std::fs::metadata(p).ok().and_then(|m| file_id(&m, p))
}

/// One input of this process: what it is ("the trace file"), and the file kept open so that its
/// identity cannot pass to another file while the process runs.
pub(super) struct Input {
    what: String,
    id: FileId,
    _open: Option<File>,
}

/// Every input this process read or will read: the one place that knows them all.
pub(super) static INPUTS: std::sync::Mutex<Vec<Input>> = std::sync::Mutex::new(Vec::new());

pub(super) fn remember(what: &str, id: FileId, open: Option<File>) {
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
pub(super) fn input_at(dest: &Dest) -> Option<String> {
    let (Dest::Replace(p) | Dest::Through(p)) = dest else {
        return None;
    };
    let id = id_of(p)?;
    let inputs = INPUTS.lock().unwrap_or_else(|e| e.into_inner());
    inputs.iter().find(|i| i.id == id).map(|i| i.what.clone())
}

pub(super) fn refuse_input(o: &Out, dest: &Dest) -> Result<(), CliError> {
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

/// The largest model file read (a model is a few kilobytes; this stops `/dev/zero`-like
/// surprises long before memory runs out): parsed, a model file takes about 100 times its size
/// (measured, `docs/performance.md`, "Memory bounds"), so about 0.4 GB at most.
pub const MAX_MODEL_BYTES: u64 = 4 * 1024 * 1024;

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

pub(super) fn size(n: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    match n {
        _ if n % MIB == 0 && n > 0 => format!("{} MiB", n / MIB),
        _ if n >= MIB => format!("{:.1} MiB", n as f64 / MIB as f64),
        _ => format!("{n} bytes"),
    }
}
