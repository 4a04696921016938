//! Reading the files this crate parses (a `.config`, Kconfig files, Makefiles): a regular file
//! of bounded size, checked on the open file before a byte is read, so a FIFO, a device or
//! `/dev/zero` is a clear error and never a hang or an unbounded allocation.

use std::io::Read;
use std::path::Path;

/// The most a `.config` may hold: Debian's is ~300 KB.
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// Why a file was not read.
#[derive(Debug)]
pub enum ReadError {
    /// Nothing at the path.
    NotFound,
    /// A directory, FIFO, socket or device: what it is.
    NotRegular(&'static str),
    /// Larger than the limit (bytes).
    TooLarge(u64),
    /// Any other failure to open or read.
    Io(std::io::Error),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::NotFound => write!(f, "no such file"),
            ReadError::NotRegular(what) => write!(f, "{what}, not a regular file"),
            ReadError::TooLarge(cap) if cap % (1 << 20) == 0 => {
                write!(f, "larger than {} MiB, the most knav reads", cap >> 20)
            }
            ReadError::TooLarge(cap) => write!(f, "larger than {cap} bytes, the most knav reads"),
            ReadError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ReadError {}

/// The bytes of the regular file at `path`, at most `cap` of them. The open does not block (a
/// FIFO without a writer would) and the type and size are checked on the open file; a file that
/// grows past `cap` while being read is an error too.
pub fn read_file(path: &Path, cap: u64) -> Result<Vec<u8>, ReadError> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let mut file = opts.open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => ReadError::NotFound,
        _ => ReadError::Io(e),
    })?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular(kind_of(&meta.file_type())));
    }
    if meta.len() > cap {
        return Err(ReadError::TooLarge(cap));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    (&mut file)
        .take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > cap {
        return Err(ReadError::TooLarge(cap));
    }
    Ok(bytes)
}

fn kind_of(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else {
        "not a file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("knav-kconfig-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn devices_fifos_and_directories_are_errors_not_hangs() {
        let err = read_file(Path::new("/dev/zero"), MAX_CONFIG_BYTES).unwrap_err();
        assert_eq!(err.to_string(), "a character device, not a regular file");
        assert!(matches!(
            read_file(Path::new("/dev/urandom"), MAX_CONFIG_BYTES),
            Err(ReadError::NotRegular("a character device"))
        ));
        let dir = temp("fifo");
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        // Opening a FIFO without a writer blocks unless the open does not wait.
        assert_eq!(
            read_file(&fifo, MAX_CONFIG_BYTES).unwrap_err().to_string(),
            "a FIFO, not a regular file"
        );
        assert_eq!(
            read_file(&dir, MAX_CONFIG_BYTES).unwrap_err().to_string(),
            "a directory, not a regular file"
        );
        assert!(matches!(
            read_file(&dir.join("none"), MAX_CONFIG_BYTES),
            Err(ReadError::NotFound)
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_file_over_the_cap_is_an_error_and_one_at_the_cap_is_read() {
        let dir = temp("cap");
        let path = dir.join("big");
        std::fs::write(&path, vec![b'#'; 4097]).unwrap();
        assert_eq!(
            read_file(&path, 4096).unwrap_err().to_string(),
            "larger than 4096 bytes, the most knav reads"
        );
        assert_eq!(read_file(&path, 4097).unwrap().len(), 4097);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
