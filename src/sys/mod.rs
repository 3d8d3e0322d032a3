//! The only home of libc calls: epoll, sockets, eventfd, signals, clocks, getrandom,
//! process limits, file locks, malloc tuning. Everything above this folder
//! is safe Rust; every `unsafe` block here carries a `// SAFETY:` line saying why the call is sound.
//!
//! Errors come back as `std::io::Error` built from `errno`, so callers can match on `WouldBlock`
//! and `Interrupted` like they would with std.

pub mod client;
pub mod clock;
pub mod epoll;
pub mod eventfd;
pub mod fd;
pub mod lock;
pub mod memory;
pub mod net;
pub mod process;
pub mod random;
pub mod signal;

pub use fd::Fd;

/// Turns a libc return value into a Result: -1 means "look at errno".
fn cvt(ret: libc::c_int) -> std::io::Result<libc::c_int> {
    if ret == -1 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// Same as `cvt` for calls returning `ssize_t`.
fn cvt_size(ret: libc::ssize_t) -> std::io::Result<usize> {
    if ret < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(ret as usize)
    }
}
