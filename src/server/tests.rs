//! Loop tests that need a handler of our own: park/resume across threads.
