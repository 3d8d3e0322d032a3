//! PwaController (spec/02 §4.31, spec/09 §1–§2): the web app manifest. The service worker
//! itself is the embedded `public/service-worker.js`, answered at `/service-worker.js` by
//! `assets` before routing (a stable root URL, so its scope is `/`).

use super::sessions::logo_url;
use crate::app::router::Format;
use crate::app::{AppError, Ctx, Flow, Req};
use crate::crypto::json::write_string;
use crate::db;
use crate::http::Response;

/// One of the manifest's screenshots: a PNG under public/screenshots/, taken of campfire-room
/// itself by e2e/screenshots.test.mjs (its pixel size must match `sizes`).
struct Screenshot {
    file: &'static str,
    sizes: &'static str,
    form_factor: &'static str,
    label: &'static str,
}

const SCREENSHOTS: [Screenshot; 3] = [
    Screenshot {
        file: "screenshots/phone-room.png",
        sizes: "390x844",
        form_factor: "narrow",
        label: "A conversation in a room: your own messages on the right, everyone else's on the left.",
    },
    Screenshot {
        file: "screenshots/phone-dark.png",
        sizes: "390x844",
        form_factor: "narrow",
        label: "The same room in dark mode.",
    },
    Screenshot {
        file: "screenshots/desktop-room.png",
        sizes: "1280x800",
        form_factor: "wide",
        label: "Rooms and pings in the sidebar, the conversation beside them.",
    },
];

/// `GET /webmanifest.json`: the manifest of spec/09 §1 (name = the account's, or `Campfire`
/// before first run). Any other format (`/webmanifest`) is 406, as in Rails.
pub fn manifest(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    if rq.route.format != Format::Json {
        return Err(AppError::NotAcceptable);
    }
    let name = db::accounts::get(&cx.db)?.map_or_else(|| "Campfire".to_owned(), |a| a.name);
    let logo = logo_url(cx)?;
    let small = if logo.contains('?') { format!("{logo}&size=small") } else { format!("{logo}?size=small") };
    let origin = rq.origin();
    let icon = |name: &str| format!("{origin}{}", crate::assets::url(name).unwrap_or(""));
    let o = res.body();
    o.extend_from_slice(b"{\"name\":");
    write_string(name.as_bytes(), o);
    o.extend_from_slice(b",\"icons\":[{\"src\":");
    write_string(small.as_bytes(), o);
    o.extend_from_slice(b",\"type\":\"image/png\",\"sizes\":\"192x192\"},{\"src\":");
    write_string(logo.as_bytes(), o);
    o.extend_from_slice(b",\"type\":\"image/png\",\"sizes\":\"512x512\"},{\"src\":");
    write_string(logo.as_bytes(), o);
    o.extend_from_slice(concat!(
        ",\"type\":\"image/png\",\"sizes\":\"512x512\",\"purpose\":\"maskable\"}],",
        "\"start_url\":\"/\",\"display\":\"standalone\",\"scope\":\"/\",",
        "\"description\":\"A chat app from the makers of Basecamp and HEY.\",",
        "\"categories\":[\"social\",\"business\",\"productivity\"],",
        "\"theme_color\":\"#ffffff\",\"background_color\":\"#ffffff\",",
        "\"shortcuts\":[{\"name\":\"New chat room\",\"description\":\"Open Campfire and start a new chat room\",",
        "\"url\":\"rooms/opens/new\",\"icons\":[{\"src\":"
    ).as_bytes());
    write_string(icon("icons/plus.svg").as_bytes(), o);
    o.extend_from_slice(concat!(
        ",\"sizes\":\"any\"}]},{\"name\":\"My profile\",\"description\":\"Open Campfire and view your profile\",",
        "\"url\":\"/users/me/profile\",\"icons\":[{\"src\":"
    ).as_bytes());
    write_string(icon("icons/users.svg").as_bytes(), o);
    o.extend_from_slice(b",\"sizes\":\"any\"}]}],\"screenshots\":[");
    // Chromium offers its richer install dialog only with screenshots (issue 17 §3.11).
    for (i, shot) in SCREENSHOTS.iter().enumerate() {
        if i > 0 {
            o.push(b',');
        }
        o.extend_from_slice(b"{\"src\":");
        write_string(icon(shot.file).as_bytes(), o);
        o.extend_from_slice(b",\"type\":\"image/png\",\"sizes\":");
        write_string(shot.sizes.as_bytes(), o);
        o.extend_from_slice(b",\"form_factor\":");
        write_string(shot.form_factor.as_bytes(), o);
        o.extend_from_slice(b",\"label\":");
        write_string(shot.label.as_bytes(), o);
        o.push(b'}');
    }
    o.extend_from_slice(b"]}");
    res.header("Content-Type", b"application/json; charset=utf-8");
    Ok(Flow::Done)
}

/// `GET /service-worker[.<format>]`: reached only for formats other than `.js` (the `.js`
/// file is an embedded asset answered before routing), which Rails answers 406.
pub fn service_worker(_cx: &mut Ctx, _rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    Err(AppError::NotAcceptable)
}
