//! Shared by the `auth_*` integration tests: start the real binary on a free port with its own
//! storage folder, speak HTTP/1.1 to it, keep cookies, look into its database.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The session token of spec/03 §4.2 and its signed cookie (SECRET_KEY_BASE=dummy,
/// expiring 2045-01-01).
pub const VECTOR_TOKEN: &str = "AxJs94fteQ5Autv2VrKsH68c";
pub const VECTOR_COOKIE: &str = "eyJfcmFpbHMiOnsibWVzc2FnZSI6IklrRjRTbk01TkdaMFpWRTFRWFYwZGpKV2NrdHpTRFk0WXlJPSIsImV4cCI6IjIwNDUtMDEtMDFUMDA6MDA6MDAuMDAwWiIsInB1ciI6ImNvb2tpZS5zZXNzaW9uX3Rva2VuIn19--9a3b592fcd6510f211f76a49d51a34ba74df6c5b";

pub fn binary() -> PathBuf {
    match std::env::var_os("CAMPFIRE_BIN") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_BIN_EXE_campfire-room")),
    }
}

/// The binary with nothing of this process's environment but a server on `port` keeping
/// its database and files under `dir`, with the access log off (the harnesses add the rest).
pub fn command(port: u16, dir: &Path) -> Command {
    let mut cmd = Command::new(binary());
    cmd.env_clear()
        .env("PORT", port.to_string())
        .env("STORAGE_PATH", dir.join("storage"))
        .env("DATABASE_PATH", dir.join("storage/db/test.sqlite3"))
        .env("CAMPFIRE_LOG", "0");
    cmd
}

pub struct Server {
    pub port: u16,
    pub dir: PathBuf,
    child: Child,
}

impl Server {
    /// Starts the binary with SECRET_KEY_BASE=dummy, DISABLE_SSL=1 and `env` on top.
    pub fn start(env: &[(&str, &str)]) -> Server {
        let dir = std::env::temp_dir().join(format!(
            "campfire-auth-{}-{}",
            std::process::id(),
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Server::start_in(&dir, env)
    }

    /// Starts the binary on the database and files already in `dir` (a restart).
    pub fn start_in(dir: &Path, env: &[(&str, &str)]) -> Server {
        let dir = dir.to_path_buf();
        for _ in 0..20 {
            let port = free_port();
            let mut cmd = command(port, &dir);
            cmd.env("SECRET_KEY_BASE", "dummy")
                .env("DISABLE_SSL", "1")
                .env("CAMPFIRE_LOOPS", "2")
                .stdout(Stdio::null())
                .stderr(Stdio::from(std::fs::File::create(dir.join("stderr.txt")).unwrap()));
            for (k, v) in env {
                cmd.env(k, v);
            }
            let child = cmd.spawn().expect("start campfire-room");
            let mut srv = Server { port, dir: dir.clone(), child };
            if srv.wait_up() {
                return srv;
            }
            let _ = srv.child.kill();
            let _ = srv.child.wait();
        }
        panic!("campfire-room did not start: {}", std::fs::read_to_string(dir.join("stderr.txt")).unwrap_or_default());
    }

    fn wait_up(&mut self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return false;
            }
            if let Ok(r) = self.try_send(&Request::get("/up")) {
                if r.status == 200 {
                    return true;
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn db_path(&self) -> PathBuf {
        self.dir.join("storage/db/test.sqlite3")
    }

    /// Runs SQL against the server's database from this process (another connection, as an
    /// operator's `sqlite3` would).
    pub fn sql(&self, sql: &str) {
        let conn = campfire::db::Conn::open(self.db_path().to_str().unwrap(), campfire::db::Mode::ReadWrite).unwrap();
        conn.exec(sql).unwrap();
    }

    /// The first column of the first row of `sql` as an integer.
    pub fn query_int(&self, sql: &str) -> i64 {
        let conn = campfire::db::Conn::open(self.db_path().to_str().unwrap(), campfire::db::Mode::ReadOnly).unwrap();
        let mut st = conn.prepare(sql).unwrap();
        assert!(st.row().unwrap(), "no row for {sql}");
        st.int(0)
    }

    /// The first column of the first row of `sql` as text.
    pub fn query_text(&self, sql: &str) -> String {
        let conn = campfire::db::Conn::open(self.db_path().to_str().unwrap(), campfire::db::Mode::ReadOnly).unwrap();
        let mut st = conn.prepare(sql).unwrap();
        assert!(st.row().unwrap(), "no row for {sql}");
        st.string(0).unwrap()
    }

    pub fn send(&self, req: &Request) -> Response {
        self.try_send(req).expect("request failed")
    }

    fn try_send(&self, req: &Request) -> std::io::Result<Response> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port))?;
        s.set_read_timeout(Some(Duration::from_secs(30)))?;
        s.write_all(&req.bytes(self.port))?;
        let mut raw = Vec::new();
        s.read_to_end(&mut raw)?;
        Ok(Response::parse(&raw))
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.join("stderr.txt")).unwrap_or_default()
    }

    /// Stops the server and hands back its folder, which is then the caller's to remove.
    pub fn stop_keeping_files(mut self) -> PathBuf {
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::mem::take(&mut self.dir)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// One request; sent with `Connection: close`.
#[derive(Clone)]
pub struct Request {
    pub method: &'static str,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn get(path: &str) -> Request {
        Request { method: "GET", path: path.into(), headers: Vec::new(), body: Vec::new() }
    }

    /// A same-origin form POST, as a browser sends it.
    pub fn post_form(path: &str, fields: &[(&str, &str)]) -> Request {
        let body: Vec<String> = fields.iter().map(|(k, v)| format!("{}={}", enc(k), enc(v))).collect();
        Request {
            method: "POST",
            path: path.into(),
            headers: vec![
                ("Content-Type".into(), "application/x-www-form-urlencoded".into()),
                ("Sec-Fetch-Site".into(), "same-origin".into()),
            ],
            body: body.join("&").into_bytes(),
        }
    }

    /// A same-origin `multipart/form-data` POST, as a browser sends a form with a file input:
    /// `fields`, then `file` as (field name, filename, content type, bytes).
    pub fn multipart(path: &str, fields: &[(&str, &str)], file: Option<(&str, &str, &str, &[u8])>) -> Request {
        let boundary = "----campfireTestBoundary7MA4YWxk";
        let mut body = Vec::new();
        for (k, v) in fields {
            body.extend_from_slice(format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n").as_bytes());
        }
        if let Some((name, filename, ct, data)) = file {
            body.extend_from_slice(
                format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{filename}\"\r\nContent-Type: {ct}\r\n\r\n").as_bytes(),
            );
            body.extend_from_slice(data);
            body.extend_from_slice(b"\r\n");
        }
        body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
        Request {
            method: "POST",
            path: path.into(),
            headers: vec![
                ("Content-Type".into(), format!("multipart/form-data; boundary={boundary}")),
                ("Sec-Fetch-Site".into(), "same-origin".into()),
            ],
            body,
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Request {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.headers.push((name.into(), value.into()));
        self
    }

    pub fn without(mut self, name: &str) -> Request {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self
    }

    pub fn cookies(self, jar: &Jar) -> Request {
        if jar.0.is_empty() {
            return self;
        }
        let v: Vec<String> = jar.0.iter().map(|(k, v)| format!("{k}={v}")).collect();
        self.header("Cookie", &v.join("; "))
    }

    pub fn bytes(&self, port: u16) -> Vec<u8> {
        let mut out = format!("{} {} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n", self.method, self.path);
        for (k, v) in &self.headers {
            out.push_str(&format!("{k}: {v}\r\n"));
        }
        if !self.body.is_empty() || self.method == "POST" {
            out.push_str(&format!("Content-Length: {}\r\n", self.body.len()));
        }
        out.push_str("\r\n");
        let mut b = out.into_bytes();
        b.extend_from_slice(&self.body);
        b
    }
}

/// Form-URL encoding for test bodies (the library's, as Rack escapes).
pub fn enc(s: &str) -> String {
    let mut out = Vec::new();
    campfire::crypto::cookies::form_escape(s.as_bytes(), &mut out);
    String::from_utf8(out).unwrap()
}

#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// The body as sent, for binary files (`body` is its lossy UTF-8 reading).
    pub raw_body: Vec<u8>,
}

impl Response {
    pub fn parse(raw: &[u8]) -> Response {
        let text = String::from_utf8_lossy(raw).into_owned();
        let raw_body = raw.windows(4).position(|w| w == b"\r\n\r\n").map_or(Vec::new(), |i| raw[i + 4..].to_vec());
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let mut lines = head.split("\r\n");
        let status = lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|s| s.parse().ok()).unwrap_or(0);
        let headers = lines
            .filter_map(|l| l.split_once(": ").map(|(k, v)| (k.to_string(), v.to_string())))
            .collect();
        Response { status, headers, body: body.to_string(), raw_body }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn location(&self) -> Option<&str> {
        self.header("Location")
    }

    pub fn set_cookies(&self) -> Vec<&str> {
        self.headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case("Set-Cookie")).map(|(_, v)| v.as_str()).collect()
    }
}

/// A browser's cookie jar, enough for our cookies (one host, path /).
#[derive(Default, Clone, Debug)]
pub struct Jar(pub Vec<(String, String)>);

impl Jar {
    /// Applies the response's Set-Cookie headers (deletions included).
    pub fn update(&mut self, r: &Response) {
        for sc in r.set_cookies() {
            let pair = sc.split(';').next().unwrap_or("");
            let Some((name, value)) = pair.split_once('=') else { continue };
            self.0.retain(|(n, _)| n != name);
            if !value.is_empty() && !sc.contains("max-age=0") {
                self.0.push((name.to_string(), value.to_string()));
            }
        }
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// Sends `req` with these cookies and keeps what comes back.
    pub fn send(&mut self, srv: &Server, req: Request) -> Response {
        let r = srv.send(&req.cookies(self));
        self.update(&r);
        r
    }
}

/// Runs first run through HTTP (an administrator Ada) and returns her cookie jar.
pub fn first_run(srv: &Server) -> Jar {
    let mut jar = Jar::default();
    let r = jar.send(
        srv,
        Request::post_form(
            "/first_run",
            &[("user[name]", "Ada Admin"), ("user[email_address]", "ada@example.com"), ("user[password]", "secret123456")],
        ),
    );
    assert_eq!(r.status, 302, "{r:?}\n{}", srv.stderr());
    assert!(jar.get("session_token").is_some());
    jar
}
