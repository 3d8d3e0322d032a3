//! Tests of the writer (group commit, savepoints, exactly-once completion) and of what
//! read connections see (our commits, other processes' commits).
