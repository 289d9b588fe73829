//! Just enough PNG for screenshots: decode 8-bit, non-interlaced images (grey, grey+alpha, RGB,
//! RGBA: Chromium writes RGB), with a small zlib inflate of its own, and compare two images.

use std::path::{Path, PathBuf};

/// Pixels as RGBA, row by row, 4 bytes a pixel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    pub width: u32,
    pub height: u32,
    pub rgba: Vec<u8>,
}

impl Image {
    /// The pixel at (x, y) as `[r, g, b, a]`.
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 4] {
        assert!(
            x < self.width && y < self.height,
            "({x}, {y}) is outside a {}x{} image",
            self.width,
            self.height
        );
        let i = (y as usize * self.width as usize + x as usize) * 4;
        [
            self.rgba[i],
            self.rgba[i + 1],
            self.rgba[i + 2],
            self.rgba[i + 3],
        ]
    }
}

const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];

/// Decodes a PNG into RGBA.
pub fn decode(png: &[u8]) -> Result<Image, String> {
    if png.get(..8) != Some(&SIGNATURE[..]) {
        return Err("not a PNG (bad signature)".into());
    }
    let mut pos = 8;
    let mut header = None;
    let mut idat = Vec::new();
    loop {
        let len = be32(png, pos).ok_or("the PNG ends inside a chunk header")? as usize;
        let kind = png
            .get(pos + 4..pos + 8)
            .ok_or("the PNG ends inside a chunk header")?;
        let end = (pos + 8)
            .checked_add(len)
            .filter(|&e| e + 4 <= png.len())
            .ok_or_else(|| format!("chunk {} runs past the end", String::from_utf8_lossy(kind)))?;
        let data = &png[pos + 8..end];
        let stored_crc = be32(png, end).ok_or("missing CRC")?;
        if crc32(&png[pos + 4..end]) != stored_crc {
            return Err(format!(
                "bad CRC on chunk {}",
                String::from_utf8_lossy(kind)
            ));
        }
        match kind {
            b"IHDR" => header = Some(Header::parse(data)?),
            b"IDAT" => idat.extend_from_slice(data),
            b"IEND" => break,
            _ if kind[0].is_ascii_uppercase() => {
                return Err(format!(
                    "unsupported critical chunk {}",
                    String::from_utf8_lossy(kind)
                ));
            }
            _ => {}
        }
        pos = end + 4;
    }
    let h = header.ok_or("no IHDR chunk")?;
    let channels = h.channels;
    let stride = h.width as usize * channels;
    let expected = (stride + 1) * h.height as usize;
    let raw = zlib_decompress(&idat, expected)?;
    if raw.len() != expected {
        return Err(format!(
            "image data is {} bytes, a {}x{} image needs {expected}",
            raw.len(),
            h.width,
            h.height
        ));
    }
    let pixels = unfilter(&raw, stride, h.height as usize, channels)?;
    let mut rgba = Vec::with_capacity(h.width as usize * h.height as usize * 4);
    for px in pixels.chunks_exact(channels) {
        match channels {
            1 => rgba.extend_from_slice(&[px[0], px[0], px[0], 255]),
            2 => rgba.extend_from_slice(&[px[0], px[0], px[0], px[1]]),
            3 => rgba.extend_from_slice(&[px[0], px[1], px[2], 255]),
            _ => rgba.extend_from_slice(px),
        }
    }
    Ok(Image {
        width: h.width,
        height: h.height,
        rgba,
    })
}

struct Header {
    width: u32,
    height: u32,
    channels: usize,
}

impl Header {
    fn parse(d: &[u8]) -> Result<Header, String> {
        if d.len() != 13 {
            return Err("IHDR is not 13 bytes".into());
        }
        let (width, height) = (be32(d, 0).unwrap_or(0), be32(d, 4).unwrap_or(0));
        let (depth, color, compression, filter, interlace) = (d[8], d[9], d[10], d[11], d[12]);
        if width == 0 || height == 0 || u64::from(width) * u64::from(height) > 1 << 28 {
            return Err(format!("unreasonable size {width}x{height}"));
        }
        if depth != 8 {
            return Err(format!("bit depth {depth} is not supported (only 8)"));
        }
        let channels = match color {
            0 => 1,
            2 => 3,
            4 => 2,
            6 => 4,
            _ => return Err(format!("colour type {color} is not supported")),
        };
        if compression != 0 || filter != 0 {
            return Err("unknown compression or filter method".into());
        }
        if interlace != 0 {
            return Err("interlaced PNGs are not supported".into());
        }
        Ok(Header {
            width,
            height,
            channels,
        })
    }
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

/// Undoes the five PNG filters (none, sub, up, average, Paeth), row by row.
fn unfilter(raw: &[u8], stride: usize, height: usize, bpp: usize) -> Result<Vec<u8>, String> {
    let mut out = vec![0u8; stride * height];
    let zero = vec![0u8; stride];
    for y in 0..height {
        let filter = raw[y * (stride + 1)];
        let src = &raw[y * (stride + 1) + 1..(y + 1) * (stride + 1)];
        let (done, rest) = out.split_at_mut(y * stride);
        let prev = if y == 0 {
            &zero[..]
        } else {
            &done[(y - 1) * stride..]
        };
        let cur = &mut rest[..stride];
        for i in 0..stride {
            let a = if i >= bpp { cur[i - bpp] } else { 0 };
            let b = prev[i];
            let c = if i >= bpp { prev[i - bpp] } else { 0 };
            let predicted = match filter {
                0 => 0,
                1 => a,
                2 => b,
                3 => ((u16::from(a) + u16::from(b)) / 2) as u8,
                4 => paeth(a, b, c),
                f => return Err(format!("unknown filter type {f} on row {y}")),
            };
            cur[i] = src[i].wrapping_add(predicted);
        }
    }
    Ok(out)
}

fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let p = i16::from(a) + i16::from(b) - i16::from(c);
    let (pa, pb, pc) = (
        (p - i16::from(a)).abs(),
        (p - i16::from(b)).abs(),
        (p - i16::from(c)).abs(),
    );
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}

const CRC_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut n = 0;
    while n < 256 {
        let mut c = n as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 == 1 {
                0xedb8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        table[n] = c;
        n += 1;
    }
    table
};

/// CRC-32 as PNG uses it (over a chunk's type and data).
pub fn crc32(data: &[u8]) -> u32 {
    !data.iter().fold(!0u32, |c, &b| {
        CRC_TABLE[((c ^ u32::from(b)) & 0xff) as usize] ^ (c >> 8)
    })
}

/// Adler-32 as zlib uses it.
pub fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for chunk in data.chunks(5552) {
        for &x in chunk {
            a += u32::from(x);
            b += a;
        }
        a %= 65521;
        b %= 65521;
    }
    (b << 16) | a
}

/// Inflates a zlib stream (RFC 1950 around RFC 1951) and checks its Adler-32. `limit` bounds
/// the output: more is an error.
pub fn zlib_decompress(data: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    let (cmf, flg) = match data {
        [cmf, flg, ..] => (*cmf, *flg),
        _ => return Err("zlib stream shorter than its header".into()),
    };
    if cmf & 0x0f != 8 || cmf >> 4 > 7 || (u16::from(cmf) << 8 | u16::from(flg)) % 31 != 0 {
        return Err("bad zlib header".into());
    }
    if flg & 0x20 != 0 {
        return Err("zlib preset dictionaries are not supported".into());
    }
    let mut bits = Bits {
        data,
        pos: 2,
        buf: 0,
        count: 0,
    };
    let out = inflate_bits(&mut bits, limit)?;
    let stored = be32(data, bits.pos).ok_or("zlib stream ends before its Adler-32")?;
    if adler32(&out) != stored {
        return Err("zlib Adler-32 does not match".into());
    }
    Ok(out)
}

/// Inflates a raw deflate stream (RFC 1951).
pub fn inflate(data: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    inflate_bits(
        &mut Bits {
            data,
            pos: 0,
            buf: 0,
            count: 0,
        },
        limit,
    )
}

struct Bits<'a> {
    data: &'a [u8],
    pos: usize,
    buf: u32,
    count: u32,
}

impl Bits<'_> {
    /// `n` (at most 16) bits, least significant first.
    fn take(&mut self, n: u32) -> Result<u32, String> {
        while self.count < n {
            let byte = *self.data.get(self.pos).ok_or("deflate stream ends early")?;
            self.pos += 1;
            self.buf |= u32::from(byte) << self.count;
            self.count += 8;
        }
        let v = self.buf & ((1u32 << n) - 1);
        self.buf >>= n;
        self.count -= n;
        Ok(v)
    }

    /// Drops the bits left in the current byte.
    fn align(&mut self) {
        self.buf = 0;
        self.count = 0;
    }
}

/// A canonical Huffman code: how many codes of each length, and the symbols in code order.
struct Huffman {
    counts: [u16; 16],
    symbols: Vec<u16>,
}

impl Huffman {
    fn new(lengths: &[u8]) -> Result<Huffman, String> {
        let mut counts = [0u16; 16];
        for &l in lengths {
            counts[l as usize] += 1;
        }
        counts[0] = 0;
        let mut left: i32 = 1;
        for &c in &counts[1..] {
            left = left * 2 - i32::from(c);
            if left < 0 {
                return Err("over-subscribed Huffman code".into());
            }
        }
        let mut offsets = [0u16; 16];
        for len in 1..15 {
            offsets[len + 1] = offsets[len] + counts[len];
        }
        let mut symbols = vec![0u16; lengths.len()];
        for (sym, &l) in lengths.iter().enumerate() {
            if l != 0 {
                symbols[offsets[l as usize] as usize] = sym as u16;
                offsets[l as usize] += 1;
            }
        }
        Ok(Huffman { counts, symbols })
    }

    fn decode(&self, bits: &mut Bits) -> Result<u16, String> {
        let (mut code, mut first, mut index) = (0i32, 0i32, 0i32);
        for len in 1..16 {
            code |= bits.take(1)? as i32;
            let count = i32::from(self.counts[len]);
            if code - first < count {
                return Ok(self.symbols[(index + code - first) as usize]);
            }
            index += count;
            first = (first + count) << 1;
            code <<= 1;
        }
        Err("invalid Huffman code".into())
    }
}

const LEN_BASE: [u16; 29] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131,
    163, 195, 227, 258,
];
const LEN_EXTRA: [u8; 29] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];
const DIST_BASE: [u16; 30] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
    2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
];
const DIST_EXTRA: [u8; 30] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13,
    13,
];
/// The order in which a dynamic block lists the code-length code's lengths.
const CLEN_ORDER: [usize; 19] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
];

fn inflate_bits(bits: &mut Bits, limit: usize) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let last = bits.take(1)? == 1;
        match bits.take(2)? {
            0 => stored(bits, &mut out, limit)?,
            1 => {
                let (lit, dist) = fixed_codes()?;
                codes(bits, &mut out, limit, &lit, &dist)?;
            }
            2 => {
                let (lit, dist) = dynamic_codes(bits)?;
                codes(bits, &mut out, limit, &lit, &dist)?;
            }
            _ => return Err("deflate block type 3 is invalid".into()),
        }
        if last {
            return Ok(out);
        }
    }
}

fn stored(bits: &mut Bits, out: &mut Vec<u8>, limit: usize) -> Result<(), String> {
    bits.align();
    let len = bits.take(16)?;
    let nlen = bits.take(16)?;
    if len != !nlen & 0xffff {
        return Err("stored block length does not match its complement".into());
    }
    let len = len as usize;
    let data = bits
        .data
        .get(bits.pos..bits.pos + len)
        .ok_or("stored block runs past the end")?;
    if out.len() + len > limit {
        return Err(format!("inflated data is larger than {limit} bytes"));
    }
    out.extend_from_slice(data);
    bits.pos += len;
    Ok(())
}

fn fixed_codes() -> Result<(Huffman, Huffman), String> {
    let mut lengths = [0u8; 288];
    lengths[..144].fill(8);
    lengths[144..256].fill(9);
    lengths[256..280].fill(7);
    lengths[280..].fill(8);
    Ok((Huffman::new(&lengths)?, Huffman::new(&[5u8; 30])?))
}

fn dynamic_codes(bits: &mut Bits) -> Result<(Huffman, Huffman), String> {
    let nlen = bits.take(5)? as usize + 257;
    let ndist = bits.take(5)? as usize + 1;
    let ncode = bits.take(4)? as usize + 4;
    if nlen > 286 || ndist > 30 {
        return Err("too many length or distance codes".into());
    }
    let mut clen = [0u8; 19];
    for &i in &CLEN_ORDER[..ncode] {
        clen[i] = bits.take(3)? as u8;
    }
    let clen_code = Huffman::new(&clen)?;
    let mut lengths = Vec::with_capacity(nlen + ndist);
    while lengths.len() < nlen + ndist {
        let sym = clen_code.decode(bits)?;
        let (value, repeat) = match sym {
            0..=15 => (sym as u8, 1),
            16 => (
                *lengths.last().ok_or("repeat with no previous length")?,
                3 + bits.take(2)?,
            ),
            17 => (0, 3 + bits.take(3)?),
            _ => (0, 11 + bits.take(7)?),
        };
        if lengths.len() + repeat as usize > nlen + ndist {
            return Err("code lengths repeat past the end".into());
        }
        lengths.extend(std::iter::repeat_n(value, repeat as usize));
    }
    if lengths[256] == 0 {
        return Err("no end-of-block code".into());
    }
    Ok((
        Huffman::new(&lengths[..nlen])?,
        Huffman::new(&lengths[nlen..])?,
    ))
}

fn codes(
    bits: &mut Bits,
    out: &mut Vec<u8>,
    limit: usize,
    lit: &Huffman,
    dist: &Huffman,
) -> Result<(), String> {
    loop {
        let sym = lit.decode(bits)? as usize;
        if sym < 256 {
            if out.len() >= limit {
                return Err(format!("inflated data is larger than {limit} bytes"));
            }
            out.push(sym as u8);
        } else if sym == 256 {
            return Ok(());
        } else {
            let i = sym - 257;
            if i >= LEN_BASE.len() {
                return Err(format!("invalid length symbol {sym}"));
            }
            let len = usize::from(LEN_BASE[i]) + bits.take(u32::from(LEN_EXTRA[i]))? as usize;
            let d = dist.decode(bits)? as usize;
            if d >= DIST_BASE.len() {
                return Err(format!("invalid distance symbol {d}"));
            }
            let back = usize::from(DIST_BASE[d]) + bits.take(u32::from(DIST_EXTRA[d]))? as usize;
            if back > out.len() {
                return Err("distance reaches before the start".into());
            }
            if out.len() + len > limit {
                return Err(format!("inflated data is larger than {limit} bytes"));
            }
            let start = out.len() - back;
            for k in 0..len {
                out.push(out[start + k]);
            }
        }
    }
}

/// The fraction of pixels (0.0 to 1.0) in which some channel differs by more than `tolerance`;
/// 1.0 when the sizes differ.
pub fn differing_fraction(a: &Image, b: &Image, tolerance: u8) -> f64 {
    if a.width != b.width || a.height != b.height || a.rgba.len() != b.rgba.len() {
        return 1.0;
    }
    let total = a.rgba.len() / 4;
    if total == 0 {
        return 0.0;
    }
    let differing = a
        .rgba
        .chunks_exact(4)
        .zip(b.rgba.chunks_exact(4))
        .filter(|(p, q)| {
            p.iter()
                .zip(q.iter())
                .any(|(x, y)| x.abs_diff(*y) > tolerance)
        })
        .count();
    differing as f64 / total as f64
}

/// Per-channel tolerance of [`check_snapshot`]: anti-aliasing noise, not a change.
pub const SNAPSHOT_TOLERANCE: u8 = 8;

/// Compares `png` with the snapshot at `path`. A missing snapshot is written (and passes), as
/// is every snapshot when `UPDATE_SNAPSHOTS=1` or `INSTA_UPDATE=always`. Otherwise more than
/// `max_fraction` of pixels differing fails, and the new image is written beside the old one
/// as `<name>.new.png`.
pub fn check_snapshot(path: &Path, png: &[u8], max_fraction: f64) -> Result<(), String> {
    let update = std::env::var("UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1")
        || std::env::var("INSTA_UPDATE").is_ok_and(|v| v == "always");
    check_snapshot_with(path, png, max_fraction, update)
}

/// [`check_snapshot`] with the update switch given rather than read from the environment.
pub fn check_snapshot_with(
    path: &Path,
    png: &[u8],
    max_fraction: f64,
    update: bool,
) -> Result<(), String> {
    let new_path = new_snapshot_path(path);
    if update || !path.exists() {
        let new = decode(png).map_err(|e| format!("the new image is not a usable PNG: {e}"))?;
        write(path, png)?;
        let _ = std::fs::remove_file(&new_path);
        eprintln!(
            "snapshot {} written ({}x{}){}",
            path.display(),
            new.width,
            new.height,
            if update { "" } else { ": there was none" }
        );
        return Ok(());
    }
    let old_bytes =
        std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let old = decode(&old_bytes).map_err(|e| format!("snapshot {}: {e}", path.display()))?;
    let new = decode(png).map_err(|e| format!("the new image is not a usable PNG: {e}"))?;
    let fraction = differing_fraction(&old, &new, SNAPSHOT_TOLERANCE);
    if fraction <= max_fraction {
        let _ = std::fs::remove_file(&new_path);
        return Ok(());
    }
    write(&new_path, png)?;
    Err(format!(
        "{} differs from its snapshot: {:.4}% of pixels changed ({}x{} was {}x{}), at most \
         {:.4}% allowed; the new image is {} (UPDATE_SNAPSHOTS=1 accepts it)",
        path.display(),
        fraction * 100.0,
        new.width,
        new.height,
        old.width,
        old.height,
        max_fraction * 100.0,
        new_path.display()
    ))
}

/// `dir/name.png` -> `dir/name.new.png`.
pub fn new_snapshot_path(path: &Path) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!("{stem}.new.png"))
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
