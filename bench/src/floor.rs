//! The floor: Debian's nginx serving the exact response bytes we captured for each route (same
//! body, same Content-Type and Content-Encoding) over keep-alive, measured with the same clients.
//! What nginx spends per request is the kernel-plus-HTTP cost no Campfire can go below.

use crate::contract::Route;
use crate::validate::{Contract, Kind};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running nginx; stopped (by its own pid) when dropped.
pub struct Nginx {
    child: Child,
    pub addr: SocketAddr,
    /// The master and its worker.
    pub pids: Vec<u32>,
}

impl Drop for Nginx {
    // SIGTERM makes the master stop its workers; a SIGKILLed master would orphan them. If it has
    // not exited within 5 s, kill the master and the workers we know of.
    fn drop(&mut self) {
        crate::sys::signal(self.child.id(), libc::SIGTERM);
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(5) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        for pid in &self.pids {
            crate::sys::signal(*pid, libc::SIGKILL);
        }
        let _ = self.child.wait();
    }
}

/// Finds the nginx binary, installing Debian's package when it is missing and we may.
pub fn nginx_binary() -> Result<PathBuf, String> {
    for p in ["/usr/sbin/nginx", "/usr/bin/nginx"] {
        if Path::new(p).exists() {
            return Ok(PathBuf::from(p));
        }
    }
    eprintln!("campfire-bench: nginx not found, installing Debian's nginx-light");
    let ok = Command::new("apt-get").args(["install", "-y", "-qq", "nginx-light"]).status().map(|s| s.success()).unwrap_or(false);
    if ok && Path::new("/usr/sbin/nginx").exists() {
        Ok(PathBuf::from("/usr/sbin/nginx"))
    } else {
        Err("nginx is not installed and apt-get install nginx-light failed".into())
    }
}

/// Starts nginx in `dir` serving each route's captured response; `cpu` pins it (taskset) when given.
pub fn start(routes: &[Route], dir: &Path, cpu: Option<&str>) -> Result<Nginx, String> {
    let bin = nginx_binary()?;
    std::fs::create_dir_all(dir.join("tmp")).map_err(|e| format!("{}: {e}", dir.display()))?;
    let port = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map_err(|e| e.to_string())?.port();
    let mut locations = String::new();
    for r in routes {
        if r.captured.wire.is_empty() {
            continue;
        }
        let file = dir.join(format!("{}.body", r.name));
        std::fs::write(&file, &r.captured.wire).map_err(|e| format!("{}: {e}", file.display()))?;
        let encoding = r.captured.encoding.as_ref().map(|e| format!("add_header Content-Encoding {e};")).unwrap_or_default();
        let path = r.target.split('?').next().unwrap_or("/");
        let serve = format!("default_type \"{}\"; {encoding} alias {};", r.captured.content_type, file.display());
        if r.method == "POST" {
            // nginx answers POST to an existing static file with 405; hand that to an internal GET
            // location serving the same file with status 200.
            locations.push_str(&format!("location = {path} {{ {serve} error_page 405 =200 /__{}; }}\n", r.name));
            locations.push_str(&format!("location = /__{} {{ internal; {serve} }}\n", r.name));
        } else {
            locations.push_str(&format!("location = {path} {{ {serve} }}\n"));
        }
    }
    let d = dir.display();
    let conf = format!(
        "worker_processes 1;\ndaemon off;\npid {d}/nginx.pid;\nerror_log {d}/error.log warn;\nevents {{ worker_connections 8192; }}\nhttp {{\n access_log off;\n keepalive_requests 100000000;\n keepalive_timeout 120s;\n tcp_nodelay on;\n etag off;\n server_tokens off;\n types {{ }}\n client_body_temp_path {d}/tmp;\n proxy_temp_path {d}/tmp;\n fastcgi_temp_path {d}/tmp;\n uwsgi_temp_path {d}/tmp;\n scgi_temp_path {d}/tmp;\n server {{\n  listen 127.0.0.1:{port} backlog=4096;\n{locations}  }}\n}}\n"
    );
    let conf_path = dir.join("nginx.conf");
    std::fs::write(&conf_path, conf).map_err(|e| e.to_string())?;
    let mut cmd = match cpu {
        Some(c) => {
            let mut t = Command::new("taskset");
            t.args(["-c", c]).arg(&bin);
            t
        }
        None => Command::new(&bin),
    };
    cmd.arg("-p").arg(dir).arg("-c").arg(&conf_path).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    let child = cmd.spawn().map_err(|e| format!("start nginx: {e}"))?;
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let t = Instant::now();
    while TcpStream::connect(addr).is_err() {
        if t.elapsed() > Duration::from_secs(10) {
            return Err(format!("nginx did not start; see {}/error.log", dir.display()));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // The master listens before it forks its worker; CPU accounting needs the worker's pid too.
    let mut pids = crate::account::with_children(child.id());
    while pids.len() < 2 && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
        pids = crate::account::with_children(child.id());
    }
    let nginx = Nginx { child, addr, pids };
    if nginx.pids.len() < 2 {
        return Err("nginx started no worker".into());
    }
    Ok(nginx)
}

/// The route as the floor serves it: same request, and the answer must be exactly the captured body.
pub fn floor_route(r: &Route) -> Route {
    let decoded = match r.captured.encoding.as_deref() {
        Some("gzip") => crate::gzip::decode(&r.captured.wire).unwrap_or_default(),
        _ => r.captured.wire.clone(),
    };
    let mut f = r.clone();
    f.contract = Contract {
        kind: Kind::Exact,
        content_type: r.captured.content_type.split(';').next().unwrap_or("").trim().to_string(),
        required: vec![],
        message_ids: None,
        message_content: vec![],
        exact_body: Some(decoded),
    };
    f
}
