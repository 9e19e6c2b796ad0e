//! Upstream child processes: each in its own process group, so stopping it stops what it started
//! too (`npx` and the server it runs), and killed when dropped, so no exit path of the gateway
//! (a signal during start-up, a start-up timeout, a panic) leaves one running.

use std::time::Duration;

use process_wrap::tokio::{ChildWrapper, CommandWrap};
use tokio::process::{ChildStdin, ChildStdout};

use crate::fixture::UpstreamCommand;

/// How long a stopping child gets after its stdin closes, and again after SIGTERM.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// SIGTERM (15 on every Unix).
#[cfg(unix)]
const SIGTERM: i32 = 15;

/// A running upstream process (its process group on Unix).
pub struct Child {
    inner: Option<Box<dyn ChildWrapper>>,
    pid: Option<u32>,
}

impl std::fmt::Debug for Child {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Child").field("pid", &self.pid).finish_non_exhaustive()
    }
}

impl Child {
    /// Starts `command` with piped stdin/stdout (stderr is the gateway's). Its environment is
    /// [`ENV_ALLOWLIST`](crate::fixture::ENV_ALLOWLIST) from the gateway's plus its own `env`
    /// (all of the gateway's with `inheritEnv`).
    pub fn spawn(command: &UpstreamCommand) -> std::io::Result<(Child, ChildStdout, ChildStdin)> {
        let mut cmd = tokio::process::Command::new(&command.command);
        if !command.inherit_env {
            cmd.env_clear();
            for key in crate::fixture::ENV_ALLOWLIST {
                if let Some(value) = std::env::var_os(key) {
                    cmd.env(key, value);
                }
            }
        }
        cmd.args(&command.args)
            .envs(&command.env)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .kill_on_drop(true);
        if let Some(cwd) = &command.cwd {
            cmd.current_dir(cwd);
        }
        let mut wrap = CommandWrap::from(cmd);
        #[cfg(unix)]
        wrap.wrap(process_wrap::tokio::ProcessGroup::leader());
        let mut inner = wrap.spawn()?;
        let stdin = inner.stdin().take().ok_or_else(|| std::io::Error::other("no stdin pipe"))?;
        let stdout = inner.stdout().take().ok_or_else(|| std::io::Error::other("no stdout pipe"))?;
        let pid = inner.id();
        Ok((Child { inner: Some(inner), pid }, stdout, stdin))
    }

    /// Stops the process after its stdin was closed: waits for it to exit, then sends SIGTERM and
    /// waits again, then kills it.
    pub async fn stop(&mut self) {
        let Some(child) = self.inner.as_mut() else { return };
        if tokio::time::timeout(STOP_GRACE, child.wait()).await.is_err() {
            #[cfg(unix)]
            if child.signal(SIGTERM).is_ok() && tokio::time::timeout(STOP_GRACE, child.wait()).await.is_ok() {
                self.inner = None;
                return;
            }
            let _ = Box::into_pin(child.kill()).await;
        }
        self.inner = None;
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if let Some(mut child) = self.inner.take() {
            // Synchronous, so it happens even while the runtime shuts down.
            let _ = child.start_kill();
        }
    }
}
