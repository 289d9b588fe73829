//! The pairing URL as a QR code in the terminal: two modules per character cell, drawn with
//! half blocks, `█` for two dark modules. The lines carry no colour: whoever draws them paints
//! dark on light (a QR reader wants that), with a quiet zone of light modules around.

use qrcode::{Color, QrCode};

/// Light modules around the code (the standard asks 4; 2 reads fine on a screen).
const QUIET: usize = 2;

/// `text` as lines of half blocks.
pub fn lines(text: &str) -> Result<Vec<String>, String> {
    // The lowest error correction: a screen is not a scuffed label, and a smaller code fits a
    // smaller terminal (a 100-character link: 37 modules, not 41).
    let code = QrCode::with_error_correction_level(text.as_bytes(), qrcode::EcLevel::L)
        .map_err(|e| format!("no QR code for it: {e}"))?;
    let width = code.width();
    let colors = code.to_colors();
    let size = width + 2 * QUIET;
    let dark = |x: usize, y: usize| -> bool {
        x >= QUIET
            && y >= QUIET
            && x < width + QUIET
            && y < width + QUIET
            && colors[(y - QUIET) * width + (x - QUIET)] == Color::Dark
    };
    Ok((0..size)
        .step_by(2)
        .map(|y| {
            (0..size)
                .map(|x| match (dark(x, y), dark(x, y + 1)) {
                    (true, true) => '█',
                    (true, false) => '▀',
                    (false, true) => '▄',
                    (false, false) => ' ',
                })
                .collect()
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pairing_url_fits_a_terminal_as_a_square_of_half_blocks() {
        let url = format!("http://127.0.0.1:8377/pair?token={}", "a".repeat(64));
        let lines = lines(&url).unwrap();
        let width = lines[0].chars().count();
        assert!(width <= 60, "{width} columns");
        assert_eq!(lines.len(), width.div_ceil(2));
        assert!(lines.iter().all(|l| l.chars().count() == width));
        // The finder pattern's top edge: seven dark modules after the quiet zone.
        assert!(lines[1].chars().skip(QUIET).take(7).all(|c| c != ' '));
    }
}
