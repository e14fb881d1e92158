//! Writing outputs whole or not at all: a temporary file in the target's folder, then a rename.

use crate::CliError;
use std::io::Write;
use std::path::Path;

/// Writes `contents` to `path` atomically, or to stdout when `path` is `-`.
pub fn write(path: &Path, contents: &str) -> Result<(), CliError> {
    if path.as_os_str() == "-" {
        let mut out = std::io::stdout().lock();
        return out
            .write_all(contents.as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| CliError::Output(format!("stdout: {e}")));
    }
    let err = |e: std::io::Error| CliError::Output(format!("{}: {e}", path.display()));
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| CliError::Output(format!("{}: not a file path", path.display())))?;
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(contents.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_whole_file_and_leaves_no_temp() {
        let dir = std::env::temp_dir().join(format!("rs-out-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("a.json");
        write(&p, "one").unwrap();
        write(&p, "two").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        assert!(write(&dir.join("missing/x.json"), "z").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
