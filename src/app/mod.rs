//! The application: the request pipeline around the controllers (design §3–§4, spec/02 §1).
pub mod browser;
pub mod client_ip;
pub mod rate_limit;
pub mod worker;
pub mod params;
pub mod rails_session;
