//! The benchmark's routes and their contracts (workloads.md §4, §4.1): expected message windows come
//! from independent SQL on the seed, markers and exact bodies from one preflight fetch per route.

use crate::db::{Conn, Val};
use crate::gzip;
use crate::http::{request, Client};
use crate::login::Session;
use crate::seed::escape_html;
use crate::validate::{longest_token, message_ids, Contract, Kind};
use crate::stream::Endpoint;

/// Every route the harness measures, in its order (writes last).
pub const ROUTES: [&str; 8] = ["room_show", "messages_page", "sidebar", "search", "avatar", "static_css", "up", "post_message"];

/// A measured route: how to ask for it and what a valid answer is.
#[derive(Clone, Debug)]
pub struct Route {
    pub name: String,
    pub method: &'static str,
    pub target: String,
    pub contract: Contract,
    /// The response captured at preflight (wire bytes, content type, encoding), for the nginx floor.
    pub captured: Captured,
}

/// One response as captured at preflight.
#[derive(Clone, Debug, Default)]
pub struct Captured {
    pub wire: Vec<u8>,
    pub content_type: String,
    pub encoding: Option<String>,
}

/// Seed values the routes need, from labels.json.
pub struct Labels {
    pub watercooler: i64,
    pub hq: i64,
    pub busy_060: i64,
    pub email: String,
    pub avatar_token: String,
}

/// Builds the routes named in `names` (subset of ROUTES) for the signed-in `session`.
pub fn build(names: &[String], l: &Labels, db: &Conn, endpoint: &Endpoint, s: &Session) -> Result<Vec<Route>, String> {
    let host = endpoint.host.as_str();
    let mut client = Client::new(endpoint);
    let mut routes = Vec::new();
    for name in names {
        let (target, kind) = match name.as_str() {
            "room_show" => (format!("/rooms/{}", l.watercooler), Kind::Document),
            "messages_page" => (format!("/rooms/{}/messages?before={}", l.watercooler, l.busy_060), Kind::Fragment),
            "sidebar" => ("/users/me/sidebar".to_string(), Kind::Document),
            "search" => ("/searches?q=coffee".to_string(), Kind::Document),
            "avatar" => (format!("/users/{}/avatar", l.avatar_token), Kind::Exact),
            "static_css" => (s.css.clone().ok_or("no stylesheet path scraped")?, Kind::Exact),
            "up" => ("/up".to_string(), Kind::Text),
            "post_message" => {
                routes.push(post_route(l.hq, &mut client, host, s)?);
                continue;
            }
            other => return Err(format!("unknown route {other}")),
        };
        let r = client.send(&request("GET", &target, host, &[("cookie", &s.jar), ("accept-encoding", "gzip"), ("accept", "*/*"), ("user-agent", "Ruby")], b""))?;
        if r.status != 200 {
            return Err(format!("preflight {name}: status {}", r.status));
        }
        let encoding = r.header("content-encoding").map(str::to_string);
        let body = if encoding.as_deref() == Some("gzip") { gzip::decode(&r.body).map_err(|e| format!("preflight {name}: {e}"))? } else { r.body.clone() };
        let content_type = r.header("content-type").unwrap_or("").to_string();
        let main_type = content_type.split(';').next().unwrap_or("").trim().to_string();
        let text = String::from_utf8_lossy(&body);
        let mut c = Contract { kind, content_type: main_type.clone(), required: vec![], message_ids: None, message_content: vec![], exact_body: None };
        let window = match name.as_str() {
            "room_show" => Some(ids(db, "SELECT id FROM messages WHERE room_id = ? ORDER BY created_at DESC LIMIT 40", &[Val::Int(l.watercooler)])?),
            "messages_page" => Some(ids(
                db,
                "SELECT id FROM messages WHERE room_id = ? AND created_at < (SELECT created_at FROM messages WHERE id = ?) ORDER BY created_at DESC LIMIT 40",
                &[Val::Int(l.watercooler), Val::Int(l.busy_060)],
            )?),
            "search" => Some(ids(
                db,
                "SELECT m.id FROM messages m JOIN message_search_index idx ON idx.rowid = m.id JOIN memberships mm ON mm.room_id = m.room_id JOIN users u ON u.id = mm.user_id WHERE u.email_address = ? AND idx.body MATCH 'coffee' ORDER BY m.id DESC LIMIT 100",
                &[Val::Text(&l.email)],
            )?),
            _ => None,
        };
        if let Some(mut expected) = window {
            expected.reverse();
            let got: Vec<i64> = message_ids(&text)?.into_iter().map(|(_, id)| id).collect();
            if got != expected {
                return Err(format!("preflight {name}: message ids differ from the seed's SQL ({} vs {} ids)", got.len(), expected.len()));
            }
            for id in &expected {
                let plain = db.text("SELECT body FROM message_search_index WHERE rowid = ?", &[Val::Int(*id)])?.unwrap_or_default();
                c.message_content.push(longest_token(&plain));
                let cmid = db.text("SELECT client_message_id FROM messages WHERE id = ?", &[Val::Int(*id)])?.unwrap_or_default();
                let marker = [format!("id=\"message_{id}\""), format!("id=\"message_{cmid}\"")]
                    .into_iter()
                    .find(|m| text.contains(m.as_str()))
                    .ok_or_else(|| format!("preflight {name}: no DOM id for message {id}"))?;
                c.required.push(marker);
            }
            c.message_ids = Some(expected);
        }
        match name.as_str() {
            "sidebar" => {
                if !text.contains("shared_rooms") || !text.contains(&l.watercooler.to_string()) {
                    return Err("preflight sidebar: missing shared_rooms or the watercooler".into());
                }
                c.required.push("shared_rooms".into());
                let mut st = db.prepare(
                    "SELECT r.name FROM rooms r JOIN memberships m ON m.room_id = r.id JOIN users u ON u.id = m.user_id WHERE u.email_address = ? AND r.type = 'Rooms::Open' AND m.involvement <> 'invisible'",
                )?;
                st.bind_all(&[Val::Text(&l.email)])?;
                while st.step()? {
                    c.required.push(escape_html(&st.text(0)));
                }
            }
            "avatar" if !main_type.starts_with("image/") || body.len() <= 100 => return Err("preflight avatar: not an image".into()),
            "static_css" if main_type != "text/css" || !text.contains('{') => return Err("preflight static_css: not CSS".into()),
            "up" => c.required.push("background-color: green".into()),
            _ => {}
        }
        if kind == Kind::Exact {
            c.exact_body = Some(body.clone());
        }
        routes.push(Route { name: name.clone(), method: "GET", target, contract: c, captured: Captured { wire: r.body, content_type, encoding } });
    }
    Ok(routes)
}

/// The route posting into `room`: its Turbo Stream target must be the one
/// `messages_(rooms_<word>|room)_<room>` DOM id on that room's page.
pub fn post_route(room: i64, client: &mut Client, host: &str, s: &Session) -> Result<Route, String> {
    let r = client.send(&request("GET", &format!("/rooms/{room}"), host, &[("cookie", &s.jar), ("accept-encoding", "identity")], b""))?;
    let page = String::from_utf8_lossy(&r.body);
    if r.status != 200 || !page.contains("</html>") {
        return Err("preflight: write room inaccessible".into());
    }
    let suffix = format!("_{room}");
    let mut targets: Vec<String> = Vec::new();
    let mut rest: &str = &page;
    while let Some(i) = rest.find("id=\"messages_") {
        let v = &rest[i + 4..];
        let end = v.find('"').unwrap_or(v.len());
        let id = &v[..end];
        if let Some(mid) = id.strip_prefix("messages_").and_then(|x| x.strip_suffix(suffix.as_str())) {
            let ok = mid == "room" || mid.strip_prefix("rooms_").is_some_and(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase()));
            if ok && !targets.iter().any(|t| t == id) {
                targets.push(id.to_string());
            }
        }
        rest = &v[end..];
    }
    let [target] = targets.as_slice() else {
        return Err(format!("preflight: {} write-room DOM targets", targets.len()));
    };
    Ok(Route {
        name: "post_message".into(),
        method: "POST",
        target: format!("/rooms/{room}/messages"),
        contract: Contract {
            kind: Kind::Post,
            content_type: "text/vnd.turbo-stream.html".into(),
            required: vec!["action=\"append\"".into(), format!("target=\"{target}\"")],
            message_ids: None,
            message_content: vec![],
            exact_body: None,
        },
        captured: Captured::default(),
    })
}

fn ids(db: &Conn, sql: &str, params: &[Val]) -> Result<Vec<i64>, String> {
    let mut st = db.prepare(sql)?;
    st.bind_all(params)?;
    let mut v = vec![];
    while st.step()? {
        v.push(st.int(0));
    }
    Ok(v)
}
