//! Users::PushSubscriptionsController (spec/02 §4.18, spec/09 §4): the browser registers its
//! Web Push subscription here, and a development page lists, tests and deletes them. The
//! subscriptions are always the signed-in user's (`/users/me/...`; the `:user_id` segment is
//! not read, as in Rails).

use crate::app::params::parse_id;
use crate::app::room_scope;
use crate::app::layout::{self, Page};
use crate::app::{respond, AppError, Ctx, Flow, Req};
use crate::crypto::json;
use crate::db::{self, push_subscriptions, push_subscriptions::Subscription};
use crate::http::Response;
use crate::views::{self, Out};

/// Where the list lives.
pub const LIST_PATH: &str = "/users/me/push_subscriptions";

/// `GET /users/me/push_subscriptions`: the user's subscriptions with test and delete buttons.
pub fn index(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    rq.html_only()?;
    let user_id = rq.user().ok_or(AppError::Head(401))?.id;
    let list = push_subscriptions::of_user(&cx.db, user_id)?;
    let back = room_scope::last_room_path(cx, rq, user_id)?;
    layout::page(cx, rq, res, 200, &Listing { list, back })?;
    Ok(Flow::Done)
}

/// `POST /users/me/push_subscriptions` with `push_subscription[endpoint|p256dh_key|auth_key]`,
/// as JSON (what the page's script sends) or form fields: touches the user's row with exactly
/// these values, else creates one recording the User-Agent. 200, empty body; 400 without
/// `push_subscription`.
pub fn create(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    const MISSING: AppError = AppError::BadRequest("param is missing or the value is empty: push_subscription");
    let user_id = rq.user().ok_or(AppError::Head(401))?.id;
    let json_body = rq.header(b"content-type").is_some_and(|t| t.trim_ascii_start().starts_with(b"application/json"));
    let fields = if json_body {
        from_json(rq.http.body).ok_or(MISSING)?
    } else {
        if !rq.params.has_group("push_subscription") {
            return Err(MISSING);
        }
        let get = |k: &str| rq.params.get_str(k).unwrap_or("").to_owned();
        [get("push_subscription[endpoint]"), get("push_subscription[p256dh_key]"), get("push_subscription[auth_key]")]
    };
    let user_agent = rq.header(b"user-agent").map(|u| String::from_utf8_lossy(u).into_owned());
    let now = db::time::now_us();
    cx.write(
        rq,
        move |c| {
            let [endpoint, p256dh, auth] = &fields;
            push_subscriptions::create_or_touch(c, user_id, endpoint, p256dh, auth, user_agent.as_deref(), now)
        },
        |_, res, done| {
            done?;
            res.status(200);
            Ok(())
        },
    )
}

/// `DELETE /users/me/push_subscriptions/:id`: deletes it if it is the user's (no error
/// otherwise); 302 to the list.
pub fn destroy(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let user_id = rq.user().ok_or(AppError::Head(401))?.id;
    let Some(id) = parse_id(rq.route.params.id) else {
        respond::redirect(res, LIST_PATH);
        return Ok(Flow::Done);
    };
    cx.write(
        rq,
        move |c| push_subscriptions::delete_for_user(c, user_id, id),
        |_, res, done| {
            done?;
            respond::redirect(res, LIST_PATH);
            Ok(())
        },
    )
}

/// `{"push_subscription":{"endpoint":…,"p256dh_key":…,"auth_key":…}}` → the three values
/// (absent ones empty, as Rails stores nil); None when `push_subscription` is not an object.
fn from_json(body: &[u8]) -> Option<[String; 3]> {
    let mut r = json::Reader::new(body);
    r.begin_object().ok()?;
    let mut found = None;
    while let Some(key) = r.next_key().ok()? {
        if key == b"push_subscription" && r.peek() == Some(b'{') {
            found = Some(members(&mut r)?);
        } else {
            r.value().ok()?;
        }
    }
    found
}

fn members(r: &mut json::Reader<'_>) -> Option<[String; 3]> {
    let mut out: [String; 3] = Default::default();
    r.begin_object().ok()?;
    while let Some(key) = r.next_key().ok()? {
        let slot = match key {
            b"endpoint" => 0,
            b"p256dh_key" => 1,
            b"auth_key" => 2,
            _ => {
                r.value().ok()?;
                continue;
            }
        };
        if r.peek() == Some(b'"') {
            let mut v = Vec::new();
            json::unescape(r.string().ok()?, &mut v).ok()?;
            out[slot] = String::from_utf8(v).ok()?;
        } else {
            r.value().ok()?;
        }
    }
    Some(out)
}

/// "<browser> <version> on <platform>", as the useragent gem names the common browsers.
pub fn describe_agent(ua: Option<&str>) -> String {
    let Some(ua) = ua.filter(|u| !u.trim().is_empty()) else { return String::new() };
    let version_of = |token: &str| {
        ua.split_once(token).map(|(_, rest)| rest.split([' ', ';', ')']).next().unwrap_or("").to_string())
    };
    let (browser, version) = if let Some(v) = version_of("Edg/") {
        ("Edge", Some(v))
    } else if let Some(v) = version_of("OPR/") {
        ("Opera", Some(v))
    } else if let Some(v) = version_of("Firefox/") {
        ("Firefox", Some(v))
    } else if let Some(v) = version_of("Chrome/").or_else(|| version_of("CriOS/")) {
        ("Chrome", Some(v))
    } else if ua.contains("Safari/") {
        ("Safari", version_of("Version/"))
    } else {
        let first = ua.split(' ').next().unwrap_or(ua);
        let (name, v) = first.split_once('/').unwrap_or((first, ""));
        return format!("{name} {v}").trim().to_string();
    };
    let platform = ["iPhone", "iPad", "Android", "Macintosh", "Windows", "CrOS", "Linux"].into_iter().find(|p| ua.contains(p));
    let mut s = browser.to_string();
    if let Some(v) = version {
        s.push(' ');
        s.push_str(&v);
    }
    if let Some(p) = platform {
        s.push_str(" on ");
        s.push_str(if p == "CrOS" { "ChromeOS" } else { p });
    }
    s
}

struct Listing {
    list: Vec<Subscription>,
    back: String,
}

impl Page for Listing {
    fn title(&self, o: &mut Out<'_>) {
        o.static_bytes(b"Push notification subscriptions");
    }
    fn nav(&self, o: &mut Out<'_>) {
        views::layouts::back_nav::render(self, o);
    }
    fn main(&self, o: &mut Out<'_>) {
        views::users::push_subscriptions::render(self, o);
    }
}

impl views::layouts::back_nav::View for Listing {
    fn back_path(&self, o: &mut Out<'_>) {
        o.attr(&self.back);
    }
    fn back_label(&self, o: &mut Out<'_>) {
        o.static_bytes(b"Go back");
    }
    fn title(&self, o: &mut Out<'_>) {
        o.static_bytes(b"Push notification subscriptions");
    }
    fn actions(&self, _o: &mut Out<'_>) {}
}

impl views::users::push_subscriptions::View for Listing {
    fn subscriptions(&self, o: &mut Out<'_>) {
        for s in &self.list {
            views::users::push_subscription::render(&Row(s), o);
        }
    }
}

struct Row<'a>(&'a Subscription);

impl views::users::push_subscription::View for Row<'_> {
    fn agent(&self, o: &mut Out<'_>) {
        o.text(&describe_agent(self.0.user_agent.as_deref()));
    }
    fn endpoint(&self, o: &mut Out<'_>) {
        o.text(&self.0.endpoint);
    }
    fn id(&self, o: &mut Out<'_>) {
        o.text(&self.0.id.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subscription_json_as_the_page_sends_it() {
        let body = br#"{"push_subscription":{"endpoint":"https://fcm.googleapis.com/fcm/send/a\/b","p256dh_key":"BCVx","auth_key":"BTBZ","extra":[1]},"x":1}"#;
        assert_eq!(from_json(body).unwrap(), ["https://fcm.googleapis.com/fcm/send/a/b".to_string(), "BCVx".into(), "BTBZ".into()]);
        assert_eq!(from_json(br#"{"push_subscription":{"endpoint":"e"}}"#).unwrap(), ["e".to_string(), String::new(), String::new()]);
        assert_eq!(from_json(br#"{"push_subscription":"e"}"#), None);
        assert_eq!(from_json(br#"{"other":{}}"#), None);
        assert_eq!(from_json(b"not json"), None);
    }

    #[test]
    fn user_agents_named_like_the_gem() {
        let mac_chrome = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36";
        assert_eq!(describe_agent(Some(mac_chrome)), "Chrome 120.0.0.0 on Macintosh");
        let iphone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1";
        assert_eq!(describe_agent(Some(iphone)), "Safari 17.1 on iPhone");
        let firefox = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0";
        assert_eq!(describe_agent(Some(firefox)), "Firefox 121.0 on Windows");
        let edge = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Edg/120.0.2210.91";
        assert_eq!(describe_agent(Some(edge)), "Edge 120.0.2210.91 on Windows");
        assert_eq!(describe_agent(Some("Mozilla/5.0")), "Mozilla 5.0");
        assert_eq!(describe_agent(None), "");
    }
}
