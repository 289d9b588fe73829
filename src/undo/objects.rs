//! The content store: each file content kept once, named by its SHA-256, however many
//! checkpoints hold it. Written through a temporary file and a rename, so a content is either
//! whole or absent; private to the user, like the rest of the state directory.

use std::fs;
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

use crate::digest::hex;

/// Contents read whole before hashing (one read, no temporary file when already kept).
const SMALL: u64 = 256 * 1024;

pub struct Objects {
    dir: PathBuf,
    counter: AtomicU64,
}

impl Objects {
    pub fn new(dir: PathBuf) -> Objects {
        Objects {
            dir,
            counter: AtomicU64::new(0),
        }
    }

    pub fn path(&self, hash: &str) -> PathBuf {
        let (head, tail) = hash.split_at(2.min(hash.len()));
        self.dir.join(head).join(tail)
    }

    pub fn has(&self, hash: &str) -> bool {
        self.path(hash).exists()
    }

    pub fn read(&self, hash: &str) -> io::Result<Vec<u8>> {
        fs::read(self.path(hash))
    }

    /// Keeps the content of the file at `path`; returns its hash.
    pub fn put(&self, path: &Path, size: u64) -> io::Result<String> {
        let mut file = fs::File::open(path)?;
        if size <= SMALL {
            let mut bytes = Vec::with_capacity(size as usize);
            file.read_to_end(&mut bytes)?;
            return self.put_bytes(&bytes);
        }
        let temp = self.temp()?;
        let mut out = private_file(&temp)?;
        let mut hasher = Sha256::new();
        let mut buffer = vec![0u8; 1 << 20];
        loop {
            let n = file.read(&mut buffer)?;
            if n == 0 {
                break;
            }
            hasher.update(&buffer[..n]);
            out.write_all(&buffer[..n])?;
        }
        drop(out);
        let hash = hex(&hasher.finalize());
        self.settle(&temp, &hash)?;
        Ok(hash)
    }

    /// Keeps `bytes`; returns their hash.
    pub fn put_bytes(&self, bytes: &[u8]) -> io::Result<String> {
        let hash = hex(&Sha256::digest(bytes));
        if !self.has(&hash) {
            let temp = self.temp()?;
            let mut out = private_file(&temp)?;
            out.write_all(bytes)?;
            drop(out);
            self.settle(&temp, &hash)?;
        }
        Ok(hash)
    }

    /// The hash of the file at `path`, without keeping it.
    pub fn hash_of(path: &Path) -> io::Result<String> {
        let mut file = fs::File::open(path)?;
        let mut hasher = Sha256::new();
        let mut buffer = vec![0u8; 1 << 16];
        loop {
            let n = file.read(&mut buffer)?;
            if n == 0 {
                break;
            }
            hasher.update(&buffer[..n]);
        }
        Ok(hex(&hasher.finalize()))
    }

    fn temp(&self) -> io::Result<PathBuf> {
        fs::create_dir_all(&self.dir)?;
        let n = self.counter.fetch_add(1, Ordering::SeqCst);
        Ok(self.dir.join(format!(".tmp-{}-{n}", std::process::id())))
    }

    fn settle(&self, temp: &Path, hash: &str) -> io::Result<()> {
        let target = self.path(hash);
        if target.exists() {
            return fs::remove_file(temp);
        }
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::rename(temp, &target)
    }

    /// Every kept content's hash, with its size.
    pub fn all(&self) -> Vec<(String, u64)> {
        let mut out = Vec::new();
        let Ok(heads) = fs::read_dir(&self.dir) else {
            return out;
        };
        for head in heads.flatten() {
            let name = head.file_name().to_string_lossy().into_owned();
            if name.len() != 2 {
                continue;
            }
            let Ok(tails) = fs::read_dir(head.path()) else {
                continue;
            };
            for tail in tails.flatten() {
                let size = tail.metadata().map(|m| m.len()).unwrap_or(0);
                out.push((
                    format!("{name}{}", tail.file_name().to_string_lossy()),
                    size,
                ));
            }
        }
        out
    }

    pub fn remove(&self, hash: &str) {
        let _ = fs::remove_file(self.path(hash));
    }
}

fn private_file(path: &Path) -> io::Result<fs::File> {
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}
