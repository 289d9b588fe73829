use super::*;
use crate::protocol::FrozenCall;

const ORIGIN: &str = "http://127.0.0.1:8377";

struct Page {
    _dir: tempfile::TempDir,
    db: PathBuf,
    shared: Shared,
}

impl Page {
    fn new(scope: Scope) -> Page {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("airlock.db");
        let address: SocketAddr = "127.0.0.1:8377".parse().unwrap();
        let shared = Shared::new(
            db.clone(),
            scope,
            false,
            allowed_hosts(ORIGIN, address),
            String::new(),
        );
        Page {
            _dir: dir,
            db,
            shared,
        }
    }

    fn store(&self) -> Store {
        Store::open(&self.db).unwrap()
    }

    /// A request waiting in session `session`: its code and digest.
    fn waiting(&self, session: &str, command: &str) -> (String, String) {
        let store = self.store();
        let frozen = FrozenCall::freeze("bash", &serde_json::json!({"command": command}));
        store
            .save_run(
                session,
                session,
                std::path::Path::new("/w"),
                "live",
                None,
                1,
            )
            .unwrap();
        let summary = serde_json::json!({
            "risk": "dangerous",
            "reasons": ["it deletes files"],
            "preview": {"kind": "command", "command": command, "cwd": "/w"},
        });
        let code = store
            .add_approval(
                session,
                session,
                "c1",
                &frozen,
                &summary.to_string(),
                now_ms(),
                3_600_000,
            )
            .unwrap();
        (code, frozen.digest)
    }

    fn get(&self, uri: &str, headers: &[(&str, &str)]) -> Reply {
        self.call(Method::GET, uri, headers, "", now_ms())
    }

    fn call(
        &self,
        method: Method,
        uri: &str,
        headers: &[(&str, &str)],
        body: &str,
        now: u64,
    ) -> Reply {
        let mut request = Request::builder()
            .method(method)
            .uri(uri)
            .header("host", "127.0.0.1:8377");
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        let (head, ()) = request.body(()).unwrap().into_parts();
        self.shared.route(&head, body.as_bytes(), now)
    }

    /// Pairs a device; its cookie header.
    fn paired(&self) -> String {
        self.shared
            .add_token("tok", super::super::pairing::TOKEN_TTL_MS);
        let reply = self.call(
            Method::POST,
            "/pair",
            &[("origin", ORIGIN)],
            "token=tok&name=phone",
            now_ms(),
        );
        assert_eq!(reply.status, StatusCode::SEE_OTHER, "{}", reply.body);
        let cookie = reply.cookie.unwrap();
        cookie.split(';').next().unwrap().to_string()
    }

    fn form_token(&self, cookie: &str) -> String {
        self.store()
            .form_token(cookie.trim_start_matches("airlock_device="))
    }

    fn answer(&self, cookie: &str, fields: &str) -> Reply {
        self.call(
            Method::POST,
            "/answer",
            &[("origin", ORIGIN), ("cookie", cookie)],
            fields,
            now_ms(),
        )
    }
}

#[test]
fn a_pairing_token_gives_a_strict_http_only_cookie_and_pairs_only_once() {
    let page = Page::new(Scope::Everything);
    let token = "0123abcd";
    page.shared
        .add_token(token, super::super::pairing::TOKEN_TTL_MS);
    let form = page.get(&format!("/pair?token={token}"), &[]);
    assert_eq!(form.status, StatusCode::OK);
    assert!(form.body.contains("Pair this device"));
    let now = now_ms();
    let paired = page.call(
        Method::POST,
        "/pair",
        &[("origin", ORIGIN)],
        &format!("token={token}&name=phone"),
        now,
    );
    assert_eq!(paired.status, StatusCode::SEE_OTHER);
    let cookie = paired.cookie.unwrap();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    assert!(
        !cookie.contains("Secure"),
        "no Secure flag over plain HTTP on loopback"
    );
    let again = page.call(
        Method::POST,
        "/pair",
        &[("origin", ORIGIN)],
        &format!("token={token}&name=evil"),
        now,
    );
    assert_eq!(again.status, StatusCode::FORBIDDEN);
    assert!(again.body.contains("already used"), "{}", again.body);
    assert_eq!(page.store().devices().unwrap().len(), 1);
}

#[test]
fn an_expired_pairing_token_is_refused_as_expired() {
    let page = Page::new(Scope::Everything);
    page.shared
        .add_token("tok", super::super::pairing::TOKEN_TTL_MS);
    let late = now_ms() + super::super::pairing::TOKEN_TTL_MS + 1;
    let reply = page.call(
        Method::POST,
        "/pair",
        &[("origin", ORIGIN)],
        "token=tok&name=phone",
        late,
    );
    assert_eq!(reply.status, StatusCode::FORBIDDEN);
    assert!(reply.body.contains("expired"), "{}", reply.body);
    assert!(page.store().devices().unwrap().is_empty());
}

#[test]
fn a_paired_device_sees_the_waiting_command_and_an_unpaired_one_sees_nothing() {
    let page = Page::new(Scope::Everything);
    page.waiting("s1", "rm -rf build");
    let stranger = page.get("/", &[]);
    assert_eq!(stranger.status, StatusCode::UNAUTHORIZED);
    assert!(!stranger.body.contains("rm -rf"));
    let cookie = page.paired();
    let seen = page.get("/", &[("cookie", &cookie)]);
    assert_eq!(seen.status, StatusCode::OK);
    assert!(seen.body.contains("rm -rf build") && seen.body.contains("it deletes files"));
}

#[test]
fn an_answer_with_the_shown_digest_decides_and_records_the_device() {
    let page = Page::new(Scope::Everything);
    let (code, digest) = page.waiting("s1", "make");
    let cookie = page.paired();
    let token = page.form_token(&cookie);
    let reply = page.answer(
        &cookie,
        &format!("code={code}&digest={digest}&form_token={token}&decision=deny&reason=not+now"),
    );
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let row = page.store().approval_by_code(&code).unwrap().unwrap();
    assert_eq!(row.state, "denied");
    let decision: Value = serde_json::from_str(row.decision.as_deref().unwrap()).unwrap();
    assert_eq!(decision["reason"], "not now");
    assert_eq!(decision["by"]["channel"], "page");
    assert_eq!(decision["by"]["device"], "phone");
    // Answered: a second answer changes nothing.
    let again = page.answer(
        &cookie,
        &format!("code={code}&digest={digest}&form_token={token}&decision=allow"),
    );
    assert_eq!(again.status, StatusCode::CONFLICT);
    assert!(again.body.contains("already decided"), "{}", again.body);
}

#[test]
fn an_answer_for_a_digest_no_longer_waiting_is_refused() {
    let page = Page::new(Scope::Everything);
    let (code, _) = page.waiting("s1", "make");
    let cookie = page.paired();
    let token = page.form_token(&cookie);
    let stale = FrozenCall::freeze("bash", &serde_json::json!({"command": "make -j9"})).digest;
    let reply = page.answer(
        &cookie,
        &format!("code={code}&digest={stale}&form_token={token}&decision=allow"),
    );
    assert_eq!(reply.status, StatusCode::CONFLICT);
    assert!(reply.body.contains("no longer the one this page showed"));
    assert_eq!(
        page.store().approval_by_code(&code).unwrap().unwrap().state,
        "pending"
    );
}

#[test]
fn an_answer_without_the_cookie_from_another_origin_or_with_a_wrong_form_token_is_refused() {
    let page = Page::new(Scope::Everything);
    let (code, digest) = page.waiting("s1", "make");
    let cookie = page.paired();
    let token = page.form_token(&cookie);
    let fields = format!("code={code}&digest={digest}&form_token={token}&decision=allow");
    let no_cookie = page.call(
        Method::POST,
        "/answer",
        &[("origin", ORIGIN)],
        &fields,
        now_ms(),
    );
    assert_eq!(no_cookie.status, StatusCode::UNAUTHORIZED);
    let elsewhere = page.call(
        Method::POST,
        "/answer",
        &[("origin", "http://evil.example"), ("cookie", &cookie)],
        &fields,
        now_ms(),
    );
    assert_eq!(elsewhere.status, StatusCode::FORBIDDEN);
    let cross_site = page.call(
        Method::POST,
        "/answer",
        &[("sec-fetch-site", "cross-site"), ("cookie", &cookie)],
        &fields,
        now_ms(),
    );
    assert_eq!(cross_site.status, StatusCode::FORBIDDEN);
    let forged = page.answer(
        &cookie,
        &format!("code={code}&digest={digest}&form_token=00{token}&decision=allow"),
    );
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    assert_eq!(
        page.store().approval_by_code(&code).unwrap().unwrap().state,
        "pending"
    );
}

#[test]
fn a_request_under_another_host_name_is_refused_whatever_it_carries() {
    let page = Page::new(Scope::Everything);
    let cookie = page.paired();
    let (head, ()) = Request::builder()
        .uri("/")
        .header("host", "rebound.example:8377")
        .header("cookie", &cookie)
        .body(())
        .unwrap()
        .into_parts();
    let reply = page.shared.route(&head, b"", now_ms());
    assert_eq!(reply.status, StatusCode::MISDIRECTED_REQUEST);
    // localhost is the same machine's name for the page.
    let (head, ()) = Request::builder()
        .uri("/")
        .header("host", "localhost:8377")
        .header("cookie", &cookie)
        .body(())
        .unwrap()
        .into_parts();
    assert_eq!(
        page.shared.route(&head, b"", now_ms()).status,
        StatusCode::OK
    );
}

#[test]
fn a_headless_runs_page_lists_and_answers_only_its_own_session() {
    let page = Page::new(Scope::Session("mine".into()));
    page.waiting("mine", "echo mine");
    let (other, digest) = page.waiting("other", "echo other");
    let cookie = page.paired();
    let seen = page.get("/", &[("cookie", &cookie)]);
    assert!(seen.body.contains("echo mine") && !seen.body.contains("echo other"));
    let token = page.form_token(&cookie);
    let reply = page.answer(
        &cookie,
        &format!("code={other}&digest={digest}&form_token={token}&decision=allow"),
    );
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
}

#[test]
fn too_many_wrong_tokens_lock_pairing_for_a_minute_even_for_the_right_one() {
    let page = Page::new(Scope::Everything);
    page.shared
        .add_token("right", super::super::pairing::TOKEN_TTL_MS);
    let now = now_ms();
    for i in 0..super::super::pairing::GUESSES_PER_MINUTE {
        let reply = page.call(Method::GET, &format!("/pair?token=guess{i}"), &[], "", now);
        assert_eq!(reply.status, StatusCode::FORBIDDEN);
    }
    let right = page.call(Method::GET, "/pair?token=right", &[], "", now);
    assert_eq!(right.status, StatusCode::TOO_MANY_REQUESTS);
    let later = page.call(Method::GET, "/pair?token=right", &[], "", now + 61_000);
    assert_eq!(later.status, StatusCode::OK);
}

#[test]
fn nothing_on_the_page_reads_files_or_starts_anything() {
    let page = Page::new(Scope::Everything);
    let cookie = page.paired();
    for uri in [
        "/../../etc/passwd",
        "/file?path=/etc/passwd",
        "/run",
        "/rules",
        "/api",
    ] {
        let reply = page.get(uri, &[("cookie", &cookie)]);
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{uri}");
    }
    let reply = page.call(Method::PUT, "/answer", &[("cookie", &cookie)], "", now_ms());
    assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED);
}

#[test]
fn the_page_answers_only_under_its_secret_path_and_scopes_the_cookie_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let address: SocketAddr = "127.0.0.1:8377".parse().unwrap();
    let shared = Shared::new(
        dir.path().join("airlock.db"),
        Scope::Everything,
        false,
        allowed_hosts(ORIGIN, address),
        "/p/abc".into(),
    );
    let call = |method: Method, uri: &str, body: &str| {
        let (head, ()) = Request::builder()
            .method(method)
            .uri(uri)
            .header("host", "127.0.0.1:8377")
            .body(())
            .unwrap()
            .into_parts();
        shared.route(&head, body.as_bytes(), now_ms())
    };
    assert_eq!(call(Method::GET, "/", "").status, StatusCode::NOT_FOUND);
    assert_eq!(
        call(Method::GET, "/page.css", "").status,
        StatusCode::NOT_FOUND
    );
    let bare = call(Method::GET, "/p/abc", "");
    assert_eq!(bare.location.as_deref(), Some("/p/abc/"));
    assert_eq!(
        call(Method::GET, "/p/abc/page.css", "").status,
        StatusCode::OK
    );
    shared.add_token("tok", super::super::pairing::TOKEN_TTL_MS);
    let paired = call(Method::POST, "/p/abc/pair", "token=tok&name=phone");
    assert!(
        paired.cookie.unwrap().contains("; Path=/p/abc/;"),
        "the cookie goes only to the page's own path"
    );
    assert_eq!(paired.location.as_deref(), Some("/p/abc/"));
}

#[test]
fn a_devices_name_never_turns_its_allow_into_a_deny() {
    let page = Page::new(Scope::Everything);
    let (code, digest) = page.waiting("s1", "make");
    page.shared
        .add_token("tok2", super::super::pairing::TOKEN_TTL_MS);
    let reply = page.call(
        Method::POST,
        "/pair",
        &[("origin", ORIGIN)],
        "token=tok2&name=deny",
        now_ms(),
    );
    let cookie = reply.cookie.unwrap().split(';').next().unwrap().to_string();
    let token = page.form_token(&cookie);
    let allowed = page.answer(
        &cookie,
        &format!("code={code}&digest={digest}&form_token={token}&decision=allow"),
    );
    assert_eq!(allowed.status, StatusCode::OK);
    assert_eq!(
        page.store().approval_by_code(&code).unwrap().unwrap().state,
        "approved"
    );
}

#[test]
fn a_strangers_wrong_cookies_never_lock_a_paired_device_out() {
    let page = Page::new(Scope::Everything);
    let cookie = page.paired();
    for i in 0..3 * super::super::pairing::GUESSES_PER_MINUTE {
        page.get("/", &[("cookie", &format!("airlock_device=guess{i}"))]);
    }
    assert_eq!(page.get("/", &[("cookie", &cookie)]).status, StatusCode::OK);
}

#[test]
fn a_request_with_two_hosts_or_a_target_naming_another_host_is_refused() {
    let page = Page::new(Scope::Everything);
    let cookie = page.paired();
    let (head, ()) = Request::builder()
        .uri("/")
        .header("host", "127.0.0.1:8377")
        .header("host", "evil.example")
        .header("cookie", &cookie)
        .body(())
        .unwrap()
        .into_parts();
    assert_eq!(
        page.shared.route(&head, b"", now_ms()).status,
        StatusCode::MISDIRECTED_REQUEST
    );
    let (head, ()) = Request::builder()
        .uri("http://evil.example/")
        .header("host", "127.0.0.1:8377")
        .header("cookie", &cookie)
        .body(())
        .unwrap()
        .into_parts();
    assert_eq!(
        page.shared.route(&head, b"", now_ms()).status,
        StatusCode::MISDIRECTED_REQUEST
    );
}

#[test]
fn a_device_in_use_has_its_cookie_renewed_so_only_an_unused_one_must_pair_again() {
    let page = Page::new(Scope::Everything);
    let cookie = page.paired();
    let seen = page.get("/", &[("cookie", &cookie)]);
    assert_eq!(seen.status, StatusCode::OK, "{}", seen.body);
    let renewed = seen.cookie.expect("the page renews the device's cookie");
    assert!(renewed.starts_with(&format!("{cookie};")), "{renewed}");
    assert!(
        renewed.contains(&format!(
            "Max-Age={}",
            crate::store::db::devices::IDLE_LIMIT_MS / 1000
        )),
        "{renewed}"
    );
    // Nobody else's page view renews anything.
    assert!(page.get("/", &[]).cookie.is_none());
}
