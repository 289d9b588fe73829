//! TLS for a page reached beyond this machine: the person's own certificate, or a self-signed
//! one made once, kept in the state directory (`remote/`, 0700; its key 0600) and pinned by the
//! fingerprint the terminal shows (the browser warns about a self-signed certificate; the person
//! compares the fingerprint it shows with the terminal's before going on).

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use sha2::{Digest, Sha256};

use super::Tls;

/// The acceptor for `tls`, and its certificate's SHA-256 fingerprint (`AB:CD:…`).
/// A self-signed certificate made now names `names` too (the address listened on).
pub fn acceptor(
    tls: &Tls,
    state: &Path,
    names: &[String],
) -> Result<(tokio_rustls::TlsAcceptor, String), String> {
    let (cert, key) = match tls {
        Tls::Off => return Err("TLS is off".into()),
        Tls::Files { cert, key } => (cert.clone(), key.clone()),
        Tls::SelfSigned => self_signed(&state.join("remote"), names)?,
    };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&cert)
        .and_then(|certs| certs.collect())
        .map_err(|e| {
            format!(
                "the approval page's certificate {} cannot be read: {e}; give a PEM file as `tls_cert` under [remote]",
                cert.display()
            )
        })?;
    let Some(first) = certs.first() else {
        return Err(format!(
            "the approval page's certificate {} holds no certificate; give a PEM file as `tls_cert` under [remote]",
            cert.display()
        ));
    };
    let fingerprint = fingerprint(first.as_ref());
    let private = PrivateKeyDer::from_pem_file(&key).map_err(|e| {
        format!(
            "the approval page's key {} cannot be read: {e}; give a PEM file as `tls_key` under [remote]",
            key.display()
        )
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(certs, private)
        .map_err(|e| {
            format!(
                "the approval page's certificate {} and key {} do not go together: {e}",
                cert.display(),
                key.display()
            )
        })?;
    Ok((
        tokio_rustls::TlsAcceptor::from(Arc::new(config)),
        fingerprint,
    ))
}

/// `AB:CD:…`: the SHA-256 of a certificate's DER, as browsers show it.
pub fn fingerprint(der: &[u8]) -> String {
    Sha256::digest(der)
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// The self-signed certificate and key in `dir`, made if there are none yet.
fn self_signed(
    dir: &Path,
    names: &[String],
) -> Result<(std::path::PathBuf, std::path::PathBuf), String> {
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    if cert.exists() && key.exists() {
        return Ok((cert, key));
    }
    let fail = |e: &dyn std::fmt::Display| {
        format!(
            "a self-signed certificate for the approval page cannot be made in {}: {e}",
            dir.display()
        )
    };
    crate::store::private_dir(dir).map_err(|e| fail(&e))?;
    let mut names: Vec<String> = std::iter::once("localhost".to_string())
        .chain(names.iter().cloned())
        .collect();
    if let Ok(host) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
        names.extend(Some(host.trim().to_string()).filter(|h| !h.is_empty()));
    }
    let made = rcgen::generate_simple_self_signed(names).map_err(|e| fail(&e))?;
    let write = |path: &Path, text: &str| -> std::io::Result<()> {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(path)?;
        file.write_all(text.as_bytes())
    };
    // The key first: a certificate with no key is made again, never used alone.
    write(&key, &made.signing_key.serialize_pem()).map_err(|e| fail(&e))?;
    write(&cert, &made.cert.pem()).map_err(|e| fail(&e))?;
    Ok((cert, key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_self_signed_certificate_is_made_once_and_keeps_its_fingerprint() {
        let dir = tempfile::tempdir().unwrap();
        let (_, first) = acceptor(&Tls::SelfSigned, dir.path(), &[]).unwrap();
        let (_, again) = acceptor(&Tls::SelfSigned, dir.path(), &[]).unwrap();
        assert_eq!(first, again);
        assert_eq!(first.len(), 32 * 3 - 1);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("remote/key.pem"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "the key is private");
    }

    #[test]
    fn a_certificate_file_that_is_not_pem_is_refused_with_where_and_how() {
        let dir = tempfile::tempdir().unwrap();
        let cert = dir.path().join("c.pem");
        std::fs::write(&cert, "not a certificate").unwrap();
        let tls = Tls::Files {
            cert: cert.clone(),
            key: dir.path().join("k.pem"),
        };
        let Err(e) = acceptor(&tls, dir.path(), &[]) else {
            panic!("accepted");
        };
        assert!(e.contains("c.pem") && e.contains("tls_cert"), "{e}");
    }
}
