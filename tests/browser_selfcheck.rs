//! The browser harness checked against itself: a tiny HTTP server in the test serves a form,
//! headless Chromium fills it in and submits it, and its screenshots are decoded by the
//! harness's own PNG decoder.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod browser;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use browser::{Browser, png};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const FORM_PAGE: &str = "<!doctype html><html><head><title>Form</title></head>\
<body style=\"margin:0\"><h1 id=\"title\">Say something</h1>\
<form method=\"post\" action=\"/echo\"><input id=\"said\" name=\"said\" data-kind=\"words\">\
<button id=\"send\" type=\"submit\">Send</button></form>\
<ul><li class=\"item\">one</li><li class=\"item\">two</li><li class=\"item\">three</li></ul>\
</body></html>";

const RED_PAGE: &str = "<!doctype html><html><head><title>Red</title>\
<meta name=\"viewport\" content=\"width=device-width\"></head>\
<body style=\"margin:0;background:#ffffff\">\
<div style=\"width:390px;height:200px;background:#ff0000\"></div>\
<p style=\"margin:20px;font:16px sans-serif\">Below the red block</p></body></html>";

/// One response: status line, extra headers, HTML body.
struct Reply {
    status: &'static str,
    headers: Vec<String>,
    body: String,
}

fn html(body: impl Into<String>) -> Reply {
    Reply {
        status: "200 OK",
        headers: Vec::new(),
        body: body.into(),
    }
}

fn route(method: &str, path: &str, body: &[u8]) -> Reply {
    match (method, path) {
        ("GET", "/") => html(FORM_PAGE),
        ("GET", "/red") => html(RED_PAGE),
        ("POST", "/echo") => {
            let form = String::from_utf8_lossy(body);
            let said = form
                .split('&')
                .find_map(|pair| pair.strip_prefix("said="))
                .map(form_decode)
                .unwrap_or_default();
            Reply {
                status: "200 OK",
                headers: vec![
                    "Set-Cookie: sid=s3cret; Path=/; HttpOnly; SameSite=Strict".into(),
                    "Set-Cookie: theme=dark; Path=/; SameSite=Lax".into(),
                ],
                body: format!(
                    "<!doctype html><html><head><title>Echo</title></head><body>\
                     <p id=\"echo\">You said: {}</p></body></html>",
                    escape(&said)
                ),
            }
        }
        _ => Reply {
            status: "404 Not Found",
            headers: Vec::new(),
            body: "<!doctype html><p>not found</p>".into(),
        },
    }
}

/// `application/x-www-form-urlencoded` value: `+` is a space, `%XX` a byte.
fn form_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let escaped = b
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (b[i], escaped) {
            (b'+', _) => out.push(b' '),
            (b'%', Some(v)) => {
                out.push(v);
                i += 2;
            }
            (c, _) => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A tiny HTTP/1.1 server on 127.0.0.1 for the life of the test's runtime.
async fn serve() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(handle(stream));
        }
    });
    addr
}

async fn handle(mut stream: TcpStream) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
        if buf.len() > 64 * 1024 {
            return;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next().unwrap_or("").split(' ');
    let method = request_line.next().unwrap_or("").to_string();
    let path = request_line.next().unwrap_or("").to_string();
    let length = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    while buf.len() < head_end + length {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let reply = route(&method, &path, &buf[head_end..head_end + length]);
    let mut response = format!(
        "HTTP/1.1 {}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n",
        reply.status,
        reply.body.len()
    );
    for h in &reply.headers {
        response.push_str(h);
        response.push_str("\r\n");
    }
    response.push_str("\r\n");
    response.push_str(&reply.body);
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

#[tokio::test]
async fn the_harness_clicks_a_button_types_text_and_reads_the_page_back() {
    let addr = serve().await;
    let b = Browser::start(390, 844).await;
    let home = format!("http://{addr}/");
    b.goto(&home).await;
    assert_eq!(b.current_url().await, home);

    let title = b.find("#title").await.unwrap();
    assert_eq!(b.text(&title).await, "Say something");
    let items = b.find_all("li.item").await;
    assert_eq!(items.len(), 3);
    assert_eq!(b.text(&items[2]).await, "three");
    assert!(b.find_all(".nothing-here").await.is_empty());
    let missing = b.find("#nothing-here").await.unwrap_err();
    assert!(missing.contains("no such element"), "{missing}");

    let input = b.find("#said").await.unwrap();
    assert_eq!(
        b.attribute(&input, "data-kind").await.as_deref(),
        Some("words")
    );
    assert_eq!(b.attribute(&input, "no-such-attribute").await, None);
    b.type_into(&input, "hello <airlock> & 42%").await;
    let typed = b
        .execute(
            "return arguments[0].value;",
            vec![browser::element_arg(&input)],
        )
        .await;
    assert_eq!(typed, json!("hello <airlock> & 42%"));

    let send = b.find("#send").await.unwrap();
    b.click(&send).await;
    let page = b
        .wait_for_text("You said: hello <airlock> & 42%", Duration::from_secs(10))
        .await
        .unwrap();
    assert!(!page.contains("Say something"), "{page}");
    assert_eq!(b.current_url().await, format!("http://{addr}/echo"));
    assert!(b.body_text().await.starts_with("You said:"));
    let gone = b
        .wait_for_text("never on the page", Duration::from_millis(300))
        .await
        .unwrap_err();
    assert!(gone.contains("You said:"), "{gone}");

    let cookies = b.cookies().await;
    let list = cookies.as_array().unwrap();
    let sid = list.iter().find(|c| c["name"] == "sid").unwrap();
    assert_eq!(sid["value"], "s3cret");
    assert_eq!(sid["httpOnly"], true);
    assert_eq!(sid["sameSite"], "Strict");
    let theme = list.iter().find(|c| c["name"] == "theme").unwrap();
    assert_eq!(theme["httpOnly"], false);
    assert_eq!(theme["sameSite"], "Lax");
    // An HttpOnly cookie is not visible to the page's script.
    let from_script = b.execute("return document.cookie;", vec![]).await;
    assert_eq!(from_script, json!("theme=dark"));
}

#[tokio::test]
async fn the_viewport_is_exactly_phone_sized_and_the_screenshot_shows_the_red_block() {
    let addr = serve().await;
    let b = Browser::start(390, 844).await;
    b.goto(&format!("http://{addr}/red")).await;
    let size = b
        .execute(
            "return [window.innerWidth, window.innerHeight, window.devicePixelRatio, \
             document.documentElement.clientWidth];",
            vec![],
        )
        .await;
    assert_eq!(size, json!([390, 844, 1, 390]));
    assert_eq!(b.viewport().await, (390, 844));

    let shot = b.screenshot().await;
    assert_eq!(&shot[..8], b"\x89PNG\r\n\x1a\n");
    let started = Instant::now();
    let img = png::decode(&shot).unwrap();
    eprintln!(
        "decoded a {}-byte screenshot in {:?}",
        shot.len(),
        started.elapsed()
    );
    assert_eq!((img.width, img.height), (390, 844));
    assert_eq!(img.rgba.len(), 390 * 844 * 4);
    for (x, y) in [(0, 0), (195, 100), (389, 199)] {
        assert_eq!(img.pixel(x, y), [255, 0, 0, 255], "at ({x}, {y})");
    }
    assert_eq!(img.pixel(195, 700), [255, 255, 255, 255]);
    // Text was drawn below the block: some pixels there are neither white nor red.
    let inked = (200..300)
        .flat_map(|y| (0..390).map(move |x| (x, y)))
        .filter(|&(x, y)| img.pixel(x, y) != [255, 255, 255, 255])
        .count();
    assert!(inked > 50, "only {inked} inked pixels below the block");

    // The same page shot twice is the same picture.
    let again = png::decode(&b.screenshot().await).unwrap();
    assert_eq!(png::differing_fraction(&img, &again, 0), 0.0);
}

/// `chunk(type, data)` with its length and CRC.
fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let mut body = kind.to_vec();
    body.extend_from_slice(data);
    out.extend_from_slice(&body);
    out.extend_from_slice(&png::crc32(&body).to_be_bytes());
}

/// A PNG whose image data is zlib with stored (uncompressed) deflate blocks of at most
/// `block` bytes. `rows` are the filtered scanlines, filter byte first.
fn stored_png(width: u32, height: u32, color_type: u8, rows: &[u8], block: usize) -> Vec<u8> {
    let mut z = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = rows.chunks(block).collect();
    for (i, b) in blocks.iter().enumerate() {
        z.push(u8::from(i + 1 == blocks.len()));
        let len = b.len() as u16;
        z.extend_from_slice(&len.to_le_bytes());
        z.extend_from_slice(&(!len).to_le_bytes());
        z.extend_from_slice(b);
    }
    z.extend_from_slice(&png::adler32(rows).to_be_bytes());
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, color_type, 0, 0, 0]);
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"tEXt", b"Comment\0skipped");
    // Split the data over two IDAT chunks, as encoders may.
    let half = z.len() / 2;
    chunk(&mut out, b"IDAT", &z[..half]);
    chunk(&mut out, b"IDAT", &z[half..]);
    chunk(&mut out, b"IEND", &[]);
    out
}

fn two_by_two(top_left: [u8; 4]) -> Vec<u8> {
    #[rustfmt::skip]
    let mut rows = vec![
        0, 255, 0, 0, 255,    0, 255, 0, 128,
        0, 0, 0, 255, 255,    255, 255, 255, 0,
    ];
    rows[1..5].copy_from_slice(&top_left);
    stored_png(2, 2, 6, &rows, 5)
}

#[test]
fn the_checksums_match_their_published_values() {
    assert_eq!(png::crc32(b"IEND"), 0xae42_6082);
    assert_eq!(png::crc32(b"123456789"), 0xcbf4_3926);
    assert_eq!(png::adler32(b"Wikipedia"), 0x11e6_0398);
}

#[test]
fn png_decode_reads_a_hand_built_two_by_two_png_in_stored_blocks() {
    let img = png::decode(&two_by_two([255, 0, 0, 255])).unwrap();
    assert_eq!((img.width, img.height), (2, 2));
    assert_eq!(
        img.rgba,
        vec![
            255, 0, 0, 255, 0, 255, 0, 128, 0, 0, 255, 255, 255, 255, 255, 0
        ]
    );
    assert_eq!(img.pixel(1, 0), [0, 255, 0, 128]);
}

#[test]
fn png_decode_undoes_all_five_filters() {
    // A 2x5 RGB image, row y filtered with filter type y (filtered by a separate program).
    #[rustfmt::skip]
    let rows = [
        0, 10, 20, 30, 200, 100, 50,
        1, 11, 22, 33, 239, 239, 27,
        2, 245, 233, 95, 13, 4, 207,
        3, 100, 229, 36, 37, 26, 15,
        4, 157, 158, 159, 254, 252, 250,
    ];
    let img = png::decode(&stored_png(2, 5, 2, &rows, 1000)).unwrap();
    let rgb: Vec<[u8; 3]> = img
        .rgba
        .chunks_exact(4)
        .map(|p| {
            assert_eq!(p[3], 255);
            [p[0], p[1], p[2]]
        })
        .collect();
    assert_eq!(
        rgb,
        vec![
            [10, 20, 30],
            [200, 100, 50],
            [11, 22, 33],
            [250, 5, 60],
            [0, 255, 128],
            [7, 9, 11],
            [100, 100, 100],
            [90, 80, 70],
            [1, 2, 3],
            [255, 254, 253],
        ]
    );
}

#[test]
fn png_decode_refuses_damaged_files() {
    let good = two_by_two([1, 2, 3, 4]);
    assert!(png::decode(&good[1..]).unwrap_err().contains("signature"));
    let mut bad_crc = good.clone();
    bad_crc[20] ^= 1; // inside IHDR's data
    assert!(png::decode(&bad_crc).unwrap_err().contains("CRC"));
    assert!(png::decode(&good[..good.len() - 12]).is_err());
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn inflate_reads_fixed_and_dynamic_huffman_blocks() {
    // Both made by zlib itself (level 9): a short text gets one fixed-Huffman block...
    let fixed = hex("78dacb48cdc9c957c84027751412338b72f293b31501d0500c03");
    assert_eq!((fixed[2] >> 1) & 3, 1, "a fixed-Huffman block");
    assert_eq!(
        png::zlib_decompress(&fixed, 1000).unwrap(),
        b"hello hello hello hello, airlock!"
    );

    // ...and a longer one a dynamic-Huffman block.
    let dynamic = hex(concat!(
        "78da9dd6595203310c45d17f56e125c4833cb01b860602210d8130ad9e827e5ac0f577ea9565eb489d",
        "c3feb884dd65787f58c2eb797ff314ae4febe731dcad5fe1f1fcfcf216d68fe5f4fff3e1eae73bdcae",
        "f7617771f84b45968a5b2ab154d95299a5c6962ab0c2bac58cc5926db1ca6259a735f820ba5b67b1aa",
        "871c2cd6d5b5088964c5a091a42a2355d294834e5a520e4af1189492fd352195eae7412b433223c492",
        "bd7d504bd36648504bd4fd12e462aa33412e43a3972097229e097219befba097e2f7835e86d709bd98",
        "f70f7ae98a412e553c33e49234ed1972e9aa33432ee61f21c8258975865cba567c865caa9865fa25f2",
        "3e402ed1cfa35c347e997a51ae402f457d2fd04b56ff0af412fd3ce8c5af47b78bb644815cbada5e20",
        "97e6ffae2097e6e7412ecdef37e672b69babd3e2dcbb589aeb83e5b9be5b99626636a7daeadc14599b",
        "9b5aeb735bc206de4abf8ce1759a",
    ));
    assert_eq!((dynamic[2] >> 1) & 3, 2, "a dynamic-Huffman block");
    let expected: String = (0..60)
        .map(|i| {
            format!(
                "line {i}: the quick brown fox jumps over the lazy dog {}\n",
                i * i % 97
            )
        })
        .collect();
    let out = png::zlib_decompress(&dynamic, 10_000).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), expected);

    // A limit below the real size, a flipped bit and a cut stream are errors, not garbage.
    assert!(png::zlib_decompress(&dynamic, 100).is_err());
    let mut flipped = dynamic.clone();
    flipped[100] ^= 0x10;
    assert!(png::zlib_decompress(&flipped, 10_000).is_err());
    assert!(png::zlib_decompress(&dynamic[..200], 10_000).is_err());
}

#[test]
fn differing_fraction_counts_pixels_beyond_the_tolerance() {
    let a = png::Image {
        width: 2,
        height: 1,
        rgba: vec![10, 10, 10, 255, 0, 0, 0, 255],
    };
    let mut b = a.clone();
    b.rgba[0] = 15;
    assert_eq!(png::differing_fraction(&a, &b, 5), 0.0);
    assert_eq!(png::differing_fraction(&a, &b, 4), 0.5);
    let c = png::Image {
        width: 1,
        height: 2,
        rgba: a.rgba.clone(),
    };
    assert_eq!(png::differing_fraction(&a, &c, 255), 1.0);
}

#[test]
fn check_snapshot_writes_a_missing_snapshot_then_passes_on_the_same_image_and_fails_on_a_different_one()
 {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("snapshots/page.png");
    let red = two_by_two([255, 0, 0, 255]);
    let blue = two_by_two([0, 0, 255, 255]);
    let new_path = dir.path().join("snapshots/page.new.png");

    png::check_snapshot_with(&path, &red, 0.0, false).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), red);
    png::check_snapshot_with(&path, &red, 0.0, false).unwrap();
    assert!(!new_path.exists());

    // One pixel in four changed: fails at 10% allowed, with the new image written beside.
    let err = png::check_snapshot_with(&path, &blue, 0.1, false).unwrap_err();
    assert!(err.contains("25.0000%"), "{err}");
    assert!(err.contains("page.new.png"), "{err}");
    assert_eq!(std::fs::read(&new_path).unwrap(), blue);
    assert_eq!(std::fs::read(&path).unwrap(), red, "the snapshot is kept");

    // Within what is allowed it passes, and the stale .new.png goes.
    png::check_snapshot_with(&path, &blue, 0.3, false).unwrap();
    assert!(!new_path.exists());

    // Updating takes the new image.
    png::check_snapshot_with(&path, &blue, 0.0, true).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), blue);

    // Garbage is refused, not written.
    let other = dir.path().join("other.png");
    assert!(png::check_snapshot_with(&other, b"not a png", 0.0, false).is_err());
    assert!(!other.exists());
}

#[test]
fn base64_decodes_what_webdriver_sends() {
    assert_eq!(browser::base64_decode("aGVsbG8=").unwrap(), b"hello");
    assert_eq!(browser::base64_decode("aGVsbG8h").unwrap(), b"hello!");
    assert_eq!(browser::base64_decode("aGk\n=").unwrap(), b"hi");
    assert_eq!(
        browser::base64_decode("+/+/").unwrap(),
        vec![0xfb, 0xff, 0xbf]
    );
    assert!(browser::base64_decode("a*b").is_err());
}
