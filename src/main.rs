//! campfire-room's entry point: configuration from the environment, storage folders, then the
//! event loops until SIGTERM. Exit codes: 0 after a clean drain, 2 for bad configuration,
//! 1 when the server cannot start or fails.

use campfire::{app, config::Config, server, sys};

fn main() {
    let mut cfg = match Config::from_env() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("campfire-room: configuration error: {e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = cfg.prepare_storage() {
        eprintln!("campfire-room: {e}");
        std::process::exit(1);
    }
    if let Err(e) = sys::process::raise_nofile_limit() {
        eprintln!("campfire-room: cannot raise the open-file limit: {e}");
    }
    // The database is opened here (db::schema::ensure, the writer thread) once src/db lands;
    // each loop's App then gets its read-only connection in `app::App::new`.
    eprintln!(
        "campfire-room: port {} loops {} database {}",
        cfg.port,
        cfg.loops,
        cfg.database_path.display()
    );
    match server::run(&cfg, |i| app::App::new(&cfg, i)) {
        Ok(()) => std::process::exit(0),
        Err(e) => {
            eprintln!("campfire-room: {e}");
            std::process::exit(1);
        }
    }
}
