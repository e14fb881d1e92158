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

mod dest;
mod exclusive;
mod inputs;
mod write;

pub use self::dest::*;
pub use self::exclusive::*;
pub use self::inputs::*;
pub use self::write::*;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::CliError;
    use std::fs::File;
    use std::io::{self, Write};

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
    fn a_claim_left_by_a_killed_command_is_taken_over_and_nothing_is_clobbered() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("shard.jsonl");
        // A command killed with -9 leaves its claim file, unlocked, and no output.
        std::fs::write(d.path().join(".shard.jsonl.claim"), "").unwrap();
        claim(Out::new("--out", &p), "remove it")
            .unwrap()
            .write("runs\n")
            .unwrap();
        assert_eq!(entries(d.path()), ["shard.jsonl"]);
        // A file that appears at the path while the command runs is kept.
        let q = d.path().join("other.jsonl");
        let c = claim(Out::new("--out", &q), "remove it").unwrap();
        std::fs::write(&q, "someone else's").unwrap();
        let e = c.write("runs\n").unwrap_err();
        assert!(
            e.to_string().contains("appeared while the command ran"),
            "{e}"
        );
        assert_eq!(std::fs::read_to_string(&q).unwrap(), "someone else's");
        assert_eq!(entries(d.path()), ["other.jsonl", "shard.jsonl"]);
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

    #[test]
    fn a_folder_that_cannot_be_written_is_named_without_the_probe() {
        // tempfile's error carries the probe's path; the message shows the OS error alone.
        let d = tempfile::tempdir().unwrap();
        let e = tempfile::Builder::new()
            .prefix(".retrystorm-probe-")
            .tempfile_in(d.path().join("gone"))
            .unwrap_err();
        assert!(e.to_string().contains(".retrystorm-probe-"), "{e}");
        assert_eq!(
            dest::without_path(&e),
            "No such file or directory (os error 2)"
        );
    }
}
