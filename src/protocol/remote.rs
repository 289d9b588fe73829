//! The approval page as the cockpit sees it (`remote` serves it, `cli` starts it): a pairing
//! offer to show (its URL and QR code), and the paired devices, each of which can be revoked.

/// A one-time pairing token, ready to show: the URL a device opens, the same as a QR code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairingOffer {
    /// The pairing URL (it holds the token: shown only in the terminal).
    pub url: String,
    /// The URL as a QR code, in lines of half-block characters (two modules a character).
    pub qr: Vec<String>,
    /// When the token stops pairing (unix milliseconds).
    pub expires_ms: u64,
    /// The SHA-256 fingerprint of the page's certificate, when it serves TLS.
    pub fingerprint: Option<String>,
    /// The page's address (scheme, host, port).
    pub origin: String,
}

/// A device paired with the page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairedDevice {
    pub id: i64,
    /// The name given when it paired (untrusted text: shown through `visible_line`).
    pub name: String,
    pub created_ms: u64,
    pub last_seen_ms: u64,
}

/// The page, for the cockpit.
pub trait RemotePairing: Send + Sync {
    /// A new pairing token.
    fn offer(&self) -> Result<PairingOffer, String>;
    /// The devices paired and not revoked, oldest first.
    fn devices(&self) -> Result<Vec<PairedDevice>, String>;
    /// Revokes device `id`: it answers nothing from now on.
    fn revoke(&self, id: i64) -> Result<(), String>;
}
