//! campfire-room's entry point: an operator's command (`cli`) when one is given; else
//! configuration from the environment, storage folders, the database (schema, writer thread),
//! then the event loops until SIGTERM. Exit codes: 0 after a clean drain, 2 for bad
//! configuration, 1 when the server cannot start or fails.

use campfire::{app, cli, config::Config, server, sys};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let cli::Outcome::Exit(code) = cli::run(&args) {
        std::process::exit(code);
    }
    // Before any thread exists, so every thread shares the few arenas (sys::memory).
    if !sys::memory::tune_malloc() {
        eprintln!("campfire-room: malloc tuning refused; running with glibc's defaults");
    }
    // Before any thread exists (the database writer, the ACME thread), so that only the main
    // thread ever takes SIGTERM, SIGINT and SIGHUP (server::run waits for them).
    if let Err(e) = sys::signal::block_stop_signals() {
        eprintln!("campfire-room: cannot block signals: {e}");
        std::process::exit(1);
    }
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
    // A test hook (db::fault, tests/faults_io_errors.rs): SQLite writes fail while this file exists.
    if let Some(flag) = std::env::var_os("CAMPFIRE_FAULT_FILE") {
        campfire::db::fault::install(flag.into());
    }
    // Held for the process's life: `restore` must not swap the database under a server.
    let _serving = serving_lock(&cfg);
    let tls = start_tls(&cfg);
    if let Err(e) = sys::process::raise_nofile_limit() {
        eprintln!("campfire-room: cannot raise the open-file limit: {e}");
    }
    match &cfg.tls {
        Some(t) => eprintln!(
            "campfire-room: https port {} (http port {} redirects) loops {} database {}",
            t.https_port,
            t.http_port,
            cfg.loops,
            cfg.database_path.display()
        ),
        None => eprintln!("campfire-room: port {} loops {} database {}", cfg.port, cfg.loops, cfg.database_path.display()),
    }
    let env = app::Env::from_lookup(|k| std::env::var(k).ok());
    let shared = match app::Shared::start(cfg.clone(), env) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("campfire-room: {e}");
            std::process::exit(1);
        }
    };
    let result = server::run(&cfg, tls.as_ref(), |i| match app::Ctx::new(&shared) {
        Ok(cx) => {
            // This loop's startup (and the process's: schema checks, SQLite's DDL parser,
            // configuration) is done: let its code pages and freed heap go, so that idle RSS
            // is what serving needs (issue 7). Each loop does it; the last one leaves it clean.
            sys::memory::release_startup_code();
            sys::memory::trim();
            cx
        }
        Err(e) => {
            eprintln!("campfire-room: loop {i}: cannot open the database: {e}");
            std::process::exit(1);
        }
    });
    shared.writer.stop();
    match result {
        Ok(()) => std::process::exit(0),
        Err(e) => {
            eprintln!("campfire-room: {e}");
            std::process::exit(1);
        }
    }
}

/// The database's lock, or the exit: another server (or a `restore`) holds it.
fn serving_lock(cfg: &Config) -> sys::lock::FileLock {
    match sys::lock::try_lock(&cfg.server_lock_path()) {
        Ok(Some(lock)) => lock,
        Ok(None) => {
            eprintln!("campfire-room: another campfire-room is serving {}", cfg.database_path.display());
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("campfire-room: cannot take the lock {}: {e}", cfg.server_lock_path().display());
            std::process::exit(1);
        }
    }
}

/// HTTPS when configured. A certificate that cannot be served (expired, for other names,
/// unreadable) is the operator's configuration: refuse to start (exit 2) rather than fail every
/// handshake.
fn start_tls(cfg: &Config) -> Option<std::sync::Arc<campfire::tls::Tls>> {
    let tls = match cfg.tls.as_ref().map(|s| campfire::tls::Tls::start(s, &cfg.storage_path)) {
        None => None,
        Some(Ok(t)) => Some(t),
        Some(Err(e)) => {
            eprintln!("campfire-room: TLS configuration error: {e}");
            std::process::exit(2);
        }
    };
    if let Some(t) = tls.as_ref().filter(|t| t.slot.not_after() == 0) {
        // The ACME thread (started by server::serve once HTTP_PORT listens) orders one.
        eprintln!("campfire-room: no certificate yet for {}: ordering one over ACME", t.settings.domains.join(", "));
    }
    tls
}
