//! The `airlock` binary: parses the command line and hands each subcommand to its function in
//! `airlock::cli`; this file only prints what they return and maps errors to exit codes.

use std::future::Future;
use std::io::{self, IsTerminal};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;

use airlock::cli::{
    ApprovalsCommand, AuditCommand, Cli, Command, ConfigCommand, McpCommand, PolicyCheckArgs,
    PolicyCommand, StateCommand, audit_verify, exec, park, policy_check,
};

fn main() -> ExitCode {
    // The sandbox launcher: first, so a sandboxed command starts without airlock's start-up.
    if std::env::args_os().nth(1).as_deref()
        == Some(std::ffi::OsStr::new(airlock::sandbox::LAUNCHER_ARG))
    {
        return airlock::sandbox::launcher::main(std::env::args_os().skip(2));
    }
    // Before anything else, so no key read later is ever readable from another process.
    if let Err(e) = airlock::harden::harden_process() {
        eprintln!("airlock: {e}");
        return ExitCode::from(2);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return refused_arguments(error),
    };
    match dispatch(cli) {
        Ok(code) => code,
        // The reader went away (`airlock sessions | head`): nothing more to say to it.
        Err(error) if closed_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("airlock: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// Says what was wrong with the command line (clap's words), and for a first word that is no
/// subcommand, most likely a prompt (`airlock "fix the tests"`), where a prompt goes.
fn refused_arguments(error: clap::Error) -> ExitCode {
    use clap::error::{ContextKind, ErrorKind};
    let prompt = error.kind() == ErrorKind::InvalidSubcommand
        && error
            .get(ContextKind::InvalidSubcommand)
            .is_some_and(|word| word.to_string().contains(' '));
    let code = error.exit_code();
    let _ = error.print();
    if prompt {
        eprintln!(
            "\nA prompt is not a subcommand: `airlock exec \"PROMPT\"` runs it without the cockpit \
             (add --human for readable text, --provider and --model for a real model), and in \
             the cockpit (`airlock`) you type it."
        );
    }
    ExitCode::from(u8::try_from(code).unwrap_or(2))
}

/// Whether `error` comes from writing to a pipe whose reader has closed it.
fn closed_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// Runs the subcommand `cli` names (none: the cockpit or the demo).
fn dispatch(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        None if is_terminal() => open_cockpit(
            cli.workspace,
            cli.resume,
            cli.accept_changed_policy,
            cli.scenario,
            cli.config,
        ),
        None if cli.resume.is_some() => Err(anyhow::anyhow!(
            "--resume reopens a cockpit session, which needs a terminal; run it in one"
        )),
        // Without a terminal `airlock` plays the offline demo as text: a model named on the
        // command line would be silently ignored, so it is refused with what to run instead.
        None if cli.config.provider.is_some() || cli.config.model.is_some() => {
            Err(anyhow::anyhow!(
                "without a terminal, `airlock` only plays the offline demo, so --provider/--model are not used; \
             to run a model without the cockpit, give the prompt to `airlock exec`: \
             airlock exec --provider ... --model ... --human \"PROMPT\""
            ))
        }
        None => play_demo(),
        Some(Command::Policy {
            command: PolicyCommand::Check(args),
        }) => check_policy(&args),
        Some(Command::Exec(args)) => {
            block_on(exec::run(args, io::stdout().lock())).map(ExitCode::from)
        }
        Some(Command::Config {
            command: ConfigCommand::Show { workspace, config },
        }) => show_config(workspace, &config),
        Some(Command::Approvals {
            command: ApprovalsCommand::List,
        }) => park::list(&mut io::stdout().lock()).map(|()| ExitCode::SUCCESS),
        Some(Command::Approve {
            code,
            session,
            resume,
            hunks,
            command,
        }) => approve(&code, session, resume, park::change_given(hunks, command)?),
        Some(Command::Deny { code, reason }) => deny(&code, reason),
        Some(Command::Inbox) => {
            airlock::cli::inbox::print(&mut io::stdout().lock()).map(|()| ExitCode::SUCCESS)
        }
        Some(Command::Undo {
            session,
            call,
            and_later,
            yes,
            overwrite,
        }) => airlock::cli::undo::run(
            airlock::cli::undo::UndoArgs {
                session,
                call,
                and_later,
                yes,
                overwrite,
            },
            &mut io::stdin().lock(),
            &mut io::stdout().lock(),
        )
        .map(ExitCode::from),
        Some(Command::Sessions) => {
            airlock::cli::sessions::list(&mut io::stdout().lock()).map(|()| ExitCode::SUCCESS)
        }
        Some(Command::Resume {
            run,
            accept_changed_policy,
        }) => block_on(park::resume(
            &run,
            accept_changed_policy,
            &mut io::stdout().lock(),
        ))
        .map(ExitCode::from),
        Some(Command::BenchCockpit(args)) => bench_cockpit(args),
        Some(Command::Mcp { command }) => mcp(command),
        Some(Command::Hooks { command }) => hooks(command),
        Some(Command::Trust { workspace }) => trust_project(workspace),
        Some(Command::State {
            command: StateCommand::Check,
        }) => airlock::cli::state::check(&airlock::cli::runs::db_path(), &mut io::stdout()).map(
            |whole| {
                if whole {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::FAILURE
                }
            },
        ),
        Some(Command::State {
            command: StateCommand::Repair,
        }) => airlock::cli::state::repair(&airlock::cli::runs::db_path(), &mut io::stdout())
            .map(|()| ExitCode::SUCCESS),
        Some(Command::Audit {
            command: AuditCommand::Show { run },
        }) => show_audit(run.as_deref()),
        Some(Command::Audit {
            command: AuditCommand::Verify { file },
        }) => verify_audit(&file),
    }
}

fn is_terminal() -> bool {
    io::stdout().is_terminal() && io::stdin().is_terminal()
}

/// Runs `future` to its end on a new runtime.
fn block_on<T>(future: impl Future<Output = Result<T>>) -> Result<T> {
    tokio::runtime::Runtime::new()?.block_on(future)
}

/// No subcommand, in a terminal: the cockpit (on the offline demo when no model is configured),
/// or a kept session reopened with `--resume`.
fn open_cockpit(
    workspace: Option<PathBuf>,
    resume: Option<String>,
    accept_changed_policy: bool,
    scenario: Option<PathBuf>,
    config: airlock::config::ConfigFlags,
) -> Result<ExitCode> {
    let rt = tokio::runtime::Runtime::new()?;
    let reopen = match resume.as_deref() {
        Some(id) => Some(airlock::cli::sessions::reopen(
            Some(id).filter(|id| !id.is_empty()),
            &config,
            accept_changed_policy,
        )?),
        None => None,
    };
    let args = exec::ExecArgs {
        workspace,
        config,
        scenario,
        ..exec::ExecArgs::default()
    };
    rt.block_on(cockpit(args, reopen))?;
    Ok(ExitCode::SUCCESS)
}

/// No subcommand and not a terminal: play the offline demo, readably.
fn play_demo() -> Result<ExitCode> {
    let args = exec::ExecArgs {
        human: true,
        ..exec::ExecArgs::default()
    };
    block_on(exec::run(args, io::stdout().lock())).map(ExitCode::from)
}

/// `airlock policy check`: verdicts on standard output, the tally on standard error; malformed
/// lines make the exit status 2.
fn check_policy(args: &PolicyCheckArgs) -> Result<ExitCode> {
    if io::stdin().is_terminal() {
        eprintln!("airlock policy check: reading JSON lines from standard input (Ctrl-D to end)");
    }
    let summary = policy_check::run(args, io::stdin().lock(), io::stdout().lock())?;
    eprintln!(
        "{} allow, {} ask, {} deny, {} malformed",
        summary.allow, summary.ask, summary.deny, summary.errors
    );
    Ok(if summary.errors > 0 {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

fn show_config(
    workspace: Option<PathBuf>,
    flags: &airlock::config::ConfigFlags,
) -> Result<ExitCode> {
    let workspace = match workspace {
        Some(w) => w,
        None => std::env::current_dir()?,
    };
    let env = airlock::config::ProcessEnv;
    let resolved = airlock::config::resolve(&workspace, flags, &env, &airlock::store::state_dir())?;
    print!("{}", airlock::visible::visible(&resolved.show(&env)));
    Ok(ExitCode::SUCCESS)
}

/// `airlock approve CODE`, and with `--resume` the run it belongs to.
fn approve(
    code: &str,
    session: bool,
    resume: bool,
    change: Option<airlock::protocol::Amendment>,
) -> Result<ExitCode> {
    let text = park::decide(code, true, session, None, change)?;
    eprintln!("{text}");
    if !resume {
        return Ok(ExitCode::SUCCESS);
    }
    let db = airlock::store::db::Store::open(&airlock::cli::runs::db_path())?;
    let run = db
        .approval_by_code(code)?
        .map(|a| a.run_id)
        .unwrap_or_default();
    // A cockpit's request: reopen that cockpit, where the call is judged again and runs.
    match airlock::cli::sessions::cockpit_session(&db, &run) {
        Some(true) => return Ok(ExitCode::SUCCESS),
        Some(false) if is_terminal() => {
            drop(db);
            let reopen = airlock::cli::sessions::reopen(Some(&run), &Default::default(), false)?;
            return block_on(cockpit(exec::ExecArgs::default(), Some(reopen)))
                .map(|()| ExitCode::SUCCESS);
        }
        Some(false) => {
            return Err(anyhow::anyhow!(
                "{} is a cockpit session: reopen it in a terminal with `airlock --resume {}`",
                airlock::visible::visible_line(&run),
                airlock::visible::visible_line(&run)
            ));
        }
        None => {}
    }
    block_on(park::resume(&run, false, &mut io::stdout().lock())).map(ExitCode::from)
}

fn deny(code: &str, reason: Option<String>) -> Result<ExitCode> {
    let text = park::decide(code, false, false, reason, None)?;
    eprintln!("{text}");
    Ok(ExitCode::SUCCESS)
}

fn bench_cockpit(args: airlock::cli::bench::BenchArgs) -> Result<ExitCode> {
    let measured = block_on(airlock::cli::bench::run(args))?;
    println!("{measured}");
    Ok(ExitCode::SUCCESS)
}

fn mcp(command: McpCommand) -> Result<ExitCode> {
    block_on(async {
        match command {
            McpCommand::List { workspace } => {
                let failed = airlock::cli::mcp::list(workspace, &mut io::stdout()).await?;
                Ok(if failed > 0 {
                    ExitCode::FAILURE
                } else {
                    ExitCode::SUCCESS
                })
            }
            McpCommand::Accept { name, workspace } => {
                airlock::cli::mcp::accept(&name, workspace, &mut io::stdout())
                    .await
                    .map(|()| ExitCode::SUCCESS)
            }
        }
    })
}

/// `airlock hooks list` / `airlock hooks test EVENT`.
fn hooks(command: airlock::cli::HooksCommand) -> Result<ExitCode> {
    use airlock::cli::HooksCommand;
    let (workspace, event) = match command {
        HooksCommand::List { workspace } => (workspace, None),
        HooksCommand::Test { event, workspace } => (workspace, Some(event)),
    };
    let workspace = match workspace {
        Some(w) => w,
        None => std::env::current_dir()?,
    };
    let state = airlock::store::state_dir();
    let env = airlock::config::ProcessEnv;
    let config = airlock::config::resolve(
        &workspace,
        &airlock::config::ConfigFlags::default(),
        &env,
        &state,
    )?;
    let mut out = io::stdout().lock();
    match event {
        None => {
            airlock::cli::hooks::list(&config, &state, &mut out)?;
            Ok(ExitCode::SUCCESS)
        }
        Some(event) => {
            let code = block_on(airlock::cli::hooks::test(
                &config,
                &state,
                &event,
                &workspace,
                &mut io::stdin().lock(),
                &mut out,
            ))?;
            Ok(ExitCode::from(code))
        }
    }
}

fn trust_project(workspace: Option<PathBuf>) -> Result<ExitCode> {
    let workspace = match workspace {
        Some(w) => w,
        None => std::env::current_dir()?,
    };
    let text = airlock::config::trust::trust_project(&airlock::store::state_dir(), &workspace)?;
    print!("{text}");
    Ok(ExitCode::SUCCESS)
}

fn show_audit(run: Option<&str>) -> Result<ExitCode> {
    airlock::cli::audit_show::run(
        &airlock::store::audit_dir(&airlock::store::state_dir()),
        run,
        Some(&airlock::cli::runs::db_path()),
        &mut io::stdout().lock(),
    )?;
    Ok(ExitCode::SUCCESS)
}

fn verify_audit(file: &std::path::Path) -> Result<ExitCode> {
    let report = audit_verify::run(file)?;
    println!("{report}");
    Ok(ExitCode::SUCCESS)
}

/// The cockpit, new or reopened (`--resume`).
async fn cockpit(
    args: exec::ExecArgs,
    reopen: Option<airlock::cli::sessions::Reopened>,
) -> Result<()> {
    let (started, first) = match reopen {
        Some(r) => {
            let started = exec::start_with(&r.args, None, Some(r.session), Some(r.resume))?;
            (started, None)
        }
        None => {
            let started = exec::start(&args, None)?;
            let first = started.opening_prompt(args.scenario.is_some());
            (started, first)
        }
    };
    let status = started.status();
    let session = started.session.clone();
    let journal = started.journal.clone();
    let mut notices = started.notices;
    if first.is_none() && journal.is_some() {
        notices.push(format!(
            "session {} (kept as it goes: `airlock --resume {}` reopens it after a quit or a crash)",
            airlock::visible::visible_line(&session),
            airlock::visible::visible_line(&session)
        ));
    }
    // The approval page, served while the cockpit runs (`--remote`, `[remote] enabled`).
    let page = match started.remote.clone() {
        Some(settings) => {
            let page = std::sync::Arc::new(airlock::cli::remote::start(settings).await?);
            notices.push(format!(
                "approval page at {}: F6 shows a code to pair a phone with it, and the paired devices",
                airlock::visible::visible_line(&page.origin)
            ));
            Some(page)
        }
        None => None,
    };
    let inbox = std::sync::Arc::new(airlock::cli::inbox::StateInbox::new(
        airlock::cli::runs::db_path(),
        Some(session.clone()),
    ));
    let (hooks, workspace) = (started.hooks.clone(), started.workspace.clone());
    airlock::cli::hooks::session_event(
        hooks.as_ref(),
        airlock::protocol::HookEvent::SessionStart,
        &session,
        &workspace,
    )
    .await;
    let result = airlock::ui::run(
        started.handle,
        status,
        first,
        notices,
        started.notify,
        airlock::ui::Sources {
            inbox: Some(inbox),
            undo: started
                .history
                .clone()
                .map(|h| h as std::sync::Arc<dyn airlock::protocol::UndoSource>),
            remote: page
                .clone()
                .map(|p| p as std::sync::Arc<dyn airlock::protocol::RemotePairing>),
        },
    )
    .await;
    drop(page);
    airlock::cli::hooks::session_event(
        hooks.as_ref(),
        airlock::protocol::HookEvent::Stop,
        &session,
        &workspace,
    )
    .await;
    if let Some(journal) = journal {
        journal.close();
        println!(
            "session {} kept; reopen it with: airlock --resume {}",
            airlock::visible::visible_line(&session),
            airlock::visible::visible_line(&session)
        );
    }
    if let Ok(path) = std::env::var("AIRLOCK_EXIT_STATUS_FILE") {
        let _ = std::fs::write(path, if result.is_ok() { "0\n" } else { "1\n" });
    }
    result
}
