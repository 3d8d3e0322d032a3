//! UsersController, the join-link actions (spec/02 §4.11): `/join/<code>` lets anyone holding
//! the account's current join code create a member account, which joins every open room and
//! is signed in. Also the "name tag" sign-up card shared with first run.

use crate::app::translations::{self, Phrase};
use crate::app::layout::{self, Page};
use crate::app::form_file::{self, FormFile};
use crate::app::{cookies, respond, storage, AppError, Ctx, Flow, Req};
use crate::db::{self, Conn, Job};
use crate::http::Response;
use crate::views::{self, Out};

/// `GET /join/:join_code`: the sign-up card (the 404 page for a wrong or replaced code).
pub fn new(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    rq.html_only()?;
    let account = joinable_account(cx, rq)?;
    let page = JoinPage::load(cx, rq, account)?;
    layout::page(cx, rq, res, 200, &page)?;
    Ok(Flow::Done)
}

/// `POST /join/:join_code`: creates the member (password hashed on the worker, avatar stored
/// as the profile stores it), signs them in and goes to `/`; an e-mail address already taken
/// goes to the sign-in form instead, pre-filled, with nothing created.
pub fn create(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    joinable_account(cx, rq)?;
    let form = NametagForm::from_params(rq)?;
    let taken = |email: &str| {
        let mut to = b"/session/new?email_address=".to_vec();
        crate::crypto::cookies::form_escape(email.as_bytes(), &mut to);
        String::from_utf8_lossy(&to).into_owned()
    };
    sign_up(cx, rq, "users#create", form, taken, |c, person, now| {
        let user = db::users::NewUser {
            name: person.name,
            email_address: Some(person.email_address),
            password_digest: person.password_digest,
            role: db::users::ROLE_MEMBER,
            ..db::users::NewUser::default()
        };
        db::users::create(c, &user, now)
    })
}

/// The sign-up card's fields as the writer sees them (the password already hashed).
pub(crate) struct Person<'a> {
    pub(crate) name: &'a str,
    pub(crate) email_address: &'a str,
    /// `None` for an empty password, which Rails ignores (the digest stays NULL).
    pub(crate) password_digest: Option<&'a str>,
}

/// The part first run and join share: hashes the password and stores the avatar on the
/// worker, then in one writer job runs `create` (which inserts the person and returns their
/// id), attaches the avatar and starts a session; back on the loop sets `session_token` and
/// goes to `/`. A unique-constraint failure (e-mail taken, or a concurrent first run) goes to
/// `taken(e-mail)` with nothing created; the stored avatar file is deleted again whenever the
/// rows do not commit. `who` names the action in log lines.
pub(crate) fn sign_up(
    cx: &mut Ctx,
    rq: &mut Req<'_, '_>,
    who: &'static str,
    form: NametagForm,
    taken: fn(&str) -> String,
    create: impl FnOnce(&Conn, &Person<'_>, i64) -> db::Result<i64> + Send + 'static,
) -> Result<Flow, AppError> {
    let user_agent = rq.header(b"user-agent").map(|v| String::from_utf8_lossy(v).into_owned());
    let ip = rq.ip.to_string();
    let storage_root = cx.config.storage_path.clone();
    let writer = cx.writer.clone();
    let ticket = rq.ticket();
    let queued = cx.worker.submit(move || {
        let digest = form.digest();
        let Some((stored, ticket)) = form_file::store(form.avatar, &storage_root, form_file::AVATAR, who, ticket) else { return };
        let new_keys = stored.as_ref().map(|s| s.keys()).unwrap_or_default();
        let token = String::from_utf8_lossy(&crate::crypto::token::session_token()).into_owned();
        let now = db::time::now_us();
        let job_token = token.clone();
        let (name, email) = (form.name, form.email_address);
        let taken_path = taken(&email);
        writer.submit(Job::new(
            move |c| {
                let person = Person { name: &name, email_address: &email, password_digest: digest.as_deref() };
                let user_id = create(c, &person, now)?;
                let orphans = match &stored {
                    Some(s) => s.attach(c, "User", user_id, "avatar", now)?,
                    None => Vec::new(),
                };
                db::sessions::create(c, user_id, &job_token, Some(ip.as_str()), user_agent.as_deref(), now)?;
                Ok(orphans)
            },
            move |created| {
                ticket.finish(move |cx, res| {
                    let root = &cx.config.storage_path;
                    match created {
                        Ok(orphans) => {
                            storage::delete(root, &orphans);
                            cookies::set_session_token(cx, res, &token);
                            respond::redirect(res, "/");
                            return Ok(());
                        }
                        Err(e) => {
                            storage::delete(root, &new_keys);
                            if !e.is_constraint() {
                                return Err(e.into());
                            }
                        }
                    }
                    respond::redirect(res, &taken_path);
                    Ok(())
                })
            },
        ));
    });
    if !queued {
        eprintln!("app: {who}: worker queue full, answering 503");
    }
    Ok(Flow::Parked)
}

/// The account, when the path's join code is its current one (exact match); else 404 with the
/// error page, as every other missing page answers (Rails' empty `head :not_found` leaves
/// someone holding an old link with the browser's own error screen).
fn joinable_account(cx: &Ctx, rq: &Req<'_, '_>) -> Result<db::accounts::Account, AppError> {
    let mut code = Vec::with_capacity(16);
    crate::http::url::percent_decode_into(rq.route.params.join_code, false, &mut code);
    match db::accounts::get(&cx.db)? {
        Some(account) if account.join_code.as_bytes() == code.as_slice() => Ok(account),
        _ => Err(AppError::NotFound),
    }
}

/// The fields of the sign-up card (`user[name]`, `user[email_address]`, `user[password]`,
/// `user[avatar]`).
pub(crate) struct NametagForm {
    name: String,
    email_address: String,
    password: Vec<u8>,
    avatar: Option<FormFile>,
}

impl NametagForm {
    /// Reads the form; a request without any `user[...]` field is a 400, as Rails'
    /// `params.require(:user)`.
    pub(crate) fn from_params(rq: &Req<'_, '_>) -> Result<NametagForm, AppError> {
        if !rq.params.has_group("user") {
            return Err(AppError::BadRequest("param is missing or the value is empty: user"));
        }
        Ok(NametagForm {
            name: rq.params.get_str("user[name]").unwrap_or("").to_owned(),
            email_address: rq.params.get_str("user[email_address]").unwrap_or("").to_owned(),
            password: rq.params.get("user[password]").unwrap_or(b"").to_vec(),
            avatar: FormFile::from_request(rq, "user[avatar]")?,
        })
    }

    /// The bcrypt digest of the password (slow: call on the worker); `None` for an empty
    /// password.
    fn digest(&self) -> Option<String> {
        (!self.password.is_empty()).then(|| crate::crypto::bcrypt::hash(&self.password))
    }
}

/// The sign-up card (templates/users/nametag_form.html).
pub(crate) struct Nametag<'a> {
    pub(crate) action: &'a str,
    pub(crate) heading: &'a str,
    /// The account logo, shown on join when one is uploaded.
    pub(crate) logo_url: Option<&'a str>,
    pub(crate) submit_label: &'a str,
}

impl Nametag<'_> {
    pub(crate) fn render(&self, o: &mut Out<'_>) {
        views::users::nametag_form::render(self, o);
    }
}

impl views::users::nametag_form::View for Nametag<'_> {
    fn action(&self, o: &mut Out<'_>) {
        o.attr(self.action);
    }
    fn heading(&self, o: &mut Out<'_>) {
        o.text(self.heading);
    }
    fn logo(&self, o: &mut Out<'_>) {
        if let Some(url) = self.logo_url {
            views::users::account_logo::render(&LogoUrl(url), o);
        }
    }
    fn alert(&self, _o: &mut Out<'_>) {}
    fn name(&self, _o: &mut Out<'_>) {}
    fn email_address(&self, _o: &mut Out<'_>) {}
    fn submit_label(&self, o: &mut Out<'_>) {
        o.text(self.submit_label);
    }
    fn translate_name(&self, o: &mut Out<'_>) {
        translations::button(Phrase::YourName, o);
    }
    fn translate_email(&self, o: &mut Out<'_>) {
        translations::button(Phrase::EmailAddress, o);
    }
    fn translate_password(&self, o: &mut Out<'_>) {
        translations::button(Phrase::Password, o);
    }
}

struct LogoUrl<'a>(&'a str);

impl views::users::account_logo::View for LogoUrl<'_> {
    fn logo_url(&self, o: &mut Out<'_>) {
        o.attr(self.0);
    }
}

/// The join page.
struct JoinPage {
    action: String,
    account_name: String,
    logo_url: Option<String>,
    contact: Option<(String, Option<String>)>,
    version: String,
}

impl JoinPage {
    fn load(cx: &Ctx, rq: &Req<'_, '_>, account: db::accounts::Account) -> Result<JoinPage, AppError> {
        let mut action = String::from("/join/");
        action.push_str(&String::from_utf8_lossy(rq.route.params.join_code));
        let has_logo = db::layout::account_look(&cx.db)?.has_logo;
        Ok(JoinPage {
            action,
            account_name: account.name,
            logo_url: if has_logo { Some(super::sessions::logo_url(cx)?) } else { None },
            contact: db::auth::first_administrator(&cx.db)?,
            version: cx.env.version.clone(),
        })
    }
}

impl Page for JoinPage {
    fn title(&self, o: &mut Out<'_>) {
        o.text("Sign up");
    }
    fn body_class(&self) -> &'static str {
        "signup"
    }
    fn nav(&self, o: &mut Out<'_>) {
        views::users::join_nav::render(&JoinNav, o);
    }
    fn main(&self, o: &mut Out<'_>) {
        Nametag { action: &self.action, heading: &self.account_name, logo_url: self.logo_url.as_deref(), submit_label: "Join" }
            .render(o);
        if let Some((name, email)) = &self.contact {
            let contact = super::sessions::HelpContact { name, email: email.as_deref(), version: &self.version };
            views::users::help_contact::render(&contact, o);
        }
    }
}

struct JoinNav;
impl views::users::join_nav::View for JoinNav {}
