//! The OS sandbox with real processes: airlock's own binary as the launcher, real bash, real
//! files, a real TCP listener. HOME is a fake one under a temp dir, so the keys are planted.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use airlock::facts::paths::PathContext;
use airlock::output::{OutputSink, ToolOutcome};
use airlock::protocol::ToolStatus;
use airlock::sandbox::plan::{Plan, make_own_temp};
use airlock::sandbox::{Profile, Sandbox, SandboxPolicy, Support};
use airlock::tools::bash::{self, BashRun, SandboxedRun};
use airlock::tools::runlog::LogLimits;
use tokio_util::sync::CancellationToken;

const SECRET: &str = "-----BEGIN OPENSSH PRIVATE KEY-----\nplanted\n";

struct World {
    root: tempfile::TempDir,
    ctx: PathContext,
}

impl World {
    fn new() -> World {
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("home");
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(home.join(".ssh/id_ed25519"), SECRET).unwrap();
        std::fs::write(home.join("notes.txt"), "my notes\n").unwrap();
        std::fs::create_dir_all(root.path().join("ws")).unwrap();
        std::fs::create_dir_all(root.path().join("tmp")).unwrap();
        std::fs::create_dir_all(root.path().join("state")).unwrap();
        let ctx =
            PathContext::new(&root.path().join("ws"), &home, &root.path().join("state")).unwrap();
        World { root, ctx }
    }

    fn home(&self) -> PathBuf {
        self.ctx.home.clone()
    }

    fn ws(&self) -> PathBuf {
        self.ctx.workspace.clone()
    }

    fn plan(&self, profile: Profile) -> Plan {
        let temp = self.root.path().join("tmp");
        Plan::make(&self.ctx, profile, || make_own_temp(&temp)).unwrap()
    }

    /// Runs `command` through the small launcher installed next to airlock (what a session uses
    /// when it is there).
    async fn run(&self, profile: Profile, command: &str) -> ToolOutcome {
        self.run_through(env!("CARGO_BIN_EXE_airlock-sandbox"), profile, command)
            .await
    }

    async fn run_through(&self, launcher: &str, profile: Profile, command: &str) -> ToolOutcome {
        self.run_into(launcher, profile, command, OutputSink::discard())
            .await
    }

    async fn run_into(
        &self,
        launcher: &str,
        profile: Profile,
        command: &str,
        sink: OutputSink,
    ) -> ToolOutcome {
        self.run_plan(launcher, self.plan(profile), command, sink)
            .await
    }

    async fn run_plan(
        &self,
        launcher: &str,
        plan: Plan,
        command: &str,
        sink: OutputSink,
    ) -> ToolOutcome {
        bash::run(BashRun {
            command: command.into(),
            workspace: self.ws(),
            timeout: Duration::from_secs(120),
            cancel: CancellationToken::new(),
            sink,
            log: None,
            log_limits: LogLimits::DEFAULT,
            hidden_env: Vec::new(),
            note: None,
            sandbox: Some(SandboxedRun {
                launcher: PathBuf::from(launcher),
                plan: Some(plan),
            }),
        })
        .await
        .unwrap()
    }
}

fn q(path: &Path) -> String {
    format!("'{}'", path.display())
}

#[tokio::test]
async fn a_sandboxed_command_cannot_read_a_key_under_home_ssh_and_the_result_says_why() {
    let w = World::new();
    let key = w.home().join(".ssh/id_ed25519");
    // Unsandboxed, the same user reads it: the refusal below is the sandbox's.
    assert_eq!(std::fs::read_to_string(&key).unwrap(), SECRET);
    let out = w
        .run(Profile::WorkspaceWrite, &format!("cat {}", q(&key)))
        .await;
    assert_eq!(out.status, ToolStatus::Failed, "{}", out.content);
    assert!(!out.content.contains("planted"), "{}", out.content);
    // Refused by Landlock, or covered (an empty directory over `~/.ssh`) where the launcher
    // made the command a mount namespace.
    assert!(
        out.content.contains("Permission denied")
            || out.content.contains("No such file or directory"),
        "{}",
        out.content
    );
    assert!(
        out.content.contains(&format!(
            "reading {}: a protected place",
            std::fs::canonicalize(&key).unwrap().display()
        )),
        "{}",
        out.content
    );
    // Nor through a link the command makes, nor by listing the directory.
    let out = w
        .run(
            Profile::WorkspaceWrite,
            &format!(
                "ln -s {} k && cat k/id_ed25519; ls {}",
                q(&w.home().join(".ssh")),
                q(&w.home().join(".ssh"))
            ),
        )
        .await;
    assert!(!out.content.contains("planted"), "{}", out.content);
    assert!(!out.content.contains("id_ed25519\n"), "{}", out.content);
}

#[tokio::test]
async fn a_covered_key_cannot_be_uncovered_nor_reached_through_proc() {
    let w = World::new();
    let ssh = w.home().join(".ssh");
    let key = ssh.join("id_ed25519");
    let plan = w.plan(Profile::WorkspaceWrite);
    assert!(plan.covers.contains(&ssh), "{:?}", plan.covers);
    let script = format!(
        "umount {ssh} 2>&1; umount -l {ssh} 2>&1; mount --move {ssh} /mnt 2>&1; \
         python3 -c 'import ctypes, sys; c = ctypes.CDLL(None, use_errno=True); \
         print(\"umount2\", c.umount2(sys.argv[1].encode(), 2), ctypes.get_errno())' {ssh}; \
         cat {key}; cat /proc/self/root{key}; cat /proc/1/root{key}; ls -a {ssh}",
        ssh = q(&ssh),
        key = key.display()
    );
    let out = w
        .run_plan(
            env!("CARGO_BIN_EXE_airlock-sandbox"),
            plan,
            &script,
            OutputSink::discard(),
        )
        .await;
    assert!(!out.content.contains("planted"), "{}", out.content);
    assert!(!out.content.contains("id_ed25519\n"), "{}", out.content);
    // The system call itself is refused (EPERM), not only the umount program.
    assert!(out.content.contains("umount2 -1 1\n"), "{}", out.content);
    assert!(
        out.content
            .contains(&format!("reading {}: a protected place", key.display())),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn where_nothing_is_covered_the_full_walk_still_keeps_the_key_unreadable() {
    let w = World::new();
    let key = w.home().join(".ssh/id_ed25519");
    let mut plan = w.plan(Profile::WorkspaceWrite);
    // What the launcher does where no mount namespace can be made: the walk's own rules.
    plan.covers.clear();
    plan.read_covered.clear();
    let out = w
        .run_plan(
            env!("CARGO_BIN_EXE_airlock-sandbox"),
            plan,
            &format!("cat {}; cat {}", q(&key), q(&w.home().join("notes.txt"))),
            OutputSink::discard(),
        )
        .await;
    assert!(!out.content.contains("planted"), "{}", out.content);
    assert!(out.content.contains("Permission denied"), "{}", out.content);
    assert!(out.content.contains("my notes"), "{}", out.content);
}

#[tokio::test]
async fn a_credential_store_made_during_the_session_is_covered_for_the_next_command() {
    let w = World::new();
    let sandbox = Sandbox::new(
        PathBuf::from(env!("CARGO_BIN_EXE_airlock-sandbox")),
        SandboxPolicy {
            default: Profile::WorkspaceWrite,
            support: Support::current(),
        },
        w.ctx.clone(),
    );
    let first = sandbox.plan(Profile::WorkspaceWrite).unwrap();
    let aws = w.home().join(".aws");
    assert!(!first.covers.contains(&aws));
    std::fs::create_dir_all(&aws).unwrap();
    std::fs::write(aws.join("credentials"), "aws_secret_access_key = planted\n").unwrap();
    let next = sandbox.plan(Profile::WorkspaceWrite).unwrap();
    assert!(next.covers.contains(&aws), "{:?}", next.covers);
    let out = w
        .run_plan(
            env!("CARGO_BIN_EXE_airlock-sandbox"),
            next,
            &format!("cat {}", q(&aws.join("credentials"))),
            OutputSink::discard(),
        )
        .await;
    assert!(!out.content.contains("planted"), "{}", out.content);
}

#[tokio::test]
async fn what_the_sandbox_refused_is_said_in_the_live_output_too_not_only_to_the_model() {
    let w = World::new();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let kept = seen.clone();
    let sink = OutputSink::new(move |_, piece| {
        kept.lock()
            .unwrap()
            .push_str(&String::from_utf8_lossy(piece.text));
    });
    let key = w.home().join(".ssh/id_ed25519");
    let out = w
        .run_into(
            env!("CARGO_BIN_EXE_airlock-sandbox"),
            Profile::WorkspaceWrite,
            &format!("cat {}", q(&key)),
            sink,
        )
        .await;
    let live = seen.lock().unwrap().clone();
    assert!(
        live.contains("[sandbox] this command ran in the sandbox `workspace-write`"),
        "{live}"
    );
    // The model reads it once.
    assert_eq!(
        out.content.matches("[sandbox]").count(),
        1,
        "{}",
        out.content
    );
}

#[tokio::test]
async fn airlock_itself_as_the_launcher_confines_the_same_way_when_the_small_one_is_missing() {
    let w = World::new();
    let key = w.home().join(".ssh/id_ed25519");
    let out = w
        .run_through(
            env!("CARGO_BIN_EXE_airlock"),
            Profile::WorkspaceWrite,
            &format!("cat {}; echo x > {}", q(&key), q(&w.home().join("x"))),
        )
        .await;
    assert!(!out.content.contains("planted"), "{}", out.content);
    assert!(!w.home().join("x").exists());
}

#[tokio::test]
async fn a_sandboxed_command_writes_the_workspace_and_temp_but_nothing_outside_them() {
    let w = World::new();
    let outside = w.home().join("x");
    let out = w
        .run(
            Profile::WorkspaceWrite,
            &format!(
                "echo a > made.txt && mkdir -p src && echo b > src/b.txt && echo c > \"$TMPDIR/c\" \
                 && cat \"$TMPDIR/c\"; echo x > {}",
                q(&outside)
            ),
        )
        .await;
    assert_eq!(
        std::fs::read_to_string(w.ws().join("made.txt")).unwrap(),
        "a\n"
    );
    assert_eq!(
        std::fs::read_to_string(w.ws().join("src/b.txt")).unwrap(),
        "b\n"
    );
    assert!(out.content.contains("c\n"), "{}", out.content);
    assert!(!outside.exists(), "wrote outside: {}", out.content);
    assert!(
        out.content.contains(&format!(
            "writing {}: outside what `workspace-write` may write",
            outside.display()
        )),
        "{}",
        out.content
    );
    assert!(
        out.content.contains("\"sandbox\": \"network\""),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn the_read_only_profile_cannot_write_the_workspace() {
    let w = World::new();
    let out = w.run(Profile::ReadOnly, "echo a > made.txt").await;
    assert_eq!(out.status, ToolStatus::Failed, "{}", out.content);
    assert!(!w.ws().join("made.txt").exists());
    assert!(
        out.content.contains("outside what `read-only` may write"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn a_sandboxed_command_cannot_connect_to_a_listener_on_localhost_but_the_network_profile_can()
{
    let w = World::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let out = w.run(Profile::WorkspaceWrite, &connect).await;
    assert_eq!(out.status, ToolStatus::Failed, "{}", out.content);
    assert!(!out.content.contains("connected\n"), "{}", out.content);
    assert!(
        out.content.contains("refused:\n") && out.content.contains("a network call"),
        "{}",
        out.content
    );
    let out = w.run(Profile::Network, &connect).await;
    assert_eq!(out.status, ToolStatus::Ok, "{}", out.content);
    assert!(out.content.contains("connected\n"), "{}", out.content);
}

#[tokio::test]
async fn a_grandchild_started_with_setsid_and_nohup_is_sandboxed_too() {
    let w = World::new();
    let key = w.home().join(".ssh/id_ed25519");
    let script = format!(
        "setsid nohup bash -c 'cat {key} > leak 2> err; echo x 2>> err > {outside}; echo done > done' \
         > /dev/null 2>&1 < /dev/null & \
         for i in $(seq 200); do test -e done && break; sleep 0.025; done",
        key = key.display(),
        outside = w.home().join("y").display()
    );
    let out = w.run(Profile::WorkspaceWrite, &script).await;
    assert_eq!(out.status, ToolStatus::Ok, "{}", out.content);
    let done = w.ws().join("done");
    for _ in 0..200 {
        if done.exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(done.exists(), "the grandchild never finished");
    assert_eq!(std::fs::read_to_string(w.ws().join("leak")).unwrap(), "");
    let err = std::fs::read_to_string(w.ws().join("err")).unwrap();
    // Refused twice: the key by Landlock or its cover, the write outside by Landlock or by the
    // read-only mount it lies on.
    assert_eq!(
        err.matches("Permission denied").count()
            + err.matches("Read-only file system").count()
            + err.matches("No such file or directory").count(),
        2,
        "{err}"
    );
    assert!(!w.home().join("y").exists());
}

#[tokio::test]
async fn a_sandboxed_command_cannot_signal_the_process_that_started_it() {
    let w = World::new();
    // This test process started the launcher: outside the sandbox. In a PID namespace of its
    // own the command cannot even name it; without one, Landlock's scope refuses the signal.
    let out = w
        .run(
            Profile::WorkspaceWrite,
            &format!("kill -0 {} && echo reached", std::process::id()),
        )
        .await;
    assert!(!out.content.contains("reached"), "{}", out.content);
    assert!(
        out.content.contains("Operation not permitted") || out.content.contains("No such process"),
        "{}",
        out.content
    );
}

/// The processes whose command line holds `marker`, the way `ps` would find them.
fn processes_marked(marker: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
        })
        .count()
}

/// A fork bomb that stops itself: forks sleepers until `fork` fails, says how far it got, and
/// leaves its sleepers behind (`MARKER` in their command line).
const BOMB: &str = r#"import os, sys, time
n = 0
try:
    while n < 3000:
        if os.fork() == 0:
            os.close(1)
            os.close(2)
            time.sleep(60)
            os._exit(0)
        n += 1
except OSError as e:
    print('stopped after', n, 'forks:', e.strerror)
print('forked', n)
"#;

fn bomb_stopped_after(output: &str) -> Option<usize> {
    let line = output.lines().find(|l| l.starts_with("stopped after "))?;
    line.split(' ').nth(2)?.parse().ok()
}

#[tokio::test]
async fn a_fork_bomb_stops_at_the_process_limit_and_nothing_it_started_outlives_the_command() {
    let w = World::new();
    let marker = format!("airlock-bomb-{}", std::process::id());
    std::fs::write(w.ws().join("bomb.py"), BOMB).unwrap();
    let out = w
        .run(
            Profile::WorkspaceWrite,
            &format!("echo pids=$(ls /proc | grep -c '^[0-9]'); python3 bomb.py {marker}"),
        )
        .await;
    let stopped = bomb_stopped_after(&out.content);
    let limit = airlock::sandbox::processes::MAX_PROCESSES as usize;
    assert!(
        stopped.is_some_and(|n| n < limit),
        "the bomb was not stopped by the limit:\n{}",
        out.content
    );
    assert!(
        out.content.contains("Resource temporarily unavailable"),
        "{}",
        out.content
    );
    // Its /proc shows its own processes only (the launcher, bash, `ls`), not the machine's.
    let pids: usize = out
        .content
        .lines()
        .find_map(|l| l.strip_prefix("pids="))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no count of its processes:\n{}", out.content));
    assert!(pids <= 8, "{}", out.content);
    // Every sleeper went with the command (they are killed with its namespace, not waited
    // for: give the kernel a moment to take them).
    let mut left = processes_marked(&marker);
    for _ in 0..100 {
        if left == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        left = processes_marked(&marker);
    }
    assert_eq!(left, 0, "sleepers outlived the command");
}

#[test]
fn an_unprivileged_users_fork_bomb_stops_at_the_process_limit_too() {
    let Ok(setpriv) = which("setpriv") else {
        panic!("setpriv (util-linux) is needed for this test");
    };
    let dir = tempfile::tempdir().unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::write(dir.path().join("bomb.py"), BOMB).unwrap();
    let marker = format!("airlock-user-bomb-{}", std::process::id());
    let out = std::process::Command::new(setpriv)
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_airlock-sandbox"))
        .args(["--read", "/", "--write", "/dev/null", "--", "python3"])
        .arg(dir.path().join("bomb.py"))
        .arg(&marker)
        .current_dir("/")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let limit = airlock::sandbox::processes::MAX_PROCESSES as usize;
    assert!(
        bomb_stopped_after(&stdout).is_some_and(|n| n < limit),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Without a PID namespace the sleepers are not killed with it: this test takes them.
    let _ = std::process::Command::new("pkill")
        .args(["-9", "-f", &marker])
        .status();
}

#[tokio::test]
async fn the_demo_project_builds_and_tests_inside_the_sandbox() {
    let w = World::new();
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo-workspace");
    for entry in std::fs::read_dir(&demo).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), w.ws().join(entry.file_name())).unwrap();
    }
    let out = w
        .run(
            Profile::WorkspaceWrite,
            "python3 -m py_compile calc.py && python3 -m unittest -v 2>&1; test -d __pycache__ && echo compiled",
        )
        .await;
    // The demo's test fails on purpose (`add` subtracts): it ran, in the sandbox, to the end.
    assert!(out.content.contains("Ran "), "{}", out.content);
    assert!(out.content.contains("compiled"), "{}", out.content);
    assert!(!out.content.contains("[sandbox]"), "{}", out.content);
}

#[test]
fn an_unprivileged_user_is_sandboxed_too_network_included() {
    let Ok(setpriv) = which("setpriv") else {
        panic!("setpriv (util-linux) is needed for this test");
    };
    let dir = tempfile::tempdir().unwrap();
    let hidden = dir.path().join("hidden");
    std::fs::create_dir_all(&hidden).unwrap();
    std::fs::write(hidden.join("f"), "x").unwrap();
    let open = |p: &Path| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    open(dir.path());
    open(&hidden);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let out = std::process::Command::new(setpriv)
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_airlock"))
        .args([
            "__sandbox",
            "--no-network",
            "--read",
            "/usr",
            "--read",
            "/bin",
        ])
        .args(["--read", "/lib", "--read", "/lib64", "--read", "/etc"])
        .args(["--write", "/dev/null", "--", "bash", "-c"])
        .arg(format!(
            "id -u; cat {}/f; exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected",
            hidden.display()
        ))
        .current_dir("/")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stdout.lines().next(), Some("65534"), "{stdout}{stderr}");
    assert!(!stdout.contains("connected"), "{stdout}{stderr}");
    assert!(!stdout.contains('x'), "{stdout}{stderr}");
    assert!(stderr.contains("Permission denied"), "{stderr}");
}

#[test]
fn the_launcher_refuses_to_run_anything_it_cannot_confine() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_airlock"))
        .args([
            "__sandbox",
            "--read",
            "/",
            "--bogus",
            "--",
            "touch",
            "/tmp/never",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing ran"));
}

fn which(name: &str) -> Result<PathBuf, ()> {
    std::env::var_os("PATH")
        .and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        })
        .ok_or(())
}

/// The sandbox's cost per command, for BENCHMARKS.md (not a pass/fail test):
/// `AIRLOCK_BENCH_BIN=target/release/airlock cargo test --release --test sandbox -- --ignored --nocapture`.
#[test]
#[ignore]
fn sandbox_set_up_cost_per_command() {
    let w = World::new();
    let bin = std::env::var("AIRLOCK_BENCH_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_BIN_EXE_airlock")));
    let rounds = 41;
    let median = |mut v: Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        (v[v.len() / 2], v[v.len() / 10], v[v.len() * 9 / 10])
    };
    let time = |f: &mut dyn FnMut()| {
        let t = std::time::Instant::now();
        f();
        t.elapsed().as_secs_f64() * 1000.0
    };
    let (mut plan_ms, mut direct_ms, mut sandboxed_ms) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let mut plan = None;
        plan_ms.push(time(&mut || plan = Some(w.plan(Profile::WorkspaceWrite))));
        let plan = plan.unwrap();
        direct_ms.push(time(&mut || {
            let s = std::process::Command::new("bash")
                .args(["-c", "true"])
                .status()
                .unwrap();
            assert!(s.success());
        }));
        sandboxed_ms.push(time(&mut || {
            let s = std::process::Command::new(&bin)
                .args(plan.launcher_args())
                .args(["--", "bash", "-c", "true"])
                .status()
                .unwrap();
            assert!(s.success());
        }));
    }
    let plan = w.plan(Profile::WorkspaceWrite);
    println!(
        "rules: {} read, {} write; plan {:?} ms; bash -c true {:?} ms; through the launcher {:?} ms (median, p10, p90 of {rounds})",
        plan.read.len(),
        plan.write.len(),
        median(plan_ms),
        median(direct_ms),
        median(sandboxed_ms)
    );
}

#[tokio::test]
async fn a_sandboxed_command_reaches_no_terminal_and_no_other_device_but_its_own_streams_work() {
    let w = World::new();
    let out = w
        .run(
            Profile::WorkspaceWrite,
            "tty; cat /dev/tty; ls /dev/pts; echo x > /dev/console; ls /dev; \
             echo streams-ok > /dev/stdout; cat <(echo substitution-ok); \
             head -c 4 /dev/urandom | wc -c; echo null-ok > /dev/null && echo wrote-null",
        )
        .await;
    let text = &out.content;
    assert!(text.contains("not a tty"), "{text}");
    assert!(!text.contains("ptmx"), "{text}");
    for refused in [
        "/dev/tty",
        "/dev/pts",
        "/dev/console",
        "cannot open directory '/dev'",
    ] {
        assert!(
            text.lines().any(|l| l.contains(refused)
                && (l.contains("No such device") || l.contains("Permission denied"))),
            "{refused} was not refused:\n{text}"
        );
    }
    for works in ["streams-ok", "substitution-ok", "wrote-null"] {
        assert!(text.contains(works), "{works}:\n{text}");
    }
    assert!(text.lines().any(|l| l.trim() == "4"), "{text}");
}

#[tokio::test]
async fn a_sandboxed_command_cannot_make_device_files_or_use_roots_capabilities() {
    let w = World::new();
    let out = w
        .run(
            Profile::WorkspaceWrite,
            "mknod blk b 8 0; mknod chr c 1 3; mkfifo fifo && echo fifo-ok; \
             hostname \"$(hostname)\" && echo HOSTNAME-SET",
        )
        .await;
    let text = &out.content;
    assert!(
        !w.ws().join("blk").exists() && !w.ws().join("chr").exists(),
        "{text}"
    );
    assert!(text.contains("fifo-ok"), "a fifo is not a device: {text}");
    assert!(!text.contains("HOSTNAME-SET"), "{text}");
}

#[tokio::test]
async fn an_unconfined_command_still_starts_in_a_session_of_its_own() {
    let w = World::new();
    let out = bash::run(BashRun {
        command: "echo sid=$(ps -o sid= -p $$ | tr -d ' '); echo tty=$(ps -o tty= -p $$ | tr -d ' '); echo me=$$".into(),
        workspace: w.ws(),
        timeout: Duration::from_secs(60),
        cancel: CancellationToken::new(),
        sink: OutputSink::discard(),
        log: None,
        log_limits: LogLimits::DEFAULT,
        hidden_env: Vec::new(),
        note: None,
        sandbox: Some(SandboxedRun {
            launcher: PathBuf::from(env!("CARGO_BIN_EXE_airlock-sandbox")),
            plan: None,
        }),
    })
    .await
    .unwrap();
    let field = |name: &str| {
        out.content
            .lines()
            .find_map(|l| l.trim().strip_prefix(name))
            .unwrap_or_else(|| panic!("no {name} in {}", out.content))
            .to_owned()
    };
    assert_eq!(
        field("sid="),
        field("me="),
        "the shell leads its own session: {}",
        out.content
    );
    assert_eq!(field("tty="), "?", "and has no terminal: {}", out.content);
}

#[tokio::test]
async fn the_files_airlock_reads_as_policy_are_read_only_to_a_command_whatever_route_it_takes() {
    let mut w = World::new();
    let ws = w.ws();
    std::fs::create_dir_all(ws.join(".airlock")).unwrap();
    std::fs::create_dir_all(ws.join("pol/deep")).unwrap();
    std::fs::write(ws.join(".airlock/config.toml"), "mode = \"default\"\n").unwrap();
    std::fs::write(ws.join("pol/deep/ws-rules.toml"), "deny = []\n").unwrap();
    w.ctx = w.ctx.clone().with_protected_files(&[
        ws.join(".airlock/config.toml"),
        ws.join("pol/deep/ws-rules.toml"),
    ]);
    let out = w
        .run(
            Profile::WorkspaceWrite,
            "python3 -c \"open('pol/deep/ws-'+'rules.toml','w').write('allow = [1]')\"; \
             echo 'mode = \"auto-edit\"' >> .airlock/config.toml; \
             rm -f pol/deep/ws-rules.toml; mv pol pol2; mv pol/deep pol/d2; mv .airlock .a2; \
             ln pol/deep/ws-rules.toml hardlink; \
             echo x > pol/deep/other.toml && echo neighbour-ok; touch top-ok && echo top-ok",
        )
        .await;
    let text = &out.content;
    assert_eq!(
        std::fs::read_to_string(ws.join("pol/deep/ws-rules.toml")).unwrap(),
        "deny = []\n",
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join(".airlock/config.toml")).unwrap(),
        "mode = \"default\"\n",
        "{text}"
    );
    assert!(
        !ws.join("pol2").exists() && !ws.join(".a2").exists(),
        "{text}"
    );
    assert!(!ws.join("pol/d2").exists(), "{text}");
    assert!(!ws.join("hardlink").exists(), "{text}");
    // The rest of the workspace is as writable as before, next to the policy files too.
    assert!(
        text.contains("neighbour-ok") && text.contains("top-ok"),
        "{text}"
    );
}

#[tokio::test]
async fn a_sandboxed_command_cannot_drive_the_users_tmux_server() {
    let w = World::new();
    let dir = PathBuf::from(format!(
        "/tmp/tmux-airlock-sandbox-test-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let socket = dir.join("default");
    let tmux = |args: &[&str]| {
        std::process::Command::new("tmux")
            .arg("-S")
            .arg(&socket)
            .args(["-f", "/dev/null"])
            .args(args)
            .output()
            .expect("tmux is installed (.ci/run installs it)")
    };
    assert!(tmux(&["new-session", "-d", "sleep 60"]).status.success());
    let outside = w.root.path().join("outside-marker");
    let out = w
        .run(
            Profile::WorkspaceWrite,
            &format!(
                "tmux -S {} run-shell 'touch {}'; echo tried",
                q(&socket),
                q(&outside)
            ),
        )
        .await;
    tmux(&["kill-server"]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.content.contains("tried"), "{}", out.content);
    assert!(
        !outside.exists(),
        "tmux ran a command outside the sandbox: {}",
        out.content
    );
}

#[tokio::test]
async fn modes_owners_and_times_outside_the_write_roots_cannot_be_changed() {
    let w = World::new();
    let key = w.home().join(".ssh/id_ed25519");
    let notes = w.home().join("notes.txt");
    std::fs::write(&notes, "n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    let before = |p: &Path| std::fs::metadata(p).unwrap();
    let (key_before, notes_before) = (before(&key), before(&notes));
    let home_before = before(&w.home());
    let out = w
        .run(
            Profile::WorkspaceWrite,
            &format!(
                "chmod 644 {key}; chmod 777 {home}; chown nobody {notes}; touch -d 2001-01-01 {notes}; \
                 setfattr -n user.x -v 1 {notes} 2>/dev/null; \
                 touch mine && chmod 755 mine && touch -d 2001-01-01 mine && echo own-ok",
                key = q(&key),
                home = q(&w.home()),
                notes = q(&notes)
            ),
        )
        .await;
    use std::os::unix::fs::MetadataExt;
    let (key_after, notes_after) = (before(&key), before(&notes));
    assert_eq!(key_after.mode(), key_before.mode(), "{}", out.content);
    assert_eq!(
        before(&w.home()).mode(),
        home_before.mode(),
        "{}",
        out.content
    );
    assert_eq!(notes_after.uid(), notes_before.uid(), "{}", out.content);
    assert_eq!(notes_after.mtime(), notes_before.mtime(), "{}", out.content);
    // In the workspace, the same changes work.
    assert!(out.content.contains("own-ok"), "{}", out.content);
}

#[test]
fn an_unprivileged_users_covered_key_is_not_reached_through_another_of_its_processes_roots() {
    let Ok(setpriv) = which("setpriv") else {
        panic!("setpriv (util-linux) is needed for this test");
    };
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret");
    std::fs::create_dir_all(&secret).unwrap();
    std::fs::write(secret.join("key"), "planted\n").unwrap();
    std::fs::write(dir.path().join("open.txt"), "beside it\n").unwrap();
    let token = dir.path().join("token.txt");
    std::fs::write(&token, "planted token\n").unwrap();
    let open = |p: &Path, mode| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    open(dir.path(), 0o755);
    open(&secret, 0o755);
    open(&secret.join("key"), 0o644);
    open(&dir.path().join("open.txt"), 0o644);
    open(&token, 0o644);
    let as_nobody = || {
        let mut command = std::process::Command::new(&setpriv);
        command.args(["--reuid=65534", "--regid=65534", "--clear-groups"]);
        command
    };
    // A process of the same user outside any sandbox, whose root sees the key uncovered.
    let mut outside = as_nobody().args(["sleep", "60"]).spawn().unwrap();
    let key = secret.join("key");
    let out = as_nobody()
        .arg(env!("CARGO_BIN_EXE_airlock"))
        .args(["__sandbox", "--no-network", "--read-covered", "/"])
        .args([
            "--read", "/usr", "--read", "/bin", "--read", "/lib", "--read", "/lib64",
        ])
        .arg("--cover")
        .arg(&secret)
        .arg("--cover")
        .arg(&token)
        .args(["--write", "/dev/null", "--", "bash", "-c"])
        .arg(format!(
            "cat {open}; cat {token}; cat {key}; cat /proc/{pid}/root{key}; \
             cat /proc/{pid}/cwd/../..{key}",
            open = dir.path().join("open.txt").display(),
            token = token.display(),
            key = key.display(),
            pid = outside.id()
        ))
        .current_dir("/")
        .output()
        .unwrap();
    let _ = outside.kill();
    let _ = outside.wait();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stdout.contains("planted"), "{stdout}{stderr}");
    // The covered reads were in force (the file beside the cover is read under them, and the
    // full walk's rules would not grant it): the key was covered, not merely left out.
    assert!(stdout.contains("beside it"), "{stdout}{stderr}");
    // A covered file is refused as Landlock would refuse it, not read as empty.
    assert!(
        stderr.contains(&format!("{}: Permission denied", token.display())),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("Permission denied").count()
            + stderr.matches("No such file or directory").count(),
        4,
        "{stderr}"
    );
}
