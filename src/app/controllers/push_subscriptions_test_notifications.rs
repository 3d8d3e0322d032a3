//! Users::PushSubscriptions::TestNotificationsController (spec/02 §4.18, spec/04 §3.3): sends
//! one "Campfire Test" notification to one of the user's subscriptions and waits for the
//! push service's answer. Unlike message pushes, any failure is the request's failure (500),
//! and nothing is deleted, as in Rails.

use crate::app::params::parse_id;
use super::push_subscriptions::LIST_PATH;
use crate::app::{respond, AppError, Ctx, Flow, Req};
use crate::db::push_subscriptions;
use crate::http::Response;
use crate::app::push::deliver::{self, Outcome};
use crate::app::push::payload::Notice;

/// `POST /users/me/push_subscriptions/:push_subscription_id/test_notifications`: 404 unless
/// the subscription is the user's; 302 to the list once the push service took it; 500 when
/// it did not (or Web Push is not configured).
pub fn create(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    let user_id = rq.user().ok_or(AppError::Head(401))?.id;
    let id = parse_id(rq.route.params.push_subscription_id).ok_or(AppError::NotFound)?;
    let sub = push_subscriptions::find_for_user(&cx.db, user_id, id)?.ok_or(AppError::NotFound)?;
    let Some(vapid) = cx.env.vapid.clone() else {
        eprintln!("push: test notification for subscription {id}: VAPID keys are not configured");
        return Err(AppError::Internal("Web Push is not configured"));
    };
    let notice = Notice {
        title: "Campfire Test".into(),
        body: String::from_utf8_lossy(&crate::crypto::token::uuid_v4()).into_owned(),
        path: format!("{}{LIST_PATH}", rq.origin()),
    };
    let payload = notice.json(push_subscriptions::unread_count(&cx.db, user_id)?);
    let ticket = rq.ticket();
    // A full outbound queue drops the job and with it the ticket, which answers 503.
    crate::outbound::spawn(Box::new(move || {
        let outcome = deliver::deliver(&vapid, &sub, &payload, crate::crypto::time::now_ms() / 1000);
        ticket.finish(move |_, res| match outcome {
            Outcome::Delivered => {
                respond::redirect(res, LIST_PATH);
                Ok(())
            }
            failed => {
                eprintln!("push: test notification for subscription {}: {}", sub.id, failed.describe());
                Err(AppError::Internal("the push service refused the test notification"))
            }
        })
    }));
    Ok(Flow::Parked)
}
