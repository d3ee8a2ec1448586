//! Terminal helpers shared by the integration tests of attended acts (publish, limits,
//! approvals): a pseudo-terminal pair, and making a child a session leader without a
//! controlling terminal or with a given one.
#![allow(dead_code)]

use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::process::CommandExt;

/// A pseudo-terminal pair `(master, slave)` (closed when the files drop).
pub fn pty() -> (std::fs::File, std::fs::File) {
    let (mut master, mut slave) = (-1, -1);
    // SAFETY: openpty writes two fds into the provided integers; null name/termios/winsize
    // are allowed.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both fds were just opened by openpty and are owned here.
    unsafe {
        (
            std::fs::File::from_raw_fd(master),
            std::fs::File::from_raw_fd(slave),
        )
    }
}

/// Run the child in a new session: it has no controlling terminal, so nothing can prompt.
pub fn detach(c: &mut std::process::Command) {
    // SAFETY: setsid is async-signal-safe and runs in the child between fork and exec.
    unsafe {
        c.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
}

/// Run the child in a new session whose controlling terminal is `ctty` (a pty slave, which
/// must stay open until the child has started).
pub fn with_terminal(c: &mut std::process::Command, ctty: &std::fs::File) {
    let fd = ctty.as_raw_fd();
    // SAFETY: setsid and ioctl are async-signal-safe; fd is open in the child (inherited).
    unsafe {
        c.pre_exec(move || {
            if libc::setsid() < 0 || libc::ioctl(fd, libc::TIOCSCTTY as _, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}
