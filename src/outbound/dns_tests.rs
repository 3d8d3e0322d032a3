//! Resolver tests: crafted packets for the parser, and a loopback UDP "nameserver".

use super::*;
use std::net::UdpSocket;

/// A response to `build_query(id, host, qtype)` carrying `answers` (already encoded records).
fn response(id: u16, host: &str, qtype: u16, rcode: u8, answers: &[Vec<u8>]) -> Vec<u8> {
    let mut p = build_query(id, host, qtype).unwrap();
    p[2] = 0x81;
    p[3] = 0x80 | rcode;
    p[7] = answers.len() as u8;
    for a in answers {
        p.extend_from_slice(a);
    }
    p
}

/// A record whose owner is a pointer to the question name (offset 12).
fn record(rtype: u16, data: &[u8]) -> Vec<u8> {
    let mut r = vec![0xc0, 12];
    r.extend_from_slice(&rtype.to_be_bytes());
    r.extend_from_slice(&[0, 1, 0, 0, 0, 60]);
    r.extend_from_slice(&(data.len() as u16).to_be_bytes());
    r.extend_from_slice(data);
    r
}

#[test]
fn builds_queries() {
    let q = build_query(0xabcd, "a.example.com", TYPE_AAAA).unwrap();
    assert_eq!(q, b"\xab\xcd\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x01a\x07example\x03com\x00\x00\x1c\x00\x01");
    assert!(build_query(1, "a..b", TYPE_A).is_none());
    assert!(build_query(1, &"x".repeat(64), TYPE_A).is_none());
    assert!(build_query(1, &["abc"; 70].join("."), TYPE_A).is_none());
}

#[test]
fn reads_addresses_through_cnames_and_compression() {
    // example.com CNAME www.example.com (a compressed name), then two A records.
    let cname_data = [&[3u8][..], b"www", &[0xc0, 12]].concat();
    let p = response(7, "example.com", TYPE_A, 0, &[
        record(5, &cname_data),
        record(TYPE_A, &[93, 184, 216, 34]),
        record(TYPE_A, &[1, 2, 3, 4]),
        record(TYPE_AAAA, &[0; 16]), // wrong type for this question: ignored
    ]);
    assert_eq!(
        parse_answer(&p, 7, "EXAMPLE.com", TYPE_A),
        Answer::Addresses(vec!["93.184.216.34".parse().unwrap(), "1.2.3.4".parse().unwrap()])
    );
    let v6 = [0x20, 0x01, 0x48, 0x60, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x88, 0x88];
    let p = response(9, "example.com", TYPE_AAAA, 0, &[record(TYPE_AAAA, &v6)]);
    assert_eq!(parse_answer(&p, 9, "example.com", TYPE_AAAA), Answer::Addresses(vec!["2001:4860::8888".parse().unwrap()]));
}

#[test]
fn tells_errors_from_strays() {
    let ok = response(7, "example.com", TYPE_A, 0, &[record(TYPE_A, &[1, 2, 3, 4])]);
    assert_eq!(parse_answer(&ok, 8, "example.com", TYPE_A), Answer::Stray, "another id");
    assert_eq!(parse_answer(&ok, 7, "example.org", TYPE_A), Answer::Stray, "another question");
    assert_eq!(parse_answer(&ok, 7, "example.com", TYPE_AAAA), Answer::Stray, "another type");
    let mut query = ok.clone();
    query[2] &= 0x7f;
    assert_eq!(parse_answer(&query, 7, "example.com", TYPE_A), Answer::Stray, "not a response");
    assert_eq!(parse_answer(&response(7, "example.com", TYPE_A, 3, &[]), 7, "example.com", TYPE_A), Answer::NoSuchName);
    assert_eq!(parse_answer(&response(7, "example.com", TYPE_A, 2, &[]), 7, "example.com", TYPE_A), Answer::Failed(2));
    assert_eq!(parse_answer(&response(7, "example.com", TYPE_A, 0, &[]), 7, "example.com", TYPE_A), Answer::Addresses(vec![]));
}

#[test]
fn survives_malformed_packets() {
    let ok = response(7, "example.com", TYPE_A, 0, &[record(TYPE_A, &[1, 2, 3, 4])]);
    // Every truncation, and every single-byte corruption: never a panic.
    for n in 0..ok.len() {
        let _ = parse_answer(&ok[..n], 7, "example.com", TYPE_A);
    }
    for i in 0..ok.len() {
        for v in [0x00, 0x3f, 0x40, 0xc0, 0xff] {
            let mut p = ok.clone();
            p[i] = v;
            let _ = parse_answer(&p, 7, "example.com", TYPE_A);
        }
    }
    // A pointer to itself in the answer's owner name: a loop, refused.
    let mut looped = response(7, "example.com", TYPE_A, 0, &[]);
    looped[7] = 1;
    let at = looped.len();
    looped.extend_from_slice(&[0xc0, at as u8]);
    looped.extend_from_slice(&[0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 1, 2, 3, 4]);
    assert_eq!(parse_answer(&looped, 7, "example.com", TYPE_A), Answer::Stray);
    // A record claiming more data than the packet has.
    let mut long = ok.clone();
    let n = long.len();
    long[n - 5] = 200;
    assert_eq!(parse_answer(&long, 7, "example.com", TYPE_A), Answer::Stray);
}

#[test]
fn reads_hosts_and_resolv_conf() {
    let hosts = "127.0.0.1 localhost\n::1 localhost ip6-localhost # comment\n10.0.0.5 db.internal DB\n# 1.1.1.1 db.internal\nbad line\n";
    assert_eq!(from_hosts(hosts, "localhost"), vec!["127.0.0.1".parse::<IpAddr>().unwrap(), "::1".parse().unwrap()]);
    assert_eq!(from_hosts(hosts, "db"), vec!["10.0.0.5".parse::<IpAddr>().unwrap()]);
    assert!(from_hosts(hosts, "nowhere").is_empty());
    let conf = "search example.com\nnameserver 10.0.0.2\nnameserver fe80::1%eth0\n  nameserver 1.1.1.1\nnameserver 8.8.8.8\nnameserver 9.9.9.9\n";
    assert_eq!(
        nameservers(conf),
        vec!["10.0.0.2:53".parse::<SocketAddr>().unwrap(), "[fe80::1]:53".parse().unwrap(), "1.1.1.1:53".parse().unwrap()]
    );
    assert_eq!(nameservers("# nothing\n"), vec!["127.0.0.1:53".parse::<SocketAddr>().unwrap()]);
}

#[test]
fn literals_and_hosts_need_no_server() {
    assert_eq!(resolve("192.0.2.7", Duration::from_millis(10)).unwrap(), vec!["192.0.2.7".parse::<IpAddr>().unwrap()]);
    assert_eq!(resolve("[::1]", Duration::from_millis(10)).unwrap(), vec!["::1".parse::<IpAddr>().unwrap()]);
}

/// A one-shot nameserver on loopback answering with `answer(query)`; returns its address.
fn fake_server(answer: impl Fn(&[u8]) -> Option<Vec<u8>> + Send + 'static, queries: usize) -> SocketAddr {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = sock.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut buf = [0u8; 512];
        for _ in 0..queries {
            let Ok((n, from)) = sock.recv_from(&mut buf) else { return };
            if let Some(a) = answer(&buf[..n]) {
                let _ = sock.send_to(&a, from);
            }
        }
    });
    addr
}

#[test]
fn asks_a_then_aaaa_and_skips_strays() {
    let server = fake_server(
        |q| {
            let id = u16::from_be_bytes([q[0], q[1]]);
            let qtype = u16::from_be_bytes([q[q.len() - 4], q[q.len() - 3]]);
            let real = match qtype {
                TYPE_A => response(id, "svc.test", qtype, 0, &[record(TYPE_A, &[203, 0, 113, 5])]),
                _ => response(id, "svc.test", qtype, 0, &[record(TYPE_AAAA, &[0x20, 0x01, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5])]),
            };
            Some(real)
        },
        2,
    );
    let ips = ask_servers("svc.test", &[server], Instant::now() + Duration::from_secs(2)).unwrap();
    assert_eq!(ips, vec!["203.0.113.5".parse::<IpAddr>().unwrap(), "2001:db8::5".parse().unwrap()]);
}

#[test]
fn nxdomain_is_final_and_silence_times_out() {
    let server = fake_server(|q| Some(response(u16::from_be_bytes([q[0], q[1]]), "gone.test", TYPE_A, 3, &[])), 1);
    match ask_servers("gone.test", &[server], Instant::now() + Duration::from_secs(2)) {
        Err(Error::Dns(m)) => assert!(m.contains("does not exist"), "{m}"),
        other => panic!("{other:?}"),
    }
    let silent = fake_server(|_| None, 1);
    let t = Instant::now();
    assert!(matches!(ask_servers("slow.test", &[silent], Instant::now() + Duration::from_millis(300)), Err(Error::Timeout)));
    assert!(t.elapsed() < Duration::from_secs(2));
}

#[test]
fn a_wrong_id_is_skipped_not_believed() {
    let server = fake_server(
        |q| {
            let id = u16::from_be_bytes([q[0], q[1]]);
            Some(response(id ^ 0x5555, "svc.test", TYPE_A, 0, &[record(TYPE_A, &[6, 6, 6, 6])]))
        },
        1,
    );
    assert!(matches!(ask_servers("svc.test", &[server], Instant::now() + Duration::from_millis(300)), Err(Error::Timeout)));
}
