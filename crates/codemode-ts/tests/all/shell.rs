//! Shell command lines sent as code are rejected with a message about what `exec` runs.

use codemode_ts::DiagnosticKind;

use crate::{js, ts};

const SHELL: &[&str] = &[
    "ls -la",
    "ls",
    "pwd",
    "curl https://example.com/api",
    "curl -s https://example.com | jq .",
    "git status",
    "git log --oneline -5",
    "cat README.md",
    "cd /tmp && ls",
    "find . -name '*.ts'",
    "npm install lodash",
    "python3 script.py",
    "echo \"hello\"",
    "grep -r TODO src/",
    "$ ls -la",
    "#!/bin/bash\necho hi",
    "\n\n  ls -la /var/log\n",
    "rm -rf build",
    "mkdir -p out/dir",
];

const NOT_SHELL: &[&str] = &[
    "return 1",
    "const ls = [1, 2]; return ls.length",
    "const cat = { name: 'tom' }; return cat.name",
    "const find = (x) => x; return find (1)",
    "const env = null; return env ?? {}",
    "let echo = 1; echo = 2; return echo",
    "const node = { children: [] }; return node.children",
    "const grep = 3, x = 1; return grep - x",
    "const ls = 4; const la = 1; return ls - la",
    "// ls -la\nreturn 1",
    "const git = { status: () => 1 }; return git.status()",
    // The first word is a command name, but the line continues as JavaScript.
    "find(1)",
    "env ?? 1",
    "node.children",
    "ls - la",
    "ls.length",
    "cat = 1",
    "echo\nreturn 1",
    "grep in obj",
    "git instanceof Object",
    "make\n  .then(() => 1)",
];

#[test]
fn shell_like_cells_are_rejected() {
    for &source in SHELL {
        for out in [js(source), ts(source)] {
            let d = out.diagnostics.first().unwrap_or_else(|| panic!("not rejected: {source:?}"));
            assert_eq!(d.kind, DiagnosticKind::ShellLike, "{source:?}: {d:?}");
            assert!(
                d.message.contains("runs JavaScript") && d.message.contains("not shell"),
                "{}",
                d.message
            );
        }
    }
}

#[test]
fn javascript_that_starts_with_a_command_name_is_not_shell() {
    for &source in NOT_SHELL {
        let out = js(source);
        assert!(out.diagnostics.iter().all(|d| d.kind != DiagnosticKind::ShellLike), "{source:?}: {out:?}");
    }
}

#[test]
fn the_position_is_the_first_non_blank_line() {
    let out = js("\n\n  curl https://x.io\n");
    assert_eq!((out.diagnostics[0].line, out.diagnostics[0].column), (3, 3));
}
