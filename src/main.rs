use std::io::{self, IsTerminal};
use std::process::ExitCode;

use clap::Parser;

use airlock::cli::{
    ApprovalsCommand, AuditCommand, Cli, Command, ConfigCommand, PolicyCommand, audit_verify, exec,
    park, policy_check,
};

/// The cockpit, new or reopened (`--resume`).
async fn cockpit(
    args: exec::ExecArgs,
    reopen: Option<airlock::cli::sessions::Reopened>,
) -> anyhow::Result<()> {
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
    let result = airlock::ui::run(started.handle, status, first, notices).await;
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

fn config_show(
    workspace: Option<std::path::PathBuf>,
    flags: &airlock::config::ConfigFlags,
) -> anyhow::Result<String> {
    let workspace = match workspace {
        Some(w) => w,
        None => std::env::current_dir()?,
    };
    let env = airlock::config::ProcessEnv;
    let resolved = airlock::config::resolve(&workspace, flags, &env, &airlock::store::state_dir())?;
    Ok(resolved.show(&env))
}

fn trust(workspace: Option<std::path::PathBuf>) -> anyhow::Result<String> {
    let workspace = match workspace {
        Some(w) => w,
        None => std::env::current_dir()?,
    };
    airlock::config::trust::trust_project(&airlock::store::state_dir(), &workspace)
}

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
    let cli = Cli::parse();
    let result = match cli.command {
        None if io::stdout().is_terminal() && io::stdin().is_terminal() => {
            // The cockpit, on the offline demo (no model is configured yet).
            tokio::runtime::Runtime::new()
                .map_err(anyhow::Error::from)
                .and_then(|rt| {
                    let reopen = match cli.resume.as_deref() {
                        Some(id) => Some(airlock::cli::sessions::reopen(
                            Some(id).filter(|id| !id.is_empty()),
                            &cli.config,
                        )?),
                        None => None,
                    };
                    rt.block_on(cockpit(
                        exec::ExecArgs {
                            workspace: cli.workspace.clone(),
                            config: cli.config.clone(),
                            scenario: cli.scenario.clone(),
                            ..exec::ExecArgs::default()
                        },
                        reopen,
                    ))
                })
                .map(|()| ExitCode::SUCCESS)
        }
        None if cli.resume.is_some() => Err(anyhow::anyhow!(
            "--resume reopens a cockpit session, which needs a terminal; run it in one"
        )),
        None => {
            // Not a terminal: play the offline demo, readably.
            let args = exec::ExecArgs {
                human: true,
                ..exec::ExecArgs::default()
            };
            tokio::runtime::Runtime::new()
                .map_err(anyhow::Error::from)
                .and_then(|rt| rt.block_on(exec::run(args, io::stdout().lock())))
                .map(ExitCode::from)
        }
        Some(Command::Policy {
            command: PolicyCommand::Check(args),
        }) => {
            if io::stdin().is_terminal() {
                eprintln!(
                    "airlock policy check: reading JSON lines from standard input (Ctrl-D to end)"
                );
            }
            policy_check::run(&args, io::stdin().lock(), io::stdout().lock()).map(|summary| {
                eprintln!(
                    "{} allow, {} ask, {} deny, {} malformed",
                    summary.allow, summary.ask, summary.deny, summary.errors
                );
                if summary.errors > 0 {
                    ExitCode::from(2)
                } else {
                    ExitCode::SUCCESS
                }
            })
        }
        Some(Command::Exec(args)) => tokio::runtime::Runtime::new()
            .map_err(anyhow::Error::from)
            .and_then(|rt| rt.block_on(exec::run(args, io::stdout().lock())))
            .map(ExitCode::from),
        Some(Command::Config {
            command: ConfigCommand::Show { workspace, config },
        }) => config_show(workspace, &config).map(|text| {
            print!("{}", airlock::visible::visible(&text));
            ExitCode::SUCCESS
        }),
        Some(Command::Approvals {
            command: ApprovalsCommand::List,
        }) => park::list(&mut io::stdout().lock()).map(|()| ExitCode::SUCCESS),
        Some(Command::Approve {
            code,
            session,
            resume,
        }) => park::decide(&code, true, session, None).and_then(|text| {
            eprintln!("{text}");
            if !resume {
                return Ok(ExitCode::SUCCESS);
            }
            let db = airlock::store::db::Store::open(&airlock::cli::runs::db_path())?;
            let run = db
                .approval_by_code(&code)?
                .map(|a| a.run_id)
                .unwrap_or_default();
            // A cockpit's request: reopen that cockpit, where the call is judged again and runs.
            match airlock::cli::sessions::cockpit_session(&db, &run) {
                Some(true) => return Ok(ExitCode::SUCCESS),
                Some(false) if io::stdout().is_terminal() && io::stdin().is_terminal() => {
                    drop(db);
                    let reopen = airlock::cli::sessions::reopen(Some(&run), &Default::default())?;
                    return tokio::runtime::Runtime::new()?
                        .block_on(cockpit(exec::ExecArgs::default(), Some(reopen)))
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
            tokio::runtime::Runtime::new()?
                .block_on(park::resume(&run, &mut io::stdout().lock()))
                .map(ExitCode::from)
        }),
        Some(Command::Deny { code, reason }) => {
            park::decide(&code, false, false, reason).map(|text| {
                eprintln!("{text}");
                ExitCode::SUCCESS
            })
        }
        Some(Command::Sessions) => {
            airlock::cli::sessions::list(&mut io::stdout().lock()).map(|()| ExitCode::SUCCESS)
        }
        Some(Command::Resume { run }) => tokio::runtime::Runtime::new()
            .map_err(anyhow::Error::from)
            .and_then(|rt| rt.block_on(park::resume(&run, &mut io::stdout().lock())))
            .map(ExitCode::from),
        Some(Command::BenchCockpit(args)) => tokio::runtime::Runtime::new()
            .map_err(anyhow::Error::from)
            .and_then(|rt| rt.block_on(airlock::cli::bench::run(args)))
            .map(|measured| {
                println!("{measured}");
                ExitCode::SUCCESS
            }),
        Some(Command::Mcp { command }) => tokio::runtime::Runtime::new()
            .map_err(anyhow::Error::from)
            .and_then(|rt| {
                rt.block_on(async {
                    match command {
                        airlock::cli::McpCommand::List { workspace } => {
                            airlock::cli::mcp::list(workspace, &mut io::stdout()).await
                        }
                        airlock::cli::McpCommand::Accept { name, workspace } => {
                            airlock::cli::mcp::accept(&name, workspace, &mut io::stdout()).await
                        }
                    }
                })
            })
            .map(|()| ExitCode::SUCCESS),
        Some(Command::Trust { workspace }) => trust(workspace).map(|text| {
            print!("{text}");
            ExitCode::SUCCESS
        }),
        Some(Command::Audit {
            command: AuditCommand::Show { run },
        }) => airlock::cli::audit_show::run(
            &airlock::store::audit_dir(&airlock::store::state_dir()),
            run.as_deref(),
            Some(&airlock::cli::runs::db_path()),
            &mut io::stdout().lock(),
        )
        .map(|()| ExitCode::SUCCESS),
        Some(Command::Audit {
            command: AuditCommand::Verify { file },
        }) => audit_verify::run(&file).map(|report| {
            println!("{report}");
            ExitCode::SUCCESS
        }),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("airlock: {error:#}");
            ExitCode::FAILURE
        }
    }
}
