//! `[mcp_servers.NAME]` in a config file: how to start one MCP server (a command on stdio, or a
//! URL), with the limits airlock holds it to.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use crate::sandbox::Profile;

/// How long one tool call may run unless the server's config says otherwise.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a server has to start and list its tools.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// One configured server. Unknown keys are errors that name the file and line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// The program to start (looked up on `PATH`); it speaks MCP on stdin/stdout.
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables added to its environment (airlock's key variables are never passed on).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// A streamable-HTTP server instead of a command.
    pub url: Option<String>,
    /// Headers sent with every request to a `url` server. Their values are never printed.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The variable holding a bearer token for a `url` server (sent as `Authorization: Bearer`),
    /// read when the server connects. Never printed.
    pub bearer_token_env: Option<String>,
    /// Seconds one tool call may run (default 120).
    pub timeout_secs: Option<u64>,
    /// Seconds the server has to start and list its tools (default 30).
    pub startup_timeout_secs: Option<u64>,
    /// The sandbox a `command` server runs in, as a `bash` call's: `workspace-write` (the
    /// default), `read-only`, `network`, or `off` (all of your rights; taken only from your
    /// own config, never a project's).
    pub sandbox: Option<String>,
    /// Which of its tools change a file, and through which arguments (`mcp::file_tools`):
    /// replaces airlock's table of known servers for this server; `{}` turns it off.
    pub file_tools: Option<BTreeMap<String, crate::mcp::file_tools::FileTool>>,
}

impl ServerConfig {
    pub fn call_timeout(&self) -> Duration {
        self.timeout_secs
            .map(Duration::from_secs)
            .unwrap_or(DEFAULT_CALL_TIMEOUT)
    }

    pub fn startup_timeout(&self) -> Duration {
        self.startup_timeout_secs
            .map(Duration::from_secs)
            .unwrap_or(DEFAULT_STARTUP_TIMEOUT)
    }

    /// The profile a `command` server runs under: its `sandbox`, else `workspace-write`. (A
    /// value that is not a profile never gets here: [`ServerConfig::check`] refuses the file.)
    pub fn sandbox(&self) -> Profile {
        self.sandbox
            .as_deref()
            .and_then(Profile::parse)
            .unwrap_or(Profile::WorkspaceWrite)
    }

    /// Checks what the TOML types cannot: the name, exactly one of `command` and `url`, and
    /// the keys that belong to each.
    pub fn check(&self, name: &str) -> Result<(), String> {
        check_name(name)?;
        self.check_http(name)?;
        match (&self.command, &self.url) {
            (Some(c), None) if c.trim().is_empty() => {
                Err(format!("[mcp_servers.{name}]: `command` is empty"))
            }
            (Some(_), None) => Ok(()),
            (None, Some(u)) if u.starts_with("http://") || u.starts_with("https://") => Ok(()),
            (None, Some(u)) => Err(format!(
                "[mcp_servers.{name}]: `url` must start with http:// or https://, got {:?}",
                crate::visible::visible_line(u)
            )),
            (Some(_), Some(_)) => Err(format!(
                "[mcp_servers.{name}]: give `command` or `url`, not both"
            )),
            (None, None) => Err(format!(
                "[mcp_servers.{name}]: give `command = \"...\"` (a stdio server) or `url = \"...\"`"
            )),
        }
    }
}

/// Headers airlock's MCP client sets itself; a config may not replace them.
const RESERVED_HEADERS: &[&str] = &[
    "accept",
    "content-type",
    "content-length",
    "host",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
];

impl ServerConfig {
    fn check_http(&self, name: &str) -> Result<(), String> {
        if self.url.is_none() && (!self.headers.is_empty() || self.bearer_token_env.is_some()) {
            return Err(format!(
                "[mcp_servers.{name}]: `headers` and `bearer_token_env` are for `url` servers; give a stdio server its secrets in `env`"
            ));
        }
        if self.command.is_none() && (!self.args.is_empty() || !self.env.is_empty()) {
            return Err(format!(
                "[mcp_servers.{name}]: `args` and `env` are for `command` servers; a `url` server takes `headers` or `bearer_token_env`"
            ));
        }
        if self.command.is_none() && self.sandbox.is_some() {
            return Err(format!(
                "[mcp_servers.{name}]: `sandbox` is for `command` servers, which airlock starts; a `url` server runs elsewhere, out of airlock's reach"
            ));
        }
        for (tool, file_tool) in self.file_tools.iter().flatten() {
            file_tool.check(name, tool)?;
        }
        if let Some(profile) = &self.sandbox
            && Profile::parse(profile).is_none()
        {
            return Err(format!(
                "[mcp_servers.{name}]: `sandbox = {:?}` is not a profile; give one of {}",
                crate::visible::visible_line(profile),
                Profile::choices()
            ));
        }
        for (header, value) in &self.headers {
            let shown = crate::visible::visible_line(header);
            let Ok(parsed) = reqwest::header::HeaderName::from_bytes(header.as_bytes()) else {
                return Err(format!(
                    "[mcp_servers.{name}]: `{shown}` in `headers` is not a valid header name"
                ));
            };
            if RESERVED_HEADERS.contains(&parsed.as_str()) {
                return Err(format!(
                    "[mcp_servers.{name}]: airlock sets the `{shown}` header itself; remove it from `headers`"
                ));
            }
            if parsed == reqwest::header::AUTHORIZATION && self.bearer_token_env.is_some() {
                return Err(format!(
                    "[mcp_servers.{name}]: give `Authorization` in `headers` or `bearer_token_env`, not both"
                ));
            }
            // The value is never quoted: it may be a secret.
            if reqwest::header::HeaderValue::from_str(value).is_err() {
                return Err(format!(
                    "[mcp_servers.{name}]: the value of the `{shown}` header is not a valid header value (control characters or non-ASCII?)"
                ));
            }
        }
        if let Some(var) = &self.bearer_token_env
            && (var.is_empty() || crate::facts::envvars::HIDDEN_ENV.contains(&var.as_str()))
        {
            return Err(format!(
                "[mcp_servers.{name}]: `bearer_token_env = {:?}`: airlock never sends its own key variables to an MCP server; name a variable of this server's own",
                crate::visible::visible_line(var)
            ));
        }
        Ok(())
    }
}

/// A server name becomes the first half of `NAME__tool`: letters, digits, `-` and single `_`.
pub fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 32
        && !name.contains("__")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "[mcp_servers.{}]: a server name is 1 to 32 letters, digits, `-` or `_` (never `__`)",
            crate::visible::visible_line(name)
        ))
    }
}

/// A configured server with where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfiguredServer {
    pub name: String,
    pub config: ServerConfig,
    /// The config file that names it.
    pub file: std::path::PathBuf,
    /// The key its pins are stored under: the name for a user server, `NAME@WORKSPACE` for a
    /// project's, so two projects' servers of one name never share pins.
    pub pin_key: String,
    /// Named by a project's config (trusted, or it would not be here) rather than the user's.
    pub from_project: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<BTreeMap<String, ServerConfig>, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }

    #[test]
    fn a_server_needs_exactly_one_of_command_and_url() {
        let servers = parse(
            "[fs]\ncommand = \"npx\"\nargs = [\"-y\", \"x\"]\n[web]\nurl = \"https://h/mcp\"\n[none]\n[both]\ncommand = \"a\"\nurl = \"http://b\"\n",
        )
        .unwrap();
        assert!(servers["fs"].check("fs").is_ok());
        assert!(servers["web"].check("web").is_ok());
        assert!(
            servers["none"]
                .check("none")
                .unwrap_err()
                .contains("give `command")
        );
        assert!(
            servers["both"]
                .check("both")
                .unwrap_err()
                .contains("not both")
        );
    }

    #[test]
    fn a_command_server_runs_in_workspace_write_unless_its_sandbox_names_another_profile() {
        let servers = parse(concat!(
            "[plain]\ncommand = \"x\"\n",
            "[net]\ncommand = \"x\"\nsandbox = \"network\"\n",
            "[bogus]\ncommand = \"x\"\nsandbox = \"none\"\n",
            "[web]\nurl = \"https://h/mcp\"\nsandbox = \"read-only\"\n",
        ))
        .unwrap();
        assert_eq!(servers["plain"].sandbox(), Profile::WorkspaceWrite);
        assert_eq!(servers["net"].sandbox(), Profile::Network);
        assert!(servers["net"].check("net").is_ok());
        let bogus = servers["bogus"].check("bogus").unwrap_err();
        assert!(
            bogus.contains("`sandbox = \"none\"` is not a profile")
                && bogus.contains("read-only, workspace-write, network, off"),
            "{bogus}"
        );
        let web = servers["web"].check("web").unwrap_err();
        assert!(web.contains("`sandbox` is for `command` servers"), "{web}");
    }

    #[test]
    fn headers_and_tokens_belong_to_url_servers_and_never_to_airlocks_own_keys() {
        let servers = parse(concat!(
            "[a]\ncommand = \"x\"\nheaders = { X-Key = \"v\" }\n",
            "[b]\nurl = \"https://h/mcp\"\nheaders = { Accept = \"text/html\" }\n",
            "[c]\nurl = \"https://h/mcp\"\nbearer_token_env = \"OPENAI_API_KEY\"\n",
            "[d]\nurl = \"https://h/mcp\"\nheaders = { X-Key = \"s3cret\\u0007\" }\n",
            "[e]\nurl = \"https://h/mcp\"\nheaders = { X-Key = \"v\" }\nbearer_token_env = \"MY_TOKEN\"\n",
            "[f]\nurl = \"https://h/mcp\"\nargs = [\"x\"]\n",
        ))
        .unwrap();
        let err = |name: &str| servers[name].check(name).unwrap_err();
        assert!(err("a").contains("are for `url` servers"), "{}", err("a"));
        assert!(
            err("b").contains("sets the `Accept` header itself"),
            "{}",
            err("b")
        );
        assert!(
            err("c").contains("never sends its own key variables"),
            "{}",
            err("c")
        );
        assert!(
            err("d").contains("not a valid header value"),
            "{}",
            err("d")
        );
        assert!(
            !err("d").contains("s3cret"),
            "a header value is never quoted"
        );
        assert!(servers["e"].check("e").is_ok());
        assert!(
            err("f").contains("are for `command` servers"),
            "{}",
            err("f")
        );
    }

    #[test]
    fn unknown_keys_and_bad_names_are_errors() {
        let err = parse("[fs]\ncomand = \"npx\"\n").unwrap_err();
        assert!(err.contains("comand") && err.contains("line 2"), "{err}");
        assert!(check_name("a__b").is_err());
        assert!(check_name("a b").is_err());
        assert!(check_name("").is_err());
        assert!(check_name("fs-1_x").is_ok());
    }
}
