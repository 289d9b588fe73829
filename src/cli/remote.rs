//! Starting the approval page (`remote`) for a cockpit or a headless run: its settings from the
//! user's `[remote]` and `--remote`, and what the terminal shows to pair a device.

use std::io::Write;
use std::path::Path;

use anyhow::{Result, anyhow};

use crate::config::Resolved;
use crate::config::file::RemoteConfig;
use crate::protocol::{PairingOffer, RemotePairing};
use crate::remote::{RemotePage, Scope, Settings, Tls};

/// The page's settings, when it is to be served: `--remote`, `[remote] enabled = true`, or a
/// headless run answered on the page (`wanted`).
pub fn settings(
    config: &Resolved,
    wanted: bool,
    scope: Scope,
    state: &Path,
) -> Result<Option<Settings>> {
    let (remote, file) = match &config.remote {
        Some((remote, file)) => (remote.clone(), file.clone()),
        None => (RemoteConfig::default(), config.user_config.clone()),
    };
    if !wanted && remote.enabled != Some(true) {
        return Ok(None);
    }
    let bad = |key: &str, why: String| {
        anyhow!(
            "{}: [remote] {key}: {why}; fix it there (see README.md, Approving from another device)",
            file.display()
        )
    };
    let listen = match &remote.listen {
        None => None,
        Some(text) => Some(text.parse().map_err(|_| {
            bad(
                "listen",
                format!("`{text}` is not an address and port such as 127.0.0.1:8377"),
            )
        })?),
    };
    let dir = file.parent().unwrap_or(Path::new("."));
    let tls = match (remote.tls.as_deref(), &remote.tls_cert, &remote.tls_key) {
        (None | Some("off"), None, None) => Tls::Off,
        (Some("self-signed"), None, None) => Tls::SelfSigned,
        (None | Some("files"), Some(cert), Some(key)) => Tls::Files {
            cert: dir.join(cert),
            key: dir.join(key),
        },
        (None | Some("files"), _, _) => {
            return Err(bad(
                "tls_cert",
                "give both `tls_cert` and `tls_key`, or neither".into(),
            ));
        }
        (Some(other), _, _) => {
            return Err(bad(
                "tls",
                format!(
                    "`{other}` is not a TLS setting: use \"off\" or \"self-signed\", or give `tls_cert` and `tls_key` without `tls`"
                ),
            ));
        }
    };
    for (key, url) in [
        ("public_url", &remote.public_url),
        ("notify_url", &remote.notify_url),
    ] {
        if let Some(url) = url
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            return Err(bad(
                key,
                format!("`{url}` is not an http:// or https:// URL"),
            ));
        }
    }
    Ok(Some(Settings {
        listen,
        tls,
        public_url: remote.public_url,
        notify_url: remote.notify_url,
        scope,
        state: state.to_path_buf(),
        // Shorter only for tests of expiry; never longer than the default.
        pairing_ttl_ms: std::env::var("AIRLOCK_PAIRING_TTL_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map_or(crate::remote::pairing::TOKEN_TTL_MS, |ms: u64| {
                ms.min(crate::remote::pairing::TOKEN_TTL_MS)
            }),
    }))
}

/// Starts the page.
pub async fn start(settings: Settings) -> Result<RemotePage> {
    RemotePage::start(settings)
        .await
        .map_err(|e| anyhow!("the approval page cannot start: {e}"))
}

/// The pairing offer as lines for a terminal: where the page is, the QR code (dark modules as
/// `█`, painted dark on light when `color`), the URL, how long it answers.
pub fn offer_lines(offer: &PairingOffer, color: bool) -> Vec<String> {
    let mut lines = vec![format!(
        "approval page: {} — pair a device by scanning this code or opening the link (one use, for {}):",
        offer.origin,
        minutes(offer.expires_ms.saturating_sub(crate::clock::now_ms()))
    )];
    for row in &offer.qr {
        // A QR reader wants dark on light: the rows are painted so on any terminal theme.
        lines.push(if color {
            format!("\x1b[30;47m{row}\x1b[0m")
        } else {
            row.clone()
        });
    }
    lines.push(offer.url.clone());
    if let Some(fingerprint) = &offer.fingerprint {
        lines.push(format!(
            "its certificate's SHA-256 fingerprint (compare it with the browser's before going on): {fingerprint}"
        ));
    }
    lines
}

/// A new pairing offer from a running page.
pub fn offer(page: &RemotePage) -> Result<PairingOffer> {
    page.offer().map_err(|e| anyhow!("no pairing token: {e}"))
}

fn minutes(ms: u64) -> String {
    match ms.div_ceil(60_000) {
        1 => "1 minute".into(),
        n => format!("{n} minutes"),
    }
}

/// Starts the approval page when the run serves one, and shows how to pair with it: the
/// `remote` event, or (`--human`) the link and its QR code. The page serves until dropped.
pub async fn serve_page(
    args: &super::exec_args::ExecArgs,
    started: &super::exec::Started,
    out: &mut impl Write,
) -> Result<Option<crate::remote::RemotePage>> {
    let Some(settings) = started.remote.clone() else {
        return Ok(None);
    };
    let page = start(settings).await?;
    let offer = offer(&page)?;
    if args.human {
        let color = std::io::IsTerminal::is_terminal(&std::io::stdout());
        writeln!(out, "{}", offer_lines(&offer, color).join("\n"))?;
    } else {
        writeln!(
            out,
            "{}",
            serde_json::json!({
                "event": "remote",
                "origin": offer.origin,
                "pairing_url": offer.url,
                "expires_in_ms": offer.expires_ms.saturating_sub(crate::clock::now_ms()),
                "fingerprint": offer.fingerprint,
            })
        )?;
    }
    out.flush()?;
    Ok(Some(page))
}
