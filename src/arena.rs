//! (not built yet)
