//! `airlock-sandbox`: the sandbox launcher alone (see `airlock::sandbox::launcher`), installed
//! next to `airlock`. A small binary starts in half the time the whole airlock binary takes
//! (1.5 ms less per command), and every sandboxed command pays that start. It takes the same
//! arguments as `airlock __sandbox`, the `__sandbox` included.

fn main() -> std::process::ExitCode {
    let mut args = std::env::args_os().skip(1).peekable();
    if args.peek().map(|a| a.as_os_str()) == Some(airlock::sandbox::LAUNCHER_ARG.as_ref()) {
        args.next();
    }
    airlock::sandbox::launcher::main(args)
}
