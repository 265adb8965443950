//! Writing a tool's output file: never a partial file under the final name,
//! and never a device, FIFO or symlink replaced by a regular file.
//!
//! - a regular file (or a path that does not exist yet) is written through a
//!   temporary file in the same folder and a rename; an existing file keeps
//!   its permissions;
//! - a symlink is resolved first, so the link stays and its target is
//!   replaced (atomically, by the rule above);
//! - anything else that exists (a character device such as `/dev/null` or
//!   `/dev/stdout`, a FIFO, a socket) is opened and written in place, and a
//!   write error (`/dev/full`: no space left) is reported.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Writes `bytes` to `path` by the rules of the module.
pub fn write_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let target = resolve_links(path)?;
    missing_parent(&target)?;
    match fs::metadata(&target) {
        Ok(meta) if meta.is_dir() => Err(io::Error::other("is a directory".to_string())),
        Ok(meta) if !meta.is_file() => write_in_place(&target, bytes),
        Ok(meta) => write_renamed(&target, bytes, Some(meta.permissions())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => write_renamed(&target, bytes, None),
        Err(e) => Err(e),
    }
}

/// Makes the output directory `dir` of a tool (`--emit=c -o DIR`,
/// `--output-dir`, ...). The rule of every tool: an existing directory is
/// used, a missing one is created when its parent exists, and a missing
/// parent is an error, as it is for an output file, so a mistyped path
/// never creates a tree of directories.
pub fn create_output_dir(dir: &Path) -> io::Result<()> {
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => return Ok(()),
        Ok(_) => return Err(io::Error::other("exists and is not a directory")),
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        Err(_) => {}
    }
    missing_parent(dir)?;
    match fs::create_dir(dir) {
        // Another process made it meanwhile.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        r => r,
    }
}

/// The error for a path whose parent directory does not exist, which
/// "No such file or directory" leaves the user to guess.
fn missing_parent(path: &Path) -> io::Result<()> {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() && !p.is_dir() => Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "directory '{}' does not exist (tools create no missing parent directories)",
                p.display()
            ),
        )),
        _ => Ok(()),
    }
}

/// Follows symlinks (a bounded number of hops, as the kernel does), so a
/// dangling link creates its target instead of being replaced.
fn resolve_links(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

fn write_in_place(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = OpenOptions::new().write(true).open(path)?;
    f.write_all(bytes)?;
    f.flush()?;
    // Devices that buffer (and /dev/full) report errors at sync time too;
    // devices that do not support sync say so, which is not a write error.
    match f.sync_all() {
        Err(e) if e.raw_os_error() == Some(28) => Err(e),
        _ => Ok(()),
    }
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

fn write_renamed(path: &Path, bytes: &[u8], perms: Option<fs::Permissions>) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let stem = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    // A fresh name in the target's folder, so the rename stays on one file system.
    let (tmp, mut file) = loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{stem}.{}.{n}.tmp", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    };
    let result = (|| {
        file.write_all(bytes)?;
        file.flush()?;
        if let Some(p) = perms {
            file.set_permissions(p)?;
        }
        drop(file);
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_file_is_replaced_and_keeps_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempdir();
        let p = d.join("out.txt");
        fs::write(&p, "old").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o640)).unwrap();
        write_file(&p, b"new").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "new");
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o640
        );
        assert_eq!(fs::read_dir(&d).unwrap().count(), 1, "no temp file left");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_missing_parent_is_an_error_and_one_level_is_created() {
        let d = tempdir();
        let e = write_file(&d.join("no/x.gir"), b"x").unwrap_err();
        assert!(e.to_string().contains("does not exist"), "{e}");
        let e = create_output_dir(&d.join("no/out")).unwrap_err();
        assert!(e.to_string().contains("does not exist"), "{e}");
        assert!(!d.join("no").exists());
        create_output_dir(&d.join("out")).unwrap();
        create_output_dir(&d.join("out")).unwrap();
        assert!(d.join("out").is_dir());
        fs::write(d.join("file"), "x").unwrap();
        assert!(create_output_dir(&d.join("file")).is_err());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn symlink_stays_a_symlink() {
        let d = tempdir();
        let target = d.join("target.txt");
        let link = d.join("link.txt");
        fs::write(&target, "old").unwrap();
        std::os::unix::fs::symlink("target.txt", &link).unwrap();
        write_file(&link, b"new").unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read_to_string(&target).unwrap(), "new");
        // A dangling link creates its target.
        let dangling = d.join("dangling");
        std::os::unix::fs::symlink("made.txt", &dangling).unwrap();
        write_file(&dangling, b"x").unwrap();
        assert!(fs::symlink_metadata(&dangling)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read_to_string(d.join("made.txt")).unwrap(), "x");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn devices_are_written_in_place() {
        write_file(Path::new("/dev/null"), b"discarded").unwrap();
        let m = fs::metadata("/dev/null").unwrap();
        assert!(!m.is_file(), "/dev/null is still a device");
        if Path::new("/dev/full").exists() {
            let e = write_file(Path::new("/dev/full"), b"x").unwrap_err();
            assert_eq!(e.raw_os_error(), Some(28), "{e}");
        }
    }

    #[test]
    fn a_directory_is_refused() {
        let d = tempdir();
        assert!(write_file(&d, b"x").is_err());
        assert!(d.is_dir());
        fs::remove_dir_all(&d).unwrap();
    }

    fn tempdir() -> PathBuf {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let d = std::env::temp_dir().join(format!("glow-output-{}-{n}", std::process::id()));
        fs::create_dir_all(&d).unwrap();
        d
    }
}
