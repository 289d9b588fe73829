use std::io::{self, IsTerminal};
use std::process::ExitCode;

use clap::Parser;

use airlock::cli::{AuditCommand, Cli, Command, PolicyCommand, audit_verify, exec, policy_check};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        None => {
            // No subcommand and no model configured: play the offline demo, readably.
            let args = exec::ExecArgs {
                human: true,
                ..exec::ExecArgs::default()
            };
            tokio::runtime::Runtime::new()
                .map_err(anyhow::Error::from)
                .and_then(|rt| rt.block_on(exec::run(args, io::stdout().lock())))
                .map(|code| {
                    println!("More: airlock --help");
                    ExitCode::from(code)
                })
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
