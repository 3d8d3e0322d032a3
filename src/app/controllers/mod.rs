//! One file per Rails controller, each holding that controller's actions as plain functions
//! (`fn(&mut Ctx, &mut Req, &mut Response) -> Result<Flow, AppError>`), wired in `router.rs`.
//! Nested Rails controllers (`Users::BansController`) are named after their resource here
//! (`bans.rs`) when unambiguous.

pub mod account_bots;
pub mod account_users;
pub mod accounts;
pub mod active_storage_blobs;
pub mod autocompletable_users;
pub mod avatars;
pub mod bans;
pub mod boosts;
pub mod boosts_by_bots;
pub mod custom_styles;
pub mod first_runs;
pub mod health;
pub mod join_codes;
pub mod logos;
pub mod messages;
pub mod messages_by_bots;
pub mod profiles;
pub mod push_subscriptions;
pub mod push_subscriptions_test_notifications;
pub mod pwa;
pub mod qr_code;
pub mod room_forms;
pub mod rooms;
pub mod rooms_closeds;
pub mod rooms_directs;
pub mod rooms_involvements;
pub mod rooms_opens;
pub mod rooms_refreshes;
pub mod searches;
pub mod sessions;
pub mod sessions_transfers;
pub mod sidebars;
pub mod unfurl_links;
pub mod users;
pub mod users_show;
pub mod welcome;
