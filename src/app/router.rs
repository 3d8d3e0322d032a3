//! The route table of spec/02 §2 as one `match` on (method, path segments).
//!
//! Each arm names the controller function (`rooms::show`, ...) and the access rules of its
//! Rails controller: whether it needs a signed-in user, lets bots in by key, and checks for
//! forgery. Routes Rails declares but has no action for ("—" in the spec table) are left out:
//! Rails answers them 404 before any filter runs, and so does `recognize` returning `None`.
//!
//! Controllers that are not written yet point at [`UNBUILT`], the one place that answers 404
//! for them; the comment on each such arm is the function to drop in (`// rooms::show`).
//!
//! Paths: segments are split on `/` (empty ones ignored, like Rails' router), still
//! percent-encoded. Every route takes an optional `.format` suffix on its last segment
//! (`/rooms/1.json`); a dynamic segment never contains a dot, so `/rooms/1.2.3` matches nothing.

use super::controllers::*;
use super::{Action, AppError, Ctx, Flow, Req};
use crate::http::{Method, Response};

/// What a request has to be before its action runs (the `allow_unauthenticated_access`,
/// `require_unauthenticated_access`, bot and forgery switches of the Rails controllers), and
/// whether its answer may be kept in the response cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    pub auth: Auth,
    /// A `bot_key` may authenticate this request (bot API actions: they also skip deny-bots).
    pub bots: bool,
    /// Forgery protection applies to non-GET requests (off for the PWA files).
    pub forgery: bool,
    /// A signed-in GET of this page is kept in the loop's response cache: its bytes depend on
    /// nothing but the data, the user and the request's key headers (cache.rs).
    pub cached: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Auth {
    /// A signed-in user is required; others are sent to `/session/new`.
    Required,
    /// Anyone; the user is still looked up when a session cookie is sent.
    Optional,
    /// Only signed-out visitors; a signed-in user is redirected to `/`.
    SignedOut,
    /// Outside the application's gates altogether (Active Storage's controllers): no browser
    /// gate, no session lookup, no ban check; the URL itself is the capability.
    Capability,
}

/// The default: signed-in users, forgery-protected, no bots.
pub const SIGNED_IN: Access = Access { auth: Auth::Required, bots: false, forgery: true, cached: false };
/// A signed-in user's read-only page, answered from the response cache while the data holds.
pub const PAGE: Access = Access { cached: true, ..SIGNED_IN };
/// `allow_unauthenticated_access`.
pub const ANYONE: Access = Access { auth: Auth::Optional, bots: false, forgery: true, cached: false };
/// `require_unauthenticated_access`.
pub const SIGNED_OUT: Access = Access { auth: Auth::SignedOut, bots: false, forgery: true, cached: false };
/// The bot API: a bot key authenticates; bots skip forgery protection (checked in gates).
pub const BOT_API: Access = Access { auth: Auth::Required, bots: true, forgery: true, cached: false };
/// The PWA files: anyone, no forgery protection.
pub const PWA: Access = Access { auth: Auth::Optional, bots: false, forgery: false, cached: false };
/// Active Storage files (GET only): none of the application's gates run.
pub const FILES: Access = Access { auth: Auth::Capability, bots: false, forgery: false, cached: false };

/// The response format asked for by the path suffix (`.json`), when there is one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    None,
    Html,
    Json,
    TurboStream,
    Js,
    Svg,
    /// Any other suffix: actions that only speak HTML answer 406.
    Other,
}

/// The named dynamic segments of the matched route (still percent-encoded; empty when the
/// route has no such segment). Dynamic segments never contain `/` or `.`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Params<'a> {
    pub id: &'a [u8],
    pub room_id: &'a [u8],
    pub message_id: &'a [u8],
    pub user_id: &'a [u8],
    pub bot_key: &'a [u8],
    pub join_code: &'a [u8],
    pub push_subscription_id: &'a [u8],
    /// The signed variation key of a representation URL.
    pub variation: &'a [u8],
}

/// A recognised route.
#[derive(Clone, Copy)]
pub struct Route<'a> {
    pub action: Action,
    pub access: Access,
    pub params: Params<'a>,
    pub format: Format,
    /// The controller#action name, for the log and tests.
    pub name: &'static str,
}

/// Deepest route (`/rooms/:room_id/:bot_key/messages/:message_id/boosts/:id`) has 7 segments.
const MAX_SEGMENTS: usize = 8;

/// The answer for routes whose controller is not written yet: 404, as an unknown route.
pub const UNBUILT: Action = unbuilt;

fn unbuilt(_: &mut Ctx, _: &mut Req, _: &mut Response) -> Result<Flow, AppError> {
    Err(AppError::NotFound)
}

/// Finds the route for `method` (after any `_method` override) and the raw `path`.
/// `None` means 404 (no such route, a Rails route without an action, or a malformed suffix).
pub fn recognize(method: Method, path: &[u8]) -> Option<Route<'_>> {
    let mut segs: [&[u8]; MAX_SEGMENTS] = [b""; MAX_SEGMENTS];
    let mut n = 0;
    for s in path.split(|&b| b == b'/').filter(|s| !s.is_empty()) {
        if n == MAX_SEGMENTS {
            return None;
        }
        segs[n] = s;
        n += 1;
    }
    let mut format = Format::None;
    // Active Storage URLs end in the blob's file name, dots and all: no format suffix there.
    if n > 0 && segs[0] == b"rails" {
        let (action, access, params, name) = table(method, &segs[..n])?;
        return Some(Route { action, access, params, format, name });
    }
    if n > 0 {
        let (last, suffix) = split_format(segs[n - 1])?;
        segs[n - 1] = last;
        format = suffix;
    }
    // Only the last segment may carry a dot (its format).
    if segs[..n.saturating_sub(1)].iter().any(|s| s.contains(&b'.')) {
        return None;
    }
    let (action, access, params, name) = table(method, &segs[..n])?;
    Some(Route { action, access, params, format, name })
}

/// Splits `1.json` into `1` and the format; a segment with two dots or an empty part is
/// no route.
fn split_format(seg: &[u8]) -> Option<(&[u8], Format)> {
    let Some(dot) = seg.iter().position(|&b| b == b'.') else { return Some((seg, Format::None)) };
    let (stem, ext) = (&seg[..dot], &seg[dot + 1..]);
    if stem.is_empty() || ext.is_empty() || ext.contains(&b'.') {
        return None;
    }
    let format = match ext {
        b"html" => Format::Html,
        b"json" => Format::Json,
        b"turbo_stream" => Format::TurboStream,
        b"js" => Format::Js,
        b"svg" => Format::Svg,
        _ => Format::Other,
    };
    Some((stem, format))
}

type Found<'a> = (Action, Access, Params<'a>, &'static str);

/// The table itself. Arms are grouped by resource in the order of spec/02 §2; where Rails'
/// route order decides between two patterns (`GET /rooms/opens` is `rooms#show`), the arm
/// order here reproduces it.
fn table<'a>(m: Method, segs: &[&'a [u8]]) -> Option<Found<'a>> {
    use Method::*;
    let p = Params::default();
    let get = matches!(m, Get | Head);
    let update = matches!(m, Patch | Put);
    Some(match segs {
        // welcome
        [] if get => (welcome::show, SIGNED_IN, p, "welcome#show"),

        // first run
        [b"first_run"] if get => (first_runs::show, ANYONE, p, "first_runs#show"),
        [b"first_run"] if m == Post => (first_runs::create, ANYONE, p, "first_runs#create"),

        // sessions
        [b"session", b"new"] if get => (sessions::new, ANYONE, p, "sessions#new"),
        [b"session"] if m == Post => (sessions::create, ANYONE, p, "sessions#create"),
        [b"session"] if m == Delete => (sessions::destroy, SIGNED_IN, p, "sessions#destroy"),
        [b"session", b"transfers", id] if get => {
            (sessions_transfers::show, ANYONE, Params { id, ..p }, "sessions/transfers#show")
        }
        [b"session", b"transfers", id] if update => {
            (sessions_transfers::update, ANYONE, Params { id, ..p }, "sessions/transfers#update")
        }

        // account
        [b"account", b"users"] if get => (account_users::index, SIGNED_IN, p, "accounts/users#index"),
        [b"account", b"users", id] if update => {
            (account_users::update, SIGNED_IN, Params { id, ..p }, "accounts/users#update")
        }
        [b"account", b"users", id] if m == Delete => {
            (account_users::destroy, SIGNED_IN, Params { id, ..p }, "accounts/users#destroy")
        }
        [b"account", b"bots", id, b"key"] if update => {
            (account_bots::update_key, SIGNED_IN, Params { id, ..p }, "accounts/bots/keys#update")
        }
        [b"account", b"bots"] if get => (account_bots::index, SIGNED_IN, p, "accounts/bots#index"),
        [b"account", b"bots"] if m == Post => (account_bots::create, SIGNED_IN, p, "accounts/bots#create"),
        [b"account", b"bots", b"new"] if get => (account_bots::new, SIGNED_IN, p, "accounts/bots#new"),
        [b"account", b"bots", id, b"edit"] if get => {
            (account_bots::edit, SIGNED_IN, Params { id, ..p }, "accounts/bots#edit")
        }
        [b"account", b"bots", id] if update => {
            (account_bots::update, SIGNED_IN, Params { id, ..p }, "accounts/bots#update")
        }
        [b"account", b"bots", id] if m == Delete => {
            (account_bots::destroy, SIGNED_IN, Params { id, ..p }, "accounts/bots#destroy")
        }
        [b"account", b"join_code"] if m == Post => (join_codes::create, SIGNED_IN, p, "accounts/join_codes#create"),
        [b"account", b"logo"] if get => (logos::show, ANYONE, p, "accounts/logos#show"),
        [b"account", b"logo"] if m == Delete => (logos::destroy, SIGNED_IN, p, "accounts/logos#destroy"),
        [b"account", b"custom_styles", b"edit"] if get => {
            (custom_styles::edit, SIGNED_IN, p, "accounts/custom_styles#edit")
        }
        [b"account", b"custom_styles"] if update => {
            (custom_styles::update, SIGNED_IN, p, "accounts/custom_styles#update")
        }
        [b"account", b"edit"] if get => (accounts::edit, SIGNED_IN, p, "accounts#edit"),
        [b"account"] if update => (accounts::update, SIGNED_IN, p, "accounts#update"),

        // join links
        [b"join", join_code] if get => (users::new, SIGNED_OUT, Params { join_code, ..p }, "users#new"),
        [b"join", join_code] if m == Post => (users::create, SIGNED_OUT, Params { join_code, ..p }, "users#create"),

        [b"qr_code", id] if get => (qr_code::show, ANYONE, Params { id, ..p }, "qr_code#show"),

        // Active Storage files: capability URLs, no session needed.
        [b"rails", b"active_storage", b"blobs", b"redirect" | b"proxy", id, _filename] if get => {
            (active_storage_blobs::show, FILES, Params { id, ..p }, "active_storage/blobs#show")
        }
        [b"rails", b"active_storage", b"representations", b"redirect" | b"proxy", id, variation, _filename] if get => {
            (active_storage_blobs::representation, FILES, Params { id, variation, ..p }, "active_storage/representations#show")
        }

        // users
        [b"users", user_id, b"avatar"] if get => {
            (avatars::show, SIGNED_IN, Params { user_id, ..p }, "users/avatars#show")
        }
        [b"users", user_id, b"avatar"] if m == Delete => {
            (avatars::destroy, SIGNED_IN, Params { user_id, ..p }, "users/avatars#destroy")
        }
        [b"users", user_id, b"ban"] if m == Post => (bans::create, SIGNED_IN, Params { user_id, ..p }, "users/bans#create"),
        [b"users", user_id, b"ban"] if m == Delete => {
            (bans::destroy, SIGNED_IN, Params { user_id, ..p }, "users/bans#destroy")
        }
        [b"users", user_id, b"sidebar"] if get => {
            (sidebars::show, PAGE, Params { user_id, ..p }, "users/sidebars#show")
        }
        [b"users", user_id, b"profile"] if get => {
            (profiles::show, SIGNED_IN, Params { user_id, ..p }, "users/profiles#show")
        }
        [b"users", user_id, b"profile"] if update => {
            (profiles::update, SIGNED_IN, Params { user_id, ..p }, "users/profiles#update")
        }
        [b"users", user_id, b"push_subscriptions", push_subscription_id, b"test_notifications"] if m == Post => (
            push_subscriptions_test_notifications::create,
            SIGNED_IN,
            Params { user_id, push_subscription_id, ..p },
            "users/push_subscriptions/test_notifications#create",
        ),
        [b"users", user_id, b"push_subscriptions"] if get => {
            (push_subscriptions::index, SIGNED_IN, Params { user_id, ..p }, "users/push_subscriptions#index")
        }
        [b"users", user_id, b"push_subscriptions"] if m == Post => {
            (push_subscriptions::create, SIGNED_IN, Params { user_id, ..p }, "users/push_subscriptions#create")
        }
        [b"users", user_id, b"push_subscriptions", id] if m == Delete => (
            push_subscriptions::destroy,
            SIGNED_IN,
            Params { user_id, id, ..p },
            "users/push_subscriptions#destroy",
        ),
        [b"users", id] if get => (users_show::show, SIGNED_IN, Params { id, ..p }, "users#show"),

        [b"autocompletable", b"users"] if get => {
            (autocompletable_users::index, PAGE, p, "autocompletable/users#index")
        }

        // messages (browser)
        [b"rooms", room_id, b"messages"] if get => {
            (messages::index, PAGE, Params { room_id, ..p }, "messages#index")
        }
        [b"rooms", room_id, b"messages"] if m == Post => {
            (messages::create, SIGNED_IN, Params { room_id, ..p }, "messages#create")
        }
        [b"rooms", room_id, b"messages", id, b"edit"] if get => {
            (messages::edit, SIGNED_IN, Params { room_id, id, ..p }, "messages#edit")
        }
        [b"rooms", _, b"messages", b"new"] if get => return None,
        [b"rooms", room_id, b"messages", id] if get => {
            (messages::show, PAGE, Params { room_id, id, ..p }, "messages#show")
        }
        [b"rooms", room_id, b"messages", id] if update => {
            (messages::update, SIGNED_IN, Params { room_id, id, ..p }, "messages#update")
        }
        [b"rooms", room_id, b"messages", id] if m == Delete => {
            (messages::destroy, SIGNED_IN, Params { room_id, id, ..p }, "messages#destroy")
        }

        // bot API
        [b"rooms", room_id, bot_key, b"messages", message_id, b"boosts"] if m == Post => (
            boosts_by_bots::create,
            BOT_API,
            Params { room_id, bot_key, message_id, ..p },
            "messages/boosts/by_bots#create",
        ),
        [b"rooms", room_id, bot_key, b"messages", message_id, b"boosts", id] if m == Delete => (
            boosts_by_bots::destroy,
            BOT_API,
            Params { room_id, bot_key, message_id, id, ..p },
            "messages/boosts/by_bots#destroy",
        ),
        [b"rooms", room_id, bot_key, b"messages"] if get => {
            (messages_by_bots::index, BOT_API, Params { room_id, bot_key, ..p }, "messages/by_bots#index")
        }
        [b"rooms", room_id, bot_key, b"messages"] if m == Post => {
            (messages_by_bots::create, BOT_API, Params { room_id, bot_key, ..p }, "messages/by_bots#create")
        }
        [b"rooms", room_id, bot_key, b"messages", id] if update => (
            messages_by_bots::update,
            BOT_API,
            Params { room_id, bot_key, id, ..p },
            "messages/by_bots#update",
        ),
        [b"rooms", room_id, bot_key, b"messages", id] if m == Delete => (
            messages_by_bots::destroy,
            BOT_API,
            Params { room_id, bot_key, id, ..p },
            "messages/by_bots#destroy",
        ),

        // rooms: nested resources first, then the room itself, as in routes.rb
        [b"rooms", room_id, b"refresh"] if get => {
            (rooms_refreshes::show, SIGNED_IN, Params { room_id, ..p }, "rooms/refreshes#show")
        }
        [b"rooms", room_id, b"involvement"] if get => {
            (rooms_involvements::show, PAGE, Params { room_id, ..p }, "rooms/involvements#show")
        }
        [b"rooms", room_id, b"involvement"] if update => {
            (rooms_involvements::update, SIGNED_IN, Params { room_id, ..p }, "rooms/involvements#update")
        }
        [b"rooms", room_id, at] if get && at.first() == Some(&b'@') && at.len() > 1 => {
            let message_id = &at[1..];
            (rooms::show, PAGE, Params { room_id, message_id, id: room_id, ..p }, "rooms#show")
        }
        [b"rooms"] if get => (rooms::index, SIGNED_IN, p, "rooms#index"),
        [b"rooms", b"new"] if get => return None,
        [b"rooms", id] if get => (rooms::show, PAGE, Params { id, ..p }, "rooms#show"),
        [b"rooms", id] if m == Delete && !is_room_kind(id) => {
            (rooms::destroy, SIGNED_IN, Params { id, ..p }, "rooms#destroy")
        }

        // open and closed rooms share one shape
        [b"rooms", b"opens"] if m == Post => (rooms_opens::create, SIGNED_IN, p, "rooms/opens#create"),
        [b"rooms", b"opens", b"new"] if get => (rooms_opens::new, SIGNED_IN, p, "rooms/opens#new"),
        [b"rooms", b"opens", id, b"edit"] if get => {
            (rooms_opens::edit, SIGNED_IN, Params { id, ..p }, "rooms/opens#edit")
        }
        [b"rooms", b"opens", id] if get => (rooms_opens::show, PAGE, Params { id, ..p }, "rooms/opens#show"),
        [b"rooms", b"opens", id] if update => {
            (rooms_opens::update, SIGNED_IN, Params { id, ..p }, "rooms/opens#update")
        }
        [b"rooms", b"closeds"] if m == Post => (rooms_closeds::create, SIGNED_IN, p, "rooms/closeds#create"),
        [b"rooms", b"closeds", b"new"] if get => (rooms_closeds::new, SIGNED_IN, p, "rooms/closeds#new"),
        [b"rooms", b"closeds", id, b"edit"] if get => {
            (rooms_closeds::edit, SIGNED_IN, Params { id, ..p }, "rooms/closeds#edit")
        }
        [b"rooms", b"closeds", id] if get => {
            (rooms_closeds::show, PAGE, Params { id, ..p }, "rooms/closeds#show")
        }
        [b"rooms", b"closeds", id] if update => {
            (rooms_closeds::update, SIGNED_IN, Params { id, ..p }, "rooms/closeds#update")
        }
        [b"rooms", b"directs"] if m == Post => (rooms_directs::create, SIGNED_IN, p, "rooms/directs#create"),
        [b"rooms", b"directs", b"new"] if get => (rooms_directs::new, SIGNED_IN, p, "rooms/directs#new"),
        [b"rooms", b"directs", id, b"edit"] if get => {
            (rooms_directs::edit, SIGNED_IN, Params { id, ..p }, "rooms/directs#edit")
        }
        [b"rooms", b"directs", id] if m == Delete => {
            (rooms_directs::destroy, SIGNED_IN, Params { id, ..p }, "rooms/directs#destroy")
        }

        // boosts (browser)
        [b"messages", message_id, b"boosts"] if get => {
            (boosts::index, SIGNED_IN, Params { message_id, ..p }, "messages/boosts#index")
        }
        [b"messages", message_id, b"boosts"] if m == Post => {
            (boosts::create, SIGNED_IN, Params { message_id, ..p }, "messages/boosts#create")
        }
        [b"messages", message_id, b"boosts", b"new"] if get => {
            (boosts::new, SIGNED_IN, Params { message_id, ..p }, "messages/boosts#new")
        }
        [b"messages", message_id, b"boosts", id] if m == Delete => (
            boosts::destroy,
            SIGNED_IN,
            Params { message_id, id, ..p },
            "messages/boosts#destroy",
        ),
        // `POST /messages` exists only to tell a composer whose room is gone (spec/02 §2).
        [b"messages"] if m == Post => (messages::create_without_room, SIGNED_IN, p, "messages#create"),

        // search
        [b"searches", b"clear"] if m == Delete => (searches::clear, SIGNED_IN, p, "searches#clear"),
        [b"searches"] if get => (searches::index, PAGE, p, "searches#index"),
        [b"searches"] if m == Post => (searches::create, SIGNED_IN, p, "searches#create"),

        [b"unfurl_link"] if m == Post => (unfurl_links::create, SIGNED_IN, p, "unfurl_links#create"),

        // PWA
        [b"webmanifest"] if get => (pwa::manifest, PWA, p, "pwa#manifest"),
        [b"service-worker"] if get => (pwa::service_worker, PWA, p, "pwa#service_worker"),

        _ => return None,
    })
}

/// `opens`, `closeds`, `directs`: the `/rooms/<kind>` collection paths, which only match
/// `rooms#show`/`#destroy` by accident of route order for GET; DELETE on them is no route.
fn is_room_kind(seg: &[u8]) -> bool {
    matches!(seg, b"opens" | b"closeds" | b"directs")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(m: Method, path: &str) -> Option<&'static str> {
        recognize(m, path.as_bytes()).map(|r| r.name)
    }

    #[test]
    fn recognises_auth_routes() {
        assert_eq!(name(Method::Get, "/"), Some("welcome#show"));
        assert_eq!(name(Method::Get, "/first_run"), Some("first_runs#show"));
        assert_eq!(name(Method::Post, "/first_run"), Some("first_runs#create"));
        assert_eq!(name(Method::Get, "/first_run/new"), None);
        assert_eq!(name(Method::Get, "/session/new"), Some("sessions#new"));
        assert_eq!(name(Method::Post, "/session"), Some("sessions#create"));
        assert_eq!(name(Method::Delete, "/session"), Some("sessions#destroy"));
        assert_eq!(name(Method::Get, "/session"), None);
        assert_eq!(name(Method::Get, "/join/abcd-efgh-ijkl"), Some("users#new"));
        assert_eq!(name(Method::Post, "/account/join_code"), Some("accounts/join_codes#create"));
        assert_eq!(name(Method::Post, "/users/5/ban"), Some("users/bans#create"));
        assert_eq!(name(Method::Delete, "/users/5/ban"), Some("users/bans#destroy"));
        assert_eq!(name(Method::Head, "/session/new"), Some("sessions#new"));
    }

    #[test]
    fn params_and_formats() {
        let r = recognize(Method::Get, b"/rooms/7/messages/9.json").unwrap();
        assert_eq!(r.name, "messages#show");
        assert_eq!((r.params.room_id, r.params.id), (&b"7"[..], &b"9"[..]));
        assert_eq!(r.format, Format::Json);
        let r = recognize(Method::Get, b"/rooms/3/@42").unwrap();
        assert_eq!((r.name, r.params.id, r.params.message_id), ("rooms#show", &b"3"[..], &b"42"[..]));
        let r = recognize(Method::Post, b"/rooms/1/5-AbCd/messages/8/boosts").unwrap();
        assert_eq!(r.name, "messages/boosts/by_bots#create");
        assert_eq!(r.params.bot_key, b"5-AbCd");
        assert_eq!(r.access, BOT_API);
        assert!(recognize(Method::Get, b"/rooms/1.2.3").is_none());
        assert!(recognize(Method::Get, b"/rooms.x/1").is_none());
        assert_eq!(recognize(Method::Get, b"/webmanifest.json").map(|r| r.format), Some(Format::Json));
        assert_eq!(recognize(Method::Get, b"/rooms/1/refresh.turbo_stream").map(|r| r.format), Some(Format::TurboStream));
    }

    #[test]
    fn rails_route_order_quirks() {
        assert_eq!(name(Method::Get, "/rooms/opens"), Some("rooms#show"));
        assert_eq!(name(Method::Get, "/rooms/opens/4"), Some("rooms/opens#show"));
        assert_eq!(name(Method::Get, "/rooms/new"), None);
        assert_eq!(name(Method::Get, "/rooms/settings"), Some("rooms#show"));
        assert_eq!(name(Method::Get, "/rooms/1/settings"), None);
        assert_eq!(name(Method::Get, "/rooms/1/messages/new"), None);
        assert_eq!(name(Method::Get, "//rooms///1/"), Some("rooms#show"));
        assert_eq!(name(Method::Get, "/a/b/c/d/e/f/g/h/i"), None);
    }

    #[test]
    fn access_rules() {
        assert_eq!(recognize(Method::Get, b"/join/x").unwrap().access, SIGNED_OUT);
        assert_eq!(recognize(Method::Get, b"/session/new").unwrap().access, ANYONE);
        assert_eq!(recognize(Method::Get, b"/").unwrap().access, SIGNED_IN);
        assert_eq!(recognize(Method::Get, b"/service-worker.js").unwrap().access, PWA);
    }

    #[test]
    fn the_cached_pages_are_the_read_only_ones() {
        let cached = |m: Method, path: &str| recognize(m, path.as_bytes()).is_some_and(|r| r.access.cached);
        for path in ["/rooms/1", "/rooms/1/@5", "/rooms/opens/1", "/rooms/closeds/1", "/rooms/1/involvement", "/rooms/1/messages", "/rooms/1/messages/2", "/users/1/sidebar", "/searches", "/autocompletable/users"] {
            assert!(cached(Method::Get, path), "{path}");
        }
        for (m, path) in [(Method::Get, "/"), (Method::Get, "/account/edit"), (Method::Post, "/rooms/1/messages"), (Method::Get, "/rooms/1/5-AbCd/messages"), (Method::Get, "/users/1")] {
            assert!(!cached(m, path), "{path}");
        }
    }
}
