//! What an environment variable's name says about it: whether printing it can leak a secret.
//!
//! Printing `PATH` or `HOME` tells the agent nothing it could not learn otherwise, and asking
//! about it trains people to press `y` without reading. A name is harmless to print only when it
//! is a well-known variable that never holds a secret; a name that looks like a secret (`…KEY`,
//! `…TOKEN`) is never harmless, and an unknown name (`DATABASE_URL` holds a password) asks.

/// Standard variables that hold places, names and settings, never secrets.
const HARMLESS: &[&str] = &[
    "PATH",
    "HOME",
    "SHELL",
    "USER",
    "LOGNAME",
    "PWD",
    "OLDPWD",
    "LANG",
    "LANGUAGE",
    "TERM",
    "COLORTERM",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "TZ",
    "HOSTNAME",
    "HOSTTYPE",
    "OSTYPE",
    "MACHTYPE",
    "TMPDIR",
    "SHLVL",
    "COLUMNS",
    "LINES",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "CI",
    "NODE_ENV",
    "VIRTUAL_ENV",
    "CONDA_DEFAULT_ENV",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "GOPATH",
    "GOROOT",
    "GOBIN",
    "JAVA_HOME",
    "PYTHONPATH",
    "MANPATH",
    "INFOPATH",
    "LD_LIBRARY_PATH",
    "PKG_CONFIG_PATH",
    "BASH_VERSION",
    "UID",
    "EUID",
    "PPID",
    "RANDOM",
    "SECONDS",
    "LINENO",
];

/// Prefixes of families of harmless variables (`LC_ALL`, `XDG_CONFIG_HOME`).
const HARMLESS_PREFIXES: &[&str] = &["LC_", "XDG_"];

/// Words that make a name look like it holds a secret.
const SECRET_WORDS: &[&str] = &[
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "AUTH",
    "SESSION",
    "COOKIE",
    "PRIVATE",
];

/// Why setting `name` for a command can make it load or run other code, for the families that
/// do: shell startup files, the dynamic linker, interpreters, git, editors and pagers. `None`
/// for a name outside them (which may still ask, as any unknown setting does).
pub fn loads_code(name: &str) -> Option<&'static str> {
    Some(match name {
        "BASH_ENV" | "ENV" | "ZDOTDIR" | "PROMPT_COMMAND" | "PS0" | "PS1" | "PS2" | "PS4"
        | "SHELLOPTS" | "BASHOPTS" | "INPUTRC" => {
            "a shell started with it sources a file or runs code from it before its own commands"
        }
        _ if name.starts_with("LD_") || name.starts_with("DYLD_") => {
            "the dynamic linker loads libraries it names into every program started"
        }
        "PYTHONSTARTUP" | "PYTHONPATH" | "PYTHONHOME" | "PYTHONINSPECT" | "PERL5OPT"
        | "PERL5LIB" | "PERLLIB" | "PERL5DB" | "RUBYOPT" | "RUBYLIB" | "NODE_OPTIONS"
        | "NODE_PATH" | "JAVA_TOOL_OPTIONS" | "_JAVA_OPTIONS" | "JDK_JAVA_OPTIONS"
        | "CLASSPATH" | "LUA_INIT" | "LUA_PATH" | "PHPRC" | "PHP_INI_SCAN_DIR"
        | "R_PROFILE_USER" => "an interpreter started with it loads code from where it points",
        _ if name.starts_with("GIT_") => "git runs programs or reads configuration it names",
        "EDITOR" | "VISUAL" | "PAGER" | "MANPAGER" | "SYSTEMD_PAGER" | "LESSOPEN" | "LESSCLOSE"
        | "BROWSER" | "SUDO_ASKPASS" | "SSH_ASKPASS" => {
            "the program runs the command line it holds"
        }
        _ => return None,
    })
}

/// The name looks like it holds a secret.
pub fn secret_like(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_WORDS.iter().any(|w| upper.contains(w))
}

/// Printing the variable cannot leak a secret: a well-known variable that holds places, names
/// or settings, and nothing in its name looks secret.
pub fn harmless_to_print(name: &str) -> bool {
    !secret_like(name)
        && (HARMLESS.contains(&name) || HARMLESS_PREFIXES.iter().any(|p| name.starts_with(p)))
}

/// Environment variables never handed to the commands an agent runs, whatever the config says:
/// the key variables of every provider airlock knows, and `AIRLOCK_HOME`, which would tell a
/// command where the state database and its signing key live.
pub const HIDDEN_ENV: &[&str] = &[
    "AIRLOCK_HOME",
    // Model keys.
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "OPENROUTER_API_KEY",
    "AIRLOCK_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "DEEPSEEK_API_KEY",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    // Well-known tokens of forges, registries and clouds.
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GH_ENTERPRISE_TOKEN",
    "GITLAB_TOKEN",
    "CI_JOB_TOKEN",
    "BITBUCKET_TOKEN",
    "NPM_TOKEN",
    "NODE_AUTH_TOKEN",
    "PYPI_TOKEN",
    "TWINE_PASSWORD",
    "CARGO_REGISTRY_TOKEN",
    "GEM_HOST_API_KEY",
    "DOCKER_PASSWORD",
    "DOCKER_AUTH_CONFIG",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AZURE_CLIENT_SECRET",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "CLOUDSDK_AUTH_ACCESS_TOKEN",
    "DIGITALOCEAN_ACCESS_TOKEN",
    "HEROKU_API_KEY",
    "VERCEL_TOKEN",
    "NETLIFY_AUTH_TOKEN",
    "CLOUDFLARE_API_TOKEN",
    "SLACK_TOKEN",
    "SLACK_BOT_TOKEN",
    "SENTRY_AUTH_TOKEN",
    "VAULT_TOKEN",
    // Pointers at other programs' sockets: a command that finds them can drive the user's
    // terminal multiplexer (`tmux send-keys` into the cockpit's pane), agents, session bus,
    // display or container engine. (The sockets themselves are hidden by the sandbox too.)
    "TMUX",
    "TMUX_PANE",
    "STY",
    "ZELLIJ",
    "ZELLIJ_SESSION_NAME",
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "DOCKER_HOST",
    "XDG_RUNTIME_DIR",
    "WAYLAND_DISPLAY",
    "DISPLAY",
    "KITTY_LISTEN_ON",
    "KITTY_WINDOW_ID",
    "WEZTERM_UNIX_SOCKET",
    "ALACRITTY_SOCKET",
    "NVIM",
    "NVIM_LISTEN_ADDRESS",
    "VSCODE_IPC_HOOK_CLI",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_of_code_loading_variable_says_why() {
        for name in [
            "BASH_ENV",
            "ENV",
            "LD_PRELOAD",
            "DYLD_INSERT_LIBRARIES",
            "PYTHONSTARTUP",
            "NODE_OPTIONS",
            "PERL5OPT",
            "GIT_EXTERNAL_DIFF",
            "GIT_SSH_COMMAND",
            "EDITOR",
            "LESSOPEN",
        ] {
            assert!(loads_code(name).is_some(), "{name}");
        }
        assert!(loads_code("RUST_LOG").is_none());
    }

    #[test]
    fn places_and_settings_are_harmless_to_print() {
        for name in [
            "PATH",
            "HOME",
            "SHELL",
            "LC_ALL",
            "XDG_CONFIG_HOME",
            "VIRTUAL_ENV",
        ] {
            assert!(harmless_to_print(name), "{name}");
        }
    }

    #[test]
    fn secret_looking_and_unknown_names_are_not() {
        for name in [
            "GITHUB_TOKEN",
            "OPENAI_API_KEY",
            "XDG_SESSION_COOKIE",
            "DATABASE_URL",
            "AWS_SECRET_ACCESS_KEY",
            "path",
        ] {
            assert!(!harmless_to_print(name), "{name}");
        }
    }
}
