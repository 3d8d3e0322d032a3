//! The only home of libc calls: epoll, sockets, eventfd, signals and getrandom.

pub mod random;
