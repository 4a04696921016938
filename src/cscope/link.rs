//! `knav cscope --install-link DIR`: `DIR/cscope` made a symbolic link to the running knav, the
//! name cscope's plugins accept (cscope_maps.nvim runs only `cscope` or `gtags-cscope`). It
//! creates nothing else and never replaces a file that is not already such a link.

use std::path::{Path, PathBuf};

/// What [`install`] did.
#[derive(Debug, PartialEq)]
pub(super) enum Installed {
    /// `DIR/cscope` made, pointing at the knav named.
    Made(PathBuf, PathBuf),
    /// `DIR/cscope` already was a link to this knav: left as it is.
    Already(PathBuf),
}

/// Makes `dir/cscope` a symbolic link to `knav` (the running executable).
pub(super) fn install(dir: &Path, knav: &Path) -> Result<Installed, String> {
    let meta = std::fs::metadata(dir).map_err(|e| {
        format!(
            "--install-link {}: {e}; give an existing directory (on your PATH, e.g. ~/.local/bin)",
            dir.display()
        )
    })?;
    if !meta.is_dir() {
        return Err(format!(
            "--install-link {}: not a directory; give the directory the link goes in",
            dir.display()
        ));
    }
    let link = dir.join("cscope");
    match std::fs::symlink_metadata(&link) {
        Ok(m) if m.file_type().is_symlink() && points_at(&link, knav) => {
            return Ok(Installed::Already(link));
        }
        Ok(m) => {
            let what = match m.file_type().is_symlink() {
                true => match std::fs::read_link(&link) {
                    Ok(t) => format!("a link to {}", t.display()),
                    Err(_) => "a link".to_string(),
                },
                false => "a file that is not a link to knav".to_string(),
            };
            return Err(format!(
                "{} exists and is {what}: knav does not replace it; remove it yourself \
                 (`rm {}`) if knav should answer as cscope there, or give another directory",
                link.display(),
                link.display()
            ));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("{}: {e}", link.display())),
    }
    std::os::unix::fs::symlink(knav, &link).map_err(|e| {
        format!(
            "cannot make {} (a link to {}): {e}",
            link.display(),
            knav.display()
        )
    })?;
    Ok(Installed::Made(link, knav.to_path_buf()))
}

/// Whether the link at `link` leads to the same file as `knav`.
fn points_at(link: &Path, knav: &Path) -> bool {
    match (std::fs::canonicalize(link), std::fs::canonicalize(knav)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_is_made_kept_and_nothing_else_is_replaced() {
        let top = std::env::temp_dir().join(format!("knav-link-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&top);
        std::fs::create_dir(&top).unwrap();
        let knav = top.join("knav");
        std::fs::write(&knav, "").unwrap();
        let bin = top.join("bin");
        std::fs::create_dir(&bin).unwrap();
        let link = bin.join("cscope");
        assert_eq!(
            install(&bin, &knav),
            Ok(Installed::Made(link.clone(), knav.clone()))
        );
        assert_eq!(std::fs::read_link(&link).unwrap(), knav);
        assert_eq!(install(&bin, &knav), Ok(Installed::Already(link.clone())));
        // A link elsewhere and a plain file are refused, and left as they were.
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink("/usr/bin/cscope", &link).unwrap();
        let e = install(&bin, &knav).unwrap_err();
        assert!(
            e.contains("a link to /usr/bin/cscope") && e.contains("rm "),
            "{e}"
        );
        assert_eq!(
            std::fs::read_link(&link).unwrap(),
            Path::new("/usr/bin/cscope")
        );
        std::fs::remove_file(&link).unwrap();
        std::fs::write(&link, "#!/bin/sh\n").unwrap();
        let e = install(&bin, &knav).unwrap_err();
        assert!(e.contains("not a link to knav"), "{e}");
        assert_eq!(std::fs::read_to_string(&link).unwrap(), "#!/bin/sh\n");
        // A directory that does not exist is not made.
        let missing = top.join("nope");
        assert!(install(&missing, &knav)
            .unwrap_err()
            .contains("existing directory"));
        assert!(!missing.exists());
        assert_eq!(std::fs::read_dir(&top).unwrap().count(), 2);
        std::fs::remove_dir_all(&top).unwrap();
    }
}
