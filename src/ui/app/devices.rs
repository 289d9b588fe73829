//! The other-devices window's requests to the approval page (`App::remote`): open it with a
//! fresh pairing code and the paired devices, make a new code, revoke a device.

use super::{App, Entry};
use crate::ui::overlay::{DevicesOverlay, Overlay};
use crate::visible::visible_line;

impl App {
    /// Opens the window (F6), or says how to serve the page when it is not served.
    pub(crate) fn open_devices(&mut self) {
        let Some(remote) = self.remote.clone() else {
            self.entries.push(Entry::Notice(
                "the approval page is off: start airlock with --remote, or set `enabled = true` \
                 under [remote] in your config, to answer requests from a paired phone \
                 (README.md, Approving from another device)"
                    .into(),
            ));
            return;
        };
        let mut window = DevicesOverlay::default();
        match remote.offer() {
            Ok(offer) => window.offer = Some(offer),
            Err(e) => window.error = Some(format!("no pairing code: {e}")),
        }
        match remote.devices() {
            Ok(devices) => window.devices = devices,
            Err(e) => window.error = Some(format!("the paired devices cannot be read: {e}")),
        }
        self.overlays.push(Overlay::Devices(Box::new(window)));
    }

    fn devices_window(&mut self) -> Option<&mut DevicesOverlay> {
        self.overlays.iter_mut().rev().find_map(|o| match o {
            Overlay::Devices(d) => Some(&mut **d),
            _ => None,
        })
    }

    pub(crate) fn new_pairing(&mut self) {
        let Some(remote) = self.remote.clone() else {
            return;
        };
        let offer = remote.offer();
        if let Some(window) = self.devices_window() {
            match offer {
                Ok(offer) => {
                    window.offer = Some(offer);
                    window.error = None;
                }
                Err(e) => window.error = Some(format!("no pairing code: {e}")),
            }
        }
    }

    pub(crate) fn revoke_device(&mut self, id: i64) {
        let Some(remote) = self.remote.clone() else {
            return;
        };
        let name = self
            .devices_window()
            .and_then(|w| {
                w.devices
                    .iter()
                    .find(|d| d.id == id)
                    .map(|d| d.name.clone())
            })
            .unwrap_or_default();
        let done = remote.revoke(id);
        let devices = remote.devices();
        if let Some(window) = self.devices_window() {
            if let Ok(devices) = devices {
                window.devices = devices;
                window.selected = window.selected.min(window.devices.len().saturating_sub(1));
            }
            window.error = done.as_ref().err().cloned();
        }
        if done.is_ok() {
            self.entries.push(Entry::Notice(format!(
                "device #{id} ({}) revoked: it answers nothing from now on",
                visible_line(&name)
            )));
        }
    }
}
