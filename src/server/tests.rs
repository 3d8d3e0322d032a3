//! Loop tests with handlers of their own: park/resume from other threads, dropped parkers,
//! pipelining behind a parked request, drain.

use super::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::mpsc;
use std::time::Duration;

struct Parking {
    /// Parkers go to the test's "worker" thread through this.
    to_worker: mpsc::Sender<Parker<Parking>>,
    resumed: u32,
}

impl Handler for Parking {
    type Socket = ();
    fn handle(&mut self, req: &Request, res: &mut Response, cx: &mut Call<Self>) -> Flow {
        match req.path {
            b"/slow" | b"/drop" => {
                // Written before parking, so it must not leak into any response.
                res.status(418);
                res.body().extend_from_slice(b"LEAK");
                let p = cx.park();
                if req.path == b"/drop" {
                    drop(p);
                } else if self.to_worker.send(p).is_err() {
                    res.status(500);
                }
                Flow::Parked
            }
            _ => {
                res.body().extend_from_slice(b"fast");
                Flow::Done
            }
        }
    }
}

fn config() -> Config {
    let mut c = Config::from_lookup(|k| match k {
        "PORT" => Some("0".into()),
        "CAMPFIRE_LOOPS" => Some("1".into()),
        "CAMPFIRE_LOG" => Some("0".into()),
        _ => None,
    })
    .unwrap();
    c.secret_key_base = "x".into();
    c
}

/// Reads until every one of `needles` has arrived (or the peer closes).
fn read_until(s: &mut TcpStream, needles: &[&str]) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    while !needles.iter().all(|n| String::from_utf8_lossy(&got).contains(n)) {
        let k = s.read(&mut buf).unwrap();
        if k == 0 {
            break;
        }
        got.extend_from_slice(&buf[..k]);
    }
    String::from_utf8(got).unwrap()
}

#[test]
fn park_and_resume_from_another_thread() {
    let (tx, rx) = mpsc::channel::<Parker<Parking>>();
    let tx = std::sync::Mutex::new(tx);
    let cfg = config();
    serve(
        &cfg,
        None,
        |_| Parking { to_worker: tx.lock().unwrap().clone(), resumed: 0 },
        |port, stop| {
            let worker = std::thread::spawn(move || {
                for p in rx {
                    std::thread::sleep(Duration::from_millis(20));
                    p.resume(|h: &mut Parking, res: &mut Response| {
                        h.resumed += 1;
                        res.body().extend_from_slice(format!("resumed {}", h.resumed).as_bytes());
                    });
                }
            });
            // A parked request, with a pipelined one behind it that must wait its turn.
            let mut a = TcpStream::connect(("127.0.0.1", port)).unwrap();
            a.write_all(b"GET /slow HTTP/1.1\r\nHost: t\r\n\r\nGET /fast HTTP/1.1\r\nHost: t\r\n\r\n").unwrap();
            // Meanwhile another connection is served at once.
            let mut b = TcpStream::connect(("127.0.0.1", port)).unwrap();
            b.write_all(b"GET /fast HTTP/1.1\r\nHost: t\r\n\r\n").unwrap();
            let rb = read_until(&mut b, &["fast"]);
            assert!(rb.ends_with("fast"), "{rb}");
            let ra = read_until(&mut a, &["resumed 1", "fast"]);
            assert!(!ra.contains("LEAK") && !ra.contains("418"), "{ra}");
            let first = ra.find("resumed 1").expect(&ra);
            let second = ra.find("fast").expect(&ra);
            assert!(first < second, "responses out of order: {ra}");
            // A dropped Parker answers 500 instead of hanging.
            let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
            c.write_all(b"GET /drop HTTP/1.1\r\nHost: t\r\n\r\n").unwrap();
            let mut buf = [0u8; 256];
            c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let k = c.read(&mut buf).unwrap();
            assert!(buf[..k].starts_with(b"HTTP/1.1 500 "), "{}", String::from_utf8_lossy(&buf[..k]));
            // Resuming after the client left is harmless.
            let mut d = TcpStream::connect(("127.0.0.1", port)).unwrap();
            d.write_all(b"GET /slow HTTP/1.1\r\nHost: t\r\n\r\n").unwrap();
            drop(d);
            std::thread::sleep(Duration::from_millis(50));
            stop.trigger();
            drop(worker);
        },
    )
    .unwrap();
}

/// Answers with the number of header fields it was given.
struct Counting;

impl Handler for Counting {
    type Socket = ();
    fn handle(&mut self, req: &Request, res: &mut Response, _cx: &mut Call<Self>) -> Flow {
        res.body().extend_from_slice(format!("headers={}", req.headers.len()).as_bytes());
        Flow::Done
    }
}

#[test]
fn heads_beyond_the_small_header_array_are_parsed_in_full() {
    let cfg = config();
    let max = cfg.limits.max_headers;
    let mut answers = Vec::new();
    serve(&cfg, None, |_| Counting, |port, stop| {
        for n in [3, 32, 33, max, max + 1] {
            // Host, n - 2 others, Connection: n fields.
            let mut req = String::from("GET / HTTP/1.1\r\nHost: t\r\n");
            for i in 2..n {
                req.push_str(&format!("X-Field-{i}: {i}\r\n"));
            }
            req.push_str("Connection: close\r\n\r\n");
            let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
            s.write_all(req.as_bytes()).unwrap();
            let mut got = Vec::new();
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let _ = s.read_to_end(&mut got);
            answers.push((n, String::from_utf8_lossy(&got).into_owned()));
        }
        stop.trigger();
    })
    .unwrap();
    for (n, got) in answers {
        if n <= max {
            assert!(got.starts_with("HTTP/1.1 200 ") && got.ends_with(&format!("headers={n}")), "{n} fields: {got}");
        } else {
            assert!(got.starts_with("HTTP/1.1 431 "), "{n} fields: {got}");
        }
    }
}

/// Parks every request and holds its parker until `turn_end`, which reports how many it
/// releases together and answers them: the app's jobs for the writer, in miniature. The first
/// request keeps the loop busy until the test says go, so more arrive meanwhile.
struct Holding {
    held: Vec<Parker<Holding>>,
    batches: mpsc::Sender<usize>,
    first: Option<(mpsc::Sender<()>, mpsc::Receiver<()>)>,
}

impl Handler for Holding {
    type Socket = ();
    fn handle(&mut self, _req: &Request, _res: &mut Response, cx: &mut Call<Self>) -> Flow {
        if let Some((started, go)) = self.first.take() {
            started.send(()).unwrap();
            go.recv().unwrap();
        }
        self.held.push(cx.park());
        Flow::Parked
    }

    fn holds_work(&self) -> bool {
        !self.held.is_empty()
    }

    fn turn_end(&mut self) {
        let _ = self.batches.send(self.held.len());
        for p in self.held.drain(..) {
            p.resume(|_: &mut Holding, res: &mut Response| res.body().extend_from_slice(b"released"));
        }
    }
}

#[test]
fn work_held_while_requests_keep_arriving_leaves_in_one_batch() {
    let (batches_tx, batches) = mpsc::channel();
    let (started_tx, started) = mpsc::channel();
    let (go, go_rx) = mpsc::channel();
    let first = std::sync::Mutex::new(Some((started_tx, go_rx)));
    let batches_tx = std::sync::Mutex::new(batches_tx);
    let cfg = config();
    serve(
        &cfg,
        None,
        |_| Holding { held: Vec::new(), batches: batches_tx.lock().unwrap().clone(), first: first.lock().unwrap().take() },
        |port, stop| {
            let request = b"GET / HTTP/1.1\r\nHost: t\r\n\r\n";
            let mut first = TcpStream::connect(("127.0.0.1", port)).unwrap();
            first.write_all(request).unwrap();
            started.recv_timeout(Duration::from_secs(5)).unwrap();
            // While the loop is busy with the first request, nine more arrive.
            let mut others: Vec<TcpStream> = (0..9).map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap()).collect();
            for s in &mut others {
                s.write_all(request).unwrap();
            }
            std::thread::sleep(Duration::from_millis(50));
            go.send(()).unwrap();
            for s in std::iter::once(&mut first).chain(&mut others) {
                let got = read_until(s, &["released"]);
                assert!(got.starts_with("HTTP/1.1 200 "), "{got}");
            }
            stop.trigger();
        },
    )
    .unwrap();
    let sizes: Vec<usize> = batches.try_iter().collect();
    assert_eq!(sizes, [10], "held through the turns that had events, released when none was ready");
}
