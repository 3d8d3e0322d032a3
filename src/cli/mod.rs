//! The operator's commands: `./campfire-room COMMAND ...` does one job on the configured
//! database and storage and exits; plain `./campfire-room` serves. Each command works while a
//! server runs on the same files (SQLite takes care of the concurrency), except `restore`,
//! which refuses to.
//!
//! Exit codes: 0 done, 1 the job failed, 2 bad usage or configuration.

mod backup;
mod restore;
mod tar;
mod users;
mod vapid;

use crate::config::Config;

const HELP: &str = "\
usage: campfire-room [COMMAND]

Without a command, serves Campfire (configuration from the environment: see README.md).

Commands:
  backup DEST            copy the database (a consistent snapshot, while the server runs) and
                         the files under STORAGE_PATH into the directory DEST, or into a tar
                         archive when DEST ends in .tar
  restore SRC            put a backup (directory or .tar) back in place of DATABASE_PATH and
                         STORAGE_PATH; refuses while a server runs on them, and checks the
                         copy's integrity before it switches
  reset-password EMAIL   print a sign-in link for that user, valid for 4 hours
  reset-password EMAIL --stdin
                         set that user's password to the first line read from standard input
  admin EMAIL            make that user an administrator
  vapid-keys             print a new Web Push key pair as VAPID_PUBLIC_KEY / VAPID_PRIVATE_KEY
  --help                 this text
  --version              the version
";

/// What `main` should do.
pub enum Outcome {
    /// No command: serve.
    Serve,
    /// A command ran (or usage was wrong); exit with this code.
    Exit(i32),
}

/// Runs the command named by `args` (the process arguments after the program name).
pub fn run(args: &[String]) -> Outcome {
    let Some(command) = args.first() else { return Outcome::Serve };
    let rest = &args[1..];
    let code = match (command.as_str(), rest) {
        ("--help" | "-h" | "help", []) => {
            print!("{HELP}");
            0
        }
        ("--version" | "-V" | "version", []) => {
            println!("campfire-room {}", crate::VERSION);
            0
        }
        ("vapid-keys", []) => vapid::print_new_pair(),
        ("backup", [dest]) => with_config(|cfg| backup::run(cfg, dest)),
        ("restore", [src]) => with_config(|cfg| restore::run(cfg, src)),
        ("reset-password", [email]) => with_config(|cfg| users::sign_in_link(cfg, email)),
        ("reset-password", [email, flag]) if flag == "--stdin" => with_config(|cfg| users::password_from_stdin(cfg, email)),
        ("admin", [email]) => with_config(|cfg| users::make_admin(cfg, email)),
        _ => {
            eprint!("campfire-room: unknown command or arguments: {}\n\n{HELP}", args.join(" "));
            2
        }
    };
    Outcome::Exit(code)
}

/// Reads the configuration as the server would (storage folders and the secret settled), then
/// runs `job`, whose error is printed and exits 1.
fn with_config(job: impl FnOnce(&Config) -> Result<(), String>) -> i32 {
    let mut cfg = match Config::from_env() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("campfire-room: configuration error: {e}");
            return 2;
        }
    };
    if let Err(e) = cfg.prepare_storage() {
        eprintln!("campfire-room: {e}");
        return 1;
    }
    match job(&cfg) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("campfire-room: {e}");
            1
        }
    }
}

/// Opens the configured database for a command's writes; it must already exist (a command
/// never creates an empty Campfire by accident).
fn open_existing(cfg: &Config) -> Result<crate::db::Conn, String> {
    let path = cfg.database_path.to_string_lossy().into_owned();
    if !cfg.database_path.is_file() {
        return Err(format!("no database at {path} (set DATABASE_PATH)"));
    }
    crate::db::Conn::open(&path, crate::db::Mode::ReadWrite).map_err(|e| format!("cannot open {path}: {e}"))
}
