//! Detects a shell command line sent as a cell (`ls -la`, `curl https://...`, `$ git status`).
//!
//! The check looks only at the first line that is not blank: it must start with a well-known
//! command name followed by something that cannot continue a JavaScript expression, or be a
//! prompt (`$ cmd`) or a shell hashbang. Real programs start with `const`, `await`, `return`...
//! and are never matched; `ls - x` or `echo(1)` are left to the parser.

/// Commands a model may type when it confuses `exec` with a shell.
const COMMANDS: &[&str] = &[
    "apt", "apt-get", "awk", "bash", "brew", "cargo", "cat", "cd", "chmod", "chown", "cp", "curl", "docker",
    "du", "echo", "env", "find", "git", "go", "grep", "head", "jq", "kill", "kubectl", "less", "ls", "make",
    "mkdir", "mv", "node", "npm", "npx", "pip", "pip3", "pnpm", "ps", "pwd", "python", "python3", "rg", "rm",
    "rmdir", "scp", "sed", "sh", "ssh", "sudo", "tail", "tar", "touch", "uname", "unzip", "wc", "wget",
    "which", "whoami", "yarn", "zsh",
];

/// Commands that are commonly typed with no argument at all.
const BARE_COMMANDS: &[&str] = &["ls", "pwd", "whoami", "env", "ps", "uname"];

/// Returns the byte offset of the shell-like line when `source` looks like a shell command.
pub(crate) fn detect(source: &str) -> Option<u32> {
    let mut offset = 0usize;
    let mut first = None;
    for line in source.split_inclusive('\n') {
        if !line.trim().is_empty() {
            first = Some((offset + (line.len() - line.trim_start().len()), line.trim()));
            break;
        }
        offset += line.len();
    }
    let (at, line) = first?;
    let at = u32::try_from(at).ok()?;
    if line.starts_with("#!") {
        return ["sh", "bash", "zsh"].iter().any(|s| line.contains(s)).then_some(at);
    }
    let line = match line.strip_prefix("$ ") {
        Some(rest) if rest.trim_start().starts_with(|c: char| c.is_ascii_alphabetic()) => return Some(at),
        _ => line,
    };
    let word_len =
        line.find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_')).unwrap_or(line.len());
    let (word, rest) = line.split_at(word_len);
    if !COMMANDS.contains(&word) {
        return None;
    }
    if rest.is_empty() {
        // A lone word: only commands usually typed without arguments, and only as the whole cell.
        return (BARE_COMMANDS.contains(&word) && source.trim() == word).then_some(at);
    }
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    let arg = rest.trim_start();
    if looks_like_js_continuation(arg) {
        return None;
    }
    Some(at)
}

/// After `word `, does the text read as JavaScript (`x = 1`, `ls.map(...)`, `cat in obj`...)?
fn looks_like_js_continuation(arg: &str) -> bool {
    const JS_STARTS: &[&str] = &[
        "=",
        "(",
        ".",
        "[",
        "?",
        ",",
        ":",
        ";",
        ")",
        "}",
        "]",
        "+",
        "*",
        "%",
        "<",
        ">",
        "!=",
        "&&",
        "||",
        "^",
        "in ",
        "instanceof ",
        "of ",
        "=>",
    ];
    if let Some(after) = arg.strip_prefix('.') {
        // `ls.length` continues an expression; `find . -name x`, `cd ..`, `cat ./a` are paths.
        return after.starts_with(|c: char| c.is_alphabetic() || c == '_' || c == '$');
    }
    if arg.is_empty() || JS_STARTS.iter().any(|s| arg.starts_with(s)) {
        return true;
    }
    // `x - y` (binary minus with a space) is JavaScript; `-la` / `--verbose` are flags.
    if let Some(after) = arg.strip_prefix('-') {
        return !after.starts_with(|c: char| c.is_ascii_alphabetic() || c == '-');
    }
    if let Some(after) = arg.strip_prefix('/') {
        // `/tmp/x` is a path; `/ 2` or `/=` continue an expression.
        return after.starts_with([' ', '=']);
    }
    if arg.starts_with('&') || arg.starts_with('|') {
        return true;
    }
    false
}
