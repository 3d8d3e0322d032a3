//! The partial's templates (`templates/messages/*.html`) and the values they show: one small
//! view struct per template, filled by the renderer.

use super::Person;
use crate::db::messages::{Attachment, Message};
use crate::db;
use crate::richtext;
use crate::views::{self, Out};
use std::cell::Cell;

/// `created_at.iso8601` as Rails writes it: `2025-01-01T12:00:00Z` (whole seconds, UTC).
pub(super) fn write_iso(us: i64, o: &mut Out<'_>) {
    let stamp = db::time::format(us);
    let s = stamp.as_str();
    let (date, time) = (s.get(..10).unwrap_or(""), s.get(11..19).unwrap_or(""));
    o.attr(date);
    o.static_bytes(b"T");
    o.attr(time);
    o.static_bytes(b"Z");
}

/// Width and height from Active Storage metadata JSON, when both are positive numbers.
pub(super) fn image_size(metadata: &str) -> Option<(u32, u32)> {
    let json = richtext::json::Json::parse(metadata)?;
    let num = |k: &str| match json.get(k)? {
        richtext::json::Json::Num(n) => n.parse::<f64>().ok().filter(|n| *n >= 1.0 && *n < 100_000.0).map(|n| n as u32),
        _ => None,
    };
    Some((num("width")?, num("height")?))
}

/// Scales (w, h) down to fit 1200 × 800, keeping the aspect ratio (Rails' `resize_to_limit`).
pub(super) fn preview_size((w, h): (u32, u32)) -> (u32, u32) {
    let scale = (1200.0 / w as f64).min(800.0 / h as f64).min(1.0);
    (((w as f64 * scale).round() as u32).max(1), ((h as f64 * scale).round() as u32).max(1))
}

pub(super) struct MessageView<'a> {
    pub(super) m: &'a Message,
    pub(super) creator: &'a Person,
    pub(super) emoji: bool,
    pub(super) presentation: &'a [u8],
    pub(super) boosts: &'a [u8],
    /// Where the room name goes (recorded while rendering; the name itself is spliced later).
    pub(super) room_at: Cell<usize>,
}

impl views::messages::message::View for MessageView<'_> {
    fn cmid(&self, o: &mut Out<'_>) {
        o.attr(&self.m.client_message_id);
    }
    fn extra_classes(&self, o: &mut Out<'_>) {
        if self.emoji {
            o.static_bytes(b"message--emoji");
        }
    }
    fn user_id(&self, o: &mut Out<'_>) {
        o.int(self.m.creator_id);
    }
    fn message_id(&self, o: &mut Out<'_>) {
        o.int(self.m.id);
    }
    fn created_ms(&self, o: &mut Out<'_>) {
        o.int(self.m.created_at.div_euclid(1000));
    }
    fn updated_ms(&self, o: &mut Out<'_>) {
        o.int(self.m.updated_at.div_euclid(1000));
    }
    fn created_iso(&self, o: &mut Out<'_>) {
        write_iso(self.m.created_at, o);
    }
    fn room_id(&self, o: &mut Out<'_>) {
        o.int(self.m.room_id);
    }
    fn avatar(&self, o: &mut Out<'_>) {
        views::users::avatar::render(&AvatarView(self.creator), o);
    }
    fn author_title(&self, o: &mut Out<'_>) {
        o.attr(&self.creator.title);
    }
    fn author_name(&self, o: &mut Out<'_>) {
        o.text(&self.creator.name);
    }
    fn room_name(&self, o: &mut Out<'_>) {
        self.room_at.set(o.0.len());
    }
    fn presentation(&self, o: &mut Out<'_>) {
        // Rendered by this module through the templates and the sanitizer.
        o.0.extend_from_slice(self.presentation);
    }
    fn boosts(&self, o: &mut Out<'_>) {
        o.0.extend_from_slice(self.boosts);
    }
}

pub(super) struct AvatarView<'a>(&'a Person);

impl views::users::avatar::View for AvatarView<'_> {
    fn user_id(&self, o: &mut Out<'_>) {
        o.int(self.0.id);
    }
    fn title(&self, o: &mut Out<'_>) {
        o.attr(&self.0.title);
    }
    fn avatar_url(&self, o: &mut Out<'_>) {
        o.built_url(&self.0.avatar_url);
    }
}

pub(super) struct PresentationView<'a> {
    pub(super) cmid: &'a str,
    pub(super) body: &'a [u8],
}

impl views::messages::presentation::View for PresentationView<'_> {
    fn cmid(&self, o: &mut Out<'_>) {
        o.attr(self.cmid);
    }
    fn body(&self, o: &mut Out<'_>) {
        // Sanitizer output or one of the body templates.
        o.0.extend_from_slice(self.body);
    }
}

pub(super) struct SoundView(pub(super) &'static richtext::Sound);

impl views::messages::body_sound::View for SoundView {
    fn name(&self, o: &mut Out<'_>) {
        o.attr(self.0.name);
    }
    fn text(&self, o: &mut Out<'_>) {
        o.text(self.0.text);
    }
}

pub(super) struct AttachmentView<'a> {
    pub(super) a: &'a Attachment,
    pub(super) blob_url: &'a str,
    pub(super) download_url: &'a str,
    /// The thumbnail's representation URL (the original's for files without one).
    pub(super) preview_url: &'a str,
    /// The size the picture is shown at: its thumbnail's (at most 1200×800).
    pub(super) size: Option<(u32, u32)>,
    /// A video's poster: its preview image's blob URL.
    pub(super) poster_url: Option<String>,
}

impl AttachmentView<'_> {
    fn wrapper_style(&self, o: &mut Out<'_>) {
        if let Some((pw, ph)) = self.size {
            o.attr(&format!("width: {}px; aspect-ratio: {}/{};", pw / 2, pw, ph));
        }
    }
}

impl views::messages::body_image::View for AttachmentView<'_> {
    fn wrapper_style(&self, o: &mut Out<'_>) {
        AttachmentView::wrapper_style(self, o);
    }
    fn blob_url(&self, o: &mut Out<'_>) {
        o.attr(self.blob_url);
    }
    fn download_url(&self, o: &mut Out<'_>) {
        o.attr(self.download_url);
    }
    fn preview_url(&self, o: &mut Out<'_>) {
        o.attr(self.preview_url);
    }
    fn width(&self, o: &mut Out<'_>) {
        if let Some((w, _)) = self.size {
            o.int(w.into());
        }
    }
    fn height(&self, o: &mut Out<'_>) {
        if let Some((_, h)) = self.size {
            o.int(h.into());
        }
    }
    fn filename(&self, o: &mut Out<'_>) {
        o.attr(&self.a.filename);
    }
}

impl views::messages::body_video::View for AttachmentView<'_> {
    fn wrapper_style(&self, o: &mut Out<'_>) {
        AttachmentView::wrapper_style(self, o);
    }
    fn blob_url(&self, o: &mut Out<'_>) {
        o.attr(self.blob_url);
    }
    fn poster_url(&self, o: &mut Out<'_>) {
        if let Some(url) = &self.poster_url {
            o.attr(url);
        }
    }
    fn width(&self, o: &mut Out<'_>) {
        match self.size {
            Some((w, _)) => o.int(w.into()),
            None => o.static_bytes(b"100%"),
        }
    }
    fn height(&self, o: &mut Out<'_>) {
        match self.size {
            Some((_, h)) => o.int(h.into()),
            None => o.static_bytes(b"100%"),
        }
    }
    fn download_url(&self, o: &mut Out<'_>) {
        o.attr(self.download_url);
    }
}

impl views::messages::body_file::View for AttachmentView<'_> {
    fn filename(&self, o: &mut Out<'_>) {
        o.text(&self.a.filename);
    }
    fn download_url(&self, o: &mut Out<'_>) {
        o.attr(self.download_url);
    }
}

pub(super) struct CmidView<'a>(pub(super) &'a str);

impl views::messages::boosts_slot::View for CmidView<'_> {
    fn cmid(&self, o: &mut Out<'_>) {
        o.attr(self.0);
    }
}

pub(super) struct BoostsView<'a> {
    pub(super) m: &'a Message,
    pub(super) chips: &'a [u8],
}

impl views::messages::boosts::View for BoostsView<'_> {
    fn cmid(&self, o: &mut Out<'_>) {
        o.attr(&self.m.client_message_id);
    }
    fn message_id(&self, o: &mut Out<'_>) {
        o.int(self.m.id);
    }
    fn boosts(&self, o: &mut Out<'_>) {
        o.0.extend_from_slice(self.chips);
    }
}

pub(super) struct BoostView<'a> {
    pub(super) message_id: i64,
    pub(super) boost_id: i64,
    pub(super) booster: &'a Person,
    pub(super) content: &'a str,
}

impl views::messages::boost::View for BoostView<'_> {
    fn boost_id(&self, o: &mut Out<'_>) {
        o.int(self.boost_id);
    }
    fn booster_id(&self, o: &mut Out<'_>) {
        o.int(self.booster.id);
    }
    fn message_id(&self, o: &mut Out<'_>) {
        o.int(self.message_id);
    }
    fn avatar_url(&self, o: &mut Out<'_>) {
        o.built_url(&self.booster.avatar_url);
    }
    fn booster_name(&self, o: &mut Out<'_>) {
        o.attr(&self.booster.name);
    }
    fn content(&self, o: &mut Out<'_>) {
        o.text(self.content);
    }
    fn content_class(&self, o: &mut Out<'_>) {
        o.static_bytes(if richtext::is_emoji_only(self.content) { b"txt-small txt-medium" } else { b"txt-small" });
    }
}
