//! Network clients: each uses the network, and the files it saves, uploads or is configured by
//! are judged as the writes and reads they are. A client that prints credentials (`gh auth
//! token`, `aws configure get`) is credential access.

use super::{Args, Effect, lit, reads};
use crate::facts::shell::Word;

pub(super) const NETWORK: &[&str] = &[
    "curl",
    "wget",
    "nc",
    "ncat",
    "netcat",
    "socat",
    "ssh",
    "scp",
    "sftp",
    "ftp",
    "telnet",
    "http",
    "https",
    "xh",
    "aria2c",
    "dig",
    "nslookup",
    "host",
    "ping",
    "ping6",
    "traceroute",
    "whois",
    "gh",
    "aws",
    "gcloud",
    "az",
    "rsync",
    "mosh",
    "lftp",
    "tftp",
];

/// `rsync -n` between local paths only lists what it would copy: it reads both sides.
fn local_rsync_dry_run(args: &Args) -> Option<Vec<Effect>> {
    let words: Vec<&str> = args.iter().map(lit).collect::<Option<_>>()?;
    let dry_run = words.iter().any(|a| {
        *a == "--dry-run" || (a.starts_with('-') && !a.starts_with("--") && a.contains('n'))
    });
    // Options that run a program, reach a host, or write a file even in a dry run.
    let risky = words.iter().any(|a| {
        a.starts_with("-e")
            || (a.starts_with('-') && !a.starts_with("--") && a.contains('e'))
            || [
                "--rsh",
                "--rsync-path",
                "--log-file",
                "--write-batch",
                "--only-write-batch",
                "--daemon",
                "--config",
                "--password-file",
                "--port",
                "--address",
                "--sockopts",
                "--connect-program",
                "--remote-option",
                "-M",
            ]
            .iter()
            .any(|o| a.starts_with(o))
    });
    let operands: Vec<&str> = words
        .iter()
        .copied()
        .filter(|a| !a.starts_with('-'))
        .collect();
    let remote = operands.iter().any(|o| {
        o.starts_with("rsync://") || o.split('/').next().is_some_and(|head| head.contains(':'))
    });
    // An option value can look like an operand (`--exclude x`): only forms without separate
    // values are understood; anything else keeps the network reading.
    let separate_values = words.iter().any(|a| {
        a.starts_with("--")
            && !a.contains('=')
            && [
                "--exclude",
                "--include",
                "--filter",
                "--files-from",
                "--exclude-from",
                "--include-from",
                "--backup-dir",
                "--suffix",
                "--chmod",
                "--chown",
                "--partial-dir",
                "--temp-dir",
                "--compare-dest",
                "--link-dest",
                "--copy-dest",
                "--timeout",
                "--max-size",
                "--min-size",
                "--bwlimit",
                "--info",
                "--debug",
                "--out-format",
                "--usermap",
                "--groupmap",
                "--iconv",
                "--max-delete",
                "--modify-window",
            ]
            .contains(a)
    });
    let short_values = words
        .iter()
        .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains(['f', 'T', 'B', 'M']));
    if !dry_run || risky || remote || separate_values || short_values || operands.len() < 2 {
        return None;
    }
    Some(
        operands
            .into_iter()
            .map(|o| Effect::Read(Word::lit(o)))
            .collect(),
    )
}

/// A network client: the network, and the files it touches.
pub(super) fn network(name: &str, args: &Args) -> Vec<Effect> {
    if name == "rsync"
        && let Some(reads) = local_rsync_dry_run(args)
    {
        return reads;
    }
    let mut e = vec![Effect::Network(format!("`{name}` uses the network"))];
    match name {
        "curl" => curl(args, &mut e),
        "wget" => wget(args, &mut e),
        "scp" | "rsync" | "sftp" => copies(args, &mut e),
        "ssh" => e.push(Effect::RunsCode(
            "`ssh` runs commands on another machine".into(),
        )),
        "aws" | "gcloud" | "az" => cloud_credentials(name, args, &mut e),
        "gh" => github_token(args, &mut e),
        _ => {}
    }
    e
}

/// What `curl` saves (output, headers, cookies, traces) and reads (config, keys, cookies).
fn curl(args: &Args, e: &mut Vec<Effect>) {
    e.extend(
        args.values_of(
            &["-o", "-D", "-c"],
            &[
                "output",
                "dump-header",
                "cookie-jar",
                "trace",
                "trace-ascii",
                "stderr",
                "libcurl",
                "etag-save",
                "hsts",
                "alt-svc",
            ],
        )
        .into_iter()
        .filter(|w| !matches!(lit(w), Some("-" | "%")))
        .map(Effect::Write),
    );
    if args.has(&['O'], &["remote-name", "remote-name-all"]) {
        e.push(Effect::Write(Word::lit(".")));
    }
    curl_sent_files(args, e);
    e.extend(reads(args.values_of(&["-T"], &["upload-file"])));
    e.extend(reads(args.values_of(
        &["-K", "-E"],
        &[
            "config",
            "netrc-file",
            "cert",
            "key",
            "cacert",
            "capath",
            "proxy-cert",
            "proxy-key",
        ],
    )));
    for v in args.values_of(&["-b"], &["cookie"]) {
        if lit(&v).is_some_and(|s| !s.contains('=')) {
            e.push(Effect::Read(v));
        }
    }
}

/// The files `curl` sends: `@file` in data, headers and url-encoded data; `name=@file` /
/// `name=<file` in forms.
fn curl_sent_files(args: &Args, e: &mut Vec<Effect>) {
    let computed = || Effect::Opaque("`curl` sends data computed at run time".into());
    for v in args.values_of(
        &["-d", "-H"],
        &[
            "data",
            "data-binary",
            "data-raw",
            "data-ascii",
            "json",
            "header",
            "proxy-header",
        ],
    ) {
        match lit(&v) {
            Some(s) => {
                if let Some(file) = s.strip_prefix('@') {
                    e.push(Effect::Read(Word::lit(file)));
                }
            }
            None => e.push(computed()),
        }
    }
    for v in args.values_of(&[], &["data-urlencode"]) {
        match lit(&v) {
            Some(s) => {
                if let Some((name, file)) = s.split_once('@')
                    && !name.contains('=')
                {
                    e.push(Effect::Read(Word::lit(file)));
                }
            }
            None => e.push(computed()),
        }
    }
    for v in args.values_of(&["-F"], &["form", "form-string"]) {
        match lit(&v) {
            Some(s) => {
                if let Some((_, value)) = s.split_once('=')
                    && let Some(file) = value.strip_prefix('@').or_else(|| value.strip_prefix('<'))
                {
                    let file = file.split(';').next().unwrap_or(file);
                    e.push(Effect::Read(Word::lit(file)));
                }
            }
            None => e.push(computed()),
        }
    }
}

/// What `wget` saves (pages, logs, cookies) and reads (input lists, keys, post bodies).
fn wget(args: &Args, e: &mut Vec<Effect>) {
    e.extend(
        args.values_of(
            &["-o", "-a", "-P"],
            &[
                "output-file",
                "append-output",
                "directory-prefix",
                "save-cookies",
            ],
        )
        .into_iter()
        .map(Effect::Write),
    );
    e.extend(reads(args.values_of(
        &["-i"],
        &[
            "input-file",
            "load-cookies",
            "config",
            "certificate",
            "private-key",
            "ca-certificate",
        ],
    )));
    let out = args.values_of(&["-O"], &["output-document"]);
    if out.is_empty() && !args.has(&[], &["spider"]) {
        e.push(Effect::Write(Word::lit(".")));
    }
    e.extend(
        out.into_iter()
            .filter(|w| lit(w) != Some("-"))
            .map(Effect::Write),
    );
    e.extend(reads(args.values_of(&[], &["post-file", "body-file"])));
}

/// `scp`, `rsync`, `sftp`: the local destination is written, local sources are read.
fn copies(args: &Args, e: &mut Vec<Effect>) {
    let pos: Vec<Word> = args.positional().into_iter().cloned().collect();
    let remote = |w: &Word| lit(w).is_some_and(|s| s.contains(':') && !s.starts_with('/'));
    if let Some((dest, sources)) = pos.split_last() {
        if !remote(dest) {
            e.push(Effect::Write(dest.clone()));
        }
        e.extend(reads(sources.iter().filter(|w| !remote(w)).cloned()));
    }
}

/// Cloud CLIs that print credentials when asked to.
fn cloud_credentials(name: &str, args: &Args, e: &mut Vec<Effect>) {
    let words: Vec<&str> = args.iter().filter_map(|w| w.as_lit()).collect();
    let has = |pair: [&str; 2]| words.windows(2).any(|p| p == pair);
    let credential = has(["configure", "get"])
        || has(["configure", "export-credentials"])
        || has(["sts", "get-session-token"])
        || has(["ecr", "get-login-password"])
        || words
            .iter()
            .any(|w| w.starts_with("print-access-token") || w.starts_with("print-identity-token"))
        || has(["account", "get-access-token"]);
    if credential {
        e.push(Effect::CredentialAccess(format!(
            "`{name}` prints cloud credentials"
        )));
    }
}

fn github_token(args: &Args, e: &mut Vec<Effect>) {
    let words: Vec<&str> = args.iter().filter_map(|w| w.as_lit()).collect();
    if words.windows(2).any(|p| p == ["auth", "token"]) || words.contains(&"--show-token") {
        e.push(Effect::CredentialAccess(
            "`gh auth token` prints a GitHub token".into(),
        ));
    }
}
