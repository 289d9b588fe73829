use super::sensitivity::RULES;
use super::*;
use std::os::unix::fs::symlink;
use tempfile::TempDir;

use Sensitivity::*;

/// A scratch world: `<root>/ws` (workspace), `<root>/home`,
/// `<root>/home/.local/state/airlock` (state), no temp dirs so that
/// "outside" under the test's tempdir reads as `Outside`.
struct World {
    _dir: TempDir,
    root: PathBuf,
    ctx: PathContext,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let ws = root.join("ws");
        let home = root.join("home");
        let state = home.join(".local/state/airlock");
        fs::create_dir_all(ws.join("src")).unwrap();
        fs::create_dir_all(home.join(".ssh")).unwrap();
        fs::create_dir_all(&state).unwrap();
        let mut ctx = PathContext::new(&ws, &home, &state).unwrap();
        ctx.temp_dirs.clear();
        World {
            _dir: dir,
            root,
            ctx,
        }
    }

    fn ws(&self) -> PathBuf {
        self.ctx.workspace.clone()
    }

    fn resolve(&self, raw: &str) -> ResolvedPath {
        resolve(&self.ctx, &self.ctx.workspace, raw)
    }

    fn link(&self, target: impl AsRef<Path>, at: &str) {
        let at = self.root.join(at);
        fs::create_dir_all(at.parent().unwrap()).unwrap();
        symlink(target, at).unwrap();
    }

    fn write(&self, rel: &str, body: &str) {
        let path = self.root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, body).unwrap();
    }
}

mod attacks;
mod patterns;
mod places;
mod sensitivity;
