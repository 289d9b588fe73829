use std::io::{self, IsTerminal};
use std::process::ExitCode;

use clap::Parser;

use airlock::cli::{AuditCommand, Cli, Command, PolicyCommand, audit_verify, exec, policy_check};

async fn cockpit(args: exec::ExecArgs) -> anyhow::Result<()> {
    let started = exec::start(&args, None)?;
    let status = airlock::ui::app::Status {
        model: started.model,
        mode: args.mode.as_str().to_string(),
        workspace: started.workspace.display().to_string(),
    };
    let result = airlock::ui::run(started.handle, status, Some(started.prompt)).await;
    if let Ok(path) = std::env::var("AIRLOCK_EXIT_STATUS_FILE") {
        let _ = std::fs::write(path, if result.is_ok() { "0\n" } else { "1\n" });
    }
    result
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        None if io::stdout().is_terminal() && io::stdin().is_terminal() => {
            // The cockpit, on the offline demo (no model is configured yet).
            tokio::runtime::Runtime::new()
                .map_err(anyhow::Error::from)
                .and_then(|rt| rt.block_on(cockpit(exec::ExecArgs::default())))
                .map(|()| ExitCode::SUCCESS)
        }
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
