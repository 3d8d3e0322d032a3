//! Accounts::CustomStylesController (spec/02 §4.10, spec/07 §11.5): administrators edit the
//! CSS the layout adds to every page.

use crate::app::room_scope;
use crate::app::layout::{self, Page};
use crate::app::{respond, AppError, Ctx, Flow, Req};
use crate::db;
use crate::http::Response;
use crate::views::{self, Out};

/// `GET /account/custom_styles/edit` (administrators only, else 403).
pub fn edit(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    rq.html_only()?;
    let viewer = rq.user().cloned().ok_or(AppError::Head(401))?;
    if !viewer.is_administrator() {
        return Err(AppError::Head(403));
    }
    let css = db::accounts::get(&cx.db)?.and_then(|a| a.custom_styles).unwrap_or_default();
    let back = room_scope::last_room_path(cx, rq, viewer.id)?;
    layout::page(cx, rq, res, 200, &Styles { css, back })?;
    Ok(Flow::Done)
}

/// `PATCH/PUT /account/custom_styles` (administrators only): `account[custom_styles]`; 400
/// without it. 302 `/account/custom_styles/edit` with notice `✓`.
pub fn update(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    if !rq.is_admin() {
        return Err(AppError::Head(403));
    }
    let Some(css) = rq.params.get_str("account[custom_styles]").map(str::to_owned) else {
        return Err(AppError::BadRequest("param is missing or the value is empty: account"));
    };
    rq.flash_notice(cx, "✓");
    let now = db::time::now_us();
    cx.write(
        rq,
        move |c| db::accounts::update(c, &db::accounts::Changes { custom_styles: Some(Some(&css)), ..Default::default() }, now),
        |_, res, done| {
            done?;
            respond::redirect(res, "/account/custom_styles/edit");
            Ok(())
        },
    )
}

struct Styles {
    css: String,
    back: String,
}

impl Page for Styles {
    fn title(&self, o: &mut Out<'_>) {
        o.static_bytes(b"Custom styles");
    }
    fn nav(&self, o: &mut Out<'_>) {
        views::layouts::back_nav::render(self, o);
    }
    fn main(&self, o: &mut Out<'_>) {
        views::accounts::custom_styles::render(self, o);
    }
}

impl views::layouts::back_nav::View for Styles {
    fn back_path(&self, o: &mut Out<'_>) {
        o.attr(&self.back);
    }
    fn back_label(&self, o: &mut Out<'_>) {
        o.static_bytes(b"Go back");
    }
    fn title(&self, o: &mut Out<'_>) {
        o.static_bytes(b"Custom styles");
    }
    fn actions(&self, _o: &mut Out<'_>) {}
}

impl views::accounts::custom_styles::View for Styles {
    fn custom_styles(&self, o: &mut Out<'_>) {
        o.text(&self.css);
    }
}
